#version 450
// rope.comp - rotary embedding, one invocation per output element: the
// element and its partner (interleaved pairs (2i, 2i + 1), or half-split
// (i, i + rot/2)) at angle pos * theta^(-2i / rot). Channels past rot pass
// through.
//
// The CPU computes angles, cos and sin in double. An f32 angle p * freq
// is off by p * 2^-24 radians, which at positions in the thousands is
// visible, so the angle is carried as a float-float (hi + lo): the
// frequency is r^i with r = theta^(-2/rot) given by the host as a
// float-float, raised by squaring; the angle is reduced by pi/2 with an
// exact product; cos and sin of the remainder (|r| <= pi/4) are Taylor
// polynomials in f32. Every step is `precise` so the compiler keeps the
// error-free transformations as written. The rotated value is f32,
// contiguous from d_offset (the host casts to f16/bf16 afterwards).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define DIMS 6
layout(local_size_x = 256) in;
layout(constant_id = 1) const uint A_DT = DT_F32; // x
layout(constant_id = 2) const uint P_DT = DT_I32; // positions (i32 or i64)

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };  // x
layout(binding = 1) readonly buffer BufB { uint p_buf[]; };  // positions
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; }; // f32 output

layout(push_constant) uniform Push {
    uint n;     // output elements
    uint ndim;  // dims of x, 2..DIMS
    uint shape[DIMS];
    uint x_strides[DIMS];
    uint seq_axis;
    uint batched;          // positions [x.shape[0], seq] (else [seq])
    uint pos_strides[2];
    uint pos_offset;
    uint rot;              // rotated channels (even)
    uint interleaved;
    uint x_offset, d_offset;
    float r_hi, r_lo;      // theta^(-2 / rot) as hi + lo
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)

float x_at(uint i) { return bits_to_float(A_DT, load_a(A_DT, i)); }

// synth-embed begin (oi_rope.glsl: the synthesizer's rope kernels include it)
// ---- float-float arithmetic (Dekker): value = x + y ----
vec2 split(float a) {
    precise float t = 4097.0 * a;
    precise float hi = t - (t - a);
    precise float lo = a - hi;
    return vec2(hi, lo);
}
// a * b exactly, as p + e
vec2 two_prod(float a, float b) {
    precise float p = a * b;
    vec2 as = split(a), bs = split(b);
    precise float e = ((as.x * bs.x - p) + as.x * bs.y + as.y * bs.x) + as.y * bs.y;
    return vec2(p, e);
}
vec2 ff_mul(vec2 a, vec2 b) {
    vec2 p = two_prod(a.x, b.x);
    precise float e = p.y + (a.x * b.y + a.y * b.x);
    precise float s = p.x + e;
    precise float lo = e - (s - p.x);
    return vec2(s, lo);
}

// r^i for the float-float r
vec2 ff_pow(vec2 r, uint i) {
    vec2 result = vec2(1.0, 0.0), base = r;
    while (i != 0u) {
        if ((i & 1u) != 0u) result = ff_mul(result, base);
        base = ff_mul(base, base);
        i >>= 1u;
    }
    return result;
}

// cos and sin of the float-float angle a
vec2 cos_sin(vec2 a) {
    const float PIO2_HI = 1.57079637050628662109375;  // float(pi / 2)
    const float PIO2_LO = -4.37113900018624283e-8;    // pi / 2 - PIO2_HI
    precise float k = floor(a.x * 0.636619772367581343 + 0.5);
    vec2 kp = two_prod(k, PIO2_HI);
    precise float r = a.x - kp.x; // exact: a.x and kp.x are close
    r = ((r - kp.y) + a.y) - k * PIO2_LO;
    precise float r2 = r * r;
    precise float s = r * (1.0 + r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0 +
                      r2 * (-1.0 / 39916800.0))))));
    precise float c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0 + r2 * (-1.0 / 3628800.0 +
                      r2 * (1.0 / 479001600.0))))));
    uint q = uint(int(k)) & 3u; // angle = r + q pi/2 (mod 2 pi)
    if (q == 0u) return vec2(c, s);
    if (q == 1u) return vec2(-s, c);
    if (q == 2u) return vec2(-c, -s);
    return vec2(s, -c);
}
// synth-embed end

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (e >= pc.n) return;
    uint at = pc.x_offset, rest = e, seq = 0u, batch = 0u, ch = 0u;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = rest % pc.shape[d];
        rest /= pc.shape[d];
        at += coord * pc.x_strides[d];
        if (d == int(pc.seq_axis)) seq = coord;
        if (d == 0) batch = coord;
        if (d == int(pc.ndim) - 1) ch = coord;
    }
    float y = x_at(at);
    if (ch < pc.rot) {
        uint half_rot = pc.rot / 2u;
        uint i = pc.interleaved != 0u ? ch / 2u : ch % half_rot;
        bool first = pc.interleaved != 0u ? (ch & 1u) == 0u : ch < half_rot;
        uint partner = pc.interleaved != 0u ? ch ^ 1u : (first ? ch + half_rot : ch - half_rot);
        float other = x_at(at - ch * pc.x_strides[pc.ndim - 1u] + partner * pc.x_strides[pc.ndim - 1u]);
        uint pi = pc.pos_offset + (pc.batched != 0u ? batch * pc.pos_strides[0] + seq * pc.pos_strides[1]
                                                     : seq * pc.pos_strides[0]);
        // i64 positions: the low word (positions past 2^31 are not angles anyone uses)
        int pos = P_DT == DT_I64 ? int(p_buf[pi * 2u]) : int(p_buf[pi]);
        vec2 angle = ff_mul(vec2(float(pos), 0.0), ff_pow(vec2(pc.r_hi, pc.r_lo), i));
        vec2 cs = cos_sin(angle);
        y = first ? y * cs.x - other * cs.y : y * cs.x + other * cs.y;
    }
    d_buf[pc.d_offset + e] = floatBitsToUint(y);
}
