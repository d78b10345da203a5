/* test_graphs.c - graphs for the synthesizer's parity test beside the
 * examples (export_example builds each like an example):
 *   int_ops        i8 products that wrap, i32 and u16 sums and differences,
 *                  negation, comparisons of the results, min and max signed
 *                  and unsigned; div, floor_div and rem by negative divisors
 *                  and zeros (a mask), unsigned; clamp of i32, i8 and u16;
 *                  fill of i32, u16 and bool; tile and expand; is_neg;
 *                  top_k of i32 with ties
 *   logic_cast     and, or, xor and not on bool (logical) and on i32
 *                  (bitwise), where over f32 and i32 with a bool condition
 *                  and a literal branch, and cast: f32 to i8, u8 and i32 in
 *                  each rounding mode with saturation (values past either
 *                  end, exact halves, NaN, -inf), f32 to f64 and back, i32
 *                  to f32 and i64, f32 to u16 to u64; max_axis and min_axis
 *                  over the last axis (reduce.c's row path) and the first
 *                  (its generic path), over rows with NaN; pow; argmax and
 *                  argmin along the first and a middle axis
 *   bool_ops       the logical ops and where on f32, for both targets
 *   maybe_written  a temporary written in one arm of a branch only and read
 *                  after it: when the other arm runs it must read zeros, not
 *                  the bytes of a temporary that shared its arena space (an
 *                  f32 one, and a bool one of 3 bytes: the Vulkan target
 *                  zeros whole words)
 *   hard_act       hard_sigmoid and hard_swish, f32 and f64; a value
 *                  overwritten before it is read; a reshape onto itself
 *   local_names    variables named as the locals of the C kernels that use
 *                  them (layer_norm's sum, mean, d, sq; softmax's, the
 *                  reductions'): the emitted code renames what would clash
 *   nn_ops         gelu on its own (exact and tanh), gemm with a bias row and
 *                  relu (the plain loop), gemm with
 *                  gelu over edge tiles (gemm.c's micro-kernels), gelu_tanh
 *                  and hard_swish on both, layer_norm,
 *                  transpose, reshape into heads, attention, layer_norm over
 *                  the last two dims, batch_norm and group_norm (2 groups,
 *                  and one per channel) over [1, 8, 2, 8]
 *   gather_attn    gather along axes 0, 1 and -1 with i32, i64 and u8 indices
 *                  (negative ones counting from the end), of f32, f64, i32
 *                  and bool data; attention with a bool key mask broadcast
 *                  over heads and rows, an additive f32 mask [S, T], causal
 *                  (S = T), and causal with more queries than keys plus a
 *                  per-head f32 mask (the first rows see no key: NaN); a gemm
 *                  writing its own A over a weight packed at open
 *                  (gemm(xs, Wsq, bsq) >> xs: split tasks must not read rows
 *                  another task has overwritten); gathers of f16 data (a model
 *                  tensor, an input, a constant with @init) and a transpose of
 *                  the result (f16 is stored, never computed); its model
 *                  gather_attn_model
 *   conv_ops       conv2d with padding, strides and relu (gemm.c's plain loop),
 *                  conv2d in 2 groups with dilation over 2 images (the
 *                  micro-kernels) with a fused epilogue, conv1d over 3
 *                  positions (the dot kernels, 23 channels: a tail), pad
 *                  (reflect, constant with a crop, edge on one axis), slice
 *                  with negative steps, concat of three, split, unsqueeze and
 *                  squeeze, a depthwise conv2d (2 outputs per channel, stride
 *                  2 by 1, relu), max_pool2d (ceil_mode, padding),
 *                  avg_pool2d (with and without the padding counted),
 *                  global_avg_pool, a conv with a sloped, clamped relu and
 *                  hard_swish fused and a 1 x 1 conv with hard_sigmoid and
 *                  a bounded relu fused (elementwise.c's lanes); activation=
 *                  hard_swish, gelu_tanh and gelu on each conv path
 *   skinny_prefix  matmuls of 2 rows by the entries of a prefix table W(l)
 *                  (70 x 70: gemm.c's dot kernels over each entry transposed
 *                  at open, tails of channels and of k), a fused epilogue
 *   llm_ops        a decoder's row ops: rms_norm (rows of 64 and of 12),
 *                  rope at the step's position (a persistent counter, as
 *                  smollm2.c: interleaved, seq_axis 0, in place), half-split
 *                  with rotary_dim, positions i64 [seq] and i32 [batch,
 *                  seq]; argmax_axis and argmin_axis with ties (floored
 *                  values) taken first and last, with keepdims, on i32
 *   matmul_any     matmuls over broadcast batch dims, of f64, i32 and u8
 *                  (wrapping); gemms with trans_a, trans_b, alpha, beta and
 *                  a C broadcast along columns or from one value
 *   row_ops        f64 exp, log, sqrt, tanh, erf and pow; f64 sums and
 *                  means over axes, prod_axis of f32 and f64, softmax along
 *                  the first axis, log_softmax along each; is_inf, softplus
 *                  and fill of f32 and f64; casts of f32 and f64 to f16
 *                  (overflow, subnormals) and back; f16 arithmetic, exp,
 *                  max and a comparison; tile and expand; is_neg of f32
 *                  (signed zeros) and f64; batch_norm, group_norm in 2
 *                  groups and in one per channel; top_k (values and
 *                  indices) along a middle axis and the smallest with NaN
 *   conv_t         conv_transpose2d in groups with a bias, strides, pads,
 *                  dilations and output_padding; with auto_pad SAME_UPPER
 *   conv_wide      conv2d of f64 in groups with a bias, pads, strides and
 *                  dilations, with relu; conv1d of f64; max_pool2d of u8
 *                  and of negative i8
 *   bf16_casts     bf16 stored as its bits (an input, an @init value):
 *                  casts of f32 (inf, NaN, subnormals), f64 and f16 into
 *                  bf16 and of bf16 into f32, f64 and f16
 *   quant_ops      matmul_q4 with activations="q8" over q4_1, q4_0 and q8_0
 *                  blocks (one row of x, five rows split into tasks), and
 *                  over a prefix table W(l) in a loop (a decoder's layers);
 *                  with f32 activations over one and three rows of x;
 *                  dequantize of two gathered q8_0 rows (an embedding
 *                  lookup; the Vulkan target copies them as words) and of
 *                  whole q4_1 and q4_0 tables; its model quant_model
 *   kv_gqa         a decoder's attention: per layer of a loop this step's k
 *                  and v written into persistent tables K(l, t), V(l, t)
 *                  (@fixed(t=16)), every position so far read back
 *                  (0..step+1: a length known at run time), transposed into
 *                  heads (views folded into the attention) and attended by
 *                  4 query heads over 2 kv heads; and a grouped-query
 *                  attention of static shapes with a scale
 *   vk_rows        f32 ops the Vulkan target took after the C target:
 *                  softmax/log_softmax and argmax/argmin along other axes,
 *                  round, is_inf, is_neg, softplus, fill, tile, expand, pow
 *   vk_ints        i32 arithmetic that wraps, div/floor_div/rem by negative
 *                  divisors and zeros, min, max, comparisons (both targets)
 *   vk_i64         i64 arithmetic that wraps (products and sums past 2^63,
 *                  INT64_MIN / -1 and its negation), div/floor_div/rem by
 *                  negative divisors, zeros (a mask) and the literal
 *                  INT64_MIN, min, max, comparisons, over inputs, literals
 *                  and model data; its model vk_i64_model (both targets)
 *   vk_names       i32 and bool operands named as the GLSL kernels' locals
 *                  (p, lo, hi, acc, i, at: renamed with a '_'), so the
 *                  helper macros built on their names (NAME_w, NAME_write,
 *                  NAME_read) must not contain "__", and one named i_
 *                  beside i (which then becomes i_2) (both targets)
 *   vk_matmul_any  f32 matmuls over broadcast batch dims and gemms with
 *                  trans_a, trans_b, alpha, beta and a broadcast C (both
 *                  targets)
 *   vk_topk        top_k and top_k_indices of f32 along two axes, largest
 *                  and smallest, with ties and signed zeros (both targets)
 *   vk_many_rows   row kernels over 66000 rows, more than one dispatch
 *                  counts along x (both targets)
 *   vk_casts       f32 into i32 and i64 by each rounding mode, saturating,
 *                  and back, i32 into i64 (both targets)
 *   vk_bool_prefix bool masks stored in the model, read as prefix-table
 *                  entries M(l) in a loop (a byte each, from the model's
 *                  words), and i32 and i64 entries; its model
 *                  vk_bool_prefix_model (both targets) */
#include "../../openinfer.h"

#include <stdio.h>
#include <stdlib.h>

OI_GRAPH(int_ops,
  OI_DYNAMIC( OI_VAR(s8, i8[6]) OI_VAR(b, i32[2, 3]) OI_VAR(c, u16[3]) )
  OI_VOLATILE(
    OI_VAR(p, i8[6]) OI_VAR(q, i32[2, 3], @init(7)) OI_VAR(r, u16[2, 3])
    OI_VAR(big, bool[2, 3]) OI_VAR(n, i32[2, 3]) OI_VAR(lo, i32[2, 3]) OI_VAR(hi8, i8[6])
    OI_VAR(bn, i32[2, 3]) OI_VAR(fd, i32[2, 3]) OI_VAR(rm, i32[2, 3]) OI_VAR(dv, i32[2, 3]) OI_VAR(uq, u16[2, 3])
    OI_VAR(ur, u16[2, 3]) OI_VAR(cl, i32[2, 3]) OI_VAR(cl8, i8[6]) OI_VAR(clu, u16[3]) OI_VAR(fi, i32[2, 3])
    OI_VAR(fu, u16[3]) OI_VAR(yes, bool[2, 3]) OI_VAR(tb, i32[4, 9]) OI_VAR(eb, i32[2, 2, 3]) OI_VAR(ec, u16[2, 1, 3])
    OI_VAR(below, bool[2, 3]) OI_VAR(best, i32[2, 2]) OI_VAR(best_at, i64[2, 2])
  )
  OI_BLOCK(entry,
    OI_OP(mul, s8, s8) OI_TO(p)
    OI_OP(mul, p, p) OI_TO(p)
    OI_OP(mul, p, s8) OI_TO(p)
    OI_OP(sub, q, b) OI_TO(q)
    OI_OP(mul, q, q) OI_TO(q)
    OI_OP(neg, q) OI_TO(n)
    OI_OP(gt, q, b) OI_TO(big)
    OI_OP(add, c, c) OI_TO(c)
    OI_OP(sub, r, c) OI_TO(r)
    OI_OP(add, n, 3) OI_TO(n)       /* integer literals: "3:i32", "-2:i32" */
    OI_OP(mul, n, -2) OI_TO(n)
    OI_OP(min, n, b) OI_TO(lo)      /* signed: negative values compare below */
    OI_OP(max, p, s8) OI_TO(hi8)
    OI_OP(max, r, c) OI_TO(r)       /* unsigned: the wrapped differences are large */
    OI_OP(sub, b, 2) OI_TO(bn)      /* -2..2: negative divisors and zeros */
    OI_OP(floor_div, n, bn) OI_TO(fd) /* toward -inf; 0 where bn is 0 */
    OI_OP(rem, n, bn) OI_TO(rm)     /* the sign of n */
    OI_OP(div, n, bn, div_by_zero_mask=-7) OI_TO(dv)
    OI_OP(floor_div, r, c) OI_TO(uq) /* unsigned, zeros in c */
    OI_OP(rem, r, c) OI_TO(ur)
    OI_OP(clamp, n, min=-5, max=40) OI_TO(cl)
    OI_OP(clamp, p, min=-3) OI_TO(cl8)
    OI_OP(clamp, c, min=-1, max=5) OI_TO(clu) /* a negative bound is 0 for unsigned */
    OI_OP(fill, b, value=-3) OI_TO(fi)
    OI_OP(fill, c, value=65535) OI_TO(fu)
    OI_OP(fill, big, value=true) OI_TO(yes)
    OI_OP(tile, b, repeats=[2, 3]) OI_TO(tb)
    OI_OP(expand, b, shape=[2, 2, 1]) OI_TO(eb) /* a new middle dim */
    OI_OP(expand, c, shape=[2, 1, 3]) OI_TO(ec)
    OI_OP(is_neg, bn) OI_TO(below)
    OI_OP(top_k, b, k=2) OI_TO(best)       /* ties: the first of equal values first */
    OI_OP(top_k_indices, b, k=2) OI_TO(best_at)
    OI_RETURN()
  )
)

OI_GRAPH(logic_cast,
  OI_DYNAMIC( OI_VAR(x, f32[3, 4]) OI_VAR(k, i32[3, 4]) )
  OI_VOLATILE(
    OI_VAR(pos, bool[3, 4]) OI_VAR(low, bool[3, 4]) OI_VAR(both, bool[3, 4]) OI_VAR(either, bool[3, 4])
    OI_VAR(one, bool[3, 4]) OI_VAR(neither, bool[3, 4]) OI_VAR(picked, f32[3, 4]) OI_VAR(bits, i32[3, 4])
    OI_VAR(chosen, i32[3, 4]) OI_VAR(halves, f32[3, 4]) OI_VAR(near, i8[3, 4]) OI_VAR(big, f32[3, 4])
    OI_VAR(trunc8, i8[3, 4]) OI_VAR(floor8, u8[3, 4]) OI_VAR(lg, f32[3, 4]) OI_VAR(ceil32, i32[3, 4])
    OI_VAR(wide, f64[3, 4]) OI_VAR(back, f32[3, 4]) OI_VAR(kf, f32[3, 4]) OI_VAR(k64, i64[3, 4])
    OI_VAR(u, u16[3, 4]) OI_VAR(u64, u64[3, 4])
    OI_VAR(row_max, f32[3]) OI_VAR(row_min, f32[3]) OI_VAR(col_max, f32[4]) OI_VAR(col_min, f32[1, 4])
    OI_VAR(cube, f32[3, 2, 2]) OI_VAR(arg_cols, i64[4]) OI_VAR(arg_mid, i64[3, 1, 2])
  )
  OI_BLOCK(entry,
    OI_OP(gt, x, 0.0) OI_TO(pos)
    OI_OP(lt, x, -1.0) OI_TO(low)
    OI_OP(and, pos, low) OI_TO(both)         /* never: a check that and is not or */
    OI_OP(or, pos, low) OI_TO(either)
    OI_OP(xor, either, pos) OI_TO(one)       /* low */
    OI_OP(not, either) OI_TO(neither)
    OI_OP(where, either, x, 0.5) OI_TO(picked)
    OI_OP(and, k, 6) OI_TO(bits)
    OI_OP(not, bits) OI_TO(bits)
    OI_OP(xor, bits, k) OI_TO(bits)
    OI_OP(or, bits, 16) OI_TO(bits)
    OI_OP(where, neither, k, bits) OI_TO(chosen)
    OI_OP(mul, x, 2.0) OI_TO(halves)         /* k / 2: exact halves for rounding_mode="nearest" */
    OI_OP(floor, halves) OI_TO(halves)
    OI_OP(mul, halves, 0.5) OI_TO(halves)
    OI_OP(cast, halves, to=i8, rounding_mode="nearest") OI_TO(near)
    OI_OP(mul, x, 100.0) OI_TO(big)          /* past both ends of i8 and of u8 */
    OI_OP(cast, big, to=i8) OI_TO(trunc8)
    OI_OP(cast, big, to=u8, rounding_mode="floor") OI_TO(floor8)
    OI_OP(log, x) OI_TO(lg)                  /* NaN below 0 */
    OI_OP(cast, lg, to=i32, rounding_mode="ceil") OI_TO(ceil32)
    OI_OP(cast, x, to=f64) OI_TO(wide)
    OI_OP(mul, wide, 0.1) OI_TO(wide)        /* a product f32 would round */
    OI_OP(cast, wide, to=f32) OI_TO(back)
    OI_OP(cast, k, to=f32) OI_TO(kf)
    OI_OP(mul, k, -1000000) OI_TO(k)
    OI_OP(cast, k, to=i64) OI_TO(k64)        /* widening: exact */
    OI_OP(cast, big, to=u16) OI_TO(u)
    OI_OP(cast, u, to=u64) OI_TO(u64)
    OI_OP(pow, x, 1.5) OI_TO(picked)         /* NaN below 0 */
    OI_OP(pow, picked, x) OI_TO(picked)
    OI_OP(max_axis, lg, axes=[1]) OI_TO(row_max)
    OI_OP(min_axis, x, axes=[-1]) OI_TO(row_min)
    OI_OP(max_axis, lg, axes=[0]) OI_TO(col_max)
    OI_OP(min_axis, x, axes=[0], keepdims=true) OI_TO(col_min)
    OI_OP(argmax_axis, lg, axis=0) OI_TO(arg_cols)       /* along the first axis, NaN first in some */
    OI_OP(reshape, x, shape=[3, 2, 2]) OI_TO(cube)
    OI_OP(floor, cube) OI_TO(cube)                       /* ties */
    OI_OP(argmin_axis, cube, axis=1, keepdims=true, select_first=false) OI_TO(arg_mid)
    OI_RETURN()
  )
)

/* bool_ops: and, or, xor and not of bools the step computes, where over
 * f32 with them (a literal branch too): the logical ops of logic_cast on
 * both targets (the Vulkan target reads a bool as its byte). */
OI_GRAPH(bool_ops,
  OI_DYNAMIC( OI_VAR(x, f32[5, 7]) )
  OI_VOLATILE(
    OI_VAR(pos, bool[5, 7]) OI_VAR(low, bool[5, 7]) OI_VAR(both, bool[5, 7]) OI_VAR(either, bool[5, 7])
    OI_VAR(one, bool[5, 7]) OI_VAR(neither, bool[5, 7]) OI_VAR(picked, f32[5, 7]) OI_VAR(y, f32[5, 7])
  )
  OI_BLOCK(entry,
    OI_OP(gt, x, 0.5) OI_TO(pos)
    OI_OP(lt, x, -1.0) OI_TO(low)
    OI_OP(not, low) OI_TO(both)
    OI_OP(and, pos, both) OI_TO(both)        /* pos */
    OI_OP(or, pos, low) OI_TO(either)
    OI_OP(xor, either, pos) OI_TO(one)       /* low */
    OI_OP(not, either) OI_TO(neither)
    OI_OP(where, either, x, 0.25) OI_TO(picked)
    OI_OP(where, one, picked, x) OI_TO(y)
    OI_OP(mul, y, 3.0) OI_TO(y)
    OI_OP(where, neither, y, picked) OI_TO(y)
    OI_RETURN()
  )
)

/* literals: numbers written as op inputs (the plan's constants "0.5:f32",
 * "2.0:f32"), on both sides of an op and repeated; int_ops has integer ones.
 * Then clamp's bounds, which are settings; then round, of halves (away from
 * zero), of the float just below 0.5 (0) and of -0.4 (-0). */
OI_GRAPH(literals,
  OI_DYNAMIC( OI_VAR(x, f32[8]) )
  OI_VOLATILE(
    OI_VAR(y, f32[8]) OI_VAR(z, f32[8])
    OI_VAR(half, f32[8]) OI_VAR(rnd, f32[8]) OI_VAR(edge, f32[8]) OI_VAR(tenths, f32[8])
    OI_VAR(inv, f32[8]) OI_VAR(inf_at, bool[8]) OI_VAR(neg_at, bool[8]) OI_VAR(filled, f32[8])
    OI_VAR(tiled, f32[16]) OI_VAR(spread, f32[3, 8]) OI_VAR(tiled2, f32[6, 16])
    OI_VAR(cube, f32[2, 2, 2]) OI_VAR(col_max, i64[2, 2]) OI_VAR(mid_min, i64[2, 2]) OI_VAR(tie_first, i64[8])
    OI_VAR(tie_last, i64[16])
  )
  OI_BLOCK(entry,
    OI_OP(mul, x, 0.5) OI_TO(y)
    OI_OP(add, y, 1.25e-1) OI_TO(y)
    OI_OP(sub, 2.0, y) OI_TO(z)
    OI_OP(mul, z, 0.5) OI_TO(z)
    OI_OP(clamp, z, min=0.25, max=0.75) OI_TO(y)  /* settings, not inputs: both bounds, then one */
    OI_OP(clamp, z, min=0.3) OI_TO(z)
    OI_OP(mul, x, 4.0) OI_TO(half)
    OI_OP(floor, half) OI_TO(half)
    OI_OP(mul, half, 0.5) OI_TO(half)             /* halves and integers in [-4, 3.5] */
    OI_OP(round, half) OI_TO(rnd)
    OI_OP(mul, half, 0.0) OI_TO(edge)             /* +0 or -0 */
    OI_OP(add, edge, 0.49999997) OI_TO(edge)      /* floor(x + 0.5) would give 1 */
    OI_OP(round, edge) OI_TO(edge)
    OI_OP(mul, half, 0.8) OI_TO(tenths)           /* -0.5 gives -0.4: -0 */
    OI_OP(round, tenths) OI_TO(tenths)
    OI_OP(mul, half, 1e38) OI_TO(inv)             /* -inf below -3.4, finite up to 3 */
    OI_OP(is_inf, inv) OI_TO(inf_at)
    OI_OP(is_neg, tenths) OI_TO(neg_at)           /* the sign bit: -0 is negative */
    OI_OP(fill, x, value=2.5) OI_TO(filled)
    OI_OP(tile, half, repeats=[2]) OI_TO(tiled)
    OI_OP(expand, rnd, shape=[3, 8]) OI_TO(spread)  /* a new leading dim: stride 0 */
    OI_OP(tile, spread, repeats=[2, 2]) OI_TO(tiled2)
    OI_OP(reshape, x, shape=[2, 2, 2]) OI_TO(cube)  /* argmax/argmin along other than the last axis */
    OI_OP(argmax_axis, cube, axis=0) OI_TO(col_max)
    OI_OP(argmin_axis, cube, axis=1) OI_TO(mid_min)
    OI_OP(argmax_axis, spread, axis=0) OI_TO(tie_first)            /* equal rows: the first */
    OI_OP(argmin_axis, tiled2, axis=0, select_first=false) OI_TO(tie_last) /* the last */
    OI_RETURN()
  )
)

/* reduce_axes: sum_axis and mean_axis over axes that are not the last ones
 * (the middle one; the first, with keepdims; the first and the last
 * together) and over the last ones; then max and min of results with a
 * constant, libm's fmax and fmin: with --set x=nan the NaN shows in the sums
 * that read x[0, 0, 0] and not past the max or min of them. max_axis and
 * min_axis over the last axes (reduce.c's row path: floats ordered as
 * integers) and over others (its generic path: fmax and fmin in order), a
 * NaN ignored, and over rows of zeros of both signs (ties: the first of
 * equal operands is kept, scalar.h's OI_S_fmin/OI_S_fmax, and the tests
 * compare bits, so a +0 for a -0 fails). prod_axis over the last axis and
 * a middle one. */
OI_GRAPH(reduce_axes,
  OI_DYNAMIC( OI_VAR(x, f32[3, 4, 5]) )
  OI_VOLATILE(
    OI_VAR(mid, f32[3, 5]) OI_VAR(first, f32[1, 4, 5]) OI_VAR(ends, f32[4]) OI_VAR(rows, f32[3])
    OI_VAR(top, f32[3, 5]) OI_VAR(low, f32[4])
    OI_VAR(row_max, f32[3]) OI_VAR(row_min, f32[3, 1, 1]) OI_VAR(mid_max, f32[3, 5]) OI_VAR(ends_min, f32[4])
    OI_VAR(zeros, f32[3, 4, 5]) OI_VAR(zero_max, f32[3]) OI_VAR(zero_min, f32[4])
    OI_VAR(prod_last, f32[3, 4]) OI_VAR(prod_mid, f32[3, 5])
  )
  OI_BLOCK(entry,
    OI_OP(prod_axis, x, axes=[-1]) OI_TO(prod_last) /* in x's order, as reduce.c: the same bits */
    OI_OP(prod_axis, x, axes=[1]) OI_TO(prod_mid)
    OI_OP(max_axis, x, axes=[1, 2]) OI_TO(row_max)
    OI_OP(min_axis, x, axes=[1, 2], keepdims=true) OI_TO(row_min)
    OI_OP(max_axis, x, axes=[1]) OI_TO(mid_max)
    OI_OP(min_axis, x, axes=[0, 2]) OI_TO(ends_min)
    OI_OP(mul, x, 0.0) OI_TO(zeros)           /* -0 where x < 0, +0 elsewhere: ties */
    OI_OP(max_axis, zeros, axes=[1, 2]) OI_TO(zero_max)
    OI_OP(min_axis, zeros, axes=[0, 2]) OI_TO(zero_min)
    OI_OP(sum_axis, x, axes=[1]) OI_TO(mid)
    OI_OP(mean_axis, x, axes=[0], keepdims=true) OI_TO(first)
    OI_OP(sum_axis, x, axes=[0, -1]) OI_TO(ends)
    OI_OP(mean_axis, x, axes=[1, 2]) OI_TO(rows)
    OI_OP(max, mid, 0.25) OI_TO(top)
    OI_OP(min, ends, -0.5) OI_TO(low)
    OI_RETURN()
  )
)

OI_GRAPH(maybe_written,
  OI_DYNAMIC( OI_VAR(x, f32[4]) OI_VAR(x3, f32[3]) )
  OI_CONSTANT( OI_VAR(limit, f32, @init(100.0)) )
  OI_VOLATILE( OI_VAR(y, f32[4]) OI_VAR(total, f32) OI_VAR(z, f32[3]) )
  OI_BLOCK(entry,
    OI_ASSIGN(u, f32[4])
    OI_ASSIGN(t, f32[4])
    OI_ASSIGN(big, bool)
    OI_ASSIGN(pos, bool[3]) /* 3 bytes read before written: zeros in a word of their own (Vulkan) */
    OI_OP(mul, x, x) OI_TO(u)
    OI_OP(sum_axis, u, axes=[0]) OI_TO(total)
    OI_OP(gt, total, limit) OI_TO(big)
    OI_BRANCH(big, scale, keep)
    OI_OP(add, x, t) OI_TO(y)
    OI_OP(where, pos, x3, 0.5) OI_TO(z)
    OI_RETURN()
  )
  OI_BLOCK(scale,
    OI_OP(mul, x, x) OI_TO(t)
    OI_OP(gt, x3, 0.0) OI_TO(pos)
    OI_RETURN()
  )
  OI_BLOCK(keep,
    OI_RETURN()
  )
)

/* hard_act: hard_sigmoid (default and own alpha/beta) and hard_swish in
 * f32 and f64, chained with an add, as the emitted code fuses them; a value
 * overwritten in its kernel before anything reads it (its local is dead:
 * no unused-variable warning) and a reshape of t onto itself (no memcpy of
 * a buffer onto itself) */
OI_GRAPH(hard_act,
  OI_DYNAMIC( OI_VAR(x, f32[37]) OI_VAR(xd, f64[5]) )
  OI_VOLATILE(
    OI_VAR(s, f32[37]) OI_VAR(s2, f32[37]) OI_VAR(w, f32[37]) OI_VAR(wd, f64[5]) OI_VAR(sd, f64[5])
    OI_VAR(over, f32[37])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[37])
    OI_OP(hard_sigmoid, x) OI_TO(s)
    OI_OP(hard_sigmoid, x, alpha=0.3, beta=0.45) OI_TO(s2)
    OI_OP(hard_swish, x) OI_TO(w)
    OI_OP(add, w, s) OI_TO(w)
    OI_OP(hard_swish, xd) OI_TO(wd)
    OI_OP(hard_sigmoid, xd) OI_TO(sd)
    OI_OP(mul, x, x) OI_TO(t)
    OI_OP(add, x, s) OI_TO(t)
    OI_OP(reshape, t, shape=[37]) OI_TO(t)
    OI_OP(add, t, w) OI_TO(over)
    OI_RETURN()
  )
)

/* local_names: each kernel's operands named as its own C locals (render.c's
 * oi__sy_reserved gives such a parameter a '_'): layer_norm (rows summed into
 * sum and sq, in s8 and q8 lanes, mean, d, inv, the row pointers xr and yr,
 * the row r of lo .. hi of a task), softmax, the reductions over the last
 * axes (cols, v, o) and over others (acc, q, at), an elementwise chain (i). */
OI_GRAPH(local_names,
  OI_DYNAMIC( OI_VAR(sum, f32[8, 16]) OI_VAR(mean, f32[16]) OI_VAR(d, f32[16]) )
  OI_VOLATILE(
    OI_VAR(sq, f32[8, 16]) OI_VAR(s8, f32[8, 16]) OI_VAR(q8, f32[8]) OI_VAR(inv, f32[16]) OI_VAR(xr, f32[8])
    OI_VAR(yr, f32[16]) OI_VAR(i, f32[8, 16])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(r, f32[8, 16])
    OI_ASSIGN(lo, f32[8, 16])
    OI_OP(layer_norm, sum, mean, d, epsilon=1e-5) OI_TO(sq)
    OI_OP(softmax, sq) OI_TO(s8)
    OI_OP(sum_axis, s8, axes=[1]) OI_TO(q8)
    OI_OP(max_axis, sum, axes=[0]) OI_TO(inv)
    OI_OP(max_axis, sq, axes=[1]) OI_TO(xr)
    OI_OP(mean_axis, s8, axes=[0]) OI_TO(yr)
    OI_OP(mul, sum, sq) OI_TO(r)
    OI_OP(add, r, s8) OI_TO(lo)
    OI_OP(layer_norm, lo, inv, yr, epsilon=1e-5) OI_TO(i)
    OI_RETURN()
  )
)

int main(void) { return 0; }

OI_GRAPH(nn_ops,
  OI_DYNAMIC(
    OI_VAR(x, f32[8, 12]) OI_VAR(w, f32[12, 16]) OI_VAR(bias, f32[16]) OI_VAR(w2, f32[16, 40])
    OI_VAR(g, f32[16]) OI_VAR(be, f32[16]) OI_VAR(g2, f32[2, 8]) OI_VAR(be2, f32[2, 8])
    OI_VAR(sc, f32[8]) OI_VAR(bi, f32[8]) OI_VAR(mu, f32[8]) OI_VAR(sd, f32[8])
  )
  OI_VOLATILE(
    OI_VAR(small, f32[8, 16]) OI_VAR(big, f32[8, 40]) OI_VAR(ln, f32[8, 16]) OI_VAR(tr, f32[16, 8])
    OI_VAR(split, f32[1, 8, 2, 8]) OI_VAR(heads, f32[1, 2, 8, 8]) OI_VAR(att, f32[1, 2, 8, 8])
    OI_VAR(ln2, f32[1, 8, 2, 8]) OI_VAR(var8, f32[8]) OI_VAR(bn, f32[1, 8, 2, 8]) OI_VAR(gn, f32[1, 8, 2, 8])
    OI_VAR(inorm, f32[1, 8, 2, 8]) OI_VAR(ge, f32[8, 12]) OI_VAR(gt, f32[8, 12])
    OI_VAR(small_gt, f32[8, 16]) OI_VAR(small_hs, f32[8, 16]) OI_VAR(big_gt, f32[8, 40]) OI_VAR(big_hs, f32[8, 40])
  )
  OI_BLOCK(entry,
    OI_OP(gelu, x) OI_TO(ge)                       /* gelu on its own, not only as gemm's epilogue */
    OI_OP(gelu, x, approximate="tanh") OI_TO(gt)
    OI_OP(gemm, x, w, bias, activation="relu") OI_TO(small)
    OI_OP(gemm, small, w2, activation="gelu") OI_TO(big)
    /* the other activations, on the plain loop and on the micro-kernels */
    OI_OP(gemm, x, w, bias, activation="gelu_tanh") OI_TO(small_gt)
    OI_OP(gemm, x, w, activation="hard_swish") OI_TO(small_hs)
    OI_OP(gemm, small, w2, activation="gelu_tanh") OI_TO(big_gt)
    OI_OP(gemm, small, w2, activation="hard_swish") OI_TO(big_hs)
    OI_OP(layer_norm, small, g, be, epsilon=1e-5) OI_TO(ln)
    OI_OP(transpose, ln, perm=[1, 0]) OI_TO(tr)
    OI_OP(reshape, ln, shape=[1, 8, 2, 8]) OI_TO(split)
    OI_OP(transpose, split, perm=[0, 2, 1, 3]) OI_TO(heads)
    OI_OP(attention, heads, heads, heads) OI_TO(att)
    OI_OP(layer_norm, split, g2, be2, axis=-2) OI_TO(ln2)   /* over the last two dims: 16 elements */
    OI_OP(mul, sd, sd) OI_TO(var8)
    OI_OP(batch_norm, split, sc, bi, mu, var8, epsilon=0.01) OI_TO(bn) /* 8 channels of 2 x 8 */
    OI_OP(group_norm, split, sc, bi, num_groups=2) OI_TO(gn)
    OI_OP(group_norm, split, sc, bi, num_groups=8) OI_TO(inorm)       /* instance norm */
    OI_RETURN()
  )
)

OI_GRAPH(gather_attn,
  OI_DYNAMIC(
    OI_VAR(table, f32[10, 3]) OI_VAR(idx, i32[2, 3]) OI_VAR(deep, f32[2, 6, 3]) OI_VAR(ints, i32[7])
    OI_VAR(idx64, i64[4]) OI_VAR(flags, bool[5, 2]) OI_VAR(idx8, u8[3]) OI_VAR(wide, f64[2, 5])
    OI_VAR(q, f32[2, 2, 4, 8]) OI_VAR(kv, f32[2, 2, 4, 8]) OI_VAR(q6, f32[2, 2, 6, 8])
    OI_VAR(keys, bool[2, 1, 1, 4]) OI_VAR(add_mask, f32[4, 4]) OI_VAR(head_mask, f32[1, 2, 1, 4])
    OI_VAR(xs, f32[512, 384]) OI_VAR(h16, f16[5, 2])
  )
  OI_CONSTANT(
    OI_VAR(five, i32, @init(5)) OI_VAR(Wsq, f32[384, 384], @ref("Wsq")) OI_VAR(bsq, f32[384], @ref("bsq"))
    OI_VAR(emb16, f16[6, 4], @ref("emb16")) OI_VAR(third, f16[5], @init(0.333))
  )
  OI_VOLATILE(
    OI_VAR(rows, f32[2, 3, 3]) OI_VAR(back, i32[2, 3]) OI_VAR(mid, f32[2, 2, 3, 3]) OI_VAR(picked, i32[4])
    OI_VAR(fl, bool[3, 2]) OI_VAR(cols, f64[2, 3])
    OI_VAR(a_keys, f32[2, 2, 4, 8]) OI_VAR(a_add, f32[2, 2, 4, 8]) OI_VAR(a_causal, f32[2, 2, 4, 8])
    OI_VAR(a_short, f32[2, 2, 6, 8]) OI_VAR(rows16, f16[2, 3, 4]) OI_VAR(cols16, f16[2, 3]) OI_VAR(t16, f16[3, 2])
    OI_VAR(pick16, f16[4])
  )
  OI_BLOCK(entry,
    OI_OP(gather, table, idx) OI_TO(rows)
    OI_OP(sub, idx, five) OI_TO(back)
    OI_OP(gather, deep, back, axis=1) OI_TO(mid)
    OI_OP(gather, ints, idx64, axis=-1) OI_TO(picked)
    OI_OP(gather, flags, idx8) OI_TO(fl)
    OI_OP(gather, wide, idx8, axis=1) OI_TO(cols)
    OI_OP(attention, q, kv, kv, keys) OI_TO(a_keys)
    OI_OP(attention, q, kv, kv, add_mask, scale=0.5) OI_TO(a_add)
    OI_OP(attention, q, kv, kv, causal=true) OI_TO(a_causal)
    OI_OP(attention, q6, kv, kv, head_mask, causal=true) OI_TO(a_short)
    OI_OP(gemm, xs, Wsq, bsq) OI_TO(xs)
    OI_OP(gather, emb16, idx) OI_TO(rows16)
    OI_OP(gather, h16, idx8, axis=0) OI_TO(t16)
    OI_OP(transpose, t16) OI_TO(cols16)
    OI_OP(gather, third, idx64, axis=0) OI_TO(pick16)
    OI_RETURN()
  )
)

OI_GRAPH(conv_ops,
  OI_DYNAMIC(
    OI_VAR(x1, f32[1, 2, 5, 5]) OI_VAR(w1, f32[3, 2, 3, 3]) OI_VAR(b1, f32[3])
    OI_VAR(x2, f32[2, 4, 9, 10]) OI_VAR(w2, f32[6, 2, 3, 3]) OI_VAR(b2, f32[6])
    OI_VAR(x3, f32[1, 32, 6]) OI_VAR(w3, f32[23, 32, 3])
    OI_VAR(v, f32[3, 7]) OI_VAR(wd, f32[8, 1, 3, 3]) OI_VAR(bd, f32[8])
    OI_VAR(wp, f32[48, 4, 1, 1]) OI_VAR(bp, f32[48])
  )
  OI_VOLATILE(
    OI_VAR(y1, f32[1, 3, 3, 3]) OI_VAR(y2, f32[2, 6, 9, 10]) OI_VAR(y3, f32[1, 23, 3])
    OI_VAR(pr, f32[5, 11]) OI_VAR(pc, f32[4, 6]) OI_VAR(pe, f32[3, 9]) OI_VAR(rev, f32[3, 3])
    OI_VAR(cat, f32[3, 19]) OI_VAR(mid, f32[3, 3]) OI_VAR(sq, f32[1, 3, 7]) OI_VAR(us, f32[3, 7])
    OI_VAR(dw, f32[2, 8, 5, 10]) OI_VAR(mp, f32[2, 4, 5, 6]) OI_VAR(gap, f32[2, 8, 1, 1])
    OI_VAR(ap, f32[2, 4, 5, 5]) OI_VAR(ap2, f32[1, 2, 3, 3]) OI_VAR(dw2, f32[2, 8, 8, 6])
    OI_VAR(yh, f32[2, 6, 9, 10]) OI_VAR(yp, f32[2, 48, 9, 10])
    OI_VAR(y_hs, f32[2, 6, 9, 10]) OI_VAR(y_gt, f32[1, 23, 6]) OI_VAR(y_ge, f32[1, 3, 5, 5]) OI_VAR(dw_hs, f32[2, 8, 9, 10])
  )
  OI_BLOCK(entry,
    OI_OP(conv2d, x1, w1, b1, pads=[1, 1, 1, 1], strides=[2, 2], activation="relu") OI_TO(y1)
    OI_OP(conv2d, x2, w2, b2, pads=[2, 1, 2, 1], dilations=[2, 1], group=2) OI_TO(y2)
    OI_OP(mul, y2, y2) OI_TO(y2)
    OI_OP(relu, y2) OI_TO(y2)
    /* epilogues in elementwise.c's lanes: relu with a slope and both bounds, then hard_swish; a
     * 1 x 1 conv (its planes packed as they are), hard_sigmoid, then relu with an upper bound */
    OI_OP(conv2d, x2, w2, b2, pads=[1, 1, 1, 1], group=2) OI_TO(yh)
    OI_OP(relu, yh, negative_slope=0.25, clamp_min=-0.5, clamp_max=0.75) OI_TO(yh)
    OI_OP(hard_swish, yh) OI_TO(yh)
    OI_OP(conv2d, x2, wp, bp) OI_TO(yp)
    OI_OP(hard_sigmoid, yp, alpha=0.25, beta=0.375) OI_TO(yp)
    OI_OP(relu, yp, clamp_max=0.625) OI_TO(yp)
    OI_OP(conv1d, x3, w3, pads=[1, 1], strides=[2]) OI_TO(y3)
    /* activation= other than relu on each path: the micro-kernels, the dot kernels, the plain
     * loop, the depthwise one */
    OI_OP(conv2d, x2, w2, b2, pads=[1, 1, 1, 1], group=2, activation="hard_swish") OI_TO(y_hs)
    OI_OP(conv1d, x3, w3, pads=[1, 1], activation="gelu_tanh") OI_TO(y_gt)
    OI_OP(conv2d, x1, w1, b1, pads=[1, 1, 1, 1], activation="gelu") OI_TO(y_ge)
    OI_OP(conv2d, x2, wd, bd, pads=[1, 1, 1, 1], group=4, activation="hard_swish") OI_TO(dw_hs)
    OI_OP(pad, v, pads=[1, 2, 1, 2], mode="reflect") OI_TO(pr)
    OI_OP(pad, v, pads=[1, -1, 0, 0], value=1.5) OI_TO(pc)
    OI_OP(pad, v, pads=[0, 2], axes=[1], mode="edge") OI_TO(pe)
    OI_OP(slice, v, starts=[-1, 6], ends=[-100, 0], axes=[0, 1], steps=[-1, -2]) OI_TO(rev)
    OI_OP(concat, pe, v, rev, axis=1) OI_TO(cat)
    OI_OP(split, v, axis=1, sizes=[2, 3, 2], index=1) OI_TO(mid)
    OI_OP(unsqueeze, v, axes=[0]) OI_TO(sq)
    OI_OP(squeeze, sq, axes=[0]) OI_TO(us)
    OI_OP(conv2d, x2, wd, bd, pads=[1, 1, 1, 1], strides=[2, 1], group=4, activation="relu") OI_TO(dw)
    /* depthwise with a stride, dilation and uneven pads along the row: each tap's range of columns */
    OI_OP(conv2d, x2, wd, bd, pads=[0, 3, 1, 2], strides=[1, 2], dilations=[1, 2], group=4) OI_TO(dw2)
    OI_OP(max_pool2d, x2, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1) OI_TO(mp)
    OI_OP(global_avg_pool, dw) OI_TO(gap)
    OI_OP(avg_pool2d, x2, kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], count_include_pad=1) OI_TO(ap)
    OI_OP(avg_pool2d, x1, kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1) OI_TO(ap2)
    OI_RETURN()
  )
)

/* gather_attn's model: Wsq [384, 384] and bsq [384], seeded; emb16, an
 * f16 [6, 4] table of halves 1 + i/1024 (their bits). */
oi_model *gather_attn_model(uint8_t **bytes);
oi_model *gather_attn_model(uint8_t **bytes) {
    enum { N = 384 };
    float *v = (float *)malloc(N * N * sizeof *v);
    oi_writer *w = oi_writer_new();
    uint32_t state = 99;
    for (int i = 0; v && i < N * N; i++) {
        state = state * 1664525u + 1013904223u;
        v[i] = ((float)(state >> 8) / 16777216.0f - 0.5f) / 8.0f;
    }
    uint64_t dims[2] = {N, N};
    int bad = !v || !w || oi_writer_add_tensor(w, "Wsq", OI_DTYPE_F32, 2, dims, v, NULL) != OI_OK ||
              oi_writer_add_tensor(w, "bsq", OI_DTYPE_F32, 1, dims + 1, v, NULL) != OI_OK;
    uint16_t halves[24];
    for (int i = 0; i < 24; i++)
        halves[i] = (uint16_t)(0x3C00 + i);
    uint64_t table[2] = {6, 4};
    bad = bad || oi_writer_add_tensor(w, "emb16", OI_DTYPE_F16, 2, table, halves, NULL) != OI_OK;
    size_t size = 0;
    bad = bad || oi_writer_to_memory(w, 2, bytes, &size) != OI_OK;
    oi_writer_free(w);
    free(v);
    return bad ? NULL : oi_model_open_memory(*bytes, size);
}

OI_GRAPH(skinny_prefix,
  OI_DYNAMIC( OI_VAR(x, f32[B, D]) )
  OI_VOLATILE( OI_VAR(W(l), f32[D, D], @pattern("sk.w.{l}")) OI_VAR(h, f32[B, D]) )
  OI_BLOCK(entry,
    OI_ASSIGN(u, f32[B, D])
    OI_TRANSFER(x, h)
    OI_LOOP(layers, l, 0..L,
      OI_OP(matmul, h, W[l]) OI_TO(u)
      OI_OP(tanh, u) OI_TO(u)
      OI_OP(add, h, u) OI_TO(h)
    )
    OI_RETURN()
  )
)

OI_GRAPH(llm_ops,
  OI_DYNAMIC(
    OI_VAR(h, f32[2, 64]) OI_VAR(g, f32[64]) OI_VAR(h12, f32[3, 12]) OI_VAR(g12, f32[12])
    OI_VAR(x3, f32[1, 3, 8]) OI_VAR(xb, f32[2, 3, 4, 6]) OI_VAR(p4, i64[4]) OI_VAR(pb, i32[2, 4])
    OI_VAR(scores, f32[3, 10]) OI_VAR(ints, i32[2, 5])
  )
  OI_PERSISTENT( OI_VAR(step, i32, @init(0)) )
  OI_VOLATILE(
    OI_VAR(hn, f32[2, 64]) OI_VAR(hn12, f32[3, 12]) OI_VAR(r3, f32[1, 3, 8]) OI_VAR(rh, f32[2, 3, 4, 6])
    OI_VAR(ri, f32[2, 3, 4, 6]) OI_VAR(fl, f32[3, 10]) OI_VAR(am, i64[3]) OI_VAR(am_last, i64[3])
    OI_VAR(am_keep, i64[3, 1]) OI_VAR(am_int, i64[2]) OI_VAR(an, i64[3]) OI_VAR(an_last, i64[3])
    OI_VAR(an_int, i64[2])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(pos0, i32)
    OI_ASSIGN(pos, i32[1])
    OI_CACHE_READ(step, pos0)
    OI_OP(reshape, pos0, shape=[1]) OI_TO(pos)
    OI_OP(rms_norm, h, g, epsilon=1e-5) OI_TO(hn)
    OI_OP(rms_norm, h12, g12, epsilon=0.01) OI_TO(hn12)
    OI_OP(reshape, x3, shape=[1, 3, 8]) OI_TO(r3)
    OI_OP(rope, r3, pos, theta=100000.0, interleaved=true, seq_axis=0) OI_TO(r3)
    OI_OP(rope, xb, p4, rotary_dim=4) OI_TO(rh)
    OI_OP(rope, xb, pb, interleaved=true) OI_TO(ri)
    OI_OP(floor, scores) OI_TO(fl)
    OI_OP(argmax_axis, fl, axis=1) OI_TO(am)
    OI_OP(argmax_axis, fl, axis=-1, select_first=false) OI_TO(am_last)
    OI_OP(argmax_axis, scores, axis=1, keepdims=true) OI_TO(am_keep)
    OI_OP(argmax_axis, ints, axis=1) OI_TO(am_int)
    OI_OP(argmin_axis, fl, axis=1) OI_TO(an)
    OI_OP(argmin_axis, fl, axis=-1, select_first=false) OI_TO(an_last)
    OI_OP(argmin_axis, ints, axis=1) OI_TO(an_int)
    OI_CACHE_INCREMENT(step)
    OI_RETURN()
  )
)

OI_GRAPH(quant_ops,
  OI_DYNAMIC( OI_VAR(x, f32[1, 64]) OI_VAR(xm, f32[5, 96]) OI_VAR(x3, f32[3, 96]) OI_VAR(tok, i32[2]) )
  OI_CONSTANT(
    OI_VAR(W41, u8[48, 40], @ref("w41")) OI_VAR(W40, u8[40, 36], @ref("w40")) OI_VAR(W80, u8[600, 102], @ref("w80"))
    OI_VAR(E80, u8[16, 68], @ref("emb80"))
    OI_VAR(Wl(l), u8[64, 40], @pattern("l{l}.w"))
  )
  OI_VOLATILE(
    OI_VAR(y41, f32[1, 48]) OI_VAR(y40, f32[1, 40]) OI_VAR(y80, f32[5, 600]) OI_VAR(h, f32[1, 64])
    OI_VAR(f41, f32[1, 48]) OI_VAR(f40, f32[1, 40]) OI_VAR(f80, f32[3, 600])
    OI_VAR(e80, f32[2, 64]) OI_VAR(e41, f32[48, 64]) OI_VAR(e40, f32[40, 64])
  )
  OI_BLOCK(entry,
    OI_OP(matmul_q4, x, W41, format="q4_1", activations="q8") OI_TO(y41)
    OI_OP(matmul_q4, x, W40, format="q4_0", activations="q8") OI_TO(y40)
    OI_OP(matmul_q4, xm, W80, format="q8_0", activations="q8") OI_TO(y80)
    OI_OP(matmul_q4, x, W41, format="q4_1") OI_TO(f41)
    OI_OP(matmul_q4, x, W40, format="q4_0", activations="f32") OI_TO(f40)
    OI_OP(matmul_q4, x3, W80, format="q8_0") OI_TO(f80)
    OI_ASSIGN(rows80, u8[2, 68])
    OI_OP(gather, E80, tok) OI_TO(rows80)
    OI_OP(dequantize, rows80, format="q8_0") OI_TO(e80)
    OI_OP(dequantize, W41, format="q4_1") OI_TO(e41)
    OI_OP(dequantize, W40, format="q4_0") OI_TO(e40)
    OI_OP(add, x, x) OI_TO(h)
    OI_LOOP(layers, l, 0..3,
      OI_ASSIGN(t, f32[1, 64])
      OI_OP(matmul_q4, h, Wl[l], format="q4_1", activations="q8") OI_TO(t)
      OI_OP(add, h, t) OI_TO(h)
    )
    OI_RETURN()
  )
)

/* skinny_prefix's model: B = 2, D = 70, L = 3 seeded entries sk.w.0..2. */
oi_model *skinny_model(uint8_t **bytes);
oi_model *skinny_model(uint8_t **bytes) {
    enum { B = 2, D = 70, L = 3 };
    static float m[D * D];
    uint64_t dims[2] = {D, D};
    uint32_t state = 99;
    oi_writer *w = oi_writer_new();
    if (!w)
        return NULL;
    oi_writer_add_sizevar(w, "B", B);
    oi_writer_add_sizevar(w, "D", D);
    oi_writer_add_sizevar(w, "L", L);
    for (int l = 0; l < L; l++) {
        char name[32];
        for (int i = 0; i < D * D; i++) {
            state = state * 1664525u + 1013904223u;
            m[i] = ((float)(state >> 8) / 16777216.0f - 0.5f) * 0.3f;
        }
        snprintf(name, sizeof name, "sk.w.%d", l);
        oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, dims, m, NULL);
    }
    size_t size = 0;
    oi_status st = oi_writer_to_memory(w, 2, bytes, &size);
    oi_writer_free(w);
    return st == OI_OK ? oi_model_open_memory(*bytes, size) : NULL;
}

/* Weight rows of ggml blocks with seeded bytes: each block's f16 scale
 * (and q4_1's minimum) a small finite half, the quants any byte. */
static void quant_rows(uint8_t *w, int rows, int blocks, int block_bytes, int halves, uint32_t *state) {
    for (int b = 0; b < rows * blocks; b++) {
        uint8_t *blk = w + b * block_bytes;
        for (int j = 0; j < block_bytes; j++) {
            *state = *state * 1664525u + 1013904223u;
            blk[j] = (uint8_t)(*state >> 24);
        }
        for (int h = 0; h < halves; h++) { /* 2^-9 .. 2^-6 with either sign: exponent 6..9 */
            blk[2 * h + 1] = (uint8_t)((blk[2 * h + 1] & 0x83) | 0x18);
        }
    }
}

oi_model *quant_model(uint8_t **bytes);
oi_model *quant_model(uint8_t **bytes) {
    static uint8_t w41[48 * 40], w40[40 * 36], w80[600 * 102], wl[3][64 * 40], e80[16 * 68];
    uint32_t state = 2024;
    quant_rows(w41, 48, 2, 20, 2, &state);
    quant_rows(w40, 40, 2, 18, 1, &state);
    quant_rows(w80, 600, 3, 34, 1, &state);
    oi_writer *w = oi_writer_new();
    uint64_t d41[2] = {48, 40}, d40[2] = {40, 36}, d80[2] = {600, 102}, dl[2] = {64, 40};
    int bad = !w || oi_writer_add_tensor(w, "w41", OI_DTYPE_U8, 2, d41, w41, NULL) != OI_OK ||
              oi_writer_add_tensor(w, "w40", OI_DTYPE_U8, 2, d40, w40, NULL) != OI_OK ||
              oi_writer_add_tensor(w, "w80", OI_DTYPE_U8, 2, d80, w80, NULL) != OI_OK;
    for (int l = 0; l < 3 && !bad; l++) {
        char name[16];
        snprintf(name, sizeof name, "l%d.w", l);
        quant_rows(wl[l], 64, 2, 20, 2, &state);
        bad = oi_writer_add_tensor(w, name, OI_DTYPE_U8, 2, dl, wl[l], NULL) != OI_OK;
    }
    uint64_t de[2] = {16, 68}; /* an embedding table in q8_0: rows of 2 blocks */
    quant_rows(e80, 16, 2, 34, 1, &state);
    bad = bad || oi_writer_add_tensor(w, "emb80", OI_DTYPE_U8, 2, de, e80, NULL) != OI_OK;
    size_t size = 0;
    bad = bad || oi_writer_to_memory(w, 2, bytes, &size) != OI_OK;
    oi_writer_free(w);
    return bad ? NULL : oi_model_open_memory(*bytes, size);
}

OI_GRAPH(kv_gqa,
  OI_DYNAMIC( OI_VAR(q, f32[1, 32]) OI_VAR(kv, f32[1, 2, 8]) OI_VAR(vv, f32[1, 2, 8]) OI_VAR(qs, f32[2, 6, 3, 8])
              OI_VAR(ks, f32[2, 2, 5, 8]) )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))
    OI_VAR(tick, f32, @init(0.5))
    OI_VAR(K(l, t), f32[1, 2, 8], @table, @fixed(t=16))
    OI_VAR(V(l, t), f32[1, 2, 8], @table, @fixed(t=16))
  )
  OI_VOLATILE( OI_VAR(y, f32[1, 32]) OI_VAR(static_att, f32[2, 6, 3, 8]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, 32])
    OI_ASSIGN(now, f32)
    OI_CACHE_READ(tick, now)
    OI_OP(add, q, q) OI_TO(h)
    OI_LOOP(layers, l, 0..2,
      OI_ASSIGN(k3, f32[1, 2, 8])
      OI_ASSIGN(v3, f32[1, 2, 8])
      OI_ASSIGN(qh, f32[1, 4, 1, 8])
      OI_ASSIGN(keys, f32[?, 1, 2, 8])
      OI_ASSIGN(vals, f32[?, 1, 2, 8])
      OI_ASSIGN(kh, f32[1, 2, ?, 8])
      OI_ASSIGN(vh, f32[1, 2, ?, 8])
      OI_ASSIGN(att, f32[1, 4, 1, 8])
      OI_ASSIGN(o, f32[1, 32])
      OI_OP(mul, kv, now) OI_TO(k3)     /* this position's key: kv x (0.5 + step) */
      OI_OP(sub, vv, now) OI_TO(v3)
      OI_CACHE_WRITE(k3, K[l, step])
      OI_CACHE_WRITE(v3, V[l, step])
      OI_CACHE_READ(K[l, 0..step+1], keys)
      OI_CACHE_READ(V[l, 0..step+1], vals)
      OI_OP(transpose, keys, perm=[1, 2, 0, 3]) OI_TO(kh)
      OI_OP(transpose, vals, perm=[1, 2, 0, 3]) OI_TO(vh)
      OI_OP(reshape, h, shape=[1, 4, 1, 8]) OI_TO(qh)
      OI_OP(attention, qh, kh, vh) OI_TO(att)
      OI_OP(reshape, att, shape=[1, -1]) OI_TO(o)
      OI_OP(add, h, o) OI_TO(h)
    )
    OI_CACHE_INCREMENT(step)
    OI_CACHE_INCREMENT(tick)
    OI_OP(add, h, q) OI_TO(y)
    OI_OP(attention, qs, ks, ks, scale=0.3) OI_TO(static_att)
    OI_RETURN()
  )
)

/* gpu_branch: branches on variables, nested: on `ok` (is_finite, computed
 * in the step) and, inside its first block, on the host's bool `flag`. Each
 * path leaves y at a value no other gives (3 h, (2 h) w, or h squared with 1
 * for NaN), and only the finite paths write z: a kernel of a block not taken
 * that ran anyway would show (the matmul too: the Vulkan target prints its
 * main apart from the other kernels'). */
OI_GRAPH(gpu_branch,
  OI_DYNAMIC( OI_VAR(x, f32[2, 8]) OI_VAR(flag, bool) OI_VAR(w, f32[8, 8]) )
  OI_VOLATILE( OI_VAR(y, f32[2, 8]) OI_VAR(z, f32[2, 8]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[2, 8])
    OI_ASSIGN(ok, bool)
    OI_OP(mul, x, x) OI_TO(h)
    OI_OP(is_finite, h) OI_TO(ok)
    OI_BRANCH(ok, finite, broken)
    OI_RETURN()
  )
  OI_BLOCK(finite,
    OI_OP(add, h, h) OI_TO(z)
    OI_BRANCH(flag, up, down)
    OI_RETURN()
  )
  OI_BLOCK(up,
    OI_OP(add, z, h) OI_TO(y)
    OI_RETURN()
  )
  OI_BLOCK(down,
    OI_OP(matmul, z, w) OI_TO(y)
    OI_RETURN()
  )
  OI_BLOCK(broken,
    OI_OP(fill_nan_like, h, value=-1.0) OI_TO(y)
    OI_OP(mul, y, y) OI_TO(y)
    OI_RETURN()
  )
)

/* resets: cache_reset of a counter (@init 3, stepped after: 4 after every
 * step, not 3 + steps), of an f32 variable read and accumulated before it
 * (y = 1 + x each step, not a running sum) and of a whole table whose entry
 * 1 is read before and written after the reset of the step before (0.5,
 * @init, not last step's y). */
OI_GRAPH(resets,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(3))
    OI_VAR(acc, f32[4], @init(1.0))
    OI_VAR(T(i), f32[4], @table, @fixed(i=4), @init(0.5))
  )
  OI_VOLATILE( OI_VAR(y, f32[4]) OI_VAR(seen, f32[4]) OI_VAR(count, i32) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[4])
    OI_CACHE_READ(acc, a)
    OI_OP(add, a, x) OI_TO(y)
    OI_CACHE_WRITE(y, acc)
    OI_CACHE_RESET(acc)
    OI_CACHE_READ(T[1], seen)
    OI_CACHE_RESET(T)
    OI_CACHE_WRITE(y, T[1])
    OI_CACHE_RESET(n)
    OI_CACHE_INCREMENT(n)
    OI_CACHE_READ(n, count)
    OI_RETURN()
  )
)

/* auto_rows: @auto_dim variables, whose leading dim grows by their index.
 * M (bounded by @fixed) is read at n = 1, 2, ... rows past its two, gains
 * x and is written back: its old rows accumulate, each new one starts as
 * @init. C(l, r), a table of them per layer, grows by 2 n (a bound the
 * synthesizer reaches from the expression's names: none here, so @fixed);
 * its entry 1 is reset at the end of every step, so it starts again from
 * zeros while entry 0 accumulates. The sums over the rows are what the
 * test fetches, with the tables. U, a plain table, has its entry 2 written
 * and reset every step and entry 0 read: its size is 1 after a step (the
 * simulator counts the entries left after a reset of one). `grown`, M
 * read last and never used, is what the step leaves in the arena with its
 * leading dim known at run time (its getter's count says how many rows). */
OI_GRAPH(auto_rows,
  OI_DYNAMIC( OI_VAR(x, f32[3]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(M(r), f32[2, 3], @auto_dim(r), @fixed(r=8), @init(0.5))
    OI_VAR(C(l, r), f32[1, 3], @table, @auto_dim(r), @fixed(r=16))
    OI_VAR(U(i), f32[3], @table, @fixed(i=4), @init(0.25))
  )
  OI_VOLATILE( OI_VAR(total, f32[1, 3]) OI_VAR(first, f32[1, 3]) OI_VAR(second, f32[1, 3]) OI_VAR(u, f32[3]) )
  OI_BLOCK(entry,
    OI_ASSIGN(m, f32[?, 3])
    OI_ASSIGN(c, f32[?, 3])
    OI_CACHE_WRITE(x, U[2])
    OI_CACHE_READ(U[0], u)
    OI_CACHE_RESET(U[2])
    OI_CACHE_INCREMENT(n)
    OI_CACHE_READ(M[n], m)
    OI_OP(add, m, x) OI_TO(m)
    OI_CACHE_WRITE(m, M[n])
    OI_OP(sum_axis, m, axes=[0], keepdims=true) OI_TO(total)
    OI_LOOP(layers, l, 0..2,
      OI_CACHE_READ(C[l, 2*n], c)
      OI_OP(add, c, x) OI_TO(c)
      OI_CACHE_WRITE(c, C[l, 2*n])
    )
    OI_CACHE_READ(C[0], c)
    OI_OP(sum_axis, c, axes=[0], keepdims=true) OI_TO(first)
    OI_CACHE_READ(C[1], c)
    OI_OP(sum_axis, c, axes=[0], keepdims=true) OI_TO(second)
    OI_CACHE_RESET(C[1])
    OI_ASSIGN(grown, f32[?, 3])
    OI_CACHE_READ(M, grown)
    OI_RETURN()
  )
)

/* attn_twice: two attentions in a row, q, k and v of each split into heads
 * off a [tokens, width] value by reshape + transpose and the result joined
 * back the same way: views the C target folds into the attention's
 * indexing. Folding the second must step over the views the first took. */
OI_GRAPH(attn_twice,
  OI_DYNAMIC( OI_VAR(xq, f32[6, 8]) OI_VAR(xk, f32[6, 8]) OI_VAR(xv, f32[6, 8]) )
  OI_VOLATILE( OI_VAR(y, f32[6, 8]) )
  OI_BLOCK(entry,
    OI_ASSIGN(s1, f32[1, 6, 2, 4]) OI_ASSIGN(h1, f32[1, 2, 6, 4])
    OI_ASSIGN(s2, f32[1, 6, 2, 4]) OI_ASSIGN(h2, f32[1, 2, 6, 4])
    OI_ASSIGN(s3, f32[1, 6, 2, 4]) OI_ASSIGN(h3, f32[1, 2, 6, 4])
    OI_ASSIGN(s4, f32[1, 6, 2, 4]) OI_ASSIGN(h4, f32[1, 2, 6, 4])
    OI_ASSIGN(s5, f32[1, 6, 2, 4]) OI_ASSIGN(h5, f32[1, 2, 6, 4])
    OI_ASSIGN(s6, f32[1, 6, 2, 4]) OI_ASSIGN(h6, f32[1, 2, 6, 4])
    OI_ASSIGN(a1, f32[1, 2, 6, 4]) OI_ASSIGN(j1, f32[1, 6, 2, 4]) OI_ASSIGN(o1, f32[6, 8])
    OI_ASSIGN(a2, f32[1, 2, 6, 4]) OI_ASSIGN(j2, f32[1, 6, 2, 4])
    OI_OP(reshape, xq, shape=[1, 6, 2, 4]) OI_TO(s1)
    OI_OP(transpose, s1, perm=[0, 2, 1, 3]) OI_TO(h1)
    OI_OP(reshape, xk, shape=[1, 6, 2, 4]) OI_TO(s2)
    OI_OP(transpose, s2, perm=[0, 2, 1, 3]) OI_TO(h2)
    OI_OP(reshape, xv, shape=[1, 6, 2, 4]) OI_TO(s3)
    OI_OP(transpose, s3, perm=[0, 2, 1, 3]) OI_TO(h3)
    OI_OP(attention, h1, h2, h3) OI_TO(a1)
    OI_OP(transpose, a1, perm=[0, 2, 1, 3]) OI_TO(j1)
    OI_OP(reshape, j1, shape=[6, 8]) OI_TO(o1)
    OI_OP(reshape, o1, shape=[1, 6, 2, 4]) OI_TO(s4)
    OI_OP(transpose, s4, perm=[0, 2, 1, 3]) OI_TO(h4)
    OI_OP(reshape, xk, shape=[1, 6, 2, 4]) OI_TO(s5)
    OI_OP(transpose, s5, perm=[0, 2, 1, 3]) OI_TO(h5)
    OI_OP(reshape, xv, shape=[1, 6, 2, 4]) OI_TO(s6)
    OI_OP(transpose, s6, perm=[0, 2, 1, 3]) OI_TO(h6)
    OI_OP(attention, h4, h5, h6, causal=true) OI_TO(a2)
    OI_OP(transpose, a2, perm=[0, 2, 1, 3]) OI_TO(j2)
    OI_OP(reshape, j2, shape=[6, 8]) OI_TO(y)
    OI_RETURN()
  )
)

/* attn_masks: attention with a bool key mask made on the device (gt, then a
 * reshape: MiniLM's padding mask), an f32 mask per (query, key), one per
 * head and key, and causal limits with fewer queries than keys (bottom-right
 * aligned), on the Vulkan target's plain and tiled kernels alike */
OI_GRAPH(attn_masks,
  OI_DYNAMIC(
    OI_VAR(q, f32[2, 3, 5, 16]) OI_VAR(kv, f32[2, 3, 7, 16]) OI_VAR(lens, f32[2, 7, 1])
    OI_VAR(pair_mask, f32[5, 7]) OI_VAR(head_mask, f32[1, 3, 1, 7])
  )
  OI_CONSTANT( OI_VAR(half, f32, @init(0.5)) )
  OI_VOLATILE(
    OI_VAR(a_keys, f32[2, 3, 5, 16]) OI_VAR(a_pair, f32[2, 3, 5, 16]) OI_VAR(a_causal, f32[2, 3, 5, 16])
    OI_VAR(a_both, f32[2, 3, 5, 16])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(keep, bool[2, 7, 1])
    OI_ASSIGN(keep_keys, bool[2, 1, 1, 7])
    OI_OP(gt, lens, half) OI_TO(keep)
    OI_OP(reshape, keep, shape=[0, 1, 1, -1]) OI_TO(keep_keys)
    OI_OP(attention, q, kv, kv, keep_keys) OI_TO(a_keys)
    OI_OP(attention, q, kv, kv, pair_mask, scale=0.25) OI_TO(a_pair)
    OI_OP(attention, q, kv, kv, causal=true) OI_TO(a_causal)
    OI_OP(attention, q, kv, kv, head_mask, causal=true) OI_TO(a_both)
    OI_RETURN()
  )
)

/* in_place_mm: matmuls writing their own A (MiniLM's `gemm(o, Wo, bo) -> o`),
 * one split along K (128 x 384 x 384) and one small: the Vulkan target
 * stores the result into a scratch region and copies it into place. */
OI_GRAPH(in_place_mm,
  OI_DYNAMIC( OI_VAR(x, f32[128, 384]) OI_VAR(W, f32[384, 384]) OI_VAR(b, f32[384]) OI_VAR(s, f32[8, 16])
              OI_VAR(V, f32[16, 16]) )
  OI_CONSTANT( OI_VAR(scale, f32, @init(0.01)) )
  OI_VOLATILE( OI_VAR(y, f32[128, 384]) OI_VAR(t, f32[8, 16]) )
  OI_BLOCK(entry,
    OI_OP(mul, x, scale) OI_TO(y)     /* results near 1: the sums' order moves them by ~1e-7 */
    OI_OP(gemm, y, W, b) OI_TO(y)
    OI_OP(add, s, s) OI_TO(t)
    OI_OP(matmul, t, V) OI_TO(t)
    OI_RETURN()
  )
)

/* matmul_any: matmuls over batch dims broadcast against each other (a
 * 4-D by a 3-D, a 3-D by a shared 2-D B, attention's scores), of f64 and of
 * integers that wrap (i32 with negatives, u8), and gemms with trans_a,
 * trans_b, alpha, beta and a C broadcast along columns or from one value. */
OI_GRAPH(matmul_any,
  OI_DYNAMIC( OI_VAR(a4, f32[2, 1, 3, 4]) OI_VAR(b3, f32[3, 4, 5]) OI_VAR(w, f32[4, 5]) OI_VAR(q, f32[2, 2, 3, 4])
              OI_VAR(kt, f32[2, 2, 4, 3]) OI_VAR(d, f64[3, 4]) OI_VAR(dw, f64[4, 2]) OI_VAR(ia, i32[2, 3, 4])
              OI_VAR(ib, i32[2, 4, 2]) OI_VAR(ua, u8[3, 4]) OI_VAR(ub, u8[4, 2]) OI_VAR(ga, f32[4, 3])
              OI_VAR(gb, f32[5, 4]) OI_VAR(gc, f32[3, 1]) OI_VAR(one, f32[1]) OI_VAR(gd, f64[4, 3]) )
  OI_VOLATILE(
    OI_VAR(p4, f32[2, 3, 3, 5]) OI_VAR(p3, f32[2, 1, 3, 5]) OI_VAR(s, f32[2, 2, 3, 3]) OI_VAR(pd, f64[3, 2])
    OI_VAR(ineg, i32[2, 3, 4]) OI_VAR(pi, i32[2, 3, 2]) OI_VAR(cube, u8[3, 4]) OI_VAR(pu, u8[3, 2])
    OI_VAR(g1, f32[3, 5]) OI_VAR(g2, f32[3, 5]) OI_VAR(g3, f64[3, 3])
  )
  OI_BLOCK(entry,
    OI_OP(matmul, a4, b3) OI_TO(p4)         /* [2, 1] x [3] batch dims: [2, 3] */
    OI_OP(matmul, a4, w) OI_TO(p3)          /* one B for every batch */
    OI_OP(matmul, q, kt) OI_TO(s)           /* scores per head */
    OI_OP(matmul, d, dw) OI_TO(pd)
    OI_OP(sub, ia, 2) OI_TO(ineg)
    OI_OP(matmul, ineg, ib) OI_TO(pi)
    OI_OP(mul, ua, ua) OI_TO(cube)
    OI_OP(mul, cube, ua) OI_TO(cube)        /* up to 64: the sums of 4 wrap at 256 */
    OI_OP(matmul, cube, ub) OI_TO(pu)
    OI_OP(gemm, ga, gb, gc, trans_a=true, trans_b=true, alpha=0.5, beta=-2.0) OI_TO(g1)
    OI_OP(gemm, ga, w, one, trans_a=true, beta=0.25) OI_TO(g2)
    OI_OP(gemm, gd, gd, trans_a=true, alpha=3.0) OI_TO(g3)
    OI_RETURN()
  )
)

/* vk_matmul_any: matmul_any's f32 products for both targets (the Vulkan
 * target's oi__vk_matmul_any: a batch per workgroup z): batch dims
 * broadcast against each other and against one shared B, attention's
 * scores, a product of several blocks with ragged edges, gemm's trans_a,
 * trans_b, alpha, beta and a C broadcast along columns or from one value,
 * a result read by the next statement, and an i32 product whose sums
 * wrap. */
OI_GRAPH(vk_matmul_any,
  OI_DYNAMIC( OI_VAR(a4, f32[2, 1, 3, 4]) OI_VAR(b3, f32[3, 4, 5]) OI_VAR(w, f32[4, 5]) OI_VAR(q, f32[2, 2, 3, 4])
              OI_VAR(kt, f32[2, 2, 4, 3]) OI_VAR(big_a, f32[3, 70, 45]) OI_VAR(big_b, f32[45, 37]) OI_VAR(ga, f32[4, 3])
              OI_VAR(gb, f32[5, 4]) OI_VAR(gc, f32[3, 1]) OI_VAR(one, f32[1]) OI_VAR(ia, i32[2, 3, 4])
              OI_VAR(ib, i32[4, 2]) )
  OI_VOLATILE(
    OI_VAR(p4, f32[2, 3, 3, 5]) OI_VAR(p3, f32[2, 1, 3, 5]) OI_VAR(s, f32[2, 2, 3, 3]) OI_VAR(big, f32[3, 70, 37])
    OI_VAR(g1, f32[3, 5]) OI_VAR(g2, f32[3, 5]) OI_VAR(g3, f32[3, 3]) OI_VAR(g4, f32[3, 5]) OI_VAR(ineg, i32[2, 3, 4])
    OI_VAR(ibig, i32[4, 2]) OI_VAR(pi, i32[2, 3, 2])
  )
  OI_BLOCK(entry,
    OI_OP(matmul, a4, b3) OI_TO(p4)         /* [2, 1] x [3] batch dims: [2, 3] */
    OI_OP(matmul, a4, w) OI_TO(p3)          /* one B for every batch */
    OI_OP(matmul, q, kt) OI_TO(s)           /* scores per head */
    OI_OP(matmul, big_a, big_b) OI_TO(big)  /* 3 x 3 blocks of 32 x 32 on a 16 x 16 workgroup, ragged */
    OI_OP(mul, big, 0.5) OI_TO(big)
    OI_OP(gemm, ga, gb, gc, trans_a=true, trans_b=true, alpha=0.5, beta=-2.0) OI_TO(g1)
    OI_OP(gemm, ga, w, one, trans_a=true, beta=0.25) OI_TO(g2)
    OI_OP(gemm, ga, ga, trans_a=true, alpha=3.0) OI_TO(g3)
    OI_OP(gemm, g3, g1, g2, alpha=0.01, beta=1.0) OI_TO(g4) /* a whole C; two results before */
    OI_OP(sub, ia, 2) OI_TO(ineg)
    OI_OP(mul, ib, 1000000000) OI_TO(ibig)   /* wraps in i32 */
    OI_OP(matmul, ineg, ibig) OI_TO(pi)     /* i32 over a batch dim, its sums wrapping */
    OI_RETURN()
  )
)

/* vk_topk: top_k and top_k_indices of f32 along a middle axis and the last
 * one, largest and smallest, over values rounded to halves (ties: the
 * earlier element first) and over zeros of both signs (-0 == +0: their
 * places decide); with --set x=nan a NaN ranks above +inf, and last
 * among the smallest (both targets). */
OI_GRAPH(vk_topk,
  OI_DYNAMIC( OI_VAR(x, f32[3, 7, 4]) )
  OI_VOLATILE(
    OI_VAR(r, f32[3, 7, 4]) OI_VAR(z, f32[3, 7, 4]) OI_VAR(top, f32[3, 3, 4]) OI_VAR(top_at, i64[3, 3, 4])
    OI_VAR(low, f32[3, 7, 2]) OI_VAR(low_at, i64[3, 7, 2]) OI_VAR(zero_at, i64[3, 7, 3])
  )
  OI_BLOCK(entry,
    OI_OP(mul, x, 2.0) OI_TO(r)
    OI_OP(round, r) OI_TO(r)                          /* ties */
    OI_OP(top_k, r, k=3, axis=1) OI_TO(top)
    OI_OP(top_k_indices, r, k=3, axis=1) OI_TO(top_at)
    OI_OP(top_k, r, k=2, largest=false) OI_TO(low)
    OI_OP(top_k_indices, r, k=2, largest=false) OI_TO(low_at)
    OI_OP(mul, x, 0.0) OI_TO(z)                       /* -0 where x < 0 */
    OI_OP(top_k_indices, z, k=3) OI_TO(zero_at)
    OI_RETURN()
  )
)

/* vk_many_rows: more rows than a dispatch counts along x (Vulkan promises
 * 65535): softmax, a row sum and argmax over 66000 rows of 3, one
 * workgroup a row in rows of 65535 workgroups (both targets). */
OI_GRAPH(vk_many_rows,
  OI_DYNAMIC( OI_VAR(x, f32[66000, 3]) )
  OI_VOLATILE( OI_VAR(sm, f32[66000, 3]) OI_VAR(total, f32[66000]) OI_VAR(best, i64[66000]) )
  OI_BLOCK(entry,
    OI_OP(softmax, x, axis=-1) OI_TO(sm)
    OI_OP(sum_axis, x, axes=[-1]) OI_TO(total)
    OI_OP(argmax_axis, x, axis=-1) OI_TO(best)
    OI_RETURN()
  )
)

/* vk_casts: f32 into i32 by each rounding_mode (trunc, floor, ceil,
 * nearest: halves away from zero) over exact halves, saturating past
 * +-2^31, and i32 back into f32; f32 into i64 (saturating past +-2^63),
 * i64 into f32, i32 into i64 (both targets; the
 * Vulkan target's i64 where the device JSON has int64; with --set x=nan a
 * NaN becomes 0). */
OI_GRAPH(vk_casts,
  OI_DYNAMIC( OI_VAR(x, f32[4, 6]) )
  OI_VOLATILE(
    OI_VAR(h, f32[4, 6]) OI_VAR(t, i32[4, 6]) OI_VAR(fl, i32[4, 6]) OI_VAR(ce, i32[4, 6]) OI_VAR(ne, i32[4, 6])
    OI_VAR(huge, f32[4, 6]) OI_VAR(sat, i32[4, 6]) OI_VAR(back, f32[4, 6]) OI_VAR(wide, i64[4, 6])
    OI_VAR(vast, f32[4, 6]) OI_VAR(sat64, i64[4, 6]) OI_VAR(back64, f32[4, 6])
    OI_VAR(t64, i64[4, 6])
  )
  OI_BLOCK(entry,
    OI_OP(mul, x, 6.0) OI_TO(h)
    OI_OP(round, h) OI_TO(h)
    OI_OP(mul, h, 0.5) OI_TO(h)                          /* halves: -3.0 .. 3.0 */
    OI_OP(cast, h, to=i32) OI_TO(t)                      /* toward zero */
    OI_OP(cast, h, to=i32, rounding_mode="floor") OI_TO(fl)
    OI_OP(cast, h, to=i32, rounding_mode="ceil") OI_TO(ce)
    OI_OP(cast, h, to=i32, rounding_mode="nearest") OI_TO(ne)
    OI_OP(mul, x, 3e9) OI_TO(huge)                       /* past +-2^31 where |x| > 0.72 */
    OI_OP(cast, huge, to=i32) OI_TO(sat)
    OI_OP(cast, ne, to=f32) OI_TO(back)
    OI_OP(add, back, h) OI_TO(back)
    OI_OP(cast, huge, to=i64) OI_TO(wide)                /* fits */
    OI_OP(mul, x, 1e19) OI_TO(vast)
    OI_OP(cast, vast, to=i64) OI_TO(sat64)               /* past +-2^63 where |x| > 0.92 */
    OI_OP(cast, wide, to=f32) OI_TO(back64)
    OI_OP(cast, t, to=i64) OI_TO(t64)                    /* sign-extended */
    OI_RETURN()
  )
)

/* row_ops: f64 through libm's double functions (exp, log, sqrt, tanh, erf,
 * pow) and reductions of f64 (sum over a middle axis, mean over the last,
 * sum of all), prod_axis of f32 and f64 over the first and the last axes,
 * softmax along the first axis and log_softmax along each. */
OI_GRAPH(row_ops,
  OI_DYNAMIC( OI_VAR(xd, f64[3, 4, 5]) OI_VAR(x, f32[3, 4, 5]) OI_VAR(sc, f32[4]) OI_VAR(bi, f32[4]) OI_VAR(mu, f32[4])
              OI_VAR(vr, f32[4]) )
  OI_VOLATILE(
    OI_VAR(e, f64[3, 4, 5]) OI_VAR(ad, f64[3, 4, 5]) OI_VAR(lg, f64[3, 4, 5]) OI_VAR(sq, f64[3, 4, 5])
    OI_VAR(th, f64[3, 4, 5]) OI_VAR(ef, f64[3, 4, 5]) OI_VAR(pw, f64[3, 4, 5]) OI_VAR(mid, f64[3, 1, 5])
    OI_VAR(lse, f64[3, 1, 5]) OI_VAR(avg, f64[3, 4]) OI_VAR(all, f64[1, 1, 1]) OI_VAR(pf, f32[4, 5])
    OI_VAR(pl, f32[3, 4]) OI_VAR(pd, f64[3, 4]) OI_VAR(sm0, f32[3, 4, 5]) OI_VAR(ls0, f32[3, 4, 5])
    OI_VAR(ls1, f32[3, 4, 5]) OI_VAR(ls2, f32[3, 4, 5]) OI_VAR(big, f64[3, 4, 5]) OI_VAR(inf, bool[3, 4, 5])
    OI_VAR(sp, f32[3, 4, 5]) OI_VAR(fl, f32[3, 4, 5]) OI_VAR(fld, f64[3, 4, 5]) OI_VAR(wide, f32[3, 4, 5])
    OI_VAR(tiny, f64[3, 4, 5]) OI_VAR(h, f16[3, 4, 5]) OI_VAR(hd, f16[3, 4, 5]) OI_VAR(back, f32[3, 4, 5])
    OI_VAR(backd, f64[3, 4, 5]) OI_VAR(tiled, f32[3, 8, 10]) OI_VAR(spread, f64[2, 3, 4, 5])
    OI_VAR(hs, f16[3, 4, 5]) OI_VAR(hx, f16[3, 4, 5]) OI_VAR(hm, f16[3, 4, 5]) OI_VAR(hgt, bool[3, 4, 5])
    OI_VAR(zero, f32[3, 4, 5]) OI_VAR(neg, bool[3, 4, 5]) OI_VAR(negd, bool[3, 4, 5]) OI_VAR(var, f32[4])
    OI_VAR(bn, f32[3, 4, 5]) OI_VAR(gn, f32[3, 4, 5]) OI_VAR(inorm, f32[3, 4, 5]) OI_VAR(top, f32[3, 2, 5])
    OI_VAR(top_at, i64[3, 2, 5]) OI_VAR(low, f64[3, 4, 3]) OI_VAR(low_at, i64[3, 4, 3])
  )
  OI_BLOCK(entry,
    OI_OP(exp, xd) OI_TO(e)
    OI_OP(abs, xd) OI_TO(ad)
    OI_OP(log, ad) OI_TO(lg)                /* -inf at 0 */
    OI_OP(sqrt, xd) OI_TO(sq)               /* NaN below 0 */
    OI_OP(tanh, xd) OI_TO(th)
    OI_OP(erf, xd) OI_TO(ef)
    OI_OP(pow, ad, xd) OI_TO(pw)
    OI_OP(sum_axis, e, axes=[1], keepdims=true) OI_TO(mid)
    OI_OP(log, mid) OI_TO(lse)              /* log-sum-exp over the middle axis */
    OI_OP(mean_axis, xd, axes=[2]) OI_TO(avg)
    OI_OP(sum_axis, xd, axes=[0, 1, 2], keepdims=true) OI_TO(all)
    OI_OP(prod_axis, x, axes=[0]) OI_TO(pf)
    OI_OP(prod_axis, x, axes=[-1]) OI_TO(pl)
    OI_OP(prod_axis, xd, axes=[2]) OI_TO(pd)
    OI_OP(softmax, x, axis=0) OI_TO(sm0)
    OI_OP(log_softmax, x, axis=0) OI_TO(ls0)
    OI_OP(log_softmax, x, axis=1) OI_TO(ls1)
    OI_OP(log_softmax, x) OI_TO(ls2)
    OI_OP(mul, xd, 1e308) OI_TO(big)        /* +-inf past 1.797 */
    OI_OP(is_inf, big) OI_TO(inf)
    OI_OP(softplus, x) OI_TO(sp)
    OI_OP(fill, x, value=0.1) OI_TO(fl)     /* rounded to f32 */
    OI_OP(fill, xd, value=-1.5) OI_TO(fld)
    OI_OP(mul, x, 40000.0) OI_TO(wide)      /* past 65504 from 1.64: inf as f16 */
    OI_OP(cast, wide, to=f16) OI_TO(h)
    OI_OP(cast, h, to=f32) OI_TO(back)
    OI_OP(mul, xd, 1e-5) OI_TO(tiny)        /* f16 subnormals, rounded twice (to f32, then f16) */
    OI_OP(cast, tiny, to=f16) OI_TO(hd)
    OI_OP(cast, hd, to=f64) OI_TO(backd)
    OI_OP(tile, x, repeats=[1, 2, 2]) OI_TO(tiled)
    OI_OP(expand, mid, shape=[2, 1, 4, 1]) OI_TO(spread) /* [3, 1, 5] over a new first dim and the middle */
    OI_OP(cast, x, to=f16) OI_TO(hs)
    OI_OP(mul, hs, hs) OI_TO(hx)            /* f16 arithmetic: rounded into f16 after each op */
    OI_OP(add, hx, hd) OI_TO(hx)
    OI_OP(exp, hx) OI_TO(hx)
    OI_OP(max, hx, h) OI_TO(hm)
    OI_OP(gt, hm, hs) OI_TO(hgt)
    OI_OP(mul, x, -0.0) OI_TO(zero)         /* -0.0 where x > 0: its sign bit counts */
    OI_OP(is_neg, zero) OI_TO(neg)
    OI_OP(is_neg, xd) OI_TO(negd)
    OI_OP(abs, vr) OI_TO(var)
    OI_OP(batch_norm, x, sc, bi, mu, var, epsilon=0.01) OI_TO(bn)
    OI_OP(group_norm, x, sc, bi, num_groups=2) OI_TO(gn)
    OI_OP(group_norm, x, sc, bi, num_groups=4) OI_TO(inorm) /* instance norm */
    OI_OP(top_k, x, k=2, axis=1) OI_TO(top)
    OI_OP(top_k_indices, x, k=2, axis=1) OI_TO(top_at)
    OI_OP(top_k, sq, k=3, largest=false) OI_TO(low)  /* NaN ranks last */
    OI_OP(top_k_indices, sq, k=3, largest=false) OI_TO(low_at)
    OI_RETURN()
  )
)

/* conv_t: conv_transpose2d in 2 groups with a bias, strides, pads,
 * dilations and output_padding; one with auto_pad SAME_UPPER; one plain. */
OI_GRAPH(conv_t,
  OI_DYNAMIC( OI_VAR(x, f32[2, 4, 3, 3]) OI_VAR(w, f32[4, 3, 3, 2]) OI_VAR(bias, f32[6]) OI_VAR(x1, f32[1, 2, 3, 4])
              OI_VAR(w1, f32[2, 1, 2, 2]) )
  OI_VOLATILE( OI_VAR(y, f32[2, 6, 6, 4]) OI_VAR(same, f32[1, 1, 6, 8]) OI_VAR(plain, f32[1, 1, 4, 5]) )
  OI_BLOCK(entry,
    OI_OP(conv_transpose2d, x, w, bias, group=2, strides=[2, 1], pads=[1, 0, 1, 1], dilations=[1, 2],
          output_padding=[1, 0]) OI_TO(y)
    OI_OP(conv_transpose2d, x1, w1, strides=[2, 2], auto_pad="SAME_UPPER") OI_TO(same)
    OI_OP(conv_transpose2d, x1, w1) OI_TO(plain)
    OI_RETURN()
  )
)

/* conv_wide: conv2d of f64 (conv.c's patches summed as gemm.c's f64 loops
 * sum them) in 2 groups with a bias, pads, strides and dilations; with
 * relu and no bias; a conv1d of f64; max_pool2d of u8 and of negative i8
 * values (the padding never wins). */
OI_GRAPH(conv_wide,
  OI_DYNAMIC( OI_VAR(x, f64[2, 4, 7, 6]) OI_VAR(w, f64[6, 2, 3, 2]) OI_VAR(bias, f64[6]) OI_VAR(w2, f64[3, 4, 3, 3])
              OI_VAR(xs, f64[1, 3, 5]) OI_VAR(ws, f64[2, 3, 3]) OI_VAR(u, u8[1, 2, 5, 5]) OI_VAR(s, i8[1, 2, 5, 5]) )
  OI_VOLATILE(
    OI_VAR(y, f64[2, 6, 4, 5]) OI_VAR(yr, f64[2, 3, 7, 6]) OI_VAR(ys, f64[1, 2, 5]) OI_VAR(mu, u8[1, 2, 3, 3])
    OI_VAR(neg, i8[1, 2, 5, 5]) OI_VAR(ms, i8[1, 2, 3, 3])
  )
  OI_BLOCK(entry,
    OI_OP(conv2d, x, w, bias, group=2, pads=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2]) OI_TO(y)
    OI_OP(conv2d, x, w2, pads=[1, 1, 1, 1], activation="relu") OI_TO(yr)
    OI_OP(conv1d, xs, ws, pads=[1, 1]) OI_TO(ys)
    OI_OP(max_pool2d, u, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]) OI_TO(mu)
    OI_OP(sub, s, 5) OI_TO(neg)             /* -5 .. -1 */
    OI_OP(max_pool2d, neg, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]) OI_TO(ms)
    OI_RETURN()
  )
)

/* bf16_casts: bf16 stored as its bits: a bf16 input (f32 in its .npy file,
 * rounded into bf16 as `openinfer run` rounds it) and a bf16 @init value;
 * casts into bf16 of f32 (inf, NaN, subnormals), of f64 (rounded twice:
 * to f32, then bf16) and of f16; of bf16 into f32, f64 and f16. */
OI_GRAPH(bf16_casts,
  OI_DYNAMIC( OI_VAR(x, f32[3, 4, 5]) OI_VAR(xd, f64[3, 4, 5]) OI_VAR(hb, bf16[3, 4, 5]) )
  OI_VOLATILE(
    OI_VAR(b, bf16[3, 4, 5]) OI_VAR(big, f32[3, 4, 5]) OI_VAR(bbig, bf16[3, 4, 5]) OI_VAR(root, f32[3, 4, 5])
    OI_VAR(broot, bf16[3, 4, 5]) OI_VAR(tiny, f32[3, 4, 5]) OI_VAR(btiny, bf16[3, 4, 5]) OI_VAR(bd, bf16[3, 4, 5])
    OI_VAR(h, f16[3, 4, 5]) OI_VAR(bh, bf16[3, 4, 5]) OI_VAR(back, f32[3, 4, 5]) OI_VAR(backd, f64[3, 4, 5])
    OI_VAR(hback, f16[3, 4, 5]) OI_VAR(k, bf16[3, 4, 5], @init(0.1)) OI_VAR(kf, f32[3, 4, 5])
  )
  OI_BLOCK(entry,
    OI_OP(cast, x, to=bf16) OI_TO(b)
    OI_OP(mul, x, 3e38) OI_TO(big)          /* inf past 1.134, bf16's inf past 1.1298 */
    OI_OP(cast, big, to=bf16) OI_TO(bbig)
    OI_OP(sqrt, x) OI_TO(root)              /* NaN below 0 */
    OI_OP(cast, root, to=bf16) OI_TO(broot)
    OI_OP(mul, x, 1e-39) OI_TO(tiny)        /* f32 subnormals */
    OI_OP(cast, tiny, to=bf16) OI_TO(btiny)
    OI_OP(cast, xd, to=bf16) OI_TO(bd)
    OI_OP(cast, x, to=f16) OI_TO(h)
    OI_OP(cast, h, to=bf16) OI_TO(bh)
    OI_OP(cast, hb, to=f32) OI_TO(back)
    OI_OP(cast, bd, to=f64) OI_TO(backd)
    OI_OP(cast, hb, to=f16) OI_TO(hback)
    OI_OP(cast, k, to=f32) OI_TO(kf)
    OI_RETURN()
  )
)

/* gemm_tiles: products by model weights (B packed at open) in the shapes
 * that take every path of the emitted matmul driver and of the tiles it
 * cuts at run time as gemm.c's packed path does: K = 1024 (rows of A 4 KiB
 * apart: A packed, 300 rows in chunks), 200 columns (a last panel of 8 or
 * 16 columns), a bias over 4 k blocks and gelu, and the last partial row
 * panels: 30 rows (AVX-512: the 8-row kernel on the last 8, 2 of them
 * above the panel), 22 (AVX-512: the 12-row kernel on the last 12; AVX2:
 * the 4-row one, whole), 20 (AVX-512: the 8-row kernel, whole; AVX2: the
 * 4-row one on the last 4) and 5 (copied with zeros below). */
OI_GRAPH(gemm_tiles,
  OI_DYNAMIC(
    OI_VAR(x1, f32[300, 1024]) OI_VAR(x2, f32[30, 384]) OI_VAR(x3, f32[22, 384]) OI_VAR(x4, f32[20, 384])
    OI_VAR(x5, f32[5, 384])
  )
  OI_VOLATILE(
    OI_VAR(W1, f32[1024, 200]) OI_VAR(b1, f32[200]) OI_VAR(W2, f32[384, 200]) OI_VAR(b2, f32[200])
    OI_VAR(y1, f32[300, 200]) OI_VAR(y2, f32[30, 200]) OI_VAR(y3, f32[22, 200]) OI_VAR(y4, f32[20, 200])
    OI_VAR(y5, f32[5, 200])
  )
  OI_BLOCK(entry,
    OI_OP(gemm, x1, W1, b1) OI_TO(y1)
    OI_OP(gemm, x2, W2, b2, activation="gelu") OI_TO(y2)
    OI_OP(matmul, x3, W2) OI_TO(y3)
    OI_OP(gemm, x4, W2, b2) OI_TO(y4)
    OI_OP(gemm, x5, W2, b2) OI_TO(y5)
    OI_RETURN()
  )
)

/* gemm_tiles' weights: seeded, in [-0.05, 0.05) (the products stay near 1). */
oi_model *gemm_tiles_model(uint8_t **bytes);
oi_model *gemm_tiles_model(uint8_t **bytes) {
    static float v[1024 * 200];
    static const struct { const char *name; int ndim; uint64_t dims[2]; } t[] = {
        {"W1", 2, {1024, 200}}, {"b1", 1, {200, 0}}, {"W2", 2, {384, 200}}, {"b2", 1, {200, 0}}};
    uint32_t state = 18;
    oi_writer *w = oi_writer_new();
    if (!w)
        return NULL;
    for (int i = 0; i < 4; i++) {
        uint64_t n = t[i].dims[0] * (t[i].ndim == 2 ? t[i].dims[1] : 1);
        for (uint64_t j = 0; j < n; j++) {
            state = state * 1664525u + 1013904223u;
            v[j] = ((float)(state >> 8) / 16777216.0f - 0.5f) * 0.1f;
        }
        oi_writer_add_tensor(w, t[i].name, OI_DTYPE_F32, t[i].ndim, t[i].dims, v, NULL);
    }
    size_t size = 0;
    oi_status st = oi_writer_to_memory(w, 2, bytes, &size);
    oi_writer_free(w);
    return st == OI_OK ? oi_model_open_memory(*bytes, size) : NULL;
}

/* vk_rows: f32 ops the Vulkan target took after the C target (also run
 * there): softmax along the first and a middle axis, log_softmax along the
 * first and the last; argmax_axis and argmin_axis along the first and a
 * middle axis over coarse values (ties taken first and last); round of
 * halves (away from zero) and of values near 0 (signed zeros), is_neg of
 * them; is_inf past f32's range; softplus of large magnitudes; fill; tile
 * and expand; pow of negative bases and signed zeros to integer powers, and
 * to fractions. */
OI_GRAPH(vk_rows,
  OI_DYNAMIC( OI_VAR(x, f32[3, 4, 5]) OI_VAR(row, f32[1, 5]) )
  OI_VOLATILE(
    OI_VAR(sm0, f32[3, 4, 5]) OI_VAR(sm1, f32[3, 4, 5]) OI_VAR(ls0, f32[3, 4, 5]) OI_VAR(ls2, f32[3, 4, 5])
    OI_VAR(q, f32[3, 4, 5]) OI_VAR(am0, i64[4, 5]) OI_VAR(an1, i64[3, 1, 5]) OI_VAR(rq, f32[3, 4, 5])
    OI_VAR(rx, f32[3, 4, 5]) OI_VAR(neg, bool[3, 4, 5]) OI_VAR(big, f32[3, 4, 5]) OI_VAR(inf, bool[3, 4, 5])
    OI_VAR(sp, f32[3, 4, 5]) OI_VAR(fl, f32[3, 4, 5]) OI_VAR(tiled, f32[3, 8, 10]) OI_VAR(spread, f32[2, 4, 5])
    OI_VAR(ex, f32[3, 4, 5]) OI_VAR(pw, f32[3, 4, 5]) OI_VAR(pz, f32[3, 4, 5]) OI_VAR(pf, f32[3, 4, 5])
  )
  OI_BLOCK(entry,
    OI_OP(softmax, x, axis=0) OI_TO(sm0)
    OI_OP(softmax, x, axis=1) OI_TO(sm1)
    OI_OP(log_softmax, x, axis=0) OI_TO(ls0)
    OI_OP(log_softmax, x, axis=-1) OI_TO(ls2)
    OI_OP(mul, x, 4.0) OI_TO(q)
    OI_OP(floor, q) OI_TO(q)
    OI_OP(mul, q, 0.5) OI_TO(q)              /* halves and integers in [-4, 3.5] */
    OI_OP(argmax_axis, q, axis=0) OI_TO(am0)
    OI_OP(argmin_axis, q, axis=1, keepdims=true, select_first=false) OI_TO(an1)
    OI_OP(round, q) OI_TO(rq)
    OI_OP(round, x) OI_TO(rx)                /* -0.0 for x in (-0.5, 0) */
    OI_OP(is_neg, rx) OI_TO(neg)
    OI_OP(exp, x) OI_TO(big)
    OI_OP(mul, big, 1e38) OI_TO(big)         /* +inf past e^1.22 */
    OI_OP(is_inf, big) OI_TO(inf)
    OI_OP(mul, x, 30.0) OI_TO(sp)
    OI_OP(softplus, sp) OI_TO(sp)
    OI_OP(fill, x, value=0.1) OI_TO(fl)      /* rounded to f32 */
    OI_OP(tile, x, repeats=[1, 2, 2]) OI_TO(tiled)
    OI_OP(expand, row, shape=[2, 4, 5]) OI_TO(spread)
    OI_OP(mul, x, 2.0) OI_TO(ex)
    OI_OP(round, ex) OI_TO(ex)               /* integers -4..4 */
    OI_OP(pow, x, ex) OI_TO(pw)              /* negative bases to odd and even powers, x^0 */
    OI_OP(pow, rx, ex) OI_TO(pz)             /* +-0 to negative powers: +-inf */
    OI_OP(pow, x, x) OI_TO(pf)               /* a negative base to a fraction: NaN */
    OI_RETURN()
  )
)

/* vk_ints: i32 arithmetic as the Vulkan target runs it (GLSL's int, wrapping
 * in 32 bits) and the C target (int64_t, wrapped): products that overflow,
 * negation, min and max of negative values, div, floor_div and rem by
 * negative divisors and zeros (the mask, 0 unless given), a sum past
 * 2^31 - 1, comparisons of i32. */
OI_GRAPH(vk_ints,
  OI_DYNAMIC( OI_VAR(ia, i32[4, 6]) OI_VAR(b, i32[6]) )
  OI_VOLATILE(
    OI_VAR(big, i32[4, 6]) OI_VAR(an, i32[4, 6]) OI_VAR(bn, i32[6]) OI_VAR(pr, i32[4, 6]) OI_VAR(ng, i32[4, 6])
    OI_VAR(ab, i32[4, 6]) OI_VAR(mn, i32[4, 6]) OI_VAR(mx, i32[4, 6]) OI_VAR(dv, i32[4, 6]) OI_VAR(dm, i32[4, 6]) OI_VAR(fd, i32[4, 6])
    OI_VAR(rm, i32[4, 6]) OI_VAR(gt, bool[4, 6]) OI_VAR(eq, bool[4, 6])
  )
  OI_BLOCK(entry,
    OI_OP(sub, ia, 2) OI_TO(an)              /* -2..2 */
    OI_OP(sub, b, 2) OI_TO(bn)
    OI_OP(mul, an, 1000003) OI_TO(pr)
    OI_OP(mul, pr, pr) OI_TO(pr)             /* wraps */
    OI_OP(add, pr, an) OI_TO(pr)
    OI_OP(neg, pr) OI_TO(ng)
    OI_OP(sub, ng, pr) OI_TO(ab)
    OI_OP(min, pr, bn) OI_TO(mn)
    OI_OP(max, ng, bn) OI_TO(mx)
    OI_OP(div, pr, bn) OI_TO(dv)             /* 0 where bn is 0 */
    OI_OP(div, pr, bn, div_by_zero_mask=-7) OI_TO(dm)
    OI_OP(floor_div, pr, bn) OI_TO(fd)       /* toward -inf */
    OI_OP(rem, pr, bn) OI_TO(rm)             /* the sign of pr */
    OI_OP(add, ab, 2147483000) OI_TO(big)    /* past 2^31 - 1: wraps */
    OI_OP(sub, big, an) OI_TO(big)
    OI_OP(gt, pr, ng) OI_TO(gt)
    OI_OP(eq, fd, dv) OI_TO(eq)
    OI_RETURN()
  )
)

/* vk_names: operands named as the kernels' locals, which the Vulkan target's
 * kernels rename with a '_' (p_, lo_, ...): their helper macros (an int's
 * NAME_w word view, a bool's NAME_write and NAME_read) are built on those
 * names, and glslc warns of any name holding "__" (GLSL reserves them).
 * i32 arithmetic into i, a comparison into the bool lo, and reshapes of
 * both: word copies and byte copies between renamed names. Operands named
 * as another's helper macros (i_w, lo_read) are renamed too: in one kernel
 * with i and lo, their macros would be defined twice. An operand named
 * i_, as the renamed i would be, keeps its name (i takes another '_'). */
OI_GRAPH(vk_names,
  OI_DYNAMIC( OI_VAR(p, i32[2, 6]) OI_VAR(acc, i32[2, 6]) OI_VAR(i_w, i32[2, 6]) OI_VAR(i_, i32[2, 6]) )
  OI_VOLATILE(
    OI_VAR(i, i32[2, 6]) OI_VAR(lo, bool[2, 6]) OI_VAR(hi, bool[3, 4]) OI_VAR(at, i32[12]) OI_VAR(q, i32[3, 4])
    OI_VAR(lo_read, bool[2, 6])
  )
  OI_BLOCK(entry,
    OI_OP(sub, p, 2) OI_TO(i)                    /* -2..2 */
    OI_OP(mul, i, acc) OI_TO(i)
    OI_OP(min, i, acc) OI_TO(i)
    OI_OP(add, i, i_w) OI_TO(i)                  /* i_w_, beside i's word view i_w */
    OI_OP(sub, i, i_) OI_TO(i)                   /* i_ keeps its name: i becomes i__ */
    OI_OP(lt, i, p) OI_TO(lo)                    /* a byte: lo_write */
    OI_OP(ge, i, acc) OI_TO(lo_read)
    OI_OP(and, lo, lo_read) OI_TO(lo)            /* lo_read_, beside lo's lo_read */
    OI_OP(reshape, lo, shape=[3, 4]) OI_TO(hi)   /* bytes: hi_write(o, lo_read(o)) */
    OI_OP(reshape, i, shape=[12]) OI_TO(at)      /* words: at_w(o) = i_w(o) */
    OI_OP(reshape, at, shape=[3, 4]) OI_TO(q)
    OI_OP(add, q, q) OI_TO(q)
    OI_RETURN()
  )
)

/* vk_i64: i64 arithmetic as the Vulkan target runs it (GLSL's int64_t,
 * wrapping in 64 bits) and the C target (int64_t through uint64_t): products
 * past 2^63 (pr, low), a sum past 2^63 - 1, negation, min and max, div,
 * floor_div and rem by negative divisors and zeros (the mask, 0 unless
 * given) over the seeded inputs; and over the model's edge values (e, d:
 * INT64_MIN and INT64_MAX by -1, negative quotients, a zero divisor): the
 * C target's INT64_MIN / -1 is INT64_MIN (scalar.h's NEG_A, -a wrapping),
 * its rem 0, and -INT64_MIN is INT64_MIN. A reshape copies words, and its
 * kernel alone of vk_i64's does without 64-bit integers. */
OI_GRAPH(vk_i64,
  OI_DYNAMIC( OI_VAR(ia, i64[4, 6]) OI_VAR(b, i64[6]) )
  OI_CONSTANT( OI_VAR(e, i64[6], @ref("e")) OI_VAR(d, i64[6], @ref("d")) )
  OI_VOLATILE(
    OI_VAR(an, i64[4, 6]) OI_VAR(bn, i64[6]) OI_VAR(pr, i64[4, 6]) OI_VAR(ng, i64[4, 6]) OI_VAR(big, i64[4, 6])
    OI_VAR(mn, i64[4, 6]) OI_VAR(mx, i64[4, 6]) OI_VAR(dv, i64[4, 6]) OI_VAR(dm, i64[4, 6]) OI_VAR(fd, i64[4, 6])
    OI_VAR(rm, i64[4, 6]) OI_VAR(low, i64[4, 6]) OI_VAR(lf, i64[4, 6]) OI_VAR(gt, bool[4, 6])
    OI_VAR(eq, bool[4, 6]) OI_VAR(ed, i64[6]) OI_VAR(ef, i64[6]) OI_VAR(er, i64[6]) OI_VAR(en, i64[6])
    OI_VAR(es, i64[6]) OI_VAR(ep, i64[6]) OI_VAR(lt, bool[6]) OI_VAR(ed2, i64[2, 3])
    OI_VAR(em, i64[6])
  )
  OI_BLOCK(entry,
    OI_OP(sub, ia, 2) OI_TO(an)                  /* -2..2 */
    OI_OP(sub, b, 2) OI_TO(bn)
    /* wrapping: products and sums past 2^63, negation */
    OI_OP(mul, an, 3037000493) OI_TO(pr)         /* past 2^31: an i32 would wrap */
    OI_OP(mul, pr, pr) OI_TO(pr)                 /* (2 x 3037000493)^2 wraps past 2^63 */
    OI_OP(add, pr, b) OI_TO(pr)                  /* odd and even */
    OI_OP(add, an, 9223372036854775806) OI_TO(big) /* past 2^63 - 1: wraps */
    OI_OP(mul, an, 4611686018427387904) OI_TO(low) /* 2^62 x -2..2: INT64_MIN at -2 and (wrapped) at 2 */
    OI_OP(add, e, e) OI_TO(es)                   /* wraps both ways */
    OI_OP(mul, e, d) OI_TO(ep)
    OI_OP(neg, pr) OI_TO(ng)
    OI_OP(neg, e) OI_TO(en)                      /* -INT64_MIN: INT64_MIN */
    /* division: by negative divisors, by zero (the mask), INT64_MIN by -1 */
    OI_OP(div, pr, bn) OI_TO(dv)                 /* 0 where bn is 0 */
    OI_OP(div, e, d) OI_TO(ed)                   /* INT64_MIN / -1: INT64_MIN; -INT64_MAX; -3, -3; 0 by 0 */
    OI_OP(div, pr, bn, div_by_zero_mask=-9223372036854775807) OI_TO(dm)
    OI_OP(floor_div, pr, bn) OI_TO(fd)           /* toward -inf */
    OI_OP(floor_div, low, bn) OI_TO(lf)          /* INT64_MIN by -1 where b is 1 */
    OI_OP(floor_div, e, d) OI_TO(ef)
    OI_OP(rem, pr, bn) OI_TO(rm)                 /* the sign of pr */
    OI_OP(rem, e, d) OI_TO(er)
    OI_OP(floor_div, e, -9223372036854775808) OI_TO(em) /* by INT64_MIN, a literal: 1, -1, 0, -1, 0, 0 */
    /* order: min, max, comparisons */
    OI_OP(min, pr, bn) OI_TO(mn)
    OI_OP(max, ng, bn) OI_TO(mx)
    OI_OP(gt, pr, ng) OI_TO(gt)
    OI_OP(eq, fd, dv) OI_TO(eq)
    OI_OP(lt, e, d) OI_TO(lt)
    OI_OP(reshape, ed, shape=[2, 3]) OI_TO(ed2)  /* a copy of words: no 64-bit arithmetic in its kernel */
    OI_RETURN()
  )
)

/* vk_i64's model: e (INT64_MIN, INT64_MAX, -7, 7, -1, 0) and the divisors d (-1, -1, 2, -2, 0, 3). */
oi_model *vk_i64_model(uint8_t **bytes);
oi_model *vk_i64_model(uint8_t **bytes) {
    const int64_t e[6] = {INT64_MIN, INT64_MAX, -7, 7, -1, 0}, d[6] = {-1, -1, 2, -2, 0, 3};
    uint64_t dims[1] = {6};
    oi_writer *w = oi_writer_new();
    size_t size = 0;
    int bad = !w || oi_writer_add_tensor(w, "e", OI_DTYPE_I64, 1, dims, e, NULL) != OI_OK ||
              oi_writer_add_tensor(w, "d", OI_DTYPE_I64, 1, dims, d, NULL) != OI_OK ||
              oi_writer_to_memory(w, 2, bytes, &size) != OI_OK;
    oi_writer_free(w);
    return bad ? NULL : oi_model_open_memory(*bytes, size);
}

/* vk_bool_prefix: a prefix table of bool masks M(l) in the model, each
 * layer doubling h and keeping it where its mask is set, taking x
 * elsewhere. Each entry is 15 bytes, which the Vulkan target reads a byte
 * at a time from the model's words (OI_BYTE_READ). Beside them, tables of
 * i32 and i64 entries (S(l), T(l)) summed into n and w. */
OI_GRAPH(vk_bool_prefix,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) OI_VAR(k, i32[R, C]) OI_VAR(k64, i64[R, C]) )
  OI_VOLATILE(
    OI_VAR(M(l), bool[R, C], @pattern("bp.m.{l}")) OI_VAR(S(l), i32[R, C], @pattern("bp.s.{l}"))
    OI_VAR(T(l), i64[R, C], @pattern("bp.t.{l}")) OI_VAR(h, f32[R, C]) OI_VAR(n, i32[R, C]) OI_VAR(w, i64[R, C])
  )
  OI_BLOCK(entry,
    OI_TRANSFER(x, h)
    OI_TRANSFER(k, n)
    OI_TRANSFER(k64, w)
    OI_LOOP(layers, l, 0..L,
      OI_OP(mul, h, 2.0) OI_TO(h)
      OI_OP(where, M[l], h, x) OI_TO(h)
      OI_OP(add, n, S[l]) OI_TO(n)
      OI_OP(add, w, T[l]) OI_TO(w)
    )
    OI_RETURN()
  )
)

/* vk_bool_prefix's model: R = 3, C = 5, L = 3 seeded masks bp.m.0..2, i32
 * entries bp.s.0..2 and i64 entries bp.t.0..2 (past 2^32). */
oi_model *vk_bool_prefix_model(uint8_t **bytes);
oi_model *vk_bool_prefix_model(uint8_t **bytes) {
    enum { R = 3, C = 5, L = 3 };
    uint64_t dims[2] = {R, C};
    uint32_t state = 7;
    oi_writer *w = oi_writer_new();
    int bad = !w || oi_writer_add_sizevar(w, "R", R) != OI_OK || oi_writer_add_sizevar(w, "C", C) != OI_OK ||
              oi_writer_add_sizevar(w, "L", L) != OI_OK;
    for (int l = 0; l < L && !bad; l++) {
        uint8_t mask[R * C];
        int32_t small[R * C];
        int64_t big[R * C];
        char name[32];
        for (int i = 0; i < R * C; i++) {
            state = state * 1664525u + 1013904223u;
            mask[i] = (uint8_t)(state >> 31);
            small[i] = (int32_t)(state >> 20) - 2048;
            big[i] = (int64_t)small[i] * ((int64_t)1 << 33) + l;
        }
        snprintf(name, sizeof name, "bp.m.%d", l);
        bad = oi_writer_add_tensor(w, name, OI_DTYPE_BOOL, 2, dims, mask, NULL) != OI_OK;
        snprintf(name, sizeof name, "bp.s.%d", l);
        bad = bad || oi_writer_add_tensor(w, name, OI_DTYPE_I32, 2, dims, small, NULL) != OI_OK;
        snprintf(name, sizeof name, "bp.t.%d", l);
        bad = bad || oi_writer_add_tensor(w, name, OI_DTYPE_I64, 2, dims, big, NULL) != OI_OK;
    }
    size_t size = 0;
    bad = bad || oi_writer_to_memory(w, 2, bytes, &size) != OI_OK;
    oi_writer_free(w);
    return bad ? NULL : oi_model_open_memory(*bytes, size);
}
