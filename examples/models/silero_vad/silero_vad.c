/* silero_vad.c - Silero VAD v6 over a 16 kHz WAV file: one step per 512-sample chunk
 * (32 ms), each giving the probability that the chunk holds speech. The LSTM's state and
 * the last 64 samples of the previous chunk live in persistent memory, so each step gets
 * only its new samples, as a stream would deliver them.
 *
 *   python3 examples/models/silero_vad/import_silero_vad.py res/silero_vad.oinf
 *   ./build/examples/models/silero_vad res/silero_vad.oinf CLIP.wav [--out probs.f32] [--trace FILE]
 *
 * --trace FILE writes every chunk's step as a trace (every node timed, docs/simulator.md). */
#include "../../../openinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Sizes in op settings are literals (64 context samples, 129 frequency bins) because
 * settings cannot name a size of the model yet. */
OI_GRAPH(silero_vad,
  OI_DYNAMIC( OI_VAR(chunk, f32[1, N]) )          /* 512 new samples in [-1, 1]       */
  OI_CONSTANT(
    OI_VAR(stft, f32[258, 1, 256], @ref("stft.w")) /* real and imaginary DFT rows       */
    OI_VAR(w1, f32[128, 129, 3], @ref("conv1.w"))  OI_VAR(b1, f32[128], @ref("conv1.b"))
    OI_VAR(w2, f32[64, 128, 3], @ref("conv2.w"))   OI_VAR(b2, f32[64], @ref("conv2.b"))
    OI_VAR(w3, f32[64, 64, 3], @ref("conv3.w"))    OI_VAR(b3, f32[64], @ref("conv3.b"))
    OI_VAR(w4, f32[128, 64, 3], @ref("conv4.w"))   OI_VAR(b4, f32[128], @ref("conv4.b"))
    OI_VAR(w_ih, f32[H, G], @ref("lstm.w_ih"))     OI_VAR(w_hh, f32[H, G], @ref("lstm.w_hh"))
    OI_VAR(b_lstm, f32[G], @ref("lstm.b"))
    OI_VAR(w_out, f32[H, 1], @ref("final.w"))      OI_VAR(b_out, f32[1], @ref("final.b"))
  )
  OI_PERSISTENT(
    OI_VAR(context, f32[1, CTX])                   /* the previous chunk's last samples */
    OI_VAR(h, f32[1, H])                           /* LSTM hidden state                 */
    OI_VAR(c, f32[1, H])                           /* LSTM cell state                   */
  )
  OI_BLOCK(entry,
    OI_ASSIGN(prev, f32[1, CTX])
    OI_ASSIGN(x, f32[1, 576])
    OI_ASSIGN(tail, f32[1, CTX])
    OI_ASSIGN(padded, f32[1, 640])
    OI_ASSIGN(frames, f32[1, 1, 640])
    OI_ASSIGN(spec, f32[1, 258, 4])
    OI_ASSIGN(re, f32[1, 129, 4])
    OI_ASSIGN(im, f32[1, 129, 4])
    OI_ASSIGN(mag, f32[1, 129, 4])
    OI_ASSIGN(y1, f32[1, 128, 4])
    OI_ASSIGN(y2, f32[1, 64, 2])
    OI_ASSIGN(y3, f32[1, 64, 1])
    OI_ASSIGN(y4, f32[1, 128, 1])
    OI_ASSIGN(feat, f32[1, H])
    /* the 64 remembered samples before the 512 new ones; the last 64 are kept for next time */
    OI_CACHE_READ(context, prev)
    OI_OP(concat, prev, chunk, axis=1) OI_TO(x)
    OI_OP(slice, x, starts=[-64], ends=[576], axes=[1]) OI_TO(tail)
    OI_CACHE_WRITE(tail, context)
    /* magnitude spectrum: a strided convolution with DFT rows, 4 frames of 129 bins */
    OI_OP(pad, x, pads=[0, 64], axes=[1], mode="reflect") OI_TO(padded)
    OI_OP(unsqueeze, padded, axes=[1]) OI_TO(frames)
    OI_OP(conv1d, frames, stft, strides=[128]) OI_TO(spec)
    OI_OP(slice, spec, starts=[0], ends=[129], axes=[1]) OI_TO(re)
    OI_OP(slice, spec, starts=[129], ends=[258], axes=[1]) OI_TO(im)
    OI_OP(mul, re, re) OI_TO(mag)
    OI_OP(mul, im, im) OI_TO(im)
    OI_OP(add, mag, im) OI_TO(mag)
    OI_OP(sqrt, mag) OI_TO(mag)
    /* encoder: four convolutions with ReLU, down to one 128-wide vector */
    OI_OP(conv1d, mag, w1, b1, pads=[1, 1]) OI_TO(y1)
    OI_OP(relu, y1) OI_TO(y1)
    OI_OP(conv1d, y1, w2, b2, pads=[1, 1], strides=[2]) OI_TO(y2)
    OI_OP(relu, y2) OI_TO(y2)
    OI_OP(conv1d, y2, w3, b3, pads=[1, 1], strides=[2]) OI_TO(y3)
    OI_OP(relu, y3) OI_TO(y3)
    OI_OP(conv1d, y3, w4, b4, pads=[1, 1]) OI_TO(y4)
    OI_OP(relu, y4) OI_TO(y4)
    OI_OP(reshape, y4, shape=[1, -1]) OI_TO(feat)
    /* LSTM cell (PyTorch's gate order i, f, g, o) with its state carried across steps */
    OI_ASSIGN(h0, f32[1, H])
    OI_ASSIGN(c0, f32[1, H])
    OI_ASSIGN(gates, f32[1, G])
    OI_ASSIGN(rec, f32[1, G])
    OI_ASSIGN(gi, f32[1, H])
    OI_ASSIGN(gf, f32[1, H])
    OI_ASSIGN(gg, f32[1, H])
    OI_ASSIGN(go, f32[1, H])
    OI_ASSIGN(t, f32[1, H])
    OI_CACHE_READ(h, h0)
    OI_CACHE_READ(c, c0)
    OI_OP(matmul, feat, w_ih) OI_TO(gates)
    OI_OP(matmul, h0, w_hh) OI_TO(rec)
    OI_OP(add, gates, rec) OI_TO(gates)
    OI_OP(add, gates, b_lstm) OI_TO(gates)
    OI_OP(split, gates, axis=1, num=4, index=0) OI_TO(gi)
    OI_OP(split, gates, axis=1, num=4, index=1) OI_TO(gf)
    OI_OP(split, gates, axis=1, num=4, index=2) OI_TO(gg)
    OI_OP(split, gates, axis=1, num=4, index=3) OI_TO(go)
    OI_OP(sigmoid, gi) OI_TO(gi)
    OI_OP(sigmoid, gf) OI_TO(gf)
    OI_OP(tanh, gg) OI_TO(gg)
    OI_OP(sigmoid, go) OI_TO(go)
    OI_OP(mul, gf, c0) OI_TO(c0)
    OI_OP(mul, gi, gg) OI_TO(t)
    OI_OP(add, c0, t) OI_TO(c0)
    OI_OP(tanh, c0) OI_TO(t)
    OI_OP(mul, go, t) OI_TO(h0)
    OI_CACHE_WRITE(h0, h)
    OI_CACHE_WRITE(c0, c)
    /* decoder: ReLU, a 1x1 convolution (a dot product here) and a sigmoid */
    OI_ASSIGN(prob, f32[1, 1])
    OI_OP(relu, h0) OI_TO(t)
    OI_OP(matmul, t, w_out) OI_TO(prob)
    OI_OP(add, prob, b_out) OI_TO(prob)
    OI_OP(sigmoid, prob) OI_TO(prob)
    OI_RETURN()
  )
)

enum { CHUNK = 512, RATE = 16000 };

/* The samples of a 16 kHz mono PCM WAV (16-bit integers or 32-bit floats) as floats in
 * [-1, 1]; NULL with a message on anything else. */
static float *read_wav(const char *path, size_t *count) {
    FILE *f = fopen(path, "rb");
    unsigned char hdr[12], ck[8];
    unsigned fmt_tag = 0, channels = 0, rate = 0, bits = 0;
    float *out = NULL;
    if (!f || fread(hdr, 1, 12, f) != 12 || memcmp(hdr, "RIFF", 4) || memcmp(hdr + 8, "WAVE", 4))
        goto bad;
    while (fread(ck, 1, 8, f) == 8) {
        uint32_t size = ck[4] | ck[5] << 8 | ck[6] << 16 | (uint32_t)ck[7] << 24;
        if (!memcmp(ck, "fmt ", 4)) {
            unsigned char fmt[16];
            if (size < 16 || fread(fmt, 1, 16, f) != 16 || fseek(f, (long)(size - 16 + (size & 1)), SEEK_CUR))
                goto bad;
            fmt_tag = fmt[0] | fmt[1] << 8;
            channels = fmt[2] | fmt[3] << 8;
            rate = fmt[4] | fmt[5] << 8 | fmt[6] << 16 | (unsigned)fmt[7] << 24;
            bits = fmt[14] | fmt[15] << 8;
        } else if (!memcmp(ck, "data", 4)) {
            bool pcm16 = fmt_tag == 1 && bits == 16, float32 = fmt_tag == 3 && bits == 32;
            if (channels != 1 || rate != RATE || !(pcm16 || float32)) {
                fprintf(stderr, "silero_vad: %s: need 16 kHz mono 16-bit PCM or 32-bit float\n", path);
                goto done;
            }
            size_t n = size / (bits / 8);
            unsigned char *raw = malloc(size ? size : 1);
            out = malloc((n ? n : 1) * sizeof *out);
            if (!raw || !out || fread(raw, 1, size, f) != size) {
                free(raw);
                goto bad;
            }
            for (size_t i = 0; i < n; i++) {
                if (pcm16) {
                    out[i] = (float)(int16_t)(raw[2 * i] | raw[2 * i + 1] << 8) / 32768.0f;
                } else {
                    uint32_t u = raw[4 * i] | raw[4 * i + 1] << 8 | raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;
                    memcpy(&out[i], &u, sizeof u);
                }
            }
            free(raw);
            *count = n;
            fclose(f);
            return out;
        } else if (fseek(f, (long)(size + (size & 1)), SEEK_CUR)) {
            goto bad;
        }
    }
bad:
    fprintf(stderr, "silero_vad: %s: not a readable WAV file\n", path);
done:
    free(out);
    if (f)
        fclose(f);
    return NULL;
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_ms(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *wav_path = NULL, *out_path = NULL, *trace_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_path = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_path = argv[++i];
        else if (!model_path)
            model_path = argv[i];
        else
            wav_path = argv[i];
    }
    if (!model_path || !wav_path) {
        fprintf(stderr, "usage: silero_vad MODEL.oinf CLIP.wav [--out probs.f32] [--trace FILE]\n");
        return 2;
    }
    size_t n = 0;
    float *samples = read_wav(wav_path, &n);
    oi_model *model = samples ? oi_model_open(model_path) : NULL;
    oi_simulator *sim = model ? oi_simulator_new(model, OI_DEVICE_AUTO) : NULL;
    oi_executor *exec = sim ? oi_simulator_make_executor(sim, silero_vad()) : NULL;
    size_t chunks = (n + CHUNK - 1) / CHUNK;
    float *probs = malloc((chunks ? chunks : 1) * sizeof *probs);
    double *step_ms = malloc((chunks ? chunks : 1) * sizeof *step_ms);
    int rc = 1;
    if (!exec || !probs || !step_ms)
        goto done;
    double ms = 0;
    for (size_t k = 0; k < chunks; k++) {
        float chunk[CHUNK] = {0}; /* the last chunk is padded with zeros, as the package does */
        size_t len = n - k * CHUNK < CHUNK ? n - k * CHUNK : CHUNK;
        memcpy(chunk, samples + k * CHUNK, len * sizeof *chunk);
        OI_INSERT(exec, chunk, chunk, CHUNK);
        if (trace_path)
            oi_executor_set_trace(exec, true);
        double start = now_ms();
        if (oi_executor_run_step(exec) != OI_OK)
            goto done;
        step_ms[k] = now_ms() - start;
        ms += step_ms[k];
        OI_FETCH(exec, prob, f32);
        probs[k] = prob.data[0];
    }
    /* one character per chunk: '#' speech (p >= 0.5), '.' not */
    /* the mean counts the first step (it reads the lazily loaded weights) and any step the
     * machine's other work delayed; the median of the others is the steady state */
    double first_ms = chunks ? step_ms[0] : 0.0;
    if (chunks > 1)
        qsort(step_ms + 1, chunks - 1, sizeof *step_ms, compare_ms);
    printf("%zu chunks of 32 ms (%.2f s), %.3f ms per chunk (median %.3f ms, first %.3f ms)\n", chunks,
           (double)n / RATE, chunks ? ms / (double)chunks : 0.0, chunks > 1 ? step_ms[1 + (chunks - 1) / 2] : first_ms,
           first_ms);
    for (size_t k = 0; k < chunks; k += 64) {
        printf("%6.2f s  ", (double)(k * CHUNK) / RATE);
        for (size_t j = k; j < k + 64 && j < chunks; j++)
            putchar(probs[j] >= 0.5f ? '#' : '.');
        putchar('\n');
    }
    for (size_t i = 0; i < oi_executor_warning_count(exec); i++)
        printf("note: %s\n", oi_executor_warning(exec, i));
    FILE *f;
    char *trace = trace_path ? oi_executor_trace_json(exec) : NULL;
    bool trace_ok = !trace_path || (trace && (f = fopen(trace_path, "w")) && fputs(trace, f) >= 0 && !fclose(f));
    oi_free(trace);
    if (!trace_ok) {
        fprintf(stderr, "silero_vad: cannot write %s\n", trace_path);
        goto done;
    }
    if (out_path && (!(f = fopen(out_path, "wb")) || fwrite(probs, sizeof *probs, chunks, f) != chunks || fclose(f))) {
        fprintf(stderr, "silero_vad: cannot write %s\n", out_path);
        goto done;
    }
    rc = 0;
done:
    if (rc && samples && oi_last_error()[0])
        fprintf(stderr, "silero_vad: %s: %s\n", model_path, oi_last_error());
    free(probs);
    free(step_ms);
    free(samples);
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    return rc;
}
