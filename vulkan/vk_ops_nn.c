/* vk_ops_nn.c - the Vulkan plans of the nn family (batch_norm, group_norm, rope, attention, top_k, top_k_indices, matmul_q8, matmul_q4).
 * Included by vk_ops.c before its planner, which calls
 * oi__vk_plan_nn_family for every op: it returns false for ops not of
 * this family, else sets *status (OI_OK with a filled plan, or the reason
 * the op runs on the CPU). */

static bool oi__vk_plan_nn_family(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out, oi__vk_plan *plan, oi_status *status) {
    (void)ctx, (void)k, (void)in, (void)n_in, (void)out, (void)plan, (void)status;
    return false;
}
