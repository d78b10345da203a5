#!/usr/bin/env python3
"""Silero VAD v6 (PyPI silero-vad==6.2.3) -> a .oinf for examples/models/silero_vad.

    python3 examples/models/silero_vad/import_silero_vad.py [OUTPUT] [--weights FILE]

Reads the initializers of data/silero_vad_16k_op15.onnx from the installed package with the
`onnx` package (the package's own dependencies, torch among them, are not needed:
pip install --no-deps silero-vad==6.2.3). That file holds the weights of the 16 kHz branch of
the package's silero_vad.onnx; the package's silero_vad_16k.safetensors is another checkpoint
(its weights differ by up to 4), so it is not used. The LSTM cell's matrices are stored transposed ([in, 4 * hidden], gates i, f, g, o as in
PyTorch) with its two biases summed; the final 1x1 convolution becomes a [128, 1] matrix.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

from openinfer_oinf.importers import read_onnx_initializers, write_model  # noqa: E402


def package_weights() -> str:
    try:
        import importlib.util
        spec = importlib.util.find_spec("silero_vad")
    except ImportError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        sys.exit("import_silero_vad: install the weights first: pip install --no-deps silero-vad==6.2.3")
    return os.path.join(list(spec.submodule_search_locations)[0], "data", "silero_vad_16k_op15.onnx")


def convert(path: str) -> tuple[dict, dict]:
    w = read_onnx_initializers(path)
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    t = {"stft.w": f32(w["model.stft.forward_basis_buffer"])}
    for i in range(4):
        t[f"conv{i + 1}.w"] = f32(w[f"model.encoder.{i}.reparam_conv.weight"])
        t[f"conv{i + 1}.b"] = f32(w[f"model.encoder.{i}.reparam_conv.bias"])
    rnn = "model.decoder.rnn."
    t["lstm.w_ih"] = f32(w[rnn + "weight_ih"].T)
    t["lstm.w_hh"] = f32(w[rnn + "weight_hh"].T)
    t["lstm.b"] = f32(w[rnn + "bias_ih"] + w[rnn + "bias_hh"])
    t["final.w"] = f32(w["model.decoder.decoder.2.weight"].reshape(1, -1).T)
    t["final.b"] = f32(w["model.decoder.decoder.2.bias"].reshape(1))
    hidden = w[rnn + "weight_hh"].shape[1]
    sizes = {"N": 512, "CTX": 64, "H": hidden, "G": 4 * hidden}
    return sizes, t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", nargs="?", default=os.path.join("res", "silero_vad.oinf"))
    ap.add_argument("--weights", help="a silero_vad_16k_op15.onnx (default: the installed package's)")
    args = ap.parse_args()
    sizes, tensors = convert(args.weights or package_weights())
    if os.path.dirname(args.output):
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
    size = write_model(args.output, sizes, tensors, {"sample_rate": 16000}, quiet=True)
    print(f"wrote {args.output} ({size / 1e6:.2f} MB, {len(tensors)} tensors)")


if __name__ == "__main__":
    main()
