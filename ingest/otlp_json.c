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
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "ingest/otlp_int.h"
#include "ingest/pb.h"

/* A member by its camelCase or proto name. */
static json_t *member(const json_t *o, const char *camel, const char *snake)
{
    json_t *v = json_object_get(o, camel);
    if (!v && snake)
        v = json_object_get(o, snake);
    return json_is_null(v) ? NULL : v;
}

/* An array member (absent: NULL; another type: an error). */
static int array_member(struct otlp_dec *d, const json_t *o, const char *camel, const char *snake,
                        json_t **out)
{
    *out = member(o, camel, snake);
    if (*out && !json_is_array(*out))
        return otlp_fail(d, "%s must be an array", camel);
    return ERR_OK;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!*s || strlen(s) > 20)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || __builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
            return false;
    }
    *out = v;
    return true;
}

/* An int64 (is_signed) or uint64 as a number or a decimal string. */
static int json_int(struct otlp_dec *d, const json_t *v, const char *what, bool is_signed,
                    uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (!is_signed && i < 0)
            return otlp_fail(d, "%s must not be negative", what);
        *out = (uint64_t)i;
        return ERR_OK;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        bool neg = is_signed && *s == '-';
        uint64_t u;
        if (parse_u64(s + neg, &u) && (!is_signed || u <= (uint64_t)INT64_MAX + neg)) {
            *out = neg ? (uint64_t)0 - u : u;
            return ERR_OK;
        }
    }
    return otlp_fail(d, "%s must be an integer or a string of digits", what);
}

static int json_double(struct otlp_dec *d, const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return ERR_OK;
    }
    const char *s = json_string_value(v);
    if (s && (strcmp(s, "NaN") == 0 || strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0)) {
        *out = s[0] == 'N' ? __builtin_nan("") : s[0] == '-' ? -__builtin_inf() : __builtin_inf();
        return ERR_OK;
    }
    return otlp_fail(d, "%s", "doubleValue must be a number");
}

static int render(struct otlp_dec *d, struct buf *out, const json_t *any, int depth);

static int render_list(struct otlp_dec *d, struct buf *out, const json_t *list, int depth,
                       bool is_kv)
{
    if (!json_is_object(list))
        return otlp_fail(d, "%s must be an object", is_kv ? "kvlistValue" : "arrayValue");
    json_t *vals;
    int rc = array_member(d, list, "values", NULL, &vals);
    if (rc)
        return rc;
    buf_putc(out, is_kv ? '{' : '[');
    size_t i;
    json_t *v;
    json_array_foreach(vals, i, v)
    {
        if (i)
            buf_putc(out, ',');
        if (is_kv) {
            const json_t *k = json_is_object(v) ? json_object_get(v, "key") : NULL;
            if (!json_is_string(k))
                return otlp_fail(d, "%s", "a KeyValue needs a string key");
            json_str(out, json_string_value(k), json_string_length(k));
            buf_putc(out, ':');
            v = member(v, "value", NULL);
            if (!v) {
                buf_puts(out, "null");
                continue;
            }
        }
        if ((rc = render(d, out, v, depth + 1)))
            return rc;
    }
    buf_putc(out, is_kv ? '}' : ']');
    return ERR_OK;
}

/* The member of an AnyValue object: its name index 0..6 (string, bool,
 * int, double, array, kvlist, bytes) or -1 when empty. */
static int any_member(struct otlp_dec *d, const json_t *any, json_t **val)
{
    static const char *camel[] = {"stringValue", "boolValue",   "intValue",  "doubleValue",
                                  "arrayValue",  "kvlistValue", "bytesValue"};
    static const char *snake[] = {"string_value", "bool_value",   "int_value",  "double_value",
                                  "array_value",  "kvlist_value", "bytes_value"};
    if (!json_is_object(any))
        return otlp_fail(d, "%s", "an AnyValue must be an object");
    for (int i = 0; i < 7; i++) {
        json_t *v = member(any, camel[i], snake[i]);
        if (v) {
            *val = v;
            return i;
        }
    }
    return -1;
}

static int check_type(struct otlp_dec *d, int m, const json_t *v)
{
    bool ok = m == 0 || m == 6 ? json_is_string(v) : m == 1 ? json_is_boolean(v) : true;
    return ok ? ERR_OK
              : otlp_fail(d, "%s has the wrong JSON type", m == 1 ? "boolValue" : "a string value");
}

static int render(struct otlp_dec *d, struct buf *out, const json_t *any, int depth)
{
    if (depth > PB_MAX_DEPTH)
        return otlp_fail(d, "%s", "AnyValue nested too deep");
    json_t *v = NULL;
    int m = any_member(d, any, &v);
    if (m < -1 || (m >= 0 && check_type(d, m, v)))
        return ERR_INVAL;
    uint64_t u;
    double f;
    switch (m) {
    case 0: json_str(out, json_string_value(v), json_string_length(v)); break;
    case 1: buf_puts(out, json_is_true(v) ? "true" : "false"); break;
    case 2:
        if (json_int(d, v, "intValue", true, &u))
            return ERR_INVAL;
        buf_printf(out, "%" PRId64, (int64_t)u);
        break;
    case 3:
        if (json_double(d, v, &f))
            return ERR_INVAL;
        otlp_json_double(out, f);
        break;
    case 4: return render_list(d, out, v, depth, false);
    case 5: return render_list(d, out, v, depth, true);
    case 6: json_str(out, json_string_value(v), json_string_length(v)); break;
    default: buf_puts(out, "null"); break;
    }
    return ERR_OK;
}

static int any_attr(struct otlp_dec *d, const json_t *any, struct otlp_attr *a)
{
    json_t *v = NULL;
    int m = any_member(d, any, &v);
    if (m < -1 || (m >= 0 && check_type(d, m, v)))
        return ERR_INVAL;
    memset(a, 0, sizeof *a);
    uint64_t u;
    switch (m) {
    case 0:
    case 6:
        a->kind = OTLP_STRING;
        a->s = slice_make(json_string_value(v), json_string_length(v));
        return ERR_OK;
    case 1:
        a->kind = OTLP_BOOL;
        a->b = json_is_true(v);
        return ERR_OK;
    case 2:
        if (json_int(d, v, "intValue", true, &u))
            return ERR_INVAL;
        a->kind = OTLP_INT;
        a->i = (int64_t)u;
        return ERR_OK;
    case 3: a->kind = OTLP_DOUBLE; return json_double(d, v, &a->f);
    case 4:
    case 5:
        buf_reset(&d->scratch);
        if (render(d, &d->scratch, any, 1))
            return ERR_INVAL;
        a->kind = OTLP_TEXT;
        a->s = slice_make(d->scratch.data, d->scratch.len);
        return ERR_OK;
    default: return ERR_OK;
    }
}

static int add_attrs(struct otlp_dec *d, const json_t *owner, bool is_resource)
{
    json_t *attrs;
    int rc = array_member(d, owner, "attributes", NULL, &attrs);
    if (rc)
        return rc;
    size_t i;
    json_t *kv;
    json_array_foreach(attrs, i, kv)
    {
        const json_t *k = json_is_object(kv) ? json_object_get(kv, "key") : NULL;
        if (!json_is_string(k))
            return otlp_fail(d, "%s", "an attribute needs a string key");
        const json_t *v = member(kv, "value", NULL);
        struct otlp_attr a;
        if (!v)
            continue;
        if ((rc = any_attr(d, v, &a)))
            return rc;
        otlp_add_attr(d, slice_make(json_string_value(k), json_string_length(k)), &a, is_resource);
    }
    return ERR_OK;
}

static int add_body(struct otlp_dec *d, const json_t *rec)
{
    const json_t *body = member(rec, "body", NULL);
    struct slice msg = slice_make("", 0);
    json_t *v = NULL;
    buf_reset(&d->scratch);
    if (body) {
        int m = any_member(d, body, &v);
        if (m < -1)
            return ERR_INVAL;
        if (m == 0 && json_is_string(v))
            msg = slice_make(json_string_value(v), json_string_length(v));
        else if (render(d, &d->scratch, body, 1))
            return ERR_INVAL;
        else
            msg = slice_make(d->scratch.data ? d->scratch.data : "", d->scratch.len);
    }
    logrow_str(&d->row, slice_cstr("msg"), msg);
    return ERR_OK;
}

static int severity(struct otlp_dec *d, const json_t *rec)
{
    const json_t *t = member(rec, "severityText", "severity_text");
    if (t && !json_is_string(t))
        return otlp_fail(d, "%s", "severityText must be a string");
    if (t && json_string_length(t)) {
        logrow_tag(&d->row, slice_cstr("level"),
                   slice_make(json_string_value(t), json_string_length(t)));
        return ERR_OK;
    }
    const json_t *n = member(rec, "severityNumber", "severity_number");
    int64_t num = 0;
    if (json_is_integer(n))
        num = (int64_t)json_integer_value(n);
    else if (json_is_string(n) && strncmp(json_string_value(n), "SEVERITY_NUMBER_", 16) == 0) {
        const char *name = json_string_value(n) + 16;
        for (num = 24; num > 0 && strcmp(otlp_severity_name(num), name) != 0; num--)
            ;
    } else if (n)
        return otlp_fail(d, "%s", "severityNumber must be a number or a SEVERITY_NUMBER_ name");
    if (otlp_severity_name(num))
        logrow_tag(&d->row, slice_cstr("level"), slice_cstr(otlp_severity_name(num)));
    return ERR_OK;
}

static int add_id(struct otlp_dec *d, const json_t *rec, const char *camel, const char *snake,
                  const char *key)
{
    const json_t *v = member(rec, camel, snake);
    if (!v)
        return ERR_OK;
    if (!json_is_string(v))
        return otlp_fail(d, "%s must be a hex string", camel);
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (!n)
        return ERR_OK;
    size_t off = logrow_text_begin(&d->row);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'F')
            c = (char)(c - 'A' + 'a');
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) && !d->rec_error)
            d->rec_error = "trace or span id is not hex";
        buf_putc(&d->row.text, c);
    }
    logrow_str_from(&d->row, slice_cstr(key), off);
    return ERR_OK;
}

static int time_member(struct otlp_dec *d, const json_t *rec, const char *camel, const char *snake,
                       uint64_t *out)
{
    const json_t *v = member(rec, camel, snake);
    *out = 0;
    return v ? json_int(d, v, camel, false, out) : ERR_OK;
}

static int record(struct otlp_dec *d, const json_t *rec, const json_t *resource)
{
    if (!json_is_object(rec))
        return otlp_fail(d, "%s", "each logRecord must be an object");
    d->no++;
    d->rec_error = NULL;
    logrow_reset(&d->row);
    uint64_t t, obs;
    int rc;
    if ((rc = time_member(d, rec, "timeUnixNano", "time_unix_nano", &t)) ||
        (rc = time_member(d, rec, "observedTimeUnixNano", "observed_time_unix_nano", &obs)) ||
        (rc = add_body(d, rec)) || (rc = severity(d, rec)) ||
        (rc = add_id(d, rec, "traceId", "trace_id", "trace_id")) ||
        (rc = add_id(d, rec, "spanId", "span_id", "span_id")) || (rc = add_attrs(d, rec, false)))
        return rc;
    if (resource && (rc = add_attrs(d, resource, true)))
        return rc;
    if (d->out)
        otlp_end_record(d, t, obs);
    return ERR_OK;
}

static int scope_logs(struct otlp_dec *d, const json_t *sl, const json_t *resource)
{
    if (!json_is_object(sl))
        return otlp_fail(d, "%s", "each scopeLogs must be an object");
    json_t *recs;
    int rc = array_member(d, sl, "logRecords", "log_records", &recs);
    size_t i;
    json_t *rec;
    json_array_foreach(recs, i, rec) if (!rc) rc = record(d, rec, resource);
    return rc;
}

static int resource_logs(struct otlp_dec *d, const json_t *rl)
{
    if (!json_is_object(rl))
        return otlp_fail(d, "%s", "each resourceLogs must be an object");
    const json_t *res = member(rl, "resource", NULL);
    if (res && !json_is_object(res))
        return otlp_fail(d, "%s", "resource must be an object");
    json_t *scopes;
    int rc = array_member(d, rl, "scopeLogs", "scope_logs", &scopes);
    size_t i;
    json_t *sl;
    json_array_foreach(scopes, i, sl) if (!rc) rc = scope_logs(d, sl, res);
    return rc;
}

int otlp_decode_json(const char *body, size_t len, const struct logs_opts *o,
                     const struct logs_out *out, struct buf *err)
{
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!root) {
        buf_printf(err, "bad JSON at line %d column %d: %s", je.line, je.column, je.text);
        return ERR_INVAL;
    }
    struct otlp_dec d;
    otlp_dec_init(&d, o, out, err);
    json_t *rls = NULL;
    int rc = json_is_object(root) ? array_member(&d, root, "resourceLogs", "resource_logs", &rls)
                                  : otlp_fail(&d, "%s", "body must be a JSON object");
    size_t i;
    json_t *rl;
    json_array_foreach(rls, i, rl) if (!rc) rc = resource_logs(&d, rl);
    otlp_dec_destroy(&d);
    json_decref(root);
    return rc;
}
