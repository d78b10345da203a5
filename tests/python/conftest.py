"""Shared fixtures: the python/ folder on sys.path, paths of the conformance data, and the
hand-written reference files (bytes typed in from the format document, not produced by the
code under test)."""
from __future__ import annotations

import os
import struct
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYTHON_DIR = os.path.join(REPO, "python")
sys.path.insert(0, PYTHON_DIR)

CONFORMANCE = os.path.abspath(os.path.join(REPO, "..", "shared", "conformance", "openinfer"))
if not os.path.isdir(CONFORMANCE):
    CONFORMANCE = "/work/shared/conformance/openinfer"


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


# format §2.9: kv_cache_decode.oinf, 216 bytes, typed in row by row from the table.
KV_CACHE_DECODE = (
    b"OINF\x00"                      # 0   magic
    + u32(2)                         # 5   version
    + u32(0)                         # 9   flags
    + u32(1)                         # 13  n_sizevars
    + u32(0)                         # 17  n_metadata
    + u32(1)                         # 21  n_tensors
    + u32(0)                         # 25  reserved
    + u64(72)                        # 29  offset_sizevars
    + u64(88)                        # 37  offset_metadata
    + u64(88)                        # 45  offset_tensors
    + u64(152)                       # 53  offset_data
    + u64(216)                       # 61  file_size
    + b"\x00" * 3                    # 69  header padding to 72
    + u32(1) + b"D" + b"\x00" * 3    # 72  name "D" padded to 80
    + u64(16)                        # 80  D = 16
    + u32(4) + b"zero"               # 88  tensor name
    + u32(10) + u32(1) + u32(1)      # 96  F32, ndim 1, HAS_DATA
    + u64(16)                        # 108 dims[0]
    + u64(64) + u64(152)             # 116 data_nbytes, data_offset
    + u64(0) + u64(0)                # 132 quant_nbytes, quant_offset
    + b"\x00" * 4                    # 148 pad to 152
    + b"\x00" * 64                   # 152 sixteen f32 zeros
)

# A v2 file with tensor q: i8[4] = [1, -2, 3, -4], symmetric per-tensor scale 0.5 (§2.6, §2.7).
QUANT_I8 = (
    b"OINF\x00" + u32(2) + u32(0) + u32(0) + u32(0) + u32(1) + u32(0)
    + u64(72) + u64(72) + u64(72) + u64(136) + u64(200) + b"\x00" * 3
    + u32(1) + b"q" + b"\x00" * 3    # 72  name
    + u32(1) + u32(1) + u32(3)       # 80  I8, ndim 1, HAS_DATA|HAS_QUANT
    + u64(4)                         # 92  dims[0]
    + u64(4) + u64(136)              # 100 data_nbytes, data_offset
    + u64(56) + u64(144)             # 116 quant_nbytes = align8(48 + 4), quant_offset
    + b"\x00" * 4                    # 132 pad to 136
    + bytes([0x01, 0xFE, 0x03, 0xFC]) + b"\x00" * 4   # 136 data, pad to 144
    + u32(1) + u32(1) + u32(0) + u32(0)               # 144 symmetric, per_tensor, no zp, reserved
    + u64(0) + u64(1) + u64(0) + u64(0)               # 160 scale axis/count, zp axis/count
    + bytes.fromhex("0000003f")                       # 192 f32 0.5
    + b"\x00" * 4                                     # 196 pad to 200
)

# A v2 file with one metadata entry k: u8 = 7 (§2.5), 112 bytes.
META_U8 = (
    b"OINF\x00" + u32(2) + u32(0) + u32(0) + u32(1) + u32(0) + u32(0)
    + u64(72) + u64(72) + u64(104) + u64(104) + u64(112) + b"\x00" * 3
    + u32(1) + b"k" + b"\x00" * 3    # 72  key
    + u32(5) + u32(0)                # 80  U8, value_flags
    + u64(1) + u64(104)              # 88  value_nbytes, value_offset
    + b"\x07" + b"\x00" * 7          # 104 payload, pad to 112
)


def two_sizevars(first: bytes, second: bytes) -> bytes:
    """A v2 file with two one-letter size variables (values 16 and 32), 104 bytes."""
    return (
        b"OINF\x00" + u32(2) + u32(0) + u32(2) + u32(0) + u32(0) + u32(0)
        + u64(72) + u64(104) + u64(104) + u64(104) + u64(104) + b"\x00" * 3
        + u32(1) + first + b"\x00" * 3 + u64(16)
        + u32(1) + second + b"\x00" * 3 + u64(32)
    )


def patch(blob: bytes, offset: int, new: bytes) -> bytes:
    """Copy of `blob` with `new` written at `offset`."""
    return blob[:offset] + new + blob[offset + len(new):]


@pytest.fixture
def tmp_oinf(tmp_path):
    """Write bytes to a temporary .oinf file and return its path."""
    def write(blob: bytes, name: str = "model.oinf") -> str:
        path = tmp_path / name
        path.write_bytes(blob)
        return str(path)
    return write
