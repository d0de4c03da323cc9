/* Syslog messages to events: RFC 5424 and RFC 3164 (BSD) parsing, the TCP
 * framer of RFC 6587 (newline or octet counting, chosen per connection by
 * its first byte), and the batch that turns parsed messages into log rows
 * of the store. Knows nothing of sockets: http/syslog.c reads them.
 *
 * The mapping (ingest/README.md, "Syslog"): host = HOSTNAME, event =
 * APP-NAME (3164: the TAG), tags facility, level, procid, msgid and one
 * per structured-data parameter ("SDID.NAME"), field msg = MSG. A message
 * that is neither RFC is stored whole as msg with the arrival time.
 *
 * Threading: a parser, framer or batch is used by one thread at a time. */
#ifndef LB_SYSLOG_H
#define LB_SYSLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "ingest/event.h"

/* --- the parser ----------------------------------------------------------- */

struct syslog_map {
    const char *event;         /* event of every message; NULL or "" = the app-name */
    const char *default_event; /* event of a message without app-name; NULL = "syslog" */
    bool is_host_peer;         /* host = the sender's address, never HOSTNAME */
};

enum syslog_kind {
    SYSLOG_BAD,      /* not stored: *reason says why (NUL byte, empty) */
    SYSLOG_5424,     /* RFC 5424 */
    SYSLOG_3164,     /* RFC 3164 (BSD) */
    SYSLOG_UNPARSED, /* neither: the whole message is msg, ts = now_ns */
};

struct syslog_parser;

/* lim (max_key_bytes, max_tags_per_line) and map are copied, strings too. */
struct syslog_parser *syslog_new(const struct event_limits *lim, const struct syslog_map *map);
void syslog_free(struct syslog_parser *p); /* NULL ok */

/* Parses one message (a frame or datagram; trailing "\r", "\n" and NUL
 * bytes are ignored). now_ns is the arrival time: the ts of a message
 * without one, and the clock of RFC 3164's year guess. peer is the
 * sender's address (host of a message without HOSTNAME; NULL = ""). On
 * anything but SYSLOG_BAD, *ev is set and borrows msg and the parser until
 * its next call; has_ts is false when the message gave no time (the 5424
 * NILVALUE, an unparsed message): ts is then now_ns, which a caller that
 * reads the clock once for many messages replaces with a unique stamp. */
enum syslog_kind syslog_parse(struct syslog_parser *p, const char *msg, size_t len, int64_t now_ns,
                              const char *peer, struct event *ev, const char **reason);

/* The names of a PRI's parts ("err", "local0"); NULL when out of range. */
const char *syslog_level_name(unsigned severity);
const char *syslog_facility_name(unsigned facility);

/* --- the TCP framer (RFC 6587) --------------------------------------------- */

enum syslog_framing {
    SYSLOG_FRAMING_UNKNOWN, /* nothing read yet */
    SYSLOG_FRAMING_LF,      /* non-transparent: each message ends at '\n' */
    SYSLOG_FRAMING_OCTET,   /* octet counting: "LEN SP MSG" */
};

enum syslog_frame_kind {
    SYSLOG_FRAME_NONE,   /* need more bytes */
    SYSLOG_FRAME_OK,     /* *msg holds one message */
    SYSLOG_FRAME_TOOBIG, /* a message longer than max_msg: dropped, skipped */
    SYSLOG_FRAME_BAD,    /* octet counting broken (no length): stop reading */
    SYSLOG_FRAME_CUT,    /* finish: the stream ended inside an octet-counted frame */
};

struct syslog_framer {
    size_t max_msg;
    enum syslog_framing mode;
    struct event_lines lines; /* LF mode */
    struct buf frame;         /* octet mode: bytes of a frame that straddles reads */
    uint64_t len;             /* octet mode: length being read, then of the frame */
    size_t ndigits;           /* digits of len read so far; 0 between frames */
    size_t skip;              /* bytes of an oversize frame still to drop */
    bool in_frame;            /* the length is read; the frame's bytes follow */
    bool is_broken;           /* SYSLOG_FRAME_BAD was returned */
};

void syslog_framer_init(struct syslog_framer *f, size_t max_msg);
void syslog_framer_destroy(struct syslog_framer *f);
/* Consumes bytes of data and returns how many (> 0 unless len is 0 or the
 * framer is broken); *kind says whether a frame completed. *msg borrows
 * data or the framer until the next call. */
size_t syslog_frame_next(struct syslog_framer *f, const char *data, size_t len,
                         enum syslog_frame_kind *kind, struct slice *msg);
/* At the end of the stream: SYSLOG_FRAME_OK for a last line without '\n',
 * SYSLOG_FRAME_CUT for an octet-counted frame cut short, or NONE. */
enum syslog_frame_kind syslog_frame_finish(struct syslog_framer *f, struct slice *msg);

/* A datagram "LEN SP MSG" whose LEN is the length of MSG (syslog-ng's
 * loggen frames its UDP messages so) is MSG; any other is itself. */
struct slice syslog_unframe(const char *data, size_t len);

/* --- rows ----------------------------------------------------------------- */

struct store_db;
struct syslog_batch;

/* A batch of log rows (identified by their whole content, as raw and JSON
 * lines: DESIGN.md section 1). */
struct syslog_batch *syslog_batch_new(void);
void syslog_batch_free(struct syslog_batch *b); /* NULL ok */
/* Adds ev (has_ts must be true) as one row; ev is copied. */
void syslog_batch_add(struct syslog_batch *b, const struct event *ev);
size_t syslog_batch_rows(const struct syslog_batch *b);
size_t syslog_batch_bytes(const struct syslog_batch *b);
/* Writes the rows atomically with store_write (durable as wal_sync says
 * when it returns) and clears the batch on success; ERR_OK or the store's
 * error (the rows stay, to retry or syslog_batch_clear). */
int syslog_batch_write(struct syslog_batch *b, struct store_db *db);
void syslog_batch_clear(struct syslog_batch *b);

#endif
