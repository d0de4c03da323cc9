/* Line-protocol parser tests: a table of lines with the event or error each
 * must give, then the same table as one body split at every byte offset and
 * into 1-byte pieces, which must give exactly the same results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "ingest/lineproto.h"
#include "render.h"

struct lp_case {
    const char *in;
    size_t len;       /* 0: strlen(in) */
    const char *want; /* rendered result, or NULL for a skipped line */
};

/* A line that ends inside a string value: in a body it goes on on the next
 * line, so the body tests leave it out (test_multiline_strings has them). */
static bool is_open(const char *want)
{
    return want && strncmp(want, "BAD unbalanced quotes", 21) == 0;
}

#define L(s) s, sizeof(s) - 1

static const struct lp_case cases[] = {
    /* the grammar */
    {L("cpu value=1"), "cpu|||value:F1|-"},
    {L("cpu,host=web-1,region=eu value=0.5 1700000000000000000"),
     "cpu|web-1|region=eu|value:F0.5|1700000000000000000"},
    {L("cpu,region=eu,host=h2,az=b v=1i"), "cpu|h2|region=eu;az=b|v:I1|-"},
    {L("cpu a=1i,b=-9223372036854775808i,c=9223372036854775807i,d=-0i"),
     "cpu|||a:I1;b:I-9223372036854775808;c:I9223372036854775807;d:I0|-"},
    {L("cpu u=0u,v=18446744073709551615u"), "cpu|||u:U0;v:U18446744073709551615|-"},
    {L("b a=t,b=T,c=true,d=True,e=TRUE,f=f,g=F,h=false,i=False,j=FALSE"),
     "b|||a:Bt;b:Bt;c:Bt;d:Bt;e:Bt;f:Bf;g:Bf;h:Bf;i:Bf;j:Bf|-"},
    {L("s msg=\"hello world\",e=\"\""), "s|||msg:S\"hello world\";e:S\"\"|-"},
    {L("s m=\"a \\\"q\\\" b\\\\c \\n\""), "s|||m:S\"a \"q\" b\\c \\n\"|-"},
    {L("s m=\"a,b c=d\" 5"), "s|||m:S\"a,b c=d\"|5"},
    {L("s m=\"x\\\\\""), "s|||m:S\"x\\\"|-"},
    {L("my\\ meas\\,x,t\\ k\\=1=v\\,a\\ b\\=c f\\ k\\,\\==1"),
     "my meas,x||t k=1=v,a b=c|f k,=:F1|-"},
    {L("a\\=b f=1"), "a\\=b|||f:F1|-"},
    {L("a\\b,t=x\\y f\\z=1"), "a\\b||t=x\\y|f\\z:F1|-"},
    {L("a\\\\b f=1"), "a\\\\b|||f:F1|-"},
    {L("f a=1.5,b=-0.25,c=1e3,d=1E-2,e=.5,g=5.,h=-1.5e+2,i=0,j=-0,k=007"),
     "f|||a:F1.5;b:F-0.25;c:F1000;d:F0.01;e:F0.5;g:F5;h:F-150;i:F0;j:F-0;k:F7|-"},
    {L("f a=3.141592653589793238,b=1e300,c=123456789012345678901234567890,d=0.1"),
     "f|||a:F3.1415926535897931;b:F1.0000000000000001e+300;c:F1.2345678901234568e+29;"
     "d:F0.10000000000000001|-"},
    {L("f a=1.7976931348623157e308,b=2.2250738585072014e-308,c=1e-400"),
     "f|||a:F1.7976931348623157e+308;b:F2.2250738585072014e-308;c:F0|-"},
    {L("# a comment line"), NULL},
    {L(""), NULL},
    {L("   "), NULL},
    {L("  # indented comment"), NULL},
    {L("  cpu f=1"), "cpu|||f:F1|-"}, /* the influx CLI's INSERT sends " m..." */
    {L("\tcpu f=1"), "BAD measurement starts with whitespace"},
    {L(" \tcpu f=1"), "BAD measurement starts with whitespace"},
    {L("cpu  f=1   123  "), "cpu|||f:F1|123"},
    {L("cpu f=1 -1000"), "cpu|||f:F1|-1000"},
    {L("cpu f=1 -9223372036854775808"), "cpu|||f:F1|-9223372036854775808"},
    {L("temp\xc3\xa9rature,lieu=Z\xc3\xbcrich v=1,\xe2\x82\xac=\"\xf0\x9f\x98\x80\""),
     "temp\xc3\xa9rature||lieu=Z\xc3\xbcrich|v:F1;\xe2\x82\xac:S\"\xf0\x9f\x98\x80\"|-"},
    {L("cpu,t=#x f=1"), "cpu||t=#x|f:F1|-"},
    {L("cpu\tx f=1"), "BAD control character 0x09 in a measurement, tag or field key or tag value"},
    {L("cpu,t=a\x01 f=1"),
     "BAD control character 0x01 in a measurement, tag or field key or tag value"},
    {L("cpu f\x7f=1"),
     "BAD control character 0x7f in a measurement, tag or field key or tag value"},
    {L("cpu,t\\\x1b=1 f=1"),
     "BAD control character 0x1b in a measurement, tag or field key or tag value"},
    {L("cpu f=\"tab\there\x01\x7f\""), "cpu|||f:S\"tab\there\x01\x7f\"|-"},
    /* missing parts */
    {L("cpu"), "BAD missing fields"},
    {L("cpu "), "BAD missing fields"},
    {L("cpu,t=1"), "BAD missing fields"},
    {L(",t=1 f=1"), "BAD empty measurement"},
    {L("cpu,=v f=1"), "BAD empty tag key"},
    {L("cpu, f=1"), "BAD empty tag key"},
    {L("cpu,t f=1"), "BAD missing '=' after tag key \"t\""},
    {L("cpu,t= f=1"), "BAD empty value for tag \"t\""},
    {L("cpu,\xc3\xa9= f=1"), "BAD empty value for tag \"\xc3\xa9\""}, /* UTF-8 kept */
    {L("cpu,t=a=b f=1"), "BAD unescaped '=' in the value of tag \"t\""},
    {L("cpu,t==b f=1"), "BAD unescaped '=' in the value of tag \"t\""},
    {L("cpu f"), "BAD missing '=' after field key \"f\""},
    {L("cpu f g=1"), "BAD missing '=' after field key \"f\""},
    {L("cpu f="), "BAD missing value for field \"f\""},
    {L("cpu f=,g=1"), "BAD missing value for field \"f\""},
    {L("cpu =1"), "BAD empty field key"},
    {L("cpu f=1,"), "BAD empty field key"},
    /* quotes and escapes */
    {L("cpu f=\"abc"), "BAD unbalanced quotes in the value of field \"f\""},
    {L("cpu f=\"abc\\\""), "BAD unbalanced quotes in the value of field \"f\""},
    {L("cpu f=\"abc\\"), "BAD unbalanced quotes in the value of field \"f\""},
    {L("cpu f=\"a\"x"), "BAD unexpected character after the string value of field \"f\""},
    {L("cpu\\"), "BAD bad escape: backslash at end of line"},
    {L("cpu,t=v\\"), "BAD bad escape: backslash at end of line"},
    {L("cpu f=1,g\\"), "BAD bad escape: backslash at end of line"},
    /* numbers */
    {L("cpu f=abc"), "BAD invalid value (not a number, boolean or quoted string) for field \"f\""},
    {L("cpu f=+1"), "BAD invalid value (not a number, boolean or quoted string) for field \"f\""},
    {L("cpu f=tru"), "BAD invalid boolean value for field \"f\""},
    {L("cpu f=truee"), "BAD invalid boolean value for field \"f\""},
    {L("cpu f=1.2.3"), "BAD invalid number for field \"f\""},
    {L("cpu f=1x"), "BAD invalid number for field \"f\""},
    {L("cpu f=1e"), "BAD invalid number for field \"f\""},
    {L("cpu f=-"), "BAD invalid number for field \"f\""},
    {L("cpu f=."), "BAD invalid number for field \"f\""},
    {L("cpu f=1e999"), "BAD float out of range for field \"f\""},
    {L("cpu f=12ai"), "BAD invalid integer value for field \"f\""},
    {L("cpu f=1.5i"), "BAD invalid integer value for field \"f\""},
    {L("cpu f=9223372036854775808i"), "BAD integer out of range (int64) for field \"f\""},
    {L("cpu f=-9223372036854775809i"), "BAD integer out of range (int64) for field \"f\""},
    {L("cpu f=-1u"), "BAD invalid unsigned value for field \"f\""},
    {L("cpu f=18446744073709551616u"), "BAD unsigned out of range (uint64) for field \"f\""},
    /* duplicates */
    {L("cpu f=1,f=2"), "BAD duplicate field key \"f\""},
    {L("cpu a=1,b=2,c=\"x\",b=3i"), "BAD duplicate field key \"b\""},
    {L("cpu,t=1,t=2 f=1"), "BAD duplicate tag key \"t\""},
    {L("cpu,host=a,host=b f=1"), "BAD duplicate tag key \"host\""},
    /* timestamps */
    {L("cpu f=1 abc"), "BAD invalid timestamp"},
    {L("cpu f=1 12a"), "BAD invalid timestamp"},
    {L("cpu f=1 1.5"), "BAD invalid timestamp"},
    {L("cpu f=1 1 2"), "BAD unexpected text after the timestamp"},
    {L("cpu f=1 99999999999999999999"), "BAD timestamp out of range"},
    {L("cpu f=1 -9223372036854775809"), "BAD timestamp out of range"},
    /* NUL bytes and UTF-8 */
    {L("cpu\0 f=1"), "BAD NUL byte in line"},
    {L("cpu f=\"a\0b\""), "BAD NUL byte in line"},
    {L("cp\xffu f=1"), "BAD invalid UTF-8 in the measurement"},
    {L("cp\x01u f=1"),
     "BAD control character 0x01 in a measurement, tag or field key or tag value"},
    {L("cpu,t=a\x7f f=1"),
     "BAD control character 0x7f in a measurement, tag or field key or tag value"},
    {L("cpu f=1 5\0"), "BAD NUL byte in line"},
    {L("cpu,t\xc3=1 f=1"), "BAD invalid UTF-8 in a tag key"},
    {L("cpu,t=\xe2\x82 f=1"), "BAD invalid UTF-8 in the value of tag \"t\""},
    {L("cpu f\xc0\xaf=1"), "BAD invalid UTF-8 in a field key"},
    {L("cpu f=\"\xed\xa0\x80\""), "BAD invalid UTF-8 in the value of field \"f\""},
    {L("cpu f=\"\xf4\x90\x80\x80\""), "BAD invalid UTF-8 in the value of field \"f\""},
    /* conformance (ingest/README.md): a backslash escapes only the separators
     * of its position and is literal before anything else, another
     * backslash included; the InfluxDB reference and line-protocol corpus */
    {L("cpu,host=two\\\\\\ words v=1"), "cpu|two\\\\ words||v:F1|-"},
    {L("cpu,regions=east\\\\  value=1.0"), "cpu||regions=east\\ |value:F1|-"},
    {L("cpu,regions=east\\\\ west value=1.0"), "cpu||regions=east\\ west|value:F1|-"},
    {L("cpu,regions=east\\ west value=1.0"), "cpu||regions=east west|value:F1|-"},
    {L("cpu,regions=east\\,west value=1.0"), "cpu||regions=east,west|value:F1|-"},
    {L("cpu,ta\\ g0=\\, value=1"), "cpu||ta g0=,|value:F1|-"},
    {L("cpu,tag0=1\\\"\\\",t=k value=1"), "cpu||tag0=1\\\"\\\";t=k|value:F1|-"},
    {L("cpu value\\ ms=1.0"), "cpu|||value ms:F1|-"},
    {L("cpu value\\,ms=1.0"), "cpu|||value,ms:F1|-"},
    {L("cpu value\\=ms=1.0"), "cpu|||value=ms:F1|-"},
    {L("\"cpu\",host=serverA value=1"), "\"cpu\"|serverA||value:F1|-"},
    {L("cpu \"f\"=1"), "cpu|||\"f\":F1|-"},
    {L("c\\\\pu f=1"), "c\\\\pu|||f:F1|-"},
    {L("cpu\\\\,t=v f=1"), "cpu\\,t=v|||f:F1|-"},
    {L("cpu\\=x,t=v\\\\x f=\"a\\\\b\\\"c\\d\""), "cpu\\=x||t=v\\\\x|f:S\"a\\b\"c\\d\"|-"},
    {L("cpu value=\"1,0\""), "cpu|||value:S\"1,0\"|-"},
    {L("m\\\\ f=1"), "BAD missing fields"},
    {L("cpu value=hi"),
     "BAD invalid value (not a number, boolean or quoted string) for field \"value\""},
    {L("cpu value=\"a\"\"b\""),
     "BAD unexpected character after the string value of field \"value\""},
    {L("cpu value=1 1.5e9"), "BAD invalid timestamp"},
    {L("cpu value=tr"), "BAD invalid boolean value for field \"value\""},
    {L("cpu value=1e+"), "BAD invalid number for field \"value\""},
    {L("cpu value=0x10"), "BAD invalid number for field \"value\""},
    {L("cpu value=NaN"),
     "BAD invalid value (not a number, boolean or quoted string) for field \"value\""},
    {L("cpu value=inf"),
     "BAD invalid value (not a number, boolean or quoted string) for field \"value\""},
    {L("cpu value=1i2"), "BAD invalid number for field \"value\""},
    /* a good line after all that */
    {L("last,host=z v=\"end\" 42"), "last|z||v:S\"end\"|42"},
};

#define NCASES (sizeof cases / sizeof cases[0])

static struct event_limits lim_default(void)
{
    struct event_limits lim;
    event_limits_default(&lim);
    return lim;
}

/* Feeds body in pieces of the given sizes (cycled; 0 = whole) and renders. */
static void run_pieces(const struct event_limits *lim, int64_t prec, const char *body, size_t len,
                       size_t piece, size_t first, struct buf *out)
{
    struct lp_parser *p = lp_new(lim, prec);
    struct event_result r;
    size_t off = 0;
    bool is_first = true;
    while (off < len) {
        size_t n = is_first && first ? first : (piece ? piece : len);
        if (n > len - off)
            n = len - off;
        is_first = false;
        const char *chunk = body + off;
        size_t left = n;
        while (left) {
            size_t used = lp_feed(p, chunk, left, &r);
            assert_true(used > 0 && used <= left);
            render_result(out, &r);
            chunk += used;
            left -= used;
        }
        off += n;
    }
    if (lp_finish(p, &r))
        render_result(out, &r);
    lp_free(p);
}

static void build_body(struct buf *body, struct buf *want, const char *eol)
{
    size_t line = 0;
    for (size_t i = 0; i < NCASES; i++) {
        size_t n = cases[i].len;
        if (is_open(cases[i].want))
            continue; /* would swallow the next line */
        buf_append(body, cases[i].in, n);
        buf_puts(body, eol);
        line++;
        if (cases[i].want)
            buf_printf(want, "L%zu %s\n", line, cases[i].want);
    }
}

/* A string value spanning lines is one record, reported under its first
 * line, wherever the body is cut; one still open at the end is unbalanced. */
static void test_multiline_strings(void **state)
{
    (void)state;
    static const char body[] = "cpu value=\"4\n2\" 5\n"
                               "a,host=h f=\"x\\\n\ny\\\"\n\",g=1i\n"
                               "next v=1\n"
                               "\n"
                               "open f=\"never\nclosed v=1\n";
    static const char want[] = "L1 cpu|||value:S\"4\n2\"|5\n"
                               "L3 a|h||f:S\"x\\\n\ny\"\n\";g:I1|-\n"
                               "L7 next|||v:F1|-\n"
                               "L9 BAD unbalanced quotes in the value of field \"f\"\n";
    struct event_limits lim = lim_default();
    for (size_t cut = 0; cut < sizeof body - 1; cut++) {
        struct buf got = BUF_INIT;
        run_pieces(&lim, 1, body, sizeof body - 1, 0, cut, &got);
        if (strcmp(buf_cstr(&got), want)) {
            print_error("cut %zu: got [%s]\n", cut, buf_cstr(&got));
            fail();
        }
        buf_destroy(&got);
    }
    struct buf got = BUF_INIT;
    run_pieces(&lim, 1, body, sizeof body - 1, 1, 0, &got);
    assert_string_equal(buf_cstr(&got), want);
    buf_destroy(&got);
    /* bounded by max_line_bytes */
    lim.max_line_bytes = 16;
    run_pieces(&lim, 1, L("s f=\"0123456789\n0123456789\"\nt v=1\n"), 0, 0, &got);
    assert_string_equal(buf_cstr(&got),
                        "L1 BAD line too long (a string value spanning lines) (max 16)\n"
                        "L3 t|||v:F1|-\n");
    buf_destroy(&got);
}

static void test_each_line(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    struct lp_parser *p = lp_new(&lim, 1);
    for (size_t i = 0; i < NCASES; i++) {
        struct event ev;
        const char *why = NULL;
        struct buf got = BUF_INIT;
        enum event_kind k = lp_parse_line(p, cases[i].in, cases[i].len, &ev, &why);
        if (k == EVENT_OK)
            render_event(&got, &ev);
        else if (k == EVENT_BAD)
            buf_printf(&got, "BAD %s", why);
        const char *want = cases[i].want ? cases[i].want : "";
        if (strcmp(buf_cstr(&got), want)) {
            print_error("case %zu: got [%s] want [%s]\n", i, buf_cstr(&got), want);
            fail();
        }
        buf_destroy(&got);
    }
    lp_free(p);
}

/* Parses line and renders the event, or "BAD reason". */
static void parse_render(struct lp_parser *p, const struct buf *line, struct buf *got)
{
    struct event ev;
    const char *why = NULL;
    buf_reset(got);
    enum event_kind kind = lp_parse_line(p, line->data, line->len, &ev, &why);
    if (kind == EVENT_OK)
        render_event(got, &ev);
    else if (kind == EVENT_BAD)
        buf_printf(got, "BAD %s", why);
}

/* Appends to in a 40-letter token with put inserted before letter k (after
 * the last when k is 40), and to want the same with put_want (nothing if
 * NULL) in put's place. */
static void put_special_token(struct buf *in, struct buf *want, size_t k, const char *put,
                              const char *put_want)
{
    for (size_t i = 0; i <= 40; i++) {
        if (i == k) {
            buf_puts(in, put);
            buf_puts(want, put_want ? put_want : "");
        }
        if (i < 40) {
            buf_putc(in, (char)('a' + i % 26));
            buf_putc(want, (char)('a' + i % 26));
        }
    }
}

/* A special byte at every offset of a long string value: the wide
 * (16- and 8-byte) scans must stop exactly there. */
static void test_string_special_at_every_offset(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    struct lp_parser *p = lp_new(&lim, 1);
    static const struct {
        const char *put, *want; /* inserted bytes; what the value holds there */
    } specials[] = {
        {"\\\"", "\""},           /* escaped quote */
        {"\\\\", "\\"},           /* escaped backslash */
        {"\\n", "\\n"},           /* a backslash kept as it is */
        {"\xc3\xa9", "\xc3\xa9"}, /* UTF-8 */
        {"\xff", NULL},           /* invalid UTF-8: the line is bad */
    };
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++)
        for (size_t k = 0; k <= 40; k++) {
            struct buf line = BUF_INIT, want = BUF_INIT, got = BUF_INIT;
            buf_puts(&line, "m f=\"");
            buf_puts(&want, "m|||f:S\"");
            put_special_token(&line, &want, k, specials[s].put, specials[s].want);
            buf_puts(&line, "\" 5");
            buf_puts(&want, "\"|5");
            parse_render(p, &line, &got);
            const char *expect = specials[s].want ? buf_cstr(&want)
                                                  : "BAD invalid UTF-8 in the value of field \"f\"";
            if (strcmp(buf_cstr(&got), expect)) {
                print_error("special %zu at %zu: got [%s] want [%s]\n", s, k, buf_cstr(&got),
                            expect);
                fail();
            }
            buf_destroy(&line);
            buf_destroy(&want);
            buf_destroy(&got);
        }
    lp_free(p);
}

/* A special byte at every offset of a long name in each place a name goes
 * (measurement, tag key, tag value, field key): the 16-byte scans must stop
 * exactly there, and what they stop at must be handled as one byte at a
 * time would. */
static void test_name_special_at_every_offset(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    struct lp_parser *p = lp_new(&lim, 1);
    static const struct {
        const char *put, *want, *meas_want; /* NULL want: the line is bad */
        const char *why[4];                 /* the reason per place when bad */
    } specials[] = {
        {"\\,", ",", ",", {0}},
        {"\\ ", " ", " ", {0}},
        {"\\=", "=", "\\=", {0}},   /* '=' needs no escape in a measurement */
        {"\\q", "\\q", "\\q", {0}}, /* a backslash kept as it is */
        {"\xc3\xa9", "\xc3\xa9", "\xc3\xa9", {0}},
        {"\xff",
         NULL,
         NULL,
         {"invalid UTF-8 in the measurement", "invalid UTF-8 in a tag key",
          "invalid UTF-8 in the value of tag \"t\"", "invalid UTF-8 in a field key"}},
#define CTRL(hex) "control character 0x" hex " in a measurement, tag or field key or tag value"
        {"\x01", NULL, NULL, {CTRL("01"), CTRL("01"), CTRL("01"), CTRL("01")}},
        {"\x7f", NULL, NULL, {CTRL("7f"), CTRL("7f"), CTRL("7f"), CTRL("7f")}},
#undef CTRL
    };
    struct buf line = BUF_INIT, want = BUF_INIT, got = BUF_INIT;
    struct buf tok_in = BUF_INIT, tok_want = BUF_INIT;
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++)
        for (int place = 0; place < 4; place++)
            for (size_t k = 0; k <= 40; k++) {
                const char *put_want = place == 0 ? specials[s].meas_want : specials[s].want;
                buf_reset(&tok_in);
                buf_reset(&tok_want);
                put_special_token(&tok_in, &tok_want, k, specials[s].put, put_want);
                const char *in[4] = {"m", "t", "v", "f"}, *out[4] = {"m", "t", "v", "f"};
                in[place] = buf_cstr(&tok_in);
                out[place] = buf_cstr(&tok_want);
                buf_reset(&line);
                buf_reset(&want);
                buf_printf(&line, "%s,%s=%s %s=1 5", in[0], in[1], in[2], in[3]);
                if (put_want)
                    buf_printf(&want, "%s||%s=%s|%s:F1|5", out[0], out[1], out[2], out[3]);
                else
                    buf_printf(&want, "BAD %s", specials[s].why[place]);
                parse_render(p, &line, &got);
                if (strcmp(buf_cstr(&got), buf_cstr(&want))) {
                    print_error("special %zu in place %d at %zu: got [%s] want [%s]\n", s, place, k,
                                buf_cstr(&got), buf_cstr(&want));
                    fail();
                }
            }
    buf_destroy(&line);
    buf_destroy(&want);
    buf_destroy(&got);
    buf_destroy(&tok_in);
    buf_destroy(&tok_want);
    lp_free(p);
}

/* A NUL byte put anywhere into a good line, or over any of its bytes, makes
 * the line bad with the NUL as its reason, whatever else the NUL breaks. */
static void test_nul_anywhere(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    struct lp_parser *p = lp_new(&lim, 1);
    static const char *const good[] = {
        "ev07,host=host-0421,region=eu-west-1 value=0.731,count=12345i,ok=true,u=5u,"
        "msg=\"GET /api/v1/items 200 a much longer text\" 1700000000000000000",
        "m f=1",
        "m\\ x,t\\,k=a\\=b f\\ k=\"q\\\"q\",g=-1.5e3 7",
    };
    struct buf line = BUF_INIT, got = BUF_INIT;
    for (size_t g = 0; g < sizeof good / sizeof good[0]; g++) {
        size_t n = strlen(good[g]);
        for (size_t k = 0; k <= n; k++)
            for (int over = 0; over < 2 && !(over && k == n); over++) {
                buf_reset(&line);
                buf_append(&line, good[g], k);
                buf_putc(&line, '\0');
                buf_append(&line, good[g] + k + (size_t)over, n - k - (size_t)over);
                parse_render(p, &line, &got);
                if (strcmp(buf_cstr(&got), "BAD NUL byte in line")) {
                    print_error("line %zu, NUL %s byte %zu: got [%s]\n", g,
                                over ? "over" : "before", k, buf_cstr(&got));
                    fail();
                }
            }
    }
    buf_destroy(&line);
    buf_destroy(&got);
    lp_free(p);
}

static void test_body_one_shot(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    const char *eols[] = {"\n", "\r\n"};
    for (size_t e = 0; e < 2; e++) {
        struct buf body = BUF_INIT, want = BUF_INIT, got = BUF_INIT;
        build_body(&body, &want, eols[e]);
        run_pieces(&lim, 1, body.data, body.len, 0, 0, &got);
        assert_string_equal(buf_cstr(&got), buf_cstr(&want));
        /* the last line without its newline */
        buf_reset(&got);
        run_pieces(&lim, 1, body.data, body.len - strlen(eols[e]), 0, 0, &got);
        assert_string_equal(buf_cstr(&got), buf_cstr(&want));
        buf_destroy(&body);
        buf_destroy(&want);
        buf_destroy(&got);
    }
}

/* Every split into two pieces, and 1-, 2-, 3- and 7-byte pieces, must give
 * what the whole body gives. */
static void check_splits(const struct event_limits *lim, int64_t prec, const char *body, size_t len)
{
    struct buf whole = BUF_INIT, got = BUF_INIT;
    run_pieces(lim, prec, body, len, 0, 0, &whole);
    for (size_t cut = 1; cut < len; cut++) {
        buf_reset(&got);
        run_pieces(lim, prec, body, len, len, cut, &got);
        if (strcmp(buf_cstr(&got), buf_cstr(&whole))) {
            print_error("split at %zu differs:\n%s\n---\n%s\n", cut, buf_cstr(&got),
                        buf_cstr(&whole));
            fail();
        }
    }
    static const size_t pieces[] = {1, 2, 3, 7};
    for (size_t i = 0; i < 4; i++) {
        buf_reset(&got);
        run_pieces(lim, prec, body, len, pieces[i], 0, &got);
        assert_string_equal(buf_cstr(&got), buf_cstr(&whole));
    }
    buf_destroy(&whole);
    buf_destroy(&got);
}

static void test_body_every_split(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    struct buf body = BUF_INIT, want = BUF_INIT;
    build_body(&body, &want, "\r\n");
    check_splits(&lim, 1, body.data, body.len);
    buf_reset(&body);
    buf_reset(&want);
    build_body(&body, &want, "\n");
    check_splits(&lim, 1, body.data, body.len - 1);
    buf_destroy(&body);
    buf_destroy(&want);
}

static void test_precision(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t mult;
    } tab[] = {{"ns", 1},
               {"n", 1},
               {NULL, 1},
               {"", 1},
               {"us", 1000},
               {"u", 1000},
               {"ms", 1000000},
               {"s", 1000000000},
               {"m", 60000000000LL},
               {"h", 3600000000000LL}};
    struct event_limits lim = lim_default();
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        int64_t m = 0;
        assert_int_equal(lp_precision_parse(tab[i].name, &m), ERR_OK);
        assert_int_equal(m, tab[i].mult);
        struct lp_parser *p = lp_new(&lim, m);
        struct event ev;
        const char *why;
        assert_int_equal(lp_parse_line(p, L("c f=1 -3"), &ev, &why), EVENT_OK);
        assert_true(ev.has_ts);
        assert_int_equal(ev.ts, -3 * tab[i].mult);
        lp_free(p);
    }
    int64_t m;
    assert_int_equal(lp_precision_parse("sec", &m), ERR_INVAL);
    assert_int_equal(lp_precision_parse("NS", &m), ERR_INVAL);

    /* overflow after scaling */
    struct lp_parser *p = lp_new(&lim, 1000000000);
    struct event ev;
    const char *why = NULL;
    assert_int_equal(lp_parse_line(p, L("c f=1 9223372036"), &ev, &why), EVENT_OK);
    assert_int_equal(ev.ts, 9223372036000000000LL);
    assert_int_equal(lp_parse_line(p, L("c f=1 9223372037"), &ev, &why), EVENT_BAD);
    assert_string_equal(why, "timestamp out of range");
    assert_int_equal(lp_parse_line(p, L("c f=1 -9223372037"), &ev, &why), EVENT_BAD);
    lp_free(p);
}

struct limit_case {
    const char *in;
    const char *want;
};

static void run_limit_cases(const struct event_limits *lim, const struct limit_case *tab, size_t n)
{
    struct lp_parser *p = lp_new(lim, 1);
    for (size_t i = 0; i < n; i++) {
        struct event ev;
        const char *why = NULL;
        struct buf got = BUF_INIT;
        enum event_kind k = lp_parse_line(p, tab[i].in, strlen(tab[i].in), &ev, &why);
        if (k == EVENT_OK)
            render_event(&got, &ev);
        else if (k == EVENT_BAD)
            buf_printf(&got, "BAD %s", why);
        if (strcmp(buf_cstr(&got), tab[i].want)) {
            print_error("limit case %zu: got [%s] want [%s]\n", i, buf_cstr(&got), tab[i].want);
            fail();
        }
        buf_destroy(&got);
    }
    lp_free(p);
}

static void test_limits(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    lim.max_key_bytes = 4;
    lim.max_tags_per_line = 2;
    lim.max_fields_per_line = 3;
    static const struct limit_case tab[] = {
        {"abcd,k123=v,k2=v f123=1,b=2,c=3", "abcd||k123=v;k2=v|f123:F1;b:F2;c:F3|-"},
        {"abcde f=1", "BAD measurement too long (max 4)"},
        {"a,k1234=v f=1", "BAD tag key too long (max 4)"},
        {"a,k=vvvvvvvvvvvvvvvv f=1", "a||k=vvvvvvvvvvvvvvvv|f:F1|-"},
        {"a,host=hhhhh f=1", "BAD host too long (max 4)"},
        {"a,host=hhhh,x=1,y=2 f=1", "a|hhhh|x=1;y=2|f:F1|-"},
        {"a,x=1,y=2,z=3 f=1", "BAD too many tags (max 2)"},
        {"a f12345=1", "BAD field key too long (max 4)"},
        {"a\\ \\ \\  f=1", "a   |||f:F1|-"},
        {"a\\ \\ \\ \\  f=1", "BAD measurement too long (max 4)"},
        {"a a=1,b=2,c=3,d=4", "BAD too many fields (max 3)"},
    };
    run_limit_cases(&lim, tab, sizeof tab / sizeof tab[0]);

    /* many tags and fields: the sorted duplicate check */
    lim = lim_default();
    struct buf line = BUF_INIT;
    buf_puts(&line, "m");
    for (int i = 0; i < 1024; i++)
        buf_printf(&line, ",t%d=v", i);
    buf_puts(&line, " ");
    for (int i = 0; i < 300; i++)
        buf_printf(&line, "%sf%d=%di", i ? "," : "", i, i);
    struct lp_parser *p = lp_new(&lim, 1);
    struct event ev;
    const char *why = NULL;
    assert_int_equal(lp_parse_line(p, line.data, line.len, &ev, &why), EVENT_OK);
    assert_int_equal(ev.ntags, 1024);
    assert_int_equal(ev.nfields, 300);
    assert_int_equal(ev.fields[299].v.i, 299);
    buf_puts(&line, ",f17=1i");
    assert_int_equal(lp_parse_line(p, line.data, line.len, &ev, &why), EVENT_BAD);
    assert_string_equal(why, "duplicate field key \"f17\"");
    buf_reset(&line);
    buf_puts(&line, "m");
    for (int i = 0; i < 1025; i++)
        buf_printf(&line, ",t%d=v", i);
    buf_puts(&line, " f=1");
    assert_int_equal(lp_parse_line(p, line.data, line.len, &ev, &why), EVENT_BAD);
    assert_string_equal(why, "too many tags (max 1024)");
    buf_reset(&line);
    buf_puts(&line, "m");
    for (int i = 0; i < 40; i++)
        buf_printf(&line, ",t%d=v", i % 39);
    buf_puts(&line, " f=1");
    assert_int_equal(lp_parse_line(p, line.data, line.len, &ev, &why), EVENT_BAD);
    assert_string_equal(why, "duplicate tag key \"t0\"");
    lp_free(p);
    buf_destroy(&line);
}

static void test_line_too_long(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    lim.max_line_bytes = 16;
    /* line 2 is 17 bytes, line 4 is exactly 16 (with its \r), line 5 is huge */
    const char body[] = "a f=1\n"
                        "bbbbbbbbbbbbb f=1\n"
                        "c f=2\r\n"
                        "ddddddddddd f=3\r\n"
                        "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee f=1\n"
                        "\n"
                        "g f=4\n"
                        "hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh";
    const char *want = "L1 a|||f:F1|-\n"
                       "L2 BAD line too long (max 16)\n"
                       "L3 c|||f:F2|-\n"
                       "L4 ddddddddddd|||f:F3|-\n"
                       "L5 BAD line too long (max 16)\n"
                       "L7 g|||f:F4|-\n"
                       "L8 BAD line too long (max 16)\n";
    struct buf got = BUF_INIT;
    run_pieces(&lim, 1, body, sizeof body - 1, 0, 0, &got);
    assert_string_equal(buf_cstr(&got), want);
    buf_destroy(&got);
    check_splits(&lim, 1, body, sizeof body - 1);
}

static void test_host_tag(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    lim.host_tag = "src";
    lim.default_host = "unknown";
    static const struct limit_case tab[] = {
        {"m,src=a,host=b f=1", "m|a|host=b|f:F1|-"},
        {"m,host=b f=1", "m|unknown|host=b|f:F1|-"},
        {"m,src=a,src=b f=1", "BAD duplicate tag key \"src\""},
    };
    run_limit_cases(&lim, tab, sizeof tab / sizeof tab[0]);
}

static void test_lines_splitter(void **state)
{
    (void)state;
    struct event_lines s;
    event_lines_init(&s, 8);
    enum event_line_kind k;
    struct slice line;
    /* "ab" | "c\nd" | "" | finish */
    assert_int_equal(event_lines_next(&s, "ab", 2, &k, &line), 2);
    assert_int_equal(k, EVENT_LINE_NONE);
    assert_int_equal(event_lines_next(&s, "c\r\nd", 4, &k, &line), 3);
    assert_int_equal(k, EVENT_LINE_OK);
    assert_int_equal(line.len, 3);
    assert_memory_equal(line.ptr, "abc", 3);
    assert_int_equal(event_lines_next(&s, "d", 1, &k, &line), 1);
    assert_int_equal(k, EVENT_LINE_NONE);
    assert_int_equal(event_lines_next(&s, "", 0, &k, &line), 0);
    assert_int_equal(event_lines_finish(&s, &line), EVENT_LINE_OK);
    assert_int_equal(s.line_no, 2);
    assert_memory_equal(line.ptr, "d", 1);
    assert_int_equal(event_lines_finish(&s, &line), EVENT_LINE_NONE);
    event_lines_destroy(&s);
}

/* The float fast path must agree bit for bit with strtod. */
static void test_floats_match_strtod(void **state)
{
    (void)state;
    struct event_limits lim = lim_default();
    struct lp_parser *p = lp_new(&lim, 1);
    uint64_t x = 12345;
    for (int i = 0; i < 20000; i++) {
        char num[64], line[80];
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned nd = 1 + (unsigned)(x >> 59) % 20; /* digits before the point */
        unsigned fd = (unsigned)(x >> 54) % 20;     /* digits after it */
        int e = (int)((x >> 40) % 61) - 30;
        size_t n = 0;
        if (x & 1)
            num[n++] = '-';
        uint64_t y = x;
        for (unsigned k = 0; k < nd; k++, y = y * 2862933555777941757ULL + 3037000493ULL)
            num[n++] = (char)('0' + (y >> 60) % 10);
        if (fd) {
            num[n++] = '.';
            for (unsigned k = 0; k < fd; k++, y = y * 2862933555777941757ULL + 3037000493ULL)
                num[n++] = (char)('0' + (y >> 60) % 10);
        }
        if (x & 2)
            n += (size_t)snprintf(num + n, sizeof num - n, "e%d", e);
        num[n] = '\0';
        int len = snprintf(line, sizeof line, "m f=%s", num);
        struct event ev;
        const char *why = NULL;
        assert_int_equal(lp_parse_line(p, line, (size_t)len, &ev, &why), EVENT_OK);
        double want = strtod(num, NULL);
        if (memcmp(&ev.fields[0].v.f, &want, sizeof want)) {
            print_error("%s: got %.17g want %.17g\n", num, ev.fields[0].v.f, want);
            fail();
        }
    }
    lp_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_line),
        cmocka_unit_test(test_string_special_at_every_offset),
        cmocka_unit_test(test_name_special_at_every_offset),
        cmocka_unit_test(test_nul_anywhere),
        cmocka_unit_test(test_body_one_shot),
        cmocka_unit_test(test_body_every_split),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_line_too_long),
        cmocka_unit_test(test_host_tag),
        cmocka_unit_test(test_lines_splitter),
        cmocka_unit_test(test_floats_match_strtod),
        cmocka_unit_test(test_multiline_strings),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
