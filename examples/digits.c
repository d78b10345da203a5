/* digits.c - a real model: the MLP that tests/digits/gen_digits.py trained on
 * scikit-learn's 8x8 digits, classifying a few of its held-out images.
 *     probs = softmax(relu(x W1 + b1) W2 + b2)
 *
 *   ./build/examples/digits [tests/digits/digits_mlp.oinf] [how many]   (from the repository root) */
#include "../openinfer.h"

#include <stdio.h>
#include <stdlib.h>

OI_GRAPH(digits,
  OI_DYNAMIC( OI_VAR(image, f32[1, F]) )
  OI_VOLATILE(
    OI_VAR(w1, f32[F, H], @ref("fc1.w"))  OI_VAR(b1, f32[H], @ref("fc1.b"))
    OI_VAR(w2, f32[H, C], @ref("fc2.w"))  OI_VAR(b2, f32[C], @ref("fc2.b"))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, H])
    OI_ASSIGN(logits, f32[1, C])
    OI_ASSIGN(probs, f32[1, C])
    OI_OP(matmul, image, w1) OI_TO(h)
    OI_OP(add, h, b1) OI_TO(h)
    OI_OP(relu, h) OI_TO(h)
    OI_OP(matmul, h, w2) OI_TO(logits)
    OI_OP(add, logits, b2) OI_TO(logits)
    OI_OP(softmax, logits) OI_TO(probs)
    OI_RETURN()
  )
)

/* The 8x8 image as text, darker pixels as denser characters. */
static void print_image(const float *pixels) {
    static const char shades[] = " .:-=+*#%@";
    for (int r = 0; r < 8; r++) {
        printf("    ");
        for (int c = 0; c < 8; c++) {
            int level = (int)(pixels[r * 8 + c] * 9.0f + 0.5f);
            putchar(shades[level < 0 ? 0 : level > 9 ? 9 : level]);
            putchar(shades[level < 0 ? 0 : level > 9 ? 9 : level]);
        }
        putchar('\n');
    }
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/digits/digits_mlp.oinf";
    int shown = argc > 2 ? atoi(argv[2]) : 3;
    oi_model *model = oi_model_open(path);
    const oi_tensor_info *images = model ? oi_model_find_tensor(model, "test.x") : NULL;
    const oi_tensor_info *labels = model ? oi_model_find_tensor(model, "test.labels") : NULL;
    const void *x = NULL, *y = NULL;
    oi_simulator *sim = NULL;
    oi_executor *exec = NULL;
    int rc = 1;
    if (!images || !labels || images->dtype != OI_DTYPE_F32 || images->ndim != 2 || images->dims[1] != 64 ||
        labels->dtype != OI_DTYPE_I64 || oi_model_tensor_data(model, images, &x) != OI_OK ||
        oi_model_tensor_data(model, labels, &y) != OI_OK)
        goto done;
    sim = oi_simulator_new(model, OI_DEVICE_CPU);
    exec = sim ? oi_simulator_make_executor(sim, digits()) : NULL;
    if (!exec)
        goto done;
    for (int i = 0; i < shown && (uint64_t)i < images->dims[0]; i++) {
        const float *pixels = (const float *)x + (size_t)i * 64;
        OI_INSERT(exec, image, pixels, 64);
        if (oi_executor_run_step(exec) != OI_OK)
            goto done;
        OI_FETCH(exec, probs, f32);
        int best = 0;
        for (int c = 1; c < (int)probs.len; c++)
            best = probs.data[c] > probs.data[best] ? c : best;
        print_image(pixels);
        printf("image %d: predicted %d (p = %.3f), label %lld\n\n", i, best, (double)probs.data[best],
               (long long)((const int64_t *)y)[i]);
    }
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "digits: %s: %s\n", path, oi_last_error());
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    return rc;
}
