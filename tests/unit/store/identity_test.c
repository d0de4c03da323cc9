/* Row identity (store/FORMAT.md, "Row identity"): rows of one (ts, host,
 * event) that differ in their id are all kept, in memtables, files, after
 * compaction and a restart; a MERGE folds its fields into the older
 * versions of its key (union, newest wins) until a PUT, a delete or a range
 * tombstone; an exact duplicate is one row; deleting one row by id leaves
 * the others and their host index entry; keys written without an id read
 * as before. Every check reads forward, backward and through store_rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/key.h"
#include "model/record.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define SEC 1000000000LL
#define T0 (1700000000LL * SEC)
#define BUCKETS 3

struct fixture {
    char *dir;
    struct store *s;
    struct store_opts o;
    struct store_db *db;
};

static int64_t fixed_clock(void *arg)
{
    (void)arg;
    return T0 + 3600 * SEC;
}

static void reopen(struct fixture *f)
{
    store_db_unref(f->db);
    store_close(f->s);
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = tu_mkdtemp("ident");
    store_opts_default(&f->o);
    f->o.dir = f->dir;
    f->o.clock = fixed_clock;
    assert_int_equal(store_open(&f->o, &f->s), ERR_OK);
    struct db_opts o = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 0};
    assert_int_equal(store_db_create(f->s, "d", &o), ERR_OK);
    assert_int_equal(store_db_get(f->s, "d", &f->db), ERR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_db_unref(f->db);
    store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* A record of one tag (if tag) and the fields "k=v,k=v" (ints). */
static void record(struct buf *out, const char *tag, const char *fields)
{
    struct rec_tag t = {slice_cstr("cpu"), slice_cstr(tag ? tag : "")};
    struct rec_field fv[8];
    char names[8][16];
    size_t n = 0;
    for (const char *p = fields; p && *p && n < 8;) {
        int len = 0;
        long long v = 0;
        if (sscanf(p, "%15[a-z]=%lld%n", names[n], &v, &len) != 2)
            break;
        fv[n] = (struct rec_field){.key = slice_cstr(names[n]), .type = REC_INT, .v.i = v};
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    rec_encode(out, &t, tag ? 1 : 0, fv, n);
}

/* Writes a point of series tag (NULL: no tags) with fields, as ingest does. */
static void put_point(struct fixture *f, int64_t ts, const char *host, const char *tag,
                      const char *fields)
{
    struct buf id = BUF_INIT, v = BUF_INIT;
    if (tag)
        record(&id, tag, NULL);
    record(&v, NULL, fields);
    struct batch *b = batch_new();
    batch_put_id(b, ts, slice_cstr(host), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make(v.data, v.len), true);
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&id);
    buf_destroy(&v);
}

/* Writes a log entry: its whole content is its id. */
static void put_log(struct fixture *f, int64_t ts, const char *host, const char *fields)
{
    struct buf id = BUF_INIT;
    record(&id, NULL, fields);
    struct batch *b = batch_new();
    batch_put_id(b, ts, slice_cstr(host), slice_cstr("cpu"), slice_make(id.data, id.len),
                 slice_make("", 0), false);
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    buf_destroy(&id);
}

/* "tag|k=v,k=v" of a row. */
static void render(struct buf *out, struct slice id, struct slice value)
{
    struct rec_row_reader r;
    assert_int_equal(rec_row_init(&r, id, value), ERR_OK);
    struct rec_tag t;
    struct rec_field fl;
    int rc;
    while ((rc = rec_row_next_tag(&r, &t)) == 1)
        buf_printf(out, "%.*s", (int)t.value.len, t.value.ptr);
    assert_int_equal(rc, 0);
    buf_putc(out, '|');
    for (int n = 0; (rc = rec_row_next_field(&r, &fl)) == 1; n++)
        buf_printf(out, "%s%.*s=%lld", n ? "," : "", (int)fl.key.len, fl.key.ptr,
                   (long long)fl.v.i);
    assert_int_equal(rc, 0);
}

static void render_key(struct buf *out, struct slice k, struct slice v)
{
    struct key_row kr;
    assert_int_equal(key_decode_row(k, true, &kr), ERR_OK);
    buf_printf(out, "%lld %.*s ", (long long)((kr.ts - T0) / SEC), (int)kr.host.len, kr.host.ptr);
    render(out, kr.id, v);
    buf_putc(out, '\n');
}

/* Every row of every bucket, forward; the same rows backward must be the
 * reverse, and store_rows of each row's (ts, host, event) must hold it. */
static void dump(struct fixture *f, struct buf *out)
{
    struct store_snap *snap = store_snapshot(f->db);
    for (uint32_t b = 0; b < BUCKETS; b++) {
        struct buf fw = BUF_INIT, bw = BUF_INIT, line = BUF_INIT;
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it))
            render_key(&fw, it_key(it), it_value(it));
        assert_int_equal(it_status(it), ERR_OK);
        for (it_seek_last(it); it_valid(it); it_prev(it)) {
            buf_reset(&line);
            render_key(&line, it_key(it), it_value(it));
            buf_append(&line, bw.data, bw.len); /* prepend: backward is the reverse */
            buf_reset(&bw);
            buf_append(&bw, line.data, line.len);
        }
        assert_int_equal(it_status(it), ERR_OK);
        assert_string_equal(buf_cstr(&fw), buf_cstr(&bw));
        it_destroy(it);
        buf_append(out, fw.data, fw.len);
        buf_destroy(&fw);
        buf_destroy(&bw);
        buf_destroy(&line);
    }
    store_snap_release(snap);
}

/* The rows of (ts, "h", "cpu") through store_rows, one per line. */
static void rows_of(struct fixture *f, int64_t ts, const char *host, struct buf *out)
{
    struct store_snap *snap = store_snapshot(f->db);
    struct store_rows *r;
    assert_int_equal(store_rows_open(snap, ts, slice_cstr(host), slice_cstr("cpu"), &r), ERR_OK);
    struct slice k, v;
    int rc;
    while ((rc = store_rows_next(r, &k, &v)) == 1)
        render_key(out, k, v);
    assert_int_equal(rc, 0);
    store_rows_close(r);
    store_snap_release(snap);
}

/* The dump (unless want is NULL) and the rows of ts 1 and 2 of host h equal
 * want and want_rows, now, after a flush, after a full compaction and after
 * a restart. */
static void expect_everywhere(struct fixture *f, const char *want, const char *want_rows)
{
    for (int step = 0; step < 4; step++) {
        if (step == 1)
            assert_int_equal(store_db_flush(f->db), ERR_OK);
        if (step == 2)
            assert_int_equal(store_db_compact(f->db), ERR_OK);
        if (step == 3)
            reopen(f);
        struct buf got = BUF_INIT, rows = BUF_INIT;
        dump(f, &got);
        if (want && strcmp(buf_cstr(&got), want))
            fail_msg("step %d: got\n%swant\n%s", step, buf_cstr(&got), want);
        rows_of(f, T0 + SEC, "h", &rows);
        rows_of(f, T0 + 2 * SEC, "h", &rows);
        if (strcmp(buf_cstr(&rows), want_rows))
            fail_msg("step %d: rows got\n%swant\n%s", step, buf_cstr(&rows), want_rows);
        buf_destroy(&got);
        buf_destroy(&rows);
    }
}

static void test_series_are_rows(void **state)
{
    struct fixture *f = *state;
    put_point(f, T0 + SEC, "h", "cpu0", "u=1");
    put_point(f, T0 + SEC, "h", "cpu1", "u=2");
    put_point(f, T0 + SEC, "h", "total", "u=3");
    put_point(f, T0 + SEC, "h", NULL, "u=4");
    const char *all = "1 h |u=4\n1 h cpu0|u=1\n1 h cpu1|u=2\n1 h total|u=3\n";
    expect_everywhere(f, all, all);
}

static void test_points_merge(void **state)
{
    struct fixture *f = *state;
    put_point(f, T0 + SEC, "h", "cpu0", "a=1,b=1");
    assert_int_equal(store_db_flush(f->db), ERR_OK); /* versions in a file and a memtable */
    put_point(f, T0 + SEC, "h", "cpu0", "c=2");
    put_point(f, T0 + SEC, "h", "cpu0", "a=3");
    put_point(f, T0 + SEC, "h", NULL, "x=1");
    put_point(f, T0 + SEC, "h", NULL, "y=2");
    const char *all = "1 h |y=2,x=1\n1 h cpu0|a=3,c=2,b=1\n";
    expect_everywhere(f, all, all);
    /* store_get reads the row without an id, merged */
    struct buf v = BUF_INIT, r = BUF_INIT;
    assert_int_equal(store_get(f->db, T0 + SEC, slice_cstr("h"), slice_cstr("cpu"), &v), ERR_OK);
    render(&r, slice_make("", 0), slice_make(v.data, v.len));
    assert_string_equal(buf_cstr(&r), "|y=2,x=1");
    buf_destroy(&v);
    buf_destroy(&r);
}

static void test_merge_stops_at_deletes(void **state)
{
    struct fixture *f = *state;
    struct buf id = BUF_INIT;
    record(&id, "cpu0", NULL);
    put_point(f, T0 + SEC, "h", "cpu0", "a=1");
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    struct batch *b = batch_new();
    batch_delete_id(b, T0 + SEC, slice_cstr("h"), slice_cstr("cpu"), slice_make(id.data, id.len));
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    put_point(f, T0 + SEC, "h", "cpu0", "b=2");
    /* a range tombstone between two versions of ts 2 */
    put_point(f, T0 + 2 * SEC, "h", "cpu0", "c=3");
    assert_int_equal(store_db_delete_range(f->db, slice_cstr("h"), NULL, T0 + 2 * SEC,
                                           T0 + 2 * SEC),
                     ERR_OK);
    put_point(f, T0 + 2 * SEC, "h", "cpu0", "d=4");
    expect_everywhere(f, NULL, "1 h cpu0|b=2\n2 h cpu0|d=4\n");
    buf_destroy(&id);
}

static void test_logs_by_content(void **state)
{
    struct fixture *f = *state;
    put_log(f, T0 + SEC, "h", "m=1");
    put_log(f, T0 + SEC, "h", "m=2");
    put_log(f, T0 + SEC, "h", "m=1"); /* a retried batch: the same row */
    assert_int_equal(store_db_flush(f->db), ERR_OK);
    put_log(f, T0 + SEC, "h", "m=2");
    put_log(f, T0 + SEC, "h", "m=1,n=1");
    const char *all = "1 h |m=1\n1 h |m=2\n1 h |m=1,n=1\n";
    expect_everywhere(f, all, all);
}

/* One batch whose rows come out of key order (the store applies a batch's
 * rows sorted by key): versions of a point, a log entry twice, a put and
 * a delete of one entry, two hosts and two ts; the same answer as one
 * batch a row. */
static void test_one_batch_any_order(void **state)
{
    struct fixture *f = *state;
    struct buf id[6], v[2];
    for (int i = 0; i < 6; i++)
        buf_init(&id[i]);
    for (int i = 0; i < 2; i++)
        buf_init(&v[i]);
    record(&id[0], NULL, "m=2");
    record(&id[1], "cpu1", NULL);
    record(&v[0], NULL, "u=1");
    record(&id[2], NULL, "m=1");
    record(&v[1], NULL, "u=5,v=6");
    record(&id[3], NULL, "m=3");
    record(&id[4], NULL, "m=4");
    struct slice cpu = slice_cstr("cpu"), none = slice_make("", 0);
#define S(b) slice_make((b).data, (b).len)
    struct batch *b = batch_new();
    batch_put_id(b, T0 + 2 * SEC, slice_cstr("h"), cpu, S(id[0]), none, false);
    batch_put_id(b, T0 + SEC, slice_cstr("h"), cpu, S(id[1]), S(v[0]), true);
    batch_put_id(b, T0 + SEC, slice_cstr("h"), cpu, S(id[4]), none, false);
    batch_put_id(b, T0 + SEC, slice_cstr("h"), cpu, S(id[2]), none, false);
    batch_put_id(b, T0 + SEC, slice_cstr("h"), cpu, S(id[1]), S(v[1]), true);
    batch_put_id(b, T0 + 2 * SEC, slice_cstr("h"), cpu, S(id[0]), none, false);
    batch_put_id(b, T0 + SEC, slice_cstr("g"), cpu, S(id[3]), none, false);
    batch_delete_id(b, T0 + SEC, slice_cstr("h"), cpu, S(id[4]));
#undef S
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    expect_everywhere(f, NULL, "1 h |m=1\n1 h cpu1|u=5,v=6\n2 h |m=2\n");
    struct buf rows = BUF_INIT;
    rows_of(f, T0 + SEC, "g", &rows);
    assert_string_equal(buf_cstr(&rows), "1 g |m=3\n");
    buf_destroy(&rows);
    for (int i = 0; i < 6; i++)
        buf_destroy(&id[i]);
    for (int i = 0; i < 2; i++)
        buf_destroy(&v[i]);
}

static void test_delete_one_of_many(void **state)
{
    struct fixture *f = *state;
    struct buf id = BUF_INIT;
    put_point(f, T0 + SEC, "h", "cpu0", "u=1");
    put_point(f, T0 + SEC, "h", "cpu1", "u=2");
    record(&id, "cpu0", NULL);
    struct batch *b = batch_new();
    batch_delete_id(b, T0 + SEC, slice_cstr("h"), slice_cstr("cpu"), slice_make(id.data, id.len));
    assert_int_equal(store_write(f->db, b), ERR_OK);
    batch_free(b);
    expect_everywhere(f, "1 h cpu1|u=2\n", "1 h cpu1|u=2\n");
    /* the host index entry of (h, ts 1, cpu) stays for the row left */
    struct store_snap *snap = store_snapshot(f->db);
    struct iter *it = store_iter_index_host(snap, slice_cstr("h"));
    int n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n++;
    assert_int_equal(n, 1);
    it_destroy(it);
    store_snap_release(snap);
    buf_destroy(&id);
}

static void test_bad_event(void **state)
{
    struct fixture *f = *state;
    struct batch *b = batch_new();
    batch_put_id(b, T0, slice_cstr("h"), slice_make("a\1b", 3), slice_cstr("x"), slice_cstr(""),
                 false);
    assert_int_equal(store_write(f->db, b), ERR_INVAL);
    batch_free(b);
}

static void test_keys(void **state)
{
    (void)state;
    struct buf k0 = BUF_INIT, k1 = BUF_INIT, k2 = BUF_INIT, base = BUF_INIT;
    key_encode_row(&k0, 2, T0, true, slice_cstr("h"), slice_cstr("ev"));
    key_encode_row_id(&k1, 2, T0, true, slice_cstr("h"), slice_cstr("ev"), slice_make("\0\1", 2));
    key_encode_row_id(&k2, 2, T0, true, slice_cstr("h"), slice_cstr("ev"), slice_cstr("z"));
    key_encode_row_base(&base, 2, T0, true, slice_cstr("h"), slice_cstr("ev"));
    struct slice s0 = slice_make(k0.data, k0.len), s1 = slice_make(k1.data, k1.len),
                 s2 = slice_make(k2.data, k2.len);
    /* no id first, then ids by length, then bytes */
    assert_true(slice_cmp(s0, s2) < 0 && slice_cmp(s2, s1) < 0);
    for (int i = 0; i < 3; i++) {
        struct slice s = i == 0 ? s0 : i == 1 ? s1 : s2;
        assert_int_equal(key_row_base_len(s), base.len);
        assert_memory_equal(s.ptr, base.data, base.len);
        struct key_row r;
        assert_int_equal(key_decode_row(s, true, &r), ERR_OK);
        assert_true(r.ts == T0 && r.bucket == 2 && slice_eq(r.host, slice_cstr("h")) &&
                    slice_eq(r.event, slice_cstr("ev")));
        assert_int_equal(r.id.len, i == 0 ? 0 : i == 1 ? 2 : 1);
        assert_true(slice_eq(key_row_event(s), slice_cstr("ev")));
    }
    /* every key of the base lies in [base 0, base 2); a longer event does not */
    struct buf other = BUF_INIT;
    key_encode_row(&other, 2, T0, true, slice_cstr("h"), slice_cstr("ev2"));
    buf_putc(&base, '\2');
    assert_true(slice_cmp(s2, slice_make(base.data, base.len)) < 0);
    assert_true(slice_cmp(slice_make(other.data, other.len), slice_make(base.data, base.len)) > 0);
    /* damaged ends */
    struct key_row r;
    k1.data[k1.len - 3] = 5; /* id length past the end */
    assert_int_equal(key_decode_row(slice_make(k1.data, k1.len), true, &r), ERR_CORRUPT);
    buf_putc(&k0, 'x'); /* bytes after the 0x00 end */
    assert_int_equal(key_decode_row(slice_make(k0.data, k0.len), true, &r), ERR_CORRUPT);
    assert_false(key_event_ok(slice_make("a\1", 2)));
    assert_true(key_event_ok(slice_cstr("cpu.load")));
    buf_destroy(&k0);
    buf_destroy(&k1);
    buf_destroy(&k2);
    buf_destroy(&base);
    buf_destroy(&other);
}

static void test_rec_merge(void **state)
{
    (void)state;
    struct buf a = BUF_INIT, b = BUF_INIT, out = BUF_INIT, r = BUF_INIT;
    record(&a, "x", "p=1,q=2");
    record(&b, "y", "q=5,s=6");
    assert_int_equal(rec_merge(&out, slice_make(b.data, b.len), slice_make(a.data, a.len)), 0);
    render(&r, slice_make("", 0), slice_make(out.data, out.len));
    assert_string_equal(buf_cstr(&r), "y|q=5,s=6,p=1");
    buf_reset(&out);
    assert_int_equal(rec_merge(&out, slice_make("", 0), slice_make(a.data, a.len)), 0);
    assert_int_equal(out.len, a.len);
    assert_int_equal(rec_merge(&out, slice_make("\5", 1), slice_make(a.data, a.len)), ERR_CORRUPT);
    buf_destroy(&a);
    buf_destroy(&b);
    buf_destroy(&out);
    buf_destroy(&r);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_rec_merge),
        cmocka_unit_test_setup_teardown(test_series_are_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_points_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_stops_at_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logs_by_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_one_of_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_batch_any_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_event, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
