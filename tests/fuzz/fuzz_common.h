/* Shared by the ingest fuzz targets: a deterministic chunk splitter driven by
 * the input's first bytes, and checks every produced event must pass (names
 * within limits, no NUL, valid UTF-8, at least one field, and an exact
 * record encode/decode round trip). A failed check aborts. */
#ifndef LB_FUZZ_COMMON_H
#define LB_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "ingest/event.h"
#include "model/key.h"
#include "model/record.h"

static inline uint64_t fuzz_rng(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define FUZZ_CHECK(c)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

static inline bool fuzz_field_eq(const struct rec_field *a, const struct rec_field *b)
{
    if (!slice_eq(a->key, b->key) || a->type != b->type)
        return false;
    switch (a->type) {
    case REC_FLOAT: return memcmp(&a->v.f, &b->v.f, sizeof(double)) == 0;
    case REC_INT: return a->v.i == b->v.i;
    case REC_UINT: return a->v.u == b->v.u;
    case REC_BOOL: return a->v.b == b->v.b;
    case REC_STRING: return slice_eq(a->v.s, b->v.s);
    }
    return false;
}

static inline void fuzz_check_event(const struct event *ev, struct buf *scratch)
{
    FUZZ_CHECK(ev->name.len >= 1 && ev->name.len <= KEY_MAX_NAME);
    FUZZ_CHECK(ev->host.len <= KEY_MAX_NAME);
    FUZZ_CHECK(!memchr(ev->name.ptr, 0, ev->name.len));
    FUZZ_CHECK(ev->host.len == 0 || !memchr(ev->host.ptr, 0, ev->host.len));
    FUZZ_CHECK(utf8_valid(ev->name.ptr, ev->name.len));
    FUZZ_CHECK(utf8_valid(ev->host.ptr, ev->host.len));
    FUZZ_CHECK(ev->nfields >= 1);
    for (size_t i = 0; i < ev->name.len; i++)
        FUZZ_CHECK((unsigned char)ev->name.ptr[i] >= 0x20 && ev->name.ptr[i] != 0x7f);
    for (size_t i = 0; i < ev->host.len; i++)
        FUZZ_CHECK((unsigned char)ev->host.ptr[i] >= 0x20 && ev->host.ptr[i] != 0x7f);
    buf_reset(scratch);
    rec_encode(scratch, ev->tags, ev->ntags, ev->fields, ev->nfields);
    struct rec_reader r;
    FUZZ_CHECK(rec_reader_init(&r, slice_make(scratch->data, scratch->len)) == 0);
    struct rec_tag t;
    for (size_t i = 0; i < ev->ntags; i++) {
        FUZZ_CHECK(rec_next_tag(&r, &t) == 1);
        FUZZ_CHECK(slice_eq(t.key, ev->tags[i].key) && slice_eq(t.value, ev->tags[i].value));
    }
    FUZZ_CHECK(rec_next_tag(&r, &t) == 0);
    struct rec_field f;
    for (size_t i = 0; i < ev->nfields; i++) {
        FUZZ_CHECK(rec_next_field(&r, &f) == 1);
        FUZZ_CHECK(fuzz_field_eq(&f, &ev->fields[i]));
    }
    FUZZ_CHECK(rec_next_field(&r, &f) == 0);
}

#endif
