/* vulkan_parity.c - the parity harness: a case is an op, its attributes and
 * its inputs (dtype, shape, values, memory view); the CPU kernel is the
 * reference and every row of parity_targets runs the case beside it. The
 * op families' case lists (vulkan_parity_{shape,nn,conv}.c) are rows of
 * parity_families (test_vulkan.c, after them), run as test_vulkan's suites
 * of the same names. A new target (another backend, the synthesizer's
 * emitted kernels behind the backend interface) is one row of
 * parity_targets; a new family is one case list and one row.
 * Included by test_vulkan.c (uses its tensors, fills, attributes and
 * compare_outputs). */

/* ---- targets: what runs each case beside the CPU reference ---- */
typedef struct parity_target {
    const char *name;
    const oi__backend *backend;
    void **ctx;                          /* the backend's context, made by main() */
    uint64_t (*cpu_fallbacks)(void *ctx); /* ops it handed to the CPU so far */
} parity_target;

static uint64_t parity_vulkan_fallbacks(void *c) { return oi__vulkan_get_stats(c)->cpu_fallbacks; }

static const parity_target parity_targets[] = {
    {"vulkan", &oi__vulkan_backend, &ctx, parity_vulkan_fallbacks},
};
static const parity_target *target = &parity_targets[0];

/* A further check of an output pair (NULL: none), after compare_outputs
 * found them equal. */
typedef void (*output_check)(const char *name, oi_op op, const oi__tensor *cpu, const oi__tensor *gpu);

/* The second half of every case: the inputs are made; the op runs on the
 * CPU and, when the target takes it, on the target; the outputs are
 * compared and the inputs' guard bytes checked. `gpu_only`: the target must
 * not run the op on the CPU itself. Returns whether the target took the case. */
static bool run_prepared(const char *name, oi_op op, const oi__attr *attrs, size_t n_attrs, guarded *in, int n_in,
                         bool gpu_only, output_check more) {
    const oi__backend *be = target->backend;
    void *tctx = *target->ctx;
    const oi__tensor *inputs[8];
    oi__op_sig sigs[8], out_sig;
    for (int i = 0; i < n_in; i++) {
        inputs[i] = in[i].t;
        memset(&sigs[i], 0, sizeof sigs[i]);
        sigs[i].dtype = in[i].t->dtype;
        sigs[i].ndim = in[i].t->ndim;
        memcpy(sigs[i].shape, in[i].t->shape, sizeof sigs[i].shape);
    }
    bool supported = false;
    oi_status st = oi__op_infer(op, attrs, n_attrs, sigs, (size_t)n_in, OI_DTYPE_INVALID, &out_sig);
    CHECK_MSG(st == OI_OK, "%s: the case itself is invalid: %s", name, oi_last_error());
    if (st == OI_OK)
        supported = be->supports_op(tctx, op, attrs, n_attrs, sigs, (size_t)n_in, &out_sig);
    if (supported) {
        guarded gpu = make_tensor(out_sig.dtype, out_sig.ndim, out_sig.shape, pad_elems);
        guarded cpu = make_tensor(out_sig.dtype, out_sig.ndim, out_sig.shape, 0);
        CHECK_OK(oi__op_run_cpu(op, attrs, n_attrs, inputs, (size_t)n_in, cpu.t));
        uint64_t fallbacks = target->cpu_fallbacks(tctx);
        st = be->run_op(tctx, op, attrs, n_attrs, inputs, (size_t)n_in, gpu.t);
        CHECK_MSG(st == OI_OK, "%s: run_op: %s", name, oi_last_error());
        CHECK_MSG(!gpu_only || target->cpu_fallbacks(tctx) == fallbacks, "%s: ran on the CPU", name);
        if (st == OI_OK) {
            CHECK_OK(be->to_host(tctx, gpu.t->storage));
            if (compare_outputs(name, op, cpu.t, &gpu) && more)
                more(name, op, cpu.t, gpu.t);
        }
        free_tensor(&gpu);
        free_tensor(&cpu);
        cases_run++;
    } else {
        cases_unsupported++;
        if (getenv("TEST_VULKAN_DECLINES"))
            printf("declined: %s: %s\n", name, oi_last_error());
    }
    for (int i = 0; i < n_in; i++)
        CHECK_MSG(guards_intact(&in[i]), "%s: input %d guard bytes changed", name, i);
    return supported;
}

/* ---- inputs ---- */
typedef enum parity_view {
    PV_DENSE,
    PV_TRANS,  /* the last two dims swapped in memory */
    PV_STRIDED /* every other element of the last dim */
} parity_view;

typedef enum parity_fill {
    PF_RANDOM,    /* uniform in [-2, 2] (small integers for integer dtypes) */
    PF_SPECIALS,  /* as PF_RANDOM with NaN, inf, -0 mixed in */
    PF_POSITIVE,  /* uniform in [0.5, 2]: variances */
    PF_POSITIONS, /* integers in [0, 5000): rope positions, far enough for f32 angles to show */
    PF_TIES,      /* a few distinct values, many repeats (and NaN, -0 for floats) */
    PF_INT8,      /* any byte */
    PF_Q4_0,      /* rows of q4_0 blocks: sane f16 scales, random nibbles */
    PF_Q4_1,
    PF_Q8_0,      /* rows of q8_0 blocks: sane f16 scales, random signed bytes */
    PF_INDEX      /* valid positions along a dim of index_dim, negative ones for signed dtypes */
} parity_fill;

typedef struct parity_input {
    oi_dtype dtype;
    shape s;
    parity_fill fill;
    parity_view view;
    int64_t index_dim; /* PF_INDEX */
} parity_input;

static parity_input PI(oi_dtype dtype, shape s, parity_fill fill) {
    parity_input in;
    memset(&in, 0, sizeof in);
    in.dtype = dtype;
    in.s = s;
    in.fill = fill;
    return in;
}

static void parity_store_half(unsigned char *p, double v) {
    uint16_t h;
    oi__store_f64(OI_DTYPE_F16, &h, 0, v);
    p[0] = (unsigned char)(h & 0xFF);
    p[1] = (unsigned char)(h >> 8);
}

static void parity_fill_tensor(guarded *g, parity_fill fill, int64_t index_dim) {
    oi__tensor *t = g->t;
    int64_t n = oi__shape_numel(t->ndim, t->shape);
    void *data = t->storage->data;
    switch (fill) {
    case PF_RANDOM: fill_random(g, false, -2.0, 2.0); return;
    case PF_SPECIALS: fill_random(g, true, -2.0, 2.0); return;
    case PF_POSITIVE: fill_random(g, false, 0.5, 2.0); return;
    case PF_POSITIONS:
        for (int64_t i = 0; i < n; i++)
            oi__store_i64(t->dtype, data, t->offset + i, (int64_t)(rng_next() % 5000));
        return;
    case PF_INDEX: {
        int64_t lo = oi__dtype_is_signed(t->dtype) ? -index_dim : 0;
        for (int64_t i = 0; i < n; i++)
            oi__store_i64(t->dtype, data, t->offset + i, lo + (int64_t)(rng_next() % (uint64_t)(index_dim - lo)));
        return;
    }
    case PF_TIES:
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (int64_t)(rng_next() % 4);
            if (oi__dtype_is_float(t->dtype)) {
                double f = (double)v - 1.0;
                switch (rng_next() % 11) {
                case 0: f = NAN; break;
                case 1: f = -0.0; break;
                case 2: f = 0.0; break;
                default: break;
                }
                oi__store_f64(t->dtype, data, t->offset + i, f);
            } else {
                oi__store_i64(t->dtype, data, t->offset + i, oi__dtype_is_signed(t->dtype) ? v - 1 : v);
            }
        }
        return;
    case PF_INT8:
        for (int64_t i = 0; i < n; i++)
            oi__store_bits(t->dtype, data, t->offset + i, rng_next() & 0xFFu);
        return;
    case PF_Q4_0: case PF_Q4_1: case PF_Q8_0: {
        int64_t block = fill == PF_Q8_0 ? 34 : fill == PF_Q4_1 ? 20 : 18, row_bytes = t->shape[t->ndim - 1];
        int64_t rows = row_bytes ? n / row_bytes : 0; /* [..., row_bytes]: any rank */
        unsigned char *bytes = (unsigned char *)data + t->offset;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t b = 0; b < row_bytes / block; b++) {
                unsigned char *p = bytes + r * row_bytes + b * block;
                parity_store_half(p, rng_uniform(0.01, 0.2));
                if (fill == PF_Q4_1)
                    parity_store_half(p + 2, rng_uniform(-1.0, 1.0));
                for (int j = fill == PF_Q8_0 ? 2 : block - 16; j < block; j++)
                    p[j] = (unsigned char)(rng_next() & 0xFFu);
            }
        return;
    }
    }
}

/* The input's memory is allocated and filled, then seen through its view. */
static guarded parity_make_input(const parity_input *in) {
    shape s = in->s, mem = s;
    parity_view view = in->view;
    if ((s.ndim < 2 && view == PV_TRANS) || s.ndim < 1)
        view = PV_DENSE;
    if (view == PV_TRANS) {
        mem.d[s.ndim - 1] = s.d[s.ndim - 2];
        mem.d[s.ndim - 2] = s.d[s.ndim - 1];
    } else if (view == PV_STRIDED) {
        mem.d[s.ndim - 1] = 2 * s.d[s.ndim - 1];
    }
    guarded g = make_tensor(in->dtype, mem.ndim, mem.d, PAD_ELEMS);
    parity_fill_tensor(&g, in->fill, in->index_dim);
    oi__tensor *t = g.t;
    if (view == PV_TRANS) {
        int a = t->ndim - 2, b = t->ndim - 1;
        int64_t tmp = t->shape[a]; t->shape[a] = t->shape[b]; t->shape[b] = tmp;
        tmp = t->strides[a]; t->strides[a] = t->strides[b]; t->strides[b] = tmp;
    } else if (view == PV_STRIDED) {
        t->shape[t->ndim - 1] = s.d[s.ndim - 1];
        t->strides[t->ndim - 1] = 2;
    }
    return g;
}

/* ---- families: a case list each, with what its cases check beyond compare_outputs ---- */
typedef struct parity_family {
    const char *name;
    void (*cases)(void); /* calls parity_run for each case */
    bool gpu_only;       /* the target must not hand an op to the CPU */
    output_check more;   /* NULL: compare_outputs alone */
} parity_family;

static const parity_family *parity_now; /* the family whose cases run */

/* One case: "op(f32[3,5,7]T, i64[6]S attrs...)" on the CPU and the target;
 * returns whether the target took it. */
static bool parity_run(oi_op op, const attrs *at, int n_in, const parity_input *ins) {
    char name[320];
    int len = snprintf(name, sizeof name, "%s(", oi_op_name(op));
    for (int i = 0; i < n_in && len < 250; i++) {
        len += snprintf(name + len, sizeof name - (size_t)len, "%s%s[", i ? ", " : "", oi_dtype_name(ins[i].dtype));
        for (int d = 0; d < ins[i].s.ndim; d++)
            len += snprintf(name + len, sizeof name - (size_t)len, "%s%lld", d ? "," : "", (long long)ins[i].s.d[d]);
        const char *mark = ins[i].view == PV_TRANS ? "T" : ins[i].view == PV_STRIDED ? "S" : "";
        len += snprintf(name + len, sizeof name - (size_t)len, "]%s", mark);
    }
    for (size_t i = 0; i < at->n && len < 300; i++)
        len += snprintf(name + len, sizeof name - (size_t)len, " %s", at->a[i].name);
    snprintf(name + len, sizeof name - (size_t)len, ")");
    guarded in[8];
    for (int i = 0; i < n_in; i++)
        in[i] = parity_make_input(&ins[i]);
    bool supported = run_prepared(name, op, at->a, at->n, in, n_in, parity_now->gpu_only, parity_now->more);
    for (int i = 0; i < n_in; i++)
        free_tensor(&in[i]);
    return supported;
}

static void parity_run_family(const parity_family *f) {
    clock_t t0 = clock();
    int before = cases_run;
    parity_now = f;
    f->cases();
    printf("test_vulkan: %s family on %s: %d cases, %.1f s\n", f->name, target->name, cases_run - before,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
}
