#!/usr/bin/env python3
"""cublas_f16.py - cuBLAS's f16 n x n x n matmul through torch, the line the
emitted cooperative-matrix matmul is compared with: synth_encoder.sh's matmul
part and synth_matmul_sweep.sh's run both print it from here, so the two
reference numbers come from one measurement.

Timed with CUDA events, one product per event pair, after a warm-up.

Usage: python3 cublas_f16.py [N] [REPS]   (4096 and 50 unless given)
Prints: cublas_f16_ms best=B median=M device=NAME
"""
import sys

import torch


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    a = torch.rand(n, n, dtype=torch.float16, device="cuda")
    b = torch.rand(n, n, dtype=torch.float16, device="cuda")
    for _ in range(20):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, b)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    print("cublas_f16_ms best=%.4f median=%.4f device=%s" % (times[0], times[len(times) // 2],
                                                          torch.cuda.get_device_name()))


if __name__ == "__main__":
    main()
