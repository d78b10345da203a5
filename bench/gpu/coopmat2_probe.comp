#version 450
// coopmat2_probe.comp - C = A B for the emitted 4096^3 f16 matmul (tests/synth/matmul_graph.c as
// synthesized for h100.json at fp16: A, B and C are f16 in the arena at the offsets below) on
// VK_NV_cooperative_matrix2's workgroup-scope matrices: the driver, not the shader, splits each
// BM x BN block over the workgroup's subgroups, stages the operands through shared memory and
// clips at the edges (tensor layouts). bench/gpu/coopmat2_probe.sh builds it (-DBM, -DBN, -DBK,
// -DTHREADS; -DGM: blocks handed out in groups of GM block rows) into copies of the emitted folder
// in place of its cooperative-matrix kernel and times them against it and cuBLAS. Needs glslang
// 14.3 or newer and SPIR-V 1.6 (--target-env=vulkan1.3); Debian 12's glslc (glslang 11.13) has
// neither, which is why the emitted code does not use this extension.
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

layout(local_size_x = THREADS) in;
layout(std430, binding = 0) buffer Arena { float16_t arena16[]; };
const uint M = 4096u, N = 4096u, K = 4096u;
const uint A_AT = 0u, B_AT = 33554432u, C_AT = 67108864u; // the emitted plan's arena offsets, in halves

void main() {
#ifdef GM
    const uint nx = gl_NumWorkGroups.x, ny = gl_NumWorkGroups.y;
    const uint id = gl_WorkGroupID.y * nx + gl_WorkGroupID.x, group = GM * nx;
    const uint first = (id / group) * GM, rows = min(ny - first, GM);
    const uint m0 = (first + (id % group) % rows) * BM, n0 = ((id % group) / rows) * BN;
#else
    const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
#endif
    tensorLayoutNV<2> a_layout = setTensorLayoutDimensionNV(createTensorLayoutNV(2), M, K);
    tensorLayoutNV<2> b_layout = setTensorLayoutDimensionNV(createTensorLayoutNV(2), K, N);
    tensorLayoutNV<2> c_layout = setTensorLayoutDimensionNV(createTensorLayoutNV(2), M, N);
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0u; k < K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;
        coopMatLoadTensorNV(a, arena16, A_AT, sliceTensorLayoutNV(a_layout, m0, BM, k, BK));
        coopMatLoadTensorNV(b, arena16, B_AT, sliceTensorLayoutNV(b_layout, k, BK, n0, BN));
        acc = coopMatMulAdd(a, b, acc);
    }
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> c =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
    coopMatStoreTensorNV(c, arena16, C_AT, sliceTensorLayoutNV(c_layout, m0, BM, n0, BN));
}
