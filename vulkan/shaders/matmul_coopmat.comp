#version 450
// matmul_coopmat.comp - f16 x f16 matmul on the tensor cores (16x16x16
// fragments, f32 accumulators): the planner picks it only on a device that
// offers that shape and only for layouts it walks with 16-byte loads (see
// oi__vk_plan_matmul_coopmat).
//
// Written against GL_NV_cooperative_matrix, the only cooperative-matrix
// extension Debian bookworm's glslang compiles; the build also rewrites the
// module as SPV_KHR_cooperative_matrix (matmul_coopmat_khr, gen_spirv.py
// coopmat-khr), which the backend takes where the device offers it. The
// rewrite matters: an NV matrix type does not say which operand it is, so
// NVIDIA's driver loads every fragment in the A layout and transposes each
// B fragment register with MOVM before its HMMA, and under register
// pressure does so again for every use (about one MOVM per HMMA, read from
// the driver's machine code). The KHR types carry the use (USE_A and USE_B
// below tag them for the rewrite), so B loads straight into its layout
// (LDSM.MT88) and MOVM is gone: n = 4096 on an H100 in 518-524 us (262-265
// TFLOP/s) against 677-689 us for the same shader through the NV extension.
//
// A workgroup of WG_M x WG_N subgroups (32 invocations each) makes a
// BM x BN block of the output; each subgroup owns a (BM / WG_M) x
// (BN / WG_N) part of it, FM x FN accumulators of 16x16. K is walked BK at
// a time: while the tensor cores work on one shared-memory tile of A and
// B, the next ones are already in flight from global memory (uvec4 loads
// into registers), then stored into the other buffer of two (STAGES 2: one
// barrier per step), or into the one buffer once every subgroup has read it
// (STAGES 1). Blocks wholly inside the matrices load without bounds
// checks; at the edges, rows and columns past M and N and k past K load as
// zeros and are not stored. K, N and every offset and stride are multiples
// of 8 elements (one uvec4), which the host checks.
//
// The default, 128 x 256 blocks of 2 x 8 subgroups (64 x 32 each), BK 32,
// one buffer of 32-bit words, made n = 4096 in 684 us on an H100 through
// the NV extension (201 TFLOP/s; 714 us with the tiles kept as uvec4), from
// bench/gpu/coopmat_sweep.sh (which also prints the driver's register
// counts and saves its machine code). The sweeps below were NV ones unless
// they say KHR; what they showed:
// - The register file decides. 256 invocations get ~186 registers each
//   and one workgroup per SM (8 subgroups: 128 x 128 blocks, 808-846 us);
//   512 get 128, as many subgroups at the same work each (709 us). 64 x 64
//   per subgroup needs 210-255 registers and spills (767-995 us).
// - Shared memory is 48 KiB per workgroup, so 128 x 256 has no room for two
//   buffers at BK 32; BK 16 with two buffers is slower (844 us), as are
//   128 x 192 with two buffers (851 us) and 256 x 128 blocks (729-767 us).
// - The inner loop bounds it. With no global loads, stores or barriers,
//   only the fragments loaded from shared tiles that may change and the
//   products, it runs at 262 TFLOP/s (524 us); 64 x 64 parts (half the
//   fragment loads per product; 8 subgroups, or 4 in two workgroups per
//   SM) run at 255-270 all the same. With tiles that never change (the
//   compiler can keep the fragments in registers), 544.
// - The global loads take about a step to arrive: issued after the first
//   half of a step they cost 788 us; two steps ahead (a second set of
//   registers) 764 us, as 128 registers are too few for it. Two 128-thread
//   workgroups per SM of 2 x 2 subgroups of 64 x 64 (247 registers, two
//   buffers): 784 us. Storing A's chunks in a bank-conflict-free order
//   (row pairs 2 apart) costs coalescing: 747 us. B in two buffers (A in
//   one), B's next tile stored before the first barrier: 737-743 us.
// - Walking blocks in groups along M for L2 reuse, restrict-qualified
//   buffers, holding B fragments instead of A fragments, and BK 48 (a third
//   fewer barriers; 713 us): no change. A transposed B ([N, K], loaded as
//   column-major fragments) is slower (767 us), and fragments loaded by each
//   subgroup straight from the buffers, with no shared tiles or barriers,
//   are five times slower (2.6-4.1 ms): the driver splits such loads up.
//   Refilling the one buffer by halves of a step, each half stored while
//   the other is multiplied, is slower too (841 us): stores are not what
//   the tensor cores wait for. Subgroup parts of 64 x 48 or 48 x 64 (fewer
//   fragment loads per product) spill at 128 registers: 972-1103 us.
// - Loading all of a k step's fragments (A and B) before its products, or
//   those of both k steps of the tile, changes nothing (678-686 us against
//   678-683 for the default, same run): the compiler already
//   schedules the loads ahead, and the driver reports 128 registers for all.
//   Nor do the B fragments first and then A one at a time (701 us; KHR 518
//   against 524). A subgroup barrier between k steps, to keep the next
//   fragments' loads out of the registers, is slower (743-771 us). B stored
//   transposed in shared memory ([n][k], k pairs packed into words) is
//   slower still (1029 us): the MOVMs stay and the stores multiply.
// - KHR, against 518-524 us for the default: 64 x 64 subgroup parts (230
//   registers) 567 us, 32 x 64 parts 539 us, 256 x 128 blocks 562 us, BK 16
//   with two buffers 720 us, 128 x 128 blocks 563 us at BK 64 and 768 at BK
//   32 (158 registers: still one workgroup per SM), with two buffers 888 us.
// Fragments wholly inside the output are stored straight from the
// accumulators (f16 converted by the hardware, which rounds to nearest
// even as the CPU does); edge fragments go through a per-subgroup f32
// scratch so that only their valid part is stored, with f16 rounded by
// common.glsl's encode_small_float.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"

#ifndef BM
#define BM 128u          // = the host's OI__VK_COOPMAT_BM (vk_ops.c)
#endif
#ifndef BN
#define BN 256u          // = the host's OI__VK_COOPMAT_BN
#endif
#ifndef BK
#define BK 32u           // k per shared-memory tile (a multiple of 16)
#endif
#define KV (BK / 8u)     // uvec4 per row of an A tile (and of a transposed B tile)
#ifndef WG_M
#define WG_M 2u          // subgroups along M
#define WG_N 8u          // ... along N
#endif
#ifndef STAGES
#define STAGES 1u        // shared-memory buffers: 2, or 1 with two barriers per step
#endif
#define FM (BM / 16u / WG_M) // 16x16 accumulators per subgroup along M
#define FN (BN / 16u / WG_N) // ... along N
#define THREADS (32u * WG_M * WG_N)
#define A_STRIDE (KV + 1u) // uvec4 per shared row of A (and of transposed B): BK halves + 8 of padding (bank spread)
#define BV (BN / 8u)     // uvec4 per row of a row-major B tile ([k][n])
#define BR_STRIDE (BV + 1u) // ... in shared memory, with 8 halves of padding
#define TILE_A (BM * A_STRIDE)
#define TILE_B (B_T != 0u ? BN * A_STRIDE : BK * BR_STRIDE) // sized for the layout the pipeline is made for
#define CHUNKS_A (BM * KV) // uvec4 of an A tile; of a B tile (either layout):
#define CHUNKS_B (BN * KV)
#define LOADS_A ((CHUNKS_A + THREADS - 1u) / THREADS) // ... per invocation
#define LOADS_B ((CHUNKS_B + THREADS - 1u) / THREADS)
layout(local_size_x = THREADS) in;
layout(constant_id = 2) const uint B_T = 0u;     // 1: B is stored [N, K] (k contiguous)
layout(constant_id = 4) const uint D_DT = DT_F32; // f32 or f16
// Never set by the host: they tag the A and B fragment types (their k
// extent) for gen_spirv.py's coopmat-khr rewrite, whose matrix types say
// which operand a matrix is (see the end of this header).
layout(constant_id = 20) const uint USE_A = 16u;
layout(constant_id = 21) const uint USE_B = 16u;
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, 16, USE_A>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, USE_B, 16>

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

// The tiles are kept as 32-bit words (4 per uvec4 of the layout above):
// the fragments load faster from uint than from uvec4 arrays (684 vs 714 us
// at n = 4096). Edge fragments are stored through one 16x16 f32 fragment per
// subgroup (64 uvec4) of their own: 43520 bytes in all at the default shape.
#define SCRATCH 64u
shared uint sh_a[STAGES * TILE_A * 4u];
shared uint sh_b[STAGES * TILE_B * 4u];
shared uvec4 sh_scratch[WG_M * WG_N * SCRATCH];
void put_a(uint at, uvec4 v) { at *= 4u; sh_a[at] = v.x; sh_a[at + 1u] = v.y; sh_a[at + 2u] = v.z; sh_a[at + 3u] = v.w; }
void put_b(uint at, uvec4 v) { at *= 4u; sh_b[at] = v.x; sh_b[at + 1u] = v.y; sh_b[at + 2u] = v.z; sh_b[at + 3u] = v.w; }

const bool B_COL_MAJOR = B_T != 0u;

// Invocation t moves chunks q = t + i * THREADS (i < LOADS_A) of the A
// tile, row q / KV and uvec4 q % KV of it, and likewise of the B tile:
// transposed, BN rows of KV uvec4; row-major, BK rows of BV. A last round
// that not every invocation has (q >= CHUNKS) loads and stores nothing.
bool partial_round(uint q, uint chunks) { return chunks % THREADS != 0u && q >= chunks; }
uvec4 load_a(bool checked, uint base, uint row0, uint k0, uint i) {
    uint q = gl_LocalInvocationID.x + i * THREADS;
    uint m = row0 + q / KV, k = k0 + 8u * (q % KV);
    if (partial_round(q, CHUNKS_A) || (checked && (m >= pc.M || k >= pc.K))) return uvec4(0u);
    return a4[(base + m * pc.a_stride_m + k) >> 3u];
}
uvec4 load_b(bool checked, uint base, uint col0, uint k0, uint i) {
    uint q = gl_LocalInvocationID.x + i * THREADS;
    if (B_COL_MAJOR) {
        uint n = col0 + q / KV, k = k0 + 8u * (q % KV);
        if (partial_round(q, CHUNKS_B) || (checked && (n >= pc.N || k >= pc.K))) return uvec4(0u);
        return b4[(base + n * pc.b_stride_n + k) >> 3u];
    }
    uint k = k0 + q / BV, n = col0 + 8u * (q % BV);
    if (partial_round(q, CHUNKS_B) || (checked && (n >= pc.N || k >= pc.K))) return uvec4(0u);
    return b4[(base + k * pc.b_stride_k + n) >> 3u];
}
// The tiles at k0; checked: some of them lie past M, N or K.
void load_tiles(bool checked, uint a_base, uint b_base, uint row0, uint col0, uint k0,
                out uvec4 ra[LOADS_A], out uvec4 rb[LOADS_B]) {
    if (checked) {
        [[unroll]] for (uint i = 0u; i < LOADS_A; i++) ra[i] = load_a(true, a_base, row0, k0, i);
        [[unroll]] for (uint i = 0u; i < LOADS_B; i++) rb[i] = load_b(true, b_base, col0, k0, i);
    } else {
        [[unroll]] for (uint i = 0u; i < LOADS_A; i++) ra[i] = load_a(false, a_base, row0, k0, i);
        [[unroll]] for (uint i = 0u; i < LOADS_B; i++) rb[i] = load_b(false, b_base, col0, k0, i);
    }
}
void store_tiles(uint buf, uvec4 ra[LOADS_A], uvec4 rb[LOADS_B]) {
    [[unroll]] for (uint i = 0u; i < LOADS_A; i++) {
        uint q = gl_LocalInvocationID.x + i * THREADS;
        if (!partial_round(q, CHUNKS_A)) put_a(buf * TILE_A + (q / KV) * A_STRIDE + q % KV, ra[i]);
    }
    [[unroll]] for (uint i = 0u; i < LOADS_B; i++) {
        uint q = gl_LocalInvocationID.x + i * THREADS;
        if (partial_round(q, CHUNKS_B)) continue;
        if (B_COL_MAJOR)
            put_b(buf * TILE_B + (q / KV) * A_STRIDE + q % KV, rb[i]);
        else
            put_b(buf * TILE_B + (q / BV) * BR_STRIDE + q % BV, rb[i]);
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

fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN]; // this subgroup's part of the block

// This subgroup's fragment j of B, and i of A, at k offset kk of buffer cur.
void load_b_fragment(out FRAG_B fb, uint cur, uint kk, uint wn, uint j) {
    uint n = wn * (BN / WG_N) + j * 16u;
    if (B_COL_MAJOR)
        coopMatLoadNV(fb, sh_b, 4u * (cur * TILE_B + n * A_STRIDE + kk / 8u), 4u * A_STRIDE, true);
    else
        coopMatLoadNV(fb, sh_b, 4u * (cur * TILE_B + kk * BR_STRIDE + n / 8u), 4u * BR_STRIDE, false);
}
void load_a_fragment(out FRAG_A fa, uint cur, uint kk, uint wm, uint i) {
    coopMatLoadNV(fa, sh_a, 4u * (cur * TILE_A + (wm * (BM / WG_M) + i * 16u) * A_STRIDE + kk / 8u), 4u * A_STRIDE, false);
}
// The tile products of one subgroup's fragments at k offset kk of buffer cur.
void multiply_tile(uint cur, uint kk, uint wm, uint wn) {
    FRAG_A fa[FM];
    [[unroll]] for (uint i = 0u; i < FM; i++) load_a_fragment(fa[i], cur, kk, wm, i);
    [[unroll]] for (uint j = 0u; j < FN; j++) {
        FRAG_B fb;
        load_b_fragment(fb, cur, kk, wn, j);
        [[unroll]] for (uint i = 0u; i < FM; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
    }
}

// Walks K: while the tensor cores work on one shared-memory tile of A and
// B, the next ones are already in flight from global memory.
void multiply(bool checked, uint a_base, uint b_base, uint row0, uint col0, uint wm, uint wn) {
    uvec4 ra[LOADS_A], rb[LOADS_B];
    load_tiles(checked || BK > pc.K, a_base, b_base, row0, col0, 0u, ra, rb);
    store_tiles(0u, ra, rb);
    barrier();

    uint steps = (pc.K + BK - 1u) / BK;
    for (uint s = 0u; s < steps; s++) {
        uint cur = STAGES == 2u ? s & 1u : 0u;
        bool more = s + 1u < steps;
        if (more) { // the next tiles travel while this one is multiplied
            uint k0 = (s + 1u) * BK;
            load_tiles(checked || k0 + BK > pc.K, a_base, b_base, row0, col0, k0, ra, rb);
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) multiply_tile(cur, kk, wm, wn);
        if (STAGES == 1u) barrier(); // one buffer: everyone has read it before it is refilled
        if (more) store_tiles(STAGES == 2u ? cur ^ 1u : 0u, ra, rb);
        barrier();
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

    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    // Blocks wholly inside A, B and the output (all but the edges) load
    // without bounds checks: fewer registers and instructions per load.
    if (row0 + BM <= pc.M && col0 + BN <= pc.N)
        multiply(false, a_base, b_base, row0, col0, wm, wn);
    else
        multiply(true, a_base, b_base, row0, col0, wm, wn);

    // A fragment wholly inside the output is stored as it is (f16: converted
    // by the hardware, round to nearest even as the CPU); the others go
    // through this subgroup's part of sh_scratch, whose lane l writes row
    // l/2, columns (l%2)*8 .. +8 where they are in range.
    uint lane = gl_SubgroupInvocationID, r = lane >> 1u, c = (lane & 1u) * 8u;
    uint scratch = sg * SCRATCH, at = scratch + r * 4u + c / 4u;
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            uint m0 = row0 + wm * (BM / WG_M) + i * 16u, n0 = col0 + wn * (BN / WG_N) + j * 16u;
            uint e0 = d_base + m0 * pc.N + n0;
            if (m0 + 16u <= pc.M && n0 + 16u <= pc.N) {
                if (D_DT == DT_F16)
                    coopMatStoreNV(fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]), d4, e0 >> 3u, pc.N >> 3u, false);
                else
                    coopMatStoreNV(acc[i][j], d4, e0 >> 2u, pc.N >> 2u, false);
                continue;
            }
            coopMatStoreNV(acc[i][j], sh_scratch, scratch, 4u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            vec4 lo = uintBitsToFloat(sh_scratch[at]), hi = uintBitsToFloat(sh_scratch[at + 1u]);
            if (m0 + r < pc.M && n0 + c < pc.N) store8(e0 + r * pc.N + c, lo, hi);
            subgroupBarrier(); // the next fragment reuses the scratch
        }
}
