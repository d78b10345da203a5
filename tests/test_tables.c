/* test_tables.c - persistent tables stored as contiguous rows: a slice read
 * along the last key is a view of the table's bytes (no copy), a write
 * after the read never changes what was read (copy on write), rows grow
 * past their first capacity (a write far past one is kept on its own), and
 * reads across rows still gather. Expected
 * values are computed by hand in the comments next to them. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"

static oi_executor *make_exec(oi_simulator **sim, const oi_graph *g) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    *sim = oi_simulator_new_desc(NULL, &desc);
    CHECK_MSG(*sim != NULL, "simulator: %s", oi_last_error());
    oi_executor *e = *sim ? oi_simulator_make_executor(*sim, g) : NULL;
    CHECK_MSG(e != NULL, "make_executor: %s", oi_last_error());
    return e;
}

static void check_f32(oi_executor *e, const char *name, const float *want, size_t n) {
    oi_tensor_view v;
    oi_status st = oi_executor_fetch(e, name, OI_DTYPE_F32, &v);
    CHECK_MSG(st == OI_OK, "fetch %s: %s", name, oi_last_error());
    if (st != OI_OK)
        return;
    CHECK_MSG(v.len == n, "%s: len %zu, want %zu", name, v.len, n);
    for (size_t i = 0; i < n && i < v.len; i++)
        CHECK_MSG(((const float *)v.data)[i] == want[i], "%s[%zu] = %g, want %g", name, i,
                  (double)((const float *)v.data)[i], (double)want[i]);
}

OI_GRAPH(g_views,
  OI_DYNAMIC( OI_VAR(x, f32[2]) OI_VAR(y, f32[2]) )
  OI_PERSISTENT( OI_VAR(A(t), f32[2], @table, @fixed(t=8)) )
  OI_BLOCK(entry,
    OI_ASSIGN(s, f32[3, 2])
    OI_ASSIGN(u, f32[4, 2])
    OI_ASSIGN(v, f32[4, 2])
    OI_ASSIGN(one, f32[2])
    OI_CACHE_WRITE(x, A[0])
    OI_CACHE_WRITE(x, A[1])
    OI_CACHE_WRITE(x, A[2])
    OI_CACHE_READ(A[0..3], s)
    OI_CACHE_WRITE(y, A[3])   /* a slot s does not see: written in place */
    OI_CACHE_READ(A[0..4], u)
    OI_CACHE_WRITE(y, A[1])   /* a slot s and u see: they keep the old bytes */
    OI_CACHE_READ(A[0..4], v)
    OI_CACHE_READ(A[2], one)
    OI_RETURN()
  )
)

static void test_views(void) {
    oi_simulator *sim = NULL;
    oi_executor *e = make_exec(&sim, g_views());
    if (!e) {
        oi_simulator_free(sim);
        return;
    }
    for (int step = 0; step < 2; step++) {
        float x[2] = {1.0f + 2 * step, 2.0f + 2 * step}, y[2] = {5.0f + 2 * step, 6.0f + 2 * step};
        CHECK_OK(OI_TRY_INSERT(e, x, x, 2));
        CHECK_OK(OI_TRY_INSERT(e, y, y, 2));
        CHECK_OK(oi_executor_run_step(e));
        const oi__tensor *s = oi__executor_peek(e, "s"), *u = oi__executor_peek(e, "u");
        const oi__tensor *v = oi__executor_peek(e, "v"), *one = oi__executor_peek(e, "one");
        CHECK(s && u && v && one);
        if (s && u && v && one) {
            /* s and u view the same bytes (the write to A[3] copied nothing),
             * v the copy the write to A[1] made; one entry is copied */
            CHECK(s->storage == u->storage);
            CHECK(v->storage != s->storage);
            CHECK(one->storage != v->storage);
            CHECK_EQ_INT(s->offset, 0);
            CHECK_EQ_INT(v->offset, 0);
            CHECK_EQ_INT(s->ndim, 2);
            CHECK_EQ_INT(s->shape[0], 3);
            CHECK_EQ_INT(v->shape[0], 4);
        }
        /* step 0: x = [1, 2], y = [5, 6]; step 1: x = [3, 4], y = [7, 8] */
        float ws[6] = {x[0], x[1], x[0], x[1], x[0], x[1]};
        float wu[8] = {x[0], x[1], x[0], x[1], x[0], x[1], y[0], y[1]};
        float wv[8] = {x[0], x[1], y[0], y[1], x[0], x[1], y[0], y[1]};
        check_f32(e, "s", ws, 6);
        check_f32(e, "u", wu, 8);
        check_f32(e, "v", wv, 8);
        check_f32(e, "one", x, 2);
    }
    /* the whole table, fetched: 4 entries written, [4, 2] */
    float wa[8] = {3, 4, 7, 8, 3, 4, 7, 8};
    check_f32(e, "A", wa, 8);
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* No @fixed: B's rows start small and grow while earlier reads still
 * hold the old bytes; unwritten slots read as @init. */
OI_GRAPH(g_grow,
  OI_DYNAMIC( OI_VAR(x, f32[2]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(B(l, t), f32[2], @table, @init(7.0))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(early, f32[2, 2])
    OI_ASSIGN(all, f32[1, 2])
    OI_ASSIGN(col, f32[1, 2])
    OI_CACHE_WRITE(x, B[1, n])
    OI_CACHE_READ(B[1, 0..2], early)
    OI_CACHE_INCREMENT(n)
    OI_CACHE_READ(B[1, 0..n], all)
    OI_CACHE_READ(B[0..3, 1], col)   /* across rows: gathered */
    OI_RETURN()
  )
)

static void test_growth(void) {
    oi_simulator *sim = NULL;
    oi_executor *e = make_exec(&sim, g_grow());
    if (!e) {
        oi_simulator_free(sim);
        return;
    }
    enum { STEPS = 100 };
    float want[2 * STEPS];
    for (int i = 0; i < STEPS; i++) {
        float x[2] = {(float)i, (float)-i};
        want[2 * i] = x[0];
        want[2 * i + 1] = x[1];
        CHECK_OK(OI_TRY_INSERT(e, x, x, 2));
        CHECK_OK(oi_executor_run_step(e));
        if (i == 0) { /* B[1, 1] not written yet: @init */
            float w0[4] = {0, 0, 7, 7};
            check_f32(e, "early", w0, 4);
        }
    }
    /* after 100 steps B[1, i] = [i, -i] for i < 100 */
    check_f32(e, "all", want, 2 * STEPS);
    float we[4] = {0, 0, 1, -1};
    check_f32(e, "early", we, 4);
    float wc[6] = {7, 7, 1, -1, 7, 7}; /* B[0, 1], B[1, 1], B[2, 1] */
    check_f32(e, "col", wc, 6);
    const oi__tensor *all = oi__executor_peek(e, "all");
    CHECK(all && all->shape[0] == STEPS && all->offset == 0);
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* A write far past a row (2^40) keeps that entry on its own: no row of
 * 2^40 slots is allocated, and reads of both still work. */
OI_GRAPH(g_sparse,
  OI_DYNAMIC( OI_VAR(x, f32[2]) )
  OI_PERSISTENT( OI_VAR(C(t), f32[2], @table) )
  OI_BLOCK(entry,
    OI_ASSIGN(far, f32[2])
    OI_ASSIGN(near, f32[2, 2])
    OI_CACHE_WRITE(x, C[1099511627776])
    OI_CACHE_WRITE(x, C[1])
    OI_CACHE_READ(C[1099511627776], far)
    OI_CACHE_READ(C[0..2], near)
    OI_RETURN()
  )
)

static void test_sparse(void) {
    oi_simulator *sim = NULL;
    oi_executor *e = make_exec(&sim, g_sparse());
    if (!e) {
        oi_simulator_free(sim);
        return;
    }
    for (int step = 0; step < 3; step++) {
        float x[2] = {(float)step + 1, (float)-step};
        CHECK_OK(OI_TRY_INSERT(e, x, x, 2));
        CHECK_OK(oi_executor_run_step(e));
        float wn[4] = {0, 0, x[0], x[1]}; /* C[0] never written: zeros */
        check_f32(e, "far", x, 2);
        check_f32(e, "near", wn, 4);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
}

int main(void) {
    test_views();
    test_growth();
    test_sparse();
    return check_result("test_tables");
}
