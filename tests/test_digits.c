/* test_digits.c - a small real model end to end: an MLP trained on
 * scikit-learn's digits (tests/digits/gen_digits.py, plain numpy training)
 * runs its held-out batch through the DSL graph below on the simulator.
 * The references are numpy's, stored in the same .oinf:
 *   - argmax identical to numpy's for every sample,
 *   - logits within 1e-5 of numpy's (float64 arithmetic on the f32 weights),
 *   - softmax probabilities within 1e-6.
 * It prints the accuracy against the true labels.
 *
 * Run from the repository root (meson does): build/tests/test_digits [model.oinf] */
#include "../openinfer.h"
#include "check.h"

#include <stdlib.h>

#define DIGITS_MODEL "tests/digits/digits_mlp.oinf"

/* logits = relu(x W1 + b1) W2 + b2; probs = softmax(logits); pred = argmax. */
OI_GRAPH(digits_mlp,
  OI_DYNAMIC( OI_VAR(x, f32[N, F]) )
  OI_VOLATILE(
    OI_VAR(w1, f32[F, H], @ref("fc1.w"))
    OI_VAR(b1, f32[H], @ref("fc1.b"))
    OI_VAR(w2, f32[H, C], @ref("fc2.w"))
    OI_VAR(b2, f32[C], @ref("fc2.b"))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[N, H])
    OI_ASSIGN(logits, f32[N, C])
    OI_ASSIGN(probs, f32[N, C])
    OI_ASSIGN(pred, i64[N])
    OI_OP(matmul, x, w1) OI_TO(h)
    OI_OP(add, h, b1) OI_TO(h)
    OI_OP(relu, h) OI_TO(h)
    OI_OP(matmul, h, w2) OI_TO(logits)
    OI_OP(add, logits, b2) OI_TO(logits)
    OI_OP(softmax, logits, axis=-1) OI_TO(probs)
    OI_OP(argmax_axis, logits, axis=1) OI_TO(pred)
    OI_RETURN()
  )
)

/* The bytes of a model tensor, checked for dtype and element count. */
static const void *model_tensor(const oi_model *m, const char *name, oi_dtype dtype, uint64_t numel) {
    const oi_tensor_info *t = oi_model_find_tensor(m, name);
    const void *data = NULL;
    CHECK_MSG(t != NULL, "model tensor %s missing", name);
    if (!t)
        return NULL;
    CHECK_MSG(t->dtype == dtype && t->numel == numel, "%s: dtype %s, %llu elements", name,
              oi_dtype_name(t->dtype), (unsigned long long)t->numel);
    CHECK_OK(oi_model_tensor_data(m, t, &data));
    return t->dtype == dtype && t->numel == numel ? data : NULL;
}

static float metadata_f32(const oi_model *m, const char *key) {
    const oi_metadata_info *info = oi_model_find_metadata(m, key);
    float v = NAN;
    if (info && info->type == OI_DTYPE_F32)
        memcpy(&v, info->payload, sizeof v);
    return v;
}

/* Largest |a - b| over n values. */
static double max_abs_diff(const float *a, const float *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst))
            worst = d; /* NaN wins too */
    }
    return worst;
}

static void run_digits(const oi_model *m, uint64_t n, uint64_t f, uint64_t hidden, uint64_t c) {
    const float *x = (const float *)model_tensor(m, "test.x", OI_DTYPE_F32, n * f);
    const int64_t *labels = (const int64_t *)model_tensor(m, "test.labels", OI_DTYPE_I64, n);
    const float *ref_logits = (const float *)model_tensor(m, "ref.logits", OI_DTYPE_F32, n * c);
    const float *ref_probs = (const float *)model_tensor(m, "ref.probs", OI_DTYPE_F32, n * c);
    const int64_t *ref_pred = (const int64_t *)model_tensor(m, "ref.pred", OI_DTYPE_I64, n);
    if (!x || !labels || !ref_logits || !ref_probs || !ref_pred)
        return;

    oi_simulator *sim = oi_simulator_new(m, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, digits_mlp()) : NULL;
    CHECK_MSG(e != NULL, "executor: %s", oi_last_error());
    if (e) {
        CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, x, (size_t)(n * f)));
        CHECK_OK(oi_executor_run_step(e));
        oi_tensor_view logits, probs, pred;
        CHECK_OK(oi_executor_fetch(e, "logits", OI_DTYPE_F32, &logits));
        CHECK_OK(oi_executor_fetch(e, "probs", OI_DTYPE_F32, &probs));
        CHECK_OK(oi_executor_fetch(e, "pred", OI_DTYPE_I64, &pred));
        CHECK_EQ_INT(logits.len, n * c);
        CHECK_EQ_INT(probs.len, n * c);
        CHECK_EQ_INT(pred.len, n);
        if (logits.len == n * c && probs.len == n * c && pred.len == n) {
            double logit_err = max_abs_diff((const float *)logits.data, ref_logits, (size_t)(n * c));
            double prob_err = max_abs_diff((const float *)probs.data, ref_probs, (size_t)(n * c));
            const int64_t *p = (const int64_t *)pred.data;
            size_t mismatches = 0, correct = 0;
            for (uint64_t i = 0; i < n; i++) {
                CHECK_MSG(p[i] == ref_pred[i], "sample %llu: argmax %lld, numpy %lld", (unsigned long long)i,
                          (long long)p[i], (long long)ref_pred[i]);
                mismatches += p[i] != ref_pred[i];
                correct += p[i] == labels[i];
            }
            CHECK_MSG(logit_err <= 1e-5, "logits differ from numpy by %.3g", logit_err);
            CHECK_MSG(prob_err <= 1e-6, "probabilities differ from numpy by %.3g", prob_err);
            printf("digits MLP %llu -> %llu -> %llu: %llu test samples, accuracy %.4f (numpy: %.4f), "
                   "argmax mismatches vs numpy %zu, max |logit - numpy| %.3g, max |prob - numpy| %.3g\n",
                   (unsigned long long)f, (unsigned long long)hidden, (unsigned long long)c,
                   (unsigned long long)n, (double)correct / (double)n, (double)metadata_f32(m, "test_accuracy"),
                   mismatches, logit_err, prob_err);
        }
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : DIGITS_MODEL;
    oi_model *m = oi_model_open(path);
    CHECK_MSG(m != NULL, "%s: %s (regenerate with python3 tests/digits/gen_digits.py)", path, oi_last_error());
    if (m) {
        uint64_t n = 0, f = 0, hidden = 0, c = 0;
        CHECK_OK(oi_model_size_of(m, "N", &n));
        CHECK_OK(oi_model_size_of(m, "F", &f));
        CHECK_OK(oi_model_size_of(m, "H", &hidden));
        CHECK_OK(oi_model_size_of(m, "C", &c));
        CHECK(n > 0 && f == 64 && c == 10);
        if (n > 0 && f == 64 && c == 10)
            run_digits(m, n, f, hidden, c);
        oi_model_close(m);
    }
    return check_result("test_digits");
}
