/* The host section's builder (series.h): rows collected as the table's
 * entries go by, sorted by their index key at the finish. */
#include "store/series.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/err.h"
#include "model/key.h"
#include "model/record.h"
#include "store/ikey.h"

struct ser_row {
    size_t off;          /* in rows: user key, then value */
    uint32_t klen, vlen; /* bytes of each */
    uint32_t ord;        /* order of arrival: ties keep it */
    const char *ptr;     /* off resolved, at the finish */
};

struct ser_builder {
    struct sst_section section;
    bool desc, off;
    uint64_t max_seq;
    /* the key being read: its user key, whether its versions still fold
     * (the newest were merges), its folded value, whether it is a row */
    struct buf ukey, acc, tmp;
    bool have, open, live;
    /* the rows: index keys and numeric records, back to back */
    struct buf rows;
    struct ser_row *row;
    size_t nrow, caprow;
    /* scratch for a row's numeric fields */
    struct rec_field *f;
    size_t nf, capf;
    struct buf rec;
    /* names of fields holding a string somewhere, sorted */
    struct buf *strs;
    size_t nstrs;
};

static void b_off(struct ser_builder *b)
{
    b->off = true;
}

/* Notes a field name that holds a string. */
static void note_string(struct ser_builder *b, struct slice name)
{
    size_t lo = 0, hi = b->nstrs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = slice_cmp(slice_make(b->strs[mid].data, b->strs[mid].len), name);
        if (c == 0)
            return;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (b->nstrs >= SER_MAX_STRING_NAMES) {
        b_off(b);
        return;
    }
    b->strs = xrealloc(b->strs, (b->nstrs + 1) * sizeof *b->strs);
    memmove(&b->strs[lo + 1], &b->strs[lo], (b->nstrs - lo) * sizeof *b->strs);
    buf_init(&b->strs[lo]);
    buf_append(&b->strs[lo], name.ptr, name.len);
    b->nstrs++;
}

/* The row of the key read so far, if it is one: its index key and the
 * record of its numeric fields appended to rows. */
static void emit(struct ser_builder *b)
{
    if (!b->have || !b->live || b->off)
        return;
    struct key_row kr;
    struct rec_row_reader rr;
    struct slice uk = slice_make(b->ukey.data, b->ukey.len);
    if (key_decode_row(uk, b->desc, &kr) != ERR_OK ||
        rec_row_init(&rr, kr.id, slice_make(b->acc.data, b->acc.len)) != ERR_OK) {
        b_off(b);
        return;
    }
    b->nf = 0;
    struct rec_field fl;
    int rc;
    while ((rc = rec_row_next_field(&rr, &fl)) == 1) {
        if (fl.type == REC_STRING) {
            note_string(b, fl.key);
            continue;
        }
        if (b->nf == b->capf)
            b->f = xrealloc(b->f, (b->capf = b->capf ? 2 * b->capf : 8) * sizeof *b->f);
        b->f[b->nf++] = fl;
    }
    if (rc < 0) {
        b_off(b);
        return;
    }
    buf_reset(&b->rec);
    rec_encode(&b->rec, NULL, 0, b->f, b->nf);
    size_t off = b->rows.len;
    ser_key(&b->rows, kr.host, &kr.event, kr.ts, b->desc, false);
    size_t klen = b->rows.len - off;
    buf_append(&b->rows, b->rec.data, b->rec.len);
    if (b->nrow == b->caprow)
        b->row = xrealloc(b->row, (b->caprow = b->caprow ? 2 * b->caprow : 1024) * sizeof *b->row);
    if (b->nrow >= UINT32_MAX || klen > UINT32_MAX || b->rec.len > UINT32_MAX) {
        b_off(b);
        return;
    }
    b->row[b->nrow] =
        (struct ser_row){off, (uint32_t)klen, (uint32_t)b->rec.len, (uint32_t)b->nrow, NULL};
    b->nrow++;
}

/* Folds an older version into the key's row (reader's rule: merges fold
 * down to the first put; a delete stops it). */
static void fold(struct ser_builder *b, int kind, struct slice value)
{
    if (kind == IKEY_DEL) {
        b->open = false;
        return;
    }
    buf_reset(&b->tmp);
    if (rec_merge(&b->tmp, slice_make(b->acc.data, b->acc.len), value) != ERR_OK) {
        b_off(b);
        return;
    }
    struct buf t = b->acc;
    b->acc = b->tmp;
    b->tmp = t;
    b->open = kind == IKEY_MERGE;
}

static void ser_entry(struct sst_section *s, struct slice ik, struct slice value, int64_t ts)
{
    (void)ts;
    struct ser_builder *b = (struct ser_builder *)s;
    if (b->off)
        return;
    if (!ikey_ok(ik)) {
        b_off(b);
        return;
    }
    uint64_t seq = ikey_seq(ik);
    if (seq > b->max_seq)
        b->max_seq = seq;
    struct slice uk = ikey_user(ik);
    int kind = ikey_kind(ik);
    if (b->have && slice_eq(uk, slice_make(b->ukey.data, b->ukey.len))) {
        if (b->open)
            fold(b, kind, value);
        return;
    }
    emit(b);
    buf_reset(&b->ukey);
    buf_append(&b->ukey, uk.ptr, uk.len);
    buf_reset(&b->acc);
    b->have = true;
    b->live = kind != IKEY_DEL;
    b->open = kind == IKEY_MERGE;
    if (b->live)
        buf_append(&b->acc, value.ptr, value.len);
}

static int cmp_row(const void *x, const void *y)
{
    const struct ser_row *a = x, *c = y;
    int r = slice_cmp(slice_make(a->ptr, a->klen), slice_make(c->ptr, c->klen));
    return r ? r : (a->ord > c->ord) - (a->ord < c->ord);
}

static void put_names(struct ser_builder *b, struct buf *names)
{
    char v[10];
    buf_append(names, v, coding_varint_enc(v, b->max_seq));
    buf_append(names, v, coding_varint_enc(v, b->nstrs));
    for (size_t i = 0; i < b->nstrs; i++) {
        buf_append(names, v, coding_varint_enc(v, b->strs[i].len));
        buf_append(names, b->strs[i].data, b->strs[i].len);
    }
}

static int ser_finish(struct sst_section *s,
                      int (*put)(void *arg, struct slice ikey, struct slice value), void *arg,
                      struct buf *names)
{
    struct ser_builder *b = (struct ser_builder *)s;
    emit(b);
    b->have = false;
    if (b->off || b->nrow == 0)
        return ERR_NOTFOUND;
    for (size_t i = 0; i < b->nrow; i++)
        b->row[i].ptr = b->rows.data + b->row[i].off;
    qsort(b->row, b->nrow, sizeof *b->row, cmp_row);
    struct buf ik = BUF_INIT;
    int rc = ERR_OK;
    for (size_t i = 0, j; i < b->nrow && !rc; i = j) {
        /* rows of one (host, ts, event): sequences m - 1 down to 0, so that
         * their internal keys ascend in this order */
        for (j = i + 1; j < b->nrow && slice_eq(slice_make(b->row[i].ptr, b->row[i].klen),
                                                slice_make(b->row[j].ptr, b->row[j].klen));
             j++)
            ;
        for (size_t k = i; k < j && !rc; k++) {
            const struct ser_row *r = &b->row[k];
            buf_reset(&ik);
            ikey_append(&ik, slice_make(r->ptr, r->klen), j - 1 - k, IKEY_PUT);
            rc = put(arg, slice_make(ik.data, ik.len), slice_make(r->ptr + r->klen, r->vlen));
        }
    }
    buf_destroy(&ik);
    if (!rc)
        put_names(b, names);
    return rc;
}

struct ser_builder *ser_builder_new(bool desc)
{
    struct ser_builder *b = xcalloc(1, sizeof *b);
    b->section.entry = ser_entry;
    b->section.finish = ser_finish;
    b->desc = desc;
    return b;
}

void ser_builder_free(struct ser_builder *b)
{
    if (!b)
        return;
    buf_destroy(&b->ukey);
    buf_destroy(&b->acc);
    buf_destroy(&b->tmp);
    buf_destroy(&b->rows);
    buf_destroy(&b->rec);
    free(b->row);
    free(b->f);
    for (size_t i = 0; i < b->nstrs; i++)
        buf_destroy(&b->strs[i]);
    free(b->strs);
    free(b);
}

struct sst_section *ser_builder_section(struct ser_builder *b)
{
    return &b->section;
}

void ser_key(struct buf *out, struct slice host, const struct slice *event, int64_t ts, bool desc,
             bool no_ts)
{
    buf_append(out, host.ptr, host.len);
    buf_putc(out, '\0');
    if (!event)
        return;
    buf_append(out, event->ptr, event->len);
    buf_putc(out, '\0');
    if (no_ts)
        return;
    char b[8];
    coding_put_u64be(b, key_tskey(ts, desc));
    buf_append(out, b, 8);
}

/* --- the names block --- */

static const char *names_start(struct slice names, uint64_t *max_seq, uint64_t *n)
{
    const char *p = names.ptr, *end = p + names.len;
    if (!(p = rec_walk_varint(p, end, max_seq)) || !(p = rec_walk_varint(p, end, n)))
        return NULL;
    return p;
}

bool ser_names_max_seq(struct slice names, uint64_t *max_seq)
{
    uint64_t n;
    return names_start(names, max_seq, &n) != NULL;
}

bool ser_names_has(struct slice names, struct slice field)
{
    uint64_t seq, n;
    const char *p = names_start(names, &seq, &n), *end = names.ptr + names.len;
    if (!p)
        return true;
    for (; n; n--) {
        struct slice name;
        if (!(p = rec_walk_bytes(p, end, &name)))
            return true;
        if (slice_eq(name, field))
            return true;
    }
    return p != end;
}
