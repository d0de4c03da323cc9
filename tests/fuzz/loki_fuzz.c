/* libFuzzer target for the Loki push decoders: the first byte picks JSON,
 * protobuf, or protobuf behind snappy (with a small inflate cap), the next
 * eight seed the limits; see logs_fuzz_common.h for the checks. */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/logs_fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    uint64_t seed;
    memcpy(&seed, data + 1, 8);
    const char *body = (const char *)data + 9;
    size_t len = size - 9;
    static const struct logs_map map = {"host,hostname,instance", "job,app,service_name", "loki"};
    switch (data[0] % 3) {
    case 0: fuzz_decode(loki_decode_json, &map, seed, body, len); break;
    case 1: fuzz_decode(loki_decode_proto, &map, seed, body, len); break;
    default: {
        struct buf raw = BUF_INIT, err = BUF_INIT;
        int rc = logs_unsnappy(body, len, 1 << 20, &raw, &err);
        FUZZ_CHECK(rc == ERR_OK ? err.len == 0 : err.len > 0);
        if (rc == ERR_OK)
            fuzz_decode(loki_decode_proto, &map, seed, raw.data ? raw.data : "", raw.len);
        buf_destroy(&raw);
        buf_destroy(&err);
        break;
    }
    }
    /* the label parser alone, on the same bytes */
    struct buf labels = BUF_INIT;
    (void)loki_parse_labels(body, len, &labels);
    buf_destroy(&labels);
    return 0;
}
