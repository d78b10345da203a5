#version 450
// encoder_k14.comp - k14: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:76: op gemm(h,W1[l],b1[l],activation="gelu") >> ffn
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint W1_at; uint b1_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define W1(i) model[pc.W1_at - pc.oi_mb + (i)] /* W1(l): the entry the step pushes */
#define b1(i) model[pc.b1_at - pc.oi_mb + (i)] /* b1(l): the entry the step pushes */
#define ffn(i) arena[0u + (i)] /* f32, a temporary */

const uint M = 128u, N = 1536u, K = 384u;
#define MM_T 16u /* MM_T x MM_T threads of 4 x 4 results */
#define BM 64u
#define BN 64u
#define BK 16u
/* the store loops unrolled by the driver, not by glslang: lavapipe computed a
 * gelu epilogue wrongly in 16 unrolled copies */
#define MM_STORE_UNROLL

/* K in 6 slices of 64 (workgroup z): slice z's partial products at SPLIT_AT + z * M * N,
 * summed by encoder_k21.comp with the epilogue */
const uint K_SLICE = 64u, SPLIT_AT = 3293184u;

bool float_math() { return true; }
uint mm_rows() { return M; }
uint mm_cols() { return N; }
uint mm_load_a(uint base, uint m, uint k) { return floatBitsToUint(h(m * K + k)); }
uint mm_load_b(uint base, uint k, uint n) { return floatBitsToUint(W1(k * N + n)); }

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    arena[SPLIT_AT + gl_WorkGroupID.z * M * N + r * N + j] = acc_j;
}

#include "oi_matmul_tiles.glsl"

void main() {
    uint k_begin = gl_WorkGroupID.z * K_SLICE;
    mm_tiles(0u, 0u, 0u, k_begin, min(K, k_begin + K_SLICE));
}
