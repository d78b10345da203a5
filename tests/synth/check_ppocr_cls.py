#!/usr/bin/env python3
"""synth_ppocr_cls: the real PP-OCR text-direction classifier (examples/models/ppocr_cls) synthesized
for the C target.

    check_ppocr_cls.py OPENINFER EXPORTER MODEL [--steps N]

Imports the weights from the installed package (rapidocr-onnxruntime) into MODEL, the path
EXPORTER (export_example.c built for ppocr_cls.c) reads, takes one of the model test's images
(reference/fox_180.pgm, a text line upside down, normalized as PaddleOCR does) and runs
check_examples.py with it: the folder built alone (-Werror, C11 and C++17), N steps (default 2),
every kept value within 1e-5 relative (1e-6 absolute) of the simulator's. Its loop over blocks
6-9 reads entries of different widths (E(n)): the synthesizer unrolls it (docs/synthesizer.md).
Exit 77 (skipped) without the package or `onnx`.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OCR = os.path.join(ROOT, "examples", "models", "ppocr_cls")
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
from model_test import SKIPPED, import_model, missing  # noqa: E402


def image(name: str) -> np.ndarray:
    """A binary PGM of 192 x 48 as the classifier's input [1, 3, 48, 192]: (v / 255 - 0.5) / 0.5."""
    with open(os.path.join(OCR, "reference", name), "rb") as f:
        data = f.read()
    fields = data.split(maxsplit=4)  # P5, width, height, maxval, pixels (one whitespace byte after maxval)
    assert fields[0] == b"P5" and fields[1:4] == [b"192", b"48", b"255"], name
    px = np.frombuffer(data[-192 * 48:], np.uint8).astype(np.float32).reshape(48, 192)
    x = (px / 255 - 0.5) / 0.5
    return np.ascontiguousarray(np.broadcast_to(x, (1, 3, 48, 192)), dtype=np.float32)


def main() -> int:
    cli, exporter, model = sys.argv[1:4]
    steps = sys.argv[sys.argv.index("--steps") + 1] if "--steps" in sys.argv else "2"
    if missing("rapidocr_onnxruntime", "onnx"):
        print("skipped: needs pip install --no-deps rapidocr-onnxruntime==1.4.4, and onnx (to read its weights)")
        return SKIPPED
    import_model(model, os.path.join(OCR, "import_ppocr_cls.py"))
    with tempfile.TemporaryDirectory() as given:
        np.save(os.path.join(given, "image.npy"), image("fox_180.pgm"))
        return subprocess.run([sys.executable, os.path.join(HERE, "check_examples.py"), cli, exporter, "ppocr_cls",
                               "--steps", steps, "--inputs", given]).returncode


if __name__ == "__main__":
    sys.exit(main())
