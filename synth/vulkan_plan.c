/* vulkan_plan.c - the schedule on the device, as the kernels and the host
 * code both need it: matmul tiles and the split along K, where each value
 * lives in the three buffers, index expressions as GLSL, the loops and
 * branches around a kernel, reshapes kept in their input's bytes,
 * attention's operands as views, f16 storage, and the arena's regions past
 * the schedule's (partial products, block counters, scratch). It decides
 * what vulkan_kernels.c and emit_vulkan.c print and prints nothing itself
 * but index expressions. */
#include "synth_internal.h"
#include "../vulkan/vk_matmul_tiling.h"

/* ------------------------------------------------------------------ */
/* GLSL kernels                                                        */
/* ------------------------------------------------------------------ */
static const oi__slot *oi__vk_slot(const oi__sy_schedule *s, int slot) { return &s->shaped[slot]; }
static int64_t oi__vk_numel(const oi__slot *sl) { return oi__shape_numel(sl->ndim, sl->shape); }

/* Matmul tiles on a device of 256-invocation workgroups: the backend's
 * (vk_matmul_tiling.h, see oi__vk_mm_tiles_of). Where the device allows
 * fewer: 8 x 8 threads, each R x R results, K in steps of 16. R is 4
 * unless that leaves fewer than OI__VK_BUSY_WORKGROUPS workgroups (every
 * SM of a GPU busy): 2, then 1. A CPU device has its own tiles
 * (oi__vk_mm_tiles_of). */
#define OI__VK_BUSY_WORKGROUPS 256
static int oi__vk_matmul_side(const oi__sy_gpu *g) { return g->workgroup >= 256 ? 16 : 8; }

static int oi__vk_matmul_reg(const oi__sy_gpu *g, const oi__slot *c) {
    int side = oi__vk_matmul_side(g), reg = 4;
    while (reg > 1) {
        int64_t tile = side * reg;
        if (((c->shape[0] + tile - 1) / tile) * ((c->shape[1] + tile - 1) / tile) >= OI__VK_BUSY_WORKGROUPS)
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
 * the fewer products a block has to add, the shorter that tail. On a CPU
 * device (lavapipe) the backend's direct tiles: the loops read their
 * operands from the buffers (matmul_tiles.glsl's MM_DIRECT), K not split. */
typedef struct oi__vk_mm_tiles {
    int side, reg, bk;        /* side x side threads of reg x reg_n results, K in steps of bk */
    uint32_t slices, k_slice; /* slices of K (1: not split) and K per slice */
    int reg_n;                /* a thread's columns (reg: its rows) */
    bool direct;              /* operands read from the buffers, no shared tiles (MM_DIRECT) */
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
    oi__vk_mm_tiles t = {OI__VK_SPLIT_SIDE, (int)bm / OI__VK_SPLIT_SIDE, OI__VK_SPLIT_BK, 1u, 0u, (int)bn / OI__VK_SPLIT_SIDE,
                         false};
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
    oi__vk_mm_tiles t = {oi__vk_matmul_side(g), 1, 16, 1u, 0u, 1, false};
    if (g->cpu_device) { /* the backend's direct tiles (vk_matmul_tiling.h) */
        const int reg = OI__VK_DIRECT_BLOCK / OI__VK_DIRECT_SIDE;
        oi__vk_mm_tiles direct = {OI__VK_DIRECT_SIDE, reg, 16, 1u, 0u, reg, true};
        return direct;
    }
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

/* The axes a sum_axis or mean_axis reduces (its `axes`: a list, or one int)
 * as flags; returns how many elements each result adds. */
static int64_t oi__vk_reduced_axes(const oi__sy_schedule *s, const oi__pnode *pn, bool reduced[OI_MAX_DIMS]) {
    const oi__slot *in = &s->shaped[pn->inputs[0]];
    for (int d = 0; d < OI_MAX_DIMS; d++)
        reduced[d] = false;
    for (int i = 0; i < (int)arrlen(pn->attrs); i++) {
        const oi__attr *a = &pn->attrs[i];
        if (strcmp(a->name, "axes") != 0)
            continue;
        bool list = a->kind == OI__ATTR_INT_LIST;
        for (int j = 0; j < (list ? (int)arrlen(a->ints) : 1); j++) {
            int64_t ax = list ? a->ints[j] : a->i;
            ax = ax < 0 ? ax + in->ndim : ax;
            if (ax >= 0 && ax < in->ndim)
                reduced[ax] = true;
        }
    }
    int64_t count = 1;
    for (int d = 0; d < in->ndim; d++)
        count *= reduced[d] ? in->shape[d] : 1;
    return count;
}

/* Whether reduction pn runs as a workgroup per output row (oi__vk_reduce):
 * reduce.c's contiguous path, the reduced axes the last ones; else an
 * invocation per output element (oi__vk_reduce_strided). */
static bool oi__vk_row_reduce(const oi__sy_schedule *s, const oi__pnode *pn) {
    if (pn->ir->op == OI_OP_prod_axis) /* in the input's order, as reduce.c: its bits, and no tree to overflow */
        return false;
    const oi__slot *in = &s->shaped[pn->inputs[0]], *out = &s->shaped[pn->out];
    int64_t rows = oi__shape_numel(out->ndim, out->shape), n = oi__shape_numel(in->ndim, in->shape);
    bool reduced[OI_MAX_DIMS];
    oi__vk_reduced_axes(s, pn, reduced);
    for (int d = 1; d < in->ndim; d++) /* no axis kept after a reduced one */
        if (reduced[d - 1] && !reduced[d])
            return false;
    return rows > 0 && n % rows == 0;
}

/* The buffer a variable lives in and its first element there. */
static const char *oi__vk_buffer_name(oi__sy_home home) {
    return home == OI__SY_ARENA ? "arena" : home == OI__SY_STATE ? "state" : "model";
}

/* A buffer's first byte in its array: in the file for the model's, else its offset. */
static uint64_t oi__vk_buffer_at(const oi__sy_buffer *buf) {
    return buf->home == OI__SY_MODEL ? buf->tensors[0]->data_offset : buf->offset;
}

/* oi_kernel.glsl's int array holding a buffer's words: model_u where the
 * caller reads the model (its entries or a prefix's), else the arena's or
 * the state's. */
static const char *oi__vk_int_words(const oi__sy_buffer *buf, bool model) {
    return model ? "model_u" : buf->home == OI__SY_ARENA ? "arena_i" : "state_i";
}

/* Whether some transfer or cache statement copies slot's bytes as they are
 * (oi__vk_half_alone keeps such values f32). */
static bool oi__vk_copies_slot(const oi__sy_step *st, void *arg) {
    int slot = *(const int *)arg;
    bool copies = st->kind == OI__SY_S_TRANSFER ||
                  (st->kind == OI__SY_S_CACHE && st->node->ir->kind != OI__NODE_CACHE_RESET); /* byte copies */
    return copies && (st->node->out == slot || st->node->var == slot);
}

static bool oi__vk_transfers(const oi__sy_step *steps, int slot) { return oi__vk_walk(steps, oi__vk_copies_slot, &slot); }

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

/* The cache statements that are kernels of their own (oi__vk_cache_kernel),
 * in the step tree's order (stb array). */
typedef struct oi__vk_node_list {
    const oi__sy_schedule *s;
    const oi__pnode ***out;
} oi__vk_node_list;

static bool oi__vk_add_cache_node(const oi__sy_step *st, void *arg) {
    oi__vk_node_list *l = (oi__vk_node_list *)arg;
    if (st->kind == OI__SY_S_CACHE && oi__vk_cache_kernel(l->s, st->node))
        (void)arrput(*l->out, st->node);
    return false;
}

static void oi__vk_cache_nodes(const oi__sy_schedule *s, const oi__sy_step *steps, const oi__pnode ***out) {
    oi__vk_node_list l = {s, out};
    oi__vk_walk(steps, oi__vk_add_cache_node, &l);
}

/* What encloses a kernel (kernel >= 0) or a cache statement (node) in the
 * step tree, outermost first. The loops: their indices are pushed when the
 * step is recorded. The branches on variables: each condition's slot, and
 * whether the kernel is in the block taken when it is true. Both blocks are
 * recorded; the kernel returns at once where one of them says no
 * (oi__vk_guard). */
typedef struct oi__vk_loops {
    const char *var[8];
    int n;
} oi__vk_loops;

typedef struct oi__vk_guards {
    const oi__pnode *branch[OI__VK_MAX_GUARDS];
    bool when_true[OI__VK_MAX_GUARDS];
    int n;
} oi__vk_guards;

typedef struct oi__vk_enclosing {
    oi__vk_loops loops;
    oi__vk_guards guards;
} oi__vk_enclosing;

static bool oi__vk_enclosing_of(const oi__sy_step *steps, int kernel, const oi__pnode *node, oi__vk_enclosing *e) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if ((kernel >= 0 && st->kind == OI__SY_S_KERNEL && st->kernel == kernel) ||
            (node && st->kind == OI__SY_S_CACHE && st->node == node))
            return true;
        bool loop = st->kind == OI__SY_S_LOOP && e->loops.n < 8;
        if (loop)
            e->loops.var[e->loops.n++] = st->node->ir->loop_index;
        if (oi__vk_enclosing_of(st->body, kernel, node, e))
            return true;
        e->loops.n -= loop;
        bool guard = st->kind == OI__SY_S_BRANCH && st->node->var >= 0 && e->guards.n < OI__VK_MAX_GUARDS;
        for (int block = 0; block < 2; block++) {
            if (guard) {
                e->guards.branch[e->guards.n] = st->node;
                e->guards.when_true[e->guards.n++] = block == 0;
            }
            if (oi__vk_enclosing_of(block == 0 ? st->then_steps : st->else_steps, kernel, node, e))
                return true;
            e->guards.n -= guard;
        }
    }
    return false;
}

static oi__vk_enclosing oi__vk_enclosing_around(const oi__sy_schedule *s, int kernel, const oi__pnode *node) {
    oi__vk_enclosing e;
    memset(&e, 0, sizeof e);
    if (!oi__vk_enclosing_of(s->steps, kernel, node, &e))
        memset(&e, 0, sizeof e);
    return e;
}

static oi__vk_loops oi__vk_loops_around(const oi__sy_schedule *s, int kernel, const oi__pnode *node) {
    return oi__vk_enclosing_around(s, kernel, node).loops;
}

static oi__vk_guards oi__vk_guards_around(const oi__sy_schedule *s, int kernel, const oi__pnode *node) {
    return oi__vk_enclosing_around(s, kernel, node).guards;
}

/* Whether the plan has bool values on the device (bytes in the words). */
static bool oi__vk_has_bytes(const oi__sy_schedule *s) {
    for (int i = 0; i < (int)arrlen(s->kernels); i++)
        if (s->kernels[i].kind == OI__SY_K_ALL_FINITE)
            return true;
    for (int i = 0; i < (int)arrlen(s->plan->slots); i++)
        if (s->plan->slots[i].dtype == OI_DTYPE_BOOL && s->buffers[i].home != OI__SY_NONE)
            return true;
    return false;
}

/* Whether a kernel of the plan computes on i64 (oi__vk_int64_kernel): the
 * folder then needs shaderInt64 on the device. */
static bool oi__vk_has_int64(const oi__sy_schedule *s) {
    for (int i = 0; i < (int)arrlen(s->kernels); i++)
        if (oi__vk_int64_kernel(s, &s->kernels[i]))
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

static bool oi__vk_count_ref(const oi__sy_step *st, void *arg) {
    oi__vk_find *f = (oi__vk_find *)arg;
    int *slots = NULL;
    oi__vk_step_slots(f->s, st, &slots);
    if (st->kind == OI__SY_S_TRANSFER)
        f->count += st->node->out == f->slot || st->node->var == f->slot;
    for (int j = 0; j < (int)arrlen(slots); j++)
        f->count += slots[j] == f->slot;
    arrfree(slots);
    return false;
}

/* How often the steps (and those inside them) name slot. */
static int oi__vk_count_refs(const oi__sy_schedule *s, const oi__sy_step *steps, int slot) {
    oi__vk_find f = {s, slot, NULL, 0};
    oi__vk_walk(steps, oi__vk_count_ref, &f);
    return f.count;
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

/* Whether kernel k runs on cooperative matrices (vulkan_kernels.c, with the
 * coopmat kernel it chooses): such a matmul is never split. */
static bool oi__vk_cm_takes(const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_kernel *k);

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
