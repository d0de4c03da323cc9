/* Block builder and block iterator. The iterator keeps the current entry's
 * offset and whole key; prev re-scans from the restart point before it. */
#include "store/table/block.h"

#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "model/words.h"

void blk_builder_init(struct blk_builder *b)
{
    buf_init(&b->data);
    buf_init(&b->last_key);
    b->restarts = NULL;
    b->cap = 0;
    blk_builder_reset(b);
}

void blk_builder_destroy(struct blk_builder *b)
{
    buf_destroy(&b->data);
    buf_destroy(&b->last_key);
    free(b->restarts);
}

void blk_builder_reset(struct blk_builder *b)
{
    buf_reset(&b->data);
    buf_reset(&b->last_key);
    b->nrestarts = 0;
    b->counter = 0;
    b->count = 0;
}

static void add_restart(struct blk_builder *b)
{
    if (b->nrestarts == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->restarts = xrealloc(b->restarts, b->cap * sizeof *b->restarts);
    }
    b->restarts[b->nrestarts++] = (uint32_t)b->data.len;
}

/* Length of the common prefix of a[0..n) and b[0..n), 8 bytes at a time. */
static size_t common_prefix(const char *a, const char *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) {
            /* the first differing byte: lowest bits when little-endian */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            return i + (size_t)(__builtin_clzll(x ^ y) >> 3);
#else
            return i + (size_t)(__builtin_ctzll(x ^ y) >> 3);
#endif
        }
    }
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

void blk_add(struct blk_builder *b, struct slice key, struct slice value)
{
    size_t shared = 0;
    if (b->counter == 0) {
        add_restart(b);
    } else {
        size_t n = key.len < b->last_key.len ? key.len : b->last_key.len;
        shared = common_prefix(key.ptr, b->last_key.data, n);
    }
    if (++b->counter == BLK_RESTART_EVERY)
        b->counter = 0;
    size_t unshared = key.len - shared;
    buf_reserve(&b->data, 30 + unshared + value.len);
    char *p = b->data.data + b->data.len;
    p += coding_varint_enc(p, shared);
    p += coding_varint_enc(p, unshared);
    p += coding_varint_enc(p, value.len);
    memcpy(p, key.ptr + shared, unshared);
    p += unshared;
    if (value.len)
        memcpy(p, value.ptr, value.len);
    p += value.len;
    b->data.len = (size_t)(p - b->data.data);
    b->last_key.len = shared;
    buf_append(&b->last_key, key.ptr + shared, unshared);
    b->count++;
}

size_t blk_size(const struct blk_builder *b)
{
    return b->data.len + 4 * (b->nrestarts + 1);
}

struct slice blk_finish(struct blk_builder *b)
{
    if (b->nrestarts == 0)
        add_restart(b);
    buf_reserve(&b->data, 4 * (b->nrestarts + 1));
    for (size_t i = 0; i < b->nrestarts; i++) {
        coding_put_u32le(b->data.data + b->data.len, b->restarts[i]);
        b->data.len += 4;
    }
    coding_put_u32le(b->data.data + b->data.len, (uint32_t)b->nrestarts);
    b->data.len += 4;
    return slice_make(b->data.data, b->data.len);
}

int blk_parse(struct slice data, struct blk *out)
{
    if (data.len < 4)
        return err_corrupt("block of %zu bytes", data.len);
    uint32_t n = coding_get_u32le(data.ptr + data.len - 4);
    if (n == 0 || n > (data.len - 4) / 4)
        return err_corrupt("block restart count %u in %zu bytes", n, data.len);
    out->data = data.ptr;
    out->nrestarts = n;
    out->restart_off = data.len - 4 - 4 * (size_t)n;
    out->rpfx = NULL;
    out->rpfx2 = NULL;
    out->pfx = NULL;
    out->pfx_len = 0;
    return ERR_OK;
}

/* The key of restart point i of b, read in place (stored whole there);
 * false if the entry is bad. */
static bool blk_restart_key(const struct blk *b, uint32_t i, struct slice *key)
{
    uint32_t off = coding_get_u32le(b->data + b->restart_off + 4 * (size_t)i);
    const char *p = b->data + off, *end = b->data + b->restart_off;
    uint32_t shared = 1, unshared = 0, vlen = 0;
    if (off < b->restart_off && (p = coding_varint32_dec(p, end, &shared)) &&
        (p = coding_varint32_dec(p, end, &unshared)) && (p = coding_varint32_dec(p, end, &vlen)) &&
        shared == 0 && (size_t)(end - p) >= (size_t)unshared + vlen) {
        *key = slice_make(p, unshared);
        return true;
    }
    return false;
}

/* The 8 bytes of k from off on (zero padded) as a big-endian word. */
static uint64_t word_at(struct slice k, size_t off)
{
    return off < k.len ? coding_get_u64be_padded(k.ptr + off, k.len - off) : 0;
}

void blk_index_restarts(struct blk *b, struct buf *space)
{
    struct slice first, last, k;
    if (b->nrestarts < 4 || !blk_restart_key(b, 0, &first) ||
        !blk_restart_key(b, b->nrestarts - 1, &last))
        return;
    size_t n = first.len < last.len ? first.len : last.len, common = 0;
    while (common < n && first.ptr[common] == last.ptr[common])
        common++;
    size_t nr = b->nrestarts, ties = 0;
    buf_reset(space);
    buf_reserve(space, nr * sizeof(uint64_t));
    uint64_t *v = (uint64_t *)(void *)space->data;
    for (uint32_t i = 0; i < nr; i++) {
        if (!blk_restart_key(b, i, &k) || k.len < common)
            return;
        v[i] = word_at(k, common);
        ties += i && v[i] == v[i - 1];
    }
    if (ties * 4 >= nr) { /* a quarter of the probes would read keys: a second word */
        buf_reserve(space, 2 * nr * sizeof(uint64_t));
        v = (uint64_t *)(void *)space->data;
        for (uint32_t i = 0; i < nr; i++) {
            blk_restart_key(b, i, &k); /* read well above */
            v[nr + i] = word_at(k, common + 8);
        }
        b->rpfx2 = v + nr;
    }
    space->len = (b->rpfx2 ? 2 : 1) * nr * sizeof(uint64_t);
    b->rpfx = v;
    b->pfx = first.ptr;
    b->pfx_len = common;
}

/* --- iterator --- */

struct blk_it {
    struct iter base;
    struct blk b;
    size_t cur;       /* offset of the current entry; restart_off when invalid */
    size_t next;      /* offset after it */
    uint32_t restart; /* restart index at or before cur */
    struct buf key;
    struct slice value;
    int status;
    const struct blk_keep *keep; /* NULL: every entry */
    /* where keep->need starts in the block's entries (uint32_t offsets,
     * ascending; every start, overlapping ones too), once searched */
    struct buf hits;
    size_t nhits;
    bool hits_ready;
};

static uint32_t restart_at(const struct blk_it *it, uint32_t i)
{
    return coding_get_u32le(it->b.data + it->b.restart_off + 4 * (size_t)i);
}

static void set_corrupt(struct blk_it *it)
{
    if (!it->status)
        it->status = err_corrupt("bad block entry at %zu", it->cur);
    it->cur = it->next = it->b.restart_off;
    buf_reset(&it->key);
}

/* Appends a key's n unshared bytes at p to it->key: 16 at a time (a
 * register move each) where the block holds 16 bytes past them, as it does
 * but for its last entries (its restart array follows them), instead of a
 * memcpy call for a key's few dozen bytes. */
static void append_key(struct blk_it *it, const char *p, uint32_t n)
{
    const char *block_end = it->b.data + it->b.restart_off + 4 * (size_t)it->b.nrestarts + 4;
    buf_reserve(&it->key, (size_t)n + 16);
    char *d = it->key.data + it->key.len;
    if ((size_t)(block_end - p) >= (size_t)n + 16)
        for (uint32_t i = 0; i < n; i += 16)
            memcpy(d + i, p + i, 16);
    else if (n)
        memcpy(d, p, n);
    it->key.len += n;
}

/* The header of the entry at p (before end): its shared, unshared and value
 * lengths; returns where its key bytes start, or NULL if it is bad (it
 * shares more than the klen bytes of the key before, or runs past end). */
static inline const char *entry_header(const char *p, const char *end, size_t klen,
                                       uint32_t *shared, uint32_t *unshared, uint32_t *vlen)
{
    if (end - p >= 3 && !((p[0] | p[1] | p[2]) & 0x80)) { /* most entries: three 1-byte varints */
        *shared = (uint8_t)p[0];
        *unshared = (uint8_t)p[1];
        *vlen = (uint8_t)p[2];
        p += 3;
    } else {
        p = coding_varint32_dec(p, end, shared);
        if (p)
            p = coding_varint32_dec(p, end, unshared);
        if (p)
            p = coding_varint32_dec(p, end, vlen);
    }
    if (!p || *shared > klen || (size_t)(end - p) < (size_t)*unshared + *vlen)
        return NULL;
    return p;
}

/* The restart index at or before cur, after cur moved forward. */
static void catch_up_restart(struct blk_it *it)
{
    while (it->restart + 1 < it->b.nrestarts && restart_at(it, it->restart + 1) <= it->cur)
        it->restart++;
}

/* Decodes the entry at it->next into cur/key/value. false at the end or on
 * corruption. */
static bool parse_next(struct blk_it *it)
{
    it->cur = it->next;
    const char *p = it->b.data + it->cur, *end = it->b.data + it->b.restart_off;
    if (p >= end) {
        it->cur = it->next = it->b.restart_off;
        return false;
    }
    uint32_t shared, unshared, vlen;
    if (!(p = entry_header(p, end, it->key.len, &shared, &unshared, &vlen))) {
        set_corrupt(it);
        return false;
    }
    it->key.len = shared;
    append_key(it, p, unshared);
    it->value = slice_make(p + unshared, vlen);
    it->next = (size_t)(p + unshared + vlen - it->b.data);
    catch_up_restart(it);
    return true;
}

static void seek_restart(struct blk_it *it, uint32_t i)
{
    it->restart = i;
    uint32_t off = restart_at(it, i);
    if (off > it->b.restart_off) {
        set_corrupt(it);
        return;
    }
    buf_reset(&it->key);
    it->next = off;
}

static bool bi_valid(const struct iter *base)
{
    const struct blk_it *it = (const struct blk_it *)base;
    return it->cur < it->b.restart_off;
}

/* The position after a move: the entry parsed last, or none. */
static void publish(struct blk_it *it)
{
    if (bi_valid(&it->base))
        it_set_pos(&it->base, slice_make(it->key.data, it->key.len), it->value);
    else
        it_set_end(&it->base);
}

/* Whether the iterator stops at the entry parsed last (an invalid
 * position stops it too); an entry not kept is counted. */
static bool stops(struct blk_it *it)
{
    const struct blk_keep *k = it->keep;
    if (!k || !bi_valid(&it->base) ||
        k->keep(k->arg, slice_make(it->key.data, it->key.len), it->value))
        return true;
    if (k->passed)
        (*k->passed)++;
    return false;
}

static void back(struct blk_it *it);

/* Every start of keep->need in the block's entries, into it->hits. */
static void find_hits(struct blk_it *it)
{
    struct slice all = slice_make(it->b.data, it->b.restart_off), need = it->keep->need;
    buf_reset(&it->hits);
    it->nhits = 0;
    for (size_t at = 0; (at = words_find_folded(all, at, need)) != SIZE_MAX; at++) {
        uint32_t v = (uint32_t)at;
        buf_append(&it->hits, (const char *)&v, sizeof v);
        it->nhits++;
    }
    it->hits_ready = true;
}

/* The first hit at or after offset off. */
static size_t hit_from(const struct blk_it *it, size_t off)
{
    const uint32_t *h = (const uint32_t *)(const void *)it->hits.data;
    size_t lo = 0, hi = it->nhits;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool folded_eq(const char *s, const char *x, size_t n) /* x folded, as find_folded */
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i], f = (unsigned char)x[i];
        if ((f >= 'a' && f <= 'z' ? (c | 0x20) : c) != f)
            return false;
    }
    return true;
}

/* Whether need starts in the key's first s bytes k and ends in its own
 * bytes u (n of them). */
static bool straddles(const char *k, size_t s, const char *u, size_t n, struct slice need)
{
    size_t w = need.len;
    unsigned char f = (unsigned char)need.ptr[0], m = f >= 'a' && f <= 'z' ? 0x20 : 0;
    for (size_t j = s >= w ? s - w + 1 : 0; j < s; j++) {
        if ((unsigned char)(k[j] | m) != f)
            continue;
        size_t in_k = s - j;
        if (n >= w - in_k && folded_eq(k + j, need.ptr, in_k) &&
            folded_eq(u, need.ptr + in_k, w - in_k))
            return true;
    }
    return false;
}

/* Whether need lies in the key's first s bytes k, or starts there and
 * ends in its own bytes u (n of them); a long k counts as holding it. */
static bool prefix_holds(const char *k, size_t s, const char *u, size_t n, struct slice need)
{
    char tmp[128];
    size_t more = n < need.len ? n : need.len - 1;
    if (s + more > sizeof tmp)
        return true;
    memcpy(tmp, k, s);
    memcpy(tmp + s, u, more);
    return words_find_folded(slice_make(tmp, s + more), 0, need) != SIZE_MAX;
}

/* From it->next on, the first entry that may hold keep->need, made the
 * current entry with its key built: its own key bytes or value hold a hit
 * of the block's search, or need lies in the bytes it shares with the key
 * before (or starts there). The entries passed over are counted; their
 * keys are not built, only the shared bytes the next entries need: while
 * one is pending, it->key holds its first ps bytes and the rest is at pu.
 * An entry passed over holds need nowhere, so the next one can hold it in
 * its shared bytes only across their end (straddles). */
static void next_candidate(struct blk_it *it)
{
    struct slice need = it->keep->need;
    if (!it->hits_ready)
        find_hits(it);
    const uint32_t *hits = (const uint32_t *)(void *)it->hits.data;
    size_t hit = hit_from(it, it->next);
    const char *base = it->b.data, *end = base + it->b.restart_off, *pu = NULL;
    size_t klen = it->key.len; /* of the key before */
    uint32_t ps = 0, pn = 0;
    uint64_t passed = 0;
    bool pending = false, clean = false;
    for (;;) {
        it->cur = it->next;
        const char *p = base + it->cur;
        if (p >= end) {
            it->cur = it->next = it->b.restart_off;
            buf_reset(&it->key);
            break;
        }
        uint32_t shared, unshared, vlen;
        if (!(p = entry_header(p, end, klen, &shared, &unshared, &vlen))) {
            set_corrupt(it);
            return;
        }
        it->next = (size_t)(p + unshared + vlen - base);
        if (pending && shared > ps) { /* the entry before's key, built */
            it->key.len = ps;
            append_key(it, pu, pn);
            pending = false;
        }
        size_t own = (size_t)(p - base);
        while (hit < it->nhits && hits[hit] < own)
            hit++;
        bool cand = hit < it->nhits && hits[hit] + need.len <= it->next;
        if (!cand && shared)
            cand = clean ? straddles(it->key.data, shared, p, unshared, need)
                         : prefix_holds(it->key.data, shared, p, unshared, need);
        if (cand) {
            it->key.len = shared;
            append_key(it, p, unshared);
            it->value = slice_make(p + unshared, vlen);
            break;
        }
        passed++;
        pending = true;
        ps = shared;
        pu = p;
        pn = unshared;
        klen = (size_t)shared + unshared;
        clean = true;
    }
    if (it->keep->passed)
        *it->keep->passed += passed;
    catch_up_restart(it);
}

/* From the entry parsed last, forward or backward to the first one kept. */
static void keep_forward(struct blk_it *it)
{
    while (!stops(it)) {
        if (it->keep->need.len)
            next_candidate(it);
        else
            parse_next(it);
    }
}

static void keep_backward(struct blk_it *it)
{
    while (!stops(it))
        back(it);
}

static void first(struct blk_it *it)
{
    seek_restart(it, 0);
    if (!it->status)
        parse_next(it);
}

static void last(struct blk_it *it)
{
    seek_restart(it, it->b.nrestarts - 1);
    if (it->status || !parse_next(it))
        return;
    while (it->next < it->b.restart_off)
        if (!parse_next(it))
            return;
}

/* The key of restart point i, read in place (stored whole there); false
 * (and the iterator corrupt) if the entry is bad. */
static bool restart_key(struct blk_it *it, uint32_t i, struct slice *key)
{
    if (blk_restart_key(&it->b, i, key))
        return true;
    set_corrupt(it);
    return false;
}

/* A seek target, with its word after the block's common prefix when the
 * block is indexed and the target has that prefix. */
struct seek_key {
    struct slice k;
    bool has_word;
    uint64_t word, word2;
};

static struct seek_key seek_key_of(const struct blk *b, struct slice target)
{
    struct seek_key sk = {target, false, 0, 0};
    if (b->rpfx && target.len >= b->pfx_len && memcmp(target.ptr, b->pfx, b->pfx_len) == 0) {
        sk.has_word = true;
        sk.word = word_at(target, b->pfx_len);
        sk.word2 = word_at(target, b->pfx_len + 8);
    }
    return sk;
}

/* Whether restart i's key is below the target, in *below: by the indexed
 * words when they differ (no read of the key), else by the key itself.
 * false (and the iterator corrupt) if the entry is bad. */
static bool restart_below(struct blk_it *it, uint32_t i, const struct seek_key *sk, bool *below)
{
    if (sk->has_word && it->b.rpfx[i] != sk->word) {
        *below = it->b.rpfx[i] < sk->word;
        return true;
    }
    /* the first words equal: the bytes under them are (zero padding sorts
     * as a shorter key does), so the next words decide when they differ */
    if (sk->has_word && it->b.rpfx2 && it->b.rpfx2[i] != sk->word2) {
        *below = it->b.rpfx2[i] < sk->word2;
        return true;
    }
    struct slice rk;
    if (!restart_key(it, i, &rk))
        return false;
    *below = slice_cmp(rk, sk->k) < 0;
    return true;
}

static bool key_below(const struct blk_it *it, struct slice target)
{
    return slice_cmp(slice_make(it->key.data, it->key.len), target) < 0;
}

/* Parses entries from it->next on until one whose key is at or past
 * target, which becomes the current entry (or none at the block's end),
 * without copying or comparing the keys passed over: the key before
 * it->next (klen bytes, of which the first lcp are target's) is below
 * target. An entry that keeps more than lcp bytes of the key before is
 * below target too (its byte lcp is the previous key's, below target's);
 * one that keeps shared <= lcp bytes is target's first shared bytes and
 * its own unshared bytes, compared in place. So the key found is target's
 * first shared bytes and its unshared ones. */
static void scan_to(struct blk_it *it, struct slice target, size_t klen, size_t lcp)
{
    const char *end = it->b.data + it->b.restart_off;
    for (;;) {
        it->cur = it->next;
        const char *p = it->b.data + it->cur;
        uint32_t shared, unshared, vlen;
        if (p >= end) {
            it->cur = it->next = it->b.restart_off;
            buf_reset(&it->key);
            return;
        }
        if (!(p = entry_header(p, end, klen, &shared, &unshared, &vlen))) {
            set_corrupt(it);
            return;
        }
        it->next = (size_t)(p + unshared + vlen - it->b.data);
        catch_up_restart(it);
        klen = (size_t)shared + unshared;
        if (shared > lcp)
            continue;
        /* the key is target[0, shared) then p[0, unshared) */
        size_t rest = target.len - shared, n = unshared < rest ? unshared : rest;
        size_t same = common_prefix(p, target.ptr + shared, n);
        bool below = same < n ? (unsigned char)p[same] < (unsigned char)target.ptr[shared + same]
                              : unshared < rest;
        if (below) {
            lcp = shared + same;
            continue;
        }
        buf_reset(&it->key);
        buf_append(&it->key, target.ptr, shared);
        buf_append(&it->key, p, unshared);
        it->value = slice_make(p + unshared, vlen);
        return;
    }
}

static void seek_to(struct blk_it *it, struct slice target)
{
    struct iter *base = &it->base;
    uint32_t lo = 0, hi = it->b.nrestarts - 1;
    struct seek_key sk = seek_key_of(&it->b, target);
    if (!it->status && bi_valid(base) && key_below(it, target)) {
        /* a forward seek: from the current entry when the target is before
         * the next restart point, else from its restart on */
        lo = it->restart;
        bool below = false;
        if (lo < hi && !restart_below(it, lo + 1, &sk, &below))
            return;
        if (!below) {
            size_t n = it->key.len < target.len ? it->key.len : target.len;
            scan_to(it, target, it->key.len, common_prefix(it->key.data, target.ptr, n));
            return;
        }
    }
    while (lo < hi) { /* last restart whose key < target */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        bool below;
        if (!restart_below(it, mid, &sk, &below))
            return;
        if (below)
            lo = mid;
        else
            hi = mid - 1;
    }
    seek_restart(it, lo);
    if (it->status)
        return;
    /* the entries up to the next restart, fetched together rather than
     * one miss after another as the scan reaches them */
    size_t from = it->next,
           to = lo + 1 < it->b.nrestarts ? restart_at(it, lo + 1) : it->b.restart_off;
    for (size_t off = from & ~(size_t)63; off < to; off += 64)
        __builtin_prefetch(it->b.data + off);
    scan_to(it, target, 0, 0);
}

static void back(struct blk_it *it)
{
    size_t target = it->cur;
    uint32_t r = it->restart;
    while (restart_at(it, r) >= target) {
        if (r == 0) { /* before the first entry */
            it->cur = it->next = it->b.restart_off;
            return;
        }
        r--;
    }
    seek_restart(it, r);
    while (!it->status && parse_next(it) && it->next < target)
        ;
}

static void bi_seek_first(struct iter *base)
{
    struct blk_it *it = (struct blk_it *)base;
    first(it);
    keep_forward(it);
    publish(it);
}

static void bi_seek_last(struct iter *base)
{
    struct blk_it *it = (struct blk_it *)base;
    last(it);
    keep_backward(it);
    publish(it);
}

static void bi_seek(struct iter *base, struct slice target)
{
    struct blk_it *it = (struct blk_it *)base;
    seek_to(it, target);
    keep_forward(it);
    publish(it);
}

static void bi_next(struct iter *base)
{
    struct blk_it *it = (struct blk_it *)base;
    parse_next(it);
    keep_forward(it);
    publish(it);
}

/* it_run: the entries after cur whose headers say they keep the key's
 * first keep bytes and its length, their last bytes copied over the key in
 * place; not in a block whose entries a keep filter picks. A bad header
 * ends the run: it_next then reports it. */
static bool bi_run(struct iter *base, size_t keep, it_run_fn fn, void *arg)
{
    struct blk_it *it = (struct blk_it *)base;
    size_t klen = it->key.len;
    if (it->keep || !bi_valid(base) || keep > klen)
        return false;
    const char *end = it->b.data + it->b.restart_off;
    bool refused = false;
    while (!refused && it->next < it->b.restart_off) {
        uint32_t shared, unshared, vlen;
        const char *p = entry_header(it->b.data + it->next, end, klen, &shared, &unshared, &vlen);
        if (!p || shared < keep || (size_t)shared + unshared != klen)
            break;
        memcpy(it->key.data + shared, p, unshared);
        it->cur = it->next;
        it->value = slice_make(p + unshared, vlen);
        it->next = (size_t)(p + unshared + vlen - it->b.data);
        refused = !fn(arg, slice_make(it->key.data, klen), it->value);
    }
    catch_up_restart(it);
    publish(it);
    return refused;
}

static void bi_prev(struct iter *base)
{
    struct blk_it *it = (struct blk_it *)base;
    back(it);
    keep_backward(it);
    publish(it);
}

static int bi_status(const struct iter *base)
{
    return ((const struct blk_it *)base)->status;
}

static void bi_destroy(struct iter *base)
{
    struct blk_it *it = (struct blk_it *)base;
    buf_destroy(&it->key);
    buf_destroy(&it->hits);
    free(it);
}

static const struct it_ops blk_ops = {
    .seek_first = bi_seek_first,
    .seek_last = bi_seek_last,
    .seek = bi_seek,
    .next = bi_next,
    .prev = bi_prev,
    .status = bi_status,
    .destroy = bi_destroy,
    .run = bi_run,
};

struct iter *blk_iter(const struct blk *b)
{
    struct blk_it *it = xcalloc(1, sizeof *it);
    it_init(&it->base, &blk_ops);
    it->b = *b;
    it->cur = it->next = b->restart_off;
    buf_init(&it->key);
    buf_init(&it->hits);
    return &it->base;
}

void blk_iter_on(struct iter *base, const struct blk *b)
{
    struct blk_it *it = (struct blk_it *)base;
    it->b = *b;
    it->cur = it->next = b->restart_off;
    it->restart = 0;
    it->status = ERR_OK;
    buf_reset(&it->key);
    it->value = slice_make("", 0);
    it->keep = NULL;
    it->hits_ready = false;
    it_set_end(base);
}

void blk_iter_keep(struct iter *base, const struct blk_keep *k)
{
    struct blk_it *it = (struct blk_it *)base;
    it->keep = k;
    it->hits_ready = false;
}
