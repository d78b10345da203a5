/* vulkan_kernels.c - the GLSL text of each kernel kind: the shared head
 * (extensions, push constants, variables as macros over the buffers), then
 * elementwise, matmul (tiled, split along K, cooperative matrices),
 * softmax and norms, reductions, conv and pool, layout copies, attention,
 * the decoder's kernels (rope, argmax, gather, matmul_q4, attention over
 * the cache), and a kernel's whole source with its f16/bool store rewrites
 * and branch guards. What a kernel reads and where comes from vulkan_plan.c;
 * the host code that dispatches it is emit_vulkan.c's. */
#include "synth_internal.h"
#include "embedded.h"

#include <math.h>

/* A helper macro's name: the variable's name in the kernels, then `suffix`
 * ("_w", "_hi", "_write", "_read", "_at"), its '_' left out after a name
 * that render.c renamed with one (p_ gives p_w, lo_ lo_write): GLSL
 * reserves every name holding "__", and glslc warns of them. */
static void oi__vk_helper_name(oi__buf *b, const oi__sy_schedule *s, const oi__slot *sl, const char *suffix) {
    oi__sy_render_param_name(b, s, sl);
    if (b->len > 0 && b->data[b->len - 1] == '_' && suffix[0] == '_')
        suffix++;
    oi__buf_puts(b, suffix);
}

/* An integer variable: NAME(i) its element as an int (an i64's low word;
 * NAME_hi(i) the high one), NAME_w(i) its i-th 32-bit word (copies); in a
 * kernel that computes on i64 (int64), an i64's NAME(i) is its element as
 * one int64_t and NAME_write(i, v) stores one (oi_kernel.glsl's OI_I64 and
 * OI_I64_WRITE). u8 (ggml blocks) has NAME_w(i) only, its i-th 32-bit word:
 * a gather copies words, matmul_q4 and dequantize read bytes out of them. */
static void oi__vk_int_macros(oi__buf *b, const oi__sy_schedule *s, int slot, bool int64) {
    const oi__sy_buffer *buf = &s->buffers[oi__vk_storage(s, slot)];
    const oi__slot *sl = oi__vk_slot(s, slot);
    /* where its first word is: a prefix entry's (in the model) as the step pushes it */
    oi__buf at;
    memset(&at, 0, sizeof at);
    if (buf->home == OI__SY_PREFIX) {
        oi__buf_puts(&at, "pc.");
        oi__vk_helper_name(&at, s, sl, "_at");
    } else {
        oi__buf_printf(&at, "%lluu", (unsigned long long)(oi__vk_buffer_at(buf) / 4));
    }
    bool model = buf->home == OI__SY_MODEL || buf->home == OI__SY_PREFIX; /* read only, less the window's start */
    if (sl->dtype == OI_DTYPE_BOOL) { /* a byte among the words: read and written by OI_BYTE_* */
        const char *words = oi__vk_int_words(buf, model);
        oi__buf_puts(b, "#define ");
        oi__vk_helper_name(b, s, sl, "_read");
        if (model) { /* read only, from its word: tensors are 8-aligned in the file */
            oi__buf_printf(b, "(i) OI_BYTE_READ(%s, 4u * (%s - pc.oi_mb) + (i)) /* bool: a byte */\n", words, at.data);
        } else {
            unsigned long long byte = (unsigned long long)oi__vk_buffer_at(buf);
            oi__buf_printf(b, "(i) OI_BYTE_READ(%s, %lluu + (i)) /* bool: a byte */\n#define ", words, byte);
            oi__vk_helper_name(b, s, sl, "_write");
            oi__buf_printf(b, "(i, v) OI_BYTE_WRITE(%s, %lluu + (i), v)\n", words, byte);
        }
        oi__buf_puts(b, "#define "); /* an elementwise kernel's operand: 0u or 1u */
        oi__sy_render_param_name(b, s, sl);
        oi__buf_puts(b, "(i) ");
        oi__vk_helper_name(b, s, sl, "_read");
        oi__buf_puts(b, "(i)\n");
        oi__buf_free(&at);
        return;
    }
    if (int64 && sl->dtype == OI_DTYPE_I64) { /* the value as one int64_t; the model is read only */
        const char *words = oi__vk_int_words(buf, model);
        for (int m = 0; m < (model ? 1 : 2); m++) {
            oi__buf_puts(b, "#define ");
            oi__vk_helper_name(b, s, sl, m ? "_write" : "");
            oi__buf_printf(b, m ? "(i, v) OI_I64_WRITE(%s, %s%s + 2u * (i), v)\n"
                                : "(i) OI_I64(%s, %s%s + 2u * (i)) /* i64 */\n",
                           words, at.data, model ? " - pc.oi_mb" : "");
        }
        oi__buf_free(&at);
        return;
    }
    const char *open = model ? "int(model_u[" : buf->home == OI__SY_ARENA ? "arena_i[" : "state_i[";
    const char *close = model ? "])" : "]";
    bool wide = sl->dtype == OI_DTYPE_I64, blocks = sl->dtype == OI_DTYPE_U8;
    const char *names[3] = {"", "_hi", "_w"};
    const char *index[3] = {wide ? "2u * (i)" : "(i)", "2u * (i) + 1u", "(i)"};
    for (int m = blocks ? 2 : 0; m < 3; m++) {
        if (m == 1 && !wide)
            continue;
        oi__buf_puts(b, "#define ");
        oi__vk_helper_name(b, s, sl, names[m]);
        oi__buf_printf(b, "(i) %s%s%s + %s%s%s\n", open, at.data, model ? " - pc.oi_mb" : "", index[m], close,
                       m == 0 ? (wide ? " /* i64: the low word */" : " /* i32 */")
                              : blocks ? " /* u8 (ggml blocks): its bytes' 32-bit words */" : "");
    }
    oi__buf_free(&at);
}

static void oi__vk_macros(oi__buf *b, const oi__sy_gpu *g, const oi__sy_schedule *s, const oi__sy_param *params,
                          bool int64) {
    for (int i = 0; i < (int)arrlen(params); i++) {
        const oi__sy_buffer *buf = &s->buffers[oi__vk_storage(s, params[i].slot)]; /* a reshape's: its input's bytes */
        const oi__slot *sl = oi__vk_slot(s, params[i].slot);
        if (sl->dtype != OI_DTYPE_F32) {
            oi__vk_int_macros(b, s, params[i].slot, int64);
            continue;
        }
        if (buf->table_view) { /* the decoder's attention addresses the table itself */
            oi__buf_puts(b, "/* ");
            oi__sy_render_param_name(b, s, sl);
            oi__buf_puts(b, ": a slice of a table, read in place in the state */\n");
            continue;
        }
        if (oi__vk_half(g, s, params[i].slot)) {
            /* read as float; a store goes through oi_st_NAME (oi__vk_rewrite_stores) */
            oi__buf_puts(b, "#define ");
            oi__sy_render_param_name(b, s, sl);
            oi__buf_printf(b, "(i) float(arena16[%lluu + (i)]) /* f32, a temporary stored as f16 */\n#define oi_st_",
                           (unsigned long long)(buf->offset / 2));
            oi__sy_render_param_name(b, s, sl);
            oi__buf_printf(b, "(i) arena16[%lluu + (i)]\n", (unsigned long long)(buf->offset / 2));
            continue;
        }
        oi__buf_puts(b, "#define ");
        oi__sy_render_param_name(b, s, sl);
        if (buf->home == OI__SY_PREFIX) {
            oi__buf_puts(b, "(i) model[pc.");
            oi__vk_helper_name(b, s, sl, "_at");
            oi__buf_printf(b, " - pc.oi_mb + (i)] /* %s(l): the entry the step pushes */\n", sl->name);
            continue;
        }
        uint64_t at = oi__vk_buffer_at(buf);
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

/* Whether a kernel calls oi_wg_sum / oi_wg_max (max_axis/min_axis rows
 * reduce integers in a tree of their own: oi__vk_reduce_ext). */
static bool oi__vk_uses_reductions(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    oi_op op = k->nodes[0]->ir->op;
    return k->kind == OI__SY_K_SOFTMAX || k->kind == OI__SY_K_NORM ||
           (k->kind == OI__SY_K_REDUCE && oi__vk_row_reduce(s, k->nodes[0]) && op != OI_OP_max_axis &&
            op != OI_OP_min_axis) ||
           k->kind == OI__SY_K_ATTENTION || k->kind == OI__SY_K_ATTN_KV || k->kind == OI__SY_K_ALL_FINITE;
}


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
    if (oi__vk_uses_reductions(s, k) && p->gpu.subgroup_ops)
        oi__buf_puts(b, "#extension GL_KHR_shader_subgroup_basic : require\n"
                        "#extension GL_KHR_shader_subgroup_arithmetic : require\n");
    if (k->kind == OI__SY_K_MATMUL || k->kind == OI__SY_K_MATMUL_ANY || k->kind == OI__SY_K_QMATMUL) /* [[unroll]] */
        oi__buf_puts(b, "#extension GL_EXT_control_flow_attributes : require\n");
    bool int64 = oi__vk_int64_kernel(s, k);
    if (int64) /* int64_t (vulkan_check.c: only where the device JSON says features.int64) */
        oi__buf_puts(b, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
    if (oi__vk_cm_takes(&p->gpu, s, k)) /* what oi_matmul_coopmat_tiles.glsl needs */
        oi__buf_puts(b, "#extension GL_NV_cooperative_matrix : require\n"
                        "#extension GL_KHR_memory_scope_semantics : require\n"
                        "#extension GL_KHR_shader_subgroup_basic : require\n"
                        "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n");
    oi__buf_puts(b, "#include \"oi_kernel.glsl\"\n\n");
    oi__buf_printf(b, "layout(local_size_x = %u) in;\n", local_size);
    oi__vk_loops loops = {{NULL}, 0};
    if (oi__vk_pushes_loops(k))
        loops = oi__vk_loops_around(s, k->id, NULL);
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
                oi__vk_helper_name(b, s, oi__vk_slot(s, params[i].slot), "_at");
                oi__buf_puts(b, ";");
            }
        oi__buf_puts(b, " } pc; /* set when the step is recorded */\n");
    }
    oi__vk_macros(b, &p->gpu, s, params, int64);
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

/* The start of a kernel's main (kernel >= 0) or a cache statement's (node):
 * in a block of a branch on a variable it returns at once where the
 * condition says the block is not taken. Whole dispatches return, so no
 * barrier() is left waiting. */
static void oi__vk_main_at(oi__buf *b, const oi__sy_schedule *s, int kernel, const oi__pnode *node) {
    oi__vk_guards g = oi__vk_guards_around(s, kernel, node);
    oi__buf_puts(b, "void main() {\n");
    for (int i = 0; i < g.n; i++) {
        const oi__pnode *br = g.branch[i];
        const oi__sy_buffer *cond = &s->buffers[br->var];
        oi__buf_puts(b, "    /* in the block ");
        oi__sy_render_stmt(b, br);
        oi__buf_printf(b, " takes when %s is %s */\n    if (OI_BYTE_READ(%s, %lluu) %s 0u)\n        return;\n",
                       s->plan->slots[br->var].name, g.when_true[i] ? "true" : "false",
                       cond->home == OI__SY_ARENA ? "arena_i" : "state_i", (unsigned long long)cond->offset,
                       g.when_true[i] ? "==" : "!=");
    }
}

static void oi__vk_main(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k) {
    oi__vk_main_at(b, s, k->id, NULL);
}

/* A main that only calls `call` (the matmul tile loops): on one line where
 * no branch guards it. */
static void oi__vk_main_call(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, const char *call) {
    if (oi__vk_guards_around(s, k->id, NULL).n == 0) {
        oi__buf_printf(b, "void main() { %s }\n", call);
        return;
    }
    oi__vk_main(b, s, k);
    oi__buf_printf(b, "    %s\n}\n", call);
}

/* A grid-stride loop over `count` elements: `o` is the element. */
static void oi__vk_grid_loop(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int64_t count, uint32_t wg) {
    oi__vk_main(b, s, k);
    oi__buf_printf(b, "    for (uint o = gl_GlobalInvocationID.x; o < %lldu; o += gl_NumWorkGroups.x * %uu) {\n",
                   (long long)count, wg);
}

static void oi__vk_elementwise(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    oi__vk_grid_loop(b, s, k, oi__vk_numel(oi__vk_slot(s, k->nodes[0]->out)), wg);
    oi__buf_puts(b, "        const uint i = o;\n");
    for (int n = 0; n < (int)arrlen(k->nodes); n++)
        oi__sy_render_ew(b, s, &oi__sy_lang_glsl, k, n, "i", 2);
    oi__buf_puts(b, "    }\n}\n");
}

static void oi__vk_name(oi__buf *b, const oi__sy_schedule *s, int slot) { oi__sy_render_param_name(b, s, oi__vk_slot(s, slot)); }

/* A variable's helper macro by slot (oi__vk_helper_name). */
static void oi__vk_helper(oi__buf *b, const oi__sy_schedule *s, int slot, const char *suffix) {
    oi__vk_helper_name(b, s, oi__vk_slot(s, slot), suffix);
}

/* gemm: the bias row, then the activation (oi__sy_render_activation). */
static void oi__vk_gemm_tail(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *mm) {
    if (mm->ir->op != OI_OP_gemm)
        return;
    if (arrlen(mm->inputs) > 2) {
        oi__buf_puts(b, "    acc_j = acc_j + ");
        oi__vk_name(b, s, mm->inputs[2]);
        oi__buf_puts(b, "(j);\n");
    }
    oi__sy_render_activation(b, &oi__sy_lang_glsl, oi__sy_activation(mm), "acc_j", 1);
}

/* After a matmul's or a conv's v0 at element i (`depth` levels in): its
 * store, unless a fused statement overwrites the result, then the fused
 * statements at i. */
static void oi__vk_store_fused(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int depth) {
    int out = k->nodes[0]->out;
    bool last = true;
    for (int m = 1; m < (int)arrlen(k->nodes); m++)
        last &= k->nodes[m]->out != out;
    if (oi__sy_slot_stored(s, out) && last) {
        oi__buf_printf(b, "%*s", 4 * depth, "");
        oi__vk_name(b, s, out);
        oi__buf_puts(b, "(i) = v0;\n");
    }
    for (int n = 1; n < (int)arrlen(k->nodes); n++)
        oi__sy_render_ew(b, s, &oi__sy_lang_glsl, k, n, "i", depth);
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
    oi__vk_store_fused(b, s, k, 1);
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
                    "shared bool oi_last; /* whether this workgroup is its block's last slice to finish */\n\n");
    oi__vk_main(b, s, k);
    oi__buf_puts(b, "    uint k_begin = gl_WorkGroupID.z * K_SLICE;\n"
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
    if (t.direct)
        oi__buf_puts(b, "/* a CPU device: the operands read from the buffers, no shared tiles */\n#define MM_DIRECT\n\n");
    if (t.slices > 1) {
        oi__vk_matmul_split(b, p, k, t);
        return;
    }
    oi__vk_matmul_loads(b, s, mm);
    oi__buf_puts(b, "void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {\n");
    oi__vk_matmul_epilogue(b, s, k);
    oi__buf_puts(b, "}\n\n#include \"oi_matmul_tiles.glsl\"\n\n");
    oi__vk_main_call(b, s, k, "mm_tiles(0u, 0u, 0u, 0u, K);");
}

static double oi__vk_param_f(const oi__pnode *pn, const char *name) {
    return oi__op_param_value_f64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), name);
}

/* matmul_any in f32, and in i32 (wrapping in 32 bits, as the C target's
 * 64-bit sums cast to i32 do): products over batch dims broadcast against
 * each other, and gemm's trans_a, trans_b, alpha, beta and a C broadcast to
 * the result, as render.c's C form (oi__sy_mm_geom: the operands read
 * through their strides). Workgroup z is the batch; A's and B's matrices
 * for it are the ones its index broadcasts to. The backend's tile loops
 * again, with side x side threads of 2 x 2 results: such products are
 * mostly small. */
static void oi__vk_matmul_any(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *a = oi__vk_slot(s, pn->inputs[0]), *bm = oi__vk_slot(s, pn->inputs[1]), *c = oi__vk_slot(s, pn->out);
    const oi__sy_mm_geom g = oi__sy_mm_geom_of(a, bm, c, pn);
    int side = oi__vk_matmul_side(&p->gpu);
    bool ints = c->dtype == OI_DTYPE_I32; /* products and sums wrapping in 32 bits: the C target's, cast to i32 */
    const char *bits = ints ? "uint" : "floatBitsToUint";
    oi__buf_printf(b, "const uint M = %lldu, N = %lldu, K = %lldu;\n"
                      "#define MM_T %du /* MM_T x MM_T threads of 2 x 2 results */\n#define BM %du\n#define BN %du\n"
                      "#define BK 16u\n#define MM_STORE_UNROLL\n\n"
                      "bool float_math() { return %s; }\nuint mm_rows() { return M; }\nuint mm_cols() { return N; }\n",
                   (long long)g.m, (long long)g.n, (long long)g.k, side, 2 * side, 2 * side, ints ? "false" : "true");
    oi__buf_printf(b, "uint mm_load_a(uint base, uint m, uint k) { return %s(", bits);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(base + m * %lldu + k * %lldu)); }\nuint mm_load_b(uint base, uint k, uint n) { "
                      "return %s(", (long long)g.a_rs, (long long)g.a_cs, bits);
    oi__vk_name(b, s, pn->inputs[1]);
    oi__buf_printf(b, "(base + k * %lldu + n * %lldu)); }\n\n", (long long)g.b_rs, (long long)g.b_cs);
    oi__buf_puts(b, "void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {\n"
                    "    const uint i = base + r * N + j;\n    /* ");
    oi__sy_render_stmt(b, pn);
    oi__buf_puts(b, " */\n    ");
    oi__vk_name(b, s, pn->out);
    if (pn->ir->op != OI_OP_gemm) {
        oi__buf_puts(b, ints ? "(i) = int(bits);\n" : "(i) = acc_j;\n");
    } else { /* alpha in f32, as gemm.c's; beta * C */
        double alpha = oi__vk_param_f(pn, "alpha"), beta = oi__vk_param_f(pn, "beta");
        oi__buf_puts(b, "(i) = ");
        oi__sy_render_double(b, alpha);
        oi__buf_puts(b, " * acc_j");
        if (arrlen(pn->inputs) > 2 && beta != 0.0) {
            oi__slot c_mat = *c;
            c_mat.ndim = 2, c_mat.shape[0] = g.m, c_mat.shape[1] = g.n;
            oi__buf_puts(b, " + ");
            oi__sy_render_double(b, beta);
            oi__buf_puts(b, " * ");
            oi__vk_name(b, s, pn->inputs[2]);
            oi__buf_puts(b, "(");
            oi__sy_broadcast_index(b, oi__vk_slot(s, pn->inputs[2]), &c_mat, "i");
            oi__buf_puts(b, ")");
        }
        oi__buf_puts(b, ";\n");
    }
    oi__buf_puts(b, "}\n\n#include \"oi_matmul_tiles.glsl\"\n\n");
    oi__vk_main(b, s, k);
    oi__slot a_batch = *a, b_batch = *bm, c_batch = *c; /* the batch dims alone */
    a_batch.ndim -= 2, b_batch.ndim -= 2, c_batch.ndim -= 2;
    oi__buf_puts(b, "    const uint t = gl_WorkGroupID.z; /* the batch */\n    mm_tiles(");
    oi__sy_broadcast_index(b, &a_batch, &c_batch, "t"); /* one term, or several in parentheses */
    oi__buf_printf(b, " * %lldu, ", (long long)(g.m * g.k));
    oi__sy_broadcast_index(b, &b_batch, &c_batch, "t");
    oi__buf_printf(b, " * %lldu, t * M * N, 0u, K);\n}\n", (long long)(g.k * g.n));
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
            oi__vk_helper(at, s, slot, "_at");
            oi__buf_puts(at, " - pc.oi_mb)");
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
    const char *act = oi__sy_activation(mm);
    return arrlen(mm->inputs) > 2 || (act && strcmp(act, "none") != 0);
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
    char call[64];
    snprintf(call, sizeof call, "cm_tiles(0u, 0u, %lluu);",
             direct ? (unsigned long long)(cb->offset / (half_out ? 2 : 4)) : 0ull);
    oi__vk_main_call(b, s, k, call);
}

/* `const uint NAME = ...` the workgroup's row of `rows` (oi__vk_rows_grid's
 * grid), and tid its invocation. */
static void oi__vk_row_index(oi__buf *b, const char *name, int64_t rows) {
    if (rows <= OI__VK_MAX_GROUPS) {
        oi__buf_printf(b, "    const uint %s = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;\n", name);
        return;
    }
    oi__buf_printf(b, "    /* %lld rows: more than a dispatch's x takes, so in rows of %d workgroups */\n"
                      "    const uint %s = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;\n"
                      "    if (%s >= %lldu)\n        return; /* the whole workgroup */\n",
                   (long long)rows, OI__VK_MAX_GROUPS, name, name, (long long)rows);
}

/* One workgroup per row of `len` elements: r is the row, tid strides it. */
static void oi__vk_row_main(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int64_t len) {
    oi__buf_printf(b, "const uint L = %lldu; /* the row */\n\n", (long long)len);
    oi__vk_main(b, s, k);
    oi__vk_row_index(b, "r", oi__vk_numel(oi__vk_slot(s, k->nodes[0]->inputs[0])) / (len ? len : 1));
}

/* One workgroup per lane of `len` elements `inner` apart (softmax's and
 * argmax's axis: the last one when inner is 1): r is the lane, element j of
 * it is at oi_lane(j). */
static void oi__vk_lane_main(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int64_t len, int64_t inner) {
    if (inner == 1) {
        oi__buf_puts(b, "#define oi_lane(j) (r * L + (j))\n");
    } else {
        oi__buf_printf(b, "const uint INNER = %lldu; /* the lane's stride */\n", (long long)inner);
        oi__buf_puts(b, "#define oi_lane(j) (r / INNER * L * INNER + r % INNER + (j) * INNER)\n");
    }
    oi__vk_row_main(b, s, k, len);
}

/* softmax, or log_softmax ((x - max) - log(sum), as nn.c), along any axis */
static void oi__vk_softmax(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]);
    int64_t inner, len = oi__sy_softmax_lane(in, pn, &inner);
    bool log_form = pn->ir->op == OI_OP_log_softmax;
    oi__vk_lane_main(b, s, k, len, inner);
    oi__buf_printf(b, "    float m = -INFINITY;\n    for (uint j = tid; j < L; j += %uu)\n        m = max(m, ", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(oi_lane(j)));\n    m = oi_wg_max(m);\n    float sum = 0.0;\n    for (uint j = tid; j < L; j += %uu)\n"
                      "        sum = OI_S_sum_step(sum, exp_f32(", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(oi_lane(j)) - m));\n    sum = oi_wg_sum(sum);\n    const float %s;\n"
                      "    for (uint j = tid; j < L; j += %uu)\n        ", log_form ? "log_sum = log_f32(sum)" : "inv = 1.0 / sum", wg);
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, log_form ? "(oi_lane(j)) = (" : "(oi_lane(j)) = exp_f32(");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, log_form ? "(oi_lane(j)) - m) - log_sum;\n}\n" : "(oi_lane(j)) - m) * inv;\n}\n");
}

/* batch_norm (inference: the statistics given): a workgroup per (n, c)
 * row of L elements, y = (x - mean[c]) * a + bias[c] with
 * a = scale[c] / sqrt(var[c] + eps), as nn.c (which takes a in double). */
static void oi__vk_batch_norm(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, int64_t len, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    long long channels = (long long)oi__vk_slot(s, pn->inputs[0])->shape[1];
    oi__vk_row_main(b, s, k, len);
    oi__buf_printf(b, "    const uint c = r %% %lldu; /* the channel */\n    const float a = ", channels);
    oi__vk_name(b, s, pn->inputs[1]);
    oi__buf_puts(b, "(c) / sqrt(");
    oi__vk_name(b, s, pn->inputs[4]);
    oi__buf_puts(b, "(c) + ");
    oi__sy_render_double(b, oi__vk_param_f(pn, "epsilon"));
    oi__buf_puts(b, ");\n    const float mean = ");
    oi__vk_name(b, s, pn->inputs[3]);
    oi__buf_printf(b, "(c);\n    for (uint j = tid; j < L; j += %uu)\n        ", wg);
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(r * L + j) = (");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(r * L + j) - mean) * a + ");
    oi__vk_name(b, s, pn->inputs[2]);
    oi__buf_puts(b, "(c);\n}\n");
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
    int64_t len = oi__sy_norm_lane(in, pn);
    bool held = (len + wg - 1) / wg <= OI__VK_NORM_HELD;
    if (pn->ir->op == OI_OP_batch_norm) {
        oi__vk_batch_norm(b, s, k, len, wg);
        return;
    }
    oi__vk_row_main(b, s, k, len);
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
    oi__buf_printf(b, "(r * L + j) = (%s - mean) * ", x_at.data);
    if (pn->ir->op == OI_OP_group_norm) { /* nn.c's: channel c's multiplier inv * scale, then its bias */
        int64_t groups = oi__op_param_value_i64(OI_OP_group_norm, pn->attrs, arrlenu(pn->attrs), "num_groups");
        long long per_group = (long long)(in->shape[1] / groups), spatial = (long long)len / (per_group ? per_group : 1);
        oi__buf_printf(b, "(inv * ");
        oi__vk_name(b, s, pn->inputs[1]);
        oi__buf_printf(b, "(r %% %lldu * %lldu + j / %lldu)) + ", (long long)groups, per_group, spatial);
        oi__vk_name(b, s, pn->inputs[2]);
        oi__buf_printf(b, "(r %% %lldu * %lldu + j / %lldu);\n    }\n}\n", (long long)groups, per_group, spatial);
        oi__buf_free(&x_at);
        return;
    }
    oi__buf_puts(b, "inv");
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

/* `var` (an element's flat index within the axes where pick[d] == want) as
 * an offset into `in`: each such axis's coordinate times its stride, the
 * last axis fastest; "0u" where no axis is picked. */
static void oi__vk_axes_offset(oi__buf *b, const char *var, const oi__slot *in, const bool *pick, bool want) {
    int64_t after = 1, stride = 1, outermost = -1;
    for (int d = 0; d < in->ndim && outermost < 0; d++)
        outermost = pick[d] == want ? d : -1;
    const char *sep = "";
    for (int d = in->ndim - 1; d >= 0; stride *= in->shape[d], d--) {
        if (pick[d] != want)
            continue;
        oi__buf_printf(b, "%s%s", sep, var);
        if (after > 1)
            oi__buf_printf(b, " / %lldu", (long long)after);
        if (d != outermost)
            oi__buf_printf(b, " %% %lldu", (long long)in->shape[d]);
        if (stride > 1)
            oi__buf_printf(b, " * %lldu", (long long)stride);
        after *= in->shape[d];
        sep = " + ";
    }
    oi__buf_puts(b, *sep ? "" : "0u");
}

/* A reduction over axes that are not the last ones (MiniLM's mean pooling:
 * [B, S, D] summed over S), and prod_axis over any: an invocation per result
 * folds its elements in the input's order, as reduce.c's generic and
 * middle-axes paths do (bit for bit): sums into one f32 from 0, products
 * from 1; max_axis/min_axis from the first
 * element by oi_fmax/oi_fmin (as scalar.h's OI_S_fmax/OI_S_fmin: the
 * first operand on a tie, so -0 and +0 come out as the simulator's; a NaN
 * operand ignored). Neighbouring invocations read neighbouring elements where the
 * kept axes are inner. */
static void oi__vk_reduce_strided(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    oi_op op = pn->ir->op;
    bool ext = op == OI_OP_max_axis || op == OI_OP_min_axis, prod = op == OI_OP_prod_axis;
    bool reduced[OI_MAX_DIMS];
    long long count = (long long)oi__vk_reduced_axes(s, pn, reduced);
    oi__vk_grid_loop(b, s, k, oi__vk_numel(out), wg);
    oi__buf_puts(b, "        const uint at = ");
    oi__vk_axes_offset(b, "o", in, reduced, false);
    oi__buf_puts(b, "; /* the result's first element */\n        float acc = ");
    if (ext) {
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_puts(b, "(at)");
    } else {
        oi__buf_puts(b, prod ? "1.0" : "0.0");
    }
    oi__buf_printf(b, ";\n        for (uint q = %s; q < %lldu; q++) {\n            const float v = ", ext ? "1u" : "0u", count);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(at + ");
    oi__vk_axes_offset(b, "q", in, reduced, true);
    if (ext)
        oi__buf_printf(b, ");\n            acc = is_nan_f(acc) ? v : is_nan_f(v) ? acc : acc %s v ? acc : v;\n        }\n        ",
                       op == OI_OP_max_axis ? ">" : "<");
    else
        oi__buf_printf(b, ");\n            acc = %s(acc, v);\n        }\n        ", prod ? "OI_S_prod_step" : "OI_S_sum_step");
    oi__vk_name(b, s, pn->out);
    if (op == OI_OP_mean_axis)
        oi__buf_printf(b, "(o) = acc / float(%lld);\n    }\n}\n", count);
    else
        oi__buf_puts(b, "(o) = acc;\n    }\n}\n");
}

/* max_axis/min_axis over the last axes, a workgroup per row, as reduce.c's
 * row path (kernels/scalar.h's OI_S_row_ext_f32): each float compared as
 * an integer in the floats' order (its bits with the magnitude flipped
 * for negatives; every bit flipped again for the min), NaN the least, so
 * the tree's order does not matter and a row of NaN gives NaN. */
static void oi__vk_reduce_ext(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    const char *flip = pn->ir->op == OI_OP_max_axis ? "0u" : "0xFFFFFFFFu";
    oi__buf_printf(b, "shared int oi_best[%u];\n\n", wg);
    oi__buf_puts(b, "int oi_order_score(float v) {\n    const uint bits = floatBitsToUint(v);\n"
                    "    if (is_nan_f(v))\n        return int(0x80000000u);\n");
    oi__buf_printf(b, "    return int((bits ^ ((bits >> 31) != 0u ? 0x7FFFFFFFu : 0u)) ^ %s);\n}\n\n", flip);
    oi__vk_row_main(b, s, k, oi__vk_numel(in) / oi__vk_numel(out));
    oi__buf_printf(b, "    int best = int(0x80000000u);\n    for (uint j = tid; j < L; j += %uu)\n"
                      "        best = max(best, oi_order_score(", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(r * L + j)));\n    oi_best[tid] = best;\n    barrier();\n"
                      "    for (uint half_n = %uu; half_n > 0u; half_n >>= 1u) {\n        if (tid < half_n)\n"
                      "            oi_best[tid] = max(oi_best[tid], oi_best[tid + half_n]);\n        barrier();\n    }\n"
                      "    if (tid == 0u) {\n        const uint key = uint(oi_best[0]) ^ %s;\n        ",
                   wg / 2, flip);
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(r) = oi_best[0] == int(0x80000000u) ? NAN_F\n"
                    "                             : uintBitsToFloat(key ^ ((key >> 31) != 0u ? 0x7FFFFFFFu : 0u));\n"
                    "    }\n}\n");
}

/* A reduction over the last axes: a workgroup per row. */
static void oi__vk_reduce(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    if (!oi__vk_row_reduce(s, pn)) {
        oi__vk_reduce_strided(b, s, k, wg);
        return;
    }
    if (pn->ir->op == OI_OP_max_axis || pn->ir->op == OI_OP_min_axis) {
        oi__vk_reduce_ext(b, s, k, wg);
        return;
    }
    oi__vk_row_main(b, s, k, oi__vk_numel(in) / oi__vk_numel(out));
    oi__buf_printf(b, "    float acc = 0.0;\n    for (uint j = tid; j < L; j += %uu)\n        acc = OI_S_sum_step(acc, ", wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(r * L + j));\n    acc = oi_wg_sum(acc);\n    if (tid == 0u)\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, pn->ir->op == OI_OP_mean_axis ? "(r) = acc / float(L);\n}\n" : "(r) = acc;\n}\n");
}

/* The window conv and pool kernels share: the input plane, the kernel's
 * extent, its stride, start pads and dilation (the schedule's k->conv). */
static void oi__vk_window_consts(oi__buf *b, const oi__sy_conv_geom *g) {
    oi__buf_printf(b, "const int IH = %lld, IW = %lld, KH = %lld, KW = %lld; /* the window: stride, pad, dilation */\n"
                      "const int SH = %lld, SW = %lld, PH = %lld, PW = %lld, DH = %lld, DW = %lld;\n",
                   (long long)g->in_h, (long long)g->in_w, (long long)g->k_h, (long long)g->k_w, (long long)g->s_h,
                   (long long)g->s_w, (long long)g->p_h, (long long)g->p_w, (long long)g->d_h, (long long)g->d_w);
}

/* conv1d/conv2d (the schedule's window, k->conv): an invocation per output
 * element (n, m, oy, ox) sums its group's channels and window from zero in
 * (c, ky, kx) order, skipping the padding, adds the bias, applies the
 * activation and runs the fused statements at i, as a matmul's epilogue.
 * conv.c's gemm sums in blocks: the bits may differ, the tests' bound holds. */
static void oi__vk_conv(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    const oi__slot *y = oi__vk_slot(s, pn->out);
    const char *act = oi__sy_activation(pn);
    oi__buf_printf(b, "const uint OH = %lldu, OW = %lldu, OC = %lldu, MG = %lldu, CG = %lldu, IC = %lldu;\n",
                   (long long)g->out_h, (long long)g->out_w, (long long)g->out_c, (long long)g->mg, (long long)g->cg,
                   (long long)g->in_c);
    oi__vk_window_consts(b, g);
    oi__buf_puts(b, "\n");
    oi__vk_grid_loop(b, s, k, oi__vk_numel(y), wg);
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
    oi__buf_puts(b, ";\n");
    oi__sy_render_activation(b, &oi__sy_lang_glsl, act, "v0", 2);
    oi__vk_store_fused(b, s, k, 2);
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
        oi__vk_grid_loop(b, s, k, oi__vk_numel(y), wg);
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
    oi__buf_printf(b, "const uint OH = %lldu, OW = %lldu;\n", (long long)g->out_h, (long long)g->out_w);
    oi__vk_window_consts(b, g);
    oi__buf_printf(b, "const int EH = %lld, EW = %lld; /* the end pads */\n\n", (long long)g->pe_h, (long long)g->pe_w);
    oi__vk_grid_loop(b, s, k, oi__vk_numel(y), wg);
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

/* conv_transpose2d (the schedule's window, k->conv): an invocation per
 * output element (n, c, oy, ox) gathers what conv.c's oi__conv_transpose
 * scatters there: from the bias, per window position (ky, kx) in order the
 * input position that lands on it (if any: its distance a multiple of the
 * stride) times the group's channels, summed in f32 first, as conv.c's
 * columns; conv.c keeps the plane in double, so the bits may differ and
 * the tests' bound holds. */
static void oi__vk_conv_t(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__sy_conv_geom *g = &k->conv;
    oi__buf_printf(b, "const uint OH = %lldu, OW = %lldu, OC = %lldu, MG = %lldu, CG = %lldu, IC = %lldu;\n",
                   (long long)g->out_h, (long long)g->out_w, (long long)g->out_c, (long long)g->mg, (long long)g->cg,
                   (long long)g->in_c);
    oi__vk_window_consts(b, g);
    oi__buf_puts(b, "\n");
    oi__vk_grid_loop(b, s, k, oi__vk_numel(oi__vk_slot(s, pn->out)), wg);
    oi__buf_puts(b, "        const uint ox = o % OW, oy = o / OW % OH, c = o / (OW * OH) % OC, n = o / (OW * OH * OC);\n"
                    "        const uint g = c / MG, m = c % MG; /* the group, the channel in it */\n        float acc = ");
    if (arrlen(pn->inputs) > 2) {
        oi__vk_name(b, s, pn->inputs[2]);
        oi__buf_puts(b, "(c);\n");
    } else {
        oi__buf_puts(b, "0.0;\n");
    }
    oi__buf_puts(b, "        for (int kk = 0; kk < KH * KW; kk++) {\n"
                    "            const int ty = int(oy) + PH - kk / KW * DH, tx = int(ox) + PW - kk % KW * DW;\n"
                    "            if (ty < 0 || tx < 0 || ty % SH != 0 || tx % SW != 0 || ty / SH >= IH || tx / SW >= IW)\n"
                    "                continue; /* no input position lands here through this tap */\n"
                    "            const uint q = uint(ty / SH * IW + tx / SW);\n"
                    "            float part = 0.0;\n"
                    "            for (uint i = 0u; i < CG; i++)\n                part += ");
    oi__vk_name(b, s, pn->inputs[1]);
    oi__buf_puts(b, "(((g * CG + i) * MG + m) * uint(KH * KW) + uint(kk)) * ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "((n * IC + g * CG + i) * uint(IH * IW) + q);\n            acc += part;\n        }\n        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(o) = acc;\n    }\n}\n\n");
}

/* top_k and top_k_indices as nn.c's: an invocation per lane of the axis
 * (inner apart) keeps the k best in a heap by scalar.h's order
 * (OI_S_topk_select: a key whose unsigned order is the value order, NaN
 * above +inf and -0 == +0, inverted for the smallest; a tie goes to the
 * earlier element), then sorts them best first: the simulator's values and
 * places exactly. The heap walks the lane once (n log k steps); one
 * invocation per lane suits the rows of a classifier better than a
 * vocabulary. */
static void oi__vk_topk(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *y = oi__vk_slot(s, pn->out);
    int64_t inner;
    long long n = (long long)oi__sy_softmax_lane(x, pn, &inner);
    long long kk = (long long)oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "k");
    bool largest = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "largest") != 0;
    oi__buf_printf(b, "const uint N = %lldu, INNER = %lldu, KK = %lldu; /* the lane, its stride, the kept */\n\n"
                      "/* scalar.h's OI_S_topk_key: unsigned order = value order, NaN above +inf, -0 == +0 */\n"
                      "uint oi_key(uint at) {\n    const float v = ", n, (long long)inner, kk);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(at);\n    const uint bits = floatBitsToUint(v == 0.0 ? 0.0 : v);\n"
                      "    const uint key = is_nan_f(v) ? 0xFFFFFFFFu : (bits >> 31) != 0u ? ~bits : bits | 0x80000000u;\n"
                      "    return %s;\n}\n\n", largest ? "key" : "~key");
    oi__buf_puts(b, "/* element a of the lane ranks below element c: a smaller key, or equal and later */\n"
                    "bool oi_worse(uint base, uint a, uint c) {\n"
                    "    const uint ka = oi_key(base + a * INNER), kc = oi_key(base + c * INNER);\n"
                    "    return ka < kc || (ka == kc && a > c);\n}\n\n"
                    "/* heap[0] is the worst of the kept elements */\n"
                    "void oi_sift_down(uint base, inout uint heap[KK], uint size, uint i) {\n"
                    "    for (;;) {\n        const uint l = 2u * i + 1u, r = l + 1u;\n        uint worst = i;\n"
                    "        if (l < size && oi_worse(base, heap[l], heap[worst]))\n            worst = l;\n"
                    "        if (r < size && oi_worse(base, heap[r], heap[worst]))\n            worst = r;\n"
                    "        if (worst == i)\n            return;\n"
                    "        const uint t = heap[i];\n        heap[i] = heap[worst];\n        heap[worst] = t;\n"
                    "        i = worst;\n    }\n}\n\n");
    oi__vk_grid_loop(b, s, k, oi__vk_numel(x) / n, wg);
    oi__buf_puts(b, "        const uint base = o / INNER * N * INNER + o % INNER, dst = o / INNER * KK * INNER + o % INNER;\n"
                    "        uint heap[KK];\n        uint size = 0u;\n"
                    "        for (uint j = 0u; j < N; j++) {\n"
                    "            if (size < KK) { /* sift up */\n"
                    "                uint i = size++;\n                heap[i] = j;\n"
                    "                while (i > 0u && oi_worse(base, heap[i], heap[(i - 1u) / 2u])) {\n"
                    "                    const uint p = (i - 1u) / 2u, t = heap[i];\n"
                    "                    heap[i] = heap[p];\n                    heap[p] = t;\n                    i = p;\n"
                    "                }\n"
                    "            } else if (oi_worse(base, heap[0], j)) {\n"
                    "                heap[0] = j;\n                oi_sift_down(base, heap, size, 0u);\n            }\n"
                    "        }\n"
                    "        while (size > 1u) { /* best first */\n"
                    "            const uint t = heap[0];\n            heap[0] = heap[--size];\n            heap[size] = t;\n"
                    "            oi_sift_down(base, heap, size, 0u);\n        }\n"
                    "        for (uint j = 0u; j < KK; j++) {\n            ");
    oi__vk_name(b, s, pn->out);
    if (pn->ir->op == OI_OP_top_k) {
        oi__buf_puts(b, "(dst + j * INNER) = ");
        oi__vk_name(b, s, pn->inputs[0]);
        oi__buf_puts(b, "(base + heap[j] * INNER);\n");
    } else {
        oi__buf_puts(b, "(dst + j * INNER) = int(heap[j]);\n");
        if (y->dtype == OI_DTYPE_I64) {
            oi__buf_puts(b, "            ");
            oi__vk_helper(b, s, pn->out, "_hi");
            oi__buf_puts(b, "(dst + j * INNER) = 0;\n");
        }
    }
    oi__buf_puts(b, "        }\n    }\n}\n\n");
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

/* `(uint(offset + c0 * stride[0] + c1 * stride[1] ...))`: the element of an
 * input read through strides at output coordinates c0, c1, ... (slice and
 * split: kernels/shape.c's offset and strides, negative for a reversed
 * slice; transpose: the input's strides in the output's order). */
static void oi__vk_strided_at(oi__buf *b, int nd, int64_t offset, const int64_t *stride) {
    oi__buf_printf(b, "(uint(%lld", (long long)offset);
    for (int d = 0; d < nd; d++)
        oi__buf_printf(b, " + c%d * %lld", d, (long long)stride[d]);
    oi__buf_puts(b, "))");
}

/* tile and expand: the input's element at output coordinates c0, c1, ...
 * taken modulo its dims (aligned on the last; a dim of 1 repeats). */
static void oi__vk_repeat_at(oi__buf *b, const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *out = oi__vk_slot(s, pn->out), *in = oi__vk_slot(s, pn->inputs[0]);
    int shift = out->ndim - in->ndim;
    int64_t stride = 1;
    oi__buf_puts(b, "(o) = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(uint(0");
    for (int d = in->ndim - 1; d >= 0; d--) {
        if (in->shape[d] == out->shape[d + shift])
            oi__buf_printf(b, " + c%d * %lld", d + shift, (long long)stride);
        else if (in->shape[d] > 1)
            oi__buf_printf(b, " + c%d %% %lld * %lld", d + shift, (long long)in->shape[d], (long long)stride);
        stride *= in->shape[d];
    }
    oi__buf_puts(b, "));\n    }\n}\n");
}

/* concat (the input whose range along the axis holds the element), slice and
 * split (the schedule's offset and strides, from kernels/shape.c), pad (its
 * per-dim source maps, -1 taking the fill value), tile and expand: an
 * invocation per output element, a copy. */
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
    oi__vk_grid_loop(b, s, k, oi__vk_numel(out), wg);
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
    if (op == OI_OP_tile || op == OI_OP_expand) {
        oi__vk_repeat_at(b, s, pn);
        return;
    }
    oi__buf_puts(b, "(o) = "); /* slice, split: the offset and strides */
    oi__vk_name(b, s, pn->inputs[0]);
    oi__vk_strided_at(b, out->ndim, map[0], map + 1);
    oi__buf_puts(b, ";\n    }\n}\n");
}

/* is_finite: one workgroup over every element; the byte is 1 where none is
 * NaN or infinite (scalar.h's OI_S_isfinite). */
static void oi__vk_all_finite(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    oi__vk_main(b, s, k);
    oi__buf_printf(b, "    const uint tid = gl_LocalInvocationID.x;\n    float bad = 0.0;\n"
                      "    for (uint j = tid; j < %lldu; j += %uu)\n        if (!OI_S_isfinite(",
                   (long long)oi__vk_numel(oi__vk_slot(s, pn->inputs[0])), wg);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_puts(b, "(j)))\n            bad = 1.0;\n    bad = oi_wg_max(bad);\n    if (tid == 0u)\n        ");
    oi__vk_helper(b, s, pn->out, "_write");
    oi__buf_puts(b, "(0u, bad == 0.0 ? 1u : 0u);\n}\n");
}

/* reshape: the same elements; bools byte by byte (NAME_write, NAME_read),
 * integers word by word (NAME_w), f32 element by element. */
static void oi__vk_copy(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__vk_slot(s, pn->out);
    bool byte = out->dtype == OI_DTYPE_BOOL, word = !byte && out->dtype != OI_DTYPE_F32;
    oi__vk_grid_loop(b, s, k, word ? (int64_t)s->buffers[pn->out].bytes / 4 : oi__vk_numel(out), wg);
    const char *into = byte ? "_write" : word ? "_w" : "", *from = byte ? "_read" : into;
    oi__buf_puts(b, "        ");
    oi__vk_helper(b, s, pn->out, into);
    oi__buf_puts(b, byte ? "(o, " : "(o) = ");
    oi__vk_helper(b, s, pn->inputs[0], from);
    oi__buf_puts(b, byte ? "(o));\n    }\n}\n" : "(o);\n    }\n}\n");
}

/* transpose: output dim d is input dim perm[d]; the input element of
 * output element o, every size specialized. */
static void oi__vk_transpose(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *in = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    int nd = in->ndim;
    int64_t perm[OI_MAX_DIMS], in_stride[OI_MAX_DIMS];
    oi__sy_transpose_map(pn, in, perm, in_stride);
    int64_t stride[OI_MAX_DIMS]; /* along output dim d */
    for (int d = 0; d < nd; d++)
        stride[d] = in_stride[perm[d]];
    oi__vk_grid_loop(b, s, k, oi__vk_numel(out), wg);
    oi__vk_coords(b, out);
    oi__buf_puts(b, "        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(o) = ");
    oi__vk_name(b, s, pn->inputs[0]);
    oi__vk_strided_at(b, nd, 0, stride);
    oi__buf_puts(b, ";\n    }\n}\n");
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
    oi__vk_helper(b, s, pn->inputs[3], m->dtype == OI_DTYPE_BOOL ? "_read" : "");
    oi__buf_puts(b, m->dtype == OI_DTYPE_BOOL ? "(at) != 0u ? score : -INFINITY; /* true keeps */\n}\n"
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
typedef struct oi__vk_att_dims {
    long long S, D, T, Dv, H; /* query rows, their width, keys, values' width, heads */
} oi__vk_att_dims;

static oi__vk_att_dims oi__vk_att_dims_of(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *q = oi__vk_slot(s, pn->inputs[0]), *kk = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *v = oi__vk_slot(s, pn->inputs[2]);
    oi__vk_att_dims d = {(long long)q->shape[2], (long long)q->shape[3], (long long)kk->shape[2], (long long)v->shape[3],
                         (long long)q->shape[1]};
    return d;
}

static void oi__vk_attention_tiled(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, const int in[3], int out,
                                   const oi__vk_att_views *views, const oi__vk_att_dims *sizes) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = k->nodes[0];
    long long S = sizes->S, D = sizes->D, T = sizes->T, Dv = sizes->Dv, H = sizes->H;
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
    oi__buf_puts(b, "\n");
    oi__vk_main(b, s, k);
    oi__buf_puts(b, "    const uint head = gl_WorkGroupID.y, batch = head / H, h = head % H;\n"
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
    oi__vk_att_dims sizes = oi__vk_att_dims_of(s, pn);
    long long S = sizes.S, D = sizes.D, T = sizes.T, Dv = sizes.Dv, H = sizes.H;
    oi__vk_att_views views;
    oi__vk_attention_views(p, k, &views);
    int in[3], out = views.dst >= 0 ? views.dst : pn->out;
    for (int o = 0; o < 3; o++)
        in[o] = views.src[o] >= 0 ? views.src[o] : pn->inputs[o];
    if (oi__vk_att_tiled(&p->gpu, s, k)) {
        oi__vk_attention_tiled(b, p, k, in, out, &views, &sizes);
        return;
    }
    oi__vk_attention_sizes(b, pn, S, D, T, Dv);
    oi__buf_printf(b, "shared float oi_p[T]; /* the row's scores, then its probabilities */\n");
    long long rows[4] = {S, T, T, S}, dims[4] = {D, D, Dv, Dv};
    oi__vk_attention_layout(b, &views, H, rows, dims);
    oi__vk_attention_mask(b, s, pn, S, T);
    oi__buf_puts(b, "\n");
    oi__vk_main(b, s, k);
    oi__buf_printf(b, "    const uint row = gl_WorkGroupID.x, head = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;\n"
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

/* The sites in the step tree's order (stb array): each table access's
 * index positions, each gather. */
typedef struct oi__vk_site_list {
    const oi__sy_schedule *s;
    oi__vk_site **out;
} oi__vk_site_list;

static bool oi__vk_add_sites(const oi__sy_step *st, void *arg) {
    oi__vk_site_list *l = (oi__vk_site_list *)arg;
    const oi__sy_schedule *s = l->s;
    if (st->kind == OI__SY_S_CACHE && s->plan->slots[st->node->var].is_table)
        for (int pos = 0; pos < s->plan->slots[st->node->var].n_indices; pos++) {
            oi__vk_site site = {st->node, pos};
            (void)arrput(*l->out, site);
        }
    if (st->kind == OI__SY_S_KERNEL && s->kernels[st->kernel].kind == OI__SY_K_GATHER) {
        oi__vk_site site = {s->kernels[st->kernel].nodes[0], -1};
        (void)arrput(*l->out, site);
    }
    return false;
}

static void oi__vk_sites_of(const oi__sy_schedule *s, const oi__sy_step *steps, oi__vk_site **out) {
    oi__vk_site_list l = {s, out};
    oi__vk_walk(steps, oi__vk_add_sites, &l);
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
    oi__vk_grid_loop(b, s, k, lanes * per, wg);
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

/* argmax_axis (argmin_axis) along the last axis, one workgroup per row:
 * each invocation runs reduce.c's loop over its share (the first element,
 * then each later one that is greater (less), or not less (not greater)
 * with select_first=false), then pairs combine to the greater (lesser)
 * value, equal ones to the earlier (later) index: the simulator's answer,
 * NaN taken only when it comes first. */
static void oi__vk_argmax(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    bool first = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "select_first") != 0;
    bool max = pn->ir->op == OI_OP_argmax_axis;
    const char *t = x->dtype == OI_DTYPE_F32 ? "float" : "int", *better = max ? ">" : "<";
    oi__buf_printf(b, "shared %s oi_bv[%uu];\nshared uint oi_bi[%uu];\n\n", t, wg, wg);
    int64_t inner, len = oi__sy_softmax_lane(x, pn, &inner);
    oi__vk_lane_main(b, s, k, len, inner);
    oi__buf_printf(b, "    %s oi_best = ", t);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(oi_lane(0u));\n    uint oi_at = 0u;\n    for (uint j = 1u + tid; j < L; j += %uu) {\n        const %s v = ", wg, t);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(oi_lane(j));\n        if (v %s%s oi_best) {\n            oi_best = v;\n            oi_at = j;\n        }\n    }\n",
                   better, first ? "" : "=");
    oi__buf_printf(b, "    oi_bv[tid] = oi_best;\n    oi_bi[tid] = oi_at;\n    barrier();\n"
                      "    for (uint h = %uu; h > 0u; h >>= 1u) {\n        if (tid < h) {\n"
                      "            const %s v = oi_bv[tid + h];\n            const uint i = oi_bi[tid + h];\n"
                      "            if (v %s oi_bv[tid] || (v == oi_bv[tid] && i %s oi_bi[tid])) {\n"
                      "                oi_bv[tid] = v;\n                oi_bi[tid] = i;\n            }\n        }\n"
                      "        barrier();\n    }\n    if (tid == 0u) {\n        ", wg / 2, t, better, first ? "<" : ">");
    oi__vk_name(b, s, pn->out);
    oi__buf_puts(b, "(r) = int(oi_bi[0]);\n");
    if (out->dtype == OI_DTYPE_I64) {
        oi__buf_puts(b, "        ");
        oi__vk_helper(b, s, pn->out, "_hi");
        oi__buf_puts(b, "(r) = 0;\n");
    }
    oi__buf_puts(b, "    }\n}\n");
}

/* gather along `axis`: output element o is data[outer, idx[j], inner] (a
 * negative index counts from the end; one out of range is clamped, where
 * the simulator stops with an error). u8 slabs (rows of ggml blocks, whole
 * words: vulkan_check.c) are copied a 32-bit word at a time, o a word. */
static void oi__vk_gather(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *data = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    oi__sy_gather_dims g = oi__sy_gather_shape(s, pn);
    int unit = data->dtype == OI_DTYPE_U8 ? 4 : 1; /* elements a copied word */
    long long ni = (long long)g.count, len = (long long)g.dim;
    oi__buf_printf(b, "const uint NI = %lldu, AXIS = %lldu, INNER = %lldu;%s\n\n", ni, len, (long long)(g.inner / unit),
                   unit > 1 ? " /* u8 slabs in 32-bit words */" : "");
    oi__vk_grid_loop(b, s, k, oi__vk_numel(out) / unit, wg);
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
            oi__vk_helper(b, s, pn->out, "_w");
            oi__buf_printf(b, "(%du * o + %du) = ", words, w);
            oi__vk_helper(b, s, pn->inputs[0], "_w");
            oi__buf_printf(b, "(%du * from + %du);\n", words, w);
        }
    }
    oi__buf_puts(b, "    }\n}\n");
}

/* dequantize: f32 element o is element o % 32 of block (o % K) / 32 of
 * row o / K, read byte by byte from its input's words: q * d (q8_0),
 * (q - 8) * d (q4_0), q * d + m (q4_1), the product rounded before m is
 * added (precise: no fused multiply-add), as quant.c's oi__dequant_row. */
static void oi__vk_dequant(oi__buf *b, const oi__sy_schedule *s, const oi__sy_kernel *k, uint32_t wg) {
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *w = oi__vk_slot(s, pn->inputs[0]), *out = oi__vk_slot(s, pn->out);
    const char *format = oi__sy_qformat_name(pn);
    bool q8 = strcmp(format, "q8_0") == 0, with_min = strcmp(format, "q4_1") == 0;
    long long kk = (long long)out->shape[out->ndim - 1], rb = (long long)w->shape[w->ndim - 1];
    oi__buf_printf(b, "const uint OI_K = %lldu, OI_ROW_BYTES = %lldu, OI_BLOCK = %du; /* a row's elements and bytes, %s */\n\n",
                   kk, rb, q8 ? 34 : with_min ? 20 : 18, format);
    oi__buf_puts(b, "uint oi_byte(uint i) { return (uint(");
    oi__vk_helper(b, s, pn->inputs[0], "_w");
    oi__buf_puts(b, "(i >> 2u)) >> (8u * (i & 3u))) & 0xffu; }\n"
                    "float oi_half(uint i) { return unpackHalf2x16(oi_byte(i) | (oi_byte(i + 1u) << 8u)).x; }\n\n");
    oi__vk_grid_loop(b, s, k, oi__vk_numel(out), wg);
    oi__buf_puts(b, "        const uint oi_j = o % 32u, oi_blk = o / OI_K * OI_ROW_BYTES + o % OI_K / 32u * OI_BLOCK;\n");
    if (q8)
        oi__buf_puts(b, "        precise float oi_v = float(int(oi_byte(oi_blk + 2u + oi_j) << 24u) >> 24) * oi_half(oi_blk);\n");
    else
        oi__buf_printf(b, "        const uint oi_q = (oi_byte(oi_blk + OI_BLOCK - 16u + (oi_j & 15u)) >> (oi_j < 16u ? 0u : 4u)) & 15u;\n"
                          "        precise float oi_v = %s * oi_half(oi_blk);\n%s",
                       with_min ? "float(oi_q)" : "(float(oi_q) - 8.0)",
                       with_min ? "        precise float oi_vm = oi_v + oi_half(oi_blk + 2u);\n" : "");
    oi__buf_puts(b, "        ");
    oi__vk_name(b, s, pn->out);
    oi__buf_printf(b, "(o) = %s;\n    }\n}\n", with_min ? "oi_vm" : "oi_v");
}

/* matmul_q4: x [M, K] by weight rows [N, K / 32 blocks] of ggml blocks
 * (oi_quant_blocks.glsl: matvec_quant.comp's block arithmetic, x rounded to
 * int8 per block with activations="q8"). A workgroup of 64 takes 64 / SPLIT
 * output columns; each column's SPLIT invocations take every SPLIT-th block
 * and add their sums in shared memory; SPLIT is the backend's
 * (oi__vk_matvec_split: 1 on a CPU device, no shared memory then). */
static void oi__vk_qmatmul(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k) {
    const oi__sy_schedule *s = &p->schedule;
    const uint32_t split = oi__vk_matvec_split(p->gpu.cpu_device);
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *x = oi__vk_slot(s, pn->inputs[0]), *w = oi__vk_slot(s, pn->inputs[1]);
    const oi__slot *out = oi__vk_slot(s, pn->out);
    const oi__sy_buffer *wb = &s->buffers[pn->inputs[1]];
    const char *format = oi__sy_qformat_name(pn);
    int f = strcmp(format, "q4_0") == 0 ? 1 : strcmp(format, "q8_0") == 0 ? 3 : 2;
    long long K = (long long)x->shape[x->ndim - 1], M = (long long)(oi__vk_numel(x) / K);
    long long N = (long long)out->shape[out->ndim - 1];
    oi__buf_printf(b, "const uint M = %lldu, N = %lldu, K = %lldu, ROW_BYTES = %lldu;\n"
                      "#define Q_FORMAT %du /* %s: 1 q4_0, 2 q4_1, 3 q8_0 */\n#define w_buf model_u\n"
                      "#define COLS %uu\n#define SPLIT %uu /* invocations a column */\n\nfloat x_at(uint m, uint k) { return ",
                   M, N, K, (long long)w->shape[1], f, format, 64u / split, split);
    oi__vk_name(b, s, pn->inputs[0]);
    oi__buf_printf(b, "(m * K + k); }\n\n#include \"oi_quant_blocks.glsl\"\n\n%s",
                   split > 1 ? "shared float oi_qpart[64];\n\n" : "");
    oi__vk_main(b, s, k);
    oi__buf_puts(b, split > 1 ? "    const uint lane = gl_LocalInvocationID.x % SPLIT, col = gl_LocalInvocationID.x / SPLIT;\n"
                              : "    const uint col = gl_LocalInvocationID.x;\n");
    oi__buf_puts(b, "    const uint n = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * COLS + col;\n"
                    "    const uint w_at = ");
    if (wb->home == OI__SY_PREFIX) {
        oi__buf_puts(b, "pc.");
        oi__vk_helper_name(b, s, w, "_at");
        oi__buf_puts(b, " * 4u - pc.oi_mb * 4u; /* bytes: the entry the step pushes, in the model's window */\n");
    } else {
        oi__buf_printf(b, "%lluu - pc.oi_mb * 4u; /* bytes into the model's window */\n",
                       (unsigned long long)wb->tensors[0]->data_offset);
    }
    const char *dot = oi__sy_kernel_a8(k) ? "block_q8" : "block_f32";
    if (split == 1) { /* each invocation its column, no shared memory */
        oi__buf_printf(b, "    if (n >= N)\n        return;\n    for (uint m = 0u; m < M; m++) {\n"
                          "        float sum = 0.0;\n        for (uint blk = 0u; blk < K / 32u; blk++)\n"
                          "            sum += %s(m, blk, w_at + n * ROW_BYTES + blk * block_bytes());\n        ", dot);
        oi__vk_name(b, s, pn->out);
        oi__buf_puts(b, "(m * N + n) = sum;\n    }\n}\n");
        return;
    }
    oi__buf_printf(b, "    for (uint m = 0u; m < M; m++) {\n        float sum = 0.0;\n        if (n < N)\n"
                      "            for (uint blk = lane; blk < K / 32u; blk += SPLIT)\n"
                      "                sum += %s(m, blk, w_at + n * ROW_BYTES + blk * block_bytes());\n"
                      "        oi_qpart[gl_LocalInvocationID.x] = sum;\n        barrier();\n"
                      "        for (uint h = SPLIT / 2u; h > 0u; h >>= 1u) {\n"
                      "            if (lane < h)\n"
                      "                oi_qpart[gl_LocalInvocationID.x] += oi_qpart[gl_LocalInvocationID.x + h];\n"
                      "            barrier();\n        }\n        if (lane == 0u && n < N)\n            ",
                   dot);
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
                    "shared float oi_q[D];    /* the row's query */\n\n");
    oi__vk_main(b, s, k);
    oi__vk_row_index(b, "row", q->shape[0] * q->shape[1] * q->shape[2]);
    oi__buf_puts(b, "    const uint si = row % S, hq = row / S % HQ, bi = row / (S * HQ), hk = hq / (HQ / HKV);\n");
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

/* A workgroup per row (oi__vk_row_main): along x, past OI__VK_MAX_GROUPS rows
 * in rows of that many (the least maxComputeWorkGroupCount Vulkan allows). */
static void oi__vk_rows_grid(int64_t rows, uint32_t *gx, uint32_t *gy) {
    *gx = (uint32_t)(rows > OI__VK_MAX_GROUPS ? OI__VK_MAX_GROUPS : rows);
    *gy = (uint32_t)(rows > OI__VK_MAX_GROUPS ? (rows + OI__VK_MAX_GROUPS - 1) / OI__VK_MAX_GROUPS : 1);
}

/* Workgroups of a kernel's dispatch (x, y, z). */
static void oi__vk_groups(const oi_plan *p, const oi__sy_kernel *k, uint32_t *gx, uint32_t *gy, uint32_t *gz) {
    const oi__sy_schedule *s = &p->schedule;
    const oi__pnode *pn = k->nodes[0];
    const oi__slot *out = oi__vk_slot(s, pn->out), *in = oi__vk_slot(s, pn->inputs[0]);
    uint32_t wg = p->gpu.workgroup;
    *gy = *gz = 1;
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
        *gz = t.slices;
        return;
    }
    case OI__SY_K_MATMUL_ANY: { /* blocks of 2 side x 2 side, a batch each along z */
        const oi__sy_mm_geom g = oi__sy_mm_geom_of(in, oi__vk_slot(s, pn->inputs[1]), out, pn);
        int64_t block = 2 * oi__vk_matmul_side(&p->gpu);
        *gx = (uint32_t)((g.n + block - 1) / block);
        *gy = (uint32_t)((g.m + block - 1) / block);
        *gz = (uint32_t)g.batches;
        return;
    }
    case OI__SY_K_SOFTMAX: case OI__SY_K_ARGMAX: { /* a workgroup per lane */
        int64_t inner;
        oi__vk_rows_grid(oi__vk_numel(in) / oi__sy_softmax_lane(in, pn, &inner), gx, gy);
        return;
    }
    case OI__SY_K_NORM:
        oi__vk_rows_grid(oi__vk_numel(in) / oi__sy_norm_lane(in, pn), gx, gy);
        return;
    case OI__SY_K_QMATMUL: { /* 64 / SPLIT columns a workgroup, past OI__VK_MAX_GROUPS in rows of them */
        int64_t cols = 64 / oi__vk_matvec_split(p->gpu.cpu_device);
        oi__vk_rows_grid((out->shape[out->ndim - 1] + cols - 1) / cols, gx, gy);
        return;
    }
    case OI__SY_K_ATTN_KV: {
        const oi__slot *q = oi__vk_slot(s, k->nodes[k->lead]->inputs[0]);
        oi__vk_rows_grid(q->shape[0] * q->shape[1] * q->shape[2], gx, gy);
        return;
    }
    case OI__SY_K_REDUCE:
        if (oi__vk_row_reduce(s, pn)) { /* else a grid-stride loop, as the default */
            oi__vk_rows_grid(oi__vk_numel(out), gx, gy);
            return;
        }
        break;
    case OI__SY_K_ATTENTION:
        *gx = (uint32_t)in->shape[2];
        if (oi__vk_att_tiled(&p->gpu, s, k))
            *gx = (uint32_t)((in->shape[2] + OI__VK_ATT_ROWS - 1) / OI__VK_ATT_ROWS);
        *gy = (uint32_t)(in->shape[0] * in->shape[1]);
        return;
    default: break;
    }
    int64_t groups = (oi__vk_numel(out) + wg - 1) / wg; /* a grid-stride loop */
    *gx = (uint32_t)(groups > OI__VK_MAX_GROUPS ? OI__VK_MAX_GROUPS : groups < 1 ? 1 : groups);
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
    if (k->kind == OI__SY_K_MATMUL_ANY)
        return (uint32_t)(oi__vk_matmul_side(&p->gpu) * oi__vk_matmul_side(&p->gpu));
    if (oi__vk_att_tiled(&p->gpu, &p->schedule, k))
        return oi__vk_att_tiled_wg(&p->gpu);
    if (k->kind == OI__SY_K_QMATMUL)
        return 64; /* 64 / SPLIT columns of SPLIT invocations */
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
 * `NAME_write(index, value);` for a bool (a byte among the words) and for
 * an i64 a kernel computes on (its two words), and
 * `arena[SCRATCH + (index)] = value;` (arena16 and float16_t for f16) for an
 * in-place matmul's result (scratch: its first element there, else
 * UINT64_MAX): the kernels' bodies only ever store a variable that way.
 * Frees text. */
static char *oi__vk_rewrite_stores(char *text, const oi__sy_schedule *s, const oi__slot *sl, bool half,
                                   uint64_t scratch) {
    bool through_write = sl->dtype == OI_DTYPE_BOOL || sl->dtype == OI_DTYPE_I64;
    oi__buf name, write, b;
    memset(&name, 0, sizeof name);
    memset(&write, 0, sizeof write);
    memset(&b, 0, sizeof b);
    oi__sy_render_param_name(&name, s, sl);
    oi__buf_puts(&name, "(");
    oi__vk_helper_name(&write, s, sl, "_write(");
    for (const char *line = text; name.data && write.data && *line;) {
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
            } else if (through_write) { /* NAME_write(index, value); */
                oi__buf_puts(&b, write.data);
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
    oi__buf_free(&write);
    oi__free(text);
    return oi__buf_take(&b);
}

/* A kernel's main and what it needs besides the head. */
static void oi__vk_kernel_body(oi__buf *b, const oi_plan *p, const oi__sy_kernel *k, uint32_t wg) {
    const oi__sy_schedule *s = &p->schedule;
    if (oi__vk_uses_reductions(s, k))
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
    case OI__SY_K_QMATMUL: oi__vk_qmatmul(b, p, k); break;
    case OI__SY_K_ATTN_KV: oi__vk_attn_kv(b, s, k, wg); break;
    case OI__SY_K_ALL_FINITE: oi__vk_all_finite(b, s, k, wg); break;
    case OI__SY_K_CONV: oi__vk_conv(b, s, k, wg); break;
    case OI__SY_K_POOL: oi__vk_pool(b, s, k, wg); break;
    case OI__SY_K_LAYOUT: oi__vk_layout(b, s, k, wg); break;
    case OI__SY_K_MATMUL_ANY: oi__vk_matmul_any(b, p, k); break;
    case OI__SY_K_CONV_T: oi__vk_conv_t(b, s, k, wg); break;
    case OI__SY_K_TOPK: oi__vk_topk(b, s, k, wg); break;
    case OI__SY_K_DEQUANT: oi__vk_dequant(b, s, k, wg); break;
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
    oi__vk_loops loops = oi__vk_loops_around(s, -1, pn);
    if (loops.n > 0) {
        oi__buf_puts(&b, "layout(push_constant) uniform Push {");
        for (int l = 0; l < loops.n; l++)
            oi__buf_printf(&b, " int lv_%s;", loops.var[l]);
        oi__buf_puts(&b, " } pc; /* set when the step is recorded */\n");
    }
    oi__buf_puts(&b, "\n");
    oi__vk_main_at(&b, s, -1, pn);
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

/* Module m's GLSL: a kernel of the schedule, or a cache statement's. */
static char *oi__vk_kernel_source(const oi_plan *p, int m) {
    const oi__sy_schedule *s = &p->schedule;
    int first_cache = oi__vk_cache_module(p, NULL);
    if (m >= first_cache) {
        const oi__pnode **nodes = NULL;
        oi__vk_cache_nodes(s, s->steps, &nodes);
        char *text = oi__vk_cache_source(p, m, nodes[m - first_cache]);
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
        oi_dtype t = oi__vk_slot(s, slot)->dtype;
        if (params[i].written && (half || in_place || t == OI_DTYPE_BOOL || (t == OI_DTYPE_I64 && oi__vk_int64_kernel(s, k))))
            text = oi__vk_rewrite_stores(text, s, oi__vk_slot(s, slot), half, scratch);
    }
    arrfree(params);
    return text;
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
    if (oi__vk_has_int64(&p->schedule))
        oi__buf_puts(&b, "/* An i64: its two words (the low one first) as one int64_t, read, and written (the kernels\n"
                         " * that compute on i64 enable GL_EXT_shader_explicit_arithmetic_types_int64) */\n"
                         "#define OI_I64(words, at) packInt2x32(ivec2(words[at], words[(at) + 1u]))\n"
                         "#define OI_I64_WRITE(words, at, v) { \\\n"
                         "    const ivec2 oi_w = unpackInt2x32(v); \\\n"
                         "    words[at] = oi_w.x; \\\n    words[(at) + 1u] = oi_w.y; \\\n}\n\n");
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
                     "#undef OI_S_is_nan\n#define OI_S_is_nan(a) is_nan_f(a)\n#define NAN NAN_F\n#define INFINITY INF_F\n\n"
                     "/* min and max as libm's fmin and fmax: a NaN operand is ignored (GLSL's leave it undefined) */\n"
                     "float oi_fmin(float a, float b) { return is_nan_f(a) ? b : is_nan_f(b) ? a : min(a, b); }\n"
                     "float oi_fmax(float a, float b) { return is_nan_f(a) ? b : is_nan_f(b) ? a : max(a, b); }\n\n"
                     "/* is_inf and is_neg as compare.c: the bits (is_neg: the sign bit, -0.0 and -NaN too) */\n"
                     "#undef OI_S_is_inf\n#define OI_S_is_inf(a) is_inf_f(a)\n"
                     "uint signbit(float x) { return floatBitsToUint(x) >> 31; }\n"
                     "/* round as libm's: halves away from zero (GLSL's round takes either way); x - t is exact */\n"
                     "float oi_round(float x) { float t = trunc(x); return abs(x - t) >= 0.5 ? t + sign(x) : t; }\n"
                     "/* softplus as scalar_math.h's: max(x, 0) + log1p(e^-|x|), log1p(e) as log(u) e / (u - 1), u = 1 + e\n"
                     " * (exact where u rounds to 1) */\n"
                     "float oi_softplus(float x) {\n"
                     "    const float e = exp_f32(-abs(x)), u = 1.0 + e;\n"
                     "    return (floatBitsToInt(x) > 0 ? x : 0.0) + (u == 1.0 ? e : log_f32(u) * e / (u - 1.0));\n}\n"
                     "/* pow as libm's powf (GLSL's is undefined for x <= 0): 1 for y = 0 or x = 1; a negative x\n"
                     " * only to an integer y, negated for an odd one; zeros and infinities as C's Annex F */\n"
                     "float oi_pow(float x, float y) {\n"
                     "    if (y == 0.0 || x == 1.0) return 1.0;\n"
                     "    if (is_nan_f(x) || is_nan_f(y)) return NAN_F;\n"
                     "    const float ax = abs(x), ay = abs(y);\n"
                     "    const bool whole = trunc(y) == y, odd = whole && ay < 16777216.0 && mod(ay, 2.0) == 1.0;\n"
                     "    if (x < 0.0 && !whole) return NAN_F;\n"
                     "    float r;\n"
                     "    if (is_inf_f(y)) r = ax == 1.0 ? 1.0 : (ax > 1.0) == (y > 0.0) ? INF_F : 0.0;\n"
                     "    else if (ax == 0.0) r = y < 0.0 ? INF_F : 0.0;\n"
                     "    else if (is_inf_f(ax)) r = y < 0.0 ? 0.0 : INF_F;\n"
                     "    else r = pow(ax, y);\n"
                     "    return signbit(x) != 0u && odd ? -r : r;\n}\n\n#endif\n");
    return oi__buf_take(&b);
}
