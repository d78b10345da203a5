#!/usr/bin/env bash
# coopmat_sweep.sh - tile shapes of matmul_coopmat.comp, compared in one
# run on the GPU machine. On the dev machine, `build` makes one vk_peer per
# variant into DIR (a copy of the tree is rebuilt with each variant's shader
# defines and the host's OI__VK_COOPMAT_BM/BN); on the GPU machine, `run`
# times each one's n x n f16 matmul (vk_peer N 10 1000 matmul: back to back, best of 10, and the
# sampled check of the product) through the KHR module and, on a line of its
# own, through the NV one (OPENINFER_VULKAN_COOPMAT=nv; SWEEP_NV=0 skips it), then prints what
# the driver made of each KHR module (vk_shader_stats: registers, shared
# memory, ...; its machine code lands in OUT/ir_NAME/pipeline_cache.bin).
#   bash bench/gpu/coopmat_sweep.sh build .sweep        # on the dev machine (needs glslc)
#   bash bench/gpu/coopmat_sweep.sh run .sweep $OUT     # on the GPU machine
# A variant: name BM BN "shader defines" (see matmul_coopmat.comp's knobs;
# -DBM and -DBN are added from the BM and BN columns).
set -eu
VARIANTS=${VARIANTS:-"
default   128 256 -DBK=32u,-DSTAGES=1u,-DWG_M=2u,-DWG_N=8u
m256      256 128 -DBK=32u,-DSTAGES=1u,-DWG_M=4u,-DWG_N=4u
t128      128 128 -DBK=64u,-DSTAGES=1u,-DWG_M=2u,-DWG_N=4u
t128s2    128 128 -DBK=32u,-DSTAGES=2u,-DWG_M=2u,-DWG_N=4u
n256k16s2 128 256 -DBK=16u,-DSTAGES=2u,-DWG_M=2u,-DWG_N=8u
n192s2    128 192 -DBK=32u,-DSTAGES=2u,-DWG_M=2u,-DWG_N=6u
"}
mode=${1:?build or run}
DIR=${2:?the folder of the variants}

build() {
    local src=/tmp/oi-sweep-src bld=/tmp/oi-sweep-build
    mkdir -p "$DIR" "$src"
    git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$src" # the tracked files, as they are now
    [ -d "$bld" ] || meson setup "$bld" "$src" -Dvulkan=enabled -Dblas=disabled --buildtype=release >/dev/null
    echo "$VARIANTS" | while read -r name bm bn defs; do
        [ -n "$name" ] || continue
        local list
        list=$(echo "-DBM=${bm}u,-DBN=${bn}u,$defs" | sed "s/[^,]*/'&'/g; s/,/, /g")
        sed -i "s/\['matmul_coopmat', 'matmul_coopmat', \[[^]]*\]\]/['matmul_coopmat', 'matmul_coopmat', [$list]]/" "$src/vulkan/meson.build"
        sed -i "s/^#define OI__VK_COOPMAT_BM .*/#define OI__VK_COOPMAT_BM ${bm}u/; s/^#define OI__VK_COOPMAT_BN .*/#define OI__VK_COOPMAT_BN ${bn}u/" \
            "$src/vulkan/vk_ops.c"
        ninja -C "$bld" libopeninfer.a >/dev/null
        cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN "$src/bench/gpu/vk_peer.c" "$bld/libopeninfer.a" \
            -o "$DIR/vk_peer_$name" -lm -lpthread -ldl
        cp "$bld/vulkan/matmul_coopmat.spv" "$DIR/${name}_nv.spv"
        cp "$bld/vulkan/matmul_coopmat_khr.spv" "$DIR/$name.spv"
        echo "built $name: BM $bm BN $bn $defs"
    done
    cc -O2 -std=c11 -D_GNU_SOURCE bench/gpu/vk_shader_stats.c -o "$DIR/vk_shader_stats" -ldl
    # the specialization constants of an f16 x f16 -> f16 matmul (oi__vk_plan_matmul_coopmat)
    printf '#include "openinfer.h"\n#include <stdio.h>\nint main(void) { printf("%%d %%d 0 0 %%d\\n", OI_OP_matmul, OI_DTYPE_F16, OI_DTYPE_F16); return 0; }\n' \
        > /tmp/oi-sweep-spec.c
    cc -I. /tmp/oi-sweep-spec.c -o /tmp/oi-sweep-spec && /tmp/oi-sweep-spec > "$DIR/spec.txt"
    echo "$VARIANTS" > "$DIR/variants.txt"
}

run() {
    local out=${3:-/tmp/oi-sweep} n=${N:-4096}
    mkdir -p "$out"
    while read -r name bm bn defs; do
        [ -n "$name" ] || continue
        timeout 60 "$DIR/vk_peer_$name" "$n" 10 1000 matmul > "$out/$name.txt" 2>&1
        if [ "${SWEEP_NV:-1}" = 1 ]; then
            OPENINFER_VULKAN_COOPMAT=nv timeout 60 "$DIR/vk_peer_$name" "$n" 10 1000 matmul > "$out/${name}_nv.txt" 2>&1
            printf '%-10s NV extension: %s\n' "$name" "$(grep -o 'matmul_f16 [0-9.]* GFLOP/s ([0-9.]* us' "$out/${name}_nv.txt")"
        fi
        printf '%-10s BM %-3s BN %-3s %-52s %s | %s\n' "$name" "$bm" "$bn" "$defs" \
            "$(grep -o 'matmul_f16 [0-9.]* GFLOP/s ([0-9.]* us' "$out/$name.txt")" \
            "$(grep -o 'entries: .*' "$out/$name.txt")"
    done < "$DIR/variants.txt"
    while read -r name bm bn defs; do
        [ -n "$name" ] || continue
        echo "== $name"
        mkdir -p "$out/ir_$name"
        # shellcheck disable=SC2046
        OI_IR_DIR="$out/ir_$name" "$DIR/vk_shader_stats" "$DIR/$name.spv" $(cat "$DIR/spec.txt") 2>&1 | grep -v '^ executable'
    done < "$DIR/variants.txt"
}

"$mode" "$@"
