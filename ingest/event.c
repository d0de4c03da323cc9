/* Helpers shared by the ingest parsers: limits, UTF-8 and duplicate-key
 * checks, the line splitter (zero-copy for lines inside one piece, bounded
 * gathering for lines that straddle pieces) and the arrival stamp. */
#include "ingest/event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/utf8.h"
#include "model/key.h"

void event_limits_default(struct event_limits *l)
{
    l->max_line_bytes = EVENT_DEFAULT_MAX_LINE;
    l->max_key_bytes = EVENT_DEFAULT_MAX_KEY;
    l->max_tags_per_line = EVENT_DEFAULT_MAX_TAGS;
    l->max_fields_per_line = EVENT_DEFAULT_MAX_FIELDS;
    l->host_tag = "host";
    l->default_host = "";
}

bool event_has_ctrl(struct slice s)
{
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c < 0x20 || c == 0x7f)
            return true;
    }
    return false;
}

/* Whether any byte of the word w is outside 0x20..0x7e: b - 0x20 borrows
 * or b + 1 reaches 0x80 (or b is 0x80 or more). */
static inline bool word_outside(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    return ((w - 0x20 * ones) | (w + ones) | w) & highs;
}

/* Eight bytes at a time, the last eight (or, under eight, the first and
 * last four) overlapping the ones before: no byte loop for a key of four
 * bytes or more. */
bool event_plain_ascii(struct slice s)
{
    const char *p = s.ptr;
    size_t n = s.len;
    if (n >= 8) {
        uint64_t w;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, p + i, 8);
            if (word_outside(w))
                return false;
        }
        memcpy(&w, p + n - 8, 8);
        return !word_outside(w);
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        return !word_outside((uint64_t)a << 32 | b);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c > 0x7e)
            return false;
    }
    return true;
}

const char *event_check_names(const struct event_limits *lim, struct slice host, struct slice name)
{
    size_t max = lim->max_key_bytes < KEY_MAX_NAME ? lim->max_key_bytes : KEY_MAX_NAME;
    if (name.len && name.len <= max && host.len <= max && event_plain_ascii(name) &&
        event_plain_ascii(host))
        return NULL;
    if (name.len == 0)
        return "empty event name";
    if (name.len > max)
        return "event name too long";
    if (memchr(name.ptr, 0, name.len))
        return "NUL byte in event name";
    if (event_has_ctrl(name))
        return "control character in event name";
    if (!utf8_valid(name.ptr, name.len))
        return "invalid UTF-8 in event name";
    if (host.len > max)
        return "host too long";
    if (host.len && memchr(host.ptr, 0, host.len))
        return "NUL byte in host";
    if (event_has_ctrl(host))
        return "control character in host";
    if (!utf8_valid(host.ptr, host.len))
        return "invalid UTF-8 in host";
    return NULL;
}

/* --- duplicate keys ----------------------------------------------------- */

#define DUP_PAIRWISE_MAX 16

static int slice_qcmp(const void *a, const void *b)
{
    return slice_cmp(*(const struct slice *)a, *(const struct slice *)b);
}

/* keys[i] is at (const char *)base + i * stride. */
static long dup_key(const void *base, size_t stride, size_t n, struct buf *scratch)
{
    const char *p = base;
    if (n <= DUP_PAIRWISE_MAX) {
        for (size_t i = 1; i < n; i++) {
            struct slice ki = *(const struct slice *)(p + i * stride);
            for (size_t j = 0; j < i; j++) {
                struct slice kj = *(const struct slice *)(p + j * stride);
                /* the first byte first: most keys differ there */
                if (ki.len == kj.len && (!ki.len || ki.ptr[0] == kj.ptr[0]) && slice_eq(ki, kj))
                    return (long)i;
            }
        }
        return -1;
    }
    /* Many keys: sort copies, then look for equal neighbours. */
    buf_reset(scratch);
    buf_reserve(scratch, n * sizeof(struct slice));
    struct slice *keys = (struct slice *)(void *)scratch->data;
    for (size_t i = 0; i < n; i++)
        keys[i] = *(const struct slice *)(p + i * stride);
    qsort(keys, n, sizeof *keys, slice_qcmp);
    for (size_t i = 1; i < n; i++) {
        if (slice_eq(keys[i], keys[i - 1])) {
            for (size_t k = 0; k < n; k++)
                if (slice_eq(*(const struct slice *)(p + k * stride), keys[i]))
                    return (long)k;
        }
    }
    return -1;
}

long event_dup_field(const struct rec_field *fields, size_t n, struct buf *scratch)
{
    if (n < 2) /* no pair; and fields may be NULL */
        return -1;
    return dup_key(&fields[0].key, sizeof *fields, n, scratch);
}

long event_dup_tag(const struct rec_tag *tags, size_t n, struct buf *scratch)
{
    if (n < 2) /* no pair; and tags may be NULL */
        return -1;
    return dup_key(&tags[0].key, sizeof *tags, n, scratch);
}

/* --- the line splitter -------------------------------------------------- */

void event_lines_init(struct event_lines *s, size_t max_line)
{
    buf_init(&s->partial);
    s->max_line = max_line;
    s->line_no = 0;
    s->is_skipping = false;
    s->is_partial_out = false;
}

void event_lines_destroy(struct event_lines *s)
{
    buf_destroy(&s->partial);
}

static struct slice strip_cr(const char *p, size_t n)
{
    if (n && p[n - 1] == '\r')
        n--;
    return slice_make(p, n);
}

size_t event_lines_next(struct event_lines *s, const char *data, size_t len,
                        enum event_line_kind *kind, struct slice *line)
{
    *kind = EVENT_LINE_NONE;
    if (s->is_partial_out) {
        buf_reset(&s->partial);
        s->is_partial_out = false;
    }
    if (len == 0)
        return 0;
    const char *nl = memchr(data, '\n', len);
    if (s->is_skipping) {
        if (!nl)
            return len;
        s->is_skipping = false;
        return (size_t)(nl - data) + 1;
    }
    size_t have = s->partial.len;
    if (nl) {
        size_t n = (size_t)(nl - data);
        s->line_no++;
        if (have + n > s->max_line) {
            buf_reset(&s->partial);
            *kind = EVENT_LINE_TOOLONG;
        } else if (have == 0) {
            *line = strip_cr(data, n);
            *kind = EVENT_LINE_OK;
        } else {
            buf_append(&s->partial, data, n);
            *line = strip_cr(s->partial.data, s->partial.len);
            s->is_partial_out = true;
            *kind = EVENT_LINE_OK;
        }
        return n + 1;
    }
    if (have + len > s->max_line) {
        s->line_no++;
        buf_reset(&s->partial);
        s->is_skipping = true;
        *kind = EVENT_LINE_TOOLONG;
        return len;
    }
    buf_append(&s->partial, data, len);
    return len;
}

enum event_line_kind event_lines_finish(struct event_lines *s, struct slice *line)
{
    if (s->is_partial_out) {
        buf_reset(&s->partial);
        s->is_partial_out = false;
    }
    if (s->is_skipping || s->partial.len == 0)
        return EVENT_LINE_NONE;
    s->line_no++;
    *line = strip_cr(s->partial.data, s->partial.len);
    s->is_partial_out = true;
    return EVENT_LINE_OK;
}

/* --- arrival stamps ----------------------------------------------------- */

void event_stamp_init(struct event_stamp *st, int64_t (*now)(void *arg), void *arg)
{
    atomic_init(&st->last, INT64_MIN);
    st->now = now;
    st->arg = arg;
}

int64_t event_stamp_now(const struct event_stamp *st)
{
    return st->now ? st->now(st->arg) : clock_real_ns();
}

int64_t event_stamp_next(struct event_stamp *st)
{
    int64_t now = event_stamp_now(st);
    int64_t last = atomic_load_explicit(&st->last, memory_order_relaxed);
    for (;;) {
        int64_t ts = now > last ? now : last + 1;
        if (atomic_compare_exchange_weak_explicit(&st->last, &last, ts, memory_order_relaxed,
                                                  memory_order_relaxed))
            return ts;
    }
}

/* --- the driver of a line-oriented parser --- */

void event_feed_init(struct event_feed *f, size_t max_line, event_line_fn parse, void *parser)
{
    event_lines_init(&f->lines, max_line);
    f->parse = parse;
    f->parser = parser;
    f->reason[0] = '\0';
    f->first_line = 0;
    f->joined = slice_make("", 0);
    f->flush = NULL;
}

/* A record that began on an earlier line is reported under that line. */
static void take_joined(struct event_feed *f, struct event_result *out)
{
    if (f->first_line) {
        out->line_no = f->first_line;
        out->line = f->joined;
        f->first_line = 0;
        f->joined = slice_make("", 0);
    }
}

void event_feed_destroy(struct event_feed *f)
{
    event_lines_destroy(&f->lines);
}

size_t event_feed_next(struct event_feed *f, const char *data, size_t len, struct event_result *out)
{
    enum event_line_kind k;
    struct slice line;
    size_t n = event_lines_next(&f->lines, data, len, &k, &line);
    out->kind = EVENT_NONE;
    out->line_no = f->lines.line_no;
    out->line = k == EVENT_LINE_OK ? line : slice_make("", 0);
    if (k == EVENT_LINE_TOOLONG) {
        snprintf(f->reason, sizeof f->reason, "line too long (max %zu)", f->lines.max_line);
        out->kind = EVENT_BAD;
        out->reason = f->reason;
    } else if (k == EVENT_LINE_OK) {
        out->kind = f->parse(f->parser, line.ptr, line.len, &out->ev, &out->reason);
        take_joined(f, out);
    }
    return n;
}

bool event_feed_finish(struct event_feed *f, struct event_result *out)
{
    struct slice line;
    out->kind = EVENT_NONE;
    out->line_no = f->lines.line_no;
    if (event_lines_finish(&f->lines, &line) == EVENT_LINE_OK) {
        out->line_no = f->lines.line_no;
        out->line = line;
        out->kind = f->parse(f->parser, line.ptr, line.len, &out->ev, &out->reason);
        take_joined(f, out);
        if (out->kind != EVENT_NONE)
            return true;
    }
    if (!f->flush)
        return false;
    out->kind = f->flush(f->parser, NULL, 0, &out->ev, &out->reason);
    take_joined(f, out);
    return out->kind != EVENT_NONE;
}
