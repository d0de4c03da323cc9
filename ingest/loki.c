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
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "ingest/logs.h"
#include "ingest/pb.h"

struct loki_dec {
    const struct logs_opts *o;
    const struct logs_out *out; /* NULL: check only */
    struct buf *err;
    struct buf labels; /* the current stream's labels (loki_parse_labels) */
    struct logrow row;
    uint64_t no; /* entries so far */
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
    int rank = logs_map_rank(d->o->map.host_keys, k);
    if (rank >= 0) {
        logrow_set_host(&d->row, v, rank);
        return;
    }
    rank = logs_map_rank(d->o->map.event_keys, k);
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

static bool parse_ns(const char *s, size_t n, int64_t *out)
{
    bool neg = n && s[0] == '-';
    size_t i = neg;
    if (i == n || n - i > 19)
        return false;
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
            return false;
    }
    *out = neg ? -v : v;
    return true;
}

static int json_ts(struct loki_dec *d, const json_t *t, int64_t *ts)
{
    if (json_is_integer(t)) {
        *ts = (int64_t)json_integer_value(t);
        return ERR_OK;
    }
    if (json_is_string(t) && parse_ns(json_string_value(t), json_string_length(t), ts))
        return ERR_OK;
    return fail(d, "%s", "entry timestamp must be a string of nanoseconds since the epoch");
}

static int json_meta(struct loki_dec *d, const json_t *m)
{
    if (json_is_null(m))
        return ERR_OK;
    if (!json_is_object(m))
        return fail(d, "%s", "structured metadata must be an object of strings");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v)
    {
        if (!json_is_string(v))
            return fail(d, "structured metadata %s must be a string", k);
        if (d->out)
            entry_meta(d, slice_cstr(k), slice_make(json_string_value(v), json_string_length(v)));
    }
    return ERR_OK;
}

static int json_entry(struct loki_dec *d, const json_t *e)
{
    size_t n = json_array_size(e);
    if (!json_is_array(e) || n < 2 || n > 3)
        return fail(d, "%s", "an entry must be [\"<ns>\", \"<line>\"] or with metadata as third");
    int64_t ts = 0;
    int rc = json_ts(d, json_array_get(e, 0), &ts);
    if (rc)
        return rc;
    const json_t *line = json_array_get(e, 1);
    if (!json_is_string(line))
        return fail(d, "%s", "entry line must be a string");
    d->no++;
    if (d->out)
        entry_begin(d, slice_make(json_string_value(line), json_string_length(line)));
    if (n == 3 && (rc = json_meta(d, json_array_get(e, 2))))
        return rc;
    if (d->out)
        entry_end(d, ts);
    return ERR_OK;
}

static int json_labels(struct loki_dec *d, const json_t *s)
{
    buf_reset(&d->labels);
    const json_t *st = json_object_get(s, "stream");
    if (!st || json_is_null(st)) {
        const json_t *l = json_object_get(s, "labels"); /* the older form: a string */
        if (!l)
            return ERR_OK;
        if (!json_is_string(l))
            return fail(d, "%s", "stream labels must be a string");
        const char *why =
            loki_parse_labels(json_string_value(l), json_string_length(l), &d->labels);
        return why ? fail(d, "bad stream labels: %s", why) : ERR_OK;
    }
    if (!json_is_object(st))
        return fail(d, "%s", "stream must be an object of label strings");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)st, k, v)
    {
        if (!json_is_string(v))
            return fail(d, "stream label %s must be a string", k);
        uint32_t kn = (uint32_t)strlen(k), vn = (uint32_t)json_string_length(v);
        buf_append(&d->labels, &kn, 4);
        buf_append(&d->labels, k, kn);
        buf_append(&d->labels, &vn, 4);
        buf_append(&d->labels, json_string_value(v), vn);
    }
    return ERR_OK;
}

static int json_stream(struct loki_dec *d, const json_t *s)
{
    if (!json_is_object(s))
        return fail(d, "%s", "each stream must be an object");
    int rc = json_labels(d, s);
    if (rc)
        return rc;
    const json_t *vals = json_object_get(s, "values");
    if (!vals || json_is_null(vals))
        vals = json_object_get(s, "entries");
    if (!json_is_array(vals))
        return fail(d, "%s", "stream values must be an array of entries");
    size_t i;
    json_t *e;
    json_array_foreach(vals, i, e) if ((rc = json_entry(d, e))) return rc;
    return ERR_OK;
}

static int json_walk(struct loki_dec *d, const json_t *root)
{
    const json_t *streams = json_is_object(root) ? json_object_get(root, "streams") : NULL;
    if (!json_is_array(streams))
        return fail(d, "%s", "body must be an object with a \"streams\" array");
    size_t i;
    json_t *s;
    json_array_foreach(streams, i, s)
    {
        int rc = json_stream(d, s);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

int loki_decode_json(const char *body, size_t len, const struct logs_opts *o,
                     const struct logs_out *out, struct buf *err)
{
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!root) {
        buf_printf(err, "bad JSON at line %d column %d: %s", je.line, je.column, je.text);
        return ERR_INVAL;
    }
    struct loki_dec d;
    dec_init(&d, o, out, err);
    int rc = json_walk(&d, root);
    dec_destroy(&d);
    json_decref(root);
    return rc;
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
