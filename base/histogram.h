/* A latency histogram for /metrics: lock-free counts (C11 atomics) in
 * Prometheus' default-like bounds from 0.5 ms to 10 s, written as one
 * Prometheus histogram family in seconds. */
#ifndef LB_HISTOGRAM_H
#define LB_HISTOGRAM_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/buf.h"

#define HISTOGRAM_BOUNDS 14

struct histogram {
    atomic_uint_fast64_t buckets[HISTOGRAM_BOUNDS + 1]; /* the last one: over 10 s */
    atomic_uint_fast64_t sum_ns;
};

/* Counts one duration (negative counts as 0). Any thread. */
void histogram_record(struct histogram *h, int64_t ns);
/* Appends "# HELP name help", "# TYPE name histogram", the cumulative
 * name_bucket{le="..."} lines, name_sum (seconds) and name_count. */
void histogram_write(struct histogram *h, const char *name, const char *help, struct buf *out);

#endif
