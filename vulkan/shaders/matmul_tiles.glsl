// matmul_tiles.glsl - the tiled matmul's body, shared by matmul.comp (the
// backend) and the synthesizer's emitted matmul kernels (copied into each
// emitted folder as oi_matmul_tiles.glsl): a workgroup of MM_T x MM_T
// invocations makes a BM x BN block of the output, each invocation a
// (BM / MM_T) x (BN / MM_T) micro-tile, stepping through K by BK through
// shared memory.
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

shared uint tile_a[BK][BM + 1u];
shared uint tile_b[BK][BN + 1u];

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

    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
        // BM x BK and BK x BN elements, strided by the invocations;
        // consecutive invocations read consecutive k of A and consecutive n of B.
        for (uint l = tid; l < BM * BK; l += MM_T * MM_T) {
            uint k = l % BK, m = l / BK;
            uint gm = row0 + m, gk = k0 + k;
            tile_a[k][m] = (gm < rows && gk < k_end) ? mm_load_a(a_base, gm, gk) : 0u;
        }
        for (uint l = tid; l < BN * BK; l += MM_T * MM_T) {
            uint n = l % BN, k = l / BN;
            uint gn = col0 + n, gk = k0 + k;
            tile_b[k][n] = (gn < cols && gk < k_end) ? mm_load_b(b_base, gk, gn) : 0u;
        }
        barrier();
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

#endif
