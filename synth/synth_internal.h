/* synth_internal.h - what the synthesizer's rooms share.
 *
 *   synth.c     the entry points (oi_synthesize, oi_plan_emit, the summary)
 *   schedule.c  plan -> steps, kernels (fusion groups), buffers (arena
 *               offsets). Decides; never prints.
 *   lang.c      one small struct per language (C today)
 *   render.c    kernels and steps as C-family source. Prints; never decides.
 *   emit.c      writes the folder, one short function per file
 *   vulkan_check.c, vulkan_plan.c, vulkan_kernels.c, emit_vulkan.c
 *               the Vulkan target: what it refuses, the schedule on the
 *               device, the GLSL kernels, the host code and the folder
 *
 * The schedule reads the validated plan (openinfer_impl/plan.h), the same
 * one the executor runs, and never changes it. */
#ifndef OPENINFER_SYNTH_INTERNAL_H
#define OPENINFER_SYNTH_INTERNAL_H

#include "../openinfer_impl/plan.h"

/* ---- what a kernel computes ---- */
typedef enum oi__sy_kernel_kind {
    OI__SY_K_ELEMENTWISE, /* a chain of elementwise ops over one shape: one loop */
    OI__SY_K_MATMUL,      /* [M, K] x [K, N] (gemm: + bias row, activation), elementwise epilogue fused */
    OI__SY_K_REDUCE,      /* sum/mean over axes                                */
    OI__SY_K_SOFTMAX,     /* softmax, log_softmax along an axis (Vulkan: softmax, the last) */
    OI__SY_K_ALL_FINITE,  /* is_finite: every element, into one bool           */
    OI__SY_K_COPY,        /* reshape: the same elements, another shape          */
    OI__SY_K_TRANSPOSE,   /* transpose: an index map                            */
    OI__SY_K_NORM,        /* layer_norm or rms_norm over the last axis          */
    OI__SY_K_ATTENTION,   /* softmax(scale q k^T + mask) v per (batch, head)    */
    OI__SY_K_GATHER,      /* gather: slabs of data picked by integer indices    */
    OI__SY_K_LAYOUT,      /* slice, split, squeeze, unsqueeze, pad, concat: copies by an index map */
    OI__SY_K_CONV,        /* conv1d/conv2d: patches x weights, elementwise epilogue fused */
    OI__SY_K_POOL,        /* max_pool2d, avg_pool2d (their window in conv), global_avg_pool */
    OI__SY_K_ROPE,        /* rope: pairs of the last dim turned by position     */
    OI__SY_K_ARGMAX,      /* argmax_axis along the last axis, i64 indices       */
    OI__SY_K_QMATMUL,     /* matmul_q4, activations "q8": quant.c's int8 block dots */
    OI__SY_K_ATTN_KV,     /* attention over keys whose count is known at run time
                             and/or grouped-query heads: plain loops per head */
    OI__SY_K_MATMUL_ANY,  /* matmul over broadcast batch dims or of any number dtype, gemm
                             with trans_a/trans_b/alpha/beta or a broadcast C: plain loops */
    OI__SY_K_CONV_T,      /* conv_transpose2d: each input position's products scattered, conv.c's order */
    OI__SY_K_TOPK,        /* top_k, top_k_indices along an axis: scalar.h's keys and heap, as nn.c */
    OI__SY_K_DEQUANT      /* dequantize: rows of ggml blocks as f32, quant.c's oi__dequant_row */
} oi__sy_kernel_kind;

/* A conv's window, as kernels/conv.c reads it (1 or 2 spatial dims; a 1-D
 * conv is one row high): per image and group, y[mg, out_h * out_w] =
 * w[mg, rows] x patches[rows, out_h * out_w], rows = cg * k_h * k_w. */
typedef struct oi__sy_conv_geom {
    int64_t batch, in_c, out_c, group, cg, mg, rows;
    int64_t in_h, in_w, out_h, out_w, k_h, k_w, s_h, s_w, p_h, p_w, d_h, d_w;
    int64_t pe_h, pe_w; /* the end padding (avg_pool2d's count_include_pad) */
    /* How, as gemm.c would multiply it: OI__SY_CONV_SMALL (at most 4096
     * multiply-adds: its plain loop), _SKINNY (at most 4 positions, more
     * channels: its dot kernels, which the simulator runs there), _GEMM
     * (blocks of `block` positions packed, the micro-kernels), _DEPTHWISE
     * (one input channel per group: conv.c's direct loop), _WIDE (f64:
     * conv.c's patches times gemm.c's f64 reference loops, plain loops). */
    int path;
    int64_t block;
} oi__sy_conv_geom;

/* How rope covers x (nn.c's oi__row_rope): lanes of n channels over dims
 * 0..ndim-2 row-major, the first rot of them rotated in half pairs
 * (interleaved or split), a lane's position at lane / seq_div % seq_len
 * (+ lane / batch_div * seq_len with positions per batch). */
typedef struct oi__sy_rope_geom {
    int64_t n, rot, half, seq_len, seq_div, batch_div, lanes;
    bool inter;
} oi__sy_rope_geom;
/* A matmul_any's dot products: batches of m x n results, each over k
 * products of A's row (elements a_cs apart, rows a_rs) and B's column
 * (elements b_rs apart, columns b_cs); gemm's trans_a/trans_b swap them. */
typedef struct oi__sy_mm_geom {
    int64_t batches, m, n, k, a_rs, a_cs, b_rs, b_cs;
} oi__sy_mm_geom;
enum { OI__SY_CONV_SMALL, OI__SY_CONV_SKINNY, OI__SY_CONV_GEMM, OI__SY_CONV_DEPTHWISE, OI__SY_CONV_WIDE };

typedef struct oi__sy_kernel {
    int id;
    oi__sy_kernel_kind kind;
    const oi__pnode **nodes; /* stb array: the fused DSL statements, in order */
    int64_t numel;           /* elements of the loop (elementwise, epilogues)  */
    bool packed;             /* MATMUL: gemm.c's micro-kernels over packed panels
                                (oi_gemm.h), else the plain loop               */
    uint64_t bytes, flops;   /* estimated per call                            */
    /* Threads: tasks > 1 splits the kernel into that many independent parts
     * (oi_runtime.h's pool runs them): MATMUL blocks of task_rows rows x
     * task_cols columns (row blocks first), ATTENTION one (batch, head) each,
     * every other kind task_rows rows (elements for ELEMENTWISE) each. */
    int tasks;
    int64_t task_rows, task_cols;
    bool b_prepacked;        /* MATMUL: B is a model tensor packed at open    */
    bool b_transposed;       /* MATMUL: at most 4 rows of A and B a model tensor
                                transposed at open: gemm.c's dot kernels      */
    /* The statement that says what the kernel computes: nodes[lead]. 0 but
     * for an ATTENTION whose reshape/transpose views were folded into its
     * indexing: those statements are in `nodes` too, in program order. */
    int lead;
    /* ATTENTION: q, k, v and the result as the stored value each is read
     * from or written to (a view's base), and the element stride of each
     * of the operand's four dims in it (the last one is 1). */
    int view_slot[4];
    int64_t view_stride[4][4];
    /* LAYOUT: where each output element comes from (oi__op_layout_map,
     * oi__op_pad_map): slice/split/squeeze/unsqueeze the input offset then
     * one stride per output dim; pad per output dim its source index along
     * that dim for each position (-1: the fill), dims one after another;
     * concat nothing (the inputs follow one another along the axis).
     * stb array. */
    int64_t *index_map;
    oi__sy_conv_geom conv; /* CONV: its window */
    /* QMATMUL: where its x, rounded into int8 blocks before its tasks run,
     * lives in ctx->q8_x (elements; its block scales and sums at / 32) */
    int64_t q8_offset;
} oi__sy_kernel;


/* The statement that says what kernel k computes. */
static inline const oi__pnode *oi__sy_kernel_lead(const oi__sy_kernel *k) { return k->nodes[k->lead]; }

/* A matmul_q4 kernel with activations="q8": x rounded into int8 blocks
 * (ctx->q8_x) before it runs; else x is read as f32. */
static inline bool oi__sy_kernel_a8(const oi__sy_kernel *k) {
    if (k->kind != OI__SY_K_QMATMUL)
        return false;
    const oi__pnode *pn = k->nodes[0];
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "activations") == 0)
            return pn->attrs[i].s && strcmp(pn->attrs[i].s, "q8") == 0;
    return false;
}

/* ---- the step function, as a tree ---- */
typedef enum oi__sy_step_kind {
    OI__SY_S_KERNEL, OI__SY_S_LOOP, OI__SY_S_BRANCH, OI__SY_S_TRANSFER, OI__SY_S_CACHE,
    OI__SY_S_FENCE,   /* barrier, dep: nothing runs, nothing moves across */
    OI__SY_S_YIELD,   /* the entry yields: its consumers run here, one after another */
    OI__SY_S_CONSUMER,/* one consumer block, on its own copies of what it writes */
    OI__SY_S_AWAIT    /* the entry awaits: yielded values a consumer wrote come back */
} oi__sy_step_kind;

typedef struct oi__sy_step oi__sy_step;
struct oi__sy_step {
    oi__sy_step_kind kind;
    const oi__pnode *node; /* the statement (the first of a kernel)  */
    int kernel;            /* KERNEL: index into kernels              */
    oi__sy_step *body;     /* LOOP (stb array)                        */
    oi__sy_step *then_steps, *else_steps; /* BRANCH: the blocks, inlined (stb arrays) */
    int block_then, block_else;
    oi__sy_step *consumers; /* YIELD: CONSUMER steps (stb array)      */
    int block;              /* CONSUMER: its block                    */
    int *remap;             /* CONSUMER: pairs slot, private buffer (stb array);
                               AWAIT: pairs private buffer, slot to copy back */
    int pos_begin, pos_end; /* positions in the linear schedule       */
    bool joins_next;        /* KERNEL (C target): runs in one pool job with the
                               next step, a kernel that neither reads nor writes
                               bytes this one writes, nor writes bytes it reads */
};

/* Where a slot's bytes live in the emitted code. */
typedef enum oi__sy_home {
    OI__SY_NONE,   /* never stored: a value inside one fused kernel      */
    OI__SY_MODEL,  /* read-only, in the mapped model file                */
    OI__SY_PREFIX, /* W(l): one pointer per entry into the model file    */
    OI__SY_STATE,  /* a declared variable: its own bytes in ctx->state   */
    OI__SY_TABLE,  /* a persistent table: preallocated at its @fixed bound */
    OI__SY_ARENA   /* a temporary: an offset in the planned arena        */
} oi__sy_home;

typedef struct oi__sy_buffer {
    int slot;             /* the variable (a consumer's private copy: the one copied) */
    int consumer;         /* a private copy: the consumer block's index; else -1 */
    oi__sy_home home;
    uint64_t bytes;       /* one value (a table: one entry)              */
    uint64_t offset;      /* in the arena or the state block             */
    int first, last;      /* live positions (ARENA)                      */
    bool zero_at_start;   /* read before written: starts every step as zeros */
    bool written;         /* some statement writes it                    */
    bool kept;            /* holds its value after the step (fetchable)  */
    /* MODEL/PREFIX: the model tensors (PREFIX: one per entry, in order) */
    const oi_tensor_info **tensors; /* stb array */
    int64_t prefix_count;
    int64_t table_entries; /* TABLE: entries preallocated (product of the bounds) */
    int64_t bound[OI_MAX_DIMS]; /* TABLE: per index, @fixed or what the accesses reach */
    /* TABLE of an @auto_dim variable: each entry is preallocated with its
     * leading dim grown by auto_max (its @auto_dim index's @fixed, or the
     * largest value the accesses reach); the index's own bound is 1, and
     * ctx->VAR_grown[entry] counts the rows grown so far */
    int64_t auto_max;
    /* TABLE reset one entry at a time somewhere: ctx->VAR_made[entry] marks
     * the entries accessed since their reset, and a reset of one sets the
     * sizes back to those left (the simulator's) */
    bool entry_resets;
    /* A value whose leading dim is known at run time only (a slice of a
     * table, and what ops make of it): stored at its bound, its length in
     * ctx->len_VAR. Every other dim is static. */
    bool dyn0;
    /* dyn0 read from a table slice along its last index and only read
     * after, before the table changes: a view into the table (ctx->view_VAR,
     * no arena bytes), not a copy */
    bool table_view;
    bool shaped;          /* the shape inference has seen a write of it  */
    int64_t max0;         /* the leading dim's bound                      */
    /* MODEL/PREFIX read as a packed matmul's B: packed once at open into
     * ctx->packed at packed_offset, packed_bytes per entry */
    bool prepacked;
    uint64_t packed_offset, packed_bytes;
    /* MODEL/PREFIX read as a skinny matmul's B: transposed once at open
     * (each entry [N, K] row-major) into ctx->packed at transposed_offset,
     * transposed_bytes per entry */
    bool transposed;
    uint64_t transposed_offset, transposed_bytes;
    int64_t inner;        /* elements per leading index                   */
} oi__sy_buffer;

/* Elements per index of a variable's leading dim (an @auto_dim row). */
static inline int64_t oi__sy_row_numel(const oi__slot *sl) {
    return sl->ndim > 0 ? oi__shape_numel(sl->ndim - 1, sl->shape + 1) : 1;
}

/* Elements of one preallocated entry of a TABLE (an @auto_dim variable's
 * at its largest). */
static inline int64_t oi__sy_entry_numel(const oi__sy_buffer *b, const oi__slot *sl) {
    return sl->n_auto > 0 ? (sl->shape[0] + b->auto_max) * oi__sy_row_numel(sl) : oi__shape_numel(sl->ndim, sl->shape);
}

typedef struct oi__sy_options {
    int max_kernel_ops; /* ops fused into one kernel at most (>= 1) */
    bool parallel_rows; /* a GPU target: a matmul's rows run at once, so its
                           epilogue may not write what the matmul reads */
    /* the device JSON's memory.l1d_bytes and l2_bytes (0: not given; the
     * gemm keeps gemm.c's kc and the default task columns) */
    uint64_t l1d_bytes, l2_bytes;
    /* the C target's preferences.default_precision: OI_DTYPE_F16 or BF16
     * rounds every stored activation to it (oi__slot_is_activation's
     * slots, as the simulator's precision setting); 0 or F32: f32 */
    oi_dtype precision;
    bool vulkan; /* the target: Vulkan, else C (its refusals name it) */
} oi__sy_options;

/* The target's name in the refusals: "C" or "Vulkan". */
static inline const char *oi__sy_target_name(const oi__sy_options *o) { return o->vulkan ? "Vulkan" : "C"; }

/* The most workgroups a Vulkan dispatch may count along each dimension on
 * every device (Vulkan's least maxComputeWorkGroupCount). */
#define OI__VK_MAX_GROUPS 65535

typedef struct oi__sy_schedule {
    const oi__plan *plan;
    oi__sy_options options;
    oi__sy_kernel *kernels; /* stb array */
    oi__sy_step *steps;     /* stb array: the entry block         */
    oi__sy_buffer *buffers; /* stb array, one per plan slot       */
    oi__slot *shaped;       /* stb array: the plan's slots, a dynamic leading dim at its bound */
    char **names;           /* stb array: each slot's name in the kernels (render.c's oi__sy_name_slots) */
    int n_positions;
    bool packed_gemm;       /* some kernel is packed: the folder gets oi_gemm.h */
    bool threaded;          /* some kernel has tasks: the folder gets oi_runtime.h */
    bool vexp;              /* some kernel takes e^x on vectors (oi_gemm.h's vexp) */
    bool quant;             /* some kernel runs matmul_q4 or dequantize: the folder gets oi_quant.h */
    int64_t q8_elements;    /* ctx->q8_x: every matmul_q4 kernel's x as int8, side by side */
    int64_t gemm_kc;        /* k steps per packed block (gemm.c's kc)         */
    int64_t task_cols;      /* columns of a matmul task over a packed B, at most */
    bool tiles_from_device; /* gemm_kc and task_cols come from the device JSON's caches */
    uint64_t packed_bytes;  /* the weights packed at open (NAME_PACKED_BYTES) */
    uint64_t arena_bytes, peak_bytes, state_bytes;
} oi__sy_schedule;

/* An op's name for the text the synthesizer writes ("?" never happens for
 * a validated plan, but keeps printf's %s away from NULL). */
static inline const char *oi__sy_op_name(oi_op op) {
    const char *name = oi_op_name(op);
    return name ? name : "?";
}

/* f16 and bf16 on the C target: stored as their bits (uint16_t), decoded
 * by half.h's conversions where a kernel reads them and rounded by them
 * where it writes them, as the simulator's loads and stores do. */
static inline bool oi__sy_is_half(oi_dtype t) { return t == OI_DTYPE_F16 || t == OI_DTYPE_BF16; }

/* unroll.c: loops over prefix-table entries whose shapes differ (W(n):
 * f32[E(n), ...]) become one copy of their body per iteration, in the plan
 * that oi_synthesize built, before the schedule reads it. */
typedef struct oi__sy_unrolled {
    oi__pnode *loops; /* stb array: the loop nodes taken out (their copies borrow their settings) */
    char **names;     /* stb array: the names of the slots the copies added, and the literals' (synth.c) */
    const char *target; /* set by the caller: the target its refusals name ("C" or "Vulkan") */
} oi__sy_unrolled;
oi_status oi__sy_unroll(oi__plan *plan, oi__sy_unrolled *u);
void oi__sy_unrolled_free(oi__sy_unrolled *u);

/* schedule.c */
oi_status oi__sy_schedule_build(const oi__plan *plan, const oi__sy_options *options, oi__sy_schedule *out);
void oi__sy_schedule_free(oi__sy_schedule *s);
/* The kernel's output slot for node i of it, and whether that value is
 * stored (else it lives in a local of the kernel's loop only). */
bool oi__sy_slot_stored(const oi__sy_schedule *s, int slot);
/* A split matmul whose emitted code cuts C as gemm.c's packed path does, at
 * run time (B packed at open; C stored, final and not A). */
bool oi__sy_matmul_tiles_at_run(const oi__sy_schedule *s, const oi__sy_kernel *k);
const char *oi__sy_kernel_kind_name(oi__sy_kernel_kind kind);
oi__sy_rope_geom oi__sy_rope_geom_of(const oi__slot *x, const oi__pnode *pn);
oi__sy_mm_geom oi__sy_mm_geom_of(const oi__slot *a, const oi__slot *b, const oi__slot *out, const oi__pnode *pn);
/* schedule.c: the elements a layer_norm or rms_norm normalizes together:
 * x's dims from layer_norm's axis on (rms_norm: the last one) */
int64_t oi__sy_norm_lane(const oi__slot *x, const oi__pnode *pn);
/* schedule.c: the elements a softmax or log_softmax normalizes together
 * (its axis's length; top_k's axis too), *inner the elements between two
 * of them */
int64_t oi__sy_softmax_lane(const oi__slot *x, const oi__pnode *pn, int64_t *inner);
/* schedule.c: gather along `axis` seen as data [outer, dim, inner] and a
 * result [outer, count, inner] (count: the indices' elements), one slab
 * of `inner` values per index */
typedef struct oi__sy_gather_dims { int64_t outer, dim, inner, count; int axis; } oi__sy_gather_dims;
oi__sy_gather_dims oi__sy_gather_shape(const oi__sy_schedule *s, const oi__pnode *pn);
/* schedule.c: the block format of a matmul_q4 or dequantize node, "q4_0",
 * "q4_1" or "q8_0" (the op table's default, q4_0, when it names none) */
const char *oi__sy_qformat_name(const oi__pnode *pn);

/* ---- the elementwise ops the targets emit ---- */
/* One row per op, so that adding one is a row here (and its scalar form in
 * kernels/scalar.h, or its functions): schedule.c fuses the row's ops on
 * its domain, render.c prints them by their form, lang.c names their
 * functions, emit.c copies scalar_math.h in for SMATH.
 * X(op, domain, form, c_fn, glsl_fn):
 *   domain  the input dtypes it runs on: NUM floats and integers (integers
 *           wrap, as in the kernels; a comparison gives bool), FLOAT f32 and
 *           f64, F32 f32 only (in f32, as math.c computes it)
 *   form    SCALAR: scalar.h's OI_S_<op> in the compute domain, then rounded;
 *           SMATH: scalar_math.h's f32 function (the same bits in C and GLSL);
 *           MATH: an f32 function, libm's (C) or math.glsl's (GLSL), as
 *           math.c's oi__math_f32 calls them; LIBM: a function of the compute
 *           domain, as elementwise.c calls it (libm's; min and max: scalar.h's)
 *   c_fn, glsl_fn  SMATH, MATH, LIBM: the function in C and in GLSL; NULL
 *           where GLSL's differs from C's (the Vulkan target refuses it) */
/* name, domain, form, the C function (f32 for SMATH and MATH ops), the GLSL
 * function, the C function on f64 values (libm's double one, as math.c's
 * oi__math_f64; NULL: f32 only, or LIBM's C function serves both) */
#define OI__SY_EW_LIST(X) \
    X(add, NUM, SCALAR, NULL, NULL, NULL) \
    X(sub, NUM, SCALAR, NULL, NULL, NULL) \
    X(mul, NUM, SCALAR, NULL, NULL, NULL) \
    X(neg, NUM, SCALAR, NULL, NULL, NULL) \
    X(eq, NUM, SCALAR, NULL, NULL, NULL) \
    X(ne, NUM, SCALAR, NULL, NULL, NULL) \
    X(lt, NUM, SCALAR, NULL, NULL, NULL) \
    X(le, NUM, SCALAR, NULL, NULL, NULL) \
    X(gt, NUM, SCALAR, NULL, NULL, NULL) \
    X(ge, NUM, SCALAR, NULL, NULL, NULL) \
    X(and, BITS, SCALAR, NULL, NULL, NULL) /* bitwise on integers, logical on bool */ \
    X(or, BITS, SCALAR, NULL, NULL, NULL) \
    X(xor, BITS, SCALAR, NULL, NULL, NULL) \
    X(not, BITS, SCALAR, NULL, NULL, NULL) \
    X(where, PICK, SCALAR, NULL, NULL, NULL) /* where(cond, a, b): a and b numbers */ \
    X(cast, CAST, SCALAR, NULL, NULL, NULL) /* render.c: the conversion a store or a load makes */ \
    X(div, NUM, SCALAR, NULL, NULL, NULL) /* integers: scalar.h's OI_S_div_int/OI_S_div_uint (render.c) */ \
    X(floor_div, INT, SCALAR, NULL, NULL, NULL) \
    X(rem, INT, SCALAR, NULL, NULL, NULL) \
    X(recip, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(fma, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(relu, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(fill_nan_like, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(hard_sigmoid, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(hard_swish, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(is_nan, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(is_inf, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(is_neg, SIGNED, SCALAR, NULL, NULL, NULL) /* render.c: signbit (floats, -0.0 too) or < 0, as compare.c */ \
    X(fill, ANY, SCALAR, NULL, NULL, NULL) /* render.c: the value, in the dtype as elementwise.c reads it */ \
    X(sign, FLOAT, SCALAR, NULL, NULL, NULL) \
    X(exp, FLOAT, SMATH, "OI_S_exp_f32", "OI_S_exp_f32", "exp") \
    X(tanh, FLOAT, SMATH, "OI_S_tanh_f32", "OI_S_tanh_f32", "tanh") \
    X(sigmoid, F32, SMATH, "OI_S_sigmoid_f32", "OI_S_sigmoid_f32", NULL) \
    X(silu, F32, SMATH, "OI_S_silu_f32", "OI_S_silu_f32", NULL) \
    X(gelu, F32, SMATH, "OI_S_gelu_erf_f32", "OI_S_gelu_erf_f32", NULL) /* approximate="tanh": lang.c */ \
    X(softplus, F32, SMATH, "OI_S_softplus_f32", "oi_softplus", NULL) /* C: libm's log1pf; GLSL: vulkan_kernels.c's */ \
    X(sqrt, FLOAT, MATH, "sqrtf", "sqrt", "sqrt") \
    X(log, FLOAT, MATH, "logf", "log_f32", "log") \
    X(erf, FLOAT, MATH, "erff", "erf_f32", "erf") \
    X(pow, FLOAT, MATH, "powf", "oi_pow", "pow") /* GLSL: vulkan_kernels.c's (GLSL's pow: undefined for x <= 0) */ \
    X(clamp, NUM, SCALAR, NULL, NULL, NULL) /* render.c: OI_S_fmin(OI_S_fmax(x, min), max), as elementwise.c; OI_S_clamp_int */ \
    X(abs, FLOAT, LIBM, "fabs", "abs", NULL) \
    X(min, NUM, LIBM, "OI_S_fmin", "oi_fmin", NULL) /* a NaN operand is ignored (GLSL's min: undefined); integers: render.c */ \
    X(max, NUM, LIBM, "OI_S_fmax", "oi_fmax", NULL) \
    X(floor, FLOAT, LIBM, "floor", "floor", NULL) \
    X(ceil, FLOAT, LIBM, "ceil", "ceil", NULL) \
    X(round, FLOAT, LIBM, "round", "oi_round", NULL) /* halves away from zero (GLSL's round: either way) */ \
    X(trunc, FLOAT, LIBM, "trunc", "trunc", NULL)

/* what an op takes: NUM ints and floats, FLOAT floats, F32 f32 only, INT
 * ints only, SIGNED floats and signed ints, BITS ints and bool, ANY numbers
 * and bool, PICK a bool and two numbers, CAST a number to a number (f16
 * computes where f32 does) */
typedef enum oi__sy_ew_domain {
    OI__SY_EW_NUM, OI__SY_EW_FLOAT, OI__SY_EW_F32, OI__SY_EW_INT, OI__SY_EW_SIGNED, OI__SY_EW_BITS, OI__SY_EW_ANY,
    OI__SY_EW_PICK, OI__SY_EW_CAST
} oi__sy_ew_domain;
typedef enum oi__sy_ew_form { OI__SY_EW_SCALAR, OI__SY_EW_SMATH, OI__SY_EW_MATH, OI__SY_EW_LIBM } oi__sy_ew_form;
typedef struct oi__sy_ew_op {
    oi_op op;
    oi__sy_ew_domain domain;
    oi__sy_ew_form form;
    const char *c_fn, *glsl_fn, *c_f64_fn;
} oi__sy_ew_op;
/* schedule.c: op's row of OI__SY_EW_LIST, NULL if it has none */
const oi__sy_ew_op *oi__sy_ew_op_of(oi_op op);

/* lang.c: what differs between C-family languages */
typedef struct oi__sy_lang {
    const char *name;
    const char *index_type;   /* loop counters                       */
    const char *bool_type;    /* storage of bool                     */
    const char *(*type_of)(oi_dtype dtype); /* storage type, NULL if unsupported */
    const char *compute_float; /* the domain floats compute in        */
    const char *round_f32;     /* scalar.h's ROUND for f32 results    */
    const char *exp_fn;        /* exp in the compute domain           */
    const char *load_float;    /* before a float load: "(double)"; GLSL "" */
    const char *index_open, *index_close; /* x[i]; GLSL x(i): a macro over its buffer */
    bool functional_cast;      /* float(v) (GLSL) rather than (float)v */
    /* the function of an SMATH, MATH or LIBM op (OI__SY_EW_LIST's column
     * for the language), NULL for the other ops and where it has none */
    const char *(*ew_fn)(oi_op op, bool gelu_tanh);
} oi__sy_lang;
extern const oi__sy_lang oi__sy_lang_c;
extern const oi__sy_lang oi__sy_lang_glsl;

/* render.c: source text into b */
void oi__sy_render_kernels(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix);
void oi__sy_render_steps(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const char *prefix);
/* "x" -> a C expression for the first element of slot `slot` */
void oi__sy_render_slot_ptr(oi__buf *b, const oi__sy_schedule *s, int slot, const char *ctx);
/* a transpose's output dim -> input dim, and the input's strides */
void oi__sy_transpose_map(const oi__pnode *pn, const oi__slot *in, int64_t perm[OI_MAX_DIMS],
                          int64_t in_stride[OI_MAX_DIMS]);
/* "app.c:14: op add(x, a) >> t0" for comments */
void oi__sy_render_stmt(oi__buf *b, const oi__pnode *pn);
/* The element of `in` that element `index` (an expression) of `out` reads, `in` broadcast to `out`. */
void oi__sy_broadcast_index(oi__buf *b, const oi__slot *in, const oi__slot *out, const char *index);
/* Statement n of an elementwise chain or a matmul's epilogue at element
 * `index` (the GLSL target's kernels print their loops and call this). */
void oi__sy_render_ew(oi__buf *b, const oi__sy_schedule *s, const oi__sy_lang *lang, const oi__sy_kernel *k, int n,
                      const char *index, int depth);
/* A variable's name as the kernels print it (a reserved word gets '_'). */
void oi__sy_render_param_name(oi__buf *b, const oi__sy_schedule *s, const oi__slot *sl);
oi_status oi__sy_name_slots(oi__sy_schedule *s);
/* A double as a C/GLSL literal. */
void oi__sy_render_double(oi__buf *b, double v);
/* activation= of gemm, conv1d and conv2d (validation lets through "none", "relu", "gelu",
 * "gelu_tanh", "hard_swish"; NULL is none) applied to the f32 lvalue v in
 * one statement of lang, indented `depth` levels. */
void oi__sy_render_activation(oi__buf *b, const oi__sy_lang *lang, const char *act, const char *v, int depth);

/* The distinct stored slots a kernel touches, in order, and how. */
typedef struct oi__sy_param {
    int slot;
    int input; /* the first (node, input) it came from, for prefix indices */
    int node;
    bool written;
} oi__sy_param;
oi__sy_param *oi__sy_kernel_params(const oi__sy_schedule *s, const oi__sy_kernel *k); /* stb array */

/* The cooperative-matrix matmul's tile shape (vulkan/shaders/
 * matmul_coopmat_tiles.glsl's BM, BN, BK, WG_M, WG_N, STAGES): a workgroup of
 * wg_m x wg_n subgroups of 32 makes a bm x bn block, each subgroup a
 * (bm / wg_m) x (bn / wg_n) part of 16 x 16 fragments; K goes bk at a time
 * through `stages` shared-memory buffers. */
typedef struct oi__sy_coopmat_tiles {
    uint32_t bm, bn, bk, wg_m, wg_n, stages;
} oi__sy_coopmat_tiles;

/* The Vulkan target (emit_vulkan.c): what it reads of the device JSON. */
typedef struct oi__sy_gpu {
    char device_name[128];
    uint32_t workgroup;        /* invocations per workgroup of the row kernels */
    uint64_t max_shared_bytes; /* limits.max_shared_memory_bytes */
    uint32_t max_push_bytes;   /* limits.max_push_constants_bytes */
    bool cpu_device;           /* device.type "cpu" (lavapipe): matmuls with no shared tiles
                                  or barriers (vk_matmul_tiling.h) */
    uint32_t subgroup_size;    /* limits.subgroup_size: 0 unknown (32 assumed where it matters) */
    bool subgroup_ops, fp16, cooperative_matrix, fp16_storage;
    bool int64;                /* features.int64: i64 arithmetic in GLSL's int64_t
                                  (GL_EXT_shader_explicit_arithmetic_types_int64, shaderInt64);
                                  false without a JSON: i64 arithmetic is refused */
    bool coopmat_f16;          /* large matmuls on cooperative matrices (f16 x f16 -> f32):
                                  cooperative_matrix, f16 storage, 32-wide subgroups, and
                                  a tile shape (below) that the limits allow */
    oi__sy_coopmat_tiles cm;   /* that shape: preferences.coopmat_block/_subgroups, else from the limits */
} oi__sy_gpu;
/* Whether tile shape t fits a device: its workgroup in `invocations` and
 * its shared memory in `shared_bytes`; else *why says what does not. */
bool oi__sy_coopmat_fits(const oi__sy_coopmat_tiles *t, uint64_t invocations, uint64_t shared_bytes, const char **why);
/* Refuses, naming the DSL statement, what the first version of the Vulkan
 * target cannot emit on device g (run by oi_synthesize). */
oi_status oi__sy_vulkan_check(const oi__sy_schedule *s, const oi__sy_gpu *g);
struct oi_plan;
/* Where an emitter's files go: written into `dir` (NULL: nowhere) and their
 * names appended to `names` (space-separated; NULL: not listed), so that
 * oi_plan_files lists exactly what oi_plan_emit writes. */
typedef struct oi__sy_out {
    const char *dir;
    oi__buf *names;
} oi__sy_out;
oi_status oi__sy_emit_vulkan(const struct oi_plan *p, const oi__sy_out *out);

/* The result of oi_synthesize: the executor's plan, its schedule, and
 * what the emitted code checks of the model file. */
struct oi_plan {
    char *name;               /* the graph's name as a C identifier */
    oi__plan *plan;
    oi__sy_unrolled unrolled; /* what unroll.c added to the plan */
    oi__sy_schedule schedule;
    bool scheduled;
    const oi_model *model;    /* borrowed: alive until the plan is emitted */
    uint64_t model_size, model_header_bytes, fingerprint;
    bool embed_model;         /* the model's bytes in NAME_model.h (C target) */
    bool vulkan;              /* the Vulkan target: GLSL kernels + C host */
    oi__sy_gpu gpu;           /* its device (vulkan only)               */
};

/* emit.c's pieces the Vulkan emitter shares (the same API and driver). */
char *oi__sy_emit_header(const struct oi_plan *p);
void oi__sy_emit_model_map(oi__buf *b, const struct oi_plan *p);
void oi__sy_emit_inits(oi__buf *b, const struct oi_plan *p);
void oi__sy_emit_accessors(oi__buf *b, const struct oi_plan *p);
char *oi__sy_emit_driver(const struct oi_plan *p);
oi_status oi__sy_emit_mkdirs(const oi__sy_out *out);
oi_status oi__sy_emit_write(const oi__sy_out *out, const char *name, const char *ext, char *text);
char *oi__sy_emit_text(const char *const *lines);
char *oi__sy_emit_dot(const struct oi_plan *p);

#endif /* OPENINFER_SYNTH_INTERNAL_H */
