"""Byte encoding of .oinf files: value payloads, quant payloads and the file layout.

This module knows nothing about dataclasses; `dataclass_io` turns a model dataclass into the
plain `MetadataItem`/`TensorItem` lists that `encode_file` lays out.

Layout (format section 2.8, with consistent offsets): header (72 bytes), size-variable table,
metadata table and tensor table, each starting at the next multiple of 8; then the data
section: every metadata payload in key order, then for each tensor in name order its data
followed by its quant payload. Each blob starts on a multiple of 8 and the offsets written in
the tables are exactly where the blobs are.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import numeric, packed
from .spec import Bitset, QuantParams, QuantScale, QuantZeroPoint
from .vtypes import (
    ELEMENT_TYPES, FLAG_HAS_DATA, FLAG_HAS_QUANT, HEADER_PADDED, MAGIC, NATIVE_TYPES,
    V, OinfError, ValueType, align8, check_name, decoded_dtype,
    packed_bits, type_name,
)

SUPPORTED_VERSIONS = (1, 2)


@dataclass
class MetadataItem:
    """One metadata entry; `payload` is exactly `value_nbytes` long (padding added on write)."""

    key: str
    vtype: ValueType
    payload: bytes


@dataclass
class TensorItem:
    """One tensor entry; `data` None means declared without data, `quant` None means none."""

    name: str
    vtype: ValueType
    dims: Tuple[int, ...]
    data: Optional[bytes]
    quant: Optional[bytes] = None


def _pad8(blob: bytes) -> bytes:
    """Zero padding up to the next multiple of 8."""
    return blob + b"\x00" * (align8(len(blob)) - len(blob))


def encode_string(text: str) -> bytes:
    """`u32 length; UTF-8 bytes; zero padding` so 4 + length rounds up to a multiple of 8.

    Names are checked against the charset before they get here; string values may hold any
    UTF-8 text."""
    raw = text.encode("utf-8")
    return _pad8(struct.pack("<I", len(raw)) + raw)


# ---------------------------------------------------------------------------- arrays

def _check_lossless(arr: np.ndarray, target: np.dtype, vt: ValueType) -> None:
    """Casting to an integer or bool type must not truncate or wrap: the user asked for a
    type, not for silently different numbers."""
    if target.kind not in "iub" or arr.size == 0:
        return
    if arr.dtype.kind not in "iubf":
        raise OinfError(f"cannot store {arr.dtype} values as {type_name(vt)}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.floor(arr))):
        raise OinfError(f"{type_name(vt)} values must be whole numbers")
    info = (0, 1) if target.kind == "b" else (int(np.iinfo(target).min), int(np.iinfo(target).max))
    if int(arr.min()) < info[0] or int(arr.max()) > info[1]:
        raise OinfError(f"values must lie in [{info[0]}, {info[1]}] for {type_name(vt)}")


def _as_array(values: Any) -> np.ndarray:
    """numpy view of user data; ragged lists and strings are not tensor data."""
    arr = np.asarray(values)
    if arr.dtype == np.object_ or arr.dtype.kind in "USV":
        raise OinfError(f"cannot encode {type(values).__name__} of {arr.dtype} as numbers")
    return arr


def encode_array(values: Any, vt: Optional[ValueType]) -> Tuple[ValueType, Tuple[int, ...], bytes]:
    """Row-major little-endian bytes of `values`, converted to `vt` when given.

    Without an override numpy dtypes map 1:1 onto the 12 native types. bf16/f8 convert from
    float32 (ties to even); packed types are range-checked and bit-packed.
    """
    arr = _as_array(values)
    dims = tuple(int(d) for d in arr.shape)
    if vt is None:
        if arr.dtype not in NATIVE_TYPES:
            raise OinfError(f"numpy dtype {arr.dtype} has no .oinf type; pass dtype=")
        vt = NATIVE_TYPES[arr.dtype]
    if vt not in ELEMENT_TYPES:
        raise OinfError(f"{type_name(vt)} cannot be an array element type")
    if vt == V.BF16:
        return vt, dims, numeric.f32_to_bf16_bits(arr.astype(np.float32)).astype("<u2").tobytes()
    if vt == V.F8:
        return vt, dims, numeric.f32_to_f8_bits(arr.astype(np.float32)).tobytes()
    if packed_bits(vt):
        return vt, dims, packed.pack(arr, vt)
    target = decoded_dtype(vt)
    _check_lossless(arr, target, vt)
    with np.errstate(over="ignore"):   # float narrowing overflows to inf, as IEEE says
        return vt, dims, arr.astype(target.newbyteorder("<")).tobytes()


def smallest_int_type(lo: int, hi: int) -> ValueType:
    """Smallest unsigned type when nothing is negative, else the smallest signed one."""
    if lo >= 0:
        for vt, limit in ((V.U8, 2**8), (V.U16, 2**16), (V.U32, 2**32), (V.U64, 2**64)):
            if hi < limit:
                return vt
    else:
        for vt, bits in ((V.I8, 8), (V.I16, 16), (V.I32, 32), (V.I64, 64)):
            if -(2 ** (bits - 1)) <= lo and hi < 2 ** (bits - 1):
                return vt
    raise OinfError(f"integer range [{lo}, {hi}] does not fit 64 bits")


def narrow_list(values: Any) -> Tuple[np.ndarray, ValueType]:
    """Plain Python lists in metadata: ints to the smallest type, floats to f32, bools stay."""
    arr = _as_array(values)
    if arr.dtype == np.bool_:
        return arr, V.BOOL
    if arr.dtype.kind in "iu":
        if arr.size == 0:
            return arr, V.U8
        return arr, smallest_int_type(int(arr.min()), int(arr.max()))
    return arr, V.F32


# ---------------------------------------------------------------------------- metadata

def encode_ndarray_payload(values: Any, vt: Optional[ValueType]) -> bytes:
    """`u32 element_type; u32 ndim; u64 dims[ndim]; data; pad to 8`."""
    elem, dims, raw = encode_array(values, vt)
    head = struct.pack("<II", elem, len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
    return _pad8(head + raw)


def encode_bitset_payload(bits: Bitset) -> bytes:
    """`u32 bit_count; u32 byte_count; bytes LSB-first; pad to 8`."""
    raw = bits.to_bytes()
    return _pad8(struct.pack("<II", bits.bit_count, len(raw)) + raw)


def _infer_scalar_type(value: Any) -> ValueType:
    """Type of a metadata scalar given without override (format section 2.10)."""
    if isinstance(value, np.generic):
        if value.dtype not in NATIVE_TYPES:
            raise OinfError(f"numpy scalar type {value.dtype} has no .oinf type")
        return NATIVE_TYPES[value.dtype]
    if isinstance(value, int):
        return smallest_int_type(value, value)
    if isinstance(value, float):
        return V.F32
    raise OinfError(f"unsupported metadata value {value!r} ({type(value).__name__})")


def encode_metadata_value(value: Any, vt: Optional[ValueType]) -> Tuple[ValueType, bytes]:
    """Tag and payload of one metadata value (`vt` is an element/scalar type override)."""
    if isinstance(value, (bool, np.bool_)) and vt is None:
        return V.BOOL, bytes([1 if value else 0])
    if isinstance(value, str):
        if vt not in (None, V.STRING):
            raise OinfError(f"a str cannot be stored as {type_name(vt)}")
        return V.STRING, encode_string(value)
    if isinstance(value, Bitset):
        if vt not in (None, V.BITSET):
            raise OinfError(f"a Bitset cannot be stored as {type_name(vt)}")
        return V.BITSET, encode_bitset_payload(value)
    if vt in (V.STRING, V.BITSET, V.NDARRAY):
        raise OinfError(f"dtype {type_name(vt)} needs a str, Bitset or list value")
    if isinstance(value, np.ndarray):
        return V.NDARRAY, encode_ndarray_payload(value, vt)
    if isinstance(value, (list, tuple)):
        arr, inferred = narrow_list(value)
        return V.NDARRAY, encode_ndarray_payload(arr, vt or inferred)
    scalar_vt = vt or _infer_scalar_type(value)
    _, _, raw = encode_array(np.asarray(value), scalar_vt)
    return scalar_vt, raw


# ---------------------------------------------------------------------------- quant

def _scale_fields(name: str, scale: QuantScale, dims: Sequence[int]) -> Tuple[int, int, List[float]]:
    """(mode, axis, values) of a scale after checking it against the tensor's dims."""
    if scale.mode == QuantScale.PER_TENSOR:
        if scale.value is None:
            raise OinfError(f"tensor '{name}': per-tensor scale needs a value")
        return 1, 0, [scale.value]
    if scale.mode != QuantScale.PER_CHANNEL or scale.axis is None or scale.values is None:
        raise OinfError(f"tensor '{name}': per-channel scale needs an axis and values")
    if not 0 <= scale.axis < len(dims):
        raise OinfError(f"tensor '{name}': scale axis {scale.axis} out of range for {len(dims)} dims")
    if len(scale.values) != dims[scale.axis]:
        raise OinfError(f"tensor '{name}': {len(scale.values)} scales for axis {scale.axis} "
                        f"of size {dims[scale.axis]}")
    return 2, scale.axis, list(scale.values)


def _zero_point_fields(name: str, quant: QuantParams, scale_mode: int, scale_axis: int,
                       dims: Sequence[int]) -> Tuple[int, int, List[int]]:
    """(mode, axis, values) of the zero point, enforcing the quant rules of section 2.7."""
    zp = quant.zero_point
    if zp is None:
        return 0, 0, []
    if quant.scheme == QuantParams.SYMMETRIC:
        raise OinfError(f"tensor '{name}': symmetric quantization has no zero point")
    if zp.mode == QuantZeroPoint.PER_TENSOR:
        if scale_mode != 1 or zp.value is None:
            raise OinfError(f"tensor '{name}': per-tensor zero point needs a per-tensor scale")
        return 1, 0, [zp.value]
    if zp.mode != QuantZeroPoint.PER_CHANNEL or zp.axis is None or zp.values is None:
        raise OinfError(f"tensor '{name}': per-channel zero point needs an axis and values")
    if scale_mode != 2 or zp.axis != scale_axis:
        raise OinfError(f"tensor '{name}': per-channel zero point needs a per-channel scale "
                        "on the same axis")
    if len(zp.values) != dims[zp.axis]:
        raise OinfError(f"tensor '{name}': {len(zp.values)} zero points for axis {zp.axis} "
                        f"of size {dims[zp.axis]}")
    return 2, zp.axis, list(zp.values)


def encode_quant(name: str, quant: QuantParams, dims: Sequence[int]) -> bytes:
    """The 48-byte quant header, f32 scales, i32 zero points, padded to 8."""
    scale_mode, scale_axis, scales = _scale_fields(name, quant.scale, dims)
    zp_mode, zp_axis, zps = _zero_point_fields(name, quant, scale_mode, scale_axis, dims)
    scheme = 1 if quant.scheme == QuantParams.SYMMETRIC else 2
    if any(not -2**31 <= z < 2**31 for z in zps):
        raise OinfError(f"tensor '{name}': zero points must fit i32")
    head = struct.pack("<IIIIQQQQ", scheme, scale_mode, zp_mode, 0,
                       scale_axis, len(scales), zp_axis, len(zps))
    body = np.asarray(scales, dtype="<f4").tobytes() + np.asarray(zps, dtype="<i4").tobytes()
    return _pad8(head + body)


# ---------------------------------------------------------------------------- layout

def _sorted_unique(items: List[Any], key: str, what: str) -> List[Any]:
    """Entries sorted by name (byte order: names are ASCII) after a duplicate check."""
    names = [getattr(item, key) for item in items]
    for name in names:
        check_name(name, what)
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise OinfError(f"duplicate {what} name(s): {', '.join(dupes)}")
    return sorted(items, key=lambda item: getattr(item, key).encode("ascii"))


@dataclass
class _SizeVarItem:
    name: str
    value: int


def _tensor_entry(t: TensorItem, version: int, data_off: int, quant_off: int) -> bytes:
    """One tensor-table entry; v1 entries have no quant fields."""
    flags = (FLAG_HAS_DATA if t.data is not None else 0) | (FLAG_HAS_QUANT if t.quant else 0)
    out = encode_string(t.name) + struct.pack("<III", t.vtype, len(t.dims), flags)
    out += struct.pack(f"<{len(t.dims)}Q", *t.dims)
    out += struct.pack("<QQ", len(t.data or b""), data_off)
    if version == 2:
        out += struct.pack("<QQ", len(t.quant or b""), quant_off)
    return out


def _data_offsets(start: int, metadata: List[MetadataItem], tensors: List[TensorItem]
                  ) -> Tuple[List[int], List[Tuple[int, int]], int]:
    """Offsets of every blob in write order, and the end of the file."""
    cursor = start
    meta_offsets = []
    for m in metadata:
        meta_offsets.append(cursor)
        cursor += align8(len(m.payload))
    tensor_offsets = []
    for t in tensors:
        data_off = quant_off = 0
        if t.data is not None:
            data_off, cursor = cursor, cursor + align8(len(t.data))
        if t.quant:
            quant_off, cursor = cursor, cursor + align8(len(t.quant))
        tensor_offsets.append((data_off, quant_off))
    return meta_offsets, tensor_offsets, cursor


def encode_file(sizevars: Union[Mapping[str, int], Sequence[Tuple[str, int]]], metadata: List[MetadataItem],
                tensors: List[TensorItem], version: int = 2) -> bytes:
    """Lay out a complete file; the result always passes `reader.read_oinf`."""
    if version not in SUPPORTED_VERSIONS:
        raise OinfError(f"version must be 1 or 2, got {version}")
    if version == 1 and any(t.quant for t in tensors):
        raise OinfError("version 1 files cannot hold quantization parameters")
    pairs = list(sizevars.items()) if isinstance(sizevars, Mapping) else list(sizevars)
    svs = _sorted_unique([_SizeVarItem(k, v) for k, v in pairs], "name", "sizevar")
    metadata = _sorted_unique(list(metadata), "key", "metadata")
    tensors = _sorted_unique(list(tensors), "name", "tensor")

    sv_table = b"".join(encode_string(s.name) + struct.pack("<Q", s.value) for s in svs)
    meta_table_len = sum(len(encode_string(m.key)) + 24 for m in metadata)
    tensor_table_len = sum(len(_tensor_entry(t, version, 0, 0)) for t in tensors)
    off_sv = HEADER_PADDED
    off_meta = align8(off_sv + len(sv_table))
    off_tensors = align8(off_meta + meta_table_len)
    off_data = align8(off_tensors + tensor_table_len)
    meta_offsets, tensor_offsets, file_size = _data_offsets(off_data, metadata, tensors)

    meta_table = b"".join(encode_string(m.key) + struct.pack("<IIQQ", m.vtype, 0, len(m.payload), off)
                          for m, off in zip(metadata, meta_offsets))
    tensor_table = b"".join(_tensor_entry(t, version, d, q) for t, (d, q) in zip(tensors, tensor_offsets))
    header = struct.pack("<5sIIIIIIQQQQQ", MAGIC, version, 0, len(svs), len(metadata), len(tensors),
                         0, off_sv, off_meta, off_tensors, off_data, file_size)
    out = bytearray(_pad8(header))
    for section, start in ((sv_table, off_sv), (meta_table, off_meta), (tensor_table, off_tensors)):
        out += b"\x00" * (start - len(out)) + section
    out += b"\x00" * (off_data - len(out))
    for m in metadata:
        out += _pad8(m.payload)
    for t in tensors:
        out += _pad8(t.data) if t.data is not None else b""
        out += _pad8(t.quant) if t.quant else b""
    if len(out) != file_size:
        raise OinfError(f"internal layout error: wrote {len(out)} bytes, planned {file_size}")
    return bytes(out)
