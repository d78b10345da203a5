#version 450
// attention.comp - softmax(scale q k^T + mask) v, one workgroup per query
// row (b, h, i) of q [B, Hq, S, D]; k and v [B, Hkv, T, D|Dv] are shared by
// Hq / Hkv query heads (grouped-query attention). The keys are taken in
// chunks of CHUNK: each invocation scores whole keys into shared memory,
// then an online softmax in f32 (running max and sum, earlier partial
// sums rescaled when the max grows) accumulates p v. For p v the
// invocations form groups of the smallest power of two >= Dv (up to WG):
// an invocation owns up to DV_PER output channels and, in its group, every
// G-th key of a chunk (G = WG / group size), and the groups' sums are added
// at the end. Dot products and sums keep four partial sums, so that four
// loads are in flight at a time rather than one. Causal: query i sees keys j <= i + T - S
// (after the mask, as the CPU; a row that sees no key gives NaN). A bool
// mask keeps where true. Floats only, f32 arithmetic; the output is f32,
// contiguous [B, Hq, S, Dv] from d_offset (the host casts to f16/bf16).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "math.glsl" // exp_f32: the CPU's algorithm

#define WG 64u
#define CHUNK 256u
#define MAX_D 256u
#define DV_PER 4u
layout(local_size_x = 64) in;
layout(constant_id = 1) const uint A_DT = DT_F32; // q, k, v
layout(constant_id = 3) const uint M_DT = DT_F32; // mask (the input dtype or bool)

layout(binding = 0) readonly buffer BufA { uint q_buf[]; };
layout(binding = 1) readonly buffer BufB { uint k_buf[]; };
layout(binding = 2) readonly buffer BufC { uint v_buf[]; };
layout(binding = 3) writeonly buffer BufD { uint d_buf[]; };
layout(binding = 4) readonly buffer BufE { uint m_buf[]; };

layout(push_constant) uniform Push {
    uint rows;                  // B * Hq * S
    uint Hq, S, T, D, Dv, group; // group = Hq / Hkv
    uint q_strides[4], k_strides[4], v_strides[4], m_strides[4]; // m: broadcast to [B, Hq, S, T]
    uint q_offset, k_offset, v_offset, m_offset;
    uint d_offset;
    uint flags;                 // 1 causal, 2 a mask, 4 the mask is bool
    float scale;
} pc;

OI_DEFINE_LOAD_BITS(load_q, q_buf)
OI_DEFINE_LOAD_BITS(load_k, k_buf)
OI_DEFINE_LOAD_BITS(load_v, v_buf)
OI_DEFINE_LOAD_BITS(load_m, m_buf)

#define NEG_INF uintBitsToFloat(0xFF800000u)

shared float s_q[MAX_D];
shared float s_p[CHUNK];
shared float s_red[WG];
shared float s_acc[WG * DV_PER]; // [group][channel]: the groups' p v sums

// The sum, or the NaN-ignoring max, over the workgroup.
float combine(float v, bool take_max) {
    uint lid = gl_LocalInvocationID.x;
    s_red[lid] = v;
    barrier();
    for (uint step = WG / 2u; step > 0u; step >>= 1u) {
        if (lid < step) {
            float o = s_red[lid + step];
            s_red[lid] = take_max ? (o > s_red[lid] ? o : s_red[lid]) : s_red[lid] + o;
        }
        barrier();
    }
    float r = s_red[0];
    barrier();
    return r;
}

// q . k for the key at kb: four partial sums over d.
float key_dot(uint kb) {
    uint step = pc.k_strides[3], d = 0u;
    vec4 part = vec4(0.0);
    for (; d + 4u <= pc.D; d += 4u) {
        uint at = kb + d * step;
        part += vec4(s_q[d], s_q[d + 1u], s_q[d + 2u], s_q[d + 3u]) *
                vec4(bits_to_float(A_DT, load_k(A_DT, at)), bits_to_float(A_DT, load_k(A_DT, at + step)),
                     bits_to_float(A_DT, load_k(A_DT, at + 2u * step)), bits_to_float(A_DT, load_k(A_DT, at + 3u * step)));
    }
    for (; d < pc.D; d++) part.x += s_q[d] * bits_to_float(A_DT, load_k(A_DT, kb + d * step));
    return (part.x + part.y) + (part.z + part.w);
}

// sum p_jj v[j0 + jj][c] over the chunk's keys jj = g, g + G, ...: four
// partial sums.
float chunk_pv(uint v_base, uint j0, uint n, uint c, uint g, uint G) {
    uint step = G * pc.v_strides[2], jj = g;
    uint at = v_base + (j0 + g) * pc.v_strides[2] + c * pc.v_strides[3];
    vec4 part = vec4(0.0);
    for (; jj + 3u * G < n; jj += 4u * G, at += 4u * step)
        part += vec4(s_p[jj], s_p[jj + G], s_p[jj + 2u * G], s_p[jj + 3u * G]) *
                vec4(bits_to_float(A_DT, load_v(A_DT, at)), bits_to_float(A_DT, load_v(A_DT, at + step)),
                     bits_to_float(A_DT, load_v(A_DT, at + 2u * step)), bits_to_float(A_DT, load_v(A_DT, at + 3u * step)));
    for (; jj < n; jj += G, at += step) part.x += s_p[jj] * bits_to_float(A_DT, load_v(A_DT, at));
    return (part.x + part.y) + (part.z + part.w);
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= pc.rows) return;
    uint lid = gl_LocalInvocationID.x;
    uint qi = row % pc.S, bh = row / pc.S, h = bh % pc.Hq, b = bh / pc.Hq, hk = h / pc.group;
    uint q_base = pc.q_offset + b * pc.q_strides[0] + h * pc.q_strides[1] + qi * pc.q_strides[2];
    uint k_base = pc.k_offset + b * pc.k_strides[0] + hk * pc.k_strides[1];
    uint v_base = pc.v_offset + b * pc.v_strides[0] + hk * pc.v_strides[1];
    uint m_base = pc.m_offset + b * pc.m_strides[0] + h * pc.m_strides[1] + qi * pc.m_strides[2];
    for (uint d = lid; d < pc.D; d += WG) s_q[d] = bits_to_float(A_DT, load_q(A_DT, q_base + d * pc.q_strides[3]));
    barrier();
    bool causal = (pc.flags & 1u) != 0u, has_mask = (pc.flags & 2u) != 0u, mask_bool = (pc.flags & 4u) != 0u;
    int last = int(qi) + int(pc.T) - int(pc.S); // the last key a causal query sees

    uint lanes = 1u; // the group size: the smallest power of two >= Dv, up to WG
    while (lanes < pc.Dv && lanes < WG) lanes <<= 1u;
    uint G = WG / lanes, g = lid / lanes, c0 = lid % lanes;
    float m_run = NEG_INF, l_run = 0.0;
    float acc[DV_PER];
    [[unroll]] for (uint t = 0u; t < DV_PER; t++) acc[t] = 0.0;
    for (uint j0 = 0u; j0 < pc.T; j0 += CHUNK) {
        uint n = min(CHUNK, pc.T - j0);
        float local_max = NEG_INF;
        for (uint jj = lid; jj < n; jj += WG) {
            uint j = j0 + jj;
            float s = NEG_INF;
            if (!causal || int(j) <= last) {
                s = pc.scale * key_dot(k_base + j * pc.k_strides[2]);
                if (has_mask) {
                    uint mb = load_m(M_DT, m_base + j * pc.m_strides[3]);
                    s += mask_bool ? (mb != 0u ? 0.0 : NEG_INF) : bits_to_float(M_DT, mb);
                }
            }
            s_p[jj] = s;
            local_max = s > local_max ? s : local_max;
        }
        float m_new = combine(local_max, true);
        m_new = m_new > m_run ? m_new : m_run;
        if (m_new == NEG_INF) continue; // nothing visible yet: no term to add (NaN later if it stays so)
        float alpha = exp_f32(m_run - m_new);
        float part = 0.0;
        for (uint jj = lid; jj < n; jj += WG) {
            float p = exp_f32(s_p[jj] - m_new);
            s_p[jj] = p;
            part += p;
        }
        l_run = l_run * alpha + combine(part, false); // combine's barriers also publish s_p
        m_run = m_new;
        [[unroll]] for (uint t = 0u; t < DV_PER; t++) {
            uint c = c0 + lanes * t;
            if (c >= pc.Dv) break;
            acc[t] = acc[t] * alpha + chunk_pv(v_base, j0, n, c, g, G);
        }
        barrier(); // s_p is rewritten by the next chunk
    }
    // the groups' sums, added in group order by group 0
    [[unroll]] for (uint t = 0u; t < DV_PER; t++) s_acc[g * lanes * DV_PER + c0 + lanes * t] = acc[t];
    barrier();
    if (g != 0u) return;
    float inv = m_run == NEG_INF ? uintBitsToFloat(0x7FC00000u) : 1.0 / l_run;
    [[unroll]] for (uint t = 0u; t < DV_PER; t++) {
        uint c = c0 + lanes * t;
        if (c >= pc.Dv) break;
        float sum = acc[t];
        for (uint o = 1u; o < G; o++) sum += s_acc[o * lanes * DV_PER + c0 + lanes * t];
        d_buf[pc.d_offset + row * pc.Dv + c] = floatBitsToUint(sum * inv);
    }
}
