/* Query metrics: counters by plan and outcome, rows scanned and returned,
 * and a latency histogram. Lock-free (C11 atomics): updated once per
 * statement, read by /metrics. */
#include <stdatomic.h>

#include "query/query.h"
#include "query/query_int.h"

#define NPLANS 6 /* GET SCAN INDEX FULL admin none */
#define NOUT 4   /* ok error refused invalid */

static const char *plan_labels[NPLANS] = {"get", "scan", "index", "full", "admin", "none"};
static const char *out_labels[NOUT] = {"ok", "error", "refused", "invalid"};
static const double bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                0.1,    0.25,  0.5,    1,     2.5,  5,     10};
#define NBOUNDS (sizeof(bounds) / sizeof(bounds[0]))

static atomic_uint_fast64_t total[NPLANS][NOUT];
static atomic_uint_fast64_t scanned, returned;
static atomic_uint_fast64_t hist[NBOUNDS + 1];
static atomic_uint_fast64_t sum_ns;

void query_metrics_record(int plan, int outcome, uint64_t rows_scanned, uint64_t rows_returned,
                          int64_t ns)
{
    if (plan < 0 || plan >= NPLANS || outcome < 0 || outcome >= NOUT)
        return;
    atomic_fetch_add(&total[plan][outcome], 1);
    atomic_fetch_add(&scanned, rows_scanned);
    atomic_fetch_add(&returned, rows_returned);
    if (ns < 0)
        ns = 0;
    atomic_fetch_add(&sum_ns, (uint64_t)ns);
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < NBOUNDS && s > bounds[i])
        i++;
    atomic_fetch_add(&hist[i], 1);
}

void query_metrics(struct buf *out)
{
    buf_puts(out, "# HELP logbucket_query_total Statements run, by plan and outcome.\n"
                  "# TYPE logbucket_query_total counter\n");
    for (int p = 0; p < NPLANS; p++)
        for (int o = 0; o < NOUT; o++)
            buf_printf(out, "logbucket_query_total{plan=\"%s\",outcome=\"%s\"} %llu\n",
                       plan_labels[p], out_labels[o],
                       (unsigned long long)atomic_load(&total[p][o]));
    buf_printf(out,
               "# HELP logbucket_query_rows_scanned_total Entries read by queries.\n"
               "# TYPE logbucket_query_rows_scanned_total counter\n"
               "logbucket_query_rows_scanned_total %llu\n"
               "# HELP logbucket_query_rows_returned_total Rows returned (or counted).\n"
               "# TYPE logbucket_query_rows_returned_total counter\n"
               "logbucket_query_rows_returned_total %llu\n",
               (unsigned long long)atomic_load(&scanned),
               (unsigned long long)atomic_load(&returned));
    buf_puts(out, "# HELP logbucket_query_duration_seconds Statement latency.\n"
                  "# TYPE logbucket_query_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (size_t i = 0; i <= NBOUNDS; i++) {
        cum += atomic_load(&hist[i]);
        if (i < NBOUNDS)
            buf_printf(out, "logbucket_query_duration_seconds_bucket{le=\"%g\"} %llu\n",
                       bounds[i], (unsigned long long)cum);
        else
            buf_printf(out, "logbucket_query_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                       (unsigned long long)cum);
    }
    buf_printf(out, "logbucket_query_duration_seconds_sum %.9f\n",
               (double)atomic_load(&sum_ns) / 1e9);
    buf_printf(out, "logbucket_query_duration_seconds_count %llu\n", (unsigned long long)cum);
}
