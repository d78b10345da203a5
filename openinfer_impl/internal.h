/* internal.h - private types shared by the implementation files.
 * Everything here is oi__-prefixed and may change without notice. */
#ifndef OPENINFER_INTERNAL_H
#define OPENINFER_INTERNAL_H

#include "../openinfer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define OI__THREAD_LOCAL thread_local
#else
#define OI__THREAD_LOCAL _Thread_local
#endif

/* A compile-time check at file scope (C11 and C++ spell it differently). */
#ifdef __cplusplus
#define OI__STATIC_ASSERT(cond, message) static_assert(cond, message)
#else
#define OI__STATIC_ASSERT(cond, message) _Static_assert(cond, message)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OI__PRINTF(fmt_index, args_index) __attribute__((format(printf, fmt_index, args_index)))
#else
#define OI__PRINTF(fmt_index, args_index)
#endif

/* ---- env.c: every environment variable the library reads (the table in
 * docs/simulator.md lists the same), read afresh by each call ---- */
typedef enum oi__env_isa { OI__ENV_ISA_AUTO, OI__ENV_ISA_PORTABLE, OI__ENV_ISA_AVX2, OI__ENV_ISA_AVX512 } oi__env_isa;
typedef enum oi__env_coopmat { OI__ENV_COOPMAT_AUTO, OI__ENV_COOPMAT_OFF, OI__ENV_COOPMAT_NV } oi__env_coopmat;
typedef struct oi__env {
    const char *backend;      /* OPENINFER_BACKEND=cpu|blas|vulkan[:index]: what an AUTO simulator
                                 takes (backend.c parses it); NULL when unset or empty */
    oi__env_isa isa;          /* OPENINFER_ISA=portable|avx2|avx512: caps the CPU kernels' SIMD path
                                 (kernels/gemm.c); anything else: AUTO */
    bool trace;               /* OPENINFER_TRACE=1|full|true: every executor records its trace */
    bool strict;              /* OPENINFER_STRICT=1|true: every graph is strict */
    bool vulkan_validation;   /* OPENINFER_VULKAN_VALIDATION set, not empty, not 0: the Khronos layer */
    bool vulkan_timestamps;   /* false with OPENINFER_VULKAN_TIMESTAMPS=0: no per-op GPU times */
    oi__env_coopmat vulkan_coopmat; /* OPENINFER_VULKAN_COOPMAT=0: no tensor-core matmul; =nv: the NV extension */
    bool vulkan_early_submit; /* false with OPENINFER_VULKAN_EARLY_SUBMIT=0: each step in one submission */
    const char *precision;    /* OPENINFER_PRECISION=f32|f16|bf16: a simulator's activations when its desc
                                 leaves them 0 (exec_precision.c checks the value); NULL when unset or empty */
} oi__env;
oi__env oi__env_read(void);

/* ---- stb_ds, with our allocator and private symbol names so a program
 * that also uses stb_ds links fine ---- */
#ifndef OI__STB_DS_INCLUDED
#define OI__STB_DS_INCLUDED
#define STBDS_REALLOC(context, ptr, size) oi__ds_realloc((ptr), (size))
#define STBDS_FREE(context, ptr) oi__free(ptr)
#define stbds_arrgrowf oi__stbds_arrgrowf
#define stbds_arrfreef oi__stbds_arrfreef
#define stbds_hmfree_func oi__stbds_hmfree_func
#define stbds_hmget_key oi__stbds_hmget_key
#define stbds_hmget_key_ts oi__stbds_hmget_key_ts
#define stbds_hmput_default oi__stbds_hmput_default
#define stbds_hmput_key oi__stbds_hmput_key
#define stbds_hmdel_key oi__stbds_hmdel_key
#define stbds_shmode_func oi__stbds_shmode_func
#define stbds_rand_seed oi__stbds_rand_seed
#define stbds_hash_bytes oi__stbds_hash_bytes
#define stbds_hash_string oi__stbds_hash_string
#define stbds_stralloc oi__stbds_stralloc
#define stbds_strreset oi__stbds_strreset
#define stbds_unit_tests oi__stbds_unit_tests
#define STBDS_NO_SHORT_NAMES
void *oi__realloc(void *ptr, size_t size);
void oi__free(void *ptr);
void *oi__ds_realloc(void *ptr, size_t size);
#include <stb/stb_ds.h>
/* stb_ds writes through the NULL of a failed allocation. So every short
 * name below that may allocate first makes room with our own checked code
 * (core.c), and only then lets stb_ds write: arrput, arrins, arrsetlen,
 * shput, hmput and sh_new_strdup evaluate to true, or to false with nothing
 * changed and OI_ERROR_OUT_OF_MEMORY recorded (oi_last_error). Call sites
 * check it: if (!arrput(a, v)) { ...clean up...; return OI_ERROR_OUT_OF_MEMORY; }
 * For the hash maps, the blocks stb_ds will ask for (a bigger hash index, a
 * key copy) are allocated beforehand and handed to it by oi__ds_realloc.
 * Lookups (shgeti, shget, shgetp_null) never allocate nor write into the map,
 * so threads may look names up in a shared map at the same time. */
bool oi__ds_room(void *array_slot, size_t elem_size, size_t more);      /* &a: room for `more` */
bool oi__ds_fit(void *array_slot, size_t elem_size, size_t total);      /* &a: capacity >= total */
bool oi__ds_hm_room(void *map_slot, size_t elem_size, const char *key); /* &t: room for one put */
bool oi__ds_sh_new(void *map_slot, size_t elem_size);                   /* sh_new_strdup(*&t) */
void oi__ds_release(void);                                              /* drops unused blocks */
ptrdiff_t oi__ds_find(const void *map, size_t elem_size, size_t key_size, const char *key); /* -1 if none */
/* The short names we use (the full set would clash with user code). */
#define arrlen stbds_arrlen
#define arrlenu stbds_arrlenu
#define arrput(a, v) (oi__ds_room(&(a), sizeof *(a), 1) ? (stbds_arrput((a), (v)), true) : false)
#define arrpop stbds_arrpop
#define arrfree stbds_arrfree
#define arrlast stbds_arrlast
#define arrsetlen(a, n) (oi__ds_fit(&(a), sizeof *(a), (size_t)(n)) ? (stbds_arrsetlen((a), (n)), true) : false)
#define arrdel stbds_arrdel
#define arrins(a, i, v) (oi__ds_room(&(a), sizeof *(a), 1) ? (stbds_arrins((a), (i), (v)), true) : false)
#define shput(t, k, v) \
    (oi__ds_hm_room(&(t), sizeof *(t), (k)) ? (stbds_shput((t), (k), (v)), oi__ds_release(), true) : false)
#define shget(t, k) ((t)[oi__ds_find((t), sizeof *(t), sizeof (t)->key, (k))].value) /* t not NULL */
#define shgeti(t, k) oi__ds_find((t), sizeof *(t), sizeof (t)->key, (k))
#define shgetp_null(t, k) \
    (oi__ds_find((t), sizeof *(t), sizeof (t)->key, (k)) < 0 ? NULL \
                                                               : &(t)[oi__ds_find((t), sizeof *(t), sizeof (t)->key, (k))])
#define shlen stbds_shlen
#define shfree stbds_shfree
#define sh_new_strdup(t) oi__ds_sh_new(&(t), sizeof *(t))
#define hmput(t, k, v) \
    (oi__ds_hm_room(&(t), sizeof *(t), NULL) ? (stbds_hmput((t), (k), (v)), oi__ds_release(), true) : false)
#define hmgeti(t, k) ((t) ? stbds_hmgeti((t), (k)) : -1)
#define hmlen stbds_hmlen
#define hmfree stbds_hmfree
#endif

/* ---- core.c: errors and memory ---- */
/* Records "message" for oi_last_error() and returns `status`. */
oi_status oi__fail(oi_status status, const char *fmt, ...) OI__PRINTF(2, 3);
oi_status oi__failv(oi_status status, const char *fmt, va_list args);
/* The status of the last oi__fail on this thread (what a NULL return of a
 * helper meant: OUT_OF_MEMORY, VALIDATION...), or `fallback` if none. */
oi_status oi__last_status(oi_status fallback);
/* Prefixes the current error message with "prefix: ". */
void oi__error_prefix(const char *fmt, ...) OI__PRINTF(1, 2);
void *oi__malloc(size_t size);        /* records OUT_OF_MEMORY on failure */
void *oi__calloc(size_t count, size_t size);
char *oi__strdup(const char *text);
char *oi__strndup(const char *text, size_t len);
char *oi__sprintf(const char *fmt, ...) OI__PRINTF(1, 2); /* heap string */

/* A growable heap string (JSON, DOT, trace). */
typedef struct oi__buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; the text is incomplete */
} oi__buf;
void oi__buf_append(oi__buf *b, const char *text, size_t len);
void oi__buf_puts(oi__buf *b, const char *text);
void oi__buf_printf(oi__buf *b, const char *fmt, ...) OI__PRINTF(2, 3);
void oi__buf_json_string(oi__buf *b, const char *text); /* quoted, escaped */
void oi__buf_finite_double(oi__buf *b, double value);   /* shortest round-trip text */
/* Hands the text to the caller (NULL and OUT_OF_MEMORY if it failed). */
char *oi__buf_take(oi__buf *b);
void oi__buf_free(oi__buf *b);

/* ---- dtype.c ---- */
bool oi__dtype_is_float(oi_dtype t);    /* f8 bf16 f16 f32 f64 */
bool oi__dtype_is_signed(oi_dtype t);   /* i8..i64, i1 i2 i4, t1 t2 */
bool oi__dtype_is_unsigned(oi_dtype t); /* u8..u64, u1 u2 u4 */
bool oi__dtype_is_packed(oi_dtype t);   /* sub-byte types */
bool oi__dtype_is_tensor_type(oi_dtype t); /* allowed as a tensor dtype */
/* Element i of a buffer as double / int64 / uint64, and the inverse
 * stores (wrapping to the dtype's width, packed types included). */
double oi__load_f64(oi_dtype t, const void *data, int64_t i);
int64_t oi__load_i64(oi_dtype t, const void *data, int64_t i);
uint64_t oi__load_u64(oi_dtype t, const void *data, int64_t i);
void oi__store_f64(oi_dtype t, void *data, int64_t i, double v);
void oi__store_i64(oi_dtype t, void *data, int64_t i, int64_t v);
void oi__store_u64(oi_dtype t, void *data, int64_t i, uint64_t v);
/* Raw element bits, zero-extended (bit-exact copies of any dtype). */
uint64_t oi__load_bits(oi_dtype t, const void *data, int64_t i);
void oi__store_bits(oi_dtype t, void *data, int64_t i, uint64_t bits);
/* cast.c: an integer dtype's range, for saturating casts (kernels/scalar.h's
 * OI_S_cast_saturate; the synthesizer prints the same bounds) */
typedef struct oi__cast_range {
    double lo, hi_excl; /* the least value and the largest + 1, as doubles (exact: powers of two) */
    int64_t lo_i, hi_i; /* signed dtypes: the least and the largest value */
    uint64_t hi_u;      /* unsigned dtypes: the largest value */
} oi__cast_range;
oi__cast_range oi__cast_range_of(oi_dtype t);

/* ---- oinf.c: oi_model_open / oi_model_open_memory that keep the status
 * code (tests and the CLI check it); `origin` names the bytes in errors ---- */
oi_status oi__model_open_file(const char *path, oi_model **out);
oi_status oi__model_open_bytes(const void *bytes, size_t size, const char *origin, oi_model **out);

/* ---- tensors (runtime values) ---- */
typedef struct oi__storage {
    void *data;
    size_t nbytes;
    int refcount;   /* transfer aliases share one storage */
    bool borrowed;  /* points into the model mapping: never freed */
    /* A device backend may mirror the bytes: `device` is its handle and
     * `host_stale` says the device copy is newer (call backend->to_host). */
    void *device;
    const struct oi__backend *device_owner;
    void *device_ctx;
    bool host_stale;
    /* kernels/gemm.c's packed copy of these bytes as a gemm's B (model
     * weights only; see oi__gemm_f32_ex), freed with the storage. */
    void *gemm_packed;
} oi__storage;

typedef struct oi__tensor {
    oi_dtype dtype;
    int ndim;
    int64_t shape[OI_MAX_DIMS];
    int64_t strides[OI_MAX_DIMS]; /* in elements; 0 = broadcast      */
    int64_t offset;               /* in elements from storage->data   */
    oi__storage *storage;
} oi__tensor;

int64_t oi__shape_numel(int ndim, const int64_t *shape);
/* The most elements a tensor may have: its bytes (8 per element at most)
 * and every index into it fit int64. */
#define OI__MAX_ELEMENTS ((int64_t)1 << 60)
/* The most iterations one loop may run each time it starts (2^24): a bigger
 * literal bound is a validation error, a bigger run-time bound a runtime
 * error (a step of more would run for many minutes: surely a mistake). */
#define OI__MAX_LOOP_ITERATIONS ((int64_t)1 << 24)
/* A new contiguous zero-filled tensor (NULL + OUT_OF_MEMORY on failure). */
oi__tensor *oi__tensor_new(oi_dtype dtype, int ndim, const int64_t *shape);
/* oi__tensor_new over `spare` (oi__tensor_release_data's bytes of exactly
 * the tensor's size; NULL: fresh memory), zero-filled when `zero`, else left
 * as they are (for an op output a device writes whole: the host bytes are
 * stale until read back); frees spare on failure. */
oi__tensor *oi__tensor_adopt(oi_dtype dtype, int ndim, const int64_t *shape, void *spare, bool zero);
/* Frees t, handing back its bytes (and their size) when t alone owned plain
 * host memory, for reuse by oi__tensor_adopt; else NULL. */
void *oi__tensor_release_data(oi__tensor *t, size_t *nbytes);
/* A tensor borrowing bytes it does not own (model data). */
oi__tensor *oi__tensor_wrap(oi_dtype dtype, int ndim, const int64_t *shape, const void *data);
/* Another handle on the same storage (refcount + 1). */
oi__tensor *oi__tensor_share(const oi__tensor *t);
oi__tensor *oi__tensor_clone(const oi__tensor *t); /* deep, contiguous */
void oi__tensor_free(oi__tensor *t);
bool oi__tensor_is_contiguous(const oi__tensor *t);
static inline void *oi__tensor_data(const oi__tensor *t) { return t->storage ? t->storage->data : NULL; }
void oi__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);

/* ---- graph IR (graph.c builds and frees it) ---- */
typedef enum oi__mem_kind {
    OI__MEM_DYNAMIC, OI__MEM_VOLATILE, OI__MEM_CONSTANT, OI__MEM_PERSISTENT, OI__MEM_TEMP
} oi__mem_kind;
/* "dynamic", "volatile", "constant", "persistent", "temporary" (graph.c). */
const char *oi__mem_kind_name(oi__mem_kind kind);

/* Where a statement came from, for errors: "file:line: error: text: why". */
typedef struct oi__src {
    char *file;
    int line;
    char *text; /* the statement as the user wrote it */
    char *scope; /* the OI_SCOPE path ("encoder/layer0"), NULL outside scopes */
} oi__src;

typedef struct oi__fixed { char *index; int64_t max; } oi__fixed;

typedef enum oi__init_kind { OI__INIT_NONE, OI__INIT_FLOAT, OI__INIT_INT, OI__INIT_BOOL } oi__init_kind;

typedef struct oi__var {
    char *name;
    oi__mem_kind kind;
    oi_dtype dtype;
    char **dims;            /* stb array: "B", "3*D", "16"            */
    char **table_indices;   /* stb array: W(l) -> ["l"]               */
    oi__init_kind init_kind;
    double init_float;
    int64_t init_int;       /* also bool (0/1)                        */
    char *ref_name;         /* @ref, or NULL                          */
    char *pattern;          /* @pattern, or NULL                      */
    bool table;             /* @table                                 */
    char **auto_dim;        /* stb array of index names               */
    oi__fixed *fixed;       /* stb array                              */
    char **extra_attrs;     /* stb array: unknown attributes as written, "@layout(\"nhwc\")":
                               kept for tooling, warned about (errors when strict) */
    oi__src src;
} oi__var;

/* "W[l]" or "QKV[0, h]": a name and optional indices (identifiers or ints). */
typedef struct oi__varref {
    char *name;
    char **indices; /* stb array of index texts, NULL when none */
    bool literal;   /* an op input written as a number ("2.0", "-1"): name is its text */
} oi__varref;

typedef enum oi__attr_kind {
    OI__ATTR_FLOAT, OI__ATTR_INT, OI__ATTR_BOOL, OI__ATTR_STRING,
    OI__ATTR_IDENT,      /* a reference to a model scalar/metadata: resolved before kernels */
    OI__ATTR_INT_LIST, OI__ATTR_DTYPE, OI__ATTR_DTYPE_LIST,
    OI__ATTR_SIZE        /* a product of the model's sizes ("S*H"), in s: an INT after validation */
} oi__attr_kind;

typedef struct oi__attr {
    char *name;
    oi__attr_kind kind;
    double f;         /* FLOAT (inf allowed)          */
    int64_t i;        /* INT, BOOL                    */
    char *s;          /* STRING, IDENT                */
    int64_t *ints;    /* INT_LIST (stb array)         */
    oi_dtype dtype;   /* DTYPE                        */
    oi_dtype *dtypes; /* DTYPE_LIST (stb array)       */
    char **exprs;     /* INT_LIST: NULL, or per entry the size expression ("S", "S*H")
                         that validation resolves, NULL where ints holds a literal */
} oi__attr;

/* An index in a cache access or a loop bound: a literal or an identifier. */
typedef struct oi__expr {
    char *ident; /* NULL: use lit */
    int64_t lit;
} oi__expr;

/* A compound index ("step+1", "n-1", "S*2", expr.c): kept as its text in
 * oi__expr.ident; names resolve through the caller's lookup. */
bool oi__expr_is_compound(const oi__expr *e);
typedef enum oi__expr_tok_kind { OI__EXPR_NAME, OI__EXPR_NUMBER, OI__EXPR_OP } oi__expr_tok_kind;
typedef struct oi__expr_tok { oi__expr_tok_kind kind; const char *start; size_t len; } oi__expr_tok;
/* The token at *pos (false at the end); advances *pos. */
bool oi__expr_token(const char *text, size_t *pos, oi__expr_tok *tok);
typedef oi_status (*oi__expr_lookup)(void *ctx, const char *name, int64_t *value);
/* Evaluates `text`; lookup NULL checks the syntax only. Errors name src. */
oi_status oi__expr_eval(const char *text, oi__expr_lookup lookup, void *ctx, const oi__src *src, int64_t *out);

typedef struct oi__cache_index {
    bool is_slice;
    oi__expr single;          /* when !is_slice                   */
    bool has_start, has_end;  /* when is_slice; a..b half open    */
    oi__expr start, end;
} oi__cache_index;

typedef struct oi__cache_access {
    char *base;
    bool bracketed;           /* A[] vs A                          */
    oi__cache_index *indices; /* stb array                         */
} oi__cache_access;

#include "node_list.h" /* oi__node_kind: one row per kind */

typedef struct oi__node oi__node;
struct oi__node {
    oi__node_kind kind;
    uint32_t index;
    char uuid[37];
    oi__src src;
    /* ASSIGN */
    char *name;
    oi_dtype dtype;
    char **dims;
    bool typed_by_op; /* OI_ASSIGN(h): its first writer gives dtype and dims (validate.c);
                         dtype/dims are then empty, or the filled-in type in a typed copy */
    /* OP */
    oi_op op;
    oi__varref *inputs; /* stb array */
    oi__attr *attrs;    /* stb array */
    oi__attr *hints;    /* stb array: OI_WITH(fuse=..., placement=..., group=..., no_reorder=...) */
    char *output;
    /* BRANCH: cond NULL = unconditional jump to then_block */
    char *cond, *then_block, *else_block;
    /* DEP */
    char *after, *before;
    /* CACHE_*: access is the cache side; var the plain variable side */
    oi__cache_access access;
    oi__varref var;
    int64_t amount; /* increment/decrement */
    /* TRANSFER */
    oi__varref src_var, dst_var;
    /* YIELD / AWAIT */
    char **vars;
    /* LOOP */
    char *loop_name, *loop_index;
    oi__expr loop_start, loop_end;
    oi__node *body; /* stb array */
};

typedef struct oi__block {
    char *name;
    oi__node *nodes; /* stb array */
    oi__src src;
} oi__block;

typedef struct oi__block_name { char *key; ptrdiff_t value; } oi__block_name;

struct oi_graph {
    char *name;
    oi__var *vars;     /* stb array, in declaration order */
    oi__block *blocks; /* stb array, in definition order: append with oi__graph_add_block */
    oi__block_name *block_index; /* stb string map: block name -> its first index */
    uint32_t next_index;
    bool strict;       /* OI_STRICT(): warnings become errors */
    char **warnings;   /* stb array: what the build kept but cannot use */
};

/* Appends "file:line: warning: text: reason" to *list unless it is there. */
oi_status oi__warn_at(char ***list, const oi__src *src, const char *fmt, ...) OI__PRINTF(3, 4);
/* Unknown variable attributes: warnings, or an error when strict. Run once
 * the graph is parsed (DSL and JSON alike). */
oi_status oi__graph_check_extras(oi_graph *g);

/* placement="..." names cpu, gpu, vulkan or blas. */
bool oi__placement_known(const char *name);
/* The value of hint `name` on an op node, or NULL. */
const oi__attr *oi__node_hint(const oi__node *n, const char *name);

const oi__var *oi__graph_find_var(const oi_graph *g, const char *name);
void oi__attr_free(oi__attr *a); /* its fields; not `a` itself */
/* The values an integer (or bool, bitset) dtype holds; false for floats. */
bool oi__dtype_int_range(oi_dtype dtype, int64_t *lo, int64_t *hi);
/* The last failed graph build of this thread (NULL if none): its message. */
void oi__graph_note_failure(const char *message);
const char *oi__graph_last_failure(void);
const oi__block *oi__graph_find_block(const oi_graph *g, const char *name); /* O(1): the first of that name */
/* Moves *b into g->blocks and indexes its name; on failure (out of memory)
 * nothing changed and the caller still owns *b. */
oi_status oi__graph_add_block(oi_graph *g, oi__block *b);
/* "op add(x,a) >> t0", "cache.read A[0..2] >> out": for traces. Heap. */
char *oi__node_describe(const oi__node *n);
/* Reports a failure at a statement: "file:line: error: text: reason". */
oi_status oi__fail_at(oi_status status, const oi__src *src, const char *fmt, ...) OI__PRINTF(3, 4);

/* ---- graph.c: helpers shared by the graph builders (dsl.c, json.c),
 * the checks and the printers (dot.c) ---- */
#define OI__MAX_LOOP_DEPTH 64 /* loops nest at most this deep */
oi_graph *oi__graph_new(const char *name);
/* A stable v4-formatted UUID from the graph name and the node index. */
void oi__graph_node_uuid(const char *graph_name, uint32_t index, char out[37]);
void oi__src_free(oi__src *src);
void oi__var_free(oi__var *v);
void oi__node_free(oi__node *n);
void oi__block_free(oi__block *b);
/* Checks of one declaration that need no model (attributes vs dtype,
 * memory kind and table indices). */
oi_status oi__var_check(const oi__var *v);
/* Checks of a whole graph that need no model: names resolve, memory
 * kinds allow the access, branches, yield/await, cache accesses. */
oi_status oi__graph_check(const oi_graph *g);
/* Appends "W[l,0]" / "A[1..,..-3]" / "l" or "3". */
void oi__buf_varref(oi__buf *b, const oi__varref *r);
void oi__buf_cache_access(oi__buf *b, const oi__cache_access *a);
void oi__buf_expr(oi__buf *b, const oi__expr *e);
/* Records a graph oi_graph_register built (NULL: the build failed, and
 * oi_last_error() says why) for oi_graph_find and the accessor. */
void oi__graph_register_built(const char *name, const oi_graph **slot, oi_graph *graph);

/* ---- json.c: a small JSON reader shared by the graph loader, the
 * conformance runner and the device-architecture reader ---- */
typedef enum oi__json_type {
    OI__JSON_NULL, OI__JSON_BOOL, OI__JSON_NUMBER, OI__JSON_STRING, OI__JSON_ARRAY, OI__JSON_OBJECT
} oi__json_type;

typedef struct oi__json oi__json;
struct oi__json {
    oi__json_type type;
    bool boolean;
    double number;
    char *text;      /* STRING: the decoded string; NUMBER: the literal as written */
    oi__json *items; /* stb array: ARRAY elements, or OBJECT values */
    char **keys;     /* stb array: OBJECT keys, parallel to items */
};
/* Parses a whole document; NULL + OI_ERROR_FORMAT "line L, column C: why". */
oi__json *oi__json_parse(const char *text, size_t len);
void oi__json_free(oi__json *json);
/* The member `key` of an object, or NULL. */
const oi__json *oi__json_get(const oi__json *object, const char *key);

/* ---- kernels/: the seam between the executor and the op table ---- */
/* Output dtype and shape for an op, given its inputs and attributes
 * (attributes already resolved: no OI__ATTR_IDENT). On error returns a
 * status and a message without a place (the caller adds the statement). */
typedef struct oi__op_sig {
    oi_dtype dtype;
    int ndim;
    int64_t shape[OI_MAX_DIMS];
} oi__op_sig;
/* Is `name` a setting of op (aliases too)? If not, `expected` lists them. */
bool oi__op_param_known(oi_op op, const char *name, char *expected, size_t cap);
oi_status oi__op_infer(oi_op op, const oi__attr *attrs, size_t n_attrs,
                       const oi__op_sig *inputs, size_t n_inputs,
                       oi_dtype declared_out_dtype, oi__op_sig *out);
/* oi__op_infer that also gives the accumulator dtype the kernel runs with
 * (OI_DTYPE_INVALID when not accumulating), for oi__op_run_cpu_checked. */
oi_status oi__op_infer_acc(oi_op op, const oi__attr *attrs, size_t n_attrs,
                           const oi__op_sig *inputs, size_t n_inputs,
                           oi_dtype declared_out_dtype, oi__op_sig *out, oi_dtype *acc);
/* Runs the CPU kernel. `out` is allocated by the caller with the inferred
 * signature; it may alias inputs[0] (in-place mode). */
oi_status oi__op_run_cpu(oi_op op, const oi__attr *attrs, size_t n_attrs,
                         const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out);
/* oi__op_run_cpu without its signature check (the op's settings, dtypes and
 * shapes; storage bounds are still checked), for a caller that made it with
 * oi__op_infer_acc on exactly these inputs' dtypes and shapes and whose out
 * has the inferred dtype and shape: the executor, once per node and shape. */
oi_status oi__op_run_cpu_checked(oi_op op, const oi__attr *attrs, size_t n_attrs,
                                 const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out, oi_dtype acc);
int oi__op_arity(oi_op op);     /* number of inputs */
int oi__op_min_inputs(oi_op op); /* fewer with an optional or variadic input */
bool oi__op_allows_inplace(oi_op op);
/* For the synthesizer: a parameter as the kernels read it (the attribute,
 * else the op table's default); whether it was given; EW shape rule. */
double oi__op_param_value_f64(oi_op op, const oi__attr *attrs, size_t n_attrs, const char *name);
int64_t oi__op_param_value_i64(oi_op op, const oi__attr *attrs, size_t n_attrs, const char *name);
bool oi__op_param_given(oi_op op, const oi__attr *attrs, size_t n_attrs, const char *name);
bool oi__op_is_elementwise(oi_op op);
/* oinf.c: the bytes of an open model and where its data section starts
 * (the synthesizer fingerprints the header and tables). */
void oi__model_raw_bytes(const oi_model *m, const uint8_t **bytes, uint64_t *size, uint64_t *offset_data);
/* Layout ops (reshape, transpose, squeeze, unsqueeze, slice, split, expand;
 * kernels/shape.c) without a copy: *out_view shares in's storage (refcount
 * + 1) with the output's shape, strides and offset. OI_ERROR_UNSUPPORTED,
 * with no message, when the op needs a copy (another op, a reshape of a
 * strided input, a negative slice step): run oi__op_run_cpu instead. */
oi_status oi__op_view(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *in, oi__tensor **out_view);
/* oi__op_view for a caller that checked the op's signature on in's dtype
 * and shape (oi__op_infer): the executor. */
oi_status oi__op_view_checked(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *in,
                              oi__tensor **out_view);
/* The synthesizer's index maps (synth/schedule.c), by the code the views
 * and the pad kernel run: where slice, split, squeeze or unsqueeze of a
 * dense input of `shape` takes its elements (an offset and the output's
 * strides in the input; expand's too); and pad's source index along each dim for each
 * output position (-1: the fill value), maps[d] holding out_shape[d]. */
oi_status oi__op_layout_map(oi_op op, const oi__attr *attrs, size_t n_attrs, int ndim, const int64_t *shape,
                            int64_t *offset, int64_t strides[OI_MAX_DIMS]);
oi_status oi__op_pad_map(const oi__attr *attrs, size_t n_attrs, int ndim, const int64_t *shape, int64_t *const *maps);
/* tile's source index along each dim of `out_shape` (maps[d] of out_shape[d]) */
void oi__op_tile_map(int ndim, const int64_t *shape, const int64_t *out_shape, int64_t *const *maps);
/* conv1d/conv2d's (and max_pool2d's, avg_pool2d's) window as kernels/conv.c computes it
 * from x, w (and the bias) and the settings (auto_pad, pads, strides,
 * dilations, group; kernel_shape, ceil_mode): s spatial dims, each of the
 * arrays' first s entries used. */
typedef struct oi__conv_window {
    int s;
    int64_t batch, in_c, out_c, group;
    int64_t in[2], out[2], kernel[2], stride[2], dil[2], pad_b[2], pad_e[2];
} oi__conv_window;
oi_status oi__op_conv_window(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *in, size_t n_in,
                             oi__conv_window *w);
/* For tests: a non-persistent variable's value as the executor holds it
 * (storage, offset and strides: whether it is a view), or NULL. */
const oi__tensor *oi__executor_peek(oi_executor *e, const char *name);

/* The GPU time of one finished run_op call; `seq` counts a context's
 * run_op calls (a backend's next_seq tells the number the next call gets). */
typedef struct oi__op_time {
    uint64_t seq;
    oi_op op;
    double micros;
} oi__op_time;

/* ---- backends (backend.c keeps the registry) ----
 * The CPU backend is the reference. A device backend keeps tensors in its
 * own memory between ops: run_op may leave results only on the device
 * (storage->host_stale = true); the executor calls to_host before any host
 * read (fetch, a CPU-fallback op) and flush at the end of a step. */
typedef struct oi__backend {
    const char *name; /* "cpu", "vulkan", "blas" */
    /* Appends this backend's devices to out[0..max) from index *count on. */
    void (*discover)(oi_backend_info *out, size_t max, size_t *count);
    /* Creates a context on device `device_index`; NULL + error if impossible. */
    void *(*create)(int device_index);
    void (*destroy)(void *ctx);
    bool (*supports_op)(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs,
                        const oi__op_sig *inputs, size_t n_inputs, const oi__op_sig *out);
    oi_status (*run_op)(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs,
                        const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out);
    oi_status (*to_host)(void *ctx, oi__storage *storage); /* may be NULL (host backend) */
    void (*release)(void *ctx, oi__storage *storage);      /* storage is being freed */
    oi_status (*flush)(void *ctx);                         /* may be NULL */
    /* Optional (NULL: the backend does not time its ops; the trace shows no
     * gpu_micros): the seq of the next run_op call, and the times of the
     * calls whose work has completed, in call order (taking empties them). */
    uint64_t (*next_seq)(void *ctx);
    size_t (*take_times)(void *ctx, oi__op_time *out, size_t max);
    /* The activation storage dtypes (simulator precision) it runs besides
     * f32, as 1u << dtype bits; 0: f32 only (exec_precision.c). */
    unsigned precisions;
    /* Optional (NULL: tables are written on the host): copies the bytes of
     * contiguous `src` into `dst` at byte `at` on the device, which then
     * holds dst's newer bytes; a persistent table's rows then stay on the
     * device and a slice read of one is a view (exec_tables.c). */
    oi_status (*write_into)(void *ctx, oi__storage *dst, uint64_t at, const oi__tensor *src);
} oi__backend;

extern const oi__backend oi__cpu_backend;
/* backend.c: total and free host memory into info (the CPU-type backends). */
void oi__host_memory(oi_backend_info *info);
#ifdef OPENINFER_BLAS
extern const oi__backend oi__blas_backend;
/* blas/: counters of one BLAS context (tests, benchmarks). */
typedef struct oi__blas_stats {
    uint64_t ops;          /* run_op calls (matmul, gemm)                       */
    uint64_t calls;        /* cblas_sgemm / cblas_dgemm calls                   */
    uint64_t packed;       /* operands copied to a dense scratch (odd strides)  */
    uint64_t temp_outputs; /* outputs computed apart (aliased or not dense)     */
    int threads;           /* OpenBLAS threads during the last run_op           */
} oi__blas_stats;
const oi__blas_stats *oi__blas_get_stats(void *ctx);
#endif
#ifdef OPENINFER_VULKAN
extern const oi__backend oi__vulkan_backend;
/* vulkan/: counters of one Vulkan context (tests, perf reports). */
typedef struct oi__vulkan_stats {
    uint64_t submissions;       /* vkQueueSubmit calls                       */
    uint64_t replays;           /* submissions that reused last step's commands */
    uint64_t dispatches, barriers;
    uint64_t uploads, upload_bytes, downloads, download_bytes;
    uint64_t weight_uploads;    /* model tensors copied to the device        */
    uint64_t pipelines_created, descriptor_sets_created;
    uint64_t cpu_fallbacks;     /* run_op calls done on the CPU inside the backend */
    uint64_t validation_messages; /* warnings/errors of the validation layer (OPENINFER_VULKAN_VALIDATION=1) */
} oi__vulkan_stats;
const oi__vulkan_stats *oi__vulkan_get_stats(void *ctx);
bool oi__vulkan_has_wide(void *ctx); /* i64/u64/f64 arithmetic runs on the GPU (shaderInt64, shaderFloat64) */
const char *oi__vulkan_validation_message(void *ctx); /* the last one, or "" */
/* The vtable's next_seq and take_times (tests and benchmarks call them). */
typedef oi__op_time oi__vulkan_op_time;
uint64_t oi__vulkan_next_seq(void *ctx);
size_t oi__vulkan_take_times(void *ctx, oi__vulkan_op_time *out, size_t max);
#endif

/* ---- threadpool.c: persistent workers, owned by the executor ---- */
typedef struct oi__threadpool oi__threadpool;
/* n_threads counts the calling thread (0: one per online CPU). NULL + error on failure. */
oi__threadpool *oi__threadpool_new(int n_threads);
void oi__threadpool_free(oi__threadpool *pool);
int oi__threadpool_size(const oi__threadpool *pool); /* 1 for NULL */
/* Runs fn(ctx, task, thread) for task 0..n_tasks-1 on the workers and the
 * caller (thread 0..size-1; a thread index runs one task at a time), and
 * returns when all are done. NULL pool, one thread, or a call from inside
 * a task of the same pool: runs inline. Concurrent callers take turns. */
void oi__threadpool_run(oi__threadpool *pool, int n_tasks, void (*fn)(void *ctx, int task, int thread), void *ctx);
/* Splits [0, count) into equal ranges, `per_thread` for each thread of the
 * pool (one range, inline, for a NULL pool), and runs fn(ctx, first, end)
 * on each through oi__threadpool_run. */
void oi__threadpool_run_ranges(oi__threadpool *pool, int64_t count, int per_thread,
                               void (*fn)(void *ctx, int64_t first, int64_t end), void *ctx);
/* Runs fn(ctx, part, thread) for part 0..n_parts-1 (n_parts at most the
 * pool's size), part p on thread p whenever that thread takes a task in
 * time, so a kernel that splits the same weights the same way on every
 * call finds each part in the cache of the core that read it last time
 * (a late thread's part is run by another, never skipped). */
#define OI__THREADPOOL_MAX_PARTS 64
void oi__threadpool_run_parts(oi__threadpool *pool, int n_parts, void (*fn)(void *ctx, int part, int thread),
                              void *ctx);
/* A process-wide pool (all cores), created on first use; NULL if it could not be. */
oi__threadpool *oi__threadpool_default(void);
/* Makes `pool` the one oi__threadpool_default returns on this thread (the
 * executor lends its own pool to the kernels it runs); NULL restores the
 * process-wide pool. Returns the pool lent before. */
oi__threadpool *oi__threadpool_lend(oi__threadpool *pool);

/* ---- kernels/gemm.c: dense matrix multiply ----
 * Row-major C[m,n] = alpha * op(A) * op(B) + beta * C, where op(A) is
 * m x k (A stored k x m when trans_a) and op(B) k x n (n x k when trans_b).
 * beta == 0 overwrites C without reading it. pool NULL: single-threaded. */
oi_status oi__gemm_f32(oi__threadpool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                       float beta, float *c, int64_t ldc);
oi_status oi__gemm_f64(oi__threadpool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                       double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                       double beta, double *c, int64_t ldc);
/* The general f32 form: operands of any strides (a transposed or sliced
 * view costs nothing extra: packing reads it in place), a bias row and a
 * packed copy of a constant B kept on its storage.
 *   op(A)[i, p] = a[i * a_rs + p * a_cs]      op(B)[p, j] = b[p * b_rs + j * b_cs]
 *   C[i, j] = alpha * (op(A) op(B))[i, j] + beta * C[i, j] + bias[j]
 * bias: NULL or n values. b_owner: NULL, or the storage of B when its bytes
 * never change while it lives (model weights: storage->borrowed); the gemm
 * then packs op(B) once, keeps it on b_owner->gemm_packed (one layout per
 * storage: about the weight's own size) and reuses it on later calls with
 * the same layout; oi__gemm_packed_free releases it with the storage. */
typedef struct oi__gemm_f32_args {
    int64_t m, n, k;
    float alpha, beta;
    const float *a;
    int64_t a_rs, a_cs;
    const float *b;
    int64_t b_rs, b_cs;
    const float *bias;
    float *c;
    int64_t ldc;
    oi__storage *b_owner;
    /* NULL, or applied to each finished block of C (rows x cols at c, row
     * stride ldc) while it is still in the caches: gemm's activation= */
    void (*epilogue)(const void *ctx, float *c, int64_t ldc, int64_t rows, int64_t cols);
    const void *epilogue_ctx;
} oi__gemm_f32_args;
oi_status oi__gemm_f32_ex(oi__threadpool *pool, const oi__gemm_f32_args *args);
/* An elementwise op of kernels/math.c (gelu, with gelu_tanh its tanh form)
 * in place over n contiguous values, as the op itself computes it: for
 * activations fused into another op. */
void oi__math_apply_f32(oi_op op, bool gelu_tanh, float *x, int64_t n);
void oi__math_apply_f64(oi_op op, bool gelu_tanh, double *x, int64_t n);
void oi__gemm_packed_free(void *packed);
/* Which f32 code path runs: AUTO picks the best the CPU supports. Forcing
 * a path (tests, benchmarks) returns false if this CPU/build lacks it.
 * Not thread-safe: set it before running gemms. */
typedef enum oi__gemm_isa {
    OI__GEMM_ISA_AUTO, OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512
} oi__gemm_isa;
bool oi__gemm_force_isa(oi__gemm_isa isa);
oi__gemm_isa oi__gemm_active_isa(void); /* the path AUTO resolves to, or the forced one */
/* Whether the CPU converts f16 <-> f32 by F16C (x86; false elsewhere). */
bool oi__cpu_has_f16c(void);
/* n contiguous values f32 <-> f16/bf16 into dst, as dtype.c converts them (AVX2/F16C where
 * the CPU and OPENINFER_ISA allow; exec_precision.c); false for other pairs. */
bool oi__convert_floats(oi_dtype to, void *dst, oi_dtype from, const void *src, int64_t n);
/* The same for `rows` rows of n values, src_rs and dst_rs values apart. */
bool oi__convert_float_rows(oi_dtype to, void *dst, int64_t dst_rs, oi_dtype from, const void *src, int64_t src_rs,
                            int64_t rows, int64_t n);
void oi__quant_allow_vnni(bool allow);   /* tests: false runs matmul_q4's AVX2 integer dots under AVX-512 */
const char *oi__gemm_isa_name(oi__gemm_isa isa);

#endif /* OPENINFER_INTERNAL_H */
