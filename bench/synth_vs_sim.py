#!/usr/bin/env python3
"""The synthesized C against the simulator on the same graph, model and inputs.

    bench/synth_vs_sim.py BUILD_DIR [EXAMPLE...] [--steps N]     (default: digits residual_mlp streaming)

For each example (tests/synth/export_EXAMPLE writes its graph, model and
inputs) it synthesizes the folder, builds it with -O2, then alternates
`openinfer run --steps N` and the emitted driver with the same flags, five
times each, and prints the best time per step of each and the ratio
(simulator / emitted: how many times faster the emitted code is). Both
times include starting the process and opening the model, spread over N
steps. (kv_cache is left out of the default: its table holds 64 steps.)
"""
import os
import subprocess
import sys
import tempfile
import time


def best_of(cmd, runs=5):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        best = dt if best is None or dt < best else best
    return best


def main():
    args = sys.argv[1:]
    steps = 20000
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    build, names = args[0], args[1:] or ["digits", "residual_mlp", "streaming"]
    cli = os.path.join(build, "tools", "openinfer")
    print("%-14s %8s %14s %14s %8s" % ("graph", "steps", "simulator/step", "emitted/step", "ratio"))
    for name in names:
        with tempfile.TemporaryDirectory() as work:
            subprocess.run([os.path.join(build, "tests", "synth", "export_" + name), work, "1"], check=True)
            gen = os.path.join(work, "gen")
            subprocess.run([cli, "synth", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json"),
                            "--target", "cpu", "--out", gen], check=True)
            subprocess.run(["make", "-s", "-C", gen, "CFLAGS=-O2 -std=c11"], check=True)
            prog = [f for f in os.listdir(gen) if os.access(os.path.join(gen, f), os.X_OK) and "." not in f][0]
            inputs = []
            for f in sorted(os.listdir(os.path.join(work, "in"))):
                inputs += ["--input", "%s=%s" % (f[:-4], os.path.join(work, "in", f))]
            common = ["--steps", str(steps), "--out", os.path.join(work, "out")] + inputs
            sim = [cli, "run", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json")] + common
            emitted = [os.path.join(gen, prog), os.path.join(work, "model.oinf")] + common
            s, e = best_of(sim), best_of(emitted)
            print("%-14s %8d %12.2f us %12.2f us %7.1fx" % (name, steps, s / steps * 1e6, e / steps * 1e6, s / e))


if __name__ == "__main__":
    main()
