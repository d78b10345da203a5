/* env.c - every environment variable the library reads, in one place: the
 * fields of oi__env (internal.h), the table in docs/simulator.md
 * ("Environment variables") lists the same. Each call reads the environment
 * afresh, so a variable set with setenv counts from the next simulator,
 * executor, device or strictness check; the CPU kernels read the ISA cap
 * once (kernels/gemm.c caches it). */
#include "internal.h"

static bool oi__env_is(const char *value, const char *a, const char *b, const char *c) {
    return value && (strcmp(value, a) == 0 || (b && strcmp(value, b) == 0) || (c && strcmp(value, c) == 0));
}

oi__env oi__env_read(void) {
    oi__env e;
    memset(&e, 0, sizeof e);
    const char *backend = getenv("OPENINFER_BACKEND");
    e.backend = backend && *backend ? backend : NULL;
    const char *isa = getenv("OPENINFER_ISA");
    e.isa = oi__env_is(isa, "portable", NULL, NULL) ? OI__ENV_ISA_PORTABLE
            : oi__env_is(isa, "avx2", NULL, NULL)   ? OI__ENV_ISA_AVX2
            : oi__env_is(isa, "avx512", NULL, NULL) ? OI__ENV_ISA_AVX512
                                                    : OI__ENV_ISA_AUTO;
    e.trace = oi__env_is(getenv("OPENINFER_TRACE"), "1", "full", "true");
    e.strict = oi__env_is(getenv("OPENINFER_STRICT"), "1", "true", NULL);
    const char *validation = getenv("OPENINFER_VULKAN_VALIDATION");
    e.vulkan_validation = validation && *validation && strcmp(validation, "0") != 0;
    e.vulkan_timestamps = !oi__env_is(getenv("OPENINFER_VULKAN_TIMESTAMPS"), "0", NULL, NULL);
    const char *coopmat = getenv("OPENINFER_VULKAN_COOPMAT");
    e.vulkan_coopmat = oi__env_is(coopmat, "0", NULL, NULL)    ? OI__ENV_COOPMAT_OFF
                       : oi__env_is(coopmat, "nv", NULL, NULL) ? OI__ENV_COOPMAT_NV
                                                               : OI__ENV_COOPMAT_AUTO;
    e.vulkan_early_submit = !oi__env_is(getenv("OPENINFER_VULKAN_EARLY_SUBMIT"), "0", NULL, NULL);
    const char *precision = getenv("OPENINFER_PRECISION");
    e.precision = precision && *precision ? precision : NULL;
    return e;
}
