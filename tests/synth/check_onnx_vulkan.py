#!/usr/bin/env python3
"""The ONNX node tests through the synthesizer's Vulkan target.

    check_onnx_vulkan.py OPENINFER SOURCE_ROOT [--all] [--jobs N] [--only SUBSTRING] [--verbose]

As check_onnx.py does for the C target: converts ONNX's node tests (tests/onnx/convert.py),
then synthesizes every case for this machine's Vulkan device (`openinfer devices --json`,
lavapipe in CI). A case the target refuses (its message names the statement and says it
cannot synthesize it) counts as refused, by reason; any other failure of synthesis fails.
A synthesized case is built alone in an empty folder (glslc, volk, -Werror; a warning from glslc
fails the case), its driver runs
2 steps with the case's inputs (the Khronos validation layer on: any message fails) and
`openinfer run` runs the same on the simulator's CPU:
 - every output equals the simulator's: integers and bools exactly, floats within 1e-4
   relative / 1e-5 absolute (the GPU sums in another order), as check_vulkan.py;
 - where the simulator's output meets ONNX's rule against ONNX's expected output, the
   emitted one must meet it too.
By default only the cases whose name starts with a SUBSET prefix run (every op family the
target runs, and a few it refuses: 151 cases, about 90 s on two cores); --all runs all of them
(584, about 5 minutes).
Prints the counts and the refusals by reason; fails when a case fails, or when fewer than
MIN_SUPPORTED (MIN_SUPPORTED_ALL with --all) cases pass. Exit 77 (skipped) without the
ONNX test data, a Python with onnx, a Vulkan device, glslc or volk.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np

from check_onnx import case_cflags, find_data, find_python, onnx_close
from check_vulkan import compare, glslc_warnings, validation_env, volk_dir, vulkan_device_index
from synth_check import case_flags, option

# Of Debian 12's libonnx-testdata on lavapipe, 2026-11-27: 128 of the default subset's 151 cases
# pass, 489 of all 584 (125 and 484 before casts between f32, i32 and i64; 460 before conv_transpose2d, top_k, prod_axis, batch_norm and group_norm;
# 121 and 450 before f32 matmul over batch dims and gemm with transposes, alpha, beta or a
# broadcast C; 432 before where on integers and bools stored in the model; 420 before
# i64 arithmetic; 371 before i32 arithmetic, pow, round,
# softmax/log_softmax and arg reductions along any axis, is_inf, is_neg, softplus, fill, tile and
# expand). A drop means support was lost.
MIN_SUPPORTED = 126
MIN_SUPPORTED_ALL = 481
STEPS = 2
SKIP = 77
# The default subset: test-name prefixes (ONNX's op names, lower case), one or two tests each.
SUBSET = ("test_abs", "test_add", "test_argmax_default_axis_example", "test_argmax_keepdims_example",
          "test_argmin_no_keepdims_example", "test_averagepool_2d_default", "test_cast_FLOAT_to_",
          "test_clip_example", "test_concat_2d", "test_conv_with_strides_padding", "test_cos_example",
          "test_div", "test_elu_example", "test_equal", "test_erf", "test_exp_example", "test_expand_dim",
          "test_gather_0", "test_gemm_default", "test_greater", "test_hardsigmoid_example", "test_isinf",
          "test_layer_normalization_2d", "test_leakyrelu_example", "test_log_softmax", "test_matmul_2d",
          "test_matmul_3d", "test_max_example", "test_maxpool_2d_default", "test_mean", "test_min_example",
          "test_mod", "test_mul", "test_neg", "test_not", "test_pad", "test_pow", "test_reduce_max_default",
          "test_reduce_mean_keepdims", "test_reduce_sum_keepdims", "test_relu", "test_reshape_reduced",
          "test_round", "test_sigmoid_example", "test_slice", "test_softmax_axis", "test_softmax_example",
          "test_softplus", "test_split_equal", "test_sqrt_example", "test_sub", "test_tanh_example",
          "test_tile", "test_transpose_default", "test_tril_zero", "test_triu", "test_unsqueeze_axis_0", "test_where")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


class Setup:
    """What every case shares: the CLI, the cases' folder, the device JSON, volk (volk.o built once)."""

    def __init__(self, cli, cases, device_json, volk, volk_o, reader):
        self.cli, self.cases, self.device_json = cli, cases, device_json
        self.volk, self.volk_o, self.reader = volk, volk_o, reader


def build_alone(setup, name, gen, alone):
    """The folder copied alone and built (volk.o taken prebuilt, newer than volk.c; CFLAGS as
    check_onnx.py's); the driver's path or None, and make's output."""
    shutil.copytree(gen, alone)
    shutil.copy2(setup.volk_o, os.path.join(alone, "volk.o"))
    r = run(["make", "-C", alone, "VOLK_DIR=" + setup.volk, case_cflags(name)])
    names = os.listdir(alone)
    progs = [f[:-2] for f in names if f.endswith(".h") and f[:-2] + ".c" in names]
    exe = os.path.join(alone, progs[0]) if len(progs) == 1 else None
    if glslc_warnings(r.stdout):
        return None, "glslc warns: " + "\n".join(glslc_warnings(r.stdout)[:10])
    return (exe if r.returncode == 0 and exe and os.path.exists(exe) else None), r.stdout


def compare_outputs(emitted, sim, expected):
    """'' where every output matches the simulator (and ONNX's expected output as well as it does)."""
    for var, want in expected.items():
        a, b = np.load(os.path.join(emitted, var + ".npy")), np.load(os.path.join(sim, var + ".npy"))
        if not compare(a, b, False):
            return "%s differs from the simulator: emitted %s %s %s, simulator %s %s %s" % (
                var, a.dtype, a.shape, a.ravel()[:6], b.dtype, b.shape, b.ravel()[:6])
        if b.shape == want.shape and onnx_close(b, want) and not onnx_close(a, want):
            return "%s: the simulator meets ONNX's expected output, the emitted code does not" % var
    return ""


def check_case(setup, name):
    """('pass' | 'refused' | 'fail', detail)."""
    model, graph = os.path.join(setup.cases, name + ".oinf"), os.path.join(setup.cases, name + ".json")
    work = tempfile.mkdtemp(prefix="synth_onnx_vk_")
    try:
        gen = os.path.join(work, "gen")
        r = run([setup.cli, "synth", model, graph, "--target", setup.device_json, "--out", gen])
        if r.returncode != 0:
            m = re.search(r"cannot synthesize this yet: (.*)", r.stdout)
            if m:
                return "refused", re.sub(r" on \w+$| \(.*\)$", "", m.group(1).strip())
            return "fail", "synth: " + r.stdout.strip()[-400:]
        flags, expected = case_flags(setup.reader(model), os.path.join(work, "in"))
        exe, log = build_alone(setup, name, gen, os.path.join(work, "alone"))
        if not exe:
            return "fail", "make: " + log.strip()[-600:]
        emitted, sim = os.path.join(work, "emitted"), os.path.join(work, "sim")
        r = run([exe, model, "--steps", str(STEPS), "--out", emitted] + flags, env=validation_env())
        if r.returncode != 0 or "VUID" in r.stdout or "Validation" in r.stdout:
            return "fail", "emitted driver: " + r.stdout.strip()[-400:]
        r = run([setup.cli, "run", model, graph, "--steps", str(STEPS), "--out", sim] + flags)
        if r.returncode != 0:
            return "fail", "openinfer run: " + r.stdout.strip()[-400:]
        why = compare_outputs(emitted, sim, expected)
        return ("fail", why) if why else ("pass", "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def convert_cases(python, src, data, cases):
    """The node tests as cases in `cases`; their names, or None (convert.py's output printed)."""
    r = run([python, os.path.join(src, "tests", "onnx", "convert.py"), "--data", data, "--out", cases,
             "--ops", os.path.join(src, "kernels", "op_list.h")])
    if r.returncode != 0:
        print(r.stdout)
        return None
    return [line.split("\t")[0] for line in open(os.path.join(cases, "cases.tsv"))
            if line.strip() and not line.startswith("#")]


def run_cases(setup, names, jobs):
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(check_case, setup, n): n for n in names}
        for done, f in enumerate(concurrent.futures.as_completed(futures), 1):
            results[futures[f]] = f.result()
            if done % 100 == 0:
                print("check_onnx_vulkan: %d of %d cases" % (done, len(names)), flush=True)
    return results


def report(results, verbose, floor):
    passed = sorted(n for n, (s, _) in results.items() if s == "pass")
    failed = sorted(n for n, (s, _) in results.items() if s == "fail")
    refused = Counter(d for s, d in results.values() if s == "refused")
    for n in failed:
        print("FAIL %s: %s" % (n, results[n][1]))
    if verbose:
        print("passed: " + " ".join(passed))
        for n in sorted(n for n, (s, _) in results.items() if s == "refused"):
            print("refused %s: %s" % (n, results[n][1]))
    print("check_onnx_vulkan: %d of %d ONNX node tests synthesized for Vulkan, built alone and equal to the "
          "simulator; %d refused; %d failed" % (len(passed), len(results), sum(refused.values()), len(failed)))
    for reason, count in refused.most_common(None if verbose else 20):
        print("  refused %4d: %s" % (count, reason))
    if floor is not None and len(passed) < floor:
        print("FAIL: only %d cases supported (expected at least %d)" % (len(passed), floor))
        return 1
    return 1 if failed else 0


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    cli, src = os.path.abspath(args[0]), args[1]
    jobs, only = int(option("--jobs", os.cpu_count() or 1)), option("--only", "")
    data, python, index, volk = find_data(), find_python(), vulkan_device_index(cli), volk_dir()
    if not data or not python or index is None or not volk or not shutil.which("glslc"):
        print("check_onnx_vulkan: needs ONNX's node tests, a Python with onnx, a Vulkan device, glslc and volk "
              "(data %s, python %s, device %s, volk %s); skipped" % (data, python, index, volk))
        return SKIP
    sys.path.insert(0, os.path.join(src, "python"))
    from openinfer_oinf.reader import read_oinf_file
    work = tempfile.mkdtemp(prefix="synth_onnx_vk_cases_")
    try:
        cases = os.path.join(work, "cases")
        names = convert_cases(python, src, data, cases)
        if names is None:
            return 1
        names = [n for n in names if only in n and os.path.exists(os.path.join(cases, n + ".json"))]
        if "--all" not in args:
            names = [n for n in names if n.startswith(SUBSET)]
        device_json = os.path.join(work, "device.json")
        open(device_json, "w").write(run([cli, "devices", "--json", str(index)]).stdout)
        volk_o = os.path.join(work, "volk.o")
        r = run(["cc", "-O2", "-I" + volk, "-c", os.path.join(volk, "volk.c"), "-o", volk_o])
        if r.returncode != 0:
            print(r.stdout)
            return 1
        setup = Setup(cli, cases, device_json, volk, volk_o, read_oinf_file)
        results = run_cases(setup, names, jobs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor = None if only else MIN_SUPPORTED_ALL if "--all" in args else MIN_SUPPORTED
    return report(results, "--verbose" in args, floor)


if __name__ == "__main__":
    sys.exit(main())
