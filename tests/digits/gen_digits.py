#!/usr/bin/env python3
"""Train a small MLP on scikit-learn's bundled digits and write tests/digits/digits_mlp.oinf.

    python3 tests/digits/gen_digits.py [OUTPUT]      (default tests/digits/digits_mlp.oinf)

Needs numpy and scikit-learn (only for `load_digits`, the 1797 8x8 images that ship inside the
package: nothing is downloaded). Training is plain numpy: a 64 -> 32 -> 10 MLP with ReLU,
softmax cross-entropy, mini-batch SGD with momentum, float64, fixed seeds. The weights are
then rounded to f32, and the reference logits of the held-out batch are computed from those f32
weights in float64, so the C test compares our f32 simulator against an exact reference.

The .oinf holds:
  sizes     N (test samples), F = 64, H = 32, C = 10
  weights   fc1.w f32[F, H], fc1.b f32[H], fc2.w f32[H, C], fc2.b f32[C]
  test set  test.x f32[N, F] (pixels / 16), test.labels i64[N]
  numpy     ref.logits f32[N, C], ref.probs f32[N, C] (softmax), ref.pred i64[N] (argmax)
  metadata  train_accuracy, test_accuracy (numpy's, f32), min_margin (smallest top-1 minus
            top-2 logit gap of the test batch: how far argmax is from a tie)

The committed .oinf is the test's source of truth; the C test needs no Python. Re-running this
script gives the same file up to the last bits of float64 BLAS sums on another machine.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from dataclass_to_oinf import SizeVar, write_oinf  # noqa: E402

HIDDEN = 32
CLASSES = 10
TEST_FRACTION = 0.2
EPOCHS = 80
BATCH = 32
LEARNING_RATE = 0.05
MOMENTUM = 0.9
WEIGHT_DECAY = 1e-4


def load_data(seed: int):
    """The digits as float64 in [0, 1], split into train and test by a seeded permutation."""
    from sklearn.datasets import load_digits  # the data ships with scikit-learn

    digits = load_digits()
    x = digits.data.astype(np.float64) / 16.0
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(len(y) * TEST_FRACTION))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def forward(params, x):
    """Logits and the hidden activation of the MLP."""
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2, h


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gradients(params, x, y):
    """Gradients of mean cross-entropy plus L2 weight decay."""
    w1, b1, w2, b2 = params
    logits, h = forward(params, x)
    d_logits = softmax(logits)
    d_logits[np.arange(len(y)), y] -= 1.0
    d_logits /= len(y)
    d_h = (d_logits @ w2.T) * (h > 0)
    return [x.T @ d_h + WEIGHT_DECAY * w1, d_h.sum(axis=0),
            h.T @ d_logits + WEIGHT_DECAY * w2, d_logits.sum(axis=0)]


def train(x, y, seed: int):
    """Mini-batch SGD with momentum from He-initialised weights."""
    rng = np.random.default_rng(seed)
    features = x.shape[1]
    params = [rng.normal(0.0, np.sqrt(2.0 / features), (features, HIDDEN)), np.zeros(HIDDEN),
              rng.normal(0.0, np.sqrt(2.0 / HIDDEN), (HIDDEN, CLASSES)), np.zeros(CLASSES)]
    velocity = [np.zeros_like(p) for p in params]
    for _ in range(EPOCHS):
        order = rng.permutation(len(y))
        for start in range(0, len(y), BATCH):
            batch = order[start:start + BATCH]
            for p, v, g in zip(params, velocity, gradients(params, x[batch], y[batch])):
                v *= MOMENTUM
                v -= LEARNING_RATE * g
                p += v
    return params


def accuracy(params, x, y) -> float:
    return float((forward(params, x)[0].argmax(axis=1) == y).mean())


@dataclass
class DigitsModel:
    N: SizeVar = 0  # type: ignore[assignment]
    F: SizeVar = 0  # type: ignore[assignment]
    H: SizeVar = 0  # type: ignore[assignment]
    C: SizeVar = 0  # type: ignore[assignment]
    tensors: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)


def build_model(seed: int = 0) -> DigitsModel:
    x_train, y_train, x_test, y_test = load_data(seed)
    params = train(x_train, y_train, seed)
    w1, b1, w2, b2 = (p.astype(np.float32) for p in params)
    x32 = x_test.astype(np.float32)  # k / 16 is exact in f32
    # The reference: float64 arithmetic on exactly the f32 values the C test reads.
    params32 = [a.astype(np.float64) for a in (w1, b1, w2, b2)]
    logits, _ = forward(params32, x32.astype(np.float64))
    probs = softmax(logits)
    pred = logits.argmax(axis=1)
    top2 = np.sort(logits, axis=1)[:, -2:]
    model = DigitsModel(N=len(y_test), F=x32.shape[1], H=HIDDEN, C=CLASSES)
    model.tensors = {
        "fc1.w": w1, "fc1.b": b1, "fc2.w": w2, "fc2.b": b2,
        "test.x": x32, "test.labels": y_test.astype(np.int64),
        "ref.logits": logits.astype(np.float32), "ref.probs": probs.astype(np.float32),
        "ref.pred": pred.astype(np.int64),
    }
    model.metadata = {
        "train_accuracy": np.float32(accuracy(params32, x_train, y_train)),
        "test_accuracy": np.float32((pred == y_test).mean()),
        "min_margin": np.float32((top2[:, 1] - top2[:, 0]).min()),
    }
    return model


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "digits_mlp.oinf")
    model = build_model()
    write_oinf(model, path)
    meta = model.metadata
    print(f"wrote {path}: {model.N} test samples, train accuracy {meta['train_accuracy']:.4f}, "
          f"test accuracy {meta['test_accuracy']:.4f}, smallest top-2 logit margin {meta['min_margin']:.3g}")


if __name__ == "__main__":
    main()
