"""Conversions between float32 and the 16/8-bit float encodings stored in .oinf files.

Every encoder here rounds to nearest, ties to even, straight from the float32 bits (no detour
through float16, which would round twice). The original's E5M2 encoder lost the carry from the
mantissa into the exponent (1.9 -> 1.0); ours does not (1.9 -> 2.0).
"""
from __future__ import annotations

import numpy as np

F8_NAN = 0x7D       # the NaN pattern the format's writers use for E5M2
F8_INF = 0x7C       # exponent all ones, mantissa zero
_F32_INF_BITS = 0x7F800000
_F32_MIN_NORMAL_F8 = 0x38800000   # 2**-14 as float32 bits: smallest normal E5M2 value
_EXP_REBIAS = (127 - 15) << 2     # float32 -> E5M2 exponent bias, in units of the 2-bit mantissa


def _f32_bits(values: np.ndarray) -> np.ndarray:
    """float32 bit patterns widened to uint64 so that rounding increments cannot overflow."""
    f32 = np.ascontiguousarray(values, dtype=np.float32)
    return f32.view(np.uint32).astype(np.uint64)


def f32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """Upper 16 bits of float32 after round-to-nearest-even; NaN stays a (quiet) NaN."""
    bits = _f32_bits(values)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    is_nan = (bits & 0x7FFFFFFF) > _F32_INF_BITS
    quiet_nan = (bits >> 16) | 0x0040
    return np.where(is_nan, quiet_nan, rounded).astype(np.uint16)


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """bf16 is the top half of a float32, so decoding is a shift."""
    wide = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16
    return wide.view(np.float32)


def f32_to_f8_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> E5M2 (sign 1, exponent 5 with bias 15, mantissa 2), ties to even.

    Normal results round the float32 bits at bit 21; the carry may roll into the exponent,
    and an exponent of 31 after rounding means overflow to infinity. Results below 2**-14 are
    subnormal: multiples of 2**-16, which `rint` rounds ties-to-even exactly in float64.
    """
    bits = _f32_bits(values)
    sign = ((bits >> 24) & 0x80).astype(np.uint8)
    mag = bits & 0x7FFFFFFF
    rounded = (mag + 0xFFFFF + ((mag >> 21) & 1)) >> 21
    normal = np.minimum(rounded.astype(np.int64) - _EXP_REBIAS, F8_INF)
    is_normal = mag >= _F32_MIN_NORMAL_F8
    magnitude = mag.astype(np.uint32).view(np.float32).astype(np.float64)
    subnormal = np.rint(np.where(is_normal, 0.0, magnitude) * 65536.0).astype(np.int64)
    code = np.where(is_normal, normal, subnormal).astype(np.uint8)
    code = np.where(mag >= _F32_INF_BITS, F8_INF, code).astype(np.uint8) | sign
    return np.where(mag > _F32_INF_BITS, F8_NAN, code).astype(np.uint8)


def f8_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """E5M2 is the top byte of an IEEE half, so widen to float16 bits and convert exactly."""
    half = np.asarray(bits, dtype=np.uint8).astype(np.uint16) << 8
    return half.view(np.float16).astype(np.float32)
