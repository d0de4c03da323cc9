/* libFuzzer target for the OTLP logs decoders: the first byte picks JSON
 * or protobuf, the next eight seed the limits; see logs_fuzz_common.h for
 * the checks. */
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
    static const struct logs_map map = {"host.name", "service.name", "otlp"};
    fuzz_decode(data[0] & 1 ? otlp_decode_proto : otlp_decode_json, &map, seed,
                (const char *)data + 9, size - 9);
    return 0;
}
