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
    case OI_DTYPE_F16: return "uint16_t"; /* its bits (half.h's conversions) */
    case OI_DTYPE_BF16: return "uint16_t";
    default: return NULL;
    }
}

/* An elementwise op's function in one language: OI__SY_EW_LIST's column
 * (gelu's approximate="tanh" form is a function of its own). */
static const char *oi__sy_ew_fn(oi_op op, bool gelu_tanh, bool glsl) {
    const oi__sy_ew_op *e = oi__sy_ew_op_of(op);
    if (!e || e->form == OI__SY_EW_SCALAR)
        return NULL;
    if (op == OI_OP_gelu && gelu_tanh)
        return "OI_S_gelu_tanh_f32";
    return glsl ? e->glsl_fn : e->c_fn;
}

static const char *oi__sy_c_ew_fn(oi_op op, bool gelu_tanh) { return oi__sy_ew_fn(op, gelu_tanh, false); }

static const char *oi__sy_glsl_ew_fn(oi_op op, bool gelu_tanh) { return oi__sy_ew_fn(op, gelu_tanh, true); }

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
    oi__sy_c_ew_fn,
};

/* f32; i32 and i64 (the integer arithmetic vulkan_check.c takes; int64_t in
 * the kernels that enable GL_EXT_shader_explicit_arithmetic_types_int64); a
 * bool is a byte the Vulkan target stores through NAME_write, and so is an
 * i64 through its two words (vulkan_kernels.c) */
static const char *oi__sy_glsl_type(oi_dtype t) {
    return t == OI_DTYPE_F32 ? "float" : t == OI_DTYPE_I32 ? "int" : t == OI_DTYPE_I64 ? "int64_t"
         : t == OI_DTYPE_BOOL ? "uint" : NULL;
}

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
    oi__sy_glsl_ew_fn,
};
