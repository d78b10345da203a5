"""verify_oinf.py: accepts the original's files (v1 and v2), prints the documented listing,
and rejects one corruption class at a time with `error: ...` and exit status 1."""
from __future__ import annotations

import glob
import os
import struct
import subprocess
import sys

import pytest

from conftest import (
    CONFORMANCE, KV_CACHE_DECODE, META_U8, PYTHON_DIR, QUANT_I8, REPO, patch, two_sizevars, u32,
    u64,
)
import verify_oinf
from openinfer_oinf import read_oinf, read_oinf_file

V2_FILES = sorted(glob.glob(os.path.join(CONFORMANCE, "v2-models", "*.oinf")))
V1_FILES = sorted(glob.glob(os.path.join(CONFORMANCE, "v1", "**", "*.oinf"), recursive=True))


def run_cli(path: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, os.path.join(PYTHON_DIR, "verify_oinf.py"), path],
                          capture_output=True, text=True, timeout=60)


def test_conformance_data_is_present():
    assert len(V2_FILES) == 9 and len(V1_FILES) >= 20


@pytest.mark.parametrize("path", V2_FILES + V1_FILES, ids=os.path.basename)
def test_accepts_every_conformance_file(path, capsys):
    assert verify_oinf.main([path]) == 0
    out, err = capsys.readouterr()
    assert err == "" and ":" in out
    expected_version = 2 if "v2-models" in path else 1
    assert read_oinf_file(path).version == expected_version


def test_conformance_values_match_their_readme():
    ops = os.path.join(CONFORMANCE, "v1", "ops")
    packed = read_oinf_file(os.path.join(ops, "ops_packed.oinf"))
    x = next(t for t in packed.tensors if t.name == "packed_i4_x")
    assert packed.tensor_values(x).tolist() == [[-8, -3, 0, 7], [6, -1, -7, 3]]
    bitwise = read_oinf_file(os.path.join(ops, "ops_bitwise.oinf"))
    a = next(t for t in bitwise.tensors if t.name == "bit_a")
    assert bitwise.tensor_values(a).reshape(-1).tolist() == [77, 38, 247, 184, 250, 30]


def test_kv_cache_decode_listing(tmp_oinf):
    proc = run_cli(tmp_oinf(KV_CACHE_DECODE))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "D := 16",
        "",
        "zero: f32[16] = { 0, 0, 0, 0, 0, ..., 0, 0, 0, 0, 0 }",
        "- [nbytes: 64, min: 0, max: 0, mean: 0, median: 0, std: 0]",
        "- hist: {([0, 0], 16)}",
        "",
    ]


def test_quant_and_metadata_listing(tmp_oinf, capsys):
    assert verify_oinf.main([tmp_oinf(QUANT_I8)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # values 1, -2, 3, -4: mean -0.5, median -0.5, std sqrt(32 - 4*0.25... ) = sqrt(7.25)
    assert lines == [
        "q: i8[4] = { 1, -2, 3, -4 }",
        "- [nbytes: 4, min: -4, max: 3, mean: -0.5, median: -0.5, std: 2.69258]",
        "- hist: {([-4, -4], 1), ([-2, -2], 1), ([1, 1], 1), ([3, 3], 1)}",
        "- quant: scheme=symmetric, scale=per_tensor(0.5), zero_point=none",
        "",
    ]
    assert verify_oinf.main([tmp_oinf(META_U8)]) == 0
    assert capsys.readouterr().out.splitlines() == ["k: u8 = 7", ""]


def test_minimal_example_produces_a_valid_file(tmp_path):
    out = tmp_path / "sub" / "minimal_model.oinf"
    proc = subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", "minimal_oinf.py"),
                           str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and str(out) in proc.stdout
    verified = run_cli(str(out))
    assert verified.returncode == 0, verified.stderr
    lines = verified.stdout.splitlines()
    assert lines[0] == "B := 1024" and lines[2].startswith("a: f32[1024] = { ")
    assert lines[3].startswith("- [nbytes: 4096, min: -0.99")
    # header: 1 sizevar, 0 metadata, 1 tensor; 4096 data bytes at the end
    blob = out.read_bytes()
    assert blob[:5] == b"OINF\x00" and blob[13:25] == u32(1) + u32(0) + u32(1)
    assert struct.unpack_from("<Q", blob, 61)[0] == len(blob) == 152 + 4096


def test_cli_rejects_missing_file(tmp_path):
    proc = run_cli(str(tmp_path / "absent.oinf"))
    assert proc.returncode == 1 and proc.stderr.startswith("error: ")


# ---- one corruption class at a time (each base file above is valid)

CORRUPTIONS = [
    ("bad magic", patch(KV_CACHE_DECODE, 0, b"OINX"), "bad magic"),
    ("bad version", patch(KV_CACHE_DECODE, 5, u32(3)), "unsupported version 3"),
    ("truncated", KV_CACHE_DECODE[:200], "file_size 216 at byte 61 != actual file length 200"),
    ("truncated header", KV_CACHE_DECODE[:40], "smaller than the 69-byte header"),
    ("file_size lies", patch(KV_CACHE_DECODE, 61, u64(208))[:208], "data [152, 216) exceeds file_size 208"),
    ("misaligned section", patch(KV_CACHE_DECODE, 45, u64(92)), "offset_tensors 92 at byte 45 is not a multiple of 8"),
    ("sections out of order", patch(KV_CACHE_DECODE, 37, u64(96)), "sections must be in order"),
    ("section past end", patch(KV_CACHE_DECODE, 53, u64(224)), "offset_data 224"),
    ("misaligned data", patch(KV_CACHE_DECODE, 124, u64(156)), "data offset 156 is not a multiple of 8"),
    ("data in tables", patch(KV_CACHE_DECODE, 124, u64(144)), "before the data section"),
    ("bad charset", patch(KV_CACHE_DECODE, 92, b"!"), "'!ero' at byte 88 must match"),
    ("empty name", patch(KV_CACHE_DECODE, 72, u32(0)), "name '' at byte 72"),
    ("name past table", patch(KV_CACHE_DECODE, 88, u32(100)), "runs past the end of the tensor table"),
    ("data_nbytes mismatch", patch(KV_CACHE_DECODE, 116, u64(60)), "data_nbytes 60 != 64 expected for f32[16]"),
    ("dims disagree", patch(KV_CACHE_DECODE, 108, u64(17)), "data_nbytes 64 != 68"),
    ("unknown dtype", patch(KV_CACHE_DECODE, 96, u32(99)), "dtype 99 is not a valid tensor type"),
    ("string dtype", patch(KV_CACHE_DECODE, 96, u32(14)), "dtype 14"),
    ("unknown flag", patch(KV_CACHE_DECODE, 104, u32(5)), "flags 0x5"),
    ("no data but offset", patch(KV_CACHE_DECODE, 104, u32(0)), "tensor without data must have data_offset"),
    ("quant fields without flag", patch(KV_CACHE_DECODE, 140, u64(152)), "tensor without quant"),
    ("duplicate sizevars", two_sizevars(b"D", b"D"), "duplicate name 'D' at byte 88"),
    ("bad quant scheme", patch(QUANT_I8, 144, u32(7)), "scheme 7"),
    ("bad quant reserved", patch(QUANT_I8, 156, u32(5)), "reserved field is 5"),
    ("bad quant scale count", patch(QUANT_I8, 168, u64(2)), "per_tensor scale needs axis 0 and count 1"),
    ("symmetric with zero point", patch(QUANT_I8, 152, u32(1)), "symmetric quantization must not have a zero point"),
    ("bad quant size", patch(QUANT_I8, 116, u64(48)), "quant payload is 48 bytes, expected 56"),
    ("misaligned quant", patch(QUANT_I8, 124, u64(140)), "quant offset 140 is not a multiple of 8"),
    ("quant flag in v1", patch(QUANT_I8, 5, u32(1)), "bits outside 0x1 (version 1)"),
    ("metadata flags", patch(META_U8, 84, u32(1)), "value_flags must be 0"),
    ("metadata type", patch(META_U8, 80, u32(26)), "unknown value_type 26"),
    ("metadata size", patch(META_U8, 88, u64(2)), "u8 payload is 2 bytes, expected 1"),
    ("metadata bool byte", patch(patch(META_U8, 80, u32(12)), 104, b"\x07"), "bool payload byte is 7"),
    ("metadata bounds", patch(META_U8, 96, u64(112)), "[112, 113) exceeds file_size 112"),
]


def test_corruption_bases_are_valid():
    for blob in (KV_CACHE_DECODE, QUANT_I8, META_U8, two_sizevars(b"D", b"E")):
        read_oinf(blob)


@pytest.mark.parametrize("label, blob, message", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_rejects_corruption(label, blob, message, tmp_oinf, capsys):
    path = tmp_oinf(blob)
    assert verify_oinf.main([path]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"error: {path}: ") and message in err, err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("label, blob, message", [CORRUPTIONS[0], CORRUPTIONS[13], CORRUPTIONS[21]],
                         ids=["magic", "nbytes", "quant"])
def test_cli_process_exit_status(label, blob, message, tmp_oinf):
    proc = run_cli(tmp_oinf(blob))
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr


def test_every_truncation_and_byte_flip_fails_cleanly():
    """No prefix of a valid file and no single flipped byte in its tables may crash the reader:
    each either still validates or raises OinfError."""
    from openinfer_oinf import OinfError
    for blob in (KV_CACHE_DECODE, QUANT_I8, META_U8):
        for n in range(len(blob)):
            with pytest.raises(OinfError):
                read_oinf(blob[:n])
        for i in range(len(blob)):
            for value in (0x00, 0x07, 0x80, 0xFF):
                try:
                    read_oinf(patch(blob, i, bytes([value])))
                except OinfError:
                    pass
