/* residual_mlp.h - graph "residual_mlp", synthesized by OpenInfer 0.1.0 for the CPU (C11).
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
#define residual_mlp_ARENA_BYTES 64u
/* The declared variables that do not live in the model file. */
#define residual_mlp_STATE_BYTES 64u
/* The weights that matrix products read, packed once by residual_mlp_open into the
 * micro-kernels' panel layout (at most; plan.json lists them). */
#define residual_mlp_PACKED_BYTES 0u

/* Error codes (residual_mlp_last_error() has the message). */
enum { residual_mlp_OK = 0, residual_mlp_ERROR_ARGUMENT = 1, residual_mlp_ERROR_IO = 2, residual_mlp_ERROR_MODEL = 3, residual_mlp_ERROR_MEMORY = 4, residual_mlp_ERROR_RUNTIME = 5 };

typedef struct residual_mlp_ctx residual_mlp_ctx;

/* Options of residual_mlp_open_with; zero means the default. */
typedef struct residual_mlp_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use */
} residual_mlp_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * packs the weights of matrix products and starts the threads. */
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

#ifdef __cplusplus
}
#endif
#endif /* residual_mlp_H */
