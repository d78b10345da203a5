/* fuzz_synth.c - libFuzzer target: a model and a graph through the
 * synthesizer. An input is a model (.oinf) and a graph in oi_graph_to_json's
 * format: the model's length as 4 little-endian bytes, the model, then the
 * graph's text. Each graph that loads is synthesized for the C target and
 * for the Vulkan one (no device needed: nothing is compiled or run), and
 * each plan that comes out is summarized, written as plan.json and emitted
 * into a scratch folder, so every kernel is rendered.
 *
 * Checked beyond "no crash, no leak": a plan's arena holds its peak of live
 * bytes, and plan.json and the summary come back for every plan. The seed
 * corpus (corpus/synth) is graphs of tests/synth/check_random_graphs.py
 * (`--corpus DIR` writes them in this format). */
#include "../../openinfer.h" /* the library: fuzz_lib.c, with the synthesizer */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out_dir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(out_dir, sizeof out_dir, "/tmp/oi_fuzz_synth_%d", (int)getpid());
    return 0;
}

static void synthesize(oi_synthesizer *synth, const oi_model *model, const oi_graph *graph) {
    if (!synth)
        return;
    oi_plan *plan = oi_synthesize(synth, model, graph);
    if (plan) {
        oi_plan_summary sum;
        char *json = oi_plan_to_json(plan);
        if (oi_plan_get_summary(plan, &sum) != OI_OK || !json || sum.arena_bytes < sum.peak_live_bytes)
            __builtin_trap(); /* every plan has a summary, a plan.json and room for its live values */
        oi_free(json);
        oi_plan_emit(plan, out_dir); /* an error (say, the disk) is a status, not a crash */
        oi_plan_free(plan);
    }
    oi_synthesizer_free(synth);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4)
        return 0;
    size_t model_size = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
    if (model_size > size - 4)
        return 0;
    size_t text_size = size - 4 - model_size;
    char *text = (char *)malloc(text_size + 1);
    void *bytes = malloc(model_size ? model_size : 1); /* aligned, as a mapped file is */
    if (!text || !bytes) {
        free(text);
        free(bytes);
        return 0;
    }
    memcpy(text, data + 4 + model_size, text_size);
    text[text_size] = '\0';
    memcpy(bytes, data + 4, model_size);
    oi_model *model = oi_model_open_memory(bytes, model_size);
    oi_graph *graph = model ? oi_graph_from_json(text) : NULL;
    if (graph) {
        synthesize(oi_synthesizer_new(OI_DEVICE_CPU), model, graph);
        synthesize(oi_synthesizer_new(OI_DEVICE_VULKAN), model, graph);
    }
    oi_graph_free(graph);
    oi_model_close(model);
    free(bytes);
    free(text);
    return 0;
}
