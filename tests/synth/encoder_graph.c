/* encoder_graph.c - bench_encoder's 2-layer encoder block (its DSL, as it
 * is) with a seeded model of its sizes, for the synthesizer's parity test
 * and bench/synth_vs_sim.py (export_example.c includes this file). */
#include "../../bench/bench_encoder.c"

/* B = 1, S = 128, D = 384, H = 12, Dh = 32, F = 1536, 2 layers; weights
 * ~ 0.02 x uniform(-sqrt 3, sqrt 3) (std 0.02, as gen_encoder.py's
 * normal ones), norms' scales near 1. */
static float encoder_uniform(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static int encoder_tensor(oi_writer *w, const char *pattern, int l, uint64_t rows, uint64_t cols, float base,
                          float spread, uint32_t *state) {
    char name[64];
    snprintf(name, sizeof name, pattern, l);
    size_t n = (size_t)(rows * (cols ? cols : 1));
    float *v = (float *)malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++)
        v[i] = base + spread * encoder_uniform(state);
    uint64_t dims[2] = {rows, cols};
    oi_status st = oi_writer_add_tensor(w, name, OI_DTYPE_F32, cols ? 2u : 1u, dims, v, NULL);
    free(v);
    return st != OI_OK;
}

static oi_model *encoder_model(uint8_t **bytes) {
    enum { B = 1, S = 128, D = 384, H = 12, DH = 32, F = 1536, L = 2 };
    const float w = 0.02f * 1.7320508f;
    oi_writer *wr = oi_writer_new();
    uint32_t state = 2024;
    int bad = !wr;
    const char *sizes[] = {"B", "S", "D", "H", "Dh", "F", "num_layers"};
    const uint64_t values[] = {B, S, D, H, DH, F, L};
    for (int i = 0; i < 7 && !bad; i++)
        bad |= oi_writer_add_sizevar(wr, sizes[i], values[i]) != OI_OK;
    for (int l = 0; l < L && !bad; l++) {
        const char *square[] = {"enc.%d.wq", "enc.%d.wk", "enc.%d.wv", "enc.%d.wo"};
        const char *bias[] = {"enc.%d.bq", "enc.%d.bk", "enc.%d.bv", "enc.%d.bo", "enc.%d.b2", "enc.%d.ln1_b",
                              "enc.%d.ln2_b"};
        for (int i = 0; i < 4; i++)
            bad |= encoder_tensor(wr, square[i], l, D, D, 0.0f, w, &state);
        for (int i = 0; i < 7; i++)
            bad |= encoder_tensor(wr, bias[i], l, D, 0, 0.0f, 0.02f, &state);
        bad |= encoder_tensor(wr, "enc.%d.w1", l, D, F, 0.0f, w, &state);
        bad |= encoder_tensor(wr, "enc.%d.b1", l, F, 0, 0.0f, 0.02f, &state);
        bad |= encoder_tensor(wr, "enc.%d.w2", l, F, D, 0.0f, w, &state);
        bad |= encoder_tensor(wr, "enc.%d.ln1_g", l, D, 0, 1.0f, 0.1f, &state);
        bad |= encoder_tensor(wr, "enc.%d.ln2_g", l, D, 0, 1.0f, 0.1f, &state);
    }
    size_t size = 0;
    bad |= bad || oi_writer_to_memory(wr, 2, bytes, &size) != OI_OK;
    oi_writer_free(wr);
    return bad ? NULL : oi_model_open_memory(*bytes, size);
}
