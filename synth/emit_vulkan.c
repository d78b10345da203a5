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
 * C target.
 *
 * The target is four files of the one unit (synth_impl.c), in this order:
 * vulkan_check.c (what it refuses), vulkan_plan.c (the schedule on the
 * device: tiles, buffers, aliases, views, arena regions), vulkan_kernels.c
 * (the GLSL of each kernel kind) and this one (the host code: the recorded
 * command buffer, open/step/close, the header, the Makefile, the files). */
#include "synth_internal.h"
#include "embedded.h"

/* Whether some matmul runs on cooperative matrices (defined with its peers below). */
static bool oi__vk_has_coopmat(const oi_plan *p);

/* ------------------------------------------------------------------ */
/* The host code                                                       */
/* ------------------------------------------------------------------ */
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
        loops = oi__vk_loops_around(s, k->id, NULL);
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
    uint32_t gx, gy, gz;
    oi__vk_groups(p, k, &gx, &gy, &gz);
    const char *push_args = push ? "push, (uint32_t)sizeof push" : "NULL, 0";
    oi__vk_indent(b, depth + 1);
    oi__buf_printf(b, "if (oi_vk_dispatch(vk, cb, %d, %s, %uu, %uu, %uu, %s, %d, %s, %d))\n", k->id, push_args, gx, gy,
                   gz, n_reads ? "reads" : "NULL", n_reads,
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

static uint64_t oi__vk_offset(const oi__sy_schedule *s, int slot) { return oi__vk_buffer_at(&s->buffers[slot]); }

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
    oi__vk_loops loops = oi__vk_loops_around(s, -1, pn);
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
                   (unsigned long long)(groups > OI__VK_MAX_GROUPS ? OI__VK_MAX_GROUPS : groups ? groups : 1), n_reads);
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
        /* whole words: the buffer's last word is its own (schedule.c's oi__sy_arena_align) */
        oi__buf_printf(b, ";\n        if (oi_vk_access(vk, cb, NULL, 0, &zero, 1))\n            return 1;\n"
                          "        vkCmdFillBuffer(cb, vk->device_buffers[OI_VK_ARENA].buffer, %llu, %llu, 0);\n    }\n",
                       (unsigned long long)buf->offset, (unsigned long long)(buf->bytes + 3) / 4 * 4);
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
            loops = oi__vk_loops_around(&p->schedule, k, NULL);
        n += 4u * (uint32_t)loops.n;
        most = n > most ? n : most;
    }
    const oi__pnode **nodes = NULL; /* the cache statements' kernels push their loops' indices */
    oi__vk_cache_nodes(&p->schedule, p->schedule.steps, &nodes);
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        oi__vk_loops loops = oi__vk_loops_around(&p->schedule, -1, nodes[i]);
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

/* The device's creation (vkCreateDevice with `extensions`, `n_extensions`
 * of them, and the pNext chain `chain`, "NULL" for none) by the folder's
 * own open. Where a kernel computes on i64, a VkPhysicalDeviceFeatures2
 * heads the chain with shaderInt64 on, after the device is asked for it:
 * without it open fails, naming it, instead of creating kernels the device
 * cannot run. */
static void oi__vk_source_create(oi__buf *b, const oi_plan *p, const char *extensions, int n_extensions,
                                 const char *chain) {
    const char *N = p->name;
    if (!oi__vk_has_int64(&p->schedule)) {
        oi__buf_printf(b, "    if (oi_vk_create_device(vk, %s, %d, %s))\n        return 1;\n", extensions, n_extensions, chain);
        return;
    }
    oi__buf_puts(b, "    /* kernels compute on i64 (GL_EXT_shader_explicit_arithmetic_types_int64): shaderInt64 */\n"
                    "    VkPhysicalDeviceFeatures2 int64_on;\n    memset(&int64_on, 0, sizeof int64_on);\n"
                    "    int64_on.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;\n"
                    "    vkGetPhysicalDeviceFeatures(vk->physical, &int64_on.features);\n"
                    "    if (!int64_on.features.shaderInt64)\n");
    oi__buf_printf(b, "        return %s_fail(%s_ERROR_RUNTIME, \"%s_open: the kernels compute on i64 and this device has no \"\n"
                      "                       \"shaderInt64; synthesize for its own JSON (features.int64 false refuses i64 \"\n"
                      "                       \"arithmetic)\");\n", N, N, N);
    oi__buf_printf(b, "    memset(&int64_on.features, 0, sizeof int64_on.features); /* only what the kernels need on */\n"
                      "    int64_on.features.shaderInt64 = VK_TRUE;\n    int64_on.pNext = %s;\n"
                      "    if (oi_vk_create_device(vk, %s, %d, &int64_on))\n        return 1;\n", chain, extensions, n_extensions);
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
                    "    model.pNext = coop;\n    f16.pNext = &model;\n    storage16.pNext = &f16;\n");
    oi__vk_source_create(b, p, "coop_extensions", 3, "&storage16");
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
    if (oi__vk_has_int64(&p->schedule))
        oi__buf_printf(b, "    VkPhysicalDeviceFeatures core;\n    vkGetPhysicalDeviceFeatures(vk->physical, &core);\n"
                          "    if (!core.shaderInt64)\n"
                          "        return %s_fail(%s_ERROR_RUNTIME, \"%s_open_on_device: the kernels compute on i64 and this \"\n"
                          "                       \"device has no shaderInt64\");\n", N, N, N);
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
            oi__vk_source_create(b, p, "NULL", 0, "&storage16");
    } else if (oi__vk_has_int64(&p->schedule)) {
        oi__buf_puts(b, "    if (oi_vk_create_instance(vk) || oi_vk_pick_device(vk))\n        return 1;\n");
        oi__vk_source_create(b, p, "NULL", 0, "NULL");
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
                       which, (unsigned long long)oi__vk_buffer_at(buf),
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
static void oi__vk_needs(oi__buf *b, const oi_plan *p) {
    bool int64 = oi__vk_has_int64(&p->schedule);
    if (oi__vk_has_coopmat(p))
        oi__buf_puts(b, " *   the features storageBuffer16BitAccess, shaderFloat16, vulkanMemoryModel and\n"
                        " *   cooperativeMatrix, with VK_KHR_cooperative_matrix where the device offers it (else\n"
                        " *   VK_NV_cooperative_matrix), VK_KHR_vulkan_memory_model, VK_KHR_shader_float16_int8,\n"
                        " *   and 32-wide subgroups.\n");
    else if (p->gpu.fp16_storage)
        oi__buf_puts(b, " *   the feature storageBuffer16BitAccess (the kernels store temporaries as f16).\n");
    else if (!int64)
        oi__buf_puts(b, " *   nothing beyond Vulkan 1.1 and a queue with compute.\n");
    if (int64)
        oi__buf_puts(b, " *   the feature shaderInt64 (kernels compute on i64).\n");
}

/* The header's interop part: the application's device, and where a
 * variable is on the device. */
static void oi__vk_header_interop(oi__buf *b, const oi_plan *p) {
    const char *N = p->name;
    oi__buf_printf(b, "\n/* Vulkan interop (docs/synthesizer.md, \"Vulkan interop\"). Handles travel as void *\n"
                      " * (VkInstance, VkPhysicalDevice, VkDevice, VkQueue) and buffers as uint64_t\n"
                      " * (VkBuffer), so this header needs no vulkan.h. %s_open_on_device runs the\n"
                      " * folder on the application's device, which must have on:\n", N);
    oi__vk_needs(b, p);
    oi__buf_printf(b, " * Steps are submitted to `queue` and waited for (its fence) before %s_step\n"
                      " * returns; nothing here destroys the application's handles. */\n", N);
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

/* Whether a kernel is a matmul by oi_matmul_tiles.glsl (not on cooperative matrices; matmul_any). */
static bool oi__vk_has_matmul(const oi_plan *p) {
    for (int k = 0; k < (int)arrlen(p->schedule.kernels); k++)
        if ((p->schedule.kernels[k].kind == OI__SY_K_MATMUL &&
             !oi__vk_cm_takes(&p->gpu, &p->schedule, &p->schedule.kernels[k])) ||
            p->schedule.kernels[k].kind == OI__SY_K_MATMUL_ANY)
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
