/* vulkan_parity_shape.c - the cases of the shape family (vulkan/vk_ops_shape.c):
 * every op x dtype x shape, run by the parity harness (vulkan_parity.c)
 * on each target vs the CPU reference. Inputs may be contiguous,
 * transposed (the last two dims swapped in memory) or strided (every other
 * element of the last dim), all at an odd element offset; gather's indices
 * are valid positions, negative ones included (the CPU rejects the others). */

/* (64-bit data moves as word pairs on every device; where's needs 64-bit
 * arithmetic, oi__vulkan_has_wide: test_shape_where_pad skips it without.) */
static const oi_dtype DATA_TYPES[] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16, OI_DTYPE_I8,  OI_DTYPE_I16,
                                      OI_DTYPE_I32, OI_DTYPE_U8,  OI_DTYPE_U16, OI_DTYPE_U32, OI_DTYPE_BOOL,
                                      OI_DTYPE_I64, OI_DTYPE_U64, OI_DTYPE_F64};

/* One case: inputs of these dtypes and shapes, seen through views (one per
 * input; NULL: all dense), random values with specials (not for gemm: its
 * sums of ~60 products would almost all meet a NaN or inf), gather's
 * indices valid positions along a dim of index_dim. */
static bool shape_case(oi_op op, const attrs *at, int n_in, const oi_dtype *dtypes, const shape *shapes,
                       const int *views, int64_t index_dim) {
    parity_input ins[8];
    for (int i = 0; i < n_in; i++) {
        bool is_index = op == OI_OP_gather && i == 1;
        ins[i] = PI(dtypes[i], shapes[i], is_index ? PF_INDEX : op != OI_OP_gemm ? PF_SPECIALS : PF_RANDOM);
        ins[i].view = views ? (parity_view)views[i] : PV_DENSE;
        ins[i].index_dim = index_dim;
    }
    return parity_run(op, at, n_in, ins);
}

/* The op over every dtype of `types` (all inputs of one dtype but where's
 * bool condition and gather's indices), each shape set in each view. */
static void shape_each(oi_op op, const attrs *at, const oi_dtype *types, int n_types, int n_in, const shape *shapes,
                       const int *views) {
    for (int t = 0; t < n_types; t++) {
        oi_dtype dts[8];
        for (int i = 0; i < n_in; i++)
            dts[i] = types[t];
        if (op == OI_OP_where)
            dts[0] = OI_DTYPE_BOOL;
        bool ok = shape_case(op, at, n_in, dts, shapes, views, 0);
        CHECK_MSG(ok, "%s on %s should run on the GPU: %s", oi_op_name(op), oi_dtype_name(types[t]), oi_last_error());
    }
}

static void test_shape_layouts(void) {
    const int dense[] = {PV_DENSE, PV_DENSE, PV_DENSE}, trans[] = {PV_TRANS, PV_TRANS, PV_TRANS},
              strided[] = {PV_STRIDED, PV_STRIDED, PV_STRIDED};
    const int *views[] = {dense, trans, strided};
    shape s3 = S(3, 3, 5, 7, 0), s4 = S(4, 2, 3, 4, 5);
    for (int v = 0; v < 3; v++) {
        attrs re = no_attrs();
        const int64_t re_shape[] = {5, -1};
        attr_axes(&re, "shape", 2, re_shape);
        shape_each(OI_OP_reshape, &re, DATA_TYPES, COUNT(DATA_TYPES), 1, &s3, views[v]);
        free_attrs(&re);
        attrs tr = no_attrs();
        const int64_t perm[] = {0, 2, 3, 1};
        attr_axes(&tr, "perm", 4, perm);
        shape_each(OI_OP_transpose, &tr, DATA_TYPES, COUNT(DATA_TYPES), 1, &s4, views[v]);
        free_attrs(&tr);
        attrs sl = no_attrs(); /* a negative step, ends past the dim, a negative start */
        const int64_t starts[] = {1, -2, 0}, ends[] = {5, 0, 100}, axes[] = {0, 2, 1}, steps[] = {2, -3, 2};
        attr_axes(&sl, "starts", 3, starts);
        attr_axes(&sl, "ends", 3, ends);
        attr_axes(&sl, "axes", 3, axes);
        attr_axes(&sl, "steps", 3, steps);
        shape big = S(3, 6, 9, 11, 0);
        shape_each(OI_OP_slice, &sl, DATA_TYPES, COUNT(DATA_TYPES), 1, &big, views[v]);
        free_attrs(&sl);
        attrs sp = no_attrs();
        attr_int(&sp, "axis", -1);
        attr_int(&sp, "num", 3);
        attr_int(&sp, "index", 2);
        shape_each(OI_OP_split, &sp, DATA_TYPES, COUNT(DATA_TYPES), 1, &s3, views[v]);
    }
    attrs sp = no_attrs();
    const int64_t sizes[] = {1, 3, 1};
    attr_int(&sp, "axis", 1);
    attr_axes(&sp, "sizes", 3, sizes);
    attr_int(&sp, "index", 1);
    shape_each(OI_OP_split, &sp, DATA_TYPES, COUNT(DATA_TYPES), 1, &s3, strided);
    free_attrs(&sp);
    shape one = S(3, 3, 1, 5, 0), flat = S(2, 3, 5, 0, 0);
    attrs sq = no_attrs();
    const int64_t sq_axes[] = {1};
    attr_axes(&sq, "axes", 1, sq_axes);
    shape_each(OI_OP_squeeze, &sq, DATA_TYPES, COUNT(DATA_TYPES), 1, &one, strided);
    free_attrs(&sq);
    attrs un = no_attrs();
    const int64_t un_axes[] = {0, 3};
    attr_axes(&un, "axes", 2, un_axes);
    shape_each(OI_OP_unsqueeze, &un, DATA_TYPES, COUNT(DATA_TYPES), 1, &flat, trans);
    free_attrs(&un);
    attrs ex = no_attrs();
    const int64_t ex_shape[] = {2, 3, 4, 5};
    attr_axes(&ex, "shape", 4, ex_shape);
    shape col = S(3, 3, 1, 5, 0);
    shape_each(OI_OP_expand, &ex, DATA_TYPES, COUNT(DATA_TYPES), 1, &col, dense);
    shape_each(OI_OP_expand, &ex, DATA_TYPES, 1, 1, &col, strided);
    free_attrs(&ex);
    attrs ti = no_attrs();
    const int64_t reps[] = {2, 3};
    attr_axes(&ti, "repeats", 2, reps);
    shape_each(OI_OP_tile, &ti, DATA_TYPES, COUNT(DATA_TYPES), 1, &flat, trans);
    free_attrs(&ti);
    attrs ti4 = no_attrs();
    const int64_t reps4[] = {1, 3, 2, 2};
    attr_axes(&ti4, "repeats", 4, reps4);
    shape t4 = S(4, 2, 1, 3, 5);
    shape_each(OI_OP_tile, &ti4, DATA_TYPES, COUNT(DATA_TYPES), 1, &t4, dense);
    free_attrs(&ti4);
}

static void test_shape_concat(void) {
    const int mixed[] = {PV_DENSE, PV_TRANS, PV_STRIDED};
    const shape mid[] = {S(3, 2, 3, 5, 0), S(3, 2, 4, 5, 0), S(3, 2, 1, 5, 0)};
    const shape last[] = {S(3, 2, 3, 5, 0), S(3, 2, 3, 1, 0), S(3, 2, 3, 7, 0)};
    const shape first[] = {S(2, 3, 7, 0, 0), S(2, 1, 7, 0, 0), S(2, 0, 7, 0, 0)};
    const int64_t axes[] = {1, -1, 0};
    const shape *sets[] = {mid, last, first};
    for (int s = 0; s < 3; s++) {
        attrs at = no_attrs();
        attr_int(&at, "axis", axes[s]);
        shape_each(OI_OP_concat, &at, DATA_TYPES, COUNT(DATA_TYPES), 3, sets[s], NULL);
        shape_each(OI_OP_concat, &at, DATA_TYPES, COUNT(DATA_TYPES), 3, sets[s], mixed);
    }
    /* eight inputs of odd widths: one stage each */
    shape eight[8];
    for (int i = 0; i < 8; i++)
        eight[i] = S(2, 3, 1 + i, 0, 0);
    attrs at = no_attrs();
    attr_int(&at, "axis", 1);
    shape_each(OI_OP_concat, &at, DATA_TYPES, COUNT(DATA_TYPES), 8, eight, NULL);
}

static void test_shape_gather(void) {
    const oi_dtype index_types[] = {OI_DTYPE_I8, OI_DTYPE_I16, OI_DTYPE_I32, OI_DTYPE_I64,
                                    OI_DTYPE_U8, OI_DTYPE_U16, OI_DTYPE_U32, OI_DTYPE_U64};
    const int views[] = {PV_TRANS, PV_STRIDED};
    for (int axis = -1; axis < 2; axis++) {
        attrs at = no_attrs();
        attr_int(&at, "axis", axis);
        const shape sets[] = {S(2, 5, 7, 0, 0), S(2, 3, 4, 0, 0)};
        int64_t dim = axis == 0 ? 5 : 7;
        for (int t = 0; t < COUNT(DATA_TYPES); t++) {
            oi_dtype dts[2] = {DATA_TYPES[t], OI_DTYPE_I64};
            CHECK(shape_case(OI_OP_gather, &at, 2, dts, sets, NULL, dim));
            dts[1] = OI_DTYPE_I32;
            CHECK(shape_case(OI_OP_gather, &at, 2, dts, sets, views, dim));
        }
        for (int t = 0; t < COUNT(index_types); t++) {
            oi_dtype dts[2] = {OI_DTYPE_F32, index_types[t]};
            CHECK_MSG(shape_case(OI_OP_gather, &at, 2, dts, sets, NULL, dim), "gather with %s indices",
                      oi_dtype_name(index_types[t]));
        }
    }
    /* an embedding lookup: rows of a large table, rank-4 data, scalar-ish indices */
    attrs at = no_attrs();
    const shape table[] = {S(2, 1000, 67, 0, 0), S(2, 9, 5, 0, 0)};
    const oi_dtype f16_i64[] = {OI_DTYPE_F16, OI_DTYPE_I64};
    CHECK(shape_case(OI_OP_gather, &at, 2, f16_i64, table, NULL, 1000));
    attrs at2 = no_attrs();
    attr_int(&at2, "axis", 2);
    const shape r4[] = {S(4, 2, 3, 6, 5), S(1, 4, 0, 0, 0)};
    const oi_dtype u8_i32[] = {OI_DTYPE_U8, OI_DTYPE_I32};
    CHECK(shape_case(OI_OP_gather, &at2, 2, u8_i32, r4, NULL, 6));
    const shape scalar[] = {S(4, 2, 3, 6, 5), S(0, 0, 0, 0, 0)}; /* a rank-0 index drops the axis */
    CHECK(shape_case(OI_OP_gather, &at2, 2, u8_i32, scalar, NULL, 6));
}

static void test_shape_where_pad(void) {
    attrs none = no_attrs();
    const shape bcast[] = {S(3, 3, 1, 5, 0), S(2, 4, 5, 0, 0), S(3, 3, 4, 1, 0)};
    const shape same[] = {S(4, 2, 3, 4, 5), S(4, 2, 3, 4, 5), S(4, 2, 3, 4, 5)};
    const int views[] = {PV_STRIDED, PV_TRANS, PV_DENSE};
    int n_where = oi__vulkan_has_wide(ctx) ? COUNT(DATA_TYPES) : COUNT(DATA_TYPES) - 3;
    shape_each(OI_OP_where, &none, DATA_TYPES, n_where, 3, bcast, NULL);
    shape_each(OI_OP_where, &none, DATA_TYPES, n_where, 3, same, views);

    const char *modes[] = {"constant", "reflect", "edge", "wrap"};
    shape s = S(3, 3, 5, 7, 0);
    const int trans[] = {PV_TRANS};
    for (int m = 0; m < 4; m++) {
        attrs at = no_attrs();
        const int64_t pads[] = {1, 0, 2, 2, 0, -3}; /* the last axis gains 2 before and loses 3 at the end */
        attr_axes(&at, "pads", 6, pads);
        attr_string(&at, "mode", modes[m]);
        attr_float(&at, "value", 1.5);
        shape_each(OI_OP_pad, &at, FLOATS, COUNT(FLOATS), 1, &s, NULL);
        shape_each(OI_OP_pad, &at, FLOATS, COUNT(FLOATS), 1, &s, trans);
        at.a[2].kind = OI__ATTR_INT; /* integer data takes an integer value */
        at.a[2].i = -3;
        shape_each(OI_OP_pad, &at, DATA_TYPES + 3, 3, 1, &s, NULL); /* signed */
        shape_each(OI_OP_pad, &at, DATA_TYPES + 10, 1, 1, &s, NULL); /* i64: both words of the fill */
        at.a[2].i = 200;
        shape_each(OI_OP_pad, &at, DATA_TYPES + 6, 3, 1, &s, NULL); /* unsigned */
        at.a[2].i = 1;
        shape_each(OI_OP_pad, &at, DATA_TYPES + 9, 1, 1, &s, NULL);
        free_attrs(&at);
        attrs ax = no_attrs(); /* pads larger than the dim (reflect and wrap go around more than once) */
        const int64_t axes[] = {-1, 1}, pads2[] = {9, 1, 12, 0};
        attr_axes(&ax, "pads", 4, pads2);
        attr_axes(&ax, "axes", 2, axes);
        attr_string(&ax, "mode", modes[m]);
        attr_int(&ax, "value", 7);
        shape s4 = S(4, 2, 3, 2, 6);
        shape_each(OI_OP_pad, &ax, DATA_TYPES, COUNT(DATA_TYPES), 1, &s4, NULL);
        free_attrs(&ax);
    }
}

static void test_shape_gemm_pool(void) {
    const shape with_c[] = {S(2, 17, 33, 0, 0), S(2, 33, 29, 0, 0), S(1, 29, 0, 0, 0)};
    const shape col_c[] = {S(2, 33, 17, 0, 0), S(2, 29, 33, 0, 0), S(2, 17, 1, 0, 0)};
    const shape full_c[] = {S(2, 17, 33, 0, 0), S(2, 29, 33, 0, 0), S(2, 17, 29, 0, 0)};
    const shape big[] = {S(2, 260, 40, 0, 0), S(2, 40, 300, 0, 0), S(2, 1, 300, 0, 0)};
    /* one output block and a long K: split along K into 21 slices, the last one shorter */
    const shape split[] = {S(2, 37, 1000, 0, 0), S(2, 1000, 45, 0, 0), S(1, 45, 0, 0, 0)};
    const shape split_t[] = {S(2, 1000, 37, 0, 0), S(2, 45, 1000, 0, 0), S(1, 45, 0, 0, 0)};
    const int views[] = {PV_TRANS, PV_STRIDED, PV_DENSE};
    for (int t = 0; t < COUNT(FLOATS); t++) {
        oi_dtype dts[3] = {FLOATS[t], FLOATS[t], FLOATS[t]};
        attrs plain = no_attrs();
        CHECK(shape_case(OI_OP_gemm, &plain, 3, dts, with_c, NULL, 0));
        CHECK(shape_case(OI_OP_gemm, &plain, 2, dts, with_c, views, 0));
        attrs ab = no_attrs();
        attr_bool(&ab, "trans_a", true);
        attr_bool(&ab, "trans_b", true);
        attr_float(&ab, "alpha", 0.5);
        attr_float(&ab, "beta", -2.0);
        CHECK(shape_case(OI_OP_gemm, &ab, 3, dts, col_c, NULL, 0));
        attrs tb = no_attrs();
        attr_bool(&tb, "trans_b", true);
        attr_float(&tb, "beta", 0.0);
        CHECK(shape_case(OI_OP_gemm, &tb, 3, dts, full_c, views, 0));
        attr_float(&tb, "alpha", 3.0);
        tb.a[1].f = 0.25;
        CHECK(shape_case(OI_OP_gemm, &tb, 3, dts, full_c, NULL, 0));
        CHECK(shape_case(OI_OP_gemm, &plain, 3, dts, big, NULL, 0));
        CHECK(shape_case(OI_OP_gemm, &plain, 3, dts, split, NULL, 0));
        CHECK(shape_case(OI_OP_gemm, &ab, 3, dts, split_t, NULL, 0));
        const char *acts[] = {"relu", "gelu", "gelu_tanh", "hard_swish"}; /* in the epilogue, as the ops compute them */
        for (int a = 0; a < COUNT(acts); a++) {
            attrs act = no_attrs();
            attr_string(&act, "activation", acts[a]);
            CHECK_MSG(shape_case(OI_OP_gemm, &act, 3, dts, with_c, NULL, 0), "gemm %s activation=%s",
                      oi_dtype_name(FLOATS[t]), acts[a]);
            CHECK_MSG(shape_case(OI_OP_gemm, &act, 3, dts, split, NULL, 0), "gemm %s activation=%s split along K",
                      oi_dtype_name(FLOATS[t]), acts[a]);
        }
    }
    attrs none = no_attrs();
    const shape pools[] = {S(4, 2, 3, 5, 7), S(3, 2, 5, 4099, 0), S(4, 3, 4, 64, 65)};
    const int trans[] = {PV_TRANS};
    for (int p = 0; p < 3; p++) {
        for (int t = 0; t < COUNT(FLOATS); t++) {
            CHECK(shape_case(OI_OP_global_avg_pool, &none, 1, &FLOATS[t], &pools[p], NULL, 0));
            CHECK(shape_case(OI_OP_global_avg_pool, &none, 1, &FLOATS[t], &pools[p], trans, 0));
        }
    }
}

/* What stays on the CPU: 64-bit data of the ops that compute (gemm,
 * global_avg_pool). */
static void test_shape_declines(void) {
    attrs none = no_attrs();
    const oi_dtype f64[] = {OI_DTYPE_F64, OI_DTYPE_F64};
    const shape image[] = {S(4, 1, 2, 3, 3)};
    CHECK(!shape_case(OI_OP_global_avg_pool, &none, 1, f64, image, NULL, 0));
    const shape mm[] = {S(2, 3, 4, 0, 0), S(2, 4, 5, 0, 0)};
    CHECK(!shape_case(OI_OP_gemm, &none, 2, f64, mm, NULL, 0));
}

/* One step of a chain on the GPU backend or the CPU reference. */
static oi_status chain_run(bool gpu, oi_op op, const attrs *at, const oi__tensor *const *in, size_t n,
                           oi__tensor *out) {
    return gpu ? vk->run_op(ctx, op, at->a, at->n, in, n, out) : oi__op_run_cpu(op, at->a, at->n, in, n, out);
}

/* A chain that stays on the device: gather -> transpose -> concat -> gemm,
 * then a transpose written over its own input (run_op writes it aside),
 * all recorded into one submission; the CPU runs the same sequence. */
static void test_shape_chain(void) {
    const oi__vulkan_stats *st = oi__vulkan_get_stats(ctx);
    const int64_t table_shape[2] = {10, 6}, idx_shape[1] = {6}, t_shape[2] = {6, 6}, c_shape[2] = {6, 12},
                  w_shape[2] = {12, 5}, y_shape[2] = {6, 5}, bias_shape[1] = {5};
    oi__tensor *table = oi__tensor_new(OI_DTYPE_F32, 2, table_shape), *idx = oi__tensor_new(OI_DTYPE_I64, 1, idx_shape);
    oi__tensor *w = oi__tensor_new(OI_DTYPE_F32, 2, w_shape), *bias = oi__tensor_new(OI_DTYPE_F32, 1, bias_shape);
    for (int i = 0; i < 60; i++) {
        ((float *)table->storage->data)[i] = (float)rng_uniform(-2, 2);
        ((float *)w->storage->data)[i] = (float)rng_uniform(-2, 2);
    }
    for (int i = 0; i < 5; i++)
        ((float *)bias->storage->data)[i] = (float)rng_uniform(-2, 2);
    const int64_t rows[6] = {3, -1, 0, 9, 3, -10};
    memcpy(idx->storage->data, rows, sizeof rows);
    oi__tensor *g[2], *t[2], *c[2], *y[2]; /* [0] GPU, [1] CPU */
    for (int k = 0; k < 2; k++) {
        g[k] = oi__tensor_new(OI_DTYPE_F32, 2, t_shape);
        t[k] = oi__tensor_new(OI_DTYPE_F32, 2, t_shape);
        c[k] = oi__tensor_new(OI_DTYPE_F32, 2, c_shape);
        y[k] = oi__tensor_new(OI_DTYPE_F32, 2, y_shape);
    }
    attrs none = no_attrs(), axis1 = no_attrs();
    attr_int(&axis1, "axis", 1);
    uint64_t submissions = st->submissions, fallbacks = st->cpu_fallbacks;
    for (int k = 0; k < 2; k++) {
        bool gpu = k == 0;
        const oi__tensor *ga[2] = {table, idx}, *ta[1] = {g[k]}, *ca[2] = {t[k], g[k]}, *ya[3] = {c[k], w, bias};
        const oi__tensor *back[1] = {t[k]};
        CHECK_OK(chain_run(gpu, OI_OP_gather, &none, ga, 2, g[k]));
        CHECK_OK(chain_run(gpu, OI_OP_transpose, &none, ta, 1, t[k]));
        CHECK_OK(chain_run(gpu, OI_OP_concat, &axis1, ca, 2, c[k]));
        CHECK_OK(chain_run(gpu, OI_OP_gemm, &none, ya, 3, y[k]));
        CHECK_OK(chain_run(gpu, OI_OP_transpose, &none, back, 1, t[k])); /* over itself */
        if (gpu) {
            CHECK_EQ_INT(st->submissions, submissions); /* recorded, not yet submitted */
            CHECK_EQ_INT(st->cpu_fallbacks, fallbacks);
            CHECK_OK(vk->flush(ctx));
            CHECK_OK(vk->to_host(ctx, y[k]->storage));
            CHECK_OK(vk->to_host(ctx, t[k]->storage));
        }
    }
    for (int i = 0; i < 30; i++) {
        float a = ((float *)y[0]->storage->data)[i], b = ((float *)y[1]->storage->data)[i];
        CHECK_MSG(fabsf(a - b) <= 1e-5f * (1 + fabsf(b)), "chain: y[%d] gpu %g, cpu %g", i, (double)a, (double)b);
    }
    CHECK_MSG(memcmp(t[0]->storage->data, t[1]->storage->data, 36 * sizeof(float)) == 0,
              "chain: the transpose over its own input differs from the CPU's");
    for (int k = 0; k < 2; k++) {
        oi__tensor_free(g[k]);
        oi__tensor_free(t[k]);
        oi__tensor_free(c[k]);
        oi__tensor_free(y[k]);
    }
    oi__tensor_free(table);
    oi__tensor_free(idx);
    oi__tensor_free(w);
    oi__tensor_free(bias);
    free_attrs(&axis1);
}

static void shape_cases(void) {
    test_shape_layouts();
    test_shape_concat();
    test_shape_gather();
    test_shape_where_pad();
    test_shape_gemm_pool();
    test_shape_declines();
    test_shape_chain();
}
