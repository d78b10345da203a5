#!/usr/bin/env python3
"""import_weights.py: the tensors (and GGUF metadata) of a safetensors, GGUF or ONNX file as a .oinf.

    python3 python/import_weights.py MODEL.{safetensors,gguf,onnx} OUT.oinf [--list]

Every tensor keeps its name (characters outside [A-Za-z0-9._-] become '_') and its values:
safetensors and ONNX tensors in their own dtype (BF16 widened to f32); GGUF q4_0/q4_1/q8_0
tensors as their ggml blocks, u8 [rows, bytes per row] (the layout matmul_q4 reads), other GGUF
types as numbers. GGUF metadata comes along: numbers and strings as they are, lists of strings
(the vocabulary, the merges) as one string with a line per entry. No sizes are written: a graph
names its sizes, so the model-specific importers (examples/models/*/import_*.py) add them.
`--list` prints the tensors and writes nothing. ONNX needs the `onnx` package.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from openinfer_oinf.importers import read_gguf, read_onnx_initializers, read_safetensors, write_model  # noqa: E402
from openinfer_oinf.vtypes import OinfError  # noqa: E402


def clean(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def gguf_metadata(meta: dict) -> dict:
    out = {}
    for key, value in meta.items():
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if any("\n" in v for v in value):
                print(f"import_weights: {key}: an entry holds a newline; left out", file=sys.stderr)
                continue
            out[clean(key)] = "\n".join(value)
        elif isinstance(value, (str, bool, int, float, np.ndarray)):
            out[clean(key)] = value
    return out


def load(path: str) -> tuple[dict, dict]:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".safetensors":
        return {clean(k): v for k, v in read_safetensors(path).items()}, {}
    if ext == ".onnx":
        return {clean(k): v for k, v in read_onnx_initializers(path).items()}, {}
    if ext == ".gguf":
        meta, tensors = read_gguf(path)
        out = {clean(k): t.raw if t.ggml_type in ("q4_0", "q4_1", "q8_0") else t.to_float() for k, t in tensors.items()}
        return out, gguf_metadata(meta)
    raise OinfError(f"{path}: unknown extension {ext!r} (expected .safetensors, .gguf or .onnx)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output", nargs="?")
    ap.add_argument("--list", action="store_true", help="print the tensors, write nothing")
    a = ap.parse_args()
    try:
        tensors, meta = load(a.input)
        if a.list or not a.output:
            for name, arr in tensors.items():
                print(f"{name}: {arr.dtype}{list(arr.shape)}")
            return 0
        size = write_model(a.output, {}, tensors, meta)
    except (OinfError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.output} ({size / 1e6:.1f} MB, {len(tensors)} tensors, {len(meta)} metadata entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
