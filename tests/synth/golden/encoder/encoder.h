/* encoder.h - graph "encoder", synthesized by OpenInfer 0.1.0 for the CPU (C11).
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
#define encoder_ARENA_BYTES 2162688u
/* The declared variables that do not live in the model file. */
#define encoder_STATE_BYTES 196608u
/* The weights that matrix products read, packed once by encoder_open into the
 * micro-kernels' panel layout (at most; plan.json lists them). */
#define encoder_PACKED_BYTES 14155776u

/* Error codes (encoder_last_error() has the message). */
enum { encoder_OK = 0, encoder_ERROR_ARGUMENT = 1, encoder_ERROR_IO = 2, encoder_ERROR_MODEL = 3, encoder_ERROR_MEMORY = 4, encoder_ERROR_RUNTIME = 5 };

typedef struct encoder_ctx encoder_ctx;

/* Options of encoder_open_with; zero means the default. */
typedef struct encoder_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use */
} encoder_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * packs the weights of matrix products and starts the threads. */
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

#ifdef __cplusplus
}
#endif
#endif /* encoder_H */
