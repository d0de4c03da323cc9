/* OTLP/JSON in one pass over the body (jscan), for the bodies exporters
 * send: no tape is built and walked (the tape's parse and walk were two
 * thirds of an OTLP/JSON record's cost in the connection threads). It maps
 * exactly as the tape decoder (otlp_json.c) does, and takes only what it
 * can map the same way: every AnyValue kind (arrays and kvlists rendered
 * as the tape decoder renders them), a resourceLogs' "resource" before its
 * "scopeLogs" and a kvlist entry's "key" before its "value" (the order
 * exporters write them in), one member of each name where the tape decoder
 * would pick among several. On anything else,
 * and on any error, it gives up (false) and the tape decoder decodes the
 * body again, words the error, and has the last word: a body this path
 * takes is one the tape decoder maps to the same rows.
 *
 * The whole body is read before any row is given out, so that giving up
 * leaves nothing to take back (nor arrival stamps taken): each record's
 * members as read (struct rec_vals, any order) and its attributes, which
 * are then applied in the tape decoder's order (a key given twice keeps
 * its first value). Strings are slices of the body, or of the scanner's
 * scratch when they hold escapes; both live until the body is done. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/json.h"
#include "base/thread_keep.h"
#include "ingest/jscan.h"
#include "ingest/otlp_int.h"
#include "ingest/pb.h"

/* An attribute read: its key and value. */
struct kv {
    struct slice key;
    struct otlp_attr a; /* OTLP_TEXT: a.s.len bytes at text_off in fast.text */
    size_t text_off;
};

struct kv_list {
    struct kv *v;
    size_t n, cap;
};

/* A record read: its members (OTLP_R_* order), its attributes (attrs[a0,
 * a0 + na)) and its resource (res index). */
struct rec_vals {
    bool seen[OTLP_R_COUNT];
    uint64_t time, observed;
    struct slice body, sev_text, trace, span; /* body: unless body_text */
    int64_t sev_num;
    size_t a0, na, res;
    bool body_text; /* the body rendered as JSON: body_len bytes at body_off in fast.text */
    size_t body_off, body_len;
};

/* A resourceLogs element's resource: attributes res_kv[k0, k0 + nk). */
struct res_vals {
    bool present;
    size_t k0, nk;
};

struct fast {
    struct jscan s;
    struct buf scratch;
    struct buf text; /* values rendered as JSON (arrays, kvlists, bodies not strings) */
    struct kv_list attrs, res_kv;
    struct rec_vals *recs;
    size_t nrecs, recs_cap;
    struct res_vals *res;
    size_t nres, res_cap;
};

static struct kv *kv_add(struct kv_list *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    return &l->v[l->n++];
}

/* The body is NUL-terminated and padded with 16 zero bytes
 * (otlp_json_fast), so that the scans below need no bound: a NUL stops
 * each of them, and is no token. The rest (numbers, literals, strings
 * with escapes or bytes >= 0x80, values passed over) is jscan's. */
static inline void blank(struct fast *f)
{
    const char *p = f->s.p;
    if (__builtin_expect((unsigned char)*p > ' ', 1)) /* exporters send no blanks */
        return;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    f->s.p = p;
}

/* Consumes c if it is next. */
static inline bool take(struct fast *f, char c)
{
    blank(f);
    if (*f->s.p != c)
        return false;
    f->s.p++;
    return true;
}

/* A null next: consumed, true. */
static inline bool take_null(struct fast *f)
{
    blank(f);
    if (memcmp(f->s.p, "null", 4) != 0 || f->s.end - f->s.p < 4)
        return false;
    f->s.p += 4;
    return true;
}

/* A string next (else false): its bytes in *out. A plain one is found 16
 * bytes at a time; one with escapes, bytes >= 0x80 or an error is
 * jscan_string_full's. */
static inline bool str(struct fast *f, struct slice *out)
{
    blank(f);
    const char *p = f->s.p, *q = p + 1;
    if (*p != '"')
        return false;
#ifdef __SSE2__
    unsigned m;
    while (!(m = jscan_stops16(q)))
        q += 16;
    q += __builtin_ctz(m);
#else
    q = jscan_skip_plain(q, f->s.end);
#endif
    if (*q != '"' || q >= f->s.end)
        return jscan_string_full(&f->s, out);
    *out = slice_make(p + 1, (size_t)(q - p - 1));
    f->s.p = q + 1;
    return true;
}

/* Matches the n bytes of lit (at most OTLP_JSON_PAD) at the position, with
 * no blank before them, and moves past them. */
static inline bool lit(struct fast *f, const char *l, size_t n)
{
    if (memcmp(f->s.p, l, n) != 0)
        return false;
    f->s.p += n;
    return true;
}
#define LIT(f, l) lit(f, l, sizeof l - 1)

/* Where the reading is, to go back to when a shortcut does not apply: the
 * position, the scratch of unescaped strings, the rendered text. */
struct mark {
    const char *p;
    char *sp;
    size_t text;
};

static inline struct mark mark_at(const struct fast *f)
{
    return (struct mark){f->s.p, f->s.sp, f->text.len};
}

static inline void back_to(struct fast *f, struct mark m)
{
    f->s.p = m.p;
    f->s.sp = m.sp;
    f->s.err = NULL;
    f->text.len = m.text;
}

/* The next member of an object whose '{' is read: 1 with its key (and the
 * ':' read), 0 after its '}', -1 on an error. *first: no member read yet. */
static int next_member(struct fast *f, bool *first, struct slice *key)
{
#ifdef __SSE2__
    /* as exporters write it: no blanks, a plain key ending within 16
     * bytes, its colon right after */
    const char *p = f->s.p;
    if (*p == '}') {
        f->s.p = p + 1;
        return 0;
    }
    const char *k = *first ? p + 1 : p + 2;
    if (k[-1] == '"' && (*first || *p == ',')) {
        unsigned m = jscan_stops16(k);
        if (m) {
            const char *q = k + __builtin_ctz(m);
            if (*q == '"' && q[1] == ':' && q < f->s.end) {
                *key = slice_make(k, (size_t)(q - k));
                f->s.p = q + 2;
                *first = false;
                return 1;
            }
        }
    }
#endif
    if (take(f, '}'))
        return 0;
    if (!*first && !take(f, ','))
        return -1;
    *first = false;
    return str(f, key) && take(f, ':') ? 1 : -1;
}

/* The next element of an array whose '[' is read: 1 (the element next),
 * 0 after its ']', -1 on an error. */
static int next_element(struct fast *f, bool *first)
{
    if (take(f, ']'))
        return 0;
    if (!*first && !take(f, ','))
        return -1;
    *first = false;
    return 1;
}

/* Any value, checked, at depth (the containers around it, plus one). */
static bool skip(struct fast *f, int depth)
{
    return jscan_skip(&f->s, depth);
}

/* An unsigned 64-bit integer as a number or a string of digits
 * (json_int's unsigned case). */
static bool read_u64(struct fast *f, uint64_t *out)
{
    enum jscan_type t;
    int64_t i;
    double x;
    struct slice digits;
    blank(f);
    if (*f->s.p == '"')
        return str(f, &digits) && dec_u64(digits.ptr, digits.len, out) == DEC_OK;
    if (!jscan_number(&f->s, &t, &i, &x) || t != JS_INT || i < 0)
        return false;
    *out = (uint64_t)i;
    return true;
}

/* An intValue: a number or a string of digits with an optional '-'. */
static bool read_i64(struct fast *f, int64_t *out)
{
    enum jscan_type t;
    double x;
    struct slice digits;
    blank(f);
    if (*f->s.p == '"')
        return str(f, &digits) && dec_i64(digits.ptr, digits.len, out) == DEC_OK;
    return jscan_number(&f->s, &t, out, &x) && t == JS_INT;
}

/* A doubleValue: a number, or "NaN", "Infinity", "-Infinity". */
static bool read_double(struct fast *f, double *out)
{
    enum jscan_type t;
    int64_t i;
    struct slice name;
    blank(f);
    if (*f->s.p == '"') {
        if (!str(f, &name))
            return false;
        if (slice_eq(name, slice_cstr("NaN")))
            *out = __builtin_nan("");
        else if (slice_eq(name, slice_cstr("Infinity")))
            *out = __builtin_inf();
        else if (slice_eq(name, slice_cstr("-Infinity")))
            *out = -__builtin_inf();
        else
            return false;
        return true;
    }
    bool neg = *f->s.p == '-';
    if (!jscan_number(&f->s, &t, &i, out))
        return false;
    if (t == JS_INT) /* "-0" is the double -0, as strtod reads it */
        *out = i == 0 && neg ? -0.0 : (double)i;
    return true;
}

/* The containers the tape decoder opens at most (jtape.h JT_MAX_DEPTH):
 * a container deeper than that gives up. */
#define MAX_DEPTH 64

/* The value of an AnyValue's scalar member m (otlp_json_any_name: string,
 * bool, int, double or bytes) into a. */
static bool read_scalar(struct fast *f, int m, struct otlp_attr *a)
{
    switch (m) {
    case 0:
    case 6: a->kind = OTLP_STRING; return str(f, &a->s);
    case 1:
        a->kind = OTLP_BOOL;
        a->b = jscan_peek(&f->s) == 't';
        return jscan_literal(&f->s, a->b ? "true" : "false");
    case 2: a->kind = OTLP_INT; return read_i64(f, &a->i);
    case 3: a->kind = OTLP_DOUBLE; return read_double(f, &a->f);
    default: return false;
    }
}

static bool render_any(struct fast *f, int depth, int level, struct buf *out);
static bool any_one(struct fast *f, struct otlp_attr *a, int *which);

/* The list of an arrayValue (is_kv false) or kvlistValue (its '{' next, at
 * depth), of an AnyValue at nesting level, appended to out as the tape
 * decoder renders it: a JSON array of its values, or an object of its
 * keys. */
static bool render_list(struct fast *f, int depth, int level, bool is_kv, struct buf *out);

/* An AnyValue object (its '{' next) at depth and nesting level: the first
 * of its members that is not null and has an AnyValue name, as a string
 * (bytes too), bool, int or double attribute, or an array or kvlist
 * rendered as JSON onto out (OTLP_TEXT, a->s.len bytes; a->s.ptr unset);
 * OTLP_NONE if it has none. That name's index in *which (-1: none). */
static bool read_any(struct fast *f, int depth, int level, struct otlp_attr *a, int *which,
                     struct buf *out)
{
    memset(a, 0, sizeof *a);
    *which = -1;
    if (depth > MAX_DEPTH)
        return false;
    if (any_one(f, a, which))
        return true;
    memset(a, 0, sizeof *a);
    *which = -1;
    if (!take(f, '{'))
        return false;
    bool first = true, found = false;
    struct slice key;
    int rc;
    while ((rc = next_member(f, &first, &key)) == 1) {
        int m = found ? -1 : otlp_json_any_name(key);
        if (m < 0 || take_null(f)) {
            if (m < 0 && !skip(f, depth + 1))
                return false;
            continue;
        }
        found = true;
        *which = m;
        bool ok;
        size_t before = out->len;
        if (m == 4 || m == 5) { /* arrayValue, kvlistValue */
            a->kind = OTLP_TEXT;
            ok = render_list(f, depth + 1, level, m == 5, out);
            a->s = slice_make(NULL, out->len - before);
        } else {
            ok = read_scalar(f, m, a);
        }
        if (!ok)
            return false;
    }
    return rc == 0;
}

/* The scalar member an AnyValue opens with as exporters write it, with its
 * brace, quotes and colon ({"stringValue":...): its otlp_json_any_name
 * index, the position past the colon; else -1 and nothing read. */
static int any_opening(struct fast *f)
{
    if (LIT(f, "{\"stringValue\":"))
        return 0;
    if (LIT(f, "{\"intValue\":"))
        return 2;
    if (LIT(f, "{\"doubleValue\":"))
        return 3;
    if (LIT(f, "{\"boolValue\":"))
        return 1;
    return -1;
}

/* read_any's shortcut for an AnyValue of one scalar member, as exporters
 * write them ({"stringValue":"x"}): true if it was one, else nothing is
 * read (the position is back where it was). */
static bool any_one(struct fast *f, struct otlp_attr *a, int *which)
{
    struct mark m0 = mark_at(f);
    struct slice name;
    int m = any_opening(f);
    if (m < 0 && LIT(f, "{") && str(f, &name) && LIT(f, ":"))
        m = otlp_json_any_name(name); /* unknown or a list: the full reading */
    if (m >= 0 && m != 4 && m != 5 && read_scalar(f, m, a) && LIT(f, "}")) {
        *which = m;
        return true;
    }
    back_to(f, m0);
    return false;
}

/* Appends an AnyValue read by read_any (member index m) as the tape
 * decoder renders it (an array or kvlist is there already). */
static void render_attr(struct buf *out, const struct otlp_attr *a, int m)
{
    switch (m) {
    case -1: buf_puts(out, "null"); break;
    case 0:
    case 6: json_str(out, a->s.ptr, a->s.len); break;
    case 1: buf_puts(out, a->b ? "true" : "false"); break;
    case 2: buf_printf(out, "%" PRId64, a->i); break;
    case 3: otlp_json_double(out, a->f); break;
    default: break;
    }
}

static bool render_any(struct fast *f, int depth, int level, struct buf *out)
{
    struct otlp_attr a;
    int m;
    if (level > PB_MAX_DEPTH || !read_any(f, depth, level, &a, &m, out))
        return false;
    render_attr(out, &a, m);
    return true;
}

/* A KeyValue of a kvlist (its '{' next, at depth) as "key":value; its
 * value after its key, as exporters write them (else it gives up: the
 * tape decoder writes the key first wherever it is). */
static bool render_kv(struct fast *f, int depth, int level, struct buf *out)
{
    if (depth > MAX_DEPTH || !take(f, '{'))
        return false;
    bool first = true, has_key = false, has_value = false;
    struct slice name, k;
    int rc;
    while ((rc = next_member(f, &first, &name)) == 1) {
        bool ok;
        if (!has_key && slice_eq(name, slice_cstr("key"))) {
            has_key = ok = str(f, &k);
            if (ok) {
                json_str(out, k.ptr, k.len);
                buf_putc(out, ':');
            }
        } else if (!has_value && slice_eq(name, slice_cstr("value"))) {
            has_value = true;
            ok = has_key && (take_null(f) ? (buf_puts(out, "null"), true)
                                          : render_any(f, depth + 1, level + 1, out));
        } else {
            ok = skip(f, depth + 1);
        }
        if (!ok)
            return false;
    }
    if (rc != 0 || !has_key)
        return false;
    if (!has_value)
        buf_puts(out, "null");
    return true;
}

static bool render_list(struct fast *f, int depth, int level, bool is_kv, struct buf *out)
{
    if (depth > MAX_DEPTH || !take(f, '{'))
        return false;
    buf_putc(out, is_kv ? '{' : '[');
    bool first = true, seen = false;
    struct slice key;
    int rc;
    while ((rc = next_member(f, &first, &key)) == 1) {
        if (seen || !slice_eq(key, slice_cstr("values"))) {
            if (!skip(f, depth + 1))
                return false;
            continue;
        }
        seen = true; /* the first "values", null or not, as the tape takes it */
        if (take_null(f))
            continue;
        if (depth + 1 > MAX_DEPTH || !take(f, '['))
            return false;
        bool first_e = true;
        int erc;
        for (size_t n = 0; (erc = next_element(f, &first_e)) == 1; n++) {
            if (n)
                buf_putc(out, ',');
            if (is_kv ? !render_kv(f, depth + 2, level, out)
                      : !render_any(f, depth + 2, level + 1, out))
                return false;
        }
        if (erc != 0)
            return false;
    }
    if (rc != 0)
        return false;
    buf_putc(out, is_kv ? '}' : ']');
    return true;
}

/* A list of KeyValue objects (its '[' next) at depth into l: each one's
 * first "key" (a string) and first "value" (null: the attribute is left
 * out, as the tape decoder leaves it). */
static bool read_attrs(struct fast *f, int depth, struct kv_list *l)
{
    if (!take(f, '['))
        return false;
    bool first = true;
    int rc;
    while ((rc = next_element(f, &first)) == 1) {
        struct kv kv;
        int which;
        /* {"key":"k","value":{...}} as exporters write it, else the full
         * reading below */
        struct mark m0 = mark_at(f);
        if (LIT(f, "{\"key\":") && str(f, &kv.key) && LIT(f, ",\"value\":{")) {
            f->s.p--; /* the AnyValue's '{' */
            kv.text_off = f->text.len;
            if (read_any(f, depth + 2, 1, &kv.a, &which, &f->text) && LIT(f, "}")) {
                *kv_add(l) = kv;
                continue;
            }
        }
        back_to(f, m0);
        if (!take(f, '{'))
            return false;
        bool first_m = true, has_key = false, has_value = false, value_null = false;
        struct slice name;
        int mrc;
        while ((mrc = next_member(f, &first_m, &name)) == 1) {
            bool ok;
            if (!has_key && slice_eq(name, slice_cstr("key"))) {
                has_key = true;
                ok = str(f, &kv.key);
            } else if (!has_value && slice_eq(name, slice_cstr("value"))) {
                has_value = true;
                value_null = take_null(f);
                kv.text_off = f->text.len;
                ok = value_null || read_any(f, depth + 2, 1, &kv.a, &which, &f->text);
            } else {
                ok = skip(f, depth + 2);
            }
            if (!ok)
                return false;
        }
        if (mrc != 0 || !has_key)
            return false;
        if (has_value && !value_null)
            *kv_add(l) = kv;
    }
    return rc == 0;
}

/* A severityNumber: an integer, or an enum name ("SEVERITY_NUMBER_WARN";
 * 0 for a name it does not know, as the tape decoder reads it). */
static bool read_severity(struct fast *f, int64_t *num)
{
    enum jscan_type t;
    double x;
    struct slice name;
    if (!jscan_type(&f->s, &t))
        return false;
    if (t != JS_STRING)
        return jscan_number(&f->s, &t, num, &x) && t == JS_INT;
    return str(f, &name) && otlp_json_severity_enum(name, num);
}

/* A string member value (not null: the caller has passed nulls over). */
static bool read_str(struct fast *f, struct slice *out)
{
    return str(f, out);
}

/* A record's member i (not null) into v and the record attributes. */
static bool read_member(struct fast *f, int i, int depth, struct rec_vals *v)
{
    struct otlp_attr body;
    int which;
    switch (i) {
    case OTLP_R_TIME: return read_u64(f, &v->time);
    case OTLP_R_OBSERVED: return read_u64(f, &v->observed);
    case OTLP_R_BODY: /* a stringValue is the msg; any other is rendered */
        v->body_off = f->text.len;
        if (!read_any(f, depth + 1, 1, &body, &which, &f->text))
            return false;
        if (which == 0) {
            v->body = body.s;
            return true;
        }
        render_attr(&f->text, &body, which);
        v->body_text = true;
        v->body_len = f->text.len - v->body_off;
        return true;
    case OTLP_R_SEVTEXT: return read_str(f, &v->sev_text);
    case OTLP_R_SEVNUM: return read_severity(f, &v->sev_num);
    case OTLP_R_TRACE: return read_str(f, &v->trace);
    case OTLP_R_SPAN: return read_str(f, &v->span);
    case OTLP_R_ATTRS: return read_attrs(f, depth + 1, &f->attrs);
    default: break;
    }
    return false;
}

/* An attribute read, a rendered one pointing into the text now. */
static const struct otlp_attr *attr_of(const struct fast *f, struct kv *kv)
{
    if (kv->a.kind == OTLP_TEXT)
        kv->a.s.ptr = f->text.data + kv->text_off;
    return &kv->a;
}

/* A record read: its row, its parts in the tape decoder's order. */
static void apply(struct fast *f, struct otlp_dec *d, const struct rec_vals *v)
{
    const struct res_vals *r = &f->res[v->res];
    d->no++;
    d->rec_error = NULL;
    logrow_reset(&d->row);
    struct slice msg = v->body_text           ? slice_make(f->text.data + v->body_off, v->body_len)
                       : v->seen[OTLP_R_BODY] ? v->body
                                              : slice_make("", 0);
    logrow_str(&d->row, slice_cstr("msg"), msg);
    otlp_json_level(d, v->seen[OTLP_R_SEVTEXT] ? v->sev_text : slice_make("", 0),
                    v->seen[OTLP_R_SEVNUM] ? v->sev_num : 0);
    if (v->seen[OTLP_R_TRACE])
        otlp_json_add_id(d, v->trace, "trace_id");
    if (v->seen[OTLP_R_SPAN])
        otlp_json_add_id(d, v->span, "span_id");
    for (size_t i = v->a0; i < v->a0 + v->na; i++)
        otlp_add_attr(d, f->attrs.v[i].key, attr_of(f, &f->attrs.v[i]), false);
    if (r->present && otlp_res_decode(d))
        for (size_t i = r->k0; i < r->k0 + r->nk; i++)
            otlp_res_attr(d, f->res_kv.v[i].key, attr_of(f, &f->res_kv.v[i]));
    otlp_res_done(d);
    otlp_end_record(d, v->time, v->observed);
}

/* A LogRecord object at depth, of the last resource read. */
static bool read_record(struct fast *f, int depth)
{
    if (!take(f, '{'))
        return false;
    if (f->nrecs == f->recs_cap) {
        f->recs_cap = f->recs_cap ? 2 * f->recs_cap : 256;
        f->recs = xrealloc(f->recs, f->recs_cap * sizeof *f->recs);
    }
    struct rec_vals *v = &f->recs[f->nrecs];
    memset(v, 0, sizeof *v);
    v->a0 = f->attrs.n;
    v->res = f->nres - 1;
    bool first = true;
    struct slice key;
    int rc;
    while ((rc = next_member(f, &first, &key)) == 1) {
        if (take_null(f))
            continue;
        int i = otlp_json_record_name(key);
        if (i < 0 || v->seen[i]) { /* the tape decoder reads the first only */
            if (!skip(f, depth + 1))
                return false;
            continue;
        }
        v->seen[i] = true;
        if (!read_member(f, i, depth, v))
            return false;
    }
    v->na = f->attrs.n - v->a0;
    f->nrecs++;
    return rc == 0;
}

/* The array member of an object at depth named camel or snake: the first
 * of them read whole, each element through fn; a second one gives up (the
 * tape decoder prefers camel, wherever it is). *seen: one was read. */
static bool read_array(struct fast *f, int depth, bool *seen, bool (*fn)(struct fast *, int))
{
    if (*seen)
        return false;
    *seen = true;
    if (take_null(f))
        return true;
    if (!take(f, '['))
        return false;
    bool first = true;
    int rc;
    while ((rc = next_element(f, &first)) == 1)
        if (!fn(f, depth + 1))
            return false;
    return rc == 0;
}

/* A scopeLogs object at depth: its logRecords; its scope is not mapped. */
static bool read_scope(struct fast *f, int depth)
{
    if (!take(f, '{'))
        return false;
    bool first = true, seen = false;
    struct slice key;
    int rc;
    while ((rc = next_member(f, &first, &key)) == 1) {
        bool ok =
            slice_eq(key, slice_cstr("logRecords")) || slice_eq(key, slice_cstr("log_records"))
                ? read_array(f, depth + 1, &seen, read_record)
                : skip(f, depth + 1);
        if (!ok)
            return false;
    }
    return rc == 0;
}

/* A resource object at depth: its attributes, kept for its records. */
static bool read_resource(struct fast *f, int depth)
{
    if (!take(f, '{'))
        return false;
    struct res_vals *r = &f->res[f->nres - 1];
    r->present = true;
    bool first = true, seen = false;
    struct slice key;
    int rc;
    while ((rc = next_member(f, &first, &key)) == 1) {
        bool ok;
        if (!slice_eq(key, slice_cstr("attributes")))
            ok = skip(f, depth + 1);
        else if (seen)
            ok = false;
        else
            ok = (seen = true, take_null(f) || read_attrs(f, depth + 1, &f->res_kv));
        if (!ok)
            return false;
    }
    r = &f->res[f->nres - 1];
    r->nk = f->res_kv.n - r->k0;
    return rc == 0;
}

/* A resourceLogs object at depth. Its records take its resource, which
 * must come first (exporters write the fields in their proto order). */
static bool read_resource_logs(struct fast *f, int depth)
{
    if (!take(f, '{'))
        return false;
    if (f->nres == f->res_cap) {
        f->res_cap = f->res_cap ? 2 * f->res_cap : 16;
        f->res = xrealloc(f->res, f->res_cap * sizeof *f->res);
    }
    f->res[f->nres++] = (struct res_vals){false, f->res_kv.n, 0};
    bool first = true, seen_res = false, seen_scopes = false;
    struct slice key;
    int rc;
    while ((rc = next_member(f, &first, &key)) == 1) {
        bool ok;
        if (slice_eq(key, slice_cstr("resource"))) {
            if (seen_res || seen_scopes)
                return false;
            seen_res = true;
            ok = take_null(f) || read_resource(f, depth + 1);
        } else if (slice_eq(key, slice_cstr("scopeLogs")) ||
                   slice_eq(key, slice_cstr("scope_logs"))) {
            ok = read_array(f, depth + 1, &seen_scopes, read_scope);
        } else {
            ok = skip(f, depth + 1);
        }
        if (!ok)
            return false;
    }
    return rc == 0;
}

/* A list's first room for about n entries: at most 64 Ki of them (a body
 * of many megabytes grows its lists by doubling rather than reserve a
 * hundred megabytes it may not fill). */
static size_t room(size_t n)
{
    return n < 65536 ? n + 16 : 65536;
}

/* The lists and buffers of the body decoded last on this thread, kept
 * for the next one: a body of megabytes would otherwise have their pages
 * faulted in and handed back each time (a 5,000-record body, about 1 MB
 * of lists touched; a fault is costly in a virtual machine). Over
 * FAST_KEEP_BYTES they are freed after use. Freed when the thread ends. */
struct fast_mem {
    struct kv_list attrs, res_kv;
    struct rec_vals *recs;
    size_t recs_cap;
    struct res_vals *res;
    size_t res_cap;
    struct buf scratch, text;
};

#define FAST_KEEP_BYTES (32u << 20)

static void mem_destroy(void *p)
{
    struct fast_mem *m = p;
    free(m->attrs.v);
    free(m->res_kv.v);
    free(m->recs);
    free(m->res);
    buf_destroy(&m->scratch);
    buf_destroy(&m->text);
}

static struct thread_keep mem_keep = THREAD_KEEP(sizeof(struct fast_mem), mem_destroy);

/* zeroed: empty lists and buffers */
static struct fast_mem *thread_mem(void)
{
    return thread_keep_get(&mem_keep);
}

/* Grows an array of cap items of size sz to at least want, not keeping
 * what it held. */
static void *at_least(void *v, size_t *cap, size_t want, size_t sz)
{
    if (*cap >= want)
        return v;
    free(v);
    *cap = want;
    return xmalloc(want * sz);
}

/* f's lists and buffers, empty: the thread's kept ones, sized from the
 * body's length so that they rarely grow by copies (a record takes 150
 * bytes or more as exporters write it, an attribute 50). */
static void fast_take(struct fast *f, size_t len)
{
    struct fast_mem *m = thread_mem();
    memset(f, 0, sizeof *f);
    f->attrs = m->attrs;
    f->res_kv = m->res_kv;
    f->recs = m->recs, f->recs_cap = m->recs_cap;
    f->res = m->res, f->res_cap = m->res_cap;
    f->scratch = m->scratch;
    f->text = m->text;
    memset(m, 0, sizeof *m);
    f->attrs.n = f->res_kv.n = 0;
    buf_reset(&f->scratch);
    buf_reset(&f->text);
    f->recs = at_least(f->recs, &f->recs_cap, room(len / 128), sizeof *f->recs);
    f->attrs.v = at_least(f->attrs.v, &f->attrs.cap, room(len / 48), sizeof *f->attrs.v);
    f->res = at_least(f->res, &f->res_cap, room(len / 256), sizeof *f->res);
}

/* Hands f's lists and buffers back to the thread (fast_take). */
static void fast_give(struct fast *f)
{
    size_t bytes = (f->attrs.cap + f->res_kv.cap) * sizeof(struct kv) +
                   f->recs_cap * sizeof *f->recs + f->res_cap * sizeof *f->res + f->scratch.cap +
                   f->text.cap;
    struct fast_mem keep = {f->attrs, f->res_kv,  f->recs,    f->recs_cap,
                            f->res,   f->res_cap, f->scratch, f->text};
    if (bytes > FAST_KEEP_BYTES)
        mem_destroy(&keep);
    else
        *thread_mem() = keep;
}

bool otlp_json_fast(struct otlp_dec *d, const char *body, size_t len)
{
    if (len >= UINT32_MAX / 2) /* the tape decoder refuses it */
        return false;
    struct fast f;
    fast_take(&f, len);
    jscan_init(&f.s, body, len, &f.scratch);
    bool ok = take(&f, '{'), first = true, seen = false;
    struct slice key;
    int rc = -1;
    while (ok && (rc = next_member(&f, &first, &key)) == 1)
        ok = slice_eq(key, slice_cstr("resourceLogs")) || slice_eq(key, slice_cstr("resource_logs"))
                 ? read_array(&f, 2, &seen, read_resource_logs)
                 : skip(&f, 2);
    ok = ok && rc == 0 && jscan_at_end(&f.s);
    size_t last_res = SIZE_MAX;
    for (size_t i = 0; ok && i < f.nrecs; i++) {
        if (f.recs[i].res != last_res) { /* a resourceLogs' first record */
            otlp_res_clear(d);
            last_res = f.recs[i].res;
        }
        apply(&f, d, &f.recs[i]);
    }
    fast_give(&f);
    return ok;
}
