/* Decoders of the log push protocols: Loki's push API (JSON, or protobuf
 * after snappy) and OpenTelemetry's logs (OTLP/JSON and protobuf). Each
 * takes a whole request body (these are single documents, not lines) and
 * hands out one struct event per log entry, mapped as ingest/README.md
 * says ("Loki push" and "OpenTelemetry logs").
 *
 * Two kinds of bad input:
 *   - a malformed body (bad JSON, truncated protobuf, a wrong type or wire
 *     type, a bad label string or timestamp): the decoder returns
 *     ERR_INVAL with the reason in *err; entries emitted before it was
 *     found must then be discarded (ingest.c keeps a push body's rows in
 *     one pending batch and writes it only after ERR_OK). With out == NULL
 *     a decoder only checks, emitting nothing (tests and fuzz targets
 *     compare both modes).
 *   - a well-formed entry that cannot be a row (a name too long, invalid
 *     UTF-8, too many keys): out->reject gets its number (1-based over the
 *     request) and reason, and the other entries are still emitted.
 *
 * Events borrow the decoder's row buffer until the next callback. */
#ifndef LB_LOGS_H
#define LB_LOGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "ingest/event.h"
#include "ingest/logrow.h"

struct logs_opts {
    struct logs_map map;
    struct event_limits lim;
    struct event_stamp *stamp; /* ts of OTLP records without one; NULL: arrival_ns */
    int64_t arrival_ns;
};

struct logs_out {
    void (*row)(void *arg, uint64_t no, const struct event *ev);
    void (*reject)(void *arg, uint64_t no, const char *reason);
    void *arg;
};

/* The decoders. ERR_OK, or ERR_INVAL with a reason appended to err. */
int loki_decode_json(const char *body, size_t len, const struct logs_opts *o,
                     const struct logs_out *out, struct buf *err);
/* loki_decode_json on a body buffer it may take (otlp_decode_json_buf). */
int loki_decode_json_buf(struct buf *body, const struct logs_opts *o, const struct logs_out *out,
                         struct buf *err);
int loki_decode_proto(const char *body, size_t len, const struct logs_opts *o,
                      const struct logs_out *out, struct buf *err);
int otlp_decode_json(const char *body, size_t len, const struct logs_opts *o,
                     const struct logs_out *out, struct buf *err);
/* otlp_decode_json on a body buffer it may take: its bytes become the
 * parser's text without a copy, and body is left empty. */
int otlp_decode_json_buf(struct buf *body, const struct logs_opts *o, const struct logs_out *out,
                         struct buf *err);
int otlp_decode_proto(const char *body, size_t len, const struct logs_opts *o,
                      const struct logs_out *out, struct buf *err);

/* Snappy (raw block format, as Loki's clients send it): the uncompressed
 * bytes appended to out. ERR_INVAL (bad data) or ERR_TOOBIG (it would
 * exceed max bytes; 0 = no cap) with a reason in err. */
int logs_unsnappy(const char *data, size_t len, size_t max, struct buf *out, struct buf *err);

/* Parses a Loki label string in Prometheus selector form,
 * {a="b", c="d\"e"}: names [a-zA-Z_][a-zA-Z0-9_]*, values Go-style quoted
 * strings (\\ \" \n \t \r \a \b \f \v, \xHH, \NNN octal, \uHHHH,
 * \UHHHHHHHH). Appends name, value pairs to out as NUL-free runs:
 * each pair is u32 name length, name, u32 value length, value. NULL, or a
 * static reason. */
const char *loki_parse_labels(const char *s, size_t len, struct buf *out);

#endif
