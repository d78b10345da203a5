#!/usr/bin/env bash
# synth_tiles_ab.sh - the emitted encoder block's split matmuls (vulkan/shaders/matmul_tiles.glsl
# and synth/vulkan_plan.c's split rule) in several variants, timed alternately in one run on the
# GPU machine, with PyTorch eager between the rounds. A variant is the synthesizer built with its
# own -D constants (OI__VK_SPLIT_SIDE, _BLOCK, _BK, _TARGET, _MOST_K: vulkan_plan.c), and "old"
# marks one whose folder gets the tile loops of git revision BASE (default HEAD~1) instead.
#   bash bench/gpu/synth_tiles_ab.sh stage [BUILD_DIR]  # dev machine: .gpu/tiles/NAME/{bench,prof,encoder}
#   bash bench/gpu/synth_tiles_ab.sh run OUT            # GPU machine: OUT/tiles.txt
# stage needs BUILD_DIR's tools/openinfer, libopeninfer.a, tests/synth/export_encoder and
# BUILD_DIR/encoder_data (bench/encoder/gen_encoder.py). run prints, per variant and round, the
# median ms a step and its GPU ms (200 steps), then each variant's GPU time per kernel (a
# timestamp after every dispatch) and its largest |h - ONNX Runtime's h| after one step.
# A variant: name flags... (VARIANTS overrides the list; "old" as a flag: BASE's tile loops).
set -eu
VARIANTS=${VARIANTS:-"
base     old -DOI__VK_SPLIT_BK=16 -DOI__VK_SPLIT_MOST_K=128
pf16     -DOI__VK_SPLIT_BK=16
pf32     -DOI__VK_SPLIT_BK=32
whole
s8       -DOI__VK_SPLIT_SIDE=8
s8k32    -DOI__VK_SPLIT_SIDE=8 -DOI__VK_SPLIT_BK=32
b64      -DOI__VK_SPLIT_BLOCK=64
b64t96   -DOI__VK_SPLIT_BLOCK=64 -DOI__VK_SPLIT_TARGET=96 -DOI__VK_SPLIT_MOST_K=384
s8t768   -DOI__VK_SPLIT_SIDE=8 -DOI__VK_SPLIT_TARGET=768 -DOI__VK_SPLIT_MOST_K=64
whole768 -DOI__VK_SPLIT_TARGET=768 -DOI__VK_SPLIT_MOST_K=64
"}
mode=${1:?stage or run}
shift
G=${G:-.gpu}
T=$G/tiles

stage() {
    local build=${1:-build-gpu} volk=${VOLK_DIR:-/usr/include} tmp flags name
    tmp=$(mktemp -d)
    rm -rf "$T"
    mkdir -p "$T/data"
    cp "$build/encoder_data/encoder.oinf" "$T/data/"
    python3 - "$build/encoder_data" "$T/data" <<'PY'
import os, sys
import numpy as np
import onnxruntime as ort
d, out = sys.argv[1], sys.argv[2]
x = np.load(os.path.join(d, "encoder_input.npy")).astype(np.float32)
sess = ort.InferenceSession(os.path.join(d, "encoder.onnx"), providers=["CPUExecutionProvider"])
ref = sess.run(None, {sess.get_inputs()[0].name: x})[0]
np.save(os.path.join(out, "x_2d.npy"), x.reshape(-1, x.shape[-1]))
np.save(os.path.join(out, "ref_ort.npy"), ref.reshape(-1, ref.shape[-1]).astype(np.float32))
PY
    "$build/tests/synth/export_encoder" "$tmp" 1 >/dev/null # graph.json
    git show "${BASE:-HEAD~1}:vulkan/shaders/matmul_tiles.glsl" > "$tmp/old_tiles.glsl"
    local cc_lib
    cc_lib=$(python3 -c "
import json, sys
for e in json.load(open('$build/compile_commands.json')):
    if e['file'].endswith('synth/synth_lib.c'):
        print(e['command'].split(' -o ')[0])" | sed 's/-MD -MQ [^ ]* -MF [^ ]*//')
    echo "$VARIANTS" | while read -r name flags; do
        [ -n "$name" ] || continue
        local old=0 dflags=${flags:-}
        case " $dflags " in *" old "*) old=1; dflags=${dflags/old/} ;; esac
        # the synthesizer with this variant's constants: its synth_lib.o ahead of the library's
        (cd "$build" && $cc_lib $dflags -o "$tmp/synth_lib.o" -c ../synth/synth_lib.c)
        cc -o "$tmp/openinfer" "$build/tools/openinfer.p/openinfer.c.o" "$tmp/synth_lib.o" \
            -Wl,--start-group "$build/libopeninfer.a" "$build/vulkan/liboi_volk.a" -lm -pthread -ldl -Wl,--end-group
        local out=$tmp/$name
        "$tmp/openinfer" synth "$T/data/encoder.oinf" "$tmp/graph.json" --target examples/devices/h100.json \
            --out "$out" >/dev/null
        [ $old = 1 ] && cp "$tmp/old_tiles.glsl" "$out/oi_matmul_tiles.glsl"
        make -s -C "$out" VOLK_DIR="$volk" CFLAGS="-O2 -std=c11 -Wall -Wextra -pedantic" >/dev/null
        mkdir -p "$T/$name"
        cc -O2 -std=c11 -Wall -Wextra -I"$out" bench/gpu/synth_bench.c "$out/libencoder.a" -ldl -lm -o "$T/$name/bench"
        cc -O2 -std=c11 -DOI_VK_PROFILE=64 -I"$volk" -c "$out/encoder.c" -o "$out/encoder_prof.o"
        cc -O2 -std=c11 -Wall -Wextra -DOI_VK_PROFILE=64 -I"$out" bench/gpu/synth_bench.c "$out/encoder_prof.o" \
            "$out/libencoder.a" -ldl -lm -o "$T/$name/prof"
        cp "$out/encoder" "$T/$name/encoder"
        cp "$out"/encoder_k*.comp "$T/$name/"
        echo "staged $name ($flags): $(grep -h '^#define B[MK] \|^#define MM_T\|K_SLICE = ' "$out"/encoder_k*.comp | sort | uniq -c | tr -s ' \n' ' ')"
    done
    echo "$VARIANTS" > "$T/variants.txt"
    rm -rf "$tmp"
}

run() {
    local out=${1:?OUT} work name rest
    mkdir -p "$out"
    work=$(mktemp -d)
    names=$(awk 'NF {print $1}' "$T/variants.txt")
    for name in $names; do
        $T/$name/encoder $T/data/encoder.oinf --steps 1 --input x=$T/data/x_2d.npy --fetch h --out "$work/$name.h" \
            > /dev/null 2>&1 || echo "$name: the driver failed"
        timeout 60 $T/$name/prof $T/data/encoder.oinf $T/data/x_2d.npy --runs 20 > "$work/$name.prof" 2>&1 || true
    done
    for round in 1 2; do
        for name in $names; do
            timeout 60 $T/$name/bench $T/data/encoder.oinf $T/data/x_2d.npy --runs 200 > "$work/$name.r$round" 2>&1 || true
        done
        [ -f bench/gpu/encoder_torch.py ] && timeout 120 python3 bench/gpu/encoder_torch.py --runs 200 \
            > "$work/torch.r$round" 2>&1 || true
    done
    python3 - "$work" "$T" $names <<'PY' | tee "$out/tiles.txt"
import os, re, sys
import numpy as np
work, tiles, names = sys.argv[1], sys.argv[2], sys.argv[3:]
ref = np.load(os.path.join(tiles, "data", "ref_ort.npy"))
def grab(pattern, path):
    try:
        m = re.search(pattern, open(path).read(), re.M)
    except OSError:
        return None
    return float(m.group(1)) if m else None
for r in (1, 2):
    t = grab(r"torch_ms best=\S+ median=([\d.]+)", os.path.join(work, "torch.r%d" % r))
    print("round %d: torch eager median %s ms" % (r, "%.4f" % t if t else "?"))
print("%-9s %-17s %-17s %5s %9s  %s" % ("variant", "round 1 ms (GPU)", "round 2 ms (GPU)", "disp", "|h-ort|", "per kernel us"))
for name in names:
    cells = []
    for r in (1, 2):
        p = os.path.join(work, "%s.r%d" % (name, r))
        ms, gpu = grab(r"^emitted_ms best=\S+ median=([\d.]+)", p), grab(r"^emitted_gpu_ms median=([\d.]+)", p)
        cells.append("%.4f (%.4f)" % (ms, gpu) if ms and gpu else "failed")
    disp = grab(r"emitted_dispatches=(\d+)", os.path.join(work, "%s.r1" % name))
    try:
        h = np.load(os.path.join(work, name + ".h", "h.npy"))
        diff = "%.2e" % float(np.abs(h - ref).max())
    except OSError:
        diff = "none"
    prof = open(os.path.join(work, name + ".prof")).read()
    ks = [(int(k), float(us)) for k, us in re.findall(r"emitted_kernel k(\d+) us=([\d.]+)", prof)]
    per = []
    for k, us in ks:
        head = open(os.path.join(tiles, name, "encoder_k%d.comp" % k)).read().splitlines()[1]
        what = head.split(": ", 1)[1].split(",")[0]
        stmt = open(os.path.join(tiles, name, "encoder_k%d.comp" % k)).read().splitlines()[2]
        tag = re.search(r"gemm\(\w+,(\w+)", stmt)
        per.append("%s=%.1f" % (tag.group(1) if tag and what == "matmul" else what[:6], us))
    total = sum(us for _, us in ks)
    print("%-9s %-17s %-17s %5s %9s  total %.1f: %s" % (name, cells[0], cells[1], "%d" % disp if disp else "?", diff,
                                                         total, " ".join(per)))
PY
    rm -rf "$work"
}

"$mode" "$@"
