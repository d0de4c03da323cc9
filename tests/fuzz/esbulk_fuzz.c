/* libFuzzer target for the Elasticsearch bulk path (esbulk.c through
 * ingest.c) over a checking sink: the first 8 bytes pick the URL's index,
 * the mapping's preference, the line cap and the chunk splits. Whole and
 * split feeds must agree (rows, counts, reply); a request refused whole
 * writes nothing; the reply must be JSON with one item per action; every
 * stored row must decode; nothing may leak or crash. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "ingest/esbulk.h"
#include "ingest/ingest.h"
#include "model/key.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
    struct buf pending, written;
    int nwrites;
};

static void sink_put(void *arg, const struct ingest_row *row)
{
    struct sink *s = arg;
    FUZZ_CHECK(key_event_ok(row->event) && key_host_ok(row->host));
    struct rec_row_reader r;
    FUZZ_CHECK(rec_row_init(&r, row->id, row->value) == 0);
    struct rec_field f;
    int rc, n = 0;
    while ((rc = rec_row_next_field(&r, &f)) == 1)
        n++;
    FUZZ_CHECK(rc == 0 && n >= 1);
    buf_printf(&s->pending, "%lld|", (long long)row->ts);
    buf_append(&s->pending, row->host.ptr, row->host.len);
    buf_putc(&s->pending, '|');
    buf_append(&s->pending, row->event.ptr, row->event.len);
    buf_putc(&s->pending, '|');
    buf_append(&s->pending, row->id.ptr, row->id.len);
    buf_putc(&s->pending, '\n');
}

static int sink_write(void *arg)
{
    struct sink *s = arg;
    s->nwrites++;
    buf_append(&s->written, s->pending.data, s->pending.len);
    buf_reset(&s->pending);
    return ERR_OK;
}

static int64_t fixed_clock(void *arg)
{
    return *(const int64_t *)arg;
}

/* The reply is one JSON object whose items are the request's items. */
static void check_reply(struct ingest *in, struct buf *out)
{
    struct esbulk_parser *es = ingest_esbulk(in);
    struct buf reply = BUF_INIT;
    esbulk_reply(es, 1, &reply);
    json_error_t jerr;
    json_t *root = json_loadb(reply.data, reply.len, 0, &jerr);
    FUZZ_CHECK(root && json_is_object(root));
    json_t *items = json_object_get(root, "items");
    FUZZ_CHECK(json_is_array(items) && json_array_size(items) == esbulk_items(es));
    FUZZ_CHECK(json_is_true(json_object_get(root, "errors")) == (ingest_dropped(in) > 0));
    json_decref(root);
    buf_append(out, reply.data, reply.len);
    buf_destroy(&reply);
}

static int run(uint64_t seed, const char *body, size_t len, bool is_split, struct buf *out)
{
    static const char *indexes[] = {NULL, "idx", "a.b-c", "x\x01y"};
    int64_t now = 1000;
    struct event_stamp st;
    event_stamp_init(&st, fixed_clock, &now);
    struct jsonl_es_map map = {"@timestamp", "host.name,host,hostname",
                               "event.dataset,service.name", (seed >> 2) & 1, "message"};
    struct ingest_params p;
    ingest_params_default(&p);
    p.format = INGEST_ESBULK;
    p.es_map = &map;
    p.es_index = indexes[seed & 3];
    p.stamp = &st;
    p.arrival_ns = 500;
    p.max_body_bytes = (seed >> 3) & 1 ? 1 + (size_t)(seed >> 40) % 4096 : 0;
    struct event_limits lim;
    event_limits_default(&lim);
    lim.max_line_bytes = 8 + (size_t)(seed >> 24) % 512;

    struct sink s = {BUF_INIT, BUF_INIT, 0};
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
    FUZZ_CHECK(rc == ERR_OK || rc == ERR_TOOBIG || rc == ERR_INVAL);
    if (rc != ERR_OK)
        FUZZ_CHECK(s.nwrites == 0 && ingest_written(in) == 0); /* refused whole */
    else
        check_reply(in, out);
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
    struct buf a = BUF_INIT, b = BUF_INIT;
    int ra = run(seed, body, len, false, &a);
    int rb = run(seed, body, len, true, &b);
    if (ra != ERR_TOOBIG && rb != ERR_TOOBIG) {
        FUZZ_CHECK(ra == rb);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    }
    buf_destroy(&a);
    buf_destroy(&b);
    return 0;
}
