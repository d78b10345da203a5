/* exec_precision.c - activations stored in f16 or bf16 (desc.precision).
 *
 * Storage precision, not arithmetic precision (as ncnn's fp16 storage
 * without fp16 arithmetic): an op reads its inputs as f32, computes and
 * accumulates in f32, and its result is rounded once, to nearest even, into
 * the storage type. That definition is the reference: on the CPU the
 * executor widens 16-bit inputs into f32 buffers, runs the f32 kernel and
 * narrows the result (exec_op in executor.c); a device backend that reads
 * and writes 16-bit words in its shaders does the same in one dispatch.
 *
 * Which slots: f32 temporaries and volatile variables the model does not
 * hold. Inputs (dynamic), constants, model-linked data, prefix tables and
 * persistent state keep their dtypes; a layout op that makes a view keeps
 * its input's storage (nothing is computed, nothing is rounded). */
#include "../kernels/half.h"

/* OPENINFER_PRECISION=f32|f16|bf16 (env.c): the precision of a simulator
 * whose desc leaves it 0, read when the simulator is made. */
static oi_status oi__env_precision(oi_dtype *out) {
    const char *v = oi__env_read().precision;
    *out = OI_DTYPE_F32;
    if (!v)
        return OI_OK;
    oi_dtype t = oi_dtype_from_name(v);
    if (t != OI_DTYPE_F32 && t != OI_DTYPE_F16 && t != OI_DTYPE_BF16)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "OPENINFER_PRECISION=%s: expected f32, f16 or bf16", v);
    *out = t;
    return OI_OK;
}

/* Resolves desc->precision (0: the environment, else f32) and checks that
 * the backend stores activations in it (oi__backend.precisions). */
static oi_status oi__precision_resolve(oi_simulator_desc *desc, const oi__backend *be) {
    if (desc->precision == OI_DTYPE_INVALID) {
        oi_status st = oi__env_precision(&desc->precision);
        if (st != OI_OK)
            return st;
    }
    oi_dtype p = desc->precision;
    if (p != OI_DTYPE_F32 && p != OI_DTYPE_F16 && p != OI_DTYPE_BF16) {
        const char *name = oi_dtype_name(p);
        return oi__fail(OI_ERROR_INVALID_ARGUMENT,
                        "oi_simulator_new: precision %s%s%d: activations are stored in f32 (0, the default), f16 or bf16",
                        name ? name : "", name ? " = " : "", (int)p);
    }
    if (p != OI_DTYPE_F32 && !(be->precisions & (1u << (unsigned)p)))
        return oi__fail(OI_ERROR_UNSUPPORTED,
                        "oi_simulator_new: precision %s: the %s backend computes on f32 data only and cannot store "
                        "activations in %s; use precision f32 with it, or the cpu or vulkan backend (docs/precision.md)",
                        oi_dtype_name(p), be->name, oi_dtype_name(p));
    return OI_OK;
}

bool oi__slot_is_activation(const oi__slot *sl) {
    return sl->dtype == OI_DTYPE_F32 && (sl->kind == OI__MEM_TEMP || sl->kind == OI__MEM_VOLATILE) && !sl->model_tensor &&
           !sl->model_meta && sl->n_indices == 0;
}

static oi_status oi__storage_plan(oi_executor *e) {
    size_t n = (size_t)arrlen(e->plan->slots);
    e->storage = (oi_dtype *)oi__calloc(n ? n : 1, sizeof *e->storage);
    if (!e->storage)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_dtype p = e->sim->desc.precision;
    for (size_t s = 0; s < n; s++) {
        const oi__slot *sl = &e->plan->slots[s];
        e->storage[s] = p != OI_DTYPE_F32 && oi__slot_is_activation(sl) ? p : sl->dtype;
    }
    return OI_OK;
}

/* The dtype slot s's value `t` stands for: its declared dtype when t is
 * stored in the reduced precision, else t's own. */
static oi_dtype oi__logical_dtype(const oi_executor *e, int s, const oi__tensor *t) {
    const oi__slot *sl = oi__slot_of(e, s);
    return e->storage[s] != sl->dtype && t->dtype == e->storage[s] ? sl->dtype : t->dtype;
}

/* ---- conversions: kernels/half.h's scalar forms (the bits of
 * oi_f32_to_f16/bf16 and back); the vector paths below agree with them ---- */
/* F16C: 8 elements per instruction. A group holding a NaN is redone by the
 * scalar code, which drops NaN payloads as dtype.c does (F16C keeps them). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define OI__F16C 1
__attribute__((target("avx2,f16c"))) static int64_t oi__f16_to_f32_f16c(float *d, const uint16_t *s, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            break;
        _mm256_storeu_ps(d + i, v);
    }
    return i;
}

__attribute__((target("avx2,f16c"))) static int64_t oi__f32_to_f16_f16c(uint16_t *d, const float *s, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(s + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            break;
        _mm_storeu_si128((__m128i *)(void *)(d + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}

/* bf16 with AVX2 integer lanes: the same rounding as the scalar code. */
__attribute__((target("avx2"))) static int64_t oi__bf16_to_f32_avx2(float *d, const uint16_t *s, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        _mm256_storeu_si256((__m256i *)(void *)(d + i), _mm256_slli_epi32(x, 16));
    }
    return i;
}

__attribute__((target("avx2"))) static int64_t oi__f32_to_bf16_avx2(uint16_t *d, const float *s, int64_t n) {
    const __m256i half = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(s + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            break;
        __m256i x = _mm256_castps_si256(v);
        __m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(half, _mm256_and_si256(_mm256_srli_epi32(x, 16), one))), 16);
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xD8); /* r0..r7 in the low half */
        _mm_storeu_si128((__m128i *)(void *)(d + i), _mm256_castsi256_si128(packed));
    }
    return i;
}

/* Whether the vector paths may run: the CPU has AVX2 and F16C and
 * OPENINFER_ISA allows AVX2. */
static bool oi__vector_convert_ok(void) {
    static int cpu_has = -1; /* CPUID once: it is slow, and traps in a VM */
    int has = __atomic_load_n(&cpu_has, __ATOMIC_ACQUIRE);
    if (has < 0) {
        __builtin_cpu_init();
        unsigned a = 0, b = 0, c = 0, d = 0; /* clang's __builtin_cpu_supports has no "f16c": CPUID.1:ECX */
        has = __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        __atomic_store_n(&cpu_has, has, __ATOMIC_RELEASE);
    }
    return has && oi__gemm_active_isa() != OI__GEMM_ISA_PORTABLE;
}
#else
#define OI__F16C 0
#endif

/* n floats of `from` at src (elements `stride` apart) into dst as `to`
 * (contiguous); f32 <-> f16/bf16 only. `fast`: AVX2/F16C may be used. */
static void oi__convert_row(oi_dtype to, void *dst, int64_t at, oi_dtype from, const void *src, int64_t first, int64_t stride,
                            int64_t n, bool fast) {
    int64_t done = 0;
#if OI__F16C
    if (fast && stride == 1 && to == OI_DTYPE_F32 && from == OI_DTYPE_F16)
        done = oi__f16_to_f32_f16c((float *)dst + at, (const uint16_t *)src + first, n);
    else if (fast && stride == 1 && to == OI_DTYPE_F16)
        done = oi__f32_to_f16_f16c((uint16_t *)dst + at, (const float *)src + first, n);
    else if (fast && stride == 1 && to == OI_DTYPE_F32)
        done = oi__bf16_to_f32_avx2((float *)dst + at, (const uint16_t *)src + first, n);
    else if (fast && stride == 1)
        done = oi__f32_to_bf16_avx2((uint16_t *)dst + at, (const float *)src + first, n);
#else
    (void)fast;
#endif
    at += done;
    first += done * stride;
    n -= done;
    if (to == OI_DTYPE_F32) {
        float *d = (float *)dst + at;
        const uint16_t *s = (const uint16_t *)src + first;
        if (from == OI_DTYPE_F16)
            for (int64_t i = 0; i < n; i++)
                d[i] = oi__f16_to_f32(s[i * stride], OI__HALF_NAN_QUIET);
        else
            for (int64_t i = 0; i < n; i++)
                d[i] = oi__bf16_to_f32(s[i * stride]);
        return;
    }
    uint16_t *d = (uint16_t *)dst + at;
    const float *s = (const float *)src + first;
    if (to == OI_DTYPE_F16)
        for (int64_t i = 0; i < n; i++)
            d[i] = oi__f32_to_f16(s[i * stride]);
    else
        for (int64_t i = 0; i < n; i++)
            d[i] = oi__f32_to_bf16(s[i * stride]);
}

bool oi__convert_float_rows(oi_dtype to, void *dst, int64_t dst_rs, oi_dtype from, const void *src, int64_t src_rs,
                            int64_t rows, int64_t n) {
    bool narrow = from == OI_DTYPE_F32 && (to == OI_DTYPE_F16 || to == OI_DTYPE_BF16);
    bool widen = to == OI_DTYPE_F32 && (from == OI_DTYPE_F16 || from == OI_DTYPE_BF16);
    if (!narrow && !widen)
        return false;
#if OI__F16C
    bool fast = oi__vector_convert_ok(); /* once for all the rows: short rows are common (attention's heads) */
#else
    bool fast = false;
#endif
    for (int64_t r = 0; r < rows; r++)
        oi__convert_row(to, dst, r * dst_rs, from, src, r * src_rs, 1, n, fast);
    return true;
}

bool oi__convert_floats(oi_dtype to, void *dst, oi_dtype from, const void *src, int64_t n) {
    return oi__convert_float_rows(to, dst, n, from, src, n, 1, n);
}

/* Converts every element of t (any layout) into the contiguous tensor dst
 * of the same shape: rows along the last dim. */
static void oi__convert_tensor(oi__tensor *dst, const oi__tensor *t) {
    int nd = t->ndim;
    int64_t numel = oi__shape_numel(nd, t->shape);
    if (numel == 0)
        return;
    int64_t row = nd ? t->shape[nd - 1] : 1, stride = nd ? t->strides[nd - 1] : 1;
    int64_t index[OI_MAX_DIMS] = {0};
#if OI__F16C
    bool fast = oi__vector_convert_ok();
#else
    bool fast = false;
#endif
    for (int64_t at = 0; at < numel; at += row) {
        int64_t first = t->offset;
        for (int d = 0; d < nd - 1; d++)
            first += index[d] * t->strides[d];
        oi__convert_row(dst->dtype, oi__tensor_data(dst), at, t->dtype, oi__tensor_data(t), first, stride, row, fast);
        for (int d = nd - 2; d >= 0 && ++index[d] == t->shape[d]; d--)
            index[d] = 0;
    }
}

/* A contiguous copy of t (f32, f16 or bf16, host copy current) as `to`,
 * on the context's spare bytes. */
static oi__tensor *oi__converted(oi__ctx *c, const oi__tensor *t, oi_dtype to) {
    oi__tensor *out = oi__ctx_new_tensor(c, to, t->ndim, t->shape, false);
    if (out)
        oi__convert_tensor(out, t);
    return out;
}

/* Rounds the f32 result src into dst (contiguous, the storage dtype). */
static oi_status oi__narrow_into(oi__tensor *dst, const oi__tensor *src) {
    oi__convert_tensor(dst, src);
    return OI_OK;
}
