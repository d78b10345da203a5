/* builder.c - oi_graph_builder: the DSL's statements appended by function
 * calls instead of macros. It only records statements (copying the text);
 * oi_graph_build does all parsing and checking, so both paths give the same
 * graphs and the same errors. */
#include "internal.h"

typedef struct oi__open_scope {
    oi_dsl_kind end_kind; /* what closes it */
    char *head;           /* block/loop name, repeated on the end statement */
} oi__open_scope;

struct oi_graph_builder {
    char *name;
    char *file;
    oi_dsl_stmt *stmts;     /* stb array; head/text point into `strings` */
    char **strings;         /* stb array of owned copies */
    oi__open_scope *scopes; /* stb array: the open sections/blocks/loops */
    int next_line;
    bool failed;            /* an allocation failed: finish reports it */
};

oi_graph_builder *oi_graph_builder_new(const char *name, const char *file) {
    if (!name || !*name) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_builder_new: the graph needs a name");
        return NULL;
    }
    oi_graph_builder *b = (oi_graph_builder *)oi__calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->name = oi__strdup(name);
    b->file = oi__strdup(file && *file ? file : "<builder>");
    b->next_line = 1;
    if (!b->name || !b->file) {
        oi_graph_builder_free(b);
        return NULL;
    }
    return b;
}

void oi_graph_builder_free(oi_graph_builder *b) {
    if (!b)
        return;
    for (ptrdiff_t i = 0; i < arrlen(b->strings); i++)
        oi__free(b->strings[i]);
    arrfree(b->strings);
    arrfree(b->stmts);
    arrfree(b->scopes);
    oi__free(b->name);
    oi__free(b->file);
    oi__free(b);
}

void oi_graph_builder_at(oi_graph_builder *b, int line) {
    if (b && line > 0)
        b->next_line = line;
}

/* A copy of `text` owned by the builder (statements point at it). */
static const char *oi__builder_keep(oi_graph_builder *b, const char *text) {
    char *copy = oi__strdup(text ? text : "");
    if (!copy) {
        b->failed = true;
        return "";
    }
    if (!arrput(b->strings, copy)) {
        oi__free(copy);
        b->failed = true;
        return "";
    }
    return copy;
}

oi_status oi_graph_builder_stmt(oi_graph_builder *b, oi_dsl_kind kind, const char *head, const char *text) {
    if (!b)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_builder_stmt: no builder");
    if (kind <= OI_DSL_END || kind > OI_DSL_WITH)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s:%d: error: unknown statement kind %d", b->file,
                        b->next_line, (int)kind);
    oi_dsl_stmt stmt;
    stmt.kind = kind;
    stmt.line = b->next_line++;
    stmt.head = oi__builder_keep(b, head);
    stmt.text = oi__builder_keep(b, text);
    stmt.op = 0;
    if (kind == OI_DSL_OP) {
        oi_op op = oi_op_from_name(stmt.head);
        if (op == OI_OP_COUNT)
            return oi__fail(OI_ERROR_VALIDATION, "%s:%d: error: unknown op '%s'", b->file, stmt.line, stmt.head);
        stmt.op = (int)op;
    }
    if (!arrput(b->stmts, stmt))
        b->failed = true;
    return b->failed ? oi__fail(OI_ERROR_OUT_OF_MEMORY, "oi_graph_builder: out of memory") : OI_OK;
}

static oi_status oi__builder_open(oi_graph_builder *b, oi_dsl_kind kind, oi_dsl_kind end_kind, const char *head,
                                  const char *text) {
    oi_status s = oi_graph_builder_stmt(b, kind, head, text);
    if (s != OI_OK)
        return s;
    oi__open_scope scope;
    scope.end_kind = end_kind;
    scope.head = (char *)b->stmts[arrlen(b->stmts) - 1].head;
    if (!arrput(b->scopes, scope)) {
        b->failed = true;
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

oi_status oi_graph_builder_section(oi_graph_builder *b, oi_dsl_kind section) {
    if (section < OI_DSL_SECTION_DYNAMIC || section > OI_DSL_SECTION_PERSISTENT)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_builder_section: %d is not a memory section",
                        (int)section);
    return oi__builder_open(b, section, OI_DSL_SECTION_END, "", "");
}

oi_status oi_graph_builder_var(oi_graph_builder *b, const char *decl) {
    return oi_graph_builder_stmt(b, OI_DSL_VAR, "", decl);
}

oi_status oi_graph_builder_block(oi_graph_builder *b, const char *name) {
    return oi__builder_open(b, OI_DSL_BLOCK, OI_DSL_BLOCK_END, name, "");
}

oi_status oi_graph_builder_loop(oi_graph_builder *b, const char *name, const char *index, const char *range) {
    if (!b)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_builder_loop: no builder");
    char *text = oi__sprintf("%s in %s", index ? index : "", range ? range : "");
    if (!text) {
        b->failed = true; /* finish reports it */
        return OI_ERROR_OUT_OF_MEMORY;
    }
    oi_status s = oi__builder_open(b, OI_DSL_LOOP, OI_DSL_LOOP_END, name, text);
    oi__free(text);
    return s;
}

oi_status oi_graph_builder_scope(oi_graph_builder *b, const char *name) {
    return oi__builder_open(b, OI_DSL_SCOPE, OI_DSL_SCOPE_END, name, "");
}

oi_status oi_graph_builder_op(oi_graph_builder *b, const char *op, const char *args, const char *output) {
    oi_status s = oi_graph_builder_stmt(b, OI_DSL_OP, op, args);
    return s == OI_OK ? oi_graph_builder_stmt(b, OI_DSL_TO, "", output) : s;
}

oi_status oi_graph_builder_end(oi_graph_builder *b) {
    if (!b || arrlen(b->scopes) == 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s:%d: error: oi_graph_builder_end: nothing is open",
                        b ? b->file : "<builder>", b ? b->next_line : 0);
    oi__open_scope scope = arrpop(b->scopes);
    return oi_graph_builder_stmt(b, scope.end_kind, scope.head, "");
}

oi_graph *oi_graph_builder_finish(oi_graph_builder *b) {
    if (!b) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_builder_finish: no builder");
        return NULL;
    }
    oi_graph *g = NULL;
    if (b->failed) {
        oi__fail(OI_ERROR_OUT_OF_MEMORY, "oi_graph_builder: out of memory");
    } else {
        oi_dsl_stmt end;
        memset(&end, 0, sizeof end);
        end.kind = OI_DSL_END;
        end.line = b->next_line;
        end.head = end.text = "";
        if (arrput(b->stmts, end))
            g = oi_graph_build(b->name, b->file, b->stmts);
    }
    oi_graph_builder_free(b);
    return g;
}
