"""The value wrappers a model dataclass is written with (the original's public API names).

Each wrapper checks its own arguments when constructed, so a mistake is reported at the line
that made it rather than deep inside the encoder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Tuple

import numpy as np

from .vtypes import DtypeLike, OinfError, check_name, resolve_dtype

U64_MAX = 2**64 - 1


def _check_u64(value: Any, what: str) -> int:
    """Size variables and dims are u64: reject bool, None, floats and out-of-range ints."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise OinfError(f"{what} must be a non-negative int, got {value!r}")
    if not 0 <= int(value) <= U64_MAX:
        raise OinfError(f"{what} must fit in u64, got {value}")
    return int(value)


@dataclass(frozen=True)
class SizeVar:
    """A named dimension (u64) that the DSL refers to symbolically, e.g. `B := 1024`."""

    value: int

    def __post_init__(self) -> None:
        _check_u64(self.value, "SizeVar value")


@dataclass(frozen=True)
class QuantScale:
    """Quantization scale: one value for the tensor, or one per index of `axis`."""

    mode: int                        # PER_TENSOR or PER_CHANNEL
    value: Optional[float] = None    # per tensor
    axis: Optional[int] = None       # per channel
    values: Optional[Tuple[float, ...]] = None

    PER_TENSOR = 1
    PER_CHANNEL = 2

    @staticmethod
    def per_tensor(value: float) -> "QuantScale":
        """One scale for every element."""
        return QuantScale(QuantScale.PER_TENSOR, value=float(value))

    @staticmethod
    def per_channel(axis: int, values: Sequence[float]) -> "QuantScale":
        """One scale per index along `axis`; the count is checked against the tensor later."""
        return QuantScale(QuantScale.PER_CHANNEL, axis=int(axis),
                          values=tuple(float(v) for v in values))


@dataclass(frozen=True)
class QuantZeroPoint:
    """Quantization zero point (i32), per tensor or per channel like `QuantScale`."""

    mode: int
    value: Optional[int] = None
    axis: Optional[int] = None
    values: Optional[Tuple[int, ...]] = None

    PER_TENSOR = 1
    PER_CHANNEL = 2

    @staticmethod
    def per_tensor(value: int) -> "QuantZeroPoint":
        """One zero point for every element."""
        return QuantZeroPoint(QuantZeroPoint.PER_TENSOR, value=int(value))

    @staticmethod
    def per_channel(axis: int, values: Sequence[int]) -> "QuantZeroPoint":
        """One zero point per index along `axis` (must be the scale's axis)."""
        return QuantZeroPoint(QuantZeroPoint.PER_CHANNEL, axis=int(axis),
                              values=tuple(int(v) for v in values))


@dataclass(frozen=True)
class QuantParams:
    """How a tensor's stored integers map back to real values (v2 files only)."""

    scheme: str                                  # "symmetric" or "asymmetric"
    scale: QuantScale
    zero_point: Optional[QuantZeroPoint] = None

    SYMMETRIC = "symmetric"
    ASYMMETRIC = "asymmetric"

    def __post_init__(self) -> None:
        scheme = str(self.scheme).strip().lower()
        if scheme not in (self.SYMMETRIC, self.ASYMMETRIC):
            raise OinfError(f"quant scheme must be symmetric or asymmetric, got {self.scheme!r}")
        object.__setattr__(self, "scheme", scheme)
        if not isinstance(self.scale, QuantScale):
            raise OinfError("quant scale must be a QuantScale")
        if self.zero_point is not None and not isinstance(self.zero_point, QuantZeroPoint):
            raise OinfError("quant zero_point must be a QuantZeroPoint or None")


@dataclass
class TensorSpec:
    """Tensor data with an optional dtype override, stored name and quantization."""

    data: Any
    dtype: DtypeLike = None
    name: Optional[str] = None
    quant: Optional[QuantParams] = None

    def __post_init__(self) -> None:
        resolve_dtype(self.dtype)
        if self.name is not None:
            check_name(self.name, "tensor")
        if self.quant is not None and not isinstance(self.quant, QuantParams):
            raise OinfError("TensorSpec quant must be a QuantParams")


@dataclass
class UninitializedTensor:
    """A declared tensor without data: the runtime fills it from `@init` or with zeros."""

    dtype: DtypeLike
    shape: Sequence[int]
    name: Optional[str] = None

    def __post_init__(self) -> None:
        if resolve_dtype(self.dtype) is None:
            raise OinfError("UninitializedTensor needs a dtype")
        self.shape = tuple(_check_u64(d, "UninitializedTensor dim") for d in self.shape)
        if self.name is not None:
            check_name(self.name, "tensor")


@dataclass
class ScalarValue:
    """A metadata scalar with an explicit type, e.g. `ScalarValue(0.5, dtype="bf16")`."""

    value: Any
    dtype: DtypeLike = None

    def __post_init__(self) -> None:
        resolve_dtype(self.dtype)


class Bitset:
    """A metadata bit string, stored LSB-first (bit i is bit i%8 of byte i//8)."""

    def __init__(self, bits: Iterable[Any]) -> None:
        values = list(bits)
        for b in values:
            if b not in (0, 1, True, False):
                raise OinfError(f"Bitset entries must be 0/1 or bools, got {b!r}")
        self.bits = [bool(b) for b in values]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bitset) and other.bits == self.bits

    def __repr__(self) -> str:
        return f"Bitset({[int(b) for b in self.bits]})"

    @property
    def bit_count(self) -> int:
        """Number of bits (not bytes)."""
        return len(self.bits)

    def to_bytes(self) -> bytes:
        """The ceil(n/8) payload bytes, LSB-first."""
        out = bytearray((len(self.bits) + 7) // 8)
        for i, bit in enumerate(self.bits):
            if bit:
                out[i // 8] |= 1 << (i % 8)
        return bytes(out)
