/* Query benchmark: loads N events (--hosts 1,000 x --names 20 events over --hours,
 * default 10; a float `value`, an int `code` and a string `msg`) into a fresh
 * store in a temp dir, flushes and compacts, then times the query shapes of
 * DESIGN.md (the 100 newest events of a host, one event over all hosts for an
 * hour, COUNT(*) over an hour and a full one-hour scan) and the search and
 * aggregation shapes of benchmarks/compare (s1-s6: words, a substring, time
 * buckets, top hosts). Prints a table; never asserts. A shape the engine
 * refuses prints `error` with the reason and the next shape runs.
 *
 *   query_bench [--events N] [--queries Q] [--dir D] [--cache-mb M] [--zstd-level L]
 *               [--hours H] [--hosts H] [--names E] [--data logs|fixed] [--shape-seconds S]
 *               [--only newest|keys|hostevent|oldest|event|count|scan|
 *                       rare|common|substr|avgmin|panel|tophosts|eventbuckets]
 *
 * --data logs (the default): `msg` is a log line of bench_logmsg.h (a rare
 * word in 0.1% of rows, a common word in 3%, a substring in 1%), `value` a
 * latency in ms; the rows are log entries written as the daemon writes JSON
 * lines (ingest/ with INGEST_JSONL: {"ts","host","event","value","code",
 * "msg"} a line, 10,000 lines a store batch), so their blocks get word
 * filters (store/FORMAT.md). --data fixed: the same ~110-byte message on
 * every row, plus a tag `region`, written as rows without an id
 * (batch_put: the data of the figures before the search shapes). Each shape stops after
 * --shape-seconds (60) and prints how many queries it ran. The "24 h"
 * shapes cover [start, start + 24 h): the whole span when --hours <= 24.
 * A --dir that already holds the loaded database is reused (no reload).
 * --zstd-level L: the final form of compacted windows, zstd at level L or
 * LZ4HC with 0 (default: the store's, zstd 3). --no-host-section: final
 * windows without their rows by host (store/series.h), as before 2026-11-29. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_logmsg.h"

#include "base/buf.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/json.h"
#include "ingest/ingest.h"
#include "model/record.h"
#include "query/query.h"
#include "store/store.h"

#define HOUR_NS (3600LL * 1000000000LL)
#define DAY_NS (24 * HOUR_NS)
#define BASE_TS 1700000000000000000LL

struct bench {
    struct store *s;
    struct store_db *db;
    long long events;
    int queries;
    uint64_t rng;
    int64_t now;
    int64_t span_ns;   /* --hours */
    bool fixed_msg;    /* --data fixed */
    double shape_secs; /* --shape-seconds */
    int hosts, names;  /* --hosts, --names */
};

static uint64_t rnd(struct bench *b)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return b->rng;
}

#define LOAD_BATCH 10000

/* The fields of a row of event ev: value, code and msg (NUL-terminated in
 * msg, at most cap - 1 bytes; *msg_len its length). */
static void make_fields(struct bench *b, int ev, double *value, int64_t *code, char *msg,
                        size_t cap, size_t *msg_len)
{
    static const char fixed[] = "GET /api/v1/items?page=17&sort=desc HTTP/1.1 200 "
                                "agent=curl/8.5.0 upstream=10.0.3.17:8080 rt=0.0123";
    if (b->fixed_msg) {
        *value = (double)(rnd(b) % 10000) / 100.0;
        *code = 200 + (int64_t)(rnd(b) % 4) * 100;
        snprintf(msg, cap, "%s", fixed);
        *msg_len = strlen(msg);
    } else {
        uint64_t r = rnd(b);
        *value = (double)(r % 100000) / 100.0;
        *code = LM_CODES[(r >> 17) % (sizeof(LM_CODES) / sizeof(LM_CODES[0]))];
        int n = lm_message(rnd(b), rnd(b), ev, (int)*code, *value, msg, cap);
        *msg_len = n < (int)cap ? (size_t)n : cap - 1;
    }
}

/* --data fixed: the row's value, a record of the tag region and the fields
 * (a row without an id, as the figures before the search shapes had). */
static void make_value(struct bench *b, long long i, int ev, struct buf *v)
{
    char msg[512];
    size_t mlen;
    struct rec_tag tag = {slice_cstr("region"), slice_cstr(i % 2 ? "eu" : "us")};
    struct rec_field f[3];
    memset(f, 0, sizeof(f));
    f[0].key = slice_cstr("value");
    f[0].type = REC_FLOAT;
    f[1].key = slice_cstr("code");
    f[1].type = REC_INT;
    f[2].key = slice_cstr("msg");
    f[2].type = REC_STRING;
    make_fields(b, ev, &f[0].v.f, &f[1].v.i, msg, sizeof(msg), &mlen);
    f[2].v.s = slice_make(msg, mlen);
    buf_reset(v);
    rec_encode(v, &tag, 1, f, 3);
}

/* --data logs: appends the row as a JSON line, as a log shipper sends it
 * to /api/v1/ingest?format=jsonl (value with a decimal point: a float). */
static void append_jsonl(struct bench *b, int64_t ts, const char *host, const char *event, int ev,
                         struct buf *lines)
{
    char msg[512];
    size_t mlen;
    double value;
    int64_t code;
    make_fields(b, ev, &value, &code, msg, sizeof(msg), &mlen);
    buf_printf(lines,
               "{\"ts\":%lld,\"host\":\"%s\",\"event\":\"%s\",\"value\":%.2f,\"code\":%lld,"
               "\"msg\":",
               (long long)ts, host, event, value, (long long)code);
    json_str(lines, msg, mlen);
    buf_puts(lines, "}\n");
}

/* Writes the JSON lines through ingest/ as the daemon's JSON-lines path
 * does (log entries: the id is the whole content, the value empty), in one
 * store batch. ERR_BUSY (flushing behind) writes the lines again: the same
 * content is the same row. A line ingest refuses is an error here. */
static int write_jsonl(struct bench *b, const struct buf *lines)
{
    struct event_limits lim;
    event_limits_default(&lim);
    struct ingest_params p;
    ingest_params_default(&p);
    p.format = INGEST_JSONL;
    p.body_hint = lines->len;
    p.batch_rows = LOAD_BATCH;
    p.batch_bytes = lines->len + (1u << 20);
    for (;;) {
        struct ingest *in = NULL;
        int rc = ingest_new(&p, &lim, b->db, &in);
        if (rc == ERR_OK)
            rc = ingest_feed(in, lines->data, lines->len);
        if (rc == ERR_OK)
            rc = ingest_finish(in);
        if (rc == ERR_OK && ingest_dropped(in) > 0) {
            fprintf(stderr, "ingest dropped %llu lines: %.300s\n",
                    (unsigned long long)ingest_dropped(in), ingest_error_text(in));
            rc = ERR_INVAL;
        }
        ingest_free(in);
        if (rc != ERR_BUSY)
            return rc;
        usleep(1000);
    }
}

static int load(struct bench *b)
{
    struct batch *bt = batch_new();
    struct buf v = BUF_INIT, lines = BUF_INIT;
    char host[32], ev[32];
    int64_t step = b->span_ns / b->events;
    int64_t t0 = clock_mono_ns();
    int rc = ERR_OK;
    for (long long i = 0; i < b->events && rc == ERR_OK; i++) {
        snprintf(host, sizeof(host), "host-%04d", (int)(rnd(b) % b->hosts));
        int e = (int)(rnd(b) % b->names);
        snprintf(ev, sizeof(ev), "ev-%02d", e);
        bool last = i == b->events - 1;
        if (!b->fixed_msg) {
            append_jsonl(b, BASE_TS + i * step, host, ev, e, &lines);
            if ((i + 1) % LOAD_BATCH == 0 || last) {
                rc = write_jsonl(b, &lines);
                buf_reset(&lines);
            }
        } else {
            make_value(b, i, e, &v);
            batch_put(bt, BASE_TS + i * step, slice_cstr(host), slice_cstr(ev),
                      slice_make(v.data, v.len));
            if (batch_count(bt) == LOAD_BATCH || last) {
                while ((rc = store_write(b->db, bt)) == ERR_BUSY)
                    usleep(1000);
                batch_clear(bt);
            }
        }
        /* compact as we go: a long load otherwise piles up SSTables (and
         * open files) faster than background compaction merges them */
        if (rc == ERR_OK && i % 1000000 == 999999)
            rc = store_db_compact(b->db);
    }
    double load_s = (double)(clock_mono_ns() - t0) / 1e9;
    if (rc == ERR_OK)
        rc = store_db_flush(b->db);
    if (rc == ERR_OK)
        rc = store_db_compact(b->db);
    printf("loaded %lld events in %.1f s (%.0f/s), flushed and compacted in %.1f s\n", b->events,
           load_s, (double)b->events / load_s, (double)(clock_mono_ns() - t0) / 1e9 - load_s);
    batch_free(bt);
    buf_destroy(&v);
    buf_destroy(&lines);
    return rc;
}

/* Runs one statement to completion; returns its latency in ns (and the CPU
 * time of this thread in *cpu: the machine may be shared), bytes out. On
 * failure (refused at open, or an error mid-stream) returns -1 with the
 * reason in why. */
static int64_t run(struct bench *b, const char *sql, size_t *bytes, int64_t *cpu, char *why,
                   size_t whylen)
{
    int64_t c0 = clock_thread_cpu_ns();
    static char out[1 << 16];
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = b->now;
    struct query_cursor *c;
    struct buf err = BUF_INIT;
    int64_t t0 = clock_mono_ns();
    if (query_sql_open(b->s, sql, strlen(sql), &o, &c, &err)) {
        snprintf(why, whylen, "%s", buf_cstr(&err));
        buf_destroy(&err);
        return -1;
    }
    ssize_t n;
    *bytes = 0;
    while ((n = query_cursor_read(c, out, sizeof(out))) > 0)
        *bytes += (size_t)n;
    if (n < 0)
        snprintf(why, whylen, "%s", query_cursor_error(c));
    query_cursor_free(c);
    buf_destroy(&err);
    *cpu = clock_thread_cpu_ns() - c0;
    return n < 0 ? -1 : clock_mono_ns() - t0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Reads a counter from query_metrics() text. */
static unsigned long long metric(const char *name)
{
    struct buf m = BUF_INIT;
    query_metrics(&m);
    char line[128];
    snprintf(line, sizeof(line), "\n%s ", name); /* the sample, not the HELP line */
    const char *p = strstr(buf_cstr(&m), line);
    unsigned long long v = 0;
    if (p)
        v = strtoull(p + strlen(line), NULL, 10);
    buf_destroy(&m);
    return v;
}

typedef void (*gen_fn)(struct bench *b, char *sql, size_t n);

static void gen_newest(struct bench *b, char *sql, size_t n)
{
    snprintf(sql, n, "SELECT * FROM bench WHERE host = 'host-%04d' LIMIT 100",
             (int)(rnd(b) % b->hosts));
}

static int64_t rand_hour(struct bench *b)
{
    return BASE_TS + (int64_t)(rnd(b) % (uint64_t)(b->span_ns - HOUR_NS));
}

static void gen_event_hour(struct bench *b, char *sql, size_t n)
{
    int64_t t = rand_hour(b);
    snprintf(sql, n, "SELECT * FROM bench WHERE ts >= %lld AND ts < %lld AND event = 'ev-%02d'",
             (long long)t, (long long)(t + HOUR_NS), (int)(rnd(b) % b->names));
}

static void gen_count_hour(struct bench *b, char *sql, size_t n)
{
    int64_t t = rand_hour(b);
    snprintf(sql, n, "SELECT COUNT(*) FROM bench WHERE ts >= %lld AND ts < %lld", (long long)t,
             (long long)(t + HOUR_NS));
}

static void gen_scan_hour(struct bench *b, char *sql, size_t n)
{
    int64_t t = rand_hour(b);
    snprintf(sql, n, "SELECT * FROM bench WHERE ts >= %lld AND ts < %lld", (long long)t,
             (long long)(t + HOUR_NS));
}

static void gen_newest_keys(struct bench *b, char *sql, size_t n)
{
    snprintf(sql, n, "SELECT ts, event FROM bench WHERE host = 'host-%04d' LIMIT 100",
             (int)(rnd(b) % b->hosts));
}

static void gen_newest_event(struct bench *b, char *sql, size_t n)
{
    snprintf(sql, n, "SELECT * FROM bench WHERE host = 'host-%04d' AND event = 'ev-%02d' LIMIT 100",
             (int)(rnd(b) % b->hosts), (int)(rnd(b) % b->names));
}

static void gen_newest_asc(struct bench *b, char *sql, size_t n)
{
    snprintf(sql, n, "SELECT * FROM bench WHERE host = 'host-%04d' ORDER BY ts ASC LIMIT 100",
             (int)(rnd(b) % b->hosts));
}

/* s1-s6 of benchmarks/compare, with its statements (see its README) */
static void gen_rare(struct bench *b, char *sql, size_t n)
{
    (void)b;
    snprintf(sql, n,
             "SELECT * FROM bench WHERE ts >= %lld AND ts < %lld AND msg MATCH '" LM_RARE
             "' LIMIT 100",
             (long long)BASE_TS, (long long)(BASE_TS + DAY_NS));
}

static void gen_common(struct bench *b, char *sql, size_t n)
{
    (void)b;
    snprintf(sql, n,
             "SELECT COUNT(*) FROM bench WHERE ts >= %lld AND ts < %lld AND msg MATCH '" LM_COMMON
             "'",
             (long long)BASE_TS, (long long)(BASE_TS + DAY_NS));
}

static void gen_substr(struct bench *b, char *sql, size_t n)
{
    int64_t t = rand_hour(b);
    snprintf(sql, n,
             "SELECT COUNT(*) FROM bench WHERE ts >= %lld AND ts < %lld AND msg LIKE '%%" LM_SUBSTR
             "%%'",
             (long long)t, (long long)(t + HOUR_NS));
}

static void gen_avg_minute(struct bench *b, char *sql, size_t n)
{
    snprintf(sql, n,
             "SELECT time_bucket('1m') AS t, AVG(value) FROM bench WHERE host = 'host-%04d' AND "
             "ts >= %lld AND ts < %lld GROUP BY t",
             (int)(rnd(b) % b->hosts), (long long)BASE_TS, (long long)(BASE_TS + DAY_NS));
}

/* The Grafana panel of benchmarks/compare --dashboard in SQL: the mean per
 * minute of one host and one event over the last 6 h of the span. */
static void gen_panel(struct bench *b, char *sql, size_t n)
{
    int64_t end = BASE_TS + (b->span_ns < DAY_NS ? b->span_ns : DAY_NS);
    snprintf(sql, n,
             "SELECT time_bucket('1m') AS t, AVG(value) FROM bench WHERE host = 'host-%04d' AND "
             "event = 'ev-%02d' AND ts >= %lld AND ts < %lld GROUP BY t",
             (int)(rnd(b) % b->hosts), (int)(rnd(b) % b->names), (long long)(end - 6 * HOUR_NS),
             (long long)end);
}

static void gen_top_hosts(struct bench *b, char *sql, size_t n)
{
    int64_t t = rand_hour(b);
    snprintf(sql, n,
             "SELECT host, COUNT(*) AS n FROM bench WHERE ts >= %lld AND ts < %lld GROUP BY host "
             "ORDER BY n DESC LIMIT 10",
             (long long)t, (long long)(t + HOUR_NS));
}

static void gen_event_buckets(struct bench *b, char *sql, size_t n)
{
    (void)b;
    snprintf(sql, n,
             "SELECT time_bucket('5m') AS t, event, COUNT(*) FROM bench WHERE ts >= %lld AND "
             "ts < %lld GROUP BY t, event",
             (long long)BASE_TS, (long long)(BASE_TS + DAY_NS));
}

/* Prints the "analyze" object of EXPLAIN ANALYZE of sql (rows scanned,
 * blocks read and skipped), or the error. */
static void explain(struct bench *b, const char *label, const char *sql)
{
    char stmt[600], out[4096];
    snprintf(stmt, sizeof(stmt), "EXPLAIN ANALYZE %s", sql);
    struct query_opts o;
    query_opts_default(&o);
    o.now_ns = b->now;
    struct query_cursor *c;
    struct buf err = BUF_INIT, text = BUF_INIT;
    if (query_sql_open(b->s, stmt, strlen(stmt), &o, &c, &err)) {
        printf("  %s: error: %.150s\n", label, buf_cstr(&err));
        buf_destroy(&err);
        return;
    }
    ssize_t n;
    while ((n = query_cursor_read(c, out, sizeof(out))) > 0)
        buf_append(&text, out, (size_t)n);
    if (n < 0)
        printf("  %s: error: %.150s\n", label, query_cursor_error(c));
    else {
        const char *a = strstr(buf_cstr(&text), "\"analyze\":");
        printf("  %s: %.*s\n", label, a ? (int)strcspn(a, "}") + 1 : 200, a ? a : buf_cstr(&text));
    }
    query_cursor_free(c);
    buf_destroy(&err);
    buf_destroy(&text);
}

/* EXPLAIN ANALYZE of s1, s2 and of a scan of the same 24 h that reads every
 * row, as benchmarks/compare prints them: the blocks a word search skips. */
static void explain_searches(struct bench *b)
{
    char sql[512];
    printf("\nEXPLAIN ANALYZE (blocks a word search reads against a scan):\n");
    gen_rare(b, sql, sizeof(sql));
    explain(b, "s1 rare", sql);
    gen_common(b, sql, sizeof(sql));
    explain(b, "s2 common", sql);
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(*) FROM bench WHERE ts >= %lld AND ts < %lld AND value >= 0",
             (long long)BASE_TS, (long long)(BASE_TS + DAY_NS));
    explain(b, "scan of the 24 h", sql);
    fflush(stdout);
}

static void measure(struct bench *b, const char *label, gen_fn gen, int q)
{
    int64_t *lat = calloc((size_t)q, sizeof(*lat));
    int64_t *cpu = calloc((size_t)q, sizeof(*cpu));
    char sql[512], why[200] = "";
    size_t bytes = 0, total_bytes = 0;
    unsigned long long sc0 = metric("logbucket_query_rows_scanned_total");
    unsigned long long rt0 = metric("logbucket_query_rows_returned_total");
    int64_t sum = 0, t_end = clock_mono_ns() + (int64_t)(b->shape_secs * 1e9);
    int done = 0;
    for (int i = 0; i < q && (i == 0 || clock_mono_ns() < t_end); i++) {
        gen(b, sql, sizeof(sql));
        lat[i] = run(b, sql, &bytes, &cpu[i], why, sizeof(why));
        if (lat[i] < 0) {
            /* the engine refused it (or failed mid-stream): say so, go on */
            printf("%-36s error: %.150s\n", label, why);
            fflush(stdout);
            free(lat);
            free(cpu);
            return;
        }
        sum += lat[i];
        total_bytes += bytes;
        done++;
    }
    q = done;
    unsigned long long sc = metric("logbucket_query_rows_scanned_total") - sc0;
    unsigned long long rt = metric("logbucket_query_rows_returned_total") - rt0;
    qsort(lat, (size_t)q, sizeof(*lat), cmp_i64);
    qsort(cpu, (size_t)q, sizeof(*cpu), cmp_i64);
    printf("%-36s %5d %8.3f %8.3f %8.3f %8.3f %10.0f %8.2f %10.0f\n", label, q,
           (double)lat[q / 2] / 1e6, (double)lat[q * 99 / 100] / 1e6, (double)cpu[q / 2] / 1e6,
           (double)cpu[q * 99 / 100] / 1e6, (double)rt / q, rt ? (double)sc / (double)rt : 0.0,
           sum ? (double)sc / ((double)sum / 1e9) : 0.0);
    fflush(stdout);
    free(lat);
    free(cpu);
}

static void run_all(struct bench *b, const char *only)
{
    printf("\n%-36s %5s %8s %8s %8s %8s %10s %8s %10s\n", "query", "n", "p50 ms", "p99 ms",
           "cpu p50", "cpu p99", "rows/query", "scan/row", "scanned/s");
    static const struct {
        const char *key, *label;
        gen_fn gen;
        int div;
    } shapes[] = {
        {"newest", "newest 100 of a host (INDEX)", gen_newest, 1},
        {"keys", "newest 100 keys of a host (no gets)", gen_newest_keys, 1},
        {"hostevent", "newest 100 of a host+event (INDEX)", gen_newest_event, 1},
        {"oldest", "oldest 100 of a host (INDEX, ASC)", gen_newest_asc, 4},
        {"event", "one event, all hosts, 1 h (SCAN)", gen_event_hour, 10},
        {"count", "COUNT(*) over 1 h (SCAN)", gen_count_hour, 10},
        {"scan", "all rows over 1 h (SCAN)", gen_scan_hour, 20},
        {"rare", "s1 newest 100, rare word, 24 h", gen_rare, 4},
        {"common", "s2 COUNT(*), common word, 24 h", gen_common, 4},
        {"substr", "s3 COUNT(*), LIKE substring, 1 h", gen_substr, 4},
        {"avgmin", "s4 AVG(value)/1m of a host, 24 h", gen_avg_minute, 4},
        {"panel", "AVG(value)/1m of a host+event, 6 h", gen_panel, 4},
        {"tophosts", "s5 COUNT(*)/host, 1 h, top 10", gen_top_hosts, 4},
        {"eventbuckets", "s6 COUNT(*)/event/5m, 24 h", gen_event_buckets, 4},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        if (only && strcmp(only, shapes[i].key) != 0)
            continue;
        measure(b, shapes[i].label, shapes[i].gen,
                only ? b->queries : b->queries / shapes[i].div + 1);
    }
    if (!only || !strcmp(only, "rare") || !strcmp(only, "common"))
        explain_searches(b);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: query_bench [--events N] [--queries Q] [--dir DIR] [--cache-mb M]\n"
            "                   [--zstd-level L (0: LZ4HC final form)] [--no-host-section]\n"
            "                   [--hours H] [--hosts H] [--names E] [--data logs|fixed]\n"
            "                   [--shape-seconds S]\n"
            "                   [--only newest|keys|hostevent|oldest|event|count|scan|\n"
            "                           rare|common|substr|avgmin|panel|tophosts|eventbuckets]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct bench b = {NULL,  NULL, 2000000, 200, 0x2545f4914f6cdd1dULL, 0, 10 * HOUR_NS,
                      false, 60,   1000,    20};
    const char *dir = NULL, *only = NULL;
    long long cache_mb = 1024, hours = 10;
    int zstd_level = -1; /* -1: the store's default final form */
    bool host_section = true;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            b.events = atoll(argv[++i]);
        else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
            b.queries = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--cache-mb") == 0 && i + 1 < argc)
            cache_mb = atoll(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--no-host-section") == 0)
            host_section = false;
        else if (strcmp(argv[i], "--zstd-level") == 0 && i + 1 < argc)
            zstd_level = atoi(argv[++i]); /* 0: LZ4HC as the final form */
        else if (strcmp(argv[i], "--hours") == 0 && i + 1 < argc)
            hours = atoll(argv[++i]);
        else if (strcmp(argv[i], "--hosts") == 0 && i + 1 < argc)
            b.hosts = atoi(argv[++i]);
        else if (strcmp(argv[i], "--names") == 0 && i + 1 < argc)
            b.names = atoi(argv[++i]);
        else if (strcmp(argv[i], "--shape-seconds") == 0 && i + 1 < argc)
            b.shape_secs = atof(argv[++i]);
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            if (strcmp(d, "logs") != 0 && strcmp(d, "fixed") != 0)
                usage();
            b.fixed_msg = strcmp(d, "fixed") == 0;
        } else
            usage();
    }
    if (b.events < 1 || b.queries < 1 || b.hosts < 1 || b.hosts > 9999 || b.names < 1 ||
        b.names > 99 || hours < 2 || hours > 24 * 365 || b.shape_secs <= 0)
        usage();
    b.span_ns = hours * HOUR_NS;
    if (b.events > b.span_ns)
        usage();
    /* a big load keeps many SSTables open */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char tmpl[] = "/tmp/lb-query-bench-XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("mkdtemp");
        return 1;
    }
    b.now = BASE_TS + b.span_ns;
    struct store_opts so;
    store_opts_default(&so);
    so.dir = dir;
    so.wal_sync = STORE_SYNC_NONE;
    so.block_cache_bytes = (size_t)cache_mb << 20;
    if (zstd_level >= 0)
        so.cold_zstd_level = zstd_level;
    so.host_section = host_section;
    struct db_opts dbo = {16, true, 0};
    if (store_open(&so, &b.s)) {
        fprintf(stderr, "cannot open the store in %s\n", dir);
        return 1;
    }
    /* --dir with a loaded database: measure again without reloading */
    bool reuse = store_db_get(b.s, "bench", &b.db) == ERR_OK;
    if (!reuse && (store_db_create(b.s, "bench", &dbo) || store_db_get(b.s, "bench", &b.db))) {
        fprintf(stderr, "cannot create the database in %s\n", dir);
        store_close(b.s);
        return 1;
    }
    printf("query_bench: %lld events, %d hosts x %d events over %lld h, %s messages, DESC, 16 "
           "buckets, block cache %lld MiB, dir %s%s\n",
           b.events, b.hosts, b.names, hours, b.fixed_msg ? "fixed" : "log", cache_mb, dir,
           reuse ? " (reused: --events, --hours and --data must match)" : "");
    int rc = reuse ? ERR_OK : load(&b);
    if (rc != ERR_OK)
        fprintf(stderr, "load failed: %s\n", err_name(rc));
    else
        run_all(&b, only);
    store_db_unref(b.db);
    store_close(b.s);
    char cmd[300];
    if (strncmp(dir, "/tmp/lb-query-bench-", 20) == 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    return rc == ERR_OK ? 0 : 1;
}
