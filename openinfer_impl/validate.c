/* validate.c - checks a graph against a model and builds the plan the
 * executor runs (plan.h).
 *
 * Order of the checks: named sizes -> declarations and their model links ->
 * assign temporaries -> which variables take their shape at run time ->
 * every node of every block (ops through oi__op_infer, cache rules, control
 * flow) -> yield/await rules. The first failure stops the build; its message
 * names the statement ("file:line: error: text: reason") and the model entry. */
#include "internal.h"
#include "plan.h"

#include <errno.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* "f32[1024, 3]" into buf; a negative dim (set at run time) prints '?'. */
static const char *oi__sig_text(char *buf, size_t cap, oi_dtype dtype, int ndim, const int64_t *shape) {
    const char *name = oi_dtype_name(dtype);
    int n = snprintf(buf, cap, "%s[", name ? name : "?");
    for (int i = 0; i < ndim && n > 0 && (size_t)n < cap; i++)
        n += shape[i] < 0 ? snprintf(buf + n, cap - (size_t)n, i ? ", ?" : "?")
                          : snprintf(buf + n, cap - (size_t)n, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "]");
    return buf;
}

const char *oi__slot_sig_text(char *buf, size_t cap, const oi__slot *s) {
    int64_t shape[OI_MAX_DIMS];
    for (int d = 0; d < s->ndim; d++)
        shape[d] = (s->runtime_dims >> d & 1u) ? -1 : s->shape[d];
    return oi__sig_text(buf, cap, s->dtype, s->ndim, shape);
}

bool oi__slot_fits(const oi__slot *s, int ndim, const int64_t *shape) {
    if (ndim != s->ndim)
        return false;
    for (int d = 0; d < ndim; d++)
        if (!(s->runtime_dims >> d & 1u) && shape[d] != s->shape[d])
            return false;
    return true;
}

static bool oi__same_shape(int na, const int64_t *a, int nb, const int64_t *b) {
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* A model shape (uint64 dims) as int64. */
static void oi__model_shape(const oi_tensor_info *t, int *ndim, int64_t *shape) {
    *ndim = (int)(t->ndim < OI_MAX_DIMS ? t->ndim : OI_MAX_DIMS);
    for (int i = 0; i < *ndim; i++)
        shape[i] = (int64_t)t->dims[i];
}

static bool oi__is_int_text(const char *s, int64_t *out) {
    while (*s == ' ')
        s++;
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return false;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    while (end && *end == ' ')
        end++;
    if (!end || *end)
        return false;
    *out = (int64_t)v;
    return true;
}

/* A string-map lookup that writes nothing (shgeti stores its result in the
 * map), so consumer threads may look names up at the same time. */
static ptrdiff_t oi__sh_find(void *map, size_t elem_size, size_t key_size, const char *key) {
    ptrdiff_t index = -1;
    if (map && key)
        stbds_hmget_key_ts(map, elem_size, (void *)key, key_size, &index, STBDS_HM_STRING);
    return index;
}

int oi__plan_slot(const oi__plan *p, const char *name) {
    ptrdiff_t i = oi__sh_find(p->by_name, sizeof *p->by_name, sizeof p->by_name->key, name);
    return i < 0 ? -1 : p->by_name[i].value;
}

bool oi__plan_size(const oi__plan *p, const char *name, int64_t *out) {
    ptrdiff_t i = oi__sh_find(p->sizes, sizeof *p->sizes, sizeof p->sizes->key, name);
    if (i < 0)
        return false;
    *out = p->sizes[i].value;
    return true;
}

/* One dim: "16", "B", "3*D", "L*R*K". */
static bool oi__resolve_dim(const oi__plan *p, const char *text, int64_t *out, char *bad, size_t bad_cap) {
    int64_t product = 1;
    const char *s = text;
    for (;;) {
        while (*s == ' ')
            s++;
        const char *end = strchr(s, '*');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        while (len && s[len - 1] == ' ')
            len--;
        char part[128];
        if (len == 0 || len >= sizeof part) {
            snprintf(bad, bad_cap, "malformed dim '%s'", text);
            return false;
        }
        memcpy(part, s, len);
        part[len] = '\0';
        int64_t v;
        if (!oi__is_int_text(part, &v) && !oi__plan_size(p, part, &v)) {
            snprintf(bad, bad_cap, "unknown size '%s'%s", part,
                     p->model ? " (the model has no size variable of that name)" : " (no model given)");
            return false;
        }
        if (v < 0) { /* also a size variable beyond 2^63 - 1 */
            snprintf(bad, bad_cap, "dim '%s' is negative or does not fit 64 bits", part);
            return false;
        }
        if (v != 0 && product > INT64_MAX / v) {
            snprintf(bad, bad_cap, "dim '%s' overflows 64 bits", text);
            return false;
        }
        product *= v;
        if (!end)
            break;
        s = end + 1;
    }
    *out = product;
    return true;
}

/* runtime: where '?' (a dim set at run time) may appear, its bits; NULL
 * where it may not. A '?' dim resolves to 1. */
/* "E(n)": E and n into name/index (each < cap); false otherwise. */
static bool oi__split_entry_size(const char *text, char *name, char *index, size_t cap) {
    const char *open = strchr(text, '('), *close = open ? strchr(open, ')') : NULL;
    if (!open || !close || close[1] || (size_t)(open - text) >= cap || (size_t)(close - open - 1) >= cap || open == text)
        return false;
    memcpy(name, text, (size_t)(open - text));
    name[open - text] = '\0';
    memcpy(index, open + 1, (size_t)(close - open - 1));
    index[close - open - 1] = '\0';
    return index[0] != '\0';
}

static oi_status oi__resolve_dims_entry(const oi__plan *p, char **dims, const oi__src *src, const char *what,
                                        int *ndim, int64_t *shape, unsigned *runtime, const oi__var *table,
                                        const char **entry);

static oi_status oi__resolve_dims(const oi__plan *p, char **dims, const oi__src *src, const char *what,
                                  int *ndim, int64_t *shape, unsigned *runtime) {
    return oi__resolve_dims_entry(p, dims, src, what, ndim, shape, runtime, NULL, NULL);
}

/* table: a prefix table, whose dims may be sizes per entry ("E(n)", n one
 * of its indices): recorded in entry[d], resolved to 1 and a runtime bit. */
static oi_status oi__resolve_dims_entry(const oi__plan *p, char **dims, const oi__src *src, const char *what,
                                        int *ndim, int64_t *shape, unsigned *runtime, const oi__var *table,
                                        const char **entry) {
    int n = (int)arrlen(dims);
    if (n > OI_MAX_DIMS)
        return oi__fail_at(OI_ERROR_VALIDATION, src, "%s has %d dims; at most %d are supported", what, n, OI_MAX_DIMS);
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        char bad[256];
        char name[64], index[64];
        if (strchr(dims[i], '(')) {
            bool ok = table && oi__split_entry_size(dims[i], name, index, sizeof name);
            int k = -1;
            for (int j = 0; ok && j < (int)arrlen(table->table_indices); j++)
                if (strcmp(table->table_indices[j], index) == 0)
                    k = j;
            if (!ok || k < 0)
                return oi__fail_at(OI_ERROR_VALIDATION, src, "invalid dims for %s: a size per entry (%s) belongs to a prefix "
                                   "table and names one of its indices (W(n): f32[E(n), D])", what, dims[i]);
            entry[i] = dims[i];
            *runtime |= 1u << i;
            shape[i] = 1;
            continue;
        }
        if (strcmp(dims[i], "?") == 0) {
            if (!runtime)
                return oi__fail_at(OI_ERROR_VALIDATION, src, "invalid dims for %s: a dim set at run time ('?') is only "
                                   "for temporaries (OI_ASSIGN) and volatile variables", what);
            *runtime |= 1u << i;
            shape[i] = 1;
            continue;
        }
        if (!oi__resolve_dim(p, dims[i], &shape[i], bad, sizeof bad))
            return oi__fail_at(OI_ERROR_VALIDATION, src, "invalid dims for %s: %s", what, bad);
        /* every element count times the widest element (8 bytes) fits int64 */
        if (shape[i] != 0 && numel > OI__MAX_ELEMENTS / shape[i])
            return oi__fail_at(OI_ERROR_VALIDATION, src, "invalid dims for %s: more than 2^60 elements", what);
        numel *= shape[i];
    }
    *ndim = n;
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Prefix-table patterns                                               */
/* ------------------------------------------------------------------ */

char *oi__plan_pattern_name(const oi__slot *s, const int64_t *index_values) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    const char *p = s->pattern;
    while (*p) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            int which = -1;
            if (close && s->decl) {
                for (int k = 0; k < s->n_indices; k++) {
                    const char *idx = s->decl->table_indices[k];
                    if (strlen(idx) == (size_t)(close - p - 1) && strncmp(idx, p + 1, (size_t)(close - p - 1)) == 0)
                        which = k;
                }
            }
            if (which >= 0) {
                oi__buf_printf(&b, "%lld", (long long)index_values[which]);
                p = close + 1;
                continue;
            }
        }
        oi__buf_append(&b, p, 1);
        p++;
    }
    return oi__buf_take(&b);
}

/* Checks that every {name} of a pattern is one of the declared indices and
 * that every index appears. */
static oi_status oi__check_pattern(const oi__slot *s) {
    const char *p = s->pattern;
    bool used[OI_MAX_DIMS] = {false};
    while ((p = strchr(p, '{')) != NULL) {
        const char *close = strchr(p, '}');
        if (!close)
            return oi__fail_at(OI_ERROR_VALIDATION, s->src, "@pattern(\"%s\") of %s has an unclosed '{'", s->pattern, s->name);
        int which = -1;
        for (int k = 0; k < s->n_indices; k++) {
            const char *idx = s->decl->table_indices[k];
            if (strlen(idx) == (size_t)(close - p - 1) && strncmp(idx, p + 1, (size_t)(close - p - 1)) == 0)
                which = k;
        }
        if (which < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, s->src, "@pattern(\"%s\") of %s names '%.*s', which is not one of its indices",
                               s->pattern, s->name, (int)(close - p - 1), p + 1);
        used[which] = true;
        p = close + 1;
    }
    for (int k = 0; k < s->n_indices; k++)
        if (!used[k])
            return oi__fail_at(OI_ERROR_VALIDATION, s->src, "@pattern(\"%s\") of %s does not use its index '%s'",
                               s->pattern, s->name, s->decl->table_indices[k]);
    return OI_OK;
}

const oi_tensor_info *oi__plan_prefix_tensor(const oi__plan *p, const oi__slot *s, const int64_t *index_values,
                                             const oi__src *src) {
    char *name = oi__plan_pattern_name(s, index_values);
    if (!name)
        return NULL;
    const oi_tensor_info *t = p->model ? oi_model_find_tensor(p->model, name) : NULL;
    char want[160], have[160];
    oi__slot_sig_text(want, sizeof want, s); /* '?' where a size per entry goes */
    if (!t) {
        oi__fail_at(OI_ERROR_VALIDATION, src, "%s: the model has no tensor '%s' (pattern \"%s\")", s->name, name,
                    s->pattern);
    } else {
        int nd;
        int64_t shape[OI_MAX_DIMS];
        oi__model_shape(t, &nd, shape);
        if (t->dtype != s->dtype || !oi__slot_fits(s, nd, shape)) {
            oi__fail_at(OI_ERROR_VALIDATION, src, "%s: model tensor '%s' is %s but %s declares %s", s->name, name,
                        oi__sig_text(have, sizeof have, t->dtype, nd, shape), s->name, want);
            t = NULL;
        } else if (!t->has_data) {
            oi__fail_at(OI_ERROR_VALIDATION, src, "%s: model tensor '%s' has no data", s->name, name);
            t = NULL;
        }
    }
    oi__free(name);
    return t;
}

/* ------------------------------------------------------------------ */
/* Declarations                                                        */
/* ------------------------------------------------------------------ */

static int oi__index_position(const oi__var *v, const char *name) {
    for (int k = 0; k < (int)arrlen(v->table_indices); k++)
        if (strcmp(v->table_indices[k], name) == 0)
            return k;
    return -1;
}

/* Links a declaration to the model tensor (or scalar metadata) of its name
 * or @ref, checking dtype and shape. */
static oi_status oi__link_model(oi__plan *p, oi__slot *s) {
    const oi__var *v = s->decl;
    s->model_name = v->ref_name ? v->ref_name : v->name;
    if (!p->model || s->is_prefix || s->n_indices > 0) {
        if (v->ref_name && !s->is_prefix)
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "%s: @ref(\"%s\"): %s", v->name, v->ref_name,
                               p->model ? "a table cannot link to one model tensor" : "no model to link to");
        return OI_OK;
    }
    const oi_tensor_info *t = oi_model_find_tensor(p->model, s->model_name);
    char want[160], have[160];
    oi__sig_text(want, sizeof want, s->dtype, s->ndim, s->shape);
    if (t) {
        int nd;
        int64_t shape[OI_MAX_DIMS];
        oi__model_shape(t, &nd, shape);
        if (t->dtype != s->dtype || !oi__same_shape(nd, shape, s->ndim, s->shape))
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "model dtype/shape mismatch: model tensor '%s' is %s, %s declares %s",
                               s->model_name, oi__sig_text(have, sizeof have, t->dtype, nd, shape), v->name, want);
        s->model_tensor = t;
        return OI_OK;
    }
    const oi_metadata_info *md = oi_model_find_metadata(p->model, s->model_name);
    if (md) {
        bool scalar_type = md->type != OI_DTYPE_STRING && md->type != OI_DTYPE_NDARRAY && md->type != OI_DTYPE_BITSET;
        if (!scalar_type || oi__shape_numel(s->ndim, s->shape) != 1)
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src,
                               "model metadata '%s' (%s) can only link to a scalar variable; %s declares %s",
                               s->model_name, oi_dtype_name(md->type) ? oi_dtype_name(md->type) : "?", v->name, want);
        s->model_meta = md;
        return OI_OK;
    }
    if (v->ref_name)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "model variable not found: @ref(\"%s\") of %s names no model tensor or metadata",
                           v->ref_name, v->name);
    return OI_OK;
}

static oi_status oi__table_layout(oi__plan *p, oi__slot *s) {
    const oi__var *v = s->decl;
    s->n_indices = (int)arrlen(v->table_indices);
    for (int k = 0; k < OI_MAX_DIMS; k++)
        s->fixed[k] = -1;
    if (s->n_indices > OI_MAX_DIMS)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "%s has %d table indices; at most %d are supported", v->name,
                           s->n_indices, OI_MAX_DIMS);
    if (v->table && s->kind != OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "@table is only for persistent memory; %s is not persistent", v->name);
    if (arrlen(v->auto_dim) && s->kind != OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "@auto_dim is only for persistent memory; %s is not persistent", v->name);
    if (v->table && s->n_indices == 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "persistent table %s missing table indices", v->name);
    if (s->n_indices == 0) {
        if (v->pattern)
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "@pattern needs table indices: write %s(l)", v->name);
        return OI_OK;
    }
    if (s->kind == OI__MEM_VOLATILE || s->kind == OI__MEM_CONSTANT) {
        s->is_prefix = true;
        if (v->pattern) {
            s->pattern = v->pattern;
        } else { /* W(l, h) without @pattern means "W.{l}.{h}" */
            oi__buf b;
    memset(&b, 0, sizeof b);
            oi__buf_puts(&b, v->name);
            for (int k = 0; k < s->n_indices; k++)
                oi__buf_printf(&b, ".{%s}", v->table_indices[k]);
            s->owned_pattern = oi__buf_take(&b);
            if (!s->owned_pattern)
                return OI_ERROR_OUT_OF_MEMORY;
            s->pattern = s->owned_pattern;
        }
        return oi__check_pattern(s);
    }
    if (s->kind != OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src,
                           "prefix tables can only be declared in volatile and constant memory (tables in persistent); %s is dynamic",
                           v->name);
    if (v->pattern)
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "@pattern is for volatile/constant prefix tables; %s is persistent", v->name);
    if (oi__dtype_is_packed(s->dtype))
        return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "%s: packed dtype %s is not supported in cache tables", v->name,
                           oi_dtype_name(s->dtype));
    bool is_auto[OI_MAX_DIMS] = {false};
    for (int a = 0; a < (int)arrlen(v->auto_dim); a++) {
        int pos = oi__index_position(v, v->auto_dim[a]);
        if (pos < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "@auto_dim(%s) of %s: '%s' is not one of its indices", v->auto_dim[a],
                               v->name, v->auto_dim[a]);
        if (a >= s->ndim)
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "%s has %d @auto_dim indices but only %d dims to grow", v->name,
                               (int)arrlen(v->auto_dim), s->ndim);
        is_auto[pos] = true;
        s->auto_pos[s->n_auto++] = pos;
    }
    for (int k = 0; k < s->n_indices; k++)
        if (!is_auto[k])
            s->key_pos[s->n_keys++] = k;
    s->is_table = s->n_keys > 0;
    for (int f = 0; f < (int)arrlen(v->fixed); f++) {
        int pos = oi__index_position(v, v->fixed[f].index);
        if (pos < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &v->src, "@fixed(%s=...) of %s: '%s' is not one of its indices",
                               v->fixed[f].index, v->name, v->fixed[f].index);
        s->fixed[pos] = v->fixed[f].max;
    }
    (void)p;
    return OI_OK;
}

static oi_status oi__add_slot(oi__plan *p, oi__slot *s) {
    if (oi__plan_slot(p, s->name) >= 0)
        return oi__fail_at(OI_ERROR_VALIDATION, s->src, "%s is declared twice", s->name);
    if (!arrput(p->slots, *s))
        return OI_ERROR_OUT_OF_MEMORY;
    if (!shput(p->by_name, s->name, (int)arrlen(p->slots) - 1)) {
        (void)arrpop(p->slots); /* the caller still owns s */
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static oi_status oi__declare_vars(oi__plan *p) {
    const oi_graph *g = p->graph;
    for (int i = 0; i < (int)arrlen(g->vars); i++) {
        const oi__var *v = &g->vars[i];
        oi__slot s;
        memset(&s, 0, sizeof s);
        s.name = v->name;
        s.decl = v;
        s.src = &v->src;
        s.kind = v->kind;
        s.dtype = v->dtype;
        bool prefix = arrlen(v->table_indices) > 0 && v->kind != OI__MEM_PERSISTENT;
        unsigned any = 0;
        oi_status st = oi__resolve_dims_entry(p, v->dims, &v->src, v->name, &s.ndim, s.shape,
                                              v->kind == OI__MEM_VOLATILE && !arrlen(v->table_indices) ? &s.runtime_dims : &any,
                                              prefix ? v : NULL, s.entry_dims);
        if (st == OI_OK && any && !prefix)
            st = oi__fail_at(OI_ERROR_VALIDATION, &v->src, "invalid dims for %s: a dim set at run time ('?') is only for "
                             "temporaries (OI_ASSIGN) and volatile variables", v->name);
        for (int d = 0; st == OI_OK && d < s.ndim; d++)
            if (!s.entry_dims[d] && (any >> d & 1u))
                st = oi__fail_at(OI_ERROR_VALIDATION, &v->src, "invalid dims for %s: a dim set at run time ('?') is only for "
                                 "temporaries (OI_ASSIGN) and volatile variables", v->name);
        s.runtime_dims |= any;
        s.dynamic_shape = s.runtime_dims != 0;
        if (st == OI_OK)
            st = oi__table_layout(p, &s);
        if (st == OI_OK)
            st = oi__link_model(p, &s);
        if (st == OI_OK && s.runtime_dims && (s.model_tensor || s.model_meta || v->init_kind != OI__INIT_NONE))
            st = oi__fail_at(OI_ERROR_VALIDATION, &v->src, "%s has a dim set at run time ('?'): it cannot come from "
                             "the model or @init", v->name);
        if (st == OI_OK)
            st = oi__add_slot(p, &s);
        if (st != OI_OK) {
            oi__free(s.owned_pattern);
            return st;
        }
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Literal op inputs: OI_OP(pow, x, 2.0)                               */
/* ------------------------------------------------------------------ */

/* The dtype a literal input takes: that of the op's first other input that
 * is not bool (pow(x, 2.0), where(c, x, 0.0)), else f32 or i32. */
static oi_dtype oi__literal_dtype(const oi__plan *p, const oi__node *n, const oi__varref *lit) {
    oi_dtype fallback = OI_DTYPE_INVALID;
    for (int i = 0; i < (int)arrlen(n->inputs); i++) {
        int s = n->inputs[i].literal ? -1 : oi__plan_slot(p, n->inputs[i].name);
        if (s < 0)
            continue;
        if (p->slots[s].dtype != OI_DTYPE_BOOL)
            return p->slots[s].dtype;
        fallback = p->slots[s].dtype;
    }
    if (fallback != OI_DTYPE_INVALID)
        return fallback;
    return strpbrk(lit->name, ".eE") ? OI_DTYPE_F32 : OI_DTYPE_I32;
}

/* "2.0:f32": a literal's constant, one per value text and dtype. */
static void oi__literal_name(const oi__plan *p, const oi__node *n, const oi__varref *lit, char *name, size_t cap) {
    snprintf(name, cap, "%s:%s", lit->name, oi_dtype_name(oi__literal_dtype(p, n, lit)));
}

static oi_status oi__declare_literal(oi__plan *p, const oi__node *n, const oi__varref *lit) {
    char name[96];
    oi__literal_name(p, n, lit, name, sizeof name);
    if (oi__plan_slot(p, name) >= 0)
        return OI_OK;
    oi_dtype dtype = oi__literal_dtype(p, n, lit);
    bool is_float = strpbrk(lit->name, ".eE") != NULL;
    if (is_float && !oi__dtype_is_float(dtype))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "literal %s: a float value for %s inputs (write an integer, or cast)",
                           lit->name, oi_dtype_name(dtype));
    oi__var *v = (oi__var *)oi__calloc(1, sizeof *v);
    if (!v || !arrput(p->literals, v)) {
        oi__free(v);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!(v->name = oi__strdup(name)))
        return OI_ERROR_OUT_OF_MEMORY;
    v->kind = OI__MEM_CONSTANT;
    v->dtype = dtype;
    char *end = NULL;
    errno = 0;
    if (oi__dtype_is_float(dtype)) {
        v->init_kind = OI__INIT_FLOAT;
        v->init_float = strtod(lit->name, &end);
    } else {
        v->init_kind = OI__INIT_INT;
        v->init_int = (int64_t)strtoll(lit->name, &end, 10);
        int64_t lo = 0, hi = 0;
        if (errno || !oi__dtype_int_range(dtype, &lo, &hi) || v->init_int < lo || v->init_int > hi)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "literal %s does not fit %s", lit->name, oi_dtype_name(dtype));
    }
    if (!end || *end)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "literal %s is not a number", lit->name);
    oi__slot s;
    memset(&s, 0, sizeof s);
    s.name = v->name;
    s.decl = v;
    s.src = &n->src;
    s.kind = OI__MEM_CONSTANT;
    s.dtype = dtype;
    for (int k = 0; k < OI_MAX_DIMS; k++)
        s.fixed[k] = -1;
    return oi__add_slot(p, &s);
}

/* After the declarations and temporaries: literal inputs become constants. */
static oi_status oi__declare_literals(oi__plan *p, const oi__node *nodes) {
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        oi_status st = n->kind == OI__NODE_LOOP ? oi__declare_literals(p, n->body) : OI_OK;
        for (int k = 0; st == OI_OK && n->kind == OI__NODE_OP && k < (int)arrlen(n->inputs); k++)
            if (n->inputs[k].literal)
                st = oi__declare_literal(p, n, &n->inputs[k]);
        if (st != OI_OK)
            return st;
    }
    return OI_OK;
}

/* assign nodes anywhere (loops included) introduce volatile temporaries. */
static oi_status oi__declare_temps(oi__plan *p, const oi__node *nodes) {
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        if (n->kind == OI__NODE_LOOP) {
            oi_status st = oi__declare_temps(p, n->body);
            if (st != OI_OK)
                return st;
            continue;
        }
        if (n->kind != OI__NODE_ASSIGN)
            continue;
        int existing = oi__plan_slot(p, n->name);
        if (existing >= 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "assign %s: %s", n->name,
                               p->slots[existing].decl ? "shadows a declared variable" : "is assigned twice");
        oi__slot s;
        memset(&s, 0, sizeof s);
        s.name = n->name;
        s.src = &n->src;
        s.kind = OI__MEM_TEMP;
        s.dtype = n->dtype;
        for (int k = 0; k < OI_MAX_DIMS; k++)
            s.fixed[k] = -1;
        s.typed_by_op = n->typed_by_op;
        if (s.typed_by_op)
            s.dtype = OI_DTYPE_INVALID; /* its first writer types it (oi__type_slot) */
        oi_status st = s.typed_by_op ? OI_OK : oi__resolve_dims(p, n->dims, &n->src, n->name, &s.ndim, s.shape, &s.runtime_dims);
        s.dynamic_shape = s.runtime_dims != 0;
        if (st == OI_OK)
            st = oi__add_slot(p, &s);
        if (st != OI_OK)
            return st;
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Which variables get their shape only at run time                    */
/* ------------------------------------------------------------------ */

static bool oi__access_has_slice(const oi__cache_access *a) {
    for (int i = 0; i < (int)arrlen(a->indices); i++)
        if (a->indices[i].is_slice)
            return true;
    return false;
}

static bool oi__mark_dynamic(oi__plan *p, const char *name) {
    int s = oi__plan_slot(p, name);
    if (s < 0 || p->slots[s].dynamic_shape)
        return false;
    p->slots[s].dynamic_shape = true;
    return true;
}

static bool oi__propagate_dynamic(oi__plan *p, const oi__node *nodes) {
    bool changed = false;
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        int s;
        switch (n->kind) {
        case OI__NODE_LOOP: changed |= oi__propagate_dynamic(p, n->body); break;
        case OI__NODE_CACHE_READ:
            s = oi__plan_slot(p, n->access.base);
            if (s >= 0 && (p->slots[s].n_auto > 0 || p->slots[s].dynamic_shape || oi__access_has_slice(&n->access) ||
                           (p->slots[s].is_table && (int)arrlen(n->access.indices) < p->slots[s].n_indices)))
                changed |= oi__mark_dynamic(p, n->var.name);
            break;
        /* a value declared with '?' (or a size per entry) passes nothing on:
         * what it flows into is checked at validation (oi__infer_runtime) */
        case OI__NODE_TRANSFER:
            s = oi__plan_slot(p, n->src_var.name);
            if (s >= 0 && p->slots[s].dynamic_shape && !p->slots[s].runtime_dims)
                changed |= oi__mark_dynamic(p, n->dst_var.name);
            break;
        case OI__NODE_OP:
            for (int k = 0; k < (int)arrlen(n->inputs); k++) {
                s = oi__plan_slot(p, n->inputs[k].name);
                if (s >= 0 && p->slots[s].dynamic_shape && !p->slots[s].runtime_dims)
                    changed |= oi__mark_dynamic(p, n->output);
            }
            break;
        default: break;
        }
    }
    return changed;
}

/* ------------------------------------------------------------------ */
/* Node checks                                                         */
/* ------------------------------------------------------------------ */

typedef struct oi__loop_scope {
    const char *index;
    bool known;          /* bounds known before running             */
    int64_t start, end;
} oi__loop_scope;

typedef struct oi__vctx {
    oi__plan *p;
    int block;
    oi__loop_scope loops[OI__MAX_LOOP_DEPTH];
    int depth;
} oi__vctx;

static const oi__loop_scope *oi__find_loop(const oi__vctx *c, const char *name) {
    for (int i = c->depth - 1; i >= 0; i--)
        if (strcmp(c->loops[i].index, name) == 0)
            return &c->loops[i];
    return NULL;
}

static bool oi__slot_is_scalar(const oi__slot *s) {
    return s->n_indices == 0 && s->dtype != OI_DTYPE_INVALID && !s->dynamic_shape && oi__shape_numel(s->ndim, s->shape) == 1;
}

/* An identifier used as an index or a loop bound: a loop variable, a named
 * size or a scalar variable. */
static oi_status oi__check_ident(oi__vctx *c, const oi__node *n, const char *ident, const char *what) {
    int64_t v;
    if (oi__find_loop(c, ident) || oi__plan_size(c->p, ident, &v))
        return OI_OK;
    int s = oi__plan_slot(c->p, ident);
    if (s >= 0 && oi__slot_is_scalar(&c->p->slots[s]))
        return OI_OK;
    if (s >= 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s '%s' must be a scalar, but %s is not", what, ident, ident);
    return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s '%s' is not a loop variable, a model size or a scalar variable", what,
                       ident);
}

typedef struct oi__expr_check { oi__vctx *c; const oi__node *n; const char *what; } oi__expr_check;

static oi_status oi__check_expr_name(void *ctx, const char *name, int64_t *value) {
    const oi__expr_check *x = (const oi__expr_check *)ctx;
    *value = 1; /* the syntax and the names are checked; the value is the run's */
    return oi__check_ident(x->c, x->n, name, x->what);
}

static oi_status oi__check_expr(oi__vctx *c, const oi__node *n, const oi__expr *e, const char *what, bool allow_negative) {
    if (oi__expr_is_compound(e)) {
        oi__expr_check x = {c, n, what};
        int64_t unused;
        return oi__expr_eval(e->ident, oi__check_expr_name, &x, &n->src, &unused);
    }
    if (e->ident)
        return oi__check_ident(c, n, e->ident, what);
    if (e->lit < 0 && !allow_negative)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s %lld is negative", what, (long long)e->lit);
    return OI_OK;
}

/* Parses the index texts of W[l, 0] into plan indices. */
static oi_status oi__parse_varref_indices(oi__vctx *c, const oi__node *n, const oi__varref *r, oi__pindex **out,
                                         char ***owned) {
    for (int i = 0; i < (int)arrlen(r->indices); i++) {
        oi__pindex idx;
        memset(&idx, 0, sizeof idx);
        const char *text = r->indices[i];
        if (!oi__is_int_text(text, &idx.single.lit)) {
            while (*text == ' ')
                text++;
            size_t len = strlen(text);
            while (len && text[len - 1] == ' ')
                len--;
            char *ident = oi__strndup(text, len);
            if (!ident)
                return OI_ERROR_OUT_OF_MEMORY;
            if (!arrput(*owned, ident)) {
                oi__free(ident);
                return OI_ERROR_OUT_OF_MEMORY;
            }
            idx.single.ident = ident;
        }
        oi_status st = oi__check_expr(c, n, &idx.single, "index", false);
        if (st != OI_OK)
            return st;
        if (!arrput(*out, idx))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

/* The sizes per entry (E(n)) of one entry's model tensor: each must agree
 * with what other tables gave E for the same n. */
static oi_status oi__note_entry_sizes(oi__plan *p, const oi__node *n, const oi__slot *s, const int64_t *index_values,
                                      const oi_tensor_info *t) {
    for (int d = 0; d < s->ndim; d++) {
        char name[64], index[64], key[160];
        if (!s->entry_dims[d] || !oi__split_entry_size(s->entry_dims[d], name, index, sizeof name))
            continue;
        int k = oi__index_position(s->decl, index);
        if (k < 0)
            continue;
        snprintf(key, sizeof key, "%s#%lld", name, (long long)index_values[k]);
        int64_t size = (int64_t)t->dims[d];
        ptrdiff_t at = shgeti(p->entry_sizes, key);
        if (at >= 0 && p->entry_sizes[at].value.size != size)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s(%s) is %lld in %s (model tensor '%s') but %lld in %s, for "
                               "%s = %lld", name, index, (long long)size, s->name, t->name,
                               (long long)p->entry_sizes[at].value.size, p->entry_sizes[at].value.table, index,
                               (long long)index_values[k]);
        oi__entry_size e = {size, s->name};
        if (at < 0 && (!(p->entry_sizes || sh_new_strdup(p->entry_sizes)) || !shput(p->entry_sizes, key, e)))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

bool oi__plan_entry_dim(const oi__plan *p, const char *text, int *slot, int *dim, char *index, size_t cap) {
    char name[64], want[64];
    if (!oi__split_entry_size(text, want, index, cap < sizeof name ? cap : sizeof name))
        return false;
    for (int s = 0; s < (int)arrlen(p->slots); s++) {
        const oi__slot *sl = &p->slots[s];
        for (int d = 0; sl->n_indices == 1 && d < sl->ndim; d++) {
            char unused[64];
            if (sl->entry_dims[d] && oi__split_entry_size(sl->entry_dims[d], name, unused, sizeof name) &&
                strcmp(name, want) == 0) {
                *slot = s;
                *dim = d;
                return true;
            }
        }
    }
    return false;
}

/* For W[l] with literal indices or loop indices of known bounds, checks
 * every model tensor the access can name (at most a few thousand). */
static oi_status oi__check_prefix_entries(oi__vctx *c, const oi__node *n, const oi__slot *s, const oi__pindex *idx) {
    int64_t lo[OI_MAX_DIMS], hi[OI_MAX_DIMS], cur[OI_MAX_DIMS];
    int64_t combos = 1;
    for (int k = 0; k < s->n_indices; k++) {
        if (!idx[k].single.ident) {
            lo[k] = idx[k].single.lit;
            hi[k] = lo[k] + 1;
        } else {
            const oi__loop_scope *l = oi__find_loop(c, idx[k].single.ident);
            int64_t v;
            if (l && l->known) {
                lo[k] = l->start;
                hi[k] = l->end;
            } else if (!l && oi__plan_size(c->p, idx[k].single.ident, &v)) {
                lo[k] = v;
                hi[k] = v + 1;
            } else {
                return OI_OK; /* only known at run time: checked then */
            }
        }
        if (hi[k] <= lo[k])
            return OI_OK; /* an empty loop never reads it */
        combos *= hi[k] - lo[k];
    }
    if (combos > 4096)
        return OI_OK;
    for (int k = 0; k < s->n_indices; k++)
        cur[k] = lo[k];
    for (;;) {
        const oi_tensor_info *t = oi__plan_prefix_tensor(c->p, s, cur, &n->src);
        if (!t)
            return oi__last_status(OI_ERROR_VALIDATION); /* OUT_OF_MEMORY too */
        oi_status st = oi__note_entry_sizes(c->p, n, s, cur, t);
        if (st != OI_OK)
            return st;
        int k = s->n_indices - 1;
        while (k >= 0 && ++cur[k] == hi[k]) {
            cur[k] = lo[k];
            k--;
        }
        if (k < 0)
            break;
    }
    return OI_OK;
}

/* IDENT attributes name a model scalar tensor, a metadata entry, or a DSL
 * scalar with @init; they become plain values here. */
static oi_status oi__resolve_ident_attr(oi__vctx *c, const oi__node *n, oi__attr *a, char ***owned) {
    const oi__plan *p = c->p;
    const char *ref = a->s;
    int s = oi__plan_slot(p, ref);
    const oi_tensor_info *t = NULL;
    if (s >= 0 && p->slots[s].model_tensor)
        t = p->slots[s].model_tensor;
    else if (p->model && (s < 0 || !p->slots[s].model_meta))
        t = oi_model_find_tensor(p->model, ref);
    if (t && t->numel == 1 && t->has_data) {
        const void *data = NULL;
        if (oi_model_tensor_data(p->model, t, &data) != OI_OK)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s=%s: reading model tensor '%s': %s", a->name, ref, t->name,
                               oi_last_error());
        if (oi__dtype_is_float(t->dtype)) {
            a->kind = OI__ATTR_FLOAT;
            a->f = oi__load_f64(t->dtype, data, 0);
        } else {
            a->kind = t->dtype == OI_DTYPE_BOOL ? OI__ATTR_BOOL : OI__ATTR_INT;
            a->i = oi__load_i64(t->dtype, data, 0);
        }
        return OI_OK;
    }
    const char *meta_key = s >= 0 && p->slots[s].model_meta ? p->slots[s].model_meta->key : ref;
    const oi_metadata_info *md = p->model ? oi_model_find_metadata(p->model, meta_key) : NULL;
    if (md && md->type == OI_DTYPE_STRING) {
        const char *text = NULL;
        size_t len = 0;
        if (oi_model_metadata_string(p->model, meta_key, &text, &len) != OI_OK)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s=%s: %s", a->name, ref, oi_last_error());
        char *copy = oi__strndup(text, len);
        if (!copy)
            return OI_ERROR_OUT_OF_MEMORY;
        if (!arrput(*owned, copy)) {
            oi__free(copy);
            return OI_ERROR_OUT_OF_MEMORY;
        }
        a->kind = OI__ATTR_STRING;
        a->s = copy;
        return OI_OK;
    }
    if (md && md->type != OI_DTYPE_NDARRAY && md->type != OI_DTYPE_BITSET && md->payload) {
        if (oi__dtype_is_float(md->type)) {
            a->kind = OI__ATTR_FLOAT;
            a->f = oi__load_f64(md->type, md->payload, 0);
        } else {
            a->kind = md->type == OI_DTYPE_BOOL ? OI__ATTR_BOOL : OI__ATTR_INT;
            a->i = oi__load_i64(md->type, md->payload, 0);
        }
        return OI_OK;
    }
    if (s >= 0 && p->slots[s].decl && p->slots[s].decl->init_kind != OI__INIT_NONE && oi__slot_is_scalar(&p->slots[s])) {
        const oi__var *v = p->slots[s].decl;
        if (v->init_kind == OI__INIT_FLOAT) {
            a->kind = OI__ATTR_FLOAT;
            a->f = v->init_float;
        } else {
            a->kind = v->init_kind == OI__INIT_BOOL ? OI__ATTR_BOOL : OI__ATTR_INT;
            a->i = v->init_int;
        }
        return OI_OK;
    }
    int64_t size = 0;
    if (oi__plan_size(p, ref, &size)) { /* n=S: one of the model's sizes */
        a->kind = OI__ATTR_INT;
        a->i = size;
        return OI_OK;
    }
    return oi__fail_at(OI_ERROR_VALIDATION, &n->src,
                       "%s=%s: '%s' names no scalar model tensor, metadata entry, size or scalar variable with @init",
                       a->name, ref, ref);
}

/* Sizes in op settings: n=S*H becomes an INT, shape=[-1, S, H] an INT_LIST
 * of this plan node (the graph's list keeps its expressions). */
static oi_status oi__resolve_size_attr(oi__vctx *c, const oi__node *n, oi__attr *a, oi__pnode *pn) {
    char bad[256];
    if (a->kind == OI__ATTR_SIZE && strchr(a->s, '(')) { /* group=E(l): per entry, resolved each run */
        int slot, dim;
        char index[64];
        if (!oi__plan_entry_dim(c->p, a->s, &slot, &dim, index, sizeof index))
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "setting %s=%s: no prefix table with one index declares a "
                               "size per entry of that name (W(n): f32[E(n), ...])", a->name, a->s);
        int64_t v;
        if (!oi__is_int_text(index, &v)) {
            oi_status st = oi__check_ident(c, n, index, "entry index");
            if (st != OI_OK)
                return st;
        }
        pn->entry_attrs = true;
        return OI_OK;
    }
    if (a->kind == OI__ATTR_SIZE) {
        if (!oi__resolve_dim(c->p, a->s, &a->i, bad, sizeof bad))
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "setting %s=%s: %s", a->name, a->s, bad);
        a->kind = OI__ATTR_INT;
        return OI_OK;
    }
    if (a->kind != OI__ATTR_INT_LIST || !a->exprs)
        return OI_OK;
    int64_t *ints = NULL;
    for (ptrdiff_t k = 0; k < arrlen(a->ints); k++) {
        int64_t v = a->ints[k];
        if (a->exprs[k] && !oi__resolve_dim(c->p, a->exprs[k], &v, bad, sizeof bad)) {
            arrfree(ints);
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "setting %s: %s", a->name, bad);
        }
        if (!arrput(ints, v)) {
            arrfree(ints);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    if (!arrput(pn->owned_lists, ints)) {
        arrfree(ints);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    a->ints = ints;
    a->exprs = NULL;
    return OI_OK;
}

/* OI_ASSIGN(h) that no writer has typed yet (in program order). */
static bool oi__slot_untyped(const oi__slot *s) { return s->typed_by_op && s->dtype == OI_DTYPE_INVALID; }

static oi_status oi__untyped_read(const oi__node *n, const char *name) {
    return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is read before anything writes it: OI_ASSIGN(%s) takes its dtype "
                       "and shape from its first writer (or declare them: OI_ASSIGN(%s, f32[...]))", name, name, name);
}

/* Gives an OI_ASSIGN(h) temporary the type of its first writer; a negative
 * dim is set at run time ('?'). */
static void oi__type_slot(oi__slot *s, oi_dtype dtype, int ndim, const int64_t *shape) {
    s->dtype = dtype;
    s->ndim = ndim;
    s->runtime_dims = 0;
    for (int d = 0; d < ndim; d++) {
        s->shape[d] = shape[d] < 0 ? 1 : shape[d];
        if (shape[d] < 0)
            s->runtime_dims |= 1u << d;
    }
    s->dynamic_shape = s->runtime_dims != 0;
}

/* An op's result where some input dims are '?': inferred twice, every '?'
 * set to one of two sizes no model uses; a result dim that differs between
 * the two is set at run time (-1). Fails where either inference fails. */
static oi_status oi__infer_runtime(const oi__node *n, const oi__pnode *pn, const oi__plan *p, const oi__op_sig *sigs, int n_in,
                                   oi_dtype declared, oi__op_sig *result) {
    static const int64_t probe[2] = {1000003, 1000033};
    oi__op_sig runs[2], in[8];
    oi__attr *attrs = NULL; /* group=E(l) takes the size every '?' takes */
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (!arrput(attrs, pn->attrs[i])) {
            arrfree(attrs);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < (int)arrlen(attrs); i++)
            if (attrs[i].kind == OI__ATTR_SIZE || (attrs[i].kind == OI__ATTR_INT && pn->attrs[i].kind == OI__ATTR_SIZE)) {
                attrs[i].kind = OI__ATTR_INT;
                attrs[i].i = probe[r];
            }
        for (int i = 0; i < n_in; i++) {
            in[i] = sigs[i];
            const oi__slot *sl = &p->slots[pn->inputs[i]];
            for (int d = 0; d < sl->ndim; d++)
                if (sl->runtime_dims >> d & 1u)
                    in[i].shape[d] = probe[r];
        }
        memset(&runs[r], 0, sizeof runs[r]);
        oi_status st = oi__op_infer(n->op, attrs, (size_t)arrlen(attrs), in, (size_t)n_in, declared, &runs[r]);
        if (st != OI_OK) {
            arrfree(attrs);
            return st;
        }
    }
    arrfree(attrs);
    if (runs[0].ndim != runs[1].ndim || runs[0].dtype != runs[1].dtype)
        return oi__fail(OI_ERROR_VALIDATION, "op %s: its result's rank depends on dims set at run time", oi_op_name(n->op));
    *result = runs[0];
    for (int d = 0; d < result->ndim; d++)
        if (runs[0].shape[d] != runs[1].shape[d])
            result->shape[d] = -1;
    return OI_OK;
}

static oi_status oi__check_output_slot(oi__vctx *c, const oi__node *n, const char *name, const char *what, int *out) {
    int s = oi__plan_slot(c->p, name);
    if (s < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "unknown output variable %s: declare it or assign it first", name);
    const oi__slot *sl = &c->p->slots[s];
    if (sl->kind == OI__MEM_CONSTANT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cannot write to constant memory: %s is constant", name);
    if (sl->kind == OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be written via cache.write, not by %s", name,
                           what);
    if (sl->n_indices > 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is a prefix table: its entries come from the model and cannot be written",
                           name);
    *out = s;
    return OI_OK;
}

static oi_status oi__check_op(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    oi__plan *p = c->p;
    const char *op_name = oi_op_name(n->op);
    int arity = oi__op_arity(n->op);
    int n_in = (int)arrlen(n->inputs);
    int min_in = oi__op_min_inputs(n->op);
    if ((n_in < min_in || n_in > arity) && min_in == arity)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "op %s expects %d inputs, got %d", op_name, arity, n_in);
    if (n_in < min_in || n_in > arity)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "op %s expects %d to %d inputs, got %d", op_name, min_in, arity, n_in);
    if (n_in > 8)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "op %s: too many inputs", op_name);
    if (!n->output)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "op %s has no output (add OI_TO(var))", op_name);
    oi__op_sig sigs[8];
    bool static_shapes = true, known = true, any_runtime = false; /* known: rank and static dims of every input */
    for (int i = 0; i < n_in; i++) {
        const oi__varref *r = &n->inputs[i];
        char literal[96];
        if (r->literal)
            oi__literal_name(p, n, r, literal, sizeof literal);
        int s = oi__plan_slot(p, r->literal ? literal : r->name);
        if (s < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "unknown input variable %s", r->name);
        const oi__slot *sl = &p->slots[s];
        if (sl->kind == OI__MEM_PERSISTENT)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", r->name);
        oi__pindex *idx = NULL;
        if (arrlen(r->indices) > 0 || sl->n_indices > 0) {
            if (!sl->is_prefix)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is not a prefix table; it cannot be indexed", r->name);
            if ((int)arrlen(r->indices) != sl->n_indices)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s needs %d indices (%s declares %d), got %d", r->name,
                                   sl->n_indices, r->name, sl->n_indices, (int)arrlen(r->indices));
            oi_status st = oi__parse_varref_indices(c, n, r, &idx, &pn->owned);
            if (st == OI_OK)
                st = oi__check_prefix_entries(c, n, sl, idx);
            if (st != OI_OK) {
                arrfree(idx);
                return st;
            }
        }
        if (!arrput(pn->inputs, s) || !arrput(pn->input_indices, idx)) {
            arrfree(idx);
            return OI_ERROR_OUT_OF_MEMORY;
        }
        if (oi__slot_untyped(sl))
            return oi__untyped_read(n, r->name);
        sigs[i].dtype = sl->dtype;
        sigs[i].ndim = sl->ndim;
        memcpy(sigs[i].shape, sl->shape, sizeof sigs[i].shape);
        if (sl->dynamic_shape)
            static_shapes = false;
        if (sl->dynamic_shape && !sl->runtime_dims)
            known = false; /* a placeholder declaration: its shape is the run's */
        any_runtime |= sl->runtime_dims != 0;
    }
    for (int i = 0; i < (int)arrlen(n->attrs); i++) {
        oi__attr a = n->attrs[i];
        char expected[256];
        if (!oi__op_param_known(n->op, a.name, expected, sizeof expected)) { /* kept in the graph, not run */
            oi_status st = p->strict
                ? oi__fail_at(OI_ERROR_VALIDATION, &n->src, "op %s has no setting '%s' (expected: %s; strict mode)", op_name,
                              a.name, expected)
                : oi__warn_at(&p->warnings, &n->src, "op %s has no setting '%s' (expected: %s): it is kept but not used "
                              "(strict mode makes it an error)", op_name, a.name, expected);
            if (st != OI_OK)
                return st;
            continue;
        }
        oi_status st = a.kind == OI__ATTR_IDENT ? oi__resolve_ident_attr(c, n, &a, &pn->owned)
                                                : oi__resolve_size_attr(c, n, &a, pn);
        if (st != OI_OK)
            return st;
        if (!arrput(pn->attrs, a))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    oi_status st = oi__check_output_slot(c, n, n->output, "an op", &pn->out);
    if (st != OI_OK)
        return st;
    oi__slot *out = &p->slots[pn->out];
    pn->inplace = n_in > 0 && pn->inputs[0] == pn->out && !pn->input_indices[0] && oi__op_allows_inplace(n->op);
    bool untyped = oi__slot_untyped(out);
    if (untyped && !known)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s takes its type from op %s, whose input shapes are only known at "
                           "run time: declare it (OI_ASSIGN(%s, f32[?, ...]), '?' where a dim is set at run time)",
                           n->output, op_name, n->output);
    bool probe = known && any_runtime && (untyped || out->runtime_dims || !out->dynamic_shape);
    if (!probe && pn->entry_attrs)
        return untyped ? oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s takes its type from op %s, whose shapes depend on "
                                     "its entry: declare it", n->output, op_name)
                       : OI_OK;
    if (!probe && (!static_shapes || (out->dynamic_shape && !out->runtime_dims)))
        return OI_OK; /* shapes known at run time: checked then */
    oi__op_sig result;
    memset(&result, 0, sizeof result);
    st = probe ? oi__infer_runtime(n, pn, p, sigs, n_in, out->dtype, &result)
               : oi__op_infer(n->op, pn->attrs, (size_t)arrlen(pn->attrs), sigs, (size_t)n_in, out->dtype, &result);
    if (st != OI_OK && probe && !untyped)
        return OI_OK; /* the sizes tried do not suit this op: the run checks it */
    if (st != OI_OK) {
        char why[1024];
        oi__copy_error(why, sizeof why);
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s", why);
    }
    if (untyped) {
        oi__type_slot(out, result.dtype, result.ndim, result.shape);
        return OI_OK;
    }
    char have[160], want[160];
    if (out->runtime_dims && result.dtype == out->dtype) {
        bool fits = result.ndim == out->ndim;
        for (int d = 0; fits && d < result.ndim; d++)
            fits = (out->runtime_dims >> d & 1u) || result.shape[d] == out->shape[d];
        if (fits)
            return OI_OK;
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "output shape mismatch: op %s produces %s but %s is declared %s",
                           op_name, oi__sig_text(have, sizeof have, result.dtype, result.ndim, result.shape), n->output,
                           oi__slot_sig_text(want, sizeof want, out));
    }
    if (result.dtype != out->dtype || !oi__same_shape(result.ndim, result.shape, out->ndim, out->shape))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "output %s mismatch: op %s produces %s but %s is %s",
                           result.dtype != out->dtype ? "dtype" : "shape", op_name,
                           oi__sig_text(have, sizeof have, result.dtype, result.ndim, result.shape), n->output,
                           oi__sig_text(want, sizeof want, out->dtype, out->ndim, out->shape));
    return OI_OK;
}

/* The persistent side of a cache op: its slot and its indices. */
static oi_status oi__check_access(oi__vctx *c, const oi__node *n, const char *verb, oi__pnode *pn) {
    const oi__cache_access *a = &n->access;
    int s = oi__plan_slot(c->p, a->base);
    if (s < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s: unknown variable %s", verb, a->base);
    const oi__slot *sl = &c->p->slots[s];
    if (sl->kind != OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s needs a persistent variable; %s is not persistent", verb, a->base);
    pn->var = s;
    pn->bracketed = a->bracketed;
    int n_idx = (int)arrlen(a->indices);
    bool reset = n->kind == OI__NODE_CACHE_RESET;
    bool step = n->kind == OI__NODE_CACHE_INCREMENT || n->kind == OI__NODE_CACHE_DECREMENT;
    if (sl->n_indices == 0 && (a->bracketed || n_idx > 0))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is not a table; it takes no indices", a->base);
    if (sl->is_table && !a->bracketed && !reset)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is a table: index it, e.g. %s[...]", a->base, a->base);
    if (n_idx > sl->n_indices)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s has %d table indices, the access gives %d", a->base, sl->n_indices,
                           n_idx);
    for (int i = 0; i < n_idx; i++) {
        const oi__cache_index *ci = &a->indices[i];
        oi__pindex pi;
        memset(&pi, 0, sizeof pi);
        pi.is_slice = ci->is_slice;
        pi.single = ci->single;
        pi.has_start = ci->has_start;
        pi.has_end = ci->has_end;
        pi.start = ci->start;
        pi.end = ci->end;
        oi_status st = OI_OK;
        if (ci->is_slice) {
            if (sl->n_auto > 0)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s has @auto_dim: slices are not allowed", a->base);
            if (reset || step || n->kind == OI__NODE_CACHE_WRITE)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s takes single indices, not slices", verb);
            if (ci->has_start)
                st = oi__check_expr(c, n, &ci->start, "slice start", false);
            if (st == OI_OK && ci->has_end)
                st = oi__check_expr(c, n, &ci->end, "slice end", true);
        } else {
            st = oi__check_expr(c, n, &ci->single, "index", false);
        }
        if (st != OI_OK)
            return st;
        if (!arrput(pn->access, pi))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!reset && sl->is_table && n->kind != OI__NODE_CACHE_READ && n_idx < sl->n_indices)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s needs all %d indices of %s", verb, sl->n_indices, a->base);
    return OI_OK;
}

/* Shape of the persistent value a full scalar-index access names. */
static bool oi__access_static_shape(const oi__slot *sl, const oi__pnode *pn) {
    if (sl->n_auto > 0)
        return false;
    if (!sl->is_table)
        return true;
    if ((int)arrlen(pn->access) < sl->n_indices)
        return false;
    for (int i = 0; i < (int)arrlen(pn->access); i++)
        if (pn->access[i].is_slice)
            return false;
    return true;
}

static bool oi__static_bound(const oi__expr *e, int64_t *v) {
    *v = e->lit;
    return !e->ident && e->lit >= 0;
}

/* The shape a cache read gives, -1 where it is set at run time: the kept
 * table indices first (a slice with literal bounds has a known length; any
 * other slice or a missing index is set at run time), then the entry's dims
 * (those an @auto_dim index grows at run time). False: more than OI_MAX_DIMS. */
static bool oi__read_shape(const oi__slot *cache, const oi__pnode *pn, int *ndim, int64_t *shape) {
    int nd = 0, n_access = (int)arrlen(pn->access);
    for (int pos = 0; cache->is_table && pos < cache->n_indices; pos++) {
        bool is_auto = false;
        for (int a = 0; a < cache->n_auto; a++)
            is_auto |= cache->auto_pos[a] == pos;
        const oi__pindex *ix = pos < n_access ? &pn->access[pos] : NULL;
        if (is_auto || (ix && !ix->is_slice))
            continue;
        if (nd == OI_MAX_DIMS)
            return false;
        int64_t lo = 0, hi;
        bool known = ix && ix->has_end && oi__static_bound(&ix->end, &hi) && (!ix->has_start || oi__static_bound(&ix->start, &lo));
        shape[nd++] = known && hi >= lo ? hi - lo : -1;
    }
    if (nd + cache->ndim > OI_MAX_DIMS)
        return false;
    for (int d = 0; d < cache->ndim; d++)
        shape[nd + d] = d < cache->n_auto ? -1 : cache->shape[d];
    *ndim = nd + cache->ndim;
    return true;
}

/* A read into a variable declared with '?' dims: the rank and every static
 * dim must agree, and a dim the read sets at run time must be '?'. A read
 * that sets dims at run time into a declaration without '?' keeps today's
 * behaviour (the declared shape is not used) with a warning; strict: an error. */
static oi_status oi__check_read_dims(oi__vctx *c, const oi__node *n, const oi__slot *cache, const oi__pnode *pn,
                                     const oi__slot *dst) {
    int nd;
    int64_t shape[OI_MAX_DIMS];
    char have[160], want[160];
    if (!oi__read_shape(cache, pn, &nd, shape))
        return OI_OK; /* the executor says so */
    bool runtime = false, fits = nd == dst->ndim;
    for (int d = 0; d < nd; d++) {
        runtime |= shape[d] < 0;
        if (fits && !(dst->runtime_dims >> d & 1u))
            fits = shape[d] >= 0 && shape[d] == dst->shape[d];
    }
    oi__sig_text(have, sizeof have, dst->dtype, nd, shape);
    oi__slot_sig_text(want, sizeof want, dst);
    if (dst->runtime_dims) {
        if (fits)
            return OI_OK;
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.read gives %s but %s is declared %s%s", have, dst->name, want,
                           nd == dst->ndim ? " (a dim set at run time is written '?')" : "");
    }
    if (!runtime)
        return OI_OK;
    return c->p->strict
        ? oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.read gives %s, set at run time, but %s is declared %s: write the "
                      "run-time dims as '?' (strict mode)", have, dst->name, want)
        : oi__warn_at(&c->p->warnings, &n->src, "cache.read gives %s, set at run time, but %s is declared %s, a shape "
                      "that is not used: write the run-time dims as '?' (strict mode makes this an error)", have,
                      dst->name, want);
}

static oi_status oi__check_cache_read(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    oi_status st = oi__check_access(c, n, "cache.read", pn);
    if (st == OI_OK)
        st = oi__check_output_slot(c, n, n->var.name, "cache.read", &pn->out);
    if (st != OI_OK)
        return st;
    const oi__slot *cache = &c->p->slots[pn->var], *dst = &c->p->slots[pn->out];
    char have[160], want[160];
    if (oi__slot_untyped(dst)) { /* OI_ASSIGN(k): the read's type, '?' where it sets a dim at run time */
        int nd;
        int64_t shape[OI_MAX_DIMS];
        if (!oi__read_shape(cache, pn, &nd, shape))
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.read: the value has more than %d dims", OI_MAX_DIMS);
        oi__type_slot(&c->p->slots[pn->out], cache->dtype, nd, shape);
        return OI_OK;
    }
    if (cache->dtype != dst->dtype)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.read: %s is %s but %s is %s", cache->name,
                           oi_dtype_name(cache->dtype), dst->name, oi_dtype_name(dst->dtype));
    if ((st = oi__check_read_dims(c, n, cache, pn, dst)) != OI_OK)
        return st;
    if (oi__access_static_shape(cache, pn) && !dst->dynamic_shape &&
        !oi__same_shape(cache->ndim, cache->shape, dst->ndim, dst->shape))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.read: %s holds %s but %s is %s", cache->name,
                           oi__sig_text(have, sizeof have, cache->dtype, cache->ndim, cache->shape), dst->name,
                           oi__sig_text(want, sizeof want, dst->dtype, dst->ndim, dst->shape));
    return OI_OK;
}

static oi_status oi__check_cache_write(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    oi_status st = oi__check_access(c, n, "cache.write", pn);
    if (st != OI_OK)
        return st;
    int s = oi__plan_slot(c->p, n->var.name);
    if (s < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.write: unknown variable %s", n->var.name);
    if (arrlen(n->var.indices) > 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.write: the source must be a plain variable");
    const oi__slot *src = &c->p->slots[s], *cache = &c->p->slots[pn->var];
    if (src->kind == OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", src->name);
    if (oi__slot_untyped(src))
        return oi__untyped_read(n, src->name);
    pn->out = s; /* the plain-variable side */
    char have[160], want[160];
    if (src->dtype != cache->dtype)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.write: %s is %s but %s holds %s", src->name,
                           oi_dtype_name(src->dtype), cache->name, oi_dtype_name(cache->dtype));
    if (oi__access_static_shape(cache, pn) && !src->dynamic_shape &&
        !oi__same_shape(cache->ndim, cache->shape, src->ndim, src->shape))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.write: %s is %s but %s holds %s", src->name,
                           oi__sig_text(have, sizeof have, src->dtype, src->ndim, src->shape), cache->name,
                           oi__sig_text(want, sizeof want, cache->dtype, cache->ndim, cache->shape));
    return OI_OK;
}

static oi_status oi__check_cache_step(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    const char *verb = n->kind == OI__NODE_CACHE_INCREMENT ? "cache.increment" : "cache.decrement";
    oi_status st = oi__check_access(c, n, verb, pn);
    if (st != OI_OK)
        return st;
    const oi__slot *s = &c->p->slots[pn->var];
    if (oi__dtype_is_packed(s->dtype) || s->dtype == OI_DTYPE_BOOL || s->dtype == OI_DTYPE_BITSET)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s: %s is %s; it needs a numeric (non-packed, non-bool) variable", verb,
                           s->name, oi_dtype_name(s->dtype));
    if (s->n_auto > 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s: %s has @auto_dim", verb, s->name);
    return OI_OK;
}

static oi_status oi__check_transfer(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    int s = oi__plan_slot(c->p, n->src_var.name);
    if (s < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "transfer: unknown variable %s", n->src_var.name);
    if (arrlen(n->src_var.indices) || arrlen(n->dst_var.indices))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "transfer moves plain variables (no indices)");
    if (c->p->slots[s].kind == OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", n->src_var.name);
    pn->var = s;
    oi_status st = oi__check_output_slot(c, n, n->dst_var.name, "transfer", &pn->out);
    if (st != OI_OK)
        return st;
    const oi__slot *a = &c->p->slots[pn->var], *b = &c->p->slots[pn->out];
    char have[160], want[160];
    if (oi__slot_untyped(a))
        return oi__untyped_read(n, a->name);
    if (oi__slot_untyped(b)) { /* OI_ASSIGN(h): the source's type */
        if (a->dynamic_shape && !a->runtime_dims)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s takes its type from %s, whose shape is only known at run "
                               "time: declare it (OI_ASSIGN(%s, f32[?, ...]))", b->name, a->name, b->name);
        int64_t shape[OI_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++)
            shape[d] = (a->runtime_dims >> d & 1u) ? -1 : a->shape[d];
        oi__type_slot(&c->p->slots[pn->out], a->dtype, a->ndim, shape);
        return OI_OK;
    }
    bool static_a = !a->dynamic_shape || a->runtime_dims; /* a '?' declaration: its rank and other dims hold */
    if (a->runtime_dims && !b->dynamic_shape)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "transfer: %s is %s, set at run time, but %s is %s: declare it "
                           "with '?' too", a->name, oi__slot_sig_text(have, sizeof have, a), b->name,
                           oi__slot_sig_text(want, sizeof want, b));
    if (a->dtype != b->dtype || (!a->dynamic_shape && !b->dynamic_shape && !oi__same_shape(a->ndim, a->shape, b->ndim, b->shape)) ||
        (static_a && b->runtime_dims && !oi__slot_fits(b, a->ndim, a->shape) && !a->runtime_dims) ||
        (a->runtime_dims && b->runtime_dims && a->ndim != b->ndim))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "transfer: %s is %s but %s is %s", a->name,
                           oi__slot_sig_text(have, sizeof have, a), b->name, oi__slot_sig_text(want, sizeof want, b));
    return OI_OK;
}

static int oi__block_index(const oi__plan *p, const char *name) {
    const oi__block *b = oi__graph_find_block(p->graph, name); /* plan blocks are in graph order */
    return b ? (int)(b - p->graph->blocks) : -1;
}

static oi_status oi__check_branch(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    pn->then_block = n->then_block ? oi__block_index(c->p, n->then_block) : -1;
    pn->else_block = n->else_block ? oi__block_index(c->p, n->else_block) : -1;
    if (pn->then_block < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "branch to a missing block %s", n->then_block ? n->then_block : "(none)");
    if (n->else_block && pn->else_block < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "branch to a missing block %s", n->else_block);
    pn->var = -1;
    if (!n->cond)
        return OI_OK;
    if (!n->else_block)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "a conditional branch needs two target blocks");
    pn->var = oi__plan_slot(c->p, n->cond);
    if (pn->var < 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "branch condition %s is not a known variable", n->cond);
    const oi__slot *s = &c->p->slots[pn->var];
    if (s->kind == OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", n->cond);
    if (!oi__slot_is_scalar(s))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "branch condition %s must be a scalar", n->cond);
    return OI_OK;
}

static oi_status oi__check_vars(oi__vctx *c, const oi__node *n, const char *verb, oi__pnode *pn) {
    if (arrlen(n->vars) == 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s needs at least one variable", verb);
    for (int i = 0; i < (int)arrlen(n->vars); i++) {
        int s = oi__plan_slot(c->p, n->vars[i]);
        if (s < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s: unknown variable %s", verb, n->vars[i]);
        const oi__slot *sl = &c->p->slots[s];
        if (sl->kind == OI__MEM_CONSTANT || sl->kind == OI__MEM_PERSISTENT || sl->n_indices > 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s %s: %s variables cannot be yielded or awaited", verb,
                               n->vars[i], sl->kind == OI__MEM_CONSTANT ? "constant" : sl->kind == OI__MEM_PERSISTENT ? "persistent" : "prefix-table");
        for (int k = 0; k < (int)arrlen(pn->vars); k++)
            if (pn->vars[k] == s)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s names %s twice", verb, n->vars[i]);
        if (!arrput(pn->vars, s))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static oi_status oi__check_nodes(oi__vctx *c, const oi__node *nodes, oi__pnode **out);

static oi_status oi__check_loop(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    if (c->depth >= OI__MAX_LOOP_DEPTH)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loops nest deeper than %d", OI__MAX_LOOP_DEPTH);
    if (oi__find_loop(c, n->loop_index))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loop index %s is already used by an enclosing loop", n->loop_index);
    oi_status st = oi__check_expr(c, n, &n->loop_start, "loop bound", true);
    if (st == OI_OK)
        st = oi__check_expr(c, n, &n->loop_end, "loop bound", true);
    if (st != OI_OK)
        return st;
    oi__loop_scope *l = &c->loops[c->depth];
    l->index = n->loop_index;
    l->known = true;
    const oi__expr *bounds[2] = {&n->loop_start, &n->loop_end};
    int64_t values[2];
    for (int i = 0; i < 2; i++) {
        if (!bounds[i]->ident)
            values[i] = bounds[i]->lit;
        else if (!oi__find_loop(c, bounds[i]->ident) && oi__plan_size(c->p, bounds[i]->ident, &values[i]))
            ;
        else
            l->known = false;
    }
    l->start = l->known ? values[0] : 0;
    l->end = l->known ? values[1] : 0;
    if (l->known && l->end > l->start && (uint64_t)l->end - (uint64_t)l->start > (uint64_t)OI__MAX_LOOP_ITERATIONS)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loop %s: %lld..%lld runs more than 2^24 iterations", n->loop_name,
                           (long long)l->start, (long long)l->end);
    c->depth++;
    st = oi__check_nodes(c, n->body, &pn->body);
    c->depth--;
    return st;
}

static oi_status oi__check_node(oi__vctx *c, const oi__node *n, oi__pnode *pn) {
    switch (n->kind) {
    case OI__NODE_ASSIGN: pn->out = oi__plan_slot(c->p, n->name); return OI_OK;
    case OI__NODE_OP: return oi__check_op(c, n, pn);
    case OI__NODE_CACHE_READ: return oi__check_cache_read(c, n, pn);
    case OI__NODE_CACHE_WRITE: return oi__check_cache_write(c, n, pn);
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT: return oi__check_cache_step(c, n, pn);
    case OI__NODE_CACHE_RESET: return oi__check_access(c, n, "cache.reset", pn);
    case OI__NODE_TRANSFER: return oi__check_transfer(c, n, pn);
    case OI__NODE_BRANCH: return oi__check_branch(c, n, pn);
    case OI__NODE_LOOP: return oi__check_loop(c, n, pn);
    case OI__NODE_YIELD: return oi__check_vars(c, n, "yield", pn);
    case OI__NODE_AWAIT: return oi__check_vars(c, n, "await", pn);
    case OI__NODE_BARRIER:
    case OI__NODE_DEP:
    case OI__NODE_RETURN: return OI_OK;
    }
    return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "unknown node kind %d", (int)n->kind);
}

static oi_status oi__check_nodes(oi__vctx *c, const oi__node *nodes, oi__pnode **out) {
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        oi__pnode pn;
        memset(&pn, 0, sizeof pn);
        pn.ir = &nodes[i];
        pn.id = c->p->n_nodes++;
        pn.block = c->block;
        pn.out = pn.var = pn.then_block = pn.else_block = -1;
        if (!oi__ds_room(out, sizeof **out, 1)) /* room first: the arrput below cannot fail */
            return OI_ERROR_OUT_OF_MEMORY;
        oi_status st = oi__check_node(c, &nodes[i], &pn);
        arrput(*out, pn); /* kept even on failure so that it is freed */
        if (st != OI_OK)
            return st;
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Blocks, branch targets and yield/await                              */
/* ------------------------------------------------------------------ */

static void oi__mark_branch_targets(const oi__pnode *nodes, bool *target) {
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        if (nodes[i].ir->kind == OI__NODE_BRANCH) {
            if (nodes[i].then_block >= 0)
                target[nodes[i].then_block] = true;
            if (nodes[i].else_block >= 0)
                target[nodes[i].else_block] = true;
        }
        oi__mark_branch_targets(nodes[i].body, target);
    }
}

/* Does this node (or a loop body) write slot s? */
static bool oi__pnode_writes(const oi__pnode *pn, int s) {
    switch (pn->ir->kind) {
    case OI__NODE_OP:
    case OI__NODE_CACHE_READ:
    case OI__NODE_TRANSFER: return pn->out == s;
    case OI__NODE_LOOP:
        for (int i = 0; i < (int)arrlen(pn->body); i++)
            if (oi__pnode_writes(&pn->body[i], s))
                return true;
        return false;
    default: return false;
    }
}

static bool oi__nodes_contain(const oi__pnode *nodes, oi__node_kind kind) {
    for (int i = 0; i < (int)arrlen(nodes); i++)
        if (nodes[i].ir->kind == kind || oi__nodes_contain(nodes[i].body, kind))
            return true;
    return false;
}

static bool oi__slots_contain(const int *slots, int s) {
    for (int i = 0; i < (int)arrlen(slots); i++)
        if (slots[i] == s)
            return true;
    return false;
}

/* A consumer block: await first (after nothing that needs the values),
 * yield last, and it yields what it awaited. */
static oi_status oi__check_consumer(oi__plan *p, oi__pblock *b) {
    const oi__pnode *nodes = b->nodes;
    int n = (int)arrlen(nodes);
    for (int i = 0; i < n; i++) {
        const oi__pnode *pn = &nodes[i];
        if (pn->ir->kind == OI__NODE_LOOP && (oi__nodes_contain(pn->body, OI__NODE_YIELD) || oi__nodes_contain(pn->body, OI__NODE_AWAIT)))
            return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src, "yield/await cannot be inside a loop");
        if (pn->ir->kind == OI__NODE_AWAIT)
            for (int k = 0; k < (int)arrlen(pn->vars); k++)
                if (!oi__slots_contain(b->awaits, pn->vars[k]) && !arrput(b->awaits, pn->vars[k]))
                    return OI_ERROR_OUT_OF_MEMORY;
        if (pn->ir->kind == OI__NODE_YIELD && i != n - 1)
            return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src, "yield ends consumer block %s: it must be its last statement",
                               b->ir->name);
    }
    for (int k = 0; k < (int)arrlen(b->awaits); k++) {
        bool yielded = false;
        if (n > 0 && nodes[n - 1].ir->kind == OI__NODE_YIELD)
            yielded = oi__slots_contain(nodes[n - 1].vars, b->awaits[k]);
        if (!yielded)
            return oi__fail_at(OI_ERROR_VALIDATION, &b->ir->src, "block %s awaits %s but does not yield it", b->ir->name,
                               p->slots[b->awaits[k]].name);
    }
    return OI_OK;
}

/* Entry: yield S ... await S, no second yield before the await, no write to
 * S in between, and at most one consumer mutating each variable. */
static oi_status oi__check_entry_yields(oi__plan *p) {
    const oi__pblock *entry = &p->blocks[p->entry];
    const oi__pnode *yield = NULL;
    for (int i = 0; i < (int)arrlen(entry->nodes); i++) {
        const oi__pnode *pn = &entry->nodes[i];
        if (pn->ir->kind == OI__NODE_LOOP && (oi__nodes_contain(pn->body, OI__NODE_YIELD) || oi__nodes_contain(pn->body, OI__NODE_AWAIT)))
            return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src, "yield/await cannot be inside a loop");
        if (pn->ir->kind == OI__NODE_YIELD) {
            if (yield)
                return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src, "await required before next yield");
            yield = pn;
            for (int k = 0; k < (int)arrlen(pn->vars); k++) {
                const char *mutator = NULL;
                for (int b = 0; b < (int)arrlen(p->blocks); b++) {
                    const oi__pblock *cb = &p->blocks[b];
                    if (!cb->is_async || !oi__slots_contain(cb->awaits, pn->vars[k]))
                        continue;
                    bool writes = false;
                    for (int j = 0; j < (int)arrlen(cb->nodes); j++)
                        writes |= oi__pnode_writes(&cb->nodes[j], pn->vars[k]);
                    if (writes && mutator)
                        return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src,
                                           "multiple blocks mutate %s: %s and %s (at most one consumer may write a yielded variable)",
                                           p->slots[pn->vars[k]].name, mutator, cb->ir->name);
                    if (writes)
                        mutator = cb->ir->name;
                }
            }
        } else if (pn->ir->kind == OI__NODE_AWAIT) {
            if (!yield)
                return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src, "await without a yield before it");
            for (int k = 0; k < (int)arrlen(pn->vars); k++)
                if (!oi__slots_contain(yield->vars, pn->vars[k]))
                    return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src, "await %s: it was not yielded",
                                       p->slots[pn->vars[k]].name);
            yield = NULL;
        } else if (yield) {
            for (int k = 0; k < (int)arrlen(yield->vars); k++)
                if (oi__pnode_writes(pn, yield->vars[k]))
                    return oi__fail_at(OI_ERROR_VALIDATION, &pn->ir->src,
                                       "%s was yielded to consumer blocks: entry cannot write it before await",
                                       p->slots[yield->vars[k]].name);
        }
    }
    if (yield)
        return oi__fail_at(OI_ERROR_VALIDATION, &yield->ir->src, "yield without a later await in the entry block");
    return OI_OK;
}

static oi_status oi__check_blocks(oi__plan *p) {
    const oi_graph *g = p->graph;
    int nb = (int)arrlen(g->blocks);
    if (nb == 0)
        return oi__fail(OI_ERROR_VALIDATION, "graph %s has no blocks", g->name ? g->name : "");
    p->entry = 0;
    for (int i = 0; i < nb; i++) {
        oi__pblock b;
        memset(&b, 0, sizeof b);
        b.ir = &g->blocks[i];
        if (strcmp(b.ir->name, "entry") == 0)
            p->entry = i;
        if (!arrput(p->blocks, b))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < nb; i++) {
        oi__vctx c;
        memset(&c, 0, sizeof c);
        c.p = p;
        c.block = i;
        oi_status st = oi__check_nodes(&c, p->blocks[i].ir->nodes, &p->blocks[i].nodes);
        if (st != OI_OK)
            return st;
    }
    for (int i = 0; i < (int)arrlen(p->slots); i++) { /* an unused OI_ASSIGN(h): nothing gives it a type */
        oi_status st = !oi__slot_untyped(&p->slots[i]) ? OI_OK : p->strict
            ? oi__fail_at(OI_ERROR_VALIDATION, p->slots[i].src, "nothing writes %s, so it has no type (OI_ASSIGN(%s) takes "
                          "its dtype and shape from its first writer; strict mode)", p->slots[i].name, p->slots[i].name)
            : oi__warn_at(&p->warnings, p->slots[i].src, "nothing writes %s, so it has no type (OI_ASSIGN(%s) takes its "
                          "dtype and shape from its first writer): it is unused (strict mode makes this an error)",
                          p->slots[i].name, p->slots[i].name);
        if (st != OI_OK)
            return st;
    }
    bool *target = (bool *)oi__calloc((size_t)nb, sizeof *target);
    if (!target)
        return OI_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < nb; i++)
        oi__mark_branch_targets(p->blocks[i].nodes, target);
    oi_status st = OI_OK;
    for (int i = 0; i < nb && st == OI_OK; i++) {
        oi__pblock *b = &p->blocks[i];
        b->is_async = i != p->entry && !target[i];
        bool uses_yield = oi__nodes_contain(b->nodes, OI__NODE_YIELD) || oi__nodes_contain(b->nodes, OI__NODE_AWAIT);
        if (b->is_async)
            st = oi__check_consumer(p, b);
        else if (i != p->entry && uses_yield)
            st = oi__fail_at(OI_ERROR_VALIDATION, &b->ir->src,
                             "block %s is a branch target: yield/await belong to the entry block and consumer blocks", b->ir->name);
    }
    oi__free(target);
    if (st == OI_OK)
        st = oi__check_entry_yields(p);
    return st;
}

/* ------------------------------------------------------------------ */
/* Build / free                                                        */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Variables read but never set                                        */
/* ------------------------------------------------------------------ */

static bool oi__slots_has(const int *slots, int s) {
    for (int i = 0; i < (int)arrlen(slots); i++)
        if (slots[i] == s)
            return true;
    return false;
}

/* Where nodes (loop bodies included) read and write slot s. */
static void oi__scan_use(const oi__pnode *nodes, int s, bool *read, bool *written) {
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        const oi__pnode *pn = &nodes[i];
        switch (pn->ir->kind) {
        case OI__NODE_OP:
            *read |= oi__slots_has(pn->inputs, s);
            *written |= pn->out == s;
            break;
        case OI__NODE_CACHE_READ:
        case OI__NODE_TRANSFER:
            *read |= pn->var == s;
            *written |= pn->out == s;
            break;
        case OI__NODE_CACHE_WRITE:
            *read |= pn->out == s; /* the plain-variable side */
            *written |= pn->var == s;
            break;
        case OI__NODE_CACHE_INCREMENT:
        case OI__NODE_CACHE_DECREMENT:
        case OI__NODE_CACHE_RESET: *written |= pn->var == s; break; /* counting from zero is a choice */
        case OI__NODE_BRANCH: *read |= pn->var == s; break;
        case OI__NODE_YIELD: *read |= oi__slots_has(pn->vars, s); break;
        case OI__NODE_AWAIT: *written |= oi__slots_has(pn->vars, s); break;
        case OI__NODE_LOOP: oi__scan_use(pn->body, s, read, written); break;
        default: break;
        }
    }
}

/* A declared variable that the model does not hold, without @init, that
 * the graph reads but never writes holds zeros: most often a misspelled
 * weight name. Dynamic variables are the caller's inputs: not checked. */
static oi_status oi__check_unset_vars(oi__plan *p) {
    for (int s = 0; s < (int)arrlen(p->slots); s++) {
        const oi__slot *sl = &p->slots[s];
        if (!sl->decl || sl->kind == OI__MEM_DYNAMIC || sl->kind == OI__MEM_TEMP || sl->model_tensor || sl->model_meta ||
            sl->is_prefix || sl->decl->init_kind != OI__INIT_NONE)
            continue;
        bool read = false, written = false;
        for (int b = 0; b < (int)arrlen(p->blocks); b++)
            oi__scan_use(p->blocks[b].nodes, s, &read, &written);
        if (!read || written)
            continue;
        const char *what = "is not in the model, has no @init and nothing writes it: it reads as zeros";
        oi_status st = p->strict
            ? oi__fail_at(OI_ERROR_VALIDATION, sl->src, "%s %s (a misspelled name?; strict mode)", sl->name, what)
            : oi__warn_at(&p->warnings, sl->src, "%s %s (a misspelled name? strict mode makes this an error)", sl->name, what);
        if (st != OI_OK)
            return st;
    }
    return OI_OK;
}

static void oi__pnodes_free(oi__pnode *nodes) { oi__plan_nodes_free(nodes, (int)arrlen(nodes)); }

void oi__plan_nodes_free(oi__pnode *nodes, int count) {
    for (int i = 0; i < count; i++) {
        oi__pnode *pn = &nodes[i];
        for (int k = 0; k < (int)arrlen(pn->input_indices); k++)
            arrfree(pn->input_indices[k]);
        arrfree(pn->input_indices);
        arrfree(pn->inputs);
        arrfree(pn->attrs);
        for (int k = 0; k < (int)arrlen(pn->owned); k++)
            oi__free(pn->owned[k]);
        arrfree(pn->owned);
        for (int k = 0; k < (int)arrlen(pn->owned_lists); k++)
            arrfree(pn->owned_lists[k]);
        arrfree(pn->owned_lists);
        arrfree(pn->access);
        arrfree(pn->vars);
        oi__pnodes_free(pn->body);
        arrfree(pn->body);
    }
}

void oi__plan_free(oi__plan *p) {
    if (!p)
        return;
    for (int i = 0; i < (int)arrlen(p->slots); i++)
        oi__free(p->slots[i].owned_pattern);
    arrfree(p->slots);
    shfree(p->by_name);
    for (int i = 0; i < (int)arrlen(p->blocks); i++) {
        oi__pnodes_free(p->blocks[i].nodes);
        arrfree(p->blocks[i].nodes);
        arrfree(p->blocks[i].awaits);
    }
    arrfree(p->blocks);
    shfree(p->sizes);
    shfree(p->entry_sizes);
    for (int i = 0; i < (int)arrlen(p->warnings); i++)
        oi__free(p->warnings[i]);
    arrfree(p->warnings);
    for (int i = 0; i < (int)arrlen(p->literals); i++) {
        oi__var_free(p->literals[i]);
        oi__free(p->literals[i]);
    }
    arrfree(p->literals);
    oi__free(p);
}

/* oi__plan_build keeping the status (OUT_OF_MEMORY vs VALIDATION...). */
static oi_status oi__plan_build_status(const oi_graph *g, const oi_model *m, oi__plan **out) {
    *out = NULL;
    if (!g) { /* most often the NULL of a graph that failed to build: say why it failed */
        const char *why = oi__graph_last_failure();
        if (why)
            return oi__fail(OI_ERROR_VALIDATION, "%s", why);
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "validate: no graph (NULL)");
    }
    oi__plan *p = (oi__plan *)oi__calloc(1, sizeof *p);
    if (!p)
        return OI_ERROR_OUT_OF_MEMORY;
    p->graph = g;
    p->model = m;
    p->strict = oi_graph_is_strict(g);
    oi_status st = OI_OK;
    if (!sh_new_strdup(p->by_name) || !sh_new_strdup(p->sizes))
        st = OI_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; st == OI_OK && m && i < oi_model_sizevar_count(m); i++) {
        const char *name = NULL;
        uint64_t value = 0;
        if (oi_model_sizevar_at(m, i, &name, &value) == OI_OK && name && !shput(p->sizes, name, (int64_t)value))
            st = OI_ERROR_OUT_OF_MEMORY;
    }
    if (st == OI_OK)
        st = oi__declare_vars(p);
    for (int i = 0; st == OI_OK && i < (int)arrlen(g->blocks); i++)
        st = oi__declare_temps(p, g->blocks[i].nodes);
    for (int i = 0; st == OI_OK && i < (int)arrlen(g->blocks); i++)
        st = oi__declare_literals(p, g->blocks[i].nodes);
    if (st == OI_OK) {
        bool changed = true;
        for (int round = 0; changed && round < 64; round++) {
            changed = false;
            for (int i = 0; i < (int)arrlen(g->blocks); i++)
                changed |= oi__propagate_dynamic(p, g->blocks[i].nodes);
        }
        st = oi__check_blocks(p);
    }
    if (st == OI_OK)
        st = oi__check_unset_vars(p);
    if (st != OI_OK) {
        oi__plan_free(p);
        return st;
    }
    *out = p;
    return OI_OK;
}

oi__plan *oi__plan_build(const oi_graph *g, const oi_model *m) {
    oi__plan *p = NULL;
    oi__plan_build_status(g, m, &p);
    return p;
}

oi_status oi_graph_validate(const oi_graph *graph, const oi_model *model) {
    oi__plan *p = NULL;
    oi_status st = oi__plan_build_status(graph, model, &p);
    if (!p)
        return st == OI_ERROR_OUT_OF_MEMORY ? st : OI_ERROR_VALIDATION;
    oi__plan_free(p);
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* The graph with its OI_ASSIGN(h) temporaries typed                   */
/* ------------------------------------------------------------------ */

static bool oi__fill_types(const oi__plan *p, oi__node *nodes) {
    for (int i = 0; i < (int)arrlen(nodes); i++) {
        oi__node *n = &nodes[i];
        if (n->kind == OI__NODE_LOOP && !oi__fill_types(p, n->body))
            return false;
        int s = n->kind == OI__NODE_ASSIGN && n->typed_by_op ? oi__plan_slot(p, n->name) : -1;
        if (s < 0)
            continue;
        const oi__slot *sl = &p->slots[s];
        n->dtype = sl->dtype;
        for (int d = 0; d < sl->ndim; d++) {
            char *dim = (sl->runtime_dims >> d & 1u) ? oi__strdup("?") : oi__sprintf("%lld", (long long)sl->shape[d]);
            if (!dim || !arrput(n->dims, dim)) {
                oi__free(dim);
                return false;
            }
        }
    }
    return true;
}

/* A copy of g (through its lossless JSON) whose typed-by-op temporaries
 * carry the type validation against m gave them. */
static oi_graph *oi__graph_typed_copy(const oi_graph *g, const oi_model *m) {
    oi__plan *p = NULL;
    oi__plan_build_status(g, m, &p);
    if (!p)
        return NULL;
    char *json = oi_graph_to_json(g);
    oi_graph *copy = json ? oi_graph_from_json(json) : NULL;
    oi__free(json);
    for (int b = 0; copy && b < (int)arrlen(copy->blocks); b++)
        if (!oi__fill_types(p, copy->blocks[b].nodes)) {
            oi_graph_free(copy);
            copy = NULL;
            oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory");
        }
    oi__plan_free(p);
    return copy;
}

char *oi_graph_to_json_typed(const oi_graph *graph, const oi_model *model) {
    oi_graph *copy = oi__graph_typed_copy(graph, model);
    char *text = copy ? oi_graph_to_json(copy) : NULL;
    oi_graph_free(copy);
    return text;
}

char *oi_graph_to_dot_typed(const oi_graph *graph, const oi_model *model) {
    oi_graph *copy = oi__graph_typed_copy(graph, model);
    char *text = copy ? oi_graph_to_dot(copy) : NULL;
    oi_graph_free(copy);
    return text;
}
