/* fuzz_device_json.c - libFuzzer target: the device architecture JSON
 * reader (openinfer_impl/device_arch.h), lenient and strict. A document
 * that reads is written again; that text must read (strictly, when the
 * input had no unknown keys) and write to the same text. */
#include "../../openinfer_impl/internal.h" /* the library: fuzz_lib.c */
#include "../../openinfer_impl/device_arch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = (char *)oi__malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    oi__device_arch strict;
    oi_status strict_status = oi__device_arch_parse_mode(text, true, &strict);
    oi__device_arch_free(&strict);
    oi__device_arch a;
    if (oi__device_arch_parse(text, &a) == OI_OK) {
        if (strict_status == OI_OK && arrlen(a.unknown) != 0)
            __builtin_trap(); /* strict mode let an unknown key through */
        char *once = oi__device_arch_to_json(&a);
        oi__device_arch b;
        if (once && oi__device_arch_parse_mode(once, arrlen(a.unknown) == 0, &b) != OI_OK)
            __builtin_trap(); /* the writer's output must read */
        char *twice = once ? oi__device_arch_to_json(&b) : NULL;
        if (once && twice && strcmp(once, twice) != 0)
            __builtin_trap(); /* and write to the same text */
        oi_free(twice);
        oi_free(once);
        if (once)
            oi__device_arch_free(&b);
    } else if (oi_last_error()[0] == '\0') {
        __builtin_trap(); /* every refusal says why */
    }
    oi__device_arch_free(&a);
    oi_free(text);
    return 0;
}
