#!/usr/bin/env python3
"""encoder_torch.py - the PyTorch eager side of bench/gpu/encoder_peer.c.

The 2-layer encoder of bench/bench_encoder.c (BERT-style post-norm, exact
GELU, d 384, 12 heads, seq 128), with the weights and input of
bench/encoder/gen_encoder.py (numpy, seeds 0 and 1), in f32 on CUDA (no
TF32). A step is what encoder_peer times on our side: the input from the
host, the block, the output back to the host. Prints the largest difference
from gen_encoder's float64 reference, then
    torch_ms best=<ms> median=<ms> runs=<n> device=<name>
Usage: python3 encoder_torch.py [--runs 50]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "encoder"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import gen_encoder as g  # noqa: E402


def forward(x, layers):
    """x: [B*S, D] on the GPU; the block as bench_encoder.c's graph runs it."""
    h = x
    for p in layers:
        def heads(t):
            return t.view(g.B, g.S, g.H, g.DH).transpose(1, 2)

        q = heads(torch.addmm(p["bq"], h, p["wq"]))
        k = heads(torch.addmm(p["bk"], h, p["wk"]))
        v = heads(torch.addmm(p["bv"], h, p["wv"]))
        a = F.scaled_dot_product_attention(q, k, v)  # softmax(q k^T / sqrt(Dh)) v
        a = a.transpose(1, 2).reshape(g.B * g.S, g.D)
        h = F.layer_norm(h + torch.addmm(p["bo"], a, p["wo"]), (g.D,), p["ln1_g"], p["ln1_b"], 1e-5)
        f = torch.addmm(p["b2"], F.gelu(torch.addmm(p["b1"], h, p["w1"])), p["w2"])
        h = F.layer_norm(h + f, (g.D,), p["ln2_g"], p["ln2_b"], 1e-5)
    return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("encoder_torch: no CUDA device")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    layers = [{k: torch.from_numpy(v).to(dev) for k, v in p.items()} for p in g.make_weights()]
    x = np.random.default_rng(1).normal(0.0, 1.0, (g.B, g.S, g.D)).astype(np.float32)
    x_host = torch.from_numpy(x.reshape(g.B * g.S, g.D)).pin_memory()

    def step():
        with torch.no_grad():
            return forward(x_host.to(dev, non_blocking=True), layers).cpu()

    ref = g.reference(x, g.make_weights()).reshape(g.B * g.S, g.D)
    print(f"encoder_torch: max |torch - numpy float64| {np.abs(step().numpy() - ref).max():.3g}")
    for _ in range(5):
        step()
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        step()  # .cpu() waits for the GPU
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"torch_ms best={min(times):.4f} median={statistics.median(times):.4f} runs={args.runs} "
          f"device={torch.cuda.get_device_name(0).replace(' ', '_')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
