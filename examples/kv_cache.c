/* kv_cache.c - a decode loop with a KV cache over several steps.
 *
 * Every step feeds one token embedding x; each layer projects it to a key
 * and a value, appends them to the persistent tables K(l, t) and V(l, t),
 * and attends over every cached position with linear (softmax-free)
 * attention: att = sum_t (q . k_t) v_t. The model (the projections
 * layer.{l}.wk / layer.{l}.wv) is generated here in memory.
 *
 *   ./build/examples/kv_cache [steps] */
#include "../openinfer.h"

#include <stdio.h>
#include <stdlib.h>

enum { D = 4, LAYERS = 2 };

OI_GRAPH(kv_decode,
  OI_DYNAMIC( OI_VAR(x, f32[1, D]) )
  OI_CONSTANT(
    OI_VAR(Wk(l), f32[D, D], @pattern("layer.{l}.wk"))
    OI_VAR(Wv(l), f32[D, D], @pattern("layer.{l}.wv"))
  )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))        /* where this token goes        */
    OI_VAR(len, i32, @init(0))         /* how many tokens are cached   */
    OI_VAR(K(l, t), f32[1, D], @table, @fixed(t=64))
    OI_VAR(V(l, t), f32[1, D], @table, @fixed(t=64))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, D])
    OI_ASSIGN(k, f32[1, D])
    OI_ASSIGN(v, f32[1, D])
    OI_ASSIGN(keys, f32[?, 1, D])      /* ?: len, set at run time      */
    OI_ASSIGN(vals, f32[?, 1, D])
    OI_ASSIGN(mix, f32[?, 1, D])
    OI_ASSIGN(score, f32[?, 1, 1])
    OI_ASSIGN(att, f32[1, D])
    OI_TRANSFER(x, h)
    OI_CACHE_INCREMENT(len)
    OI_LOOP(layers, l, 0..n_layers,
      OI_OP(matmul, h, Wk[l]) OI_TO(k)
      OI_OP(matmul, h, Wv[l]) OI_TO(v)
      OI_CACHE_WRITE(k, K[l, step])
      OI_CACHE_WRITE(v, V[l, step])
      OI_CACHE_READ(K[l, 0..len], keys)
      OI_CACHE_READ(V[l, 0..len], vals)
      OI_OP(mul, keys, h) OI_TO(mix)                      /* q . k_t per position */
      OI_OP(sum_axis, mix, axes=[2], keepdims=true) OI_TO(score)
      OI_OP(mul, score, vals) OI_TO(mix)
      OI_OP(sum_axis, mix, axes=[0]) OI_TO(att)
      OI_OP(add, h, att) OI_TO(h)
    )
    OI_CACHE_INCREMENT(step)
    OI_RETURN()
  )
)

static oi_model *make_model(uint8_t **bytes) {
    oi_writer *w = oi_writer_new();
    uint64_t dims[2] = {D, D};
    float m[D * D];
    oi_writer_add_sizevar(w, "D", D);
    oi_writer_add_sizevar(w, "n_layers", LAYERS);
    for (int l = 0; l < LAYERS; l++) {
        char name[32];
        for (int i = 0; i < D * D; i++) /* small, deterministic weights */
            m[i] = 0.1f * (float)((i * 7 + l * 3) % 5 - 2);
        snprintf(name, sizeof name, "layer.%d.wk", l);
        oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, dims, m, NULL);
        for (int i = 0; i < D * D; i++)
            m[i] = (i % (D + 1) == 0) ? 0.5f : 0.0f; /* 0.5 * identity */
        snprintf(name, sizeof name, "layer.%d.wv", l);
        oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, dims, m, NULL);
    }
    size_t size = 0;
    oi_status st = oi_writer_to_memory(w, 2, bytes, &size);
    oi_writer_free(w);
    return st == OI_OK ? oi_model_open_memory(*bytes, size) : NULL;
}

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 5;
    uint8_t *bytes = NULL;
    oi_model *model = make_model(&bytes);
    oi_simulator *sim = model ? oi_simulator_new(model, OI_DEVICE_AUTO) : NULL;
    oi_executor *exec = sim ? oi_simulator_make_executor(sim, kv_decode()) : NULL;
    int rc = exec ? 0 : 1;
    for (int s = 0; s < steps && rc == 0; s++) {
        float token[D];
        for (int i = 0; i < D; i++)
            token[i] = (float)((s + i) % 3) - 1.0f;
        OI_INSERT(exec, x, token, D);
        if (oi_executor_run_step(exec) != OI_OK) {
            rc = 1;
            break;
        }
        OI_FETCH(exec, h, f32);
        OI_FETCH(exec, keys, f32);
        printf("step %d: cached %lld positions, h = [%.4f, %.4f, %.4f, %.4f]\n", s, (long long)keys.shape[0],
               (double)h.data[0], (double)h.data[1], (double)h.data[2], (double)h.data[3]);
    }
    if (rc)
        fprintf(stderr, "kv_cache: %s\n", oi_last_error());
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    oi_free(bytes);
    return rc;
}
