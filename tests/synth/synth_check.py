"""synth_check.py: what the check_*.py scripts share (each imports it).

- `run(cmd, expect=0)`: runs a command, its output captured and returned; another exit code ends
  the test with that output;
- `run_fetching(cmd, kept)`: the emitted driver run with `--fetch` for each of `kept`, 64 at a
  time (the driver's limit);
- `option(name, default)`: the value after `--name` on the command line;
- `same_values(a, b)`: equal bit for bit, but that any NaN equals any NaN (so -0.0 is not 0.0);
- `case_flags(oinf, folder)`: an ONNX node test's case (tests/onnx/convert.py's .oinf, read):
  its inputs saved in `folder`, the `--input`/`--fetch` flags that pass them and fetch its
  outputs, and ONNX's expected outputs (name -> array);
- `model_test`: examples/models/model_test.py (`missing`, `import_model`, `SKIPPED`);
- `check_with_inputs(cli, exporter, name, inputs, steps)`: check_examples.py's parity test of
  the emitted folder, the dynamic variables given as arrays (name -> value) instead of seeded;
  `check_vulkan_with_inputs`: the same through check_vulkan.py (the Vulkan target).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(ROOT, "examples", "models")
sys.path.insert(0, MODELS)
import model_test  # noqa: E402,F401


# What a sanitizer prints when it finds something. LeakSanitizer keeps a failing
# program's own exit status, so a leak on an error path shows only in the output.
SANITIZER_REPORTS = ("ERROR: LeakSanitizer", "ERROR: AddressSanitizer", "runtime error:", "WARNING: ThreadSanitizer")


def run(cmd, expect=0, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != expect:
        wanted = "" if expect == 0 else " (exit %d, wanted %d)" % (r.returncode, expect)
        raise SystemExit("FAILED%s: %s\n%s" % (wanted, " ".join(cmd), r.stdout))
    if any(report in r.stdout for report in SANITIZER_REPORTS):
        raise SystemExit("FAILED (a sanitizer's report): %s\n%s" % (" ".join(cmd), r.stdout))
    return r.stdout


def run_fetching(cmd, kept, **kw):
    """The emitted driver takes at most 64 --fetch flags: one run per 64 variables (the steps
    are deterministic, each run starts from the same state); their output together."""
    return "".join(run(cmd + [a for v in kept[i:i + 64] for a in ("--fetch", v)], **kw)
                   for i in range(0, max(len(kept), 1), 64))


def same_values(a, b):
    """a and b hold the same values: floats bit for bit (numpy's == takes -0.0 for 0.0, which would
    hide a sign the two programs disagree on), any NaN matching any NaN (payloads may differ)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return np.array_equal(a, b)
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    bits = np.dtype("u%d" % a.dtype.itemsize)
    return np.array_equal(a[~nan].view(bits), b[~nan].view(bits))


def case_flags(oinf, folder):
    """(flags, expected) for a converted ONNX node test: `input.VAR` tensors saved as folder/VAR.npy
    and passed with --input, every `expected.VAR` fetched."""
    flags, expected = [], {}
    os.makedirs(folder, exist_ok=True)
    for t in oinf.tensors:
        if t.name.startswith("input."):
            path = os.path.join(folder, t.name[6:] + ".npy")
            np.save(path, oinf.tensor_values(t))
            flags += ["--input", "%s=%s" % (t.name[6:], path)]
        elif t.name.startswith("expected."):
            expected[t.name[9:]] = oinf.tensor_values(t)
    return flags + [a for var in expected for a in ("--fetch", var)], expected


def option(name, default):
    args = sys.argv
    return args[args.index(name) + 1] if name in args else default


def check_vulkan_with_inputs(cli, exporter, name, inputs, steps, model=None):
    """check_vulkan.py (this machine's device JSON) over `steps` steps with inputs[VAR] as VAR (and
    the model file `model`, where given); its exit code (77 without a Vulkan device, glslc or volk)."""
    with tempfile.TemporaryDirectory(prefix="synth_vk_%s_in_" % name) as given:
        for var, value in inputs.items():
            np.save(os.path.join(given, var + ".npy"), value)
        return subprocess.run([sys.executable, os.path.join(HERE, "check_vulkan.py"), cli, exporter, name, "--target",
                               "live", "--steps", str(steps), "--inputs", given] +
                              (["--model", model] if model else [])).returncode


def check_with_inputs(cli, exporter, name, inputs, steps, model=None):
    """check_examples.py over `steps` steps with inputs[VAR] as VAR; its exit code."""
    with tempfile.TemporaryDirectory(prefix="synth_%s_in_" % name) as given:
        for var, value in inputs.items():
            np.save(os.path.join(given, var + ".npy"), value)
        return subprocess.run([sys.executable, os.path.join(HERE, "check_examples.py"), cli, exporter, name,
                               "--steps", str(steps)] + (["--model", model] if model else []) +
                              ["--inputs", given]).returncode
