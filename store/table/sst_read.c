/* SSTable reader: validates the footer, keeps the index block and bloom
 * filter in memory, and loads data blocks through the block cache. The
 * table iterator is two-level: index entries name blocks, a block
 * iterator walks each; given words, it passes over the blocks whose word
 * filter rules them out. A damaged block or filter stops the iterator with
 * ERR_CORRUPT rather than skipping rows. */
#include "store/table/sst.h"

#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "model/key.h"
#include "store/ikey.h"
#include "store/table/block.h"
#include "store/table/bloom.h"
#include "store/table/cache.h"
#include "store/table/codec.h"
#include "store/table/wfilter.h"

struct sst_table {
    atomic_int refs;
    struct env_file *f;
    char *path;
    uint64_t file_size;
    struct cache *cache;
    uint64_t cache_id;
    uint64_t filter_cache_id; /* word filters: never mistaken for blocks */
    uint64_t kept_cache_id;   /* sst_section_kept_put's */
    atomic_ullong *corrupt;
    struct buf index_raw;
    struct blk index;
    struct buf index_rpfx; /* index's restart words (blk_index_restarts) */
    struct buf bloom;
    struct sst_props props;
    uint32_t version;
    uint32_t cat_stored; /* stored bytes of the catalog block, 0: none */
    bool has_section;    /* version 5: a host section (sst_section) */
    struct buf sec_raw;  /* its index block */
    struct blk sec_index;
    struct buf sec_rpfx;
    struct buf sec_names;    /* its names block, decoded */
    struct zdict_set *dicts; /* of the database, for type 4 blocks (sst_set_dicts) */
};

/* A decoded data block, owned by the cache or by one iterator. */
struct sst_block {
    struct buf raw;
    struct blk blk;
    struct buf rpfx; /* blk's restart words, when cached */
};

static void block_free(void *p)
{
    struct sst_block *b = p;
    buf_destroy(&b->raw);
    buf_destroy(&b->rpfx);
    free(b);
}

static int corrupt(struct sst_table *t, int rc)
{
    if (rc == ERR_CORRUPT && t->corrupt)
        atomic_fetch_add(t->corrupt, 1);
    return rc;
}

/* Reads the stored form (payload and trailer) of the block at (off, size)
 * into stored (reset first), checking bounds first; not decoded. */
static int read_stored_form(struct sst_table *t, uint64_t off, uint64_t size, struct buf *stored)
{
    uint64_t limit = t->file_size - SST_FOOTER;
    if (off > limit || size > limit - off || size + CODEC_TRAILER > limit - off ||
        size > CODEC_MAX_RAW)
        return err_corrupt("%s: block handle %llu+%llu out of bounds", t->path,
                           (unsigned long long)off, (unsigned long long)size);
    size_t got;
    buf_reset(stored);
    buf_reserve(stored, (size_t)size + CODEC_TRAILER);
    int rc = env_pread(t->f, off, stored->data, (size_t)size + CODEC_TRAILER, &got);
    if (!rc && got != size + CODEC_TRAILER)
        rc = err_corrupt("%s: short read of block at %llu", t->path, (unsigned long long)off);
    if (!rc)
        stored->len = got;
    return rc;
}

/* Reads and decodes the stored block at (off, size) into out. */
static int read_stored(struct sst_table *t, uint64_t off, uint64_t size, struct buf *out)
{
    struct buf stored = BUF_INIT;
    int rc = read_stored_form(t, off, size, &stored);
    if (!rc)
        rc = codec_decode_dict(slice_make(stored.data, stored.len), t->path, off, t->dicts, out);
    buf_destroy(&stored);
    return rc;
}

static int parse_footer(struct sst_table *t, const char *f, uint64_t h[4])
{
    if (coding_get_u64le(f + 72) != SST_MAGIC)
        return err_corrupt("%s: bad magic", t->path);
    if (crc32c_unmask(coding_get_u32le(f + 64)) != crc32c(f, 64))
        return err_corrupt("%s: footer checksum mismatch", t->path);
    t->version = coding_get_u32le(f + 56);
    if (t->version < 1 || t->version > SST_VERSION)
        return err_corrupt("%s: unknown format version %u", t->path, t->version);
    for (int i = 0; i < 4; i++)
        h[i] = coding_get_u64le(f + 8 * i);
    t->props.entries = coding_get_u64le(f + 32);
    t->props.min_ts = (int64_t)coding_get_u64le(f + 40);
    t->props.max_ts = (int64_t)coding_get_u64le(f + 48);
    t->props.deletes = coding_get_u32le(f + 60);
    t->props.size = t->file_size;
    t->cat_stored = coding_get_u32le(f + 68);
    return ERR_OK;
}

/* Where the catalog block ends: at the footer, or at the section trailer
 * before it (version 5). */
static uint64_t catalog_end(const struct sst_table *t)
{
    return t->file_size - SST_FOOTER - (t->version >= 5 ? SST_SECTION_TRAILER : 0);
}

/* A version 5 file's section trailer, directly before its footer: the
 * handles of the section's index and names blocks. */
static int load_section(struct sst_table *t)
{
    if (t->file_size < SST_FOOTER + SST_SECTION_TRAILER)
        return err_corrupt("%s: no room for the section trailer", t->path);
    uint64_t at = catalog_end(t);
    char tr[SST_SECTION_TRAILER];
    size_t got;
    int rc = env_pread(t->f, at, tr, sizeof tr, &got);
    if (rc)
        return rc;
    if (got != sizeof tr)
        return err_corrupt("%s: short section trailer", t->path);
    if (crc32c_unmask(coding_get_u32le(tr + 32)) != crc32c(tr, 32))
        return err_corrupt("%s: section trailer checksum mismatch", t->path);
    rc = read_stored(t, coding_get_u64le(tr), coding_get_u64le(tr + 8), &t->sec_raw);
    if (!rc)
        rc = blk_parse(slice_make(t->sec_raw.data, t->sec_raw.len), &t->sec_index);
    if (!rc)
        blk_index_restarts(&t->sec_index, &t->sec_rpfx);
    if (!rc)
        rc = read_stored(t, coding_get_u64le(tr + 16), coding_get_u64le(tr + 24), &t->sec_names);
    t->has_section = rc == ERR_OK;
    return rc;
}

static int load_meta(struct sst_table *t)
{
    char f[SST_FOOTER];
    size_t got;
    uint64_t h[4];
    if (t->file_size < SST_FOOTER)
        return err_corrupt("%s: file of %llu bytes", t->path, (unsigned long long)t->file_size);
    int rc = env_pread(t->f, t->file_size - SST_FOOTER, f, SST_FOOTER, &got);
    if (rc)
        return rc;
    if (got != SST_FOOTER)
        return err_corrupt("%s: short footer", t->path);
    rc = parse_footer(t, f, h);
    if (!rc)
        rc = read_stored(t, h[0], h[1], &t->index_raw);
    if (!rc)
        rc = blk_parse(slice_make(t->index_raw.data, t->index_raw.len), &t->index);
    if (!rc)
        blk_index_restarts(&t->index, &t->index_rpfx);
    if (!rc)
        rc = read_stored(t, h[2], h[3], &t->bloom);
    if (!rc && t->version >= 5)
        rc = load_section(t);
    return rc;
}

int sst_open(struct env *env, const char *path, struct cache *cache, atomic_ullong *corrupt_count,
             struct sst_table **out)
{
    struct sst_table *t = xcalloc(1, sizeof *t);
    atomic_init(&t->refs, 1);
    t->path = xstrdup(path);
    t->cache = cache;
    t->corrupt = corrupt_count;
    int rc = env_open_read(env, path, &t->f);
    if (!rc)
        rc = env_size(t->f, &t->file_size);
    if (!rc)
        rc = load_meta(t);
    if (rc) {
        corrupt(t, rc);
        sst_unref(t);
        return rc;
    }
    t->cache_id = cache ? cache_new_id(cache) : 0;
    t->filter_cache_id = cache ? cache_new_id(cache) : 0;
    t->kept_cache_id = cache && t->has_section ? cache_new_id(cache) : 0;
    *out = t;
    return ERR_OK;
}

void sst_ref(struct sst_table *t)
{
    atomic_fetch_add(&t->refs, 1);
}

void sst_unref(struct sst_table *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    if (t->cache && t->cache_id)
        cache_erase_id(t->cache, t->cache_id);
    if (t->cache && t->filter_cache_id)
        cache_erase_id(t->cache, t->filter_cache_id);
    if (t->cache && t->kept_cache_id)
        cache_erase_id(t->cache, t->kept_cache_id);
    env_close(t->f);
    buf_destroy(&t->index_raw);
    buf_destroy(&t->index_rpfx);
    buf_destroy(&t->sec_raw);
    buf_destroy(&t->sec_rpfx);
    buf_destroy(&t->sec_names);
    buf_destroy(&t->bloom);
    zdict_set_unref(t->dicts);
    free(t->path);
    free(t);
}

void sst_set_dicts(struct sst_table *t, struct zdict_set *dicts)
{
    if (dicts)
        zdict_set_ref(dicts);
    zdict_set_unref(t->dicts);
    t->dicts = dicts;
}

const struct sst_props *sst_get_props(const struct sst_table *t)
{
    return &t->props;
}

/* --- data blocks --- */

static int decode_handle(struct slice v, uint64_t *off, uint64_t *size)
{
    const char *p = coding_varint_dec(v.ptr, v.ptr + v.len, off);
    if (p)
        p = coding_varint_dec(p, v.ptr + v.len, size);
    return p ? ERR_OK : err_corrupt("bad block handle");
}

/* The handle of the word filter in an index value of a version 3 table:
 * *fsize 0 if the block has none. */
static int decode_filter_handle(const struct sst_table *t, struct slice v, uint64_t *foff,
                                uint64_t *fsize)
{
    uint64_t x;
    const char *end = v.ptr + v.len, *p = coding_varint_dec(v.ptr, end, &x);
    if (p)
        p = coding_varint_dec(p, end, &x);
    *foff = *fsize = 0;
    if (p && p < end) {
        p = coding_varint_dec(p, end, foff);
        if (p)
            p = coding_varint_dec(p, end, fsize);
        if (p && (p != end || *fsize == 0))
            p = NULL;
    }
    return p ? ERR_OK : err_corrupt("%s: bad block handle", t->path);
}

static void filter_free(void *p)
{
    buf_destroy(p);
    free(p);
}

/* *may: whether the block of index value v may hold a row with each of
 * the n words (true without a filter). The filter is read through the
 * cache; ERR_CORRUPT if it is damaged. */
static int block_may_match(struct sst_table *t, struct slice v, const struct word_hashes *words,
                           size_t n, bool *may)
{
    uint64_t foff, fsize;
    *may = true;
    if (t->version < 3 || n == 0)
        return ERR_OK;
    int rc = decode_filter_handle(t, v, &foff, &fsize);
    if (rc || fsize == 0)
        return corrupt(t, rc);
    struct cache_handle *ch = t->cache ? cache_lookup(t->cache, t->filter_cache_id, foff) : NULL;
    struct buf *f;
    if (ch) {
        f = cache_value(ch);
    } else {
        f = xcalloc(1, sizeof *f);
        rc = read_stored(t, foff, fsize, f);
        if (!rc && !wfilter_ok(slice_make(f->data, f->len)))
            rc =
                err_corrupt("%s: word filter at %llu malformed", t->path, (unsigned long long)foff);
        if (rc) {
            filter_free(f);
            return corrupt(t, rc);
        }
        if (t->cache)
            ch = cache_insert(t->cache, t->filter_cache_id, foff, f, f->cap + sizeof *f,
                              filter_free);
    }
    *may = wfilter_may_match(slice_make(f->data, f->len), words, n);
    if (ch)
        cache_release(t->cache, ch);
    else
        filter_free(f);
    return ERR_OK;
}

static int load_block(struct sst_table *t, uint64_t off, uint64_t size, struct sst_block **out)
{
    struct sst_block *b = xcalloc(1, sizeof *b);
    int rc = read_stored(t, off, size, &b->raw);
    if (!rc)
        rc = blk_parse(slice_make(b->raw.data, b->raw.len), &b->blk);
    if (rc) {
        block_free(b);
        return corrupt(t, rc);
    }
    *out = b;
    return ERR_OK;
}

static void release_cached(void *c, void *h)
{
    cache_release(c, h);
}

static void release_owned(void *b, void *unused)
{
    (void)unused;
    block_free(b);
}

/* The block named by an index value, through the cache: *ch holds it in the
 * cache (NULL: no cache, and the caller owns *b, block_free). */
static int fetch_block(struct sst_table *t, struct slice handle, struct sst_block **b,
                       struct cache_handle **ch)
{
    uint64_t off = 0, size = 0;
    int rc = decode_handle(handle, &off, &size);
    if (rc)
        return corrupt(t, rc);
    *ch = t->cache ? cache_lookup(t->cache, t->cache_id, off) : NULL;
    if (*ch) {
        *b = cache_value(*ch);
        return ERR_OK;
    }
    rc = load_block(t, off, size, b);
    if (rc)
        return rc;
    if (t->cache) {
        /* kept for many seeks: worth the index of its restart keys */
        blk_index_restarts(&(*b)->blk, &(*b)->rpfx);
        *ch = cache_insert(t->cache, t->cache_id, off, *b,
                           (*b)->raw.cap + (*b)->rpfx.cap + sizeof **b, block_free);
    }
    return ERR_OK;
}

/* An iterator over the block named by an index value, through the cache. */
static struct iter *block_iter(struct sst_table *t, struct slice handle)
{
    struct sst_block *b;
    struct cache_handle *ch;
    int rc = fetch_block(t, handle, &b, &ch);
    if (rc)
        return it_new_error(rc);
    struct iter *it = blk_iter(&b->blk);
    if (ch)
        it_on_destroy(it, release_cached, t->cache, ch);
    else
        it_on_destroy(it, release_owned, b, NULL);
    return it;
}

int sst_get(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind, struct buf *out)
{
    uint64_t seq;
    return sst_get_seq(t, ukey, max_seq, kind, out, &seq);
}

uint32_t sst_version(const struct sst_table *t)
{
    return t->version;
}

int sst_read_catalog(struct sst_table *t, struct buf *out)
{
    uint64_t n = t->cat_stored, end = catalog_end(t);
    if (n == 0)
        return ERR_NOTFOUND;
    if (n <= CODEC_TRAILER || n > end)
        return corrupt(t, err_corrupt("%s: catalog block of %llu bytes", t->path,
                                      (unsigned long long)n));
    return corrupt(t, read_stored(t, end - n, n - CODEC_TRAILER, out));
}

bool sst_may_contain(const struct sst_table *t, struct slice bkey)
{
    return bloom_may_match(slice_make(t->bloom.data, t->bloom.len), bloom_hash(bkey));
}

int sst_get_seq(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind,
                struct buf *out, uint64_t *seq)
{
    if (!sst_may_contain(t, ukey))
        return ERR_NOTFOUND;
    return sst_find_seq(t, ukey, max_seq, kind, out, seq);
}

int sst_find_seq(struct sst_table *t, struct slice ukey, uint64_t max_seq, int *kind,
                 struct buf *out, uint64_t *seq)
{
    struct buf target = BUF_INIT;
    ikey_append(&target, ukey, max_seq, 0);
    struct slice tk = slice_make(target.data, target.len);
    struct iter *idx = blk_iter(&t->index);
    int rc = ERR_NOTFOUND;
    it_seek(idx, tk);
    if (it_valid(idx)) {
        struct iter *bi = block_iter(t, it_value(idx));
        it_seek(bi, tk);
        if (it_valid(bi)) {
            struct slice k = it_key(bi);
            if (!ikey_ok(k)) {
                rc = corrupt(t, err_corrupt("%s: bad internal key", t->path));
            } else if (slice_eq(ikey_user(k), ukey)) {
                *kind = ikey_kind(k);
                *seq = ikey_seq(k);
                buf_append(out, it_value(bi).ptr, it_value(bi).len);
                rc = ERR_OK;
            }
        }
        if (it_status(bi))
            rc = it_status(bi);
        it_destroy(bi);
    }
    if (it_status(idx))
        rc = corrupt(t, it_status(idx));
    it_destroy(idx);
    buf_destroy(&target);
    return rc;
}

/* --- two-level iterator --- */

struct sst_it {
    struct iter base;
    struct sst_table *t;
    struct iter *index;
    struct iter *data; /* NULL when not positioned in a block */
    /* what holds data's block: a cache handle, or the block itself (no
     * cache); and a block iterator kept for the next block (blk_iter_on) */
    struct cache_handle *data_ch;
    struct sst_block *data_owned;
    struct iter *spare;
    /* the index value (block handle) of data's block: a seek that lands in
     * it again reuses data instead of fetching the block again */
    char handle[2 * 10];
    size_t handle_len;
    int status;
    struct sst_read_opts opts; /* words to skip blocks by, counters */
    /* the entries a block iterator stops at: of opts.events, and in a
     * block of log rows (need_here) holding opts.need (keep_log searches
     * the block for the longest of them) */
    struct blk_keep keep_log, keep_any;
    bool need_here;
    bool section; /* sst_section_iter's (no options) */
};

/* Leaves the block data is in: its status kept, its block let go, the
 * iterator kept as the spare. */
static void drop_data(struct sst_it *s)
{
    s->handle_len = 0;
    if (!s->data)
        return;
    if (!s->status)
        s->status = it_status(s->data);
    if (s->data_ch)
        cache_release(s->t->cache, s->data_ch);
    else if (s->data_owned)
        block_free(s->data_owned);
    s->data_ch = NULL;
    s->data_owned = NULL;
    if (s->spare)
        it_destroy(s->data);
    else
        s->spare = s->data;
    s->data = NULL;
}

/* Positions data in the block named by handle (unpositioned in it), with
 * the spare iterator when there is one; false (and the status set) if the
 * block cannot be read. */
static bool enter_block(struct sst_it *s, struct slice handle)
{
    struct sst_block *b;
    struct cache_handle *ch;
    int rc = fetch_block(s->t, handle, &b, &ch);
    if (rc) {
        if (!s->status)
            s->status = rc;
        return false;
    }
    if (s->spare) {
        s->data = s->spare;
        s->spare = NULL;
        blk_iter_on(s->data, &b->blk);
    } else {
        s->data = blk_iter(&b->blk);
    }
    s->data_ch = ch;
    s->data_owned = ch ? NULL : b;
    return true;
}

/* Whether the words rule out the block at the index position; a damaged
 * filter stops the iterator. */
static bool skip_block(struct sst_it *s)
{
    bool may;
    int rc = block_may_match(s->t, it_value(s->index), s->opts.words, s->opts.nwords, &may);
    if (rc && !s->status)
        s->status = rc;
    if (rc || may)
        return false;
    if (s->opts.blocks_skipped)
        (*s->opts.blocks_skipped)++;
    return true;
}

/* Whether the block of index value v has a word filter: its every entry
 * is a log row (wfilter.h). */
static bool block_has_filter(const struct sst_table *t, struct slice v)
{
    uint64_t foff, fsize;
    return t->version >= 3 && decode_filter_handle(t, v, &foff, &fsize) == ERR_OK && fsize > 0;
}

/* Whether a row key's event is one of the set; a key that is not a row
 * key is kept (the reader above reports it). */
static bool event_wanted(const struct sst_read_opts *o, struct slice ikey)
{
    if (!ikey_ok(ikey))
        return true;
    struct slice ev = key_row_event(ikey_user(ikey));
    return !ev.len || slices_has(o->events, o->nevents, ev);
}

/* blk_keep's test: the row's event is wanted and, in a block of log rows,
 * its bytes hold every needed text. */
static bool entry_kept(const void *arg, struct slice key, struct slice value)
{
    const struct sst_it *s = arg;
    const struct sst_read_opts *o = &s->opts;
    if (o->nevents && !event_wanted(o, key))
        return false;
    if (s->need_here)
        for (size_t i = 0; i < o->nneed; i++)
            if (!words_contains_folded(key, o->need[i]) &&
                !words_contains_folded(value, o->need[i]))
                return false;
    return true;
}

/* Opens the block at the index position, or the next one in direction
 * step (+1 or -1) that the words do not rule out (a skipped block is
 * passed as if it were empty); false (data NULL) at the end or on error. */
static bool open_block(struct sst_it *s, int step)
{
    drop_data(s);
    while (it_valid(s->index) && s->opts.nwords && skip_block(s)) {
        if (step > 0)
            it_next(s->index);
        else
            it_prev(s->index);
    }
    if (s->status || !it_valid(s->index))
        return false;
    struct slice h = it_value(s->index);
    if (!enter_block(s, h))
        return false;
    s->need_here = s->opts.nneed && block_has_filter(s->t, h);
    if (s->need_here)
        blk_iter_keep(s->data, &s->keep_log);
    else if (s->opts.nevents)
        blk_iter_keep(s->data, &s->keep_any);
    if (h.len <= sizeof(s->handle)) {
        memcpy(s->handle, h.ptr, h.len);
        s->handle_len = h.len;
    }
    if (s->opts.blocks_read)
        (*s->opts.blocks_read)++;
    return true;
}

static bool stop_on_error(struct sst_it *s)
{
    if (s->status)
        return true;
    if (s->data && it_status(s->data)) {
        drop_data(s);
        return true;
    }
    if (it_status(s->index)) {
        s->status = it_status(s->index);
        drop_data(s);
        return true;
    }
    return false;
}

static void skip_empty_forward(struct sst_it *s)
{
    while (!stop_on_error(s) && s->data && !it_valid(s->data)) {
        it_next(s->index);
        if (!open_block(s, 1))
            return;
        it_seek_first(s->data);
    }
}

static void skip_empty_backward(struct sst_it *s)
{
    while (!stop_on_error(s) && s->data && !it_valid(s->data)) {
        it_prev(s->index);
        if (!open_block(s, -1))
            return;
        it_seek_last(s->data);
    }
}

/* The position after a move: the open block's entry, or none. */
static void publish(struct sst_it *s)
{
    if (!s->status && s->data && it_valid(s->data))
        it_set_as(&s->base, s->data);
    else
        it_set_end(&s->base);
}

static void si_seek_first(struct iter *it)
{
    struct sst_it *s = (struct sst_it *)it;
    it_seek_first(s->index);
    if (open_block(s, 1))
        it_seek_first(s->data);
    skip_empty_forward(s);
    publish(s);
}

static void si_seek_last(struct iter *it)
{
    struct sst_it *s = (struct sst_it *)it;
    it_seek_last(s->index);
    if (open_block(s, -1))
        it_seek_last(s->data);
    skip_empty_backward(s);
    publish(s);
}

static void si_seek(struct iter *it, struct slice target)
{
    struct sst_it *s = (struct sst_it *)it;
    it_seek(s->index, target);
    if (s->data && s->handle_len && !s->status && !it_status(s->data) && it_valid(s->index) &&
        slice_eq(it_value(s->index), slice_make(s->handle, s->handle_len))) {
        /* the block already open: no fetch, no decode (a forward cursor) */
        it_seek(s->data, target);
        skip_empty_forward(s);
        publish(s);
        return;
    }
    /* past a skipped block every key is above target: the seek lands on
     * the first entry of the block opened */
    if (open_block(s, 1))
        it_seek(s->data, target);
    skip_empty_forward(s);
    publish(s);
}

/* A block iterator that stays valid has no error to report: only its end
 * or a bad entry needs the slow path. */
static void si_next(struct iter *it)
{
    struct sst_it *s = (struct sst_it *)it;
    it_next(s->data);
    if (it_valid(s->data)) {
        it_set_as(it, s->data);
        return;
    }
    skip_empty_forward(s);
    publish(s);
}

static void si_prev(struct iter *it)
{
    struct sst_it *s = (struct sst_it *)it;
    it_prev(s->data);
    if (!it_valid(s->data))
        skip_empty_backward(s);
    publish(s);
}

/* it_run within the current block. */
static bool si_run(struct iter *it, size_t keep, it_run_fn fn, void *arg)
{
    struct sst_it *s = (struct sst_it *)it;
    if (s->status || !s->data || !it_valid(s->data))
        return false;
    bool refused = it_run(s->data, keep, fn, arg);
    it_set_as(it, s->data);
    return refused;
}

static int si_status(const struct iter *it)
{
    const struct sst_it *s = (const struct sst_it *)it;
    if (s->status)
        return s->status;
    if (s->data && it_status(s->data))
        return it_status(s->data);
    return it_status(s->index);
}

static void si_destroy(struct iter *it)
{
    struct sst_it *s = (struct sst_it *)it;
    drop_data(s);
    it_destroy(s->spare);
    it_destroy(s->index);
    sst_unref(s->t);
    free(s);
}

static const struct it_ops sst_it_ops = {
    .seek_first = si_seek_first,
    .seek_last = si_seek_last,
    .seek = si_seek,
    .next = si_next,
    .prev = si_prev,
    .status = si_status,
    .destroy = si_destroy,
    .run = si_run,
};

struct iter *sst_iter(struct sst_table *t)
{
    return sst_iter_opts(t, NULL);
}

bool sst_has_section(const struct sst_table *t)
{
    return t->has_section;
}

struct iter *sst_section_iter(struct sst_table *t)
{
    if (!t->has_section)
        return it_new_empty();
    struct sst_it *s = xcalloc(1, sizeof *s);
    it_init(&s->base, &sst_it_ops);
    sst_ref(t);
    s->t = t;
    s->index = blk_iter(&t->sec_index);
    s->section = true;
    return &s->base;
}

struct iter *sst_section_iter_again(struct iter *it, struct sst_table *t)
{
    if (!it || it->ops != &sst_it_ops || !((struct sst_it *)it)->section || it->cleanups ||
        !t->has_section) {
        it_destroy(it);
        return sst_section_iter(t);
    }
    struct sst_it *s = (struct sst_it *)it;
    drop_data(s); /* its block back to the old table's cache */
    sst_ref(t);
    sst_unref(s->t);
    s->t = t;
    blk_iter_on(s->index, &t->sec_index);
    s->status = ERR_OK;
    it_set_end(it);
    return it;
}

struct cache_handle *sst_section_kept_get(struct sst_table *t, uint64_t key, void **value)
{
    struct cache_handle *h =
        t->kept_cache_id ? cache_lookup(t->cache, t->kept_cache_id, key) : NULL;
    *value = h ? cache_value(h) : NULL;
    return h;
}

struct cache_handle *sst_section_kept_put(struct sst_table *t, uint64_t key, void *value,
                                          size_t charge, void (*deleter)(void *value))
{
    if (!t->kept_cache_id)
        return NULL;
    return cache_insert(t->cache, t->kept_cache_id, key, value, charge, deleter);
}

bool sst_section_kept_room(struct sst_table *t)
{
    if (!t->kept_cache_id)
        return false;
    struct cache_stats cs;
    cache_stats(t->cache, &cs);
    return cs.bytes < cs.capacity / 4 * 3;
}

void sst_section_kept_release(struct sst_table *t, struct cache_handle *h)
{
    if (h)
        cache_release(t->cache, h);
}

struct slice sst_section_names(const struct sst_table *t)
{
    return slice_make(t->sec_names.data, t->sec_names.len);
}

/* Reads the blocks an index names into the cache, in order, while the
 * cache's bytes stay under limit (0: no limit); stops at the first error. */
static void warm_blocks(struct sst_table *t, struct blk *index, uint64_t limit)
{
    struct iter *idx = blk_iter(index);
    struct cache_stats cs = {0};
    for (it_seek_first(idx); it_valid(idx); it_next(idx)) {
        if (limit) {
            cache_stats(t->cache, &cs);
            if (cs.bytes >= limit)
                break;
        }
        struct sst_block *b;
        struct cache_handle *ch;
        if (fetch_block(t, it_value(idx), &b, &ch) != ERR_OK)
            break;
        if (ch)
            cache_release(t->cache, ch);
        else
            block_free(b);
    }
    it_destroy(idx);
}

void sst_warm_section(struct sst_table *t)
{
    if (t->has_section && t->cache)
        warm_blocks(t, &t->sec_index, 0);
}

void sst_warm_data(struct sst_table *t)
{
    if (!t->cache)
        return;
    struct cache_stats cs;
    cache_stats(t->cache, &cs);
    warm_blocks(t, &t->index, cs.capacity / 4 * 3);
}

struct iter *sst_iter_opts(struct sst_table *t, const struct sst_read_opts *opts)
{
    struct sst_it *s = xcalloc(1, sizeof *s);
    it_init(&s->base, &sst_it_ops);
    sst_ref(t);
    s->t = t;
    s->index = blk_iter(&t->index);
    if (opts)
        s->opts = *opts;
    if (!s->opts.words)
        s->opts.nwords = 0;
    if (!s->opts.need)
        s->opts.nneed = 0;
    if (!s->opts.events)
        s->opts.nevents = 0;
    s->keep_any = (struct blk_keep){entry_kept, s, s->opts.rows_passed, slice_make("", 0)};
    s->keep_log = s->keep_any;
    for (size_t i = 0; i < s->opts.nneed; i++) /* the longest, likely the rarest, searched for */
        if (s->opts.need[i].len > s->keep_log.need.len)
            s->keep_log.need = s->opts.need[i];
    return &s->base;
}

/* --- one pass, block by block (compaction) --- */

struct sst_scan {
    struct sst_table *t;
    struct iter *index;
    struct buf stored, raw;
    struct buf filter, fraw; /* the block's word filter: stored, decoded */
    struct blk blk;
    struct iter *data; /* NULL at the end or after an error */
    bool at_start;
    int status;
};

/* Reads the stored form of the word filter of the block at the index
 * position into s->filter (empty if it has none) and checks it. */
static int scan_filter(struct sst_scan *s)
{
    uint64_t foff = 0, fsize = 0;
    buf_reset(&s->filter);
    int rc =
        s->t->version >= 3 ? decode_filter_handle(s->t, it_value(s->index), &foff, &fsize) : ERR_OK;
    if (rc || fsize == 0)
        return rc;
    rc = read_stored_form(s->t, foff, fsize, &s->filter);
    if (!rc)
        rc = codec_decode(slice_make(s->filter.data, s->filter.len), s->t->path, foff, &s->fraw);
    if (!rc && !wfilter_ok(slice_make(s->fraw.data, s->fraw.len)))
        rc = err_corrupt("%s: word filter at %llu malformed", s->t->path, (unsigned long long)foff);
    if (rc)
        buf_reset(&s->filter);
    return rc;
}

static void scan_fail(struct sst_scan *s, int rc)
{
    if (!s->status)
        s->status = corrupt(s->t, rc);
    it_destroy(s->data);
    s->data = NULL;
}

/* Loads the block at the index position, or the next one that has entries;
 * data stays NULL at the end. */
static void scan_load(struct sst_scan *s)
{
    it_destroy(s->data);
    s->data = NULL;
    for (; it_valid(s->index); it_next(s->index)) {
        uint64_t off = 0, size = 0;
        int rc = decode_handle(it_value(s->index), &off, &size);
        if (!rc)
            rc = read_stored_form(s->t, off, size, &s->stored);
        if (!rc)
            rc = codec_decode_dict(slice_make(s->stored.data, s->stored.len), s->t->path, off,
                                   s->t->dicts, &s->raw);
        if (!rc)
            rc = blk_parse(slice_make(s->raw.data, s->raw.len), &s->blk);
        if (!rc)
            rc = scan_filter(s);
        if (rc) {
            scan_fail(s, rc);
            return;
        }
        s->data = blk_iter(&s->blk);
        it_seek_first(s->data);
        if (it_valid(s->data)) {
            s->at_start = true;
            return;
        }
        if (it_status(s->data)) {
            scan_fail(s, it_status(s->data));
            return;
        }
        it_destroy(s->data);
        s->data = NULL;
    }
    if (it_status(s->index))
        scan_fail(s, it_status(s->index));
}

struct sst_scan *sst_scan_new(struct sst_table *t)
{
    struct sst_scan *s = xcalloc(1, sizeof *s);
    sst_ref(t);
    s->t = t;
    s->index = blk_iter(&t->index);
    it_seek_first(s->index);
    scan_load(s);
    return s;
}

void sst_scan_free(struct sst_scan *s)
{
    if (!s)
        return;
    it_destroy(s->data);
    it_destroy(s->index);
    buf_destroy(&s->stored);
    buf_destroy(&s->raw);
    buf_destroy(&s->filter);
    buf_destroy(&s->fraw);
    sst_unref(s->t);
    free(s);
}

bool sst_scan_valid(const struct sst_scan *s)
{
    return s->data != NULL;
}

int sst_scan_status(const struct sst_scan *s)
{
    return s->status;
}

struct slice sst_scan_key(const struct sst_scan *s)
{
    return it_key(s->data);
}

struct slice sst_scan_value(const struct sst_scan *s)
{
    return it_value(s->data);
}

void sst_scan_next(struct sst_scan *s)
{
    s->at_start = false;
    it_next(s->data);
    if (it_valid(s->data))
        return;
    if (it_status(s->data)) {
        scan_fail(s, it_status(s->data));
        return;
    }
    sst_scan_next_block(s);
}

bool sst_scan_block_start(const struct sst_scan *s)
{
    return s->at_start;
}

struct slice sst_scan_block_stored(const struct sst_scan *s)
{
    return slice_make(s->stored.data, s->stored.len);
}

struct slice sst_scan_block_raw(const struct sst_scan *s)
{
    return slice_make(s->raw.data, s->raw.len);
}

struct slice sst_scan_block_last(const struct sst_scan *s)
{
    return it_key(s->index);
}

struct slice sst_scan_block_filter(const struct sst_scan *s)
{
    return slice_make(s->filter.data, s->filter.len);
}

void sst_scan_next_block(struct sst_scan *s)
{
    it_next(s->index);
    scan_load(s);
}
