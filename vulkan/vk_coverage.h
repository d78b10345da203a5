/* vk_coverage.h - the ops that have Vulkan shaders: one list, read by the
 * backend's supports_op (vulkan/vk_ops.c) and by whatever documents the
 * coverage (docs/ops.md). Needs no Vulkan headers. An op of the table that
 * is not listed always runs on the CPU kernel; a listed op runs on the GPU
 * for its row's dtypes within OI__DTS_VULKAN (kernels/op_list.h), except
 * what vk_ops.c declines case by case (acc=, i32/u32 mean_axis, float->int
 * casts with saturate=false, integer clamp bounds outside the dtype, layouts that do not merge into the shaders'
 * dims). X(op, shader file). */
#ifndef OPENINFER_VK_COVERAGE_H
#define OPENINFER_VK_COVERAGE_H

#define OI_VULKAN_OPS_CORE(X) \
    X(add, eltwise) X(sub, eltwise) X(mul, eltwise) X(div, eltwise) X(floor_div, eltwise) X(rem, eltwise) \
    X(fma, eltwise) X(min, eltwise) X(max, eltwise) X(neg, eltwise) X(abs, eltwise) X(recip, eltwise) \
    X(relu, eltwise) X(clamp, eltwise) X(hard_sigmoid, eltwise) X(hard_swish, eltwise) X(sign, eltwise) X(floor, eltwise) X(ceil, eltwise) X(round, eltwise) \
    X(trunc, eltwise) X(and, eltwise) X(or, eltwise) X(xor, eltwise) X(not, eltwise) X(shl, eltwise) \
    X(shr, eltwise) X(popcount, eltwise) X(eq, eltwise) X(ne, eltwise) X(lt, eltwise) X(le, eltwise) \
    X(gt, eltwise) X(ge, eltwise) X(is_nan, eltwise) X(is_inf, eltwise) X(is_neg, eltwise) X(filter, eltwise) \
    X(cast, eltwise) X(fill, eltwise) X(fill_nan_like, eltwise) X(exp, eltwise) X(log, eltwise) \
    X(sqrt, eltwise) X(rsqrt, eltwise) X(pow, eltwise) X(erf, eltwise) X(tanh, eltwise) X(sigmoid, eltwise) \
    X(gelu, eltwise) X(silu, eltwise) X(softplus, eltwise) \
    X(sum_axis, reduce) X(mean_axis, reduce) X(prod_axis, reduce) X(max_axis, reduce) X(min_axis, reduce) \
    X(argmax_axis, reduce) X(argmin_axis, reduce) X(is_finite, reduce) \
    X(softmax, rownorm) X(log_softmax, rownorm) X(layer_norm, rownorm) X(rms_norm, rownorm) \
    X(matmul, matmul)

/* vulkan/vk_ops_shape.c: 8/16/32-bit data and 64-bit (below) (gemm,
 * global_avg_pool: f32, f16, bf16); declined: layouts past the shaders'
 * dims (copy 8, pad 6, where 5 after merging). gather's out-of-range indices, an
 * error on the CPU, read as zeros on the GPU. */
#define OI_VULKAN_OPS_SHAPE(X) \
    X(reshape, copy) X(transpose, copy) X(squeeze, copy) X(unsqueeze, copy) X(slice, copy) X(split, copy) \
    X(expand, copy) X(tile, copy) X(concat, copy) X(pad, pad) X(gather, gather) X(where, eltwise) \
    X(gemm, gemm_epilogue) X(global_avg_pool, reduce)

/* vulkan/vk_ops_nn.c: f32/f16/bf16 data (top_k: every 8/16/32-bit dtype;
 * dequantize: u8 blocks in, f32 out); declined: x of rank > 6 (batch_norm,
 * group_norm, rope), attention head sizes > 256 or no keys, top_k with
 * k > 256, matmul_q8 with an f64 scale or x's leading dims not one stride,
 * K = 0, q4 rows whose bytes are not contiguous, dequantize rows that are
 * not contiguous bytes or whose leading dims are not one stride. matmul_q4
 * of at most 8 rows, q8_0 blocks or 8-bit activations run in matvec_quant. */
#define OI_VULKAN_OPS_NN(X) \
    X(batch_norm, chnorm) X(group_norm, chnorm) X(rope, rope) X(attention, attention) X(top_k, topk) \
    X(top_k_indices, topk) X(matmul_q8, matmul_quant) X(matmul_q4, matmul_quant) X(dequantize, dequantize)

/* vulkan/vk_ops_conv.c */
#define OI_VULKAN_OPS_CONV(X) \
    X(conv1d, conv) X(conv2d, conv) X(conv_transpose2d, conv) X(max_pool2d, pool) X(avg_pool2d, pool)

#define OI_VULKAN_OP_LIST(X) OI_VULKAN_OPS_CORE(X) OI_VULKAN_OPS_SHAPE(X) OI_VULKAN_OPS_NN(X) OI_VULKAN_OPS_CONV(X)

/* 64-bit data (i64, u64, f64: OI__DTS_VULKAN_WIDE). The ops that only move
 * elements take it on every device, two 32-bit words per element. The
 * core ops of eltwise.comp and reduce.comp (shader `eltwise` or `reduce`
 * in OI_VULKAN_OPS_CORE, and where) compute on it in eltwise_wide.comp and
 * reduce_wide where the device has shaderInt64 and shaderFloat64, except
 * for f64 these (GLSL has no double exp, log, ...; hard_sigmoid and
 * hard_swish have no f64 shader code yet). Every other op on
 * 64-bit data runs on the CPU. */
#define OI_VULKAN_OPS_WIDE_MOVES(X) \
    X(reshape) X(transpose) X(squeeze) X(unsqueeze) X(slice) X(split) X(expand) X(tile) X(concat) X(pad) X(gather)
#define OI_VULKAN_F64_ON_CPU(X) X(exp) X(log) X(erf) X(tanh) X(sigmoid) X(silu) X(softplus) X(gelu) X(pow) \
    X(hard_sigmoid) X(hard_swish)

#endif
