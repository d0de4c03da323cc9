/* Corruption: bytes flipped in an SSTable, a manifest and the WAL give a
 * clear error (or, for a torn WAL tail, the documented truncation), never a
 * crash and never a wrong answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "store/store.h"
#include "tests/support/store_fixture.h"
#include "tests/support/store_testutil.h"

#define T0 (1700000000LL * 1000000000LL)
#define NROWS 3000

static int open_store(const char *dir, struct store **s, struct store_db **db)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_ALWAYS;
    int rc = store_open(&o, s);
    if (rc)
        return rc;
    rc = store_db_get(*s, "c", db);
    if (rc == ERR_OFFLINE) /* it could not open: the store serves the others */
        return tu_offline_rc(*s, "c");
    if (rc == ERR_NOTFOUND) {
        struct db_opts d = {.buckets = 1, .ts_desc = true};
        assert_int_equal(store_db_create(*s, "c", &d), ERR_OK);
        assert_int_equal(store_db_get(*s, "c", db), ERR_OK);
    }
    return ERR_OK;
}

static void value_of(int i, char *v, size_t n)
{
    snprintf(v, n, "value-%d-%d-some-more-bytes-here", i, i * 7);
}

static void write_rows(struct store_db *db, int from, int to, int per_batch)
{
    struct batch *b = batch_new();
    char v[64];
    for (int i = from; i < to; i++) {
        value_of(i, v, sizeof v);
        batch_put(b, T0 + i, slice_cstr("host"), slice_cstr("ev"), slice_cstr(v));
        if ((int)batch_count(b) == per_batch || i == to - 1) {
            assert_int_equal(store_write(db, b), ERR_OK);
            batch_clear(b);
        }
    }
    batch_free(b);
}

/* Every row is either right or an error; returns the errors seen. */
static int check_rows(struct store_db *db, int n)
{
    struct buf got = BUF_INIT;
    char v[64];
    int errors = 0;
    for (int i = 0; i < n; i++) {
        buf_reset(&got);
        int rc = store_get(db, T0 + i, slice_cstr("host"), slice_cstr("ev"), &got);
        if (rc == ERR_CORRUPT) {
            errors++;
            continue;
        }
        assert_int_equal(rc, ERR_OK);
        value_of(i, v, sizeof v);
        assert_int_equal(got.len, strlen(v));
        assert_memory_equal(got.data, v, got.len);
    }
    struct store_snap *snap = store_snapshot(db);
    struct iter *it = store_iter_bucket(snap, 0);
    int seen = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        seen++;
    if (it_status(it) == ERR_CORRUPT)
        errors++;
    else
        assert_int_equal(seen, n);
    it_destroy(it);
    store_snap_release(snap);
    buf_destroy(&got);
    return errors;
}

static char *first_file(const char *dir, const char *sub, const char *suffix)
{
    struct buf d = BUF_INIT;
    buf_printf(&d, "%s/c/%s", dir, sub);
    char **files;
    size_t n = tu_list_suffix(d.data, suffix, &files);
    buf_destroy(&d);
    assert_true(n >= 1);
    for (size_t i = 1; i < n; i++)
        free(files[i]);
    char *f = files[0];
    free(files);
    return f;
}

static void test_sst_block(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    write_rows(db, 0, NROWS, 500);
    store_db_unref(db);
    store_close(s);
    char *sst = first_file(dir, "p00", ".sst");
    int64_t size = tu_file_size(sst);
    assert_true(size > 200);
    assert_int_equal(tu_flip_byte(sst, size / 4, 0x40), 0);
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    int errors = check_rows(db, NROWS);
    assert_true(errors > 0);
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    assert_null(strstr(buf_cstr(&m), "logbucket_corruption_errors_total{db=\"c\"} 0\n"));
    buf_destroy(&m);
    store_db_unref(db);
    store_close(s);
    /* a damaged footer stops the open with a clear error */
    assert_int_equal(tu_flip_byte(sst, size - 3, 0x01), 0);
    assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
    free(sst);
    tu_rmtree(dir);
    free(dir);
}

/* A damaged data block does not make compaction fail at every run while
 * files pile up: the damaged file is taken out of its partition into
 * quarantine/, the other files merge, and every row of theirs reads. */
static void test_compaction_quarantine(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    for (int k = 0; k < 3; k++) { /* three files of one window */
        write_rows(db, k * 1000, (k + 1) * 1000, 500);
        assert_int_equal(store_db_flush(db), ERR_OK);
    }
    store_db_unref(db);
    store_close(s);
    char **ssts;
    struct buf pdir = BUF_INIT;
    buf_printf(&pdir, "%s/c/p00", dir);
    size_t nsst = tu_list_suffix(pdir.data, ".sst", &ssts);
    assert_int_equal(nsst, 3);
    int64_t size = tu_file_size(ssts[1]);
    assert_int_equal(tu_flip_byte(ssts[1], size / 5, 0x40), 0); /* a data block */
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    assert_int_equal(store_db_compact(db), ERR_OK);
    /* the damaged file went to quarantine; the others were merged */
    struct buf q = BUF_INIT;
    buf_printf(&q, "%s/quarantine", pdir.data);
    char **qf;
    assert_int_equal(tu_list_suffix(q.data, ".sst", &qf), 1);
    free(qf[0]);
    free(qf);
    assert_int_equal(store_db_compact(db), ERR_OK); /* and compaction goes on */
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    assert_non_null(strstr(buf_cstr(&m), "logbucket_quarantined_files_total{db=\"c\"} 1\n"));
    buf_destroy(&m);
    /* every row still there reads right, 2,000 of the 3,000 or more */
    struct store_snap *snap = store_snapshot(db);
    struct iter *it = store_iter_bucket(snap, 0);
    int seen = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        seen++;
    assert_int_equal(it_status(it), ERR_OK);
    assert_true(seen >= 2000 && seen < 3000);
    it_destroy(it);
    store_snap_release(snap);
    store_db_unref(db);
    store_close(s);
    for (size_t i = 0; i < nsst; i++)
        free(ssts[i]);
    free(ssts);
    buf_destroy(&q);
    buf_destroy(&pdir);
    tu_rmtree(dir);
    free(dir);
}

/* A store in dir with 100 rows in its files, closed. */
static void store_100_rows(const char *dir)
{
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    write_rows(db, 0, 100, 50);
    store_db_unref(db);
    store_close(s);
}

/* The store in dir opens and every one of its 100 rows reads right. */
static void expect_100_rows(const char *dir)
{
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    assert_int_equal(check_rows(db, 100), 0);
    store_db_unref(db);
    store_close(s);
}

static void test_manifest(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    struct store *s;
    struct store_db *db;
    store_100_rows(dir);
    struct buf mf = BUF_INIT;
    buf_printf(&mf, "%s/c/p00/MANIFEST", dir);
    assert_int_equal(tu_flip_byte(mf.data, 20, 0x10), 0);
    assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
    buf_destroy(&mf);
    tu_rmtree(dir);
    free(dir);
}

/* A MANIFEST lost beside live files (of a bucket, or of the host index)
 * fails the open and deletes nothing; put back, every row reads again. */
static void test_manifest_missing(void **state)
{
    (void)state;
    static const char *parts[] = {"p00", "hidx"};
    for (size_t k = 0; k < 2; k++) {
        char *dir = tu_mkdtemp("corrupt");
        struct store *s;
        struct store_db *db;
        store_100_rows(dir);
        struct buf mf = BUF_INIT, saved = BUF_INIT, pdir = BUF_INIT;
        buf_printf(&pdir, "%s/c/%s", dir, parts[k]);
        buf_printf(&mf, "%s/MANIFEST", pdir.data);
        buf_printf(&saved, "%s/MANIFEST.saved", dir);
        char **ssts;
        size_t nsst = tu_list_suffix(pdir.data, ".sst", &ssts);
        assert_true(nsst > 0);
        assert_int_equal(rename(mf.data, saved.data), 0);
        assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
        for (size_t i = 0; i < nsst; i++) {
            assert_true(tu_file_size(ssts[i]) > 0); /* still there */
            free(ssts[i]);
        }
        free(ssts);
        assert_int_equal(rename(saved.data, mf.data), 0);
        expect_100_rows(dir);
        buf_destroy(&mf);
        buf_destroy(&saved);
        buf_destroy(&pdir);
        tu_rmtree(dir);
        free(dir);
    }
}

/* A database whose META is lost is not opened, and not created again over
 * its files with default options (which would misread them). */
static void test_meta_missing(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    struct store *s;
    struct store_db *db;
    store_100_rows(dir);
    struct buf meta = BUF_INIT, saved = BUF_INIT;
    buf_printf(&meta, "%s/c/META", dir);
    buf_printf(&saved, "%s/META.saved", dir);
    assert_int_equal(rename(meta.data, saved.data), 0);
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    assert_int_equal(store_open(&o, &s), ERR_OK);
    assert_int_equal(store_db_get(s, "c", &db), ERR_NOTFOUND);
    struct db_opts d = {.buckets = 16, .ts_desc = true};
    assert_int_equal(store_db_create(s, "c", &d), ERR_CORRUPT);
    assert_int_equal(tu_file_size(meta.data), -1);
    store_close(s);
    assert_int_equal(rename(saved.data, meta.data), 0);
    expect_100_rows(dir);
    buf_destroy(&meta);
    buf_destroy(&saved);
    tu_rmtree(dir);
    free(dir);
}

/* A creation killed between META.tmp and its rename leaves that file
 * alone in the directory: the database is created over it (and a
 * directory with any other file is still refused). */
static void test_meta_tmp_left(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    struct buf db_dir = BUF_INIT, tmp = BUF_INIT, other = BUF_INIT;
    buf_printf(&db_dir, "%s/c", dir);
    buf_printf(&tmp, "%s/c/META.tmp", dir);
    buf_printf(&other, "%s/c/wal", dir);
    assert_int_equal(mkdir(db_dir.data, 0755), 0);
    FILE *f = fopen(tmp.data, "w");
    assert_non_null(f);
    fputs("LBDM", f); /* a torn write */
    fclose(f);
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    struct store *s;
    struct store_db *db;
    struct db_opts d = {.buckets = 16, .ts_desc = true};
    assert_int_equal(store_open(&o, &s), ERR_OK);
    assert_int_equal(store_db_get(s, "c", &db), ERR_NOTFOUND);
    assert_int_equal(store_db_create(s, "d2", &d), ERR_OK);
    assert_int_equal(mkdir(other.data, 0755), 0); /* not only META.tmp: refused */
    assert_int_equal(store_db_create(s, "c", &d), ERR_CORRUPT);
    assert_int_equal(rmdir(other.data), 0);
    assert_int_equal(store_db_create(s, "c", &d), ERR_OK);
    assert_int_equal(tu_file_size(tmp.data), -1);
    store_close(s);
    assert_int_equal(store_open(&o, &s), ERR_OK);
    assert_int_equal(store_db_get(s, "c", &db), ERR_OK);
    store_db_unref(db);
    store_close(s);
    buf_destroy(&db_dir);
    buf_destroy(&tmp);
    buf_destroy(&other);
    tu_rmtree(dir);
    free(dir);
}

/* A child writes batches of 10 rows durably and dies without closing, so
 * the rows live only in the WAL. */
static void crash_after_writes(const char *dir, int rows)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct store *s;
        struct store_db *db;
        if (open_store(dir, &s, &db))
            _exit(2);
        write_rows(db, 0, rows, 10);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_wal_torn_tail(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    crash_after_writes(dir, 100);
    char *wal = first_file(dir, "wal", ".log");
    int64_t size = tu_file_size(wal);
    assert_int_equal(tu_truncate(wal, size - 7), 0);
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    struct buf v = BUF_INIT;
    for (int i = 0; i < 100; i++) {
        buf_reset(&v);
        int rc = store_get(db, T0 + i, slice_cstr("host"), slice_cstr("ev"), &v);
        assert_int_equal(rc, i < 90 ? ERR_OK : ERR_NOTFOUND);
    }
    buf_destroy(&v);
    write_rows(db, 100, 110, 10); /* the log continues cleanly */
    store_db_unref(db);
    store_close(s);
    free(wal);
    tu_rmtree(dir);
    free(dir);
}

static void test_wal_middle(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("corrupt");
    crash_after_writes(dir, 100);
    char *wal = first_file(dir, "wal", ".log");
    assert_int_equal(tu_flip_byte(wal, 40, 0x08), 0); /* inside the first record */
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
    assert_int_equal(tu_flip_byte(wal, 40, 0x08), 0);
    assert_int_equal(tu_flip_byte(wal, 1, 0x08), 0); /* a record length */
    assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
    free(wal);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sst_block),     cmocka_unit_test(test_compaction_quarantine),
        cmocka_unit_test(test_manifest),      cmocka_unit_test(test_manifest_missing),
        cmocka_unit_test(test_meta_missing),  cmocka_unit_test(test_meta_tmp_left),
        cmocka_unit_test(test_wal_torn_tail), cmocka_unit_test(test_wal_middle),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
