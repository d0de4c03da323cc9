/* Ingest load client: POSTs line-protocol batches to a running logbucketd
 * over HTTP/1.1 keep-alive connections (one thread each) on 127.0.0.1 and
 * prints events/s, MB/s, request latency percentiles and the client's CPU
 * share; with --server-pid PID also the server's CPU per event, summed per
 * thread name from /proc/PID/task (HTTP workers, background flushes and
 * compactions), once until the last reply and once more when the server
 * has settled (no CPU for a second: the flushes and compactions the burst
 * left are done). With --parse it instead times the parser and the ingest path
 * (parse + encode + batch, no store) in-process on the same bodies. With
 * --es the same events go to /_bulk as Elasticsearch bulk bodies:
 *   {"index":{"_index":"ev07"}}
 *   {"@timestamp":"2023-11-14T22:13:20.000004211Z","host":"host-0421","value":0.731,...}
 * with line protocol's timestamps to the nanosecond, and the reply filtered
 * as Filebeat asks (--es-filter PATH sets another filter_path; "" the whole
 * reply, an item of ~200 bytes per event). --es-ms stamps them in epoch
 * milliseconds instead, as Filebeat's precision gives (every event of a
 * request then shares one ms).
 *
 *   ingest_bench --port 8086 --db bench --events 2000000 --batch 5000 --conns 4
 *   ingest_bench --port 8086 --events 2000000 --server-pid $(pidof logbucketd)
 *   ingest_bench --parse --events 5000000
 *
 * Lines look like: ev07,host=host-0421 value=0.731,count=12345i,msg="..." TS
 * (1,000 hosts, 20 event names, ~100-byte message; about 160 bytes a line).
 * Plain bodies get fresh timestamps per request; --gzip bodies are
 * compressed once up front (at most 64 distinct ones, then reused). A 503
 * (back-pressure) is retried after 20 ms and counted; latency includes it. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/buf.h"
#include "benchmarks/bench_events.h"
#include "ingest/esbulk.h"
#include "ingest/ingest.h"
#include "ingest/jsonl.h"
#include "ingest/lineproto.h"
#include "ingest/rawline.h"

struct opts {
    int port;
    const char *db;
    uint64_t events;
    size_t batch;
    int conns;
    bool is_gzip;
    double duration;
    bool is_parse;
    int server_pid; /* > 0: report that process's CPU per event */
    bool is_es;     /* Elasticsearch bulk bodies to /_bulk */
    const char *es_filter;
    bool is_es_ms; /* @timestamp as epoch ms (a batch shares one) */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* --- bodies ------------------------------------------------------------- */

#define TS_DIGITS 19

struct body {
    struct buf text;
    size_t *ts_off; /* offset of each line's 19-digit timestamp */
    size_t lines;
};

#define ES_TS_DIGITS 13
#define ES_RFC3339_LEN 30 /* 2023-11-14T22:13:20.000000000Z */

enum body_kind { BODY_LP, BODY_ES_NS, BODY_ES_MS };

/* lines events as line protocol, or as Elasticsearch bulk pairs with the
 * same values, @timestamp an RFC 3339 string with nanoseconds (the same ts
 * as line protocol's) or epoch milliseconds; ts_off marks each timestamp. */
static void make_body_as(struct body *b, size_t lines, uint64_t seed, enum body_kind kind)
{
    bool is_es = kind != BODY_LP;
    buf_init(&b->text);
    b->ts_off = xmalloc(lines * sizeof *b->ts_off);
    b->lines = lines;
    for (size_t i = 0; i < lines; i++) {
        uint64_t r = rng_next(&seed);
        unsigned ev = (unsigned)(r % 20), host = (unsigned)((r >> 8) % 1000);
        double value = (double)((r >> 20) % 100000) / 1000.0;
        uint64_t count = (r >> 40) % 1000000;
        if (is_es) {
            buf_printf(&b->text, "{\"index\":{\"_index\":\"ev%02u\"}}\n{\"@timestamp\":", ev);
            b->ts_off[i] = b->text.len;
            if (kind == BODY_ES_MS)
                buf_printf(&b->text, "%013d", 0);
            else
                buf_printf(&b->text, "\"%0*d\"", ES_RFC3339_LEN, 0);
            buf_printf(&b->text,
                       ",\"host\":\"host-%04u\",\"value\":%.3f,\"count\":%" PRIu64
                       ",\"message\":\"",
                       host, value, count);
        } else {
            buf_printf(&b->text, "ev%02u,host=host-%04u value=%.3f,count=%" PRIu64 "i,msg=\"", ev,
                       host, value, count);
        }
        size_t start = b->text.len;
        while (b->text.len - start < 95) {
            buf_puts(&b->text, bench_words[rng_next(&seed) % BENCH_NWORDS]);
            buf_putc(&b->text, ' ');
        }
        if (is_es) {
            buf_puts(&b->text, "\"}\n");
            continue;
        }
        buf_puts(&b->text, "\" ");
        b->ts_off[i] = b->text.len;
        buf_printf(&b->text, "%019d\n", 0);
    }
}

static void make_body(struct body *b, size_t lines, uint64_t seed)
{
    make_body_as(b, lines, seed, BODY_LP);
}

static enum body_kind body_kind_of(const struct opts *o)
{
    return !o->is_es ? BODY_LP : o->is_es_ms ? BODY_ES_MS : BODY_ES_NS;
}

/* ES bodies with RFC 3339 stamps: line i gets base + i ns, as set_ts
 * gives line protocol. */
static void set_ts_es_ns(struct body *b, int64_t base)
{
    char date[32] = "";
    int64_t date_s = -1;
    for (size_t i = 0; i < b->lines; i++) {
        int64_t ts = base + (int64_t)i, s = ts / 1000000000, ns = ts % 1000000000;
        if (s != date_s) {
            time_t t = (time_t)s;
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S.", &tm);
            date_s = s;
        }
        char *d = b->text.data + b->ts_off[i] + 1; /* after the quote */
        memcpy(d, date, 20);
        for (int k = 28; k >= 20; k--, ns /= 10)
            d[k] = (char)('0' + ns % 10);
        d[29] = 'Z';
    }
}

/* ES bodies: line i gets the millisecond of base + i ns. */
static void set_ts_es(struct body *b, int64_t base)
{
    for (size_t i = 0; i < b->lines; i++) {
        int64_t ms = (base + (int64_t)i) / 1000000;
        char *d = b->text.data + b->ts_off[i];
        for (int k = ES_TS_DIGITS - 1; k >= 0; k--, ms /= 10)
            d[k] = (char)('0' + ms % 10);
    }
}

/* Stamps an ES body's events from the first event's number (line
 * protocol's stamps, or a millisecond per 1000 events so that the ms of
 * batches stay apart). */
static void stamp_es(struct body *b, enum body_kind kind, uint64_t first)
{
    if (kind == BODY_ES_MS)
        set_ts_es(b, 1700000000000000000LL + (int64_t)first * 1000);
    else
        set_ts_es_ns(b, 1700000000000000000LL + (int64_t)first);
}

/* Stamps line i with base + i. The decimal string is counted up in place
 * (carries are rare), not formatted per line: the client's CPU is shared
 * with the daemon it measures. REQUIRES: base >= 0 and base + lines fits
 * in TS_DIGITS digits. */
static void set_ts(struct body *b, int64_t base)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%019" PRId64, base);
    for (size_t i = 0; i < b->lines; i++) {
        memcpy(b->text.data + b->ts_off[i], tmp, TS_DIGITS);
        for (int d = TS_DIGITS - 1; d >= 0 && ++tmp[d] > '9'; d--)
            tmp[d] = '0';
    }
}

static void gzip_buf(const struct buf *in, struct buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&z, in->len);
    buf_init(out);
    buf_reserve(out, cap);
    z.next_in = (unsigned char *)in->data;
    z.avail_in = (uInt)in->len;
    z.next_out = (unsigned char *)out->data;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    out->len = cap - z.avail_out;
    deflateEnd(&z);
}

/* --- parse mode --------------------------------------------------------- */

static void null_put(void *arg, const struct ingest_row *row)
{
    *(size_t *)arg += row->id.len + row->value.len;
}

static int null_write(void *arg)
{
    (void)arg;
    return 0;
}

typedef size_t (*feed_fn)(void *p, const char *data, size_t len, struct event_result *out);

static size_t lp_feed_v(void *p, const char *d, size_t n, struct event_result *r)
{
    return lp_feed(p, d, n, r);
}
static size_t raw_feed_v(void *p, const char *d, size_t n, struct event_result *r)
{
    return raw_feed(p, d, n, r);
}
static size_t jsonl_feed_v(void *p, const char *d, size_t n, struct event_result *r)
{
    return jsonl_feed(p, d, n, r);
}

/* Feeds body to a fresh parser per round in 64 KiB pieces; returns seconds
 * and adds the good lines to *ok. */
static double time_parser(int kind, const struct event_limits *lim, const struct buf *body,
                          uint64_t rounds, uint64_t *ok)
{
    const size_t chunk = 64 * 1024;
    double t0 = now_s();
    for (uint64_t r = 0; r < rounds; r++) {
        void *p = NULL;
        feed_fn feed = NULL;
        const char *why;
        struct raw_parser *rp = NULL;
        if (kind == 0) {
            p = lp_new(lim, 1);
            feed = lp_feed_v;
        } else if (kind == 1) {
            raw_new(lim, "host-1", "app", NULL, &rp, &why);
            p = rp;
            feed = raw_feed_v;
        } else {
            p = jsonl_new(lim, NULL, NULL, NULL);
            feed = jsonl_feed_v;
        }
        struct event_result res;
        for (size_t off = 0; off < body->len;) {
            size_t end = body->len - off < chunk ? body->len : off + chunk;
            while (off < end) {
                off += feed(p, body->data + off, end - off, &res);
                *ok += res.kind == EVENT_OK;
            }
        }
        if (kind == 0)
            lp_free(p);
        else if (kind == 1)
            raw_free(p);
        else
            jsonl_free(p);
    }
    return now_s() - t0;
}

static void jsonl_body(const struct body *lp, struct buf *out)
{
    /* the same events as JSON lines, built from the line-protocol text */
    buf_init(out);
    const char *q = lp->text.data, *end = q + lp->text.len;
    while (q < end) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        unsigned ev, host;
        double value;
        unsigned long long count;
        int n = 0;
        /* sscanf on the body itself would measure its whole rest (strlen)
         * per line: scan a NUL-terminated copy of the line's head */
        char head[96];
        size_t hl = (size_t)(nl - q) < sizeof head - 1 ? (size_t)(nl - q) : sizeof head - 1;
        memcpy(head, q, hl);
        head[hl] = '\0';
        sscanf(head, "ev%u,host=host-%u value=%lf,count=%llui,msg=\"%n", &ev, &host, &value, &count,
               &n);
        const char *msg = q + n, *mend = memchr(msg, '"', (size_t)(nl - msg));
        buf_printf(out,
                   "{\"ts\":%.19s,\"host\":\"host-%04u\",\"event\":\"ev%02u\","
                   "\"value\":%.3f,\"count\":%llu,\"msg\":\"%.*s\"}\n",
                   mend + 2, host, ev, value, count, (int)(mend - msg), msg);
        q = nl + 1;
    }
}

static int run_parse(const struct opts *o)
{
    struct body b;
    make_body(&b, o->batch, 42);
    set_ts(&b, 1700000000000000000LL);
    struct event_limits lim;
    event_limits_default(&lim);
    uint64_t rounds = (o->events + o->batch - 1) / o->batch;
    const size_t chunk = 64 * 1024;

    /* the parser alone */
    uint64_t ok = 0, fields = 0;
    double t0 = now_s();
    for (uint64_t r = 0; r < rounds; r++) {
        struct lp_parser *p = lp_new(&lim, 1);
        struct event_result res;
        for (size_t off = 0; off < b.text.len;) {
            size_t n = b.text.len - off < chunk ? b.text.len - off : chunk;
            size_t end = off + n;
            while (off < end) {
                off += lp_feed(p, b.text.data + off, end - off, &res);
                if (res.kind == EVENT_OK) {
                    ok++;
                    fields += res.ev.nfields;
                }
            }
        }
        lp_free(p);
    }
    double t1 = now_s();
    uint64_t lines = rounds * b.lines;
    if (ok != lines) {
        fprintf(stderr, "parse: only %" PRIu64 " of %" PRIu64 " lines parsed\n", ok, lines);
        return 1;
    }

    /* parse + encode + batch through ingest (null sink) */
    size_t bytes = 0;
    double t2 = now_s();
    for (uint64_t r = 0; r < rounds; r++) {
        struct ingest_params prm;
        ingest_params_default(&prm);
        struct ingest_sink sink = {null_put, null_write, NULL, &bytes};
        struct ingest *in = NULL;
        ingest_new_sink(&prm, &lim, &sink, &in);
        for (size_t off = 0; off < b.text.len; off += chunk)
            ingest_feed(in, b.text.data + off, b.text.len - off < chunk ? b.text.len - off : chunk);
        ingest_finish(in);
        ingest_free(in);
    }
    double t3 = now_s();
    /* the same events as Elasticsearch bulk pairs through ingest (null sink) */
    struct body es;
    make_body_as(&es, o->batch, 42, o->is_es_ms ? BODY_ES_MS : BODY_ES_NS);
    stamp_es(&es, o->is_es_ms ? BODY_ES_MS : BODY_ES_NS, 0);
    struct jsonl_es_map map = {"@timestamp", "host.name,host,hostname",
                               "event.dataset,service.name", false, "message"};
    double t4 = now_s();
    for (uint64_t r = 0; r < rounds; r++) {
        struct ingest_params prm;
        ingest_params_default(&prm);
        prm.format = INGEST_ESBULK;
        prm.es_map = &map;
        prm.es_filter = esbulk_filter_parse(o->es_filter);
        struct ingest_sink sink = {null_put, null_write, NULL, &bytes};
        struct ingest *in = NULL;
        ingest_new_sink(&prm, &lim, &sink, &in);
        for (size_t off = 0; off < es.text.len; off += chunk)
            ingest_feed(in, es.text.data + off,
                        es.text.len - off < chunk ? es.text.len - off : chunk);
        ingest_finish(in);
        struct buf reply = BUF_INIT;
        esbulk_reply(ingest_esbulk(in), 0, &reply);
        buf_destroy(&reply);
        if (ingest_written(in) != es.lines) {
            fprintf(stderr, "parse: esbulk wrote %" PRIu64 " of %zu\n", ingest_written(in),
                    es.lines);
            return 1;
        }
        ingest_free(in);
    }
    double t5 = now_s();
    double avg = (double)b.text.len / (double)b.lines;
    uint64_t ok_raw = 0, ok_js = 0;
    double t_raw = time_parser(1, &lim, &b.text, rounds, &ok_raw);
    struct buf js;
    jsonl_body(&b, &js);
    uint64_t js_rounds = rounds / 4 ? rounds / 4 : 1; /* JSON is slower */
    double t_js = time_parser(2, &lim, &js, js_rounds, &ok_js);
    if (ok_raw != lines || ok_js != js_rounds * b.lines) {
        fprintf(stderr, "parse: raw %" PRIu64 ", jsonl %" PRIu64 " lines parsed\n", ok_raw, ok_js);
        return 1;
    }
    printf("%-28s %12s %10s %10s\n", "stage", "lines/s", "ns/line", "MB/s");
    printf("%-28s %12.0f %10.1f %10.1f\n", "lp_feed (parse only)", (double)lines / (t1 - t0),
           (t1 - t0) * 1e9 / (double)lines, (double)lines * avg / (t1 - t0) / 1e6);
    printf("%-28s %12.0f %10.1f %10.1f\n", "ingest (parse+encode+batch)", (double)lines / (t3 - t2),
           (t3 - t2) * 1e9 / (double)lines, (double)lines * avg / (t3 - t2) / 1e6);
    printf("%-28s %12.0f %10.1f %10.1f\n", "esbulk (ingest+reply)", (double)lines / (t5 - t4),
           (t5 - t4) * 1e9 / (double)lines, (double)es.text.len * (double)rounds / (t5 - t4) / 1e6);
    buf_destroy(&es.text);
    free(es.ts_off);
    printf("%-28s %12.0f %10.1f %10.1f\n", "raw_feed", (double)lines / t_raw,
           t_raw * 1e9 / (double)lines, (double)b.text.len * (double)rounds / t_raw / 1e6);
    printf("%-28s %12.0f %10.1f %10.1f\n", "jsonl_feed", (double)ok_js / t_js,
           t_js * 1e9 / (double)ok_js, (double)js.len * (double)js_rounds / t_js / 1e6);
    buf_destroy(&js);
    printf("lines %" PRIu64 ", %.1f bytes/line, %.2f fields/line, %zu value bytes\n", lines, avg,
           (double)fields / (double)ok, bytes);
    buf_destroy(&b.text);
    free(b.ts_off);
    return 0;
}

/* --- HTTP mode ---------------------------------------------------------- */

struct shared {
    const struct opts *o;
    _Atomic uint64_t next_event; /* events claimed so far */
    _Atomic uint64_t body_bytes;
    _Atomic uint64_t wire_bytes;
    _Atomic uint64_t events_ok;
    _Atomic uint64_t requests_bad;
    _Atomic uint64_t retries; /* 503 answers retried */
    double deadline;
    struct buf *gz; /* pre-compressed bodies (--gzip) */
    size_t ngz;
};

struct worker {
    struct shared *sh;
    int id;
    int fd;      /* the open connection at the end, or -1 */
    double *lat; /* seconds per request */
    size_t nlat, caplat;
    char err[128];
};

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static bool send_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return true;
}

/* Reads one response; returns its status or -1. *is_close when the server
 * closes the connection after it. */
static int read_response(int fd, struct buf *rb, bool *is_close)
{
    buf_reset(rb);
    size_t hdr_end = 0;
    for (;;) {
        buf_reserve(rb, 4096);
        ssize_t r = read(fd, rb->data + rb->len, 4096);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return -1;
        }
        rb->len += (size_t)r;
        char *e = memmem(rb->data, rb->len, "\r\n\r\n", 4);
        if (e) {
            hdr_end = (size_t)(e - rb->data) + 4;
            break;
        }
    }
    int status = 0;
    if (sscanf(rb->data, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    size_t clen = 0;
    *is_close = false;
    for (char *l = rb->data; l < rb->data + hdr_end;) {
        char *nl = memmem(l, (size_t)(rb->data + hdr_end - l), "\r\n", 2);
        if (!nl)
            break;
        if (!strncasecmp(l, "content-length:", 15))
            clen = strtoul(l + 15, NULL, 10);
        if (!strncasecmp(l, "connection:", 11) && strcasestr(l, "close") &&
            strcasestr(l, "close") < nl)
            *is_close = true;
        l = nl + 2;
    }
    while (rb->len < hdr_end + clen) {
        buf_reserve(rb, 4096);
        ssize_t r = read(fd, rb->data + rb->len, 4096);
        if (r <= 0)
            return -1;
        rb->len += (size_t)r;
    }
    return status;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct opts *o = sh->o;
    struct body b;
    make_body_as(&b, o->batch, 1000 + (uint64_t)w->id, body_kind_of(o));
    struct buf rb = BUF_INIT;
    char hdr[512];
    int fd = -1;
    uint64_t k = 0;
    while (now_s() < sh->deadline) {
        uint64_t first = atomic_fetch_add(&sh->next_event, o->batch);
        if (first >= o->events)
            break;
        const char *data;
        size_t len;
        if (o->is_gzip) {
            const struct buf *g = &sh->gz[(first / o->batch) % sh->ngz];
            data = g->data;
            len = g->len;
        } else {
            if (o->is_es)
                stamp_es(&b, body_kind_of(o), first);
            else
                set_ts(&b, 1700000000000000000LL + (int64_t)first);
            data = b.text.data;
            len = b.text.len;
        }
        int hl =
            snprintf(hdr, sizeof hdr,
                     "POST %s?db=%s%s%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
                     o->is_es ? "/_bulk" : "/write", o->db,
                     o->is_es && *o->es_filter ? "&filter_path=" : "", o->is_es ? o->es_filter : "",
                     o->is_es ? "application/x-ndjson" : "text/plain", len,
                     o->is_gzip ? "Content-Encoding: gzip\r\n" : "");
        if (fd < 0 && (fd = dial(o->port)) < 0) {
            snprintf(w->err, sizeof w->err, "connect 127.0.0.1:%d: %s", o->port, strerror(errno));
            break;
        }
        double t0 = now_s();
        bool is_close = false;
        int st;
        for (;;) {
            /* 503 is back-pressure: wait a little and send the same batch
             * again, as InfluxDB clients do */
            struct iovec iov[2] = {{hdr, (size_t)hl}, {(void *)data, len}};
            st = send_all(fd, iov, 2) ? read_response(fd, &rb, &is_close) : -1;
            if (st != 503 || now_s() >= sh->deadline)
                break;
            atomic_fetch_add(&sh->retries, 1);
            if (is_close) {
                close(fd);
                if ((fd = dial(o->port)) < 0)
                    break;
            }
            usleep(20000);
        }
        double t1 = now_s();
        if (st < 0) {
            if (fd >= 0)
                close(fd);
            fd = -1;
            atomic_fetch_add(&sh->requests_bad, 1);
            continue;
        }
        if (w->nlat == w->caplat) {
            w->caplat = w->caplat ? w->caplat * 2 : 1024;
            w->lat = xrealloc(w->lat, w->caplat * sizeof *w->lat);
        }
        w->lat[w->nlat++] = t1 - t0;
        bool is_item_error = o->is_es && memmem(rb.data, rb.len, "\"errors\":true", 14);
        if (st >= 200 && st < 300 && !is_item_error)
            atomic_fetch_add(&sh->events_ok, o->batch);
        else if (atomic_fetch_add(&sh->requests_bad, 1) < 3)
            fprintf(stderr, "HTTP %d: %.*s\n", st, (int)(rb.len < 300 ? rb.len : 300), rb.data);
        atomic_fetch_add(&sh->body_bytes, o->is_gzip ? (uint64_t)b.text.len : (uint64_t)len);
        atomic_fetch_add(&sh->wire_bytes, (uint64_t)(len + (size_t)hl));
        if (is_close) {
            close(fd);
            fd = -1;
        }
        k++;
    }
    w->fd = fd; /* closed after the server's CPU is read: its thread ends with it */
    buf_destroy(&rb);
    buf_destroy(&b.text);
    free(b.ts_off);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* CPU ticks (user + system) of a process's threads, summed per thread
 * name (/proc/PID/task/TID/comm and stat), and of its threads that have
 * ended (the process total in /proc/PID/stat less the live threads: the
 * daemon's connection threads end with their connections). Returns the
 * number of names. */
#define MAX_THREAD_KINDS 16
struct thread_cpu {
    char name[20];
    unsigned long long ticks;
};

static void add_ticks(struct thread_cpu *t, size_t *n, const char *name, unsigned long long ticks)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(t[i].name, name)) {
            t[i].ticks += ticks;
            return;
        }
    if (*n == MAX_THREAD_KINDS)
        return;
    snprintf(t[*n].name, sizeof t[*n].name, "%s", name);
    t[(*n)++].ticks = ticks;
}

/* utime + stime of a /proc stat file, 0 if it cannot be read. */
static unsigned long long stat_ticks(const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t len = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[len] = 0;
    /* fields after the ")" that ends the name: state is field 3,
     * utime and stime are fields 14 and 15 */
    const char *q = strrchr(line, ')');
    unsigned long long ut = 0, st = 0;
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return ut + st;
}

static size_t read_thread_cpu(int pid, struct thread_cpu *t)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    size_t n = 0;
    if (!d)
        return 0;
    unsigned long long live = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[300], name[32] = "";
        snprintf(p, sizeof p, "/proc/%d/task/%s/comm", pid, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        if (fgets(name, sizeof name, f))
            name[strcspn(name, "\n")] = 0;
        fclose(f);
        snprintf(p, sizeof p, "/proc/%d/task/%s/stat", pid, e->d_name);
        unsigned long long ticks = stat_ticks(p);
        live += ticks;
        add_ticks(t, &n, name, ticks);
    }
    closedir(d);
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    unsigned long long all = stat_ticks(path);
    add_ticks(t, &n, "ended-threads", all > live ? all - live : 0);
    return n;
}

/* Prints the server's CPU per event between two readings, per thread name. */
static void print_server_cpu(const struct thread_cpu *a, size_t na, const struct thread_cpu *b,
                             size_t nb, uint64_t events)
{
    double hz = (double)sysconf(_SC_CLK_TCK), total = 0;
    if (!events || nb == 0)
        return;
    printf("server CPU per event (us), by thread:");
    for (size_t i = 0; i < nb; i++) {
        unsigned long long before = 0;
        for (size_t j = 0; j < na; j++)
            if (!strcmp(a[j].name, b[i].name))
                before = a[j].ticks;
        double us = (double)(b[i].ticks - before) / hz * 1e6 / (double)events;
        total += us;
        if (us >= 0.0005)
            printf(" %s %.3f", b[i].name, us);
    }
    printf("; total %.3f\n", total);
}

/* The server's total CPU ticks. */
static unsigned long long total_ticks(const struct thread_cpu *t, size_t n)
{
    unsigned long long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += t[i].ticks;
    return sum;
}

/* Waits until the server has used no CPU for a second (its background
 * threads have flushed and compacted what the burst left them), at most
 * SETTLE_MAX_S seconds, and reads its threads' CPU into t. */
#define SETTLE_MAX_S 60
static size_t settle(int pid, struct thread_cpu *t, double *waited)
{
    double t0 = now_s();
    size_t n = read_thread_cpu(pid, t);
    unsigned long long last = total_ticks(t, n);
    while (now_s() - t0 < SETTLE_MAX_S) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        n = read_thread_cpu(pid, t);
        unsigned long long cur = total_ticks(t, n);
        if (cur == last)
            break;
        last = cur;
    }
    *waited = now_s() - t0;
    return n;
}

static int run_http(const struct opts *o)
{
    struct shared sh;
    memset(&sh, 0, sizeof sh);
    sh.o = o;
    if (o->is_gzip) {
        uint64_t need = (o->events + o->batch - 1) / o->batch;
        sh.ngz = need < 64 ? (size_t)need : 64;
        if (!sh.ngz)
            sh.ngz = 1;
        sh.gz = xcalloc(sh.ngz, sizeof *sh.gz);
        for (size_t i = 0; i < sh.ngz; i++) {
            struct body b;
            make_body_as(&b, o->batch, 7 + i, body_kind_of(o));
            if (o->is_es)
                stamp_es(&b, body_kind_of(o), i * o->batch);
            else
                set_ts(&b, 1700000000000000000LL + (int64_t)(i * o->batch));
            gzip_buf(&b.text, &sh.gz[i]);
            buf_destroy(&b.text);
            free(b.ts_off);
        }
    }
    struct worker *ws = xcalloc((size_t)o->conns, sizeof *ws);
    pthread_t *th = xcalloc((size_t)o->conns, sizeof *th);
    struct rusage ru0, ru1;
    struct thread_cpu srv0[MAX_THREAD_KINDS], srv1[MAX_THREAD_KINDS];
    size_t nsrv0 = o->server_pid > 0 ? read_thread_cpu(o->server_pid, srv0) : 0;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = now_s();
    sh.deadline = t0 + o->duration;
    for (int i = 0; i < o->conns; i++) {
        ws[i].sh = &sh;
        ws[i].id = i;
        pthread_create(&th[i], NULL, worker_main, &ws[i]);
    }
    size_t nlat = 0;
    for (int i = 0; i < o->conns; i++) {
        pthread_join(th[i], NULL);
        nlat += ws[i].nlat;
        if (ws[i].err[0])
            fprintf(stderr, "conn %d: %s\n", i, ws[i].err);
    }
    double el = now_s() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    size_t nsrv1 = o->server_pid > 0 ? read_thread_cpu(o->server_pid, srv1) : 0;
    for (int i = 0; i < o->conns; i++)
        if (ws[i].fd >= 0)
            close(ws[i].fd);
    double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
                 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
                 (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                 (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    double *all = xmalloc((nlat ? nlat : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < o->conns; i++) {
        memcpy(all + k, ws[i].lat, ws[i].nlat * sizeof *all);
        k += ws[i].nlat;
        free(ws[i].lat);
    }
    qsort(all, nlat, sizeof *all, cmp_double);
    double p50 = nlat ? all[nlat / 2] : 0, p99 = nlat ? all[(nlat * 99) / 100] : 0;
    uint64_t ev = atomic_load(&sh.events_ok);
    printf("%-8s %6s %5s %6s %10s %7s %8s %8s %8s %7s %7s %5s\n", "mode", "batch", "conns", "secs",
           "events/s", "MB/s", "wireMB/s", "p50 ms", "p99 ms", "client%", "retries", "bad");
    printf("%-8s %6zu %5d %6.1f %10.0f %7.1f %8.1f %8.2f %8.2f %7.1f %7" PRIu64 " %5" PRIu64 "\n",
           o->is_es     ? (o->is_gzip ? "es+gzip" : "es")
           : o->is_gzip ? "lp+gzip"
                        : "lp",
           o->batch, o->conns, el, (double)ev / el, (double)atomic_load(&sh.body_bytes) / el / 1e6,
           (double)atomic_load(&sh.wire_bytes) / el / 1e6, p50 * 1e3, p99 * 1e3, 100.0 * cpu / el,
           (uint64_t)atomic_load(&sh.retries), (uint64_t)atomic_load(&sh.requests_bad));
    if (o->server_pid > 0) {
        print_server_cpu(srv0, nsrv0, srv1, nsrv1, ev);
        /* what the burst left to the background counts too */
        struct thread_cpu srv2[MAX_THREAD_KINDS];
        double waited;
        size_t nsrv2 = settle(o->server_pid, srv2, &waited);
        printf("settled (%.0f s later, background idle): ", waited);
        print_server_cpu(srv0, nsrv0, srv2, nsrv2, ev);
    }
    free(all);
    free(ws);
    free(th);
    for (size_t i = 0; i < sh.ngz; i++)
        buf_destroy(&sh.gz[i]);
    free(sh.gz);
    return ev ? 0 : 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: ingest_bench [--port N] [--db NAME] [--events N] [--batch LINES]\n"
                    "                    [--conns N] [--gzip] [--duration SECS] [--parse]\n"
                    "                    [--server-pid PID] [--es] [--es-filter PATH] [--es-ms]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {8086,
                     "bench",
                     1000000,
                     5000,
                     4,
                     false,
                     60.0,
                     false,
                     0,
                     false,
                     "errors,items.*.error,items.*.status",
                     false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gzip")) {
            o.is_gzip = true;
        } else if (!strcmp(a, "--parse")) {
            o.is_parse = true;
        } else if (!strcmp(a, "--es")) {
            o.is_es = true;
        } else if (!strcmp(a, "--es-ms")) {
            o.is_es = o.is_es_ms = true;
        } else if (!v) {
            usage();
        } else if (!strcmp(a, "--es-filter")) {
            o.es_filter = v, i++;
        } else if (!strcmp(a, "--port")) {
            o.port = atoi(v), i++;
        } else if (!strcmp(a, "--db")) {
            o.db = v, i++;
        } else if (!strcmp(a, "--events")) {
            o.events = strtoull(v, NULL, 10), i++;
        } else if (!strcmp(a, "--batch")) {
            o.batch = strtoul(v, NULL, 10), i++;
        } else if (!strcmp(a, "--conns")) {
            o.conns = atoi(v), i++;
        } else if (!strcmp(a, "--duration")) {
            o.duration = atof(v), i++;
        } else if (!strcmp(a, "--server-pid")) {
            o.server_pid = atoi(v), i++;
        } else {
            usage();
        }
    }
    if (o.batch == 0 || o.conns <= 0 || o.port <= 0 || o.port > 65535)
        usage();
    return o.is_parse ? run_parse(&o) : run_http(&o);
}
