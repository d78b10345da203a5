#!/usr/bin/env python3
"""Parity of the synthesized C with the simulator, one example per run.

    check_examples.py OPENINFER EXPORTER NAME [--steps N] [--exact] [--tsan]
                      [--precision f16|bf16] [--model FILE] [--inputs DIR] [--embed-model]

EXPORTER (export_example.c built for the example) writes the graph, a
model, seeded inputs and the simulator's values after N steps. The test
then runs `openinfer synth`, copies the emitted folder alone into an empty
directory (no include path into the repository), builds it with
`make CFLAGS='-O2 -std=c11 -Wall -Wextra -pedantic -Werror'`, compiles it again
with clang where there is one and as C++17 (-Werror; neither, and -O1, with
OPENINFER_TEST_EMITTED_BUILD=once: BUILD_ONCE), runs the driver over N steps with the same inputs and
fetches every variable the emitted code keeps (plan.json's variables in
the state, the model or kept in the arena, and the tables it reads back). Integers and bools must be
equal; floats within 1e-5 relative (fusion and the matmul's order change
roundings; elementwise chains are bit-exact, checked with --exact).
It also checks plan.json's arena independently: no two buffers whose live
ranges overlap share bytes, and arena_bytes <= 1.05 x the peak of the
simultaneously live bytes recomputed here from the live ranges.

When plan.json says the folder is threaded, the driver runs again with
--threads 1 and --threads 3: every fetched value must be bit-identical to
the default run's (each task writes its own part), and no thread of the
process allocates while 3 steps run on 3 threads (malloc replaced
program-wide, glibc). --tsan builds the folder
with clang -fsanitize=thread and runs it on 3 threads; a ThreadSanitizer
report fails the test (exit 77, skipped, without clang's TSan).

--model FILE: a model made elsewhere (a real model's importer) instead of
the exporter's; --inputs DIR: the dynamic variables' values from DIR/VAR.npy
instead of seeded ones (check_minilm.py: valid token ids and a padding
mask; check_silero_vad.py: a chunk of real speech).

--embed-model: the folder is synthesized with the model built in
(NAME_model.h) and its driver runs with `-` for the model while the model
file is renamed away, so every weight comes from the emitted source.

--precision f16|bf16: the simulator's values come from OPENINFER_PRECISION
set to it, and the folder is synthesized for examples/devices/
amd_epyc_cpu.json with preferences.default_precision fp16/bf16. Every
fetched f32 temporary must hold values of that type exactly (each stored
activation is rounded once), and every float within a bound of a few
roundings of the type (the simulator rounds each op's result, a fused
kernel only what it stores): rtol 8 x 2^-11 (f16) or 8 x 2^-8 (bf16).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from synth_check import run, run_fetching, same_values


def check_arena(plan):
    bufs = [v for v in plan["variables"] if v["home"] == "arena"]
    peak = 0
    for pos in range(plan["positions"] + 1):
        live = sum(v["bytes"] for v in bufs if v["live"][0] <= pos <= v["live"][1])
        peak = max(peak, live)
    for i, a in enumerate(bufs):
        assert a["offset"] + a["bytes"] <= plan["arena_bytes"], ("outside the arena", a)
        for b in bufs[i + 1:]:
            time = a["live"][0] <= b["live"][1] and b["live"][0] <= a["live"][1]
            space = a["offset"] < b["offset"] + b["bytes"] and b["offset"] < a["offset"] + a["bytes"]
            assert not (time and space), ("live buffers overlap", a, b)
    assert plan["arena_bytes"] <= 1.05 * peak, ("arena above 1.05 x peak", plan["arena_bytes"], peak)
    assert plan["peak_live_bytes"] == peak, ("peak differs", plan["peak_live_bytes"], peak)


COUNTED_STEPS = r"""
/* Every allocation of the process, on any thread (glibc lets a program
 * replace malloc; it keeps its own as __libc_*), counted during 3 steps. */
#include "%(name)s.h"
#include <stdio.h>
#include <stdlib.h>
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
static long count;
static int counting;
static void note(void) { if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED); }
void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
int main(int argc, char **argv) {
    %(name)s_options options = {3};
    %(name)s_ctx *ctx = %(name)s_open_with(argc > 1 ? argv[1] : NULL, &options);
    if (!ctx) { fprintf(stderr, "%%s\n", %(name)s_last_error()); return 1; }
    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
    for (int s = 0; s < 3; s++)
        if (%(name)s_step(ctx) != 0) { fprintf(stderr, "%%s\n", %(name)s_last_error()); return 1; }
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
    %(name)s_close(ctx);
    printf("allocations in 3 steps on 3 threads: %%ld\n", count);
    return count != 0;
}
"""


def check_no_alloc(alone, prog, work):
    """No allocation by any thread of the process while 3 steps run."""
    if not sys.platform.startswith("linux"):
        return
    open(os.path.join(alone, "counted_steps.c"), "w").write(COUNTED_STEPS % {"name": prog})
    exe = os.path.join(work, prog + "_counted")
    run(["cc", "-O1", "-std=c11", "counted_steps.c", prog + ".c", "-lm", "-pthread", "-o", exe], cwd=alone)
    out = run([exe, os.path.join(work, "model.oinf")])
    if "allocations in 3 steps on 3 threads: 0" not in out:
        raise SystemExit("FAILED: %s allocates inside its step:\n%s" % (prog, out))


def check_threads(cmd, work, kept):
    """The same values, bit for bit, on 1 and 3 threads."""
    for threads in ("1", "3"):
        out = os.path.join(work, "emitted_t" + threads)
        run_fetching([c if c != os.path.join(work, "emitted") else out for c in cmd] + ["--threads", threads], kept)
        for v in kept:
            a, b = np.load(os.path.join(work, "emitted", v + ".npy")), np.load(os.path.join(out, v + ".npy"))
            if not same_values(a, b):
                raise SystemExit("FAILED: %s differs between the default threads and --threads %s" % (v, threads))


def check_tsan(alone, prog, cmd, work):
    """The folder under ThreadSanitizer, on 3 threads, 2 steps."""
    clang = shutil.which("clang")
    probe = os.path.join(work, "tsan_probe.c")
    open(probe, "w").write("int main(void) { return 0; }\n")
    if not clang or subprocess.run([clang, "-fsanitize=thread", probe, "-o", probe[:-2]],
                                   capture_output=True).returncode != 0:
        print("SKIPPED: no clang with ThreadSanitizer")
        sys.exit(77)
    exe = os.path.join(work, prog + "_tsan")
    run([clang, "-fsanitize=thread", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror",
         os.path.join(alone, prog + ".c"), os.path.join(alone, "main.c"), "-lm", "-pthread", "-o", exe], cwd=alone)
    steps = cmd.index("--steps")
    tsan_cmd = [exe] + cmd[1:steps + 1] + ["2"] + cmd[steps + 2:] + ["--threads", "3"]
    tsan_cmd = [c if c != os.path.join(work, "emitted") else os.path.join(work, "emitted_tsan") for c in tsan_cmd]
    r = subprocess.run(tsan_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66"))
    if r.returncode != 0 or "ThreadSanitizer" in r.stdout:
        raise SystemExit("FAILED: ThreadSanitizer on %s:\n%s" % (prog, r.stdout[-4000:]))
    print("%s: ThreadSanitizer-clean on 3 threads" % prog)


# scripts/test.sh's sanitizer stage sets OPENINFER_TEST_EMITTED_BUILD=once: there the tools are
# instrumented, not the emitted folder, whose clang and C++17 builds would repeat the plain
# stage's; the folder is built once, at -O1 (the flow warnings need the optimizer).
BUILD_ONCE = os.environ.get("OPENINFER_TEST_EMITTED_BUILD") == "once"

PRECISION = {"f16": (np.float16, 8 * 2.0 ** -11, "fp16"), "bf16": (None, 8 * 2.0 ** -8, "bf16")}


def representable(a, precision):
    """Whether every value of the f32 array a is exactly an f16 / bf16."""
    a = np.asarray(a, dtype=np.float32)
    finite = a[np.isfinite(a)]
    if precision == "f16":
        return np.array_equal(finite.astype(np.float16).astype(np.float32), finite)
    return not np.any(finite.view(np.uint32) & 0xFFFF)


def close_at_precision(a, b, precision):
    """Within PRECISION's rtol of b, or of b's largest magnitude where a
    sum cancelled (a residual add of two nearly opposite values)."""
    rtol = PRECISION[precision][1]
    finite = np.abs(b[np.isfinite(b)])
    scale = float(finite.max()) if finite.size else 0.0
    return np.allclose(a, b, rtol=rtol, atol=rtol * scale * 0.25, equal_nan=True)


def precision_target(precision, work):
    """The repository's CPU device JSON with default_precision set."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    arch = json.load(open(os.path.join(root, "examples", "devices", "amd_epyc_cpu.json")))
    arch["preferences"]["default_precision"] = PRECISION[precision][2]
    path = os.path.join(work, "arch_%s.json" % precision)
    json.dump(arch, open(path, "w"))
    return path


def main():
    args = sys.argv[1:]
    precision = args[args.index("--precision") + 1] if "--precision" in args else None
    env = dict(os.environ, OPENINFER_PRECISION=precision or "f32")
    steps = 3
    exact = "--exact" in args
    if "--steps" in args:
        steps = int(args[args.index("--steps") + 1])
    cli, exporter, name = args[0], args[1], args[2]
    given = [os.path.abspath(args[args.index(flag) + 1]) if flag in args else "-" for flag in ("--model", "--inputs")]
    given = given[:1] if given[1] == "-" else given  # the exporter's MODEL ("-": its own) [INPUTS]
    given = [] if given == ["-"] else given
    work = tempfile.mkdtemp(prefix="synth_%s_" % name)
    try:
        run([exporter, work, str(steps)] + given, env=env)
        gen = os.path.join(work, "gen")
        embed = "--embed-model" in args
        run([cli, "synth", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json"),
             "--target", precision_target(precision, work) if precision else "cpu", "--out", gen]
            + (["--embed-model"] if embed else []))
        plan = json.load(open(os.path.join(gen, "plan.json")))
        check_arena(plan)
        prog = plan["name"]
        # the folder alone, in an empty directory
        alone = os.path.join(work, "alone")
        shutil.copytree(gen, alone)
        run(["make", "-C", alone, "CFLAGS=%s -std=c11 -Wall -Wextra -pedantic -Werror" % ("-O1" if BUILD_ONCE else "-O2")])
        clang = None if BUILD_ONCE else shutil.which("clang")
        if clang:  # clang warns where GCC does not (an unused static inline in the .c)
            run([clang, "-O2", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c",
                 os.path.join(alone, prog + ".c"), "-o", os.path.join(work, prog + "_clang.o")], cwd=alone)
        cxx = None if BUILD_ONCE else shutil.which("c++") or shutil.which("g++")
        if cxx:
            run([cxx, "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-x", "c++",
                 os.path.join(alone, prog + ".c"), os.path.join(alone, "main.c"), "-lm",
                 "-o", os.path.join(work, prog + "_cxx")], cwd=alone)
        model_arg = "-" if embed else os.path.join(work, "model.oinf")
        cmd = [os.path.join(alone, prog), model_arg, "--steps", str(steps), "--out", os.path.join(work, "emitted")]
        inputs = []
        for f in sorted(os.listdir(os.path.join(work, "in"))):
            inputs += ["--input", "%s=%s" % (f[:-4], os.path.join(work, "in", f))]
        cmd += inputs
        kept = [v["name"] for v in plan["variables"]
                if v["home"] in ("state", "model") or (v["home"] == "arena" and v["kept"]) or v.get("read_back")]
        if embed:  # no file to read: the weights must come from NAME_model.h
            os.rename(os.path.join(work, "model.oinf"), os.path.join(work, "model.away"))
        run_fetching(cmd, kept)
        if embed:
            os.rename(os.path.join(work, "model.away"), os.path.join(work, "model.oinf"))
        if plan.get("threaded"):
            check_threads(cmd, work, kept)
            check_no_alloc(alone, prog, work)
            if "--tsan" in args:
                check_tsan(alone, prog, cmd, work)
        compared, worst = 0, 0.0
        for v in kept:
            ref = os.path.join(work, "sim", v + ".npy")
            if not os.path.exists(ref):
                continue
            a, b = np.load(os.path.join(work, "emitted", v + ".npy")), np.load(ref)
            assert a.dtype == b.dtype and a.shape == b.shape, (v, a.dtype, a.shape, b.dtype, b.shape)
            if a.dtype.kind == "f" and precision:
                rtol = PRECISION[precision][1]
                ok = close_at_precision(a, b, precision)
                finite = np.isfinite(b) & np.isfinite(a)
                if finite.any():
                    scale = float(np.max(np.abs(b[finite]))) or 1.0
                    worst = max(worst, float(np.max(np.abs(a[finite] - b[finite]))) / scale)
                temp = [x for x in plan["variables"] if x["name"] == v][0]["kind"] == "temporary"
                if temp and a.dtype == np.float32 and not representable(a, precision):
                    raise SystemExit("FAILED: %s holds values that are not %s" % (v, precision))
            elif a.dtype.kind == "f" and not exact:
                ok = np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
            else:
                ok = same_values(a, b)
            if not ok:
                raise SystemExit("FAILED: %s differs from the simulator:\n emitted %s\n simulator %s"
                                 % (v, a.ravel()[:8], b.ravel()[:8]))
            compared += 1
        # the same flags through `openinfer run`: the two programs' files agree (the variables
        # the graph declares: an unrolled loop's entries, exp_w_n6, are the synthesizer's names)
        graph_vars = {v["name"] for v in json.load(open(os.path.join(work, "graph.json")))["vars"]}
        declared = [v["name"] for v in plan["variables"]
                    if v["kind"] != "temporary" and v["name"] in kept and v["name"] in graph_vars]
        sim_cmd = [cli, "run", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json"),
                   "--steps", str(steps), "--out", os.path.join(work, "run")]
        sim_cmd += inputs
        for v in declared:
            sim_cmd += ["--fetch", v]
        run(sim_cmd, env=env)
        for v in declared:
            a = np.load(os.path.join(work, "emitted", v + ".npy"))
            b = np.load(os.path.join(work, "run", v + ".npy"))
            if precision and a.dtype.kind == "f":
                same = close_at_precision(a, b, precision)
            elif exact or a.dtype.kind != "f":
                same = same_values(a, b)
            else:
                same = np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
            if a.dtype != b.dtype or a.shape != b.shape or not same:
                raise SystemExit("FAILED: %s differs from `openinfer run`'s" % v)
        if compared == 0:
            raise SystemExit("FAILED: nothing to compare for %s" % name)
        print("%s: %d variables equal the simulator's after %d steps (%d kernels, arena %d bytes)%s"
              % (name, compared, steps, len(plan["kernels"]), plan["arena_bytes"],
                 ", at %s: largest difference %.2g of the largest value" % (precision, worst) if precision else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
