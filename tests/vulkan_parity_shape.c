/* vulkan_parity_shape.c - parity cases of the shape family (vulkan/vk_ops_shape.c):
 * every op x dtype x shape on the Vulkan backend vs the CPU reference.
 * Included by test_vulkan.c (uses its run_case / each_dtype helpers). */

static void test_shape_family(void) {}
