/* vulkan_parity_nn.c - the cases of the nn family (vulkan/vk_ops_nn.c):
 * every op x dtype x shape, run by the parity harness (vulkan_parity.c)
 * on each target vs the CPU reference. The inputs are not all plain random
 * data (variances, positions, quantized blocks, repeated values: the
 * harness's fills); top_k's and dequantize's values must match bit for
 * bit and rope's f32 angles closely (nn_more_checks), and no case may run
 * on the CPU. */

/* Bits equal, element by element (top_k copies values exactly; dequantize
 * rounds each product once, as the CPU does). */
static void nn_same_bits(const char *name, const oi__tensor *cpu, const oi__tensor *gpu) {
    int64_t n = oi__shape_numel(cpu->ndim, cpu->shape);
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = oi__load_bits(cpu->dtype, cpu->storage->data, cpu->offset + i);
        uint64_t b = oi__load_bits(gpu->dtype, gpu->storage->data, gpu->offset + i);
        if (a != b) {
            CHECK_MSG(a == b, "%s: element %lld: gpu bits 0x%llx, cpu 0x%llx", name, (long long)i,
                      (unsigned long long)b, (unsigned long long)a);
            return;
        }
    }
}

/* NMSE over the elements both sides have finite (compare_outputs checks the others). */
static double nn_nmse(const oi__tensor *cpu, const oi__tensor *gpu) {
    int64_t n = oi__shape_numel(cpu->ndim, cpu->shape);
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = oi__load_f64(cpu->dtype, cpu->storage->data, cpu->offset + i);
        double b = oi__load_f64(gpu->dtype, gpu->storage->data, gpu->offset + i);
        if (isfinite(a) && isfinite(b)) {
            err += (a - b) * (a - b);
            ref += a * a;
        }
    }
    return ref > 0 ? err / ref : err;
}

/* rope's f32 angles are float-floats: as close to the CPU's double angles
 * as f32 results can be (a plain f32 angle p * freq, off by p * 2^-24,
 * gives ~1e-9 at positions in the thousands). */
#define NN_ROPE_F32_NMSE 1e-12

/* Beyond compare_outputs: top_k's and dequantize's values bit for bit,
 * and rope's f32 angles held to NN_ROPE_F32_NMSE. */
static void nn_more_checks(const char *name, oi_op op, const oi__tensor *cpu, const oi__tensor *gpu) {
    if (op == OI_OP_top_k || op == OI_OP_dequantize)
        nn_same_bits(name, cpu, gpu);
    if (op == OI_OP_rope && cpu->dtype == OI_DTYPE_F32)
        CHECK_MSG(nn_nmse(cpu, gpu) <= NN_ROPE_F32_NMSE, "%s: NMSE %.3g > %.3g", name, nn_nmse(cpu, gpu), NN_ROPE_F32_NMSE);
}

/* A case every float dtype must run on the GPU. */
#define NN_MUST(op, at, n, ins) CHECK_MSG(parity_run(op, at, n, ins), "%s should run on the GPU: %s", oi_op_name(op), oi_last_error())

static void test_nn_norms(void) {
    attrs none = no_attrs(), eps = no_attrs(), g3 = no_attrs(), g2 = no_attrs(), g4 = no_attrs();
    attr_float(&eps, "epsilon", 1e-3);
    attr_int(&g3, "num_groups", 3);
    attr_int(&g2, "num_groups", 2);
    attr_float(&g2, "epsilon", 1e-2);
    attr_int(&g4, "num_groups", 4);
    const shape xs[] = {S(4, 2, 3, 5, 7), S(2, 4, 6, 0, 0), S(3, 2, 4, 33, 0)};
    const int64_t cs[] = {3, 6, 4};
    for (int t = 0; t < COUNT(FLOATS); t++) {
        oi_dtype f = FLOATS[t];
        for (int s = 0; s < COUNT(xs); s++) {
            shape c = S(1, cs[s], 0, 0, 0);
            parity_input bn[5] = {PI(f, xs[s], s == 1 ? PF_SPECIALS : PF_RANDOM), PI(f, c, PF_RANDOM), PI(f, c, PF_RANDOM),
                              PI(f, c, PF_RANDOM), PI(f, c, PF_POSITIVE)};
            bn[0].view = s == 2 ? PV_TRANS : PV_DENSE; /* a strided x */
            NN_MUST(OI_OP_batch_norm, s ? &eps : &none, 5, bn);
        }
        /* group_norm: groups of several channels, of one channel, a long reduction, a transposed x */
        parity_input gn[3] = {PI(f, S(4, 2, 6, 5, 7), PF_RANDOM), PI(f, S(1, 6, 0, 0, 0), PF_RANDOM),
                          PI(f, S(1, 6, 0, 0, 0), PF_RANDOM)};
        NN_MUST(OI_OP_group_norm, &g3, 3, gn);
        gn[0].s = S(3, 3, 4, 17, 0);
        gn[1].s = gn[2].s = S(1, 4, 0, 0, 0);
        NN_MUST(OI_OP_group_norm, &g4, 3, gn);
        gn[0].view = PV_TRANS;
        NN_MUST(OI_OP_group_norm, &g2, 3, gn);
        gn[0].view = PV_DENSE;
        gn[0].s = S(4, 1, 4, 32, 40);
        NN_MUST(OI_OP_group_norm, &g2, 3, gn);
    }
    free_attrs(&g2);
}

static void test_nn_rope(void) {
    attrs plain = no_attrs(), inter = no_attrs(), partial = no_attrs(), bshd = no_attrs();
    attr_bool(&inter, "interleaved", true);
    attr_float(&inter, "theta", 500000.0);
    attr_int(&partial, "rotary_dim", 8);
    attr_bool(&partial, "interleaved", false);
    attr_int(&bshd, "seq_axis", 1);
    attr_bool(&bshd, "interleaved", true);
    attr_int(&bshd, "rotary_dim", 12);
    for (int t = 0; t < COUNT(FLOATS); t++) {
        oi_dtype f = FLOATS[t];
        parity_input r[2] = {PI(f, S(4, 2, 3, 7, 16), PF_RANDOM), PI(OI_DTYPE_I32, S(1, 7, 0, 0, 0), PF_POSITIONS)};
        NN_MUST(OI_OP_rope, &plain, 2, r);
        NN_MUST(OI_OP_rope, &inter, 2, r);
        NN_MUST(OI_OP_rope, &partial, 2, r);
        r[1].dtype = OI_DTYPE_I64;
        r[0].s = S(3, 9, 5, 64, 0); /* [S, D] with a leading dim, i64 positions */
        r[1].s = S(1, 5, 0, 0, 0);
        NN_MUST(OI_OP_rope, &plain, 2, r);
        /* [B, S, H, D] with per-batch positions */
        parity_input b[2] = {PI(f, S(4, 2, 6, 3, 16), PF_SPECIALS), PI(OI_DTYPE_I32, S(2, 2, 6, 0, 0), PF_POSITIONS)};
        NN_MUST(OI_OP_rope, &bshd, 2, b);
        /* a transposed x view: [.., S, D] laid out as [.., D, S] */
        parity_input tr[2] = {PI(f, S(3, 2, 7, 10, 0), PF_RANDOM), PI(OI_DTYPE_I64, S(1, 7, 0, 0, 0), PF_POSITIONS)};
        tr[0].view = PV_TRANS;
        NN_MUST(OI_OP_rope, &inter, 2, tr);
    }
}

static void test_nn_attention(void) {
    attrs none = no_attrs(), causal = no_attrs(), scaled = no_attrs();
    attr_bool(&causal, "causal", true);
    attr_float(&scaled, "scale", 0.3);
    attr_bool(&scaled, "causal", true);
    for (int t = 0; t < COUNT(FLOATS); t++) {
        oi_dtype f = FLOATS[t];
        /* grouped-query heads: 4 query heads over 2 kv heads */
        parity_input a[4] = {PI(f, S(4, 2, 4, 5, 16), PF_RANDOM), PI(f, S(4, 2, 2, 9, 16), PF_RANDOM),
                         PI(f, S(4, 2, 2, 9, 12), PF_RANDOM), PI(f, S(2, 5, 9, 0, 0), PF_RANDOM)};
        NN_MUST(OI_OP_attention, &none, 3, a);
        NN_MUST(OI_OP_attention, &causal, 3, a);
        NN_MUST(OI_OP_attention, &none, 4, a); /* an added mask, broadcast over batch and heads */
        a[3] = PI(OI_DTYPE_BOOL, S(4, 2, 1, 5, 9), PF_RANDOM); /* true keeps; rows that keep nothing give NaN */
        NN_MUST(OI_OP_attention, &scaled, 4, a);
        a[1].view = PV_TRANS; /* k laid out as [B, H, D, T] */
        a[0].fill = PF_SPECIALS;
        NN_MUST(OI_OP_attention, &causal, 3, a);
        /* more keys than one chunk (256), a short query block at the end of the cache */
        parity_input l[3] = {PI(f, S(4, 1, 2, 3, 64), PF_RANDOM), PI(f, S(4, 1, 2, 600, 64), PF_RANDOM),
                         PI(f, S(4, 1, 2, 600, 40), PF_RANDOM)};
        NN_MUST(OI_OP_attention, &causal, 3, l);
        NN_MUST(OI_OP_attention, &none, 3, l);
        /* more queries than keys, causal: the first queries see no key (NaN rows) */
        parity_input n[3] = {PI(f, S(4, 1, 2, 9, 8), PF_RANDOM), PI(f, S(4, 1, 2, 5, 8), PF_RANDOM),
                         PI(f, S(4, 1, 2, 5, 8), PF_RANDOM)};
        NN_MUST(OI_OP_attention, &causal, 3, n);
        /* value rows wider than the workgroup: three channels per invocation */
        parity_input w[3] = {PI(f, S(4, 1, 2, 3, 16), PF_RANDOM), PI(f, S(4, 1, 2, 70, 16), PF_RANDOM),
                         PI(f, S(4, 1, 2, 70, 130), PF_RANDOM)};
        NN_MUST(OI_OP_attention, &none, 3, w);
    }
    /* head sizes past the shader's shared row: the CPU's */
    parity_input big[3] = {PI(OI_DTYPE_F32, S(4, 1, 1, 2, 300), PF_RANDOM), PI(OI_DTYPE_F32, S(4, 1, 1, 3, 300), PF_RANDOM),
                       PI(OI_DTYPE_F32, S(4, 1, 1, 3, 8), PF_RANDOM)};
    CHECK(!parity_run(OI_OP_attention, &none, 3, big));
}

static void test_nn_topk(void) {
    static const oi_dtype all[] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16, OI_DTYPE_I8, OI_DTYPE_I16,
                                   OI_DTYPE_I32, OI_DTYPE_U8, OI_DTYPE_U16, OI_DTYPE_U32};
    const oi_op ops[] = {OI_OP_top_k, OI_OP_top_k_indices};
    attrs k5 = no_attrs(), k4_small = no_attrs(), full = no_attrs(), mid = no_attrs();
    attr_int(&k5, "k", 5);
    attr_int(&k4_small, "k", 4);
    attr_int(&k4_small, "axis", 0);
    attr_bool(&k4_small, "largest", false);
    attr_int(&full, "k", 37);
    attr_int(&mid, "k", 3);
    attr_int(&mid, "axis", 1);
    for (int o = 0; o < 2; o++)
        for (int t = 0; t < COUNT(all); t++) {
            oi_dtype d = all[t];
            parity_input x = PI(d, S(2, 5, 37, 0, 0), PF_TIES); /* many repeats: ties by lower index */
            NN_MUST(ops[o], &k5, 1, &x);
            NN_MUST(ops[o], &full, 1, &x); /* a full sort */
            x.fill = PF_SPECIALS;
            NN_MUST(ops[o], &k5, 1, &x);
            x.s = S(2, 37, 6, 0, 0);
            NN_MUST(ops[o], &k4_small, 1, &x); /* the smallest, along axis 0 */
            x.fill = PF_TIES;
            NN_MUST(ops[o], &k4_small, 1, &x);
            x.s = S(3, 3, 9, 7, 0);
            x.view = PV_TRANS; /* along the middle axis of a strided view */
            NN_MUST(ops[o], &mid, 1, &x);
        }
    /* a row longer than the shader's shared key cache */
    parity_input x = PI(OI_DTYPE_F32, S(2, 3, 3000, 0, 0), PF_TIES);
    NN_MUST(OI_OP_top_k_indices, &k5, 1, &x);
    x.fill = PF_RANDOM;
    NN_MUST(OI_OP_top_k, &k5, 1, &x);
    /* k past the shader's limit: the CPU's */
    attrs many = no_attrs();
    attr_int(&many, "k", 300);
    CHECK(!parity_run(OI_OP_top_k, &many, 1, &x));
}

static void test_nn_quant(void) {
    attrs nk = no_attrs(), kn = no_attrs(), q40 = no_attrs(), q41 = no_attrs(), q80 = no_attrs(), q41a8 = no_attrs();
    attr_string(&kn, "layout", "kn");
    attr_string(&q40, "format", "q4_0");
    attr_string(&q41, "format", "q4_1");
    attr_string(&q80, "format", "q8_0");
    attr_string(&q41a8, "format", "q4_1");
    attr_string(&q41a8, "activations", "q8");
    attrs q40a8 = no_attrs(), q80a8 = no_attrs();
    attr_string(&q40a8, "format", "q4_0");
    attr_string(&q40a8, "activations", "q8");
    attr_string(&q80a8, "format", "q8_0");
    attr_string(&q80a8, "activations", "q8");
    for (int t = 0; t < COUNT(FLOATS); t++) {
        oi_dtype f = FLOATS[t];
        parity_input q8[3] = {PI(f, S(2, 5, 64, 0, 0), PF_RANDOM), PI(OI_DTYPE_I8, S(2, 33, 64, 0, 0), PF_INT8),
                          PI(OI_DTYPE_F32, S(1, 33, 0, 0, 0), PF_RANDOM)};
        NN_MUST(OI_OP_matmul_q8, &nk, 3, q8);
        q8[0].s = S(3, 2, 3, 70, 0); /* rank 3, K not a multiple of the tile */
        q8[1].s = S(2, 70, 33, 0, 0);
        q8[2].dtype = f;
        NN_MUST(OI_OP_matmul_q8, &kn, 3, q8);
        q8[0].s = S(1, 70, 0, 0, 0); /* one row (decoding) */
        NN_MUST(OI_OP_matmul_q8, &kn, 3, q8);
        q8[0].s = S(2, 130, 70, 0, 0); /* several output blocks, a transposed x */
        q8[0].view = PV_TRANS;
        q8[1].s = S(2, 70, 70, 0, 0);
        q8[2].s = S(1, 70, 0, 0, 0);
        NN_MUST(OI_OP_matmul_q8, &kn, 3, q8);
        q8[1].view = PV_TRANS; /* w [N, K] as a strided view */
        NN_MUST(OI_OP_matmul_q8, &nk, 3, q8);
        for (int fmt = 0; fmt < 2; fmt++) {
            int64_t block = fmt ? 20 : 18;
            parity_input q4[2] = {PI(f, S(2, 3, 64, 0, 0), PF_RANDOM), PI(OI_DTYPE_U8, S(2, 20, 2 * block, 0, 0),
                                                                       fmt ? PF_Q4_1 : PF_Q4_0)};
            NN_MUST(OI_OP_matmul_q4, fmt ? &q41 : &q40, 2, q4);
            q4[0].s = S(3, 2, 70, 96, 0);
            q4[1].s = S(2, 67, 3 * block, 0, 0);
            NN_MUST(OI_OP_matmul_q4, fmt ? &q41 : &q40, 2, q4);
            q4[0].s = S(1, 96, 0, 0, 0);
            NN_MUST(OI_OP_matmul_q4, fmt ? &q41 : &q40, 2, q4);
        }
        /* q8_0 blocks and 8-bit activations (matvec_quant.comp): one row (decoding), a few, many */
        attrs *a8[3] = {&q40a8, &q41a8, &q80a8};
        parity_fill fills[3] = {PF_Q4_0, PF_Q4_1, PF_Q8_0};
        int64_t blocks[3] = {18, 20, 34};
        for (int fmt = 0; fmt < 3; fmt++) {
            parity_input q[2] = {PI(f, S(1, 96, 0, 0, 0), PF_RANDOM),
                                  PI(OI_DTYPE_U8, S(2, 37, 3 * blocks[fmt], 0, 0), fills[fmt])};
            NN_MUST(OI_OP_matmul_q4, a8[fmt], 2, q);
            q[0].s = S(3, 2, 3, 96, 0);
            NN_MUST(OI_OP_matmul_q4, a8[fmt], 2, q);
            q[0].s = S(2, 20, 96, 0, 0);
            NN_MUST(OI_OP_matmul_q4, fmt == 2 ? &q80 : a8[fmt], 2, q);
        }
    }
}

/* dequantize: rows of each block format as [rows, bytes], [2, 5, bytes], a
 * gathered row of an embedding table ([1, bytes], and [bytes] for a
 * scalar index), all bit for bit. */
static void test_nn_dequantize(void) {
    static const char *const formats[] = {"q4_0", "q4_1", "q8_0"};
    const parity_fill fills[] = {PF_Q4_0, PF_Q4_1, PF_Q8_0};
    const int64_t blocks[] = {18, 20, 34};
    for (int fmt = 0; fmt < 3; fmt++) {
        attrs a = no_attrs();
        attr_string(&a, "format", formats[fmt]);
        parity_input w = PI(OI_DTYPE_U8, S(2, 37, 3 * blocks[fmt], 0, 0), fills[fmt]);
        NN_MUST(OI_OP_dequantize, &a, 1, &w);
        w.s = S(3, 2, 5, 4 * blocks[fmt], 0);
        NN_MUST(OI_OP_dequantize, &a, 1, &w);
        w.s = S(2, 1, 64 * blocks[fmt], 0, 0);
        NN_MUST(OI_OP_dequantize, &a, 1, &w);
        w.s = S(1, 64 * blocks[fmt], 0, 0, 0);
        NN_MUST(OI_OP_dequantize, &a, 1, &w);
    }
}

/* An LLM's embedding lookup with the table kept in q8_0 blocks: gather the
 * tokens' rows (u8), dequantize them; both recorded on the device in one
 * submission and bit for bit the CPU's. Rows whose bytes are strided are
 * declined: run_op hands them to the CPU. */
static void test_nn_embedding(void) {
    const oi__vulkan_stats *st = oi__vulkan_get_stats(ctx);
    parity_input table_in = PI(OI_DTYPE_U8, S(2, 9, 3 * 34, 0, 0), PF_Q8_0);
    guarded table = parity_make_input(&table_in);
    const int64_t idx_shape[1] = {3}, rows_shape[2] = {3, 3 * 34}, y_shape[2] = {3, 96}, tokens[3] = {4, 0, -1};
    oi__tensor *idx = oi__tensor_new(OI_DTYPE_I64, 1, idx_shape);
    memcpy(idx->storage->data, tokens, sizeof tokens);
    attrs none = no_attrs(), q80 = no_attrs();
    attr_string(&q80, "format", "q8_0");
    oi__tensor *rows[2], *y[2]; /* [0] GPU, [1] CPU */
    uint64_t submissions = st->submissions, fallbacks = st->cpu_fallbacks;
    for (int k = 0; k < 2; k++) {
        rows[k] = oi__tensor_new(OI_DTYPE_U8, 2, rows_shape);
        y[k] = oi__tensor_new(OI_DTYPE_F32, 2, y_shape);
        const oi__tensor *ga[2] = {table.t, idx}, *da[1] = {rows[k]};
        CHECK_OK(chain_run(k == 0, OI_OP_gather, &none, ga, 2, rows[k]));
        CHECK_OK(chain_run(k == 0, OI_OP_dequantize, &q80, da, 1, y[k]));
    }
    CHECK_EQ_INT(st->submissions, submissions); /* recorded, not yet submitted */
    CHECK_EQ_INT(st->cpu_fallbacks, fallbacks);
    CHECK_OK(vk->flush(ctx));
    CHECK_OK(vk->to_host(ctx, y[0]->storage));
    nn_same_bits("embedding: gather -> dequantize", y[1], y[0]);
    /* every other byte of each row */
    parity_input strided_in = PI(OI_DTYPE_U8, S(2, 3, 2 * 34, 0, 0), PF_Q8_0);
    strided_in.view = PV_STRIDED;
    guarded strided = parity_make_input(&strided_in);
    const int64_t ys_shape[2] = {3, 64};
    oi__tensor *ys[2] = {oi__tensor_new(OI_DTYPE_F32, 2, ys_shape), oi__tensor_new(OI_DTYPE_F32, 2, ys_shape)};
    const oi__tensor *sa[1] = {strided.t};
    for (int k = 0; k < 2; k++)
        CHECK_OK(chain_run(k == 0, OI_OP_dequantize, &q80, sa, 1, ys[k]));
    CHECK_EQ_INT(st->cpu_fallbacks, fallbacks + 1);
    CHECK_OK(vk->to_host(ctx, ys[0]->storage));
    nn_same_bits("embedding: strided rows", ys[1], ys[0]);
    for (int k = 0; k < 2; k++) {
        oi__tensor_free(rows[k]);
        oi__tensor_free(y[k]);
        oi__tensor_free(ys[k]);
    }
    oi__tensor_free(idx);
    free_tensor(&table);
    free_tensor(&strided);
}

static void nn_cases(void) {
    test_nn_norms();
    test_nn_rope();
    test_nn_attention();
    test_nn_topk();
    test_nn_quant();
    test_nn_dequantize();
    test_nn_embedding();
}
