/* emit.c - writes the emitted folder; one short function per file, each
 * listing its parts in order:
 *
 *   NAME.h       the typed API (open, set_VAR, step, get_VAR, close,
 *                last_error) and NAME_ARENA_BYTES
 *   NAME.c       model mapping + fingerprint check, variable inits, the
 *                kernels (render.c), the step function, the accessors
 *   oi_scalar.h  kernels/scalar.h, verbatim: each op's arithmetic
 *   oi_scalar_math.h  kernels/scalar_math.h, verbatim, where a kernel calls
 *                its f32 exp, tanh, sigmoid, silu or gelu
 *   npy.h        openinfer_impl/npy.h, verbatim: the driver's .npy I/O
 *   main.c       the driver, with `openinfer run`'s flags
 *   Makefile     `make` builds libNAME.a and the driver NAME
 *   plan.json    kernels, fused statements, arena offsets, estimates
 *   plan.dot     the kernels and the variables between them */
#include "synth_internal.h"
#include "embedded.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>

static const oi__sy_lang *oi__sy_emit_lang(void) { return &oi__sy_lang_c; }

static void oi__sy_lines(oi__buf *b, const char *const *lines) {
    for (size_t i = 0; lines[i]; i++)
        oi__buf_puts(b, lines[i]);
}

static const char *oi__sy_file_name(const char *path) {
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "?";
}

static const char *oi__sy_home_name(oi__sy_home home) {
    switch (home) {
    case OI__SY_NONE: return "register";
    case OI__SY_MODEL: return "model";
    case OI__SY_PREFIX: return "model-prefix";
    case OI__SY_STATE: return "state";
    case OI__SY_TABLE: return "table";
    case OI__SY_ARENA: return "arena";
    }
    return "?";
}

/* Whether the API exposes a getter (the value is there after a step). A
 * value whose leading dim is known at run time only (a table slice and
 * what ops make of it) has one on the C target where it is kept in the
 * arena: its count is ctx->len_VAR times the rest. */
static bool oi__sy_has_getter(const oi_plan *p, int slot) {
    const oi__sy_buffer *b = &p->schedule.buffers[slot];
    if (b->dyn0)
        return !p->vulkan && b->home == OI__SY_ARENA && b->kept && !b->table_view;
    if (b->home == OI__SY_STATE || b->home == OI__SY_MODEL)
        return true;
    return b->home == OI__SY_ARENA && b->kept;
}

/* The rank of what a persistent table (or @auto_dim variable) reads back
 * as: its indices' sizes, then an entry's dims (an @auto_dim variable: its
 * grown matrix). */
static int oi__sy_read_rank(const oi__slot *sl) { return sl->n_auto > 0 ? sl->ndim : sl->n_indices + sl->ndim; }

/* Whether the API copies a table back (NAME_read_VAR): the C target's
 * tables and @auto_dim variables, as `openinfer run --fetch` gives them (a
 * table of @auto_dim matrices of different sizes it does not). */
static bool oi__sy_has_reader(const oi_plan *p, int slot) {
    const oi__slot *sl = &p->plan->slots[slot];
    return !p->vulkan && p->schedule.buffers[slot].home == OI__SY_TABLE && sl->dtype != OI_DTYPE_BF16 &&
           !(sl->is_table && sl->n_auto > 0) && oi__sy_read_rank(sl) <= OI_MAX_DIMS;
}

static void oi__sy_shape_text(oi__buf *b, const oi__slot *sl) {
    oi__buf_puts(b, "[");
    for (int d = 0; d < sl->ndim; d++)
        oi__buf_printf(b, "%s%lld", d ? ", " : "", (long long)sl->shape[d]);
    oi__buf_puts(b, "]");
}

static void oi__sy_sizes_comment(oi__buf *b, const oi_plan *p) {
    oi__buf_puts(b, " * Named sizes are specialized: the model's values at synthesis time");
    ptrdiff_t n = shlen(p->plan->sizes);
    if (n == 0) {
        oi__buf_puts(b, " (none).\n");
        return;
    }
    oi__buf_puts(b, ":\n *  ");
    for (ptrdiff_t i = 0; i < n; i++)
        oi__buf_printf(b, " %s = %lld%s", p->plan->sizes[i].key, (long long)p->plan->sizes[i].value,
                       i + 1 < n ? "," : ".\n");
}

/* ------------------------------------------------------------------ */
/* NAME.h                                                              */
/* ------------------------------------------------------------------ */

/* NAME_read_VAR's declaration, with what it gives back. */
static void oi__sy_header_reader(oi__buf *b, const oi_plan *p, int slot) {
    const char *N = p->name;
    const oi__slot *sl = &p->plan->slots[slot];
    oi__buf_printf(b, "/* %s: persistent %s %s", sl->name, sl->is_table ? "table of" : "@auto_dim", oi_dtype_name(sl->dtype));
    oi__sy_shape_text(b, sl);
    if (sl->n_auto > 0) {
        oi__buf_printf(b, ", its leading dim grown by %s.\n * Copies it as `openinfer run --fetch %s` gives it (the rows grown so far)",
                       sl->decl->table_indices[sl->auto_pos[0]], sl->name);
    } else {
        for (int k = 0; k < sl->n_indices; k++)
            oi__buf_printf(b, "%s%s", k ? ", " : " by ", sl->decl->table_indices[k]);
        oi__buf_printf(b, ".\n * Copies it as `openinfer run --fetch %s` gives it (each index's size so far,\n"
                          " * then an entry's dims; entries never written hold @init or zeros)", sl->name);
    }
    oi__buf_printf(b, " into values,\n * its %d dims into shape and its count into *count; values NULL asks for the\n"
                      " * count and the shape only. Fails when capacity is too small. */\n", oi__sy_read_rank(sl));
    oi__buf_printf(b, "int %s_read_%s(const %s_ctx *ctx, %s *values, size_t capacity, size_t *count, int64_t *shape);\n",
                   N, sl->name, N, oi__sy_emit_lang()->type_of(sl->dtype));
}

static char *oi__sy_header(const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_lang *lang = oi__sy_emit_lang();
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "/* %s.h - graph \"%s\", synthesized by OpenInfer %s for %s.\n", N,
                   oi_graph_name(p->plan->graph), OI_VERSION_STRING,
                   p->vulkan ? "Vulkan (GLSL kernels, C11 host code)" : "the CPU (C11)");
    oi__buf_puts(&b, " * Standalone: needs no OpenInfer header or library.\n");
    oi__sy_sizes_comment(&b, p);
    oi__buf_printf(&b, " *\n *   %s_ctx *ctx = %s_open(\"model.oinf\");   // NULL: %s_last_error() says why\n", N, N,
                   N);
    oi__buf_printf(&b, " *   %s_set_VAR(ctx, values, count);          // every dynamic variable, before a step\n", N);
    oi__buf_printf(&b, " *   %s_step(ctx);                            // 0, or an error code\n", N);
    oi__buf_printf(&b, " *   const float *y = %s_get_VAR(ctx, &count); // valid until the next step\n", N);
    oi__buf_printf(&b, " *   %s_close(ctx);\n */\n", N);
    oi__buf_printf(&b, "#ifndef %s_H\n#define %s_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", N, N);
    oi__buf_puts(&b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    oi__buf_printf(&b, "/* The temporaries' arena, planned at synthesis time (plan.json). */\n");
    oi__buf_printf(&b, "#define %s_ARENA_BYTES %lluu\n", N, (unsigned long long)p->schedule.arena_bytes);
    oi__buf_printf(&b, "/* The declared variables that do not live in the model file. */\n");
    oi__buf_printf(&b, "#define %s_STATE_BYTES %lluu\n", N, (unsigned long long)p->schedule.state_bytes);
    if (!p->vulkan) { /* the GPU's kernels read the weights as the model file has them */
        oi__buf_printf(&b, "/* The weights that matrix products read, packed once by %s_open into the\n"
                           " * micro-kernels' panel layout (at most; plan.json lists them). */\n", N);
        oi__buf_printf(&b, "#define %s_PACKED_BYTES %lluu\n\n", N, (unsigned long long)p->schedule.packed_bytes);
    } else {
        oi__buf_puts(&b, "\n");
    }
    oi__buf_printf(&b, "/* Error codes (%s_last_error() has the message). */\n", N);
    oi__buf_printf(&b, "enum { %s_OK = 0, %s_ERROR_ARGUMENT = 1, %s_ERROR_IO = 2, %s_ERROR_MODEL = 3, "
                       "%s_ERROR_MEMORY = 4, %s_ERROR_RUNTIME = 5 };\n\n", N, N, N, N, N, N);
    oi__buf_printf(&b, "typedef struct %s_ctx %s_ctx;\n\n", N, N);
    oi__buf_printf(&b, "/* Options of %s_open_with; zero means the default. */\n", N);
    oi__buf_printf(&b, "typedef struct %s_options {\n    int n_threads; /* threads of the step's kernels, the caller's included;\n"
                       "                     0: $OPENINFER_THREADS, else every core this process may use%s */\n} %s_options;\n\n",
                   N, p->vulkan ? "\n                     (unused: the kernels run on the GPU)" : "", N);
    if (p->vulkan)
        oi__buf_printf(&b, "/* Maps the model (checked against the fingerprint of the one synthesized for),\n"
                           " * uploads it to the GPU and records the step's command buffer. */\n");
    else
        oi__buf_printf(&b, "/* Maps the model (checked against the fingerprint of the one synthesized for),\n"
                           " * packs the weights of matrix products and starts the threads. */\n");
    oi__buf_printf(&b, "%s_ctx *%s_open(const char *model_path);\n", N, N);
    oi__buf_printf(&b, "%s_ctx *%s_open_with(const char *model_path, const %s_options *options); /* options: NULL = defaults */\n",
                   N, N, N);
    oi__buf_printf(&b, "/* Runs one step; allocates nothing, starts no thread. One step at a time per context. */\n"
                       "int %s_step(%s_ctx *ctx);\n", N, N);
    oi__buf_printf(&b, "void %s_close(%s_ctx *ctx);\n", N, N);
    oi__buf_printf(&b, "/* The message of this thread's last error (\"\" if none). */\nconst char *%s_last_error(void);\n\n",
                   N);
    const oi__plan *pl = p->plan;
    for (int i = 0; i < (int)arrlen(pl->slots); i++) {
        const oi__slot *sl = &pl->slots[i];
        bool setter = sl->decl && sl->kind == OI__MEM_DYNAMIC && p->schedule.buffers[i].home == OI__SY_STATE;
        bool getter = oi__sy_has_getter(p, i);
        if (oi__sy_has_reader(p, i))
            oi__sy_header_reader(&b, p, i);
        if (!setter && !getter)
            continue;
        const char *t = lang->type_of(sl->dtype);
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        oi__buf_printf(&b, "/* %s: %s %s", sl->name, oi__mem_kind_name(sl->kind), oi_dtype_name(sl->dtype));
        if (buf->dyn0) {
            oi__buf_puts(&b, "[?");
            for (int d = 1; d < sl->ndim; d++)
                oi__buf_printf(&b, ", %lld", (long long)sl->shape[d]);
            oi__buf_printf(&b, "], its leading dim known after a step (at most %lld) */\n", (long long)buf->max0);
        } else {
            oi__sy_shape_text(&b, sl);
            oi__buf_printf(&b, ", %lld values */\n", (long long)oi__shape_numel(sl->ndim, sl->shape));
        }
        if (setter)
            oi__buf_printf(&b, "int %s_set_%s(%s_ctx *ctx, const %s *values, size_t count);\n", N, sl->name, N, t);
        if (getter)
            oi__buf_printf(&b, "const %s *%s_get_%s(const %s_ctx *ctx, size_t *count);\n", t, N, sl->name, N);
    }
    oi__buf_printf(&b, "\n#ifdef __cplusplus\n}\n#endif\n#endif /* %s_H */\n", N);
    return oi__buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* NAME.c                                                              */
/* ------------------------------------------------------------------ */
/* preferences.default_precision fp16/bf16 (the C target): oi_half.h and
 * NAME_round_stored, called after each kernel (render.c) */
/* A kernel calls one of scalar_math.h's functions (an elementwise op of an
 * SMATH row of OI__SY_EW_LIST, or a gemm's or conv's gelu activation where
 * no oi_gemm.h, which holds scalar_math.h, comes): the folder gets
 * oi_scalar_math.h. */
static bool oi__sy_uses_scalar_math(const oi_plan *p) {
    for (size_t k = 0; k < arrlenu(p->schedule.kernels); k++)
        for (size_t n = 0; n < arrlenu(p->schedule.kernels[k].nodes); n++) {
            const oi__pnode *pn = p->schedule.kernels[k].nodes[n];
            const oi__sy_ew_op *e = oi__sy_ew_op_of(pn->ir->op);
            const char *act = oi__sy_activation(pn);
            if ((e && e->form == OI__SY_EW_SMATH) || (act && strncmp(act, "gelu", 4) == 0 && !p->schedule.packed_gemm))
                return true;
        }
    return false;
}

static bool oi__sy_rounds_stores(const oi_plan *p) {
    oi_dtype t = p->schedule.options.precision;
    return !p->vulkan && (t == OI_DTYPE_F16 || t == OI_DTYPE_BF16);
}

/* An elementwise kernel computes on f16 or bf16 (their bits, through
 * half.h's conversions: a cast to or from one, or an op on f16): the
 * folder gets oi_half.h, as for a precision of fp16 or bf16 (and
 * oi_quant.h, which includes it). */
static bool oi__sy_computes_half(const oi_plan *p) {
    for (size_t k = 0; k < arrlenu(p->schedule.kernels); k++)
        for (size_t n = 0; n < arrlenu(p->schedule.kernels[k].nodes); n++) {
            const oi__pnode *pn = p->schedule.kernels[k].nodes[n];
            if (p->schedule.kernels[k].kind == OI__SY_K_ELEMENTWISE &&
                (oi__sy_is_half(p->schedule.shaped[pn->out].dtype) || oi__sy_is_half(p->schedule.shaped[pn->inputs[0]].dtype)))
                return true;
        }
    return false;
}

static bool oi__sy_has_setter(const oi_plan *p, int slot) {
    const oi__slot *sl = &p->plan->slots[slot];
    return sl->decl && sl->kind == OI__MEM_DYNAMIC && p->schedule.buffers[slot].home == OI__SY_STATE;
}

/* The driver sets (sets true) or fetches (false) a bf16 variable: its
 * .npy file holds f32, as `openinfer run` reads and writes it, converted
 * by half.h's functions (main.c includes oi_half.h). */
static bool oi__sy_driver_moves_bf16(const oi_plan *p, bool sets) {
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++)
        if (p->plan->slots[i].dtype == OI_DTYPE_BF16 && (sets ? oi__sy_has_setter(p, i) : oi__sy_has_getter(p, i)))
            return true;
    return false;
}

static bool oi__sy_driver_bf16(const oi_plan *p) {
    return oi__sy_driver_moves_bf16(p, true) || oi__sy_driver_moves_bf16(p, false);
}

/* The folder gets oi_half.h. */
static bool oi__sy_writes_half(const oi_plan *p) {
    return oi__sy_rounds_stores(p) || p->schedule.quant || oi__sy_computes_half(p) || oi__sy_driver_bf16(p);
}

static void oi__sy_source_prologue(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "/* %s.c - graph \"%s\", synthesized by OpenInfer %s for the CPU (C11).\n", N,
                   oi_graph_name(p->plan->graph), OI_VERSION_STRING);
    size_t statements = 0, kernels = arrlenu(p->schedule.kernels);
    for (size_t k = 0; k < kernels; k++)
        statements += arrlenu(p->schedule.kernels[k].nodes);
    oi__buf_printf(b, " * %zu kernel%s run%s %zu DSL op statement%s; plan.json lists them with their arena offsets.\n",
                   kernels, kernels == 1 ? "" : "s", kernels == 1 ? "s" : "", statements, statements == 1 ? "" : "s");
    oi__sy_sizes_comment(b, p);
    oi__buf_printf(b, " * Build with -D%s_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */\n",
                   N);
    oi__buf_puts(b, "#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)\n#define _POSIX_C_SOURCE 200809L\n#endif\n");
    oi__buf_printf(b, "#include \"%s.h\"\n#include \"oi_scalar.h\"\n%s%s%s%s%s\n", N,
                   oi__sy_uses_scalar_math(p) ? "#include \"oi_scalar_math.h\"\n" : "",
                   p->schedule.packed_gemm ? "#include \"oi_gemm.h\"\n" : "",
                   p->schedule.threaded ? "#include \"oi_runtime.h\"\n" : "",
                   oi__sy_rounds_stores(p) || oi__sy_computes_half(p) ? "#include \"oi_half.h\"\n" : "",
                   p->schedule.quant ? "#include \"oi_quant.h\"\n" : "");
    if (p->embed_model)
        oi__buf_printf(b, "#include \"%s_model.h\" /* the model file, built in: %s_open(NULL) */\n\n", N, N);
    oi__buf_puts(b, "#include <math.h>\n#include <stdarg.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n");
    oi__buf_puts(b, "#if defined(__unix__) || defined(__APPLE__)\n#include <fcntl.h>\n#include <sys/mman.h>\n"
                    "#include <sys/stat.h>\n#include <unistd.h>\n#define OI_HAVE_MMAP 1\n#endif\n\n");
    oi__buf_puts(b, "/* kernels/scalar.h's ROUND for f32 results: the simulator computes in\n"
                    " * double and rounds to the storage type after every op, and so do we */\n");
    oi__buf_puts(b, "#define OI_ROUND_F32(x) ((double)(float)(x))\n\n");
    if (oi__sy_rounds_stores(p)) {
        bool f16 = p->schedule.options.precision == OI_DTYPE_F16;
        const char *t = f16 ? "f16" : "bf16";
        oi__buf_printf(b, "/* preferences.default_precision %s: every activation a kernel stores is rounded\n"
                          " * once to %s, to nearest even, as the simulator's precision %s stores it\n"
                          " * (the arithmetic stays f32; the arena keeps f32 words holding %s values) */\n",
                       f16 ? "fp16" : "bf16", t, t, t);
        oi__buf_printf(b, "static inline void %s_round_stored(float *v, int64_t n) { /* inline: maybe unused */\n    for (int64_t i = 0; i < n; i++)\n"
                          "        v[i] = %s;\n}\n\n", N,
                       f16 ? "oi__f16_to_f32(oi__f32_to_f16(v[i]), OI__HALF_NAN_QUIET)" : "oi__bf16_to_f32(oi__f32_to_bf16(v[i]))");
    }
    oi__buf_printf(b, "#define %s_FINGERPRINT 0x%016llxull /* FNV-1a of the model's header and tables */\n", N,
                   (unsigned long long)p->fingerprint);
    oi__buf_printf(b, "#define %s_HEADER_BYTES %lluull   /* where the model's data section starts */\n", N,
                   (unsigned long long)p->model_header_bytes);
    oi__buf_puts(b, "\n#ifdef __cplusplus\n#define OI_THREAD_LOCAL thread_local\n#else\n#define OI_THREAD_LOCAL _Thread_local\n#endif\n\n");
}

static void oi__sy_source_ctx(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "struct %s_ctx {\n", N);
    oi__buf_printf(b, "    unsigned char *arena; /* %s_ARENA_BYTES: the temporaries, at planned offsets */\n", N);
    oi__buf_printf(b, "    unsigned char *state; /* %s_STATE_BYTES: the declared variables */\n", N);
    oi__buf_puts(b, "    const unsigned char *model; /* the mapped model file */\n    size_t model_size;\n"
                    "    int model_mapped;\n    long long steps;\n");
    if (p->schedule.packed_gemm)
        oi__buf_puts(b, "    const struct oi_micro *mk; /* the micro-kernel, chosen at open */\n");
    if (p->schedule.packed_bytes)
        oi__buf_printf(b, "    unsigned char *packed; /* %s_PACKED_BYTES, 64-byte aligned: the packed weights */\n"
                          "    void *packed_block;\n", N);
    if (p->schedule.threaded)
        oi__buf_puts(b, "    oi_rt_pool pool; /* the step's threads (oi_runtime.h) */\n");
    if (p->schedule.q8_elements)
        oi__buf_printf(b, "    int8_t q8_x[%lld]; /* each matmul_q4's x in int8 blocks, rounded before its tasks run */\n"
                          "    float q8_d[%lld];\n    int32_t q8_s[%lld];\n",
                       (long long)p->schedule.q8_elements, (long long)p->schedule.q8_elements / 32,
                       (long long)p->schedule.q8_elements / 32);
    if (p->schedule.quant)
        oi__buf_puts(b, "    oi__q8dot_fn q8_dot; /* quant.c's block dot product for this CPU, chosen at open */\n"
                          "    void (*q8_round)(const float *, int64_t, int64_t, int8_t *, float *, int32_t *); /* x's rounding */\n");
    int n_dynamic = 0;
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        if (buf->home == OI__SY_PREFIX)
            oi__buf_printf(b, "    const void *%s_entries[%lld]; /* %s(l): the model's %s */\n", sl->name,
                           (long long)(buf->prefix_count ? buf->prefix_count : 1), sl->name, sl->pattern);
        if (buf->home == OI__SY_TABLE)
            oi__buf_printf(b, "    int64_t %s_size[%d]; /* table %s: the size of each index (largest used + 1) */\n",
                           sl->name, sl->n_indices, sl->name);
        if (buf->home == OI__SY_TABLE && buf->entry_resets)
            oi__buf_printf(b, "    unsigned char %s_made[%lld]; /* per entry of %s: accessed since its last reset */\n",
                           sl->name, (long long)(buf->table_entries > 0 ? buf->table_entries : 1), sl->name);
        if (buf->home == OI__SY_TABLE && sl->n_auto > 0)
            oi__buf_printf(b, "    int64_t %s_grown[%lld]; /* per entry of %s: the rows @auto_dim grew it by */\n", sl->name,
                           (long long)(buf->table_entries > 0 ? buf->table_entries : 1), sl->name);
        if (buf->dyn0)
            oi__buf_printf(b, "    int64_t len_%s; /* %s's leading dim, known at run time (at most %lld) */\n", sl->name,
                           sl->name, (long long)buf->max0);
        if (buf->table_view)
            oi__buf_printf(b, "    %s *view_%s; /* %s: its entries in the table it was read from, not a copy */\n",
                           oi__sy_emit_lang()->type_of(sl->dtype), sl->name, sl->name);
        if (sl->decl && sl->kind == OI__MEM_DYNAMIC)
            n_dynamic++;
    }
    oi__buf_printf(b, "    unsigned char inserted[%d]; /* per dynamic variable: set since the last step */\n",
                   n_dynamic ? n_dynamic : 1);
    oi__buf_puts(b, "};\n\n");
    if (p->schedule.packed_gemm) /* the struct comes with the kernels */
        oi__buf_puts(b, "struct oi_micro;\n\n");
    oi__buf_printf(b, "static OI_THREAD_LOCAL char %s_error_text[512];\n\n", N);
    oi__buf_printf(b, "const char *%s_last_error(void) { return %s_error_text; }\n\n", N, N);
    oi__buf_printf(b, "static int %s_fail(int code, const char *fmt, ...) {\n    va_list args;\n    va_start(args, fmt);\n"
                      "    vsnprintf(%s_error_text, sizeof %s_error_text, fmt, args);\n    va_end(args);\n    return code;\n}\n\n",
                   N, N, N);
}

/* One function per declared variable with its own bytes: what it starts as
 * (model data, @init, or zeros). */
/* "(float)1.5; @init" for v[i] = ...: the declared @init value as
 * the variable's C type takes it; an f16 or bf16 one as its bits, rounded
 * as the simulator stores it (oi__store_f64 / oi__store_i64). */
static void oi__sy_init_value(oi__buf *b, const oi__slot *sl, const char *t) {
    if (oi__sy_is_half(sl->dtype)) {
        uint16_t bits = 0;
        if (sl->decl->init_kind == OI__INIT_FLOAT)
            oi__store_f64(sl->dtype, &bits, 0, sl->decl->init_float);
        else
            oi__store_i64(sl->dtype, &bits, 0, sl->decl->init_int);
        oi__buf_printf(b, "(%s)%u; /* @init, %s bits */\n", t, (unsigned)bits, oi_dtype_name(sl->dtype));
    } else if (sl->decl->init_kind == OI__INIT_FLOAT) {
        char text[40];
        snprintf(text, sizeof text, "%.17g", sl->decl->init_float);
        oi__buf_printf(b, "(%s)%s%s; /* @init */\n", t, text, strpbrk(text, ".eEn") ? "" : ".0");
    } else {
        oi__buf_printf(b, "(%s)", t);
        oi__sy_i64_literal(b, sl->decl->init_int, "LL");
        oi__buf_puts(b, "; /* @init */\n");
    }
}

static void oi__sy_source_inits(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_lang *lang = oi__sy_emit_lang();
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        if (buf->home != OI__SY_STATE)
            continue;
        const char *t = lang->type_of(sl->dtype);
        oi__buf_printf(b, "/* %s: %s %s", sl->name, oi__mem_kind_name(sl->kind), oi_dtype_name(sl->dtype));
        oi__sy_shape_text(b, sl);
        oi__buf_printf(b, " (%s:%d) */\nstatic void %s_init_%s(%s_ctx *ctx) {\n", sl->src ? sl->src->file : "?",
                       sl->src ? sl->src->line : 0, N, sl->name, N);
        oi__buf_printf(b, "    %s *v = (%s *)(ctx->state + %llu);\n", t, t, (unsigned long long)buf->offset);
        if (arrlen(buf->tensors)) {
            oi__buf_printf(b, "    memcpy(v, ctx->model + %llu, %llu); /* model tensor %s */\n",
                           (unsigned long long)buf->tensors[0]->data_offset, (unsigned long long)buf->bytes,
                           buf->tensors[0]->name);
        } else if (sl->decl && sl->decl->init_kind != OI__INIT_NONE) {
            oi__buf_printf(b, "    for (%s i = 0; i < %lld; i++)\n        v[i] = ", lang->index_type,
                           (long long)oi__shape_numel(sl->ndim, sl->shape));
            oi__sy_init_value(b, sl, t);
        } else {
            oi__buf_printf(b, "    memset(v, 0, %llu);\n", (unsigned long long)buf->bytes);
        }
        oi__buf_puts(b, "}\n\n");
    }
}

/* NAME_resize_VAR: after a reset of one entry, each index's size is the
 * largest of the entries still accessed, + 1 (the simulator drops the
 * entry and counts the rest). */
static void oi__sy_source_table_resize(oi__buf *b, const oi_plan *p, int slot) {
    const char *N = p->name;
    const oi__slot *sl = &p->plan->slots[slot];
    const oi__sy_buffer *buf = &p->schedule.buffers[slot];
    oi__buf_printf(b, "static void %s_resize_%s(%s_ctx *ctx) {\n    memset(ctx->%s_size, 0, sizeof ctx->%s_size);\n", N,
                   sl->name, N, sl->name, sl->name);
    oi__buf_printf(b, "    for (int64_t e = 0; e < %lld; e++) {\n        if (!ctx->%s_made[e])\n            continue;\n",
                   (long long)buf->table_entries, sl->name);
    int64_t stride = 1;
    for (int k = sl->n_indices - 1; k >= 0; k--) {
        oi__buf_printf(b, "        const int64_t i%d = e / %lld %% %lld;\n", k, (long long)stride, (long long)buf->bound[k]);
        oi__buf_printf(b, "        if (i%d + 1 > ctx->%s_size[%d])\n            ctx->%s_size[%d] = i%d + 1;\n", k, sl->name, k,
                       sl->name, k, k);
        stride *= buf->bound[k];
    }
    oi__buf_puts(b, "    }\n}\n\n");
}

/* Tables: every entry starts as @init or zeros, every size as 0. */
static void oi__sy_source_table_inits(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_lang *lang = oi__sy_emit_lang();
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        if (buf->home != OI__SY_TABLE)
            continue;
        const char *t = lang->type_of(sl->dtype);
        long long entry = (long long)oi__sy_entry_numel(buf, sl);
        oi__buf_printf(b, "/* %s %s: entries of %s", sl->is_table ? "table" : "variable", sl->name, oi_dtype_name(sl->dtype));
        oi__sy_shape_text(b, sl);
        oi__buf_puts(b, ", preallocated at");
        for (int k = 0; k < sl->n_indices; k++) {
            if (sl->n_auto > 0 && k == sl->auto_pos[0])
                oi__buf_printf(b, " %s <= %lld (@auto_dim%s: rows added to the leading dim)", sl->decl->table_indices[k],
                               (long long)buf->auto_max, sl->fixed[k] >= 0 ? ", @fixed" : "");
            else
                oi__buf_printf(b, " %s < %lld%s", sl->decl->table_indices[k], (long long)buf->bound[k],
                               sl->fixed[k] >= 0 ? " (@fixed)" : "");
        }
        oi__buf_printf(b, " */\nstatic inline void %s_init_%s_entry(%s *v) {\n", N, sl->name, t);
        if (sl->decl->init_kind != OI__INIT_NONE) {
            oi__buf_printf(b, "    for (%s i = 0; i < %lld; i++)\n        v[i] = ", lang->index_type, entry);
            oi__sy_init_value(b, sl, t);
        } else {
            oi__buf_printf(b, "    memset(v, 0, %llu);\n", (unsigned long long)buf->bytes);
        }
        oi__buf_printf(b, "}\n\nstatic void %s_init_%s(%s_ctx *ctx) {\n", N, sl->name, N);
        oi__buf_printf(b, "    for (int64_t e = 0; e < %lld; e++)\n        %s_init_%s_entry((%s *)(ctx->state + %llu) + e * %lld);\n",
                       (long long)buf->table_entries, N, sl->name, t, (unsigned long long)buf->offset, entry);
        oi__buf_printf(b, "    memset(ctx->%s_size, 0, sizeof ctx->%s_size);\n", sl->name, sl->name);
        if (sl->n_auto > 0)
            oi__buf_printf(b, "    memset(ctx->%s_grown, 0, sizeof ctx->%s_grown);\n", sl->name, sl->name);
        if (buf->entry_resets)
            oi__buf_printf(b, "    memset(ctx->%s_made, 0, sizeof ctx->%s_made);\n", sl->name, sl->name);
        oi__buf_puts(b, "}\n\n");
        if (buf->entry_resets)
            oi__sy_source_table_resize(b, p, i);
    }
}

static void oi__sy_source_model(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "/* Maps the model read-only and checks that it is the file this code was\n"
                      " * synthesized for: the header and tables hash to %s_FINGERPRINT. */\n", N);
    oi__buf_printf(b, "static int %s_map_model(%s_ctx *ctx, const char *path) {\n", N, N);
    if (!p->model) {
        oi__buf_puts(b, "    (void)ctx;\n    (void)path;\n    return 0; /* the graph reads no model */\n}\n\n");
        return;
    }
    if (p->embed_model)
        oi__buf_printf(b, "    if (!path) { /* the built-in model: the file this code was synthesized for */\n"
                          "        ctx->model = %s_model_bytes;\n        ctx->model_size = sizeof %s_model_bytes;\n"
                          "        return 0;\n    }\n", N, N);
    else
        oi__buf_printf(b, "    if (!path)\n        return %s_fail(%s_ERROR_ARGUMENT, \"%s_open: no model path\");\n", N, N, N);
    oi__buf_puts(b, "    FILE *f = fopen(path, \"rb\");\n");
    oi__buf_printf(b, "    if (!f)\n        return %s_fail(%s_ERROR_IO, \"%%s: cannot open the model\", path);\n", N, N);
    oi__buf_puts(b, "    if (fseek(f, 0, SEEK_END) != 0) {\n        fclose(f);\n");
    oi__buf_printf(b, "        return %s_fail(%s_ERROR_IO, \"%%s: cannot seek\", path);\n    }\n", N, N);
    oi__buf_puts(b, "    long size = ftell(f);\n    void *bytes = NULL;\n#ifdef OI_HAVE_MMAP\n"
                    "    if (size > 0) {\n        bytes = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(f), 0);\n"
                    "        if (bytes == MAP_FAILED)\n            bytes = NULL;\n        else\n            ctx->model_mapped = 1;\n"
                    "    }\n#endif\n");
    oi__buf_puts(b, "    if (!bytes && size > 0) { /* no mmap: read it */\n        bytes = malloc((size_t)size);\n"
                    "        if (bytes && (fseek(f, 0, SEEK_SET) != 0 || fread(bytes, 1, (size_t)size, f) != (size_t)size)) {\n"
                    "            free(bytes);\n            bytes = NULL;\n        }\n    }\n    fclose(f);\n");
    oi__buf_printf(b, "    if (!bytes)\n        return %s_fail(%s_ERROR_IO, \"%%s: cannot read the model\", path);\n", N, N);
    oi__buf_puts(b, "    ctx->model = (const unsigned char *)bytes;\n    ctx->model_size = (size_t)size;\n");
    oi__buf_puts(b, "    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;\n");
    oi__buf_puts(b, "    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)\n"
                    "        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */\n");
    oi__buf_printf(b, "    if (ctx->model_size < 61 || data_at != %s_HEADER_BYTES || data_at > ctx->model_size ||\n"
                      "        (uint64_t)ctx->model_size < %lluull)\n", N, (unsigned long long)p->model_size);
    oi__buf_printf(b, "        return %s_fail(%s_ERROR_MODEL, \"%%s: not the model this code was synthesized for \"\n"
                      "                       \"(its layout differs); synthesize again for this file\", path);\n", N, N);
    oi__buf_puts(b, "    for (uint64_t i = 0; i < data_at; i++) {\n        hash ^= ctx->model[i];\n"
                    "        hash *= 0x100000001b3ull;\n    }\n");
    oi__buf_printf(b, "    if (hash != %s_FINGERPRINT)\n", N);
    oi__buf_printf(b, "        return %s_fail(%s_ERROR_MODEL, \"%%s: not the model this code was synthesized for \"\n"
                      "                       \"(fingerprint %%016llx, expected %%016llx); synthesize again for this file\",\n"
                      "                       path, (unsigned long long)hash, (unsigned long long)%s_FINGERPRINT);\n",
                   N, N, N);
    oi__buf_puts(b, "    return 0;\n}\n\n");
}

static void oi__sy_source_dump(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n#define OI_NPY_STATIC\n#define OI_NPY_IMPLEMENTATION\n#include \"npy.h\"\n", N);
    oi__buf_printf(b, "#define %s_STR2(x) #x\n#define %s_STR(x) %s_STR2(x)\n", N, N, N);
    oi__buf_printf(b, "/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */\n");
    oi__buf_printf(b, "static void %s_dump(const %s_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {\n",
                   N, N);
    oi__buf_puts(b, "    static const struct { const char *name; uint64_t count; } sizes[] = {\n");
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        oi__buf_printf(b, "        {\"%s\", %lluu},\n", sl->name, (unsigned long long)oi__shape_numel(sl->ndim, sl->shape));
    }
    oi__buf_puts(b, "    };\n    uint64_t count = 0;\n    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)\n"
                    "        if (strcmp(sizes[i].name, name) == 0)\n            count = sizes[i].count;\n");
    oi__buf_printf(b, "    char path[1024];\n    snprintf(path, sizeof path, \"%%s/step%%lld_k%%d_%%s.npy\", %s_STR(%s_DEBUG_DUMP),\n"
                      "             ctx->steps, kernel, name);\n", N, N);
    oi__buf_puts(b, "    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);\n}\n#endif\n\n");
}

/* The start of a step: what each memory kind starts as (docs/simulator.md). */
static void oi__sy_source_resets(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    int dyn = 0;
    oi__buf_puts(b, "    /* the start of a step: every memory kind starts as the simulator's does */\n");
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        if (sl->decl && sl->kind == OI__MEM_DYNAMIC) {
            if (buf->home == OI__SY_STATE)
                oi__buf_printf(b, "    if (!ctx->inserted[%d])\n        %s_init_%s(ctx); /* dynamic, not set: as declared */\n",
                               dyn, N, sl->name);
            dyn++;
        } else if (sl->decl && sl->kind == OI__MEM_VOLATILE && buf->home == OI__SY_STATE) {
            oi__buf_printf(b, "    %s_init_%s(ctx); /* volatile */\n", N, sl->name);
        } else if (buf->home == OI__SY_ARENA && buf->zero_at_start) {
            oi__buf_printf(b, "    memset(ctx->arena + %llu, 0, %llu); /* %s: read before it is written */\n",
                           (unsigned long long)buf->offset, (unsigned long long)buf->bytes, sl->name);
        }
    }
}

/* The weights of skinny matmuls (schedule.c's oi__sy_plan_skinny),
 * transposed into ctx->packed: entry [N, K] row-major. */
static void oi__sy_source_transpose_weights(oi__buf *b, const oi_plan *p) {
    const oi__sy_schedule *s = &p->schedule;
    for (int i = 0; i < (int)arrlen(s->buffers); i++) {
        const oi__sy_buffer *buf = &s->buffers[i];
        if (!buf->transposed)
            continue;
        const oi__slot *sl = &p->plan->slots[buf->slot];
        long long K = (long long)sl->shape[0], Nc = (long long)sl->shape[1];
        for (int e = 0; e < (int)arrlen(buf->tensors); e++)
            oi__buf_printf(b, "    { /* %s, transposed */\n        const float *w = (const float *)(ctx->model + %llu);\n"
                              "        float *wt = (float *)(ctx->packed + %llu);\n"
                              "        for (size_t j = 0; j < %lld; j++)\n            for (size_t q = 0; q < %lld; q++)\n"
                              "                wt[j * %lld + q] = w[q * %lld + j];\n    }\n",
                           buf->tensors[e]->name, (unsigned long long)buf->tensors[e]->data_offset,
                           (unsigned long long)(buf->transposed_offset + (uint64_t)e * buf->transposed_bytes), Nc, K, K,
                           Nc);
    }
}

/* At open, after the model is mapped: the micro-kernel, the weights packed
 * for it (every entry of a prefix table), the threads. */
static void oi__sy_source_open_runtime(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_schedule *s = &p->schedule;
    if (s->packed_gemm)
        oi__buf_puts(b, "    ctx->mk = oi_micro_select();\n");
    if (s->quant)
        oi__buf_puts(b, "    ctx->q8_dot = oi_q8dot_select();\n    ctx->q8_round = oi_q8_round_select();\n");
    if (s->packed_bytes) {
        oi__buf_printf(b, "    ctx->packed_block = malloc(%s_PACKED_BYTES + 64);\n    if (!ctx->packed_block) {\n"
                          "        %s_close(ctx);\n        %s_fail(%s_ERROR_MEMORY, \"%s_open: out of memory\");\n"
                          "        return NULL;\n    }\n", N, N, N, N, N);
        oi__buf_puts(b, "    ctx->packed = (unsigned char *)(((uintptr_t)ctx->packed_block + 63) & ~(uintptr_t)63);\n");
        for (int i = 0; i < (int)arrlen(s->buffers); i++) {
            const oi__sy_buffer *buf = &s->buffers[i];
            if (!buf->prepacked)
                continue;
            const oi__slot *sl = &p->plan->slots[buf->slot];
            long long K = (long long)sl->shape[0], Nc = (long long)sl->shape[1];
            for (int e = 0; e < (int)arrlen(buf->tensors); e++)
                oi__buf_printf(b, "    oi_pack_b(ctx->mk, (const float *)(ctx->model + %llu), 1, %lld, %lld, %lld, "
                                  "(float *)(ctx->packed + %llu)); /* %s */\n",
                               (unsigned long long)buf->tensors[e]->data_offset, Nc, K, Nc,
                               (unsigned long long)(buf->packed_offset + (uint64_t)e * buf->packed_bytes),
                               buf->tensors[e]->name);
        }
        oi__sy_source_transpose_weights(b, p);
    }
    if (s->threaded)
        oi__buf_printf(b, "    if (oi_rt_pool_start(&ctx->pool, options ? options->n_threads : 0) != 0) {\n"
                          "        %s_close(ctx);\n        %s_fail(%s_ERROR_MEMORY, \"%s_open: cannot start its threads\");\n"
                          "        return NULL;\n    }\n", N, N, N, N);
    else
        oi__buf_puts(b, "    (void)options; /* one thread: no kernel is worth splitting */\n");
}

static void oi__sy_source_open(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "%s_ctx *%s_open(const char *model_path) { return %s_open_with(model_path, NULL); }\n\n", N, N, N);
    oi__buf_printf(b, "%s_ctx *%s_open_with(const char *model_path, const %s_options *options) {\n", N, N, N);
    oi__buf_printf(b, "    %s_ctx *ctx = (%s_ctx *)calloc(1, sizeof *ctx);\n", N, N);
    oi__buf_printf(b, "    if (ctx) {\n        ctx->arena = (unsigned char *)calloc(1, %s_ARENA_BYTES + 1);\n"
                      "        ctx->state = (unsigned char *)calloc(1, %s_STATE_BYTES + 1);\n    }\n", N, N);
    oi__buf_printf(b, "    if (!ctx || !ctx->arena || !ctx->state) {\n        %s_close(ctx);\n"
                      "        %s_fail(%s_ERROR_MEMORY, \"%s_open: out of memory\");\n        return NULL;\n    }\n",
                   N, N, N, N);
    oi__buf_printf(b, "    if (%s_map_model(ctx, model_path) != 0) {\n        %s_close(ctx);\n        return NULL;\n    }\n", N, N);
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        if (buf->home == OI__SY_PREFIX)
            for (int e = 0; e < (int)arrlen(buf->tensors); e++)
                oi__buf_printf(b, "    ctx->%s_entries[%d] = ctx->model + %llu; /* %s */\n", sl->name, e,
                               (unsigned long long)buf->tensors[e]->data_offset, buf->tensors[e]->name);
        if (buf->home == OI__SY_STATE || buf->home == OI__SY_TABLE)
            oi__buf_printf(b, "    %s_init_%s(ctx);\n", N, sl->name);
        if (buf->dyn0)
            oi__buf_printf(b, "    ctx->len_%s = %lld;\n", sl->name, (long long)sl->shape[0]);
    }
    oi__sy_source_open_runtime(b, p);
    oi__buf_puts(b, "    return ctx;\n}\n\n");
    oi__buf_printf(b, "void %s_close(%s_ctx *ctx) {\n    if (!ctx)\n        return;\n%s%s#ifdef OI_HAVE_MMAP\n"
                      "    if (ctx->model_mapped)\n        munmap((void *)(uintptr_t)ctx->model, ctx->model_size);\n"
                      "    else\n#endif\n", N, N, p->schedule.threaded ? "    oi_rt_pool_stop(&ctx->pool);\n" : "",
                   p->schedule.packed_bytes ? "    free(ctx->packed_block);\n" : "");
    if (p->embed_model)
        oi__buf_printf(b, "    if (ctx->model != %s_model_bytes) /* not the built-in model */\n", N);
    oi__buf_puts(b, "        free((void *)(uintptr_t)ctx->model);\n"
                    "    free(ctx->arena);\n    free(ctx->state);\n    free(ctx);\n}\n\n");
}

static void oi__sy_source_step(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "int %s_step(%s_ctx *ctx) {\n    if (!ctx)\n        return %s_fail(%s_ERROR_ARGUMENT, \"%s_step: no context\");\n",
                   N, N, N, N, N);
    oi__sy_source_resets(b, p);
    oi__buf_puts(b, "\n    /* the graph */\n");
    oi__sy_render_steps(b, &p->schedule, oi__sy_emit_lang(), N);
    oi__buf_puts(b, "\n    memset(ctx->inserted, 0, sizeof ctx->inserted);\n    ctx->steps++;\n    return 0;\n}\n\n");
}

/* NAME_read_VAR: a table's entries of indices below their sizes so far,
 * stacked (they sit at the bounds' strides in the state block), or an
 * @auto_dim variable's rows so far. */
static void oi__sy_source_reader(oi__buf *b, const oi_plan *p, int slot) {
    const char *N = p->name;
    const oi__slot *sl = &p->plan->slots[slot];
    const oi__sy_buffer *buf = &p->schedule.buffers[slot];
    const char *t = oi__sy_emit_lang()->type_of(sl->dtype);
    int64_t entry = oi__shape_numel(sl->ndim, sl->shape);
    oi__buf_printf(b, "int %s_read_%s(const %s_ctx *ctx, %s *values, size_t capacity, size_t *count, int64_t *shape) {\n",
                   N, sl->name, N, t);
    oi__buf_printf(b, "    if (!ctx)\n        return %s_fail(%s_ERROR_ARGUMENT, \"%s_read_%s: no context\");\n", N, N, N,
                   sl->name);
    if (sl->n_auto > 0) { /* the rows grown so far, then the rest of the matrix */
        oi__buf_printf(b, "    const int64_t rows = %lld + ctx->%s_grown[0];\n    const int64_t dims[] = {rows",
                       (long long)sl->shape[0], sl->name);
        entry = oi__sy_row_numel(sl);
    } else { /* each index's size so far, then the entry's dims */
        oi__buf_puts(b, "    const int64_t dims[] = {");
        for (int k = 0; k < sl->n_indices; k++)
            oi__buf_printf(b, "%sctx->%s_size[%d]", k ? ", " : "", sl->name, k);
    }
    for (int d = sl->n_auto > 0 ? 1 : 0; d < sl->ndim; d++)
        oi__buf_printf(b, ", %lld", (long long)sl->shape[d]);
    oi__buf_printf(b, "};\n    size_t total = 1;\n    for (int d = 0; d < %d; d++)\n        total *= (size_t)dims[d];\n",
                   oi__sy_read_rank(sl));
    oi__buf_printf(b, "    if (count)\n        *count = total;\n    if (shape)\n        memcpy(shape, dims, sizeof dims);\n"
                      "    if (!values)\n        return 0;\n    if (capacity < total)\n"
                      "        return %s_fail(%s_ERROR_ARGUMENT, \"%s_read_%s: %%zu values fit, %s holds %%zu\", capacity, total);\n",
                   N, N, N, sl->name, sl->name);
    oi__buf_printf(b, "    const %s *stored = (const %s *)(ctx->state + %lluu); /* in the state block */\n", t, t,
                   (unsigned long long)buf->offset);
    if (sl->n_auto > 0) {
        oi__buf_puts(b, "    memcpy(values, stored, total * sizeof *values);\n    return 0;\n}\n\n");
        return;
    }
    /* one entry at a time, its number at the bounds' strides; i[] counts like an odometer */
    static const char *const index[OI_MAX_DIMS] = {"i[0]", "i[1]", "i[2]", "i[3]", "i[4]", "i[5]", "i[6]", "i[7]"};
    oi__buf_printf(b, "    int64_t i[%d] = {0};\n    for (size_t e = 0; e * %lld < total; e++) {\n        const int64_t at = ",
                   sl->n_indices, (long long)(entry > 0 ? entry : 1));
    oi__sy_table_entry_number(b, &p->schedule, slot, index);
    oi__buf_puts(b, "; /* the entry, at the bounds' strides */\n");
    oi__buf_printf(b, "        memcpy(values + e * %lld, stored + at * %lld, %lld * sizeof *values);\n", (long long)entry,
                   (long long)entry, (long long)entry);
    oi__buf_printf(b, "        for (int k = %d; k >= 0 && ++i[k] == dims[k]; k--)\n            i[k] = 0;\n    }\n"
                      "    return 0;\n}\n\n", sl->n_indices - 1);
}

static void oi__sy_source_accessors(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_lang *lang = oi__sy_emit_lang();
    int dyn = 0;
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        const char *t = lang->type_of(sl->dtype);
        long long count = (long long)oi__shape_numel(sl->ndim, sl->shape);
        if (sl->decl && sl->kind == OI__MEM_DYNAMIC && buf->home == OI__SY_STATE) {
            oi__buf_printf(b, "int %s_set_%s(%s_ctx *ctx, const %s *values, size_t count) {\n", N, sl->name, N, t);
            oi__buf_printf(b, "    if (!ctx || !values || count != %lldu)\n        return %s_fail(%s_ERROR_ARGUMENT, "
                              "\"%s_set_%s: %%zu values given, %s holds %lld\", count);\n", count, N, N, N, sl->name,
                           sl->name, count);
            oi__buf_printf(b, "    memcpy(ctx->state + %llu, values, %llu);\n    ctx->inserted[%d] = 1;\n    return 0;\n}\n\n",
                           (unsigned long long)buf->offset, (unsigned long long)buf->bytes, dyn);
        }
        if (sl->decl && sl->kind == OI__MEM_DYNAMIC)
            dyn++;
        if (!oi__sy_has_getter(p, i))
            continue;
        oi__buf_printf(b, "const %s *%s_get_%s(const %s_ctx *ctx, size_t *count) {\n    if (count)\n", t, N, sl->name, N);
        if (buf->dyn0)
            oi__buf_printf(b, "        *count = ctx ? (size_t)ctx->len_%s * %lldu : 0;\n", sl->name, (long long)buf->inner);
        else
            oi__buf_printf(b, "        *count = %lldu;\n", count);
        oi__buf_puts(b, "    return ctx ? ");
        oi__sy_render_slot_ptr(b, &p->schedule, i, "ctx");
        oi__buf_puts(b, " : NULL;\n}\n\n");
    }
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++)
        if (oi__sy_has_reader(p, i))
            oi__sy_source_reader(b, p, i);
}

static char *oi__sy_source(const oi_plan *p) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__sy_source_prologue(&b, p);
    oi__sy_source_ctx(&b, p);
    oi__sy_source_inits(&b, p);
    oi__sy_source_table_inits(&b, p);
    oi__sy_source_model(&b, p);
    oi__sy_source_dump(&b, p);
    oi__buf_puts(&b, "/* ---- kernels ---- */\n\n");
    oi__sy_render_kernels(&b, &p->schedule, oi__sy_emit_lang(), p->name);
    oi__buf_puts(&b, "/* ---- the API ---- */\n\n");
    oi__sy_source_open(&b, p);
    oi__sy_source_step(&b, p);
    oi__sy_source_accessors(&b, p);
    return oi__buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* main.c: the driver                                                  */
/* ------------------------------------------------------------------ */
/* bf16 variables (their bits in the API) travel as f32 in .npy files, as
 * `openinfer run` reads and writes them: rounded into bf16 on the way in,
 * exact on the way out, by half.h's functions. */
static void oi__sy_driver_bf16_helpers(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_puts(b, "/* bf16 variables travel as f32 in .npy files, as `openinfer run` reads and writes them:\n"
                    " * rounded to nearest even on the way in, exact on the way out */\n");
    if (oi__sy_driver_moves_bf16(p, true)) {
        oi__buf_printf(b, "typedef int (*bf16_setter)(%s_ctx *, const uint16_t *, size_t);\n\n", N);
        oi__buf_printf(b, "static int set_bf16(%s_ctx *c, bf16_setter set, const void *v, size_t n) {\n"
                          "    uint16_t *bits = (uint16_t *)malloc(n * sizeof *bits + 1);\n"
                          "    if (!bits) {\n        fprintf(stderr, \"out of memory\\n\");\n        return 1;\n    }\n"
                          "    for (size_t i = 0; i < n; i++)\n        bits[i] = oi__f32_to_bf16(((const float *)v)[i]);\n"
                          "    int rc = set(c, bits, n);\n    free(bits);\n    return rc;\n}\n\n", N);
    }
    if (oi__sy_driver_moves_bf16(p, false))
        oi__buf_puts(b, "static const void *get_bf16(const uint16_t *bits, const size_t *n, float *values) {\n"
                        "    for (size_t i = 0; bits && i < *n; i++)\n        values[i] = oi__bf16_to_f32(bits[i]);\n"
                        "    return bits ? values : NULL;\n}\n\n");
}

/* A bf16 variable's setter and getter for the driver: through f32. */
static void oi__sy_driver_bf16_accessors(oi__buf *b, const oi_plan *p, int slot) {
    const char *N = p->name, *name = p->plan->slots[slot].name;
    const oi__sy_buffer *buf = &p->schedule.buffers[slot];
    int64_t count = buf->dyn0 ? buf->max0 * buf->inner : oi__shape_numel(p->plan->slots[slot].ndim, p->plan->slots[slot].shape);
    if (oi__sy_has_setter(p, slot))
        oi__buf_printf(b, "static int set_%s(%s_ctx *c, const void *v, size_t n) { return set_bf16(c, %s_set_%s, v, n); }\n",
                       name, N, N, name);
    if (oi__sy_has_getter(p, slot))
        oi__buf_printf(b, "static const void *get_%s(const %s_ctx *c, size_t *n) {\n    static float values[%lld];\n"
                          "    return get_bf16(%s_get_%s(c, n), n, values);\n}\n",
                       name, N, (long long)(count > 0 ? count : 1), N, name);
}

/* Why the driver's --fetch cannot give a table (NULL: it can, or the variable is
 * none: the driver's NOT_KEPT). */
static const char *oi__sy_unread_why(const oi_plan *p, int slot) {
    const oi__slot *sl = &p->plan->slots[slot];
    if (oi__sy_has_getter(p, slot) || oi__sy_has_reader(p, slot))
        return NULL;
    if (p->schedule.buffers[slot].home != OI__SY_TABLE)
        return NULL; /* NOT_KEPT */
    if (p->vulkan)
        return "a table the Vulkan code keeps on the device only";
    if (sl->is_table && sl->n_auto > 0)
        return "a table of @auto_dim matrices of different sizes: fetch them with cache.read";
    return "a table the synthesized code does not read back (bf16, or more than 8 dims)";
}

static char *oi__sy_driver(const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_lang *lang = oi__sy_emit_lang();
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "/* main.c - the driver of %s, with the flags of `openinfer run`:\n", N);
    oi__buf_printf(&b, " *   %s MODEL.oinf%s [--steps N] [--input VAR=FILE.npy]... [--fetch VAR]... [--out OUTDIR]\n", N,
                   p->embed_model ? "|-" : "");
    oi__buf_puts(&b, " * inserts the inputs before every step, runs N steps (default 1) and writes\n"
                     " * each fetched variable after the last step to OUTDIR/VAR.npy (default \".\"). */\n");
    oi__buf_puts(&b, "#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)\n#define _POSIX_C_SOURCE 200809L\n#endif\n");
    oi__buf_printf(&b, "#include \"%s.h\"\n#define OI_NPY_STATIC\n#define OI_NPY_IMPLEMENTATION\n#include \"npy.h\"\n%s\n", N,
                   oi__sy_driver_bf16(p) ? "#include \"oi_half.h\"\n" : "");
    oi__buf_puts(&b, "#include <errno.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                     "#include <sys/stat.h>\n#include <sys/types.h>\n#include <time.h>\n\n");
    oi__buf_printf(&b, "typedef %s_ctx g_ctx;\n#define G_STEP %s_step\n#define G_CLOSE %s_close\n"
                       "#define G_ERROR %s_last_error\n\n", N, N, N, N);
    oi__buf_printf(&b, "static g_ctx *G_OPEN(const char *path, int threads) {\n    %s_options options = {threads};\n"
                       "    return %s_open_with(path, &options);\n}\n\n", N, N);
    oi__buf_printf(&b, "typedef int (*setter)(%s_ctx *, const void *, size_t);\n", N);
    oi__buf_printf(&b, "typedef const void *(*getter)(const %s_ctx *, size_t *);\n", N);
    oi__buf_printf(&b, "typedef int (*reader)(const %s_ctx *, void *, size_t, size_t *, int64_t *);\n", N);
    oi__buf_puts(&b, "typedef struct var_row {\n    const char *name;\n    oi_npy_dtype dtype;\n    int ndim;\n"
                     "    uint64_t shape[8];\n    setter set; /* NULL: not a dynamic variable */\n"
                     "    getter get; /* NULL: not kept after a step */\n"
                     "    reader read; /* a table (its shape known after the steps), or NULL */\n"
                     "    const char *unread; /* why --fetch cannot give it, or NULL */\n"
                     "    int runtime0; /* its leading dim is known after a step only: the count / the rest */\n"
                     "} var_row;\n\n");
    if (oi__sy_driver_bf16(p))
        oi__sy_driver_bf16_helpers(&b, p);
    const oi__plan *pl = p->plan;
    for (int i = 0; i < (int)arrlen(pl->slots); i++) {
        const oi__slot *sl = &pl->slots[i];
        if (sl->dtype == OI_DTYPE_BF16) {
            oi__sy_driver_bf16_accessors(&b, p, i);
            continue;
        }
        const char *t = lang->type_of(sl->dtype);
        if (oi__sy_has_setter(p, i))
            oi__buf_printf(&b, "static int set_%s(%s_ctx *c, const void *v, size_t n) { return %s_set_%s(c, (const %s *)v, n); }\n",
                           sl->name, N, N, sl->name, t);
        if (oi__sy_has_getter(p, i))
            oi__buf_printf(&b, "static const void *get_%s(const %s_ctx *c, size_t *n) { return %s_get_%s(c, n); }\n",
                           sl->name, N, N, sl->name);
        if (oi__sy_has_reader(p, i))
            oi__buf_printf(&b, "static int read_%s(const %s_ctx *c, void *v, size_t cap, size_t *n, int64_t *shape) {\n"
                               "    return %s_read_%s(c, (%s *)v, cap, n, shape);\n}\n", sl->name, N, N, sl->name, t);
    }
    oi__buf_puts(&b, "\n#define NOT_KEPT \"the synthesized code does not keep it after a step\"\n"
                     "static const var_row vars[] = {\n");
    for (int i = 0; i < (int)arrlen(pl->slots); i++) {
        const oi__slot *sl = &pl->slots[i];
        bool setter = oi__sy_has_setter(p, i);
        oi_dtype form = sl->dtype == OI_DTYPE_BF16 ? OI_DTYPE_F32 : sl->dtype; /* as its .npy file holds it */
        bool reads = oi__sy_has_reader(p, i); /* a table: its rank, the dims known once read */
        oi__buf_printf(&b, "    {\"%s\", (oi_npy_dtype)%d, %d, {", sl->name, (int)form, reads ? oi__sy_read_rank(sl) : sl->ndim);
        for (int d = 0; d < sl->ndim && !reads; d++)
            oi__buf_printf(&b, "%s%lld", d ? ", " : "", (long long)sl->shape[d]);
        if (sl->ndim == 0 || reads)
            oi__buf_puts(&b, "0");
        oi__buf_printf(&b, "}, %s%s, ", setter ? "set_" : "NULL", setter ? sl->name : "");
        oi__buf_printf(&b, "%s%s, %s%s, ", oi__sy_has_getter(p, i) ? "get_" : "NULL", oi__sy_has_getter(p, i) ? sl->name : "",
                       reads ? "read_" : "NULL", reads ? sl->name : "");
        const char *unread = oi__sy_unread_why(p, i);
        if (unread)
            oi__buf_printf(&b, "\"%s\"", unread);
        else
            oi__buf_puts(&b, oi__sy_has_getter(p, i) || reads ? "NULL" : "NOT_KEPT");
        oi__buf_printf(&b, ", %d},\n", p->schedule.buffers[i].dyn0 && oi__sy_has_getter(p, i));
    }
    oi__buf_puts(&b, "};\n#define N_VARS (sizeof vars / sizeof vars[0])\n\n");
    oi__sy_lines(&b, oi__sy_text_driver_c);
    return oi__buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* Makefile                                                            */
/* ------------------------------------------------------------------ */
static char *oi__sy_makefile(const oi_plan *p) {
    const char *N = p->name;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "# Makefile - `make` builds lib%s.a and the driver %s with a C compiler alone.\n", N, N);
    oi__buf_printf(&b, "# make CFLAGS='-O2 -D%s_DEBUG_DUMP=dump' writes every kernel's outputs into dump/.\n", N);
    oi__buf_printf(&b, "CC ?= cc\nAR ?= ar\nCFLAGS ?= -O2 -std=c11 -Wall -Wextra -pedantic\nLDLIBS ?= -lm%s\n\n",
                   p->schedule.threaded ? " -pthread" : "");
    oi__buf_printf(&b, "all: %s\n\n", N);
    oi__buf_printf(&b, "lib%s.a: %s.o\n\t$(AR) rcs $@ %s.o\n\n", N, N, N);
    oi__buf_printf(&b, "%s.o: %s.c %s.h oi_scalar.h%s%s%s%s%s%s%s%s npy.h\n\t$(CC) $(CFLAGS) -c %s.c -o $@\n\n", N, N, N,
                   oi__sy_uses_scalar_math(p) ? " oi_scalar_math.h" : "", p->schedule.packed_gemm ? " oi_gemm.h" : "",
                   p->schedule.threaded ? " oi_runtime.h" : "",
                   oi__sy_rounds_stores(p) || p->schedule.quant || oi__sy_computes_half(p) ? " oi_half.h" : "",
                   p->schedule.quant ? " oi_quant.h" : "", p->embed_model ? " " : "", p->embed_model ? N : "",
                   p->embed_model ? "_model.h" : "", N);
    oi__buf_printf(&b, "%s: main.c %s.h npy.h%s lib%s.a\n\t$(CC) $(CFLAGS) main.c lib%s.a $(LDLIBS) -o $@\n\n", N, N,
                   oi__sy_driver_bf16(p) ? " oi_half.h" : "", N, N);
    oi__buf_printf(&b, "clean:\n\trm -f %s %s.o lib%s.a\n\n.PHONY: all clean\n", N, N, N);
    return oi__buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* plan.json and plan.dot                                              */
/* ------------------------------------------------------------------ */
static void oi__sy_json_stmt(oi__buf *b, const oi__pnode *pn) {
    char *text = oi__node_describe(pn->ir);
    oi__buf_puts(b, "{\"file\": ");
    oi__buf_json_string(b, pn->ir->src.file ? pn->ir->src.file : "");
    oi__buf_printf(b, ", \"line\": %d, \"statement\": ", pn->ir->src.line);
    oi__buf_json_string(b, text ? text : "");
    oi__buf_printf(b, ", \"op\": \"%s\"}", oi__sy_op_name(pn->ir->op));
    oi__free(text);
}

char *oi_plan_to_json(const oi_plan *p) {
    if (!p) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_plan_to_json: no plan");
        return NULL;
    }
    const oi__sy_schedule *s = &p->schedule;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_puts(&b, "{\n  \"graph\": ");
    oi__buf_json_string(&b, oi_graph_name(p->plan->graph));
    oi__buf_puts(&b, ",\n  \"name\": ");
    oi__buf_json_string(&b, p->name);
    oi__buf_printf(&b, ",\n  \"target\": \"%s\",\n  \"language\": \"%s\",\n  \"max_kernel_ops\": %d,\n",
                   p->vulkan ? "vulkan" : "cpu", p->vulkan ? "glsl+c" : "c", s->options.max_kernel_ops);
    oi__buf_printf(&b, "  \"model_fingerprint\": \"%016llx\",\n  \"sizes\": {", (unsigned long long)p->fingerprint);
    for (ptrdiff_t i = 0; i < shlen(p->plan->sizes); i++) {
        oi__buf_puts(&b, i ? ", " : "");
        oi__buf_json_string(&b, p->plan->sizes[i].key);
        oi__buf_printf(&b, ": %lld", (long long)p->plan->sizes[i].value);
    }
    oi__buf_printf(&b, "},\n  \"arena_bytes\": %llu,\n  \"peak_live_bytes\": %llu,\n  \"state_bytes\": %llu,\n",
                   (unsigned long long)s->arena_bytes, (unsigned long long)s->peak_bytes,
                   (unsigned long long)s->state_bytes);
    oi__buf_printf(&b, "  \"packed_bytes\": %llu,\n  \"gemm_kc\": %lld,\n  \"task_cols\": %lld,\n"
                       "  \"tiles_from\": \"%s\",\n  \"threaded\": %s,\n",
                   (unsigned long long)s->packed_bytes, (long long)s->gemm_kc, (long long)s->task_cols,
                   s->tiles_from_device ? "device JSON caches" : "gemm.c defaults", s->threaded ? "true" : "false");
    oi__buf_printf(&b, "  \"positions\": %d,\n  \"kernels\": [", s->n_positions);
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        const oi__sy_kernel *kr = &s->kernels[k];
        oi__buf_printf(&b, "%s\n    {\"id\": %d, \"name\": \"%s_k%d\", \"kind\": \"%s\", \"elements\": %lld, "
                           "\"bytes\": %llu, \"flops\": %llu,\n     \"tasks\": %d",
                       k ? "," : "", kr->id, p->name, kr->id, oi__sy_kernel_kind_name(kr->kind), (long long)kr->numel,
                       (unsigned long long)kr->bytes, (unsigned long long)kr->flops, kr->tasks);
        bool at_run = !p->vulkan && oi__sy_matmul_tiles_at_run(s, kr); /* its tasks: gemm.c's plan at run time */
        if (kr->tasks > 1 && !at_run)
            oi__buf_printf(&b, ", \"task_rows\": %lld%s", (long long)kr->task_rows, kr->kind == OI__SY_K_MATMUL ? "" : "");
        if (kr->tasks > 1 && kr->kind == OI__SY_K_MATMUL && !at_run)
            oi__buf_printf(&b, ", \"task_cols\": %lld", (long long)kr->task_cols);
        if (at_run)
            oi__buf_puts(&b, ", \"tiles_at_run\": true");
        if (kr->kind == OI__SY_K_MATMUL && kr->packed)
            oi__buf_printf(&b, ", \"b_packed_at_open\": %s", kr->b_prepacked ? "true" : "false");
        if (kr->b_transposed)
            oi__buf_puts(&b, ", \"b_transposed_at_open\": true");
        oi__buf_puts(&b, ",\n     \"statements\": [");
        for (int n = 0; n < (int)arrlen(kr->nodes); n++) {
            oi__buf_puts(&b, n ? ",\n       " : "\n       ");
            oi__sy_json_stmt(&b, kr->nodes[n]);
        }
        oi__buf_puts(&b, "],\n     \"buffers\": [");
        bool first = true;
        for (int n = 0; n < (int)arrlen(kr->nodes); n++) {
            const oi__pnode *pn = kr->nodes[n];
            for (int i = -1; i < (int)arrlen(pn->inputs); i++) {
                int slot = i < 0 ? pn->out : pn->inputs[i];
                const oi__sy_buffer *buf = &s->buffers[slot];
                oi__buf_printf(&b, "%s{\"var\": ", first ? "" : ", ");
                oi__buf_json_string(&b, p->plan->slots[slot].name);
                oi__buf_printf(&b, ", \"home\": \"%s\", \"offset\": %llu, \"access\": \"%s\"}", oi__sy_home_name(buf->home),
                               (unsigned long long)buf->offset, i < 0 ? "write" : "read");
                first = false;
            }
        }
        oi__buf_puts(&b, "]}");
    }
    oi__buf_puts(&b, "\n  ],\n  \"variables\": [");
    for (int i = 0; i < (int)arrlen(s->buffers); i++) {
        const oi__sy_buffer *buf = &s->buffers[i];
        const oi__slot *sl = &p->plan->slots[buf->slot];
        oi__buf_printf(&b, "%s\n    {\"name\": ", i ? "," : "");
        oi__buf_json_string(&b, sl->name);
        if (buf->consumer >= 0) {
            oi__buf_puts(&b, ", \"copy_for_block\": ");
            oi__buf_json_string(&b, p->plan->blocks[buf->consumer].ir->name);
        }
        oi__buf_printf(&b, ", \"kind\": \"%s\", \"dtype\": \"%s\", \"shape\": ", oi__mem_kind_name(sl->kind),
                       oi_dtype_name(sl->dtype));
        oi__sy_shape_text(&b, sl);
        oi__buf_printf(&b, ", \"home\": \"%s\", \"bytes\": %llu", oi__sy_home_name(buf->home),
                       (unsigned long long)buf->bytes);
        if (buf->home == OI__SY_ARENA || buf->home == OI__SY_STATE)
            oi__buf_printf(&b, ", \"offset\": %llu", (unsigned long long)buf->offset);
        if (buf->home == OI__SY_ARENA)
            oi__buf_printf(&b, ", \"live\": [%d, %d], \"zero_at_start\": %s, \"kept\": %s", buf->first, buf->last,
                           buf->zero_at_start ? "true" : "false", buf->kept ? "true" : "false");
        if (buf->home == OI__SY_TABLE) /* NAME_read_VAR copies it back (the driver's --fetch) */
            oi__buf_printf(&b, ", \"read_back\": %s", i < (int)arrlen(p->plan->slots) && oi__sy_has_reader(p, i) ? "true" : "false");
        if (buf->table_view) /* no bytes of its own: ctx->view_VAR points into the table */
            oi__buf_puts(&b, ", \"table_view\": true");
        if (buf->home == OI__SY_MODEL || buf->home == OI__SY_PREFIX)
            oi__buf_printf(&b, ", \"model_tensors\": %d", (int)arrlen(buf->tensors));
        if (buf->prepacked)
            oi__buf_printf(&b, ", \"packed_offset\": %llu, \"packed_bytes_per_entry\": %llu",
                           (unsigned long long)buf->packed_offset, (unsigned long long)buf->packed_bytes);
        if (buf->transposed)
            oi__buf_printf(&b, ", \"transposed_offset\": %llu, \"transposed_bytes_per_entry\": %llu",
                           (unsigned long long)buf->transposed_offset, (unsigned long long)buf->transposed_bytes);
        oi__buf_puts(&b, "}");
    }
    oi__buf_puts(&b, "\n  ]\n}\n");
    return oi__buf_take(&b);
}

static char *oi__sy_dot(const oi_plan *p) {
    const oi__sy_schedule *s = &p->schedule;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "digraph \"%s\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n", p->name);
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        const oi__sy_kernel *kr = &s->kernels[k];
        oi__buf_printf(&b, "  k%d [shape=box, label=\"k%d: %s", k, k, oi__sy_kernel_kind_name(kr->kind));
        for (int n = 0; n < (int)arrlen(kr->nodes); n++)
            oi__buf_printf(&b, "\\l%s:%d %s", oi__sy_file_name(kr->nodes[n]->ir->src.file), kr->nodes[n]->ir->src.line,
                           oi__sy_op_name(kr->nodes[n]->ir->op));
        oi__buf_puts(&b, "\\l\"];\n");
    }
    /* variables between kernels: an edge from each writer to each later reader */
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        for (int n = 0; n < (int)arrlen(s->kernels[k].nodes); n++) {
            int slot = s->kernels[k].nodes[n]->out;
            bool again = false; /* one edge per variable a kernel writes */
            for (int e = n + 1; e < (int)arrlen(s->kernels[k].nodes); e++)
                again |= s->kernels[k].nodes[e]->out == slot;
            for (int r = k + 1; r < (int)arrlen(s->kernels) && !again; r++) {
                bool reads = false;
                for (int m = 0; m < (int)arrlen(s->kernels[r].nodes); m++)
                    for (int i = 0; i < (int)arrlen(s->kernels[r].nodes[m]->inputs); i++)
                        reads |= s->kernels[r].nodes[m]->inputs[i] == slot;
                if (reads)
                    oi__buf_printf(&b, "  k%d -> k%d [label=\"%s\"];\n", k, r, p->plan->slots[slot].name);
            }
        }
    oi__buf_puts(&b, "}\n");
    return oi__buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* The folder                                                          */
/* ------------------------------------------------------------------ */
static oi_status oi__sy_mkdirs(const char *dir) {
    char *path = oi__strdup(dir);
    if (!path)
        return OI_ERROR_OUT_OF_MEMORY;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(path, 0777);
        *p = '/';
    }
    int rc = mkdir(path, 0777);
    int err = errno;
    oi__free(path);
    struct stat st;
    if (rc != 0 && (err != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        return oi__fail(OI_ERROR_IO, "oi_plan_emit: cannot create the folder %s: %s", dir, strerror(err));
    return OI_OK;
}

static oi_status oi__sy_write(const oi__sy_out *out, const char *name, const char *ext, char *text) {
    if (!text)
        return oi__last_status(OI_ERROR_OUT_OF_MEMORY);
    if (out->names)
        oi__buf_printf(out->names, "%s%s%s", out->names->len ? " " : "", name, ext);
    if (!out->dir) {
        oi__free(text);
        return OI_OK;
    }
    const char *dir = out->dir;
    char *path = oi__sprintf("%s/%s%s", dir, name, ext);
    if (!path) {
        oi__free(text);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    FILE *f = fopen(path, "wb");
    oi_status st = OI_OK;
    if (!f) {
        st = oi__fail(OI_ERROR_IO, "oi_plan_emit: cannot write %s: %s", path, strerror(errno));
    } else {
        size_t n = strlen(text);
        bool ok = fwrite(text, 1, n, f) == n;
        ok = fclose(f) == 0 && ok;
        if (!ok)
            st = oi__fail(OI_ERROR_IO, "oi_plan_emit: cannot write %s: %s", path, strerror(errno));
    }
    oi__free(path);
    oi__free(text);
    return st;
}

static char *oi__sy_text(const char *const *lines) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__sy_lines(&b, lines);
    return oi__buf_take(&b);
}

/* NAME_model.h: the model file's bytes as a const array, 64-byte aligned
 * as the file's tensors are (the kernels' loads of weights assume it). */
static char *oi__sy_model_header(const oi_plan *p) {
    const char *N = p->name;
    const uint8_t *bytes = NULL;
    uint64_t size = 0, header = 0;
    oi__model_raw_bytes(p->model, &bytes, &size, &header);
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "/* %s_model.h - the model file this code was synthesized for (%llu bytes), built in:\n"
                       " * %s_open(NULL) reads its tensors from here. Included by %s.c only. */\n",
                   N, (unsigned long long)size, N, N);
    oi__buf_printf(&b, "#if defined(__cplusplus)\n#define %s_MODEL_ALIGN alignas(64)\n#else\n"
                       "#define %s_MODEL_ALIGN _Alignas(64)\n#endif\n", N, N);
    oi__buf_printf(&b, "%s_MODEL_ALIGN static const unsigned char %s_model_bytes[%llu] = {\n", N, N,
                   (unsigned long long)(size ? size : 1));
    char line[4 * 32 + 8];
    for (uint64_t i = 0; i < size; i += 32) {
        size_t at = 0;
        for (uint64_t k = i; k < size && k < i + 32; k++) {
            unsigned v = bytes[k];
            if (v >= 100)
                line[at++] = (char)('0' + v / 100);
            if (v >= 10)
                line[at++] = (char)('0' + v / 10 % 10);
            line[at++] = (char)('0' + v % 10);
            line[at++] = ',';
        }
        line[at++] = '\n';
        line[at] = '\0';
        oi__buf_puts(&b, line);
    }
    oi__buf_puts(&b, size ? "};\n" : "0};\n");
    return oi__buf_take(&b);
}

/* The C target's files, written and/or listed (oi__sy_out). */
static oi_status oi__sy_emit_cpu(const oi_plan *plan, const oi__sy_out *out_dir) {
    oi_status st = out_dir->dir ? oi__sy_mkdirs(out_dir->dir) : OI_OK;
    const char *N = plan->name;
    if (st == OI_OK)
        st = oi__sy_write(out_dir, N, ".h", oi__sy_header(plan));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, N, ".c", oi__sy_source(plan));
    if (st == OI_OK && plan->embed_model)
        st = oi__sy_write(out_dir, N, "_model.h", out_dir->dir ? oi__sy_model_header(plan) : oi__strdup(""));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, "oi_scalar", ".h", oi__sy_text(oi__sy_text_scalar_h));
    if (st == OI_OK && oi__sy_uses_scalar_math(plan))
        st = oi__sy_write(out_dir, "oi_scalar_math", ".h", oi__sy_text(oi__sy_text_scalar_math_h));
    if (st == OI_OK && plan->schedule.packed_gemm)
        st = oi__sy_write(out_dir, "oi_gemm", ".h", oi__sy_text(oi__sy_text_gemm_h));
    if (st == OI_OK && plan->schedule.threaded)
        st = oi__sy_write(out_dir, "oi_runtime", ".h", oi__sy_text(oi__sy_text_runtime_h));
    if (st == OI_OK && oi__sy_writes_half(plan))
        st = oi__sy_write(out_dir, "oi_half", ".h", oi__sy_text(oi__sy_text_half_h));
    if (st == OI_OK && plan->schedule.quant)
        st = oi__sy_write(out_dir, "oi_quant", ".h", oi__sy_text(oi__sy_text_quant_h));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, "npy", ".h", oi__sy_text(oi__sy_text_npy_h));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, "main", ".c", oi__sy_driver(plan));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, "Makefile", "", oi__sy_makefile(plan));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, "plan", ".json", oi_plan_to_json(plan));
    if (st == OI_OK)
        st = oi__sy_write(out_dir, "plan", ".dot", oi__sy_dot(plan));
    return st;
}

static oi_status oi__sy_emit_to(const oi_plan *plan, const oi__sy_out *out) {
    return plan->vulkan ? oi__sy_emit_vulkan(plan, out) : oi__sy_emit_cpu(plan, out);
}

oi_status oi_plan_emit(const oi_plan *plan, const char *out_dir) {
    if (!plan || !out_dir || !*out_dir)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_plan_emit: need a plan and a folder");
    oi__sy_out out = {out_dir, NULL};
    return oi__sy_emit_to(plan, &out);
}

char *oi_plan_files(const oi_plan *plan) {
    if (!plan) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_plan_files: NULL plan");
        return NULL;
    }
    oi__buf names;
    memset(&names, 0, sizeof names);
    oi__sy_out out = {NULL, &names};
    if (oi__sy_emit_to(plan, &out) != OI_OK) {
        oi__free(oi__buf_take(&names));
        return NULL;
    }
    return oi__buf_take(&names);
}

/* The pieces the Vulkan emitter (emit_vulkan.c) shares with this one. */
char *oi__sy_emit_header(const oi_plan *p) { return oi__sy_header(p); }
void oi__sy_emit_model_map(oi__buf *b, const oi_plan *p) { oi__sy_source_model(b, p); }
void oi__sy_emit_inits(oi__buf *b, const oi_plan *p) { oi__sy_source_inits(b, p); }
void oi__sy_emit_accessors(oi__buf *b, const oi_plan *p) { oi__sy_source_accessors(b, p); }
char *oi__sy_emit_driver(const oi_plan *p) { return oi__sy_driver(p); }
oi_status oi__sy_emit_mkdirs(const oi__sy_out *out) { return out->dir ? oi__sy_mkdirs(out->dir) : OI_OK; }
oi_status oi__sy_emit_write(const oi__sy_out *out, const char *name, const char *ext, char *text) {
    return oi__sy_write(out, name, ext, text);
}
char *oi__sy_emit_text(const char *const *lines) { return oi__sy_text(lines); }
char *oi__sy_emit_dot(const oi_plan *p) { return oi__sy_dot(p); }
