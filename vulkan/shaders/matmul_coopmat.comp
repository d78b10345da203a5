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

#define CM_M pc.M
#define CM_N pc.N
#define CM_K pc.K
#define CM_D_HALF (D_DT == DT_F16)
#define CM_DIRECT true
uvec4 cm_load_a(uint base, uint m, uint k) { return a4[(base + m * pc.a_stride_m + k) >> 3u]; }
uvec4 cm_load_b(uint base, uint k, uint n) { return b4[(base + k * pc.b_stride_k + n) >> 3u]; }
uvec4 cm_load_bt(uint base, uint n, uint k) { return b4[(base + n * pc.b_stride_n + k) >> 3u]; }

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

void cm_store8(uint base, uint m, uint n, vec4 lo, vec4 hi) { store8(base + m * pc.N + n, lo, hi); }

// The tile machinery is matmul_coopmat_tiles.glsl's (the synthesizer's
// emitted f16 matmuls include it too); this file says where A, B and D are.
#include "matmul_coopmat_tiles.glsl"

layout(local_size_x = THREADS) in;

void main() {
    uint batch = gl_WorkGroupID.z, a_base = pc.a_offset, b_base = pc.b_offset;
    uint d_base = pc.d_offset + batch * CM_M * CM_N;
    for (int d = int(pc.batch_ndim) - 1; d >= 0; d--) {
        uint coord = batch % pc.batch_shape[d];
        batch /= pc.batch_shape[d];
        a_base += coord * pc.a_batch_strides[d];
        b_base += coord * pc.b_batch_strides[d];
    }

    cm_tiles(a_base, b_base, d_base);
}
