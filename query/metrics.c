/* Query metrics: counters by plan and outcome, rows scanned and returned,
 * and a latency histogram. Lock-free (C11 atomics): updated once per
 * statement, read by /metrics. */
#include <stdatomic.h>

#include "base/histogram.h"
#include "query/query.h"
#include "query/query_int.h"

#define NPLANS 6 /* GET SCAN INDEX FULL admin none */
#define NOUT 4   /* ok error refused invalid */

static const char *plan_labels[NPLANS] = {"get", "scan", "index", "full", "admin", "none"};
static const char *out_labels[NOUT] = {"ok", "error", "refused", "invalid"};

static atomic_uint_fast64_t total[NPLANS][NOUT];
static atomic_uint_fast64_t scanned, returned, blocks_read, blocks_skipped, rows_skipped, counted,
    sections;
static struct histogram latency;

void query_metrics_record(int plan, int outcome, uint64_t rows_scanned, uint64_t rows_returned,
                          int64_t ns)
{
    if (plan < 0 || plan >= NPLANS || outcome < 0 || outcome >= NOUT)
        return;
    atomic_fetch_add(&total[plan][outcome], 1);
    atomic_fetch_add(&scanned, rows_scanned);
    atomic_fetch_add(&returned, rows_returned);
    histogram_record(&latency, ns);
}

void query_metrics_blocks(uint64_t read, uint64_t skipped, uint64_t rows)
{
    atomic_fetch_add(&blocks_read, read);
    atomic_fetch_add(&blocks_skipped, skipped);
    atomic_fetch_add(&rows_skipped, rows);
}

void query_metrics_counted(uint64_t rows)
{
    atomic_fetch_add(&counted, rows);
}

uint64_t query_metrics_rows_counted(void)
{
    return atomic_load(&counted);
}

void query_metrics_sections(uint64_t rows)
{
    atomic_fetch_add(&sections, rows);
}

uint64_t query_metrics_rows_from_sections(void)
{
    return atomic_load(&sections);
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
    buf_printf(out,
               "# HELP logbucket_query_blocks_read_total SSTable data blocks queries read.\n"
               "# TYPE logbucket_query_blocks_read_total counter\n"
               "logbucket_query_blocks_read_total %llu\n"
               "# HELP logbucket_query_blocks_skipped_total SSTable data blocks queries skipped "
               "because their word filter lacks a searched word.\n"
               "# TYPE logbucket_query_blocks_skipped_total counter\n"
               "logbucket_query_blocks_skipped_total %llu\n"
               "# HELP logbucket_query_rows_skipped_total Rows queries passed over without "
               "decoding them because their bytes lack a searched word.\n"
               "# TYPE logbucket_query_rows_skipped_total counter\n"
               "logbucket_query_rows_skipped_total %llu\n"
               "# HELP logbucket_query_rows_counted_total Rows aggregate queries took from "
               "the tables' counts by event and minute instead of reading them.\n"
               "# TYPE logbucket_query_rows_counted_total counter\n"
               "logbucket_query_rows_counted_total %llu\n"
               "# HELP logbucket_query_rows_from_sections_total Rows aggregate queries of one "
               "host read from the host sections of final windows (store/FORMAT.md).\n"
               "# TYPE logbucket_query_rows_from_sections_total counter\n"
               "logbucket_query_rows_from_sections_total %llu\n",
               (unsigned long long)atomic_load(&blocks_read),
               (unsigned long long)atomic_load(&blocks_skipped),
               (unsigned long long)atomic_load(&rows_skipped),
               (unsigned long long)atomic_load(&counted),
               (unsigned long long)atomic_load(&sections));
    histogram_write(&latency, "logbucket_query_duration_seconds", "Statement latency.", out);
}
