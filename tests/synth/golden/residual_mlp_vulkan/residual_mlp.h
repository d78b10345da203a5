/* residual_mlp.h - graph "residual_mlp", synthesized by OpenInfer 0.1.0 for Vulkan (GLSL kernels, C11 host code).
 * Standalone: needs no OpenInfer header or library.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 2, D = 8, num_layers = 3.
 *
 *   residual_mlp_ctx *ctx = residual_mlp_open("model.oinf");   // NULL: residual_mlp_last_error() says why
 *   residual_mlp_set_VAR(ctx, values, count);          // every dynamic variable, before a step
 *   residual_mlp_step(ctx);                            // 0, or an error code
 *   const float *y = residual_mlp_get_VAR(ctx, &count); // valid until the next step
 *   residual_mlp_close(ctx);
 */
#ifndef residual_mlp_H
#define residual_mlp_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The temporaries' arena, planned at synthesis time (plan.json). */
#define residual_mlp_ARENA_BYTES 128u
/* The declared variables that do not live in the model file. */
#define residual_mlp_STATE_BYTES 64u

/* Error codes (residual_mlp_last_error() has the message). */
enum { residual_mlp_OK = 0, residual_mlp_ERROR_ARGUMENT = 1, residual_mlp_ERROR_IO = 2, residual_mlp_ERROR_MODEL = 3, residual_mlp_ERROR_MEMORY = 4, residual_mlp_ERROR_RUNTIME = 5 };

typedef struct residual_mlp_ctx residual_mlp_ctx;

/* Options of residual_mlp_open_with; zero means the default. */
typedef struct residual_mlp_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use
                     (unused: the kernels run on the GPU) */
} residual_mlp_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * uploads it to the GPU and records the step's command buffer. */
residual_mlp_ctx *residual_mlp_open(const char *model_path);
residual_mlp_ctx *residual_mlp_open_with(const char *model_path, const residual_mlp_options *options); /* options: NULL = defaults */
/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */
int residual_mlp_step(residual_mlp_ctx *ctx);
void residual_mlp_close(residual_mlp_ctx *ctx);
/* The message of this thread's last error ("" if none). */
const char *residual_mlp_last_error(void);

/* x: dynamic f32[2, 8], 16 values */
int residual_mlp_set_x(residual_mlp_ctx *ctx, const float *values, size_t count);
const float *residual_mlp_get_x(const residual_mlp_ctx *ctx, size_t *count);
/* h: temporary f32[2, 8], 16 values */
const float *residual_mlp_get_h(const residual_mlp_ctx *ctx, size_t *count);

/* Vulkan: the last step's GPU time in ms (timestamps; 0 without them),
 * and the dispatches and barriers of the recorded step. */
double residual_mlp_gpu_ms(const residual_mlp_ctx *ctx);
int residual_mlp_dispatches(const residual_mlp_ctx *ctx);
int residual_mlp_barriers(const residual_mlp_ctx *ctx);
/* Built with -DOI_VK_PROFILE=N (a timestamp after each of the step's first N
 * dispatches): the last step's GPU time of each, in ms from the previous
 * timestamp, and the kernel (NAME_kK.comp) it ran; returns how many (0
 * otherwise). For finding the slow kernels, not for timing a step. */
int residual_mlp_dispatch_ms(const residual_mlp_ctx *ctx, double *ms, int *kernel, int max);

/* Vulkan interop (docs/synthesizer.md, "Vulkan interop"). Handles travel as void *
 * (VkInstance, VkPhysicalDevice, VkDevice, VkQueue) and buffers as uint64_t
 * (VkBuffer), so this header needs no vulkan.h. residual_mlp_open_on_device runs the
 * folder on the application's device, which must have on:
 *   nothing beyond Vulkan 1.1 and a queue with compute.
 * Steps are submitted to `queue` and waited for (its fence) before residual_mlp_step
 * returns; nothing here destroys the application's handles. */
typedef void (*residual_mlp_vulkan_void_function)(void);
typedef struct residual_mlp_vulkan_device {
    void *instance, *physical_device, *device, *queue;
    uint32_t queue_family_index;
    /* vkGetInstanceProcAddr of the loader that made `instance`; NULL: libvulkan's */
    residual_mlp_vulkan_void_function (*get_instance_proc_addr)(void *instance, const char *name);
    /* a VkBuffer (storage) holding the model file's bytes from model_offset on (a multiple
     * of minStorageBufferOffsetAlignment), read in place; 0: uploaded at open */
    uint64_t model_buffer, model_offset;
} residual_mlp_vulkan_device;
residual_mlp_ctx *residual_mlp_open_on_device(const char *model_path, const residual_mlp_vulkan_device *device);
/* NAME_input_buffer_VAR: the range (VkBuffer, offset, bytes) of a dynamic variable on
 * the device; for the next step it holds what the application writes there, on
 * `queue` before residual_mlp_step, instead of residual_mlp_set_VAR's values (a later set_VAR wins).
 * NAME_output_buffer_VAR: where VAR is after a step, valid until the next one; the
 * application's first read of it needs a barrier from the compute and transfer
 * stages' writes. */
int residual_mlp_input_buffer_x(residual_mlp_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);
int residual_mlp_output_buffer_x(const residual_mlp_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);
int residual_mlp_output_buffer_h(const residual_mlp_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);

#ifdef __cplusplus
}
#endif
#endif /* residual_mlp_H */
