#!/usr/bin/env python3
"""test_ppocr_cls.py EXE BUILD_DIR: the PP-OCR direction classifier in OpenInfer against ONNX Runtime.

Imports the weights from the installed package (rapidocr-onnxruntime; reading them needs
`onnx`) into BUILD_DIR, runs the example on reference/*.pgm and checks every logit within 1e-4
of reference/logits.npy, which make_reference.py computed with ONNX Runtime running the
package's ONNX file. The backend is the one OPENINFER_BACKEND names (cpu, or vulkan: skipped
without a device). Exit 77 (skipped) without the package or `onnx`.
"""
import importlib.util
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from model_test import SKIPPED, failure_code, import_model, missing, run_example  # noqa: E402
TOLERANCE = 1e-4


def main() -> int:
    exe, build_dir = sys.argv[1], sys.argv[2]
    if missing("rapidocr_onnxruntime", "onnx"):
        print("skipped: needs pip install --no-deps rapidocr-onnxruntime==1.4.4, and onnx (to read its weights)")
        return SKIPPED
    model = import_model(os.path.join(build_dir, "ppocr_cls.oinf"), os.path.join(HERE, "import_ppocr_cls.py"))
    with open(os.path.join(HERE, "reference", "images.txt")) as f:
        names = f.read().split()
    ref = np.load(os.path.join(HERE, "reference", "logits.npy"))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "logits.f32")
        run = run_example([exe, model, *[os.path.join(HERE, "reference", n) for n in names], "--out", out])
        if run.returncode != 0:
            return failure_code(run)
        logits = np.fromfile(out, np.float32).reshape(len(names), 2)
    ok = True
    for name, ours, want in zip(names, logits, ref):
        diff = float(np.abs(ours - want).max())
        good = diff <= TOLERANCE
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {name:16s} ours [{ours[0]:+.6f} {ours[1]:+.6f}]  "
              f"ONNX Runtime [{want[0]:+.6f} {want[1]:+.6f}]  max|diff| {diff:.2e}")
    print(f"{'PASS' if ok else 'FAIL'}: {len(names)} images, max |diff| {np.abs(logits - ref).max():.2e}; "
          f"pass rule max |diff| <= {TOLERANCE:g} on the logits")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
