#!/usr/bin/env python3
"""cli_run.py OPENINFER RUN_GRAPHS SRC_ROOT - `openinfer run` end to end: the graphs of
run_graphs.c over models written with python/dataclass_to_oinf.py and inputs saved with
numpy; every fetched .npy is compared with the values numpy computes from the same inputs
(exact: the same IEEE operations in the same order), byte for byte with np.save's file.
Then every mistake a user can make gets its exit code and a message that names it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

CLI, RUN_GRAPHS, SRC = (os.path.abspath(p) for p in sys.argv[1:4])
sys.path.insert(0, os.path.join(SRC, "python"))
from dataclass_to_oinf import SizeVar, TensorSpec, write_oinf  # noqa: E402

RNG = np.random.default_rng(3)
A = np.linspace(-1, 1, 8).astype(np.float32)
SCALE = RNG.uniform(0.5, 2, 8).astype(np.float32)
W = np.array([3, -2, 0, 7, 1], dtype=np.int32)


@dataclass
class MinimalModel:
    B: SizeVar = 8  # type: ignore[assignment]
    a: TensorSpec = field(default_factory=lambda: TensorSpec(A))


@dataclass
class WrongModel:
    B: SizeVar = 8  # type: ignore[assignment]
    a: TensorSpec = field(default_factory=lambda: TensorSpec(np.zeros(3, np.float32)))


@dataclass
class AccumulateModel:
    B: SizeVar = 8  # type: ignore[assignment]
    scale: TensorSpec = field(default_factory=lambda: TensorSpec(SCALE))


@dataclass
class MixedModel:
    R: SizeVar = 2  # type: ignore[assignment]
    B: SizeVar = 5  # type: ignore[assignment]
    w: TensorSpec = field(default_factory=lambda: TensorSpec(W))


def run(*args, cwd=None, want=0):
    proc = subprocess.run([CLI, "run", *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode == want, f"exit {proc.returncode} (want {want}) for {args}:\n{proc.stdout}{proc.stderr}"
    return proc


def same_file_as_np_save(path, want, tmp):
    """The file equals np.save's bytes for the expected array (dtype, shape, values)."""
    ref = os.path.join(tmp, "ref.npy")
    np.save(ref, want)
    with open(path, "rb") as a, open(ref, "rb") as b:
        got, exp = a.read(), b.read()
    if got != exp:
        raise AssertionError(f"{path}: {np.load(path)!r} != {want!r}")


def check_minimal(tmp, graphs):
    model = os.path.join(tmp, "minimal.oinf")
    write_oinf(MinimalModel(), model)
    x = RNG.standard_normal(8).astype(np.float32) * 10
    np.save(os.path.join(tmp, "x.npy"), x)
    want = np.float32(5) * (x + A)  # y starts at @init(5.0) every step
    for steps in (1, 3):
        out = os.path.join(tmp, f"out{steps}")
        proc = run(model, graphs["minimal"], "--steps", steps, "--input", f"x={tmp}/x.npy", "--fetch", "y",
                   "--fetch", "x", "--out", out)
        assert proc.stdout == f"{out}/y.npy: f32[8]\n{out}/x.npy: f32[8]\n", proc.stdout
        same_file_as_np_save(f"{out}/y.npy", want, tmp)
        same_file_as_np_save(f"{out}/x.npy", x, tmp)
    # a temporary (an assign): its value after the last step, as the synthesized driver gives it
    out = os.path.join(tmp, "out_t0")
    run(model, graphs["minimal"], "--input", f"x={tmp}/x.npy", "--fetch", "t0", "--out", out)
    same_file_as_np_save(f"{out}/t0.npy", x + A, tmp)
    # the trace of every step, one event per node
    trace = os.path.join(tmp, "trace.json")
    run(model, graphs["minimal"], "--steps", 2, "--input", f"x={tmp}/x.npy", "--trace", trace)
    events = json.load(open(trace))
    assert [e["kind"] for e in events] == ["Assign", "OpExecute", "OpExecute", "Return"] * 2, events
    # the default output folder is the current one; no --input: x holds zeros (a note says so)
    proc = run(model, graphs["minimal"], "--fetch", "y", cwd=tmp)
    assert "dynamic variable x has no --input" in proc.stderr
    same_file_as_np_save(os.path.join(tmp, "y.npy"), np.float32(5) * A, tmp)
    return model, x


def check_accumulate(tmp, graphs):
    model = os.path.join(tmp, "accumulate.oinf")
    write_oinf(AccumulateModel(), model)
    x = RNG.uniform(-3, 3, 8).astype(np.float32)
    np.save(os.path.join(tmp, "xa.npy"), x)
    out = os.path.join(tmp, "acc", "deeper")  # created with its parents
    run(model, graphs["accumulate"], "--steps", 5, "--input", f"x={tmp}/xa.npy", "--fetch", "acc", "--fetch", "n",
        "--out", out)
    acc = np.zeros(8, np.float32)
    for _ in range(5):
        acc = acc + x * SCALE
    same_file_as_np_save(f"{out}/acc.npy", acc, tmp)
    same_file_as_np_save(f"{out}/n.npy", np.array(5, dtype=np.int32), tmp)  # a scalar: shape ()


def check_mixed(tmp, graphs):
    model = os.path.join(tmp, "mixed.oinf")
    write_oinf(MixedModel(), model)
    t = np.array([[1, -4, 5, 2, -9], [0, 3, -1, 8, 6]], dtype=np.int32)
    h = np.array([0.5, -1.25, 3.0, 1000.0, -0.0], dtype=np.float16)
    v = np.array([-2.0, -0.5, 0.0, 1.5, 3.0], dtype=np.float32)  # exact in bf16
    for name, arr in (("t", t), ("h", h), ("v", v)):
        np.save(os.path.join(tmp, f"{name}.npy"), arr)
    out = os.path.join(tmp, "mixed_out")
    run(model, graphs["mixed"], *sum((["--input", f"{n}={tmp}/{n}.npy"] for n in "thv"), []),
        *sum((["--fetch", n] for n in ("p", "big", "wide", "h2", "r", "v")), []), "--out", out)
    p = t * W
    same_file_as_np_save(f"{out}/p.npy", p, tmp)
    same_file_as_np_save(f"{out}/big.npy", p > t, tmp)
    same_file_as_np_save(f"{out}/wide.npy", p.astype(np.int64), tmp)
    same_file_as_np_save(f"{out}/h2.npy", h + h, tmp)
    # relu is x >= 0 ? x : x * negative_slope (0): -0.0 for negatives (docs/ops.md); bf16 comes out as f32
    same_file_as_np_save(f"{out}/r.npy", np.where(v >= 0, v, v * np.float32(0)), tmp)
    same_file_as_np_save(f"{out}/v.npy", v, tmp)
    return model


def check_vulkan(tmp, graphs, model, x):
    devices = subprocess.run([CLI, "devices"], capture_output=True, text=True).stdout
    out = os.path.join(tmp, "vk")
    args = (model, graphs["minimal"], "--input", f"x={tmp}/x.npy", "--fetch", "y", "--out", out, "--device", "vulkan")
    if any(line.startswith(" ") is False and ": vulkan" in line for line in devices.splitlines()) and \
            "unavailable" not in devices.split(": vulkan", 1)[1].split("\n", 2)[1]:
        run(*args)
        np.testing.assert_allclose(np.load(f"{out}/y.npy"), np.float32(5) * (x + A), rtol=1e-6)
    else:
        proc = run(*args, want=1)
        assert "vulkan" in proc.stderr.lower(), proc.stderr


def expect_error(want, why, *args):
    proc = run(*args, want=want)
    assert why in proc.stderr, f"{args}: {why!r} not in:\n{proc.stderr}"


def check_mistakes(tmp, graphs, model):
    g = graphs["minimal"]
    bad64 = os.path.join(tmp, "x64.npy")
    np.save(bad64, np.zeros(8))
    short = os.path.join(tmp, "x7.npy")
    np.save(short, np.zeros(7, np.float32))
    h16 = os.path.join(tmp, "v16.npy")
    np.save(h16, np.zeros(5, np.float16))
    expect_error(1, "absent.oinf: cannot open", os.path.join(tmp, "absent.oinf"), g)
    expect_error(1, "absent.json: cannot read", model, os.path.join(tmp, "absent.json"))
    expect_error(1, "--input x: " + os.path.join(tmp, "absent.npy") + ": cannot open", model, g, "--input",
                 f"x={tmp}/absent.npy")
    expect_error(1, "--input zz: graph 'minimal' has no variable 'zz'; declared: x, a, y", model, g, "--input",
                 f"zz={bad64}")
    expect_error(1, "--fetch q: graph 'minimal' has no variable 'q'", model, g, "--fetch", "q")
    expect_error(1, "--input t0: 't0' is a temporary (an assign), not a declared variable", model, g, "--input",
                 f"t0={short}")
    expect_error(1, f"--input x: {bad64} holds f64, x is f32: save it with .astype(np.float32)", model, g,
                 "--input", f"x={bad64}")
    expect_error(1, f"--input x: {short} has shape (7,), x needs (8,)", model, g, "--input", f"x={short}")
    expect_error(1, "--input a: a is volatile; --input takes dynamic variables", model, g, "--input", f"a={short}")
    expect_error(1, f"{h16} holds f16, v is bf16: save it with .astype(np.float32)", os.path.join(tmp, "mixed.oinf"),
                 graphs["mixed"], "--input", f"v={h16}")
    broken = os.path.join(tmp, "broken.json")
    with open(broken, "w") as f:
        f.write('{"format": "openinfer-graph",\n "version": }')
    expect_error(1, "line 2, column", model, broken)
    wrong = os.path.join(tmp, "wrong.oinf")
    write_oinf(WrongModel(), wrong)
    expect_error(1, "model tensor 'a' is f32[3], a declares f32[8]", wrong, g)  # validation
    notdir = os.path.join(tmp, "file")
    open(notdir, "w").close()
    expect_error(1, "--out " + notdir, model, g, "--fetch", "y", "--out", notdir)
    for args, why in (((), "missing MODEL.oinf"), ((model,), "missing GRAPH.json"),
                      ((model, g, "--steps", "0"), "--steps"), ((model, g, "--steps", "2x"), "--steps"),
                      ((model, g, "--device", "gpu"), "--device"), ((model, g, "--input", "x"), "VAR=FILE.npy"),
                      ((model, g, "--frobnicate", "1"), "unknown option '--frobnicate'"),
                      ((model, g, "--fetch"), "--fetch needs a value"), ((model, g, "extra"), "unexpected argument"),
                      ((model, g, "--input", f"x={short}", "--input", f"x={short}"), "given twice")):
        proc = run(*args, want=2)
        assert why in proc.stderr and "usage: openinfer run" in proc.stderr, proc.stderr


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([RUN_GRAPHS, tmp], check=True)
        graphs = {n: os.path.join(tmp, n + ".json") for n in ("minimal", "accumulate", "mixed")}
        model, x = check_minimal(tmp, graphs)
        check_accumulate(tmp, graphs)
        check_mixed(tmp, graphs)
        check_vulkan(tmp, graphs, model, x)
        check_mistakes(tmp, graphs, model)
    print("cli_run: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
