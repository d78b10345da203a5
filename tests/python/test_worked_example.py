"""The encoder against bytes written out by hand from the format document."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from conftest import CONFORMANCE, KV_CACHE_DECODE, META_U8, QUANT_I8, two_sizevars
from dataclass_to_oinf import QuantParams, QuantScale, SizeVar, TensorSpec, dataclass_to_oinf


@dataclass
class KvCacheDecode:
    D: SizeVar = SizeVar(16)
    zero: np.ndarray = field(default_factory=lambda: np.zeros(16, dtype=np.float32))


def test_hand_written_example_is_216_bytes():
    assert len(KV_CACHE_DECODE) == 216


def test_kv_cache_decode_encodes_to_the_documented_bytes():
    assert dataclass_to_oinf(KvCacheDecode()) == KV_CACHE_DECODE


def test_kv_cache_decode_matches_the_original_file():
    with open(os.path.join(CONFORMANCE, "v2-models", "kv_cache_decode.oinf"), "rb") as handle:
        assert handle.read() == KV_CACHE_DECODE


def test_quantized_tensor_layout_data_then_quant():
    @dataclass
    class Model:
        q: TensorSpec = field(default_factory=lambda: TensorSpec(
            np.array([1, -2, 3, -4], dtype=np.int8),
            quant=QuantParams("symmetric", QuantScale.per_tensor(0.5))))

    assert dataclass_to_oinf(Model()) == QUANT_I8


def test_metadata_int_is_smallest_unsigned():
    @dataclass
    class Model:
        metadata: dict = field(default_factory=lambda: {"k": 7})

    assert dataclass_to_oinf(Model()) == META_U8


def test_sizevars_sorted_by_name():
    @dataclass
    class Model:
        E: int = 32
        D: int = 16

    assert dataclass_to_oinf(Model()) == two_sizevars(b"D", b"E")


def test_version_1_has_no_quant_fields():
    blob = dataclass_to_oinf(KvCacheDecode(), version=1)
    # header version, then the tensor entry shrinks by 16 bytes: 132 -> offset_data 136
    assert blob[5:9] == (1).to_bytes(4, "little")
    assert blob[53:61] == (136).to_bytes(8, "little")
    assert blob[116:132] == (64).to_bytes(8, "little") + (136).to_bytes(8, "little")
    assert len(blob) == 200
