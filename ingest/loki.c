/* Loki push: POST /loki/api/v1/push bodies, JSON or protobuf
 * (logproto.PushRequest), into events (ingest/logs.h).
 *
 *   JSON: {"streams":[{"stream":{"job":"api"},
 *                      "values":[["1700000000000000000","line",{"trace":"x"}]]}]}
 *   protobuf: PushRequest{1: repeated StreamAdapter}
 *             StreamAdapter{1: string labels, 2: repeated EntryAdapter}
 *             EntryAdapter{1: Timestamp, 2: string line,
 *                          3: repeated LabelPairAdapter structuredMetadata}
 *             Timestamp{1: int64 seconds, 2: int32 nanos}
 *             LabelPairAdapter{1: string name, 2: string value} */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/decimal.h"
#include "base/err.h"
#include "ingest/jtape.h"
#include "ingest/logs.h"
#include "ingest/pb.h"

struct loki_dec {
    const struct logs_opts *o;
    const struct logs_out *out; /* NULL: check only */
    struct buf *err;
    struct buf labels; /* the current stream's labels (loki_parse_labels) */
    struct logrow row;
    uint64_t no;                             /* entries so far */
    struct logs_names host_keys, event_keys; /* the map's lists, split once */
};

static void dec_init(struct loki_dec *d, const struct logs_opts *o, const struct logs_out *out,
                     struct buf *err)
{
    d->o = o;
    d->out = out;
    d->err = err;
    d->no = 0;
    buf_init(&d->labels);
    logrow_init(&d->row);
    logs_names_init(&d->host_keys, o->map.host_keys);
    logs_names_init(&d->event_keys, o->map.event_keys);
}

static void dec_destroy(struct loki_dec *d)
{
    buf_destroy(&d->labels);
    logrow_destroy(&d->row);
}

static int fail(struct loki_dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct loki_dec *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(d->err, fmt, ap);
    va_end(ap);
    return ERR_INVAL;
}

/* A label or metadata pair: host and event candidates by the map, the
 * rest tags. */
static void add_label(struct loki_dec *d, struct slice k, struct slice v)
{
    int rank = logs_names_rank(&d->host_keys, k);
    if (rank >= 0) {
        logrow_set_host(&d->row, v, rank);
        return;
    }
    rank = logs_names_rank(&d->event_keys, k);
    if (rank >= 0) {
        logrow_set_event(&d->row, v, rank);
        return;
    }
    logrow_tag(&d->row, k, v);
}

/* Starts an entry: the line as msg, then the stream's labels. */
static void entry_begin(struct loki_dec *d, struct slice line)
{
    logrow_reset(&d->row);
    logrow_str(&d->row, slice_cstr("msg"), line);
    if (!d->labels.len) /* no labels (and no buffer yet) */
        return;
    const char *p = d->labels.data, *end = p + d->labels.len;
    while (p < end) {
        uint32_t kn, vn;
        memcpy(&kn, p, 4);
        struct slice k = slice_make(p + 4, kn);
        p += 4 + kn;
        memcpy(&vn, p, 4);
        struct slice v = slice_make(p + 4, vn);
        p += 4 + vn;
        add_label(d, k, v);
    }
}

/* Metadata keys are tags only: they never name the host or event. */
static void entry_meta(struct loki_dec *d, struct slice k, struct slice v)
{
    logrow_tag(&d->row, k, v);
}

static void entry_end(struct loki_dec *d, int64_t ts)
{
    struct event ev;
    memset(&ev, 0, sizeof ev);
    const char *why = logrow_event(&d->row, &d->o->lim, d->o->map.default_event, &ev);
    if (why) {
        d->out->reject(d->out->arg, d->no, why);
        return;
    }
    ev.ts = ts;
    ev.has_ts = true;
    d->out->row(d->out->arg, d->no, &ev);
}

/* --- JSON ---------------------------------------------------------------- */

static bool parse_ns(struct slice s, int64_t *out)
{
    return dec_i64(s.ptr, s.len, out) == DEC_OK;
}

static int json_ts(struct loki_dec *d, const struct jtape *t, uint32_t i, int64_t *ts)
{
    if (jt_int(t, i, ts))
        return ERR_OK;
    if (jt_is(t, i, JT_STR) && parse_ns(jt_str(t, i), ts))
        return ERR_OK;
    return fail(d, "%s", "entry timestamp must be a string of nanoseconds since the epoch");
}

static int json_meta(struct loki_dec *d, const struct jtape *t, uint32_t m)
{
    if (jt_is(t, m, JT_NULL))
        return ERR_OK;
    if (!jt_is(t, m, JT_OBJ))
        return fail(d, "%s", "structured metadata must be an object of strings");
    JT_MEMBERS(t, m, k)
    {
        if (!jt_is(t, k + 1, JT_STR))
            return fail(d, "structured metadata %.*s must be a string", (int)t->n[k].len,
                        jt_ptr(t, k));
        if (d->out)
            entry_meta(d, jt_str(t, k), jt_str(t, k + 1));
    }
    return ERR_OK;
}

static int json_entry(struct loki_dec *d, const struct jtape *t, uint32_t e)
{
    size_t n = jt_count(t, e);
    if (!jt_is(t, e, JT_ARR) || n < 2 || n > 3)
        return fail(d, "%s", "an entry must be [\"<ns>\", \"<line>\"] or with metadata as third");
    uint32_t ts_node = e + 1, line = t->n[ts_node].end;
    int64_t ts = 0;
    int rc = json_ts(d, t, ts_node, &ts);
    if (rc)
        return rc;
    if (!jt_is(t, line, JT_STR))
        return fail(d, "%s", "entry line must be a string");
    d->no++;
    if (d->out)
        entry_begin(d, jt_str(t, line));
    if (n == 3 && (rc = json_meta(d, t, t->n[line].end)))
        return rc;
    if (d->out)
        entry_end(d, ts);
    return ERR_OK;
}

static void put_label(struct buf *b, struct slice k, struct slice v)
{
    uint32_t kn = (uint32_t)k.len, vn = (uint32_t)v.len;
    buf_append(b, &kn, 4);
    buf_append(b, k.ptr, kn);
    buf_append(b, &vn, 4);
    buf_append(b, v.ptr, vn);
}

static int json_labels(struct loki_dec *d, const struct jtape *t, uint32_t s)
{
    buf_reset(&d->labels);
    uint32_t st = jt_get(t, s, "stream");
    if (!st || jt_is(t, st, JT_NULL)) {
        uint32_t l = jt_get(t, s, "labels"); /* the older form: a string */
        if (!l)
            return ERR_OK;
        if (!jt_is(t, l, JT_STR))
            return fail(d, "%s", "stream labels must be a string");
        const char *why = loki_parse_labels(jt_ptr(t, l), t->n[l].len, &d->labels);
        return why ? fail(d, "bad stream labels: %s", why) : ERR_OK;
    }
    if (!jt_is(t, st, JT_OBJ))
        return fail(d, "%s", "stream must be an object of label strings");
    JT_MEMBERS(t, st, k)
    {
        if (!jt_is(t, k + 1, JT_STR))
            return fail(d, "stream label %.*s must be a string", (int)t->n[k].len, jt_ptr(t, k));
        put_label(&d->labels, jt_str(t, k), jt_str(t, k + 1));
    }
    return ERR_OK;
}

static int json_stream(struct loki_dec *d, const struct jtape *t, uint32_t s)
{
    if (!jt_is(t, s, JT_OBJ))
        return fail(d, "%s", "each stream must be an object");
    int rc = json_labels(d, t, s);
    if (rc)
        return rc;
    uint32_t vals = jt_get(t, s, "values");
    if (!vals || jt_is(t, vals, JT_NULL))
        vals = jt_get(t, s, "entries");
    if (!jt_is(t, vals, JT_ARR))
        return fail(d, "%s", "stream values must be an array of entries");
    JT_EACH(t, vals, e)
    {
        if ((rc = json_entry(d, t, e)))
            return rc;
    }
    return ERR_OK;
}

static int each_stream(void *arg, const struct jtape *t)
{
    return json_stream(arg, t, 1);
}

/* The body is read one stream at a time (jt_doc_array), as OTLP/JSON's:
 * the tape stays in the cache. A stream's mapping error stops the decoding
 * but not the reading: a later JSON syntax error is what the client is
 * told. owned: the body buffer, taken. */
static int decode(const char *body, size_t len, struct buf *owned, const struct logs_opts *o,
                  const struct logs_out *out, struct buf *err)
{
    struct loki_dec d;
    dec_init(&d, o, out, err);
    bool is_obj;
    enum jt_found found;
    int mapped, rc = jt_doc_read_array(body, len, owned, "streams", NULL, each_stream, &d, &is_obj,
                                       &found, &mapped, err);
    if (!rc && found != JT_FOUND_ARRAY && !mapped)
        mapped = fail(&d, "%s", "body must be an object with a \"streams\" array");
    dec_destroy(&d);
    return rc ? rc : mapped;
}

int loki_decode_json(const char *body, size_t len, const struct logs_opts *o,
                     const struct logs_out *out, struct buf *err)
{
    return decode(body, len, NULL, o, out, err);
}

int loki_decode_json_buf(struct buf *body, const struct logs_opts *o, const struct logs_out *out,
                         struct buf *err)
{
    return decode(NULL, 0, body, o, out, err);
}

/* --- protobuf ------------------------------------------------------------ */

static int pb_fail(struct loki_dec *d, const char *where, const struct pb_reader *r)
{
    buf_printf(d->err, "bad protobuf in %s: %s", where, r->error);
    return ERR_INVAL;
}

static int wrong_wire(struct loki_dec *d, const char *field)
{
    return fail(d, "bad protobuf: wrong wire type for %s", field);
}

static int pb_timestamp(struct loki_dec *d, struct slice s, int64_t *ts)
{
    struct pb_reader r;
    struct pb_field f;
    int64_t sec = 0, nanos = 0;
    int rc;
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num == 1 || f.num == 2) {
            if (f.wire != PB_VARINT)
                return wrong_wire(d, "Timestamp");
            if (f.num == 1)
                sec = (int64_t)f.v;
            else
                nanos = (int64_t)(int32_t)f.v;
        }
    }
    if (rc < 0)
        return pb_fail(d, "Timestamp", &r);
    if (nanos < 0 || nanos > 999999999 || __builtin_mul_overflow(sec, 1000000000, ts) ||
        __builtin_add_overflow(*ts, nanos, ts))
        return fail(d, "%s", "entry timestamp out of range");
    return ERR_OK;
}

static int pb_pair(struct loki_dec *d, struct slice s, struct slice *k, struct slice *v)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    *k = *v = slice_make("", 0);
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num != 1 && f.num != 2)
            continue;
        if (f.wire != PB_LEN)
            return wrong_wire(d, "LabelPairAdapter");
        *(f.num == 1 ? k : v) = f.s;
    }
    return rc < 0 ? pb_fail(d, "LabelPairAdapter", &r) : ERR_OK;
}

static int pb_entry(struct loki_dec *d, struct slice s)
{
    struct pb_reader r;
    struct pb_field f;
    struct slice line = slice_make("", 0);
    int64_t ts = 0;
    int rc;
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num < 1 || f.num > 3)
            continue;
        if (f.wire != PB_LEN)
            return wrong_wire(d, "EntryAdapter");
        if (f.num == 1 && (rc = pb_timestamp(d, f.s, &ts)))
            return rc;
        if (f.num == 2)
            line = f.s;
    }
    if (rc < 0)
        return pb_fail(d, "EntryAdapter", &r);
    d->no++;
    if (d->out)
        entry_begin(d, line);
    pb_init(&r, s.ptr, s.len);
    while (pb_next(&r, &f) == 1) {
        struct slice k, v;
        if (f.num != 3)
            continue;
        if ((rc = pb_pair(d, f.s, &k, &v)))
            return rc;
        if (d->out)
            entry_meta(d, k, v);
    }
    if (d->out)
        entry_end(d, ts);
    return ERR_OK;
}

/* The labels first (protobuf fields may come in any order), then the
 * entries. */
static int pb_stream(struct loki_dec *d, struct slice s)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    buf_reset(&d->labels);
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num != 1 && f.num != 2)
            continue;
        if (f.wire != PB_LEN)
            return wrong_wire(d, "StreamAdapter");
        if (f.num == 1) {
            buf_reset(&d->labels);
            const char *why = loki_parse_labels(f.s.ptr, f.s.len, &d->labels);
            if (why)
                return fail(d, "bad stream labels: %s", why);
        }
    }
    if (rc < 0)
        return pb_fail(d, "StreamAdapter", &r);
    pb_init(&r, s.ptr, s.len);
    while (pb_next(&r, &f) == 1)
        if (f.num == 2 && (rc = pb_entry(d, f.s)))
            return rc;
    return ERR_OK;
}

int loki_decode_proto(const char *body, size_t len, const struct logs_opts *o,
                      const struct logs_out *out, struct buf *err)
{
    struct loki_dec d;
    dec_init(&d, o, out, err);
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_init(&r, body, len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num != 1)
            continue;
        if (f.wire != PB_LEN) {
            rc = wrong_wire(&d, "PushRequest.streams");
            break;
        }
        if ((rc = pb_stream(&d, f.s)))
            break;
    }
    if (rc < 0 && rc != ERR_INVAL)
        rc = pb_fail(&d, "PushRequest", &r);
    dec_destroy(&d);
    return rc < 0 ? rc : ERR_OK;
}
