"""Dataclass -> bytes -> reader, for every value type and classification rule of §2.10.

No `from __future__ import annotations` here: the dataclasses below are local to tests and
their Annotated extras name local variables."""
from dataclasses import dataclass, field
from typing import Annotated, Optional

import numpy as np
import pytest

from dataclass_to_oinf import (
    Bitset, QuantParams, QuantScale, QuantZeroPoint, ScalarValue, SizeVar, TensorSpec,
    UninitializedTensor, dataclass_to_oinf,
)
from openinfer_oinf import OinfError, read_oinf
from openinfer_oinf.reader import NdArray
from openinfer_oinf.vtypes import ValueType as V


def roundtrip(instance, version=2):
    return read_oinf(dataclass_to_oinf(instance, version=version))


def meta_of(f):
    return {m.key: m for m in f.metadata}


def tensors_of(f):
    return {t.name: (t, f.tensor_values(t)) for t in f.tensors}


@pytest.mark.parametrize("value, vt, payload", [
    (0, V.U8, b"\x00"), (255, V.U8, b"\xff"), (300, V.U16, b"\x2c\x01"),
    (70000, V.U32, (70000).to_bytes(4, "little")), (2 ** 40, V.U64, (2 ** 40).to_bytes(8, "little")),
    (-1, V.I8, b"\xff"), (-129, V.I16, b"\x7f\xff"), (-40000, V.I32, (-40000).to_bytes(4, "little", signed=True)),
    (-2 ** 40, V.I64, (-2 ** 40).to_bytes(8, "little", signed=True)),
    (1.5, V.F32, bytes.fromhex("0000c03f")), (True, V.BOOL, b"\x01"), (False, V.BOOL, b"\x00"),
    ("clamp_up", V.STRING, (8).to_bytes(4, "little") + b"clamp_up" + b"\x00" * 4),
])
def test_metadata_scalar_types(value, vt, payload):
    @dataclass
    class M:
        metadata: dict = field(default_factory=lambda: {"v": value})

    f = roundtrip(M())
    m = meta_of(f)["v"]
    assert m.vtype == vt
    assert f.blob[m.offset: m.offset + m.nbytes] == payload
    assert m.value == value


@pytest.mark.parametrize("dtype, value, expected", [
    ("f16", 0.5, 0.5), ("f64", 0.1, 0.1), ("bf16", 1.0 + 3 * 2.0 ** -8, 1.0 + 2.0 ** -6),
    ("f8", 1.9, 2.0), ("i8", -5, -5), ("u64", 5, 5), ("i4", -8, -8), ("u2", 3, 3), ("t1", -1, -1),
    ("t2", 1, 1), ("i1", -1, -1), ("u1", 1, 1), ("i2", -2, -2), ("u4", 15, 15), ("F32", 2, 2.0),
])
def test_scalar_value_overrides(dtype, value, expected):
    @dataclass
    class M:
        x: ScalarValue = field(default_factory=lambda: ScalarValue(value, dtype=dtype))

    m = meta_of(roundtrip(M()))["x"]
    assert m.vtype.name.lower() == dtype.lower()
    assert m.value == expected


def test_metadata_lists_bitset_and_arrays():
    @dataclass
    class M:
        small: list = field(default_factory=lambda: [1, 2, 3])
        signed: list = field(default_factory=lambda: [-1, 300])
        floats: list = field(default_factory=lambda: [[0.5, 1.5], [2.5, 3.5]])
        flags: list = field(default_factory=lambda: [True, False])
        metadata: dict = field(default_factory=lambda: {"arr": np.arange(3, dtype=np.int64)})
        mask: Bitset = field(default_factory=lambda: Bitset([1, 0, 1, 1, 0, 1, 0, 0, 1, 0]))
        name: str = "mlp"
        bits: ScalarValue = field(default_factory=lambda: ScalarValue([-8, 7], dtype="i4"))

    f = roundtrip(M())
    meta = meta_of(f)
    assert meta["small"].value.elem_type == V.U8 and meta["small"].value.array.tolist() == [1, 2, 3]
    assert meta["signed"].value.elem_type == V.I16
    assert meta["floats"].value.elem_type == V.F32
    assert meta["floats"].value.array.tolist() == [[0.5, 1.5], [2.5, 3.5]]
    assert meta["flags"].value.elem_type == V.BOOL
    assert meta["arr"].vtype == V.NDARRAY and meta["arr"].value.elem_type == V.I64
    assert meta["mask"].value == Bitset([1, 0, 1, 1, 0, 1, 0, 0, 1, 0])
    # bitset payload: u32 10, u32 2, 0b00101101, 0b01 -> 2d 01, padded to 16
    mask = meta["mask"]
    assert f.blob[mask.offset: mask.offset + mask.nbytes] == bytes.fromhex("0a000000020000002d01000000000000")
    assert meta["name"].value == "mlp"
    assert isinstance(meta["bits"].value, NdArray) and meta["bits"].value.elem_type == V.I4
    # ndarray payload: u32 I4, u32 ndim 1, u64 2, one packed byte (-8 -> 8, 7 -> 7: 0x78), pad
    bits = meta["bits"]
    assert f.blob[bits.offset: bits.offset + bits.nbytes] == (
        bytes.fromhex("12000000" "01000000") + (2).to_bytes(8, "little") + b"\x78" + b"\x00" * 7)


NATIVE = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.bool_]


@pytest.mark.parametrize("dtype", NATIVE)
def test_numpy_tensor_dtypes_map_one_to_one(dtype):
    data = (np.arange(6).reshape(2, 3) % 2).astype(dtype)

    @dataclass
    class M:
        t: np.ndarray = field(default_factory=lambda: data)

    t, values = tensors_of(roundtrip(M()))["t"]
    assert t.dims == (2, 3) and values.dtype == np.dtype(dtype)
    assert np.array_equal(values, data)


@pytest.mark.parametrize("dtype, data", [
    ("bf16", [1.0, -2.5, 0.15625]), ("f8", [1.0, -0.75, 57344.0]), ("i4", [-8, 7, 0]),
    ("i2", [-2, 1, 0]), ("i1", [-1, 0, -1]), ("u4", [15, 0, 3]), ("u2", [3, 2, 1]),
    ("u1", [1, 0, 1]), ("t2", [-1, 0, 1]), ("t1", [1, -1, -1]),
])
def test_tensor_overrides(dtype, data):
    @dataclass
    class M:
        t: TensorSpec = field(default_factory=lambda: TensorSpec(data, dtype=dtype))
        a: Annotated[list, {"dtype": dtype}] = field(default_factory=lambda: list(data))

    found = tensors_of(roundtrip(M()))
    for name in ("t", "a"):
        t, values = found[name]
        assert t.dtype.name.lower() == dtype and values.tolist() == data


def test_uninitialized_scalar_named_and_dict_tensors():
    @dataclass
    class M:
        cache: UninitializedTensor = field(default_factory=lambda: UninitializedTensor("f16", (4, 8)))
        state: Annotated[Optional[np.ndarray], {"dtype": "i32", "shape": [3]}] = None
        s: np.ndarray = field(default_factory=lambda: np.array(2.5, dtype=np.float32))
        renamed: TensorSpec = field(default_factory=lambda: TensorSpec(np.ones(2, np.float32), name="w.0"))
        sizevars: dict = field(default_factory=lambda: {"n.layers": 2, "H": SizeVar(8)})
        tensors: dict = field(default_factory=lambda: {"attn.wq.0": np.eye(2, dtype=np.float32)})
        metadata: dict = field(default_factory=lambda: {"model.kind": "mlp"})

    f = roundtrip(M())
    assert f.sizevars == [("H", 8), ("n.layers", 2)]
    found = tensors_of(f)
    assert sorted(found) == ["attn.wq.0", "cache", "s", "state", "w.0"]
    cache, values = found["cache"]
    assert cache.dtype == V.F16 and cache.dims == (4, 8) and values is None
    assert cache.data_offset == 0 and cache.data_nbytes == 0
    assert found["state"][0].dtype == V.I32 and found["state"][0].dims == (3,)
    assert found["s"][0].dims == () and found["s"][1].item() == 2.5
    assert meta_of(f)["model.kind"].value == "mlp"


def test_quant_on_several_tensors_has_consistent_offsets():
    q1 = QuantParams("asymmetric", QuantScale.per_channel(1, [0.5, 0.25, 2.0]),
                     QuantZeroPoint.per_channel(1, [1, -2, 3]))
    q2 = QuantParams("asymmetric", QuantScale.per_tensor(0.1), QuantZeroPoint.per_tensor(-7))

    @dataclass
    class M:
        a: TensorSpec = field(default_factory=lambda: TensorSpec(np.arange(6, dtype=np.int8).reshape(2, 3), quant=q1))
        b: TensorSpec = field(default_factory=lambda: TensorSpec([[1, -1]], dtype="i4", quant=q2))
        c: np.ndarray = field(default_factory=lambda: np.ones(3, np.float32))

    f = roundtrip(M())
    found = tensors_of(f)
    a, b = found["a"][0], found["b"][0]
    assert a.quant.scales.tolist() == [0.5, 0.25, 2.0] and a.quant.zero_points.tolist() == [1, -2, 3]
    assert b.quant.zp_mode == 1 and b.quant.zero_points.tolist() == [-7]
    # per tensor in name order: data then quant, each 8-aligned
    assert a.quant_offset == a.data_offset + 8
    assert b.data_offset == a.quant_offset + a.quant_nbytes
    assert b.quant_offset == b.data_offset + 8
    assert found["c"][0].data_offset == b.quant_offset + b.quant_nbytes
    assert found["a"][1].tolist() == [[0, 1, 2], [3, 4, 5]] and found["b"][1].tolist() == [[1, -1]]


def test_version_1_roundtrip_and_rejects_quant():
    @dataclass
    class M:
        B: int = 4
        x: np.ndarray = field(default_factory=lambda: np.arange(4, dtype=np.int32))

    f = roundtrip(M(), version=1)
    assert f.version == 1 and f.tensors[0].quant is None

    @dataclass
    class Q:
        x: TensorSpec = field(default_factory=lambda: TensorSpec(
            np.arange(4, dtype=np.int8), quant=QuantParams("symmetric", QuantScale.per_tensor(1.0))))

    with pytest.raises(OinfError, match="version 1"):
        dataclass_to_oinf(Q(), version=1)


@pytest.mark.parametrize("make, message", [
    (lambda: TensorSpec([1, 16], dtype="i4"), "i4"),
    (lambda: TensorSpec([0, 1], dtype="t1"), "t1"),
    (lambda: TensorSpec([1.5], dtype="i32"), "whole numbers"),
    (lambda: TensorSpec([300], dtype="u8"), "u8"),
    (lambda: TensorSpec(np.ones((2, 3), np.int8), quant=QuantParams(
        "symmetric", QuantScale.per_tensor(1.0), QuantZeroPoint.per_tensor(1))), "symmetric"),
    (lambda: TensorSpec(np.ones((2, 3), np.int8), quant=QuantParams(
        "asymmetric", QuantScale.per_channel(1, [1.0, 2.0]))), "2 scales for axis 1"),
    (lambda: TensorSpec(np.ones((2, 3), np.int8), quant=QuantParams(
        "asymmetric", QuantScale.per_channel(0, [1.0, 2.0]), QuantZeroPoint.per_channel(1, [0, 0, 0]))),
     "same axis"),
])
def test_encoder_rejects_bad_tensors(make, message):
    @dataclass
    class M:
        t: TensorSpec = field(default_factory=make)

    with pytest.raises(OinfError, match=message):
        dataclass_to_oinf(M())


def test_encoder_rejects_bad_names_duplicates_and_sizevars():
    @dataclass
    class Dup:
        a: np.ndarray = field(default_factory=lambda: np.ones(1, np.float32))
        tensors: dict = field(default_factory=lambda: {"a": np.ones(1, np.float32)})

    @dataclass
    class BadName:
        tensors: dict = field(default_factory=lambda: {"a b": np.ones(1, np.float32)})

    @dataclass
    class BoolSize:
        B: int = True

    @dataclass
    class Negative:
        B: SizeVar = -1

    for cls, message in ((Dup, "duplicate"), (BadName, "must match"), (BoolSize, "int"),
                         (Negative, "u64")):
        with pytest.raises(OinfError, match=message):
            dataclass_to_oinf(cls())
    with pytest.raises(OinfError, match="scheme"):
        QuantParams("linear", QuantScale.per_tensor(1.0))
