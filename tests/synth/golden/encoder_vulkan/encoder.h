/* encoder.h - graph "encoder", synthesized by OpenInfer 0.1.0 for Vulkan (GLSL kernels, C11 host code).
 * Standalone: needs no OpenInfer header or library.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 1, D = 384, Dh = 32, F = 1536, H = 12, S = 128, num_layers = 2.
 *
 *   encoder_ctx *ctx = encoder_open("model.oinf");   // NULL: encoder_last_error() says why
 *   encoder_set_VAR(ctx, values, count);          // every dynamic variable, before a step
 *   encoder_step(ctx);                            // 0, or an error code
 *   const float *y = encoder_get_VAR(ctx, &count); // valid until the next step
 *   encoder_close(ctx);
 */
#ifndef encoder_H
#define encoder_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The temporaries' arena, planned at synthesis time (plan.json). */
#define encoder_ARENA_BYTES 3735552u
/* The declared variables that do not live in the model file. */
#define encoder_STATE_BYTES 196608u

/* Error codes (encoder_last_error() has the message). */
enum { encoder_OK = 0, encoder_ERROR_ARGUMENT = 1, encoder_ERROR_IO = 2, encoder_ERROR_MODEL = 3, encoder_ERROR_MEMORY = 4, encoder_ERROR_RUNTIME = 5 };

typedef struct encoder_ctx encoder_ctx;

/* Options of encoder_open_with; zero means the default. */
typedef struct encoder_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use
                     (unused: the kernels run on the GPU) */
} encoder_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * uploads it to the GPU and records the step's command buffer. */
encoder_ctx *encoder_open(const char *model_path);
encoder_ctx *encoder_open_with(const char *model_path, const encoder_options *options); /* options: NULL = defaults */
/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */
int encoder_step(encoder_ctx *ctx);
void encoder_close(encoder_ctx *ctx);
/* The message of this thread's last error ("" if none). */
const char *encoder_last_error(void);

/* x: dynamic f32[128, 384], 49152 values */
int encoder_set_x(encoder_ctx *ctx, const float *values, size_t count);
const float *encoder_get_x(const encoder_ctx *ctx, size_t *count);
/* h: temporary f32[128, 384], 49152 values */
const float *encoder_get_h(const encoder_ctx *ctx, size_t *count);

/* Vulkan: the last step's GPU time in ms (timestamps; 0 without them),
 * and the dispatches and barriers of the recorded step. */
double encoder_gpu_ms(const encoder_ctx *ctx);
int encoder_dispatches(const encoder_ctx *ctx);
int encoder_barriers(const encoder_ctx *ctx);
/* Built with -DOI_VK_PROFILE=N (a timestamp after each of the step's first N
 * dispatches): the last step's GPU time of each, in ms from the previous
 * timestamp, and the kernel (NAME_kK.comp) it ran; returns how many (0
 * otherwise). For finding the slow kernels, not for timing a step. */
int encoder_dispatch_ms(const encoder_ctx *ctx, double *ms, int *kernel, int max);

/* Vulkan interop (docs/synthesizer.md, "Vulkan interop"). Handles travel as void *
 * (VkInstance, VkPhysicalDevice, VkDevice, VkQueue) and buffers as uint64_t
 * (VkBuffer), so this header needs no vulkan.h. encoder_open_on_device runs the
 * folder on the application's device, which must have on:
 *   nothing beyond Vulkan 1.1 and a queue with compute.
 * Steps are submitted to `queue` and waited for (its fence) before encoder_step
 * returns; nothing here destroys the application's handles. */
typedef void (*encoder_vulkan_void_function)(void);
typedef struct encoder_vulkan_device {
    void *instance, *physical_device, *device, *queue;
    uint32_t queue_family_index;
    /* vkGetInstanceProcAddr of the loader that made `instance`; NULL: libvulkan's */
    encoder_vulkan_void_function (*get_instance_proc_addr)(void *instance, const char *name);
    /* a VkBuffer (storage) holding the model file's bytes from model_offset on (a multiple
     * of minStorageBufferOffsetAlignment), read in place; 0: uploaded at open */
    uint64_t model_buffer, model_offset;
} encoder_vulkan_device;
encoder_ctx *encoder_open_on_device(const char *model_path, const encoder_vulkan_device *device);
/* NAME_input_buffer_VAR: the range (VkBuffer, offset, bytes) of a dynamic variable on
 * the device; for the next step it holds what the application writes there, on
 * `queue` before encoder_step, instead of encoder_set_VAR's values (a later set_VAR wins).
 * NAME_output_buffer_VAR: where VAR is after a step, valid until the next one; the
 * application's first read of it needs a barrier from the compute and transfer
 * stages' writes. */
int encoder_input_buffer_x(encoder_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);
int encoder_output_buffer_x(const encoder_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);
int encoder_output_buffer_h(const encoder_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);

#ifdef __cplusplus
}
#endif
#endif /* encoder_H */
