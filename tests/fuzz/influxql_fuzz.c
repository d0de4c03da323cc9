/* libFuzzer target for InfluxQL: any bytes as a script. The parser must
 * accept or refuse with InfluxDB's "error parsing query" (or "missing
 * required parameter"), never crash, read out of bounds or leak; the input
 * is copied to an exact-size heap buffer without a NUL, so ASan sees any
 * read past its end. A script of read statements (SELECT, SHOW) that
 * parses is then run against a small store (rows of two measurements with
 * tags, every field type and a row without fields), in every reply form:
 * whole, chunked, epoch and pretty. Statements that write are not run, so
 * the store stays as it was. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/record.h"
#include "query/influxql.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define S 1000000000LL
#define NOW (1700000000LL * S)

static struct store *store;
static char dir[] = "/tmp/lb-iql-fuzz-XXXXXX";

/* At exit (libFuzzer exits when its time is up): the store and its folder go. */
static void store_done(void)
{
    char cmd[64];
    store_close(store);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static int64_t clock_fixed(void *arg)
{
    (void)arg;
    return NOW;
}

static void put(struct batch *b, int64_t ts, const char *host, const char *ev,
                const struct rec_tag *t, size_t nt, const struct rec_field *f, size_t nf)
{
    struct buf v = BUF_INIT;
    rec_encode(&v, t, nt, f, nf);
    batch_put(b, ts, slice_cstr(host), slice_cstr(ev), slice_make(v.data ? v.data : "", v.len));
    buf_destroy(&v);
}

static void store_init(void)
{
    if (!mkdtemp(dir))
        abort();
    struct store_opts so;
    store_opts_default(&so);
    so.dir = dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.clock = clock_fixed;
    struct db_opts d = {4, true, 0};
    struct store_db *db;
    if (store_open(&so, &store) || store_db_create(store, "d", &d) || store_db_get(store, "d", &db))
        abort();
    struct rec_tag t[] = {{slice_cstr("region"), slice_cstr("eu")}};
    struct rec_field f[] = {{slice_cstr("v"), REC_FLOAT, {.f = 2.5}},
                            {slice_cstr("n"), REC_INT, {.i = -7}},
                            {slice_cstr("u"), REC_UINT, {.u = 18446744073709551615ULL}},
                            {slice_cstr("ok"), REC_BOOL, {.b = true}},
                            {slice_cstr("msg"), REC_STRING, {.s = {"timeout", 7}}}};
    struct batch *b = batch_new();
    for (int i = 0; i < 8; i++) {
        f[0].v.f = i * 1.5 - 3;
        f[1].v.i = i * 3 - 7;
        put(b, NOW - i * 40 * S, i % 2 ? "a" : "b", i % 3 ? "cpu" : "log", t, 1, f,
            (size_t)(1 + i % 5));
    }
    put(b, NOW - 5 * S, "", "cpu", NULL, 0, NULL, 0);
    if (store_write(db, b))
        abort();
    batch_free(b);
    store_db_unref(db);
    atexit(store_done);
}

static bool read_only(const struct iql_script *s)
{
    for (size_t i = 0; i < iql_count(s); i++) {
        const char *db;
        if (iql_right_of(s, i, &db) != IQL_READ)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!store)
        store_init();
    char *text = malloc(size ? size : 1);
    if (size)
        memcpy(text, data, size);
    struct buf err = BUF_INIT, out = BUF_INIT;
    struct iql_script *s = NULL;
    if (iql_parse(text, size, NOW, &s, &err) == ERR_OK) {
        if (read_only(s)) {
            struct query_opts qo;
            query_opts_default(&qo);
            qo.now_ns = NOW;
            qo.max_groups = 64;
            qo.allow_full_scan = size % 2;
            struct iql_opts o = {&qo, "d", "host", 0, 0, false};
            iql_exec(store, s, &o, &out);
            o.epoch = 1000000;
            o.chunk_size = 2;
            o.pretty = true;
            iql_exec(store, s, &o, &out);
        }
        iql_script_free(s);
    } else if (!strstr(buf_cstr(&err), "error parsing query") &&
               !strstr(buf_cstr(&err), "missing required parameter")) {
        abort(); /* a refusal says so as InfluxDB does */
    }
    buf_destroy(&out);
    buf_destroy(&err);
    free(text);
    return 0;
}
