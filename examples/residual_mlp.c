/* residual_mlp.c - a residual MLP stack over prefix tables:
 *     h = h + relu(h @ W[l] + b[l])   for l in 0..num_layers
 * W(l) and b(l) resolve to the model tensors res.mlp.w.{l} and res.mlp.b.{l}
 * (the naming of the original project's residual_mlp_stack example, so its
 * .oinf works too); only the tensors a step touches are read.
 *
 *   ./build/examples/residual_mlp [model.oinf]   (default: a generated model) */
#include "../openinfer.h"

#include <stdio.h>
#include <stdlib.h>

OI_GRAPH(residual_mlp,
  OI_DYNAMIC( OI_VAR(x, f32[B, D]) )
  OI_VOLATILE(
    OI_VAR(W(l), f32[D, D], @pattern("res.mlp.w.{l}"))
    OI_VAR(b(l), f32[D], @pattern("res.mlp.b.{l}"))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, D])
    OI_ASSIGN(u, f32[B, D])
    OI_TRANSFER(x, h)
    OI_LOOP(layers, l, 0..num_layers,
      OI_OP(matmul, h, W[l]) OI_TO(u)
      OI_OP(add, u, b[l]) OI_TO(u)
      OI_OP(relu, u) OI_TO(u)
      OI_OP(add, h, u) OI_TO(h)
    )
    OI_RETURN()
  )
)

static oi_model *generated_model(uint8_t **bytes) {
    enum { B = 2, D = 8, L = 3 };
    oi_writer *w = oi_writer_new();
    oi_writer_add_sizevar(w, "B", B);
    oi_writer_add_sizevar(w, "D", D);
    oi_writer_add_sizevar(w, "num_layers", L);
    uint64_t wd[2] = {D, D}, bd[1] = {D};
    float m[D * D], v[D];
    for (int l = 0; l < L; l++) {
        char name[32];
        for (int i = 0; i < D * D; i++)
            m[i] = 0.05f * (float)((i * 5 + l) % 7 - 3);
        for (int i = 0; i < D; i++)
            v[i] = 0.01f * (float)(i - l);
        snprintf(name, sizeof name, "res.mlp.w.%d", l);
        oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, wd, m, NULL);
        snprintf(name, sizeof name, "res.mlp.b.%d", l);
        oi_writer_add_tensor(w, name, OI_DTYPE_F32, 1, bd, v, NULL);
    }
    size_t size = 0;
    oi_status st = oi_writer_to_memory(w, 2, bytes, &size);
    oi_writer_free(w);
    return st == OI_OK ? oi_model_open_memory(*bytes, size) : NULL;
}

int main(int argc, char **argv) {
    uint8_t *bytes = NULL;
    oi_model *model = argc > 1 ? oi_model_open(argv[1]) : generated_model(&bytes);
    uint64_t b = 0, d = 0;
    oi_simulator *sim = NULL;
    oi_executor *exec = NULL;
    float *input = NULL;
    int rc = 1;
    if (!model || oi_model_size_of(model, "B", &b) != OI_OK || oi_model_size_of(model, "D", &d) != OI_OK)
        goto done;
    sim = oi_simulator_new(model, OI_DEVICE_AUTO);
    exec = sim ? oi_simulator_make_executor(sim, residual_mlp()) : NULL;
    input = (float *)malloc((size_t)(b * d) * sizeof *input);
    if (!exec || !input)
        goto done;
    for (uint64_t i = 0; i < b * d; i++)
        input[i] = (float)(i % 5) * 0.25f - 0.5f;
    OI_INSERT(exec, x, input, (size_t)(b * d));
    if (oi_executor_run_step(exec) != OI_OK)
        goto done;
    OI_FETCH(exec, h, f32);
    printf("h: [%lld, %lld]; row 0 = [", (long long)h.shape[0], (long long)h.shape[1]);
    for (int64_t i = 0; i < h.shape[1] && i < 8; i++)
        printf(i ? ", %.5f" : "%.5f", (double)h.data[i]);
    printf("%s]\nmodel tensors read: %zu of %zu\n", h.shape[1] > 8 ? ", ..." : "", oi_model_loaded_tensor_count(model),
           oi_model_tensor_count(model));
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "residual_mlp: %s\n", oi_last_error());
    free(input);
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    oi_free(bytes);
    return rc;
}
