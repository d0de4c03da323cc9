/* Latency histograms (base/histogram.h). */
#include "base/histogram.h"

static const double bounds[HISTOGRAM_BOUNDS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                0.1,    0.25,  0.5,    1,     2.5,  5,     10};

void histogram_record(struct histogram *h, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    atomic_fetch_add(&h->sum_ns, (uint64_t)ns);
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < HISTOGRAM_BOUNDS && s > bounds[i])
        i++;
    atomic_fetch_add(&h->buckets[i], 1);
}

void histogram_write(struct histogram *h, const char *name, const char *help, struct buf *out)
{
    buf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (size_t i = 0; i <= HISTOGRAM_BOUNDS; i++) {
        cum += atomic_load(&h->buckets[i]);
        if (i < HISTOGRAM_BOUNDS)
            buf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
                       (unsigned long long)cum);
        else
            buf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)cum);
    }
    buf_printf(out, "%s_sum %.9f\n%s_count %llu\n", name, (double)atomic_load(&h->sum_ns) / 1e9,
               name, (unsigned long long)cum);
}
