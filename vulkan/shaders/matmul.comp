#version 450
// matmul.comp - batched [.., M, K] x [.., K, N] for float inputs (f32,
// f16, bf16 loaded as f32) or 32-bit-wrapping integers, tiled in shared
// memory: a workgroup of 16x16 invocations makes a BM x BN block of the
// output (64x64 by default, each invocation a 4x4 micro-tile, stepping
// through K by 16; the "big" build for large float products uses 128x128
// blocks, 8x8 micro-tiles and steps of 8; the "direct" build for CPU
// devices 32x32 blocks of 4x4 invocations, 8x8 each, read from the buffers).
// The output is contiguous and 32-bit (f32, i32 or u32); the host runs a
// cast afterwards for 8/16-bit outputs. gl_WorkGroupID.z is the batch.
// The tile loops are matmul_tiles.glsl's (the synthesizer's emitted
// matmuls include them too); this file says where A, B and D are.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#ifndef BM
#define BM 64u
#define BN 64u
#define BK 16u
#endif
#ifndef MM_SIDE // threads a side: 16, 4 in the MM_DIRECT build for CPU devices (matmul_direct_f)
#define MM_SIDE 16
#endif
#define MM_T uint(MM_SIDE)
layout(local_size_x = MM_SIDE, local_size_y = MM_SIDE) in;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 2) const uint B_DT = DT_F32;
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 1) readonly buffer BufB { uint b_buf[]; };
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; };

#define OI_MATMUL_BATCH_DIMS 3
layout(push_constant) uniform Push {
    uint M, N, K;
    uint batch_ndim; // batch dims in use (0..3); out batch stride is M*N
    uint batch_shape[OI_MATMUL_BATCH_DIMS];
    uint a_batch_strides[OI_MATMUL_BATCH_DIMS];
    uint b_batch_strides[OI_MATMUL_BATCH_DIMS];
    uint a_stride_m, a_stride_k, b_stride_k, b_stride_n; // in elements
    uint a_offset, b_offset, d_offset;
    uint k_slice; // 0, or K per slice: workgroup z walks k in [z * k_slice, +k_slice), its partial product at z * M * N
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)

// VALUE_CLASS (from the build): 0 float inputs, 1/2 integers (one module each).
bool float_math() { return VALUE_CLASS == 0; }
// Floats are kept as float bits in the tiles, integers as two's complement.
uint load_value_a(uint i) {
    uint bits = load_a(A_DT, i);
    if (float_math()) return floatBitsToUint(bits_to_float(A_DT, bits));
    return dt_is_signed(A_DT) ? uint(bits_to_int(A_DT, bits)) : bits_to_uint(A_DT, bits);
}
uint load_value_b(uint i) {
    uint bits = load_b(B_DT, i);
    if (float_math()) return floatBitsToUint(bits_to_float(B_DT, bits));
    return dt_is_signed(B_DT) ? uint(bits_to_int(B_DT, bits)) : bits_to_uint(B_DT, bits);
}

uint mm_rows() { return pc.M; }
uint mm_cols() { return pc.N; }
uint mm_load_a(uint base, uint m, uint k) { return load_value_a(base + m * pc.a_stride_m + k * pc.a_stride_k); }
uint mm_load_b(uint base, uint k, uint n) { return load_value_b(base + k * pc.b_stride_k + n * pc.b_stride_n); }
void mm_store(uint base, uint m, uint n, float f, uint u) { d_buf[base + m * pc.N + n] = float_math() ? floatBitsToUint(f) : u; }
#include "matmul_tiles.glsl"

void main() {
    uint batch = gl_WorkGroupID.z, a_base = pc.a_offset, b_base = pc.b_offset;
    uint d_base = pc.d_offset + batch * pc.M * pc.N;
    for (int d = int(pc.batch_ndim) - 1; d >= 0; d--) {
        uint coord = batch % pc.batch_shape[d];
        batch /= pc.batch_shape[d];
        a_base += coord * pc.a_batch_strides[d];
        b_base += coord * pc.b_batch_strides[d];
    }
    // A split product (no batch dims then) walks its own slice of K.
    uint k_begin = pc.k_slice * gl_WorkGroupID.z;
    uint k_end = pc.k_slice == 0u ? pc.K : min(pc.K, k_begin + pc.k_slice);
    mm_tiles(a_base, b_base, d_base, k_begin, k_end);
}
