/* alloc_hooks.h - counting allocator hooks for the reliability tests
 * (test_faults.c, test_long_runs.c). They sit on libc realloc/free and
 * measure blocks with malloc_usable_size, so a block allocated before the
 * hooks were installed may still be freed through them. Every counter is
 * atomic: consumer blocks and the thread pool allocate from other threads.
 *
 *   hooks_install();                 // oi_set_allocator with these hooks
 *   hooks_arm(n);                    // the n-th allocation from now fails (0: none)
 *   ... hooks_hit() ...              // did the armed failure happen?
 *   hooks_live_blocks(), hooks_live_bytes()
 */
#ifndef OI_TEST_ALLOC_HOOKS_H
#define OI_TEST_ALLOC_HOOKS_H
#include "../openinfer.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static long hooks_calls;      /* allocations (fresh or growing) since hooks_arm */
static long hooks_fail_at;    /* fail the call with this number; 0: never       */
static int hooks_failed;      /* the armed failure happened                      */
static long hooks_blocks;     /* live blocks handed out through the hooks        */
static long long hooks_bytes; /* live bytes (usable sizes) through the hooks     */
static long hooks_total;      /* allocations ever made through the hooks         */

/* Debugging aid: OI_HOOKS_TRACE=1 prints the stack of every injected
 * failure in a sanitizer build (the sanitizer runtime symbolizes it). */
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));

static void *hooks_realloc(void *ptr, size_t size, void *user) {
    (void)user;
    long call = __atomic_add_fetch(&hooks_calls, 1, __ATOMIC_SEQ_CST);
    long fail_at = __atomic_load_n(&hooks_fail_at, __ATOMIC_SEQ_CST);
    if (fail_at > 0 && call == fail_at) {
        __atomic_store_n(&hooks_failed, 1, __ATOMIC_SEQ_CST);
        if (getenv("OI_HOOKS_TRACE") && __sanitizer_print_stack_trace) {
            fprintf(stderr, "---- injected failure of allocation %ld (%zu bytes):\n", call, size);
            __sanitizer_print_stack_trace();
        }
        return NULL; /* like realloc: the old block stays valid */
    }
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
    void *out = realloc(ptr, size);
    if (!out)
        return NULL;
    if (!ptr) {
        __atomic_add_fetch(&hooks_blocks, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&hooks_total, 1, __ATOMIC_SEQ_CST);
    }
    __atomic_add_fetch(&hooks_bytes, (long long)malloc_usable_size(out) - (long long)old, __ATOMIC_SEQ_CST);
    return out;
}

static void hooks_free(void *ptr, void *user) {
    (void)user;
    if (!ptr)
        return;
    __atomic_sub_fetch(&hooks_blocks, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&hooks_bytes, (long long)malloc_usable_size(ptr), __ATOMIC_SEQ_CST);
    free(ptr);
}

static inline void hooks_install(void) {
    oi_allocator a;
    a.realloc_fn = hooks_realloc;
    a.free_fn = hooks_free;
    a.user_data = NULL;
    oi_set_allocator(&a);
}

static inline void hooks_arm(long fail_at) {
    __atomic_store_n(&hooks_failed, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&hooks_calls, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&hooks_fail_at, fail_at, __ATOMIC_SEQ_CST);
}

static inline void hooks_disarm(void) { __atomic_store_n(&hooks_fail_at, 0, __ATOMIC_SEQ_CST); }
static inline bool hooks_hit(void) { return __atomic_load_n(&hooks_failed, __ATOMIC_SEQ_CST) != 0; }
static inline long hooks_live_blocks(void) { return __atomic_load_n(&hooks_blocks, __ATOMIC_SEQ_CST); }
static inline long long hooks_live_bytes(void) { return __atomic_load_n(&hooks_bytes, __ATOMIC_SEQ_CST); }
static inline long hooks_allocations(void) { return __atomic_load_n(&hooks_total, __ATOMIC_SEQ_CST); }
#endif
