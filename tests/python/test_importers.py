"""The weight importers (python/openinfer_oinf/importers.py) on files built byte by byte here,
with the expected values worked out from the formats' definitions."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from openinfer_oinf.importers import read_gguf, read_safetensors, write_model
from openinfer_oinf.reader import read_oinf_file
from openinfer_oinf.vtypes import OinfError


def _safetensors(path, entries):
    """entries: name -> (dtype, shape, raw bytes)."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in entries.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + data)


def test_safetensors_f32_f16_bf16(tmp_path):
    p = tmp_path / "w.safetensors"
    _safetensors(p, {
        "a": ("F32", [2, 2], struct.pack("<4f", 1.0, -2.0, 0.5, 3.25)),
        "h": ("F16", [3], bytes.fromhex("003c00c00038")),   # 1.0, -2.0, 0.5 as IEEE halves
        "b": ("BF16", [2], bytes.fromhex("803f0040")),       # 1.0, 2.0: the top 16 bits of f32
    })
    w = read_safetensors(str(p))
    assert w["a"].tolist() == [[1.0, -2.0], [0.5, 3.25]]
    assert w["h"].astype(np.float32).tolist() == [1.0, -2.0, 0.5]
    assert w["b"].dtype == np.float32 and w["b"].tolist() == [1.0, 2.0]


def test_safetensors_offsets_outside_the_file(tmp_path):
    p = tmp_path / "bad.safetensors"
    blob = json.dumps({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    p.write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * 8)
    with pytest.raises(OinfError, match="outside the file"):
        read_safetensors(str(p))


def _gguf_string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def _gguf(path, kvs: bytes, n_kv: int, tensors):
    """tensors: (name, ne, ggml type, data); data laid out at 32-byte alignment."""
    infos, data = b"", b""
    for name, ne, gtype, raw in tensors:
        data += b"\0" * (-len(data) % 32)
        infos += _gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
        infos += struct.pack("<IQ", gtype, len(data))
        data += raw
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), n_kv) + kvs + infos
    path.write_bytes(head + b"\0" * (-len(head) % 32) + data)


def test_gguf_metadata_and_blocks(tmp_path):
    kvs = (_gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("llama")
           + _gguf_string("llama.block_count") + struct.pack("<II", 4, 30)
           + _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + _gguf_string("a") + _gguf_string("Ġb"))
    # q4_1: d = 0.5, m = -1 (halves 0x3800, 0xbc00); bytes 0..15 hold nibbles (lo = i % 16, hi = 15 - i % 16)
    nibbles = bytes((i % 16) | ((15 - i % 16) << 4) for i in range(16))
    q41 = bytes.fromhex("0038") + bytes.fromhex("00bc") + nibbles
    # q8_0: d = 2 (0x4000), values -16..15
    q80 = bytes.fromhex("0040") + bytes((v & 0xFF) for v in range(-16, 16))
    f32 = struct.pack("<6f", *range(6))
    _gguf(tmp_path / "m.gguf", kvs, 3, [("w41", [32, 1], 3, q41), ("w80", [32], 8, q80), ("f", [3, 2], 0, f32)])
    meta, t = read_gguf(str(tmp_path / "m.gguf"))
    assert meta["general.architecture"] == "llama" and meta["llama.block_count"] == 30
    assert meta["tokenizer.ggml.tokens"] == ["a", "Ġb"]
    assert t["w41"].ggml_type == "q4_1" and t["w41"].shape == (1, 32) and t["w41"].raw.shape == (1, 20)
    want41 = [q * 0.5 - 1 for q in list(range(16)) + list(range(15, -1, -1))]  # low nibbles are elements 0..15
    assert t["w41"].to_float().reshape(-1).tolist() == want41
    assert t["w80"].to_float().tolist() == [2.0 * v for v in range(-16, 16)]
    assert t["f"].shape == (2, 3) and t["f"].to_float().tolist() == [[0, 1, 2], [3, 4, 5]]


def test_gguf_rejects_other_files(tmp_path):
    (tmp_path / "x.gguf").write_bytes(b"GGML" + b"\0" * 20)
    with pytest.raises(OinfError, match="not a GGUF file"):
        read_gguf(str(tmp_path / "x.gguf"))


def test_write_model_round_trip(tmp_path):
    path = str(tmp_path / "m.oinf")
    write_model(path, {"D": 3}, {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                                 "q": np.arange(4, dtype=np.uint8)}, {"vocab": "a\nb", "eos": 2}, quiet=True)
    f = read_oinf_file(path)  # validates every rule of the format
    assert f.sizevars == [("D", 3)]
    assert {m.key: m.value for m in f.metadata} == {"eos": 2, "vocab": "a\nb"}
    assert {t.name: (t.dtype.name, t.dims) for t in f.tensors} == {"q": ("U8", (4,)), "w": ("F32", (2, 3))}
    w = next(t for t in f.tensors if t.name == "w")
    assert f.tensor_values(w).tolist() == [[0, 1, 2], [3, 4, 5]]
