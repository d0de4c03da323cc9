/* The row value codec of store/record.h: varint-framed tags and typed fields.
 * Encoding writes straight into the reserved tail of the buf (one size pass,
 * one reserve, no per-item growth checks). Decoding never allocates and
 * bounds-checks every length against the borrowed input. */
#include "model/record.h"

#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"

#define VARINT_MAX 10

static char *put_varint(char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (char)v;
    return p;
}

static char *put_bytes(char *p, struct slice s)
{
    p = put_varint(p, s.len);
    if (s.len)
        memcpy(p, s.ptr, s.len);
    return p + s.len;
}

/* At most the bytes put_field writes for f (bounds, not exact: one pass
 * over the fields instead of two). */
static size_t field_bound(const struct rec_field *f)
{
    size_t n = VARINT_MAX + f->key.len + 1 + VARINT_MAX;
    return f->type == REC_STRING ? n + f->v.s.len : n;
}

static char *put_field(char *p, const struct rec_field *f)
{
    uint64_t bits;
    p = put_bytes(p, f->key);
    *p++ = (char)f->type;
    switch (f->type) {
    case REC_FLOAT:
        memcpy(&bits, &f->v.f, 8);
        for (int i = 0; i < 8; i++)
            *p++ = (char)(bits >> (8 * i));
        break;
    case REC_INT: p = put_varint(p, coding_zigzag(f->v.i)); break;
    case REC_UINT: p = put_varint(p, f->v.u); break;
    case REC_BOOL: *p++ = f->v.b ? 1 : 0; break;
    case REC_STRING: p = put_bytes(p, f->v.s); break;
    }
    return p;
}

void rec_encode(struct buf *out, const struct rec_tag *tags, size_t ntags,
                const struct rec_field *fields, size_t nfields)
{
    size_t need = 2 * VARINT_MAX;
    for (size_t i = 0; i < ntags; i++)
        need += 2 * VARINT_MAX + tags[i].key.len + tags[i].value.len;
    for (size_t i = 0; i < nfields; i++)
        need += field_bound(&fields[i]);
    buf_reserve(out, need);

    char *p = out->data + out->len;
    p = put_varint(p, ntags);
    for (size_t i = 0; i < ntags; i++) {
        p = put_bytes(p, tags[i].key);
        p = put_bytes(p, tags[i].value);
    }
    p = put_varint(p, nfields);
    for (size_t i = 0; i < nfields; i++)
        p = put_field(p, &fields[i]);
    out->len = (size_t)(p - out->data);
}

/* --- decoding --- */

static int get_varint_slow(struct rec_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0, i = 0; i < VARINT_MAX; i++, shift += 7) {
        if (r->pos >= r->in.len)
            return err_corrupt("record: varint runs past the end at offset %zu", r->pos);
        uint8_t c = (uint8_t)r->in.ptr[r->pos++];
        if (i == VARINT_MAX - 1 && c > 1)
            return err_corrupt("record: varint overflows 64 bits at offset %zu", r->pos - 1);
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return ERR_OK;
        }
    }
    return err_corrupt("record: varint too long at offset %zu", r->pos);
}

/* Counts and short lengths take one byte: that case stays inline. */
static inline int get_varint(struct rec_reader *r, uint64_t *out)
{
    if (r->pos < r->in.len && (uint8_t)r->in.ptr[r->pos] < 0x80) {
        *out = (uint8_t)r->in.ptr[r->pos++];
        return ERR_OK;
    }
    return get_varint_slow(r, out);
}

static inline int get_bytes(struct rec_reader *r, struct slice *out)
{
    uint64_t n;
    int rc = get_varint(r, &n);
    if (rc)
        return rc;
    if (n > r->in.len - r->pos)
        return err_corrupt("record: length %llu runs past the end at offset %zu",
                           (unsigned long long)n, r->pos);
    *out = slice_make(r->in.ptr + r->pos, (size_t)n);
    r->pos += (size_t)n;
    return ERR_OK;
}

int rec_reader_init(struct rec_reader *r, struct slice value)
{
    r->in = value;
    r->pos = 0;
    r->section = 0;
    r->left = 0;
    int rc = get_varint(r, &r->left);
    if (rc) {
        r->section = 2;
        return rc;
    }
    return ERR_OK;
}

/* Moves from the tag section to the field section. */
static int enter_fields(struct rec_reader *r)
{
    int rc = get_varint(r, &r->left);
    if (rc)
        return rc;
    r->section = 1;
    return ERR_OK;
}

int rec_next_tag(struct rec_reader *r, struct rec_tag *out)
{
    if (r->section != 0 || r->left == 0)
        return 0;
    struct rec_tag t;
    int rc = get_bytes(r, &t.key);
    if (!rc)
        rc = get_bytes(r, &t.value);
    if (rc) {
        r->section = 2;
        return rc;
    }
    r->left--;
    *out = t;
    return 1;
}

static int get_field(struct rec_reader *r, struct rec_field *f)
{
    int rc = get_bytes(r, &f->key);
    if (rc)
        return rc;
    if (r->pos >= r->in.len)
        return err_corrupt("record: field type missing at offset %zu", r->pos);
    uint8_t type = (uint8_t)r->in.ptr[r->pos++];
    uint64_t v;
    switch (type) {
    case REC_FLOAT:
        if (r->in.len - r->pos < 8)
            return err_corrupt("record: float runs past the end at offset %zu", r->pos);
        v = 0;
        for (int i = 0; i < 8; i++)
            v |= (uint64_t)(uint8_t)r->in.ptr[r->pos + (size_t)i] << (8 * i);
        memcpy(&f->v.f, &v, 8);
        r->pos += 8;
        break;
    case REC_INT:
        if ((rc = get_varint(r, &v)))
            return rc;
        f->v.i = coding_unzigzag(v);
        break;
    case REC_UINT:
        if ((rc = get_varint(r, &f->v.u)))
            return rc;
        break;
    case REC_BOOL:
        if (r->pos >= r->in.len)
            return err_corrupt("record: bool missing at offset %zu", r->pos);
        v = (uint8_t)r->in.ptr[r->pos++];
        if (v > 1)
            return err_corrupt("record: bad bool byte %u at offset %zu", (unsigned)v, r->pos - 1);
        f->v.b = v == 1;
        break;
    case REC_STRING:
        if ((rc = get_bytes(r, &f->v.s)))
            return rc;
        break;
    default:
        return err_corrupt("record: unknown field type %u at offset %zu", (unsigned)type,
                           r->pos - 1);
    }
    f->type = (enum rec_type)type;
    return ERR_OK;
}

int rec_next_field(struct rec_reader *r, struct rec_field *out)
{
    int rc;
    struct rec_tag skip;
    while (r->section == 0) {
        rc = rec_next_tag(r, &skip);
        if (rc < 0)
            return rc;
        if (rc == 0 && (rc = enter_fields(r))) {
            r->section = 2;
            return rc;
        }
    }
    if (r->section != 1)
        return 0;
    if (r->left == 0) {
        r->section = 2;
        if (r->pos != r->in.len)
            return err_corrupt("record: %zu trailing bytes after the fields", r->in.len - r->pos);
        return 0;
    }
    struct rec_field f;
    if ((rc = get_field(r, &f))) {
        r->section = 2;
        return rc;
    }
    r->left--;
    *out = f;
    return 1;
}

/* --- rows of two parts --- */

static void reader_empty(struct rec_reader *r)
{
    memset(r, 0, sizeof *r);
    r->section = 2;
}

int rec_row_init(struct rec_row_reader *rr, struct slice id, struct slice value)
{
    struct slice parts[2] = {id, value};
    rr->tag_part = rr->field_part = 0;
    for (int i = 0; i < 2; i++) {
        if (!parts[i].len) {
            reader_empty(&rr->part[i]);
            continue;
        }
        int rc = rec_reader_init(&rr->part[i], parts[i]);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

int rec_row_next_tag(struct rec_row_reader *rr, struct rec_tag *out)
{
    for (; rr->tag_part < 2; rr->tag_part++) {
        int rc = rec_next_tag(&rr->part[rr->tag_part], out);
        if (rc)
            return rc;
    }
    return 0;
}

int rec_row_next_field(struct rec_row_reader *rr, struct rec_field *out)
{
    for (; rr->field_part < 2; rr->field_part++) {
        int rc = rec_next_field(&rr->part[rr->field_part], out);
        if (rc)
            return rc;
    }
    return 0;
}

/* --- merging versions --- */

struct rec_items {
    struct rec_tag *tags;
    struct rec_field *fields;
    size_t ntags, nfields, cap_tags, cap_fields;
};

static bool has_tag(const struct rec_items *it, size_t n, struct slice key)
{
    for (size_t i = 0; i < n; i++)
        if (slice_eq(it->tags[i].key, key))
            return true;
    return false;
}

static bool has_field(const struct rec_items *it, size_t n, struct slice key)
{
    for (size_t i = 0; i < n; i++)
        if (slice_eq(it->fields[i].key, key))
            return true;
    return false;
}

/* Appends the items of value whose names the first n tags / m fields
 * (those of a newer version) do not have. */
static int gather(struct rec_items *it, struct slice value, size_t n, size_t m)
{
    struct rec_reader r;
    struct rec_tag t;
    struct rec_field f;
    int rc;
    if (!value.len)
        return ERR_OK;
    if ((rc = rec_reader_init(&r, value)))
        return rc;
    while ((rc = rec_next_tag(&r, &t)) == 1) {
        if (has_tag(it, n, t.key))
            continue;
        if (it->ntags == it->cap_tags)
            it->tags = xrealloc(it->tags, (it->cap_tags = 2 * it->cap_tags + 8) * sizeof t);
        it->tags[it->ntags++] = t;
    }
    if (rc)
        return rc;
    while ((rc = rec_next_field(&r, &f)) == 1) {
        if (has_field(it, m, f.key))
            continue;
        if (it->nfields == it->cap_fields)
            it->fields = xrealloc(it->fields, (it->cap_fields = 2 * it->cap_fields + 8) * sizeof f);
        it->fields[it->nfields++] = f;
    }
    return rc;
}

int rec_merge(struct buf *out, struct slice newer, struct slice older)
{
    struct rec_items it = {0};
    int rc = gather(&it, newer, 0, 0);
    if (!rc)
        rc = gather(&it, older, it.ntags, it.nfields);
    if (!rc)
        rec_encode(out, it.tags, it.ntags, it.fields, it.nfields);
    free(it.tags);
    free(it.fields);
    return rc;
}
