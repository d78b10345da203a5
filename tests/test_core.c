/* test_core.c - errors, allocator hooks and the growable string. */
#include "../openinfer_impl/internal.h"
#include "check.h"

static size_t hook_allocs, hook_frees;

static void *counting_realloc(void *ptr, size_t size, void *user) {
    (void)user;
    if (!ptr)
        hook_allocs++;
    return realloc(ptr, size);
}

static void counting_free(void *ptr, void *user) {
    (void)user;
    if (ptr)
        hook_frees++;
    free(ptr);
}

static void *failing_realloc(void *ptr, size_t size, void *user) {
    (void)ptr, (void)size, (void)user;
    return NULL;
}

static void test_errors(void) {
    oi_clear_error();
    CHECK(strcmp(oi_last_error(), "") == 0);
    CHECK_EQ_INT(oi__fail(OI_ERROR_FORMAT, "bad %s at %d", "thing", 7), OI_ERROR_FORMAT);
    CHECK(strcmp(oi_last_error(), "bad thing at 7") == 0);
    oi__error_prefix("model.oinf");
    CHECK(strcmp(oi_last_error(), "model.oinf: bad thing at 7") == 0);
    CHECK(strcmp(oi_status_name(OI_ERROR_VALIDATION), "OI_ERROR_VALIDATION") == 0);
    CHECK(strcmp(oi_status_name(OI_OK), "OI_OK") == 0);
}

static void test_allocator_hooks(void) {
    oi_allocator half = {counting_realloc, NULL, NULL};
    CHECK_STATUS(oi_set_allocator(&half), OI_ERROR_INVALID_ARGUMENT);

    oi_allocator counting = {counting_realloc, counting_free, NULL};
    CHECK_OK(oi_set_allocator(&counting));
    char *text = oi__strdup("hello");
    CHECK(text && strcmp(text, "hello") == 0);
    int *arr = NULL;
    for (int i = 0; i < 100; i++)
        arrput(arr, i);
    CHECK_EQ_INT(arrlen(arr), 100);
    arrfree(arr);
    oi_free(text);
    CHECK_OK(oi_set_allocator(NULL));
    CHECK(hook_allocs >= 2);
    CHECK_EQ_INT(hook_allocs, hook_frees);

    oi_allocator failing = {failing_realloc, counting_free, NULL};
    CHECK_OK(oi_set_allocator(&failing));
    oi_clear_error();
    char *nothing = oi__strdup("x");
    CHECK(nothing == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "out of memory");
    void *huge = oi__calloc(SIZE_MAX / 2, 4);
    CHECK(huge == NULL);
    CHECK_OK(oi_set_allocator(NULL));
}

static void test_buf(void) {
    oi__buf b = {0};
    oi__buf_puts(&b, "[");
    oi__buf_printf(&b, "%d,%s", 42, "x");
    oi__buf_json_string(&b, "a\"b\\c\n\x01");
    char *text = oi__buf_take(&b);
    CHECK(text && strcmp(text, "[42,x\"a\\\"b\\\\c\\n\\u0001\"") == 0);
    oi_free(text);
    oi__buf empty = {0};
    char *none = oi__buf_take(&empty);
    CHECK(none && none[0] == '\0');
    oi_free(none);
}

int main(void) {
    test_errors();
    test_allocator_hooks();
    test_buf();
    return check_result("test_core");
}
