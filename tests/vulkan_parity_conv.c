/* vulkan_parity_conv.c - the cases of the conv family (vulkan/vk_ops_conv.c):
 * every op x dtype x shape, run by the parity harness (vulkan_parity.c)
 * on each target vs the CPU reference; x and w may be transposed views. */

#define I2(a, b) 2, (const int64_t[]){a, b}
#define I4(a, b, c, d) 4, (const int64_t[]){a, b, c, d}

/* One case: inputs of dtype `dt` (the bias too), random values (with
 * specials when asked); input i is a transposed view (its last two dims
 * swapped in memory) when bit i of `views` is set. Returns whether the
 * target ran it (false: nothing compared). */
static bool conv_case(oi_op op, const attrs *at, int n_in, oi_dtype dt, const shape *shapes, bool specials,
                      unsigned views) {
    parity_input ins[3];
    for (int i = 0; i < n_in; i++) {
        ins[i] = PI(dt, shapes[i], specials ? PF_SPECIALS : PF_RANDOM);
        ins[i].view = (views >> i) & 1u ? PV_TRANS : PV_DENSE;
    }
    return parity_run(op, at, n_in, ins);
}

/* A case every float storage dtype (and i8/u8 when `ints`) must run on the GPU. */
static void conv_must_run(oi_op op, const attrs *at, int n_in, const shape *shapes, bool specials, unsigned views,
                          bool ints) {
    const oi_dtype types[] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16, OI_DTYPE_I8, OI_DTYPE_U8};
    for (int t = 0; t < (ints ? COUNT(types) : COUNT(FLOATS)); t++)
        CHECK_MSG(conv_case(op, at, n_in, types[t], shapes, specials, views), "%s on %s should run on the GPU: %s",
                  oi_op_name(op), oi_dtype_name(types[t]), oi_last_error());
}

static void test_conv_pools(void) {
    const oi_op pools[] = {OI_OP_max_pool2d, OI_OP_avg_pool2d};
    for (int p = 0; p < 2; p++) {
        oi_op op = pools[p];
        bool ints = op == OI_OP_max_pool2d; /* max_pool2d also takes i8/u8 */
        attrs at = no_attrs();
        const shape x1[] = {S(4, 2, 3, 9, 11)};
        attr_axes(&at, "kernel_shape", I2(3, 3));
        attr_axes(&at, "strides", I2(2, 2));
        attr_axes(&at, "pads", I4(1, 1, 1, 1));
        conv_must_run(op, &at, 1, x1, true, 0, ints);
        conv_must_run(op, &at, 1, x1, false, 1, ints); /* x a strided view */
        if (op == OI_OP_avg_pool2d) { /* the divisor counts the pads */
            attr_bool(&at, "count_include_pad", true);
            conv_must_run(op, &at, 1, x1, false, 0, false);
        }
        reset_attrs(&at);

        /* asymmetric pads, dilation, ceil_mode */
        const shape x2[] = {S(4, 1, 4, 10, 7)};
        attr_axes(&at, "kernel_shape", I2(2, 3));
        attr_axes(&at, "strides", I2(1, 2));
        attr_axes(&at, "dilations", I2(2, 1));
        attr_axes(&at, "pads", I4(0, 1, 1, 0));
        attr_bool(&at, "ceil_mode", true);
        conv_must_run(op, &at, 1, x2, true, 0, ints);
        if (op == OI_OP_avg_pool2d) { /* the divisor counts the pads */
            attr_bool(&at, "count_include_pad", true);
            conv_must_run(op, &at, 1, x2, false, 0, false);
        }
        reset_attrs(&at);

        /* auto_pad */
        const shape x3[] = {S(4, 3, 2, 8, 9)};
        attr_axes(&at, "kernel_shape", I2(3, 4));
        attr_axes(&at, "strides", I2(2, 3));
        attr_string(&at, "auto_pad", "SAME_UPPER");
        conv_must_run(op, &at, 1, x3, false, 0, ints);
        at.a[2].s = (char *)"SAME_LOWER";
        conv_must_run(op, &at, 1, x3, false, 0, ints);
        reset_attrs(&at);

        /* a window wholly in the padding: max -inf (0 for i8/u8), avg NaN */
        const shape x4[] = {S(4, 1, 2, 1, 5)};
        attr_axes(&at, "kernel_shape", I2(2, 1));
        attr_axes(&at, "dilations", I2(3, 1));
        attr_axes(&at, "pads", I4(1, 0, 2, 0));
        conv_must_run(op, &at, 1, x4, false, 0, ints);
        if (op == OI_OP_avg_pool2d) { /* the divisor counts the pads */
            attr_bool(&at, "count_include_pad", true);
            conv_must_run(op, &at, 1, x4, false, 0, false);
        }
        reset_attrs(&at);
    }
}

static void test_conv_forward(void) {
    attrs at = no_attrs();
    /* bias, pads */
    const shape c1[] = {S(4, 2, 3, 9, 11), S(4, 5, 3, 3, 3), S(1, 5, 0, 0, 0)};
    attr_axes(&at, "pads", I4(1, 1, 1, 1));
    conv_must_run(OI_OP_conv2d, &at, 3, c1, false, 0, false);
    conv_must_run(OI_OP_conv2d, &at, 3, c1, false, 3, false); /* x and w strided views */
    reset_attrs(&at);

    /* groups, strides, dilations, asymmetric pads, no bias */
    const shape c2[] = {S(4, 1, 4, 10, 7), S(4, 6, 2, 3, 2)};
    attr_int(&at, "group", 2);
    attr_axes(&at, "strides", I2(2, 1));
    attr_axes(&at, "dilations", I2(1, 2));
    attr_axes(&at, "pads", I4(0, 1, 2, 0));
    conv_must_run(OI_OP_conv2d, &at, 2, c2, false, 0, false);
    reset_attrs(&at);

    /* depthwise (the narrow blocks), SAME_LOWER */
    const shape c3[] = {S(4, 2, 6, 8, 9), S(4, 6, 1, 3, 3), S(1, 6, 0, 0, 0)};
    attr_int(&at, "group", 6);
    attr_axes(&at, "strides", I2(2, 2));
    attr_string(&at, "auto_pad", "SAME_LOWER");
    conv_must_run(OI_OP_conv2d, &at, 3, c3, false, 0, false);
    reset_attrs(&at);

    /* pointwise; VALID with a wide kernel and stride */
    const shape c4[] = {S(4, 3, 8, 5, 5), S(4, 20, 8, 1, 1), S(1, 20, 0, 0, 0)};
    conv_must_run(OI_OP_conv2d, &at, 3, c4, false, 0, false);
    const shape c5[] = {S(4, 1, 3, 11, 13), S(4, 4, 3, 2, 4)};
    attr_axes(&at, "strides", I2(3, 3));
    attr_string(&at, "auto_pad", "VALID");
    conv_must_run(OI_OP_conv2d, &at, 2, c5, false, 0, false);
    reset_attrs(&at);

    /* groups of 24 output channels: 64-channel blocks, two groups */
    const shape c6[] = {S(4, 2, 8, 6, 7), S(4, 48, 4, 3, 3), S(1, 48, 0, 0, 0)};
    attr_int(&at, "group", 2);
    conv_must_run(OI_OP_conv2d, &at, 3, c6, false, 0, false);
    reset_attrs(&at);

    /* NaN and inf in x propagate as on the CPU */
    attr_axes(&at, "pads", I4(1, 1, 1, 1));
    CHECK(conv_case(OI_OP_conv2d, &at, 3, OI_DTYPE_F32, c1, true, 0));

    /* larger: several 64x64 blocks along channels and pixels */
    const shape big[] = {S(4, 1, 64, 32, 32), S(4, 96, 64, 3, 3), S(1, 96, 0, 0, 0)};
    CHECK(conv_case(OI_OP_conv2d, &at, 3, OI_DTYPE_F32, big, false, 0));
    CHECK(conv_case(OI_OP_conv2d, &at, 3, OI_DTYPE_F16, big, false, 0));
    reset_attrs(&at);

    /* conv1d: dilation and asymmetric pads; groups with SAME_UPPER */
    const shape d1[] = {S(3, 2, 3, 17, 0), S(3, 4, 3, 3, 0), S(1, 4, 0, 0, 0)};
    attr_axes(&at, "strides", 1, (const int64_t[]){2});
    attr_axes(&at, "dilations", 1, (const int64_t[]){2});
    attr_axes(&at, "pads", I2(1, 2));
    conv_must_run(OI_OP_conv1d, &at, 3, d1, false, 0, false);
    conv_must_run(OI_OP_conv1d, &at, 3, d1, false, 3, false);
    reset_attrs(&at);
    const shape d2[] = {S(3, 1, 6, 10, 0), S(3, 6, 2, 4, 0)};
    attr_int(&at, "group", 3);
    attr_string(&at, "auto_pad", "SAME_UPPER");
    conv_must_run(OI_OP_conv1d, &at, 2, d2, false, 0, false);
    reset_attrs(&at);

    /* activation= after the bias, in each build of conv.comp: per output
     * (depthwise), narrow blocks (groups of 24) and 64x64 blocks; conv1d */
    static const char *const acts[] = {"relu", "gelu", "gelu_tanh", "hard_swish"};
    for (int i = 0; i < COUNT(acts); i++) {
        attr_int(&at, "group", 6);
        attr_axes(&at, "pads", I4(1, 1, 1, 1));
        attr_string(&at, "activation", acts[i]);
        conv_must_run(OI_OP_conv2d, &at, 3, c3, false, 0, false);
        reset_attrs(&at);
        attr_int(&at, "group", 2);
        attr_string(&at, "activation", acts[i]);
        conv_must_run(OI_OP_conv2d, &at, 3, c6, false, 0, false);
        CHECK(conv_case(OI_OP_conv2d, &at, 3, OI_DTYPE_F32, c6, true, 0)); /* NaN and inf */
        reset_attrs(&at);
        attr_string(&at, "activation", acts[i]);
        CHECK(conv_case(OI_OP_conv2d, &at, 3, OI_DTYPE_F32, big, false, 0));
        conv_must_run(OI_OP_conv1d, &at, 3, d1, false, 0, false);
        reset_attrs(&at);
    }
}

static void test_conv_transpose(void) {
    attrs at = no_attrs();
    /* stride, pads, output_padding, bias */
    const shape t1[] = {S(4, 2, 3, 5, 6), S(4, 3, 4, 3, 3), S(1, 4, 0, 0, 0)};
    attr_axes(&at, "strides", I2(2, 2));
    attr_axes(&at, "pads", I4(1, 1, 1, 1));
    attr_axes(&at, "output_padding", I2(1, 1));
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t1, false, 0, false);
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t1, false, 3, false); /* strided views */
    reset_attrs(&at);

    /* groups, uneven strides, dilation, no bias */
    const shape t2[] = {S(4, 1, 4, 4, 5), S(4, 4, 3, 2, 3)};
    attr_int(&at, "group", 2);
    attr_axes(&at, "strides", I2(3, 2));
    attr_axes(&at, "dilations", I2(2, 1));
    attr_axes(&at, "pads", I4(0, 1, 2, 0));
    conv_must_run(OI_OP_conv_transpose2d, &at, 2, t2, false, 0, false);
    reset_attrs(&at);

    /* output_shape sets the pads: smaller than the full output, and
     * larger (negative pads) with SAME_UPPER */
    const shape t3[] = {S(4, 1, 2, 4, 5), S(4, 2, 3, 3, 3), S(1, 3, 0, 0, 0)};
    attr_axes(&at, "strides", I2(2, 2));
    attr_axes(&at, "output_shape", I2(8, 10));
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t3, false, 0, false);
    reset_attrs(&at);
    attr_axes(&at, "strides", I2(2, 2));
    attr_axes(&at, "output_shape", I2(10, 12));
    attr_string(&at, "auto_pad", "SAME_UPPER");
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t3, false, 0, false);
    reset_attrs(&at);
    attr_axes(&at, "strides", I2(2, 3));
    attr_string(&at, "auto_pad", "SAME_LOWER");
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t3, false, 0, false);
    reset_attrs(&at);

    /* dilations sharing a factor with the strides: some output phases
     * meet no kernel position (the bias alone) */
    const shape t5[] = {S(4, 1, 3, 4, 5), S(4, 3, 5, 3, 3), S(1, 5, 0, 0, 0)};
    attr_axes(&at, "strides", I2(2, 4));
    attr_axes(&at, "dilations", I2(2, 2));
    attr_axes(&at, "pads", I4(0, 1, 1, 0));
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t5, false, 0, false);
    reset_attrs(&at);

    /* depthwise (one output per invocation) */
    const shape t4[] = {S(4, 2, 4, 5, 5), S(4, 4, 1, 3, 3), S(1, 4, 0, 0, 0)};
    attr_int(&at, "group", 4);
    attr_axes(&at, "strides", I2(2, 2));
    attr_axes(&at, "pads", I4(1, 0, 0, 1));
    conv_must_run(OI_OP_conv_transpose2d, &at, 3, t4, false, 2, false);
    reset_attrs(&at);

    /* larger: 64 -> 32 channels, 16x16 -> 32x32 */
    const shape big[] = {S(4, 1, 64, 16, 16), S(4, 64, 32, 4, 4), S(1, 32, 0, 0, 0)};
    attr_axes(&at, "strides", I2(2, 2));
    attr_axes(&at, "pads", I4(1, 1, 1, 1));
    CHECK(conv_case(OI_OP_conv_transpose2d, &at, 3, OI_DTYPE_F32, big, false, 0));
    reset_attrs(&at);
}

/* What stays on the CPU: f64 storage, empty operands. */
static void test_conv_declines(void) {
    attrs at = no_attrs();
    const shape c0[] = {S(4, 1, 0, 5, 5), S(4, 3, 0, 3, 3), S(1, 3, 0, 0, 0)}; /* no input channels */
    CHECK(!conv_case(OI_OP_conv2d, &at, 3, OI_DTYPE_F32, c0, false, 0));
    const shape c1[] = {S(4, 1, 2, 5, 5), S(4, 3, 2, 3, 3)};
    CHECK(!conv_case(OI_OP_conv2d, &at, 2, OI_DTYPE_F64, c1, false, 0));
    attr_axes(&at, "kernel_shape", I2(2, 2));
    CHECK(!conv_case(OI_OP_max_pool2d, &at, 1, OI_DTYPE_F64, c1, false, 0));
    reset_attrs(&at);
}

static void conv_cases(void) {
    test_conv_pools();
    test_conv_forward();
    test_conv_transpose();
    test_conv_declines();
}
