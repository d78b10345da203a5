/* op_test_util.h - building tensors and op attributes by hand, shared by
 * the kernel tests (test_kernels, test_nn_ops, test_shape_ops). Include
 * after openinfer_impl/internal.h. */
#ifndef OI_OP_TEST_UTIL_H
#define OI_OP_TEST_UTIL_H

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* SHAPE(2, 3) -> 2, (const int64_t[]){2, 3}: a rank and its dims. */
#define SHAPE(...) (int)COUNT(((const int64_t[]){__VA_ARGS__})), (const int64_t[]){__VA_ARGS__}

/* A new tensor holding v (converted to dtype t with its rounding/wrapping). */
static inline oi__tensor *tensor_f(oi_dtype t, int ndim, const int64_t *shape, const double *v) {
    oi__tensor *x = oi__tensor_new(t, ndim, shape);
    for (int64_t i = 0; x && i < oi__shape_numel(ndim, shape); i++)
        oi__store_f64(t, oi__tensor_data(x), i, v[i]);
    return x;
}

static inline oi__tensor *tensor_i(oi_dtype t, int ndim, const int64_t *shape, const int64_t *v) {
    oi__tensor *x = oi__tensor_new(t, ndim, shape);
    for (int64_t i = 0; x && i < oi__shape_numel(ndim, shape); i++)
        oi__store_i64(t, oi__tensor_data(x), i, v[i]);
    return x;
}

static inline oi__attr attr_base(const char *name, oi__attr_kind kind) {
    oi__attr a;
    memset(&a, 0, sizeof a);
    a.name = (char *)name;
    a.kind = kind;
    return a;
}

static inline oi__attr attr_f(const char *name, double v) {
    oi__attr a = attr_base(name, OI__ATTR_FLOAT);
    a.f = v;
    return a;
}

static inline oi__attr attr_i(const char *name, int64_t v) {
    oi__attr a = attr_base(name, OI__ATTR_INT);
    a.i = v;
    return a;
}

static inline oi__attr attr_b(const char *name, bool v) {
    oi__attr a = attr_base(name, OI__ATTR_BOOL);
    a.i = v;
    return a;
}

static inline oi__attr attr_s(const char *name, const char *s) {
    oi__attr a = attr_base(name, OI__ATTR_STRING);
    a.s = (char *)s;
    return a;
}

static inline oi__attr attr_dtype(const char *name, oi_dtype t) {
    oi__attr a = attr_base(name, OI__ATTR_DTYPE);
    a.dtype = t;
    return a;
}

/* An int list (an stb array the caller frees with arrfree(a.ints)). */
static inline oi__attr attr_ints(const char *name, int n, const int64_t *v) {
    oi__attr a = attr_base(name, OI__ATTR_INT_LIST);
    for (int i = 0; i < n; i++)
        arrput(a.ints, v[i]);
    return a;
}

#endif
