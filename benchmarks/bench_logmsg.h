/* Log messages for the benchmark datasets (gen_lp --kind logs, query_bench):
 * web and application log lines from a few templates, with three search
 * terms at fixed rates, so that every target gets the same text and the
 * same answers:
 *   LM_RARE   "segfault"      in 0.1% of rows, always a whole lower-case word;
 *   LM_COMMON "timeout"       in 3% of rows, a whole word ("Timeout" in a third);
 *   LM_SUBSTR "reset by peer" in 1% of rows.
 * No other line holds any of them in any case, as a word or inside one, so
 * a word search, a case-insensitive regex and a substring test agree.
 * A message has no TAB, newline or backslash; it may hold '"'.
 * Header-only (static inline), like bench_http.h. */
#ifndef BENCH_LOGMSG_H
#define BENCH_LOGMSG_H

#include <stdint.h>
#include <stdio.h>

#define LM_RARE "segfault"
#define LM_COMMON "timeout"
#define LM_SUBSTR "reset by peer"
/* rates per 100,000 rows */
#define LM_RARE_PER_100K 100
#define LM_COMMON_PER_100K 3000
#define LM_SUBSTR_PER_100K 1000

static const int LM_CODES[] = {200, 200, 200, 200, 200, 201, 204, 301, 304, 400, 404, 500, 503};
static const char *const LM_METHODS[] = {"GET", "GET", "GET", "POST", "PUT", "DELETE"};
static const char *const LM_AGENTS[] = {"Mozilla/5.0 (X11; Linux x86_64)", "curl/8.5.0",
                                        "python-requests/2.31.0", "Go-http-client/1.1",
                                        "kube-probe/1.28"};
/* the normal line kind of each of the first 20 event names (gen_lp's) */
static const unsigned char LM_KIND_OF_EVENT[] = {0, 6, 1, 4, 1, 9, 5, 3, 3, 2,
                                                 2, 9, 9, 7, 6, 8, 4, 4, 0, 7};

static inline void lm_path(uint64_t r, char *out, size_t cap)
{
    switch (r % 7) {
    case 0: snprintf(out, cap, "/api/v1/items/%u", (unsigned)(r >> 8) % 100000); break;
    case 1: snprintf(out, cap, "/api/v1/users/%u", (unsigned)(r >> 8) % 50000); break;
    case 2:
        snprintf(out, cap, "/api/v2/orders/%u?page=%u", (unsigned)(r >> 8) % 100000,
                 (unsigned)(r >> 40) % 20);
        break;
    case 3: snprintf(out, cap, "/static/app.%08x.js", (unsigned)(r >> 8)); break;
    case 4: snprintf(out, cap, "/login"); break;
    case 5: snprintf(out, cap, "/healthz"); break;
    default: snprintf(out, cap, "/checkout/cart"); break;
    }
}

/* Writes the message of one row into out (NUL-terminated, cut at cap):
 * r1 and r2 are random, event the event index, code and value the row's
 * status code and latency in ms (some lines quote them). Returns the length
 * snprintf gives. */
static inline int lm_message(uint64_t r1, uint64_t r2, int event, int code, double value, char *out,
                             size_t cap)
{
    unsigned a = (unsigned)(r2 >> 8) % 250, b = (unsigned)(r2 >> 16) % 250;
    unsigned c = (unsigned)(r2 >> 24) % 250, id = (unsigned)(r2 >> 32);
    unsigned pick = (unsigned)(r1 % 100000);
    unsigned variant = (unsigned)(r1 >> 20) % 3;
    char path[64];
    lm_path(r2 >> 3, path, sizeof(path));
    if (pick < LM_RARE_PER_100K)
        return snprintf(out, cap,
                        "php-fpm[%u]: segfault at %08x ip 00007f%06x sp 00007ffd%04x error 4 in "
                        "libc.so.6[7f%05x+195000]",
                        id % 60000 + 1000, id, a * b, c * 97, id >> 12);
    pick -= LM_RARE_PER_100K;
    if (pick < LM_COMMON_PER_100K) {
        if (variant == 0)
            return snprintf(out, cap,
                            "upstream timeout after 30s while reading response header from "
                            "upstream, client: 10.%u.%u.%u, request: \"GET %s HTTP/1.1\"",
                            a, b, c, path);
        if (variant == 1)
            return snprintf(out, cap,
                            "Timeout waiting for connection from pool db-main after 5000 ms "
                            "(active=%u, idle=0)",
                            a % 64 + 1);
        return snprintf(out, cap, "dial tcp 10.0.%u.%u:5432: i/o timeout", a, b);
    }
    pick -= LM_COMMON_PER_100K;
    if (pick < LM_SUBSTR_PER_100K) {
        if (variant == 0)
            return snprintf(out, cap,
                            "write tcp 10.0.%u.%u:8080->10.1.%u.%u:%u: write: connection reset by "
                            "peer",
                            a, b, c, a, id % 30000 + 32768);
        return snprintf(out, cap,
                        "recv() failed (104: Connection reset by peer) while reading response "
                        "header from upstream, client: 10.%u.%u.%u, upstream: "
                        "\"http://10.0.%u.%u:8080%s\"",
                        a, b, c, b, c, path);
    }
    unsigned kind =
        (unsigned)event < sizeof(LM_KIND_OF_EVENT) ? LM_KIND_OF_EVENT[event] : (unsigned)event % 10;
    switch (kind) {
    case 0:
        return snprintf(out, cap, "10.%u.%u.%u - - \"%s %s HTTP/1.1\" %d %u \"-\" \"%s\" rt=%.3f",
                        a, b, c, LM_METHODS[(r2 >> 40) % 6], path, code, id % 50000 + 120,
                        LM_AGENTS[(r2 >> 44) % 5], value / 1000.0);
    case 1:
        return snprintf(out, cap,
                        "user u%05u logged in from 10.%u.%u.%u via password, session %08x",
                        id % 100000, a, b, c, id);
    case 2:
        return snprintf(out, cap, "cache miss for key session:%08x, loaded from backend in %.1f ms",
                        id, value);
    case 3:
        return snprintf(out, cap,
                        "slow query (%.0f ms): SELECT id, total FROM orders WHERE customer_id = %u",
                        value, id % 1000000);
    case 4:
        return snprintf(out, cap, "GC pause %.1f ms, heap %u MB -> %u MB", value / 10.0,
                        a * 4 + 512, b + 256);
    case 5:
        return snprintf(out, cap,
                        "retrying request to payments service, attempt %u of 5 after status %d",
                        a % 5 + 1, code);
    case 6:
        return snprintf(out, cap, "health check passed for upstream 10.0.%u.%u:8080 in %.1f ms", a,
                        b, value);
    case 7:
        return snprintf(out, cap,
                        "scheduled job cleanup_sessions finished, removed %u rows in %.1f ms",
                        id % 10000, value);
    case 8:
        return snprintf(out, cap,
                        "TLS handshake completed with 10.%u.%u.%u: TLSv1.3 TLS_AES_128_GCM_SHA256",
                        a, b, c);
    default:
        return snprintf(out, cap, "request id=%08x method=%s path=%s status=%d duration_ms=%.1f",
                        id, LM_METHODS[(r2 >> 40) % 6], path, code, value);
    }
}

#endif
