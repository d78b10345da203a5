#version 450
// rownorm.comp - ops that normalize each row of a tensor: softmax and
// log_softmax (rows along the last axes), layer_norm and rms_norm (rows =
// the dims from `axis` on). One workgroup per row; its invocations stride
// over the row three times at most (statistics, then the output), with
// shared-memory reductions between. Floats only, computed in f32, as the
// CPU's f32 path (kernels/nn.c). The output is written as f32, contiguous,
// row after row (the host casts to f16/bf16 afterwards).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "math.glsl" // exp_f32: the CPU's algorithm

#define WG 128u
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 2) const uint S_DT = DT_F32; // scale: x's dtype, or f32 next to 16-bit x (precision)
layout(constant_id = 3) const uint C_DT = DT_F32; // bias

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };  // x
layout(binding = 1) readonly buffer BufB { uint s_buf[]; };  // scale (norms)
layout(binding = 2) readonly buffer BufC { uint b_buf[]; };  // bias (layer_norm, optional)
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; }; // f32 rows
layout(binding = 0) readonly buffer BufA4 { uvec4 a4[]; };   // x as uvec4 (vec_rows)
layout(binding = 3) writeonly buffer BufD4 { uvec4 d4[]; };  // the rows as uvec4 (vec_rows)

layout(push_constant) uniform Push {
    uint n_out, n_red;   // rows, elements per row
    uint k_ndim; uint k_shape[4]; uint k_strides[4]; // dims that pick the row (x strides)
    uint r_ndim; uint r_shape[3]; uint r_strides[3]; // dims along the row (x strides)
    uint s_strides[3], b_strides[3];                 // scale, bias along the row (0 = broadcast)
    uint a_offset, s_offset, b_offset, d_offset;
    uint has_bias;
    float eps;
    uint vec_rows; // softmax of f32 rows of stride 1, every row and n_red 4-aligned: uvec4 access
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_s, s_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)

bool is_op(uint op) { return OP == op; }

shared float s_part[WG];

// The sum (or the NaN-ignoring max) of the invocations' values.
float combine(float v, bool take_max) {
    uint lid = gl_LocalInvocationID.x;
    s_part[lid] = v;
    barrier();
    for (uint step = WG / 2u; step > 0u; step >>= 1u) {
        if (lid < step) {
            float o = s_part[lid + step];
            s_part[lid] = take_max ? (o > s_part[lid] ? o : s_part[lid]) : s_part[lid] + o;
        }
        barrier();
    }
    float r = s_part[0];
    barrier(); // s_part is reused by the next combine
    return r;
}

// Element offsets of row element r: x, scale, bias.
void row_element(uint base, uint r, out uint ix, out uint is, out uint ib) {
    ix = base;
    is = pc.s_offset;
    ib = pc.b_offset;
    for (int d = int(pc.r_ndim) - 1; d >= 0; d--) {
        uint c = r % pc.r_shape[d];
        r /= pc.r_shape[d];
        ix += c * pc.r_strides[d];
        is += c * pc.s_strides[d];
        ib += c * pc.b_strides[d];
    }
}

float x_at(uint i) { return bits_to_float(A_DT, load_a(A_DT, i)); }

// softmax / log_softmax of a contiguous f32 row, 16 bytes at a time:
// the same arithmetic per element as the general path below.
void softmax_vec(uint base, uint out_base) {
    uint lid = gl_LocalInvocationID.x, vecs = pc.n_red >> 2u, x0 = base >> 2u, d0 = out_base >> 2u;
    float m = uintBitsToFloat(0xFF800000u);
    for (uint v = lid; v < vecs; v += WG) {
        vec4 x = uintBitsToFloat(a4[x0 + v]);
        m = x.x > m ? x.x : m;
        m = x.y > m ? x.y : m;
        m = x.z > m ? x.z : m;
        m = x.w > m ? x.w : m;
    }
    m = combine(m, true);
    float sum = 0.0;
    for (uint v = lid; v < vecs; v += WG) {
        vec4 x = uintBitsToFloat(a4[x0 + v]);
        sum += (exp_f32(x.x - m) + exp_f32(x.y - m)) + (exp_f32(x.z - m) + exp_f32(x.w - m));
    }
    sum = combine(sum, false);
    float inv = 1.0 / sum, log_sum = is_nan_f(sum) ? sum : log(sum);
    for (uint v = lid; v < vecs; v += WG) {
        vec4 x = uintBitsToFloat(a4[x0 + v]) - m;
        vec4 y = is_op(OP_log_softmax) ? x - log_sum
                                       : vec4(exp_f32(x.x), exp_f32(x.y), exp_f32(x.z), exp_f32(x.w)) * inv;
        d4[d0 + v] = floatBitsToUint(y);
    }
}

// The same for rows of at most WG * 4 * ROW_REGS elements, read once: the
// row waits in registers between the passes (the sums come out bit for bit
// as softmax_vec's: the same values added in the same order).
#define ROW_REGS 8u
void softmax_regs(uint base, uint out_base) {
    uint lid = gl_LocalInvocationID.x, vecs = pc.n_red >> 2u, x0 = base >> 2u, d0 = out_base >> 2u;
    vec4 xs[ROW_REGS];
    float m = uintBitsToFloat(0xFF800000u);
    [[unroll]] for (uint i = 0u; i < ROW_REGS; i++) {
        uint v = lid + i * WG;
        xs[i] = v < vecs ? uintBitsToFloat(a4[x0 + v]) : vec4(0.0);
        if (v < vecs) {
            m = xs[i].x > m ? xs[i].x : m;
            m = xs[i].y > m ? xs[i].y : m;
            m = xs[i].z > m ? xs[i].z : m;
            m = xs[i].w > m ? xs[i].w : m;
        }
    }
    m = combine(m, true);
    float sum = 0.0;
    [[unroll]] for (uint i = 0u; i < ROW_REGS; i++) {
        if (lid + i * WG < vecs) {
            vec4 x = xs[i] - m;
            vec4 e = vec4(exp_f32(x.x), exp_f32(x.y), exp_f32(x.z), exp_f32(x.w));
            sum += (e.x + e.y) + (e.z + e.w);
            xs[i] = is_op(OP_log_softmax) ? x : e;
        }
    }
    sum = combine(sum, false);
    float inv = 1.0 / sum, log_sum = is_nan_f(sum) ? sum : log(sum);
    [[unroll]] for (uint i = 0u; i < ROW_REGS; i++) {
        uint v = lid + i * WG;
        if (v < vecs)
            d4[d0 + v] = floatBitsToUint(is_op(OP_log_softmax) ? xs[i] - log_sum : xs[i] * inv);
    }
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= pc.n_out) return;
    uint lid = gl_LocalInvocationID.x, n = pc.n_red;
    uint base = pc.a_offset, o = row;
    for (int d = int(pc.k_ndim) - 1; d >= 0; d--) {
        base += (o % pc.k_shape[d]) * pc.k_strides[d];
        o /= pc.k_shape[d];
    }
    uint out_base = pc.d_offset + row * n;
    uint ix, is, ib;
    if ((is_op(OP_softmax) || is_op(OP_log_softmax)) && pc.vec_rows != 0u) {
        if (n <= WG * 4u * ROW_REGS)
            softmax_regs(base, out_base);
        else
            softmax_vec(base, out_base);
        return;
    }
    if (is_op(OP_softmax) || is_op(OP_log_softmax)) {
        float m = uintBitsToFloat(0xFF800000u); // -inf; NaN never wins (x > m)
        for (uint r = lid; r < n; r += WG) {
            row_element(base, r, ix, is, ib);
            float v = x_at(ix);
            m = v > m ? v : m;
        }
        m = combine(m, true);
        float sum = 0.0;
        for (uint r = lid; r < n; r += WG) {
            row_element(base, r, ix, is, ib);
            sum += exp_f32(x_at(ix) - m);
        }
        sum = combine(sum, false);
        float inv = 1.0 / sum, log_sum = is_nan_f(sum) ? sum : log(sum);
        for (uint r = lid; r < n; r += WG) {
            row_element(base, r, ix, is, ib);
            float v = x_at(ix) - m;
            float y = is_op(OP_log_softmax) ? v - log_sum : exp_f32(v) * inv;
            d_buf[out_base + r] = floatBitsToUint(y);
        }
        return;
    }
    // layer_norm / rms_norm
    float mean = 0.0;
    if (is_op(OP_layer_norm)) {
        float s = 0.0;
        for (uint r = lid; r < n; r += WG) {
            row_element(base, r, ix, is, ib);
            s += x_at(ix);
        }
        mean = combine(s, false) / float(n);
    }
    float sq = 0.0;
    for (uint r = lid; r < n; r += WG) {
        row_element(base, r, ix, is, ib);
        float v = x_at(ix) - mean;
        sq += v * v;
    }
    float inv = inversesqrt(combine(sq, false) / float(n) + pc.eps);
    for (uint r = lid; r < n; r += WG) {
        row_element(base, r, ix, is, ib);
        float y = (x_at(ix) - mean) * inv * bits_to_float(S_DT, load_s(S_DT, is));
        if (pc.has_bias != 0u) y += bits_to_float(C_DT, load_b(C_DT, ib));
        d_buf[out_base + r] = floatBitsToUint(y);
    }
}
