#!/usr/bin/env python3
"""PP-OCR text-direction classifier (ch_ppocr_mobile_v2.0_cls, PyPI rapidocr-onnxruntime==1.4.4)
-> a .oinf for examples/models/ppocr_cls.

    python3 examples/models/ppocr_cls/import_ppocr_cls.py [OUTPUT] [--onnx FILE]

Reads the ONNX file's weights (its Constant nodes) with the `onnx` package and folds every batch
normalization into the convolution before it: w' = w * g / sqrt(var + eps), b' = beta - mean *
g / sqrt(var + eps). The squeeze-excite biases (added after a reshape in the ONNX graph) become
the biases of their 1x1 convolutions. Tensor names are the graph's variable names
(b5_dw_w: block 5's depthwise weights), so the graph needs no @ref.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

from openinfer_oinf.importers import read_onnx_initializers, write_model  # noqa: E402

SE_BLOCKS = (2, 5, 6, 7, 8, 9, 10, 11, 12)
EPS = 1e-5  # every BatchNormalization of the file uses 9.9999997e-06 (1e-5 as float32)


def package_onnx() -> str:
    import importlib.util
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("import_ppocr_cls: install the model first: pip install --no-deps rapidocr-onnxruntime==1.4.4")
    return os.path.join(list(spec.submodule_search_locations)[0], "models", "ch_ppocr_mobile_v2.0_cls_infer.onnx")


def fold(w: dict, conv: str, bn: str) -> tuple[np.ndarray, np.ndarray]:
    """Conv weights `conv` followed by the batch norm `bn`: one convolution with a bias."""
    inv = w[bn + "_scale"].astype(np.float64) / np.sqrt(w[bn + "_variance"].astype(np.float64) + np.float32(EPS))
    weight = w[conv].astype(np.float64) * inv[:, None, None, None]
    bias = w[bn + "_offset"] - w[bn + "_mean"] * inv
    return weight.astype(np.float32), bias.astype(np.float32)


def convert(path: str) -> dict:
    w = read_onnx_initializers(path)
    t = {}
    t["stem_w"], t["stem_b"] = fold(w, "conv1_weights", "conv1_bn")
    for n in range(2, 13):
        for part in ("expand", "depthwise", "linear"):
            short = {"expand": "exp", "depthwise": "dw", "linear": "lin"}[part]
            t[f"b{n}_{short}_w"], t[f"b{n}_{short}_b"] = fold(w, f"conv{n}_{part}_weights", f"conv{n}_{part}_bn")
        if n in SE_BLOCKS:
            for i in (1, 2):
                t[f"b{n}_se{i}_w"] = np.ascontiguousarray(w[f"conv{n}_se_{i}_weights"], np.float32)
                t[f"b{n}_se{i}_b"] = np.ascontiguousarray(w[f"conv{n}_se_{i}_offset"], np.float32)
    t["last_w"], t["last_b"] = fold(w, "conv_last_weights", "conv_last_bn")
    t["fc_w"] = np.ascontiguousarray(w["fc_0.w_0"], np.float32)
    t["fc_b"] = np.ascontiguousarray(w["fc_0.b_0"], np.float32).reshape(-1)
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", nargs="?", default=os.path.join("res", "ppocr_cls.oinf"))
    ap.add_argument("--onnx", help="the classifier's ONNX file (default: the installed package's)")
    args = ap.parse_args()
    tensors = convert(args.onnx or package_onnx())
    if os.path.dirname(args.output):
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
    size = write_model(args.output, {}, tensors, {"labels": "0\n180"}, quiet=True)
    print(f"wrote {args.output} ({size / 1e6:.2f} MB, {len(tensors)} tensors)")


if __name__ == "__main__":
    main()
