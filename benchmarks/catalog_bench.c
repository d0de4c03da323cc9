/* Catalog benchmark: loads N events (1,000 hosts x 20 events over 10
 * hours, tags region, dc and status, fields value, code and msg, as
 * query_bench's rows plus two tags) into a store in a temp dir, flushes
 * and compacts, then times store_catalog for each discovery shape over the
 * whole span, the last hour, the last 6 hours and a 10-minute window; it
 * reports the catalogs' bytes on disk and in memory, what building them
 * costs next to writing the same tables, and how long a scan of full
 * memtables takes. Prints tables; never asserts.
 * Usage: catalog_bench [--events N] [--queries Q] [--dir D] [--memtable-mb M]
 *                      [--only queries|disk|build|memtable]
 * A --dir that already holds the loaded database is reused (no reload). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/coding.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/catalog.h"
#include "store/ikey.h"
#include "store/store.h"
#include "store/table/sst.h"

#define HOSTS 1000
#define EVENTS 20
#define HOUR_NS (3600LL * 1000000000LL)
#define SPAN_NS (10 * HOUR_NS)
#define BASE_TS 1700002800000000000LL /* a window start */

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const statuses[] = {"200", "301", "404", "500", "503"};

static void make_row(long long i, char *host, char *ev, struct buf *v)
{
    static const char msg[] = "GET /api/v1/items?page=17&sort=desc HTTP/1.1 200 "
                              "agent=curl/8.5.0 upstream=10.0.3.17:8080 rt=0.0123";
    unsigned h = (unsigned)(rnd() % HOSTS);
    char dc[8];
    snprintf(host, 32, "host-%04u", h);
    snprintf(ev, 32, "ev-%02d", (int)(rnd() % EVENTS));
    snprintf(dc, sizeof dc, "dc%u", h % 10);
    struct rec_tag tags[3] = {{slice_cstr("region"), slice_cstr(i % 2 ? "eu" : "us")},
                              {slice_cstr("dc"), slice_cstr(dc)},
                              {slice_cstr("status"), slice_cstr(statuses[rnd() % 5])}};
    struct rec_field f[3];
    memset(f, 0, sizeof f);
    f[0] = (struct rec_field){.key = slice_cstr("value"), .type = REC_FLOAT};
    f[0].v.f = (double)(rnd() % 10000) / 100.0;
    f[1] = (struct rec_field){.key = slice_cstr("code"), .type = REC_INT};
    f[1].v.i = 200 + (int64_t)(rnd() % 4) * 100;
    f[2] = (struct rec_field){.key = slice_cstr("msg"), .type = REC_STRING};
    f[2].v.s = slice_make(msg, sizeof msg - 1);
    buf_reset(v);
    rec_encode(v, tags, 3, f, 3);
}

static int load(struct store_db *db, long long events)
{
    struct batch *bt = batch_new();
    struct buf v = BUF_INIT;
    char host[32], ev[32];
    int64_t step = SPAN_NS / events, t0 = clock_mono_ns();
    int rc = ERR_OK;
    for (long long i = 0; i < events && !rc; i++) {
        make_row(i, host, ev, &v);
        batch_put(bt, BASE_TS + i * step, slice_cstr(host), slice_cstr(ev),
                  slice_make(v.data, v.len));
        if (batch_count(bt) == 10000 || i == events - 1) {
            while ((rc = store_write(db, bt)) == ERR_BUSY)
                usleep(1000);
            batch_clear(bt);
        }
        if (!rc && i % 1000000 == 999999)
            rc = store_db_compact(db);
    }
    double load_s = (double)(clock_mono_ns() - t0) / 1e9;
    if (!rc)
        rc = store_db_flush(db);
    if (!rc)
        rc = store_db_compact(db);
    printf("loaded %lld events in %.1f s, flushed and compacted in %.1f s\n", events, load_s,
           (double)(clock_mono_ns() - t0) / 1e9 - load_s);
    batch_free(bt);
    buf_destroy(&v);
    return rc;
}

static int count_fn(void *arg, struct slice name, int type)
{
    (void)name;
    (void)type;
    ++*(size_t *)arg;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

struct shape {
    const char *label;
    enum store_cat_kind kind;
    bool host, event;
    const char *key;
};

static const struct shape shapes[] = {
    {"SHOW HOSTS", STORE_CAT_HOSTS, false, false, NULL},
    {"SHOW HOSTS event", STORE_CAT_HOSTS, false, true, NULL},
    {"SHOW EVENTS", STORE_CAT_EVENTS, false, false, NULL},
    {"SHOW EVENTS host", STORE_CAT_EVENTS, true, false, NULL},
    {"SHOW TAG KEYS", STORE_CAT_TAG_KEYS, false, false, NULL},
    {"SHOW TAG KEYS host event", STORE_CAT_TAG_KEYS, true, true, NULL},
    {"SHOW TAG VALUES status", STORE_CAT_TAG_VALUES, false, false, "status"},
    {"SHOW TAG VALUES dc host", STORE_CAT_TAG_VALUES, true, false, "dc"},
    {"SHOW FIELDS", STORE_CAT_FIELDS, false, false, NULL},
    {"SHOW FIELDS host event", STORE_CAT_FIELDS, true, true, NULL},
};

/* p50 and p99 of q runs of a shape over [lo, hi] (random host and event). */
static void time_shape(struct store_db *db, const struct shape *sh, const char *range, int64_t lo,
                       int64_t hi, int q)
{
    int64_t *lat = calloc((size_t)q, sizeof *lat), *cpu = calloc((size_t)q, sizeof *cpu);
    size_t names = 0;
    int rc = ERR_OK;
    for (int i = 0; i < q && !rc; i++) {
        char host[32], ev[32];
        snprintf(host, sizeof host, "host-%04u", (unsigned)(rnd() % HOSTS));
        snprintf(ev, sizeof ev, "ev-%02u", (unsigned)(rnd() % EVENTS));
        struct slice hs = slice_cstr(host), es = slice_cstr(ev);
        struct store_cat_query cq = {.kind = sh->kind,
                                     .lo = lo,
                                     .hi = hi,
                                     .host = sh->host ? &hs : NULL,
                                     .event = sh->event ? &es : NULL,
                                     .tag_key = slice_cstr(sh->key ? sh->key : "")};
        int64_t t0 = clock_mono_ns(), c0 = clock_thread_cpu_ns();
        struct store_snap *snap = store_snapshot(db);
        names = 0;
        rc = store_catalog(snap, &cq, count_fn, &names);
        store_snap_release(snap);
        lat[i] = clock_mono_ns() - t0;
        cpu[i] = clock_thread_cpu_ns() - c0;
    }
    if (rc) {
        printf("%-26s %-9s error %s\n", sh->label, range, err_name(rc));
    } else {
        qsort(lat, (size_t)q, sizeof *lat, cmp_i64);
        qsort(cpu, (size_t)q, sizeof *cpu, cmp_i64);
        printf("%-26s %-9s %5d %8.3f %8.3f %8.3f %7zu\n", sh->label, range, q,
               (double)lat[q / 2] / 1e6, (double)lat[q * 99 / 100] / 1e6, (double)cpu[q / 2] / 1e6,
               names);
    }
    fflush(stdout);
    free(lat);
    free(cpu);
}

static void time_queries(struct store_db *db, int q)
{
    static const struct {
        const char *name;
        int64_t lo, hi;
    } ranges[] = {
        {"all", INT64_MIN, INT64_MAX},
        {"last 1h", BASE_TS + SPAN_NS - HOUR_NS, BASE_TS + SPAN_NS},
        {"last 6h", BASE_TS + SPAN_NS - 6 * HOUR_NS, BASE_TS + SPAN_NS},
        {"10 min", BASE_TS + 4 * HOUR_NS + 1234567890123LL,
         BASE_TS + 4 * HOUR_NS + 1234567890123LL + 600000000000LL},
    };
    printf("\n%-26s %-9s %5s %8s %8s %8s %7s\n", "shape", "range", "n", "p50 ms", "p99 ms",
           "cpu p50", "names");
    for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            time_shape(db, &shapes[s], ranges[r].name, ranges[r].lo, ranges[r].hi, q);
}

/* The catalogs of the row partitions' tables: stored bytes (footer 68..71)
 * and loaded bytes, against the tables' bytes. */
static void disk_share(const char *dir)
{
    uint64_t cat = 0, rows_bytes = 0, all_bytes = 0, mem = 0, files = 0, none = 0;
    int64_t load_ns = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/bench", dir);
    DIR *d = opendir(path);
    struct dirent *pe;
    while (d && (pe = readdir(d))) {
        bool index = strcmp(pe->d_name, "hidx") == 0;
        if (pe->d_name[0] != 'p' && !index)
            continue;
        char pdir[4400];
        snprintf(pdir, sizeof pdir, "%s/%s", path, pe->d_name);
        DIR *pd = opendir(pdir);
        struct dirent *fe;
        while (pd && (fe = readdir(pd))) {
            size_t n = strlen(fe->d_name);
            if (n < 4 || strcmp(fe->d_name + n - 4, ".sst"))
                continue;
            char fpath[4700];
            snprintf(fpath, sizeof fpath, "%s/%s", pdir, fe->d_name);
            FILE *fp = fopen(fpath, "rb");
            char foot[80];
            if (!fp)
                continue;
            fseek(fp, 0, SEEK_END);
            long size = ftell(fp);
            fseek(fp, size - 80, SEEK_SET);
            if (fread(foot, 1, 80, fp) == 80) {
                all_bytes += (uint64_t)size;
                if (!index) {
                    rows_bytes += (uint64_t)size;
                    cat += coding_get_u32le(foot + 68);
                    files++;
                    none += coding_get_u32le(foot + 68) == 0;
                }
            }
            fclose(fp);
            struct sst_table *t;
            struct cat_file *c = NULL;
            if (!index && sst_open(env_posix(), fpath, NULL, NULL, &t) == ERR_OK) {
                int64_t t0 = clock_mono_ns();
                if (cat_file_load(t, sst_get_props(t), fpath, NULL, &c) == ERR_OK)
                    mem += cat_file_bytes(c);
                load_ns += clock_mono_ns() - t0;
                cat_file_free(c);
                sst_unref(t);
            }
        }
        if (pd)
            closedir(pd);
    }
    if (d)
        closedir(d);
    printf("\ncatalogs: %llu row tables (%llu without), %.2f MiB stored = %.2f%% of the row "
           "tables' %.1f MiB, %.2f%% of all SSTables' %.1f MiB; %.1f MiB in memory once loaded "
           "(loading them all: %.0f ms)\n",
           (unsigned long long)files, (unsigned long long)none, (double)cat / 1048576.0,
           rows_bytes ? 100.0 * (double)cat / (double)rows_bytes : 0.0,
           (double)rows_bytes / 1048576.0,
           all_bytes ? 100.0 * (double)cat / (double)all_bytes : 0.0, (double)all_bytes / 1048576.0,
           (double)mem / 1048576.0, (double)load_ns / 1e6);
}

static void noop_entry(struct sst_observer *o, struct slice ik, struct slice v, int64_t ts)
{
    (void)o;
    (void)ik;
    (void)v;
    (void)ts;
}

/* CPU of building one table's catalog next to writing the table: the
 * entries of the biggest row table are written again, with and without an
 * observer, fast (a flush) and LZ4HC (a cold window's compaction). */
static void builder_cost(const char *dir)
{
    char path[4096], best[4400] = "";
    long best_size = 0;
    snprintf(path, sizeof path, "%s/bench/p00", dir);
    DIR *d = opendir(path);
    struct dirent *fe;
    while (d && (fe = readdir(d))) {
        size_t n = strlen(fe->d_name);
        if (n < 4 || strcmp(fe->d_name + n - 4, ".sst"))
            continue;
        char fpath[4400];
        snprintf(fpath, sizeof fpath, "%s/%s", path, fe->d_name);
        FILE *fp = fopen(fpath, "rb");
        if (!fp)
            continue;
        fseek(fp, 0, SEEK_END);
        if (ftell(fp) > best_size) {
            best_size = ftell(fp);
            snprintf(best, sizeof best, "%s", fpath);
        }
        fclose(fp);
    }
    if (d)
        closedir(d);
    struct sst_table *t;
    if (!best[0] || sst_open(env_posix(), best, NULL, NULL, &t))
        return;
    printf("\nbuilding a catalog, %s (%.1f MiB, %llu rows), CPU ms (best of 3):\n", best,
           (double)best_size / 1048576.0, (unsigned long long)sst_get_props(t)->entries);
    for (int fast = 1; fast >= 0; fast--) {
        double ms[3] = {1e18, 1e18, 1e18}; /* observer only, table only, table + catalog */
        size_t cat_bytes = 0;
        double fin_ms = 1e18;
        for (int rep = 0; rep < (getenv("CB_REPS") ? atoi(getenv("CB_REPS")) : 3); rep++)
            for (int mode = 0; mode < 3; mode++) {
                struct cat_builder *cb = cat_builder_new(true);
                struct sst_observer noop = {noop_entry, NULL}, *ob = cat_builder_observer(cb);
                struct sst_builder *b = NULL;
                struct sst_build_opts o = {.bloom_key = key_row_base_len,
                                           .codec = {fast ? CODEC_MODE_FAST : CODEC_MODE_HC, 0},
                                           .observer = mode == 2 ? ob : NULL};
                char out[4500];
                snprintf(out, sizeof out, "%s.bench.tmp", best);
                struct iter *it = sst_iter(t);
                int64_t c0 = clock_thread_cpu_ns();
                if (mode)
                    sst_builder_new(env_posix(), out, &o, &b);
                for (it_seek_first(it); it_valid(it); it_next(it)) {
                    struct slice k = it_key(it);
                    int64_t ts = key_row_ts(ikey_user(k), true);
                    if (mode)
                        sst_add(b, k, it_value(it), ts);
                    else
                        ob->entry(ob, k, it_value(it), ts);
                }
                struct buf raw = BUF_INIT;
                struct sst_props props;
                int64_t c1 = clock_thread_cpu_ns();
                if (mode)
                    sst_builder_finish(b, &props);
                else
                    ob->finish(ob, (uint64_t)best_size, &raw);
                if (!mode && (double)(clock_thread_cpu_ns() - c1) / 1e6 < fin_ms)
                    fin_ms = (double)(clock_thread_cpu_ns() - c1) / 1e6;
                double dt = (double)(clock_thread_cpu_ns() - c0) / 1e6;
                if (dt < ms[mode])
                    ms[mode] = dt;
                if (!mode)
                    cat_bytes = raw.len;
                buf_destroy(&raw);
                it_destroy(it);
                unlink(out);
                cat_builder_free(cb);
                (void)noop;
            }
        printf("  %-6s catalog alone %6.1f (its encoding %5.1f), table %6.1f, table with catalog "
               "%6.1f (+%.1f%%), raw catalog %zu bytes\n",
               fast ? "LZ4" : "LZ4HC", ms[0], fin_ms, ms[1], ms[2], 100.0 * (ms[2] - ms[1]) / ms[1],
               cat_bytes);
    }
    sst_unref(t);
}

/* store_catalog over memtables only: rows written until they hold mb MiB. */
static void memtable_scan(int mb, int q)
{
    char tmpl[] = "/tmp/lb-catalog-mem-XXXXXX";
    char *dir = mkdtemp(tmpl);
    struct store *s;
    struct store_db *db;
    struct store_opts so;
    store_opts_default(&so);
    so.dir = dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.memtable_bytes = (size_t)mb << 22; /* freezes at half: nothing is flushed */
    struct db_opts dbo = {16, true, 0};
    if (!dir || store_open(&so, &s) || store_db_create(s, "bench", &dbo) ||
        store_db_get(s, "bench", &db)) {
        fprintf(stderr, "cannot open a store in %s\n", dir ? dir : "/tmp");
        return;
    }
    struct batch *bt = batch_new();
    struct buf v = BUF_INIT, m = BUF_INIT;
    char host[32], ev[32];
    long long n = 0;
    size_t bytes = 0;
    while (bytes < ((size_t)mb << 20)) {
        for (int i = 0; i < 10000; i++, n++) {
            make_row(n, host, ev, &v);
            batch_put(bt, BASE_TS + n * 1000003LL, slice_cstr(host), slice_cstr(ev),
                      slice_make(v.data, v.len));
        }
        store_write(db, bt);
        batch_clear(bt);
        buf_reset(&m);
        store_metrics(s, &m);
        const char *p = strstr(buf_cstr(&m), "\nlogbucket_memtable_bytes ");
        bytes = p ? strtoull(p + 26, NULL, 10) : SIZE_MAX;
    }
    printf("\nmemtables only: %lld rows, %.1f MiB of memtables (rows and host index)\n", n,
           (double)bytes / 1048576.0);
    printf("%-26s %-9s %5s %8s %8s %8s %7s\n", "shape", "range", "n", "p50 ms", "p99 ms", "cpu p50",
           "names");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        time_shape(db, &shapes[i], "all", INT64_MIN, INT64_MAX, q);
    batch_free(bt);
    buf_destroy(&v);
    buf_destroy(&m);
    store_db_unref(db);
    store_close(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
    long long events = 2000000;
    int queries = 50, mem_mb = 64;
    const char *dir = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            events = atoll(argv[++i]);
        else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
            queries = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--memtable-mb") == 0 && i + 1 < argc)
            mem_mb = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: catalog_bench [--events N] [--queries Q] [--dir D] "
                            "[--memtable-mb M] [--only queries|disk|build|memtable]\n");
            return 2;
        }
    }
    if (events < 1 || queries < 1 || mem_mb < 1)
        return 2;
    log_set_level(LOG_WARN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char tmpl[] = "/tmp/lb-catalog-bench-XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("mkdtemp");
        return 1;
    }
    struct store_opts so;
    store_opts_default(&so);
    so.dir = dir;
    so.wal_sync = STORE_SYNC_NONE;
    struct store *s;
    struct store_db *db;
    struct db_opts dbo = {16, true, 0};
    int64_t t0 = clock_mono_ns();
    if (store_open(&so, &s)) {
        fprintf(stderr, "cannot open the store in %s\n", dir);
        return 1;
    }
    bool reuse = store_db_get(s, "bench", &db) == ERR_OK;
    if (!reuse && (store_db_create(s, "bench", &dbo) || store_db_get(s, "bench", &db))) {
        fprintf(stderr, "cannot create the database in %s\n", dir);
        return 1;
    }
    if (reuse)
        printf("catalog_bench: %s reused (opened in %.0f ms)\n", dir,
               (double)(clock_mono_ns() - t0) / 1e6);
    else
        printf("catalog_bench: %lld events, %d hosts x %d events over 10 h, 16 buckets, DESC, "
               "dir %s\n",
               events, HOSTS, EVENTS, dir);
    int rc = reuse ? ERR_OK : load(db, events);
    if (rc) {
        fprintf(stderr, "load failed: %s\n", err_name(rc));
        return 1;
    }
    if (!only || strcmp(only, "queries") == 0)
        time_queries(db, queries);
    store_db_unref(db);
    store_close(s);
    if (!only || strcmp(only, "disk") == 0)
        disk_share(dir);
    if (!only || strcmp(only, "build") == 0)
        builder_cost(dir);
    if (!only || strcmp(only, "memtable") == 0)
        memtable_scan(mem_mb, queries);
    if (strncmp(dir, "/tmp/lb-catalog-bench-", 22) == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    return 0;
}
