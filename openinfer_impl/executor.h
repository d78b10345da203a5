/* executor.h - the executor's private types and what its rooms offer one
 * another. The executor (oi_executor) is split by job, one file each:
 *   executor.c        contexts, values, node dispatch, steps; the API
 *   exec_tables.c     persistent state: caches, tables, @auto_dim matrices
 *   exec_trace.c      trace events, GPU times, the trace JSON
 *   exec_consumers.c  yield/await: consumer blocks on worker threads
 *   exec_io.c         insert and fetch, element conversion
 *   exec_precision.c  activations stored in f16/bf16 (desc.precision)
 * They are parts of one translation unit (openinfer_impl.c): functions are
 * static and declared here, so the order the files are included in does
 * not matter. The plan (plan.h) is only read; everything a run changes
 * lives in the executor and its contexts. */
#ifndef OPENINFER_EXECUTOR_H
#define OPENINFER_EXECUTOR_H

#include "internal.h"
#include "simulator.h"

#include <pthread.h>
#include <time.h>

/* One trace event (the JSON form of the seed). */
typedef struct oi__tev {
    const char *block_name;
    uint32_t node_index;
    const char *uuid;
    oi_event_kind kind;
    const char *op_name; /* the op's name; NULL unless kind is OP_EXECUTE */
    const char *scope;   /* the node's OI_SCOPE path, NULL outside scopes */
    char **params; /* stb array of owned strings */
    char **output;
    uint64_t nanos;
    bool on_device;   /* the op ran on a device backend ...            */
    uint64_t gpu_seq; /* ... as its run_op call number gpu_seq        */
    double gpu_micros; /* its GPU time (timestamp queries), -1 unknown */
    int typed_slot;   /* assign of an OI_ASSIGN(h) typed by its writer: h's slot (the trace shows
                         its type), else -1 */
} oi__tev;

/* A persistent table key: the values of the non-auto indices. */
typedef struct oi__tkey { int64_t k[OI_MAX_DIMS]; } oi__tkey;

typedef struct oi__pentry {
    oi__tkey key;
    oi__tensor *value;            /* NULL in a rowed table: the value lives in its row */
    int64_t counts[OI_MAX_DIMS]; /* @auto_dim growth of this entry */
} oi__pentry;

/* A rowed table's entries that share every key but the last, stored
 * contiguously along the last key so that a slice over it is a view. */
typedef struct oi__prow {
    oi__tkey prefix;      /* the key with its last position 0 */
    oi__tensor *buf;      /* [capacity] ++ entry shape; unwritten slots hold @init/zeros */
    int64_t lent_lo, lent_hi; /* the slots views handed out may see (while buf is shared) */
} oi__prow;

/* The persistent state of one variable. Plain scalars/tensors and auto_dim
 * matrices are a table with an empty key (one entry). */
typedef struct oi__pstate {
    oi__pentry *entries;  /* stb array                  */
    oi__prow *rows;       /* stb array: a rowed table's buffers */
    int last_row;         /* the row found last (most accesses repeat it) */
    int *slots;           /* open addressing: entry index or -1 */
    size_t cap;           /* power of two (0: no index) */
    int64_t sizes[OI_MAX_DIMS]; /* per key position: max index + 1 */
} oi__pstate;

typedef struct oi__frame {
    const oi__pnode *nodes;
    int count, pos;
    int block;
    const oi__pnode *loop; /* NULL: a block frame */
    int64_t loop_value, loop_end;
} oi__frame;

typedef struct oi__prefix_cache { char *key; oi__tensor *value; } oi__prefix_cache;

/* A prefix-table entry already looked up, by its index values: later
 * lookups (every layer of every step) build no name (oi__prefix_entry). */
typedef struct oi__prefix_hit {
    int64_t values[OI_MAX_DIMS];
    oi__tensor *value; /* held by oi__ctx.prefix */
} oi__prefix_hit;

/* Bytes of last step's temporaries, kept for this step's: reusing them
 * spares the allocator's page faults and heap trimming on every step. */
typedef struct oi__spare {
    void *data;
    size_t nbytes;
} oi__spare;

typedef struct oi__ctx {
    oi_executor *exec;
    oi__spare *spares;     /* stb array; filled by the main context only  */
    oi__tensor **values;   /* per slot                                   */
    bool *written;         /* per slot: written by this context           */
    oi__frame *frames;     /* stb array                                   */
    bool use_backend;      /* consumers run on the CPU                    */
    bool record;           /* record trace events                         */
    oi__tev *events;       /* consumer contexts keep their own events     */
    oi__prefix_cache *prefix; /* model name -> tensor (borrowed data)     */
    oi__prefix_hit **hits; /* per slot: stb array of its entries in prefix */
    const int *yielded;    /* entry: slots handed to consumers (stb)      */
    int lock_depth;        /* this context holds exec->lock (re-entrant)  */
    bool ran_on_device;    /* the node just run went to the device backend */
    uint64_t device_seq;   /* ... as this run_op call number              */
} oi__ctx;

/* The bytes behind a fetched view, kept until the variable is fetched again,
 * when a fetch of the same size refills them (no allocation per step). */
typedef struct oi__fetch_buffer {
    void *data;
    size_t nbytes;
} oi__fetch_buffer;

typedef struct oi__consumer {
    oi__ctx ctx;
    int block;
    pthread_t thread;
    bool started;
    oi_status status;
    char error[1024];
    const int *yields;     /* the slots its final yield names             */
} oi__consumer;

struct oi_executor {
    oi_simulator *sim;
    oi__plan *plan;
    oi__ctx main;
    oi__pstate *pstates;   /* per slot (used for persistent slots)        */
    bool *inserted;        /* per slot: inserted since the last step      */
    oi__fetch_buffer *fetched; /* per slot: the last fetch's buffer       */
    bool in_step;
    bool trace_on, timer_on;
    oi__tev *trace;        /* stb array                                   */
    ptrdiff_t trace_step_start; /* the first event of the current step    */
    char *last_desc;       /* description of the last iterated node       */
    char **warnings;       /* stb array                                   */
    bool warned[OI_OP_COUNT];
    /* Per plan node id: the last signatures an op node saw (inputs, then
     * the output; stb array or NULL). A node whose input shapes did not
     * change skips oi__op_infer. Only the one context that runs the node's
     * block touches its entry. */
    oi__op_sig **sig_memo;
    oi_dtype *acc_memo;    /* per plan node id: the accumulator that check gave */
    /* Per slot: the dtype its op outputs are stored in. The slot's own
     * dtype, except activations under a reduced precision (desc.precision:
     * f16/bf16 for f32 temporaries and volatile variables; exec_precision.c). */
    oi_dtype *storage;
    oi__consumer **pending;/* consumers started by the entry's yield      */
    int *pending_vars;
    pthread_mutex_t lock;  /* model reads and persistent state            */
};

/* ---- executor.c ---- */
static const oi__slot *oi__slot_of(const oi_executor *e, int s);
static void oi__lock(oi__ctx *c);
static void oi__unlock(oi__ctx *c);
static oi__tensor *oi__wrap_model(oi__ctx *c, const oi_tensor_info *t);
static void oi__fill_init(oi__tensor *t, const oi__var *v);
static oi__tensor *oi__value(oi__ctx *c, int s);
static void oi__set_value(oi__ctx *c, int s, oi__tensor *t);
static bool oi__tensor_matches(const oi__tensor *t, oi_dtype dtype, int ndim, const int64_t *shape);
static oi_status oi__eval_expr(oi__ctx *c, const oi__expr *x, const oi__src *src, int64_t *out);
static oi_status oi__node_error(const oi__pnode *pn, oi_status st);
static bool oi__push_block(oi__ctx *c, int block);
static oi_status oi__ctx_init(oi__ctx *c, oi_executor *e);
static void oi__ctx_free(oi__ctx *c);
static oi_status oi__ctx_next(oi__ctx *c, const oi__pnode **ran, uint64_t *nanos, bool *done);

/* ---- exec_tables.c ---- */
static void oi__pstate_clear(oi__pstate *ps);
static oi_status oi__persistent_scalar(oi__ctx *c, int s, int64_t *out);
static oi_status oi__exec_cache(oi__ctx *c, const oi__pnode *pn);
static oi__tensor *oi__persistent_snapshot(oi_executor *e, int s);

/* ---- exec_trace.c ---- */
static void oi__tev_free(oi__tev *t);
static void oi__note_device_op(oi__ctx *c, const oi__backend *be, void *be_ctx);
static void oi__collect_gpu_times(oi_executor *e);
static void oi__record(oi__ctx *c, const oi__pnode *pn, uint64_t nanos, const char *taken_block, int64_t loop_start,
                       int64_t loop_end);

/* ---- exec_precision.c ---- */
static oi_status oi__precision_resolve(oi_simulator_desc *desc, const oi__backend *be);
static oi_status oi__storage_plan(oi_executor *e);
static oi_dtype oi__logical_dtype(const oi_executor *e, int s, const oi__tensor *t);
static oi__tensor *oi__converted(oi__ctx *c, const oi__tensor *t, oi_dtype to);
static oi_status oi__narrow_into(oi__tensor *dst, const oi__tensor *src);

/* ---- exec_consumers.c ---- */
static oi_status oi__yield_start(oi__ctx *c, const oi__pnode *pn);
static oi_status oi__await_finish(oi__ctx *c, const oi__pnode *pn);
static void oi__drop_consumers(oi_executor *e);

#endif /* OPENINFER_EXECUTOR_H */
