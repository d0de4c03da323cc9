/* Columnar data blocks: a row block taken apart into streams (encoder) and
 * put back together (decoder). Every record is split only if rec_encode
 * gives back its exact bytes; anything else is kept whole ("opaque"), so
 * the round trip is exact for any input. */
#include "store/table/colblock.h"

#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "model/record.h"
#include "store/ikey.h"
#include "store/table/block.h"

/* The first byte: the shape of the block's keys. */
enum { SHAPE_ROWS = 1, SHAPE_INDEX = 2 };

enum { MODE_NONE = 0, MODE_REC = 1, MODE_OPAQUE = 2 };
enum { COL_TAG = 0 }; /* column kinds: 0 a tag, else the field's REC_* type */

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

/* --- the distinct strings of a block, numbered in order of first sight --- */

struct intern {
    struct buf keys;
    size_t *off, *len;
    size_t n, cap;
    uint32_t *slots; /* index + 1; 0 is empty */
    size_t nslots;
};

static void intern_destroy(struct intern *in)
{
    buf_destroy(&in->keys);
    free(in->off);
    free(in->len);
    free(in->slots);
}

static void intern_rehash(struct intern *in)
{
    free(in->slots);
    in->nslots = in->nslots ? in->nslots * 2 : 64;
    in->slots = xcalloc(in->nslots, sizeof *in->slots);
    for (size_t i = 0; i < in->n; i++) {
        size_t s = hash_bytes(in->keys.data + in->off[i], in->len[i]) & (in->nslots - 1);
        while (in->slots[s])
            s = (s + 1) & (in->nslots - 1);
        in->slots[s] = (uint32_t)i + 1;
    }
}

static uint32_t intern_get(struct intern *in, const char *p, size_t n)
{
    if (2 * (in->n + 1) > in->nslots)
        intern_rehash(in);
    size_t s = hash_bytes(p, n) & (in->nslots - 1);
    for (; in->slots[s]; s = (s + 1) & (in->nslots - 1)) {
        uint32_t i = in->slots[s] - 1;
        if (in->len[i] == n && memcmp(in->keys.data + in->off[i], p, n) == 0)
            return i;
    }
    if (in->n == in->cap) {
        in->cap = in->cap ? in->cap * 2 : 16;
        in->off = xrealloc(in->off, in->cap * sizeof *in->off);
        in->len = xrealloc(in->len, in->cap * sizeof *in->len);
    }
    in->off[in->n] = in->keys.len;
    in->len[in->n] = n;
    buf_append(&in->keys, p, n);
    in->slots[s] = (uint32_t)in->n + 1;
    return (uint32_t)in->n++;
}

/* --- encoder --- */

struct cur {
    const char *p, *end;
};

static bool take_varint(struct cur *c, uint64_t *v)
{
    const char *q = coding_varint_dec(c->p, c->end, v);
    if (!q)
        return false;
    c->p = q;
    return true;
}

static bool take_bytes(struct cur *c, struct slice *s)
{
    uint64_t n;
    if (!take_varint(c, &n) || n > (uint64_t)(c->end - c->p))
        return false;
    *s = slice_make(c->p, (size_t)n);
    c->p += n;
    return true;
}

struct col {
    int kind;
    struct buf a, b; /* lengths or values; string bytes */
    uint64_t prev;
};

struct enc {
    struct intern hosts, events, cols, schemas;
    struct col *col;
    size_t ncol_cap;
    struct buf bucket, ts, seq, flags, host, event, rschema, opaque;
    uint64_t prev_bucket, prev_ts, prev_seq;
    struct rec_tag *tags;
    struct rec_field *fields;
    size_t tcap, fcap;
    struct buf scratch, ckey;
};

static void enc_destroy(struct enc *e)
{
    intern_destroy(&e->hosts);
    intern_destroy(&e->events);
    intern_destroy(&e->schemas);
    for (size_t i = 0; i < e->cols.n; i++) {
        buf_destroy(&e->col[i].a);
        buf_destroy(&e->col[i].b);
    }
    intern_destroy(&e->cols);
    free(e->col);
    struct buf *bufs[] = {&e->bucket, &e->ts,      &e->seq,    &e->flags,   &e->host,
                          &e->event,  &e->rschema, &e->opaque, &e->scratch, &e->ckey};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        buf_destroy(bufs[i]);
    free(e->tags);
    free(e->fields);
}

struct rowkey {
    uint16_t bucket;
    uint64_t tskey, seq;
    int kind;
    struct slice host, event, id;
    bool has_id;
};

/* Takes an internal row key apart; false if it is not exactly one. */
static bool parse_row_key(struct slice ik, struct rowkey *k)
{
    if (!ikey_ok(ik))
        return false;
    k->kind = ikey_kind(ik);
    k->seq = ikey_seq(ik);
    struct slice u = ikey_user(ik);
    if (u.len < 10 + 2)
        return false;
    k->bucket = coding_get_u16be(u.ptr);
    k->tskey = coding_get_u64be(u.ptr + 2);
    const char *p = u.ptr + 10, *end = u.ptr + u.len;
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
    if (*e == 0) {
        k->has_id = false;
        k->id = slice_make(NULL, 0);
        return e + 1 == end;
    }
    uint64_t n;
    const char *q = coding_varint_dec(e + 1, end, &n);
    if (!q || n == 0 || (size_t)(q - e - 1) != coding_varint_len(n) || n != (uint64_t)(end - q))
        return false;
    k->has_id = true;
    k->id = slice_make(q, (size_t)n);
    return true;
}

/* Takes an internal key of the host index (host | 0x00 | tskey:u64be |
 * event | 0x00) apart; false if it is not exactly one. */
static bool parse_index_key(struct slice ik, struct rowkey *k)
{
    if (!ikey_ok(ik))
        return false;
    k->kind = ikey_kind(ik);
    k->seq = ikey_seq(ik);
    struct slice u = ikey_user(ik);
    const char *p = u.ptr, *end = u.ptr + u.len;
    const char *z = u.len ? memchr(p, 0, u.len) : NULL;
    if (!z || end - z < 1 + 8 + 1 || end[-1] != 0)
        return false;
    k->host = slice_make(p, (size_t)(z - p));
    k->tskey = coding_get_u64be(z + 1);
    p = z + 9;
    k->event = slice_make(p, (size_t)(end - 1 - p));
    if (memchr(k->event.ptr, 0, k->event.len))
        return false;
    k->bucket = 0;
    k->has_id = false;
    k->id = slice_make(NULL, 0);
    return true;
}

static bool parse_key(int shape, struct slice ik, struct rowkey *k)
{
    return shape == SHAPE_ROWS ? parse_row_key(ik, k) : parse_index_key(ik, k);
}

static void push_value(struct col *c, const struct rec_field *f)
{
    uint64_t bits;
    char b8[8];
    switch (c->kind) {
    case REC_FLOAT:
        memcpy(&bits, &f->v.f, 8);
        coding_put_u64le(b8, bits ^ c->prev);
        c->prev = bits;
        buf_append(&c->a, b8, 8);
        break;
    case REC_INT:
    case REC_UINT:
        bits = c->kind == REC_INT ? (uint64_t)f->v.i : f->v.u;
        coding_put_varint(&c->a, zigzag((int64_t)(bits - c->prev)));
        c->prev = bits;
        break;
    case REC_BOOL: buf_putc(&c->a, f->v.b ? 1 : 0); break;
    default: coding_put_varint(&c->a, f->v.s.len); buf_append(&c->b, f->v.s.ptr, f->v.s.len);
    }
}

static uint32_t col_of(struct enc *e, int kind, struct slice name)
{
    buf_reset(&e->ckey);
    buf_putc(&e->ckey, (char)kind);
    buf_append(&e->ckey, name.ptr, name.len);
    size_t before = e->cols.n;
    uint32_t id = intern_get(&e->cols, e->ckey.data, e->ckey.len);
    if (e->cols.n > before) {
        if (e->cols.n > e->ncol_cap) {
            e->ncol_cap = e->cols.cap;
            e->col = xrealloc(e->col, e->ncol_cap * sizeof *e->col);
        }
        struct col *c = &e->col[id];
        memset(c, 0, sizeof *c);
        c->kind = kind;
    }
    return id;
}

static struct rec_tag *more_tags(struct enc *e, size_t n)
{
    if (n == e->tcap) {
        e->tcap = e->tcap ? 2 * e->tcap : 16;
        e->tags = xrealloc(e->tags, e->tcap * sizeof *e->tags);
    }
    return &e->tags[n];
}

static struct rec_field *more_fields(struct enc *e, size_t n)
{
    if (n == e->fcap) {
        e->fcap = e->fcap ? 2 * e->fcap : 16;
        e->fields = xrealloc(e->fields, e->fcap * sizeof *e->fields);
    }
    return &e->fields[n];
}

/* A field's type and payload (model/record.h), without logging: a key id
 * need not be a record. */
static bool take_payload(struct cur *c, struct rec_field *f)
{
    uint64_t v;
    if (c->p == c->end)
        return false;
    f->type = (enum rec_type)(unsigned char)*c->p++;
    switch (f->type) {
    case REC_FLOAT:
        if (c->end - c->p < 8)
            return false;
        v = coding_get_u64le(c->p);
        memcpy(&f->v.f, &v, 8);
        c->p += 8;
        return true;
    case REC_INT:
        if (!take_varint(c, &v))
            return false;
        f->v.i = unzigzag(v);
        return true;
    case REC_UINT: return take_varint(c, &f->v.u);
    case REC_BOOL:
        if (c->p == c->end || (unsigned char)*c->p > 1)
            return false;
        f->v.b = *c->p++ == 1;
        return true;
    case REC_STRING: return take_bytes(c, &f->v.s);
    default: return false;
    }
}

/* Reads record r into e->tags / e->fields; false unless it is one and
 * rec_encode gives back exactly its bytes. */
static bool split_record(struct enc *e, struct slice r, size_t *nt, size_t *nf)
{
    struct cur c = {r.ptr, r.ptr + r.len};
    uint64_t n;
    *nt = *nf = 0;
    if (!take_varint(&c, &n) || n > r.len)
        return false;
    for (; *nt < n; (*nt)++) {
        struct rec_tag *t = more_tags(e, *nt);
        if (!take_bytes(&c, &t->key) || !take_bytes(&c, &t->value))
            return false;
    }
    if (!take_varint(&c, &n) || n > r.len)
        return false;
    for (; *nf < n; (*nf)++) {
        struct rec_field *f = more_fields(e, *nf);
        if (!take_bytes(&c, &f->key) || !take_payload(&c, f))
            return false;
    }
    if (c.p != c.end)
        return false;
    buf_reset(&e->scratch);
    rec_encode(&e->scratch, e->tags, *nt, e->fields, *nf);
    return e->scratch.len == r.len && memcmp(e->scratch.data, r.ptr, r.len) == 0;
}

/* Adds record r (id or value) to the columns, or whole to the opaque
 * stream; returns its mode. */
static int add_record(struct enc *e, struct slice r)
{
    size_t nt, nf;
    if (!split_record(e, r, &nt, &nf)) {
        coding_put_varint(&e->opaque, r.len);
        buf_append(&e->opaque, r.ptr, r.len);
        return MODE_OPAQUE;
    }
    buf_reset(&e->scratch);
    coding_put_varint(&e->scratch, nt);
    coding_put_varint(&e->scratch, nf);
    for (size_t i = 0; i < nt; i++) {
        uint32_t c = col_of(e, COL_TAG, e->tags[i].key);
        coding_put_varint(&e->scratch, c);
        struct col *col = &e->col[c];
        coding_put_varint(&col->a, e->tags[i].value.len);
        buf_append(&col->b, e->tags[i].value.ptr, e->tags[i].value.len);
    }
    for (size_t i = 0; i < nf; i++) {
        uint32_t c = col_of(e, (int)e->fields[i].type, e->fields[i].key);
        coding_put_varint(&e->scratch, c);
        push_value(&e->col[c], &e->fields[i]);
    }
    coding_put_varint(&e->rschema, intern_get(&e->schemas, e->scratch.data, e->scratch.len));
    return MODE_REC;
}

static void put_delta(struct buf *b, uint64_t *prev, uint64_t v)
{
    coding_put_varint(b, zigzag((int64_t)(v - *prev)));
    *prev = v;
}

static void add_entry(struct enc *e, const struct rowkey *k, struct slice value)
{
    put_delta(&e->bucket, &e->prev_bucket, k->bucket);
    put_delta(&e->ts, &e->prev_ts, k->tskey);
    put_delta(&e->seq, &e->prev_seq, k->seq);
    coding_put_varint(&e->host, intern_get(&e->hosts, k->host.ptr, k->host.len));
    coding_put_varint(&e->event, intern_get(&e->events, k->event.ptr, k->event.len));
    int idm = k->has_id ? add_record(e, k->id) : MODE_NONE;
    int vm = value.len ? add_record(e, value) : MODE_NONE;
    buf_putc(&e->flags, (char)(k->kind | idm << 2 | vm << 4));
}

static void put_stream(struct buf *out, const char *p, size_t n)
{
    coding_put_varint(out, n);
    buf_append(out, p, n);
}

static void put_buf(struct buf *out, const struct buf *b)
{
    put_stream(out, b->data, b->len);
}

/* A dictionary stream: count, then each string with its length. */
static void put_dict(struct buf *out, const struct intern *in, bool kind_first)
{
    struct buf s = BUF_INIT;
    coding_put_varint(&s, in->n);
    for (size_t i = 0; i < in->n; i++) {
        const char *p = in->keys.data + in->off[i];
        size_t n = in->len[i];
        if (kind_first) { /* a column: kind byte, then the name */
            buf_putc(&s, p[0]);
            p++;
            n--;
        }
        coding_put_varint(&s, n);
        buf_append(&s, p, n);
    }
    put_buf(out, &s);
    buf_destroy(&s);
}

/* Floats go byte plane by byte plane: the XORs' zero high bytes line up. */
static void put_floats(struct buf *out, const struct buf *a)
{
    size_t n = a->len / 8;
    coding_put_varint(out, a->len);
    buf_reserve(out, a->len);
    char *d = out->data + out->len;
    for (size_t j = 0; j < 8; j++)
        for (size_t i = 0; i < n; i++)
            d[j * n + i] = a->data[i * 8 + j];
    out->len += a->len;
}

static void enc_output(struct enc *e, int shape, size_t n, struct buf *out)
{
    buf_putc(out, (char)shape);
    coding_put_varint(out, n);
    put_dict(out, &e->hosts, false);
    put_dict(out, &e->events, false);
    put_dict(out, &e->cols, true);
    struct buf s = BUF_INIT;
    coding_put_varint(&s, e->schemas.n);
    buf_append(&s, e->schemas.keys.data, e->schemas.keys.len);
    put_buf(out, &s);
    buf_destroy(&s);
    const struct buf *streams[] = {&e->bucket, &e->ts,    &e->seq,     &e->flags,
                                   &e->host,   &e->event, &e->rschema, &e->opaque};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        put_buf(out, streams[i]);
    for (size_t i = 0; i < e->cols.n; i++) {
        const struct col *c = &e->col[i];
        if (c->kind == REC_FLOAT)
            put_floats(out, &c->a);
        else
            put_buf(out, &c->a);
        if (c->kind == COL_TAG || c->kind == REC_STRING)
            put_buf(out, &c->b);
    }
}

bool colblock_encode(struct slice raw, struct buf *out)
{
    struct blk blk;
    if (blk_parse(raw, &blk))
        return false;
    struct enc e;
    memset(&e, 0, sizeof e);
    struct iter *it = blk_iter(&blk);
    size_t n = 0;
    bool ok = true;
    int shape = 0;
    for (it_seek_first(it); it_valid(it); it_next(it), n++) {
        struct rowkey k;
        if (!shape) /* the first key decides */
            shape = parse_row_key(it_key(it), &k) ? SHAPE_ROWS : SHAPE_INDEX;
        if (!parse_key(shape, it_key(it), &k)) {
            ok = false;
            break;
        }
        add_entry(&e, &k, it_value(it));
    }
    if (it_status(it) || n == 0)
        ok = false;
    it_destroy(it);
    if (ok)
        enc_output(&e, shape, n, out);
    enc_destroy(&e);
    return ok;
}

/* --- decoder --- */

/* A length-prefixed byte run of c. */
static bool get_run(struct cur *c, struct cur *run)
{
    uint64_t n;
    if (!take_varint(c, &n) || n > (uint64_t)(c->end - c->p))
        return false;
    run->p = c->p;
    run->end = c->p + n;
    c->p += n;
    return true;
}

static bool get_bytes(struct cur *c, size_t n, struct slice *s)
{
    if (n > (size_t)(c->end - c->p))
        return false;
    *s = slice_make(c->p, n);
    c->p += n;
    return true;
}

struct dcol {
    int kind;
    struct slice name;
    struct cur a, b;
    const char *fbase; /* floats: the byte planes */
    size_t fcount, fnext;
    uint64_t prev;
};

struct schema {
    uint32_t ntags, nfields;
    uint32_t *ids;
};

struct dec {
    int shape;
    struct slice *hosts, *events;
    size_t nhosts, nevents;
    struct dcol *cols;
    size_t ncols;
    struct schema *schemas;
    uint32_t *ids;
    size_t nschemas, maxt, maxf;
    struct cur bucket, ts, seq, flags, host, event, rschema, opaque;
    uint64_t prev_bucket, prev_ts, prev_seq;
    struct rec_tag *tags;
    struct rec_field *fields;
    struct buf key, prev_key, id, value;
};

static void dec_destroy(struct dec *d)
{
    free(d->hosts);
    free(d->events);
    free(d->cols);
    free(d->schemas);
    free(d->ids);
    free(d->tags);
    free(d->fields);
    buf_destroy(&d->key);
    buf_destroy(&d->prev_key);
    buf_destroy(&d->id);
    buf_destroy(&d->value);
}

static bool get_dict(struct cur *c, struct slice **out, size_t *n)
{
    struct cur s;
    uint64_t cnt, len;
    if (!get_run(c, &s) || !take_varint(&s, &cnt) || cnt > (uint64_t)(s.end - s.p))
        return false;
    *out = xcalloc(cnt ? (size_t)cnt : 1, sizeof **out);
    *n = (size_t)cnt;
    for (size_t i = 0; i < cnt; i++)
        if (!take_varint(&s, &len) || !get_bytes(&s, (size_t)len, &(*out)[i]))
            return false;
    return s.p == s.end;
}

static bool get_cols(struct dec *d, struct cur *c)
{
    struct cur s;
    uint64_t cnt, len;
    if (!get_run(c, &s) || !take_varint(&s, &cnt) || cnt > (uint64_t)(s.end - s.p))
        return false;
    d->cols = xcalloc(cnt ? (size_t)cnt : 1, sizeof *d->cols);
    d->ncols = (size_t)cnt;
    for (size_t i = 0; i < cnt; i++) {
        struct dcol *col = &d->cols[i];
        if (s.p == s.end)
            return false;
        col->kind = (unsigned char)*s.p++;
        if (col->kind > REC_STRING || !take_varint(&s, &len) ||
            !get_bytes(&s, (size_t)len, &col->name))
            return false;
    }
    return s.p == s.end;
}

static bool get_schemas(struct dec *d, struct cur *c)
{
    struct cur s;
    uint64_t cnt, nt, nf, id;
    if (!get_run(c, &s) || !take_varint(&s, &cnt) || cnt > (uint64_t)(s.end - s.p))
        return false;
    size_t room = (size_t)(s.end - s.p);
    d->schemas = xcalloc(cnt ? (size_t)cnt : 1, sizeof *d->schemas);
    d->ids = xcalloc(room ? room : 1, sizeof *d->ids);
    d->nschemas = (size_t)cnt;
    size_t used = 0;
    for (size_t i = 0; i < cnt; i++) {
        struct schema *sc = &d->schemas[i];
        if (!take_varint(&s, &nt) || !take_varint(&s, &nf) || nt > (uint64_t)(s.end - s.p) ||
            nf > (uint64_t)(s.end - s.p) - nt)
            return false;
        sc->ntags = (uint32_t)nt;
        sc->nfields = (uint32_t)nf;
        sc->ids = d->ids + used;
        for (uint64_t j = 0; j < nt + nf; j++) {
            if (!take_varint(&s, &id) || id >= d->ncols)
                return false;
            if ((d->cols[id].kind == COL_TAG) != (j < nt))
                return false;
            d->ids[used++] = (uint32_t)id;
        }
        if (nt > d->maxt)
            d->maxt = (size_t)nt;
        if (nf > d->maxf)
            d->maxf = (size_t)nf;
    }
    return s.p == s.end;
}

static bool get_col_streams(struct dec *d, struct cur *c)
{
    for (size_t i = 0; i < d->ncols; i++) {
        struct dcol *col = &d->cols[i];
        if (!get_run(c, &col->a))
            return false;
        if (col->kind == REC_FLOAT) {
            size_t len = (size_t)(col->a.end - col->a.p);
            if (len % 8)
                return false;
            col->fbase = col->a.p;
            col->fcount = len / 8;
        }
        if ((col->kind == COL_TAG || col->kind == REC_STRING) && !get_run(c, &col->b))
            return false;
    }
    return c->p == c->end;
}

static bool dec_header(struct dec *d, struct cur *c, uint64_t *n)
{
    if (c->p == c->end)
        return false;
    d->shape = (unsigned char)*c->p++;
    if ((d->shape != SHAPE_ROWS && d->shape != SHAPE_INDEX) || !take_varint(c, n))
        return false;
    if (!get_dict(c, &d->hosts, &d->nhosts) || !get_dict(c, &d->events, &d->nevents))
        return false;
    for (size_t i = 0; i < d->nhosts; i++)
        if (memchr(d->hosts[i].ptr, 0, d->hosts[i].len))
            return false;
    for (size_t i = 0; i < d->nevents; i++)
        if (memchr(d->events[i].ptr, 0, d->events[i].len) ||
            (d->shape == SHAPE_ROWS && memchr(d->events[i].ptr, 1, d->events[i].len)))
            return false;
    if (!get_cols(d, c) || !get_schemas(d, c))
        return false;
    struct cur *streams[] = {&d->bucket, &d->ts,    &d->seq,     &d->flags,
                             &d->host,   &d->event, &d->rschema, &d->opaque};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        if (!get_run(c, streams[i]))
            return false;
    if (*n == 0 || *n != (uint64_t)(d->flags.end - d->flags.p))
        return false;
    d->tags = xcalloc(d->maxt + 1, sizeof *d->tags);
    d->fields = xcalloc(d->maxf + 1, sizeof *d->fields);
    return get_col_streams(d, c);
}

static bool get_value(struct dcol *c, struct rec_field *f)
{
    uint64_t v;
    f->key = c->name;
    f->type = (enum rec_type)c->kind;
    switch (c->kind) {
    case REC_FLOAT:
        if (c->fnext >= c->fcount)
            return false;
        v = 0;
        for (size_t j = 0; j < 8; j++)
            v |= (uint64_t)(unsigned char)c->fbase[j * c->fcount + c->fnext] << (8 * j);
        c->fnext++;
        c->prev ^= v;
        memcpy(&f->v.f, &c->prev, 8);
        c->a.p += 8;
        return true;
    case REC_INT:
    case REC_UINT:
        if (!take_varint(&c->a, &v))
            return false;
        c->prev += (uint64_t)unzigzag(v);
        if (c->kind == REC_INT)
            f->v.i = (int64_t)c->prev;
        else
            f->v.u = c->prev;
        return true;
    case REC_BOOL:
        if (c->a.p == c->a.end || (unsigned char)*c->a.p > 1)
            return false;
        f->v.b = *c->a.p++ == 1;
        return true;
    default: return take_varint(&c->a, &v) && get_bytes(&c->b, (size_t)v, &f->v.s);
    }
}

/* Appends the record of the next schema number to out. */
static bool get_record(struct dec *d, struct buf *out)
{
    uint64_t si, len;
    if (!take_varint(&d->rschema, &si) || si >= d->nschemas)
        return false;
    const struct schema *s = &d->schemas[si];
    for (uint32_t i = 0; i < s->ntags; i++) {
        struct dcol *c = &d->cols[s->ids[i]];
        d->tags[i].key = c->name;
        if (!take_varint(&c->a, &len) || !get_bytes(&c->b, (size_t)len, &d->tags[i].value))
            return false;
    }
    for (uint32_t i = 0; i < s->nfields; i++)
        if (!get_value(&d->cols[s->ids[s->ntags + i]], &d->fields[i]))
            return false;
    rec_encode(out, d->tags, s->ntags, d->fields, s->nfields);
    return true;
}

static bool get_part(struct dec *d, int mode, struct buf *out)
{
    uint64_t len;
    struct slice s;
    buf_reset(out);
    if (mode == MODE_REC)
        return get_record(d, out);
    if (mode == MODE_OPAQUE) {
        if (!take_varint(&d->opaque, &len) || !get_bytes(&d->opaque, (size_t)len, &s))
            return false;
        buf_append(out, s.ptr, s.len);
    }
    return true;
}

static bool get_delta(struct cur *c, uint64_t *prev)
{
    uint64_t v;
    if (!take_varint(c, &v))
        return false;
    *prev += (uint64_t)unzigzag(v);
    return true;
}

static bool add_ikey_trailer(struct buf *k, uint64_t seq, int kind)
{
    buf_reserve(k, IKEY_TRAILER);
    ikey_put_trailer(k->data + k->len, seq, kind);
    k->len += IKEY_TRAILER;
    return true;
}

/* The user key of the host index. */
static bool index_key(struct buf *k, struct slice host, uint64_t tskey, struct slice event)
{
    buf_append(k, host.ptr, host.len);
    buf_putc(k, 0);
    buf_reserve(k, 8);
    coding_put_u64be(k->data + k->len, tskey);
    k->len += 8;
    buf_append(k, event.ptr, event.len);
    buf_putc(k, 0);
    return true;
}

/* Builds the next entry's internal key in d->key and value in d->value. */
static bool dec_entry(struct dec *d)
{
    uint64_t h, ev;
    int f = (unsigned char)*d->flags.p++;
    int kind = f & 3, idm = f >> 2 & 3, vm = f >> 4 & 3;
    if (kind > IKEY_MERGE || idm > MODE_OPAQUE || vm > MODE_OPAQUE || f >> 6)
        return false;
    if (!get_delta(&d->bucket, &d->prev_bucket) || d->prev_bucket > 0xffff ||
        !get_delta(&d->ts, &d->prev_ts) || !get_delta(&d->seq, &d->prev_seq) ||
        !take_varint(&d->host, &h) || h >= d->nhosts || !take_varint(&d->event, &ev) ||
        ev >= d->nevents)
        return false;
    if (!get_part(d, idm, &d->id) || !get_part(d, vm, &d->value))
        return false;
    if (idm != MODE_NONE && d->id.len == 0)
        return false;
    struct buf *k = &d->key;
    struct slice hs = d->hosts[h], es = d->events[ev];
    buf_reset(k);
    if (d->shape == SHAPE_INDEX)
        return idm == MODE_NONE && d->prev_bucket == 0 && index_key(k, hs, d->prev_ts, es) &&
               add_ikey_trailer(k, d->prev_seq, kind);
    buf_reserve(k, 10 + hs.len + 1 + es.len + 11 + d->id.len + IKEY_TRAILER);
    coding_put_u16be(k->data, (uint16_t)d->prev_bucket);
    coding_put_u64be(k->data + 2, d->prev_ts);
    k->len = 10;
    buf_append(k, hs.ptr, hs.len);
    buf_putc(k, 0);
    buf_append(k, es.ptr, es.len);
    if (idm == MODE_NONE) {
        buf_putc(k, 0);
    } else {
        buf_putc(k, 1);
        coding_put_varint(k, d->id.len);
        buf_append(k, d->id.data, d->id.len);
    }
    return add_ikey_trailer(k, d->prev_seq, kind);
}

static bool all_used(const struct dec *d)
{
    const struct cur *streams[] = {&d->bucket, &d->ts,    &d->seq,     &d->flags,
                                   &d->host,   &d->event, &d->rschema, &d->opaque};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        if (streams[i]->p != streams[i]->end)
            return false;
    for (size_t i = 0; i < d->ncols; i++) {
        const struct dcol *c = &d->cols[i];
        if (c->kind == REC_FLOAT ? c->fnext != c->fcount : c->a.p != c->a.end)
            return false;
        if ((c->kind == COL_TAG || c->kind == REC_STRING) && c->b.p != c->b.end)
            return false;
    }
    return true;
}

static int dec_entries(struct dec *d, uint64_t n, size_t max, struct blk_builder *b)
{
    for (uint64_t i = 0; i < n; i++) {
        if (!dec_entry(d))
            return err_corrupt("columnar block: bad entry %llu", (unsigned long long)i);
        struct slice k = slice_make(d->key.data, d->key.len);
        if (i && slice_cmp(k, slice_make(d->prev_key.data, d->prev_key.len)) <= 0)
            return err_corrupt("columnar block: key %llu out of order", (unsigned long long)i);
        blk_add(b, k, slice_make(d->value.data, d->value.len));
        if (blk_size(b) > max)
            return err_corrupt("columnar block: decodes past %zu bytes", max);
        struct buf t = d->prev_key;
        d->prev_key = d->key;
        d->key = t;
    }
    if (!all_used(d))
        return err_corrupt("columnar block: bytes left over");
    return ERR_OK;
}

int colblock_decode(struct slice col, size_t max, struct buf *out)
{
    struct dec d;
    struct cur c = {col.ptr, col.ptr + col.len};
    uint64_t n = 0;
    memset(&d, 0, sizeof d);
    buf_reset(out);
    int rc = dec_header(&d, &c, &n) ? ERR_OK : err_corrupt("columnar block: bad header");
    if (!rc) {
        struct blk_builder b;
        blk_builder_init(&b);
        rc = dec_entries(&d, n, max, &b);
        if (!rc) {
            struct slice raw = blk_finish(&b);
            buf_reserve_exact(out, raw.len);
            buf_append(out, raw.ptr, raw.len);
        }
        blk_builder_destroy(&b);
    }
    dec_destroy(&d);
    return rc;
}
