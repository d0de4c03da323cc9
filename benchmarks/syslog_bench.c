/* Syslog load client: streams RFC 5424 messages over TCP connections (one
 * thread each) to a running logbucketd's syslog_tcp_listen on 127.0.0.1
 * and reports events/s and the server's CPU per event. Syslog has no
 * acknowledgement, so the clock stops when the server's /metrics counter
 * logbucket_syslog_rows_total{transport="tcp"} has grown by every event
 * sent (rows written to the store), not when the client has written its
 * bytes.
 *
 *   syslog_bench --port 6514 --http-port 8086 --events 2000000 --conns 4 \
 *       [--octet] [--senders] [--batch 5000] [--duration 120] [--server-pid PID]
 *
 * The events are ingest_bench's (same generator and seed): 1,000 hosts,
 * 20 event names, a float, an integer and a ~95-byte message:
 *   <14>1 2023-11-14T22:13:20.000000123Z host-0421 ev07 - - - \
 *       value=0.731 count=12345 GET /api/v1/items ...
 * mapped to host, event, tags facility and level, and msg. The numbers are
 * in the message, as a syslog sender writes them: as structured data they
 * would be two tags of 100,000 and 1,000,000 values, which the flush's
 * catalog of tag values pays for (about 2 us of CPU per event more).
 * Each message has its own nanosecond stamp (base + its index).
 *
 * Every connection sends messages of every host unless --senders: then
 * connection i carries only the hosts h with h % conns == i, as
 * connections from syslog senders (or relays) carry their own hosts'
 * messages. Without it, each host's messages arrive over every connection,
 * their stamps out of order between them, and its host index entries
 * often land behind newer ones instead of at the head. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_events.h"
#include "benchmarks/bench_http.h"

#define TS_FRAC 9

struct opts {
    int port, http_port;
    uint64_t events;
    size_t batch;
    int conns;
    bool is_octet;
    bool senders; /* each connection carries its own hosts' messages */
    double duration;
    int server_pid;
};

/* One block of messages; the 9 fraction digits of each stamp are
 * rewritten per send (base + index), as ingest_bench restamps its lines. */
struct block {
    struct bh_buf text;
    size_t *ts_off;  /* of each message's 9 fraction digits */
    size_t *msg_off; /* where each message (its octet count too) starts */
    size_t n;
};

/* A block's messages; with shards > 1 its hosts are those of one shard
 * (host % shards == shard), as a connection from syslog senders carries
 * its own hosts' messages. */
static void make_block(struct block *b, size_t n, uint64_t seed, bool is_octet, unsigned shard,
                       unsigned shards)
{
    memset(b, 0, sizeof *b);
    b->ts_off = bh_xrealloc(NULL, n * sizeof *b->ts_off);
    b->msg_off = bh_xrealloc(NULL, (n + 1) * sizeof *b->msg_off);
    b->n = n;
    char msg[512], line[700];
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(&seed);
        size_t m = 0;
        while (m < 95) {
            const char *w = bench_words[rng_next(&seed) % BENCH_NWORDS];
            m += (size_t)snprintf(msg + m, sizeof msg - m, "%s ", w);
        }
        int len = snprintf(line, sizeof line,
                           "<14>1 2023-11-14T22:13:20.%0*dZ host-%04u ev%02u - - - value=%.3f "
                           "count=%" PRIu64 " %s",
                           TS_FRAC, 0, (unsigned)((r >> 8) % (1000 / shards)) * shards + shard,
                           (unsigned)(r % 20), (double)((r >> 20) % 100000) / 1000.0,
                           (r >> 40) % 1000000, msg);
        b->msg_off[i] = b->text.len;
        if (is_octet) {
            char head[16];
            int hl = snprintf(head, sizeof head, "%d ", len);
            bh_buf_add(&b->text, head, (size_t)hl);
        }
        b->ts_off[i] = b->text.len + strlen("<14>1 2023-11-14T22:13:20.");
        bh_buf_add(&b->text, line, (size_t)len);
        if (!is_octet)
            bh_buf_add(&b->text, "\n", 1);
    }
    b->msg_off[n] = b->text.len;
}

/* The fraction of message i is (base + i) mod 10^9, counted up in place
 * (carries are rare) rather than formatted per message: the client's CPU
 * is shared with the daemon it measures, as in ingest_bench. */
static void set_ts(struct block *b, uint64_t base)
{
    char tmp[16];
    snprintf(tmp, sizeof tmp, "%0*" PRIu64, TS_FRAC, base % 1000000000u);
    for (size_t i = 0; i < b->n; i++) {
        memcpy(b->text.d + b->ts_off[i], tmp, TS_FRAC);
        for (int d = TS_FRAC - 1; d >= 0 && ++tmp[d] > '9'; d--)
            tmp[d] = '0';
    }
}

struct shared {
    const struct opts *o;
    atomic_uint_fast64_t next_block;
    uint64_t blocks;
    atomic_uint_fast64_t sent, bytes;
    double deadline;
};

struct worker {
    struct shared *sh;
    int id;
    char err[128];
};

static int connect_tcp(int port)
{
    struct bh_conn c;
    bh_init(&c, port, 30);
    if (bh_connect(&c) != 0)
        return -1;
    int fd = c.fd;
    c.fd = -1;
    bh_free(&c);
    return fd;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct opts *o = sh->o;
    int fd = connect_tcp(o->port);
    if (fd < 0) {
        snprintf(w->err, sizeof w->err, "cannot connect to 127.0.0.1:%d", o->port);
        return NULL;
    }
    struct block b;
    make_block(&b, o->batch, 7 + (uint64_t)w->id, o->is_octet, o->senders ? (unsigned)w->id : 0,
               o->senders ? (unsigned)o->conns : 1);
    for (;;) {
        uint64_t k = atomic_fetch_add(&sh->next_block, 1);
        if (k >= sh->blocks || bh_now() > sh->deadline)
            break;
        size_t n = o->batch;
        if ((k + 1) * o->batch > o->events)
            n = (size_t)(o->events - k * o->batch);
        set_ts(&b, k * o->batch);
        size_t len = b.msg_off[n];
        struct iovec iov = {b.text.d, len};
        if (bh_writev_all(fd, &iov, 1) != 0) {
            snprintf(w->err, sizeof w->err, "write failed after %" PRIu64 " events",
                     (uint64_t)atomic_load(&sh->sent));
            break;
        }
        atomic_fetch_add(&sh->sent, n);
        atomic_fetch_add(&sh->bytes, len);
    }
    close(fd);
    free(b.text.d);
    free(b.ts_off);
    free(b.msg_off);
    return NULL;
}

/* logbucket_syslog_rows_total{transport="tcp"} of the server, or -1. */
static int64_t rows_written(int http_port)
{
    struct bh_conn c;
    bh_init(&c, http_port, 10);
    static const char req[] =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    struct bh_buf body = {0};
    struct bh_resp r = {0};
    r.keep = &body;
    int64_t v = -1;
    if (bh_roundtrip(&c, req, sizeof req - 1, NULL, 0, &r) == 0 && r.status == 200 && body.d) {
        bh_buf_add(&body, "", 1);
        const char *key = "logbucket_syslog_rows_total{transport=\"tcp\"} ";
        const char *p = strstr(body.d, key);
        if (p)
            v = strtoll(p + strlen(key), NULL, 10);
    }
    free(body.d);
    bh_free(&c);
    return v;
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
        const char *p = strrchr(line, ')');
        if (p)
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
    }
    fclose(f);
    return ut + st;
}

/* Waits until the server has used no CPU for a second (its background
 * flushes and compactions are done), 60 s at most; its CPU ticks then. */
static unsigned long long settle(int pid, double *waited)
{
    double t0 = bh_now();
    unsigned long long last = proc_ticks(pid);
    while (bh_now() - t0 < 60) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        unsigned long long cur = proc_ticks(pid);
        if (cur == last)
            break;
        last = cur;
    }
    *waited = bh_now() - t0;
    return last;
}

static int run(const struct opts *o)
{
    struct shared sh;
    memset(&sh, 0, sizeof sh);
    sh.o = o;
    sh.blocks = (o->events + o->batch - 1) / o->batch;
    int64_t rows0 = rows_written(o->http_port);
    if (rows0 < 0) {
        fprintf(stderr,
                "syslog_bench: no logbucket_syslog_rows_total at 127.0.0.1:%d/metrics "
                "(is syslog_tcp_listen set?)\n",
                o->http_port);
        return 1;
    }
    unsigned long long ticks0 = o->server_pid > 0 ? proc_ticks(o->server_pid) : 0;
    double t0 = bh_now();
    sh.deadline = t0 + o->duration;
    struct worker *ws = calloc((size_t)o->conns, sizeof *ws);
    pthread_t *th = calloc((size_t)o->conns, sizeof *th);
    for (int i = 0; i < o->conns; i++) {
        ws[i].sh = &sh;
        ws[i].id = i;
        pthread_create(&th[i], NULL, worker_main, &ws[i]);
    }
    for (int i = 0; i < o->conns; i++) {
        pthread_join(th[i], NULL);
        if (ws[i].err[0])
            fprintf(stderr, "conn %d: %s\n", i, ws[i].err);
    }
    double t_sent = bh_now() - t0;
    uint64_t sent = atomic_load(&sh.sent);
    /* until the server has written every event (bounded by the duration);
     * polled every 5 ms, so that the clock stops at most that late (it
     * polled every 50 ms before 2026-11-29: 2.5% of a 1 s run on average) */
    int64_t rows = rows0;
    while (bh_now() < t0 + o->duration + 30) {
        rows = rows_written(o->http_port);
        if (rows >= rows0 + (int64_t)sent)
            break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    double el = bh_now() - t0;
    unsigned long long ticks1 = o->server_pid > 0 ? proc_ticks(o->server_pid) : 0;
    uint64_t stored = rows > rows0 ? (uint64_t)(rows - rows0) : 0;
    printf("%-8s %5s %6s %10s %10s %7s %9s %9s\n", "mode", "conns", "secs", "sent", "stored",
           "MB/s", "events/s", "cpu us/ev");
    double cpu_us =
        o->server_pid > 0 && stored
            ? (double)(ticks1 - ticks0) / (double)sysconf(_SC_CLK_TCK) * 1e6 / (double)stored
            : 0;
    printf("%-8s %5d %6.2f %10" PRIu64 " %10" PRIu64 " %7.1f %9.0f %9.3f\n",
           o->is_octet  ? "syslog-o"
           : o->senders ? "syslog-s"
                        : "syslog",
           o->conns, el, sent, stored, (double)atomic_load(&sh.bytes) / el / 1e6,
           (double)stored / el, cpu_us);
    printf("(client wrote its bytes in %.2f s; events/s counts rows written by the server)\n",
           t_sent);
    if (o->server_pid > 0 && stored) {
        double waited;
        unsigned long long ticks2 = settle(o->server_pid, &waited);
        printf("settled (%.0f s later, background idle): server CPU per event %.3f us\n", waited,
               (double)(ticks2 - ticks0) / (double)sysconf(_SC_CLK_TCK) * 1e6 / (double)stored);
    }
    free(ws);
    free(th);
    return stored == sent && sent == o->events ? 0 : 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: syslog_bench --port SYSLOG_TCP_PORT --http-port HTTP_PORT\n"
            "                    [--events N] [--batch N] [--conns N] [--octet] [--senders]\n"
            "                    [--duration SECS] [--server-pid PID]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {0, 8086, 1000000, 5000, 4, false, false, 120, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--octet")) {
            o.is_octet = true;
            continue;
        }
        if (!strcmp(a, "--senders")) {
            o.senders = true;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--port"))
            o.port = atoi(v);
        else if (!strcmp(a, "--http-port"))
            o.http_port = atoi(v);
        else if (!strcmp(a, "--events"))
            o.events = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--batch"))
            o.batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--conns"))
            o.conns = atoi(v);
        else if (!strcmp(a, "--duration"))
            o.duration = atof(v);
        else if (!strcmp(a, "--server-pid"))
            o.server_pid = atoi(v);
        else
            usage();
    }
    if (o.port <= 0 || o.port >= 65536 || o.conns < 1 || o.conns > 256 || !o.batch ||
        o.batch > 1000000 || !o.events || o.events >= 1000000000ULL)
        usage();
    return run(&o);
}
