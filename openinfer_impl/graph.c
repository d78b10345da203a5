/* graph.c - the graph IR: construction and release, lookups, node
 * descriptions, errors at a statement, the model-independent checks
 * shared by the DSL and JSON builders, and the registry of OI_GRAPH.
 * The builders (dsl.c, json.c) call this file; it calls neither. */
#include "internal.h"

/* ================================================================== */
/* Construction and release                                            */
/* ================================================================== */

oi_graph *oi__graph_new(const char *name) {
    oi_graph *g = (oi_graph *)oi__calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = oi__strdup(name ? name : "");
    if (!g->name) {
        oi__free(g);
        return NULL;
    }
    return g;
}

/* FNV-1a over the graph name and the index, run twice with different
 * seeds for 128 bits: the same graph always gets the same node UUIDs, so
 * traces and golden files are stable. */
static uint64_t oi__g_fnv1a(uint64_t hash, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

void oi__graph_node_uuid(const char *graph_name, uint32_t index, char out[37]) {
    unsigned char index_bytes[4] = {(unsigned char)index, (unsigned char)(index >> 8),
                                    (unsigned char)(index >> 16), (unsigned char)(index >> 24)};
    const char *name = graph_name ? graph_name : "";
    uint64_t hi = oi__g_fnv1a(0xcbf29ce484222325ull, name, strlen(name));
    hi = oi__g_fnv1a(hi, index_bytes, sizeof index_bytes);
    uint64_t lo = oi__g_fnv1a(hi ^ 0x9e3779b97f4a7c15ull, index_bytes, sizeof index_bytes);
    lo = oi__g_fnv1a(lo, name, strlen(name));
    unsigned char bytes[16];
    for (int i = 0; i < 8; i++) {
        bytes[i] = (unsigned char)(hi >> (56 - 8 * i));
        bytes[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
    bytes[6] = (unsigned char)((bytes[6] & 0x0F) | 0x40); /* version 4 */
    bytes[8] = (unsigned char)((bytes[8] & 0x3F) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    int at = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[at++] = '-';
        out[at++] = hex[bytes[i] >> 4];
        out[at++] = hex[bytes[i] & 15];
    }
    out[at] = '\0';
}

void oi__src_free(oi__src *src) {
    oi__free(src->file);
    oi__free(src->text);
    oi__free(src->scope);
    src->file = src->text = src->scope = NULL;
}

static void oi__g_strings_free(char **strings) {
    for (ptrdiff_t i = 0; i < arrlen(strings); i++)
        oi__free(strings[i]);
    arrfree(strings);
}

void oi__var_free(oi__var *v) {
    oi__free(v->name);
    oi__g_strings_free(v->dims);
    oi__g_strings_free(v->table_indices);
    oi__free(v->ref_name);
    oi__free(v->pattern);
    oi__g_strings_free(v->auto_dim);
    for (ptrdiff_t i = 0; i < arrlen(v->fixed); i++)
        oi__free(v->fixed[i].index);
    arrfree(v->fixed);
    oi__g_strings_free(v->extra_attrs);
    oi__src_free(&v->src);
    memset(v, 0, sizeof *v);
}

static void oi__g_varref_free(oi__varref *r) {
    oi__free(r->name);
    oi__g_strings_free(r->indices);
    r->name = NULL;
    r->indices = NULL;
}

void oi__attr_free(oi__attr *a) {
    oi__free(a->name);
    oi__free(a->s);
    arrfree(a->ints);
    oi__g_strings_free(a->exprs);
    arrfree(a->dtypes);
}

static void oi__g_cache_access_free(oi__cache_access *a) {
    oi__free(a->base);
    for (ptrdiff_t i = 0; i < arrlen(a->indices); i++) {
        oi__free(a->indices[i].single.ident);
        oi__free(a->indices[i].start.ident);
        oi__free(a->indices[i].end.ident);
    }
    arrfree(a->indices);
    memset(a, 0, sizeof *a);
}

/* Loop bodies nest at most OI__MAX_LOOP_DEPTH deep (both builders check),
 * which bounds this recursion. */
void oi__node_free(oi__node *n) {
    oi__src_free(&n->src);
    oi__free(n->name);
    oi__g_strings_free(n->dims);
    for (ptrdiff_t i = 0; i < arrlen(n->inputs); i++)
        oi__g_varref_free(&n->inputs[i]);
    arrfree(n->inputs);
    for (ptrdiff_t i = 0; i < arrlen(n->attrs); i++)
        oi__attr_free(&n->attrs[i]);
    arrfree(n->attrs);
    for (ptrdiff_t i = 0; i < arrlen(n->hints); i++)
        oi__attr_free(&n->hints[i]);
    arrfree(n->hints);
    oi__free(n->output);
    oi__free(n->cond);
    oi__free(n->then_block);
    oi__free(n->else_block);
    oi__free(n->after);
    oi__free(n->before);
    oi__g_cache_access_free(&n->access);
    oi__g_varref_free(&n->var);
    oi__g_varref_free(&n->src_var);
    oi__g_varref_free(&n->dst_var);
    oi__g_strings_free(n->vars);
    oi__free(n->loop_name);
    oi__free(n->loop_index);
    oi__free(n->loop_start.ident);
    oi__free(n->loop_end.ident);
    for (ptrdiff_t i = 0; i < arrlen(n->body); i++)
        oi__node_free(&n->body[i]);
    arrfree(n->body);
    memset(n, 0, sizeof *n);
}

void oi__block_free(oi__block *b) {
    oi__free(b->name);
    for (ptrdiff_t i = 0; i < arrlen(b->nodes); i++)
        oi__node_free(&b->nodes[i]);
    arrfree(b->nodes);
    oi__src_free(&b->src);
    memset(b, 0, sizeof *b);
}

void oi_graph_free(oi_graph *graph) {
    if (!graph)
        return;
    for (ptrdiff_t i = 0; i < arrlen(graph->vars); i++)
        oi__var_free(&graph->vars[i]);
    arrfree(graph->vars);
    for (ptrdiff_t i = 0; i < arrlen(graph->blocks); i++)
        oi__block_free(&graph->blocks[i]);
    arrfree(graph->blocks);
    shfree(graph->block_index);
    oi__g_strings_free(graph->warnings);
    oi__free(graph->name);
    oi__free(graph);
}

/* The message of the last graph build that failed on this thread, kept so
 * that `oi_simulator_make_executor(sim, minimal())`, given the NULL of a
 * failed graph, can say why instead of "no graph". */
static OI__THREAD_LOCAL char oi__g_failure[2048];

void oi__graph_note_failure(const char *message) {
    snprintf(oi__g_failure, sizeof oi__g_failure, "%s", message ? message : "");
}

const char *oi__graph_last_failure(void) { return oi__g_failure[0] ? oi__g_failure : NULL; }

const char *oi_graph_name(const oi_graph *graph) { return graph ? graph->name : NULL; }

/* ================================================================== */
/* Strict mode and warnings                                            */
/* ================================================================== */

bool oi_graph_is_strict(const oi_graph *graph) { return graph && (graph->strict || oi__env_read().strict); }

size_t oi_graph_warning_count(const oi_graph *graph) { return graph ? (size_t)arrlen(graph->warnings) : 0; }

const char *oi_graph_warning(const oi_graph *graph, size_t index) {
    return graph && index < (size_t)arrlen(graph->warnings) ? graph->warnings[index] : NULL;
}

oi_status oi__warn_at(char ***list, const oi__src *src, const char *fmt, ...) {
    char reason[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    oi__buf b;
    memset(&b, 0, sizeof b);
    if (src && src->file)
        oi__buf_printf(&b, "%s:%d: warning: %s%s%s%s: %s", src->file, src->line, src->scope ? "in scope " : "",
                       src->scope ? src->scope : "", src->scope ? ": " : "", src->text ? src->text : "", reason);
    else
        oi__buf_printf(&b, "warning: %s", reason);
    char *text = oi__buf_take(&b);
    if (!text)
        return OI_ERROR_OUT_OF_MEMORY;
    for (ptrdiff_t i = 0; i < arrlen(*list); i++) {
        if (strcmp((*list)[i], text) == 0) { /* once */
            oi__free(text);
            return OI_OK;
        }
    }
    if (!arrput(*list, text)) {
        oi__free(text);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

#define OI__KNOWN_VAR_ATTRS "@init, @ref, @pattern, @table, @fixed or @auto_dim"

const oi__attr *oi__node_hint(const oi__node *n, const char *name) {
    for (ptrdiff_t i = 0; n && i < arrlen(n->hints); i++)
        if (strcmp(n->hints[i].name, name) == 0)
            return &n->hints[i];
    return NULL;
}

/* The hints of seed 002 and the type each takes. */
static const struct { const char *name; oi__attr_kind kind; const char *what; } oi__g_hint_kinds[] = {
    {"fuse", OI__ATTR_BOOL, "true or false"},
    {"placement", OI__ATTR_STRING, "a backend name in quotes (\"cpu\", \"gpu\", \"vulkan\", \"blas\")"},
    {"group", OI__ATTR_STRING, "a name in quotes"},
    {"no_reorder", OI__ATTR_BOOL, "true or false"},
};

#define OI__KNOWN_HINTS "fuse, placement, group or no_reorder"

bool oi__placement_known(const char *name) {
    static const char *const known[] = {"cpu", "gpu", "vulkan", "blas"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i]) == 0)
            return true;
    return false;
}

/* A warning, or an error when strict (the graph's unknowns). */
static oi_status oi__g_unknown(oi_graph *g, const oi__src *src, bool strict, const char *what) {
    return strict ? oi__fail_at(OI_ERROR_VALIDATION, src, "%s (strict mode)", what)
                  : oi__warn_at(&g->warnings, src, "%s: it is kept but not used (strict mode makes it an error)", what);
}

static oi_status oi__g_check_hint(oi_graph *g, const oi__node *n, const oi__attr *h, bool strict) {
    char what[256];
    for (size_t k = 0; k < sizeof oi__g_hint_kinds / sizeof oi__g_hint_kinds[0]; k++) {
        if (strcmp(h->name, oi__g_hint_kinds[k].name) != 0)
            continue;
        if (h->kind != oi__g_hint_kinds[k].kind)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "hint %s takes %s", h->name, oi__g_hint_kinds[k].what);
        if (strcmp(h->name, "placement") != 0 || oi__placement_known(h->s))
            return OI_OK;
        snprintf(what, sizeof what, "unknown placement \"%.64s\" (expected cpu, gpu, vulkan or blas)", h->s);
        return oi__g_unknown(g, &n->src, strict, what);
    }
    snprintf(what, sizeof what, "unknown hint %.64s (expected " OI__KNOWN_HINTS ")", h->name);
    return oi__g_unknown(g, &n->src, strict, what);
}

/* Loop bodies nest at most OI__MAX_LOOP_DEPTH deep (both builders check). */
static oi_status oi__g_check_hints(oi_graph *g, const oi__node *nodes, bool strict) {
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        for (ptrdiff_t k = 0; k < arrlen(n->hints); k++) {
            oi_status st = oi__g_check_hint(g, n, &n->hints[k], strict);
            if (st != OI_OK)
                return st;
        }
        oi_status st = n->kind == OI__NODE_LOOP ? oi__g_check_hints(g, n->body, strict) : OI_OK;
        if (st != OI_OK)
            return st;
    }
    return OI_OK;
}

oi_status oi__graph_check_extras(oi_graph *g) {
    bool strict = oi_graph_is_strict(g);
    for (ptrdiff_t i = 0; i < arrlen(g->blocks); i++) {
        oi_status st = oi__g_check_hints(g, g->blocks[i].nodes, strict);
        if (st != OI_OK)
            return st;
    }
    for (ptrdiff_t i = 0; i < arrlen(g->vars); i++) {
        const oi__var *v = &g->vars[i];
        for (ptrdiff_t k = 0; k < arrlen(v->extra_attrs); k++) {
            oi_status st = strict
                ? oi__fail_at(OI_ERROR_VALIDATION, &v->src, "unknown attribute %s (expected " OI__KNOWN_VAR_ATTRS "; strict mode)",
                              v->extra_attrs[k])
                : oi__warn_at(&g->warnings, &v->src, "unknown attribute %s is kept but not used (expected "
                              OI__KNOWN_VAR_ATTRS "; strict mode makes it an error)", v->extra_attrs[k]);
            if (st != OI_OK)
                return st;
        }
    }
    return OI_OK;
}

/* ================================================================== */
/* Lookups, descriptions, errors                                       */
/* ================================================================== */

const oi__var *oi__graph_find_var(const oi_graph *g, const char *name) {
    if (!g || !name)
        return NULL;
    for (ptrdiff_t i = 0; i < arrlen(g->vars); i++)
        if (strcmp(g->vars[i].name, name) == 0)
            return &g->vars[i];
    return NULL;
}

const oi__block *oi__graph_find_block(const oi_graph *g, const char *name) {
    if (!g || !name)
        return NULL;
    ptrdiff_t i = shgeti(g->block_index, name); /* a map, not a scan: graphs of many blocks */
    return i >= 0 ? &g->blocks[g->block_index[i].value] : NULL;
}

oi_status oi__graph_add_block(oi_graph *g, oi__block *b) {
    if (!g->block_index && !sh_new_strdup(g->block_index))
        return OI_ERROR_OUT_OF_MEMORY;
    if (!arrput(g->blocks, *b))
        return OI_ERROR_OUT_OF_MEMORY;
    if (b->name && shgeti(g->block_index, b->name) < 0 &&
        !shput(g->block_index, b->name, (ptrdiff_t)arrlen(g->blocks) - 1)) {
        (void)arrpop(g->blocks);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

oi_status oi__fail_at(oi_status status, const oi__src *src, const char *fmt, ...) {
    char reason[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    if (!src || !src->file)
        return oi__fail(status, "error: %s", reason);
    return oi__fail(status, "%s:%d: error: %s%s%s%s: %s", src->file, src->line, src->scope ? "in scope " : "",
                    src->scope ? src->scope : "", src->scope ? ": " : "", src->text ? src->text : "", reason);
}

void oi__buf_expr(oi__buf *b, const oi__expr *e) {
    if (e->ident)
        oi__buf_puts(b, e->ident);
    else
        oi__buf_printf(b, "%lld", (long long)e->lit);
}

void oi__buf_varref(oi__buf *b, const oi__varref *r) {
    oi__buf_puts(b, r->name ? r->name : "");
    if (arrlen(r->indices) == 0)
        return;
    oi__buf_puts(b, "[");
    for (ptrdiff_t i = 0; i < arrlen(r->indices); i++) {
        if (i)
            oi__buf_puts(b, ",");
        oi__buf_puts(b, r->indices[i]);
    }
    oi__buf_puts(b, "]");
}

void oi__buf_cache_access(oi__buf *b, const oi__cache_access *a) {
    oi__buf_puts(b, a->base ? a->base : "");
    if (!a->bracketed)
        return;
    oi__buf_puts(b, "[");
    for (ptrdiff_t i = 0; i < arrlen(a->indices); i++) {
        const oi__cache_index *ix = &a->indices[i];
        if (i)
            oi__buf_puts(b, ",");
        if (!ix->is_slice) {
            oi__buf_expr(b, &ix->single);
            continue;
        }
        if (ix->has_start)
            oi__buf_expr(b, &ix->start);
        oi__buf_puts(b, "..");
        if (ix->has_end)
            oi__buf_expr(b, &ix->end);
    }
    oi__buf_puts(b, "]");
}

/* The shortest text that reads back as the same double, with ".0" on
 * whole numbers so a float reads as one: 0.01, 6.0, -1e-06, inf. */
static void oi__g_buf_double(oi__buf *b, double value) {
    if (value != value) {
        oi__buf_puts(b, "nan");
        return;
    }
    if (value > 1.7976931348623157e308 || value < -1.7976931348623157e308) {
        oi__buf_puts(b, value > 0 ? "inf" : "-inf");
        return;
    }
    oi__buf_finite_double(b, value);
}

static void oi__g_buf_attr_value(oi__buf *b, const oi__attr *a) {
    switch (a->kind) {
    case OI__ATTR_FLOAT:
        oi__g_buf_double(b, a->f);
        break;
    case OI__ATTR_INT: oi__buf_printf(b, "%lld", (long long)a->i); break;
    case OI__ATTR_BOOL: oi__buf_puts(b, a->i ? "true" : "false"); break;
    case OI__ATTR_STRING: oi__buf_json_string(b, a->s); break;
    case OI__ATTR_IDENT:
    case OI__ATTR_SIZE: oi__buf_puts(b, a->s); break;
    case OI__ATTR_DTYPE: oi__buf_puts(b, oi_dtype_name(a->dtype)); break;
    case OI__ATTR_INT_LIST:
    case OI__ATTR_DTYPE_LIST: {
        bool ints = a->kind == OI__ATTR_INT_LIST;
        ptrdiff_t n = ints ? arrlen(a->ints) : arrlen(a->dtypes);
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < n; i++) {
            if (i)
                oi__buf_puts(b, ",");
            if (ints && a->exprs && a->exprs[i])
                oi__buf_puts(b, a->exprs[i]);
            else if (ints)
                oi__buf_printf(b, "%lld", (long long)a->ints[i]);
            else
                oi__buf_puts(b, oi_dtype_name(a->dtypes[i]));
        }
        oi__buf_puts(b, "]");
        break;
    }
    }
}

static void oi__g_buf_names(oi__buf *b, char **names) {
    for (ptrdiff_t i = 0; i < arrlen(names); i++) {
        oi__buf_puts(b, i ? ", " : " ");
        oi__buf_puts(b, names[i]);
    }
}

static void oi__g_buf_dims(oi__buf *b, char **dims) {
    if (arrlen(dims) == 0)
        return;
    oi__buf_puts(b, "[");
    for (ptrdiff_t i = 0; i < arrlen(dims); i++) {
        if (i)
            oi__buf_puts(b, ", ");
        oi__buf_puts(b, dims[i]);
    }
    oi__buf_puts(b, "]");
}

static void oi__g_describe_into(oi__buf *b, const oi__node *n) {
    switch (n->kind) {
    case OI__NODE_ASSIGN:
        if (n->typed_by_op && !oi_dtype_name(n->dtype)) {
            oi__buf_printf(b, "assign %s (typed by its first writer)", n->name);
            break;
        }
        oi__buf_printf(b, "assign %s: %s", n->name, oi_dtype_name(n->dtype) ? oi_dtype_name(n->dtype) : "?");
        oi__g_buf_dims(b, n->dims);
        if (n->typed_by_op)
            oi__buf_puts(b, " (from its first writer)");
        break;
    case OI__NODE_OP:
        oi__buf_printf(b, "op %s(", oi_op_name(n->op) ? oi_op_name(n->op) : "?");
        for (ptrdiff_t i = 0; i < arrlen(n->inputs); i++) {
            if (i)
                oi__buf_puts(b, ",");
            oi__buf_varref(b, &n->inputs[i]);
        }
        for (ptrdiff_t i = 0; i < arrlen(n->attrs); i++) {
            oi__buf_printf(b, "%s%s=", arrlen(n->inputs) || i ? "," : "", n->attrs[i].name);
            oi__g_buf_attr_value(b, &n->attrs[i]);
        }
        oi__buf_printf(b, ") >> %s", n->output);
        break;
    case OI__NODE_BRANCH:
        if (n->cond)
            oi__buf_printf(b, "branch %s %s %s", n->cond, n->then_block, n->else_block);
        else
            oi__buf_printf(b, "branch %s", n->then_block);
        break;
    case OI__NODE_BARRIER: oi__buf_puts(b, "barrier"); break;
    case OI__NODE_DEP: oi__buf_printf(b, "dep after(%s) before(%s)", n->after, n->before); break;
    case OI__NODE_CACHE_READ:
        oi__buf_puts(b, "cache.read ");
        oi__buf_cache_access(b, &n->access);
        oi__buf_puts(b, " >> ");
        oi__buf_varref(b, &n->var);
        break;
    case OI__NODE_CACHE_WRITE:
        oi__buf_puts(b, "cache.write ");
        oi__buf_varref(b, &n->var);
        oi__buf_puts(b, " >> ");
        oi__buf_cache_access(b, &n->access);
        break;
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
        oi__buf_puts(b, n->kind == OI__NODE_CACHE_INCREMENT ? "cache.increment " : "cache.decrement ");
        if (n->amount != 1)
            oi__buf_printf(b, "%lld ", (long long)n->amount);
        oi__buf_cache_access(b, &n->access);
        break;
    case OI__NODE_CACHE_RESET:
        oi__buf_puts(b, "cache.reset ");
        oi__buf_cache_access(b, &n->access);
        break;
    case OI__NODE_TRANSFER:
        oi__buf_puts(b, "transfer ");
        oi__buf_varref(b, &n->src_var);
        oi__buf_puts(b, " >> ");
        oi__buf_varref(b, &n->dst_var);
        break;
    case OI__NODE_YIELD:
    case OI__NODE_AWAIT:
        oi__buf_puts(b, n->kind == OI__NODE_YIELD ? "yield" : "await");
        oi__g_buf_names(b, n->vars);
        break;
    case OI__NODE_LOOP:
        oi__buf_printf(b, "loop %s (%s in ", n->loop_name, n->loop_index);
        oi__buf_expr(b, &n->loop_start);
        oi__buf_puts(b, "..");
        oi__buf_expr(b, &n->loop_end);
        oi__buf_puts(b, ")");
        break;
    case OI__NODE_RETURN: oi__buf_puts(b, "return"); break;
    }
}

char *oi__node_describe(const oi__node *n) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__g_describe_into(&b, n);
    return oi__buf_take(&b);
}

/* ================================================================== */
/* Checks that need no model                                           */
/* ================================================================== */

bool oi__g_names_contain(char **names, const char *name) {
    for (ptrdiff_t i = 0; i < arrlen(names); i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

const char *oi__mem_kind_name(oi__mem_kind kind) {
    switch (kind) {
    case OI__MEM_DYNAMIC: return "dynamic";
    case OI__MEM_VOLATILE: return "volatile";
    case OI__MEM_CONSTANT: return "constant";
    case OI__MEM_PERSISTENT: return "persistent";
    case OI__MEM_TEMP: return "temporary";
    }
    return "?";
}

/* The range an @init integer must fall in for each integer dtype. */
bool oi__dtype_int_range(oi_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case OI_DTYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case OI_DTYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case OI_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case OI_DTYPE_I64: *lo = INT64_MIN; *hi = INT64_MAX; return true;
    case OI_DTYPE_U8: case OI_DTYPE_BITSET: *lo = 0; *hi = UINT8_MAX; return true;
    case OI_DTYPE_U16: *lo = 0; *hi = UINT16_MAX; return true;
    case OI_DTYPE_U32: *lo = 0; *hi = UINT32_MAX; return true;
    case OI_DTYPE_U64: *lo = 0; *hi = INT64_MAX; return true;
    case OI_DTYPE_I4: *lo = -8; *hi = 7; return true;
    case OI_DTYPE_I2: *lo = -2; *hi = 1; return true;
    case OI_DTYPE_I1: *lo = -1; *hi = 0; return true;
    case OI_DTYPE_U4: *lo = 0; *hi = 15; return true;
    case OI_DTYPE_U2: *lo = 0; *hi = 3; return true;
    case OI_DTYPE_U1: *lo = 0; *hi = 1; return true;
    case OI_DTYPE_T1: case OI_DTYPE_T2: *lo = -1; *hi = 1; return true;
    case OI_DTYPE_BOOL: *lo = 0; *hi = 1; return true;
    default: return false;
    }
}

static oi_status oi__g_check_init(const oi__var *v) {
    const char *dtype = oi_dtype_name(v->dtype);
    switch (v->init_kind) {
    case OI__INIT_NONE: return OI_OK;
    case OI__INIT_FLOAT:
        if (!oi__dtype_is_float(v->dtype))
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@init: a float value needs a float dtype (f8 bf16 f16 f32 f64), not %s", dtype);
        return OI_OK;
    case OI__INIT_BOOL:
        if (v->dtype != OI_DTYPE_BOOL)
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@init: true/false needs dtype bool, not %s", dtype);
        return OI_OK;
    case OI__INIT_INT: {
        int64_t lo, hi;
        if (!oi__dtype_int_range(v->dtype, &lo, &hi))
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@init: an integer value needs an integer dtype, not %s (write %lld.0)",
                               dtype, (long long)v->init_int);
        if (v->init_int < lo || v->init_int > hi || (v->dtype == OI_DTYPE_T1 && v->init_int == 0))
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@init(%lld) is out of range for %s", (long long)v->init_int, dtype);
        return OI_OK;
    }
    }
    return OI_OK;
}

/* "W.{l}" must name every table index once and nothing else. */
static oi_status oi__g_check_pattern(const oi__var *v) {
    char **seen = NULL;
    oi_status status = OI_OK;
    for (const char *p = v->pattern; *p && status == OI_OK; p++) {
        if (*p == '}') {
            status = oi__fail_at(OI_ERROR_FORMAT, &v->src, "@pattern: '}' without '{'");
            break;
        }
        if (*p != '{')
            continue;
        const char *close = strchr(p, '}');
        if (!close) {
            status = oi__fail_at(OI_ERROR_FORMAT, &v->src, "@pattern: '{' without '}'");
            break;
        }
        char *name = oi__strndup(p + 1, (size_t)(close - p - 1));
        if (!name)
            status = OI_ERROR_OUT_OF_MEMORY;
        else if (!oi__g_names_contain(v->table_indices, name))
            status = oi__fail_at(OI_ERROR_FORMAT, &v->src, "@pattern: {%s} is not an index of %s", name, v->name);
        else if (oi__g_names_contain(seen, name))
            status = oi__fail_at(OI_ERROR_FORMAT, &v->src, "@pattern: {%s} appears twice", name);
        if (name && !arrput(seen, name)) {
            oi__free(name);
            status = OI_ERROR_OUT_OF_MEMORY;
        }
        p = close;
    }
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(v->table_indices); i++)
        if (!oi__g_names_contain(seen, v->table_indices[i]))
            status = oi__fail_at(OI_ERROR_FORMAT, &v->src, "@pattern must use every index: {%s} is missing", v->table_indices[i]);
    oi__g_strings_free(seen);
    return status;
}

oi_status oi__var_check(const oi__var *v) {
    if (!oi__dtype_is_tensor_type(v->dtype))
        return oi__fail_at(OI_ERROR_FORMAT, &v->src, "invalid dtype");
    if (v->kind == OI__MEM_TEMP)
        return oi__fail_at(OI_ERROR_FORMAT, &v->src, "a declaration needs a memory section");
    for (ptrdiff_t i = 0; i < arrlen(v->table_indices); i++)
        for (ptrdiff_t j = 0; j < i; j++)
            if (strcmp(v->table_indices[i], v->table_indices[j]) == 0)
                return oi__fail_at(OI_ERROR_FORMAT, &v->src, "index %s is declared twice", v->table_indices[i]);
    oi_status status = oi__g_check_init(v);
    if (status != OI_OK)
        return status;
    if (v->table && arrlen(v->table_indices) == 0)
        return oi__fail_at(OI_ERROR_FORMAT, &v->src, "persistent table %s missing table indices (write %s(i))", v->name, v->name);
    if ((v->table || arrlen(v->auto_dim)) && v->kind != OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_FORMAT, &v->src, "%s is only allowed in persistent memory, not %s",
                           v->table ? "@table" : "@auto_dim", oi__mem_kind_name(v->kind));
    if (v->pattern) {
        if (v->kind != OI__MEM_VOLATILE && v->kind != OI__MEM_CONSTANT)
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "prefix tables (@pattern) are only allowed in volatile or constant memory, not %s",
                               oi__mem_kind_name(v->kind));
        if (arrlen(v->table_indices) == 0)
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@pattern needs table indices (write %s(i))", v->name);
        if ((status = oi__g_check_pattern(v)) != OI_OK)
            return status;
    }
    for (ptrdiff_t i = 0; i < arrlen(v->auto_dim); i++) {
        if (!oi__g_names_contain(v->table_indices, v->auto_dim[i]))
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@auto_dim: %s is not an index of %s", v->auto_dim[i], v->name);
        for (ptrdiff_t j = 0; j < i; j++)
            if (strcmp(v->auto_dim[i], v->auto_dim[j]) == 0)
                return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@auto_dim: %s appears twice", v->auto_dim[i]);
    }
    for (ptrdiff_t i = 0; i < arrlen(v->fixed); i++) {
        if (!oi__g_names_contain(v->table_indices, v->fixed[i].index))
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@fixed: %s is not an index of %s", v->fixed[i].index, v->name);
        if (v->fixed[i].max <= 0)
            return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@fixed: %s must be at least 1", v->fixed[i].index);
        for (ptrdiff_t j = 0; j < i; j++)
            if (strcmp(v->fixed[i].index, v->fixed[j].index) == 0)
                return oi__fail_at(OI_ERROR_FORMAT, &v->src, "@fixed: %s appears twice", v->fixed[i].index);
    }
    return OI_OK;
}

/* ---- the whole-graph walk ---- */
typedef struct oi__g_temp_entry { char *key; const oi__node *value; } oi__g_temp_entry;

typedef struct oi__g_checker {
    const oi_graph *g;
    oi__g_temp_entry *temps; /* OI_ASSIGN names -> their node */
    const char **loop_indices;
    const oi__block *block;
    bool entry_yielded;    /* entry block: a yield waits for its await */
} oi__g_checker;

/* A declared variable or an assigned temporary; NULL + error if neither. */
bool oi__g_known(oi__g_checker *c, const char *name, const oi__var **var, const oi__node **temp) {
    *var = oi__graph_find_var(c->g, name);
    *temp = *var ? NULL : shget(c->temps, name);
    return *var || *temp;
}

static oi_dtype oi__g_name_dtype(const oi__var *var, const oi__node *temp) {
    return var ? var->dtype : temp->dtype;
}

static oi_status oi__g_check_name(oi__g_checker *c, const oi__node *n, const char *name, const oi__var **var) {
    const oi__node *temp;
    if (!oi__g_known(c, name, var, &temp))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "unknown variable %s (declare it in a memory section or with OI_ASSIGN)", name);
    return OI_OK;
}

/* An op input or a plain-variable side: known, with indices only on a
 * prefix table and as many as it declares. */
static oi_status oi__g_check_varref(oi__g_checker *c, const oi__node *n, const oi__varref *r, const oi__var **var) {
    oi_status status = oi__g_check_name(c, n, r->name, var);
    if (status != OI_OK)
        return status;
    ptrdiff_t given = arrlen(r->indices);
    if (given == 0)
        return OI_OK;
    ptrdiff_t declared = *var ? arrlen((*var)->table_indices) : 0;
    if (declared == 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is not a table and takes no index (declare it as %s(i))", r->name, r->name);
    if (given != declared)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s takes %td index(es), got %td", r->name, declared, given);
    if ((*var)->kind == OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", r->name);
    return OI_OK;
}

/* The destination of an op, cache.read or transfer. */
static oi_status oi__g_check_writable(oi__g_checker *c, const oi__node *n, const char *name, const char *via) {
    const oi__var *var;
    oi_status status = oi__g_check_name(c, n, name, &var);
    if (status != OI_OK)
        return status;
    if (var && var->kind == OI__MEM_CONSTANT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cannot write to constant memory (%s is constant)", name);
    if (var && var->kind == OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be written via %s", name, via);
    return OI_OK;
}

static oi_status oi__g_check_op(oi__g_checker *c, const oi__node *n) {
    for (ptrdiff_t i = 0; i < arrlen(n->inputs); i++) {
        const oi__var *var;
        if (n->inputs[i].literal)
            continue; /* a constant the validator makes */
        oi_status status = oi__g_check_varref(c, n, &n->inputs[i], &var);
        if (status != OI_OK)
            return status;
        if (var && var->kind == OI__MEM_PERSISTENT)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", var->name);
    }
    for (ptrdiff_t i = 0; i < arrlen(n->attrs); i++)
        for (ptrdiff_t j = 0; j < i; j++)
            if (strcmp(n->attrs[i].name, n->attrs[j].name) == 0)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "duplicate setting: %s", n->attrs[i].name);
    return oi__g_check_writable(c, n, n->output, "cache.write");
}

bool oi__g_is_loop_index(const oi__g_checker *c, const char *name) {
    for (ptrdiff_t i = 0; i < arrlen(c->loop_indices); i++)
        if (strcmp(c->loop_indices[i], name) == 0)
            return true;
    return false;
}

static oi_status oi__g_check_index_expr(const oi__node *n, const oi__expr *e, bool may_be_negative) {
    int64_t unused;
    if (oi__expr_is_compound(e)) /* its names are checked at validation */
        return oi__expr_eval(e->ident, NULL, NULL, &n->src, &unused);
    if (!e->ident && e->lit < 0 && !may_be_negative)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "negative index %lld (only a slice end may be negative)", (long long)e->lit);
    return OI_OK;
}

/* The cache side of a cache.* statement: a persistent variable, indexed
 * the way its declaration allows. */
static oi_status oi__g_check_access(oi__g_checker *c, const oi__node *n, const oi__var **out) {
    const oi__cache_access *a = &n->access;
    const oi__var *var = oi__graph_find_var(c->g, a->base);
    *out = var;
    if (!var)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "unknown persistent variable %s", a->base);
    if (var->kind != OI__MEM_PERSISTENT)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache operations need persistent memory; %s is %s", a->base,
                           oi__mem_kind_name(var->kind));
    ptrdiff_t n_indices = arrlen(a->indices), declared = arrlen(var->table_indices);
    bool is_table = declared > 0;
    if (var->table && !a->bracketed && n->kind != OI__NODE_CACHE_RESET)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "table %s needs brackets: %s[...]", a->base, a->base);
    if (!is_table && n_indices > 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is not a table and takes no index", a->base);
    if (n_indices > declared)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s takes at most %td index(es), got %td", a->base, declared, n_indices);
    for (ptrdiff_t i = 0; i < n_indices; i++) {
        const oi__cache_index *ix = &a->indices[i];
        oi_status status;
        if (!ix->is_slice) {
            status = oi__g_check_index_expr(n, &ix->single, false);
        } else {
            if (arrlen(var->auto_dim) > 0)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "slices are not allowed on @auto_dim variable %s", a->base);
            if (n->kind == OI__NODE_CACHE_RESET)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.reset takes no slices");
            if (n->kind == OI__NODE_CACHE_WRITE)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cache.write needs single indices, not slices");
            status = ix->has_start ? oi__g_check_index_expr(n, &ix->start, false) : OI_OK;
            if (status == OI_OK && ix->has_end)
                status = oi__g_check_index_expr(n, &ix->end, true);
        }
        if (status != OI_OK)
            return status;
    }
    return OI_OK;
}

static oi_status oi__g_check_same_dtype(const oi__node *n, const char *what, oi_dtype have, const char *cache, oi_dtype want) {
    if (have != want && have != OI_DTYPE_INVALID) /* INVALID: OI_ASSIGN(h), typed at validation */
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is %s but cache %s is %s", what, oi_dtype_name(have), cache,
                           oi_dtype_name(want));
    return OI_OK;
}

static oi_status oi__g_check_cache(oi__g_checker *c, const oi__node *n) {
    const oi__var *cache;
    oi_status status = oi__g_check_access(c, n, &cache);
    if (status != OI_OK)
        return status;
    const oi__var *var;
    const oi__node *temp;
    switch (n->kind) {
    case OI__NODE_CACHE_READ:
        if ((status = oi__g_check_writable(c, n, n->var.name, "cache.write")) != OI_OK)
            return status;
        oi__g_known(c, n->var.name, &var, &temp);
        return oi__g_check_same_dtype(n, n->var.name, oi__g_name_dtype(var, temp), cache->name, cache->dtype);
    case OI__NODE_CACHE_WRITE:
        if ((status = oi__g_check_name(c, n, n->var.name, &var)) != OI_OK)
            return status;
        if (var && var->kind == OI__MEM_PERSISTENT)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", var->name);
        oi__g_known(c, n->var.name, &var, &temp);
        return oi__g_check_same_dtype(n, n->var.name, oi__g_name_dtype(var, temp), cache->name, cache->dtype);
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
        if (arrlen(cache->table_indices) > 0 || cache->dtype == OI_DTYPE_BOOL || cache->dtype == OI_DTYPE_BITSET ||
            oi__dtype_is_packed(cache->dtype))
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s needs a scalar counter of a plain number dtype; %s is %s%s",
                               n->kind == OI__NODE_CACHE_INCREMENT ? "cache.increment" : "cache.decrement", cache->name,
                               oi_dtype_name(cache->dtype), arrlen(cache->table_indices) ? " (a table)" : "");
        if (n->amount < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "the amount must not be negative");
        return OI_OK;
    default: return OI_OK;
    }
}

static oi_status oi__g_check_transfer(oi__g_checker *c, const oi__node *n) {
    const oi__var *src, *dst;
    const oi__node *src_temp, *dst_temp;
    oi_status status = oi__g_check_varref(c, n, &n->src_var, &src);
    if (status == OI_OK && src && src->kind == OI__MEM_PERSISTENT)
        status = oi__fail_at(OI_ERROR_VALIDATION, &n->src, "persistent cache %s must be read via cache.read", src->name);
    if (status == OI_OK)
        status = oi__g_check_writable(c, n, n->dst_var.name, "cache.write");
    if (status == OI_OK && arrlen(n->dst_var.indices) > 0)
        status = oi__fail_at(OI_ERROR_VALIDATION, &n->src, "a transfer destination takes no index");
    if (status != OI_OK)
        return status;
    oi__g_known(c, n->src_var.name, &src, &src_temp);
    oi__g_known(c, n->dst_var.name, &dst, &dst_temp);
    oi_dtype from = oi__g_name_dtype(src, src_temp), to = oi__g_name_dtype(dst, dst_temp);
    if (from != to && from != OI_DTYPE_INVALID && to != OI_DTYPE_INVALID) /* OI_ASSIGN(h): at validation */
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "transfer from %s to %s: %s does not match %s", n->src_var.name,
                           n->dst_var.name, oi_dtype_name(from), oi_dtype_name(to));
    return OI_OK;
}

bool oi__g_block_is_entry(const oi__block *b) { return strcmp(b->name, "entry") == 0; }

static oi_status oi__g_check_yield_await(oi__g_checker *c, const oi__node *n, bool top_level, bool last_in_block) {
    if (arrlen(n->vars) == 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s needs at least one variable", n->kind == OI__NODE_YIELD ? "yield" : "await");
    for (ptrdiff_t i = 0; i < arrlen(n->vars); i++) {
        const oi__var *var;
        oi_status status = oi__g_check_name(c, n, n->vars[i], &var);
        if (status != OI_OK)
            return status;
        for (ptrdiff_t j = 0; j < i; j++)
            if (strcmp(n->vars[i], n->vars[j]) == 0)
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is listed twice", n->vars[i]);
        if (n->kind == OI__NODE_AWAIT && var && var->kind == OI__MEM_CONSTANT)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "cannot await constant %s", n->vars[i]);
    }
    bool entry = oi__g_block_is_entry(c->block);
    if (!entry) {
        if (n->kind == OI__NODE_YIELD && !(top_level && last_in_block))
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "yield must be the last statement of block %s", c->block->name);
        return OI_OK;
    }
    if (!top_level)
        return OI_OK; /* inside a loop the order is known only at run time */
    if (n->kind == OI__NODE_YIELD) {
        if (c->entry_yielded)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "await required before next yield");
        c->entry_yielded = true;
    } else {
        if (!c->entry_yielded)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "await without a yield before it in block entry");
        c->entry_yielded = false;
    }
    return OI_OK;
}

static oi_status oi__g_check_nodes(oi__g_checker *c, const oi__node *nodes, bool top_level, int depth);

static oi_status oi__g_check_loop(oi__g_checker *c, const oi__node *n, int depth) {
    if (depth >= OI__MAX_LOOP_DEPTH)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loops nest deeper than %d", OI__MAX_LOOP_DEPTH);
    if (oi__g_is_loop_index(c, n->loop_index))
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loop index %s is already used by an enclosing loop", n->loop_index);
    if (oi__graph_find_var(c->g, n->loop_index) || shgeti(c->temps, n->loop_index) >= 0)
        return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loop index %s shadows a variable", n->loop_index);
    const oi__expr *bounds[2] = {&n->loop_start, &n->loop_end};
    for (int i = 0; i < 2; i++) {
        oi_status status = oi__g_check_index_expr(n, bounds[i], true);
        if (status != OI_OK)
            return status;
        if (!bounds[i]->ident && bounds[i]->lit < 0)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "loop bounds must not be negative");
    }
    if (!arrput(c->loop_indices, n->loop_index))
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status status = oi__g_check_nodes(c, n->body, false, depth + 1);
    (void)arrpop(c->loop_indices);
    return status;
}

static oi_status oi__g_check_branch(oi__g_checker *c, const oi__node *n) {
    const oi__var *var;
    if (n->cond) {
        oi_status status = oi__g_check_name(c, n, n->cond, &var);
        if (status != OI_OK)
            return status;
        if (!n->else_block)
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "branch expects condition and two target blocks");
    }
    const char *targets[2] = {n->then_block, n->else_block};
    for (int i = 0; i < 2; i++)
        if (targets[i] && !oi__graph_find_block(c->g, targets[i]))
            return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "branch to missing block %s", targets[i]);
    return OI_OK;
}

static oi_status oi__g_check_node(oi__g_checker *c, const oi__node *n, bool top_level, bool last, int depth) {
    switch (n->kind) {
    case OI__NODE_ASSIGN: return OI_OK; /* checked when collected */
    case OI__NODE_OP: return oi__g_check_op(c, n);
    case OI__NODE_BRANCH: return oi__g_check_branch(c, n);
    case OI__NODE_CACHE_READ:
    case OI__NODE_CACHE_WRITE:
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
    case OI__NODE_CACHE_RESET: return oi__g_check_cache(c, n);
    case OI__NODE_TRANSFER: return oi__g_check_transfer(c, n);
    case OI__NODE_YIELD:
    case OI__NODE_AWAIT: return oi__g_check_yield_await(c, n, top_level, last);
    case OI__NODE_LOOP: return oi__g_check_loop(c, n, depth);
    case OI__NODE_BARRIER:
    case OI__NODE_DEP:
    case OI__NODE_RETURN: return OI_OK;
    }
    return OI_OK;
}

static oi_status oi__g_check_nodes(oi__g_checker *c, const oi__node *nodes, bool top_level, int depth) {
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        oi_status status = oi__g_check_node(c, &nodes[i], top_level, i + 1 == arrlen(nodes), depth);
        if (status != OI_OK)
            return status;
    }
    return OI_OK;
}

/* Every OI_ASSIGN, anywhere (loops included): a new name, once. */
static oi_status oi__g_collect_temps(oi__g_checker *c, const oi__node *nodes, int depth) {
    if (depth > OI__MAX_LOOP_DEPTH)
        return OI_OK; /* reported by oi__g_check_loop */
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        oi_status status = OI_OK;
        if (n->kind == OI__NODE_LOOP) {
            status = oi__g_collect_temps(c, n->body, depth + 1);
        } else if (n->kind == OI__NODE_ASSIGN) {
            if (!oi__dtype_is_tensor_type(n->dtype) && !n->typed_by_op)
                status = oi__fail_at(OI_ERROR_VALIDATION, &n->src, "invalid dtype");
            else if (oi__graph_find_var(c->g, n->name))
                status = oi__fail_at(OI_ERROR_VALIDATION, &n->src, "assign %s shadows a declared variable", n->name);
            else if (shgeti(c->temps, n->name) >= 0)
                status = oi__fail_at(OI_ERROR_VALIDATION, &n->src, "%s is assigned twice (first at line %d)", n->name,
                                     shget(c->temps, n->name)->src.line);
            else if (!shput(c->temps, n->name, n))
                status = OI_ERROR_OUT_OF_MEMORY;
        }
        if (status != OI_OK)
            return status;
    }
    return OI_OK;
}

/* A block other than entry that awaits a variable hands it back with a
 * final yield. */
static oi_status oi__g_check_consumer_block(const oi__block *b) {
    const oi__node *last = arrlen(b->nodes) ? &b->nodes[arrlen(b->nodes) - 1] : NULL;
    for (ptrdiff_t i = 0; i < arrlen(b->nodes); i++) {
        const oi__node *n = &b->nodes[i];
        if (n->kind != OI__NODE_AWAIT)
            continue;
        for (ptrdiff_t v = 0; v < arrlen(n->vars); v++)
            if (!last || last->kind != OI__NODE_YIELD || !oi__g_names_contain(last->vars, n->vars[v]))
                return oi__fail_at(OI_ERROR_VALIDATION, &n->src, "block %s awaits %s but does not yield it", b->name, n->vars[v]);
    }
    return OI_OK;
}

oi_status oi__graph_check(const oi_graph *g) {
    oi__g_checker c;
    memset(&c, 0, sizeof c);
    c.g = g;
    if (!sh_new_strdup(c.temps))
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status status = OI_OK;
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(g->vars); i++) {
        status = oi__var_check(&g->vars[i]);
        for (ptrdiff_t j = 0; status == OI_OK && j < i; j++)
            if (strcmp(g->vars[i].name, g->vars[j].name) == 0)
                status = oi__fail_at(OI_ERROR_VALIDATION, &g->vars[i].src, "duplicate declaration of %s (first at line %d)",
                                     g->vars[i].name, g->vars[j].src.line);
    }
    if (status == OI_OK && arrlen(g->blocks) == 0)
        status = oi__fail(OI_ERROR_VALIDATION, "graph %s has no blocks", g->name);
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(g->blocks); i++) {
        const oi__block *first = oi__graph_find_block(g, g->blocks[i].name);
        if (first && first != &g->blocks[i])
            status = oi__fail_at(OI_ERROR_VALIDATION, &g->blocks[i].src, "duplicate block %s (first at line %d)",
                                 g->blocks[i].name, first->src.line);
        if (status == OI_OK)
            status = oi__g_collect_temps(&c, g->blocks[i].nodes, 0);
    }
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(g->blocks); i++) {
        c.block = &g->blocks[i];
        c.entry_yielded = false;
        status = oi__g_check_nodes(&c, c.block->nodes, true, 0);
        if (status == OI_OK && !oi__g_block_is_entry(c.block))
            status = oi__g_check_consumer_block(c.block);
    }
    shfree(c.temps);
    arrfree(c.loop_indices);
    return status;
}

/* ================================================================== */
/* The registry of OI_GRAPH graphs                                     */
/* ================================================================== */

typedef struct oi__g_registered_graph {
    const char *name;              /* the OI_GRAPH name (a string literal) */
    const oi_graph *const *slot;   /* the accessor's static pointer        */
    oi_graph *graph;               /* NULL when the build failed            */
    char *error;                   /* the build's message when it failed    */
} oi__g_registered_graph;

/* Filled by startup constructors (one thread, before main); graphs live
 * as long as the program. */
static oi__g_registered_graph *oi__g_registry;

void oi__graph_register_built(const char *name, const oi_graph **slot, oi_graph *graph) {
    oi__g_registered_graph entry;
    memset(&entry, 0, sizeof entry);
    entry.name = name;
    entry.slot = slot;
    entry.graph = graph;
    if (!entry.graph)
        entry.error = oi__strdup(oi_last_error());
    if (slot)
        *slot = entry.graph;
    if (!arrput(oi__g_registry, entry)) { /* oi_graph_find will not know it; the accessor does */
        oi__free(entry.error);
        if (!slot)
            oi_graph_free(entry.graph);
    }
}

const oi_graph *oi_graph_find(const char *name) {
    const oi__g_registered_graph *failed = NULL;
    for (ptrdiff_t i = 0; name && i < arrlen(oi__g_registry); i++) {
        if (strcmp(oi__g_registry[i].name, name) != 0)
            continue;
        if (oi__g_registry[i].graph)
            return oi__g_registry[i].graph;
        if (!failed)
            failed = &oi__g_registry[i];
    }
    if (failed) {
        oi__fail(OI_ERROR_VALIDATION, "%s", failed->error ? failed->error : "graph failed to build");
        oi__graph_note_failure(oi_last_error());
    }
    else
        oi__fail(OI_ERROR_NOT_FOUND, "no graph named %s (define it with OI_GRAPH)", name ? name : "(null)");
    return NULL;
}

const char *oi_graph_error(const char *name) {
    for (ptrdiff_t i = 0; name && i < arrlen(oi__g_registry); i++)
        if (strcmp(oi__g_registry[i].name, name) == 0 && !oi__g_registry[i].graph)
            return oi__g_registry[i].error ? oi__g_registry[i].error : "graph failed to build";
    return NULL;
}

const oi_graph *oi__graph_unavailable(const oi_graph *const *slot) {
    for (ptrdiff_t i = 0; i < arrlen(oi__g_registry); i++) {
        if (oi__g_registry[i].slot == slot) {
            oi__fail(OI_ERROR_VALIDATION, "%s", oi__g_registry[i].error ? oi__g_registry[i].error : "graph failed to build");
            oi__graph_note_failure(oi_last_error());
            return NULL;
        }
    }
    oi__fail(OI_ERROR_NOT_FOUND, "graph accessor called before the graph was built");
    return NULL;
}
