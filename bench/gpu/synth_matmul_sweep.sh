#!/usr/bin/env bash
# synth_matmul_sweep.sh - tile shapes of the emitted cooperative-matrix matmul, timed in one run
# on the GPU machine. Each variant is examples/devices/h100.json at fp16 with its own
# preferences.coopmat_block [BM, BN, BK] and coopmat_subgroups [WG_M, WG_N, STAGES]
# (docs/synthesizer.md, "The Vulkan target"), through which tests/synth/matmul_graph.c at
# n = 4096 is synthesized twice (R = 1 and 9 products a step), built with
# bench/gpu/synth_matmul_bench.c and -DOI_VK_PROFILE=16 (each kernel's GPU time).
#   bash bench/gpu/synth_matmul_sweep.sh stage [BUILD_DIR]   # dev machine: .gpu/sweep/NAME/{r1,r9}
#   bash bench/gpu/synth_matmul_sweep.sh run OUT             # GPU machine: OUT/sweep.txt
# `run` writes the two models once (tests/synth/export_matmul, staged as .gpu/export_matmul by
# synth_stage.sh: the same bytes as here, so the fingerprints match), times every variant
# (a product: (GPU ms at R = 9 - at R = 1) / 8, and the matmul kernel's own timestamps at R = 1),
# cuBLAS through torch in the same run, and prints one line per variant with its ratio to cuBLAS
# and the first row sum (the same in every variant, up to f32 rounding, when each is right).
# A variant: name BM BN BK WG_M WG_N STAGES (VARIANTS overrides the list).
set -eu
VARIANTS=${VARIANTS:-"
default  128 256 32 2 4 1
k48      128 256 48 2 4 1
sg2x8    128 256 32 2 8 1
m256p64  256 128 32 4 2 1
t128p64  128 128 32 2 2 1
p32x64   128 256 32 4 4 1
k16s2    128 256 16 2 4 2
"}
mode=${1:?stage or run}
shift
G=${G:-.gpu}
S=$G/sweep
HERE=$(cd "$(dirname "$0")" && pwd)

stage() {
    local build=${1:-build-gpu} volk=${VOLK_DIR:-/usr/include} tmp
    ninja -C "$build" tools/openinfer tests/synth/export_matmul >/dev/null
    tmp=$(mktemp -d)
    rm -rf "$S"
    mkdir -p "$S"
    for r in 1 9; do
        mkdir -p "$tmp/mm_$r"
        OI_MATMUL_N=4096 OI_MATMUL_REPS=$r "$build/tests/synth/export_matmul" "$tmp/mm_$r" 0 >/dev/null
    done
    echo "$VARIANTS" | while read -r name bm bn bk wm wn st; do
        [ -n "$name" ] || continue
        python3 - examples/devices/h100.json "$tmp/$name.json" "$bm" "$bn" "$bk" "$wm" "$wn" "$st" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = [int(x) for x in sys.argv[3:]]
d["preferences"].update(default_precision="fp16", coopmat_block=v[:3], coopmat_subgroups=v[3:])
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
        for r in 1 9; do
            local out=$tmp/$name.r$r
            "$build/tools/openinfer" synth "$tmp/mm_$r/model.oinf" "$tmp/mm_$r/graph.json" --target "$tmp/$name.json" \
                --out "$out" >/dev/null
            make -s -C "$out" VOLK_DIR="$volk" CFLAGS="-O2 -std=c11 -Wall -Wextra -pedantic -DOI_VK_PROFILE=16" >/dev/null
            mkdir -p "$S/$name"
            cc -O2 -std=c11 -Wall -Wextra -I"$out" bench/gpu/synth_matmul_bench.c "$out/libmatmul_f16.a" -ldl -lm \
                -o "$S/$name/r$r"
            # the matmul's kernel (its timestamps) and the shape as the kernel has it
            grep -l ": matmul," "$out"/matmul_f16_k*.comp | sed 's/.*_k\([0-9]*\)\.comp/\1/' > "$S/$name/kernel"
            grep -E "^#define (BM|BN|BK|WG_M|WG_N|STAGES) " "$out"/matmul_f16_k"$(cat "$S/$name/kernel")".comp \
                | tr '\n' ' ' > "$S/$name/shape"
        done
        echo "staged $name: $(cat "$S/$name/shape")"
    done
    echo "$VARIANTS" > "$S/variants.txt"
    rm -rf "$tmp"
}

run() {
    local out=${1:?OUT} work
    mkdir -p "$out"
    work=$(mktemp -d)
    for r in 1 9; do
        mkdir -p "$work/mm_$r"
        OI_MATMUL_N=4096 OI_MATMUL_REPS=$r $G/export_matmul "$work/mm_$r" 0 >/dev/null
    done
    python3 "$HERE/cublas_f16.py" > "$work/cublas.txt"
    while read -r name rest; do
        [ -n "$name" ] || continue
        for r in 1 9; do
            timeout 60 $S/$name/r$r "$work/mm_$r/model.oinf" --runs 30 > "$work/$name.r$r.txt" 2>&1 || true
        done
    done < $S/variants.txt
    python3 - "$work" $S <<'PY' | tee "$out/sweep.txt"
import os, re, sys
work, sweep = sys.argv[1], sys.argv[2]
cublas = float(re.search(r"best=([\d.]+)", open(os.path.join(work, "cublas.txt")).read()).group(1))
flop = 2 * 4096 ** 3
print("cuBLAS (torch) f16 4096: %.4f ms (%.0f TFLOP/s)" % (cublas, flop / cublas / 1e9))
print("%-9s %-20s %9s %9s %7s %9s  %s" % ("variant", "shape", "ms", "TFLOP/s", "cuBLAS", "own ts ms", "s[0] (R = 1)"))
for line in open(os.path.join(sweep, "variants.txt")):
    if not line.split():
        continue
    name = line.split()[0]
    d = dict(re.findall(r"#define (\w+) (\d+)u", open(os.path.join(sweep, name, "shape")).read()))
    shape = "%sx%sx%s,%sx%s,s%s" % tuple(d.get(x, "?") for x in ("BM", "BN", "BK", "WG_M", "WG_N", "STAGES"))
    k = open(os.path.join(sweep, name, "kernel")).read().strip()
    t = [open(os.path.join(work, "%s.r%d.txt" % (name, r))).read() for r in (1, 9)]
    gpu = [re.search(r"matmul_gpu_ms best=([\d.]+)", x) for x in t]
    own = re.search(r"emitted_kernel k%s us=([\d.]+)" % k, t[0])
    if not all(gpu):
        print("%-9s %-20s failed: %s" % (name, shape, t[0].strip().splitlines()[-1:] or "?"))
        continue
    ms = (float(gpu[1].group(1)) - float(gpu[0].group(1))) / 8
    s0 = re.search(r"matmul_s\[0..3\] = (\S+)", t[0])
    print("%-9s %-20s %9.4f %9.0f %7.2f %9.4f  %s" % (name, shape, ms, flop / ms / 1e9, cublas / ms,
                                                      float(own.group(1)) / 1e3 if own else 0, s0.group(1) if s0 else "?"))
PY
    rm -rf "$work"
}

"$mode" "$@"
