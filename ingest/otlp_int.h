/* Shared by the OTLP decoders (otlp.c: protobuf, otlp_json.c: OTLP/JSON):
 * the decoder state and the parts of a log record's mapping that do not
 * depend on the encoding. */
#ifndef LB_OTLP_INT_H
#define LB_OTLP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "ingest/logs.h"

struct otlp_dec {
    const struct logs_opts *o;
    const struct logs_out *out; /* NULL: check only */
    struct buf *err;
    struct logrow row;
    struct buf scratch;
    uint64_t no;                             /* records so far */
    const char *rec_error;                   /* the current record's first problem (rejects it) */
    struct logs_names host_keys, event_keys; /* the map's lists, split */
    /* the current resource's attributes (otlp_res_*) */
    struct otlp_res_attr *res; /* kept at its second record */
    size_t nres, res_cap;
    uint64_t res_records; /* its records so far */
    struct buf res_text;  /* the kept TEXT values */
};

void otlp_dec_init(struct otlp_dec *d, const struct logs_opts *o, const struct logs_out *out,
                   struct buf *err);
void otlp_dec_destroy(struct otlp_dec *d);
/* Appends the message to err; ERR_INVAL. */
int otlp_fail(struct otlp_dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "INFO", "WARN3", ... for severity numbers 1..24; NULL otherwise. */
const char *otlp_severity_name(int64_t n);
/* Base64 (standard alphabet, padded) of s, appended. */
void otlp_base64(struct buf *out, const char *s, size_t n);
/* Lower-case hex of s, appended. */
void otlp_hex(struct buf *out, const char *s, size_t n);
/* Appends a finite double as JSON (null otherwise). */
void otlp_json_double(struct buf *out, double v);

/* A record attribute or resource attribute as the row takes it: a string
 * as a tag, an int, double or bool as a field (is_resource: host and
 * event candidates by the map first). */
enum otlp_kind { OTLP_NONE, OTLP_STRING, OTLP_BOOL, OTLP_INT, OTLP_DOUBLE, OTLP_TEXT };
struct otlp_attr {
    enum otlp_kind kind;
    struct slice s; /* STRING; TEXT: the rendered JSON or base64 */
    bool b;
    int64_t i;
    double f;
};
void otlp_add_attr(struct otlp_dec *d, struct slice key, const struct otlp_attr *a,
                   bool is_resource);
/* The resource's attributes, decoded at most twice whatever the number of
 * its records: otlp_res_clear at each new resource; at a record, if
 * otlp_res_decode says so, the decoder passes each of them to
 * otlp_res_attr, and then calls otlp_res_done. The first record's row
 * takes them directly (as otlp_add_attr(..., true)); the second keeps
 * them, and otlp_res_done offers the kept ones to that row and every later
 * one, after the record's own attributes. Keys and STRING values are
 * borrowed (from the body, or the tape of the resourceLogs element that
 * holds the resource's records); TEXT values, rendered in the scratch
 * buffer, are copied. */
struct otlp_res_attr {
    struct slice key;
    struct otlp_attr a;
    size_t text_off; /* TEXT: its bytes in res_text */
};
void otlp_res_clear(struct otlp_dec *d);
bool otlp_res_decode(const struct otlp_dec *d);
void otlp_res_attr(struct otlp_dec *d, struct slice key, const struct otlp_attr *a);
void otlp_res_done(struct otlp_dec *d);
/* Ends a record: the level tag, the ts (time, else observed time, else the
 * arrival stamp) and out->row or out->reject. */
void otlp_end_record(struct otlp_dec *d, uint64_t time_ns, uint64_t observed_ns);

/* --- OTLP/JSON: otlp_json.c (the tape) and otlp_jscan.c (one pass) --- */

/* The index 0..6 of an AnyValue member name (string, bool, int, double,
 * array, kvlist, bytes; camelCase or proto name), or -1. */
int otlp_json_any_name(struct slice key);
/* The members of a LogRecord the mapping reads, and the OTLP_R_* index of
 * a member name (camelCase or proto name), or -1. */
enum {
    OTLP_R_TIME,
    OTLP_R_OBSERVED,
    OTLP_R_BODY,
    OTLP_R_SEVTEXT,
    OTLP_R_SEVNUM,
    OTLP_R_TRACE,
    OTLP_R_SPAN,
    OTLP_R_ATTRS,
    OTLP_R_COUNT
};
int otlp_json_record_name(struct slice key);
/* A severityNumber written as its enum name ("SEVERITY_NUMBER_WARN"): true
 * and its number in *num (0 for a name past the prefix it does not know);
 * false if s does not begin with the prefix. */
bool otlp_json_severity_enum(struct slice s, int64_t *num);
/* The level tag: text if not empty, else severity number num's name (none
 * for 0 or an unknown number). */
void otlp_json_level(struct otlp_dec *d, struct slice text, int64_t num);
/* A trace or span id, a hex string (upper case taken as lower), as the
 * string field key; not hex: the record's rec_error. Empty: nothing. */
void otlp_json_add_id(struct otlp_dec *d, struct slice s, const char *key);
/* The body read in one pass over its bytes (jscan) and, if it takes every
 * part of it, its rows given to d->out (not NULL) as the tape decoder
 * gives them: true. false when it meets anything else (a member order, a
 * value kind or a limit it leaves to the tape decoder, or any error),
 * having given out nothing and written nothing to d->err: the tape decoder
 * then decodes the body, and words every error. body[len] and the
 * OTLP_JSON_PAD bytes after it must be zero. */
#define OTLP_JSON_PAD 16
bool otlp_json_fast(struct otlp_dec *d, const char *body, size_t len);
/* Tests: OTLP/JSON bodies decoded by the tape decoder alone (on) or first
 * in one pass (off, the default). */
void otlp_json_test_tape_only(bool on);
/* Tests: the bodies the one-pass decoder has taken so far. */
uint64_t otlp_json_test_one_passes(void);

#endif
