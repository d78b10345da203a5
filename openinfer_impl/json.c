/* json.c - a strict RFC 8259 JSON reader (shared by the graph loader, the
 * conformance runner and the device-architecture reader) and the lossless
 * graph <-> JSON conversion (schema: docs/graph-json.md). */
#include "internal.h"

#include <math.h>

/* ================================================================== */
/* The reader                                                          */
/* ================================================================== */

/* Nesting deeper than this is refused: the reader and oi__json_free
 * recurse once per level, so the limit bounds the C stack. */
#define OI__JSON_MAX_DEPTH 256

typedef struct oi__json_reader {
    const char *text;
    size_t len, pos;
    int depth;
    bool failed;
} oi__json_reader;

/* Records "line L, column C: why" for the byte at `at` (columns count
 * bytes from 1). Only the first failure of a parse is kept. */
static void oi__json_error_at(oi__json_reader *r, size_t at, const char *why) {
    if (r->failed)
        return;
    r->failed = true;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < r->len; i++) {
        if (r->text[i] == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    oi__fail(OI_ERROR_FORMAT, "line %zu, column %zu: %s", line, column, why);
}

static void oi__json_error(oi__json_reader *r, const char *why) { oi__json_error_at(r, r->pos, why); }

static int oi__json_peek(const oi__json_reader *r) {
    return r->pos < r->len ? (unsigned char)r->text[r->pos] : -1;
}

static void oi__json_skip_space(oi__json_reader *r) {
    while (r->pos < r->len) {
        char c = r->text[r->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        r->pos++;
    }
}

static bool oi__json_literal(oi__json_reader *r, const char *word) {
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->text + r->pos, word, n) != 0) {
        oi__json_error(r, "invalid literal (expected true, false or null)");
        return false;
    }
    r->pos += n;
    return true;
}

static bool oi__json_is_digit(int c) { return c >= '0' && c <= '9'; }

static bool oi__json_number(oi__json_reader *r, oi__json *out) {
    size_t start = r->pos;
    if (oi__json_peek(r) == '-')
        r->pos++;
    if (oi__json_peek(r) == '0') {
        r->pos++;
        if (oi__json_is_digit(oi__json_peek(r))) {
            oi__json_error(r, "leading zeros are not allowed in numbers");
            return false;
        }
    } else if (oi__json_is_digit(oi__json_peek(r))) {
        while (oi__json_is_digit(oi__json_peek(r)))
            r->pos++;
    } else {
        oi__json_error(r, "invalid number (expected a digit)");
        return false;
    }
    if (oi__json_peek(r) == '.') {
        r->pos++;
        if (!oi__json_is_digit(oi__json_peek(r))) {
            oi__json_error(r, "invalid number (expected a digit after '.')");
            return false;
        }
        while (oi__json_is_digit(oi__json_peek(r)))
            r->pos++;
    }
    if (oi__json_peek(r) == 'e' || oi__json_peek(r) == 'E') {
        r->pos++;
        if (oi__json_peek(r) == '+' || oi__json_peek(r) == '-')
            r->pos++;
        if (!oi__json_is_digit(oi__json_peek(r))) {
            oi__json_error(r, "invalid number (expected a digit in the exponent)");
            return false;
        }
        while (oi__json_is_digit(oi__json_peek(r)))
            r->pos++;
    }
    out->type = OI__JSON_NUMBER;
    out->text = oi__strndup(r->text + start, r->pos - start);
    if (!out->text) {
        r->failed = true;
        return false;
    }
    /* The literal was checked above, so strtod sees only valid syntax. */
    out->number = strtod(out->text, NULL);
    return true;
}

static int oi__json_hex_digit(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits after "\u". */
static bool oi__json_hex4(oi__json_reader *r, unsigned *out) {
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        int d = oi__json_hex_digit(oi__json_peek(r));
        if (d < 0) {
            oi__json_error(r, "invalid \\u escape (expected 4 hex digits)");
            return false;
        }
        value = value * 16u + (unsigned)d;
        r->pos++;
    }
    *out = value;
    return true;
}

static void oi__json_put_utf8(oi__buf *b, unsigned cp) {
    char bytes[4];
    size_t n;
    if (cp < 0x80) {
        bytes[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        bytes[0] = (char)(0xC0 | (cp >> 6));
        bytes[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        bytes[0] = (char)(0xE0 | (cp >> 12));
        bytes[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        bytes[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        bytes[0] = (char)(0xF0 | (cp >> 18));
        bytes[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        bytes[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        bytes[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    oi__buf_append(b, bytes, n);
}

/* "\uXXXX", with a surrogate pair joined into one code point. The
 * reader stands just after the 'u'. */
static bool oi__json_unicode_escape(oi__json_reader *r, oi__buf *b) {
    size_t escape_start = r->pos - 2;
    unsigned cp;
    if (!oi__json_hex4(r, &cp))
        return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        oi__json_error_at(r, escape_start, "invalid \\u escape (lone low surrogate)");
        return false;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned low;
        if (r->len - r->pos < 2 || r->text[r->pos] != '\\' || r->text[r->pos + 1] != 'u') {
            oi__json_error_at(r, escape_start, "invalid \\u escape (high surrogate without a low surrogate)");
            return false;
        }
        r->pos += 2;
        if (!oi__json_hex4(r, &low))
            return false;
        if (low < 0xDC00 || low > 0xDFFF) {
            oi__json_error_at(r, escape_start, "invalid \\u escape (high surrogate without a low surrogate)");
            return false;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp == 0) {
        /* Our strings are NUL-terminated: an embedded NUL would truncate. */
        oi__json_error_at(r, escape_start, "\\u0000 is not supported in strings");
        return false;
    }
    oi__json_put_utf8(b, cp);
    return true;
}

/* Length of the valid UTF-8 sequence at p (0 if invalid): no overlongs,
 * no surrogates, nothing above U+10FFFF. */
static size_t oi__json_utf8_length(const unsigned char *p, size_t avail) {
    unsigned c = p[0];
    size_t n;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static bool oi__json_escape(oi__json_reader *r, oi__buf *b) {
    int c = oi__json_peek(r);
    r->pos++;
    switch (c) {
    case '"': oi__buf_puts(b, "\""); return true;
    case '\\': oi__buf_puts(b, "\\"); return true;
    case '/': oi__buf_puts(b, "/"); return true;
    case 'b': oi__buf_puts(b, "\b"); return true;
    case 'f': oi__buf_puts(b, "\f"); return true;
    case 'n': oi__buf_puts(b, "\n"); return true;
    case 'r': oi__buf_puts(b, "\r"); return true;
    case 't': oi__buf_puts(b, "\t"); return true;
    case 'u': return oi__json_unicode_escape(r, b);
    default:
        oi__json_error_at(r, r->pos - 2, "invalid escape in string");
        return false;
    }
}

/* Reads a string (the reader stands on the opening quote) into *out. */
static bool oi__json_string_text(oi__json_reader *r, char **out) {
    size_t start = r->pos;
    oi__buf b;
    memset(&b, 0, sizeof b);
    r->pos++;
    for (;;) {
        if (r->pos >= r->len) {
            oi__buf_free(&b);
            oi__json_error_at(r, start, "unterminated string");
            return false;
        }
        unsigned char c = (unsigned char)r->text[r->pos];
        if (c == '"') {
            r->pos++;
            break;
        }
        if (c == '\\') {
            r->pos++;
            if (!oi__json_escape(r, &b)) {
                oi__buf_free(&b);
                return false;
            }
            continue;
        }
        if (c < 0x20) {
            oi__buf_free(&b);
            oi__json_error(r, "control character in string (escape it)");
            return false;
        }
        size_t n = oi__json_utf8_length((const unsigned char *)r->text + r->pos, r->len - r->pos);
        if (n == 0) {
            oi__buf_free(&b);
            oi__json_error(r, "invalid UTF-8 in string");
            return false;
        }
        oi__buf_append(&b, r->text + r->pos, n);
        r->pos += n;
    }
    *out = oi__buf_take(&b);
    if (!*out) {
        r->failed = true;
        return false;
    }
    return true;
}

static bool oi__json_value(oi__json_reader *r, oi__json *out);

static bool oi__json_array(oi__json_reader *r, oi__json *out) {
    out->type = OI__JSON_ARRAY;
    r->pos++; /* '[' */
    oi__json_skip_space(r);
    if (oi__json_peek(r) == ']') {
        r->pos++;
        return true;
    }
    for (;;) {
        oi__json item;
        memset(&item, 0, sizeof item);
        bool ok = oi__json_value(r, &item);
        arrput(out->items, item); /* kept even when partial, so it is freed */
        if (!ok)
            return false;
        oi__json_skip_space(r);
        int c = oi__json_peek(r);
        if (c == ',') {
            r->pos++;
            oi__json_skip_space(r);
            if (oi__json_peek(r) == ']') {
                oi__json_error(r, "trailing comma in array");
                return false;
            }
            continue;
        }
        if (c == ']') {
            r->pos++;
            return true;
        }
        oi__json_error(r, c < 0 ? "unterminated array (expected ',' or ']')" : "expected ',' or ']' in array");
        return false;
    }
}

/* Duplicate keys are refused: they make a document ambiguous. */
static bool oi__json_has_key(const oi__json *object, const char *key) {
    for (ptrdiff_t i = 0; i < arrlen(object->keys); i++)
        if (strcmp(object->keys[i], key) == 0)
            return true;
    return false;
}

/* Large objects check duplicates through a hash set instead of a scan. */
typedef struct oi__json_key_set { char *key; int value; } oi__json_key_set;

static bool oi__json_object(oi__json_reader *r, oi__json *out) {
    oi__json_key_set *seen = NULL;
    bool ok = false;
    out->type = OI__JSON_OBJECT;
    r->pos++; /* '{' */
    oi__json_skip_space(r);
    if (oi__json_peek(r) == '}') {
        r->pos++;
        return true;
    }
    for (;;) {
        oi__json_skip_space(r);
        if (oi__json_peek(r) != '"') {
            oi__json_error(r, oi__json_peek(r) < 0 ? "unterminated object (expected a key)"
                                                   : "expected a string key in object");
            break;
        }
        size_t key_pos = r->pos;
        char *key = NULL;
        if (!oi__json_string_text(r, &key))
            break;
        bool duplicate;
        if (arrlen(out->keys) < 16) {
            duplicate = oi__json_has_key(out, key);
        } else {
            if (!seen) {
                sh_new_strdup(seen);
                for (ptrdiff_t i = 0; i < arrlen(out->keys); i++)
                    shput(seen, out->keys[i], 1);
            }
            duplicate = shgeti(seen, key) >= 0;
            shput(seen, key, 1);
        }
        if (duplicate) {
            oi__free(key);
            oi__json_error_at(r, key_pos, "duplicate key in object");
            break;
        }
        oi__json item;
        memset(&item, 0, sizeof item);
        arrput(out->keys, key);
        oi__json_skip_space(r);
        if (oi__json_peek(r) != ':') {
            arrput(out->items, item);
            oi__json_error(r, "expected ':' after object key");
            break;
        }
        r->pos++;
        bool value_ok = oi__json_value(r, &item);
        arrput(out->items, item);
        if (!value_ok)
            break;
        oi__json_skip_space(r);
        int c = oi__json_peek(r);
        if (c == ',') {
            r->pos++;
            oi__json_skip_space(r);
            if (oi__json_peek(r) == '}') {
                oi__json_error(r, "trailing comma in object");
                break;
            }
            continue;
        }
        if (c == '}') {
            r->pos++;
            ok = true;
            break;
        }
        oi__json_error(r, c < 0 ? "unterminated object (expected ',' or '}')" : "expected ',' or '}' in object");
        break;
    }
    if (seen)
        shfree(seen);
    return ok;
}

static bool oi__json_value(oi__json_reader *r, oi__json *out) {
    oi__json_skip_space(r);
    int c = oi__json_peek(r);
    switch (c) {
    case -1: oi__json_error(r, "unexpected end of input (expected a value)"); return false;
    case 'n': out->type = OI__JSON_NULL; return oi__json_literal(r, "null");
    case 't': out->type = OI__JSON_BOOL; out->boolean = true; return oi__json_literal(r, "true");
    case 'f': out->type = OI__JSON_BOOL; out->boolean = false; return oi__json_literal(r, "false");
    case '"': out->type = OI__JSON_STRING; return oi__json_string_text(r, &out->text);
    case '[':
    case '{': {
        if (r->depth >= OI__JSON_MAX_DEPTH) {
            oi__json_error(r, "nesting too deep (more than 256 levels)");
            return false;
        }
        r->depth++;
        bool ok = c == '[' ? oi__json_array(r, out) : oi__json_object(r, out);
        r->depth--;
        return ok;
    }
    default:
        if (c == '-' || oi__json_is_digit(c))
            return oi__json_number(r, out);
        oi__json_error(r, "unexpected character (expected a value)");
        return false;
    }
}

oi__json *oi__json_parse(const char *text, size_t len) {
    if (!text) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi__json_parse: text is NULL");
        return NULL;
    }
    oi__json *root = (oi__json *)oi__calloc(1, sizeof *root);
    if (!root)
        return NULL;
    oi__json_reader r;
    memset(&r, 0, sizeof r);
    r.text = text;
    r.len = len;
    if (oi__json_value(&r, root)) {
        oi__json_skip_space(&r);
        if (r.pos < r.len)
            oi__json_error(&r, "unexpected text after the JSON value");
    }
    if (r.failed) {
        oi__json_free(root);
        return NULL;
    }
    return root;
}

static void oi__json_free_contents(oi__json *json) {
    for (ptrdiff_t i = 0; i < arrlen(json->items); i++)
        oi__json_free_contents(&json->items[i]);
    for (ptrdiff_t i = 0; i < arrlen(json->keys); i++)
        oi__free(json->keys[i]);
    arrfree(json->items);
    arrfree(json->keys);
    oi__free(json->text);
}

void oi__json_free(oi__json *json) {
    if (!json)
        return;
    oi__json_free_contents(json);
    oi__free(json);
}

const oi__json *oi__json_get(const oi__json *object, const char *key) {
    if (!object || object->type != OI__JSON_OBJECT || !key)
        return NULL;
    for (ptrdiff_t i = 0; i < arrlen(object->keys); i++)
        if (strcmp(object->keys[i], key) == 0)
            return &object->items[i];
    return NULL;
}
