/* vk_matmul_tiling.h - how the tiled matmul (matmul.comp's tile loops,
 * matmul_tiles.glsl) covers a product: its block, its step of K and how
 * many slices of K it is split into. The backend picks per call (vk_ops.c);
 * the synthesizer's Vulkan target (synth/emit_vulkan.c) starts from the
 * same rule at synthesis time but splits K its own way (smaller blocks,
 * the slices summed in the same dispatch), so its split products sum in
 * another order than the simulator's. */
#ifndef OI_VK_MATMUL_TILING_H
#define OI_VK_MATMUL_TILING_H

#include <stdbool.h>
#include <stdint.h>

#define OI__VK_BIG_MATMUL 256 /* M and N from which a float matmul uses 128x128 blocks */

/* A product split along K aims for OI__VK_SPLIT_GROUPS workgroups in slices
 * of at least OI__VK_MIN_K_SLICE: on the H100, 256 and 32 made the encoder's
 * gemms 13% faster than 128 and 64. */
#define OI__VK_SPLIT_GROUPS 256u
#define OI__VK_MIN_K_SLICE 32u

typedef struct oi__vk_matmul_tiling {
    uint32_t block;   /* BM = BN: 64, or 128 for large float products (more work per loaded element),
                         32 on a CPU device (oi__vk_matmul_direct_tiles) */
    uint32_t bk;      /* the step of K: 16, or 8 with 128x128 blocks (matmul_big_f) */
    uint64_t gx, gy;  /* workgroups along N and M (16 x 16 invocations each, 4 x 4 direct) */
    uint32_t slices;  /* slices of K (workgroup z), 1 when not split */
    uint32_t k_slice; /* K per slice, 0 when not split */
} oi__vk_matmul_tiling;

/* How many slices of K a product of `groups` workgroups is split into
 * (one workgroup z per slice, partial products summed afterwards): a
 * product of few output blocks, such as an encoder's [128, 384] x [384, N],
 * would otherwise walk all of K on a handful of a GPU's cores. Slices are a
 * multiple of the tiles' steps of K (16). */
static inline uint32_t oi__vk_k_slices(uint64_t groups, uint32_t K, uint32_t *k_slice) {
    *k_slice = 0;
    if (groups >= OI__VK_SPLIT_GROUPS / 2u || K < 2u * OI__VK_MIN_K_SLICE)
        return 1;
    uint64_t want = (OI__VK_SPLIT_GROUPS + groups - 1u) / groups, most = K / OI__VK_MIN_K_SLICE;
    uint64_t slices = want < most ? want : most;
    uint32_t per = (uint32_t)((K + slices - 1u) / slices + 15u) / 16u * 16u;
    *k_slice = per;
    return (K + per - 1u) / per;
}

/* On a CPU Vulkan device (lavapipe) a float product takes matmul_tiles.glsl's
 * MM_DIRECT loops (matmul_direct_f; the synthesizer's emitted matmuls too):
 * OI__VK_DIRECT_SIDE x OI__VK_DIRECT_SIDE threads of 8 x 8 results read
 * their operands from the buffers, K not split. Shared tiles and barriers
 * cost such a device more than they save: the encoder block's step on two
 * cores went 2.0 -> 0.7 s in the backend, 3.2 -> 0.85 s in emitted code. */
#define OI__VK_DIRECT_SIDE 4
#define OI__VK_DIRECT_BLOCK 32

static inline oi__vk_matmul_tiling oi__vk_matmul_direct_tiles(int64_t M, int64_t N) {
    oi__vk_matmul_tiling t = {OI__VK_DIRECT_BLOCK, 16u, 0, 0, 1u, 0u};
    t.gx = (uint64_t)(N + t.block - 1) / t.block;
    t.gy = (uint64_t)(M + t.block - 1) / t.block;
    return t;
}

/* matmul_q4 of few rows (matvec_quant.comp; the synthesizer's emitted
 * matmul_q4 too): the invocations that share an output column, of a
 * workgroup of 64. 16 on a GPU, their sums added in shared memory; 1 on a
 * CPU device, for the reason above (a SmolLM2 step on lavapipe 2.0 ->
 * 0.93 s). */
static inline uint32_t oi__vk_matvec_split(bool cpu_device) { return cpu_device ? 1u : 16u; }

/* The tiling of an [M, K] x [K, N] product; may_split: whether its caller
 * sums slices (gemm's epilogue: one product, not batched, 32-bit). */
static inline oi__vk_matmul_tiling oi__vk_matmul_tiles(bool float_in, int64_t M, int64_t N, uint32_t K,
                                                       bool may_split) {
    oi__vk_matmul_tiling t;
    bool big = float_in && M >= OI__VK_BIG_MATMUL && N >= OI__VK_BIG_MATMUL;
    t.block = big ? 128u : 64u;
    t.bk = big ? 8u : 16u;
    t.gx = (uint64_t)(N + t.block - 1) / t.block;
    t.gy = (uint64_t)(M + t.block - 1) / t.block;
    t.k_slice = 0;
    t.slices = may_split ? oi__vk_k_slices(t.gx * t.gy, K, &t.k_slice) : 1u;
    return t;
}

#endif
