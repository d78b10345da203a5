/* encoder_model.h - the model of the GPU encoder benchmarks (encoder_peer.c,
 * encoder_precision.c): DIR/encoder.oinf, written by
 * bench/encoder/gen_encoder.py. Included after ../bench_encoder.c. */

/* The model in dir and its sizes B, S and D; NULL after saying on stdout
 * why and how to write it (`prog`: the benchmark's name). */
static oi_model *open_encoder_in(const char *prog, const char *dir, uint64_t *b, uint64_t *s, uint64_t *d) {
    char path[1100];
    snprintf(path, sizeof path, "%s/encoder.oinf", dir);
    oi_model *m = open_encoder(path, b, s, d);
    if (!m)
        printf("%s: %s: %s (write it with python3 bench/encoder/gen_encoder.py %s)\n", prog, path, oi_last_error(), dir);
    return m;
}
