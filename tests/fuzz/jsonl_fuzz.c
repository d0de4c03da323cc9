/* libFuzzer target for the JSON-lines parser, as lineproto_fuzz.c: whole
 * and random-piece parses must agree, every event must pass
 * fuzz_check_event, and nothing may leak or crash. */
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "ingest/jsonl.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/unit/ingest/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const struct event_limits *lim, const char *body, size_t len, uint64_t seed,
                bool is_split, struct buf *out, struct buf *scratch)
{
    struct jsonl_parser *p = jsonl_new(lim, NULL, NULL, NULL);
    struct event_result r;
    size_t off = 0;
    while (off < len) {
        size_t n = len - off;
        if (is_split) {
            size_t cap = (size_t)(fuzz_rng(&seed) >> 8) % 48 + 1;
            if (n > cap)
                n = cap;
        }
        char *piece = malloc(n);
        memcpy(piece, body + off, n);
        size_t done = 0;
        while (done < n) {
            size_t used = jsonl_feed(p, piece + done, n - done, &r);
            FUZZ_CHECK(used > 0 && used <= n - done);
            if (r.kind == EVENT_OK)
                fuzz_check_event(&r.ev, scratch);
            render_result(out, &r);
            done += used;
        }
        free(piece);
        off += n;
    }
    if (jsonl_finish(p, &r)) {
        if (r.kind == EVENT_OK)
            fuzz_check_event(&r.ev, scratch);
        render_result(out, &r);
    }
    jsonl_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t seed;
    memcpy(&seed, data, 8);
    struct event_limits lim;
    event_limits_default(&lim);
    if (seed & 0x100)
        lim.max_line_bytes = 16 + (size_t)(seed >> 48) % 512;
    if (seed & 0x200) {
        lim.max_key_bytes = 1 + (size_t)(seed >> 40) % 16;
        lim.max_fields_per_line = 1 + (size_t)(seed >> 36) % 4;
    }
    struct buf a = BUF_INIT, b = BUF_INIT, scratch = BUF_INIT;
    run(&lim, (const char *)data + 8, size - 8, seed, false, &a, &scratch);
    run(&lim, (const char *)data + 8, size - 8, seed, true, &b, &scratch);
    FUZZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
    buf_destroy(&a);
    buf_destroy(&b);
    buf_destroy(&scratch);
    return 0;
}
