/* digits.h - graph "digits", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * Standalone: needs no OpenInfer header or library.
 * Named sizes are specialized: the model's values at synthesis time:
 *   C = 10, F = 64, H = 32, N = 359.
 *
 *   digits_ctx *ctx = digits_open("model.oinf");   // NULL: digits_last_error() says why
 *   digits_set_VAR(ctx, values, count);          // every dynamic variable, before a step
 *   digits_step(ctx);                            // 0, or an error code
 *   const float *y = digits_get_VAR(ctx, &count); // valid until the next step
 *   digits_close(ctx);
 */
#ifndef digits_H
#define digits_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The temporaries' arena, planned at synthesis time (plan.json). */
#define digits_ARENA_BYTES 168u
/* The declared variables that do not live in the model file. */
#define digits_STATE_BYTES 256u
/* The weights that matrix products read, packed once by digits_open into the
 * micro-kernels' panel layout (at most; plan.json lists them). */
#define digits_PACKED_BYTES 0u

/* Error codes (digits_last_error() has the message). */
enum { digits_OK = 0, digits_ERROR_ARGUMENT = 1, digits_ERROR_IO = 2, digits_ERROR_MODEL = 3, digits_ERROR_MEMORY = 4, digits_ERROR_RUNTIME = 5 };

typedef struct digits_ctx digits_ctx;

/* Options of digits_open_with; zero means the default. */
typedef struct digits_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use */
} digits_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * packs the weights of matrix products and starts the threads. */
digits_ctx *digits_open(const char *model_path);
digits_ctx *digits_open_with(const char *model_path, const digits_options *options); /* options: NULL = defaults */
/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */
int digits_step(digits_ctx *ctx);
void digits_close(digits_ctx *ctx);
/* The message of this thread's last error ("" if none). */
const char *digits_last_error(void);

/* image: dynamic f32[1, 64], 64 values */
int digits_set_image(digits_ctx *ctx, const float *values, size_t count);
const float *digits_get_image(const digits_ctx *ctx, size_t *count);
/* w1: volatile f32[64, 32], 2048 values */
const float *digits_get_w1(const digits_ctx *ctx, size_t *count);
/* b1: volatile f32[32], 32 values */
const float *digits_get_b1(const digits_ctx *ctx, size_t *count);
/* w2: volatile f32[32, 10], 320 values */
const float *digits_get_w2(const digits_ctx *ctx, size_t *count);
/* b2: volatile f32[10], 10 values */
const float *digits_get_b2(const digits_ctx *ctx, size_t *count);
/* probs: temporary f32[1, 10], 10 values */
const float *digits_get_probs(const digits_ctx *ctx, size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* digits_H */
