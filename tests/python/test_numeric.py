"""Float conversions on values checked by hand (E5M2: sign, 5-bit exponent bias 15, 2-bit
mantissa; bf16: top half of float32), all round-to-nearest-even."""
from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import CONFORMANCE
from openinfer_oinf import encode_array, read_oinf_file
from openinfer_oinf.vtypes import ValueType as V
from openinfer_oinf.numeric import bf16_bits_to_f32, f8_bits_to_f32, f32_to_bf16_bits, f32_to_f8_bits

F8_CASES = [
    (1.0, 0x3C),          # exponent 15, mantissa 0
    (1.9, 0x40),          # mantissa rounds past 1.75 and carries: 2.0 (the original gave 1.0)
    (0.96875, 0x3C),      # 1.9375 * 2^-1 carries to 1.0 (the original gave 0.5)
    (-0.96875, 0xBC),
    (3.8, 0x44),          # 4.0 (the original gave 2.0)
    (1.125, 0x3C),        # tie between 1.0 and 1.25: even mantissa 0
    (1.375, 0x3E),        # tie between 1.25 and 1.5: even mantissa 2
    (1.3, 0x3D),          # nearer 1.25
    (57344.0, 0x7B),      # largest finite E5M2 (1.75 * 2^15)
    (61439.0, 0x7B),      # below the midpoint to 65536
    (61440.0, 0x7C),      # midpoint, odd mantissa: rounds up to infinity
    (-70000.0, 0xFC),
    (2.0 ** -14, 0x04),   # smallest normal
    (2.0 ** -16, 0x01),   # smallest subnormal
    (2.0 ** -17, 0x00),   # tie between 0 and 2^-16: even 0
    (3 * 2.0 ** -17, 0x02),  # tie between 1 and 2 (x 2^-16): even 2
    (-0.0, 0x80),
    (float("inf"), 0x7C),
    (float("-inf"), 0xFC),
    (float("nan"), 0x7D),
]


@pytest.mark.parametrize("value, bits", F8_CASES)
def test_f32_to_f8(value, bits):
    assert int(f32_to_f8_bits(np.array([value], dtype=np.float32))[0]) == bits


def test_f8_decode_every_code():
    codes = np.arange(256, dtype=np.uint8)
    out = f8_bits_to_f32(codes)
    assert out[0x3C] == 1.0 and out[0x40] == 2.0 and out[0x3D] == 1.25
    assert out[0x7B] == 57344.0 and out[0x01] == 2.0 ** -16 and out[0x03] == 3 * 2.0 ** -16
    assert out[0x7C] == np.inf and out[0xFC] == -np.inf and np.isnan(out[0x7D])
    finite = np.isfinite(out)
    assert np.array_equal(f32_to_f8_bits(out[finite]), codes[finite])  # exact values round-trip


BF16_CASES = [
    (1.0, 0x3F80),
    (1.0 + 2.0 ** -8, 0x3F80),       # tie, even stays
    (1.0 + 3 * 2.0 ** -8, 0x3F82),   # tie, odd rounds up
    (1.0 + 2.0 ** -8 + 2.0 ** -20, 0x3F81),  # just above the tie
    (-3.0, 0xC040),
    (3.3895313892515355e38, 0x7F7F),  # largest finite bf16
    (float("inf"), 0x7F80),
]


@pytest.mark.parametrize("value, bits", BF16_CASES)
def test_f32_to_bf16(value, bits):
    assert int(f32_to_bf16_bits(np.array([value], dtype=np.float32))[0]) == bits


def test_bf16_nan_stays_nan():
    tiny_payload_nan = np.array([0x7F800001], dtype=np.uint32).view(np.float32)
    bits = f32_to_bf16_bits(tiny_payload_nan)
    assert np.isnan(bf16_bits_to_f32(bits)[0])


def test_f16_override_is_ties_to_even():
    values = [65504.0, 65519.0, 65520.0, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 2.0 ** -24]
    vt, dims, raw = encode_array(np.array(values, np.float32), V.F16)
    # 65504 max; 65520 is the midpoint to 65536 -> inf; 1 + 2^-11 tie -> 1.0; 2^-24 subnormal
    assert vt == V.F16 and dims == (6,)
    assert raw == bytes.fromhex("ff7b" "ff7b" "007c" "003c" "023c" "0100")


def test_conformance_f8_data_holds_the_original_carry_defect():
    """add_normal_f8: -1.0 + 0.03125 = -0.96875 is stored as -0.5 (0xB8) by the original;
    a correct encoder gives -1.0 (0xBC). We read their file as it is and write correctly."""
    f = read_oinf_file(os.path.join(CONFORMANCE, "v1", "ops", "full_matrix", "add.oinf"))
    out = next(t for t in f.tensors if t.name == "add_normal_f8_to_f8_out")
    assert f.tensor_values(out).reshape(-1)[0] == -0.5
    assert int(f32_to_f8_bits(np.array([-0.96875], np.float32))[0]) == 0xBC
