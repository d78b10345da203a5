#!/usr/bin/env python3
"""synth_ppocr_cls: the real PP-OCR text-direction classifier (examples/models/ppocr_cls) synthesized
for the C target.

    check_ppocr_cls.py OPENINFER EXPORTER MODEL [--steps N] [--target vulkan]

Imports the weights from the installed package (rapidocr-onnxruntime) into MODEL, the path
EXPORTER (export_example.c built for ppocr_cls.c) reads, takes one of the model test's images
(reference/fox_180.pgm, a text line upside down, normalized as PaddleOCR does) and runs
check_examples.py with it: the folder built alone (-Werror, C11 and C++17), N steps (default 2),
every kept value within 1e-5 relative (1e-6 absolute) of the simulator's. Its loop over blocks
6-9 reads entries of different widths (E(n)): the synthesizer unrolls it (docs/synthesizer.md).
Then the same graph with a statement after the loop that reads `d` (a temporary whose shape
changes with the entries): refused, naming the statement. Exit 77 (skipped) without the package
or `onnx`.
With --target vulkan the same image runs through the Vulkan target instead (check_vulkan.py on
this machine's device, validation layer on; skipped, 77, without a device, glslc or volk): its
direct conv and pool kernels, within 1e-4 relative of the simulator.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from synth_check import MODELS, check_vulkan_with_inputs, check_with_inputs, model_test, option

OCR = os.path.join(MODELS, "ppocr_cls")


def image(name: str) -> np.ndarray:
    """A binary PGM of 192 x 48 as the classifier's input [1, 3, 48, 192]: (v / 255 - 0.5) / 0.5."""
    with open(os.path.join(OCR, "reference", name), "rb") as f:
        data = f.read()
    fields = data.split(maxsplit=4)  # P5, width, height, maxval, pixels (one whitespace byte after maxval)
    assert fields[0] == b"P5" and fields[1:4] == [b"192", b"48", b"255"], name
    px = np.frombuffer(data[-192 * 48:], np.uint8).astype(np.float32).reshape(48, 192)
    x = (px / 255 - 0.5) / 0.5
    return np.ascontiguousarray(np.broadcast_to(x, (1, 3, 48, 192)), dtype=np.float32)


def check_used_after_loop(cli: str, exporter: str, work: str) -> None:
    """A temporary of the unrolled loop read after it has no one shape there: refused."""
    subprocess.run([exporter, work, "1"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(work, "graph.json")) as f:
        graph = json.load(f)
    nodes = graph["blocks"][0]["nodes"]
    at = [i for i, n in enumerate(nodes) if n["kind"] == "loop"][0]
    relu = [n for n in nodes[at]["body"] if n["kind"] == "op" and n["op"] == "relu"][0]
    nodes.insert(at + 1, dict(relu, index=graph["next_index"], uuid="00000000-0000-4000-8000-000000000001",
                              inputs=[{"name": "d"}], output="d"))
    graph["next_index"] += 1
    with open(os.path.join(work, "graph.json"), "w") as f:
        json.dump(graph, f)
    r = subprocess.run([cli, "synth", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json"),
                        "--target", "cpu", "--out", os.path.join(work, "gen")], capture_output=True, text=True)
    with open(os.path.join(OCR, "ppocr_cls.c")) as f:  # the error names the statement that makes d
        line = [i for i, text in enumerate(f, 1) if "OI_OP(conv2d, e, dw_w[n]" in text][0]
    want = "ppocr_cls.c:%d: error: OI_OP(conv2d, e, dw_w[n]" % line
    if r.returncode == 0 or want not in r.stderr or "d changes shape with the entries of loop mid" not in r.stderr:
        raise SystemExit("FAILED: d read after the unrolled loop was not refused by name:\n%s" % r.stderr)
    print("refused as expected: %s" % r.stderr.strip())


def main() -> int:
    cli, exporter, model = sys.argv[1:4]
    if model_test.missing("rapidocr_onnxruntime", "onnx"):
        print("skipped: needs pip install --no-deps rapidocr-onnxruntime==1.4.4, and onnx (to read its weights)")
        return model_test.SKIPPED
    model_test.import_model(model, os.path.join(OCR, "import_ppocr_cls.py"))
    if option("--target", "cpu") == "vulkan":
        return check_vulkan_with_inputs(cli, exporter, "ppocr_cls", {"image": image("fox_180.pgm")}, 1)
    rc = check_with_inputs(cli, exporter, "ppocr_cls", {"image": image("fox_180.pgm")}, option("--steps", "2"))
    if rc == 0:
        with tempfile.TemporaryDirectory() as work:
            check_used_after_loop(cli, exporter, work)
    return rc


if __name__ == "__main__":
    sys.exit(main())
