#!/usr/bin/env python3
"""test_silero_vad.py EXE BUILD_DIR: Silero VAD in OpenInfer against ONNX Runtime.

Imports the weights from the installed package (silero-vad) into BUILD_DIR, streams
reference/clip.wav through the example chunk by chunk and checks that every chunk's speech
probability is within 1e-4 of reference/probs.npy, which make_reference.py computed with ONNX
Runtime running the package's silero_vad.onnx. The backend is the one OPENINFER_BACKEND names
(cpu, or vulkan: skipped without a device). Exit 77 (skipped) without the package or `onnx`.
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
    if missing("silero_vad", "onnx"):
        print("skipped: needs pip install --no-deps silero-vad==6.2.3, and onnx (to read its weights)")
        return SKIPPED
    model = import_model(os.path.join(build_dir, "silero_vad.oinf"), os.path.join(HERE, "import_silero_vad.py"))
    ref = np.load(os.path.join(HERE, "reference", "probs.npy"))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "probs.f32")
        run = run_example([exe, model, os.path.join(HERE, "reference", "clip.wav"), "--out", out])
        if run.returncode != 0:
            return failure_code(run)
        probs = np.fromfile(out, np.float32)
    if probs.shape != ref.shape:
        print(f"FAIL: {probs.size} chunks, the reference has {ref.size}")
        return 1
    diff = np.abs(probs - ref)
    worst = int(diff.argmax())
    bad = np.flatnonzero(diff > TOLERANCE)
    for k in bad[:10]:
        print(f"FAIL chunk {k}: ours {probs[k]:.6f}, ONNX Runtime {ref[k]:.6f}")
    print(f"{'PASS' if bad.size == 0 else 'FAIL'}: {ref.size} chunks, max |diff| {diff.max():.2e} at chunk {worst} "
          f"(ours {probs[worst]:.6f}, ONNX Runtime {ref[worst]:.6f}), mean |diff| {diff.mean():.2e}; "
          f"speech chunks (p >= 0.5): {int((probs >= 0.5).sum())} ours, {int((ref >= 0.5).sum())} ORT; "
          f"pass rule max |diff| <= {TOLERANCE:g}")
    return 0 if bad.size == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
