/* op_list.h - THE op table. One row per op; every other op list in the
 * project (enum, names, arity, validation, kernels, shaders, docs/ops.md)
 * is generated from it. Adding an op = one row here (+ its parameters in
 * OI_PARAM_LIST, and a string parameter's values in OI_PARAM_CHOICES) + a
 * case in its family kernel + a test.
 *
 * OI_OP_LIST columns, X(name, arity, category, shape, out, flags, dtypes, acc_dtypes, kernel, summary):
 *   name        the DSL name; OI_OP_<name> is the enum value
 *   arity       number of inputs (outputs are always 1)
 *   category    a string for docs/ops.md
 *   shape       shape rule: EW (elementwise; broadcast when OI__F_B), MATMUL,
 *               REDUCE (`axes`), ARGREDUCE (`axis`), ALL (reduces to a scalar []),
 *               CUSTOM (the family file defines `<kernel>_infer`, which
 *               computes the output signature and checks inputs 1.. itself)
 *   out         output dtype rule: SAME (input dtype, or the acc dtype),
 *               BOOL, I8, U8, I64, F32 (fixed), TO (the `to` parameter)
 *   flags       OI__F_B broadcast, OI__F_I in-place allowed, OI__F_A takes `acc=`,
 *               OI__F_OPT the last input is optional (arity - 1 also accepted),
 *               OI__F_VAR any number of inputs from 1 to arity,
 *               OI__F_MIX inputs 1.. may have other dtypes (checked by the
 *               CUSTOM infer); without it all inputs share input 0's dtype
 *   dtypes      input dtypes accepted (a set of OI__DTS_* bits)
 *   acc_dtypes  input dtypes accepted in accumulate mode (0: no acc mode)
 *   kernel      the CPU kernel of the op family (kernels/<family>.c)
 *   summary     one line for docs/ops.md
 * Only the enum row (name first) is expanded by the public header; the
 * other columns are read by kernels/ and tools/gen_ops_md.c. */
#ifndef OPENINFER_OP_LIST_H
#define OPENINFER_OP_LIST_H

/* Dtype sets: one bit per oi_dtype. */
#define OI__DTS(t) (1u << (unsigned)OI_DTYPE_##t)
#define OI__DTS_F (OI__DTS(F8) | OI__DTS(BF16) | OI__DTS(F16) | OI__DTS(F32) | OI__DTS(F64))
#define OI__DTS_S (OI__DTS(I8) | OI__DTS(I16) | OI__DTS(I32) | OI__DTS(I64))
#define OI__DTS_U (OI__DTS(U8) | OI__DTS(U16) | OI__DTS(U32) | OI__DTS(U64))
#define OI__DTS_PI (OI__DTS(I1) | OI__DTS(I2) | OI__DTS(I4))
#define OI__DTS_PU (OI__DTS(U1) | OI__DTS(U2) | OI__DTS(U4))
#define OI__DTS_T (OI__DTS(T1) | OI__DTS(T2))
#define OI__DTS_BOOL OI__DTS(BOOL)
#define OI__DTS_BITSET OI__DTS(BITSET)
#define OI__DTS_INT (OI__DTS_S | OI__DTS_U | OI__DTS_PI | OI__DTS_PU)
#define OI__DTS_NUM (OI__DTS_F | OI__DTS_INT)
#define OI__DTS_SHIFT (OI__DTS_S | OI__DTS_U | OI__DTS(I2) | OI__DTS(I4) | OI__DTS(U2) | OI__DTS(U4))
#define OI__DTS_DIV4 (OI__DTS(I4) | OI__DTS(U4))

/* The storage dtypes the Vulkan shaders read and write (8/16/32-bit, not
 * packed, not f8: vulkan/vk_ops.c). An op's Vulkan dtypes are its row's
 * dtypes within this set, without acc=; the rest runs on the CPU kernel. */
#define OI__DTS_VULKAN (OI__DTS(F32) | OI__DTS(F16) | OI__DTS(BF16) | OI__DTS(I8) | OI__DTS(I16) | OI__DTS(I32) | \
                        OI__DTS(U8) | OI__DTS(U16) | OI__DTS(U32) | OI__DTS_BOOL)
/* ... and 64-bit storage, for the ops vulkan/vk_coverage.h names. */
#define OI__DTS_VULKAN_WIDE (OI__DTS(I64) | OI__DTS(U64) | OI__DTS(F64))

#define OI__F_B 1u /* numpy broadcasting of the inputs  */
#define OI__F_I 2u /* the output may be the first input */
#define OI__F_A 4u /* accepts acc= (accumulate mode)    */
#define OI__F_OPT 8u  /* the last input is optional        */
#define OI__F_VAR 16u /* 1..arity inputs                   */
#define OI__F_MIX 32u /* inputs 1.. have their own dtypes  */

/* clang-format off */
#define OI_OP_LIST(X) \
    X(add, 2, "arithmetic", EW, SAME, OI__F_B | OI__F_I | OI__F_A, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET, OI__DTS_NUM, oi__k_arith, \
      "a + b; integers wrap; bool is OR") \
    X(mul, 2, "arithmetic", EW, SAME, OI__F_B | OI__F_I | OI__F_A, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, OI__DTS_NUM | OI__DTS_T, oi__k_arith, \
      "a * b; integers wrap; bool is AND") \
    X(sub, 2, "arithmetic", EW, SAME, OI__F_B | OI__F_I | OI__F_A, OI__DTS_NUM, OI__DTS_NUM, oi__k_arith, \
      "a - b; integers wrap") \
    X(div, 2, "arithmetic", EW, SAME, OI__F_B | OI__F_I, OI__DTS_F | OI__DTS_S | OI__DTS_U | OI__DTS_DIV4, 0, oi__k_arith, \
      "a / b (integers truncate toward zero, MIN / -1 wraps); b == 0 gives div_by_zero_mask") \
    X(floor_div, 2, "arithmetic", EW, SAME, OI__F_B | OI__F_I, OI__DTS_S | OI__DTS_U | OI__DTS_DIV4, 0, oi__k_arith, \
      "floor(a / b) for integers (rounds toward -inf); b == 0 gives div_by_zero_mask") \
    X(rem, 2, "arithmetic", EW, SAME, OI__F_B | OI__F_I, OI__DTS_S | OI__DTS_U | OI__DTS_DIV4, 0, oi__k_arith, \
      "a % b, truncated (the sign follows a); b == 0 gives 0") \
    X(fma, 3, "arithmetic", EW, SAME, OI__F_B | OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "a * b + c, two roundings (not fused)") \
    X(neg, 1, "arithmetic", EW, SAME, OI__F_I, OI__DTS_F | OI__DTS_S | OI__DTS_PI | OI__DTS_T, 0, oi__k_arith, \
      "-x; integers wrap (-MIN == MIN)") \
    X(recip, 1, "arithmetic", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "1 / x; x == 0 gives div_by_zero_mask") \
    X(abs, 1, "arithmetic", EW, SAME, OI__F_I | OI__F_A, OI__DTS_F | OI__DTS_S | OI__DTS_PI, OI__DTS_F | OI__DTS_S | OI__DTS_PI, oi__k_arith, \
      "absolute value; integers wrap (abs(MIN) == MIN) unless acc= widens") \
    X(relu, 1, "numerical", EW, SAME, OI__F_I, OI__DTS_F | OI__DTS_S | OI__DTS(I4), 0, oi__k_arith, \
      "x >= 0 ? x : x * negative_slope, then clamped to [clamp_min, clamp_max]") \
    X(matmul, 2, "numerical", MATMUL, SAME, OI__F_B | OI__F_I | OI__F_A, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET, OI__DTS_NUM | OI__DTS_T, oi__k_matmul, \
      "[..., M, K] x [..., K, N] -> [broadcast(...), M, N]; integers wrap; bool is OR of ANDs") \
    X(sign, 1, "statistics", EW, I8, OI__F_I, OI__DTS_F | OI__DTS_S | OI__DTS_PI | OI__DTS_T, 0, oi__k_arith, \
      "-1, 0 or 1 as i8 (NaN and -0.0 give 0)") \
    X(min, 2, "statistics", EW, SAME, OI__F_B | OI__F_I, OI__DTS_NUM, 0, oi__k_arith, \
      "the smaller of a and b; a NaN operand is ignored") \
    X(max, 2, "statistics", EW, SAME, OI__F_B | OI__F_I, OI__DTS_NUM, 0, oi__k_arith, \
      "the larger of a and b; a NaN operand is ignored") \
    X(clamp, 1, "rounding", EW, SAME, OI__F_I, OI__DTS_NUM, 0, oi__k_arith, \
      "min(max(x, min), max); NaN gives min") \
    X(hard_sigmoid, 1, "numerical", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "ONNX HardSigmoid: max(0, min(1, alpha * x + beta)), alpha and beta rounded to the element type; NaN stays NaN") \
    X(hard_swish, 1, "numerical", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "ONNX HardSwish: x * hard_sigmoid(x) with alpha = 1/6 (rounded to the element type), beta = 0.5") \
    X(floor, 1, "rounding", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "round toward -inf") \
    X(ceil, 1, "rounding", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "round toward +inf") \
    X(round, 1, "rounding", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "round to nearest, halves away from zero") \
    X(trunc, 1, "rounding", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "round toward zero") \
    X(and, 2, "bitwise", EW, SAME, OI__F_B | OI__F_I, OI__DTS_INT | OI__DTS_BOOL, 0, oi__k_arith, \
      "a & b (logical for bool)") \
    X(or, 2, "bitwise", EW, SAME, OI__F_B | OI__F_I, OI__DTS_INT | OI__DTS_BOOL, 0, oi__k_arith, \
      "a | b (logical for bool)") \
    X(xor, 2, "bitwise", EW, SAME, OI__F_B | OI__F_I, OI__DTS_INT | OI__DTS_BOOL, 0, oi__k_arith, \
      "a ^ b (logical for bool)") \
    X(not, 1, "bitwise", EW, SAME, OI__F_I, OI__DTS_INT | OI__DTS_BOOL, 0, oi__k_arith, \
      "~x (logical for bool)") \
    X(shl, 1, "bitwise", EW, SAME, OI__F_I, OI__DTS_SHIFT, 0, oi__k_arith, \
      "x << bits, wrapped to the dtype; bits >= 64 gives 0") \
    X(shr, 1, "bitwise", EW, SAME, OI__F_I, OI__DTS_SHIFT, 0, oi__k_arith, \
      "x >> bits; arithmetic for signed dtypes") \
    X(popcount, 1, "bitwise", EW, U8, 0, OI__DTS_SHIFT, 0, oi__k_arith, \
      "number of set bits of the element (i8 -1 gives 8), as u8") \
    X(eq, 2, "comparison", EW, BOOL, OI__F_B, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_T, 0, oi__k_compare, \
      "a == b (IEEE: NaN != NaN)") \
    X(ne, 2, "comparison", EW, BOOL, OI__F_B, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_T, 0, oi__k_compare, \
      "a != b") \
    X(lt, 2, "comparison", EW, BOOL, OI__F_B, OI__DTS_NUM, 0, oi__k_compare, \
      "a < b") \
    X(le, 2, "comparison", EW, BOOL, OI__F_B, OI__DTS_NUM, 0, oi__k_compare, \
      "a <= b") \
    X(gt, 2, "comparison", EW, BOOL, OI__F_B, OI__DTS_NUM, 0, oi__k_compare, \
      "a > b") \
    X(ge, 2, "comparison", EW, BOOL, OI__F_B, OI__DTS_NUM, 0, oi__k_compare, \
      "a >= b") \
    X(is_finite, 1, "filter", ALL, BOOL, 0, OI__DTS_F, 0, oi__k_compare, \
      "one bool (shape []): every element is finite") \
    X(is_nan, 1, "filter", EW, BOOL, 0, OI__DTS_F, 0, oi__k_compare, \
      "x is NaN") \
    X(is_inf, 1, "filter", EW, BOOL, 0, OI__DTS_F, 0, oi__k_compare, \
      "x is +inf or -inf") \
    X(is_neg, 1, "filter", EW, BOOL, 0, OI__DTS_NUM | OI__DTS_T, 0, oi__k_compare, \
      "x has its sign bit set (-0.0 gives true); unsigned gives false") \
    X(filter, 3, "filter", EW, SAME, OI__F_B, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_T, 0, oi__k_compare, \
      "cond != 0 ? a : b for filter(a, b, cond); cond has the dtype of a, or bool") \
    X(sum_axis, 1, "reduction", REDUCE, SAME, OI__F_A, OI__DTS_NUM, OI__DTS_NUM | OI__DTS_T, oi__k_reduce, \
      "sum over axes; integers wrap") \
    X(mean_axis, 1, "reduction", REDUCE, SAME, OI__F_A, OI__DTS_NUM, OI__DTS_NUM | OI__DTS_T, oi__k_reduce, \
      "sum / count over axes; integer means truncate toward zero") \
    X(prod_axis, 1, "reduction", REDUCE, SAME, OI__F_A, OI__DTS_NUM, OI__DTS_NUM | OI__DTS_T, oi__k_reduce, \
      "product over axes; integers wrap") \
    X(max_axis, 1, "reduction", REDUCE, SAME, 0, OI__DTS_NUM, 0, oi__k_reduce, \
      "maximum over axes (NaN ignored unless all are NaN)") \
    X(min_axis, 1, "reduction", REDUCE, SAME, 0, OI__DTS_NUM, 0, oi__k_reduce, \
      "minimum over axes (NaN ignored unless all are NaN)") \
    X(argmax_axis, 1, "reduction", ARGREDUCE, I64, 0, OI__DTS_NUM, 0, oi__k_reduce, \
      "index of the maximum along axis, as i64; ties: select_first") \
    X(argmin_axis, 1, "reduction", ARGREDUCE, I64, 0, OI__DTS_NUM, 0, oi__k_reduce, \
      "index of the minimum along axis, as i64; ties: select_first") \
    X(cast, 1, "casting", EW, TO, 0, OI__DTS_NUM | OI__DTS_T, 0, oi__k_cast, \
      "converts to `to`: any number to a float, a float or a narrower same-signedness integer to an integer") \
    X(fill, 1, "mutation", EW, SAME, OI__F_I, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_arith, \
      "every element set to value (the input gives shape and dtype)") \
    X(fill_nan_like, 1, "mutation", EW, SAME, OI__F_I, OI__DTS_F, 0, oi__k_arith, \
      "non-finite elements (NaN, +-inf) replaced by value") \
    /* math and neural-network ops */ \
    X(exp, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "e^x") \
    X(log, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "natural logarithm (x < 0 gives NaN, 0 gives -inf)") \
    X(sqrt, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "square root (x < 0 gives NaN)") \
    X(rsqrt, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "1 / sqrt(x)") \
    X(pow, 2, "math", EW, SAME, OI__F_B | OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "pow(a, b) as C pow (ONNX Pow with one dtype)") \
    X(erf, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "the error function") \
    X(tanh, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "hyperbolic tangent") \
    X(sigmoid, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "1 / (1 + e^-x)") \
    X(gelu, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "ONNX Gelu: x * Phi(x) (`approximate`=\"tanh\": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))))") \
    X(silu, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "x * sigmoid(x) (swish)") \
    X(softplus, 1, "math", EW, SAME, OI__F_I, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_math, \
      "log(1 + e^x), computed without overflow") \
    X(softmax, 1, "normalization", CUSTOM, SAME, 0, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "ONNX Softmax (opset 13) along `axis`: e^(x - max) / sum; a row of -inf gives NaN") \
    X(log_softmax, 1, "normalization", CUSTOM, SAME, 0, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "ONNX LogSoftmax along `axis`: (x - max) - log(sum e^(x - max))") \
    X(layer_norm, 3, "normalization", CUSTOM, SAME, OI__F_OPT, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "ONNX LayerNormalization(x, scale[, bias]) over dims `axis`..: (x - mean) / sqrt(var + epsilon) * scale + bias; scale and bias broadcast to x.shape[axis:]") \
    X(rms_norm, 2, "normalization", CUSTOM, SAME, 0, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "ONNX RMSNormalization / LLaMA RMSNorm(x, scale) over dims `axis`..: x / sqrt(mean(x^2) + epsilon) * scale") \
    X(batch_norm, 5, "normalization", CUSTOM, SAME, 0, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "ONNX BatchNormalization, inference: (x, scale, bias, mean, var), x [N, C, ...], the others [C]: (x - mean) / sqrt(var + epsilon) * scale + bias") \
    X(group_norm, 3, "normalization", CUSTOM, SAME, 0, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "ONNX GroupNormalization (opset 21)(x, scale, bias): x [N, C, ...] normalized per `num_groups` channel groups, then per-channel scale [C] and bias [C]") \
    X(rope, 2, "transformer", CUSTOM, SAME, OI__F_MIX, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "rotary embedding rope(x, positions): x [..., seq, ..., dim] (sequence at `seq_axis`), positions i32/i64 [seq] or [x.shape[0], seq]; pair (a, b) at angle pos * theta^(-2i/rotary_dim) becomes (a cos - b sin, b cos + a sin)") \
    X(attention, 4, "transformer", CUSTOM, SAME, OI__F_OPT | OI__F_MIX, (OI__DTS_F & ~OI__DTS(F8)), 0, oi__k_nn, \
      "attention(q, k, v[, mask]): softmax(scale q k^T + mask) v; q [B, Hq, S, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv] (Hq a multiple of Hkv: grouped-query heads), mask added (or bool: true keeps) broadcast to [B, Hq, S, T] -> [B, Hq, S, Dv]") \
    X(top_k, 1, "selection", CUSTOM, SAME, 0, (OI__DTS_F & ~OI__DTS(F8)) | OI__DTS_S | OI__DTS_U, 0, oi__k_nn, \
      "ONNX TopK values: the `k` largest (or smallest) along `axis`, best first, ties by lower index, NaN above +inf") \
    X(top_k_indices, 1, "selection", CUSTOM, I64, 0, (OI__DTS_F & ~OI__DTS(F8)) | OI__DTS_S | OI__DTS_U, 0, oi__k_nn, \
      "ONNX TopK indices (i64) of the values top_k gives, with the same parameters") \
    X(matmul_q8, 3, "quantized", CUSTOM, SAME, OI__F_MIX, OI__DTS(BF16) | OI__DTS(F16) | OI__DTS(F32), 0, oi__k_quant, \
      "matmul_q8(x, w, scale): x [..., K] times per-channel int8 weights w i8 [N, K] (or [K, N], `layout`), scale [N] -> [..., N]: y = scale[n] * sum_k x[k] w[n, k]") \
    X(matmul_q4, 2, "quantized", CUSTOM, SAME, OI__F_MIX, OI__DTS(BF16) | OI__DTS(F16) | OI__DTS(F32), 0, oi__k_quant, \
      "matmul_q4(x, w): x [..., K] times block-quantized weights w u8 [N, K/32 * block bytes] (ggml q4_0, q4_1 or q8_0 blocks of 32 along K, `format`; q8_0 is 8-bit despite the name) -> [..., N]") \
    X(dequantize, 1, "quantized", CUSTOM, F32, 0, OI__DTS(U8), 0, oi__k_quant, \
      "dequantize(w): rows of ggml blocks u8 [..., K/32 * block bytes] (`format`, as matmul_q4's w) -> f32 [..., K]; after a gather of a quantized table's rows, an embedding lookup that keeps the table quantized") \
    /* shape, view and convolution ops */ \
    X(reshape, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "`shape` with ONNX's 0 (copy the input dim) and one -1 (inferred); a view of dense data, and of a strided input whose dims split or merge without moving an element (NumPy's rule: a column slice cut into heads)") \
    X(transpose, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "permutes the axes: output dim i is input dim perm[i]; a view") \
    X(squeeze, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "removes size-1 axes (`axes`, or every one); a view") \
    X(unsqueeze, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "inserts size-1 axes at `axes` (positions in the output); a view") \
    X(slice, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "ONNX Slice: starts/ends/axes/steps, negative counts from the end, clamped to the dim; a view for steps > 0") \
    X(split, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "piece `index` of `axis` cut into `sizes` or `num` parts (outputs are single: one op per piece); a view") \
    X(concat, 8, "shape", CUSTOM, SAME, OI__F_VAR, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "joins 1 to 8 inputs along `axis` (the other dims equal)") \
    X(gather, 2, "shape", CUSTOM, SAME, OI__F_MIX, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "gather(data, indices): `axis` of data replaced by the integer indices (negative from the end; out of range is a runtime error); embedding lookup") \
    X(where, 3, "shape", CUSTOM, SAME, OI__F_MIX, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "where(cond, a, b): a where the bool cond is true, else b; numpy broadcasting; a and b share a dtype") \
    X(pad, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "ONNX Pad: `pads` = [begins..., ends...] (negative crops), mode constant (`value`), reflect, edge or wrap") \
    X(expand, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "broadcasts the input with `shape` (numpy rules, either side may be 1); a view with stride 0") \
    X(tile, 1, "shape", CUSTOM, SAME, 0, OI__DTS_NUM | OI__DTS_BOOL | OI__DTS_BITSET | OI__DTS_T, 0, oi__k_shape, \
      "repeats the input repeats[i] times along axis i") \
    X(gemm, 3, "numerical", CUSTOM, SAME, OI__F_OPT, OI__DTS_F, 0, oi__k_conv, \
      "ONNX Gemm: alpha * A' x B' + beta * C; A, B 2-D (transposed by trans_a, trans_b), optional C broadcast to [M, N]") \
    X(conv1d, 3, "convolution", CUSTOM, SAME, OI__F_OPT, OI__DTS_F, 0, oi__k_conv, \
      "ONNX Conv: x [N, C, L], w [M, C / group, k], optional bias [M] -> [N, M, L']") \
    X(conv2d, 3, "convolution", CUSTOM, SAME, OI__F_OPT, OI__DTS_F, 0, oi__k_conv, \
      "ONNX Conv: x [N, C, H, W], w [M, C / group, kH, kW], optional bias [M] -> [N, M, H', W']") \
    X(conv_transpose2d, 3, "convolution", CUSTOM, SAME, OI__F_OPT, OI__DTS_F, 0, oi__k_conv, \
      "ONNX ConvTranspose: x [N, C, H, W], w [C, M / group, kH, kW], optional bias [M] -> [N, M, H', W']") \
    X(max_pool2d, 1, "convolution", CUSTOM, SAME, 0, OI__DTS_F | OI__DTS(I8) | OI__DTS(U8), 0, oi__k_conv, \
      "ONNX MaxPool over [N, C, H, W]: padding never wins, NaN propagates") \
    X(avg_pool2d, 1, "convolution", CUSTOM, SAME, 0, OI__DTS_F, 0, oi__k_conv, \
      "ONNX AveragePool over [N, C, H, W] (sums in f64)") \
    X(global_avg_pool, 1, "convolution", CUSTOM, SAME, 0, OI__DTS_F, 0, oi__k_conv, \
      "mean over all spatial dims: [N, C, ...] -> [N, C, 1, ...]")

/* Named parameters: X(op, name, type, required, default, default_text, doc).
 *   type      ACC (a dtype or [acc, out] dtype list), SCALAR (float, int or
 *             bool), BOOL, INT, INT_LIST, DTYPE, STRING, or ALIAS (another
 *             name for the parameter named in default_text)
 *   required  REQ or OPT
 *   default   the value kernels use when the parameter is absent */
#define OI__ACC_DOC "accumulator dtype: a wider integer of the same signedness, or f32/f64 for floats; [acc, out] also names the output dtype"
#define OI_PARAM_LIST(X) \
    X(add, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(mul, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(sub, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(div, div_by_zero_mask, SCALAR, OPT, NAN, "NaN (floats), 0 (integers)", "result where b == 0") \
    X(floor_div, div_by_zero_mask, SCALAR, OPT, 0, "0", "result where b == 0") \
    X(recip, div_by_zero_mask, SCALAR, OPT, NAN, "NaN", "result where x == 0") \
    X(abs, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(relu, negative_slope, SCALAR, OPT, 0, "0", "slope for x < 0 (an integer for integer dtypes)") \
    X(relu, alpha, ALIAS, OPT, 0, "negative_slope", "the original's name for negative_slope") \
    X(relu, clamp_min, SCALAR, OPT, -INFINITY, "-inf", "lower bound of the result") \
    X(relu, clamp_max, SCALAR, OPT, INFINITY, "+inf", "upper bound of the result") \
    X(matmul, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(clamp, min, SCALAR, OPT, -DBL_MAX, "lowest value", "lower bound") \
    X(clamp, max, SCALAR, OPT, DBL_MAX, "highest value", "upper bound") \
    X(hard_sigmoid, alpha, SCALAR, OPT, 0.2, "0.2", "slope") \
    X(hard_sigmoid, beta, SCALAR, OPT, 0.5, "0.5", "offset") \
    X(shl, bits, INT, REQ, 0, "required", "shift amount (negative counts as 0)") \
    X(shr, bits, INT, REQ, 0, "required", "shift amount (negative counts as 0)") \
    X(sum_axis, axes, INT_LIST, REQ, 0, "required", "axes to reduce (negative counts from the end)") \
    X(sum_axis, keepdims, BOOL, OPT, 0, "false", "keep reduced axes as size 1") \
    X(sum_axis, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(mean_axis, axes, INT_LIST, REQ, 0, "required", "axes to reduce (negative counts from the end)") \
    X(mean_axis, keepdims, BOOL, OPT, 0, "false", "keep reduced axes as size 1") \
    X(mean_axis, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(prod_axis, axes, INT_LIST, REQ, 0, "required", "axes to reduce (negative counts from the end)") \
    X(prod_axis, keepdims, BOOL, OPT, 0, "false", "keep reduced axes as size 1") \
    X(prod_axis, acc, ACC, OPT, 0, "input dtype", OI__ACC_DOC) \
    X(max_axis, axes, INT_LIST, REQ, 0, "required", "axes to reduce (negative counts from the end)") \
    X(max_axis, keepdims, BOOL, OPT, 0, "false", "keep reduced axes as size 1") \
    X(min_axis, axes, INT_LIST, REQ, 0, "required", "axes to reduce (negative counts from the end)") \
    X(min_axis, keepdims, BOOL, OPT, 0, "false", "keep reduced axes as size 1") \
    X(argmax_axis, axis, INT, REQ, 0, "required", "the axis to search (negative counts from the end)") \
    X(argmax_axis, keepdims, BOOL, OPT, 0, "false", "keep the axis as size 1") \
    X(argmax_axis, select_first, BOOL, OPT, 1, "true", "on ties take the first index (false: the last)") \
    X(argmin_axis, axis, INT, REQ, 0, "required", "the axis to search (negative counts from the end)") \
    X(argmin_axis, keepdims, BOOL, OPT, 0, "false", "keep the axis as size 1") \
    X(argmin_axis, select_first, BOOL, OPT, 1, "true", "on ties take the first index (false: the last)") \
    X(cast, to, DTYPE, REQ, 0, "required", "target dtype (not packed)") \
    X(cast, rounding_mode, STRING, OPT, 0, "\"trunc\"", "float to integer: trunc, floor, ceil or nearest (halves away from zero)") \
    X(cast, saturate, BOOL, OPT, 1, "true", "clamp to the target range (false: wrap); NaN gives 0") \
    X(fill, value, SCALAR, REQ, 0, "required", "the value (an integer for integer dtypes)") \
    X(fill_nan_like, value, SCALAR, OPT, 0, "0", "replacement for NaN and +-inf") \
    /* math and neural-network ops */ \
    X(gelu, approximate, STRING, OPT, 0, "\"none\"", "\"none\" (exact, with erf) or \"tanh\"") \
    X(softmax, axis, INT, OPT, -1, "-1", "the axis normalized (negative counts from the end)") \
    X(log_softmax, axis, INT, OPT, -1, "-1", "the axis normalized (negative counts from the end)") \
    X(layer_norm, axis, INT, OPT, -1, "-1", "the first normalized dim: dims axis.. are normalized together") \
    X(layer_norm, epsilon, SCALAR, OPT, 1e-5, "1e-5", "added to the variance") \
    X(rms_norm, axis, INT, OPT, -1, "-1", "the first normalized dim: dims axis.. are normalized together") \
    X(rms_norm, epsilon, SCALAR, OPT, 1e-5, "1e-5", "added to the mean square") \
    X(batch_norm, epsilon, SCALAR, OPT, 1e-5, "1e-5", "added to the variance") \
    X(group_norm, num_groups, INT, REQ, 0, "required", "channel groups (divides C); statistics per sample and group") \
    X(group_norm, epsilon, SCALAR, OPT, 1e-5, "1e-5", "added to the variance") \
    X(rope, theta, SCALAR, OPT, 10000.0, "10000", "frequency base: pair i turns by pos * theta^(-2i / rotary_dim)") \
    X(rope, interleaved, BOOL, OPT, 0, "false", "pairs are (2i, 2i + 1) as in GPT-J (false: (i, i + rotary_dim/2) as in LLaMA/HF)") \
    X(rope, seq_axis, INT, OPT, -2, "-2", "the sequence axis of x: -2 for [..., seq, dim] (e.g. [B, H, S, D]), -3 (or 1) for [B, S, H, D]") \
    X(rope, rotary_dim, INT, OPT, 0, "dim", "rotate only the first rotary_dim (even) channels; the rest pass through") \
    X(attention, causal, BOOL, OPT, 0, "false", "query i sees keys j <= i + T - S (bottom-right aligned, so a query block at the end of a KV cache works; ONNX aligns top-left); a query that sees no key gives NaN") \
    X(attention, scale, SCALAR, OPT, 0, "1/sqrt(D)", "multiplies q k^T") \
    X(top_k, k, INT, REQ, 0, "required", "how many (0 to the size of axis)") \
    X(top_k, axis, INT, OPT, -1, "-1", "the axis searched (negative counts from the end)") \
    X(top_k, largest, BOOL, OPT, 1, "true", "the largest (false: the smallest)") \
    X(top_k, sorted, BOOL, OPT, 1, "true", "accepted for ONNX; the result is always sorted") \
    X(top_k_indices, k, INT, REQ, 0, "required", "how many (0 to the size of axis)") \
    X(top_k_indices, axis, INT, OPT, -1, "-1", "the axis searched (negative counts from the end)") \
    X(top_k_indices, largest, BOOL, OPT, 1, "true", "the largest (false: the smallest)") \
    X(top_k_indices, sorted, BOOL, OPT, 1, "true", "accepted for ONNX; the result is always sorted") \
    X(matmul_q8, layout, STRING, OPT, 0, "\"nk\"", "\"nk\": w is [N, K] (a row per output); \"kn\": w is [K, N]") \
    X(matmul_q4, format, STRING, OPT, 0, "\"q4_0\"", "\"q4_0\": 18-byte blocks (f16 d, 16 bytes of nibbles q), value (q - 8) * d; \"q4_1\": 20-byte blocks (f16 d, f16 m, nibbles), value q * d + m; low nibbles are elements 0..15 of a block, high nibbles 16..31; \"q8_0\": 34-byte blocks (f16 d, 32 int8 q), value q * d") \
    X(matmul_q4, activations, STRING, OPT, 0, "\"f32\"", "\"f32\": x as given, f32 arithmetic; \"q8\": each row of x rounded once to blocks of 32 int8 (dx = max|x| / 127 per block, as llama.cpp's q8 activations) and dotted in exact integer arithmetic (AVX2 / AVX-512 VNNI / portable, bit-identical), then scaled in f32; adds at most dx / 2 * sum|w| per block to each output") \
    X(dequantize, format, STRING, REQ, 0, "required", "the block format, as matmul_q4's: \"q4_0\" ((q - 8) * d), \"q4_1\" (q * d + m) or \"q8_0\" (q * d); each product rounded to f32 before m is added") \
    /* shape, view and convolution ops */ \
    X(reshape, shape, INT_LIST, REQ, 0, "required", "the new dims: -1 once (inferred), 0 copies the input dim (unless allowzero)") \
    X(reshape, allowzero, BOOL, OPT, 0, "false", "0 in shape means a real 0") \
    X(transpose, perm, INT_LIST, OPT, 0, "reversed axes", "output dim i is input dim perm[i] (negative counts from the end)") \
    X(squeeze, axes, INT_LIST, OPT, 0, "every size-1 axis", "axes to remove (each of size 1)") \
    X(unsqueeze, axes, INT_LIST, REQ, 0, "required", "where the new size-1 axes go, as positions in the output") \
    X(slice, starts, INT_LIST, REQ, 0, "required", "first index per sliced axis (negative counts from the end)") \
    X(slice, ends, INT_LIST, REQ, 0, "required", "end index (exclusive) per sliced axis; large values mean to the end") \
    X(slice, axes, INT_LIST, OPT, 0, "0, 1, ...", "the sliced axes") \
    X(slice, steps, INT_LIST, OPT, 1, "1 each", "step per sliced axis (negative walks backwards; not 0)") \
    X(split, axis, INT, OPT, 0, "0", "the axis to cut") \
    X(split, sizes, INT_LIST, OPT, 0, "-", "the piece sizes (summing to the dim); or give num") \
    X(split, num, INT, OPT, 0, "-", "number of pieces of ceil(dim / num), the last ones smaller; or give sizes") \
    X(split, index, INT, REQ, 0, "required", "which piece this op outputs (negative counts from the end)") \
    X(concat, axis, INT, REQ, 0, "required", "the axis to join along (negative counts from the end)") \
    X(gather, axis, INT, OPT, 0, "0", "the axis of data the indices select along") \
    X(pad, pads, INT_LIST, REQ, 0, "required", "[begin per axis..., end per axis...]; negative values crop") \
    X(pad, mode, STRING, OPT, 0, "\"constant\"", "constant, reflect (mirror without the edge), edge (repeat it) or wrap") \
    X(pad, value, SCALAR, OPT, 0, "0", "the constant mode's fill value (an integer for integer dtypes)") \
    X(pad, axes, INT_LIST, OPT, 0, "all axes", "the axes pads refers to") \
    X(expand, shape, INT_LIST, REQ, 0, "required", "the shape to broadcast with") \
    X(tile, repeats, INT_LIST, REQ, 0, "required", "copies per axis (>= 0, one per axis)") \
    X(gemm, alpha, SCALAR, OPT, 1, "1", "scale of the product") \
    X(gemm, beta, SCALAR, OPT, 1, "1", "scale of C") \
    X(gemm, trans_a, BOOL, OPT, 0, "false", "A is stored [K, M]") \
    X(gemm, trans_b, BOOL, OPT, 0, "false", "B is stored [N, K]") \
    X(gemm, activation, STRING, OPT, 0, "\"none\"", "applied to the result as it is made: \"none\", \"relu\", \"gelu\" (exact), \"gelu_tanh\" or \"hard_swish\" (as the ops compute them)") \
    X(conv1d, strides, INT_LIST, OPT, 1, "1 each", "step per spatial dim") \
    X(conv1d, pads, INT_LIST, OPT, 0, "0 each", "[begin per spatial dim..., end per spatial dim...]") \
    X(conv1d, dilations, INT_LIST, OPT, 1, "1 each", "spacing of the window elements per spatial dim") \
    X(conv1d, auto_pad, STRING, OPT, 0, "\"NOTSET\"", "NOTSET (use pads), VALID (no padding), SAME_UPPER or SAME_LOWER (output = ceil(in / stride), the odd pad at the end or start)") \
    X(conv1d, group, INT, OPT, 1, "1", "channel groups (C and M divisible by it)") \
    X(conv1d, kernel_shape, INT_LIST, OPT, 0, "the weights' shape", "must match the weights") \
    X(conv1d, activation, STRING, OPT, 0, "\"none\"", "applied to the result (after the bias) as gemm's: \"none\", \"relu\", \"gelu\" (exact), \"gelu_tanh\" or \"hard_swish\" (as the ops compute them)") \
    X(conv2d, strides, INT_LIST, OPT, 1, "1 each", "step per spatial dim") \
    X(conv2d, pads, INT_LIST, OPT, 0, "0 each", "[begin per spatial dim..., end per spatial dim...]") \
    X(conv2d, dilations, INT_LIST, OPT, 1, "1 each", "spacing of the window elements per spatial dim") \
    X(conv2d, auto_pad, STRING, OPT, 0, "\"NOTSET\"", "NOTSET (use pads), VALID (no padding), SAME_UPPER or SAME_LOWER (output = ceil(in / stride), the odd pad at the end or start)") \
    X(conv2d, group, INT, OPT, 1, "1", "channel groups (C and M divisible by it)") \
    X(conv2d, kernel_shape, INT_LIST, OPT, 0, "the weights' shape", "must match the weights") \
    X(conv2d, activation, STRING, OPT, 0, "\"none\"", "applied to the result (after the bias) as gemm's: \"none\", \"relu\", \"gelu\" (exact), \"gelu_tanh\" or \"hard_swish\" (as the ops compute them)") \
    X(conv_transpose2d, strides, INT_LIST, OPT, 1, "1 each", "step per spatial dim") \
    X(conv_transpose2d, pads, INT_LIST, OPT, 0, "0 each", "[begin per spatial dim..., end per spatial dim...]") \
    X(conv_transpose2d, dilations, INT_LIST, OPT, 1, "1 each", "spacing of the window elements per spatial dim") \
    X(conv_transpose2d, auto_pad, STRING, OPT, 0, "\"NOTSET\"", "NOTSET (use pads), VALID (no padding), SAME_UPPER or SAME_LOWER (output = ceil(in / stride), the odd pad at the end or start)") \
    X(conv_transpose2d, group, INT, OPT, 1, "1", "channel groups (C and M divisible by it)") \
    X(conv_transpose2d, kernel_shape, INT_LIST, OPT, 0, "the weights' shape", "must match the weights") \
    X(conv_transpose2d, output_padding, INT_LIST, OPT, 0, "0 each", "extra size at the end of each spatial dim") \
    X(conv_transpose2d, output_shape, INT_LIST, OPT, 0, "-", "the spatial output size; sets the pads (ONNX rule)") \
    X(max_pool2d, kernel_shape, INT_LIST, REQ, 0, "required", "window size per spatial dim") \
    X(max_pool2d, strides, INT_LIST, OPT, 1, "1 each", "step per spatial dim") \
    X(max_pool2d, pads, INT_LIST, OPT, 0, "0 each", "[begin per spatial dim..., end per spatial dim...]") \
    X(max_pool2d, dilations, INT_LIST, OPT, 1, "1 each", "spacing of the window elements per spatial dim") \
    X(max_pool2d, auto_pad, STRING, OPT, 0, "\"NOTSET\"", "NOTSET (use pads), VALID (no padding), SAME_UPPER or SAME_LOWER (output = ceil(in / stride), the odd pad at the end or start)") \
    X(max_pool2d, ceil_mode, BOOL, OPT, 0, "false", "round the output size up (a window starting in the end padding is dropped)") \
    X(avg_pool2d, kernel_shape, INT_LIST, REQ, 0, "required", "window size per spatial dim") \
    X(avg_pool2d, strides, INT_LIST, OPT, 1, "1 each", "step per spatial dim") \
    X(avg_pool2d, pads, INT_LIST, OPT, 0, "0 each", "[begin per spatial dim..., end per spatial dim...]") \
    X(avg_pool2d, dilations, INT_LIST, OPT, 1, "1 each", "spacing of the window elements per spatial dim") \
    X(avg_pool2d, auto_pad, STRING, OPT, 0, "\"NOTSET\"", "NOTSET (use pads), VALID (no padding), SAME_UPPER or SAME_LOWER (output = ceil(in / stride), the odd pad at the end or start)") \
    X(avg_pool2d, ceil_mode, BOOL, OPT, 0, "false", "round the output size up (a window starting in the end padding is dropped)") \
    X(avg_pool2d, count_include_pad, BOOL, OPT, 0, "false", "divide by the window size including padding (else only the input elements)")

/* The values a STRING parameter takes, '|' between them: validation refuses
 * any other ("gelu: approximate must be \"none\" or \"tanh\", got \"erf\""),
 * so the kernels map a value they were given and never check it. */
#define OI__ACTIVATIONS "none|relu|gelu|gelu_tanh|hard_swish"
#define OI__AUTO_PADS "NOTSET|VALID|SAME_UPPER|SAME_LOWER"
#define OI_PARAM_CHOICES(X) \
    X(cast, rounding_mode, "trunc|floor|ceil|nearest") \
    X(gelu, approximate, "none|tanh") \
    X(matmul_q8, layout, "nk|kn") \
    X(matmul_q4, format, "q4_0|q4_1|q8_0") \
    X(matmul_q4, activations, "f32|q8") \
    X(dequantize, format, "q4_0|q4_1|q8_0") \
    X(pad, mode, "constant|reflect|edge|wrap") \
    X(gemm, activation, OI__ACTIVATIONS) \
    X(conv1d, activation, OI__ACTIVATIONS) \
    X(conv2d, activation, OI__ACTIVATIONS) \
    X(conv1d, auto_pad, OI__AUTO_PADS) \
    X(conv2d, auto_pad, OI__AUTO_PADS) \
    X(conv_transpose2d, auto_pad, OI__AUTO_PADS) \
    X(max_pool2d, auto_pad, OI__AUTO_PADS) \
    X(avg_pool2d, auto_pad, OI__AUTO_PADS)
/* clang-format on */

#endif
