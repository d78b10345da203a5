"""Model dataclass -> .oinf: field classification (format section 2.10) and validation.

The original validated instances through pydantic; we check each field against its
annotation ourselves (numpy is the only dependency), with the few coercions a JSON input needs.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import os
import sys
import types
import typing
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .encoder import MetadataItem, TensorItem, encode_array, encode_file, encode_metadata_value, encode_quant
from .spec import ScalarValue, SizeVar, TensorSpec, UninitializedTensor, _check_u64
from .vtypes import ELEMENT_TYPES, OinfError, ValueType, check_name, resolve_dtype

_DICT_ATTRS = ("sizevars", "metadata", "tensors")
_UNION_TYPES = (typing.Union, getattr(types, "UnionType", typing.Union))  # `X | Y` is 3.10+
Meta = Dict[str, Any]


# ---------------------------------------------------------------------------- annotations

def _annotated_meta(annotation: Any, field_meta: Any) -> Meta:
    """Collect `Annotated[..., {"dtype": ...}, "tensor"]` extras and `field(metadata=...)`."""
    meta: Meta = {}
    if typing.get_origin(annotation) is typing.Annotated:
        for extra in typing.get_args(annotation)[1:]:
            if isinstance(extra, str):
                meta[extra] = True
            elif isinstance(extra, dict):
                meta.update(extra)
    if field_meta:
        meta.update(field_meta)
    return meta


def _members(annotation: Any) -> List[Any]:
    """The alternatives an annotation allows: Annotated stripped, unions flattened."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in _UNION_TYPES:
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _is_sizevar_annotation(annotation: Any) -> bool:
    """`int`, `SizeVar`, `int | SizeVar` (None allowed besides) declare a size variable."""
    members = [m for m in _members(annotation) if m is not type(None)]
    return bool(members) and all(m in (int, SizeVar) for m in members)


# ---------------------------------------------------------------------------- validation

def _coerce_to(member: Any, value: Any) -> Tuple[bool, Any]:
    """(matched, value) for one annotation member; lax like pydantic for JSON inputs."""
    if member is Any or member is typing.Any:
        return True, value
    origin = typing.get_origin(member)
    if origin is not None:
        return (isinstance(origin, type) and isinstance(value, origin)), value
    if not isinstance(member, type):
        return True, value           # forward references and other exotic hints: trust them
    if member in (int, SizeVar) and isinstance(value, SizeVar):
        return True, value
    if member in (int, SizeVar):
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        return ok, value
    if member is float and isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return True, float(value)
    if isinstance(value, member):
        return True, value
    if member is np.ndarray and isinstance(value, list):
        return True, np.asarray(value)
    if member is TensorSpec and isinstance(value, (list, np.ndarray)):
        return True, TensorSpec(np.asarray(value))
    return False, value


def _validate_field(name: str, value: Any, annotation: Any, meta: Meta) -> Any:
    """Check one field value against its annotation; return the (possibly coerced) value."""
    members = _members(annotation)
    if value is None:
        if type(None) in members or ("dtype" in meta and "shape" in meta):
            return None
        raise OinfError(f"field '{name}' is None but its annotation does not allow None")
    for member in members:
        if member is type(None):
            continue
        matched, coerced = _coerce_to(member, value)
        if matched:
            return coerced
    raise OinfError(f"field '{name}': expected {annotation}, got {type(value).__name__}")


def _type_hints(cls: type) -> Dict[str, Any]:
    """Resolved annotations, keeping Annotated extras.

    With `from __future__ import annotations` every annotation is a string; a class defined
    inside a function may name locals that cannot be resolved later. Rather than silently
    losing `Annotated` metadata (a dtype override, a sizevar mark) we report the field.
    """
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # noqa: BLE001 - resolve field by field below for a precise message
        pass
    module_globals = vars(sys.modules.get(cls.__module__, sys))
    hints: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not isinstance(f.type, str):
            hints[f.name] = f.type
            continue
        try:
            hints[f.name] = eval(f.type, dict(module_globals), {})  # noqa: S307 - annotation text
        except Exception as exc:  # noqa: BLE001
            raise OinfError(f"field '{f.name}': cannot resolve annotation {f.type!r} ({exc}); "
                            "define the dataclass at module level") from None
    return hints


# ---------------------------------------------------------------------------- classification

class _Collected:
    """What a dataclass holds, classified but not yet encoded."""

    def __init__(self) -> None:
        self.sizevars: List[Tuple[str, int]] = []
        self.metadata: List[Tuple[str, Any, Meta]] = []
        self.tensors: List[Tuple[str, Any, Meta]] = []

    def add_sizevar(self, name: str, value: Any) -> None:
        """Size variables are u64; a SizeVar wrapper is unwrapped."""
        raw = value.value if isinstance(value, SizeVar) else value
        self.sizevars.append((check_name(name, "sizevar"), _check_u64(raw, f"sizevar '{name}'")))


def _is_tensor(value: Any, meta: Meta) -> bool:
    """Rule 4 of section 2.10: wrappers, arrays, meta `tensor`, lists with a dtype, or None
    with dtype and shape."""
    if isinstance(value, (TensorSpec, UninitializedTensor, np.ndarray)) or meta.get("tensor"):
        return True
    if isinstance(value, (list, tuple)) and "dtype" in meta:
        return True
    return value is None and "dtype" in meta and "shape" in meta


def _classify(out: _Collected, name: str, value: Any, annotation: Any, meta: Meta) -> None:
    """Sort one field into size variables, metadata or tensors."""
    if isinstance(value, SizeVar) or meta.get("sizevar") or _is_sizevar_annotation(annotation):
        out.add_sizevar(name, value)
    elif isinstance(value, ScalarValue):
        out.metadata.append((name, value, meta))
    elif _is_tensor(value, meta):
        out.tensors.append((name, value, meta))
    else:
        out.metadata.append((name, value, meta))


def _merge_dicts(out: _Collected, instance: Any) -> None:
    """Rule 1: dict attributes `sizevars`, `metadata`, `tensors` supply names that are not
    Python identifiers (`attn.wq.0`)."""
    for name, value in (getattr(instance, "sizevars", None) or {}).items():
        out.add_sizevar(name, value)
    for name, value in (getattr(instance, "metadata", None) or {}).items():
        out.metadata.append((name, value, {}))
    for name, value in (getattr(instance, "tensors", None) or {}).items():
        out.tensors.append((name, value, {}))


def collect(instance: Any) -> _Collected:
    """Validate every field of a dataclass instance and classify it."""
    if not dataclasses.is_dataclass(instance) or isinstance(instance, type):
        raise OinfError("expected a dataclass instance")
    hints = _type_hints(type(instance))
    out = _Collected()
    for f in dataclasses.fields(instance):
        value = getattr(instance, f.name)
        if f.name in _DICT_ATTRS and isinstance(value, dict):
            continue
        annotation = hints.get(f.name, f.type)
        meta = _annotated_meta(annotation, f.metadata)
        value = _validate_field(f.name, value, annotation, meta)
        _classify(out, check_name(f.name, "field"), value, annotation, meta)
    for attr in _DICT_ATTRS:
        if getattr(instance, attr, None) is not None and not isinstance(getattr(instance, attr), dict):
            raise OinfError(f"attribute '{attr}' must be a dict")
    _merge_dicts(out, instance)
    return out


# ---------------------------------------------------------------------------- encoding

def _metadata_item(key: str, value: Any, meta: Meta) -> MetadataItem:
    """Encode one metadata value, honouring ScalarValue and Annotated dtype overrides."""
    override = resolve_dtype(meta.get("dtype"))
    if isinstance(value, ScalarValue):
        override = resolve_dtype(value.dtype) or override
        value = value.value
    try:
        vtype, payload = encode_metadata_value(value, override)
    except OinfError as exc:
        raise OinfError(f"metadata '{key}': {exc}") from None
    return MetadataItem(check_name(key, "metadata"), vtype, payload)


def _declared(name: str, vtype: Optional[ValueType], shape: Any) -> TensorItem:
    """A tensor entry without data: only its element type and dims are stored."""
    if vtype not in ELEMENT_TYPES:
        raise OinfError(f"tensor '{name}': declared without data needs an element dtype")
    if shape is None:
        raise OinfError(f"tensor '{name}': declared without data needs a shape")
    dims = tuple(_check_u64(d, f"tensor '{name}' dim") for d in shape)
    return TensorItem(name, vtype, dims, None)


def _tensor_item(key: str, value: Any, meta: Meta) -> TensorItem:
    """Encode one tensor: data, dtype, dims and (v2) its quant payload."""
    override = resolve_dtype(meta.get("dtype"))
    if isinstance(value, UninitializedTensor):
        return _declared(value.name or key, resolve_dtype(value.dtype), value.shape)
    if value is None:
        return _declared(key, override, meta.get("shape"))
    quant = None
    if isinstance(value, TensorSpec):
        override = resolve_dtype(value.dtype) or override
        key, quant, value = value.name or key, value.quant, value.data
    try:
        vtype, dims, raw = encode_array(value, override)
    except OinfError as exc:
        raise OinfError(f"tensor '{key}': {exc}") from None
    qbytes = encode_quant(key, quant, dims) if quant is not None else None
    return TensorItem(key, vtype, dims, raw, qbytes)


def dataclass_to_oinf(instance: Any, version: int = 2) -> bytes:
    """Encode a model dataclass instance as the bytes of a .oinf file."""
    found = collect(instance)
    metadata = [_metadata_item(k, v, m) for k, v, m in found.metadata]
    tensors = [_tensor_item(k, v, m) for k, v, m in found.tensors]
    return encode_file(found.sizevars, metadata, tensors, version=version)


def write_oinf(instance: Any, path: str, version: int = 2) -> None:
    """Encode `instance` and write it to `path` (v2 by default; v1 on request, no quant)."""
    payload = dataclass_to_oinf(instance, version=version)
    with open(path, "wb") as handle:
        handle.write(payload)


# ---------------------------------------------------------------------------- CLI helpers

def _import_module(spec: str) -> Any:
    """`package.module` from the current directory, or a path to a `.py` file."""
    if spec.endswith(".py"):
        module_name = os.path.splitext(os.path.basename(spec))[0]
        loader_spec = importlib.util.spec_from_file_location(module_name, spec)
        if loader_spec is None or loader_spec.loader is None:
            raise OinfError(f"cannot load {spec}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        loader_spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(spec)


def load_instance(target: str, json_path: Optional[str] = None) -> Any:
    """Resolve `module:ClassOrInstance`; a class is built from the JSON file's fields (or its
    defaults), an instance gets the JSON fields replaced."""
    module_name, sep, obj_name = target.rpartition(":")
    if not sep or not module_name or not obj_name:
        raise OinfError(f"--input must look like module:ClassOrInstance, got {target!r}")
    obj = getattr(_import_module(module_name), obj_name, None)
    if obj is None or not dataclasses.is_dataclass(obj):
        raise OinfError(f"{target} is not a dataclass or dataclass instance")
    fields: Dict[str, Any] = {}
    if json_path:
        with open(json_path, "r", encoding="utf-8") as handle:
            fields = json.load(handle)
        if not isinstance(fields, dict):
            raise OinfError(f"{json_path} must hold a JSON object of field values")
    try:
        return obj(**fields) if isinstance(obj, type) else dataclasses.replace(obj, **fields)
    except TypeError as exc:
        raise OinfError(f"cannot build {target}: {exc}") from None
