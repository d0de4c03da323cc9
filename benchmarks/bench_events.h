/* The generator of ingest_bench's events, shared by the benchmarks that
 * send or build the same events (ingest_bench, push_bench, syslog_bench,
 * wfilter_bench), so that their figures compare: splitmix64, and the
 * words a ~100-byte message is drawn from. Header-only (static inline),
 * like bench_http.h. */
#ifndef BENCH_EVENTS_H
#define BENCH_EVENTS_H

#include <stdint.h>

static inline uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define BENCH_NWORDS 16
static const char *const bench_words[BENCH_NWORDS] = {"GET",           "POST",
                                                      "/api/v1/items", "/static/app.js",
                                                      "200",           "404",
                                                      "500",           "upstream",
                                                      "timeout",       "user=alice",
                                                      "user=bob",      "cache=hit",
                                                      "cache=miss",    "bytes=5123",
                                                      "rt=0.031",      "ok"};

#endif
