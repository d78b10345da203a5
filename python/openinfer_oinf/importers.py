"""Weight importers: tensors of other formats as numpy arrays, and a writer that turns named
arrays (plus size variables and metadata) into a `.oinf` file with progress output.

    from openinfer_oinf.importers import read_safetensors, write_model
    weights = read_safetensors("model.safetensors")          # {name: np.ndarray}, mmap-backed
    write_model("out.oinf", {"D": 384}, {"w": weights["w"]}, {"vocab": "a\\nb"})

Only numpy is needed; nothing here imports torch.
"""
from __future__ import annotations

import json
import struct
import sys
from typing import Any, Dict, Mapping, Optional

import numpy as np

from .encoder import MetadataItem, TensorItem, encode_array, encode_file, encode_metadata_value
from .vtypes import OinfError

# safetensors dtype names -> numpy dtypes (BF16 is widened to f32 on read: numpy has no bf16).
_SAFETENSORS_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
    "I8": "i1", "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8", "BOOL": "?",
}


def read_safetensors(path: str) -> Dict[str, np.ndarray]:
    """Every tensor of a .safetensors file (8-byte header length, JSON header, raw data),
    as read-only arrays over one memory map. BF16 tensors come back as float32."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    if raw.size < 8:
        raise OinfError(f"{path}: too short for a safetensors header")
    header_len = struct.unpack("<Q", bytes(raw[:8]))[0]
    if 8 + header_len > raw.size:
        raise OinfError(f"{path}: header length {header_len} runs past the end of the file")
    header = json.loads(bytes(raw[8:8 + header_len]).decode("utf-8"))
    base = 8 + header_len
    out: Dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        if not 0 <= begin <= end <= raw.size - base:
            raise OinfError(f"{path}: tensor {name}: data_offsets {begin}..{end} outside the file")
        chunk = raw[base + begin:base + end]
        shape = tuple(int(d) for d in entry["shape"])
        if entry["dtype"] == "BF16":
            bits = chunk.view("<u2").astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(shape)
        elif entry["dtype"] in _SAFETENSORS_DTYPES:
            out[name] = chunk.view(_SAFETENSORS_DTYPES[entry["dtype"]]).reshape(shape)
        else:
            raise OinfError(f"{path}: tensor {name}: dtype {entry['dtype']} is not supported")
    return out


def read_onnx_initializers(path: str) -> Dict[str, np.ndarray]:
    """The initializers (weights) of an ONNX model, by name; needs the `onnx` package.
    Constants inside If/Loop subgraphs and Constant nodes are included, named as in the graph."""
    import onnx  # only this importer needs it
    from onnx import numpy_helper

    model = onnx.load(path)
    out: Dict[str, np.ndarray] = {}

    def visit(graph: Any) -> None:
        for init in graph.initializer:
            out[init.name] = numpy_helper.to_array(init)
        for node in graph.node:
            if node.op_type == "Constant":
                for attr in node.attribute:
                    if attr.name == "value":
                        out[node.output[0]] = numpy_helper.to_array(attr.t)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    visit(attr.g)
                for sub in attr.graphs:
                    visit(sub)

    visit(model.graph)
    return out


def write_model(path: str, sizevars: Mapping[str, int], tensors: Mapping[str, np.ndarray],
                metadata: Optional[Mapping[str, Any]] = None, quiet: bool = False) -> int:
    """Writes named arrays as a .oinf (version 2) and returns its size in bytes. Metadata
    values follow the encoder's rules (str -> STRING, int -> smallest integer type...).
    Prints one progress line per 10% of the tensor bytes for files over 16 MB unless quiet."""
    total = sum(int(np.asarray(a).nbytes) for a in tensors.values()) or 1
    quiet = quiet or total < 16_000_000
    items, done, reported = [], 0, 0
    for name, array in tensors.items():
        vtype, dims, data = encode_array(np.ascontiguousarray(array), None)
        items.append(TensorItem(name, vtype, dims, data))
        done += len(data)
        if not quiet and (done * 10 // total > reported or done == total):
            reported = done * 10 // total
            print(f"  {done / 1e6:8.1f} / {total / 1e6:.1f} MB encoded", file=sys.stderr)
    meta = [MetadataItem(key, *encode_metadata_value(value, None)) for key, value in (metadata or {}).items()]
    blob = encode_file(dict(sizevars), meta, items)
    with open(path, "wb") as f:
        f.write(blob)
    return len(blob)


# ---------------------------------------------------------------------------- GGUF

# ggml tensor types: (name, elements per block, bytes per block)
GGML_TYPES = {0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
              8: ("q8_0", 32, 34), 24: ("i8", 1, 1), 25: ("i16", 1, 2), 26: ("i32", 1, 4),
              27: ("i64", 1, 8), 28: ("f64", 1, 8), 30: ("bf16", 1, 2)}
_GGUF_SCALARS = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?",
                 10: "<u8", 11: "<i8", 12: "<f8"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


class GGUFTensor:
    """One tensor of a GGUF file: `ggml_type` (a name of GGML_TYPES), `shape` in numpy order
    (rows last-dim-fastest: ggml's ne reversed) and `raw`, its bytes (uint8, one row of
    blocks per row: [rows, bytes per row])."""

    def __init__(self, name: str, ggml_type: str, shape: tuple, raw: np.ndarray):
        self.name, self.ggml_type, self.shape, self.raw = name, ggml_type, shape, raw

    def to_float(self) -> np.ndarray:
        """The values as float32 (q4_0, q4_1 and q8_0 blocks expanded)."""
        raw = self.raw.reshape(-1)
        if self.ggml_type in ("f32", "f16", "f64"):
            return raw.view({"f32": "<f4", "f16": "<f2", "f64": "<f8"}[self.ggml_type]).astype(np.float32).reshape(self.shape)
        if self.ggml_type == "bf16":
            return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32).reshape(self.shape)
        _, per, size = next(v for v in GGML_TYPES.values() if v[0] == self.ggml_type)
        blocks = raw.reshape(-1, size)
        d = blocks[:, :2].copy().view("<f2").astype(np.float32)
        if self.ggml_type == "q8_0":
            q = blocks[:, 2:].view(np.int8).astype(np.float32)
            return (q * d).reshape(self.shape)
        nib = blocks[:, -16:]
        q = np.concatenate([nib & 0x0F, nib >> 4], axis=1).astype(np.float32)  # low nibbles first
        if self.ggml_type == "q4_0":
            return ((q - 8) * d).reshape(self.shape)
        m = blocks[:, 2:4].copy().view("<f2").astype(np.float32)
        return (q * d + m).reshape(self.shape)


def read_gguf(path: str) -> tuple[Dict[str, Any], Dict[str, GGUFTensor]]:
    """Metadata (strings, numbers, lists: the tokenizer's vocabulary among them) and tensors of
    a GGUF file (version 2 or 3), over one memory map; quantized blocks are kept as they are."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    pos = 0

    def take(n: int) -> np.ndarray:
        nonlocal pos
        if pos + n > raw.size:
            raise OinfError(f"{path}: truncated at byte {pos} (wanted {n} more)")
        pos += n
        return raw[pos - n:pos]

    def scalar(fmt: str) -> Any:
        return np.frombuffer(take(np.dtype(fmt).itemsize), fmt)[0].item()

    def string() -> str:
        return bytes(take(scalar("<u8"))).decode("utf-8", errors="surrogateescape")

    def value(vtype: int) -> Any:
        if vtype in _GGUF_SCALARS:
            return scalar(_GGUF_SCALARS[vtype])
        if vtype == _GGUF_STRING:
            return string()
        if vtype == _GGUF_ARRAY:
            etype, count = scalar("<u4"), scalar("<u8")
            if etype in _GGUF_SCALARS:
                dt = np.dtype(_GGUF_SCALARS[etype])
                return np.frombuffer(take(dt.itemsize * count), dt).copy()
            return [value(etype) for _ in range(count)]
        raise OinfError(f"{path}: unknown metadata value type {vtype} at byte {pos}")

    if bytes(take(4)) != b"GGUF":
        raise OinfError(f"{path}: not a GGUF file")
    version = scalar("<u4")
    if version not in (2, 3):
        raise OinfError(f"{path}: GGUF version {version} is not supported (2 or 3)")
    n_tensors, n_kv = scalar("<u8"), scalar("<u8")
    meta: Dict[str, Any] = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(scalar("<u4"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        ne = [scalar("<u8") for _ in range(scalar("<u4"))]
        infos.append((name, ne, scalar("<u4"), scalar("<u8")))
    align = int(meta.get("general.alignment", 32))
    base = (pos + align - 1) // align * align
    tensors: Dict[str, GGUFTensor] = {}
    for name, ne, gtype, offset in infos:
        if gtype not in GGML_TYPES:
            raise OinfError(f"{path}: tensor {name}: ggml type {gtype} is not supported")
        tname, per, size = GGML_TYPES[gtype]
        if ne[0] % per:
            raise OinfError(f"{path}: tensor {name}: row of {ne[0]} is not whole blocks of {per}")
        rows = int(np.prod(ne[1:], dtype=np.int64)) if len(ne) > 1 else 1
        row_bytes = ne[0] // per * size
        start = base + offset
        if start + rows * row_bytes > raw.size:
            raise OinfError(f"{path}: tensor {name} runs past the end of the file")
        data = raw[start:start + rows * row_bytes].reshape(rows, row_bytes)
        tensors[name] = GGUFTensor(name, tname, tuple(int(d) for d in reversed(ne)), data)
    return meta, tensors
