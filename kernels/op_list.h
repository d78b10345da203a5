/* op_list.h - THE op table. One row per op; every other op list in the
 * project (enum, names, validation, kernels, shaders, docs/ops.md) is
 * generated from it. Columns: X(name, n_inputs, ...). */
#ifndef OPENINFER_OP_LIST_H
#define OPENINFER_OP_LIST_H

#define OI_OP_LIST(X) \
    X(add, 2) X(mul, 2) X(sub, 2) X(div, 2) X(floor_div, 2) X(rem, 2) X(fma, 3) \
    X(neg, 1) X(recip, 1) X(abs, 1) X(relu, 1) X(matmul, 2) X(sign, 1) X(min, 2) \
    X(max, 2) X(clamp, 1) X(floor, 1) X(ceil, 1) X(round, 1) X(trunc, 1) \
    X(and, 2) X(or, 2) X(xor, 2) X(not, 1) X(shl, 1) X(shr, 1) X(popcount, 1) \
    X(eq, 2) X(ne, 2) X(lt, 2) X(le, 2) X(gt, 2) X(ge, 2) X(is_finite, 1) \
    X(is_nan, 1) X(is_inf, 1) X(is_neg, 1) X(filter, 3) X(sum_axis, 1) \
    X(mean_axis, 1) X(prod_axis, 1) X(max_axis, 1) X(min_axis, 1) \
    X(argmax_axis, 1) X(argmin_axis, 1) X(cast, 1) X(fill, 1) X(fill_nan_like, 1)

#endif
