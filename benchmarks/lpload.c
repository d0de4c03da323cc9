/* lpload: replays a pre-generated file of lines (line protocol, or raw log
 * lines) to one HTTP server on 127.0.0.1 as POST bodies of --batch lines over
 * --conns keep-alive connections (one thread each), so that every target of
 * benchmarks/compare gets the same bytes through the same client. Batches
 * are cut up front (and compressed up front with --gzip), so the timed part
 * is only sending and waiting for the answers.
 *
 *   lpload --port 8086 --path '/write?db=bench&precision=ns' --file data.lp \
 *          [--batch 5000] [--conns 4] [--gzip] [--timeout 60] [--max-seconds 900]
 *
 * Prints one line of key=value pairs: lines, batches, bytes (uncompressed
 * body bytes), seconds, events_per_s, mb_per_s, errors, retries (503/429
 * back-pressure answers, sent again after a short sleep), plus the request
 * latency p50/p99 in ms. Exit status 0 only when every batch got a 2xx. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bench_http.h"

struct batch {
    const char *p; /* uncompressed body */
    size_t len;
    size_t lines;
    unsigned char *gz; /* compressed body with --gzip */
    size_t gzlen;
};

struct opts {
    int port;
    const char *path;
    const char *file;
    size_t batch;
    int conns;
    bool gzip;
    int timeout_s;
    double max_seconds;
    const char *content_type;
};

struct shared {
    const struct opts *o;
    struct batch *b;
    size_t nb;
    atomic_size_t next;
    atomic_size_t errors;
    atomic_size_t retries;
    atomic_size_t done_lines;
    atomic_size_t done_batches;
    double t_end_limit;
    double *lat; /* per batch, seconds; -1 if failed */
    atomic_int printed_errors;
};

static void usage(void)
{
    fprintf(stderr,
            "usage: lpload --port P --path '/write?db=D' --file F [--batch 5000] [--conns 4]\n"
            "              [--gzip] [--timeout S] [--max-seconds S] [--content-type T]\n");
    exit(2);
}

static int gzip_body(const char *in, size_t n, unsigned char **out, size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (unsigned char *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    *outlen = cap - z.avail_out;
    return 0;
}

static void *worker(void *arg)
{
    struct shared *s = arg;
    const struct opts *o = s->o;
    struct bh_conn c;
    bh_init(&c, o->port, o->timeout_s);
    struct bh_buf errbody = {0};
    char head[2048];
    for (;;) {
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->nb)
            break;
        if (bh_now() > s->t_end_limit) {
            atomic_fetch_add(&s->errors, 1);
            continue;
        }
        const struct batch *b = &s->b[i];
        const void *body = o->gzip ? (const void *)b->gz : (const void *)b->p;
        size_t blen = o->gzip ? b->gzlen : b->len;
        int hl = snprintf(head, sizeof(head),
                          "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: lpload\r\n"
                          "Content-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
                          o->path, o->port, o->content_type, blen,
                          o->gzip ? "Content-Encoding: gzip\r\n" : "");
        bool ok = false;
        int status = 0;
        /* A batch is sent again when the connection failed (3 tries) or
         * when the server pushed back with 503 or 429 (every 10 ms, ignoring
         * Retry-After, until --max-seconds);
         * its latency runs from the first try to the acknowledgement. */
        double t0 = bh_now();
        for (int attempt = 0, fails = 0; fails < 3 && !ok && attempt < 100000; attempt++) {
            struct bh_resp r = {0};
            errbody.len = 0;
            r.keep = &errbody;
            if (bh_roundtrip(&c, head, (size_t)hl, body, blen, &r) != 0) {
                status = -1;
                fails++;
                usleep(100000);
                continue;
            }
            status = r.status;
            if (r.status >= 200 && r.status < 300) {
                s->lat[i] = bh_now() - t0;
                ok = true;
            } else if ((r.status == 503 || r.status == 429) && bh_now() < s->t_end_limit) {
                atomic_fetch_add(&s->retries, 1);
                usleep(10000); /* fixed and short: measures how soon the server recovers */
                continue;
            }
            break;
        }
        if (ok) {
            atomic_fetch_add(&s->done_lines, b->lines);
            atomic_fetch_add(&s->done_batches, 1);
        } else {
            atomic_fetch_add(&s->errors, 1);
            if (atomic_fetch_add(&s->printed_errors, 1) < 5)
                fprintf(stderr, "lpload: batch %zu: %s %d: %.300s\n", i,
                        status < 0 ? "connection failed" : "status", status,
                        errbody.d ? errbody.d : "");
        }
    }
    free(errbody.d);
    bh_free(&c);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t k = (size_t)(p * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

int main(int argc, char **argv)
{
    struct opts o = {.port = 0,
                     .path = NULL,
                     .file = NULL,
                     .batch = 5000,
                     .conns = 4,
                     .gzip = false,
                     .timeout_s = 60,
                     .max_seconds = 900,
                     .content_type = "text/plain; charset=utf-8"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gzip")) {
            o.gzip = true;
            continue;
        }
        if (!v)
            usage();
        if (!strcmp(a, "--port"))
            o.port = atoi(v);
        else if (!strcmp(a, "--path"))
            o.path = v;
        else if (!strcmp(a, "--file"))
            o.file = v;
        else if (!strcmp(a, "--batch"))
            o.batch = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "--conns"))
            o.conns = atoi(v);
        else if (!strcmp(a, "--timeout"))
            o.timeout_s = atoi(v);
        else if (!strcmp(a, "--max-seconds"))
            o.max_seconds = atof(v);
        else if (!strcmp(a, "--content-type"))
            o.content_type = v;
        else
            usage();
        i++;
    }
    if (o.port <= 0 || o.port > 65535 || !o.path || o.path[0] != '/' || !o.file || o.batch == 0 ||
        o.conns < 1 || o.conns > 256 || o.max_seconds <= 0)
        usage();

    int fd = open(o.file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(o.file);
        return 2;
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        fprintf(stderr, "lpload: %s is empty\n", o.file);
        return 2;
    }
    const char *data = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (data == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    close(fd);

    /* Cut batches at line ends. */
    size_t cap = 1024, nb = 0, total_lines = 0;
    struct batch *b = bh_xrealloc(NULL, cap * sizeof(*b));
    const char *p = data, *end = data + size;
    while (p < end) {
        const char *q = p;
        size_t lines = 0;
        while (q < end && lines < o.batch) {
            const char *nl = memchr(q, '\n', (size_t)(end - q));
            q = nl ? nl + 1 : end;
            lines++;
        }
        if (nb == cap) {
            cap *= 2;
            b = bh_xrealloc(b, cap * sizeof(*b));
        }
        b[nb] = (struct batch){.p = p, .len = (size_t)(q - p), .lines = lines};
        if (o.gzip && gzip_body(p, b[nb].len, &b[nb].gz, &b[nb].gzlen) != 0) {
            fprintf(stderr, "lpload: gzip failed\n");
            return 2;
        }
        total_lines += lines;
        nb++;
        p = q;
    }

    struct shared s = {.o = &o, .b = b, .nb = nb};
    atomic_init(&s.next, 0);
    atomic_init(&s.errors, 0);
    atomic_init(&s.retries, 0);
    atomic_init(&s.done_lines, 0);
    atomic_init(&s.done_batches, 0);
    atomic_init(&s.printed_errors, 0);
    s.lat = bh_xrealloc(NULL, nb * sizeof(double));
    for (size_t i = 0; i < nb; i++)
        s.lat[i] = -1;
    pthread_t th[256];
    double t0 = bh_now();
    s.t_end_limit = t0 + o.max_seconds;
    int started = 0;
    for (int i = 0; i < o.conns; i++) {
        if (pthread_create(&th[i], NULL, worker, &s) != 0) {
            fprintf(stderr, "lpload: pthread_create failed\n");
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    double secs = bh_now() - t0;

    size_t nlat = 0;
    for (size_t i = 0; i < nb; i++)
        if (s.lat[i] >= 0)
            s.lat[nlat++] = s.lat[i];
    qsort(s.lat, nlat, sizeof(double), cmp_double);
    size_t done = atomic_load(&s.done_lines);
    size_t errors = atomic_load(&s.errors);
    size_t sent_bytes = 0, gz_bytes = 0;
    for (size_t i = 0; i < nb; i++) {
        sent_bytes += b[i].len;
        gz_bytes += b[i].gzlen;
    }
    printf("lines=%zu acked_lines=%zu batches=%zu bytes=%zu wire_bytes=%zu seconds=%.3f "
           "events_per_s=%.0f mb_per_s=%.2f errors=%zu retries=%zu req_p50_ms=%.2f "
           "req_p99_ms=%.2f\n",
           total_lines, done, nb, sent_bytes, o.gzip ? gz_bytes : sent_bytes, secs,
           (double)done / secs, (double)sent_bytes / secs / 1e6, errors, atomic_load(&s.retries),
           pct(s.lat, nlat, 0.50) * 1e3, pct(s.lat, nlat, 0.99) * 1e3);
    for (size_t i = 0; i < nb; i++)
        free(b[i].gz);
    free(b);
    free(s.lat);
    munmap((void *)(uintptr_t)data, size);
    return errors == 0 && done == total_lines ? 0 : 1;
}
