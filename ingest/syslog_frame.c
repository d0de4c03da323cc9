/* RFC 6587 framing of syslog over TCP. The first byte of a connection
 * chooses: a digit 1-9 starts octet counting ("LEN SP MSG", frames back to
 * back, stray CR/LF between them tolerated), anything else newline framing
 * (event.h's line splitter, bounded by max_msg). A frame inside one read
 * is returned in place; one that straddles reads is gathered (at most
 * max_msg bytes). An oversize frame is reported once and its bytes are
 * dropped as they come; a length that is no number cannot be resynced, so
 * the framer breaks and the connection is closed. */
#include "ingest/syslog.h"

#include <string.h>

/* digits of a frame length: beyond this it is no length */
#define MAX_LEN_DIGITS 12

void syslog_framer_init(struct syslog_framer *f, size_t max_msg)
{
    memset(f, 0, sizeof *f);
    f->max_msg = max_msg;
    event_lines_init(&f->lines, max_msg);
    buf_init(&f->frame);
}

void syslog_framer_destroy(struct syslog_framer *f)
{
    event_lines_destroy(&f->lines);
    buf_destroy(&f->frame);
}

static size_t lf_next(struct syslog_framer *f, const char *data, size_t len,
                      enum syslog_frame_kind *kind, struct slice *msg)
{
    enum event_line_kind lk;
    size_t n = event_lines_next(&f->lines, data, len, &lk, msg);
    *kind = lk == EVENT_LINE_OK        ? SYSLOG_FRAME_OK
            : lk == EVENT_LINE_TOOLONG ? SYSLOG_FRAME_TOOBIG
                                       : SYSLOG_FRAME_NONE;
    return n;
}

/* Reads the length "LEN SP" of the next frame. */
static size_t octet_len(struct syslog_framer *f, const char *data, size_t len,
                        enum syslog_frame_kind *kind)
{
    size_t i = 0;
    if (f->ndigits == 0)
        while (i < len && (data[i] == '\n' || data[i] == '\r'))
            i++;
    for (; i < len; i++) {
        char ch = data[i];
        if (ch == ' ' && f->ndigits) {
            f->in_frame = true;
            f->ndigits = 0;
            if (f->len > f->max_msg) {
                f->skip = (size_t)f->len;
                f->in_frame = false;
                *kind = SYSLOG_FRAME_TOOBIG;
            }
            return i + 1;
        }
        bool ok = ch >= '0' && ch <= '9' && (f->ndigits || ch != '0');
        if (!ok || f->ndigits == MAX_LEN_DIGITS) {
            f->is_broken = true;
            *kind = SYSLOG_FRAME_BAD;
            return i;
        }
        f->len = f->len * 10 + (uint64_t)(ch - '0');
        f->ndigits++;
    }
    return len;
}

static size_t octet_body(struct syslog_framer *f, const char *data, size_t len,
                         enum syslog_frame_kind *kind, struct slice *msg)
{
    size_t want = (size_t)f->len - f->frame.len;
    if (f->frame.len == 0 && len >= want) {
        *msg = slice_make(data, want);
    } else {
        size_t n = len < want ? len : want;
        buf_append(&f->frame, data, n);
        if (n < want)
            return n;
        *msg = slice_make(f->frame.data, f->frame.len);
    }
    f->in_frame = false;
    f->len = 0;
    *kind = SYSLOG_FRAME_OK;
    return want;
}

static size_t octet_next(struct syslog_framer *f, const char *data, size_t len,
                         enum syslog_frame_kind *kind, struct slice *msg)
{
    if (f->skip) {
        size_t n = len < f->skip ? len : f->skip;
        f->skip -= n;
        if (!f->skip)
            f->len = 0;
        return n;
    }
    if (!f->in_frame)
        return octet_len(f, data, len, kind);
    return octet_body(f, data, len, kind, msg);
}

size_t syslog_frame_next(struct syslog_framer *f, const char *data, size_t len,
                         enum syslog_frame_kind *kind, struct slice *msg)
{
    *kind = SYSLOG_FRAME_NONE;
    if (f->is_broken || len == 0)
        return 0;
    if (f->mode == SYSLOG_FRAMING_OCTET && !f->in_frame)
        buf_reset(&f->frame); /* the frame handed out by the last call */
    if (f->mode == SYSLOG_FRAMING_UNKNOWN)
        f->mode = data[0] >= '1' && data[0] <= '9' ? SYSLOG_FRAMING_OCTET : SYSLOG_FRAMING_LF;
    if (f->mode == SYSLOG_FRAMING_LF)
        return lf_next(f, data, len, kind, msg);
    return octet_next(f, data, len, kind, msg);
}

enum syslog_frame_kind syslog_frame_finish(struct syslog_framer *f, struct slice *msg)
{
    if (f->mode == SYSLOG_FRAMING_LF)
        return event_lines_finish(&f->lines, msg) == EVENT_LINE_OK ? SYSLOG_FRAME_OK
                                                                   : SYSLOG_FRAME_NONE;
    if (f->mode == SYSLOG_FRAMING_OCTET && !f->is_broken && (f->in_frame || f->ndigits))
        return SYSLOG_FRAME_CUT;
    return SYSLOG_FRAME_NONE;
}

struct slice syslog_unframe(const char *data, size_t len)
{
    size_t i = 0;
    uint64_t n = 0;
    while (i < len && i < MAX_LEN_DIGITS && data[i] >= '0' && data[i] <= '9') {
        n = n * 10 + (uint64_t)(data[i] - '0');
        i++;
    }
    if (i == 0 || data[0] == '0' || i >= len || data[i] != ' ' || n != len - i - 1)
        return slice_make(data, len);
    return slice_make(data + i + 1, len - i - 1);
}
