/* test_memory.c - oi_estimate_memory's figures, computed by hand, and the
 * memory check when an executor is made (torchless's memory-aware init). */
#include "../openinfer.h"
#include "check.h"

#include <stdlib.h>

OI_GRAPH(estimated,
  OI_DYNAMIC( OI_VAR(x, f32[B, D]) )                 /* intermediate: 2*8*4 = 64 B   */
  OI_VOLATILE(
    OI_VAR(w, f32[D, D])                             /* model weight: 8*8*4 = 256 B  */
    OI_VAR(W(l), f32[D, D], @pattern("layer.{l}.w")) /* 3 model tensors: 768 B       */
  )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))                      /* 4 B                          */
    OI_VAR(K(t), f16[D], @table, @fixed(t=16))       /* 16 entries * 16 B = 256 B    */
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, D])                          /* intermediate: 64 B           */
    OI_OP(matmul, x, w) OI_TO(h)
    OI_LOOP(layers, l, 0..3,
      OI_OP(matmul, h, W[l]) OI_TO(h)
    )
    OI_RETURN()
  )
)

OI_GRAPH(too_big,
  OI_PERSISTENT( OI_VAR(K(t), f32[1024, 1024], @table, @fixed(t=10000000)) ) /* 40 TiB */
  OI_BLOCK(entry, OI_RETURN())
)

OI_GRAPH(unbounded,
  OI_PERSISTENT( OI_VAR(K(t), f32[4], @table) )
  OI_BLOCK(entry, OI_RETURN())
)

static uint8_t *model_bytes(size_t *size) {
    static float zeros[64];
    const uint64_t dd[2] = {8, 8};
    oi_writer *w = oi_writer_new();
    oi_writer_add_sizevar(w, "B", 2);
    oi_writer_add_sizevar(w, "D", 8);
    oi_writer_add_tensor(w, "w", OI_DTYPE_F32, 2, dd, zeros, NULL);
    oi_writer_add_tensor(w, "layer.0.w", OI_DTYPE_F32, 2, dd, zeros, NULL);
    oi_writer_add_tensor(w, "layer.1.w", OI_DTYPE_F32, 2, dd, zeros, NULL);
    oi_writer_add_tensor(w, "layer.2.w", OI_DTYPE_F32, 2, dd, zeros, NULL);
    oi_writer_add_tensor(w, "layer.x.bias", OI_DTYPE_F32, 2, dd, zeros, NULL); /* does not fit the pattern */
    uint8_t *bytes = NULL;
    CHECK_OK(oi_writer_to_memory(w, 2, &bytes, size));
    oi_writer_free(w);
    return bytes;
}

int main(void) {
    size_t size = 0;
    uint8_t *bytes = model_bytes(&size);
    oi_model *m = bytes ? oi_model_open_memory(bytes, size) : NULL;
    CHECK(m != NULL);

    oi_memory_estimate est;
    CHECK_OK(oi_estimate_memory(m, estimated(), OI_DEVICE_CPU, &est));
    CHECK_EQ_INT(est.weights, 256 + 3 * 256);
    CHECK_EQ_INT(est.persistent, 4 + 16 * 16);
    CHECK_EQ_INT(est.intermediates, 64 + 64);
    CHECK_EQ_INT(est.total, 1024 + 260 + 128);
    CHECK(!est.unbounded);

    CHECK_OK(oi_estimate_memory(m, unbounded(), OI_DEVICE_CPU, &est));
    CHECK(est.unbounded);
    CHECK_EQ_INT(est.persistent, 16); /* one entry counted */

    CHECK_STATUS(oi_estimate_memory(m, NULL, OI_DEVICE_CPU, &est), OI_ERROR_INVALID_ARGUMENT);

    oi_simulator *s = m ? oi_simulator_new(m, OI_DEVICE_CPU) : NULL;
    oi_executor *e = s ? oi_simulator_make_executor(s, estimated()) : NULL;
    CHECK_MSG(e != NULL, "%s", oi_last_error());
    oi_executor_free(e);
    e = s ? oi_simulator_make_executor(s, too_big()) : NULL;
    CHECK(e == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "graph too_big needs");
    CHECK_STR_CONTAINS(oi_last_error(), "persistent caches");
    CHECK_STR_CONTAINS(oi_last_error(), "MiB free");
    oi_executor_free(e);
    oi_simulator_free(s);
    oi_model_close(m);
    oi_free(bytes);
    return check_result("test_memory");
}
