/* kernels.c - the op table expanded into data, op validation (dtypes,
 * parameters, shapes, accumulate mode) and the CPU kernel dispatch. The
 * kernels themselves live in one file per op family, included at the end
 * (this file is part of the unity build). */
#include "../openinfer_impl/internal.h"

#include <float.h>
#include <math.h>

/* ------------------------------------------------------------------ */
/* The table as data                                                   */
/* ------------------------------------------------------------------ */
typedef enum oi__shape_rule {
    OI__SHAPE_EW, OI__SHAPE_MATMUL, OI__SHAPE_REDUCE, OI__SHAPE_ARGREDUCE, OI__SHAPE_ALL, OI__SHAPE_CUSTOM
} oi__shape_rule;

typedef enum oi__out_rule { OI__OUT_SAME, OI__OUT_BOOL, OI__OUT_I8, OI__OUT_U8, OI__OUT_I64, OI__OUT_F32, OI__OUT_TO } oi__out_rule;

typedef enum oi__op_param_type {
    OI__PARAM_ACC, OI__PARAM_SCALAR, OI__PARAM_BOOL, OI__PARAM_INT, OI__PARAM_INT_LIST, OI__PARAM_DTYPE,
    OI__PARAM_STRING, OI__PARAM_ALIAS
} oi__op_param_type;

/* What a family kernel gets: validated parameters, inputs and the output.
 * `acc` is the accumulator dtype in accumulate mode (else INVALID). */
typedef struct oi__kernel_args {
    oi_op op;
    const oi__attr *attrs;
    size_t n_attrs;
    const oi__tensor *const *in;
    size_t n_in;
    oi__tensor *out;
    oi_dtype acc;
} oi__kernel_args;

/* The one way to make kernel arguments: the op and its parameters, with
 * no inputs, no output and no accumulator (INVALID) until the caller sets them. */
static oi__kernel_args oi__kernel_args_of(oi_op op, const oi__attr *attrs, size_t n_attrs) {
    oi__kernel_args k;
    memset(&k, 0, sizeof k);
    k.op = op;
    k.attrs = attrs;
    k.n_attrs = n_attrs;
    k.acc = OI_DTYPE_INVALID;
    return k;
}

typedef oi_status (*oi__cpu_kernel)(const oi__kernel_args *k);

/* The family kernels (defined in the files included at the end). */
static oi_status oi__k_arith(const oi__kernel_args *k);
static oi_status oi__k_compare(const oi__kernel_args *k);
static oi_status oi__k_matmul(const oi__kernel_args *k);
static oi_status oi__k_reduce(const oi__kernel_args *k);
static oi_status oi__k_cast(const oi__kernel_args *k);
/* shape, view and convolution ops: kernels/shape.c, kernels/conv.c */
static oi_status oi__k_shape(const oi__kernel_args *k);
static oi_status oi__k_shape_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out);
static oi_status oi__k_conv(const oi__kernel_args *k);
static oi_status oi__k_conv_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out);
/* math and neural-network ops: kernels/math.c, kernels/nn.c, kernels/quant.c */
static oi_status oi__k_math(const oi__kernel_args *k);
static oi_status oi__k_nn(const oi__kernel_args *k);
static oi_status oi__k_nn_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out);
static oi_status oi__k_quant(const oi__kernel_args *k);
static oi_status oi__k_quant_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out);
/* A family with CUSTOM-shape ops also declares its `<kernel>_infer` here:
 * static oi_status oi__k_<family>_infer(const oi__kernel_args *k,
 *     const oi__op_sig *in, size_t n_in, oi__op_sig *out); */

typedef struct oi__op_def {
    const char *name;
    int arity;
    oi__shape_rule shape;
    oi__out_rule out;
    unsigned flags;
    uint32_t dtypes, acc_dtypes;
} oi__op_def;

#define OI__OP_DEF_ROW(name, arity, category, shape, out, flags, dtypes, acc_dtypes, kernel, summary) \
    {#name, arity, OI__SHAPE_##shape, OI__OUT_##out, flags, dtypes, acc_dtypes},
static const oi__op_def oi__op_defs[OI_OP_COUNT] = {OI_OP_LIST(OI__OP_DEF_ROW)};

/* Output signature of a CUSTOM-shape op: `<kernel>_infer` in its family
 * file; NULL for the other rules, which kernels.c computes itself. */
typedef oi_status (*oi__shape_fn)(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out);
#define OI__INFER_EW(kernel) NULL
#define OI__INFER_MATMUL(kernel) NULL
#define OI__INFER_REDUCE(kernel) NULL
#define OI__INFER_ARGREDUCE(kernel) NULL
#define OI__INFER_ALL(kernel) NULL
#define OI__INFER_CUSTOM(kernel) kernel##_infer

/* Enum-indexed: row i of the list is OI_OP value i. */
#define OI__OP_KERNEL_ROW(name, arity, category, shape, out, flags, dtypes, acc_dtypes, kernel, summary) kernel,
static const oi__cpu_kernel oi__cpu_kernels[OI_OP_COUNT] = {OI_OP_LIST(OI__OP_KERNEL_ROW)};
#define OI__OP_INFER_ROW(name, arity, category, shape, out, flags, dtypes, acc_dtypes, kernel, summary) \
    OI__INFER_##shape(kernel),
static const oi__shape_fn oi__shape_fns[OI_OP_COUNT] = {OI_OP_LIST(OI__OP_INFER_ROW)};

typedef struct oi__op_param_def {
    oi_op op;
    const char *name;
    oi__op_param_type type;
    bool required;
    double def;
    const char *default_text;
} oi__op_param_def;

#define OI__PARAM_IS_REQ true
#define OI__PARAM_IS_OPT false
#define OI__PARAM_DEF_ROW(op, name, type, required, def, default_text, doc) \
    {OI_OP_##op, #name, OI__PARAM_##type, OI__PARAM_IS_##required, (double)(def), default_text},
static const oi__op_param_def oi__op_param_defs[] = {OI_PARAM_LIST(OI__PARAM_DEF_ROW)};
#define OI__PARAM_COUNT (sizeof oi__op_param_defs / sizeof oi__op_param_defs[0])

/* Dimensions and strides stay below 2^40 so index arithmetic cannot overflow. */
#define OI__MAX_DIM ((int64_t)1 << 40)

static bool oi__op_valid(oi_op op) { return (int)op >= 0 && (int)op < (int)OI_OP_COUNT; }

const char *oi_op_name(oi_op op) { return oi__op_valid(op) ? oi__op_defs[op].name : NULL; }

oi_op oi_op_from_name(const char *name) {
    for (int i = 0; name && i < (int)OI_OP_COUNT; i++)
        if (strcmp(oi__op_defs[i].name, name) == 0)
            return (oi_op)i;
    return OI_OP_COUNT;
}

int oi__op_arity(oi_op op) { return oi__op_valid(op) ? oi__op_defs[op].arity : -1; }

int oi__op_min_inputs(oi_op op) {
    if (!oi__op_valid(op))
        return -1;
    unsigned flags = oi__op_defs[op].flags;
    return (flags & OI__F_VAR) ? 1 : (flags & OI__F_OPT) ? oi__op_defs[op].arity - 1 : oi__op_defs[op].arity;
}

bool oi__op_allows_inplace(oi_op op) { return oi__op_valid(op) && (oi__op_defs[op].flags & OI__F_I) != 0; }

/* ------------------------------------------------------------------ */
/* Parameters                                                          */
/* ------------------------------------------------------------------ */
/* The table's rows by op, in table order (built once): a lookup scans the
 * op's few rows instead of all of them, as kernels read their parameters
 * on every call. */
static uint16_t oi__op_param_rows[OI__PARAM_COUNT];
static uint16_t oi__op_param_start[OI_OP_COUNT + 1];
static pthread_once_t oi__op_param_once = PTHREAD_ONCE_INIT;

static void oi__op_param_index(void) {
    size_t n = 0;
    for (int op = 0; op < (int)OI_OP_COUNT; op++) {
        oi__op_param_start[op] = (uint16_t)n;
        for (size_t i = 0; i < OI__PARAM_COUNT; i++)
            if ((int)oi__op_param_defs[i].op == op)
                oi__op_param_rows[n++] = (uint16_t)i;
    }
    oi__op_param_start[OI_OP_COUNT] = (uint16_t)n;
}

static const oi__op_param_def *oi__op_param_lookup(oi_op op, const char *name) {
    if (!oi__op_valid(op))
        return NULL;
    pthread_once(&oi__op_param_once, oi__op_param_index);
    for (int r = oi__op_param_start[op]; r < oi__op_param_start[op + 1]; r++)
        if (strcmp(oi__op_param_defs[oi__op_param_rows[r]].name, name) == 0)
            return &oi__op_param_defs[oi__op_param_rows[r]];
    return NULL;
}

/* The parameter an attribute name stands for, aliases resolved. */
static const oi__op_param_def *oi__op_param_resolve(oi_op op, const char *name) {
    const oi__op_param_def *p = oi__op_param_lookup(op, name);
    if (p && p->type == OI__PARAM_ALIAS)
        p = oi__op_param_lookup(op, p->default_text);
    return p;
}

/* The attribute given for parameter `name` (by any of its names), or NULL. */
static const oi__attr *oi__op_attr_for(const oi__kernel_args *k, const char *name) {
    for (size_t i = 0; i < k->n_attrs; i++) {
        const oi__op_param_def *p = oi__op_param_resolve(k->op, k->attrs[i].name);
        if (p && strcmp(p->name, name) == 0)
            return &k->attrs[i];
    }
    return NULL;
}

static double oi__op_attr_as_f64(const oi__attr *a) { return a->kind == OI__ATTR_FLOAT ? a->f : (double)a->i; }

static int64_t oi__op_f64_to_i64_saturating(double v) {
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static int64_t oi__op_attr_as_i64(const oi__attr *a) {
    return a->kind == OI__ATTR_FLOAT ? oi__op_f64_to_i64_saturating(a->f) : a->i;
}

static double oi__op_param_f64(const oi__kernel_args *k, const char *name) {
    const oi__attr *a = oi__op_attr_for(k, name);
    if (a)
        return oi__op_attr_as_f64(a);
    const oi__op_param_def *p = oi__op_param_lookup(k->op, name);
    return p ? p->def : 0.0;
}

static int64_t oi__op_param_i64(const oi__kernel_args *k, const char *name) {
    const oi__attr *a = oi__op_attr_for(k, name);
    if (a)
        return oi__op_attr_as_i64(a);
    const oi__op_param_def *p = oi__op_param_lookup(k->op, name);
    return p ? oi__op_f64_to_i64_saturating(p->def) : 0;
}

static bool oi__op_param_bool(const oi__kernel_args *k, const char *name) { return oi__op_param_i64(k, name) != 0; }

/* A parameter as the kernels read it (the attribute, else the table's
 * default), for code that emits kernels rather than running them. */
double oi__op_param_value_f64(oi_op op, const oi__attr *attrs, size_t n_attrs, const char *name) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    return oi__op_param_f64(&k, name);
}

int64_t oi__op_param_value_i64(oi_op op, const oi__attr *attrs, size_t n_attrs, const char *name) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    return oi__op_param_i64(&k, name);
}

bool oi__op_param_given(oi_op op, const oi__attr *attrs, size_t n_attrs, const char *name) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    return oi__op_attr_for(&k, name) != NULL;
}

bool oi__op_is_elementwise(oi_op op) { return oi__op_valid(op) && oi__op_defs[op].shape == OI__SHAPE_EW; }

/* A dtype attribute: DTYPE, or a name given as STRING/IDENT. */
static oi_dtype oi__op_attr_dtype(const oi__attr *a) {
    if (a->kind == OI__ATTR_DTYPE)
        return a->dtype;
    if ((a->kind == OI__ATTR_STRING || a->kind == OI__ATTR_IDENT) && a->s)
        return oi_dtype_from_name(a->s);
    return OI_DTYPE_INVALID;
}

static const char *oi__op_attr_kind_name(oi__attr_kind kind) {
    switch (kind) {
    case OI__ATTR_FLOAT: return "a float";
    case OI__ATTR_INT: return "an int";
    case OI__ATTR_BOOL: return "a bool";
    case OI__ATTR_STRING: return "a string";
    case OI__ATTR_IDENT: return "a name";
    case OI__ATTR_INT_LIST: return "an int list";
    case OI__ATTR_DTYPE: return "a dtype";
    case OI__ATTR_DTYPE_LIST: return "a dtype list";
    case OI__ATTR_SIZE: return "a size expression";
    }
    return "an unknown kind";
}

static const char *oi__op_param_type_name(oi__op_param_type type) {
    switch (type) {
    case OI__PARAM_ACC: return "a dtype or [acc, out] dtype list";
    case OI__PARAM_SCALAR: return "a number or bool";
    case OI__PARAM_BOOL: return "a bool";
    case OI__PARAM_INT: return "an int";
    case OI__PARAM_INT_LIST: return "an int list";
    case OI__PARAM_DTYPE: return "a dtype";
    case OI__PARAM_STRING: return "a string";
    case OI__PARAM_ALIAS: return "an alias";
    }
    return "?";
}

static bool oi__op_attr_fits(const oi__attr *a, oi__op_param_type type) {
    switch (type) {
    case OI__PARAM_ACC:
        if (a->kind == OI__ATTR_DTYPE_LIST)
            return arrlen(a->dtypes) >= 1 && arrlen(a->dtypes) <= 2;
        return oi__op_attr_dtype(a) != OI_DTYPE_INVALID;
    case OI__PARAM_SCALAR:
        return a->kind == OI__ATTR_FLOAT || a->kind == OI__ATTR_INT || a->kind == OI__ATTR_BOOL;
    case OI__PARAM_BOOL:
        return a->kind == OI__ATTR_BOOL || (a->kind == OI__ATTR_INT && (a->i == 0 || a->i == 1));
    case OI__PARAM_INT: return a->kind == OI__ATTR_INT;
    case OI__PARAM_INT_LIST: return a->kind == OI__ATTR_INT_LIST || a->kind == OI__ATTR_INT;
    case OI__PARAM_DTYPE: return oi__op_attr_dtype(a) != OI_DTYPE_INVALID;
    case OI__PARAM_STRING: return (a->kind == OI__ATTR_STRING || a->kind == OI__ATTR_IDENT) && a->s;
    case OI__PARAM_ALIAS: return false;
    }
    return false;
}

static void oi__op_param_names(oi_op op, char *text, size_t size) {
    size_t len = 0;
    text[0] = '\0';
    for (size_t i = 0; i < OI__PARAM_COUNT; i++) {
        if (oi__op_param_defs[i].op != op)
            continue;
        int n = snprintf(text + len, size - len, "%s%s", len ? ", " : "", oi__op_param_defs[i].name);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    if (!len)
        snprintf(text, size, "none");
}

bool oi__op_param_known(oi_op op, const char *name, char *expected, size_t cap) {
    if (oi__op_param_resolve(op, name))
        return true;
    if (expected && cap)
        oi__op_param_names(op, expected, cap);
    return false;
}

typedef struct oi__op_param_choices {
    oi_op op;
    const char *name;
    const char *values; /* '|' between them */
} oi__op_param_choices;
#define OI__PARAM_CHOICES_ROW(op, name, values) {OI_OP_##op, #name, values},
static const oi__op_param_choices oi__op_param_choice_rows[] = {OI_PARAM_CHOICES(OI__PARAM_CHOICES_ROW)};

/* A STRING parameter with a list of values (OI_PARAM_CHOICES) holds one of
 * them; the error lists them: must be "a", "b" or "c", got "d". */
static oi_status oi__op_check_choice(oi_op op, const char *name, const char *value) {
    const oi__op_param_choices *c = NULL;
    for (size_t i = 0; i < sizeof oi__op_param_choice_rows / sizeof oi__op_param_choice_rows[0] && !c; i++)
        if (oi__op_param_choice_rows[i].op == op && strcmp(oi__op_param_choice_rows[i].name, name) == 0)
            c = &oi__op_param_choice_rows[i];
    if (!c)
        return OI_OK;
    char text[256];
    size_t at = 0, len = strlen(value);
    for (const char *v = c->values; *v;) {
        size_t w = strcspn(v, "|");
        if (w == len && strncmp(v, value, len) == 0)
            return OI_OK;
        const char *sep = at == 0 ? "" : v[w] ? ", " : " or ";
        int put = snprintf(text + at, sizeof text - at, "%s\"%.*s\"", sep, (int)w, v);
        if (put > 0 && (size_t)put < sizeof text - at)
            at += (size_t)put;
        v += w + (v[w] == '|');
    }
    return oi__fail(OI_ERROR_VALIDATION, "%s: %s must be %s, got \"%s\"", oi_op_name(op), name, text, value);
}

/* Unknown, duplicate and mistyped parameters; missing required ones;
 * strings outside their parameter's values. */
static oi_status oi__op_check_attrs(oi_op op, const oi__attr *attrs, size_t n_attrs) {
    const char *name = oi_op_name(op);
    for (size_t i = 0; i < n_attrs; i++) {
        if (!attrs[i].name)
            return oi__fail(OI_ERROR_VALIDATION, "%s: parameter %zu has no name", name, i);
        const oi__op_param_def *p = oi__op_param_resolve(op, attrs[i].name);
        if (!p) {
            char known[256];
            oi__op_param_names(op, known, sizeof known);
            return oi__fail(OI_ERROR_VALIDATION, "%s: unknown parameter '%s' (expected: %s)", name, attrs[i].name,
                            known);
        }
        for (size_t j = 0; j < i; j++)
            if (oi__op_param_resolve(op, attrs[j].name) == p)
                return oi__fail(OI_ERROR_VALIDATION, "%s: parameter '%s' is given twice (as '%s' and '%s')", name,
                                p->name, attrs[j].name, attrs[i].name);
        if (!oi__op_attr_fits(&attrs[i], p->type))
            return oi__fail(OI_ERROR_VALIDATION, "%s: parameter '%s' must be %s, got %s", name, attrs[i].name,
                            oi__op_param_type_name(p->type), oi__op_attr_kind_name(attrs[i].kind));
        if (p->type == OI__PARAM_STRING && oi__op_check_choice(op, p->name, attrs[i].s) != OI_OK)
            return OI_ERROR_VALIDATION;
    }
    for (size_t i = 0; i < OI__PARAM_COUNT; i++) {
        const oi__op_param_def *p = &oi__op_param_defs[i];
        if (p->op != op || !p->required)
            continue;
        bool found = false;
        for (size_t j = 0; j < n_attrs && !found; j++)
            found = oi__op_param_resolve(op, attrs[j].name) == p;
        if (!found)
            return oi__fail(OI_ERROR_VALIDATION, "%s: missing required parameter '%s'", name, p->name);
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Validation: dtypes, accumulate mode, shapes                         */
/* ------------------------------------------------------------------ */
static bool oi__op_dtype_in(oi_dtype t, uint32_t set) {
    return (int)t > 0 && (int)t < 32 && (set & (1u << (unsigned)t)) != 0;
}

static void oi__op_dtype_set_text(uint32_t set, char *text, size_t size) {
    size_t len = 0;
    text[0] = '\0';
    for (int t = 1; t < (int)OI_DTYPE_COUNT; t++) {
        if (!oi__op_dtype_in((oi_dtype)t, set))
            continue;
        int n = snprintf(text + len, size - len, "%s%s", len ? " " : "", oi_dtype_name((oi_dtype)t));
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
}

/* May `acc` accumulate values of dtype `in`? Integers widen strictly and
 * keep their signedness; floats accumulate in f32 or f64, never narrower. */
static bool oi__op_acc_pair_ok(oi_dtype in, oi_dtype acc) {
    if (oi__dtype_is_float(in))
        return (acc == OI_DTYPE_F32 || acc == OI_DTYPE_F64) && oi_dtype_bits(acc) >= oi_dtype_bits(in);
    if (oi__dtype_is_signed(in))
        return oi__op_dtype_in(acc, OI__DTS_S) && oi_dtype_bits(acc) > oi_dtype_bits(in);
    if (oi__dtype_is_unsigned(in))
        return oi__op_dtype_in(acc, OI__DTS_U) && oi_dtype_bits(acc) > oi_dtype_bits(in);
    return false;
}

typedef struct oi__op_mode {
    oi_dtype acc;   /* accumulator dtype, INVALID when not accumulating */
    oi_dtype out;   /* output dtype                                     */
} oi__op_mode;

/* Accumulate mode comes from acc= ([acc] or [acc, out]) or, without it,
 * from a declared output dtype that is a valid accumulator for the input. */
static oi_status oi__op_resolve_acc(oi_op op, const oi__attr *attrs, size_t n_attrs, oi_dtype in,
                                 oi_dtype declared, oi__op_mode *mode) {
    const oi__op_def *def = &oi__op_defs[op];
    const char *name = def->name;
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    const oi__attr *a = (def->flags & OI__F_A) ? oi__op_attr_for(&k, "acc") : NULL;
    oi_dtype acc = OI_DTYPE_INVALID, out = OI_DTYPE_INVALID;
    if (a && a->kind == OI__ATTR_DTYPE_LIST) {
        acc = a->dtypes[0];
        out = arrlen(a->dtypes) > 1 ? a->dtypes[1] : acc;
    } else if (a) {
        acc = out = oi__op_attr_dtype(a);
    } else if ((def->flags & OI__F_A) && oi__dtype_is_tensor_type(declared) && declared != in &&
               oi__op_acc_pair_ok(in, declared) && oi__op_dtype_in(in, def->acc_dtypes)) {
        acc = out = declared;
    }
    mode->acc = acc;
    mode->out = out;
    if (acc == OI_DTYPE_INVALID)
        return OI_OK;
    if (!oi__op_dtype_in(in, def->acc_dtypes)) {
        char set[256];
        oi__op_dtype_set_text(def->acc_dtypes, set, sizeof set);
        return oi__fail(OI_ERROR_VALIDATION, "%s: accumulation is not supported for %s inputs (supported: %s)", name,
                        oi_dtype_name(in), set);
    }
    if (!oi__op_acc_pair_ok(in, acc))
        return oi__fail(OI_ERROR_VALIDATION,
                        "%s: acc=%s cannot accumulate %s inputs (expected a wider integer of the same signedness, "
                        "or f32/f64 for floats)",
                        name, oi_dtype_name(acc) ? oi_dtype_name(acc) : "?", oi_dtype_name(in));
    if (out != acc && out != in)
        return oi__fail(OI_ERROR_VALIDATION, "%s: acc output dtype %s must be the accumulator (%s) or the input dtype (%s)",
                        name, oi_dtype_name(out) ? oi_dtype_name(out) : "?", oi_dtype_name(acc), oi_dtype_name(in));
    return OI_OK;
}

/* Input count: exactly arity, or fewer with OI__F_OPT / OI__F_VAR. */
static bool oi__op_arity_ok(const oi__op_def *def, size_t n_inputs) {
    if (def->flags & OI__F_VAR)
        return n_inputs >= 1 && n_inputs <= (size_t)def->arity;
    if (def->flags & OI__F_OPT)
        return n_inputs + 1 == (size_t)def->arity || n_inputs == (size_t)def->arity;
    return n_inputs == (size_t)def->arity;
}

static oi_status oi__op_check_input_dtypes(oi_op op, const oi__op_sig *inputs, size_t n_inputs, bool accumulating) {
    const oi__op_def *def = &oi__op_defs[op];
    oi_dtype t = inputs[0].dtype;
    for (size_t i = 1; i < n_inputs && !(def->flags & OI__F_MIX); i++) {
        bool cond_bool = op == OI_OP_filter && i == 2 && inputs[i].dtype == OI_DTYPE_BOOL;
        if (inputs[i].dtype != t && !cond_bool)
            return oi__fail(OI_ERROR_VALIDATION, "%s: input %zu has dtype %s but input 0 has %s (all inputs share one dtype)",
                            def->name, i, oi_dtype_name(inputs[i].dtype) ? oi_dtype_name(inputs[i].dtype) : "?",
                            oi_dtype_name(t) ? oi_dtype_name(t) : "?");
    }
    uint32_t allowed = def->dtypes | (accumulating ? def->acc_dtypes : 0u);
    if (!oi__op_dtype_in(t, allowed)) {
        char set[256];
        oi__op_dtype_set_text(def->dtypes, set, sizeof set);
        if (oi__op_dtype_in(t, def->acc_dtypes))
            return oi__fail(OI_ERROR_VALIDATION, "%s: dtype %s is only supported with acc= (expected one of: %s)",
                            def->name, oi_dtype_name(t), set);
        return oi__fail(OI_ERROR_VALIDATION, "%s: unsupported dtype %s (expected one of: %s)", def->name,
                        oi_dtype_name(t) ? oi_dtype_name(t) : "invalid", set);
    }
    return OI_OK;
}

static void oi__op_shape_text(int ndim, const int64_t *shape, char *text, size_t size) {
    size_t len = (size_t)snprintf(text, size, "[");
    for (int i = 0; i < ndim && len < size; i++)
        len += (size_t)snprintf(text + len, size - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (len < size)
        snprintf(text + len, size - len, "]");
}

/* numpy broadcasting of `b` into `out` (right-aligned, 1 stretches). */
static oi_status oi__op_broadcast_into(const char *name, oi__op_sig *out, const oi__op_sig *b) {
    int ndim = out->ndim > b->ndim ? out->ndim : b->ndim;
    int64_t shape[OI_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int ia = i - (ndim - out->ndim), ib = i - (ndim - b->ndim);
        int64_t da = ia >= 0 ? out->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[128], sb[128];
            oi__op_shape_text(out->ndim, out->shape, sa, sizeof sa);
            oi__op_shape_text(b->ndim, b->shape, sb, sizeof sb);
            return oi__fail(OI_ERROR_VALIDATION, "%s: shapes %s and %s do not broadcast (%lld vs %lld)", name, sa, sb,
                            (long long)da, (long long)db);
        }
        shape[i] = da == 1 ? db : da;
    }
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
    return OI_OK;
}

static bool oi__op_same_shape(const oi__op_sig *a, const oi__op_sig *b) {
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

static oi_status oi__op_shape_elementwise(oi_op op, const oi__op_sig *inputs, size_t n_inputs, oi__op_sig *out) {
    const oi__op_def *def = &oi__op_defs[op];
    out->ndim = inputs[0].ndim;
    memcpy(out->shape, inputs[0].shape, sizeof out->shape);
    for (size_t i = 1; i < n_inputs; i++) {
        if (def->flags & OI__F_B) {
            if (oi__op_broadcast_into(def->name, out, &inputs[i]) != OI_OK)
                return OI_ERROR_VALIDATION;
        } else if (!oi__op_same_shape(&inputs[0], &inputs[i])) {
            char sa[128], sb[128];
            oi__op_shape_text(inputs[0].ndim, inputs[0].shape, sa, sizeof sa);
            oi__op_shape_text(inputs[i].ndim, inputs[i].shape, sb, sizeof sb);
            return oi__fail(OI_ERROR_VALIDATION, "%s: input shapes must be equal, got %s and %s", def->name, sa, sb);
        }
    }
    return OI_OK;
}

static oi_status oi__op_shape_matmul(const oi__op_sig *a, const oi__op_sig *b, oi__op_sig *out) {
    if (a->ndim < 2 || b->ndim < 2)
        return oi__fail(OI_ERROR_VALIDATION, "matmul: inputs need rank >= 2, got ranks %d and %d", a->ndim, b->ndim);
    int64_t k_a = a->shape[a->ndim - 1], k_b = b->shape[b->ndim - 2];
    if (k_a != k_b) {
        char sa[128], sb[128];
        oi__op_shape_text(a->ndim, a->shape, sa, sizeof sa);
        oi__op_shape_text(b->ndim, b->shape, sb, sizeof sb);
        return oi__fail(OI_ERROR_VALIDATION, "matmul: inner dimensions differ: %s x %s (%lld vs %lld)", sa, sb,
                        (long long)k_a, (long long)k_b);
    }
    oi__op_sig batch_a = *a, batch_b = *b;
    batch_a.ndim -= 2;
    batch_b.ndim -= 2;
    if (oi__op_broadcast_into("matmul", &batch_a, &batch_b) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (batch_a.ndim + 2 > OI_MAX_DIMS)
        return oi__fail(OI_ERROR_VALIDATION, "matmul: result rank exceeds %d", OI_MAX_DIMS);
    out->ndim = batch_a.ndim + 2;
    memcpy(out->shape, batch_a.shape, sizeof(int64_t) * (size_t)batch_a.ndim);
    out->shape[out->ndim - 2] = a->shape[a->ndim - 2];
    out->shape[out->ndim - 1] = b->shape[b->ndim - 1];
    return OI_OK;
}

/* Which axes a reduction folds: a mask over the input's dims. */
static oi_status oi__reduce_axes(const oi__kernel_args *k, int ndim, bool *reduced) {
    const char *name = oi_op_name(k->op);
    const oi__attr *a = oi__op_attr_for(k, oi__op_defs[k->op].shape == OI__SHAPE_ARGREDUCE ? "axis" : "axes");
    for (int i = 0; i < ndim; i++)
        reduced[i] = false;
    if (!a)
        return oi__fail(OI_ERROR_VALIDATION, "%s: missing required parameter 'axes'", name);
    int64_t single = a->i;
    const int64_t *axes = a->kind == OI__ATTR_INT_LIST ? a->ints : &single;
    ptrdiff_t count = a->kind == OI__ATTR_INT_LIST ? arrlen(a->ints) : 1;
    if (count == 0)
        return oi__fail(OI_ERROR_VALIDATION, "%s: axes must not be empty", name);
    for (ptrdiff_t i = 0; i < count; i++) {
        int64_t axis = axes[i] < 0 ? axes[i] + ndim : axes[i];
        if (axis < 0 || axis >= ndim)
            return oi__fail(OI_ERROR_VALIDATION, "%s: axis %lld is out of range for rank %d", name,
                            (long long)axes[i], ndim);
        reduced[axis] = true;
    }
    return OI_OK;
}

static oi_status oi__op_shape_reduce(const oi__kernel_args *k, const oi__op_sig *in, oi__op_sig *out) {
    bool reduced[OI_MAX_DIMS];
    if (oi__reduce_axes(k, in->ndim, reduced) != OI_OK)
        return OI_ERROR_VALIDATION;
    bool keepdims = oi__op_param_bool(k, "keepdims");
    out->ndim = 0;
    for (int i = 0; i < in->ndim; i++) {
        if (!reduced[i])
            out->shape[out->ndim++] = in->shape[i];
        else if (keepdims)
            out->shape[out->ndim++] = 1;
    }
    return OI_OK;
}

/* cast: any number to a float; floats or narrower same-signedness
 * integers to an integer; never to packed types, bool or bitset. */
static oi_status oi__op_check_cast(oi_dtype in, oi_dtype to) {
    const char *in_name = oi_dtype_name(in), *to_name = oi_dtype_name(to) ? oi_dtype_name(to) : "?";
    if (!oi__op_dtype_in(to, OI__DTS_F | OI__DTS_S | OI__DTS_U))
        return oi__fail(OI_ERROR_VALIDATION, "cast: cannot cast to %s (targets: floats, i8..i64, u8..u64)", to_name);
    if (in == to || oi__dtype_is_float(to) || oi__dtype_is_float(in))
        return OI_OK;
    bool same_sign = oi__dtype_is_signed(in) == oi__dtype_is_signed(to);
    if (!same_sign)
        return oi__fail(OI_ERROR_VALIDATION, "cast: %s -> %s changes signedness (cast through a float or a wider type)",
                        in_name, to_name);
    if (oi_dtype_bits(to) <= oi_dtype_bits(in))
        return oi__fail(OI_ERROR_VALIDATION, "cast: %s -> %s narrows an integer (only widening integer casts)", in_name,
                        to_name);
    return OI_OK;
}

/* A scalar parameter used on integer data must be an integer (+-inf
 * saturates); unsigned data needs a non-negative value where noted. */
static oi_status oi__op_check_int_scalar(const oi__kernel_args *k, const char *param, oi_dtype t, bool non_negative) {
    const oi__attr *a = oi__op_attr_for(k, param);
    if (!a || oi__dtype_is_float(t))
        return OI_OK;
    const char *name = oi_op_name(k->op);
    if (a->kind == OI__ATTR_FLOAT && !isinf(a->f) && (a->f != a->f || a->f != floor(a->f)))
        return oi__fail(OI_ERROR_VALIDATION, "%s: parameter '%s' must be an integer for %s data, got %g", name,
                        a->name, oi_dtype_name(t), a->f);
    if (non_negative && !oi__dtype_is_signed(t) && t != OI_DTYPE_BOOL && oi__op_attr_as_f64(a) < 0)
        return oi__fail(OI_ERROR_VALIDATION, "%s: parameter '%s' must be >= 0 for %s data, got %g", name, a->name,
                        oi_dtype_name(t), oi__op_attr_as_f64(a));
    return OI_OK;
}

static oi_status oi__op_check_op_params(const oi__kernel_args *k, oi_dtype t) {
    switch (k->op) {
    case OI_OP_relu:
        if (oi__op_check_int_scalar(k, "negative_slope", t, false) || oi__op_check_int_scalar(k, "clamp_min", t, false))
            return OI_ERROR_VALIDATION;
        return oi__op_check_int_scalar(k, "clamp_max", t, false);
    case OI_OP_clamp:
        if (oi__op_check_int_scalar(k, "min", t, false))
            return OI_ERROR_VALIDATION;
        return oi__op_check_int_scalar(k, "max", t, false);
    case OI_OP_div: case OI_OP_floor_div:
        return oi__op_check_int_scalar(k, "div_by_zero_mask", t, true);
    case OI_OP_fill:
        return oi__op_check_int_scalar(k, "value", t, true);
    case OI_OP_cast:
        return oi__op_check_cast(t, oi__op_attr_dtype(oi__op_attr_for(k, "to")));
    default:
        return OI_OK;
    }
}

static oi_dtype oi__op_out_dtype(const oi__kernel_args *k, oi_dtype in, const oi__op_mode *mode) {
    switch (oi__op_defs[k->op].out) {
    case OI__OUT_SAME: return mode->acc != OI_DTYPE_INVALID ? mode->out : in;
    case OI__OUT_BOOL: return OI_DTYPE_BOOL;
    case OI__OUT_I8: return OI_DTYPE_I8;
    case OI__OUT_U8: return OI_DTYPE_U8;
    case OI__OUT_I64: return OI_DTYPE_I64;
    case OI__OUT_F32: return OI_DTYPE_F32;
    case OI__OUT_TO: return oi__op_attr_dtype(oi__op_attr_for(k, "to"));
    }
    return in;
}

static oi_status oi__op_check(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs,
                              size_t n_inputs, oi_dtype declared, oi__op_sig *out, oi__op_mode *mode) {
    if (!oi__op_valid(op))
        return oi__fail(OI_ERROR_VALIDATION, "unknown op %d", (int)op);
    const oi__op_def *def = &oi__op_defs[op];
    if (!oi__op_arity_ok(def, n_inputs))
        return oi__fail(OI_ERROR_VALIDATION, "%s: expects %s%d input%s, got %zu", def->name,
                        (def->flags & OI__F_VAR) ? "1 to " : (def->flags & OI__F_OPT) ? "(last optional) " : "",
                        def->arity, def->arity == 1 ? "" : "s", n_inputs);
    for (size_t i = 0; i < n_inputs; i++) {
        if (inputs[i].ndim < 0 || inputs[i].ndim > OI_MAX_DIMS)
            return oi__fail(OI_ERROR_VALIDATION, "%s: input %zu has rank %d (at most %d)", def->name, i,
                            inputs[i].ndim, OI_MAX_DIMS);
        for (int d = 0; d < inputs[i].ndim; d++)
            if (inputs[i].shape[d] < 0 || inputs[i].shape[d] > OI__MAX_DIM)
                return oi__fail(OI_ERROR_VALIDATION, "%s: input %zu has dimension %lld (0 to 2^40)", def->name, i,
                                (long long)inputs[i].shape[d]);
    }
    if (n_attrs && !attrs)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %zu parameters but no parameter array", def->name, n_attrs);
    if (oi__op_check_attrs(op, attrs, n_attrs) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi_dtype in = inputs[0].dtype;
    if (oi__op_resolve_acc(op, attrs, n_attrs, in, declared, mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (oi__op_check_input_dtypes(op, inputs, n_inputs, mode->acc != OI_DTYPE_INVALID) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    if (oi__op_check_op_params(&k, in) != OI_OK)
        return OI_ERROR_VALIDATION;

    memset(out, 0, sizeof *out);
    out->dtype = oi__op_out_dtype(&k, in, mode);
    oi_status s = OI_OK;
    switch (def->shape) {
    case OI__SHAPE_EW: s = oi__op_shape_elementwise(op, inputs, n_inputs, out); break;
    case OI__SHAPE_MATMUL: s = oi__op_shape_matmul(&inputs[0], &inputs[1], out); break;
    case OI__SHAPE_REDUCE: case OI__SHAPE_ARGREDUCE: s = oi__op_shape_reduce(&k, &inputs[0], out); break;
    case OI__SHAPE_ALL: out->ndim = 0; break;
    case OI__SHAPE_CUSTOM: s = oi__shape_fns[op](&k, inputs, n_inputs, out); break;
    }
    if (s != OI_OK)
        return s;
    if (oi__dtype_is_tensor_type(declared) && declared != out->dtype) {
        if (def->flags & OI__F_A)
            return oi__fail(OI_ERROR_VALIDATION,
                            "%s: the output is declared %s but %s inputs give %s (acc= can widen: wider integer of "
                            "the same signedness, or f32/f64)",
                            def->name, oi_dtype_name(declared), oi_dtype_name(in), oi_dtype_name(out->dtype));
        return oi__fail(OI_ERROR_VALIDATION, "%s: the output is declared %s but the op gives %s", def->name,
                        oi_dtype_name(declared), oi_dtype_name(out->dtype));
    }
    return OI_OK;
}

oi_status oi__op_infer(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs, size_t n_inputs,
                       oi_dtype declared_out_dtype, oi__op_sig *out) {
    oi_dtype acc;
    return oi__op_infer_acc(op, attrs, n_attrs, inputs, n_inputs, declared_out_dtype, out, &acc);
}

oi_status oi__op_infer_acc(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs,
                           size_t n_inputs, oi_dtype declared_out_dtype, oi__op_sig *out, oi_dtype *acc) {
    oi__op_mode mode;
    if (!out || !acc || (n_inputs && !inputs))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi__op_infer: missing inputs or output");
    oi_status s = oi__op_check(op, attrs, n_attrs, inputs, n_inputs, declared_out_dtype, out, &mode);
    *acc = mode.acc;
    return s;
}

/* ------------------------------------------------------------------ */
/* Shared kernel helpers                                               */
/* ------------------------------------------------------------------ */
/* The value domain an element computes in. */
typedef enum oi__op_domain { OI__DOM_FLOAT, OI__DOM_SIGNED, OI__DOM_UNSIGNED } oi__op_domain;

static oi__op_domain oi__op_domain_of(oi_dtype t) {
    if (oi__dtype_is_float(t))
        return OI__DOM_FLOAT;
    return oi__dtype_is_signed(t) ? OI__DOM_SIGNED : OI__DOM_UNSIGNED; /* bool, bitset: unsigned */
}

/* Walks the output elements in row-major order, keeping each operand's
 * element index; broadcast dims have stride 0 (nothing is materialized).
 * Operands 0..n_in-1 are the inputs, operand n_in the output. */
#define OI__MAX_OPERANDS 9 /* concat: 8 inputs + the output */
typedef struct oi__ew_iter {
    int ndim, n;
    int64_t shape[OI_MAX_DIMS];
    int64_t index[OI_MAX_DIMS];
    int64_t strides[OI__MAX_OPERANDS][OI_MAX_DIMS];
    int64_t at[OI__MAX_OPERANDS];
} oi__ew_iter;

static void oi__ew_bind(oi__ew_iter *it, int slot, const oi__tensor *t) {
    int lead = it->ndim - t->ndim;
    for (int d = 0; d < it->ndim; d++) {
        int td = d - lead;
        it->strides[slot][d] = (td < 0 || t->shape[td] == 1) ? 0 : t->strides[td];
    }
    it->at[slot] = t->offset;
}

static void oi__ew_init(oi__ew_iter *it, const oi__tensor *const *in, size_t n_in, const oi__tensor *out) {
    memset(it, 0, sizeof *it);
    it->ndim = out->ndim;
    it->n = (int)n_in + 1;
    memcpy(it->shape, out->shape, sizeof it->shape);
    for (size_t i = 0; i < n_in; i++)
        oi__ew_bind(it, (int)i, in[i]);
    oi__ew_bind(it, (int)n_in, out);
}

static void oi__ew_next(oi__ew_iter *it) {
    for (int d = it->ndim - 1; d >= 0; d--) {
        for (int s = 0; s < it->n; s++)
            it->at[s] += it->strides[s][d];
        if (++it->index[d] < it->shape[d])
            return;
        for (int s = 0; s < it->n; s++)
            it->at[s] -= it->strides[s][d] * it->shape[d];
        it->index[d] = 0;
    }
}

static const void *oi__op_cdata(const oi__tensor *t) { return oi__tensor_data(t); }

/* Wraps v to a `bits`-wide two's complement / unsigned value. */
static int64_t oi__op_wrap_signed(uint64_t v, unsigned bits) {
    if (bits >= 64)
        return (int64_t)v;
    uint64_t sign_bit = (uint64_t)1 << (bits - 1);
    v &= (sign_bit << 1) - 1u;
    return (int64_t)((v ^ sign_bit) - sign_bit);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */
/* ------------------------------------------------------------------ */
static void oi__op_tensor_sig(const oi__tensor *t, oi__op_sig *sig) {
    memset(sig, 0, sizeof *sig);
    sig->dtype = t->dtype;
    sig->ndim = t->ndim;
    memcpy(sig->shape, t->shape, sizeof(int64_t) * (size_t)(t->ndim > 0 ? t->ndim : 0));
}

static bool oi__op_same_layout(const oi__tensor *a, const oi__tensor *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->offset != b->offset)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || (a->shape[i] != 1 && a->strides[i] != b->strides[i]))
            return false;
    return true;
}

/* An elementwise kernel may write over an input that it reads at the same
 * element; anything else sharing the output's storage needs a temporary. */
static bool oi__op_needs_temp(oi_op op, const oi__tensor *const *in, size_t n_in, const oi__tensor *out) {
    for (size_t i = 0; i < n_in; i++) {
        if (in[i]->storage != out->storage)
            continue;
        if (oi__op_defs[op].shape != OI__SHAPE_EW || !oi__op_same_layout(in[i], out))
            return true;
    }
    return false;
}

static void oi__op_copy_elements(const oi__tensor *src, oi__tensor *dst) {
    if (src->dtype == dst->dtype && !oi__dtype_is_packed(dst->dtype) && oi__tensor_is_contiguous(src) &&
        oi__tensor_is_contiguous(dst)) { /* the common case: a dense temporary back into a dense output */
        size_t esize = oi_dtype_bits(dst->dtype) / 8;
        size_t n = (size_t)oi__shape_numel(dst->ndim, dst->shape);
        memmove((char *)oi__tensor_data(dst) + (size_t)dst->offset * esize,
                (const char *)oi__op_cdata(src) + (size_t)src->offset * esize, n * esize);
        return;
    }
    oi__ew_iter it;
    oi__ew_init(&it, &src, 1, dst);
    int64_t n = oi__shape_numel(dst->ndim, dst->shape);
    for (int64_t i = 0; i < n; i++, oi__ew_next(&it))
        oi__store_bits(dst->dtype, oi__tensor_data(dst), it.at[1], oi__load_bits(src->dtype, oi__op_cdata(src), it.at[0]));
}

/* The operand's name in messages: "input 2", or "the output" for index -1. */
static const char *oi__op_operand_text(int index, char *text, size_t size) {
    if (index < 0)
        return "the output";
    snprintf(text, size, "input %d", index);
    return text;
}

static oi_status oi__op_check_tensor(const char *name, int index, const oi__tensor *t) {
    char what[32];
    if (!t || !t->storage || (!t->storage->data && t->storage->nbytes))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s has no data", name, oi__op_operand_text(index, what, sizeof what));
    if (t->ndim < 0 || t->ndim > OI_MAX_DIMS || !oi__dtype_is_tensor_type(t->dtype))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s has a bad rank or dtype", name,
                        oi__op_operand_text(index, what, sizeof what));
    /* every reachable element must lie inside the storage */
    int64_t lo = t->offset, hi = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0 || t->shape[d] > OI__MAX_DIM || t->strides[d] > OI__MAX_DIM || t->strides[d] < -OI__MAX_DIM)
            return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s has a dimension or stride out of range", name,
                            oi__op_operand_text(index, what, sizeof what));
        if (t->shape[d] == 0)
            return OI_OK;
        int64_t span = t->strides[d] * (t->shape[d] - 1);
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    uint64_t capacity_bits = (uint64_t)t->storage->nbytes * 8u;
    if (lo < 0 || (uint64_t)(hi + 1) * oi_dtype_bits(t->dtype) > capacity_bits)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s reaches outside its storage", name,
                        oi__op_operand_text(index, what, sizeof what));
    return OI_OK;
}

/* Storage bounds of the inputs and the output (cheap: no signature check). */
static oi_status oi__op_check_operands(const char *name, const oi__tensor *const *inputs, size_t n_inputs,
                                       const oi__tensor *out) {
    if (n_inputs > OI__MAX_OPERANDS - 1 || (n_inputs && !inputs))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: bad input list (%zu inputs)", name, n_inputs);
    for (size_t i = 0; i < n_inputs; i++)
        if (oi__op_check_tensor(name, (int)i, inputs[i]) != OI_OK)
            return OI_ERROR_INVALID_ARGUMENT;
    return oi__op_check_tensor(name, -1, out);
}

/* The kernel into out, or into a temporary when out shares storage with an
 * input the kernel would overwrite before reading. */
static oi_status oi__op_run_kernel(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *const *inputs,
                                   size_t n_inputs, oi__tensor *out, oi_dtype acc) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    k.in = inputs;
    k.n_in = n_inputs;
    k.out = out;
    k.acc = acc;
    if (!oi__op_needs_temp(op, inputs, n_inputs, out))
        return oi__cpu_kernels[op](&k);

    oi__tensor *temp = oi__tensor_new(out->dtype, out->ndim, out->shape);
    if (!temp)
        return OI_ERROR_OUT_OF_MEMORY;
    k.out = temp;
    oi_status s = oi__cpu_kernels[op](&k);
    if (s == OI_OK)
        oi__op_copy_elements(temp, out);
    oi__tensor_free(temp);
    return s;
}

oi_status oi__op_run_cpu(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *const *inputs,
                         size_t n_inputs, oi__tensor *out) {
    if (!oi__op_valid(op))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    const char *name = oi__op_defs[op].name;
    if (oi__op_check_operands(name, inputs, n_inputs, out) != OI_OK)
        return OI_ERROR_INVALID_ARGUMENT;
    oi__op_sig sigs[OI__MAX_OPERANDS], want;
    for (size_t i = 0; i < n_inputs; i++)
        oi__op_tensor_sig(inputs[i], &sigs[i]);
    oi__op_mode mode;
    if (oi__op_check(op, attrs, n_attrs, sigs, n_inputs, out->dtype, &want, &mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi__op_sig have;
    oi__op_tensor_sig(out, &have);
    if (!oi__op_same_shape(&have, &want)) {
        char sa[128], sb[128];
        oi__op_shape_text(have.ndim, have.shape, sa, sizeof sa);
        oi__op_shape_text(want.ndim, want.shape, sb, sizeof sb);
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: the output has shape %s but the op gives %s", name, sa, sb);
    }
    return oi__op_run_kernel(op, attrs, n_attrs, inputs, n_inputs, out, mode.acc);
}

oi_status oi__op_run_cpu_checked(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *const *inputs,
                                 size_t n_inputs, oi__tensor *out, oi_dtype acc) {
    if (!oi__op_valid(op))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    if (oi__op_check_operands(oi__op_defs[op].name, inputs, n_inputs, out) != OI_OK)
        return OI_ERROR_INVALID_ARGUMENT;
    return oi__op_run_kernel(op, attrs, n_attrs, inputs, n_inputs, out, acc);
}

/* ------------------------------------------------------------------ */
/* The op families                                                     */
/* ------------------------------------------------------------------ */
#include "elementwise.c"
#include "compare.c"
#include "matmul.c"
#include "reduce.c"
#include "cast.c"
#include "shape.c"
#include "conv.c"
#include "math.c"
#include "nn.c"
#include "quant.c"
