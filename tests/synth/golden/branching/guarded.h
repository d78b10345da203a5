/* guarded.h - graph "guarded", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * Standalone: needs no OpenInfer header or library.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 16.
 *
 *   guarded_ctx *ctx = guarded_open("model.oinf");   // NULL: guarded_last_error() says why
 *   guarded_set_VAR(ctx, values, count);          // every dynamic variable, before a step
 *   guarded_step(ctx);                            // 0, or an error code
 *   const float *y = guarded_get_VAR(ctx, &count); // valid until the next step
 *   guarded_close(ctx);
 */
#ifndef guarded_H
#define guarded_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The temporaries' arena, planned at synthesis time (plan.json). */
#define guarded_ARENA_BYTES 13u
/* The declared variables that do not live in the model file. */
#define guarded_STATE_BYTES 52u
/* The weights that matrix products read, packed once by guarded_open into the
 * micro-kernels' panel layout (at most; plan.json lists them). */
#define guarded_PACKED_BYTES 0u

/* Error codes (guarded_last_error() has the message). */
enum { guarded_OK = 0, guarded_ERROR_ARGUMENT = 1, guarded_ERROR_IO = 2, guarded_ERROR_MODEL = 3, guarded_ERROR_MEMORY = 4, guarded_ERROR_RUNTIME = 5 };

typedef struct guarded_ctx guarded_ctx;

/* Options of guarded_open_with; zero means the default. */
typedef struct guarded_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use */
} guarded_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * packs the weights of matrix products and starts the threads. */
guarded_ctx *guarded_open(const char *model_path);
guarded_ctx *guarded_open_with(const char *model_path, const guarded_options *options); /* options: NULL = defaults */
/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */
int guarded_step(guarded_ctx *ctx);
void guarded_close(guarded_ctx *ctx);
/* The message of this thread's last error ("" if none). */
const char *guarded_last_error(void);

/* x: dynamic f32[1, 3], 3 values */
int guarded_set_x(guarded_ctx *ctx, const float *values, size_t count);
const float *guarded_get_x(const guarded_ctx *ctx, size_t *count);
/* W: constant f32[3, 3], 9 values */
const float *guarded_get_W(const guarded_ctx *ctx, size_t *count);
/* h: temporary f32[1, 3], 3 values */
const float *guarded_get_h(const guarded_ctx *ctx, size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* guarded_H */
