#!/usr/bin/env python3
"""Random graphs through the synthesizer, against the simulator.

    check_random_graphs.py OPENINFER [--seeds FIRST:END] [--target cpu|vulkan|backend]
                           [--arch DEVICE.json] [--cflags FLAGS] [--keep DIR] [--verbose]
    check_random_graphs.py --corpus DIR [--seeds FIRST:END]   # tests/fuzz/fuzz_synth.c's inputs

Each seed makes one graph as `oi_graph_to_json` writes them, with a model (.oinf) of random
sizes and weights and a dynamic input x: chains of elementwise ops over every broadcast the
synthesizer fuses ([N, M] with [M], with [N, 1], with a literal) and over x seen in 3 or 4 dims
([1, N, M], [N, 1, M], [N, h, M / h], heads [1, h, N, M / h]) against operands with dims of 1
at random places ([B, S, 1] with [B, S, D], ...), products (matmul; gemm with a bias and each
activation) on both sides of the small-matrix loop's 4096 multiply-adds, some of a transposed
value, softmax, log_softmax, layer_norm, rms_norm, row and column reductions, transposes,
reshapes, clamp, pow, fma, comparisons and where, casts to i32 and back, concat, slice, split
and pad (constant with crops, reflect, edge, wrap), conv1d over x as N channels (groups,
dilation, stride, bias and activation at random), conv2d over x as an image then a depthwise
3 x 3 conv2d, a max or average pool and a channel sum or a global average pool, lookups
(gather along either axis by constant i32 ids or, on the C target, by argmax), rope (LLaMA's
or GPT-J's pairs, part of the channels), top_k, attention over heads split off by reshape and
transpose, values updated in place, a loop over prefix tables w(l) whose body updates a
carried value, a branch on a sum the step computes, a persistent accumulator read and written
through the cache ops (so the steps differ), and (C target only: the Vulkan target refuses
values of run-time shape) a table H(t) written a row per step and read back as a slice
H[0..len].

The graph is synthesized (`openinfer synth --target cpu`, or `vulkan`), built with
`-O1 -std=c11 -Wall -Wextra -pedantic -Werror` (--cflags: e.g. with
`-fsanitize=address,undefined`; the Vulkan target's with volk and glslc, as check_vulkan.py)
and compiled as C++17 as well,
run for 3 steps (Vulkan: with the validation layer on; any message fails), and every output
compared with `openinfer run`'s: within 2e-5 relative + 2e-5 absolute per element (1e-4 on
Vulkan: fusion, the products' tiling and the GPU's sums change roundings), NaN and infinities
where the simulator has them. A graph the C target refuses fails the check (every op here is
one it supports); the Vulkan target may refuse some, but not more than half.
`--arch DEVICE.json` synthesizes for that device JSON instead (its api must match --target:
e.g. max_kernel_ops 1 or prefer_fusion false, a kernel per statement). `--target backend` synthesizes nothing: it runs the graph on the simulator's Vulkan backend
(`openinfer run --device vulkan`, validation layer on) against its CPU kernels, with the
Vulkan target's bound.

It tests the fusion pass, the arena planner and the renderer by construction: a kernel that
reads a buffer the planner gave to a later value, an epilogue fused across a value read at
another element, or a renamed variable shows up as a difference. Default seeds 0:40;
`--keep DIR` leaves each seed's folder (graph.json, model.oinf, gen/) there.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import uuid

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from openinfer_oinf import TensorItem, encode_array, encode_file  # noqa: E402
from synth_check import option, run  # noqa: E402
import check_vulkan  # noqa: E402

STEPS = 3
RTOL = ATOL = 2e-5
GPU_TOL = 1e-4  # the Vulkan target: GPU sums in other orders, exp and friends as math.glsl computes them
CFLAGS = "-O1 -std=c11 -Wall -Wextra -pedantic -Werror"

UNARY = ["neg", "abs", "relu", "exp", "tanh", "sigmoid", "gelu", "silu", "floor", "ceil", "round", "trunc",
         "sqrt", "erf", "softplus", "hard_sigmoid", "hard_swish"]
BINARY = ["add", "sub", "mul", "div", "max", "min"]
ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh", "hard_swish"]


def is_literal(name):
    """Whether an operand is a number written in the statement ("1.0", "-0.27")."""
    return name[0] in "-0123456789"


def base_name(name):
    """An operand's variable: "w3" of a prefix table's entry "w3[l]"."""
    return name.split("[")[0]


class RandomGraph:
    """One seed's graph: its variables, nodes, model tensors and sizes, built statement by
    statement from the values available so far (name -> shape, a tuple of size names)."""

    def __init__(self, seed, vulkan=False):
        self.rng = random.Random(seed)
        self.seed = seed
        self.vulkan = vulkan  # no construct the Vulkan target documents as refused (values of run-time shape)
        self.name = "rand%d" % seed
        r = self.rng
        big = r.random() < 0.4  # products past 4096 multiply-adds: the packed gemm path
        self.sizes = {"N": r.randint(1, 40 if big else 9), "M": r.randint(1, 48 if big else 12),
                      "K": r.randint(1, 48 if big else 12)}
        self.vars, self.tensors, self.temps, self.n_weights = [], {}, [], 0
        self.values = {}   # values a statement may take or update: name -> shape
        self.shapes = {}   # every variable's: those, the weights and the hidden temporaries
        self.hidden = set()  # temporaries no statement takes: i32, bool, and shapes other than [rows, cols]
        self.loop_index = None  # inside a loop: (its variable, its iterations), for prefix tables
        self.outputs = []  # volatile variables the check fetches
        self.blocks = []   # the blocks branches call
        self.line = 0

    # ---- pieces of the JSON ----
    def src(self, text):
        self.line += 1
        return {"file": self.name + ".c", "line": self.line, "text": text}

    def node(self, kind, text, **fields):
        n = {"index": 0, "uuid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)), "kind": kind}
        n.update(fields)
        n["src"] = self.src(text)
        return n

    def var(self, name, kind, shape, dtype="f32", **extra):
        v = {"name": name, "kind": kind, "dtype": dtype, "dims": list(shape)}
        v.update(extra)
        v["src"] = self.src("OI_VAR(%s, %s[%s])" % (name, dtype, ", ".join(shape)))
        self.vars.append(v)

    def weight(self, shape, scale=1.0):
        """A constant of the model; inside a loop, half of the time a prefix table w(l) with an
        entry per iteration, read as w[l]."""
        name = "w%d" % self.n_weights
        self.n_weights += 1
        dims = tuple(self.size(d) for d in shape)
        self.shapes[name] = shape

        def values():
            return np.array([self.rng.uniform(-scale, scale) for _ in range(int(np.prod(dims)))],
                            np.float32).reshape(dims)
        if self.loop_index and self.rng.random() < 0.5:
            index, entries = self.loop_index
            for e in range(entries):
                self.tensors["%s.%d" % (name, e)] = values()
            self.var(name, "constant", shape, table_indices=[index], pattern=name + ".{%s}" % index)
            return name + "[" + index + "]"
        self.tensors[name] = values()
        self.var(name, "constant", shape)
        return name

    def indices(self, dim, bound):
        """A constant i32 [dim] of indices in [0, bound): an embedding lookup's token ids, rope's
        positions."""
        name = "w%d" % self.n_weights
        self.n_weights += 1
        self.tensors[name] = np.array([self.rng.randrange(bound) for _ in range(self.size(dim))], np.int32)
        self.var(name, "constant", (dim,), dtype="i32")
        self.shapes[name] = (dim,)
        return name

    def temp(self, shape, dtype="f32", hidden=False):
        """A new temporary; f32 ones join the values statements take, but for hidden ones (heads)."""
        name = "t%d" % len(self.temps)
        self.temps.append((name, shape, dtype))
        if dtype != "f32" or hidden:
            self.hidden.add(name)
        return name

    def op(self, body, op, inputs, out, shape, attrs=()):
        def operand(name):
            if is_literal(name):
                return {"name": name, "literal": True}
            if "[" in name:  # a prefix table's entry: w3[l]
                return {"name": base_name(name), "indices": [name[name.index("[") + 1:-1]]}
            return {"name": name}
        ins = [operand(i) for i in inputs]
        body.append(self.node("op", "OI_OP(%s, %s) OI_TO(%s)" % (op, ", ".join(inputs), out), op=op, inputs=ins,
                              attrs=list(attrs), output=out))
        self.shapes[out] = shape
        if out not in self.hidden:
            self.values[out] = shape

    # ---- statements ----
    def pick(self, want=None):
        names = [n for n, s in self.values.items() if want is None or s == want]
        return self.rng.choice(names) if names else None

    def target(self, shape):
        """A new temporary, or (a third of the time) an existing value of that shape, updated in place."""
        same = [n for n, sh in self.values.items() if sh == shape and n.startswith("t")]
        if same and self.rng.random() < 0.33:
            return self.rng.choice(same)
        return self.temp(shape)

    def statement(self, body):
        r = self.rng
        x = self.pick()
        shape = self.values[x]
        kind = r.choice(["unary", "binary", "binary", "binary", "product", "product", "row", "reduce", "view",
                         "clamp", "select", "join", "cast", "heads", "broadcast", "broadcast", "conv1d", "conv2d",
                         "pad", "lookup", "rope", "top_k", "math", "split"])
        if kind == "unary":
            op = r.choice(UNARY)
            if op == "sqrt":  # of |x|: NaN from a negative is checked elsewhere
                a = self.target(shape)
                self.op(body, "abs", [x], a, shape)
                x = a
            self.op(body, op, [x], self.target(shape), shape)
        elif kind == "binary":
            self.binary(body, x, shape)
        elif kind == "product" and len(shape) == 2:
            self.product(body, x, shape)
        elif kind == "row" and len(shape) == 2:
            if r.random() < 0.5:
                self.op(body, "softmax", [x], self.target(shape), shape,
                        [{"name": "axis", "type": "int", "value": r.choice([1, -1])}])
            elif r.random() < 0.5:
                g, b = self.weight((shape[1],)), self.weight((shape[1],))
                self.op(body, "layer_norm", [x, g, b], self.target(shape), shape,
                        [{"name": "epsilon", "type": "float", "value": 1e-5}])
            else:
                self.op(body, "rms_norm", [x, self.weight((shape[1],))], self.target(shape), shape,
                        [{"name": "epsilon", "type": "float", "value": 1e-5}])
        elif kind == "reduce" and len(shape) == 2:
            op = r.choice(["sum_axis", "mean_axis", "max_axis", "min_axis"])
            axis = r.choice([0, 1, 1])
            out_shape = ("1", shape[1]) if axis == 0 else (shape[0], "1")
            self.op(body, op, [x], self.target(out_shape), out_shape,
                    [{"name": "axes", "type": "int_list", "value": [axis]},
                     {"name": "keepdims", "type": "bool", "value": True}])
        elif kind == "broadcast" and len(shape) == 2:
            self.broadcast(body, x, shape)
        elif kind == "conv1d" and len(shape) == 2:
            self.conv1d(body, x, shape)
        elif kind == "conv2d" and len(shape) == 2:
            self.conv2d(body, x, shape)
        elif kind == "pad" and len(shape) == 2:
            self.pad(body, x, shape)
        elif kind == "lookup" and len(shape) == 2:
            self.lookup(body, x, shape)
        elif kind == "rope" and len(shape) == 2 and self.size(shape[1]) % 2 == 0:
            self.rope(body, x, shape)
        elif kind == "top_k" and len(shape) == 2:
            k = r.randint(1, self.size(shape[1]))
            out_shape = (shape[0], str(k))
            self.op(body, "top_k", [x], self.temp(out_shape), out_shape,
                    [{"name": "k", "type": "int", "value": k},
                     {"name": "largest", "type": "bool", "value": r.random() < 0.7}])
        elif kind == "math":
            self.math(body, x, shape)
        elif kind == "split" and len(shape) == 2 and self.size(shape[1]) > 1:
            cols = self.size(shape[1])
            first = r.randint(1, cols - 1)
            index = r.randint(0, 1)
            out_shape = (shape[0], str((first, cols - first)[index]))
            self.op(body, "split", [x], self.temp(out_shape), out_shape,
                    [{"name": "axis", "type": "int", "value": 1},
                     {"name": "sizes", "type": "int_list", "value": [first, cols - first]},
                     {"name": "index", "type": "int", "value": index}])
        elif kind == "view" and len(shape) == 2:
            out_shape = (shape[1], shape[0])
            if r.random() < 0.5:
                self.op(body, "transpose", [x], self.temp(out_shape), out_shape,  # never in place: refused
                        [{"name": "perm", "type": "int_list", "value": [1, 0]}])
            else:
                dims = [self.size(d) for d in out_shape]
                self.op(body, "reshape", [x], self.target(out_shape), out_shape,
                        [{"name": "shape", "type": "int_list", "value": dims}])
        elif kind == "clamp":
            lo = round(r.uniform(-1, 0), 3)
            self.op(body, "clamp", [x], self.target(shape), shape,
                    [{"name": "min", "type": "float", "value": lo},
                     {"name": "max", "type": "float", "value": round(lo + r.uniform(0, 2), 3)}])
        elif kind == "select":
            self.select(body, x, shape)
        elif kind == "join" and len(shape) == 2:
            self.join(body, x, shape)
        elif kind == "heads" and len(shape) == 2:
            self.attention(body, x, shape)
        elif kind == "cast":  # to i32 (nearest, halves away from zero; saturated) and back: whole numbers
            i = self.temp(shape, "i32")
            self.op(body, "cast", [x], i, shape, [{"name": "to", "type": "dtype", "value": "i32"},
                                                  {"name": "rounding_mode", "type": "string", "value": "nearest"}])
            self.op(body, "cast", [i], self.target(shape), shape, [{"name": "to", "type": "dtype", "value": "f32"}])
        else:
            self.binary(body, x, shape)

    def view(self, body, x, shape):
        """x under another shape of its elements: a hidden temporary made by reshape."""
        v = self.temp(shape, hidden=True)
        self.op(body, "reshape", [x], v, shape, [{"name": "shape", "type": "int_list",
                                                  "value": [self.size(d) for d in shape]}])
        return v

    def broadcast(self, body, x, shape):
        """x [N, M] seen as 3 or 4 dims ([1, N, M], [N, 1, M], [N, h, M / h], [1, h, N, M / h]
        through a transpose) with an operand of that rank or fewer whose dims are 1 at random
        places (a weight, or x's own sum over its last dim: [B, S, 1] with [B, S, D]), the result
        reshaped back to [N, M]."""
        r = self.rng
        m = self.size(shape[1])
        h = r.choice([d for d in (1, 2, 3, 4) if m % d == 0])
        layout = r.choice(["lead", "mid", "split", "heads"])
        if layout == "heads":
            a = self.heads(body, x, shape, h)
        else:
            dims = {"lead": ("1", shape[0], shape[1]), "mid": (shape[0], "1", shape[1]),
                    "split": (shape[0], str(h), str(m // h))}[layout]
            a = self.view(body, x, dims)
        dims = self.shapes[a]
        if r.random() < 0.3:
            sums = dims[:-1] + ("1",)
            y = self.temp(sums, hidden=True)
            self.op(body, r.choice(["sum_axis", "max_axis", "mean_axis"]), [a], y, sums,
                    [{"name": "axes", "type": "int_list", "value": [len(dims) - 1]},
                     {"name": "keepdims", "type": "bool", "value": True}])
        else:
            rank = r.randint(1, len(dims))
            y = self.weight(tuple(d if r.random() < 0.5 else "1" for d in dims[len(dims) - rank:]))
        op = r.choice(["add", "sub", "mul", "max", "min"])
        out = self.temp(dims, hidden=True)
        self.op(body, op, [a, y] if r.random() < 0.6 else [y, a], out, dims)
        if layout == "heads":  # back to [1, N, h, M / h] first
            back = ("1", shape[0], str(h), str(m // h))
            joined = self.temp(back, hidden=True)
            self.op(body, "transpose", [out], joined, back, [{"name": "perm", "type": "int_list",
                                                             "value": [0, 2, 1, 3]}])
            out = joined
        self.op(body, "reshape", [out], self.target(shape), shape,
                [{"name": "shape", "type": "int_list", "value": [self.size(d) for d in shape]}])

    def conv1d(self, body, x, shape):
        """x [N, M] as [1, N, M] (N channels of length M) through conv1d: groups 1, N or a divisor
        between, kernel 1-5, dilation 1-2, a bias and an activation at random; with stride 1 the
        length stays M and the result goes back to [N, M], with stride 2 it is a new [N, L]."""
        r = self.rng
        n, m = self.size(shape[0]), self.size(shape[1])
        group = r.choice([g for g in range(1, n + 1) if n % g == 0])
        k, dil, stride = r.choice([1, 2, 3, 5]), r.choice([1, 1, 2]), r.choice([1, 1, 2])
        total = dil * (k - 1)
        begin = r.randint(0, total)
        length = (m + total - dil * (k - 1) - 1) // stride + 1
        w = self.weight((shape[0], str(n // group), str(k)), scale=1.0 / (n // group * k) ** 0.5)
        ins = [self.view(body, x, ("1",) + shape), w] + ([self.weight((shape[0],))] if r.random() < 0.5 else [])
        attrs = [{"name": "group", "type": "int", "value": group},
                 {"name": "pads", "type": "int_list", "value": [begin, total - begin]},
                 {"name": "dilations", "type": "int_list", "value": [dil]},
                 {"name": "strides", "type": "int_list", "value": [stride]}]
        act = r.choice(ACTIVATIONS)
        if act:
            attrs.append({"name": "activation", "type": "string", "value": act})
        out_shape = ("1", shape[0], shape[1] if length == m else str(length))
        out = self.temp(out_shape, hidden=True)
        self.op(body, "conv1d", ins, out, out_shape, attrs)
        back = out_shape[1:]
        self.op(body, "reshape", [out], self.target(back) if back == shape else self.temp(back), back,
                [{"name": "shape", "type": "int_list", "value": [self.size(d) for d in back]}])

    def conv2d(self, body, x, shape):
        """x [N, M] as an image [1, 1, N, M]: a conv2d to c channels, a depthwise 3 x 3 conv2d, a
        max or average pool (stride 1, padded to keep the size) and the channels summed, back
        to [N, M]; or the channels' global average pool as a new [1, c]."""
        r = self.rng
        c, kh, kw = r.randint(1, 4), r.choice([1, 2, 3]), r.choice([1, 3])

        def same_pads(kh, kw):
            top, left = r.randint(0, kh - 1), r.randint(0, kw - 1)
            return [top, left, kh - 1 - top, kw - 1 - left]
        img = ("1", "1") + shape
        chans = ("1", str(c)) + shape
        a = self.view(body, x, img)
        w1 = self.weight((str(c), "1", str(kh), str(kw)), scale=1.0 / (kh * kw) ** 0.5)
        b1 = self.temp(chans, hidden=True)
        act = r.choice(ACTIVATIONS)
        self.op(body, "conv2d", [a, w1], b1, chans, [{"name": "pads", "type": "int_list", "value": same_pads(kh, kw)}] +
                ([{"name": "activation", "type": "string", "value": act}] if act else []))
        w2 = self.weight((str(c), "1", "3", "3"), scale=1.0 / 3)
        b2 = self.temp(chans, hidden=True)
        self.op(body, "conv2d", [b1, w2, self.weight((str(c),))], b2, chans,
                [{"name": "group", "type": "int", "value": c},
                 {"name": "pads", "type": "int_list", "value": same_pads(3, 3)}])
        if r.random() < 0.25:
            pooled = ("1", str(c), "1", "1")
            g = self.temp(pooled, hidden=True)
            self.op(body, "global_avg_pool", [b2], g, pooled)
            self.op(body, "reshape", [g], self.temp(("1", str(c))), ("1", str(c)),
                    [{"name": "shape", "type": "int_list", "value": [1, c]}])
            return
        ph, pw = r.choice([1, 2, 3]), r.choice([1, 2, 3])
        b3 = self.temp(chans, hidden=True)
        pool = r.choice(["max_pool2d", "avg_pool2d"])
        attrs = [{"name": "kernel_shape", "type": "int_list", "value": [ph, pw]},
                 {"name": "pads", "type": "int_list", "value": same_pads(ph, pw)}]
        if pool == "avg_pool2d" and r.random() < 0.5:
            attrs.append({"name": "count_include_pad", "type": "bool", "value": True})
        self.op(body, pool, [b2], b3, chans, attrs)
        summed = ("1",) + shape
        b4 = self.temp(summed, hidden=True)
        self.op(body, "sum_axis", [b3], b4, summed, [{"name": "axes", "type": "int_list", "value": [1]}])
        self.op(body, "reshape", [b4], self.target(shape), shape,
                [{"name": "shape", "type": "int_list", "value": [self.size(d) for d in shape]}])

    def pad(self, body, x, shape):
        """x's columns (and maybe rows) padded: constant (some pads negative: a crop), reflect,
        edge or wrap, at most 3 a side and less than the dim for reflect."""
        r = self.rng
        mode = r.choice(["constant", "reflect", "edge", "wrap"])
        pads, out_shape = [], []
        for d in shape:
            n = self.size(d)
            most = min(3, n - 1) if mode == "reflect" else 3
            least = -min(2, n - 1) if mode == "constant" else 0
            begin, end = r.randint(least, most), r.randint(least, most)
            if n + begin + end < 1:
                begin, end = 0, 0
            pads.append((begin, end))
            out_shape.append(d if begin == end == 0 else str(n + begin + end))
        out_shape = tuple(out_shape)
        attrs = [{"name": "pads", "type": "int_list", "value": [p[0] for p in pads] + [p[1] for p in pads]},
                 {"name": "mode", "type": "string", "value": mode}]
        if mode == "constant":
            attrs.append({"name": "value", "type": "float", "value": round(r.uniform(-1, 1), 3)})
        self.op(body, "pad", [x], self.temp(out_shape), out_shape, attrs)

    def lookup(self, body, x, shape):
        """An embedding lookup: a table's rows picked by constant i32 ids (or, on the C target, by
        argmax over x's rows), as gather along axis 0; or its columns along axis 1."""
        r = self.rng
        rows = r.randint(1, 12)
        if not self.vulkan and r.random() < 0.5:  # argmax's i64: the Vulkan target without a JSON has no int64
            ids = self.temp((shape[0],), "i64")
            self.op(body, "argmax_axis", [x], ids, (shape[0],), [{"name": "axis", "type": "int", "value": 1}])
            rows = self.size(shape[1])
        else:
            ids = self.indices(shape[0], rows)
        cols = r.choice(["K", "M", "N"])
        if r.random() < 0.6:
            out_shape = (shape[0], cols)
            self.op(body, "gather", [self.weight((str(rows), cols)), ids], self.target(out_shape), out_shape)
        else:
            out_shape = (cols, shape[0])
            self.op(body, "gather", [self.weight((cols, str(rows))), ids], self.target(out_shape), out_shape,
                    [{"name": "axis", "type": "int", "value": 1}])

    def rope(self, body, x, shape):
        """Rotary embedding of x [N, M] (N positions of constant i32, M channels), LLaMA's or
        GPT-J's pairs, all channels or the first rotary_dim."""
        r = self.rng
        m = self.size(shape[1])
        attrs = [{"name": "theta", "type": "float", "value": r.choice([10000.0, 500.0])},
                 {"name": "interleaved", "type": "bool", "value": r.random() < 0.5}]
        if r.random() < 0.4:
            attrs.append({"name": "rotary_dim", "type": "int", "value": 2 * r.randint(1, m // 2)})
        self.op(body, "rope", [x, self.indices(shape[0], 64)], self.target(shape), shape, attrs)

    def math(self, body, x, shape):
        """log_softmax along an axis, pow of |x|, or fma with broadcast operands."""
        r = self.rng
        pick = r.choice(["log_softmax", "pow", "fma"])
        if pick == "log_softmax" and len(shape) == 2:
            self.op(body, "log_softmax", [x], self.target(shape), shape,
                    [{"name": "axis", "type": "int", "value": r.choice([0, 1, -1])}])
        elif pick == "pow":
            a = self.temp(shape, hidden=True)
            self.op(body, "abs", [x], a, shape)
            self.op(body, "pow", [a, r.choice(["0.5", "2.0", "3.0", "1.5"])], self.target(shape), shape)
        else:
            b = self.pick(shape) if r.random() < 0.5 else self.weight((shape[-1],))
            c = self.weight((shape[-1],)) if r.random() < 0.5 else repr(round(r.uniform(-1, 1), 3))
            self.op(body, "fma", [x, b, c], self.target(shape), shape)

    def select(self, body, x, shape):
        """where(x > y, x, y') with y a literal or a row of weights: a bool value and the pick."""
        r = self.rng
        y = self.weight((shape[-1],)) if r.random() < 0.5 else repr(round(r.uniform(-1, 1), 3))
        cond = self.temp(shape, "bool")
        self.op(body, r.choice(["gt", "lt", "ge", "le"]), [x, y], cond, shape)
        other = self.pick(shape) or x
        self.op(body, "where", [cond, x, other], self.target(shape), shape)

    def heads(self, body, x, shape, h):
        """x [N, M] split into h heads: [1, h, N, M / h], through a reshape and a transpose."""
        split = ("1", shape[0], str(h), str(self.size(shape[1]) // h))
        heads = ("1", str(h), shape[0], split[3])
        a, b = self.temp(split, hidden=True), self.temp(heads, hidden=True)
        self.op(body, "reshape", [x], a, split,
                [{"name": "shape", "type": "int_list", "value": [self.size(d) for d in split]}])
        self.op(body, "transpose", [a], b, heads, [{"name": "perm", "type": "int_list", "value": [0, 2, 1, 3]}])
        return b

    def attention(self, body, x, shape):
        """Self-attention over x's rows in 1 to 4 heads (keys and values: x or other values of its
        shape), causal or not, joined back into [N, M]."""
        r = self.rng
        h = r.choice([d for d in (1, 2, 3, 4) if self.size(shape[1]) % d == 0])
        q, k, v = (self.heads(body, y, shape, h) for y in (x, self.pick(shape), self.pick(shape)))
        ctx = self.temp(self.shapes[q], hidden=True)
        attrs = [{"name": "causal", "type": "bool", "value": True}] if r.random() < 0.5 else []
        self.op(body, "attention", [q, k, v], ctx, self.shapes[q], attrs)
        back = ("1", shape[0], str(h), str(self.size(shape[1]) // h))
        joined = self.temp(back, hidden=True)
        self.op(body, "transpose", [ctx], joined, back, [{"name": "perm", "type": "int_list", "value": [0, 2, 1, 3]}])
        self.op(body, "reshape", [joined], self.temp(shape), shape,
                [{"name": "shape", "type": "int_list", "value": [self.size(d) for d in shape]}])

    def join(self, body, x, shape):
        """concat of x with another value of its rows along the columns, or a slice of x's columns."""
        r = self.rng
        others = [n for n, sh in self.values.items() if len(sh) == 2 and sh[0] == shape[0]]
        y = r.choice(others)
        width = self.size(shape[1]) + self.size(self.values[y][1])
        if r.random() < 0.5 and width <= 96:
            out_shape = (shape[0], str(width))
            self.op(body, "concat", [x, y], self.temp(out_shape), out_shape,
                    [{"name": "axis", "type": "int", "value": 1}])
            return
        cols = self.size(shape[1])
        start = r.randint(0, cols - 1)
        end = r.randint(start + 1, cols)
        out_shape = (shape[0], str(end - start))
        self.op(body, "slice", [x], self.temp(out_shape), out_shape,  # never in place: the C target refuses that
                [{"name": "starts", "type": "int_list", "value": [start]},
                 {"name": "ends", "type": "int_list", "value": [end]},
                 {"name": "axes", "type": "int_list", "value": [1]}])

    def size(self, d):
        """A dim's value: a size of the model or a number."""
        return int(d) if d.isdigit() else self.sizes[d]

    def binary(self, body, x, shape):
        """x with a value of its shape, a row of weights, a column it broadcasts along, or a literal."""
        r = self.rng
        op = r.choice(BINARY)
        choice = r.random()
        column = (shape[0], "1") if len(shape) == 2 else None
        if choice < 0.4 and self.pick(shape):
            y = self.pick(shape)
        elif choice < 0.6:
            y = self.weight((shape[-1],))
        elif choice < 0.75 and column and self.pick(column):
            y = self.pick(column)
        else:
            y = repr(round(r.uniform(0.25, 2.0), 3))
        a, b = (x, y) if r.random() < 0.7 or is_literal(y) else (y, x)  # a literal stays second
        if op == "div" and not is_literal(b):  # by something away from zero: 1 + |b|
            b_shape = self.shapes[base_name(b)]
            d = self.temp(b_shape, hidden=True)  # its own shape: maybe a row, never a statement's x
            self.op(body, "abs", [b], d, b_shape)
            self.op(body, "add", [d, "1.0"], d, b_shape)
            b = d
        out_shape = shape if self.shapes.get(base_name(a), shape) == shape else self.shapes[base_name(b)]
        self.op(body, op, [a, b], self.target(out_shape), out_shape)

    def product(self, body, x, shape):
        """x times a weight (a matmul, or a gemm with a bias and an activation); a third of the
        time x comes through a transpose of a value of the transposed shape."""
        r = self.rng
        flipped = [n for n, sh in self.values.items() if len(sh) == 2 and sh == (shape[1], shape[0])]
        if flipped and r.random() < 0.33:
            x = self.temp(shape)
            self.op(body, "transpose", [r.choice(flipped)], x, shape, [{"name": "perm", "type": "int_list",
                                                                        "value": [1, 0]}])
        k = r.choice(["K", "M", "N"])
        w = self.weight((shape[1], k), scale=1.0 / max(1, self.size(shape[1])) ** 0.5)
        out_shape = (shape[0], k)
        if r.random() < 0.5:
            self.op(body, "matmul", [x, w], self.target(out_shape), out_shape)
            return
        bias = self.weight((k,))
        act = r.choice(ACTIVATIONS)
        attrs = [{"name": "activation", "type": "string", "value": act}] if act else []
        self.op(body, "gemm", [x, w, bias], self.target(out_shape), out_shape, attrs)

    # ---- the whole graph ----
    def build(self):
        r = self.rng
        self.var("x", "dynamic", ("N", "M"))
        self.var("acc", "persistent", ("N", "M"), init={"type": "float", "value": 0.5})
        self.values["x"] = self.shapes["x"] = ("N", "M")
        body = []
        a = self.temp(("N", "M"))
        body.append(self.node("cache_read", "OI_CACHE_READ(acc, %s)" % a,
                              cache={"base": "acc", "bracketed": False, "indices": []}, var={"name": a}))
        self.op(body, "add", [a, "x"], a, ("N", "M"))
        body.append(self.node("cache_write", "OI_CACHE_WRITE(%s, acc)" % a,
                              cache={"base": "acc", "bracketed": False, "indices": []}, var={"name": a}))
        for _ in range(r.randint(3, 10)):
            self.statement(body)
        if r.random() < 0.5:
            body.append(self.loop(body))
        if r.random() < 0.4:
            self.branch(body)
        if r.random() < 0.4 and not self.vulkan:
            self.history(body)
        for _ in range(r.randint(1, 6)):
            self.statement(body)
        for i, (name, shape) in enumerate(r.sample(sorted(self.values.items()), min(3, len(self.values)))):
            out = "y%d" % i
            self.var(out, "volatile", shape)
            self.outputs.append(out)
            body.append(self.node("transfer", "OI_TRANSFER(%s, %s)" % (name, out), **{"from": {"name": name}},
                                  to={"name": out}))
        body.append(self.node("return", "OI_RETURN()"))
        assigns = [self.node("assign", "OI_ASSIGN(%s, %s[%s])" % (n, t, ", ".join(s)), name=n, dtype=t,
                             dims=list(s)) for n, s, t in self.temps]
        blocks = [{"name": "entry", "src": self.src("OI_BLOCK(entry)"), "nodes": assigns + body}] + self.blocks
        self.count = 0
        for block in blocks:
            self.number(block["nodes"], self.count)
        return {"format": "openinfer-graph", "version": 1, "name": self.name, "next_index": self.count,
                "vars": self.vars, "blocks": blocks}

    def history(self, body):
        """A decoder's cache in miniature: a row made this step written into a persistent table
        H(t) @fixed(t=8) at the step's index, all rows so far read back as a slice H[0..len] of a
        length known at run time only, weighed against the row and summed into [1, M], then
        added to a value of the step."""
        r = self.rng
        counter = {"type": "int", "value": 0}
        for name in ("step", "len"):
            self.vars.append({"name": name, "kind": "persistent", "dtype": "i32", "dims": [], "init": counter,
                              "src": self.src("OI_VAR(%s, i32, @init(0))" % name)})
        self.var("H", "persistent", ("1", "M"), table_indices=["t"], table=True, fixed=[{"index": "t", "max": 8}])
        row = self.temp(("1", "M"))
        self.op(body, r.choice(["sum_axis", "max_axis"]), [self.pick(("N", "M")) or "x"], row, ("1", "M"),
                [{"name": "axes", "type": "int_list", "value": [0]}, {"name": "keepdims", "type": "bool", "value": True}])

        def cache(kind, text, base, indices, **fields):
            body.append(self.node(kind, text, cache={"base": base, "bracketed": bool(indices), "indices": indices},
                                  **fields))
        cache("cache_increment", "OI_CACHE_INCREMENT(len)", "len", [], amount=1)
        cache("cache_write", "OI_CACHE_WRITE(%s, H[step])" % row, "H", [{"kind": "index", "value": "step"}],
              var={"name": row})
        hist, mix = self.temp(("?", "1", "M"), hidden=True), self.temp(("?", "1", "M"), hidden=True)
        cache("cache_read", "OI_CACHE_READ(H[0..len], %s)" % hist, "H",
              [{"kind": "slice", "start": 0, "end": "len"}], var={"name": hist})
        self.op(body, "mul", [hist, row], mix, ("?", "1", "M"))
        summed = self.temp(("1", "M"), hidden=True)
        self.op(body, "sum_axis", [mix], summed, ("1", "M"), [{"name": "axes", "type": "int_list", "value": [0]}])
        self.op(body, "add", [self.pick(("N", "M")) or "x", summed], self.target(("N", "M")), ("N", "M"))
        cache("cache_increment", "OI_CACHE_INCREMENT(step)", "step", [], amount=1)

    def branch(self, body):
        """if sum(v) > c (or <): a block of 1 to 3 statements, else one of 0 to 3, on a value the step
        computed. A temporary one block writes and later statements read is zeros when the other
        block ran (the simulator's rule for a temporary read before it is written)."""
        r = self.rng
        total, cond = self.temp((), hidden=True), self.temp((), "bool")
        self.op(body, "sum_axis", [self.pick()], total, (), [{"name": "axes", "type": "int_list", "value": [0, 1]}])
        self.op(body, r.choice(["gt", "lt"]), [total, repr(round(r.uniform(-2, 2), 3))], cond, ())
        names = []
        for least in (1, 0):
            name = "b%d_%s" % (len(self.blocks) // 2, "then" if least else "else")
            nodes = []
            for _ in range(r.randint(least, 3)):
                self.statement(nodes)
            nodes.append(self.node("return", "OI_RETURN()"))
            self.blocks.append({"name": name, "src": self.src("OI_BLOCK(%s)" % name), "nodes": nodes})
            names.append(name)
        body.append(self.node("branch", "OI_BRANCH(%s, %s, %s)" % (cond, names[0], names[1]), cond=cond,
                              then=names[0], **{"else": names[1]}))

    def loop(self, outer):
        """A loop of 1 to 3 iterations whose body updates a carried temporary in place (a copy of
        a value made before it, in outer, when the value picked is no temporary)."""
        r = self.rng
        carried = self.pick()
        shape = self.values[carried]
        if not carried.startswith("t"):
            copy = self.temp(shape)
            self.op(outer, "mul", [carried, "1.0"], copy, shape)
            carried = copy
        body, end = [], r.randint(1, 3)
        self.loop_index = ("l", end)
        for _ in range(r.randint(1, 4)):
            self.statement(body)
        self.loop_index = None
        others = [n for n in self.values if self.values[n] == shape and n.startswith("t") and n != carried]
        self.op(body, r.choice(["add", "max"]), [r.choice(others) if others else carried, carried], carried, shape)
        return self.node("loop", "OI_LOOP(layers, l, 0, %d)" % end, name="layers", var="l", start=0, end=end,
                         body=body)

    def number(self, nodes, start):
        self.count = start
        for n in nodes:
            n["index"] = self.count
            self.count += 1
            if n["kind"] == "loop":
                self.number(n["body"], self.count)

    def model_bytes(self):
        items = []
        for name, values in self.tensors.items():
            vt, dims, data = encode_array(values, None)
            items.append(TensorItem(name, vt, dims, data))
        return encode_file(self.sizes, [], items)


def compare(name, got, want, gpu):
    """None when got matches want within the bounds, else what differs."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return "%s: %s %s against the simulator's %s %s" % (name, got.dtype, got.shape, want.dtype, want.shape)
    tol = GPU_TOL if gpu else RTOL
    close = np.isclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    if close.all():
        return None
    i = np.argwhere(~close)[0]
    return "%s%s: %r against the simulator's %r (%d of %d elements differ)" % (
        name, list(i), got[tuple(i)], want[tuple(i)], int((~close).sum()), got.size)


def vulkan_setup(cli):
    """The Vulkan target's needs (check_vulkan.py's): VOLK_DIR, or None where they are missing."""
    volk = check_vulkan.volk_dir()
    if check_vulkan.vulkan_device_index(cli) is None or volk is None or not shutil.which("glslc"):
        return None
    return volk


def verdict(g, folder, got, said, gpu, verbose, what=""):
    """'ok' when every output in folder/got matches folder/sim and the run `said` no validation
    message, else 'failed' (printed, as is every seed with verbose)."""
    problems = [compare(out, np.load(os.path.join(folder, got, out + ".npy")),
                        np.load(os.path.join(folder, "sim", out + ".npy")), gpu) for out in g.outputs]
    problems = [p for p in problems if p]
    if "VUID" in said or "Validation" in said:
        problems.append("validation messages:\n" + said[:2000])
    if verbose or problems:
        print("seed %d: N %d, M %d, K %d, %d nodes%s: %s" % (g.seed, g.sizes["N"], g.sizes["M"], g.sizes["K"],
                                                           g.count, what, "; ".join(problems) or "ok"), flush=True)
    return "failed" if problems else "ok"


def check_backend(cli, g, folder, flags, graph_path, model, verbose):
    """The simulator's Vulkan backend against its CPU kernels on one seed's graph: 'ok' or 'failed'."""
    run([cli, "run", model, graph_path, "--device", "cpu"] + flags + ["--out", os.path.join(folder, "sim")])
    said = run([cli, "run", model, graph_path, "--device", "vulkan"] + flags + ["--out", os.path.join(folder, "vulkan")],
               env=check_vulkan.validation_env())
    return verdict(g, folder, "vulkan", said, True, verbose, ", the simulator's Vulkan backend")


def check_seed(cli, seed, folder, cflags, volk, verbose, backend=False):
    """'ok', 'refused' (the Vulkan target only: a statement it cannot run yet) or 'failed'.
    With backend, the simulator's Vulkan backend against its CPU kernels instead (no synthesis)."""
    g = RandomGraph(seed, vulkan=bool(volk))
    graph = g.build()
    os.makedirs(folder, exist_ok=True)
    graph_path, model = os.path.join(folder, "graph.json"), os.path.join(folder, "model.oinf")
    with open(graph_path, "w") as f:
        json.dump(graph, f, indent=1)
    with open(model, "wb") as f:
        f.write(g.model_bytes())
    x = np.random.default_rng(seed).uniform(-2, 2, (g.sizes["N"], g.sizes["M"])).astype(np.float32)
    np.save(os.path.join(folder, "x.npy"), x)
    flags = ["--steps", str(STEPS), "--input", "x=" + os.path.join(folder, "x.npy")]
    for out in g.outputs:
        flags += ["--fetch", out]
    if backend:
        return check_backend(cli, g, folder, flags, graph_path, model, verbose)
    gen = os.path.join(folder, "gen")
    target = option("--arch", None) or ("vulkan" if volk else "cpu")
    synth = subprocess.run([cli, "synth", model, graph_path, "--target", target, "--out", gen],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if synth.returncode != 0 and volk and "cannot synthesize this yet" in synth.stdout:
        if verbose:
            print("seed %d: refused: %s" % (seed, synth.stdout.strip()), flush=True)
        return "refused"
    if synth.returncode != 0:
        print("seed %d: FAILED: openinfer synth:\n%s" % (seed, synth.stdout), flush=True)
        return "failed"
    make = ["make", "-s", "-C", gen, "CFLAGS=" + cflags]
    run(make + (["VOLK_DIR=" + volk] if volk else []))
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx:  # the emitted C also compiles as C++17, as the examples' folders do
        run([cxx, "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only", "-x", "c++"] +
            (["-I" + volk] if volk else []) + [g.name + ".c"], cwd=gen)
    env = check_vulkan.validation_env() if volk else None  # the Khronos validation layer: any message fails
    said = run([os.path.join(gen, g.name), model] + flags + ["--out", os.path.join(folder, "emitted")], env=env)
    run([cli, "run", model, graph_path] + flags + ["--out", os.path.join(folder, "sim")])
    return verdict(g, folder, "emitted", said, bool(volk), verbose)


def write_corpus(folder, first, end):
    """tests/fuzz/fuzz_synth.c's inputs, one per seed: the model's length (4 bytes, little-endian),
    the model, the graph's JSON. Seeds whose input passes 64 KiB (run_fuzzer.sh's -max_len) are left out."""
    os.makedirs(folder, exist_ok=True)
    for seed in range(first, end):
        for vulkan in (False, True):
            g = RandomGraph(seed, vulkan=vulkan)
            graph = json.dumps(g.build(), separators=(",", ":")).encode()
            model = g.model_bytes()
            data = len(model).to_bytes(4, "little") + model + graph
            if len(data) <= 65536:
                with open(os.path.join(folder, "rand%d%s" % (seed, "_vk" if vulkan else "")), "wb") as f:
                    f.write(data)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    if sys.argv[1] == "--corpus":
        first, end = (int(v) for v in option("--seeds", "0:40").split(":"))
        write_corpus(sys.argv[2], first, end)
        return
    cli = os.path.abspath(sys.argv[1])
    first, end = (int(v) for v in option("--seeds", "0:40").split(":"))
    keep, verbose, cflags = option("--keep", None), "--verbose" in sys.argv, option("--cflags", CFLAGS)
    volk, backend = None, option("--target", "cpu") == "backend"
    if backend and check_vulkan.vulkan_device_index(cli) is None:
        print("skipped: the simulator's Vulkan backend needs a Vulkan device")
        sys.exit(77)
    if option("--target", "cpu") == "vulkan":
        volk = vulkan_setup(cli)
        if not volk:
            print("skipped: the Vulkan target needs a Vulkan device, glslc and volk")
            sys.exit(77)
    work = keep or tempfile.mkdtemp(prefix="oi-random-graphs-")
    results = {}
    try:
        for seed in range(first, end):
            try:
                results[seed] = check_seed(cli, seed, os.path.join(work, "seed%d" % seed), cflags, volk, verbose,
                                           backend)
            except SystemExit as e:
                print("seed %d: %s" % (seed, e), flush=True)
                results[seed] = "failed"
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    failed = [seed for seed, r in results.items() if r == "failed"]
    refused = sum(r == "refused" for r in results.values())
    print("random graphs, %s: %d of %d seeds match the simulator%s%s" % (
        "the simulator's Vulkan backend" if backend else "Vulkan target" if volk else "C target", sum(r == "ok" for r in results.values()), len(results),
        ", %d refused" % refused if refused else "", "; failed: %s" % failed if failed else ""))
    # the Vulkan target must run most of them: a check that passes by refusing everything checks nothing
    sys.exit(1 if failed or refused * 2 > len(results) else 0)


if __name__ == "__main__":
    main()
