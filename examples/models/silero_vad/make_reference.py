#!/usr/bin/env python3
"""The clip and the reference for test_silero_vad.py, next to this script:

    reference/clip.wav    16 kHz mono 16-bit: two sentences spoken by espeak-ng, with pauses
                          and quiet noise (seeded), about 6 s
    reference/probs.npy   f32 [chunks]: ONNX Runtime running the package's silero_vad.onnx
                          over the clip in 512-sample chunks, as silero_vad's OnnxWrapper does
                          (the previous chunk's last 64 samples in front, the state carried)

Needs espeak-ng (Debian), numpy, scipy (resampling), onnxruntime and the package
(pip install --no-deps silero-vad==6.2.3). `--clip-only` remakes nothing but the clip;
`--reference-only` keeps the committed clip and recomputes the probabilities.
"""
import argparse
import importlib.util
import os
import subprocess
import tempfile
import wave

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
RATE, CHUNK, CONTEXT = 16000, 512, 64
SENTENCES = ["The quick brown fox jumps over the lazy dog.",
             "Voice activity detection finds the parts of a recording that hold speech."]


def speak(text: str) -> np.ndarray:
    from scipy.signal import resample_poly
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.wav")
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", path, text], check=True)
        with wave.open(path) as w:
            rate = w.getframerate()
            x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768
    g = np.gcd(RATE, rate)
    return resample_poly(x, RATE // g, rate // g)


def make_clip(path: str) -> None:
    rng = np.random.default_rng(20261125)
    silence = lambda s: np.zeros(int(s * RATE))  # noqa: E731
    x = np.concatenate([silence(0.6), speak(SENTENCES[0]), silence(0.9), speak(SENTENCES[1]), silence(0.5)])
    x = 0.8 * x / np.abs(x).max() + rng.normal(0, 0.003, x.size)  # quiet noise: silence is not all zeros
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())
    print(f"wrote {path}: {pcm.size / RATE:.2f} s")


def read_clip(path: str) -> np.ndarray:
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768


def reference(samples: np.ndarray) -> np.ndarray:
    import onnxruntime as ort
    onnx = os.path.join(list(importlib.util.find_spec("silero_vad").submodule_search_locations)[0],
                        "data", "silero_vad.onnx")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx, sess_options=opts, providers=["CPUExecutionProvider"])
    pad = (-samples.size) % CHUNK
    samples = np.concatenate([samples, np.zeros(pad, np.float32)])
    state = np.zeros((2, 1, 128), np.float32)
    context = np.zeros((1, CONTEXT), np.float32)
    probs = []
    for k in range(0, samples.size, CHUNK):
        x = np.concatenate([context, samples[None, k:k + CHUNK]], axis=1)
        out, state = sess.run(None, {"input": x, "state": state, "sr": np.array(RATE, np.int64)})
        context = x[:, -CONTEXT:]
        probs.append(float(out[0, 0]))
    print(f"onnxruntime {ort.__version__}: {len(probs)} chunks, {sum(p >= 0.5 for p in probs)} with p >= 0.5")
    return np.array(probs, np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clip-only", action="store_true")
    ap.add_argument("--reference-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(HERE, exist_ok=True)
    clip = os.path.join(HERE, "clip.wav")
    if not args.reference_only:
        make_clip(clip)
    if not args.clip_only:
        np.save(os.path.join(HERE, "probs.npy"), reference(read_clip(clip)))


if __name__ == "__main__":
    main()
