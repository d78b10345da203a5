/* export_example.c - one example program's graph and a model for it, as
 * files: the synthesizer's tests hand them to `openinfer synth` and
 * `openinfer run`. Built once per example with
 *     -DOI_EXAMPLE_FILE="examples/NAME.c" -DOI_EXAMPLE_GRAPH=graph_fn
 *     [-DOI_EXAMPLE_MODEL=model_fn]   (the example's own model builder)
 *
 *   export_example GRAPH.json MODEL.oinf
 * Without a model builder of its own, the model holds the example's named
 * sizes and seeded random tensors for what it links (oi_example_sizes). */
#define main oi_example_main
#include OI_EXAMPLE_FILE
#undef main

#include <stdio.h>
#include <string.h>

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    return fclose(f) != 0 || bad;
}

#ifdef OI_EXAMPLE_MODEL
#include "../../openinfer_impl/internal.h" /* oi__model_raw_bytes */

/* The example's own model, written byte for byte. */
static int write_model(const char *path) {
    uint8_t *bytes = NULL;
    oi_model *m = OI_EXAMPLE_MODEL(&bytes);
    if (!m)
        return 1;
    const uint8_t *raw;
    uint64_t size, data_at;
    oi__model_raw_bytes(m, &raw, &size, &data_at);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(raw, 1, (size_t)size, f) != (size_t)size;
    if (f)
        bad |= fclose(f) != 0;
    oi_model_close(m);
    oi_free(bytes);
    return bad;
}
#else
/* Sizes and tensors for examples that read their model from a file. */
static int write_model(const char *path) {
    oi_writer *w = oi_writer_new();
    if (!w)
        return 1;
    uint32_t state = 7;
    enum { B = 16 };
    oi_writer_add_sizevar(w, "B", B);
    float a[B];
    for (int i = 0; i < B; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    uint64_t dims[1] = {B};
    oi_writer_add_tensor(w, "a", OI_DTYPE_F32, 1, dims, a, NULL);
    oi_status st = oi_writer_write_file(w, 2, path);
    oi_writer_free(w);
    return st != OI_OK;
}
#endif

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s GRAPH.json MODEL.oinf\n", argv[0]);
        return 2;
    }
    const oi_graph *g = OI_EXAMPLE_GRAPH();
    char *json = g ? oi_graph_to_json(g) : NULL;
    if (!json || write_text(argv[1], json) != 0 || write_model(argv[2]) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], oi_last_error());
        oi_free(json);
        return 1;
    }
    oi_free(json);
    return 0;
}
