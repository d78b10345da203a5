#version 450
// chnorm.comp - per-channel normalizations of x [N, C, ...]:
//   batch_norm (inference): one invocation per output element,
//     y = (x - mean[c]) * (scale[c] / sqrt(var[c] + eps)) + bias[c];
//   group_norm: one workgroup per (n, group), statistics over the group's
//     C/G channels and all spatial positions (mean, then the mean square
//     of x - mean, as the CPU's f32 path), then per-channel scale and bias.
// Floats only (f32, f16, bf16 loaded as f32), computed in f32. x is read
// through its strides; the output is f32, contiguous from d_offset (the
// host casts to f16/bf16 afterwards).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define WG 128u
#define DIMS 6
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32; // x
layout(constant_id = 2) const uint P_DT = DT_F32; // scale, bias, mean, var

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };  // x
layout(binding = 1) readonly buffer BufB { uint s_buf[]; };  // scale
layout(binding = 2) readonly buffer BufC { uint b_buf[]; };  // bias
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; }; // f32 output
layout(binding = 4) readonly buffer BufE { uint m_buf[]; };  // mean (batch_norm)
layout(binding = 5) readonly buffer BufF { uint v_buf[]; };  // var (batch_norm)

layout(push_constant) uniform Push {
    uint n_out;  // batch_norm: elements; group_norm: rows (N * groups)
    uint ndim;   // dims of x, 2..DIMS
    uint shape[DIMS];
    uint x_strides[DIMS];
    uint p_strides[4]; // scale, bias, mean, var along C
    uint p_offsets[4];
    uint x_offset, d_offset;
    uint groups;
    float eps;
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_s, s_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)
OI_DEFINE_LOAD_BITS(load_m, m_buf)
OI_DEFINE_LOAD_BITS(load_v, v_buf)

float x_at(uint i) { return bits_to_float(A_DT, load_a(A_DT, i)); }
float scale_at(uint c) { return bits_to_float(P_DT, load_s(P_DT, pc.p_offsets[0] + c * pc.p_strides[0])); }
float bias_at(uint c) { return bits_to_float(P_DT, load_b(P_DT, pc.p_offsets[1] + c * pc.p_strides[1])); }

// The offset in x of spatial position s (dims 2.. of x, row-major).
uint spatial_offset(uint s) {
    uint at = 0u;
    for (int d = int(pc.ndim) - 1; d >= 2; d--) {
        at += (s % pc.shape[d]) * pc.x_strides[d];
        s /= pc.shape[d];
    }
    return at;
}

void batch_norm() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationID.x;
    if (e >= pc.n_out) return;
    uint at = pc.x_offset, rest = e, c = 0u;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = rest % pc.shape[d];
        rest /= pc.shape[d];
        at += coord * pc.x_strides[d];
        if (d == 1) c = coord;
    }
    float mean = bits_to_float(P_DT, load_m(P_DT, pc.p_offsets[2] + c * pc.p_strides[2]));
    float var = bits_to_float(P_DT, load_v(P_DT, pc.p_offsets[3] + c * pc.p_strides[3]));
    float a = scale_at(c) / sqrt(var + pc.eps);
    d_buf[pc.d_offset + e] = floatBitsToUint((x_at(at) - mean) * a + bias_at(c));
}

shared float s_part[WG];

float sum_all(float v) {
    uint lid = gl_LocalInvocationID.x;
    s_part[lid] = v;
    barrier();
    for (uint step = WG / 2u; step > 0u; step >>= 1u) {
        if (lid < step) s_part[lid] += s_part[lid + step];
        barrier();
    }
    float r = s_part[0];
    barrier(); // s_part is reused by the next sum
    return r;
}

void group_norm() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= pc.n_out) return;
    uint lid = gl_LocalInvocationID.x;
    uint n = row / pc.groups, g = row % pc.groups;
    uint per_group = pc.shape[1] / pc.groups, spatial = 1u;
    for (uint d = 2u; d < pc.ndim; d++) spatial *= pc.shape[d];
    uint len = per_group * spatial, c0 = g * per_group;
    uint base = pc.x_offset + n * pc.x_strides[0];
    float s = 0.0;
    for (uint r = lid; r < len; r += WG)
        s += x_at(base + (c0 + r / spatial) * pc.x_strides[1] + spatial_offset(r % spatial));
    float mean = sum_all(s) / float(len);
    float sq = 0.0;
    for (uint r = lid; r < len; r += WG) {
        float v = x_at(base + (c0 + r / spatial) * pc.x_strides[1] + spatial_offset(r % spatial)) - mean;
        sq += v * v;
    }
    float inv = 1.0 / sqrt(sum_all(sq) / float(len) + pc.eps);
    for (uint r = lid; r < len; r += WG) {
        uint c = c0 + r / spatial;
        float v = x_at(base + c * pc.x_strides[1] + spatial_offset(r % spatial));
        d_buf[pc.d_offset + row * len + r] = floatBitsToUint((v - mean) * (inv * scale_at(c)) + bias_at(c));
    }
}

void main() {
    if (OP == OP_batch_norm) batch_norm();
    else group_norm();
}
