/* ppocr_cls.c - PP-OCR's text-direction classifier (MobileNetV3-small, scale 0.35): is a
 * 48 x 192 crop of a text line upright (label 0) or upside down (label 180)?
 *
 *   python3 examples/models/ppocr_cls/import_ppocr_cls.py res/ppocr_cls.oinf
 *   ./build/examples/models/ppocr_cls res/ppocr_cls.oinf IMAGE.pgm... [--out logits.f32] [--trace FILE]
 *
 * --trace FILE writes the steps of all images but the first as a trace (every node timed, docs/simulator.md).
 *
 * Images are binary PGM or PPM files of 192 x 48 pixels (a text line resized to height 48
 * and padded on the right, as PaddleOCR prepares it); PPM channels are taken in file order. */
#include "../../../openinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The macros below expand to DSL statements; token pasting gives each block its own names
 * (b5_exp_w, b5_e, ...). Temporaries are declared OI_ASSIGN(name): each takes its dtype and
 * shape from the op that first writes it, so the heights and widths (48 x 192 in, 96 wide after
 * the stem, whose strides are [2, 1]) are written nowhere. */

/* the block's activation, in place (ONNX's HardSwish: x * clip(x / 6 + 1/2, 0, 1)) */
#define ACT_hs(x) OI_OP(hard_swish, x) OI_TO(x)
#define ACT_relu(x) OI_OP(relu, x) OI_TO(x)

/* weights of an inverted-residual block: 1x1 expand, k x k depthwise, [squeeze-excite],
 * 1x1 linear projection (batch norms folded into the convolutions by the importer) */
#define SEW_yes(n, E, S) \
    OI_VAR(b##n##_se1_w, f32[S, E, 1, 1]) OI_VAR(b##n##_se1_b, f32[S]) \
    OI_VAR(b##n##_se2_w, f32[E, S, 1, 1]) OI_VAR(b##n##_se2_b, f32[E])
#define SEW_no(n, E, S)
#define WEIGHTS(n, C, E, S, O, k, se) \
    OI_VAR(b##n##_exp_w, f32[E, C, 1, 1]) OI_VAR(b##n##_exp_b, f32[E]) \
    OI_VAR(b##n##_dw_w, f32[E, 1, k, k]) OI_VAR(b##n##_dw_b, f32[E]) \
    SEW_##se(n, E, S) \
    OI_VAR(b##n##_lin_w, f32[O, E, 1, 1]) OI_VAR(b##n##_lin_b, f32[O])

/* squeeze-excite: x *= hard_sigmoid(W2 relu(W1 mean(x) + b1) + b2), per channel */
#define SE_yes(n) \
    OI_ASSIGN(b##n##_p) \
    OI_ASSIGN(b##n##_s) \
    OI_OP(global_avg_pool, b##n##_d) OI_TO(b##n##_p) \
    OI_OP(conv2d, b##n##_p, b##n##_se1_w, b##n##_se1_b) OI_TO(b##n##_s) \
    OI_OP(relu, b##n##_s) OI_TO(b##n##_s) \
    OI_OP(conv2d, b##n##_s, b##n##_se2_w, b##n##_se2_b) OI_TO(b##n##_p) \
    OI_OP(hard_sigmoid, b##n##_p) OI_TO(b##n##_p) \
    OI_OP(mul, b##n##_d, b##n##_p) OI_TO(b##n##_d)
#define SE_no(n)
#define RES_yes(in, out) OI_OP(add, in, out) OI_TO(out)
#define RES_no(in, out)

/* block n: in [1, C, H, 96] -> out [1, O, H / sh, 96]; depthwise k x k with E groups, padding
 * k / 2, stride (sh, 1). */
#define BLOCK(n, in, out, E, pad, sh, act, se, res) \
    OI_ASSIGN(b##n##_e) \
    OI_ASSIGN(b##n##_d) \
    OI_ASSIGN(out) \
    OI_OP(conv2d, in, b##n##_exp_w, b##n##_exp_b) OI_TO(b##n##_e) \
    ACT_##act(b##n##_e) \
    OI_OP(conv2d, b##n##_e, b##n##_dw_w, b##n##_dw_b, pads=[pad, pad, pad, pad], strides=[sh, 1], group=E) OI_TO(b##n##_d) \
    ACT_##act(b##n##_d) \
    SE_##se(n) \
    OI_OP(conv2d, b##n##_d, b##n##_lin_w, b##n##_lin_b) OI_TO(out) \
    RES_##res(in, out)

OI_GRAPH(ppocr_cls,
  OI_DYNAMIC( OI_VAR(image, f32[1, 3, 48, 192]) )   /* (pixel / 255 - 0.5) / 0.5 */
  OI_CONSTANT(
    OI_VAR(stem_w, f32[8, 3, 3, 3])  OI_VAR(stem_b, f32[8])
    /*      n   C    E   S   O   k  SE  */
    WEIGHTS(2,  8,   8,  2,  8,  3, yes)
    WEIGHTS(3,  8,  24,  0,  8,  3, no)
    WEIGHTS(4,  8,  32,  0,  8,  3, no)
    WEIGHTS(5,  8,  32,  8, 16,  5, yes)
    /* blocks 6-9 run as one loop: 16 channels in and out, each expanded to its own width E(n)
     * (88, 88, 40, 48) and squeezed to S(n); both come from the model, entry by entry */
    OI_VAR(exp_w(n), f32[E(n), 16, 1, 1], @pattern("b{n}_exp_w"))   OI_VAR(exp_b(n), f32[E(n)], @pattern("b{n}_exp_b"))
    OI_VAR(dw_w(n), f32[E(n), 1, 5, 5], @pattern("b{n}_dw_w"))      OI_VAR(dw_b(n), f32[E(n)], @pattern("b{n}_dw_b"))
    OI_VAR(se1_w(n), f32[S(n), E(n), 1, 1], @pattern("b{n}_se1_w")) OI_VAR(se1_b(n), f32[S(n)], @pattern("b{n}_se1_b"))
    OI_VAR(se2_w(n), f32[E(n), S(n), 1, 1], @pattern("b{n}_se2_w")) OI_VAR(se2_b(n), f32[E(n)], @pattern("b{n}_se2_b"))
    OI_VAR(lin_w(n), f32[16, E(n), 1, 1], @pattern("b{n}_lin_w"))   OI_VAR(lin_b(n), f32[16], @pattern("b{n}_lin_b"))
    WEIGHTS(10, 16, 104, 26, 32, 5, yes)
    WEIGHTS(11, 32, 200, 50, 32, 5, yes)
    WEIGHTS(12, 32, 200, 50, 32, 5, yes)
    OI_VAR(last_w, f32[200, 32, 1, 1])  OI_VAR(last_b, f32[200])
    OI_VAR(fc_w, f32[200, 2])  OI_VAR(fc_b, f32[2])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(x1)
    OI_OP(conv2d, image, stem_w, stem_b, pads=[1, 1, 1, 1], strides=[2, 2]) OI_TO(x1)
    ACT_hs(x1)
    /*    n   in   out  E    pad sh act   SE   residual */
    BLOCK(2,  x1,  x2,  8,   1, 2, relu, yes, no)
    BLOCK(3,  x2,  x3,  24,  1, 2, relu, no,  no)
    BLOCK(4,  x3,  x4,  32,  1, 1, relu, no,  yes)
    BLOCK(5,  x4,  x5,  32,  2, 2, hs,   yes, no)
    OI_LOOP(mid, n, 6..10,                         /* blocks 6-9, one width E(n) each; x5 carries */
      OI_ASSIGN(e)  OI_ASSIGN(d)  OI_ASSIGN(p)  OI_ASSIGN(s)  OI_ASSIGN(o)
      OI_OP(conv2d, x5, exp_w[n], exp_b[n]) OI_TO(e)                 /* [1, E(n), 3, 96] */
      ACT_hs(e)
      OI_OP(conv2d, e, dw_w[n], dw_b[n], pads=[2, 2, 2, 2], strides=[1, 1], group=E(n)) OI_TO(d)
      ACT_hs(d)
      OI_OP(global_avg_pool, d) OI_TO(p)                             /* squeeze-excite */
      OI_OP(conv2d, p, se1_w[n], se1_b[n]) OI_TO(s)
      OI_OP(relu, s) OI_TO(s)
      OI_OP(conv2d, s, se2_w[n], se2_b[n]) OI_TO(p)
      OI_OP(hard_sigmoid, p) OI_TO(p)                                 /* 0.2 p + 0.5, clipped */
      OI_OP(mul, d, p) OI_TO(d)
      OI_OP(conv2d, d, lin_w[n], lin_b[n]) OI_TO(o)                 /* back to 16 channels */
      OI_OP(add, x5, o) OI_TO(x5)                                    /* residual */
    )
    BLOCK(10, x5,  x10, 104, 2, 2, hs,   yes, no)
    BLOCK(11, x10, x11, 200, 2, 1, hs,   yes, yes)
    BLOCK(12, x11, x12, 200, 2, 1, hs,   yes, yes)
    /* head: 1x1 conv to 200 + hard-swish, 2x2 max pool, global mean, linear, softmax */
    OI_ASSIGN(last)
    OI_ASSIGN(pooled)
    OI_ASSIGN(feat)
    OI_ASSIGN(flat)
    OI_ASSIGN(logits)
    OI_ASSIGN(probs)
    OI_OP(conv2d, x12, last_w, last_b) OI_TO(last)
    ACT_hs(last)
    OI_OP(max_pool2d, last, kernel_shape=[2, 2], strides=[2, 2]) OI_TO(pooled)
    OI_OP(global_avg_pool, pooled) OI_TO(feat)
    OI_OP(reshape, feat, shape=[1, -1]) OI_TO(flat)
    OI_OP(matmul, flat, fc_w) OI_TO(logits)
    OI_OP(add, logits, fc_b) OI_TO(logits)
    OI_OP(softmax, logits, axis=1) OI_TO(probs)
    OI_RETURN()
  )
)

enum { IMG_W = 192, IMG_H = 48 };

/* A binary PGM (P5) or PPM (P6) of 192 x 48 with maxval 255, as the classifier's input:
 * 3 channels (a PGM's gray repeated), each (v / 255 - 0.5) / 0.5 as PaddleOCR normalizes. */
static int read_image(const char *path, float *out) {
    FILE *f = fopen(path, "rb");
    char magic[3] = {0};
    int w = 0, h = 0, maxval = 0, rc = -1;
    unsigned char *px = NULL;
    if (!f || fscanf(f, "%2s %d %d %d", magic, &w, &h, &maxval) != 4 || fgetc(f) == EOF)
        goto done;
    int channels = !strcmp(magic, "P5") ? 1 : !strcmp(magic, "P6") ? 3 : 0;
    if (!channels || w != IMG_W || h != IMG_H || maxval != 255) {
        fprintf(stderr, "ppocr_cls: %s: need a binary PGM/PPM of %d x %d, maxval 255\n", path, IMG_W, IMG_H);
        goto done;
    }
    size_t n = (size_t)w * (size_t)h * (size_t)channels;
    px = malloc(n);
    if (!px || fread(px, 1, n, f) != n)
        goto done;
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < IMG_W * IMG_H; i++)
            out[c * IMG_W * IMG_H + i] = ((float)px[(size_t)i * (size_t)channels + (size_t)(channels == 3 ? c : 0)] / 255.0f - 0.5f) / 0.5f;
    rc = 0;
done:
    if (rc && f && !px)
        fprintf(stderr, "ppocr_cls: %s: not a readable image\n", path);
    free(px);
    if (f)
        fclose(f);
    return rc;
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *out_path = NULL, *trace_path = NULL;
    const char **images = malloc((size_t)argc * sizeof *images);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_path = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_path = argv[++i];
        else if (!model_path)
            model_path = argv[i];
        else
            images[n++] = argv[i];
    }
    if (!model_path || n == 0) {
        fprintf(stderr, "usage: ppocr_cls MODEL.oinf IMAGE.pgm... [--out logits.f32] [--trace FILE]\n");
        free(images);
        return 2;
    }
    oi_model *model = oi_model_open(model_path);
    oi_simulator *sim = model ? oi_simulator_new(model, OI_DEVICE_AUTO) : NULL;
    oi_executor *exec = sim ? oi_simulator_make_executor(sim, ppocr_cls()) : NULL;
    float *input = malloc(3 * IMG_W * IMG_H * sizeof *input);
    float *all_logits = malloc((size_t)n * 2 * sizeof *all_logits);
    int rc = 1;
    if (!exec || !input || !all_logits)
        goto done;
    for (int i = 0; i < n; i++) {
        if (read_image(images[i], input) != 0)
            goto done;
        OI_INSERT(exec, image, input, 3 * IMG_W * IMG_H);
        if (trace_path)
            oi_executor_set_trace(exec, i > 0);
        double start = now_ms();
        if (oi_executor_run_step(exec) != OI_OK)
            goto done;
        double ms = now_ms() - start;
        OI_FETCH(exec, logits, f32);
        memcpy(all_logits + 2 * i, logits.data, 2 * sizeof(float));
        OI_FETCH(exec, probs, f32);
        int best = probs.data[1] > probs.data[0];
        const char *base = strrchr(images[i], '/');
        printf("%-18s %3s (p = %.4f)  logits [%+.4f %+.4f]  %.2f ms\n", base ? base + 1 : images[i], best ? "180" : "0",
               (double)probs.data[best], (double)logits.data[0], (double)logits.data[1], ms);
    }
    for (size_t i = 0; i < oi_executor_warning_count(exec); i++)
        printf("note: %s\n", oi_executor_warning(exec, i));
    FILE *f;
    char *trace = trace_path ? oi_executor_trace_json(exec) : NULL;
    bool trace_ok = !trace_path || (trace && (f = fopen(trace_path, "w")) && fputs(trace, f) >= 0 && !fclose(f));
    oi_free(trace);
    if (!trace_ok) {
        fprintf(stderr, "ppocr_cls: cannot write %s\n", trace_path);
        goto done;
    }
    if (out_path && (!(f = fopen(out_path, "wb")) || fwrite(all_logits, sizeof *all_logits, (size_t)n * 2, f) != (size_t)n * 2 ||
                     fclose(f))) {
        fprintf(stderr, "ppocr_cls: cannot write %s\n", out_path);
        goto done;
    }
    rc = 0;
done:
    if (rc && oi_last_error()[0])
        fprintf(stderr, "ppocr_cls: %s: %s\n", model_path, oi_last_error());
    free(input);
    free(all_logits);
    free(images);
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    return rc;
}
