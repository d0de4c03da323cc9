/* libFuzzer target for the record decoder (model/record.h), the reader of
 * every stored row's tags and fields: the input split in two (byte 0 says
 * where) is read as a row's id and value, and merged as two versions of a
 * row. Whatever the bytes, reading ends (ERR_CORRUPT or the end) without a
 * read out of bounds; a record that reads whole encodes back to itself;
 * a merge that succeeds reads whole. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/record.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ITEMS 4096

/* Reads value whole; true if it decoded without error. Re-encodes what it
 * read into out. */
static bool read_all(struct slice value, struct buf *out)
{
    struct rec_reader r;
    if (rec_reader_init(&r, value) != ERR_OK)
        return false;
    struct rec_tag *tags = calloc(MAX_ITEMS, sizeof *tags);
    struct rec_field *fields = calloc(MAX_ITEMS, sizeof *fields);
    size_t nt = 0, nf = 0;
    int rc;
    while ((rc = rec_next_tag(&r, &tags[nt])) == 1 && nt < MAX_ITEMS - 1)
        nt++;
    bool ok = rc == 0;
    while (ok && (rc = rec_next_field(&r, &fields[nf])) == 1 && nf < MAX_ITEMS - 1)
        nf++;
    ok = ok && rc == 0;
    if (ok)
        rec_encode(out, tags, nt, fields, nf);
    free(tags);
    free(fields);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t cut = size > 1 ? data[0] % size : 0;
    struct slice a = slice_make((const char *)data + 1, cut ? cut - 1 : 0);
    struct slice b = slice_make((const char *)data + (cut ? cut : 1), size - (cut ? cut : 1));
    struct buf enc = BUF_INIT, merged = BUF_INIT;
    /* a record read whole encodes back to bytes that read the same */
    if (read_all(a, &enc)) {
        struct buf again = BUF_INIT;
        FUZZ_CHECK(read_all(slice_make(enc.data, enc.len), &again));
        FUZZ_CHECK(again.len == enc.len && memcmp(again.data, enc.data, enc.len) == 0);
        buf_destroy(&again);
    }
    /* a row of two parts */
    struct rec_row_reader rr;
    if (rec_row_init(&rr, a, b) == ERR_OK) {
        struct rec_tag t;
        struct rec_field f;
        size_t n = 0;
        while (rec_row_next_tag(&rr, &t) == 1 && n++ < MAX_ITEMS)
            ;
        n = 0;
        while (rec_row_next_field(&rr, &f) == 1 && n++ < MAX_ITEMS)
            ;
    }
    /* a merge that succeeds gives a record that reads whole */
    if (rec_merge(&merged, a, b) == ERR_OK) {
        buf_reset(&enc);
        FUZZ_CHECK(read_all(slice_make(merged.data, merged.len), &enc));
    }
    buf_destroy(&enc);
    buf_destroy(&merged);
    return 0;
}
