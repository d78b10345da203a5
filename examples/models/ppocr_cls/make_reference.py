#!/usr/bin/env python3
"""Images and the reference for test_ppocr_cls.py, next to this script:

    reference/*.pgm        192 x 48 text lines rendered with the DejaVu fonts (Debian
                           fonts-dejavu-core), upright (*_0.pgm) and turned by 180 degrees (*_180.pgm)
    reference/logits.npy   f32 [N, 2]: ONNX Runtime running the package's
                           ch_ppocr_mobile_v2.0_cls_infer.onnx on each image (the logits before
                           the softmax, an extra output of the graph)
    reference/probs.npy    f32 [N, 2]: the same run's softmax (the model's own output)
    reference/images.txt   the file names, in the order of the arrays

Each line is rendered wide (width >= 4 x height), so PaddleOCR's preprocessing resizes it to
exactly 192 x 48 with no padding, and the PGM holds the very pixels the classifier sees.
Needs numpy, pillow, onnx, onnxruntime and pip install --no-deps rapidocr-onnxruntime==1.4.4.
"""
import importlib.util
import os

import numpy as np
import onnx
import onnxruntime as ort
from PIL import Image, ImageDraw, ImageFont

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
FONTS = "/usr/share/fonts/truetype/dejavu/"
LINES = [
    ("invoice", "Invoice No. 2026-1125  Total: $1,234.56", "DejaVuSans.ttf"),
    ("fox", "The quick brown fox jumps over the lazy dog", "DejaVuSerif.ttf"),
    ("mono", "int main(void) { return 0; }", "DejaVuSansMono.ttf"),
    ("bold", "OPENINFER RUNS REAL MODELS", "DejaVuSans-Bold.ttf"),
]
W, H = 192, 48


def render(text: str, font_file: str) -> Image.Image:
    font = ImageFont.truetype(os.path.join(FONTS, font_file), 40)
    left, top, right, bottom = font.getbbox(text)
    img = Image.new("L", (right - left + 16, bottom - top + 12), 255)
    ImageDraw.Draw(img).text((8 - left, 6 - top), text, fill=0, font=font)
    assert img.width >= 4 * img.height, text  # resized to the full 192 columns, no padding
    return img.resize((W, H), Image.BILINEAR)


def normalize(img: Image.Image) -> np.ndarray:
    x = np.asarray(img, np.float32) / 255
    x = (x - 0.5) / 0.5
    return np.repeat(x[None, None], 3, axis=1)  # gray as 3 channels


def main() -> None:
    os.makedirs(HERE, exist_ok=True)
    names = []
    for key, text, font in LINES:
        img = render(text, font)
        for angle in (0, 180):
            name = f"{key}_{angle}.pgm"
            (img if angle == 0 else img.rotate(180)).save(os.path.join(HERE, name))
            names.append(name)
    path = os.path.join(list(importlib.util.find_spec("rapidocr_onnxruntime").submodule_search_locations)[0],
                        "models", "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    model = onnx.load(path)
    model.graph.output.append(onnx.helper.make_tensor_value_info("linear_1.tmp_1", onnx.TensorProto.FLOAT, None))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    logits, probs = [], []
    for name in names:
        p, l = sess.run(None, {"x": normalize(Image.open(os.path.join(HERE, name)))})
        probs.append(p[0])
        logits.append(l[0])
        print(f"{name:16s} ORT: {['0', '180'][int(np.argmax(p[0]))]:>3s} p={p[0].max():.4f} logits {l[0]}")
    np.save(os.path.join(HERE, "logits.npy"), np.array(logits, np.float32))
    np.save(os.path.join(HERE, "probs.npy"), np.array(probs, np.float32))
    with open(os.path.join(HERE, "images.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"onnxruntime {ort.__version__}: {len(names)} images -> {HERE}")


if __name__ == "__main__":
    main()
