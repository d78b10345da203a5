#!/usr/bin/env python3
"""synth_silero_vad: the real Silero VAD (examples/models/silero_vad) synthesized for the C target.

    check_silero_vad.py OPENINFER EXPORTER MODEL [--steps N] [--target vulkan]

Imports the weights from the installed package (silero-vad) into MODEL, the path EXPORTER
(export_example.c built for silero_vad.c) reads, takes the chunk of reference/clip.wav where the
reference says speech is likeliest (512 samples in [-1, 1]), and runs check_examples.py with it:
the folder built alone (-Werror, C11 and C++17), N steps (default 5: the LSTM state, the
remembered context and the conv features carried from chunk to chunk), every kept value within
1e-5 relative (1e-6 absolute) of the simulator's. Exit 77 (skipped) without the package or `onnx`.
With --target vulkan the same chunk runs through the Vulkan target instead (check_vulkan.py on
this machine's device, validation layer on, 3 steps; skipped without a device, glslc or volk).
"""
import os
import sys
import wave

import numpy as np

from synth_check import MODELS, check_vulkan_with_inputs, check_with_inputs, model_test, option

VAD = os.path.join(MODELS, "silero_vad")


def speech_chunk() -> np.ndarray:
    """The clip's 512-sample chunk with the highest reference probability, as [1, 512] f32."""
    with wave.open(os.path.join(VAD, "reference", "clip.wav")) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
    k = int(np.argmax(np.load(os.path.join(VAD, "reference", "probs.npy"))))
    return np.ascontiguousarray(x[k * 512:(k + 1) * 512].reshape(1, 512))


def main() -> int:
    cli, exporter, model = sys.argv[1:4]
    if model_test.missing("silero_vad", "onnx"):
        print("skipped: needs pip install --no-deps silero-vad==6.2.3, and onnx (to read its weights)")
        return model_test.SKIPPED
    model_test.import_model(model, os.path.join(VAD, "import_silero_vad.py"))
    if option("--target", "cpu") == "vulkan":
        return check_vulkan_with_inputs(cli, exporter, "silero_vad", {"chunk": speech_chunk()}, 3)
    return check_with_inputs(cli, exporter, "silero_vad", {"chunk": speech_chunk()}, option("--steps", "5"))


if __name__ == "__main__":
    sys.exit(main())
