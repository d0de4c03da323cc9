/* WAL: framing round trip, group commit from several threads, a torn tail
 * (cut and reported, the log continues), damage in the middle (ERR_CORRUPT),
 * crc32c vectors and masking. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "store/wal.h"
#include "tests/support/store_testutil.h"

struct collected {
    int n;
    struct buf all;
};

static int collect(void *ctx, struct slice p)
{
    struct collected *c = ctx;
    c->n++;
    buf_append(&c->all, p.ptr, p.len);
    buf_putc(&c->all, '|');
    return ERR_OK;
}

static void append_str(struct wal *w, const char *s)
{
    struct buf rec = BUF_INIT;
    buf_reserve(&rec, WAL_HEADER + strlen(s));
    rec.len = WAL_HEADER;
    buf_puts(&rec, s);
    uint64_t end, seq;
    assert_int_equal(wal_append(w, rec.data, rec.len, &end), ERR_OK);
    wal_mark_ready(w, end, 1);
    assert_int_equal(wal_sync_to(w, end, &seq), ERR_OK);
    buf_destroy(&rec);
}

static char *seg_path(const char *dir, int seg)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "%s/%06d.log", dir, seg);
    return buf_steal(&b, NULL);
}

static void write_log(const char *dir, int nrec)
{
    struct wal *w;
    assert_int_equal(wal_open(env_posix(), dir, 1, &w), ERR_OK);
    char s[64];
    for (int i = 0; i < nrec; i++) {
        snprintf(s, sizeof s, "record-%d-%.*s", i, i % 30, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        append_str(w, s);
    }
    wal_close(w);
}

static void test_crc32c(void **state)
{
    (void)state;
    assert_int_equal(crc32c("123456789", 9), 0xe3069283u);
    assert_int_equal(crc32c_test_sw("123456789", 9), 0xe3069283u);
    char zeros[32] = {0};
    assert_int_equal(crc32c(zeros, 32), 0x8a9136aau);
    char big[1000];
    for (int i = 0; i < 1000; i++)
        big[i] = (char)(i * 31);
    assert_int_equal(crc32c(big, 1000), crc32c_test_sw(big, 1000));
    /* the three-stream path (3 KiB and up) against the table, at every
     * length around its edges and with every start alignment */
    static char huge[10000];
    for (size_t i = 0; i < sizeof huge; i++)
        huge[i] = (char)(i * 131 + (i >> 7));
    static const size_t lens[] = {3071, 3072, 3073, 3080, 6143, 6144, 6145, 9215, 9216, 9999};
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        assert_int_equal(crc32c(huge, lens[l]), crc32c_test_sw(huge, lens[l]));
    for (size_t off = 0; off < 8; off++)
        assert_int_equal(crc32c(huge + off, 9000), crc32c_test_sw(huge + off, 9000));
    assert_int_equal(crc32c_extend(crc32c(huge, 4000), huge + 4000, 5000), crc32c(huge, 9000));
    assert_int_equal(crc32c_extend(crc32c(big, 500), big + 500, 500), crc32c(big, 1000));
    uint32_t c = crc32c("abc", 3);
    assert_int_not_equal(crc32c_mask(c), c);
    assert_int_equal(crc32c_unmask(crc32c_mask(c)), c);
}

static void test_roundtrip(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wal");
    write_log(dir, 50);
    char *p = seg_path(dir, 1);
    struct collected c = {0, BUF_INIT};
    assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_OK);
    assert_int_equal(c.n, 50);
    assert_non_null(strstr(buf_cstr(&c.all), "record-0-|record-1-x|"));
    buf_destroy(&c.all);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

/* wal_at_path: the segment being written is at its path until the
 * folder is removed, or the file renamed away or replaced. */
static void test_at_path(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wal");
    struct wal *w;
    assert_int_equal(wal_open(env_posix(), dir, 1, &w), ERR_OK);
    append_str(w, "one");
    bool there = false;
    assert_int_equal(wal_at_path(w, &there), ERR_OK);
    assert_true(there);
    char *p = seg_path(dir, 1);
    struct buf moved = BUF_INIT;
    buf_printf(&moved, "%s.moved", p);
    assert_int_equal(rename(p, buf_cstr(&moved)), 0);
    FILE *f = fopen(p, "w"); /* another file takes its name */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(wal_at_path(w, &there), ERR_OK);
    assert_false(there);
    assert_int_equal(rename(buf_cstr(&moved), p), 0);
    assert_int_equal(wal_at_path(w, &there), ERR_OK);
    assert_true(there);
    tu_rmtree(dir);
    assert_int_equal(wal_at_path(w, &there), ERR_OK);
    assert_false(there);
    wal_close(w);
    buf_destroy(&moved);
    free(p);
    free(dir);
}

static void test_torn_tail(void **state)
{
    (void)state;
    for (int cut = 1; cut < 20; cut += 3) {
        char *dir = tu_mkdtemp("wal");
        write_log(dir, 10);
        char *p = seg_path(dir, 1);
        int64_t size = tu_file_size(p);
        assert_int_equal(tu_truncate(p, size - cut), 0);
        struct collected c = {0, BUF_INIT};
        assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_OK);
        assert_int_equal(c.n, 9);
        assert_true(tu_file_size(p) < size - cut); /* the partial record was cut */
        c.n = 0;
        assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_OK);
        assert_int_equal(c.n, 9);
        buf_destroy(&c.all);
        free(p);
        tu_rmtree(dir);
        free(dir);
    }
}

static void test_bad_last_payload_is_torn(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wal");
    write_log(dir, 5);
    char *p = seg_path(dir, 1);
    int64_t size = tu_file_size(p);
    assert_int_equal(tu_flip_byte(p, size - 2, 0x20), 0);
    struct collected c = {0, BUF_INIT};
    assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_OK);
    assert_int_equal(c.n, 4);
    buf_destroy(&c.all);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

/* A sealed segment (a newer one follows; the roll synced it) has no torn
 * tail: the same damage is corruption, reported, and nothing is cut. */
static void test_sealed_segment_tail_is_damage(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wal");
    write_log(dir, 5);
    char *p = seg_path(dir, 1);
    int64_t size = tu_file_size(p);
    assert_int_equal(tu_flip_byte(p, size - 2, 0x20), 0);
    struct collected c = {0, BUF_INIT};
    assert_int_equal(wal_replay(env_posix(), p, false, collect, &c), ERR_CORRUPT);
    assert_int_equal(tu_file_size(p), size);
    /* an incomplete last record too */
    assert_int_equal(tu_truncate(p, size - 3), 0);
    buf_reset(&c.all);
    c.n = 0;
    assert_int_equal(wal_replay(env_posix(), p, false, collect, &c), ERR_CORRUPT);
    assert_int_equal(tu_file_size(p), size - 3);
    buf_destroy(&c.all);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

static void test_middle_corruption(void **state)
{
    (void)state;
    static const int64_t offsets[] = {0, 2, 5, 9, 13, 20};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        char *dir = tu_mkdtemp("wal");
        write_log(dir, 10);
        char *p = seg_path(dir, 1);
        assert_int_equal(tu_flip_byte(p, offsets[i], 0x01), 0);
        struct collected c = {0, BUF_INIT};
        assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_CORRUPT);
        assert_int_equal(c.n, 0);
        buf_destroy(&c.all);
        free(p);
        tu_rmtree(dir);
        free(dir);
    }
}

static void test_zero_tail(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wal");
    write_log(dir, 3);
    char *p = seg_path(dir, 1);
    FILE *f = fopen(p, "ab");
    char zeros[100] = {0};
    fwrite(zeros, 1, sizeof zeros, f);
    fclose(f);
    struct collected c = {0, BUF_INIT};
    assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_OK);
    assert_int_equal(c.n, 3);
    buf_destroy(&c.all);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

struct gc_arg {
    struct wal *w;
    pthread_mutex_t *mu;
};

static void *gc_writer(void *arg)
{
    struct gc_arg *a = arg;
    char rec[WAL_HEADER + 16];
    memset(rec, 'r', sizeof rec);
    for (int i = 0; i < 200; i++) {
        uint64_t end, seq;
        pthread_mutex_lock(a->mu);
        int rc = wal_append(a->w, rec, sizeof rec, &end);
        wal_mark_ready(a->w, end, (uint64_t)i);
        pthread_mutex_unlock(a->mu);
        if (rc || wal_sync_to(a->w, end, &seq))
            return (void *)1;
    }
    return NULL;
}

static void test_group_commit(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("wal");
    struct wal *w;
    assert_int_equal(wal_open(env_posix(), dir, 1, &w), ERR_OK);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    struct gc_arg a = {w, &mu};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, gc_writer, &a);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    struct wal_stats st;
    wal_stats(w, &st);
    assert_int_equal(st.records, 800);
    assert_true(st.syncs <= 800);
    assert_int_equal(wal_roll(w, 2, true), ERR_OK);
    assert_int_equal(wal_segment(w), 2);
    wal_close(w);
    char *p = seg_path(dir, 1);
    struct collected c = {0, BUF_INIT};
    assert_int_equal(wal_replay(env_posix(), p, true, collect, &c), ERR_OK);
    assert_int_equal(c.n, 800);
    buf_destroy(&c.all);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_at_path),
        cmocka_unit_test(test_torn_tail),
        cmocka_unit_test(test_bad_last_payload_is_torn),
        cmocka_unit_test(test_sealed_segment_tail_is_damage),
        cmocka_unit_test(test_middle_corruption),
        cmocka_unit_test(test_zero_tail),
        cmocka_unit_test(test_group_commit),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
