/* OpenTelemetry logs as protobuf (opentelemetry-proto, collector/logs/v1):
 *
 *   ExportLogsServiceRequest{1: repeated ResourceLogs}
 *   ResourceLogs{1: Resource, 2: repeated ScopeLogs}
 *   Resource{1: repeated KeyValue attributes}
 *   ScopeLogs{1: InstrumentationScope, 2: repeated LogRecord}
 *   LogRecord{1: fixed64 time_unix_nano, 2: SeverityNumber, 3: string
 *             severity_text, 5: AnyValue body, 6: repeated KeyValue
 *             attributes, 8: fixed32 flags, 9: bytes trace_id, 10: bytes
 *             span_id, 11: fixed64 observed_time_unix_nano}
 *   KeyValue{1: string key, 2: AnyValue value}
 *   AnyValue{oneof 1: string, 2: bool, 3: int64, 4: double, 5: ArrayValue,
 *            6: KeyValueList, 7: bytes}
 *   ArrayValue{1: repeated AnyValue}  KeyValueList{1: repeated KeyValue} */
#include <inttypes.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "ingest/otlp_int.h"
#include "ingest/pb.h"

/* The checks of a message's known fields: wire type by field number (0:
 * unknown, skipped). */
static int check_wire(struct otlp_dec *d, const struct pb_field *f, const char *msg,
                      const signed char *wires, size_t n)
{
    if (f->num >= n || wires[f->num] < 0)
        return ERR_OK;
    if ((int)f->wire == wires[f->num])
        return ERR_OK;
    buf_printf(d->err, "bad protobuf: wrong wire type for %s field %u", msg, f->num);
    return ERR_INVAL;
}

static int corrupt(struct otlp_dec *d, const char *msg, const struct pb_reader *r)
{
    buf_printf(d->err, "bad protobuf in %s: %s", msg, r->error);
    return ERR_INVAL;
}

#define W_NONE (-1)

static const signed char any_wires[] = {W_NONE, PB_LEN, PB_VARINT, PB_VARINT,
                                        PB_I64, PB_LEN, PB_LEN,    PB_LEN};
static const signed char kv_wires[] = {W_NONE, PB_LEN, PB_LEN};

static int render_any(struct otlp_dec *d, struct buf *out, struct slice s, int depth);

/* KeyValue: key and value (value empty if absent). */
static int read_kv(struct otlp_dec *d, struct slice s, struct slice *key, struct slice *val,
                   bool *has_val)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    *key = *val = slice_make("", 0);
    *has_val = false;
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if ((rc = check_wire(d, &f, "KeyValue", kv_wires, 3)))
            return rc;
        if (f.num == 1)
            *key = f.s;
        else if (f.num == 2) {
            *val = f.s;
            *has_val = true;
        }
    }
    return rc < 0 ? corrupt(d, "KeyValue", &r) : ERR_OK;
}

static int render_list(struct otlp_dec *d, struct buf *out, struct slice s, int depth, bool is_kv)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    bool first = true;
    buf_putc(out, is_kv ? '{' : '[');
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num != 1)
            continue;
        if (f.wire != PB_LEN)
            return otlp_fail(d, "bad protobuf: wrong wire type in %s",
                             is_kv ? "KeyValueList" : "ArrayValue");
        if (!first)
            buf_putc(out, ',');
        first = false;
        struct slice v = f.s;
        if (is_kv) {
            struct slice k;
            bool has;
            if ((rc = read_kv(d, f.s, &k, &v, &has)))
                return rc;
            json_str(out, k.ptr, k.len);
            buf_putc(out, ':');
            if (!has) {
                buf_puts(out, "null");
                continue;
            }
        }
        if ((rc = render_any(d, out, v, depth + 1)))
            return rc;
    }
    if (rc < 0)
        return corrupt(d, is_kv ? "KeyValueList" : "ArrayValue", &r);
    buf_putc(out, is_kv ? '}' : ']');
    return ERR_OK;
}

/* The AnyValue's last set member (a oneof: the last one wins). */
static int any_member(struct otlp_dec *d, struct slice s, struct pb_field *m)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    m->num = 0;
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if ((rc = check_wire(d, &f, "AnyValue", any_wires, 8)))
            return rc;
        if (f.num >= 1 && f.num <= 7)
            *m = f;
    }
    return rc < 0 ? corrupt(d, "AnyValue", &r) : ERR_OK;
}

/* AnyValue as JSON. */
static int render_any(struct otlp_dec *d, struct buf *out, struct slice s, int depth)
{
    if (depth > PB_MAX_DEPTH)
        return otlp_fail(d, "%s", "bad protobuf: AnyValue nested too deep");
    struct pb_field m;
    int rc = any_member(d, s, &m);
    if (rc)
        return rc;
    double dv;
    switch (m.num) {
    case 1: json_str(out, m.s.ptr, m.s.len); break;
    case 2: buf_puts(out, m.v ? "true" : "false"); break;
    case 3: buf_printf(out, "%" PRId64, (int64_t)m.v); break;
    case 4:
        memcpy(&dv, &m.v, sizeof dv);
        otlp_json_double(out, dv);
        break;
    case 5: return render_list(d, out, m.s, depth, false);
    case 6: return render_list(d, out, m.s, depth, true);
    case 7:
        buf_putc(out, '"');
        otlp_base64(out, m.s.ptr, m.s.len);
        buf_putc(out, '"');
        break;
    default: buf_puts(out, "null"); break;
    }
    return ERR_OK;
}

/* AnyValue as an attribute; TEXT values are rendered into d->scratch. */
static int any_attr(struct otlp_dec *d, struct slice s, struct otlp_attr *a)
{
    struct pb_field m;
    int rc = any_member(d, s, &m);
    if (rc)
        return rc;
    memset(a, 0, sizeof *a);
    buf_reset(&d->scratch);
    switch (m.num) {
    case 1:
        a->kind = OTLP_STRING;
        a->s = m.s;
        break;
    case 2:
        a->kind = OTLP_BOOL;
        a->b = m.v != 0;
        break;
    case 3:
        a->kind = OTLP_INT;
        a->i = (int64_t)m.v;
        break;
    case 4:
        a->kind = OTLP_DOUBLE;
        memcpy(&a->f, &m.v, sizeof a->f);
        break;
    case 5:
    case 6:
        if ((rc = render_any(d, &d->scratch, s, 1)))
            return rc;
        a->kind = OTLP_TEXT;
        break;
    case 7:
        otlp_base64(&d->scratch, m.s.ptr, m.s.len);
        a->kind = OTLP_TEXT;
        break;
    default: break;
    }
    if (a->kind == OTLP_TEXT)
        a->s = slice_make(d->scratch.data ? d->scratch.data : "", d->scratch.len);
    return ERR_OK;
}

static int add_kv(struct otlp_dec *d, struct slice kv, bool is_resource)
{
    struct slice k, v;
    bool has;
    int rc = read_kv(d, kv, &k, &v, &has);
    if (rc || !has)
        return rc;
    struct otlp_attr a;
    if ((rc = any_attr(d, v, &a)))
        return rc;
    if (is_resource)
        otlp_res_attr(d, k, &a);
    else
        otlp_add_attr(d, k, &a, false);
    return ERR_OK;
}

static const signed char res_wires[] = {W_NONE, PB_LEN, PB_VARINT};

/* The resource's attributes (otlp_res_*). */
static int add_resource(struct otlp_dec *d, struct slice res)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_init(&r, res.ptr, res.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if ((rc = check_wire(d, &f, "Resource", res_wires, 3)))
            return rc;
        if (f.num == 1 && (rc = add_kv(d, f.s, true)))
            return rc;
    }
    return rc < 0 ? corrupt(d, "Resource", &r) : ERR_OK;
}

static const signed char rec_wires[] = {W_NONE, PB_I64, PB_VARINT, PB_LEN, W_NONE,
                                        PB_LEN, PB_LEN, PB_VARINT, PB_I32, PB_LEN,
                                        PB_LEN, PB_I64, PB_LEN};

struct rec_scan {
    uint64_t time, observed, sevnum;
    struct slice sevtext, body, trace, span;
    bool has_body;
};

static int scan_record(struct otlp_dec *d, struct slice s, struct rec_scan *x)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    memset(x, 0, sizeof *x);
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if ((rc = check_wire(d, &f, "LogRecord", rec_wires, 13)))
            return rc;
        switch (f.num) {
        case 1: x->time = f.v; break;
        case 2: x->sevnum = f.v; break;
        case 3: x->sevtext = f.s; break;
        case 5:
            x->body = f.s;
            x->has_body = true;
            break;
        case 9: x->trace = f.s; break;
        case 10: x->span = f.s; break;
        case 11: x->observed = f.v; break;
        default: break;
        }
    }
    return rc < 0 ? corrupt(d, "LogRecord", &r) : ERR_OK;
}

static int add_body(struct otlp_dec *d, const struct rec_scan *x)
{
    struct slice msg = slice_make("", 0);
    buf_reset(&d->scratch);
    if (x->has_body) {
        struct pb_field m;
        int rc = any_member(d, x->body, &m);
        if (rc)
            return rc;
        if (m.num == 1)
            msg = m.s;
        else if ((rc = render_any(d, &d->scratch, x->body, 1)))
            return rc;
        else
            msg = slice_make(d->scratch.data, d->scratch.len);
    }
    logrow_str(&d->row, slice_cstr("msg"), msg);
    return ERR_OK;
}

static void add_id(struct otlp_dec *d, const char *key, struct slice id)
{
    if (!id.len)
        return;
    size_t off = logrow_text_begin(&d->row);
    otlp_hex(&d->row.text, id.ptr, id.len);
    logrow_str_from(&d->row, slice_cstr(key), off);
}

static int record(struct otlp_dec *d, struct slice s, struct slice res)
{
    struct rec_scan x;
    int rc = scan_record(d, s, &x);
    if (rc)
        return rc;
    d->no++;
    d->rec_error = NULL;
    logrow_reset(&d->row);
    if ((rc = add_body(d, &x)))
        return rc;
    if (x.sevtext.len)
        logrow_tag(&d->row, slice_cstr("level"), x.sevtext);
    else if (otlp_severity_name((int64_t)x.sevnum))
        logrow_tag(&d->row, slice_cstr("level"), slice_cstr(otlp_severity_name((int64_t)x.sevnum)));
    add_id(d, "trace_id", x.trace);
    add_id(d, "span_id", x.span);
    struct pb_reader r;
    struct pb_field f;
    pb_init(&r, s.ptr, s.len);
    while (pb_next(&r, &f) == 1)
        if (f.num == 6 && (rc = add_kv(d, f.s, false)))
            return rc;
    if (otlp_res_decode(d) && (rc = add_resource(d, res)))
        return rc;
    otlp_res_done(d);
    if (d->out)
        otlp_end_record(d, x.time, x.observed);
    return ERR_OK;
}

static const signed char scope_wires[] = {W_NONE, PB_LEN, PB_LEN, PB_LEN};

static int scope_logs(struct otlp_dec *d, struct slice s, struct slice res)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if ((rc = check_wire(d, &f, "ScopeLogs", scope_wires, 4)))
            return rc;
        if (f.num == 2 && (rc = record(d, f.s, res)))
            return rc;
    }
    return rc < 0 ? corrupt(d, "ScopeLogs", &r) : ERR_OK;
}

/* The resource first (fields may come in any order), then its scopes. */
static int resource_logs(struct otlp_dec *d, struct slice s)
{
    struct pb_reader r;
    struct pb_field f;
    struct slice res = slice_make("", 0);
    int rc;
    otlp_res_clear(d);
    pb_init(&r, s.ptr, s.len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if ((rc = check_wire(d, &f, "ResourceLogs", scope_wires, 4)))
            return rc;
        if (f.num == 1)
            res = f.s;
    }
    if (rc < 0)
        return corrupt(d, "ResourceLogs", &r);
    pb_init(&r, s.ptr, s.len);
    while (pb_next(&r, &f) == 1)
        if (f.num == 2 && (rc = scope_logs(d, f.s, res)))
            return rc;
    return ERR_OK;
}

int otlp_decode_proto(const char *body, size_t len, const struct logs_opts *o,
                      const struct logs_out *out, struct buf *err)
{
    struct otlp_dec d;
    otlp_dec_init(&d, o, out, err);
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_init(&r, body, len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.num != 1)
            continue;
        if (f.wire != PB_LEN) {
            rc = otlp_fail(&d, "%s", "bad protobuf: wrong wire type for resourceLogs");
            break;
        }
        if ((rc = resource_logs(&d, f.s)))
            break;
    }
    if (rc == ERR_CORRUPT)
        rc = corrupt(&d, "ExportLogsServiceRequest", &r);
    otlp_dec_destroy(&d);
    return rc < 0 ? rc : ERR_OK;
}
