/* One log entry being built by a push decoder (Loki, OTLP): host, event,
 * tags and typed fields whose bytes are copied into the row's own buffer,
 * so that values rendered on the fly (escaped labels, JSON of a structured
 * body, hex ids) and values borrowed from the body are handled alike.
 *
 * A key given twice keeps its first value (decoders add the entry's own
 * keys before the stream's or resource's, so the most specific wins).
 * logrow_event checks the row against the limits and hands out a struct
 * event that borrows the row until its next logrow_reset.
 *
 * The mapping of labels or attributes to host and event is a comma list
 * of key names each (logs_map); the first name of the list that the entry
 * has wins. */
#ifndef LB_LOGROW_H
#define LB_LOGROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "ingest/event.h"
#include "model/record.h"

struct logs_map {
    const char *host_keys;     /* e.g. "host,hostname,instance" */
    const char *event_keys;    /* e.g. "job,app,service_name" */
    const char *default_event; /* event of an entry without any; not empty */
};

/* Position of key in the comma list (0 = first), or -1. */
int logs_map_rank(const char *list, struct slice key);

/* A comma list split once, for a decoder that looks keys up in it for
 * every attribute of a body; the same ranks as logs_map_rank (a list of
 * more than LOGS_NAMES_MAX names is read as logs_map_rank reads it). The
 * names point into list, which must outlive it. */
#define LOGS_NAMES_MAX 16
struct logs_names {
    struct slice name[LOGS_NAMES_MAX];
    int n;
    const char *long_list; /* too many names: ranked by logs_map_rank */
};
void logs_names_init(struct logs_names *ln, const char *list);
int logs_names_rank(const struct logs_names *ln, struct slice key);

struct logrow_item {
    size_t koff, klen;
    bool is_tag;
    enum rec_type type;
    size_t voff, vlen; /* tags and STRING fields */
    union {
        double f;
        int64_t i;
        uint64_t u;
        bool b;
    } v;
};

struct logrow {
    struct buf text; /* every byte of the entry's keys and values */
    struct logrow_item *items;
    size_t nitems, cap;
    size_t host_off, host_len, event_off, event_len;
    int host_rank, event_rank; /* rank of the key that set them; INT32_MAX none */
    /* every key and value given comes from UTF-8 a decoder has checked
     * (a JSON parser's strings, and what it renders from them): not
     * checked again. Set by the decoder, kept across logrow_reset. */
    bool utf8_checked;
    struct rec_tag *tags; /* built by logrow_event */
    struct rec_field *fields;
    size_t tags_cap, fields_cap;
};

void logrow_init(struct logrow *r);
void logrow_destroy(struct logrow *r);
void logrow_reset(struct logrow *r);

/* Offers a host or event candidate of the given rank (lower wins). */
void logrow_set_host(struct logrow *r, struct slice host, int rank);
void logrow_set_event(struct logrow *r, struct slice event, int rank);
/* Whether key is already in the row. */
bool logrow_has(const struct logrow *r, struct slice key);
void logrow_tag(struct logrow *r, struct slice key, struct slice value);
void logrow_str(struct logrow *r, struct slice key, struct slice value);
void logrow_int(struct logrow *r, struct slice key, int64_t v);
void logrow_float(struct logrow *r, struct slice key, double v);
void logrow_bool(struct logrow *r, struct slice key, bool v);
/* A tag or STRING field whose value the caller appends to r->text after
 * this call (logrow_text_begin gives the offset it starts at): */
size_t logrow_text_begin(struct logrow *r);
void logrow_tag_from(struct logrow *r, struct slice key, size_t voff);
void logrow_str_from(struct logrow *r, struct slice key, size_t voff);

/* Checks the row and fills *ev (ts and has_ts are the caller's): NULL, or
 * a static reason (empty or over-long names or keys, control characters
 * in keys, NUL in a tag value, invalid UTF-8, too many tags or fields). A
 * row without an event takes default_event. */
const char *logrow_event(struct logrow *r, const struct event_limits *lim,
                         const char *default_event, struct event *ev);

#endif
