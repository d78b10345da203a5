/* fuzz_dsl.c - libFuzzer target: the DSL statement parser, i.e. the text
 * the macros capture. Each input line is "KIND|head|text" where KIND is an
 * oi_dsl_kind number; the op of an OI_DSL_OP line is looked up by head. */
#include "../../openinfer_impl/internal.h" /* the library: fuzz_lib.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_STMTS = 256 };

static char *next_field(char **cursor) {
    char *start = *cursor, *bar = strchr(start, '|');
    if (bar) {
        *bar = '\0';
        *cursor = bar + 1;
    } else {
        *cursor = start + strlen(start);
    }
    return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = (char *)oi__malloc(size + 1);
    oi_dsl_stmt *stmts = (oi_dsl_stmt *)oi__calloc(MAX_STMTS + 1, sizeof *stmts);
    if (!text || !stmts) {
        oi_free(text);
        oi_free(stmts);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    int n = 0;
    for (char *line = strtok(text, "\n"); line && n < MAX_STMTS; line = strtok(NULL, "\n")) {
        char *cursor = line;
        int kind = atoi(next_field(&cursor));
        if (kind <= (int)OI_DSL_END || kind > (int)OI_DSL_WITH)
            continue;
        stmts[n].kind = (oi_dsl_kind)kind;
        stmts[n].line = n + 1;
        stmts[n].head = next_field(&cursor);
        stmts[n].text = next_field(&cursor);
        stmts[n].op = kind == (int)OI_DSL_OP ? (int)oi_op_from_name(stmts[n].head) : 0;
        if (stmts[n].op == (int)OI_OP_COUNT)
            continue;
        n++;
    }
    stmts[n].kind = OI_DSL_END;
    oi_graph *g = oi_graph_build("fuzz", "fuzz.c", stmts);
    if (g) {
        oi_free(oi_graph_to_json(g));
        oi_graph_free(g);
    }
    oi_free(stmts);
    oi_free(text);
    return 0;
}
