#!/usr/bin/env python3
"""Golden sources of the synthesizer ("process replay"): the emitted folders
of a few example graphs are committed under tests/synth/golden/NAME/; this
test synthesizes them again and diffs, so any change to the generated code
is deliberate.

    golden.py [--update] OPENINFER NAME[@vulkan]=EXPORTER...
    scripts/regen_synth_golden.sh [BUILD_DIR]      (--update for every golden)

Compared: NAME.h, NAME.c, main.c, Makefile, plan.json, plan.dot, and for
NAME@vulkan (the Vulkan target, no device JSON, in golden/NAME_vulkan/) the
kernels NAME_kK.comp and oi_kernel.glsl. npy.h, oi_scalar.h, oi_gemm.h,
oi_runtime.h, oi_math.glsl and oi_vk_runtime.h are verbatim copies of project
files (checked by embedded_fresh). The encoder's CPU folder shows the threaded
kernels and the weights packed at open. Statement paths in plan.json are reduced to their file
name (they depend on where the build ran).
"""
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
SKIP = {"npy.h", "oi_scalar.h", "oi_gemm.h", "oi_runtime.h", "oi_math.glsl", "oi_vk_runtime.h"}


def normalize(name, text):
    if name == "plan.json":
        text = re.sub(r'"file": "[^"]*/([^"/]+)"', r'"file": "\1"', text)
    return text


def main():
    args = sys.argv[1:]
    update = "--update" in args
    args = [a for a in args if a != "--update"]
    cli, pairs = args[0], [a.split("=", 1) for a in args[1:]]
    failed = []
    work = tempfile.mkdtemp(prefix="synth_golden_")
    try:
        for name, exporter in pairs:
            name, _, target = name.partition("@")
            name = name + ("_" + target if target else "")
            d = os.path.join(work, name)
            os.mkdir(d)
            subprocess.run([exporter, d, "1"], check=True, stdout=subprocess.DEVNULL)
            gen = os.path.join(d, "gen")
            subprocess.run([cli, "synth", os.path.join(d, "model.oinf"), os.path.join(d, "graph.json"),
                            "--target", target or "cpu", "--out", gen], check=True)
            want_dir = os.path.join(GOLDEN, name)
            files = sorted(f for f in os.listdir(gen) if f not in SKIP)
            if update:
                shutil.rmtree(want_dir, ignore_errors=True)
                os.makedirs(want_dir)
            for f in files:
                got = normalize(f, open(os.path.join(gen, f)).read())
                path = os.path.join(want_dir, f)
                if update:
                    open(path, "w").write(got)
                    continue
                want = open(path).read() if os.path.exists(path) else ""
                if got != want:
                    failed.append(f)
                    sys.stdout.writelines(difflib.unified_diff(
                        want.splitlines(True), got.splitlines(True), "golden/%s/%s" % (name, f), "today", n=2))
            if not update:
                extra = set(os.listdir(want_dir)) - set(files)
                failed += sorted(extra)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print("golden sources differ: %s\n(a deliberate change? scripts/regen_synth_golden.sh)" % ", ".join(failed))
        return 1
    print("golden sources: %s %s" % (", ".join(n for n, _ in pairs), "updated" if update else "unchanged"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
