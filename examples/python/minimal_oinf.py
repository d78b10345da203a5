#!/usr/bin/env python3
"""Write the minimal model of the README: size variable B = 1024 and tensor a: f32[B].

    python examples/python/minimal_oinf.py [OUTPUT]     (default res/minimal_model.oinf)
    python python/verify_oinf.py res/minimal_model.oinf
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from dataclass_to_oinf import SizeVar, TensorSpec, write_oinf  # noqa: E402


def _weights() -> TensorSpec:
    """1024 values uniform in [-1, 1), seeded so every run writes the same bytes."""
    return TensorSpec(np.random.default_rng(1).uniform(-1, 1, 1024).astype(np.float32))


@dataclass
class MinimalModel:
    B: SizeVar = 1024  # type: ignore[assignment]  # an int field annotated SizeVar is a size variable
    a: TensorSpec = field(default_factory=_weights)


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join("res", "minimal_model.oinf")
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    write_oinf(MinimalModel(), path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
