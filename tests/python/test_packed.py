"""Sub-byte packing: LSB-first, element i in bits [i*w, i*w+w), bytes worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from openinfer_oinf import OinfError
from openinfer_oinf.packed import pack, unpack
from openinfer_oinf.vtypes import ValueType as V

CASES = [
    # i4: -8 -> 0x8, -3 -> 0xD (low nibble first): 0xD8; 0, 7 -> 0x70; 6 -> 0x06
    (V.I4, [-8, -3, 0, 7, 6], bytes([0xD8, 0x70, 0x06])),
    (V.U4, [1, 15, 9], bytes([0xF1, 0x09])),
    # u2: 0,1,2,3 -> 0b11_10_01_00 = 0xE4; 3 -> 0x03
    (V.U2, [0, 1, 2, 3, 3], bytes([0xE4, 0x03])),
    # i2: -2 -> 0b10, 1 -> 0b01, -1 -> 0b11, 0 -> 0b00: 0b00_11_01_10 = 0x36
    (V.I2, [-2, 1, -1, 0], bytes([0x36])),
    # t2: -1 -> 0b11, 0 -> 0b00, 1 -> 0b01, -1 -> 0b11: 0b11_01_00_11 = 0xD3
    (V.T2, [-1, 0, 1, -1], bytes([0xD3])),
    # t1: -1 -> 0, +1 -> 1: bits 0..8 = 0,1,1,0,1,1,1,1 | 0 -> 0xF6, 0x00
    (V.T1, [-1, 1, 1, -1, 1, 1, 1, 1, -1], bytes([0xF6, 0x00])),
    # i1: -1 -> 1, 0 -> 0: 0b101 = 0x05
    (V.I1, [-1, 0, -1], bytes([0x05])),
    (V.U1, [1, 0, 0, 0, 0, 0, 0, 1, 1], bytes([0x81, 0x01])),
]


@pytest.mark.parametrize("vt, values, raw", CASES)
def test_pack_bytes(vt, values, raw):
    assert pack(np.array(values), vt) == raw


@pytest.mark.parametrize("vt, values, raw", CASES)
def test_unpack_bytes(vt, values, raw):
    assert unpack(raw, vt, len(values)).tolist() == values


@pytest.mark.parametrize("vt, bad", [
    (V.I4, 8), (V.I4, -9), (V.U4, 16), (V.U4, -1), (V.I2, 2), (V.U2, 4),
    (V.I1, 1), (V.U1, 2), (V.T2, 2), (V.T2, -2), (V.T1, 0), (V.I4, 1.5),
])
def test_out_of_range_is_rejected(vt, bad):
    with pytest.raises(OinfError):
        pack(np.array([0 if vt != V.T1 else 1, bad]), vt)
