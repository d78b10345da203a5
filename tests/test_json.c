/* test_json.c - the JSON reader (strict RFC 8259, line/column errors),
 * the lossless graph <-> JSON round trip, schema errors with a JSON path,
 * and the Graphviz output. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"

#include "graphs_every_construct.h"

/* ================================================================== */
/* The JSON reader                                                     */
/* ================================================================== */

static oi__json *parse(const char *text) { return oi__json_parse(text, strlen(text)); }

static void expect_json_error(const char *text, const char *want) {
    oi_clear_error();
    oi__json *j = parse(text);
    CHECK_MSG(j == NULL, "parsed although malformed: %s", text);
    CHECK_MSG(strcmp(oi_last_error(), want) == 0, "input %s\n   got: %s\n  want: %s", text, oi_last_error(), want);
    oi__json_free(j);
}

static void test_reader_values(void) {
    oi__json *j = parse(" {\"a\": [1, -0.5e3, true, false, null, \"s\"], \"b\": {}, \"c\": [], \"n\": 12.50}\n");
    CHECK(j && j->type == OI__JSON_OBJECT && arrlen(j->keys) == 4);
    const oi__json *a = oi__json_get(j, "a");
    CHECK(a && a->type == OI__JSON_ARRAY && arrlen(a->items) == 6);
    if (a && arrlen(a->items) == 6) {
        CHECK(a->items[0].type == OI__JSON_NUMBER && a->items[0].number == 1.0 && strcmp(a->items[0].text, "1") == 0);
        CHECK(a->items[1].number == -500.0 && strcmp(a->items[1].text, "-0.5e3") == 0);
        CHECK(a->items[2].type == OI__JSON_BOOL && a->items[2].boolean);
        CHECK(a->items[3].type == OI__JSON_BOOL && !a->items[3].boolean);
        CHECK(a->items[4].type == OI__JSON_NULL);
        CHECK(a->items[5].type == OI__JSON_STRING && strcmp(a->items[5].text, "s") == 0);
    }
    const oi__json *b = oi__json_get(j, "b");
    CHECK(b && b->type == OI__JSON_OBJECT && arrlen(b->keys) == 0);
    const oi__json *n = oi__json_get(j, "n");
    CHECK(n && strcmp(n->text, "12.50") == 0 && n->number == 12.5); /* the literal as written */
    CHECK(oi__json_get(j, "missing") == NULL);
    CHECK(oi__json_get(a, "a") == NULL); /* not an object */
    oi__json_free(j);

    j = parse("-0");
    CHECK(j && j->type == OI__JSON_NUMBER && strcmp(j->text, "-0") == 0);
    oi__json_free(j);
    j = parse("1E+2");
    CHECK(j && j->number == 100.0);
    oi__json_free(j);
    j = parse("\"tab\\t nl\\n quote\\\" slash\\/ back\\\\ \\b\\f\\r\"");
    CHECK(j && strcmp(j->text, "tab\t nl\n quote\" slash/ back\\ \b\f\r") == 0);
    oi__json_free(j);
}

static void test_reader_unicode(void) {
    /* U+00E9 is C3 A9; U+20AC is E2 82 AC; U+1F600 (a surrogate pair) is F0 9F 98 80 */
    oi__json *j = parse("\"\\u00e9\\u20AC\\ud83d\\ude00\"");
    CHECK(j && strcmp(j->text, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == 0);
    oi__json_free(j);
    j = parse("\"raw \xc3\xa9 \xf0\x9f\x98\x80\"");
    CHECK(j && strcmp(j->text, "raw \xc3\xa9 \xf0\x9f\x98\x80") == 0);
    oi__json_free(j);
    expect_json_error("\"\\ud800\"", "line 1, column 2: invalid \\u escape (high surrogate without a low surrogate)");
    expect_json_error("\"\\ud800\\u0041\"", "line 1, column 2: invalid \\u escape (high surrogate without a low surrogate)");
    expect_json_error("\"\\udc00\"", "line 1, column 2: invalid \\u escape (lone low surrogate)");
    expect_json_error("\"\\u12G4\"", "line 1, column 6: invalid \\u escape (expected 4 hex digits)");
    expect_json_error("\"\\u0000\"", "line 1, column 2: \\u0000 is not supported in strings");
    expect_json_error("\"\xc0\xaf\"", "line 1, column 2: invalid UTF-8 in string");        /* overlong */
    expect_json_error("\"\xed\xa0\x80\"", "line 1, column 2: invalid UTF-8 in string");    /* encoded surrogate */
    expect_json_error("\"ab\xe2\x82\"", "line 1, column 4: invalid UTF-8 in string");      /* truncated */
}

static void test_reader_errors(void) {
    expect_json_error("", "line 1, column 1: unexpected end of input (expected a value)");
    expect_json_error("   \n  ", "line 2, column 3: unexpected end of input (expected a value)");
    expect_json_error("[1,]", "line 1, column 4: trailing comma in array");
    expect_json_error("{\"a\":1,}", "line 1, column 8: trailing comma in object");
    expect_json_error("01", "line 1, column 2: leading zeros are not allowed in numbers");
    expect_json_error("-", "line 1, column 2: invalid number (expected a digit)");
    expect_json_error("1.", "line 1, column 3: invalid number (expected a digit after '.')");
    expect_json_error("1e", "line 1, column 3: invalid number (expected a digit in the exponent)");
    expect_json_error("+1", "line 1, column 1: unexpected character (expected a value)");
    expect_json_error(".5", "line 1, column 1: unexpected character (expected a value)");
    expect_json_error("NaN", "line 1, column 1: unexpected character (expected a value)");
    expect_json_error("tru", "line 1, column 1: invalid literal (expected true, false or null)");
    expect_json_error("nul", "line 1, column 1: invalid literal (expected true, false or null)");
    expect_json_error("{\"a\":1,\"a\":2}", "line 1, column 8: duplicate key in object");
    expect_json_error("{1:2}", "line 1, column 2: expected a string key in object");
    expect_json_error("{\"a\" 1}", "line 1, column 6: expected ':' after object key");
    expect_json_error("{\"a\":1 \"b\":2}", "line 1, column 8: expected ',' or '}' in object");
    expect_json_error("{\"a\":1", "line 1, column 7: unterminated object (expected ',' or '}')");
    expect_json_error("[1", "line 1, column 3: unterminated array (expected ',' or ']')");
    expect_json_error("[\n  1\n  2\n]", "line 3, column 3: expected ',' or ']' in array");
    expect_json_error("\"abc", "line 1, column 1: unterminated string");
    expect_json_error("[\"a\tb\"]", "line 1, column 4: control character in string (escape it)");
    expect_json_error("\"\\q\"", "line 1, column 2: invalid escape in string");
    expect_json_error("[1] x", "line 1, column 5: unexpected text after the JSON value");
    expect_json_error("{} {}", "line 1, column 4: unexpected text after the JSON value");
    /* a NUL inside the given length is text after the value */
    oi_clear_error();
    oi__json *j = oi__json_parse("[1]\0", 4);
    CHECK(j == NULL);
    CHECK(strcmp(oi_last_error(), "line 1, column 4: unexpected text after the JSON value") == 0);
    oi__json_free(j);
    CHECK(oi__json_parse(NULL, 0) == NULL);
}

static void test_reader_depth(void) {
    char deep[600];
    /* 256 levels are fine, 257 are refused (a bounded stack on any input) */
    memset(deep, '[', 256);
    memset(deep + 256, ']', 256);
    deep[512] = '\0';
    oi__json *j = parse(deep);
    CHECK(j != NULL);
    oi__json_free(j);
    memset(deep, '[', 257);
    memset(deep + 257, ']', 257);
    deep[514] = '\0';
    expect_json_error(deep, "line 1, column 257: nesting too deep (more than 256 levels)");
    /* many keys: duplicate detection switches to a hash set */
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_puts(&b, "{");
    for (int i = 0; i < 100; i++)
        oi__buf_printf(&b, "%s\"k%d\": %d", i ? ", " : "", i, i);
    oi__buf_puts(&b, "}");
    j = parse(b.data);
    CHECK(j && arrlen(j->keys) == 100 && oi__json_get(j, "k99") && oi__json_get(j, "k99")->number == 99.0);
    oi__json_free(j);
    b.data[b.len - 1] = ',';
    oi__buf_puts(&b, " \"k42\": 0}");
    oi_clear_error();
    j = parse(b.data);
    CHECK(j == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "duplicate key in object");
    oi__json_free(j);
    oi__buf_free(&b);
}

/* ================================================================== */
/* Graph JSON                                                          */
/* ================================================================== */

/* A hand-written document in exactly the writer's layout: reading it and
 * writing it back must give the same bytes (also the example in
 * docs/graph-json.md). */
static const char tiny_json[] =
    "{\n"
    "  \"format\": \"openinfer-graph\",\n"
    "  \"version\": 1,\n"
    "  \"name\": \"tiny\",\n"
    "  \"next_index\": 4,\n"
    "  \"vars\": [\n"
    "    {\"name\": \"x\", \"kind\": \"dynamic\", \"dtype\": \"f32\", \"dims\": [\"B\"], \"src\": {\"file\": \"tiny.c\", \"line\": 3, \"text\": \"OI_VAR(x, f32[B])\"}},\n"
    "    {\"name\": \"y\", \"kind\": \"volatile\", \"dtype\": \"f32\", \"dims\": [\"B\"], \"init\": {\"type\": \"float\", \"value\": 0.5}, \"src\": {\"file\": \"tiny.c\", \"line\": 4, \"text\": \"OI_VAR(y, f32[B], @init(0.5))\"}},\n"
    "    {\"name\": \"K\", \"kind\": \"persistent\", \"dtype\": \"f16\", \"dims\": [\"B\"], \"table_indices\": [\"t\"], \"table\": true, \"fixed\": [{\"index\": \"t\", \"max\": 8}], \"src\": {\"file\": \"tiny.c\", \"line\": 5, \"text\": \"OI_VAR(K(t), f16[B], @table, @fixed(t=8))\"}}\n"
    "  ],\n"
    "  \"blocks\": [\n"
    "    {\"name\": \"entry\", \"src\": {\"file\": \"tiny.c\", \"line\": 6, \"text\": \"OI_BLOCK(entry)\"},\n"
    "     \"nodes\": [\n"
    "       {\"index\": 0, \"uuid\": \"00000000-0000-4000-8000-000000000000\", \"kind\": \"op\", \"op\": \"add\", \"inputs\": [{\"name\": \"x\"}, {\"name\": \"y\"}], \"attrs\": [{\"name\": \"alpha\", \"type\": \"float\", \"value\": 0.1}, {\"name\": \"axes\", \"type\": \"int_list\", \"value\": [0, -1]}], \"output\": \"y\", \"src\": {\"file\": \"tiny.c\", \"line\": 7, \"text\": \"OI_OP(add, x, y, alpha=0.1, axes=[0, -1]) OI_TO(y)\"}},\n"
    "       {\"index\": 1, \"uuid\": \"00000000-0000-4000-8000-000000000001\", \"kind\": \"loop\", \"name\": \"steps\", \"var\": \"i\", \"start\": 0, \"end\": \"N\", \"src\": {\"file\": \"tiny.c\", \"line\": 8, \"text\": \"OI_LOOP(steps, i, 0..N)\"}, \"body\": [\n"
    "           {\"index\": 2, \"uuid\": \"00000000-0000-4000-8000-000000000002\", \"kind\": \"cache_reset\", \"cache\": {\"base\": \"K\", \"bracketed\": true, \"indices\": [{\"kind\": \"index\", \"value\": \"i\"}]}, \"src\": {\"file\": \"tiny.c\", \"line\": 9, \"text\": \"OI_CACHE_RESET(K[i])\"}}\n"
    "         ]},\n"
    "       {\"index\": 3, \"uuid\": \"00000000-0000-4000-8000-000000000003\", \"kind\": \"return\", \"src\": {\"file\": \"tiny.c\", \"line\": 11, \"text\": \"OI_RETURN()\"}}\n"
    "     ]}\n"
    "  ]\n"
    "}\n";

static void test_tiny_document(void) {
    oi_graph *g = oi_graph_from_json(tiny_json);
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (!g)
        return;
    CHECK(strcmp(oi_graph_name(g), "tiny") == 0 && g->next_index == 4);
    const oi__var *k = oi__graph_find_var(g, "K");
    CHECK(k && k->dtype == OI_DTYPE_F16 && k->table && arrlen(k->fixed) == 1 && k->fixed[0].max == 8);
    const oi__node *op = &g->blocks[0].nodes[0];
    CHECK(op->kind == OI__NODE_OP && op->op == OI_OP_add && arrlen(op->attrs) == 2 && op->attrs[0].f == 0.1);
    CHECK(op->src.line == 7 && strcmp(op->src.file, "tiny.c") == 0);
    CHECK(strcmp(op->uuid, "00000000-0000-4000-8000-000000000000") == 0);
    const oi__node *loop = &g->blocks[0].nodes[1];
    CHECK(loop->kind == OI__NODE_LOOP && arrlen(loop->body) == 1 && strcmp(loop->loop_end.ident, "N") == 0);
    char *again = oi_graph_to_json(g);
    CHECK_MSG(again && strcmp(again, tiny_json) == 0, "rewritten:\n%s", again ? again : "(null)");
    oi_free(again);
    oi_graph_free(g);
}

static void test_round_trip(void) {
    const oi_graph *g = every_construct();
    CHECK_MSG(g != NULL, "%s", oi_last_error());
    if (!g)
        return;
    char *first = oi_graph_to_json(g);
    CHECK(first != NULL);
    oi_graph *copy = first ? oi_graph_from_json(first) : NULL;
    CHECK_MSG(copy != NULL, "%s", oi_last_error());
    char *second = copy ? oi_graph_to_json(copy) : NULL;
    CHECK(first && second && strcmp(first, second) == 0);
    /* a few constructs, spelled out by hand */
    CHECK_STR_CONTAINS(first, "\"name\": \"y\", \"kind\": \"volatile\", \"dtype\": \"f32\", \"dims\": [\"B\", \"D\"], "
                              "\"init\": {\"type\": \"float\", \"value\": 5.0}");
    CHECK_STR_CONTAINS(first, "\"name\": \"scale\", \"kind\": \"constant\", \"dtype\": \"i8\", \"dims\": [\"B*D\", \"16\"], "
                              "\"init\": {\"type\": \"int\", \"value\": -3}");
    CHECK_STR_CONTAINS(first, "\"table_indices\": [\"l\", \"i\", \"j\"], \"table\": true, \"auto_dim\": [\"i\", \"j\"]");
    CHECK_STR_CONTAINS(first, "\"fixed\": [{\"index\": \"i\", \"max\": 1024}, {\"index\": \"j\", \"max\": 256}]");
    CHECK_STR_CONTAINS(first, "\"ref\": \"bias_vector\"");
    CHECK_STR_CONTAINS(first, "{\"name\": \"clamp_min\", \"type\": \"float\", \"value\": -1e-06}, "
                              "{\"name\": \"clamp_max\", \"type\": \"float\", \"value\": \"inf\"}");
    CHECK_STR_CONTAINS(first, "{\"name\": \"acc\", \"type\": \"dtype_list\", \"value\": [\"f32\", \"i64\"]}");
    CHECK_STR_CONTAINS(first, "{\"name\": \"value\", \"type\": \"ident\", \"value\": \"alpha\"}");
    CHECK_STR_CONTAINS(first, "{\"name\": \"to\", \"type\": \"dtype\", \"value\": \"f32\"}");
    CHECK_STR_CONTAINS(first, "\"cache\": {\"base\": \"S\", \"bracketed\": true, \"indices\": [{\"kind\": \"index\", \"value\": 1}, "
                              "{\"kind\": \"slice\"}, {\"kind\": \"slice\", \"start\": 2}, {\"kind\": \"slice\", \"end\": 3}, "
                              "{\"kind\": \"slice\", \"start\": 4, \"end\": 5}]}");
    CHECK_STR_CONTAINS(first, "\"kind\": \"branch\", \"cond\": \"cond\", \"then\": \"ok\", \"else\": \"bad\"");
    CHECK_STR_CONTAINS(first, "\"kind\": \"loop\", \"name\": \"scan\", \"var\": \"s\", \"start\": \"step\", \"end\": 16");
    CHECK_STR_CONTAINS(first, "\"kind\": \"dep\", \"after\": \"matmul\", \"before\": \"cache.write\"");
    CHECK_STR_CONTAINS(first, "\"text\": \"OI_OP(relu, h, negative_slope=0.01, clamp_min=-1e-6, clamp_max=inf) OI_TO(h)\"");
    /* the source places survive */
    if (copy) {
        const oi__var *c = oi__graph_find_var(copy, "C");
        CHECK(c && c->src.line == 30 && strcmp(c->src.text, "OI_VAR(C(l, i, j), f32[D, H], @table @auto_dim(i, j))") == 0);
        CHECK(strcmp(copy->blocks[0].nodes[8].uuid, g->blocks[0].nodes[8].uuid) == 0);
        /* and the picture is the same */
        char *dot_a = oi_graph_to_dot(g), *dot_b = oi_graph_to_dot(copy);
        CHECK(dot_a && dot_b && strcmp(dot_a, dot_b) == 0);
        oi_free(dot_a);
        oi_free(dot_b);
    }
    oi_free(first);
    oi_free(second);
    oi_graph_free(copy);
}

/* Replaces the first `from` in tiny_json with `to`, parses, and checks the error. */
static void expect_graph_error(const char *from, const char *to, const char *want) {
    const char *at = strstr(tiny_json, from);
    CHECK_MSG(at != NULL, "test bug: '%s' not in the document", from);
    if (!at)
        return;
    char *text = oi__sprintf("%.*s%s%s", (int)(at - tiny_json), tiny_json, to, at + strlen(from));
    oi_clear_error();
    oi_graph *g = oi_graph_from_json(text);
    CHECK_MSG(g == NULL, "loaded although wrong: %s -> %s", from, to);
    CHECK_MSG(strcmp(oi_last_error(), want) == 0, "%s -> %s\n   got: %s\n  want: %s", from, to, oi_last_error(), want);
    oi_graph_free(g);
    oi_free(text);
}

static void test_graph_json_errors(void) {
    oi_clear_error();
    CHECK(oi_graph_from_json("{\"format\": \"openinfer-graph\",\n  \"version\": 1,\n  \"name\" \"x\"}") == NULL);
    CHECK(strcmp(oi_last_error(), "graph JSON: line 3, column 10: expected ':' after object key") == 0);
    CHECK(oi_graph_from_json("[]") == NULL);
    CHECK(strcmp(oi_last_error(), "graph JSON: $: expected an object, found an array") == 0);
    CHECK(oi_graph_from_json(NULL) == NULL);
    expect_graph_error("\"format\": \"openinfer-graph\"", "\"format\": \"onnx\"", "graph JSON: $: format must be \"openinfer-graph\"");
    expect_graph_error("\"version\": 1", "\"version\": 2", "graph JSON: $.version: 2 is out of range");
    expect_graph_error("\"version\": 1", "\"version\": \"1\"", "graph JSON: $.version: expected a number, found a string");
    expect_graph_error("\"version\": 1,\n", "", "graph JSON: $.version: missing");
    expect_graph_error("\"name\": \"tiny\"", "\"name\": \"tiny\", \"extra\": 0", "graph JSON: $.extra: unknown key");
    expect_graph_error("\"dtype\": \"f32\", \"dims\": [\"B\"], \"src\"", "\"dtype\": \"f33\", \"dims\": [\"B\"], \"src\"",
                       "graph JSON: $.vars[0].dtype: unknown dtype \"f33\"");
    expect_graph_error("\"dims\": [\"B\"], \"src\"", "\"dims\": [\"B+1\"], \"src\"", "graph JSON: $.vars[0].dims[0]: malformed dim \"B+1\"");
    expect_graph_error("\"kind\": \"dynamic\"", "\"kind\": \"static\"",
                       "graph JSON: $.vars[0].kind: expected \"dynamic\", \"volatile\", \"constant\" or \"persistent\"");
    expect_graph_error("\"value\": 0.5}", "\"value\": true}", "graph JSON: $.vars[1].init.value: expected a number, found a boolean");
    expect_graph_error("\"kind\": \"op\"", "\"kind\": \"jump\"", "graph JSON: $.blocks[0].nodes[0].kind: unknown node kind \"jump\"");
    expect_graph_error("\"op\": \"add\"", "\"op\": \"plus\"", "graph JSON: $.blocks[0].nodes[0].op: unknown op \"plus\"");
    expect_graph_error("\"type\": \"float\", \"value\": 0.1", "\"type\": \"complex\", \"value\": 0.1",
                       "graph JSON: $.blocks[0].nodes[0].attrs[0].type: unknown setting type \"complex\"");
    expect_graph_error("\"value\": [0, -1]", "\"value\": [0, 1.5]", "graph JSON: $.blocks[0].nodes[0].attrs[1].value[1]: expected an integer, found 1.5");
    expect_graph_error("{\"name\": \"y\"}]", "{\"name\": \"y z\"}]", "graph JSON: $.blocks[0].nodes[0].inputs[1].name: \"y z\" is not an identifier");
    expect_graph_error("8000-000000000001", "8000-00000000000g", "graph JSON: $.blocks[0].nodes[1].uuid: \"00000000-0000-4000-8000-00000000000g\" is not a UUID");
    expect_graph_error("{\"kind\": \"index\", \"value\": \"i\"}", "{\"kind\": \"range\", \"value\": \"i\"}",
                       "graph JSON: $.blocks[0].nodes[1].body[0].cache.indices[0].kind: expected \"index\" or \"slice\"");
    expect_graph_error("\"line\": 9,", "\"line\": -9,", "graph JSON: $.blocks[0].nodes[1].body[0].src.line: -9 is out of range");
    expect_graph_error("\"output\": \"y\"",
                       "\"hints\": [{\"name\": \"fuse\", \"type\": \"bool\", \"value\": false}, "
                       "{\"name\": \"group\", \"type\": \"string\", \"value\": \"a\"}, "
                       "{\"name\": \"fuse\", \"type\": \"bool\", \"value\": true}], \"output\": \"y\"",
                       "graph JSON: $.blocks[0].nodes[0].hints[2]: duplicate hint \"fuse\"");
    expect_graph_error("\"index\": 3,", "\"index\": 2,", "graph JSON: node index 2 is used twice");
    expect_graph_error("\"index\": 3,", "\"index\": 4,", "tiny.c:11: error: OI_RETURN(): node index 4 is not below next_index 4");
    /* the model-independent checks run on loaded graphs too */
    expect_graph_error("\"output\": \"y\"", "\"output\": \"x2\"",
                       "tiny.c:7: error: OI_OP(add, x, y, alpha=0.1, axes=[0, -1]) OI_TO(y): unknown variable x2 (declare it in a memory section or with OI_ASSIGN)");
    expect_graph_error("\"kind\": \"return\"", "\"kind\": \"branch\", \"then\": \"nowhere\"",
                       "tiny.c:11: error: OI_RETURN(): branch to missing block nowhere");
    expect_graph_error("\"kind\": \"return\"", "\"kind\": \"branch\", \"cond\": \"x\", \"then\": \"entry\"",
                       "graph JSON: $.blocks[0].nodes[2]: a branch has both \"cond\" and \"else\", or neither");
}

/* ================================================================== */
/* DOT                                                                  */
/* ================================================================== */

static ptrdiff_t position(const char *text, const char *part) {
    const char *at = text ? strstr(text, part) : NULL;
    return at ? at - text : -1;
}

static void test_dot(void) {
    const oi_graph *g = every_construct();
    char *dot = g ? oi_graph_to_dot(g) : NULL;
    CHECK(dot != NULL);
    if (!dot)
        return;
    CHECK(strncmp(dot, "digraph \"every_construct\" {\n", 28) == 0);
    CHECK_STR_CONTAINS(dot, "  subgraph cluster_b0 {\n    label=\"block entry\";\n    b0 [shape=oval, label=\"entry\"];\n");
    CHECK_STR_CONTAINS(dot, "  subgraph cluster_b4 {\n    label=\"block consumer\";");
    CHECK_STR_CONTAINS(dot, "    n8 [label=\"op matmul(x,W[0]) >> h\"];");
    /* loops are clusters, the inner one nested inside the outer one */
    ptrdiff_t outer = position(dot, "subgraph cluster_loop_13 {"), inner = position(dot, "subgraph cluster_loop_17 {");
    ptrdiff_t inner_node = position(dot, "n18 [label=\"op add(q,QKV[l,hd]) >> q\"];"), after = position(dot, "n19 [label=");
    CHECK(outer > 0 && inner > outer && inner_node > inner && after > inner_node);
    CHECK_STR_CONTAINS(dot, "label=\"loop layers (l in 0..num_layers)\";");
    /* branches go to the target block's cluster */
    CHECK_STR_CONTAINS(dot, "n40 -> b1 [label=\"then\", style=dashed, color=\"#d62728\", lhead=cluster_b1];");
    CHECK_STR_CONTAINS(dot, "n40 -> b2 [label=\"else\", style=dashed, color=\"#d62728\", lhead=cluster_b2];");
    CHECK_STR_CONTAINS(dot, "n41 -> b3 [label=\"branch\"");
    /* yield -> await between blocks, both ways */
    CHECK_STR_CONTAINS(dot, "n42 -> n51 [label=\"yield h\", style=dotted");
    CHECK_STR_CONTAINS(dot, "n53 -> n44 [label=\"yield h\", style=dotted");
    /* data flow through variables */
    CHECK_STR_CONTAINS(dot, "\"var_x\" -> n7 [label=\"x\", color=\"#1f77b4\"];");
    CHECK_STR_CONTAINS(dot, "\"var_x\" -> n8 [label=\"x\", color=\"#1f77b4\"];");
    CHECK_STR_CONTAINS(dot, "n8 -> n9 [label=\"h\", color=\"#1f77b4\"];");
    CHECK_STR_CONTAINS(dot, "n14 -> n19 [label=\"k\", color=\"#1f77b4\"];");
    CHECK_STR_CONTAINS(dot, "n31 -> n32 [label=\"step\", color=\"#1f77b4\"];");
    CHECK_STR_CONTAINS(dot, "\"var_x\" [shape=ellipse, color=\"#1f77b4\", label=\"x\\ndynamic f32\"];");
    CHECK(position(dot, "\"var_h\"") < 0); /* h is written (transfer) before it is read */
    /* the node after a loop hangs below the loop's last node */
    CHECK_STR_CONTAINS(dot, "  n20 -> n21 [style=invis];");
    CHECK_STR_CONTAINS(dot, "  n22 -> n23 [style=invis];");
    /* blocks see entry's values, not their siblings': ok writes h, bad reads the h of entry's await */
    CHECK_STR_CONTAINS(dot, "n44 -> n48 [label=\"h\"");
    CHECK(position(dot, "n46 -> n48") < 0);
    CHECK(dot[strlen(dot) - 2] == '}');
    oi_free(dot);
    oi_clear_error();
    CHECK(oi_graph_to_dot(NULL) == NULL && oi_graph_to_json(NULL) == NULL);
}

int main(void) {
    test_reader_values();
    test_reader_unicode();
    test_reader_errors();
    test_reader_depth();
    test_tiny_document();
    test_round_trip();
    test_graph_json_errors();
    test_dot();
    return check_result("test_json");
}
