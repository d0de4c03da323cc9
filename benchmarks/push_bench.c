/* Log push benchmark: the same events as ingest_bench (its generator, its
 * seeds), sent in one run through the line-protocol path (/write) and the
 * log push paths (Loki JSON, Loki snappy protobuf, OTLP/JSON, OTLP
 * protobuf), and JSON lines (the same rows as OTLP's), of a running
 * logbucketd on 127.0.0.1, into one database (each path its own time range). Prints events/s per
 * path, its ratio to the line-protocol rate, and with --server-pid the daemon's CPU per event
 * (until the last reply, and settled: once the daemon used no CPU for a second).
 *
 *   push_bench --port 8086 --events 100000 --rounds 3 --batch 1000 --conns 2 --server-pid PID
 *
 *   push_bench --only otlp-json --alone ...   (that path only, no line-protocol
 *                                            run first in the same daemon)
 *
 *   push_bench --parse --events 1000000   (in-process: decode, row encoding, batching)
 *
 * Paths run in rounds, each round starting one path later; the figures
 * are the totals of all rounds, the daemon's CPU counted from the first
 * request of a burst until the daemon is idle again (its flushes and
 * compactions included).
 *
 * An event of ingest_bench: ev07,host=host-0421 value=0.731,count=12345i,msg="..." TS.
 * As a Loki entry: stream {host="host-0421", job="ev07"}, the line the msg
 * with "value=0.731 count=12345" after it (Loki has no typed fields; as
 * structured metadata they would be two high-cardinality tags, which cost
 * the store's tag catalog more than the protocol). As an OTLP record: resource
 * host.name and service.name, body the msg, attributes value (double) and
 * count (int). One stream or resource per event: within a batch of 1,000
 * events of 1,000 hosts and 20 names almost none share one, and a
 * shipper could not group them either. Bodies are built before the clock
 * starts (the client shares the 2 cores with the daemon). */
#include <inttypes.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdatomic.h>

#include "base/buf.h"
#include "base/json.h"
#include "benchmarks/bench_events.h"
#include "benchmarks/bench_http.h"
#include "ingest/ingest.h"
#include "ingest/logrow.h"
#include "ingest/pb.h"

enum path { P_LP, P_LOKI_JSON, P_LOKI_PROTO, P_OTLP_JSON, P_OTLP_PROTO, P_JSONL, P_COUNT };
static const char *path_names[P_COUNT] = {"lineproto", "loki-json",  "loki-proto",
                                          "otlp-json", "otlp-proto", "jsonl"};
/* A database for each path, as each shipper would have: in one database,
 * a path's time range made the windows of the paths before it cold, and
 * their final (zstd) compaction fell into its burst (OTLP/JSON, which ran
 * after line protocol, paid for compacting line protocol's events). */
static const char *urls[P_COUNT] = {"/write?db=pb_lp",
                                    "/loki/api/v1/push?db=pb_loki_json",
                                    "/loki/api/v1/push?db=pb_loki_proto",
                                    "/v1/logs?db=pb_otlp_json",
                                    "/v1/logs?db=pb_otlp_proto",
                                    "/api/v1/ingest?db=pb_jsonl&format=jsonl"};
static const char *ctypes[P_COUNT] = {"text/plain",
                                      "application/json",
                                      "application/x-protobuf",
                                      "application/json",
                                      "application/x-protobuf",
                                      "application/x-ndjson"};

struct opts {
    int port;
    uint64_t events;
    size_t batch;
    int conns;
    int server_pid;
};

/* --- events: ingest_bench's generator ------------------------------------ */

struct ev {
    unsigned name, host;
    double value;
    uint64_t count;
    char msg[128];
    int64_t ts;
};

static void make_events(struct ev *e, size_t n, uint64_t seed, int64_t ts0)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(&seed);
        e[i].name = (unsigned)(r % 20);
        e[i].host = (unsigned)((r >> 8) % 1000);
        e[i].value = (double)((r >> 20) % 100000) / 1000.0;
        e[i].count = (r >> 40) % 1000000;
        size_t len = 0;
        while (len < 95) {
            const char *w = bench_words[rng_next(&seed) % BENCH_NWORDS];
            memcpy(e[i].msg + len, w, strlen(w));
            len += strlen(w);
            e[i].msg[len++] = ' ';
        }
        e[i].msg[len] = '\0';
        e[i].ts = ts0 + (int64_t)i;
    }
}

/* --- bodies --------------------------------------------------------------- */

static void body_lp(struct buf *b, const struct ev *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_printf(b,
                   "ev%02u,host=host-%04u value=%.3f,count=%" PRIu64 "i,msg=\"%s\" %" PRId64 "\n",
                   e[i].name, e[i].host, e[i].value, e[i].count, e[i].msg, e[i].ts);
}

static void body_loki_json(struct buf *b, const struct ev *e, size_t n)
{
    buf_puts(b, "{\"streams\":[");
    for (size_t i = 0; i < n; i++)
        buf_printf(b,
                   "%s{\"stream\":{\"host\":\"host-%04u\",\"job\":\"ev%02u\"},\"values\":[["
                   "\"%" PRId64 "\",\"%svalue=%.3f count=%" PRIu64 "\"]]}",
                   i ? "," : "", e[i].host, e[i].name, e[i].ts, e[i].msg, e[i].value, e[i].count);
    buf_puts(b, "]}");
}

static void pb_msg(struct buf *out, uint32_t num, struct buf *inner)
{
    pb_put_bytes(out, num, inner->data, inner->len);
    buf_reset(inner);
}

static void body_loki_proto(struct buf *b, const struct ev *e, size_t n)
{
    struct buf req = BUF_INIT, st = BUF_INIT, en = BUF_INIT, ts = BUF_INIT, kv = BUF_INIT;
    char tmp[64], line[256];
    for (size_t i = 0; i < n; i++) {
        int l =
            snprintf(tmp, sizeof tmp, "{host=\"host-%04u\", job=\"ev%02u\"}", e[i].host, e[i].name);
        pb_put_bytes(&st, 1, tmp, (size_t)l);
        pb_put_varint(&ts, 1, (uint64_t)(e[i].ts / 1000000000));
        pb_put_varint(&ts, 2, (uint64_t)(e[i].ts % 1000000000));
        pb_msg(&en, 1, &ts);
        l = snprintf(line, sizeof line, "%svalue=%.3f count=%" PRIu64, e[i].msg, e[i].value,
                     e[i].count);
        pb_put_bytes(&en, 2, line, (size_t)l);
        pb_msg(&st, 2, &en);
        pb_msg(&req, 1, &st);
    }
    size_t cap = snappy_max_compressed_length(req.len);
    buf_reserve(b, cap);
    snappy_compress(req.data, req.len, b->data + b->len, &cap);
    b->len += cap;
    struct buf *all[] = {&req, &st, &en, &ts, &kv};
    for (size_t i = 0; i < 5; i++)
        buf_destroy(all[i]);
}

static void body_otlp_json(struct buf *b, const struct ev *e, size_t n)
{
    buf_puts(b, "{\"resourceLogs\":[");
    for (size_t i = 0; i < n; i++)
        buf_printf(b,
                   "%s{\"resource\":{\"attributes\":[{\"key\":\"host.name\",\"value\":{"
                   "\"stringValue\":\"host-%04u\"}},{\"key\":\"service.name\",\"value\":{"
                   "\"stringValue\":\"ev%02u\"}}]},\"scopeLogs\":[{\"logRecords\":[{"
                   "\"timeUnixNano\":\"%" PRId64 "\",\"body\":{\"stringValue\":\"%s\"},"
                   "\"attributes\":[{\"key\":\"value\",\"value\":{\"doubleValue\":%.3f}},"
                   "{\"key\":\"count\",\"value\":{\"intValue\":\"%" PRIu64 "\"}}]}]}]}",
                   i ? "," : "", e[i].host, e[i].name, e[i].ts, e[i].msg, e[i].value, e[i].count);
    buf_puts(b, "]}");
}

static void kv_put(struct buf *out, uint32_t num, const char *k, struct buf *any)
{
    struct buf kv = BUF_INIT;
    pb_put_bytes(&kv, 1, k, strlen(k));
    pb_msg(&kv, 2, any);
    pb_msg(out, num, &kv);
    buf_destroy(&kv);
}

static void body_otlp_proto(struct buf *b, const struct ev *e, size_t n)
{
    struct buf rl = BUF_INIT, res = BUF_INIT, sl = BUF_INIT, rec = BUF_INIT, any = BUF_INIT;
    char tmp[32];
    for (size_t i = 0; i < n; i++) {
        int l = snprintf(tmp, sizeof tmp, "host-%04u", e[i].host);
        pb_put_bytes(&any, 1, tmp, (size_t)l);
        kv_put(&res, 1, "host.name", &any);
        l = snprintf(tmp, sizeof tmp, "ev%02u", e[i].name);
        pb_put_bytes(&any, 1, tmp, (size_t)l);
        kv_put(&res, 1, "service.name", &any);
        pb_msg(&rl, 1, &res);
        buf_putc(&rec, 1 << 3 | 1);
        uint64_t t = (uint64_t)e[i].ts;
        buf_append(&rec, &t, 8); /* fixed64, little-endian on x86 */
        pb_put_bytes(&any, 1, e[i].msg, strlen(e[i].msg));
        pb_msg(&rec, 5, &any);
        double v = e[i].value;
        buf_putc(&any, 4 << 3 | 1);
        buf_append(&any, &v, 8);
        kv_put(&rec, 6, "value", &any);
        pb_put_varint(&any, 3, e[i].count);
        kv_put(&rec, 6, "count", &any);
        pb_msg(&sl, 2, &rec);
        pb_msg(&rl, 2, &sl);
        pb_msg(b, 1, &rl);
    }
    struct buf *all[] = {&rl, &res, &sl, &rec, &any};
    for (size_t i = 0; i < 5; i++)
        buf_destroy(all[i]);
}

/* JSON lines: the same rows as OTLP's (log entries with msg, value and
 * count as fields), through the JSON lines path */
static void body_jsonl(struct buf *b, const struct ev *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_printf(b,
                   "{\"ts\":%" PRId64 ",\"host\":\"host-%04u\",\"event\":\"ev%02u\",\"msg\":\"%s\","
                   "\"value\":%.3f,\"count\":%" PRIu64 "}\n",
                   e[i].ts, e[i].host, e[i].name, e[i].msg, e[i].value, e[i].count);
}

typedef void (*body_fn)(struct buf *, const struct ev *, size_t);
static const body_fn builders[P_COUNT] = {body_lp,        body_loki_json,  body_loki_proto,
                                          body_otlp_json, body_otlp_proto, body_jsonl};

/* --- sending -------------------------------------------------------------- */

struct run {
    const struct opts *o;
    enum path p;
    struct buf *bodies;
    size_t nbodies;
    _Atomic size_t next;
    _Atomic uint64_t ok_events, bad;
    _Atomic uint64_t bytes;
};

static void *sender(void *arg)
{
    struct run *r = arg;
    struct bh_conn c;
    bh_init(&c, r->o->port, 60);
    char head[512];
    double deadline = bh_now() + 600;
    for (;;) {
        size_t k = atomic_fetch_add(&r->next, 1);
        if (k >= r->nbodies || bh_now() > deadline)
            break;
        const struct buf *b = &r->bodies[k];
        int hl = snprintf(head, sizeof head,
                          "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
                          "Content-Length: %zu\r\n\r\n",
                          urls[r->p], ctypes[r->p], b->len);
        struct bh_resp resp = {0, 0, NULL};
        int tries = 0;
        while (bh_roundtrip(&c, head, (size_t)hl, b->data, b->len, &resp) == 0 &&
               resp.status == 503 && tries++ < 500)
            usleep(20000);
        if (resp.status >= 200 && resp.status < 300)
            atomic_fetch_add(&r->ok_events, r->o->batch);
        else if (atomic_fetch_add(&r->bad, 1) < 3)
            fprintf(stderr, "%s: HTTP %d\n", path_names[r->p], resp.status);
        atomic_fetch_add(&r->bytes, b->len);
    }
    bh_free(&c);
    return NULL;
}

static unsigned long long proc_ticks(int pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long ut = 0, st = 0;
    if (fgets(line, sizeof line, f)) {
        char *p = strrchr(line, ')');
        if (p)
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
    }
    fclose(f);
    return ut + st;
}

/* Waits (at most 60 s) until the daemon used no CPU for a second. */
static unsigned long long settle(int pid)
{
    unsigned long long last = proc_ticks(pid);
    for (int i = 0; i < 60; i++) {
        sleep(1);
        unsigned long long t = proc_ticks(pid);
        if (t == last)
            return t;
        last = t;
    }
    return last;
}

struct totals {
    uint64_t events, bytes, bad;
    double secs;
    unsigned long long ticks;
};

/* Sends o->events events through path p once; adds to *tot. */
static void run_path(const struct opts *o, enum path p, uint64_t round, struct totals *tot)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.p = p;
    r.nbodies = (size_t)((o->events + o->batch - 1) / o->batch);
    r.bodies = calloc(r.nbodies, sizeof *r.bodies);
    struct ev *e = malloc(o->batch * sizeof *e);
    for (size_t k = 0; k < r.nbodies; k++) {
        /* the seeds of ingest_bench's workers; fresh timestamps per request */
        make_events(e, o->batch, 1000 + k % (size_t)o->conns,
                    1700000000000000000LL + (int64_t)p * 1000000000000000LL +
                        (int64_t)((round * r.nbodies + k) * o->batch));
        buf_init(&r.bodies[k]);
        builders[p](&r.bodies[k], e, o->batch);
    }
    free(e);
    if (o->server_pid > 0)
        settle(o->server_pid);
    unsigned long long t0 = o->server_pid > 0 ? proc_ticks(o->server_pid) : 0;
    double s0 = bh_now();
    pthread_t th[64];
    int conns = o->conns > 64 ? 64 : o->conns;
    for (int i = 0; i < conns; i++)
        pthread_create(&th[i], NULL, sender, &r);
    for (int i = 0; i < conns; i++)
        pthread_join(th[i], NULL);
    tot->secs += bh_now() - s0;
    /* the flushes and compactions this burst left behind are its cost too */
    unsigned long long t1 = o->server_pid > 0 ? settle(o->server_pid) : 0;
    tot->ticks += t1 - t0;
    tot->events += atomic_load(&r.ok_events);
    tot->bytes += atomic_load(&r.bytes);
    tot->bad += atomic_load(&r.bad);
    for (size_t k = 0; k < r.nbodies; k++)
        buf_destroy(&r.bodies[k]);
    free(r.bodies);
}

static void report(const struct opts *o, enum path p, const struct totals *t, double lp_rate)
{
    double rate = t->events / t->secs;
    long hz = sysconf(_SC_CLK_TCK);
    printf("%-11s %10.0f ev/s ", path_names[p], rate);
    if (lp_rate > 0)
        printf("%6.1f%% of lp", 100.0 * rate / lp_rate);
    else
        printf("%6s  of lp", "-");
    printf(" %7.1f MB/s body", t->bytes / t->secs / 1e6);
    if (o->server_pid > 0 && t->events)
        printf("  daemon CPU %6.0f ns/ev", (double)t->ticks / hz * 1e9 / t->events);
    printf("  bad %" PRIu64 "\n", t->bad);
}

/* --- parse mode: the ingest path in-process (decode, encode, batch) ----- */

static void null_put(void *arg, const struct ingest_row *row)
{
    (void)row;
    ++*(uint64_t *)arg;
}

static int null_write(void *arg)
{
    (void)arg;
    return 0;
}

static void run_parse(const struct opts *o, const char *only)
{
    static const enum ingest_format fmts[P_COUNT] = {INGEST_LINEPROTO,  INGEST_LOKI_JSON,
                                                     INGEST_LOKI_PROTO, INGEST_OTLP_JSON,
                                                     INGEST_OTLP_PROTO, INGEST_JSONL};
    struct logs_map loki = {"host,hostname,instance", "job,app,service_name", "loki"};
    struct logs_map otlp = {"host.name", "service.name", "otlp"};
    struct ev *e = malloc(o->batch * sizeof *e);
    make_events(e, o->batch, 1000, 1700000000000000000LL);
    struct event_limits lim;
    event_limits_default(&lim);
    double lp_ns = 0;
    for (int p = 0; p < P_COUNT; p++) {
        if (only && strcmp(only, path_names[p]) != 0)
            continue;
        struct buf body = BUF_INIT;
        builders[p](&body, e, o->batch);
        uint64_t rows = 0, reps = o->events / o->batch + 1;
        double t0 = bh_now();
        for (uint64_t r = 0; r < reps; r++) {
            struct ingest_params prm;
            ingest_params_default(&prm);
            prm.format = fmts[p];
            prm.map = p == P_LOKI_JSON || p == P_LOKI_PROTO ? &loki : &otlp;
            struct ingest_sink sink = {null_put, null_write, NULL, &rows};
            struct ingest *in;
            if (ingest_new_sink(&prm, &lim, &sink, &in) || ingest_feed(in, body.data, body.len) ||
                ingest_finish(in)) {
                fprintf(stderr, "%s: %s\n", path_names[p], ingest_error_text(in));
                exit(1);
            }
            ingest_free(in);
        }
        double ns = (bh_now() - t0) * 1e9 / (double)rows;
        if (p == P_LP)
            lp_ns = ns;
        printf("%-11s %7.0f ns/event (%.2fx line protocol), %zu bytes/event\n", path_names[p], ns,
               lp_ns > 0 ? ns / lp_ns : 1.0, body.len / o->batch);
        buf_destroy(&body);
    }
    free(e);
}

int main(int argc, char **argv)
{
    struct opts o = {8086, 200000, 1000, 2, 0};
    const char *only = NULL;
    int rounds = 2;
    bool is_parse = false, alone = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--parse")) {
            is_parse = true;
            continue;
        }
        if (!strcmp(a, "--alone")) {
            alone = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "usage: push_bench [--port N] [--events N] [--batch N] [--conns N] "
                            "[--server-pid PID] [--only PATH [--alone]] [--rounds R] [--parse]\n");
            return 2;
        }
        if (!strcmp(a, "--port"))
            o.port = atoi(v);
        else if (!strcmp(a, "--events"))
            o.events = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--batch"))
            o.batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--conns"))
            o.conns = atoi(v);
        else if (!strcmp(a, "--server-pid"))
            o.server_pid = atoi(v);
        else if (!strcmp(a, "--rounds"))
            rounds = atoi(v);
        else if (!strcmp(a, "--only"))
            only = v;
        i++;
    }
    if (o.batch == 0 || o.conns <= 0 || o.events == 0 || o.events > 100000000 || rounds < 1 ||
        rounds > 100) {
        fprintf(stderr, "push_bench: bad --batch, --conns or --events\n");
        return 2;
    }
    if (is_parse) {
        run_parse(&o, only);
        return 0;
    }
    /* --alone: no line-protocol run before the path in this daemon (its
     * last memtables would hold part of the memtable budget through the
     * path's burst) */
    bool use[P_COUNT] = {!(alone && only && strcmp(only, path_names[P_LP]) != 0)};
    for (int p = P_LOKI_JSON; p < P_COUNT; p++)
        use[p] = !only || !strcmp(only, path_names[p]);
    printf("push_bench: %" PRIu64 " events per path and round, %d rounds, %zu a request, %d "
           "connections\n",
           o.events, rounds, o.batch, o.conns);
    /* each round starts one path later, so that no path always runs first
     * on an empty memtable or last behind the others' flushes */
    struct totals tot[P_COUNT];
    memset(tot, 0, sizeof tot);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < P_COUNT; k++) {
            int p = (k + r) % P_COUNT;
            if (use[p])
                run_path(&o, (enum path)p, (uint64_t)r, &tot[p]);
        }
    double lp = use[P_LP] ? tot[P_LP].events / tot[P_LP].secs : 0;
    for (int p = 0; p < P_COUNT; p++)
        if (use[p])
            report(&o, (enum path)p, &tot[p], lp);
    return 0;
}
