#!/usr/bin/env python3
"""convert.py - turns ONNX's node tests into OpenInfer cases.

For each test directory (model.onnx + test_data_set_0/input_*.pb, output_*.pb) whose ops
all map onto ops of our op table (kernels/op_list.h), it writes

    OUT/<test>.oinf   the inputs as tensors `input.<var>`, ONNX's expected outputs as
                      `expected.<var>`, and any literal constants a mapping needs
    OUT/<test>.json   the graph (docs/graph-json.md): inputs are dynamic vars (run_onnx
                      inserts them), outputs and intermediates volatile vars

and lists it in OUT/cases.tsv. A test it cannot convert goes to OUT/unsupported.tsv with the
reason; `mapped` says whether its op is one we claim (then run_onnx counts it as a failure
unless tests/onnx/expected_failures.txt lists it) or one without a mapping yet.

ONNX inputs whose values our ops take as parameters (Clip's min/max, reduction axes) are read
from the test data and become parameters; the graph never sees them as tensors.

    convert.py --data DIR --out DIR [--ops kernels/op_list.h] [--only REGEX]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
from openinfer_oinf import TensorItem, encode_array, encode_file  # noqa: E402
from openinfer_oinf.vtypes import resolve_dtype  # noqa: E402


class Unsupported(Exception):
    """The test needs something our ops cannot express; the message says what."""


# ONNX element types -> our dtype names (the ones we have; the rest are unsupported).
ONNX_DTYPES = {
    TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64", TensorProto.FLOAT16: "f16",
    TensorProto.BFLOAT16: "bf16", TensorProto.BOOL: "bool",
    TensorProto.INT8: "i8", TensorProto.INT16: "i16", TensorProto.INT32: "i32", TensorProto.INT64: "i64",
    TensorProto.UINT8: "u8", TensorProto.UINT16: "u16", TensorProto.UINT32: "u32", TensorProto.UINT64: "u64",
}
FLOAT_DTYPES = {"f16", "bf16", "f32", "f64"}
NUMPY_TO_DTYPE = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
                  np.dtype(np.bool_): "bool", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
                  np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8",
                  np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64"}


def onnx_dtype(elem_type: int) -> str:
    if elem_type not in ONNX_DTYPES:
        raise Unsupported(f"dtype {TensorProto.DataType.Name(elem_type)} has no OpenInfer dtype")
    return ONNX_DTYPES[elem_type]


# ---------------------------------------------------------------------------- the op table

def read_op_table(path: str) -> Dict[str, set]:
    """Our op names and their parameter names, from kernels/op_list.h (the single source)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    params_at = text.find("#define OI_PARAM_LIST")
    ops = {m.group(1): set() for m in re.finditer(r"^\s*X\((\w+),", text[:params_at], re.M)}
    for m in re.finditer(r"^\s*X\((\w+),\s*(\w+),", text[params_at:], re.M):
        ops.setdefault(m.group(1), set()).add(m.group(2))
    return ops


# ---------------------------------------------------------------------------- graph building

@dataclass
class Value:
    """An ONNX value as our graph sees it."""
    name: str                      # our variable name (an identifier)
    dtype: str
    dims: Tuple[int, ...]
    const: Optional[np.ndarray] = None   # known at conversion time (test input or Constant)
    source: str = "computed"       # "input" (a graph input), "const" or "computed"


def attr(name: str, value, kind: str) -> dict:
    """One op setting in the graph JSON's form."""
    if kind == "float":
        v = float(value)
        value = "nan" if np.isnan(v) else ("inf" if v == np.inf else ("-inf" if v == -np.inf else v))
    elif kind == "int":
        value = int(value)
    elif kind == "bool":
        value = bool(value)
    elif kind == "int_list":
        value = [int(v) for v in value]
    return {"name": name, "type": kind, "value": value}


def scalar_attr(name: str, value, dtype: str) -> dict:
    """A SCALAR parameter in the input's own kind: integer dtypes take integers."""
    if dtype in FLOAT_DTYPES:
        return attr(name, value, "float")
    if dtype == "bool":
        return attr(name, value, "bool")
    return attr(name, value, "int")


class Case:
    """The graph and the tensors of one converted test."""

    def __init__(self, test: str, ops: Dict[str, set]):
        self.test = test
        self.ops = ops
        self.vars: List[dict] = []        # declarations, in order
        self.declared: Dict[str, Value] = {}
        self.nodes: List[dict] = []
        self.tensors: Dict[str, Tuple[np.ndarray, str]] = {}
        self.taken: set = set()
        self.our_ops: List[str] = []
        self.opset = 0   # the default domain's opset of the model

    def fresh(self, hint: str) -> str:
        """A new identifier derived from an ONNX name ("x", "Clip_test.min:0" -> "Clip_test_min_0")."""
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit():
            base = "v_" + base
        name, i = base, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name

    def src(self, text: str) -> dict:
        return {"file": f"{self.test}/model.onnx", "line": 0, "text": text}

    def declare(self, v: Value, kind: str, ref: Optional[str] = None) -> None:
        if v.name in self.declared:
            return
        var = {"name": v.name, "kind": kind, "dtype": v.dtype, "dims": [str(d) for d in v.dims]}
        if ref:
            var["ref"] = ref
        var["src"] = self.src(f"{kind} {v.name}: {v.dtype}{list(v.dims)}")
        self.vars.append(var)
        self.declared[v.name] = v

    def use(self, v: Value) -> Value:
        """`v` is read by an op: graph inputs become dynamic vars (inserted by run_onnx),
        known constants constant vars loaded from the model."""
        if v.name not in self.declared:
            if v.source == "input":
                self.declare(v, "dynamic")
                self.tensors[f"input.{v.name}"] = (v.const, v.dtype)
            elif v.source == "const":
                self.declare(v, "constant", ref=f"const.{v.name}")
                self.tensors[f"const.{v.name}"] = (v.const, v.dtype)
            else:
                raise Unsupported(f"internal: {v.name} is read before it is written")
        return v

    def op(self, op: str, inputs: Sequence[Value], attrs: Sequence[dict], out: Value) -> Value:
        if op not in self.ops:
            raise Unsupported(f"op {op} is not in the op table")
        ins = [self.use(v) for v in inputs]
        self.declare(out, "volatile")
        index = len(self.nodes)
        args = ", ".join([v.name for v in ins] + [f"{a['name']}={a['value']}" for a in attrs])
        self.nodes.append({
            "index": index, "uuid": f"00000000-0000-4000-8000-{index:012x}", "kind": "op", "op": op,
            "inputs": [{"name": v.name} for v in ins], "attrs": list(attrs), "output": out.name,
            "src": self.src(f"op {op}({args}) >> {out.name}")})
        self.our_ops.append(op)
        return out

    def constant(self, array: np.ndarray, dtype: str, hint: str = "c") -> Value:
        return Value(self.fresh(hint), dtype, tuple(array.shape), np.asarray(array), "const")

    def graph_json(self) -> str:
        """The graph JSON, one var or node per line."""
        ret = {"index": len(self.nodes), "uuid": f"00000000-0000-4000-8000-{len(self.nodes):012x}",
               "kind": "return", "src": self.src("return")}
        nodes = [json.dumps(n) for n in self.nodes + [ret]]
        head = {"format": "openinfer-graph", "version": 1, "name": re.sub(r"\W", "_", self.test),
                "next_index": len(nodes)}
        lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
        lines += ['  "vars": [', ",\n".join("    " + json.dumps(v) for v in self.vars), "  ],"]
        lines += ['  "blocks": [{"name": "entry", "src": ' + json.dumps(self.src("block entry")) + ', "nodes": [',
                  ",\n".join("    " + n for n in nodes), "  ]}]", "}"]
        return "\n".join(lines) + "\n"

    def oinf_bytes(self) -> bytes:
        items = []
        for name, (array, dtype) in self.tensors.items():
            vt, dims, data = encode_array(np.asarray(array), resolve_dtype(dtype))
            items.append(TensorItem(name, vt, dims, data))
        return encode_file({}, [], items)


class NodeCtx:
    """What a mapping sees of one ONNX node: its attributes, inputs and output slots."""

    def __init__(self, case: Case, node: onnx.NodeProto, inputs: List[Optional[Value]], outputs: List[Value]):
        self.case = case
        self.node = node
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        self.opset = case.opset

    def attr(self, name: str, default=None):
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def has(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def input(self, i: int) -> Value:
        if not self.has(i):
            raise Unsupported(f"{self.node.op_type}: input {i} is missing")
        return self.inputs[i]

    def const(self, i: int) -> np.ndarray:
        """An input our op takes as a parameter: its value must be known now."""
        v = self.input(i)
        if v.const is None:
            raise Unsupported(f"{self.node.op_type}: input {i} becomes a parameter but is computed at run time")
        return v.const

    def out(self, i: int = 0) -> Value:
        return self.outputs[i]

    def temp(self, dtype: str, dims: Sequence[int], hint: str = "t") -> Value:
        return Value(self.case.fresh(hint), dtype, tuple(int(d) for d in dims))

    def emit(self, op: str, inputs: Sequence[Value], attrs: Sequence[dict] = (), out: Optional[Value] = None,
             dtype: Optional[str] = None, dims: Optional[Sequence[int]] = None) -> Value:
        """One of our ops; without `out` it writes a new temporary of `dtype`/`dims`
        (default: the first input's dtype, the broadcast of the inputs' dims)."""
        if out is None:
            dtype = dtype or inputs[0].dtype
            dims = dims if dims is not None else np.broadcast_shapes(*[v.dims for v in inputs])
            out = self.temp(dtype, dims)
        return self.case.op(op, inputs, attrs, out)


# ---------------------------------------------------------------------------- mappings

def identity(ctx: NodeCtx, v: Value, out: Value) -> Value:
    """x unchanged: max(x, x) (exact, NaN stays NaN); or(x, x) for bool."""
    return ctx.emit("or" if v.dtype == "bool" else "max", [v, v], out=out)


def unary(op: str) -> Callable[[NodeCtx], None]:
    def convert(ctx: NodeCtx) -> None:
        ctx.emit(op, [ctx.input(0)], out=ctx.out())
    return convert


def binary(op: str) -> Callable[[NodeCtx], None]:
    def convert(ctx: NodeCtx) -> None:
        ctx.emit(op, [ctx.input(0), ctx.input(1)], out=ctx.out())
    return convert


def variadic(op: str) -> Callable[[NodeCtx], None]:
    """Max/Min/Sum over 1..N inputs: a chain of the binary op, left to right."""
    def convert(ctx: NodeCtx) -> None:
        values = [ctx.input(i) for i in range(len(ctx.inputs))]
        if len(values) == 1:
            identity(ctx, values[0], ctx.out())
            return
        acc = values[0]
        for i, v in enumerate(values[1:], start=2):
            acc = ctx.emit(op, [acc, v], out=ctx.out() if i == len(values) else None)
    return convert


def convert_mean(ctx: NodeCtx) -> None:
    """(x0 + ... + xn-1) / n, the order ONNX's reference sums in."""
    n = len(ctx.inputs)
    if n == 1:
        identity(ctx, ctx.input(0), ctx.out())
        return
    total = variadic_sum(ctx)
    count = ctx.case.constant(np.array(n, dtype=np.float64), ctx.out().dtype, "count")
    ctx.emit("div", [total, count], out=ctx.out())


def variadic_sum(ctx: NodeCtx) -> Value:
    acc = ctx.input(0)
    for i in range(1, len(ctx.inputs)):
        acc = ctx.emit("add", [acc, ctx.input(i)])
    return acc


def convert_sign(ctx: NodeCtx) -> None:
    """ONNX's Sign keeps the input dtype; ours gives i8, so cast back."""
    x = ctx.input(0)
    if x.dtype == "i8":
        ctx.emit("sign", [x], out=ctx.out())
        return
    s = ctx.emit("sign", [x], dtype="i8")
    ctx.emit("cast", [s], [attr("to", x.dtype, "dtype")], out=ctx.out())


def convert_clip(ctx: NodeCtx) -> None:
    """Clip's min/max (inputs since opset 11, attributes before) -> clamp's parameters."""
    x = ctx.input(0)
    attrs = []
    for i, name in ((1, "min"), (2, "max")):
        if ctx.has(i):
            value = ctx.const(i)
            attrs.append(scalar_attr(name, value.reshape(-1)[0].item(), x.dtype))
        elif name in ctx.attrs:
            attrs.append(scalar_attr(name, ctx.attr(name), x.dtype))
    ctx.emit("clamp", [x], attrs, out=ctx.out())


def convert_mod(ctx: NodeCtx) -> None:
    """fmod=1: truncated remainder (our rem). fmod=0: the sign follows the divisor,
    a - floor_div(a, b) * b, exact for integers."""
    a, b = ctx.input(0), ctx.input(1)
    if a.dtype in FLOAT_DTYPES:
        raise Unsupported("Mod on floats: we have no float remainder op")
    if ctx.attr("fmod", 0):
        ctx.emit("rem", [a, b], out=ctx.out())
        return
    q = ctx.emit("floor_div", [a, b])
    qb = ctx.emit("mul", [q, b])
    ctx.emit("sub", [a, qb], out=ctx.out())


def convert_isinf(ctx: NodeCtx) -> None:
    """detect_positive/detect_negative: is_inf, narrowed by the sign bit."""
    x = ctx.input(0)
    pos, neg = ctx.attr("detect_positive", 1), ctx.attr("detect_negative", 1)
    if pos and neg:
        ctx.emit("is_inf", [x], out=ctx.out())
        return
    inf = ctx.emit("is_inf", [x], dtype="bool")
    sign = ctx.emit("is_neg", [x], dtype="bool")
    if pos:
        sign = ctx.emit("not", [sign])
    elif not neg:
        raise Unsupported("IsInf detecting neither sign")
    ctx.emit("and", [inf, sign], out=ctx.out())


def convert_leaky_relu(ctx: NodeCtx) -> None:
    alpha = float(np.float32(ctx.attr("alpha", 0.01)))
    ctx.emit("relu", [ctx.input(0)], [attr("negative_slope", alpha, "float")], out=ctx.out())


def convert_where(ctx: NodeCtx) -> None:
    """Where(cond, x, y) -> where(cond, x, y), or filter(x, y, cond) without a `where` op."""
    cond, x, y = ctx.input(0), ctx.input(1), ctx.input(2)
    if "where" in ctx.case.ops:
        ctx.emit("where", [cond, x, y], out=ctx.out())
    else:
        ctx.emit("filter", [x, y, cond], out=ctx.out())


def convert_cast(ctx: NodeCtx) -> None:
    to = onnx_dtype(ctx.attr("to"))
    ctx.emit("cast", [ctx.input(0)], [attr("to", to, "dtype")], out=ctx.out())


def convert_cast_like(ctx: NodeCtx) -> None:
    """CastLike(x, like): the second input only gives the target dtype."""
    like = ctx.input(1)
    ctx.emit("cast", [ctx.input(0)], [attr("to", like.dtype, "dtype")], out=ctx.out())


def convert_arg(op: str) -> Callable[[NodeCtx], None]:
    def convert(ctx: NodeCtx) -> None:
        attrs = [attr("axis", ctx.attr("axis", 0), "int"), attr("keepdims", ctx.attr("keepdims", 1), "bool"),
                 attr("select_first", not ctx.attr("select_last_index", 0), "bool")]
        ctx.emit(op, [ctx.input(0)], attrs, out=ctx.out())
    return convert


def reduce_axes(ctx: NodeCtx, rank: int) -> Optional[List[int]]:
    """The axes to reduce (attribute before opset 13/18, input 1 after); None: no-op."""
    axes = ctx.attr("axes")
    if axes is None and ctx.has(1):
        axes = [int(a) for a in ctx.const(1).reshape(-1)]
    if not axes:
        return None if ctx.attr("noop_with_empty_axes", 0) else list(range(rank))
    return [int(a) for a in axes]


def reduced_dims(dims: Sequence[int], axes: Sequence[int], keepdims: bool) -> Tuple[int, ...]:
    axes = {a % len(dims) for a in axes} if dims else set()
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(dims))
    return tuple(d for i, d in enumerate(dims) if i not in axes)


def convert_reduce(op: str, pre: Sequence[str] = (), post: Sequence[str] = ()) -> Callable[[NodeCtx], None]:
    """ReduceX: optional elementwise ops before ("abs" for L1, "square" for L2) and after
    ("sqrt", "log") our reduction over `axes` with `keepdims`."""
    def convert(ctx: NodeCtx) -> None:
        x = ctx.input(0)
        axes = reduce_axes(ctx, len(x.dims))
        keepdims = bool(ctx.attr("keepdims", 1))
        if axes is None:   # noop_with_empty_axes: the input unchanged (ONNX skips pre/post too)
            identity(ctx, x, ctx.out())
            return
        for p in pre:
            x = ctx.emit("mul", [x, x]) if p == "square" else ctx.emit(p, [x])
        dims = reduced_dims(x.dims, axes, keepdims)
        attrs = [attr("axes", axes, "int_list"), attr("keepdims", keepdims, "bool")]
        y = ctx.emit(op, [x], attrs, out=None if post else ctx.out(), dims=dims)
        for i, p in enumerate(post):
            y = ctx.emit(p, [y], out=ctx.out() if i == len(post) - 1 else None)
    return convert


def int_list(values: np.ndarray) -> List[int]:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def convert_pow(ctx: NodeCtx) -> None:
    """Pow(x, y) keeps x's dtype. Our pow takes one float dtype: an exponent of another dtype
    is cast to x's; an integer base computes in f64 and is cast back (truncating, exact for
    the integer powers f64 holds)."""
    x, y = ctx.input(0), ctx.input(1)
    work = x.dtype if x.dtype in FLOAT_DTYPES else "f64"
    if x.dtype != work:
        x = ctx.emit("cast", [x], [attr("to", work, "dtype")], dtype=work)
    if y.dtype != work:
        y = ctx.emit("cast", [y], [attr("to", work, "dtype")], dtype=work)
    if work == ctx.out().dtype:
        ctx.emit("pow", [x, y], out=ctx.out())
    else:
        ctx.emit("cast", [ctx.emit("pow", [x, y])], [attr("to", ctx.out().dtype, "dtype")], out=ctx.out())


def convert_reshape(ctx: NodeCtx) -> None:
    attrs = [attr("shape", int_list(ctx.const(1)), "int_list")]
    if ctx.attr("allowzero", 0):
        attrs.append(attr("allowzero", True, "bool"))
    ctx.emit("reshape", [ctx.input(0)], attrs, out=ctx.out())


def convert_flatten(ctx: NodeCtx) -> None:
    """Flatten(axis) -> reshape to [prod(dims[:axis]), prod(dims[axis:])]."""
    x = ctx.input(0)
    axis = ctx.attr("axis", 1)
    axis = axis + len(x.dims) if axis < 0 else axis
    shape = [int(np.prod(x.dims[:axis], dtype=np.int64)), int(np.prod(x.dims[axis:], dtype=np.int64))]
    ctx.emit("reshape", [x], [attr("shape", shape, "int_list")], out=ctx.out())


def convert_transpose(ctx: NodeCtx) -> None:
    x = ctx.input(0)
    perm = ctx.attr("perm") or list(range(len(x.dims)))[::-1]   # ONNX's default: reverse
    ctx.emit("transpose", [x], [attr("perm", perm, "int_list")], out=ctx.out())


def axes_from(ctx: NodeCtx, i: int) -> Optional[List[int]]:
    """`axes` as an attribute (older opsets) or as input i (opset 13 on)."""
    axes = ctx.attr("axes")
    if axes is None and ctx.has(i):
        axes = int_list(ctx.const(i))
    return None if axes is None else [int(a) for a in axes]


def convert_squeeze(op: str) -> Callable[[NodeCtx], None]:
    def convert(ctx: NodeCtx) -> None:
        axes = axes_from(ctx, 1)
        attrs = [attr("axes", axes, "int_list")] if axes is not None else []
        ctx.emit(op, [ctx.input(0)], attrs, out=ctx.out())
    return convert


def convert_slice(ctx: NodeCtx) -> None:
    """Slice(data, starts, ends, axes?, steps?): all four become parameters."""
    attrs = [attr("starts", int_list(ctx.const(1)), "int_list"), attr("ends", int_list(ctx.const(2)), "int_list")]
    for i, name in ((3, "axes"), (4, "steps")):
        if ctx.has(i):
            attrs.append(attr(name, int_list(ctx.const(i)), "int_list"))
    ctx.emit("slice", [ctx.input(0)], attrs, out=ctx.out())


def convert_split(ctx: NodeCtx) -> None:
    """Our split has one output: one node per ONNX output, `index` picks the piece."""
    x = ctx.input(0)
    axis = ctx.attr("axis", 0)
    sizes = ctx.attr("split")
    if sizes is None and ctx.has(1):
        sizes = int_list(ctx.const(1))
    pieces = [attr("sizes", sizes, "int_list")] if sizes is not None else [attr("num", len(ctx.outputs), "int")]
    for i, out in enumerate(ctx.outputs):
        ctx.emit("split", [x], [attr("axis", axis, "int")] + pieces + [attr("index", i, "int")], out=out)


def convert_concat(ctx: NodeCtx) -> None:
    ins = [ctx.input(i) for i in range(len(ctx.inputs))]
    ctx.emit("concat", ins, [attr("axis", ctx.attr("axis"), "int")], out=ctx.out())


def convert_gather(ctx: NodeCtx) -> None:
    ctx.emit("gather", [ctx.input(0), ctx.input(1)], [attr("axis", ctx.attr("axis", 0), "int")], out=ctx.out())


def convert_pad(ctx: NodeCtx) -> None:
    """Pad(data, pads, constant_value?, axes?) with `mode`."""
    x = ctx.input(0)
    pads = ctx.attr("pads")
    if pads is None:
        pads = int_list(ctx.const(1))
    attrs = [attr("pads", pads, "int_list"), attr("mode", ctx.attr("mode", "constant"), "string")]
    if ctx.has(2):
        attrs.append(scalar_attr("value", ctx.const(2).reshape(-1)[0].item(), x.dtype))
    elif "value" in ctx.attrs:
        attrs.append(scalar_attr("value", ctx.attr("value"), x.dtype))
    if ctx.has(3):
        attrs.append(attr("axes", int_list(ctx.const(3)), "int_list"))
    ctx.emit("pad", [x], attrs, out=ctx.out())


def convert_bitshift(ctx: NodeCtx) -> None:
    """BitShift(x, y, direction): our shl/shr shift every element by one `bits` parameter,
    so y must be a known tensor holding a single amount."""
    amounts = np.unique(ctx.const(1))
    if amounts.size != 1:
        raise Unsupported("BitShift by per-element amounts: shl/shr take one `bits` for the whole tensor")
    op = "shl" if ctx.attr("direction") == "LEFT" else "shr"
    ctx.emit(op, [ctx.input(0)], [attr("bits", int(amounts[0]), "int")], out=ctx.out())


def convert_with_list(op: str, param: str) -> Callable[[NodeCtx], None]:
    """Expand(x, shape) -> expand(shape=...), Tile(x, repeats) -> tile(repeats=...)."""
    def convert(ctx: NodeCtx) -> None:
        ctx.emit(op, [ctx.input(0)], [attr(param, int_list(ctx.const(1)), "int_list")], out=ctx.out())
    return convert


# ---- normalization, selection, convolution and pooling

def convert_softmax(op: str) -> Callable[[NodeCtx], None]:
    """Softmax/LogSoftmax from opset 13 (one axis; before 13 ONNX flattened to 2-D)."""
    def convert(ctx: NodeCtx) -> None:
        if ctx.opset < 13:
            raise Unsupported(f"{ctx.node.op_type} before opset 13 normalizes a flattened 2-D view")
        ctx.emit(op, [ctx.input(0)], [attr("axis", ctx.attr("axis", -1), "int")], out=ctx.out())
    return convert


def convert_layer_norm(ctx: NodeCtx) -> None:
    """LayerNormalization -> layer_norm for Y. The optional Mean and InvStdDev outputs are
    computed as ONNX's reference does: mean, mean((x - mean)^2), 1 / sqrt(var + epsilon)."""
    x = ctx.input(0)
    axis, eps = ctx.attr("axis", -1), f32_attr(ctx, "epsilon", 1e-5)
    if ctx.attr("stash_type", 1) != 1:
        raise Unsupported("LayerNormalization with stash_type other than float32")
    ins = [x, ctx.input(1)] + ([ctx.input(2)] if ctx.has(2) else [])
    ctx.emit("layer_norm", ins, [attr("axis", axis, "int"), attr("epsilon", eps, "float")], out=ctx.out(0))
    if len(ctx.outputs) < 2:
        return
    axes = list(range(axis % len(x.dims), len(x.dims)))
    stats = [attr("axes", axes, "int_list"), attr("keepdims", True, "bool")]
    dims = reduced_dims(x.dims, axes, True)
    mean = ctx.emit("mean_axis", [x], stats, out=ctx.out(1), dims=dims)
    if len(ctx.outputs) < 3:
        return
    d = ctx.emit("sub", [x, mean])
    var = ctx.emit("mean_axis", [ctx.emit("mul", [d, d])], stats, dims=dims)
    std = ctx.emit("sqrt", [ctx.emit("add", [var, literal(ctx, eps, x.dtype, "epsilon")])])
    ctx.emit("recip", [std], out=ctx.out(2))


def convert_batch_norm(ctx: NodeCtx) -> None:
    """BatchNormalization in inference mode (training_mode computes batch statistics)."""
    if ctx.attr("training_mode", 0):
        raise Unsupported("BatchNormalization in training mode (batch statistics, running-mean outputs)")
    ins = [ctx.input(i) for i in range(5)]
    ctx.emit("batch_norm", ins, [attr("epsilon", f32_attr(ctx, "epsilon", 1e-5), "float")], out=ctx.out())


def convert_instance_norm(ctx: NodeCtx) -> None:
    """InstanceNormalization = group_norm with one group per channel."""
    x = ctx.input(0)
    attrs = [attr("num_groups", x.dims[1], "int"), attr("epsilon", f32_attr(ctx, "epsilon", 1e-5), "float")]
    ctx.emit("group_norm", [x, ctx.input(1), ctx.input(2)], attrs, out=ctx.out())


def convert_top_k(ctx: NodeCtx) -> None:
    """TopK's two outputs: top_k (values) and top_k_indices."""
    k = ctx.const(1).reshape(-1)[0] if ctx.has(1) else ctx.attr("k")
    attrs = [attr("k", int(k), "int"), attr("axis", ctx.attr("axis", -1), "int"),
             attr("largest", ctx.attr("largest", 1), "bool"), attr("sorted", ctx.attr("sorted", 1), "bool")]
    ctx.emit("top_k", [ctx.input(0)], attrs, out=ctx.out(0))
    if len(ctx.outputs) > 1:
        ctx.emit("top_k_indices", [ctx.input(0)], attrs, out=ctx.out(1))


def convert_gemm(ctx: NodeCtx) -> None:
    attrs = [attr("alpha", f32_attr(ctx, "alpha", 1.0), "float"), attr("beta", f32_attr(ctx, "beta", 1.0), "float"),
             attr("trans_a", ctx.attr("transA", 0), "bool"), attr("trans_b", ctx.attr("transB", 0), "bool")]
    ins = [ctx.input(0), ctx.input(1)] + ([ctx.input(2)] if ctx.has(2) else [])
    ctx.emit("gemm", ins, attrs, out=ctx.out())


WINDOW_ATTRS = {  # ONNX attribute -> (kind, value for the added leading spatial dim of a 1-D op)
    "kernel_shape": ("int_list", 1), "strides": ("int_list", 1), "dilations": ("int_list", 1),
    "pads": ("pads", 0), "output_padding": ("int_list", 0), "output_shape": ("int_list", 1),
    "group": ("int", None), "auto_pad": ("string", None), "ceil_mode": ("bool", None),
    "count_include_pad": ("bool", None),
}


def window_attrs(ctx: NodeCtx, lift: bool) -> List[dict]:
    """Conv/pool attributes under our names (the same as ONNX's); `lift` turns a 1-D op into
    a 2-D one over [N, C, 1, L], so every per-dim list gains a leading entry."""
    out = []
    for name, value in ctx.attrs.items():
        if name == "storage_order" and not value:
            continue
        if name not in WINDOW_ATTRS:
            raise Unsupported(f"{ctx.node.op_type}: attribute {name} is not mapped")
        kind, extra = WINDOW_ATTRS[name]
        value = value.decode() if isinstance(value, bytes) else value
        if kind == "pads":
            value = ([0] + list(value[:len(value) // 2]) + [0] + list(value[len(value) // 2:])) if lift else value
            kind = "int_list"
        elif kind == "int_list" and lift:
            value = [extra] + list(value)
        out.append(attr(name, value, kind))
    return out


def lift_1d(ctx: NodeCtx, v: Value) -> Value:
    """[N, C, L] -> [N, C, 1, L] (a view)."""
    return ctx.emit("unsqueeze", [v], [attr("axes", [2], "int_list")], dims=v.dims[:2] + (1,) + v.dims[2:])


def convert_window(op2d: str, op1d: Optional[str] = None) -> Callable[[NodeCtx], None]:
    """Conv, ConvTranspose, MaxPool, AveragePool on 2-D images (`op2d`); 1-D ones use `op1d`
    or run the 2-D op over [N, C, 1, L]; 3-D ones are not ours."""
    def convert(ctx: NodeCtx) -> None:
        x = ctx.input(0)
        spatial = len(x.dims) - 2
        if len(ctx.outputs) > 1:
            raise Unsupported(f"{ctx.node.op_type}: the Indices output (argmax positions)")
        if spatial == 2 or (spatial == 1 and op1d):
            ins = [ctx.input(i) for i in range(len(ctx.inputs)) if ctx.has(i)]
            ctx.emit(op2d if spatial == 2 else op1d, ins, window_attrs(ctx, False), out=ctx.out())
            return
        if spatial != 1:
            raise Unsupported(f"{ctx.node.op_type} over {spatial} spatial dims: we have 2-D (and 1-D) kernels")
        ins = [lift_1d(ctx, x)]
        if ctx.has(1):                    # weights [M, C/group, k] -> [M, C/group, 1, k]
            ins.append(lift_1d(ctx, ctx.input(1)))
        if ctx.has(2):                    # bias [M] stays
            ins.append(ctx.input(2))
        out = ctx.out()
        y = ctx.emit(op2d, ins, window_attrs(ctx, True), dims=out.dims[:2] + (1,) + out.dims[2:])
        ctx.emit("squeeze", [y], [attr("axes", [2], "int_list")], out=out)
    return convert


def convert_depth_to_space(ctx: NodeCtx) -> None:
    """ONNX's definition: reshape to 6-D, transpose, reshape back (DCR or CRD order)."""
    x = ctx.input(0)
    bs, mode = ctx.attr("blocksize"), ctx.attr("mode", "DCR")
    b, c, h, w = x.dims
    if mode == "DCR":
        six, perm = [b, bs, bs, c // bs ** 2, h, w], [0, 3, 4, 1, 5, 2]
    else:
        six, perm = [b, c // bs ** 2, bs, bs, h, w], [0, 1, 4, 2, 5, 3]
    t = ctx.emit("reshape", [x], [attr("shape", six, "int_list")], dims=six)
    t = ctx.emit("transpose", [t], [attr("perm", perm, "int_list")], dims=[six[i] for i in perm])
    ctx.emit("reshape", [t], [attr("shape", list(ctx.out().dims), "int_list")], out=ctx.out())


def convert_space_to_depth(ctx: NodeCtx) -> None:
    x = ctx.input(0)
    bs = ctx.attr("blocksize")
    b, c, h, w = x.dims
    six, perm = [b, c, h // bs, bs, w // bs, bs], [0, 3, 5, 1, 2, 4]
    t = ctx.emit("reshape", [x], [attr("shape", six, "int_list")], dims=six)
    t = ctx.emit("transpose", [t], [attr("perm", perm, "int_list")], dims=[six[i] for i in perm])
    ctx.emit("reshape", [t], [attr("shape", list(ctx.out().dims), "int_list")], out=ctx.out())


def per_axis(ctx: NodeCtx, i: int, like: Value, dtype: str, hint: str) -> Value:
    """Input i (a scale or zero point: a scalar, or 1-D along `axis` of `like`) as a tensor of
    `dtype` that broadcasts against `like`. Known values become a constant variable; values
    computed at run time go through reshape and cast."""
    v = ctx.input(i)
    shape = [1] * len(like.dims)
    if len(v.dims) == 1 and len(like.dims) > 1:
        shape[ctx.attr("axis", 1) % len(like.dims)] = v.dims[0]
    else:
        shape = list(v.dims)
    if v.const is not None:
        array = np.asarray(v.const).reshape(shape)
        return ctx.case.constant(array.astype(np.float64) if dtype in FLOAT_DTYPES else array, dtype, hint)
    if shape != list(v.dims):
        v = ctx.emit("reshape", [v], [attr("shape", shape, "int_list")], dims=shape)
    if v.dtype != dtype:
        v = ctx.emit("cast", [v], [attr("to", dtype, "dtype")], dtype=dtype)
    return v


def convert_quantize(ctx: NodeCtx) -> None:
    """QuantizeLinear: saturate(round(x / scale) + zero_point) into the zero point's dtype
    (u8 without one). Our cast rounds halves away from zero, ONNX's to even: the two differ
    only where x / scale lands exactly on a .5."""
    x = ctx.input(0)
    t = ctx.emit("div", [x, per_axis(ctx, 1, x, x.dtype, "scale")])
    if ctx.has(2):
        t = ctx.emit("add", [t, per_axis(ctx, 2, x, x.dtype, "zero_point")])
    ctx.emit("cast", [t], [attr("to", ctx.out().dtype, "dtype"), attr("rounding_mode", "nearest", "string")],
             out=ctx.out())


def int_to_i32(ctx: NodeCtx, v: Value) -> Value:
    """An integer tensor as i32; our cast refuses to change signedness directly (u8 -> i32),
    so it goes through f64, exact for every 32-bit value."""
    if v.dtype == "i32":
        return v
    if v.dtype.startswith("u"):
        v = ctx.emit("cast", [v], [attr("to", "f64", "dtype")], dtype="f64")
    return ctx.emit("cast", [v], [attr("to", "i32", "dtype")], dtype="i32")


def convert_matmul_integer(ctx: NodeCtx) -> None:
    """MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in i32. A per-row zero point
    of A becomes a column [M, 1]."""
    operands = []
    for i, zp_index in ((0, 2), (1, 3)):
        v = int_to_i32(ctx, ctx.input(i))
        if ctx.has(zp_index):
            zp = np.asarray(ctx.const(zp_index)).astype(np.int32)
            if i == 0 and zp.size > 1:
                zp = zp.reshape(-1, 1)
            v = ctx.emit("sub", [v, ctx.case.constant(zp, "i32", "zero_point")])
        operands.append(v)
    ctx.emit("matmul", operands, out=ctx.out())


def convert_mvn(ctx: NodeCtx) -> None:
    """MeanVarianceNormalization as ONNX's reference: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9)."""
    x = ctx.input(0)
    axes = [int(a) for a in ctx.attr("axes", [0, 2, 3])]
    stats = [attr("axes", axes, "int_list"), attr("keepdims", True, "bool")]
    dims = reduced_dims(x.dims, axes, True)
    mean = ctx.emit("mean_axis", [x], stats, dims=dims)
    mean_sq = ctx.emit("mean_axis", [ctx.emit("mul", [x, x])], stats, dims=dims)
    std = ctx.emit("sqrt", [ctx.emit("sub", [mean_sq, ctx.emit("mul", [mean, mean])])])
    std = ctx.emit("add", [std, literal(ctx, 1e-9, x.dtype, "tiny")])
    ctx.emit("div", [ctx.emit("sub", [x, mean]), std], out=ctx.out())


def convert_global_avg_pool(ctx: NodeCtx) -> None:
    ctx.emit("global_avg_pool", [ctx.input(0)], out=ctx.out())


# ---- activations and others written as short chains of our ops, in the order ONNX's
# reference computes them

def literal(ctx: NodeCtx, value, dtype: str, hint: str = "k") -> Value:
    """A scalar constant variable (shape []) of `dtype`, broadcast by the ops that read it."""
    return ctx.case.constant(np.array(value, dtype=np.float64 if dtype in FLOAT_DTYPES else np.int64), dtype, hint)


def select(ctx: NodeCtx, cond: Value, x: Value, y: Value, out: Optional[Value] = None) -> Value:
    """cond ? x : y with our `where` (ONNX order), or filter before it exists."""
    if "where" in ctx.case.ops:
        return ctx.emit("where", [cond, x, y], out=out, dtype=x.dtype)
    return ctx.emit("filter", [x, y, cond], out=out)


def f32_attr(ctx: NodeCtx, name: str, default: float) -> float:
    """A float attribute as ONNX holds it (float32), widened exactly."""
    return float(np.float32(ctx.attr(name, default)))


def convert_softsign(ctx: NodeCtx) -> None:
    """x / (1 + |x|)."""
    x = ctx.input(0)
    denom = ctx.emit("add", [ctx.emit("abs", [x]), literal(ctx, 1, x.dtype, "one")])
    ctx.emit("div", [x, denom], out=ctx.out())


def convert_hard_sigmoid(ctx: NodeCtx) -> None:
    alpha, beta = f32_attr(ctx, "alpha", 0.2), f32_attr(ctx, "beta", 0.5)
    ctx.emit("hard_sigmoid", [ctx.input(0)], [attr("alpha", alpha, "float"), attr("beta", beta, "float")],
             out=ctx.out())


def convert_hard_swish(ctx: NodeCtx) -> None:
    ctx.emit("hard_swish", [ctx.input(0)], out=ctx.out())


def convert_thresholded_relu(ctx: NodeCtx) -> None:
    """x > alpha ? x : 0."""
    x = ctx.input(0)
    above = ctx.emit("gt", [x, literal(ctx, f32_attr(ctx, "alpha", 1.0), x.dtype, "alpha")], dtype="bool")
    select(ctx, above, x, literal(ctx, 0, x.dtype, "zero"), ctx.out())


def convert_shrink(ctx: NodeCtx) -> None:
    """x < -lambd ? x + bias : (x > lambd ? x - bias : 0)."""
    x = ctx.input(0)
    lambd, bias = f32_attr(ctx, "lambd", 0.5), f32_attr(ctx, "bias", 0.0)
    low = ctx.emit("lt", [x, literal(ctx, -lambd, x.dtype, "neg_lambd")], dtype="bool")
    high = ctx.emit("gt", [x, literal(ctx, lambd, x.dtype, "lambd")], dtype="bool")
    b = literal(ctx, bias, x.dtype, "bias")
    upper = select(ctx, high, ctx.emit("sub", [x, b]), literal(ctx, 0, x.dtype, "zero"))
    select(ctx, low, ctx.emit("add", [x, b]), upper, ctx.out())


def convert_prelu(ctx: NodeCtx) -> None:
    """x < 0 ? x * slope : x (slope broadcasts)."""
    x, slope = ctx.input(0), ctx.input(1)
    negative = ctx.emit("lt", [x, literal(ctx, 0, x.dtype, "zero")], dtype="bool")
    select(ctx, negative, ctx.emit("mul", [x, slope]), x, ctx.out())


def convert_elu(ctx: NodeCtx) -> None:
    """x < 0 ? alpha * (exp(x) - 1) : x."""
    x = ctx.input(0)
    em1 = ctx.emit("sub", [ctx.emit("exp", [x]), literal(ctx, 1, x.dtype, "one")])
    neg = ctx.emit("mul", [em1, literal(ctx, f32_attr(ctx, "alpha", 1.0), x.dtype, "alpha")])
    below = ctx.emit("lt", [x, literal(ctx, 0, x.dtype, "zero")], dtype="bool")
    select(ctx, below, neg, x, ctx.out())


def convert_selu(ctx: NodeCtx) -> None:
    """x <= 0 ? gamma * (alpha * exp(x) - alpha) : gamma * x."""
    x = ctx.input(0)
    alpha = literal(ctx, f32_attr(ctx, "alpha", 1.67326319217681884765625), x.dtype, "alpha")
    gamma = literal(ctx, f32_attr(ctx, "gamma", 1.05070102214813232421875), x.dtype, "gamma")
    neg = ctx.emit("sub", [ctx.emit("mul", [ctx.emit("exp", [x]), alpha]), alpha])
    neg = ctx.emit("mul", [neg, gamma])
    below = ctx.emit("le", [x, literal(ctx, 0, x.dtype, "zero")], dtype="bool")
    select(ctx, below, neg, ctx.emit("mul", [x, gamma]), ctx.out())


def convert_celu(ctx: NodeCtx) -> None:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = ctx.input(0)
    alpha = literal(ctx, f32_attr(ctx, "alpha", 1.0), x.dtype, "alpha")
    zero = literal(ctx, 0, x.dtype, "zero")
    em1 = ctx.emit("sub", [ctx.emit("exp", [ctx.emit("div", [x, alpha])]), literal(ctx, 1, x.dtype, "one")])
    neg = ctx.emit("min", [ctx.emit("mul", [em1, alpha]), zero])
    ctx.emit("add", [ctx.emit("max", [x, zero]), neg], out=ctx.out())


def convert_identity(ctx: NodeCtx) -> None:
    identity(ctx, ctx.input(0), ctx.out())


def convert_dropout(ctx: NodeCtx) -> None:
    """Inference (or ratio 0): the input unchanged, and a mask of all true."""
    x = ctx.input(0)
    training = bool(ctx.const(2).reshape(-1)[0]) if ctx.has(2) else False
    ratio = float(ctx.const(1).reshape(-1)[0]) if ctx.has(1) else f32_attr(ctx, "ratio", 0.5)
    if training and ratio != 0:
        raise Unsupported("Dropout in training mode draws random numbers")
    identity(ctx, x, ctx.out(0))
    if len(ctx.outputs) > 1:
        ctx.emit("fill", [ctx.emit("is_nan", [x], dtype="bool")], [attr("value", True, "bool")], out=ctx.out(1))


def convert_global_pool(op: str) -> Callable[[NodeCtx], None]:
    """GlobalMaxPool/GlobalAveragePool: a reduction over the spatial axes, kept as size 1."""
    def convert(ctx: NodeCtx) -> None:
        x = ctx.input(0)
        axes = list(range(2, len(x.dims)))
        ctx.emit(op, [x], [attr("axes", axes, "int_list"), attr("keepdims", True, "bool")], out=ctx.out())
    return convert


def convert_dequantize(ctx: NodeCtx) -> None:
    """(x - zero_point) * scale in f32; a per-axis scale/zero point is reshaped to broadcast."""
    x = ctx.input(0)
    t = ctx.emit("cast", [x], [attr("to", "f32", "dtype")], dtype="f32")
    if ctx.has(2):
        t = ctx.emit("sub", [t, per_axis(ctx, 2, x, "f32", "zero_point")])
    ctx.emit("mul", [t, per_axis(ctx, 1, x, "f32", "scale")], out=ctx.out())


def along(values: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A 1-D array laid out along `axis` of a rank-`rank` tensor (size 1 elsewhere)."""
    shape = [1] * rank
    shape[axis] = values.shape[0]
    return values.reshape(shape)


def convert_trilu(ctx: NodeCtx) -> None:
    """Trilu: where(mask, x, 0) with the triangle as a constant bool mask over the last two
    dims (j - i >= k keeps the upper part, j - i <= k the lower)."""
    x = ctx.input(0)
    k = int(ctx.const(1).reshape(-1)[0]) if ctx.has(1) else 0
    rows, cols = x.dims[-2], x.dims[-1]
    diff = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    mask = diff >= k if ctx.attr("upper", 1) else diff <= k
    select(ctx, ctx.case.constant(mask, "bool", "mask"), x, literal(ctx, 0, x.dtype, "zero"), ctx.out())


def convert_hardmax(ctx: NodeCtx) -> None:
    """Hardmax: 1 where the index equals argmax along `axis` (the first maximum), else 0."""
    x = ctx.input(0)
    if ctx.opset < 13:
        raise Unsupported("Hardmax before opset 13 works on a flattened 2-D view")
    axis = ctx.attr("axis", -1) % len(x.dims)
    dims = reduced_dims(x.dims, [axis], True)
    best = ctx.emit("argmax_axis", [x], [attr("axis", axis, "int"), attr("keepdims", True, "bool")],
                    dtype="i64", dims=dims)
    positions = ctx.case.constant(along(np.arange(x.dims[axis], dtype=np.int64), axis, len(x.dims)), "i64", "index")
    hit = ctx.emit("eq", [best, positions], dtype="bool", dims=x.dims)
    select(ctx, hit, literal(ctx, 1, x.dtype, "one"), literal(ctx, 0, x.dtype, "zero"), ctx.out())


def convert_cumsum(ctx: NodeCtx) -> None:
    """CumSum as a matmul with a constant 0/1 triangle T[i, j] = (i contributes to j) over
    the summed axis, moved last by a transpose (a 1-D input is viewed as [1, n])."""
    x = ctx.input(0)
    rank, axis = len(x.dims), int(ctx.const(1).reshape(-1)[0]) % len(x.dims)
    n = x.dims[axis]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    exclusive, reverse = ctx.attr("exclusive", 0), ctx.attr("reverse", 0)
    tri = (i > j if exclusive else i >= j) if reverse else (i < j if exclusive else i <= j)
    t = ctx.case.constant(tri.astype(np.float64 if x.dtype in FLOAT_DTYPES else np.int64), x.dtype, "triangle")
    if rank == 1:
        row = ctx.emit("reshape", [x], [attr("shape", [1, n], "int_list")], dims=(1, n))
        y = ctx.emit("matmul", [row, t], dims=(1, n))
        ctx.emit("reshape", [y], [attr("shape", [n], "int_list")], out=ctx.out())
        return
    perm = [d for d in range(rank) if d != axis] + [axis]
    inverse = [perm.index(d) for d in range(rank)]
    moved = ctx.emit("transpose", [x], [attr("perm", perm, "int_list")], dims=[x.dims[d] for d in perm])
    y = ctx.emit("matmul", [moved, t], dims=moved.dims)
    ctx.emit("transpose", [y], [attr("perm", inverse, "int_list")], out=ctx.out())


def convert_one_hot(ctx: NodeCtx) -> None:
    """OneHot(indices, depth, [off, on]): eq(indices, k) or eq(indices, k - depth) (negative
    indices count from the end) against a constant 0..depth-1 along `axis`, then where."""
    idx, out = ctx.input(0), ctx.out()
    depth = int(ctx.const(1).reshape(-1)[0])
    off, on = ctx.const(2).reshape(-1)[:2]
    rank = len(out.dims)
    axis = ctx.attr("axis", -1) % rank
    if idx.dtype != "i64":
        idx = ctx.emit("cast", [idx], [attr("to", "i64", "dtype")], dtype="i64")
    idx = ctx.emit("unsqueeze", [idx], [attr("axes", [axis], "int_list")],
                   dims=idx.dims[:axis] + (1,) + idx.dims[axis:])
    ks = np.arange(depth, dtype=np.int64)
    hit = ctx.emit("eq", [idx, ctx.case.constant(along(ks, axis, rank), "i64", "k")], dtype="bool", dims=out.dims)
    wrapped = ctx.emit("eq", [idx, ctx.case.constant(along(ks - depth, axis, rank), "i64", "k_neg")],
                       dtype="bool", dims=out.dims)
    hit = ctx.emit("or", [hit, wrapped])
    select(ctx, hit, literal(ctx, on.item(), out.dtype, "on"), literal(ctx, off.item(), out.dtype, "off"), out)


def convert_conv_integer(ctx: NodeCtx) -> None:
    """ConvInteger: (x - x_zero_point) conv (w - w_zero_point) in f64 (exact for any i32
    result), cast to i32."""
    operands = []
    for i, zp_index in ((0, 2), (1, 3)):
        v = ctx.emit("cast", [ctx.input(i)], [attr("to", "f64", "dtype")], dtype="f64")
        if ctx.has(zp_index):
            v = ctx.emit("sub", [v, per_axis(ctx, zp_index, v, "f64", "zero_point")])
        operands.append(v)
    if len(operands[0].dims) != 4:
        raise Unsupported("ConvInteger other than 2-D")
    dims = ctx.out().dims
    y = ctx.emit("conv2d", operands, window_attrs(ctx, False), dtype="f64", dims=dims)
    ctx.emit("cast", [y], [attr("to", "i32", "dtype")], out=ctx.out())


@dataclass
class Mapping:
    needs: Tuple[str, ...]           # our ops the mapping emits (all must be in the op table)
    convert: Callable[[NodeCtx], None]
    attrs: Tuple[str, ...] = ()      # ONNX attributes it understands (others: unsupported)


def m(needs, convert, attrs=()) -> Mapping:
    return Mapping(tuple(needs.split()), convert, tuple(attrs.split()) if attrs else ())


# ONNX op -> our ops. Add a row when the op table gains an op; a row whose ops are not in
# the table yet is skipped (its tests count as unsupported) until they land.
MAPPINGS: Dict[str, Mapping] = {
    "Add": m("add", binary("add")),
    "Sub": m("sub", binary("sub")),
    "Mul": m("mul", binary("mul")),
    "Div": m("div", binary("div")),
    "Mod": m("rem floor_div mul sub", convert_mod, "fmod"),
    "Neg": m("neg", unary("neg")),
    "Abs": m("abs", unary("abs")),
    "Reciprocal": m("recip", unary("recip")),
    "Relu": m("relu", unary("relu")),
    "LeakyRelu": m("relu", convert_leaky_relu, "alpha"),
    "Floor": m("floor", unary("floor")),
    "Ceil": m("ceil", unary("ceil")),
    "Round": m("round", unary("round")),
    "Sign": m("sign cast", convert_sign),
    "Min": m("min max", variadic("min")),
    "Max": m("max", variadic("max")),
    "Sum": m("add max", variadic("add")),
    "Mean": m("add div max", convert_mean),
    "Clip": m("clamp", convert_clip, "min max"),
    "And": m("and", binary("and")),
    "Or": m("or", binary("or")),
    "Xor": m("xor", binary("xor")),
    "Not": m("not", unary("not")),
    "BitShift": m("shl shr", convert_bitshift, "direction"),
    "Equal": m("eq", binary("eq")),
    "Less": m("lt", binary("lt")),
    "LessOrEqual": m("le", binary("le")),
    "Greater": m("gt", binary("gt")),
    "GreaterOrEqual": m("ge", binary("ge")),
    "IsNaN": m("is_nan", unary("is_nan")),
    "IsInf": m("is_inf is_neg not and", convert_isinf, "detect_positive detect_negative"),
    "Where": m("filter", convert_where),   # `where` once the table has it
    "MatMul": m("matmul", binary("matmul")),
    "Cast": m("cast", convert_cast, "to"),
    "CastLike": m("cast", convert_cast_like),
    "ArgMax": m("argmax_axis", convert_arg("argmax_axis"), "axis keepdims select_last_index"),
    "ArgMin": m("argmin_axis", convert_arg("argmin_axis"), "axis keepdims select_last_index"),
    "ReduceSum": m("sum_axis max", convert_reduce("sum_axis"), "axes keepdims noop_with_empty_axes"),
    "ReduceMean": m("mean_axis max", convert_reduce("mean_axis"), "axes keepdims noop_with_empty_axes"),
    "ReduceMax": m("max_axis max", convert_reduce("max_axis"), "axes keepdims noop_with_empty_axes"),
    "ReduceMin": m("min_axis max", convert_reduce("min_axis"), "axes keepdims noop_with_empty_axes"),
    "ReduceProd": m("prod_axis max", convert_reduce("prod_axis"), "axes keepdims noop_with_empty_axes"),
    "ReduceL1": m("abs sum_axis max", convert_reduce("sum_axis", pre=["abs"]), "axes keepdims noop_with_empty_axes"),
    "ReduceSumSquare": m("mul sum_axis max", convert_reduce("sum_axis", pre=["square"]),
                         "axes keepdims noop_with_empty_axes"),
    "ReduceL2": m("mul sum_axis sqrt max", convert_reduce("sum_axis", pre=["square"], post=["sqrt"]),
                  "axes keepdims noop_with_empty_axes"),
    "ReduceLogSum": m("sum_axis log max", convert_reduce("sum_axis", post=["log"]),
                      "axes keepdims noop_with_empty_axes"),
    "ReduceLogSumExp": m("exp sum_axis log max", convert_reduce("sum_axis", pre=["exp"], post=["log"]),
                         "axes keepdims noop_with_empty_axes"),
    # math
    "Exp": m("exp", unary("exp")),
    "Log": m("log", unary("log")),
    "Sqrt": m("sqrt", unary("sqrt")),
    "Erf": m("erf", unary("erf")),
    "Tanh": m("tanh", unary("tanh")),
    "Sigmoid": m("sigmoid", unary("sigmoid")),
    "Softplus": m("softplus", unary("softplus")),
    "Pow": m("pow cast", convert_pow),
    # data movement
    "Reshape": m("reshape", convert_reshape, "allowzero"),
    "Flatten": m("reshape", convert_flatten, "axis"),
    "Transpose": m("transpose", convert_transpose, "perm"),
    "Squeeze": m("squeeze", convert_squeeze("squeeze"), "axes"),
    "Unsqueeze": m("unsqueeze", convert_squeeze("unsqueeze"), "axes"),
    "Slice": m("slice", convert_slice),
    "Split": m("split", convert_split, "axis split"),
    "Concat": m("concat", convert_concat, "axis"),
    "Gather": m("gather", convert_gather, "axis"),
    "Pad": m("pad", convert_pad, "mode pads value"),
    "Expand": m("expand", convert_with_list("expand", "shape")),
    "Tile": m("tile", convert_with_list("tile", "repeats")),
    # written as chains of our ops
    "Softsign": m("abs add div", convert_softsign),
    "HardSigmoid": m("hard_sigmoid", convert_hard_sigmoid, "alpha beta"),
    "HardSwish": m("hard_swish", convert_hard_swish),
    "ThresholdedRelu": m("gt filter", convert_thresholded_relu, "alpha"),
    "Shrink": m("lt gt add sub filter", convert_shrink, "lambd bias"),
    "PRelu": m("lt mul filter", convert_prelu),
    "Elu": m("exp sub mul lt filter", convert_elu, "alpha"),
    "Selu": m("exp sub mul le filter", convert_selu, "alpha gamma"),
    "Celu": m("exp div sub mul min max add", convert_celu, "alpha"),
    "Identity": m("max or", convert_identity),
    "Dropout": m("max or fill is_nan", convert_dropout, "seed ratio"),
    "GlobalMaxPool": m("max_axis", convert_global_pool("max_axis")),
    "GlobalAveragePool": m("global_avg_pool", convert_global_avg_pool),
    # normalization, selection, convolution and pooling
    "Softmax": m("softmax", convert_softmax("softmax"), "axis"),
    "LogSoftmax": m("log_softmax", convert_softmax("log_softmax"), "axis"),
    "LayerNormalization": m("layer_norm mean_axis sub mul add sqrt recip", convert_layer_norm,
                            "axis epsilon stash_type"),
    "BatchNormalization": m("batch_norm", convert_batch_norm, "epsilon momentum training_mode"),
    "InstanceNormalization": m("group_norm", convert_instance_norm, "epsilon"),
    "TopK": m("top_k top_k_indices", convert_top_k, "axis largest sorted"),
    "Gemm": m("gemm", convert_gemm, "alpha beta transA transB"),
    "MatMulInteger": m("cast sub matmul", convert_matmul_integer),
    "QuantizeLinear": m("div add cast reshape", convert_quantize, "axis"),
    "DepthToSpace": m("reshape transpose", convert_depth_to_space, "blocksize mode"),
    "SpaceToDepth": m("reshape transpose", convert_space_to_depth, "blocksize"),
    "MeanVarianceNormalization": m("mean_axis mul sub sqrt add div", convert_mvn, "axes"),
    "Trilu": m("filter", convert_trilu, "upper"),
    "Hardmax": m("argmax_axis eq filter", convert_hardmax, "axis"),
    "CumSum": m("matmul transpose reshape", convert_cumsum, "exclusive reverse"),
    "OneHot": m("cast unsqueeze eq or filter", convert_one_hot, "axis"),
    "ConvInteger": m("cast sub conv2d", convert_conv_integer, " ".join(WINDOW_ATTRS)),
    "Conv": m("conv2d conv1d", convert_window("conv2d", "conv1d"), " ".join(WINDOW_ATTRS)),
    "ConvTranspose": m("conv_transpose2d unsqueeze squeeze", convert_window("conv_transpose2d"),
                       " ".join(WINDOW_ATTRS)),
    "MaxPool": m("max_pool2d unsqueeze squeeze", convert_window("max_pool2d"), " ".join(WINDOW_ATTRS) + " storage_order"),
    "AveragePool": m("avg_pool2d unsqueeze squeeze", convert_window("avg_pool2d"), " ".join(WINDOW_ATTRS)),
    "DequantizeLinear": m("cast sub mul reshape", convert_dequantize, "axis"),
}


# ---------------------------------------------------------------------------- one test

def load_pb(path: str, declared: int) -> Tuple[np.ndarray, str]:
    """One test tensor. ONNX 1.12 stores bfloat16 test data as UINT16 bit patterns (numpy has
    no bfloat16); the model's declared type tells, and the bits become exact f32 values."""
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    array = numpy_helper.to_array(t)
    if declared == TensorProto.BFLOAT16 and t.data_type == TensorProto.UINT16:
        return (array.astype(np.uint32) << 16).view(np.float32), "bf16"
    return array, onnx_dtype(t.data_type)


def test_data(test_dir: str, prefix: str, declared: Sequence[onnx.ValueInfoProto]) -> List[Tuple[np.ndarray, str]]:
    """input_<i>.pb / output_<i>.pb of the first data set, for the graph's values `declared`."""
    for vi in declared:
        if not vi.type.HasField("tensor_type"):
            raise Unsupported(f"{vi.name} is a {vi.type.WhichOneof('value')}, not a tensor")
    data_dir = os.path.join(test_dir, "test_data_set_0")
    paths = [os.path.join(data_dir, f"{prefix}_{i}.pb") for i in range(len(declared))]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise Unsupported(f"test data {os.path.basename(missing[0])} is missing (optional or sequence values)")
    return [load_pb(p, vi.type.tensor_type.elem_type) for p, vi in zip(paths, declared)]


def constant_value(node: onnx.NodeProto) -> Tuple[np.ndarray, str]:
    """The value of a Constant node."""
    a = node.attribute[0]
    if a.name == "value":
        return numpy_helper.to_array(a.t), onnx_dtype(a.t.data_type)
    v = helper.get_attribute_value(a)
    if a.name in ("value_float", "value_floats"):
        return np.array(v, dtype=np.float32), "f32"
    if a.name in ("value_int", "value_ints"):
        return np.array(v, dtype=np.int64), "i64"
    raise Unsupported(f"Constant with {a.name}")


def value_types(model: onnx.ModelProto) -> Dict[str, Tuple[str, Tuple[int, ...]]]:
    """dtype and dims of every intermediate value, from ONNX's shape inference."""
    try:
        inferred = shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # noqa: BLE001 - any failure means: no shapes
        raise Unsupported(f"ONNX shape inference failed: {exc}") from exc
    types = {}
    for vi in inferred.graph.value_info:
        tt = vi.type.tensor_type
        if tt.elem_type in ONNX_DTYPES and tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            types[vi.name] = (ONNX_DTYPES[tt.elem_type], tuple(d.dim_value for d in tt.shape.dim))
    return types


# ---- constant folding of shape computations
# Our shapes are static, so ONNX's Shape and Size are known when converting, and so is
# everything computed from them and from Constant nodes alone (the reshape targets inside
# ONNX's function bodies). Those nodes are evaluated here with numpy; a node that reads a
# test input or anything computed at run time is never folded: it runs through our ops.

def fold_slice(ins: List[np.ndarray], attrs: dict) -> np.ndarray:
    data, starts, ends = ins[0], ins[1], ins[2]
    axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(starts))
    steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    index = [slice(None)] * data.ndim
    for a, b, e, st in zip(axes, starts, ends, steps):
        index[int(a)] = slice(int(b), int(e), int(st))
    return data[tuple(index)]


def fold_constant_of_shape(ins: List[np.ndarray], attrs: dict) -> np.ndarray:
    value = numpy_helper.to_array(attrs["value"]) if "value" in attrs else np.zeros(1, np.float32)
    return np.full(tuple(int(d) for d in ins[0]), value.reshape(-1)[0], dtype=value.dtype)


def fold_cast(ins: List[np.ndarray], attrs: dict) -> np.ndarray:
    to = onnx_dtype(attrs["to"])
    return ins[0].astype({v: k for k, v in NUMPY_TO_DTYPE.items()}[to] if to != "bf16" else np.float32)


FOLDERS: Dict[str, Callable[[List[np.ndarray], dict], np.ndarray]] = {
    "Cast": fold_cast,
    "Slice": fold_slice,
    "ConstantOfShape": fold_constant_of_shape,
    "Concat": lambda ins, attrs: np.concatenate(ins, axis=attrs["axis"]),
    "Add": lambda ins, attrs: ins[0] + ins[1],
    "Sub": lambda ins, attrs: ins[0] - ins[1],
    "Mul": lambda ins, attrs: ins[0] * ins[1],
    "Neg": lambda ins, attrs: -ins[0],
    "Unsqueeze": lambda ins, attrs: np.expand_dims(ins[0], tuple(int(a) for a in (attrs.get("axes") or ins[1]))),
    "Identity": lambda ins, attrs: ins[0],
}
SHAPE_FOLDERS = {"Shape", "Size"}   # need only the (static) shape of their input


def fold_node(node: onnx.NodeProto, ins: List[Optional[Value]]) -> Optional[np.ndarray]:
    """The node's value when it is a constant computation, else None."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Shape":
        dims = np.array(ins[0].dims, dtype=np.int64)
        return dims[attrs.get("start", 0):attrs.get("end", len(dims))]
    if node.op_type == "Size":
        return np.array(int(np.prod(ins[0].dims, dtype=np.int64)), dtype=np.int64)
    folder = FOLDERS.get(node.op_type)
    if folder is None or len(node.output) != 1 or any(v is not None and v.source != "const" for v in ins):
        return None
    return np.asarray(folder([v.const if v is not None else None for v in ins], attrs))


def convert_test(test_dir: str, ops: Dict[str, set]) -> Case:
    test = os.path.basename(test_dir)
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    graph = model.graph
    case = Case(test, ops)
    case.opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    values: Dict[str, Value] = {}
    initializers = {t.name: t for t in graph.initializer}
    for t in graph.initializer:
        values[t.name] = Value(case.fresh(t.name), onnx_dtype(t.data_type), tuple(t.dims),
                               numpy_helper.to_array(t), "const")
    runtime_inputs = [i for i in graph.input if i.name not in initializers]
    for vi, (array, dtype) in zip(runtime_inputs, test_data(test_dir, "input", runtime_inputs)):
        values[vi.name] = Value(case.fresh(vi.name), dtype, tuple(array.shape), array, "input")
    expected = test_data(test_dir, "output", list(graph.output))
    outputs = {vi.name: Value(case.fresh(vi.name), dtype, tuple(array.shape))
               for vi, (array, dtype) in zip(graph.output, expected)}
    types = value_types(model) if len(graph.node) > 1 else {}

    for node in graph.node:
        if node.op_type == "Constant":
            array, dtype = constant_value(node)
            values[node.output[0]] = Value(case.fresh(node.output[0]), dtype, tuple(array.shape), array, "const")
            continue
        ins = [values[name] if name else None for name in node.input]
        folded = fold_node(node, ins)
        if folded is not None:
            dtype = NUMPY_TO_DTYPE.get(folded.dtype)
            if dtype is None:
                raise Unsupported(f"{node.op_type} folds to {folded.dtype} values")
            values[node.output[0]] = Value(case.fresh(node.output[0]), dtype, tuple(folded.shape), folded, "const")
            continue
        mapping = MAPPINGS.get(node.op_type)
        if mapping is None:
            raise Unsupported(f"{node.op_type} reads values known only at run time and has no mapping")
        outs = []
        for name in node.output:
            if name in outputs:
                outs.append(outputs[name])
            elif name in types:
                outs.append(Value(case.fresh(name), *types[name]))
            else:
                raise Unsupported(f"{node.op_type}: the shape of {name} is not known before running")
        ctx = NodeCtx(case, node, ins, outs)
        unknown = sorted(set(ctx.attrs) - set(mapping.attrs))
        if unknown:
            raise Unsupported(f"{node.op_type}: attribute {', '.join(unknown)} is not mapped")
        mapping.convert(ctx)
        for name, v in zip(node.output, outs):
            values[name] = v
    for vi, (array, dtype) in zip(graph.output, expected):
        v = values.get(vi.name)
        if v is None or v.name not in case.declared or v.source != "computed":
            raise Unsupported(f"output {vi.name} is not computed by an op")
        case.tensors[f"expected.{v.name}"] = (array, dtype)
    return case


# ---------------------------------------------------------------------------- driver

def op_key(test_dir: str, model: onnx.ModelProto, single_ops: Dict[str, str]) -> str:
    """The ONNX op a test is about: its node, or for a function's expansion into several
    nodes (`test_x_expanded`) the op of `test_x`, marked `(expanded)`."""
    kinds = [n.op_type for n in model.graph.node]
    if len(kinds) == 1:
        return kinds[0]
    base = os.path.basename(test_dir)
    sibling = single_ops.get(base[:-len("_expanded")]) if base.endswith("_expanded") else None
    if sibling:
        return f"{sibling} (expanded)"
    return " + ".join(dict.fromkeys(k for k in kinds if k != "Constant")) + " (graph)"


def unmapped_reason(model: onnx.ModelProto, ops: Dict[str, set]) -> Optional[str]:
    """Why a test's ops are not ours to claim (None: every node maps)."""
    kinds = {node.op_type for node in model.graph.node}
    if not any(k in MAPPINGS for k in kinds):
        foldable = kinds <= {"Constant"} | SHAPE_FOLDERS | set(FOLDERS)
        if foldable:
            return f"{' + '.join(sorted(kinds))} only computes constants: nothing for our ops to run"
    for node in model.graph.node:
        if node.op_type == "Constant" or node.op_type in SHAPE_FOLDERS:
            continue
        mapping = MAPPINGS.get(node.op_type)
        if mapping is None and node.op_type in FOLDERS:
            continue
        if mapping is None:
            return f"no mapping for ONNX op {node.op_type}"
        missing = [op for op in mapping.needs if op not in ops]
        if missing:
            return f"{node.op_type} needs op {', '.join(missing)}, not in the op table yet"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the node-test folder (…/onnx/backend/test/data/node)")
    ap.add_argument("--out", required=True, help="where the cases go (created)")
    ap.add_argument("--ops", default=os.path.join(REPO, "kernels", "op_list.h"))
    ap.add_argument("--only", help="convert only tests whose name matches this regex")
    args = ap.parse_args()
    ops = read_op_table(args.ops)
    os.makedirs(args.out, exist_ok=True)
    tests = sorted(d for d in os.listdir(args.data) if os.path.isfile(os.path.join(args.data, d, "model.onnx")))
    if args.only:
        tests = [t for t in tests if re.search(args.only, t)]
    models = {t: onnx.load(os.path.join(args.data, t, "model.onnx")) for t in tests}
    single_ops = {t: mo.graph.node[0].op_type for t, mo in models.items() if len(mo.graph.node) == 1}

    converted, unsupported = [], []
    for t in tests:
        key = op_key(os.path.join(args.data, t), models[t], single_ops)
        reason = unmapped_reason(models[t], ops)
        if reason:
            unsupported.append((t, key, 0, reason))
            continue
        try:
            case = convert_test(os.path.join(args.data, t), ops)
            with open(os.path.join(args.out, t + ".json"), "w", encoding="utf-8") as f:
                f.write(case.graph_json())
            with open(os.path.join(args.out, t + ".oinf"), "wb") as f:
                f.write(case.oinf_bytes())
            converted.append((t, key, " ".join(case.our_ops)))
        except Unsupported as exc:
            unsupported.append((t, key, 1, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a converter bug fails that test, not the run
            unsupported.append((t, key, 1, f"converter error: {type(exc).__name__}: {exc}"))
    with open(os.path.join(args.out, "cases.tsv"), "w", encoding="utf-8") as f:
        f.write("# test\tonnx op\tour ops\n")
        for row in converted:
            f.write("\t".join(row) + "\n")
    with open(os.path.join(args.out, "unsupported.tsv"), "w", encoding="utf-8") as f:
        f.write("# test\tonnx op\tmapped\treason\n")
        for t, key, mapped, reason in unsupported:
            f.write(f"{t}\t{key}\t{mapped}\t{reason.replace(chr(9), ' ').replace(chr(10), ' ')}\n")
    n_mapped = sum(1 for u in unsupported if u[2])
    print(f"convert: {len(tests)} node tests: {len(converted)} converted, {n_mapped} of mapped ops unsupported, "
          f"{len(unsupported) - n_mapped} without a mapping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
