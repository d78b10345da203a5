#!/usr/bin/env python3
"""The synthesized C against the simulator on the same graph, model and inputs.

    bench/synth_vs_sim.py BUILD_DIR [EXAMPLE...] [--steps N] [--isa avx2] [--cflags FLAGS]
                                                 (default: digits residual_mlp streaming)

For each example (tests/synth/export_EXAMPLE writes its graph, model and
inputs) it synthesizes the folder, builds it (default -O3 -march=native
-std=c11), then alternates `openinfer run --steps N` and the emitted driver
with the same flags, five times each, and prints the best time per step of
each and the ratio (simulator / emitted: how many times faster the emitted
code is), and the least CPU time of each summed over its threads (on a
loaded machine the wall times wait for a core). Both times include starting the process and opening the model,
spread over N steps. (kv_cache is left out of the default: its table holds
64 steps.) The simulator uses every core (its default pool); the emitted
code runs on one thread.

`encoder` is bench_encoder's block: bench/encoder/gen_encoder.py writes its
model and the same block as ONNX, the emitted output is checked against
ONNX Runtime's (max |diff| <= 1e-3, as bench_encoder checks the simulator),
and ONNX Runtime is timed in the same run (bench/encoder/time_ort.py, 2
intra-op threads, best of 5 x N runs).

--isa avx2 forces the AVX2 path: OPENINFER_ISA=avx2 for the simulator and
the emitted driver (its gemm reads it too), and the emitted code built with
-mavx2 -mfma -DOI_GEMM_AVX2_ONLY instead of -march=native.
"""
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def best_of(cmd, env, runs=5):
    """The best wall time of `runs` runs, and the least CPU time (all threads)."""
    best = cpu = None
    for _ in range(runs):
        t, c = time.perf_counter(), children_cpu()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        dt, dc = time.perf_counter() - t, children_cpu() - c
        best = dt if best is None or dt < best else best
        cpu = dc if cpu is None or dc < cpu else cpu
    return best, cpu


def take(args, flag, default):
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


def encoder_model(work):
    """bench_encoder's model and input; the input as the graph's x [B*S, D]."""
    ort_dir = os.path.join(work, "ort")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench/encoder/gen_encoder.py"), ort_dir], check=True,
                   stdout=subprocess.DEVNULL)
    x = np.load(os.path.join(ort_dir, "encoder_input.npy"))
    in_dir = os.path.join(work, "in")
    for f in os.listdir(in_dir):
        os.remove(os.path.join(in_dir, f))
    np.save(os.path.join(in_dir, "x.npy"), x.reshape(-1, x.shape[-1]))
    return ort_dir, os.path.join(ort_dir, "encoder.oinf")


def ort_check_and_time(ort_dir, out_dir, steps):
    import onnxruntime as ort
    sess = ort.InferenceSession(os.path.join(ort_dir, "encoder.onnx"), providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(ort_dir, "encoder_input.npy"))
    want = sess.run(None, {"x": x})[0].reshape(-1, x.shape[-1])
    got = np.load(os.path.join(out_dir, "h.npy")).reshape(want.shape)
    diff = float(np.abs(got - want).max())
    best = None
    for _ in range(5):
        out = subprocess.run([sys.executable, os.path.join(ROOT, "bench/encoder/time_ort.py"), ort_dir,
                              "--threads", "2", "--runs", str(steps)], check=True, capture_output=True, text=True)
        m = re.search(r"ort_ms best=([0-9.]+)", out.stdout)
        best = float(m.group(1)) if best is None or float(m.group(1)) < best else best
    return diff, best, ort.__version__


def main():
    args = sys.argv[1:]
    steps = int(take(args, "--steps", "20000"))
    isa = take(args, "--isa", "")
    cflags = take(args, "--cflags", "-O3 -std=c11 " + ("-mavx2 -mfma -DOI_GEMM_AVX2_ONLY" if isa == "avx2"
                                                     else "-march=native"))
    env = dict(os.environ)
    if isa:
        env["OPENINFER_ISA"] = isa
    build, names = args[0], args[1:] or ["digits", "residual_mlp", "streaming"]
    cli = os.path.join(build, "tools", "openinfer")
    print("# %s, isa %s, emitted CFLAGS %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), isa or "auto",
                                                cflags))
    print("%-14s %8s %14s %14s %8s" % ("graph", "steps", "simulator/step", "emitted/step", "ratio"))
    for name in names:
        with tempfile.TemporaryDirectory() as work:
            subprocess.run([os.path.join(build, "tests", "synth", "export_" + name), work, "1"], check=True)
            model, ort_dir = os.path.join(work, "model.oinf"), None
            if name == "encoder":
                ort_dir, model = encoder_model(work)
            gen = os.path.join(work, "gen")
            subprocess.run([cli, "synth", model, os.path.join(work, "graph.json"), "--target", "cpu", "--out", gen],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["make", "-s", "-C", gen, "CFLAGS=" + cflags], check=True)
            prog = [f for f in os.listdir(gen) if os.access(os.path.join(gen, f), os.X_OK) and "." not in f][0]
            inputs = []
            for f in sorted(os.listdir(os.path.join(work, "in"))):
                inputs += ["--input", "%s=%s" % (f[:-4], os.path.join(work, "in", f))]
            common = ["--steps", str(steps), "--out", os.path.join(work, "out")] + inputs
            sim = [cli, "run", model, os.path.join(work, "graph.json")] + common
            # the result h is a temporary: the emitted driver writes it, `openinfer run` cannot
            emitted = [os.path.join(gen, prog), model] + common + (["--fetch", "h"] if ort_dir else [])
            (s, s_cpu), (e, e_cpu) = best_of(sim, env), best_of(emitted, env)
            print("%-14s %8d %12.2f us %12.2f us %7.2fx   (CPU time, all threads: %.2f us vs %.2f us)" %
                  (name, steps, s / steps * 1e6, e / steps * 1e6, s / e, s_cpu / steps * 1e6, e_cpu / steps * 1e6))
            if ort_dir:
                diff, ort_ms, version = ort_check_and_time(ort_dir, os.path.join(work, "out"), steps)
                print("%-14s emitted vs ONNX Runtime %s: max |diff| %.3g (bound 1e-3); ORT best %.2f ms/run "
                      "(2 threads); emitted / ORT latency %.2f" % (name, version, diff, ort_ms,
                                                                  e / steps * 1e3 / ort_ms))
                if diff > 1e-3:
                    print("encoder: the emitted output differs from ONNX Runtime's by more than 1e-3")
                    return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
