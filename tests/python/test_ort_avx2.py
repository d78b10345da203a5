"""bench/ort_avx2.py: every xgetbv of a binary becomes `push 7; pop rax`, so the program reads
XCR0 as x87 | SSE | AVX (no AVX-512 state) and the rest of it runs unchanged. The program here
is built from source and run before and after the rewrite."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))
import ort_avx2  # noqa: E402

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None or shutil.which("objdump") is None or platform.machine() != "x86_64",
                                reason="needs an x86-64 C compiler and objdump")

# Reads XCR0 twice (two xgetbv sites), as MLAS and ORT's CPU probe each do.
PROGRAM = r"""
#include <stdio.h>
static unsigned long long xcr0_a(void) { unsigned lo, hi; __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
                                          return ((unsigned long long)hi << 32) | lo; }
static unsigned long long xcr0_b(void) { unsigned lo, hi; __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
                                          return ((unsigned long long)hi << 32) | lo; }
int main(void) {
    printf("%llx %llx\n", xcr0_a() & 0xff, xcr0_b() & 0xff);
    return 0;
}
"""


def build(tmp_path):
    src, exe = tmp_path / "xcr0.c", tmp_path / "xcr0"
    src.write_text(PROGRAM)
    subprocess.run([CC, "-O1", "-o", str(exe), str(src)], check=True)
    return str(exe)


def test_every_xgetbv_reads_avx_state_only(tmp_path):
    exe = build(tmp_path)
    before = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    assert all(int(x, 16) & 0x7 == 0x7 for x in before)  # any AVX machine: x87, SSE and AVX state on
    assert len(ort_avx2.xgetbv_offsets(exe)) == 2
    assert ort_avx2.patch(exe) == 2
    assert ort_avx2.xgetbv_offsets(exe) == []
    after = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    assert after == ["7", "7"]


def test_a_binary_without_xgetbv_is_refused(tmp_path):
    src, exe = tmp_path / "plain.c", tmp_path / "plain"
    src.write_text("int main(void) { return 0; }\n")
    subprocess.run([CC, "-O1", "-o", str(exe), str(src)], check=True)
    with pytest.raises(RuntimeError, match="none found"):
        ort_avx2.patch(str(exe))
