/* openinfer_impl.c - the whole library as one translation unit.
 * Included by openinfer.h when OPENINFER_IMPLEMENTATION is defined;
 * scripts/amalgamate inlines every file named here into dist/openinfer.h. */
#define STB_DS_IMPLEMENTATION
#include "internal.h"
#undef STB_DS_IMPLEMENTATION

#include "core.c"
#include "env.c" /* every environment variable, read in one place */
#include "dtype.c"
#include "tensor.c"
#include "oinf.c"
#include "expr.c"          /* compound index expressions (step+1) */
#include "graph.c"
#include "builder.c"
#include "dsl.c"
#include "json.c"
/* .npy files for `openinfer run` (self-contained: the synthesizer copies
 * npy.h into emitted folders); here it allocates through our hooks. */
#define OI_NPY_IMPLEMENTATION
#define OI_NPY_MALLOC(size) oi__malloc(size)
#define OI_NPY_FREE(ptr) oi__free(ptr)
#include "npy.h"
#include "device_json.c"  /* the device architecture JSON (device_arch.h) */
#include "dot.c"
#include "validate.c"
#include "threadpool.c"
#include "executor.c"       /* the executor's rooms: executor.h lists them */
#include "exec_tables.c"
#include "exec_trace.c"
#include "exec_consumers.c"
#include "exec_io.c"
#include "exec_precision.c"
#include "memory.c"
#include "backend.c"
#include "device_query.c" /* a live device's architecture JSON */
#include "../kernels/gemm.c"
#include "../kernels/kernels.c"
#include "../vulkan/vulkan_backend.c" /* after kernels.c: reuses its parameter readers */
#include "../blas/blas_backend.c"     /* after kernels.c: reuses its readers and matmul/gemm helpers */
#ifdef OPENINFER_SYNTH
#include "../synth/synth_impl.c" /* the synthesizer (optional) */
#endif
