/* Crash safety: a child writes batches with wal_sync=always and reports
 * each acknowledged batch over a pipe; the parent SIGKILLs it at a random
 * moment, reopens the store, and checks that every acknowledged batch is
 * whole and no batch is half present. 20 rounds on one directory. */
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
#include "store/store.h"
#include "tests/support/store_testutil.h"

#define ROUNDS 20
#define ROWS_PER_BATCH 20
#define T0 (1700000000LL * 1000000000LL)

static void open_store(const char *dir, struct store **s, struct store_db **db)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_ALWAYS;
    o.memtable_bytes = 1u << 20; /* small: flushes and WAL rolls happen */
    assert_int_equal(store_open(&o, s), ERR_OK);
    if (store_db_get(*s, "c", db) == ERR_NOTFOUND) {
        struct db_opts d = {.buckets = 4, .ts_desc = true};
        assert_int_equal(store_db_create(*s, "c", &d), ERR_OK);
        assert_int_equal(store_db_get(*s, "c", db), ERR_OK);
    }
}

static int64_t row_ts(uint32_t batch, int i)
{
    return T0 + (int64_t)batch * 1000 + i;
}

static void child(const char *dir, uint32_t first, int fd)
{
    struct store *s;
    struct store_db *db;
    open_store(dir, &s, &db);
    struct batch *b = batch_new();
    char val[64];
    for (uint32_t n = first;; n++) {
        batch_clear(b);
        snprintf(val, sizeof val, "batch-%u-padding-padding-padding", n);
        for (int i = 0; i < ROWS_PER_BATCH; i++)
            batch_put(b, row_ts(n, i), slice_cstr(i % 2 ? "h1" : "h2"), slice_cstr("ev"),
                      slice_cstr(val));
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

/* Checks batches [0, upto): acked ones whole, others all or nothing.
 * Returns the first batch number not present. */
static uint32_t verify(const char *dir, uint32_t acked, uint32_t upto)
{
    struct store *s;
    struct store_db *db;
    open_store(dir, &s, &db);
    struct buf v = BUF_INIT;
    uint32_t first_missing = upto;
    for (uint32_t n = 0; n < upto; n++) {
        int found = 0;
        for (int i = 0; i < ROWS_PER_BATCH; i++) {
            buf_reset(&v);
            int rc = store_get(db, row_ts(n, i), slice_cstr(i % 2 ? "h1" : "h2"),
                               slice_cstr("ev"), &v);
            assert_true(rc == ERR_OK || rc == ERR_NOTFOUND);
            found += rc == ERR_OK;
        }
        if (n < acked && found != ROWS_PER_BATCH)
            fail_msg("acknowledged batch %u has %d of %d rows", n, found, ROWS_PER_BATCH);
        if (found != 0 && found != ROWS_PER_BATCH)
            fail_msg("batch %u is half present (%d rows)", n, found);
        if (found == 0 && first_missing == upto)
            first_missing = n;
    }
    buf_destroy(&v);
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
