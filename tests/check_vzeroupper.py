#!/usr/bin/env python3
"""No function of the library returns with the upper halves of the vector registers dirty.

    check_vzeroupper.py LIBRARY.a

The kernels are compiled for the baseline ISA and call AVX2 / AVX-512 functions (target
attributes). Such a function must end in vzeroupper before it returns to SSE code: on Intel
cores, until one runs, every legacy-SSE instruction pays a transition (AMD's do not, so a
benchmark there cannot see it). GCC emits it, except where the function's last vector work was
a call it assumed had cleaned up: an AVX2 helper returning a __m128 did not, and the AVX-512
skinny products ran at half their speed on an Intel Xeon. This walks objdump's listing of every
function back from each `ret` to the last instruction that touches a ymm/zmm register, a
vzeroupper, a call or a jump, and fails when it is a ymm/zmm instruction (a straight-line
return with dirty registers). Exit 77 (skipped) without objdump or off x86-64.
"""
import platform
import re
import shutil
import subprocess
import sys


def functions(listing):
    name, body = None, []
    for line in listing.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
        elif name and "\t" in line:
            body.append(line.rsplit("\t", 1)[-1].strip())
    if name:
        yield name, body


def vector(ins):
    return "%ymm" in ins or "%zmm" in ins


def dirty_return(body):
    for i, ins in enumerate(body):
        if not ins.startswith("ret"):
            continue
        j = i - 1
        while j >= 0 and not (vector(body[j]) or body[j].startswith(("vzeroupper", "call", "jmp", "ret"))):
            j -= 1
        if j >= 0 and vector(body[j]):
            return body[j]
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_vzeroupper.py LIBRARY.a")
    if platform.machine() not in ("x86_64", "AMD64") or not shutil.which("objdump"):
        print("check_vzeroupper: SKIP: needs x86-64 and objdump")
        return 77
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", sys.argv[1]], capture_output=True, text=True,
                             check=True).stdout
    checked, bad = 0, []
    for name, body in functions(listing):
        if any(vector(ins) for ins in body):
            checked += 1
            last = dirty_return(body)
            if last:
                bad.append(f"{name}: returns after `{last}`")
    print(f"check_vzeroupper: {checked} functions use ymm/zmm registers; {len(bad)} return with them dirty")
    for line in bad:
        print("  " + line)
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
