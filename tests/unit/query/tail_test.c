/* The live tail hub against a real store: rows in commit order, the
 * filter, the bounded buffer and its dropped marker, the newest-N start
 * and its seam with the live rows under a concurrent writer (no gap, no
 * duplicate), SSE framing and keep-alives, max_clients, shutdown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/clock.h"
#include "base/err.h"
#include "model/record.h"
#include "query/tail.h"
#include "store/store.h"
#include "tests/support/store_fixture.h"

#define MS (1000LL * 1000)

struct fx {
    char *dir;
    struct store *s;
    struct store_db *db;
    struct tail_hub *hub;
};

static int setup_with(void **state, size_t buffer, size_t max_clients)
{
    struct fx *f = xcalloc(1, sizeof *f);
    struct store_opts so;
    store_opts_default(&so);
    so.wal_sync = STORE_SYNC_NONE;
    struct db_opts dbo = {.buckets = 4, .ts_desc = true, .ttl_ns = 0};
    assert_int_equal(tu_store_with_db("tail", &so, &dbo, &f->dir, &f->s, &f->db), 0);
    struct tail_hub_opts o = {.max_clients = max_clients,
                              .client_buffer_bytes = buffer,
                              .queue_bytes = 64 << 20,
                              .keepalive_ns = 60000 * MS,
                              .initial_max_rows = 1000};
    assert_int_equal(tail_hub_new(f->s, &o, &f->hub), 0);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, 1 << 20, 4);
}

static int setup_small(void **state)
{
    return setup_with(state, 4096, 4);
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tail_hub_shutdown(f->hub);
    tail_hub_free(f->hub);
    tu_store_close(f->dir, f->s, f->db);
    free(f);
    return 0;
}

/* Writes rows n0..n0+count-1 of host, field n = the number, ts = base + n. */
static void put(struct store_db *db, const char *host, int n0, int count)
{
    struct batch *b = batch_new();
    struct buf v = BUF_INIT;
    for (int i = n0; i < n0 + count; i++) {
        struct rec_field fl;
        memset(&fl, 0, sizeof fl);
        fl.key = slice_cstr("n");
        fl.type = REC_INT;
        fl.v.i = i;
        buf_reset(&v);
        rec_encode(&v, NULL, 0, &fl, 1);
        batch_put(b, 1700000000000000000LL + i, slice_cstr(host), slice_cstr("e"),
                  slice_make(v.data, v.len));
    }
    assert_int_equal(store_write(db, b), 0);
    batch_free(b);
    buf_destroy(&v);
}

struct params {
    const char *names[8], *values[8];
};

static const char *pget(void *arg, const char *name)
{
    struct params *p = arg;
    for (int i = 0; i < 8 && p->names[i]; i++)
        if (strcmp(p->names[i], name) == 0)
            return p->values[i];
    return NULL;
}

static int open_client(struct fx *f, struct params *p, enum tail_format fmt, struct tail_client **c,
                       struct buf *err)
{
    struct query_opts o;
    query_opts_default(&o);
    return tail_open(f->hub, pget, p, fmt, &o, c, err);
}

/* Reads until out holds `lines` newline-ended lines or 5 s pass. */
static void read_lines(struct tail_client *c, struct buf *out, size_t lines)
{
    int64_t end = clock_mono_ns() + 5000 * MS;
    char tmp[100]; /* small reads: rows come in pieces */
    for (;;) {
        size_t have = 0;
        for (size_t i = 0; i < out->len; i++)
            have += out->data[i] == '\n';
        if (have >= lines || clock_mono_ns() > end)
            return;
        ssize_t n = tail_read(c, tmp, sizeof tmp, 50 * MS);
        if (n < 0)
            return;
        buf_append(out, tmp, (size_t)n);
    }
}

/* Reads until out holds needle or 5 s pass. */
static void read_until(struct tail_client *c, struct buf *out, const char *needle)
{
    int64_t end = clock_mono_ns() + 5000 * MS;
    char tmp[100];
    while (!strstr(buf_cstr(out), needle) && clock_mono_ns() < end) {
        ssize_t n = tail_read(c, tmp, sizeof tmp, 50 * MS);
        if (n < 0)
            return;
        buf_append(out, tmp, (size_t)n);
    }
}

/* The n fields of the NDJSON rows of s, in order; *count of them. */
static int numbers(const char *s, int *v, int max)
{
    int k = 0;
    const char *p = s;
    while (k < max && (p = strstr(p, "\"n\":")) != NULL) {
        v[k++] = atoi(p + 4);
        p += 4;
    }
    return k;
}

static void test_order_and_filter(void **state)
{
    struct fx *f = *state;
    struct params p = {{"db", "host"}, {"d", "a"}};
    struct tail_client *c = NULL;
    struct buf err = BUF_INIT, out = BUF_INIT;
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c, &err), 0);
    for (int i = 0; i < 20; i++) {
        put(f->db, "a", i * 5, 5);
        put(f->db, "b", 1000 + i, 1);
    }
    read_lines(c, &out, 100);
    int v[200];
    int n = numbers(buf_cstr(&out), v, 200);
    assert_int_equal(n, 100);
    for (int i = 0; i < n; i++)
        assert_int_equal(v[i], i);
    assert_null(strstr(buf_cstr(&out), "\"host\":\"b\""));
    assert_non_null(strstr(buf_cstr(&out), "{\"ts\":1700000000000000000,\"host\":\"a\",\"event\":"
                                           "\"e\",\"tags\":{},\"fields\":{\"n\":0}}\n"));
    tail_close(c);
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_where_and_search(void **state)
{
    struct fx *f = *state;
    struct params p = {{"db", "where", "search"}, {"d", "n >= 3", "a"}};
    struct tail_client *c = NULL;
    struct buf err = BUF_INIT, out = BUF_INIT;
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c, &err), 0);
    put(f->db, "b", 0, 6); /* search "a" finds no word a: none */
    put(f->db, "a", 0, 6);
    read_lines(c, &out, 3);
    int v[10];
    assert_int_equal(numbers(buf_cstr(&out), v, 10), 3);
    assert_int_equal(v[0], 3);
    assert_int_equal(v[2], 5);
    tail_close(c);
    buf_reset(&err);
    struct params bad = {{"db", "where"}, {"d", "n >>> 1"}};
    assert_int_equal(open_client(f, &bad, TAIL_NDJSON, &c, &err), ERR_INVAL);
    assert_non_null(strstr(buf_cstr(&err), "where:"));
    buf_reset(&err);
    struct params nodb = {{"db"}, {"nope"}};
    assert_int_equal(open_client(f, &nodb, TAIL_NDJSON, &c, &err), ERR_NOTFOUND);
    buf_reset(&err);
    struct params badlim = {{"db", "limit"}, {"d", "-1"}};
    assert_int_equal(open_client(f, &badlim, TAIL_NDJSON, &c, &err), ERR_INVAL);
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_dropped_marker(void **state)
{
    struct fx *f = *state; /* 4 KiB buffers */
    struct params p = {{"db"}, {"d"}};
    struct tail_client *c = NULL;
    struct buf err = BUF_INIT, out = BUF_INIT;
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c, &err), 0);
    for (int i = 0; i < 10; i++)
        put(f->db, "a", i * 100, 100); /* about 80 bytes a row: 80 KB */
    usleep(300 * 1000);                /* the dispatcher has them all */
    read_until(c, &out, "{\"dropped\":");
    put(f->db, "a", 5000, 1); /* after the loss */
    read_until(c, &out, "\"n\":5000");
    const char *s = buf_cstr(&out);
    const char *m = strstr(s, "{\"dropped\":");
    assert_non_null(m);
    int dropped = atoi(m + 11);
    int v[1100];
    int n = numbers(s, v, 1100);
    assert_int_equal(n + dropped, 1001);
    assert_true(dropped > 500);
    for (int i = 0; i + 1 < n; i++) /* the kept rows in order, the first ones */
        assert_int_equal(v[i], i);
    assert_int_equal(v[n - 1], 5000); /* the marker sits before the later row */
    assert_true(strstr(s, "\"n\":5000") > m);
    tail_close(c);
    buf_destroy(&out);
    buf_destroy(&err);
}

struct writer {
    struct store_db *db;
    int count;
};

static void *write_slowly(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < w->count; i++) {
        put(w->db, "a", 100 + i * 2, 2);
        if (i % 10 == 0)
            usleep(1000);
    }
    return NULL;
}

/* The newest N, oldest first, then the live rows: every number once, in
 * order, while a writer commits all along. */
static void test_initial_then_live(void **state)
{
    struct fx *f = *state;
    put(f->db, "a", 0, 100);
    struct params p = {{"db", "limit"}, {"d", "5"}};
    struct tail_client *c = NULL;
    struct buf err = BUF_INIT, out = BUF_INIT;
    struct writer w = {f->db, 400};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, write_slowly, &w), 0);
    usleep(2000);
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c, &err), 0);
    pthread_join(t, NULL);
    read_until(c, &out, "\"n\":899}");
    static int v[1000];
    int n = numbers(buf_cstr(&out), v, 1000);
    assert_true(n >= 5);
    assert_int_equal(v[n - 1], 899); /* complete to the last row */
    for (int i = 1; i < n; i++)
        assert_int_equal(v[i], v[i - 1] + 1); /* no gap, no duplicate */
    tail_close(c);
    buf_reset(&out);
    /* without a writer: exactly the newest 3 */
    struct params p3 = {{"db", "limit"}, {"d", "3"}};
    assert_int_equal(open_client(f, &p3, TAIL_NDJSON, &c, &err), 0);
    read_lines(c, &out, 3);
    assert_int_equal(numbers(buf_cstr(&out), v, 10), 3);
    assert_int_equal(v[0], 897);
    assert_int_equal(v[2], 899);
    tail_close(c);
    buf_destroy(&out);
    buf_destroy(&err);
}

static void test_sse_keepalive_shutdown(void **state)
{
    struct fx *f = *state;
    tail_hub_free(f->hub);
    struct tail_hub_opts o = {.max_clients = 2,
                              .client_buffer_bytes = 1 << 20,
                              .queue_bytes = 1 << 20,
                              .keepalive_ns = 100 * MS,
                              .initial_max_rows = 10};
    assert_int_equal(tail_hub_new(f->s, &o, &f->hub), 0);
    struct params p = {{"db"}, {"d"}};
    struct tail_client *c = NULL, *c2 = NULL, *c3 = NULL;
    struct buf err = BUF_INIT, out = BUF_INIT;
    assert_int_equal(open_client(f, &p, TAIL_SSE, &c, &err), 0);
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c2, &err), 0);
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c3, &err), ERR_BUSY);
    assert_non_null(strstr(buf_cstr(&err), "max_tail_clients = 2"));
    put(f->db, "a", 7, 1);
    read_lines(c, &out, 2);
    assert_string_equal(buf_cstr(&out),
                        "data: {\"ts\":1700000000000000007,\"host\":\"a\",\"event\":"
                        "\"e\",\"tags\":{},\"fields\":{\"n\":7}}\n\n");
    buf_reset(&out);
    read_lines(c, &out, 2);
    assert_string_equal(buf_cstr(&out), ": keep-alive\n\n");
    buf_reset(&out);
    read_lines(c2, &out, 2);
    assert_non_null(strstr(buf_cstr(&out), "\"n\":7}}\n{\"heartbeat\":"));
    tail_hub_shutdown(f->hub);
    char tmp[64];
    assert_int_equal(tail_read(c, tmp, sizeof tmp, 1000 * MS), -1);
    assert_int_equal(tail_read(c2, tmp, sizeof tmp, 1000 * MS), -1);
    buf_reset(&err);
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c3, &err), ERR_BUSY);
    tail_close(c);
    tail_close(c2);
    struct buf m = BUF_INIT;
    tail_hub_metrics(f->hub, &m);
    assert_non_null(strstr(buf_cstr(&m), "logbucket_tail_clients 0\n"));
    assert_non_null(strstr(buf_cstr(&m), "logbucket_tail_rows_sent_total 2\n"));
    buf_destroy(&m);
    buf_destroy(&out);
    buf_destroy(&err);
}

static atomic_int suspends, wakes;

static void count_suspend(void *arg)
{
    (void)arg;
    atomic_fetch_add(&suspends, 1);
}

static void count_wake(void *arg)
{
    (void)arg;
    atomic_fetch_add(&wakes, 1);
}

static bool wait_wakes(int n)
{
    for (int i = 0; i < 200 && atomic_load(&wakes) < n; i++)
        usleep(10 * 1000);
    return atomic_load(&wakes) >= n;
}

/* A reader that cannot block parks; the hub wakes it once for rows and
 * once at shutdown, never while it is not parked. */
static void test_park_and_wake(void **state)
{
    struct fx *f = *state;
    struct params p = {{"db"}, {"d"}};
    struct tail_client *c = NULL;
    struct buf err = BUF_INIT;
    assert_int_equal(open_client(f, &p, TAIL_NDJSON, &c, &err), 0);
    tail_set_wake(c, count_wake, NULL);
    char tmp[512];
    assert_int_equal(tail_read(c, tmp, sizeof tmp, 0), 0);
    assert_true(tail_park(c, count_suspend, NULL));
    assert_int_equal(atomic_load(&suspends), 1);
    put(f->db, "a", 1, 1);
    assert_true(wait_wakes(1));
    ssize_t n = tail_read(c, tmp, sizeof tmp, 0);
    assert_true(n > 0 && memmem(tmp, (size_t)n, "\"n\":1}", 6));
    put(f->db, "a", 2, 1); /* not parked: no wake, the row waits */
    usleep(200 * 1000);
    assert_int_equal(atomic_load(&wakes), 1);
    assert_false(tail_park(c, count_suspend, NULL)); /* there is a row: read it */
    assert_true(tail_read(c, tmp, sizeof tmp, 0) > 0);
    assert_true(tail_park(c, count_suspend, NULL));
    tail_hub_shutdown(f->hub);
    assert_true(wait_wakes(2));
    assert_int_equal(tail_read(c, tmp, sizeof tmp, 0), -1);
    tail_close(c);
    buf_destroy(&err);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_and_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_where_and_search, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dropped_marker, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_initial_then_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sse_keepalive_shutdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_park_and_wake, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
