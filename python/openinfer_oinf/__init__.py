"""OpenInfer .oinf tools: write model dataclasses as .oinf files, read and validate them.

    from openinfer_oinf import SizeVar, TensorSpec, write_oinf, read_oinf_file
"""
from .dataclass_io import dataclass_to_oinf, load_instance, write_oinf
from .encoder import MetadataItem, TensorItem, encode_array, encode_file, encode_metadata_value
from .reader import OinfFile, read_oinf, read_oinf_file
from .report import render
from .spec import (
    Bitset, QuantParams, QuantScale, QuantZeroPoint, ScalarValue, SizeVar, TensorSpec,
    UninitializedTensor,
)
from .vtypes import OinfError, ValueType

__all__ = [
    "Bitset", "MetadataItem", "OinfError", "OinfFile", "QuantParams", "QuantScale",
    "QuantZeroPoint", "ScalarValue", "SizeVar", "TensorItem", "TensorSpec",
    "UninitializedTensor", "ValueType", "dataclass_to_oinf", "encode_array", "encode_file",
    "encode_metadata_value", "load_instance", "read_oinf", "read_oinf_file", "render",
    "write_oinf",
]
