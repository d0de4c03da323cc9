/* Crash safety: a child writes batches with wal_sync=always and reports
 * each acknowledged batch over a pipe; the parent SIGKILLs it at a random
 * moment, reopens the store, and checks that every acknowledged batch is
 * whole and no batch is half present. 20 rounds on one directory.
 *
 * The rows are written as ingest writes them (ingest/ingest.h, struct
 * ingest_row), several per (ts, host, event): at each ts of a batch, a point
 * without tags (empty id), two points of one measurement that differ by a
 * tag (cpu=cpu0, cpu=cpu1; id = the tag record, merge), and two log entries
 * that differ by their message (id = the whole record, no value), one of
 * them long (a 2-byte id length) and written twice in the batch. Each batch
 * also writes into its predecessor: a merge adding a field to one of its
 * points, and an exact duplicate of one of its log entries. After a restart
 * every (ts, host, event) of a batch holds exactly its five rows or none,
 * every row's value is what the writes made of it (the predecessor's point
 * has the added field exactly when the batch that added it is there), and
 * the database holds no other row. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/iter.h"
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define ROUNDS 20
#define BUCKETS 4
#define TS_PER_BATCH 5
#define ROWS_PER_TS 5
#define ROWS_PER_BATCH (TS_PER_BATCH * ROWS_PER_TS)
#define T0 (1700000000LL * 1000000000LL)

/* The rows of one (ts, host, event) of a batch. */
enum { R_BARE, R_CPU0, R_CPU1, R_LOG_A, R_LOG_B };

static void open_store(const char *dir, struct store **s, struct store_db **db)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_ALWAYS;
    o.memtable_bytes = 1u << 20; /* small: flushes and WAL rolls happen */
    assert_int_equal(store_open(&o, s), ERR_OK);
    if (store_db_get(*s, "c", db) == ERR_NOTFOUND) {
        struct db_opts d = {.buckets = BUCKETS, .ts_desc = true};
        assert_int_equal(store_db_create(*s, "c", &d), ERR_OK);
        assert_int_equal(store_db_get(*s, "c", db), ERR_OK);
    }
}

static int64_t row_ts(uint32_t batch, int j)
{
    return T0 + (int64_t)batch * 1000 + j;
}

static struct slice row_host(int j)
{
    return slice_cstr(j % 2 ? "h1" : "h2");
}

static bool is_point(int k)
{
    return k <= R_CPU1;
}

static struct rec_field int_field(const char *name, int64_t v)
{
    struct rec_field f;
    memset(&f, 0, sizeof(f));
    f.key = slice_cstr(name);
    f.type = REC_INT;
    f.v.i = v;
    return f;
}

/* The id of row k of ts j of batch n, and its value as written by batch n
 * (next = 0), or as it reads once batch next merged {next=next} into it. */
static void row_enc(uint32_t n, int j, int k, uint32_t next, struct buf *id, struct buf *val)
{
    buf_reset(id);
    buf_reset(val);
    if (is_point(k)) {
        struct rec_tag tag = {slice_cstr("cpu"), slice_cstr(k == R_CPU0 ? "cpu0" : "cpu1")};
        if (k != R_BARE)
            rec_encode(id, &tag, 1, NULL, 0);
        struct rec_field f[3];
        size_t nf = 0;
        if (next)
            f[nf++] = int_field("next", next);
        f[nf++] = int_field("batch", n);
        memset(&f[nf], 0, sizeof(f[nf]));
        f[nf].key = slice_cstr("v");
        f[nf].type = REC_FLOAT;
        f[nf++].v.f = j + 0.5;
        rec_encode(val, NULL, 0, f, k == R_BARE ? nf - 1 : nf);
        return;
    }
    char msg[256];
    int len = snprintf(msg, sizeof(msg), "batch %u line %d %s", n, j,
                       k == R_LOG_A ? "a"
                                    : "b, long enough for an id of more than 128 bytes: "
                                      "padding padding padding padding padding padding padding");
    struct rec_field f[2];
    memset(f, 0, sizeof(f));
    f[0].key = slice_cstr("msg");
    f[0].type = REC_STRING;
    f[0].v.s = slice_make(msg, (size_t)len);
    f[1] = int_field("line", j);
    rec_encode(id, NULL, 0, f, 2);
}

/* Whether row k of (n, j) carries the {next} merge: cpu0 of the first ts. */
static bool takes_next(int j, int k)
{
    return j == 0 && k == R_CPU0;
}

static void put_row(struct batch *b, uint32_t n, int j, int k, const struct buf *id,
                    const struct buf *val)
{
    batch_put_id(b, row_ts(n, j), row_host(j), slice_cstr("ev"), slice_make(id->data, id->len),
                 slice_make(val->data, val->len), is_point(k));
}

static void child(const char *dir, uint32_t first, int fd)
{
    struct store *s;
    struct store_db *db;
    open_store(dir, &s, &db);
    struct batch *b = batch_new();
    struct buf id = BUF_INIT, val = BUF_INIT;
    for (uint32_t n = first;; n++) {
        batch_clear(b);
        for (int j = 0; j < TS_PER_BATCH; j++)
            for (int k = 0; k < ROWS_PER_TS; k++) {
                row_enc(n, j, k, 0, &id, &val);
                put_row(b, n, j, k, &id, &val);
                if (k == R_LOG_B) /* an exact duplicate: the same row */
                    put_row(b, n, j, k, &id, &val);
            }
        if (n > 0) {
            /* into the previous batch: a field merged into a point, and a
             * log entry written again */
            row_enc(n - 1, 0, R_CPU0, 0, &id, &val);
            struct rec_field f = int_field("next", n);
            buf_reset(&val);
            rec_encode(&val, NULL, 0, &f, 1);
            put_row(b, n - 1, 0, R_CPU0, &id, &val);
            row_enc(n - 1, 0, R_LOG_A, 0, &id, &val);
            put_row(b, n - 1, 0, R_LOG_A, &id, &val);
        }
        int rc = store_write(db, b);
        if (rc == ERR_BUSY) {
            usleep(1000);
            n--;
            continue;
        }
        if (rc != ERR_OK)
            _exit(3);
        if (write(fd, &n, sizeof n) != sizeof n)
            _exit(4);
    }
}

/* The ids of the rows of (n, j), by R_*. */
static void row_ids(uint32_t n, int j, struct buf ids[ROWS_PER_TS], struct buf *tmp)
{
    for (int k = 0; k < ROWS_PER_TS; k++)
        row_enc(n, j, k, 0, &ids[k], tmp);
}

/* Which row has this id: R_* or -1. */
static int row_kind(const struct buf ids[ROWS_PER_TS], struct slice rid)
{
    for (int k = 0; k < ROWS_PER_TS; k++)
        if (slice_eq(rid, slice_make(ids[k].data, ids[k].len)))
            return k;
    return -1;
}

static void ids_destroy(struct buf ids[ROWS_PER_TS])
{
    for (int k = 0; k < ROWS_PER_TS; k++)
        buf_destroy(&ids[k]);
}

/* The rows of batch n found (0..ROWS_PER_BATCH); fails on a row that is
 * not one of the batch's or is there twice. */
static int count_batch(struct store_snap *snap, uint32_t n)
{
    struct buf ids[ROWS_PER_TS] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    struct buf tmp = BUF_INIT;
    int found = 0;
    for (int j = 0; j < TS_PER_BATCH; j++) {
        struct store_rows *rows;
        row_ids(n, j, ids, &tmp);
        assert_int_equal(store_rows_open(snap, row_ts(n, j), row_host(j), slice_cstr("ev"), &rows),
                         ERR_OK);
        struct slice k, v;
        bool seen[ROWS_PER_TS] = {false};
        int rc;
        while ((rc = store_rows_next(rows, &k, &v)) == 1) {
            struct key_row r;
            assert_int_equal(key_decode_row(k, true, &r), ERR_OK);
            assert_true(r.ts == row_ts(n, j));
            int kind = row_kind(ids, r.id);
            if (kind < 0)
                fail_msg("batch %u ts %d: a row with an id of no row written (%zu bytes)", n, j,
                         r.id.len);
            if (seen[kind])
                fail_msg("batch %u ts %d: row %d twice", n, j, kind);
            seen[kind] = true;
            found++;
        }
        assert_int_equal(rc, 0);
        store_rows_close(rows);
    }
    ids_destroy(ids);
    buf_destroy(&tmp);
    return found;
}

/* Checks the value of every row of batch n (present); next: the batch
 * after it is there too. */
static void check_values(struct store_snap *snap, uint32_t n, bool next)
{
    struct buf ids[ROWS_PER_TS] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    struct buf id = BUF_INIT, val = BUF_INIT, got = BUF_INIT;
    for (int j = 0; j < TS_PER_BATCH; j++) {
        struct store_rows *rows;
        row_ids(n, j, ids, &val);
        assert_int_equal(store_rows_open(snap, row_ts(n, j), row_host(j), slice_cstr("ev"), &rows),
                         ERR_OK);
        struct slice k, v;
        int rc;
        while ((rc = store_rows_next(rows, &k, &v)) == 1) {
            struct key_row r;
            assert_int_equal(key_decode_row(k, true, &r), ERR_OK);
            int kind = row_kind(ids, r.id);
            assert_true(kind >= 0);
            row_enc(n, j, kind, next && takes_next(j, kind) ? n + 1 : 0, &id, &val);
            if (!slice_eq(v, slice_make(val.data, val.len)))
                fail_msg("batch %u ts %d row %d: value of %zu bytes, want %zu%s", n, j, kind, v.len,
                         val.len,
                         takes_next(j, kind) ? (next ? " (with next)" : " (without next)") : "");
        }
        assert_int_equal(rc, 0);
        store_rows_close(rows);
        /* the point read of the row without an id */
        buf_reset(&got);
        assert_int_equal(store_snap_get(snap, row_ts(n, j), row_host(j), slice_cstr("ev"), &got),
                         ERR_OK);
        row_enc(n, j, R_BARE, 0, &id, &val);
        assert_true(got.len == val.len && memcmp(got.data, val.data, val.len) == 0);
    }
    ids_destroy(ids);
    buf_destroy(&id);
    buf_destroy(&val);
    buf_destroy(&got);
}

/* Rows of the whole database, every bucket. */
static uint64_t count_all(struct store_snap *snap)
{
    uint64_t n = 0;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        struct iter *it = store_iter_bucket(snap, b);
        for (it_seek_first(it); it_valid(it); it_next(it))
            n++;
        assert_int_equal(it_status(it), ERR_OK);
        it_destroy(it);
    }
    return n;
}

/* Checks batches [0, upto): acked ones whole, others all or nothing, each
 * row there once with the value its writes made, nothing else stored.
 * Returns the first batch number not present. */
static uint32_t verify(const char *dir, uint32_t acked, uint32_t upto)
{
    struct store *s;
    struct store_db *db;
    open_store(dir, &s, &db);
    struct store_snap *snap = store_snapshot(db);
    bool *present = calloc(upto + 1, sizeof(bool));
    assert_non_null(present);
    uint32_t first_missing = upto, npresent = 0;
    for (uint32_t n = 0; n < upto; n++) {
        int found = count_batch(snap, n);
        if (n < acked && found != ROWS_PER_BATCH)
            fail_msg("acknowledged batch %u has %d of %d rows", n, found, ROWS_PER_BATCH);
        if (found != 0 && found != ROWS_PER_BATCH)
            fail_msg("batch %u is half present (%d rows)", n, found);
        present[n] = found != 0;
        npresent += present[n];
        if (found == 0 && first_missing == upto)
            first_missing = n;
    }
    for (uint32_t n = 0; n < upto; n++) {
        if (present[n] && n > first_missing)
            fail_msg("batch %u is there after batch %u is missing", n, first_missing);
        if (present[n])
            check_values(snap, n, present[n + 1]);
    }
    uint64_t all = count_all(snap);
    if (all != (uint64_t)npresent * ROWS_PER_BATCH)
        fail_msg("%llu rows stored, %u batches of %d written", (unsigned long long)all, npresent,
                 ROWS_PER_BATCH);
    free(present);
    store_snap_release(snap);
    store_db_unref(db);
    store_close(s);
    return first_missing;
}

static void test_kill9(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("crash");
    uint32_t next = 0;
    srand((unsigned)time(NULL));
    for (int round = 0; round < ROUNDS; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child(dir, next, fds[1]);
            _exit(0);
        }
        close(fds[1]);
        usleep(20000 + (useconds_t)(rand() % 200000));
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        uint32_t n, acked = next;
        while (read(fds[0], &n, sizeof n) == sizeof n)
            acked = n + 1;
        close(fds[0]);
        /* a batch after the last ack may or may not have made it */
        uint32_t first_missing = verify(dir, acked, acked + 2);
        assert_true(first_missing >= acked);
        next = first_missing;
    }
    print_message("# %u batches of %d rows\n", next, ROWS_PER_BATCH);
    assert_true(next > 0);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
