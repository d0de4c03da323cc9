/* The schema catalog of a row table (FORMAT.md, "Catalog block"): its
 * distinct hosts, events, tag keys, tag values and fields with the time
 * slots of the rows that carry them. Built from the rows a table is written
 * with (or as the union of the catalogs of a compaction's inputs), encoded
 * before the footer, and loaded and checked with the table. Calls only the
 * SSTable reader, the data model and base: partitions and compactions call
 * it, catalog_query.c reads what it loads. */
#include "store/catalog_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/counts.h"
#include "store/ikey.h"
#include "store/part.h"

/* --- the builder --- */

struct cb_str {
    uint32_t off, len;
};

/* A host's pair with one event: its rows' coarse slots and items. */
struct cb_pair {
    uint32_t ev;
    uint16_t mask;
    uint64_t local;  /* its items among the event's first 64 (cb_item.local) */
    uint32_t shapes; /* its shapes with items past those, in links, CAT_NONE-terminated */
};

/* A host, with its pairs beside it: a row finds its pair among a few. */
struct cb_host {
    uint32_t str;
    uint64_t mask;
    struct cb_pair *pairs;
    size_t npairs, cappairs;
};

struct cb_event {
    uint32_t str;
    uint64_t mask;
    uint32_t *items, nitems, capitems;
    uint32_t npairs;
    uint32_t last_shape; /* of its previous row: rows of an event often repeat it */
};

struct cb_item {
    uint32_t ev, key, val; /* strings; val for tag values only */
    uint32_t keyitem;      /* a tag value's tag key item */
    uint32_t nvals;        /* a tag key's values */
    uint32_t local;        /* its place among its event's items */
    uint64_t mask;
    uint8_t kind, aux; /* aux: a field's type, a tag key's CI_ flags */
};

/* A row shape: an event with its tags (keys and values; only the key of a
 * tag whose values are over the cap) and field names and types. Rows of
 * one shape carry the same items: a row costs a lookup of its shape, and
 * the items' slots are the union of their shapes' (at the end). */
struct cb_shape {
    uint32_t ev;
    uint32_t off, len;     /* its bytes in shape_bytes */
    uint32_t item0, nitem; /* its items in shape_items */
    uint64_t mask;         /* slots of its rows */
    uint64_t local;        /* its items among their event's first 64 (cb_item.local) */
    bool beyond;           /* it has items past the event's first 64 */
};

struct cb_link {
    uint32_t shape, next;
};

/* A row kind: a host with a shape (of one event). A row of a kind
 * already counted in its slot costs the lookups of its host and shape; its
 * pair has the shape's items already. mask 0 is an empty place. */
struct cb_kind {
    uint32_t host, shape;
    uint64_t mask; /* the slots its rows were counted in */
};
#define CB_MAX_KINDS (1u << 17) /* past this many, new kinds are not kept */

/* A place of the hosts' table: a name's first 16 bytes (zero-padded) kept
 * in it, so that a row finds its host in one place (longer names compare
 * the rest with the host's string). idx 0 is an empty place. */
struct cb_hslot {
    uint64_t w0, w1;
    uint32_t len, idx; /* idx: the host + 1 */
};

struct cat_builder {
    struct sst_observer obs; /* first: the observer is the builder */
    bool desc, started, off;
    int64_t base, width;
    struct buf chars;
    struct cb_str *str;
    size_t nstr, capstr;
    struct cb_host *host;
    size_t nhost, caphost;
    struct cb_event *ev;
    size_t nev, capev;
    struct cb_item *item;
    size_t nitem, capitem;
    size_t npair;
    struct cb_shape *shape;
    size_t nshape, capshape;
    struct buf shape_bytes, scratch;
    uint32_t *shape_items;
    size_t nshape_items, capshape_items;
    struct cb_link *link;
    size_t nlink, caplink;
    uint32_t *incomplete; /* tag key items whose values went over the cap */
    uint32_t nincomplete, capincomplete;
    struct imap strs, evs, items, shapes;
    struct cb_hslot *hslot; /* open addressing, caphslot a power of 2 */
    size_t caphslot;
    struct cb_kind *kind; /* open addressing, capkind a power of 2 */
    size_t nkind, capkind;
#define CB_EVCACHE 256
    struct cb_hslot evcache[CB_EVCACHE]; /* events by their names' words (idx 0: empty) */
    struct buf raw;                      /* the block written at the finish (cat_builder_result) */
    bool merged;                         /* the union of other catalogs: rows are not looked at */
    struct cnt_builder *cnt;             /* the rows by event and minute (counts.h) */
    unsigned floor;                      /* CAT_F_ level an absorbed catalog had (level_rank) */
    size_t mem;                          /* rough bytes held */
};

/* memcmp(a, b, n) == 0 for the short names and shapes of rows, without a
 * call */
static inline bool bytes_eq(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return false;
    }
    return !n || name_tail(a, n) == name_tail(b, n);
}

/* The builder's hash of shapes: one multiply a word (hash_bytes mixes fully
 * at every word; rows whose shape is not their event's last hash theirs). */
static inline uint32_t cb_hash(struct slice s, uint64_t seed)
{
    const uint64_t k = 0x9e3779b97f4a7c15ULL;
    const char *p = s.ptr;
    size_t n = s.len;
    uint64_t h = seed ^ (n * k), w = 0;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    w = n ? name_tail(p, n) : 0;
    return (uint32_t)key_mix64(h ^ w);
}

static struct slice cb_s(const struct cat_builder *b, uint32_t s)
{
    return slice_make(b->chars.data + b->str[s].off, b->str[s].len);
}

static bool cb_eq(const struct cat_builder *b, uint32_t s, struct slice x)
{
    return b->str[s].len == x.len && bytes_eq(b->chars.data + b->str[s].off, x.ptr, x.len);
}

static void cb_release(struct cat_builder *b)
{
    cnt_builder_free(b->cnt);
    b->cnt = NULL;
    buf_destroy(&b->chars);
    buf_destroy(&b->raw);
    buf_destroy(&b->shape_bytes);
    buf_destroy(&b->scratch);
    free(b->str);
    for (size_t i = 0; i < b->nhost; i++)
        free(b->host[i].pairs);
    free(b->host);
    for (size_t i = 0; i < b->nev; i++)
        free(b->ev[i].items);
    free(b->ev);
    free(b->item);
    free(b->shape);
    free(b->shape_items);
    free(b->link);
    free(b->incomplete);
    free(b->kind);
    b->kind = NULL;
    b->nkind = b->capkind = 0;
    b->incomplete = NULL;
    b->nincomplete = b->capincomplete = 0;
    imap_destroy(&b->strs);
    free(b->hslot);
    b->hslot = NULL;
    b->caphslot = 0;
    imap_destroy(&b->evs);
    imap_destroy(&b->items);
    imap_destroy(&b->shapes);
    b->str = NULL;
    b->host = NULL;
    b->ev = NULL;
    b->item = NULL;
    b->shape = NULL;
    b->shape_items = NULL;
    b->link = NULL;
    b->nstr = b->nhost = b->nev = b->nitem = b->npair = b->nshape = b->nshape_items = 0;
    b->capstr = b->caphost = b->capev = b->capitem = b->capshape = 0;
    b->capshape_items = b->nlink = b->caplink = 0;
}

/* Gives up: the table gets no catalog (queries read its rows). */
static void cb_off(struct cat_builder *b)
{
    b->off = true;
    cb_release(b);
}

static uint32_t cb_intern(struct cat_builder *b, struct slice s)
{
    uint32_t h = hash32(s), i;
    size_t pos = IMAP_START;
    while ((i = imap_next(&b->strs, h, &pos)) != CAT_NONE)
        if (cb_eq(b, i, s))
            return i;
    b->str = grow(b->str, &b->capstr, b->nstr + 1, sizeof *b->str);
    b->str[b->nstr] = (struct cb_str){(uint32_t)b->chars.len, (uint32_t)s.len};
    buf_append(&b->chars, s.ptr, s.len);
    b->mem += s.len + sizeof(struct cb_str) + 16;
    imap_put(&b->strs, h, (uint32_t)b->nstr);
    return (uint32_t)b->nstr++;
}

static size_t hslot_at(const struct cat_builder *b, uint64_t w0, uint64_t w1, size_t len)
{
    return (size_t)key_mix64(w0 ^ (w1 * 0x9e3779b97f4a7c15ULL) ^ len) & (b->caphslot - 1);
}

static void cb_hslot_grow(struct cat_builder *b)
{
    struct cb_hslot *old = b->hslot;
    size_t oldcap = b->caphslot;
    b->caphslot = oldcap ? 2 * oldcap : 256;
    b->hslot = xcalloc_written(b->caphslot, sizeof *b->hslot);
    for (size_t i = 0; i < oldcap; i++) {
        if (!old[i].idx)
            continue;
        size_t j = hslot_at(b, old[i].w0, old[i].w1, old[i].len);
        while (b->hslot[j].idx)
            j = (j + 1) & (b->caphslot - 1);
        b->hslot[j] = old[i];
    }
    free(old);
}

/* The host of that name, made if new. */
static uint32_t cb_host_get(struct cat_builder *b, struct slice name)
{
    uint64_t w0, w1;
    name_words(name, &w0, &w1);
    if (2 * (b->nhost + 1) > b->caphslot)
        cb_hslot_grow(b);
    size_t j = hslot_at(b, w0, w1, name.len);
    for (;; j = (j + 1) & (b->caphslot - 1)) {
        const struct cb_hslot *e = &b->hslot[j];
        if (!e->idx)
            break;
        if (e->w0 == w0 && e->w1 == w1 && e->len == name.len &&
            (name.len <= 16 || cb_eq(b, b->host[e->idx - 1].str, name)))
            return e->idx - 1;
    }
    uint32_t s = cb_intern(b, name);
    b->host = grow(b->host, &b->caphost, b->nhost + 1, sizeof *b->host);
    b->host[b->nhost] = (struct cb_host){.str = s};
    b->hslot[j] = (struct cb_hslot){w0, w1, (uint32_t)name.len, (uint32_t)b->nhost + 1};
    return (uint32_t)b->nhost++;
}

static uint32_t cb_event_get(struct cat_builder *b, struct slice name)
{
    uint32_t h = hash32(name), i;
    size_t pos = IMAP_START;
    while ((i = imap_next(&b->evs, h, &pos)) != CAT_NONE)
        if (cb_eq(b, b->ev[i].str, name))
            return i;
    uint32_t s = cb_intern(b, name);
    b->ev = grow(b->ev, &b->capev, b->nev + 1, sizeof *b->ev);
    memset(&b->ev[b->nev], 0, sizeof *b->ev);
    b->ev[b->nev].str = s;
    b->ev[b->nev].last_shape = CAT_NONE;
    imap_put(&b->evs, h, (uint32_t)b->nev);
    return (uint32_t)b->nev++;
}

/* The pair of host hi with event ei (its index among the host's pairs),
 * made if new: a host has a few events, kept beside it. */
static uint32_t cb_host_pair(struct cat_builder *b, uint32_t hi, uint32_t ei)
{
    struct cb_host *h = &b->host[hi];
    for (size_t k = 0; k < h->npairs; k++)
        if (h->pairs[k].ev == ei)
            return (uint32_t)k;
    h->pairs = grow(h->pairs, &h->cappairs, h->npairs + 1, sizeof *h->pairs);
    struct cb_pair *p = &h->pairs[h->npairs++];
    *p = (struct cb_pair){.ev = ei, .shapes = CAT_NONE};
    b->ev[ei].npairs++;
    b->mem += sizeof *p;
    b->npair++;
    return (uint32_t)(h->npairs - 1);
}

/* The event of that name: a few events, a small cache of their names'
 * words spares hashing and comparing the name. */
static uint32_t cb_event_of(struct cat_builder *b, struct slice event)
{
    uint64_t w0, w1;
    name_words(event, &w0, &w1);
    size_t j = (size_t)key_mix64(w0 ^ (w1 * 0x9e3779b97f4a7c15ULL) ^ event.len) % CB_EVCACHE;
    struct cb_hslot *e = &b->evcache[j];
    if (e->idx && e->w0 == w0 && e->w1 == w1 && e->len == event.len &&
        (event.len <= 16 || cb_eq(b, b->ev[e->idx - 1].str, event)))
        return e->idx - 1;
    uint32_t ei = cb_event_get(b, event);
    *e = (struct cb_hslot){w0, w1, (uint32_t)event.len, ei + 1};
    return ei;
}

static uint32_t item_hash(uint32_t ev, int kind, int aux, struct slice key, struct slice val)
{
    uint64_t h = hash_bytes(key.ptr, key.len, ((uint64_t)ev << 16) ^ (uint64_t)(kind << 8 | aux));
    return (uint32_t)hash_bytes(val.ptr, val.len, h);
}

/* The item (ev, kind, aux, key[, val]): found, or CAT_NONE with *h its hash. */
static uint32_t cb_item_find(const struct cat_builder *b, uint32_t ev, int kind, int aux,
                             struct slice key, struct slice val, uint32_t *h)
{
    *h = item_hash(ev, kind, kind == CK_FIELD ? aux : 0, key, val);
    size_t pos = IMAP_START;
    uint32_t i;
    while ((i = imap_next(&b->items, *h, &pos)) != CAT_NONE) {
        const struct cb_item *it = &b->item[i];
        if (it->ev == ev && it->kind == kind && (kind != CK_FIELD || it->aux == aux) &&
            cb_eq(b, it->key, key) && (kind != CK_TAG_VALUE || cb_eq(b, it->val, val)))
            return i;
    }
    return CAT_NONE;
}

static uint32_t cb_item_get(struct cat_builder *b, uint32_t ev, int kind, int aux, struct slice key,
                            struct slice val)
{
    uint32_t h, i = cb_item_find(b, ev, kind, aux, key, val, &h);
    if (i != CAT_NONE)
        return i;
    struct cb_item it = {.ev = ev, .kind = (uint8_t)kind, .aux = (uint8_t)aux, .keyitem = CAT_NONE};
    it.key = cb_intern(b, key);
    it.val = kind == CK_TAG_VALUE ? cb_intern(b, val) : 0;
    b->item = grow(b->item, &b->capitem, b->nitem + 1, sizeof *b->item);
    b->item[b->nitem] = it;
    imap_put(&b->items, h, (uint32_t)b->nitem);
    struct cb_event *e = &b->ev[ev];
    b->item[b->nitem].local = e->nitems;
    u32_push(&e->items, &e->nitems, &e->capitems, (uint32_t)b->nitem);
    b->mem += sizeof it + 24;
    return (uint32_t)b->nitem++;
}

static void cb_incomplete(struct cat_builder *b, uint32_t ki)
{
    if (b->item[ki].aux & CI_INCOMPLETE)
        return;
    b->item[ki].aux |= CI_INCOMPLETE; /* its values are not kept */
    u32_push(&b->incomplete, &b->nincomplete, &b->capincomplete, ki);
}

/* The item of value val of tag key item ki: CAT_NONE once the key has more
 * than CAT_MAX_VALUES (it is then incomplete). */
static uint32_t cb_value(struct cat_builder *b, uint32_t ev, uint32_t ki, struct slice key,
                         struct slice val)
{
    uint32_t h, vi = cb_item_find(b, ev, CK_TAG_VALUE, 0, key, val, &h);
    if (vi != CAT_NONE)
        return vi;
    if (b->item[ki].nvals >= CAT_MAX_VALUES)
        cb_incomplete(b, ki);
    if (b->item[ki].aux & CI_INCOMPLETE)
        return CAT_NONE;
    b->item[ki].nvals++;
    vi = cb_item_get(b, ev, CK_TAG_VALUE, 0, key, val);
    b->item[vi].keyitem = ki;
    return vi;
}

static void shape_item(struct cat_builder *b, struct cb_shape *sh, uint32_t item)
{
    uint32_t local = b->item[item].local;
    if (local < 64)
        sh->local |= 1ULL << local;
    else
        sh->beyond = true;
    b->shape_items =
        grow(b->shape_items, &b->capshape_items, b->nshape_items + 1, sizeof *b->shape_items);
    b->shape_items[b->nshape_items++] = item;
}

/* Whether tag key of event ev is over its cap: its values are then left
 * out of shapes (rows differing only in such a value are one shape). */
static bool cb_key_dropped(const struct cat_builder *b, uint32_t ev, struct slice key)
{
    for (uint32_t k = 0; k < b->nincomplete; k++) {
        const struct cb_item *it = &b->item[b->incomplete[k]];
        if (it->ev == ev && cb_eq(b, it->key, key))
            return true;
    }
    return false;
}

/* memcpy of a short name, without a call */
static inline char *put_name(char *w, struct slice s)
{
    const char *p = s.ptr;
    size_t n = s.len;
    if (n >= 8) {
        for (size_t i = 0; i + 8 <= n; i += 8)
            memcpy(w + i, p + i, 8);
        memcpy(w + n - 8, p + n - 8, 8);
    } else if (n >= 4) {
        memcpy(w, p, 4);
        memcpy(w + n - 4, p + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            w[i] = p[i];
    }
    return w + n;
}

static char *shape_tag(const struct cat_builder *b, uint32_t ev, char *w, struct slice key,
                       struct slice val)
{
    w += coding_varint_enc(w, key.len);
    w = put_name(w, key);
    if (b->nincomplete && cb_key_dropped(b, ev, key)) {
        *w++ = 0;
        return w;
    }
    w += coding_varint_enc(w, val.len + 1);
    return put_name(w, val);
}

static char *shape_field(char *w, struct slice key, int type)
{
    w += coding_varint_enc(w, key.len);
    w = put_name(w, key);
    *w++ = (char)type;
    return w;
}

/* The tags of a record at p (not empty): written at *w; returns where its
 * fields begin. */
static const char *walk_tags(const struct cat_builder *b, uint32_t ev, const char *p,
                             const char *end, char **w)
{
    uint64_t n;
    struct slice key, val;
    if (!(p = rec_walk_varint(p, end, &n)))
        return NULL;
    for (; n; n--) {
        if (!(p = rec_walk_bytes(p, end, &key)) || !(p = rec_walk_bytes(p, end, &val)))
            return NULL;
        *w = shape_tag(b, ev, *w, key, val);
    }
    return p;
}

/* The fields of a record from p: written at *w; false unless they end it
 * (rec_walk_*: anything else the record reader decides). */
static bool walk_fields(const char *p, const char *end, char **w)
{
    uint64_t n;
    struct slice key, s;
    int type;
    if (!(p = rec_walk_varint(p, end, &n)))
        return false;
    for (; n; n--) {
        if (!(p = rec_walk_field(p, end, &key, &type, &s)))
            return false;
        *w = shape_field(*w, key, type);
    }
    return p == end;
}

/* The bytes of a row's shape (event ev, the tags and fields as the row has
 * them) into scratch: false if the record is bad. */
static bool cb_shape_bytes(struct cat_builder *b, uint32_t ev, struct slice id, struct slice value)
{
    struct buf *sb = &b->scratch;
    /* the shape's bytes are no longer than the record's plus a few per name */
    buf_reset(sb);
    buf_reserve(sb, 16 + 2 * (id.len + value.len));
    char *w = sb->data;
    memcpy(w, &ev, sizeof ev);
    w += sizeof ev;
    const char *f0 = NULL, *f1 = NULL;
    if (id.len && !(f0 = walk_tags(b, ev, id.ptr, id.ptr + id.len, &w)))
        goto slow;
    if (value.len && !(f1 = walk_tags(b, ev, value.ptr, value.ptr + value.len, &w)))
        goto slow;
    *w++ = 0; /* between the tags and the fields: no key is 10 MB */
    *w++ = (char)0x80;
    if (id.len && !walk_fields(f0, id.ptr + id.len, &w))
        goto slow;
    if (value.len && !walk_fields(f1, value.ptr + value.len, &w))
        goto slow;
    sb->len = (size_t)(w - sb->data);
    return true;
slow:
    w = sb->data + sizeof ev;
    struct rec_row_reader rr;
    struct rec_tag t;
    struct rec_field f;
    int rc = rec_row_init(&rr, id, value);
    while (!rc && (rc = rec_row_next_tag(&rr, &t)) == 1) {
        w = shape_tag(b, ev, w, t.key, t.value);
        rc = 0;
    }
    *w++ = 0;
    *w++ = (char)0x80;
    while (rc >= 0 && (rc = rec_row_next_field(&rr, &f)) == 1)
        w = shape_field(w, f.key, (int)f.type);
    if (rc < 0)
        return false;
    sb->len = (size_t)(w - sb->data);
    return true;
}

static uint32_t shape_hash(struct slice bytes)
{
    return cb_hash(bytes, 11);
}

static bool shape_is(const struct cat_builder *b, uint32_t i, struct slice bytes)
{
    return b->shape[i].len == bytes.len &&
           bytes_eq(b->shape_bytes.data + b->shape[i].off, bytes.ptr, bytes.len);
}

/* The shape of a row of event ev with those bytes (cb_shape_bytes), or
 * CAT_NONE; *h is their hash unless the shape was its event's last. */
static uint32_t cb_shape_find(struct cat_builder *b, uint32_t ev, struct slice bytes, uint32_t *h)
{
    uint32_t i = b->ev[ev].last_shape;
    if (i != CAT_NONE && shape_is(b, i, bytes))
        return i;
    *h = shape_hash(bytes);
    size_t pos = IMAP_START;
    while ((i = imap_next(&b->shapes, *h, &pos)) != CAT_NONE)
        if (shape_is(b, i, bytes))
            return b->ev[ev].last_shape = i;
    return CAT_NONE;
}

/* A new shape of a row of event ev, with its items. */
static uint32_t cb_shape_make(struct cat_builder *b, uint32_t ev, struct slice id,
                              struct slice value, struct slice bytes, uint32_t h)
{
    struct rec_row_reader rr;
    struct rec_tag t;
    struct rec_field f;
    /* a new shape: its items (the tags' values up to CAT_MAX_VALUES per key) */
    struct cb_shape sh = {ev,
                          (uint32_t)b->shape_bytes.len,
                          (uint32_t)bytes.len,
                          (uint32_t)b->nshape_items,
                          0,
                          0,
                          0,
                          false};
    buf_append(&b->shape_bytes, bytes.ptr, bytes.len);
    rec_row_init(&rr, id, value);
    while (rec_row_next_tag(&rr, &t) == 1) {
        uint32_t ki = cb_item_get(b, ev, CK_TAG_KEY, 0, t.key, slice_make("", 0));
        shape_item(b, &sh, ki);
        uint32_t vi = cb_value(b, ev, ki, t.key, t.value);
        if (vi != CAT_NONE)
            shape_item(b, &sh, vi);
    }
    while (rec_row_next_field(&rr, &f) == 1)
        shape_item(b, &sh, cb_item_get(b, ev, CK_FIELD, (int)f.type, f.key, slice_make("", 0)));
    sh.nitem = (uint32_t)b->nshape_items - sh.item0;
    b->shape = grow(b->shape, &b->capshape, b->nshape + 1, sizeof *b->shape);
    b->shape[b->nshape] = sh;
    imap_put(&b->shapes, h, (uint32_t)b->nshape);
    b->mem += bytes.len + sizeof sh + 16 + sh.nitem * 4;
    return b->ev[ev].last_shape = (uint32_t)b->nshape++;
}

/* Pair p has rows of shape s. */
static void cb_link(struct cat_builder *b, struct cb_pair *p, uint32_t s)
{
    for (uint32_t l = p->shapes; l != CAT_NONE; l = b->link[l].next)
        if (b->link[l].shape == s)
            return;
    b->link = grow(b->link, &b->caplink, b->nlink + 1, sizeof *b->link);
    b->link[b->nlink] = (struct cb_link){s, p->shapes};
    p->shapes = (uint32_t)b->nlink++;
    b->mem += sizeof *b->link;
}

static inline uint32_t kind_hash(uint32_t host, uint32_t shape)
{
    return (uint32_t)((((uint64_t)host << 32) | shape) * 0x9e3779b97f4a7c15ULL >> 32);
}

/* The kind of host hi with shape s: NULL if not kept. */
static struct cb_kind *cb_kind_find(const struct cat_builder *b, uint32_t hi, uint32_t s)
{
    if (!b->capkind)
        return NULL;
    size_t mask = b->capkind - 1;
    for (size_t j = kind_hash(hi, s) & mask;; j = (j + 1) & mask) {
        struct cb_kind *k = &b->kind[j];
        if (!k->mask)
            return NULL;
        if (k->host == hi && k->shape == s)
            return k;
    }
}

static void cb_kind_put(struct cat_builder *b, struct cb_kind k)
{
    if (4 * (b->nkind + 1) > 3 * b->capkind) {
        if (b->nkind >= CB_MAX_KINDS)
            return; /* a cache: rows of kinds not kept take the long way */
        size_t cap = b->capkind ? 2 * b->capkind : 1024;
        struct cb_kind *t = xcalloc_written(cap, sizeof *t);
        for (size_t i = 0; i < b->capkind; i++) {
            if (!b->kind[i].mask)
                continue;
            size_t j = kind_hash(b->kind[i].host, b->kind[i].shape) & (cap - 1);
            while (t[j].mask)
                j = (j + 1) & (cap - 1);
            t[j] = b->kind[i];
        }
        free(b->kind);
        b->kind = t;
        b->capkind = cap;
    }
    size_t j = kind_hash(k.host, k.shape) & (b->capkind - 1);
    while (b->kind[j].mask)
        j = (j + 1) & (b->capkind - 1);
    b->kind[j] = k;
    b->nkind++;
}

/* A row: its event, host and shape, found by their bytes; then its kind,
 * and only for a kind new or new in the slot its pair and the slots. */
static void cb_entry(struct sst_observer *o, struct slice ik, struct slice value, int64_t ts)
{
    struct cat_builder *b = (struct cat_builder *)o;
    if (b->off)
        return;
    if (!ikey_ok(ik)) {
        cnt_off(b->cnt);
        return;
    }
    /* every entry goes by the counts, a merge's too: the first version of
     * a key counts its row, if it is a put */
    bool first = cnt_first(b->cnt, ikey_user(ik), ikey_seq(ik));
    bool del = ikey_kind(ik) == IKEY_DEL;
    struct key_row kr;
    if (b->merged || del) {
        if (first && !del) {
            if (key_decode_row(ikey_user(ik), b->desc, &kr))
                cnt_off(b->cnt);
            else
                cnt_row(b->cnt, kr.event, ts);
        }
        return;
    }
    if (key_decode_row(ikey_user(ik), b->desc, &kr)) {
        cb_off(b);
        return;
    }
    if (first)
        cnt_row(b->cnt, kr.event, ts);
    if (!b->started) {
        int64_t w = ts / STORE_WINDOW_NS; /* part_window, without calling up */
        b->base = (w - (ts % STORE_WINDOW_NS < 0)) * STORE_WINDOW_NS;
        b->width = STORE_WINDOW_NS / CAT_SLOTS;
        b->started = true;
    }
    uint64_t off = (uint64_t)ts - (uint64_t)b->base;
    if (ts < b->base || off >= (uint64_t)STORE_WINDOW_NS || b->mem > CAT_MAX_BUILD) {
        cb_off(b); /* rows of two windows (never written so) or too many names */
        return;
    }
    unsigned slot = (unsigned)(off / (uint64_t)b->width);
    uint64_t bit = 1ULL << slot;
    uint16_t pbit = (uint16_t)(1u << (slot / (CAT_SLOTS / CAT_PAIR_SLOTS)));
    uint32_t ei = cb_event_of(b, kr.event);
    uint32_t hi = cb_host_get(b, kr.host);
    if (b->capkind) /* its kind's place, if its shape is its event's last */
        __builtin_prefetch(&b->kind[kind_hash(hi, b->ev[ei].last_shape) & (b->capkind - 1)]);
    if (!cb_shape_bytes(b, ei, kr.id, value)) {
        cb_off(b); /* a bad record: reading the rows will report it */
        return;
    }
    struct slice bytes = slice_make(b->scratch.data, b->scratch.len);
    uint32_t hs = 0, s = cb_shape_find(b, ei, bytes, &hs);
    struct cb_kind *k = s == CAT_NONE ? NULL : cb_kind_find(b, hi, s);
    if (k && (k->mask & bit))
        return; /* counted */
    uint32_t pk = cb_host_pair(b, hi, ei);
    if (s == CAT_NONE)
        s = cb_shape_make(b, ei, kr.id, value, bytes, hs); /* makes no pair */
    struct cb_pair *p = &b->host[hi].pairs[pk];
    p->mask |= pbit;
    b->host[hi].mask |= bit;
    b->ev[ei].mask |= bit;
    b->shape[s].mask |= bit;
    if (k) { /* its pair has the shape's items already */
        k->mask |= bit;
        return;
    }
    p->local |= b->shape[s].local;
    if (b->shape[s].beyond)
        cb_link(b, p, s);
    cb_kind_put(b, (struct cb_kind){hi, s, bit});
}

/* At the end: each item's slots, the union of its shapes'. */
static void cb_item_masks(struct cat_builder *b)
{
    for (size_t s = 0; s < b->nshape; s++) {
        const struct cb_shape *sh = &b->shape[s];
        for (uint32_t k = 0; k < sh->nitem; k++)
            b->item[b->shape_items[sh->item0 + k]].mask |= sh->mask;
    }
}

/* --- encoding --- */

struct enc {
    const struct cat_builder *b;
    uint32_t *rank; /* per string: its place in bytewise order, CAT_NONE if unused */
    uint32_t nused;
    uint32_t *host_pos; /* per host */
    uint32_t *item_pos; /* per item: its place within its event, CAT_NONE if left out */
};

static int cmp_str(const void *x, const void *y, void *arg)
{
    const struct cat_builder *b = arg;
    return slice_cmp(cb_s(b, *(const uint32_t *)x), cb_s(b, *(const uint32_t *)y));
}

static bool item_kept(const struct cat_builder *b, const struct cb_item *it)
{
    return it->kind != CK_TAG_VALUE || !(b->item[it->keyitem].aux & CI_INCOMPLETE);
}

static int cmp_item(const void *x, const void *y, void *arg)
{
    const struct enc *e = arg;
    const struct cb_item *a = &e->b->item[*(const uint32_t *)x];
    const struct cb_item *c = &e->b->item[*(const uint32_t *)y];
    if (a->kind != c->kind)
        return a->kind < c->kind ? -1 : 1;
    if (a->key != c->key)
        return e->rank[a->key] < e->rank[c->key] ? -1 : 1;
    if (a->kind == CK_TAG_VALUE && a->val != c->val)
        return e->rank[a->val] < e->rank[c->val] ? -1 : 1;
    if (a->kind == CK_FIELD && a->aux != c->aux)
        return a->aux < c->aux ? -1 : 1;
    return 0;
}

static int cmp_host(const void *x, const void *y, void *arg)
{
    const struct enc *e = arg;
    uint32_t a = e->rank[e->b->host[*(const uint32_t *)x].str];
    uint32_t c = e->rank[e->b->host[*(const uint32_t *)y].str];
    return (a > c) - (a < c);
}

static int cmp_event(const void *x, const void *y, void *arg)
{
    const struct enc *e = arg;
    uint32_t a = e->rank[e->b->ev[*(const uint32_t *)x].str];
    uint32_t c = e->rank[e->b->ev[*(const uint32_t *)y].str];
    return (a > c) - (a < c);
}

static void put_varint(struct buf *out, uint64_t v)
{
    char t[10];
    buf_append(out, t, coding_varint_enc(t, v));
}

/* A mask: a run of slots a..z as 2 bytes, anything else 0xff + 8 bytes. */
static void put_mask(struct buf *out, uint64_t m)
{
    int a = __builtin_ctzll(m), z = 63 - __builtin_clzll(m);
    uint64_t run = z - a == 63 ? ~0ULL : ((1ULL << (z - a + 1)) - 1) << a;
    if (m == run) {
        buf_putc(out, (char)a);
        buf_putc(out, (char)z);
        return;
    }
    char t[8];
    coding_put_u64le(t, m);
    buf_putc(out, (char)0xff);
    buf_append(out, t, 8);
}

static void enc_strings(struct enc *e, struct buf *out)
{
    const struct cat_builder *b = e->b;
    bool *used = xcalloc(b->nstr + 1, sizeof *used);
    for (size_t i = 0; i < b->nhost; i++)
        used[b->host[i].str] = true;
    for (size_t i = 0; i < b->nev; i++)
        used[b->ev[i].str] = true;
    for (size_t i = 0; i < b->nitem; i++)
        if (item_kept(b, &b->item[i])) {
            used[b->item[i].key] = true;
            if (b->item[i].kind == CK_TAG_VALUE)
                used[b->item[i].val] = true;
        }
    uint32_t *order = xcalloc(b->nstr + 1, sizeof *order), n = 0;
    for (size_t i = 0; i < b->nstr; i++) {
        e->rank[i] = CAT_NONE;
        if (used[i])
            order[n++] = (uint32_t)i;
    }
    qsort_r(order, n, sizeof *order, cmp_str, (void *)b);
    put_varint(out, n);
    struct slice prev = slice_make("", 0);
    for (uint32_t i = 0; i < n; i++) {
        struct slice s = cb_s(b, order[i]);
        size_t shared = 0;
        while (shared < prev.len && shared < s.len && prev.ptr[shared] == s.ptr[shared])
            shared++;
        put_varint(out, shared);
        put_varint(out, s.len - shared);
        buf_append(out, s.ptr + shared, s.len - shared);
        e->rank[order[i]] = i;
        prev = s;
    }
    e->nused = n;
    free(order);
    free(used);
}

/* The item set of a pair (event positions, ascending): its shapes' items.
 * seen (one per position of the event's items) holds stamp for those taken. */
static void pair_set(const struct enc *e, const struct cb_pair *p, uint32_t **tmp, uint32_t *n,
                     uint32_t *cap, uint32_t *seen, uint32_t stamp)
{
    const struct cat_builder *b = e->b;
    const struct cb_event *ev = &b->ev[p->ev];
    *n = 0;
    for (uint64_t m = p->local; m; m &= m - 1) {
        uint32_t pos = e->item_pos[ev->items[__builtin_ctzll(m)]];
        if (pos != CAT_NONE && seen[pos] != stamp) {
            seen[pos] = stamp;
            u32_push(tmp, n, cap, pos);
        }
    }
    for (uint32_t l = p->shapes; l != CAT_NONE; l = b->link[l].next) {
        const struct cb_shape *sh = &b->shape[b->link[l].shape];
        for (uint32_t k = 0; k < sh->nitem; k++) {
            uint32_t pos = e->item_pos[b->shape_items[sh->item0 + k]];
            if (pos == CAT_NONE || seen[pos] == stamp)
                continue;
            seen[pos] = stamp;
            u32_push(tmp, n, cap, pos);
        }
    }
    for (uint32_t i = 1; i < *n; i++) { /* a few items: insertion sort */
        uint32_t x = (*tmp)[i], j = i;
        for (; j > 0 && (*tmp)[j - 1] > x; j--)
            (*tmp)[j] = (*tmp)[j - 1];
        (*tmp)[j] = x;
    }
}

/* The encoded catalog at each level, built in one pass: head (header,
 * strings, hosts, event count), then per event its part (name, mask,
 * items) followed by its tail at the chosen level: tail0 (sets and pairs
 * with their set), tail1 (no sets, pairs without one), or two zeros. */
struct enc_out {
    struct buf head, part, tail0, tail1;
    size_t *part_end, *tail0_end, *tail1_end; /* per event, cumulative */
};

/* A pair of an event, with its host's place in the hosts. */
struct epair {
    uint32_t hpos;
    const struct cb_pair *p;
};

/* The event ev and its pairs (in host order). */
static void enc_event(struct enc *e, const struct cb_event *ev, const struct epair *pairs,
                      uint32_t npairs, uint32_t *prev_str, struct enc_out *o)
{
    const struct cat_builder *b = e->b;
    struct buf *out = &o->part;
    put_varint(out, e->rank[ev->str] - *prev_str);
    *prev_str = e->rank[ev->str];
    put_mask(out, ev->mask);
    uint32_t *items = xcalloc(ev->nitems + 1, sizeof *items), n = 0;
    for (uint32_t i = 0; i < ev->nitems; i++)
        if (item_kept(b, &b->item[ev->items[i]]))
            items[n++] = ev->items[i];
    qsort_r(items, n, sizeof *items, cmp_item, e);
    put_varint(out, n);
    for (uint32_t i = 0; i < n; i++) {
        const struct cb_item *it = &b->item[items[i]];
        e->item_pos[items[i]] = i;
        buf_putc(out, (char)it->kind);
        buf_putc(out, (char)it->aux);
        put_varint(out, e->rank[it->key]);
        if (it->kind == CK_TAG_VALUE)
            put_varint(out, e->rank[it->val]);
        put_mask(out, it->mask);
    }
    free(items);
    /* level 0: each pair's items as a bitmap over the event's (mode 1), or
     * the event's distinct item sets and each pair's (mode 0), whichever is
     * smaller; with a few items the bitmap always is */
    struct buf ts = BUF_INIT, tb = BUF_INIT;
    bool with_sets = n > 24;
    size_t nb = (n + 7) / 8;
    uint8_t *bits = xcalloc(nb + 1, 1);
    uint32_t *pool = NULL, npool = 0, cappool = 0, *off = NULL, noff = 0, capoff = 0;
    uint32_t *setof = xcalloc(npairs + 1, sizeof *setof), *tmp = NULL, ntmp = 0, captmp = 0;
    uint32_t *seen = xcalloc(n + 1, sizeof *seen);
    struct imap sets = {0};
    u32_push(&off, &noff, &capoff, 0);
    buf_putc(&tb, 1);
    put_varint(&tb, npairs);
    put_varint(&o->tail1, 0);
    put_varint(&o->tail1, npairs);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < npairs; i++) {
        const struct cb_pair *p = pairs[i].p;
        pair_set(e, p, &tmp, &ntmp, &captmp, seen, i + 1);
        char m[2] = {(char)(p->mask & 0xff), (char)(p->mask >> 8)};
        put_varint(&tb, pairs[i].hpos - prev);
        put_varint(&o->tail1, pairs[i].hpos - prev);
        prev = pairs[i].hpos;
        memset(bits, 0, nb);
        for (uint32_t k = 0; k < ntmp; k++)
            bits[tmp[k] / 8] |= (uint8_t)(1u << (tmp[k] % 8));
        buf_append(&tb, bits, nb);
        buf_append(&tb, m, 2);
        buf_append(&o->tail1, m, 2);
        if (!with_sets)
            continue;
        uint32_t h = (uint32_t)hash_bytes((const char *)tmp, ntmp * sizeof *tmp, 3), s;
        size_t pos = IMAP_START;
        while ((s = imap_next(&sets, h, &pos)) != CAT_NONE)
            if (off[s + 1] - off[s] == ntmp &&
                (ntmp == 0 || memcmp(pool + off[s], tmp, ntmp * sizeof *tmp) == 0))
                break;
        if (s == CAT_NONE) {
            s = noff - 1;
            for (uint32_t k = 0; k < ntmp; k++)
                u32_push(&pool, &npool, &cappool, tmp[k]);
            u32_push(&off, &noff, &capoff, npool);
            imap_put(&sets, h, s);
        }
        setof[i] = s;
    }
    if (with_sets && noff - 1 <= CAT_MAX_SETS) {
        buf_putc(&ts, 0);
        put_varint(&ts, noff - 1);
        for (uint32_t s = 0; s + 1 < noff; s++) {
            put_varint(&ts, off[s + 1] - off[s]);
            uint32_t pv = 0;
            for (uint32_t k = off[s]; k < off[s + 1]; k++) {
                put_varint(&ts, pool[k] - pv);
                pv = pool[k];
            }
        }
        put_varint(&ts, npairs);
        prev = 0;
        for (uint32_t i = 0; i < npairs; i++) {
            const struct cb_pair *p = pairs[i].p;
            char m[2] = {(char)(p->mask & 0xff), (char)(p->mask >> 8)};
            put_varint(&ts, pairs[i].hpos - prev);
            prev = pairs[i].hpos;
            put_varint(&ts, setof[i]);
            buf_append(&ts, m, 2);
        }
    }
    const struct buf *best = ts.len && ts.len < tb.len ? &ts : &tb;
    buf_append(&o->tail0, best->data, best->len);
    buf_destroy(&ts);
    buf_destroy(&tb);
    free(bits);
    imap_destroy(&sets);
    free(seen);
    free(tmp);
    free(setof);
    free(pool);
    free(off);
}

static void cb_encode(const struct cat_builder *b, struct enc_out *o)
{
    struct enc e = {b, xcalloc(b->nstr + 1, sizeof(uint32_t)), 0,
                    xcalloc(b->nhost + 1, sizeof(uint32_t)),
                    xcalloc(b->nitem + 1, sizeof(uint32_t))};
    struct buf *out = &o->head;
    char h[CAT_HEADER];
    coding_put_u32le(h, CAT_MAGIC);
    h[4] = CAT_VERSION;
    h[5] = 0; /* the level's flags, set at the end */
    coding_put_u64le(h + 6, (uint64_t)b->base);
    coding_put_u64le(h + 14, (uint64_t)b->width);
    buf_append(out, h, CAT_HEADER);
    enc_strings(&e, out);
    uint32_t *order = xcalloc(b->nhost + b->nev + 1, sizeof *order);
    for (uint32_t i = 0; i < b->nhost; i++)
        order[i] = i;
    qsort_r(order, b->nhost, sizeof *order, cmp_host, &e);
    put_varint(out, b->nhost);
    uint32_t prev = 0;
    /* the pairs of each event in host order: events' slices of epairs */
    size_t *evoff = xcalloc(b->nev + 1, sizeof *evoff), *fill = xcalloc(b->nev + 1, sizeof *fill);
    struct epair *epairs = xcalloc(b->npair + 1, sizeof *epairs);
    for (uint32_t i = 0; i < b->nev; i++)
        evoff[i + 1] = evoff[i] + b->ev[i].npairs;
    for (uint32_t i = 0; i < b->nhost; i++) {
        const struct cb_host *hs = &b->host[order[i]];
        e.host_pos[order[i]] = i;
        put_varint(out, e.rank[hs->str] - prev);
        prev = e.rank[hs->str];
        put_mask(out, hs->mask);
        for (size_t k = 0; k < hs->npairs; k++) {
            uint32_t ev = hs->pairs[k].ev;
            epairs[evoff[ev] + fill[ev]++] = (struct epair){i, &hs->pairs[k]};
        }
    }
    for (uint32_t i = 0; i < b->nitem; i++)
        e.item_pos[i] = CAT_NONE;
    for (uint32_t i = 0; i < b->nev; i++)
        order[i] = i;
    qsort_r(order, b->nev, sizeof *order, cmp_event, &e);
    put_varint(out, b->nev);
    o->part_end = xcalloc(b->nev + 1, sizeof(size_t));
    o->tail0_end = xcalloc(b->nev + 1, sizeof(size_t));
    o->tail1_end = xcalloc(b->nev + 1, sizeof(size_t));
    prev = 0;
    for (uint32_t i = 0; i < b->nev; i++) {
        uint32_t ev = order[i];
        enc_event(&e, &b->ev[ev], epairs + evoff[ev], b->ev[ev].npairs, &prev, o);
        o->part_end[i] = o->part.len;
        o->tail0_end[i] = o->tail0.len;
        o->tail1_end[i] = o->tail1.len;
    }
    free(epairs);
    free(evoff);
    free(fill);
    free(order);
    free(e.rank);
    free(e.host_pos);
    free(e.item_pos);
}

static void cb_finish(struct sst_observer *o, uint64_t data_bytes, struct buf *out)
{
    struct cat_builder *b = (struct cat_builder *)o;
    if (b->off || !b->started || b->nev == 0)
        return;
    cb_item_masks(b);
    uint64_t cap = data_bytes / 8;
    cap = cap < CAT_MIN_BYTES ? CAT_MIN_BYTES : cap > CAT_MAX_BYTES ? CAT_MAX_BYTES : cap;
    struct enc_out eo = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, NULL, NULL, NULL};
    cb_encode(b, &eo);
    struct buf cnt = BUF_INIT; /* the counts, at the end (version 2) */
    cnt_encode(b->cnt, b->base, &cnt);
    /* over the cap, the pairs' item sets go first (a host's tags and
     * fields are then read from its rows), then the pairs, then the
     * counts, then all */
    size_t base = eo.head.len + eo.part.len + cnt.len;
    unsigned level;
    if (b->floor == 0 && base + eo.tail0.len <= cap)
        level = 0;
    else if (b->floor <= 1 && base + eo.tail1.len <= cap)
        level = CAT_F_NO_SETS;
    else if (base + 2 * b->nev <= cap)
        level = CAT_F_NO_PAIRS;
    else if (base - cnt.len + 2 * b->nev <= cap)
        level = CAT_F_NO_PAIRS, cnt.len = 0;
    else
        level = 0xff;
    size_t start = out->len;
    if (level != 0xff) {
        eo.head.data[4] = cnt.len ? CAT_VERSION_COUNTS : CAT_VERSION;
        eo.head.data[5] = (char)level;
        buf_append(out, eo.head.data, eo.head.len);
        for (size_t i = 0; i < b->nev; i++) {
            size_t p0 = i ? eo.part_end[i - 1] : 0;
            buf_append(out, eo.part.data + p0, eo.part_end[i] - p0);
            if (level == CAT_F_NO_PAIRS) {
                buf_append(out, "\0\0", 2); /* no sets, no pairs */
            } else {
                const struct buf *t = level ? &eo.tail1 : &eo.tail0;
                const size_t *end = level ? eo.tail1_end : eo.tail0_end;
                size_t t0 = i ? end[i - 1] : 0;
                buf_append(out, t->data + t0, end[i] - t0);
            }
        }
        buf_append(out, cnt.data, cnt.len);
    }
    buf_destroy(&cnt);
    buf_reset(&b->raw);
    buf_append(&b->raw, out->data + start, out->len - start);
    buf_destroy(&eo.head);
    buf_destroy(&eo.part);
    buf_destroy(&eo.tail0);
    buf_destroy(&eo.tail1);
    free(eo.part_end);
    free(eo.tail0_end);
    free(eo.tail1_end);
}

struct cat_builder *cat_builder_new(bool desc)
{
    struct cat_builder *b = xcalloc(1, sizeof *b);
    b->obs.entry = cb_entry;
    b->obs.finish = cb_finish;
    b->desc = desc;
    b->cnt = cnt_builder_new();
    return b;
}

void cat_builder_free(struct cat_builder *b)
{
    if (!b)
        return;
    cb_release(b);
    free(b);
}

struct sst_observer *cat_builder_observer(struct cat_builder *b)
{
    return &b->obs;
}

int cat_builder_result(const struct cat_builder *b, const struct sst_props *props, const char *what,
                       struct cat_file **out)
{
    if (!b || b->raw.len == 0)
        return ERR_NOTFOUND;
    return cat_file_parse(slice_make(b->raw.data, b->raw.len), props, what, out);
}

void cat_file_free(struct cat_file *c)
{
    if (!c)
        return;
    free(c->chars);
    free(c->str);
    free(c->host);
    free(c->hmask);
    free(c->ev);
    free(c->item);
    free(c->set_off);
    free(c->set_item);
    free(c->pair);
    free(c->bits);
    cnt_file_free(c->cnt);
    free(c);
}

const struct cnt_file *cat_file_counts(const struct cat_file *c)
{
    return c ? c->cnt : NULL;
}

size_t cat_file_bytes(const struct cat_file *c)
{
    return c ? c->bytes : 0;
}

struct rd {
    const char *p, *end;
};

static bool rd_varint(struct rd *r, uint64_t *v)
{
    const char *q = coding_varint_dec(r->p, r->end, v);
    if (!q)
        return false;
    r->p = q;
    return true;
}

/* A count of entries of at least one byte each that must still follow. */
static bool rd_count(struct rd *r, uint32_t *n)
{
    uint64_t v;
    if (!rd_varint(r, &v) || v > (uint64_t)(r->end - r->p))
        return false;
    *n = (uint32_t)v;
    return true;
}

/* An ascending index: the first absolute, then deltas >= 1, below limit. */
static bool rd_index(struct rd *r, uint32_t i, uint32_t *prev, uint32_t limit)
{
    uint64_t d;
    if (!rd_varint(r, &d) || (i > 0 && d == 0) || d >= limit || *prev + d >= limit)
        return false;
    *prev += (uint32_t)d;
    return true;
}

static bool rd_mask(struct rd *r, uint64_t *m)
{
    if (r->p >= r->end)
        return false;
    unsigned a = (unsigned char)*r->p++;
    if (a == 0xff) {
        if (r->end - r->p < 8)
            return false;
        *m = coding_get_u64le(r->p);
        r->p += 8;
        return *m != 0;
    }
    if (a >= CAT_SLOTS || r->p >= r->end)
        return false;
    unsigned z = (unsigned char)*r->p++;
    if (z < a || z >= CAT_SLOTS)
        return false;
    *m = z - a == 63 ? ~0ULL : ((1ULL << (z - a + 1)) - 1) << a;
    return true;
}

static bool parse_strings(struct rd *r, struct cat_file *c, size_t raw_len)
{
    if (!rd_count(r, &c->nstr))
        return false;
    c->str = xcalloc(c->nstr + 1, sizeof *c->str);
    struct buf chars = BUF_INIT;
    size_t prev_off = 0, prev_len = 0, limit = 64 * raw_len + (1u << 20);
    bool ok = true;
    for (uint32_t i = 0; i < c->nstr && ok; i++) {
        uint64_t shared, unshared;
        ok = rd_varint(r, &shared) && rd_varint(r, &unshared) && shared <= prev_len &&
             unshared <= (uint64_t)(r->end - r->p) && chars.len + shared + unshared <= limit;
        if (!ok)
            break;
        size_t off = chars.len;
        buf_reserve(&chars, shared + unshared);
        memcpy(chars.data + off, chars.data + prev_off, shared);
        memcpy(chars.data + off + shared, r->p, unshared);
        chars.len += shared + unshared;
        r->p += unshared;
        struct slice s = slice_make(chars.data + off, shared + unshared);
        /* strictly ascending (offsets now; pointers once chars stop moving) */
        ok = i == 0 || slice_cmp(slice_make(chars.data + prev_off, prev_len), s) < 0;
        c->str[i].p = (const char *)(uintptr_t)off;
        c->str[i].len = (uint32_t)s.len;
        c->str[i].hash = hash32(s);
        prev_off = off;
        prev_len = s.len;
    }
    size_t nchars = chars.len;
    c->bytes += nchars + c->nstr * sizeof *c->str;
    buf_reserve(&chars, 1); /* never NULL */
    c->chars = xrealloc(buf_steal(&chars, NULL), nchars + 1);
    for (uint32_t i = 0; i < c->nstr; i++)
        c->str[i].p = c->chars + (uintptr_t)c->str[i].p;
    return ok;
}

static bool parse_hosts(struct rd *r, struct cat_file *c)
{
    if (!rd_count(r, &c->nhost))
        return false;
    c->host = xcalloc(c->nhost + 1, sizeof *c->host);
    c->hmask = xcalloc(c->nhost + 1, sizeof *c->hmask);
    c->bytes += c->nhost * (sizeof *c->host + sizeof *c->hmask);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < c->nhost; i++) {
        if (!rd_index(r, i, &prev, c->nstr) || !rd_mask(r, &c->hmask[i]))
            return false;
        c->host[i] = prev;
    }
    return true;
}

static int item_cmp(const struct cat_item *a, const struct cat_item *b)
{
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->kind == CK_TAG_VALUE && a->val != b->val)
        return a->val < b->val ? -1 : 1;
    if (a->kind == CK_FIELD && a->aux != b->aux)
        return a->aux < b->aux ? -1 : 1;
    return 0;
}

static bool parse_item(struct rd *r, struct cat_file *c, struct cat_item *it)
{
    uint64_t key, val = 0;
    if (r->end - r->p < 2)
        return false;
    it->kind = (uint8_t)*r->p++;
    it->aux = (uint8_t)*r->p++;
    if (!rd_varint(r, &key) || key >= c->nstr)
        return false;
    if (it->kind == CK_TAG_VALUE && (!rd_varint(r, &val) || val >= c->nstr))
        return false;
    it->key = (uint32_t)key;
    it->val = (uint32_t)val;
    switch (it->kind) {
    case CK_TAG_KEY:
        if (it->aux & ~CI_INCOMPLETE)
            return false;
        break;
    case CK_TAG_VALUE:
        if (it->aux)
            return false;
        break;
    case CK_FIELD:
        if (it->aux < REC_FLOAT || it->aux > REC_STRING)
            return false;
        break;
    default: return false;
    }
    return rd_mask(r, &it->mask);
}

static bool parse_event(struct rd *r, struct cat_file *c, uint32_t i, uint32_t *prev, size_t *caps)
{
    struct cat_event *e = &c->ev[i];
    uint32_t n;
    if (!rd_index(r, i, prev, c->nstr) || !rd_mask(r, &e->mask) || !rd_count(r, &n))
        return false;
    e->name = *prev;
    e->item0 = c->nitem;
    e->nitem = n;
    c->item = grow(c->item, &caps[0], (size_t)c->nitem + n, sizeof *c->item);
    for (uint32_t k = 0; k < n; k++) {
        struct cat_item *it = &c->item[c->nitem + k];
        if (!parse_item(r, c, it) || (k > 0 && item_cmp(it - 1, it) >= 0))
            return false;
    }
    c->nitem += n;
    unsigned mode = 0; /* level 0: 0 sets, 1 bitmaps */
    if (c->flags == 0) {
        if (r->p >= r->end || (unsigned char)*r->p > 1)
            return false;
        mode = (unsigned char)*r->p++;
    }
    e->set0 = c->nset;
    if (mode == 0) {
        if (!rd_count(r, &n) || n > CAT_MAX_SETS || (c->flags && n))
            return false;
        e->nset = n;
        c->set_off = grow(c->set_off, &caps[1], (size_t)c->nset + n + 1, sizeof *c->set_off);
        for (uint32_t s = 0; s < n; s++) {
            uint32_t m, prev_item = 0;
            if (!rd_count(r, &m))
                return false;
            c->set_off[c->nset + s] = c->nset_item;
            c->set_item =
                grow(c->set_item, &caps[2], (size_t)c->nset_item + m, sizeof *c->set_item);
            for (uint32_t k = 0; k < m; k++) {
                if (!rd_index(r, k, &prev_item, e->nitem))
                    return false;
                c->set_item[c->nset_item++] = prev_item;
            }
        }
        c->nset += n;
        c->set_off[c->nset] = c->nset_item;
    }
    if (!rd_count(r, &n) || ((c->flags & CAT_F_NO_PAIRS) && n))
        return false;
    e->pair0 = c->npair;
    e->npair = n;
    e->nbits = mode == 1 ? (e->nitem + 7) / 8 : 0;
    e->bits0 = (uint32_t)c->nbits;
    if ((uint64_t)n * e->nbits > (uint64_t)(r->end - r->p))
        return false;
    c->bits = grow(c->bits, &caps[4], c->nbits + (size_t)n * e->nbits, 1);
    c->pair = grow(c->pair, &caps[3], (size_t)c->npair + n, sizeof *c->pair);
    uint32_t prev_host = 0;
    for (uint32_t k = 0; k < n; k++) {
        struct cat_pair *p = &c->pair[c->npair + k];
        uint64_t set = 0;
        if (!rd_index(r, k, &prev_host, c->nhost) ||
            (c->flags == 0 && mode == 0 && (!rd_varint(r, &set) || set >= e->nset)) ||
            (size_t)(r->end - r->p) < e->nbits + 2)
            return false;
        p->host = prev_host;
        p->set = (uint16_t)set;
        if (e->nbits) {
            /* no bit past the event's items */
            unsigned last = (unsigned char)r->p[e->nbits - 1], used = e->nitem % 8;
            if (used && (last >> used))
                return false;
            memcpy(c->bits + c->nbits, r->p, e->nbits);
            c->nbits += e->nbits;
            r->p += e->nbits;
        }
        p->mask = (uint16_t)((unsigned char)r->p[0] | (unsigned char)r->p[1] << 8);
        r->p += 2;
        if (!p->mask)
            return false;
    }
    c->npair += n;
    return true;
}

int cat_file_parse(struct slice raw, const struct sst_props *props, const char *what,
                   struct cat_file **out)
{
    struct cat_file *c = xcalloc(1, sizeof *c);
    struct rd r = {raw.ptr + CAT_HEADER, raw.ptr + raw.len};
    const char *bad = NULL;
    if (raw.len < CAT_HEADER || coding_get_u32le(raw.ptr) != CAT_MAGIC ||
        (raw.ptr[4] != CAT_VERSION && raw.ptr[4] != CAT_VERSION_COUNTS)) {
        bad = "bad magic or version";
        goto fail;
    }
    c->flags = (unsigned char)raw.ptr[5];
    c->base = (int64_t)coding_get_u64le(raw.ptr + 6);
    c->width = (int64_t)coding_get_u64le(raw.ptr + 14);
    __int128 end = (__int128)c->base + (__int128)c->width * CAT_SLOTS;
    if (c->flags > CAT_F_NO_SETS || c->width <= 0 || props->min_ts < c->base ||
        (__int128)props->max_ts >= end) {
        bad = "bad header";
        goto fail;
    }
    if (!parse_strings(&r, c, raw.len)) {
        bad = "bad strings";
        goto fail;
    }
    if (!parse_hosts(&r, c)) {
        bad = "bad hosts";
        goto fail;
    }
    size_t caps[5] = {0, 0, 0, 0, 0};
    uint32_t prev = 0;
    if (!rd_count(&r, &c->nev)) {
        bad = "bad events";
        goto fail;
    }
    c->ev = xcalloc(c->nev + 1, sizeof *c->ev);
    c->set_off = grow(c->set_off, &caps[1], 1, sizeof *c->set_off);
    c->set_off[0] = 0;
    for (uint32_t i = 0; i < c->nev; i++)
        if (!parse_event(&r, c, i, &prev, caps)) {
            bad = "bad event";
            goto fail;
        }
    if (raw.ptr[4] == CAT_VERSION_COUNTS &&
        (c->width * CAT_SLOTS != STORE_WINDOW_NS || c->base % STORE_WINDOW_NS != 0 ||
         !cnt_file_parse(&r.p, r.end, c->base, &c->cnt))) {
        bad = "bad counts";
        goto fail;
    }
    if (r.p != r.end) {
        bad = "trailing bytes";
        goto fail;
    }
    /* no room left over: the catalogs of every table stay in memory */
    c->item = xrealloc(c->item, (c->nitem + 1) * sizeof *c->item);
    c->set_off = xrealloc(c->set_off, (c->nset + 1) * sizeof *c->set_off);
    c->set_item = xrealloc(c->set_item, (c->nset_item + 1) * sizeof *c->set_item);
    c->pair = xrealloc(c->pair, (c->npair + 1) * sizeof *c->pair);
    c->bits = xrealloc(c->bits, c->nbits + 1);
    c->bytes += cnt_file_bytes(c->cnt) + sizeof *c + c->nev * sizeof *c->ev +
                c->nitem * sizeof *c->item + (c->nset + 1) * sizeof *c->set_off +
                c->nset_item * sizeof *c->set_item + c->npair * sizeof *c->pair + c->nbits;
    *out = c;
    return ERR_OK;
fail:
    cat_file_free(c);
    return err_corrupt("%s: catalog block: %s at byte %zu", what, bad, (size_t)(r.p - raw.ptr));
}

int cat_file_load(struct sst_table *t, const struct sst_props *props, const char *what,
                  atomic_ullong *corrupt, struct cat_file **out)
{
    struct buf raw = BUF_INIT;
    int rc = sst_read_catalog(t, &raw); /* counts a bad checksum itself */
    if (!rc) {
        rc = cat_file_parse(slice_make(raw.data, raw.len), props, what, out);
        if (rc == ERR_CORRUPT && corrupt)
            atomic_fetch_add(corrupt, 1);
    }
    buf_destroy(&raw);
    return rc;
}

/* --- merging catalogs (compactions that keep every row) --- */

static unsigned level_rank(unsigned flags)
{
    return flags == CAT_F_NO_PAIRS ? 2 : flags == CAT_F_NO_SETS ? 1 : 0;
}

/* The shape standing for an item set of a merged pair: its items only (their
 * slots come with them). */
static uint32_t cb_set_shape(struct cat_builder *b, uint32_t ev, uint32_t *items, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = items[i], j = i;
        for (; j > 0 && items[j - 1] > x; j--)
            items[j] = items[j - 1];
        items[j] = x;
    }
    struct buf *sb = &b->scratch;
    uint32_t mark = CAT_NONE;
    buf_reset(sb);
    buf_append(sb, &ev, sizeof ev);
    buf_append(sb, &mark, sizeof mark);
    buf_append(sb, items, n * sizeof *items);
    uint32_t h = shape_hash(slice_make(sb->data, sb->len)), i;
    size_t pos = IMAP_START;
    while ((i = imap_next(&b->shapes, h, &pos)) != CAT_NONE)
        if (shape_is(b, i, slice_make(sb->data, sb->len)))
            return i;
    struct cb_shape sh =
        {ev,   (uint32_t)b->shape_bytes.len, (uint32_t)sb->len, (uint32_t)b->nshape_items, n, 0, 0,
         false};
    buf_append(&b->shape_bytes, sb->data, sb->len);
    for (uint32_t k = 0; k < n; k++)
        shape_item(b, &sh, items[k]);
    b->shape = grow(b->shape, &b->capshape, b->nshape + 1, sizeof *b->shape);
    b->shape[b->nshape] = sh;
    imap_put(&b->shapes, h, (uint32_t)b->nshape);
    return (uint32_t)b->nshape++;
}

static bool cb_absorb(struct cat_builder *b, const struct cat_file *c)
{
    if (!b->started) {
        b->base = c->base;
        b->width = c->width;
        b->started = true;
    } else if (b->base != c->base || b->width != c->width) {
        return false;
    }
    if (level_rank(c->flags) > b->floor)
        b->floor = level_rank(c->flags);
    uint32_t *hmap = xcalloc(c->nhost + 1, sizeof *hmap); /* c's hosts in b */
    for (uint32_t i = 0; i < c->nhost; i++) {
        uint32_t hi = hmap[i] = cb_host_get(b, cs(c, c->host[i])); /* may move b->host */
        b->host[hi].mask |= c->hmask[i];
    }
    uint32_t *map = xcalloc(c->nitem + 1, sizeof *map), *tmp = NULL, ntmp = 0, captmp = 0;
    uint32_t *pos = NULL, cappos = 0;
    for (uint32_t i = 0; i < c->nev; i++) {
        const struct cat_event *e = &c->ev[i];
        uint32_t ei = cb_event_get(b, cs(c, e->name));
        b->ev[ei].mask |= e->mask;
        for (uint32_t k = e->item0; k < e->item0 + e->nitem; k++) {
            const struct cat_item *it = &c->item[k];
            struct slice key = cs(c, it->key), none = slice_make("", 0);
            uint32_t bi = CAT_NONE;
            if (it->kind == CK_FIELD) {
                bi = cb_item_get(b, ei, CK_FIELD, it->aux, key, none);
            } else {
                uint32_t ki = cb_item_get(b, ei, CK_TAG_KEY, 0, key, none);
                b->item[ki].mask |= it->mask;
                if (it->kind == CK_TAG_KEY && (it->aux & CI_INCOMPLETE))
                    cb_incomplete(b, ki);
                bi = it->kind == CK_TAG_KEY ? ki : cb_value(b, ei, ki, key, cs(c, it->val));
            }
            if (bi != CAT_NONE)
                b->item[bi].mask |= it->mask;
            map[k] = bi;
        }
        for (uint32_t k = e->pair0; k < e->pair0 + e->npair; k++) {
            const struct cat_pair *cp = &c->pair[k];
            uint32_t pk = cb_host_pair(b, hmap[cp->host], ei);
            struct cb_pair *p = &b->host[hmap[cp->host]].pairs[pk];
            p->mask |= cp->mask;
            if (c->flags & CAT_F_NO_SETS)
                continue;
            /* items among the event's first 64 go in the pair's bits, the
             * others in a shape of their own */
            uint32_t m = pair_items(c, e, k - e->pair0, &pos, &cappos);
            ntmp = 0;
            for (uint32_t j = 0; j < m; j++) {
                uint32_t bi = map[e->item0 + pos[j]];
                if (bi == CAT_NONE)
                    continue;
                if (b->item[bi].local < 64)
                    p->local |= 1ULL << b->item[bi].local;
                else
                    u32_push(&tmp, &ntmp, &captmp, bi);
            }
            if (ntmp) /* makes no pair: p stays */
                cb_link(b, p, cb_set_shape(b, ei, tmp, ntmp));
        }
    }
    free(tmp);
    free(pos);
    free(map);
    free(hmap);
    return true;
}

struct cat_builder *cat_builder_merge(bool desc, struct cat_file *const *in, size_t n)
{
    struct cat_builder *b = cat_builder_new(desc);
    b->merged = true;
    for (size_t i = 0; i < n; i++)
        if (!in[i] || !cb_absorb(b, in[i])) {
            cat_builder_free(b);
            return NULL;
        }
    return b;
}
