/* libFuzzer target for the columnar block decoder (store/table/colblock.h)
 * and the codec types that carry it. An input whose first byte is even is
 * decoded as a columnar block: it must fail with ERR_CORRUPT or give a row
 * block that encodes and decodes back to itself. An odd first byte builds
 * a row block from the rest (hosts, events, ids and values cut from it, in
 * key order) that must round-trip through colblock and through the codec
 * (LZ4 and zstd) exactly. Nothing may crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "store/ikey.h"
#include "store/table/block.h"
#include "store/table/codec.h"
#include "store/table/colblock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            abort();                                                                               \
    } while (0)

static void decode_given(const char *p, size_t n)
{
    struct buf rows = BUF_INIT, col = BUF_INIT, again = BUF_INIT;
    int rc = colblock_decode(slice_make(p, n), 1u << 20, &rows);
    CHECK(rc == ERR_OK || rc == ERR_CORRUPT);
    if (rc == ERR_OK) {
        CHECK(colblock_encode(slice_make(rows.data, rows.len), &col));
        CHECK(colblock_decode(slice_make(col.data, col.len), 1u << 20, &again) == ERR_OK);
        CHECK(again.len == rows.len && memcmp(again.data, rows.data, rows.len) == 0);
    }
    buf_destroy(&rows);
    buf_destroy(&col);
    buf_destroy(&again);
}

/* Takes up to max bytes of the input as a name without 0x00 and 0x01. */
static struct slice take(const char **p, const char *end, size_t max, struct buf *out)
{
    buf_reset(out);
    size_t n = end > *p ? (size_t)(unsigned char)**p % (max + 1) : 0;
    if (*p < end)
        (*p)++;
    for (size_t i = 0; i < n && *p < end; i++, (*p)++)
        buf_putc(out, (char)((unsigned char)**p < 2 ? 'x' : **p));
    return slice_make(out->data, out->len);
}

static void build_rows(const char *p, const char *end, struct blk_builder *b)
{
    struct buf key = BUF_INIT, host = BUF_INIT, event = BUF_INIT, id = BUF_INIT, val = BUF_INIT;
    int64_t ts = INT64_MIN;
    for (int i = 0; p < end && i < 500; i++) {
        ts += 1 + (int64_t)(unsigned char)*p++ * 1000003;
        struct slice h = take(&p, end, 12, &host), e = take(&p, end, 8, &event);
        buf_reset(&id);
        buf_reset(&val);
        size_t idn = p < end ? (unsigned char)*p++ % 40 : 0;
        for (size_t k = 0; k < idn && p < end; k++)
            buf_putc(&id, *p++);
        size_t vn = p < end ? (unsigned char)*p++ % 60 : 0;
        for (size_t k = 0; k < vn && p < end; k++)
            buf_putc(&val, *p++);
        buf_reset(&key);
        key_encode_row_id(&key, (uint32_t)i / 100, ts, false, h, e, slice_make(id.data, id.len));
        buf_reserve(&key, IKEY_TRAILER);
        ikey_put_trailer(key.data + key.len, (uint64_t)i * 7, i % 3);
        key.len += IKEY_TRAILER;
        blk_add(b, slice_make(key.data, key.len), slice_make(val.data, val.len));
    }
    buf_destroy(&key);
    buf_destroy(&host);
    buf_destroy(&event);
    buf_destroy(&id);
    buf_destroy(&val);
}

static void round_trip(const char *p, size_t n)
{
    struct blk_builder b;
    blk_builder_init(&b);
    build_rows(p, p + n, &b);
    if (b.count == 0) {
        blk_builder_destroy(&b);
        return;
    }
    struct slice raw = blk_finish(&b);
    struct buf col = BUF_INIT, dec = BUF_INIT, enc = BUF_INIT;
    CHECK(colblock_encode(raw, &col));
    CHECK(colblock_decode(slice_make(col.data, col.len), CODEC_MAX_RAW, &dec) == ERR_OK);
    CHECK(dec.len == raw.len && memcmp(dec.data, raw.ptr, raw.len) == 0);
    for (int fast = 0; fast < 2; fast++) {
        buf_reset(&enc);
        codec_encode_rows(raw, fast, &enc);
        CHECK(codec_decode(slice_make(enc.data, enc.len), "fuzz", 0, &dec) == ERR_OK);
        CHECK(dec.len == raw.len && memcmp(dec.data, raw.ptr, raw.len) == 0);
    }
    buf_destroy(&col);
    buf_destroy(&dec);
    buf_destroy(&enc);
    blk_builder_destroy(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        log_set_level(LOG_ERROR + 1);
        quiet = 1;
    }
    if (size == 0)
        return 0;
    /* a heap copy of exactly the input, so ASan sees any overread */
    char *in = malloc(size - 1 ? size - 1 : 1);
    memcpy(in, data + 1, size - 1);
    if (data[0] & 1)
        round_trip(in, size - 1);
    else
        decode_given(in, size - 1);
    free(in);
    return 0;
}
