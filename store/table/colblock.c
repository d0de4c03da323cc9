/* The columnar form of data blocks (colblock.h).
 *
 *   form    = layout:u8 | varint n | varint len[S_FIXED] | stream[S_FIXED]
 *             | varint collen* | column*
 *   streams (one value per entry unless said otherwise):
 *     S_BUCKET  u16be bucket (rows only)
 *     S_TS      u64le base, [varint g when the layout byte has LAYOUT_GCD],
 *               then the planes (put_planes) of each entry's tskey minus the
 *               previous entry's (the first's minus base), divided by g
 *               (the deltas' greatest common divisor: 10^6 for stamps in
 *               milliseconds), zigzag
 *     S_HOST    varint: 0 the next name of S_HOSTS, k the k-th (from 1)
 *               of those already used; S_HOSTS {varint len, bytes}*
 *     S_EVENT   likewise with S_EVENTS
 *     S_SEQ     varint sequence              S_KIND    u8 kind
 *     S_IDFORM  u8 (rows only): 0 no id, 1 record, 2 raw
 *     S_VALFORM u8: 0 empty, 1 record, 2 raw
 *     S_RAW     {varint len, bytes} for each raw id, then raw value, in order
 *     S_SHAPE   varint index into S_SHAPES, for each record (id, then value)
 *     S_SHAPES  {varint len, shape}*; shape = varint ntags {varint klen key}
 *               varint nfields {varint klen key u8 type}
 *   The columns are those of the shapes' items, numbered in the order they
 *   first appear in S_SHAPES, one per (tag, key) or (field type, key).
 *   Each has one stream (FLOAT: below; INT, UINT: the record's varints;
 *   BOOL: a byte each) or two (tag values and STRING: the varint lengths,
 *   then the bytes); collen gives each stream's length in column order.
 *   A FLOAT column is 0xff and the planes of its values' IEEE-754 bits,
 *   or a byte k (0..18) and the planes of zigzag(m) for each value, the
 *   value being m / 10^k exactly (decimals as written in text: 802.35 is
 *   80235, k 2). Planes (put_planes): varint count | w:u8 | w planes of
 *   count bytes, the lowest byte of every value first.
 * A record is columnized only if it parses exactly (else it is raw), so
 * every byte of the block comes back; col_encode checks that it does. */
#include "store/table/colblock.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "base/hash.h"
#include "model/record.h"
#include "store/ikey.h"
#include "store/iter.h"
#include "store/table/block.h"

enum {
    S_BUCKET,
    S_TS,
    S_HOST,
    S_HOSTS,
    S_EVENT,
    S_EVENTS,
    S_SEQ,
    S_KIND,
    S_IDFORM,
    S_VALFORM,
    S_RAW,
    S_SHAPE,
    S_SHAPES,
    S_FIXED
};

enum { FORM_NONE = 0, FORM_RECORD = 1, FORM_RAW = 2 };

#define LAYOUT_GCD 0x80 /* on the layout byte: the stamps' deltas are divided */

#define ITEM_TAG 0 /* a record item that is a tag; fields are REC_* */
#define COL_MAX_SHAPES 4096
#define COL_MAX_COLUMNS 4096

static const char *decode_form(struct slice col, size_t max_raw, struct buf *out);

static bool two_streams(int type)
{
    return type == ITEM_TAG || type == REC_STRING;
}

static void put_bytes(struct buf *b, struct slice s)
{
    coding_put_varint(b, s.len);
    buf_append(b, s.ptr, s.len);
}

/* ---- a table of distinct strings, numbered in the order added ---- */

struct strtab {
    struct buf text;
    uint32_t *off, *len;
    uint32_t n, cap;
    uint32_t *slots; /* string index + 1; 0 is empty */
    uint32_t nslots; /* a power of two, at least twice n */
};

static void st_free(struct strtab *t)
{
    buf_destroy(&t->text);
    free(t->off);
    free(t->len);
    free(t->slots);
}

static void st_reset(struct strtab *t)
{
    buf_reset(&t->text);
    t->n = 0;
    if (t->slots)
        memset(t->slots, 0, t->nslots * sizeof *t->slots);
}

/* 8 bytes at a time: names and shapes are hashed for every row. */
static uint64_t st_hash(struct slice s)
{
    const uint64_t k = 0x9e3779b97f4a7c15ULL;
    uint64_t h = s.len * k;
    size_t i = 0;
    for (; i + 8 <= s.len; i += 8) {
        uint64_t c;
        memcpy(&c, s.ptr + i, 8);
        h = (h ^ c) * k;
        h ^= h >> 29;
    }
    if (i < s.len) {
        uint64_t c = 0;
        memcpy(&c, s.ptr + i, s.len - i);
        h = (h ^ c) * k;
    }
    return hash_fmix64(h);
}

static struct slice st_get(const struct strtab *t, uint32_t i)
{
    return slice_make(t->text.data + t->off[i], t->len[i]);
}

static uint32_t *st_slot(const struct strtab *t, struct slice s)
{
    uint32_t mask = t->nslots - 1, h = (uint32_t)st_hash(s) & mask;
    while (t->slots[h] && !slice_eq(st_get(t, t->slots[h] - 1), s))
        h = (h + 1) & mask;
    return &t->slots[h];
}

static void st_grow(struct strtab *t)
{
    free(t->slots);
    t->nslots = t->nslots ? t->nslots * 2 : 64;
    t->slots = xcalloc(t->nslots, sizeof *t->slots);
    for (uint32_t i = 0; i < t->n; i++)
        *st_slot(t, st_get(t, i)) = i + 1;
}

/* The index of s, or -1 if absent. */
static int64_t st_find(struct strtab *t, struct slice s)
{
    if (!t->nslots)
        st_grow(t);
    uint32_t v = *st_slot(t, s);
    return v ? (int64_t)v - 1 : -1;
}

/* The index of s, added if absent (*added says). */
static uint32_t st_intern(struct strtab *t, struct slice s, bool *added)
{
    if (2 * (t->n + 1) > t->nslots)
        st_grow(t);
    uint32_t *slot = st_slot(t, s);
    *added = !*slot;
    if (*slot)
        return *slot - 1;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->off = xrealloc(t->off, t->cap * sizeof *t->off);
        t->len = xrealloc(t->len, t->cap * sizeof *t->len);
    }
    t->off[t->n] = (uint32_t)t->text.len;
    t->len[t->n] = (uint32_t)s.len;
    buf_append(&t->text, s.ptr, s.len);
    *slot = t->n + 1;
    return t->n++;
}

/* A column's name in the tables: its item type, then its key. */
static struct slice col_name(struct buf *scratch, int type, struct slice key)
{
    buf_reset(scratch);
    buf_putc(scratch, (char)type);
    buf_append(scratch, key.ptr, key.len);
    return slice_make(scratch->data, scratch->len);
}

/* ---- keys ---- */

struct key_parts {
    uint16_t bucket;
    uint64_t tskey;
    struct slice host, event, id;
    bool has_id;
};

static bool parse_row_key(struct slice u, struct key_parts *k)
{
    if (u.len < 11)
        return false;
    const char *p = u.ptr + 10, *end = u.ptr + u.len;
    k->bucket = coding_get_u16be(u.ptr);
    k->tskey = coding_get_u64be(u.ptr + 2);
    const char *z = memchr(p, 0, (size_t)(end - p));
    if (!z)
        return false;
    k->host = slice_make(p, (size_t)(z - p));
    p = z + 1;
    const char *e = p;
    while (e < end && (unsigned char)*e > 1)
        e++;
    if (e == end)
        return false;
    k->event = slice_make(p, (size_t)(e - p));
    k->has_id = *e == 1;
    if (!k->has_id)
        return e + 1 == end;
    uint64_t n;
    p = coding_varint_dec(e + 1, end, &n);
    if (!p || n == 0 || n != (uint64_t)(end - p))
        return false;
    k->id = slice_make(p, (size_t)n);
    return true;
}

static bool parse_index_key(struct slice u, struct key_parts *k)
{
    const char *p = u.ptr, *end = u.ptr + u.len;
    const char *z = memchr(p, 0, u.len);
    if (!z || end - z < 10 || end[-1] != 0)
        return false;
    k->host = slice_make(p, (size_t)(z - p));
    k->tskey = coding_get_u64be(z + 1);
    k->event = slice_make(z + 9, (size_t)(end - 1 - (z + 9)));
    return !memchr(k->event.ptr, 0, k->event.len);
}

/* host 0x00 event 0x00 tskey (a host section's, store/series.h) */
static bool parse_section_key(struct slice u, struct key_parts *k)
{
    const char *p = u.ptr, *end = u.ptr + u.len;
    const char *z = memchr(p, 0, u.len);
    if (!z || end - z < 10)
        return false;
    const char *z2 = memchr(z + 1, 0, (size_t)(end - z - 1));
    if (!z2 || end - z2 != 9)
        return false;
    k->host = slice_make(p, (size_t)(z - p));
    k->event = slice_make(z + 1, (size_t)(z2 - z - 1));
    k->tskey = coding_get_u64be(z2 + 1);
    return true;
}

static bool parse_key(enum col_layout layout, struct slice u, struct key_parts *k)
{
    switch (layout) {
    case COL_ROWS: return parse_row_key(u, k);
    case COL_INDEX: return parse_index_key(u, k);
    case COL_SECTION: return parse_section_key(u, k);
    default: return false;
    }
}

/* ---- records ---- */

struct item {
    int type; /* ITEM_TAG or REC_* */
    struct slice key, payload;
};

struct items {
    struct item *v;
    size_t n, cap, ntags;
};

static void items_add(struct items *it, int type, struct slice key, struct slice payload)
{
    if (it->n == it->cap) {
        it->cap = it->cap ? 2 * it->cap : 16;
        it->v = xrealloc(it->v, it->cap * sizeof *it->v);
    }
    it->v[it->n++] = (struct item){type, key, payload};
}

/* The payload of a field of type at p: its bytes (for STRING, without the
 * length), the end in *next. NULL if it does not fit or type is unknown. */
static const char *field_payload(int type, const char *p, const char *end, struct slice *out)
{
    uint64_t v;
    const char *q;
    switch (type) {
    case REC_FLOAT: q = end - p >= 8 ? p + 8 : NULL; break;
    case REC_INT:
    case REC_UINT: q = coding_varint_dec(p, end, &v); break;
    case REC_BOOL: q = p < end ? p + 1 : NULL; break;
    case REC_STRING: return coding_bytes_dec(p, end, out);
    default: return NULL;
    }
    if (q)
        *out = slice_make(p, (size_t)(q - p));
    return q;
}

/* Splits a record into its items; false if it is not exactly one record. */
static bool parse_record(struct slice rec, struct items *it)
{
    const char *p = rec.ptr, *end = rec.ptr + rec.len;
    uint64_t nt, nf;
    it->n = 0;
    if (!(p = coding_varint_dec(p, end, &nt)) || nt > rec.len)
        return false;
    for (uint64_t i = 0; i < nt; i++) {
        struct slice k, v;
        if (!(p = coding_bytes_dec(p, end, &k)) || !(p = coding_bytes_dec(p, end, &v)))
            return false;
        items_add(it, ITEM_TAG, k, v);
    }
    it->ntags = it->n;
    if (!(p = coding_varint_dec(p, end, &nf)) || nf > rec.len)
        return false;
    for (uint64_t i = 0; i < nf; i++) {
        struct slice k, v;
        if (!(p = coding_bytes_dec(p, end, &k)) || p == end)
            return false;
        int type = (unsigned char)*p++;
        if (!(p = field_payload(type, p, end, &v)))
            return false;
        items_add(it, type, k, v);
    }
    return p == end;
}

/* ---- the encoder ---- */

struct enc_col {
    int type;
    struct buf a, b;
};

struct enc {
    struct buf s[S_FIXED];
    struct strtab hosts, events, shapes, names;
    struct enc_col *cols;
    uint32_t ncols, colcap;
    uint32_t *shape_col; /* the columns of shape i's items from shape_first[i] */
    uint32_t *shape_first;
    size_t nshape_col, shape_col_cap, shape_first_cap;
    struct items items;
    int64_t last_shape; /* the shape of the last record, -1: none */
    struct buf scratch, name;
    struct buf check; /* the form decoded again */
};

static void enc_reset(struct enc *e)
{
    for (int i = 0; i < S_FIXED; i++)
        buf_reset(&e->s[i]);
    st_reset(&e->hosts);
    st_reset(&e->events);
    st_reset(&e->shapes);
    st_reset(&e->names);
    for (uint32_t i = 0; i < e->ncols; i++) {
        buf_reset(&e->cols[i].a);
        buf_reset(&e->cols[i].b);
    }
    e->ncols = 0;
    e->nshape_col = 0;
    e->last_shape = -1;
}

static void enc_free(void *p)
{
    struct enc *e = p;
    for (int i = 0; i < S_FIXED; i++)
        buf_destroy(&e->s[i]);
    st_free(&e->hosts);
    st_free(&e->events);
    st_free(&e->shapes);
    st_free(&e->names);
    for (uint32_t i = 0; i < e->colcap; i++) {
        buf_destroy(&e->cols[i].a);
        buf_destroy(&e->cols[i].b);
    }
    free(e->cols);
    free(e->shape_col);
    free(e->shape_first);
    free(e->items.v);
    buf_destroy(&e->scratch);
    buf_destroy(&e->name);
    buf_destroy(&e->check);
    free(e);
}

/* The column of an item, added if new. */
static uint32_t enc_column(struct enc *e, int type, struct slice key)
{
    bool added;
    uint32_t c = st_intern(&e->names, col_name(&e->name, type, key), &added);
    if (!added)
        return c;
    if (e->ncols == e->colcap) {
        uint32_t cap = e->colcap ? 2 * e->colcap : 16;
        e->cols = xrealloc(e->cols, cap * sizeof *e->cols);
        for (uint32_t i = e->colcap; i < cap; i++) {
            buf_init(&e->cols[i].a);
            buf_init(&e->cols[i].b);
        }
        e->colcap = cap;
    }
    e->cols[e->ncols].type = type;
    return e->ncols++;
}

/* The shape of the parsed record in e->items, added with its columns if
 * new; -1 if the block has too many shapes or columns for one more. */
static int64_t enc_shape(struct enc *e)
{
    struct items *it = &e->items;
    struct buf *s = &e->scratch;
    buf_reset(s);
    coding_put_varint(s, it->ntags);
    for (size_t i = 0; i < it->n; i++) {
        if (i == it->ntags)
            coding_put_varint(s, it->n - it->ntags);
        put_bytes(s, it->v[i].key);
        if (i >= it->ntags)
            buf_putc(s, (char)it->v[i].type);
    }
    if (it->n == it->ntags)
        coding_put_varint(s, 0);
    struct slice shape = slice_make(s->data, s->len);
    if (e->last_shape >= 0 && slice_eq(shape, st_get(&e->shapes, (uint32_t)e->last_shape)))
        return e->last_shape; /* most rows have the shape of the row before */
    int64_t found = st_find(&e->shapes, shape);
    e->last_shape = found;
    if (found >= 0)
        return found;
    if (e->shapes.n >= COL_MAX_SHAPES || e->ncols + it->n > COL_MAX_COLUMNS)
        return -1;
    bool added;
    uint32_t idx = st_intern(&e->shapes, shape, &added);
    if (idx >= e->shape_first_cap) {
        e->shape_first_cap = e->shape_first_cap ? 2 * e->shape_first_cap : 16;
        e->shape_first = xrealloc(e->shape_first, e->shape_first_cap * sizeof *e->shape_first);
    }
    if (e->nshape_col + it->n > e->shape_col_cap) {
        while (e->nshape_col + it->n > e->shape_col_cap)
            e->shape_col_cap = e->shape_col_cap ? 2 * e->shape_col_cap : 64;
        e->shape_col = xrealloc(e->shape_col, e->shape_col_cap * sizeof *e->shape_col);
    }
    e->shape_first[idx] = (uint32_t)e->nshape_col;
    e->last_shape = idx;
    for (size_t i = 0; i < it->n; i++)
        e->shape_col[e->nshape_col++] = enc_column(e, it->v[i].type, it->v[i].key);
    return idx;
}

/* Puts a record into the columns: FORM_RECORD, or FORM_RAW if it does not
 * parse or fit (the caller stores it whole). */
static int enc_record(struct enc *e, struct slice rec)
{
    if (!parse_record(rec, &e->items))
        return FORM_RAW;
    int64_t shape = enc_shape(e);
    if (shape < 0)
        return FORM_RAW;
    coding_put_varint(&e->s[S_SHAPE], (uint64_t)shape);
    const uint32_t *cols = e->shape_col + e->shape_first[shape];
    for (size_t i = 0; i < e->items.n; i++) {
        const struct item *item = &e->items.v[i];
        struct enc_col *c = &e->cols[cols[i]];
        if (two_streams(item->type)) {
            coding_put_varint(&c->a, item->payload.len);
            buf_append(&c->b, item->payload.ptr, item->payload.len);
        } else {
            buf_append(&c->a, item->payload.ptr, item->payload.len);
        }
    }
    return FORM_RECORD;
}

static void enc_part(struct enc *e, int form_stream, struct slice part, bool is_id)
{
    int form = FORM_NONE;
    if (is_id || part.len)
        form = enc_record(e, part);
    buf_putc(&e->s[form_stream], (char)form);
    if (form == FORM_RAW)
        put_bytes(&e->s[S_RAW], part);
}

static bool enc_entry(struct enc *e, enum col_layout layout, struct slice ik, struct slice value,
                      uint64_t *prev_ts)
{
    if (!ikey_ok(ik))
        return false;
    struct key_parts k = {0};
    struct slice u = ikey_user(ik);
    if (!parse_key(layout, u, &k))
        return false;
    bool added;
    if (layout == COL_ROWS) {
        char b[2];
        coding_put_u16be(b, k.bucket);
        buf_append(&e->s[S_BUCKET], b, 2);
    }
    char d[8];
    coding_put_u64le(d, k.tskey - *prev_ts); /* signed, divided and zigzagged at the end */
    buf_append(&e->s[S_TS], d, 8);
    *prev_ts = k.tskey;
    uint32_t h = st_intern(&e->hosts, k.host, &added);
    coding_put_varint(&e->s[S_HOST], added ? 0 : (uint64_t)h + 1);
    uint32_t ev = st_intern(&e->events, k.event, &added);
    coding_put_varint(&e->s[S_EVENT], added ? 0 : (uint64_t)ev + 1);
    coding_put_varint(&e->s[S_SEQ], ikey_seq(ik));
    buf_putc(&e->s[S_KIND], (char)ikey_kind(ik));
    if (layout == COL_ROWS) {
        if (k.has_id)
            enc_part(e, S_IDFORM, k.id, true);
        else
            buf_putc(&e->s[S_IDFORM], FORM_NONE);
    }
    enc_part(e, S_VALFORM, value, false);
    return true;
}

static void put_dict(struct buf *s, const struct strtab *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        put_bytes(s, st_get(t, i));
}

/* Appends u64le values as planes: varint n | w:u8 | w planes of n bytes,
 * the lowest byte of every value first, w the bytes of the largest. */
static void put_planes(struct buf *out, struct slice v)
{
    size_t n = v.len / 8;
    uint64_t all = 0;
    for (size_t j = 0; j < n; j++)
        all |= coding_get_u64le(v.ptr + 8 * j);
    int w = 0;
    while (w < 8 && all >> (8 * w))
        w++;
    coding_put_varint(out, n);
    buf_putc(out, (char)w);
    buf_reserve(out, n * (size_t)w);
    char *p = out->data + out->len;
    for (int k = 0; k < w; k++)
        for (size_t j = 0; j < n; j++)
            *p++ = v.ptr[j * 8 + (size_t)k];
    out->len += n * (size_t)w;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                     1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
#define DEC_MAX_K 18
#define DEC_MAX_M (1LL << 53)

static double bits_double(uint64_t b)
{
    double v;
    memcpy(&v, &b, 8);
    return v;
}

static uint64_t double_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* Whether bits is exactly m / 10^k for an integer |m| < 2^53 (set). */
static bool decimal_at(uint64_t bits, int k, int64_t *m)
{
    double v = bits_double(bits);
    double x = v * pow10_exact[k];
    if (!(x > -(double)DEC_MAX_M && x < (double)DEC_MAX_M))
        return false;
    *m = llround(x);
    return double_bits((double)*m / pow10_exact[k]) == bits;
}

/* The k with which every value of a FLOAT column is a decimal, or -1. */
static int decimal_k(struct slice v)
{
    int k = 0;
    int64_t m;
    for (size_t j = 0; j + 8 <= v.len; j += 8) {
        uint64_t bits = coding_get_u64le(v.ptr + j);
        while (k <= DEC_MAX_K && !decimal_at(bits, k, &m))
            k++;
        if (k > DEC_MAX_K)
            return -1;
    }
    /* a smaller k of an earlier value is not always good at a larger one */
    for (size_t j = 0; j + 8 <= v.len; j += 8)
        if (!decimal_at(coding_get_u64le(v.ptr + j), k, &m))
            return -1;
    return k;
}

static void put_floats(struct buf *out, struct buf *v)
{
    int k = decimal_k(slice_make(v->data, v->len));
    buf_putc(out, (char)(k < 0 ? 0xff : k));
    for (size_t j = 0; k >= 0 && j + 8 <= v->len; j += 8) {
        int64_t m = 0;
        decimal_at(coding_get_u64le(v->data + j), k, &m);
        coding_put_u64le(v->data + j, coding_zigzag(m)); /* in place: the column is written once */
    }
    put_planes(out, slice_make(v->data, v->len));
}

/* Appends column c's streams. */
static void put_column(struct buf *out, struct enc_col *c)
{
    if (c->type == REC_FLOAT) {
        put_floats(out, &c->a);
        return;
    }

    buf_append(out, c->a.data, c->a.len);
    if (two_streams(c->type))
        buf_append(out, c->b.data, c->b.len);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Appends the stamps' deltas (signed, u64le in d, rewritten in place) as
 * S_TS has them after its base: [varint g] and the planes. Returns g, the
 * deltas' greatest common divisor (1: none written). */
static uint64_t put_stamps(struct buf *out, struct buf *d)
{
    uint64_t g = 0;
    for (size_t j = 0; j + 8 <= d->len && g != 1; j += 8) {
        uint64_t v = coding_get_u64le(d->data + j);
        g = gcd64(g, (int64_t)v < 0 ? 0 - v : v);
    }
    if (g > 1)
        coding_put_varint(out, g);
    for (size_t j = 0; j + 8 <= d->len; j += 8) {
        int64_t v = (int64_t)coding_get_u64le(d->data + j);
        coding_put_u64le(d->data + j, coding_zigzag(g > 1 ? v / (int64_t)g : v));
    }
    put_planes(out, slice_make(d->data, d->len));
    return g > 1 ? g : 1;
}

static void enc_write(struct enc *e, enum col_layout layout, uint64_t n, const char *ts_base,
                      struct buf *out)
{
    for (uint32_t i = 0; i < e->shapes.n; i++)
        put_bytes(&e->s[S_SHAPES], st_get(&e->shapes, i));
    put_dict(&e->s[S_HOSTS], &e->hosts);
    put_dict(&e->s[S_EVENTS], &e->events);
    struct buf *ts = &e->scratch;
    buf_reset(ts);
    buf_append(ts, ts_base, 8);
    uint64_t g = put_stamps(ts, &e->s[S_TS]);
    buf_reset(&e->s[S_TS]);
    buf_append(&e->s[S_TS], ts->data, ts->len);
    buf_putc(out, (char)(layout | (g > 1 ? LAYOUT_GCD : 0)));
    coding_put_varint(out, n);
    for (int i = 0; i < S_FIXED; i++)
        coding_put_varint(out, e->s[i].len);
    for (int i = 0; i < S_FIXED; i++)
        buf_append(out, e->s[i].data, e->s[i].len);
    struct buf *cols = &e->scratch;
    buf_reset(cols);
    for (uint32_t i = 0; i < e->ncols; i++) {
        size_t at = cols->len;
        put_column(cols, &e->cols[i]);
        if (two_streams(e->cols[i].type)) {
            coding_put_varint(out, e->cols[i].a.len);
            coding_put_varint(out, e->cols[i].b.len);
        } else {
            coding_put_varint(out, cols->len - at);
        }
    }
    buf_append(out, cols->data, cols->len);
}

/* ---- per-thread state ---- */

struct dec;
static void dec_free(void *p);

static pthread_key_t enc_tls, dec_tls;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void make_keys(void)
{
    if (pthread_key_create(&enc_tls, enc_free) || pthread_key_create(&dec_tls, dec_free))
        abort();
}

static void *thread_state(pthread_key_t *key, size_t size)
{
    pthread_once(&keys_once, make_keys);
    void *s = pthread_getspecific(*key);
    if (!s) {
        s = xcalloc(1, size);
        if (pthread_setspecific(*key, s))
            abort();
    }
    return s;
}

bool col_encode(struct slice raw, enum col_layout layout, struct buf *out)
{
    if (layout != COL_ROWS && layout != COL_INDEX && layout != COL_SECTION)
        return false;
    struct blk b;
    if (blk_parse(raw, &b))
        return false;
    struct enc *e = thread_state(&enc_tls, sizeof(struct enc));
    enc_reset(e);
    struct iter *it = blk_iter(&b);
    uint64_t n = 0, prev_ts = 0;
    bool ok = true;
    it_seek_first(it);
    if (it_valid(it) && it_key(it).len >= IKEY_TRAILER + 10) {
        /* the first delta from the first key's tskey bytes (rows: after the
         * bucket; index: a guess that decodes right either way) */
        struct key_parts k0 = {0};
        struct slice u0 = ikey_user(it_key(it));
        if (parse_key(layout, u0, &k0))
            prev_ts = k0.tskey;
    }
    char base[8];
    coding_put_u64le(base, prev_ts);
    for (; ok && it_valid(it); it_next(it), n++)
        ok = enc_entry(e, layout, it_key(it), it_value(it), &prev_ts);
    ok = ok && it_status(it) == ERR_OK && n > 0;
    it_destroy(it);
    if (!ok)
        return false;
    size_t start = out->len;
    enc_write(e, layout, n, base, out);
    struct slice form = slice_make(out->data + start, out->len - start);
    if (decode_form(form, raw.len, &e->check) ||
        !slice_eq(slice_make(e->check.data, e->check.len), raw)) {
        out->len = start;
        return false;
    }
    return true;
}

/* ---- the decoder ---- */

/* Values stored by put_planes. */
struct planes {
    const char *p;
    uint64_t n, next;
    int w;
};

static bool planes_init(struct planes *pl, struct slice s)
{
    const char *q = coding_varint_dec(s.ptr, s.ptr + s.len, &pl->n);
    if (!q || q == s.ptr + s.len)
        return false;
    pl->w = (unsigned char)*q++;
    pl->p = q;
    pl->next = 0;
    uint64_t left = (uint64_t)(s.ptr + s.len - q);
    if (pl->w == 0)
        return left == 0; /* n zeros: the reader stops at n */
    return pl->w <= 8 && pl->n <= left / (uint64_t)pl->w && left == pl->n * (uint64_t)pl->w;
}

/* Every value of pl at once, into *v (grown to hold them). */
static const uint64_t *planes_all(const struct planes *pl, uint64_t **v, size_t *cap)
{
    if (pl->n > *cap) {
        *cap = (size_t)pl->n;
        free(*v);
        *v = xmalloc(*cap * sizeof **v);
    }
    uint64_t *out = *v;
    size_t n = (size_t)pl->n;
    memset(out, 0, n * sizeof *out);
    for (int k = 0; k < pl->w; k++) {
        const unsigned char *p = (const unsigned char *)pl->p + (size_t)k * n;
        for (size_t j = 0; j < n; j++)
            out[j] |= (uint64_t)p[j] << (8 * k);
    }
    return out;
}

static bool planes_next(struct planes *pl, uint64_t *v)
{
    if (pl->next == pl->n)
        return false;
    uint64_t x = 0;
    for (int k = 0; k < pl->w; k++)
        x |= (uint64_t)(unsigned char)pl->p[(uint64_t)k * pl->n + pl->next] << (8 * k);
    pl->next++;
    *v = x;
    return true;
}

struct dec_col {
    int type;
    struct slice a, b;
    size_t pa, pb;    /* read positions */
    int k;            /* FLOAT: decimals m / 10^k, or -1: the values' bits */
    struct planes pl; /* FLOAT */
};

struct dec_item {
    int type;
    struct slice key;
    uint32_t col;
};

struct dec {
    struct slice *hosts, *events;
    size_t hosts_cap, events_cap;
    uint64_t *ts;
    size_t ts_cap;
    struct dec_item *items;
    size_t nitems, items_cap;
    uint32_t *shape_first, *shape_ntags, *shape_n;
    size_t nshapes, shapes_cap;
    struct dec_col *cols;
    uint32_t ncols, cols_cap;
    struct strtab names;
    struct buf name, key, val, rec;
    struct blk_builder blk;
    bool blk_ready;
};

static void dec_free(void *p)
{
    struct dec *d = p;
    free(d->hosts);
    free(d->events);
    free(d->ts);
    free(d->items);
    free(d->shape_first);
    free(d->shape_ntags);
    free(d->shape_n);
    free(d->cols);
    st_free(&d->names);
    buf_destroy(&d->name);
    buf_destroy(&d->key);
    buf_destroy(&d->val);
    buf_destroy(&d->rec);
    if (d->blk_ready)
        blk_builder_destroy(&d->blk);
    free(d);
}

/* A cursor over one stream. */
struct cur {
    const char *p, *end;
};

static bool cur_varint(struct cur *c, uint64_t *v)
{
    const char *q = coding_varint_dec(c->p, c->end, v);
    if (!q)
        return false;
    c->p = q;
    return true;
}

static bool cur_byte(struct cur *c, int *v)
{
    if (c->p == c->end)
        return false;
    *v = (unsigned char)*c->p++;
    return true;
}

static bool cur_bytes(struct cur *c, struct slice *out)
{
    const char *q = coding_bytes_dec(c->p, c->end, out);
    if (!q)
        return false;
    c->p = q;
    return true;
}

/* Reads a dictionary stream into *v (grown as needed); its size in *n. */
static bool dec_dict(struct cur c, struct slice **v, size_t *cap, size_t *n)
{
    *n = 0;
    while (c.p < c.end) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            *v = xrealloc(*v, *cap * sizeof **v);
        }
        if (!cur_bytes(&c, &(*v)[*n]))
            return false;
        (*n)++;
    }
    return true;
}

static uint32_t dec_column(struct dec *d, int type, struct slice key)
{
    bool added;
    uint32_t c = st_intern(&d->names, col_name(&d->name, type, key), &added);
    if (!added)
        return c;
    if (d->ncols == d->cols_cap) {
        d->cols_cap = d->cols_cap ? 2 * d->cols_cap : 16;
        d->cols = xrealloc(d->cols, d->cols_cap * sizeof *d->cols);
    }
    memset(&d->cols[d->ncols], 0, sizeof d->cols[d->ncols]);
    d->cols[d->ncols].type = type;
    return d->ncols++;
}

static void dec_add_item(struct dec *d, int type, struct slice key)
{
    if (d->nitems == d->items_cap) {
        d->items_cap = d->items_cap ? 2 * d->items_cap : 64;
        d->items = xrealloc(d->items, d->items_cap * sizeof *d->items);
    }
    d->items[d->nitems++] = (struct dec_item){type, key, dec_column(d, type, key)};
}

static bool dec_shape(struct dec *d, struct slice shape)
{
    struct cur c = {shape.ptr, shape.ptr + shape.len};
    uint64_t nt, nf;
    if (d->nshapes == d->shapes_cap) {
        d->shapes_cap = d->shapes_cap ? 2 * d->shapes_cap : 16;
        d->shape_first = xrealloc(d->shape_first, d->shapes_cap * sizeof *d->shape_first);
        d->shape_ntags = xrealloc(d->shape_ntags, d->shapes_cap * sizeof *d->shape_ntags);
        d->shape_n = xrealloc(d->shape_n, d->shapes_cap * sizeof *d->shape_n);
    }
    size_t first = d->nitems;
    if (!cur_varint(&c, &nt) || nt > shape.len)
        return false;
    for (uint64_t i = 0; i < nt; i++) {
        struct slice k;
        if (!cur_bytes(&c, &k))
            return false;
        dec_add_item(d, ITEM_TAG, k);
    }
    if (!cur_varint(&c, &nf) || nf > shape.len)
        return false;
    for (uint64_t i = 0; i < nf; i++) {
        struct slice k;
        int type;
        if (!cur_bytes(&c, &k) || !cur_byte(&c, &type) || type < REC_FLOAT || type > REC_STRING)
            return false;
        dec_add_item(d, type, k);
    }
    if (c.p != c.end || d->ncols > COL_MAX_COLUMNS)
        return false;
    d->shape_first[d->nshapes] = (uint32_t)first;
    d->shape_ntags[d->nshapes] = (uint32_t)nt;
    d->shape_n[d->nshapes] = (uint32_t)(d->nitems - first);
    d->nshapes++;
    return true;
}

/* Reads a FLOAT column's first byte: how its values are stored. */
static bool dec_float_column(struct dec_col *col)
{
    if (col->a.len == 0)
        return false;
    int mode = (unsigned char)col->a.ptr[0];
    col->k = mode == 0xff ? -1 : mode;
    return (mode == 0xff || mode <= DEC_MAX_K) &&
           planes_init(&col->pl, slice_make(col->a.ptr + 1, col->a.len - 1));
}

/* Sets the columns' streams from the column length table at *c. */
static bool dec_columns(struct dec *d, struct cur *c)
{
    uint64_t len[2];
    for (uint32_t i = 0; i < d->ncols; i++) {
        struct dec_col *col = &d->cols[i];
        for (int s = 0; s < (two_streams(col->type) ? 2 : 1); s++)
            if (!cur_varint(c, &len[s]))
                return false;
        if (!two_streams(col->type))
            len[1] = 0;
        if (len[0] > (uint64_t)(c->end - c->p) || len[1] > (uint64_t)(c->end - c->p))
            return false;
        col->a = slice_make(NULL, (size_t)len[0]);
        col->b = slice_make(NULL, (size_t)len[1]);
    }
    for (uint32_t i = 0; i < d->ncols; i++) {
        struct dec_col *col = &d->cols[i];
        size_t need = col->a.len + col->b.len;
        if (need > (size_t)(c->end - c->p))
            return false;
        col->a.ptr = c->p;
        col->b.ptr = c->p + col->a.len;
        c->p += need;
        if (col->type == REC_FLOAT && !dec_float_column(col))
            return false;
    }
    return c->p == c->end;
}

/* Appends a varint read from col's first stream, as its bytes. */
static bool copy_varint(struct dec_col *col, struct buf *out)
{
    uint64_t v;
    const char *p = col->a.ptr + col->pa;
    const char *q = coding_varint_dec(p, col->a.ptr + col->a.len, &v);
    if (!q)
        return false;
    buf_append(out, p, (size_t)(q - p));
    col->pa += (size_t)(q - p);
    return true;
}

static bool copy_string(struct dec_col *col, struct buf *out)
{
    uint64_t len;
    const char *p = col->a.ptr + col->pa;
    const char *q = coding_varint_dec(p, col->a.ptr + col->a.len, &len);
    if (!q || len > col->b.len - col->pb)
        return false;
    col->pa += (size_t)(q - p);
    put_bytes(out, slice_make(col->b.ptr + col->pb, (size_t)len));
    col->pb += (size_t)len;
    return true;
}

static bool copy_value(struct dec_col *col, struct buf *out)
{
    switch (col->type) {
    case ITEM_TAG:
    case REC_STRING: return copy_string(col, out);
    case REC_INT:
    case REC_UINT: return copy_varint(col, out);
    case REC_BOOL:
        if (col->pa == col->a.len)
            return false;
        buf_putc(out, col->a.ptr[col->pa++]);
        return true;
    default: break;
    }
    uint64_t v;
    if (!planes_next(&col->pl, &v))
        return false;
    if (col->k >= 0)
        v = double_bits((double)coding_unzigzag(v) / pow10_exact[col->k]);
    buf_reserve(out, 8);
    coding_put_u64le(out->data + out->len, v);
    out->len += 8;
    return true;
}

/* Appends the record of the next shape in S_SHAPE to out. */
static bool dec_record(struct dec *d, struct cur *shapes, struct buf *out)
{
    uint64_t s;
    if (!cur_varint(shapes, &s) || s >= d->nshapes)
        return false;
    const struct dec_item *it = d->items + d->shape_first[s];
    uint32_t n = d->shape_n[s], nt = d->shape_ntags[s];
    coding_put_varint(out, nt);
    for (uint32_t i = 0; i < n; i++) {
        if (i == nt)
            coding_put_varint(out, n - nt);
        put_bytes(out, it[i].key);
        if (i >= nt)
            buf_putc(out, (char)it[i].type);
        if (!copy_value(&d->cols[it[i].col], out))
            return false;
    }
    if (n == nt)
        coding_put_varint(out, 0);
    return true;
}

/* Appends an id or value of the form read from forms. */
static bool dec_part(struct dec *d, struct cur *forms, struct cur *shapes, struct cur *raw,
                     struct buf *out)
{
    int form;
    struct slice r;
    if (!cur_byte(forms, &form))
        return false;
    switch (form) {
    case FORM_NONE: return true;
    case FORM_RECORD: return dec_record(d, shapes, out);
    case FORM_RAW:
        if (!cur_bytes(raw, &r))
            return false;
        buf_append(out, r.ptr, r.len);
        return true;
    default: return false;
    }
}

struct dec_rows {
    int layout;
    struct cur s[S_FIXED];
    const uint64_t *ts; /* the deltas, decoded */
    uint64_t row, tskey, ts_gcd;
    size_t next_host, next_event; /* the first names not used yet */
};

/* The name a S_HOST or S_EVENT code stands for, *next moved on; false if
 * there is none. */
static bool dec_name(struct cur *c, size_t *next, size_t nnames, size_t *out)
{
    uint64_t code;
    if (!cur_varint(c, &code))
        return false;
    if (code == 0) {
        if (*next == nnames)
            return false;
        *out = (*next)++;
        return true;
    }
    *out = (size_t)(code - 1);
    return code - 1 < *next;
}

static bool dec_key(struct dec *d, struct dec_rows *r, size_t nhosts, size_t nevents)
{
    size_t h, ev;
    char b[8];
    struct buf *k = &d->key;
    buf_reset(k);
    if (!dec_name(&r->s[S_HOST], &r->next_host, nhosts, &h) ||
        !dec_name(&r->s[S_EVENT], &r->next_event, nevents, &ev))
        return false;
    r->tskey += (uint64_t)coding_unzigzag(r->ts[r->row++]) * r->ts_gcd;
    coding_put_u64be(b, r->tskey);
    if (r->layout == COL_INDEX) {
        buf_append(k, d->hosts[h].ptr, d->hosts[h].len);
        buf_putc(k, 0);
        buf_append(k, b, 8);
        buf_append(k, d->events[ev].ptr, d->events[ev].len);
        buf_putc(k, 0);
        return true;
    }
    if (r->layout == COL_SECTION) {
        buf_append(k, d->hosts[h].ptr, d->hosts[h].len);
        buf_putc(k, 0);
        buf_append(k, d->events[ev].ptr, d->events[ev].len);
        buf_putc(k, 0);
        buf_append(k, b, 8);
        return true;
    }
    if (r->s[S_BUCKET].end - r->s[S_BUCKET].p < 2)
        return false;
    buf_append(k, r->s[S_BUCKET].p, 2);
    r->s[S_BUCKET].p += 2;
    buf_append(k, b, 8);
    buf_append(k, d->hosts[h].ptr, d->hosts[h].len);
    buf_putc(k, 0);
    buf_append(k, d->events[ev].ptr, d->events[ev].len);
    int form;
    if (r->s[S_IDFORM].p == r->s[S_IDFORM].end)
        return false;
    form = (unsigned char)*r->s[S_IDFORM].p;
    if (form == FORM_NONE) {
        r->s[S_IDFORM].p++;
        buf_putc(k, 0);
        return true;
    }
    buf_reset(&d->rec);
    if (!dec_part(d, &r->s[S_IDFORM], &r->s[S_SHAPE], &r->s[S_RAW], &d->rec) || d->rec.len == 0)
        return false;
    buf_putc(k, 1);
    put_bytes(k, slice_make(d->rec.data, d->rec.len));
    return true;
}

static bool dec_trailer(struct dec_rows *r, struct buf *k)
{
    uint64_t seq;
    int kind;
    if (!cur_varint(&r->s[S_SEQ], &seq) || !cur_byte(&r->s[S_KIND], &kind))
        return false;
    buf_reserve(k, IKEY_TRAILER);
    ikey_put_trailer(k->data + k->len, seq, kind);
    k->len += IKEY_TRAILER;
    return true;
}

/* Decodes a form into the raw block: NULL, or what is wrong with it. */
static const char *decode_form(struct slice col, size_t max_raw, struct buf *out)
{
    buf_reset(out);
    struct dec *d = thread_state(&dec_tls, sizeof(struct dec));
    struct cur c = {col.ptr, col.ptr + col.len};
    struct dec_rows r = {0};
    uint64_t n, len[S_FIXED];
    int layout_byte;
    if (!cur_byte(&c, &layout_byte) || !cur_varint(&c, &n))
        return "bad header";
    r.layout = layout_byte & ~LAYOUT_GCD;
    if (r.layout != COL_ROWS && r.layout != COL_INDEX && r.layout != COL_SECTION)
        return "bad header";
    for (int i = 0; i < S_FIXED; i++)
        if (!cur_varint(&c, &len[i]))
            return "bad header";
    for (int i = 0; i < S_FIXED; i++) {
        if (len[i] > (uint64_t)(c.end - c.p))
            return "a stream past the end";
        r.s[i] = (struct cur){c.p, c.p + len[i]};
        c.p += len[i];
    }
    struct planes ts;
    struct cur tc = r.s[S_TS];
    r.ts_gcd = 1;
    if (tc.end - tc.p < 8)
        return "bad stamps";
    r.tskey = coding_get_u64le(tc.p);
    tc.p += 8;
    if ((layout_byte & LAYOUT_GCD) && (!cur_varint(&tc, &r.ts_gcd) || r.ts_gcd < 2))
        return "bad stamps";
    if (len[S_KIND] != n || !planes_init(&ts, slice_make(tc.p, (size_t)(tc.end - tc.p))) ||
        ts.n != n)
        return "kinds or stamps and entries differ";
    r.ts = planes_all(&ts, &d->ts, &d->ts_cap);
    size_t nhosts, nevents;
    d->nitems = d->nshapes = 0;
    d->ncols = 0;
    st_reset(&d->names);
    if (!dec_dict(r.s[S_HOSTS], &d->hosts, &d->hosts_cap, &nhosts) ||
        !dec_dict(r.s[S_EVENTS], &d->events, &d->events_cap, &nevents))
        return "bad dictionary";
    struct cur shapes = r.s[S_SHAPES];
    while (shapes.p < shapes.end) {
        struct slice shape;
        if (d->nshapes >= COL_MAX_SHAPES || !cur_bytes(&shapes, &shape) || !dec_shape(d, shape))
            return "bad shape";
    }
    if (!dec_columns(d, &c))
        return "bad columns";
    if (!d->blk_ready) {
        blk_builder_init(&d->blk);
        d->blk_ready = true;
    }
    blk_builder_reset(&d->blk);
    for (uint64_t i = 0; i < n; i++) {
        buf_reset(&d->val);
        if (!dec_key(d, &r, nhosts, nevents) || !dec_trailer(&r, &d->key) ||
            !dec_part(d, &r.s[S_VALFORM], &r.s[S_SHAPE], &r.s[S_RAW], &d->val))
            return "bad entry";
        blk_add(&d->blk, slice_make(d->key.data, d->key.len), slice_make(d->val.data, d->val.len));
        if (d->blk.data.len > max_raw)
            return "longer than the block";
    }
    for (int i = 0; i < S_FIXED; i++)
        if (i != S_HOSTS && i != S_EVENTS && i != S_SHAPES && i != S_TS && r.s[i].p != r.s[i].end)
            return "a stream not all used";
    for (uint32_t i = 0; i < d->ncols; i++) {
        const struct dec_col *dc = &d->cols[i];
        bool used = dc->type == REC_FLOAT ? dc->pl.next == dc->pl.n
                                          : dc->pa == dc->a.len && dc->pb == dc->b.len;
        if (!used)
            return "a column not all used";
    }
    if (r.next_host != nhosts || r.next_event != nevents)
        return "a name not used";
    struct slice raw = blk_finish(&d->blk);
    if (raw.len > max_raw)
        return "longer than the block";
    buf_append(out, raw.ptr, raw.len);
    return NULL;
}

int col_decode(struct slice col, size_t max_raw, struct buf *out)
{
    const char *why = decode_form(col, max_raw, out);
    return why ? err_corrupt("columnar block: %s", why) : ERR_OK;
}
