/* The parsed event every ingest parser produces (DESIGN.md section 1), the
 * limits that bound a line, the line splitter the streaming parsers share,
 * and the daemon-wide strictly increasing arrival stamp.
 *
 * Every slice in a struct event is borrowed from the parser that produced it
 * and is valid until the next call on that parser. */
#ifndef LB_EVENT_H
#define LB_EVENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/record.h"

struct event {
    int64_t ts;                 /* ns since the epoch; meaningful only if has_ts */
    bool has_ts;                /* false: the line gave no timestamp */
    struct slice host;          /* 0..KEY_MAX_NAME bytes, no NUL, UTF-8 */
    struct slice name;          /* the event (measurement): 1..KEY_MAX_NAME bytes */
    const struct rec_tag *tags; /* the other tags, in line order */
    size_t ntags;
    const struct rec_field *fields; /* at least one, keys unique */
    size_t nfields;
};

struct event_limits {
    size_t max_line_bytes;      /* bytes of a line before its '\n' (a '\r' counts) */
    size_t max_key_bytes;       /* host, event, tag key, field key; default 1024 */
    size_t max_tags_per_line;   /* default 1024 (DESIGN.md section 7) */
    size_t max_fields_per_line; /* default 1024 */
    const char *host_tag;       /* tag that becomes the host; default "host"; borrowed */
    const char *default_host;   /* host of a line without one; default ""; borrowed */
};

#define EVENT_DEFAULT_MAX_LINE (1024 * 1024)
#define EVENT_DEFAULT_MAX_KEY 1024
#define EVENT_DEFAULT_MAX_TAGS 1024
#define EVENT_DEFAULT_MAX_FIELDS 1024

/* Fills l with the defaults above. */
void event_limits_default(struct event_limits *l);

/* Checks that host (may be empty) and name (not empty) can be a row key:
 * length within the limits and KEY_MAX_NAME, no NUL or other control
 * character, valid UTF-8. Returns NULL or a static reason ("empty event
 * name", ...). */
const char *event_check_names(const struct event_limits *lim, struct slice host, struct slice name);
/* Whether s holds a control character (below 0x20, or 0x7f). */
bool event_has_ctrl(struct slice s);
/* Whether every byte of s is printable ASCII or a space (0x20..0x7e): then
 * it holds no NUL, no control character and no invalid UTF-8 (the check
 * most keys and names pass, eight bytes at a time). */
bool event_plain_ascii(struct slice s);

/* Index of a field whose key appears more than once, or -1. Up to 16 keys
 * are compared pairwise; more are sorted as copies in scratch (reused
 * between calls, may be grown); fields itself is not reordered. */
long event_dup_field(const struct rec_field *fields, size_t n, struct buf *scratch);
/* Same for tag keys. */
long event_dup_tag(const struct rec_tag *tags, size_t n, struct buf *scratch);

/* What a streaming parser hands back for one line. */
enum event_kind {
    EVENT_NONE, /* nothing: need more bytes, or a blank / comment line */
    EVENT_OK,   /* ev holds the event of line line_no */
    EVENT_BAD,  /* line line_no is dropped; reason says why */
};

struct event_result {
    enum event_kind kind;
    uint64_t line_no;   /* 1-based, counting every line of the body */
    struct event ev;    /* EVENT_OK; borrowed, valid until the next parser call */
    const char *reason; /* EVENT_BAD; NUL-terminated, valid until the next parser call */
    struct slice line;  /* the line's text (empty for a line too long); as ev */
};

/* --- the line splitter -------------------------------------------------- */

/* Splits a byte stream that arrives in pieces into lines. A line that lies
 * wholly within one piece is returned in place (no copy); one that straddles
 * pieces is gathered into an internal buffer of at most max_line bytes. A
 * longer line is reported once (EVENT_LINE_TOOLONG) and its bytes are skipped
 * up to its newline without being kept. A trailing '\r' is stripped from
 * every line. Lines are numbered from 1, counting every line (blank and
 * comment lines too). */
struct event_lines {
    struct buf partial; /* bytes of the current straddling line */
    size_t max_line;
    uint64_t line_no;    /* number of the line most recently returned */
    bool is_skipping;    /* inside an over-long line, dropping to its '\n' */
    bool is_partial_out; /* partial was handed out as a line; reset on next call */
};

enum event_line_kind {
    EVENT_LINE_NONE,    /* nothing yet: all bytes consumed, need more */
    EVENT_LINE_OK,      /* *line holds a whole line (without "\r\n") */
    EVENT_LINE_TOOLONG, /* the line numbered line_no is longer than max_line */
};

void event_lines_init(struct event_lines *s, size_t max_line);
void event_lines_destroy(struct event_lines *s);
/* Consumes bytes from data[0..len) and returns how many (> 0 when len > 0).
 * *kind says whether a line was completed; *line is valid until the next
 * call and borrows either data or the internal buffer. */
size_t event_lines_next(struct event_lines *s, const char *data, size_t len,
                        enum event_line_kind *kind, struct slice *line);
/* At the end of the stream: returns the kind of the last, unterminated line
 * (EVENT_LINE_NONE if there is none). */
enum event_line_kind event_lines_finish(struct event_lines *s, struct slice *line);

/* --- the driver of a line-oriented parser ------------------------------- */

/* Parses one whole line (without "\n" and a trailing "\r"): EVENT_OK with
 * *ev set, EVENT_BAD with *reason set, or EVENT_NONE (a blank or comment
 * line). Results borrow the line and the parser until its next call. */
typedef enum event_kind (*event_line_fn)(void *parser, const char *line, size_t len,
                                         struct event *ev, const char **reason);

/* Every line-oriented parser (line protocol, raw lines, JSON lines) is fed
 * through one of these: the splitter above hands each line to parse, and a
 * line longer than max_line is reported once as "line too long (max N)". */
struct event_feed {
    struct event_lines lines;
    event_line_fn parse;
    void *parser;
    char reason[48];
    /* A parser whose record spans lines (a line-protocol string holding a
     * newline) returns EVENT_NONE for the lines it keeps, and with the
     * record's result sets first_line (its first line's number) and joined
     * (its whole text); the feed reports them and clears both. */
    uint64_t first_line;
    struct slice joined;
    /* NULL, or called at the end of the body for a record still open
     * there: its result (EVENT_NONE if none is open). */
    event_line_fn flush;
};

void event_feed_init(struct event_feed *f, size_t max_line, event_line_fn parse, void *parser);
void event_feed_destroy(struct event_feed *f);
/* Consumes bytes of data (returns how many; > 0 unless len is 0) and fills
 * *out with at most one line's result. Call again with the rest until
 * everything is consumed; a line cut at the end of data is kept (bounded
 * by max_line) and completed by the next call. */
size_t event_feed_next(struct event_feed *f, const char *data, size_t len,
                       struct event_result *out);
/* At the end of the body: parses an unterminated last line. Returns true
 * when *out holds a result. */
bool event_feed_finish(struct event_feed *f, struct event_result *out);

/* --- arrival stamps ----------------------------------------------------- */

/* A strictly increasing nanosecond clock shared by every request of the
 * daemon: each call returns max(now, last + 1). Thread-safe (one CAS). */
struct event_stamp {
    _Atomic int64_t last;
    int64_t (*now)(void *arg); /* NULL: CLOCK_REALTIME; tests inject a clock */
    void *arg;
};

void event_stamp_init(struct event_stamp *st, int64_t (*now)(void *arg), void *arg);
int64_t event_stamp_next(struct event_stamp *st);
/* The clock the stamps follow, read without taking a stamp. */
int64_t event_stamp_now(const struct event_stamp *st);

#endif
