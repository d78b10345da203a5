/* lang.c - what differs between the C-family languages the renderer
 * prints, one small struct per language, side by side: C (the CPU
 * target) and GLSL (the Vulkan target's kernels, f32 only for now). */
#include "synth_internal.h"

static const char *oi__sy_c_type(oi_dtype t) {
    switch (t) {
    case OI_DTYPE_F32: return "float";
    case OI_DTYPE_F64: return "double";
    case OI_DTYPE_I8: return "int8_t";
    case OI_DTYPE_I16: return "int16_t";
    case OI_DTYPE_I32: return "int32_t";
    case OI_DTYPE_I64: return "int64_t";
    case OI_DTYPE_U8: return "uint8_t";
    case OI_DTYPE_U16: return "uint16_t";
    case OI_DTYPE_U32: return "uint32_t";
    case OI_DTYPE_U64: return "uint64_t";
    case OI_DTYPE_BOOL: return "unsigned char";
    case OI_DTYPE_F16: return "uint16_t"; /* its bits: the C target only copies f16 */
    default: return NULL;
    }
}

/* The f32 forms math.c's oi__math_f32 calls: scalar_math.h's where it has
 * one (the same bits in C and GLSL), else libm's (C) or math.glsl's. */
const char *oi__sy_shared_math(oi_op op, bool gelu_tanh) {
    switch (op) {
    case OI_OP_exp: return "OI_S_exp_f32";
    case OI_OP_tanh: return "OI_S_tanh_f32";
    case OI_OP_sigmoid: return "OI_S_sigmoid_f32";
    case OI_OP_silu: return "OI_S_silu_f32";
    case OI_OP_gelu: return gelu_tanh ? "OI_S_gelu_tanh_f32" : "OI_S_gelu_erf_f32";
    default: return NULL;
    }
}

static const char *oi__sy_c_math(oi_op op, bool gelu_tanh) {
    switch (op) {
    case OI_OP_sqrt: return "sqrtf";
    case OI_OP_log: return "logf";
    case OI_OP_erf: return "erff";
    default: return oi__sy_shared_math(op, gelu_tanh);
    }
}

static const char *oi__sy_glsl_math(oi_op op, bool gelu_tanh) {
    switch (op) {
    case OI_OP_sqrt: return "sqrt";
    case OI_OP_log: return "log_f32";
    case OI_OP_erf: return "erf_f32";
    default: return oi__sy_shared_math(op, gelu_tanh);
    }
}

static const char *oi__sy_c_compute_fn(oi_op op) {
    switch (op) {
    case OI_OP_abs: return "fabs";
    case OI_OP_min: return "fmin"; /* a NaN operand is ignored */
    case OI_OP_max: return "fmax";
    case OI_OP_floor: return "floor";
    case OI_OP_ceil: return "ceil";
    case OI_OP_round: return "round"; /* halves away from zero */
    case OI_OP_trunc: return "trunc";
    default: return NULL;
    }
}

static const char *oi__sy_glsl_compute_fn(oi_op op) {
    switch (op) {
    case OI_OP_abs: return "abs";
    case OI_OP_floor: return "floor";
    case OI_OP_ceil: return "ceil";
    case OI_OP_trunc: return "trunc";
    default: return NULL; /* min, max: NaN undefined; round: halves either way */
    }
}

const oi__sy_lang oi__sy_lang_c = {
    "c",
    "size_t",
    "unsigned char",
    oi__sy_c_type,
    "double",
    "OI_ROUND_F32", /* defined in the emitted .c: ((double)(float)(x)) */
    "expf",
    "(double)",
    "[", "]",
    false,
    oi__sy_c_math,
    oi__sy_c_compute_fn,
};

static const char *oi__sy_glsl_type(oi_dtype t) { return t == OI_DTYPE_F32 ? "float" : NULL; }

/* GLSL computes in float (the simulator's Vulkan shaders do too), so the
 * rounding after each op is the identity (oi_kernel.glsl defines it);
 * a variable is a macro over the buffer that holds it: h(i). */
const oi__sy_lang oi__sy_lang_glsl = {
    "glsl",
    "uint",
    "uint",
    oi__sy_glsl_type,
    "float",
    "OI_ROUND_F32",
    "exp_f32",
    "",
    "(", ")",
    true,
    oi__sy_glsl_math,
    oi__sy_glsl_compute_fn,
};
