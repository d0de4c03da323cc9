/* RFC 5424 and RFC 3164 syslog messages to events. The message is read by a
 * cursor; tokens borrow it, and the only copies are structured-data names
 * and unescaped values (built in p->text and turned into slices once the
 * message is complete, since the buffer may move while it grows) and a
 * message body with invalid UTF-8, repaired as raw lines are. Anything that
 * breaks either grammar makes the whole message the msg of an UNPARSED
 * event, so no byte a sender gave is lost. */
#include "ingest/syslog.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/utf8.h"
#include "model/time.h"

#define NSEC 1000000000LL
#define NO_OFS ((size_t)-1)

struct syslog_parser {
    struct event_limits lim;
    char *event;         /* NULL: the app-name */
    char *default_event; /* "syslog" unless configured */
    bool is_host_peer;

    struct rec_tag *tags;
    size_t *kofs, *vofs; /* offset in text of a built key or value, or NO_OFS */
    size_t ntags, cap;
    struct buf text;
    struct buf repaired;
    struct buf dup;
    struct rec_field msg;

    /* RFC 3164 clock: the local start of one hour, and now's year and month */
    int64_t hour_key, hour_epoch;
    int64_t now_minute;
    int now_year, now_mon;
    struct time_memo stamp; /* the last RFC 3339 stamp's date and time of day */
};

static const char *const level_names[8] = {"emerg",   "alert",  "crit", "err",
                                           "warning", "notice", "info", "debug"};
/* rsyslog's names (syslogfacility-text) */
static const char *const facility_names[24] = {"kern",     "user",   "mail",   "daemon", "auth",
                                               "syslog",   "lpr",    "news",   "uucp",   "cron",
                                               "authpriv", "ftp",    "ntp",    "audit",  "alert",
                                               "clock",    "local0", "local1", "local2", "local3",
                                               "local4",   "local5", "local6", "local7"};
static const char *const months[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

const char *syslog_level_name(unsigned severity)
{
    return severity < 8 ? level_names[severity] : NULL;
}

const char *syslog_facility_name(unsigned facility)
{
    return facility < 24 ? facility_names[facility] : NULL;
}

struct syslog_parser *syslog_new(const struct event_limits *lim, const struct syslog_map *map)
{
    struct syslog_parser *p = xcalloc(1, sizeof *p);
    p->lim = *lim;
    p->lim.host_tag = NULL;
    p->lim.default_host = NULL;
    p->event = map->event && *map->event ? xstrdup(map->event) : NULL;
    p->default_event = xstrdup(map->default_event ? map->default_event : "syslog");
    p->is_host_peer = map->is_host_peer;
    buf_init(&p->text);
    buf_init(&p->repaired);
    buf_init(&p->dup);
    p->msg.key = slice_cstr("msg");
    p->msg.type = REC_STRING;
    p->hour_key = -1;
    p->now_minute = INT64_MIN;
    return p;
}

void syslog_free(struct syslog_parser *p)
{
    if (!p)
        return;
    free(p->event);
    free(p->default_event);
    free(p->tags);
    free(p->kofs);
    free(p->vofs);
    buf_destroy(&p->text);
    buf_destroy(&p->repaired);
    buf_destroy(&p->dup);
    free(p);
}

/* --- tags ----------------------------------------------------------------- */

static void tag_slot(struct syslog_parser *p)
{
    if (p->ntags < p->cap)
        return;
    p->cap = p->cap ? p->cap * 2 : 16;
    p->tags = xrealloc(p->tags, p->cap * sizeof *p->tags);
    p->kofs = xrealloc(p->kofs, p->cap * sizeof *p->kofs);
    p->vofs = xrealloc(p->vofs, p->cap * sizeof *p->vofs);
}

static void tag_add(struct syslog_parser *p, const char *key, struct slice value)
{
    tag_slot(p);
    p->tags[p->ntags] = (struct rec_tag){slice_cstr(key), value};
    p->kofs[p->ntags] = NO_OFS;
    p->vofs[p->ntags] = NO_OFS;
    p->ntags++;
}

/* A structured-data tag: key "SDID.NAME" and the value are built in text by
 * the caller; here their offsets are recorded (lengths in the slices). */
static void tag_add_built(struct syslog_parser *p, size_t kofs, size_t klen, size_t vofs,
                          size_t vlen)
{
    tag_slot(p);
    p->tags[p->ntags] = (struct rec_tag){{NULL, klen}, {NULL, vlen}};
    p->kofs[p->ntags] = kofs;
    p->vofs[p->ntags] = vofs;
    p->ntags++;
}

static void tags_resolve(struct syslog_parser *p)
{
    for (size_t i = 0; i < p->ntags; i++) {
        if (p->kofs[i] != NO_OFS)
            p->tags[i].key.ptr = p->text.data + p->kofs[i];
        if (p->vofs[i] != NO_OFS)
            p->tags[i].value.ptr = p->text.data + p->vofs[i];
    }
}

/* --- the cursor ------------------------------------------------------------ */

struct cur {
    const char *s;
    size_t pos, len;
};

static bool at_end(const struct cur *c)
{
    return c->pos >= c->len;
}

static int peek(const struct cur *c)
{
    return c->pos < c->len ? (unsigned char)c->s[c->pos] : -1;
}

static bool eat(struct cur *c, char ch)
{
    if (peek(c) != (unsigned char)ch)
        return false;
    c->pos++;
    return true;
}

static bool is_print(int ch)
{
    return ch >= 33 && ch <= 126; /* PRINTUSASCII */
}

/* The bytes from pos on that are printable ASCII (is_print), 16 at a time
 * while 16 are left. */
static size_t skip_print(const char *s, size_t pos, size_t len)
{
#ifdef __SSE2__
    const __m128i lo = _mm_set1_epi8(33), del = _mm_set1_epi8(127);
    while (pos + 16 <= len) {
        /* signed: bytes 0x80 and up are below 33 too */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + pos));
        unsigned bad = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmplt_epi8(x, lo), _mm_cmpeq_epi8(x, del)));
        if (bad)
            return pos + (size_t)__builtin_ctz(bad);
        pos += 16;
    }
#endif
    while (pos < len && is_print((unsigned char)s[pos]))
        pos++;
    return pos;
}

/* A token of 1..max printable ASCII bytes ending at a space or the end. */
static bool token(struct cur *c, size_t max, struct slice *out)
{
    size_t start = c->pos;
    c->pos = skip_print(c->s, c->pos, c->len);
    size_t n = c->pos - start;
    if (n == 0 || n > max || (!at_end(c) && c->s[c->pos] != ' '))
        return false;
    *out = slice_make(c->s + start, n);
    return true;
}

static bool is_nil(struct slice s)
{
    return s.len == 1 && s.ptr[0] == '-';
}

/* Up to max decimal digits (at least one). */
static bool number(struct cur *c, size_t max, unsigned *out)
{
    unsigned v = 0;
    size_t n = 0;
    while (n < max && c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
        v = v * 10 + (unsigned)(c->s[c->pos] - '0');
        c->pos++;
        n++;
    }
    *out = v;
    return n > 0;
}

/* "<PRI>": 1..3 digits, 0..191, no leading zero but "<0>". */
static bool pri(struct cur *c, unsigned *out)
{
    if (!eat(c, '<'))
        return false;
    size_t start = c->pos;
    unsigned v;
    if (!number(c, 3, &v) || v > 191 || (c->pos - start > 1 && c->s[start] == '0'))
        return false;
    *out = v;
    return eat(c, '>');
}

/* --- RFC 5424 --------------------------------------------------------------- */

static bool sd_name_char(int ch)
{
    return is_print(ch) && ch != '=' && ch != ']' && ch != '"';
}

static bool sd_name(struct cur *c, struct slice *out)
{
    size_t start = c->pos;
    while (c->pos < c->len && sd_name_char((unsigned char)c->s[c->pos]))
        c->pos++;
    size_t n = c->pos - start;
    *out = slice_make(c->s + start, n);
    return n >= 1 && n <= 32;
}

/* PARAM-VALUE after its opening quote, unescaped into text up to the
 * closing quote: \" \\ \] stand for the character; any other backslash is
 * itself. Control characters are refused (a tag value holds none). */
static bool sd_value(struct syslog_parser *p, struct cur *c)
{
    while (c->pos < c->len) {
        char ch = c->s[c->pos++];
        if (ch == '"')
            return true;
        if (ch == '\\' && c->pos < c->len &&
            (c->s[c->pos] == '"' || c->s[c->pos] == '\\' || c->s[c->pos] == ']'))
            ch = c->s[c->pos++];
        else if ((unsigned char)ch < 0x20 || ch == 0x7f)
            return false;
        buf_putc(&p->text, ch);
    }
    return false;
}

/* A parameter named again in its element (RFC 5424 lets one repeat:
 * origin's "ip"; the element's tags are from tag from on): its value joins
 * the earlier tag's, after a comma, and it makes no tag of its own. False
 * if the key (at kofs in text) is new. (An SD-ID repeated, which RFC 5424
 * forbids, still makes the message unparsed.) */
static bool sd_join_repeated(struct syslog_parser *p, size_t from, size_t kofs, size_t klen,
                             size_t vofs, size_t vlen)
{
    for (size_t i = from; i < p->ntags; i++) {
        if (p->kofs[i] == NO_OFS || p->tags[i].key.len != klen ||
            memcmp(p->text.data + p->kofs[i], p->text.data + kofs, klen) != 0)
            continue;
        size_t old = p->vofs[i], olen = p->tags[i].value.len, at = p->text.len;
        buf_reserve(&p->text, olen + 1 + vlen); /* no pointer into text is held */
        buf_append(&p->text, p->text.data + old, olen);
        buf_putc(&p->text, ',');
        buf_append(&p->text, p->text.data + vofs, vlen);
        p->vofs[i] = at;
        p->tags[i].value.len = olen + 1 + vlen;
        return true;
    }
    return false;
}

static bool sd_param(struct syslog_parser *p, struct cur *c, struct slice id, size_t from)
{
    struct slice name;
    if (!sd_name(c, &name) || !eat(c, '=') || !eat(c, '"'))
        return false;
    size_t kofs = p->text.len;
    buf_append(&p->text, id.ptr, id.len);
    buf_putc(&p->text, '.');
    buf_append(&p->text, name.ptr, name.len);
    size_t klen = p->text.len - kofs;
    size_t vofs = p->text.len;
    if (!sd_value(p, c))
        return false;
    size_t vlen = p->text.len - vofs;
    if (!utf8_valid(p->text.data + vofs, vlen) || klen > p->lim.max_key_bytes)
        return false;
    if (!sd_join_repeated(p, from, kofs, klen, vofs, vlen))
        tag_add_built(p, kofs, klen, vofs, vlen);
    return true;
}

/* "[ID param=\"v\" ...]": each parameter a tag "ID.param"; an element
 * without parameters a tag "ID" with an empty value. */
static bool sd_element(struct syslog_parser *p, struct cur *c)
{
    struct slice id;
    if (!eat(c, '[') || !sd_name(c, &id))
        return false;
    size_t before = p->ntags;
    while (eat(c, ' '))
        if (!sd_param(p, c, id, before))
            return false;
    if (!eat(c, ']'))
        return false;
    if (p->ntags == before) {
        size_t kofs = p->text.len;
        buf_append(&p->text, id.ptr, id.len);
        tag_add_built(p, kofs, id.len, p->text.len, 0);
    }
    return true;
}

static bool structured_data(struct syslog_parser *p, struct cur *c)
{
    if (eat(c, '-'))
        return at_end(c) || peek(c) == ' ';
    if (peek(c) != '[')
        return false;
    while (peek(c) == '[')
        if (!sd_element(p, c))
            return false;
    return at_end(c) || peek(c) == ' ';
}

static void add_opt_tag(struct syslog_parser *p, const char *key, struct slice v)
{
    if (!is_nil(v))
        tag_add(p, key, v);
}

/* The body after the header: an optional UTF-8 BOM is dropped; invalid
 * UTF-8 is repaired (U+FFFD), as raw lines are. */
static struct slice body_of(struct syslog_parser *p, struct slice m)
{
    if (m.len >= 3 && memcmp(m.ptr, "\xEF\xBB\xBF", 3) == 0)
        m = slice_make(m.ptr + 3, m.len - 3);
    if (utf8_valid(m.ptr, m.len))
        return m;
    buf_reset(&p->repaired);
    utf8_repair(m.ptr, m.len, &p->repaired);
    return slice_make(p->repaired.data, p->repaired.len);
}

/* The event name from the app-name (or 3164 tag), which then is no tag;
 * with a configured event, the app-name is kept as tag "appname". */
static struct slice event_name(struct syslog_parser *p, struct slice app)
{
    if (p->event) {
        if (app.len && !is_nil(app))
            tag_add(p, "appname", app);
        return slice_cstr(p->event);
    }
    if (app.len && !is_nil(app))
        return app;
    return slice_cstr(p->default_event);
}

static void fixed_tags(struct syslog_parser *p, unsigned prival)
{
    tag_add(p, "facility", slice_cstr(facility_names[prival / 8]));
    tag_add(p, "level", slice_cstr(level_names[prival % 8]));
}

/* Host and event checks, tags resolved and checked, the event filled.
 * False sends the message to the UNPARSED path. */
static bool finish(struct syslog_parser *p, struct slice host, struct slice name, struct slice body,
                   struct event *ev)
{
    if (p->ntags > p->lim.max_tags_per_line)
        return false;
    if (event_check_names(&p->lim, host, name))
        return false;
    tags_resolve(p);
    if (event_dup_tag(p->tags, p->ntags, &p->dup) >= 0)
        return false;
    p->msg.v.s = body_of(p, body);
    ev->host = host;
    ev->name = name;
    ev->tags = p->tags;
    ev->ntags = p->ntags;
    ev->fields = &p->msg;
    ev->nfields = 1;
    return true;
}

static struct slice host_of(struct syslog_parser *p, struct slice hostname, const char *peer)
{
    if (p->is_host_peer || hostname.len == 0 || is_nil(hostname))
        return slice_cstr(peer ? peer : "");
    return hostname;
}

static bool parse_5424(struct syslog_parser *p, struct cur *c, unsigned prival, int64_t now_ns,
                       const char *peer, struct event *ev)
{
    unsigned version;
    struct slice ts, hostname, app, procid, msgid;
    if (!number(c, 2, &version) || version == 0 || !eat(c, ' '))
        return false;
    if (!token(c, 64, &ts) || !eat(c, ' ') || !token(c, 255, &hostname) || !eat(c, ' ') ||
        !token(c, 48, &app) || !eat(c, ' ') || !token(c, 128, &procid) || !eat(c, ' ') ||
        !token(c, 32, &msgid) || !eat(c, ' '))
        return false;
    ev->has_ts = !is_nil(ts);
    ev->ts = now_ns;
    if (!is_nil(ts) && (!memchr(ts.ptr, 'T', ts.len) ||
                        time_parse_rfc3339_memo(&p->stamp, ts.ptr, ts.len, &ev->ts) != 0))
        return false;
    fixed_tags(p, prival);
    struct slice name = event_name(p, app);
    add_opt_tag(p, "procid", procid);
    add_opt_tag(p, "msgid", msgid);
    if (!structured_data(p, c))
        return false;
    struct slice body = {c->s + c->len, 0};
    if (eat(c, ' '))
        body = slice_make(c->s + c->pos, c->len - c->pos);
    return finish(p, host_of(p, hostname, peer), name, body, ev);
}

/* --- RFC 3164 ---------------------------------------------------------------- */

/* Now's local year and month, recomputed once a minute. */
static void now_local(struct syslog_parser *p, int64_t now_ns)
{
    int64_t minute = now_ns / (60 * NSEC);
    if (minute == p->now_minute)
        return;
    time_t t = (time_t)(now_ns / NSEC);
    struct tm tm;
    if (!localtime_r(&t, &tm))
        memset(&tm, 0, sizeof tm);
    p->now_year = tm.tm_year + 1900;
    p->now_mon = tm.tm_mon;
    p->now_minute = minute;
}

/* The year of a month without one, as rsyslog guesses it: this year,
 * the previous one for a month more than one ahead of now (December's
 * messages read in January), the next one for January read in December. */
static int guess_year(const struct syslog_parser *p, int mon)
{
    if (mon == 0 && p->now_mon == 11)
        return p->now_year + 1;
    if (mon > p->now_mon + 1)
        return p->now_year - 1;
    return p->now_year;
}

/* Seconds since the epoch of a local time; the start of each hour comes
 * from mktime once (the zone's rules, daylight saving included). */
static bool local_seconds(struct syslog_parser *p, int year, int mon, unsigned day, unsigned hour,
                          unsigned min, unsigned sec, int64_t *out)
{
    int64_t key = (((int64_t)year * 12 + mon) * 32 + day) * 24 + hour;
    if (key != p->hour_key) {
        struct tm tm = {0};
        tm.tm_year = year - 1900;
        tm.tm_mon = mon;
        tm.tm_mday = (int)day;
        tm.tm_hour = (int)hour;
        tm.tm_isdst = -1;
        time_t t = mktime(&tm);
        if (t == (time_t)-1 || tm.tm_mday != (int)day || tm.tm_mon != mon)
            return false; /* Feb 30, or out of range */
        p->hour_key = key;
        p->hour_epoch = (int64_t)t;
    }
    *out = p->hour_epoch + (int64_t)min * 60 + sec;
    return true;
}

static bool month(struct cur *c, int *out)
{
    if (c->len - c->pos < 3)
        return false;
    for (int i = 0; i < 12; i++)
        if (memcmp(c->s + c->pos, months[i], 3) == 0) {
            c->pos += 3;
            *out = i;
            return true;
        }
    return false;
}

static bool two_digits(struct cur *c, unsigned max, unsigned *out)
{
    size_t start = c->pos;
    return number(c, 2, out) && c->pos - start == 2 && *out <= max;
}

/* "hh:mm:ss" and an optional fraction (ns; digits past 9 are ignored). */
static bool clock_time(struct cur *c, unsigned *h, unsigned *m, unsigned *s, int64_t *frac)
{
    if (!two_digits(c, 23, h) || !eat(c, ':') || !two_digits(c, 59, m) || !eat(c, ':') ||
        !two_digits(c, 60, s))
        return false;
    *frac = 0;
    if (!eat(c, '.'))
        return true;
    int64_t scale = NSEC;
    size_t start = c->pos;
    while (!at_end(c) && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
        if (c->pos - start < 9) {
            scale /= 10;
            *frac += (c->s[c->pos] - '0') * scale;
        }
        c->pos++;
    }
    return c->pos > start;
}

/* "Mmm dd hh:mm:ss" (the day space-padded or not, an optional fraction)
 * in local time. */
static bool bsd_time(struct syslog_parser *p, struct cur *c, int64_t now_ns, int64_t *ts)
{
    int mon;
    unsigned day, h, m, s;
    int64_t frac;
    if (!month(c, &mon) || !eat(c, ' '))
        return false;
    eat(c, ' ');
    if (!number(c, 2, &day) || day < 1 || day > 31 || !eat(c, ' '))
        return false;
    if (!clock_time(c, &h, &m, &s, &frac))
        return false;
    now_local(p, now_ns);
    int64_t secs;
    if (!local_seconds(p, guess_year(p, mon), mon, day, h, m, s, &secs))
        return false;
    *ts = secs * NSEC + frac;
    return true;
}

/* An RFC 3339 stamp in a BSD header (rsyslog takes it too, and syslog-ng's
 * loggen sends it): with a zone as given, without one in local time. */
static bool iso_time(struct syslog_parser *p, struct cur *c, int64_t *ts)
{
    struct slice t;
    if (!token(c, 64, &t) || t.len < 19 || t.ptr[4] != '-' || t.ptr[10] != 'T')
        return false;
    if (time_parse_rfc3339_memo(&p->stamp, t.ptr, t.len, ts) == 0)
        return true;
    struct cur d = {t.ptr, 0, t.len};
    unsigned year, mon, day, h, m, s;
    int64_t frac, secs;
    if (!number(&d, 4, &year) || d.pos != 4 || !eat(&d, '-') || !two_digits(&d, 12, &mon) ||
        mon == 0 || !eat(&d, '-') || !two_digits(&d, 31, &day) || day == 0 || !eat(&d, 'T') ||
        !clock_time(&d, &h, &m, &s, &frac) || !at_end(&d) || year < 1678 || year > 2261)
        return false;
    if (!local_seconds(p, (int)year, (int)mon - 1, day, h, m, s, &secs))
        return false;
    *ts = secs * NSEC + frac;
    return true;
}

/* "TAG:" or "TAG[PID]:" at the cursor: tag 1..48 bytes. */
static bool bsd_tag(struct cur *c, struct slice *tag, struct slice *pid)
{
    size_t start = c->pos;
    while (c->pos < c->len && is_print((unsigned char)c->s[c->pos]) && c->s[c->pos] != ':' &&
           c->s[c->pos] != '[')
        c->pos++;
    *tag = slice_make(c->s + start, c->pos - start);
    *pid = slice_make(NULL, 0);
    if (tag->len == 0 || tag->len > 48)
        return false;
    if (eat(c, '[')) {
        size_t ps = c->pos;
        while (c->pos < c->len && is_print((unsigned char)c->s[c->pos]) && c->s[c->pos] != ']')
            c->pos++;
        *pid = slice_make(c->s + ps, c->pos - ps);
        if (pid->len == 0 || pid->len > 128 || !eat(c, ']'))
            return false;
    }
    return eat(c, ':');
}

/* Whether the word at the cursor is a tag ("su:", "cron[12]:") rather
 * than a hostname: senders writing to a local socket leave the host out. */
static bool looks_like_tag(const struct cur *c)
{
    for (size_t i = c->pos; i < c->len && c->s[i] != ' '; i++)
        if (c->s[i] == ':' || c->s[i] == '[')
            return true;
    return false;
}

static bool parse_3164(struct syslog_parser *p, struct cur *c, unsigned prival, int64_t now_ns,
                       const char *peer, struct event *ev)
{
    ev->has_ts = true;
    bool is_iso = peek(c) >= '0' && peek(c) <= '9';
    if (!(is_iso ? iso_time(p, c, &ev->ts) : bsd_time(p, c, now_ns, &ev->ts)) || !eat(c, ' '))
        return false;
    struct slice hostname = {NULL, 0};
    if (!looks_like_tag(c)) {
        if (!token(c, 255, &hostname))
            return false;
        eat(c, ' ');
    }
    fixed_tags(p, prival);
    struct slice tag = {NULL, 0}, pid = {NULL, 0};
    size_t rest = c->pos;
    if (!looks_like_tag(c) || !bsd_tag(c, &tag, &pid)) {
        /* no "TAG:": the rest is the message */
        c->pos = rest;
        tag = slice_make(NULL, 0);
        pid = tag;
    } else {
        eat(c, ' ');
    }
    struct slice name = event_name(p, tag);
    if (pid.len)
        tag_add(p, "procid", pid);
    struct slice body = slice_make(c->s + c->pos, c->len - c->pos);
    return finish(p, host_of(p, hostname, peer), name, body, ev);
}

/* --- the whole message ----------------------------------------------------- */

static void unparsed(struct syslog_parser *p, struct slice m, int64_t now_ns, const char *peer,
                     struct event *ev)
{
    p->ntags = 0;
    p->msg.v.s = body_of(p, m);
    ev->has_ts = false;
    ev->ts = now_ns;
    ev->host = slice_cstr(peer ? peer : "");
    ev->name = slice_cstr(p->event ? p->event : p->default_event);
    ev->tags = NULL;
    ev->ntags = 0;
    ev->fields = &p->msg;
    ev->nfields = 1;
}

enum syslog_kind syslog_parse(struct syslog_parser *p, const char *msg, size_t len, int64_t now_ns,
                              const char *peer, struct event *ev, const char **reason)
{
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r' || msg[len - 1] == '\0'))
        len--;
    if (len == 0) {
        *reason = "empty message";
        return SYSLOG_BAD;
    }
    if (memchr(msg, 0, len)) {
        *reason = "NUL byte in message";
        return SYSLOG_BAD;
    }
    struct slice whole = slice_make(msg, len);
    struct cur c = {msg, 0, len};
    unsigned prival;
    p->ntags = 0;
    buf_reset(&p->text);
    memset(ev, 0, sizeof *ev);
    if (pri(&c, &prival)) {
        /* "<PRI>1 " is RFC 5424; a digit may also start a BSD header's
         * RFC 3339 stamp */
        size_t after = c.pos;
        if (parse_5424(p, &c, prival, now_ns, peer, ev))
            return SYSLOG_5424;
        p->ntags = 0;
        buf_reset(&p->text);
        c.pos = after;
        if (parse_3164(p, &c, prival, now_ns, peer, ev))
            return SYSLOG_3164;
    }
    unparsed(p, whole, now_ns, peer, ev);
    if (event_check_names(&p->lim, ev->host, ev->name)) {
        *reason = "bad host or event name";
        return SYSLOG_BAD;
    }
    return SYSLOG_UNPARSED;
}
