/* test_dsl.c - the graph DSL: graphs written with the real macros build
 * into the expected IR at startup, and every mistake is reported as
 * "file:line: error: statement: reason" with the user's line. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"

#include "graphs_every_construct.h"

/* __FILE__ of the shared graph, as the compiler spells the include path. */
#define EVERY_FILE "graphs_every_construct.h"

/* ---- the seed README's examples, translated ---- */
OI_GRAPH(minimal,
  OI_DYNAMIC(
    OI_VAR(x, f32[B])
  )
  OI_VOLATILE(
    OI_VAR(a, f32[B])
    OI_VAR(y, f32[B], @init(5.0))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(t0, f32[B])
    OI_OP(add, x, a) OI_TO(t0)
    OI_OP(mul, y, t0) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(kv_step,
  OI_DYNAMIC( OI_VAR(x, f32[B, D]) )
  OI_VOLATILE(
    OI_VAR(z, f32[B, D])
    OI_VAR(W(l), f32[D, D], @pattern("W.{l}"))
  )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))
    OI_VAR(K(l, t), f16[H, Dh], @table)
    OI_VAR(V(l, t), f16[H, Dh], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, D])
    OI_ASSIGN(k, f16[H, Dh])
    OI_ASSIGN(v, f16[H, Dh])
    OI_TRANSFER(x, h)
    OI_LOOP(layers, l, 0..10,
      OI_CACHE_READ(K[l, step], k)
      OI_CACHE_READ(V[l, step], v)
      OI_OP(matmul, h, W[l]) OI_TO(h)
      OI_CACHE_WRITE(k, K[l, step])
      OI_CACHE_WRITE(v, V[l, step])
    )
    OI_CACHE_INCREMENT(step)
    OI_RETURN()
  )
)

OI_GRAPH(yield_example,
  OI_DYNAMIC( OI_VAR(x, i32[D]) )
  OI_VOLATILE( OI_VAR(W(l), f32[D, D], @pattern("W.{l}")) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, D])
    OI_OP(matmul, h, W[0]) OI_TO(h)
    OI_YIELD(x)
    OI_OP(relu, h, negative_slope=0.0, clamp_max=6.0) OI_TO(h)
    OI_AWAIT(x)
    OI_RETURN()
  )
  OI_BLOCK(consumer_1, OI_AWAIT(x) OI_YIELD(x))
  OI_BLOCK(consumer_2, OI_AWAIT(x) OI_YIELD(x))
)

/* ---- helpers ---- */
static const oi__node *find_in(const oi__node *nodes, uint32_t index) {
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        if (nodes[i].index == index)
            return &nodes[i];
        if (nodes[i].kind == OI__NODE_LOOP) {
            const oi__node *inner = find_in(nodes[i].body, index);
            if (inner)
                return inner;
        }
    }
    return NULL;
}

static const oi__node *node_at(const oi_graph *g, uint32_t index) {
    for (ptrdiff_t b = 0; b < arrlen(g->blocks); b++) {
        const oi__node *n = find_in(g->blocks[b].nodes, index);
        if (n)
            return n;
    }
    return NULL;
}

static bool strings_are(char **strings, int count, const char *const *want) {
    if (arrlen(strings) != count)
        return false;
    for (int i = 0; i < count; i++)
        if (strcmp(strings[i], want[i]) != 0)
            return false;
    return true;
}

#define STRINGS_ARE(strings, ...) \
    do { static const char *const want_[] = {__VA_ARGS__}; \
         CHECK(strings_are((strings), (int)(sizeof want_ / sizeof want_[0]), want_)); } while (0)

static const oi__attr *attr_named(const oi__node *n, const char *name) {
    for (ptrdiff_t i = 0; i < arrlen(n->attrs); i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

static void check_describe(const oi__node *n, const char *want) {
    char *text = n ? oi__node_describe(n) : NULL;
    CHECK_MSG(text && strcmp(text, want) == 0, "describe: got \"%s\", want \"%s\"", text ? text : "(null)", want);
    oi_free(text);
}

static void check_src(const oi__src *src, const char *file, int line, const char *text) {
    size_t have = src->file ? strlen(src->file) : 0, want = strlen(file);
    CHECK_MSG(have >= want && strcmp(src->file + have - want, file) == 0, "file %s does not end in %s",
              src->file ? src->file : "(null)", file);
    CHECK_EQ_INT(src->line, line);
    CHECK_MSG(src->text && strcmp(src->text, text) == 0, "text \"%s\" vs \"%s\"", src->text ? src->text : "(null)", text);
}

static bool uuid_is_v4(const char *u) {
    if (strlen(u) != 36 || u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-' || u[14] != '4')
        return false;
    return u[19] == '8' || u[19] == '9' || u[19] == 'a' || u[19] == 'b';
}

/* ---- every construct ---- */
static void test_vars(const oi_graph *g) {
    CHECK_EQ_INT(arrlen(g->vars), 18);
    const oi__var *x = oi__graph_find_var(g, "x");
    CHECK(x && x->kind == OI__MEM_DYNAMIC && x->dtype == OI_DTYPE_F32);
    if (x) {
        STRINGS_ARE(x->dims, "B", "D");
        check_src(&x->src, EVERY_FILE, 7, "OI_VAR(x, f32[B, D])");
    }
    const oi__var *y = oi__graph_find_var(g, "y");
    CHECK(y && y->kind == OI__MEM_VOLATILE && y->init_kind == OI__INIT_FLOAT && y->init_float == 5.0);
    const oi__var *w = oi__graph_find_var(g, "W");
    CHECK(w && w->pattern && strcmp(w->pattern, "W.{l}") == 0 && !w->table);
    if (w)
        STRINGS_ARE(w->table_indices, "l");
    const oi__var *bias = oi__graph_find_var(g, "bias");
    CHECK(bias && bias->ref_name && strcmp(bias->ref_name, "bias_vector") == 0);
    const oi__var *alpha = oi__graph_find_var(g, "alpha");
    CHECK(alpha && alpha->kind == OI__MEM_CONSTANT && arrlen(alpha->dims) == 0 && strcmp(alpha->ref_name, "alpha") == 0);
    const oi__var *qkv = oi__graph_find_var(g, "QKV");
    CHECK(qkv && qkv->dtype == OI_DTYPE_F16 && strcmp(qkv->pattern, "attn.{head}.qkv.{layer}") == 0);
    if (qkv) {
        STRINGS_ARE(qkv->table_indices, "layer", "head");
        STRINGS_ARE(qkv->dims, "D", "3*D");
    }
    const oi__var *flags = oi__graph_find_var(g, "flags");
    CHECK(flags && flags->dtype == OI_DTYPE_BOOL && flags->init_kind == OI__INIT_BOOL && flags->init_int == 1);
    const oi__var *scale = oi__graph_find_var(g, "scale");
    CHECK(scale && scale->init_kind == OI__INIT_INT && scale->init_int == -3);
    if (scale)
        STRINGS_ARE(scale->dims, "B*D", "16");
    const oi__var *step = oi__graph_find_var(g, "step");
    CHECK(step && step->kind == OI__MEM_PERSISTENT && step->dtype == OI_DTYPE_I32 && step->init_kind == OI__INIT_INT &&
          step->init_int == 0);
    const oi__var *k = oi__graph_find_var(g, "K");
    CHECK(k && k->table && arrlen(k->auto_dim) == 0);
    const oi__var *t = oi__graph_find_var(g, "T");
    CHECK(t && t->table && arrlen(t->fixed) == 2);
    if (t && arrlen(t->fixed) == 2) {
        CHECK(strcmp(t->fixed[0].index, "i") == 0 && t->fixed[0].max == 1024);
        CHECK(strcmp(t->fixed[1].index, "j") == 0 && t->fixed[1].max == 256);
    }
    const oi__var *m = oi__graph_find_var(g, "M");
    CHECK(m && !m->table);
    if (m)
        STRINGS_ARE(m->auto_dim, "i", "j");
    const oi__var *c = oi__graph_find_var(g, "C");
    CHECK(c && c->table);
    if (c) {
        STRINGS_ARE(c->table_indices, "l", "i", "j");
        STRINGS_ARE(c->auto_dim, "i", "j");
        check_src(&c->src, EVERY_FILE, 30, "OI_VAR(C(l, i, j), f32[D, H], @table @auto_dim(i, j))");
    }
    CHECK(oi__graph_find_var(g, "h") == NULL); /* temporaries are nodes, not declarations */
}

static void test_ops(const oi_graph *g) {
    const oi__node *matmul = node_at(g, 8);
    CHECK(matmul && matmul->kind == OI__NODE_OP && matmul->op == OI_OP_matmul && strcmp(matmul->output, "h") == 0);
    if (matmul && arrlen(matmul->inputs) == 2) {
        CHECK(strcmp(matmul->inputs[0].name, "x") == 0 && arrlen(matmul->inputs[0].indices) == 0);
        CHECK(strcmp(matmul->inputs[1].name, "W") == 0);
        STRINGS_ARE(matmul->inputs[1].indices, "0");
        check_src(&matmul->src, EVERY_FILE, 41, "OI_OP(matmul, x, W[0]) OI_TO(h)");
    }
    const oi__node *relu = node_at(g, 9);
    CHECK(relu && arrlen(relu->attrs) == 3);
    const oi__attr *a = relu ? attr_named(relu, "negative_slope") : NULL;
    CHECK(a && a->kind == OI__ATTR_FLOAT && a->f == 0.01);
    a = relu ? attr_named(relu, "clamp_min") : NULL;
    CHECK(a && a->kind == OI__ATTR_FLOAT && a->f == -1e-6);
    a = relu ? attr_named(relu, "clamp_max") : NULL;
    CHECK(a && a->kind == OI__ATTR_FLOAT && isinf(a->f) && a->f > 0);
    const oi__node *sum = node_at(g, 10);
    a = sum ? attr_named(sum, "axes") : NULL;
    CHECK(a && a->kind == OI__ATTR_INT_LIST && arrlen(a->ints) == 2 && a->ints[0] == 1 && a->ints[1] == -1);
    a = sum ? attr_named(sum, "keepdims") : NULL;
    CHECK(a && a->kind == OI__ATTR_BOOL && a->i == 1);
    const oi__node *cast = node_at(g, 11);
    a = cast ? attr_named(cast, "to") : NULL;
    CHECK(a && a->kind == OI__ATTR_DTYPE && a->dtype == OI_DTYPE_F32);
    const oi__node *fill = node_at(g, 12);
    a = fill ? attr_named(fill, "value") : NULL;
    CHECK(a && a->kind == OI__ATTR_IDENT && strcmp(a->s, "alpha") == 0);
    a = fill ? attr_named(fill, "label") : NULL;
    CHECK(a && a->kind == OI__ATTR_STRING && strcmp(a->s, "proj") == 0);
    a = fill ? attr_named(fill, "acc") : NULL;
    CHECK(a && a->kind == OI__ATTR_DTYPE_LIST && arrlen(a->dtypes) == 2 && a->dtypes[0] == OI_DTYPE_F32 &&
          a->dtypes[1] == OI_DTYPE_I64);
    a = fill ? attr_named(fill, "bits") : NULL;
    CHECK(a && a->kind == OI__ATTR_INT && a->i == -4);
    const oi__node *add = node_at(g, 23);
    CHECK(add && add->op == OI_OP_add && arrlen(add->inputs) == 2);
    if (add && arrlen(add->inputs) == 2)
        STRINGS_ARE(add->inputs[1].indices, "0", "1");
    check_describe(node_at(g, 9), "op relu(h,negative_slope=0.01,clamp_min=-1e-06,clamp_max=inf) >> h");
    check_describe(node_at(g, 18), "op add(q,QKV[l,hd]) >> q");
}

static void test_loops(const oi_graph *g) {
    const oi__node *layers = node_at(g, 13);
    CHECK(layers && layers->kind == OI__NODE_LOOP && strcmp(layers->loop_name, "layers") == 0 &&
          strcmp(layers->loop_index, "l") == 0);
    if (!layers)
        return;
    CHECK(!layers->loop_start.ident && layers->loop_start.lit == 0);
    CHECK(layers->loop_end.ident && strcmp(layers->loop_end.ident, "num_layers") == 0);
    CHECK_EQ_INT(arrlen(layers->body), 6);
    check_src(&layers->src, EVERY_FILE, 46, "OI_LOOP(layers, l, 0..num_layers)");
    const oi__node *heads = node_at(g, 17);
    CHECK(heads && heads->kind == OI__NODE_LOOP && heads->loop_end.lit == 4 && arrlen(heads->body) == 1);
    CHECK(find_in(layers->body, 18) != NULL); /* nested inside layers */
    const oi__node *scan = node_at(g, 21);
    CHECK(scan && scan->loop_start.ident && strcmp(scan->loop_start.ident, "step") == 0 && scan->loop_end.lit == 16);
    check_describe(scan, "loop scan (s in step..16)");
}

static void check_slice(const oi__cache_index *ix, bool has_start, int64_t start, bool has_end, int64_t end) {
    CHECK(ix->is_slice && ix->has_start == has_start && ix->has_end == has_end);
    if (has_start)
        CHECK(!ix->start.ident && ix->start.lit == start);
    if (has_end)
        CHECK(!ix->end.ident && ix->end.lit == end);
}

static void test_cache(const oi_graph *g) {
    const oi__node *read = node_at(g, 14);
    CHECK(read && read->kind == OI__NODE_CACHE_READ && strcmp(read->access.base, "K") == 0 && read->access.bracketed);
    if (read && arrlen(read->access.indices) == 2) {
        CHECK(!read->access.indices[0].is_slice && strcmp(read->access.indices[0].single.ident, "l") == 0);
        CHECK(strcmp(read->access.indices[1].single.ident, "step") == 0);
        CHECK(strcmp(read->var.name, "k") == 0);
    }
    const oi__node *all = node_at(g, 24);
    CHECK(all && all->access.bracketed && arrlen(all->access.indices) == 0);
    const oi__node *n = node_at(g, 25);
    CHECK(n && arrlen(n->access.indices) == 1);
    if (n && arrlen(n->access.indices) == 1)
        check_slice(&n->access.indices[0], true, 0, true, 5);
    n = node_at(g, 26);
    if (n && arrlen(n->access.indices) == 1)
        check_slice(&n->access.indices[0], true, 2, false, 0);
    n = node_at(g, 27);
    if (n && arrlen(n->access.indices) == 1)
        check_slice(&n->access.indices[0], false, 0, true, -3);
    n = node_at(g, 28);
    CHECK(n && arrlen(n->access.indices) == 5);
    if (n && arrlen(n->access.indices) == 5) {
        CHECK(!n->access.indices[0].is_slice && n->access.indices[0].single.lit == 1);
        check_slice(&n->access.indices[1], false, 0, false, 0);
        check_slice(&n->access.indices[2], true, 2, false, 0);
        check_slice(&n->access.indices[3], false, 0, true, 3);
        check_slice(&n->access.indices[4], true, 4, true, 5);
    }
    check_describe(n, "cache.read S[1,..,2..,..3,4..5] >> window");
    const oi__node *write = node_at(g, 30);
    CHECK(write && write->kind == OI__NODE_CACHE_WRITE && strcmp(write->var.name, "grid") == 0 &&
          strcmp(write->access.base, "T") == 0);
    check_describe(write, "cache.write grid >> T[3,step]");
    const oi__node *inc = node_at(g, 31), *inc5 = node_at(g, 32), *dec = node_at(g, 33);
    CHECK(inc && inc->kind == OI__NODE_CACHE_INCREMENT && inc->amount == 1 && strcmp(inc->access.base, "step") == 0);
    CHECK(inc5 && inc5->amount == 5 && dec && dec->kind == OI__NODE_CACHE_DECREMENT && dec->amount == 2);
    check_describe(inc5, "cache.increment 5 step");
    check_describe(dec, "cache.decrement 2 step");
    const oi__node *reset = node_at(g, 34), *reset1 = node_at(g, 35);
    CHECK(reset && reset->kind == OI__NODE_CACHE_RESET && !reset->access.bracketed);
    CHECK(reset1 && reset1->access.bracketed && arrlen(reset1->access.indices) == 1);
    check_describe(node_at(g, 36), "cache.reset K[0,step]");
}

static void test_control(const oi_graph *g) {
    const oi__node *transfer = node_at(g, 7);
    CHECK(transfer && transfer->kind == OI__NODE_TRANSFER && strcmp(transfer->src_var.name, "x") == 0 &&
          strcmp(transfer->dst_var.name, "h") == 0);
    CHECK(node_at(g, 37) && node_at(g, 37)->kind == OI__NODE_BARRIER);
    const oi__node *dep = node_at(g, 38);
    CHECK(dep && dep->kind == OI__NODE_DEP && strcmp(dep->after, "matmul") == 0 && strcmp(dep->before, "cache.write") == 0);
    const oi__node *branch = node_at(g, 40);
    CHECK(branch && branch->kind == OI__NODE_BRANCH && strcmp(branch->cond, "cond") == 0 &&
          strcmp(branch->then_block, "ok") == 0 && strcmp(branch->else_block, "bad") == 0);
    const oi__node *jump = node_at(g, 41);
    CHECK(jump && !jump->cond && strcmp(jump->then_block, "algorithm") == 0 && !jump->else_block);
    const oi__node *yield = node_at(g, 42), *await = node_at(g, 44);
    CHECK(yield && yield->kind == OI__NODE_YIELD && await && await->kind == OI__NODE_AWAIT);
    if (yield && await) {
        STRINGS_ARE(yield->vars, "h", "y");
        STRINGS_ARE(await->vars, "h", "y");
    }
    check_describe(yield, "yield h, y");
    CHECK(node_at(g, 45) && node_at(g, 45)->kind == OI__NODE_RETURN);
    const oi__node *assign = node_at(g, 3);
    CHECK(assign && assign->kind == OI__NODE_ASSIGN && assign->dtype == OI_DTYPE_F16 && strcmp(assign->name, "q") == 0);
    if (assign)
        STRINGS_ARE(assign->dims, "D", "3*D");
    const oi__node *cond = node_at(g, 6);
    CHECK(cond && cond->dtype == OI_DTYPE_BOOL && arrlen(cond->dims) == 0);
}

static void test_every_construct(void) {
    const oi_graph *g = every_construct();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (!g)
        return;
    CHECK(strcmp(oi_graph_name(g), "every_construct") == 0);
    CHECK(oi_graph_find("every_construct") == g);
    CHECK_EQ_INT(arrlen(g->blocks), 5);
    static const char *const block_names[] = {"entry", "ok", "bad", "algorithm", "consumer"};
    for (int i = 0; i < 5 && i < arrlen(g->blocks); i++)
        CHECK(strcmp(g->blocks[i].name, block_names[i]) == 0);
    CHECK_EQ_INT(g->next_index, 54);
    CHECK(oi__graph_find_block(g, "consumer") == &g->blocks[4]);
    test_vars(g);
    test_ops(g);
    test_loops(g);
    test_cache(g);
    test_control(g);
    /* indices in program order; each node has its own v4-formatted UUID */
    for (uint32_t i = 0; i < g->next_index; i++) {
        const oi__node *n = node_at(g, i);
        CHECK_MSG(n != NULL, "node %u missing", (unsigned)i);
        if (n)
            CHECK_MSG(uuid_is_v4(n->uuid), "%s", n->uuid);
        if (n && i > 0 && node_at(g, i - 1))
            CHECK(strcmp(n->uuid, node_at(g, i - 1)->uuid) != 0);
    }
}

/* The same statements always give the same UUIDs (stable traces). */
static const oi_dsl_stmt uuid_stmts[] = {
    OI_BLOCK(entry, OI_BARRIER() OI_RETURN())
    {OI_DSL_END, 0, "", "", 0}
};

static void test_uuids_are_stable(void) {
    oi_graph *a = oi_graph_build("stable", "f.c", uuid_stmts);
    oi_graph *b = oi_graph_build("stable", "f.c", uuid_stmts);
    oi_graph *other = oi_graph_build("other", "f.c", uuid_stmts);
    CHECK(a && b && other);
    if (a && b && other) {
        CHECK(strcmp(a->blocks[0].nodes[0].uuid, b->blocks[0].nodes[0].uuid) == 0);
        CHECK(strcmp(a->blocks[0].nodes[1].uuid, b->blocks[0].nodes[1].uuid) == 0);
        CHECK(strcmp(a->blocks[0].nodes[0].uuid, a->blocks[0].nodes[1].uuid) != 0);
        CHECK(strcmp(a->blocks[0].nodes[0].uuid, other->blocks[0].nodes[0].uuid) != 0);
    }
    oi_graph_free(a);
    oi_graph_free(b);
    oi_graph_free(other);
}

static void test_seed_examples(void) {
    const oi_graph *g = minimal();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (g) {
        CHECK_EQ_INT(arrlen(g->vars), 3);
        CHECK_EQ_INT(arrlen(g->blocks[0].nodes), 4);
        check_describe(&g->blocks[0].nodes[1], "op add(x,a) >> t0");
        check_describe(&g->blocks[0].nodes[2], "op mul(y,t0) >> y");
    }
    g = kv_step();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (g) {
        CHECK_EQ_INT(arrlen(g->blocks[0].nodes), 7);
        check_describe(&g->blocks[0].nodes[4], "loop layers (l in 0..10)");
        check_describe(node_at(g, 5), "cache.read K[l,step] >> k");
    }
    g = yield_example();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    CHECK(oi_graph_find("yield_example") == g);
    oi_clear_error();
    CHECK(oi_graph_find("no_such_graph") == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "no graph named no_such_graph");
    CHECK(oi_graph_error("minimal") == NULL);
}

/* ================================================================== */
/* Diagnostics: each graph below has one mistake, on the line noted     */
/* ================================================================== */

static void expect_error(const oi_graph *(*accessor)(void), const char *name, int line, const char *text, const char *reason) {
    char want[1024];
    snprintf(want, sizeof want, "%s:%d: error: %s: %s", __FILE__, line, text, reason);
    oi_clear_error();
    CHECK_MSG(accessor() == NULL, "graph %s built although it has a mistake", name);
    CHECK_MSG(strcmp(oi_last_error(), want) == 0, "graph %s\n   got: %s\n  want: %s", name, oi_last_error(), want);
    const char *stored = oi_graph_error(name);
    CHECK_MSG(stored && strcmp(stored, want) == 0, "oi_graph_error(%s) = %s", name, stored ? stored : "(null)");
    oi_clear_error();
    CHECK(oi_graph_find(name) == NULL);
    CHECK(strcmp(oi_last_error(), want) == 0);
}

/* A graph with one mistake, at name_line: the statement's text and why. */
#define EXPECT_ERROR(name, text, reason) expect_error(name, #name, name##_line, text, reason)

typedef struct diagnostic_case {
    const oi_graph *(*graph)(void);
    const char *name;
    int line;
    const char *text, *reason;
} diagnostic_case;
#define DIAGNOSTIC(name, text, reason) {name, #name, name##_line, text, reason}

static const int bad_dtype_line = __LINE__ + 2;
OI_GRAPH(bad_dtype,
  OI_DYNAMIC( OI_VAR(x, f33[B]) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int bad_dims_line = __LINE__ + 2;
OI_GRAPH(bad_dims,
  OI_DYNAMIC( OI_VAR(x, f32[B D]) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int bad_product_line = __LINE__ + 2;
OI_GRAPH(bad_product,
  OI_DYNAMIC( OI_VAR(x, f32[2*D*E]) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int negative_dim_line = __LINE__ + 2;
OI_GRAPH(negative_dim,
  OI_DYNAMIC( OI_VAR(x, f32[-3]) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int bad_slice_line = __LINE__ + 4;
OI_GRAPH(bad_slice,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) )
  OI_BLOCK(entry, OI_ASSIGN(t, f32[D])
    OI_CACHE_READ(A[1..2..3], t)
    OI_RETURN())
)

static const int bad_expr_line = __LINE__ + 4;
OI_GRAPH(bad_expr,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) OI_VAR(n, i32) )
  OI_BLOCK(entry, OI_ASSIGN(t, f32[D])
    OI_CACHE_READ(A[0..n+], t)
    OI_RETURN())
)

static const int paren_expr_line = __LINE__ + 4;
OI_GRAPH(paren_expr,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) OI_VAR(n, i32) )
  OI_BLOCK(entry, OI_ASSIGN(t, f32[D])
    OI_CACHE_READ(A[0..2*(n+1)], t)
    OI_RETURN())
)

static const int bad_entry_size_line = __LINE__ + 2;
OI_GRAPH(bad_entry_size,
  OI_CONSTANT( OI_VAR(W(n), f32[E(), 4], @pattern("w{n}")) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int minus_ident_line = __LINE__ + 4;
OI_GRAPH(minus_ident,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) )
  OI_BLOCK(entry, OI_ASSIGN(t, f32[D])
    OI_CACHE_READ(A[-l], t)
    OI_RETURN())
)

static const int negative_index_line = __LINE__ + 4;
OI_GRAPH(negative_index,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) )
  OI_BLOCK(entry, OI_ASSIGN(t, f32[D])
    OI_CACHE_READ(A[-1], t)
    OI_RETURN())
)

static const int unknown_attr_line = __LINE__ + 2;
OI_GRAPH(unknown_attr, OI_STRICT()
  OI_VOLATILE( OI_VAR(x, f32[B], @foo) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int duplicate_attr_line = __LINE__ + 2;
OI_GRAPH(duplicate_attr,
  OI_VOLATILE( OI_VAR(x, f32[B], @init(1.0), @init(2.0)) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int duplicate_decl_line = __LINE__ + 3;
OI_GRAPH(duplicate_decl,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int missing_to_line = __LINE__ + 4;
OI_GRAPH(missing_to,
  OI_VOLATILE( OI_VAR(x, f32[B]) OI_VAR(a, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(add, x, a)
    OI_RETURN())
)

static const int to_without_op_line = __LINE__ + 4;
OI_GRAPH(to_without_op,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry,
    OI_TO(x)
    OI_RETURN())
)

static const int indexed_output_line = __LINE__ + 4;
OI_GRAPH(indexed_output,
  OI_VOLATILE( OI_VAR(x, f32[B]) OI_VAR(W(l), f32[B], @pattern("W.{l}")) )
  OI_BLOCK(entry,
    OI_OP(relu, x) OI_TO(W[0])
    OI_RETURN())
)

static const int positional_after_named_line = __LINE__ + 4;
OI_GRAPH(positional_after_named,
  OI_VOLATILE( OI_VAR(h, f32[B]) OI_VAR(x, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(relu, h, alpha=1.0, x) OI_TO(h)
    OI_RETURN())
)

static const int duplicate_setting_line = __LINE__ + 4;
OI_GRAPH(duplicate_setting,
  OI_VOLATILE( OI_VAR(h, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(relu, h, alpha=1.0, alpha=2.0) OI_TO(h)
    OI_RETURN())
)

static const int to_not_dtype_line = __LINE__ + 4;
OI_GRAPH(to_not_dtype,
  OI_VOLATILE( OI_VAR(h, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(cast, h, to=5) OI_TO(h)
    OI_RETURN())
)

static const int missing_block_line = __LINE__ + 3;
OI_GRAPH(missing_block,
  OI_BLOCK(entry,
    OI_BRANCH(nowhere)
    OI_RETURN())
)

static const int branch_two_line = __LINE__ + 4;
OI_GRAPH(branch_two,
  OI_VOLATILE( OI_VAR(c, bool) )
  OI_BLOCK(entry,
    OI_BRANCH(c, ok)
    OI_RETURN())
  OI_BLOCK(ok, OI_RETURN())
)

static const int yield_empty_line = __LINE__ + 3;
OI_GRAPH(yield_empty,
  OI_BLOCK(entry,
    OI_YIELD()
    OI_RETURN())
)

static const int yield_twice_line = __LINE__ + 5;
OI_GRAPH(yield_twice,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry,
    OI_YIELD(x)
    OI_YIELD(x)
    OI_RETURN())
)

static const int await_first_line = __LINE__ + 4;
OI_GRAPH(await_first,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry,
    OI_AWAIT(x)
    OI_RETURN())
)

static const int consumer_no_yield_line = __LINE__ + 5;
OI_GRAPH(consumer_no_yield,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_YIELD(x) OI_AWAIT(x) OI_RETURN())
  OI_BLOCK(consumer,
    OI_AWAIT(x)
    OI_RETURN())
)

static const int yield_not_last_line = __LINE__ + 5;
OI_GRAPH(yield_not_last,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_YIELD(x) OI_AWAIT(x) OI_RETURN())
  OI_BLOCK(consumer, OI_AWAIT(x)
    OI_YIELD(x)
    OI_RETURN())
)

static const int await_constant_line = __LINE__ + 4;
OI_GRAPH(await_constant,
  OI_CONSTANT( OI_VAR(c, f32[B]) )
  OI_BLOCK(entry, OI_YIELD(c)
    OI_AWAIT(c)
    OI_RETURN())
)

static const int persistent_input_line = __LINE__ + 5;
OI_GRAPH(persistent_input,
  OI_VOLATILE( OI_VAR(h, f16[H]) )
  OI_PERSISTENT( OI_VAR(K, f16[H]) )
  OI_BLOCK(entry,
    OI_OP(add, h, K) OI_TO(h)
    OI_RETURN())
)

static const int write_constant_line = __LINE__ + 5;
OI_GRAPH(write_constant,
  OI_VOLATILE( OI_VAR(h, f32[B]) )
  OI_CONSTANT( OI_VAR(c, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(relu, h) OI_TO(c)
    OI_RETURN())
)

static const int read_into_constant_line = __LINE__ + 5;
OI_GRAPH(read_into_constant,
  OI_CONSTANT( OI_VAR(c, f32[B]) )
  OI_PERSISTENT( OI_VAR(S, f32[B]) )
  OI_BLOCK(entry,
    OI_CACHE_READ(S, c)
    OI_RETURN())
)

static const int transfer_into_constant_line = __LINE__ + 5;
OI_GRAPH(transfer_into_constant,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_CONSTANT( OI_VAR(c, f32[B]) )
  OI_BLOCK(entry,
    OI_TRANSFER(x, c)
    OI_RETURN())
)

static const int write_persistent_line = __LINE__ + 5;
OI_GRAPH(write_persistent,
  OI_VOLATILE( OI_VAR(h, f32[B]) )
  OI_PERSISTENT( OI_VAR(S, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(relu, h) OI_TO(S)
    OI_RETURN())
)

static const int cache_not_persistent_line = __LINE__ + 4;
OI_GRAPH(cache_not_persistent,
  OI_VOLATILE( OI_VAR(a, f32[B]) OI_VAR(b, f32[B]) )
  OI_BLOCK(entry,
    OI_CACHE_READ(a, b)
    OI_RETURN())
)

static const int table_no_brackets_line = __LINE__ + 4;
OI_GRAPH(table_no_brackets,
  OI_PERSISTENT( OI_VAR(K(l), f32[B], @table) )
  OI_BLOCK(entry, OI_ASSIGN(k, f32[B])
    OI_CACHE_READ(K, k)
    OI_RETURN())
)

static const int auto_dim_slice_line = __LINE__ + 4;
OI_GRAPH(auto_dim_slice,
  OI_PERSISTENT( OI_VAR(M(r, c), f32[D, H], @auto_dim(r, c)) )
  OI_BLOCK(entry, OI_ASSIGN(m, f32[D, H])
    OI_CACHE_READ(M[0..2, 1], m)
    OI_RETURN())
)

static const int reset_slice_line = __LINE__ + 4;
OI_GRAPH(reset_slice,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) )
  OI_BLOCK(entry,
    OI_CACHE_RESET(A[0..2])
    OI_RETURN())
)

static const int read_dtype_line = __LINE__ + 4;
OI_GRAPH(read_dtype,
  OI_PERSISTENT( OI_VAR(K(l), f16[H], @table) )
  OI_BLOCK(entry, OI_ASSIGN(k, f32[H])
    OI_CACHE_READ(K[0], k)
    OI_RETURN())
)

static const int section_in_block_line = __LINE__ + 3;
OI_GRAPH(section_in_block,
  OI_BLOCK(entry,
    OI_DYNAMIC( OI_VAR(x, f32[B]) )
    OI_RETURN())
)

static const int block_in_section_line = __LINE__ + 2;
OI_GRAPH(block_in_section,
  OI_DYNAMIC( OI_BLOCK(entry, OI_RETURN()) )
)

static const int node_in_section_line = __LINE__ + 2;
OI_GRAPH(node_in_section,
  OI_DYNAMIC( OI_ASSIGN(t, f32[B]) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int var_in_block_line = __LINE__ + 3;
OI_GRAPH(var_in_block,
  OI_BLOCK(entry,
    OI_VAR(x, f32[B])
    OI_RETURN())
)

static const int nested_block_line = __LINE__ + 3;
OI_GRAPH(nested_block,
  OI_BLOCK(entry,
    OI_BLOCK(inner, OI_RETURN())
    OI_RETURN())
)

static const int duplicate_block_line = __LINE__ + 3;
OI_GRAPH(duplicate_block,
  OI_BLOCK(entry, OI_RETURN())
  OI_BLOCK(entry, OI_RETURN())
)

static const int empty_fixed_line = __LINE__ + 2;
OI_GRAPH(empty_fixed,
  OI_PERSISTENT( OI_VAR(T(i), f32[D], @table, @fixed()) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int empty_auto_dim_line = __LINE__ + 2;
OI_GRAPH(empty_auto_dim,
  OI_PERSISTENT( OI_VAR(M(i), f32[D], @auto_dim()) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int table_no_indices_line = __LINE__ + 2;
OI_GRAPH(table_no_indices,
  OI_PERSISTENT( OI_VAR(K, f16[H], @table) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int empty_indices_line = __LINE__ + 2;
OI_GRAPH(empty_indices,
  OI_VOLATILE( OI_VAR(W(), f32[D], @pattern("W")) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int table_volatile_line = __LINE__ + 2;
OI_GRAPH(table_volatile,
  OI_VOLATILE( OI_VAR(K(l), f32[D], @table) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int pattern_persistent_line = __LINE__ + 2;
OI_GRAPH(pattern_persistent,
  OI_PERSISTENT( OI_VAR(W(l), f32[D], @pattern("W.{l}")) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int pattern_index_line = __LINE__ + 2;
OI_GRAPH(pattern_index,
  OI_VOLATILE( OI_VAR(W(l), f32[D], @pattern("W.{k}")) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int init_float_int_line = __LINE__ + 2;
OI_GRAPH(init_float_int,
  OI_VOLATILE( OI_VAR(n, i32, @init(1.5)) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int init_int_float_line = __LINE__ + 2;
OI_GRAPH(init_int_float,
  OI_VOLATILE( OI_VAR(n, f32, @init(1)) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int init_range_line = __LINE__ + 2;
OI_GRAPH(init_range,
  OI_VOLATILE( OI_VAR(n, u8, @init(300)) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int fixed_not_index_line = __LINE__ + 2;
OI_GRAPH(fixed_not_index,
  OI_PERSISTENT( OI_VAR(T(i), f32[D], @table, @fixed(j=4)) )
  OI_BLOCK(entry, OI_RETURN())
)

static const int unknown_var_line = __LINE__ + 4;
OI_GRAPH(unknown_var,
  OI_VOLATILE( OI_VAR(h, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(add, h, q) OI_TO(h)
    OI_RETURN())
)

static const int not_a_table_line = __LINE__ + 4;
OI_GRAPH(not_a_table,
  OI_VOLATILE( OI_VAR(h, f32[B]) OI_VAR(w, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(add, h, w[0]) OI_TO(h)
    OI_RETURN())
)

static const int index_count_line = __LINE__ + 4;
OI_GRAPH(index_count,
  OI_VOLATILE( OI_VAR(h, f32[B]) OI_VAR(W(l), f32[B], @pattern("W.{l}")) )
  OI_BLOCK(entry,
    OI_OP(add, h, W[0, 1]) OI_TO(h)
    OI_RETURN())
)

static const int assign_shadow_line = __LINE__ + 4;
OI_GRAPH(assign_shadow,
  OI_VOLATILE( OI_VAR(h, f32[B]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B])
    OI_RETURN())
)

static const int loop_index_reuse_line = __LINE__ + 4;
OI_GRAPH(loop_index_reuse,
  OI_BLOCK(entry,
    OI_LOOP(outer, i, 0..2,
      OI_LOOP(inner, i, 0..3, OI_BARRIER())
    )
    OI_RETURN())
)

static const int transfer_dtype_line = __LINE__ + 4;
OI_GRAPH(transfer_dtype,
  OI_DYNAMIC( OI_VAR(x, f32[B]) OI_VAR(n, i32[B]) )
  OI_BLOCK(entry,
    OI_TRANSFER(x, n)
    OI_RETURN())
)

static void test_diagnostics(void) {
    const diagnostic_case cases[] = {
        DIAGNOSTIC(bad_dtype, "OI_VAR(x, f33[B])",
                   "unknown dtype f33 (expected one of f8 bf16 f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool bitset i1 i2 i4 u1 u2 u4 t1 t2)"),
        DIAGNOSTIC(bad_dims, "OI_VAR(x, f32[B D])", "malformed dims: expected ',' or ']', found 'D'"),
        DIAGNOSTIC(bad_product, "OI_VAR(x, f32[2*D*E])",
                   "malformed dims: a dim is a size or a product of two sizes, found '*'"),
        DIAGNOSTIC(negative_dim, "OI_VAR(x, f32[-3])",
                   "malformed dims: expected a size (a number or a name), found '-'"),
        DIAGNOSTIC(bad_slice, "OI_CACHE_READ(A[1..2..3], t)", "malformed slice: expected ',' or ']', found '..'"),
        DIAGNOSTIC(bad_expr, "OI_CACHE_READ(A[0..n+], t)", "malformed index: expected a number or a name, found ']'"),
        DIAGNOSTIC(paren_expr, "OI_CACHE_READ(A[0..2*(n+1)], t)",
                   "malformed index: expected a number or a name, found '('"),
        DIAGNOSTIC(bad_entry_size, "OI_VAR(W(n), f32[E(), 4], @pattern(\"w{n}\"))",
                   "a size per entry is NAME(index): expected the index, found ')'"),
        DIAGNOSTIC(minus_ident, "OI_CACHE_READ(A[-l], t)", "unexpected '-' before identifier, found 'l'"),
        DIAGNOSTIC(negative_index, "OI_CACHE_READ(A[-1], t)", "negative index -1 (only a slice end may be negative)"),
        DIAGNOSTIC(unknown_attr, "OI_VAR(x, f32[B], @foo)",
                   "unknown attribute @foo (expected @init, @ref, @pattern, @table, @fixed or @auto_dim; strict mode)"),
        DIAGNOSTIC(duplicate_attr, "OI_VAR(x, f32[B], @init(1.0), @init(2.0))", "duplicate @init attribute"),
        DIAGNOSTIC(missing_to, "OI_OP(add, x, a)", "missing OI_TO(output) after OI_OP"),
        DIAGNOSTIC(to_without_op, "OI_TO(x)", "OI_TO without OI_OP before it"),
        DIAGNOSTIC(indexed_output, "OI_OP(relu, x) OI_TO(W[0])",
                   "op output must be a plain variable name (no indices)"),
        DIAGNOSTIC(positional_after_named, "OI_OP(relu, h, alpha=1.0, x)", "positional args must come before settings"),
        DIAGNOSTIC(duplicate_setting, "OI_OP(relu, h, alpha=1.0, alpha=2.0)", "duplicate setting: alpha"),
        DIAGNOSTIC(to_not_dtype, "OI_OP(cast, h, to=5)", "to must be a dtype identifier"),
        DIAGNOSTIC(missing_block, "OI_BRANCH(nowhere)", "branch to missing block nowhere"),
        DIAGNOSTIC(branch_two, "OI_BRANCH(c, ok)", "branch expects condition and two target blocks"),
        DIAGNOSTIC(yield_empty, "OI_YIELD()", "yield needs at least one variable"),
        DIAGNOSTIC(yield_twice, "OI_YIELD(x)", "await required before next yield"),
        DIAGNOSTIC(await_first, "OI_AWAIT(x)", "await without a yield before it in block entry"),
        DIAGNOSTIC(consumer_no_yield, "OI_AWAIT(x)", "block consumer awaits x but does not yield it"),
        DIAGNOSTIC(yield_not_last, "OI_YIELD(x)", "yield must be the last statement of block consumer"),
        DIAGNOSTIC(await_constant, "OI_AWAIT(c)", "cannot await constant c"),
        DIAGNOSTIC(persistent_input, "OI_OP(add, h, K) OI_TO(h)", "persistent cache K must be read via cache.read"),
        DIAGNOSTIC(write_constant, "OI_OP(relu, h) OI_TO(c)", "cannot write to constant memory (c is constant)"),
        DIAGNOSTIC(read_into_constant, "OI_CACHE_READ(S, c)", "cannot write to constant memory (c is constant)"),
        DIAGNOSTIC(transfer_into_constant, "OI_TRANSFER(x, c)", "cannot write to constant memory (c is constant)"),
        DIAGNOSTIC(write_persistent, "OI_OP(relu, h) OI_TO(S)", "persistent cache S must be written via cache.write"),
        DIAGNOSTIC(cache_not_persistent, "OI_CACHE_READ(a, b)",
                   "cache operations need persistent memory; a is volatile"),
        DIAGNOSTIC(table_no_brackets, "OI_CACHE_READ(K, k)", "table K needs brackets: K[...]"),
        DIAGNOSTIC(auto_dim_slice, "OI_CACHE_READ(M[0..2, 1], m)", "slices are not allowed on @auto_dim variable M"),
        DIAGNOSTIC(reset_slice, "OI_CACHE_RESET(A[0..2])", "cache.reset takes no slices"),
        DIAGNOSTIC(read_dtype, "OI_CACHE_READ(K[0], k)", "k is f32 but cache K is f16"),
        DIAGNOSTIC(section_in_block, "OI_DYNAMIC(...)", "memory sections cannot appear inside a block"),
        DIAGNOSTIC(block_in_section, "OI_BLOCK(entry)", "OI_BLOCK inside a memory section"),
        DIAGNOSTIC(node_in_section, "OI_ASSIGN(t, f32[B])",
                   "statement outside a block (put it inside OI_BLOCK(name, ...))"),
        DIAGNOSTIC(var_in_block, "OI_VAR(x, f32[B])",
                   "OI_VAR outside a memory section (wrap it in OI_DYNAMIC, OI_VOLATILE, OI_CONSTANT or OI_PERSISTENT)"),
        DIAGNOSTIC(nested_block, "OI_BLOCK(inner)",
                   "blocks do not nest (block entry is still open; use OI_LOOP for a nested region)"),
        DIAGNOSTIC(empty_fixed, "OI_VAR(T(i), f32[D], @table, @fixed())", "@fixed requires at least one index=size"),
        DIAGNOSTIC(empty_auto_dim, "OI_VAR(M(i), f32[D], @auto_dim())", "@auto_dim requires at least one index"),
        DIAGNOSTIC(table_no_indices, "OI_VAR(K, f16[H], @table)",
                   "persistent table K missing table indices (write K(i))"),
        DIAGNOSTIC(empty_indices, "OI_VAR(W(), f32[D], @pattern(\"W\"))",
                   "prefix table must declare at least one index"),
        DIAGNOSTIC(table_volatile, "OI_VAR(K(l), f32[D], @table)",
                   "@table is only allowed in persistent memory, not volatile"),
        DIAGNOSTIC(pattern_persistent, "OI_VAR(W(l), f32[D], @pattern(\"W.{l}\"))",
                   "prefix tables (@pattern) are only allowed in volatile or constant memory, not persistent"),
        DIAGNOSTIC(pattern_index, "OI_VAR(W(l), f32[D], @pattern(\"W.{k}\"))", "@pattern: {k} is not an index of W"),
        DIAGNOSTIC(init_float_int, "OI_VAR(n, i32, @init(1.5))",
                   "@init: a float value needs a float dtype (f8 bf16 f16 f32 f64), not i32"),
        DIAGNOSTIC(init_int_float, "OI_VAR(n, f32, @init(1))",
                   "@init: an integer value needs an integer dtype, not f32 (write 1.0)"),
        DIAGNOSTIC(init_range, "OI_VAR(n, u8, @init(300))", "@init(300) is out of range for u8"),
        DIAGNOSTIC(fixed_not_index, "OI_VAR(T(i), f32[D], @table, @fixed(j=4))", "@fixed: j is not an index of T"),
        DIAGNOSTIC(unknown_var, "OI_OP(add, h, q) OI_TO(h)",
                   "unknown variable q (declare it in a memory section or with OI_ASSIGN)"),
        DIAGNOSTIC(not_a_table, "OI_OP(add, h, w[0]) OI_TO(h)",
                   "w is not a table and takes no index (declare it as w(i))"),
        DIAGNOSTIC(index_count, "OI_OP(add, h, W[0, 1]) OI_TO(h)", "W takes 1 index(es), got 2"),
        DIAGNOSTIC(assign_shadow, "OI_ASSIGN(h, f32[B])", "assign h shadows a declared variable"),
        DIAGNOSTIC(loop_index_reuse, "OI_LOOP(inner, i, 0..3)", "loop index i is already used by an enclosing loop"),
        DIAGNOSTIC(transfer_dtype, "OI_TRANSFER(x, n)", "transfer from x to n: f32 does not match i32"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error(cases[i].graph, cases[i].name, cases[i].line, cases[i].text, cases[i].reason);
    /* the two that name the first declaration's line */
    char first_at[64];
    snprintf(first_at, sizeof first_at, "duplicate declaration of x (first at line %d)", duplicate_decl_line - 1);
    EXPECT_ERROR(duplicate_decl, "OI_VAR(x, f32[B])", first_at);
    snprintf(first_at, sizeof first_at, "duplicate block entry (first at line %d)", duplicate_block_line - 1);
    EXPECT_ERROR(duplicate_block, "OI_BLOCK(entry)", first_at);
}

/* Mistakes the macros cannot make (they always balance), through the
 * function API with hand-written statement lists. */
static void expect_build_error(const oi_dsl_stmt *stmts, const char *want) {
    oi_clear_error();
    oi_graph *g = oi_graph_build("hand", "hand.c", stmts);
    CHECK(g == NULL);
    CHECK_MSG(strcmp(oi_last_error(), want) == 0, "\n   got: %s\n  want: %s", oi_last_error(), want);
    oi_graph_free(g);
}

static void test_unbalanced(void) {
    const oi_dsl_stmt section_end_alone[] = {
        {OI_DSL_SECTION_END, 3, "", "", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(section_end_alone, "hand.c:3: error: end of section: section end without a section");
    const oi_dsl_stmt open_section[] = {
        {OI_DSL_SECTION_VOLATILE, 2, "", "", 0},
        {OI_DSL_VAR, 3, "", "x, f32[B]", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(open_section, "hand.c:9: error: OI_GRAPH(hand): unterminated memory section");
    const oi_dsl_stmt open_block[] = {
        {OI_DSL_BLOCK, 4, "entry", "", 0},
        {OI_DSL_RETURN, 5, "", "", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(open_block, "hand.c:4: error: OI_BLOCK(entry): unterminated block entry");
    const oi_dsl_stmt block_end_alone[] = {
        {OI_DSL_BLOCK_END, 6, "entry", "", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(block_end_alone, "hand.c:6: error: OI_BLOCK(entry): block end without a block");
    const oi_dsl_stmt open_loop[] = {
        {OI_DSL_BLOCK, 1, "entry", "", 0},
        {OI_DSL_LOOP, 2, "layers", "l in 0..4", 0},
        {OI_DSL_BLOCK_END, 3, "entry", "", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(open_loop, "hand.c:2: error: OI_LOOP(layers, l, 0..4): unterminated loop layers");
    const oi_dsl_stmt loop_end_alone[] = {
        {OI_DSL_BLOCK, 1, "entry", "", 0},
        {OI_DSL_LOOP_END, 2, "layers", "", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(loop_end_alone, "hand.c:2: error: OI_LOOP(layers): loop end without a loop");
    const oi_dsl_stmt no_blocks[] = {
        {OI_DSL_SECTION_DYNAMIC, 1, "", "", 0},
        {OI_DSL_VAR, 2, "", "x, f32[B]", 0},
        {OI_DSL_SECTION_END, 3, "", "", 0},
        {OI_DSL_END, 7, "", "", 0},
    };
    expect_build_error(no_blocks, "hand.c:7: error: OI_GRAPH(hand): graph has no blocks (add OI_BLOCK(entry, ...))");
    const oi_dsl_stmt unknown_op[] = {
        {OI_DSL_BLOCK, 1, "entry", "", 0},
        {OI_DSL_OP, 2, "nope", "x", (int)OI_OP_COUNT},
        {OI_DSL_END, 9, "", "", 0},
    };
    expect_build_error(unknown_op, "hand.c:2: error: OI_OP(nope, x): unknown op nope");
    oi_clear_error();
    CHECK(oi_graph_build(NULL, "f.c", no_blocks) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "must not be NULL");
}

/* ================================================================== */
/* Strict mode: unknown attributes are kept and warned about, or errors */
/* ================================================================== */

static const int lenient_line = __LINE__ + 3;
OI_GRAPH(lenient_attrs,
  OI_VOLATILE(
    OI_VAR(x, f32[B], @layout("nhwc", (1, 2)), @init(1.0) @foo)
  )
  OI_BLOCK(entry, OI_RETURN())
)

OI_GRAPH(strict_clean, OI_STRICT()
  OI_VOLATILE( OI_VAR(x, f32[B], @init(1.0)) )
  OI_BLOCK(entry, OI_RETURN())
)

static void test_strict_mode(void) {
    const oi_graph *g = lenient_attrs();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (!g)
        return;
    CHECK(!oi_graph_is_strict(g));
    const oi__var *x = oi__graph_find_var(g, "x");
    CHECK(x && x->init_kind == OI__INIT_FLOAT && x->init_float == 1.0); /* the attributes after it still count */
    CHECK(x && arrlen(x->extra_attrs) == 2 && strcmp(x->extra_attrs[0], "@layout(\"nhwc\", (1, 2))") == 0 &&
          strcmp(x->extra_attrs[1], "@foo") == 0);
    CHECK_EQ_INT(oi_graph_warning_count(g), 2);
    char want[512];
    snprintf(want, sizeof want, "%s:%d: warning: OI_VAR(x, f32[B], @layout(\"nhwc\", (1, 2)), @init(1.0) @foo): unknown "
             "attribute @layout(\"nhwc\", (1, 2)) is kept but not used (expected @init, @ref, @pattern, @table, @fixed or "
             "@auto_dim; strict mode makes it an error)", __FILE__, lenient_line);
    CHECK_MSG(oi_graph_warning(g, 0) && strcmp(oi_graph_warning(g, 0), want) == 0, "\n   got: %s\n  want: %s",
              oi_graph_warning(g, 0) ? oi_graph_warning(g, 0) : "(null)", want);
    CHECK_STR_CONTAINS(oi_graph_warning(g, 1), "unknown attribute @foo is kept");
    CHECK(oi_graph_warning(g, 2) == NULL);

    /* kept in the JSON, and back */
    char *json = oi_graph_to_json(g);
    CHECK_STR_CONTAINS(json, "\"extra_attrs\": [\"@layout(\\\"nhwc\\\", (1, 2))\", \"@foo\"]");
    CHECK(json && !strstr(json, "\"strict\""));
    oi_graph *copy = json ? oi_graph_from_json(json) : NULL;
    CHECK_MSG(copy != NULL, "%s", oi_last_error());
    char *again = copy ? oi_graph_to_json(copy) : NULL;
    CHECK(json && again && strcmp(json, again) == 0);
    CHECK_EQ_INT(oi_graph_warning_count(copy), 2);
    oi_free(again);
    oi_graph_free(copy);

    /* OPENINFER_STRICT=1: the same statements fail, naming the place */
    setenv("OPENINFER_STRICT", "1", 1);
    oi_clear_error();
    CHECK(oi_graph_build("lenient_attrs", __FILE__, oi__stmts_lenient_attrs) == NULL);
    snprintf(want, sizeof want, "%s:%d: error: OI_VAR(x, f32[B], @layout(\"nhwc\", (1, 2)), @init(1.0) @foo): unknown "
             "attribute @layout(\"nhwc\", (1, 2)) (expected @init, @ref, @pattern, @table, @fixed or @auto_dim; strict mode)",
             __FILE__, lenient_line);
    CHECK_MSG(strcmp(oi_last_error(), want) == 0, "\n   got: %s\n  want: %s", oi_last_error(), want);
    CHECK(json && oi_graph_from_json(json) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "unknown attribute @layout");
    CHECK(oi_graph_is_strict(g));
    unsetenv("OPENINFER_STRICT");
    CHECK(!oi_graph_is_strict(g));
    oi_free(json);

    /* OI_STRICT(): the graph's own switch, kept in the JSON */
    const oi_graph *strict = strict_clean();
    CHECK_MSG(strict != NULL, "%s", oi_last_error());
    CHECK(oi_graph_is_strict(strict) && oi_graph_warning_count(strict) == 0);
    json = strict ? oi_graph_to_json(strict) : NULL;
    CHECK_STR_CONTAINS(json, "\"strict\": true");
    copy = json ? oi_graph_from_json(json) : NULL;
    CHECK(copy && oi_graph_is_strict(copy));
    oi_graph_free(copy);
    oi_free(json);
    const oi_dsl_stmt misplaced[] = {
        {OI_DSL_BLOCK, 1, "entry", "", 0},
        {OI_DSL_STRICT, 2, "", "", 0},
        {OI_DSL_RETURN, 3, "", "", 0},
        {OI_DSL_BLOCK_END, 4, "entry", "", 0},
        {OI_DSL_END, 9, "", "", 0},
    };
    CHECK(oi_graph_build("hand", "hand.c", misplaced) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "hand.c:2: error: OI_STRICT(): OI_STRICT() belongs outside memory sections and blocks");
}

/* ---- scopes (OI_SCOPE) and per-op hints (OI_WITH) ---- */
#define CHECK_STR_EQ(got, want) \
    CHECK_MSG((got) && strcmp((got), (want)) == 0, "got \"%s\", want \"%s\"", (got) ? (got) : "(null)", (want))

OI_GRAPH(scoped,
  OI_VOLATILE( OI_VAR(x, f32[B]) OI_VAR(w, f32[B]) OI_VAR(h, f32[B]) )
  OI_BLOCK(entry,
    OI_SCOPE(encoder,
      OI_SCOPE(layer0,
        OI_OP(mul, x, w) OI_WITH(fuse=false, placement="cpu") OI_TO(h)
      )
      OI_LOOP(layers, l, 0..2,
        OI_SCOPE(block,
          OI_OP(add, h, x) OI_WITH(group="ffn", no_reorder=true) OI_TO(h)
        )
      )
    )
    OI_OP(relu, h) OI_TO(h)
    OI_RETURN()
  )
)

OI_GRAPH(unknown_hint,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_OP(relu, x) OI_WITH(speed="max", placement="tpu") OI_TO(x) OI_RETURN())
)

OI_GRAPH(unknown_hint_strict, OI_STRICT()
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_OP(relu, x) OI_WITH(speed="max") OI_TO(x) OI_RETURN())
)

static const int bad_hint_line = __LINE__ + 4;
OI_GRAPH(bad_hint_type,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_SCOPE(attention,
    OI_OP(relu, x) OI_WITH(fuse="yes") OI_TO(x))
    OI_RETURN())
)

static const int scoped_error_line = __LINE__ + 4;
OI_GRAPH(scoped_error,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_SCOPE(encoder, OI_SCOPE(layer0,
    OI_OP(relu, x, negative_slope=) OI_TO(x)))
    OI_RETURN())
)

OI_GRAPH(hint_without_value,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_OP(relu, x) OI_WITH(fuse) OI_TO(x) OI_RETURN())
)

OI_GRAPH(two_withs,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_OP(relu, x) OI_WITH(fuse=true) OI_WITH(group="g") OI_TO(x) OI_RETURN())
)

OI_GRAPH(with_without_op,
  OI_VOLATILE( OI_VAR(x, f32[B]) )
  OI_BLOCK(entry, OI_WITH(fuse=false) OI_RETURN())
)

OI_GRAPH(scope_outside_block,
  OI_SCOPE(outer, OI_VOLATILE( OI_VAR(x, f32[B]) ))
  OI_BLOCK(entry, OI_RETURN())
)

static void test_scopes_and_hints(void) {
    const oi_graph *g = scoped();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (!g)
        return;
    const oi__node *nodes = g->blocks[0].nodes;
    CHECK_EQ_INT(arrlen(nodes), 4);
    if (arrlen(nodes) != 4)
        return;
    CHECK_STR_EQ(nodes[0].src.scope, "encoder/layer0");
    CHECK_STR_EQ(nodes[0].src.text, "OI_OP(mul, x, w) OI_WITH(fuse=false, placement=\"cpu\") OI_TO(h)");
    CHECK(arrlen(nodes[0].hints) == 2 && strcmp(nodes[0].hints[0].name, "fuse") == 0 &&
          nodes[0].hints[0].kind == OI__ATTR_BOOL && nodes[0].hints[0].i == 0);
    const oi__attr *placement = oi__node_hint(&nodes[0], "placement");
    CHECK(placement && placement->kind == OI__ATTR_STRING && strcmp(placement->s, "cpu") == 0);
    CHECK(nodes[1].kind == OI__NODE_LOOP);
    CHECK_STR_EQ(nodes[1].src.scope, "encoder");
    CHECK(arrlen(nodes[1].body) == 1 && nodes[1].body[0].src.scope &&
          strcmp(nodes[1].body[0].src.scope, "encoder/block") == 0);
    CHECK(arrlen(nodes[1].body) == 1 && oi__node_hint(&nodes[1].body[0], "no_reorder") &&
          oi__node_hint(&nodes[1].body[0], "group") && strcmp(oi__node_hint(&nodes[1].body[0], "group")->s, "ffn") == 0);
    CHECK(nodes[2].src.scope == NULL && arrlen(nodes[2].hints) == 0);
    CHECK_EQ_INT(oi_graph_warning_count(g), 0);
    /* JSON: graph -> JSON -> graph -> JSON is the same text */
    char *json = oi_graph_to_json(g);
    CHECK_STR_CONTAINS(json, "\"scope\": \"encoder/layer0\"");
    CHECK_STR_CONTAINS(json, "\"hints\": [{\"name\": \"fuse\", \"type\": \"bool\", \"value\": false}, "
                             "{\"name\": \"placement\", \"type\": \"string\", \"value\": \"cpu\"}]");
    oi_graph *back = json ? oi_graph_from_json(json) : NULL;
    CHECK_MSG(back != NULL, "from_json: %s", oi_last_error());
    char *again = back ? oi_graph_to_json(back) : NULL;
    CHECK_MSG(json && again && strcmp(json, again) == 0, "round trip differs");
    /* DOT: one cluster per scope run, hints under the node's text */
    char *dot = oi_graph_to_dot(g);
    CHECK_STR_CONTAINS(dot, "subgraph cluster_scope_0 {\n      label=\"scope encoder\";");
    CHECK_STR_CONTAINS(dot, "subgraph cluster_scope_1 {\n        label=\"scope layer0\";");
    CHECK_STR_CONTAINS(dot, "label=\"scope block\"");
    CHECK_STR_CONTAINS(dot, "with fuse=false, placement=\\\"cpu\\\"");
    size_t open = 0, close = 0;
    for (const char *p = dot; p && *p; p++)
        open += *p == '{', close += *p == '}';
    CHECK_MSG(dot && open == close, "DOT braces %zu/%zu", open, close);
    oi_free(dot);
    oi_free(again);
    oi_free(json);
    oi_graph_free(back);
    /* unknown hints and placements: kept, warned about; errors when strict */
    const oi_graph *u = unknown_hint();
    CHECK_MSG(u != NULL, "%s", oi_last_error());
    CHECK_EQ_INT(oi_graph_warning_count(u), 2);
    CHECK_STR_CONTAINS(oi_graph_warning(u, 0), "unknown hint speed (expected fuse, placement, group or no_reorder)");
    CHECK_STR_CONTAINS(oi_graph_warning(u, 1), "unknown placement \"tpu\"");
    CHECK(unknown_hint_strict() == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "unknown hint speed (expected fuse, placement, group or no_reorder) (strict mode)");
    /* errors name the scope beside file:line */
    char want[512];
    CHECK(bad_hint_type() == NULL);
    snprintf(want, sizeof want, "%s:%d: error: in scope attention: OI_OP(relu, x) OI_WITH(fuse=\"yes\") OI_TO(x): hint fuse "
             "takes true or false", __FILE__, bad_hint_line);
    CHECK_MSG(strcmp(oi_last_error(), want) == 0, "\n   got: %s\n  want: %s", oi_last_error(), want);
    CHECK(scoped_error() == NULL);
    snprintf(want, sizeof want, "%s:%d: error: in scope encoder/layer0: OI_OP(relu, x, negative_slope=)", __FILE__,
             scoped_error_line);
    CHECK_STR_CONTAINS(oi_last_error(), want);
    CHECK(hint_without_value() == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "OI_OP(relu, x) OI_WITH(fuse): expected '=' after the hint name at the end");
    CHECK(two_withs() == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "one OI_WITH per op");
    CHECK(with_without_op() == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "OI_WITH without OI_OP before it");
    CHECK(scope_outside_block() == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "OI_SCOPE outside a block");
    /* the function API: a scope closed by oi_graph_builder_end */
    oi_graph_builder *b = oi_graph_builder_new("built_scope", "app.c");
    oi_graph_builder_section(b, OI_DSL_SECTION_VOLATILE);
    oi_graph_builder_var(b, "x, f32[B]");
    oi_graph_builder_end(b);
    oi_graph_builder_block(b, "entry");
    oi_graph_builder_scope(b, "attention");
    oi_graph_builder_stmt(b, OI_DSL_OP, "relu", "x");
    oi_graph_builder_stmt(b, OI_DSL_WITH, "", "placement=\"cpu\"");
    oi_graph_builder_stmt(b, OI_DSL_TO, "", "x");
    oi_graph_builder_end(b);
    oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
    oi_graph_builder_end(b);
    oi_graph *built = oi_graph_builder_finish(b);
    CHECK_MSG(built != NULL, "%s", oi_last_error());
    CHECK(built && built->blocks[0].nodes[0].src.scope && strcmp(built->blocks[0].nodes[0].src.scope, "attention") == 0 &&
          oi__node_hint(&built->blocks[0].nodes[0], "placement") && built->blocks[0].nodes[1].src.scope == NULL);
    oi_graph_free(built);
}


/* Slice bounds, indices and loop bounds written as expressions keep their
 * text (spaces dropped) in the IR, the JSON (round trip) and the DOT picture. */
OI_GRAPH(index_exprs,
  OI_PERSISTENT( OI_VAR(A(i), f32[D], @table) OI_VAR(n, i32, @init(0)) )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[1, D])
    OI_ASSIGN(u, f32[D])
    OI_CACHE_READ(A[n - 1..n + 1], t)
    OI_CACHE_READ(A[0..S*2], t)
    OI_CACHE_READ(A[n*2-1], u)
    OI_LOOP(steps, i, 0..n-1, OI_BARRIER())
    OI_RETURN()
  )
)

/* Dims set at run time ('?'), sizes per entry (E(n)) and OI_ASSIGN(h)
 * without a type build into the IR as written. */
OI_GRAPH(shape_forms,
  OI_CONSTANT( OI_VAR(W(n), f32[E(n), 4], @pattern("w{n}")) )
  OI_BLOCK(entry,
    OI_ASSIGN(r, f32[?, 4])
    OI_ASSIGN(h)
    OI_RETURN()
  )
)

static void check_ident(const char *have, const char *want) {
    CHECK_MSG(have && strcmp(have, want) == 0, "ident %s, want %s", have ? have : "(null)", want);
}

static void test_shape_forms(void) {
    const oi_graph *g = shape_forms();
    CHECK_MSG(g != NULL, "shape_forms: %s", oi_last_error());
    if (!g)
        return;
    check_ident(g->vars[0].dims[0], "E(n)");
    const oi__node *nodes = g->blocks[0].nodes;
    check_ident(nodes[0].dims[0], "?");
    CHECK(!nodes[0].typed_by_op && nodes[1].typed_by_op && nodes[1].dtype == OI_DTYPE_INVALID && arrlen(nodes[1].dims) == 0);
}

static void test_index_expressions(void) {
    const oi_graph *g = index_exprs();
    CHECK_MSG(g != NULL, "index_exprs: %s", oi_last_error());
    if (!g)
        return;
    const oi__node *nodes = g->blocks[0].nodes;
    check_ident(nodes[2].access.indices[0].start.ident, "n-1");
    check_ident(nodes[2].access.indices[0].end.ident, "n+1");
    check_ident(nodes[3].access.indices[0].end.ident, "S*2");
    check_ident(nodes[4].access.indices[0].single.ident, "n*2-1");
    check_ident(nodes[5].loop_end.ident, "n-1");
    CHECK(nodes[3].access.indices[0].start.ident == NULL && nodes[3].access.indices[0].start.lit == 0);
    char *json = oi_graph_to_json(g);
    CHECK_STR_CONTAINS(json, "\"start\": \"n-1\"");
    CHECK_STR_CONTAINS(json, "\"end\": \"S*2\"");
    oi_graph *back = json ? oi_graph_from_json(json) : NULL;
    CHECK_MSG(back != NULL, "from_json: %s", oi_last_error());
    char *again = back ? oi_graph_to_json(back) : NULL;
    CHECK_MSG(json && again && strcmp(json, again) == 0, "round trip differs");
    oi_free(again);
    oi_graph_free(back);
    char *dot = oi_graph_to_dot(g);
    CHECK_STR_CONTAINS(dot, "A[n-1..n+1]");
    oi_free(dot);
    /* JSON with a malformed expression is refused, naming the place */
    const char *at = json ? strstr(json, "\"n*2-1\"") : NULL;
    if (at) {
        char *bad = oi__strdup(json);
        memcpy(bad + (at - json), "\"n*2--\"", 7);
        CHECK(oi_graph_from_json(bad) == NULL);
        CHECK_STR_CONTAINS(oi_last_error(), "\"n*2--\" is not an identifier or an index expression");
        oi__free(bad);
    } else {
        CHECK_MSG(0, "no \"n*2-1\" in the JSON");
    }
    oi_free(json);
}

int main(void) {
    test_every_construct();
    test_uuids_are_stable();
    test_seed_examples();
    test_diagnostics();
    test_unbalanced();
    test_strict_mode();
    test_scopes_and_hints();
    test_index_expressions();
    test_shape_forms();
    return check_result("test_dsl");
}
