"""Value-type tags of the .oinf format and the small facts every module needs about them.

One table (`_TYPES`) lists each tag once with its name, element size, packed width and numpy
dtype; every other lookup here is derived from it, so a tag can never be half-added.
"""
from __future__ import annotations

import enum
import re
from typing import Dict, Optional, Tuple, Union

import numpy as np

MAGIC = b"OINF\x00"
HEADER_SIZE = 69          # packed "<5sIIIIIIQQQQQ", no internal alignment
HEADER_PADDED = 72        # the header is zero-padded to the next multiple of 8
QUANT_HEADER_SIZE = 48    # fixed part of a v2 quant payload
FLAG_HAS_DATA = 1
FLAG_HAS_QUANT = 2

_NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")


class OinfError(Exception):
    """A model that cannot be encoded, or a file that breaks a rule of the format."""


class ValueType(enum.IntEnum):
    """The u32 tags shared by metadata values, NDARRAY elements and tensor dtypes."""

    I8 = 1
    I16 = 2
    I32 = 3
    I64 = 4
    U8 = 5
    U16 = 6
    U32 = 7
    U64 = 8
    F16 = 9
    F32 = 10
    F64 = 11
    BOOL = 12
    BITSET = 13
    STRING = 14
    NDARRAY = 15
    BF16 = 16
    F8 = 17
    I4 = 18
    I2 = 19
    I1 = 20
    U4 = 21
    U2 = 22
    U1 = 23
    T2 = 24
    T1 = 25


V = ValueType
# tag: (name, element bytes (0 = variable), packed bits (0 = not packed), numpy dtype of the
# decoded values (None = not an array element type))
_TYPES: Dict[ValueType, Tuple[str, int, int, Optional[type]]] = {
    V.I8: ("i8", 1, 0, np.int8),
    V.I16: ("i16", 2, 0, np.int16),
    V.I32: ("i32", 4, 0, np.int32),
    V.I64: ("i64", 8, 0, np.int64),
    V.U8: ("u8", 1, 0, np.uint8),
    V.U16: ("u16", 2, 0, np.uint16),
    V.U32: ("u32", 4, 0, np.uint32),
    V.U64: ("u64", 8, 0, np.uint64),
    V.F16: ("f16", 2, 0, np.float16),
    V.F32: ("f32", 4, 0, np.float32),
    V.F64: ("f64", 8, 0, np.float64),
    V.BOOL: ("bool", 1, 0, np.bool_),
    V.BITSET: ("bitset", 0, 0, None),
    V.STRING: ("str", 0, 0, None),
    V.NDARRAY: ("ndarray", 0, 0, None),
    V.BF16: ("bf16", 2, 0, np.float32),
    V.F8: ("f8", 1, 0, np.float32),
    V.I4: ("i4", 0, 4, np.int8),
    V.I2: ("i2", 0, 2, np.int8),
    V.I1: ("i1", 0, 1, np.int8),
    V.U4: ("u4", 0, 4, np.uint8),
    V.U2: ("u2", 0, 2, np.uint8),
    V.U1: ("u1", 0, 1, np.uint8),
    V.T2: ("t2", 0, 2, np.int8),
    V.T1: ("t1", 0, 1, np.int8),
}

# numpy dtypes that map 1:1 onto a tag (the 12 "native" types).
NATIVE_TYPES: Dict[np.dtype, ValueType] = {
    np.dtype(dt): vt for vt, (_, _, bits, dt) in _TYPES.items()
    if dt is not None and bits == 0 and vt not in (V.BF16, V.F8)
}
PACKED_SIGNED = frozenset({V.I4, V.I2, V.I1, V.T2})
PACKED_UNSIGNED = frozenset({V.U4, V.U2, V.U1})
# Types an NDARRAY element or a tensor may have: everything but BITSET, STRING, NDARRAY.
ELEMENT_TYPES = frozenset(vt for vt, row in _TYPES.items() if row[3] is not None)

_ALIASES: Dict[str, ValueType] = {row[0]: vt for vt, row in _TYPES.items()}
_ALIASES.update({"f8e5m2": V.F8, "float8e5m2": V.F8, "string": V.STRING})

DtypeLike = Union[str, int, np.dtype, type, None]


def type_name(vt: int) -> str:
    """Short name of a tag as printed by verify_oinf (`f32`, `bitset`, ...)."""
    return _TYPES[ValueType(vt)][0]


def is_valid_tag(vt: int) -> bool:
    """True for the 25 tags the format defines."""
    return isinstance(vt, int) and vt in _TYPES


def packed_bits(vt: int) -> int:
    """Bits per element for the packed types, 0 for every other type."""
    return _TYPES[ValueType(vt)][2]


def element_size(vt: int) -> int:
    """Bytes per element for non-packed element types."""
    return _TYPES[ValueType(vt)][1]


def decoded_dtype(vt: int) -> np.dtype:
    """numpy dtype that decoded values of this tag are returned in."""
    dt = _TYPES[ValueType(vt)][3]
    if dt is None:
        raise OinfError(f"{type_name(vt)} is not an array element type")
    return np.dtype(dt)


def tensor_nbytes(vt: int, numel: int) -> int:
    """Exact byte size of `numel` elements: bit-packed types round up to whole bytes."""
    bits = packed_bits(vt)
    if bits:
        return (numel * bits + 7) // 8
    return numel * element_size(vt)


def align8(n: int) -> int:
    """Round up to the next multiple of 8: every section and payload starts aligned."""
    return (n + 7) & ~7


def check_name(name: object, what: str) -> str:
    """Enforce the name charset `^[A-Za-z0-9._-]+$` so encoder and verifier agree."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise OinfError(f"{what} name {name!r} must match [A-Za-z0-9._-]+")
    return name


def name_is_valid(name: str) -> bool:
    """Charset test without raising, for the verifier."""
    return bool(_NAME_RE.match(name))


def resolve_dtype(dtype: DtypeLike) -> Optional[ValueType]:
    """Turn a user dtype override ("bf16", ValueType.I4, 10, np.float16) into a tag."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        key = dtype.strip().lower()
        if key in _ALIASES:
            return _ALIASES[key]
        raise OinfError(f"unknown dtype {dtype!r}")
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if is_valid_tag(int(dtype)):
            return ValueType(int(dtype))
        raise OinfError(f"unknown dtype code {int(dtype)}")
    try:
        npdt = np.dtype(dtype)
    except TypeError as exc:
        raise OinfError(f"unknown dtype {dtype!r}") from exc
    if npdt in NATIVE_TYPES:
        return NATIVE_TYPES[npdt]
    raise OinfError(f"numpy dtype {npdt} has no .oinf type")
