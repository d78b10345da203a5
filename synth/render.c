/* render.c - the schedule as C-family source. It prints what schedule.c
 * decided and decides nothing: which statements a kernel fuses, where each
 * value lives and what is stored all come from the schedule; the type
 * names, the rounding and the math functions from the language struct
 * (lang.c); the arithmetic of every op from kernels/scalar.h, which the
 * emitted code includes.
 *
 * Each kernel becomes one static function whose parameters are the DSL
 * variables it touches, opening with the statements it fuses:
 *     /+ k0: elementwise, 2 statements
 *      +   minimal.c:24: op add(x,a) >> t0
 *      +   minimal.c:25: op mul(y,t0) >> y +/
 * and the step function calls them in order inside the DSL's loops and
 * branches. */
#include "synth_internal.h"
#include "../openinfer_impl/simulator.h" /* oi__slot_is_activation */

#include <float.h>
#include <math.h>

/* ------------------------------------------------------------------ */
/* Small pieces                                                        */
/* ------------------------------------------------------------------ */
static void oi__sy_indent(oi__buf *b, int depth) {
    for (int i = 0; i < depth; i++)
        oi__buf_puts(b, "    ");
}

static const char *oi__sy_basename(const char *path) {
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "?";
}

/* Text that may sit in a comment: no comment delimiters, no newlines. */
static void oi__sy_comment_text(oi__buf *b, const char *text) {
    for (const char *p = text; *p; p++) {
        if ((p[0] == '*' && p[1] == '/') || (p[0] == '/' && p[1] == '*')) {
            oi__buf_puts(b, p[0] == '*' ? "*_" : "/_");
            continue;
        }
        char c = *p == '\n' || *p == '\r' ? ' ' : *p;
        oi__buf_append(b, &c, 1);
    }
}

void oi__sy_render_stmt(oi__buf *b, const oi__pnode *pn) {
    char *text = oi__node_describe(pn->ir);
    oi__buf_printf(b, "%s:%d: ", oi__sy_basename(pn->ir->src.file), pn->ir->src.line);
    oi__sy_comment_text(b, text ? text : "?");
    oi__free(text);
}

/* A double as a C literal (exact: %.17g round-trips). */
static void oi__sy_double(oi__buf *b, double v) {
    if (isnan(v)) {
        oi__buf_puts(b, "NAN");
        return;
    }
    if (isinf(v)) {
        oi__buf_puts(b, v < 0 ? "-INFINITY" : "INFINITY");
        return;
    }
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    oi__buf_puts(b, text);
    if (!strpbrk(text, ".eEn"))
        oi__buf_puts(b, ".0");
}

/* An op's activation= setting, or NULL. */
static const char *oi__sy_activation(const oi__pnode *pn) {
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "activation") == 0)
            return pn->attrs[i].s;
    return NULL;
}

/* As conv.c applies it: relu is max(0, x) (NaN stays NaN); gelu and
 * gelu_tanh are scalar_math.h's fits (math.glsl's on the GPU; the simulator
 * runs vexp.h's vector form of the same fits: within 2 ulp, not
 * bit-exact); hard_swish is elementwise.c's f32 steps, x * clamp(x * (1/6)
 * + 0.5, 0, 1), through scalar.h's macro (each product exact in double,
 * then rounded to f32). */
void oi__sy_render_activation(oi__buf *b, const oi__sy_lang *lang, const char *act, const char *v, int depth) {
    if (!act || strcmp(act, "none") == 0)
        return;
    oi__sy_indent(b, depth);
    if (strcmp(act, "relu") == 0) {
        oi__buf_printf(b, "%s = %s < 0.0f ? 0.0f : %s;\n", v, v, v);
    } else if (strcmp(act, "hard_swish") == 0) {
        oi__buf_printf(b, "%s = %s(OI_S_hard_swish(%s%s, ", v, lang->functional_cast ? "float" : "(float)", lang->load_float, v);
        oi__sy_double(b, (double)(float)(1.0 / 6.0));
        oi__buf_printf(b, ", %s));\n", lang->round_f32);
    } else {
        oi__buf_printf(b, "%s = %s(%s);\n", v, lang->ew_fn(OI_OP_gelu, strcmp(act, "gelu_tanh") == 0), v);
    }
}

/* Local names of a kernel's body; a parameter named like one gets a '_'. */
static bool oi__sy_reserved(const char *name) {
    static const char *const words[] = {
        /* the kernels' locals */
        "i", "j", "p", "r", "o", "q", "at", "acc", "m", "sum", "inv", "ok", "xr", "yr", "a", "ctx", "n", "n0",
        "cols", "size_t", "int64_t", "uint64_t", "task", "mk", "lo", "hi", "tile", "rb", "c0", "c1", "rows", "kp",
        "vp", "scores", "n_pad", "oi_args", "m_row", "p_row", "q_head", "k_head", "v_head", "o_head", "kp_raw", "vp_raw",
        "q_row", "k_row", "v_row", "rope_at", "rope_p", "rope_t", "rope_c", "rope_s", "q8_x", "q8_d", "q8_s",
        "q8_dot", "mean", "sq", "s8", "q8", "d", "v", "scale", "t", "src", "inside", "last", "t0", "t1", "t2", "t3",
        "r0", "r1", "sp", "threads",
        /* C and C++ keywords */
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
        "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
        "true", "false", "new", "delete", "class", "this", "template", "typename", "namespace", "operator",
        "private", "public", "protected", "friend", "virtual", "explicit", "mutable", "using", "try", "catch",
        "throw", "and", "or", "not", "xor", "asm", "export", "nullptr",
        /* GLSL words and the functions the Vulkan target's kernels call (a macro `max(i)` would
         * capture every max call) */
        "in", "out", "inout", "uniform", "buffer", "shared", "layout", "precise", "coherent", "readonly", "writeonly",
        "discard", "lowp", "mediump", "highp", "precision", "sample", "patch", "flat", "smooth", "invariant",
        "subroutine", "attribute", "varying", "centroid", "noperspective", "uint", "vec2", "vec3", "vec4", "uvec4",
        "mat2", "mat3", "mat4", "max", "min", "abs", "sqrt", "exp", "exp2", "log", "trunc", "sign", "barrier", "main",
        "arena", "state", "model", "pc", "is_nan_f", "is_inf_f", "exp_f32", "gelu_f32", "tanh_f32", "erf_f32",
        "erfc_f32", "erfc_tail", "erf_series", "log_f32", "log1p_f32", "oi_wg_sum", "oi_wg_max", "oi_partial", "oi_p",
        "oi_kv", "oi_q", "oi_inv", "a_tile", "b_tile", "tile_a", "tile_b", "mm_tiles", "mm_load_a", "mm_load_b",
        "mm_store", "mm_rows", "mm_cols", "float_math", "cm_tiles", "cm_load_a", "cm_load_b", "cm_load_bt",
        "cm_store8", "oi_cm_pack", "put_a", "put_b", "load_a", "load_b", "store_tiles", "load_tiles", "arena_i",
        "state_i", "model_u", "oi_best", "oi_at", "multiply", "multiply_tile", "gemm_partial", "gemm_slices_sum",
        "SLICES", "SPLIT_AT", "COUNT_AT", "K_SLICE", "partial", "counts", "oi_last", "mm_result", "partial_round",
        "load_a_fragment", "load_b_fragment", "floatBitsToUint", "uintBitsToFloat", "subgroupAdd", "subgroupMax",
        "subgroupElect"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(words[i], name) == 0)
            return true;
    /* the Vulkan target's helper macros of another variable (vulkan_kernels.c: an int x's x_w, x_hi and
     * x_at, a bool's x_read and x_write) */
    static const char *const helper_suffixes[] = {"_w", "_hi", "_at", "_read", "_write"};
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof helper_suffixes / sizeof helper_suffixes[0]; i++) {
        size_t n = strlen(helper_suffixes[i]);
        if (len > n && strcmp(name + len - n, helper_suffixes[i]) == 0)
            return true;
    }
    if (strncmp(name, "oi_", 3) == 0 || strncmp(name, "gl_", 3) == 0 || strncmp(name, "OI_", 3) == 0)
        return true; /* the folder's own helpers, the newer kernels' locals, GLSL's built-ins, the macros */
    return name[0] == 'v' && name[1] >= '0' && name[1] <= '9';
}

static bool oi__sy_name_taken(char *const *names, const char *name) {
    for (int i = 0; i < (int)arrlen(names); i++)
        if (names[i] && strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* A reserved name's stand-in: NAME_, else NAME_2, NAME_3, ... while one of
 * `taken` has it (a NAME ending in '_' goes straight to NAME2: never "__",
 * which GLSL reserves). NULL: out of memory. */
static char *oi__sy_stand_in(char *const *taken, const char *name) {
    size_t len = strlen(name);
    const char *sep = len > 0 && name[len - 1] == '_' ? "" : "_";
    char *candidate = *sep ? oi__sprintf("%s_", name) : NULL;
    for (int k = 2; !candidate || oi__sy_name_taken(taken, candidate); k++) {
        oi__free(candidate);
        if (!(candidate = oi__sprintf("%s%s%d", name, sep, k)))
            return NULL;
    }
    return candidate;
}

/* Each variable's name in the kernels: its own, or, where a local, a
 * keyword or a helper has it, a stand-in that steps around the names kept
 * (x beside a variable x_ becomes x_2). */
oi_status oi__sy_name_slots(oi__sy_schedule *s) {
    int n = (int)arrlen(s->shaped);
    if (!arrsetlen(s->names, n))
        return OI_ERROR_OUT_OF_MEMORY;
    memset(s->names, 0, sizeof *s->names * (size_t)n);
    for (int i = 0; i < n; i++) /* the names kept first */
        if (!oi__sy_reserved(s->shaped[i].name) && !(s->names[i] = oi__strdup(s->shaped[i].name)))
            return OI_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < n; i++)
        if (!s->names[i] && !(s->names[i] = oi__sy_stand_in(s->names, s->shaped[i].name)))
            return OI_ERROR_OUT_OF_MEMORY;
    return OI_OK;
}

/* Slot sl's name in the kernels: sl is one of s->shaped, or a copy of one
 * (found by its name). */
static void oi__sy_param_name(oi__buf *b, const oi__sy_schedule *s, const oi__slot *sl) {
    for (int i = 0; i < (int)arrlen(s->names); i++)
        if (&s->shaped[i] == sl) {
            oi__buf_puts(b, s->names[i]);
            return;
        }
    for (int i = 0; i < (int)arrlen(s->names); i++)
        if (strcmp(s->shaped[i].name, sl->name) == 0) {
            oi__buf_puts(b, s->names[i]);
            return;
        }
    oi__buf_puts(b, sl->name); /* not a slot of this schedule: cannot happen */
}

/* A variable as the kernels see it: a leading dim known at run time only
 * at its bound (index arithmetic; the loops run to the length). */
static const oi__slot *oi__sy_slot_of(const oi__sy_schedule *s, int slot) { return &s->shaped[slot]; }

/* ------------------------------------------------------------------ */
/* Where a value is, seen from the step function                      */
/* ------------------------------------------------------------------ */
typedef struct oi__sy_scope {
    const char **loop_vars; /* stb array: the enclosing DSL loop indices */
    const int *remap;       /* inside a consumer: pairs slot, private buffer */
} oi__sy_scope;

/* The buffer holding variable `slot` here (a consumer's copy, or its own). */
static int oi__sy_buffer_of(const oi__sy_scope *scope, int slot) {
    for (int i = 0; scope && scope->remap && i + 1 < (int)arrlen(scope->remap); i += 2)
        if (scope->remap[i] == slot)
            return scope->remap[i + 1];
    return slot;
}

static void oi__sy_render_expr(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__expr *e,
                               const oi__sy_scope *scope);

static void oi__sy_render_ptr(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, int slot,
                              const oi__pindex *index, const oi__sy_scope *scope) {
    const oi__sy_buffer *buf = &s->buffers[oi__sy_buffer_of(scope, slot)];
    const oi__slot *sl = oi__sy_slot_of(s, buf->slot);
    const char *type = lang->type_of(sl->dtype);
    switch (buf->home) {
    case OI__SY_ARENA:
        if (buf->table_view) /* a slice of a table, read in place */
            oi__buf_printf(b, "ctx->view_%s", sl->name);
        else
            oi__buf_printf(b, "(%s *)(ctx->arena + %llu)", type, (unsigned long long)buf->offset);
        return;
    case OI__SY_STATE:
        oi__buf_printf(b, "(%s *)(ctx->state + %llu)", type, (unsigned long long)buf->offset);
        return;
    case OI__SY_MODEL:
        oi__buf_printf(b, "(const %s *)(ctx->model + %llu)", type, (unsigned long long)buf->tensors[0]->data_offset);
        return;
    case OI__SY_PREFIX:
        oi__buf_printf(b, "(const %s *)ctx->%s_entries[", type, sl->name);
        if (index)
            oi__sy_render_expr(b, s, lang, &index->single, scope);
        else
            oi__buf_puts(b, "0");
        oi__buf_puts(b, "]");
        return;
    case OI__SY_NONE: case OI__SY_TABLE:
        oi__buf_puts(b, "NULL");
        return;
    }
}

/* A weight's entry in ctx->packed made at open, at `offset`, `bytes` per
 * prefix-table entry: packed for the gemm (oi_pack_b) or transposed (a
 * skinny matmul's B). */
static void oi__sy_render_open_copy(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, int slot,
                                    const oi__pindex *index, const oi__sy_scope *scope, uint64_t offset,
                                    uint64_t bytes) {
    oi__buf_printf(b, "(const float *)(ctx->packed + %llu", (unsigned long long)offset);
    if (s->buffers[slot].home == OI__SY_PREFIX && index) {
        oi__buf_puts(b, " + (size_t)(");
        oi__sy_render_expr(b, s, lang, &index->single, scope);
        oi__buf_printf(b, ") * %llu", (unsigned long long)bytes);
    }
    oi__buf_puts(b, ")");
}

static void oi__sy_render_packed_ptr(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, int slot,
                                     const oi__pindex *index, const oi__sy_scope *scope) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    oi__sy_render_open_copy(b, s, lang, slot, index, scope, buf->packed_offset, buf->packed_bytes);
}

static void oi__sy_render_transposed_ptr(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, int slot,
                                         const oi__pindex *index, const oi__sy_scope *scope) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    oi__sy_render_open_copy(b, s, lang, slot, index, scope, buf->transposed_offset, buf->transposed_bytes);
}

void oi__sy_render_slot_ptr(oi__buf *b, const oi__sy_schedule *s, int slot, const char *ctx) {
    (void)ctx;
    oi__sy_render_ptr(b, s, &oi__sy_lang_c, slot, NULL, NULL);
}

static void oi__sy_render_expr(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__expr *e,
                               const oi__sy_scope *scope);

/* An index expression ("step+1", expr.c's syntax): its numbers and
 * operators as they are, each name as oi__sy_render_expr prints it, in
 * int64_t arithmetic (expr.c's). */
static void oi__sy_render_compound(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__expr *e,
                                   const oi__sy_scope *scope) {
    size_t pos = 0;
    oi__expr_tok tok;
    oi__buf_puts(b, "(");
    while (oi__expr_token(e->ident, &pos, &tok)) {
        if (tok.kind != OI__EXPR_NAME) {
            oi__buf_printf(b, "%.*s", (int)tok.len, tok.start);
            continue;
        }
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)tok.len, tok.start);
        oi__expr one = {name, 0};
        oi__sy_render_expr(b, s, lang, &one, scope);
    }
    oi__buf_puts(b, ")");
}

/* A loop bound or an index: a literal, a loop index in scope, a named size
 * (specialized), a scalar variable read at run time, or an expression of
 * those. */
static void oi__sy_render_expr(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__expr *e,
                               const oi__sy_scope *scope) {
    if (e->ident && oi__expr_is_compound(e)) {
        oi__sy_render_compound(b, s, lang, e, scope);
        return;
    }
    if (!e->ident) {
        oi__buf_printf(b, "%lld", (long long)e->lit);
        return;
    }
    for (int i = scope ? (int)arrlen(scope->loop_vars) - 1 : -1; i >= 0; i--)
        if (strcmp(scope->loop_vars[i], e->ident) == 0) {
            oi__buf_puts(b, e->ident);
            return;
        }
    int64_t size;
    if (oi__plan_size(s->plan, e->ident, &size)) {
        oi__buf_printf(b, "%lld", (long long)size);
        return;
    }
    int slot = oi__plan_slot(s->plan, e->ident);
    if (slot >= 0) {
        oi__buf_puts(b, "(int64_t)*");
        oi__sy_render_ptr(b, s, lang, slot, NULL, scope);
        return;
    }
    oi__buf_puts(b, "0 /* unknown */");
}

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */
/* The distinct stored slots a kernel touches (oi__sy_param: synth_internal.h). */
static void oi__sy_add_param(oi__sy_param **params, int slot, int node, int input, bool written) {
    for (int i = 0; i < (int)arrlen(*params); i++)
        if ((*params)[i].slot == slot) {
            (*params)[i].written |= written;
            return;
        }
    oi__sy_param p = {slot, input, node, written};
    (void)arrput(*params, p);
}

oi__sy_param *oi__sy_kernel_params(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    oi__sy_param *params = NULL;
    for (int n = 0; n < (int)arrlen(k->nodes); n++) {
        const oi__pnode *pn = k->nodes[n];
        for (int i = 0; i < (int)arrlen(pn->inputs); i++)
            if (oi__sy_slot_stored(s, pn->inputs[i]))
                oi__sy_add_param(&params, pn->inputs[i], n, i, false);
        if (oi__sy_slot_stored(s, pn->out))
            oi__sy_add_param(&params, pn->out, n, -1, true);
    }
    return params;
}

/* The variable whose leading dim, known at run time only, sets the
 * kernel's extent (its length arrives as n0), or -1. */
static int oi__sy_kernel_driver(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    int slot = k->kind == OI__SY_K_ELEMENTWISE ? pn->out : k->kind == OI__SY_K_ATTN_KV ? k->view_slot[1] : pn->inputs[0];
    return s->buffers[slot].dyn0 ? slot : -1;
}

/* "16", or "(size_t)n0 * 4" when the extent's leading dim is dynamic:
 * `count` elements at the bound, `max0` the bound of the leading dim. */
static void oi__sy_extent(oi__buf *b, bool dynamic, int64_t count, int64_t max0) {
    if (dynamic)
        oi__buf_printf(b, "(size_t)n0 * %lld", (long long)(count / (max0 ? max0 : 1)));
    else
        oi__buf_printf(b, "%lld", (long long)count);
}

/* The task count of a split kernel at its call: a constant, or for a
 * direct matmul its plan's (M x N x K over the pool's threads). */
static void oi__sy_task_count(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    if (!oi__sy_matmul_tiles_at_run(s, k)) {
        oi__buf_printf(b, "%d", k->tasks);
        return;
    }
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__sy_slot_of(s, mm->inputs[0]), *c = oi__sy_slot_of(s, mm->out);
    oi__buf_printf(b, "oi_gemm_tasks(ctx->mk, %lld, %lld, %lld, ctx->pool.n_threads)", (long long)c->shape[0],
                   (long long)c->shape[1], (long long)a->shape[1]);
}

static void oi__sy_kernel_header(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                                 const oi__sy_kernel *k, const oi__sy_param *params) {
    oi__buf_printf(b, "/* k%d: %s, %d statement%s\n", k->id, oi__sy_kernel_kind_name(k->kind), (int)arrlen(k->nodes),
                   arrlen(k->nodes) == 1 ? "" : "s");
    for (int n = 0; n < (int)arrlen(k->nodes); n++) {
        oi__buf_puts(b, " *   ");
        oi__sy_render_stmt(b, k->nodes[n]);
        oi__buf_puts(b, "\n");
    }
    oi__buf_puts(b, " */\n");
    oi__buf_printf(b, "static void %s_k%d(", prefix, k->id);
    bool dynamic = oi__sy_kernel_driver(s, k) >= 0, lead = dynamic || k->tasks > 1;
    if (dynamic)
        oi__buf_puts(b, "int64_t n0");
    if (k->tasks > 1) /* one part of the kernel; oi_runtime.h's pool runs them all */
        oi__buf_puts(b, k->packed ? (dynamic ? ", int task, const oi_micro *mk" : "int task, const oi_micro *mk")
                                  : (dynamic ? ", int task" : "int task"));
    if (oi__sy_matmul_tiles_at_run(s, k))
        oi__buf_puts(b, ", int threads");
    if (oi__sy_kernel_a8(k)) { /* x in int8 blocks (rounded by the step before the call) */
        oi__buf_printf(b, "%sconst int8_t *q8_x, const float *q8_d, const int32_t *q8_s, oi__q8dot_fn q8_dot",
                       lead ? ", " : "");
        lead = true;
    }
    for (int i = 0; i < (int)arrlen(params); i++) {
        const oi__slot *sl = oi__sy_slot_of(s, params[i].slot);
        oi__buf_printf(b, "%s%s%s *", i || lead ? ", " : "", params[i].written ? "" : "const ",
                       lang->type_of(sl->dtype));
        oi__sy_param_name(b, s, sl);
    }
    oi__buf_puts(b, arrlen(params) || lead ? ") {\n" : "void) {\n");
}

/* A task's range of rows (elements) of a split kernel: [lo, hi). */
static void oi__sy_task_range(oi__buf *b, const oi__sy_lang *lang, const oi__sy_kernel *k, int64_t total) {
    const char *it = lang->index_type;
    oi__buf_printf(b, "    const %s lo = (%s)task * %lld, hi = lo + %lld < %lld ? lo + %lld : %lld;\n", it, it,
                   (long long)k->task_rows, (long long)k->task_rows, (long long)total, (long long)k->task_rows,
                   (long long)total);
}

/* The first and one-past-last index of a loop: 0 and its extent, or the
 * task's range. */
static void oi__sy_loop_open(oi__buf *b, const oi__sy_lang *lang, const oi__sy_kernel *k, const char *var,
                             bool dynamic, int64_t count, int64_t max0) {
    if (!dynamic && count == 0 && k->tasks <= 1) { /* an empty tensor: `i < 0` draws -Wtype-limits */
        oi__buf_printf(b, "    for (%s %s = 0; %s != 0; %s++) { /* no elements */\n", lang->index_type, var, var, var);
        return;
    }
    oi__buf_printf(b, "    for (%s %s = %s; %s < ", lang->index_type, var, k->tasks > 1 ? "lo" : "0", var);
    if (k->tasks > 1)
        oi__buf_puts(b, "hi");
    else
        oi__sy_extent(b, dynamic, count, max0);
    oi__buf_printf(b, "; %s++) {\n", var);
}

/* The element of input `in` that output element `index` (of `out`'s
 * shape) reads under numpy broadcasting, with every size specialized. */
void oi__sy_broadcast_index(oi__buf *b, const oi__slot *in, const oi__slot *out, const char *index) {
    int64_t in_n = oi__shape_numel(in->ndim, in->shape), out_n = oi__shape_numel(out->ndim, out->shape);
    if (in_n == out_n) {
        oi__buf_puts(b, index);
        return;
    }
    if (in_n == 1) {
        oi__buf_puts(b, "0");
        return;
    }
    /* a trailing block that repeats (a bias row): index % its size */
    int shift = out->ndim - in->ndim, d = 0;
    while (d < in->ndim && in->shape[d] == 1)
        d++;
    bool suffix = true;
    for (int e = d; e < in->ndim; e++)
        suffix &= in->shape[e] == out->shape[e + shift];
    if (suffix) {
        oi__buf_printf(b, "%s %% %lld", index, (long long)in_n);
        return;
    }
    int64_t out_stride = 1, in_stride = 1;
    bool first = true;
    oi__buf_puts(b, "(");
    for (int e = out->ndim - 1; e >= 0; e--) {
        int ie = e - shift;
        int64_t in_dim = ie >= 0 ? in->shape[ie] : 1;
        if (in_dim != 1) {
            oi__buf_printf(b, "%s%s / %lld %% %lld * %lld", first ? "" : " + ", index, (long long)out_stride,
                           (long long)out->shape[e], (long long)in_stride);
            first = false;
        }
        out_stride *= out->shape[e];
        if (ie >= 0)
            in_stride *= in->shape[ie];
    }
    oi__buf_puts(b, first ? "0)" : ")");
}

/* The value of input `i` of node `n`: a register of an earlier statement
 * of the kernel, or a load in the compute domain. */
static bool oi__sy_is_int(oi_dtype t) { return !oi__dtype_is_float(t) && t != OI_DTYPE_BOOL; }

/* The divisions, which on integers take their operands in their own
 * signedness (scalar.h's OI_S_div_int ... OI_S_rem_uint, as elementwise.c). */
static bool oi__sy_int_division(oi_op op) { return op == OI_OP_div || op == OI_OP_floor_div || op == OI_OP_rem; }

/* A 64-bit integer literal with `suffix` (C's "LL", GLSL's "l", or ""):
 * INT64_MIN as INT64_MAX's negation less one, since -9223372036854775808
 * is the negation of a literal too large for its type. */
static void oi__sy_i64_literal(oi__buf *b, int64_t v, const char *suffix) {
    if (v == INT64_MIN)
        oi__buf_printf(b, "(-%lld%s - 1%s)", (long long)INT64_MAX, suffix, suffix);
    else
        oi__buf_printf(b, "%lld%s", (long long)v, suffix);
}

/* An integer parameter as a literal of the value's signedness: a negative
 * one saturates to 0 for unsigned values, as elementwise.c reads it. */
static void oi__sy_int_param(oi__buf *b, int64_t v, bool is_signed) {
    if (!is_signed) {
        oi__buf_printf(b, "%lluu", (unsigned long long)(v < 0 ? 0 : v));
        return;
    }
    if (v != INT64_MIN)
        oi__buf_puts(b, "(int64_t)");
    oi__sy_i64_literal(b, v, "");
}

/* half.h's conversions of f16 and bf16 bits (the C target), as dtype.c's
 * loads and stores: a call's opening and closing around the bits when
 * decoding (f16's NaN made quiet), and the function rounding an f32 to
 * nearest even into them. */
typedef struct oi__sy_half_fns {
    const char *decode, *decode_end, *encode;
} oi__sy_half_fns;

static const oi__sy_half_fns *oi__sy_half_fns_of(oi_dtype t) {
    static const oi__sy_half_fns f16 = {"oi__f16_to_f32(", ", OI__HALF_NAN_QUIET)", "oi__f32_to_f16"};
    static const oi__sy_half_fns bf16 = {"oi__bf16_to_f32(", ")", "oi__f32_to_bf16"};
    return t == OI_DTYPE_F16 ? &f16 : t == OI_DTYPE_BF16 ? &bf16 : NULL;
}

/* An integer value as a GLSL literal of the Vulkan target's integers: an
 * i32 an int (wrapping in 32 bits), wrapped as the C target's (int32_t) wraps
 * it; an i64 an int64_t (the suffix l). */
static void oi__sy_glsl_int(oi__buf *b, int64_t v, oi_dtype t) {
    int32_t w = (int32_t)(uint32_t)(uint64_t)v;
    if (t == OI_DTYPE_I64)
        oi__sy_i64_literal(b, v, "l");
    else if (w == INT32_MIN) /* -2147483648 is no int literal */
        oi__buf_puts(b, "(-2147483647 - 1)");
    else
        oi__buf_printf(b, "%d", (int)w);
}

static void oi__sy_operand(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k,
                           int n, int i, const char *index) {
    int slot = k->nodes[n]->inputs[i];
    const oi__slot *sl = oi__sy_slot_of(s, slot);
    /* integer arithmetic runs in uint64_t (wraps, no undefined overflow),
     * as the kernels' 64-bit domain does; comparisons, min and max in the
     * value's own */
    oi_op op = k->nodes[n]->ir->op;
    bool wide = oi__sy_is_int(sl->dtype) && oi__sy_is_int(oi__sy_slot_of(s, k->nodes[n]->out)->dtype) &&
                op != OI_OP_min && op != OI_OP_max && op != OI_OP_clamp && !oi__sy_int_division(op) &&
                !lang->functional_cast; /* GLSL: i32 in int, i64 in int64_t, wrapping */
    for (int m = n - 1; m >= 0; m--)
        if (k->nodes[m]->out == slot) {
            oi__buf_printf(b, wide ? "(uint64_t)v%d" : "v%d", m);
            return;
        }
    const oi__sy_half_fns *half = oi__sy_half_fns_of(sl->dtype); /* its bits, decoded (the C target) */
    const char *cast = half ? "(double)" : oi__dtype_is_float(sl->dtype) ? lang->load_float
                       : lang->functional_cast ? "" /* GLSL: a bool's uint, an i32's int, an i64's int64_t already */
                       : wide && oi__dtype_is_signed(sl->dtype) ? "(uint64_t)(int64_t)"
                       : wide || !oi__dtype_is_signed(sl->dtype) ? "(uint64_t)" : "(int64_t)";
    oi__buf_puts(b, cast);
    if (half)
        oi__buf_puts(b, half->decode);
    oi__sy_param_name(b, s, sl);
    oi__buf_puts(b, lang->index_open);
    oi__sy_broadcast_index(b, sl, oi__sy_slot_of(s, k->nodes[0]->out), index);
    oi__buf_puts(b, lang->index_close);
    if (half)
        oi__buf_puts(b, half->decode_end);
}

/* A slice or split in an elementwise kernel (schedule.c's view loads): its
 * input at the element the op's index map gives output element `index`
 * (kernels/shape.c's oi__op_layout_map: an offset and strides), the index
 * arithmetic signed (a negative step's stride). */
static void oi__sy_view_operand(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__pnode *pn,
                                const char *index) {
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    int64_t offset = 0, strides[OI_MAX_DIMS] = {0}, after = 1;
    oi__op_layout_map(pn->ir->op, pn->attrs, arrlenu(pn->attrs), in->ndim, in->shape, &offset, strides);
    bool glsl = lang->functional_cast;
    const char *to_signed = glsl ? "int(" : "(int64_t)(";
    oi__buf_puts(b, lang->load_float);
    oi__sy_param_name(b, s, in);
    oi__buf_printf(b, "%s%s(%lld", lang->index_open, glsl ? "uint" : "(size_t)", (long long)offset);
    int outer = 0; /* the outermost dim of more than one element: no modulo */
    while (outer < out->ndim - 1 && out->shape[outer] == 1)
        outer++;
    for (int d = out->ndim - 1; d >= 0; d--) {
        if (out->shape[d] > 1 && after == 1 && d == outer)
            oi__buf_printf(b, " + %s%s) * %lld", to_signed, index, (long long)strides[d]);
        else if (out->shape[d] > 1 && after == 1)
            oi__buf_printf(b, " + %s%s %% %lld) * %lld", to_signed, index, (long long)out->shape[d], (long long)strides[d]);
        else if (out->shape[d] > 1 && d == outer)
            oi__buf_printf(b, " + %s%s / %lld) * %lld", to_signed, index, (long long)after, (long long)strides[d]);
        else if (out->shape[d] > 1)
            oi__buf_printf(b, " + %s%s / %lld %% %lld) * %lld", to_signed, index, (long long)after,
                           (long long)out->shape[d], (long long)strides[d]);
        after *= out->shape[d];
    }
    oi__buf_printf(b, ")%s", lang->index_close);
}

static double oi__sy_param_f(const oi__pnode *pn, const char *name) {
    return oi__op_param_value_f64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), name);
}

/* An SMATH, MATH or LIBM op of OI__SY_EW_LIST: its function's call, then
 * rounded; false for the other ops. The math ops take f32 and give f32,
 * by the simulator's own f32 function (math.c); the LIBM ones compute in
 * the compute domain, as elementwise.c. */
static bool oi__sy_ew_call(oi__buf *o, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k,
                           int n, const char *index, const char *round) {
    const oi__pnode *pn = k->nodes[n];
    const oi__sy_ew_op *e = oi__sy_ew_op_of(pn->ir->op);
    if (!e || e->form == OI__SY_EW_SCALAR)
        return false;
    if ((pn->ir->op == OI_OP_min || pn->ir->op == OI_OP_max) && oi__sy_is_int(oi__sy_slot_of(s, pn->out)->dtype)) {
        /* elementwise.c's integer forms, in the values' own signedness */
        oi__buf_printf(o, "OI_S_%s_int(", pn->ir->op == OI_OP_min ? "min" : "max");
        oi__sy_operand(o, s, lang, k, n, 0, index);
        oi__buf_puts(o, ", ");
        oi__sy_operand(o, s, lang, k, n, 1, index);
        oi__buf_puts(o, ");\n");
        return true;
    }
    if (e->form == OI__SY_EW_LIBM) {
        oi__buf_printf(o, "%s(%s(", round, lang->ew_fn(pn->ir->op, false));
        for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
            if (i)
                oi__buf_puts(o, ", ");
            oi__sy_operand(o, s, lang, k, n, i, index);
        }
        oi__buf_puts(o, "));\n");
        return true;
    }
    const char *approx = NULL;
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "approximate") == 0)
            approx = pn->attrs[i].s;
    bool gelu_tanh = approx && strcmp(approx, "tanh") == 0;
    /* f64 values: libm's double function, as math.c's oi__math_f64 (the C target only) */
    bool wide = oi__sy_slot_of(s, pn->out)->dtype == OI_DTYPE_F64;
    oi__buf_printf(o, "%s(%s(", round, wide ? e->c_f64_fn : lang->ew_fn(pn->ir->op, gelu_tanh));
    for (int i = 0; i < (int)arrlen(pn->inputs); i++) { /* pow has two */
        oi__buf_printf(o, "%s%s(", i ? ", " : "", wide ? "" : lang->functional_cast ? "float" : "(float)");
        oi__sy_operand(o, s, lang, k, n, i, index);
        oi__buf_puts(o, ")");
    }
    oi__buf_puts(o, "));\n");
    return true;
}

/* clamp of a float: OI_S_fmin(OI_S_fmax(x, min), max) in the compute domain as
 * elementwise.c, a bound left out where it is the default (+-DBL_MAX:
 * nothing passes it), then rounded. */
static void oi__sy_clamp(oi__buf *o, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k, int n,
                         const char *index, const char *round) {
    double lo = oi__sy_param_f(k->nodes[n], "min"), hi = oi__sy_param_f(k->nodes[n], "max");
    bool has_lo = lo > -DBL_MAX, has_hi = hi < DBL_MAX;
    oi__buf_printf(o, "%s(", round);
    if (has_hi)
        oi__buf_printf(o, "%s(", lang->ew_fn(OI_OP_min, false));
    if (has_lo)
        oi__buf_printf(o, "%s(", lang->ew_fn(OI_OP_max, false));
    oi__sy_operand(o, s, lang, k, n, 0, index);
    if (has_lo) {
        oi__buf_puts(o, ", ");
        oi__sy_double(o, lo);
        oi__buf_puts(o, ")");
    }
    if (has_hi) {
        oi__buf_puts(o, ", ");
        oi__sy_double(o, hi);
        oi__buf_puts(o, ")");
    }
    oi__buf_puts(o, ");\n");
}

/* A float cast to an integer: `const double rN = trunc(x);` (cast.c's
 * rounding_mode: trunc, floor, ceil, or round for "nearest", halves away
 * from zero; GLSL: a float, and oi_round, as GLSL's round may go either
 * way), before the statement that saturates rN into the type. */
static void oi__sy_cast_rounding(oi__buf *o, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                 const oi__sy_kernel *k, int n, const char *index, int depth) {
    const oi__pnode *pn = k->nodes[n];
    const char *mode = "trunc";
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "rounding_mode") == 0)
            mode = strcmp(pn->attrs[i].s, "nearest") != 0 ? pn->attrs[i].s : lang->functional_cast ? "oi_round" : "round";
    oi__sy_indent(o, depth);
    oi__buf_printf(o, "const %s r%d = %s(", lang->compute_float, n, mode);
    oi__sy_operand(o, s, lang, k, n, 0, index);
    oi__buf_puts(o, ");\n");
}

/* The saturation of rN into an integer dtype: scalar.h's
 * OI_S_cast_saturate with the bounds cast.c uses (oi__cast_range_of);
 * GLSL (an i32, vulkan_check.c) tests NaN with is_nan_f, which no driver
 * folds away. */
static void oi__sy_cast_saturate(oi__buf *o, const oi__sy_lang *lang, int n, oi_dtype to) {
    oi__cast_range r = oi__cast_range_of(to);
    bool is_signed = oi__dtype_is_signed(to);
    if (lang->functional_cast) { /* OI_S_cast_saturate's choices, each bound a literal of the type */
        oi__buf_printf(o, "is_nan_f(r%d) ? ", n);
        oi__sy_glsl_int(o, 0, to);
        oi__buf_printf(o, " : r%d <= ", n);
        oi__sy_double(o, r.lo);
        oi__buf_puts(o, " ? ");
        oi__sy_glsl_int(o, r.lo_i, to);
        oi__buf_printf(o, " : r%d >= ", n);
        oi__sy_double(o, r.hi_excl);
        oi__buf_puts(o, " ? ");
        oi__sy_glsl_int(o, r.hi_i, to);
        oi__buf_printf(o, " : %s(r%d)", lang->type_of(to), n);
        return;
    }
    oi__buf_printf(o, "OI_S_cast_saturate(r%d, ", n);
    oi__sy_double(o, r.lo);
    oi__buf_puts(o, ", ");
    oi__sy_double(o, r.hi_excl);
    if (!is_signed)
        oi__buf_printf(o, ", 0u, %lluu, (uint64_t))", (unsigned long long)r.hi_u);
    else if (r.lo_i == INT64_MIN) /* -9223372036854775808 is not a C literal */
        oi__buf_printf(o, ", (-%lld - 1), %lld, (int64_t))", (long long)INT64_MAX, (long long)r.hi_i);
    else
        oi__buf_printf(o, ", %lld, %lld, (int64_t))", (long long)r.lo_i, (long long)r.hi_i);
}

/* Whether a later statement of kernel k writes statement n's variable. */
static bool oi__sy_rewritten_later(const oi__sy_kernel *k, int n) {
    for (int m = n + 1; m < (int)arrlen(k->nodes); m++)
        if (k->nodes[m]->out == k->nodes[n]->out)
            return true;
    return false;
}

/* Whether a later statement of kernel k reads statement n's value (its
 * local vN) before another one writes that variable again. */
static bool oi__sy_read_later(const oi__sy_kernel *k, int n) {
    int slot = k->nodes[n]->out;
    for (int m = n + 1; m < (int)arrlen(k->nodes); m++) {
        for (int i = 0; i < (int)arrlen(k->nodes[m]->inputs); i++)
            if (k->nodes[m]->inputs[i] == slot)
                return true;
        if (k->nodes[m]->out == slot)
            return false;
    }
    return false;
}

/* Statement n of an elementwise chain or epilogue, at element `index`:
 * `const double vN = ROUND(OI_S_op(...));` then its store when it is the
 * last write of a stored variable in this kernel. */
static void oi__sy_ew_statement(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                const oi__sy_kernel *k, int n, const char *index, int depth) {
    const oi__pnode *pn = k->nodes[n];
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    const oi__slot *in0 = oi__sy_slot_of(s, pn->inputs[0]);
    bool single = out->dtype != OI_DTYPE_F64 && in0->dtype != OI_DTYPE_F64;
    const char *round = single ? lang->round_f32 : "";
    oi__buf *o = b;
    oi__sy_indent(o, depth);
    oi__buf_puts(o, "/* ");
    oi__sy_render_stmt(o, pn);
    oi__buf_puts(o, " */\n");
    bool is_bool = out->dtype == OI_DTYPE_BOOL, is_int = oi__sy_is_int(out->dtype);
    bool is_signed = is_int && oi__dtype_is_signed(out->dtype);
    bool float_to_int = pn->ir->op == OI_OP_cast && is_int && oi__dtype_is_float(in0->dtype);
    if (float_to_int)
        oi__sy_cast_rounding(o, s, lang, k, n, index, depth);
    oi__sy_indent(o, depth);
    if (is_int && lang->functional_cast) /* GLSL: an i32 in int, an i64 in int64_t (vulkan_check.c), wrapping */
        oi__buf_printf(o, "%s v%d = ", lang->type_of(out->dtype), n);
    else if (is_int) /* wrapped to the dtype, then held in 64 bits of its sign */
        oi__buf_printf(o, "%s v%d = (%s)(%s)", oi__dtype_is_signed(out->dtype) ? "int64_t" : "uint64_t", n,
                       oi__dtype_is_signed(out->dtype) ? "int64_t" : "uint64_t", lang->type_of(out->dtype));
    else
        oi__buf_printf(o, "%s v%d = ", is_bool ? "int" : lang->compute_float, n);
    const char *name = oi__sy_op_name(pn->ir->op);
    switch (pn->ir->op) {
    case OI_OP_slice: case OI_OP_split: /* a view load: the value itself, no rounding */
        oi__sy_view_operand(o, s, lang, pn, index);
        oi__buf_puts(o, ";\n");
        break;
    case OI_OP_relu: {
        double slope = oi__sy_param_f(pn, "negative_slope"), lo = oi__sy_param_f(pn, "clamp_min"),
               hi = oi__sy_param_f(pn, "clamp_max");
        oi__buf_puts(o, "OI_S_relu_raw(");
        oi__sy_operand(o, s, lang, k, n, 0, index);
        oi__buf_puts(o, ", ");
        oi__sy_double(o, slope);
        oi__buf_printf(o, ", %s);\n", single ? lang->round_f32 : "");
        if (!(isinf(hi) && hi > 0)) {
            oi__sy_indent(o, depth);
            oi__buf_printf(o, "v%d = OI_S_clamp_hi(v%d, ", n, n);
            oi__sy_double(o, hi);
            oi__buf_puts(o, ");\n");
        }
        if (!(isinf(lo) && lo < 0)) {
            oi__sy_indent(o, depth);
            oi__buf_printf(o, "v%d = OI_S_clamp_lo(v%d, ", n, n);
            oi__sy_double(o, lo);
            oi__buf_puts(o, ");\n");
        }
        if (single) {
            oi__sy_indent(o, depth);
            oi__buf_printf(o, "v%d = %s(v%d);\n", n, round, n);
        }
        break;
    }
    case OI_OP_fill: { /* the value as elementwise.c reads it: f32-rounded, an integer (unsigned: from 0), a bool */
        double value = oi__sy_param_f(pn, "value");
        int64_t value_i = oi__op_param_value_i64(OI_OP_fill, pn->attrs, arrlenu(pn->attrs), "value");
        if (is_bool)
            oi__buf_printf(o, "%d;\n", value_i != 0);
        else if (is_int) {
            oi__sy_int_param(o, value_i, is_signed);
            oi__buf_puts(o, ";\n");
        } else {
            oi__sy_double(o, single ? (double)(float)value : value);
            oi__buf_puts(o, ";\n");
        }
        /* C: an input that is a parameter of the kernel, which fill never
         * reads, is marked used (GLSL: a macro, nothing to mark) */
        bool loaded = !lang->functional_cast;
        for (int m = 0; m < n; m++)
            loaded &= k->nodes[m]->out != pn->inputs[0];
        if (loaded) {
            oi__sy_indent(o, depth);
            oi__buf_puts(o, "(void)");
            oi__sy_param_name(o, s, in0);
            oi__buf_puts(o, ";\n");
        }
        break;
    }
    case OI_OP_is_neg: /* compare.c's: the sign bit of a float (-0.0 and -NaN too), a signed value below 0 */
        oi__buf_puts(o, lang->functional_cast ? "int(" : ""); /* GLSL: no bool to int */
        oi__buf_puts(o, oi__dtype_is_float(in0->dtype) ? "signbit(" : "OI_S_lt(");
        oi__sy_operand(o, s, lang, k, n, 0, index);
        oi__buf_puts(o, oi__dtype_is_float(in0->dtype) ? ") != 0" : ", 0)");
        oi__buf_puts(o, lang->functional_cast ? ");\n" : ";\n");
        break;
    case OI_OP_clamp:
        if (!is_int) {
            oi__sy_clamp(o, s, lang, k, n, index, round);
            break;
        }
        oi__buf_puts(o, "OI_S_clamp_int("); /* elementwise.c's integer clamp: min first, then max */
        oi__sy_operand(o, s, lang, k, n, 0, index);
        oi__buf_puts(o, ", ");
        oi__sy_int_param(o, oi__op_param_value_i64(OI_OP_clamp, pn->attrs, arrlenu(pn->attrs), "min"), is_signed);
        oi__buf_puts(o, ", ");
        oi__sy_int_param(o, oi__op_param_value_i64(OI_OP_clamp, pn->attrs, arrlenu(pn->attrs), "max"), is_signed);
        oi__buf_puts(o, ");\n");
        break;
    case OI_OP_cast: /* a number's conversion: the load's and the store's, or rN saturated */
        if (float_to_int) {
            oi__sy_cast_saturate(o, lang, n, out->dtype);
        } else if (lang->functional_cast) { /* GLSL converts only when told: int(), int64_t(), float() */
            oi__buf_printf(o, "%s(%s(", is_int ? "" : round, lang->type_of(out->dtype));
            oi__sy_operand(o, s, lang, k, n, 0, index);
            oi__buf_puts(o, "))");
        } else if (is_int) {
            oi__sy_operand(o, s, lang, k, n, 0, index);
        } else {
            oi__buf_printf(o, "%s(", round);
            oi__sy_operand(o, s, lang, k, n, 0, index);
            oi__buf_puts(o, ")");
        }
        oi__buf_puts(o, ";\n");
        break;
    default: {
        if (oi__sy_ew_call(o, s, lang, k, n, index, round))
            break;
        /* a comparison's truth as an int: C converts it, GLSL needs the cast */
        const char *wrap = is_bool && lang->functional_cast ? "int" : is_bool || is_int ? "" : round;
        if (pn->ir->op == OI_OP_not && is_bool) /* logical, not bitwise */
            name = "not_bool";
        bool int_division = is_int && oi__sy_int_division(pn->ir->op);
        if (int_division) /* unsigned floor_div is div */
            name = pn->ir->op == OI_OP_rem ? (is_signed ? "rem_int" : "rem_uint")
                   : !is_signed ? "div_uint" : pn->ir->op == OI_OP_div ? "div_int" : "floor_div_int";
        oi__buf_printf(o, "%s(OI_S_%s(", wrap, name);
        for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
            if (i)
                oi__buf_puts(o, ", ");
            oi__sy_operand(o, s, lang, k, n, i, index);
        }
        if (int_division && pn->ir->op != OI_OP_rem) {
            /* the mask (0 unless given: the table's NaN is for floats), then signed -a wrapping */
            bool given = oi__op_param_given(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "div_by_zero_mask");
            int64_t mask = given ? oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "div_by_zero_mask") : 0;
            oi__buf_puts(o, ", ");
            if (lang->functional_cast)
                oi__sy_glsl_int(o, mask, out->dtype);
            else
                oi__sy_int_param(o, mask, is_signed);
            if (is_signed && lang->functional_cast) {
                oi__buf_puts(o, ", -");
                oi__sy_operand(o, s, lang, k, n, 0, index);
            } else if (is_signed) {
                oi__buf_puts(o, ", (int64_t)(0u - (uint64_t)");
                oi__sy_operand(o, s, lang, k, n, 0, index);
                oi__buf_puts(o, ")");
            }
        } else if (pn->ir->op == OI_OP_div || pn->ir->op == OI_OP_recip) {
            oi__buf_puts(o, ", ");
            oi__sy_double(o, oi__sy_param_f(pn, "div_by_zero_mask"));
        } else if (pn->ir->op == OI_OP_fill_nan_like) {
            oi__buf_puts(o, ", ");
            oi__sy_double(o, oi__sy_param_f(pn, "value"));
        } else if (pn->ir->op == OI_OP_fma) {
            oi__buf_printf(o, ", %s", single ? lang->round_f32 : "");
        } else if (pn->ir->op == OI_OP_hard_sigmoid || pn->ir->op == OI_OP_hard_swish) {
            /* alpha (and beta) in the element's precision, as elementwise.c reads them */
            bool sig = pn->ir->op == OI_OP_hard_sigmoid;
            double alpha = sig ? oi__sy_param_f(pn, "alpha") : 1.0 / 6.0, beta = sig ? oi__sy_param_f(pn, "beta") : 0.5;
            oi__buf_puts(o, ", ");
            oi__sy_double(o, single ? (double)(float)alpha : alpha);
            if (sig) {
                oi__buf_puts(o, ", ");
                oi__sy_double(o, single ? (double)(float)beta : beta);
            }
            oi__buf_printf(o, ", %s", single ? lang->round_f32 : "");
        }
        oi__buf_puts(o, "));\n");
        break;
    }
    }
    const oi__sy_half_fns *half = oi__sy_half_fns_of(out->dtype);
    if (half) { /* to f32, then to f16 or bf16 as dtype.c's store: held as that value */
        oi__sy_indent(o, depth);
        oi__buf_printf(o, "v%d = (double)%s%s((float)v%d)%s;\n", n, half->decode, half->encode, n, half->decode_end);
    }
    /* the store: the last write of a stored variable in this kernel */
    if (!oi__sy_slot_stored(s, pn->out) || oi__sy_rewritten_later(k, n)) {
        if (!lang->functional_cast && !oi__sy_read_later(k, n)) { /* a dead value: computed as the simulator does */
            oi__sy_indent(o, depth);
            oi__buf_printf(o, "(void)v%d;\n", n);
        }
        return;
    }
    oi__sy_indent(o, depth);
    oi__sy_param_name(o, s, out);
    if (lang->functional_cast)
        oi__buf_printf(o, "%s%s%s = %s(v%d);\n", lang->index_open, index, lang->index_close, lang->type_of(out->dtype), n);
    else if (half) /* an f16 or bf16 value's bits (exact: it holds such a value) */
        oi__buf_printf(o, "[%s] = %s((float)v%d);\n", index, half->encode, n);
    else
        oi__buf_printf(o, "[%s] = (%s)v%d;\n", index, lang->type_of(out->dtype), n);
}

void oi__sy_render_ew(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k, int n,
                      const char *index, int depth) {
    oi__sy_ew_statement(b, s, lang, k, n, index, depth);
}

void oi__sy_render_param_name(oi__buf *b, const oi__sy_schedule *s, const oi__slot *sl) { oi__sy_param_name(b, s, sl); }

void oi__sy_render_double(oi__buf *b, double v) { oi__sy_double(b, v); }

static uint64_t oi__sy_value_bytes_of(const oi__slot *sl) {
    return oi_dtype_nbytes(sl->dtype, (uint64_t)oi__shape_numel(sl->ndim, sl->shape));
}

static void oi__sy_render_elementwise(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                      const oi__sy_kernel *k) {
    const oi__slot *out = oi__sy_slot_of(s, k->nodes[0]->out);
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, oi__shape_numel(out->ndim, out->shape));
    oi__sy_loop_open(b, lang, k, "i", oi__sy_kernel_driver(s, k) >= 0, oi__shape_numel(out->ndim, out->shape),
                     out->shape[0]);
    for (int n = 0; n < (int)arrlen(k->nodes); n++)
        oi__sy_ew_statement(b, s, lang, k, n, "i", 2);
    oi__buf_puts(b, "    }\n");
}

/* gemm: the bias row added in f32 (as gemm.c's store adds it), then the
 * activation (oi__sy_render_activation). */
static void oi__sy_gemm_tail(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *mm, const char *at) {
    if (mm->ir->op != OI_OP_gemm)
        return;
    if (arrlen(mm->inputs) > 2) {
        oi__buf_printf(b, "            %s = %s + ", at, at);
        oi__sy_param_name(b, s, oi__sy_slot_of(s, mm->inputs[2]));
        oi__buf_puts(b, "[j];\n");
    }
    oi__sy_render_activation(b, &oi__sy_lang_c, oi__sy_activation(mm), at, 3);
}

/* Does gemm's row tail (bias unless the kernels added it, activation) print anything? */
static bool oi__sy_gemm_has_tail(const oi__pnode *mm, bool bias_done) {
    if (mm->ir->op != OI_OP_gemm)
        return false;
    const char *act = oi__sy_activation(mm);
    if (act && strcmp(act, "none") != 0)
        return true;
    return !bias_done && arrlen(mm->inputs) > 2;
}

/* gemm on the micro-kernels: the bias row added in f32 and the activation
 * applied to a row of the tile at once, before the per-element epilogue;
 * gelu and gelu_tanh through vexp.h's vector forms where the ISA has them
 * (the simulator's own), else scalar_math.h's. `cols` columns from column c0. */
static void oi__sy_gemm_row_tail(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *mm, const char *c0,
                                 const char *cols, bool with_bias) {
    if (mm->ir->op != OI_OP_gemm)
        return;
    if (with_bias && arrlen(mm->inputs) > 2) {
        oi__buf_printf(b, "        for (size_t j = 0; j < %s; j++)\n            acc[j] = acc[j] + ", cols);
        oi__sy_param_name(b, s, oi__sy_slot_of(s, mm->inputs[2]));
        oi__buf_printf(b, "[%s + j];\n", c0);
    }
    const char *act = oi__sy_activation(mm);
    if (!act || strcmp(act, "none") == 0)
        return;
    bool gelu = strcmp(act, "gelu") == 0 || strcmp(act, "gelu_tanh") == 0;
    if (gelu)
        oi__buf_printf(b, "        if (mk->vmap)\n            mk->vmap(%s, acc, acc, (int64_t)(%s));\n        else\n    ",
                       strcmp(act, "gelu") == 0 ? "OI__VEXP_GELU_ERF" : "OI__VEXP_GELU_TANH", cols);
    oi__buf_printf(b, "        for (size_t j = 0; j < %s; j++)\n", cols);
    oi__sy_render_activation(b, &oi__sy_lang_c, act, "acc[j]", gelu ? 4 : 3);
}

static void oi__sy_render_matmul_dots(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                      const oi__sy_kernel *k);

/* One row of C at a time in `acc`, then the epilogue over that row while
 * it is in cache: C[r, :] never round-trips through memory unless read
 * later. Row r of A is consumed before the epilogue may write it. A split
 * kernel computes its task's block: rows [lo, hi) (B packed per block of
 * rows), or with B packed at open, rows [r0, r1) x columns [c0, c1),
 * reading the panels of those columns straight from the packed B. */
static void oi__sy_render_matmul(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                 const oi__sy_kernel *k) {
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__sy_slot_of(s, mm->inputs[0]), *bm = oi__sy_slot_of(s, mm->inputs[1]);
    const oi__slot *c = oi__sy_slot_of(s, mm->out);
    long long M = (long long)c->shape[0], N = (long long)c->shape[1], K = (long long)a->shape[1];
    const char *it = lang->index_type, *at = "acc[j]";
    if (k->b_transposed) {
        oi__sy_render_matmul_dots(b, s, lang, k);
        return;
    }
    bool last = true; /* no later statement of the kernel writes C again */
    for (int m = 1; m < (int)arrlen(k->nodes); m++)
        last &= k->nodes[m]->out != mm->out;
    /* a stored C that is final and not A: the micro-kernels write the
     * task's block there and the epilogue runs on it in place, no tile in
     * between (C = A: the task's rows of A are read to the end first) */
    if (oi__sy_matmul_tiles_at_run(s, k)) {
        oi__buf_printf(b, "    const oi_gemm_split sp = oi_gemm_plan(mk, %lld, %lld, %lld, threads);\n", M, N, K);
        oi__buf_puts(b, "    int64_t t0, t1, t2, t3;\n    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);\n");
        oi__buf_printf(b, "    const %s r0 = (%s)t0, r1 = (%s)t1, c0 = (%s)t2, c1 = (%s)t3;\n", it, it, it, it, it);
        oi__buf_puts(b, "    oi_gemm_packed(mk, ");
        oi__sy_param_name(b, s, a);
        oi__buf_printf(b, " + r0 * %lld, %lld, (int64_t)(r1 - r0), %lld, %lld, ", K, K, K, N);
        oi__sy_param_name(b, s, bm);
        oi__buf_puts(b, ", (int64_t)c0, (int64_t)(c1 - c0), ");
        oi__sy_param_name(b, s, c);
        oi__buf_printf(b, " + r0 * %lld + c0, %lld, ", N, N);
        /* gemm's bias row: added by the micro-kernels with the first k
         * block, as the simulator's gemm adds it (no pass over C of its own) */
        bool kernel_bias = mm->ir->op == OI_OP_gemm && arrlen(mm->inputs) > 2 &&
                           oi__sy_slot_of(s, mm->inputs[2])->dtype == OI_DTYPE_F32;
        if (kernel_bias) {
            oi__sy_param_name(b, s, oi__sy_slot_of(s, mm->inputs[2]));
            oi__buf_puts(b, " + c0);\n");
        } else {
            oi__buf_puts(b, "NULL);\n");
        }
        if (!oi__sy_gemm_has_tail(mm, kernel_bias) && arrlen(k->nodes) == 1)
            return;
        oi__buf_printf(b, "    for (%s r = r0; r < r1; r++) {\n        float *acc = ", it);
        oi__sy_param_name(b, s, c);
        oi__buf_printf(b, " + r * %lld + c0;\n", N);
        oi__sy_gemm_row_tail(b, s, mm, "c0", "c1 - c0", !kernel_bias);
        if (arrlen(k->nodes) > 1) {
            oi__buf_printf(b, "        for (%s j = c0; j < c1; j++) {\n", it);
            oi__buf_printf(b, "            const %s i = r * %lld + j;\n", it, N);
            oi__buf_printf(b, "            %s v0 = (%s)acc[j - c0]; /* ", lang->compute_float, lang->compute_float);
            oi__sy_render_stmt(b, mm);
            oi__buf_puts(b, " */\n");
            for (int n = 1; n < (int)arrlen(k->nodes); n++)
                oi__sy_ew_statement(b, s, lang, k, n, "i", 3);
            oi__buf_puts(b, "            (void)v0;\n        }\n");
        }
        oi__buf_puts(b, "    }\n");
        return;
    }
    if (k->b_prepacked) { /* B packed at open: a block of rows x columns per task */
        long long TR = (long long)k->task_rows, TC = (long long)k->task_cols, RT = (M + TR - 1) / TR;
        oi__buf_printf(b, "    const %s r0 = (%s)task %% %lld * %lld, c0 = (%s)task / %lld * %lld;\n", it, it, RT, TR,
                       it, RT, TC);
        oi__buf_printf(b, "    const %s r1 = r0 + %lld < %lld ? r0 + %lld : %lld, c1 = c0 + %lld < %lld ? c0 + %lld : %lld;\n",
                       it, TR, M, TR, M, TC, N, TC, N);
        oi__buf_printf(b, "    float tile[%lld * %lld];\n", TR, TC);
        oi__buf_puts(b, "    oi_gemm_packed(mk, ");
        oi__sy_param_name(b, s, a);
        oi__buf_printf(b, " + r0 * %lld, %lld, (int64_t)(r1 - r0), %lld, %lld, ", K, K, K, N);
        oi__sy_param_name(b, s, bm);
        oi__buf_printf(b, ", (int64_t)c0, (int64_t)(c1 - c0), tile, %lld, NULL);\n", TC);
        oi__buf_puts(b, "    {\n");
        oi__buf_printf(b, "        for (%s r = r0; r < r1; r++) {\n", it);
        oi__buf_printf(b, "        float *acc = tile + (r - r0) * %lld;\n", TC);
        oi__sy_gemm_row_tail(b, s, mm, "c0", "c1 - c0", true);
        oi__buf_printf(b, "        for (%s j = c0; j < c1; j++) {\n", it);
        at = "acc[j - c0]";
    } else if (k->packed) { /* blocks of mr rows through oi_gemm_rows, then the epilogue per row */
        if (k->tasks > 1)
            oi__sy_task_range(b, lang, k, M);
        else
            oi__buf_puts(b, "    const oi_micro *mk = oi_micro_select();\n");
        oi__buf_printf(b, "    float tile[12 * %lld];\n", N);
        if (k->tasks > 1)
            oi__buf_printf(b, "    for (%s r0 = lo; r0 < hi; r0 += (size_t)mk->mr) {\n", it);
        else
            oi__buf_printf(b, "    for (%s r0 = 0; r0 < %lld; r0 += (size_t)mk->mr) {\n", it, M);
        if (k->tasks > 1)
            oi__buf_printf(b, "        const %s rows = hi - r0 < (size_t)mk->mr ? hi - r0 : (size_t)mk->mr;\n", it);
        else
            oi__buf_printf(b, "        const %s rows = %lld - r0 < (size_t)mk->mr ? %lld - r0 : (size_t)mk->mr;\n", it, M, M);
        oi__buf_puts(b, "        oi_gemm_rows(mk, ");
        oi__sy_param_name(b, s, a);
        oi__buf_printf(b, " + r0 * %lld, (int64_t)rows, %lld, %lld, ", K, K, N);
        oi__sy_param_name(b, s, bm);
        oi__buf_printf(b, ", tile);\n        for (%s r = r0; r < r0 + rows; r++) {\n", it);
        oi__buf_printf(b, "        float *acc = tile + (r - r0) * %lld;\n", N);
        char n_text[32];
        snprintf(n_text, sizeof n_text, "%lld", N);
        oi__sy_gemm_row_tail(b, s, mm, "0", n_text, true);
    } else if (oi__sy_kernel_driver(s, k) >= 0)
        oi__buf_printf(b, "    for (%s r = 0; r < (size_t)n0; r++) {\n", it);
    else
        oi__buf_printf(b, "    for (%s r = 0; r < %lld; r++) {\n", it, M);
    if (!k->packed) {
        oi__buf_printf(b, "        float acc[%lld];\n", N);
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n            acc[j] = 0.0f;\n", it, N);
        oi__buf_printf(b, "        for (%s p = 0; p < %lld; p++) {\n", it, K);
        oi__buf_puts(b, "            const float a = ");
        oi__sy_param_name(b, s, a);
        oi__buf_printf(b, "[r * %lld + p];\n", K);
        oi__buf_printf(b, "            for (%s j = 0; j < %lld; j++)\n                acc[j] = OI_S_mac(acc[j], a, ", it, N);
        oi__sy_param_name(b, s, bm);
        oi__buf_printf(b, "[p * %lld + j]);\n        }\n", N);
    }
    if (!k->b_prepacked)
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++) {\n", it, N);
    oi__buf_printf(b, "            const %s i = r * %lld + j;\n", it, N);
    oi__buf_puts(b, "            /* ");
    oi__sy_render_stmt(b, mm);
    oi__buf_puts(b, " */\n");
    if (!k->packed)
        oi__sy_gemm_tail(b, s, mm, at);
    oi__buf_printf(b, "            %s v0 = (%s)%s;\n", lang->compute_float, lang->compute_float, at);
    if (oi__sy_slot_stored(s, mm->out) && last) {
        oi__buf_puts(b, "            ");
        oi__sy_param_name(b, s, c);
        oi__buf_printf(b, "[i] = %s;\n", at);
    }
    for (int n = 1; n < (int)arrlen(k->nodes); n++)
        oi__sy_ew_statement(b, s, lang, k, n, "i", 3);
    oi__buf_puts(b, k->packed ? "            (void)v0;\n        }\n        }\n    }\n" : "            (void)v0;\n        }\n    }\n");
}

/* Which drivers of gemm.c's micro-kernels the kernels call: oi_gemm_rows
 * packs B per block of rows, oi_gemm_packed reads a B packed before (at
 * open, or per attention head). */
static bool oi__sy_uses_rows(const oi__sy_schedule *s) {
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        if (s->kernels[k].kind == OI__SY_K_MATMUL && s->kernels[k].packed && !s->kernels[k].b_prepacked &&
            !s->kernels[k].b_transposed)
            return true;
    return false;
}

static bool oi__sy_uses_prepacked(const oi__sy_schedule *s) {
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        if (s->kernels[k].b_prepacked || s->kernels[k].kind == OI__SY_K_ATTENTION ||
            (s->kernels[k].kind == OI__SY_K_CONV && s->kernels[k].conv.path == OI__SY_CONV_GEMM))
            return true;
    return false;
}

/* The drivers of gemm.c's micro-kernels (oi_gemm.h), gemm.c's recipe on
 * one block of at most mr rows: per block of kc steps of k (OI_GEMM_KC,
 * gemm.c's kc), A's rows packed into one micro-panel, then per nr columns
 * B's panel, then the micro-kernel; an edge tile runs whole on a scratch
 * tile (packing pads with zeros). B is packed by gemm.c's own packing
 * (oi__gemm_f32_pack_cols, _strided), in its layout: per block of kc
 * steps, nr-column panels over all columns rounded up to nr. The ISA is
 * chosen at run time as the simulator chooses it, OPENINFER_ISA
 * (portable, avx2) capping it; -DOI_GEMM_AVX2_ONLY caps it at build time. */
static void oi__sy_render_gemm_driver(oi__buf *b, const oi__sy_schedule *s) {
    int64_t rows = 12; /* the most rows one oi_gemm_packed call takes: a matmul task's */
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        if (s->kernels[k].b_prepacked && s->kernels[k].task_rows > rows)
            rows = s->kernels[k].task_rows;
    oi__buf_printf(b, "#define OI_GEMM_KC %lld /* k steps per packed block: gemm.c's kc */\n", (long long)s->gemm_kc);
    oi__buf_printf(b, "#define OI_GEMM_ROWS %lld /* rows of A per oi_gemm_packed call, at most */\n\n", (long long)rows);
    oi__buf_puts(b,
        "typedef void (*oi_micro_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,\n"
        "                            float beta, const float *bias);\n"
        "/* rows_fn: the same tile with A read in place (row r of step p at\n"
        " * a[r * lda + p]), no packing of full row blocks; NULL: A is packed. */\n"
        "typedef void (*oi_micro_rows_fn)(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,\n"
        "                                 float alpha, float beta, const float *bias);\n"
        "/* vmap, vmax, vsum: vexp.h's loops on the same ISA (NULL: the scalar loops):\n"
        " * y = op(x); the largest of x; the sum of e^(x - shift) with y = e^(x - shift).\n"
        " * attn: nn.c's direct attention on a block of query rows (NULL: the packed gemms).\n"
        " * drow: nn.c's decode loops on one query row over a head's keys (NULL: the plain loops). */\n"
        "typedef struct oi_micro {\n"
        "    int mr, nr;\n"
        "    oi_micro_fn fn;\n"
        "    oi_micro_rows_fn rows_fn;\n"
        "    int mr_tail; /* rows_tail: rows_fn for a last partial panel of at most mr_tail rows (NULL: none) */\n"
        "    oi_micro_rows_fn rows_tail;\n"
        "    void (*vmap)(oi__vexp_op op, const float *x, float *y, int64_t n);\n"
        "    float (*vmax)(const float *x, int64_t n);\n"
        "    double (*vsum)(const float *x, float *y, int64_t n, float shift, bool diff);\n"
        "    void (*attn)(const oi__attn_f32 *a);\n"
        "    void (*drow)(const float *q, const float *k, int64_t ks, const float *v, int64_t vs, int64_t n, int64_t dim,\n"
        "                 int64_t v_dim, float scale, float *scores, float *out);\n"
        "} oi_micro;\n"
        "static const oi_micro oi_micros[] = {\n"
        "    {OI__GEMM_PORTABLE_MR, OI__GEMM_PORTABLE_NR, oi__gemm_f32_kernel_portable, NULL, 0, NULL, NULL, NULL, NULL, NULL,\n"
        "     NULL},\n"
        "#if OI__GEMM_X86\n"
        "    {6, 16, oi__gemm_f32_kernel_avx2, oi__gemm_f32_kernel_rows_avx2, 4, oi__gemm_f32_kernel_rows4_avx2,\n"
        "     oi__vexp_map_avx2, oi__vexp_max_avx2, oi__vexp_sum_avx2, oi__attn_f32_avx2, oi__attn_dec_row},\n"
        "    {12, 32, oi__gemm_f32_kernel_avx512, oi__gemm_f32_kernel_rows_avx512, 8, oi__gemm_f32_kernel_rows8_avx512,\n"
        "     oi__vexp_map_avx512, oi__vexp_max_avx512, oi__vexp_sum_avx512, oi__attn_f32_avx512, oi__attn_dec_row},\n"
        "#endif\n"
        "};\n\n"
        "static const oi_micro *oi_micro_select(void) {\n"
        "    const char *cap = getenv(\"OPENINFER_ISA\");\n"
        "    if (cap && strcmp(cap, \"portable\") == 0)\n"
        "        return &oi_micros[0];\n"
        "#if OI__GEMM_X86\n"
        "    __builtin_cpu_init();\n"
        "#ifndef OI_GEMM_AVX2_ONLY\n"
        "    if (!(cap && strcmp(cap, \"avx2\") == 0) && __builtin_cpu_supports(\"avx512f\"))\n"
        "        return &oi_micros[2];\n"
        "#endif\n"
        "    if (__builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\"))\n"
        "        return &oi_micros[1];\n"
        "#endif\n"
        "    return &oi_micros[0];\n"
        "}\n\n");
    if (oi__sy_uses_rows(s) || oi__sy_uses_prepacked(s)) /* the drivers below, attention, a conv's packed patches */
        oi__buf_puts(b, "static inline float *oi_align64(float *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }\n\n");
    if (oi__sy_uses_rows(s))
        oi__buf_puts(b,
        "/* c[rows x n] = a[rows x k] b[k x n], rows <= mr, all row-major. */\n"
        "static void oi_gemm_rows(const oi_micro *mk, const float *a, int64_t rows, int64_t k, int64_t n, const float *b,\n"
        "                         float *c) {\n"
        "    const int64_t KC = OI_GEMM_KC;\n"
        "    float a_raw[OI_GEMM_KC * 12 + 16], b_raw[OI_GEMM_KC * 32 + 16], e_raw[12 * 32 + 16];\n"
        "    float *ap = oi_align64(a_raw), *bp = oi_align64(b_raw), *edge = oi_align64(e_raw);\n"
        "    const int mr = mk->mr, nr = mk->nr;\n"
        "    for (int64_t p0 = 0; p0 < k; p0 += KC) {\n"
        "        const int64_t kc = k - p0 < KC ? k - p0 : KC;\n"
        "        const float beta = p0 ? 1.0f : 0.0f;\n"
        "        for (int64_t p = 0; p < kc; p++)\n"
        "            for (int i = 0; i < mr; i++)\n"
        "                ap[p * mr + i] = i < rows ? a[i * k + p0 + p] : 0.0f;\n"
        "        for (int64_t j0 = 0; j0 < n; j0 += nr) {\n"
        "            const int64_t cols = n - j0 < nr ? n - j0 : nr;\n"
        "            for (int64_t p = 0; p < kc; p++) {\n"
        "                const float *src = b + (p0 + p) * n + j0;\n"
        "                if (cols == nr) {\n"
        "                    memcpy(bp + p * nr, src, (size_t)nr * sizeof *src);\n"
        "                    continue;\n"
        "                }\n"
        "                for (int j = 0; j < nr; j++)\n"
        "                    bp[p * nr + j] = j < cols ? src[j] : 0.0f;\n"
        "            }\n"
        "            if (rows == mr && cols == nr) {\n"
        "                mk->fn(kc, ap, bp, c + j0, n, 1.0f, beta, NULL);\n"
        "                continue;\n"
        "            }\n"
        "            for (int i = 0; i < mr; i++)\n"
        "                for (int j = 0; j < nr; j++)\n"
        "                    edge[i * nr + j] = p0 && i < rows && j < cols ? c[i * n + j0 + j] : 0.0f;\n"
        "            mk->fn(kc, ap, bp, edge, nr, 1.0f, beta, NULL);\n"
        "            for (int64_t i = 0; i < rows; i++)\n"
        "                for (int64_t j = 0; j < cols; j++)\n"
        "                    c[i * n + j0 + j] = edge[i * nr + j];\n"
        "        }\n"
        "    }\n"
        "}\n\n");
    if (!oi__sy_uses_prepacked(s))
        return;
    oi__buf_puts(b,
        "/* B (value v of step p at b[v * v_stride + p * p_stride]: k steps, n\n"
        " * values) in gemm.c's packed layout, by gemm.c's packing; dst 64-byte\n"
        " * aligned, k x n rounded up to nr floats long. */\n"
        "static void oi_pack_b(const oi_micro *mk, const float *b, int64_t v_stride, int64_t p_stride, int64_t k,\n"
        "                      int64_t n, float *dst) {\n"
        "    const int64_t n_pad = (n + mk->nr - 1) / mk->nr * mk->nr;\n"
        "    for (int64_t p0 = 0; p0 < k; p0 += OI_GEMM_KC) {\n"
        "        const int64_t kc = k - p0 < OI_GEMM_KC ? k - p0 : OI_GEMM_KC;\n"
        "        if (v_stride == 1)\n"
        "            oi__gemm_f32_pack_cols(b + p0 * p_stride, p_stride, n, kc, mk->nr, dst + p0 * n_pad);\n"
        "        else\n"
        "            oi__gemm_f32_pack_strided(b + p0 * p_stride, v_stride, p_stride, n, kc, mk->nr, dst + p0 * n_pad);\n"
        "    }\n"
        "}\n\n"
        "/* h rows of A (row stride lda), kc steps, as one mr-row micro-panel:\n"
        " * step p's values side by side, rows past h zero. */\n"
        "static inline void oi_pack_a(const float *a, int64_t lda, int64_t h, int64_t kc, int mr, float *dst) {\n"
        "    for (int64_t p = 0; p < kc; p++)\n"
        "        for (int i = 0; i < mr; i++)\n"
        "            dst[p * mr + i] = i < h ? a[i * lda + p] : 0.0f;\n"
        "}\n\n");
    bool direct = false;
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        direct |= oi__sy_matmul_tiles_at_run(s, &s->kernels[k]);
    if (direct)
        oi__buf_puts(b,
        "/* The tiles of a matmul whose B is packed at open, as gemm.c's packed\n"
        " * path cuts C for this ISA and these threads (its own planning,\n"
        " * oi_gemm.h): tiles_m x tiles_n tasks; a row tile holds whole row\n"
        " * panels dealt out evenly (oi__gemm_tile_rows), a column tile tile_n. */\n"
        "typedef struct oi_gemm_split {\n"
        "    int64_t mr, m, n, tile_n, tiles_m, tiles_n;\n"
        "} oi_gemm_split;\n\n"
        "static oi_gemm_split oi_gemm_plan(const oi_micro *mk, int64_t m, int64_t n, int64_t k, int threads) {\n"
        "    int64_t tile_m, tile_n;\n"
        "    if (m * n * k < OI__GEMM_PARALLEL_MIN)\n"
        "        threads = 1;\n"
        "    oi__gemm_plan_tiles(mk->mr, mk->nr, OI__GEMM_MAX_TILE_M, m, n, threads, &tile_m, &tile_n);\n"
        "    if (mk->rows_fn && !oi__gemm_rows_alias(k)) /* A (m x k) read in place */\n"
        "        oi__gemm_plan_fine_in_place(mk->mr, mk->nr, OI_GEMM_KC, m, n, threads, &tile_m, &tile_n);\n"
        "    oi_gemm_split sp = {mk->mr, m, n, tile_n, (m + tile_m - 1) / tile_m, (n + tile_n - 1) / tile_n};\n"
        "    return sp;\n"
        "}\n\n"
        "static int oi_gemm_tasks(const oi_micro *mk, int64_t m, int64_t n, int64_t k, int threads) {\n"
        "    const oi_gemm_split sp = oi_gemm_plan(mk, m, n, k, threads);\n"
        "    return (int)(sp.tiles_m * sp.tiles_n);\n"
        "}\n\n"
        "/* Task t's rows [r0, r1) and columns [c0, c1), as gemm.c's task. */\n"
        "static void oi_gemm_tile(const oi_gemm_split *sp, int t, int64_t *r0, int64_t *r1, int64_t *c0, int64_t *c1) {\n"
        "    int64_t rows;\n"
        "    oi__gemm_tile_rows(sp->mr, sp->m, sp->tiles_m, t / sp->tiles_n, r0, &rows);\n"
        "    *r1 = *r0 + rows;\n"
        "    *c0 = t % sp->tiles_n * sp->tile_n;\n"
        "    *c1 = *c0 + sp->tile_n < sp->n ? *c0 + sp->tile_n : sp->n;\n"
        "}\n\n");
    oi__buf_puts(b,
        "/* c[rows x cols] (row stride ldc) = a[rows x k] (row stride lda) times\n"
        " * columns [j0, j0 + cols) of a B of n columns packed by oi_pack_b; j0 a\n"
        " * multiple of nr. gemm.c's macro-kernel: per block of kc steps and of\n"
        " * OI__GEMM_NC columns, per mr rows of A (in L1) every nr-column panel\n"
        " * (from L2). A is read in place where the ISA can and its rows do not\n"
        " * alias in L1: a last partial row panel by the ISA's shorter kernel on\n"
        " * the rows that end with it, or by the full one, or (fewer rows in all)\n"
        " * copied with zeros below; else packed per kc block, OI_GEMM_ROWS rows\n"
        " * at a time. Edge tiles run whole on a scratch tile. bias: NULL, or\n"
        " * cols values added to C's rows with the first k block, as gemm.c adds it. */\n"
        "static void oi_gemm_packed(const oi_micro *mk, const float *a, int64_t lda, int64_t rows, int64_t k, int64_t n,\n"
        "                           const float *bp, int64_t j0, int64_t cols, float *c, int64_t ldc, const float *bias) {\n"
        "    const int mr = mk->mr, nr = mk->nr;\n"
        "    const int in_place = mk->rows_fn && !oi__gemm_rows_alias(lda);\n"
        "    if (!in_place && rows > OI_GEMM_ROWS) {\n"
        "        for (int64_t r = 0; r < rows; r += OI_GEMM_ROWS)\n"
        "            oi_gemm_packed(mk, a + r * lda, lda, rows - r < OI_GEMM_ROWS ? rows - r : OI_GEMM_ROWS, k, n, bp, j0,\n"
        "                           cols, c + r * ldc, ldc, bias);\n"
        "        return;\n"
        "    }\n"
        "    float a_raw[OI_GEMM_KC * OI_GEMM_ROWS + 16], e_raw[12 * 32 + 16], t_raw[12 * OI_GEMM_KC + 16];\n"
        "    float *ap = oi_align64(a_raw), *edge = oi_align64(e_raw), *tail = oi_align64(t_raw);\n"
        "    const int64_t n_pad = (n + nr - 1) / nr * nr;\n"
        "    for (int64_t p0 = 0; p0 < k; p0 += OI_GEMM_KC) {\n"
        "        const int64_t kc = k - p0 < OI_GEMM_KC ? k - p0 : OI_GEMM_KC;\n"
        "        const float beta = p0 ? 1.0f : 0.0f, *block_bias = p0 ? NULL : bias;\n"
        "        for (int64_t rb = 0; rb < rows; rb += mr) {\n"
        "            const int64_t h = rows - rb < mr ? rows - rb : mr;\n"
        "            const float *rows_a = a + rb * lda + p0;\n"
        "            if (in_place) { /* only a panel with fewer rows than the kernel above it is copied */\n"
        "                if (rb + h >= mr || (mk->rows_tail && h <= mk->mr_tail && rb + h >= mk->mr_tail))\n"
        "                    continue;\n"
        "                for (int i = 0; i < mr; i++)\n"
        "                    if (i < h)\n"
        "                        memcpy(tail + i * kc, rows_a + i * lda, (size_t)kc * sizeof *tail);\n"
        "                    else\n"
        "                        memset(tail + i * kc, 0, (size_t)kc * sizeof *tail);\n"
        "                continue;\n"
        "            }\n"
        "            float *dst = ap + rb * kc;\n"
        "            if (h < mr)\n"
        "                oi_pack_a(rows_a, lda, h, kc, mr, dst);\n"
        "            else if (mr == 6) /* a constant mr: the compiler unrolls the rows */\n"
        "                oi_pack_a(rows_a, lda, 6, kc, 6, dst);\n"
        "            else if (mr == 12)\n"
        "                oi_pack_a(rows_a, lda, 12, kc, 12, dst);\n"
        "            else\n"
        "                oi_pack_a(rows_a, lda, mr, kc, mr, dst);\n"
        "        }\n"
        "        const float *block = bp + p0 * n_pad;\n");
    oi__buf_puts(b,
        "        for (int64_t jb = 0; jb < cols; jb += OI__GEMM_NC) {\n"
        "            const int64_t jend = cols - jb < OI__GEMM_NC ? cols : jb + OI__GEMM_NC;\n"
        "            for (int64_t rb = 0; rb < rows; rb += mr) {\n"
        "                const int64_t h = rows - rb < mr ? rows - rb : mr;\n"
        "                /* the kernel: kh rows from a_k (row stride ld_k), of which C takes the last h */\n"
        "                oi_micro_rows_fn rows_fn = in_place ? mk->rows_fn : NULL;\n"
        "                int64_t kh = mr, ld_k = lda;\n"
        "                const float *a_k = a + rb * lda + p0;\n"
        "                if (in_place && h < mr) {\n"
        "                    if (mk->rows_tail && h <= mk->mr_tail && rb + h >= mk->mr_tail) {\n"
        "                        rows_fn = mk->rows_tail;\n"
        "                        kh = mk->mr_tail;\n"
        "                    }\n"
        "                    if (rb + h >= kh) {\n"
        "                        a_k = a + (rb + h - kh) * lda + p0;\n"
        "                    } else { /* the copy, zeros below: C takes its first h rows */\n"
        "                        a_k = tail;\n"
        "                        ld_k = kc;\n"
        "                    }\n"
        "                }\n"
        "                const int64_t skip = rows_fn && a_k != tail ? kh - h : 0; /* rows of the kernel above C's */\n"
        "                for (int64_t j = jb; j < jend; j += nr) {\n"
        "                    const int64_t w = cols - j < nr ? cols - j : nr;\n"
        "                    const float *panel = block + (j0 + j) * kc;\n"
        "                    float *cb = c + rb * ldc + j;\n"
        "                    const float *tile_bias = block_bias ? block_bias + j : NULL;\n"
        "                    if (h == kh && w == nr && a_k != tail) {\n"
        "                        if (rows_fn)\n"
        "                            rows_fn(kc, a_k, ld_k, panel, cb, ldc, 1.0f, beta, tile_bias);\n"
        "                        else\n"
        "                            mk->fn(kc, ap + rb * kc, panel, cb, ldc, 1.0f, beta, tile_bias);\n"
        "                        continue;\n"
        "                    }\n"
        "                    for (int i = 0; i < mr; i++)\n"
        "                        for (int q = 0; q < nr; q++)\n"
        "                            edge[i * nr + q] = p0 && i >= skip && i - skip < h && q < w ? cb[(i - skip) * ldc + q] : 0.0f;\n"
        "                    if (rows_fn)\n"
        "                        rows_fn(kc, a_k, ld_k, panel, edge, nr, 1.0f, beta, NULL);\n"
        "                    else\n"
        "                        mk->fn(kc, ap + rb * kc, panel, edge, nr, 1.0f, beta, NULL);\n"
        "                    for (int64_t i = 0; i < h; i++)\n"
        "                        for (int64_t q = 0; q < w; q++)\n"
        "                            cb[i * ldc + q] = edge[(i + skip) * nr + q] + (tile_bias ? tile_bias[q] : 0.0f);\n"
        "                }\n"
        "            }\n"
        "        }\n"
        "    }\n"
        "}\n\n");
}

/* The element of the input for output element `o` and reduced element `q`. */
static void oi__sy_reduce_index(oi__buf *b, const oi__slot *in, const bool *reduced) {
    int64_t stride[OI_MAX_DIMS], kept_after[OI_MAX_DIMS], red_after[OI_MAX_DIMS];
    int64_t st = 1, ka = 1, ra = 1;
    for (int d = in->ndim - 1; d >= 0; d--) {
        stride[d] = st;
        st *= in->shape[d];
        kept_after[d] = ka;
        red_after[d] = ra;
        if (reduced[d])
            ra *= in->shape[d];
        else
            ka *= in->shape[d];
    }
    bool first = true;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1)
            continue;
        oi__buf_printf(b, "%s%s / %lld %% %lld * %lld", first ? "" : " + ", reduced[d] ? "q" : "o",
                       (long long)(reduced[d] ? red_after[d] : kept_after[d]), (long long)in->shape[d],
                       (long long)stride[d]);
        first = false;
    }
    if (first)
        oi__buf_puts(b, "0");
}

static void oi__sy_render_reduce(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                 const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    bool reduced[OI_MAX_DIMS] = {false};
    const oi__attr *axes = NULL;
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "axes") == 0)
            axes = &pn->attrs[i];
    int64_t count = 1;
    for (int i = 0; axes && i < (int)arrlen(axes->ints); i++) {
        int64_t a = axes->ints[i] < 0 ? axes->ints[i] + in->ndim : axes->ints[i];
        if (a >= 0 && a < in->ndim && !reduced[a]) {
            reduced[a] = true;
            count *= in->shape[a];
        }
    }
    const char *it = lang->index_type;
    bool dynamic = oi__sy_kernel_driver(s, k) >= 0, mean = pn->ir->op == OI_OP_mean_axis;
    bool want_max = pn->ir->op == OI_OP_max_axis, ext = want_max || pn->ir->op == OI_OP_min_axis;
    bool prod = pn->ir->op == OI_OP_prod_axis, wide = in->dtype == OI_DTYPE_F64;
    int64_t rows = oi__shape_numel(out->ndim, out->shape);
    int d0 = in->ndim;
    while (d0 > 0 && reduced[d0 - 1])
        d0--;
    bool trailing = true;
    for (int d = 0; d < d0; d++)
        trailing &= !reduced[d];
    oi__buf_printf(b, "    for (%s o = 0; o < ", it);
    oi__sy_extent(b, dynamic && !reduced[0], rows, in->shape[0]);
    oi__buf_puts(b, "; o++) {\n");
    if (trailing && count > 0 && !prod && !wide) { /* reduce.c's contiguous path: the same row sum, max or min */
        oi__buf_puts(b, "        const size_t cols = ");
        oi__sy_extent(b, dynamic && reduced[0], count, in->shape[0]);
        oi__buf_printf(b, ";\n        const float v = %s(", ext ? "OI_S_row_ext_f32" : "OI_S_row_sum_f32");
        oi__sy_param_name(b, s, in);
        oi__buf_printf(b, " + o * cols, (int64_t)cols%s);\n        ", !ext ? "" : want_max ? ", 1" : ", 0");
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, mean ? "[o] = (float)((double)v / (double)cols);\n    }\n" : "[o] = v;\n    }\n");
        return;
    }
    /* reduce.c's generic path, in the input's order: sums from 0 and
     * products from 1 in the input's float (f64 in double; f64 sums over
     * the last axes too, in order where reduce.c runs 8 lanes); max/min in
     * double from the first element by OI_S_fmax/OI_S_fmin (a NaN ignored,
     * the first of equal operands kept) */
    oi__buf_printf(b, "        %s acc = %s;\n        for (%s q = 0; q < ", ext || wide ? "double" : "float",
                   ext || wide ? (prod ? "1.0" : "0.0") : (prod ? "1.0f" : "0.0f"), it);
    oi__sy_extent(b, dynamic && reduced[0], count, in->shape[0]);
    oi__buf_printf(b, "; q++) {\n            const %s at = ", it);
    oi__sy_reduce_index(b, in, reduced);
    if (ext) {
        oi__buf_printf(b, ";\n            acc = q ? %s(acc, (double)", want_max ? "OI_S_fmax" : "OI_S_fmin");
        oi__sy_param_name(b, s, in);
        oi__buf_puts(b, "[at]) : (double)");
    } else {
        oi__buf_printf(b, ";\n            acc = OI_S_%s_step(acc, ", prod ? "prod" : "sum");
    }
    oi__sy_param_name(b, s, in);
    oi__buf_puts(b, ext ? "[at];\n        }\n        " : "[at]);\n        }\n        ");
    oi__sy_param_name(b, s, out);
    if (ext) {
        oi__buf_puts(b, "[o] = (float)acc;\n    }\n");
    } else if (mean) {
        oi__buf_puts(b, wide ? "[o] = acc / (double)(" : "[o] = (float)((double)acc / (double)(");
        oi__sy_extent(b, dynamic && reduced[0], count, in->shape[0]);
        oi__buf_puts(b, wide ? ");\n    }\n" : "));\n    }\n");
    } else {
        oi__buf_puts(b, "[o] = acc;\n    }\n");
    }
}

/* softmax and log_softmax along any axis: rows of len elements `inner`
 * apart (the input is [outer, len, inner]); the max, then e^(x - max)
 * summed in double; softmax scales by 1 / sum in f32, log_softmax gives
 * (x - max) - log(sum) rounded to f32, as nn.c's row does. */
static void oi__sy_render_softmax(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                  const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    int64_t inner_n;
    long long len = (long long)oi__sy_softmax_lane(in, pn, &inner_n), inner = (long long)inner_n;
    long long rows = (long long)oi__shape_numel(in->ndim, in->shape) / (len ? len : 1);
    bool log_form = pn->ir->op == OI_OP_log_softmax;
    const char *it = lang->index_type;
    char at[40] = "j"; /* element j of the row */
    if (inner > 1)
        snprintf(at, sizeof at, "j * %lld", inner);
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, rows);
    oi__sy_loop_open(b, lang, k, "r", oi__sy_kernel_driver(s, k) >= 0, rows, in->shape[0]);
    for (int side = 0; side < 2; side++) { /* row r: its outer index, then its place among the inner ones */
        oi__buf_puts(b, side ? "        float *yr = " : "        const float *xr = ");
        oi__sy_param_name(b, s, side ? out : in);
        if (inner == 1)
            oi__buf_printf(b, " + r * %lld;\n", len);
        else
            oi__buf_printf(b, " + r / %lld * %lld + r %% %lld;\n", inner, len * inner, inner);
    }
    oi__buf_printf(b, "        float m = xr[0];\n        for (%s j = 1; j < %lld; j++)\n", it, len);
    oi__buf_printf(b, "            m = xr[%s] > m ? xr[%s] : m;\n        double sum = 0.0;\n", at, at);
    if (log_form) {
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n", it, len);
        oi__buf_printf(b, "            sum = OI_S_sum_step(sum, (double)%s(xr[%s] - m));\n", lang->exp_fn, at);
        oi__buf_printf(b, "        const float oi_log_sum = (float)log(sum);\n        for (%s j = 0; j < %lld; j++)\n", it, len);
        oi__buf_printf(b, "            yr[%s] = (xr[%s] - m) - oi_log_sum;\n    }\n", at, at);
        return;
    }
    oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++) {\n            yr[%s] = %s(xr[%s] - m);\n", it, len, at,
                   lang->exp_fn, at);
    oi__buf_printf(b, "            sum = OI_S_sum_step(sum, (double)yr[%s]);\n        }\n", at);
    oi__buf_printf(b, "        const float inv = (float)(1.0 / sum);\n        for (%s j = 0; j < %lld; j++)\n", it, len);
    oi__buf_printf(b, "            yr[%s] = yr[%s] * inv;\n    }\n", at, at);
}

static void oi__sy_render_all_finite(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                     const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    oi__buf_printf(b, "    int ok = 1;\n    for (%s i = 0; i < ", lang->index_type);
    oi__sy_extent(b, oi__sy_kernel_driver(s, k) >= 0, oi__shape_numel(in->ndim, in->shape), in->shape[0]);
    oi__buf_puts(b, "; i++)\n        if (!OI_S_isfinite((double)");
    oi__sy_param_name(b, s, in);
    oi__buf_puts(b, "[i]))\n            ok = 0;\n    ");
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, "[0] = (%s)ok;\n", lang->bool_type);
}

/* reshape: the same elements in the same order. */
static void oi__sy_render_copy_kernel(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                      const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    if (in == out) { /* reshaped onto itself: its elements stay where they are */
        oi__buf_puts(b, k->tasks > 1 ? "    (void)task, (void)" : "    (void)");
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, "; /* the same elements in the same order: nothing moves */\n");
        return;
    }
    if (k->tasks > 1) { /* a task's range of elements */
        oi__sy_task_range(b, lang, k, oi__shape_numel(out->ndim, out->shape));
        oi__buf_puts(b, "    memcpy(");
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, " + lo, ");
        oi__sy_param_name(b, s, in);
        oi__buf_puts(b, " + lo, (hi - lo) * sizeof *");
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, ");\n");
        return;
    }
    oi__buf_puts(b, "    memcpy(");
    oi__sy_param_name(b, s, out);
    oi__buf_puts(b, ", ");
    oi__sy_param_name(b, s, in);
    oi__buf_printf(b, ", %llu);\n", (unsigned long long)oi__sy_value_bytes_of(out));
}

/* A transpose's index map: perm[d] is the input dim of output dim d (the
 * reversed dims unless `perm` says otherwise; negative entries count from
 * the end), in_stride[d] the input's row-major stride of dim d. */
void oi__sy_transpose_map(const oi__pnode *pn, const oi__slot *in, int64_t perm[OI_MAX_DIMS],
                          int64_t in_stride[OI_MAX_DIMS]) {
    int nd = in->ndim;
    int64_t st = 1;
    for (int d = nd - 1; d >= 0; d--) {
        in_stride[d] = st;
        st *= in->shape[d];
        perm[d] = nd - 1 - d;
    }
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "perm") == 0)
            for (int d = 0; d < nd && d < (int)arrlen(pn->attrs[i].ints); d++)
                perm[d] = pn->attrs[i].ints[d] < 0 ? pn->attrs[i].ints[d] + nd : pn->attrs[i].ints[d];
}

/* transpose: output dim d is input dim perm[d]; the innermost output dim
 * is a loop of its own, the outer ones one flat index. */
static void oi__sy_render_transpose(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                    const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    int nd = in->ndim;
    int64_t perm[OI_MAX_DIMS], in_stride[OI_MAX_DIMS];
    oi__sy_transpose_map(pn, in, perm, in_stride);
    const char *it = lang->index_type;
    long long inner = nd ? (long long)out->shape[nd - 1] : 1;
    long long outer = (long long)oi__shape_numel(out->ndim, out->shape) / (inner ? inner : 1);
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, outer);
    oi__sy_loop_open(b, lang, k, "o", false, outer, outer);
    oi__buf_printf(b, "        const %s at = 0", it);
    int64_t after = 1;
    for (int d = nd - 2; d >= 0; d--) {
        oi__buf_printf(b, " + o / %lld %% %lld * %lld", (long long)after, (long long)out->shape[d],
                       (long long)in_stride[perm[d]]);
        after *= out->shape[d];
    }
    oi__buf_printf(b, ";\n        for (%s j = 0; j < %lld; j++)\n            ", it, inner);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, "[o * %lld + j] = ", inner);
    oi__sy_param_name(b, s, in);
    oi__buf_printf(b, "[at + j * %lld];\n    }\n", nd ? (long long)in_stride[perm[nd - 1]] : 1LL);
}

/* rms_norm's statistics: mean 0 and the sum of squares in double, as
 * layer_norm's below (eight interleaved partial sums when the row is a
 * multiple of 8 long). */
static void oi__sy_render_mean_square(oi__buf *b, const oi__sy_lang *lang, long long n) {
    const char *it = lang->index_type;
    oi__buf_puts(b, "        const float mean = 0.0f;\n        (void)sum;\n");
    if (n % 8 == 0) {
        oi__buf_puts(b, "        double q8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};\n");
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j += 8)\n            for (int l = 0; l < 8; l++)\n"
                          "                q8[l] += (double)(xr[j + (size_t)l] * xr[j + (size_t)l]);\n", it, n);
        oi__buf_puts(b, "        sq = ((q8[0] + q8[1]) + (q8[2] + q8[3])) + ((q8[4] + q8[5]) + (q8[6] + q8[7]));\n");
    } else {
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n            sq += (double)(xr[j] * xr[j]);\n", it, n);
    }
}

/* layer_norm over the last axis, as nn.c's row: the mean and the variance
 * about it summed in double (in eight interleaved partial sums when the row
 * is a multiple of 8 long, so that the loop vectorizes), inv = 1 / sqrt(var + eps) rounded to f32,
 * then (x - mean) * inv * scale + bias in f32 (nn.c's vector path sums in
 * f32 chunks and fuses the last multiply-add: bounded, not bit-exact). */
static void oi__sy_render_norm(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                               const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    long long n = (long long)oi__sy_norm_lane(in, pn);
    long long rows = (long long)oi__shape_numel(in->ndim, in->shape) / (n ? n : 1);
    const char *it = lang->index_type;
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, rows);
    oi__sy_loop_open(b, lang, k, "r", false, rows, rows);
    oi__buf_puts(b, "        const float *xr = ");
    oi__sy_param_name(b, s, in);
    oi__buf_printf(b, " + r * %lld;\n        float *yr = ", n);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, " + r * %lld;\n", n);
    if (pn->ir->op == OI_OP_batch_norm) { /* nn.c's: channel r %% C's mean, s / sqrt(var + eps) in double, bias */
        oi__buf_printf(b, "        const size_t oi_c = r %% %lld;\n        const float oi_mean = ", (long long)in->shape[1]);
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[3]));
        oi__buf_puts(b, "[oi_c], oi_a = (float)((double)");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[1]));
        oi__buf_puts(b, "[oi_c] / sqrt((double)");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[4]));
        oi__buf_puts(b, "[oi_c] + ");
        oi__sy_double(b, oi__sy_param_f(pn, "epsilon"));
        oi__buf_puts(b, ")), oi_b = ");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_printf(b, "[oi_c];\n        for (%s j = 0; j < %lld; j++)\n"
                          "            yr[j] = (xr[j] - oi_mean) * oi_a + oi_b;\n    }\n", it, n);
        return;
    }
    oi__buf_puts(b, "        double sum = 0.0, sq = 0.0;\n");
    if (pn->ir->op == OI_OP_rms_norm) /* nn.c's: the mean square about 0, no bias */
        oi__sy_render_mean_square(b, lang, n);
    else if (n % 8 == 0) { /* eight partial sums, which the compiler keeps in one vector */
        oi__buf_puts(b, "        double s8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, q8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};\n");
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j += 8)\n            for (int l = 0; l < 8; l++)\n"
                          "                s8[l] += (double)xr[j + (size_t)l];\n", it, n);
        oi__buf_puts(b, "        sum = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));\n");
        oi__buf_printf(b, "        const float mean = (float)(sum / %lld.0);\n", n);
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j += 8)\n            for (int l = 0; l < 8; l++) {\n"
                          "                const float d = xr[j + (size_t)l] - mean;\n                q8[l] += (double)(d * d);\n"
                          "            }\n", it, n);
        oi__buf_puts(b, "        sq = ((q8[0] + q8[1]) + (q8[2] + q8[3])) + ((q8[4] + q8[5]) + (q8[6] + q8[7]));\n");
    } else {
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n            sum += (double)xr[j];\n", it, n);
        oi__buf_printf(b, "        const float mean = (float)(sum / %lld.0);\n", n);
        oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++) {\n", it, n);
        oi__buf_puts(b, "            const float d = xr[j] - mean;\n            sq += (double)(d * d);\n        }\n");
    }
    oi__buf_printf(b, "        const float inv = (float)(1.0 / sqrt(sq / %lld.0 + ", n);
    oi__sy_double(b, oi__sy_param_f(pn, "epsilon"));
    oi__buf_printf(b, "));\n        for (%s j = 0; j < %lld; j++)\n", it, n);
    if (pn->ir->op == OI_OP_group_norm) { /* nn.c's: channel c's multiplier inv * scale, then its bias */
        int64_t groups = oi__op_param_value_i64(OI_OP_group_norm, pn->attrs, arrlenu(pn->attrs), "num_groups");
        long long per_group = (long long)(in->shape[1] / groups), spatial = n / (per_group ? per_group : 1);
        oi__buf_printf(b, "            yr[j] = (xr[j] - mean) * (inv * ");
        for (int i = 1; i < 3; i++) {
            oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[i]));
            oi__buf_printf(b, "[r %% %lld * %lld + j / %lld]%s", (long long)groups, per_group, spatial, i == 1 ? ") + " : ";\n    }\n");
        }
        return;
    }
    oi__buf_puts(b, "            yr[j] = (xr[j] - mean) * inv");
    if (arrlen(pn->inputs) > 1) {
        oi__buf_puts(b, " * ");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[1]));
        oi__buf_puts(b, "[j]");
    }
    if (arrlen(pn->inputs) > 2) {
        oi__buf_puts(b, " + ");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_puts(b, "[j]");
    }
    oi__buf_puts(b, ";\n    }\n");
}

/* "const float *q_head = q + h / 12 * 24576 + h % 12 * 32;": where head h
 * (batch h / heads, head h % heads) of attention operand `op` starts in
 * the value it is read from (a view folded into the kernel: its strides). */
static void oi__sy_render_head(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int op, const char *name,
                               long long heads_per_batch) {
    const int64_t *st = k->view_stride[op];
    oi__buf_printf(b, "        %sfloat *%s = ", op == 3 ? "" : "const ", name);
    oi__sy_param_name(b, s, oi__sy_slot_of(s, k->view_slot[op]));
    oi__buf_printf(b, " + h / %lld * %lld + h %% %lld * %lld;\n", heads_per_batch, (long long)st[0], heads_per_batch,
                   (long long)st[1]);
}

/* The strides of an attention mask broadcast to the scores [B, H, S, T]:
 * 0 along a dim it lacks or has once (nn.c's mask_strides). */
static void oi__sy_mask_strides(const oi__slot *mask, int64_t stride[4]) {
    int lead = 4 - mask->ndim;
    int64_t st = 1;
    for (int d = 3; d >= 0; d--) {
        int md = d - lead;
        stride[d] = md < 0 || mask->shape[md] == 1 ? 0 : st;
        if (md >= 0)
            st *= mask->shape[md];
    }
}

/* The mask and the causal limit on query row i0 + r of head h, as nn.c's
 * oi__attn_row adds them to the scaled scores: an f32 mask added, a bool
 * one 0 where true and -inf where false; causal: the keys after
 * i0 + r + T - S at -inf. A row that sees no key becomes NaN, as there. */
static void oi__sy_render_attention_mask(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                         const oi__pnode *pn, long long heads, long long S, long long T) {
    const char *it = lang->index_type;
    if (arrlen(pn->inputs) > 3) {
        const oi__slot *mask = oi__sy_slot_of(s, pn->inputs[3]);
        bool is_bool = mask->dtype == OI_DTYPE_BOOL;
        int64_t st[4];
        oi__sy_mask_strides(mask, st);
        oi__buf_printf(b, "                const %s *m_row = ", lang->type_of(mask->dtype));
        oi__sy_param_name(b, s, mask);
        oi__buf_printf(b, " + h / %lld * %lld + h %% %lld * %lld + (i0 + r) * %lld;\n", heads, (long long)st[0], heads,
                       (long long)st[1], (long long)st[2]);
        char at[48];
        if (st[3] == 1)
            snprintf(at, sizeof at, "m_row[t]");
        else
            snprintf(at, sizeof at, "m_row[t * %lld]", (long long)st[3]);
        oi__buf_printf(b, "                for (%s t = 0; t < %lld; t++)\n", it, T);
        if (is_bool)
            oi__buf_printf(b, "                    p_row[t] += %s ? 0.0f : -INFINITY;\n", at);
        else
            oi__buf_printf(b, "                    p_row[t] += %s;\n", at);
    }
    if (oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "causal")) {
        long long after = T - S + 1; /* the first key hidden from query row 0 */
        oi__buf_printf(b, "                for (int64_t t = (int64_t)(i0 + r) + %lld < 0 ? 0 : (int64_t)(i0 + r) + %lld; t < %lld; t++)\n"
                          "                    p_row[t] = -INFINITY;\n", after, after, T);
    }
}

/* The head's attention through nn.c's direct path (oi__attn_f32, the
 * function oi_micro's attn points at: the simulator's on AVX2 and
 * AVX-512, so both give the same bits): the struct filled from the head's
 * pointers and the kernel's sizes, strides, mask and causal offset. */
static void oi__sy_render_attention_direct(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k,
                                           const oi__pnode *pn, long long heads, long long S, long long T, long long D,
                                           long long Dv) {
    oi__buf_puts(b, "        if (mk->attn) { /* kernels/nn.c's direct path, as the simulator runs it */\n");
    oi__buf_puts(b, "            oi__attn_f32 at;\n            memset(&at, 0, sizeof at);\n"
                    "            at.q = q_head, at.k = k_head, at.v = v_head, at.out = o_head;\n");
    oi__buf_printf(b, "            at.q_rs = %lld, at.k_rs = %lld, at.v_rs = %lld, at.out_rs = %lld;\n",
                   (long long)k->view_stride[0][2], (long long)k->view_stride[1][2], (long long)k->view_stride[2][2],
                   (long long)k->view_stride[3][2]);
    oi__buf_printf(b, "            at.rows = %lld, at.kv_seq = %lld, at.dim = %lld, at.v_dim = %lld;\n", S, T, D, Dv);
    oi__buf_puts(b, "            at.scale = scale;\n");
    if (arrlen(pn->inputs) > 3) {
        const oi__slot *mask = oi__sy_slot_of(s, pn->inputs[3]);
        int64_t st[4];
        oi__sy_mask_strides(mask, st);
        oi__buf_puts(b, "            at.mask = ");
        oi__sy_param_name(b, s, mask);
        oi__buf_printf(b, " + h / %lld * %lld + h %% %lld * %lld;\n", heads, (long long)st[0], heads, (long long)st[1]);
        oi__buf_printf(b, "            at.mask_f32 = %s, at.mask_rs = %lld, at.mask_ks = %lld;\n",
                       mask->dtype == OI_DTYPE_F32 ? "true" : "false", (long long)st[2], (long long)st[3]);
    }
    if (oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "causal"))
        oi__buf_printf(b, "            at.causal = true, at.causal_last = %lld;\n", T - S);
    oi__buf_printf(b, "            at.kt = kp, at.scores = scores;\n            mk->attn(&at);\n            %s;\n        }\n",
                   k->tasks > 1 ? "return" : "continue");
}

/* attention per (batch, head): on AVX2 and AVX-512 the simulator's direct
 * path (oi__sy_render_attention_direct) where nn.c takes it (more than one
 * query row, head sizes in whole 8-lane vectors), else as nn.c's gemm
 * path runs it:
 * the head's K^T and V packed once (gemm.c's packing, the K^T straight
 * from K's rows), then per block of mr query rows the scores q K^T
 * through the gemm's micro-kernels, scale, softmax as the softmax kernel
 * above, and p V through them again, straight into the output (nn.c
 * scales inside its gemm and sums e^ by vector lanes: bounded, not
 * bit-exact). A split kernel runs one head per task. Each operand is read
 * (the result written) through its view's strides (oi__sy_render_head),
 * so the heads of a [tokens, heads * dim] value need no copy. */
static void oi__sy_render_attention(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                    const oi__sy_kernel *k) {
    const oi__pnode *pn = oi__sy_kernel_lead(k);
    const oi__slot *q = oi__sy_slot_of(s, pn->inputs[0]), *kk = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *v = oi__sy_slot_of(s, pn->inputs[2]);
    long long heads = (long long)(q->shape[0] * q->shape[1]), S = (long long)q->shape[2], D = (long long)q->shape[3];
    long long T = (long long)kk->shape[2], Dv = (long long)v->shape[3];
    long long T32 = (T + 31) / 32 * 32, Dv32 = (Dv + 31) / 32 * 32;
    long long q_row = (long long)k->view_stride[0][2], k_row = (long long)k->view_stride[1][2];
    long long v_row = (long long)k->view_stride[2][2], o_row = (long long)k->view_stride[3][2];
    double scale = oi__op_param_given(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "scale")
                       ? oi__sy_param_f(pn, "scale") : 1.0 / sqrt((double)D);
    const char *it = lang->index_type;
    if (k->tasks < 2)
        oi__buf_puts(b, "    const oi_micro *mk = oi_micro_select();\n");
    oi__buf_puts(b, "    const float scale = (float)");
    oi__sy_double(b, scale);
    long long T16 = (T + 15) / 16 * 16, scores_n = 12 * T > 8 * T16 ? 12 * T : 8 * T16; /* nn.c's path: 8 x T16 */
    oi__buf_printf(b, ";\n    float kp_raw[%lld + 16], vp_raw[%lld + 16], scores_raw[%lld + 16];\n", T32 * D, Dv32 * T, scores_n);
    oi__buf_puts(b, "    float *kp = oi_align64(kp_raw), *vp = oi_align64(vp_raw), *scores = oi_align64(scores_raw);\n");
    if (k->tasks > 1)
        oi__buf_printf(b, "    {\n        const %s h = (%s)task;\n", it, it);
    else
        oi__buf_printf(b, "    for (%s h = 0; h < %lld; h++) {\n", it, heads);
    oi__sy_render_head(b, s, k, 0, "q_head", (long long)q->shape[1]);
    oi__sy_render_head(b, s, k, 1, "k_head", (long long)q->shape[1]);
    oi__sy_render_head(b, s, k, 2, "v_head", (long long)q->shape[1]);
    oi__sy_render_head(b, s, k, 3, "o_head", (long long)q->shape[1]);
    if (S > 1 && D % 8 == 0 && Dv % 8 == 0 && T > 0) /* the cases nn.c runs on its direct path */
        oi__sy_render_attention_direct(b, s, k, pn, (long long)q->shape[1], S, T, D, Dv);
    oi__buf_printf(b, "        oi_pack_b(mk, k_head, %lld, 1, %lld, %lld, kp); /* K^T: value t, step d at k_head[t * %lld + d] */\n",
                   k_row, D, T, k_row);
    oi__buf_printf(b, "        oi_pack_b(mk, v_head, 1, %lld, %lld, %lld, vp);\n", v_row, T, Dv);
    oi__buf_printf(b, "        for (%s i0 = 0; i0 < %lld; i0 += (size_t)mk->mr) {\n", it, S);
    oi__buf_printf(b, "            const %s rows = %lld - i0 < (size_t)mk->mr ? %lld - i0 : (size_t)mk->mr;\n", it, S, S);
    oi__buf_printf(b, "            oi_gemm_packed(mk, q_head + i0 * %lld, %lld, (int64_t)rows, %lld, %lld, kp, 0, %lld, "
                      "scores, %lld, NULL);\n", q_row, q_row, D, T, T, T);
    oi__buf_printf(b, "            for (%s r = 0; r < rows; r++) {\n                float *p_row = scores + r * %lld;\n", it, T);
    oi__buf_printf(b, "                for (%s t = 0; t < %lld; t++)\n                    p_row[t] = scale * p_row[t];\n", it, T);
    oi__sy_render_attention_mask(b, s, lang, pn, (long long)q->shape[1], S, T);
    oi__buf_puts(b, "                float m = p_row[0];\n                double sum = 0.0;\n");
    oi__buf_printf(b, "                if (mk->vsum) { /* vexp.h's loops, as nn.c's softmax */\n"
                      "                    m = mk->vmax(p_row, %lld);\n"
                      "                    sum = mk->vsum(p_row, p_row, %lld, m, false);\n"
                      "                } else {\n", T, T);
    oi__buf_printf(b, "                    for (%s t = 1; t < %lld; t++)\n                        m = p_row[t] > m ? p_row[t] : m;\n", it, T);
    oi__buf_printf(b, "                    for (%s t = 0; t < %lld; t++) {\n", it, T);
    oi__buf_printf(b, "                        p_row[t] = %s(p_row[t] - m);\n", lang->exp_fn);
    oi__buf_puts(b, "                        sum = OI_S_sum_step(sum, (double)p_row[t]);\n                    }\n                }\n");
    oi__buf_puts(b, "                const float inv = (float)(1.0 / sum);\n");
    oi__buf_printf(b, "                for (%s t = 0; t < %lld; t++)\n                    p_row[t] = p_row[t] * inv;\n            }\n", it, T);
    oi__buf_printf(b, "            oi_gemm_packed(mk, scores, %lld, (int64_t)rows, %lld, %lld, vp, 0, %lld, o_head + i0 * %lld, "
                      "%lld, NULL);\n        }\n    }\n", T, T, Dv, Dv, o_row, o_row);
}

/* "const float *k_head = keys + hk / 3 * 192 + hk % 3 * 64;": head `head`
 * of operand `op` through its view's strides (the heads of a [B, H, T, D]
 * value, `per_batch` a batch). */
static void oi__sy_render_kv_head(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int op, const char *name,
                                  const char *head, long long per_batch) {
    const int64_t *st = k->view_stride[op];
    oi__buf_printf(b, "        %sfloat *%s = ", op == 3 ? "" : "const ", name);
    oi__sy_param_name(b, s, oi__sy_slot_of(s, k->view_slot[op]));
    oi__buf_printf(b, " + %s / %lld * %lld + %s %% %lld * %lld;\n", head, per_batch, (long long)st[0], head, per_batch,
                   (long long)st[1]);
}

/* The query rows of one head through nn.c's decode loops (oi_micro's
 * drow: the simulator's scores, weights and values on AVX2 and AVX-512),
 * where the operands' head dims have unit steps; else the plain loops
 * after it. */
static void oi__sy_render_attn_kv_vectors(oi__buf *b, const oi__sy_kernel *k, const char *it, const char *n, long long S,
                                          long long D, long long Dv, long long q_row, long long k_row, long long v_row,
                                          long long o_row) {
    bool unit = true;
    for (int op = 0; op < 4; op++)
        unit = unit && k->view_stride[op][3] == 1;
    if (!unit) {
        oi__buf_puts(b, "        (void)mk;\n");
        return;
    }
    oi__buf_puts(b, "        if (mk->drow) { /* kernels/nn.c's decode loops */\n");
    oi__buf_printf(b, "            for (%s oi_i = 0; oi_i < %lld; oi_i++)\n", it, S);
    oi__buf_printf(b, "                mk->drow(q_head + oi_i * %lld, k_head, %lld, v_head, %lld, %s, %lld, %lld, oi_scale, oi_scores,\n"
                      "                         o_head + oi_i * %lld);\n", q_row, k_row, v_row, n, D, Dv, o_row);
    oi__buf_printf(b, "            %s;\n        }\n", k->tasks > 1 ? "return" : "continue");
}

/* attention over keys counted at run time (n0: a table slice folded in as
 * a view, its rows the table's) and/or grouped-query heads (query head h
 * of a batch reads kv head h / (Hq / Hkv), as nn.c's): per query row, the
 * scaled dot products with every key in f32, the softmax as the softmax
 * kernel's (max, e^(x - max) summed in double, times 1 / sum), then the
 * weighted sum of the values in f32 (nn.c multiplies through its gemm:
 * bounded, not bit-exact). Plain loops, or nn.c's decode loops where
 * the kernel may take them (oi__sy_render_attn_kv_vectors). */
static void oi__sy_render_attn_kv(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = oi__sy_kernel_lead(k);
    const oi__slot *q = oi__sy_slot_of(s, pn->inputs[0]), *kk = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *v = oi__sy_slot_of(s, pn->inputs[2]);
    bool dyn = oi__sy_kernel_driver(s, k) >= 0;
    long long hq = (long long)q->shape[1], hkv = (long long)kk->shape[1], heads = (long long)(q->shape[0] * q->shape[1]);
    long long S = (long long)q->shape[2], D = (long long)q->shape[3], Dv = (long long)v->shape[3];
    long long T = dyn ? (long long)s->buffers[k->view_slot[1]].max0 : (long long)kk->shape[2];
    long long q_row = (long long)k->view_stride[0][2], k_row = (long long)k->view_stride[1][2];
    long long v_row = (long long)k->view_stride[2][2], o_row = (long long)k->view_stride[3][2];
    double scale = oi__op_param_given(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "scale")
                       ? oi__sy_param_f(pn, "scale") : 1.0 / sqrt((double)D);
    const char *it = lang->index_type;
    char count[32];
    if (dyn)
        snprintf(count, sizeof count, "(%s)n0", it);
    else
        snprintf(count, sizeof count, "%lld", T);
    if (k->packed && k->tasks < 2)
        oi__buf_puts(b, "    const oi_micro *mk = oi_micro_select();\n");
    oi__buf_puts(b, "    const float oi_scale = (float)");
    oi__sy_double(b, scale);
    oi__buf_printf(b, ";\n    float oi_scores[%lld], oi_acc[%lld];\n", T, Dv);
    if (k->tasks > 1) /* one query head per task */
        oi__buf_printf(b, "    {\n        const %s oi_h = (%s)task;\n", it, it);
    else
        oi__buf_printf(b, "    for (%s oi_h = 0; oi_h < %lld; oi_h++) {\n", it, heads);
    oi__buf_printf(b, "        const %s oi_hk = oi_h / %lld * %lld + oi_h %% %lld / %lld; /* its kv head */\n", it, hq, hkv, hq,
                   hq / hkv);
    oi__sy_render_kv_head(b, s, k, 0, "q_head", "oi_h", hq);
    oi__sy_render_kv_head(b, s, k, 1, "k_head", "oi_hk", hkv);
    oi__sy_render_kv_head(b, s, k, 2, "v_head", "oi_hk", hkv);
    oi__sy_render_kv_head(b, s, k, 3, "o_head", "oi_h", hq);
    if (k->packed)
        oi__sy_render_attn_kv_vectors(b, k, it, dyn ? "n0" : count, S, D, Dv, q_row, k_row, v_row, o_row);
    oi__buf_printf(b, "        for (%s oi_i = 0; oi_i < %lld; oi_i++) {\n", it, S);
    oi__buf_printf(b, "            const float *q_row = q_head + oi_i * %lld;\n", q_row);
    oi__buf_printf(b, "            for (%s oi_t = 0; oi_t < %s; oi_t++) {\n                const float *k_row = k_head + oi_t * %lld;\n",
                   it, count, k_row);
    if (D % 8 == 0) { /* eight partial sums, which the compiler keeps in one vector */
        oi__buf_printf(b, "                float oi_part[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};\n"
                          "                for (%s oi_d = 0; oi_d < %lld; oi_d += 8)\n"
                          "                    for (int oi_l = 0; oi_l < 8; oi_l++)\n"
                          "                        oi_part[oi_l] += q_row[oi_d + (size_t)oi_l] * k_row[oi_d + (size_t)oi_l];\n"
                          "                const float oi_dot = ((oi_part[0] + oi_part[1]) + (oi_part[2] + oi_part[3])) +\n"
                          "                                     ((oi_part[4] + oi_part[5]) + (oi_part[6] + oi_part[7]));\n", it, D);
    } else {
        oi__buf_printf(b, "                float oi_dot = 0.0f;\n                for (%s oi_d = 0; oi_d < %lld; oi_d++)\n"
                          "                    oi_dot += q_row[oi_d] * k_row[oi_d];\n", it, D);
    }
    oi__buf_puts(b, "                oi_scores[oi_t] = oi_scale * oi_dot;\n            }\n");
    oi__buf_printf(b, "            float oi_m = oi_scores[0];\n            for (%s oi_t = 1; oi_t < %s; oi_t++)\n"
                      "                oi_m = oi_scores[oi_t] > oi_m ? oi_scores[oi_t] : oi_m;\n            double oi_sum = 0.0;\n", it, count);
    oi__buf_printf(b, "            for (%s oi_t = 0; oi_t < %s; oi_t++) {\n                oi_scores[oi_t] = %s(oi_scores[oi_t] - oi_m);\n"
                      "                oi_sum = OI_S_sum_step(oi_sum, (double)oi_scores[oi_t]);\n            }\n", it, count,
                   lang->exp_fn);
    oi__buf_printf(b, "            const float oi_inv = (float)(1.0 / oi_sum);\n            for (%s oi_d = 0; oi_d < %lld; oi_d++)\n"
                      "                oi_acc[oi_d] = 0.0f;\n", it, Dv);
    oi__buf_printf(b, "            for (%s oi_t = 0; oi_t < %s; oi_t++) {\n                const float oi_p = oi_scores[oi_t] * oi_inv;\n"
                      "                const float *v_row = v_head + oi_t * %lld;\n", it, count, v_row);
    oi__buf_printf(b, "                for (%s oi_d = 0; oi_d < %lld; oi_d++)\n                    oi_acc[oi_d] += oi_p * v_row[oi_d];\n"
                      "            }\n", it, Dv);
    oi__buf_printf(b, "            for (%s oi_d = 0; oi_d < %lld; oi_d++)\n                o_head[oi_i * %lld + oi_d] = oi_acc[oi_d];\n"
                      "        }\n    }\n", it, Dv, o_row);
}

/* "const int64_t q = ids[i];": index i of the indices, in 64 bits of its sign */
static void oi__sy_gather_load(oi__buf *b, const oi__sy_schedule *s, const oi__slot *idx, int depth) {
    oi__sy_indent(b, depth);
    oi__buf_puts(b, oi__dtype_is_signed(idx->dtype) ? "const int64_t q = " : "const uint64_t q = ");
    oi__sy_param_name(b, s, idx);
    oi__buf_puts(b, "[i];\n");
}

/* gather: one slab of `inner` values per index (oi__sy_gather_shape), a
 * negative index counting from the end (kernels/shape.c). Its indices are
 * checked before it runs (oi__sy_render_gather_check). */
static void oi__sy_render_gather(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                 const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *data = oi__sy_slot_of(s, pn->inputs[0]), *idx = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    oi__sy_gather_dims g = oi__sy_gather_shape(s, pn);
    const char *it = lang->index_type;
    int depth = 1;
    if (g.outer > 1) {
        oi__buf_printf(b, "    for (%s o = 0; o < %lld; o++)\n", it, (long long)g.outer);
        depth = 2;
    }
    oi__sy_indent(b, depth);
    oi__buf_printf(b, "for (%s i = 0; i < %lld; i++) {\n", it, (long long)g.count);
    oi__sy_gather_load(b, s, idx, depth + 1);
    oi__sy_indent(b, depth + 1);
    if (oi__dtype_is_signed(idx->dtype))
        oi__buf_printf(b, "const int64_t at = q < 0 ? q + %lld : q;\n", (long long)g.dim);
    else
        oi__buf_puts(b, "const uint64_t at = q;\n");
    /* the result's slab (o, i) and data's (o, at), in elements */
    char dst[96], src[96];
    if (g.outer > 1) {
        snprintf(dst, sizeof dst, "(o * %lld + i)", (long long)g.count);
        snprintf(src, sizeof src, "(o * %lld + at)", (long long)g.dim);
    } else {
        snprintf(dst, sizeof dst, "i");
        snprintf(src, sizeof src, "at");
    }
    oi__sy_indent(b, depth + 1);
    if (g.inner > 1) {
        oi__buf_puts(b, "memcpy(");
        oi__sy_param_name(b, s, out);
        oi__buf_printf(b, " + %s * %lld, ", dst, (long long)g.inner);
        oi__sy_param_name(b, s, data);
        oi__buf_printf(b, " + %s * %lld, %lld * sizeof *", src, (long long)g.inner, (long long)g.inner);
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, ");\n");
    } else {
        oi__sy_param_name(b, s, out);
        oi__buf_printf(b, "[%s] = ", dst);
        oi__sy_param_name(b, s, data);
        oi__buf_printf(b, "[%s];\n", src);
    }
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

/* ------------------------------------------------------------------ */
/* Layout copies and convolutions                                      */
/* ------------------------------------------------------------------ */
static void oi__sy_i64_list(oi__buf *b, const int64_t *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        oi__buf_printf(b, "%s%lld", i ? (i % 16 ? ", " : ",\n        ") : "", (long long)v[i]);
}

/* concat: each input's rows, one after another along the axis. */
static void oi__sy_render_concat(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                 const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    int64_t axis = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "axis");
    axis = axis < 0 ? axis + out->ndim : axis;
    int64_t outer = oi__shape_numel((int)axis, out->shape), after = oi__shape_numel(out->ndim - (int)axis - 1,
                                                                                      out->shape + axis + 1);
    int64_t at = 0;
    for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
        const oi__slot *in = oi__sy_slot_of(s, pn->inputs[i]);
        long long run = (long long)(in->shape[axis] * after), row = (long long)(out->shape[axis] * after);
        if (outer > 1)
            oi__buf_printf(b, "    for (%s o = 0; o < %lld; o++)\n    ", lang->index_type, (long long)outer);
        oi__buf_puts(b, "    memcpy(");
        oi__sy_param_name(b, s, out);
        oi__buf_printf(b, outer > 1 ? " + o * %lld + %lld, " : " + %lld * 0 + %lld, ", row, (long long)(at * after));
        oi__sy_param_name(b, s, in);
        oi__buf_printf(b, outer > 1 ? " + o * %lld, %lld * sizeof *" : " + %lld * 0, %lld * sizeof *", run, run);
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, ");\n");
        at += in->shape[axis];
    }
}

/* slice, split: the input's elements at an offset and strides (the
 * schedule's index map, from kernels/shape.c), the last dim a loop. */
static void oi__sy_render_strided(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                  const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    const int64_t *st = k->index_map + 1;
    int nd = out->ndim;
    long long inner = nd ? (long long)out->shape[nd - 1] : 1, last = nd ? (long long)st[nd - 1] : 1;
    long long outer = (long long)oi__shape_numel(nd, out->shape) / (inner ? inner : 1);
    if (outer * inner == 0)
        return;
    oi__buf_printf(b, "    for (%s o = 0; o < %lld; o++) {\n        const int64_t at = %lld", lang->index_type, outer,
                   (long long)k->index_map[0]);
    int64_t after = 1;
    for (int d = nd - 2; d >= 0; d--) {
        if (out->shape[d] > 1)
            oi__buf_printf(b, " + (int64_t)(o / %lld %% %lld) * %lld", (long long)after, (long long)out->shape[d],
                           (long long)st[d]);
        after *= out->shape[d];
    }
    oi__buf_puts(b, ";\n");
    if (last == 1) {
        oi__buf_puts(b, "        memcpy(");
        oi__sy_param_name(b, s, out);
        oi__buf_printf(b, " + o * %lld, ", inner);
        oi__sy_param_name(b, s, in);
        oi__buf_printf(b, " + at, %lld * sizeof *", inner);
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, ");\n    }\n");
        return;
    }
    oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n            ", lang->index_type, inner);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, "[o * %lld + j] = ", inner);
    oi__sy_param_name(b, s, in);
    oi__buf_printf(b, "[at + (int64_t)j * %lld];\n    }\n", last);
}

/* pad: per output dim the source index of each position (the schedule's
 * tables, from kernels/shape.c's pad kernel), -1 taking the fill value. */
static void oi__sy_render_pad(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    int nd = out->ndim;
    long long inner = nd ? (long long)out->shape[nd - 1] : 1;
    long long outer = (long long)oi__shape_numel(nd, out->shape) / (inner ? inner : 1);
    if (outer * inner == 0 || nd == 0)
        return;
    int64_t in_stride[OI_MAX_DIMS], st = 1;
    for (int d = nd - 1; d >= 0; d--) {
        in_stride[d] = st;
        st *= in->shape[d];
    }
    const int64_t *map = k->index_map;
    for (int d = 0; d < nd; d++) {
        oi__buf_printf(b, "    static const int64_t oi_map%d[%lld] = {", d, (long long)out->shape[d]);
        oi__sy_i64_list(b, map, out->shape[d]);
        oi__buf_puts(b, "};\n");
        map += out->shape[d];
    }
    bool tile = pn->ir->op == OI_OP_tile; /* every source inside: no fill */
    if (!tile) {
        oi__buf_printf(b, "    const %s fill = (%s)", lang->type_of(out->dtype), lang->type_of(out->dtype));
        oi__sy_double(b, oi__sy_param_f(pn, "value"));
        oi__buf_puts(b, ";\n");
    }
    oi__buf_printf(b, "    for (%s o = 0; o < %lld; o++) {\n        int64_t at = 0;\n%s", lang->index_type, outer,
                   tile ? "" : "        int inside = 1;\n");
    int64_t after = 1;
    for (int d = nd - 2; d >= 0; d--) {
        oi__buf_printf(b, "        {\n            const int64_t src = oi_map%d[o / %lld %% %lld];\n%s"
                          "            at += src * %lld;\n        }\n",
                       d, (long long)after, (long long)out->shape[d], tile ? "" : "            inside &= src >= 0;\n",
                       (long long)in_stride[d]);
        after *= out->shape[d];
    }
    oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++) {\n", lang->index_type, inner);
    oi__buf_printf(b, "            const int64_t src = oi_map%d[j];\n            ", nd - 1);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, "[o * %lld + j] = %s", inner, tile ? "" : "inside && src >= 0 ? ");
    oi__sy_param_name(b, s, in);
    oi__buf_puts(b, tile ? "[at + src];\n        }\n    }\n" : "[at + src] : fill;\n        }\n    }\n");
}

static void oi__sy_render_layout(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                 const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    oi_op op = pn->ir->op;
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    if (oi__shape_numel(out->ndim, out->shape) == 0) { /* an empty slice or piece: nothing to copy */
        for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
            oi__buf_puts(b, "    (void)");
            oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[i]));
            oi__buf_puts(b, ";\n");
        }
        oi__buf_puts(b, "    (void)");
        oi__sy_param_name(b, s, out);
        oi__buf_puts(b, ";\n");
        return;
    }
    if (op == OI_OP_concat)
        oi__sy_render_concat(b, s, lang, k);
    else if (op == OI_OP_pad || op == OI_OP_tile)
        oi__sy_render_pad(b, s, lang, k);
    else
        oi__sy_render_strided(b, s, lang, k);
}

/* Patches of one image and group (conv.c's oi__conv_patches): position
 * q0 + q's window contiguous, oi_pt[q * rows + c * k_h * k_w + ky * k_w +
 * kx], zeros in the padding, for `count` positions from q0. */
static void oi__sy_render_patches(oi__buf *b, const oi__sy_lang *lang, const oi__sy_kernel *k, const char *q0,
                                  const char *count, int depth) {
    const oi__sy_conv_geom *g = &k->conv;
    const char *it = lang->index_type;
    long long in_sp = (long long)(g->in_h * g->in_w), ksp = (long long)(g->k_h * g->k_w);
    oi__sy_indent(b, depth);
    oi__buf_printf(b, "for (%s oi_q = 0; oi_q < %s; oi_q++) {\n", it, count);
    oi__sy_indent(b, depth + 1);
    oi__buf_printf(b, "const int64_t oi_oy = (int64_t)((%s + oi_q) / %lld), oi_ox = (int64_t)((%s + oi_q) %% %lld);\n", q0,
                   (long long)g->out_w, q0, (long long)g->out_w);
    oi__sy_indent(b, depth + 1);
    oi__buf_printf(b, "for (%s oi_c = 0; oi_c < %lld; oi_c++)\n", it, (long long)g->cg);
    oi__sy_indent(b, depth + 2);
    oi__buf_printf(b, "for (int64_t oi_ky = 0; oi_ky < %lld; oi_ky++) {\n", (long long)g->k_h);
    oi__sy_indent(b, depth + 3);
    oi__buf_printf(b, "const int64_t oi_iy = oi_oy * %lld - %lld + oi_ky * %lld;\n", (long long)g->s_h, (long long)g->p_h,
                   (long long)g->d_h);
    oi__sy_indent(b, depth + 3);
    oi__buf_printf(b, "for (int64_t oi_kx = 0; oi_kx < %lld; oi_kx++) {\n", (long long)g->k_w);
    oi__sy_indent(b, depth + 4);
    oi__buf_printf(b, "const int64_t oi_ix = oi_ox * %lld - %lld + oi_kx * %lld;\n", (long long)g->s_w,
                   (long long)g->p_w, (long long)g->d_w);
    oi__sy_indent(b, depth + 4);
    oi__buf_printf(b, "oi_pt[oi_q * %lld + oi_c * %lld + (size_t)(oi_ky * %lld + oi_kx)] =\n", (long long)g->rows, ksp,
                   (long long)g->k_w);
    oi__sy_indent(b, depth + 5);
    oi__buf_printf(b, "oi_iy < 0 || oi_iy >= %lld || oi_ix < 0 || oi_ix >= %lld ? 0.0f : oi_xg[oi_c * %lld + "
                      "(size_t)(oi_iy * %lld + oi_ix)];\n", (long long)g->in_h, (long long)g->in_w, in_sp,
                   (long long)g->in_w);
    oi__sy_indent(b, depth + 3);
    oi__buf_puts(b, "}\n");
    oi__sy_indent(b, depth + 2);
    oi__buf_puts(b, "}\n");
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

/* Run before a gather: the first element of its indices out of range, or
 * -1 (the step then fails naming it, and nothing is written). */
static void oi__sy_render_gather_check(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                       const char *prefix, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *idx = oi__sy_slot_of(s, pn->inputs[1]);
    oi__sy_gather_dims g = oi__sy_gather_shape(s, pn);
    oi__buf_printf(b, "/* k%d's indices: the first one out of range, or -1 */\n", k->id);
    oi__buf_printf(b, "static int64_t %s_k%d_check(const %s *", prefix, k->id, lang->type_of(idx->dtype));
    oi__sy_param_name(b, s, idx);
    oi__buf_printf(b, ") {\n    for (%s i = 0; i < %lld; i++) {\n", lang->index_type, (long long)g.count);
    oi__sy_gather_load(b, s, idx, 2);
    if (oi__dtype_is_signed(idx->dtype))
        oi__buf_printf(b, "        if (q < -%lld || q >= %lld)\n", (long long)g.dim, (long long)g.dim);
    else
        oi__buf_printf(b, "        if (q >= %lld)\n", (long long)g.dim);
    oi__buf_puts(b, "            return (int64_t)i;\n    }\n    return -1;\n}\n\n");
}

/* Output channel `ch`'s value `v` stored at `dst` as conv.c's gemm stores
 * it over the bias it starts from: (sum + bias) + 0 (the store's empty
 * bias term), then relu as max(0, x). */
static void oi__sy_conv_store(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *pn, const char *dst,
                              const char *v, const char *ch, int depth) {
    const char *act = oi__sy_activation(pn);
    oi__sy_indent(b, depth);
    oi__buf_printf(b, "{\n");
    oi__sy_indent(b, depth + 1);
    oi__buf_printf(b, "float oi_v = %s", v);
    if (arrlen(pn->inputs) > 2) {
        oi__buf_puts(b, " + ");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_printf(b, "[%s]", ch);
    }
    oi__buf_puts(b, " + 0.0f;\n");
    oi__sy_render_activation(b, &oi__sy_lang_c, act, "oi_v", depth + 1);
    oi__sy_indent(b, depth + 1);
    oi__buf_printf(b, "%s = oi_v;\n", dst);
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

/* gemm.c's plain loop (at most 4096 multiply-adds): each output row from
 * the bias (or zero) by OI_S_mac in k's order, then relu. */
static void oi__sy_render_conv_small(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                     const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const char *it = lang->index_type, *act = oi__sy_activation(pn);
    long long out_sp = (long long)(g->out_h * g->out_w), rows = (long long)g->rows, mg = (long long)g->mg;
    char count[32];
    snprintf(count, sizeof count, "%lld", out_sp);
    oi__sy_render_patches(b, lang, k, "0", count, 2);
    oi__buf_printf(b, "        for (%s oi_t = 0; oi_t < %lld; oi_t++) {\n", it, mg);
    oi__buf_printf(b, "            float *oi_ci = oi_yg + oi_t * %lld;\n", out_sp);
    oi__buf_printf(b, "            for (%s oi_j = 0; oi_j < %lld; oi_j++)\n                oi_ci[oi_j] = ", it, out_sp);
    if (arrlen(pn->inputs) > 2) {
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_printf(b, "[grp * %lld + oi_t];\n", mg);
    } else {
        oi__buf_puts(b, "0.0f;\n");
    }
    oi__buf_printf(b, "            for (%s oi_p = 0; oi_p < %lld; oi_p++) {\n", it, rows);
    oi__buf_printf(b, "                const float oi_a = oi_wg[oi_t * %lld + oi_p];\n", rows);
    oi__buf_printf(b, "                for (%s oi_j = 0; oi_j < %lld; oi_j++)\n", it, out_sp);
    oi__buf_printf(b, "                    oi_ci[oi_j] = OI_S_mac(oi_ci[oi_j], oi_a, oi_pt[oi_j * %lld + oi_p]);\n", rows);
    oi__buf_puts(b, "            }\n");
    if (act && strcmp(act, "none") != 0) {
        oi__buf_printf(b, "            for (%s oi_j = 0; oi_j < %lld; oi_j++)\n", it, out_sp);
        oi__sy_render_activation(b, lang, act, "oi_ci[oi_j]", 4);
    }
    oi__buf_puts(b, "        }\n");
}

/* Where a dot product of gemm.c's skinny path goes: small row oi_s (in
 * scope) with big row `t` (an expression) has value `v`. */
typedef void (*oi__sy_dot_store)(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, const char *t,
                                 const char *v, int depth);

/* gemm.c's skinny dot products, as its dot tasks run them: `ns` (<= 4)
 * small rows of `kk` values (`small`, contiguous) with each of `nbig` big
 * rows (`big` + t * kk), in blocks of 64 big rows, 4 (AVX-512) or 2 (AVX2)
 * at once by its dot kernels, then one by one; portable: its 16-lane dot.
 * oi_isa (in scope) picks the ISA. */
static void oi__sy_render_dots(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k,
                               const char *small, const char *big, long long kk, long long ns, long long nbig,
                               oi__sy_dot_store store) {
    const char *it = lang->index_type;
    char v[160];
    oi__buf_printf(b, "        for (%s oi_t0 = 0; oi_t0 < %lld; oi_t0 += 64) {\n", it, nbig);
    oi__buf_printf(b, "            const %s oi_t1 = oi_t0 + 64 < %lld ? oi_t0 + 64 : %lld;\n", it, nbig, nbig);
    oi__buf_printf(b, "            %s oi_t = oi_t0;\n            float oi_out[16];\n", it);
    oi__buf_puts(b, "#if OI__GEMM_X86\n");
    static const char *const isa_name[2] = {"avx2", "avx512"};
    for (int isa = 2; isa >= 1; isa--) {
        int rb = isa == 2 ? 4 : 2;
        oi__buf_printf(b, "            if (oi_isa == %d)\n                for (; oi_t + %d <= oi_t1; oi_t += %d) {\n", isa, rb, rb);
        oi__buf_printf(b, "                    oi__skinny_rows_%s(%s, %lld, %lld, %s + oi_t * %lld, %lld, oi_out);\n",
                       isa_name[isa - 1], small, kk, ns, big, kk, kk);
        oi__buf_printf(b, "                    for (int oi_s = 0; oi_s < %lld; oi_s++)\n"
                          "                        for (int oi_r = 0; oi_r < %d; oi_r++)\n", ns, rb);
        snprintf(v, sizeof v, "oi_out[oi_s * %d + oi_r]", rb);
        store(b, s, k, "oi_t + (size_t)oi_r", v, 6);
        oi__buf_puts(b, "                }\n");
    }
    oi__buf_puts(b, "            for (; oi_isa && oi_t < oi_t1; oi_t++) {\n                if (oi_isa == 2)\n");
    oi__buf_printf(b, "                    oi__skinny_dots_avx512(%s, %lld, %lld, %s + oi_t * %lld, oi_out);\n"
                      "                else\n"
                      "                    oi__skinny_dots_avx2(%s, %lld, %lld, %s + oi_t * %lld, oi_out);\n",
                   small, kk, ns, big, kk, small, kk, ns, big, kk);
    oi__buf_printf(b, "                for (int oi_s = 0; oi_s < %lld; oi_s++)\n", ns);
    store(b, s, k, "oi_t", "oi_out[oi_s]", 5);
    oi__buf_puts(b, "            }\n#endif\n");
    oi__buf_puts(b, "            for (; oi_t < oi_t1; oi_t++)\n");
    oi__buf_printf(b, "                for (int oi_s = 0; oi_s < %lld; oi_s++)\n", ns);
    snprintf(v, sizeof v, "oi__gemm_f32_dot(%s + (size_t)oi_s * %lld, %s + oi_t * %lld, %lld)", small, kk, big, kk, kk);
    store(b, s, k, "oi_t", v, 5);
    oi__buf_puts(b, "        }\n");
}

/* A conv's dot product: output channel grp * mg + t at position oi_s. */
static void oi__sy_conv_dot_store(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, const char *t,
                                  const char *v, int depth) {
    char dst[128], ch[96];
    long long out_sp = (long long)(k->conv.out_h * k->conv.out_w);
    snprintf(dst, sizeof dst, "oi_yg[(%s) * %lld + (size_t)oi_s]", t, out_sp);
    snprintf(ch, sizeof ch, "grp * %lld + %s", (long long)k->conv.mg, t);
    oi__sy_conv_store(b, s, k->nodes[0], dst, v, ch, depth);
}

/* gemm.c's skinny products (at most 4 positions, more channels): the
 * patches are the small rows, each channel's weights a big one. */
static void oi__sy_render_conv_skinny(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                      const oi__sy_kernel *k) {
    const oi__sy_conv_geom *g = &k->conv;
    long long out_sp = (long long)(g->out_h * g->out_w);
    char count[32];
    snprintf(count, sizeof count, "%lld", out_sp);
    oi__sy_render_patches(b, lang, k, "0", count, 2);
    oi__sy_render_dots(b, s, lang, k, "oi_pt", "oi_wg", (long long)g->rows, out_sp, (long long)g->mg,
                       oi__sy_conv_dot_store);
}

/* A skinny matmul's dot product: row oi_s, column t, as gemm.c's skinny
 * store writes it with no C to add (value + 0). */
static void oi__sy_matmul_dot_store(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, const char *t,
                                    const char *v, int depth) {
    long long n = (long long)oi__sy_slot_of(s, k->nodes[0]->out)->shape[1];
    oi__sy_indent(b, depth);
    oi__buf_printf(b, "oi_c[(size_t)oi_s * %lld + %s] = %s + 0.0f;\n", n, t, v);
}

/* A matmul of at most 4 rows with B a weight transposed at open (the
 * schedule's b_transposed): gemm.c's dot products of A's rows with B^T's,
 * then the epilogue per element. */
static void oi__sy_render_matmul_dots(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                      const oi__sy_kernel *k) {
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__sy_slot_of(s, mm->inputs[0]), *bm = oi__sy_slot_of(s, mm->inputs[1]);
    const oi__slot *c = oi__sy_slot_of(s, mm->out);
    long long M = (long long)c->shape[0], N = (long long)c->shape[1], K = (long long)a->shape[1];
    bool last = true;
    for (int m = 1; m < (int)arrlen(k->nodes); m++)
        last &= k->nodes[m]->out != mm->out;
    oi__buf_puts(b, "    const oi_micro *mk = oi_micro_select();\n"
                    "    const int oi_isa = mk->mr == 12 ? 2 : mk->mr == 6 ? 1 : 0; /* the micro-kernel's ISA */\n"
                    "    (void)oi_isa;\n");
    oi__buf_printf(b, "    float oi_c[%lld];\n    {\n", M * N);
    oi__buf *name = NULL;
    oi__buf small, big;
    memset(&small, 0, sizeof small);
    memset(&big, 0, sizeof big);
    (void)name;
    oi__sy_param_name(&small, s, a);
    oi__sy_param_name(&big, s, bm);
    oi__sy_render_dots(b, s, lang, k, small.data, big.data, K, M, N, oi__sy_matmul_dot_store);
    oi__buf_free(&small);
    oi__buf_free(&big);
    oi__buf_printf(b, "    }\n    for (%s i = 0; i < %lld; i++) {\n", lang->index_type, M * N);
    oi__buf_printf(b, "        %s v0 = (%s)oi_c[i]; /* ", lang->compute_float, lang->compute_float);
    oi__sy_render_stmt(b, mm);
    oi__buf_puts(b, " */\n");
    if (oi__sy_slot_stored(s, mm->out) && last) {
        oi__buf_puts(b, "        ");
        oi__sy_param_name(b, s, c);
        oi__buf_puts(b, "[i] = oi_c[i];\n");
    }
    for (int n = 1; n < (int)arrlen(k->nodes); n++)
        oi__sy_ew_statement(b, s, lang, k, n, "i", 2);
    oi__buf_puts(b, "        (void)v0;\n    }\n");
}

/* A 1 x 1 conv of stride 1 and no padding: its patches are the input's
 * planes themselves (conv.c's pointwise case), packed straight from them. */
static bool oi__sy_conv_pointwise(const oi__sy_conv_geom *g) {
    return g->path == OI__SY_CONV_GEMM && g->k_h == 1 && g->k_w == 1 && g->s_h == 1 && g->s_w == 1 && g->p_h == 0 &&
           g->p_w == 0 && g->in_h == g->out_h && g->in_w == g->out_w;
}

/* Blocks of positions: their patches packed (oi_pack_b) and multiplied by
 * the weights read in place, 12 channels per oi_gemm_packed call; then the
 * bias and relu. */
static void oi__sy_render_conv_gemm(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                    const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const char *it = lang->index_type;
    long long out_sp = (long long)(g->out_h * g->out_w), rows = (long long)g->rows, mg = (long long)g->mg;
    long long block = (long long)g->block;
    oi__buf_printf(b, "        for (%s oi_q0 = 0; oi_q0 < %lld; oi_q0 += %lld) {\n", it, out_sp, block);
    oi__buf_printf(b, "            const %s oi_nq = %lld - oi_q0 < %lld ? %lld - oi_q0 : %lld;\n", it, out_sp, block,
                   out_sp, block);
    if (oi__sy_conv_pointwise(g)) { /* step c (an input channel) of column q at oi_xg[c * out_sp + q] */
        oi__buf_printf(b, "            oi_pack_b(mk, oi_xg + oi_q0, 1, %lld, %lld, (int64_t)oi_nq, oi_bp);\n", out_sp, rows);
    } else {
        oi__sy_render_patches(b, lang, k, "oi_q0", "oi_nq", 3);
        oi__buf_printf(b, "            oi_pack_b(mk, oi_pt, %lld, 1, %lld, (int64_t)oi_nq, oi_bp);\n", rows, rows);
    }
    /* a split kernel's task: output channels [oi_c0, oi_c1) (render_conv) */
    char c0[32], c1[32];
    snprintf(c0, sizeof c0, "%s", k->tasks > 1 ? "oi_c0" : "0");
    snprintf(c1, sizeof c1, k->tasks > 1 ? "oi_c1" : "%lld", mg);
    oi__buf_printf(b, "            for (%s oi_t = %s; oi_t < %s; oi_t += 12)\n", it, c0, c1);
    oi__buf_printf(b, "                oi_gemm_packed(mk, oi_wg + oi_t * %lld, %lld, (int64_t)(%lld - oi_t < 12 ? %lld - oi_t : 12), "
                      "%lld, (int64_t)oi_nq, oi_bp, 0, (int64_t)oi_nq, oi_yg + oi_t * %lld + oi_q0, %lld, NULL);\n",
                   rows, rows, mg, mg, rows, out_sp, out_sp);
    oi__buf_puts(b, "        }\n");
    oi__buf_printf(b, "        for (%s oi_t = %s; oi_t < %s; oi_t++)\n", it, c0, c1);
    oi__buf_printf(b, "            for (%s oi_j = 0; oi_j < %lld; oi_j++)\n", it, out_sp);
    char dst[96], ch[64];
    snprintf(dst, sizeof dst, "oi_yg[oi_t * %lld + oi_j]", out_sp);
    snprintf(ch, sizeof ch, "grp * %lld + oi_t", mg);
    oi__sy_conv_store(b, s, pn, dst, dst, ch, 4);
}

/* One input channel per group: conv.c's direct loop (oi__dw_plane), each
 * output plane from the bias, then per kernel tap a product and a sum (no
 * FMA: its vector forms give the same bits) over the columns whose input
 * is inside the row, then relu. */
static void oi__sy_render_conv_depthwise(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                         const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const char *it = lang->index_type, *act = oi__sy_activation(pn);
    long long out_sp = (long long)(g->out_h * g->out_w), ksp = (long long)(g->k_h * g->k_w), mg = (long long)g->mg;
    long long ow = (long long)g->out_w;
    oi__buf_printf(b, "        for (%s oi_t = 0; oi_t < %lld; oi_t++) {\n", it, mg);
    oi__buf_printf(b, "            const float *oi_wk = oi_wg + oi_t * %lld;\n            const float oi_b = ", ksp);
    if (arrlen(pn->inputs) > 2) {
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_printf(b, "[grp * %lld + oi_t];\n", mg);
    } else {
        oi__buf_puts(b, "0.0f;\n");
    }
    oi__buf_printf(b, "            float *oi_pl = oi_yg + oi_t * %lld;\n", out_sp);
    oi__buf_printf(b, "            for (int64_t oi_oy = 0; oi_oy < %lld; oi_oy++) {\n", (long long)g->out_h);
    oi__buf_printf(b, "                float *oi_row = oi_pl + oi_oy * %lld;\n", ow);
    oi__buf_printf(b, "                for (int64_t oi_ox = 0; oi_ox < %lld; oi_ox++)\n                    oi_row[oi_ox] = oi_b;\n", ow);
    oi__buf_printf(b, "                for (int64_t oi_ky = 0; oi_ky < %lld; oi_ky++) {\n", (long long)g->k_h);
    oi__buf_printf(b, "                    const int64_t oi_iy = oi_oy * %lld - %lld + oi_ky * %lld;\n", (long long)g->s_h,
                   (long long)g->p_h, (long long)g->d_h);
    oi__buf_printf(b, "                    if (oi_iy < 0 || oi_iy >= %lld)\n                        continue;\n", (long long)g->in_h);
    oi__buf_printf(b, "                    const float *oi_src = oi_xg + oi_iy * %lld;\n", (long long)g->in_w);
    oi__buf_printf(b, "                    for (int64_t oi_kx = 0; oi_kx < %lld; oi_kx++) {\n", (long long)g->k_w);
    oi__buf_printf(b, "                        const float oi_wv = oi_wk[oi_ky * %lld + oi_kx];\n", (long long)g->k_w);
    oi__buf_printf(b, "                        const int64_t oi_off = oi_kx * %lld - %lld;\n", (long long)g->d_w, (long long)g->p_w);
    /* the columns whose input is inside the row, as a range: no test per element, so the compiler
     * vectorizes the loop (the same products and sums, in the same order) */
    long long sw = (long long)g->s_w;
    oi__buf_printf(b, "                        const int64_t oi_lo = oi_off < 0 ? (%lld - oi_off) / %lld : 0;\n", sw - 1, sw);
    oi__buf_printf(b, "                        int64_t oi_hi = (%lld - oi_off) / %lld;\n", (long long)g->in_w + sw - 1, sw);
    oi__buf_printf(b, "                        if (oi_hi > %lld)\n                            oi_hi = %lld;\n", ow, ow);
    oi__buf_puts(b, "                        for (int64_t oi_ox = oi_lo; oi_ox < oi_hi; oi_ox++) {\n");
    oi__buf_printf(b, "                            const float oi_p = oi_wv * oi_src[oi_ox * %lld + oi_off];\n", sw);
    oi__buf_puts(b, "                            oi_row[oi_ox] = oi_row[oi_ox] + oi_p;\n"
                    "                        }\n                    }\n                }\n"
                    "            }\n");
    if (act && strcmp(act, "none") != 0) {
        oi__buf_printf(b, "            for (%s oi_j = 0; oi_j < %lld; oi_j++)\n", it, out_sp);
        oi__sy_render_activation(b, lang, act, "oi_pl[oi_j]", 4);
    }
    oi__buf_puts(b, "        }\n");
}

/* avg_pool2d as conv.c's pool: each window's inputs summed in double in
 * the taps' order, divided by the taps inside the input (or, with
 * count_include_pad, inside the padded extent, per dim), rounded once. */
static void oi__sy_render_avg_pool(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                   const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *y = oi__sy_slot_of(s, pn->out);
    const oi__sy_conv_geom *g = &k->conv;
    bool include = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "count_include_pad") != 0;
    long long planes = (long long)(x->shape[0] * x->shape[1]);
    oi__buf_printf(b, "    for (%s p = 0; p < %lld; p++)\n", lang->index_type, planes);
    oi__buf_printf(b, "        for (int64_t oi_oy = 0; oi_oy < %lld; oi_oy++)\n", (long long)g->out_h);
    oi__buf_printf(b, "            for (int64_t oi_ox = 0; oi_ox < %lld; oi_ox++) {\n"
                      "                double sum = 0.0, oi_ny = 0.0, oi_nx = 0.0, oi_n = 0.0;\n", (long long)g->out_w);
    oi__buf_printf(b, "                for (int64_t oi_ky = 0; oi_ky < %lld; oi_ky++) {\n", (long long)g->k_h);
    oi__buf_printf(b, "                    const int64_t oi_iy = oi_oy * %lld - %lld + oi_ky * %lld;\n", (long long)g->s_h,
                   (long long)g->p_h, (long long)g->d_h);
    oi__buf_printf(b, "                    oi_ny += oi_iy >= -%lld && oi_iy < %lld;\n", (long long)g->p_h,
                   (long long)(g->in_h + g->pe_h));
    oi__buf_printf(b, "                    for (int64_t oi_kx = 0; oi_kx < %lld; oi_kx++) {\n", (long long)g->k_w);
    oi__buf_printf(b, "                        const int64_t oi_ix = oi_ox * %lld - %lld + oi_kx * %lld;\n",
                   (long long)g->s_w, (long long)g->p_w, (long long)g->d_w);
    oi__buf_printf(b, "                        if (oi_ky == 0)\n                            oi_nx += oi_ix >= -%lld && oi_ix < %lld;\n",
                   (long long)g->p_w, (long long)(g->in_w + g->pe_w));
    oi__buf_printf(b, "                        if (oi_iy < 0 || oi_iy >= %lld || oi_ix < 0 || oi_ix >= %lld)\n"
                      "                            continue;\n                        sum += (double)", (long long)g->in_h,
                   (long long)g->in_w);
    oi__sy_param_name(b, s, x);
    oi__buf_printf(b, "[((size_t)p * %lld + (size_t)oi_iy) * %lld + (size_t)oi_ix];\n"
                      "                        oi_n += 1.0;\n                    }\n                }\n", (long long)g->in_h,
                   (long long)g->in_w);
    oi__buf_puts(b, "                ");
    oi__sy_param_name(b, s, y);
    oi__buf_printf(b, "[((size_t)p * %lld + (size_t)oi_oy) * %lld + (size_t)oi_ox] = (float)(sum / %s);\n",
                   (long long)g->out_h, (long long)g->out_w, include ? "(oi_ny * oi_nx)" : "oi_n");
    oi__buf_printf(b, "                (void)oi_ny, (void)oi_nx, (void)oi_n;\n            }\n");
}

/* max_pool2d as conv.c's scalar loop (its vector rows give the same
 * maxima): -inf, then every tap inside the plane, a NaN winning for good;
 * global_avg_pool each plane's sum in double over its area, rounded once:
 * in f32 folders with the micro-kernels, conv.c's own sums in f64 lanes
 * (the same bits), else a plain loop (conv.c's lanes: bounded, almost
 * always equal). */
/* top_k and top_k_indices as nn.c's: per row of the axis (inner apart),
 * scalar.h's keys and its heap of the k best (OI_S_topk_select), best
 * first; the values copied, or their places along the axis (i64). */
static void oi__sy_render_topk(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *y = oi__sy_slot_of(s, pn->out);
    int64_t inner_n;
    long long n = (long long)oi__sy_softmax_lane(x, pn, &inner_n), inner = (long long)inner_n;
    long long kk = (long long)oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "k");
    long long rows = (long long)oi__shape_numel(x->ndim, x->shape) / (n ? n : 1);
    bool largest = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "largest") != 0;
    const char *it = lang->index_type, *t = lang->type_of(x->dtype);
    const char *key = oi__dtype_is_float(x->dtype) ? "f64((double)" : oi__dtype_is_signed(x->dtype) ? "i64((int64_t)"
                                                                                                   : "u64((uint64_t)";
    char at[40] = "";
    if (inner > 1)
        snprintf(at, sizeof at, " * %lld", inner);
    oi__sy_loop_open(b, lang, k, "oi_r", false, rows, rows);
    oi__buf_printf(b, "        const %s *oi_xr = ", t);
    oi__sy_param_name(b, s, x);
    oi__buf_printf(b, " + oi_r / %lld * %lld + oi_r %% %lld;\n        %s *oi_yr = ", inner, n * inner, inner,
                   lang->type_of(y->dtype));
    oi__sy_param_name(b, s, y);
    oi__buf_printf(b, " + oi_r / %lld * %lld + oi_r %% %lld;\n", inner, kk * inner, inner);
    oi__buf_printf(b, "        uint64_t oi_key[%lld];\n        int64_t oi_order[%lld];\n", n, kk);
    oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n", it, n);
    oi__buf_printf(b, "            oi_key[j] = OI_S_topk_key_%soi_xr[j%s], %d);\n", key, at, largest);
    oi__buf_printf(b, "        OI_S_topk_select(oi_key, %lld, %lld, oi_order);\n", n, kk);
    oi__buf_printf(b, "        for (%s j = 0; j < %lld; j++)\n", it, kk);
    if (pn->ir->op == OI_OP_top_k)
        oi__buf_printf(b, "            oi_yr[j%s] = oi_xr[oi_order[j]%s];\n    }\n", at, at);
    else
        oi__buf_printf(b, "            oi_yr[j%s] = oi_order[j];\n    }\n", at);
}

/* conv_transpose2d as conv.c's oi__conv_transpose: per image, group and
 * output channel, a plane of double sums from the bias; per window
 * position (kh, kw) and input position, the product over the group's
 * input channels (f32, as the gemm's columns) added where it lands (in
 * that order), the plane rounded to f32 at the end. */
static void oi__sy_render_conv_t(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *w = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *y = oi__sy_slot_of(s, pn->out);
    const char *it = lang->index_type;
    long long in_sp = (long long)(g->in_h * g->in_w), out_sp = (long long)(g->out_h * g->out_w);
    long long k_sp = (long long)(g->k_h * g->k_w), cg = (long long)g->cg, mg = (long long)g->mg;
    oi__buf_printf(b, "    for (%s oi_n = 0; oi_n < %lld; oi_n++)\n", it, (long long)g->batch);
    oi__buf_printf(b, "        for (%s oi_c = 0; oi_c < %lld; oi_c++) { /* output channel: group oi_c / %lld */\n", it,
                   (long long)g->out_c, mg);
    oi__buf_printf(b, "            const %s oi_g = oi_c / %lld, oi_m = oi_c %% %lld;\n", it, mg, mg);
    oi__buf_printf(b, "            double oi_plane[%lld];\n            for (%s oi_q = 0; oi_q < %lld; oi_q++)\n", out_sp, it, out_sp);
    if (arrlen(pn->inputs) > 2) {
        oi__buf_puts(b, "                oi_plane[oi_q] = (double)");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_puts(b, "[oi_c];\n");
    } else {
        oi__buf_puts(b, "                oi_plane[oi_q] = 0.0;\n");
    }
    oi__buf_printf(b, "            for (%s oi_k = 0; oi_k < %lld; oi_k++)\n", it, k_sp);
    oi__buf_printf(b, "                for (%s oi_q = 0; oi_q < %lld; oi_q++) {\n", it, in_sp);
    oi__buf_printf(b, "                    const int64_t oi_oh = (int64_t)(oi_q / %lld) * %lld - %lld + (int64_t)(oi_k / %lld) * %lld;\n",
                   (long long)g->in_w, (long long)g->s_h, (long long)g->p_h, (long long)g->k_w, (long long)g->d_h);
    oi__buf_printf(b, "                    const int64_t oi_ow = (int64_t)(oi_q %% %lld) * %lld - %lld + (int64_t)(oi_k %% %lld) * %lld;\n",
                   (long long)g->in_w, (long long)g->s_w, (long long)g->p_w, (long long)g->k_w, (long long)g->d_w);
    oi__buf_printf(b, "                    if (oi_oh < 0 || oi_oh >= %lld || oi_ow < 0 || oi_ow >= %lld)\n                        continue;\n",
                   (long long)g->out_h, (long long)g->out_w);
    oi__buf_puts(b, "                    float oi_acc = 0.0f;\n");
    oi__buf_printf(b, "                    for (%s oi_i = 0; oi_i < %lld; oi_i++)\n", it, cg);
    oi__buf_puts(b, "                        oi_acc = OI_S_mac(oi_acc, ");
    oi__sy_param_name(b, s, w);
    oi__buf_printf(b, "[((oi_g * %lld + oi_i) * %lld + oi_m) * %lld + oi_k], ", cg, mg, k_sp);
    oi__sy_param_name(b, s, x);
    oi__buf_printf(b, "[(oi_n * %lld + oi_g * %lld + oi_i) * %lld + oi_q]);\n", (long long)g->in_c, cg, in_sp);
    oi__buf_printf(b, "                    oi_plane[oi_oh * %lld + oi_ow] += (double)oi_acc;\n                }\n", (long long)g->out_w);
    oi__buf_printf(b, "            for (%s oi_q = 0; oi_q < %lld; oi_q++)\n                ", it, out_sp);
    oi__sy_param_name(b, s, y);
    oi__buf_printf(b, "[(oi_n * %lld + oi_c) * %lld + oi_q] = (float)oi_plane[oi_q];\n        }\n", (long long)g->out_c, out_sp);
}

static void oi__sy_render_pool(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *y = oi__sy_slot_of(s, pn->out);
    const char *it = lang->index_type;
    long long planes = (long long)(x->shape[0] * x->shape[1]);
    if (pn->ir->op == OI_OP_global_avg_pool) {
        long long area = (long long)oi__shape_numel(x->ndim - 2, x->shape + 2);
        if (s->packed_gemm && area && x->dtype == OI_DTYPE_F32 && y->dtype == OI_DTYPE_F32) {
            /* conv.c's sums in f64 lanes (oi_gemm.h), on the micro-kernel's ISA: the simulator's bits */
            oi__buf_puts(b, "    const oi_micro *mk = oi_micro_select();\n"
                            "    const int oi_isa = mk->mr == 12 ? 2 : mk->mr == 6 ? 1 : 0;\n");
            oi__buf_printf(b, "    for (%s p = 0; p < %lld; p++)\n        ", it, planes);
            oi__sy_param_name(b, s, y);
            oi__buf_puts(b, "[p] = (float)(oi__conv_sum_f32_at(oi_isa, ");
            oi__sy_param_name(b, s, x);
            oi__buf_printf(b, " + p * %lld, %lld) / %lld.0);\n", area, area, area);
            return;
        }
        oi__buf_printf(b, "    for (%s p = 0; p < %lld; p++) {\n        double sum = 0.0;\n", it, planes);
        oi__buf_printf(b, "        for (%s i = 0; i < %lld; i++)\n            sum += (double)", it, area);
        oi__sy_param_name(b, s, x);
        oi__buf_printf(b, "[p * %lld + i];\n        ", area);
        oi__sy_param_name(b, s, y);
        if (area)
            oi__buf_printf(b, "[p] = (float)(sum / %lld.0);\n    }\n", area);
        else
            oi__buf_puts(b, "[p] = NAN;\n        (void)sum;\n    }\n");
        return;
    }
    const oi__sy_conv_geom *g = &k->conv;
    if (pn->ir->op == OI_OP_avg_pool2d) {
        oi__sy_render_avg_pool(b, s, lang, k);
        return;
    }
    /* i8 and u8 compared as doubles, as conv.c's f64 path (exact) */
    bool bytes = x->dtype != OI_DTYPE_F32;
    const char *acc = bytes ? "double" : "float";
    oi__buf_printf(b, "    for (%s p = 0; p < %lld; p++)\n", it, planes);
    oi__buf_printf(b, "        for (int64_t oi_oy = 0; oi_oy < %lld; oi_oy++)\n", (long long)g->out_h);
    oi__buf_printf(b, "            for (int64_t oi_ox = 0; oi_ox < %lld; oi_ox++) {\n                %s m = -INFINITY;\n",
                   (long long)g->out_w, acc);
    oi__buf_printf(b, "                for (int64_t oi_ky = 0; oi_ky < %lld; oi_ky++) {\n", (long long)g->k_h);
    oi__buf_printf(b, "                    const int64_t oi_iy = oi_oy * %lld - %lld + oi_ky * %lld;\n", (long long)g->s_h,
                   (long long)g->p_h, (long long)g->d_h);
    oi__buf_printf(b, "                    if (oi_iy < 0 || oi_iy >= %lld)\n                        continue;\n", (long long)g->in_h);
    oi__buf_printf(b, "                    for (int64_t oi_kx = 0; oi_kx < %lld; oi_kx++) {\n", (long long)g->k_w);
    oi__buf_printf(b, "                        const int64_t oi_ix = oi_ox * %lld - %lld + oi_kx * %lld;\n",
                   (long long)g->s_w, (long long)g->p_w, (long long)g->d_w);
    oi__buf_printf(b, "                        const %s v = oi_ix < 0 || oi_ix >= %lld ? -INFINITY : %s", acc,
                   (long long)g->in_w, bytes ? "(double)" : "");
    oi__sy_param_name(b, s, x);
    oi__buf_printf(b, "[((size_t)p * %lld + (size_t)oi_iy) * %lld + (size_t)oi_ix];\n", (long long)g->in_h,
                   (long long)g->in_w);
    oi__buf_puts(b, "                        if (m == m && (v > m || v != v)) /* once NaN, stays NaN */\n"
                    "                            m = v;\n                    }\n                }\n                ");
    oi__sy_param_name(b, s, y);
    oi__buf_printf(b, "[((size_t)p * %lld + (size_t)oi_oy) * %lld + (size_t)oi_ox] = ", (long long)g->out_h,
                   (long long)g->out_w);
    /* a window wholly in the padding keeps -inf: 0 in dtype.c's integer store (saturated to
     * int64's least, then wrapped to the width) */
    if (bytes)
        oi__buf_printf(b, "m == -INFINITY ? 0 : (%s)m;\n            }\n", lang->type_of(y->dtype));
    else
        oi__buf_puts(b, "m;\n            }\n");
}

/* Whether a conv kernel's fused statements are a chain of relu, clamp,
 * hard_sigmoid and hard_swish over f32, each on the one before it, whose
 * only stored value is the last: elementwise.c's loops in the ISA's lanes
 * then run them over the kernel's elements (oi__sy_render_conv_epilogue),
 * as the simulator's fast path does (its conditions: clamp bounds exact in
 * f32). */
static bool oi__sy_conv_vector_epilogue(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    int last = (int)arrlen(k->nodes) - 1;
    if (last < 1 || !oi__sy_slot_stored(s, k->nodes[last]->out))
        return false;
    for (int n = 1; n <= last; n++) {
        const oi__pnode *pn = k->nodes[n];
        oi_op op = pn->ir->op;
        if (op != OI_OP_relu && op != OI_OP_clamp && op != OI_OP_hard_sigmoid && op != OI_OP_hard_swish)
            return false;
        if (arrlen(pn->inputs) != 1 || pn->inputs[0] != k->nodes[n - 1]->out ||
            oi__sy_slot_of(s, pn->out)->dtype != OI_DTYPE_F32 || oi__sy_slot_of(s, pn->inputs[0])->dtype != OI_DTYPE_F32)
            return false;
        if (n < last && oi__sy_slot_stored(s, pn->out) && pn->out != k->nodes[last]->out)
            return false;
        if (op == OI_OP_relu || op == OI_OP_clamp) {
            double lo = oi__sy_param_f(pn, op == OI_OP_relu ? "clamp_min" : "min");
            double hi = oi__sy_param_f(pn, op == OI_OP_relu ? "clamp_max" : "max");
            if (isnan(lo) || isnan(hi) || (!isinf(lo) && (double)(float)lo != lo) ||
                (!isinf(hi) && (double)(float)hi != hi))
                return false;
        }
    }
    return true;
}

/* The fused chain of oi__sy_conv_vector_epilogue over elements [e0, e1) of
 * the conv's result oi_y: the first statement from oi_y into the last's
 * variable, the others in place there. */
static void oi__sy_render_conv_epilogue(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                        const oi__sy_kernel *k, const char *e0, const char *e1) {
    int last = (int)arrlen(k->nodes) - 1;
    oi__buf_printf(b, "    {\n        const int oi_isa = mk->mr == 12 ? 2 : mk->mr == 6 ? 1 : 0; /* the micro-kernel's ISA */\n");
    oi__buf_printf(b, "        const %s oi_e0 = %s, oi_e1 = %s;\n", lang->index_type, e0, e1);
    for (int n = 1; n <= last; n++) {
        const oi__pnode *pn = k->nodes[n];
        oi__buf_puts(b, "        /* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, " */\n        ");
        bool hard = pn->ir->op == OI_OP_hard_sigmoid || pn->ir->op == OI_OP_hard_swish;
        if (hard)
            oi__buf_puts(b, "oi__ew_hard_f32_at(oi_isa, ");
        else
            oi__buf_printf(b, "oi__ew_relu_clamp_f32(oi_isa, %s, ", pn->ir->op == OI_OP_relu ? "true" : "false");
        if (n == 1) {
            oi__buf_puts(b, "oi_y + oi_e0, ");
        } else {
            oi__sy_param_name(b, s, oi__sy_slot_of(s, k->nodes[last]->out));
            oi__buf_puts(b, " + oi_e0, ");
        }
        oi__sy_param_name(b, s, oi__sy_slot_of(s, k->nodes[last]->out));
        oi__buf_puts(b, " + oi_e0, (int64_t)(oi_e1 - oi_e0), ");
        if (hard) { /* alpha and beta rounded to f32, as elementwise.c reads them */
            bool sig = pn->ir->op == OI_OP_hard_sigmoid;
            double alpha = sig ? oi__sy_param_f(pn, "alpha") : 1.0 / 6.0, beta = sig ? oi__sy_param_f(pn, "beta") : 0.5;
            oi__sy_double(b, (double)(float)alpha);
            oi__buf_puts(b, ", ");
            oi__sy_double(b, (double)(float)beta);
            oi__buf_printf(b, ", %s);\n", sig ? "false" : "true");
        } else {
            bool relu = pn->ir->op == OI_OP_relu;
            double lo = oi__sy_param_f(pn, relu ? "clamp_min" : "min"), hi = oi__sy_param_f(pn, relu ? "clamp_max" : "max");
            oi__sy_double(b, relu ? oi__sy_param_f(pn, "negative_slope") : 0.0);
            oi__buf_printf(b, ", %s, ", relu && isinf(lo) && lo < 0 && isinf(hi) && hi > 0 ? "false" : "true");
            oi__sy_double(b, lo);
            oi__buf_puts(b, ", ");
            oi__sy_double(b, hi);
            oi__buf_puts(b, ");\n");
        }
    }
    oi__buf_puts(b, "    }\n");
}

/* An f64 conv (OI__SY_CONV_WIDE) as conv.c runs it: each output from 0.0
 * by OI_S_mac over its patch in im2col's order (input channel, kernel row,
 * kernel column; the padding's entries 0.0), as gemm.c's f64 loops add
 * them, then + the bias, then relu. Never fused: its result is stored. */
static void oi__sy_render_conv_wide(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                    const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const oi__slot *y = oi__sy_slot_of(s, pn->out);
    const char *it = lang->index_type, *act = oi__sy_activation(pn);
    long long out_sp = (long long)(g->out_h * g->out_w), k_sp = (long long)(g->k_h * g->k_w), cg = (long long)g->cg;
    if (oi__sy_slot_stored(s, pn->out)) {
        oi__buf_puts(b, "    double *oi_y = ");
        oi__sy_param_name(b, s, y);
        oi__buf_puts(b, ";\n");
    } else {
        oi__buf_printf(b, "    double oi_y[%lld];\n", (long long)oi__shape_numel(y->ndim, y->shape));
    }
    oi__buf_printf(b, "    for (%s oi_n = 0; oi_n < %lld; oi_n++)\n", it, (long long)g->batch);
    oi__buf_printf(b, "        for (%s oi_c = 0; oi_c < %lld; oi_c++) { /* output channel: group oi_c / %lld */\n", it,
                   (long long)g->out_c, (long long)g->mg);
    oi__buf_printf(b, "            const %s oi_g = oi_c / %lld;\n", it, (long long)g->mg);
    oi__buf_printf(b, "            for (%s oi_q = 0; oi_q < %lld; oi_q++) {\n", it, out_sp);
    oi__buf_printf(b, "                const int64_t oi_oy = (int64_t)(oi_q / %lld), oi_ox = (int64_t)(oi_q %% %lld);\n",
                   (long long)g->out_w, (long long)g->out_w);
    oi__buf_printf(b, "                double oi_acc = 0.0;\n                for (%s oi_i = 0; oi_i < %lld; oi_i++)\n", it, cg);
    oi__buf_printf(b, "                    for (int64_t oi_ky = 0; oi_ky < %lld; oi_ky++) {\n", (long long)g->k_h);
    oi__buf_printf(b, "                        const int64_t oi_iy = oi_oy * %lld - %lld + oi_ky * %lld;\n", (long long)g->s_h,
                   (long long)g->p_h, (long long)g->d_h);
    oi__buf_printf(b, "                        for (int64_t oi_kx = 0; oi_kx < %lld; oi_kx++) {\n", (long long)g->k_w);
    oi__buf_printf(b, "                            const int64_t oi_ix = oi_ox * %lld - %lld + oi_kx * %lld;\n",
                   (long long)g->s_w, (long long)g->p_w, (long long)g->d_w);
    oi__buf_puts(b, "                            oi_acc = OI_S_mac(oi_acc, ");
    oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[1]));
    oi__buf_printf(b, "[(oi_c * %lld + oi_i) * %lld + (size_t)(oi_ky * %lld + oi_kx)],\n", cg, k_sp, (long long)g->k_w);
    oi__buf_printf(b, "                                oi_iy < 0 || oi_iy >= %lld || oi_ix < 0 || oi_ix >= %lld ? 0.0 : ",
                   (long long)g->in_h, (long long)g->in_w);
    oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[0]));
    oi__buf_printf(b, "[(oi_n * %lld + oi_g * %lld + oi_i) * %lld + (size_t)(oi_iy * %lld + oi_ix)]);\n",
                   (long long)g->in_c, cg, (long long)(g->in_h * g->in_w), (long long)g->in_w);
    oi__buf_puts(b, "                        }\n                    }\n");
    if (arrlen(pn->inputs) > 2) {
        oi__buf_puts(b, "                oi_acc += ");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_puts(b, "[oi_c];\n");
    }
    if (act && strcmp(act, "relu") == 0)
        oi__buf_puts(b, "                oi_acc = oi_acc < 0.0 ? 0.0 : oi_acc;\n");
    oi__buf_printf(b, "                oi_y[(oi_n * %lld + oi_c) * %lld + oi_q] = oi_acc;\n            }\n        }\n",
                   (long long)g->out_c, out_sp);
}

static void oi__sy_render_conv(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    if (k->conv.path == OI__SY_CONV_WIDE) {
        oi__sy_render_conv_wide(b, s, lang, k);
        return;
    }
    const oi__sy_conv_geom *g = &k->conv;
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *w = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *y = oi__sy_slot_of(s, pn->out);
    const char *it = lang->index_type;
    long long out_sp = (long long)(g->out_h * g->out_w), rows = (long long)g->rows, mg = (long long)g->mg;
    long long numel = (long long)oi__shape_numel(y->ndim, y->shape);
    if (oi__sy_slot_stored(s, pn->out)) {
        oi__buf_puts(b, "    float *oi_y = ");
        oi__sy_param_name(b, s, y);
        oi__buf_puts(b, ";\n");
    } else {
        oi__buf_printf(b, "    float oi_y[%lld];\n", numel);
    }
    if (k->tasks < 2 || !k->packed) /* a split packed kernel gets it from its task entry */
        oi__buf_puts(b, "    const oi_micro *mk = oi_micro_select();\n");
    if (g->path != OI__SY_CONV_DEPTHWISE && !oi__sy_conv_pointwise(g))
        oi__buf_printf(b, "    float oi_pt[%lld];\n", (g->path == OI__SY_CONV_GEMM ? (long long)g->block : out_sp) * rows);
    if (g->path == OI__SY_CONV_GEMM)
        oi__buf_printf(b, "    float oi_bp_raw[%lld + 16];\n    float *oi_bp = oi_align64(oi_bp_raw);\n",
                       (long long)((g->block + 31) / 32 * 32) * rows);
    if (g->path == OI__SY_CONV_SKINNY) /* the dot kernels of the micro-kernel's ISA (12 x 32: AVX-512, 6 x 16: AVX2) */
        oi__buf_puts(b, "    const int oi_isa = mk->mr == 12 ? 2 : mk->mr == 6 ? 1 : 0;\n    (void)oi_isa;\n");
    if (g->path == OI__SY_CONV_SMALL || g->path == OI__SY_CONV_DEPTHWISE)
        oi__buf_puts(b, "    (void)mk;\n");
    /* a split conv of one image (schedule.c): depthwise by groups, on the micro-kernels by blocks
     * of 12 output channels */
    bool by_channels = k->tasks > 1 && g->path == OI__SY_CONV_GEMM;
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, by_channels ? (g->mg + 11) / 12 : g->group);
    if (by_channels)
        oi__buf_printf(b, "    const %s oi_c0 = lo * 12, oi_c1 = hi * 12 < %lld ? hi * 12 : %lld;\n", it, mg, mg);
    oi__buf_printf(b, "    for (%s n = 0; n < %lld; n++)\n", it, (long long)g->batch);
    if (k->tasks > 1 && !by_channels)
        oi__buf_printf(b, "    for (%s grp = lo; grp < hi; grp++) {\n", it);
    else
        oi__buf_printf(b, "    for (%s grp = 0; grp < %lld; grp++) {\n", it, (long long)g->group);
    oi__buf_puts(b, "        const float *oi_xg = ");
    oi__sy_param_name(b, s, x);
    oi__buf_printf(b, " + (n * %lld + grp * %lld) * %lld;\n", (long long)g->in_c, (long long)g->cg,
                   (long long)(g->in_h * g->in_w));
    oi__buf_puts(b, "        const float *oi_wg = ");
    oi__sy_param_name(b, s, w);
    oi__buf_printf(b, " + grp * %lld;\n", mg * rows);
    oi__buf_printf(b, "        float *oi_yg = oi_y + (n * %lld + grp * %lld) * %lld;\n", (long long)g->out_c, mg, out_sp);
    if (g->path == OI__SY_CONV_SMALL)
        oi__sy_render_conv_small(b, s, lang, k);
    else if (g->path == OI__SY_CONV_SKINNY)
        oi__sy_render_conv_skinny(b, s, lang, k);
    else if (g->path == OI__SY_CONV_DEPTHWISE)
        oi__sy_render_conv_depthwise(b, s, lang, k);
    else
        oi__sy_render_conv_gemm(b, s, lang, k);
    oi__buf_puts(b, "    }\n");
    if (arrlen(k->nodes) < 2)
        return;
    if (oi__sy_conv_vector_epilogue(s, k)) {
        char e0[64], e1[64];
        if (by_channels) {
            snprintf(e0, sizeof e0, "oi_c0 * %lld", out_sp);
            snprintf(e1, sizeof e1, "oi_c1 * %lld", out_sp);
        } else if (k->tasks > 1) {
            snprintf(e0, sizeof e0, "lo * %lld", mg * out_sp);
            snprintf(e1, sizeof e1, "hi * %lld", mg * out_sp);
        } else {
            snprintf(e0, sizeof e0, "0");
            snprintf(e1, sizeof e1, "%lld", numel);
        }
        oi__sy_render_conv_epilogue(b, s, lang, k, e0, e1);
        return;
    }
    if (by_channels) /* the task's channels' elements */
        oi__buf_printf(b, "    for (%s i = oi_c0 * %lld; i < oi_c1 * %lld; i++) {\n", it, out_sp, out_sp);
    else if (k->tasks > 1) /* the task's groups' elements */
        oi__buf_printf(b, "    for (%s i = lo * %lld; i < hi * %lld; i++) {\n", it, mg * out_sp, mg * out_sp);
    else
        oi__buf_printf(b, "    for (%s i = 0; i < %lld; i++) {\n", it, numel);
    oi__buf_printf(b, "        %s v0 = (%s)oi_y[i]; /* ", lang->compute_float, lang->compute_float);
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n");
    for (int n = 1; n < (int)arrlen(k->nodes); n++)
        oi__sy_ew_statement(b, s, lang, k, n, "i", 2);
    oi__buf_puts(b, "        (void)v0;\n    }\n");
}

/* A split kernel's arguments in one struct, and the pool's entry point:
 * part `task` of the kernel. */
static void oi__sy_render_task_entry(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                     const char *prefix, const oi__sy_kernel *k, const oi__sy_param *params) {
    oi__buf_printf(b, "typedef struct %s_k%d_args {\n", prefix, k->id);
    if (k->packed)
        oi__buf_puts(b, "    const oi_micro *mk;\n");
    if (oi__sy_matmul_tiles_at_run(s, k))
        oi__buf_puts(b, "    int threads;\n");
    if (oi__sy_kernel_a8(k))
        oi__buf_puts(b, "    const int8_t *q8_x;\n    const float *q8_d;\n    const int32_t *q8_s;\n    oi__q8dot_fn q8_dot;\n");
    for (int i = 0; i < (int)arrlen(params); i++) {
        const oi__slot *sl = oi__sy_slot_of(s, params[i].slot);
        oi__buf_printf(b, "    %s%s *", params[i].written ? "" : "const ", lang->type_of(sl->dtype));
        oi__sy_param_name(b, s, sl);
        oi__buf_puts(b, ";\n");
    }
    bool dynamic = oi__sy_kernel_driver(s, k) >= 0;
    if (dynamic) /* the length known at run time, last: the call sites append it */
        oi__buf_puts(b, "    int64_t n0;\n");
    oi__buf_printf(b, "} %s_k%d_args;\n\n", prefix, k->id);
    oi__buf_printf(b, "static void %s_k%d_task(void *arg, int task) {\n", prefix, k->id);
    oi__buf_printf(b, "    const %s_k%d_args *a = (const %s_k%d_args *)arg;\n", prefix, k->id, prefix, k->id);
    oi__buf_printf(b, "    %s_k%d(%stask%s%s%s", prefix, k->id, dynamic ? "a->n0, " : "", k->packed ? ", a->mk" : "",
                   oi__sy_matmul_tiles_at_run(s, k) ? ", a->threads" : "",
                   oi__sy_kernel_a8(k) ? ", a->q8_x, a->q8_d, a->q8_s, a->q8_dot" : "");
    for (int i = 0; i < (int)arrlen(params); i++) {
        oi__buf_puts(b, ", a->");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, params[i].slot));
    }
    oi__buf_puts(b, ");\n}\n\n");
}

/* rope, as nn.c's row: per lane (the last dim at one position) the
 * position from the positions input, per pair its angle, cosine and sine
 * in double (scalar.h's OI_S_rope_angle, libm's cos and sin), the pair
 * turned in double (OI_S_rope_first/second) and rounded once to f32; dims
 * past rotary_dim copied. In place is fine: a pair is read before it is
 * written. */
static void oi__sy_render_rope(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *pos = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    const oi__sy_rope_geom g = oi__sy_rope_geom_of(x, pn);
    int64_t n = g.n, rot = g.rot, seq_len = g.seq_len, seq_div = g.seq_div, batch_div = g.batch_div;
    long long lanes = (long long)g.lanes, half = (long long)g.half;
    bool inter = g.inter;
    const char *it = lang->index_type;
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, lanes);
    oi__sy_loop_open(b, lang, k, "oi_r", false, lanes, lanes);
    oi__buf_printf(b, "        const %s rope_at = oi_r / %lld %% %lld", it, (long long)seq_div, (long long)seq_len);
    if (pos->ndim == 2) /* positions per batch: [x.shape[0], seq] */
        oi__buf_printf(b, " + oi_r / %lld * %lld", (long long)batch_div, (long long)seq_len);
    oi__buf_puts(b, ";\n        const double rope_p = (double)");
    oi__sy_param_name(b, s, pos);
    oi__buf_puts(b, "[rope_at];\n        const float *oi_xr = ");
    oi__sy_param_name(b, s, x);
    oi__buf_printf(b, " + oi_r * %lld;\n        float *oi_yr = ", (long long)n);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, " + oi_r * %lld;\n", (long long)n);
    oi__buf_printf(b, "        for (%s oi_i = 0; oi_i < %lld; oi_i++) {\n", it, half);
    oi__buf_puts(b, "            const double rope_t = OI_S_rope_angle(rope_p, ");
    oi__sy_double(b, oi__sy_param_f(pn, "theta"));
    oi__buf_printf(b, ", (int64_t)oi_i, %lld);\n", (long long)rot);
    oi__buf_puts(b, "            const double rope_c = cos(rope_t), rope_s = sin(rope_t);\n");
    if (inter)
        oi__buf_printf(b, "            const %s oi_ia = 2 * oi_i, oi_ib = 2 * oi_i + 1;\n", it);
    else
        oi__buf_printf(b, "            const %s oi_ia = oi_i, oi_ib = oi_i + %lld;\n", it, half);
    oi__buf_puts(b, "            const double oi_x1 = (double)oi_xr[oi_ia], oi_x2 = (double)oi_xr[oi_ib];\n"
                    "            oi_yr[oi_ia] = (float)OI_S_rope_first(oi_x1, oi_x2, rope_c, rope_s);\n"
                    "            oi_yr[oi_ib] = (float)OI_S_rope_second(oi_x1, oi_x2, rope_c, rope_s);\n        }\n");
    if (rot < n)
        oi__buf_printf(b, "        for (%s oi_i = %lld; oi_i < %lld; oi_i++)\n            oi_yr[oi_i] = oi_xr[oi_i];\n", it, (long long)rot,
                       (long long)n);
    oi__buf_puts(b, "    }\n");
}

/* argmax_axis (argmin_axis) along any axis, as reduce.c's loops: the first
 * element, then each later one that is better (OI_S_gt (OI_S_lt), or
 * OI_S_ge (OI_S_le) with select_first=false: the last of equal ones), so a
 * NaN is taken only when it is first, and then stays. */
static void oi__sy_render_argmax(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    size_t na = arrlenu(pn->attrs);
    int64_t axis = oi__op_param_value_i64(pn->ir->op, pn->attrs, na, "axis");
    axis = axis < 0 ? axis + x->ndim : axis;
    /* rows of n along the axis, `inner` apart: the input is [outer, n, inner] */
    long long n = (long long)x->shape[axis], inner = (long long)oi__shape_numel(x->ndim - (int)axis - 1, x->shape + axis + 1);
    long long rows = (long long)oi__shape_numel(x->ndim, x->shape) / (n ? n : 1);
    bool first = oi__op_param_value_i64(pn->ir->op, pn->attrs, na, "select_first") != 0;
    const char *better = pn->ir->op == OI_OP_argmax_axis ? (first ? "OI_S_gt" : "OI_S_ge") : (first ? "OI_S_lt" : "OI_S_le");
    const char *it = lang->index_type, *t = lang->type_of(x->dtype);
    char at[40] = "oi_j"; /* element oi_j of the row */
    if (inner > 1)
        snprintf(at, sizeof at, "oi_j * %lld", inner);
    oi__sy_loop_open(b, lang, k, "oi_r", false, rows, rows);
    oi__buf_printf(b, "        const %s *oi_xr = ", t);
    oi__sy_param_name(b, s, x);
    if (inner == 1)
        oi__buf_printf(b, " + oi_r * %lld;\n", n);
    else /* row oi_r: its outer index, then its place among the inner ones */
        oi__buf_printf(b, " + oi_r / %lld * %lld + oi_r %% %lld;\n", inner, n * inner, inner);
    oi__buf_printf(b, "        %s oi_best = oi_xr[0];\n        int64_t oi_at = 0;\n", t);
    oi__buf_printf(b, "        for (%s oi_j = 1; oi_j < %lld; oi_j++)\n", it, n);
    oi__buf_printf(b, "            if (%s(oi_xr[%s], oi_best)) {\n                oi_best = oi_xr[%s];\n", better, at, at);
    oi__buf_puts(b, "                oi_at = (int64_t)oi_j;\n            }\n        ");
    oi__sy_param_name(b, s, out);
    oi__buf_puts(b, "[oi_r] = oi_at;\n    }\n");
}

/* matmul_any: per batch of the result and per row of it, the dot products
 * of A's row and B's columns read through their strides (gemm's trans_a and
 * trans_b swap them), in matmul.c's generic accumulator: f32 in float,
 * f64 in double, integers in wrapping uint64_t (scalar.h's OI_S_mac), the
 * batch dims of A and B broadcast to the result's. A gemm gives
 * alpha * dot + beta * C at the element C broadcasts to, as conv.c's gemm
 * (beta * C in double, rounded to the dtype). */
static void oi__sy_render_matmul_any(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                     const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *a = oi__sy_slot_of(s, pn->inputs[0]), *bm = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *c = oi__sy_slot_of(s, pn->out);
    const oi__sy_mm_geom g = oi__sy_mm_geom_of(a, bm, c, pn);
    const char *it = lang->index_type, *t = lang->type_of(c->dtype);
    bool is_int = oi__sy_is_int(c->dtype), single = c->dtype == OI_DTYPE_F32;
    const char *acc = is_int ? "uint64_t" : t, *load = !is_int ? "" : oi__dtype_is_signed(c->dtype) ? "(uint64_t)(int64_t)" : "(uint64_t)";
    if (g.batches * g.m * g.n == 0) {
        oi__buf_puts(b, "    /* no elements */\n");
        return;
    }
    oi__slot a_batch = *a, b_batch = *bm, c_batch = *c; /* the batch dims alone */
    a_batch.ndim -= 2, b_batch.ndim -= 2, c_batch.ndim -= 2;
    oi__buf_printf(b, "    for (%s oi_t = 0; oi_t < %lld; oi_t++) {\n        const %s *oi_pa = ", it, (long long)g.batches, t);
    oi__sy_param_name(b, s, a);
    oi__buf_puts(b, " + (");
    oi__sy_broadcast_index(b, &a_batch, &c_batch, "oi_t");
    oi__buf_printf(b, ") * %lld;\n        const %s *oi_pb = ", (long long)(g.m * g.k), t);
    oi__sy_param_name(b, s, bm);
    oi__buf_puts(b, " + (");
    oi__sy_broadcast_index(b, &b_batch, &c_batch, "oi_t");
    oi__buf_printf(b, ") * %lld;\n", (long long)(g.k * g.n));
    /* a row of results at a time, each dot product still summed in k's order (the loops vectorize over j) */
    oi__buf_printf(b, "        for (%s oi_i = 0; oi_i < %lld; oi_i++) {\n", it, (long long)g.m);
    oi__buf_printf(b, "            %s oi_acc[%lld];\n            for (%s oi_j = 0; oi_j < %lld; oi_j++)\n"
                      "                oi_acc[oi_j] = 0;\n", acc, (long long)g.n, it, (long long)g.n);
    if (g.k > 0) {
        oi__buf_printf(b, "            for (%s oi_p = 0; oi_p < %lld; oi_p++) {\n", it, (long long)g.k);
        oi__buf_printf(b, "                const %s oi_a = %soi_pa[oi_i * %lld + oi_p * %lld];\n", acc, load,
                       (long long)g.a_rs, (long long)g.a_cs);
        oi__buf_printf(b, "                for (%s oi_j = 0; oi_j < %lld; oi_j++)\n", it, (long long)g.n);
        oi__buf_printf(b, "                    oi_acc[oi_j] = OI_S_mac(oi_acc[oi_j], oi_a, %soi_pb[oi_p * %lld + "
                          "oi_j * %lld]);\n", load, (long long)g.b_rs, (long long)g.b_cs);
        oi__buf_puts(b, "            }\n");
    }
    oi__buf_printf(b, "            for (%s oi_j = 0; oi_j < %lld; oi_j++) {\n", it, (long long)g.n);
    oi__buf_printf(b, "                const %s oi_e = oi_t * %lld + oi_i * %lld + oi_j;\n", it, (long long)(g.m * g.n),
                   (long long)g.n);
    oi__buf_puts(b, "                /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n                ");
    oi__sy_param_name(b, s, c);
    if (pn->ir->op != OI_OP_gemm) {
        oi__buf_printf(b, "[oi_e] = (%s)oi_acc[oi_j];\n            }\n        }\n    }\n", t);
        return;
    }
    double alpha = oi__sy_param_f(pn, "alpha"), beta = oi__sy_param_f(pn, "beta");
    oi__buf_printf(b, "[oi_e] = (%s)(%s", t, single ? "(float)" : ""); /* alpha in the dtype, as gemm.c's */
    oi__sy_double(b, alpha);
    oi__buf_puts(b, " * oi_acc[oi_j]");
    if (arrlen(pn->inputs) > 2 && beta != 0.0) {
        oi__slot c_mat = *c;
        c_mat.ndim = 2, c_mat.shape[0] = g.m, c_mat.shape[1] = g.n;
        oi__buf_printf(b, " + (%s)(", t);
        oi__sy_double(b, beta);
        oi__buf_puts(b, " * ");
        oi__sy_param_name(b, s, oi__sy_slot_of(s, pn->inputs[2]));
        oi__buf_puts(b, "[");
        oi__sy_broadcast_index(b, oi__sy_slot_of(s, pn->inputs[2]), &c_mat, "oi_e");
        oi__buf_puts(b, "])");
    }
    oi__buf_puts(b, ");\n            }\n        }\n    }\n");
}

/* matmul_q4's integer dot product for this CPU, as quant.c picks it: AVX-512
 * VNNI, AVX2, or the portable loop (OPENINFER_ISA=portable|avx2 capping
 * it); every one gives the same bits, so the choice is speed only. */
static void oi__sy_render_q8dot_select(oi__buf *b) {
    oi__buf_puts(b,
        "static oi__q8dot_fn oi_q8dot_select(void) {\n"
        "    const char *cap = getenv(\"OPENINFER_ISA\");\n"
        "    if (cap && strcmp(cap, \"portable\") == 0)\n"
        "        return oi__q8dot_portable;\n"
        "#if OI__GEMM_X86\n"
        "    __builtin_cpu_init();\n"
        "    if (!(cap && strcmp(cap, \"avx2\") == 0) && __builtin_cpu_supports(\"avx512f\") &&\n"
        "        __builtin_cpu_supports(\"avx512vnni\") && __builtin_cpu_supports(\"avx512vl\") &&\n"
        "        __builtin_cpu_supports(\"avx512bw\"))\n"
        "        return oi__q8dot_vnni;\n"
        "    if (__builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\"))\n"
        "        return oi__q8dot_avx2;\n"
        "#endif\n"
        "    return oi__q8dot_portable;\n"
        "}\n\n"
        "/* x's rounding into int8 blocks, as quant.c picks it: AVX-512 lanes, AVX2\n"
        " * lanes or the scalar loop (the same bytes). */\n"
        "typedef void (*oi_q8_round_fn)(const float *x, int64_t m, int64_t k, int8_t *xq, float *xd, int32_t *xs);\n"
        "static oi_q8_round_fn oi_q8_round_select(void) {\n"
        "#if OI__GEMM_X86\n"
        "    const char *cap = getenv(\"OPENINFER_ISA\");\n"
        "    __builtin_cpu_init();\n"
        "    bool capped = cap && (strcmp(cap, \"avx2\") == 0 || strcmp(cap, \"portable\") == 0);\n"
        "    if (!capped && __builtin_cpu_supports(\"avx512f\") && __builtin_cpu_supports(\"avx512bw\"))\n"
        "        return oi__q8_quantize_rows_lanes;\n"
        "    if (!(cap && strcmp(cap, \"portable\") == 0) && __builtin_cpu_supports(\"avx2\"))\n"
        "        return oi__q8_quantize_rows_lanes8;\n"
        "#endif\n"
        "    return oi__q8_quantize_rows_body;\n"
        "}\n\n");
}

/* The block format of a matmul_q4 or dequantize node as quant.c's enum. */
static const char *oi__sy_qformat(const oi__pnode *pn) {
    const char *format = oi__sy_qformat_name(pn);
    return strcmp(format, "q4_0") == 0 ? "OI__Q4_0" : strcmp(format, "q4_1") == 0 ? "OI__Q4_1" : "OI__Q8_0";
}

/* dequantize: each row of blocks as f32 by quant.c's oi__dequant_row
 * (oi_quant.h), the simulator's own loop; tasks take whole rows. */
static void oi__sy_render_dequant(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                  const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *w = oi__sy_slot_of(s, pn->inputs[0]), *out = oi__sy_slot_of(s, pn->out);
    long long kk = (long long)out->shape[out->ndim - 1], rb = (long long)w->shape[w->ndim - 1];
    long long rows = (long long)oi__shape_numel(out->ndim, out->shape) / (kk ? kk : 1);
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, rows);
    oi__sy_loop_open(b, lang, k, "oi_r", false, rows, rows);
    oi__buf_printf(b, "        oi__dequant_row(%s, ", oi__sy_qformat(pn));
    oi__sy_param_name(b, s, w);
    oi__buf_printf(b, " + oi_r * %lld, %lld, ", rb, kk);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, " + oi_r * %lld);\n    }\n", kk);
}

/* matmul_q4 with activations "q8", as quant.c's: x's rows rounded into
 * int8 blocks once by the step (oi__sy_render_q8_round:
 * oi__q8_quantize_rows_body, the bytes of every ISA's path), then the
 * task's weight rows against the x rows, four at once (oi__q8dot_rows,
 * the simulator's own loop). */
static void oi__sy_render_qmatmul(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                  const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]), *w = oi__sy_slot_of(s, pn->inputs[1]);
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    const char *f = oi__sy_qformat(pn);
    long long kk = (long long)x->shape[x->ndim - 1], n = (long long)w->shape[0];
    long long m = (long long)oi__shape_numel(x->ndim, x->shape) / (kk ? kk : 1), rb = (long long)w->shape[1];
    if (!oi__sy_kernel_a8(k)) { /* f32 activations, a few rows: quant.c's dot products straight from the blocks */
        bool q8_0 = strcmp(f, "OI__Q8_0") == 0;
        if (k->tasks > 1)
            oi__sy_task_range(b, lang, k, n);
        oi__sy_loop_open(b, lang, k, "oi_j", false, n, n);
        oi__buf_printf(b, "        for (%s oi_i = 0; oi_i < %lld; oi_i++)\n            ", lang->index_type, m);
        oi__sy_param_name(b, s, out);
        oi__buf_printf(b, "[oi_i * %lld + oi_j] = %s(", n, q8_0 ? "oi__dot_q8_0" : "oi__dot_q4");
        oi__sy_param_name(b, s, x);
        oi__buf_printf(b, " + oi_i * %lld, ", kk);
        oi__sy_param_name(b, s, w);
        oi__buf_printf(b, " + oi_j * %lld, %lld%s);\n    }\n", rb, kk, q8_0 ? "" : strcmp(f, "OI__Q4_1") == 0 ? ", true" : ", false");
        return;
    }
    oi__buf_puts(b, "    (void)");
    oi__sy_param_name(b, s, x);
    oi__buf_puts(b, "; /* read as q8_x: rounded by the step */\n");
    if (k->tasks > 1)
        oi__sy_task_range(b, lang, k, n);
    oi__buf_printf(b, "    oi__q8dot_rows(q8_dot, %s, ", f);
    oi__sy_param_name(b, s, w);
    if (k->tasks > 1)
        oi__buf_printf(b, ", %lld, lo, hi", rb);
    else
        oi__buf_printf(b, ", %lld, 0, %lld", rb, n);
    oi__buf_printf(b, ", q8_x, q8_d, q8_s, %lld, %lld, ", m, kk / 32);
    oi__sy_param_name(b, s, out);
    oi__buf_printf(b, ", %lld);\n", n);
}

void oi__sy_render_kernels(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix) {
    if (s->quant)
        oi__sy_render_q8dot_select(b);
    if (s->packed_gemm)
        oi__sy_render_gemm_driver(b, s);
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        const oi__sy_kernel *kr = &s->kernels[k];
        oi__sy_param *params = oi__sy_kernel_params(s, kr);
        oi__sy_kernel_header(b, s, lang, prefix, kr, params);
        switch (kr->kind) {
        case OI__SY_K_ELEMENTWISE: oi__sy_render_elementwise(b, s, lang, kr); break;
        case OI__SY_K_MATMUL: oi__sy_render_matmul(b, s, lang, kr); break;
        case OI__SY_K_REDUCE: oi__sy_render_reduce(b, s, lang, kr); break;
        case OI__SY_K_SOFTMAX: oi__sy_render_softmax(b, s, lang, kr); break;
        case OI__SY_K_ALL_FINITE: oi__sy_render_all_finite(b, s, lang, kr); break;
        case OI__SY_K_COPY: oi__sy_render_copy_kernel(b, s, lang, kr); break;
        case OI__SY_K_TRANSPOSE: oi__sy_render_transpose(b, s, lang, kr); break;
        case OI__SY_K_NORM: oi__sy_render_norm(b, s, lang, kr); break;
        case OI__SY_K_ATTENTION: oi__sy_render_attention(b, s, lang, kr); break;
        case OI__SY_K_GATHER: oi__sy_render_gather(b, s, lang, kr); break;
        case OI__SY_K_LAYOUT: oi__sy_render_layout(b, s, lang, kr); break;
        case OI__SY_K_CONV: oi__sy_render_conv(b, s, lang, kr); break;
        case OI__SY_K_POOL: oi__sy_render_pool(b, s, lang, kr); break;
        case OI__SY_K_ROPE: oi__sy_render_rope(b, s, lang, kr); break;
        case OI__SY_K_ARGMAX: oi__sy_render_argmax(b, s, lang, kr); break;
        case OI__SY_K_QMATMUL: oi__sy_render_qmatmul(b, s, lang, kr); break;
        case OI__SY_K_ATTN_KV: oi__sy_render_attn_kv(b, s, lang, kr); break;
        case OI__SY_K_MATMUL_ANY: oi__sy_render_matmul_any(b, s, lang, kr); break;
        case OI__SY_K_CONV_T: oi__sy_render_conv_t(b, s, lang, kr); break;
        case OI__SY_K_TOPK: oi__sy_render_topk(b, s, lang, kr); break;
        case OI__SY_K_DEQUANT: oi__sy_render_dequant(b, s, lang, kr); break;
        }
        oi__buf_puts(b, "}\n\n");
        if (kr->kind == OI__SY_K_GATHER)
            oi__sy_render_gather_check(b, s, lang, prefix, kr);
        if (kr->tasks > 1)
            oi__sy_render_task_entry(b, s, lang, prefix, kr, params);
        arrfree(params);
    }
}

/* ------------------------------------------------------------------ */
/* The step function's body                                           */
/* ------------------------------------------------------------------ */
static void oi__sy_render_list(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                               const oi__sy_step *steps, int depth, oi__sy_scope *scope);
static void oi__sy_render_consumer(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                   const char *prefix, const oi__sy_step *cons, int depth, oi__sy_scope *scope);

/* Opens a block holding n0, the length of the kernel's dynamic leading
 * dim, from the lengths its inputs have now; inputs that must agree are
 * checked (a runtime error names the statement). */
static void oi__sy_render_kv_lengths(oi__buf *b, const oi__sy_schedule *s, const char *prefix, const oi__sy_kernel *k,
                                     int depth) {
    const oi__slot *keys = oi__sy_slot_of(s, k->view_slot[1]), *vals = oi__sy_slot_of(s, k->view_slot[2]);
    const oi__pnode *pn = oi__sy_kernel_lead(k);
    oi__sy_indent(b, depth + 1);
    oi__buf_printf(b, "const int64_t n0 = ctx->len_%s;\n", keys->name);
    oi__sy_indent(b, depth + 1);
    if (s->buffers[k->view_slot[2]].dyn0)
        oi__buf_printf(b, "if (ctx->len_%s != n0)\n", vals->name);
    else
        oi__buf_printf(b, "if (n0 != %lld)\n", (long long)oi__sy_slot_of(s, pn->inputs[2])->shape[2]);
    oi__sy_indent(b, depth + 2);
    oi__buf_printf(b, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: attention: %%lld keys and a different count of values\", "
                      "(long long)n0);\n", prefix, prefix, oi__sy_basename(pn->ir->src.file), pn->ir->src.line);
}

static void oi__sy_render_lengths(oi__buf *b, const oi__sy_schedule *s, const char *prefix, const oi__sy_kernel *k,
                                  int depth) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__sy_slot_of(s, pn->out);
    int first = -1;
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "{\n");
    if (k->kind == OI__SY_K_ATTN_KV) { /* the keys' count; the values' must agree */
        oi__sy_render_kv_lengths(b, s, prefix, k, depth);
        return;
    }
    for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
        const oi__slot *in = oi__sy_slot_of(s, pn->inputs[i]);
        if (!s->buffers[pn->inputs[i]].dyn0 || (k->kind == OI__SY_K_ELEMENTWISE && in->ndim != out->ndim))
            continue;
        if (k->kind != OI__SY_K_ELEMENTWISE && i > 0)
            break;
        if (first < 0) {
            first = pn->inputs[i];
            oi__sy_indent(b, depth + 1);
            oi__buf_printf(b, "const int64_t n0 = ctx->len_%s;\n", in->name);
            continue;
        }
        if (pn->inputs[i] == first)
            continue;
        oi__sy_indent(b, depth + 1);
        oi__buf_printf(b, "if (ctx->len_%s != n0)\n", in->name);
        oi__sy_indent(b, depth + 2);
        oi__buf_printf(b, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: %s has %%lld rows, %s %%lld\", (long long)n0, "
                          "(long long)ctx->len_%s);\n", prefix, prefix, oi__sy_basename(pn->ir->src.file),
                       pn->ir->src.line, oi__sy_slot_of(s, first)->name, in->name, in->name);
    }
}

/* preferences.default_precision fp16/bf16: the activations the kernel
 * stored, rounded once (the simulator's storage precision: f32 temporaries
 * and volatile variables the model does not hold; a reshape or transpose
 * computes nothing and keeps its input's rounding, as the simulator's views
 * do). Values held inside a fused kernel are not stored and not rounded. */
static bool oi__sy_rounds_slot(const oi__sy_schedule *s, int slot) {
    oi_dtype t = s->options.precision;
    if (t != OI_DTYPE_F16 && t != OI_DTYPE_BF16)
        return false;
    return oi__slot_is_activation(&s->plan->slots[slot < (int)arrlen(s->plan->slots) ? slot : s->buffers[slot].slot]);
}

static void oi__sy_render_round_slot(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                     const char *prefix, int slot, int depth, const oi__sy_scope *scope) {
    oi__sy_indent(b, depth);
    oi__buf_printf(b, "%s_round_stored(", prefix);
    oi__sy_render_ptr(b, s, lang, slot, NULL, scope);
    oi__buf_printf(b, ", %llu);\n", (unsigned long long)(s->buffers[slot].bytes / sizeof(float)));
}

static void oi__sy_render_round_stored(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                       const char *prefix, const oi__sy_kernel *k, const oi__sy_param *params,
                                       int depth, const oi__sy_scope *scope) {
    if (k->kind == OI__SY_K_COPY || k->kind == OI__SY_K_TRANSPOSE || k->kind == OI__SY_K_LAYOUT)
        return;
    for (int i = 0; i < (int)arrlen(params); i++)
        if (params[i].written && oi__sy_rounds_slot(s, params[i].slot))
            oi__sy_render_round_slot(b, s, lang, prefix, params[i].slot, depth, scope);
}

/* A kernel's arguments: the pointers to what it reads and writes. */
static void oi__sy_render_args(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k,
                               const oi__sy_param *params, const oi__sy_scope *scope) {
    for (int i = 0; i < (int)arrlen(params); i++) {
        const oi__pnode *pn = k->nodes[params[i].node];
        const oi__pindex *index = NULL;
        if (params[i].input >= 0 && pn->input_indices && pn->input_indices[params[i].input])
            index = &pn->input_indices[params[i].input][0];
        if (i)
            oi__buf_puts(b, ", ");
        if (k->b_prepacked && params[i].slot == k->nodes[0]->inputs[1])
            oi__sy_render_packed_ptr(b, s, lang, params[i].slot, index, scope);
        else if (k->b_transposed && params[i].slot == k->nodes[0]->inputs[1])
            oi__sy_render_transposed_ptr(b, s, lang, params[i].slot, index, scope);
        else
            oi__sy_render_ptr(b, s, lang, params[i].slot, index, scope);
    }
}

/* After a kernel: its stored results rounded (default_precision), and
 * the debug dump of every stored value it wrote. */
static void oi__sy_render_after(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                                const oi__sy_kernel *k, const oi__sy_param *params, int depth,
                                const oi__sy_scope *scope) {
    oi__sy_render_round_stored(b, s, lang, prefix, k, params, depth, scope);
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n", prefix);
    for (int i = 0; i < (int)arrlen(params); i++) {
        if (!params[i].written)
            continue;
        oi__sy_indent(b, depth);
        oi__buf_printf(b, "%s_dump(ctx, %d, \"%s\", ", prefix, k->id, oi__sy_slot_of(s, params[i].slot)->name);
        oi__sy_render_ptr(b, s, lang, params[i].slot, NULL, scope);
        oi__buf_printf(b, ", %d);\n", (int)oi__sy_slot_of(s, params[i].slot)->dtype);
    }
    oi__buf_puts(b, "#endif\n");
}

/* matmul_q4: x rounded into int8 blocks once, before the kernel's tasks
 * run (quant.c's oi__q8_quantize_rows_body), into the kernel's own rows of
 * ctx->q8_x (kernels of one job never share them). */
static void oi__sy_render_q8_round(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k,
                                   int depth, const oi__sy_scope *scope) {
    if (!oi__sy_kernel_a8(k))
        return;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__sy_slot_of(s, pn->inputs[0]);
    long long kk = (long long)x->shape[x->ndim - 1], m = (long long)oi__shape_numel(x->ndim, x->shape) / (kk ? kk : 1);
    long long at = (long long)k->q8_offset;
    const oi__pindex *index = pn->input_indices && pn->input_indices[0] ? &pn->input_indices[0][0] : NULL;
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "ctx->q8_round(");
    oi__sy_render_ptr(b, s, lang, pn->inputs[0], index, scope);
    oi__buf_printf(b, ", %lld, %lld, ctx->q8_x + %lld, ctx->q8_d + %lld, ctx->q8_s + %lld);\n", m, kk, at, at / 32, at / 32);
}

static void oi__sy_render_q8_args(oi__buf *b, const oi__sy_kernel *k, bool more) {
    if (!oi__sy_kernel_a8(k))
        return;
    long long at = (long long)k->q8_offset;
    oi__buf_printf(b, "ctx->q8_x + %lld, ctx->q8_d + %lld, ctx->q8_s + %lld, ctx->q8_dot%s", at, at / 32, at / 32,
                   more ? ", " : "");
}

/* Kernels that share one pool job (the schedule's joins_next): each
 * one's arguments, then their tasks as the parts of one job. */
static void oi__sy_render_job(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                              const oi__sy_step *steps, int count, int depth, const oi__sy_scope *scope) {
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "{\n");
    for (int j = 0; j < count; j++) {
        const oi__sy_kernel *k = &s->kernels[steps[j].kernel];
        oi__sy_param *params = oi__sy_kernel_params(s, k);
        oi__sy_render_q8_round(b, s, lang, k, depth + 1, scope);
        oi__sy_indent(b, depth + 1);
        oi__buf_printf(b, "%s_k%d_args args%d = {%s%s", prefix, k->id, j, k->packed ? (arrlen(params) ? "ctx->mk, " : "ctx->mk") : "",
                       oi__sy_matmul_tiles_at_run(s, k) ? "ctx->pool.n_threads, " : "");
        oi__sy_render_q8_args(b, k, arrlen(params) > 0);
        oi__sy_render_args(b, s, lang, k, params, scope);
        oi__buf_puts(b, "};\n");
        arrfree(params);
    }
    oi__sy_indent(b, depth + 1);
    oi__buf_puts(b, "const oi_rt_part parts[] = {");
    for (int j = 0; j < count; j++) {
        const oi__sy_kernel *k = &s->kernels[steps[j].kernel];
        oi__buf_printf(b, "%s{%s_k%d_task, &args%d, ", j ? ", " : "", prefix, k->id, j);
        oi__sy_task_count(b, s, k);
        oi__buf_puts(b, "}");
    }
    oi__buf_puts(b, "};\n");
    const oi__sy_kernel *first = &s->kernels[steps[0].kernel], *last = &s->kernels[steps[count - 1].kernel];
    oi__sy_indent(b, depth + 1);
    oi__buf_printf(b, "oi_rt_run_parts(&ctx->pool, parts, %d); /* %s:%d-%d: independent kernels, one job */\n", count,
                   oi__sy_basename(first->nodes[0]->ir->src.file), first->nodes[0]->ir->src.line,
                   last->nodes[arrlen(last->nodes) - 1]->ir->src.line);
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "}\n");
    for (int j = 0; j < count; j++) {
        const oi__sy_kernel *k = &s->kernels[steps[j].kernel];
        oi__sy_param *params = oi__sy_kernel_params(s, k);
        oi__sy_render_after(b, s, lang, prefix, k, params, depth, scope);
        arrfree(params);
    }
}

static void oi__sy_line(oi__buf *b, int depth, const char *fmt, ...) OI__PRINTF(3, 4);

/* A gather's indices checked before it runs: one out of range fails the
 * step with the CPU kernel's message (kernels/shape.c). */
static void oi__sy_render_gather_guard(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                       const char *prefix, const oi__sy_kernel *k, int depth,
                                       const oi__sy_scope *scope) {
    const oi__pnode *pn = k->nodes[0];
    oi__sy_gather_dims g = oi__sy_gather_shape(s, pn);
    const oi__pindex *index = pn->input_indices && pn->input_indices[1] ? &pn->input_indices[1][0] : NULL;
    oi__buf ptr;
    memset(&ptr, 0, sizeof ptr);
    oi__sy_render_ptr(&ptr, s, lang, pn->inputs[1], index, scope);
    const char *indices = ptr.data ? ptr.data : "NULL";
    oi__sy_line(b, depth, "{");
    oi__sy_line(b, depth + 1, "const int64_t oi_bad = %s_k%d_check(%s);", prefix, k->id, indices);
    oi__sy_line(b, depth + 1, "if (oi_bad >= 0)");
    oi__sy_line(b, depth + 2, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: gather: index %%lld (element %%lld of the "
                "indices) is out of range for axis %d of size %lld\", (long long)(%s)[oi_bad], (long long)oi_bad);",
                prefix, prefix, oi__sy_basename(pn->ir->src.file), pn->ir->src.line, g.axis, (long long)g.dim, indices);
    oi__sy_line(b, depth, "}");
    oi__buf_free(&ptr);
}

static void oi__sy_render_call(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                               const oi__sy_step *st, int depth, const oi__sy_scope *scope) {
    const oi__sy_kernel *k = &s->kernels[st->kernel];
    oi__sy_param *params = oi__sy_kernel_params(s, k);
    int driver = oi__sy_kernel_driver(s, k);
    if (driver >= 0) {
        oi__sy_render_lengths(b, s, prefix, k, depth);
        depth++;
    }
    if (k->kind == OI__SY_K_GATHER)
        oi__sy_render_gather_guard(b, s, lang, prefix, k, depth, scope);
    oi__sy_render_q8_round(b, s, lang, k, depth, scope);
    oi__sy_indent(b, depth);
    if (k->tasks > 1) /* its parts on the pool: the arguments in one struct */
        oi__buf_printf(b, "{\n%*s%s_k%d_args oi_args = {%s%s", 4 * (depth + 1), "", prefix, k->id,
                       k->packed ? (arrlen(params) ? "ctx->mk, " : "ctx->mk") : "",
                       oi__sy_matmul_tiles_at_run(s, k) ? "ctx->pool.n_threads, " : "");
    else
        oi__buf_printf(b, "%s_k%d(%s", prefix, k->id, driver >= 0 ? (arrlen(params) ? "n0, " : "n0") : "");
    oi__sy_render_q8_args(b, k, arrlen(params) > 0);
    oi__sy_render_args(b, s, lang, k, params, scope);
    if (k->tasks > 1) {
        oi__buf_puts(b, driver >= 0 ? ", n0};\n" : "};\n");
        oi__sy_indent(b, depth + 1);
        oi__buf_printf(b, "oi_rt_run(&ctx->pool, %s_k%d_task, &oi_args, ", prefix, k->id);
        oi__sy_task_count(b, s, k);
        oi__buf_puts(b, ");");
    } else {
        oi__buf_puts(b, ");");
    }
    oi__buf_printf(b, " /* %s:%d", oi__sy_basename(k->nodes[0]->ir->src.file), k->nodes[0]->ir->src.line);
    if (arrlen(k->nodes) > 1)
        oi__buf_printf(b, "-%d", k->nodes[arrlen(k->nodes) - 1]->ir->src.line);
    oi__buf_puts(b, " */\n");
    if (k->tasks > 1) {
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "}\n");
    }
    oi__sy_render_after(b, s, lang, prefix, k, params, depth, scope);
    if (driver >= 0) {
        const oi__pnode *pn = k->nodes[0];
        if (s->buffers[pn->out].dyn0) {
            oi__sy_indent(b, depth);
            oi__buf_printf(b, "ctx->len_%s = n0;\n", oi__sy_slot_of(s, pn->out)->name);
        }
        oi__sy_indent(b, depth - 1);
        oi__buf_puts(b, "}\n");
    }
    arrfree(params);
}

static void oi__sy_render_copy(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, int dst, int src,
                               const oi__sy_scope *scope) {
    oi__buf_puts(b, "memcpy(");
    oi__sy_render_ptr(b, s, lang, dst, NULL, scope);
    oi__buf_puts(b, ", ");
    oi__sy_render_ptr(b, s, lang, src, NULL, scope);
    oi__buf_printf(b, ", %llu);", (unsigned long long)s->buffers[dst].bytes);
}

/* ---- persistent tables: preallocated at their bounds, sizes at run time ---- */
static void oi__sy_line(oi__buf *b, int depth, const char *fmt, ...) OI__PRINTF(3, 4);
static void oi__sy_line(oi__buf *b, int depth, const char *fmt, ...) {
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    oi__sy_indent(b, depth);
    oi__buf_puts(b, text);
    oi__buf_puts(b, "\n");
}

/* Checks index `pos` of the table in variable `var` (the simulator's
 * messages) and grows the size to `reach`. */
static void oi__sy_table_check(oi__buf *b, const oi__sy_schedule *s, const char *prefix, const oi__pnode *pn, int pos,
                               const char *var, const char *reach, int depth) {
    const oi__slot *sl = oi__sy_slot_of(s, pn->var);
    const char *index = sl->decl->table_indices[pos];
    const char *where = oi__sy_basename(pn->ir->src.file);
    int line = pn->ir->src.line;
    oi__sy_line(b, depth, "if (%s < 0)", var);
    oi__sy_line(b, depth + 1, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: %s: index %s = %%lld is negative\", (long long)%s);",
                prefix, prefix, where, line, sl->name, index, var);
    oi__sy_line(b, depth, "if (%s >= %lld)", var, (long long)s->buffers[pn->var].bound[pos]);
    oi__sy_line(b, depth + 1, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: cache table %s index %s = %%lld exceeds %s size %lld\", "
                "(long long)%s);", prefix, prefix, where, line, sl->name, index, sl->fixed[pos] >= 0 ? "fixed" : "synthesized",
                (long long)s->buffers[pn->var].bound[pos], var);
    oi__sy_line(b, depth, "if (%s > ctx->%s_size[%d])", reach, sl->name, pos);
    oi__sy_line(b, depth + 1, "ctx->%s_size[%d] = %s;", sl->name, pos, reach);
}

/* "i0 * B1 + i1": the number of the entry the indices name */
static void oi__sy_table_entry_number(oi__buf *b, const oi__sy_schedule *s, int slot, const char *const *index) {
    const oi__slot *sl = oi__sy_slot_of(s, slot);
    const oi__sy_buffer *buf = &s->buffers[slot];
    bool any = false;
    for (int k = 0; k < sl->n_indices; k++) {
        if (sl->n_auto > 0 && k == sl->auto_pos[0])
            continue; /* its rows are the entry's */
        int64_t stride = 1;
        for (int j = k + 1; j < sl->n_indices; j++)
            stride *= buf->bound[j];
        oi__buf_printf(b, "%s%s", any ? " + " : "", index[k]);
        if (stride != 1)
            oi__buf_printf(b, " * %lld", (long long)stride);
        any = true;
    }
    if (!any)
        oi__buf_puts(b, "0");
}

/* "(float *)(ctx->state + OFF) + (i0 * B1 + i1) * ENTRY" */
static void oi__sy_table_entry(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, int slot,
                               const char *const *index) {
    const oi__slot *sl = oi__sy_slot_of(s, slot);
    const oi__sy_buffer *buf = &s->buffers[slot];
    oi__buf_printf(b, "(%s *)(ctx->state + %llu) + (", lang->type_of(sl->dtype), (unsigned long long)buf->offset);
    oi__sy_table_entry_number(b, s, slot, index);
    oi__buf_printf(b, ") * %lld", (long long)oi__sy_entry_numel(buf, sl));
}

/* An @auto_dim variable's index `a`: checked as the simulator does (its
 * messages), the rows to grow the entry by. */
static void oi__sy_auto_index(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                              const oi__pnode *pn, const oi__expr *e, const oi__sy_scope *scope, int depth) {
    const oi__slot *sl = oi__sy_slot_of(s, pn->var);
    const char *where = oi__sy_basename(pn->ir->src.file);
    int line = pn->ir->src.line;
    long long most = (long long)s->buffers[pn->var].auto_max;
    oi__buf text;
    memset(&text, 0, sizeof text);
    oi__sy_render_expr(&text, s, lang, e, scope);
    oi__sy_line(b, depth, "const int64_t a = %s; /* @auto_dim %s: rows grown */", text.data ? text.data : "0",
                sl->decl->table_indices[sl->auto_pos[0]]);
    oi__buf_free(&text);
    oi__sy_line(b, depth, "if (a < 0)");
    oi__sy_line(b, depth + 1, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: %s: auto_dim index %%lld is negative\", (long long)a);",
                prefix, prefix, where, line, sl->name);
    oi__sy_line(b, depth, "if (a > %lld)", most);
    oi__sy_line(b, depth + 1, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: auto_dim %s exceeds %s max %lld for %s (asked for "
                "%%lld)\", (long long)a);", prefix, prefix, where, line, sl->name,
                sl->fixed[sl->auto_pos[0]] >= 0 ? "fixed" : "synthesized", most, sl->decl->table_indices[sl->auto_pos[0]]);
}

/* The rest of an @auto_dim variable's access: the entry grows to `a` rows
 * past its declared ones (never shrinks; new rows hold @init or zeros
 * since open or the last reset), then is read, written or reset. */
static void oi__sy_render_auto(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                               const oi__pnode *pn, const char *const *index, const oi__sy_scope *scope, int depth) {
    const oi__slot *sl = oi__sy_slot_of(s, pn->var);
    bool grows = sl->auto_pos[0] < (int)arrlen(pn->access);
    int64_t inner = oi__sy_row_numel(sl);
    size_t bytes = (size_t)oi_dtype_nbytes(sl->dtype, 1);
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "const int64_t e = ");
    oi__sy_table_entry_number(b, s, pn->var, index);
    oi__buf_printf(b, "; /* the entry */\n");
    oi__buf entry;
    memset(&entry, 0, sizeof entry);
    oi__buf_printf(&entry, "(%s *)(ctx->state + %llu) + e * %lld", lang->type_of(sl->dtype),
                   (unsigned long long)s->buffers[pn->var].offset, (long long)oi__sy_entry_numel(&s->buffers[pn->var], sl));
    if (pn->ir->kind == OI__NODE_CACHE_RESET) {
        oi__sy_line(b, depth, "%s_init_%s_entry(%s);", prefix, sl->name, entry.data);
        oi__sy_line(b, depth, "ctx->%s_grown[e] = 0;", sl->name);
        oi__buf_free(&entry);
        return;
    }
    if (grows) {
        oi__sy_line(b, depth, "if (a > ctx->%s_grown[e])", sl->name);
        oi__sy_line(b, depth + 1, "ctx->%s_grown[e] = a;", sl->name);
    }
    oi__sy_line(b, depth, "const int64_t rows = %lld + ctx->%s_grown[e];", (long long)sl->shape[0], sl->name);
    if (pn->ir->kind == OI__NODE_CACHE_WRITE) {
        const oi__slot *v = oi__sy_slot_of(s, pn->out);
        char have[64];
        if (s->buffers[pn->out].dyn0)
            snprintf(have, sizeof have, "ctx->len_%s", v->name);
        else
            snprintf(have, sizeof have, "%lld", (long long)v->shape[0]);
        char dims[160] = "";
        for (int d = 1; d < sl->ndim; d++)
            snprintf(dims + strlen(dims), sizeof dims - strlen(dims), ", %lld", (long long)sl->shape[d]);
        oi__sy_line(b, depth, "if (%s != rows)", have);
        oi__sy_line(b, depth + 1, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: cache.write: %s holds %s[%%lld%s] here, the value "
                    "is %s[%%lld%s]\", (long long)rows, (long long)%s);", prefix, prefix,
                    oi__sy_basename(pn->ir->src.file), pn->ir->src.line, sl->name, oi_dtype_name(sl->dtype), dims,
                    oi_dtype_name(v->dtype), dims, have);
        oi__sy_indent(b, depth);
        oi__buf_printf(b, "memcpy(%s, ", entry.data);
        oi__sy_render_ptr(b, s, lang, pn->out, NULL, scope);
        oi__buf_printf(b, ", (size_t)rows * %lld);\n", (long long)(inner * (int64_t)bytes));
    } else {
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "memcpy(");
        oi__sy_render_ptr(b, s, lang, pn->out, NULL, scope);
        oi__buf_printf(b, ", %s, (size_t)rows * %lld);\n", entry.data, (long long)(inner * (int64_t)bytes));
        oi__sy_line(b, depth, "ctx->len_%s = rows;", oi__sy_slot_of(s, pn->out)->name);
    }
    oi__buf_free(&entry);
}

static void oi__sy_render_table(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                                const oi__sy_step *st, const oi__sy_scope *scope, int depth) {
    const oi__pnode *pn = st->node;
    const oi__slot *sl = oi__sy_slot_of(s, pn->var);
    const oi__sy_buffer *buf = &s->buffers[pn->var];
    int n_access = (int)arrlen(pn->access), kept = -1;
    uint64_t entry_bytes = buf->bytes;
    static const char *const names[OI_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
    oi__buf_puts(b, "{ /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n");
    if (pn->ir->kind == OI__NODE_CACHE_RESET && n_access == 0) {
        oi__sy_line(b, depth + 1, "%s_init_%s(ctx); /* every entry, and the sizes back to 0 */", prefix, sl->name);
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "}\n");
        return;
    }
    for (int pos = 0; pos < sl->n_indices; pos++) {
        const oi__pindex *ix = pos < n_access ? &pn->access[pos] : NULL;
        if (sl->n_auto > 0 && pos == sl->auto_pos[0]) {
            if (ix)
                oi__sy_auto_index(b, s, lang, prefix, pn, &ix->single, scope, depth + 1);
            continue;
        }
        oi__buf text;
        memset(&text, 0, sizeof text);
        if (ix && !ix->is_slice) {
            oi__sy_render_expr(&text, s, lang, &ix->single, scope);
            oi__sy_line(b, depth + 1, "const int64_t %s = %s;", names[pos], text.data ? text.data : "0");
            char reach[32];
            snprintf(reach, sizeof reach, "%s + 1", names[pos]);
            oi__sy_table_check(b, s, prefix, pn, pos, names[pos], reach, depth + 1);
        } else { /* the kept dim: lo..hi, a negative end counting from the size */
            kept = pos;
            oi__sy_line(b, depth + 1, "int64_t lo = 0, hi = ctx->%s_size[%d];", sl->name, pos);
            if (ix && ix->has_start) {
                oi__sy_render_expr(&text, s, lang, &ix->start, scope);
                oi__sy_line(b, depth + 1, "lo = %s;", text.data ? text.data : "0");
                text.len = 0;
                if (text.data)
                    text.data[0] = '\0';
            }
            if (ix && ix->has_end) {
                oi__sy_render_expr(&text, s, lang, &ix->end, scope);
                oi__sy_line(b, depth + 1, "hi = %s;", text.data ? text.data : "0");
                oi__sy_line(b, depth + 1, "if (hi < 0)");
                oi__sy_line(b, depth + 2, "hi += ctx->%s_size[%d];", sl->name, pos);
            }
            oi__sy_line(b, depth + 1, "if (lo < 0 || hi < lo)");
            oi__sy_line(b, depth + 2, "return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: %s: slice %%lld..%%lld of index %s is empty "
                        "or reversed (size %%lld)\", (long long)lo, (long long)hi, (long long)ctx->%s_size[%d]);",
                        prefix, prefix, oi__sy_basename(pn->ir->src.file), pn->ir->src.line, sl->name,
                        sl->decl->table_indices[pos], sl->name, pos);
            oi__sy_line(b, depth + 1, "const int64_t last = hi > lo ? hi - 1 : 0;");
            oi__sy_table_check(b, s, prefix, pn, pos, "last", "hi", depth + 1);
        }
        oi__buf_free(&text);
    }
    const char *index[OI_MAX_DIMS];
    for (int k = 0; k < sl->n_indices; k++)
        index[k] = k == kept ? "t" : names[k];
    if (sl->n_auto > 0) {
        index[sl->auto_pos[0]] = "0";
        oi__sy_render_auto(b, s, lang, prefix, pn, index, scope, depth + 1);
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "}\n");
        return;
    }
    if (buf->entry_resets && pn->ir->kind != OI__NODE_CACHE_RESET && kept < 0) { /* an entry the simulator keeps */
        oi__sy_indent(b, depth + 1);
        oi__buf_printf(b, "ctx->%s_made[", sl->name);
        oi__sy_table_entry_number(b, s, pn->var, index);
        oi__buf_puts(b, "] = 1;\n");
    }
    oi__sy_indent(b, depth + 1);
    if (pn->ir->kind == OI__NODE_CACHE_WRITE) {
        oi__buf_puts(b, "memcpy(");
        oi__sy_table_entry(b, s, lang, pn->var, index);
        oi__buf_puts(b, ", ");
        oi__sy_render_ptr(b, s, lang, pn->out, NULL, scope);
        oi__buf_printf(b, ", %llu);\n", (unsigned long long)entry_bytes);
    } else if (pn->ir->kind == OI__NODE_CACHE_READ && kept < 0) {
        oi__buf_puts(b, "memcpy(");
        oi__sy_render_ptr(b, s, lang, pn->out, NULL, scope);
        oi__buf_puts(b, ", ");
        oi__sy_table_entry(b, s, lang, pn->var, index);
        oi__buf_printf(b, ", %llu);\n", (unsigned long long)entry_bytes);
    } else if (pn->ir->kind == OI__NODE_CACHE_READ && s->buffers[pn->out].table_view) {
        index[kept] = "lo"; /* the slice's first entry; the others follow it */
        oi__buf_printf(b, "ctx->view_%s = ", oi__sy_slot_of(s, pn->out)->name);
        oi__sy_table_entry(b, s, lang, pn->var, index);
        oi__buf_puts(b, ";\n");
        oi__sy_line(b, depth + 1, "ctx->len_%s = hi - lo;", oi__sy_slot_of(s, pn->out)->name);
    } else if (pn->ir->kind == OI__NODE_CACHE_READ) {
        oi__buf_puts(b, "for (int64_t t = lo; t < hi; t++)\n");
        oi__sy_indent(b, depth + 2);
        oi__buf_puts(b, "memcpy(");
        oi__sy_render_ptr(b, s, lang, pn->out, NULL, scope);
        oi__buf_printf(b, " + (t - lo) * %lld, ", (long long)oi__shape_numel(sl->ndim, sl->shape));
        oi__sy_table_entry(b, s, lang, pn->var, index);
        oi__buf_printf(b, ", %llu);\n", (unsigned long long)entry_bytes);
        oi__sy_line(b, depth + 1, "ctx->len_%s = hi - lo;", oi__sy_slot_of(s, pn->out)->name);
    } else { /* reset of one entry: the sizes shrink to the entries left */
        oi__buf_printf(b, "%s_init_%s_entry(", prefix, sl->name);
        oi__sy_table_entry(b, s, lang, pn->var, index);
        oi__buf_puts(b, ");\n");
        oi__sy_indent(b, depth + 1);
        oi__buf_printf(b, "ctx->%s_made[", sl->name);
        oi__sy_table_entry_number(b, s, pn->var, index);
        oi__buf_puts(b, "] = 0;\n");
        oi__sy_line(b, depth + 1, "%s_resize_%s(ctx);", prefix, sl->name);
    }
    if (pn->ir->kind == OI__NODE_CACHE_READ && oi__sy_rounds_slot(s, pn->out)) /* the f32 entry stored in 16 bits */
        oi__sy_render_round_slot(b, s, lang, prefix, pn->out, depth + 1, scope);
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

static void oi__sy_render_cache(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                                const oi__sy_step *st, const oi__sy_scope *scope, int depth) {
    const oi__pnode *pn = st->node;
    const oi__slot *sl = oi__sy_slot_of(s, pn->var);
    if (sl->is_table || sl->n_auto > 0) {
        oi__sy_render_table(b, s, lang, prefix, st, scope, depth);
        return;
    }
    switch (pn->ir->kind) {
    case OI__NODE_CACHE_READ: oi__sy_render_copy(b, s, lang, pn->out, pn->var, scope); break;
    case OI__NODE_CACHE_WRITE: oi__sy_render_copy(b, s, lang, pn->var, pn->out, scope); break;
    case OI__NODE_CACHE_RESET: oi__buf_printf(b, "%s_init_%s(ctx);", prefix, sl->name); break;
    default: {
        int64_t amount = pn->ir->kind == OI__NODE_CACHE_DECREMENT ? -pn->ir->amount : pn->ir->amount;
        const char *type = lang->type_of(sl->dtype);
        oi__buf_printf(b, "for (%s i = 0; i < %lld; i++) {\n", lang->index_type,
                       (long long)oi__shape_numel(sl->ndim, sl->shape));
        oi__buf_printf(b, "        %s *v = ", type);
        oi__sy_render_ptr(b, s, lang, pn->var, NULL, scope);
        if (oi__dtype_is_float(sl->dtype))
            oi__buf_printf(b, ";\n        v[i] = (%s)(v[i] + %lld.0);\n    }", type, (long long)amount);
        else /* integers wrap: add in uint64_t, truncate to the width */
            oi__buf_printf(b, ";\n        v[i] = (%s)(uint64_t)((uint64_t)v[i] + (uint64_t)%lldLL);\n    }", type,
                           (long long)amount);
        break;
    }
    }
}

static void oi__sy_render_step(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                               const oi__sy_step *st, int depth, oi__sy_scope *scope) {
    const oi__pnode *pn = st->node;
    switch (st->kind) {
    case OI__SY_S_KERNEL: oi__sy_render_call(b, s, lang, prefix, st, depth, scope); return;
    case OI__SY_S_LOOP: {
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "/* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, " */\n");
        oi__sy_indent(b, depth);
        const char *var = pn->ir->loop_index;
        oi__buf_printf(b, "for (int64_t %s = ", var);
        oi__sy_render_expr(b, s, lang, &pn->ir->loop_start, scope);
        oi__buf_printf(b, "; %s < ", var);
        oi__sy_render_expr(b, s, lang, &pn->ir->loop_end, scope);
        oi__buf_printf(b, "; %s++) {\n", var);
        (void)arrput(scope->loop_vars, var);
        oi__sy_render_list(b, s, lang, prefix, st->body, depth + 1, scope);
        arrpop(scope->loop_vars);
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "}\n");
        return;
    }
    case OI__SY_S_BRANCH:
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "/* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, " */\n");
        oi__sy_indent(b, depth);
        if (pn->var >= 0) {
            oi__buf_puts(b, "if (*");
            oi__sy_render_ptr(b, s, lang, pn->var, NULL, scope);
            oi__buf_printf(b, " != 0) { /* block %s */\n", s->plan->blocks[st->block_then].ir->name);
        } else {
            oi__buf_printf(b, "{ /* block %s */\n", s->plan->blocks[st->block_then].ir->name);
        }
        oi__sy_render_list(b, s, lang, prefix, st->then_steps, depth + 1, scope);
        if (pn->var >= 0) {
            oi__sy_indent(b, depth);
            oi__buf_printf(b, "} else { /* block %s */\n", s->plan->blocks[st->block_else].ir->name);
            oi__sy_render_list(b, s, lang, prefix, st->else_steps, depth + 1, scope);
        }
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "}\n");
        return;
    case OI__SY_S_TRANSFER:
        oi__sy_indent(b, depth);
        oi__sy_render_copy(b, s, lang, pn->out, pn->var, scope);
        break;
    case OI__SY_S_CACHE:
        oi__sy_indent(b, depth);
        oi__sy_render_cache(b, s, lang, prefix, st, scope, depth);
        if (oi__sy_slot_of(s, pn->var)->is_table || oi__sy_slot_of(s, pn->var)->n_auto > 0)
            return; /* its block names the statement */
        break;
    case OI__SY_S_FENCE:
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "/* nothing is moved across this statement */");
        break;
    case OI__SY_S_YIELD:
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "/* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, ": the consumers run here, one after another */\n");
        for (int c = 0; c < (int)arrlen(st->consumers); c++)
            oi__sy_render_consumer(b, s, lang, prefix, &st->consumers[c], depth, scope);
        return;
    case OI__SY_S_AWAIT:
        for (int k = 0; k + 1 < (int)arrlen(st->remap); k += 2) {
            const oi__sy_buffer *priv = &s->buffers[st->remap[k]];
            oi__sy_indent(b, depth);
            oi__buf_printf(b, "memcpy(");
            oi__sy_render_ptr(b, s, lang, st->remap[k + 1], NULL, scope);
            oi__buf_printf(b, ", (const void *)(ctx->arena + %llu), %llu); /* %s from block %s */\n",
                           (unsigned long long)priv->offset, (unsigned long long)priv->bytes,
                           oi__sy_slot_of(s, st->remap[k + 1])->name, s->plan->blocks[priv->consumer].ir->name);
        }
        oi__sy_indent(b, depth);
        oi__buf_puts(b, "/* the consumers' yielded values are back */");
        break;
    case OI__SY_S_CONSUMER: return;
    }
    oi__buf_puts(b, " /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n");
    if (st->kind == OI__SY_S_CACHE && pn->ir->kind == OI__NODE_CACHE_READ && oi__sy_rounds_slot(s, pn->out))
        oi__sy_render_round_slot(b, s, lang, prefix, pn->out, depth, scope);
}

/* A consumer block, run at the entry's yield on its own copies of what it
 * writes: it sees the values of the yield, and nobody sees its writes but
 * the entry's await (for what it yields). */
static void oi__sy_render_consumer(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang,
                                   const char *prefix, const oi__sy_step *cons, int depth, oi__sy_scope *scope) {
    oi__sy_indent(b, depth);
    oi__buf_printf(b, "{ /* block %s (a consumer), on its own copies of", s->plan->blocks[cons->block].ir->name);
    for (int k = 0; k + 1 < (int)arrlen(cons->remap); k += 2)
        oi__buf_printf(b, " %s", oi__sy_slot_of(s, cons->remap[k])->name);
    oi__buf_puts(b, " */\n");
    for (int k = 0; k + 1 < (int)arrlen(cons->remap); k += 2) {
        oi__sy_indent(b, depth + 1);
        oi__buf_printf(b, "memcpy((void *)(ctx->arena + %llu), ", (unsigned long long)s->buffers[cons->remap[k + 1]].offset);
        oi__sy_render_ptr(b, s, lang, cons->remap[k], NULL, scope);
        oi__buf_printf(b, ", %llu);\n", (unsigned long long)s->buffers[cons->remap[k + 1]].bytes);
    }
    const int *outer = scope->remap;
    scope->remap = cons->remap;
    oi__sy_render_list(b, s, lang, prefix, cons->body, depth + 1, scope);
    scope->remap = outer;
    oi__sy_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

static void oi__sy_render_list(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix,
                               const oi__sy_step *steps, int depth, oi__sy_scope *scope) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        int count = 1;
        while (steps[i + count - 1].joins_next)
            count++;
        if (count > 1)
            oi__sy_render_job(b, s, lang, prefix, &steps[i], count, depth, scope);
        else
            oi__sy_render_step(b, s, lang, prefix, &steps[i], depth, scope);
        i += count - 1;
    }
}

void oi__sy_render_steps(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix) {
    oi__sy_scope scope = {NULL, NULL};
    oi__sy_render_list(b, s, lang, prefix, s->steps, 1, &scope);
    arrfree(scope.loop_vars);
}
