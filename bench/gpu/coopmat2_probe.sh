#!/usr/bin/env bash
# coopmat2_probe.sh - would VK_NV_cooperative_matrix2 lift the emitted f16 matmul? On the dev
# machine, `stage` copies the emitted 4096^3 matmul folder that synth_stage.sh left in
# .gpu/synth_matmul_r1 once per variant, puts bench/gpu/coopmat2_probe.comp (workgroup-scope
# matrices, the driver's own staging) in place of its cooperative-matrix kernel k1, and patches
# the folder's host code: a Vulkan 1.3 instance, VK_NV_cooperative_matrix2 enabled with its
# workgroup-scope, flexible-dimension and tensor-addressing features, k1's grid for the variant's
# blocks. Debian 12's glslc cannot compile the probe, so `stage` fetches Debian 13's shaderc and
# glslang with the C and C++ runtimes they need into BUILD/glslc-trixie (no root, nothing
# installed; they run through their own dynamic loader). On the GPU machine, `run` times the
# unpatched folder, every variant and cuBLAS (torch) in one run, each from its kernels' own
# timestamps (-DOI_VK_PROFILE), and prints each variant's row sums (the same as the unpatched
# folder's when the probe is right).
#   bash bench/gpu/synth_stage.sh build-gpu                   # first: the emitted folder
#   bash bench/gpu/coopmat2_probe.sh stage [BUILD_DIR]        # dev machine: .gpu/coopmat2/NAME
#   bash bench/gpu/coopmat2_probe.sh run                      # GPU machine
# A variant: name BM BN BK THREADS [GM] (VARIANTS overrides the list).
set -eu
VARIANTS=${VARIANTS:-"
b128x256k32 128 256 32 256
b128x256k64 128 256 64 256
b128x128k64 128 128 64 256
b256x128k64 256 128 64 256
b128x256k64g8 128 256 64 256 8
"}
mode=${1:?stage or run}
G=${G:-.gpu}
P=$G/coopmat2
HERE=$(cd "$(dirname "$0")" && pwd)

fetch_glslc() { # DIR: Debian 13's glslc, run through its own loader and libraries
    local dir=$1 list=$1/Packages pkg file root=$1/root lib
    [ -x "$dir/glslc" ] && return
    mkdir -p "$root"
    curl -fsS http://deb.debian.org/debian/dists/trixie/main/binary-amd64/Packages.xz | xz -dc > "$list"
    for pkg in glslc libshaderc1 libc6 libstdc++6 libgcc-s1; do
        file=$(awk -v p="Package: $pkg" '$0 == p { hit = 1 } hit && /^Filename:/ { print $2; exit }' "$list")
        [ -n "$file" ] || { echo "coopmat2_probe: $pkg is not in trixie's package list" >&2; exit 1; }
        curl -fsS "http://deb.debian.org/debian/$file" -o "$dir/$pkg.deb"
        dpkg -x "$dir/$pkg.deb" "$root"
    done
    lib=$root/usr/lib/x86_64-linux-gnu
    printf '#!/bin/sh\nexec %s/ld-linux-x86-64.so.2 --library-path %s %s/usr/bin/glslc "$@"\n' "$lib" "$lib" "$root" > "$dir/glslc"
    chmod +x "$dir/glslc"
}

# patch_host FOLDER BM BN: the emitted host code of matmul_f16 made to open a device with
# VK_NV_cooperative_matrix2 (the structs by their registry values: Debian 12's Vulkan headers
# predate the extension) and to dispatch k1 over the variant's blocks.
patch_host() {
    python3 - "$@" <<'PY'
import sys
d, bm, bn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def patch(path, edits):
    s = open(path).read()
    for old, new in edits:
        if old not in s:
            sys.exit("coopmat2_probe: %s no longer has %r (the emitted code changed: update this patch)" % (path, old[:60]))
        s = s.replace(old, new, 1)
    open(path, "w").write(s)
patch(d + "/matmul_f16.c", [
    ("oi_vk_dispatch(vk, cb, 1, NULL, 0, 16u, 32u, 1u,", "oi_vk_dispatch(vk, cb, 1, NULL, 0, %du, %du, 1u," % (4096 // bn, 4096 // bm)),
    ("const char *coop_extensions[3] = {VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,\n"
     "        VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME};",
     "const char *coop_extensions[4] = {VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,\n"
     "        VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME, \"VK_NV_cooperative_matrix2\"};\n"
     "    struct { VkStructureType sType; void *pNext; VkBool32 on[7]; } cm2;\n"
     "    memset(&cm2, 0, sizeof cm2);\n    cm2.sType = (VkStructureType)1000593000;"),
    ("    model.pNext = coop;\n    vkGetPhysicalDeviceFeatures2(vk->physical, &features);",
     "    model.pNext = coop;\n    coop_khr.pNext = &cm2;\n    vkGetPhysicalDeviceFeatures2(vk->physical, &features);\n"
     "    if (!khr || !cm2.on[0] || !cm2.on[1] || !cm2.on[5])\n"
     "        return matmul_f16_fail(matmul_f16_ERROR_RUNTIME, \"no VK_NV_cooperative_matrix2 with workgroup scope, \"\n"
     "                               \"flexible dimensions and tensor addressing\");"),
    ("    if (oi_vk_create_device(vk, coop_extensions, 3, &storage16))",
     "    for (int i = 2; i < 7; i++)\n        if (i != 5)\n            cm2.on[i] = VK_FALSE;\n"
     "    coop_khr.pNext = &cm2;\n    if (oi_vk_create_device(vk, coop_extensions, 4, &storage16))"),
])
patch(d + "/oi_vk_runtime.h", [("app.apiVersion = VK_API_VERSION_1_1;", "app.apiVersion = VK_API_VERSION_1_3;")])
PY
}

stage() {
    local build=${1:-build-gpu} glslc name bm bn bk threads gm d
    [ -d "$G/synth_matmul_r1" ] || { echo "coopmat2_probe: run bench/gpu/synth_stage.sh first" >&2; exit 1; }
    fetch_glslc "$build/glslc-trixie"
    glslc=$build/glslc-trixie/glslc
    rm -rf "$P"
    mkdir -p "$P"
    echo "$VARIANTS" | while read -r name bm bn bk threads gm; do
        [ -n "$name" ] || continue
        d=$P/$name
        mkdir -p "$d"
        cp "$G/synth_matmul_r1"/*.c "$G/synth_matmul_r1"/*.h "$G/synth_matmul_r1"/Makefile "$d/"
        "$glslc" --target-env=vulkan1.3 -O -DBM=${bm}u -DBN=${bn}u -DBK=${bk}u -DTHREADS=$threads \
            ${gm:+-DGM=${gm}u} -mfmt=c "$HERE/coopmat2_probe.comp" -o "$d/matmul_f16_k1.spv.h"
        { echo '#include <stdint.h>'; echo 'static const uint32_t oi__spirv_matmul_f16_k1_khr[] ='
          cat "$d/matmul_f16_k1.spv.h"; echo ';'; } > "$d/matmul_f16_k1_khr.spv.h" # both module slots: the probe
        patch_host "$d" "$bm" "$bn"
        (cd "$d" && cc -O2 -std=c11 -DOI_VK_PROFILE=16 -I"${VOLK_DIR:-/usr/include}" -c matmul_f16.c &&
            cc -O2 -c "${VOLK_DIR:-/usr/include}/volk.c" && ar rcs libmatmul_f16.a matmul_f16.o volk.o && rm -f ./*.o)
        cc -O2 -std=c11 -Wall -Wextra -I"$d" "$HERE/synth_matmul_bench.c" "$d/libmatmul_f16.a" -ldl -lm -o "$d/bench"
        echo "coopmat2_probe: staged $d"
    done
}

run() {
    local work name
    work=$(mktemp -d)
    OI_MATMUL_N=4096 OI_MATMUL_REPS=1 $G/export_matmul "$work" 0 >/dev/null
    for d in $G/synth_matmul_r1 $P/*/; do
        name=$(basename "$d")
        [ "$name" = synth_matmul_r1 ] && name="emitted (VK_KHR_cooperative_matrix, subgroup scope)"
        echo "== $name"
        timeout 60 "$d/bench" "$work/model.oinf" --runs 20 | grep -E "^matmul_gpu_ms|^matmul_s|k1 us"
    done
    python3 "$HERE/cublas_f16.py"
    rm -rf "$work"
}

"$mode" "${@:2}"
