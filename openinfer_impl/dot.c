/* dot.c - a Graphviz picture of a graph: one cluster per block, loops as
 * nested clusters, branch edges to the target block, yield -> await
 * edges between blocks, and data-flow edges from the node that last
 * wrote a variable to each node that reads it (in program order). */
#include "internal.h"

/* "text" with quotes, backslashes and newlines escaped for DOT. */
static void oi__dot_quoted(oi__buf *b, const char *text) {
    if (!text) /* a text that could not be allocated: the DOT fails as a whole */
        b->failed = true;
    oi__buf_puts(b, "\"");
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            oi__buf_printf(b, "\\%c", *p);
        else if (*p == '\n')
            oi__buf_puts(b, "\\n");
        else
            oi__buf_append(b, p, 1);
    }
    oi__buf_puts(b, "\"");
}

typedef struct oi__dot_writer { char *key; uint32_t value; } oi__dot_writer;
typedef struct oi__dot_set { char *key; int value; } oi__dot_set;

typedef struct oi__dot {
    oi__buf b;
    const oi_graph *g;
    oi__dot_writer *last_writer; /* variable -> index of the node that last wrote it */
    char **var_nodes;            /* declared variables drawn as inputs           */
    oi__dot_set *edges;          /* "from->to:label", to draw each edge once     */
    unsigned scope_clusters;     /* cluster_scope_<n> numbers drawn so far        */
} oi__dot;

static bool oi__dot_seen_edge(oi__dot *d, const char *key) {
    if (shgeti(d->edges, key) >= 0)
        return true;
    if (!d->edges || !shput(d->edges, key, 1))
        d->b.failed = true; /* out of memory: oi_graph_to_dot returns NULL */
    return false;
}

static void oi__dot_edge(oi__dot *d, const char *from, const char *to, const char *label, const char *style) {
    char *key = oi__sprintf("%s->%s:%s", from, to, label);
    if (!key)
        d->b.failed = true;
    bool seen = !key || oi__dot_seen_edge(d, key);
    oi__free(key);
    if (seen)
        return;
    oi__buf_printf(&d->b, "  %s -> %s [label=", from, to);
    oi__dot_quoted(&d->b, label);
    oi__buf_printf(&d->b, "%s%s];\n", *style ? ", " : "", style);
}

/* A read of `name` by node `reader`: an edge from its last writer, or
 * from the variable itself when nothing in the graph wrote it yet. */
static void oi__dot_read(oi__dot *d, const char *name, uint32_t reader) {
    char from[32], to[32];
    snprintf(to, sizeof to, "n%u", (unsigned)reader);
    ptrdiff_t at = shgeti(d->last_writer, name);
    if (at >= 0) {
        if (d->last_writer[at].value == reader)
            return;
        snprintf(from, sizeof from, "n%u", (unsigned)d->last_writer[at].value);
    } else {
        const oi__var *v = oi__graph_find_var(d->g, name);
        if (!v)
            return;
        bool drawn = false;
        for (ptrdiff_t i = 0; i < arrlen(d->var_nodes); i++)
            drawn = drawn || strcmp(d->var_nodes[i], name) == 0;
        if (!drawn) {
            char *copy = oi__strdup(name);
            if (!copy || !arrput(d->var_nodes, copy)) {
                oi__free(copy);
                d->b.failed = true;
            }
        }
        char *var_id = oi__sprintf("\"var_%s\"", name);
        if (var_id)
            oi__dot_edge(d, var_id, to, name, "color=\"#1f77b4\"");
        else
            d->b.failed = true;
        oi__free(var_id);
        return;
    }
    oi__dot_edge(d, from, to, name, "color=\"#1f77b4\"");
}

static void oi__dot_write(oi__dot *d, const char *name, uint32_t writer) {
    if (name && (!d->last_writer || !shput(d->last_writer, name, writer)))
        d->b.failed = true;
}

static void oi__dot_data_flow(oi__dot *d, const oi__node *n) {
    switch (n->kind) {
    case OI__NODE_ASSIGN: oi__dot_write(d, n->name, n->index); break;
    case OI__NODE_OP:
        for (ptrdiff_t i = 0; i < arrlen(n->inputs); i++)
            oi__dot_read(d, n->inputs[i].name, n->index);
        oi__dot_write(d, n->output, n->index);
        break;
    case OI__NODE_CACHE_READ:
        oi__dot_read(d, n->access.base, n->index);
        oi__dot_write(d, n->var.name, n->index);
        break;
    case OI__NODE_CACHE_WRITE:
        oi__dot_read(d, n->var.name, n->index);
        oi__dot_write(d, n->access.base, n->index);
        break;
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
        oi__dot_read(d, n->access.base, n->index);
        oi__dot_write(d, n->access.base, n->index);
        break;
    case OI__NODE_CACHE_RESET: oi__dot_write(d, n->access.base, n->index); break;
    case OI__NODE_TRANSFER:
        oi__dot_read(d, n->src_var.name, n->index);
        oi__dot_write(d, n->dst_var.name, n->index);
        break;
    case OI__NODE_BRANCH:
        if (n->cond)
            oi__dot_read(d, n->cond, n->index);
        break;
    case OI__NODE_YIELD:
        for (ptrdiff_t i = 0; i < arrlen(n->vars); i++)
            oi__dot_read(d, n->vars[i], n->index);
        break;
    case OI__NODE_AWAIT:
        for (ptrdiff_t i = 0; i < arrlen(n->vars); i++)
            oi__dot_write(d, n->vars[i], n->index);
        break;
    case OI__NODE_BARRIER:
    case OI__NODE_DEP:
    case OI__NODE_LOOP:
    case OI__NODE_RETURN: break;
    }
}

/* The number of leading '/'-separated parts `a` and `b` share ("enc/l0", "enc/l1": 1). */
static int oi__dot_common_parts(const char *a, const char *b) {
    int parts = 0;
    while (*a && *b) {
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        if (la != lb || memcmp(a, b, la) != 0)
            break;
        parts++;
        a += la + (a[la] == '/');
        b += lb + (b[lb] == '/');
    }
    return parts;
}

static int oi__dot_count_parts(const char *path) {
    if (!*path)
        return 0;
    int parts = 1;
    for (; *path; path++)
        parts += *path == '/';
    return parts;
}

/* Opens a cluster per scope part of `path` after the first `from` parts. */
static void oi__dot_open_scopes(oi__dot *d, const char *path, int from, int *indent) {
    int part = 0;
    for (const char *p = path; *p; part++) {
        const char *slash = strchr(p, '/');
        int len = slash ? (int)(slash - p) : (int)strlen(p);
        if (part >= from) {
            char *label = oi__sprintf("scope %.*s", len, p);
            oi__buf_printf(&d->b, "%*ssubgraph cluster_scope_%u {\n%*slabel=", *indent, "", d->scope_clusters++, *indent + 2, "");
            oi__dot_quoted(&d->b, label);
            oi__buf_printf(&d->b, ";\n%*sstyle=dashed;\n", *indent + 2, "");
            oi__free(label);
            *indent += 2;
        }
        p = slash ? slash + 1 : p + len;
    }
}

static void oi__dot_close_scopes(oi__dot *d, int count, int *indent) {
    for (int i = 0; i < count; i++) {
        *indent -= 2;
        oi__buf_printf(&d->b, "%*s}\n", *indent, "");
    }
}

/* The node's description, with its hints under it. */
static char *oi__dot_node_label(const oi__node *n) {
    char *text = oi__node_describe(n);
    if (!text || arrlen(n->hints) == 0)
        return text;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "%s\nwith ", text);
    oi__free(text);
    for (ptrdiff_t i = 0; i < arrlen(n->hints); i++) {
        const oi__attr *h = &n->hints[i];
        oi__buf_printf(&b, "%s%s=", i ? ", " : "", h->name);
        if (h->kind == OI__ATTR_BOOL)
            oi__buf_puts(&b, h->i ? "true" : "false");
        else if (h->kind == OI__ATTR_INT)
            oi__buf_printf(&b, "%lld", (long long)h->i);
        else if (h->kind == OI__ATTR_FLOAT)
            oi__buf_printf(&b, "%g", h->f);
        else
            oi__buf_printf(&b, "\"%s\"", h->s ? h->s : "");
    }
    return oi__buf_take(&b);
}

static void oi__dot_nodes_in(oi__dot *d, const oi__node *nodes, int indent, int depth, const char *base);

/* One node of a block or loop body, as a box or (a loop) a nested cluster. */
static void oi__dot_node(oi__dot *d, const oi__node *n, int indent, int depth) {
    char *label = oi__dot_node_label(n);
    if (n->kind == OI__NODE_LOOP && depth < OI__MAX_LOOP_DEPTH) {
        oi__buf_printf(&d->b, "%*ssubgraph cluster_loop_%u {\n%*slabel=", indent, "", (unsigned)n->index, indent + 2, "");
        oi__dot_quoted(&d->b, label);
        oi__buf_printf(&d->b, ";\n%*sstyle=rounded;\n%*sn%u [shape=point, label=\"\"];\n", indent + 2, "", indent + 2, "",
                       (unsigned)n->index);
        oi__dot_nodes_in(d, n->body, indent + 2, depth + 1, n->src.scope ? n->src.scope : "");
        oi__buf_printf(&d->b, "%*s}\n", indent, "");
    } else {
        oi__buf_printf(&d->b, "%*sn%u [label=", indent, "", (unsigned)n->index);
        oi__dot_quoted(&d->b, label);
        oi__buf_puts(&d->b, "];\n");
    }
    oi__free(label);
}

/* The nodes of a block or loop body (whose own scope is `base`), in order;
 * loops become nested clusters, and so do scopes (cluster_scope_<n>, one
 * per run of nodes in the scope). */
static void oi__dot_nodes_in(oi__dot *d, const oi__node *nodes, int indent, int depth, const char *base) {
    const char *open = base; /* the scope path whose clusters are open */
    int base_parts = oi__dot_count_parts(base);
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        const char *want = n->src.scope ? n->src.scope : "";
        int keep = oi__dot_common_parts(open, want);
        if (keep < base_parts) /* outside the body's own scope: not expected, drawn at the body's level */
            keep = base_parts;
        oi__dot_close_scopes(d, oi__dot_count_parts(open) - keep, &indent);
        if (oi__dot_count_parts(want) > keep)
            oi__dot_open_scopes(d, want, keep, &indent);
        open = oi__dot_count_parts(want) >= base_parts ? want : base;
        oi__dot_node(d, n, indent, depth);
    }
    oi__dot_close_scopes(d, oi__dot_count_parts(open) - base_parts, &indent);
}

static void oi__dot_nodes(oi__dot *d, const oi__node *nodes, int indent, int depth) {
    oi__dot_nodes_in(d, nodes, indent, depth, "");
}

/* Program-order edges (invisible) and the data flow, loops flattened.
 * `prev` holds the id of the node drawn last and is updated, so the node
 * after a loop hangs below the loop's last node. */
static void oi__dot_flow(oi__dot *d, const oi__node *nodes, char prev[32], int depth) {
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        char id[32];
        snprintf(id, sizeof id, "n%u", (unsigned)n->index);
        if (*prev)
            oi__buf_printf(&d->b, "  %s -> %s [style=invis];\n", prev, id);
        snprintf(prev, 32, "%s", id);
        oi__dot_data_flow(d, n);
        if (n->kind == OI__NODE_LOOP && depth < OI__MAX_LOOP_DEPTH)
            oi__dot_flow(d, n->body, prev, depth + 1);
    }
}

static bool oi__dot_copy_writers(oi__dot_writer **to, const oi__dot_writer *from) {
    shfree(*to);
    if (!sh_new_strdup(*to))
        return false;
    for (ptrdiff_t i = 0; i < shlen(from); i++)
        if (!shput(*to, from[i].key, from[i].value))
            return false;
    return true;
}

static ptrdiff_t oi__dot_block_index(const oi_graph *g, const char *name) {
    const oi__block *b = oi__graph_find_block(g, name);
    return b ? b - g->blocks : -1;
}

/* Blocks are drawn as cluster_b<i> with an oval anchor b<i>. */
static void oi__dot_branch_edges(oi__dot *d, const oi__node *nodes, int depth) {
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        if (n->kind == OI__NODE_LOOP && depth < OI__MAX_LOOP_DEPTH)
            oi__dot_branch_edges(d, n->body, depth + 1);
        if (n->kind != OI__NODE_BRANCH)
            continue;
        const char *targets[2] = {n->then_block, n->else_block};
        for (int t = 0; t < 2; t++) {
            ptrdiff_t target = targets[t] ? oi__dot_block_index(d->g, targets[t]) : -1;
            if (target < 0)
                continue;
            char from[32], to[32], style[96];
            snprintf(from, sizeof from, "n%u", (unsigned)n->index);
            snprintf(to, sizeof to, "b%td", target);
            snprintf(style, sizeof style, "style=dashed, color=\"#d62728\", lhead=cluster_b%td", target);
            oi__dot_edge(d, from, to, n->cond ? (t == 0 ? "then" : "else") : "branch", style);
        }
    }
}

static bool oi__dot_shares_var(const oi__node *a, const oi__node *b, const char **name) {
    for (ptrdiff_t i = 0; i < arrlen(a->vars); i++)
        for (ptrdiff_t j = 0; j < arrlen(b->vars); j++)
            if (strcmp(a->vars[i], b->vars[j]) == 0) {
                *name = a->vars[i];
                return true;
            }
    return false;
}

/* yield in one block -> await of the same variable in another block. */
static void oi__dot_yield_edges(oi__dot *d) {
    const oi_graph *g = d->g;
    for (ptrdiff_t yb = 0; yb < arrlen(g->blocks); yb++) {
        for (ptrdiff_t yi = 0; yi < arrlen(g->blocks[yb].nodes); yi++) {
            const oi__node *y = &g->blocks[yb].nodes[yi];
            if (y->kind != OI__NODE_YIELD)
                continue;
            for (ptrdiff_t ab = 0; ab < arrlen(g->blocks); ab++) {
                for (ptrdiff_t ai = 0; ab != yb && ai < arrlen(g->blocks[ab].nodes); ai++) {
                    const oi__node *a = &g->blocks[ab].nodes[ai];
                    const char *name = NULL;
                    if (a->kind != OI__NODE_AWAIT || !oi__dot_shares_var(y, a, &name))
                        continue;
                    char from[32], to[32];
                    snprintf(from, sizeof from, "n%u", (unsigned)y->index);
                    snprintf(to, sizeof to, "n%u", (unsigned)a->index);
                    char *label = oi__sprintf("yield %s", name);
                    if (label)
                        oi__dot_edge(d, from, to, label, "style=dotted, color=\"#2ca02c\"");
                    else
                        d->b.failed = true;
                    oi__free(label);
                }
            }
        }
    }
}

char *oi_graph_to_dot(const oi_graph *graph) {
    if (!graph) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_to_dot: graph is NULL");
        return NULL;
    }
    oi__dot d;
    memset(&d, 0, sizeof d);
    d.g = graph;
    if (!sh_new_strdup(d.last_writer) || !sh_new_strdup(d.edges))
        d.b.failed = true; /* oi__buf_take reports it */
    oi__buf_puts(&d.b, "digraph ");
    oi__dot_quoted(&d.b, graph->name);
    oi__buf_puts(&d.b, " {\n  compound=true;\n  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for (ptrdiff_t i = 0; i < arrlen(graph->blocks); i++) {
        const oi__block *block = &graph->blocks[i];
        char *label = oi__sprintf("block %s", block->name);
        oi__buf_printf(&d.b, "  subgraph cluster_b%td {\n    label=", i);
        oi__dot_quoted(&d.b, label);
        oi__buf_printf(&d.b, ";\n    b%td [shape=oval, label=", i);
        oi__dot_quoted(&d.b, block->name);
        oi__buf_puts(&d.b, "];\n");
        oi__free(label);
        oi__dot_nodes(&d, block->nodes, 4, 0);
        oi__buf_puts(&d.b, "  }\n");
    }
    /* Each later block sees the values the first block (entry) left, not
     * those of its siblings: branch targets are alternatives. */
    oi__dot_writer *after_first = NULL;
    for (ptrdiff_t i = 0; i < arrlen(graph->blocks); i++) {
        char prev[32];
        snprintf(prev, sizeof prev, "b%td", i);
        if (i > 0 && !oi__dot_copy_writers(&d.last_writer, after_first))
            d.b.failed = true;
        oi__dot_flow(&d, graph->blocks[i].nodes, prev, 0);
        if (i == 0 && !oi__dot_copy_writers(&after_first, d.last_writer))
            d.b.failed = true;
        oi__dot_branch_edges(&d, graph->blocks[i].nodes, 0);
    }
    shfree(after_first);
    oi__dot_yield_edges(&d);
    for (ptrdiff_t i = 0; i < arrlen(d.var_nodes); i++) {
        const oi__var *v = oi__graph_find_var(graph, d.var_nodes[i]);
        static const char *const kinds[] = {"dynamic", "volatile", "constant", "persistent", "temporary"};
        oi__buf_printf(&d.b, "  \"var_%s\" [shape=ellipse, color=\"#1f77b4\", label=", d.var_nodes[i]);
        char *text = oi__sprintf("%s\n%s %s", v->name, (unsigned)v->kind < 5 ? kinds[v->kind] : "?",
                                 oi_dtype_name(v->dtype) ? oi_dtype_name(v->dtype) : "?");
        oi__dot_quoted(&d.b, text);
        oi__free(text);
        oi__buf_puts(&d.b, "];\n");
    }
    oi__buf_puts(&d.b, "}\n");
    shfree(d.last_writer);
    for (ptrdiff_t i = 0; i < arrlen(d.var_nodes); i++)
        oi__free(d.var_nodes[i]);
    arrfree(d.var_nodes);
    shfree(d.edges);
    return oi__buf_take(&d.b);
}
