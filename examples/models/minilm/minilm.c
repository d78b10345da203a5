/* minilm.c - all-MiniLM-L6-v2 sentence embeddings: BERT WordPiece tokens in, one
 * L2-normalized 384-float vector per sentence out (mean of the last hidden states over
 * the real tokens, the padding masked out of attention and of the mean).
 *
 *   python3 examples/models/minilm/import_minilm.py res/minilm.oinf
 *   ./build/examples/models/minilm res/minilm.oinf "A sentence." "Another one."
 *   (import with --batch B for B sentences a step; the last step pads unused rows)
 *   ... --out emb.f32 --ids ids.i32   (raw little-endian f32 [N, D] and i32 [N, S])
 *   ... --trace FILE   (the steps after the first as a trace: every node timed, docs/simulator.md) */
#include "../../../openinfer.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* B sentences per step (the model's size B: import_minilm.py --batch), each padded to the
 * model's S tokens; the heads split D by the model's size n_heads. */
OI_GRAPH(minilm,
  OI_DYNAMIC(
    OI_VAR(ids, i32[B, S])              /* [CLS] tokens [SEP] then [PAD] = 0        */
    OI_VAR(mask, f32[B, S, 1])          /* 1 for a real token, 0 for padding        */
  )
  OI_CONSTANT(
    OI_VAR(word, f32[V, D], @ref("emb.word"))
    OI_VAR(pos, f32[S, D], @ref("emb.pos"))
    OI_VAR(type0, f32[D], @ref("emb.type"))
    OI_VAR(emb_g, f32[D], @ref("emb.ln.g"))  OI_VAR(emb_b, f32[D], @ref("emb.ln.b"))
    OI_VAR(Wq(l), f32[D, D], @pattern("l{l}.q.w"))  OI_VAR(bq(l), f32[D], @pattern("l{l}.q.b"))
    OI_VAR(Wk(l), f32[D, D], @pattern("l{l}.k.w"))  OI_VAR(bk(l), f32[D], @pattern("l{l}.k.b"))
    OI_VAR(Wv(l), f32[D, D], @pattern("l{l}.v.w"))  OI_VAR(bv(l), f32[D], @pattern("l{l}.v.b"))
    OI_VAR(Wo(l), f32[D, D], @pattern("l{l}.o.w"))  OI_VAR(bo(l), f32[D], @pattern("l{l}.o.b"))
    OI_VAR(Wup(l), f32[D, F], @pattern("l{l}.up.w"))  OI_VAR(bup(l), f32[F], @pattern("l{l}.up.b"))
    OI_VAR(Wdn(l), f32[F, D], @pattern("l{l}.down.w"))  OI_VAR(bdn(l), f32[D], @pattern("l{l}.down.b"))
    OI_VAR(g1(l), f32[D], @pattern("l{l}.ln1.g"))  OI_VAR(b1(l), f32[D], @pattern("l{l}.ln1.b"))
    OI_VAR(g2(l), f32[D], @pattern("l{l}.ln2.g"))  OI_VAR(b2(l), f32[D], @pattern("l{l}.ln2.b"))
    OI_VAR(zero, f32, @init(0.0))
    OI_VAR(min_count, f32, @init(1e-9))
    OI_VAR(min_norm, f32, @init(1e-12))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, S, D])
    OI_ASSIGN(keep, bool[B, S, 1])
    OI_ASSIGN(keep_keys, bool[B, 1, 1, S])
    OI_OP(gt, mask, zero) OI_TO(keep)
    OI_OP(reshape, keep, shape=[0, 1, 1, -1]) OI_TO(keep_keys)
    /* embeddings: word + position + type 0, then LayerNorm */
    OI_OP(gather, word, ids) OI_TO(h)
    OI_OP(add, h, pos) OI_TO(h)
    OI_OP(add, h, type0) OI_TO(h)
    OI_OP(layer_norm, h, emb_g, emb_b, epsilon=1e-12) OI_TO(h)
    OI_ASSIGN(x, f32[B*S, D])                /* h as B*S rows: the linear maps are gemms */
    OI_OP(reshape, h, shape=[-1, D]) OI_TO(x)
    OI_LOOP(layers, l, 0..n_layers,
      OI_ASSIGN(q, f32[B*S, D])
      OI_ASSIGN(k, f32[B*S, D])
      OI_ASSIGN(v, f32[B*S, D])
      OI_ASSIGN(qs, f32[B, S, n_heads, Dh])
      OI_ASSIGN(ks, f32[B, S, n_heads, Dh])
      OI_ASSIGN(vs, f32[B, S, n_heads, Dh])
      OI_ASSIGN(os, f32[B, S, n_heads, Dh])
      OI_ASSIGN(qh, f32[B, n_heads, S, Dh])
      OI_ASSIGN(kh, f32[B, n_heads, S, Dh])
      OI_ASSIGN(vh, f32[B, n_heads, S, Dh])
      OI_ASSIGN(att, f32[B, n_heads, S, Dh])
      OI_ASSIGN(o, f32[B*S, D])
      OI_ASSIGN(up, f32[B*S, F])
      /* x W + b as one gemm each (the bias is gemm's C, broadcast over the rows) */
      OI_OP(gemm, x, Wq[l], bq[l]) OI_TO(q)
      OI_OP(gemm, x, Wk[l], bk[l]) OI_TO(k)
      OI_OP(gemm, x, Wv[l], bv[l]) OI_TO(v)
      /* [B*S, D] -> [B, S, n_heads, Dh] -> [B, n_heads, S, Dh] */
      OI_OP(reshape, q, shape=[B, S, n_heads, Dh]) OI_TO(qs)
      OI_OP(transpose, qs, perm=[0, 2, 1, 3]) OI_TO(qh)
      OI_OP(reshape, k, shape=[B, S, n_heads, Dh]) OI_TO(ks)
      OI_OP(transpose, ks, perm=[0, 2, 1, 3]) OI_TO(kh)
      OI_OP(reshape, v, shape=[B, S, n_heads, Dh]) OI_TO(vs)
      OI_OP(transpose, vs, perm=[0, 2, 1, 3]) OI_TO(vh)
      OI_OP(attention, qh, kh, vh, keep_keys) OI_TO(att)       /* padding keys masked out */
      OI_OP(transpose, att, perm=[0, 2, 1, 3]) OI_TO(os)
      OI_OP(reshape, os, shape=[-1, D]) OI_TO(o)
      OI_OP(gemm, o, Wo[l], bo[l]) OI_TO(o)
      OI_OP(add, x, o) OI_TO(x)
      OI_OP(layer_norm, x, g1[l], b1[l], epsilon=1e-12) OI_TO(x)
      OI_OP(gemm, x, Wup[l], bup[l], activation="gelu") OI_TO(up)
      OI_OP(gemm, up, Wdn[l], bdn[l]) OI_TO(o)
      OI_OP(add, x, o) OI_TO(x)
      OI_OP(layer_norm, x, g2[l], b2[l], epsilon=1e-12) OI_TO(x)
    )
    OI_OP(reshape, x, shape=[B, S, D]) OI_TO(h)
    /* mean over the real tokens, then L2 normalization (sentence-transformers' rules) */
    OI_ASSIGN(summed, f32[B, D])
    OI_ASSIGN(count, f32[B, 1])
    OI_ASSIGN(norm, f32[B, 1])
    OI_ASSIGN(embedding, f32[B, D])
    OI_OP(mul, h, mask) OI_TO(h)
    OI_OP(sum_axis, h, axes=[1]) OI_TO(summed)
    OI_OP(sum_axis, mask, axes=[1]) OI_TO(count)
    OI_OP(max, count, min_count) OI_TO(count)
    OI_OP(div, summed, count) OI_TO(summed)
    OI_OP(mul, summed, summed) OI_TO(embedding)
    OI_OP(sum_axis, embedding, axes=[1], keepdims=true) OI_TO(norm)
    OI_OP(sqrt, norm) OI_TO(norm)
    OI_OP(max, norm, min_norm) OI_TO(norm)
    OI_OP(div, summed, norm) OI_TO(embedding)
    OI_RETURN()
  )
)

/* ---- BERT WordPiece tokenizer (uncased; ASCII punctuation and whitespace rules) ---- */

enum { CLS_ID = 101, SEP_ID = 102, UNK_ID = 100, MAX_WORD = 100 };

typedef struct vocab {
    const char *text; /* the metadata string: one token per line, id = line number */
    size_t len;
    size_t count;
    size_t *start;  /* start[i]: offset of token i; token i ends at start[i + 1] - 1 */
    size_t *sorted; /* token ids sorted by their text, for bsearch */
} vocab;

static const vocab *sort_vocab; /* qsort's comparator has no context argument */

static int token_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static size_t token_len(const vocab *v, size_t id) { return v->start[id + 1] - 1 - v->start[id]; }

static int sort_cmp(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return token_cmp(sort_vocab->text + sort_vocab->start[a], token_len(sort_vocab, a),
                     sort_vocab->text + sort_vocab->start[b], token_len(sort_vocab, b));
}

static int vocab_load(vocab *v, const oi_model *model) {
    if (oi_model_metadata_string(model, "tokenizer.vocab", &v->text, &v->len) != OI_OK)
        return -1;
    v->count = 1;
    for (size_t i = 0; i < v->len; i++)
        v->count += v->text[i] == '\n';
    v->start = malloc((v->count + 1) * sizeof *v->start);
    v->sorted = malloc(v->count * sizeof *v->sorted);
    if (!v->start || !v->sorted)
        return -1;
    size_t n = 0;
    v->start[n++] = 0;
    for (size_t i = 0; i < v->len; i++)
        if (v->text[i] == '\n')
            v->start[n++] = i + 1;
    v->start[n] = v->len + 1; /* as if the text ended in '\n' */
    for (size_t i = 0; i < v->count; i++)
        v->sorted[i] = i;
    sort_vocab = v;
    qsort(v->sorted, v->count, sizeof *v->sorted, sort_cmp);
    return 0;
}

/* The id of the token spelled (prefix "##" if continued) + word[0..n), or -1. */
static long vocab_find(const vocab *v, bool continued, const char *word, size_t n) {
    char buf[MAX_WORD + 3];
    size_t len = 0;
    if (continued)
        buf[len++] = '#', buf[len++] = '#';
    memcpy(buf + len, word, n);
    len += n;
    size_t lo = 0, hi = v->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, id = v->sorted[mid];
        int c = token_cmp(v->text + v->start[id], token_len(v, id), buf, len);
        if (c == 0)
            return (long)id;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Greedy longest-match-first pieces of one lowercased word; a word with an unmatched rest
 * is a single [UNK], as in BERT. Returns the new token count. */
static int wordpiece(const vocab *v, const char *word, size_t n, int32_t *out, int count, int max) {
    int32_t pieces[MAX_WORD];
    int np = 0;
    if (n > MAX_WORD)
        goto unknown;
    for (size_t begin = 0; begin < n;) {
        size_t end = n;
        long id = -1;
        for (; end > begin && (id = vocab_find(v, begin > 0, word + begin, end - begin)) < 0; end--)
            ;
        if (id < 0)
            goto unknown;
        pieces[np++] = (int32_t)id;
        begin = end;
    }
    for (int i = 0; i < np && count < max; i++)
        out[count++] = pieces[i];
    return count;
unknown:
    if (count < max)
        out[count++] = UNK_ID;
    return count;
}

static bool is_punct(int c) { return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126); }

/* [CLS] pieces... [SEP], truncated to max tokens; returns how many. */
static int tokenize(const vocab *v, const char *text, int32_t *out, int max) {
    char word[MAX_WORD + 1];
    int count = 0;
    out[count++] = CLS_ID;
    for (const char *p = text; *p && count < max - 1;) {
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        size_t n = 0;
        bool long_word = false;
        if (is_punct((unsigned char)*p)) {
            word[n++] = *p++;
        } else {
            for (; *p && !isspace((unsigned char)*p) && !is_punct((unsigned char)*p); p++) {
                if (n < MAX_WORD)
                    word[n++] = (char)tolower((unsigned char)*p);
                else
                    long_word = true;
            }
        }
        count = wordpiece(v, word, long_word ? MAX_WORD + 1 : n, out, count, max - 1);
    }
    out[count++] = SEP_ID;
    return count;
}

/* ---- the program ---- */

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *default_sentences[] = {
    "The cat sits on the mat.",
    "A cat is sitting on a rug.",
    "Stock markets fell sharply on Monday.",
};

int main(int argc, char **argv) {
    const char *path = NULL, *out_path = NULL, *ids_path = NULL, *trace_path = NULL;
    const char **sentences = malloc((size_t)argc * sizeof *sentences);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_path = argv[++i];
        else if (!strcmp(argv[i], "--ids") && i + 1 < argc)
            ids_path = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_path = argv[++i];
        else if (!path)
            path = argv[i];
        else
            sentences[n++] = argv[i];
    }
    if (!path)
        path = "res/minilm.oinf";
    if (n == 0)
        for (; n < 3; n++)
            sentences[n] = default_sentences[n];

    vocab voc = {0};
    oi_model *model = oi_model_open(path);
    oi_simulator *sim = NULL;
    oi_executor *exec = NULL;
    uint64_t B = 0, S = 0, D = 0;
    float *emb = NULL, *mask = NULL;
    int32_t *ids = NULL;
    int rc = 1;
    if (!model || oi_model_size_of(model, "B", &B) != OI_OK || oi_model_size_of(model, "S", &S) != OI_OK ||
        oi_model_size_of(model, "D", &D) != OI_OK)
        goto done;
    if (vocab_load(&voc, model) != 0) {
        fprintf(stderr, "minilm: %s has no tokenizer.vocab\n", path);
        goto done;
    }
    sim = oi_simulator_new(model, OI_DEVICE_AUTO);
    exec = sim ? oi_simulator_make_executor(sim, minilm()) : NULL;
    emb = malloc((size_t)n * D * sizeof *emb);
    ids = calloc((size_t)(n + B) * S, sizeof *ids); /* the last step's unused rows stay padding */
    mask = malloc(B * S * sizeof *mask);
    if (!exec || !emb || !ids || !mask)
        goto done;
    for (int first = 0, step = 0; first < n; first += (int)B, step++) {
        int in_step = n - first < (int)B ? n - first : (int)B;
        int32_t *rows = ids + (size_t)first * S;
        for (uint64_t b = 0; b < B; b++) {
            const char *text = (int)b < in_step ? sentences[first + b] : ""; /* unused rows: [CLS] [SEP] */
            int len = tokenize(&voc, text, rows + b * S, (int)S);
            for (uint64_t t = 0; t < S; t++)
                mask[b * S + t] = t < (uint64_t)len ? 1.0f : 0.0f;
        }
        if (trace_path)
            oi_executor_set_trace(exec, step > 0);
        OI_INSERT_T(exec, ids, i32, rows, B * S);
        OI_INSERT(exec, mask, mask, B * S);
        double start = now_ms();
        if (oi_executor_run_step(exec) != OI_OK)
            goto done;
        double ms = now_ms() - start;
        OI_FETCH(exec, embedding, f32);
        memcpy(emb + (size_t)first * D, embedding.data, (size_t)in_step * D * sizeof *emb);
        printf("step %d: %d sentence%s, %.3f ms\n", step, in_step, in_step == 1 ? "" : "s", ms);
        for (int b = 0; b < in_step; b++) {
            const float *e = embedding.data + (size_t)b * D;
            int len = 0;
            while (len < (int)S && rows[(size_t)b * S + (size_t)len] != 0)
                len++;
            printf("[%d] %2d tokens, embedding [%+.4f %+.4f %+.4f %+.4f ...]  \"%s\"\n", first + b, len,
                   (double)e[0], (double)e[1], (double)e[2], (double)e[3], sentences[first + b]);
        }
    }
    for (size_t i = 0; i < oi_executor_warning_count(exec); i++)
        printf("note: %s\n", oi_executor_warning(exec, i));
    printf("cosine similarity:\n");
    for (int a = 0; a < n; a++) {
        printf("  [%d]", a);
        for (int b = 0; b < n; b++) {
            double dot = 0;
            for (uint64_t i = 0; i < D; i++)
                dot += (double)emb[a * D + i] * emb[b * D + i];
            printf(" %6.3f", dot);
        }
        printf("\n");
    }
    FILE *f;
    if (out_path && (!(f = fopen(out_path, "wb")) || fwrite(emb, sizeof *emb, (size_t)n * D, f) != (size_t)n * D ||
                     fclose(f) != 0)) {
        fprintf(stderr, "minilm: cannot write %s\n", out_path);
        goto done;
    }
    if (ids_path && (!(f = fopen(ids_path, "wb")) || fwrite(ids, sizeof *ids, (size_t)n * S, f) != (size_t)n * S ||
                     fclose(f) != 0)) {
        fprintf(stderr, "minilm: cannot write %s\n", ids_path);
        goto done;
    }
    char *trace = trace_path ? oi_executor_trace_json(exec) : NULL;
    bool trace_ok = !trace_path || (trace && (f = fopen(trace_path, "w")) && fputs(trace, f) >= 0 && !fclose(f));
    oi_free(trace);
    if (!trace_ok) {
        fprintf(stderr, "minilm: cannot write %s\n", trace_path);
        goto done;
    }
    rc = 0;
done:
    if (rc && oi_last_error()[0])
        fprintf(stderr, "minilm: %s: %s\n", path, oi_last_error());
    free(mask);
    free(emb);
    free(ids);
    free(voc.start);
    free(voc.sorted);
    free(sentences);
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    return rc;
}
