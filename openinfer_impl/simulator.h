/* simulator.h - the simulator (executor.c) and its backend: which backend
 * runs the ops, and the host side of device storage (backend.c, memory.c).
 * Apart from plan.h: the plan is what a graph means, the simulator is one
 * way to run it (the synthesizer is another and needs none of this). */
#ifndef OPENINFER_SIMULATOR_H
#define OPENINFER_SIMULATOR_H

#include "plan.h"
#include <pthread.h>

struct oi_simulator {
    const oi_model *model;
    const oi__backend *backend; /* the chosen backend; CPU runs what it cannot */
    void *backend_ctx;
    int device_index;
    oi_simulator_desc desc;     /* defaults resolved                          */
    oi__threadpool *pool;       /* the CPU kernels' threads (desc.n_threads)  */
    /* Backends other than `backend` that OI_WITH(placement="vulkan"|"gpu"|
     * "blas") asked for, created by the first executor that needs them:
     * [0] Vulkan, [1] blas (NULL: not asked for, or unavailable). */
    const oi__backend *placed[2];
    void *placed_ctx[2];
    bool placed_tried[2];
    pthread_mutex_t placed_lock; /* executors made on several threads at once */
};

/* Whether a slot holds activations, which desc.precision stores in f16/bf16:
 * f32 temporaries and volatile variables the model does not hold
 * (exec_precision.c). */
bool oi__slot_is_activation(const oi__slot *sl);

/* Fails with OUT_OF_MEMORY when the simulator's device has less free
 * memory than oi_estimate_memory's total for the plan (memory.c). */
oi_status oi__check_device_memory(const oi_simulator *sim, const oi__plan *p);

/* Picks the backend for `device` (AUTO: discrete GPU > integrated GPU > CPU;
 * OPENINFER_BACKEND=cpu|blas|vulkan[:index] overrides AUTO) and creates it. */
oi_status oi__backend_select(oi_device device, const oi__backend **backend, void **ctx, int *device_index);
/* Host copy of a storage is current (downloads a newer device copy). */
oi_status oi__storage_sync_host(oi__storage *s);
/* The host copy is about to be written: sync it, then drop the device mirror. */
oi_status oi__storage_host_write(oi__storage *s);

#endif /* OPENINFER_SIMULATOR_H */
