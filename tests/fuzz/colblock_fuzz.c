/* libFuzzer target for the columnar form of data blocks
 * (store/table/colblock.h), what the codec decodes every type 3 block
 * into: byte 0 picks a use of the rest,
 *   0     decoded as a columnar form (at most 1 MiB): ERR_OK with a block
 *         within the bound, or ERR_CORRUPT;
 *   1-3   taken as a raw block of row (1), index (2) or host section (3)
 *         keys: if it has a
 *         columnar form, that form decodes to the same bytes;
 *   else  split into row keys and values (below), built into a block, and
 *         its columnar form decoded back: the same bytes.
 * Nothing may crash, leak or trip a sanitizer. */
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
#include "store/table/colblock.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_form(struct slice raw, enum col_layout layout)
{
    struct buf col = BUF_INIT, back = BUF_INIT;
    if (col_encode(raw, layout, &col)) {
        FUZZ_CHECK(col_decode(slice_make(col.data, col.len), raw.len, &back) == ERR_OK);
        FUZZ_CHECK(back.len == raw.len && memcmp(back.data, raw.ptr, raw.len) == 0);
    }
    buf_destroy(&col);
    buf_destroy(&back);
}

static int cmp_slices(const void *a, const void *b)
{
    return slice_cmp(*(const struct slice *)a, *(const struct slice *)b);
}

/* Row keys from the input: each piece between 0xfe bytes is an id (its
 * first byte picks host and event), the row's value is empty. Sorted and
 * deduplicated, as a block holds them. */
static void rows_block(const uint8_t *p, size_t n)
{
    struct buf keys = BUF_INIT, ukey = BUF_INIT;
    size_t nk = 0, cap = 16;
    struct slice *v = malloc(cap * sizeof *v);
    size_t *offs = malloc(cap * sizeof *offs), *lens = malloc(cap * sizeof *lens);
    const uint8_t *end = p + n;
    for (int64_t ts = 1000; p < end; ts += 7) {
        const uint8_t *z = memchr(p, 0xfe, (size_t)(end - p));
        size_t len = z ? (size_t)(z - p) : (size_t)(end - p);
        buf_reset(&ukey);
        char host[2] = {(char)('a' + (len ? p[0] % 3 : 0)), 0};
        key_encode_row_id(&ukey, (uint32_t)(ts % 5), ts / 3, false, slice_cstr(host),
                          slice_cstr("ev"), slice_make(p, len));
        if (nk == cap) {
            cap *= 2;
            offs = realloc(offs, cap * sizeof *offs);
            lens = realloc(lens, cap * sizeof *lens);
            v = realloc(v, cap * sizeof *v);
        }
        offs[nk] = keys.len;
        ikey_append(&keys, slice_make(ukey.data, ukey.len), (uint64_t)ts, IKEY_PUT);
        lens[nk] = keys.len - offs[nk];
        nk++;
        p += len + (z ? 1 : 0);
    }
    for (size_t i = 0; i < nk; i++)
        v[i] = slice_make(keys.data + offs[i], lens[i]);
    qsort(v, nk, sizeof *v, cmp_slices);
    struct blk_builder b;
    blk_builder_init(&b);
    for (size_t i = 0; i < nk; i++)
        if (i == 0 || slice_cmp(v[i - 1], v[i]) != 0)
            blk_add(&b, v[i], slice_make("", 0));
    if (nk)
        check_form(blk_finish(&b), COL_ROWS);
    blk_builder_destroy(&b);
    buf_destroy(&keys);
    buf_destroy(&ukey);
    free(v);
    free(offs);
    free(lens);
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
    struct slice rest = slice_make((const char *)data + 1, size - 1);
    if (data[0] == 0) {
        struct buf out = BUF_INIT;
        int rc = col_decode(rest, 1u << 20, &out);
        FUZZ_CHECK(rc == ERR_OK || rc == ERR_CORRUPT);
        FUZZ_CHECK(rc != ERR_OK || out.len <= (1u << 20));
        buf_destroy(&out);
    } else if (data[0] <= 3) {
        check_form(rest, data[0] == 1 ? COL_ROWS : data[0] == 2 ? COL_INDEX : COL_SECTION);
    } else {
        rows_block(data + 1, size - 1);
    }
    return 0;
}
