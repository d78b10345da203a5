#version 450
// encoder_k12.comp - k12: matmul, 2 statements (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:73: op gemm(joined,Wo[l],bo[l]) >> proj
//   bench_encoder.c:74: op add(h,proj) >> res
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint Wo_at; uint bo_at; } pc; /* set when the step is recorded */
#define joined(i) arena[737280u + (i)] /* f32, a temporary */
#define Wo(i) model[pc.Wo_at - pc.oi_mb + (i)] /* Wo(l): the entry the step pushes */
#define bo(i) model[pc.bo_at - pc.oi_mb + (i)] /* bo(l): the entry the step pushes */
#define proj(i) arena[835584u + (i)] /* f32, a temporary */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define res(i) arena[884736u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, K = 384u;
#define MM_T 16u /* MM_T x MM_T threads of 4 x 4 results */
#define BM 64u
#define BN 64u
#define BK 16u
/* the store loops unrolled by the driver, not by glslang: lavapipe computed a
 * gelu epilogue wrongly in 16 unrolled copies */
#define MM_STORE_UNROLL

/* K in 12 slices of 32 (workgroup z): slice z's partial products at SPLIT_AT + z * M * N,
 * summed by encoder_k20.comp with the epilogue */
const uint K_SLICE = 32u, SPLIT_AT = 2703360u;

bool float_math() { return true; }
uint mm_rows() { return M; }
uint mm_cols() { return N; }
uint mm_load_a(uint base, uint m, uint k) { return floatBitsToUint(joined(m * K + k)); }
uint mm_load_b(uint base, uint k, uint n) { return floatBitsToUint(Wo(k * N + n)); }

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    arena[SPLIT_AT + gl_WorkGroupID.z * M * N + r * N + j] = acc_j;
}

#include "oi_matmul_tiles.glsl"

void main() {
    uint k_begin = gl_WorkGroupID.z * K_SLICE;
    mm_tiles(0u, 0u, 0u, k_begin, min(K, k_begin + K_SLICE));
}
