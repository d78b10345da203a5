#version 450
// encoder_k14.comp - k14: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:77: op gemm(h,W1[l],b1[l],activation="gelu") >> ffn
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint W1_at; uint b1_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define W1(i) model[pc.W1_at - pc.oi_mb + (i)] /* W1(l): the entry the step pushes */
#define b1(i) model[pc.b1_at - pc.oi_mb + (i)] /* b1(l): the entry the step pushes */
#define ffn(i) arena[0u + (i)] /* f32, a temporary */

const uint M = 128u, N = 1536u, K = 384u;
#define MM_T 16u /* MM_T x MM_T threads of 2 x 2 results */
#define BM 32u
#define BN 32u
#define BK 16u
/* the store loops unrolled by the driver, not by glslang: lavapipe computed a
 * gelu epilogue wrongly in 16 unrolled copies */
#define MM_STORE_UNROLL

/* K in 2 slices of 192: workgroup z multiplies slice z and writes its partial products at
 * SPLIT_AT + z * M * N; the last workgroup of a block to finish (its counter at
 * COUNT_AT + block) adds the block's slices in order and runs the epilogue */
const uint K_SLICE = 192u, SLICES = 2u, SPLIT_AT = 2506752u, COUNT_AT = 3293376u;
/* the arena again, coherent: one workgroup's stores seen by another's loads */
layout(std430, binding = 0) coherent buffer OiPartial { float partial[]; };
layout(std430, binding = 0) coherent buffer OiCounts { uint counts[]; };

bool float_math() { return true; }
uint mm_rows() { return M; }
uint mm_cols() { return N; }
uint mm_load_a(uint base, uint m, uint k) { return floatBitsToUint(h(m * K + k)); }
uint mm_load_b(uint base, uint k, uint n) { return floatBitsToUint(W1(k * N + n)); }

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    partial[SPLIT_AT + gl_WorkGroupID.z * M * N + r * N + j] = acc_j;
}

float gemm_partial(uint at) { return partial[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

/* result (r, j), its slices summed */
void mm_result(uint r, uint j, float acc_j) {
    const uint i = r * 1536u + j;
    /* bench_encoder.c:77: op gemm(h,W1[l],b1[l],activation="gelu") >> ffn */
    acc_j = acc_j + b1(j);
    acc_j = OI_S_gelu_erf_f32(acc_j);
    float v0 = acc_j;
    ffn(i) = v0;
}

#include "oi_matmul_tiles.glsl"

shared bool oi_last; /* whether this workgroup is its block's last slice to finish */

void main() {
    uint k_begin = gl_WorkGroupID.z * K_SLICE;
    mm_tiles(0u, 0u, 0u, k_begin, min(K, k_begin + K_SLICE));
    memoryBarrierBuffer(); /* this slice's products out to the device, by every invocation, */
    barrier();             /* before the block's count says so */
    uint block = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (gl_LocalInvocationIndex == 0u) {
        oi_last = atomicAdd(counts[COUNT_AT + block], 1u) == SLICES - 1u;
        if (oi_last)
            counts[COUNT_AT + block] = 0u; /* every slice counted: 0 for the next dispatch */
    }
    barrier();
    if (!oi_last)
        return;
    memoryBarrierBuffer(); /* the other slices' products, as they made them visible */
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    for (uint l = gl_LocalInvocationIndex; l < BM * BN; l += MM_T * MM_T) {
        uint r = row0 + l / BN, j = col0 + l % BN;
        if (r < M && j < N)
            mm_result(r, j, gemm_slices_sum(r * N + j, M * N, SLICES));
    }
}
