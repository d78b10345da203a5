#!/usr/bin/env python3
"""cli_check.py OPENINFER CONFORMANCE_DIR - runs the openinfer CLI on real
.oinf files and on damaged copies, and checks exit codes and output.
Expected statistics come from numpy, not from the tool under test."""
import os
import pathlib
import struct
import subprocess
import sys
import tempfile

import numpy as np

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


def run(tool, *args):
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def numpy_stats_line(values):
    v = values.astype(np.float64)
    return (f"- [nbytes: {values.nbytes}, min: {v.min():.6g}, max: {v.max():.6g}, "
            f"mean: {v.mean():.6g}, median: {np.median(v):.6g}, std: {v.std():.6g}]")


def numpy_hist_line(values):
    v = values.astype(np.float64)
    counts, edges = np.histogram(v, bins=10, range=(v.min(), v.max()))
    parts = [f"([{edges[i]:.6g}, {edges[i + 1]:.6g}], {counts[i]})" for i in range(10) if counts[i]]
    return "- hist: {" + ", ".join(parts) + "}"


def write_python_model(root, path):
    """A model with sizevars, every metadata kind, quant and a declared tensor,
    written by python/openinfer_oinf (skipped when it is not there)."""
    if not (root / "python" / "openinfer_oinf").is_dir():
        print("cli_check: python/openinfer_oinf not found, writer cross-check skipped")
        return False
    sys.path.insert(0, str(root / "python"))
    import dataclasses
    from openinfer_oinf import (Bitset, QuantParams, QuantScale, QuantZeroPoint, ScalarValue, SizeVar,
                                TensorSpec, UninitializedTensor, write_oinf)

    @dataclasses.dataclass
    class Model:
        B: SizeVar
        D: SizeVar
        name: str
        flag: bool
        mask: Bitset
        arr: np.ndarray
        pi: ScalarValue
        w: TensorSpec
        wq: TensorSpec
        wq2: TensorSpec
        state: UninitializedTensor
        p: TensorSpec

    pc = QuantParams("asymmetric", QuantScale.per_channel(1, [0.5, 0.25, 0.125]),
                     QuantZeroPoint.per_channel(1, [1, 2, 3]))
    model = Model(B=SizeVar(4), D=SizeVar(16), name="demo", flag=True, mask=Bitset([1, 0, 1, 1, 0, 0, 0, 0, 1]),
                  arr=np.arange(6, dtype=np.float32).reshape(2, 3), pi=ScalarValue(3.14159, dtype="bf16"),
                  w=TensorSpec(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)),
                  wq=TensorSpec(np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int8), quant=pc),
                  wq2=TensorSpec(np.array([1, 2, 3], dtype=np.int8),
                                 quant=QuantParams("symmetric", QuantScale.per_tensor(0.1), None)),
                  state=UninitializedTensor("f16", (2, 2)), p=TensorSpec([1, -2, 3, -4, 5], dtype="i4"))
    write_oinf(model, str(path))
    return True


def main():
    tool, conformance = sys.argv[1], pathlib.Path(os.environ.get("OI_CONFORMANCE_DIR", sys.argv[2]))
    root = pathlib.Path(__file__).resolve().parent.parent
    kv = conformance / "v2-models" / "kv_cache_decode.oinf"
    demo = conformance / "v2-models" / "accumulation_demo.oinf"

    rc, out, err = run(tool, "verify", str(kv))
    check(rc == 0, f"verify kv_cache_decode exits 0 (got {rc}: {err})")
    check("D := 16\n" in out, "verify prints the size variable")
    check("zero: f32[16] = { 0, 0, 0, 0, 0, ..., 0, 0, 0, 0, 0 }\n" in out, "verify previews the tensor")
    check("- [nbytes: 64, min: 0, max: 0, mean: 0, median: 0, std: 0]\n" in out, "verify prints stats")
    check("- hist: {([0, 0], 16)}\n" in out, "verify prints the histogram")

    # statistics of accumulation_demo's x (f32[4,8], data at byte 712) against numpy
    blob = demo.read_bytes()
    x = np.frombuffer(blob[712:712 + 128], dtype="<f4")
    rc, out, err = run(tool, "verify", str(demo))
    check(rc == 0, f"verify accumulation_demo exits 0 (got {rc}: {err})")
    check(numpy_stats_line(x) + "\n" in out, f"x stats match numpy: {numpy_stats_line(x)}")
    check(numpy_hist_line(x) + "\n" in out, f"x histogram matches numpy: {numpy_hist_line(x)}")
    check("x: f32[4, 8] = {\n  { " in out, "2-D tensors print row by row")

    rc, out, err = run(tool, "inspect", str(demo))
    check(rc == 0, "inspect exits 0")
    check("oinf version 2, 3 size variables, 0 metadata, 4 tensors" in out, "inspect prints the summary")
    check("- data: 128 bytes at byte 712\n" in out, "inspect prints where x lies")
    check("- [nbytes" not in out, "inspect prints no statistics")

    with tempfile.TemporaryDirectory() as tmp:
        good = kv.read_bytes()
        cases = [
            ("misaligned.oinf", 124, struct.pack("<Q", 156), "data_offset 156 (field at byte 124) is not a multiple of 8"),
            ("magic.oinf", 0, b"X", "bad magic"),
            ("version.oinf", 5, struct.pack("<I", 7), "version 7"),
            ("nbytes.oinf", 116, struct.pack("<Q", 60), "data_nbytes 60 (byte 116) but f32[16] needs 64"),
        ]
        for name, at, patch, reason in cases:
            path = pathlib.Path(tmp) / name
            path.write_bytes(good[:at] + patch + good[at + len(patch):])
            for command in ("verify", "inspect"):
                rc, out, err = run(tool, command, str(path))
                check(rc == 1, f"{command} {name} exits 1 (got {rc})")
                check(out == "", f"{command} {name} prints nothing on stdout")
                check(reason in err and name in err and err.count("\n") == 1,
                      f"{command} {name}: one line naming '{reason}', got {err!r}")
        truncated = pathlib.Path(tmp) / "truncated.oinf"
        truncated.write_bytes(good[:100])
        rc, out, err = run(tool, "verify", str(truncated))
        check(rc == 1 and "file_size 216" in err, f"truncated file is reported: {err!r}")

    # the same listing as the Python tool, byte for byte (a second implementation)
    verify_py = root / "python" / "verify_oinf.py"
    if verify_py.is_file():
        files = sorted((conformance / "v2-models").glob("*.oinf")) + sorted((conformance / "v1" / "ops").glob("*.oinf"))
        files += [conformance / "v1" / "ops" / "full_matrix" / name for name in ("add.oinf", "trunc.oinf", "cast.oinf")]
        for path in files:
            rc, out, err = run(tool, "verify", str(path))
            py = subprocess.run([sys.executable, str(verify_py), str(path)], capture_output=True, text=True)
            check(rc == 0 and py.returncode == 0 and out == py.stdout,
                  f"openinfer verify and verify_oinf.py differ on {path.name}")
    else:
        print("cli_check: python/verify_oinf.py not found, cross-check skipped")

    # convert: the canonical layout reproduces the original encoder's files and
    # what our Python writer writes for a model with every kind of entry
    with tempfile.TemporaryDirectory() as tmp:
        out_path = pathlib.Path(tmp) / "out.oinf"
        for path, version in [(conformance / "v1" / "ops" / "ops_packed.oinf", "1"), (kv, "2"), (demo, "2")]:
            rc, out, err = run(tool, "convert", str(path), str(out_path), "--version", version)
            check(rc == 0 and out_path.read_bytes() == path.read_bytes(), f"convert reproduces {path.name}: {err}")
        rc, out, err = run(tool, "convert", str(conformance / "v1" / "ops" / "ops_packed.oinf"), str(out_path))
        check(rc == 0 and out_path.read_bytes()[5] == 2, "convert upgrades version 1 to 2")
        py_model = pathlib.Path(tmp) / "py.oinf"
        if write_python_model(root, py_model):
            rc, out, err = run(tool, "convert", str(py_model), str(out_path))
            check(rc == 0 and out_path.read_bytes() == py_model.read_bytes(),
                  f"C writer and Python writer give the same bytes: {err}")
            rc, out, err = run(tool, "convert", str(py_model), str(out_path), "--version", "1")
            check(rc == 1 and "version 1 cannot store" in err, "quantized models cannot be written as version 1")

    for args in [(), ("verify",), ("verify", "a", "b"), ("no-such-command",), ("inspect", "--x"),
                 ("convert", "a"), ("convert", "a", "b", "--version", "3")]:
        rc, out, err = run(tool, *args)
        check(rc == 2 and "usage" in err, f"usage error for {args} exits 2 (got {rc})")
    rc, out, err = run(tool, "verify", "/nonexistent/model.oinf")
    check(rc == 1 and "/nonexistent/model.oinf" in err, "a missing file exits 1 naming it")
    rc, out, err = run(tool, "help")
    check(rc == 0 and "inspect" in out and "verify" in out, "help lists the commands")

    print(f"cli_check: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
