/* Word filter builder benchmark (in-process): the rows syslog_bench's
 * messages become (host, event, tags facility and level, msg), given to a
 * wfilter_builder as a table builder gives them, a filter finished every
 * --rows-per-block rows (about a 32 KiB block of them). Prints ns a row and
 * the filter's bytes a row.
 *
 *   wfilter_bench [--rows 20000] [--rounds 50] [--rows-per-block 150]
 *
 * The builder's cost is paid in every flush and compaction of log rows
 * (store/FORMAT.md, "Word filters"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "benchmarks/bench_events.h"
#include "model/key.h"
#include "model/record.h"
#include "store/ikey.h"
#include "store/table/wfilter.h"

/* The internal key of row i: a log row, its record the row's id. */
static void make_row(uint64_t *seed, int64_t ts, struct buf *ik)
{
    uint64_t r = rng_next(seed);
    char msg[512], host[32], event[16];
    size_t m = (size_t)snprintf(msg, sizeof msg, "value=%.3f count=%" PRIu64 " ",
                                (double)((r >> 20) % 100000) / 1000.0, (r >> 40) % 1000000);
    size_t words_from = m;
    while (m - words_from < 95)
        m += (size_t)snprintf(msg + m, sizeof msg - m, "%s ",
                              bench_words[rng_next(seed) % BENCH_NWORDS]);
    snprintf(host, sizeof host, "host-%04u", (unsigned)((r >> 8) % 1000));
    snprintf(event, sizeof event, "ev%02u", (unsigned)(r % 20));
    struct rec_tag tags[2] = {{slice_cstr("facility"), slice_cstr("user")},
                              {slice_cstr("level"), slice_cstr("info")}};
    struct rec_field f = {.key = slice_cstr("msg"), .type = REC_STRING, .v.s = slice_make(msg, m)};
    struct buf id = BUF_INIT, uk = BUF_INIT;
    rec_encode(&id, tags, 2, &f, 1);
    key_encode_row_id(&uk, 0, ts, false, slice_cstr(host), slice_cstr(event),
                      slice_make(id.data, id.len));
    buf_init(ik);
    ikey_append(ik, slice_make(uk.data, uk.len), 1, IKEY_PUT);
    buf_destroy(&id);
    buf_destroy(&uk);
}

static long arg_long(int argc, char **argv, const char *name, long def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return strtol(argv[i + 1], NULL, 10);
    return def;
}

int main(int argc, char **argv)
{
    long rows = arg_long(argc, argv, "--rows", 20000);
    long rounds = arg_long(argc, argv, "--rounds", 50);
    long per_block = arg_long(argc, argv, "--rows-per-block", 150);
    if (rows < 1 || rounds < 1 || per_block < 1) {
        fprintf(stderr, "usage: wfilter_bench [--rows N] [--rounds N] [--rows-per-block N]\n");
        return 2;
    }
    struct buf *ik = calloc((size_t)rows, sizeof *ik);
    if (!ik)
        return 1;
    uint64_t seed = 1;
    for (long i = 0; i < rows; i++)
        make_row(&seed, 1700000000000000000LL + i, &ik[i]);

    struct wfilter_builder b;
    wfilter_builder_init(&b);
    struct buf out = BUF_INIT;
    size_t filter_bytes = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < rows; i++) {
            wfilter_add(&b, slice_make(ik[i].data, ik[i].len), slice_make("", 0));
            if ((i + 1) % per_block == 0 || i + 1 == rows) {
                buf_reset(&out);
                wfilter_finish(&b, &out);
                filter_bytes += out.len;
                wfilter_builder_reset(&b);
            }
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double total = (double)rows * (double)rounds;
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("rows %ld, rounds %ld, rows a block %ld: %.1f ns a row, filter %.2f bytes a row\n", rows,
           rounds, per_block, ns / total, (double)filter_bytes / total);
    wfilter_builder_destroy(&b);
    buf_destroy(&out);
    for (long i = 0; i < rows; i++)
        buf_destroy(&ik[i]);
    free(ik);
    return 0;
}
