#version 450
// encoder_k2.comp - k2: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:63: op gemm(h,Wv[l],bv[l]) >> v
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint Wv_at; uint bv_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define Wv(i) model[pc.Wv_at - pc.oi_mb + (i)] /* Wv(l): the entry the step pushes */
#define bv(i) model[pc.bv_at - pc.oi_mb + (i)] /* bv(l): the entry the step pushes */
#define v(i) arena[344064u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, K = 384u;
#define MM_T 16u /* MM_T x MM_T threads of 4 x 4 results */
#define BM 64u
#define BN 64u
#define BK 16u
/* the store loops unrolled by the driver, not by glslang: lavapipe computed a
 * gelu epilogue wrongly in 16 unrolled copies */
#define MM_STORE_UNROLL

/* K in 12 slices of 32 (workgroup z): slice z's partial products at SPLIT_AT + z * M * N,
 * summed by encoder_k19.comp with the epilogue */
const uint K_SLICE = 32u, SPLIT_AT = 2113536u;

bool float_math() { return true; }
uint mm_rows() { return M; }
uint mm_cols() { return N; }
uint mm_load_a(uint base, uint m, uint k) { return floatBitsToUint(h(m * K + k)); }
uint mm_load_b(uint base, uint k, uint n) { return floatBitsToUint(Wv(k * N + n)); }

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    arena[SPLIT_AT + gl_WorkGroupID.z * M * N + r * N + j] = acc_j;
}

#include "oi_matmul_tiles.glsl"

void main() {
    uint k_begin = gl_WorkGroupID.z * K_SLICE;
    mm_tiles(0u, 0u, 0u, k_begin, min(K, k_begin + K_SLICE));
}
