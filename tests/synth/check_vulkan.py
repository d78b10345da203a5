#!/usr/bin/env python3
"""Parity of the synthesized Vulkan code with the simulator, one example per run.

    check_vulkan.py OPENINFER EXPORTER NAME [--exact] [--target vulkan|live] [--steps N] [--dump] [--fp16]
                    [--interop PROGRAM.c] [--set VAR=VALUE] [--inputs DIR] [--model FILE]

EXPORTER (export_example.c built for the example) writes the graph, a model,
seeded inputs and the simulator's values after N steps. The test synthesizes
the graph for Vulkan (--target live: the JSON `openinfer devices --json`
writes for this machine's Vulkan device, lavapipe in CI; --target vulkan: no
device JSON, so no optional feature), copies the folder alone into an empty
directory, builds it with `make` (glslc, volk from VOLK_DIR, -Werror; the
host code also as C++17; any warning glslc prints about a kernel fails), runs
the driver with the Khronos validation layer on and requires:
  - no validation message at all;
  - every variable the emitted code keeps equal to the simulator's (floats:
    bit for bit with --exact, else within 1e-4 relative / 1e-5 absolute:
    the GPU sums in another order);
  - the declared ones equal to `openinfer run --device vulkan`'s files
    (the simulator's own Vulkan backend) within the same bounds.
With --fp16 the live JSON says preferences.default_precision "fp16": the
kernels must store temporaries as f16 (float16_t; lavapipe has 16-bit
storage), the values must be within 1e-2 relative / 1e-3 absolute of the
simulator's f32 ones (f16 keeps 11 significant bits; the simulator has no
f16 mode) and at least one must differ from them (f16 storage in effect).
With --dump the folder is built again with -DNAME_DEBUG_DUMP=dir and run
(validation on): dir must hold stepS_kK_VAR.npy for every step and every
stored variable each kernel writes (plan.json), nothing else, and the last
kernel writing a kept variable must have dumped the value the driver fetches.
With --set VAR=VALUE (repeatable) the seeded input VAR's first element is VALUE (`nan`, a
number, 0 or 1 for a bool): test_graphs.c's gpu_branch takes one path per run that way (both
blocks of a branch are in the recorded step; the condition on the device picks one).
With --inputs DIR the dynamic variables are DIR/VAR.npy instead of seeded (a real model's
input: check_ppocr_cls.py --target vulkan).
With --model FILE the exporter takes that model (a real model's importer made it: check_minilm.py
--target vulkan) instead of writing one.
With --interop PROGRAM.c (tests/synth/vulkan_interop.c) the program is built
against the folder and run with the validation layer on: it opens the folder
on a Vulkan device of its own making, with the model in its own buffer, and
passes inputs and outputs through device buffers (docs/synthesizer.md,
"Vulkan interop").
Exits 77 (meson's skip) where there is no Vulkan device, glslc or volk.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from synth_check import run, run_fetching, same_values

SKIP = 77


def volk_dir():
    """VOLK_DIR if set, else where Debian's libvulkan-volk-dev puts volk.c."""
    candidates = [os.environ.get("VOLK_DIR", ""), "/usr/include", "/usr/local/include"]
    candidates += sorted(os.path.dirname(p) for p in glob.glob("/usr/include/*/volk.c"))
    for d in candidates:
        if d and os.path.exists(os.path.join(d, "volk.c")) and os.path.exists(os.path.join(d, "volk.h")):
            return d
    return None


def vulkan_device_index(cli):
    """The index `openinfer devices` gives the first usable Vulkan device, or None (a listed device
    whose next line says "unavailable", as with the driver hidden, does not count)."""
    out = subprocess.run([cli, "devices"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    lines = out.splitlines()
    for i, line in enumerate(lines):
        head = line.split(":", 1)
        if len(head) == 2 and head[0].strip().isdigit() and head[1].strip().startswith("vulkan"):
            unavailable = i + 1 < len(lines) and lines[i + 1].strip().startswith("unavailable")
            if not unavailable:
                return int(head[0])
    return None


def validation_env():
    env = dict(os.environ)
    env["VK_INSTANCE_LAYERS"] = "VK_LAYER_KHRONOS_validation"
    return env


def compare(a, b, exact, fp16=False):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f" and fp16:
        return np.allclose(a, b, rtol=1e-2, atol=1e-3, equal_nan=True)
    if a.dtype.kind == "f" and not exact:
        return np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    return same_values(a, b)


def glslc_warnings(made):
    """The lines of make's output that warn: the C compiler runs with -Werror, so they are glslc's
    (a name holding "__", which GLSL reserves; an extension it does not know)."""
    return [l for l in made.splitlines() if re.search(r"\bwarning\b", l, re.I)]


def check_dump(work, alone, plan, cmd, kept, steps, exact):
    """-DNAME_DEBUG_DUMP=dir: every kernel's stored outputs after every step."""
    prog, dump = plan["name"], os.path.join(work, "dump")
    os.mkdir(dump)
    run(["make", "-C", alone, "clean"])
    run(["make", "-C", alone, "VOLK_DIR=" + volk_dir(),
         "CFLAGS=-O2 -std=c11 -Wall -Wextra -pedantic -Werror -D%s_DEBUG_DUMP=%s" % (prog, dump)])
    out = run_fetching(cmd[:cmd.index("--out") + 1] + [os.path.join(work, "dbg")] + cmd[cmd.index("--out") + 2:],
                       kept, env=validation_env())
    if "VUID" in out or "Validation" in out:
        raise SystemExit("FAILED: validation messages from the debug build:\n" + out[:4000])
    writers = {}  # stored variable -> the kernels writing it
    for k in plan["kernels"]:
        for b in k["buffers"]:
            if b["access"] == "write" and b["home"] in ("arena", "state"):
                writers.setdefault(b["var"], set()).add(k["id"])
    want = {"step%d_k%d_%s.npy" % (s, k, v) for s in range(steps) for v, ks in writers.items() for k in ks}
    got = set(os.listdir(dump))
    if got != want:
        raise SystemExit("FAILED: the dump holds %s, expected %s" % (sorted(got ^ want), "the rest"))
    checked = 0
    for v in kept:
        if v not in writers:
            continue
        a = np.load(os.path.join(dump, "step%d_k%d_%s.npy" % (steps - 1, max(writers[v]), v)))
        b = np.load(os.path.join(work, "dbg", v + ".npy")).ravel()
        if not compare(a, b, exact):
            raise SystemExit("FAILED: the dump of %s differs from the value fetched" % v)
        checked += 1
    print("debug dump: %d files, %d equal to the fetched values" % (len(got), checked))


def check_interop(work, alone, source):
    """--interop PROGRAM.c: the program, built against the folder's header and
    lib, opens it on a device of its own making (vulkan_interop.c says what
    it checks); it must print "interop: ok" with no validation message."""
    prog = os.path.join(work, "interop")
    run(["cc", "-O1", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I" + alone, "-I" + volk_dir(),
         source, os.path.join(alone, "lib%s.a" % json.load(open(os.path.join(alone, "plan.json")))["name"]),
         "-ldl", "-lm", "-o", prog])
    out = run([prog, os.path.join(work, "model.oinf")], env=validation_env())
    if "VUID" in out or "Validation" in out or "interop: ok" not in out:
        raise SystemExit("FAILED: the interop program:\n" + out[:4000])
    print(out.strip())


def main():
    args = sys.argv[1:]
    fp16 = "--fp16" in args
    exact = "--exact" in args and not fp16
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 3
    target = args[args.index("--target") + 1] if "--target" in args else "live"
    cli, exporter, name = args[0], args[1], args[2]
    model = os.path.abspath(args[args.index("--model") + 1]) if "--model" in args else "-"
    index = vulkan_device_index(cli)
    volk = volk_dir()
    if index is None or volk is None or not shutil.which("glslc"):
        print("skipped: needs a Vulkan device, glslc and volk (device %s, volk %s)" % (index, volk))
        return SKIP
    work = tempfile.mkdtemp(prefix="synth_vk_%s_" % name)
    try:
        edits = [args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--set"]
        if "--inputs" in args:  # the inputs given, and the simulator's values for them
            run([exporter, work, str(steps), model, args[args.index("--inputs") + 1]])
        else:
            run([exporter, work, str(steps), model])
        if edits:  # the seeded inputs again, edited, and the simulator's values for them
            given = os.path.join(work, "given")
            shutil.copytree(os.path.join(work, "in"), given)
            for var, value in edits:
                path = os.path.join(given, var + ".npy")
                x = np.load(path)
                x.flat[0] = float(value)
                np.save(path, x)
            for old in ("in", "sim"):
                shutil.rmtree(os.path.join(work, old))
            run([exporter, work, str(steps), model, given])
        if target == "live":
            arch = os.path.join(work, "device.json")
            open(arch, "w").write(run([cli, "devices", "--json", str(index)]))
            if fp16:
                dev = json.load(open(arch))
                if not dev["features"].get("fp16"):
                    print("skipped: the device has no fp16 (16-bit storage)")
                    return SKIP
                dev["preferences"]["default_precision"] = "fp16"
                json.dump(dev, open(arch, "w"), indent=2)
            target = arch
        gen = os.path.join(work, "gen")
        run([cli, "synth", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json"),
             "--target", target, "--out", gen])
        plan = json.load(open(os.path.join(gen, "plan.json")))
        assert plan["target"] == "vulkan", plan["target"]
        prog = plan["name"]
        if fp16:
            comp = "".join(open(f).read() for f in glob.glob(os.path.join(gen, "*.comp")))
            assert "float16_t(" in comp, "--fp16: no kernel stores f16"
        alone = os.path.join(work, "alone")
        shutil.copytree(gen, alone)
        made = run(["make", "-C", alone, "VOLK_DIR=" + volk, "CFLAGS=-O2 -std=c11 -Wall -Wextra -pedantic -Werror"])
        if glslc_warnings(made):
            raise SystemExit("FAILED: glslc warns about the emitted kernels:\n" + "\n".join(glslc_warnings(made)[:20]))
        cxx = shutil.which("c++") or shutil.which("g++")
        if cxx:  # the host code also compiles as C++17
            run([cxx, "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-x", "c++", "-I" + volk, "-c",
                 prog + ".c", "-o", os.path.join(work, "cxx.o")], cwd=alone)
        inputs = []
        for f in sorted(os.listdir(os.path.join(work, "in"))):
            inputs += ["--input", "%s=%s" % (f[:-4], os.path.join(work, "in", f))]
        kept = [v["name"] for v in plan["variables"]
                if v["home"] in ("state", "model") or (v["home"] == "arena" and v["kept"])]
        cmd = [os.path.join(alone, prog), os.path.join(work, "model.oinf"), "--steps", str(steps),
               "--out", os.path.join(work, "emitted")] + inputs
        out = run_fetching(cmd, kept, env=validation_env())
        if "VUID" in out or "Validation" in out:
            raise SystemExit("FAILED: validation messages from the emitted code:\n" + out[:4000])
        compared = differ = 0
        worst = 0.0
        for v in kept:
            ref = os.path.join(work, "sim", v + ".npy")
            if not os.path.exists(ref):
                continue
            a, b = np.load(os.path.join(work, "emitted", v + ".npy")), np.load(ref)
            differ += not np.array_equal(a, b)
            if a.dtype.kind == "f" and a.shape == b.shape and a.size:
                worst = max(worst, float(np.nanmax(np.abs(a.astype(np.float64) - b))))
            if not compare(a, b, exact, fp16):
                raise SystemExit("FAILED: %s differs from the simulator (largest difference %g):\n emitted %s\n "
                                 "simulator %s" % (v, float(np.nanmax(np.abs(a.astype(np.float64) - b))),
                                                    a.ravel()[:8], b.ravel()[:8]))
            compared += 1
        declared = [v["name"] for v in plan["variables"] if v["kind"] != "temporary" and v["name"] in kept and
                    os.path.exists(os.path.join(work, "sim", v["name"] + ".npy"))]  # not an unrolled loop's entry
        sim_cmd = [cli, "run", os.path.join(work, "model.oinf"), os.path.join(work, "graph.json"), "--steps",
                   str(steps), "--device", "vulkan", "--out", os.path.join(work, "run")] + inputs
        for v in declared:
            sim_cmd += ["--fetch", v]
        run(sim_cmd)
        for v in declared:
            a = np.load(os.path.join(work, "emitted", v + ".npy"))
            b = np.load(os.path.join(work, "run", v + ".npy"))
            if not compare(a, b, False, fp16):
                raise SystemExit("FAILED: %s differs from `openinfer run --device vulkan`'s" % v)
        if compared == 0:
            raise SystemExit("FAILED: nothing to compare for %s" % name)
        if fp16 and differ == 0:
            raise SystemExit("FAILED: --fp16 gave the f32 values bit for bit: f16 storage not in effect")
        if "--dump" in args:
            check_dump(work, alone, plan, cmd, kept, steps, exact)
        if "--interop" in args:
            check_interop(work, alone, args[args.index("--interop") + 1])
        print("%s (vulkan, %s%s): %d variables equal the simulator's after %d steps (%d kernels; largest "
              "difference %g), no validation message" % (name, os.path.basename(target), ", f16 storage" if fp16
                                                          else "", compared, steps, len(plan["kernels"]), worst))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
