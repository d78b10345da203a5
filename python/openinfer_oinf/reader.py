"""Parse and validate a .oinf file (versions 1 and 2), never reading outside the buffer.

`read_oinf(blob)` checks every structural rule of the format before it returns; the first
violation raises `OinfError` with a message naming the field and its byte offset. Tensor data
is decoded on request (`OinfFile.tensor_values`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, List, Optional, Set, Tuple

import numpy as np

from . import numeric, packed
from .spec import Bitset
from .vtypes import (
    ELEMENT_TYPES, FLAG_HAS_DATA, FLAG_HAS_QUANT, HEADER_PADDED, HEADER_SIZE, MAGIC,
    QUANT_HEADER_SIZE, V, OinfError, ValueType, align8, decoded_dtype,
    is_valid_tag, name_is_valid, packed_bits, tensor_nbytes, type_name,
)

_HEADER = struct.Struct("<5sIIIIIIQQQQQ")
_QUANT = struct.Struct("<IIIIQQQQ")


@dataclass
class Quant:
    """A tensor's v2 quant payload, decoded."""

    scheme: int            # 1 symmetric, 2 asymmetric
    scale_mode: int        # 1 per tensor, 2 per channel
    zp_mode: int           # 0 none, 1 per tensor, 2 per channel
    scale_axis: int
    zp_axis: int
    scales: np.ndarray     # float32
    zero_points: np.ndarray  # int32


@dataclass
class NdArray:
    """A metadata NDARRAY value: element type plus the decoded array."""

    elem_type: ValueType
    array: np.ndarray


@dataclass
class Metadata:
    """One metadata entry and its decoded value."""

    key: str
    vtype: ValueType
    nbytes: int
    offset: int
    value: Any


@dataclass
class Tensor:
    """One tensor-table entry (`entry_offset` is where the entry starts, for messages)."""

    name: str
    dtype: ValueType
    dims: Tuple[int, ...]
    flags: int
    data_nbytes: int
    data_offset: int
    quant_nbytes: int = 0
    quant_offset: int = 0
    quant: Optional[Quant] = None
    entry_offset: int = 0

    @property
    def has_data(self) -> bool:
        """False for declared tensors that the runtime initialises."""
        return bool(self.flags & FLAG_HAS_DATA)

    @property
    def numel(self) -> int:
        """Element count; a scalar (no dims) has one element."""
        return int(np.prod(self.dims, dtype=object)) if self.dims else 1


@dataclass
class OinfFile:
    """A validated file: its tables plus the raw bytes the payloads live in."""

    version: int
    sizevars: List[Tuple[str, int]]
    metadata: List[Metadata]
    tensors: List[Tensor]
    blob: bytes = field(repr=False)

    def tensor_values(self, tensor: Tensor) -> Optional[np.ndarray]:
        """Decoded data shaped by dims (bf16/f8 as float32, packed as int8/uint8)."""
        if not tensor.has_data:
            return None
        raw = self.blob[tensor.data_offset: tensor.data_offset + tensor.data_nbytes]
        return decode_array(tensor.dtype, raw, tensor.dims)


def decode_array(vt: ValueType, raw: bytes, dims: Tuple[int, ...]) -> np.ndarray:
    """Inverse of the encoder's array encoding for every element type."""
    numel = int(np.prod(dims, dtype=object)) if dims else 1
    if packed_bits(vt):
        flat = packed.unpack(raw, vt, numel)
    elif vt == V.BF16:
        flat = numeric.bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
    elif vt == V.F8:
        flat = numeric.f8_bits_to_f32(np.frombuffer(raw, dtype=np.uint8))
    elif vt == V.BOOL:
        flat = np.frombuffer(raw, dtype=np.uint8) != 0
    else:
        flat = np.frombuffer(raw, dtype=decoded_dtype(vt).newbyteorder("<")).astype(decoded_dtype(vt))
    return flat.reshape(dims)


class _Cursor:
    """Bounds-checked little-endian reads inside one table, for clear error messages."""

    def __init__(self, blob: bytes, pos: int, end: int, table: str) -> None:
        self.blob, self.pos, self.end, self.table = blob, pos, end, table

    def _take(self, n: int, what: str, where: str) -> bytes:
        if self.pos + n > self.end:
            raise OinfError(f"{where}: {what} at byte {self.pos} runs past the end of the "
                            f"{self.table} ({self.end})")
        out = self.blob[self.pos: self.pos + n]
        self.pos += n
        return out

    def u32(self, what: str, where: str) -> int:
        return struct.unpack("<I", self._take(4, what, where))[0]

    def u64(self, what: str, where: str) -> int:
        return struct.unpack("<Q", self._take(8, what, where))[0]

    def name(self, where: str, seen: Set[str]) -> str:
        """A length-prefixed, padded name that must match the charset and be unique."""
        start = self.pos
        length = self.u32("name length", where)
        raw = self._take(align8(4 + length) - 4, "name", where)[:length]
        text = raw.decode("latin-1")
        if length == 0 or not name_is_valid(text):
            raise OinfError(f"{where}: name {text!r} at byte {start} must match [A-Za-z0-9._-]+")
        if text in seen:
            raise OinfError(f"{where}: duplicate name '{text}' at byte {start}")
        seen.add(text)
        return text


# ---------------------------------------------------------------------------- header

def _read_header(blob: bytes) -> Tuple[int, Tuple[int, int, int], List[int]]:
    """(version, (n_sizevars, n_metadata, n_tensors), [4 section offsets, file_size])."""
    if len(blob) < HEADER_SIZE:
        raise OinfError(f"header: file is {len(blob)} bytes, smaller than the {HEADER_SIZE}-byte header")
    magic, version, flags, n_sv, n_meta, n_tensors, reserved, *offsets = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise OinfError(f"header: bad magic {magic!r} at byte 0 (expected {MAGIC!r})")
    if version not in (1, 2):
        raise OinfError(f"header: unsupported version {version} at byte 5 (expected 1 or 2)")
    if flags != 0 or reserved != 0:
        raise OinfError(f"header: flags (byte 9) and reserved (byte 25) must be 0, got {flags} and {reserved}")
    if offsets[4] != len(blob):
        raise OinfError(f"header: file_size {offsets[4]} at byte 61 != actual file length {len(blob)}")
    _check_offsets(offsets)
    return version, (n_sv, n_meta, n_tensors), offsets


def _check_offsets(offsets: List[int]) -> None:
    """Sections are ordered, 8-aligned, after the header and inside the file."""
    names = ("offset_sizevars", "offset_metadata", "offset_tensors", "offset_data", "file_size")
    header_bytes = (29, 37, 45, 53, 61)
    for i in range(4):
        where = f"header: {names[i]} {offsets[i]} at byte {header_bytes[i]}"
        if offsets[i] % 8:
            raise OinfError(f"{where} is not a multiple of 8")
        if offsets[i] > offsets[4]:
            raise OinfError(f"{where} is beyond file_size {offsets[4]}")
        if offsets[i] > offsets[i + 1]:
            raise OinfError(f"{where} is greater than {names[i + 1]} {offsets[i + 1]}: "
                            "sections must be in order")
    if offsets[0] < HEADER_PADDED:
        raise OinfError(f"header: offset_sizevars {offsets[0]} at byte 29 overlaps the 72-byte header")


# ---------------------------------------------------------------------------- payload helpers

def _check_blob(where: str, what: str, offset: int, nbytes: int, data_start: int, size: int) -> None:
    """Every payload is 8-aligned, inside the data section and inside the file."""
    if offset % 8:
        raise OinfError(f"{where}: {what} offset {offset} is not a multiple of 8")
    if offset < data_start:
        raise OinfError(f"{where}: {what} offset {offset} is before the data section ({data_start})")
    if offset + nbytes > size:
        raise OinfError(f"{where}: {what} [{offset}, {offset + nbytes}) exceeds file_size {size}")


def _expect_size(where: str, what: str, nbytes: int, expected: int) -> None:
    if nbytes != expected:
        raise OinfError(f"{where}: {what} is {nbytes} bytes, expected {expected}")


def _decode_scalar(where: str, vt: ValueType, payload: bytes) -> Any:
    """Numeric, bool, bf16, f8 and packed scalars: exactly one element's bytes."""
    _expect_size(where, f"{type_name(vt)} payload", len(payload), tensor_nbytes(vt, 1))
    if vt == V.BOOL and payload[0] > 1:
        raise OinfError(f"{where}: bool payload byte is {payload[0]}, expected 0 or 1")
    return decode_array(vt, payload, ()).item()


def _decode_string(where: str, payload: bytes) -> str:
    """A §2.2 string whose padded length is the whole payload; any UTF-8 text."""
    if len(payload) < 4:
        raise OinfError(f"{where}: str payload of {len(payload)} bytes has no length field")
    length = struct.unpack_from("<I", payload)[0]
    _expect_size(where, "str payload", len(payload), align8(4 + length))
    try:
        return payload[4: 4 + length].decode("utf-8")
    except UnicodeDecodeError:
        raise OinfError(f"{where}: str payload is not valid UTF-8") from None


def _decode_bitset(where: str, payload: bytes) -> Bitset:
    """`u32 bit_count; u32 byte_count; bytes`, sizes cross-checked."""
    if len(payload) < 8:
        raise OinfError(f"{where}: bitset payload of {len(payload)} bytes is shorter than 8")
    bit_count, byte_count = struct.unpack_from("<II", payload)
    _expect_size(where, "bitset byte_count", byte_count, (bit_count + 7) // 8)
    _expect_size(where, "bitset payload", len(payload), align8(8 + byte_count))
    data = payload[8: 8 + byte_count]
    return Bitset([(data[i // 8] >> (i % 8)) & 1 for i in range(bit_count)])


def _decode_ndarray(where: str, payload: bytes) -> NdArray:
    """`u32 element_type; u32 ndim; u64 dims[ndim]; data`, sizes cross-checked."""
    if len(payload) < 8:
        raise OinfError(f"{where}: ndarray payload of {len(payload)} bytes is shorter than 8")
    elem, ndim = struct.unpack_from("<II", payload)
    if elem not in ELEMENT_TYPES:
        raise OinfError(f"{where}: ndarray element type {elem} is not a numeric/bool/packed type")
    if 8 + 8 * ndim > len(payload):
        raise OinfError(f"{where}: ndarray dims ({ndim}) run past the payload ({len(payload)} bytes)")
    dims = struct.unpack_from(f"<{ndim}Q", payload, 8)
    numel = int(np.prod(dims, dtype=object)) if dims else 1
    data_nbytes = tensor_nbytes(ValueType(elem), numel)
    _expect_size(where, "ndarray payload", len(payload), align8(8 + 8 * ndim + data_nbytes))
    raw = payload[8 + 8 * ndim: 8 + 8 * ndim + data_nbytes]
    return NdArray(ValueType(elem), decode_array(ValueType(elem), raw, tuple(dims)))


def _decode_metadata(where: str, vt: ValueType, payload: bytes) -> Any:
    """Dispatch on the value type; each branch checks the payload size rule of §2.5."""
    if vt == V.STRING:
        return _decode_string(where, payload)
    if vt == V.BITSET:
        return _decode_bitset(where, payload)
    if vt == V.NDARRAY:
        return _decode_ndarray(where, payload)
    return _decode_scalar(where, vt, payload)


# ---------------------------------------------------------------------------- tables

def _read_sizevars(blob: bytes, count: int, start: int, end: int) -> List[Tuple[str, int]]:
    cur, seen, out = _Cursor(blob, start, end, "sizevar table"), set(), []
    for i in range(count):
        where = f"sizevar #{i} (byte {cur.pos})"
        name = cur.name(where, seen)
        out.append((name, cur.u64("value", f"sizevar '{name}'")))
    return out


def _read_metadata(blob: bytes, count: int, start: int, end: int, data_start: int) -> List[Metadata]:
    cur, seen, out = _Cursor(blob, start, end, "metadata table"), set(), []
    for i in range(count):
        entry = cur.pos
        key = cur.name(f"metadata #{i} (byte {entry})", seen)
        where = f"metadata '{key}' (entry at byte {entry})"
        vt, flags = cur.u32("value_type", where), cur.u32("value_flags", where)
        nbytes, offset = cur.u64("value_nbytes", where), cur.u64("value_offset", where)
        if flags != 0:
            raise OinfError(f"{where}: value_flags must be 0, got {flags}")
        if not is_valid_tag(vt):
            raise OinfError(f"{where}: unknown value_type {vt}")
        _check_blob(where, "value", offset, nbytes, data_start, len(blob))
        value = _decode_metadata(where, ValueType(vt), blob[offset: offset + nbytes])
        out.append(Metadata(key, ValueType(vt), nbytes, offset, value))
    return out


def _check_data(where: str, t: Tensor, data_start: int, size: int) -> None:
    """No data => zero offset/size; data => aligned, in bounds, exactly dtype x numel bytes."""
    if not t.has_data:
        if t.data_nbytes or t.data_offset:
            raise OinfError(f"{where}: tensor without data must have data_offset and data_nbytes 0, "
                            f"got {t.data_offset} and {t.data_nbytes}")
        return
    expected = tensor_nbytes(t.dtype, t.numel)
    if t.data_nbytes != expected:
        dims = ", ".join(map(str, t.dims))
        raise OinfError(f"{where}: data_nbytes {t.data_nbytes} != {expected} expected for "
                        f"{type_name(t.dtype)}[{dims}]")
    _check_blob(where, "data", t.data_offset, t.data_nbytes, data_start, size)


def _read_tensor_entry(cur: _Cursor, index: int, version: int, seen: Set[str]) -> Tensor:
    """One tensor entry; flags beyond HAS_DATA (v1) or HAS_DATA|HAS_QUANT (v2) are errors."""
    entry = cur.pos
    name = cur.name(f"tensor #{index} (byte {entry})", seen)
    where = f"tensor '{name}' (entry at byte {entry})"
    dtype, ndim, flags = (cur.u32(w, where) for w in ("dtype", "ndim", "flags"))
    if dtype not in ELEMENT_TYPES:
        raise OinfError(f"{where}: dtype {dtype} is not a valid tensor type (1-12, 16-25)")
    allowed = FLAG_HAS_DATA | (FLAG_HAS_QUANT if version == 2 else 0)
    if flags & ~allowed:
        raise OinfError(f"{where}: flags {flags:#x} has bits outside {allowed:#x} (version {version})")
    dims = tuple(cur.u64(f"dims[{d}]", where) for d in range(ndim))
    t = Tensor(name, ValueType(dtype), dims, flags, cur.u64("data_nbytes", where),
               cur.u64("data_offset", where), entry_offset=entry)
    if version == 2:
        t.quant_nbytes, t.quant_offset = cur.u64("quant_nbytes", where), cur.u64("quant_offset", where)
    return t


def _read_tensors(blob: bytes, count: int, start: int, end: int, version: int) -> List[Tensor]:
    cur, seen, out = _Cursor(blob, start, end, "tensor table"), set(), []
    for i in range(count):
        t = _read_tensor_entry(cur, i, version, seen)
        where = f"tensor '{t.name}' (entry at byte {t.entry_offset})"
        _check_data(where, t, end, len(blob))
        t.quant = _read_quant(blob, where, t, end)
        out.append(t)
    return out


# ---------------------------------------------------------------------------- quant

def _read_quant(blob: bytes, where: str, t: Tensor, data_start: int) -> Optional[Quant]:
    """Check the quant fields and payload against the rules of §2.7."""
    if not t.flags & FLAG_HAS_QUANT:
        if t.quant_nbytes or t.quant_offset:
            raise OinfError(f"{where}: tensor without quant must have quant_offset and "
                            f"quant_nbytes 0, got {t.quant_offset} and {t.quant_nbytes}")
        return None
    where = f"{where} quant"
    _check_blob(where, "quant", t.quant_offset, t.quant_nbytes, data_start, len(blob))
    if t.quant_nbytes < QUANT_HEADER_SIZE:
        raise OinfError(f"{where}: quant_nbytes {t.quant_nbytes} is shorter than the 48-byte header")
    fields = _QUANT.unpack_from(blob, t.quant_offset)
    scheme, scale_mode, zp_mode, reserved, scale_axis, scale_count, zp_axis, zp_count = fields
    _check_quant_rules(where, fields, t.dims)
    _expect_size(where, "quant payload", t.quant_nbytes,
                 align8(QUANT_HEADER_SIZE + 4 * scale_count + 4 * zp_count))
    base = t.quant_offset + QUANT_HEADER_SIZE
    scales = np.frombuffer(blob, dtype="<f4", count=scale_count, offset=base).astype(np.float32)
    zps = np.frombuffer(blob, dtype="<i4", count=zp_count, offset=base + 4 * scale_count)
    return Quant(scheme, scale_mode, zp_mode, scale_axis, zp_axis, scales, zps.astype(np.int32))


def _check_quant_rules(where: str, fields: Tuple[int, ...], dims: Tuple[int, ...]) -> None:
    """Modes valid, counts and axes consistent with the tensor's dims, symmetric => no zp."""
    scheme, scale_mode, zp_mode, reserved, scale_axis, scale_count, zp_axis, zp_count = fields
    rules = [
        (reserved == 0, f"reserved field is {reserved}, must be 0"),
        (scheme in (1, 2), f"scheme {scheme} is not 1 (symmetric) or 2 (asymmetric)"),
        (scale_mode in (1, 2), f"scale_mode {scale_mode} is not 1 (per_tensor) or 2 (per_channel)"),
        (zp_mode in (0, 1, 2), f"zp_mode {zp_mode} is not 0 (none), 1 or 2"),
        (not (scheme == 1 and zp_mode != 0), "symmetric quantization must not have a zero point"),
    ]
    if scale_mode == 1:
        rules.append((scale_axis == 0 and scale_count == 1,
                      f"per_tensor scale needs axis 0 and count 1, got axis {scale_axis} count {scale_count}"))
    elif scale_mode == 2:
        rules.append((scale_axis < len(dims), f"per_channel scale axis {scale_axis} >= ndim {len(dims)}"))
        if scale_axis < len(dims):
            rules.append((scale_count == dims[scale_axis],
                          f"per_channel scale count {scale_count} != dims[{scale_axis}] = {dims[scale_axis]}"))
    if zp_mode == 0:
        rules.append((zp_count == 0 and zp_axis == 0, f"no zero point but zp axis {zp_axis} count {zp_count}"))
    elif zp_mode == 1:
        rules.append((scale_mode == 1 and zp_axis == 0 and zp_count == 1,
                      "per_tensor zero point needs a per_tensor scale, axis 0 and count 1"))
    elif zp_mode == 2:
        rules.append((scale_mode == 2 and zp_axis == scale_axis and scale_axis < len(dims)
                      and zp_count == dims[scale_axis],
                      "per_channel zero point needs a per_channel scale on the same axis "
                      "and count dims[axis]"))
    for ok, message in rules:
        if not ok:
            raise OinfError(f"{where}: {message}")


# ---------------------------------------------------------------------------- entry point

def read_oinf(blob: bytes) -> OinfFile:
    """Validate a whole file and return its tables; raises OinfError on the first problem."""
    blob = bytes(blob)
    version, (n_sv, n_meta, n_tensors), offsets = _read_header(blob)
    off_sv, off_meta, off_tensors, off_data, _ = offsets
    sizevars = _read_sizevars(blob, n_sv, off_sv, off_meta)
    metadata = _read_metadata(blob, n_meta, off_meta, off_tensors, off_data)
    tensors = _read_tensors(blob, n_tensors, off_tensors, off_data, version)
    return OinfFile(version, sizevars, metadata, tensors, blob)


def read_oinf_file(path: str) -> OinfFile:
    """`read_oinf` on a file's bytes."""
    with open(path, "rb") as handle:
        return read_oinf(handle.read())
