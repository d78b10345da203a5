#!/usr/bin/env python3
"""synth_decode.py FOLDER MODEL [--runs N] [--new N] [--no-torch]: batch-1 greedy decode of
SmolLM2-135M by the synthesizer's Vulkan folder against PyTorch/transformers on the same GPU.

FOLDER is the emitted decode graph (bench/gpu/synth_stage.sh: examples/models/smollm2's graph
for h100.json, built, with tests/synth/check_smollm2.py's decode.c linked against it as
FOLDER/decode); MODEL the .oinf it was synthesized for (the importer writes the same bytes on
any machine). Both sides start from llama.cpp's prompt ids (examples/models/smollm2/reference/
llama_cpp.json: no tokenizer) and decode --new tokens (32, llama.cpp's count, by default)
greedily:
  - ours: decode.c feeds the prompt one token per step (the K/V tables on the device), then
    each step's argmax back; its rate counts the generated steps only (one recorded command
    buffer replayed per token, the token uploaded and the pick read back each step);
  - torch: bench/gpu/models_torch.py's peer, transformers' LlamaForCausalLM from the same GGUF
    (Q4_1 dequantized) in f16 with a StaticCache, eager, the same prompt and count.
Prints the best of --runs of each as tokens/s, both greedy id lists (and how many equal
llama.cpp's), and `RESULT smollm2_decode emitted/torch <ratio>` (tokens/s over tokens/s: above 1
is faster than PyTorch).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def ours(folder, model, prompt, n_new, runs):
    best, ids = 0.0, []
    for _ in range(runs):
        r = subprocess.run([os.path.join(folder, "decode"), model, str(n_new), *map(str, prompt)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("synth_decode: decode failed:\n%s%s" % (r.stdout[-2000:], r.stderr[-2000:]))
        m = re.search(r"([\d.]+) tokens/s", r.stderr)
        rate = float(m.group(1)) if m else 0.0
        ids = [int(x) for x in r.stdout.split()]
        best = max(best, rate)
    return best, ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--new", type=int, default=0)
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    with open(os.path.join(ROOT, "examples", "models", "smollm2", "reference", "llama_cpp.json")) as f:
        case = json.load(f)["cases"][0]
    n_new = a.new or len(case["new_ids"])
    rate, ids = ours(a.folder, a.model, case["prompt_ids"], n_new, a.runs)
    same = sum(x == y for x, y in zip(ids, case["new_ids"]))
    print("emitted vulkan decode: %.1f tokens/s (%.3f ms/token), best of %d; %d of %d ids equal llama.cpp's; ids %s"
          % (rate, 1e3 / rate if rate else 0.0, a.runs, same, min(len(ids), len(case["new_ids"])), ids))
    print("RESULT smollm2_decode emitted_tokens_per_s %.2f" % rate)
    if a.no_torch:
        return 0
    sys.path.insert(0, HERE)
    import models_torch  # noqa: E402  (imports torch)
    ms = models_torch.bench_smollm2(a.runs)
    torch_rate = 1e3 / ms
    print("torch f16 static-cache decode: %.1f tokens/s (%.3f ms/token)" % (torch_rate, ms))
    print("RESULT smollm2_decode torch_tokens_per_s %.2f" % torch_rate)
    print("RESULT smollm2_decode emitted/torch %.2f" % (rate / torch_rate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
