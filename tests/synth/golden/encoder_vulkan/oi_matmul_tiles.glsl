// matmul_tiles.glsl - the tiled matmul's body, shared by matmul.comp (the
// backend) and the synthesizer's emitted matmul kernels (copied into each
// emitted folder as oi_matmul_tiles.glsl): a workgroup of MM_T x MM_T
// invocations makes a BM x BN block of the output, each invocation a
// (BM / MM_T) x (BN / MM_T) micro-tile, stepping through K by BK through
// shared memory. The next step's elements are fetched into registers while
// the current step multiplies, then stored into the tiles: the loads are in
// flight during the products instead of before them (a small product, of
// few steps, is mostly such waits).
//
// The includer says where the operands are and what becomes of a result:
//   BM, BN, BK, MM_T (default 16u)   the block, its k step, the threads
//   bool float_math()                float products (else 32-bit wrapping
//                                    integers, as two's complement bits)
//   uint mm_rows(), mm_cols()        M and N
//   uint mm_load_a(uint base, uint m, uint k)   A[m, k]'s value bits
//   uint mm_load_b(uint base, uint k, uint n)   B[k, n]'s value bits
//   void mm_store(uint base, uint m, uint n, float f, uint u)
//                                    result (m, n) (f: float_math(), else u)
//   MM_STORE_UNROLL                  the store loops' hint, [[unroll]] unless
//                                    defined (as empty: the driver decides)
//   MM_DIRECT                        (defined) each invocation reads its
//                                    operands from the buffers, with no
//                                    shared tiles and no barrier: for a CPU
//                                    Vulkan device (lavapipe), where those
//                                    cost more than they save
// and calls mm_tiles(a_base, b_base, d_base, k_begin, k_end) from main with
// the workgroup's block at (gl_WorkGroupID.y * BM, gl_WorkGroupID.x * BN).
#ifndef OI_MATMUL_TILES_GLSL
#define OI_MATMUL_TILES_GLSL

#ifndef MM_T
#define MM_T 16u
#endif
#ifndef MM_STORE_UNROLL
#define MM_STORE_UNROLL [[unroll]] // the store loops' hint (an emitted epilogue leaves it to the driver)
#endif
#define TM (BM / MM_T)
#define TN (BN / MM_T)

#ifdef MM_DIRECT
// A CPU device runs a workgroup's invocations as the lanes of its vector
// unit and a barrier as a switch between them: the encoder block's step
// took 3.2 s on lavapipe (2 cores) through the shared tiles, 0.85 s so
// with 4 x 4 threads of 8 x 8 results. A thread's rows and columns are
// strided by MM_T, as the tiled loops' (contiguous ones were slower).
void mm_tiles(uint a_base, uint b_base, uint d_base, uint k_begin, uint k_end) {
    uint tid = gl_LocalInvocationIndex, tx = tid % MM_T, ty = tid / MM_T;
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    uint rows = mm_rows(), cols = mm_cols();
    uint gm[TM], gn[TN]; // past the edges: the last row or column again, not stored
    [[unroll]] for (uint i = 0u; i < TM; i++) gm[i] = min(row0 + ty + MM_T * i, rows - 1u);
    [[unroll]] for (uint j = 0u; j < TN; j++) gn[j] = min(col0 + tx + MM_T * j, cols - 1u);

    float acc_f[TM][TN];
    uint acc_u[TM][TN];
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) { acc_f[i][j] = 0.0; acc_u[i][j] = 0u; }
    for (uint k = k_begin; k < k_end; k++) {
        uint a[TM], b[TN];
        [[unroll]] for (uint i = 0u; i < TM; i++) a[i] = mm_load_a(a_base, gm[i], k);
        [[unroll]] for (uint j = 0u; j < TN; j++) b[j] = mm_load_b(b_base, k, gn[j]);
        [[unroll]] for (uint i = 0u; i < TM; i++)
            [[unroll]] for (uint j = 0u; j < TN; j++) {
                if (float_math()) acc_f[i][j] += uintBitsToFloat(a[i]) * uintBitsToFloat(b[j]);
                else acc_u[i][j] += a[i] * b[j];
            }
    }

    MM_STORE_UNROLL for (uint i = 0u; i < TM; i++)
        MM_STORE_UNROLL for (uint j = 0u; j < TN; j++) {
            uint m = row0 + ty + MM_T * i, n = col0 + tx + MM_T * j;
            if (m < rows && n < cols) mm_store(d_base, m, n, acc_f[i][j], acc_u[i][j]);
        }
}
#else // the shared tiles
shared uint tile_a[BK][BM + 1u];
shared uint tile_b[BK][BN + 1u];

#define MM_THREADS (MM_T * MM_T)
#define MM_LOADS_A ((BM * BK + MM_THREADS - 1u) / MM_THREADS) // elements of a step each invocation fetches
#define MM_LOADS_B ((BN * BK + MM_THREADS - 1u) / MM_THREADS)

// One step's BM x BK and BK x BN elements (0 past the edges), strided by the
// invocations: consecutive invocations read consecutive k of A and
// consecutive n of B. Unrolled, so that every load is in flight at once.
void mm_fetch(uint tid, uint row0, uint col0, uint k0, uint k_end, uint a_base, uint b_base,
              out uint next_a[MM_LOADS_A], out uint next_b[MM_LOADS_B]) {
    uint rows = mm_rows(), cols = mm_cols();
    [[unroll]] for (uint r = 0u; r < MM_LOADS_A; r++) {
        uint l = tid + r * MM_THREADS, gm = row0 + l / BK, gk = k0 + l % BK;
        next_a[r] = (l < BM * BK && gm < rows && gk < k_end) ? mm_load_a(a_base, gm, gk) : 0u;
    }
    [[unroll]] for (uint r = 0u; r < MM_LOADS_B; r++) {
        uint l = tid + r * MM_THREADS, gn = col0 + l % BN, gk = k0 + l / BN;
        next_b[r] = (l < BN * BK && gn < cols && gk < k_end) ? mm_load_b(b_base, gk, gn) : 0u;
    }
}

void mm_stash(uint tid, uint next_a[MM_LOADS_A], uint next_b[MM_LOADS_B]) {
    [[unroll]] for (uint r = 0u; r < MM_LOADS_A; r++) {
        uint l = tid + r * MM_THREADS;
        if (l < BM * BK) tile_a[l % BK][l / BK] = next_a[r];
    }
    [[unroll]] for (uint r = 0u; r < MM_LOADS_B; r++) {
        uint l = tid + r * MM_THREADS;
        if (l < BN * BK) tile_b[l / BN][l % BN] = next_b[r];
    }
}

void mm_tiles(uint a_base, uint b_base, uint d_base, uint k_begin, uint k_end) {
    // the workgroup may be MM_T x MM_T or a row of MM_T * MM_T invocations
    uint tid = gl_LocalInvocationIndex, tx = tid % MM_T, ty = tid / MM_T;
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    uint rows = mm_rows(), cols = mm_cols();

    float acc_f[TM][TN];
    uint acc_u[TM][TN];
    // The micro-tile loops are unrolled so that the accumulators stay in
    // registers: without the hints an H200 made 2.2 TFLOP/s (the array in
    // local memory, it seems), with them 26.5.
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) { acc_f[i][j] = 0.0; acc_u[i][j] = 0u; }

    uint next_a[MM_LOADS_A], next_b[MM_LOADS_B];
    mm_fetch(tid, row0, col0, k_begin, k_end, a_base, b_base, next_a, next_b);
    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
        mm_stash(tid, next_a, next_b);
        barrier();
        if (k0 + BK < k_end) // the next step's loads, in flight during this step's products
            mm_fetch(tid, row0, col0, k0 + BK, k_end, a_base, b_base, next_a, next_b);
        [[unroll]] for (uint k = 0u; k < BK; k++) {
            if (float_math()) {
                float a[TM], b[TN];
                [[unroll]] for (uint i = 0u; i < TM; i++) a[i] = uintBitsToFloat(tile_a[k][ty + MM_T * i]);
                [[unroll]] for (uint j = 0u; j < TN; j++) b[j] = uintBitsToFloat(tile_b[k][tx + MM_T * j]);
                [[unroll]] for (uint i = 0u; i < TM; i++)
                    [[unroll]] for (uint j = 0u; j < TN; j++) acc_f[i][j] += a[i] * b[j];
            } else {
                [[unroll]] for (uint i = 0u; i < TM; i++)
                    [[unroll]] for (uint j = 0u; j < TN; j++) acc_u[i][j] += tile_a[k][ty + MM_T * i] * tile_b[k][tx + MM_T * j];
            }
        }
        barrier();
    }

    MM_STORE_UNROLL for (uint i = 0u; i < TM; i++)
        MM_STORE_UNROLL for (uint j = 0u; j < TN; j++) {
            uint gm = row0 + ty + MM_T * i, gn = col0 + tx + MM_T * j;
            if (gm < rows && gn < cols) mm_store(d_base, gm, gn, acc_f[i][j], acc_u[i][j]);
        }
}

#endif // MM_DIRECT

#endif
