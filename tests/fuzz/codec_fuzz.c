/* libFuzzer target for the block codec (store/table/codec.h), the first
 * reader of every SSTable block: byte 0 picks a use of the rest,
 *   0..2  stored as a block of that type (raw, LZ4, zstd) with a good
 *         checksum, so that the decoders see the bytes rather than a
 *         checksum mismatch: it decodes or is ERR_CORRUPT, and a zstd or
 *         LZ4 block that decodes has the length it announced;
 *   3     compressed in every mode and decoded back: the same bytes;
 *   4, 5  stored as a columnar block (type 3) or one that names a zstd
 *         dictionary (type 4, none known: ERR_CORRUPT), as 0..2;
 *   else  decoded as it is (trailer and all).
 * Nothing may crash, leak or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "store/table/codec.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void seal(struct buf *out, const uint8_t *p, size_t n, int type)
{
    buf_append(out, (const char *)p, n);
    buf_putc(out, (char)type);
    char c[4];
    coding_put_u32le(c, crc32c_mask(crc32c(out->data, out->len)));
    buf_append(out, c, 4);
}

static void round_trip(const uint8_t *p, size_t n)
{
    static const struct codec_opts modes[] = {{CODEC_MODE_FAST, 0, NULL},
                                              {CODEC_MODE_HC, 0, NULL},
                                              {CODEC_MODE_ZSTD, 1, NULL},
                                              {CODEC_MODE_ZSTD, 3, NULL}};
    struct buf enc = BUF_INIT, dec = BUF_INIT;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        buf_reset(&enc);
        codec_encode(slice_make((const char *)p, n), &modes[m], &enc);
        FUZZ_CHECK(codec_decode(slice_make(enc.data, enc.len), "fuzz", 0, &dec) == ERR_OK);
        FUZZ_CHECK(dec.len == n && (n == 0 || memcmp(dec.data, p, n) == 0));
    }
    buf_destroy(&enc);
    buf_destroy(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        log_set_level((enum log_level)(LOG_ERROR + 1)); /* damage is expected: no log */
        quiet = 1;
    }
    if (size == 0 || size > (1u << 20))
        return 0;
    struct buf in = BUF_INIT, out = BUF_INIT;
    int use = data[0];
    if (use <= 2 || use == 4 || use == 5) {
        int type = use <= 2 ? use : use == 4 ? CODEC_COLZSTD : CODEC_COLZSTD_DICT;
        seal(&in, data + 1, size - 1, type);
        int rc = codec_decode(slice_make(in.data, in.len), "fuzz", 0, &out);
        FUZZ_CHECK(rc == ERR_OK || rc == ERR_CORRUPT);
        FUZZ_CHECK(type != CODEC_COLZSTD_DICT || rc == ERR_CORRUPT);
        if (rc == ERR_OK && type != CODEC_RAW) {
            uint64_t raw_len;
            FUZZ_CHECK(coding_varint_dec(in.data, in.data + size - 1, &raw_len) != NULL);
            FUZZ_CHECK(raw_len == out.len);
        }
    } else if (use == 3) {
        round_trip(data + 1, size - 1);
    } else {
        int rc = codec_decode(slice_make((const char *)data + 1, size - 1), "fuzz", 0, &out);
        FUZZ_CHECK(rc == ERR_OK || rc == ERR_CORRUPT);
    }
    buf_destroy(&in);
    buf_destroy(&out);
    return 0;
}
