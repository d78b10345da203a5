/* fuzz_oinf.c - libFuzzer target: the .oinf reader on arbitrary bytes.
 * Opening must either succeed or fail cleanly; when it succeeds, every
 * accessor and every tensor payload is touched. */
#include "../../openinfer_impl/internal.h" /* the library: fuzz_lib.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    oi_model *m = oi_model_open_memory(data, size);
    if (!m)
        return 0;
    uint64_t value = 0;
    const char *name = NULL;
    for (size_t i = 0; i < oi_model_sizevar_count(m); i++)
        oi_model_sizevar_at(m, i, &name, &value);
    for (size_t i = 0; i < oi_model_metadata_count(m); i++) {
        const oi_metadata_info *info = oi_model_metadata_at(m, i);
        const char *text = NULL;
        size_t len = 0;
        if (info && info->type == OI_DTYPE_STRING)
            oi_model_metadata_string(m, info->key, &text, &len);
    }
    for (size_t i = 0; i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        const void *bytes = NULL;
        if (t && t->has_data && oi_model_tensor_data(m, t, &bytes) == OI_OK && t->data_nbytes) {
            volatile uint8_t sink = ((const uint8_t *)bytes)[t->data_nbytes - 1];
            (void)sink;
        }
    }
    oi_model_close(m);
    return 0;
}
