#!/usr/bin/env python3
"""The ONNX node tests through the synthesizer's C target.

    check_onnx.py OPENINFER SOURCE_ROOT [--jobs N] [--only SUBSTRING] [--verbose]

Converts ONNX's node tests (tests/onnx/convert.py, as onnx_conformance does), then for
every case runs `openinfer synth ... --target cpu`. A case the C target refuses (its
message names the statement and says it cannot synthesize it) counts as unsupported; any
other failure of synthesis fails the test. A supported case is built alone in an empty
folder (`make CFLAGS='-O1 -std=c11 -Wall -Wextra -pedantic -Werror'` for one case in four,
-O0 for the others: see case_cflags), its driver runs 2
steps with the case's inputs, and `openinfer run` runs the same flags on the simulator:
 - every output equals the simulator's: integers and bools exactly, floats within 1e-5
   relative (fusion and matmul order change roundings);
 - where the simulator's output meets ONNX's rule against ONNX's expected output
   (|got - want| <= 1e-7 + 1e-3 |want|, as run_onnx), the emitted one must meet it too.
Prints the counts and the refusals by reason; fails when a case fails or when fewer than
MIN_SUPPORTED cases are supported (the test must not pass by refusing everything). Exit 77
(skipped) without the ONNX test data or a Python with onnx.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections import Counter

import numpy as np

MIN_SUPPORTED = 575  # 584 of Debian 12's libonnx-testdata on 2026-11-27: a drop means support was lost
STEPS = 2
DATA_DIRS = ["/usr/share/libonnx-testdata/data/node", "/usr/include/onnx/backend/test/data/node"]


def find_data():
    for d in [os.environ.get("ONNX_NODE_TESTS", "")] + DATA_DIRS:
        if d and os.path.isfile(os.path.join(d, "test_abs", "model.onnx")):
            return d
    return None


def find_python():
    for py in ("/usr/bin/python3", shutil.which("python3")):
        if py and subprocess.run([py, "-c", "import numpy, onnx"], capture_output=True).returncode == 0:
            return py
    return None


def case_cflags(name):
    """The case's make CFLAGS: -O1 for one case in four (by a hash of its name, so every op
    family has some), whose flow warnings (-Wmaybe-uninitialized and the like) need the
    optimizer; -O0 for the others, which builds a folder in a third less time (0.46 -> 0.30 s). The
    examples and test graphs build their emitted folders at -O2 with the same warnings."""
    level = "-O1" if zlib.crc32(name.encode()) % 4 == 0 else "-O0"
    return "CFLAGS=%s -std=c11 -Wall -Wextra -pedantic -Werror" % level


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def onnx_close(got, want):
    if got.dtype.kind != "f":
        return np.array_equal(got, want)
    nan = np.isnan(want)
    if not np.array_equal(np.isnan(got), nan):
        return False
    g, w = got[~nan].astype(np.float64), want[~nan].astype(np.float64)
    inf = np.isinf(w)
    if not np.array_equal(g[inf], w[inf]):
        return False
    return bool(np.all(np.abs(g[~inf] - w[~inf]) <= 1e-7 + 1e-3 * np.abs(w[~inf])))


def same_as_simulator(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


def check_case(cli, cases, name, reader):
    """('pass' | 'refused' | 'fail', detail)."""
    model, graph = os.path.join(cases, name + ".oinf"), os.path.join(cases, name + ".json")
    work = tempfile.mkdtemp(prefix="synth_onnx_")
    try:
        gen = os.path.join(work, "gen")
        r = run([cli, "synth", model, graph, "--target", "cpu", "--out", gen])
        if r.returncode != 0:
            m = re.search(r"cannot synthesize this yet: (.*)", r.stdout)
            if m:
                return "refused", re.sub(r" on \w+$| \(.*\)$", "", m.group(1).strip())
            return "fail", "synth: " + r.stdout.strip()[-400:]
        oinf = reader(model)
        inputs, expected = {}, {}
        for t in oinf.tensors:
            if t.name.startswith("input."):
                inputs[t.name[6:]] = oinf.tensor_values(t)
            elif t.name.startswith("expected."):
                expected[t.name[9:]] = oinf.tensor_values(t)
        os.mkdir(os.path.join(work, "in"))
        flags = []
        for var, value in inputs.items():
            path = os.path.join(work, "in", var + ".npy")
            np.save(path, value)
            flags += ["--input", "%s=%s" % (var, path)]
        for var in expected:
            flags += ["--fetch", var]
        alone = os.path.join(work, "alone")
        shutil.copytree(gen, alone)
        r = run(["make", "-C", alone, case_cflags(name)])
        if r.returncode != 0:
            return "fail", "make: " + r.stdout.strip()[-600:]
        prog = [f for f in os.listdir(alone) if f.endswith(".h") and f[:-2] + ".c" in os.listdir(alone)
                and f not in ("npy.h", "oi_scalar.h")]
        exe = os.path.join(alone, prog[0][:-2]) if len(prog) == 1 else None
        if not exe or not os.path.exists(exe):
            return "fail", "no driver program in the emitted folder: %s" % sorted(os.listdir(alone))
        emitted, sim = os.path.join(work, "emitted"), os.path.join(work, "sim")
        r = run([exe, model, "--steps", str(STEPS), "--out", emitted] + flags)
        if r.returncode != 0:
            return "fail", "emitted driver: " + r.stdout.strip()[-400:]
        r = run([cli, "run", model, graph, "--steps", str(STEPS), "--out", sim] + flags)
        if r.returncode != 0:
            return "fail", "openinfer run: " + r.stdout.strip()[-400:]
        for var, want in expected.items():
            a, b = np.load(os.path.join(emitted, var + ".npy")), np.load(os.path.join(sim, var + ".npy"))
            if not same_as_simulator(a, b):
                return "fail", "%s differs from the simulator: emitted %s %s %s, simulator %s %s %s" % (
                    var, a.dtype, a.shape, a.ravel()[:6], b.dtype, b.shape, b.ravel()[:6])
            if want is not None and b.shape == want.shape and onnx_close(b, want) and not onnx_close(a, want):
                return "fail", "%s: the simulator meets ONNX's expected output, the emitted code does not" % var
        return "pass", ""
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    cli, src = os.path.abspath(args[0]), args[1]
    jobs = int(args[args.index("--jobs") + 1]) if "--jobs" in args else (os.cpu_count() or 1)
    only = args[args.index("--only") + 1] if "--only" in args else ""
    data, python = find_data(), find_python()
    if not data or not python:
        print("check_onnx: ONNX node tests or a Python with onnx not installed (scripts/setup.sh); skipped")
        return 77
    sys.path.insert(0, os.path.join(src, "python"))
    from openinfer_oinf.reader import read_oinf_file
    cases = tempfile.mkdtemp(prefix="synth_onnx_cases_")
    try:
        r = run([python, os.path.join(src, "tests", "onnx", "convert.py"), "--data", data, "--out", cases,
                 "--ops", os.path.join(src, "kernels", "op_list.h")])
        if r.returncode != 0:
            print(r.stdout)
            return 1
        names = [line.split("\t")[0] for line in open(os.path.join(cases, "cases.tsv"))
                 if line.strip() and not line.startswith("#")]
        names = [n for n in names if only in n and os.path.exists(os.path.join(cases, n + ".json"))]
        results = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(check_case, cli, cases, n, read_oinf_file): n for n in names}
            for done, f in enumerate(concurrent.futures.as_completed(futures), 1):
                results[futures[f]] = f.result()
                if done % 100 == 0:
                    print("check_onnx: %d of %d cases" % (done, len(names)), flush=True)
    finally:
        shutil.rmtree(cases, ignore_errors=True)
    passed = sorted(n for n, (s, _) in results.items() if s == "pass")
    failed = sorted(n for n, (s, _) in results.items() if s == "fail")
    refused = Counter(d for s, d in results.values() if s == "refused")
    for n in failed:
        print("FAIL %s: %s" % (n, results[n][1]))
    if "--verbose" in args:
        print("passed: " + " ".join(passed))
        for n in sorted(n for n, (s, _) in results.items() if s == "refused"):
            print("refused %s: %s" % (n, results[n][1]))
    print("check_onnx: %d ONNX node tests synthesized, built alone and equal to the simulator; %d refused by "
          "the C target; %d failed" % (len(passed), sum(refused.values()), len(failed)))
    for reason, count in refused.most_common(None if "--verbose" in args else 12):
        print("  refused %4d: %s" % (count, reason))
    if not only and len(passed) < MIN_SUPPORTED:
        print("FAIL: only %d cases supported (expected at least %d)" % (len(passed), MIN_SUPPORTED))
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
