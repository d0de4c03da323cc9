/* LZ4 and zstd (de)compression of SST blocks with their checksum trailer;
 * every length taken from disk is bounded before use. */
#include "store/table/codec.h"

#include <lz4.h>
#include <lz4hc.h>
#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"

static void put_trailer(struct buf *out, size_t start, int type)
{
    buf_putc(out, (char)type);
    uint32_t crc = crc32c(out->data + start, out->len - start);
    buf_reserve(out, 4);
    coding_put_u32le(out->data + out->len, crc32c_mask(crc));
    out->len += 4;
}

/* zstd's contexts, one of each per thread that uses them (flush and
 * compaction threads compress, every reader decompresses), freed when the
 * thread ends. A context keeps its tables between blocks: creating one per
 * block would cost more than decoding a 32 KiB block. */
static pthread_key_t cctx_key, dctx_key;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void free_cctx(void *p)
{
    ZSTD_freeCCtx(p);
}

static void free_dctx(void *p)
{
    ZSTD_freeDCtx(p);
}

static void make_keys(void)
{
    if (pthread_key_create(&cctx_key, free_cctx) || pthread_key_create(&dctx_key, free_dctx))
        abort();
}

static ZSTD_CCtx *thread_cctx(void)
{
    pthread_once(&keys_once, make_keys);
    ZSTD_CCtx *c = pthread_getspecific(cctx_key);
    if (!c) {
        c = ZSTD_createCCtx();
        if (!c || pthread_setspecific(cctx_key, c))
            abort();
    }
    return c;
}

static ZSTD_DCtx *thread_dctx(void)
{
    pthread_once(&keys_once, make_keys);
    ZSTD_DCtx *d = pthread_getspecific(dctx_key);
    if (!d) {
        d = ZSTD_createDCtx();
        if (!d || pthread_setspecific(dctx_key, d))
            abort();
    }
    return d;
}

/* Compresses raw into dst (cap bytes) as mode says: the compressed size,
 * or 0 if it failed or did not fit. */
static size_t compress(struct slice raw, const struct codec_opts *o, char *dst, size_t cap)
{
    if (o->mode == CODEC_MODE_ZSTD) {
        int level = o->level > 0 && o->level <= CODEC_ZSTD_MAX_LEVEL ? o->level : 3;
        size_t n = ZSTD_compressCCtx(thread_cctx(), dst, cap, raw.ptr, raw.len, level);
        return ZSTD_isError(n) ? 0 : n;
    }
    int n;
    if (o->mode == CODEC_MODE_FAST) {
        /* A flushed file lives until its window's compaction rewrites it
         * in its final form, and it is written while clients wait:
         * acceleration 2 is about 1.5x faster than 1 for 4% more bytes on
         * log lines. */
        n = LZ4_compress_fast(raw.ptr, dst, (int)raw.len, (int)cap, 2);
    } else {
        /* LZ4HC level 3 makes blocks about 15% smaller than plain LZ4 on
         * log data, with the same format and decoding speed. The state
         * (~256 KiB) lives on the stack of the background thread. */
        LZ4_streamHC_t state;
        n = LZ4_compress_HC_extStateHC(&state, raw.ptr, dst, (int)raw.len, (int)cap, 3);
    }
    return n > 0 ? (size_t)n : 0;
}

void codec_encode(struct slice raw, const struct codec_opts *opts, struct buf *out)
{
    static const struct codec_opts fast = {CODEC_MODE_FAST, 0, NULL};
    const struct codec_opts *o = opts ? opts : &fast;
    size_t start = out->len;
    size_t bound = o->mode == CODEC_MODE_ZSTD ? ZSTD_compressBound(raw.len)
                                              : (size_t)LZ4_compressBound((int)raw.len);
    buf_reserve(out, 10 + bound + CODEC_TRAILER);
    size_t hdr = coding_varint_enc(out->data + out->len, raw.len);
    size_t n = compress(raw, o, out->data + out->len + hdr, bound);
    if (n > 0 && hdr + n < raw.len - raw.len / 8) {
        out->len += hdr + n;
        put_trailer(out, start, o->mode == CODEC_MODE_ZSTD ? CODEC_ZSTD : CODEC_LZ4);
        return;
    }
    buf_append(out, raw.ptr, raw.len);
    put_trailer(out, start, CODEC_RAW);
}

void codec_encode_data(struct slice raw, const struct codec_opts *opts, enum col_layout layout,
                       struct buf *out)
{
    if (!opts || opts->mode != CODEC_MODE_ZSTD || layout == COL_NONE) {
        codec_encode(raw, opts, out);
        return;
    }
    struct buf col;
    buf_thread_take(&col);
    if (!col_encode(raw, layout, &col)) {
        buf_thread_give(&col);
        codec_encode(raw, opts, out);
        return;
    }
    const void *cdict = NULL;
    uint32_t dict_id = 0;
    if (opts->dicts) {
        dict_id = zdict_set_current(opts->dicts, &cdict);
        if (!dict_id)
            zdict_set_sample(opts->dicts, slice_make(col.data, col.len));
    }
    size_t start = out->len, bound = ZSTD_compressBound(col.len);
    buf_reserve(out, 30 + bound + CODEC_TRAILER);
    char *p = out->data + out->len;
    size_t hdr = coding_varint_enc(p, raw.len);
    hdr += coding_varint_enc(p + hdr, col.len);
    if (dict_id)
        hdr += coding_varint_enc(p + hdr, dict_id);
    size_t n;
    if (dict_id) {
        n = ZSTD_compress_usingCDict(thread_cctx(), p + hdr, bound, col.data, col.len, cdict);
        n = ZSTD_isError(n) ? 0 : n;
    } else {
        n = compress(slice_make(col.data, col.len), opts, p + hdr, bound);
    }
    buf_thread_give(&col);
    if (n > 0 && hdr + n < raw.len - raw.len / 8) {
        out->len += hdr + n;
        put_trailer(out, start, dict_id ? CODEC_COLZSTD_DICT : CODEC_COLZSTD);
        return;
    }
    codec_encode(raw, opts, out);
}

void codec_encode_raw(struct slice raw, struct buf *out)
{
    size_t start = out->len;
    buf_append(out, raw.ptr, raw.len);
    put_trailer(out, start, CODEC_RAW);
}

int codec_stored_type(struct slice stored)
{
    return stored.len < CODEC_TRAILER ? -1 : (unsigned char)stored.ptr[stored.len - CODEC_TRAILER];
}

/* Decompresses src of type into out, which has room for exactly raw_len
 * bytes: true if it decodes to raw_len bytes. */
static bool decompress(int type, struct slice src, char *out, size_t raw_len)
{
    if (type == CODEC_LZ4) {
        int n = LZ4_decompress_safe(src.ptr, out, (int)src.len, (int)raw_len);
        return n >= 0 && (size_t)n == raw_len;
    }
    size_t n = ZSTD_decompressDCtx(thread_dctx(), out, raw_len, src.ptr, src.len);
    return !ZSTD_isError(n) && n == raw_len;
}

/* The columnar form (after raw_len) of a type 3 or 4 block into out. */
static int decode_columnar(int type, struct slice src, size_t raw_len, struct zdict_set *dicts,
                           const char *what, uint64_t off, struct buf *out)
{
    uint64_t col_len = 0, dict_id = 0;
    const char *p = coding_varint_dec(src.ptr, src.ptr + src.len, &col_len);
    if (p && type == CODEC_COLZSTD_DICT)
        p = coding_varint_dec(p, src.ptr + src.len, &dict_id);
    if (!p || col_len > 2 * (uint64_t)CODEC_MAX_RAW)
        return err_corrupt("%s: block at %llu: bad columnar length", what, (unsigned long long)off);
    const void *ddict = NULL;
    if (type == CODEC_COLZSTD_DICT &&
        (!dicts || dict_id > UINT32_MAX || !(ddict = zdict_set_ddict(dicts, (uint32_t)dict_id))))
        return err_corrupt("%s: block at %llu: zstd dictionary %llu missing", what,
                           (unsigned long long)off, (unsigned long long)dict_id);
    struct buf col;
    buf_thread_take(&col);
    buf_reserve(&col, (size_t)col_len);
    int rc = ERR_OK;
    struct slice frame = slice_make(p, (size_t)(src.ptr + src.len - p));
    bool ok;
    if (ddict) {
        size_t n = ZSTD_decompress_usingDDict(thread_dctx(), col.data, (size_t)col_len, frame.ptr,
                                              frame.len, ddict);
        ok = !ZSTD_isError(n) && n == col_len;
    } else {
        ok = decompress(CODEC_ZSTD, frame, col.data, (size_t)col_len);
    }
    if (!ok)
        rc = err_corrupt("%s: block at %llu: bad zstd data", what, (unsigned long long)off);
    else if (col_decode(slice_make(col.data, (size_t)col_len), raw_len, out) || out->len != raw_len)
        rc = err_corrupt("%s: block at %llu: bad columnar block", what, (unsigned long long)off);
    buf_thread_give(&col);
    return rc;
}

int codec_decode(struct slice stored, const char *what, uint64_t off, struct buf *out)
{
    return codec_decode_dict(stored, what, off, NULL, out);
}

int codec_decode_dict(struct slice stored, const char *what, uint64_t off, struct zdict_set *dicts,
                      struct buf *out)
{
    buf_reset(out);
    if (stored.len < CODEC_TRAILER)
        return err_corrupt("%s: block at %llu too short", what, (unsigned long long)off);
    size_t plen = stored.len - CODEC_TRAILER;
    uint32_t want = crc32c_unmask(coding_get_u32le(stored.ptr + plen + 1));
    if (crc32c(stored.ptr, plen + 1) != want)
        return err_corrupt("%s: block at %llu: checksum mismatch", what, (unsigned long long)off);
    int type = (unsigned char)stored.ptr[plen];
    if (type == CODEC_RAW) {
        buf_reserve_exact(out, plen);
        buf_append(out, stored.ptr, plen);
        return ERR_OK;
    }
    uint64_t raw_len;
    const char *p = coding_varint_dec(stored.ptr, stored.ptr + plen, &raw_len);
    if (type < CODEC_LZ4 || type > CODEC_COLZSTD_DICT || !p || raw_len > CODEC_MAX_RAW)
        return err_corrupt("%s: block at %llu: bad type or length", what, (unsigned long long)off);
    if (type == CODEC_COLZSTD || type == CODEC_COLZSTD_DICT)
        return decode_columnar(type, slice_make(p, (size_t)(stored.ptr + plen - p)),
                               (size_t)raw_len, dicts, what, off, out);
    buf_reserve_exact(out, (size_t)raw_len);
    if (!decompress(type, slice_make(p, (size_t)(stored.ptr + plen - p)), out->data,
                    (size_t)raw_len))
        return err_corrupt("%s: block at %llu: bad %s data", what, (unsigned long long)off,
                           type == CODEC_LZ4 ? "LZ4" : "zstd");
    out->len = (size_t)raw_len;
    return ERR_OK;
}
