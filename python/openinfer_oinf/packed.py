"""Bit packing for the sub-byte types i1 i2 i4 u1 u2 u4 t1 t2.

Element i occupies bits [i*w, i*w + w) of one continuous LSB-first bitstream; w divides 8, so
an element never straddles a byte. Signed types are two's complement within w bits; t1 stores
-1 as bit 0 and +1 as bit 1; t2 is a signed 2-bit value restricted to {-1, 0, 1}.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

from .vtypes import V, OinfError, ValueType, packed_bits, type_name

# Allowed (min, max) of the logical values of each packed type.
_RANGES = {
    V.I4: (-8, 7), V.I2: (-2, 1), V.I1: (-1, 0),
    V.U4: (0, 15), V.U2: (0, 3), V.U1: (0, 1),
    V.T2: (-1, 1), V.T1: (-1, 1),
}


def packed_range(vt: ValueType) -> Tuple[int, int]:
    """Smallest and largest value a packed type can hold."""
    return _RANGES[vt]


def check_packed_values(values: np.ndarray, vt: ValueType) -> np.ndarray:
    """Reject values a packed type cannot hold, instead of silently wrapping them."""
    arr = np.asarray(values)
    if arr.size and not np.all(np.isfinite(arr.astype(np.float64))):
        raise OinfError(f"{type_name(vt)} values must be finite integers")
    ints = arr.astype(np.int64)
    if arr.size and np.any(ints != arr):
        raise OinfError(f"{type_name(vt)} values must be integers")
    lo, hi = _RANGES[vt]
    if ints.size and (ints.min() < lo or ints.max() > hi):
        raise OinfError(f"{type_name(vt)} values must lie in [{lo}, {hi}]")
    if vt == V.T1 and np.any(ints == 0):
        raise OinfError("t1 values must be -1 or +1")
    return ints


def pack(values: np.ndarray, vt: ValueType) -> bytes:
    """Range-check, then pack row-major values of a packed type into LSB-first bytes."""
    ints = check_packed_values(values, vt).reshape(-1)
    width = packed_bits(vt)
    codes = (ints > 0).astype(np.uint8) if vt == V.T1 else (ints & ((1 << width) - 1))
    per_byte = 8 // width
    padded = np.zeros(-(-codes.size // per_byte) * per_byte, dtype=np.uint8)
    padded[: codes.size] = codes
    shifts = np.arange(per_byte, dtype=np.uint8) * width
    lanes = padded.reshape(-1, per_byte) << shifts
    return np.bitwise_or.reduce(lanes, axis=1).astype(np.uint8).tobytes()


def unpack(raw: bytes, vt: ValueType, numel: int) -> np.ndarray:
    """Inverse of `pack`: int8 for signed and ternary types, uint8 for unsigned ones."""
    width = packed_bits(vt)
    per_byte = 8 // width
    data = np.frombuffer(raw, dtype=np.uint8)
    shifts = np.arange(per_byte, dtype=np.uint8) * width
    codes = ((data[:, None] >> shifts) & ((1 << width) - 1)).reshape(-1)[:numel]
    if vt == V.T1:
        return np.where(codes == 1, 1, -1).astype(np.int8)
    if vt in (V.U4, V.U2, V.U1):
        return codes.astype(np.uint8)
    signed = codes.astype(np.int16)
    signed = np.where(signed >= (1 << (width - 1)), signed - (1 << width), signed)
    return signed.astype(np.int8)
