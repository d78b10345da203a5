/* emit_vulkan.c - the Vulkan target: the same schedule as the C target
 * (schedule.c decides), printed as one GLSL compute shader per fused
 * kernel and C host code that records the whole step into one command
 * buffer at open and replays it every step.
 *
 *   NAME.h           the C target's typed API, plus NAME_gpu_ms and the
 *                    recorded step's dispatch and barrier counts
 *   NAME.c           model mapping + fingerprint check (emit.c's), the
 *                    variable inits (emit.c's, into a host-visible staging
 *                    copy of the state), the recording of the step, open,
 *                    step, close, the accessors (emit.c's)
 *   NAME_kK.comp     kernel K: its statements in a comment, its variables
 *                    as macros over the three buffers, its loop
 *   oi_kernel.glsl   the buffers and what every kernel includes
 *   oi_scalar.h      kernels/scalar.h (each op's arithmetic), verbatim
 *   oi_math.glsl     vulkan/shaders/math.glsl (exp_f32, gelu_f32), with
 *                    kernels/scalar_math.h pasted in (scripts/embed_synth_sources.py)
 *   oi_matmul_tiles.glsl  vulkan/shaders/matmul_tiles.glsl (the backend's
 *                    matmul tile loops), verbatim, where a kernel is a matmul
 *   oi_matmul_coopmat_tiles.glsl  vulkan/shaders/matmul_coopmat_tiles.glsl,
 *                    verbatim, where a matmul runs on cooperative matrices
 *   oi_gen_spirv.py  vulkan/gen_spirv.py, verbatim, there too: the Makefile
 *                    rewrites those kernels' modules as KHR with it
 *   oi_vk_runtime.h  synth/vulkan_runtime_template.c: device, buffers,
 *                    pipelines, the barrier-placing recorder
 *   npy.h, main.c    the driver, as the C target's
 *   Makefile         glslc -> NAME_kK.spv.h (embedded), volk, the driver
 *   plan.json, .dot  as the C target's ("target": "vulkan")
 *
 * Device memory: one arena buffer (the temporaries, at the schedule's
 * offsets), one state buffer (the declared variables), the model file
 * uploaded once. Every kernel binds all three; a variable is a macro
 * `h(i)` over the buffer it lives in, so the shared elementwise renderer
 * (render.c through lang.c's GLSL row) prints the same statements as the
 * C target. */
#include "synth_internal.h"
#include "embedded.h"
#include "../vulkan/vk_matmul_tiling.h"

#include <math.h>

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
 * copies: kind -1); bool (a byte) as is_finite's and the comparisons'
 * result (oi__vk_check_bools) and a branch's condition; u8 as matmul_q4's
 * ggml blocks. */
static bool oi__vk_dtype_ok(oi_dtype t, int kind) {
    if (t == OI_DTYPE_F32)
        return true;
    if (t == OI_DTYPE_I32 || t == OI_DTYPE_I64)
        return kind == -1 || kind == OI__SY_K_COPY || kind == OI__SY_K_GATHER || kind == OI__SY_K_ROPE ||
               kind == OI__SY_K_ARGMAX;
    if (t == OI_DTYPE_BOOL) /* a byte: is_finite's result, a branch's condition */
        return kind == OI__SY_K_ALL_FINITE || kind == OI__VK_CONDITION || kind == OI__SY_K_ELEMENTWISE ||
               kind == OI__SY_K_COPY || kind == OI__SY_K_ATTENTION;
    return t == OI_DTYPE_U8 && kind == OI__SY_K_QMATMUL;
}

static oi_status oi__vk_check_slot(const oi__sy_schedule *s, const oi__pnode *pn, int slot, int kind) {
    const oi__slot *sl = &s->plan->slots[slot];
    const oi__sy_buffer *buf = &s->buffers[slot];
    char why[200];
    if (!oi__vk_dtype_ok(sl->dtype, kind)) {
        snprintf(why, sizeof why, "%s is %s (the GLSL kernels compute on f32; i32/i64 are copied, gathered, "
                 "positions and indices; u8 are matmul_q4's blocks; bool is is_finite's result and a branch's "
                 "condition)", sl->name, oi_dtype_name(sl->dtype));
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

static bool oi__vk_trailing_reduce(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *in = &s->shaped[pn->inputs[0]], *out = &s->shaped[pn->out];
    int64_t rows = oi__shape_numel(out->ndim, out->shape), n = oi__shape_numel(in->ndim, in->shape);
    /* reduce.c's contiguous path: the reduced axes are the last ones */
    bool reduced[OI_MAX_DIMS] = {false};
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "axes") == 0)
            for (int a = 0; a < (int)arrlen(pn->attrs[i].ints); a++) {
                int64_t ax = pn->attrs[i].ints[a] < 0 ? pn->attrs[i].ints[a] + in->ndim : pn->attrs[i].ints[a];
                if (ax >= 0 && ax < in->ndim)
                    reduced[ax] = true;
            }
    int d0 = in->ndim;
    while (d0 > 0 && reduced[d0 - 1])
        d0--;
    for (int d = 0; d < d0; d++)
        if (reduced[d])
            return false;
    return rows > 0 && n % rows == 0;
}

/* An elementwise kernel's bools: written by comparisons of floats (stored a
 * byte each by NAME_write), never read (a bool operand, as where's or the
 * logical ops', has no GLSL load yet). */
static oi_status oi__vk_check_bools(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    for (int n = 0; k->kind == OI__SY_K_ELEMENTWISE && n < (int)arrlen(k->nodes); n++) {
        const oi__pnode *m = k->nodes[n];
        for (int i = 0; i < (int)arrlen(m->inputs); i++)
            if (s->plan->slots[m->inputs[i]].dtype == OI_DTYPE_BOOL)
                return oi__vk_refuse(m, "a bool operand (where and the logical ops have no GLSL kernel yet)");
    }
    return OI_OK;
}

static oi_status oi__vk_check_kernel(const oi__sy_schedule *s, const oi__sy_kernel *k) {
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
    for (int n = 0; n < (int)arrlen(k->nodes); n++)
        if (oi__sy_lang_c.ew_fn(k->nodes[n]->ir->op, false) && !oi__sy_lang_glsl.ew_fn(k->nodes[n]->ir->op, false))
            return oi__vk_refuse(k->nodes[n], "min, max and round (GLSL's leave a NaN operand or a half undefined)");
    oi_status bools = oi__vk_check_bools(s, k);
    if (bools != OI_OK)
        return bools;
    switch (k->kind) {
    case OI__SY_K_ALL_FINITE: break;
    case OI__SY_K_GATHER: {
        oi_dtype it = s->plan->slots[pn->inputs[1]].dtype;
        if (it != OI_DTYPE_I32 && it != OI_DTYPE_I64)
            return oi__vk_refuse(pn, "gather with indices other than i32 or i64");
        break;
    }
    case OI__SY_K_LAYOUT: case OI__SY_K_CONV: case OI__SY_K_POOL: break;
    case OI__SY_K_ROPE: case OI__SY_K_ARGMAX: break;
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
    case OI__SY_K_REDUCE:
        if (!oi__vk_trailing_reduce(s, pn))
            return oi__vk_refuse(pn, "a reduction over axes that are not the last ones");
        break;
    case OI__SY_K_NORM: case OI__SY_K_ELEMENTWISE: case OI__SY_K_SOFTMAX: break;
    case OI__SY_K_MATMUL: break; /* writing one of its inputs: through a scratch region (oi__vk_in_place) */
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

/* The statement that reads the table slice `slot` views (a CACHE_READ). */
static const oi__pnode *oi__vk_view_read(const oi__sy_step *steps, int slot) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_CACHE && st->node->ir->kind == OI__NODE_CACHE_READ && st->node->out == slot)
            return st->node;
        const oi__pnode *in = oi__vk_view_read(st->body, slot);
        if (!in)
            in = oi__vk_view_read(st->then_steps, slot);
        if (!in)
            in = oi__vk_view_read(st->else_steps, slot);
        if (in)
            return in;
    }
    return NULL;
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

/* The statement among steps (and the steps inside them) that writes slot, or NULL. */
static const oi__pnode *oi__vk_writer_in(const oi__sy_schedule *s, const oi__sy_step *steps, int slot) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_KERNEL)
            for (int n = 0; n < (int)arrlen(s->kernels[st->kernel].nodes); n++)
                if (s->kernels[st->kernel].nodes[n]->out == slot)
                    return s->kernels[st->kernel].nodes[n];
        if ((st->kind == OI__SY_S_CACHE || st->kind == OI__SY_S_TRANSFER) && st->node->out == slot)
            return st->node;
        const oi__sy_step *inner[3] = {st->body, st->then_steps, st->else_steps};
        for (int j = 0; j < 3; j++) {
            const oi__pnode *w = oi__vk_writer_in(s, inner[j], slot);
            if (w)
                return w;
        }
    }
    return NULL;
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

static oi_status oi__vk_check_steps(const oi__sy_schedule *s, const oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        const oi__pnode *pn = st->node;
        oi_status r = OI_OK;
        switch (st->kind) {
        case OI__SY_S_KERNEL: {
            const oi__sy_kernel *k = &s->kernels[st->kernel];
            r = oi__vk_check_kernel(s, k);
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
                r = oi__vk_check_steps(s, st->body);
            break;
        case OI__SY_S_BRANCH:
            if (pn->var >= 0)
                r = oi__vk_check_branch(s, st);
            if (r == OI_OK)
                r = oi__vk_check_steps(s, st->then_steps);
            if (r == OI_OK && pn->var >= 0)
                r = oi__vk_check_steps(s, st->else_steps);
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

oi_status oi__sy_vulkan_check(const oi__sy_schedule *s) { return oi__vk_check_steps(s, s->steps); }

/* ------------------------------------------------------------------ */
/* GLSL kernels                                                        */
/* ------------------------------------------------------------------ */
static const oi__slot *oi__vk_slot(const oi__sy_schedule *s, int slot) { return &s->shaped[slot]; }
static int64_t oi__vk_numel(const oi__slot *sl) { return oi__shape_numel(sl->ndim, sl->shape); }

/* Matmul tiles on a device of 256-invocation workgroups: the backend's
 * (vk_matmul_tiling.h, see oi__vk_mm_tiles_of). Where the device allows
 * fewer: 8 x 8 threads, each R x R results, K in steps of 16. R is 4
 * unless that leaves fewer workgroups than keep the device busy (256 on a
 * GPU, 8 on a CPU device): 2, then 1. */
static int oi__vk_matmul_side(const oi__sy_gpu *g) { return g->workgroup >= 256 ? 16 : 8; }

static int oi__vk_matmul_reg(const oi__sy_gpu *g, const oi__slot *c) {
    int side = oi__vk_matmul_side(g), reg = 4;
    while (reg > 1) {
        int64_t tile = side * reg;
        if (((c->shape[0] + tile - 1) / tile) * ((c->shape[1] + tile - 1) / tile) >= g->busy_workgroups)
            break;
        reg /= 2;
    }
    return reg;
}

/* How kernel k's matmul (not on cooperative matrices) is tiled. With 16 x 16
 * threads, the backend's rule (vk_matmul_tiling.h, which matmul.comp's
 * dispatches follow): 64 x 64 blocks, 128 x 128 with steps of 8 of K for
 * large products. A gemm of so few blocks that the backend splits it
 * along K (an encoder's 128-row products) is split here too, but in 32 x 32
 * blocks (oi__vk_mm_split_tiles): its slices are summed inside the same
 * dispatch by the last workgroup of each block (oi__vk_matmul_split), so
 * the fewer products a block has to add, the shorter that tail. */
typedef struct oi__vk_mm_tiles {
    int side, reg, bk;        /* side x side threads of reg x reg_n results, K in steps of bk */
    uint32_t slices, k_slice; /* slices of K (1: not split) and K per slice */
    int reg_n;                /* a thread's columns (reg: its rows) */
} oi__vk_mm_tiles;

/* A split gemm's tiles: 16 x 16 threads of 2 x 2 results (32 x 32 blocks),
 * K in slices (multiples of 16) for about OI__VK_SPLIT_TARGET workgroups
 * and at most OI__VK_SPLIT_MOST_K each, walked in steps of 16: every
 * workgroup walks a short K and the last one of a block adds few partial
 * products. On the H100 (docs/synthesizer.md, bench/gpu/synth_tiles_ab.sh)
 * the encoder block's step took 0.179 ms of GPU time so (0.199 before the
 * tile loops fetched a step ahead), against 0.181 with slices of at most
 * 128 of K, 0.184-0.186 with ~256 or ~768 workgroups or at most 64 of K,
 * 0.188 in steps of 32, 0.233 with a whole slice a step, 0.240-0.317 in
 * 64 x 64 blocks, 0.187-0.197 in 32 x 64 or 64 x 32 blocks, 0.246-0.53
 * with 8 x 8 threads of 4 x 4 results (too few warps to hide the waits).
 * The constants can be set with -D at build time for such comparisons. */
#ifndef OI__VK_SPLIT_TARGET
#define OI__VK_SPLIT_TARGET 384u
#endif
#ifndef OI__VK_SPLIT_MOST_K
#define OI__VK_SPLIT_MOST_K 192u
#endif
#ifndef OI__VK_SPLIT_SIDE /* threads a side */
#define OI__VK_SPLIT_SIDE 16
#endif
#ifndef OI__VK_SPLIT_BLOCK /* the block's rows */
#define OI__VK_SPLIT_BLOCK 32
#endif
#ifndef OI__VK_SPLIT_BLOCK_N /* and columns */
#define OI__VK_SPLIT_BLOCK_N OI__VK_SPLIT_BLOCK
#endif
#ifndef OI__VK_SPLIT_BK /* the step of K */
#define OI__VK_SPLIT_BK 16
#endif
static oi__vk_mm_tiles oi__vk_mm_split_tiles(const oi__slot *c, uint32_t K) {
    const int64_t bm = OI__VK_SPLIT_BLOCK, bn = OI__VK_SPLIT_BLOCK_N;
    oi__vk_mm_tiles t = {OI__VK_SPLIT_SIDE, (int)bm / OI__VK_SPLIT_SIDE, OI__VK_SPLIT_BK, 1u, 0u, (int)bn / OI__VK_SPLIT_SIDE};
    uint64_t blocks = (uint64_t)((c->shape[0] + bm - 1) / bm) * (uint64_t)((c->shape[1] + bn - 1) / bn);
    uint64_t want = (OI__VK_SPLIT_TARGET + blocks - 1u) / blocks, least = (K + OI__VK_SPLIT_MOST_K - 1u) / OI__VK_SPLIT_MOST_K;
    uint64_t slices = want > least ? want : least, most = K / 16u;
    if (slices > most)
        slices = most;
    if (slices < 2)
        return t;
    t.k_slice = (uint32_t)((K + slices - 1u) / slices + 15u) / 16u * 16u;
    t.slices = (K + t.k_slice - 1u) / t.k_slice;
    return t;
}

static oi__vk_mm_tiles oi__vk_mm_tiles_of(const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__vk_slot(s, mm->inputs[0]), *c = oi__vk_slot(s, mm->out);
    oi__vk_mm_tiles t = {oi__vk_matmul_side(g), 1, 16, 1u, 0u, 1};
    if (t.side < 16) {
        t.reg = t.reg_n = oi__vk_matmul_reg(g, c);
        return t;
    }
    oi__vk_matmul_tiling bt =
        oi__vk_matmul_tiles(true, c->shape[0], c->shape[1], (uint32_t)a->shape[1], mm->ir->op == OI_OP_gemm);
    if (bt.slices > 1)
        return oi__vk_mm_split_tiles(c, (uint32_t)a->shape[1]);
    t.reg = t.reg_n = (int)bt.block / t.side;
    t.bk = (int)bt.bk;
    return t;
}

/* The buffer a variable lives in and its first element there. */
static const char *oi__vk_buffer_name(oi__sy_home home) {
    return home == OI__SY_ARENA ? "arena" : home == OI__SY_STATE ? "state" : "model";
}

static bool oi__vk_transfers(const oi__sy_step *steps, int slot) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        bool copies = st->kind == OI__SY_S_TRANSFER ||
                      (st->kind == OI__SY_S_CACHE && st->node->ir->kind != OI__NODE_CACHE_RESET); /* byte copies */
        if (copies && (st->node->out == slot || st->node->var == slot))
            return true;
        if (oi__vk_transfers(st->body, slot) || oi__vk_transfers(st->then_steps, slot) ||
            oi__vk_transfers(st->else_steps, slot))
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* Index expressions in GLSL, the loops around a statement              */
/* ------------------------------------------------------------------ */
/* An integer scalar's value on the device, as an int (an i64's low word). */
static void oi__vk_scalar_read(oi__buf *b, const oi__sy_schedule *s, int slot) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    oi__buf_printf(b, "%s_i[%lluu]", buf->home == OI__SY_ARENA ? "arena" : "state",
                   (unsigned long long)(buf->offset / 4));
}

/* An index expression as GLSL int arithmetic: a loop index is the push
 * constant pc.lv_NAME, a scalar variable its word on the device. */
static void oi__vk_glsl_name(oi__buf *b, const oi__sy_schedule *s, const char *name) {
    int64_t v;
    if (oi__plan_size(s->plan, name, &v)) {
        oi__buf_printf(b, "%lld", (long long)v);
        return;
    }
    int slot = oi__plan_slot(s->plan, name);
    if (slot >= 0)
        oi__vk_scalar_read(b, s, slot);
    else
        oi__buf_printf(b, "pc.lv_%s", name);
}

static void oi__vk_glsl_expr(oi__buf *b, const oi__sy_schedule *s, const oi__expr *e) {
    if (!e->ident) {
        oi__buf_printf(b, "%lld", (long long)e->lit);
        return;
    }
    if (!oi__expr_is_compound(e)) {
        oi__vk_glsl_name(b, s, e->ident);
        return;
    }
    size_t pos = 0;
    oi__expr_tok tok;
    oi__buf_puts(b, "(");
    while (oi__expr_token(e->ident, &pos, &tok)) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)tok.len, tok.start);
        if (tok.kind == OI__EXPR_NAME)
            oi__vk_glsl_name(b, s, name);
        else
            oi__buf_puts(b, name);
    }
    oi__buf_puts(b, ")");
}

/* The loops around a kernel (kernel >= 0) or a cache statement (node),
 * outermost first: their indices are pushed when the step is recorded. */
typedef struct oi__vk_loops {
    const char *var[8];
    int n;
} oi__vk_loops;

static bool oi__vk_loops_of(const oi__sy_step *steps, int kernel, const oi__pnode *node, oi__vk_loops *l) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if ((kernel >= 0 && st->kind == OI__SY_S_KERNEL && st->kernel == kernel) ||
            (node && st->kind == OI__SY_S_CACHE && st->node == node))
            return true;
        bool loop = st->kind == OI__SY_S_LOOP && l->n < 8;
        if (loop)
            l->var[l->n++] = st->node->ir->loop_index;
        if (oi__vk_loops_of(st->body, kernel, node, l))
            return true;
        if (loop)
            l->n--;
        if (oi__vk_loops_of(st->then_steps, kernel, node, l) || oi__vk_loops_of(st->else_steps, kernel, node, l))
            return true;
    }
    return false;
}

/* The cache statements that are kernels of their own (oi__vk_cache_kernel),
 * in the step tree's order (stb array). */
static void oi__vk_cache_nodes(const oi__sy_schedule *s, const oi__sy_step *steps, const oi__pnode ***out) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_CACHE && oi__vk_cache_kernel(s, st->node))
            (void)arrput(*out, st->node);
        oi__vk_cache_nodes(s, st->body, out);
        oi__vk_cache_nodes(s, st->then_steps, out);
        oi__vk_cache_nodes(s, st->else_steps, out);
    }
}

/* The branches on variables around a kernel (kernel >= 0) or a cache
 * statement (node), outermost first: each condition's slot, and whether the
 * kernel is in the block taken when it is true. Both blocks are recorded;
 * the kernel returns at once where one of them says no (oi__vk_guard). */
typedef struct oi__vk_guards {
    const oi__pnode *branch[OI__VK_MAX_GUARDS];
    bool when_true[OI__VK_MAX_GUARDS];
    int n;
} oi__vk_guards;

static bool oi__vk_guards_of(const oi__sy_step *steps, int kernel, const oi__pnode *node, oi__vk_guards *g) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if ((kernel >= 0 && st->kind == OI__SY_S_KERNEL && st->kernel == kernel) ||
            (node && st->kind == OI__SY_S_CACHE && st->node == node))
            return true;
        if (oi__vk_guards_of(st->body, kernel, node, g))
            return true;
        bool guard = st->kind == OI__SY_S_BRANCH && st->node->var >= 0 && g->n < OI__VK_MAX_GUARDS;
        for (int block = 0; block < 2; block++) {
            if (guard) {
                g->branch[g->n] = st->node;
                g->when_true[g->n++] = block == 0;
            }
            if (oi__vk_guards_of(block == 0 ? st->then_steps : st->else_steps, kernel, node, g))
                return true;
            g->n -= guard;
        }
    }
    return false;
}

static oi__vk_guards oi__vk_guards_around(const oi__sy_schedule *s, int kernel, const oi__pnode *node) {
    oi__vk_guards g;
    memset(&g, 0, sizeof g);
    if (!oi__vk_guards_of(s->steps, kernel, node, &g))
        g.n = 0;
    return g;
}

/* Whether the plan has bool values on the device (bytes in the words). */
static bool oi__vk_has_bytes(const oi__sy_schedule *s) {
    for (int i = 0; i < (int)arrlen(s->kernels); i++)
        if (s->kernels[i].kind == OI__SY_K_ALL_FINITE)
            return true;
    for (int i = 0; i < (int)arrlen(s->plan->slots); i++)
        if (s->plan->slots[i].dtype == OI_DTYPE_BOOL && s->buffers[i].home != OI__SY_MODEL &&
            s->buffers[i].home != OI__SY_NONE)
            return true;
    return false;
}

/* A kernel's loop indices as push constants: the decoder's attention (its
 * table slices' bounds may name them). */
static bool oi__vk_pushes_loops(const oi__sy_kernel *k) { return k->kind == OI__SY_K_ATTN_KV; }

/* ------------------------------------------------------------------ */
/* Reshapes not dispatched: the result kept in its input's bytes       */
/* ------------------------------------------------------------------ */
/* A reshape moves no element, so where its input dies at it, its result can
 * live in the input's bytes and the copy is not dispatched (a decoder's
 * q -> q3, att -> o: 4 of 25 dispatches a layer). The planner gave the two
 * separate bytes; the result may take the input's only if, from the reshape
 * to the result's last use (one step list: kernels and cache statements),
 * nothing else touches the input's bytes. Pairs (result, input), in kernel
 * order, each checked against those before it (stb array). */
typedef struct oi__vk_alias {
    int result, input, kernel;
} oi__vk_alias;

static bool oi__vk_raw_overlap(const oi__sy_schedule *s, int a, int b) {
    const oi__sy_buffer *x = &s->buffers[a], *y = &s->buffers[b];
    return x->home == OI__SY_ARENA && y->home == OI__SY_ARENA && x->offset < y->offset + y->bytes &&
           y->offset < x->offset + x->bytes;
}

static bool oi__vk_plain_temp(const oi__sy_schedule *s, int slot) {
    const oi__sy_buffer *b = &s->buffers[slot];
    return slot < (int)arrlen(s->plan->slots) && b->home == OI__SY_ARENA && !b->kept && !b->dyn0 && !b->table_view &&
           !b->zero_at_start && !s->plan->slots[slot].decl;
}

/* The slots step st names (a kernel's params, a cache statement's values),
 * appended to *out; false for any other kind of step (loops, branches,
 * transfers: the scan stops). */
static bool oi__vk_step_slots(const oi__sy_schedule *s, const oi__sy_step *st, int **out) {
    if (st->kind == OI__SY_S_KERNEL) {
        oi__sy_param *params = oi__sy_kernel_params(s, &s->kernels[st->kernel]);
        for (int i = 0; i < (int)arrlen(params); i++)
            (void)arrput(*out, params[i].slot);
        arrfree(params);
        return true;
    }
    if (st->kind == OI__SY_S_CACHE) {
        (void)arrput(*out, st->node->out);
        (void)arrput(*out, st->node->var);
        return true;
    }
    return st->kind == OI__SY_S_FENCE;
}

static int oi__vk_count_refs(const oi__sy_schedule *s, const oi__sy_step *steps, int slot) {
    int n = 0;
    for (int i = 0; i < (int)arrlen(steps); i++) {
        int *slots = NULL;
        oi__vk_step_slots(s, &steps[i], &slots);
        if (steps[i].kind == OI__SY_S_TRANSFER)
            n += steps[i].node->out == slot || steps[i].node->var == slot;
        for (int j = 0; j < (int)arrlen(slots); j++)
            n += slots[j] == slot;
        arrfree(slots);
        n += oi__vk_count_refs(s, steps[i].body, slot) + oi__vk_count_refs(s, steps[i].then_steps, slot) +
             oi__vk_count_refs(s, steps[i].else_steps, slot);
    }
    return n;
}

/* Whether the reshape at steps[at] may keep its result in its input's bytes,
 * given the pairs accepted before it. */
static bool oi__vk_alias_ok(const oi__sy_schedule *s, const oi__sy_step *steps, int at, const oi__vk_alias *done) {
    const oi__sy_kernel *k = &s->kernels[steps[at].kernel];
    const oi__pnode *pn = k->nodes[0];
    int x = pn->inputs[0], y = pn->out;
    if (x == y || !oi__vk_plain_temp(s, x) || !oi__vk_plain_temp(s, y) || s->plan->slots[x].dtype != s->plan->slots[y].dtype ||
        s->buffers[x].bytes != s->buffers[y].bytes || oi__vk_count_refs(s, s->steps, x) != 2) /* its writer, the reshape */
        return false;
    for (int d = 0; d < (int)arrlen(done); d++)
        if (done[d].result == x || done[d].input == x)
            return false; /* no chains */
    int refs = oi__vk_count_refs(s, s->steps, y), seen = 1; /* the reshape's */
    for (int i = at + 1; i < (int)arrlen(steps) && seen < refs; i++) {
        int *slots = NULL;
        bool plain = oi__vk_step_slots(s, &steps[i], &slots);
        bool ok = plain;
        for (int j = 0; ok && j < (int)arrlen(slots); j++) {
            int o = slots[j];
            if (o == y) {
                seen++;
                continue;
            }
            ok = !oi__vk_raw_overlap(s, o, x);
            for (int d = 0; ok && d < (int)arrlen(done); d++) /* where an earlier result really is */
                ok = !(done[d].result == o && oi__vk_raw_overlap(s, done[d].input, x));
        }
        arrfree(slots);
        if (!ok)
            return false;
    }
    return seen == refs;
}

static void oi__vk_aliases_in(const oi__sy_schedule *s, const oi__sy_step *steps, oi__vk_alias **out) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_KERNEL) {
            const oi__sy_kernel *k = &s->kernels[st->kernel];
            if (k->kind == OI__SY_K_COPY && arrlen(k->nodes) == 1 && k->nodes[0]->ir->op == OI_OP_reshape &&
                oi__vk_alias_ok(s, steps, i, *out)) {
                oi__vk_alias a = {k->nodes[0]->out, k->nodes[0]->inputs[0], k->id};
                (void)arrput(*out, a);
            }
        }
        oi__vk_aliases_in(s, st->body, out);
        oi__vk_aliases_in(s, st->then_steps, out);
        oi__vk_aliases_in(s, st->else_steps, out);
    }
}

/* The slot whose bytes hold slot's value: its reshape's input, or itself. */
static int oi__vk_storage(const oi__sy_schedule *s, int slot) {
    oi__vk_alias *aliases = NULL;
    oi__vk_aliases_in(s, s->steps, &aliases);
    int at = slot;
    for (int i = 0; i < (int)arrlen(aliases); i++)
        if (aliases[i].result == slot)
            at = aliases[i].input;
    arrfree(aliases);
    return at;
}

/* The other slot of slot's (result, input) pair, or -1. */
static int oi__vk_partner(const oi__sy_schedule *s, int slot) {
    oi__vk_alias *aliases = NULL;
    oi__vk_aliases_in(s, s->steps, &aliases);
    int other = -1;
    for (int i = 0; i < (int)arrlen(aliases); i++)
        other = aliases[i].result == slot ? aliases[i].input : aliases[i].input == slot ? aliases[i].result : other;
    arrfree(aliases);
    return other;
}

/* Whether kernel k is a reshape whose result lives in its input's bytes. */
static bool oi__vk_aliased_reshape(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    oi__vk_alias *aliases = NULL;
    oi__vk_aliases_in(s, s->steps, &aliases);
    bool found = false;
    for (int i = 0; i < (int)arrlen(aliases); i++)
        found |= aliases[i].kernel == k->id;
    arrfree(aliases);
    return found;
}

/* ------------------------------------------------------------------ */
/* Attention's operands as views                                       */
/* ------------------------------------------------------------------ */
/* An attention's [B, H, S, D] operand made as transpose(reshape(Y, [B, S,
 * H, D]), perm=[0, 2, 1, 3]) (heads split off a [B S, H D] matmul result)
 * is read from Y where those two kernels would have copied it from, and a
 * result that only becomes reshape(transpose(ctx, perm=[0, 2, 1, 3])) is
 * written where that copy would land: the copies are not dispatched (the
 * simulator reads such views in place too). Only where nothing else reads
 * the copies and no kernel between them and the attention touches the
 * bytes that are now read earlier or written later. */
typedef struct oi__vk_att_views {
    int src[3];       /* per operand: the slot read (Y), or -1: the operand itself */
    int dst;          /* the slot written (the reshape's output), or -1: the attention's */
    int folded[8], n_folded; /* the kernels not dispatched */
} oi__vk_att_views;

/* The single-statement kernel that writes slot, if it is the only one, and
 * whether exactly one statement of the schedule reads slot. */
static const oi__sy_kernel *oi__vk_sole_writer(const oi__sy_schedule *s, int slot, int *readers) {
    const oi__sy_kernel *w = NULL;
    int writers = 0;
    *readers = 0;
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        for (int n = 0; n < (int)arrlen(s->kernels[k].nodes); n++) {
            const oi__pnode *pn = s->kernels[k].nodes[n];
            for (int i = 0; i < (int)arrlen(pn->inputs); i++)
                *readers += pn->inputs[i] == slot;
            if (pn->out == slot) {
                writers++;
                w = arrlen(s->kernels[k].nodes) == 1 ? &s->kernels[k] : NULL;
            }
        }
    return writers == 1 ? w : NULL;
}

/* The only statement that reads slot, as a single-statement kernel. */
static const oi__sy_kernel *oi__vk_sole_reader(const oi__sy_schedule *s, int slot) {
    const oi__sy_kernel *r = NULL;
    int readers = 0;
    for (int k = 0; k < (int)arrlen(s->kernels); k++)
        for (int n = 0; n < (int)arrlen(s->kernels[k].nodes); n++)
            for (int i = 0; i < (int)arrlen(s->kernels[k].nodes[n]->inputs); i++)
                if (s->kernels[k].nodes[n]->inputs[i] == slot) {
                    readers++;
                    r = arrlen(s->kernels[k].nodes) == 1 ? &s->kernels[k] : NULL;
                }
    return readers == 1 ? r : NULL;
}

/* A temporary nothing but the schedule's statements sees. */
static bool oi__vk_private_temp(const oi_plan *p, int slot) {
    const oi__sy_buffer *b = &p->schedule.buffers[slot];
    return b->home == OI__SY_ARENA && !b->kept && !b->dyn0 && !p->plan->slots[slot].decl &&
           !oi__vk_transfers(p->schedule.steps, slot);
}

static bool oi__vk_is_head_transpose(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    if (!k || k->kind != OI__SY_K_TRANSPOSE || oi__vk_slot(s, k->nodes[0]->inputs[0])->ndim != 4)
        return false;
    int64_t perm[OI_MAX_DIMS], stride[OI_MAX_DIMS];
    oi__sy_transpose_map(k->nodes[0], oi__vk_slot(s, k->nodes[0]->inputs[0]), perm, stride);
    return perm[0] == 0 && perm[1] == 2 && perm[2] == 1 && perm[3] == 3;
}

static bool oi__vk_is_reshape(const oi__sy_kernel *k) {
    return k && k->kind == OI__SY_K_COPY && k->nodes[0]->ir->op == OI_OP_reshape;
}

/* The step list holding kernel id and its index there. */
static bool oi__vk_find_kernel(const oi__sy_step *steps, int id, const oi__sy_step **list, int *at) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_KERNEL && st->kernel == id) {
            *list = steps;
            *at = i;
            return true;
        }
        if (oi__vk_find_kernel(st->body, id, list, at) || oi__vk_find_kernel(st->then_steps, id, list, at) ||
            oi__vk_find_kernel(st->else_steps, id, list, at))
            return true;
    }
    return false;
}

static bool oi__vk_overlap(const oi__sy_schedule *s, int a, int b) {
    const oi__sy_buffer *x = &s->buffers[oi__vk_storage(s, a)], *y = &s->buffers[oi__vk_storage(s, b)];
    if (x->home != y->home || (x->home != OI__SY_ARENA && x->home != OI__SY_STATE))
        return false;
    return x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
}

/* Whether the kernels strictly between kernels `from` and `to` (one step
 * list, kernels only), other than those in skip, leave slot alone: none
 * writes its bytes, nor (reads too) reads them. */
static bool oi__vk_untouched_between(const oi_plan *p, int from, int to, int slot, bool reads,
                                     const oi__vk_att_views *skip) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__sy_step *list = NULL, *list2 = NULL;
    int i0, i1;
    if (!oi__vk_find_kernel(s->steps, from, &list, &i0) || !oi__vk_find_kernel(s->steps, to, &list2, &i1) ||
        list != list2 || i0 > i1)
        return false;
    for (int i = i0 + 1; i < i1; i++) {
        if (list[i].kind != OI__SY_S_KERNEL || s->kernels[list[i].kernel].kind == OI__SY_K_ATTENTION)
            return false;
        bool skipped = false;
        for (int f = 0; f < skip->n_folded; f++)
            skipped |= skip->folded[f] == list[i].kernel;
        if (skipped)
            continue;
        oi__sy_param *params = oi__sy_kernel_params(s, &s->kernels[list[i].kernel]);
        bool clash = false;
        for (int j = 0; j < (int)arrlen(params); j++)
            clash |= (params[j].written || reads) && oi__vk_overlap(s, params[j].slot, slot);
        arrfree(params);
        if (clash)
            return false;
    }
    return true;
}

static void oi__vk_attention_views(const oi_plan *p, const oi__sy_kernel *k, oi__vk_att_views *v) {
    const oi__sy_schedule *s = &p->schedule;
    memset(v, 0, sizeof *v);
    v->src[0] = v->src[1] = v->src[2] = v->dst = -1;
    if (k->kind != OI__SY_K_ATTENTION || arrlen(k->nodes) != 1)
        return;
    const oi__pnode *att = k->nodes[0];
    int readers;
    for (int o = 0; o < 3; o++) { /* X = transpose(Xs), Xs = reshape(Y) */
        int x = att->inputs[o];
        const oi__sy_kernel *kt = oi__vk_sole_writer(s, x, &readers);
        if (readers != 1 || !oi__vk_private_temp(p, x) || !oi__vk_is_head_transpose(s, kt))
            continue;
        int xs = kt->nodes[0]->inputs[0];
        const oi__sy_kernel *kr = oi__vk_sole_writer(s, xs, &readers);
        if (readers != 1 || !oi__vk_private_temp(p, xs) || !oi__vk_is_reshape(kr))
            continue;
        int y = kr->nodes[0]->inputs[0];
        oi__vk_att_views cand = *v;
        cand.folded[cand.n_folded++] = kt->id;
        cand.folded[cand.n_folded++] = kr->id;
        if (oi__vk_slot(s, y)->dtype != OI_DTYPE_F32 || s->buffers[y].dyn0 ||
            (s->buffers[y].home != OI__SY_ARENA && s->buffers[y].home != OI__SY_STATE) ||
            !oi__vk_untouched_between(p, kr->id, k->id, y, false, &cand))
            continue;
        *v = cand;
        v->src[o] = y;
    }
    /* ctx_s = transpose(ctx), out = reshape(ctx_s) */
    const oi__sy_kernel *kt = oi__vk_sole_reader(s, att->out);
    if (!oi__vk_private_temp(p, att->out) || !oi__vk_is_head_transpose(s, kt) ||
        !oi__vk_private_temp(p, kt->nodes[0]->out))
        return;
    const oi__sy_kernel *kr = oi__vk_sole_reader(s, kt->nodes[0]->out);
    if (!oi__vk_is_reshape(kr))
        return;
    int out = kr->nodes[0]->out;
    oi__vk_att_views cand = *v;
    cand.folded[cand.n_folded++] = kt->id;
    cand.folded[cand.n_folded++] = kr->id;
    if (s->buffers[out].dyn0 || (s->buffers[out].home != OI__SY_ARENA && s->buffers[out].home != OI__SY_STATE) ||
        !oi__vk_untouched_between(p, k->id, kr->id, out, true, &cand))
        return;
    for (int o = 0; o < 3; o++)
        if (oi__vk_overlap(s, v->src[o] >= 0 ? v->src[o] : att->inputs[o], out))
            return;
    *v = cand;
    v->dst = out;
}

/* Whether kernel k is a copy folded into an attention's indexing. */
static bool oi__vk_folded(const oi_plan *p, const oi__sy_kernel *k) {
    if (k->kind != OI__SY_K_COPY && k->kind != OI__SY_K_TRANSPOSE)
        return false;
    for (int i = 0; i < (int)arrlen(p->schedule.kernels); i++) {
        if (p->schedule.kernels[i].kind != OI__SY_K_ATTENTION)
            continue;
        oi__vk_att_views v;
        oi__vk_attention_views(p, &p->schedule.kernels[i], &v);
        for (int f = 0; f < v.n_folded; f++)
            if (v.folded[f] == k->id)
                return true;
    }
    return false;
}

/* A kernel's variables (oi__sy_kernel_params), an attention's operands
 * read and written where oi__vk_attention_views says. */
static oi__sy_param *oi__vk_params(const oi_plan *p, const oi__sy_kernel *k) {
    oi__sy_param *params = oi__sy_kernel_params(&p->schedule, k);
    if (k->kind != OI__SY_K_ATTENTION)
        return params;
    oi__vk_att_views v;
    oi__vk_attention_views(p, k, &v);
    for (int i = 0; i < (int)arrlen(params); i++) {
        for (int o = 0; o < 3; o++)
            if (params[i].slot == k->nodes[0]->inputs[o] && v.src[o] >= 0)
                params[i].slot = v.src[o];
        if (params[i].slot == k->nodes[0]->out && v.dst >= 0)
            params[i].slot = v.dst;
    }
    return params;
}

/* f16 storage (preferences.default_precision "fp16" with features.fp16):
 * the arena's f32 temporaries that only kernels touch are stored as f16
 * in the first half of their bytes (the arena keeps the f32 layout) and
 * computed on in f32. What the host reads (kept temporaries) and what DSL
 * transfers copy byte for byte stay f32. */
static bool oi__vk_half_alone(const oi__sy_gpu *g, const oi__sy_schedule *s, int slot) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    return g->fp16_storage && buf->home == OI__SY_ARENA && !buf->kept && oi__vk_slot(s, slot)->dtype == OI_DTYPE_F32 &&
           !oi__vk_transfers(s->steps, slot);
}

/* ... and a reshape's result kept in its input's bytes is stored as its input is. */
static bool oi__vk_half(const oi__sy_gpu *g, const oi__sy_schedule *s, int slot) {
    if (!oi__vk_half_alone(g, s, slot))
        return false;
    int other = oi__vk_partner(s, slot);
    return other < 0 || oi__vk_half_alone(g, s, other);
}

/* An integer variable: NAME(i) its element as an int (an i64's low word;
 * NAME_hi(i) the high one), NAME_w(i) its i-th 32-bit word (copies). u8
 * (matmul_q4's blocks) is read by byte offset in the kernel itself. */
static void oi__vk_int_macros(oi__buf *b, const oi__sy_schedule *s, int slot) {
    const oi__sy_buffer *buf = &s->buffers[oi__vk_storage(s, slot)];
    const oi__slot *sl = oi__vk_slot(s, slot);
    if (sl->dtype == OI_DTYPE_U8) {
        oi__buf_puts(b, "/* ");
        oi__sy_render_param_name(b, sl);
        oi__buf_puts(b, ": u8 (ggml blocks), read by byte in model_u */\n");
        return;
    }
    if (sl->dtype == OI_DTYPE_BOOL) { /* a byte among the words: read and written by OI_BYTE_* */
        const char *words = buf->home == OI__SY_ARENA ? "arena_i" : "state_i";
        for (int m = 0; m < 2; m++) {
            oi__buf_puts(b, "#define ");
            oi__sy_render_param_name(b, sl);
            oi__buf_printf(b, m ? "_write(i, v) OI_BYTE_WRITE(%s, %lluu + (i), v)\n"
                                : "_read(i) OI_BYTE_READ(%s, %lluu + (i)) /* bool: a byte */\n",
                           words, (unsigned long long)buf->offset);
        }
        return;
    }
    oi__buf at;
    memset(&at, 0, sizeof at);
    if (buf->home == OI__SY_PREFIX) {
        oi__buf_puts(&at, "pc.");
        oi__sy_render_param_name(&at, sl);
        oi__buf_puts(&at, "_at");
    } else {
        uint64_t off = buf->home == OI__SY_MODEL ? buf->tensors[0]->data_offset : buf->offset;
        oi__buf_printf(&at, "%lluu", (unsigned long long)(off / 4));
    }
    bool model = buf->home == OI__SY_MODEL || buf->home == OI__SY_PREFIX;
    const char *open = model ? "int(model_u[" : buf->home == OI__SY_ARENA ? "arena_i[" : "state_i[";
    const char *close = model ? "])" : "]";
    bool wide = sl->dtype == OI_DTYPE_I64;
    const char *names[3] = {"", "_hi", "_w"};
    const char *index[3] = {wide ? "2u * (i)" : "(i)", "2u * (i) + 1u", "(i)"};
    for (int m = 0; m < 3; m++) {
        if (m == 1 && !wide)
            continue;
        oi__buf_puts(b, "#define ");
        oi__sy_render_param_name(b, sl);
        oi__buf_printf(b, "%s(i) %s%s%s + %s%s%s\n", names[m], open, at.data, model ? " - pc.oi_mb" : "", index[m], close,
                       m == 0 ? (wide ? " /* i64: the low word */" : " /* i32 */") : "");
    }
    oi__buf_free(&at);
}

static void oi__vk_macros(oi__buf *b, const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_param *params) {
    for (int i = 0; i < (int)arrlen(params); i++) {
        const oi__sy_buffer *buf = &s->buffers[oi__vk_storage(s, params[i].slot)]; /* a reshape's: its input's bytes */
        const oi__slot *sl = oi__vk_slot(s, params[i].slot);
        if (sl->dtype != OI_DTYPE_F32) {
            oi__vk_int_macros(b, s, params[i].slot);
            continue;
        }
        if (buf->table_view) { /* the decoder's attention addresses the table itself */
            oi__buf_puts(b, "/* ");
            oi__sy_render_param_name(b, sl);
            oi__buf_puts(b, ": a slice of a table, read in place in the state */\n");
            continue;
        }
        if (oi__vk_half(g, s, params[i].slot)) {
            /* read as float; a store goes through oi_st_NAME (oi__vk_rewrite_stores) */
            oi__buf_puts(b, "#define ");
            oi__sy_render_param_name(b, sl);
            oi__buf_printf(b, "(i) float(arena16[%lluu + (i)]) /* f32, a temporary stored as f16 */\n#define oi_st_",
                           (unsigned long long)(buf->offset / 2));
            oi__sy_render_param_name(b, sl);
            oi__buf_printf(b, "(i) arena16[%lluu + (i)]\n", (unsigned long long)(buf->offset / 2));
            continue;
        }
        oi__buf_puts(b, "#define ");
        oi__sy_render_param_name(b, sl);
        if (buf->home == OI__SY_PREFIX) {
            oi__buf_puts(b, "(i) model[pc.");
            oi__sy_render_param_name(b, sl);
            oi__buf_printf(b, "_at - pc.oi_mb + (i)] /* %s(l): the entry the step pushes */\n", sl->name);
            continue;
        }
        uint64_t at = buf->home == OI__SY_MODEL ? buf->tensors[0]->data_offset : buf->offset;
        oi__buf_puts(b, "(i) ");
        oi__buf_printf(b, "%s[%lluu%s + (i)] /* %s, %s */\n", oi__vk_buffer_name(buf->home), (unsigned long long)(at / 4),
                       buf->home == OI__SY_MODEL ? " - pc.oi_mb" : "", oi_dtype_name(sl->dtype),
                       buf->home == OI__SY_ARENA ? "a temporary" : buf->home == OI__SY_STATE ? "a declared variable"
                                                                                             : "model data");
    }
}

/* Whether a kernel reads the model (its window's start pushed as pc.oi_mb). */
static bool oi__vk_reads_model(const oi__sy_schedule *s, const oi__sy_param *params) {
    for (int i = 0; i < (int)arrlen(params); i++)
        if (s->buffers[params[i].slot].home == OI__SY_PREFIX || s->buffers[params[i].slot].home == OI__SY_MODEL)
            return true;
    return false;
}

static bool oi__vk_uses_reductions(const oi__sy_kernel *k) {
    return k->kind == OI__SY_K_SOFTMAX || k->kind == OI__SY_K_NORM || k->kind == OI__SY_K_REDUCE ||
           k->kind == OI__SY_K_ATTENTION || k->kind == OI__SY_K_ATTN_KV || k->kind == OI__SY_K_ALL_FINITE;
}

static bool oi__vk_cm_takes(const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_kernel *k);
static bool oi__vk_has_coopmat(const oi_plan *p);

static void oi__vk_kernel_head(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, const oi__sy_param *params,
                               uint32_t local_size, int module) {
    const oi__sy_schedule *s = &p->schedule;
    oi__buf_printf(b, "#version 450\n// %s_k%d.comp - k%d: %s, %d statement%s (synthesized by OpenInfer for %s)\n", p->name,
                   module, k->id, oi__sy_kernel_kind_name(k->kind),
                   (int)arrlen(k->nodes), arrlen(k->nodes) == 1 ? "" : "s", p->gpu.device_name);
    for (int n = 0; n < (int)arrlen(k->nodes); n++) {
        oi__buf_puts(b, "//   ");
        oi__sy_render_stmt(b, k->nodes[n]);
        oi__buf_puts(b, "\n");
    }
    if (oi__vk_uses_reductions(k) && p->gpu.subgroup_ops)
        oi__buf_puts(b, "#extension GL_KHR_shader_subgroup_basic : require\n"
                        "#extension GL_KHR_shader_subgroup_arithmetic : require\n");
    if (k->kind == OI__SY_K_MATMUL || k->kind == OI__SY_K_QMATMUL) /* the tiles' and blocks' [[unroll]] */
        oi__buf_puts(b, "#extension GL_EXT_control_flow_attributes : require\n");
    if (oi__vk_cm_takes(&p->gpu, s, k)) /* what oi_matmul_coopmat_tiles.glsl needs */
        oi__buf_puts(b, "#extension GL_NV_cooperative_matrix : require\n"
                        "#extension GL_KHR_memory_scope_semantics : require\n"
                        "#extension GL_KHR_shader_subgroup_basic : require\n"
                        "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n");
    oi__buf_puts(b, "#include \"oi_kernel.glsl\"\n\n");
    oi__buf_printf(b, "layout(local_size_x = %u) in;\n", local_size);
    oi__vk_loops loops = {{NULL}, 0};
    if (oi__vk_pushes_loops(k))
        oi__vk_loops_of(s->steps, k->id, NULL, &loops);
    bool model = oi__vk_reads_model(s, params);
    if (model || loops.n > 0) {
        oi__buf_puts(b, "layout(push_constant) uniform Push {");
        if (model)
            oi__buf_puts(b, " uint oi_mb;");
        for (int l = 0; l < loops.n; l++)
            oi__buf_printf(b, " int lv_%s;", loops.var[l]);
        for (int i = 0; i < (int)arrlen(params); i++)
            if (s->buffers[params[i].slot].home == OI__SY_PREFIX) {
                oi__buf_puts(b, " uint ");
                oi__sy_render_param_name(b, oi__vk_slot(s, params[i].slot));
                oi__buf_puts(b, "_at;");
            }
        oi__buf_puts(b, " } pc; /* set when the step is recorded */\n");
    }
    oi__vk_macros(b, &p->gpu, s, params);
    oi__buf_puts(b, "\n");
}

/* oi_wg_sum / oi_wg_max over the workgroup: subgroup operations when the
 * device JSON says it has them, else a tree in shared memory. */
static void oi__vk_reduce_helpers(oi__buf *b, const oi__sy_gpu *g, uint32_t wg) {
    oi__buf_printf(b, "shared float oi_partial[%u];\n", wg);
    static const char *const ops[2][3] = {{"sum", "subgroupAdd", "OI_S_sum_step(total, oi_partial[s])"},
                                          {"max", "subgroupMax", "max(total, oi_partial[s])"}};
    for (int o = 0; o < 2; o++) {
        oi__buf_printf(b, "float oi_wg_%s(float v) {\n", ops[o][0]);
        if (g->subgroup_ops) {
            oi__buf_printf(b, "    v = %s(v);\n    if (subgroupElect())\n        oi_partial[gl_SubgroupID] = v;\n"
                              "    barrier();\n    float total = oi_partial[0];\n"
                              "    for (uint s = 1u; s < gl_NumSubgroups; s++)\n        total = %s;\n",
                           ops[o][1], ops[o][2]);
        } else {
            oi__buf_printf(b, "    const uint tid = gl_LocalInvocationID.x;\n    oi_partial[tid] = v;\n    barrier();\n"
                              "    for (uint half_n = %uu; half_n > 0u; half_n >>= 1u) {\n        if (tid < half_n)\n",
                           wg / 2);
            oi__buf_printf(b, "            oi_partial[tid] = %s;\n        barrier();\n    }\n"
                              "    const float total = oi_partial[0];\n",
                           o == 0 ? "OI_S_sum_step(oi_partial[tid], oi_partial[tid + half_n])"
                                  : "max(oi_partial[tid], oi_partial[tid + half_n])");
        }
        oi__buf_puts(b, "    barrier(); /* oi_partial is free again */\n    return total;\n}\n");
    }
    oi__buf_puts(b, "\n");
}

/* A grid-stride loop over `count` elements: `o` is the element. */
static void oi__vk_grid_loop(oi__buf *b, int64_t count, uint32_t wg) {
    oi__buf_printf(b, "void main() {\n    for (uint o = gl_GlobalInvocationID.x; o < %lldu; o += gl_NumWorkGroups.x * %uu) {\n",
                   (long long)count, wg);
}

static void oi__vk_elementwise(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    oi__vk_grid_loop(b, oi__vk_numel(oi__vk_slot(s, k->nodes[0]->out)), wg);
    oi__buf_puts(b, "        const uint i = o;\n");
    for (int n = 0; n < (int)arrlen(k->nodes); n++)
        oi__sy_render_ew(b, s, &oi__sy_lang_glsl, k, n, "i", 2);
    oi__buf_puts(b, "    }\n}\n");
}

static void oi__vk_name(oi__buf *b, const oi__sy_schedule *s, int slot) { oi__sy_render_param_name(b, oi__vk_slot(s, slot)); }

/* gemm: the bias row, then relu or gelu (math.glsl's exact form). */
static void oi__vk_gemm_tail(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *mm) {
    if (mm->ir->op != OI_OP_gemm)
        return;
    if (arrlen(mm->inputs) > 2) {
        oi__buf_puts(b, "    acc_j = acc_j + ");
        oi__vk_name(b, s, mm->inputs[2]);
        oi__buf_puts(b, "(j);\n");
    }
    const char *act = NULL;
    for (int i = 0; i < (int)arrlen(mm->attrs); i++)
        if (strcmp(mm->attrs[i].name, "activation") == 0)
            act = mm->attrs[i].s;
    if (act && strcmp(act, "relu") == 0)
        oi__buf_puts(b, "    acc_j = acc_j < 0.0 ? 0.0 : acc_j;\n");
    else if (act && strcmp(act, "gelu") == 0)
        oi__buf_puts(b, "    acc_j = gelu_f32(acc_j, false);\n");
}

/* The result of C = A B at (r, j) in acc_j: the gemm's tail, the store
 * (unless a fused statement overwrites C), the fused statements at i. */
static void oi__vk_matmul_epilogue(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *c = oi__vk_slot(s, mm->out);
    oi__buf_printf(b, "    const uint i = r * %lldu + j;\n    /* ", (long long)c->shape[1]);
    oi__sy_render_stmt(b, mm);
    oi__buf_puts(b, " */\n");
    oi__vk_gemm_tail(b, s, mm);
    oi__buf_puts(b, "    float v0 = acc_j;\n");
    bool last = true;
    for (int m = 1; m < (int)arrlen(k->nodes); m++)
        last &= k->nodes[m]->out != mm->out;
    if (oi__sy_slot_stored(s, mm->out) && last) {
        oi__buf_puts(b, "    ");
        oi__vk_name(b, s, mm->out);
        oi__buf_puts(b, "(i) = v0;\n");
    }
    for (int n = 1; n < (int)arrlen(k->nodes); n++)
        oi__sy_render_ew(b, s, &oi__sy_lang_glsl, k, n, "i", 1);
}

/* Whether kernel k is a matmul split along K: one dispatch whose workgroup
 * z is a slice of K; each writes its partial products and the last
 * workgroup of a block to finish sums them (oi__vk_matmul_split). */
static bool oi__vk_split(const oi_plan *p, const oi__sy_kernel *k) {
    return k->kind == OI__SY_K_MATMUL && !oi__vk_cm_takes(&p->gpu, &p->schedule, k) &&
           oi__vk_mm_tiles_of(&p->gpu, &p->schedule, k).slices > 1;
}

static uint64_t oi__vk_split_bytes(const oi_plan *p, const oi__sy_kernel *k) {
    const oi__slot *c = oi__vk_slot(&p->schedule, k->nodes[0]->out);
    return (uint64_t)oi__vk_mm_tiles_of(&p->gpu, &p->schedule, k).slices * (uint64_t)oi__vk_numel(c) * 4u;
}

/* The output blocks of split kernel k (its workgroups along x and y): a
 * counter each. */
static uint64_t oi__vk_split_blocks(const oi_plan *p, const oi__sy_kernel *k) {
    const oi__slot *c = oi__vk_slot(&p->schedule, k->nodes[0]->out);
    oi__vk_mm_tiles t = oi__vk_mm_tiles_of(&p->gpu, &p->schedule, k);
    int64_t bm = t.side * t.reg, bn = t.side * t.reg_n;
    return (uint64_t)((c->shape[0] + bm - 1) / bm) * (uint64_t)((c->shape[1] + bn - 1) / bn);
}

/* Where kernel k's partial products are in the arena (bytes): past the
 * plan's temporaries, one region per split kernel (independent products
 * need no barrier between them); with k = NULL, where they end. */
static uint64_t oi__vk_split_offset(const oi_plan *p, const oi__sy_kernel *k) {
    uint64_t at = (p->schedule.arena_bytes + 255u) / 256u * 256u;
    for (int i = 0; i < (int)arrlen(p->schedule.kernels); i++) {
        const oi__sy_kernel *ki = &p->schedule.kernels[i];
        if (ki == k)
            return at;
        if (oi__vk_split(p, ki))
            at += (oi__vk_split_bytes(p, ki) + 255u) / 256u * 256u;
    }
    return at;
}

/* Where kernel k's block counters are (bytes): past all the partial
 * products, a word per block of each split kernel; with k = NULL, where
 * they end (the arena's whole size where some matmul is split). */
static uint64_t oi__vk_count_offset(const oi_plan *p, const oi__sy_kernel *k) {
    uint64_t at = oi__vk_split_offset(p, NULL);
    for (int i = 0; i < (int)arrlen(p->schedule.kernels); i++) {
        const oi__sy_kernel *ki = &p->schedule.kernels[i];
        if (ki == k)
            return at;
        if (oi__vk_split(p, ki))
            at += 4u * oi__vk_split_blocks(p, ki);
    }
    return at;
}

/* Whether kernel k is a matmul writing one of its inputs (MiniLM's
 * `gemm(o, Wo, bo) -> o`): other workgroups still read A while a block
 * stores C, so it stores into the scratch region past the arena's other
 * parts, and a copy moves the result into place after the dispatch. */
static bool oi__vk_in_place(const oi__sy_kernel *k) {
    if (k->kind != OI__SY_K_MATMUL)
        return false;
    for (int i = 0; i < (int)arrlen(k->nodes[0]->inputs); i++)
        if (k->nodes[0]->inputs[i] == k->nodes[0]->out)
            return true;
    return false;
}

/* The scratch region (bytes): past the block counters, as large as the
 * largest in-place matmul's result; 0 bytes where there is none. */
static uint64_t oi__vk_scratch_offset(const oi_plan *p) { return (oi__vk_count_offset(p, NULL) + 255u) / 256u * 256u; }

static uint64_t oi__vk_scratch_bytes(const oi_plan *p) {
    uint64_t most = 0;
    for (int i = 0; i < (int)arrlen(p->schedule.kernels); i++)
        if (oi__vk_in_place(&p->schedule.kernels[i])) {
            uint64_t bytes = p->schedule.buffers[p->schedule.kernels[i].nodes[0]->out].bytes;
            most = bytes > most ? bytes : most;
        }
    return most;
}

/* The shader modules: the schedule's kernels, then one per cache
 * statement that is a kernel (oi__vk_cache_kernel). */
static int oi__vk_n_modules(const oi_plan *p) {
    const oi__pnode **nodes = NULL;
    oi__vk_cache_nodes(&p->schedule, p->schedule.steps, &nodes);
    int n = (int)arrlen(p->schedule.kernels) + (int)arrlen(nodes);
    arrfree(nodes);
    return n;
}

/* The module of cache statement pn, or -1; with pn NULL, the first one's. */
static int oi__vk_cache_module(const oi_plan *p, const oi__pnode *pn) {
    const oi__pnode **nodes = NULL;
    oi__vk_cache_nodes(&p->schedule, p->schedule.steps, &nodes);
    int first = (int)arrlen(p->schedule.kernels), at = pn ? -1 : first;
    for (int i = 0; pn && i < (int)arrlen(nodes); i++)
        if (nodes[i] == pn)
            at = first + i;
    arrfree(nodes);
    return at;
}

static bool oi__vk_has_split(const oi_plan *p) {
    for (int i = 0; i < (int)arrlen(p->schedule.kernels); i++)
        if (oi__vk_split(p, &p->schedule.kernels[i]))
            return true;
    return false;
}

/* The tile loops' operands: A and B through the kernel's variable macros. */
static void oi__vk_matmul_loads(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *mm) {
    oi__buf_puts(b, "bool float_math() { return true; }\nuint mm_rows() { return M; }\nuint mm_cols() { return N; }\n"
                    "uint mm_load_a(uint base, uint m, uint k) { return floatBitsToUint(");
    oi__vk_name(b, s, mm->inputs[0]);
    oi__buf_puts(b, "(m * K + k)); }\nuint mm_load_b(uint base, uint k, uint n) { return floatBitsToUint(");
    oi__vk_name(b, s, mm->inputs[1]);
    oi__buf_puts(b, "(k * N + n)); }\n\n");
}

/* A matmul split along K, in one dispatch: workgroup z multiplies slice z
 * of K and writes its partial products past the plan's temporaries; the
 * last workgroup of an output block to finish (a counter per block, after
 * the partial products) adds the block's slices in slice order
 * (oi_gemm_slices.glsl: the backend's gemm_epilogue.comp sum, so the
 * simulator's values) and runs the epilogue. The partial products and the
 * counters go through coherent views of the arena, and each workgroup's
 * products are made visible (memoryBarrierBuffer) before it counts itself;
 * the last one puts its counter back to 0 for the next dispatch (the
 * counters are zeroed at open). */
static void oi__vk_matmul_split(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, oi__vk_mm_tiles t) {
    const oi__sy_schedule *s = &p->schedule;
    oi__buf_printf(b, "/* K in %u slices of %u: workgroup z multiplies slice z and writes its partial products at\n"
                      " * SPLIT_AT + z * M * N; the last workgroup of a block to finish (its counter at\n"
                      " * COUNT_AT + block) adds the block's slices in order and runs the epilogue */\n"
                      "const uint K_SLICE = %uu, SLICES = %uu, SPLIT_AT = %lluu, COUNT_AT = %lluu;\n"
                      "/* the arena again, coherent: one workgroup's stores seen by another's loads */\n"
                      "layout(std430, binding = 0) coherent buffer OiPartial { float partial[]; };\n"
                      "layout(std430, binding = 0) coherent buffer OiCounts { uint counts[]; };\n\n",
                   t.slices, t.k_slice, t.k_slice, t.slices, (unsigned long long)(oi__vk_split_offset(p, k) / 4),
                   (unsigned long long)(oi__vk_count_offset(p, k) / 4));
    oi__vk_matmul_loads(b, s, k->nodes[0]);
    oi__buf_puts(b, "void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {\n"
                    "    partial[SPLIT_AT + gl_WorkGroupID.z * M * N + r * N + j] = acc_j;\n}\n\n"
                    "float gemm_partial(uint at) { return partial[SPLIT_AT + at]; }\n"
                    "#include \"oi_gemm_slices.glsl\"\n\n"
                    "/* result (r, j), its slices summed */\nvoid mm_result(uint r, uint j, float acc_j) {\n");
    oi__vk_matmul_epilogue(b, s, k);
    oi__buf_puts(b, "}\n\n#include \"oi_matmul_tiles.glsl\"\n\n"
                    "shared bool oi_last; /* whether this workgroup is its block's last slice to finish */\n\n"
                    "void main() {\n"
                    "    uint k_begin = gl_WorkGroupID.z * K_SLICE;\n"
                    "    mm_tiles(0u, 0u, 0u, k_begin, min(K, k_begin + K_SLICE));\n"
                    "    memoryBarrierBuffer(); /* this slice's products out to the device, by every invocation, */\n"
                    "    barrier();             /* before the block's count says so */\n"
                    "    uint block = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n"
                    "    if (gl_LocalInvocationIndex == 0u) {\n"
                    "        oi_last = atomicAdd(counts[COUNT_AT + block], 1u) == SLICES - 1u;\n"
                    "        if (oi_last)\n"
                    "            counts[COUNT_AT + block] = 0u; /* every slice counted: 0 for the next dispatch */\n"
                    "    }\n"
                    "    barrier();\n"
                    "    if (!oi_last)\n        return;\n"
                    "    memoryBarrierBuffer(); /* the other slices' products, as they made them visible */\n"
                    "    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;\n"
                    "    for (uint l = gl_LocalInvocationIndex; l < BM * BN; l += MM_T * MM_T) {\n"
                    "        uint r = row0 + l / BN, j = col0 + l % BN;\n"
                    "        if (r < M && j < N)\n"
                    "            mm_result(r, j, gemm_slices_sum(r * N + j, M * N, SLICES));\n"
                    "    }\n}\n");
}

/* C = A B by the backend's tile loops (vulkan/shaders/matmul_tiles.glsl,
 * copied as oi_matmul_tiles.glsl): T x T threads of R x R results, K in
 * steps of 16; this kernel says where A and B are and what becomes of
 * each result (the epilogue, while it is in a register). */
static void oi__vk_matmul(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__vk_slot(s, mm->inputs[0]), *c = oi__vk_slot(s, mm->out);
    long long M = (long long)c->shape[0], N = (long long)c->shape[1], K = (long long)a->shape[1];
    oi__vk_mm_tiles t = oi__vk_mm_tiles_of(&p->gpu, s, k);
    int side = t.side, reg = t.reg, reg_n = t.reg_n;
    oi__buf_printf(b, "const uint M = %lldu, N = %lldu, K = %lldu;\n"
                      "#define MM_T %du /* MM_T x MM_T threads of %d x %d results */\n#define BM %du\n#define BN %du\n"
                      "#define BK %du\n"
                      "/* the store loops unrolled by the driver, not by glslang: lavapipe computed a\n"
                      " * gelu epilogue wrongly in 16 unrolled copies */\n#define MM_STORE_UNROLL\n\n",
                   M, N, K, side, reg, reg_n, side * reg, side * reg_n, t.bk);
    if (t.slices > 1) {
        oi__vk_matmul_split(b, p, k, t);
        return;
    }
    oi__vk_matmul_loads(b, s, mm);
    oi__buf_puts(b, "void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {\n");
    oi__vk_matmul_epilogue(b, s, k);
    oi__buf_puts(b, "}\n\n#include \"oi_matmul_tiles.glsl\"\n\nvoid main() { mm_tiles(0u, 0u, 0u, 0u, K); }\n");
}

/* ------------------------------------------------------------------ */
/* The cooperative-matrix matmul (default_precision fp16 on a device   */
/* with cooperative matrices): the backend's matmul_coopmat_tiles.glsl */
/* ------------------------------------------------------------------ */
/* Fewer results than 32 blocks of 128 x 256 leave most of a large GPU idle:
 * the tiled matmul takes such products. */
#define OI__VK_CM_MIN_RESULTS (32 * 128 * 256)

/* Where an operand's first element is, in `unit` elements of its buffer
 * (f16 temporaries: halves; else floats), as text; false if its data is
 * not aligned to 16 bytes (one uvec4 of halves, one vec4 of floats). */
static bool oi__vk_cm_at(const oi__sy_gpu *g, const oi__sy_schedule *s, int slot, oi__buf *at) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    if (buf->home == OI__SY_MODEL || buf->home == OI__SY_PREFIX) {
        for (int t = 0; t < (int)arrlen(buf->tensors); t++)
            if (buf->tensors[t]->data_offset % 16)
                return false;
        if (buf->home == OI__SY_PREFIX) { /* in the model's window (pc.oi_mb: its start) */
            oi__buf_puts(at, "(pc.");
            oi__sy_render_param_name(at, oi__vk_slot(s, slot));
            oi__buf_puts(at, "_at - pc.oi_mb)");
        } else {
            oi__buf_printf(at, "(%lluu - pc.oi_mb)", (unsigned long long)(buf->tensors[0]->data_offset / 4));
        }
        return true;
    }
    buf = &s->buffers[oi__vk_storage(s, slot)];
    if (buf->offset % 16)
        return false;
    oi__buf_printf(at, "%lluu", (unsigned long long)(buf->offset / (oi__vk_half(g, s, slot) ? 2 : 4)));
    return true;
}

/* Whether the gemm has a bias or an activation (an epilogue per result). */
static bool oi__vk_gemm_has_tail(const oi__pnode *mm) {
    if (mm->ir->op != OI_OP_gemm)
        return false;
    if (arrlen(mm->inputs) > 2)
        return true;
    for (int i = 0; i < (int)arrlen(mm->attrs); i++)
        if (strcmp(mm->attrs[i].name, "activation") == 0 && mm->attrs[i].s && strcmp(mm->attrs[i].s, "none") != 0)
            return true;
    return false;
}

/* Whether kernel k's matmul runs on cooperative matrices: the device
 * offers them for f16 (oi__sy_gpu.coopmat_f16), N and K are whole uvec4s
 * of halves, the operands are aligned, and the product has blocks enough. */
static bool oi__vk_cm_takes(const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    if (!g->coopmat_f16 || k->kind != OI__SY_K_MATMUL || oi__vk_in_place(k))
        return false;
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__vk_slot(s, mm->inputs[0]), *c = oi__vk_slot(s, mm->out);
    int64_t M = c->shape[0], N = c->shape[1], K = a->shape[1];
    int64_t bm = g->cm.bm, bn = g->cm.bn;
    if (N % 8 || K % 8 || ((M + bm - 1) / bm) * ((N + bn - 1) / bn) * bm * bn < OI__VK_CM_MIN_RESULTS)
        return false;
    oi__buf at;
    memset(&at, 0, sizeof at);
    bool ok = oi__vk_cm_at(g, s, mm->inputs[0], &at) && oi__vk_cm_at(g, s, mm->inputs[1], &at);
    oi__buf_free(&at);
    return ok;
}

/* Whether the results go straight from the accumulators into C: no
 * epilogue, C stored and aligned (else each goes through mm_store). */
static bool oi__vk_cm_direct(const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    const oi__pnode *mm = k->nodes[0];
    const oi__sy_buffer *buf = &s->buffers[mm->out];
    return arrlen(k->nodes) == 1 && !oi__vk_gemm_has_tail(mm) && oi__sy_slot_stored(s, mm->out) &&
           (buf->home == OI__SY_ARENA || buf->home == OI__SY_STATE) && buf->offset % 16 == 0 && (void *)g;
}

/* cm_load_a / cm_load_b: 8 halves of a row from `at`; an f32 operand
 * (weights, declared variables, what the host reads) rounded to f16 as it
 * is loaded. */
static void oi__vk_cm_loader(oi__buf *b, const oi__sy_gpu *g, const oi__sy_schedule *s, int slot, const char *fn,
                             const char *args, const char *index, int binding) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    bool half = oi__vk_half(g, s, slot);
    oi__buf at;
    memset(&at, 0, sizeof at);
    oi__vk_cm_at(g, s, slot, &at);
    oi__buf_printf(b, "layout(std430, binding = %d) readonly buffer Oi_%s { %s %s_view[]; }; /* ", binding, fn,
                   half ? "uvec4" : "vec4", fn);
    oi__vk_name(b, s, slot);
    oi__buf_printf(b, ": %s */\n", half ? "f16, 8 per uvec4" : "f32, 4 per vec4");
    oi__buf_printf(b, "uvec4 %s(%s) {\n", fn, args);
    if (half)
        oi__buf_printf(b, "    return %s_view[(%s + %s) >> 3u];\n}\n", fn, at.data, index);
    else
        oi__buf_printf(b, "    const uint q = (%s + %s) >> 2u;\n    return oi_cm_pack(%s_view[q], %s_view[q + 1u]);\n}\n", at.data,
                       index, fn, fn);
    oi__buf_free(&at);
    (void)buf;
}

static int oi__vk_binding(oi__sy_home home) {
    return home == OI__SY_ARENA ? 0 : home == OI__SY_STATE ? 1 : 2;
}

/* C = A B on cooperative matrices (matmul_coopmat_tiles.glsl, copied as
 * oi_matmul_coopmat_tiles.glsl): blocks of the device's tile shape
 * (oi__sy_gpu.cm; 128 x 256 of 16 subgroups on an H100), f16 fragments,
 * f32 accumulators; the epilogue, where there is one, per result
 * as the tiled matmul's (mm_store). */
static void oi__vk_matmul_coopmat(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, const oi__sy_gpu *g) {
    const oi__pnode *mm = k->nodes[0];
    const oi__slot *a = oi__vk_slot(s, mm->inputs[0]), *c = oi__vk_slot(s, mm->out);
    const oi__sy_buffer *cb = &s->buffers[mm->out];
    long long M = (long long)c->shape[0], N = (long long)c->shape[1], K = (long long)a->shape[1];
    bool direct = oi__vk_cm_direct(g, s, k), half_out = direct && oi__vk_half(g, s, mm->out);
    const oi__sy_coopmat_tiles *t = &g->cm;
    oi__buf_printf(b, "const uint M = %lldu, N = %lldu, K = %lldu;\n#define CM_M M\n#define CM_N N\n#define CM_K K\n"
                      "const uint B_T = 0u; /* B is [K, N] */\n", M, N, K);
    oi__buf_printf(b, "/* %u x %u blocks of %u x %u subgroups (%u x %u each), K %u at a time through %u shared buffer%s\n"
                      " * (the device JSON's preferences.coopmat_block and coopmat_subgroups, or its limits') */\n"
                      "#define BM %uu\n#define BN %uu\n#define BK %uu\n#define WG_M %uu\n#define WG_N %uu\n#define STAGES %uu\n\n",
                   t->bm, t->bn, t->wg_m, t->wg_n, t->bm / t->wg_m, t->bn / t->wg_n, t->bk, t->stages,
                   t->stages == 1 ? "" : "s", t->bm, t->bn, t->bk, t->wg_m, t->wg_n, t->stages);
    oi__buf_puts(b, "/* 8 f32 values as 8 halves (an operand stored as f32) */\n"
                    "uvec4 oi_cm_pack(vec4 lo, vec4 hi) {\n"
                    "    return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));\n}\n");
    oi__vk_cm_loader(b, g, s, mm->inputs[0], "cm_load_a", "uint base, uint m, uint k", "m * K + k",
                     oi__vk_binding(s->buffers[mm->inputs[0]].home == OI__SY_PREFIX ? OI__SY_MODEL
                                                                                     : s->buffers[mm->inputs[0]].home));
    oi__vk_cm_loader(b, g, s, mm->inputs[1], "cm_load_b", "uint base, uint k, uint n", "k * N + n",
                     oi__vk_binding(s->buffers[mm->inputs[1]].home == OI__SY_PREFIX ? OI__SY_MODEL
                                                                                     : s->buffers[mm->inputs[1]].home));
    oi__buf_puts(b, "uvec4 cm_load_bt(uint base, uint n, uint k) { return uvec4(0u); } /* B_T is 0 */\n\n");
    oi__buf_printf(b, "/* C: %s */\nlayout(std430, binding = %d) buffer Oi_d4 { uvec4 d4[]; };\n#define CM_DIRECT %s\n"
                      "#define CM_D_HALF %s\n",
                   direct ? "fragments inside it stored straight from the accumulators" : "every result through mm_store",
                   direct ? oi__vk_binding(cb->home) : 0, direct ? "true" : "false", half_out ? "true" : "false");
    oi__buf_puts(b, "\nvoid mm_store(uint base, uint r, uint j, float acc_j, uint bits) {\n");
    oi__vk_matmul_epilogue(b, s, k);
    oi__buf_puts(b, "}\n\n/* the results of row m, columns n .. n + 7 */\n"
                    "void cm_store8(uint base, uint m, uint n, vec4 lo, vec4 hi) {\n"
                    "    for (uint c = 0u; c < 4u; c++) {\n        mm_store(base, m, n + c, lo[c], 0u);\n"
                    "        mm_store(base, m, n + 4u + c, hi[c], 0u);\n    }\n}\n\n"
                    "#include \"oi_matmul_coopmat_tiles.glsl\"\n\n");
    oi__buf_printf(b, "void main() { cm_tiles(0u, 0u, %lluu); }\n",
                   direct ? (unsigned long long)(cb->offset / (half_out ? 2 : 4)) : 0ull);
}

/* One workgroup per row of `len` elements: r is the row, tid strides it. */
static void oi__vk_row_main(oi__buf *b, int64_t len) {
    oi__buf_printf(b, "const uint L = %lldu; /* the row */\n\nvoid main() {\n"
                      "    const uint r = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;\n", (long long)len);
}

static void oi__vk_softmax(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]);
    oi__vk_row_main(b, in->shape[in->ndim - 1]);
    oi__buf_printf(b, "    float m = -INFINITY;\n    for (uint j = tid; j < L; j += %uu)\n        m = max(m, ", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(r * L + j));\n    m = oi_wg_max(m);\n    float sum = 0.0;\n    for (uint j = tid; j < L; j += %uu)\n"
                      "        sum = OI_S_sum_step(sum, exp_f32(", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(r * L + j) - m));\n    sum = oi_wg_sum(sum);\n    const float inv = 1.0 / sum;\n"
                      "    for (uint j = tid; j < L; j += %uu)\n        ", wg);
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(r * L + j) = exp_f32(");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(r * L + j) - m) * inv;\n}\n");
}

static double oi__vk_param_f(const oi__pnode *pn, const char *name) {
    return oi__op_param_value_f64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), name);
}

/* layer_norm over the last axis: mean, the variance about it, then
 * (x - mean) inv scale + bias (nn.c's order; sums in f32 by the tree). A
 * row of at most OI__VK_NORM_HELD values a thread is read once into
 * registers (x[c] is element tid + c * wg: the same sums in the same
 * order, one pass over memory instead of three). */
#define OI__VK_NORM_HELD 8
static void oi__vk_norm(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]);
    int64_t len = in->shape[in->ndim - 1];
    bool held = (len + wg - 1) / wg <= OI__VK_NORM_HELD;
    oi__vk_row_main(b, len);
    if (held) {
        oi__buf_printf(b, "    const uint PER = (L + %uu) / %uu; /* the row's values a thread holds */\n"
                          "    float x[PER];\n    for (uint c = 0u; c < PER; c++)\n"
                          "        x[c] = tid + c * %uu < L ? ", wg - 1, wg, wg);
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_printf(b, "(r * L + tid + c * %uu) : 0.0;\n", wg);
    }
    /* the loops over the thread's share of the row, and its value there */
    char loop[96];
    if (held)
        snprintf(loop, sizeof loop, "for (uint c = 0u; c < PER && tid + c * %uu < L; c++)", wg);
    else
        snprintf(loop, sizeof loop, "for (uint j = tid; j < L; j += %uu)", wg);
    oi__buf x_at;
    memset(&x_at, 0, sizeof x_at);
    if (held) {
        oi__buf_puts(&x_at, "x[c]");
    } else {
        oi__vk_name(&x_at, s, pn->inputs[0]);
        oi__buf_puts(&x_at, "(r * L + j)");
    }
    if (pn->ir->op == OI_OP_rms_norm) { /* the root mean square: about 0 */
        oi__buf_puts(b, "    const float mean = 0.0;\n");
    } else {
        oi__buf_printf(b, "    float sum = 0.0;\n    %s\n        sum = OI_S_sum_step(sum, %s);\n"
                          "    const float mean = oi_wg_sum(sum) / float(L);\n", loop, x_at.data);
    }
    oi__buf_printf(b, "    float sq = 0.0;\n    %s {\n        const float d = %s - mean;\n"
                      "        sq = OI_S_sum_step(sq, d * d);\n    }\n"
                      "    const float inv = 1.0 / sqrt(oi_wg_sum(sq) / float(L) + ", loop, x_at.data);
    oi__sy_render_double(b, oi__vk_param_f(pn, "epsilon"));
    oi__buf_printf(b, ");\n    %s {\n", loop);
    if (held)
        oi__buf_printf(b, "        const uint j = tid + c * %uu;\n", wg);
    oi__buf_puts(b, "        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_printf(b, "(r * L + j) = (%s - mean) * inv", x_at.data);
    if (arrlen(pn->inputs) > 1) {
        oi__buf_puts(b, " * ");
        oi__vk_name(b, s, pn->inputs[1]);
        oi__buf_puts(b, "(j)");
    }
    if (arrlen(pn->inputs) > 2 && pn->ir->op == OI_OP_layer_norm) {
        oi__buf_puts(b, " + ");
        oi__vk_name(b, s, pn->inputs[2]);
        oi__buf_puts(b, "(j)");
    }
    oi__buf_puts(b, ";\n    }\n}\n");
    oi__buf_free(&x_at);
}

static void oi__vk_reduce(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    oi__vk_row_main(b, oi__vk_numel(in) / oi__vk_numel(out));
    oi__buf_printf(b, "    float acc = 0.0;\n    for (uint j = tid; j < L; j += %uu)\n        acc = OI_S_sum_step(acc, ", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(r * L + j));\n    acc = oi_wg_sum(acc);\n    if (tid == 0u)\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, pn->ir->op == OI_OP_mean_axis ? "(r) = acc / float(L);\n}\n" : "(r) = acc;\n}\n");
}

/* conv1d/conv2d (the schedule's window, k->conv): an invocation per output
 * element (n, m, oy, ox) sums its group's channels and window from zero in
 * (c, ky, kx) order, skipping the padding, adds the bias, applies relu
 * (activation=) and runs the fused statements at i, as a matmul's epilogue.
 * conv.c's gemm sums in blocks: the bits may differ, the tests' bound holds. */
static void oi__vk_conv(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const oi__slot *y = oi__vk_slot(s, pn->out);
    const char *act = NULL;
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "activation") == 0)
            act = pn->attrs[i].s;
    oi__buf_printf(b, "const uint OH = %lldu, OW = %lldu, OC = %lldu, MG = %lldu, CG = %lldu, IC = %lldu;\n"
                      "const int IH = %lld, IW = %lld, KH = %lld, KW = %lld; /* the window: stride, pad, dilation */\n"
                      "const int SH = %lld, SW = %lld, PH = %lld, PW = %lld, DH = %lld, DW = %lld;\n\n",
                   (long long)g->out_h, (long long)g->out_w, (long long)g->out_c, (long long)g->mg, (long long)g->cg,
                   (long long)g->in_c, (long long)g->in_h, (long long)g->in_w, (long long)g->k_h, (long long)g->k_w,
                   (long long)g->s_h, (long long)g->s_w, (long long)g->p_h, (long long)g->p_w, (long long)g->d_h,
                   (long long)g->d_w);
    oi__vk_grid_loop(b, oi__vk_numel(y), wg);
    oi__buf_puts(b, "        const uint i = o;\n"
                    "        const uint ox = o % OW, oy = o / OW % OH, m = o / (OW * OH) % OC, n = o / (OW * OH * OC);\n"
                    "        const uint x0 = (n * IC + m / MG * CG) * uint(IH * IW), w0 = m * CG * uint(KH * KW);\n"
                    "        float acc = 0.0;\n"
                    "        for (uint c = 0u; c < CG; c++)\n"
                    "            for (int ky = 0; ky < KH; ky++) {\n"
                    "                const int iy = int(oy) * SH - PH + ky * DH;\n"
                    "                if (iy < 0 || iy >= IH)\n                    continue;\n"
                    "                for (int kx = 0; kx < KW; kx++) {\n"
                    "                    const int ix = int(ox) * SW - PW + kx * DW;\n"
                    "                    if (ix >= 0 && ix < IW)\n                        acc += ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(x0 + c * uint(IH * IW) + uint(iy * IW + ix)) * ");
    oi__vk_name(b, s, pn->inputs[1]);
    oi__buf_puts(b, "(w0 + c * uint(KH * KW) + uint(ky * KW + kx));\n                }\n            }\n");
    oi__buf_puts(b, "        /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n        float v0 = acc");
    if (arrlen(pn->inputs) > 2) {
        oi__buf_puts(b, " + ");
        oi__vk_name(b, s, pn->inputs[2]);
        oi__buf_puts(b, "(m)");
    }
    oi__buf_puts(b, act && strcmp(act, "relu") == 0 ? ";\n        v0 = v0 < 0.0 ? 0.0 : v0;\n" : ";\n");
    bool last = true;
    for (int m = 1; m < (int)arrlen(k->nodes); m++)
        last &= k->nodes[m]->out != pn->out;
    if (oi__sy_slot_stored(s, pn->out) && last) {
        oi__buf_puts(b, "        ");
        oi__vk_name(b, s, pn->out);
        oi__buf_puts(b, "(i) = v0;\n");
    }
    for (int n = 1; n < (int)arrlen(k->nodes); n++)
        oi__sy_render_ew(b, s, &oi__sy_lang_glsl, k, n, "i", 2);
    oi__buf_puts(b, "    }\n}\n");
}

/* max_pool2d (conv.c's loop: -inf, then every tap inside the plane, a NaN
 * winning for good), avg_pool2d (the taps inside over their count, or over
 * the window's extent inside the padded plane with count_include_pad) and
 * global_avg_pool (a plane's mean): an invocation per output element, sums
 * in f32 where conv.c's run in f64 (within the tests' bound). */
static void oi__vk_pool(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *y = oi__vk_slot(s, pn->out);
    if (pn->ir->op == OI_OP_global_avg_pool) {
        long long area = (long long)oi__shape_numel(x->ndim - 2, x->shape + 2);
        oi__vk_grid_loop(b, oi__vk_numel(y), wg);
        oi__buf_printf(b, "        float sum = 0.0;\n        for (uint j = 0u; j < %lldu; j++)\n            sum += ", area);
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_printf(b, "(o * %lldu + j);\n        ", area);
        oi__vk_name(b, s, pn->out);
        oi__buf_printf(b, "(o) = sum / float(%lld); /* NaN for an empty plane, as the simulator */\n    }\n}\n", area);
        return;
    }
    const oi__sy_conv_geom *g = &k->conv;
    bool max = pn->ir->op == OI_OP_max_pool2d;
    bool include = !max && oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "count_include_pad") != 0;
    oi__buf_printf(b, "const uint OH = %lldu, OW = %lldu;\n"
                      "const int IH = %lld, IW = %lld, KH = %lld, KW = %lld; /* the window: stride, pad, dilation */\n"
                      "const int SH = %lld, SW = %lld, PH = %lld, PW = %lld, DH = %lld, DW = %lld;\n"
                      "const int EH = %lld, EW = %lld; /* the end pads */\n\n",
                   (long long)g->out_h, (long long)g->out_w, (long long)g->in_h, (long long)g->in_w, (long long)g->k_h,
                   (long long)g->k_w, (long long)g->s_h, (long long)g->s_w, (long long)g->p_h, (long long)g->p_w,
                   (long long)g->d_h, (long long)g->d_w, (long long)g->pe_h, (long long)g->pe_w);
    oi__vk_grid_loop(b, oi__vk_numel(y), wg);
    oi__buf_printf(b, "        const uint ox = o %% OW, oy = o / OW %% OH, p = o / (OW * OH);\n"
                      "        float acc = %s, ny = 0.0, nx = 0.0, n = 0.0;\n"
                      "        for (int ky = 0; ky < KH; ky++) {\n"
                      "            const int iy = int(oy) * SH - PH + ky * DH;\n"
                      "            ny += iy >= -PH && iy < IH + EH ? 1.0 : 0.0;\n"
                      "            for (int kx = 0; kx < KW; kx++) {\n"
                      "                const int ix = int(ox) * SW - PW + kx * DW;\n"
                      "                if (ky == 0)\n                    nx += ix >= -PW && ix < IW + EW ? 1.0 : 0.0;\n"
                      "                if (iy < 0 || iy >= IH || ix < 0 || ix >= IW)\n                    continue;\n"
                      "                const float v = ", max ? "-INFINITY" : "0.0");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(p * uint(IH * IW) + uint(iy * IW + ix));\n");
    if (max)
        oi__buf_puts(b, "                if (!is_nan_f(acc) && (v > acc || is_nan_f(v))) /* once NaN, stays NaN */\n"
                        "                    acc = v;\n");
    else
        oi__buf_puts(b, "                acc += v;\n                n += 1.0;\n");
    oi__buf_puts(b, "            }\n        }\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_printf(b, "(o) = %s;\n    }\n}\n", max ? "acc" : include ? "acc / (ny * nx)" : "acc / n");
}

/* The coordinates of output element o along dims 0..nd-1 of `shape`, as
 * GLSL ints c0, c1, ... (the last dim fastest). */
static void oi__vk_coords(oi__buf *b, const oi__slot *out) {
    int64_t after = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        oi__buf_printf(b, "        const int c%d = int(o / %lldu %% %lldu);\n", d, (long long)after,
                       (long long)out->shape[d]);
        after *= out->shape[d];
    }
}

/* concat (the input whose range along the axis holds the element), slice and
 * split (the schedule's offset and strides, from kernels/shape.c), pad (its
 * per-dim source maps, -1 taking the fill value): an invocation per output
 * element, a copy. */
static void oi__vk_layout(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__vk_slot(s, pn->out), *in = oi__vk_slot(s, pn->inputs[0]);
    oi_op op = pn->ir->op;
    const int64_t *map = k->index_map;
    if (op == OI_OP_pad) /* the source index along each dim, -1 outside */
        for (int d = 0; d < out->ndim; map += out->shape[d], d++) {
            oi__buf_printf(b, "const int MAP%d[%lld] = int[](", d, (long long)out->shape[d]);
            for (int64_t i = 0; i < out->shape[d]; i++)
                oi__buf_printf(b, "%s%lld", i ? (i % 16 ? ", " : ",\n    ") : "", (long long)map[i]);
            oi__buf_puts(b, ");\n");
        }
    oi__vk_grid_loop(b, oi__vk_numel(out), wg);
    oi__vk_coords(b, out);
    oi__buf_puts(b, "        ");
    oi__vk_name(b, s, pn->out);
    if (op == OI_OP_concat) {
        int64_t axis = oi__op_param_value_i64(op, pn->attrs, arrlenu(pn->attrs), "axis");
        axis = axis < 0 ? axis + out->ndim : axis;
        oi__buf_puts(b, "(o) = ");
        int64_t at = 0;
        for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
            const oi__slot *src = oi__vk_slot(s, pn->inputs[i]);
            bool last = i + 1 == (int)arrlen(pn->inputs);
            if (!last)
                oi__buf_printf(b, "c%d < %lld ? ", (int)axis, (long long)(at + src->shape[axis]));
            oi__vk_name(b, s, pn->inputs[i]);
            oi__buf_puts(b, "(uint(");
            int64_t stride = 1;
            for (int d = src->ndim - 1; d >= 0; d--) {
                oi__buf_printf(b, d == src->ndim - 1 ? "" : " + ");
                if (d == axis)
                    oi__buf_printf(b, "(c%d - %lld) * %lld", d, (long long)at, (long long)stride);
                else
                    oi__buf_printf(b, "c%d * %lld", d, (long long)stride);
                stride *= src->shape[d];
            }
            oi__buf_puts(b, last ? "))" : ")) :\n            ");
            at += src->shape[axis];
        }
        oi__buf_puts(b, ";\n    }\n}\n");
        return;
    }
    if (op == OI_OP_pad) {
        oi__buf_puts(b, "(o) = ");
        for (int d = 0; d < out->ndim; d++)
            oi__buf_printf(b, "%sMAP%d[c%d] < 0", d ? " || " : "", d, d);
        oi__buf_puts(b, " ? ");
        oi__sy_render_double(b, oi__op_param_value_f64(op, pn->attrs, arrlenu(pn->attrs), "value"));
        oi__buf_puts(b, " :\n            ");
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_puts(b, "(uint(");
        int64_t stride = 1;
        for (int d = in->ndim - 1; d >= 0; d--) {
            oi__buf_printf(b, "%sMAP%d[c%d] * %lld", d == in->ndim - 1 ? "" : " + ", d, d, (long long)stride);
            stride *= in->shape[d];
        }
        oi__buf_puts(b, "));\n    }\n}\n");
        return;
    }
    oi__buf_puts(b, "(o) = "); /* slice, split: the offset and strides */
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(uint(%lld", (long long)map[0]);
    for (int d = 0; d < out->ndim; d++)
        oi__buf_printf(b, " + c%d * %lld", d, (long long)map[1 + d]);
    oi__buf_puts(b, "));\n    }\n}\n");
}

/* is_finite: one workgroup over every element; the byte is 1 where none is
 * NaN or infinite (scalar.h's OI_S_isfinite). */
static void oi__vk_all_finite(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    oi__buf_printf(b, "void main() {\n    const uint tid = gl_LocalInvocationID.x;\n    float bad = 0.0;\n"
                      "    for (uint j = tid; j < %lldu; j += %uu)\n        if (!OI_S_isfinite(",
                   (long long)oi__vk_numel(oi__vk_slot(s, pn->inputs[0])), wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(j)))\n            bad = 1.0;\n    bad = oi_wg_max(bad);\n    if (tid == 0u)\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "_write(0u, bad == 0.0 ? 1u : 0u);\n}\n");
}

static void oi__vk_copy(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__vk_slot(s, pn->out);
    if (out->dtype == OI_DTYPE_BOOL) { /* bools: byte by byte */
        oi__vk_grid_loop(b, oi__vk_numel(out), wg);
        oi__buf_puts(b, "        ");
        oi__vk_name(b, s, pn->out);
        oi__buf_puts(b, "_write(o, ");
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_puts(b, "_read(o));\n    }\n}\n");
        return;
    }
    if (out->dtype != OI_DTYPE_F32) { /* integers: word by word */
        oi__vk_grid_loop(b, (int64_t)s->buffers[pn->out].bytes / 4, wg);
        oi__buf_puts(b, "        ");
        oi__vk_name(b, s, pn->out);
        oi__buf_puts(b, "_w(o) = ");
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_puts(b, "_w(o);\n    }\n}\n");
        return;
    }
    oi__vk_grid_loop(b, oi__vk_numel(oi__vk_slot(s, pn->out)), wg);
    oi__buf_puts(b, "        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(o) = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(o);\n    }\n}\n");
}

/* transpose: output dim d is input dim perm[d]; the input element of
 * output element o, every size specialized. */
static void oi__vk_transpose(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    int nd = in->ndim;
    int64_t perm[OI_MAX_DIMS], in_stride[OI_MAX_DIMS];
    oi__sy_transpose_map(pn, in, perm, in_stride);
    oi__vk_grid_loop(b, oi__vk_numel(out), wg);
    oi__buf_puts(b, "        const uint at = 0u");
    int64_t after = 1;
    for (int d = nd - 1; d >= 0; d--) {
        oi__buf_printf(b, " + o / %lldu %% %lldu * %lldu", (long long)after, (long long)out->shape[d],
                       (long long)in_stride[perm[d]]);
        after *= out->shape[d];
    }
    oi__buf_puts(b, ";\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(o) = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(at);\n    }\n}\n");
}

/* Query rows per workgroup of the tiled attention (oi__vk_attention_tiled). */
#define OI__VK_ATT_ROWS 8u

/* The floats of shared memory the tiled attention needs: a head's K (rows
 * padded by one float), then its V, in one tile; each row's scores, its
 * query and the reciprocal of its sum. */
static uint64_t oi__vk_att_tiled_floats(int64_t T, int64_t D, int64_t Dv) {
    uint64_t kv = (uint64_t)T * (uint64_t)((D + 1) > Dv ? (D + 1) : Dv);
    return kv + OI__VK_ATT_ROWS * ((uint64_t)T + (uint64_t)D + 1u);
}

/* Whether attention kernel k runs tiled: on a device with subgroup
 * operations whose shared memory holds a head's K or V. */
static bool oi__vk_att_tiled(const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    if (k->kind != OI__SY_K_ATTENTION || !g->subgroup_ops || g->max_shared_bytes == 0)
        return false;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *q = oi__vk_slot(s, pn->inputs[0]), *v = oi__vk_slot(s, pn->inputs[2]);
    const oi__slot *kk = oi__vk_slot(s, pn->inputs[1]);
    /* and the kernel head's oi_partial (a float per invocation) */
    return 4u * (oi__vk_att_tiled_floats(kk->shape[2], q->shape[3], v->shape[3]) + g->workgroup) <= g->max_shared_bytes;
}

/* The invocations of a tiled attention's workgroup: a subgroup per row. */
static uint32_t oi__vk_att_tiled_wg(const oi__sy_gpu *g) {
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32u, wg = OI__VK_ATT_ROWS * sg;
    return wg < g->workgroup ? wg : g->workgroup;
}

/* attention's mask and causal limit, as `float masked(float score, uint
 * batch, uint h, uint row, uint t)`: the score plus an f32 mask, or -inf
 * where a bool mask is false or key t is past query row's causal limit
 * (bottom-right aligned); the mask broadcast to [B, H, S, T] by strides. */
static bool oi__vk_attention_masked(const oi__pnode *pn) {
    return arrlen(pn->inputs) > 3 || oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "causal");
}

static void oi__vk_attention_mask(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *pn, long long S, long long T) {
    bool causal = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "causal") != 0;
    if (!oi__vk_attention_masked(pn))
        return;
    oi__buf_puts(b, "float masked(float score, uint batch, uint h, uint row, uint t) {\n");
    if (causal)
        oi__buf_printf(b, "    if (int(t) > int(row) + %lld) /* causal: keys up to row + T - S */\n        return -INFINITY;\n",
                       T - S);
    if (arrlen(pn->inputs) <= 3) {
        oi__buf_puts(b, "    return score;\n}\n");
        return;
    }
    const oi__slot *m = oi__vk_slot(s, pn->inputs[3]);
    int64_t stride[4] = {0, 0, 0, 0}, st = 1;
    for (int d = 3, md = m->ndim - 1; d >= 0 && md >= 0; d--, md--) { /* right-aligned */
        stride[d] = m->shape[md] == 1 ? 0 : st;
        st *= m->shape[md];
    }
    oi__buf_printf(b, "    const uint at = batch * %lldu + h * %lldu + row * %lldu + t * %lldu;\n    return ",
                   (long long)stride[0], (long long)stride[1], (long long)stride[2], (long long)stride[3]);
    oi__vk_name(b, s, pn->inputs[3]);
    oi__buf_puts(b, m->dtype == OI_DTYPE_BOOL ? "_read(at) != 0u ? score : -INFINITY; /* true keeps */\n}\n"
                                              : "(at) + score;\n}\n");
}

/* Both attention kernels' sizes and scale (the op's, else 1 / sqrt(D)). */
static void oi__vk_attention_sizes(oi__buf *b, const oi__pnode *pn, long long S, long long D, long long T, long long Dv) {
    double scale = oi__op_param_given(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "scale") ? oi__vk_param_f(pn, "scale")
                                                                                         : 1.0 / sqrt((double)D);
    oi__buf_printf(b, "const uint S = %lldu, D = %lldu, T = %lldu, DV = %lldu;\nconst float SCALE = ", S, D, T, Dv);
    oi__sy_render_double(b, (double)(float)scale);
    oi__buf_puts(b, ";\n");
}

/* The head's operands' offsets and the {Q,K,V,O}_HS / _RS constants (see below). */
static void oi__vk_attention_layout(oi__buf *b, const oi__vk_att_views *views, long long H, const long long rows[4],
                                    const long long dims[4]) {
    /* each operand's head h of batch b at b * H S D + h * HS, its rows RS
     * apart: [B, H, S, D] itself (HS = S D, RS = D), or read in place from
     * the [B S, H D] its copies came from (HS = D, RS = H D) */
    oi__buf_printf(b, "const uint H = %lldu; /* heads */\n", H);
    const char *what[4] = {"Q", "K", "V", "O"};
    for (int o = 0; o < 4; o++) {
        bool view = o < 3 ? views->src[o] >= 0 : views->dst >= 0;
        oi__buf_printf(b, "const uint %s_HS = %lldu, %s_RS = %lldu;%s\n", what[o], view ? dims[o] : rows[o] * dims[o], what[o],
                       view ? H * dims[o] : dims[o], view ? " /* in place of the head copies */" : "");
    }
}

/* attention, tiled: one workgroup per (head, OI__VK_ATT_ROWS query rows),
 * a subgroup per row (more rows each where the device's subgroups are
 * wider). The head's K comes into shared memory once for all the rows, the
 * scores and their softmax stay within a subgroup (subgroupMax, subgroupAdd:
 * no workgroup barrier), then V takes K's place for p V. */
static void oi__vk_attention_tiled(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, const int in[3], int out,
                                   const oi__vk_att_views *views) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *q = oi__vk_slot(s, pn->inputs[0]), *kk = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *v = oi__vk_slot(s, pn->inputs[2]);
    long long S = (long long)q->shape[2], D = (long long)q->shape[3], T = (long long)kk->shape[2];
    long long Dv = (long long)v->shape[3], H = (long long)q->shape[1];
    long long rows[4] = {S, T, T, S}, dims[4] = {D, D, Dv, Dv};
    oi__vk_attention_sizes(b, pn, S, D, T, Dv);
    oi__buf_printf(b, "const uint R = %uu; /* query rows per workgroup */\n"
                      "const uint KS = D + 1u; /* K's rows in shared memory, padded: lanes reading one d of\n"
                      "                           consecutive keys hit distinct banks */\n"
                      "shared float oi_kv[%lluu]; /* the head's K, then its V */\n"
                      "shared float oi_p[R * T];   /* each row's scores, then exp(score - max) */\n"
                      "shared float oi_q[R * D];   /* the rows' queries */\nshared float oi_inv[R];     /* 1 / each row's sum */\n",
                   OI__VK_ATT_ROWS, (unsigned long long)(T * ((D + 1) > Dv ? (D + 1) : Dv)));
    oi__vk_attention_layout(b, views, H, rows, dims);
    oi__vk_attention_mask(b, s, pn, S, T);
    oi__buf_puts(b, "\nvoid main() {\n    const uint head = gl_WorkGroupID.y, batch = head / H, h = head % H;\n"
                    "    const uint tid = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID, row0 = gl_WorkGroupID.x * R;\n"
                    "    const uint k_at = batch * H * T * D + h * K_HS, v_at = batch * H * T * DV + h * V_HS;\n"
                    "    for (uint i = tid; i < T * D; i += gl_WorkGroupSize.x)\n        oi_kv[i / D * KS + i % D] = ");
    oi__vk_name(b, s, in[1]);
    oi__buf_puts(b, "(k_at + i / D * K_RS + i % D);\n    for (uint i = tid; i < R * D; i += gl_WorkGroupSize.x) {\n"
                    "        const uint row = min(row0 + i / D, S - 1u); /* past the last row: a copy of it, unused */\n"
                    "        oi_q[i] = ");
    oi__vk_name(b, s, in[0]);
    oi__buf_printf(b, "(batch * H * S * D + h * Q_HS + row * Q_RS + i %% D);\n    }\n    barrier();\n"
                    "    for (uint r = gl_SubgroupID; r < R && row0 + r < S; r += gl_NumSubgroups) {\n"
                    "        float m = -INFINITY;\n        for (uint t = lane; t < T; t += gl_SubgroupSize) {\n"
                    "            float acc = 0.0;\n            for (uint d = 0u; d < D; d++)\n"
                    "                acc = OI_S_mac(acc, oi_q[r * D + d], oi_kv[t * KS + d]);\n"
                    "            oi_p[r * T + t] = %s;\n"
                    "            m = max(m, oi_p[r * T + t]);\n        }\n"
                    "        m = subgroupMax(m);\n        float sum = 0.0;\n"
                    "        for (uint t = lane; t < T; t += gl_SubgroupSize) {\n"
                    "            oi_p[r * T + t] = exp_f32(oi_p[r * T + t] - m);\n"
                    "            sum = OI_S_sum_step(sum, oi_p[r * T + t]);\n        }\n"
                    "        sum = subgroupAdd(sum);\n        if (subgroupElect())\n            oi_inv[r] = 1.0 / sum;\n    }\n"
                    "    barrier(); /* K is read: V takes its place */\n"
                    "    for (uint i = tid; i < T * DV; i += gl_WorkGroupSize.x)\n        oi_kv[i] = ",
                   oi__vk_attention_masked(pn) ? "masked(SCALE * acc, batch, h, row0 + r, t)" : "SCALE * acc");
    oi__vk_name(b, s, in[2]);
    oi__buf_puts(b, "(v_at + i / DV * V_RS + i % DV);\n    barrier();\n"
                    "    for (uint r = gl_SubgroupID; r < R && row0 + r < S; r += gl_NumSubgroups) {\n"
                    "        const uint o_at = batch * H * S * DV + h * O_HS + (row0 + r) * O_RS;\n"
                    "        for (uint d = lane; d < DV; d += gl_SubgroupSize) {\n            float acc = 0.0;\n"
                    "            for (uint t = 0u; t < T; t++)\n"
                    "                acc = OI_S_mac(acc, oi_p[r * T + t], oi_kv[t * DV + d]);\n            ");
    oi__vk_name(b, s, out);
    oi__buf_puts(b, "(o_at + d) = acc * oi_inv[r];\n        }\n    }\n}\n");
}

/* attention: one workgroup per (query row, head): the scores of the row in
 * shared memory, softmax over them, then p V. */
static void oi__vk_attention(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, uint32_t wg) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *q = oi__vk_slot(s, pn->inputs[0]), *kk = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *v = oi__vk_slot(s, pn->inputs[2]);
    long long S = (long long)q->shape[2], D = (long long)q->shape[3], T = (long long)kk->shape[2];
    long long Dv = (long long)v->shape[3], H = (long long)q->shape[1];
    oi__vk_att_views views;
    oi__vk_attention_views(p, k, &views);
    int in[3], out = views.dst >= 0 ? views.dst : pn->out;
    for (int o = 0; o < 3; o++)
        in[o] = views.src[o] >= 0 ? views.src[o] : pn->inputs[o];
    if (oi__vk_att_tiled(&p->gpu, s, k)) {
        oi__vk_attention_tiled(b, p, k, in, out, &views);
        return;
    }
    oi__vk_attention_sizes(b, pn, S, D, T, Dv);
    oi__buf_printf(b, "shared float oi_p[T]; /* the row's scores, then its probabilities */\n");
    long long rows[4] = {S, T, T, S}, dims[4] = {D, D, Dv, Dv};
    oi__vk_attention_layout(b, &views, H, rows, dims);
    oi__vk_attention_mask(b, s, pn, S, T);
    oi__buf_printf(b, "\nvoid main() {\n    const uint row = gl_WorkGroupID.x, head = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;\n"
                      "    const uint batch = head / H, h = head %% H;\n"
                      "    const uint q_at = batch * H * S * D + h * Q_HS + row * Q_RS, k_at = batch * H * T * D + h * K_HS;\n"
                      "    const uint v_at = batch * H * T * DV + h * V_HS, o_at = batch * H * S * DV + h * O_HS + row * O_RS;\n"
                      "    float m = -INFINITY;\n    for (uint t = tid; t < T; t += %uu) {\n        float acc = 0.0;\n"
                      "        for (uint d = 0u; d < D; d++)\n            acc = OI_S_mac(acc, ", wg);
    oi__vk_name(b, s, in[0]);
    oi__buf_puts(b, "(q_at + d), ");
    oi__vk_name(b, s, in[1]);
    oi__buf_printf(b, "(k_at + t * K_RS + d));\n        oi_p[t] = %s;\n        m = max(m, oi_p[t]);\n    }\n"
                      "    m = oi_wg_max(m);\n    float sum = 0.0;\n    for (uint t = tid; t < T; t += %uu) {\n"
                      "        oi_p[t] = exp_f32(oi_p[t] - m);\n        sum = OI_S_sum_step(sum, oi_p[t]);\n    }\n"
                      "    const float inv = 1.0 / oi_wg_sum(sum); /* its barrier publishes oi_p */\n",
                   oi__vk_attention_masked(pn) ? "masked(SCALE * acc, batch, h, row, t)" : "SCALE * acc", wg);
    if (Dv > (long long)wg || wg % Dv) { /* one value dim per invocation */
        oi__buf_printf(b, "    for (uint d = tid; d < DV; d += %uu) {\n        float acc = 0.0;\n"
                          "        for (uint t = 0u; t < T; t++)\n            acc = OI_S_mac(acc, oi_p[t], ", wg);
        oi__vk_name(b, s, in[2]);
        oi__buf_puts(b, "(v_at + t * V_RS + d));\n        ");
        oi__vk_name(b, s, out);
        oi__buf_puts(b, "(o_at + d) = acc * inv;\n    }\n}\n");
        return;
    }
    /* p V with every invocation: G groups of DV, group g summing the keys
     * t = g mod G, then the G partial sums of each value dim added up */
    oi__buf_printf(b, "    const uint G = %lluu, d = tid %% DV, g = tid / DV;\n    float acc = 0.0;\n"
                      "    for (uint t = g; t < T; t += G)\n        acc = OI_S_mac(acc, oi_p[t], ",
                   (unsigned long long)(wg / Dv));
    oi__vk_name(b, s, in[2]);
    oi__buf_puts(b, "(v_at + t * V_RS + d));\n    oi_partial[tid] = acc;\n    barrier();\n    if (tid < DV) {\n"
                    "        float total = 0.0;\n        for (uint k = 0u; k < G; k++)\n"
                    "            total = OI_S_sum_step(total, oi_partial[k * DV + tid]);\n        ");
    oi__vk_name(b, s, out);
    oi__buf_puts(b, "(o_at + tid) = total * inv;\n    }\n}\n");
}

/* ------------------------------------------------------------------ */
/* Failures the kernels find: reported by the host after the step      */
/* ------------------------------------------------------------------ */
/* A table index past its bound (or negative), or a gather index out of
 * range, is found by a kernel while the step runs. The kernel moves nothing
 * there (or clamps the index) and writes the site's code, the value and
 * the element into status words past the state (the first failure wins);
 * they come down with the step, and NAME_step returns NAME_ERROR_RUNTIME
 * with the simulator's message. A site: a table access's index position
 * (pos >= 0) or a gather (pos -1). */
/* Where the status words are in the state buffer (bytes): past the state. */
static uint64_t oi__vk_status_at(const oi_plan *p) { return (p->schedule.state_bytes + 15u) / 16u * 16u; }

typedef struct oi__vk_site {
    const oi__pnode *pn;
    int pos;
} oi__vk_site;

static void oi__vk_sites_of(const oi__sy_schedule *s, const oi__sy_step *steps, oi__vk_site **out) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_CACHE && s->plan->slots[st->node->var].is_table)
            for (int pos = 0; pos < s->plan->slots[st->node->var].n_indices; pos++) {
                oi__vk_site site = {st->node, pos};
                (void)arrput(*out, site);
            }
        if (st->kind == OI__SY_S_KERNEL && s->kernels[st->kernel].kind == OI__SY_K_GATHER) {
            oi__vk_site site = {s->kernels[st->kernel].nodes[0], -1};
            (void)arrput(*out, site);
        }
        oi__vk_sites_of(s, st->body, out);
        oi__vk_sites_of(s, st->then_steps, out);
        oi__vk_sites_of(s, st->else_steps, out);
    }
}

static int oi__vk_n_sites(const oi__sy_schedule *s) {
    oi__vk_site *sites = NULL;
    oi__vk_sites_of(s, s->steps, &sites);
    int n = (int)arrlen(sites);
    arrfree(sites);
    return n;
}

/* The code a kernel writes for site (pn, pos): 1 + its index. */
static int oi__vk_site_code(const oi__sy_schedule *s, const oi__pnode *pn, int pos) {
    oi__vk_site *sites = NULL;
    oi__vk_sites_of(s, s->steps, &sites);
    int code = 0;
    for (int i = 0; i < (int)arrlen(sites) && !code; i++)
        if (sites[i].pn == pn && sites[i].pos == pos)
            code = i + 1;
    arrfree(sites);
    return code;
}

/* `if (COND) { OI_FAIL(code, value, element); ACTION }` */
static void oi__vk_fail_if(oi__buf *b, const char *indent, const char *cond, int code, const char *value,
                           const char *element, const char *action) {
    oi__buf_printf(b, "%sif (%s) {\n%s    OI_FAIL(%du, %s, %s);%s%s\n%s}\n", indent, cond, indent, code, value, element,
                   action ? " " : "", action ? action : "", indent);
}

/* NAME_failure(code, value, element): the simulator's message for a site. */
static void oi__vk_source_failures(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_schedule *s = &p->schedule;
    oi__vk_site *sites = NULL;
    oi__vk_sites_of(s, s->steps, &sites);
    oi__buf_printf(b, "/* What a kernel found while the step ran (the status words past the state): the\n"
                      " * simulator's message for each site. */\n"
                      "static int %s_failure(int code, long long value, long long element) {\n    (void)element;\n"
                      "    switch (code) {\n", N);
    for (int i = 0; i < (int)arrlen(sites); i++) {
        const oi__pnode *pn = sites[i].pn;
        const char *slash = strrchr(pn->ir->src.file, '/');
        const char *file = slash ? slash + 1 : pn->ir->src.file;
        oi__buf_printf(b, "    case %d:\n", i + 1);
        if (sites[i].pos < 0) {
            const oi__slot *data = oi__vk_slot(s, pn->inputs[0]);
            int64_t axis = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "axis");
            if (axis < 0)
                axis += data->ndim;
            oi__buf_printf(b, "        return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: gather: index %%lld (element %%lld of the \"\n"
                              "                       \"indices) is out of range for axis %d of size %lld\", value, element);\n",
                           N, N, file, pn->ir->src.line, (int)axis, (long long)data->shape[axis]);
            continue;
        }
        const oi__slot *tab = &s->plan->slots[pn->var];
        const char *index = tab->decl->table_indices[sites[i].pos];
        oi__buf_printf(b, "        if (value < 0)\n            return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: %s: index %s = %%lld "
                          "is negative\", value);\n", N, N, file, pn->ir->src.line, tab->name, index);
        oi__buf_printf(b, "        return %s_fail(%s_ERROR_RUNTIME, \"%s:%d: cache table %s index %s = %%lld exceeds %s size "
                          "%lld\", value);\n", N, N, file, pn->ir->src.line, tab->name, index,
                       tab->fixed[sites[i].pos] >= 0 ? "fixed" : "synthesized",
                       (long long)s->buffers[pn->var].bound[sites[i].pos]);
    }
    oi__buf_printf(b, "    default:\n        return %s_fail(%s_ERROR_RUNTIME, \"%s_step: a kernel failed (code %%d)\", code);\n"
                      "    }\n}\n\n", N, N, N);
    arrfree(sites);
}

/* ------------------------------------------------------------------ */
/* A decoder's kernels: rope, argmax, gather, matmul_q4, attention     */
/* over the cache                                                      */
/* ------------------------------------------------------------------ */
/* rope: one invocation per pair of the last dim (interleaved (2i, 2i + 1)
 * or half-split (i, i + rot/2)), both read before either is written, so
 * the op may rotate in place; channels past rot copied. The angle is
 * rope.comp's float-float pos * theta^(-2i / rot) (oi_rope.glsl), close to
 * the simulator's double one at any position. */
static void oi__vk_rope(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *pos = oi__vk_slot(s, pn->inputs[1]);
    const oi__sy_rope_geom g = oi__sy_rope_geom_of(x, pn);
    int64_t n = g.n, rot = g.rot, seq_len = g.seq_len, seq_div = g.seq_div, batch_div = g.batch_div;
    int64_t lanes = g.lanes, half = g.half, per = half + (n - rot);
    bool inter = g.inter;
    double r = pow(oi__vk_param_f(pn, "theta"), -2.0 / (double)rot);
    float r_hi = (float)r, r_lo = (float)(r - (double)r_hi);
    oi__buf_puts(b, "#include \"oi_rope.glsl\"\n\n");
    oi__buf_printf(b, "const uint N = %lldu, HALF = %lldu, PER = %lldu; /* a row, its pairs, pairs + copied channels */\n"
                      "const vec2 R = vec2(", (long long)n, (long long)half, (long long)per);
    oi__sy_render_double(b, (double)r_hi);
    oi__buf_puts(b, ", ");
    oi__sy_render_double(b, (double)r_lo);
    oi__buf_puts(b, "); /* theta^(-2 / rot) as hi + lo */\n\n");
    oi__vk_grid_loop(b, lanes * per, wg);
    oi__buf_puts(b, "        const uint lane = o / PER, j = o % PER, at = lane * N;\n        if (j >= HALF) {\n"
                    "            const uint c = 2u * HALF + (j - HALF);\n            ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(at + c) = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(at + c);\n            continue;\n        }\n        const int p = ");
    oi__vk_name(b, s, pn->inputs[1]);
    oi__buf_printf(b, "(lane / %lldu %% %lldu", (long long)seq_div, (long long)seq_len);
    if (pos->ndim == 2) /* positions per batch: [x.shape[0], seq] */
        oi__buf_printf(b, " + lane / %lldu * %lldu", (long long)batch_div, (long long)seq_len);
    oi__buf_printf(b, ");\n        const uint ia = at + %s, ib = at + %s;\n", inter ? "2u * j" : "j",
                   inter ? "2u * j + 1u" : "j + HALF");
    oi__buf_puts(b, "        const vec2 cs = cos_sin(ff_mul(vec2(float(p), 0.0), ff_pow(R, j)));\n        const float x1 = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(ia), x2 = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(ib);\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(ia) = x1 * cs.x - x2 * cs.y;\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(ib) = x2 * cs.x + x1 * cs.y;\n    }\n}\n");
}

/* argmax_axis along the last axis, one workgroup per row: each invocation
 * runs reduce.c's loop over its share (the first element, then each later
 * one that is greater, or not less with select_first=false), then pairs
 * combine to the greater value, equal ones to the earlier (later) index:
 * the simulator's answer, NaN taken only when it comes first. */
static void oi__vk_argmax(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    bool first = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "select_first") != 0;
    const char *t = x->dtype == OI_DTYPE_F32 ? "float" : "int";
    oi__buf_printf(b, "shared %s oi_bv[%uu];\nshared uint oi_bi[%uu];\n\n", t, wg, wg);
    oi__vk_row_main(b, x->shape[x->ndim - 1]);
    oi__buf_printf(b, "    %s oi_best = ", t);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(r * L);\n    uint oi_at = 0u;\n    for (uint j = 1u + tid; j < L; j += %uu) {\n        const %s v = ", wg, t);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(r * L + j);\n        if (v %s oi_best) {\n            oi_best = v;\n            oi_at = j;\n        }\n    }\n",
                   first ? ">" : ">=");
    oi__buf_printf(b, "    oi_bv[tid] = oi_best;\n    oi_bi[tid] = oi_at;\n    barrier();\n"
                      "    for (uint h = %uu; h > 0u; h >>= 1u) {\n        if (tid < h) {\n"
                      "            const %s v = oi_bv[tid + h];\n            const uint i = oi_bi[tid + h];\n"
                      "            if (v > oi_bv[tid] || (v == oi_bv[tid] && i %s oi_bi[tid])) {\n"
                      "                oi_bv[tid] = v;\n                oi_bi[tid] = i;\n            }\n        }\n"
                      "        barrier();\n    }\n    if (tid == 0u) {\n        ", wg / 2, t, first ? "<" : ">");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(r) = int(oi_bi[0]);\n");
    if (out->dtype == OI_DTYPE_I64) {
        oi__buf_puts(b, "        ");
        oi__vk_name(b, s, pn->out);
        oi__buf_puts(b, "_hi(r) = 0;\n");
    }
    oi__buf_puts(b, "    }\n}\n");
}

/* gather along `axis`: output element o is data[outer, idx[j], inner] (a
 * negative index counts from the end; one out of range is clamped, where
 * the simulator stops with an error). */
static void oi__vk_gather(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *data = oi__vk_slot(s, pn->inputs[0]), *idx = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *out = oi__vk_slot(s, pn->out);
    int64_t axis = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "axis");
    if (axis < 0)
        axis += data->ndim;
    int64_t inner = 1;
    for (int d = (int)axis + 1; d < data->ndim; d++)
        inner *= data->shape[d];
    long long ni = (long long)oi__vk_numel(idx), len = (long long)data->shape[axis];
    oi__buf_printf(b, "const uint NI = %lldu, AXIS = %lldu, INNER = %lldu;\n\n", ni, len, (long long)inner);
    oi__vk_grid_loop(b, oi__vk_numel(out), wg);
    oi__buf_puts(b, "        int ix = ");
    oi__vk_name(b, s, pn->inputs[1]);
    oi__buf_puts(b, "(o / INNER % NI);\n");
    oi__vk_fail_if(b, "        ", "ix < -int(AXIS) || ix >= int(AXIS)", oi__vk_site_code(s, pn, -1), "ix", "int(o / INNER % NI)",
                   NULL);
    oi__buf_puts(b, "        ix = clamp(ix < 0 ? ix + int(AXIS) : ix, 0, int(AXIS) - 1);\n"
                    "        const uint from = (o / (NI * INNER) * AXIS + uint(ix)) * INNER + o % INNER;\n");
    if (data->dtype == OI_DTYPE_F32) {
        oi__buf_puts(b, "        ");
        oi__vk_name(b, s, pn->out);
        oi__buf_puts(b, "(o) = ");
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_puts(b, "(from);\n");
    } else {
        int words = data->dtype == OI_DTYPE_I64 ? 2 : 1;
        for (int w = 0; w < words; w++) {
            oi__buf_puts(b, "        ");
            oi__vk_name(b, s, pn->out);
            oi__buf_printf(b, "_w(%du * o + %du) = ", words, w);
            oi__vk_name(b, s, pn->inputs[0]);
            oi__buf_printf(b, "_w(%du * from + %du);\n", words, w);
        }
    }
    oi__buf_puts(b, "    }\n}\n");
}

/* matmul_q4: x [M, K] by weight rows [N, K / 32 blocks] of ggml blocks
 * (oi_quant_blocks.glsl: matvec_quant.comp's block arithmetic, x rounded to
 * int8 per block with activations="q8"). A workgroup of 64 takes 4 output
 * columns; each column's 16 invocations take every 16th block. */
static void oi__vk_qmatmul(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *w = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *out = oi__vk_slot(s, pn->out);
    const oi__sy_buffer *wb = &s->buffers[pn->inputs[1]];
    const char *format = NULL;
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "format") == 0)
            format = pn->attrs[i].s;
    int f = format && strcmp(format, "q4_0") == 0 ? 1 : format && strcmp(format, "q8_0") == 0 ? 3 : 2;
    long long K = (long long)x->shape[x->ndim - 1], M = (long long)(oi__vk_numel(x) / K);
    long long N = (long long)out->shape[out->ndim - 1];
    oi__buf_printf(b, "const uint M = %lldu, N = %lldu, K = %lldu, ROW_BYTES = %lldu;\n"
                      "#define Q_FORMAT %du /* %s: 1 q4_0, 2 q4_1, 3 q8_0 */\n#define w_buf model_u\n"
                      "#define COLS 4u\n#define SPLIT 16u\n\nfloat x_at(uint m, uint k) { return ",
                   M, N, K, (long long)w->shape[1], f, format ? format : "q4_1");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(m * K + k); }\n\n#include \"oi_quant_blocks.glsl\"\n\nshared float oi_qpart[64];\n\n"
                    "void main() {\n    const uint lane = gl_LocalInvocationID.x % SPLIT, col = gl_LocalInvocationID.x / SPLIT;\n"
                    "    const uint n = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * COLS + col;\n"
                    "    const uint w_at = ");
    if (wb->home == OI__SY_PREFIX) {
        oi__buf_puts(b, "pc.");
        oi__sy_render_param_name(b, w);
        oi__buf_puts(b, "_at * 4u - pc.oi_mb * 4u; /* bytes: the entry the step pushes, in the model's window */\n");
    } else {
        oi__buf_printf(b, "%lluu - pc.oi_mb * 4u; /* bytes into the model's window */\n",
                       (unsigned long long)wb->tensors[0]->data_offset);
    }
    oi__buf_printf(b, "    for (uint m = 0u; m < M; m++) {\n        float sum = 0.0;\n        if (n < N)\n"
                      "            for (uint blk = lane; blk < K / 32u; blk += SPLIT)\n"
                      "                sum += %s(m, blk, w_at + n * ROW_BYTES + blk * block_bytes());\n"
                      "        oi_qpart[gl_LocalInvocationID.x] = sum;\n        barrier();\n"
                      "        for (uint h = SPLIT / 2u; h > 0u; h >>= 1u) {\n"
                      "            if (lane < h)\n"
                      "                oi_qpart[gl_LocalInvocationID.x] += oi_qpart[gl_LocalInvocationID.x + h];\n"
                      "            barrier();\n        }\n        if (lane == 0u && n < N)\n            ",
                   oi__sy_kernel_a8(k) ? "block_q8" : "block_f32");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(m * N + n) = oi_qpart[gl_LocalInvocationID.x];\n        barrier();\n    }\n}\n");
}

/* Where operand o (1 keys, 2 values) of the decoder's attention is: a table
 * slice read in place (its entries in the state, from the read's first
 * index on: `T` entries for the keys) or a variable of its own. Prints
 * OI_KV<o>(i) and, for the keys, the count T. */
static void oi__vk_attn_kv_operand(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int o) {
    int slot = k->view_slot[o];
    const oi__sy_buffer *buf = &s->buffers[slot];
    const oi__pnode *rd = buf->table_view ? oi__vk_view_read(s->steps, slot) : NULL;
    if (!rd) {
        oi__buf_printf(b, "#define OI_KV%d(i) ", o);
        oi__vk_name(b, s, slot);
        oi__buf_puts(b, "(i)\n");
        if (o == 1)
            oi__buf_printf(b, "    const uint T = %lldu;\n", (long long)oi__vk_slot(s, k->nodes[k->lead]->inputs[1])->shape[2]);
        return;
    }
    const oi__slot *tab = &s->plan->slots[rd->var];
    const oi__sy_buffer *tb = &s->buffers[rd->var];
    oi__buf_printf(b, "#define OI_KV%d(i) state[i] /* %s, in place (from %s_at on) */\n", o, tab->name, o == 1 ? "k" : "v");
    int kept = -1;
    for (int i = 0; i < (int)arrlen(rd->access); i++)
        if (rd->access[i].is_slice)
            kept = i;
    const char *w = o == 1 ? "k" : "v";
    oi__buf_printf(b, "    const int %s_lo = ", w);
    if (rd->access[kept].has_start)
        oi__vk_glsl_expr(b, s, &rd->access[kept].start);
    else
        oi__buf_puts(b, "0");
    int code = oi__vk_site_code(s, rd, kept);
    char cond[96], lo[16];
    snprintf(lo, sizeof lo, "%s_lo", w);
    if (o == 1) {
        oi__buf_puts(b, ", k_hi = ");
        oi__vk_glsl_expr(b, s, &rd->access[kept].end);
        oi__buf_printf(b, ";\n    /* the slice's entries, none past the table's bound (%lld) */\n"
                          "    const uint T = uint(clamp(min(k_hi, %lld) - max(k_lo, 0), 0, int(TMAX)));\n",
                       (long long)tb->bound[kept], (long long)tb->bound[kept]);
        snprintf(cond, sizeof cond, "k_hi > %lld", (long long)tb->bound[kept]);
        oi__vk_fail_if(b, "    ", cond, code, "k_hi - 1", "0", NULL);
    } else {
        oi__buf_puts(b, ";\n");
    }
    snprintf(cond, sizeof cond, "%s < 0", lo);
    oi__vk_fail_if(b, "    ", cond, code, lo, "0", NULL);
    for (int i = 0; i < tab->n_indices; i++) {
        if (i == kept)
            continue;
        oi__buf mark;
        memset(&mark, 0, sizeof mark);
        oi__vk_glsl_expr(&mark, s, &rd->access[i].single);
        char c2[256];
        snprintf(c2, sizeof c2, "%s < 0 || %s >= %lld", mark.data, mark.data, (long long)tb->bound[i]);
        oi__vk_fail_if(b, "    ", c2, oi__vk_site_code(s, rd, i), mark.data, "0", NULL);
        oi__buf_free(&mark);
    }
    oi__buf_printf(b, "    const uint %s_at = %lluu + uint(", w, (unsigned long long)(tb->offset / 4));
    for (int i = 0; i < tab->n_indices; i++) {
        int64_t stride = 1;
        for (int j = i + 1; j < tab->n_indices; j++)
            stride *= tb->bound[j];
        oi__buf_puts(b, i ? " + " : "");
        if (i == kept) {
            oi__buf_printf(b, "max(%s_lo, 0)", w);
        } else {
            oi__buf_puts(b, "clamp(");
            oi__vk_glsl_expr(b, s, &rd->access[i].single);
            oi__buf_printf(b, ", 0, %lld)", (long long)tb->bound[i] - 1);
        }
        oi__buf_printf(b, " * %lld", (long long)stride);
    }
    oi__buf_printf(b, ") * %lldu;\n", (long long)oi__shape_numel(tab->ndim, tab->shape));
}

/* Grouped-query attention as a decoder runs it: one workgroup per query row
 * (batch, head, position) over its kv head's keys, which may be a table
 * slice whose length the step computes on the device (K[l, 0..step+1]):
 * the scores in shared memory, their softmax, then p V per value dim. */
static void oi__vk_attn_kv(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[k->lead];
    const oi__slot *q = oi__vk_slot(s, pn->inputs[0]), *kk = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *v = oi__vk_slot(s, pn->inputs[2]);
    long long B = (long long)q->shape[0], HQ = (long long)q->shape[1], S = (long long)q->shape[2];
    long long D = (long long)q->shape[3], HKV = (long long)kk->shape[1], DV = (long long)v->shape[3];
    long long TMAX = (long long)kk->shape[2];
    const oi__pnode *rd = s->buffers[k->view_slot[1]].table_view ? oi__vk_view_read(s->steps, k->view_slot[1]) : NULL;
    for (int i = 0; rd && i < (int)arrlen(rd->access); i++)
        if (rd->access[i].is_slice)
            TMAX = (long long)s->buffers[rd->var].bound[i];
    double scale = oi__op_param_given(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "scale") ? oi__vk_param_f(pn, "scale")
                                                                                         : 1.0 / sqrt((double)D);
    oi__buf_printf(b, "const uint B = %lldu, HQ = %lldu, HKV = %lldu, S = %lldu, D = %lldu, DV = %lldu;\n"
                      "const uint TMAX = %lldu; /* keys at most (the table's bound) */\nconst float SCALE = ",
                   B, HQ, HKV, S, D, DV, TMAX);
    oi__sy_render_double(b, (double)(float)scale);
    oi__buf_puts(b, ";\n/* element strides of q, k, v and the result's [B, H, S|T, D] dims where each lives */\n");
    const char *what[4] = {"Q", "K", "V", "O"};
    for (int o = 0; o < 4; o++)
        oi__buf_printf(b, "const uint %s_S0 = %lldu, %s_S1 = %lldu, %s_S2 = %lldu, %s_S3 = %lldu;\n", what[o],
                       (long long)k->view_stride[o][0], what[o], (long long)k->view_stride[o][1], what[o],
                       (long long)k->view_stride[o][2], what[o], (long long)k->view_stride[o][3]);
    oi__buf_puts(b, "shared float oi_p[TMAX]; /* the row's scores, then exp(score - max) */\n"
                    "shared float oi_q[D];    /* the row's query */\n\nvoid main() {\n"
                    "    const uint row = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;\n"
                    "    const uint si = row % S, hq = row / S % HQ, bi = row / (S * HQ), hk = hq / (HQ / HKV);\n");
    oi__vk_attn_kv_operand(b, s, k, 1);
    oi__vk_attn_kv_operand(b, s, k, 2);
    if (!s->buffers[k->view_slot[1]].table_view)
        oi__buf_puts(b, "    const uint k_at = 0u;\n");
    if (!s->buffers[k->view_slot[2]].table_view)
        oi__buf_puts(b, "    const uint v_at = 0u;\n");
    oi__buf_printf(b, "    for (uint d = tid; d < D; d += %uu)\n        oi_q[d] = ", wg);
    oi__vk_name(b, s, k->view_slot[0]);
    oi__buf_printf(b, "(bi * Q_S0 + hq * Q_S1 + si * Q_S2 + d * Q_S3);\n    barrier();\n    float m = -INFINITY;\n"
                      "    for (uint t = tid; t < T; t += %uu) {\n"
                      "        const uint at = k_at + bi * K_S0 + hk * K_S1 + t * K_S2;\n        float acc = 0.0;\n"
                      "        for (uint d = 0u; d < D; d++)\n            acc = OI_S_mac(acc, oi_q[d], OI_KV1(at + d * K_S3));\n"
                      "        oi_p[t] = SCALE * acc;\n        m = max(m, oi_p[t]);\n    }\n    m = oi_wg_max(m);\n"
                      "    float sum = 0.0;\n    for (uint t = tid; t < T; t += %uu) {\n"
                      "        oi_p[t] = exp_f32(oi_p[t] - m);\n        sum = OI_S_sum_step(sum, oi_p[t]);\n    }\n"
                      "    const float inv = 1.0 / oi_wg_sum(sum); /* its barrier: every score is in oi_p */\n"
                      "    for (uint d = tid; d < DV; d += %uu) {\n        float acc = 0.0;\n"
                      "        for (uint t = 0u; t < T; t++)\n"
                      "            acc = OI_S_mac(acc, oi_p[t], OI_KV2(v_at + bi * V_S0 + hk * V_S1 + t * V_S2 + d * V_S3));\n"
                      "        ", wg, wg, wg);
    oi__vk_name(b, s, k->view_slot[3]);
    oi__buf_puts(b, "(bi * O_S0 + hq * O_S1 + si * O_S2 + d * O_S3) = acc * inv;\n    }\n}\n");
}

/* Workgroups of a kernel's dispatch (x, y). */
static void oi__vk_groups(const oi_plan *p, const oi__sy_kernel *k, uint32_t *gx, uint32_t *gy) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__vk_slot(s, pn->out), *in = oi__vk_slot(s, pn->inputs[0]);
    uint32_t wg = p->gpu.workgroup;
    *gy = 1;
    switch (k->kind) {
    case OI__SY_K_MATMUL: {
        if (oi__vk_cm_takes(&p->gpu, s, k)) {
            *gx = (uint32_t)((out->shape[1] + p->gpu.cm.bn - 1) / p->gpu.cm.bn);
            *gy = (uint32_t)((out->shape[0] + p->gpu.cm.bm - 1) / p->gpu.cm.bm);
            return;
        }
        oi__vk_mm_tiles t = oi__vk_mm_tiles_of(&p->gpu, s, k);
        *gx = (uint32_t)((out->shape[1] + t.side * t.reg_n - 1) / (t.side * t.reg_n));
        *gy = (uint32_t)((out->shape[0] + t.side * t.reg - 1) / (t.side * t.reg));
        return;
    }
    case OI__SY_K_SOFTMAX: case OI__SY_K_NORM: case OI__SY_K_ARGMAX:
        *gx = (uint32_t)(oi__vk_numel(in) / in->shape[in->ndim - 1]);
        return;
    case OI__SY_K_QMATMUL: { /* 4 columns a workgroup, past 65535 in rows of them */
        int64_t groups = (out->shape[out->ndim - 1] + 3) / 4;
        *gx = (uint32_t)(groups > 65535 ? 65535 : groups);
        *gy = (uint32_t)((groups + *gx - 1) / *gx);
        return;
    }
    case OI__SY_K_ATTN_KV: {
        const oi__slot *q = oi__vk_slot(s, k->nodes[k->lead]->inputs[0]);
        *gx = (uint32_t)(q->shape[0] * q->shape[1] * q->shape[2]);
        return;
    }
    case OI__SY_K_REDUCE: *gx = (uint32_t)oi__vk_numel(out); return;
    case OI__SY_K_ATTENTION:
        *gx = (uint32_t)in->shape[2];
        if (oi__vk_att_tiled(&p->gpu, s, k))
            *gx = (uint32_t)((in->shape[2] + OI__VK_ATT_ROWS - 1) / OI__VK_ATT_ROWS);
        *gy = (uint32_t)(in->shape[0] * in->shape[1]);
        return;
    default: {
        int64_t groups = (oi__vk_numel(out) + wg - 1) / wg;
        *gx = (uint32_t)(groups > 65535 ? 65535 : groups < 1 ? 1 : groups);
        return;
    }
    }
}

/* A kernel's workgroup: the device's (oi__sy_gpu.workgroup); a matmul's
 * T x T; attention's no wider than its rows (keys or value dims, at least
 * a warp's 32), so few invocations idle. */
static uint32_t oi__vk_kernel_wg(const oi_plan *p, const oi__sy_kernel *k) {
    uint32_t wg = p->gpu.workgroup;
    if (k->kind == OI__SY_K_MATMUL && oi__vk_cm_takes(&p->gpu, &p->schedule, k))
        return 32u * p->gpu.cm.wg_m * p->gpu.cm.wg_n;
    if (k->kind == OI__SY_K_MATMUL) {
        int side = oi__vk_mm_tiles_of(&p->gpu, &p->schedule, k).side;
        return (uint32_t)(side * side);
    }
    if (oi__vk_att_tiled(&p->gpu, &p->schedule, k))
        return oi__vk_att_tiled_wg(&p->gpu);
    if (k->kind == OI__SY_K_QMATMUL)
        return 64; /* 4 columns of 16 */
    if (k->kind == OI__SY_K_ATTN_KV || k->kind == OI__SY_K_ARGMAX) { /* a power of two: the trees halve it */
        uint32_t want = 1;
        while (want * 2 <= wg && want * 2 <= (k->kind == OI__SY_K_ATTN_KV ? 64u : 256u))
            want *= 2;
        return want;
    }
    if (k->kind == OI__SY_K_ATTENTION) {
        const oi__slot *kk = oi__vk_slot(&p->schedule, k->nodes[0]->inputs[1]);
        const oi__slot *v = oi__vk_slot(&p->schedule, k->nodes[0]->inputs[2]);
        int64_t widest = kk->shape[2] > v->shape[3] ? kk->shape[2] : v->shape[3];
        uint32_t want = 32;
        while (want < widest && want < wg)
            want *= 2;
        return want < wg ? want : wg;
    }
    return wg;
}

/* Every statement `NAME(index) = value;` of a kernel becomes
 * `oi_st_NAME(index) = float16_t(value);` for a variable stored as f16,
 * `NAME_write(index, value);` for a bool (a byte among the words), and
 * `arena[SCRATCH + (index)] = value;` (arena16 and float16_t for f16) for an
 * in-place matmul's result (scratch: its first element there, else
 * UINT64_MAX): the kernels' bodies only ever store a variable that way.
 * Frees text. */
static char *oi__vk_rewrite_stores(char *text, const oi__slot *sl, bool half, uint64_t scratch) {
    bool byte = sl->dtype == OI_DTYPE_BOOL;
    oi__buf name, b;
    memset(&name, 0, sizeof name);
    memset(&b, 0, sizeof b);
    oi__sy_render_param_name(&name, sl);
    oi__buf_puts(&name, "(");
    for (const char *line = text; name.data && *line;) {
        const char *end = strchr(line, '\n');
        end = end ? end + 1 : line + strlen(line);
        const char *at = line;
        while (*at == ' ')
            at++;
        int depth = 1;
        const char *close = strncmp(at, name.data, name.len) == 0 ? at + name.len : NULL;
        for (; close && close < end && depth > 0; close++)
            depth += *close == '(' ? 1 : *close == ')' ? -1 : 0;
        const char *semi = close ? end - 1 - (end[-1] == '\n') : NULL; /* the line holds NAME(: not empty */
        if (close && depth == 0 && strncmp(close, " = ", 3) == 0 && semi > close + 3 && *semi == ';') {
            oi__buf_append(&b, line, (size_t)(at - line));
            if (scratch != UINT64_MAX) { /* arena[SCRATCH + (index)] = value; */
                oi__buf_printf(&b, "%s[%lluu + (", half ? "arena16" : "arena", (unsigned long long)scratch);
                oi__buf_append(&b, at + name.len, (size_t)(close - 1 - at - name.len));
                oi__buf_puts(&b, half ? ")] = float16_t(" : ")] = (");
            } else if (byte) { /* NAME_write(index, value); */
                oi__buf_append(&b, at, name.len - 1);
                oi__buf_puts(&b, "_write(");
                oi__buf_append(&b, at + name.len, (size_t)(close - 1 - at - name.len));
                oi__buf_puts(&b, ", ");
            } else {
                oi__buf_puts(&b, "oi_st_");
                oi__buf_append(&b, at, (size_t)(close - at));
                oi__buf_puts(&b, " = float16_t(");
            }
            oi__buf_append(&b, close + 3, (size_t)(semi - close - 3));
            oi__buf_puts(&b, ");\n");
        } else {
            oi__buf_append(&b, line, (size_t)(end - line));
        }
        line = end;
    }
    oi__buf_free(&name);
    oi__free(text);
    return oi__buf_take(&b);
}

/* A kernel's main and what it needs besides the head. */
static void oi__vk_kernel_body(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, uint32_t wg) {
    const oi__sy_schedule *s = &p->schedule;
    if (oi__vk_uses_reductions(k))
        oi__vk_reduce_helpers(b, &p->gpu, wg);
    switch (k->kind) {
    case OI__SY_K_ELEMENTWISE: oi__vk_elementwise(b, s, k, wg); break;
    case OI__SY_K_MATMUL:
        if (oi__vk_cm_takes(&p->gpu, s, k))
            oi__vk_matmul_coopmat(b, s, k, &p->gpu);
        else
            oi__vk_matmul(b, p, k);
        break;
    case OI__SY_K_REDUCE: oi__vk_reduce(b, s, k, wg); break;
    case OI__SY_K_SOFTMAX: oi__vk_softmax(b, s, k, wg); break;
    case OI__SY_K_COPY: oi__vk_copy(b, s, k, wg); break;
    case OI__SY_K_TRANSPOSE: oi__vk_transpose(b, s, k, wg); break;
    case OI__SY_K_NORM: oi__vk_norm(b, s, k, wg); break;
    case OI__SY_K_ATTENTION: oi__vk_attention(b, p, k, wg); break;
    case OI__SY_K_ROPE: oi__vk_rope(b, s, k, wg); break;
    case OI__SY_K_ARGMAX: oi__vk_argmax(b, s, k, wg); break;
    case OI__SY_K_GATHER: oi__vk_gather(b, s, k, wg); break;
    case OI__SY_K_QMATMUL: oi__vk_qmatmul(b, s, k); break;
    case OI__SY_K_ATTN_KV: oi__vk_attn_kv(b, s, k, wg); break;
    case OI__SY_K_ALL_FINITE: oi__vk_all_finite(b, s, k, wg); break;
    case OI__SY_K_CONV: oi__vk_conv(b, s, k, wg); break;
    case OI__SY_K_POOL: oi__vk_pool(b, s, k, wg); break;
    case OI__SY_K_LAYOUT: oi__vk_layout(b, s, k, wg); break;
    }
}

/* A cache statement's kernel (module m): a counter stepped, or a table entry
 * written from (or read into) a value, at indices the kernel evaluates. An
 * entry past the table's bound is not moved (the simulator stops there). */
static char *oi__vk_cache_source(const oi_plan *p, int m, const oi__pnode *pn) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__slot *sl = &s->plan->slots[pn->var];
    const oi__sy_buffer *tb = &s->buffers[pn->var];
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "#version 450\n// %s_k%d.comp - a cache statement (synthesized by OpenInfer for %s)\n//   ", p->name, m,
                   p->gpu.device_name);
    oi__sy_render_stmt(&b, pn);
    oi__buf_puts(&b, "\n#include \"oi_kernel.glsl\"\n\nlayout(local_size_x = 64) in;\n");
    oi__vk_loops loops = {{NULL}, 0};
    oi__vk_loops_of(s->steps, -1, pn, &loops);
    if (loops.n > 0) {
        oi__buf_puts(&b, "layout(push_constant) uniform Push {");
        for (int l = 0; l < loops.n; l++)
            oi__buf_printf(&b, " int lv_%s;", loops.var[l]);
        oi__buf_puts(&b, " } pc; /* set when the step is recorded */\n");
    }
    oi__buf_puts(&b, "\nvoid main() {\n");
    if (!sl->is_table) { /* a counter: every element plus the amount */
        int64_t amount = pn->ir->kind == OI__NODE_CACHE_DECREMENT ? -pn->ir->amount : pn->ir->amount;
        unsigned long long at = (unsigned long long)(tb->offset / 4);
        oi__buf_printf(&b, "    const uint i = gl_GlobalInvocationID.x;\n    if (i < %lldu)\n",
                       (long long)oi__shape_numel(sl->ndim, sl->shape));
        if (sl->dtype == OI_DTYPE_I32) /* wraps, as the simulator's */
            oi__buf_printf(&b, "        state_i[%lluu + i] = int(uint(state_i[%lluu + i]) + uint(%lld));\n}\n", at, at,
                           (long long)amount);
        else
            oi__buf_printf(&b, "        state[%lluu + i] = state[%lluu + i] + %lld.0;\n}\n", at, at, (long long)amount);
        return oi__buf_take(&b);
    }
    static const char *const names[OI_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
    for (int i = 0; i < sl->n_indices; i++) {
        oi__buf_printf(&b, "    const int %s = ", names[i]);
        oi__vk_glsl_expr(&b, s, &pn->access[i].single);
        oi__buf_puts(&b, ";\n");
    }
    for (int i = 0; i < sl->n_indices; i++) { /* past the table's bound: nothing moves, the host reports it */
        char cond[96];
        snprintf(cond, sizeof cond, "%s < 0 || %s >= %lld", names[i], names[i], (long long)tb->bound[i]);
        oi__vk_fail_if(&b, "    ", cond, oi__vk_site_code(s, pn, i), names[i], "0", "return;");
    }
    uint64_t words = tb->bytes / 4;
    oi__buf_printf(&b, "    const uint at = %lluu + uint(", (unsigned long long)(tb->offset / 4));
    for (int i = 0; i < sl->n_indices; i++) {
        int64_t stride = 1;
        for (int j = i + 1; j < sl->n_indices; j++)
            stride *= tb->bound[j];
        oi__buf_printf(&b, "%s%s * %lld", i ? " + " : "", names[i], (long long)stride);
    }
    oi__buf_printf(&b, ") * %lluu; /* the entry's first word */\n", (unsigned long long)words);
    int other = pn->out;
    const oi__sy_buffer *ob = &s->buffers[oi__vk_storage(s, other)];
    bool half = oi__vk_half(&p->gpu, s, other);
    const char *buf = ob->home == OI__SY_ARENA ? "arena" : "state";
    unsigned long long oat = (unsigned long long)(ob->offset / (half ? 2 : 4));
    oi__buf_printf(&b, "    for (uint o = gl_GlobalInvocationID.x; o < %lluu; o += gl_NumWorkGroups.x * 64u)\n        ",
                   (unsigned long long)words);
    if (pn->ir->kind == OI__NODE_CACHE_WRITE && half)
        oi__buf_printf(&b, "state[at + o] = float(arena16[%lluu + o]); /* %s: a temporary stored as f16 */\n", oat,
                       s->plan->slots[other].name);
    else if (pn->ir->kind == OI__NODE_CACHE_WRITE)
        oi__buf_printf(&b, "state_i[at + o] = %s_i[%lluu + o]; /* from %s */\n", buf, oat, s->plan->slots[other].name);
    else if (half)
        oi__buf_printf(&b, "arena16[%lluu + o] = float16_t(state[at + o]); /* %s: a temporary stored as f16 */\n", oat,
                       s->plan->slots[other].name);
    else
        oi__buf_printf(&b, "%s_i[%lluu + o] = state_i[at + o]; /* into %s */\n", buf, oat, s->plan->slots[other].name);
    oi__buf_puts(&b, "}\n");
    return oi__buf_take(&b);
}

/* A kernel in a block of a branch on a variable returns at once where the
 * condition says the block is not taken: whole dispatches return, so no
 * barrier() is left waiting. `text` (a kernel's GLSL) gets the tests at the
 * start of its main. */
static char *oi__vk_guard(const oi__sy_schedule *s, char *text, const oi__vk_guards *g) {
    const char *main_at = text && g->n > 0 ? strstr(text, "void main() {\n") : NULL;
    if (!main_at)
        return text;
    size_t head = (size_t)(main_at - text) + strlen("void main() {\n");
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "%.*s", (int)head, text);
    for (int i = 0; i < g->n; i++) {
        const oi__pnode *br = g->branch[i];
        const oi__sy_buffer *cond = &s->buffers[br->var];
        oi__buf_puts(&b, "    /* in the block ");
        oi__sy_render_stmt(&b, br);
        oi__buf_printf(&b, " takes when %s is %s */\n    if (OI_BYTE_READ(%s, %lluu) %s 0u)\n        return;\n",
                       s->plan->slots[br->var].name, g->when_true[i] ? "true" : "false",
                       cond->home == OI__SY_ARENA ? "arena_i" : "state_i", (unsigned long long)cond->offset,
                       g->when_true[i] ? "==" : "!=");
    }
    oi__buf_puts(&b, text + head);
    oi__free(text);
    return oi__buf_take(&b);
}

/* Module m's GLSL: a kernel of the schedule, or a cache statement's. */
static char *oi__vk_kernel_source(const oi_plan *p, int m) {
    const oi__sy_schedule *s = &p->schedule;
    int first_cache = oi__vk_cache_module(p, NULL);
    if (m >= first_cache) {
        const oi__pnode **nodes = NULL;
        oi__vk_cache_nodes(s, s->steps, &nodes);
        oi__vk_guards g = oi__vk_guards_around(s, -1, nodes[m - first_cache]);
        char *text = oi__vk_guard(s, oi__vk_cache_source(p, m, nodes[m - first_cache]), &g);
        arrfree(nodes);
        return text;
    }
    const oi__sy_kernel *k = &s->kernels[m];
    oi__sy_param *params = oi__vk_params(p, k);
    uint32_t wg = oi__vk_kernel_wg(p, k);
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__vk_kernel_head(&b, p, k, params, wg, m);
    oi__vk_kernel_body(&b, p, k, wg);
    char *text = oi__buf_take(&b);
    for (int i = 0; text && i < (int)arrlen(params); i++) {
        int slot = params[i].slot;
        bool half = oi__vk_half(&p->gpu, s, slot), in_place = oi__vk_in_place(k) && slot == k->nodes[0]->out;
        uint64_t scratch = in_place ? oi__vk_scratch_offset(p) / (half ? 2u : 4u) : UINT64_MAX;
        if (params[i].written && (half || in_place || oi__vk_slot(s, slot)->dtype == OI_DTYPE_BOOL))
            text = oi__vk_rewrite_stores(text, oi__vk_slot(s, slot), half, scratch);
    }
    arrfree(params);
    oi__vk_guards g = oi__vk_guards_around(s, k->id, NULL);
    return oi__vk_guard(s, text, &g);
}

static char *oi__vk_kernel_glsl(const oi_plan *p) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "// oi_kernel.glsl - what every kernel of %s includes: its three buffers (f32\n"
                       "// words), the NaN/inf tests of vulkan/shaders/common.glsl, each op's\n"
                       "// arithmetic (oi_scalar.h: kernels/scalar.h) and math.glsl's functions.\n", p->name);
    oi__buf_puts(&b, "#ifndef OI_KERNEL_GLSL\n#define OI_KERNEL_GLSL\n\n");
    if (p->gpu.fp16_storage)
        oi__buf_puts(&b, "#extension GL_EXT_shader_16bit_storage : require\n"
                         "/* the same arena as f16: temporaries stored as f16 (default_precision fp16) */\n"
                         "layout(std430, binding = 0) buffer Arena16 { float16_t arena16[]; };\n");
    oi__buf_puts(&b, "layout(std430, binding = 0) buffer Arena { float arena[]; }; /* the temporaries (plan.json) */\n"
                     "layout(std430, binding = 1) buffer State { float state[]; }; /* the declared variables, the tables */\n"
                     "layout(std430, binding = 2) readonly buffer Model { float model[]; }; /* the .oinf file */\n"
                     "/* the same words as integers: i32 and i64 (two words, the low one first) values, u8 blocks */\n"
                     "layout(std430, binding = 0) buffer ArenaI { int arena_i[]; };\n"
                     "layout(std430, binding = 1) buffer StateI { int state_i[]; };\n"
                     "layout(std430, binding = 2) readonly buffer ModelU { uint model_u[]; };\n\n");
    if (oi__vk_n_sites(&p->schedule) > 0)
        oi__buf_printf(&b, "/* A failure a kernel finds (a table or gather index out of range): its site's code, the\n"
                           " * value and the element, in the status words past the state; the first one stays */\n"
                           "#define OI_FAIL(code, value, element) \\\n"
                           "    if (atomicCompSwap(state_i[%lluu], 0, int(code)) == 0) { \\\n"
                           "        state_i[%lluu] = int(value); \\\n        state_i[%lluu] = int(element); \\\n    }\n\n",
                       (unsigned long long)(oi__vk_status_at(p) / 4), (unsigned long long)(oi__vk_status_at(p) / 4 + 1),
                       (unsigned long long)(oi__vk_status_at(p) / 4 + 2));
    if (oi__vk_has_bytes(&p->schedule))
        oi__buf_puts(&b, "/* A bool: the byte at byte offset `at` of a buffer's words, read; and written without\n"
                         " * touching the bytes beside it in its word (another value's) */\n"
                         "#define OI_BYTE_READ(words, at) ((uint(words[(at) >> 2]) >> (8u * ((at) & 3u))) & 0xffu)\n"
                         "#define OI_BYTE_WRITE(words, at, v) { \\\n"
                         "    atomicAnd(words[(at) >> 2], ~int(0xffu << (8u * ((at) & 3u)))); \\\n"
                         "    atomicOr(words[(at) >> 2], int((uint(v) & 0xffu) << (8u * ((at) & 3u)))); \\\n}\n\n");
    oi__sy_lines(&b, oi__sy_text_float_glsl);
    oi__buf_puts(&b, "#include \"oi_scalar.h\"\n#include \"oi_math.glsl\"\n\n"
                     "/* floats compute in float (as the simulator's shaders): no rounding between ops */\n"
                     "#define OI_ROUND_F32(x) (x)\n"
                     "/* the bits, not x - x == 0 and x != x: shader compilers fold those to true and false */\n"
                     "#undef OI_S_isfinite\n#define OI_S_isfinite(a) (!is_nan_f(a) && !is_inf_f(a))\n"
                     "#undef OI_S_is_nan\n#define OI_S_is_nan(a) is_nan_f(a)\n#define NAN NAN_F\n#define INFINITY INF_F\n\n#endif\n");
    return oi__buf_take(&b);
}

/* ------------------------------------------------------------------ */
/* The host code                                                       */
/* ------------------------------------------------------------------ */
static bool oi__vk_getter(const oi_plan *p, int slot) {
    const oi__sy_buffer *b = &p->schedule.buffers[slot];
    if (b->dyn0)
        return false;
    if (b->home == OI__SY_STATE || b->home == OI__SY_MODEL)
        return true;
    return b->home == OI__SY_ARENA && b->kept;
}

/* {OI_VK_ARENA, offset, bytes} of a stored variable; false for the model. */
static bool oi__vk_range(oi__buf *b, const oi__sy_schedule *s, int slot) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    const oi__pnode *rd = buf->table_view ? oi__vk_view_read(s->steps, slot) : NULL;
    if (rd || buf->home == OI__SY_TABLE) { /* a table slice read in place: the whole table */
        const oi__sy_buffer *tb = &s->buffers[rd ? rd->var : slot];
        oi__buf_printf(b, "{OI_VK_STATE, %llu, %llu}", (unsigned long long)tb->offset,
                       (unsigned long long)(tb->bytes * (uint64_t)tb->table_entries));
        return true;
    }
    if (buf->home != OI__SY_ARENA && buf->home != OI__SY_STATE)
        return false;
    buf = &s->buffers[oi__vk_storage(s, slot)]; /* a reshape's result: its input's bytes */
    oi__buf_printf(b, "{%s, %llu, %llu}", buf->home == OI__SY_ARENA ? "OI_VK_ARENA" : "OI_VK_STATE",
                   (unsigned long long)buf->offset, (unsigned long long)buf->bytes);
    return true;
}

/* A loop bound or prefix index: a literal, a named size, a loop index. */
static void oi__vk_expr(oi__buf *b, const oi__sy_schedule *s, const oi__expr *e) {
    int64_t v;
    if (!e->ident)
        oi__buf_printf(b, "%lld", (long long)e->lit);
    else if (oi__plan_size(s->plan, e->ident, &v))
        oi__buf_printf(b, "%lld", (long long)v);
    else
        oi__buf_puts(b, e->ident);
}

static void oi__vk_indent(oi__buf *b, int depth) {
    for (int i = 0; i < depth; i++)
        oi__buf_puts(b, "    ");
}

/* `static const oi_vk_range NAME[] = {...};`: what the params read (or
 * write), and `extra` if not NULL (before the reads, after the writes). */
static void oi__vk_ranges(oi__buf *b, const oi__sy_schedule *s, const oi__sy_param *params, bool writes,
                          const char *name, int depth, int *count, const char *extra) {
    oi__buf list;
    memset(&list, 0, sizeof list);
    *count = 0;
    if (extra && !writes) { /* one range or several, each in braces: first among reads, last among writes */
        oi__buf_puts(&list, extra);
        for (const char *c = extra; *c; c++)
            *count += *c == '{';
    }
    for (int i = 0; i < (int)arrlen(params); i++) {
        if (writes && !params[i].written)
            continue;
        oi__buf mark;
        memset(&mark, 0, sizeof mark);
        if (oi__vk_range(&mark, s, params[i].slot)) {
            oi__buf_printf(&list, "%s%s", *count ? ", " : "", mark.data);
            (*count)++;
        }
        oi__buf_free(&mark);
    }
    if (extra && writes) { /* after the variables: the debug dump's copies index the first ones */
        oi__buf_printf(&list, "%s%s", *count ? ", " : "", extra);
        for (const char *c = extra; *c; c++)
            *count += *c == '{';
    }
    if (*count) {
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "static const oi_vk_range %s[] = {%s};\n", name, list.data);
    }
    oi__buf_free(&list);
}

/* The debug build: after the dispatch, each stored variable the kernel
 * wrote is copied into a host-visible buffer of its own (same order as
 * the `writes` ranges), written out after the step. */
static void oi__vk_record_dump(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, const oi__sy_param *params,
                               int depth) {
    const oi__sy_schedule *s = &p->schedule;
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n", p->name);
    int n = 0;
    for (int i = 0; i < (int)arrlen(params); i++) {
        const oi__sy_buffer *buf = &s->buffers[params[i].slot];
        if (!params[i].written || (buf->home != OI__SY_ARENA && buf->home != OI__SY_STATE))
            continue;
        const oi__slot *sl = oi__vk_slot(s, params[i].slot);
        oi_dtype stored = oi__vk_half(&p->gpu, s, params[i].slot) ? OI_DTYPE_F16 : sl->dtype;
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "if (%s_dump_record(ctx, cb, %d, \"%s\", %d, %lluu, &writes[%d]))\n", p->name, k->id, sl->name,
                       (int)stored, (unsigned long long)oi__vk_numel(sl), n++);
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "return 1;\n");
    }
    oi__buf_puts(b, "#endif\n");
}

static const char *oi__vk_file(const oi__pnode *pn) {
    const char *slash = strrchr(pn->ir->src.file, '/');
    return slash ? slash + 1 : pn->ir->src.file;
}

/* The conditions of the branches around a kernel or cache statement, among
 * what it reads (a barrier after the kernel that computes one). */
static void oi__vk_guard_reads(oi__buf *reads, const oi__sy_schedule *s, int kernel, const oi__pnode *node) {
    oi__vk_guards g = oi__vk_guards_around(s, kernel, node);
    for (int i = 0; i < g.n; i++) {
        oi__buf_puts(reads, reads->len ? ", " : "");
        oi__vk_range(reads, s, g.branch[i]->var);
    }
}

static void oi__vk_record_kernel(oi__buf *b, const oi_plan *p, const oi__sy_step *st, int depth) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__sy_kernel *k = &s->kernels[st->kernel];
    if (oi__vk_folded(p, k)) {
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "/* k%d, %s: %s:%d: not dispatched, the attention reads or writes in place */\n", k->id,
                       oi__sy_kernel_kind_name(k->kind), oi__vk_file(k->nodes[0]), k->nodes[0]->ir->src.line);
        return;
    }
    if (oi__vk_aliased_reshape(s, k)) {
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "/* k%d, %s: %s:%d: not dispatched, %s is kept in %s's bytes */\n", k->id,
                       oi__sy_kernel_kind_name(k->kind), oi__vk_file(k->nodes[0]), k->nodes[0]->ir->src.line,
                       s->plan->slots[k->nodes[0]->out].name, s->plan->slots[k->nodes[0]->inputs[0]].name);
        return;
    }
    oi__sy_param *params = oi__vk_params(p, k);
    oi__vk_indent(b, depth);
    oi__buf_printf(b, "{ /* k%d, %s: %s:%d", k->id, oi__sy_kernel_kind_name(k->kind), oi__vk_file(k->nodes[0]),
                   k->nodes[0]->ir->src.line);
    if (arrlen(k->nodes) > 1)
        oi__buf_printf(b, "-%d", k->nodes[arrlen(k->nodes) - 1]->ir->src.line);
    oi__buf_puts(b, " */\n");
    int n_reads = 0, n_writes = 0;
    oi__buf scalars; /* the decoder's attention: the counters its slices' bounds read */
    memset(&scalars, 0, sizeof scalars);
    for (int o = 1; k->kind == OI__SY_K_ATTN_KV && o < 3; o++) {
        const oi__pnode *rd = s->buffers[k->view_slot[o]].table_view ? oi__vk_view_read(s->steps, k->view_slot[o]) : NULL;
        oi__vk_scalars sc;
        memset(&sc, 0, sizeof sc); /* no slice read: no scalars (no compound literal: the C++17 build) */
        sc.s = s, sc.ok = true;
        if (rd)
            sc = oi__vk_access_scalars(s, rd);
        for (int i = 0; i < sc.n; i++) {
            oi__buf_puts(&scalars, scalars.len ? ", " : "");
            oi__vk_range(&scalars, s, sc.slots[i]);
        }
    }
    oi__vk_guard_reads(&scalars, s, k->id, NULL);
    oi__vk_ranges(b, s, params, false, "reads", depth + 1, &n_reads, scalars.data);
    oi__buf_free(&scalars);
    char split[240] = ""; /* a split matmul also writes its partial products and block counters */
    if (oi__vk_split(p, k))
        snprintf(split, sizeof split, "{OI_VK_ARENA, %llu, %llu}, {OI_VK_ARENA, %llu, %llu}",
                 (unsigned long long)oi__vk_split_offset(p, k), (unsigned long long)oi__vk_split_bytes(p, k),
                 (unsigned long long)oi__vk_count_offset(p, k), (unsigned long long)(4u * oi__vk_split_blocks(p, k)));
    uint64_t result_bytes = s->buffers[k->nodes[0]->out].bytes;
    if (oi__vk_in_place(k)) /* and an in-place one its result, in the scratch region */
        snprintf(split + strlen(split), sizeof split - strlen(split), "%s{OI_VK_ARENA, %llu, %llu}", split[0] ? ", " : "",
                 (unsigned long long)oi__vk_scratch_offset(p), (unsigned long long)result_bytes);
    oi__vk_ranges(b, s, params, true, "writes", depth + 1, &n_writes, split[0] ? split : NULL);
    oi__vk_loops loops = {{NULL}, 0};
    if (oi__vk_pushes_loops(k))
        oi__vk_loops_of(s->steps, k->id, NULL, &loops);
    bool model = oi__vk_reads_model(s, params);
    if (model) { /* the model's window over what the kernel reads of it */
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "uint64_t lo = UINT64_MAX, hi = 0;\n");
        for (int i = 0; i < (int)arrlen(params); i++) {
            const oi__sy_buffer *pb = &s->buffers[params[i].slot];
            if (pb->home != OI__SY_MODEL && pb->home != OI__SY_PREFIX)
                continue;
            oi__vk_indent(b, depth + 1);
            if (pb->home == OI__SY_MODEL) {
                oi__buf_printf(b, "oi_vk_span(&lo, &hi, %lluu, %lluu);\n", (unsigned long long)pb->tensors[0]->data_offset,
                               (unsigned long long)pb->bytes);
                continue;
            }
            const oi__pnode *pn = k->nodes[params[i].node];
            oi__buf_printf(b, "oi_vk_span(&lo, &hi, 4u * (uint64_t)%s_%s_at[", p->name, oi__vk_slot(s, params[i].slot)->name);
            if (params[i].input >= 0 && pn->input_indices && pn->input_indices[params[i].input])
                oi__vk_expr(b, s, &pn->input_indices[params[i].input][0].single);
            else
                oi__buf_puts(b, "0");
            oi__buf_printf(b, "], %lluu);\n", (unsigned long long)pb->bytes);
        }
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "uint32_t mb = 0;\n");
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "if (oi_vk_model_window(vk, cb, lo, hi, &mb))\n");
        oi__vk_indent(b, depth + 2);
        oi__buf_puts(b, "return 1;\n");
    }
    bool push = model || loops.n > 0;
    if (push) {
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "const uint32_t push[] = {");
        bool first = true;
        if (model) {
            oi__buf_puts(b, "mb");
            first = false;
        }
        for (int l = 0; l < loops.n; l++, first = false)
            oi__buf_printf(b, "%s(uint32_t)%s", first ? "" : ", ", loops.var[l]);
        for (int i = 0; i < (int)arrlen(params); i++) {
            if (s->buffers[params[i].slot].home != OI__SY_PREFIX)
                continue;
            const oi__pnode *pn = k->nodes[params[i].node];
            oi__buf_printf(b, "%s%s_%s_at[", first ? "" : ", ", p->name, oi__vk_slot(s, params[i].slot)->name);
            if (params[i].input >= 0 && pn->input_indices && pn->input_indices[params[i].input])
                oi__vk_expr(b, s, &pn->input_indices[params[i].input][0].single);
            else
                oi__buf_puts(b, "0");
            oi__buf_puts(b, "]");
            first = false;
        }
        oi__buf_puts(b, "};\n");
    }
    uint32_t gx, gy;
    oi__vk_groups(p, k, &gx, &gy);
    const char *push_args = push ? "push, (uint32_t)sizeof push" : "NULL, 0";
    oi__vk_indent(b, depth + 1);
    oi__buf_printf(b, "if (oi_vk_dispatch(vk, cb, %d, %s, %uu, %uu, %uu, %s, %d, %s, %d))\n", k->id, push_args, gx, gy,
                   oi__vk_split(p, k) ? oi__vk_mm_tiles_of(&p->gpu, s, k).slices : 1u, n_reads ? "reads" : "NULL", n_reads,
                   n_writes ? "writes" : "NULL", n_writes);
    oi__vk_indent(b, depth + 2);
    oi__buf_puts(b, "return 1;\n");
    if (oi__vk_in_place(k)) { /* the result from the scratch region into its place */
        const oi__sy_buffer *out = &s->buffers[oi__vk_storage(s, k->nodes[0]->out)];
        oi__vk_indent(b, depth + 1);
        oi__buf_printf(b, "if (oi_vk_copy(vk, cb, %s, %llu, OI_VK_ARENA, %llu, %llu)) /* in place: A was read meanwhile */\n",
                       out->home == OI__SY_ARENA ? "OI_VK_ARENA" : "OI_VK_STATE", (unsigned long long)out->offset,
                       (unsigned long long)oi__vk_scratch_offset(p), (unsigned long long)result_bytes);
        oi__vk_indent(b, depth + 2);
        oi__buf_puts(b, "return 1;\n");
    }
    oi__vk_record_dump(b, p, k, params, depth + 1);
    oi__vk_indent(b, depth);
    oi__buf_puts(b, "}\n");
    arrfree(params);
}

static const char *oi__vk_buffer_id(oi__sy_home home) {
    return home == OI__SY_ARENA ? "OI_VK_ARENA" : home == OI__SY_STATE ? "OI_VK_STATE" : "OI_VK_MODEL";
}

static uint64_t oi__vk_offset(const oi__sy_schedule *s, int slot) {
    const oi__sy_buffer *buf = &s->buffers[slot];
    return buf->home == OI__SY_MODEL ? buf->tensors[0]->data_offset : buf->offset;
}

static void oi__vk_record_list(oi__buf *b, const oi_plan *p, const oi__sy_step *steps, int depth);

/* A cache statement: a counter's read or write is a copy; a table slice
 * read in place records nothing (the attention reading it addresses the
 * table); the rest is its kernel (oi__vk_cache_source), with the loops'
 * indices pushed and the counters its indices read among its reads. */
/* A cache_reset (oi__vk_check_reset): its model tensor copied, or a fill. */
static void oi__vk_record_reset(oi__buf *b, const oi_plan *p, const oi__pnode *pn, int depth) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__slot *sl = &s->plan->slots[pn->var];
    const oi__sy_buffer *buf = &s->buffers[pn->var];
    unsigned long long at = (unsigned long long)buf->offset, bytes = (unsigned long long)oi__vk_reset_bytes(sl, buf);
    oi__vk_indent(b, depth);
    if (!sl->is_table && arrlen(buf->tensors) > 0) {
        oi__buf_printf(b, "if (oi_vk_copy(vk, cb, OI_VK_STATE, %llu, OI_VK_MODEL, %llu, %llu)) /* ", at,
                       (unsigned long long)buf->tensors[0]->data_offset, bytes);
        oi__sy_render_stmt(b, pn);
        oi__buf_printf(b, ": model tensor %s */\n", buf->tensors[0]->name);
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "return 1;\n");
        return;
    }
    uint32_t word;
    oi__vk_reset_word(sl, &word);
    oi__buf_puts(b, "{ /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_printf(b, ": %s */\n", word ? "@init's bits in every word" : "zeros");
    oi__vk_indent(b, depth + 1);
    oi__buf_printf(b, "const oi_vk_range reset = {OI_VK_STATE, %llu, %llu};\n", at, bytes);
    oi__vk_indent(b, depth + 1);
    oi__buf_puts(b, "if (oi_vk_access(vk, cb, NULL, 0, &reset, 1))\n");
    oi__vk_indent(b, depth + 2);
    oi__buf_puts(b, "return 1;\n");
    oi__vk_indent(b, depth + 1);
    oi__buf_printf(b, "vkCmdFillBuffer(cb, vk->device_buffers[OI_VK_STATE].buffer, %llu, %llu, 0x%08xu);\n", at, bytes,
                   (unsigned)word);
    oi__vk_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

static void oi__vk_record_cache(oi__buf *b, const oi_plan *p, const oi__pnode *pn, int depth) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__slot *sl = &s->plan->slots[pn->var];
    if (pn->ir->kind == OI__NODE_CACHE_RESET) {
        oi__vk_record_reset(b, p, pn, depth);
        return;
    }
    if (!oi__vk_cache_kernel(s, pn) && sl->is_table) {
        oi__vk_indent(b, depth);
        oi__buf_puts(b, "/* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, ": read in place by the kernels that use it */\n");
        return;
    }
    if (!oi__vk_cache_kernel(s, pn)) {
        bool read = pn->ir->kind == OI__NODE_CACHE_READ;
        int dst = read ? pn->out : pn->var, src = read ? pn->var : pn->out;
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "if (oi_vk_copy(vk, cb, %s, %llu, %s, %llu, %llu)) /* ", oi__vk_buffer_id(s->buffers[dst].home),
                       (unsigned long long)oi__vk_offset(s, dst), oi__vk_buffer_id(s->buffers[src].home),
                       (unsigned long long)oi__vk_offset(s, src), (unsigned long long)s->buffers[pn->var].bytes);
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, " */\n");
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "return 1;\n");
        return;
    }
    oi__vk_indent(b, depth);
    oi__buf_puts(b, "{ /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n");
    oi__buf reads, writes;
    memset(&reads, 0, sizeof reads);
    memset(&writes, 0, sizeof writes);
    oi__vk_range(&writes, s, pn->ir->kind == OI__NODE_CACHE_READ ? pn->out : pn->var);
    if (sl->is_table) {
        oi__vk_range(&reads, s, pn->ir->kind == OI__NODE_CACHE_READ ? pn->var : pn->out);
        oi__vk_scalars sc = oi__vk_access_scalars(s, pn);
        for (int i = 0; i < sc.n; i++) {
            oi__buf_puts(&reads, ", ");
            oi__vk_range(&reads, s, sc.slots[i]);
        }
    } else {
        oi__vk_range(&reads, s, pn->var);
    }
    oi__vk_guard_reads(&reads, s, -1, pn);
    int n_reads = 0;
    for (const char *c = reads.data; c && *c; c++)
        n_reads += *c == '{';
    oi__vk_indent(b, depth + 1);
    oi__buf_printf(b, "static const oi_vk_range reads[] = {%s}, writes[] = {%s};\n", reads.data, writes.data);
    oi__buf_free(&reads);
    oi__buf_free(&writes);
    oi__vk_loops loops = {{NULL}, 0};
    oi__vk_loops_of(s->steps, -1, pn, &loops);
    if (loops.n > 0) {
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "const uint32_t push[] = {");
        for (int l = 0; l < loops.n; l++)
            oi__buf_printf(b, "%s(uint32_t)%s", l ? ", " : "", loops.var[l]);
        oi__buf_puts(b, "};\n");
    }
    uint64_t words = sl->is_table ? s->buffers[pn->var].bytes / 4 : (uint64_t)oi__shape_numel(sl->ndim, sl->shape);
    uint64_t groups = (words + 63) / 64;
    oi__vk_indent(b, depth + 1);
    oi__buf_printf(b, "if (oi_vk_dispatch(vk, cb, %d, %s, %lluu, 1u, 1u, reads, %d, writes, 1))\n",
                   oi__vk_cache_module(p, pn), loops.n > 0 ? "push, (uint32_t)sizeof push" : "NULL, 0",
                   (unsigned long long)(groups > 65535 ? 65535 : groups ? groups : 1), n_reads);
    oi__vk_indent(b, depth + 2);
    oi__buf_puts(b, "return 1;\n");
    oi__vk_indent(b, depth);
    oi__buf_puts(b, "}\n");
}

static void oi__vk_record_step(oi__buf *b, const oi_plan *p, const oi__sy_step *st, int depth) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = st->node;
    switch (st->kind) {
    case OI__SY_S_KERNEL: oi__vk_record_kernel(b, p, st, depth); return;
    case OI__SY_S_LOOP:
        oi__vk_indent(b, depth);
        oi__buf_puts(b, "/* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, ": recorded once per iteration */\n");
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "for (int64_t %s = ", pn->ir->loop_index);
        oi__vk_expr(b, s, &pn->ir->loop_start);
        oi__buf_printf(b, "; %s < ", pn->ir->loop_index);
        oi__vk_expr(b, s, &pn->ir->loop_end);
        oi__buf_printf(b, "; %s++) {\n", pn->ir->loop_index);
        oi__vk_record_list(b, p, st->body, depth + 1);
        oi__vk_indent(b, depth);
        oi__buf_puts(b, "}\n");
        return;
    case OI__SY_S_BRANCH:
        oi__vk_indent(b, depth);
        oi__buf_puts(b, "{ /* ");
        oi__sy_render_stmt(b, pn);
        if (pn->var < 0) {
            oi__buf_puts(b, " */\n");
            oi__vk_record_list(b, p, st->then_steps, depth + 1);
        } else { /* both blocks; each kernel returns at once unless its block is taken */
            oi__buf_printf(b, ": block %s, whose kernels run when %s is true */\n",
                           s->plan->blocks[st->block_then].ir->name, p->plan->slots[pn->var].name);
            oi__vk_record_list(b, p, st->then_steps, depth + 1);
            oi__vk_indent(b, depth + 1);
            oi__buf_printf(b, "/* block %s, whose kernels run when %s is false */\n",
                           s->plan->blocks[st->block_else].ir->name, p->plan->slots[pn->var].name);
            oi__vk_record_list(b, p, st->else_steps, depth + 1);
        }
        oi__vk_indent(b, depth);
        oi__buf_puts(b, "}\n");
        return;
    case OI__SY_S_TRANSFER:
        oi__vk_indent(b, depth);
        oi__buf_printf(b, "if (oi_vk_copy(vk, cb, %s, %llu, %s, %llu, %llu)) /* ", oi__vk_buffer_id(s->buffers[pn->out].home),
                       (unsigned long long)oi__vk_offset(s, pn->out), oi__vk_buffer_id(s->buffers[pn->var].home),
                       (unsigned long long)oi__vk_offset(s, pn->var), (unsigned long long)s->buffers[pn->out].bytes);
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, " */\n");
        oi__vk_indent(b, depth + 1);
        oi__buf_puts(b, "return 1;\n");
        return;
    case OI__SY_S_FENCE:
        oi__vk_indent(b, depth);
        oi__buf_puts(b, "/* ");
        oi__sy_render_stmt(b, pn);
        oi__buf_puts(b, ": the commands stay in this order */\n");
        return;
    case OI__SY_S_CACHE: oi__vk_record_cache(b, p, pn, depth); return;
    default: return; /* refused at synthesis */
    }
}

static void oi__vk_record_list(oi__buf *b, const oi_plan *p, const oi__sy_step *steps, int depth) {
    for (int i = 0; i < (int)arrlen(steps); i++)
        oi__vk_record_step(b, p, &steps[i], depth);
}

/* The staging copies around the graph: dynamic and volatile variables
 * (set by the host before every step) go up before it (uploads); what a step
 * leaves for the getters comes down at its end. `up`: the uploads. */
static bool oi__vk_moves(const oi_plan *p, int slot, bool up) {
    const oi__slot *sl = &p->plan->slots[slot];
    const oi__sy_buffer *buf = &p->schedule.buffers[slot];
    if (up)
        return buf->home == OI__SY_STATE && sl->decl && (sl->kind == OI__MEM_DYNAMIC || sl->kind == OI__MEM_VOLATILE);
    if (!oi__vk_getter(p, slot))
        return false;
    return buf->home == OI__SY_ARENA || (buf->home == OI__SY_STATE && buf->written);
}

/* The end of the recorded step: the getters' values down to the host. */
static void oi__vk_record_downloads(oi__buf *b, const oi_plan *p) {
    const oi__sy_schedule *s = &p->schedule;
    for (int home = 0; home < 2; home++) {
        oi__sy_home want = home == 0 ? OI__SY_STATE : OI__SY_ARENA;
        int n = 0;
        for (int i = 0; i < (int)arrlen(s->buffers); i++)
            n += oi__vk_moves(p, i, false) && s->buffers[i].home == want;
        if (n == 0)
            continue;
        oi__buf_printf(b, "    { /* %s */\n        static const VkBufferCopy regions[] = {",
                       want == OI__SY_STATE ? "declared variables the step wrote: back to the host"
                                            : "the temporaries a getter returns: back to the host");
        int k = 0;
        for (int i = 0; i < (int)arrlen(s->buffers); i++)
            if (oi__vk_moves(p, i, false) && s->buffers[i].home == want)
                oi__buf_printf(b, "%s{%llu, %llu, %llu}", k++ ? ", " : "", (unsigned long long)s->buffers[i].offset,
                               (unsigned long long)s->buffers[i].offset, (unsigned long long)s->buffers[i].bytes);
        oi__buf_puts(b, "};\n        static const oi_vk_range ranges[] = {");
        k = 0;
        for (int i = 0; i < (int)arrlen(s->buffers); i++)
            if (oi__vk_moves(p, i, false) && s->buffers[i].home == want) {
                oi__buf_puts(b, k++ ? ", " : "");
                oi__vk_range(b, s, i);
            }
        oi__buf_puts(b, "};\n        if (oi_vk_access(vk, cb, ranges, (int)(sizeof ranges / sizeof ranges[0]), NULL, 0))\n"
                        "            return 1;\n");
        oi__buf_printf(b, "        vkCmdCopyBuffer(cb, vk->device_buffers[%s].buffer, ctx->%s.buffer, %du, regions);\n    }\n",
                       want == OI__SY_STATE ? "OI_VK_STATE" : "OI_VK_ARENA", want == OI__SY_STATE ? "staging" : "readback", n);
    }
}

/* The index among the declared dynamic variables (NAME_set_VAR's
 * ctx->inserted) of slot, or -1 if it is not one. */
static int oi__vk_dynamic_index(const oi_plan *p, int slot) {
    int d = 0;
    for (int i = 0; i < slot; i++)
        d += p->plan->slots[i].decl && p->plan->slots[i].kind == OI__MEM_DYNAMIC;
    const oi__slot *sl = &p->plan->slots[slot];
    return sl->decl && sl->kind == OI__MEM_DYNAMIC ? d : -1;
}

static int oi__vk_n_uploads(const oi_plan *p) {
    int n = 0;
    for (int i = 0; i < (int)arrlen(p->schedule.buffers); i++)
        n += oi__vk_moves(p, i, true);
    return n;
}

/* The dynamic and volatile variables go up from the host's staging copy
 * before a step, in command buffers of their own recorded at open: one with
 * all of them, and one per variable for a step in which the application
 * wrote some inputs on the device itself (NAME_input_buffer_VAR). */
static void oi__vk_source_uploads(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_schedule *s = &p->schedule;
    if (oi__vk_n_uploads(p) == 0)
        return;
    oi__buf_puts(b, "/* Before a step, from the host's staging copy up to the device:");
    for (int i = 0, k = 0; i < (int)arrlen(s->buffers); i++)
        if (oi__vk_moves(p, i, true))
            oi__buf_printf(b, "%s%s", k++ ? ", " : " ", p->plan->slots[i].name);
    oi__buf_printf(b, ". */\nstatic const VkBufferCopy %s_uploads[%s_N_UPLOADS] = {", N, N);
    for (int i = 0, k = 0; i < (int)arrlen(s->buffers); i++)
        if (oi__vk_moves(p, i, true))
            oi__buf_printf(b, "%s{%llu, %llu, %llu}", k++ ? ", " : "", (unsigned long long)s->buffers[i].offset,
                           (unsigned long long)s->buffers[i].offset, (unsigned long long)s->buffers[i].bytes);
    oi__buf_printf(b, "};\n/* ... the dynamic variable each one carries (ctx->inserted's index), -1: volatile */\n"
                      "static const int %s_upload_dynamic[%s_N_UPLOADS] = {", N, N);
    for (int i = 0, k = 0; i < (int)arrlen(s->buffers); i++)
        if (oi__vk_moves(p, i, true))
            oi__buf_printf(b, "%s%d", k++ ? ", " : "", oi__vk_dynamic_index(p, i));
    oi__buf_puts(b, "};\n\n");
    oi__buf_printf(b, "/* Records uploads[which], or all of them (which < 0), into a command buffer of its own. */\n"
                      "static int %s_record_upload(%s_ctx *ctx, VkCommandBuffer *cb, int which) {\n"
                      "    if (oi_vk_begin(&ctx->vk, cb, 0))\n        return 1;\n"
                      "    vkCmdCopyBuffer(*cb, ctx->staging.buffer, ctx->vk.device_buffers[OI_VK_STATE].buffer,\n"
                      "                    which < 0 ? %s_N_UPLOADS : 1u, which < 0 ? %s_uploads : &%s_uploads[which]);\n"
                      "    return oi_vk_check(vkEndCommandBuffer(*cb), \"vkEndCommandBuffer\");\n}\n\n",
                   N, N, N, N, N);
    oi__buf_printf(b, "static int %s_record_uploads(%s_ctx *ctx) {\n"
                      "    if (%s_record_upload(ctx, &ctx->upload_all, -1))\n        return 1;\n"
                      "    for (int u = 0; u < %s_N_UPLOADS; u++)\n"
                      "        if (%s_record_upload(ctx, &ctx->upload[u], u))\n            return 1;\n"
                      "    return 0;\n}\n\n", N, N, N, N, N);
}

/* -DNAME_DEBUG_DUMP=dir: every kernel's stored outputs, read back after the step. */
static void oi__vk_source_dump(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n#define OI_NPY_STATIC\n#define OI_NPY_IMPLEMENTATION\n#include \"npy.h\"\n", N);
    oi__buf_printf(b, "#define %s_STR2(x) #x\n#define %s_STR(x) %s_STR2(x)\n", N, N, N);
    oi__buf_puts(b, "/* The debug build records, after each dispatch, a copy of every stored variable\n"
                    " * the kernel wrote into a host-visible buffer of its own (made while recording,\n"
                    " * so a step allocates nothing); after the step's fence each becomes\n"
                    " * dir/stepS_kK_VAR.npy. The copies add barriers and traffic: debug only. */\n");
    oi__buf_printf(b, "static int %s_dump_record(%s_ctx *ctx, VkCommandBuffer cb, int kernel, const char *name, int dtype,\n"
                      "                            uint64_t count, const oi_vk_range *r) {\n", N, N);
    oi__buf_printf(b, "    if (ctx->n_dumps == ctx->cap_dumps) {\n        int cap = ctx->cap_dumps ? 2 * ctx->cap_dumps : 16;\n"
                      "        %s_dump_copy *d = (%s_dump_copy *)realloc(ctx->dumps, (size_t)cap * sizeof *d);\n"
                      "        if (!d)\n            return %s_fail(%s_ERROR_MEMORY, \"%s_open: out of memory (debug dump)\");\n"
                      "        ctx->dumps = d;\n        ctx->cap_dumps = cap;\n    }\n", N, N, N, N, N);
    oi__buf_printf(b, "    %s_dump_copy *d = &ctx->dumps[ctx->n_dumps];\n    memset(d, 0, sizeof *d);\n"
                      "    if (oi_vk_buffer_create(&ctx->vk, &d->copy, r->bytes, OI_VK_HOST_USAGE, 1))\n        return 1;\n"
                      "    ctx->n_dumps++;\n    d->kernel = kernel;\n    d->name = name;\n    d->dtype = dtype;\n"
                      "    d->count = count;\n", N);
    oi__buf_puts(b, "    if (oi_vk_access(&ctx->vk, cb, r, 1, NULL, 0))\n        return 1;\n"
                    "    VkBufferCopy region = {r->offset, 0, r->bytes};\n"
                    "    vkCmdCopyBuffer(cb, ctx->vk.device_buffers[r->buffer].buffer, d->copy.buffer, 1, &region);\n"
                    "    return 0;\n}\n\n");
    oi__buf_printf(b, "static void %s_dump_write(const %s_ctx *ctx) {\n    for (int i = 0; i < ctx->n_dumps; i++) {\n"
                      "        const %s_dump_copy *d = &ctx->dumps[i];\n        char path[1024];\n"
                      "        snprintf(path, sizeof path, \"%%s/step%%lld_k%%d_%%s.npy\", %s_STR(%s_DEBUG_DUMP), ctx->steps,\n"
                      "                 d->kernel, d->name);\n"
                      "        oi_npy_write(path, (oi_npy_dtype)d->dtype, 1, &d->count, d->copy.map, NULL);\n    }\n}\n#endif\n\n",
                   N, N, N, N, N);
}

static void oi__vk_source_record(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_schedule *s = &p->schedule;
    oi__vk_source_dump(b, p);
    oi__buf_printf(b, "/* The step, recorded once at open and replayed by every %s_step: the\n"
                      " * inputs made visible (uploaded just before, or written by the application),\n"
                      " * the zeros a step starts with, the kernels in the schedule's order (a\n"
                      " * barrier only where one reads or overwrites what an earlier one touched),\n"
                      " * the getters' values down. */\n", N);
    oi__buf_printf(b, "static int %s_record(%s_ctx *ctx, VkCommandBuffer cb) {\n    oi_vk *vk = &ctx->vk;\n", N, N);
    oi__buf_puts(b, "    oi_vk_bind(vk, cb, 0); /* the model's window at its start */\n");
    oi__buf_puts(b, "    if (vk->queries) {\n        vkCmdResetQueryPool(cb, vk->queries, 0, 2 + OI_VK_PROFILE);\n"
                    "        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk->queries, 0);\n    }\n");
    if (oi__vk_n_sites(s) > 0)
        oi__buf_printf(b, "    /* no failure yet (the barrier below orders the fill before the kernels) */\n"
                          "    vkCmdFillBuffer(cb, vk->device_buffers[OI_VK_STATE].buffer, %s_STATUS_AT, 16, 0);\n", N);
    oi__buf_puts(b, "    oi_vk_barrier_from_before(vk, cb); /* the uploads, or the application's writes */\n");
    for (int i = 0; i < (int)arrlen(s->buffers); i++) {
        const oi__sy_buffer *buf = &s->buffers[i];
        if (buf->home != OI__SY_ARENA || !buf->zero_at_start)
            continue;
        oi__buf_printf(b, "    { /* %s: read before it is written, zeros */\n        const oi_vk_range zero = ",
                       p->plan->slots[buf->slot].name);
        oi__vk_range(b, s, i);
        oi__buf_printf(b, ";\n        if (oi_vk_access(vk, cb, NULL, 0, &zero, 1))\n            return 1;\n"
                          "        vkCmdFillBuffer(cb, vk->device_buffers[OI_VK_ARENA].buffer, %llu, %llu, 0);\n    }\n",
                       (unsigned long long)buf->offset, (unsigned long long)buf->bytes);
    }
    oi__buf_puts(b, "\n    /* the graph */\n");
    oi__vk_record_list(b, p, s->steps, 1);
    oi__buf_puts(b, "\n");
    oi__vk_record_downloads(b, p);
    if (oi__vk_n_sites(s) > 0)
        oi__buf_printf(b, "    { /* the status words down (the kernels do not list them: no barrier between them) */\n"
                          "        VkBufferCopy status = {%s_STATUS_AT, %s_STATUS_AT, 16};\n        oi_vk_barrier(vk, cb);\n"
                          "        vkCmdCopyBuffer(cb, vk->device_buffers[OI_VK_STATE].buffer, ctx->staging.buffer, 1, &status);\n"
                          "    }\n", N, N);
    oi__buf_puts(b, "    { /* everything above, visible to the host after the fence */\n        VkMemoryBarrier host;\n"
                    "        memset(&host, 0, sizeof host);\n        host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;\n"
                    "        host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;\n"
                    "        host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;\n"
                    "        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,\n"
                    "                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, NULL, 0, NULL);\n    }\n");
    oi__buf_puts(b, "    if (vk->queries)\n        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->queries, 1);\n"
                    "    return oi_vk_check(vkEndCommandBuffer(cb), \"vkEndCommandBuffer\");\n}\n\n");
}

/* The emitted check that a device offers the shape the cooperative-matrix
 * kernels use, as the backend's vk_device.c checks it. */
static void oi__vk_source_coopmat_shape(oi__buf *b) {
    oi__buf_puts(b, "static int oi_vk_coopmat_shape_ok(uint32_t m, uint32_t n, uint32_t k, int a, int b, int c, int d, int scope) {\n"
                    "    return m == 16 && n == 16 && k == 16 && a == (int)VK_COMPONENT_TYPE_FLOAT16_NV &&\n"
                    "           b == (int)VK_COMPONENT_TYPE_FLOAT16_NV && c == (int)VK_COMPONENT_TYPE_FLOAT32_NV &&\n"
                    "           d == (int)VK_COMPONENT_TYPE_FLOAT32_NV && scope == (int)VK_SCOPE_SUBGROUP_NV;\n}\n\n");
    oi__buf_puts(b, "/* Whether the device offers the kernels' 16x16x16 f16 x f16 -> f32 subgroup\n"
                    " * fragments through VK_KHR_cooperative_matrix (khr) or VK_NV_cooperative_matrix\n"
                    " * (the KHR query is looked up: volk's list may predate it). */\n"
                    "static int oi_vk_coopmat_16x16x16(const oi_vk *vk, int khr) {\n    uint32_t n = 0;\n    int found = 0;\n"
                    "    if (khr) {\n"
                    "        typedef VkResult (VKAPI_PTR *props_fn)(VkPhysicalDevice, uint32_t *, VkCooperativeMatrixPropertiesKHR *);\n"
                    "        props_fn get = (props_fn)vkGetInstanceProcAddr(vk->instance, \"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR\");\n"
                    "        if (!get || get(vk->physical, &n, NULL) != VK_SUCCESS || n == 0)\n            return 0;\n"
                    "        VkCooperativeMatrixPropertiesKHR *props = (VkCooperativeMatrixPropertiesKHR *)calloc(n, sizeof *props);\n"
                    "        for (uint32_t i = 0; props && i < n; i++)\n"
                    "            props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;\n"
                    "        if (props && get(vk->physical, &n, props) == VK_SUCCESS)\n"
                    "            for (uint32_t i = 0; i < n && !found; i++)\n"
                    "                found = oi_vk_coopmat_shape_ok(props[i].MSize, props[i].NSize, props[i].KSize, (int)props[i].AType,\n"
                    "                                               (int)props[i].BType, (int)props[i].CType, (int)props[i].ResultType,\n"
                    "                                               (int)props[i].scope);\n"
                    "        free(props);\n        return found;\n    }\n"
                    "    if (!vkGetPhysicalDeviceCooperativeMatrixPropertiesNV ||\n"
                    "        vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(vk->physical, &n, NULL) != VK_SUCCESS || n == 0)\n"
                    "        return 0;\n"
                    "    VkCooperativeMatrixPropertiesNV *props = (VkCooperativeMatrixPropertiesNV *)calloc(n, sizeof *props);\n"
                    "    for (uint32_t i = 0; props && i < n; i++)\n"
                    "        props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;\n"
                    "    if (props && vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(vk->physical, &n, props) == VK_SUCCESS)\n"
                    "        for (uint32_t i = 0; i < n && !found; i++)\n"
                    "            found = oi_vk_coopmat_shape_ok(props[i].MSize, props[i].NSize, props[i].KSize, (int)props[i].AType,\n"
                    "                                           (int)props[i].BType, (int)props[i].CType, (int)props[i].DType,\n"
                    "                                           (int)props[i].scope);\n"
                    "    free(props);\n    return found;\n}\n\n");
}

static void oi__vk_source_prologue(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    const oi__sy_schedule *s = &p->schedule;
    oi__buf_printf(b, "/* %s.c - graph \"%s\", synthesized by OpenInfer %s for Vulkan (%s):\n", N,
                   oi_graph_name(p->plan->graph), OI_VERSION_STRING, p->gpu.device_name);
    oi__buf_printf(b, " * %zu GLSL kernels (%s_kK.comp, compiled by the Makefile into %s_kK.spv.h and\n"
                      " * embedded below) and the host code that records the step once and replays it.\n",
                   arrlenu(s->kernels), N, N);
    oi__buf_printf(b, " * Codegen read from the device: workgroups of %u invocations, subgroup\n"
                      " * reductions %s, storage %s (cooperative matrices are not\n"
                      " * emitted yet).\n", p->gpu.workgroup, p->gpu.subgroup_ops ? "on" : "off",
                   p->gpu.fp16_storage ? "f16 for the temporaries only kernels touch, f32 arithmetic" : "f32");
    oi__buf_puts(b, " * Named sizes and the model's tensor offsets are specialized. */\n");
    oi__buf_puts(b, "#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)\n#define _POSIX_C_SOURCE 200809L\n#endif\n");
    oi__buf_printf(b, "#include \"%s.h\"\n\n#include <stdarg.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n", N);
    oi__buf_puts(b, "#if defined(__unix__) || defined(__APPLE__)\n#include <fcntl.h>\n#include <sys/mman.h>\n"
                    "#include <sys/stat.h>\n#include <unistd.h>\n#define OI_HAVE_MMAP 1\n#endif\n\n");
    oi__buf_printf(b, "#define %s_FINGERPRINT 0x%016llxull /* FNV-1a of the model's header and tables */\n", N,
                   (unsigned long long)p->fingerprint);
    oi__buf_printf(b, "#define %s_HEADER_BYTES %lluull   /* where the model's data section starts */\n", N,
                   (unsigned long long)p->model_header_bytes);
    oi__buf_printf(b, "#define %s_MODEL_BYTES %lluull    /* the model file, uploaded once at open */\n", N,
                   (unsigned long long)p->model_size);
    if (oi__vk_n_sites(s) > 0)
        oi__buf_printf(b, "#define %s_STATUS_AT %lluu /* the status words (a kernel's failure: code, value, element) */\n"
                          "#define %s_STATE_DEVICE_BYTES (%s_STATUS_AT + 16u)\n\n", N,
                       (unsigned long long)oi__vk_status_at(p), N, N);
    else
        oi__buf_printf(b, "#define %s_STATE_DEVICE_BYTES %s_STATE_BYTES\n\n", N, N);
    oi__buf_puts(b, "#ifdef __cplusplus\n#define OI_THREAD_LOCAL thread_local\n#else\n#define OI_THREAD_LOCAL _Thread_local\n#endif\n\n");
    oi__buf_printf(b, "static OI_THREAD_LOCAL char %s_error_text[512];\n\n", N);
    oi__buf_printf(b, "const char *%s_last_error(void) { return %s_error_text; }\n\n", N, N);
    oi__buf_printf(b, "static int %s_fail(int code, const char *fmt, ...) {\n    va_list args;\n    va_start(args, fmt);\n"
                      "    vsnprintf(%s_error_text, sizeof %s_error_text, fmt, args);\n    va_end(args);\n    return code;\n}\n\n",
                   N, N, N);
    oi__buf_printf(b, "#define OI_VK_FAIL(...) %s_fail(%s_ERROR_RUNTIME, __VA_ARGS__)\n#include \"oi_vk_runtime.h\"\n\n", N, N);
    oi__buf_puts(b, "/* The kernels' SPIR-V (glslc -mfmt=c, by the Makefile) */\n");
    bool coop = oi__vk_has_coopmat(p);
    if (coop)
        oi__buf_puts(b, "/* VK_KHR_cooperative_matrix came with Vulkan-Headers 1.3.255 (Debian bookworm's are\n"
                        " * older): what the open uses of it, as vulkan/vk_context.h repeats it */\n"
                        "#ifndef VK_KHR_cooperative_matrix\n#define VK_KHR_cooperative_matrix 1\n"
                        "#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME \"VK_KHR_cooperative_matrix\"\n"
                        "#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)\n"
                        "#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)\n"
                        "typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {\n    VkStructureType sType;\n"
                        "    void *pNext;\n    VkBool32 cooperativeMatrix, cooperativeMatrixRobustBufferAccess;\n"
                        "} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;\n"
                        "typedef struct VkCooperativeMatrixPropertiesKHR {\n    VkStructureType sType;\n    void *pNext;\n"
                        "    uint32_t MSize, NSize, KSize;\n    VkComponentTypeNV AType, BType, CType, ResultType;\n"
                        "    VkBool32 saturatingAccumulation;\n    VkScopeNV scope;\n} VkCooperativeMatrixPropertiesKHR;\n"
                        "#endif\n\n");
    if (coop)
        oi__vk_source_coopmat_shape(b);
    for (int k = 0; k < oi__vk_n_modules(p); k++) {
        oi__buf_printf(b, "static const uint32_t %s_k%d_spv[] =\n#include \"%s_k%d.spv.h\"\n    ;\n", N, k, N, k);
        if (k < (int)arrlen(s->kernels) && oi__vk_cm_takes(&p->gpu, s, &s->kernels[k])) /* oi_gen_spirv.py's KHR rewrite: oi__spirv_NAME_kK_khr */
            oi__buf_printf(b, "#include \"%s_k%d_khr.spv.h\"\n", N, k);
    }
    oi__buf_printf(b, "static const struct {\n    const uint32_t *code;\n    size_t bytes;\n%s} %s_kernels[] = {\n",
                   coop ? "    const uint32_t *khr_code; /* the cooperative-matrix kernels as KHR modules */\n    size_t khr_bytes;\n"
                        : "", N);
    for (int k = 0; k < oi__vk_n_modules(p); k++) {
        oi__buf_printf(b, "    {%s_k%d_spv, sizeof %s_k%d_spv", N, k, N, k);
        if (coop && k < (int)arrlen(s->kernels) && oi__vk_cm_takes(&p->gpu, s, &s->kernels[k]))
            oi__buf_printf(b, ", oi__spirv_%s_k%d_khr, sizeof oi__spirv_%s_k%d_khr", N, k, N, k);
        else if (coop)
            oi__buf_puts(b, ", NULL, 0");
        oi__buf_puts(b, "},\n");
    }
    if (arrlen(s->kernels) == 0)
        oi__buf_puts(b, "    {NULL, 0},\n");
    oi__buf_printf(b, "};\n#define %s_N_KERNELS %d\n", N, oi__vk_n_modules(p));
    if (oi__vk_n_uploads(p) > 0)
        oi__buf_printf(b, "#define %s_N_UPLOADS %d /* variables the host sets before a step */\n", N, oi__vk_n_uploads(p));
    oi__buf_puts(b, "\n");
    /* prefix tables: each entry's first element in the model buffer (none where an unrolled
     * loop reads the entries as model tensors of their own) */
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__sy_buffer *buf = &s->buffers[i];
        if (buf->home != OI__SY_PREFIX || arrlen(buf->tensors) == 0)
            continue;
        oi__buf_printf(b, "static const uint32_t %s_%s_at[] = {", N, p->plan->slots[i].name);
        for (int e = 0; e < (int)arrlen(buf->tensors); e++)
            oi__buf_printf(b, "%s%lluu", e ? ", " : "", (unsigned long long)(buf->tensors[e]->data_offset / 4));
        oi__buf_printf(b, "}; /* %s(l): the model's %s, in floats */\n", p->plan->slots[i].name,
                       p->plan->slots[i].pattern ? p->plan->slots[i].pattern : "?");
    }
    oi__buf_puts(b, "\n");
}

static uint32_t oi__vk_push_bytes(const oi_plan *p) {
    uint32_t most = 0;
    for (int k = 0; k < (int)arrlen(p->schedule.kernels); k++) {
        oi__sy_param *params = oi__sy_kernel_params(&p->schedule, &p->schedule.kernels[k]);
        uint32_t n = oi__vk_reads_model(&p->schedule, params) ? 4u : 0u; /* oi_mb */
        for (int i = 0; i < (int)arrlen(params); i++)
            n += p->schedule.buffers[params[i].slot].home == OI__SY_PREFIX ? 4u : 0u;
        most = n > most ? n : most;
        arrfree(params);
        oi__vk_loops loops = {{NULL}, 0};
        if (oi__vk_pushes_loops(&p->schedule.kernels[k]))
            oi__vk_loops_of(p->schedule.steps, k, NULL, &loops);
        n += 4u * (uint32_t)loops.n;
        most = n > most ? n : most;
    }
    const oi__pnode **nodes = NULL; /* the cache statements' kernels push their loops' indices */
    oi__vk_cache_nodes(&p->schedule, p->schedule.steps, &nodes);
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        oi__vk_loops loops = {{NULL}, 0};
        oi__vk_loops_of(p->schedule.steps, -1, nodes[i], &loops);
        most = 4u * (uint32_t)loops.n > most ? 4u * (uint32_t)loops.n : most;
    }
    arrfree(nodes);
    return most;
}

static void oi__vk_source_ctx(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    int n_dynamic = 0;
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++)
        n_dynamic += p->plan->slots[i].decl && p->plan->slots[i].kind == OI__MEM_DYNAMIC;
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\ntypedef struct %s_dump_copy {\n    int kernel, dtype;\n    const char *name;\n"
                      "    uint64_t count;\n    oi_vk_buffer copy;\n} %s_dump_copy;\n#endif\n", N, N, N);
    oi__buf_printf(b, "struct %s_ctx {\n    oi_vk vk;\n", N);
    oi__buf_printf(b, "    oi_vk_buffer staging;  /* host-visible: the declared variables as the host sees them */\n"
                      "    oi_vk_buffer readback; /* host-visible: the temporaries a getter returns */\n"
                      "    unsigned char *arena;  /* readback's mapping, at the arena's offsets */\n"
                      "    unsigned char *state;  /* staging's mapping, at the state's offsets */\n"
                      "    const unsigned char *model; /* the mapped model file */\n    size_t model_size;\n"
                      "    int model_mapped;\n    long long steps;\n    double gpu_ms;\n");
    oi__buf_printf(b, "    unsigned char inserted[%d]; /* per dynamic variable: set since the last step */\n",
                   n_dynamic ? n_dynamic : 1);
    oi__buf_printf(b, "    unsigned char on_device[%d]; /* ... written by the application on the device for the next step */\n",
                   n_dynamic ? n_dynamic : 1);
    if (oi__vk_n_uploads(p) > 0)
        oi__buf_printf(b, "    VkCommandBuffer upload_all, upload[%s_N_UPLOADS]; /* the uploads: all, or one by one */\n", N);
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n    %s_dump_copy *dumps; /* one per (recorded kernel, stored output) */\n"
                      "    int n_dumps, cap_dumps;\n#endif\n};\n\n", N, N);
}

/* The device of a folder with cooperative-matrix matmuls: besides 16-bit
 * storage, a cooperative-matrix extension and its feature, f16 arithmetic,
 * the Vulkan memory model (glslang's coopmat SPIR-V declares it) and 32-wide
 * subgroups (the kernels' 16 subgroups of 32), as the backend's vk_device.c
 * asks for its matmul_coopmat. VK_KHR_cooperative_matrix where the device has
 * it (the kernels' KHR modules: NVIDIA's driver loads an NV B fragment in the
 * A layout and transposes it, matmul_coopmat.comp's header says), else
 * VK_NV_cooperative_matrix; OI_VK_COOPMAT=nv picks NV. Sets `khr`. */
static void oi__vk_source_coopmat_device(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_puts(b, "    /* the cooperative-matrix matmuls (f16 x f16 -> f32): KHR where the device has it, else NV */\n"
                    "    const char *coop_extensions[3] = {VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,\n"
                    "        VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME};\n"
                    "    uint32_t n_props = 0, found = 0;\n    int has_nv = 0, has_khr = 0;\n"
                    "    vkEnumerateDeviceExtensionProperties(vk->physical, NULL, &n_props, NULL);\n"
                    "    VkExtensionProperties *props = (VkExtensionProperties *)calloc(n_props + 1, sizeof *props);\n");
    oi__buf_printf(b, "    if (!props)\n        return %s_fail(%s_ERROR_MEMORY, \"%s_open: out of memory\");\n", N, N, N);
    oi__buf_puts(b, "    vkEnumerateDeviceExtensionProperties(vk->physical, NULL, &n_props, props);\n"
                    "    for (uint32_t i = 0; i < n_props; i++) {\n"
                    "        for (int e = 1; e < 3; e++)\n"
                    "            found += strcmp(props[i].extensionName, coop_extensions[e]) == 0;\n"
                    "        has_nv |= strcmp(props[i].extensionName, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0;\n"
                    "        has_khr |= strcmp(props[i].extensionName, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0;\n"
                    "    }\n    free(props);\n"
                    "    const char *pick = getenv(\"OI_VK_COOPMAT\");\n"
                    "    khr = has_khr && !(pick && strcmp(pick, \"nv\") == 0);\n"
                    "    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv;\n    memset(&coop_nv, 0, sizeof coop_nv);\n"
                    "    coop_nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;\n"
                    "    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr;\n    memset(&coop_khr, 0, sizeof coop_khr);\n"
                    "    coop_khr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;\n"
                    "    VkPhysicalDeviceVulkanMemoryModelFeatures model;\n    memset(&model, 0, sizeof model);\n"
                    "    model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;\n"
                    "    VkPhysicalDeviceShaderFloat16Int8Features f16;\n    memset(&f16, 0, sizeof f16);\n"
                    "    f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;\n"
                    "    void *coop = khr ? (void *)&coop_khr : has_nv ? (void *)&coop_nv : NULL;\n"
                    "    VkBool32 *coop_on = khr ? &coop_khr.cooperativeMatrix : &coop_nv.cooperativeMatrix;\n"
                    "    if (khr)\n        coop_extensions[0] = VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;\n"
                    "    has16.pNext = &f16;\n    f16.pNext = &model;\n    model.pNext = coop;\n"
                    "    vkGetPhysicalDeviceFeatures2(vk->physical, &features);\n"
                    "    VkPhysicalDeviceSubgroupProperties subgroup;\n    memset(&subgroup, 0, sizeof subgroup);\n"
                    "    subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;\n"
                    "    VkPhysicalDeviceProperties2 properties;\n    memset(&properties, 0, sizeof properties);\n"
                    "    properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;\n    properties.pNext = &subgroup;\n"
                    "    vkGetPhysicalDeviceProperties2(vk->physical, &properties);\n"
                    "    if (!coop || found != 2 || !*coop_on || !model.vulkanMemoryModel || !f16.shaderFloat16 ||\n"
                    "        subgroup.subgroupSize != 32 || !oi_vk_coopmat_16x16x16(vk, khr))\n");
    oi__buf_printf(b, "        return %s_fail(%s_ERROR_RUNTIME, \"%s_open: the matmul kernels use cooperative matrices \"\n"
                      "                       \"(VK_KHR_ or VK_NV_cooperative_matrix with 16x16x16 f16 fragments, shaderFloat16, \"\n"
                      "                       \"vulkanMemoryModel, 32-wide subgroups) and this device lacks one; synthesize for its \"\n"
                      "                       \"own JSON\");\n",
                   N, N, N);
    oi__buf_puts(b, "    /* only what the kernels need on: the queried structs hold every feature the device has */\n"
                    "    coop_nv.cooperativeMatrixRobustBufferAccess = VK_FALSE;\n"
                    "    coop_khr.cooperativeMatrixRobustBufferAccess = VK_FALSE;\n"
                    "    model.vulkanMemoryModelDeviceScope = VK_FALSE;\n"
                    "    model.vulkanMemoryModelAvailabilityVisibilityChains = VK_FALSE;\n    f16.shaderInt8 = VK_FALSE;\n"
                    "    *coop_on = VK_TRUE;\n    model.vulkanMemoryModel = VK_TRUE;\n    f16.shaderFloat16 = VK_TRUE;\n"
                    "    model.pNext = coop;\n    f16.pNext = &model;\n    storage16.pNext = &f16;\n"
                    "    if (oi_vk_create_device(vk, coop_extensions, 3, &storage16))\n        return 1;\n");
}

/* NAME_open_on_device: the application's handles, and its buffer of the
 * model if it gives one. It has turned on the features the kernels need
 * (NAME.h lists them); only their offer can be checked here. */
static void oi__vk_source_app_device(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "static int %s_use_app_device(%s_ctx *ctx, const %s_vulkan_device *app) {\n    oi_vk *vk = &ctx->vk;\n",
                   N, N, N);
    oi__buf_puts(b, "    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)(void (*)(void))app->get_instance_proc_addr;\n"
                    "    if (oi_vk_use_app_device(vk, (VkInstance)app->instance, (VkPhysicalDevice)app->physical_device,\n"
                    "                             (VkDevice)app->device, (VkQueue)app->queue, app->queue_family_index, gipa))\n"
                    "        return 1;\n");
    if (p->gpu.fp16_storage)
        oi__buf_printf(b, "    VkPhysicalDevice16BitStorageFeatures has16;\n    memset(&has16, 0, sizeof has16);\n"
                          "    has16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;\n"
                          "    VkPhysicalDeviceFeatures2 features;\n    memset(&features, 0, sizeof features);\n"
                          "    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;\n    features.pNext = &has16;\n"
                          "    vkGetPhysicalDeviceFeatures2(vk->physical, &features);\n"
                          "    if (!has16.storageBuffer16BitAccess)\n"
                          "        return %s_fail(%s_ERROR_RUNTIME, \"%s_open_on_device: the kernels store temporaries as f16 \"\n"
                          "                       \"and this device has no storageBuffer16BitAccess\");\n", N, N, N);
    oi__buf_puts(b, "    if (!app->model_buffer)\n        return 0;\n"
                    "    VkPhysicalDeviceProperties props;\n    vkGetPhysicalDeviceProperties(vk->physical, &props);\n"
                    "    if (app->model_offset % props.limits.minStorageBufferOffsetAlignment)\n");
    oi__buf_printf(b, "        return %s_fail(%s_ERROR_ARGUMENT, \"%s_open_on_device: model_offset %%llu is not a multiple of \"\n"
                      "                       \"minStorageBufferOffsetAlignment (%%llu)\", (unsigned long long)app->model_offset,\n"
                      "                       (unsigned long long)props.limits.minStorageBufferOffsetAlignment);\n", N, N, N);
    oi__buf_printf(b, "    vk->device_buffers[OI_VK_MODEL].buffer = OI_VK_U64_BUFFER(app->model_buffer);\n"
                      "    vk->device_buffers[OI_VK_MODEL].size = %s_MODEL_BYTES;\n"
                      "    vk->model_offset = app->model_offset;\n    vk->app_model = 1;\n    return 0;\n}\n\n", N);
}

/* The device the folder makes for itself (NAME_open): the first discrete
 * GPU (or OI_VK_DEVICE), with the features the kernels need on. */
static void oi__vk_source_make_device(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    if (oi__vk_has_coopmat(p))
        oi__buf_printf(b, "static int %s_make_device(%s_ctx *ctx, int *use_khr) {\n    oi_vk *vk = &ctx->vk;\n"
                          "    int khr = 0;\n", N, N);
    else
        oi__buf_printf(b, "static int %s_make_device(%s_ctx *ctx) {\n    oi_vk *vk = &ctx->vk;\n", N, N);
    if (p->gpu.fp16_storage) {
        oi__buf_puts(b, "    /* the kernels store temporaries as f16 (synthesized for default_precision fp16) */\n"
                        "    VkPhysicalDevice16BitStorageFeatures storage16, has16;\n"
                        "    memset(&storage16, 0, sizeof storage16);\n"
                        "    storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;\n"
                        "    has16 = storage16;\n    storage16.storageBuffer16BitAccess = VK_TRUE;\n"
                        "    VkPhysicalDeviceFeatures2 features;\n    memset(&features, 0, sizeof features);\n"
                        "    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;\n    features.pNext = &has16;\n"
                        "    if (oi_vk_create_instance(vk) || oi_vk_pick_device(vk))\n        return 1;\n"
                        "    vkGetPhysicalDeviceFeatures2(vk->physical, &features);\n");
        oi__buf_printf(b, "    if (!has16.storageBuffer16BitAccess)\n        return %s_fail(%s_ERROR_RUNTIME, \"%s_open: the "
                          "kernels store temporaries as f16 and this device has no storageBuffer16BitAccess; \"\n"
                          "                       \"synthesize with default_precision fp32\");\n", N, N, N);
        if (oi__vk_has_coopmat(p))
            oi__vk_source_coopmat_device(b, p);
        else
            oi__buf_puts(b, "    if (oi_vk_create_device(vk, NULL, 0, &storage16))\n        return 1;\n");
    } else {
        oi__buf_puts(b, "    if (oi_vk_create_instance(vk) || oi_vk_pick_device(vk) || oi_vk_create_device(vk, NULL, 0, NULL))\n"
                        "        return 1;\n");
    }
    if (oi__vk_has_coopmat(p))
        oi__buf_puts(b, "    *use_khr = khr;\n");
    oi__buf_puts(b, "    return 0;\n}\n\n");
}

/* The device, the buffers and the pipelines of NAME_open. */
static void oi__vk_source_open(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__vk_source_app_device(b, p);
    oi__vk_source_make_device(b, p);
    oi__buf_printf(b, "static int %s_open_device(%s_ctx *ctx, const %s_vulkan_device *app) {\n    oi_vk *vk = &ctx->vk;\n",
                   N, N, N);
    if (oi__vk_has_coopmat(p))
        oi__buf_puts(b, "    int khr = 0; /* the cooperative-matrix kernels through VK_KHR_cooperative_matrix */\n");
    oi__buf_printf(b, "    if (app) {\n        if (%s_use_app_device(ctx, app))\n            return 1;\n", N);
    if (oi__vk_has_coopmat(p))
    {
        oi__buf_puts(b, "        const char *pick = getenv(\"OI_VK_COOPMAT\");\n"
                        "        khr = oi_vk_has_extension(vk, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) &&\n"
                        "              !(pick && strcmp(pick, \"nv\") == 0);\n"
                        "        if (!oi_vk_coopmat_16x16x16(vk, khr))\n");
        oi__buf_printf(b, "            return %s_fail(%s_ERROR_RUNTIME, \"%s_open_on_device: the matmul kernels use \"\n"
                          "                           \"16x16x16 f16 cooperative-matrix fragments, which this device lacks\");\n",
                       N, N, N);
    }
    oi__buf_printf(b, "    } else if (%s_make_device(ctx%s)) {\n        return 1;\n    }\n", N, oi__vk_has_coopmat(p) ? ", &khr" : "");
    if (oi__vk_scratch_bytes(p) > 0)
        oi__buf_printf(b, "    /* the arena, the partial products of the matmuls split along K and their block counters,\n"
                          "     * then the in-place matmuls' scratch */\n"
                          "    const VkDeviceSize sizes[OI_VK_BUFFERS] = {%lluu, %s_STATE_DEVICE_BYTES, (%s_MODEL_BYTES + 255u) / 256u * 256u};\n",
                       (unsigned long long)(oi__vk_scratch_offset(p) + oi__vk_scratch_bytes(p)), N, N);
    else if (oi__vk_has_split(p))
        oi__buf_printf(b, "    /* the arena, then the partial products of the matmuls split along K and their block counters */\n"
                          "    const VkDeviceSize sizes[OI_VK_BUFFERS] = {%lluu, %s_STATE_DEVICE_BYTES, (%s_MODEL_BYTES + 255u) / 256u * 256u};\n",
                       (unsigned long long)oi__vk_count_offset(p, NULL), N, N);
    else
        oi__buf_printf(b, "    const VkDeviceSize sizes[OI_VK_BUFFERS] = {%s_ARENA_BYTES, %s_STATE_DEVICE_BYTES, (%s_MODEL_BYTES + 255u) / 256u * 256u};\n",
                       N, N, N);
    oi__buf_puts(b, "    for (int i = 0; i < OI_VK_BUFFERS; i++)\n"
                    "        if (!(i == OI_VK_MODEL && vk->app_model) &&\n"
                    "            oi_vk_buffer_create(vk, &vk->device_buffers[i], sizes[i], OI_VK_DEVICE_USAGE, 0))\n"
                    "            return 1;\n");
    oi__buf_printf(b, "    if (oi_vk_buffer_create(vk, &ctx->staging, %s_STATE_DEVICE_BYTES, OI_VK_HOST_USAGE, 1) ||\n"
                      "        oi_vk_buffer_create(vk, &ctx->readback, %s_ARENA_BYTES, OI_VK_HOST_USAGE, 1))\n"
                      "        return 1;\n", N, N);
    oi__buf_puts(b, "    ctx->state = (unsigned char *)ctx->staging.map;\n    ctx->arena = (unsigned char *)ctx->readback.map;\n");
    oi__buf_printf(b, "    vk->pipelines = (VkPipeline *)calloc(%s_N_KERNELS + 1, sizeof *vk->pipelines);\n"
                      "    if (!vk->pipelines)\n        return %s_fail(%s_ERROR_MEMORY, \"%s_open: out of memory\");\n"
                      "    vk->n_pipelines = %s_N_KERNELS;\n", N, N, N, N, N);
    oi__buf_printf(b, "    if (oi_vk_create_layout(vk, %uu))\n        return 1;\n", oi__vk_push_bytes(p));
    if (oi__vk_has_coopmat(p))
        oi__buf_printf(b, "    for (int k = 0; k < %s_N_KERNELS; k++) {\n"
                          "        const int k_khr = khr && %s_kernels[k].khr_code; /* the module rewritten as KHR */\n"
                          "        if (oi_vk_create_pipeline(vk, k, k_khr ? %s_kernels[k].khr_code : %s_kernels[k].code,\n"
                          "                                  k_khr ? %s_kernels[k].khr_bytes : %s_kernels[k].bytes))\n"
                          "            return 1;\n    }\n",
                       N, N, N, N, N, N);
    else
        oi__buf_printf(b, "    for (int k = 0; k < %s_N_KERNELS; k++)\n"
                          "        if (oi_vk_create_pipeline(vk, k, %s_kernels[k].code, %s_kernels[k].bytes))\n            return 1;\n",
                       N, N, N);
    oi__buf_puts(b, "    return 0;\n}\n\n");
}

/* NAME_open, NAME_open_with and NAME_open_on_device. */
static void oi__vk_source_public_open(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "/* The kernels run on the GPU: no host threads, so the options have nothing to set. */\n"
                      "%s_ctx *%s_open_with(const char *model_path, const %s_options *options) {\n"
                      "    (void)options;\n    return %s_open(model_path);\n}\n\n", N, N, N, N);
    oi__buf_printf(b, "%s_ctx *%s_open(const char *model_path) { return %s_open_on(model_path, NULL); }\n\n", N, N, N);
    oi__buf_printf(b, "%s_ctx *%s_open_on_device(const char *model_path, const %s_vulkan_device *device) {\n"
                      "    if (!device) {\n        %s_fail(%s_ERROR_ARGUMENT, \"%s_open_on_device: no device\");\n"
                      "        return NULL;\n    }\n    return %s_open_on(model_path, device);\n}\n\n", N, N, N, N, N, N, N);
}

/* NAME_open_on: NAME_open on a device of its own (app NULL) or the application's. */
static void oi__vk_source_open_on(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    if (oi__vk_has_split(p))
        oi__buf_printf(b, "/* the split matmuls' block counters as they start (their kernels' headers say how they count) */\n"
                          "static const uint32_t %s_counts_zero[%llu] = {0};\n\n",
                       N, (unsigned long long)((oi__vk_count_offset(p, NULL) - oi__vk_split_offset(p, NULL)) / 4u));
    oi__buf_printf(b, "static %s_ctx *%s_open_on(const char *model_path, const %s_vulkan_device *app) {\n", N, N, N);
    oi__buf_printf(b, "    %s_ctx *ctx = (%s_ctx *)calloc(1, sizeof *ctx);\n", N, N);
    oi__buf_printf(b, "    if (!ctx) {\n        %s_fail(%s_ERROR_MEMORY, \"%s_open: out of memory\");\n        return NULL;\n    }\n",
                   N, N, N);
    oi__buf_printf(b, "    if (%s_map_model(ctx, model_path) != 0 || %s_open_device(ctx, app) != 0) {\n        %s_close(ctx);\n"
                      "        return NULL;\n    }\n", N, N, N);
    oi__buf_puts(b, "    /* the declared variables as they start, then everything up once */\n");
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++)
        if (p->schedule.buffers[i].home == OI__SY_STATE)
            oi__buf_printf(b, "    %s_init_%s(ctx);\n", N, p->plan->slots[i].name);
    oi__buf_printf(b, "    oi_vk *vk = &ctx->vk;\n"
                      "    if ((ctx->model && !vk->app_model &&\n"
                      "         oi_vk_upload(vk, &vk->device_buffers[OI_VK_MODEL], 0, ctx->model, ctx->model_size)) ||\n"
                      "        oi_vk_upload(vk, &vk->device_buffers[OI_VK_STATE], 0, ctx->state, %s_STATE_BYTES) ||\n", N);
    if (oi__vk_has_split(p)) { /* each dispatch's last workgroup leaves them at 0 again */
        uint64_t at = oi__vk_split_offset(p, NULL), words = (oi__vk_count_offset(p, NULL) - at) / 4u;
        oi__buf_printf(b, "        oi_vk_upload(vk, &vk->device_buffers[OI_VK_ARENA], %lluu, %s_counts_zero, %lluu) || /* the block counters */\n",
                       (unsigned long long)at, N, (unsigned long long)(4u * words));
    }
    oi__buf_printf(b, "        oi_vk_begin(vk, &vk->step, 0) || %s_record(ctx, vk->step)", N);
    if (oi__vk_n_uploads(p) > 0)
        oi__buf_printf(b, " || %s_record_uploads(ctx)", N);
    oi__buf_printf(b, ") {\n        %s_close(ctx);\n        return NULL;\n    }\n    return ctx;\n}\n\n", N);
}

static void oi__vk_source_close(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "void %s_close(%s_ctx *ctx) {\n    if (!ctx)\n        return;\n", N, N);
    oi__buf_puts(b, "    if (ctx->vk.device) {\n        if (!ctx->vk.app_device) /* every submission was waited for; the rest is the application's */\n"
                    "            vkDeviceWaitIdle(ctx->vk.device);\n"
                    "        oi_vk_buffer_free(&ctx->vk, &ctx->staging);\n        oi_vk_buffer_free(&ctx->vk, &ctx->readback);\n");
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n        for (int i = 0; i < ctx->n_dumps; i++)\n"
                      "            oi_vk_buffer_free(&ctx->vk, &ctx->dumps[i].copy);\n#endif\n", N);
    oi__buf_puts(b, "    }\n    oi_vk_destroy(&ctx->vk);\n");
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n    free(ctx->dumps);\n#endif\n", N);
    oi__buf_puts(b, "#ifdef OI_HAVE_MMAP\n    if (ctx->model_mapped)\n        munmap((void *)(uintptr_t)ctx->model, ctx->model_size);\n"
                    "    else\n#endif\n        free((void *)(uintptr_t)ctx->model);\n    free(ctx);\n}\n\n");
}

static void oi__vk_source_step(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "int %s_step(%s_ctx *ctx) {\n    if (!ctx)\n        return %s_fail(%s_ERROR_ARGUMENT, \"%s_step: no context\");\n",
                   N, N, N, N, N);
    oi__buf_puts(b, "    /* the start of a step, in the staging copy the recorded step uploads */\n");
    int dyn = 0;
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        if (sl->decl && sl->kind == OI__MEM_DYNAMIC) {
            if (buf->home == OI__SY_STATE)
                oi__buf_printf(b, "    if (!ctx->inserted[%d] && !ctx->on_device[%d])\n        %s_init_%s(ctx); /* dynamic, not set: as declared */\n",
                               dyn, dyn, N, sl->name);
            dyn++;
        } else if (sl->decl && sl->kind == OI__MEM_VOLATILE && buf->home == OI__SY_STATE) {
            oi__buf_printf(b, "    %s_init_%s(ctx); /* volatile */\n", N, sl->name);
        }
    }
    if (oi__vk_n_uploads(p) == 0) {
        oi__buf_puts(b, "    if (oi_vk_submit(&ctx->vk, ctx->vk.step))\n        return 1;\n");
    } else {
        oi__buf_printf(b, "    /* the uploads, but not of an input the application wrote on the device, then the step */\n"
                          "    VkCommandBuffer cbs[%s_N_UPLOADS + 1];\n    uint32_t n = 0;\n    int from_device = 0;\n"
                          "    for (size_t d = 0; d < sizeof ctx->on_device; d++)\n"
                          "        from_device |= ctx->on_device[d] && !ctx->inserted[d];\n"
                          "    if (!from_device)\n        cbs[n++] = ctx->upload_all;\n"
                          "    for (int u = 0; u < %s_N_UPLOADS && from_device; u++) {\n"
                          "        int d = %s_upload_dynamic[u];\n"
                          "        if (d < 0 || !ctx->on_device[d] || ctx->inserted[d])\n            cbs[n++] = ctx->upload[u];\n"
                          "    }\n    cbs[n++] = ctx->vk.step;\n"
                          "    if (oi_vk_submit_n(&ctx->vk, cbs, n))\n        return 1;\n", N, N, N);
    }
    oi__buf_puts(b, "    if (ctx->vk.queries) {\n        uint64_t ticks[2] = {0, 0};\n"
                    "        if (vkGetQueryPoolResults(ctx->vk.device, ctx->vk.queries, 0, 2, sizeof ticks, ticks, sizeof ticks[0],\n"
                    "                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS)\n"
                    "            ctx->gpu_ms = (double)(ticks[1] - ticks[0]) * ctx->vk.timestamp_ns * 1e-6;\n    }\n");
    oi__buf_printf(b, "#ifdef %s_DEBUG_DUMP\n    %s_dump_write(ctx);\n#endif\n", N, N);
    if (oi__vk_n_sites(&p->schedule) > 0)
        oi__buf_printf(b, "    const int32_t *status = (const int32_t *)(ctx->state + %s_STATUS_AT);\n"
                          "    if (status[0] != 0) /* a kernel found an index out of range: the step is not counted */\n"
                          "        return %s_failure(status[0], status[1], status[2]);\n", N, N);
    oi__buf_puts(b, "    memset(ctx->inserted, 0, sizeof ctx->inserted);\n    memset(ctx->on_device, 0, sizeof ctx->on_device);\n"
                    "    ctx->steps++;\n    return 0;\n}\n\n");
    oi__buf_printf(b, "double %s_gpu_ms(const %s_ctx *ctx) { return ctx ? ctx->gpu_ms : 0.0; }\n", N, N);
    oi__buf_printf(b, "int %s_dispatches(const %s_ctx *ctx) { return ctx ? ctx->vk.dispatches : 0; }\n", N, N);
    oi__buf_printf(b, "int %s_barriers(const %s_ctx *ctx) { return ctx ? ctx->vk.barriers : 0; }\n", N, N);
    oi__buf_printf(b, "int %s_dispatch_ms(const %s_ctx *ctx, double *ms, int *kernel, int max) {\n"
                      "    return ctx ? oi_vk_dispatch_ms(&ctx->vk, ms, kernel, max) : 0;\n}\n\n", N, N);
}

/* NAME_input_buffer_VAR and NAME_output_buffer_VAR: where a variable is on the
 * device (docs/synthesizer.md, "Vulkan interop"). */
static void oi__vk_source_buffers(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__slot *sl = &p->plan->slots[i];
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        int d = oi__vk_dynamic_index(p, i);
        const char *which = buf->home == OI__SY_ARENA ? "OI_VK_ARENA" : buf->home == OI__SY_STATE ? "OI_VK_STATE" : "OI_VK_MODEL";
        if (d >= 0 && buf->home == OI__SY_STATE) {
            oi__buf_printf(b, "int %s_input_buffer_%s(%s_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {\n"
                              "    if (!ctx || !buffer || !offset || !size)\n"
                              "        return %s_fail(%s_ERROR_ARGUMENT, \"%s_input_buffer_%s: a NULL argument\");\n",
                           N, sl->name, N, N, N, N, sl->name);
            oi__buf_printf(b, "    ctx->on_device[%d] = 1; /* the next step reads what the application writes there */\n"
                              "    ctx->inserted[%d] = 0;\n", d, d);
            oi__buf_printf(b, "    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_STATE].buffer);\n"
                              "    *offset = %lluu;\n    *size = %lluu;\n    return 0;\n}\n\n",
                           (unsigned long long)buf->offset, (unsigned long long)buf->bytes);
        }
        if (!oi__vk_getter(p, i))
            continue;
        oi__buf_printf(b, "int %s_output_buffer_%s(const %s_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {\n"
                          "    if (!ctx || !buffer || !offset || !size)\n"
                          "        return %s_fail(%s_ERROR_ARGUMENT, \"%s_output_buffer_%s: a NULL argument\");\n",
                       N, sl->name, N, N, N, N, sl->name);
        oi__buf_printf(b, "    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[%s].buffer);\n"
                          "    *offset = %lluu%s;\n    *size = %lluu;\n    return 0;\n}\n\n",
                       which, (unsigned long long)(buf->home == OI__SY_MODEL ? buf->tensors[0]->data_offset : buf->offset),
                       buf->home == OI__SY_MODEL ? " + ctx->vk.model_offset" : "",
                       (unsigned long long)buf->bytes);
    }
}

static char *oi__vk_source(const oi_plan *p) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__vk_source_prologue(&b, p);
    oi__vk_source_ctx(&b, p);
    oi__sy_emit_inits(&b, p);
    oi__sy_emit_model_map(&b, p);
    oi__vk_source_record(&b, p);
    if (oi__vk_n_sites(&p->schedule) > 0)
        oi__vk_source_failures(&b, p);
    oi__vk_source_uploads(&b, p);
    oi__buf_puts(&b, "/* ---- the API ---- */\n\n");
    oi__vk_source_open(&b, p);
    oi__vk_source_open_on(&b, p);
    oi__vk_source_close(&b, p);
    oi__vk_source_public_open(&b, p);
    oi__vk_source_step(&b, p);
    oi__sy_emit_accessors(&b, p);
    oi__vk_source_buffers(&b, p);
    return oi__buf_take(&b);
}

/* What the kernels need on a device the application makes (NAME_open_on_device). */
static const char *oi__vk_needs(const oi_plan *p) {
    if (oi__vk_has_coopmat(p))
        return " *   the features storageBuffer16BitAccess, shaderFloat16, vulkanMemoryModel and\n"
               " *   cooperativeMatrix, with VK_KHR_cooperative_matrix where the device offers it (else\n"
               " *   VK_NV_cooperative_matrix), VK_KHR_vulkan_memory_model, VK_KHR_shader_float16_int8,\n"
               " *   and 32-wide subgroups.\n";
    if (p->gpu.fp16_storage)
        return " *   the feature storageBuffer16BitAccess (the kernels store temporaries as f16).\n";
    return " *   nothing beyond Vulkan 1.1 and a queue with compute.\n";
}

/* The header's interop part: the application's device, and where a
 * variable is on the device. */
static void oi__vk_header_interop(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "\n/* Vulkan interop (docs/synthesizer.md, \"Vulkan interop\"). Handles travel as void *\n"
                      " * (VkInstance, VkPhysicalDevice, VkDevice, VkQueue) and buffers as uint64_t\n"
                      " * (VkBuffer), so this header needs no vulkan.h. %s_open_on_device runs the\n"
                      " * folder on the application's device, which must have on:\n%s"
                      " * Steps are submitted to `queue` and waited for (its fence) before %s_step\n"
                      " * returns; nothing here destroys the application's handles. */\n", N, oi__vk_needs(p), N);
    oi__buf_printf(b, "typedef void (*%s_vulkan_void_function)(void);\ntypedef struct %s_vulkan_device {\n"
                      "    void *instance, *physical_device, *device, *queue;\n    uint32_t queue_family_index;\n"
                      "    /* vkGetInstanceProcAddr of the loader that made `instance`; NULL: libvulkan's */\n"
                      "    %s_vulkan_void_function (*get_instance_proc_addr)(void *instance, const char *name);\n"
                      "    /* a VkBuffer (storage) holding the model file's bytes from model_offset on (a multiple\n"
                      "     * of minStorageBufferOffsetAlignment), read in place; 0: uploaded at open */\n"
                      "    uint64_t model_buffer, model_offset;\n} %s_vulkan_device;\n", N, N, N, N);
    oi__buf_printf(b, "%s_ctx *%s_open_on_device(const char *model_path, const %s_vulkan_device *device);\n", N, N, N);
    oi__buf_printf(b, "/* NAME_input_buffer_VAR: the range (VkBuffer, offset, bytes) of a dynamic variable on\n"
                      " * the device; for the next step it holds what the application writes there, on\n"
                      " * `queue` before %s_step, instead of %s_set_VAR's values (a later set_VAR wins).\n"
                      " * NAME_output_buffer_VAR: where VAR is after a step, valid until the next one; the\n"
                      " * application's first read of it needs a barrier from the compute and transfer\n"
                      " * stages' writes. */\n", N, N);
    for (int i = 0; i < (int)arrlen(p->plan->slots); i++) {
        const oi__sy_buffer *buf = &p->schedule.buffers[i];
        const char *v = p->plan->slots[i].name;
        if (oi__vk_dynamic_index(p, i) >= 0 && buf->home == OI__SY_STATE)
            oi__buf_printf(b, "int %s_input_buffer_%s(%s_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);\n",
                           N, v, N);
        if (oi__vk_getter(p, i))
            oi__buf_printf(b, "int %s_output_buffer_%s(const %s_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size);\n",
                           N, v, N);
    }
}

/* The C target's header, with the Vulkan target's counters added. */
static char *oi__vk_header(const oi_plan *p) {
    char *text = oi__sy_emit_header(p);
    const char *tail = "\n#ifdef __cplusplus\n}\n#endif\n#endif";
    char *at = text ? strstr(text, tail) : NULL;
    if (!at)
        return text;
    const char *N = p->name;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_append(&b, text, (size_t)(at - text));
    oi__buf_printf(&b, "\n/* Vulkan: the last step's GPU time in ms (timestamps; 0 without them),\n"
                       " * and the dispatches and barriers of the recorded step. */\n"
                       "double %s_gpu_ms(const %s_ctx *ctx);\nint %s_dispatches(const %s_ctx *ctx);\n"
                       "int %s_barriers(const %s_ctx *ctx);\n", N, N, N, N, N, N);
    oi__buf_printf(&b, "/* Built with -DOI_VK_PROFILE=N (a timestamp after each of the step's first N\n"
                       " * dispatches): the last step's GPU time of each, in ms from the previous\n"
                       " * timestamp, and the kernel (NAME_kK.comp) it ran; returns how many (0\n"
                       " * otherwise). For finding the slow kernels, not for timing a step. */\n"
                       "int %s_dispatch_ms(const %s_ctx *ctx, double *ms, int *kernel, int max);\n", N, N);
    oi__vk_header_interop(&b, p);
    oi__buf_puts(&b, at);
    oi__free(text);
    return oi__buf_take(&b);
}

/* Whether a kernel is a matmul by oi_matmul_tiles.glsl (not on cooperative matrices). */
static bool oi__vk_has_matmul(const oi_plan *p) {
    for (int k = 0; k < (int)arrlen(p->schedule.kernels); k++)
        if (p->schedule.kernels[k].kind == OI__SY_K_MATMUL &&
            !oi__vk_cm_takes(&p->gpu, &p->schedule, &p->schedule.kernels[k]))
            return true;
    return false;
}

static bool oi__vk_has_coopmat(const oi_plan *p) {
    for (int k = 0; k < (int)arrlen(p->schedule.kernels); k++)
        if (oi__vk_cm_takes(&p->gpu, &p->schedule, &p->schedule.kernels[k]))
            return true;
    return false;
}

static bool oi__vk_has_kind(const oi_plan *p, oi__sy_kernel_kind kind) {
    for (int k = 0; k < (int)arrlen(p->schedule.kernels); k++)
        if (p->schedule.kernels[k].kind == kind)
            return true;
    return false;
}

static char *oi__vk_makefile(const oi_plan *p) {
    const char *N = p->name;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "# Makefile - `make` compiles the kernels with glslc (into %s_kK.spv.h, embedded\n"
                       "# in %s.c) and builds lib%s.a and the driver %s with volk and the Vulkan headers.\n", N, N, N, N);
    oi__buf_puts(&b, "# VOLK_DIR: the folder holding volk.h and volk.c (Debian: libvulkan-volk-dev).\n"
                     "CC ?= cc\nAR ?= ar\nGLSLC ?= glslc\nVOLK_DIR ?= /usr/include\n"
                     "CFLAGS ?= -O2 -std=c11 -Wall -Wextra -pedantic\nVOLK_CFLAGS ?= -O2\nLDLIBS ?= -ldl -lm\n\n");
    if (oi__vk_has_coopmat(p))
        oi__buf_puts(&b, "PYTHON ?= python3\n");
    oi__buf_puts(&b, "SPV =");
    for (int k = 0; k < oi__vk_n_modules(p); k++) {
        oi__buf_printf(&b, " %s_k%d.spv.h", N, k);
        if (k < (int)arrlen(p->schedule.kernels) && oi__vk_cm_takes(&p->gpu, &p->schedule, &p->schedule.kernels[k]))
            oi__buf_printf(&b, " %s_k%d_khr.spv.h", N, k);
    }
    oi__buf_printf(&b, "\n\nall: %s\n\n", N);
    oi__buf_printf(&b, "%%.spv.h: %%.comp oi_kernel.glsl oi_scalar.h oi_math.glsl%s%s%s%s%s\n",
                   oi__vk_has_kind(p, OI__SY_K_ROPE) ? " oi_rope.glsl" : "",
                   oi__vk_has_kind(p, OI__SY_K_QMATMUL) ? " oi_quant_blocks.glsl" : "",
                   oi__vk_has_matmul(p) ? " oi_matmul_tiles.glsl" : "",
                   oi__vk_has_coopmat(p) ? " oi_matmul_coopmat_tiles.glsl" : "",
                   oi__vk_has_split(p) ? " oi_gemm_slices.glsl" : "");
    oi__buf_puts(&b, "\t$(GLSLC) --target-env=vulkan1.1 -O -mfmt=c $< -o $@\n\n");
    for (int k = 0; k < (int)arrlen(p->schedule.kernels); k++)
        if (oi__vk_cm_takes(&p->gpu, &p->schedule, &p->schedule.kernels[k]))
            oi__buf_printf(&b, "# k%d on cooperative matrices: also as a SPV_KHR_cooperative_matrix module (oi_gen_spirv.py,\n"
                               "# vulkan/gen_spirv.py verbatim; Debian's glslang compiles only the NV extension)\n"
                               "%s_k%d_khr.spv.h: %s_k%d.comp oi_kernel.glsl oi_scalar.h oi_math.glsl oi_matmul_coopmat_tiles.glsl "
                               "oi_gen_spirv.py\n"
                               "\t$(GLSLC) --target-env=vulkan1.1 -O $< -o %s_k%d.spv\n"
                               "\t$(PYTHON) oi_gen_spirv.py coopmat-khr %s_k%d.spv %s_k%d_khr.spv\n"
                               "\t$(PYTHON) oi_gen_spirv.py embed $@ %s_k%d_khr.spv\n\n",
                           k, N, k, N, k, N, k, N, k, N, k, N, k);
    oi__buf_printf(&b, "%s.o: %s.c %s.h oi_vk_runtime.h $(SPV)\n\t$(CC) $(CFLAGS) -I$(VOLK_DIR) -c %s.c -o $@\n\n", N, N, N, N);
    oi__buf_puts(&b, "volk.o: $(VOLK_DIR)/volk.c\n\t$(CC) $(VOLK_CFLAGS) -I$(VOLK_DIR) -c $(VOLK_DIR)/volk.c -o $@\n\n");
    oi__buf_printf(&b, "lib%s.a: %s.o volk.o\n\t$(AR) rcs $@ %s.o volk.o\n\n", N, N, N);
    oi__buf_printf(&b, "%s: main.c %s.h npy.h lib%s.a\n\t$(CC) $(CFLAGS) main.c lib%s.a $(LDLIBS) -o $@\n\n", N, N, N, N);
    oi__buf_printf(&b, "clean:\n\trm -f %s %s.o volk.o lib%s.a $(SPV)\n\n.PHONY: all clean\n", N, N, N);
    return oi__buf_take(&b);
}

oi_status oi__sy_emit_vulkan(const oi_plan *p, const oi__sy_out *dir) {
    const char *N = p->name;
    oi_status st = oi__sy_emit_mkdirs(dir);
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, N, ".h", oi__vk_header(p));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, N, ".c", oi__vk_source(p));
    for (int k = 0; st == OI_OK && k < oi__vk_n_modules(p); k++) {
        char name[160];
        snprintf(name, sizeof name, "%s_k%d", N, k);
        st = oi__sy_emit_write(dir, name, ".comp", oi__vk_kernel_source(p, k));
    }
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "oi_kernel", ".glsl", oi__vk_kernel_glsl(p));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "oi_scalar", ".h", oi__sy_emit_text(oi__sy_text_scalar_h));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "oi_math", ".glsl", oi__sy_emit_text(oi__sy_text_math_glsl));
    if (st == OI_OK && oi__vk_has_matmul(p))
        st = oi__sy_emit_write(dir, "oi_matmul_tiles", ".glsl", oi__sy_emit_text(oi__sy_text_matmul_tiles_glsl));
    if (st == OI_OK && oi__vk_has_split(p))
        st = oi__sy_emit_write(dir, "oi_gemm_slices", ".glsl", oi__sy_emit_text(oi__sy_text_gemm_slices_glsl));
    if (st == OI_OK && oi__vk_has_kind(p, OI__SY_K_ROPE))
        st = oi__sy_emit_write(dir, "oi_rope", ".glsl", oi__sy_emit_text(oi__sy_text_rope_glsl));
    if (st == OI_OK && oi__vk_has_kind(p, OI__SY_K_QMATMUL))
        st = oi__sy_emit_write(dir, "oi_quant_blocks", ".glsl", oi__sy_emit_text(oi__sy_text_quant_glsl));
    if (st == OI_OK && oi__vk_has_coopmat(p))
        st = oi__sy_emit_write(dir, "oi_matmul_coopmat_tiles", ".glsl",
                               oi__sy_emit_text(oi__sy_text_matmul_coopmat_tiles_glsl));
    if (st == OI_OK && oi__vk_has_coopmat(p))
        st = oi__sy_emit_write(dir, "oi_gen_spirv", ".py", oi__sy_emit_text(oi__sy_text_gen_spirv_py));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "oi_vk_runtime", ".h", oi__sy_emit_text(oi__sy_text_vk_runtime));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "npy", ".h", oi__sy_emit_text(oi__sy_text_npy_h));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "main", ".c", oi__sy_emit_driver(p));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "Makefile", "", oi__vk_makefile(p));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "plan", ".json", oi_plan_to_json(p));
    if (st == OI_OK)
        st = oi__sy_emit_write(dir, "plan", ".dot", oi__sy_emit_dot(p));
    return st;
}
