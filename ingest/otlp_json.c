/* OpenTelemetry logs as OTLP/JSON (the protobuf JSON mapping with OTLP's
 * exceptions): camelCase names (the proto names are accepted too), 64-bit
 * integers as strings or numbers, trace and span ids as hex strings, bytes
 * values as base64, enums as numbers or names.
 *
 *   {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name",
 *     "value":{"stringValue":"api"}}]},
 *     "scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000",
 *       "severityText":"INFO","body":{"stringValue":"hi"},
 *       "attributes":[...],"traceId":"5b8e...","spanId":"eee1..."}]}]}]} */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/err.h"
#include "base/json.h"
#include "ingest/jtape.h"
#include "ingest/otlp_int.h"
#include "ingest/pb.h"

static atomic_bool tape_only;           /* otlp_json_test_tape_only */
static atomic_uint_fast64_t one_passes; /* otlp_json_test_one_passes */

void otlp_json_test_tape_only(bool on)
{
    atomic_store(&tape_only, on);
}

uint64_t otlp_json_test_one_passes(void)
{
    return atomic_load(&one_passes);
}

/* A member by its camelCase or proto name; null counts as absent. Inline:
 * the names are literals, their lengths known. */
static inline __attribute__((always_inline)) uint32_t member(const struct jtape *t, uint32_t o,
                                                             const char *camel, const char *snake)
{
    uint32_t v = jt_get(t, o, camel);
    if (!v && snake)
        v = jt_get(t, o, snake);
    return jt_is(t, v, JT_NULL) ? 0 : v;
}

/* An array member (absent: 0; another type: an error). */
static inline __attribute__((always_inline)) int array_member(struct otlp_dec *d,
                                                              const struct jtape *t, uint32_t o,
                                                              const char *camel, const char *snake,
                                                              uint32_t *out)
{
    *out = member(t, o, camel, snake);
    if (*out && !jt_is(t, *out, JT_ARR))
        return otlp_fail(d, "%s must be an array", camel);
    return ERR_OK;
}

static bool parse_u64(struct slice s, uint64_t *out)
{
    return dec_u64(s.ptr, s.len, out) == DEC_OK;
}

/* An int64 (is_signed) or uint64 as a number or a decimal string. */
static int json_int(struct otlp_dec *d, const struct jtape *t, uint32_t v, const char *what,
                    bool is_signed, uint64_t *out)
{
    int64_t i;
    if (jt_is(t, v, JT_NUM) && jt_int(t, v, &i)) {
        if (!is_signed && i < 0)
            return otlp_fail(d, "%s must not be negative", what);
        *out = (uint64_t)i;
        return ERR_OK;
    }
    if (jt_is(t, v, JT_NUM) && !is_signed && t->n[v].is_int && parse_u64(jt_str(t, v), out))
        return ERR_OK;
    if (jt_is(t, v, JT_STR)) {
        struct slice s = jt_str(t, v);
        bool neg = is_signed && s.len && s.ptr[0] == '-';
        uint64_t u;
        if (parse_u64(slice_make(s.ptr + neg, s.len - neg), &u) &&
            (!is_signed || u <= (uint64_t)INT64_MAX + neg)) {
            *out = neg ? (uint64_t)0 - u : u;
            return ERR_OK;
        }
    }
    return otlp_fail(d, "%s must be an integer or a string of digits", what);
}

static bool str_is(const struct jtape *t, uint32_t v, const char *w)
{
    return jt_is(t, v, JT_STR) && t->n[v].len == strlen(w) &&
           memcmp(jt_ptr(t, v), w, t->n[v].len) == 0;
}

static int json_double(struct otlp_dec *d, const struct jtape *t, uint32_t v, double *out)
{
    if (jt_double(t, v, out))
        return ERR_OK;
    if (str_is(t, v, "NaN") || str_is(t, v, "Infinity") || str_is(t, v, "-Infinity")) {
        char c = jt_ptr(t, v)[0];
        *out = c == 'N' ? __builtin_nan("") : c == '-' ? -__builtin_inf() : __builtin_inf();
        return ERR_OK;
    }
    return otlp_fail(d, "%s", "doubleValue must be a number");
}

static int render(struct otlp_dec *d, const struct jtape *t, struct buf *out, uint32_t any,
                  int depth);

static int render_list(struct otlp_dec *d, const struct jtape *t, struct buf *out, uint32_t list,
                       int depth, bool is_kv)
{
    if (!jt_is(t, list, JT_OBJ))
        return otlp_fail(d, "%s must be an object", is_kv ? "kvlistValue" : "arrayValue");
    uint32_t vals;
    int rc = array_member(d, t, list, "values", NULL, &vals);
    if (rc)
        return rc;
    buf_putc(out, is_kv ? '{' : '[');
    bool first = true;
    if (vals)
        JT_EACH(t, vals, v)
        {
            if (!first)
                buf_putc(out, ',');
            first = false;
            uint32_t val = v;
            if (is_kv) {
                uint32_t k = jt_get(t, v, "key");
                if (!jt_is(t, k, JT_STR))
                    return otlp_fail(d, "%s", "a KeyValue needs a string key");
                json_str(out, jt_ptr(t, k), t->n[k].len);
                buf_putc(out, ':');
                val = member(t, v, "value", NULL);
                if (!val) {
                    buf_puts(out, "null");
                    continue;
                }
            }
            if ((rc = render(d, t, out, val, depth + 1)))
                return rc;
        }
    buf_putc(out, is_kv ? '}' : ']');
    return ERR_OK;
}

/* The member of an AnyValue object: its name index (otlp_json_any_name),
 * -1 when empty, -2 on an error. */
static int any_member(struct otlp_dec *d, const struct jtape *t, uint32_t any, uint32_t *val)
{
    if (!jt_is(t, any, JT_OBJ)) {
        otlp_fail(d, "%s", "an AnyValue must be an object");
        return -2;
    }
    /* one pass over the members (a oneof has one) */
    JT_MEMBERS(t, any, k)
    {
        if (jt_is(t, k + 1, JT_NULL))
            continue;
        int i = otlp_json_any_name(jt_str(t, k));
        if (i >= 0) {
            *val = k + 1;
            return i;
        }
    }
    return -1;
}

static int check_type(struct otlp_dec *d, const struct jtape *t, int m, uint32_t v)
{
    bool ok = m == 0 || m == 6 ? jt_is(t, v, JT_STR)
              : m == 1         ? jt_is(t, v, JT_TRUE) || jt_is(t, v, JT_FALSE)
                               : true;
    return ok ? ERR_OK
              : otlp_fail(d, "%s has the wrong JSON type", m == 1 ? "boolValue" : "a string value");
}

static int render(struct otlp_dec *d, const struct jtape *t, struct buf *out, uint32_t any,
                  int depth)
{
    if (depth > PB_MAX_DEPTH)
        return otlp_fail(d, "%s", "AnyValue nested too deep");
    uint32_t v = 0;
    int m = any_member(d, t, any, &v);
    if (m < -1 || (m >= 0 && check_type(d, t, m, v)))
        return ERR_INVAL;
    uint64_t u;
    double f;
    switch (m) {
    case 0:
    case 6: json_str(out, jt_ptr(t, v), t->n[v].len); break;
    case 1: buf_puts(out, jt_is(t, v, JT_TRUE) ? "true" : "false"); break;
    case 2:
        if (json_int(d, t, v, "intValue", true, &u))
            return ERR_INVAL;
        buf_printf(out, "%" PRId64, (int64_t)u);
        break;
    case 3:
        if (json_double(d, t, v, &f))
            return ERR_INVAL;
        otlp_json_double(out, f);
        break;
    case 4: return render_list(d, t, out, v, depth, false);
    case 5: return render_list(d, t, out, v, depth, true);
    default: buf_puts(out, "null"); break;
    }
    return ERR_OK;
}

static int any_attr(struct otlp_dec *d, const struct jtape *t, uint32_t any, struct otlp_attr *a)
{
    uint32_t v = 0;
    int m = any_member(d, t, any, &v);
    if (m < -1 || (m >= 0 && check_type(d, t, m, v)))
        return ERR_INVAL;
    memset(a, 0, sizeof *a);
    uint64_t u;
    switch (m) {
    case 0:
    case 6:
        a->kind = OTLP_STRING;
        a->s = jt_str(t, v);
        return ERR_OK;
    case 1:
        a->kind = OTLP_BOOL;
        a->b = jt_is(t, v, JT_TRUE);
        return ERR_OK;
    case 2:
        if (json_int(d, t, v, "intValue", true, &u))
            return ERR_INVAL;
        a->kind = OTLP_INT;
        a->i = (int64_t)u;
        return ERR_OK;
    case 3: a->kind = OTLP_DOUBLE; return json_double(d, t, v, &a->f);
    case 4:
    case 5:
        buf_reset(&d->scratch);
        if (render(d, t, &d->scratch, any, 1))
            return ERR_INVAL;
        a->kind = OTLP_TEXT;
        a->s = slice_make(d->scratch.data, d->scratch.len);
        return ERR_OK;
    default: return ERR_OK;
    }
}

/* The "key" and "value" of a KeyValue object, in one pass (the first of
 * each, as jt_get finds them; a null value counts as absent). */
static void kv_members(const struct jtape *t, uint32_t kv, uint32_t *k, uint32_t *v)
{
    if (!jt_is(t, kv, JT_OBJ))
        return;
    JT_MEMBERS(t, kv, m)
    {
        struct slice name = jt_str(t, m);
        if (name.len == 3 && !*k && memcmp(name.ptr, "key", 3) == 0)
            *k = m + 1;
        else if (name.len == 5 && !*v && memcmp(name.ptr, "value", 5) == 0)
            *v = jt_is(t, m + 1, JT_NULL) ? UINT32_MAX : m + 1;
    }
    if (*v == UINT32_MAX)
        *v = 0;
}

static int add_attr_list(struct otlp_dec *d, const struct jtape *t, uint32_t attrs,
                         bool is_resource)
{
    int rc;
    JT_EACH(t, attrs, kv)
    {
        uint32_t k = 0, v = 0;
        kv_members(t, kv, &k, &v);
        if (!jt_is(t, k, JT_STR))
            return otlp_fail(d, "%s", "an attribute needs a string key");
        struct otlp_attr a;
        if (!v)
            continue;
        if ((rc = any_attr(d, t, v, &a)))
            return rc;
        if (is_resource)
            otlp_res_attr(d, jt_str(t, k), &a);
        else
            otlp_add_attr(d, jt_str(t, k), &a, false);
    }
    return ERR_OK;
}

static int add_attrs(struct otlp_dec *d, const struct jtape *t, uint32_t owner, bool is_resource)
{
    uint32_t attrs;
    int rc = array_member(d, t, owner, "attributes", NULL, &attrs);
    if (rc || !attrs)
        return rc;
    return add_attr_list(d, t, attrs, is_resource);
}

static int add_body(struct otlp_dec *d, const struct jtape *t, uint32_t body)
{
    struct slice msg = slice_make("", 0);
    uint32_t v = 0;
    buf_reset(&d->scratch);
    if (body) {
        int m = any_member(d, t, body, &v);
        if (m < -1)
            return ERR_INVAL;
        if (m == 0 && jt_is(t, v, JT_STR))
            msg = jt_str(t, v);
        else if (render(d, t, &d->scratch, body, 1))
            return ERR_INVAL;
        else
            msg = slice_make(d->scratch.data ? d->scratch.data : "", d->scratch.len);
    }
    logrow_str(&d->row, slice_cstr("msg"), msg);
    return ERR_OK;
}

static int severity(struct otlp_dec *d, const struct jtape *t, uint32_t s, uint32_t n)
{
    if (s && !jt_is(t, s, JT_STR))
        return otlp_fail(d, "%s", "severityText must be a string");
    if (s && t->n[s].len) {
        otlp_json_level(d, jt_str(t, s), 0);
        return ERR_OK;
    }
    int64_t num = 0;
    if (jt_is(t, n, JT_NUM)) {
        if (!jt_int(t, n, &num))
            return otlp_fail(d, "%s", "severityNumber must be an integer");
    } else if (n && !(jt_is(t, n, JT_STR) && otlp_json_severity_enum(jt_str(t, n), &num))) {
        return otlp_fail(d, "%s", "severityNumber must be a number or a SEVERITY_NUMBER_ name");
    }
    otlp_json_level(d, slice_make("", 0), num);
    return ERR_OK;
}

static int add_id(struct otlp_dec *d, const struct jtape *t, uint32_t v, const char *camel,
                  const char *key)
{
    if (!v)
        return ERR_OK;
    if (!jt_is(t, v, JT_STR))
        return otlp_fail(d, "%s must be a hex string", camel);
    otlp_json_add_id(d, jt_str(t, v), key);
    return ERR_OK;
}

/* The first non-null member of each name (either spelling). */
static void record_members(const struct jtape *t, uint32_t rec, uint32_t *m)
{
    memset(m, 0, OTLP_R_COUNT * sizeof *m);
    JT_MEMBERS(t, rec, k)
    {
        if (jt_is(t, k + 1, JT_NULL))
            continue;
        int i = otlp_json_record_name(jt_str(t, k));
        if (i >= 0 && !m[i])
            m[i] = k + 1;
    }
}

static int record(struct otlp_dec *d, const struct jtape *t, uint32_t rec, uint32_t resource)
{
    if (!jt_is(t, rec, JT_OBJ))
        return otlp_fail(d, "%s", "each logRecord must be an object");
    d->no++;
    d->rec_error = NULL;
    logrow_reset(&d->row);
    uint32_t m[OTLP_R_COUNT];
    record_members(t, rec, m);
    uint64_t tm = 0, obs = 0;
    int rc;
    if ((m[OTLP_R_TIME] && (rc = json_int(d, t, m[OTLP_R_TIME], "timeUnixNano", false, &tm))) ||
        (m[OTLP_R_OBSERVED] &&
         (rc = json_int(d, t, m[OTLP_R_OBSERVED], "observedTimeUnixNano", false, &obs))) ||
        (rc = add_body(d, t, m[OTLP_R_BODY])) ||
        (rc = severity(d, t, m[OTLP_R_SEVTEXT], m[OTLP_R_SEVNUM])) ||
        (rc = add_id(d, t, m[OTLP_R_TRACE], "traceId", "trace_id")) ||
        (rc = add_id(d, t, m[OTLP_R_SPAN], "spanId", "span_id")))
        return rc;
    if (m[OTLP_R_ATTRS] && !jt_is(t, m[OTLP_R_ATTRS], JT_ARR))
        return otlp_fail(d, "%s", "attributes must be an array");
    if ((m[OTLP_R_ATTRS] && (rc = add_attr_list(d, t, m[OTLP_R_ATTRS], false))) ||
        (resource && otlp_res_decode(d) && (rc = add_attrs(d, t, resource, true))))
        return rc;
    otlp_res_done(d);
    if (d->out)
        otlp_end_record(d, tm, obs);
    return ERR_OK;
}

static int scope_logs(struct otlp_dec *d, const struct jtape *t, uint32_t sl, uint32_t resource)
{
    if (!jt_is(t, sl, JT_OBJ))
        return otlp_fail(d, "%s", "each scopeLogs must be an object");
    uint32_t recs;
    int rc = array_member(d, t, sl, "logRecords", "log_records", &recs);
    if (rc || !recs)
        return rc;
    JT_EACH(t, recs, rec)
    {
        if ((rc = record(d, t, rec, resource)))
            return rc;
    }
    return ERR_OK;
}

static int resource_logs(struct otlp_dec *d, const struct jtape *t, uint32_t rl)
{
    if (!jt_is(t, rl, JT_OBJ))
        return otlp_fail(d, "%s", "each resourceLogs must be an object");
    uint32_t res = member(t, rl, "resource", NULL);
    if (res && !jt_is(t, res, JT_OBJ))
        return otlp_fail(d, "%s", "resource must be an object");
    otlp_res_clear(d);
    uint32_t scopes;
    int rc = array_member(d, t, rl, "scopeLogs", "scope_logs", &scopes);
    if (rc || !scopes)
        return rc;
    JT_EACH(t, scopes, sl)
    {
        if ((rc = scope_logs(d, t, sl, res)))
            return rc;
    }
    return ERR_OK;
}

static int each_resource(void *arg, const struct jtape *t)
{
    return resource_logs(arg, t, 1);
}

/* otlp_json_fast on the body, padded as it wants: the owned buffer in
 * place, else a copy. */
static bool one_pass(struct otlp_dec *d, const char *body, size_t len, struct buf *owned)
{
    if (owned) {
        buf_reserve(owned, OTLP_JSON_PAD + 1);
        memset(owned->data + owned->len, 0, OTLP_JSON_PAD + 1);
        return otlp_json_fast(d, owned->data, owned->len);
    }
    struct buf copy = BUF_INIT;
    buf_reserve(&copy, len + OTLP_JSON_PAD + 1);
    if (len)
        memcpy(copy.data, body, len);
    memset(copy.data + len, 0, OTLP_JSON_PAD + 1);
    bool ok = otlp_json_fast(d, copy.data, len);
    buf_destroy(&copy);
    return ok;
}

/* A body is first read in one pass (otlp_jscan.c, when rows are wanted);
 * what that pass does not take is decoded here, from the start. Here the
 * body is read one resourceLogs element at a time (jt_doc_array): the
 * tape stays in the cache. A record's problem in the mapping stops the
 * decoding but not the reading: a JSON syntax error later in the body is
 * what the client is told, as when the whole body was parsed first. A body
 * with both names (the same field twice, which protobuf's own parser
 * refuses) gets the first of them. owned: the body buffer, taken. */
static int decode(const char *body, size_t len, struct buf *owned, const struct logs_opts *o,
                  const struct logs_out *out, struct buf *err)
{
    struct otlp_dec d;
    otlp_dec_init(&d, o, out, err);
    d.row.utf8_checked = true; /* both parsers check every string */
    if (out && !atomic_load(&tape_only) && one_pass(&d, body, len, owned)) {
        atomic_fetch_add_explicit(&one_passes, 1, memory_order_relaxed);
        otlp_dec_destroy(&d);
        return ERR_OK;
    }
    bool is_obj;
    enum jt_found found;
    int mapped, rc = jt_doc_read_array(body, len, owned, "resourceLogs", "resource_logs",
                                       each_resource, &d, &is_obj, &found, &mapped, err);
    if (!rc && !is_obj)
        mapped = otlp_fail(&d, "%s", "body must be a JSON object");
    else if (!rc && found == JT_FOUND_OTHER && !mapped)
        mapped = otlp_fail(&d, "%s must be an array", "resourceLogs");
    otlp_dec_destroy(&d);
    return rc ? rc : mapped;
}

int otlp_decode_json(const char *body, size_t len, const struct logs_opts *o,
                     const struct logs_out *out, struct buf *err)
{
    return decode(body, len, NULL, o, out, err);
}

int otlp_decode_json_buf(struct buf *body, const struct logs_opts *o, const struct logs_out *out,
                         struct buf *err)
{
    return decode(NULL, 0, body, o, out, err);
}
