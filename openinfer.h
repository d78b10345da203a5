/* openinfer.h - an inference graph framework in one header.
 *
 * USAGE
 *   In exactly one C or C++ file:
 *       #define OPENINFER_IMPLEMENTATION
 *       #include "openinfer.h"
 *   Everywhere else just #include "openinfer.h" for the declarations.
 *
 *   OI_GRAPH(minimal,                         // built at program startup
 *     OI_DYNAMIC( OI_VAR(x, f32[B]) )
 *     OI_VOLATILE( OI_VAR(a, f32[B])  OI_VAR(y, f32[B], @init(5.0)) )
 *     OI_BLOCK(entry,
 *       OI_ASSIGN(t0, f32[B])
 *       OI_OP(add, x, a) OI_TO(t0)
 *       OI_OP(mul, y, t0) OI_TO(y)
 *       OI_RETURN()))
 *
 *   oi_model *m = oi_model_open("model.oinf");          // mmap, lazy tensors
 *   oi_simulator *s = oi_simulator_new(m, OI_DEVICE_CPU);
 *   oi_executor *e = oi_simulator_make_executor(s, minimal()); // validates
 *   OI_INSERT(e, x, input, n);
 *   oi_executor_run_step(e);
 *   OI_FETCH(e, y, f32);                                 // y.data, y.len
 *
 * OPTIONS (define before the implementation include)
 *   OPENINFER_VULKAN   compile the Vulkan backend (needs Vulkan headers + volk)
 *   OPENINFER_BLAS     compile the "blas" backend: matmul/gemm through OpenBLAS
 *                      (needs OpenBLAS's cblas.h; link -lopenblas)
 *   OPENINFER_SYNTH    also compile the synthesizer (oi_synthesize...): emits
 *                      standalone C for a graph (docs/synthesizer.md)
 *
 * Every function returns oi_status (OI_OK == 0) or NULL on failure;
 * oi_last_error() then says where and why. Library code never exits,
 * aborts or prints, except the OI_INSERT/OI_FETCH "panic" macros.
 */
#ifndef OPENINFER_H
#define OPENINFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OI_VERSION_STRING "0.1.0"
#define OI_MAX_DIMS 8

/* ------------------------------------------------------------------ */
/* Status and errors                                                  */
/* ------------------------------------------------------------------ */
typedef enum oi_status {
    OI_OK = 0,
    OI_ERROR_INVALID_ARGUMENT, /* a caller passed something unusable   */
    OI_ERROR_OUT_OF_MEMORY,    /* an allocation failed                 */
    OI_ERROR_IO,               /* a file could not be read or written  */
    OI_ERROR_FORMAT,           /* a file or text is malformed          */
    OI_ERROR_NOT_FOUND,        /* a named thing does not exist         */
    OI_ERROR_VALIDATION,       /* a graph does not agree with a model  */
    OI_ERROR_RUNTIME,          /* a step failed while running          */
    OI_ERROR_UNSUPPORTED,      /* op/dtype/feature not supported       */
    OI_ERROR_UNAVAILABLE       /* backend or device not available      */
} oi_status;

/* The message of the last failure on this thread ("" if none). */
const char *oi_last_error(void);
/* A short stable name for a status code ("OI_ERROR_FORMAT"). */
const char *oi_status_name(oi_status status);
/* Forget the last error of this thread. */
void oi_clear_error(void);

/* Allocator hooks: set both functions or neither (NULL restores libc).
 * realloc_fn(NULL, n) allocates; free_fn(NULL) must be harmless. */
typedef struct oi_allocator {
    void *(*realloc_fn)(void *ptr, size_t size, void *user_data);
    void (*free_fn)(void *ptr, void *user_data);
    void *user_data;
} oi_allocator;
oi_status oi_set_allocator(const oi_allocator *allocator);
/* Release memory the library handed to the caller (JSON/DOT strings). */
void oi_free(void *ptr);

/* ------------------------------------------------------------------ */
/* Data types: the numbers are the .oinf ValueType tags                */
/* ------------------------------------------------------------------ */
typedef enum oi_dtype {
    OI_DTYPE_INVALID = 0,
    OI_DTYPE_I8 = 1, OI_DTYPE_I16 = 2, OI_DTYPE_I32 = 3, OI_DTYPE_I64 = 4,
    OI_DTYPE_U8 = 5, OI_DTYPE_U16 = 6, OI_DTYPE_U32 = 7, OI_DTYPE_U64 = 8,
    OI_DTYPE_F16 = 9, OI_DTYPE_F32 = 10, OI_DTYPE_F64 = 11,
    OI_DTYPE_BOOL = 12, OI_DTYPE_BITSET = 13,
    OI_DTYPE_STRING = 14, OI_DTYPE_NDARRAY = 15, /* metadata only */
    OI_DTYPE_BF16 = 16, OI_DTYPE_F8 = 17,        /* f8 is E5M2     */
    OI_DTYPE_I4 = 18, OI_DTYPE_I2 = 19, OI_DTYPE_I1 = 20,
    OI_DTYPE_U4 = 21, OI_DTYPE_U2 = 22, OI_DTYPE_U1 = 23,
    OI_DTYPE_T2 = 24, OI_DTYPE_T1 = 25,
    OI_DTYPE_COUNT
} oi_dtype;

/* "f32", "bf16", "i4"...; NULL for an invalid value. */
const char *oi_dtype_name(oi_dtype dtype);
/* Parses "f32" (also "f8e5m2", "float8e5m2"); OI_DTYPE_INVALID if unknown. */
oi_dtype oi_dtype_from_name(const char *name);
/* Bits per element: 1, 2, 4, 8, 16, 32 or 64 (0 for string/ndarray). */
unsigned oi_dtype_bits(oi_dtype dtype);
/* Bytes for numel elements, packed types rounded up to whole bytes
 * (UINT64_MAX when the size does not fit 64 bits). */
uint64_t oi_dtype_nbytes(oi_dtype dtype, uint64_t numel);

/* Scalar conversions, round-to-nearest-even (see docs/oinf.md). */
uint16_t oi_f32_to_f16(float value);
float oi_f16_to_f32(uint16_t bits);
uint16_t oi_f32_to_bf16(float value);
float oi_bf16_to_f32(uint16_t bits);
uint8_t oi_f32_to_f8(float value);
float oi_f8_to_f32(uint8_t bits);

/* ------------------------------------------------------------------ */
/* .oinf models                                                        */
/* ------------------------------------------------------------------ */
typedef struct oi_model oi_model;

typedef enum oi_quant_scheme { OI_QUANT_SYMMETRIC = 1, OI_QUANT_ASYMMETRIC = 2 } oi_quant_scheme;
typedef enum oi_quant_mode { OI_QUANT_NONE = 0, OI_QUANT_PER_TENSOR = 1, OI_QUANT_PER_CHANNEL = 2 } oi_quant_mode;

/* The v2 quantization payload of a tensor. */
typedef struct oi_quant {
    oi_quant_scheme scheme;
    oi_quant_mode scale_mode; /* PER_TENSOR or PER_CHANNEL          */
    oi_quant_mode zp_mode;    /* NONE, PER_TENSOR or PER_CHANNEL    */
    uint64_t scale_axis, scale_count;
    uint64_t zp_axis, zp_count;
    const float *scales;        /* scale_count values                  */
    const int32_t *zero_points; /* zp_count values (NULL when none)    */
} oi_quant;

/* One tensor entry of a model; valid while the model is open. */
typedef struct oi_tensor_info {
    const char *name;
    oi_dtype dtype;
    uint32_t ndim;
    const uint64_t *dims;
    uint64_t numel;
    bool has_data;       /* false: declared only, zeros or @init   */
    uint64_t data_nbytes;
    uint64_t data_offset;
    bool has_quant;
    oi_quant quant;
} oi_tensor_info;

/* One metadata entry. For scalars `payload` points at the raw value;
 * for STRING, BITSET and NDARRAY at the encoded blob (oinf-format.md). */
typedef struct oi_metadata_info {
    const char *key;
    oi_dtype type;
    uint64_t nbytes;
    const void *payload;
} oi_metadata_info;

/* Opens and validates a model (header and every table); tensor bytes are
 * not read until asked for. NULL on failure (oi_last_error says why). */
oi_model *oi_model_open(const char *path);
/* Same, over bytes the caller keeps alive until oi_model_close. */
oi_model *oi_model_open_memory(const void *bytes, size_t size);
void oi_model_close(oi_model *model);

uint32_t oi_model_version(const oi_model *model);
oi_status oi_model_size_of(const oi_model *model, const char *name, uint64_t *out);
size_t oi_model_sizevar_count(const oi_model *model);
oi_status oi_model_sizevar_at(const oi_model *model, size_t index, const char **name, uint64_t *value);
size_t oi_model_metadata_count(const oi_model *model);
const oi_metadata_info *oi_model_metadata_at(const oi_model *model, size_t index);
const oi_metadata_info *oi_model_find_metadata(const oi_model *model, const char *key);
/* A STRING metadata value (not NUL-terminated): pointer + length. */
oi_status oi_model_metadata_string(const oi_model *model, const char *key, const char **text, size_t *len);
size_t oi_model_tensor_count(const oi_model *model);
const oi_tensor_info *oi_model_tensor_at(const oi_model *model, size_t index);
const oi_tensor_info *oi_model_find_tensor(const oi_model *model, const char *name);
/* The tensor's bytes (lazily read on first call, then cached). */
oi_status oi_model_tensor_data(const oi_model *model, const oi_tensor_info *tensor, const void **data);
/* How many tensor payloads have been read so far (lazy-loading probe). */
size_t oi_model_loaded_tensor_count(const oi_model *model);

/* Builds a .oinf file in memory, then writes it. Names must match
 * ^[A-Za-z0-9._-]+$ and be unique within their table. */
typedef struct oi_writer oi_writer;
oi_writer *oi_writer_new(void);
void oi_writer_free(oi_writer *writer);
oi_status oi_writer_add_sizevar(oi_writer *w, const char *name, uint64_t value);
oi_status oi_writer_add_metadata_scalar(oi_writer *w, const char *key, oi_dtype type, const void *value);
oi_status oi_writer_add_metadata_string(oi_writer *w, const char *key, const char *text, size_t len);
oi_status oi_writer_add_metadata_bitset(oi_writer *w, const char *key, const uint8_t *bits, uint32_t bit_count);
oi_status oi_writer_add_metadata_ndarray(oi_writer *w, const char *key, oi_dtype element_type,
                                         uint32_t ndim, const uint64_t *dims, const void *data);
/* data NULL = declared tensor without data; packed dtypes take packed
 * bytes (LSB first); quant NULL = none (needs version 2 to be written). */
oi_status oi_writer_add_tensor(oi_writer *w, const char *name, oi_dtype dtype, uint32_t ndim,
                               const uint64_t *dims, const void *data, const oi_quant *quant);
/* version: 2 (canonical) or 1 (legacy, no quant). Caller frees *bytes with oi_free. */
oi_status oi_writer_to_memory(const oi_writer *w, uint32_t version, uint8_t **bytes, size_t *size);
oi_status oi_writer_write_file(const oi_writer *w, uint32_t version, const char *path);

/* ------------------------------------------------------------------ */
/* Ops: one table (kernels/op_list.h) is the single source              */
/* ------------------------------------------------------------------ */
#include "kernels/op_list.h"
#define OI__OP_ENUM_ROW(name, ...) OI_OP_##name,
typedef enum oi_op { OI_OP_LIST(OI__OP_ENUM_ROW) OI_OP_COUNT } oi_op;
const char *oi_op_name(oi_op op);
oi_op oi_op_from_name(const char *name); /* OI_OP_COUNT if unknown */

/* ------------------------------------------------------------------ */
/* Graphs and the DSL                                                  */
/* ------------------------------------------------------------------ */
typedef struct oi_graph oi_graph;

/* One statement captured by the DSL macros: its kind, the user's line,
 * the head (a name) and the rest of the text exactly as written. */
typedef enum oi_dsl_kind {
    OI_DSL_END = 0,
    OI_DSL_SECTION_DYNAMIC, OI_DSL_SECTION_VOLATILE, OI_DSL_SECTION_CONSTANT,
    OI_DSL_SECTION_PERSISTENT, OI_DSL_SECTION_END,
    OI_DSL_VAR, OI_DSL_BLOCK, OI_DSL_BLOCK_END, OI_DSL_ASSIGN, OI_DSL_OP, OI_DSL_TO,
    OI_DSL_LOOP, OI_DSL_LOOP_END, OI_DSL_CACHE_READ, OI_DSL_CACHE_WRITE,
    OI_DSL_CACHE_INCREMENT, OI_DSL_CACHE_DECREMENT, OI_DSL_CACHE_RESET,
    OI_DSL_BARRIER, OI_DSL_DEP, OI_DSL_TRANSFER, OI_DSL_BRANCH, OI_DSL_YIELD,
    OI_DSL_AWAIT, OI_DSL_RETURN,
    OI_DSL_STRICT, /* the graph is strict: what would be a warning is an error */
    OI_DSL_SCOPE, OI_DSL_SCOPE_END, /* a named region inside a block (head: its name) */
    OI_DSL_WITH   /* hints of the OI_OP before it: "fuse=false, placement=\"cpu\"" */
} oi_dsl_kind;

typedef struct oi_dsl_stmt {
    oi_dsl_kind kind;
    int line;
    const char *head; /* block/loop/op name, or "" */
    const char *text; /* the rest, e.g. "x, f32[B], @init(5.0)" */
    int op;           /* oi_op for OI_DSL_OP, else 0 */
} oi_dsl_stmt;

/* Builds a graph from statements (what OI_GRAPH does at startup); the list
 * ends with an OI_DSL_END entry. NULL on error, with "file:line: error: ...". */
oi_graph *oi_graph_build(const char *name, const char *file, const oi_dsl_stmt *stmts);
void oi_graph_free(oi_graph *graph);
const char *oi_graph_name(const oi_graph *graph);
/* A graph defined with OI_GRAPH anywhere in the program, or NULL. */
const oi_graph *oi_graph_find(const char *name);
/* Registers a startup-built graph under its name (used by OI_GRAPH). */
void oi_graph_register(const char *name, const oi_graph **slot, const char *file, const oi_dsl_stmt *stmts);
/* Why the startup build of graph `name` failed, or NULL if it did not. */
const char *oi_graph_error(const char *name);
/* Used by the OI_GRAPH accessor when the build failed: puts the build's
 * message back into oi_last_error() and returns NULL. */
const oi_graph *oi__graph_unavailable(const oi_graph *const *slot);

/* The function API under the macros: the same statements, appended one
 * by one (each macro is a thin wrapper that records one of these).
 *
 *   oi_graph_builder *b = oi_graph_builder_new("minimal", "app.c");
 *   oi_graph_builder_section(b, OI_DSL_SECTION_DYNAMIC);
 *   oi_graph_builder_var(b, "x, f32[B]");
 *   oi_graph_builder_end(b);                       // ends the section
 *   oi_graph_builder_block(b, "entry");
 *   oi_graph_builder_op(b, "add", "x, x", "y");    // OI_OP(...) OI_TO(y)
 *   oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
 *   oi_graph_builder_end(b);                       // ends the block
 *   oi_graph *g = oi_graph_builder_finish(b);      // NULL + oi_last_error()
 *
 * Statements get line numbers 1, 2, 3... unless oi_graph_builder_at sets
 * the line of the next one. Errors surface at finish (file:line: error). */
typedef struct oi_graph_builder oi_graph_builder;
oi_graph_builder *oi_graph_builder_new(const char *name, const char *file);
/* Appends any statement (the op of OI_DSL_OP is looked up from `head`). */
oi_status oi_graph_builder_stmt(oi_graph_builder *b, oi_dsl_kind kind, const char *head, const char *text);
void oi_graph_builder_at(oi_graph_builder *b, int line);
oi_status oi_graph_builder_section(oi_graph_builder *b, oi_dsl_kind section);
oi_status oi_graph_builder_var(oi_graph_builder *b, const char *decl);
oi_status oi_graph_builder_block(oi_graph_builder *b, const char *name);
oi_status oi_graph_builder_loop(oi_graph_builder *b, const char *name, const char *index, const char *range);
/* A named region inside a block (OI_SCOPE); closed by oi_graph_builder_end.
 * Hints go between an op and its output: oi_graph_builder_stmt(b, OI_DSL_OP,
 * "matmul", "x, w"), (b, OI_DSL_WITH, "", "placement=\"cpu\""), (b, OI_DSL_TO, "", "h"). */
oi_status oi_graph_builder_scope(oi_graph_builder *b, const char *name);
oi_status oi_graph_builder_op(oi_graph_builder *b, const char *op, const char *args, const char *output);
/* Closes the innermost open section, block, loop or scope. */
oi_status oi_graph_builder_end(oi_graph_builder *b);
/* Builds the graph and frees the builder (also on failure). */
oi_graph *oi_graph_builder_finish(oi_graph_builder *b);
void oi_graph_builder_free(oi_graph_builder *b);

/* Strict mode (OI_STRICT() in the graph, or OPENINFER_STRICT=1 in the
 * environment) makes the warnings below errors that name file:line. */
bool oi_graph_is_strict(const oi_graph *graph);
/* What the build kept but could not use, once each: "app.c:12: warning:
 * OI_VAR(...): unknown attribute @layout(...) ...". make_executor adds the
 * validation's own (unknown op settings, variables read but never set) to
 * oi_executor_warning. */
size_t oi_graph_warning_count(const oi_graph *graph);
const char *oi_graph_warning(const oi_graph *graph, size_t index);

/* Lossless JSON and a Graphviz picture; free the strings with oi_free. */
char *oi_graph_to_json(const oi_graph *graph);
oi_graph *oi_graph_from_json(const char *json);
char *oi_graph_to_dot(const oi_graph *graph);

/* Checks a graph against a model: sizes, dtypes, shapes, op rules. */
oi_status oi_graph_validate(const oi_graph *graph, const oi_model *model);
/* The JSON and the picture of a graph as validated against a model: every temporary declared
 * OI_ASSIGN(h), typed by its first writer, shows the dtype and dims it got ("?" where set at run
 * time). NULL + oi_last_error() when the graph does not validate. */
char *oi_graph_to_json_typed(const oi_graph *graph, const oi_model *model);
char *oi_graph_to_dot_typed(const oi_graph *graph, const oi_model *model);

/* ---- the DSL macros: each expands to one statement initializer ---- */
#define OI__STMT(kind, head, text, op) {kind, __LINE__, head, text, op},

#define OI_DYNAMIC(...)    OI__STMT(OI_DSL_SECTION_DYNAMIC, "", "", 0) __VA_ARGS__ OI__STMT(OI_DSL_SECTION_END, "", "", 0)
#define OI_VOLATILE(...)   OI__STMT(OI_DSL_SECTION_VOLATILE, "", "", 0) __VA_ARGS__ OI__STMT(OI_DSL_SECTION_END, "", "", 0)
#define OI_CONSTANT(...)   OI__STMT(OI_DSL_SECTION_CONSTANT, "", "", 0) __VA_ARGS__ OI__STMT(OI_DSL_SECTION_END, "", "", 0)
#define OI_PERSISTENT(...) OI__STMT(OI_DSL_SECTION_PERSISTENT, "", "", 0) __VA_ARGS__ OI__STMT(OI_DSL_SECTION_END, "", "", 0)
#define OI_VAR(...)        OI__STMT(OI_DSL_VAR, "", #__VA_ARGS__, 0)
#define OI_BLOCK(name, ...) \
    OI__STMT(OI_DSL_BLOCK, #name, "", 0) __VA_ARGS__ OI__STMT(OI_DSL_BLOCK_END, #name, "", 0)
#define OI_ASSIGN(...)     OI__STMT(OI_DSL_ASSIGN, "", #__VA_ARGS__, 0)
/* The op name is token-pasted: a misspelled op is a compile error. */
#define OI_OP(name, ...)   OI__STMT(OI_DSL_OP, #name, #__VA_ARGS__, (int)OI_OP_##name)
#define OI_TO(...)         OI__STMT(OI_DSL_TO, "", #__VA_ARGS__, 0)
#define OI_LOOP(name, index, range, ...) \
    OI__STMT(OI_DSL_LOOP, #name, #index " in " #range, 0) __VA_ARGS__ OI__STMT(OI_DSL_LOOP_END, #name, "", 0)
#define OI_CACHE_READ(...)      OI__STMT(OI_DSL_CACHE_READ, "", #__VA_ARGS__, 0)
#define OI_CACHE_WRITE(...)     OI__STMT(OI_DSL_CACHE_WRITE, "", #__VA_ARGS__, 0)
#define OI_CACHE_INCREMENT(...) OI__STMT(OI_DSL_CACHE_INCREMENT, "", #__VA_ARGS__, 0)
#define OI_CACHE_DECREMENT(...) OI__STMT(OI_DSL_CACHE_DECREMENT, "", #__VA_ARGS__, 0)
#define OI_CACHE_RESET(...)     OI__STMT(OI_DSL_CACHE_RESET, "", #__VA_ARGS__, 0)
#define OI_BARRIER()            OI__STMT(OI_DSL_BARRIER, "", "", 0)
#define OI_DEP(...)             OI__STMT(OI_DSL_DEP, "", #__VA_ARGS__, 0)
#define OI_TRANSFER(...)        OI__STMT(OI_DSL_TRANSFER, "", #__VA_ARGS__, 0)
#define OI_BRANCH(...)          OI__STMT(OI_DSL_BRANCH, "", #__VA_ARGS__, 0)
#define OI_YIELD(...)           OI__STMT(OI_DSL_YIELD, "", #__VA_ARGS__, 0)
#define OI_AWAIT(...)           OI__STMT(OI_DSL_AWAIT, "", #__VA_ARGS__, 0)
#define OI_RETURN()             OI__STMT(OI_DSL_RETURN, "", "", 0)
/* A named region of a block: nests; every node inside carries the path
 * ("encoder/layer0") in the graph, its JSON, the DOT picture, the trace and
 * errors. It does not change what runs. */
#define OI_SCOPE(name, ...) \
    OI__STMT(OI_DSL_SCOPE, #name, "", 0) __VA_ARGS__ OI__STMT(OI_DSL_SCOPE_END, #name, "", 0)
/* Hints of the op before it, written between OI_OP and OI_TO: fuse=true|false,
 * placement="cpu"|"gpu"|"vulkan"|"blas", group="name", no_reorder=true. They
 * never change results. */
#define OI_WITH(...)            OI__STMT(OI_DSL_WITH, "", #__VA_ARGS__, 0)
/* Anywhere outside sections and blocks: this graph is strict (see above). */
#define OI_STRICT()             OI__STMT(OI_DSL_STRICT, "", "", 0)

/* Startup hook: a constructor in C, a static initializer in C++. */
#ifdef __cplusplus
#define OI__AT_STARTUP(fn) \
    static void fn(void); \
    static const int fn##_registered = (fn(), 0); \
    static void fn(void)
#else
#define OI__AT_STARTUP(fn) \
    __attribute__((constructor)) static void fn(void)
#endif

/* Defines `const oi_graph *name(void)`; the graph is built at startup. */
#define OI_GRAPH(name, ...) \
    static const oi_dsl_stmt oi__stmts_##name[] = { __VA_ARGS__ {OI_DSL_END, __LINE__, "", "", 0} }; \
    static const oi_graph *oi__graph_##name; \
    OI__AT_STARTUP(oi__build_##name) { \
        oi_graph_register(#name, &oi__graph_##name, __FILE__, oi__stmts_##name); \
    } \
    const oi_graph *name(void) { return oi__graph_##name ? oi__graph_##name : oi__graph_unavailable(&oi__graph_##name); }

/* ------------------------------------------------------------------ */
/* Simulator and executor                                              */
/* ------------------------------------------------------------------ */
typedef enum oi_device {
    OI_DEVICE_AUTO = 0, /* best available: discrete GPU > integrated GPU > CPU */
    OI_DEVICE_CPU,
    OI_DEVICE_VULKAN,
    OI_DEVICE_BLAS      /* the CPU with matmul/gemm through OpenBLAS (OPENINFER_BLAS);
                           never chosen by AUTO */
} oi_device;

typedef struct oi_simulator oi_simulator;
typedef struct oi_executor oi_executor;

/* Options; every zero field means "default". */
typedef struct oi_simulator_desc {
    oi_device device;  /* 0: AUTO                                   */
    int n_threads;     /* 0: every core the process may use (an     */
                       /* affinity mask or a cgroup v2 CPU quota    */
                       /* lowers it; OpenBLAS's too, on blas)       */
    bool trace;        /* record trace events (also OPENINFER_TRACE=1) */
    bool timer;        /* time every op into the trace              */
    /* The storage type of activations (temporaries and volatile variables
     * of dtype f32 that the model does not hold): 0 = f32 (or
     * OPENINFER_PRECISION=f32|f16|bf16), OI_DTYPE_F16 or OI_DTYPE_BF16.
     * Arithmetic and accumulation stay f32; every stored activation is
     * rounded once to this type. Inputs, weights and persistent state keep
     * their dtypes (docs/precision.md). */
    oi_dtype precision;
} oi_simulator_desc;

oi_simulator *oi_simulator_new(const oi_model *model, oi_device device);
oi_simulator *oi_simulator_new_desc(const oi_model *model, const oi_simulator_desc *desc);
void oi_simulator_free(oi_simulator *sim);
/* Validates the graph against the model and prepares an executor. */
oi_executor *oi_simulator_make_executor(oi_simulator *sim, const oi_graph *graph);
void oi_executor_free(oi_executor *exec);
/* Runs one inference step (the whole graph once). */
oi_status oi_executor_run_step(oi_executor *exec);

/* A typed copy of a variable, owned by the executor: valid until the same
 * variable is fetched again or the executor is freed. */
typedef struct oi_tensor_view {
    oi_dtype dtype;
    int ndim;
    int64_t shape[OI_MAX_DIMS];
    size_t len;
    void *data;
} oi_tensor_view;

/* Copies `count` values of type `dtype` into a variable (converted to the
 * variable's dtype); only allowed between steps. */
oi_status oi_executor_insert(oi_executor *exec, const char *name, oi_dtype dtype, const void *data, size_t count);
/* Fetches a variable converted to `dtype` (any time, also between nodes). */
oi_status oi_executor_fetch(oi_executor *exec, const char *name, oi_dtype dtype, oi_tensor_view *out);

/* Node-by-node execution. */
typedef enum oi_event_kind {
    OI_EVENT_ASSIGN, OI_EVENT_OP_EXECUTE, OI_EVENT_CACHE_READ, OI_EVENT_CACHE_WRITE,
    OI_EVENT_CACHE_INCREMENT, OI_EVENT_CACHE_DECREMENT, OI_EVENT_CACHE_RESET,
    OI_EVENT_BARRIER, OI_EVENT_DEP, OI_EVENT_TRANSFER, OI_EVENT_YIELD, OI_EVENT_AWAIT,
    OI_EVENT_BRANCH, OI_EVENT_LOOP, OI_EVENT_RETURN
} oi_event_kind;

typedef struct oi_event {
    oi_event_kind kind;
    const char *block_name;
    const char *op_name; /* "" unless OP_EXECUTE */
    uint32_t node_index;
    const char *node_uuid;
    const char *description; /* "op add(x,a) >> t0" */
    uint64_t micros;
    const char *scope; /* the OI_SCOPE path ("encoder/layer0"), "" outside scopes */
} oi_event;

/* Starts a step to be walked with oi_executor_next. */
oi_status oi_executor_iterate(oi_executor *exec);
/* OI_OK with *event filled, OI_ERROR_NOT_FOUND when the step is done. */
oi_status oi_executor_next(oi_executor *exec, oi_event *event);
/* The trace (seed JSON format); free with oi_free. */
char *oi_executor_trace_json(oi_executor *exec);
/* Turns trace recording on or off (default: desc.trace or OPENINFER_TRACE=1). */
void oi_executor_set_trace(oi_executor *exec, bool on);
/* The graph's warnings and the validation's (see oi_graph_warning), then
 * notes about ops the chosen device backend could not run (they ran on the
 * CPU), one per op kind: "op relu ran on the CPU: ...". None for blas: it
 * covers matmul/gemm only by design, and the rest costs no copy. */
size_t oi_executor_warning_count(const oi_executor *exec);
const char *oi_executor_warning(const oi_executor *exec, size_t index);

/* ---- I/O macros; the panic forms print the error and abort ---- */
#define OI__CTYPE_f32 float
#define OI__CTYPE_f64 double
#define OI__CTYPE_i8 int8_t
#define OI__CTYPE_i16 int16_t
#define OI__CTYPE_i32 int32_t
#define OI__CTYPE_i64 int64_t
#define OI__CTYPE_u8 uint8_t
#define OI__CTYPE_u16 uint16_t
#define OI__CTYPE_u32 uint32_t
#define OI__CTYPE_u64 uint64_t
#define OI__CTYPE_bool bool
#define OI__CTYPE__Bool bool /* C's bool is a macro for _Bool: it may arrive expanded */
#define OI__CTYPE_f16 uint16_t
#define OI__CTYPE_bf16 uint16_t
#define OI__DTYPE_f32 OI_DTYPE_F32
#define OI__DTYPE_f64 OI_DTYPE_F64
#define OI__DTYPE_i8 OI_DTYPE_I8
#define OI__DTYPE_i16 OI_DTYPE_I16
#define OI__DTYPE_i32 OI_DTYPE_I32
#define OI__DTYPE_i64 OI_DTYPE_I64
#define OI__DTYPE_u8 OI_DTYPE_U8
#define OI__DTYPE_u16 OI_DTYPE_U16
#define OI__DTYPE_u32 OI_DTYPE_U32
#define OI__DTYPE_u64 OI_DTYPE_U64
#define OI__DTYPE_bool OI_DTYPE_BOOL
#define OI__DTYPE__Bool OI_DTYPE_BOOL
#define OI__DTYPE_f16 OI_DTYPE_F16
#define OI__DTYPE_bf16 OI_DTYPE_BF16

/* The typed result of OI_FETCH: y.data[i] for i < y.len. The C type is
 * pasted in OI_FETCH itself, before `bool` can expand to `_Bool`. */
#define OI__FETCHED_C(ctype) struct { ctype *data; size_t len; int ndim; int64_t shape[OI_MAX_DIMS]; }
#define OI__FETCHED(T) OI__FETCHED_C(OI__CTYPE_##T)

void oi__panic(oi_status status, const char *file, int line, const char *what);
oi_status oi__fetch_into(oi_executor *exec, const char *name, oi_dtype dtype, void *typed_view, bool panic,
                         const char *file, int line);

/* The dtype of the elements `data` points at: float -> f32, double -> f64,
 * the signed and unsigned integers of 8..64 bits -> i8..u64, bool -> bool.
 * Any other element type (char, void, a struct) is a compile error; f16 and
 * bf16 bits (uint16_t) would read as u16: give them with OI_INSERT_T.
 * C: _Generic on the unevaluated *(data), so `data` is evaluated once. */
#ifndef __cplusplus
#define OI__INT_DTYPE(T, S, U) (sizeof(T) == 8 ? OI_DTYPE_##S##64 : sizeof(T) == 4 ? OI_DTYPE_##S##32 \
                                : sizeof(T) == 2 ? OI_DTYPE_##S##16 : OI_DTYPE_##U)
#define OI__DTYPE_OF(data) _Generic(*(data), \
    float: OI_DTYPE_F32, double: OI_DTYPE_F64, _Bool: OI_DTYPE_BOOL, \
    signed char: OI_DTYPE_I8, unsigned char: OI_DTYPE_U8, \
    short: OI__INT_DTYPE(short, I, I8), unsigned short: OI__INT_DTYPE(unsigned short, U, U8), \
    int: OI__INT_DTYPE(int, I, I8), unsigned int: OI__INT_DTYPE(unsigned int, U, U8), \
    long: OI__INT_DTYPE(long, I, I8), unsigned long: OI__INT_DTYPE(unsigned long, U, U8), \
    long long: OI__INT_DTYPE(long long, I, I8), unsigned long long: OI__INT_DTYPE(unsigned long long, U, U8))
#define OI__INSERT_TYPED(exec, name, data, count) \
    oi_executor_insert((exec), (name), OI__DTYPE_OF(data), (data), (count))
#endif

/* OI_INSERT(exec, x, data, count) copies `count` elements into variable x,
 * their dtype taken from the pointer (int8_t * -> i8, float * -> f32, ...,
 * see OI__DTYPE_OF) and converted to x's dtype. OI_INSERT_T(exec, x, f16,
 * bits, count) names the dtype instead (f16/bf16 bits). */
#define OI_TRY_INSERT(exec, name, data, count) OI__INSERT_TYPED(exec, #name, data, count)
#define OI_INSERT(exec, name, data, count) \
    do { oi_status oi__s = OI_TRY_INSERT(exec, name, data, count); \
         if (oi__s != OI_OK) oi__panic(oi__s, __FILE__, __LINE__, "OI_INSERT(" #name ")"); } while (0)
#define OI_TRY_INSERT_T(exec, name, T, data, count) \
    oi_executor_insert((exec), #name, OI__DTYPE_##T, (data), (count))
#define OI_INSERT_T(exec, name, T, data, count) \
    do { oi_status oi__s = oi_executor_insert((exec), #name, OI__DTYPE_##T, (data), (count)); \
         if (oi__s != OI_OK) oi__panic(oi__s, __FILE__, __LINE__, "OI_INSERT(" #name ")"); } while (0)

/* OI_FETCH(exec, y, f32) declares `y` with y.data, y.len, y.ndim, y.shape
 * (T: f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool, or f16/bf16 as uint16_t bits). */
#define OI_FETCH(exec, name, T) \
    OI__FETCHED_C(OI__CTYPE_##T) name; \
    oi__fetch_into((exec), #name, OI__DTYPE_##T, &name, true, __FILE__, __LINE__)
/* OI_TRY_FETCH(exec, y, f32, &status): the same, storing the status. */
#define OI_TRY_FETCH(exec, name, T, status_ptr) \
    OI__FETCHED_C(OI__CTYPE_##T) name; \
    *(status_ptr) = oi__fetch_into((exec), #name, OI__DTYPE_##T, &name, false, __FILE__, __LINE__)

/* ------------------------------------------------------------------ */
/* Backends                                                            */
/* ------------------------------------------------------------------ */
typedef struct oi_backend_info {
    const char *name;        /* "cpu", "blas", "vulkan"            */
    const char *device_name; /* "llvmpipe", "NVIDIA H100 ..."       */
    const char *device_type; /* "cpu", "discrete-gpu", ...          */
    bool available;
    const char *unavailable_reason; /* why not, e.g. "built without BLAS" */
    uint64_t total_memory, free_memory;
    const char *features;    /* "fp16 int8 subgroup coopmat"         */
} oi_backend_info;

/* Fills up to `max` entries; returns how many backends/devices exist. */
size_t oi_backends_discover(oi_backend_info *out, size_t max);

/* What running `graph` on `model` needs in memory (bytes). */
typedef struct oi_memory_estimate {
    uint64_t weights;       /* model tensors the graph reads (prefix families included) */
    uint64_t persistent;    /* persistent caches, tables at their @fixed bounds */
    uint64_t intermediates; /* dynamic, volatile and temporaries (all live during a step) */
    uint64_t total;
    bool unbounded;         /* a table without @fixed can grow past this estimate */
} oi_memory_estimate;

/* Validates `graph` against `model` and estimates its memory on `device`
 * (the figures do not depend on the device today; the device is checked
 * against them when an executor is made: it must have `total` bytes free). */
oi_status oi_estimate_memory(const oi_model *model, const oi_graph *graph, oi_device device,
                             oi_memory_estimate *out);

/* ---- Vulkan interop (docs/vulkan-interop.md). Handles travel as void*
 * (VkInstance, VkPhysicalDevice, VkDevice, VkQueue) so this header needs
 * no vulkan.h. Without OPENINFER_VULKAN these return OI_ERROR_UNAVAILABLE. */
typedef void (*oi_vulkan_void_function)(void);
typedef struct oi_vulkan_device_desc {
    void *instance;              /* VkInstance, Vulkan 1.1 or later                  */
    void *physical_device;       /* VkPhysicalDevice of `device`                     */
    void *device;                /* VkDevice                                         */
    void *queue;                 /* VkQueue with compute; OpenInfer submits to it    */
    uint32_t queue_family_index; /* the queue's family                               */
    /* vkGetInstanceProcAddr of the loader that made `instance`; NULL: libvulkan's */
    oi_vulkan_void_function (*get_instance_proc_addr)(void *instance, const char *name);
} oi_vulkan_device_desc;
/* From now on OI_DEVICE_VULKAN simulators run on these handles instead of
 * creating their own (which they never destroy); NULL goes back to that.
 * The queue is used from inside oi_executor_run_step and fetches only. */
oi_status oi_vulkan_use_device(const oi_vulkan_device_desc *desc);
/* Makes a VkBuffer range (VkBuffer as uint64_t) the value of dynamic
 * variable `name` for the next step, read in place: no host copy. Like an
 * insert, bind again before every step. Needs the executor on the device of
 * oi_vulkan_use_device; offset a multiple of minStorageBufferOffsetAlignment;
 * the buffer made with STORAGE_BUFFER and TRANSFER_SRC usage. */
oi_status oi_executor_vulkan_bind_buffer(oi_executor *exec, const char *name, uint64_t buffer, uint64_t offset,
                                         uint64_t size);
/* The VkBuffer range holding variable `name` on the device (uploading it
 * first if it only lives on the host); valid until the next step, insert
 * or executor free. The GPU work of the step is complete when this returns. */
oi_status oi_executor_vulkan_buffer(oi_executor *exec, const char *name, uint64_t *buffer, uint64_t *offset,
                                    uint64_t *size);

/* ------------------------------------------------------------------ */
/* Synthesizer: a validated graph becomes standalone C (docs/synthesizer.md).
 * An optional part: meson builds it into the library as its own object
 * (a program that only simulates does not link it); a drop-in user
 * defines OPENINFER_SYNTH before the implementation include.             */
/* ------------------------------------------------------------------ */
typedef struct oi_synthesizer oi_synthesizer;
typedef struct oi_plan oi_plan;
/* OI_DEVICE_CPU (or AUTO): C for this machine. VULKAN: C host code and GLSL
 * kernels for a device with no optional feature (oi_synthesizer_from_arch_json
 * takes a device's features and limits). */
oi_synthesizer *oi_synthesizer_new(oi_device device);
/* The seeds' device JSON (docs/device-json.md), every field checked; read
 * today: device.api ("c" or "vulkan"), preferences.prefer_fusion/max_kernel_ops
 * and memory.global_bytes (oi_synthesize fails when the plan does not fit),
 * preferences.default_precision (C: fp16/bf16 round every stored activation
 * to that type, as the simulator's precision setting); for Vulkan also the
 * limits and features that docs/synthesizer.md lists (default_precision
 * bf16: NULL, not supported). */
oi_synthesizer *oi_synthesizer_from_arch_json(const char *device_json);
void oi_synthesizer_free(oi_synthesizer *synth);
/* At most this many DSL statements fused into one kernel (default 16). */
oi_status oi_synthesizer_set_max_kernel_ops(oi_synthesizer *synth, int max_ops);
/* C target: the model file goes into the emitted folder as a const array
 * (NAME_model.h, 16 MiB at most), and NAME_open(NULL) opens it with no file
 * (a path still maps that file, checked as always). Default: off. */
oi_status oi_synthesizer_set_embed_model(oi_synthesizer *synth, bool embed);
/* Validates `graph` against `model` (the executor's rules) and schedules
 * it: kernels, fusion, the arena. Named sizes take the model's values.
 * The model and graph must outlive the plan. NULL + oi_last_error() when
 * something cannot be synthesized (the message names the DSL statement). */
oi_plan *oi_synthesize(oi_synthesizer *synth, const oi_model *model, const oi_graph *graph);
void oi_plan_free(oi_plan *plan);
/* Writes the folder (created if missing): NAME.h, NAME.c, oi_scalar.h,
 * npy.h, main.c, Makefile, plan.json, plan.dot (C target; oi_plan_files
 * names what it writes for the plan's target). */
oi_status oi_plan_emit(const oi_plan *plan, const char *out_dir);
/* The names of the files oi_plan_emit writes for this plan and target,
 * space-separated, in the order it writes them; free with oi_free. */
char *oi_plan_files(const oi_plan *plan);

typedef struct oi_plan_summary {
    const char *name;          /* the emitted files' and functions' prefix */
    size_t kernels;            /* kernel functions                        */
    size_t statements;         /* DSL op statements they run              */
    uint64_t arena_bytes;      /* the temporaries' arena (NAME_ARENA_BYTES) */
    uint64_t peak_live_bytes;  /* most temporary bytes live at once       */
    uint64_t state_bytes;      /* declared variables (not from the model) */
    uint64_t bytes_moved;      /* estimated per step (loops counted once) */
    uint64_t flops;            /* estimated per step (loops counted once) */
} oi_plan_summary;
oi_status oi_plan_get_summary(const oi_plan *plan, oi_plan_summary *out);
/* plan.json's text; free with oi_free. */
char *oi_plan_to_json(const oi_plan *plan);

#ifdef __cplusplus
}

/* C++: OI_INSERT's dtype from the pointer's element type, by overloads
 * (no _Generic); `data` is evaluated once. */
inline oi_dtype oi__dtype_of(const float *) { return OI_DTYPE_F32; }
inline oi_dtype oi__dtype_of(const double *) { return OI_DTYPE_F64; }
inline oi_dtype oi__dtype_of(const bool *) { return OI_DTYPE_BOOL; }
inline oi_dtype oi__dtype_of(const signed char *) { return OI_DTYPE_I8; }
inline oi_dtype oi__dtype_of(const unsigned char *) { return OI_DTYPE_U8; }
template <typename T> inline oi_dtype oi__int_dtype(bool is_signed) {
    return sizeof(T) == 8 ? (is_signed ? OI_DTYPE_I64 : OI_DTYPE_U64)
         : sizeof(T) == 4 ? (is_signed ? OI_DTYPE_I32 : OI_DTYPE_U32)
         : sizeof(T) == 2 ? (is_signed ? OI_DTYPE_I16 : OI_DTYPE_U16)
         : (is_signed ? OI_DTYPE_I8 : OI_DTYPE_U8);
}
inline oi_dtype oi__dtype_of(const short *) { return oi__int_dtype<short>(true); }
inline oi_dtype oi__dtype_of(const unsigned short *) { return oi__int_dtype<unsigned short>(false); }
inline oi_dtype oi__dtype_of(const int *) { return oi__int_dtype<int>(true); }
inline oi_dtype oi__dtype_of(const unsigned int *) { return oi__int_dtype<unsigned int>(false); }
inline oi_dtype oi__dtype_of(const long *) { return oi__int_dtype<long>(true); }
inline oi_dtype oi__dtype_of(const unsigned long *) { return oi__int_dtype<unsigned long>(false); }
inline oi_dtype oi__dtype_of(const long long *) { return oi__int_dtype<long long>(true); }
inline oi_dtype oi__dtype_of(const unsigned long long *) { return oi__int_dtype<unsigned long long>(false); }
template <typename T> inline oi_status oi__insert_typed(oi_executor *exec, const char *name, const T *data, size_t count) {
    return oi_executor_insert(exec, name, oi__dtype_of(data), data, count);
}
#define OI__INSERT_TYPED(exec, name, data, count) oi__insert_typed((exec), (name), (data), (count))
#endif
#endif /* OPENINFER_H */

/* The implementation sits outside the include guard (stb style), so a
 * file may include the header first and define the macro later. */
#if defined(OPENINFER_IMPLEMENTATION) && !defined(OPENINFER_IMPLEMENTATION_DONE)
#define OPENINFER_IMPLEMENTATION_DONE
#include "openinfer_impl/openinfer_impl.c"
#endif
