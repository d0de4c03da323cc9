/* Row counts of a table by event and minute (counts.h; FORMAT.md,
 * "Catalog block", counts). */
#include "store/counts.h"

#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "store/catalog_int.h"
#include "store/part.h"

#define CNT_MINUTES ((int)(STORE_WINDOW_NS / CNT_MINUTE_NS))
_Static_assert(STORE_WINDOW_NS % CNT_MINUTE_NS == 0, "a window is whole minutes");
_Static_assert(STORE_WINDOW_NS / CNT_MINUTE_NS <= 64, "a window's minutes fit a mask");

struct cnt_ev {
    uint32_t off, len; /* its name in names */
    uint64_t mask;     /* minutes with rows */
    uint64_t rows[CNT_MINUTES];
};

struct cnt_builder {
    bool off, started;
    int64_t base;
    struct buf last; /* the last entry's user key */
    bool have_last;
    uint64_t max_seq;
    struct buf names;
    struct cnt_ev *ev;
    size_t nev, capev;
    struct imap map; /* name hash -> ev */
#define CNT_CACHE 64
    struct cnt_slot { /* events of up to 16 bytes by their words */
        uint64_t w0, w1;
        uint32_t len, idx; /* idx: the event + 1 (0: empty) */
    } cache[CNT_CACHE];
};

struct cnt_builder *cnt_builder_new(void)
{
    return xcalloc(1, sizeof(struct cnt_builder));
}

void cnt_builder_free(struct cnt_builder *b)
{
    if (!b)
        return;
    buf_destroy(&b->last);
    buf_destroy(&b->names);
    free(b->ev);
    imap_destroy(&b->map);
    free(b);
}

bool cnt_first(struct cnt_builder *b, struct slice ukey, uint64_t seq)
{
    if (seq > b->max_seq)
        b->max_seq = seq;
    if (b->have_last && b->last.len == ukey.len && memcmp(b->last.data, ukey.ptr, ukey.len) == 0)
        return false;
    buf_reset(&b->last);
    buf_append(&b->last, ukey.ptr, ukey.len);
    b->have_last = true;
    return true;
}

void cnt_off(struct cnt_builder *b)
{
    b->off = true;
}

static bool ev_is(const struct cnt_builder *b, uint32_t i, struct slice name)
{
    const struct cnt_ev *e = &b->ev[i];
    return e->len == name.len && memcmp(b->names.data + e->off, name.ptr, name.len) == 0;
}

static uint32_t ev_find(struct cnt_builder *b, struct slice name)
{
    uint32_t h = hash32(name);
    size_t pos = IMAP_START;
    for (uint32_t i; (i = imap_next(&b->map, h, &pos)) != CAT_NONE;)
        if (ev_is(b, i, name))
            return i;
    if (b->nev >= CNT_MAX_EVENTS)
        return CAT_NONE;
    b->ev = grow(b->ev, &b->capev, b->nev + 1, sizeof *b->ev);
    struct cnt_ev *e = &b->ev[b->nev];
    memset(e, 0, sizeof *e);
    e->off = (uint32_t)b->names.len;
    e->len = (uint32_t)name.len;
    buf_append(&b->names, name.ptr, name.len);
    imap_put(&b->map, h, (uint32_t)b->nev);
    return (uint32_t)b->nev++;
}

/* The event of name, found by its words in the cache when it is short
 * (most are): CAT_NONE past CNT_MAX_EVENTS. */
static uint32_t ev_get(struct cnt_builder *b, struct slice name)
{
    if (name.len > 16)
        return ev_find(b, name);
    uint64_t w0, w1;
    name_words(name, &w0, &w1);
    struct cnt_slot *c =
        &b->cache[((w0 ^ (w1 + name.len) * 0x9e3779b97f4a7c15ULL) * 0x9e3779b97f4a7c15ULL) >> 58];
    if (c->idx && c->w0 == w0 && c->w1 == w1 && c->len == name.len)
        return c->idx - 1;
    uint32_t i = ev_find(b, name);
    if (i != CAT_NONE)
        *c = (struct cnt_slot){w0, w1, (uint32_t)name.len, i + 1};
    return i;
}

void cnt_row(struct cnt_builder *b, struct slice event, int64_t ts)
{
    if (b->off)
        return;
    if (!b->started) {
        int64_t w = ts / STORE_WINDOW_NS; /* part_window, without calling up */
        b->base = (w - (ts % STORE_WINDOW_NS < 0)) * STORE_WINDOW_NS;
        b->started = true;
    }
    uint64_t off = (uint64_t)ts - (uint64_t)b->base;
    uint32_t i;
    if (off >= (uint64_t)STORE_WINDOW_NS || (i = ev_get(b, event)) == CAT_NONE) {
        b->off = true; /* rows of two windows, or too many events */
        return;
    }
    unsigned m = (unsigned)(off / (uint64_t)CNT_MINUTE_NS);
    b->ev[i].rows[m]++;
    b->ev[i].mask |= 1ULL << m;
}

static int cmp_ev(const void *x, const void *y, void *arg)
{
    const struct cnt_builder *b = arg;
    const struct cnt_ev *e = &b->ev[*(const uint32_t *)x], *f = &b->ev[*(const uint32_t *)y];
    return slice_cmp(slice_make(b->names.data + e->off, e->len),
                     slice_make(b->names.data + f->off, f->len));
}

bool cnt_encode(const struct cnt_builder *b, int64_t base, struct buf *out)
{
    if (b->off || !b->have_last || (b->started && b->base != base))
        return false;
    uint32_t *order = xcalloc(b->nev + 1, sizeof *order);
    for (uint32_t i = 0; i < b->nev; i++)
        order[i] = i;
    qsort_r(order, b->nev, sizeof *order, cmp_ev, (void *)b);
    coding_put_varint(out, b->max_seq);
    coding_put_varint(out, b->nev);
    for (size_t k = 0; k < b->nev; k++) {
        const struct cnt_ev *e = &b->ev[order[k]];
        coding_put_varint(out, e->len);
        buf_append(out, b->names.data + e->off, e->len);
        coding_put_varint(out, (uint64_t)__builtin_popcountll(e->mask));
        int prev = 0;
        for (uint64_t m = e->mask; m; m &= m - 1) {
            int at = __builtin_ctzll(m);
            coding_put_varint(out, (uint64_t)(at - prev));
            coding_put_varint(out, e->rows[at]);
            prev = at;
        }
    }
    free(order);
    return true;
}

/* --- reading --- */

struct cf_ev {
    uint32_t off, len; /* its name in chars */
    uint32_t first, n; /* its minutes: minute[first..first+n) */
};

struct cnt_file {
    int64_t base;
    uint64_t max_seq;
    uint32_t nev;
    struct cf_ev *ev;
    char *chars;
    uint8_t *minute;
    uint32_t *rows; /* a table holds far fewer rows of an event in a minute */
    size_t bytes;
};

void cnt_file_free(struct cnt_file *c)
{
    if (!c)
        return;
    free(c->ev);
    free(c->chars);
    free(c->minute);
    free(c->rows);
    free(c);
}

size_t cnt_file_bytes(const struct cnt_file *c)
{
    return c ? c->bytes : 0;
}

uint64_t cnt_file_max_seq(const struct cnt_file *c)
{
    return c->max_seq;
}

static bool rd_varint(const char **p, const char *end, uint64_t *v)
{
    const char *q = coding_varint_dec(*p, end, v);
    if (!q)
        return false;
    *p = q;
    return true;
}

bool cnt_file_parse(const char **p, const char *end, int64_t base, struct cnt_file **out)
{
    struct cnt_file *c = xcalloc(1, sizeof *c);
    const char *at = *p;
    uint64_t nev, nchars = 0, nmin = 0;
    c->base = base;
    if (!rd_varint(&at, end, &c->max_seq) || !rd_varint(&at, end, &nev) || nev > CNT_MAX_EVENTS ||
        nev > (uint64_t)(end - at))
        goto bad;
    c->nev = (uint32_t)nev;
    c->ev = xcalloc(nev + 1, sizeof *c->ev);
    /* every event takes 3 bytes at least, a minute 2: room enough */
    c->chars = xmalloc((size_t)(end - at) + 1);
    c->minute = xmalloc((size_t)(end - at) / 2 + 1);
    c->rows = xmalloc(((size_t)(end - at) / 2 + 1) * sizeof *c->rows);
    for (uint32_t i = 0; i < c->nev; i++) {
        uint64_t len, n;
        if (!rd_varint(&at, end, &len) || len == 0 || len > (uint64_t)(end - at))
            goto bad;
        struct slice name = slice_make(at, (size_t)len);
        if (i && slice_cmp(slice_make(c->chars + c->ev[i - 1].off, c->ev[i - 1].len), name) >= 0)
            goto bad; /* strictly ascending */
        memcpy(c->chars + nchars, at, (size_t)len);
        c->ev[i] = (struct cf_ev){(uint32_t)nchars, (uint32_t)len, (uint32_t)nmin, 0};
        nchars += len;
        at += len;
        if (!rd_varint(&at, end, &n) || n == 0 || n > CNT_MINUTES)
            goto bad;
        uint64_t minute = 0;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t d, rows;
            if (!rd_varint(&at, end, &d) || (k && d == 0) || d >= (uint64_t)CNT_MINUTES ||
                !rd_varint(&at, end, &rows) || rows == 0 || rows > UINT32_MAX)
                goto bad;
            minute += d;
            if (minute >= (uint64_t)CNT_MINUTES)
                goto bad;
            c->minute[nmin] = (uint8_t)minute;
            c->rows[nmin++] = (uint32_t)rows;
        }
        c->ev[i].n = (uint32_t)n;
    }
    c->bytes = sizeof *c + (nev + 1) * sizeof *c->ev + (size_t)(end - *p) * 6;
    *p = at;
    *out = c;
    return true;
bad:
    cnt_file_free(c);
    return false;
}

int cnt_file_each(const struct cnt_file *c,
                  int (*fn)(void *arg, struct slice event, int64_t minute, uint64_t rows),
                  void *arg)
{
    for (uint32_t i = 0; i < c->nev; i++) {
        const struct cf_ev *e = &c->ev[i];
        struct slice name = slice_make(c->chars + e->off, e->len);
        for (uint32_t k = e->first; k < e->first + e->n; k++) {
            int rc = fn(arg, name, c->base + (int64_t)c->minute[k] * CNT_MINUTE_NS, c->rows[k]);
            if (rc)
                return rc;
        }
    }
    return ERR_OK;
}
