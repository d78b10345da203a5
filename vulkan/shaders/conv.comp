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
// two invocations add into one output and no atomics are needed. Only the
// kernel positions with kernel_pos * dilation = o + pad (mod stride) can
// meet an input pixel, so the blocked builds split the outputs into the
// stride_h * stride_w phases of o + pad and give each phase only its own
// kernel positions (a quarter of them at stride 2), not zeros.
// A workgroup of 16x16 invocations makes a BM x BN block (each invocation
// a TM x TN micro-tile); the "narrow" build (BM 16, BN 256) serves groups
// of up to 16 output channels, the "direct" one (below) groups of 1 or 2
// (depthwise). The output is contiguous f32; the host casts afterwards for
// f16/bf16. gl_WorkGroupID.z is the group (times the phases of a blocked
// transpose).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "math.glsl"
#define OI_S_ROUND(x) (x)
#include "scalar.h"

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
layout(constant_id = 3) const uint C_DT = DT_F32; // bias (when flags has bit 0)
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
    uint flags;              // bit 0: has a bias; bits 1..: activation= (gemm's codes:
                             // 0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 hard_swish). Push
                             // constants, not specializations: fewer pipelines to build
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)
OI_DEFINE_LOAD_BITS(load_c, c_buf)

// activation= after the bias, as the CPU's conv and gemm_epilogue.comp apply it
float activate(float v) {
    uint act = pc.flags >> 1u;
    if (act == 1u) return v < 0.0 ? 0.0 : v;
    if (act == 2u || act == 3u) return gelu_f32(v, act == 3u);
    if (act == 4u && !is_nan_f(v)) return OI_S_hard_swish(v, uintBitsToFloat(0x3E2AAAABu), OI_S_ROUND);
    return v;
}

const bool TRANSPOSED = OP == OP_conv_transpose2d;

shared float tile_w[BK][BM + 1u];
shared float tile_x[BK][BN + 1u];

// The outputs one workgroup serves and the kernel positions they take:
// oy = oy0 + q * step_y (q < OHr), ky = ky0 + j * ky_step (j < ny), and
// the same along x. Everything (step 1, all positions) for a conv.
struct Phase {
    uint oy0, ox0, step_y, step_x, OHr, OWr, n_pix, K;
    uint ky0, kx0, ky_step, kx_step, ny, nx;
};

Phase whole() {
    Phase ph;
    ph.oy0 = 0u; ph.ox0 = 0u; ph.step_y = 1u; ph.step_x = 1u;
    ph.OHr = pc.OH; ph.OWr = pc.OW; ph.n_pix = pc.n_pix; ph.K = pc.K;
    ph.ky0 = 0u; ph.kx0 = 0u; ph.ky_step = 1u; ph.kx_step = 1u; ph.ny = pc.kernel_h; ph.nx = pc.kernel_w;
    return ph;
}

// Along one dim of a transpose, phase r of (o + pad) mod stride: the first
// output o0 in it, how many outputs, and the kernel positions k with
// k * dil = r (mod stride): k0, then every k_step (k_step * dil = 0 mod
// stride), n of them (0: the phase only gets the bias).
void phase_dim(uint r, uint stride, int pad, uint dil, uint size, uint kernel,
               out uint o0, out uint count, out uint k0, out uint k_step, out uint n) {
    int first = int(r) - pad; // GLSL leaves % of negative numbers undefined: lift it first
    if (first < 0) first += int(stride) * (-first / int(stride) + 1);
    o0 = uint(first) % stride;
    count = o0 < size ? (size - o0 + stride - 1u) / stride : 0u;
    k_step = 1u;
    while ((k_step * dil) % stride != 0u) k_step++;
    k0 = kernel;
    for (uint k = 0u; k < min(kernel, k_step); k++)
        if ((k * dil) % stride == r) { k0 = k; break; }
    n = k0 < kernel ? (kernel - k0 + k_step - 1u) / k_step : 0u;
}

Phase transpose_phase(uint index) {
    Phase ph;
    uint ry = index / pc.stride_w, rx = index % pc.stride_w;
    ph.step_y = pc.stride_h;
    ph.step_x = pc.stride_w;
    phase_dim(ry, pc.stride_h, pc.pad_t, pc.dil_h, pc.OH, pc.kernel_h, ph.oy0, ph.OHr, ph.ky0, ph.ky_step, ph.ny);
    phase_dim(rx, pc.stride_w, pc.pad_l, pc.dil_w, pc.OW, pc.kernel_w, ph.ox0, ph.OWr, ph.kx0, ph.kx_step, ph.nx);
    ph.n_pix = (pc.n_pix / (pc.OH * pc.OW)) * ph.OHr * ph.OWr;
    ph.K = pc.cg * ph.ny * ph.nx;
    return ph;
}

// Output pixel p of a phase: its image and its (oy, ox).
void pixel_of(Phase ph, uint p, out uint img, out uint oy, out uint ox) {
    uint per_image = ph.OHr * ph.OWr;
    img = p / per_image;
    uint rest = p % per_image;
    oy = ph.oy0 + (rest / ph.OWr) * ph.step_y;
    ox = ph.ox0 + (rest % ph.OWr) * ph.step_x;
}

// Patch row k = (input channel c, ky, kx) as offsets: c's step in x, the
// window position (dy, dx) = (ky * dil_h, kx * dil_w), and the step in w.
struct KPos {
    uint x_off;
    int dy, dx;
    uint w_off;
};
shared KPos step_k[BK]; // the block's patch rows of one k step, decomposed once

KPos kpos(Phase ph, uint k) {
    uint nyx = ph.ny * ph.nx;
    uint c = k / nyx, r = k % nyx;
    uint ky = ph.ky0 + (r / ph.nx) * ph.ky_step, kx = ph.kx0 + (r % ph.nx) * ph.kx_step;
    KPos kp;
    kp.x_off = c * pc.a_strides[1];
    kp.dy = int(ky * pc.dil_h);
    kp.dx = int(kx * pc.dil_w);
    kp.w_off = c * pc.b_c_stride + ky * pc.b_kh_stride + kx * pc.b_kw_stride;
    return kp;
}

// The input element under patch row kp of output (oy, ox); x_base is the
// pixel's image and the group's first channel. 0 in the padding.
float patch_at(KPos kp, uint x_base, uint oy, uint ox) {
    int y, x;
    if (TRANSPOSED) { // o = i * stride - pad + kpos * dil: i = (o + pad - kpos * dil) / stride, if whole
        int ty = int(oy) + pc.pad_t - kp.dy, tx = int(ox) + pc.pad_l - kp.dx;
        if (ty < 0 || tx < 0 || uint(ty) % pc.stride_h != 0u || uint(tx) % pc.stride_w != 0u) return 0.0;
        y = int(uint(ty) / pc.stride_h);
        x = int(uint(tx) / pc.stride_w);
    } else {
        y = int(oy * pc.stride_h) - pc.pad_t + kp.dy;
        x = int(ox * pc.stride_w) - pc.pad_l + kp.dx;
    }
    if (y < 0 || x < 0 || y >= int(pc.H) || x >= int(pc.W)) return 0.0;
    uint at = x_base + kp.x_off + uint(y) * pc.a_strides[2] + uint(x) * pc.a_strides[3];
    return bits_to_float(A_DT, load_a(A_DT, at));
}

float bias_of(uint channel) {
    return (pc.flags & 1u) != 0u ? bits_to_float(C_DT, load_c(C_DT, pc.c_offset + channel * pc.c_stride)) : 0.0;
}

// Weight (m, kp) of a group whose weights start at w_base.
float weight_at(uint w_base, uint m, KPos kp) {
    return bits_to_float(B_DT, load_b(B_DT, w_base + m * pc.b_m_stride + kp.w_off));
}

#ifdef DIRECT
// The direct build: one invocation per output element, the K products
// straight from memory (every kernel position, a transpose's included).
// For groups of very few output channels (depthwise), where a block of
// channels would mostly compute nothing.
void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.y * 16u +
             gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.z;
    uint p = t % pc.n_pix, m = t / pc.n_pix; // consecutive invocations: consecutive pixels
    if (m >= pc.mg) return;
    Phase ph = whole();
    uint img, oy, ox;
    pixel_of(ph, p, img, oy, ox);
    uint x_base = pc.a_offset + img * pc.a_strides[0] + g * pc.cg * pc.a_strides[1];
    uint w_base = pc.b_offset + g * pc.b_group_stride;
    float acc = 0.0;
    for (uint k = 0u; k < pc.K; k++) {
        KPos kp = kpos(ph, k);
        acc += weight_at(w_base, m, kp) * patch_at(kp, x_base, oy, ox);
    }
    uint channel = g * pc.mg + m;
    d_buf[pc.d_offset + ((img * pc.out_c + channel) * pc.OH + oy) * pc.OW + ox] = floatBitsToUint(activate(acc + bias_of(channel)));
}
#else
void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    uint phases = TRANSPOSED ? pc.stride_h * pc.stride_w : 1u;
    uint g = gl_WorkGroupID.z / phases;
    Phase ph = TRANSPOSED ? transpose_phase(gl_WorkGroupID.z % phases) : whole();
    uint m0 = gl_WorkGroupID.y * BM, p0 = gl_WorkGroupID.x * BN;
    if (p0 >= ph.n_pix) return; // phases differ in size; the dispatch covers the largest
    uint w_base = pc.b_offset + g * pc.b_group_stride;

    // The patch column this invocation loads is the same for every k step.
    uint col = tid % BN, p = p0 + col;
    bool col_ok = p < ph.n_pix;
    uint img, oy, ox;
    pixel_of(ph, col_ok ? p : 0u, img, oy, ox);
    uint x_base = pc.a_offset + img * pc.a_strides[0] + g * pc.cg * pc.a_strides[1];

    float acc[TM][TN];
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] = 0.0;

    for (uint k0 = 0u; k0 < ph.K; k0 += BK) {
        if (tid < BK) step_k[tid] = kpos(ph, k0 + tid);
        barrier();
        // weights: consecutive invocations read consecutive k
        for (uint l = tid; l < BM * BK; l += 256u) {
            uint k = l % BK, m = l / BK;
            bool ok = m0 + m < pc.mg && k0 + k < ph.K;
            tile_w[k][m] = ok ? weight_at(w_base, m0 + m, step_k[k]) : 0.0;
        }
        // the patch: consecutive invocations read consecutive pixels
        for (uint k = tid / BN; k < BK; k += B_PASS)
            tile_x[k][col] = (col_ok && k0 + k < ph.K) ? patch_at(step_k[k], x_base, oy, ox) : 0.0;
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
        float bias = bias_of(channel);
        [[unroll]] for (uint j = 0u; j < TN; j++) {
            uint q = p0 + tx + 16u * j;
            if (q >= ph.n_pix) continue;
            uint q_img, q_oy, q_ox;
            pixel_of(ph, q, q_img, q_oy, q_ox);
            d_buf[pc.d_offset + ((q_img * pc.out_c + channel) * pc.OH + q_oy) * pc.OW + q_ox] =
                floatBitsToUint(activate(acc[i][j] + bias));
        }
    }
}
#endif
