/* dsl.c - the statement parser: turns the text each DSL macro captured
 * (OI_VAR(x, f32[B], @init(5.0)) -> "x, f32[B], @init(5.0)") into graph IR
 * through graph.c's functions, and the DSL's entry points oi_graph_build
 * and oi_graph_register (graph.c keeps the registry and never calls here).
 * Grammar and messages follow the original graph! macro; docs/dsl.md has
 * the reference. Every error names the user's file:line and statement. */
#include "internal.h"

#include <errno.h>
#include <math.h>

/* ================================================================== */
/* Tokens of one statement's text                                      */
/* ================================================================== */

typedef enum oi__d_tok_kind {
    OI__D_TOK_END, OI__D_TOK_IDENT, OI__D_TOK_INT, OI__D_TOK_FLOAT, OI__D_TOK_STRING, OI__D_TOK_PUNCT, OI__D_TOK_BAD
} oi__d_tok_kind;

typedef struct oi__d_token {
    oi__d_tok_kind kind;
    const char *start;
    size_t len;
} oi__d_token;

typedef struct oi__d_lexer {
    const char *text;
    size_t pos;
    oi__d_token tok;     /* the current token */
    const oi__src *src; /* the statement, for errors */
} oi__d_lexer;

static bool oi__d_is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool oi__d_is_digit_char(char c) { return c >= '0' && c <= '9'; }
static bool oi__d_is_ident_char(char c) { return oi__d_is_ident_start(c) || oi__d_is_digit_char(c); }

/* Digits, an optional fraction ("5.0", but "0..N" stops at "0") and an
 * optional exponent. */
static void oi__d_lex_number(oi__d_lexer *lx, const char *s) {
    size_t n = 0;
    bool is_float = false;
    while (oi__d_is_digit_char(s[n]))
        n++;
    if (s[n] == '.' && oi__d_is_digit_char(s[n + 1])) {
        is_float = true;
        n++;
        while (oi__d_is_digit_char(s[n]))
            n++;
    }
    if ((s[n] == 'e' || s[n] == 'E') &&
        (oi__d_is_digit_char(s[n + 1]) || ((s[n + 1] == '-' || s[n + 1] == '+') && oi__d_is_digit_char(s[n + 2])))) {
        is_float = true;
        n += 2;
        while (oi__d_is_digit_char(s[n]))
            n++;
    }
    lx->tok.kind = is_float ? OI__D_TOK_FLOAT : OI__D_TOK_INT;
    lx->tok.len = n;
}

static void oi__d_lex_string(oi__d_lexer *lx, const char *s) {
    size_t n = 1;
    while (s[n] && s[n] != '"') {
        if (s[n] == '\\' && s[n + 1])
            n++;
        n++;
    }
    if (s[n] != '"') {
        lx->tok.kind = OI__D_TOK_BAD;
        lx->tok.len = n;
        return;
    }
    lx->tok.kind = OI__D_TOK_STRING;
    lx->tok.len = n + 1;
}

static void oi__d_lex_next(oi__d_lexer *lx) {
    while (lx->text[lx->pos] == ' ' || lx->text[lx->pos] == '\t' || lx->text[lx->pos] == '\n' || lx->text[lx->pos] == '\r')
        lx->pos++;
    const char *s = lx->text + lx->pos;
    lx->tok.start = s;
    lx->tok.len = 1;
    if (!*s) {
        lx->tok.kind = OI__D_TOK_END;
        lx->tok.len = 0;
    } else if (oi__d_is_ident_start(*s)) {
        size_t n = 1;
        while (oi__d_is_ident_char(s[n]))
            n++;
        lx->tok.kind = OI__D_TOK_IDENT;
        lx->tok.len = n;
    } else if (oi__d_is_digit_char(*s)) {
        oi__d_lex_number(lx, s);
    } else if (*s == '"') {
        oi__d_lex_string(lx, s);
    } else if (s[0] == '.' && s[1] == '.') {
        lx->tok.kind = OI__D_TOK_PUNCT;
        lx->tok.len = 2;
    } else if (strchr("()[],=@*-.+?", *s)) {
        lx->tok.kind = OI__D_TOK_PUNCT;
    } else {
        lx->tok.kind = OI__D_TOK_BAD;
    }
    lx->pos += lx->tok.len;
}

static void oi__d_lex_init(oi__d_lexer *lx, const char *text, const oi__src *src) {
    memset(lx, 0, sizeof *lx);
    lx->text = text ? text : "";
    lx->src = src;
    oi__d_lex_next(lx);
}

static bool oi__d_tok_is(const oi__d_lexer *lx, const char *punct) {
    return lx->tok.kind == OI__D_TOK_PUNCT && lx->tok.len == strlen(punct) && memcmp(lx->tok.start, punct, lx->tok.len) == 0;
}

static bool oi__d_tok_is_word(const oi__d_lexer *lx, const char *word) {
    return lx->tok.kind == OI__D_TOK_IDENT && lx->tok.len == strlen(word) && memcmp(lx->tok.start, word, lx->tok.len) == 0;
}

static bool oi__d_accept(oi__d_lexer *lx, const char *punct) {
    if (!oi__d_tok_is(lx, punct))
        return false;
    oi__d_lex_next(lx);
    return true;
}

/* "<what>, found 'tok'" or "<what> at the end". */
static oi_status oi__d_lex_fail(const oi__d_lexer *lx, const char *what) {
    if (lx->tok.kind == OI__D_TOK_END)
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "%s at the end", what);
    int len = lx->tok.len > 40 ? 40 : (int)lx->tok.len;
    return oi__fail_at(OI_ERROR_FORMAT, lx->src, "%s, found '%.*s'", what, len, lx->tok.start);
}

static oi_status oi__d_expect(oi__d_lexer *lx, const char *punct, const char *what) {
    return oi__d_accept(lx, punct) ? OI_OK : oi__d_lex_fail(lx, what);
}

static oi_status oi__d_expect_end(oi__d_lexer *lx) {
    return lx->tok.kind == OI__D_TOK_END ? OI_OK : oi__d_lex_fail(lx, "unexpected text");
}

/* The current token as a heap string, then advance. */
static char *oi__d_take_text(oi__d_lexer *lx) {
    char *out = oi__strndup(lx->tok.start, lx->tok.len);
    oi__d_lex_next(lx);
    return out;
}

static oi_status oi__d_take_ident(oi__d_lexer *lx, const char *what, char **out) {
    if (lx->tok.kind != OI__D_TOK_IDENT)
        return oi__d_lex_fail(lx, what);
    *out = oi__d_take_text(lx);
    return *out ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

static oi_status oi__d_tok_int(oi__d_lexer *lx, bool negative, int64_t *out) {
    char digits[32];
    if (lx->tok.len >= sizeof digits - 1)
        return oi__d_lex_fail(lx, "integer out of range");
    digits[0] = '-';
    memcpy(digits + 1, lx->tok.start, lx->tok.len);
    digits[lx->tok.len + 1] = '\0';
    errno = 0;
    long long value = strtoll(negative ? digits : digits + 1, NULL, 10);
    if (errno == ERANGE)
        return oi__d_lex_fail(lx, "integer out of range");
    *out = (int64_t)value;
    oi__d_lex_next(lx);
    return OI_OK;
}

static oi_status oi__d_tok_float(oi__d_lexer *lx, bool negative, double *out) {
    char *text = oi__strndup(lx->tok.start, lx->tok.len);
    if (!text)
        return OI_ERROR_OUT_OF_MEMORY;
    double value = strtod(text, NULL);
    oi__free(text);
    if (isinf(value))
        return oi__d_lex_fail(lx, "number out of range");
    *out = negative ? -value : value;
    oi__d_lex_next(lx);
    return OI_OK;
}

/* A quoted string token, escapes decoded: \" \\ \n \t \r. */
static oi_status oi__d_take_string(oi__d_lexer *lx, char **out) {
    if (lx->tok.kind != OI__D_TOK_STRING)
        return oi__d_lex_fail(lx, "expected a string");
    oi__buf b;
    memset(&b, 0, sizeof b);
    for (size_t i = 1; i + 1 < lx->tok.len; i++) {
        char c = lx->tok.start[i];
        if (c == '\\') {
            char e = lx->tok.start[++i];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
            if (e != 'n' && e != 't' && e != 'r' && e != '"' && e != '\\' && e != '\'') {
                oi__buf_free(&b);
                return oi__d_lex_fail(lx, "unsupported escape in string");
            }
        }
        oi__buf_append(&b, &c, 1);
    }
    *out = oi__buf_take(&b);
    if (!*out)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__d_lex_next(lx);
    return OI_OK;
}

/* ================================================================== */
/* Pieces: dtypes, dims, variable references, cache accesses           */
/* ================================================================== */

static oi_status oi__d_parse_dtype(oi__d_lexer *lx, oi_dtype *out) {
    if (lx->tok.kind != OI__D_TOK_IDENT)
        return oi__d_lex_fail(lx, "expected a dtype (f32, i8, bool...)");
    char name[24];
    size_t len = lx->tok.len < sizeof name - 1 ? lx->tok.len : sizeof name - 1;
    memcpy(name, lx->tok.start, len);
    name[len] = '\0';
    oi_dtype t = oi_dtype_from_name(name);
    if (t == OI_DTYPE_INVALID || !oi__dtype_is_tensor_type(t))
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "unknown dtype %.*s (expected one of f8 bf16 f16 f32 f64 i8 i16 i32 i64 "
                           "u8 u16 u32 u64 bool bitset i1 i2 i4 u1 u2 u4 t1 t2)", (int)(lx->tok.len > 40 ? 40 : lx->tok.len), lx->tok.start);
    *out = t;
    oi__d_lex_next(lx);
    return OI_OK;
}

static bool oi__d_tok_is_dim_atom(const oi__d_lexer *lx) { return lx->tok.kind == OI__D_TOK_IDENT || lx->tok.kind == OI__D_TOK_INT; }

/* NAME '(' (IDENT | INT) ')' after NAME: a size per table entry ("E(n)") or,
 * in a setting, its value for one entry ("E(l)"); appended to b. */
static oi_status oi__d_parse_entry_size(oi__d_lexer *lx, oi__buf *b) {
    oi__d_lex_next(lx); /* '(' */
    if (lx->tok.kind != OI__D_TOK_IDENT && lx->tok.kind != OI__D_TOK_INT)
        return oi__d_lex_fail(lx, "a size per entry is NAME(index): expected the index");
    oi__buf_puts(b, "(");
    oi__buf_append(b, lx->tok.start, lx->tok.len);
    oi__buf_puts(b, ")");
    oi__d_lex_next(lx);
    return oi__d_expect(lx, ")", "a size per entry is NAME(index): expected ')'");
}

/* dim ::= atom | atom '*' atom | '?' (set at run time) | IDENT '(' IDENT ')'
 * (a size per prefix-table entry), atom ::= INT | IDENT; kept as text "3*D". */
static oi_status oi__d_parse_dim(oi__d_lexer *lx, char **out) {
    if (oi__d_accept(lx, "?")) {
        *out = oi__strdup("?");
        return *out ? OI_OK : oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
    }
    if (!oi__d_tok_is_dim_atom(lx))
        return oi__d_lex_fail(lx, "malformed dims: expected a size (a number or a name)");
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_append(&b, lx->tok.start, lx->tok.len);
    bool word = lx->tok.kind == OI__D_TOK_IDENT;
    oi__d_lex_next(lx);
    if (word && oi__d_tok_is(lx, "(")) {
        oi_status status = oi__d_parse_entry_size(lx, &b);
        if (status != OI_OK) {
            oi__buf_free(&b);
            return status;
        }
        *out = oi__buf_take(&b);
        return *out ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    }
    if (oi__d_accept(lx, "*")) {
        if (!oi__d_tok_is_dim_atom(lx)) {
            oi__buf_free(&b);
            return oi__d_lex_fail(lx, "malformed dims: expected a size after '*'");
        }
        oi__buf_puts(&b, "*");
        oi__buf_append(&b, lx->tok.start, lx->tok.len);
        oi__d_lex_next(lx);
        if (oi__d_tok_is(lx, "*")) {
            oi__buf_free(&b);
            return oi__d_lex_fail(lx, "malformed dims: a dim is a size or a product of two sizes");
        }
    }
    *out = oi__buf_take(&b);
    return *out ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

/* dtype ['[' dims ']'], as in "f32[B, 3*D]" or "i32". */
static oi_status oi__d_parse_type(oi__d_lexer *lx, oi_dtype *dtype, char ***dims) {
    oi_status status = oi__d_parse_dtype(lx, dtype);
    if (status != OI_OK || !oi__d_accept(lx, "["))
        return status;
    while (!oi__d_accept(lx, "]")) {
        char *dim = NULL;
        if ((status = oi__d_parse_dim(lx, &dim)) != OI_OK)
            return status;
        if (!arrput(*dims, dim)) {
            oi__free(dim);
            return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
        }
        if (!oi__d_accept(lx, ",") && !oi__d_tok_is(lx, "]"))
            return oi__d_lex_fail(lx, "malformed dims: expected ',' or ']'");
    }
    return OI_OK;
}

static oi_status oi__d_parse_index_list(oi__d_lexer *lx, char ***out) {
    oi_status status;
    do {
        char *name = NULL;
        if ((status = oi__d_take_ident(lx, "expected an index name", &name)) != OI_OK)
            return status;
        if (!arrput(*out, name)) {
            oi__free(name);
            return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
        }
    } while (oi__d_accept(lx, ","));
    return OI_OK;
}

/* IDENT ['[' (INT|IDENT) (',' (INT|IDENT))* ']'], as in "QKV[0, h]". */
static oi_status oi__d_parse_varref(oi__d_lexer *lx, oi__varref *out) {
    oi_status status = oi__d_take_ident(lx, "expected a variable name", &out->name);
    if (status != OI_OK || !oi__d_accept(lx, "["))
        return status;
    if (oi__d_tok_is(lx, "]"))
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "%s[] has no index (write %s or %s[i])", out->name, out->name, out->name);
    do {
        if (oi__d_tok_is(lx, "-"))
            return oi__d_lex_fail(lx, "an index must not be negative");
        if (lx->tok.kind != OI__D_TOK_IDENT && lx->tok.kind != OI__D_TOK_INT)
            return oi__d_lex_fail(lx, "expected an index (a number or a name)");
        char *index = oi__d_take_text(lx);
        if (!index)
            return OI_ERROR_OUT_OF_MEMORY;
        if (!arrput(out->indices, index)) {
            oi__free(index);
            return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
        }
    } while (oi__d_accept(lx, ","));
    return oi__d_expect(lx, "]", "expected ',' or ']' after an index");
}

/* ['-'] INT | IDENT: one term of an index. */
static oi_status oi__d_parse_atom(oi__d_lexer *lx, bool first, oi__expr *out) {
    bool negative = first && oi__d_accept(lx, "-");
    if (lx->tok.kind == OI__D_TOK_IDENT) {
        if (negative)
            return oi__d_lex_fail(lx, "unexpected '-' before identifier");
        out->ident = oi__d_take_text(lx);
        return out->ident ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    }
    if (lx->tok.kind != OI__D_TOK_INT)
        return oi__d_lex_fail(lx, "malformed index: expected a number or a name");
    return oi__d_tok_int(lx, negative, &out->lit);
}

static bool oi__d_at_expr_op(const oi__d_lexer *lx) {
    return oi__d_tok_is(lx, "+") || oi__d_tok_is(lx, "-") || oi__d_tok_is(lx, "*");
}

/* A cache index or a loop bound: one term, or terms joined by + - *
 * ("step+1", "n-1", "S*2"), kept as text without spaces (expr.c). */
static oi_status oi__d_parse_expr(oi__d_lexer *lx, oi__expr *out) {
    oi_status status = oi__d_parse_atom(lx, true, out);
    if (status != OI_OK || !oi__d_at_expr_op(lx))
        return status;
    oi__buf b;
    memset(&b, 0, sizeof b);
    if (out->ident)
        oi__buf_puts(&b, out->ident);
    else
        oi__buf_printf(&b, "%lld", (long long)out->lit);
    oi__free(out->ident);
    memset(out, 0, sizeof *out);
    while (status == OI_OK && oi__d_at_expr_op(lx)) {
        oi__buf_append(&b, lx->tok.start, 1);
        oi__d_lex_next(lx);
        oi__expr term;
        memset(&term, 0, sizeof term);
        if ((status = oi__d_parse_atom(lx, false, &term)) != OI_OK)
            break;
        if (term.ident)
            oi__buf_puts(&b, term.ident);
        else
            oi__buf_printf(&b, "%lld", (long long)term.lit);
        oi__free(term.ident);
    }
    if (status != OI_OK) {
        oi__buf_free(&b);
        return status;
    }
    out->ident = oi__buf_take(&b);
    return out->ident ? OI_OK : oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
}

static bool oi__d_at_entry_end(const oi__d_lexer *lx) { return oi__d_tok_is(lx, ",") || oi__d_tok_is(lx, "]"); }

/* entry ::= expr | [expr] '..' [expr] | (nothing: the whole dim). */
static oi_status oi__d_parse_cache_index(oi__d_lexer *lx, oi__cache_index *ix) {
    oi_status status;
    if (oi__d_at_entry_end(lx)) {
        ix->is_slice = true;
        return OI_OK;
    }
    if (!oi__d_tok_is(lx, "..")) {
        if ((status = oi__d_parse_expr(lx, &ix->single)) != OI_OK)
            return status;
        if (!oi__d_tok_is(lx, ".."))
            return OI_OK;
        ix->start = ix->single;
        memset(&ix->single, 0, sizeof ix->single);
        ix->has_start = true;
    }
    ix->is_slice = true;
    oi__d_lex_next(lx); /* '..' */
    if (oi__d_at_entry_end(lx))
        return OI_OK;
    ix->has_end = true;
    return oi__d_parse_expr(lx, &ix->end);
}

/* IDENT | IDENT '[' entries ']': "K[l, step]", "A[]", "A[1, .., 2.., ..-3]". */
static oi_status oi__d_parse_access(oi__d_lexer *lx, oi__cache_access *out) {
    oi_status status = oi__d_take_ident(lx, "expected a persistent variable", &out->base);
    if (status != OI_OK || !oi__d_accept(lx, "["))
        return status;
    out->bracketed = true;
    if (oi__d_accept(lx, "]"))
        return OI_OK;
    for (;;) {
        oi__cache_index ix;
        memset(&ix, 0, sizeof ix);
        status = oi__d_parse_cache_index(lx, &ix);
        if (!arrput(out->indices, ix)) { /* kept even when partial, so it is freed */
            oi__free(ix.single.ident);
            oi__free(ix.start.ident);
            oi__free(ix.end.ident);
            return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
        }
        if (status != OI_OK)
            return status;
        if (oi__d_accept(lx, "]"))
            return OI_OK;
        if (!oi__d_accept(lx, ","))
            return oi__d_lex_fail(lx, "malformed slice: expected ',' or ']'");
    }
}

/* ================================================================== */
/* OI_VAR                                                              */
/* ================================================================== */

enum {
    OI__D_ATTR_SEEN_INIT = 1, OI__D_ATTR_SEEN_REF = 2, OI__D_ATTR_SEEN_PATTERN = 4,
    OI__D_ATTR_SEEN_TABLE = 8, OI__D_ATTR_SEEN_FIXED = 16, OI__D_ATTR_SEEN_AUTO_DIM = 32
};

static oi_status oi__d_parse_init(oi__d_lexer *lx, oi__var *v) {
    oi_status status = oi__d_expect(lx, "(", "expected '(' after @init");
    if (status != OI_OK)
        return status;
    bool negative = oi__d_accept(lx, "-");
    if (lx->tok.kind == OI__D_TOK_FLOAT) {
        v->init_kind = OI__INIT_FLOAT;
        status = oi__d_tok_float(lx, negative, &v->init_float);
    } else if (lx->tok.kind == OI__D_TOK_INT) {
        v->init_kind = OI__INIT_INT;
        status = oi__d_tok_int(lx, negative, &v->init_int);
    } else if (!negative && (oi__d_tok_is_word(lx, "true") || oi__d_tok_is_word(lx, "false"))) {
        v->init_kind = OI__INIT_BOOL;
        v->init_int = oi__d_tok_is_word(lx, "true");
        oi__d_lex_next(lx);
    } else {
        return oi__d_lex_fail(lx, "@init expects a number, true or false");
    }
    return status != OI_OK ? status : oi__d_expect(lx, ")", "expected ')' after the @init value");
}

static oi_status oi__d_parse_ref(oi__d_lexer *lx, oi__var *v) {
    oi_status status = oi__d_expect(lx, "(", "expected '(' after @ref");
    if (status != OI_OK)
        return status;
    if (lx->tok.kind == OI__D_TOK_STRING)
        status = oi__d_take_string(lx, &v->ref_name);
    else
        status = oi__d_take_ident(lx, "@ref expects a name or a string", &v->ref_name);
    return status != OI_OK ? status : oi__d_expect(lx, ")", "expected ')' after the @ref name");
}

static oi_status oi__d_parse_pattern(oi__d_lexer *lx, oi__var *v) {
    oi_status status = oi__d_expect(lx, "(", "expected '(' after @pattern");
    if (status == OI_OK)
        status = lx->tok.kind == OI__D_TOK_STRING ? oi__d_take_string(lx, &v->pattern)
                                                : oi__d_lex_fail(lx, "@pattern expects a string such as \"W.{l}\"");
    return status != OI_OK ? status : oi__d_expect(lx, ")", "expected ')' after the @pattern string");
}

static oi_status oi__d_parse_auto_dim(oi__d_lexer *lx, oi__var *v) {
    oi_status status = oi__d_expect(lx, "(", "expected '(' after @auto_dim");
    if (status != OI_OK)
        return status;
    if (oi__d_tok_is(lx, ")"))
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "@auto_dim requires at least one index");
    if ((status = oi__d_parse_index_list(lx, &v->auto_dim)) != OI_OK)
        return status;
    return oi__d_expect(lx, ")", "expected ',' or ')' in @auto_dim");
}

static oi_status oi__d_parse_fixed(oi__d_lexer *lx, oi__var *v) {
    oi_status status = oi__d_expect(lx, "(", "expected '(' after @fixed");
    if (status != OI_OK)
        return status;
    if (oi__d_tok_is(lx, ")"))
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "@fixed requires at least one index=size");
    do {
        oi__fixed f;
        memset(&f, 0, sizeof f);
        if ((status = oi__d_take_ident(lx, "@fixed expects index=size", &f.index)) != OI_OK)
            return status;
        if (!arrput(v->fixed, f)) {
            oi__free(f.index);
            return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
        }
        if ((status = oi__d_expect(lx, "=", "@fixed expects index=size")) != OI_OK)
            return status;
        if (lx->tok.kind != OI__D_TOK_INT)
            return oi__d_lex_fail(lx, "@fixed expects a positive integer size");
        if ((status = oi__d_tok_int(lx, false, &v->fixed[arrlen(v->fixed) - 1].max)) != OI_OK)
            return status;
    } while (oi__d_accept(lx, ","));
    return oi__d_expect(lx, ")", "expected ',' or ')' in @fixed");
}

/* An attribute this version does not know, "@layout("nhwc")": kept as
 * written (its balanced parentheses included) for tooling; the graph check
 * warns about it, or rejects it in strict mode. */
static oi_status oi__d_keep_attribute(oi__d_lexer *lx, oi__var *v) {
    const char *start = lx->tok.start;
    oi__d_lex_next(lx);
    if (oi__d_tok_is(lx, "(")) {
        for (int depth = 0;; oi__d_lex_next(lx)) {
            if (lx->tok.kind == OI__D_TOK_END || lx->tok.kind == OI__D_TOK_BAD)
                return oi__d_lex_fail(lx, "unterminated arguments of an attribute");
            depth += oi__d_tok_is(lx, "(") - oi__d_tok_is(lx, ")");
            if (depth == 0)
                break;
        }
        oi__d_lex_next(lx);
    }
    const char *end = lx->tok.kind == OI__D_TOK_END ? lx->text + lx->pos : lx->tok.start;
    while (end > start && (end[-1] == ' ' || end[-1] == ',' || end[-1] == '\t' || end[-1] == '\n'))
        end--;
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_puts(&b, "@");
    oi__buf_append(&b, start, (size_t)(end - start));
    char *text = oi__buf_take(&b);
    if (!text || !arrput(v->extra_attrs, text)) {
        oi__free(text);
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
    }
    return OI_OK;
}

static oi_status oi__d_parse_attribute(oi__d_lexer *lx, oi__var *v, unsigned *seen) {
    static const char *const names[] = {"init", "ref", "pattern", "table", "fixed", "auto_dim"};
    if (lx->tok.kind != OI__D_TOK_IDENT)
        return oi__d_lex_fail(lx, "expected an attribute name after '@'");
    int which = -1;
    for (int i = 0; i < 6; i++)
        if (oi__d_tok_is_word(lx, names[i]))
            which = i;
    if (which < 0)
        return oi__d_keep_attribute(lx, v);
    if (*seen & (1u << which))
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "duplicate @%s attribute", names[which]);
    *seen |= 1u << which;
    oi__d_lex_next(lx);
    switch (which) {
    case 0: return oi__d_parse_init(lx, v);
    case 1: return oi__d_parse_ref(lx, v);
    case 2: return oi__d_parse_pattern(lx, v);
    case 3:
        v->table = true;
        return oi__d_tok_is(lx, "(") ? oi__d_lex_fail(lx, "@table takes no arguments") : OI_OK;
    case 4: return oi__d_parse_fixed(lx, v);
    default: return oi__d_parse_auto_dim(lx, v);
    }
}

/* name[(indices)], dtype[dims] {[,] @attr} */
static oi_status oi__d_parse_var(oi__d_lexer *lx, oi__var *v) {
    oi_status status = oi__d_take_ident(lx, "expected a variable name", &v->name);
    if (status != OI_OK)
        return status;
    if (oi__d_accept(lx, "(")) {
        if (oi__d_tok_is(lx, ")"))
            return oi__fail_at(OI_ERROR_FORMAT, lx->src, "prefix table must declare at least one index");
        if ((status = oi__d_parse_index_list(lx, &v->table_indices)) != OI_OK)
            return status;
        if ((status = oi__d_expect(lx, ")", "expected ',' or ')' after the table indices")) != OI_OK)
            return status;
    }
    if ((status = oi__d_expect(lx, ",", "expected ',' and a dtype after the name")) != OI_OK)
        return status;
    if ((status = oi__d_parse_type(lx, &v->dtype, &v->dims)) != OI_OK)
        return status;
    unsigned seen = 0;
    while (lx->tok.kind != OI__D_TOK_END) {
        oi__d_accept(lx, ",");
        if ((status = oi__d_expect(lx, "@", "expected an attribute (@init, @ref, ...)")) != OI_OK)
            return status;
        if ((status = oi__d_parse_attribute(lx, v, &seen)) != OI_OK)
            return status;
    }
    return OI_OK;
}

/* ================================================================== */
/* OI_OP settings                                                      */
/* ================================================================== */

/* The first character after the current token, past white space. */
static char oi__d_peek(const oi__d_lexer *lx) {
    const char *after = lx->text + lx->pos;
    while (*after == ' ' || *after == '\t' || *after == '\n' || *after == '\r')
        after++;
    return *after;
}

/* size ::= atom ('*' atom)*, atom ::= INT | IDENT: the model's sizes in an
 * op setting ("S", "S*H", "2*D"), kept as text and resolved at validation. */
static oi_status oi__d_parse_size_expr(oi__d_lexer *lx, char **out) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    do {
        if (!oi__d_tok_is_dim_atom(lx)) {
            oi__buf_free(&b);
            return oi__d_lex_fail(lx, "expected a size (a number or a size name) after '*'");
        }
        if (b.len)
            oi__buf_puts(&b, "*");
        oi__buf_append(&b, lx->tok.start, lx->tok.len);
        oi__d_lex_next(lx);
    } while (oi__d_accept(lx, "*"));
    *out = oi__buf_take(&b);
    return *out ? OI_OK : oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
}

/* The tensor dtype the current token names, or OI_DTYPE_INVALID. */
static oi_dtype oi__d_tok_dtype(const oi__d_lexer *lx) {
    char name[24];
    if (lx->tok.kind != OI__D_TOK_IDENT || lx->tok.len >= sizeof name)
        return OI_DTYPE_INVALID;
    memcpy(name, lx->tok.start, lx->tok.len);
    name[lx->tok.len] = '\0';
    oi_dtype t = oi_dtype_from_name(name);
    return oi__dtype_is_tensor_type(t) ? t : OI_DTYPE_INVALID;
}

/* One entry of an integer list: ['-'] INT, or a size expression. */
static oi_status oi__d_parse_int_entry(oi__d_lexer *lx, oi__attr *a) {
    int64_t value = 0;
    char *expr = NULL;
    oi_status status = OI_OK;
    bool negative = oi__d_accept(lx, "-");
    bool product = lx->tok.kind == OI__D_TOK_INT && oi__d_peek(lx) == '*';
    if (lx->tok.kind == OI__D_TOK_IDENT || product) {
        if (negative)
            return oi__d_lex_fail(lx, "a size cannot be negated; write the number");
        status = oi__d_parse_size_expr(lx, &expr);
    } else if (lx->tok.kind == OI__D_TOK_INT) {
        status = oi__d_tok_int(lx, negative, &value);
    } else {
        return oi__d_lex_fail(lx, "a list holds integers, size names (S, S*H) or dtypes");
    }
    if (status != OI_OK)
        return status;
    if (expr && !a->exprs) { /* the first expression: NULL for the literals before it */
        for (ptrdiff_t i = 0; i < arrlen(a->ints); i++)
            if (!arrput(a->exprs, NULL))
                status = OI_ERROR_OUT_OF_MEMORY;
    }
    if (status == OI_OK && !arrput(a->ints, value))
        status = OI_ERROR_OUT_OF_MEMORY;
    if (status == OI_OK && (a->exprs || expr) && !arrput(a->exprs, expr))
        status = OI_ERROR_OUT_OF_MEMORY;
    if (status != OI_OK) {
        oi__free(expr);
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
    }
    return OI_OK;
}

/* '[' ints ']' or '[' dtypes ']': a list of dtypes starts with a dtype name;
 * any other list holds integers and size expressions. */
static oi_status oi__d_parse_list_value(oi__d_lexer *lx, oi__attr *a) {
    a->kind = OI__ATTR_INT_LIST;
    if (oi__d_accept(lx, "]"))
        return OI_OK;
    bool dtypes = oi__d_tok_dtype(lx) != OI_DTYPE_INVALID;
    if (dtypes)
        a->kind = OI__ATTR_DTYPE_LIST;
    do {
        oi_status status;
        if (dtypes) {
            oi_dtype t;
            if (lx->tok.kind != OI__D_TOK_IDENT)
                return oi__d_lex_fail(lx, "a list holds either integers or dtypes");
            if ((status = oi__d_parse_dtype(lx, &t)) != OI_OK)
                return status;
            if (!arrput(a->dtypes, t))
                return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
        } else if ((status = oi__d_parse_int_entry(lx, a)) != OI_OK) {
            return status;
        }
    } while (oi__d_accept(lx, ","));
    return oi__d_expect(lx, "]", "expected ',' or ']' in the list");
}

static oi_status oi__d_parse_word_value(oi__d_lexer *lx, oi__attr *a, bool negative) {
    if (oi__d_tok_is_word(lx, "inf")) {
        a->kind = OI__ATTR_FLOAT;
        a->f = negative ? -HUGE_VAL : HUGE_VAL;
        oi__d_lex_next(lx);
        return OI_OK;
    }
    if (negative)
        return oi__d_lex_fail(lx, "unexpected '-' before identifier");
    if (oi__d_tok_is_word(lx, "true") || oi__d_tok_is_word(lx, "false")) {
        a->kind = OI__ATTR_BOOL;
        a->i = oi__d_tok_is_word(lx, "true");
        oi__d_lex_next(lx);
        return OI_OK;
    }
    oi_dtype t = oi__d_tok_dtype(lx);
    if (t != OI_DTYPE_INVALID) {
        a->kind = OI__ATTR_DTYPE;
        a->dtype = t;
        oi__d_lex_next(lx);
        return OI_OK;
    }
    if (oi__d_peek(lx) == '*') { /* S*H: a product of sizes */
        a->kind = OI__ATTR_SIZE;
        return oi__d_parse_size_expr(lx, &a->s);
    }
    if (oi__d_peek(lx) == '(') { /* E(l): a size per prefix-table entry, at run time */
        oi__buf b;
        memset(&b, 0, sizeof b);
        oi__buf_append(&b, lx->tok.start, lx->tok.len);
        oi__d_lex_next(lx);
        oi_status status = oi__d_parse_entry_size(lx, &b);
        a->kind = OI__ATTR_SIZE;
        a->s = status == OI_OK ? oi__buf_take(&b) : NULL;
        if (status != OI_OK)
            oi__buf_free(&b);
        return status != OI_OK ? status : a->s ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    }
    a->kind = OI__ATTR_IDENT; /* a model scalar, metadata entry or size, resolved later */
    a->s = oi__d_take_text(lx);
    return a->s ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

/* value ::= ['-'] FLOAT | ['-'] INT | ['-'] inf | true | false | STRING
 *         | IDENT | dtype | '[' ints ']' | '[' dtypes ']' */
static oi_status oi__d_parse_setting_value(oi__d_lexer *lx, oi__attr *a) {
    bool negative = oi__d_accept(lx, "-");
    switch (lx->tok.kind) {
    case OI__D_TOK_FLOAT: a->kind = OI__ATTR_FLOAT; return oi__d_tok_float(lx, negative, &a->f);
    case OI__D_TOK_INT:
        if (!negative && oi__d_peek(lx) == '*') { /* 2*D */
            a->kind = OI__ATTR_SIZE;
            return oi__d_parse_size_expr(lx, &a->s);
        }
        a->kind = OI__ATTR_INT;
        return oi__d_tok_int(lx, negative, &a->i);
    case OI__D_TOK_IDENT: return oi__d_parse_word_value(lx, a, negative);
    case OI__D_TOK_STRING:
        if (negative)
            break;
        a->kind = OI__ATTR_STRING;
        return oi__d_take_string(lx, &a->s);
    default:
        if (!negative && oi__d_accept(lx, "["))
            return oi__d_parse_list_value(lx, a);
        break;
    }
    return oi__d_lex_fail(lx, "expected a setting value (number, true/false, string, name or list)");
}

/* name '=' value, appended to *list (a node's settings or its hints). */
static oi_status oi__d_parse_named_value(oi__d_lexer *lx, oi__attr **list, const char *what) {
    oi__attr a;
    memset(&a, 0, sizeof a);
    char expected[64], equals[64];
    snprintf(expected, sizeof expected, "expected a %s name", what);
    snprintf(equals, sizeof equals, "expected '=' after the %s name", what);
    oi_status status = oi__d_take_ident(lx, expected, &a.name);
    if (status == OI_OK)
        status = oi__d_expect(lx, "=", equals);
    if (status == OI_OK)
        status = oi__d_parse_setting_value(lx, &a);
    if (!arrput(*list, a)) { /* kept even when partial, so it is freed */
        oi__attr_free(&a);
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
    }
    if (status != OI_OK)
        return status;
    for (ptrdiff_t i = 0; i + 1 < arrlen(*list); i++)
        if (strcmp((*list)[i].name, a.name) == 0)
            return oi__fail_at(OI_ERROR_FORMAT, lx->src, "duplicate %s: %s", what, a.name);
    return OI_OK;
}

static oi_status oi__d_parse_setting(oi__d_lexer *lx, oi__node *n) {
    oi_status status = oi__d_parse_named_value(lx, &n->attrs, "setting");
    if (status != OI_OK)
        return status;
    const oi__attr *a = &n->attrs[arrlen(n->attrs) - 1];
    if (strcmp(a->name, "to") == 0 && a->kind != OI__ATTR_DTYPE)
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "to must be a dtype identifier");
    return OI_OK;
}

/* hints ::= IDENT '=' value (',' IDENT '=' value)*; names and types are
 * checked with the whole graph (oi__graph_check_extras), JSON alike. */
static oi_status oi__d_parse_hints(oi__d_lexer *lx, oi__node *n) {
    if (lx->tok.kind == OI__D_TOK_END)
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "OI_WITH needs at least one hint (fuse=false, placement=\"cpu\", ...)");
    do {
        oi_status status = oi__d_parse_named_value(lx, &n->hints, "hint");
        if (status != OI_OK)
            return status;
    } while (oi__d_accept(lx, ","));
    return oi__d_expect_end(lx);
}

static bool oi__d_next_is_setting(const oi__d_lexer *lx) {
    if (lx->tok.kind != OI__D_TOK_IDENT)
        return false;
    const char *after = lx->text + lx->pos;
    while (*after == ' ' || *after == '\t' || *after == '\n' || *after == '\r')
        after++;
    return *after == '=';
}

/* input ::= varref | ['-'] INT | ['-'] FLOAT: a number is a scalar literal,
 * kept as its text; validation makes it a constant of the op's dtype. */
static oi_status oi__d_parse_input(oi__d_lexer *lx, oi__varref *r) {
    bool negative = oi__d_tok_is(lx, "-");
    if (negative)
        oi__d_lex_next(lx);
    if (lx->tok.kind != OI__D_TOK_INT && lx->tok.kind != OI__D_TOK_FLOAT) {
        if (negative)
            return oi__d_lex_fail(lx, "expected a number after '-'");
        return oi__d_parse_varref(lx, r);
    }
    r->literal = true;
    r->name = oi__sprintf("%s%.*s", negative ? "-" : "", (int)lx->tok.len, lx->tok.start);
    if (!r->name)
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
    oi__d_lex_next(lx);
    return OI_OK;
}

/* args ::= input (',' input)* (',' IDENT '=' value)* */
static oi_status oi__d_parse_op_args(oi__d_lexer *lx, oi__node *n) {
    while (lx->tok.kind != OI__D_TOK_END) {
        oi_status status;
        if (oi__d_next_is_setting(lx)) {
            status = oi__d_parse_setting(lx, n);
        } else {
            if (arrlen(n->attrs) > 0)
                return oi__fail_at(OI_ERROR_FORMAT, lx->src, "positional args must come before settings");
            oi__varref r;
            memset(&r, 0, sizeof r);
            status = oi__d_parse_input(lx, &r);
            if (!arrput(n->inputs, r)) {
                oi__free(r.name);
                for (ptrdiff_t i = 0; i < arrlen(r.indices); i++)
                    oi__free(r.indices[i]);
                arrfree(r.indices);
                return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, lx->src, "out of memory");
            }
        }
        if (status != OI_OK)
            return status;
        if (!oi__d_accept(lx, ",") && lx->tok.kind != OI__D_TOK_END)
            return oi__d_lex_fail(lx, "expected ',' between op arguments");
    }
    return OI_OK;
}

/* ================================================================== */
/* Node statements                                                     */
/* ================================================================== */

static oi_status oi__d_parse_names(oi__d_lexer *lx, const char *what, char ***out) {
    if (lx->tok.kind == OI__D_TOK_END)
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "%s needs at least one variable", what);
    oi_status status = oi__d_parse_index_list(lx, out);
    return status != OI_OK ? status : oi__d_expect_end(lx);
}

/* A dotted name for dep: "matmul", "cache.write". */
static oi_status oi__d_parse_dotted(oi__d_lexer *lx, char **out) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    do {
        if (lx->tok.kind != OI__D_TOK_IDENT) {
            oi__buf_free(&b);
            return oi__d_lex_fail(lx, "dep expects after(name), before(name)");
        }
        if (b.len)
            oi__buf_puts(&b, ".");
        oi__buf_append(&b, lx->tok.start, lx->tok.len);
        oi__d_lex_next(lx);
    } while (oi__d_accept(lx, "."));
    *out = oi__buf_take(&b);
    return *out ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

static oi_status oi__d_parse_dep_part(oi__d_lexer *lx, const char *word, char **out) {
    if (!oi__d_tok_is_word(lx, word))
        return oi__d_lex_fail(lx, "dep expects after(name), before(name)");
    oi__d_lex_next(lx);
    oi_status status = oi__d_expect(lx, "(", "dep expects after(name), before(name)");
    if (status == OI_OK)
        status = oi__d_parse_dotted(lx, out);
    return status != OI_OK ? status : oi__d_expect(lx, ")", "dep expects after(name), before(name)");
}

static oi_status oi__d_parse_dep(oi__d_lexer *lx, oi__node *n) {
    oi_status status = oi__d_parse_dep_part(lx, "after", &n->after);
    if (status != OI_OK)
        return status;
    oi__d_accept(lx, ",");
    if ((status = oi__d_parse_dep_part(lx, "before", &n->before)) != OI_OK)
        return status;
    return oi__d_expect_end(lx);
}

static oi_status oi__d_parse_branch(oi__d_lexer *lx, oi__node *n) {
    char **names = NULL;
    oi_status status = lx->tok.kind == OI__D_TOK_END ? OI_OK : oi__d_parse_index_list(lx, &names);
    if (status == OI_OK)
        status = oi__d_expect_end(lx);
    if (status == OI_OK && arrlen(names) == 2)
        status = oi__fail_at(OI_ERROR_FORMAT, lx->src, "branch expects condition and two target blocks");
    else if (status == OI_OK && arrlen(names) != 1 && arrlen(names) != 3)
        status = oi__fail_at(OI_ERROR_FORMAT, lx->src, "branch expects a target block, or a condition and two target blocks");
    if (status == OI_OK && arrlen(names) == 1) {
        n->then_block = names[0];
        names[0] = NULL;
    } else if (status == OI_OK) {
        n->cond = names[0];
        n->then_block = names[1];
        n->else_block = names[2];
        names[0] = names[1] = names[2] = NULL;
    }
    for (ptrdiff_t i = 0; i < arrlen(names); i++)
        oi__free(names[i]);
    arrfree(names);
    return status;
}

static oi_status oi__d_parse_counter(oi__d_lexer *lx, oi__node *n) {
    oi_status status = oi__d_take_ident(lx, "expected a persistent counter name", &n->access.base);
    if (status != OI_OK)
        return status;
    n->amount = 1;
    if (oi__d_accept(lx, ",")) {
        if (oi__d_tok_is(lx, "-") || lx->tok.kind != OI__D_TOK_INT)
            return oi__d_lex_fail(lx, "the amount must be a non-negative integer");
        if ((status = oi__d_tok_int(lx, false, &n->amount)) != OI_OK)
            return status;
    }
    return oi__d_expect_end(lx);
}

/* "l in 0..num_layers" */
static oi_status oi__d_parse_loop_range(oi__d_lexer *lx, oi__node *n) {
    oi_status status = oi__d_take_ident(lx, "expected a loop index name", &n->loop_index);
    if (status != OI_OK)
        return status;
    if (!oi__d_tok_is_word(lx, "in"))
        return oi__d_lex_fail(lx, "expected 'in'");
    oi__d_lex_next(lx);
    if ((status = oi__d_parse_expr(lx, &n->loop_start)) != OI_OK)
        return status;
    if ((status = oi__d_expect(lx, "..", "expected a range start..end")) != OI_OK)
        return status;
    if ((status = oi__d_parse_expr(lx, &n->loop_end)) != OI_OK)
        return status;
    if (n->loop_start.lit < 0 || n->loop_end.lit < 0)
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "loop bounds must not be negative");
    return oi__d_expect_end(lx);
}

static oi_status oi__d_parse_two(oi__d_lexer *lx, oi__varref *first, oi__cache_access *access, oi__varref *second, bool access_first) {
    oi_status status = access_first ? oi__d_parse_access(lx, access) : oi__d_parse_varref(lx, first);
    if (status == OI_OK)
        status = oi__d_expect(lx, ",", "expected ',' between source and destination");
    if (status == OI_OK)
        status = access_first || !access ? oi__d_parse_varref(lx, second) : oi__d_parse_access(lx, access);
    return status != OI_OK ? status : oi__d_expect_end(lx);
}

static oi_status oi__d_expect_no_text(oi__d_lexer *lx, const char *what) {
    if (lx->tok.kind != OI__D_TOK_END)
        return oi__fail_at(OI_ERROR_FORMAT, lx->src, "%s takes no arguments", what);
    return OI_OK;
}

/* Parses the text of a node statement (not OP/TO/LOOP) into n, whose kind is set. */
static oi_status oi__d_parse_node_text(oi__d_lexer *lx, oi_dsl_kind kind, oi__node *n) {
    switch (kind) {
    case OI_DSL_ASSIGN: {
        oi_status status = oi__d_take_ident(lx, "expected a variable name", &n->name);
        if (status == OI_OK && lx->tok.kind == OI__D_TOK_END) { /* OI_ASSIGN(h): typed by its first writer */
            n->typed_by_op = true;
            return OI_OK;
        }
        if (status == OI_OK)
            status = oi__d_expect(lx, ",", "expected ',' and a dtype after the name");
        if (status == OI_OK)
            status = oi__d_parse_type(lx, &n->dtype, &n->dims);
        return status != OI_OK ? status : oi__d_expect_end(lx);
    }
    case OI_DSL_CACHE_READ: return oi__d_parse_two(lx, NULL, &n->access, &n->var, true);
    case OI_DSL_CACHE_WRITE: return oi__d_parse_two(lx, &n->var, &n->access, NULL, false);
    case OI_DSL_CACHE_INCREMENT: return oi__d_parse_counter(lx, n);
    case OI_DSL_CACHE_DECREMENT: return oi__d_parse_counter(lx, n);
    case OI_DSL_CACHE_RESET: {
        oi_status status = oi__d_parse_access(lx, &n->access);
        return status != OI_OK ? status : oi__d_expect_end(lx);
    }
    case OI_DSL_BARRIER: return oi__d_expect_no_text(lx, "OI_BARRIER");
    case OI_DSL_RETURN: return oi__d_expect_no_text(lx, "OI_RETURN");
    case OI_DSL_DEP: return oi__d_parse_dep(lx, n);
    case OI_DSL_TRANSFER: return oi__d_parse_two(lx, &n->src_var, NULL, &n->dst_var, false);
    case OI_DSL_BRANCH: return oi__d_parse_branch(lx, n);
    case OI_DSL_YIELD: return oi__d_parse_names(lx, "yield", &n->vars);
    case OI_DSL_AWAIT: return oi__d_parse_names(lx, "await", &n->vars);
    default: return oi__fail_at(OI_ERROR_FORMAT, lx->src, "not a node statement");
    }
}

/* ================================================================== */
/* The statement stream: sections, blocks, loops, OP + TO               */
/* ================================================================== */

typedef struct oi__d_dsl {
    oi_graph *g;
    const char *file;
    int section;          /* an oi__mem_kind, or -1 outside sections */
    bool in_block;
    oi__block block;      /* the block being built                     */
    oi__node *loops;      /* stb array: open loops, innermost last     */
    bool has_op;          /* an OI_OP waits for its OI_TO              */
    oi__node op;
    char **scopes;        /* stb array: open OI_SCOPE names, innermost last */
    ptrdiff_t *scope_loops; /* per open scope: the loops open when it began */
} oi__d_dsl;

static const char *oi__d_stmt_macro(oi_dsl_kind kind) {
    switch (kind) {
    case OI_DSL_END: return "OI_GRAPH";
    case OI_DSL_SECTION_DYNAMIC: return "OI_DYNAMIC";
    case OI_DSL_SECTION_VOLATILE: return "OI_VOLATILE";
    case OI_DSL_SECTION_CONSTANT: return "OI_CONSTANT";
    case OI_DSL_SECTION_PERSISTENT: return "OI_PERSISTENT";
    case OI_DSL_SECTION_END: return "end of section";
    case OI_DSL_VAR: return "OI_VAR";
    case OI_DSL_BLOCK: case OI_DSL_BLOCK_END: return "OI_BLOCK";
    case OI_DSL_TO: return "OI_TO";
    case OI_DSL_LOOP_END: return "OI_LOOP";
#define OI__D_NODE_MACRO(kind, event, dsl, json, trace, keys) case OI_DSL_##dsl: return "OI_" #dsl;
    OI__NODE_LIST(OI__D_NODE_MACRO) /* OI_ASSIGN, OI_OP, OI_CACHE_READ, ... */
#undef OI__D_NODE_MACRO
    case OI_DSL_STRICT: return "OI_STRICT";
    case OI_DSL_SCOPE: case OI_DSL_SCOPE_END: return "OI_SCOPE";
    case OI_DSL_WITH: return "OI_WITH";
    }
    return "statement";
}

/* The statement as the user wrote it: "OI_OP(add, x, a)",
 * "OI_LOOP(layers, l, 0..N)", "OI_VAR(x, f32[B])". */
static char *oi__d_stmt_text(const char *graph_name, const oi_dsl_stmt *s) {
    const char *head = s->head ? s->head : "", *text = s->text ? s->text : "";
    const char *macro = oi__d_stmt_macro(s->kind);
    if (s->kind == OI_DSL_END)
        return oi__sprintf("OI_GRAPH(%s)", graph_name);
    if (s->kind == OI_DSL_LOOP) {
        const char *in = strstr(text, " in ");
        if (in)
            return oi__sprintf("%s(%s, %.*s, %s)", macro, head, (int)(in - text), text, in + 4);
    }
    if (s->kind == OI_DSL_SECTION_END)
        return oi__strdup(macro);
    if (s->kind >= OI_DSL_SECTION_DYNAMIC && s->kind <= OI_DSL_SECTION_PERSISTENT)
        return oi__sprintf("%s(...)", macro);
    return oi__sprintf("%s(%s%s%s)", macro, head, *head && *text ? ", " : "", text);
}

/* The user's line of a statement. For a macro that wraps others (OI_BLOCK,
 * OI_LOOP, the sections) GCC's __LINE__ is the line the macro starts on but
 * Clang's is the line of its closing parenthesis; when the first wrapped
 * statement comes before that, the opener is taken to be the line above it,
 * so both compilers report the same place. */
static int oi__d_stmt_line(const oi_dsl_stmt *s) {
    bool opens = s->kind == OI_DSL_BLOCK || s->kind == OI_DSL_LOOP || s->kind == OI_DSL_SCOPE ||
                 (s->kind >= OI_DSL_SECTION_DYNAMIC && s->kind <= OI_DSL_SECTION_PERSISTENT);
    if (opens && s[1].kind != OI_DSL_END && s[1].line < s->line)
        return s[1].line - 1;
    return s->line;
}

/* "encoder/layer0": the open scopes, outermost first; NULL outside scopes
 * (and when out of memory, which *failed says). */
static char *oi__d_scope_path(const oi__d_dsl *d, bool *failed) {
    if (arrlen(d->scopes) == 0)
        return NULL;
    oi__buf b;
    memset(&b, 0, sizeof b);
    for (ptrdiff_t i = 0; i < arrlen(d->scopes); i++)
        oi__buf_printf(&b, "%s%s", i ? "/" : "", d->scopes[i]);
    char *path = oi__buf_take(&b);
    *failed = !path;
    return path;
}

static oi_status oi__d_make_src(const oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    bool failed = false;
    src->file = oi__strdup(d->file);
    src->line = oi__d_stmt_line(s);
    src->text = oi__d_stmt_text(d->g->name, s);
    src->scope = oi__d_scope_path(d, &failed);
    if (!src->file || !src->text || failed) {
        oi__src_free(src);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static bool oi__d_is_identifier(const char *s) {
    if (!s || !oi__d_is_ident_start(*s))
        return false;
    for (s++; *s; s++)
        if (!oi__d_is_ident_char(*s))
            return false;
    return true;
}

/* Where a new node goes: the innermost open loop, else the block. */
static oi__node **oi__d_dsl_target(oi__d_dsl *d) {
    return arrlen(d->loops) ? &d->loops[arrlen(d->loops) - 1].body : &d->block.nodes;
}

/* Moves *n into the graph (or frees it if that fails). */
static oi_status oi__d_dsl_append(oi__d_dsl *d, oi__node *n) {
    oi__node **target = oi__d_dsl_target(d);
    if (!arrput(*target, *n)) {
        oi__node_free(n);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    memset(n, 0, sizeof *n);
    return OI_OK;
}

static void oi__d_dsl_number(oi__d_dsl *d, oi__node *n) {
    n->index = d->g->next_index++;
    oi__graph_node_uuid(d->g->name, n->index, n->uuid);
}

static oi_status oi__d_dsl_var(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    if (d->section < 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "OI_VAR outside a memory section (wrap it in OI_DYNAMIC, OI_VOLATILE, OI_CONSTANT or OI_PERSISTENT)");
    oi__var v;
    memset(&v, 0, sizeof v);
    v.kind = (oi__mem_kind)d->section;
    v.src = *src;
    memset(src, 0, sizeof *src);
    oi__d_lexer lx;
    oi__d_lex_init(&lx, s->text, &v.src);
    oi_status status = oi__d_parse_var(&lx, &v);
    const oi__var *first = status == OI_OK ? oi__graph_find_var(d->g, v.name) : NULL;
    if (first)
        status = oi__fail_at(OI_ERROR_FORMAT, &v.src, "duplicate declaration of %s (first at line %d)", v.name, first->src.line);
    if (status == OI_OK)
        status = oi__var_check(&v);
    if (status != OI_OK) {
        oi__var_free(&v);
        return status;
    }
    if (!arrput(d->g->vars, v)) {
        oi__var_free(&v);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

/* The kind of node a statement makes (node_list.h's dsl column); false for
 * the statements that make none (sections, OI_VAR, OI_TO, ends, ...). */
static bool oi__d_node_kind(oi_dsl_kind kind, oi__node_kind *out) {
    switch (kind) {
#define OI__D_NODE_KIND(k, event, dsl, json, trace, keys) case OI_DSL_##dsl: *out = OI__NODE_##k; return true;
    OI__NODE_LIST(OI__D_NODE_KIND)
#undef OI__D_NODE_KIND
    default: return false;
    }
}

/* A node made by one statement (OP and LOOP take several). */
static bool oi__d_is_node_kind(oi_dsl_kind kind) {
    oi__node_kind k;
    return oi__d_node_kind(kind, &k) && kind != OI_DSL_OP && kind != OI_DSL_LOOP;
}

static oi_status oi__d_dsl_node(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    oi__node n;
    memset(&n, 0, sizeof n);
    n.src = *src;
    memset(src, 0, sizeof *src);
    oi__d_lexer lx;
    oi__d_lex_init(&lx, s->text, &n.src);
    oi__d_node_kind(s->kind, &n.kind);
    oi_status status = oi__d_parse_node_text(&lx, s->kind, &n);
    if (status != OI_OK) {
        oi__node_free(&n);
        return status;
    }
    oi__d_dsl_number(d, &n);
    return oi__d_dsl_append(d, &n);
}

static oi_status oi__d_dsl_op(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    oi__node *n = &d->op;
    memset(n, 0, sizeof *n);
    n->kind = OI__NODE_OP;
    n->src = *src;
    memset(src, 0, sizeof *src);
    d->has_op = true; /* from here on d->op is freed on error */
    if (s->op < 0 || s->op >= (int)OI_OP_COUNT)
        return oi__fail_at(OI_ERROR_FORMAT, &n->src, "unknown op %s", s->head ? s->head : "");
    n->op = (oi_op)s->op;
    oi__d_lexer lx;
    oi__d_lex_init(&lx, s->text, &n->src);
    oi_status status = oi__d_parse_op_args(&lx, n);
    if (status == OI_OK)
        oi__d_dsl_number(d, n);
    return status;
}

/* OI_WITH and OI_TO continue the waiting OI_OP (`missing`: the error
 * without one): the clause's text joins the op's, so that errors quote
 * "OI_OP(...) OI_WITH(...) OI_TO(out)", and lx is set to read the clause. */
static oi_status oi__d_dsl_clause(oi__d_dsl *d, const oi_dsl_stmt *s, const oi__src *src, const char *missing,
                                  oi__d_lexer *lx) {
    if (!d->has_op)
        return oi__fail_at(OI_ERROR_FORMAT, src, "%s", missing);
    oi__node *n = &d->op;
    char *text = oi__sprintf("%s %s", n->src.text, src->text);
    if (!text)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__free(n->src.text);
    n->src.text = text;
    oi__d_lex_init(lx, s->text, &n->src);
    return OI_OK;
}

/* OI_TO(out) completes the waiting OI_OP. */
static oi_status oi__d_dsl_to(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    oi__d_lexer lx;
    oi_status status = oi__d_dsl_clause(d, s, src, "OI_TO without OI_OP before it", &lx);
    if (status != OI_OK)
        return status;
    oi__node *n = &d->op;
    status = oi__d_take_ident(&lx, "OI_TO expects the output variable", &n->output);
    if (status == OI_OK && oi__d_tok_is(&lx, "["))
        status = oi__fail_at(OI_ERROR_FORMAT, &n->src, "op output must be a plain variable name (no indices)");
    if (status == OI_OK)
        status = oi__d_expect_end(&lx);
    if (status != OI_OK)
        return status;
    d->has_op = false;
    return oi__d_dsl_append(d, n);
}

/* OI_WITH(...) after OI_OP: the hints join the waiting op (OI_TO follows). */
static oi_status oi__d_dsl_with(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    if (d->has_op && arrlen(d->op.hints))
        return oi__fail_at(OI_ERROR_FORMAT, src, "one OI_WITH per op (put all its hints in one)");
    oi__d_lexer lx;
    oi_status status = oi__d_dsl_clause(
        d, s, src, "OI_WITH without OI_OP before it (write OI_OP(...) OI_WITH(...) OI_TO(...))", &lx);
    return status == OI_OK ? oi__d_parse_hints(&lx, &d->op) : status;
}

static oi_status oi__d_dsl_scope(oi__d_dsl *d, const oi_dsl_stmt *s, const oi__src *src) {
    if (!d->in_block)
        return oi__fail_at(OI_ERROR_FORMAT, src, "OI_SCOPE outside a block (scopes group statements inside OI_BLOCK)");
    if (!oi__d_is_identifier(s->head))
        return oi__fail_at(OI_ERROR_FORMAT, src, "a scope name must be an identifier");
    char *name = oi__strdup(s->head);
    if (!name || !arrput(d->scopes, name)) {
        oi__free(name);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!arrput(d->scope_loops, arrlen(d->loops))) {
        oi__free(arrpop(d->scopes));
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static oi_status oi__d_dsl_scope_end(oi__d_dsl *d, const oi_dsl_stmt *s, const oi__src *src) {
    ptrdiff_t open = arrlen(d->scopes);
    if (open == 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "scope end without a scope");
    if (strcmp(s->head ? s->head : "", d->scopes[open - 1]) != 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "scope end does not match scope %s", d->scopes[open - 1]);
    if (arrlen(d->loops) != d->scope_loops[open - 1])
        return oi__fail_at(OI_ERROR_FORMAT, &d->loops[arrlen(d->loops) - 1].src, "unterminated loop %s in scope %s",
                           d->loops[arrlen(d->loops) - 1].loop_name, d->scopes[open - 1]);
    oi__free(arrpop(d->scopes));
    (void)arrpop(d->scope_loops);
    return OI_OK;
}

static oi_status oi__d_dsl_loop(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    oi__node n;
    memset(&n, 0, sizeof n);
    n.kind = OI__NODE_LOOP;
    n.src = *src;
    memset(src, 0, sizeof *src);
    oi_status status = OI_OK;
    if (arrlen(d->loops) >= OI__MAX_LOOP_DEPTH)
        status = oi__fail_at(OI_ERROR_FORMAT, &n.src, "loops nest deeper than %d", OI__MAX_LOOP_DEPTH);
    else if (!oi__d_is_identifier(s->head))
        status = oi__fail_at(OI_ERROR_FORMAT, &n.src, "a loop name must be an identifier");
    if (status == OI_OK && !(n.loop_name = oi__strdup(s->head)))
        status = OI_ERROR_OUT_OF_MEMORY;
    if (status == OI_OK) {
        oi__d_lexer lx;
        oi__d_lex_init(&lx, s->text, &n.src);
        status = oi__d_parse_loop_range(&lx, &n);
    }
    if (status != OI_OK) {
        oi__node_free(&n);
        return status;
    }
    oi__d_dsl_number(d, &n);
    if (!arrput(d->loops, n)) {
        oi__node_free(&n);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static oi_status oi__d_dsl_loop_end(oi__d_dsl *d, const oi_dsl_stmt *s, const oi__src *src) {
    if (arrlen(d->loops) == 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "loop end without a loop");
    if (strcmp(s->head ? s->head : "", d->loops[arrlen(d->loops) - 1].loop_name) != 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "loop end does not match loop %s", d->loops[arrlen(d->loops) - 1].loop_name);
    if (arrlen(d->scopes) && d->scope_loops[arrlen(d->scopes) - 1] == arrlen(d->loops))
        return oi__fail_at(OI_ERROR_FORMAT, src, "loop end inside scope %s, which began in the loop", d->scopes[arrlen(d->scopes) - 1]);
    oi__node n = arrpop(d->loops);
    return oi__d_dsl_append(d, &n);
}

static oi_status oi__d_dsl_block(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    if (d->section >= 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "OI_BLOCK inside a memory section");
    if (d->in_block)
        return oi__fail_at(OI_ERROR_FORMAT, src, "blocks do not nest (block %s is still open; use OI_LOOP for a nested region)",
                           d->block.name);
    if (!oi__d_is_identifier(s->head))
        return oi__fail_at(OI_ERROR_FORMAT, src, "a block name must be an identifier");
    const oi__block *first = oi__graph_find_block(d->g, s->head);
    if (first)
        return oi__fail_at(OI_ERROR_FORMAT, src, "duplicate block %s (first at line %d)", s->head, first->src.line);
    memset(&d->block, 0, sizeof d->block);
    d->in_block = true;
    d->block.src = *src;
    memset(src, 0, sizeof *src);
    d->block.name = oi__strdup(s->head);
    return d->block.name ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

static oi_status oi__d_dsl_block_end(oi__d_dsl *d, const oi_dsl_stmt *s, const oi__src *src) {
    if (!d->in_block)
        return oi__fail_at(OI_ERROR_FORMAT, src, "block end without a block");
    if (arrlen(d->loops))
        return oi__fail_at(OI_ERROR_FORMAT, &d->loops[arrlen(d->loops) - 1].src, "unterminated loop %s",
                           d->loops[arrlen(d->loops) - 1].loop_name);
    if (arrlen(d->scopes))
        return oi__fail_at(OI_ERROR_FORMAT, src, "unterminated scope %s", d->scopes[arrlen(d->scopes) - 1]);
    if (strcmp(s->head ? s->head : "", d->block.name) != 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "block end does not match block %s", d->block.name);
    oi_status added = oi__graph_add_block(d->g, &d->block);
    if (added != OI_OK)
        return added; /* the block is freed with d */
    memset(&d->block, 0, sizeof d->block);
    d->in_block = false;
    return OI_OK;
}

static oi_status oi__d_dsl_section(oi__d_dsl *d, const oi_dsl_stmt *s, const oi__src *src) {
    if (d->in_block)
        return oi__fail_at(OI_ERROR_FORMAT, src, "memory sections cannot appear inside a block");
    if (d->section >= 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "memory sections do not nest");
    d->section = (int)s->kind - (int)OI_DSL_SECTION_DYNAMIC + (int)OI__MEM_DYNAMIC;
    return OI_OK;
}

static oi_status oi__d_dsl_end(oi__d_dsl *d, const oi__src *src) {
    if (d->section >= 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "unterminated memory section");
    if (arrlen(d->loops))
        return oi__fail_at(OI_ERROR_FORMAT, &d->loops[arrlen(d->loops) - 1].src, "unterminated loop %s",
                           d->loops[arrlen(d->loops) - 1].loop_name);
    if (d->in_block)
        return oi__fail_at(OI_ERROR_FORMAT, &d->block.src, "unterminated block %s", d->block.name);
    if (arrlen(d->g->blocks) == 0)
        return oi__fail_at(OI_ERROR_FORMAT, src, "graph has no blocks (add OI_BLOCK(entry, ...))");
    return OI_OK;
}

static oi_status oi__d_dsl_statement(oi__d_dsl *d, const oi_dsl_stmt *s, oi__src *src) {
    oi_dsl_kind kind = s->kind;
    if (d->has_op && kind != OI_DSL_TO && kind != OI_DSL_WITH)
        return oi__fail_at(OI_ERROR_FORMAT, &d->op.src, "missing OI_TO(output) after OI_OP");
    oi__node_kind node_kind;
    bool in_body = oi__d_node_kind(kind, &node_kind);
    if (in_body && !d->in_block)
        return oi__fail_at(OI_ERROR_FORMAT, src, "statement outside a block (put it inside OI_BLOCK(name, ...))");
    switch (kind) {
    case OI_DSL_END: return oi__d_dsl_end(d, src);
    case OI_DSL_SECTION_DYNAMIC:
    case OI_DSL_SECTION_VOLATILE:
    case OI_DSL_SECTION_CONSTANT:
    case OI_DSL_SECTION_PERSISTENT: return oi__d_dsl_section(d, s, src);
    case OI_DSL_SECTION_END:
        if (d->section < 0)
            return oi__fail_at(OI_ERROR_FORMAT, src, "section end without a section");
        d->section = -1;
        return OI_OK;
    case OI_DSL_VAR: return oi__d_dsl_var(d, s, src);
    case OI_DSL_BLOCK: return oi__d_dsl_block(d, s, src);
    case OI_DSL_BLOCK_END: return oi__d_dsl_block_end(d, s, src);
    case OI_DSL_OP: return oi__d_dsl_op(d, s, src);
    case OI_DSL_TO: return oi__d_dsl_to(d, s, src);
    case OI_DSL_LOOP: return oi__d_dsl_loop(d, s, src);
    case OI_DSL_LOOP_END: return oi__d_dsl_loop_end(d, s, src);
    case OI_DSL_WITH: return oi__d_dsl_with(d, s, src);
    case OI_DSL_SCOPE: return oi__d_dsl_scope(d, s, src);
    case OI_DSL_SCOPE_END: return oi__d_dsl_scope_end(d, s, src);
    case OI_DSL_STRICT:
        if (d->section >= 0 || d->in_block)
            return oi__fail_at(OI_ERROR_FORMAT, src, "OI_STRICT() belongs outside memory sections and blocks");
        d->g->strict = true;
        return OI_OK;
    default:
        if (oi__d_is_node_kind(kind))
            return oi__d_dsl_node(d, s, src);
        return oi__fail_at(OI_ERROR_FORMAT, src, "unknown statement kind %d", (int)kind);
    }
}

static void oi__d_dsl_cleanup(oi__d_dsl *d) {
    for (ptrdiff_t i = 0; i < arrlen(d->loops); i++)
        oi__node_free(&d->loops[i]);
    arrfree(d->loops);
    if (d->in_block)
        oi__block_free(&d->block);
    if (d->has_op)
        oi__node_free(&d->op);
    for (ptrdiff_t i = 0; i < arrlen(d->scopes); i++)
        oi__free(d->scopes[i]);
    arrfree(d->scopes);
    arrfree(d->scope_loops);
}

/* Parses the statements of OI_GRAPH into g; stops at the first error. */
static oi_status oi__dsl_parse(oi_graph *g, const char *file, const oi_dsl_stmt *stmts) {
    oi__d_dsl d;
    memset(&d, 0, sizeof d);
    d.g = g;
    d.file = file;
    d.section = -1;
    oi_status status = OI_OK;
    for (const oi_dsl_stmt *s = stmts;; s++) {
        oi__src src;
        memset(&src, 0, sizeof src);
        status = oi__d_make_src(&d, s, &src);
        if (status == OI_OK)
            status = oi__d_dsl_statement(&d, s, &src);
        oi__src_free(&src); /* whatever the statement did not keep */
        if (status != OI_OK || s->kind == OI_DSL_END)
            break;
    }
    oi__d_dsl_cleanup(&d);
    return status;
}

/* ================================================================== */
/* The DSL's entry points: statements -> a checked graph (graph.c)     */
/* ================================================================== */

oi_graph *oi_graph_build(const char *name, const char *file, const oi_dsl_stmt *stmts) {
    if (!name || !stmts) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_build: name and stmts must not be NULL");
        return NULL;
    }
    oi_graph *g = oi__graph_new(name);
    if (!g)
        return NULL;
    if (oi__dsl_parse(g, file ? file : "?", stmts) != OI_OK || oi__graph_check(g) != OI_OK ||
        oi__graph_check_extras(g) != OI_OK) {
        oi__graph_note_failure(oi_last_error());
        oi_graph_free(g);
        return NULL;
    }
    return g;
}

void oi_graph_register(const char *name, const oi_graph **slot, const char *file, const oi_dsl_stmt *stmts) {
    oi__graph_register_built(name, slot, oi_graph_build(name, file, stmts));
}
