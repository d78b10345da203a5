#!/usr/bin/env python3
"""Write a model dataclass as a .oinf file.

    python python/dataclass_to_oinf.py --input module:ClassOrInstance [--json data.json] \\
        --output model.oinf [--version 1|2]

`module` is imported from the current directory (or give a path to a .py file). A class is
instantiated with the JSON object's fields (or its defaults); an instance gets them replaced.
Importable too: `from dataclass_to_oinf import SizeVar, TensorSpec, write_oinf`.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from openinfer_oinf import (  # noqa: E402  (needs the path above)
    Bitset, OinfError, QuantParams, QuantScale, QuantZeroPoint, ScalarValue, SizeVar,
    TensorSpec, UninitializedTensor, dataclass_to_oinf, load_instance, write_oinf,
)

__all__ = [
    "Bitset", "QuantParams", "QuantScale", "QuantZeroPoint", "ScalarValue", "SizeVar",
    "TensorSpec", "UninitializedTensor", "dataclass_to_oinf", "write_oinf", "main",
]


def main(argv: Optional[List[str]] = None) -> int:
    """CLI entry point; returns the exit status (0 written, 1 error)."""
    parser = argparse.ArgumentParser(description="Convert a dataclass into a .oinf file")
    parser.add_argument("--input", required=True, help="module:ClassOrInstance")
    parser.add_argument("--json", help="JSON object with the dataclass field values")
    parser.add_argument("--output", required=True, help="path of the .oinf file to write")
    parser.add_argument("--version", type=int, choices=(1, 2), default=2,
                        help="format version (default 2; 1 cannot hold quantization)")
    args = parser.parse_args(argv)
    try:
        instance = load_instance(args.input, args.json)
        write_oinf(instance, args.output, version=args.version)
    except (OinfError, OSError, ImportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
