/* Manifests and database metadata: the live-file set survives reopens and
 * compactions, leftover files are removed at open, obsolete WAL segments are
 * deleted, and damage to a manifest or META refuses the open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "store/store.h"
#include "tests/support/store_fixture.h"
#include "tests/support/store_testutil.h"

#define T0 (1700000000LL * 1000000000LL)
#define HOUR (3600LL * 1000000000LL)

static int open_store(const char *dir, struct store **s, struct store_db **db)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    int rc = store_open(&o, s);
    if (rc)
        return rc;
    rc = store_db_get(*s, "m", db);
    if (rc == ERR_OFFLINE) /* it could not open: the store serves the others */
        return tu_offline_rc(*s, "m");
    if (rc == ERR_NOTFOUND) {
        struct db_opts d = {.buckets = 1, .ts_desc = false};
        assert_int_equal(store_db_create(*s, "m", &d), ERR_OK);
        assert_int_equal(store_db_get(*s, "m", db), ERR_OK);
    }
    return ERR_OK;
}

static void put_window(struct store_db *db, int hour, int rows)
{
    struct batch *b = batch_new();
    for (int i = 0; i < rows; i++)
        batch_put(b, T0 + hour * HOUR + i, slice_cstr("h"), slice_cstr("e"), slice_cstr("v"));
    assert_int_equal(store_write(db, b), ERR_OK);
    batch_free(b);
    assert_int_equal(store_db_flush(db), ERR_OK);
}

static size_t count(const char *dir, const char *sub, const char *suffix)
{
    struct buf d = BUF_INIT;
    buf_printf(&d, "%s/m/%s", dir, sub);
    char **f;
    size_t n = tu_list_suffix(d.data, suffix, &f);
    for (size_t i = 0; i < n; i++)
        free(f[i]);
    free(f);
    buf_destroy(&d);
    return n;
}

static size_t rows(struct store_db *db)
{
    struct store_snap *snap = store_snapshot(db);
    struct iter *it = store_iter_bucket(snap, 0);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it); it_next(it))
        n++;
    assert_int_equal(it_status(it), ERR_OK);
    it_destroy(it);
    store_snap_release(snap);
    return n;
}

static void test_live_files(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("mf");
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    for (int k = 0; k < 3; k++)
        put_window(db, 0, 100 + k); /* three files in window 0 */
    put_window(db, 1, 10);
    assert_int_equal(count(dir, "p00", ".sst"), 4);
    assert_int_equal(count(dir, "wal", ".log"), 1); /* only the active segment */
    store_db_unref(db);
    store_close(s);
    /* leftovers: an unlisted table and a temp manifest */
    struct buf p = BUF_INIT;
    buf_printf(&p, "%s/m/p00/999999.sst", dir);
    FILE *f = fopen(p.data, "w");
    fputs("junk", f);
    fclose(f);
    buf_reset(&p);
    buf_printf(&p, "%s/m/p00/MANIFEST.tmp", dir);
    f = fopen(p.data, "w");
    fclose(f);
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    assert_int_equal(count(dir, "p00", ".sst"), 4);
    assert_int_equal(count(dir, "p00", ".tmp"), 0);
    assert_int_equal(rows(db), 102 + 10);
    assert_int_equal(store_db_compact(db), ERR_OK);
    assert_int_equal(count(dir, "p00", ".sst"), 2); /* one per window */
    assert_int_equal(rows(db), 112);
    store_db_unref(db);
    store_close(s);
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    assert_int_equal(rows(db), 112);
    assert_int_equal(count(dir, "p00", ".sst"), 2);
    store_db_unref(db);
    store_close(s);
    buf_destroy(&p);
    tu_rmtree(dir);
    free(dir);
}

static void test_damage(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("mf");
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    put_window(db, 0, 10);
    put_window(db, 2, 10);
    store_db_unref(db);
    store_close(s);
    struct buf mf = BUF_INIT, meta = BUF_INIT;
    buf_printf(&mf, "%s/m/p00/MANIFEST", dir);
    buf_printf(&meta, "%s/m/META", dir);
    int64_t size = tu_file_size(mf.data);
    for (int64_t off = 0; off < size; off += 5) {
        assert_int_equal(tu_flip_byte(mf.data, off, 0x02), 0);
        assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
        assert_int_equal(tu_flip_byte(mf.data, off, 0x02), 0);
    }
    assert_int_equal(tu_flip_byte(meta.data, 9, 0x02), 0);
    assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
    assert_int_equal(tu_flip_byte(meta.data, 9, 0x02), 0);
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    assert_int_equal(rows(db), 20);
    store_db_unref(db);
    store_close(s);
    assert_int_equal(tu_truncate(mf.data, size - 1), 0);
    assert_int_equal(open_store(dir, &s, &db), ERR_CORRUPT);
    buf_destroy(&mf);
    buf_destroy(&meta);
    tu_rmtree(dir);
    free(dir);
}

/* The flags of the manifest entry of window w (-1: no entry). */
static long entry_flags(const char *dir, int64_t w)
{
    struct buf mf = BUF_INIT;
    buf_printf(&mf, "%s/m/p00/MANIFEST", dir);
    FILE *f = fopen(mf.data, "rb");
    buf_destroy(&mf);
    assert_non_null(f);
    char d[4096];
    size_t len = fread(d, 1, sizeof d, f);
    fclose(f);
    assert_true(len >= 40);
    assert_int_equal(coding_get_u32le(d + 4), 2);
    uint32_t n = coding_get_u32le(d + 32);
    for (uint32_t i = 0; i < n; i++) {
        const char *e = d + 36 + (size_t)i * 64;
        if ((int64_t)coding_get_u64le(e + 8) == w)
            return (long)coding_get_u64le(e + 56);
    }
    return -1;
}

/* Flushed files are compressed for speed and flagged so in the manifest; a
 * window that turns cold with one such file is rewritten (LZ4HC, flag
 * cleared) in the background; a version 1 manifest (no flags) still opens. */
static void test_cold_recompress(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("mf");
    struct store *s;
    struct store_db *db;
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    int64_t w0 = T0 / HOUR;
    put_window(db, 0, 200);
    assert_int_equal(entry_flags(dir, w0), 1);
    put_window(db, 1, 10);
    assert_int_equal(entry_flags(dir, w0), 1); /* next to the newest: still hot */
    put_window(db, 2, 10);
    long flags = -1;
    for (int i = 0; i < 500 && (flags = entry_flags(dir, w0)) != 0; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(flags, 0);
    assert_int_equal(entry_flags(dir, w0 + 2), 1);
    assert_int_equal(rows(db), 220);
    store_db_unref(db);
    store_close(s);
    /* the same manifest as version 1: 56-byte entries without flags */
    struct buf mf = BUF_INIT, v1 = BUF_INIT;
    buf_printf(&mf, "%s/m/p00/MANIFEST", dir);
    FILE *f = fopen(mf.data, "rb");
    char d[4096];
    size_t len = fread(d, 1, sizeof d, f);
    fclose(f);
    uint32_t n = coding_get_u32le(d + 32);
    assert_int_equal(len, 36 + (size_t)n * 64 + 4);
    coding_put_u32le(d + 4, 1);
    buf_append(&v1, d, 36);
    for (uint32_t i = 0; i < n; i++)
        buf_append(&v1, d + 36 + (size_t)i * 64, 56);
    char c[4];
    coding_put_u32le(c, crc32c_mask(crc32c(v1.data, v1.len)));
    buf_append(&v1, c, 4);
    f = fopen(mf.data, "wb");
    assert_int_equal(fwrite(v1.data, 1, v1.len, f), v1.len);
    fclose(f);
    assert_int_equal(open_store(dir, &s, &db), ERR_OK);
    assert_int_equal(rows(db), 220);
    store_db_unref(db);
    store_close(s);
    buf_destroy(&mf);
    buf_destroy(&v1);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    log_set_level(LOG_ERROR + 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_files),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_cold_recompress),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
