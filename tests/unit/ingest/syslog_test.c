/* Syslog: a table of RFC 5424 and RFC 3164 messages (the RFCs' own
 * examples among them) with the events they give, every bad shape going
 * whole to msg, the year and zone guesses of RFC 3164, the configured
 * mapping, and the RFC 6587 framer fed at every split of each stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/buf.h"
#include "ingest/syslog.h"
#include "render.h"

#define NOW 1795543200000000000LL /* 2026-11-24T18:00:00Z */
#define B(s) s, sizeof(s) - 1

struct msg_case {
    const char *msg;
    size_t len;
    const char *want; /* "KIND event|host|tags|fields|ts" or "BAD reason" */
};

static const char *kind_name(enum syslog_kind k)
{
    switch (k) {
    case SYSLOG_5424: return "5424";
    case SYSLOG_3164: return "3164";
    case SYSLOG_UNPARSED: return "UNPARSED";
    default: return "BAD";
    }
}

static void render_parse(struct syslog_parser *p, const char *msg, size_t len, int64_t now,
                         struct buf *out)
{
    struct event ev;
    const char *why = NULL;
    enum syslog_kind k = syslog_parse(p, msg, len, now, "10.0.0.1", &ev, &why);
    buf_reset(out);
    buf_printf(out, "%s ", kind_name(k));
    if (k == SYSLOG_BAD) {
        buf_puts(out, why);
        return;
    }
    /* a message without a time says so, and carries the arrival time */
    if (!ev.has_ts && ev.ts == now)
        ev.has_ts = true;
    render_event(out, &ev);
}

#define WHOLE(m) "UNPARSED syslog|10.0.0.1||msg:S\"" m "\"|1795543200000000000"

static const struct msg_case cases_5424[] = {
    /* RFC 5424 section 6.5, examples 1 to 4 */
    {B("<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed for "
       "lonvick on /dev/pts/8"),
     "5424 su|mymachine.example.com|facility=auth;level=crit;msgid=ID47|msg:S\"'su root' failed "
     "for lonvick on /dev/pts/8\"|1065910455003000000"},
    {B("<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make "
       "the do-nuts."),
     "5424 myproc|192.0.2.1|facility=local4;level=notice;procid=8710|msg:S\"%% It's time to make "
     "the do-nuts.\"|1061727255000003000"},
    {B("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
       "iut=\"3\" eventSource=\"Application\" eventID=\"1011\"] \xEF\xBB\xBF"
       "An application event log entry..."),
     "5424 evntslog|mymachine.example.com|facility=local4;level=notice;msgid=ID47;"
     "exampleSDID@32473.iut=3;exampleSDID@32473.eventSource=Application;"
     "exampleSDID@32473.eventID=1011|msg:S\"An application event log entry...\"|"
     "1065910455003000000"},
    {B("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
       "iut=\"3\"][examplePriority@32473 class=\"high\"]"),
     "5424 evntslog|mymachine.example.com|facility=local4;level=notice;msgid=ID47;"
     "exampleSDID@32473.iut=3;examplePriority@32473.class=high|msg:S\"\"|1065910455003000000"},
    /* escapes in values: \" \\ \] stand for the character, \q is itself */
    {B("<13>1 2003-10-11T22:14:15Z h app - - [a b=\"x\\\"y\\\\z\\]w\\q\" c=\"\"] m"),
     "5424 app|h|facility=user;level=notice;a.b=x\"y\\z]w\\q;a.c=|msg:S\"m\"|1065910455000000000"},
    /* an element without parameters; a space in a value */
    {B("<13>1 2003-10-11T22:14:15Z h app - - [origin][meta seq=\"a b\"] m"),
     "5424 app|h|facility=user;level=notice;origin=;meta.seq=a b|msg:S\"m\"|"
     "1065910455000000000"},
    /* every part nil: arrival time, the sender's address, the default event */
    {B("<0>1 - - - - - -"),
     "5424 syslog|10.0.0.1|facility=kern;level=emerg|msg:S\"\"|1795543200000000000"},
    {B("<191>12 2003-10-11T22:14:15.123456789+01:00 h a 1 2 - x\r\n"),
     "5424 a|h|facility=local7;level=debug;procid=1;msgid=2|msg:S\"x\"|1065906855123456789"},
    /* a body in another encoding is kept, each bad byte U+FFFD */
    {B("<13>1 - h a - - - caf\xe9"),
     "5424 a|h|facility=user;level=notice|msg:S\"caf\xef\xbf\xbd\"|1795543200000000000"},
    /* shapes that are no RFC 5424: stored whole */
    {B("<34>1 2003-13-11T22:14:15Z h a - - - m"), WHOLE("<34>1 2003-13-11T22:14:15Z h a - - - m")},
    {B("<34>1 2003-10-11 h a - - - m"), WHOLE("<34>1 2003-10-11 h a - - - m")},
    {B("<34>1 2003-10-11T22:14:15Z host"), WHOLE("<34>1 2003-10-11T22:14:15Z host")},
    {B("<34>1 - h a - - [a b=\"c\""), WHOLE("<34>1 - h a - - [a b=\"c\"")},
    {B("<34>1 - h a - - [a b=c] m"), WHOLE("<34>1 - h a - - [a b=c] m")},
    {B("<34>1 - h a - - x m"), WHOLE("<34>1 - h a - - x m")},
    /* a parameter repeated in its element: one tag, the values joined */
    {B("<34>1 - h a - - [a b=\"1\" c=\"x\" b=\"2,3\" b=\"\"] m"),
     "5424 a|h|facility=auth;level=crit;a.b=1,2,3,;a.c=x|msg:S\"m\"|1795543200000000000"},
    {B("<34>1 - h a - - [a b=\"1\"][a b=\"2\"] m"),
     WHOLE("<34>1 - h a - - [a b=\"1\"][a b=\"2\"] m")},
    {B("<34>1 - h a - - [a b=\"x\ty\"] m"), WHOLE("<34>1 - h a - - [a b=\"x\ty\"] m")},
    {B("<34>1 - h a - - [] m"), WHOLE("<34>1 - h a - - [] m")},
    {B("<34>1 - h a - - [a b=\"1\"]m"), WHOLE("<34>1 - h a - - [a b=\"1\"]m")},
    {B("<34>1 - h 0123456789012345678901234567890123456789012345678 - - - m"),
     WHOLE("<34>1 - h 0123456789012345678901234567890123456789012345678 - - - m")},
    {B("<34>1 -  h a - - - m"), WHOLE("<34>1 -  h a - - - m")},
    /* a byte that is no printable ASCII ends a header field, here past the
     * 16 bytes a field is scanned by at a time */
    {B("<34>1 - host-0123456789abc\xc3\xa9 a - - - m"),
     WHOLE("<34>1 - host-0123456789abc\xc3\xa9 a - - - m")},
    {B("<34>1 - host-0123456789abcdefgh\tx a - - - m"),
     WHOLE("<34>1 - host-0123456789abcdefgh\tx a - - - m")},
    {B("<34>1 2003-10-11T22:14:15.0030000000000000Z host-0123456789abcdefgh a - - - m"),
     "5424 a|host-0123456789abcdefgh|facility=auth;level=crit|msg:S\"m\"|1065910455003000000"},
    {B("<34>0 - h a - - - m"), WHOLE("<34>0 - h a - - - m")},
    {B("<34>123 - h a - - - m"), WHOLE("<34>123 - h a - - - m")},
    {B("<192>1 - h a - - - m"), WHOLE("<192>1 - h a - - - m")},
    {B("<034>1 - h a - - - m"), WHOLE("<034>1 - h a - - - m")},
    {B("<>1 - h a - - - m"), WHOLE("<>1 - h a - - - m")},
    {B("<34 1 - h a - - - m"), WHOLE("<34 1 - h a - - - m")},
    {B("34>1 - h a - - - m"), WHOLE("34>1 - h a - - - m")},
    {B("just text"), WHOLE("just text")},
    {B("\x01\x02\xff\xfe garbage"), WHOLE("\x01\x02\xef\xbf\xbd\xef\xbf\xbd garbage")},
    /* nothing to store */
    {B(""), "BAD empty message"},
    {B("\r\n"), "BAD empty message"},
    {B("<13>1 - h a - - - x\0y"), "BAD NUL byte in message"},
};

static const struct msg_case cases_3164[] = {
    {B("<13>Nov 24 18:40:12 host1 app[123]: hello world"),
     "3164 app|host1|facility=user;level=notice;procid=123|msg:S\"hello world\"|"
     "1795545612000000000"},
    {B("<86>Nov  4 08:01:02 host1 sshd: accepted"),
     "3164 sshd|host1|facility=authpriv;level=info|msg:S\"accepted\"|1793779262000000000"},
    {B("<13>Nov 4 08:01:02 host1 sshd: x"),
     "3164 sshd|host1|facility=user;level=notice|msg:S\"x\"|1793779262000000000"},
    /* no hostname (a local socket's format): the sender's address */
    {B("<78>Nov 24 18:40:12 cron[5]: job done"),
     "3164 cron|10.0.0.1|facility=cron;level=info;procid=5|msg:S\"job done\"|1795545612000000000"},
    /* no tag: the rest is the message, the default event */
    {B("<13>Nov 24 18:40:12 host1 just a message"),
     "3164 syslog|host1|facility=user;level=notice|msg:S\"just a message\"|1795545612000000000"},
    {B("<13>Nov 24 18:40:12.250 host1 a: x"),
     "3164 a|host1|facility=user;level=notice|msg:S\"x\"|1795545612250000000"},
    {B("<13>Nov 24 18:40:12 host1 a:"),
     "3164 a|host1|facility=user;level=notice|msg:S\"\"|1795545612000000000"},
    {B("<13>Nov 24 18:40:12 host1 a[: x"),
     "3164 syslog|host1|facility=user;level=notice|msg:S\"a[: x\"|1795545612000000000"},
    /* an RFC 3339 stamp in a BSD header (syslog-ng's loggen): as given, or
     * local time without a zone */
    {B("<38>2026-11-24T18:40:12 localhost prg00000[1234]: seq: 1"),
     "3164 prg00000|localhost|facility=auth;level=info;procid=1234|msg:S\"seq: 1\"|"
     "1795545612000000000"},
    {B("<38>2026-11-24T19:40:12.5+01:00 h a: x"),
     "3164 a|h|facility=auth;level=info|msg:S\"x\"|1795545612500000000"},
    /* shapes that are no RFC 3164: stored whole */
    {B("<38>2026-11-24 18:40:12 h a: x"), WHOLE("<38>2026-11-24 18:40:12 h a: x")},
    {B("<38>2026-13-24T18:40:12 h a: x"), WHOLE("<38>2026-13-24T18:40:12 h a: x")},
    {B("<38>2026-11-24T18:40 h a: x"), WHOLE("<38>2026-11-24T18:40 h a: x")},
    {B("<13>Feb 30 18:40:12 h a: x"), WHOLE("<13>Feb 30 18:40:12 h a: x")},
    {B("<13>Nov 24 25:40:12 h a: x"), WHOLE("<13>Nov 24 25:40:12 h a: x")},
    {B("<13>Nov 24 18:60:12 h a: x"), WHOLE("<13>Nov 24 18:60:12 h a: x")},
    {B("<13>Foo 24 18:40:12 h a: x"), WHOLE("<13>Foo 24 18:40:12 h a: x")},
    {B("<13>Nov 24 18:40 h a: x"), WHOLE("<13>Nov 24 18:40 h a: x")},
    {B("<13>Nov 24 18:40:12"), WHOLE("<13>Nov 24 18:40:12")},
    {B("<13>Nov 0 18:40:12 h a: x"), WHOLE("<13>Nov 0 18:40:12 h a: x")},
    {B("<13>nov 24 18:40:12 h a: x"), WHOLE("<13>nov 24 18:40:12 h a: x")},
    {B("<13>hello"), WHOLE("<13>hello")},
};

static void check_table(const struct msg_case *cases, size_t n)
{
    struct event_limits lim;
    event_limits_default(&lim);
    struct syslog_map map = {NULL, NULL, false};
    struct syslog_parser *p = syslog_new(&lim, &map);
    struct buf out = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        render_parse(p, cases[i].msg, cases[i].len, NOW, &out);
        if (strcmp(buf_cstr(&out), cases[i].want) != 0)
            fail_msg("case %zu: %.*s\n got: %s\nwant: %s", i, (int)cases[i].len, cases[i].msg,
                     buf_cstr(&out), cases[i].want);
    }
    buf_destroy(&out);
    syslog_free(p);
}

static void test_rfc5424(void **state)
{
    (void)state;
    check_table(cases_5424, sizeof cases_5424 / sizeof cases_5424[0]);
}

static void test_rfc3164(void **state)
{
    (void)state;
    check_table(cases_3164, sizeof cases_3164 / sizeof cases_3164[0]);
}

/* has_ts tells a message's own time from the arrival time it was given:
 * false for the 5424 NILVALUE and for an unparsed message, true else. */
static void test_has_ts(void **state)
{
    (void)state;
    static const struct {
        const char *msg;
        bool has_ts;
    } cases[] = {
        {"<34>1 2003-10-11T22:14:15.003Z h su - - - x", true},
        {"<34>1 - h su - - - x", false},
        {"<34>Oct 11 22:14:15 h su: x", true},
        {"<34>2003-10-11T22:14:15Z h su: x", true},
        {"just a line", false},
    };
    struct event_limits lim;
    event_limits_default(&lim);
    struct syslog_map map = {NULL, "syslog", false};
    struct syslog_parser *p = syslog_new(&lim, &map);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct event ev;
        const char *why = NULL;
        assert_int_not_equal(syslog_parse(p, cases[i].msg, strlen(cases[i].msg), NOW, "", &ev,
                                          &why),
                             SYSLOG_BAD);
        if (ev.has_ts != cases[i].has_ts)
            fail_msg("case %zu: has_ts %d", i, ev.has_ts);
        if (!ev.has_ts)
            assert_true(ev.ts == NOW);
    }
    syslog_free(p);
}

struct year_case {
    int64_t now;
    const char *msg;
    int64_t want;
};

/* The year of an RFC 3164 stamp, as rsyslog guesses it. */
static void test_year_guess(void **state)
{
    (void)state;
    static const struct year_case cases[] = {
        /* December read in January: last year */
        {1799107200000000000LL, "<13>Dec 31 23:59:59 h a: x", 1798761599000000000LL},
        /* January read in December: next year */
        {1797724800000000000LL, "<13>Jan  1 00:00:01 h a: x", 1798761601000000000LL},
        /* a month ahead: this year (a clock ahead); more: last year */
        {1773100800000000000LL, "<13>Apr  2 03:04:05 h a: x", 1775099045000000000LL},
        {1773100800000000000LL, "<13>Nov  2 03:04:05 h a: x", 1762052645000000000LL},
    };
    struct event_limits lim;
    event_limits_default(&lim);
    struct syslog_map map = {NULL, NULL, false};
    struct syslog_parser *p = syslog_new(&lim, &map);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct event ev;
        const char *why;
        assert_int_equal(syslog_parse(p, cases[i].msg, strlen(cases[i].msg), cases[i].now, "", &ev,
                                      &why),
                         SYSLOG_3164);
        assert_int_equal(ev.ts, cases[i].want);
    }
    syslog_free(p);
}

/* RFC 3164 stamps are local time: with CET/CEST, summer and winter. */
static void test_local_zone(void **state)
{
    (void)state;
    setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
    tzset();
    struct event_limits lim;
    event_limits_default(&lim);
    struct syslog_map map = {NULL, NULL, false};
    struct syslog_parser *p = syslog_new(&lim, &map);
    struct event ev;
    const char *why;
    const char *summer = "<13>Jul  1 12:00:00 h a: x";
    assert_int_equal(syslog_parse(p, summer, strlen(summer), NOW, "", &ev, &why), SYSLOG_3164);
    assert_int_equal(ev.ts, 1782900000000000000LL);
    const char *winter = "<13>Jan 15 12:00:00 h a: x";
    assert_int_equal(syslog_parse(p, winter, strlen(winter), NOW, "", &ev, &why), SYSLOG_3164);
    assert_int_equal(ev.ts, 1768474800000000000LL);
    syslog_free(p);
    setenv("TZ", "UTC", 1);
    tzset();
}

/* A configured event keeps the app-name as tag appname; host = peer. */
static void test_mapping(void **state)
{
    (void)state;
    struct event_limits lim;
    event_limits_default(&lim);
    struct syslog_map map = {"logs", "none", true};
    struct syslog_parser *p = syslog_new(&lim, &map);
    struct buf out = BUF_INIT;
    render_parse(p, B("<13>1 - h app 7 - - m"), NOW, &out);
    assert_string_equal(buf_cstr(&out), "5424 logs|10.0.0.1|facility=user;level=notice;"
                                        "appname=app;procid=7|msg:S\"m\"|1795543200000000000");
    render_parse(p, B("junk"), NOW, &out);
    assert_string_equal(buf_cstr(&out),
                        "UNPARSED logs|10.0.0.1||msg:S\"junk\"|1795543200000000000");
    syslog_free(p);

    struct syslog_map map2 = {"", "none", false};
    p = syslog_new(&lim, &map2);
    render_parse(p, B("<13>1 - h - - - - m"), NOW, &out);
    assert_string_equal(buf_cstr(&out),
                        "5424 none|h|facility=user;level=notice|msg:S\"m\"|1795543200000000000");
    /* tags over max_tags_per_line, a key over max_key_bytes: whole */
    syslog_free(p);
    lim.max_tags_per_line = 3;
    lim.max_key_bytes = 8;
    p = syslog_new(&lim, &map2);
    render_parse(p, B("<13>1 - h a - - [x y=\"1\"] m"), NOW, &out);
    assert_string_equal(buf_cstr(&out),
                        "5424 a|h|facility=user;level=notice;x.y=1|msg:S\"m\"|1795543200000000000");
    render_parse(p, B("<13>1 - h a - - [x y=\"1\" z=\"2\"] m"), NOW, &out);
    assert_string_equal(buf_cstr(&out), "UNPARSED none|10.0.0.1||msg:S\"<13>1 - h a - - [x "
                                        "y=\"1\" z=\"2\"] m\"|1795543200000000000");
    render_parse(p, B("<13>1 - h a - - [xxxxxxxx y=\"1\"] m"), NOW, &out);
    assert_string_equal(buf_cstr(&out), "UNPARSED none|10.0.0.1||msg:S\"<13>1 - h a - - [xxxxxxxx "
                                        "y=\"1\"] m\"|1795543200000000000");
    render_parse(p, B("<13>1 - h appname12 - - - m"), NOW, &out);
    assert_string_equal(buf_cstr(&out), "UNPARSED none|10.0.0.1||msg:S\"<13>1 - h appname12 - - - "
                                        "m\"|1795543200000000000");
    buf_destroy(&out);
    syslog_free(p);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(syslog_level_name(0), "emerg");
    assert_string_equal(syslog_level_name(4), "warning");
    assert_string_equal(syslog_level_name(7), "debug");
    assert_null(syslog_level_name(8));
    assert_string_equal(syslog_facility_name(10), "authpriv");
    assert_string_equal(syslog_facility_name(23), "local7");
    assert_null(syslog_facility_name(24));
}

/* --- the framer ------------------------------------------------------------ */

struct frame_case {
    const char *stream;
    size_t len;
    size_t max;
    const char *want; /* one line per frame: "OK msg", "TOOBIG", "BAD", "CUT" */
};

static const struct frame_case frame_cases[] = {
    {B("<13>a\n<13>b\r\n\n<13>c"), 64, "OK <13>a\nOK <13>b\nOK \nOK <13>c\n"},
    {B("5 hello3 abc"), 64, "OK hello\nOK abc\n"},
    {B("5 hello\n3 abc\r\n"), 64, "OK hello\nOK abc\n"},
    {B("10 <13>a\nb\n c2 ok"), 64, "OK <13>a\nb\n c\nOK ok\n"},
    {B("20 aaaaaaaaaaaaaaaaaaaa2 ok"), 8, "TOOBIG\nOK ok\n"},
    {B("short\n0123456789abc\nok\n"), 8, "OK short\nTOOBIG\nOK ok\n"},
    {B("5 hello x"), 64, "OK hello\nBAD\n"},
    {B("5 hello05 x"), 64, "OK hello\nBAD\n"},
    {B("1234567890123 x"), 64, "BAD\n"},
    {B("10 abc"), 64, "CUT\n"},
    {B("5 hello12"), 64, "OK hello\nCUT\n"},
    {B("999999999999 x"), 64, "TOOBIG\n"},
    {B("05 hello"), 64, "OK 05 hello\n"},
};

static void frame_feed(struct syslog_framer *f, const char *data, size_t len, struct buf *out)
{
    while (len) {
        enum syslog_frame_kind k;
        struct slice m;
        size_t n = syslog_frame_next(f, data, len, &k, &m);
        if (k == SYSLOG_FRAME_OK) {
            buf_puts(out, "OK ");
            buf_append(out, m.ptr, m.len);
            buf_putc(out, '\n');
        } else if (k == SYSLOG_FRAME_TOOBIG) {
            buf_puts(out, "TOOBIG\n");
        } else if (k == SYSLOG_FRAME_BAD) {
            buf_puts(out, "BAD\n");
        }
        if (n == 0) {
            assert_true(f->is_broken);
            return;
        }
        assert_true(n <= len);
        data += n;
        len -= n;
    }
}

static void frame_run(const struct frame_case *c, size_t cut, size_t piece, struct buf *out)
{
    struct syslog_framer f;
    syslog_framer_init(&f, c->max);
    buf_reset(out);
    /* each piece in its own copy, so a frame cannot borrow across pieces */
    size_t off = 0;
    while (off < c->len) {
        size_t n = piece ? piece : (off == 0 ? cut : c->len - off);
        if (n > c->len - off)
            n = c->len - off;
        if (n == 0)
            n = c->len - off;
        char *copy = malloc(n);
        memcpy(copy, c->stream + off, n);
        frame_feed(&f, copy, n, out);
        free(copy);
        off += n;
    }
    struct slice m;
    enum syslog_frame_kind k = syslog_frame_finish(&f, &m);
    if (k == SYSLOG_FRAME_OK) {
        buf_puts(out, "OK ");
        buf_append(out, m.ptr, m.len);
        buf_putc(out, '\n');
    } else if (k == SYSLOG_FRAME_CUT) {
        buf_puts(out, "CUT\n");
    }
    syslog_framer_destroy(&f);
}

static void test_framer(void **state)
{
    (void)state;
    struct buf out = BUF_INIT;
    for (size_t i = 0; i < sizeof frame_cases / sizeof frame_cases[0]; i++) {
        const struct frame_case *c = &frame_cases[i];
        for (size_t cut = 0; cut <= c->len; cut++) {
            frame_run(c, cut, 0, &out);
            if (strcmp(buf_cstr(&out), c->want) != 0)
                fail_msg("frame case %zu cut at %zu:\n got: %s\nwant: %s", i, cut, buf_cstr(&out),
                         c->want);
        }
        frame_run(c, 0, 1, &out);
        if (strcmp(buf_cstr(&out), c->want) != 0)
            fail_msg("frame case %zu in 1-byte pieces:\n got: %s\nwant: %s", i, buf_cstr(&out),
                     c->want);
    }
    buf_destroy(&out);
}

static void test_unframe(void **state)
{
    (void)state;
    struct {
        const char *in, *want;
    } cases[] = {
        {"5 hello", "hello"},   {"5 hell", "5 hell"},
        {"6 hello", "6 hello"}, {"05 hello", "05 hello"},
        {"5hello", "5hello"},   {"<13>1 - h a - - - x", "<13>1 - h a - - - x"},
        {"1 ", "1 "},           {"0 ", "0 "},
        {"12", "12"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct slice m = syslog_unframe(cases[i].in, strlen(cases[i].in));
        assert_int_equal(m.len, strlen(cases[i].want));
        assert_memory_equal(m.ptr, cases[i].want, m.len);
    }
}

int main(void)
{
    (void)render_result;
    setenv("TZ", "UTC", 1);
    tzset();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc5424),    cmocka_unit_test(test_rfc3164),
        cmocka_unit_test(test_year_guess), cmocka_unit_test(test_local_zone),
        cmocka_unit_test(test_mapping),    cmocka_unit_test(test_names),
        cmocka_unit_test(test_framer),     cmocka_unit_test(test_unframe),
        cmocka_unit_test(test_has_ts),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
