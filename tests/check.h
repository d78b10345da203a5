/* check.h - the assertions every C test uses. A failed check prints the
 * place and the values, counts, and the test keeps going; main returns
 * check_result() so meson sees the failure. */
#ifndef OI_TEST_CHECK_H
#define OI_TEST_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond) \
    do { check_count++; if (!(cond)) { check_failures++; \
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) \
    do { check_count++; if (!(cond)) { check_failures++; \
        fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_OK(expr) \
    do { oi_status check_s_ = (expr); CHECK_MSG(check_s_ == OI_OK, "%s -> %s: %s", #expr, \
        oi_status_name(check_s_), oi_last_error()); } while (0)
#define CHECK_STATUS(expr, want) \
    do { oi_status check_s_ = (expr); CHECK_MSG(check_s_ == (want), "%s -> %s (want %s): %s", #expr, \
        oi_status_name(check_s_), oi_status_name(want), oi_last_error()); } while (0)
#define CHECK_STR_CONTAINS(text, part) \
    CHECK_MSG((text) && strstr((text), (part)), "\"%s\" does not contain \"%s\"", (text) ? (text) : "(null)", (part))
#define CHECK_NEAR(a, b, tol) \
    CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol), "%.9g vs %.9g (tol %g)", (double)(a), (double)(b), (double)(tol))
#define CHECK_EQ_INT(a, b) \
    CHECK_MSG((long long)(a) == (long long)(b), "%lld vs %lld", (long long)(a), (long long)(b))

static inline int check_result(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}
#endif
