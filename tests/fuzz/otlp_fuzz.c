/* libFuzzer target for the OTLP logs decoders: the first byte picks JSON
 * or protobuf, the next eight seed the limits; see logs_fuzz_common.h for
 * the checks. A JSON body is also decoded by the tape decoder alone: the
 * one-pass decoder (ingest/otlp_jscan.c) must give the same rows, rejects,
 * result and error text. */
#include <stddef.h>
#include <stdint.h>

#include "ingest/otlp_int.h"
#include "tests/fuzz/logs_fuzz_common.h"
#include "tests/unit/ingest/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_row(void *arg, uint64_t no, const struct event *ev)
{
    buf_printf(arg, "%llu ", (unsigned long long)no);
    render_event(arg, ev);
    buf_putc(arg, '\n');
}

static void on_reject(void *arg, uint64_t no, const char *reason)
{
    buf_printf(arg, "%llu BAD %s\n", (unsigned long long)no, reason);
}

/* The body's rows and result as text, by both JSON decoders. */
static void json_both(const struct logs_map *map, const char *body, size_t len)
{
    struct logs_opts o;
    memset(&o, 0, sizeof o);
    o.map = *map;
    event_limits_default(&o.lim);
    o.arrival_ns = 1;
    struct buf rows[2] = {BUF_INIT, BUF_INIT}, err[2] = {BUF_INIT, BUF_INIT};
    int rc[2];
    for (int tape = 0; tape < 2; tape++) {
        struct logs_out out = {on_row, on_reject, &rows[tape]};
        otlp_json_test_tape_only(tape);
        rc[tape] = otlp_decode_json(body, len, &o, &out, &err[tape]);
    }
    otlp_json_test_tape_only(false);
    FUZZ_CHECK(rc[0] == rc[1]);
    FUZZ_CHECK(err[0].len == err[1].len &&
               (err[0].len == 0 || memcmp(err[0].data, err[1].data, err[0].len) == 0));
    if (rc[0] == ERR_OK)
        FUZZ_CHECK(rows[0].len == rows[1].len &&
                   (rows[0].len == 0 || memcmp(rows[0].data, rows[1].data, rows[0].len) == 0));
    for (int i = 0; i < 2; i++) {
        buf_destroy(&rows[i]);
        buf_destroy(&err[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    uint64_t seed;
    memcpy(&seed, data + 1, 8);
    static const struct logs_map map = {"host.name", "service.name", "otlp"};
    fuzz_decode(data[0] & 1 ? otlp_decode_proto : otlp_decode_json, &map, seed,
                (const char *)data + 9, size - 9);
    if (!(data[0] & 1))
        json_both(&map, (const char *)data + 9, size - 9);
    return 0;
}
