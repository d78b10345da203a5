/* expr.c - compound index expressions: a slice bound, a cache index or a
 * loop bound written as "step+1", "n-1" or "S*2".
 *
 * The graph keeps such a bound as its text in oi__expr.ident (spaces
 * removed), so the IR, the JSON and the DOT picture carry it unchanged; a
 * plain name or number keeps its old form. The text is parsed again where
 * it is used: names are checked at validation and looked up at run time
 * through a callback, so the executor, the validator and tools share one
 * grammar: sum ::= product (('+' | '-') product)*, product ::= atom ('*'
 * atom)*, atom ::= ['-'] INT | NAME ('-' only before a number, first). */
#include "internal.h"

bool oi__expr_is_compound(const oi__expr *e) {
    if (!e->ident)
        return false;
    for (const char *s = e->ident; *s; s++)
        if (*s == '+' || *s == '-' || *s == '*')
            return true;
    return false;
}

static bool oi__x_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool oi__x_digit(char c) { return c >= '0' && c <= '9'; }

bool oi__expr_token(const char *text, size_t *pos, oi__expr_tok *tok) {
    const char *s = text + *pos;
    while (*s == ' ')
        s++;
    memset(tok, 0, sizeof *tok);
    tok->start = s;
    if (!*s)
        return false;
    size_t n = 1;
    if (oi__x_ident_start(*s)) {
        while (oi__x_ident_start(s[n]) || oi__x_digit(s[n]))
            n++;
        tok->kind = OI__EXPR_NAME;
    } else if (oi__x_digit(*s)) {
        while (oi__x_digit(s[n]))
            n++;
        tok->kind = OI__EXPR_NUMBER;
    } else {
        tok->kind = OI__EXPR_OP; /* '+', '-', '*' or a bad character: the parser says which */
    }
    tok->len = n;
    *pos = (size_t)(s + n - text);
    return true;
}

typedef struct oi__x_parser {
    const char *text;
    size_t pos;
    oi__expr_tok tok;
    bool more;
    oi__expr_lookup lookup; /* NULL: check the syntax only */
    void *ctx;
    const oi__src *src;
} oi__x_parser;

static void oi__x_next(oi__x_parser *p) { p->more = oi__expr_token(p->text, &p->pos, &p->tok); }

static bool oi__x_is(const oi__x_parser *p, char op) {
    return p->more && p->tok.kind == OI__EXPR_OP && p->tok.start[0] == op;
}

static oi_status oi__x_fail(const oi__x_parser *p, const char *why) {
    return oi__fail_at(OI_ERROR_FORMAT, p->src, "index expression '%s': %s", p->text, why);
}

/* a op b without overflow (the result of a run-time bound must be exact) */
static bool oi__x_apply(char op, int64_t a, int64_t b, int64_t *out) {
    if (op == '*') {
        bool over = a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                          : (b > 0 ? a < INT64_MIN / b : a != 0 && b < INT64_MAX / a);
        if (over)
            return false;
        *out = a * b;
        return true;
    }
    if (op == '-') {
        if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
            return false;
        *out = a - b;
        return true;
    }
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return false;
    *out = a + b;
    return true;
}

static oi_status oi__x_atom(oi__x_parser *p, bool first, int64_t *out) {
    bool negative = first && oi__x_is(p, '-');
    if (negative)
        oi__x_next(p);
    if (!p->more)
        return oi__x_fail(p, "ends where a number or a name should be");
    if (p->tok.kind == OI__EXPR_NUMBER) {
        int64_t v = 0;
        for (size_t i = 0; i < p->tok.len; i++) {
            if (v > (INT64_MAX - 9) / 10)
                return oi__x_fail(p, "a number is too large");
            v = v * 10 + (p->tok.start[i] - '0');
        }
        *out = negative ? -v : v;
        oi__x_next(p);
        return OI_OK;
    }
    if (p->tok.kind != OI__EXPR_NAME)
        return oi__x_fail(p, "expected a number or a name (only +, - and * join them)");
    if (negative)
        return oi__x_fail(p, "'-' may only precede a number at the start (write 0-n)");
    char name[128];
    if (p->tok.len >= sizeof name)
        return oi__x_fail(p, "a name is too long");
    memcpy(name, p->tok.start, p->tok.len);
    name[p->tok.len] = '\0';
    *out = 0;
    oi_status st = p->lookup ? p->lookup(p->ctx, name, out) : OI_OK;
    oi__x_next(p);
    return st;
}

static oi_status oi__x_product(oi__x_parser *p, bool first, int64_t *out) {
    oi_status st = oi__x_atom(p, first, out);
    while (st == OI_OK && oi__x_is(p, '*')) {
        int64_t rhs;
        oi__x_next(p);
        if ((st = oi__x_atom(p, false, &rhs)) == OI_OK && !oi__x_apply('*', *out, rhs, out))
            return oi__x_fail(p, "the value overflows");
    }
    return st;
}

oi_status oi__expr_eval(const char *text, oi__expr_lookup lookup, void *ctx, const oi__src *src, int64_t *out) {
    oi__x_parser p;
    memset(&p, 0, sizeof p);
    p.text = text;
    p.lookup = lookup;
    p.ctx = ctx;
    p.src = src;
    oi__x_next(&p);
    oi_status st = oi__x_product(&p, true, out);
    while (st == OI_OK && (oi__x_is(&p, '+') || oi__x_is(&p, '-'))) {
        char op = p.tok.start[0];
        int64_t rhs;
        oi__x_next(&p);
        if ((st = oi__x_product(&p, false, &rhs)) == OI_OK && !oi__x_apply(op, *out, rhs, out))
            return oi__x_fail(&p, "the value overflows");
    }
    if (st == OI_OK && p.more)
        return oi__x_fail(&p, "expected +, - or * between terms");
    return st;
}
