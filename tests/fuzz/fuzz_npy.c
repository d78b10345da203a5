/* fuzz_npy.c - libFuzzer target: the .npy reader (openinfer_impl/npy.h,
 * compiled alone, as emitted folders compile it). Beyond "no crash": an
 * array that loads is written again with the writer's header and must load
 * to the same dtype, shape and bytes, with its data 64-byte aligned. */
#define OI_NPY_IMPLEMENTATION
#include "../../openinfer_impl/npy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const oi_npy_array *a) {
    size_t nbytes = (size_t)a->count * oi_npy_dtype_size(a->dtype);
    size_t hlen = oi_npy_format_header(NULL, 0, a->dtype, a->ndim, a->shape);
    if (hlen == 0 || hlen % 64 != 0)
        __builtin_trap(); /* every array that reads can be written, aligned */
    unsigned char *file = (unsigned char *)malloc(hlen + nbytes);
    if (!file)
        return;
    if (oi_npy_format_header((char *)file, hlen, a->dtype, a->ndim, a->shape) != hlen)
        __builtin_trap();
    memcpy(file + hlen, a->data, nbytes);
    oi_npy_array again;
    oi_npy_error err;
    if (oi_npy_load(file, hlen + nbytes, &again, &err) != OI_NPY_OK)
        __builtin_trap(); /* the writer's output must read */
    if (again.dtype != a->dtype || again.ndim != a->ndim || again.count != a->count ||
        memcmp(again.shape, a->shape, sizeof a->shape) != 0 || memcmp(again.data, a->data, nbytes) != 0)
        __builtin_trap(); /* and read back to the same array */
    oi_npy_array_free(&again);
    free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    oi_npy_header h;
    oi_npy_error err;
    if (oi_npy_parse_header(data, size, &h, &err) == OI_NPY_OK &&
        (h.data_offset > size || (h.ndim == 0 && h.count != 1)))
        __builtin_trap(); /* a parsed header lies within the input */
    oi_npy_array a;
    if (oi_npy_load(data, size, &a, &err) == OI_NPY_OK) {
        check_round_trip(&a);
        oi_npy_array_free(&a);
    } else if (err.message[0] == '\0' || err.status == OI_NPY_OK) {
        __builtin_trap(); /* every failure says why */
    }
    return 0;
}
