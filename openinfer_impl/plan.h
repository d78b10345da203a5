/* plan.h - the validated graph: the input of the executor and of the
 * synthesizer.
 *
 * validate.c checks a graph against a model and builds an oi__plan: every
 * variable becomes a numbered slot (its resolved dtype and shape, its model
 * link, its table layout), every IR node a plan node holding slot numbers
 * and attributes with model references already resolved, and a dense id.
 * executor.c walks the plan (it never looks a name up by string in the hot
 * path); synth/ reads it to emit source.
 *
 * The plan is read-only once built: both readers may hold it at once, and
 * an executor's consumer threads share it. Run-time state (signature
 * caches, values, tables) lives in the executor, indexed by slot or by node
 * id; the simulator and backend selection are in simulator.h. */
#ifndef OPENINFER_PLAN_H
#define OPENINFER_PLAN_H

#include "internal.h"
#include <pthread.h>

/* One DSL variable: declared in a memory section or introduced by assign. */
typedef struct oi__slot {
    const char *name;        /* borrowed from the graph                    */
    const oi__var *decl;     /* NULL for assign temporaries                */
    const oi__src *src;      /* where it was declared (errors)            */
    oi__mem_kind kind;
    oi_dtype dtype;
    int ndim;
    int64_t shape[OI_MAX_DIMS]; /* declared shape, resolved from the model */
    bool dynamic_shape;      /* takes its shape from a slice/auto_dim read */
    unsigned runtime_dims;   /* bit d: dim d declared '?' (set at run time; shape[d] is 1) */
    bool typed_by_op;        /* OI_ASSIGN(h): dtype (INVALID until then) and shape from its first writer */
    const char *entry_dims[OI_MAX_DIMS]; /* prefix tables: "E(n)" where dim d is a size per entry
                                            (also a runtime_dims bit), else NULL */
    /* model link (by name or @ref): tensor data, or a scalar metadata entry */
    const char *model_name;
    const oi_tensor_info *model_tensor;
    const oi_metadata_info *model_meta;
    /* indexed families: W(l) prefix tables, K(l, t) persistent tables */
    int n_indices;           /* declared table indices                     */
    bool is_prefix;          /* volatile/constant W(l) @pattern(...)       */
    const char *pattern;     /* the pattern (defaults to "W.{l}")          */
    char *owned_pattern;
    bool is_table;           /* persistent table (keys = non-auto indices) */
    int n_keys;              /* number of non-auto table indices           */
    int key_pos[OI_MAX_DIMS];/* table index position of each key           */
    int n_auto;              /* @auto_dim indices                          */
    int auto_pos[OI_MAX_DIMS]; /* table index position of each auto index; auto k grows dim k */
    int64_t fixed[OI_MAX_DIMS]; /* per table index, -1 = unbounded         */
} oi__slot;

/* One index of an indexed input (W[l]) or a cache access, pre-parsed. */
typedef struct oi__pindex {
    bool is_slice;
    oi__expr single;
    bool has_start, has_end;
    oi__expr start, end;
} oi__pindex;

typedef struct oi__pnode oi__pnode;
struct oi__pnode {
    const oi__node *ir;
    int id;                 /* dense, 0..plan.n_nodes-1 (loop bodies too)   */
    int block;              /* the block this node belongs to              */
    int out;                /* op/assign/cache.read/transfer destination   */
    int var;                /* cache.write source, transfer source, branch cond, cache target */
    /* OP */
    int *inputs;            /* stb array of slots                          */
    oi__pindex **input_indices; /* stb array: NULL or stb array per input  */
    oi__attr *attrs;        /* stb array: IDENT attributes resolved        */
    char **owned;           /* strings this plan node allocated            */
    int64_t **owned_lists;  /* int lists it resolved from sizes (stb arrays) */
    bool inplace;           /* output == input 0 and the op allows it      */
    bool entry_attrs;       /* a setting names a size per entry (group=E(l)): resolved each run */
    /* CACHE_*: the access on the persistent side */
    oi__pindex *access;     /* stb array                                   */
    bool bracketed;
    /* BRANCH */
    int then_block, else_block;
    /* YIELD / AWAIT */
    int *vars;              /* stb array of slots                          */
    /* LOOP */
    oi__pnode *body;        /* stb array                                   */
};

typedef struct oi__pblock {
    const oi__block *ir;
    oi__pnode *nodes;       /* stb array                                   */
    bool is_async;          /* neither entry nor a branch target: a consumer */
    int *awaits;            /* slots this consumer awaits (stb array)     */
} oi__pblock;

typedef struct oi__sizevar { char *key; int64_t value; } oi__sizevar;
/* "E#6" -> the size E(n) has in entry n = 6, and the table that first gave it. */
typedef struct oi__entry_size { int64_t size; const char *table; } oi__entry_size;
typedef struct oi__entry_sizevar { char *key; oi__entry_size value; } oi__entry_sizevar;
typedef struct oi__slot_index { char *key; int value; } oi__slot_index;

typedef struct oi__plan {
    const oi_graph *graph;
    const oi_model *model;
    oi__slot *slots;        /* stb array                                   */
    oi__slot_index *by_name;/* stb string map name -> slot                 */
    oi__pblock *blocks;     /* stb array, graph order                      */
    int entry;
    int n_nodes;            /* plan nodes in all blocks and loop bodies    */
    oi__sizevar *sizes;     /* stb string map of the model's size variables */
    oi__entry_sizevar *entry_sizes; /* sizes per prefix-table entry seen at validation */
    bool strict;            /* the graph's OI_STRICT() or OPENINFER_STRICT=1 */
    oi__var **literals;     /* stb array: the constants made for literal op inputs */
    char **warnings;        /* stb array: unknown settings, variables never set */
} oi__plan;

/* Validates `g` against `m` (m may be NULL: no named sizes, no links) and
 * builds the plan. On failure returns NULL and oi_last_error() says where. */
oi__plan *oi__plan_build(const oi_graph *g, const oi_model *m);
void oi__plan_free(oi__plan *p);
/* Frees what `count` plan nodes own (not the array): the synthesizer's copies of nodes. */
void oi__plan_nodes_free(oi__pnode *nodes, int count);
int oi__plan_slot(const oi__plan *p, const char *name); /* -1 if unknown */
bool oi__plan_size(const oi__plan *p, const char *name, int64_t *out);
/* "W.{l}" with l=3 -> "W.3"; the indices follow the slot's declared order. */
char *oi__plan_pattern_name(const oi__slot *s, const int64_t *index_values);
/* Model tensor for a prefix entry, or NULL with an error naming the entry. */
const oi_tensor_info *oi__plan_prefix_tensor(const oi__plan *p, const oi__slot *s,
                                             const int64_t *index_values, const oi__src *src);

/* Run-time dims (f32[?, 3, 64]): does a value of this shape fit slot s
 * (its rank, and its declared dims where they are not '?')? */
bool oi__slot_fits(const oi__slot *s, int ndim, const int64_t *shape);
/* "f32[?, 3, 64]" into buf: the slot's declaration as resolved. */
const char *oi__slot_sig_text(char *buf, size_t cap, const oi__slot *s);

/* A setting's size per entry ("E(l)"): the table and dim that define E,
 * found at validation; false if no one-index prefix table declares E(n). */
bool oi__plan_entry_dim(const oi__plan *p, const char *text, int *slot, int *dim, char *index, size_t cap);

/* Copies oi_last_error() into dst (truncated), before a new message that
 * quotes it is written over the shared buffer. */
static inline void oi__copy_error(char *dst, size_t cap) {
    const char *msg = oi_last_error();
    size_t n = strlen(msg);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, msg, n);
    dst[n] = '\0';
}

#endif /* OPENINFER_PLAN_H */
