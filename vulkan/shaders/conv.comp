#version 450
// conv.comp - conv1d/conv2d and conv_transpose2d as an implicit GEMM, per
// channel group g: y[m, p] = sum over k of w[m, k] * patch[k, p] (+ bias),
// m an output channel of the group, p an output pixel of any image
// (N * OH * OW of them), k = (input channel, ky, kx) of the group
// (cg * kh * kw). The patch is never stored: each workgroup gathers its
// BK x BN block straight from x (0 in the padding) while it stages the
// BM x BK block of weights, both in shared memory, and accumulates in f32
// (f16/bf16 storage is loaded as f32), as the CPU's f32 gemm does.
// conv_transpose2d is the same product with a gather: output pixel o takes
// input pixel i where o = i * stride - pad + kernel_pos * dilation, so no
// two invocations add into one output and no atomics are needed.
// A workgroup of 16x16 invocations makes a BM x BN block (each invocation
// a TM x TN micro-tile); the "narrow" build (BM 16, BN 256) serves groups
// of up to 16 output channels, the "direct" one (below) groups of 1 or 2
// (depthwise). The output is contiguous f32; the
// host casts afterwards for f16/bf16. gl_WorkGroupID.z is the group.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#ifndef BM
#define BM 64u
#define BN 64u
#endif
#define BK 16u
#define TM (BM / 16u)
#define TN (BN / 16u)
#define B_PASS (256u / BN) // patch rows one pass of the workgroup loads
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32; // x
layout(constant_id = 2) const uint B_DT = DT_F32; // w
layout(constant_id = 3) const uint C_DT = 0u;     // bias; 0: no bias
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 1) readonly buffer BufB { uint b_buf[]; };
layout(binding = 2) readonly buffer BufC { uint c_buf[]; };
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; };

// The names of oi__vk_conv_push (vk_ops_conv.c). Strides in elements.
layout(push_constant) uniform Push {
    uint cg, mg, K, n_pix;   // channels per group in and out, cg * kh * kw, N * OH * OW
    uint OH, OW, H, W;
    uint kernel_h, kernel_w, stride_h, stride_w, dil_h, dil_w;
    int pad_t, pad_l;        // begin pads (negative ones from a transpose's output_shape)
    uint a_strides[4];       // x [N, C, H, W]
    uint a_offset;
    uint b_group_stride, b_m_stride, b_c_stride, b_kh_stride, b_kw_stride; // w by (group, m, c, ky, kx)
    uint b_offset;
    uint c_stride, c_offset; // bias [M]
    uint d_offset, out_c;    // y [N, M, OH, OW], contiguous f32
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)
OI_DEFINE_LOAD_BITS(load_c, c_buf)

const bool TRANSPOSED = OP == OP_conv_transpose2d;

shared float tile_w[BK][BM + 1u];
shared float tile_x[BK][BN + 1u];

// Patch row k = (input channel c, ky, kx) as offsets: c's step in x, the
// window position (dy, dx) = (ky * dil_h, kx * dil_w), and the step in w.
struct KPos {
    uint x_off;
    int dy, dx;
    uint w_off;
};
shared KPos step_k[BK]; // the block's patch rows of one k step, decomposed once

KPos kpos(uint k) {
    uint khw = pc.kernel_h * pc.kernel_w;
    uint c = k / khw, r = k % khw, ky = r / pc.kernel_w, kx = r % pc.kernel_w;
    KPos kp;
    kp.x_off = c * pc.a_strides[1];
    kp.dy = int(ky * pc.dil_h);
    kp.dx = int(kx * pc.dil_w);
    kp.w_off = c * pc.b_c_stride + ky * pc.b_kh_stride + kx * pc.b_kw_stride;
    return kp;
}

// The input element under patch row kp of a pixel whose window starts at
// (y0, x0) (conv: oy * stride - pad; transpose: oy + pad); x_base is the
// pixel's image and the group's first channel. 0 in the padding.
float patch_at(KPos kp, uint x_base, int y0, int x0) {
    int y, x;
    if (TRANSPOSED) { // o = i * stride - pad + kpos * dil: i = (o + pad - kpos * dil) / stride, if whole
        int ty = y0 - kp.dy, tx = x0 - kp.dx;
        if (ty < 0 || tx < 0 || uint(ty) % pc.stride_h != 0u || uint(tx) % pc.stride_w != 0u) return 0.0;
        y = int(uint(ty) / pc.stride_h);
        x = int(uint(tx) / pc.stride_w);
    } else {
        y = y0 + kp.dy;
        x = x0 + kp.dx;
    }
    if (y < 0 || x < 0 || y >= int(pc.H) || x >= int(pc.W)) return 0.0;
    uint at = x_base + kp.x_off + uint(y) * pc.a_strides[2] + uint(x) * pc.a_strides[3];
    return bits_to_float(A_DT, load_a(A_DT, at));
}

// Weight (m, kp) of a group whose weights start at w_base.
float weight_at(uint w_base, uint m, KPos kp) {
    return bits_to_float(B_DT, load_b(B_DT, w_base + m * pc.b_m_stride + kp.w_off));
}

#ifdef DIRECT
// The direct build: one invocation per output element, the K products
// straight from memory. For groups of very few output channels
// (depthwise), where a block of channels would mostly compute nothing.
void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.y * 16u +
             gl_LocalInvocationID.x;
    uint ohw = pc.OH * pc.OW, g = gl_WorkGroupID.z;
    uint p = t % pc.n_pix, m = t / pc.n_pix; // consecutive invocations: consecutive pixels
    if (m >= pc.mg) return;
    uint img = p / ohw, rest = p % ohw, oy = rest / pc.OW, ox = rest % pc.OW;
    uint x_base = pc.a_offset + img * pc.a_strides[0] + g * pc.cg * pc.a_strides[1];
    uint w_base = pc.b_offset + g * pc.b_group_stride;
    int y0 = TRANSPOSED ? int(oy) + pc.pad_t : int(oy * pc.stride_h) - pc.pad_t;
    int x0 = TRANSPOSED ? int(ox) + pc.pad_l : int(ox * pc.stride_w) - pc.pad_l;
    float acc = 0.0;
    for (uint k = 0u; k < pc.K; k++) {
        KPos kp = kpos(k);
        acc += weight_at(w_base, m, kp) * patch_at(kp, x_base, y0, x0);
    }
    uint channel = g * pc.mg + m;
    float bias = C_DT != 0u ? bits_to_float(C_DT, load_c(C_DT, pc.c_offset + channel * pc.c_stride)) : 0.0;
    d_buf[pc.d_offset + (img * pc.out_c + channel) * ohw + rest] = floatBitsToUint(acc + bias);
}
#else
void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    uint g = gl_WorkGroupID.z;
    uint m0 = gl_WorkGroupID.y * BM, p0 = gl_WorkGroupID.x * BN;
    uint ohw = pc.OH * pc.OW;
    uint w_base = pc.b_offset + g * pc.b_group_stride;

    // The patch column this invocation loads is the same for every k step.
    uint col = tid % BN, p = p0 + col;
    bool col_ok = p < pc.n_pix;
    uint img = col_ok ? p / ohw : 0u, rest = col_ok ? p % ohw : 0u;
    uint oy = rest / pc.OW, ox = rest % pc.OW;
    uint x_base = pc.a_offset + img * pc.a_strides[0] + g * pc.cg * pc.a_strides[1];
    int y0 = TRANSPOSED ? int(oy) + pc.pad_t : int(oy * pc.stride_h) - pc.pad_t;
    int x0 = TRANSPOSED ? int(ox) + pc.pad_l : int(ox * pc.stride_w) - pc.pad_l;

    float acc[TM][TN];
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] = 0.0;

    for (uint k0 = 0u; k0 < pc.K; k0 += BK) {
        if (tid < BK) step_k[tid] = kpos(k0 + tid);
        barrier();
        // weights: consecutive invocations read consecutive k
        for (uint l = tid; l < BM * BK; l += 256u) {
            uint k = l % BK, m = l / BK;
            bool ok = m0 + m < pc.mg && k0 + k < pc.K;
            tile_w[k][m] = ok ? weight_at(w_base, m0 + m, step_k[k]) : 0.0;
        }
        // the patch: consecutive invocations read consecutive pixels
        for (uint k = tid / BN; k < BK; k += B_PASS)
            tile_x[k][col] = (col_ok && k0 + k < pc.K) ? patch_at(step_k[k], x_base, y0, x0) : 0.0;
        barrier();
        [[unroll]] for (uint k = 0u; k < BK; k++) {
            float a[TM], b[TN];
            [[unroll]] for (uint i = 0u; i < TM; i++) a[i] = tile_w[k][ty + 16u * i];
            [[unroll]] for (uint j = 0u; j < TN; j++) b[j] = tile_x[k][tx + 16u * j];
            [[unroll]] for (uint i = 0u; i < TM; i++)
                [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < TM; i++) {
        uint m = m0 + ty + 16u * i;
        if (m >= pc.mg) continue;
        uint channel = g * pc.mg + m;
        float bias = C_DT != 0u ? bits_to_float(C_DT, load_c(C_DT, pc.c_offset + channel * pc.c_stride)) : 0.0;
        [[unroll]] for (uint j = 0u; j < TN; j++) {
            uint q = p0 + tx + 16u * j;
            if (q >= pc.n_pix) continue;
            uint at = pc.d_offset + ((q / ohw) * pc.out_c + channel) * ohw + q % ohw;
            d_buf[at] = floatBitsToUint(acc[i][j] + bias);
        }
    }
}
#endif
