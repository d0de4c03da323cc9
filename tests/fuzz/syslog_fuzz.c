/* libFuzzer target for syslog: the RFC 6587 framer over the input cut into
 * random pieces must give the same frames as over the whole input, every
 * frame is parsed (RFC 5424, RFC 3164 or stored whole) and every event
 * must pass fuzz_check_event with UTF-8 tags and msg; nothing may leak or
 * crash. The first 8 bytes seed the pieces and the limits. */
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "ingest/syslog.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/unit/ingest/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ctx {
    struct syslog_parser *parser;
    struct buf out, scratch;
};

static void check_utf8(const struct event *ev)
{
    for (size_t i = 0; i < ev->ntags; i++) {
        FUZZ_CHECK(ev->tags[i].key.len > 0);
        FUZZ_CHECK(utf8_valid(ev->tags[i].key.ptr, ev->tags[i].key.len));
        FUZZ_CHECK(utf8_valid(ev->tags[i].value.ptr, ev->tags[i].value.len));
    }
    FUZZ_CHECK(ev->nfields == 1 && ev->fields[0].type == REC_STRING);
    FUZZ_CHECK(utf8_valid(ev->fields[0].v.s.ptr, ev->fields[0].v.s.len));
}

static void on_frame(struct ctx *c, enum syslog_frame_kind k, struct slice m)
{
    buf_printf(&c->out, "%d:", (int)k);
    if (k != SYSLOG_FRAME_OK) {
        buf_putc(&c->out, '\n');
        return;
    }
    struct event ev;
    const char *why = NULL;
    const int64_t now = 1700000000000000000LL;
    enum syslog_kind sk = syslog_parse(c->parser, m.ptr, m.len, now, "127.0.0.1", &ev, &why);
    buf_printf(&c->out, "%d ", (int)sk);
    if (sk == SYSLOG_BAD) {
        FUZZ_CHECK(why != NULL);
        buf_puts(&c->out, why);
    } else {
        FUZZ_CHECK(ev.has_ts || ev.ts == now); /* no time of its own: the arrival time */
        fuzz_check_event(&ev, &c->scratch);
        check_utf8(&ev);
        render_event(&c->out, &ev);
    }
    buf_putc(&c->out, '\n');
}

static void run(struct ctx *c, const char *body, size_t len, size_t max, uint64_t seed,
                bool is_split)
{
    struct syslog_framer f;
    syslog_framer_init(&f, max);
    buf_reset(&c->out);
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
            enum syslog_frame_kind k;
            struct slice m;
            size_t used = syslog_frame_next(&f, piece + done, n - done, &k, &m);
            FUZZ_CHECK(used <= n - done);
            if (k != SYSLOG_FRAME_NONE)
                on_frame(c, k, m);
            if (used == 0) {
                FUZZ_CHECK(f.is_broken);
                break;
            }
            done += used;
        }
        free(piece);
        if (f.is_broken)
            break;
        off += n;
    }
    struct slice m;
    enum syslog_frame_kind k = syslog_frame_finish(&f, &m);
    if (k != SYSLOG_FRAME_NONE)
        on_frame(c, k, m);
    syslog_framer_destroy(&f);
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
        lim.max_key_bytes = 1 + (size_t)(seed >> 40) % 16;
    if (seed & 0x200)
        lim.max_tags_per_line = (size_t)(seed >> 32) % 8;
    size_t max = (seed & 0x400) ? 16 + (size_t)(seed >> 48) % 512 : 65536;
    struct syslog_map map = {(seed & 0x800) ? "fixed" : NULL, "syslog", (seed & 0x1000) != 0};
    struct ctx c;
    c.parser = syslog_new(&lim, &map);
    buf_init(&c.out);
    buf_init(&c.scratch);
    const char *body = (const char *)data + 8;
    size_t len = size - 8;
    run(&c, body, len, max, seed, false);
    struct buf whole = BUF_INIT;
    buf_append(&whole, c.out.data, c.out.len);
    run(&c, body, len, max, seed, true);
    FUZZ_CHECK(whole.len == c.out.len &&
               (whole.len == 0 || memcmp(whole.data, c.out.data, whole.len) == 0));
    struct slice u = syslog_unframe(body, len);
    FUZZ_CHECK(u.len <= len && u.ptr >= body && u.ptr + u.len == body + len);
    buf_destroy(&whole);
    buf_destroy(&c.out);
    buf_destroy(&c.scratch);
    syslog_free(c.parser);
    return 0;
}
