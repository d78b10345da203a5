/* fuzz_json.c - libFuzzer target: the JSON reader and the graph loader.
 * A graph that loads must serialize again, and reload to the same text. */
#include "../../openinfer_impl/internal.h" /* the library: fuzz_lib.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = (char *)oi__malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    oi__json_free(oi__json_parse(text, size));
    oi_graph *g = oi_graph_from_json(text);
    if (g) {
        char *once = oi_graph_to_json(g);
        oi_graph *again = once ? oi_graph_from_json(once) : NULL;
        char *twice = again ? oi_graph_to_json(again) : NULL;
        if (once && twice && strcmp(once, twice) != 0)
            __builtin_trap(); /* JSON round trip must be lossless */
        oi_free(twice);
        oi_graph_free(again);
        oi_free(once);
        oi_free(oi_graph_to_dot(g));
        oi_graph_free(g);
    }
    oi_free(text);
    return 0;
}
