/* vulkan_parity_nn.c - parity cases of the nn family (vulkan/vk_ops_nn.c):
 * every op x dtype x shape on the Vulkan backend vs the CPU reference.
 * Included by test_vulkan.c (uses its run_case / each_dtype helpers). */

static void test_nn_family(void) {}
