/* Store benchmark: writes N events (1,000 hosts, 20 event names, ~150-byte
 * values shaped like encoded tags and fields) in batches of 5,000 with
 * wal_sync=none and =always, then measures bytes on disk after compaction
 * against the equivalent line protocol, point-get and newest-100 latency,
 * write amplification and peak RSS. Prints a table; never asserts.
 *   build/bench/store_bench [--events N] [--dir D] [--always-events N] [--gap-us U]
 * --gap-us: the time between events (default 1,000: 5M events span ~83
 * minutes, all in the newest windows, which stay LZ4HC; 43,200 spreads
 * 2M over 24 h, so that most windows are cold and take their final zstd
 * form by column, store/FORMAT.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/store.h"

#define HOSTS 1000
#define EVENTS 20
#define BATCH 5000
#define T0 (1700000000LL * 1000000000LL)

static const char *event_names[EVENTS] = {"cpu",          "mem",         "disk",      "net",
                                          "nginx.access", "nginx.error", "app.login", "app.logout",
                                          "db.query",     "db.slow",     "cache.hit", "cache.miss",
                                          "gc.pause",     "http.req",    "http.resp", "queue.len",
                                          "job.start",    "job.end",     "auth.fail", "disk.io"};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ~150 bytes: 4 tags, a float, an int and a short string, encoded as
 * model/record.h has them (the store's catalog builder reads them). Also
 * returns the length of the same event as a line-protocol line. */
static size_t make_value(uint64_t i, char *out, size_t *lp_len, const char *host, const char *event)
{
    static const char *regions[] = {"eu-west-1", "us-east-1", "ap-south-1"};
    static const char *msgs[] = {"GET /index.html HTTP/1.1",  "POST /api/v1/login HTTP/1.1",
                                 "GET /static/app.js HTTP/2", "DELETE /api/v1/item/42 HTTP/1.1",
                                 "GET /healthz HTTP/1.1",     "PUT /api/v1/user/7 HTTP/2"};
    static const char *agents[] = {"curl/8.4.0", "Mozilla/5.0 (X11; Linux x86_64)",
                                   "python-requests/2.31", "Go-http-client/1.1"};
    const char *region = regions[i % 3], *msg = msgs[rnd() % 6], *agent = agents[rnd() % 4];
    double value = (double)(rnd() % 10000) / 100.0;
    unsigned code = 200 + (unsigned)(rnd() % 5) * 100;
    char dc[16], rack[16];
    snprintf(dc, sizeof dc, "dc-%u", (unsigned)(i % 4));
    snprintf(rack, sizeof rack, "r%02u", (unsigned)(i % 40));
    struct rec_tag tags[4] = {{slice_cstr("agent"), slice_cstr(agent)},
                              {slice_cstr("dc"), slice_cstr(dc)},
                              {slice_cstr("rack"), slice_cstr(rack)},
                              {slice_cstr("region"), slice_cstr(region)}};
    struct rec_field fields[3] = {
        {.key = slice_cstr("code"), .type = REC_INT, .v.i = code},
        {.key = slice_cstr("msg"), .type = REC_STRING, .v.s = slice_cstr(msg)},
        {.key = slice_cstr("value"), .type = REC_FLOAT, .v.f = value},
    };
    struct buf rec = BUF_INIT;
    rec_encode(&rec, tags, 4, fields, 3);
    size_t n = rec.len < 256 ? rec.len : 256;
    memcpy(out, rec.data, n);
    buf_destroy(&rec);
    char lp[512];
    int l = snprintf(lp, sizeof lp,
                     "%s,host=%s,region=%s,dc=dc-%u,rack=r%02u,agent=%s value=%.2f,code=%ui,"
                     "msg=\"%s\" %" PRId64 "\n",
                     event, host, region, (unsigned)(i % 4), (unsigned)(i % 40), agent, value, code,
                     msg, (int64_t)(T0 + (int64_t)i * 1000000));
    for (const char *c = agent; *c; c++)
        if (*c == ' ' || *c == ',')
            l++; /* tag values escape spaces and commas */
    *lp_len = (size_t)l;
    return n;
}

/* A pool of pre-built values so the timed loop measures the store. */
#define POOL 8192
struct pool_ent {
    char v[256];
    size_t len, lp;
};
static struct pool_ent *pool;

static void build_pool(void)
{
    pool = calloc(POOL, sizeof *pool);
    char host[32];
    for (uint64_t i = 0; i < POOL; i++) {
        snprintf(host, sizeof host, "web-%04u", (unsigned)(i * 7919 % HOSTS));
        pool[i].len = make_value(i, pool[i].v, &pool[i].lp, host, "nginx.access");
    }
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct run {
    double cpu;
    double secs;
    uint64_t lp_bytes, value_bytes;
    long busy;
};

static int64_t gap_ns = 1000000; /* --gap-us */

static int64_t ev_ts(uint64_t i)
{
    return T0 + (int64_t)i * gap_ns;
}

static void host_name(uint64_t i, char *h)
{
    snprintf(h, 32, "web-%04u", (unsigned)(i * 7919 % HOSTS));
}

static int write_events(struct store_db *db, uint64_t n, struct run *r)
{
    struct batch *b = batch_new();
    char host[32];
    double t0 = now_s(), c0 = cpu_s();
    for (uint64_t i = 0; i < n; i++) {
        host_name(i, host);
        const char *ev = event_names[i % EVENTS];
        const struct pool_ent *pe = &pool[(i * 2654435761u) % POOL];
        /* the line-protocol size of this event: the pool entry's, with
         * this event's name in place of the pool's */
        r->lp_bytes += pe->lp - strlen("nginx.access") + strlen(ev);
        r->value_bytes += pe->len;
        batch_put(b, ev_ts(i), slice_cstr(host), slice_cstr(ev), slice_make(pe->v, pe->len));
        if (batch_count(b) == BATCH || i == n - 1) {
            int rc;
            while ((rc = store_write(db, b)) == ERR_BUSY) {
                r->busy++;
                usleep(500);
            }
            if (rc) {
                fprintf(stderr, "store_write: %s\n", err_name(rc));
                batch_free(b);
                return rc;
            }
            batch_clear(b);
        }
    }
    r->secs = now_s() - t0;
    r->cpu = cpu_s() - c0;
    batch_free(b);
    return ERR_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void latency(double *v, size_t n, double *p50, double *p99)
{
    qsort(v, n, sizeof *v, cmp_d);
    *p50 = v[n / 2] * 1e6;
    *p99 = v[n * 99 / 100] * 1e6;
}

static uint64_t metric(struct store *s, const char *name)
{
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    const char *p = strstr(buf_cstr(&m), name);
    uint64_t v = p ? strtoull(p + strlen(name), NULL, 10) : 0;
    buf_destroy(&m);
    return v;
}

static double metric_f(struct store *s, const char *name)
{
    struct buf m = BUF_INIT;
    store_metrics(s, &m);
    const char *p = strstr(buf_cstr(&m), name);
    double v = p ? strtod(p + strlen(name), NULL) : 0;
    buf_destroy(&m);
    return v;
}

static int open_db(const char *dir, enum store_wal_sync sync, struct store **s,
                   struct store_db **db)
{
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = sync;
    o.memtable_bytes =
        getenv("LB_BENCH_MEM") ? strtoull(getenv("LB_BENCH_MEM"), NULL, 10) << 20 : 64u << 20;
    o.block_cache_bytes = 64u << 20;
    o.background_threads =
        getenv("LB_BENCH_THREADS") ? (unsigned)atoi(getenv("LB_BENCH_THREADS")) : 2;
    int rc = store_open(&o, s);
    if (rc)
        return rc;
    struct db_opts d = {.buckets = 16, .ts_desc = true, .ttl_ns = 0};
    store_db_create(*s, "bench", &d);
    return store_db_get(*s, "bench", db);
}

int main(int argc, char **argv)
{
    uint64_t n = 5000000, n_always = 0;
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--events"))
            n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--always-events"))
            n_always = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--gap-us"))
            gap_ns = (int64_t)strtoull(argv[i + 1], NULL, 10) * 1000;
        else if (!strcmp(argv[i], "--dir"))
            base = argv[i + 1];
    }
    if (!n_always)
        n_always = n;
    log_set_level(LOG_WARN);
    build_pool();
    char dir[512], dir2[512];
    snprintf(dir, sizeof dir, "%s/lb-bench-%d", base, (int)getpid());
    snprintf(dir2, sizeof dir2, "%s/lb-bench-always-%d", base, (int)getpid());
    struct store *s;
    struct store_db *db;
    struct run none = {0}, always = {0};

    if (open_db(dir, STORE_SYNC_NONE, &s, &db))
        return 1;
    if (write_events(db, n, &none))
        return 1;
    uint64_t nflush = metric(s, "logbucket_flushes_total{db=\"bench\"} ");
    uint64_t ncompact = metric(s, "logbucket_compactions_total{db=\"bench\"} ");
    double flush_busy = metric_f(s, "logbucket_flush_seconds_total{db=\"bench\"} ");
    double compact_busy = metric_f(s, "logbucket_compaction_seconds_total{db=\"bench\"} ");
    double tf = now_s();
    store_db_flush(db);
    double flush_s = now_s() - tf;
    tf = now_s();
    store_db_compact(db);
    double compact_s = now_s() - tf;
    uint64_t disk = metric(s, "logbucket_disk_bytes{db=\"bench\"} ");
    uint64_t flushed = metric(s, "logbucket_flush_bytes_total{db=\"bench\"} ");
    uint64_t compacted = metric(s, "logbucket_compaction_bytes_total{db=\"bench\"} ");
    uint64_t walb = metric(s, "logbucket_wal_bytes_total{db=\"bench\"} ");

    /* point gets of random existing events */
    size_t q = 20000;
    double *lat = calloc(q, sizeof *lat);
    struct buf v = BUF_INIT;
    char host[32];
    size_t found = 0;
    for (size_t i = 0; i < q; i++) {
        uint64_t e = rnd() % n;
        host_name(e, host);
        buf_reset(&v);
        double t0 = now_s();
        found += store_get(db, ev_ts(e), slice_cstr(host), slice_cstr(event_names[e % EVENTS]),
                           &v) == ERR_OK;
        lat[i] = now_s() - t0;
    }
    double g50, g99;
    latency(lat, q, &g50, &g99);
    /* newest 100 rows of a partition */
    size_t qs = 2000;
    for (size_t i = 0; i < qs; i++) {
        double t0 = now_s();
        struct store_snap *snap = store_snapshot(db);
        struct iter *it = store_iter_bucket(snap, (uint32_t)(rnd() % 16));
        int k = 0;
        for (it_seek_first(it); it_valid(it) && k < 100; it_next(it))
            k++;
        it_destroy(it);
        store_snap_release(snap);
        lat[i] = now_s() - t0;
    }
    double s50, s99;
    latency(lat, qs, &s50, &s99);
    free(lat);
    buf_destroy(&v);
    store_db_unref(db);
    store_close(s);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");

    if (open_db(dir2, STORE_SYNC_ALWAYS, &s, &db))
        return 1;
    write_events(db, n_always, &always);
    uint64_t syncs = metric(s, "logbucket_wal_syncs_total{db=\"bench\"} ");
    store_db_unref(db);
    store_close(s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir2);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("logbucket store benchmark: %" PRIu64 " events, %d hosts, %d events names, "
           "batches of %d, 16 buckets DESC\n",
           n, HOSTS, EVENTS, BATCH);
    printf("%-44s %14s\n", "metric", "value");
    printf("%-44s %14.0f\n", "write events/s (wal_sync=none)", (double)n / none.secs);
    printf("%-44s %14.0f\n", "  per CPU-second of the writer thread", (double)n / none.cpu);
    printf("%-44s %14.0f\n", "write events/s (wal_sync=always)", (double)n_always / always.secs);
    printf("%-44s %14" PRIu64 "\n", "  fsyncs in the always run", syncs);
    printf("%-44s %14ld\n", "  ERR_BUSY retries (none run)", none.busy);
    printf("%-44s %14.1f\n", "avg value bytes per event", (double)none.value_bytes / n);
    printf("%-44s %14.1f\n", "line-protocol bytes per event", (double)none.lp_bytes / n);
    printf("%-44s %14.1f\n", "disk bytes per event after compaction", (double)disk / n);
    printf("%-44s %14.3f\n", "disk / line-protocol bytes", (double)disk / none.lp_bytes);
    printf("%-44s %14" PRIu64 "\n", "  partition flushes during the none run", nflush);
    printf("%-44s %14.2f\n", "  seconds spent flushing (all threads)", flush_busy);
    printf("%-44s %14" PRIu64 "\n", "  compactions during the none run", ncompact);
    printf("%-44s %14.2f\n", "  seconds spent compacting (all threads)", compact_busy);
    printf("%-44s %14.2f\n", "final flush seconds", flush_s);
    printf("%-44s %14.2f\n", "full compaction seconds", compact_s);
    printf("%-44s %14.2f\n", "write amplification (wal+flush+compact)/user",
           (double)(walb + flushed + compacted) / (double)walb);
    printf("%-44s %14.1f\n", "point get p50 us", g50);
    printf("%-44s %14.1f\n", "point get p99 us", g99);
    printf("%-44s %14zu\n", "  point gets found (of 20000)", found);
    printf("%-44s %14.1f\n", "newest-100 in a partition p50 us", s50);
    printf("%-44s %14.1f\n", "newest-100 in a partition p99 us", s99);
    printf("%-44s %14.1f\n", "peak RSS MiB", (double)ru.ru_maxrss / 1024.0);
    free(pool);
    return 0;
}
