/* Kept runs (store/series.h): a host and event's rows of a table's
 * section, decoded into one allocation and kept in the block cache. */
#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "base/hash.h"
#include "model/key.h"
#include "store/ikey.h"
#include "store/series.h"

/* A run is kept when it has at most this many rows: a high-rate series'
 * hour could be more than its reads of a few minutes would ever take. */
#define KEPT_MAX_ROWS 65536

static _Atomic size_t kept_max_rows = KEPT_MAX_ROWS; /* ser_test_kept_max_rows */

/* ser_keep_runs keeps the runs of at least this many rows: a dashboard's
 * series (a point every few seconds); a sparse one (a log event's few rows
 * a host and hour, of thousands of hosts) is kept when a read asks for it,
 * not for every host at once. */
#define KEEP_MIN_ROWS 16

/* The seed of a kept run's key in the cache (a hash of host 0x00 event 0x00). */
#define KEPT_SEED 0x5eed5eedULL

void ser_test_kept_max_rows(size_t rows)
{
    kept_max_rows = rows ? rows : KEPT_MAX_ROWS;
}

/* The entries of prefix (host 0x00 event 0x00) from the cursor on: their
 * stamps, and their values copied; with ranged, only while their stamps
 * lie in [lo, hi] (the cursor sought to its first). The arrays are kept
 * from one load to the next. */
struct ser_loader {
    struct slice prefix;
    bool desc, ranged;
    int64_t lo, hi;
    size_t max; /* rows; past them, too_many and no run */
    bool too_many;
    int64_t *ts;
    size_t *off, n, cap; /* a value's bytes: from off[i] to the next's */
    struct buf bytes;
    bool bad;
};

static bool load_row(void *arg, struct slice ik, struct slice value)
{
    struct ser_loader *l = arg;
    if (!ikey_ok(ik)) {
        l->bad = true;
        return false;
    }
    struct slice uk = ikey_user(ik);
    if (!slice_starts_with(uk, l->prefix))
        return false; /* past the run */
    if (uk.len != l->prefix.len + 8) {
        l->bad = true; /* host 0x00 event 0x00 and no stamp */
        return false;
    }
    int64_t ts = key_ts_from_tskey(coding_get_u64be(uk.ptr + l->prefix.len), l->desc);
    if (l->ranged && (ts < l->lo || ts > l->hi))
        return false; /* past the range, in stored order */
    if (l->n == l->max) {
        l->too_many = true;
        return false;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->ts = xrealloc(l->ts, l->cap * sizeof *l->ts);
        l->off = xrealloc(l->off, l->cap * sizeof *l->off);
    }
    l->ts[l->n] = ts;
    l->off[l->n++] = l->bytes.len;
    buf_append(&l->bytes, value.ptr, value.len);
    return true;
}

/* Loads into l the entries of l->prefix from the cursor on (load_row);
 * the cursor is left at the first entry past them (or where a row past
 * too_many or a bad one stopped it). */
static int collect(struct iter *it, struct ser_loader *l)
{
    l->too_many = l->bad = false;
    l->n = 0;
    buf_reset(&l->bytes);
    /* it_run takes the entries after the current one in its block; the
     * current one, and the first of each next block, go by load_row too */
    while (it_valid(it) && load_row(l, it_key(it), it_value(it))) {
        if (!it_run(it, l->prefix.len, load_row, l))
            it_next(it);
        else if (!l->bad)
            break; /* refused: past the run */
    }
    return l->bad ? ERR_CORRUPT : it_status(it);
}

/* The run of the rows l holds, in one allocation: the run, its key
 * (l->prefix), stamps, values and their bytes. */
static struct ser_run *run_of(const struct ser_loader *l)
{
    size_t n = l->n, at_ts = (sizeof(struct ser_run) + l->prefix.len + 7) & ~(size_t)7;
    size_t at_value = at_ts + n * sizeof(int64_t), at_bytes = at_value + n * sizeof(struct slice);
    struct ser_run *r = xmalloc(at_bytes + l->bytes.len);
    char *base = (char *)r;
    r->n = n;
    r->ts = (int64_t *)(void *)(base + at_ts);
    r->value = (struct slice *)(void *)(base + at_value);
    r->bytes = base + at_bytes;
    r->size = at_bytes + l->bytes.len;
    r->key_len = l->prefix.len;
    r->over = 0;
    memcpy(r->key, l->prefix.ptr, l->prefix.len);
    if (n) {
        memcpy(r->ts, l->ts, n * sizeof *r->ts);
        memcpy(r->bytes, l->bytes.data, l->bytes.len);
    }
    for (size_t i = 0; i < n; i++) {
        size_t end = i + 1 < n ? l->off[i + 1] : l->bytes.len;
        r->value[i] = slice_make(r->bytes + l->off[i], end - l->off[i]);
    }
    return r;
}

struct ser_run *ser_run_too_many(struct slice prefix)
{
    struct ser_run *r = xcalloc(1, sizeof *r + prefix.len);
    r->size = sizeof *r + prefix.len;
    r->key_len = prefix.len;
    r->over = kept_max_rows;
    memcpy(r->key, prefix.ptr, prefix.len);
    return r;
}

bool ser_run_over(const struct ser_run *r)
{
    return r->over && r->over >= kept_max_rows;
}

void ser_run_free(void *run)
{
    free(run);
}

struct ser_loader *ser_loader_new(void)
{
    return xcalloc(1, sizeof(struct ser_loader));
}

void ser_loader_free(struct ser_loader *l)
{
    if (!l)
        return;
    free(l->ts);
    free(l->off);
    buf_destroy(&l->bytes);
    free(l);
}

/* The key of a kept run in the cache: a hash of host 0x00 event 0x00. */
uint64_t ser_kept_key(struct slice prefix)
{
    return hash_mem(KEPT_SEED, prefix.ptr, prefix.len);
}

int ser_load(struct ser_loader *l, struct iter *it, struct slice prefix, bool desc,
             const int64_t *range, struct ser_run **out)
{
    l->prefix = prefix;
    l->desc = desc;
    l->ranged = range != NULL;
    l->lo = range ? range[0] : 0;
    l->hi = range ? range[1] : 0;
    l->max = range ? SIZE_MAX : kept_max_rows;
    int rc = collect(it, l);
    *out = rc == ERR_OK && !l->too_many ? run_of(l) : NULL;
    return rc;
}

void ser_keep_runs(struct sst_table *t, bool desc)
{
    if (!sst_has_section(t) || !sst_section_kept_room(t))
        return;
    struct iter *it = sst_section_iter(t);
    struct ser_loader *l = ser_loader_new();
    struct buf prefix = BUF_INIT;
    l->desc = desc;
    l->max = kept_max_rows;
    it_seek_first(it);
    for (unsigned kept = 0; it_valid(it); kept++) {
        /* the next host and event: the entry's key but its stamp */
        struct slice ik = it_key(it), uk = ikey_ok(ik) ? ikey_user(ik) : slice_make(NULL, 0);
        if (uk.len < 10 || uk.ptr[uk.len - 9] != '\0')
            break; /* damaged: a read of it reports it */
        buf_reset(&prefix);
        buf_append(&prefix, uk.ptr, uk.len - 8);
        l->prefix = slice_make(prefix.data, prefix.len);
        if (collect(it, l) != ERR_OK)
            break;
        if (l->too_many) { /* past the host and event: host 0x00 event 0x01 */
            prefix.data[prefix.len - 1] = '\x01';
            it_seek(it, slice_make(prefix.data, prefix.len));
            continue;
        }
        if (l->n < KEEP_MIN_ROWS)
            continue;
        struct ser_run *r = run_of(l);
        struct cache_handle *h =
            sst_section_kept_put(t, ser_kept_key(l->prefix), r, r->size, ser_run_free);
        if (!h) {
            ser_run_free(r);
            break;
        }
        sst_section_kept_release(t, h);
        if (kept % 64 == 63 && !sst_section_kept_room(t))
            break;
    }
    buf_destroy(&prefix);
    ser_loader_free(l);
    it_destroy(it);
}
