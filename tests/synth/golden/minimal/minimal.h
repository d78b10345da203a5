/* minimal.h - graph "minimal", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * Standalone: needs no OpenInfer header or library.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 16.
 *
 *   minimal_ctx *ctx = minimal_open("model.oinf");   // NULL: minimal_last_error() says why
 *   minimal_set_VAR(ctx, values, count);          // every dynamic variable, before a step
 *   minimal_step(ctx);                            // 0, or an error code
 *   const float *y = minimal_get_VAR(ctx, &count); // valid until the next step
 *   minimal_close(ctx);
 */
#ifndef minimal_H
#define minimal_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The temporaries' arena, planned at synthesis time (plan.json). */
#define minimal_ARENA_BYTES 0u
/* The declared variables that do not live in the model file. */
#define minimal_STATE_BYTES 128u
/* The weights that matrix products read, packed once by minimal_open into the
 * micro-kernels' panel layout (at most; plan.json lists them). */
#define minimal_PACKED_BYTES 0u

/* Error codes (minimal_last_error() has the message). */
enum { minimal_OK = 0, minimal_ERROR_ARGUMENT = 1, minimal_ERROR_IO = 2, minimal_ERROR_MODEL = 3, minimal_ERROR_MEMORY = 4, minimal_ERROR_RUNTIME = 5 };

typedef struct minimal_ctx minimal_ctx;

/* Options of minimal_open_with; zero means the default. */
typedef struct minimal_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use */
} minimal_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * packs the weights of matrix products and starts the threads. */
minimal_ctx *minimal_open(const char *model_path);
minimal_ctx *minimal_open_with(const char *model_path, const minimal_options *options); /* options: NULL = defaults */
/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */
int minimal_step(minimal_ctx *ctx);
void minimal_close(minimal_ctx *ctx);
/* The message of this thread's last error ("" if none). */
const char *minimal_last_error(void);

/* x: dynamic f32[16], 16 values */
int minimal_set_x(minimal_ctx *ctx, const float *values, size_t count);
const float *minimal_get_x(const minimal_ctx *ctx, size_t *count);
/* a: volatile f32[16], 16 values */
const float *minimal_get_a(const minimal_ctx *ctx, size_t *count);
/* y: volatile f32[16], 16 values */
const float *minimal_get_y(const minimal_ctx *ctx, size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* minimal_H */
