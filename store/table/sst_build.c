/* SSTable writer: fills a block builder, compresses each full block with
 * its checksum trailer (followed by its word filter if it has one),
 * collects index entries and key hashes for the bloom filter, and writes
 * the footer last. */
#include "store/table/sst.h"

#include <stdlib.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "store/ikey.h"
#include "store/table/block.h"
#include "store/table/bloom.h"
#include "store/table/codec.h"
#include "store/table/sst_int.h"
#include "store/table/wfilter.h"

struct sst_builder {
    struct env *env;
    char *path;
    struct env_file *f;
    uint64_t offset;
    struct blk_builder data, index;
    struct buf out; /* scratch for encoded blocks */
    uint64_t *hashes;
    size_t nhashes, hcap;
    uint64_t last_hash;
    struct sst_props props;
    struct sst_build_opts opts;
    uint32_t version;
    bool has_words;               /* data blocks get word filters */
    struct wfilter_builder words; /* of the data block being filled */
    struct buf filter;            /* scratch for a word filter */
    struct sst_section *section;  /* opts.section in a file of version 5, else NULL */
};

/* The format version builders write (sst_test_set_version); atomic, as
 * a test may set it while background threads create builders. */
static atomic_uint write_version = SST_VERSION;

void sst_test_set_version(uint32_t version)
{
    atomic_store_explicit(&write_version, version ? version : SST_VERSION, memory_order_relaxed);
}

int sst_builder_new(struct env *env, const char *path, const struct sst_build_opts *opts,
                    struct sst_builder **out)
{
    struct env_file *f;
    int rc = env_open_append(env, path, true, &f);
    if (rc)
        return rc;
    struct sst_builder *b = xcalloc(1, sizeof *b);
    b->env = env;
    b->path = xstrdup(path);
    b->f = f;
    blk_builder_init(&b->data);
    blk_builder_init(&b->index);
    if (opts)
        b->opts = *opts;
    b->version = atomic_load_explicit(&write_version, memory_order_relaxed);
    /* the host index has no searches by word (nor point reads) */
    b->has_words = b->version >= 3 && !b->opts.no_bloom;
    b->section = b->version >= 5 ? b->opts.section : NULL;
    wfilter_builder_init(&b->words);
    b->props.min_ts = INT64_MAX;
    b->props.max_ts = INT64_MIN;
    *out = b;
    return ERR_OK;
}

static void builder_free(struct sst_builder *b)
{
    env_close(b->f);
    blk_builder_destroy(&b->data);
    blk_builder_destroy(&b->index);
    buf_destroy(&b->out);
    wfilter_builder_destroy(&b->words);
    buf_destroy(&b->filter);
    free(b->hashes);
    free(b->path);
    free(b);
}

/* Encoded blocks are written in runs of about this many bytes: one write
 * call per 32 KiB block was a sixth of the daemon's system calls while
 * flushing. */
#define SST_WRITE_BYTES (512u << 10)

/* Appends the encoded blocks collected in out to the file. */
static int write_out(struct sst_builder *b)
{
    if (b->out.len == 0)
        return ERR_OK;
    int rc = env_append(b->f, b->out.data, b->out.len);
    buf_reset(&b->out);
    return rc;
}

/* Takes the stored block appended to out from start on as the table's
 * next block; sets its handle (offset, payload size). */
static int end_block(struct sst_builder *b, size_t start, uint64_t *off, uint64_t *size)
{
    size_t n = b->out.len - start;
    *off = b->offset;
    *size = n - CODEC_TRAILER;
    b->offset += n;
    return b->out.len >= SST_WRITE_BYTES ? write_out(b) : ERR_OK;
}

/* Encodes raw as a stored block at the end of the table (written with the
 * next run); sets its handle (offset, payload size). A data block may be
 * stored in its columnar form (files of version 4). */
static int write_block_as(struct sst_builder *b, struct slice raw, enum col_layout layout,
                          uint64_t *off, uint64_t *size)
{
    size_t start = b->out.len;
    codec_encode_data(raw, &b->opts.codec, b->version >= 4 ? layout : COL_NONE, &b->out);
    return end_block(b, start, off, size);
}

static int write_block(struct sst_builder *b, struct slice raw, bool data, uint64_t *off,
                       uint64_t *size)
{
    return write_block_as(b, raw, data ? b->opts.layout : COL_NONE, off, size);
}

/* The index entry of a data block: its last key and handle, then the
 * handle of its word filter if it has one (fsize > 0). */
static void add_index(struct sst_builder *b, struct slice last_key, uint64_t off, uint64_t size,
                      uint64_t foff, uint64_t fsize)
{
    char h[40];
    size_t n = coding_varint_enc(h, off);
    n += coding_varint_enc(h + n, size);
    if (fsize) {
        n += coding_varint_enc(h + n, foff);
        n += coding_varint_enc(h + n, fsize);
    }
    blk_add(&b->index, last_key, slice_make(h, n));
}

/* Writes the word filter of the data block just written, if the block
 * gets one, right after it; *fsize stays 0 if not. */
static int write_filter(struct sst_builder *b, uint64_t *foff, uint64_t *fsize)
{
    if (!b->has_words)
        return ERR_OK;
    buf_reset(&b->filter);
    bool has = wfilter_finish(&b->words, &b->filter);
    wfilter_builder_reset(&b->words);
    if (!has)
        return ERR_OK;
    size_t start = b->out.len;
    codec_encode_raw(slice_make(b->filter.data, b->filter.len), &b->out);
    return end_block(b, start, foff, fsize);
}

static int flush_data(struct sst_builder *b)
{
    if (b->data.count == 0)
        return ERR_OK;
    uint64_t off, size, foff = 0, fsize = 0;
    int rc = write_block(b, blk_finish(&b->data), true, &off, &size);
    if (!rc)
        rc = write_filter(b, &foff, &fsize);
    if (rc)
        return rc;
    /* the data builder still holds the block's last key until its reset */
    add_index(b, slice_make(b->data.last_key.data, b->data.last_key.len), off, size, foff, fsize);
    blk_builder_reset(&b->data);
    return ERR_OK;
}

static void add_hash(struct sst_builder *b, struct slice ukey)
{
    if (b->opts.no_bloom || b->opts.empty_bloom)
        return;
    if (b->opts.bloom_key)
        ukey.len = b->opts.bloom_key(ukey);
    uint64_t h = bloom_hash(ukey);
    if (b->nhashes && h == b->last_hash)
        return; /* another version of the same key */
    if (b->nhashes == b->hcap) {
        b->hcap = b->hcap ? b->hcap * 2 : 1024;
        b->hashes = xrealloc(b->hashes, b->hcap * sizeof *b->hashes);
    }
    b->hashes[b->nhashes++] = h;
    b->last_hash = h;
}

/* Counts a row in the bloom filter and the properties. */
static void note_row(struct sst_builder *b, struct slice ikey, struct slice value, int64_t ts)
{
    add_hash(b, ikey_user(ikey));
    if (b->opts.observer)
        b->opts.observer->entry(b->opts.observer, ikey, value, ts);
    if (b->section)
        b->section->entry(b->section, ikey, value, ts);
    b->props.entries++;
    if (ikey_kind(ikey) == IKEY_DEL)
        b->props.deletes++;
    if (ts < b->props.min_ts)
        b->props.min_ts = ts;
    if (ts > b->props.max_ts)
        b->props.max_ts = ts;
}

int sst_add(struct sst_builder *b, struct slice ikey, struct slice value, int64_t ts)
{
    blk_add(&b->data, ikey, value);
    note_row(b, ikey, value, ts);
    if (b->has_words)
        wfilter_add(&b->words, ikey, value);
    if (blk_size(&b->data) >= SST_BLOCK_SIZE)
        return flush_data(b);
    return ERR_OK;
}

int sst_add_block(struct sst_builder *b, struct slice stored, struct slice raw,
                  struct slice last_key, struct slice filter,
                  int64_t (*ts_of)(const void *ctx, struct slice ukey), const void *ctx)
{
    if (stored.len <= CODEC_TRAILER)
        return err_corrupt("%s: copied block of %zu bytes", b->path, stored.len);
    if (filter.len && b->has_words) { /* its checksum, before it is copied on */
        int frc = codec_decode(filter, b->path, 0, &b->filter);
        if (!frc && !wfilter_ok(slice_make(b->filter.data, b->filter.len)))
            frc = err_corrupt("%s: copied word filter malformed", b->path);
        if (frc)
            return frc;
    }
    struct blk blk;
    int rc = blk_parse(raw, &blk);
    if (rc)
        return rc;
    rc = flush_data(b); /* rows added one by one come first */
    if (rc)
        return rc;
    /* counted as the keys go by; put back if the block is refused */
    struct sst_props saved = b->props;
    size_t nhashes = b->nhashes;
    uint64_t last_hash = b->last_hash;
    struct iter *it = blk_iter(&blk);
    bool at_last = false;
    for (it_seek_first(it); it_valid(it) && !rc; it_next(it)) {
        struct slice k = it_key(it);
        if (!ikey_ok(k))
            rc = err_corrupt("%s: bad key in a copied block", b->path);
        else
            note_row(b, k, it_value(it), ts_of(ctx, ikey_user(k)));
        at_last = slice_eq(k, last_key);
    }
    if (!rc)
        rc = it_status(it);
    it_destroy(it);
    if (!rc && !at_last)
        rc = err_corrupt("%s: a copied block does not end with its index key", b->path);
    if (rc) {
        b->props = saved;
        b->nhashes = nhashes;
        b->last_hash = last_hash;
        return rc;
    }
    uint64_t off = b->offset, foff = 0, fsize = 0;
    buf_append(&b->out, stored.ptr, stored.len);
    b->offset += stored.len;
    if (filter.len && b->has_words) { /* the block's entries are the same */
        foff = b->offset;
        fsize = filter.len - CODEC_TRAILER;
        buf_append(&b->out, filter.ptr, filter.len);
        b->offset += filter.len;
    }
    add_index(b, last_key, off, stored.len - CODEC_TRAILER, foff, fsize);
    return b->out.len >= SST_WRITE_BYTES ? write_out(b) : ERR_OK;
}

uint64_t sst_builder_bytes(const struct sst_builder *b)
{
    return b->offset;
}

uint64_t sst_builder_entries(const struct sst_builder *b)
{
    return b->props.entries;
}

/* The section's blocks, as the data blocks are cut (SST_BLOCK_SIZE), with
 * a section's columnar layout. */
struct sec_writer {
    struct sst_builder *b;
    struct blk_builder blk, index;
};

static int sec_flush(struct sec_writer *w)
{
    if (w->blk.count == 0)
        return ERR_OK;
    uint64_t off, size;
    int rc = write_block_as(w->b, blk_finish(&w->blk), COL_SECTION, &off, &size);
    if (rc)
        return rc;
    char h[20];
    size_t n = coding_varint_enc(h, off);
    n += coding_varint_enc(h + n, size);
    blk_add(&w->index, slice_make(w->blk.last_key.data, w->blk.last_key.len), slice_make(h, n));
    blk_builder_reset(&w->blk);
    return ERR_OK;
}

static int sec_put(void *arg, struct slice ikey, struct slice value)
{
    struct sec_writer *w = arg;
    blk_add(&w->blk, ikey, value);
    return blk_size(&w->blk) >= SST_BLOCK_SIZE ? sec_flush(w) : ERR_OK;
}

/* Writes the section's blocks, if the builder has one with entries, and
 * its trailer into tr (FORMAT.md, "Host section"), to go after the
 * catalog block; *wrote says whether it did. */
static int write_section(struct sst_builder *b, char tr[SST_SECTION_TRAILER], bool *wrote)
{
    *wrote = false;
    if (!b->section)
        return ERR_OK;
    struct sec_writer w = {.b = b};
    blk_builder_init(&w.blk);
    blk_builder_init(&w.index);
    struct buf names = BUF_INIT;
    uint64_t ioff = 0, isize = 0, noff = 0, nsize = 0;
    int rc = b->section->finish(b->section, sec_put, &w, &names);
    if (rc == ERR_NOTFOUND || (rc == ERR_OK && w.blk.count == 0 && w.index.count == 0)) {
        rc = ERR_OK;
        goto done;
    }
    if (!rc)
        rc = sec_flush(&w);
    if (!rc)
        rc = write_block(b, blk_finish(&w.index), false, &ioff, &isize);
    if (!rc)
        rc = write_block(b, slice_make(names.data, names.len), false, &noff, &nsize);
    if (!rc) {
        coding_put_u64le(tr, ioff);
        coding_put_u64le(tr + 8, isize);
        coding_put_u64le(tr + 16, noff);
        coding_put_u64le(tr + 24, nsize);
        coding_put_u32le(tr + 32, crc32c_mask(crc32c(tr, 32)));
        *wrote = true;
    }
done:
    blk_builder_destroy(&w.blk);
    blk_builder_destroy(&w.index);
    buf_destroy(&names);
    return rc;
}

static void put_footer(struct sst_builder *b, char *f, uint64_t bloom_off, uint64_t bloom_size,
                       uint64_t idx_off, uint64_t idx_size, uint32_t cat_stored)
{
    coding_put_u64le(f, idx_off);
    coding_put_u64le(f + 8, idx_size);
    coding_put_u64le(f + 16, bloom_off);
    coding_put_u64le(f + 24, bloom_size);
    coding_put_u64le(f + 32, b->props.entries);
    coding_put_u64le(f + 40, (uint64_t)b->props.min_ts);
    coding_put_u64le(f + 48, (uint64_t)b->props.max_ts);
    coding_put_u32le(f + 56, b->version);
    coding_put_u32le(f + 60, (uint32_t)b->props.deletes);
    coding_put_u32le(f + 64, crc32c_mask(crc32c(f, 64)));
    coding_put_u32le(f + 68, cat_stored);
    coding_put_u64le(f + 72, SST_MAGIC);
}

int sst_builder_finish(struct sst_builder *b, struct sst_props *out)
{
    uint64_t bloom_off, bloom_size, idx_off, idx_size;
    struct buf filter = BUF_INIT;
    int rc = flush_data(b);
    if (rc)
        goto done;
    if (!b->opts.no_bloom && !b->opts.empty_bloom) /* an empty block matches every key */
        bloom_build(b->hashes, b->nhashes, &filter);
    rc = write_block(b, slice_make(filter.data, filter.len), false, &bloom_off, &bloom_size);
    if (rc)
        goto done;
    uint64_t data_bytes = bloom_off;
    rc = write_block(b, blk_finish(&b->index), false, &idx_off, &idx_size);
    if (rc)
        goto done;
    char tr[SST_SECTION_TRAILER];
    bool section;
    if ((rc = write_section(b, tr, &section)) != ERR_OK)
        goto done;
    if (!section && b->version > SST_VERSION_PLAIN)
        b->version = SST_VERSION_PLAIN; /* the rest of version 5 is version 4 */
    /* the catalog block, directly before the footer: its stored size
     * (payload and trailer) in the footer finds it */
    uint64_t cat_off = 0, cat_size = 0;
    buf_reset(&filter);
    if (b->opts.observer)
        b->opts.observer->finish(b->opts.observer, data_bytes, &filter);
    if (filter.len &&
        (rc = write_block(b, slice_make(filter.data, filter.len), false, &cat_off, &cat_size)))
        goto done;
    if (section) {
        buf_append(&b->out, tr, sizeof tr);
        b->offset += sizeof tr;
    }
    char f[SST_FOOTER];
    put_footer(b, f, bloom_off, bloom_size, idx_off, idx_size,
               filter.len ? (uint32_t)(cat_size + CODEC_TRAILER) : 0);
    buf_append(&b->out, f, SST_FOOTER);
    rc = write_out(b);
    if (!rc)
        rc = env_sync(b->f);
    if (!rc) {
        b->props.size = b->offset + SST_FOOTER;
        if (b->props.entries == 0)
            b->props.min_ts = b->props.max_ts = 0;
        *out = b->props;
    }
done:
    buf_destroy(&filter);
    if (rc) {
        sst_builder_abandon(b);
        return rc;
    }
    builder_free(b);
    return ERR_OK;
}

void sst_builder_abandon(struct sst_builder *b)
{
    if (!b)
        return;
    env_close(b->f);
    b->f = NULL;
    env_unlink(b->env, b->path);
    builder_free(b);
}
