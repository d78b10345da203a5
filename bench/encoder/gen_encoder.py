#!/usr/bin/env python3
"""Write the benchmark's 2-layer transformer encoder as .oinf (ours) and .onnx (ONNX Runtime's).

    python3 bench/encoder/gen_encoder.py OUTDIR [--batch B] [--seq S] [--layers L]

Writes OUTDIR/encoder.oinf, OUTDIR/encoder.onnx and OUTDIR/encoder_input.npy. Needs numpy,
onnx and onnxruntime (PyPI). Both files hold the same f32 weights (numpy, seed 0).

The block (BERT-style post-norm, exact erf GELU), per layer l of L = 2, on x [B=1, S=128, D=384]
(--batch, --seq and --layers change B, S and L: bench/synth_vs_sim.py's MiniLM-sized encoder is
--batch 8 --seq 64 --layers 6):
    q, k, v = x Wq + bq, x Wk + bk, x Wv + bv           split into H = 12 heads of Dh = 32
    a = softmax(q k^T / sqrt(Dh)) v                      heads joined back to [B, S, D]
    x = LayerNorm(x + a Wo + bo)                         epsilon 1e-5, over D
    x = LayerNorm(x + GELU(x W1 + b1) W2 + b2)           FFN 384 -> 1536 -> 384

The ONNX graph spells this with plain opset-20 ops (MatMul, Add, Reshape, Transpose, Mul,
Softmax, LayerNormalization, Gelu), as an exporter would; ONNX Runtime is free to fuse them.
encoder.oinf also holds the input (`input.x`), ONNX Runtime's output (`ref.ort`) and a float64
numpy output (`ref.numpy`), so the C benchmark checks its result without Python.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from dataclass_to_oinf import SizeVar, write_oinf  # noqa: E402

B, S, D, H, F, LAYERS = 1, 128, 384, 12, 1536, 2
DH = D // H
EPSILON = 1e-5
OPSET = 20  # Gelu is an ONNX op from opset 20 on


def make_weights(seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Per layer: projections ~ N(0, 1/fan_in), biases and norm offsets small."""
    rng = np.random.default_rng(seed)

    def dense(fan_in: int, fan_out: int) -> np.ndarray:
        return rng.normal(0.0, fan_in ** -0.5, (fan_in, fan_out)).astype(np.float32)

    def small(n: int, scale: float = 0.02) -> np.ndarray:
        return rng.normal(0.0, scale, n).astype(np.float32)

    layers = []
    for _ in range(LAYERS):
        layers.append({
            "wq": dense(D, D), "bq": small(D), "wk": dense(D, D), "bk": small(D),
            "wv": dense(D, D), "bv": small(D), "wo": dense(D, D), "bo": small(D),
            "ln1_g": (1.0 + small(D, 0.1)).astype(np.float32), "ln1_b": small(D, 0.1),
            "w1": dense(D, F), "b1": small(F), "w2": dense(F, D), "b2": small(D),
            "ln2_g": (1.0 + small(D, 0.1)).astype(np.float32), "ln2_b": small(D, 0.1),
        })
    return layers


# ---- the float64 numpy reference ----
def layer_norm(x, g, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPSILON) * g + b


def gelu(x):
    from math import erf, sqrt
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / sqrt(2.0)))


def reference(x: np.ndarray, layers) -> np.ndarray:
    h = x.astype(np.float64)
    for p in layers:
        w = {k: v.astype(np.float64) for k, v in p.items()}

        def heads(t):
            return t.reshape(B, S, H, DH).transpose(0, 2, 1, 3)

        q, k, v = heads(h @ w["wq"] + w["bq"]), heads(h @ w["wk"] + w["bk"]), heads(h @ w["wv"] + w["bv"])
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(DH)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attn = (scores / scores.sum(axis=-1, keepdims=True)) @ v
        attn = attn.transpose(0, 2, 1, 3).reshape(B, S, D)
        h = layer_norm(h + attn @ w["wo"] + w["bo"], w["ln1_g"], w["ln1_b"])
        ffn = gelu(h @ w["w1"] + w["b1"]) @ w["w2"] + w["b2"]
        h = layer_norm(h + ffn, w["ln2_g"], w["ln2_b"])
    return h


# ---- the ONNX graph ----
def onnx_model(layers):
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def node(op: str, inputs, name: str, **attrs) -> str:
        nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    split_shape = const("split_shape", np.array([0, 0, H, DH], np.int64))
    join_shape = const("join_shape", np.array([0, 0, D], np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(DH), np.float32))
    h = "x"
    for i, p in enumerate(layers):
        w = {k: const(f"l{i}.{k}", v) for k, v in p.items()}
        t = f"l{i}."

        def proj(src: str, wname: str, bname: str, out: str) -> str:
            return node("Add", [node("MatMul", [src, w[wname]], out + "_mm"), w[bname]], out)

        def split(src: str, out: str, perm) -> str:
            return node("Transpose", [node("Reshape", [src, split_shape], out + "_r")], out, perm=perm)

        q = split(proj(h, "wq", "bq", t + "q"), t + "qh", [0, 2, 1, 3])
        k_t = split(proj(h, "wk", "bk", t + "k"), t + "kt", [0, 2, 3, 1])
        v = split(proj(h, "wv", "bv", t + "v"), t + "vh", [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k_t], t + "qk"), scale], t + "scores")
        ctx = node("MatMul", [node("Softmax", [scores], t + "probs", axis=-1), v], t + "ctx")
        ctx = node("Reshape", [node("Transpose", [ctx], t + "ctx_t", perm=[0, 2, 1, 3]), join_shape], t + "ctx_j")
        res = node("Add", [h, proj(ctx, "wo", "bo", t + "o")], t + "res1")
        h = node("LayerNormalization", [res, w["ln1_g"], w["ln1_b"]], t + "ln1", axis=-1, epsilon=EPSILON)
        ffn = node("Gelu", [proj(h, "w1", "b1", t + "f1")], t + "gelu")
        res = node("Add", [h, proj(ffn, "w2", "b2", t + "f2")], t + "res2")
        h = node("LayerNormalization", [res, w["ln2_g"], w["ln2_b"]], t + "ln2", axis=-1, epsilon=EPSILON)
    nodes.append(helper.make_node("Identity", [h], ["y"], name="output"))
    graph = helper.make_graph(nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, D])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, D])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9  # what ONNX Runtime 1.17+ reads
    return model


def run_ort(path: str, x: np.ndarray, threads: int = 2) -> np.ndarray:
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@dataclass
class EncoderModel:
    B: SizeVar = B  # type: ignore[assignment]
    S: SizeVar = S  # type: ignore[assignment]
    D: SizeVar = D  # type: ignore[assignment]
    H: SizeVar = H  # type: ignore[assignment]
    Dh: SizeVar = DH  # type: ignore[assignment]
    F: SizeVar = F  # type: ignore[assignment]
    num_layers: SizeVar = LAYERS  # type: ignore[assignment]
    tensors: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)


def main() -> None:
    import onnx

    global B, S, LAYERS
    args = sys.argv[1:]
    for flag in ("--batch", "--seq", "--layers"):
        if flag in args:
            i = args.index(flag)
            value = int(args[i + 1])
            del args[i:i + 2]
            if flag == "--batch":
                B = value
            elif flag == "--seq":
                S = value
            else:
                LAYERS = value
    outdir = args[0] if args else "."
    os.makedirs(outdir, exist_ok=True)
    layers = make_weights()
    x = np.random.default_rng(1).normal(0.0, 1.0, (B, S, D)).astype(np.float32)
    onnx_path = os.path.join(outdir, "encoder.onnx")
    model = onnx_model(layers)
    onnx.checker.check_model(model)
    onnx.save(model, onnx_path)
    ort_out = run_ort(onnx_path, x)
    ref = reference(x, layers)
    print(f"encoder: ONNX Runtime vs float64 numpy: max |diff| {np.abs(ort_out - ref).max():.3g}")

    oinf = EncoderModel(B=B, S=S, num_layers=LAYERS)  # type: ignore[arg-type]
    for i, p in enumerate(layers):
        for k, v in p.items():
            oinf.tensors[f"enc.{i}.{k}"] = v
    oinf.tensors.update({"input.x": x, "ref.ort": ort_out.astype(np.float32),
                         "ref.numpy": ref.astype(np.float32)})
    oinf.metadata = {"epsilon": np.float32(EPSILON), "norm": "post", "gelu": "exact"}
    write_oinf(oinf, os.path.join(outdir, "encoder.oinf"))
    np.save(os.path.join(outdir, "encoder_input.npy"), x)
    print(f"wrote {outdir}/encoder.oinf, encoder.onnx, encoder_input.npy")


if __name__ == "__main__":
    main()
