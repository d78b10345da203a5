"""The committed digits model (tests/digits/digits_mlp.oinf, read by test_digits.c) holds what
its generator says: numpy's logits of the stored f32 weights, real held-out digits from
scikit-learn, and a classifier worth the name."""
from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import REPO
from openinfer_oinf.reader import read_oinf_file

MODEL = os.path.join(REPO, "tests", "digits", "digits_mlp.oinf")


@pytest.fixture(scope="module")
def model():
    oinf = read_oinf_file(MODEL)
    tensors = {t.name: oinf.tensor_values(t) for t in oinf.tensors}
    return dict(oinf.sizevars), tensors


def test_reference_logits_are_numpy_of_the_stored_weights(model):
    sizes, t = model
    x = t["test.x"].astype(np.float64)
    h = np.maximum(x @ t["fc1.w"].astype(np.float64) + t["fc1.b"], 0.0)
    logits = h @ t["fc2.w"].astype(np.float64) + t["fc2.b"]
    assert t["test.x"].shape == (sizes["N"], sizes["F"])
    np.testing.assert_allclose(t["ref.logits"], logits, rtol=0, atol=1e-6)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(t["ref.probs"], e / e.sum(axis=1, keepdims=True), rtol=0, atol=1e-7)
    np.testing.assert_array_equal(t["ref.pred"], logits.argmax(axis=1))


def test_the_classifier_is_accurate(model):
    _, t = model
    assert (t["ref.pred"] == t["test.labels"]).mean() >= 0.95


def test_test_batch_is_real_digits(model):
    datasets = pytest.importorskip("sklearn.datasets")
    _, t = model
    digits = datasets.load_digits()
    rows = {row.tobytes(): label for row, label in zip((digits.data / 16.0).astype(np.float32), digits.target)}
    for row, label in zip(t["test.x"], t["test.labels"]):
        assert rows.get(row.tobytes()) == label
