/* The log entry builder of the push decoders (logrow.h). */
#include "ingest/logrow.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

int logs_map_rank(const char *list, struct slice key)
{
    int rank = 0;
    const char *p = list;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == key.len && n && memcmp(p, key.ptr, n) == 0)
            return rank;
        rank++;
        p = comma ? comma + 1 : NULL;
    }
    return -1;
}

void logs_names_init(struct logs_names *ln, const char *list)
{
    ln->n = 0;
    ln->long_list = NULL;
    for (const char *p = list; p && *p;) {
        if (ln->n == LOGS_NAMES_MAX) {
            ln->long_list = list;
            return;
        }
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        ln->name[ln->n++] = slice_make(p, n);
        p = comma ? comma + 1 : NULL;
    }
}

int logs_names_rank(const struct logs_names *ln, struct slice key)
{
    if (ln->long_list)
        return logs_map_rank(ln->long_list, key);
    if (!key.len)
        return -1;
    for (int i = 0; i < ln->n; i++)
        if (ln->name[i].len == key.len && memcmp(ln->name[i].ptr, key.ptr, key.len) == 0)
            return i;
    return -1;
}

void logrow_init(struct logrow *r)
{
    memset(r, 0, sizeof *r);
    buf_init(&r->text);
    logrow_reset(r);
}

void logrow_destroy(struct logrow *r)
{
    buf_destroy(&r->text);
    free(r->items);
    free(r->tags);
    free(r->fields);
}

void logrow_reset(struct logrow *r)
{
    buf_reset(&r->text);
    r->nitems = 0;
    r->host_len = r->event_len = 0;
    r->host_off = r->event_off = 0;
    r->host_rank = r->event_rank = INT32_MAX;
}

static size_t put_text(struct logrow *r, struct slice s)
{
    size_t off = r->text.len;
    buf_append(&r->text, s.ptr, s.len);
    return off;
}

void logrow_set_host(struct logrow *r, struct slice host, int rank)
{
    if (rank >= r->host_rank)
        return;
    r->host_rank = rank;
    r->host_off = put_text(r, host);
    r->host_len = host.len;
}

void logrow_set_event(struct logrow *r, struct slice event, int rank)
{
    if (rank >= r->event_rank)
        return;
    r->event_rank = rank;
    r->event_off = put_text(r, event);
    r->event_len = event.len;
}

bool logrow_has(const struct logrow *r, struct slice key)
{
    for (size_t i = 0; i < r->nitems; i++) {
        const struct logrow_item *it = &r->items[i];
        if (it->klen == key.len && memcmp(r->text.data + it->koff, key.ptr, key.len) == 0)
            return true;
    }
    return false;
}

/* A new item for key, or NULL if the key is taken. */
static struct logrow_item *add(struct logrow *r, struct slice key, bool is_tag, enum rec_type t)
{
    if (logrow_has(r, key))
        return NULL;
    if (r->nitems == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = xrealloc(r->items, r->cap * sizeof *r->items);
    }
    struct logrow_item *it = &r->items[r->nitems++];
    memset(it, 0, sizeof *it);
    it->koff = put_text(r, key);
    it->klen = key.len;
    it->is_tag = is_tag;
    it->type = t;
    return it;
}

void logrow_tag(struct logrow *r, struct slice key, struct slice value)
{
    struct logrow_item *it = add(r, key, true, REC_STRING);
    if (it) {
        it->voff = put_text(r, value);
        it->vlen = value.len;
    }
}

void logrow_str(struct logrow *r, struct slice key, struct slice value)
{
    struct logrow_item *it = add(r, key, false, REC_STRING);
    if (it) {
        it->voff = put_text(r, value);
        it->vlen = value.len;
    }
}

void logrow_int(struct logrow *r, struct slice key, int64_t v)
{
    struct logrow_item *it = add(r, key, false, REC_INT);
    if (it)
        it->v.i = v;
}

void logrow_float(struct logrow *r, struct slice key, double v)
{
    struct logrow_item *it = add(r, key, false, REC_FLOAT);
    if (it)
        it->v.f = v;
}

void logrow_bool(struct logrow *r, struct slice key, bool v)
{
    struct logrow_item *it = add(r, key, false, REC_BOOL);
    if (it)
        it->v.b = v;
}

size_t logrow_text_begin(struct logrow *r)
{
    return r->text.len;
}

/* The value was appended after the key's offset was taken: the key goes
 * after the value so that both stay contiguous runs of text. */
static void add_from(struct logrow *r, struct slice key, size_t voff, bool is_tag)
{
    size_t vlen = r->text.len - voff;
    if (logrow_has(r, key)) {
        r->text.len = voff; /* drop the rendered value */
        return;
    }
    struct logrow_item *it = add(r, key, is_tag, REC_STRING);
    it->voff = voff;
    it->vlen = vlen;
}

void logrow_tag_from(struct logrow *r, struct slice key, size_t voff)
{
    add_from(r, key, voff, true);
}

void logrow_str_from(struct logrow *r, struct slice key, size_t voff)
{
    add_from(r, key, voff, false);
}

static const char *check_item(const struct logrow *r, const struct logrow_item *it,
                              const struct event_limits *lim)
{
    struct slice k = slice_make(r->text.data + it->koff, it->klen);
    if (k.len == 0)
        return "empty key";
    if (k.len > lim->max_key_bytes)
        return "key too long";
    bool plain = event_plain_ascii(k); /* most keys: none of the checks below can fail */
    if (!plain && event_has_ctrl(k))
        return "control character in a key";
    if (!plain && !r->utf8_checked && !utf8_valid(k.ptr, k.len))
        return "invalid UTF-8 in a key";
    if (it->type != REC_STRING)
        return NULL;
    struct slice v = slice_make(r->text.data + it->voff, it->vlen);
    if (it->is_tag && v.len && memchr(v.ptr, 0, v.len))
        return "NUL byte in a label or attribute value";
    if (!r->utf8_checked && !utf8_valid(v.ptr, v.len))
        return "invalid UTF-8 in a value";
    return NULL;
}

static void grow_arrays(struct logrow *r)
{
    if (r->nitems > r->tags_cap) {
        r->tags_cap = r->nitems;
        r->tags = xrealloc(r->tags, r->tags_cap * sizeof *r->tags);
    }
    if (r->nitems > r->fields_cap) {
        r->fields_cap = r->nitems;
        r->fields = xrealloc(r->fields, r->fields_cap * sizeof *r->fields);
    }
}

static void build(struct logrow *r, struct event *ev)
{
    size_t nt = 0, nf = 0;
    const char *t = r->text.data;
    for (size_t i = 0; i < r->nitems; i++) {
        const struct logrow_item *it = &r->items[i];
        struct slice k = slice_make(t + it->koff, it->klen);
        if (it->is_tag) {
            r->tags[nt].key = k;
            r->tags[nt++].value = slice_make(t + it->voff, it->vlen);
            continue;
        }
        struct rec_field *f = &r->fields[nf++];
        f->key = k;
        f->type = it->type;
        switch (it->type) {
        case REC_STRING: f->v.s = slice_make(t + it->voff, it->vlen); break;
        case REC_INT: f->v.i = it->v.i; break;
        case REC_FLOAT: f->v.f = it->v.f; break;
        case REC_BOOL: f->v.b = it->v.b; break;
        case REC_UINT: f->v.u = it->v.u; break;
        }
    }
    ev->tags = r->tags;
    ev->ntags = nt;
    ev->fields = r->fields;
    ev->nfields = nf;
}

const char *logrow_event(struct logrow *r, const struct event_limits *lim,
                         const char *default_event, struct event *ev)
{
    size_t nt = 0;
    for (size_t i = 0; i < r->nitems; i++) {
        const char *why = check_item(r, &r->items[i], lim);
        if (why)
            return why;
        nt += r->items[i].is_tag;
    }
    if (nt > lim->max_tags_per_line)
        return "too many labels or attributes as tags (max_tags_per_line)";
    if (r->nitems - nt > lim->max_fields_per_line)
        return "too many fields (max_fields_per_line)";
    if (r->nitems == nt)
        return "no fields";
    /* text is final: slices may point into it now */
    ev->host = r->host_rank == INT32_MAX ? slice_cstr(lim->default_host)
                                         : slice_make(r->text.data + r->host_off, r->host_len);
    ev->name = r->event_rank == INT32_MAX ? slice_cstr(default_event)
                                          : slice_make(r->text.data + r->event_off, r->event_len);
    const char *why = event_check_names(lim, ev->host, ev->name);
    if (why)
        return why;
    grow_arrays(r);
    build(r, ev);
    return NULL;
}
