/* gen_ops_md.c - prints docs/ops.md from the op table (kernels/op_list.h).
 *   gen_ops_md                 writes the page to stdout
 *   gen_ops_md --check FILE    exits 1 if FILE differs from the page
 * Regenerate: build-dir/tools/gen_ops_md > docs/ops.md */
#include "../openinfer.h"
#include "../vulkan/vk_coverage.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_row {
    const char *name;
    int arity;
    const char *category, *shape, *out;
    unsigned flags;
    uint32_t dtypes, acc_dtypes;
    const char *summary;
} op_row;

#define OP_ROW(name, arity, category, shape, out, flags, dtypes, acc_dtypes, kernel, summary) \
    {#name, arity, category, #shape, #out, flags, dtypes, acc_dtypes, summary},
static const op_row ops[] = {OI_OP_LIST(OP_ROW)};

typedef struct param_row {
    const char *op, *name, *type, *required, *default_text, *doc;
} param_row;

#define PARAM_ROW(op, name, type, required, def, default_text, doc) \
    {#op, #name, #type, #required, default_text, doc},
static const param_row params[] = {OI_PARAM_LIST(PARAM_ROW)};

/* The dtypes an op runs with on the Vulkan backend: its row's dtypes
 * within OI__DTS_VULKAN when the op has a shader (vk_coverage.h), else
 * none; and 64-bit ones for the ops that move data, or compute in the
 * wide shaders (vk_coverage.h says which; f64 less OI_VULKAN_F64_ON_CPU). */
#define VK_ROW(name, shader) {#name, #shader},
static const struct {
    const char *op, *shader;
} vulkan_ops[] = {OI_VULKAN_OP_LIST(VK_ROW)};
static const struct {
    const char *op, *shader;
} vulkan_core_ops[] = {OI_VULKAN_OPS_CORE(VK_ROW)};
#define VK_NAME(name) #name,
static const char *const vulkan_wide_moves[] = {OI_VULKAN_OPS_WIDE_MOVES(VK_NAME)};
static const char *const vulkan_f64_on_cpu[] = {OI_VULKAN_F64_ON_CPU(VK_NAME)};

static bool listed(const char *const *names, size_t n, const char *op) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], op) == 0)
            return true;
    return false;
}
#define LISTED(names, op) listed(names, sizeof names / sizeof names[0], op)

/* 64-bit dtypes run on the GPU: 1 on every device, 2 where it has
 * shaderInt64 and shaderFloat64, 0 never. */
static int vulkan_wide_kind(const char *op) {
    if (LISTED(vulkan_wide_moves, op))
        return 1;
    if (strcmp(op, "where") == 0)
        return 2;
    for (size_t i = 0; i < sizeof vulkan_core_ops / sizeof vulkan_core_ops[0]; i++)
        if (strcmp(vulkan_core_ops[i].op, op) == 0 &&
            (strcmp(vulkan_core_ops[i].shader, "eltwise") == 0 || strcmp(vulkan_core_ops[i].shader, "reduce") == 0))
            return 2;
    return 0;
}

static uint32_t vulkan_dtypes(const char *op, uint32_t dtypes) {
    for (size_t i = 0; i < sizeof vulkan_ops / sizeof vulkan_ops[0]; i++) {
        if (strcmp(vulkan_ops[i].op, op) != 0)
            continue;
        uint32_t wide = vulkan_wide_kind(op) ? OI__DTS_VULKAN_WIDE : 0;
        if (LISTED(vulkan_f64_on_cpu, op))
            wide &= ~OI__DTS(F64);
        return dtypes & (OI__DTS_VULKAN | wide);
    }
    return 0;
}

/* The page is built in memory so --check can compare it. */
static char *page;
static size_t page_len, page_cap;

static void put(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char buf[4096];
    int n = vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    if (page_len + (size_t)n + 1 > page_cap) {
        page_cap = (page_len + (size_t)n + 1) * 2;
        page = (char *)realloc(page, page_cap);
        if (!page) {
            fprintf(stderr, "gen_ops_md: out of memory\n");
            exit(2);
        }
    }
    memcpy(page + page_len, buf, (size_t)n + 1);
    page_len += (size_t)n;
}

typedef struct dtype_group {
    const char *name;
    uint32_t set;
} dtype_group;

static const dtype_group groups[] = {
    {"F", OI__DTS_F}, {"S", OI__DTS_S}, {"U", OI__DTS_U}, {"Pi", OI__DTS_PI}, {"Pu", OI__DTS_PU}, {"T", OI__DTS_T},
};

/* "F S Pi bool": whole groups by their letter, the rest by name. */
static void put_dtypes(uint32_t set) {
    const char *sep = "";
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        if ((set & groups[g].set) == groups[g].set) {
            put("%s%s", sep, groups[g].name);
            set &= ~groups[g].set;
            sep = " ";
        }
    }
    for (int t = 1; t < OI_DTYPE_COUNT; t++) {
        if (set & (1u << (unsigned)t)) {
            put("%s%s", sep, oi_dtype_name((oi_dtype)t));
            sep = " ";
        }
    }
    if (!*sep)
        put("-");
}

static const char *out_text(const char *rule) {
    if (strcmp(rule, "SAME") == 0)
        return "same as input";
    if (strcmp(rule, "TO") == 0)
        return "`to`";
    if (strcmp(rule, "BOOL") == 0)
        return "bool";
    if (strcmp(rule, "I8") == 0)
        return "i8";
    if (strcmp(rule, "U8") == 0)
        return "u8";
    if (strcmp(rule, "F32") == 0)
        return "f32";
    return "i64";
}

static const char *shape_text(const char *rule, unsigned flags) {
    if (strcmp(rule, "EW") == 0)
        return (flags & OI__F_B) ? "elementwise, numpy broadcasting" : "elementwise";
    if (strcmp(rule, "MATMUL") == 0)
        return "[..., M, K] x [..., K, N] -> [broadcast batch, M, N]";
    if (strcmp(rule, "REDUCE") == 0)
        return "`axes` dropped (size 1 with `keepdims`)";
    if (strcmp(rule, "ARGREDUCE") == 0)
        return "`axis` dropped (size 1 with `keepdims`)";
    if (strcmp(rule, "CUSTOM") == 0)
        return "op-specific (see the summary and the parameters)";
    return "scalar `[]`";
}

static const char *type_text(const char *type) {
    if (strcmp(type, "ACC") == 0)
        return "dtype or [acc, out]";
    if (strcmp(type, "SCALAR") == 0)
        return "number";
    if (strcmp(type, "INT_LIST") == 0)
        return "int list";
    if (strcmp(type, "ALIAS") == 0)
        return "alias";
    if (strcmp(type, "BOOL") == 0)
        return "bool";
    if (strcmp(type, "INT") == 0)
        return "int";
    if (strcmp(type, "DTYPE") == 0)
        return "dtype";
    return "string";
}

static void put_header(void) {
    put("# Ops\n\n");
    put("<!-- Generated by tools/gen_ops_md.c from kernels/op_list.h; do not edit.\n");
    put("     Regenerate: build/tools/gen_ops_md > docs/ops.md (the ops_md_fresh test fails when stale). -->\n\n");
    put("Every op has one output. Parameters are named: `op relu(h, negative_slope=0.01) >> h;`\n");
    put("(`OI_OP(relu, h, negative_slope=0.01) OI_TO(h)`). An unknown, repeated or mistyped parameter,\n");
    put("a missing required one, an unsupported dtype or incompatible shapes is a validation error that\n");
    put("names the op and the statement.\n\n");
    put("Dtype groups: **F** = f8 (E5M2) bf16 f16 f32 f64; **S** = i8 i16 i32 i64; **U** = u8 u16 u32 u64;\n");
    put("**Pi** = i1 i2 i4; **Pu** = u1 u2 u4; **T** = t1 t2 (ternary). All inputs of an op share one dtype\n");
    put("(filter's condition may also be bool; gather's indices are integers, where's condition is bool).\n\n");
    put("Backends: the CPU kernels (kernels/) are the reference and run every row. The Vulkan backend runs\n");
    put("f32 f16 bf16 i8 i16 i32 u8 u16 u32 bool without `acc=`, and i64 u64 f64 in the ops that move data\n");
    put("and, where the device has shaderInt64 and shaderFloat64, in the elementwise ops and reductions (f64\n");
    put("exp, log and the other transcendentals aside); anything else falls back to the CPU kernel.\n\n");
    put("Flags: **B** numpy broadcasting of the inputs (stride 0, nothing is copied), **I** the output may be\n");
    put("the first input (in-place), **A** takes `acc=`.\n\n");
}

static void put_rules(void) {
    put("## Numeric rules\n\n");
    put("- Integers compute in 64-bit two's complement and wrap to the output width (add, sub, mul, neg,\n");
    put("  abs, matmul, sums and products). Packed types (i1 i2 i4 u1 u2 u4) are sign- or zero-extended,\n");
    put("  computed the same way and wrapped to their width: u1 1 + 1 = 0, i4 7 + 1 = -8.\n");
    put("- bool: add is OR, mul is AND, and/or/xor/not are logical; bitset computes as u8.\n");
    put("- f8, bf16 and f16 are converted to f32, the op computes in f32 and the result is rounded once,\n");
    put("  to nearest with ties to even. f32 computes in f32, f64 in f64.\n");
    put("- Float division by zero gives `div_by_zero_mask` (NaN unless set); integer division by zero\n");
    put("  gives the mask (0 unless set); MIN / -1 wraps to MIN; rem by 0 gives 0.\n");
    put("- Shifts: `bits` < 0 counts as 0; shifting by the width or more shifts every bit out (0, or -1\n");
    put("  for a negative value under shr).\n\n");
    put("## Accumulation (`acc=`)\n\n");
    put("`acc=` names the accumulator dtype: `acc=i32`, or HEAD's list form `acc=[f32, f32]`, read as\n");
    put("`[accumulator, output]`. Without `acc=`, an output declared with a valid accumulator dtype selects\n");
    put("the same mode. Integer inputs accumulate in a strictly wider integer of the same signedness\n");
    put("(i4 -> i8/i16/i32/i64, u8 -> u16/u32/u64, ...); float inputs accumulate in f32 or f64, never in a\n");
    put("narrower type (`acc=[f16, f16]` on f32 is an error). The output dtype is the accumulator, or the\n");
    put("input dtype when the list names it (`acc=[f32, f16]` on f16 data: accumulate in f32, round once).\n\n");
    put("matmul and the reductions on f8/bf16/f16 always accumulate in f32 and round once at the end. The\n");
    put("original rounded its matmul accumulator to the element type after every multiply-add; with f16,\n");
    put("2048 + 1 + 1 then stays 2048 (each + 1 is a tie that rounds back down), while one rounding at\n");
    put("the end gives 2050. Rounding once is more accurate, matches what numpy and GPU tensor cores do,\n");
    put("and makes the CPU reference agree with a Vulkan shader that accumulates in f32 registers.\n\n");
    put("## Where we differ from the original\n\n");
    put("- f8 (E5M2) rounds to nearest even with the carry into the exponent: 1.9 -> 2.0 (the original's\n");
    put("  encoder dropped the carry: 1.9 -> 1.0).\n");
    put("- `cast` with `saturate=false` wraps modulo 2^width (the original saturated either way).\n");
    put("- `floor_div` rounds toward -inf as its name says (the original used Euclidean division, which\n");
    put("  differs for negative divisors: 7 // -2 is -4 here, -3 there).\n");
    put("- Shifts by 64 or more shift everything out (the original shifted by `bits` mod 64).\n");
    put("- Broadcasting is allowed for every multi-input elementwise op (the original: arithmetic only).\n");
    put("- mul, neg, sign, is_neg, eq, ne, filter, fill and cast accept t1/t2; matmul and the sums\n");
    put("  accept them with `acc=`; relu takes the seed's `negative_slope` and `clamp_min`.\n\n");
}

static void put_summary(void) {
    put("## Summary\n\n");
    put("| op | in | output dtype | B/I/A | CPU dtypes | Vulkan dtypes | semantics |\n");
    put("|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const op_row *o = &ops[i];
        put("| [%s](#%s) | %d | %s | %s/%s/%s | ", o->name, o->name, o->arity, out_text(o->out),
            (o->flags & OI__F_B) ? "B" : "-", (o->flags & OI__F_I) ? "I" : "-", (o->flags & OI__F_A) ? "A" : "-");
        put_dtypes(o->dtypes);
        put(" | ");
        put_dtypes(vulkan_dtypes(o->name, o->dtypes));
        put(" | %s |\n", o->summary);
    }
    put("\n");
}

static void put_op(const op_row *o) {
    put("### %s\n\n", o->name);
    put("%s. *%s*, %d input%s.\n\n", o->summary, o->category, o->arity, o->arity == 1 ? "" : "s");
    put("- Shape: %s.\n", shape_text(o->shape, o->flags));
    put("- Output dtype: %s%s.\n", out_text(o->out), (o->flags & OI__F_A) ? " (the `acc=` output dtype when accumulating)" : "");
    put("- CPU dtypes: ");
    put_dtypes(o->dtypes);
    put(".\n- Vulkan dtypes: ");
    put_dtypes(vulkan_dtypes(o->name, o->dtypes));
    if (vulkan_wide_kind(o->name) == 2 && (vulkan_dtypes(o->name, o->dtypes) & OI__DTS_VULKAN_WIDE))
        put("; the 64-bit ones where the device has shaderInt64 and shaderFloat64");
    put(" (other dtypes, `acc=` and layouts the shaders cannot walk run on the CPU kernel).\n");
    if (o->flags & OI__F_A) {
        put("- With `acc=`: ");
        put_dtypes(o->acc_dtypes);
        put(".\n");
    }
    put("- In-place: %s.\n", (o->flags & OI__F_I) ? "yes" : "no");
    bool any = false;
    for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
        if (strcmp(params[p].op, o->name) != 0)
            continue;
        if (!any)
            put("\n| parameter | type | default | meaning |\n|---|---|---|---|\n");
        any = true;
        const param_row *r = &params[p];
        if (strcmp(r->type, "ALIAS") == 0)
            put("| `%s` | alias | - | same as `%s`: %s |\n", r->name, r->default_text, r->doc);
        else
            put("| `%s` | %s | %s | %s |\n", r->name, type_text(r->type),
                strcmp(r->required, "REQ") == 0 ? "**required**" : r->default_text, r->doc);
    }
    put("\n");
}

static int check_against(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gen_ops_md: cannot open %s\n", path);
        return 1;
    }
    char *have = (char *)malloc(page_len + 2);
    size_t n = have ? fread(have, 1, page_len + 1, f) : 0;
    fclose(f);
    int same = have && n == page_len && memcmp(have, page, page_len) == 0;
    free(have);
    if (!same) {
        fprintf(stderr, "%s is stale: regenerate it with gen_ops_md > docs/ops.md\n", path);
        return 1;
    }
    printf("%s is up to date (%zu ops)\n", path, sizeof ops / sizeof ops[0]);
    return 0;
}

int main(int argc, char **argv) {
    put_header();
    put_rules();
    put_summary();
    put("## Ops\n\n");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        put_op(&ops[i]);
    int rc = 0;
    if (argc == 3 && strcmp(argv[1], "--check") == 0)
        rc = check_against(argv[2]);
    else if (argc == 1)
        fwrite(page, 1, page_len, stdout);
    else {
        fprintf(stderr, "usage: gen_ops_md [--check docs/ops.md]\n");
        rc = 2;
    }
    free(page);
    return rc;
}
