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
    Prints one progress line per 10% of the tensor bytes unless quiet."""
    total = sum(int(np.asarray(a).nbytes) for a in tensors.values()) or 1
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
