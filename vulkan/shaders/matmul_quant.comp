#version 450
// matmul_quant.comp - x [M, K] (f32, f16 or bf16) times quantized weights,
// dequantized while the B tile is loaded into shared memory, accumulated
// in f32 (tiled like matmul.comp: 16x16 invocations, a 64x64 output block,
// 4x4 per invocation, K in steps of 16, half a q4 block; the two tiles
// take 8 KB, within the 16 KB of shared memory every device has):
//   format 0, matmul_q8: w i8, element (k, n) at n * w_stride_n + k * w_stride_k
//     (layout "nk" or "kn"), y[m, n] = scale[n] * sum_k x[m, k] w(k, n);
//   format 1, q4_0 / 2, q4_1: w u8 rows of K / 32 ggml blocks (f16 d,
//     [f16 m,] 16 bytes of nibbles; low nibbles are elements 0..15 of the
//     block, high 16..31): w(k, n) = (q - 8) d, or q d + m.
// The output is f32, contiguous [M, N] from d_offset (the host casts to
// f16/bf16 afterwards).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define BM 64u
#define BN 64u
#define BK 16u
#define TM 4u
#define TN 4u
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 1) const uint A_DT = DT_F32; // x
layout(constant_id = 2) const uint S_DT = DT_F32; // scale (q8)

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };  // x
layout(binding = 1) readonly buffer BufB { uint w_buf[]; };  // weights
layout(binding = 2) readonly buffer BufC { uint s_buf[]; };  // scale (q8)
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; }; // f32 output

layout(push_constant) uniform Push {
    uint M, N, K;
    uint format;             // 0 q8, 1 q4_0, 2 q4_1
    uint a_stride_m, a_stride_k, a_offset;
    uint w_stride_n, w_stride_k, w_offset; // q4: w_stride_n is the row stride in bytes
    uint s_stride, s_offset;
    uint d_offset;
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_w, w_buf)
OI_DEFINE_LOAD_BITS(load_s, s_buf)

uint w_byte(uint i) { return (w_buf[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu; }
float w_half(uint i) { return unpackHalf2x16(w_byte(i) | (w_byte(i + 1u) << 8u)).x; }

// The dequantized weight (k, n) (without the q8 scale, applied at the end).
float weight(uint k, uint n) {
    if (pc.format == 0u) return bits_to_float(DT_I8, load_w(DT_I8, pc.w_offset + n * pc.w_stride_n + k * pc.w_stride_k));
    uint block_bytes = pc.format == 2u ? 20u : 18u;
    uint block = pc.w_offset + n * pc.w_stride_n + (k / 32u) * block_bytes;
    uint j = k % 32u;
    uint q = (w_byte(block + block_bytes - 16u + (j & 15u)) >> (j < 16u ? 0u : 4u)) & 15u;
    float d = w_half(block);
    if (pc.format == 2u) return float(q) * d + w_half(block + 2u);
    return (float(q) - 8.0) * d;
}

shared float tile_a[BK][BM + 1u];
shared float tile_b[BK][BN + 1u];

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    float acc[TM][TN];
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] = 0.0;

    for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
        for (uint l = tid; l < BM * BK; l += 256u) {
            uint k = l % BK, m = l / BK;
            uint gm = row0 + m, gk = k0 + k;
            tile_a[k][m] = (gm < pc.M && gk < pc.K)
                ? bits_to_float(A_DT, load_a(A_DT, pc.a_offset + gm * pc.a_stride_m + gk * pc.a_stride_k)) : 0.0;
        }
        for (uint l = tid; l < BN * BK; l += 256u) {
            uint k = l % BK, n = l / BK; // consecutive k: one weight row's bytes
            uint gn = col0 + n, gk = k0 + k;
            tile_b[k][n] = (gn < pc.N && gk < pc.K) ? weight(gk, gn) : 0.0;
        }
        barrier();
        [[unroll]] for (uint k = 0u; k < BK; k++) {
            float a[TM], b[TN];
            [[unroll]] for (uint i = 0u; i < TM; i++) a[i] = tile_a[k][ty + 16u * i];
            [[unroll]] for (uint j = 0u; j < TN; j++) b[j] = tile_b[k][tx + 16u * j];
            [[unroll]] for (uint i = 0u; i < TM; i++)
                [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        barrier();
    }

    [[unroll]] for (uint j = 0u; j < TN; j++) {
        uint gn = col0 + tx + 16u * j;
        if (gn >= pc.N) continue;
        float s = pc.format == 0u ? bits_to_float(S_DT, load_s(S_DT, pc.s_offset + gn * pc.s_stride)) : 1.0;
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            uint gm = row0 + ty + 16u * i;
            if (gm < pc.M) d_buf[pc.d_offset + gm * pc.N + gn] = floatBitsToUint(s * acc[i][j]);
        }
    }
}
