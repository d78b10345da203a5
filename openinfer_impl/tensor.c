/* tensor.c - runtime tensor values: shape, strides and shared storage. */
#include "internal.h"

int64_t oi__shape_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

void oi__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = stride;
        stride *= shape[i];
    }
}

static oi__tensor *oi__tensor_header(oi_dtype dtype, int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > OI_MAX_DIMS) {
        oi__fail(OI_ERROR_UNSUPPORTED, "tensor rank %d exceeds the maximum of %d", ndim, OI_MAX_DIMS);
        return NULL;
    }
    int64_t numel = 1; /* no element count or byte size below may overflow */
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] != 0 && numel > OI__MAX_ELEMENTS / shape[i])) {
            oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory: a tensor with dim %d = %lld %s", i, (long long)shape[i],
                     shape[i] < 0 ? "(negative)" : "has more than 2^60 elements");
            return NULL;
        }
        numel *= shape[i];
    }
    oi__tensor *t = (oi__tensor *)oi__calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    oi__contiguous_strides(ndim, t->shape, t->strides);
    return t;
}

static oi__storage *oi__storage_new(void *data, size_t nbytes, bool borrowed) {
    oi__storage *s = (oi__storage *)oi__calloc(1, sizeof *s);
    if (s) {
        s->data = data;
        s->nbytes = nbytes;
        s->refcount = 1;
        s->borrowed = borrowed;
    }
    return s;
}

oi__tensor *oi__tensor_new(oi_dtype dtype, int ndim, const int64_t *shape) {
    return oi__tensor_adopt(dtype, ndim, shape, NULL, true);
}

oi__tensor *oi__tensor_adopt(oi_dtype dtype, int ndim, const int64_t *shape, void *spare, bool zero) {
    oi__tensor *t = oi__tensor_header(dtype, ndim, shape);
    if (!t) {
        oi__free(spare);
        return NULL;
    }
    size_t nbytes = (size_t)oi_dtype_nbytes(dtype, (uint64_t)oi__shape_numel(ndim, shape));
    void *data = spare ? spare : zero ? oi__calloc(1, nbytes ? nbytes : 1) : oi__malloc(nbytes ? nbytes : 1);
    if (spare && zero)
        memset(spare, 0, nbytes);
    t->storage = data ? oi__storage_new(data, nbytes, false) : NULL;
    if (!t->storage) {
        oi__free(data);
        oi__free(t);
        return NULL;
    }
    return t;
}

oi__tensor *oi__tensor_wrap(oi_dtype dtype, int ndim, const int64_t *shape, const void *data) {
    oi__tensor *t = oi__tensor_header(dtype, ndim, shape);
    if (!t)
        return NULL;
    size_t nbytes = (size_t)oi_dtype_nbytes(dtype, (uint64_t)oi__shape_numel(ndim, shape));
    t->storage = oi__storage_new((void *)data, nbytes, true);
    if (!t->storage) {
        oi__free(t);
        return NULL;
    }
    return t;
}

oi__tensor *oi__tensor_share(const oi__tensor *t) {
    oi__tensor *copy = (oi__tensor *)oi__malloc(sizeof *copy);
    if (!copy)
        return NULL;
    *copy = *t;
    if (copy->storage)
        copy->storage->refcount++;
    return copy;
}

bool oi__tensor_is_contiguous(const oi__tensor *t) {
    int64_t expect[OI_MAX_DIMS];
    oi__contiguous_strides(t->ndim, t->shape, expect);
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] != 1 && t->strides[i] != expect[i])
            return false;
    return true;
}

/* Copies element by element through the dtype's widest integer or float
 * form, which is exact for every dtype. */
oi__tensor *oi__tensor_clone(const oi__tensor *t) {
    oi__tensor *out = oi__tensor_new(t->dtype, t->ndim, t->shape);
    if (!out)
        return NULL;
    int64_t numel = oi__shape_numel(t->ndim, t->shape);
    if (oi__tensor_is_contiguous(t) && !oi__dtype_is_packed(t->dtype)) {
        size_t esize = oi_dtype_bits(t->dtype) / 8;
        memcpy(oi__tensor_data(out), (char *)oi__tensor_data(t) + t->offset * (int64_t)esize, (size_t)numel * esize);
        return out;
    }
    int64_t index[OI_MAX_DIMS] = {0};
    for (int64_t i = 0; i < numel; i++) {
        int64_t src = t->offset;
        for (int d = 0; d < t->ndim; d++)
            src += index[d] * t->strides[d];
        oi__store_bits(t->dtype, oi__tensor_data(out), i, oi__load_bits(t->dtype, oi__tensor_data(t), src));
        for (int d = t->ndim - 1; d >= 0 && ++index[d] == t->shape[d]; d--)
            index[d] = 0;
    }
    return out;
}

void *oi__tensor_release_data(oi__tensor *t, size_t *nbytes) {
    void *data = NULL;
    *nbytes = 0;
    if (t && t->storage && t->storage->refcount == 1 && !t->storage->borrowed && !t->storage->device_owner &&
        !t->storage->gemm_packed && t->storage->nbytes > 0) {
        data = t->storage->data;
        *nbytes = t->storage->nbytes;
        t->storage->data = NULL;
    }
    oi__tensor_free(t);
    return data;
}

void oi__tensor_free(oi__tensor *t) {
    if (!t)
        return;
    if (t->storage && --t->storage->refcount == 0) {
        if (t->storage->device_owner && t->storage->device_owner->release)
            t->storage->device_owner->release(t->storage->device_ctx, t->storage);
        if (!t->storage->borrowed)
            oi__free(t->storage->data);
        oi__gemm_packed_free(t->storage->gemm_packed);
        oi__free(t->storage);
    }
    oi__free(t);
}
