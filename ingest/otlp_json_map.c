/* The parts of OTLP/JSON's mapping that its two decoders share: the tape
 * decoder (otlp_json.c) and the one-pass decoder (otlp_jscan.c). */
#include <string.h>

#include "ingest/otlp_int.h"

/* By its length first, then compared with names of that length only. */
int otlp_json_any_name(struct slice key)
{
#define IS(lit) (memcmp(key.ptr, lit, sizeof lit - 1) == 0)
    switch (key.len) {
    case 8: return IS("intValue") ? 2 : -1;
    case 9: return IS("boolValue") ? 1 : IS("int_value") ? 2 : -1;
    case 10: return IS("arrayValue") ? 4 : IS("bytesValue") ? 6 : IS("bool_value") ? 1 : -1;
    case 11:
        return IS("stringValue")   ? 0
               : IS("doubleValue") ? 3
               : IS("kvlistValue") ? 5
               : IS("array_value") ? 4
               : IS("bytes_value") ? 6
                                   : -1;
    case 12: return IS("string_value") ? 0 : IS("double_value") ? 3 : IS("kvlist_value") ? 5 : -1;
    default: return -1;
    }
#undef IS
}

/* By its length first. */
int otlp_json_record_name(struct slice key)
{
#define IS(lit) (memcmp(key.ptr, lit, sizeof lit - 1) == 0)
    switch (key.len) {
    case 4: return IS("body") ? OTLP_R_BODY : -1;
    case 6: return IS("spanId") ? OTLP_R_SPAN : -1;
    case 7: return IS("traceId") ? OTLP_R_TRACE : IS("span_id") ? OTLP_R_SPAN : -1;
    case 8: return IS("trace_id") ? OTLP_R_TRACE : -1;
    case 10: return IS("attributes") ? OTLP_R_ATTRS : -1;
    case 12: return IS("timeUnixNano") ? OTLP_R_TIME : IS("severityText") ? OTLP_R_SEVTEXT : -1;
    case 13: return IS("severity_text") ? OTLP_R_SEVTEXT : -1;
    case 14: return IS("severityNumber") ? OTLP_R_SEVNUM : IS("time_unix_nano") ? OTLP_R_TIME : -1;
    case 15: return IS("severity_number") ? OTLP_R_SEVNUM : -1;
    case 20: return IS("observedTimeUnixNano") ? OTLP_R_OBSERVED : -1;
    case 23: return IS("observed_time_unix_nano") ? OTLP_R_OBSERVED : -1;
    default: return -1;
    }
#undef IS
}

bool otlp_json_severity_enum(struct slice s, int64_t *num)
{
    if (s.len <= 16 || memcmp(s.ptr, "SEVERITY_NUMBER_", 16) != 0)
        return false;
    struct slice name = slice_make(s.ptr + 16, s.len - 16);
    for (*num = 24; *num > 0 && !slice_eq(slice_cstr(otlp_severity_name(*num)), name); --*num)
        ;
    return true;
}

void otlp_json_level(struct otlp_dec *d, struct slice text, int64_t num)
{
    const char *name = otlp_severity_name(num);
    if (text.len)
        logrow_tag(&d->row, slice_cstr("level"), text);
    else if (name)
        logrow_tag(&d->row, slice_cstr("level"), slice_cstr(name));
}

void otlp_json_add_id(struct otlp_dec *d, struct slice s, const char *key)
{
    if (!s.len)
        return;
    size_t off = logrow_text_begin(&d->row);
    for (size_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        if (c >= 'A' && c <= 'F')
            c = (char)(c - 'A' + 'a');
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) && !d->rec_error)
            d->rec_error = "trace or span id is not hex";
        buf_putc(&d->row.text, c);
    }
    logrow_str_from(&d->row, slice_cstr(key), off);
}
