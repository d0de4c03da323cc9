/* libFuzzer target for the line-protocol parser. The first 8 input bytes
 * pick the chunk splits, precision and line limit; the rest is the body. It
 * is parsed whole and in random pieces: both must give identical results,
 * every event must pass fuzz_check_event, and nothing may leak or crash. */
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/log.h"
#include "ingest/lineproto.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/unit/ingest/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const struct event_limits *lim, int64_t prec, const char *body, size_t len,
                uint64_t seed, bool is_split, struct buf *out, struct buf *scratch)
{
    struct lp_parser *p = lp_new(lim, prec);
    struct event_result r;
    size_t off = 0;
    while (off < len) {
        size_t n = len - off;
        if (is_split) {
            uint64_t x = fuzz_rng(&seed);
            size_t cap = (x & 3) == 0 ? 1 : (size_t)(x >> 8) % 64 + 1;
            if (n > cap)
                n = cap;
        }
        /* a heap copy of exactly this piece, so ASan sees any overread */
        char *piece = malloc(n);
        memcpy(piece, body + off, n);
        size_t done = 0;
        while (done < n) {
            size_t used = lp_feed(p, piece + done, n - done, &r);
            FUZZ_CHECK(used > 0 && used <= n - done);
            if (r.kind == EVENT_OK)
                fuzz_check_event(&r.ev, scratch);
            render_result(out, &r);
            done += used;
        }
        free(piece);
        off += n;
    }
    if (lp_finish(p, &r)) {
        if (r.kind == EVENT_OK)
            fuzz_check_event(&r.ev, scratch);
        render_result(out, &r);
    }
    lp_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t seed;
    memcpy(&seed, data, 8);
    static const int64_t precs[] = {1, 1000, 1000000, 1000000000, 60000000000LL, 3600000000000LL};
    struct event_limits lim;
    event_limits_default(&lim);
    if (seed & 0x100)
        lim.max_line_bytes = 16 + (size_t)(seed >> 48) % 256;
    if (seed & 0x200) {
        lim.max_key_bytes = 1 + (size_t)(seed >> 40) % 16;
        lim.max_tags_per_line = (size_t)(seed >> 32) % 4;
        lim.max_fields_per_line = 1 + (size_t)(seed >> 36) % 4;
    }
    int64_t prec = precs[(seed >> 12) % 6];
    struct buf a = BUF_INIT, b = BUF_INIT, scratch = BUF_INIT;
    run(&lim, prec, (const char *)data + 8, size - 8, seed, false, &a, &scratch);
    run(&lim, prec, (const char *)data + 8, size - 8, seed, true, &b, &scratch);
    FUZZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
    buf_destroy(&a);
    buf_destroy(&b);
    buf_destroy(&scratch);
    return 0;
}
