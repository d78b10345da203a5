#version 450
// dequantize.comp - rows of ggml blocks (u8 [rows, K / 32 blocks], the
// blocks of matvec_quant.comp) as f32 [rows, K]: an invocation per output
// element. Element i of row r is element i % 32 of block i / 32 of the row
// that starts at byte w_offset + r * w_stride_row:
//   format 1 q4_0 (18 bytes: f16 d, 16 bytes of nibbles): (q - 8) d
//          2 q4_1 (20 bytes: f16 d, f16 m, nibbles):      q d + m
//          3 q8_0 (34 bytes: f16 d, 32 signed bytes):      q d
// (low nibbles are elements 0..15 of a block, high nibbles 16..31). The
// product is rounded to f32 before m is added (precise: no fused
// multiply-add), as kernels/quant.c's oi__dequant_row, so every value is
// the CPU's bit for bit. The output is f32, contiguous from d_offset.

layout(local_size_x = 256) in;

layout(binding = 0) readonly buffer BufA { uint w_buf[]; };  // the rows of blocks
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; }; // f32 output

layout(push_constant) uniform Push {
    uint n;                      // output elements: rows * K
    uint K;                      // a row's elements (32 per block)
    uint format;                 // 1 q4_0, 2 q4_1, 3 q8_0
    uint w_stride_row, w_offset; // bytes: a row's stride, the first row
    uint d_offset;
} pc;

uint w_byte(uint i) { return (w_buf[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu; }
float w_half(uint i) { return unpackHalf2x16(w_byte(i) | (w_byte(i + 1u) << 8u)).x; }

void main() {
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; // 2D past 65535 groups
    uint e = group * 256u + gl_LocalInvocationID.x;
    if (e >= pc.n) return;
    uint i = e % pc.K, j = i % 32u;
    uint bytes = pc.format == 3u ? 34u : pc.format == 2u ? 20u : 18u;
    uint blk = pc.w_offset + (e / pc.K) * pc.w_stride_row + (i / 32u) * bytes;
    float d = w_half(blk);
    precise float v;
    if (pc.format == 3u) {
        v = float(int(w_byte(blk + 2u + j) << 24u) >> 24) * d;
    } else {
        uint q = (w_byte(blk + bytes - 16u + (j & 15u)) >> (j < 16u ? 0u : 4u)) & 15u;
        precise float p = (float(q) - (pc.format == 1u ? 8.0 : 0.0)) * d;
        v = pc.format == 2u ? p + w_half(blk + 2u) : p;
    }
    d_buf[pc.d_offset + e] = floatBitsToUint(v);
}
