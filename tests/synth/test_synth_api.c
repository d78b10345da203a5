/* test_synth_api.c - the synthesizer in-process, through the drop-in header
 * with OPENINFER_SYNTH (also built as C++17): a graph without a model is
 * synthesized and emitted; the summary and plan.json say what was fused;
 * the files are there; misuse is an error, never a crash. */
#define OPENINFER_IMPLEMENTATION
#define OPENINFER_SYNTH
#include "../../openinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

OI_GRAPH(api_chain,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_VOLATILE( OI_VAR(y, f32[4]) )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[4])
    OI_OP(add, x, x) OI_TO(t)
    OI_OP(mul, t, x) OI_TO(t)
    OI_OP(relu, t) OI_TO(y)
    OI_RETURN()
  )
)

/* The chain again, with hints: mul alone (fuse=false); add and mul in group
 * "a", relu in "b". */
OI_GRAPH(api_chain_unfused,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_VOLATILE( OI_VAR(y, f32[4]) )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[4])
    OI_OP(add, x, x) OI_TO(t)
    OI_OP(mul, t, x) OI_WITH(fuse=false) OI_TO(t)
    OI_OP(relu, t) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(api_chain_groups,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_VOLATILE( OI_VAR(y, f32[4]) )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[4])
    OI_OP(add, x, x) OI_WITH(group="a") OI_TO(t)
    OI_OP(mul, t, x) OI_WITH(group="a", no_reorder=true) OI_TO(t)
    OI_OP(relu, t) OI_WITH(group="b") OI_TO(y)
    OI_RETURN()
  )
)

/* What the C target refuses, naming the statement: an index expression, a
 * prefix table whose entries differ in shape. */
OI_GRAPH(api_index_expr,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_PERSISTENT( OI_VAR(n, i32, @init(0)) OI_VAR(A(i), f32[4], @table, @fixed(i=8)) )
  OI_BLOCK(entry,
    OI_ASSIGN(rows, f32[?, 4])
    OI_CACHE_WRITE(x, A[n])
    OI_CACHE_READ(A[0..n+1], rows)
    OI_CACHE_INCREMENT(n)
    OI_RETURN()
  )
)

OI_GRAPH(api_entry_sizes,
  OI_DYNAMIC( OI_VAR(x, f32[1, 4]) )
  OI_VOLATILE( OI_VAR(k, i32, @init(0)) )
  OI_CONSTANT( OI_VAR(W(n), f32[4, E(n)], @pattern("w{n}")) )
  OI_BLOCK(entry,
    OI_ASSIGN(h)
    OI_OP(matmul, x, W[k]) OI_TO(h)
    OI_RETURN()
  )
)

static int failures;
#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, oi_last_error()); \
            failures++; \
        } \
    } while (0)

static int file_exists(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "synth_api_out";
    oi_synthesizer *s = oi_synthesizer_new(OI_DEVICE_CPU);
    CHECK(s != NULL);
    oi_plan *plan = oi_synthesize(s, NULL, api_chain());
    CHECK(plan != NULL);
    oi_plan_summary sum;
    CHECK(oi_plan_get_summary(plan, &sum) == OI_OK);
    CHECK(sum.kernels == 1 && sum.statements == 3);
    CHECK(strcmp(sum.name, "api_chain") == 0);
    CHECK(sum.arena_bytes == 0); /* t lives in a register of the one kernel */
    char *json = oi_plan_to_json(plan);
    CHECK(json && strstr(json, "\"home\": \"register\""));
    oi_free(json);
    CHECK(oi_plan_emit(plan, dir) == OI_OK);
    const char *files[] = {"api_chain.h", "api_chain.c", "oi_scalar.h", "npy.h", "main.c", "Makefile", "plan.json",
                           "plan.dot"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        CHECK(file_exists(dir, files[i]));
    /* oi_plan_files: exactly those, in that order (no oi_gemm.h: no packed matmul) */
    char *names = oi_plan_files(plan);
    CHECK(names && strcmp(names, "api_chain.h api_chain.c oi_scalar.h npy.h main.c Makefile plan.json plan.dot") == 0);
    oi_free(names);
    CHECK(oi_plan_files(NULL) == NULL);
    /* fusion bounded: one statement per kernel */
    CHECK(oi_synthesizer_set_max_kernel_ops(s, 1) == OI_OK);
    oi_plan *one = oi_synthesize(s, NULL, api_chain());
    CHECK(one && oi_plan_get_summary(one, &sum) == OI_OK && sum.kernels == 3);
    oi_plan_free(one);
    /* hints: fuse=false is a kernel of its own, fusion stays inside a group */
    CHECK(oi_synthesizer_set_max_kernel_ops(s, 16) == OI_OK);
    oi_plan *unfused = oi_synthesize(s, NULL, api_chain_unfused());
    CHECK(unfused && oi_plan_get_summary(unfused, &sum) == OI_OK && sum.kernels == 3);
    oi_plan_free(unfused);
    oi_plan *groups = oi_synthesize(s, NULL, api_chain_groups());
    CHECK(groups && oi_plan_get_summary(groups, &sum) == OI_OK && sum.kernels == 2);
    oi_plan_free(groups);
    /* misuse */
    CHECK(oi_synthesizer_set_max_kernel_ops(s, 0) == OI_ERROR_INVALID_ARGUMENT);
    CHECK(oi_synthesize(NULL, NULL, api_chain()) == NULL);
    CHECK(oi_plan_emit(NULL, dir) == OI_ERROR_INVALID_ARGUMENT);
    CHECK(oi_plan_emit(plan, "") == OI_ERROR_INVALID_ARGUMENT);
    /* the Vulkan target: GLSL kernels and C host code beside them */
    oi_synthesizer *vk = oi_synthesizer_new(OI_DEVICE_VULKAN);
    oi_plan *vk_plan = vk ? oi_synthesize(vk, NULL, api_chain()) : NULL;
    char vk_dir[1024];
    snprintf(vk_dir, sizeof vk_dir, "%s/vulkan", dir);
    CHECK(vk_plan && oi_plan_emit(vk_plan, vk_dir) == OI_OK);
    CHECK(file_exists(vk_dir, "api_chain_k0.comp") && file_exists(vk_dir, "oi_vk_runtime.h"));
    char *vk_names = vk_plan ? oi_plan_files(vk_plan) : NULL;
    CHECK(vk_names && strstr(vk_names, "api_chain_k0.comp oi_kernel.glsl") && strstr(vk_names, "oi_vk_runtime.h") &&
          !strstr(vk_names, "oi_gemm.h"));
    oi_free(vk_names);
    oi_plan_free(vk_plan);
    oi_synthesizer_free(vk);
    CHECK(oi_synthesizer_from_arch_json("{\"device\": {\"type\": \"gpu\"}}") == NULL &&
          strstr(oi_last_error(), "$.device"));
    CHECK(oi_synthesizer_from_arch_json("{\"preferences\": {") == NULL);
    oi_synthesizer *arch = oi_synthesizer_from_arch_json(
        "{\"device\": {\"type\": \"cpu\", \"api\": \"c\", \"name\": \"test cpu\"}, \"limits\": {\"cores\": 1},"
        " \"memory\": {\"global_bytes\": 1000000}, \"preferences\": {\"max_kernel_ops\": 2}}");
    CHECK(arch != NULL);
    oi_plan *two = arch ? oi_synthesize(arch, NULL, api_chain()) : NULL;
    CHECK(two && oi_plan_get_summary(two, &sum) == OI_OK && sum.kernels == 2);
    oi_plan_free(two);
    oi_synthesizer_free(arch);
    oi_plan *expr_plan = oi_synthesize(s, NULL, api_index_expr()); /* a slice bound n+1: int64_t arithmetic */
    CHECK(expr_plan != NULL);
    oi_plan_free(expr_plan);
    CHECK(oi_synthesize(s, NULL, api_entry_sizes()) == NULL &&
          strstr(oi_last_error(), "a prefix table whose entries differ in shape (E(n))"));
    oi_plan_free(plan);
    oi_plan_free(NULL);
    oi_synthesizer_free(s);
    if (failures == 0)
        printf("test_synth_api: ok\n");
    return failures != 0;
}
