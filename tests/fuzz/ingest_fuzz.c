/* libFuzzer target for the whole ingest path (ingest.c) over a checking
 * sink: the first 8 bytes pick the format (line protocol, raw, JSON lines),
 * gzip (the body compressed here, or the raw bytes taken as a gzip stream),
 * body cap, batch size, a store error at the Nth write and the chunk splits.
 * Whole and split feeds must agree whenever both end without error; every
 * stored value must decode; nothing may leak or crash. */
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "base/buf.h"
#include "base/err.h"
#include "ingest/ingest.h"
#include "model/key.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
    struct buf pending, written;
    int nwrites, fail_at;
};

static void sink_put(void *arg, const struct ingest_row *row)
{
    struct sink *s = arg;
    int64_t ts = row->ts;
    struct slice host = row->host, event = row->event;
    FUZZ_CHECK(key_event_ok(event) && key_host_ok(host));
    struct rec_row_reader r;
    FUZZ_CHECK(rec_row_init(&r, row->id, row->value) == 0);
    struct rec_field f;
    int rc, n = 0;
    while ((rc = rec_row_next_field(&r, &f)) == 1)
        n++;
    FUZZ_CHECK(rc == 0 && n >= 1);
    buf_printf(&s->pending, "%lld|", (long long)ts);
    buf_append(&s->pending, host.ptr, host.len);
    buf_putc(&s->pending, '|');
    buf_append(&s->pending, event.ptr, event.len);
    buf_putc(&s->pending, '|');
    buf_append(&s->pending, row->id.ptr, row->id.len);
    buf_putc(&s->pending, '|');
    buf_append(&s->pending, row->value.ptr, row->value.len);
    buf_putc(&s->pending, '\n');
}

static int sink_write(void *arg)
{
    struct sink *s = arg;
    s->nwrites++;
    int rc = ERR_OK;
    if (s->fail_at && s->nwrites == s->fail_at)
        rc = ERR_BUSY;
    else
        buf_append(&s->written, s->pending.data, s->pending.len);
    buf_reset(&s->pending);
    return rc;
}

static int64_t fixed_clock(void *arg)
{
    return *(const int64_t *)arg;
}

static int run(uint64_t seed, const char *body, size_t len, bool is_split, struct buf *out)
{
    static const enum ingest_format formats[] = {INGEST_LINEPROTO, INGEST_RAW, INGEST_JSONL};
    int64_t now = 1000;
    struct event_stamp st;
    event_stamp_init(&st, fixed_clock, &now);
    struct ingest_params p;
    ingest_params_default(&p);
    p.format = formats[seed % 3];
    p.host = "h";
    p.event = "e";
    p.stamp = &st;
    p.arrival_ns = 500;
    p.is_gzip = (seed >> 2) & 1;
    p.max_body_bytes = (seed >> 3) & 1 ? 1 + (size_t)(seed >> 40) % 4096 : 0;
    p.batch_rows = 1 + (size_t)(seed >> 16) % 8;
    p.reject_older_than_ns = (seed >> 4) & 1 ? 100 : 0;
    struct event_limits lim;
    event_limits_default(&lim);
    lim.max_line_bytes = 8 + (size_t)(seed >> 24) % 512;

    struct sink s = {BUF_INIT, BUF_INIT, 0, (seed >> 5) & 1 ? 1 + (int)((seed >> 32) % 4) : 0};
    struct ingest_sink sink = {sink_put, sink_write, NULL, &s};
    struct ingest *in = NULL;
    FUZZ_CHECK(ingest_new_sink(&p, &lim, &sink, &in) == ERR_OK);
    int rc = ERR_OK;
    size_t off = 0;
    uint64_t rs = seed;
    while (off < len && !rc) {
        size_t n = len - off;
        if (is_split) {
            size_t cap = (size_t)(fuzz_rng(&rs) >> 8) % 40 + 1;
            if (n > cap)
                n = cap;
        }
        char *piece = malloc(n);
        memcpy(piece, body + off, n);
        rc = ingest_feed(in, piece, n);
        free(piece);
        off += n;
    }
    if (!rc)
        rc = ingest_finish(in);
    FUZZ_CHECK(rc == ingest_status(in));
    FUZZ_CHECK(rc == ERR_OK || rc == ERR_TOOBIG || rc == ERR_INVAL || rc == ERR_BUSY);
    buf_append(out, s.written.data, s.written.len);
    buf_printf(out, "written=%llu dropped=%llu rc=%d\n", (unsigned long long)ingest_written(in),
               (unsigned long long)ingest_dropped(in), rc);
    buf_puts(out, ingest_error_text(in));
    ingest_free(in);
    buf_destroy(&s.pending);
    buf_destroy(&s.written);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t seed;
    memcpy(&seed, data, 8);
    const char *body = (const char *)data + 8;
    size_t len = size - 8;
    struct buf gz = BUF_INIT;
    if (((seed >> 2) & 1) && ((seed >> 6) & 1)) {
        /* a valid gzip stream of the fuzzed bytes */
        z_stream z;
        memset(&z, 0, sizeof z);
        deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
        size_t cap = deflateBound(&z, len);
        buf_reserve(&gz, cap);
        z.next_in = (unsigned char *)(uintptr_t)body;
        z.avail_in = (uInt)len;
        z.next_out = (unsigned char *)gz.data;
        z.avail_out = (uInt)cap;
        FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
        gz.len = cap - z.avail_out;
        deflateEnd(&z);
        body = gz.data;
        len = gz.len;
    }
    struct buf a = BUF_INIT, b = BUF_INIT;
    int ra = run(seed, body, len, false, &a);
    int rb = run(seed, body, len, true, &b);
    if (ra == ERR_OK && rb == ERR_OK)
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    if (!((seed >> 2) & 1) && ra != ERR_TOOBIG && rb != ERR_TOOBIG)
        FUZZ_CHECK(ra == rb);
    buf_destroy(&a);
    buf_destroy(&b);
    buf_destroy(&gz);
    return 0;
}
