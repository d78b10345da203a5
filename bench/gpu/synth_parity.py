#!/usr/bin/env python3
"""Parity of synthesized Vulkan code with the simulator on the GPU machine
(no glslc, volk or meson there: the folders come built from
bench/gpu/synth_stage.sh).

    synth_parity.py FOLDER DATA STEPS [--fp16] [--out DIR]

FOLDER holds the emitted code, built (its driver and plan.json); DATA what
the exporter wrote (export_example.c: model.oinf, in/VAR.npy, sim/VAR.npy
after STEPS simulator steps). The driver runs STEPS steps with those inputs
and fetches every variable it keeps; each must match the simulator's within
1e-4 relative / 1e-5 absolute (the GPU sums in another order), or with
--fp16 (temporaries stored as f16) 1e-2 relative / 1e-3 absolute, as
tests/synth/check_vulkan.py asks on lavapipe. Prints one line per variable
and a verdict; exits 1 if any differs.
"""
import json
import os
import subprocess
import sys

import numpy as np


def main():
    args = sys.argv[1:]
    fp16 = "--fp16" in args
    args = [a for a in args if a != "--fp16"]
    out = None
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    folder, data, steps = args[0], args[1], int(args[2])
    out = out or os.path.join(data, "emitted")
    plan = json.load(open(os.path.join(folder, "plan.json")))
    kept = [v["name"] for v in plan["variables"]
            if v["home"] in ("state", "model") or (v["home"] == "arena" and v.get("kept"))]
    cmd = [os.path.join(folder, plan["name"]), os.path.join(data, "model.oinf"), "--steps", str(steps), "--out", out]
    ins = os.path.join(data, "in")
    for f in sorted(os.listdir(ins)) if os.path.isdir(ins) else []:
        cmd += ["--input", "%s=%s" % (f[:-4], os.path.join(ins, f))]
    for i in range(0, max(len(kept), 1), 64):  # the driver takes at most 64 --fetch flags a run
        r = subprocess.run(cmd + [a for v in kept[i:i + 64] for a in ("--fetch", v)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print("%s: the driver failed (exit %d):\n%s" % (plan["name"], r.returncode, r.stdout[-2000:]))
            return 1
    rel, ab = (1e-2, 1e-3) if fp16 else (1e-4, 1e-5)
    bad = compared = 0
    for v in kept:
        ref = os.path.join(data, "sim", v + ".npy")
        if not os.path.exists(ref):
            continue
        a, b = np.load(os.path.join(out, v + ".npy")), np.load(ref)
        if a.dtype.kind != "f":
            ok = np.array_equal(a, b)
            worst = 0.0 if ok else float("inf")
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            # NaN where the simulator has NaN, and equal values (an infinity's difference is NaN)
            same = (np.isnan(a64) & np.isnan(b64)) | (a64 == b64)
            with np.errstate(invalid="ignore"):
                diff = np.where(same, 0.0, np.abs(a64 - b64))
            worst = float(np.max(diff)) if a.size else 0.0
            ok = a.shape == b.shape and bool(np.all(same | (diff <= ab + rel * np.abs(b64))))
        compared += 1
        bad += not ok
        print("  %-12s %-18s max |emitted - simulator| = %.3g %s" % (v, str(a.shape), worst, "ok" if ok else "DIFFERS"))
    print("%s (%s, %d steps): %d variables compared, %s" % (plan["name"], "fp16" if fp16 else "f32", steps, compared,
                                                           "all within bounds" if not bad else "%d DIFFER" % bad))
    return 1 if bad or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
