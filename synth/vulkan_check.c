/* vulkan_check.c - what the Vulkan target refuses, at synthesis and naming
 * the statement (oi__sy_vulkan_check): dtypes a kernel kind cannot move,
 * reductions it cannot run, bools where they cannot be stored, cache
 * statements whose indices the device cannot evaluate, branches it cannot
 * guard. Kept apart so that what the target takes is read in one place;
 * the emitter (vulkan_plan.c, vulkan_kernels.c, emit_vulkan.c) may then
 * assume all of it. */
#include "synth_internal.h"

/* ------------------------------------------------------------------ */
/* What the first version refuses (at synthesis, naming the statement)  */
/* ------------------------------------------------------------------ */
static oi_status oi__vk_refuse(const oi__pnode *pn, const char *why) {
    return oi__fail_at(OI_ERROR_UNSUPPORTED, &pn->ir->src, "the Vulkan target cannot synthesize this yet: %s", why);
}

/* The `kind` of a branch's condition in oi__vk_check_slot (no kernel's). */
#define OI__VK_CONDITION (-2)

/* Which dtypes a kernel of `kind` moves or computes: f32 everywhere; i32 and
 * i64 (stored as two words, the low one first) where a kernel copies,
 * picks or indexes (reshape, gather, rope's positions, argmax, cache
 * copies: kind -1), and in elementwise arithmetic (oi__vk_int_op; i64 where
 * the device has shaderInt64, oi__vk_check_int_node); bool (a byte) as
 * is_finite's and the comparisons' result and a branch's condition; u8 as
 * ggml blocks: matmul_q4's and dequantize's, and rows of them gathered
 * (copied as 32-bit words). */
static bool oi__vk_dtype_ok(oi_dtype t, int kind) {
    if (t == OI_DTYPE_F32)
        return true;
    if ((t == OI_DTYPE_I32 || t == OI_DTYPE_I64) && kind == OI__SY_K_ELEMENTWISE) /* the ops oi__vk_int_op takes */
        return true;
    if (t == OI_DTYPE_I32 || t == OI_DTYPE_I64)
        return kind == -1 || kind == OI__SY_K_COPY || kind == OI__SY_K_GATHER || kind == OI__SY_K_ROPE ||
               kind == OI__SY_K_ARGMAX || kind == OI__SY_K_TOPK || (t == OI_DTYPE_I32 && kind == OI__SY_K_MATMUL_ANY);
    if (t == OI_DTYPE_BOOL) /* a byte: is_finite's result, a branch's condition */
        return kind == OI__SY_K_ALL_FINITE || kind == OI__VK_CONDITION || kind == OI__SY_K_ELEMENTWISE ||
               kind == OI__SY_K_COPY || kind == OI__SY_K_ATTENTION;
    return t == OI_DTYPE_U8 && (kind == OI__SY_K_QMATMUL || kind == OI__SY_K_DEQUANT || kind == OI__SY_K_GATHER);
}

static oi_status oi__vk_check_slot(const oi__sy_schedule *s, const oi__pnode *pn, int slot, int kind) {
    const oi__slot *sl = &s->plan->slots[slot];
    const oi__sy_buffer *buf = &s->buffers[slot];
    char why[320];
    if (!oi__vk_dtype_ok(sl->dtype, kind)) {
        snprintf(why, sizeof why, "%s is %s (the GLSL kernels compute on f32, and on i32 and i64 in elementwise arithmetic; "
                 "i32/i64 are copied, gathered, positions and indices; u8 are matmul_q4's and dequantize's blocks, "
                 "gathered as words; bool is "
                 "is_finite's result and a branch's condition)", sl->name, oi_dtype_name(sl->dtype));
        return oi__vk_refuse(pn, why);
    }
    if (oi__shape_numel(sl->ndim, sl->shape) == 0) { /* a copy of no bytes is no valid command */
        snprintf(why, sizeof why, "%s has no elements", sl->name);
        return oi__vk_refuse(pn, why);
    }
    /* the decoder's attention reads its keys and values in the table (views) */
    bool in_place = kind == OI__SY_K_ATTN_KV && (buf->table_view || !oi__sy_slot_stored(s, slot));
    if ((buf->dyn0 && !in_place) || buf->home == OI__SY_TABLE) {
        snprintf(why, sizeof why, "%s has a shape known at run time only, or is a table", sl->name);
        return oi__vk_refuse(pn, why);
    }
    /* the functions of oi_rope.glsl and oi_quant_blocks.glsl, in the kernels that include them */
    static const char *const rope_fns[] = {"split", "two_prod", "ff_mul", "ff_pow", "cos_sin", "R", "N", "HALF", "PER"};
    static const char *const quant_fns[] = {"w_buf", "w_byte", "w_half", "w_word", "block_bytes", "unpack_block",
                                            "block_f32", "block_q8", "x_at", "M", "N", "K", "ROW_BYTES", "COLS", "SPLIT"};
    /* (GLSL words and the other functions: renamed, as render.c's oi__sy_reserved says) */
    bool clash = false;
    for (int i = 0; kind == OI__SY_K_ROPE && i < (int)(sizeof rope_fns / sizeof rope_fns[0]); i++)
        clash |= strcmp(sl->name, rope_fns[i]) == 0;
    for (int i = 0; kind == OI__SY_K_QMATMUL && i < (int)(sizeof quant_fns / sizeof quant_fns[0]); i++)
        clash |= strcmp(sl->name, quant_fns[i]) == 0;
    if (clash) {
        snprintf(why, sizeof why, "the variable name %s is a GLSL word or a function the kernels call", sl->name);
        return oi__vk_refuse(pn, why);
    }
    for (int t = 0; t < (int)arrlen(buf->tensors); t++)
        if (buf->tensors[t]->data_offset % 4) {
            snprintf(why, sizeof why, "%s's model data is not 4-byte aligned in the file", sl->name);
            return oi__vk_refuse(pn, why);
        }
    return OI_OK;
}

/* The elementwise ops that compute on i32 in GLSL's int as the C target does
 * in int64_t wrapped to 32 bits, and on i64 in GLSL's int64_t as it does in
 * int64_t: + - * and negation wrap alike, division through scalar.h's
 * OI_S_div_int & co. (no trap, the mask for 0, INT_MIN / -1 wrapping);
 * `where` picks between such values by a bool. */
static bool oi__vk_int_op(oi_op op) {
    static const oi_op ops[] = {OI_OP_add, OI_OP_sub, OI_OP_mul, OI_OP_div, OI_OP_floor_div, OI_OP_rem, OI_OP_neg,
                                OI_OP_min, OI_OP_max, OI_OP_eq, OI_OP_ne, OI_OP_lt, OI_OP_le, OI_OP_gt,
                                OI_OP_ge, OI_OP_where};
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (ops[i] == op)
            return true;
    return false;
}

/* Whether an elementwise statement reads or writes a value of dtype t. */
static bool oi__vk_node_has(const oi__sy_schedule *s, const oi__pnode *pn, oi_dtype t) {
    bool has = s->plan->slots[pn->out].dtype == t;
    for (int i = 0; i < (int)arrlen(pn->inputs); i++)
        has |= s->plan->slots[pn->inputs[i]].dtype == t;
    return has;
}

/* Whether kernel k computes on i64 (GL_EXT_shader_explicit_arithmetic_types_int64
 * in its GLSL, shaderInt64 on the device): an elementwise one with an i64
 * value. The others only move i64 words. */
static bool oi__vk_int64_kernel(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    for (int n = 0; k->kind == OI__SY_K_ELEMENTWISE && n < (int)arrlen(k->nodes); n++)
        if (oi__vk_node_has(s, k->nodes[n], OI_DTYPE_I64))
            return true;
    return false;
}

static bool oi__vk_f32_or_int(const oi__sy_schedule *s, int slot) {
    oi_dtype t = s->plan->slots[slot].dtype;
    return t == OI_DTYPE_F32 || t == OI_DTYPE_I32 || t == OI_DTYPE_I64;
}

/* An elementwise statement reading or writing an i32 or i64: one of
 * oi__vk_int_op's, and i64 only where the device JSON says features.int64. */
static oi_status oi__vk_check_int_node(const oi__sy_schedule *s, const oi__sy_gpu *g, const oi__pnode *pn) {
    bool wide = oi__vk_node_has(s, pn, OI_DTYPE_I64);
    if (!wide && !oi__vk_node_has(s, pn, OI_DTYPE_I32))
        return OI_OK;
    char why[320];
    bool number_cast = pn->ir->op == OI_OP_cast && oi__vk_f32_or_int(s, pn->inputs[0]) && oi__vk_f32_or_int(s, pn->out);
    if (!oi__vk_int_op(pn->ir->op) && !number_cast) {
        snprintf(why, sizeof why, "%s on %s (the GLSL kernels take + - * div floor_div rem neg min max and the "
                 "comparisons on i32 and i64, where between them, and casts between f32, i32 and i64)",
                 oi__sy_op_name(pn->ir->op), wide ? "i64" : "i32");
        return oi__vk_refuse(pn, why);
    }
    if (wide && !g->int64) {
        snprintf(why, sizeof why, "%s on i64 needs 64-bit integers in the kernels (shaderInt64), which the device "
                 "JSON's features.int64 does not promise (no JSON, --target vulkan, promises no optional feature); "
                 "synthesize for a JSON with \"int64\": true", oi__sy_op_name(pn->ir->op));
        return oi__vk_refuse(pn, why);
    }
    return OI_OK;
}

static oi_status oi__vk_check_kernel(const oi__sy_schedule *s, const oi__sy_gpu *g, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    for (int n = 0; n < (int)arrlen(k->nodes); n++) {
        const oi__pnode *m = k->nodes[n];
        for (int i = 0; i < (int)arrlen(m->inputs); i++) {
            oi_status st = oi__vk_check_slot(s, m, m->inputs[i], (int)k->kind);
            if (st != OI_OK)
                return st;
        }
        oi_status st = oi__vk_check_slot(s, m, m->out, (int)k->kind);
        if (st != OI_OK)
            return st;
    }
    for (int n = 0; k->kind == OI__SY_K_ELEMENTWISE && n < (int)arrlen(k->nodes); n++) {
        oi_status st = oi__vk_check_int_node(s, g, k->nodes[n]);
        if (st != OI_OK)
            return st;
    }
    for (int n = 0; n < (int)arrlen(k->nodes); n++) { /* elementwise ops of the C target only */
        oi_op op = k->nodes[n]->ir->op;
        if (!oi__sy_lang_c.ew_fn(op, false) || oi__sy_lang_glsl.ew_fn(op, false))
            continue;
        char why[120];
        snprintf(why, sizeof why, "%s", oi__sy_op_name(op));
        return oi__vk_refuse(k->nodes[n], why);
    }
    switch (k->kind) {
    case OI__SY_K_ALL_FINITE: break;
    case OI__SY_K_GATHER: {
        oi_dtype it = s->plan->slots[pn->inputs[1]].dtype;
        if (it != OI_DTYPE_I32 && it != OI_DTYPE_I64)
            return oi__vk_refuse(pn, "gather with indices other than i32 or i64");
        if (s->plan->slots[pn->inputs[0]].dtype == OI_DTYPE_U8 && oi__sy_gather_shape(s, pn).inner % 4)
            return oi__vk_refuse(pn, "a gather of u8 slabs that are not whole 32-bit words (it copies words)");
        break;
    }
    case OI__SY_K_DEQUANT: break; /* an invocation per f32 element (oi__vk_dequant) */
    case OI__SY_K_LAYOUT: case OI__SY_K_CONV: case OI__SY_K_POOL: break;
    case OI__SY_K_ROPE: break;
    case OI__SY_K_ARGMAX: break; /* a workgroup per lane of the axis (oi__vk_argmax) */
    case OI__SY_K_QMATMUL: {
        const oi__slot *x = &s->shaped[pn->inputs[0]];
        if (x->shape[x->ndim - 1] % 32)
            return oi__vk_refuse(pn, "matmul_q4 whose K is not a multiple of 32");
        break;
    }
    case OI__SY_K_ATTN_KV: {
        const oi__sy_kernel *kk = k;
        for (int o = 1; o < 3; o++)
            if (s->buffers[kk->view_slot[o]].dyn0 && !s->buffers[kk->view_slot[o]].table_view)
                return oi__vk_refuse(pn, "attention over keys or values known at run time that are not a table slice "
                                         "read in place");
        if (s->shaped[kk->view_slot[1]].dtype != OI_DTYPE_F32)
            return oi__vk_refuse(pn, "attention over keys that are not f32");
        break;
    }
    case OI__SY_K_REDUCE: /* over any axes (oi__vk_reduce and its strided and max/min forms; prod_axis strided) */
        break;
    case OI__SY_K_SOFTMAX: break; /* softmax or log_softmax, a workgroup per lane (oi__vk_softmax) */
    case OI__SY_K_NORM: break; /* layer_norm, rms_norm, group_norm: a workgroup per row; batch_norm's rows */
    case OI__SY_K_ELEMENTWISE: break;
    case OI__SY_K_MATMUL: break; /* writing one of its inputs: through a scratch region (oi__vk_in_place) */
    case OI__SY_K_CONV_T: break; /* an invocation per output element (oi__vk_conv_t) */
    case OI__SY_K_TOPK: /* an invocation per lane keeps a heap of k (oi__vk_topk) */
        if (s->plan->slots[pn->inputs[0]].dtype != OI_DTYPE_F32)
            return oi__vk_refuse(pn, "top_k of a type other than f32");
        break;
    case OI__SY_K_MATMUL_ANY: /* over batch dims, or gemm's transposes, alpha, beta, C (oi__vk_matmul_any) */
        if (s->plan->slots[pn->out].dtype != OI_DTYPE_F32 && s->plan->slots[pn->out].dtype != OI_DTYPE_I32)
            return oi__vk_refuse(pn, "a matmul of integers other than i32 (f32 and i32 run)");
        if (s->shaped[pn->out].ndim > 2 &&
            oi__shape_numel(s->shaped[pn->out].ndim - 2, s->shaped[pn->out].shape) > OI__VK_MAX_GROUPS)
            return oi__vk_refuse(pn, "a matmul over more than 65535 batches (a workgroup's z each)");
        break;
    case OI__SY_K_COPY: case OI__SY_K_TRANSPOSE: case OI__SY_K_ATTENTION:
        /* other workgroups still read what an in-place write would change */
        for (int i = 0; i < (int)arrlen(pn->inputs); i++)
            if (pn->inputs[i] == pn->out)
                return oi__vk_refuse(pn, "a reshape, transpose or attention writing one of its inputs");
        break;
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Values the step computes on the device: table indices, counters     */
/* ------------------------------------------------------------------ */
/* A table index or slice bound is an int expression the kernels evaluate
 * themselves on every replay: literals, named sizes, the enclosing loops'
 * indices (push constants, fixed when the step is recorded) and integer
 * scalars the device holds (a persistent counter such as `step`). So the
 * one recorded command buffer serves every step and nothing is read back. */

/* The scalar variable an index expression's name reads, or -1 (a literal,
 * a named size or a loop index). */
static int oi__vk_expr_scalar(const oi__sy_schedule *s, const char *name) {
    int64_t v;
    if (oi__plan_size(s->plan, name, &v))
        return -1;
    return oi__plan_slot(s->plan, name);
}

/* Calls fn for every name of e (a compound expression's names one by one). */
static bool oi__vk_expr_names(const oi__expr *e, bool (*fn)(const char *name, void *arg), void *arg) {
    if (!e->ident)
        return true;
    if (!oi__expr_is_compound(e))
        return fn(e->ident, arg);
    size_t pos = 0;
    oi__expr_tok tok;
    while (oi__expr_token(e->ident, &pos, &tok)) {
        char name[128];
        if (tok.kind != OI__EXPR_NAME)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)tok.len, tok.start);
        if (!fn(name, arg))
            return false;
    }
    return true;
}

typedef struct oi__vk_scalars {
    const oi__sy_schedule *s;
    int slots[8], n;
    bool ok;
} oi__vk_scalars;

/* Collects the scalars a name reads; false (and ok false) for one the
 * kernels cannot read: not an i32/i64 scalar in the arena or the state. */
static bool oi__vk_scalar_name(const char *name, void *arg) {
    oi__vk_scalars *sc = (oi__vk_scalars *)arg;
    int slot = oi__vk_expr_scalar(sc->s, name);
    if (slot < 0)
        return true;
    const oi__slot *sl = &sc->s->plan->slots[slot];
    const oi__sy_buffer *buf = &sc->s->buffers[slot];
    if ((sl->dtype != OI_DTYPE_I32 && sl->dtype != OI_DTYPE_I64) || oi__shape_numel(sl->ndim, sl->shape) != 1 ||
        (buf->home != OI__SY_STATE && buf->home != OI__SY_ARENA)) {
        sc->ok = false;
        return false;
    }
    for (int i = 0; i < sc->n; i++)
        if (sc->slots[i] == slot)
            return true;
    if (sc->n < 8)
        sc->slots[sc->n++] = slot;
    return true;
}

/* The scalars the indices of a cache statement read (ok false: one the
 * kernels cannot read). */
static oi__vk_scalars oi__vk_access_scalars(const oi__sy_schedule *s, const oi__pnode *pn) {
    oi__vk_scalars sc = {s, {0}, 0, true};
    for (int i = 0; sc.ok && i < (int)arrlen(pn->access); i++) {
        const oi__pindex *ix = &pn->access[i];
        if (!ix->is_slice)
            oi__vk_expr_names(&ix->single, oi__vk_scalar_name, &sc);
        if (ix->is_slice && ix->has_start)
            oi__vk_expr_names(&ix->start, oi__vk_scalar_name, &sc);
        if (ix->is_slice && ix->has_end)
            oi__vk_expr_names(&ix->end, oi__vk_scalar_name, &sc);
    }
    return sc;
}

/* The step tree: walk(steps, visit, arg) calls visit(st, arg) for each step
 * and then for the steps inside it (a loop's body, a branch's then and else
 * blocks), in the order they are recorded; it stops at the first visit that
 * returns true, and returns whether one did. */
typedef bool (*oi__vk_visit)(const oi__sy_step *st, void *arg);

static bool oi__vk_walk(const oi__sy_step *steps, oi__vk_visit visit, void *arg) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (visit(st, arg) || oi__vk_walk(st->body, visit, arg) || oi__vk_walk(st->then_steps, visit, arg) ||
            oi__vk_walk(st->else_steps, visit, arg))
            return true;
    }
    return false;
}

/* A slot looked for in the step tree: the statement found, or how often
 * the steps name it. */
typedef struct oi__vk_find {
    const oi__sy_schedule *s;
    int slot;
    const oi__pnode *found;
    int count;
} oi__vk_find;

static bool oi__vk_is_view_read(const oi__sy_step *st, void *arg) {
    oi__vk_find *f = (oi__vk_find *)arg;
    if (st->kind == OI__SY_S_CACHE && st->node->ir->kind == OI__NODE_CACHE_READ && st->node->out == f->slot)
        f->found = st->node;
    return f->found != NULL;
}

/* The statement that reads the table slice `slot` views (a CACHE_READ). */
static const oi__pnode *oi__vk_view_read(const oi__sy_step *steps, int slot) {
    oi__vk_find f = {NULL, slot, NULL, 0};
    oi__vk_walk(steps, oi__vk_is_view_read, &f);
    return f.found;
}

/* Whether a cache statement runs as a kernel of its own (a module after the
 * schedule's kernels): a table entry written or read, a counter stepped.
 * A counter's read or write is a copy; a table slice read in place nothing. */
static bool oi__vk_cache_kernel(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *sl = &s->plan->slots[pn->var];
    oi__node_kind kind = pn->ir->kind;
    if (sl->is_table)
        return kind == OI__NODE_CACHE_WRITE || (kind == OI__NODE_CACHE_READ && !s->buffers[pn->out].table_view);
    return kind == OI__NODE_CACHE_INCREMENT || kind == OI__NODE_CACHE_DECREMENT;
}

/* A reset of a whole table or of a variable in the state: a copy of its
 * model tensor, or a fill of its words with one 32-bit pattern (@init's
 * bits in every word, or zeros); false where no pattern fits. */
static bool oi__vk_reset_word(const oi__slot *sl, uint32_t *word) {
    *word = 0;
    if (!sl->decl || sl->decl->init_kind == OI__INIT_NONE)
        return true;
    bool f = sl->decl->init_kind == OI__INIT_FLOAT;
    if (sl->dtype == OI_DTYPE_F32) {
        float v = f ? (float)sl->decl->init_float : (float)sl->decl->init_int;
        memcpy(word, &v, sizeof v);
        return true;
    }
    if ((sl->dtype == OI_DTYPE_I32 || sl->dtype == OI_DTYPE_U32) && !f) {
        *word = (uint32_t)sl->decl->init_int;
        return true;
    }
    return false;
}

/* The bytes a reset covers: every entry of a table, else the variable. */
static uint64_t oi__vk_reset_bytes(const oi__slot *sl, const oi__sy_buffer *buf) {
    return sl->is_table ? buf->bytes * (uint64_t)buf->table_entries : buf->bytes;
}

static oi_status oi__vk_check_reset(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *sl = &s->plan->slots[pn->var];
    const oi__sy_buffer *buf = &s->buffers[pn->var];
    uint32_t word;
    if (sl->is_table && arrlen(pn->access) > 0)
        return oi__vk_refuse(pn, "a reset of one entry of a table, or of the entries under a prefix");
    if (buf->home != OI__SY_STATE && buf->home != OI__SY_TABLE)
        return oi__vk_refuse(pn, "a reset of a variable that is not in the state");
    if (!sl->is_table && arrlen(buf->tensors) > 0)
        return OI_OK; /* a copy of its model tensor */
    if (buf->offset % 4 || oi__vk_reset_bytes(sl, buf) % 4 || !oi__vk_reset_word(sl, &word))
        return oi__vk_refuse(pn, "a reset that is no fill of whole 32-bit words with one value (an @init of "
                                 "f32, i32 or u32, or zeros)");
    return OI_OK;
}

static oi_status oi__vk_check_cache(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *sl = &s->plan->slots[pn->var];
    const oi__sy_buffer *buf = &s->buffers[pn->var];
    oi__node_kind kind = pn->ir->kind;
    if (kind == OI__NODE_CACHE_RESET)
        return oi__vk_check_reset(s, pn);
    if (!sl->is_table) {
        if (buf->home != OI__SY_STATE)
            return oi__vk_refuse(pn, "a cache operation on a variable that is not in the state");
        if (kind == OI__NODE_CACHE_INCREMENT || kind == OI__NODE_CACHE_DECREMENT)
            return sl->dtype == OI_DTYPE_I32 || sl->dtype == OI_DTYPE_F32
                       ? OI_OK : oi__vk_refuse(pn, "cache_increment/decrement of a type other than i32 or f32");
        oi__sy_home other = s->buffers[pn->out].home;
        if (other != OI__SY_ARENA && other != OI__SY_STATE)
            return oi__vk_refuse(pn, "a cache read or write of a value that is not stored");
        return oi__vk_check_slot(s, pn, pn->out, -1);
    }
    if (buf->bytes % 4)
        return oi__vk_refuse(pn, "a table whose entries are not whole 32-bit words");
    int slices = 0;
    for (int i = 0; i < (int)arrlen(pn->access); i++) {
        const oi__pindex *ix = &pn->access[i];
        if (ix->is_slice && (!ix->has_end || kind != OI__NODE_CACHE_READ || !s->buffers[pn->out].table_view))
            return oi__vk_refuse(pn, "a table slice other than one with an end read in place along the last index "
                                     "(as a decoder's K[l, 0..step+1])");
        slices += ix->is_slice;
    }
    if ((int)arrlen(pn->access) != sl->n_indices || slices > 1)
        return oi__vk_refuse(pn, "a table access that does not give every index");
    if (!oi__vk_access_scalars(s, pn).ok)
        return oi__vk_refuse(pn, "a table index read from a variable other than an i32/i64 scalar");
    oi__sy_home other = s->buffers[pn->out].home;
    if (!s->buffers[pn->out].table_view && other != OI__SY_ARENA && other != OI__SY_STATE)
        return oi__vk_refuse(pn, "a table entry read into or written from a value that is not stored");
    return s->buffers[pn->out].table_view ? OI_OK : oi__vk_check_slot(s, pn, pn->out, -1);
}

/* A branch on a variable records both blocks; each of their kernels reads the
 * condition first and returns at once where its block is not the one taken
 * (oi__vk_guard). A copy cannot ask, so the blocks may hold none: no
 * transfer and no counter read or written by a copy. */
#define OI__VK_MAX_GUARDS 8 /* branches on variables inside one another */

static oi_status oi__vk_check_guardable(const oi__sy_schedule *s, const oi__sy_step *steps, int depth) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        const oi__pnode *pn = st->node;
        bool copy = st->kind == OI__SY_S_TRANSFER ||
                    (st->kind == OI__SY_S_CACHE && !oi__vk_cache_kernel(s, pn) &&
                     (!s->plan->slots[pn->var].is_table || pn->ir->kind == OI__NODE_CACHE_RESET));
        if (copy)
            return oi__vk_refuse(pn, "a transfer, a cache_reset, or a counter's cache read or write, in a block a "
                                     "branch on a variable takes (a copy or fill cannot be skipped on the device)");
        int inner = depth + (st->kind == OI__SY_S_BRANCH && pn->var >= 0);
        if (inner > OI__VK_MAX_GUARDS)
            return oi__vk_refuse(pn, "more than 8 branches on variables inside one another");
        oi_status r = oi__vk_check_guardable(s, st->body, depth);
        if (r == OI_OK)
            r = oi__vk_check_guardable(s, st->then_steps, inner);
        if (r == OI_OK)
            r = oi__vk_check_guardable(s, st->else_steps, inner);
        if (r != OI_OK)
            return r;
    }
    return OI_OK;
}

static bool oi__vk_is_writer(const oi__sy_step *st, void *arg) {
    oi__vk_find *f = (oi__vk_find *)arg;
    if (st->kind == OI__SY_S_KERNEL) {
        const oi__sy_kernel *k = &f->s->kernels[st->kernel];
        for (int n = 0; !f->found && n < (int)arrlen(k->nodes); n++)
            if (k->nodes[n]->out == f->slot)
                f->found = k->nodes[n];
    }
    if ((st->kind == OI__SY_S_CACHE || st->kind == OI__SY_S_TRANSFER) && !f->found && st->node->out == f->slot)
        f->found = st->node;
    return f->found != NULL;
}

/* The statement among steps (and the steps inside them) that writes slot, or NULL. */
static const oi__pnode *oi__vk_writer_in(const oi__sy_schedule *s, const oi__sy_step *steps, int slot) {
    oi__vk_find f = {s, slot, NULL, 0};
    oi__vk_walk(steps, oi__vk_is_writer, &f);
    return f.found;
}

static oi_status oi__vk_check_branch(const oi__sy_schedule *s, const oi__sy_step *st) {
    const oi__pnode *pn = st->node;
    /* the kernels of the second block read the condition after the first's ran */
    const oi__pnode *w = oi__vk_writer_in(s, st->then_steps, pn->var);
    if (!w)
        w = oi__vk_writer_in(s, st->else_steps, pn->var);
    if (w)
        return oi__vk_refuse(w, "a statement in a block of a branch on a variable that writes the condition");
    oi__sy_home home = s->buffers[pn->var].home;
    if (home != OI__SY_ARENA && home != OI__SY_STATE)
        return oi__vk_refuse(pn, "a branch on a variable that is neither a temporary nor a declared variable");
    oi_status r = oi__vk_check_slot(s, pn, pn->var, OI__VK_CONDITION);
    if (r == OI_OK)
        r = oi__vk_check_guardable(s, st->then_steps, 1);
    return r == OI_OK ? oi__vk_check_guardable(s, st->else_steps, 1) : r;
}

static oi_status oi__vk_check_expr(const oi__sy_schedule *s, const oi__pnode *pn, const oi__expr *e) {
    int64_t v;
    if (!e->ident || oi__plan_size(s->plan, e->ident, &v) || oi__plan_slot(s->plan, e->ident) < 0)
        return OI_OK; /* a literal, a named size, or a loop index */
    return oi__vk_refuse(pn, "a loop bound or index read from a variable (a value on the GPU) is not recorded yet");
}

static oi_status oi__vk_check_steps(const oi__sy_schedule *s, const oi__sy_gpu *g, const oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        const oi__pnode *pn = st->node;
        oi_status r = OI_OK;
        switch (st->kind) {
        case OI__SY_S_KERNEL: {
            const oi__sy_kernel *k = &s->kernels[st->kernel];
            r = oi__vk_check_kernel(s, g, k);
            for (int n = 0; r == OI_OK && n < (int)arrlen(k->nodes); n++)
                for (int in = 0; r == OI_OK && k->nodes[n]->input_indices && in < (int)arrlen(k->nodes[n]->inputs); in++)
                    if (k->nodes[n]->input_indices[in])
                        r = oi__vk_check_expr(s, k->nodes[n], &k->nodes[n]->input_indices[in][0].single);
            break;
        }
        case OI__SY_S_LOOP:
            r = oi__vk_check_expr(s, pn, &pn->ir->loop_start);
            if (r == OI_OK)
                r = oi__vk_check_expr(s, pn, &pn->ir->loop_end);
            if (r == OI_OK)
                r = oi__vk_check_steps(s, g, st->body);
            break;
        case OI__SY_S_BRANCH:
            if (pn->var >= 0)
                r = oi__vk_check_branch(s, st);
            if (r == OI_OK)
                r = oi__vk_check_steps(s, g, st->then_steps);
            if (r == OI_OK && pn->var >= 0)
                r = oi__vk_check_steps(s, g, st->else_steps);
            break;
        case OI__SY_S_TRANSFER: {
            oi__sy_home a = s->buffers[pn->out].home, b = s->buffers[pn->var].home;
            if ((a != OI__SY_ARENA && a != OI__SY_STATE) || (b != OI__SY_ARENA && b != OI__SY_STATE && b != OI__SY_MODEL))
                return oi__vk_refuse(pn, "a transfer from or into a prefix table or a table");
            r = oi__vk_check_slot(s, pn, pn->out, -1);
            break;
        }
        case OI__SY_S_CACHE: r = oi__vk_check_cache(s, pn); break;
        case OI__SY_S_YIELD: case OI__SY_S_AWAIT: case OI__SY_S_CONSUMER:
            return oi__vk_refuse(pn, "yield/await consumers");
        case OI__SY_S_FENCE: break;
        }
        if (r != OI_OK)
            return r;
    }
    return OI_OK;
}

oi_status oi__sy_vulkan_check(const oi__sy_schedule *s, const oi__sy_gpu *g) { return oi__vk_check_steps(s, g, s->steps); }
