/* Shared by the Loki and OTLP fuzz targets: runs a push decoder in check
 * mode and in emit mode over the same body; both must give the same result
 * and reason, a malformed body must emit nothing in check mode, and every
 * emitted event must pass fuzz_check_event. */
#ifndef LB_LOGS_FUZZ_COMMON_H
#define LB_LOGS_FUZZ_COMMON_H

#include <string.h>

#include "base/err.h"
#include "ingest/logs.h"
#include "tests/fuzz/fuzz_common.h"

struct fuzz_sink {
    struct buf scratch;
    uint64_t rows, rejects, last_no;
};

static void fuzz_row(void *arg, uint64_t no, const struct event *ev)
{
    struct fuzz_sink *s = arg;
    FUZZ_CHECK(no > s->last_no);
    s->last_no = no;
    s->rows++;
    FUZZ_CHECK(ev->has_ts);
    fuzz_check_event(ev, &s->scratch);
}

static void fuzz_reject(void *arg, uint64_t no, const char *reason)
{
    struct fuzz_sink *s = arg;
    FUZZ_CHECK(no > s->last_no);
    s->last_no = no;
    s->rejects++;
    FUZZ_CHECK(reason && *reason);
}

typedef int (*fuzz_decoder)(const char *, size_t, const struct logs_opts *, const struct logs_out *,
                            struct buf *);

static void fuzz_decode(fuzz_decoder fn, const struct logs_map *map, uint64_t seed,
                        const char *body, size_t len)
{
    struct logs_opts o;
    memset(&o, 0, sizeof o);
    o.map = *map;
    event_limits_default(&o.lim);
    if (seed & 1) {
        o.lim.max_key_bytes = 1 + (size_t)(seed >> 40) % 16;
        o.lim.max_fields_per_line = 1 + (size_t)(seed >> 36) % 4;
        o.lim.max_tags_per_line = (size_t)(seed >> 32) % 4;
    }
    o.arrival_ns = 1;
    struct fuzz_sink s;
    memset(&s, 0, sizeof s);
    buf_init(&s.scratch);
    struct logs_out out = {fuzz_row, fuzz_reject, &s};
    struct buf e1 = BUF_INIT, e2 = BUF_INIT;
    int rc1 = fn(body, len, &o, NULL, &e1);
    int rc2 = fn(body, len, &o, &out, &e2);
    FUZZ_CHECK(rc1 == rc2);
    FUZZ_CHECK(rc1 == ERR_OK || rc1 == ERR_INVAL);
    FUZZ_CHECK(e1.len == e2.len && (e1.len == 0 || memcmp(e1.data, e2.data, e1.len) == 0));
    FUZZ_CHECK(rc1 == ERR_OK ? e1.len == 0 : e1.len > 0);
    buf_destroy(&e1);
    buf_destroy(&e2);
    buf_destroy(&s.scratch);
}

#endif
