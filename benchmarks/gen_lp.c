/* gen_lp: deterministic dataset generator for benchmarks/compare.
 *
 *   gen_lp [--kind metrics|logs] [--events N] [--hosts H] [--names E]
 *          [--span SECONDS] [--end NS] [--seed S] [--out FILE] [--tsv-out FILE]
 *       Writes N events of InfluxDB line protocol, one per line, in time
 *       order: E event names (the measurements), H hosts (tag host), a float
 *       field `value`, an int field `code` and a string field `msg`.
 *       Timestamps (ns) are distinct and spread over the SPAN seconds that
 *       end at NS (default: now), so no two events share a key in any of the
 *       compared stores. Same arguments, same bytes.
 *       --kind metrics (the default): `msg` is a ~100-byte access-log-like
 *       string. --kind logs: `msg` is a web or application log line of
 *       bench_logmsg.h with the search terms at fixed rates (a rare word in
 *       0.1% of rows, a common word in 3%, a substring in 1%), `value` a
 *       latency in ms and `code` a status.
 *       --tsv-out also writes the same rows as TAB-separated values for
 *       ClickHouse, columns event, host, ts, value, code, msg; --jsonl-out
 *       as JSON lines for logbucket's /api/v1/ingest?format=jsonl, one
 *       object a line: {"ts":NS,"host":H,"event":NAME,"value":F,"code":I,
 *       "msg":S} (value always with a decimal point, so it stays a float).
 *
 *   gen_lp --terms
 *       Prints the search terms of --kind logs, "rare<TAB>WORD",
 *       "common<TAB>WORD", "substring<TAB>TEXT", one a line.
 *
 *   gen_lp --plan K [--hosts H] [--names E] [--span S] [--end NS] [--seed S]
 *       Prints K query parameter lines "host<TAB>event<TAB>start_ns<TAB>end_ns"
 *       (a random host, a random event name and a random one-hour window
 *       inside the span), the same for every target.
 *
 *   gen_lp --raw FILE [--events N] [--raw-host H] [--raw-event E] [--span S]
 *          [--end NS] --out LPFILE --raw-out CLEANFILE [--tsv-out TSVFILE]
 *       Real log lines: writes at most N non-empty lines of FILE (trailing \r
 *       removed) to CLEANFILE for /api/v1/ingest, and the same lines as line
 *       protocol `E,host=H msg="LINE" TS` (distinct, increasing TS) to LPFILE
 *       for the peers (and as TSV rows E, H, TS, 0, 0, LINE to TSVFILE). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_logmsg.h"

static const char *const NAMES[] = {
    "nginx_access",  "nginx_error", "sshd_auth", "kernel_oom", "app_login",
    "app_logout",    "app_error",   "db_slow",   "db_conn",    "cache_miss",
    "cache_evict",   "queue_push",  "queue_pop", "cron_run",   "dns_lookup",
    "tls_handshake", "disk_io",     "gc_pause",  "http_5xx",   "deploy",
};
#define NNAMES (sizeof(NAMES) / sizeof(NAMES[0]))

static const char *const METHODS[] = {"GET", "GET", "GET", "POST", "PUT", "DELETE"};
static const char *const PATHS[] = {"/api/v1/items",  "/api/v1/users", "/api/v2/orders",
                                    "/static/app.js", "/login",        "/healthz"};
static const char *const AGENTS[] = {"curl/8.5.0", "Mozilla/5.0", "python-requests/2.31",
                                     "Go-http-client/1.1"};
static const int CODES[] = {200, 200, 200, 200, 200, 201, 204, 301, 304, 400, 404, 500, 503};

struct opts {
    long long events;
    int hosts;
    int names;
    long long span_s;
    int64_t end_ns;
    uint64_t seed;
    const char *out;
    long long plan;
    const char *raw;
    const char *raw_out;
    const char *raw_host;
    const char *raw_event;
    bool logs;
    const char *tsv_out;
    const char *jsonl_out;
    bool terms;
};

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void name_of(int i, char *out, size_t n)
{
    if ((size_t)i < NNAMES)
        snprintf(out, n, "%s", NAMES[i]);
    else
        snprintf(out, n, "ev_%03d", i);
}

static void usage(void)
{
    fprintf(stderr, "usage: gen_lp [--events N] [--hosts H] [--names E] [--span SECONDS] "
                    "[--end NS] [--seed S] [--out FILE]\n"
                    "       gen_lp --kind logs [same options] [--tsv-out FILE] "
                    "[--jsonl-out FILE]\n"
                    "       gen_lp --terms\n"
                    "       gen_lp --plan K [same options]\n"
                    "       gen_lp --raw FILE [--events N] [--raw-host H] [--raw-event E] "
                    "--out LPFILE --raw-out CLEANFILE\n");
    exit(2);
}

static FILE *open_out(const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gen_lp: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    static char vbuf[1 << 20];
    setvbuf(f, vbuf, _IOFBF, sizeof(vbuf));
    return f;
}

static int close_out(FILE *f, const char *path)
{
    if (fflush(f) != 0 || ferror(f) || (f != stdout && fclose(f) != 0)) {
        fprintf(stderr, "gen_lp: writing %s failed\n", path ? path : "stdout");
        return 2;
    }
    return 0;
}

/* Writes s to f with each '"' and '\\' escaped by a backslash (a line
 * protocol string field). */
static void put_lp_string(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
}

/* Writes n bytes of s to f as a TabSeparated value (ClickHouse's escapes). */
static void put_tsv_string(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '\\': fputs("\\\\", f); break;
        case '\t': fputs("\\t", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\0': fputs("\\0", f); break;
        default: fputc(s[i], f);
        }
    }
}

/* Writes s to f as a JSON string, quotes included: '"' and '\\' escaped,
 * control bytes as \n, \t, \r or \u00XX; other bytes as they are (the
 * messages are ASCII, so valid UTF-8). */
static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

/* An extra output file (--tsv-out, --jsonl-out), or NULL when not asked
 * for; exits on failure. */
static FILE *open_extra(const char *path)
{
    if (!path)
        return NULL;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gen_lp: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return f;
}

static int close_extra(FILE *f, const char *path)
{
    if (f && (fflush(f) != 0 || ferror(f) || fclose(f) != 0)) {
        fprintf(stderr, "gen_lp: writing %s failed\n", path);
        return 2;
    }
    return 0;
}

static int gen_dataset(const struct opts *o)
{
    FILE *f = open_out(o->out);
    FILE *tsv = open_extra(o->tsv_out);
    FILE *jsonl = open_extra(o->jsonl_out);
    int64_t span_ns = (int64_t)o->span_s * 1000000000LL;
    int64_t start = o->end_ns - span_ns;
    int64_t step = span_ns / o->events;
    uint64_t s = o->seed;
    char name[32], msg[512];
    unsigned long long bytes = 0;
    for (long long i = 0; i < o->events; i++) {
        int64_t ts = start + i * step + (int64_t)(rng(&s) % (uint64_t)step);
        int host = (int)(rng(&s) % (uint64_t)o->hosts);
        int ev = (int)(rng(&s) % (uint64_t)o->names);
        name_of(ev, name, sizeof(name));
        uint64_t r = rng(&s);
        double value = (double)(r % 100000) / 100.0;
        int code = CODES[(r >> 17) % (sizeof(CODES) / sizeof(CODES[0]))];
        uint64_t r2 = rng(&s);
        if (o->logs) {
            /* the metrics kind's bytes stay as they were: its own draws only */
            lm_message(rng(&s), r2, ev, code, value, msg, sizeof(msg));
        } else {
            snprintf(msg, sizeof(msg),
                     "%s %s/%u?page=%u HTTP/1.1 %d rt=0.%04u ua=%s upstream=10.0.%u.%u:8080 "
                     "req=%08x",
                     METHODS[r2 % 6], PATHS[(r2 >> 3) % 6], (unsigned)((r2 >> 8) % 100000),
                     (unsigned)((r2 >> 25) % 20), code, (unsigned)((r2 >> 30) % 10000),
                     AGENTS[(r2 >> 44) % 4], (unsigned)((r2 >> 46) % 8),
                     (unsigned)((r2 >> 49) % 250), (unsigned)(r >> 32));
        }
        int n = fprintf(f, "%s,host=host-%04d value=%.2f,code=%di,msg=\"", name, host, value, code);
        if (n < 0)
            break;
        put_lp_string(f, msg);
        int m = fprintf(f, "\" %" PRId64 "\n", ts);
        if (m < 0)
            break;
        bytes += (unsigned long long)n + (unsigned long long)m + strlen(msg);
        if (tsv) {
            fprintf(tsv, "%s\thost-%04d\t%" PRId64 "\t%.2f\t%d\t", name, host, ts, value, code);
            put_tsv_string(tsv, msg, strlen(msg));
            fputc('\n', tsv);
        }
        if (jsonl) {
            /* the host and the name are plain ASCII: no escapes needed */
            fprintf(jsonl,
                    "{\"ts\":%" PRId64 ",\"host\":\"host-%04d\",\"event\":\"%s\",\"value\":%.2f,"
                    "\"code\":%d,\"msg\":",
                    ts, host, name, value, code);
            put_json_string(jsonl, msg);
            fputs("}\n", jsonl);
        }
    }
    fprintf(stderr, "gen_lp: %lld events, %llu bytes (%.1f bytes/event)\n", o->events, bytes,
            (double)bytes / (double)o->events);
    int rc = close_out(f, o->out);
    if (close_extra(tsv, o->tsv_out))
        rc = 2;
    if (close_extra(jsonl, o->jsonl_out))
        rc = 2;
    return rc;
}

static int gen_plan(const struct opts *o)
{
    FILE *f = open_out(o->out);
    int64_t span_ns = (int64_t)o->span_s * 1000000000LL;
    int64_t hour = 3600LL * 1000000000LL;
    int64_t win = span_ns < hour ? span_ns : hour;
    int64_t start = o->end_ns - span_ns;
    uint64_t s = o->seed ^ 0x5eed0f9a11ULL;
    char name[32];
    for (long long i = 0; i < o->plan; i++) {
        int host = (int)(rng(&s) % (uint64_t)o->hosts);
        name_of((int)(rng(&s) % (uint64_t)o->names), name, sizeof(name));
        /* whole seconds, so every target's time syntax can express it */
        int64_t room_s = (span_ns - win) / 1000000000LL;
        int64_t off = room_s > 0 ? (int64_t)(rng(&s) % (uint64_t)(room_s + 1)) : 0;
        int64_t t0 = start + off * 1000000000LL;
        fprintf(f, "host-%04d\t%s\t%" PRId64 "\t%" PRId64 "\n", host, name, t0, t0 + win);
    }
    return close_out(f, o->out);
}

static int gen_raw(const struct opts *o)
{
    FILE *in = fopen(o->raw, "r");
    if (!in) {
        fprintf(stderr, "gen_lp: %s: %s\n", o->raw, strerror(errno));
        return 2;
    }
    if (!o->out || !o->raw_out)
        usage();
    FILE *lp = open_out(o->out);
    FILE *clean = fopen(o->raw_out, "w");
    if (!clean) {
        fprintf(stderr, "gen_lp: %s: %s\n", o->raw_out, strerror(errno));
        return 2;
    }
    FILE *tsv = o->tsv_out ? fopen(o->tsv_out, "w") : NULL;
    if (o->tsv_out && !tsv) {
        fprintf(stderr, "gen_lp: %s: %s\n", o->tsv_out, strerror(errno));
        return 2;
    }
    /* First pass over at most --events lines to count them, so that the
     * timestamps spread over the span like the generated dataset's. */
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long long count = 0;
    while (count < o->events && (n = getline(&line, &cap, in)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n > 0)
            count++;
    }
    if (count == 0) {
        fprintf(stderr, "gen_lp: %s has no non-empty lines\n", o->raw);
        return 2;
    }
    rewind(in);
    int64_t span_ns = (int64_t)o->span_s * 1000000000LL;
    int64_t step = span_ns / count > 0 ? span_ns / count : 1;
    int64_t ts = o->end_ns - step * count;
    long long i = 0;
    while (i < count && (n = getline(&line, &cap, in)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n == 0)
            continue;
        fwrite(line, 1, (size_t)n, clean);
        fputc('\n', clean);
        fprintf(lp, "%s,host=%s msg=\"", o->raw_event, o->raw_host);
        for (ssize_t k = 0; k < n; k++) {
            char ch = line[k];
            if (ch == '"' || ch == '\\')
                fputc('\\', lp);
            fputc(ch, lp);
        }
        fprintf(lp, "\" %" PRId64 "\n", ts);
        if (tsv) {
            /* value and code are 0: a raw line has only msg */
            fprintf(tsv, "%s\t%s\t%" PRId64 "\t0\t0\t", o->raw_event, o->raw_host, ts);
            put_tsv_string(tsv, line, (size_t)n);
            fputc('\n', tsv);
        }
        ts += step;
        i++;
    }
    free(line);
    fclose(in);
    fprintf(stderr, "gen_lp: %lld raw lines\n", i);
    int rc = close_out(lp, o->out);
    if (fclose(clean) != 0)
        rc = 2;
    if (tsv && fclose(tsv) != 0)
        rc = 2;
    return rc;
}

static long long num(const char *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end)
        usage();
    return x;
}

static bool plain_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

int main(int argc, char **argv)
{
    struct opts o = {.events = 2000000,
                     .hosts = 1000,
                     .names = 20,
                     .span_s = 86400,
                     .end_ns = 0,
                     .seed = 1,
                     .raw_host = "raw-host",
                     .raw_event = "raw_log"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--terms")) {
            o.terms = true;
            continue;
        }
        if (!v)
            usage();
        if (!strcmp(a, "--events"))
            o.events = num(v);
        else if (!strcmp(a, "--hosts"))
            o.hosts = (int)num(v);
        else if (!strcmp(a, "--names"))
            o.names = (int)num(v);
        else if (!strcmp(a, "--span"))
            o.span_s = num(v);
        else if (!strcmp(a, "--end"))
            o.end_ns = (int64_t)num(v);
        else if (!strcmp(a, "--seed"))
            o.seed = (uint64_t)num(v);
        else if (!strcmp(a, "--out"))
            o.out = v;
        else if (!strcmp(a, "--plan"))
            o.plan = num(v);
        else if (!strcmp(a, "--raw"))
            o.raw = v;
        else if (!strcmp(a, "--raw-out"))
            o.raw_out = v;
        else if (!strcmp(a, "--raw-host"))
            o.raw_host = v;
        else if (!strcmp(a, "--raw-event"))
            o.raw_event = v;
        else if (!strcmp(a, "--tsv-out"))
            o.tsv_out = v;
        else if (!strcmp(a, "--jsonl-out"))
            o.jsonl_out = v;
        else if (!strcmp(a, "--kind") && (!strcmp(v, "logs") || !strcmp(v, "metrics")))
            o.logs = !strcmp(v, "logs");
        else
            usage();
        i++;
    }
    if (o.events < 1 || o.hosts < 1 || o.hosts > 10000 || o.names < 1 || o.names > 1000 ||
        o.span_s < 1 || o.span_s > 10LL * 365 * 86400 || o.plan < 0 ||
        o.events > o.span_s * 1000000000LL || !plain_name(o.raw_host) || !plain_name(o.raw_event))
        usage();
    if (o.terms) {
        printf("rare\t%s\ncommon\t%s\nsubstring\t%s\n", LM_RARE, LM_COMMON, LM_SUBSTR);
        return 0;
    }
    if (o.end_ns == 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        o.end_ns = (int64_t)t.tv_sec * 1000000000LL;
    }
    if (o.plan > 0)
        return gen_plan(&o);
    if (o.raw)
        return gen_raw(&o);
    return gen_dataset(&o);
}
