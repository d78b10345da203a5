#!/usr/bin/env python3
"""The benchmark's 2-layer transformer encoder in PyTorch eager on the GPU: the peer of
`bench_encoder --no-ort` run with OPENINFER_BACKEND=vulkan on the same machine.

    python3 bench/gpu/encoder_torch.py DATA_DIR [--runs N] [--ours FILE]

DATA_DIR holds encoder.oinf as bench/encoder/gen_encoder.py writes it (weights, `input.x`, and
`ref.numpy`, the float64 result). The block is the one gen_encoder.py documents (post-norm, exact
GELU, 12 heads), written with plain torch ops in f32 (TF32 off, so cuBLAS does true f32 math like
our shaders). Prints the largest difference to the float64 reference, then best and median
latency of N steps timed with CUDA events after a warm-up. With --ours (bench_encoder's output),
it also prints ours / torch for the best and the median.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "encoder"))

from openinfer_oinf.reader import read_oinf_file  # noqa: E402

LAYER_KEYS = ("wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "w1", "b1", "w2", "b2",
              "ln1_g", "ln1_b", "ln2_g", "ln2_b")


def load(data_dir: str):
    """The model's tensors by name, as numpy arrays."""
    f = read_oinf_file(os.path.join(data_dir, "encoder.oinf"))
    return {t.name: f.tensor_values(t) for t in f.tensors if t.has_data}


def encoder(torch, x, layers, heads: int, eps: float):
    """h = LN(h + attn(h) Wo + bo); h = LN(h + GELU(h W1 + b1) W2 + b2), per layer."""
    F = torch.nn.functional
    s, d = x.shape
    dh = d // heads
    h = x
    for w in layers:
        def split(t):
            return t.view(s, heads, dh).transpose(0, 1)  # [H, S, Dh]

        q = split(torch.addmm(w["bq"], h, w["wq"]))
        k = split(torch.addmm(w["bk"], h, w["wk"]))
        v = split(torch.addmm(w["bv"], h, w["wv"]))
        scores = torch.softmax(torch.matmul(q, k.transpose(1, 2)) / dh ** 0.5, dim=-1)
        joined = torch.matmul(scores, v).transpose(0, 1).reshape(s, d)
        h = F.layer_norm(h + torch.addmm(w["bo"], joined, w["wo"]), (d,), w["ln1_g"], w["ln1_b"], eps)
        ffn = torch.addmm(w["b2"], F.gelu(torch.addmm(w["b1"], h, w["w1"])), w["w2"])
        h = F.layer_norm(h + ffn, (d,), w["ln2_g"], w["ln2_b"], eps)
    return h


def ours_from(path: str):
    """bench_encoder's line `ours: best X ms, median Y ms`."""
    text = open(path).read()
    m = re.search(r"ours: best ([0-9.]+) ms, median ([0-9.]+) ms", text)
    return (float(m.group(1)), float(m.group(2))) if m else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--ours", help="bench_encoder's output, for the ratios")
    args = ap.parse_args()

    import torch
    from gen_encoder import EPSILON, H, LAYERS
    if not torch.cuda.is_available():
        print("encoder_torch: SKIPPED: no CUDA device")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    tensors = load(args.data_dir)

    def on_gpu(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(dev)

    layers = [{k: on_gpu(tensors[f"enc.{l}.{k}"]) for k in LAYER_KEYS} for l in range(LAYERS)]
    x = on_gpu(tensors["input.x"]).reshape(-1, layers[0]["wq"].shape[0])
    ref = tensors["ref.numpy"].reshape(x.shape)

    with torch.inference_mode():
        out = encoder(torch, x, layers, H, EPSILON)
        torch.cuda.synchronize()
        diff = float(np.abs(out.cpu().numpy().astype(np.float64) - ref).max())
        for _ in range(20):
            encoder(torch, x, layers, H, EPSILON)
        torch.cuda.synchronize()
        times = []
        for _ in range(args.runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            encoder(torch, x, layers, H, EPSILON)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    best, median = min(times), statistics.median(times)
    print(f"torch eager ({torch.cuda.get_device_name(0)}, f32, TF32 off): max |torch - numpy float64| {diff:.3g}")
    print(f"torch: best {best:.3f} ms, median {median:.3f} ms ({args.runs} runs)")
    if args.ours:
        ours = ours_from(args.ours)
        if ours:
            print(f"encoder ours / torch eager: best {ours[0] / best:.2f}, median {ours[1] / median:.2f}")
        else:
            print("encoder ours / torch eager: no `ours:` line in", args.ours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
