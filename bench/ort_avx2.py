#!/usr/bin/env python3
"""ONNX Runtime on its AVX2 kernels, so that our forced AVX2 path meets a peer on the same ISA.

    python3 bench/ort_avx2.py PEER_PYTHON [CACHE_DIR]    # prints the folder to put first on PYTHONPATH

ONNX Runtime has no switch for its ISA: MLAS, its kernel library, picks AVX-512 kernels at
start-up when CPUID lists AVX-512F and XCR0 (the register that says which vector state the
operating system saves) has the three AVX-512 state bits. An AVX2-only CPU, or an OS that does
not enable AVX-512 state, gets MLAS's AVX2/FMA kernels instead. On a machine with AVX-512 this
script copies PEER_PYTHON's onnxruntime package into CACHE_DIR/ort_avx2-VERSION/ and rewrites each
`xgetbv` in the copy's extension module as `push 7; pop rax`: the copy reads XCR0 as
x87 | SSE | AVX, what an OS without AVX-512 support shows, and runs the kernels an AVX2-only
CPU runs. The installed package is not touched. The instructions are found with objdump
(binutils); the copy is made once per version.

bench/models/bench_models.py and bench/synth_vs_sim.py use it when our AVX2 path is forced
(OPENINFER_ISA=avx2, --isa avx2), unless --peer-isa native asks for ORT's own choice.
"""
import os
import re
import shutil
import subprocess
import sys

XGETBV = bytes.fromhex("0f01d0")
XCR0_AVX_ONLY = bytes.fromhex("6a0758")  # push $7; pop %rax: the same three bytes


def package_dir(python: str):
    """(folder, version) of the onnxruntime package that python imports."""
    out = subprocess.run([python, "-c", "import onnxruntime as o, os; print(os.path.dirname(o.__file__)); "
                          "print(o.__version__)"], capture_output=True, text=True, check=True).stdout.split("\n")
    return out[0], out[1]


def text_section(lib: str):
    """(address, file offset, size) of lib's .text, from objdump -h."""
    for line in subprocess.run(["objdump", "-h", lib], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1] == ".text":
            return int(f[3], 16), int(f[5], 16), int(f[2], 16)
    raise RuntimeError(f"{lib}: no .text section")


def xgetbv_offsets(lib: str):
    """File offsets of the xgetbv instructions objdump decodes in lib's .text."""
    address, offset, _ = text_section(lib)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", lib], capture_output=True,
                         text=True, check=True).stdout
    return [int(m.group(1), 16) - address + offset for m in re.finditer(r"^\s*([0-9a-f]+):\s+xgetbv\s*$", dis, re.M)]


def patch(lib: str) -> int:
    """Rewrites lib's xgetbv instructions; returns how many."""
    sites = xgetbv_offsets(lib)
    with open(lib, "r+b") as f:
        for at in sites:
            f.seek(at)
            if f.read(3) != XGETBV:
                raise RuntimeError(f"{lib}: no xgetbv at file offset {at:#x}")
            f.seek(at)
            f.write(XCR0_AVX_ONLY)
    if not sites or xgetbv_offsets(lib):
        raise RuntimeError(f"{lib}: {len(sites)} xgetbv rewritten, some left or none found")
    return len(sites)


def avx2_onnxruntime(python: str, cache: str) -> str:
    """The folder holding the AVX2 copy of python's onnxruntime (made if missing)."""
    src, version = package_dir(python)
    root = os.path.join(os.path.abspath(cache), f"ort_avx2-{version}")
    if os.path.exists(os.path.join(root, "onnxruntime", ".patched")):
        return root
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(src, os.path.join(root, "onnxruntime"), ignore=shutil.ignore_patterns("__pycache__"))
    capi = os.path.join(root, "onnxruntime", "capi")
    modules = [os.path.join(capi, f) for f in os.listdir(capi) if f.startswith("onnxruntime_pybind11_state")]
    if len(modules) != 1:
        raise RuntimeError(f"{capi}: expected one onnxruntime_pybind11_state module, found {len(modules)}")
    count = patch(modules[0])
    with open(os.path.join(root, "onnxruntime", ".patched"), "w") as f:
        f.write(f"{count} xgetbv rewritten in {os.path.basename(modules[0])}\n")
    return root


def peer_env(python: str, cache: str, isa: str) -> dict:
    """The environment for a peer process: ORT's AVX2 copy first on PYTHONPATH when isa is avx2."""
    env = dict(os.environ)
    if isa == "avx2":
        path = avx2_onnxruntime(python, cache)
        env["PYTHONPATH"] = path + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    print(avx2_onnxruntime(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "build"))
