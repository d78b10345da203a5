#version 450
// matmul_coopmat.comp - f16 x f16 matmul on the tensor cores, through
// GL_NV_cooperative_matrix (16x16x16 fragments, f32 accumulators): the
// planner picks it only on a device that offers that shape and only for
// layouts it walks with 16-byte loads (see oi__vk_plan_matmul_coopmat).
//
// A workgroup of WG_M x WG_N subgroups (32 invocations each) makes a
// 128 x BN block of the output; each subgroup owns a (128 / WG_M) x
// (BN / WG_N) part of it, FM x FN accumulators of 16x16. The default,
// 2x4 subgroups of 64x32 with BN 128 and two buffers, made n = 4096 in
// 888 us on an H200 (155 TFLOP/s); one buffer, 888 us; BN 256 with one
// buffer (64x64 per subgroup), 950 us; 2x2 subgroups of 64x64, 949 us; BK 64 with one buffer
// (meson.build's choice, the 48 KiB of shared memory hold no two), 846 us. K is walked BK at a time: while the tensor
// cores work on one shared-memory tile of A and B, the next ones are
// already in flight from global memory (uvec4 loads into registers), then
// stored into the other buffer of two (STAGES 2: one barrier per step), or
// into the one buffer once every subgroup has read it (STAGES 1).
// Rows and columns past M and N, and k past K, load as zeros and are not
// stored; K, N and every offset and stride are multiples of 8 elements
// (one uvec4), which the host checks.
// The output (f32 or f16, contiguous) goes through a per-subgroup f32
// scratch so that edge fragments store only their valid part, and f16 is
// rounded as the CPU rounds (common.glsl's encode_small_float).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"

#define BM 128u
#ifndef BN
#define BN 128u          // the host's OI__VK_COOPMAT_BN
#endif
#ifndef BK
#define BK 32u           // k per shared-memory tile (a multiple of 16)
#endif
#define KV (BK / 8u)     // uvec4 per row of an A tile (and of a transposed B tile)
#ifndef WG_M
#define WG_M 2u          // subgroups along M
#define WG_N 4u          // ... along N
#endif
#ifndef STAGES
#define STAGES 2u        // shared-memory buffers: 2, or 1 with two barriers per step
#endif
#define FM (BM / 16u / WG_M) // 16x16 accumulators per subgroup along M
#define FN (BN / 16u / WG_N) // ... along N
#define THREADS (32u * WG_M * WG_N)
#define A_STRIDE (KV + 1u) // uvec4 per shared row of A (and of transposed B): BK halves + 8 of padding (bank spread)
#define BV (BN / 8u)     // uvec4 per row of a row-major B tile ([k][n])
#define BR_STRIDE (BV + 1u) // ... in shared memory, with 8 halves of padding
#define TILE_A (BM * A_STRIDE)
#define TILE_B max(BK * BR_STRIDE, BN * A_STRIDE)
#define LOADS_A (BM * KV / THREADS) // uvec4 of each tile per invocation
#define LOADS_B (BN * KV / THREADS)
layout(local_size_x = THREADS) in;
layout(constant_id = 2) const uint B_T = 0u;     // 1: B is stored [N, K] (k contiguous)
layout(constant_id = 4) const uint D_DT = DT_F32; // f32 or f16

layout(binding = 0) readonly buffer BufA { uvec4 a4[]; };
layout(binding = 1) readonly buffer BufB { uvec4 b4[]; };
layout(binding = 3) writeonly buffer BufD { uvec4 d4[]; };

// The same push block as matmul.comp (oi__vk_matmul_push); in elements.
#define OI_MATMUL_BATCH_DIMS 3
layout(push_constant) uniform Push {
    uint M, N, K;
    uint batch_ndim;
    uint batch_shape[OI_MATMUL_BATCH_DIMS];
    uint a_batch_strides[OI_MATMUL_BATCH_DIMS];
    uint b_batch_strides[OI_MATMUL_BATCH_DIMS];
    uint a_stride_m, a_stride_k, b_stride_k, b_stride_n;
    uint a_offset, b_offset, d_offset;
} pc;

shared uvec4 sh_a[STAGES * TILE_A];
shared uvec4 sh_b[STAGES * TILE_B];
shared float sh_c[WG_M * WG_N * 256u]; // one 16x16 f32 fragment per subgroup, for the stores

const bool B_COL_MAJOR = B_T != 0u;

// Invocation t moves LOADS_A uvec4 of the A tile: 128 rows of KV uvec4,
// t/KV + i * THREADS/KV; and LOADS_B of the B tile: transposed, BN rows of
// KV uvec4 likewise; row-major, BK rows of BV uvec4, t/BV + i * THREADS/BV.
uvec4 load_a(uint base, uint row0, uint k0, uint i) {
    uint t = gl_LocalInvocationID.x;
    uint m = row0 + t / KV + (THREADS / KV) * i, k = k0 + 8u * (t % KV);
    if (m >= pc.M || k >= pc.K) return uvec4(0u);
    return a4[(base + m * pc.a_stride_m + k) >> 3u];
}
uvec4 load_b(uint base, uint col0, uint k0, uint i) {
    uint t = gl_LocalInvocationID.x;
    if (B_COL_MAJOR) {
        uint n = col0 + t / KV + (THREADS / KV) * i, k = k0 + 8u * (t % KV);
        if (n >= pc.N || k >= pc.K) return uvec4(0u);
        return b4[(base + n * pc.b_stride_n + k) >> 3u];
    }
    uint k = k0 + t / BV + (THREADS / BV) * i, n = col0 + 8u * (t % BV);
    if (n >= pc.N || k >= pc.K) return uvec4(0u);
    return b4[(base + k * pc.b_stride_k + n) >> 3u];
}
void store_tiles(uint buf, uvec4 ra[LOADS_A], uvec4 rb[LOADS_B]) {
    uint t = gl_LocalInvocationID.x;
    [[unroll]] for (uint i = 0u; i < LOADS_A; i++)
        sh_a[buf * TILE_A + (t / KV + (THREADS / KV) * i) * A_STRIDE + t % KV] = ra[i];
    [[unroll]] for (uint i = 0u; i < LOADS_B; i++) {
        if (B_COL_MAJOR)
            sh_b[buf * TILE_B + (t / KV + (THREADS / KV) * i) * A_STRIDE + t % KV] = rb[i];
        else
            sh_b[buf * TILE_B + (t / BV + (THREADS / BV) * i) * BR_STRIDE + t % BV] = rb[i];
    }
}

// Eight f32 values as the output dtype, stored at element e (a multiple of 8).
void store8(uint e, vec4 lo, vec4 hi) {
    if (D_DT == DT_F16) {
        uvec4 w;
        w.x = float_to_bits(DT_F16, lo.x) | (float_to_bits(DT_F16, lo.y) << 16u);
        w.y = float_to_bits(DT_F16, lo.z) | (float_to_bits(DT_F16, lo.w) << 16u);
        w.z = float_to_bits(DT_F16, hi.x) | (float_to_bits(DT_F16, hi.y) << 16u);
        w.w = float_to_bits(DT_F16, hi.z) | (float_to_bits(DT_F16, hi.w) << 16u);
        d4[e >> 3u] = w;
    } else {
        d4[e >> 2u] = floatBitsToUint(lo);
        d4[(e >> 2u) + 1u] = floatBitsToUint(hi);
    }
}

void main() {
    uint sg = gl_SubgroupID, wm = sg / WG_N, wn = sg % WG_N;
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    uint batch = gl_WorkGroupID.z, a_base = pc.a_offset, b_base = pc.b_offset;
    uint d_base = pc.d_offset + batch * pc.M * pc.N;
    for (int d = int(pc.batch_ndim) - 1; d >= 0; d--) {
        uint coord = batch % pc.batch_shape[d];
        batch /= pc.batch_shape[d];
        a_base += coord * pc.a_batch_strides[d];
        b_base += coord * pc.b_batch_strides[d];
    }

    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN];
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    uvec4 ra[LOADS_A], rb[LOADS_B];
    [[unroll]] for (uint i = 0u; i < LOADS_A; i++) ra[i] = load_a(a_base, row0, 0u, i);
    [[unroll]] for (uint i = 0u; i < LOADS_B; i++) rb[i] = load_b(b_base, col0, 0u, i);
    store_tiles(0u, ra, rb);
    barrier();

    uint steps = (pc.K + BK - 1u) / BK;
    for (uint s = 0u; s < steps; s++) {
        uint cur = STAGES == 2u ? s & 1u : 0u;
        bool more = s + 1u < steps;
        if (more) { // the next tiles travel while this one is multiplied
            [[unroll]] for (uint i = 0u; i < LOADS_A; i++) ra[i] = load_a(a_base, row0, (s + 1u) * BK, i);
            [[unroll]] for (uint i = 0u; i < LOADS_B; i++) rb[i] = load_b(b_base, col0, (s + 1u) * BK, i);
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FM];
            [[unroll]] for (uint i = 0u; i < FM; i++)
                coopMatLoadNV(fa[i], sh_a, cur * TILE_A + (wm * (BM / WG_M) + i * 16u) * A_STRIDE + kk / 8u, A_STRIDE, false);
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb;
                uint n = wn * (BN / WG_N) + j * 16u;
                if (B_COL_MAJOR)
                    coopMatLoadNV(fb, sh_b, cur * TILE_B + n * A_STRIDE + kk / 8u, A_STRIDE, true);
                else
                    coopMatLoadNV(fb, sh_b, cur * TILE_B + kk * BR_STRIDE + n / 8u, BR_STRIDE, false);
                [[unroll]] for (uint i = 0u; i < FM; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
            }
        }
        if (STAGES == 1u) barrier(); // one buffer: everyone has read it before it is refilled
        if (more) store_tiles(STAGES == 2u ? cur ^ 1u : 0u, ra, rb);
        barrier();
    }

    // Lane l writes row l/2, columns (l%2)*8 .. +8 of each fragment.
    uint lane = gl_SubgroupInvocationID, r = lane >> 1u, c = (lane & 1u) * 8u;
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            coopMatStoreNV(acc[i][j], sh_c, sg * 256u, 16u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            uint gm = row0 + wm * (BM / WG_M) + i * 16u + r, gn = col0 + wn * (BN / WG_N) + j * 16u + c;
            uint at = sg * 256u + r * 16u + c;
            vec4 lo = vec4(sh_c[at], sh_c[at + 1u], sh_c[at + 2u], sh_c[at + 3u]);
            vec4 hi = vec4(sh_c[at + 4u], sh_c[at + 5u], sh_c[at + 6u], sh_c[at + 7u]);
            if (gm < pc.M && gn < pc.N) store8(d_base + gm * pc.N + gn, lo, hi);
            subgroupBarrier(); // the next fragment reuses sh_c
        }
}
