#version 450
// matmul.comp - batched [.., M, K] x [.., K, N] for float inputs (f32,
// f16, bf16 loaded as f32) or 32-bit-wrapping integers, tiled in shared
// memory: a workgroup of 16x16 invocations makes a BM x BN block of the
// output (64x64 by default, each invocation a 4x4 micro-tile, stepping
// through K by 16; the "big" build for large float products uses 128x128
// blocks, 8x8 micro-tiles and steps of 8).
// The output is contiguous and 32-bit (f32, i32 or u32); the host runs a
// cast afterwards for 8/16-bit outputs. gl_WorkGroupID.z is the batch.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#ifndef BM
#define BM 64u
#define BN 64u
#define BK 16u
#endif
#define TM (BM / 16u)
#define TN (BN / 16u)
layout(local_size_x = 16, local_size_y = 16) in;
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

shared uint tile_a[BK][BM + 1u];
shared uint tile_b[BK][BN + 1u];

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;

    uint batch = gl_WorkGroupID.z, a_base = pc.a_offset, b_base = pc.b_offset;
    uint d_base = pc.d_offset + batch * pc.M * pc.N;
    for (int d = int(pc.batch_ndim) - 1; d >= 0; d--) {
        uint coord = batch % pc.batch_shape[d];
        batch /= pc.batch_shape[d];
        a_base += coord * pc.a_batch_strides[d];
        b_base += coord * pc.b_batch_strides[d];
    }

    float acc_f[TM][TN];
    uint acc_u[TM][TN];
    // The micro-tile loops are unrolled so that the accumulators stay in
    // registers: without the hints an H200 made 2.2 TFLOP/s (the array in
    // local memory, it seems), with them 26.5.
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) { acc_f[i][j] = 0.0; acc_u[i][j] = 0u; }

    // A split product (no batch dims then) walks its own slice of K.
    uint k_begin = pc.k_slice * gl_WorkGroupID.z;
    uint k_end = pc.k_slice == 0u ? pc.K : min(pc.K, k_begin + pc.k_slice);
    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
        // 1024 elements per tile, 4 per invocation; consecutive invocations
        // read consecutive k of A and consecutive n of B.
        for (uint l = tid; l < BM * BK; l += 256u) {
            uint k = l % BK, m = l / BK;
            uint gm = row0 + m, gk = k0 + k;
            tile_a[k][m] = (gm < pc.M && gk < k_end) ? load_value_a(a_base + gm * pc.a_stride_m + gk * pc.a_stride_k) : 0u;
        }
        for (uint l = tid; l < BN * BK; l += 256u) {
            uint n = l % BN, k = l / BN;
            uint gn = col0 + n, gk = k0 + k;
            tile_b[k][n] = (gn < pc.N && gk < k_end) ? load_value_b(b_base + gk * pc.b_stride_k + gn * pc.b_stride_n) : 0u;
        }
        barrier();
        [[unroll]] for (uint k = 0u; k < BK; k++) {
            if (float_math()) {
                float a[TM], b[TN];
                [[unroll]] for (uint i = 0u; i < TM; i++) a[i] = uintBitsToFloat(tile_a[k][ty + 16u * i]);
                [[unroll]] for (uint j = 0u; j < TN; j++) b[j] = uintBitsToFloat(tile_b[k][tx + 16u * j]);
                [[unroll]] for (uint i = 0u; i < TM; i++)
                    [[unroll]] for (uint j = 0u; j < TN; j++) acc_f[i][j] += a[i] * b[j];
            } else {
                [[unroll]] for (uint i = 0u; i < TM; i++)
                    [[unroll]] for (uint j = 0u; j < TN; j++) acc_u[i][j] += tile_a[k][ty + 16u * i] * tile_b[k][tx + 16u * j];
            }
        }
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < TM; i++) {
        uint gm = row0 + ty + 16u * i;
        if (gm >= pc.M) continue;
        [[unroll]] for (uint j = 0u; j < TN; j++) {
            uint gn = col0 + tx + 16u * j;
            if (gn < pc.N) d_buf[d_base + gm * pc.N + gn] = float_math() ? floatBitsToUint(acc_f[i][j]) : acc_u[i][j];
        }
    }
}
