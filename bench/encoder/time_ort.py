#!/usr/bin/env python3
"""Time ONNX Runtime (CPU) on the encoder that gen_encoder.py wrote.

    python3 bench/encoder/time_ort.py OUTDIR [--threads 2] [--runs 20]

Loads OUTDIR/encoder.onnx and OUTDIR/encoder_input.npy, runs 3 warm-up steps, then times
`runs` calls of InferenceSession.run one by one (graph optimizations at ORT's default, all;
intra-op threads as given, one inter-op thread, sequential execution). The last line is for
bench_encoder.c to read:
    ort_ms best=<ms> median=<ms> runs=<n> threads=<t> version=<onnxruntime version> cpu_best=<ms>
cpu_best is the least CPU time of a run (process_time: every thread of the process), which a
loaded machine disturbs less than the wall time (with 1 thread ORT does not spin).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def main() -> None:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(os.path.join(args.outdir, "encoder.onnx"), opts,
                                providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(args.outdir, "encoder_input.npy"))
    for _ in range(3):
        sess.run(None, {"x": x})
    times, cpu = [], []
    for _ in range(args.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        sess.run(None, {"x": x})
        times.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    print(f"ort_ms best={min(times):.4f} median={statistics.median(times):.4f} runs={args.runs} "
          f"threads={args.threads} version={ort.__version__} cpu_best={min(cpu):.4f}", flush=True)


if __name__ == "__main__":
    main()
