/* cast.c - dtype conversion. Floats round to nearest even into smaller
 * floats; integers widen exactly; floats become integers by
 * `rounding_mode`, then saturate to the target range (saturate=false
 * wraps modulo 2^width instead). NaN becomes 0. */
#include "../openinfer_impl/internal.h"
#include "half.h"
#include "scalar.h" /* OI_S_cast_saturate: the emitted code's cast is the same */

typedef enum oi__cast_rounding { OI__ROUND_TRUNC, OI__ROUND_FLOOR, OI__ROUND_CEIL, OI__ROUND_NEAREST } oi__cast_rounding;

static oi__cast_rounding oi__cast_rounding_of(const oi__kernel_args *k) {
    const oi__attr *a = oi__op_attr_for(k, "rounding_mode");
    if (!a)
        return OI__ROUND_TRUNC;
    if (strcmp(a->s, "floor") == 0)
        return OI__ROUND_FLOOR;
    if (strcmp(a->s, "ceil") == 0)
        return OI__ROUND_CEIL;
    if (strcmp(a->s, "nearest") == 0)
        return OI__ROUND_NEAREST;
    return OI__ROUND_TRUNC;
}

static double oi__cast_round(double v, oi__cast_rounding mode) {
    switch (mode) {
    case OI__ROUND_FLOOR: return floor(v);
    case OI__ROUND_CEIL: return ceil(v);
    case OI__ROUND_NEAREST: return round(v); /* halves away from zero */
    default: return trunc(v);
    }
}

oi__cast_range oi__cast_range_of(oi_dtype t) {
    unsigned bits = oi_dtype_bits(t);
    bool is_signed = oi__dtype_is_signed(t);
    oi__cast_range r;
    r.lo = is_signed ? -ldexp(1.0, (int)bits - 1) : 0.0;
    r.hi_excl = ldexp(1.0, is_signed ? (int)bits - 1 : (int)bits);
    r.lo_i = !is_signed ? 0 : bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    r.hi_i = is_signed ? (int64_t)(((uint64_t)1 << (bits - 1)) - 1u) : 0;
    r.hi_u = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1u;
    return r;
}

/* An integral double into the target integer: clamped to its range, or
 * reduced modulo 2^64 (the store then wraps to the width). */
static void oi__cast_store_integer(oi_dtype t, void *data, int64_t at, double v, bool saturate) {
    if (v != v) {
        oi__store_u64(t, data, at, 0);
        return;
    }
    if (saturate) {
        oi__cast_range r = oi__cast_range_of(t);
        if (oi__dtype_is_signed(t))
            oi__store_i64(t, data, at, OI_S_cast_saturate(v, r.lo, r.hi_excl, r.lo_i, r.hi_i, (int64_t)));
        else
            oi__store_u64(t, data, at, OI_S_cast_saturate(v, 0.0, r.hi_excl, 0u, r.hi_u, (uint64_t)));
        return;
    }
    if (fabs(v) < 9223372036854775808.0) {
        oi__store_i64(t, data, at, (int64_t)v);
        return;
    }
    double r = fmod(v, 18446744073709551616.0); /* exact; |r| < 2^64 */
    if (r < 0)
        r += 18446744073709551616.0;
    oi__store_u64(t, data, at, r >= 18446744073709551616.0 ? 0u : (uint64_t)r);
}

/* ---- contiguous float casts ----
 * f16/bf16/f32 into each other when both sides are contiguous and of one
 * shape: straight loops instead of the generic path's per-element f64
 * round trip (36 ns per element for f16 -> f32 before), with the same
 * results, bit for bit: half.h's conversions, which oi_f16_to_f32 and
 * the others are (NaN becomes the quiet NaN of its sign). */
static bool oi__cast_fast(const oi__tensor *in, oi__tensor *out) {
    oi_dtype from = in->dtype, to = out->dtype;
    bool floats = (from == OI_DTYPE_F16 || from == OI_DTYPE_BF16 || from == OI_DTYPE_F32) &&
                  (to == OI_DTYPE_F16 || to == OI_DTYPE_BF16 || to == OI_DTYPE_F32);
    if (!floats || in->ndim != out->ndim || !oi__tensor_is_contiguous(in) || !oi__tensor_is_contiguous(out))
        return false;
    for (int d = 0; d < in->ndim; d++)
        if (in->shape[d] != out->shape[d])
            return false;
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    const char *src = (const char *)oi__op_cdata(in) + (size_t)in->offset * (oi_dtype_bits(from) / 8);
    char *dst = (char *)oi__tensor_data(out) + (size_t)out->offset * (oi_dtype_bits(to) / 8);
    if (from == to) {
        memmove(dst, src, (size_t)n * (oi_dtype_bits(to) / 8));
        return true;
    }
    for (int64_t i = 0; i < n; i++) {
        float v;
        uint16_t h;
        if (from == OI_DTYPE_F32) {
            memcpy(&v, src + 4 * i, 4);
        } else {
            memcpy(&h, src + 2 * i, 2);
            v = from == OI_DTYPE_F16 ? oi__f16_to_f32(h, OI__HALF_NAN_QUIET) : oi__bf16_to_f32(h);
        }
        if (to == OI_DTYPE_F32) {
            memcpy(dst + 4 * i, &v, 4);
        } else {
            h = to == OI_DTYPE_F16 ? oi__f32_to_f16(v) : oi__f32_to_bf16(v);
            memcpy(dst + 2 * i, &h, 2);
        }
    }
    return true;
}

static oi_status oi__k_cast(const oi__kernel_args *k) {
    const oi__tensor *in = k->in[0];
    oi__tensor *out = k->out;
    oi_dtype from = in->dtype, to = out->dtype;
    if (oi__cast_fast(in, out))
        return OI_OK;
    oi__cast_rounding mode = oi__cast_rounding_of(k);
    bool saturate = oi__op_param_bool(k, "saturate");
    void *out_data = oi__tensor_data(out);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    oi__ew_iter it;
    oi__ew_init(&it, k->in, 1, out);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it)) {
        int64_t src = it.at[0], dst = it.at[1];
        if (oi__dtype_is_float(to)) {
            oi__store_f64(to, out_data, dst, oi__load_f64(from, oi__op_cdata(in), src));
        } else if (oi__dtype_is_float(from)) {
            double v = oi__cast_round(oi__load_f64(from, oi__op_cdata(in), src), mode);
            oi__cast_store_integer(to, out_data, dst, v, saturate);
        } else if (oi__dtype_is_signed(from)) {
            oi__store_i64(to, out_data, dst, oi__load_i64(from, oi__op_cdata(in), src));
        } else {
            oi__store_u64(to, out_data, dst, oi__load_u64(from, oi__op_cdata(in), src));
        }
    }
    return OI_OK;
}
