/* smollm2.c - SmolLM2-135M-Instruct chat: a prompt in, greedy-decoded text out. A Llama
 * decoder (30 layers, d 576, 9 query heads sharing 3 key/value heads, RoPE, SwiGLU, RMSNorm,
 * tied embeddings) with 4-bit weights in ggml's q4_1 blocks and the keys and values of every
 * position in persistent tables: each step feeds one token and attends over the cache.
 *
 *   python3 examples/models/smollm2/import_smollm2.py res/smollm2.oinf
 *   ./build/examples/models/smollm2 res/smollm2.oinf "What is the capital of France?" [-n 64]
 *   ... --raw TEXT (no chat template)  --ids FILE (i32: prompt count, prompt ids, count, new ids)
 *   ... --trace FILE (the last prompt step's trace, every op timed; bench/gpu/trace_summary.py reads it)
 *   ... --threads N (the CPU kernels' threads; 0, the default: one per core) */
#include "../../../openinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One token per step. The reshape settings name the model's sizes (n_heads query heads and
 * n_kv_heads key/value heads of Dh), resolved when the graph is validated against the model. */
OI_GRAPH(smollm2,
  OI_DYNAMIC( OI_VAR(token, i32[1]) )
  OI_CONSTANT(
    OI_VAR(emb_q8, u8[V, QE], @ref("tok_emb_q8"))  /* q8_0 rows: the lookup and the logits */
    OI_VAR(out_norm, f32[D])
    OI_VAR(attn_norm(l), f32[D], @pattern("l{l}.attn_norm"))
    OI_VAR(ffn_norm(l), f32[D], @pattern("l{l}.ffn_norm"))
    OI_VAR(Wq(l), u8[D, QD], @pattern("l{l}.q"))   /* q4_1 rows: [out, in / 32 * 20 bytes] */
    OI_VAR(Wk(l), u8[KV, QD], @pattern("l{l}.k"))
    OI_VAR(Wv(l), u8[KV, QD], @pattern("l{l}.v"))
    OI_VAR(Wo(l), u8[D, QD], @pattern("l{l}.o"))
    OI_VAR(Wgate(l), u8[F, QD], @pattern("l{l}.gate"))
    OI_VAR(Wup(l), u8[F, QD], @pattern("l{l}.up"))
    OI_VAR(Wdown(l), u8[D, QF], @pattern("l{l}.down"))
  )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))                   /* this token's position           */
    OI_VAR(K(l, t), f32[1, n_kv_heads, Dh], @table, @fixed(t=2048))
    OI_VAR(V(l, t), f32[1, n_kv_heads, Dh], @table, @fixed(t=2048))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(pos0, i32)
    OI_ASSIGN(pos, i32[1])
    OI_ASSIGN(h_q8, u8[1, QE])
    OI_ASSIGN(h, f32[1, D])
    OI_ASSIGN(x, f32[1, D])
    OI_CACHE_READ(step, pos0)
    OI_OP(reshape, pos0, shape=[1]) OI_TO(pos)
    OI_OP(gather, emb_q8, token) OI_TO(h_q8)           /* the token's row, still in blocks */
    OI_OP(dequantize, h_q8, format="q8_0") OI_TO(h)
    OI_LOOP(layers, l, 0..n_layers,
      OI_ASSIGN(q, f32[1, D])
      OI_ASSIGN(k, f32[1, KV])
      OI_ASSIGN(v, f32[1, KV])
      OI_ASSIGN(q3, f32[1, n_heads, Dh])
      OI_ASSIGN(k3, f32[1, n_kv_heads, Dh])
      OI_ASSIGN(v3, f32[1, n_kv_heads, Dh])
      OI_ASSIGN(qh, f32[1, n_heads, 1, Dh])
      OI_ASSIGN(keys, f32[?, 1, n_kv_heads, Dh])   /* ?: the positions so far, set at run time */
      OI_ASSIGN(vals, f32[?, 1, n_kv_heads, Dh])
      OI_ASSIGN(kh, f32[1, n_kv_heads, ?, Dh])
      OI_ASSIGN(vh, f32[1, n_kv_heads, ?, Dh])
      OI_ASSIGN(att, f32[1, n_heads, 1, Dh])
      OI_ASSIGN(o, f32[1, D])
      OI_ASSIGN(gate, f32[1, F])
      OI_ASSIGN(up, f32[1, F])
      /* attention: RMSNorm, q/k/v, RoPE (interleaved pairs, as the GGUF's rows are ordered) */
      OI_OP(rms_norm, h, attn_norm[l], epsilon=1e-5) OI_TO(x)
      OI_OP(matmul_q4, x, Wq[l], format="q4_1", activations="q8") OI_TO(q)
      OI_OP(matmul_q4, x, Wk[l], format="q4_1", activations="q8") OI_TO(k)
      OI_OP(matmul_q4, x, Wv[l], format="q4_1", activations="q8") OI_TO(v)
      OI_OP(reshape, q, shape=[1, n_heads, Dh]) OI_TO(q3)
      OI_OP(reshape, k, shape=[1, n_kv_heads, Dh]) OI_TO(k3)
      OI_OP(reshape, v, shape=[1, n_kv_heads, Dh]) OI_TO(v3)
      OI_OP(rope, q3, pos, theta=100000.0, interleaved=true, seq_axis=0) OI_TO(q3)
      OI_OP(rope, k3, pos, theta=100000.0, interleaved=true, seq_axis=0) OI_TO(k3)
      /* the cache: this position's k and v appended, all positions read back */
      OI_CACHE_WRITE(k3, K[l, step])
      OI_CACHE_WRITE(v3, V[l, step])
      OI_CACHE_READ(K[l, 0..step+1], keys)             /* every position, this one too */
      OI_CACHE_READ(V[l, 0..step+1], vals)
      OI_OP(transpose, keys, perm=[1, 2, 0, 3]) OI_TO(kh)
      OI_OP(transpose, vals, perm=[1, 2, 0, 3]) OI_TO(vh)
      OI_OP(reshape, q3, shape=[1, n_heads, 1, Dh]) OI_TO(qh)
      OI_OP(attention, qh, kh, vh) OI_TO(att)          /* 9 query heads over 3 kv heads */
      OI_OP(reshape, att, shape=[1, -1]) OI_TO(o)
      OI_OP(matmul_q4, o, Wo[l], format="q4_1", activations="q8") OI_TO(x)
      OI_OP(add, h, x) OI_TO(h)
      /* SwiGLU feed-forward */
      OI_OP(rms_norm, h, ffn_norm[l], epsilon=1e-5) OI_TO(x)
      OI_OP(matmul_q4, x, Wgate[l], format="q4_1", activations="q8") OI_TO(gate)
      OI_OP(matmul_q4, x, Wup[l], format="q4_1", activations="q8") OI_TO(up)
      OI_OP(silu, gate) OI_TO(gate)
      OI_OP(mul, gate, up) OI_TO(gate)
      OI_OP(matmul_q4, gate, Wdown[l], format="q4_1", activations="q8") OI_TO(x)
      OI_OP(add, h, x) OI_TO(h)
    )
    OI_CACHE_INCREMENT(step)
    /* the next token: the tied embedding as the output projection, then argmax */
    OI_ASSIGN(logits, f32[1, V])
    OI_ASSIGN(next, i64[1])
    OI_OP(rms_norm, h, out_norm, epsilon=1e-5) OI_TO(x)
    OI_OP(matmul_q4, x, emb_q8, format="q8_0", activations="q8") OI_TO(logits)
    OI_OP(argmax_axis, logits, axis=1) OI_TO(next)
    OI_RETURN()
  )
)

/* ---- byte-level BPE (GPT-2 style), vocabulary and merges from the model ---- */

typedef struct strtab { /* open addressing: string -> value */
    const char **key;
    size_t *klen;
    int *value;
    size_t cap;
} strtab;

static size_t hash_bytes(const char *s, size_t n) {
    size_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static int strtab_init(strtab *t, size_t count) {
    t->cap = 1;
    while (t->cap < count * 2)
        t->cap <<= 1;
    t->key = calloc(t->cap, sizeof *t->key);
    t->klen = calloc(t->cap, sizeof *t->klen);
    t->value = calloc(t->cap, sizeof *t->value);
    return t->key && t->klen && t->value ? 0 : -1;
}

static void strtab_put(strtab *t, const char *s, size_t n, int value) {
    size_t i = hash_bytes(s, n) & (t->cap - 1);
    while (t->key[i] && !(t->klen[i] == n && !memcmp(t->key[i], s, n)))
        i = (i + 1) & (t->cap - 1);
    if (!t->key[i]) /* the first entry wins, as in a dictionary built in order */
        t->key[i] = s, t->klen[i] = n, t->value[i] = value;
}

static int strtab_get(const strtab *t, const char *s, size_t n) {
    for (size_t i = hash_bytes(s, n) & (t->cap - 1); t->key[i]; i = (i + 1) & (t->cap - 1))
        if (t->klen[i] == n && !memcmp(t->key[i], s, n))
            return t->value[i];
    return -1;
}

static void strtab_free(strtab *t) {
    free(t->key);
    free(t->klen);
    free(t->value);
}

typedef struct bpe {
    const char **tok; /* token i: tok[i], tok_len[i] bytes (pointers into the model's metadata) */
    size_t *tok_len;
    int n_tokens;
    strtab vocab;  /* token text -> id */
    strtab merges; /* "left right" -> rank */
    int byte_char[256]; /* GPT-2's printable stand-in (a code point) for each byte */
    int bos, eos;
} bpe;

/* Splits a '\n'-separated metadata string into pointers; returns the count or -1. */
static int split_lines(const oi_model *m, const char *key, const char ***lines, size_t **lens) {
    const char *text;
    size_t len, n = 1;
    if (oi_model_metadata_string(m, key, &text, &len) != OI_OK)
        return -1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    *lines = malloc(n * sizeof **lines);
    *lens = malloc(n * sizeof **lens);
    if (!*lines || !*lens)
        return -1;
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || text[i] == '\n') {
            (*lines)[k] = text + start;
            (*lens)[k++] = i - start;
            start = i + 1;
        }
    return (int)n;
}

static int meta_int(const oi_model *m, const char *key, int fallback) {
    const oi_metadata_info *info = oi_model_find_metadata(m, key);
    if (!info)
        return fallback;
    switch (info->type) {
    case OI_DTYPE_U8: return *(const uint8_t *)info->payload;
    case OI_DTYPE_U16: return *(const uint16_t *)info->payload;
    case OI_DTYPE_U32: return (int)*(const uint32_t *)info->payload;
    default: return fallback;
    }
}

static int bpe_load(bpe *b, const oi_model *m) {
    const char **merge;
    size_t *merge_len;
    b->n_tokens = split_lines(m, "tokenizer.tokens", &b->tok, &b->tok_len);
    int n_merges = split_lines(m, "tokenizer.merges", &merge, &merge_len);
    if (b->n_tokens < 0 || n_merges < 0 || strtab_init(&b->vocab, (size_t)b->n_tokens) ||
        strtab_init(&b->merges, (size_t)n_merges))
        return -1;
    for (int i = 0; i < b->n_tokens; i++)
        strtab_put(&b->vocab, b->tok[i], b->tok_len[i], i);
    for (int i = 0; i < n_merges; i++)
        strtab_put(&b->merges, merge[i], merge_len[i], i);
    free(merge); /* the table keeps pointers into the metadata, not into this array */
    free(merge_len);
    int extra = 0;
    for (int c = 0; c < 256; c++) {
        bool printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
        b->byte_char[c] = printable ? c : 256 + extra++;
    }
    b->bos = meta_int(m, "tokenizer.bos", 1);
    b->eos = meta_int(m, "tokenizer.eos", 2);
    return 0;
}

static void bpe_free(bpe *b) {
    free(b->tok);
    free(b->tok_len);
    strtab_free(&b->vocab);
    strtab_free(&b->merges);
}

static size_t put_utf8(char *out, int cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xC0 | (cp >> 6)); /* GPT-2's stand-ins are all below 0x800 */
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* Byte-pair encodes one pre-token (raw bytes) into ids; returns the new count. */
static int bpe_word(const bpe *b, const char *s, size_t n, int32_t *out, int count, int max) {
    enum { MAXW = 256 };
    char buf[2 * MAXW], key[4 * MAXW + 1];
    size_t start[MAXW + 1], nsym = 0, len = 0;
    if (n > MAXW)
        n = MAXW; /* longer pre-tokens (very long runs) are cut; rare in chat text */
    for (size_t i = 0; i < n; i++) { /* one symbol per byte, in GPT-2's printable form */
        start[nsym++] = len;
        len += put_utf8(buf + len, b->byte_char[(unsigned char)s[i]]);
    }
    start[nsym] = len;
    for (;;) { /* merge the adjacent pair of lowest rank until none is left */
        int best = -1, best_rank = 0;
        for (size_t i = 0; i + 1 < nsym; i++) {
            size_t l1 = start[i + 1] - start[i], l2 = start[i + 2] - start[i + 1];
            memcpy(key, buf + start[i], l1);
            key[l1] = ' ';
            memcpy(key + l1 + 1, buf + start[i + 1], l2);
            int rank = strtab_get(&b->merges, key, l1 + 1 + l2);
            if (rank >= 0 && (best < 0 || rank < best_rank))
                best = (int)i, best_rank = rank;
        }
        if (best < 0)
            break;
        memmove(start + best + 1, start + best + 2, (nsym - (size_t)best - 1) * sizeof *start);
        nsym--;
    }
    for (size_t i = 0; i < nsym && count < max; i++) {
        int id = strtab_get(&b->vocab, buf + start[i], start[i + 1] - start[i]);
        out[count++] = id >= 0 ? id : 0; /* unknown: <|endoftext|> never happens with all 256 bytes */
    }
    return count;
}

static bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* The length of the next pre-token at s (SmolLM's rule: every digit alone, then GPT-2's
 * contractions, ' ?letters', ' ?other symbols', whitespace runs; bytes >= 0x80 count as letters). */
static size_t pretoken(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    static const char *contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
    if (is_digit(u[0]))
        return 1;
    for (size_t i = 0; i < sizeof contractions / sizeof *contractions; i++) {
        size_t cl = strlen(contractions[i]);
        if (cl <= n && !memcmp(s, contractions[i], cl))
            return cl;
    }
    size_t i = u[0] == ' ' && n > 1 && !is_space(u[1]) && !is_digit(u[1]) ? 1 : 0;
    if (is_letter(u[i])) {
        while (i < n && is_letter(u[i]))
            i++;
        return i;
    }
    if (!is_space(u[i]) && !is_digit(u[i])) {
        while (i < n && !is_space(u[i]) && !is_letter(u[i]) && !is_digit(u[i]))
            i++;
        return i;
    }
    while (i < n && is_space(u[i])) /* whitespace: leave the last one to the word after it */
        i++;
    return i < n && i > 1 ? i - 1 : i;
}

/* Encodes text; <|...|> spans that are tokens of the vocabulary become those special tokens. */
static int bpe_encode(const bpe *b, const char *text, int32_t *out, int max) {
    int count = 0;
    size_t n = strlen(text);
    for (size_t i = 0; i < n && count < max;) {
        size_t seg = i;
        const char *special = NULL;
        for (; seg < n; seg++) /* find the next special token */
            if (text[seg] == '<' && seg + 1 < n && text[seg + 1] == '|' && (special = strstr(text + seg, "|>")) &&
                strtab_get(&b->vocab, text + seg, (size_t)(special + 2 - (text + seg))) >= 0)
                break;
        while (i < seg && count < max) {
            size_t len = pretoken(text + i, seg - i);
            count = bpe_word(b, text + i, len, out, count, max);
            i += len;
        }
        if (seg < n && count < max) {
            size_t len = (size_t)(special + 2 - (text + seg));
            out[count++] = strtab_get(&b->vocab, text + seg, len);
            i = seg + len;
        }
    }
    return count;
}

/* Prints a token as text: GPT-2's stand-in characters back to bytes. */
static void bpe_print(const bpe *b, int id) {
    if (id < 0 || id >= b->n_tokens)
        return;
    const unsigned char *s = (const unsigned char *)b->tok[id];
    for (size_t i = 0; i < b->tok_len[id];) {
        int cp = s[i] < 0x80 ? s[i] : ((s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F);
        i += s[i] < 0x80 ? 1 : 2;
        int byte = cp;
        for (int c = 0; c < 256; c++)
            if (b->byte_char[c] == cp)
                byte = c;
        putchar(byte);
    }
    fflush(stdout);
}

/* ---- the program ---- */

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *chat_format =
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n";

/* The same graph with activations="f32" in every matmul_q4: x stays in f32
 * instead of being rounded to 8-bit blocks. The 8-bit rounding makes a run
 * reproducible only where every sum is added in the same order (the CPU's
 * paths are bit for bit the same); a GPU adds in another order, one x then
 * rounds to the next int8 and, layer after layer, the logits move by up to a
 * few tenths. In f32 they agree to rounding, so GPU runs are compared in f32.
 * The graph goes through its JSON, where each setting is text. */
static oi_graph *with_f32_activations(const oi_graph *graph) {
    static const char q8[] = "{\"name\": \"activations\", \"type\": \"string\", \"value\": \"q8\"}";
    static const char f32[] = "{\"name\": \"activations\", \"type\": \"string\", \"value\": \"f32\"}";
    char *json = oi_graph_to_json(graph);
    size_t n_q8 = 0;
    for (const char *p = json; p && (p = strstr(p, q8)); p++)
        n_q8++;
    char *edited = json ? malloc(strlen(json) + n_q8 + 1) : NULL, *out = edited;
    for (const char *p = json; edited && *p;) {
        bool hit = !strncmp(p, q8, sizeof q8 - 1);
        size_t n = hit ? sizeof f32 - 1 : 1;
        memcpy(out, hit ? f32 : p, n);
        out += n;
        p += hit ? sizeof q8 - 1 : 1;
    }
    if (edited)
        *out = '\0';
    oi_graph *g = n_q8 && edited ? oi_graph_from_json(edited) : NULL;
    free(json);
    free(edited);
    return g;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *prompt = NULL, *ids_path = NULL, *trace_path = NULL;
    int n_new = 64, n_threads = 0;
    bool raw = false, keep_going = false, f32_activations = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n_new = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            n_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ids") && i + 1 < argc)
            ids_path = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_path = argv[++i];
        else if (!strcmp(argv[i], "--raw"))
            raw = true;
        else if (!strcmp(argv[i], "--ignore-eos"))
            keep_going = true;
        else if (!strcmp(argv[i], "--f32-activations"))
            f32_activations = true;
        else if (!model_path)
            model_path = argv[i];
        else
            prompt = argv[i];
    }
    if (!model_path || !prompt || n_new < 0) {
        fprintf(stderr, "usage: smollm2 MODEL.oinf PROMPT [-n TOKENS] [--raw] [--ignore-eos] [--f32-activations] [--ids FILE]\n"
                        "               [--trace FILE] [--threads N]\n");
        return 2;
    }
    bpe tok = {0};
    oi_model *model = oi_model_open(model_path);
    oi_simulator *sim = NULL;
    oi_executor *exec = NULL;
    oi_graph *graph = NULL; /* --f32-activations: smollm2()'s graph, edited */
    size_t text_len = strlen(chat_format) + strlen(prompt) + 1;
    char *text = malloc(text_len);
    int max_ids = (int)text_len + n_new + 1;
    int32_t *ids = malloc((size_t)max_ids * sizeof *ids);
    int rc = 1, n_prompt = 0, n_out = 0;
    if (!model || !text || !ids)
        goto done;
    if (bpe_load(&tok, model) != 0) {
        fprintf(stderr, "smollm2: %s has no tokenizer.tokens/tokenizer.merges\n", model_path);
        goto done;
    }
    snprintf(text, text_len, raw ? "%s" : chat_format, prompt);
    n_prompt = bpe_encode(&tok, text, ids, max_ids - n_new);
    oi_simulator_desc desc = {.device = OI_DEVICE_AUTO, .n_threads = n_threads, .timer = trace_path != NULL};
    sim = oi_simulator_new_desc(model, &desc);
    graph = f32_activations ? with_f32_activations(smollm2()) : NULL;
    if (f32_activations && !graph) {
        fprintf(stderr, "smollm2: %s\n", oi_last_error());
        goto done;
    }
    exec = sim ? oi_simulator_make_executor(sim, graph ? graph : smollm2()) : NULL;
    if (!exec || n_prompt == 0)
        goto done;
    double start = now_ms(), prefill_ms = 0;
    int32_t chosen = 0;
    for (int i = 0; n_new > 0; i++) { /* the prompt one token per step, then what the model picks */
        int32_t cur = i < n_prompt ? ids[i] : chosen;
        OI_INSERT_T(exec, token, i32, &cur, 1);
        if (trace_path) /* one step's events: the prompt's last token */
            oi_executor_set_trace(exec, i == n_prompt - 1);
        if (oi_executor_run_step(exec) != OI_OK)
            goto done;
        if (i < n_prompt - 1)
            continue;
        if (i == n_prompt - 1)
            prefill_ms = now_ms() - start;
        OI_FETCH(exec, next, i32);
        chosen = next.data[0];
        ids[n_prompt + n_out++] = chosen;
        bpe_print(&tok, chosen);
        if ((chosen == tok.eos && !keep_going) || n_out == n_new)
            break;
    }
    double total = now_ms() - start;
    printf("\n[%d prompt tokens in %.0f ms (%.1f ms each), %d new tokens in %.0f ms (%.1f ms each)]\n", n_prompt,
           prefill_ms, prefill_ms / n_prompt, n_out, total - prefill_ms, n_out ? (total - prefill_ms) / n_out : 0.0);
    for (size_t i = 0; i < oi_executor_warning_count(exec); i++)
        printf("note: %s\n", oi_executor_warning(exec, i));
    FILE *f;
    char *trace = trace_path ? oi_executor_trace_json(exec) : NULL;
    bool trace_ok = !trace_path || (trace && (f = fopen(trace_path, "w")) && fputs(trace, f) >= 0 && !fclose(f));
    oi_free(trace);
    if (!trace_ok) {
        fprintf(stderr, "smollm2: cannot write %s\n", trace_path);
        goto done;
    }
    int32_t header[2] = {n_prompt, n_out};
    if (ids_path && (!(f = fopen(ids_path, "wb")) || fwrite(&header[0], 4, 1, f) != 1 ||
                     fwrite(ids, 4, (size_t)n_prompt, f) != (size_t)n_prompt || fwrite(&header[1], 4, 1, f) != 1 ||
                     fwrite(ids + n_prompt, 4, (size_t)n_out, f) != (size_t)n_out || fclose(f))) {
        fprintf(stderr, "smollm2: cannot write %s\n", ids_path);
        goto done;
    }
    rc = 0;
done:
    if (rc && oi_last_error()[0])
        fprintf(stderr, "smollm2: %s: %s\n", model_path, oi_last_error());
    bpe_free(&tok);
    free(text);
    free(ids);
    oi_executor_free(exec);
    oi_graph_free(graph);
    oi_simulator_free(sim);
    oi_model_close(model);
    return rc;
}
