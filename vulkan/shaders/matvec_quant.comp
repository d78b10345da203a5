#version 450
// matvec_quant.comp - a few rows of x [M, K] (f32, f16 or bf16; M is small:
// one token while decoding) times ggml-block weight rows [N, K / 32 blocks],
// the shape where matmul_quant.comp's 64 x 64 tiles leave most invocations
// idle. A workgroup takes COLS output columns; each column's SPLIT
// invocations take every SPLIT-th block of 32 along K, and a reduction in
// shared memory adds their sums:
//   FORMAT 1 q4_0 (18 bytes: f16 d, 16 bytes of nibbles, (q - 8) d),
//          2 q4_1 (20 bytes: f16 d, f16 m, nibbles, q d + m),
//          3 q8_0 (34 bytes: f16 d, 32 signed bytes, q d).
// ACT_Q8 = 0: x in f32 against the dequantized block.
// ACT_Q8 = 1: activations="q8", kernels/quant.c's arithmetic: x's block is
//   rounded to int8 (d = max|x| / 127, q = round(x / d) half away from
//   zero), the block's integer dot product is exact, and its term is
//     q4_0: (dw dx) (isum - 8 xs)   q4_1: (dw dx) isum + (m dx) xs   q8_0: (dw dx) isum
//   (xs the sum of x's q). The terms are added in another order than the
//   CPU's, so results agree to f32 rounding, not bit for bit.
// The output is f32, contiguous [M, N] from d_offset.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x = 64) in; // COLS * SPLIT
// SPLIT, the invocations that share a column (a power of two up to 64), is
// the pipeline's: 16 on a GPU; 1 on a CPU device such as lavapipe, where a
// workgroup's shared-memory sum costs more than the split gains (a SmolLM2
// step there 2.0 -> 0.93 s).
layout(constant_id = 0) const uint SPLIT = 16u;
#define COLS (64u / SPLIT)
layout(constant_id = 1) const uint A_DT = DT_F32; // x
// The block format and act_q8 are the pipeline's own (vk_ops_nn.c): as
// constants they fold the block arithmetic's branches, which doubles a
// decode step's speed on lavapipe.
layout(constant_id = 2) const uint FORMAT = 1u;
layout(constant_id = 3) const uint ACT_Q8 = 0u;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };  // x
layout(binding = 1) readonly buffer BufB { uint w_buf[]; };  // weight rows
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; }; // f32 output

layout(push_constant) uniform Push {
    uint M, N, K;
    uint a_stride_m, a_stride_k, a_offset;
    uint w_stride_n, w_offset; // bytes: a weight row's stride, the first row
    uint d_offset;
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)

float x_at(uint m, uint k) {
    return bits_to_float(A_DT, load_a(A_DT, pc.a_offset + m * pc.a_stride_m + k * pc.a_stride_k));
}

// The block formats' arithmetic, which the synthesizer's Vulkan kernels copy
// (scripts/embed_synth_sources.py: oi_quant_blocks.glsl); they define w_buf,
// Q_FORMAT and x_at(m, k) as this shader does.
#define Q_FORMAT FORMAT
// synth-embed begin (oi_quant_blocks.glsl)
uint w_byte(uint i) { return (w_buf[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu; }
float w_half(uint i) { return unpackHalf2x16(w_byte(i) | (w_byte(i + 1u) << 8u)).x; }
// Bytes i..i+3 as one word, whatever i's alignment (q4_0 and q8_0 blocks are 18 and 34 bytes).
uint w_word(uint i) {
    uint shift = (i & 3u) * 8u, lo = w_buf[i >> 2u];
    return shift == 0u ? lo : (lo >> shift) | (w_buf[(i >> 2u) + 1u] << (32u - shift));
}

uint block_bytes() { return Q_FORMAT == 3u ? 34u : Q_FORMAT == 2u ? 20u : 18u; }

// The block's 32 stored values: the nibbles 0..15 of q4_0 / q4_1 (low
// nibbles are elements 0..15, high 16..31), the signed bytes of q8_0.
void unpack_block(uint blk, out int q[32]) {
    if (Q_FORMAT == 3u) {
        [[unroll]] for (uint w = 0u; w < 8u; w++) {
            uint word = w_word(blk + 2u + 4u * w);
            [[unroll]] for (uint t = 0u; t < 4u; t++) q[4u * w + t] = int(word << (24u - 8u * t)) >> 24;
        }
        return;
    }
    [[unroll]] for (uint w = 0u; w < 4u; w++) {
        uint word = w_word(blk + block_bytes() - 16u + 4u * w);
        [[unroll]] for (uint t = 0u; t < 4u; t++) {
            q[4u * w + t] = int((word >> (8u * t)) & 15u);
            q[16u + 4u * w + t] = int((word >> (8u * t + 4u)) & 15u);
        }
    }
}

// Row m's block b against the weight block at byte blk, x in f32.
float block_f32(uint m, uint b, uint blk) {
    int q[32];
    unpack_block(blk, q);
    float d = w_half(blk), mn = Q_FORMAT == 2u ? w_half(blk + 2u) : 0.0, offset = Q_FORMAT == 1u ? 8.0 : 0.0;
    float sum = 0.0;
    [[unroll]] for (uint j = 0u; j < 32u; j++) {
        float w = Q_FORMAT == 2u ? float(q[j]) * d + mn : (float(q[j]) - offset) * d;
        sum += x_at(m, b * 32u + j) * w;
    }
    return sum;
}

// The same with x rounded to int8 (kernels/quant.c's oi__q8_quantize_rows).
float block_q8(uint m, uint b, uint blk) {
    float xv[32];
    float amax = 0.0;
    bool finite = true;
    [[unroll]] for (uint j = 0u; j < 32u; j++) {
        xv[j] = x_at(m, b * 32u + j);
        amax = max(amax, abs(xv[j]));
        finite = finite && !isinf(xv[j]) && !isnan(xv[j]);
    }
    if (!finite) return uintBitsToFloat(0x7FC00000u); // NaN, as the CPU's block scale
    int q[32];
    unpack_block(blk, q);
    precise float dx = amax / 127.0;
    precise float inv = dx > 0.0 ? 1.0 / dx : 0.0;
    int isum = 0, xs = 0;
    [[unroll]] for (uint j = 0u; j < 32u; j++) {
        precise float v = xv[j] * inv;
        precise float t = trunc(v); // v - t is exact: no floor(|v| + 0.5) rounding up 0.49999997
        if (abs(v - t) >= 0.5) t += sign(v);
        int xq = clamp(int(t), -127, 127);
        isum += xq * q[j];
        xs += xq;
    }
    precise float dwx = w_half(blk) * dx;
    if (Q_FORMAT == 1u) return dwx * float(isum - 8 * xs);
    if (Q_FORMAT == 2u) {
        precise float mx = w_half(blk + 2u) * dx;
        precise float t = dwx * float(isum) + mx * float(xs);
        return t;
    }
    return dwx * float(isum);
}
// synth-embed end

shared float partial[64];

void main() {
    uint lane = gl_LocalInvocationID.x % SPLIT, col = gl_LocalInvocationID.x / SPLIT;
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; // 2D past 65535 groups
    uint n = group * COLS + col;
    uint nb = pc.K / 32u;
    for (uint m = 0u; m < pc.M; m++) {
        float sum = 0.0;
        if (n < pc.N)
            for (uint b = lane; b < nb; b += SPLIT) {
                uint blk = pc.w_offset + n * pc.w_stride_n + b * block_bytes();
                sum += ACT_Q8 != 0u ? block_q8(m, b, blk) : block_f32(m, b, blk);
            }
        if (SPLIT == 1u) { // a column an invocation: nothing to add up
            if (n < pc.N) d_buf[pc.d_offset + m * pc.N + n] = floatBitsToUint(sum);
            continue;
        }
        partial[gl_LocalInvocationID.x] = sum;
        barrier();
        [[unroll]] for (uint half_ = SPLIT / 2u; half_ > 0u; half_ /= 2u) {
            if (lane < half_) partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + half_];
            barrier();
        }
        if (lane == 0u && n < pc.N) d_buf[pc.d_offset + m * pc.N + n] = floatBitsToUint(partial[gl_LocalInvocationID.x]);
        barrier();
    }
}
