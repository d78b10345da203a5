// matmul_coopmat_tiles.glsl - the cooperative-matrix matmul's body, shared
// by matmul_coopmat.comp (the backend; its header says how it was tuned) and
// the synthesizer's emitted f16 matmul kernels (copied into each emitted
// folder as oi_matmul_coopmat_tiles.glsl): the shared-memory tiles, their
// loads one step ahead, the fragment products and the stores.
//
// The includer declares the extensions (GL_NV_cooperative_matrix, 16-bit
// arithmetic types, subgroups, memory scope semantics, control-flow
// attributes), BM, BN, BK, WG_M, WG_N, STAGES (or takes the defaults),
// local_size_x = THREADS, and says where the operands are:
//   B_T (a const uint)        1: B is stored [N, K]
//   CM_M, CM_N, CM_K          the sizes (K and N multiples of 8)
//   uvec4 cm_load_a(uint base, uint m, uint k)   A[m, k .. k + 7] as 8 halves
//   uvec4 cm_load_b(uint base, uint k, uint n)   B[k, n .. n + 7] (B_T 0)
//   uvec4 cm_load_bt(uint base, uint n, uint k)  B[n, k .. k + 7] (B_T 1)
//   d4 (a uvec4 buffer), CM_D_HALF, CM_DIRECT   the output: fragments wholly
//                             inside it are stored straight into d4 (f16 or
//                             f32 elements from d_base) where CM_DIRECT;
//   void cm_store8(uint base, uint m, uint n, vec4 lo, vec4 hi)
//                             the others, 8 results of row m from column n
// and calls cm_tiles(a_base, b_base, d_base) from main.
#ifndef OI_MATMUL_COOPMAT_TILES_GLSL
#define OI_MATMUL_COOPMAT_TILES_GLSL

#ifndef BM
#define BM 128u          // = the host's OI__VK_COOPMAT_BM (vk_ops.c)
#endif
#ifndef BN
#define BN 256u          // = the host's OI__VK_COOPMAT_BN
#endif
#ifndef BK
#define BK 32u           // k per shared-memory tile (a multiple of 16)
#endif
#ifndef WG_M
#define WG_M 2u          // subgroups along M
#define WG_N 8u          // ... along N
#endif
#ifndef STAGES
#define STAGES 1u        // shared-memory buffers: 2, or 1 with two barriers per step
#endif
#define KV (BK / 8u)     // uvec4 per row of an A tile (and of a transposed B tile)
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

// Never set by the host: they tag the A and B fragment types (their k
// extent) for gen_spirv.py's coopmat-khr rewrite, whose matrix types say
// which operand a matrix is (see the end of this header).
layout(constant_id = 20) const uint USE_A = 16u;
layout(constant_id = 21) const uint USE_B = 16u;
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, 16, USE_A>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, USE_B, 16>

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
    if (partial_round(q, CHUNKS_A) || (checked && (m >= CM_M || k >= CM_K))) return uvec4(0u);
    return cm_load_a(base, m, k);
}
uvec4 load_b(bool checked, uint base, uint col0, uint k0, uint i) {
    uint q = gl_LocalInvocationID.x + i * THREADS;
    if (B_COL_MAJOR) {
        uint n = col0 + q / KV, k = k0 + 8u * (q % KV);
        if (partial_round(q, CHUNKS_B) || (checked && (n >= CM_N || k >= CM_K))) return uvec4(0u);
        return cm_load_bt(base, n, k);
    }
    uint k = k0 + q / BV, n = col0 + 8u * (q % BV);
    if (partial_round(q, CHUNKS_B) || (checked && (n >= CM_N || k >= CM_K))) return uvec4(0u);
    return cm_load_b(base, k, n);
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
    load_tiles(checked || BK > CM_K, a_base, b_base, row0, col0, 0u, ra, rb);
    store_tiles(0u, ra, rb);
    barrier();

    uint steps = (CM_K + BK - 1u) / BK;
    for (uint s = 0u; s < steps; s++) {
        uint cur = STAGES == 2u ? s & 1u : 0u;
        bool more = s + 1u < steps;
        if (more) { // the next tiles travel while this one is multiplied
            uint k0 = (s + 1u) * BK;
            load_tiles(checked || k0 + BK > CM_K, a_base, b_base, row0, col0, k0, ra, rb);
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) multiply_tile(cur, kk, wm, wn);
        if (STAGES == 1u) barrier(); // one buffer: everyone has read it before it is refilled
        if (more) store_tiles(STAGES == 2u ? cur ^ 1u : 0u, ra, rb);
        barrier();
    }
}

void cm_tiles(uint a_base, uint b_base, uint d_base) {
    uint sg = gl_SubgroupID, wm = sg / WG_N, wn = sg % WG_N;
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    // Blocks wholly inside A, B and the output (all but the edges) load
    // without bounds checks: fewer registers and instructions per load.
    if (row0 + BM <= CM_M && col0 + BN <= CM_N)
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
            uint e0 = d_base + m0 * CM_N + n0;
            if (CM_DIRECT && m0 + 16u <= CM_M && n0 + 16u <= CM_N) {
                if (CM_D_HALF)
                    coopMatStoreNV(fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]), d4, e0 >> 3u, CM_N >> 3u, false);
                else
                    coopMatStoreNV(acc[i][j], d4, e0 >> 2u, CM_N >> 2u, false);
                continue;
            }
            coopMatStoreNV(acc[i][j], sh_scratch, scratch, 4u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            vec4 lo = uintBitsToFloat(sh_scratch[at]), hi = uintBitsToFloat(sh_scratch[at + 1u]);
            if (m0 + r < CM_M && n0 + c < CM_N) cm_store8(d_base, m0 + r, n0 + c, lo, hi);
            subgroupBarrier(); // the next fragment reuses the scratch
        }
}

#endif
