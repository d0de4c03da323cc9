/* store_catalog: a discovery query as the union of the snapshot's tables'
 * catalogs (catalog_int.h) and its memtables, reading the rows a catalog
 * cannot decide: where the range cuts a slot, a table without catalog, a
 * tag key over the cap, a level without pairs or their items. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/key.h"
#include "model/record.h"
#include "store/catalog_int.h"
#include "store/ikey.h"
#include "store/store_int.h"

/* --- lookups in a loaded catalog --- */

/* The string's index, or CAT_NONE. */
static uint32_t find_str(const struct cat_file *c, struct slice x)
{
    uint32_t lo = 0, hi = c->nstr;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int r = slice_cmp(cs(c, mid), x);
        if (r == 0)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return CAT_NONE;
}

/* The position of string s in a sorted array of strings, or CAT_NONE. */
static uint32_t find_in(const uint32_t *v, size_t stride, uint32_t n, uint32_t s)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t x = *(const uint32_t *)((const char *)v + mid * stride);
        if (x == s)
            return mid;
        if (x < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return CAT_NONE;
}

static uint32_t find_host(const struct cat_file *c, struct slice host)
{
    uint32_t s = find_str(c, host);
    return s == CAT_NONE ? CAT_NONE : find_in(c->host, sizeof *c->host, c->nhost, s);
}

bool cat_file_has_host(const struct cat_file *c, struct slice host)
{
    return find_host(c, host) != CAT_NONE;
}

size_t cat_file_nhosts(const struct cat_file *c)
{
    return c->nhost;
}

static uint32_t find_event(const struct cat_file *c, struct slice event)
{
    uint32_t s = find_str(c, event);
    return s == CAT_NONE ? CAT_NONE : find_in(&c->ev[0].name, sizeof *c->ev, c->nev, s);
}

static const struct cat_pair *find_pair(const struct cat_file *c, const struct cat_event *e,
                                        uint32_t host)
{
    uint32_t i = find_in(&c->pair[e->pair0].host, sizeof *c->pair, e->npair, host);
    return i == CAT_NONE ? NULL : &c->pair[e->pair0 + i];
}

/* The first item of e at or after (kind, key) (key CAT_NONE: the kind's first). */
static uint32_t item_lower(const struct cat_file *c, const struct cat_event *e, int kind,
                           uint32_t key)
{
    uint32_t lo = e->item0, hi = e->item0 + e->nitem;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct cat_item *it = &c->item[mid];
        bool before = it->kind < kind || (it->kind == kind && key != CAT_NONE && it->key < key);
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* --- queries --- */

/* Which of a table's slots a range holds whole (in) or in part (part). */
struct slots {
    uint64_t in, part;
    uint16_t in16, part16;
};

#define PAIR_SPAN (CAT_SLOTS / CAT_PAIR_SLOTS)

static int64_t clamp128(__int128 v)
{
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* The ts bounds of slot i of span fine slots. */
static void slot_bounds(const struct cat_file *c, unsigned i, unsigned span, int64_t *a, int64_t *b)
{
    __int128 s = (__int128)c->base + (__int128)c->width * i * span;
    *a = clamp128(s);
    *b = clamp128(s + (__int128)c->width * span - 1);
}

/* A fine slot's bits by its bounds, one slot at a time. */
static void slots_each(const struct cat_file *c, int64_t lo, int64_t hi, struct slots *s)
{
    for (unsigned i = 0; i < CAT_SLOTS; i++) {
        int64_t a, b;
        slot_bounds(c, i, 1, &a, &b);
        if (b < lo || a > hi)
            continue;
        if (a >= lo && b <= hi)
            s->in |= 1ULL << i;
        else
            s->part |= 1ULL << i;
    }
}

/* The slots [lo, hi] holds whole (in) and in part: those it overlaps are
 * a run from the slot of lo to the slot of hi, of which only the two ends
 * may be partial. Where a slot's bounds would pass INT64_MAX (and be
 * clamped), slot by slot instead. */
_Static_assert(CAT_SLOTS == 64, "a table's fine slots are the bits of a uint64_t");

static void slots_of(const struct cat_file *c, int64_t lo, int64_t hi, struct slots *s)
{
    memset(s, 0, sizeof *s);
    __int128 base = c->base, w = c->width, end = base + w * CAT_SLOTS - 1;
    if (w <= 0 || end > INT64_MAX) {
        slots_each(c, lo, hi, s);
    } else if (hi >= base && lo <= end && lo <= hi) {
        unsigned first = lo <= base ? 0 : (unsigned)((lo - base) / w);
        unsigned last = hi >= end ? CAT_SLOTS - 1 : (unsigned)((hi - base) / w);
        uint64_t run =
            (last == CAT_SLOTS - 1 ? ~0ULL : (1ULL << (last + 1)) - 1) & ~((1ULL << first) - 1);
        s->in = run;
        unsigned ends[2] = {first, last};
        for (unsigned k = 0; k < 2; k++) {
            int64_t a, b;
            slot_bounds(c, ends[k], 1, &a, &b);
            if (a < lo || b > hi) {
                s->in &= ~(1ULL << ends[k]);
                s->part |= 1ULL << ends[k];
            }
        }
    }
    for (unsigned j = 0; j < CAT_PAIR_SLOTS; j++) {
        uint64_t m = ((1ULL << PAIR_SPAN) - 1) << (j * PAIR_SPAN);
        if ((s->in & m) == m)
            s->in16 |= (uint16_t)(1u << j);
        else if ((s->in | s->part) & m)
            s->part16 |= (uint16_t)(1u << j);
    }
}

struct rname {
    const char *p;
    uint32_t len, hash;
    uint8_t type;
};

/* A name a catalog could not decide: carried by rows of the slots bits
 * (of span fine slots) of table c, in bucket, of which the range holds
 * only a part. */
struct pend {
    struct rname n;
    const struct cat_file *c;
    uint64_t bits;
    unsigned span;
    uint32_t bucket;
};

struct ivl {
    int64_t a, b;
};

struct ivls {
    struct ivl *v;
    size_t n, cap;
};

struct cq {
    const struct store_cat_query *q;
    struct store_snap *snap;
    struct store_db *db;
    int64_t lo, hi;
    struct rname *names; /* the answer so far */
    size_t nnames, capnames;
    struct imap set;
    struct pend *pend;
    size_t npend, cappend;
    struct ivls *resid;    /* per bucket: ranges whose rows must be read */
    uint32_t *pos, cappos; /* scratch: a pair's items */
#define CQ_RECENT 8
    struct recent {
        const char *p; /* listed bytes */
        uint32_t len;
        int type;
    } recent[CQ_RECENT]; /* the names of the last row read, by place */
    char **chunks;       /* copies of names read from rows */
    size_t nchunks, capchunks, chunk_left;
    char *chunk_pos;
};

static uint32_t name_hash(struct slice s, int type)
{
    return hash32(s) ^ ((uint32_t)type * 0x9e3779b9u);
}

static bool cq_has(const struct cq *cq, const char *p, uint32_t len, uint32_t h, int type)
{
    size_t pos = IMAP_START;
    uint32_t i;
    while ((i = imap_next(&cq->set, h, &pos)) != CAT_NONE) {
        const struct rname *n = &cq->names[i];
        if (n->len == len && n->type == type && memcmp(n->p, p, len) == 0)
            return true;
    }
    return false;
}

static void cq_put(struct cq *cq, const char *p, uint32_t len, uint32_t h, int type)
{
    cq->names = grow(cq->names, &cq->capnames, cq->nnames + 1, sizeof *cq->names);
    cq->names[cq->nnames] = (struct rname){p, len, h, (uint8_t)type};
    imap_put(&cq->set, h, (uint32_t)cq->nnames++);
}

/* A name of a loaded catalog (it outlives the query: the snapshot holds
 * its table). */
static void cq_add_cat(struct cq *cq, const struct cat_file *c, uint32_t s, int type)
{
    uint32_t h = c->str[s].hash ^ ((uint32_t)type * 0x9e3779b9u);
    if (!cq_has(cq, c->str[s].p, c->str[s].len, h, type))
        cq_put(cq, c->str[s].p, c->str[s].len, h, type);
}

/* A name read from a row: copied unless listed. Returns where the listed
 * bytes are (they outlive the row). */
static const char *cq_add_row(struct cq *cq, struct slice s, int type)
{
    uint32_t h = name_hash(s, type);
    size_t pos = IMAP_START;
    uint32_t i;
    while ((i = imap_next(&cq->set, h, &pos)) != CAT_NONE) {
        const struct rname *n = &cq->names[i];
        if (n->len == s.len && n->type == type && memcmp(n->p, s.ptr, s.len) == 0)
            return n->p;
    }
    if (cq->chunk_left < s.len + 1) {
        size_t n = s.len + 1 > (64u << 10) ? s.len + 1 : (64u << 10);
        cq->chunks = grow(cq->chunks, &cq->capchunks, cq->nchunks + 1, sizeof *cq->chunks);
        cq->chunks[cq->nchunks++] = cq->chunk_pos = xmalloc(n);
        cq->chunk_left = n;
    }
    char *p = cq->chunk_pos;
    if (s.len)
        memcpy(p, s.ptr, s.len);
    cq->chunk_pos += s.len;
    cq->chunk_left -= s.len;
    cq_put(cq, p, (uint32_t)s.len, h, type);
    return p;
}

/* A name at place j of a row: rows in a row tend to carry the names of the
 * one before at the same places, which costs a comparison, not a lookup. */
static void cq_add_at(struct cq *cq, unsigned j, struct slice s, int type)
{
    struct recent *r = j < CQ_RECENT ? &cq->recent[j] : NULL;
    if (r && r->p && r->len == s.len && r->type == type && memcmp(r->p, s.ptr, s.len) == 0)
        return;
    const char *p = cq_add_row(cq, s, type);
    if (r)
        *r = (struct recent){p, (uint32_t)s.len, type};
}

static void cq_pend(struct cq *cq, const struct cat_file *c, uint32_t s, int type, uint64_t bits,
                    unsigned span, uint32_t bucket)
{
    uint32_t h = c->str[s].hash ^ ((uint32_t)type * 0x9e3779b9u);
    if (cq_has(cq, c->str[s].p, c->str[s].len, h, type))
        return;
    cq->pend = grow(cq->pend, &cq->cappend, cq->npend + 1, sizeof *cq->pend);
    cq->pend[cq->npend++] =
        (struct pend){{c->str[s].p, c->str[s].len, h, (uint8_t)type}, c, bits, span, bucket};
}

static void cq_resid(struct cq *cq, uint32_t bucket, int64_t a, int64_t b)
{
    if (a < cq->lo)
        a = cq->lo;
    if (b > cq->hi)
        b = cq->hi;
    if (a > b)
        return;
    struct ivls *r = &cq->resid[bucket];
    r->v = grow(r->v, &r->cap, r->n + 1, sizeof *r->v);
    r->v[r->n++] = (struct ivl){a, b};
}

/* The rows of the slots bits (of span fine slots) of c are to be read. */
static void cq_resid_slots(struct cq *cq, const struct cat_file *c, uint64_t bits, unsigned span,
                           uint32_t bucket)
{
    for (; bits; bits &= bits - 1) {
        int64_t a, b;
        slot_bounds(c, (unsigned)__builtin_ctzll(bits), span, &a, &b);
        cq_resid(cq, bucket, a, b);
    }
}

/* A name with fine slot mask m: listed, left to the rows, or not there. */
static void cq_fine(struct cq *cq, const struct cat_file *c, const struct slots *sl, uint32_t s,
                    int type, uint64_t m, uint32_t bucket)
{
    if (m & sl->in)
        cq_add_cat(cq, c, s, type);
    else if (m & sl->part)
        cq_pend(cq, c, s, type, m & sl->part, 1, bucket);
}

static void cq_coarse(struct cq *cq, const struct cat_file *c, const struct slots *sl, uint32_t s,
                      int type, uint16_t m, uint32_t bucket)
{
    if (m & sl->in16)
        cq_add_cat(cq, c, s, type);
    else if (m & sl->part16)
        cq_pend(cq, c, s, type, m & sl->part16, PAIR_SPAN, bucket);
}

/* The name an item stands for in a query of kind k (CAT_NONE: another kind). */
static uint32_t item_name(const struct cq *cq, const struct cat_item *it, uint32_t key, int *type)
{
    *type = 0;
    switch (cq->q->kind) {
    case STORE_CAT_TAG_KEYS: return it->kind == CK_TAG_KEY ? it->key : CAT_NONE;
    case STORE_CAT_TAG_VALUES:
        return it->kind == CK_TAG_VALUE && it->key == key ? it->val : CAT_NONE;
    case STORE_CAT_FIELDS: *type = it->aux; return it->kind == CK_FIELD ? it->key : CAT_NONE;
    default: return CAT_NONE;
    }
}

/* Tag keys, tag values or fields of event e of c, every host. */
static void items_any_host(struct cq *cq, const struct cat_file *c, const struct slots *sl,
                           const struct cat_event *e, uint32_t key, uint32_t bucket, int64_t fa,
                           int64_t fb)
{
    int kind = cq->q->kind == STORE_CAT_TAG_KEYS     ? CK_TAG_KEY
               : cq->q->kind == STORE_CAT_TAG_VALUES ? CK_TAG_VALUE
                                                     : CK_FIELD;
    if (kind == CK_TAG_VALUE) {
        uint32_t k = item_lower(c, e, CK_TAG_KEY, key);
        const struct cat_item *ki = &c->item[k];
        if (k < e->item0 + e->nitem && ki->kind == CK_TAG_KEY && ki->key == key &&
            (ki->aux & CI_INCOMPLETE) && (ki->mask & (sl->in | sl->part)))
            cq_resid(cq, bucket, fa, fb); /* values over the cap: the rows tell */
    }
    uint32_t end = e->item0 + e->nitem;
    for (uint32_t i = item_lower(c, e, kind, kind == CK_TAG_VALUE ? key : CAT_NONE); i < end; i++) {
        const struct cat_item *it = &c->item[i];
        int type;
        uint32_t s = item_name(cq, it, key, &type);
        if (s == CAT_NONE)
            break;
        cq_fine(cq, c, sl, s, type, it->mask, bucket);
    }
}

/* The same for one host: its pair's item set. */
static void items_of_pair(struct cq *cq, const struct cat_file *c, const struct slots *sl,
                          const struct cat_event *e, const struct cat_pair *p, uint32_t key,
                          uint32_t bucket)
{
    uint16_t near = p->mask & (sl->in16 | sl->part16);
    if (!near)
        return;
    if (c->flags & CAT_F_NO_SETS) {
        cq_resid_slots(cq, c, near, PAIR_SPAN, bucket); /* the host's rows tell */
        return;
    }
    bool all_in = (p->mask & ~sl->in16) == 0; /* every row of the pair in range */
    uint32_t n = pair_items(c, e, (uint32_t)(p - &c->pair[e->pair0]), &cq->pos, &cq->cappos);
    for (uint32_t k = 0; k < n; k++) {
        const struct cat_item *it = &c->item[e->item0 + cq->pos[k]];
        if (cq->q->kind == STORE_CAT_TAG_VALUES && it->kind == CK_TAG_KEY && it->key == key &&
            (it->aux & CI_INCOMPLETE)) {
            cq_resid_slots(cq, c, near, PAIR_SPAN, bucket);
            continue;
        }
        int type;
        uint32_t s = item_name(cq, it, key, &type);
        if (s == CAT_NONE || !(it->mask & (sl->in | sl->part)))
            continue;
        if (all_in)
            cq_add_cat(cq, c, s, type);
        else
            cq_pend(cq, c, s, type, near, PAIR_SPAN, bucket);
    }
}

static void cq_hosts(struct cq *cq, const struct cat_file *c, const struct slots *sl,
                     uint32_t bucket, int64_t fa, int64_t fb)
{
    const struct store_cat_query *q = cq->q;
    if (!q->event) {
        uint32_t from = 0, to = c->nhost;
        if (q->host) {
            from = find_host(c, *q->host);
            to = from == CAT_NONE ? 0 : from + 1;
        }
        for (uint32_t i = from; i < to; i++)
            cq_fine(cq, c, sl, c->host[i], 0, c->hmask[i], bucket);
        return;
    }
    uint32_t ei = find_event(c, *q->event);
    if (ei == CAT_NONE || !(c->ev[ei].mask & (sl->in | sl->part)))
        return;
    const struct cat_event *e = &c->ev[ei];
    if (c->flags & CAT_F_NO_PAIRS) {
        cq_resid(cq, bucket, fa, fb);
        return;
    }
    if (q->host) {
        uint32_t h = find_host(c, *q->host);
        const struct cat_pair *p = h == CAT_NONE ? NULL : find_pair(c, e, h);
        if (p)
            cq_coarse(cq, c, sl, c->host[h], 0, p->mask, bucket);
        return;
    }
    for (uint32_t i = e->pair0; i < e->pair0 + e->npair; i++)
        cq_coarse(cq, c, sl, c->host[c->pair[i].host], 0, c->pair[i].mask, bucket);
}

static void cq_file_cat(struct cq *cq, const struct cat_file *c, uint32_t bucket, int64_t fa,
                        int64_t fb)
{
    const struct store_cat_query *q = cq->q;
    struct slots sl;
    slots_of(c, cq->lo, cq->hi, &sl);
    if (q->kind == STORE_CAT_HOSTS) {
        cq_hosts(cq, c, &sl, bucket, fa, fb);
        return;
    }
    uint32_t from = 0, to = c->nev, host = CAT_NONE, key = CAT_NONE;
    if (q->event) {
        from = find_event(c, *q->event);
        to = from == CAT_NONE ? 0 : from + 1;
    }
    if (q->host) {
        host = find_host(c, *q->host);
        if (host == CAT_NONE)
            return;
        if (c->flags & CAT_F_NO_PAIRS) {
            if (c->hmask[host] & (sl.in | sl.part))
                cq_resid(cq, bucket, fa, fb);
            return;
        }
    }
    if (q->kind == STORE_CAT_TAG_VALUES && (key = find_str(c, q->tag_key)) == CAT_NONE)
        return;
    for (uint32_t i = from; i < to; i++) {
        const struct cat_event *e = &c->ev[i];
        if (!(e->mask & (sl.in | sl.part)))
            continue;
        if (q->kind == STORE_CAT_EVENTS) {
            if (host == CAT_NONE) {
                cq_fine(cq, c, &sl, e->name, 0, e->mask, bucket);
            } else {
                const struct cat_pair *p = find_pair(c, e, host);
                if (p)
                    cq_coarse(cq, c, &sl, e->name, 0, p->mask, bucket);
            }
        } else if (host == CAT_NONE) {
            items_any_host(cq, c, &sl, e, key, bucket, fa, fb);
        } else {
            const struct cat_pair *p = find_pair(c, e, host);
            if (p)
                items_of_pair(cq, c, &sl, e, p, key, bucket);
        }
    }
}

static int cq_file(struct cq *cq, uint32_t bucket, const struct file_meta *f)
{
    const struct sst_props *pr = &f->props;
    if (pr->entries == pr->deletes || pr->max_ts < cq->lo || pr->min_ts > cq->hi)
        return ERR_OK;
    int64_t fa = pr->min_ts > cq->lo ? pr->min_ts : cq->lo;
    int64_t fb = pr->max_ts < cq->hi ? pr->max_ts : cq->hi;
    if (f->cat_rc == ERR_NOTFOUND) {
        cq_resid(cq, bucket, fa, fb); /* no catalog: its rows tell */
        return ERR_OK;
    }
    if (f->cat_rc)
        return f->cat_rc;
    cq_file_cat(cq, f->cat, bucket, fa, fb);
    return ERR_OK;
}

/* The names a row carries (its key already matched host and event). */
static int cq_names(struct cq *cq, struct slice host, struct slice event, struct slice id,
                    struct slice value)
{
    const struct store_cat_query *q = cq->q;
    if (q->kind == STORE_CAT_HOSTS) {
        cq_add_at(cq, 0, host, 0);
        return ERR_OK;
    }
    if (q->kind == STORE_CAT_EVENTS) {
        cq_add_at(cq, 0, event, 0);
        return ERR_OK;
    }
    struct rec_row_reader rr;
    struct rec_tag t;
    struct rec_field f;
    unsigned j = 0;
    int rc = rec_row_init(&rr, id, value);
    if (q->kind != STORE_CAT_FIELDS) {
        while (!rc && (rc = rec_row_next_tag(&rr, &t)) == 1) {
            if (q->kind == STORE_CAT_TAG_KEYS)
                cq_add_at(cq, j++, t.key, 0);
            else if (slice_eq(t.key, q->tag_key))
                cq_add_at(cq, j++, t.value, 0);
            rc = 0;
        }
    } else {
        while (!rc && (rc = rec_row_next_field(&rr, &f)) == 1) {
            cq_add_at(cq, j++, f.key, (int)f.type);
            rc = 0;
        }
    }
    return rc < 0 ? err_corrupt("%s: bad record in a row read for the catalog", cq->db->name)
                  : ERR_OK;
}

/* A row of a bucket: its user key and value. */
static int cq_row(struct cq *cq, struct slice ukey, struct slice value)
{
    const struct store_cat_query *q = cq->q;
    struct key_row kr;
    if (key_decode_row(ukey, cq->db->desc, &kr))
        return err_corrupt("%s: bad row key read for the catalog", cq->db->name);
    if (kr.ts < cq->lo || kr.ts > cq->hi || (q->host && !slice_eq(kr.host, *q->host)) ||
        (q->event && !slice_eq(kr.event, *q->event)))
        return ERR_OK;
    return cq_names(cq, kr.host, kr.event, kr.id, value);
}

/* Every version in a memtable with ts in range, visible to the snapshot. */
static int cq_memtable(struct cq *cq, struct memtable *mt, struct slice lo, struct slice hi)
{
    if (!mt_count(mt))
        return ERR_OK;
    struct iter *it = mt_iter(mt);
    int rc = ERR_OK;
    for (it_seek(it, lo); !rc && it_valid(it); it_next(it)) {
        struct slice ik = it_key(it);
        if (slice_cmp(ik, hi) >= 0)
            break;
        if (!ikey_ok(ik))
            rc = err_corrupt("%s: bad memtable key", cq->db->name);
        else if (ikey_seq(ik) <= cq->snap->seq && ikey_kind(ik) != IKEY_DEL)
            rc = cq_row(cq, ikey_user(ik), it_value(it));
    }
    if (!rc)
        rc = it_status(it);
    it_destroy(it);
    return rc;
}

static int cmp_ivl(const void *x, const void *y)
{
    const struct ivl *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

static void ivls_merge(struct ivls *r)
{
    if (r->n < 2)
        return;
    qsort(r->v, r->n, sizeof *r->v, cmp_ivl);
    size_t k = 0;
    for (size_t i = 1; i < r->n; i++) {
        if (r->v[i].a <= r->v[k].b || r->v[i].a - 1 == r->v[k].b) {
            if (r->v[i].b > r->v[k].b)
                r->v[k].b = r->v[i].b;
        } else {
            r->v[++k] = r->v[i];
        }
    }
    r->n = k + 1;
}

static bool ivls_cover(const struct ivls *r, int64_t ts)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid].b < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n && r->v[lo].a <= ts;
}

/* The rows of one host in the ranges left to read, through the host
 * index: only the entries of those ranges, and rows only where the names
 * are not in the index key. */
static int cq_read_host(struct cq *cq)
{
    struct store_db *db = cq->db;
    const struct store_cat_query *q = cq->q;
    struct ivls all = {0};
    for (uint32_t b = 0; b < db->buckets; b++)
        for (size_t i = 0; i < cq->resid[b].n; i++) {
            all.v = grow(all.v, &all.cap, all.n + 1, sizeof *all.v);
            all.v[all.n++] = cq->resid[b].v[i];
        }
    ivls_merge(&all);
    int rc = ERR_OK;
    for (size_t i = 0; i < all.n && !rc; i++) {
        struct iter *it = store_iter_host_range(cq->snap, *q->host, all.v[i].a, all.v[i].b);
        for (it_seek_first(it); !rc && it_valid(it); it_next(it)) {
            struct key_row kr;
            if (key_decode_index(it_key(it), db->desc, &kr)) {
                rc = err_corrupt("%s: bad index key read for the catalog", db->name);
                break;
            }
            if ((q->event && !slice_eq(kr.event, *q->event)) ||
                !ivls_cover(&cq->resid[key_bucket(kr.ts, db->buckets)], kr.ts))
                continue;
            if (q->kind == STORE_CAT_EVENTS || q->kind == STORE_CAT_HOSTS) {
                /* the entry may stand for deleted rows only: as the header says */
                rc = cq_names(cq, kr.host, kr.event, slice_make("", 0), slice_make("", 0));
                continue;
            }
            struct store_rows *rows;
            struct slice k, v;
            rc = store_rows_open(cq->snap, kr.ts, kr.host, kr.event, &rows);
            while (!rc && (rc = store_rows_next(rows, &k, &v)) == 1)
                rc = cq_row(cq, k, v);
            store_rows_close(rows);
        }
        if (!rc)
            rc = it_status(it);
        it_destroy(it);
    }
    free(all.v);
    return rc;
}

static int cq_read_buckets(struct cq *cq)
{
    int rc = ERR_OK;
    for (uint32_t b = 0; b < cq->db->buckets && !rc; b++)
        for (size_t i = 0; i < cq->resid[b].n && !rc; i++) {
            struct iter *it = store_iter_bucket_range(cq->snap, b, cq->resid[b].v[i].a,
                                                      cq->resid[b].v[i].b, NULL);
            for (it_seek_first(it); !rc && it_valid(it); it_next(it))
                rc = cq_row(cq, it_key(it), it_value(it));
            if (!rc)
                rc = it_status(it);
            it_destroy(it);
        }
    return rc;
}

/* Settles the names the catalogs left undecided and reads the rows of
 * tables without a catalog: the ranges of undecided names not listed by
 * another table are read. */
static int cq_read_rest(struct cq *cq)
{
    for (size_t i = 0; i < cq->npend; i++) {
        const struct pend *p = &cq->pend[i];
        if (!cq_has(cq, p->n.p, p->n.len, p->n.hash, p->n.type))
            cq_resid_slots(cq, p->c, p->bits, p->span, p->bucket);
    }
    bool any = false;
    for (uint32_t b = 0; b < cq->db->buckets; b++) {
        ivls_merge(&cq->resid[b]);
        any |= cq->resid[b].n > 0;
    }
    if (!any)
        return ERR_OK;
    return cq->q->host ? cq_read_host(cq) : cq_read_buckets(cq);
}

static int cmp_rname(const void *x, const void *y)
{
    const struct rname *a = x, *b = y;
    int c = slice_cmp(slice_make(a->p, a->len), slice_make(b->p, b->len));
    return c ? c : (a->type > b->type) - (a->type < b->type);
}

static void cq_destroy(struct cq *cq)
{
    free(cq->pos);
    free(cq->names);
    imap_destroy(&cq->set);
    free(cq->pend);
    for (uint32_t b = 0; cq->resid && b < cq->db->buckets; b++)
        free(cq->resid[b].v);
    free(cq->resid);
    for (size_t i = 0; i < cq->nchunks; i++)
        free(cq->chunks[i]);
    free(cq->chunks);
}

/* The first of v's files (sorted by window) whose window is w or later:
 * the files before hold no row from w's window on (a file's rows lie in
 * its window: flushes write a file per window, merges stay within one). */
static size_t first_window(const struct version *v, int64_t w)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->files[mid]->window < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cq_run(struct cq *cq)
{
    struct store_db *db = cq->db;
    struct buf lo = BUF_INIT, hi = BUF_INIT;
    int rc = ERR_OK;
    int64_t wlo = part_window(cq->lo), whi = part_window(cq->hi);
    for (uint32_t b = 0; b < db->buckets && !rc; b++) {
        struct part_snap *ps = &cq->snap->ps[b];
        const struct version *v = ps->ver;
        for (size_t i = first_window(v, wlo); i < v->n && v->files[i]->window <= whi && !rc; i++)
            rc = cq_file(cq, b, v->files[i]);
        buf_reset(&lo);
        buf_reset(&hi);
        key_row_range(&lo, &hi, b, cq->lo, cq->hi, db->desc);
        struct slice l = slice_make(lo.data, lo.len), h = slice_make(hi.data, hi.len);
        if (!rc)
            rc = cq_memtable(cq, ps->mem, l, h);
        for (size_t i = 0; i < ps->nimm && !rc; i++)
            rc = cq_memtable(cq, ps->imm[i], l, h);
    }
    buf_destroy(&lo);
    buf_destroy(&hi);
    return rc ? rc : cq_read_rest(cq);
}

int store_catalog(struct store_snap *snap, const struct store_cat_query *q,
                  int (*fn)(void *arg, struct slice name, int type), void *arg)
{
    if (q->kind < STORE_CAT_HOSTS || q->kind > STORE_CAT_FIELDS ||
        (q->host && !key_host_ok(*q->host)) || (q->event && !key_event_ok(*q->event)))
        return ERR_INVAL;
    struct cq cq = {.q = q, .snap = snap, .db = snap->db, .lo = q->lo, .hi = q->hi};
    if (cq.lo < snap->cutoff)
        cq.lo = snap->cutoff; /* rows past the database TTL are never read */
    if (cq.lo > cq.hi)
        return ERR_OK;
    cq.resid = xcalloc(cq.db->buckets, sizeof *cq.resid);
    int rc = cq_run(&cq);
    if (!rc) {
        if (cq.nnames)
            qsort(cq.names, cq.nnames, sizeof *cq.names, cmp_rname);
        size_t n = q->limit && q->limit < cq.nnames ? q->limit : cq.nnames;
        for (size_t i = 0; i < n && !rc; i++)
            rc = fn(arg, slice_make(cq.names[i].p, cq.names[i].len), cq.names[i].type);
    }
    cq_destroy(&cq);
    return rc;
}
