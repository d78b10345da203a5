#!/usr/bin/env python3
"""torch_peer.py - the PyTorch (CUDA) side of the real-GPU comparison.

Runs the shapes of bench/gpu/vk_peer.c with PyTorch on the same GPU, timed
with CUDA events (best of several runs after a warm-up), and, given the
output of vk_peer (or of `test_vulkan perf`), prints ours / torch for each:

  matmul f32   n x n x n, cuBLAS fp32 (allow_tf32 = False: no tensor cores)
  matmul f16   n x n x n, cuBLAS fp16 (tensor cores)
  add          f32 [n, 4n], 3 tensors moved
  copy         f32 [n, 4n] device-to-device (Tensor.copy_), 2 tensors moved
  sum_axis     f32 [n, 4n] summed over the last axis, the input moved
  softmax      f32 [n, n] over rows, 2 tensors moved

Usage: python3 torch_peer.py [--n 4096] [--reps 20] [--ours vk_peer.log]
The goals (issue 7): f32 matmul >= 0.5 of cuBLAS fp32; elementwise and
softmax bandwidth >= 0.7 of a device-to-device copy.
"""
import argparse
import re
import sys

import torch


def best_ms(fn, reps):
    """Best time of fn() in milliseconds over reps runs, after 3 warm-ups."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best = None
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop)
        best = ms if best is None or ms < best else best
    return best


def parse_ours(path):
    """Figures from vk_peer ('vk_peer: key value unit') or test_vulkan perf lines."""
    ours = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"vk_peer: (\w+) ([\d.]+) (GFLOP/s|GB/s)", line)
            if m:
                ours[m.group(1)] = float(m.group(2))
                continue
            m = re.match(r"perf: matmul (f32|f16) .*?, ([\d.]+) GFLOP/s", line)
            if m:
                ours.setdefault("matmul_" + m.group(1), float(m.group(2)))
            for key, pat in (("add", r"perf: add f32 .*?, ([\d.]+) GB/s"),
                             ("copy", r"perf: copy .*?, ([\d.]+) GB/s"),
                             ("sum_axis", r"perf: sum_axis .*?, ([\d.]+) GB/s")):
                m = re.match(pat, line)
                if m:
                    ours.setdefault(key, float(m.group(1)))
    return ours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ours", help="vk_peer / test_vulkan perf output to compare with")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_peer: no CUDA device")
        return 77
    n, reps = args.n, args.reps
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"torch_peer: torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
    g = torch.Generator(device=dev)
    g.manual_seed(0)
    theirs = {}

    for key, dt in (("matmul_f32", torch.float32), ("matmul_f16", torch.float16)):
        a = torch.rand(n, n, device=dev, generator=g, dtype=torch.float32).to(dt) * 2 - 1
        b = torch.rand(n, n, device=dev, generator=g, dtype=torch.float32).to(dt) * 2 - 1
        c = torch.empty(n, n, device=dev, dtype=dt)
        ms = best_ms(lambda: torch.matmul(a, b, out=c), reps)
        theirs[key] = 2.0 * n * n * n / (ms * 1e6)
        del a, b, c

    rows, cols = n, 4 * n
    x = torch.rand(rows, cols, device=dev, generator=g) * 2 - 1
    y = torch.rand(rows, cols, device=dev, generator=g) * 2 - 1
    z = torch.empty_like(x)
    r = torch.empty(rows, device=dev)
    nbytes = rows * cols * 4
    theirs["add"] = 3 * nbytes / (best_ms(lambda: torch.add(x, y, out=z), reps) * 1e6)
    theirs["copy"] = 2 * nbytes / (best_ms(lambda: z.copy_(x), reps) * 1e6)
    theirs["sum_axis"] = nbytes / (best_ms(lambda: torch.sum(x, dim=-1, out=r), reps) * 1e6)
    del x, y, z, r

    s = torch.rand(n, n, device=dev, generator=g) * 2 - 1
    so = torch.empty_like(s)
    theirs["softmax"] = 2 * n * n * 4 / (best_ms(lambda: torch.softmax(s, dim=-1, out=so), reps) * 1e6)

    units = {"matmul_f32": "GFLOP/s", "matmul_f16": "GFLOP/s"}
    for key, v in theirs.items():
        print(f"torch_peer: {key} {v:.1f} {units.get(key, 'GB/s')}")

    if args.ours:
        ours = parse_ours(args.ours)
        print()
        print(f"{'figure':<12} {'ours':>12} {'torch':>12} {'ours/torch':>11}   unit")
        for key, v in theirs.items():
            if key in ours:
                print(f"{key:<12} {ours[key]:>12.1f} {v:>12.1f} {ours[key] / v:>11.3f}   {units.get(key, 'GB/s')}")
            else:
                print(f"{key:<12} {'-':>12} {v:>12.1f} {'-':>11}   {units.get(key, 'GB/s')}")
        if "copy" in theirs:
            print()
            print("bandwidth as a fraction of torch's device-to-device copy (goal >= 0.7):")
            for key in ("add", "copy", "sum_axis", "softmax"):
                if key in ours:
                    print(f"  ours {key:<9} {ours[key] / theirs['copy']:.3f}   "
                          f"(torch {key}: {theirs[key] / theirs['copy']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
