/* A small JSON parser for whole push bodies (Loki, OTLP): the document is
 * copied once, its strings unescaped in place, and its values laid out as a
 * flat array of nodes in document order (a "tape"), so that a body of N
 * values costs one copy and one array instead of N allocations (jansson's
 * tree made the JSON push paths five times slower than line protocol).
 *
 * Strict RFC 8259: one value, no trailing text, no NaN or comments, no
 * control characters in strings, valid UTF-8 (escapes too: no lone
 * surrogates), \u0000 refused (a NUL cannot be stored), nesting at most
 * JT_MAX_DEPTH.
 *
 * Node 0 is "none" (an absent member); the root is node 1. A container's
 * members are the nodes after it up to its end; an object's are key/value
 * pairs (a STR node, then the value's subtree). */
#ifndef LB_JTAPE_H
#define LB_JTAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "base/slice.h"

#define JT_MAX_DEPTH 64

enum jt_type { JT_NONE, JT_OBJ, JT_ARR, JT_STR, JT_NUM, JT_TRUE, JT_FALSE, JT_NULL };

/* 16 bytes a value: a body of N bytes holds at most N/2 + 1 values, so
 * the tape is at most 8 times the body ("[0,0,0,...]"). */
struct jt_node {
    uint32_t off; /* STR (unescaped), NUM (its text): offset in text */
    uint32_t len;
    uint32_t end; /* index after this node's subtree */
    uint8_t type;
    bool is_int; /* JT_NUM without fraction or exponent */
};

enum jt_doc_state { JT_DOC_FIRST, JT_DOC_VALUE, JT_DOC_ELEMENT, JT_DOC_NEXT, JT_DOC_END };

struct jtape {
    struct jt_node *n;
    size_t len, cap;
    char *text; /* the copy the strings point into */
    size_t text_cap, text_len;
    size_t pos;                  /* jt_doc_*: where the next read starts */
    enum jt_doc_state doc_state; /* jt_doc_*: what comes next */
};

void jt_init(struct jtape *t);
void jt_destroy(struct jtape *t);

/* The calling thread's tape, kept from one body to the next so that its
 * memory is reused: a push body of megabytes no longer has fresh pages
 * faulted in (and handed back) for its copy and nodes at every request
 * (push_bench, OTLP/JSON: 9-13% more events/s). Freed when the thread
 * ends. A thread parses one body at a time with it; jt_release after. */
struct jtape *jt_thread_tape(void);
/* Done with the thread's tape: its memory is freed if it grew past
 * JT_KEEP_BYTES (a rare large body is not held for the thread's life). */
void jt_release(struct jtape *t);
#define JT_KEEP_BYTES (32u << 20)
/* Parses body (copied; a tape's memory is reused). ERR_OK, or ERR_INVAL with "bad JSON at line L
 * column C: reason" appended to err. */
int jt_parse(struct jtape *t, const char *body, size_t len, struct buf *err);

/* A large document read piece by piece, for push bodies that are an
 * object of arrays ({"resourceLogs":[...]}): the tape holds one member's
 * value or one element of an array member at a time (node 1), so that it
 * stays in the cache however large the body (a 2 MB OTLP body's whole
 * tape was 3 MB of nodes, written and then read back from memory). The
 * text is copied once, as by jt_parse; errors read as jt_parse's, with the
 * line and column in the whole body.
 *
 * jt_doc_open: *is_object false when the document is not an object (it is
 * then parsed whole, and checked). jt_doc_member: 1 and the next member's
 * key (its value next: jt_doc_peek, then jt_doc_value or, for an array,
 * jt_doc_element until 0), 0 after the object's end, or ERR_INVAL. A
 * member's value must be read before the next member. */
int jt_doc_open(struct jtape *t, const char *body, size_t len, bool *is_object, struct buf *err);
/* jt_doc_open on the bytes of body without copying them: body is left
 * empty, with the tape's former text buffer (a request's body buffer is
 * its text, instead of a copy of 2 MB). */
int jt_doc_open_buf(struct jtape *t, struct buf *body, bool *is_object, struct buf *err);
int jt_doc_member(struct jtape *t, struct slice *key, struct buf *err);
/* The type of the next value by its first byte: JT_ARR, JT_OBJ, JT_NULL,
 * or JT_NONE for anything else (jt_doc_value checks it). */
enum jt_type jt_doc_peek(const struct jtape *t);
/* The member's value into the tape as node 1. */
int jt_doc_value(struct jtape *t, struct buf *err);
/* The next element of the member's array as node 1 (1), or 0 after the
 * array's end, or ERR_INVAL. */
int jt_doc_element(struct jtape *t, struct buf *err);

/* What jt_doc_array found under its name. */
enum jt_found { JT_FOUND_NONE, JT_FOUND_NULL, JT_FOUND_OTHER, JT_FOUND_ARRAY };
/* Reads the rest of an object document (after jt_doc_open) whose data is
 * an array member, name or alt (NULL: none): each element of the first
 * member of either name goes to each() as node 1 until one returns an
 * error (the first in *mapped, which starts ERR_OK); the other members
 * are read and checked. ERR_OK, or ERR_INVAL for a syntax error anywhere
 * (in err; what was mapped before it is to be dropped). *found: what the
 * member was. */
int jt_doc_array(struct jtape *t, const char *name, const char *alt,
                 int (*each)(void *arg, const struct jtape *t), void *arg, int *mapped,
                 enum jt_found *found, struct buf *err);

/* A push body read for its array member, with the thread's tape:
 * jt_doc_open (body, len) or jt_doc_open_buf (owned, taken), then for an
 * object jt_doc_array (name, alt, each, arg), then jt_release. *is_object
 * and *found as those say; *mapped the first error each() returned
 * (ERR_OK if none; its text in err). ERR_OK, or ERR_INVAL for a syntax
 * error anywhere: its text then replaces what err gained from the
 * mapping, as if the body had been parsed whole before it was mapped. */
int jt_doc_read_array(const char *body, size_t len, struct buf *owned, const char *name,
                      const char *alt, int (*each)(void *arg, const struct jtape *t), void *arg,
                      bool *is_object, enum jt_found *found, int *mapped, struct buf *err);

static inline enum jt_type jt_type_of(const struct jtape *t, uint32_t i)
{
    return (enum jt_type)t->n[i].type;
}
static inline bool jt_is(const struct jtape *t, uint32_t i, enum jt_type ty)
{
    return t->n[i].type == ty;
}
/* The bytes of a STR or NUM node. */
static inline const char *jt_ptr(const struct jtape *t, uint32_t i)
{
    return t->text + t->n[i].off;
}
static inline struct slice jt_str(const struct jtape *t, uint32_t i)
{
    return slice_make(jt_ptr(t, i), t->n[i].len);
}
/* The member named key (kl bytes) of object o, or 0 (absent, or o not an
 * object). jt_get: a C string's, its length known where it is a literal. */
static inline uint32_t jt_getn(const struct jtape *t, uint32_t o, const char *key, size_t kl)
{
    if (!o || t->n[o].type != JT_OBJ)
        return 0;
    for (uint32_t k = o + 1; k < t->n[o].end; k = t->n[k + 1].end)
        if (t->n[k].len == kl && memcmp(t->text + t->n[k].off, key, kl) == 0)
            return k + 1;
    return 0;
}
static inline uint32_t jt_get(const struct jtape *t, uint32_t o, const char *key)
{
    return jt_getn(t, o, key, strlen(key));
}
/* The number of elements of an array (0 for anything else). */
size_t jt_count(const struct jtape *t, uint32_t a);
/* An integer node as int64 (true), or false (not an integer, or out of
 * range). */
bool jt_int(const struct jtape *t, uint32_t i, int64_t *out);
/* A number node as a double. */
bool jt_double(const struct jtape *t, uint32_t i, double *out);

/* Elements of array a; members (key node k, value node k + 1) of object o. */
#define JT_EACH(t, a, c) for (uint32_t c = (a) + 1; c < (t)->n[a].end; c = (t)->n[c].end)
#define JT_MEMBERS(t, o, k) for (uint32_t k = (o) + 1; k < (t)->n[o].end; k = (t)->n[k + 1].end)

#endif
