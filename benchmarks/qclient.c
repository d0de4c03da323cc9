/* qclient: query-latency client for benchmarks/compare. Sends the requests
 * of a file one after another over one keep-alive HTTP/1.1 connection to
 * 127.0.0.1:PORT, reads every answer whole, and prints latency percentiles.
 *
 *   qclient --port 8086 --file reqs.txt [--warmup N] [--timeout S]
 *           [--max-seconds S] [--show N] [--header 'Name: value']...
 *
 * One request per line, fields separated by TABs (no TAB inside a field):
 *
 *   METHOD <TAB> PATH [<TAB> name=value]...
 *
 * Each name=value becomes a URL query parameter; qclient percent-encodes the
 * value, so it may hold spaces, quotes and the like. The name `_body` is
 * the request body instead (sent as text/plain). Empty lines and lines
 * starting with '#' are skipped. For example:
 *
 *   GET	/query	db=bench	q=SELECT count(value) FROM /.*\/
 *   POST	/api/v1/sql	_body=SELECT COUNT(*) FROM bench WHERE ts >= 0
 *
 * The first --warmup requests of the file are sent once untimed first (they
 * are timed again in the main pass). A request answered with a non-2xx
 * status counts as an error and is not in the percentiles; requests not sent
 * because --max-seconds ran out (warm-up included) are "skipped", but the
 * main pass always sends its first request. Prints one line:
 *   n=.. ok=.. errors=.. skipped=.. p50_ms=.. p90_ms=.. p99_ms=.. mean_ms=.. max_ms=..
 *   body_bytes_avg=.. seconds=..
 * Exit status 0 only when every request succeeded. */
#include <stdint.h>

#include "bench_http.h"

struct req {
    char *head;
    size_t hlen;
    char *body;
    size_t blen;
};

struct opts {
    int port;
    const char *file;
    int warmup;
    int timeout_s;
    double max_seconds;
    int show;
    struct bh_buf extra_headers;
};

static void usage(void)
{
    fprintf(stderr, "usage: qclient --port P --file REQS [--warmup N] [--timeout S] "
                    "[--max-seconds S] [--show N] [--header 'K: V']...\n");
    exit(2);
}

static void url_encode(struct bh_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            bh_buf_add(b, &s[i], 1);
        } else {
            char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
            bh_buf_add(b, e, 3);
        }
    }
}

/* Parses one line into a request; returns 0, 1 to skip, -1 if malformed. */
static int parse_line(const struct opts *o, char *line, struct req *r)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    if (n == 0 || line[0] == '#')
        return 1;
    char *save = NULL;
    char *method = strtok_r(line, "\t", &save);
    char *path = strtok_r(NULL, "\t", &save);
    if (!method || !path || path[0] != '/')
        return -1;
    struct bh_buf url = {0}, body = {0};
    bool has_body = false;
    bh_buf_puts(&url, path);
    bool has_q = strchr(path, '?') != NULL;
    for (char *f; (f = strtok_r(NULL, "\t", &save));) {
        char *eq = strchr(f, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        const char *v = eq + 1;
        if (!strcmp(f, "_body")) {
            bh_buf_puts(&body, v);
            has_body = true;
            continue;
        }
        bh_buf_add(&url, has_q ? "&" : "?", 1);
        has_q = true;
        url_encode(&url, f, strlen(f));
        bh_buf_add(&url, "=", 1);
        url_encode(&url, v, strlen(v));
    }
    struct bh_buf h = {0};
    bh_buf_puts(&h, method);
    bh_buf_puts(&h, " ");
    bh_buf_puts(&h, url.d);
    char tmp[256];
    snprintf(tmp, sizeof(tmp),
             " HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: qclient\r\n"
             "Accept: */*\r\n",
             o->port);
    bh_buf_puts(&h, tmp);
    if (o->extra_headers.len)
        bh_buf_add(&h, o->extra_headers.d, o->extra_headers.len);
    if (has_body || strcmp(method, "GET") != 0) {
        snprintf(tmp, sizeof(tmp), "Content-Type: text/plain\r\nContent-Length: %zu\r\n", body.len);
        bh_buf_puts(&h, tmp);
    }
    bh_buf_puts(&h, "\r\n");
    free(url.d);
    r->head = h.d;
    r->hlen = h.len;
    r->body = body.d;
    r->blen = body.len;
    return 0;
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
    struct opts o = {.timeout_s = 60, .max_seconds = 300};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "--port"))
            o.port = atoi(v);
        else if (!strcmp(a, "--file"))
            o.file = v;
        else if (!strcmp(a, "--warmup"))
            o.warmup = atoi(v);
        else if (!strcmp(a, "--timeout"))
            o.timeout_s = atoi(v);
        else if (!strcmp(a, "--max-seconds"))
            o.max_seconds = atof(v);
        else if (!strcmp(a, "--show"))
            o.show = atoi(v);
        else if (!strcmp(a, "--header")) {
            if (strpbrk(v, "\r\n") || !strchr(v, ':'))
                usage();
            bh_buf_puts(&o.extra_headers, v);
            bh_buf_puts(&o.extra_headers, "\r\n");
        } else
            usage();
        i++;
    }
    if (o.port <= 0 || o.port > 65535 || !o.file || o.max_seconds <= 0 || o.warmup < 0)
        usage();

    FILE *f = fopen(o.file, "r");
    if (!f) {
        perror(o.file);
        return 2;
    }
    size_t cap = 256, n = 0;
    struct req *rq = bh_xrealloc(NULL, cap * sizeof(*rq));
    char *line = NULL;
    size_t lcap = 0;
    long lineno = 0;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        if (n == cap) {
            cap *= 2;
            rq = bh_xrealloc(rq, cap * sizeof(*rq));
        }
        int rc = parse_line(&o, line, &rq[n]);
        if (rc < 0) {
            fprintf(stderr, "qclient: %s:%ld: malformed request line\n", o.file, lineno);
            return 2;
        }
        if (rc == 0)
            n++;
    }
    free(line);
    fclose(f);
    if (n == 0) {
        fprintf(stderr, "qclient: no requests in %s\n", o.file);
        return 2;
    }

    struct bh_conn c;
    bh_init(&c, o.port, o.timeout_s);
    struct bh_buf body = {0};
    double *lat = bh_xrealloc(NULL, n * sizeof(double));
    size_t nlat = 0, errors = 0, done = 0, bytes = 0;
    double t_start = bh_now();
    double limit = t_start + o.max_seconds;
    size_t warm = (size_t)o.warmup < n ? (size_t)o.warmup : n;
    for (size_t i = 0; i < warm && bh_now() < limit; i++) {
        struct bh_resp r = {0};
        if (bh_roundtrip(&c, rq[i].head, rq[i].hlen, rq[i].body, rq[i].blen, &r) != 0)
            bh_close(&c);
    }
    double t_main = bh_now();
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && bh_now() > limit) {
            fprintf(stderr, "qclient: --max-seconds reached after %zu of %zu requests\n", i, n);
            break;
        }
        struct bh_resp r = {0};
        body.len = 0;
        if (body.d)
            body.d[0] = '\0';
        r.keep = &body;
        double t0 = bh_now();
        int rc = bh_roundtrip(&c, rq[i].head, rq[i].hlen, rq[i].body, rq[i].blen, &r);
        double dt = bh_now() - t0;
        done++;
        bool ok = rc == 0 && r.status >= 200 && r.status < 300;
        if (ok) {
            lat[nlat++] = dt;
            bytes += r.body_bytes;
        } else {
            errors++;
            if (errors <= 3)
                fprintf(stderr, "qclient: request %zu: %s %d: %.300s\n", i + 1,
                        rc ? "connection failed" : "status", r.status, body.d ? body.d : "");
        }
        if ((int)i < o.show)
            fprintf(stderr, "qclient: request %zu (%d, %zu bytes, %.2f ms): %.400s\n", i + 1,
                    r.status, r.body_bytes, dt * 1e3, body.d ? body.d : "");
    }
    double secs = bh_now() - t_main;
    double sum = 0;
    for (size_t i = 0; i < nlat; i++)
        sum += lat[i];
    qsort(lat, nlat, sizeof(double), cmp_double);
    printf("n=%zu ok=%zu errors=%zu skipped=%zu p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f mean_ms=%.3f "
           "max_ms=%.3f body_bytes_avg=%.0f seconds=%.3f\n",
           done, nlat, errors, n - done, pct(lat, nlat, 0.50) * 1e3, pct(lat, nlat, 0.90) * 1e3,
           pct(lat, nlat, 0.99) * 1e3, nlat ? sum / (double)nlat * 1e3 : 0,
           nlat ? lat[nlat - 1] * 1e3 : 0, nlat ? (double)bytes / (double)nlat : 0, secs);
    for (size_t i = 0; i < n; i++) {
        free(rq[i].head);
        free(rq[i].body);
    }
    free(rq);
    free(lat);
    free(body.d);
    free(o.extra_headers.d);
    bh_free(&c);
    return errors == 0 && done == n ? 0 : 1;
}
