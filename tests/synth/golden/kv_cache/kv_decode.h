/* kv_decode.h - graph "kv_decode", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * Standalone: needs no OpenInfer header or library.
 * Named sizes are specialized: the model's values at synthesis time:
 *   D = 4, n_layers = 2.
 *
 *   kv_decode_ctx *ctx = kv_decode_open("model.oinf");   // NULL: kv_decode_last_error() says why
 *   kv_decode_set_VAR(ctx, values, count);          // every dynamic variable, before a step
 *   kv_decode_step(ctx);                            // 0, or an error code
 *   const float *y = kv_decode_get_VAR(ctx, &count); // valid until the next step
 *   kv_decode_close(ctx);
 */
#ifndef kv_decode_H
#define kv_decode_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The temporaries' arena, planned at synthesis time (plan.json). */
#define kv_decode_ARENA_BYTES 1344u
/* The declared variables that do not live in the model file. */
#define kv_decode_STATE_BYTES 4128u
/* The weights that matrix products read, packed once by kv_decode_open into the
 * micro-kernels' panel layout (at most; plan.json lists them). */
#define kv_decode_PACKED_BYTES 0u

/* Error codes (kv_decode_last_error() has the message). */
enum { kv_decode_OK = 0, kv_decode_ERROR_ARGUMENT = 1, kv_decode_ERROR_IO = 2, kv_decode_ERROR_MODEL = 3, kv_decode_ERROR_MEMORY = 4, kv_decode_ERROR_RUNTIME = 5 };

typedef struct kv_decode_ctx kv_decode_ctx;

/* Options of kv_decode_open_with; zero means the default. */
typedef struct kv_decode_options {
    int n_threads; /* threads of the step's kernels, the caller's included;
                     0: $OPENINFER_THREADS, else every core this process may use */
} kv_decode_options;

/* Maps the model (checked against the fingerprint of the one synthesized for),
 * packs the weights of matrix products and starts the threads. */
kv_decode_ctx *kv_decode_open(const char *model_path);
kv_decode_ctx *kv_decode_open_with(const char *model_path, const kv_decode_options *options); /* options: NULL = defaults */
/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */
int kv_decode_step(kv_decode_ctx *ctx);
void kv_decode_close(kv_decode_ctx *ctx);
/* The message of this thread's last error ("" if none). */
const char *kv_decode_last_error(void);

/* x: dynamic f32[1, 4], 4 values */
int kv_decode_set_x(kv_decode_ctx *ctx, const float *values, size_t count);
const float *kv_decode_get_x(const kv_decode_ctx *ctx, size_t *count);
/* step: persistent i32[], 1 values */
const int32_t *kv_decode_get_step(const kv_decode_ctx *ctx, size_t *count);
/* len: persistent i32[], 1 values */
const int32_t *kv_decode_get_len(const kv_decode_ctx *ctx, size_t *count);
/* K: persistent table of f32[1, 4] by l, t.
 * Copies it as `openinfer run --fetch K` gives it (each index's size so far,
 * then an entry's dims; entries never written hold @init or zeros) into values,
 * its 4 dims into shape and its count into *count; values NULL asks for the
 * count and the shape only. Fails when capacity is too small. */
int kv_decode_read_K(const kv_decode_ctx *ctx, float *values, size_t capacity, size_t *count, int64_t *shape);
/* V: persistent table of f32[1, 4] by l, t.
 * Copies it as `openinfer run --fetch V` gives it (each index's size so far,
 * then an entry's dims; entries never written hold @init or zeros) into values,
 * its 4 dims into shape and its count into *count; values NULL asks for the
 * count and the shape only. Fails when capacity is too small. */
int kv_decode_read_V(const kv_decode_ctx *ctx, float *values, size_t capacity, size_t *count, int64_t *shape);
/* h: temporary f32[1, 4], 4 values */
const float *kv_decode_get_h(const kv_decode_ctx *ctx, size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* kv_decode_H */
