/* store_series_open (store.h): one host's rows from the host sections of
 * the windows whose final file holds all of that host's rows (store/series.h). */
#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "model/key.h"
#include "store/catalog.h"
#include "store/ikey.h"
#include "store/series.h"
#include "store/store_int.h"
#include "store/ttl.h"

struct ser_window {
    struct file_meta *f;
    int64_t lo, hi; /* the rows' ts range in it */
};

struct store_series {
    struct store_snap *snap;
    struct buf host;       /* the prefix of the host's entries: host 0x00 */
    struct slice hostname; /* in host */
    struct ser_window *w;
    size_t nw, at; /* windows, the one being read */
    struct iter *it;
    bool started;
    struct buf seek;
    const struct slice *events; /* sorted; NULL: every event */
    size_t nevents, ev;         /* the event being read */
    bool all_hosts;             /* every host's rows, the whole section */
    /* host 0x00 event 0x00 of the last row given (with an event set): a
     * key that starts so is a row of the same host and wanted event */
    struct buf same;
    size_t same_host; /* the host's length in it */
    bool unread;      /* the cursor's entry is still to look at (it_run stopped there) */
    /* store_series_each gives kept runs (each_kept_run: one host, an event
     * set): at and ev are the next window and event; store_series_next is
     * not called then */
    bool kept;
    struct buf run_from; /* the seek of a run's part */
    struct ser_loader *load;
    /* store_series_each's run: the stamps and values of its rows */
    int64_t *run_ts;
    struct slice *run_value;
    size_t run_n, run_cap;
};

/* The newest sequence of a file's section (UINT64_MAX: none, or unread). */
static uint64_t section_seq(const struct file_meta *f)
{
    uint64_t seq;
    if (!sst_has_section(f->table) || !ser_names_max_seq(sst_section_names(f->table), &seq))
        return UINT64_MAX;
    return seq;
}

/* Whether a window's files (files[0..n)) hold host's rows (host NULL:
 * every host's) in files with sections alone: one file with a section,
 * or several that one whole-window merge split (every entry of such a
 * merge's output has sequence 0, and they hold different keys), and
 * beside them only late files with no delete (a delete names no host)
 * and no row of host, by their catalogs (for every host: none at all). */
static bool sections_hold(struct file_meta *const *files, size_t n, const struct slice *host)
{
    size_t nsec = 0;
    bool split_merge = true;
    for (size_t i = 0; i < n; i++) {
        const struct file_meta *f = files[i];
        if (sst_has_section(f->table)) {
            nsec++;
            split_merge &= section_seq(f) == 0;
        } else if (!host || f->props.deletes || f->cat_rc != ERR_OK ||
                   cat_file_has_host(f->cat, *host)) {
            return false;
        }
    }
    return nsec == 1 || (nsec > 1 && split_merge);
}

/* Whether f's section can give its rows for these fields in a snapshot. */
static bool section_serves(struct store_snap *snap, const struct file_meta *f,
                           const struct slice *fields, size_t nfields)
{
    uint64_t max_seq = section_seq(f);
    if (max_seq == UINT64_MAX || max_seq > snap->seq)
        return false;
    for (size_t i = 0; i < nfields; i++)
        if (ser_names_has(sst_section_names(f->table), fields[i]))
            return false;
    return true;
}

/* Whether every section of files[0..n) can give its rows, and the
 * snapshot reads the window [ws, we] of bucket from tables alone. */
static bool window_serves(struct store_snap *snap, uint32_t bucket, struct file_meta *const *files,
                          size_t n, int64_t ws, int64_t we, const struct slice *fields,
                          size_t nfields)
{
    for (size_t i = 0; i < n; i++)
        if (sst_has_section(files[i]->table) && !section_serves(snap, files[i], fields, nfields))
            return false;
    return snap_window_tables_only(snap, bucket, ws, we);
}

/* A seek in a section costs about as much as passing over this many rows
 * of the time-ordered blocks (parsed, of another event). */
#define SEEK_ROWS 16

/* Whether every host's rows of the event set in [a, b], part of a window,
 * cost less from the window's sections (a seek per host and event of
 * each, then the rows in range) than from its time-ordered rows (every
 * row in range, the other events' passed over): by the hosts the
 * catalogs list and the rows in range the entries suggest. */
static bool part_pays(struct file_meta *const *files, size_t n, int64_t a, int64_t b,
                      size_t nevents)
{
    if (!nevents)
        return false;
    double frac = ((double)b - (double)a + 1) / (double)STORE_WINDOW_NS;
    for (size_t i = 0; i < n; i++) {
        const struct file_meta *f = files[i];
        if (!sst_has_section(f->table))
            continue;
        if (f->cat_rc != ERR_OK || (double)cat_file_nhosts(f->cat) * (double)nevents * SEEK_ROWS >
                                       (double)f->props.entries * frac)
            return false;
    }
    return true;
}

int store_series_open(struct store_snap *snap, uint32_t bucket, const struct slice *host,
                      int64_t lo, int64_t hi, const struct slice *events, size_t nevents,
                      const struct slice *fields, size_t nfields, struct store_series **out,
                      struct store_ts_range **windows, size_t *n)
{
    *out = NULL;
    *windows = NULL;
    *n = 0;
    if (bucket >= snap->db->buckets)
        return ERR_INVAL;
    /* no row below a cut-off: some may be hidden but not compacted away */
    int64_t cut = event_cuts_max(&snap->cuts, snap->cutoff);
    if (lo < cut)
        lo = cut;
    struct store_series *s = xcalloc(1, sizeof *s);
    s->snap = snap;
    s->events = events;
    s->nevents = nevents;
    s->all_hosts = !host;
    if (host) {
        ser_key(&s->host, *host, NULL, 0, false, true);
        s->hostname = slice_make(s->host.data, host->len);
    }
    const struct version *v = snap->ps[bucket].ver;
    size_t cap = 0, wcap = 0;
    for (size_t i = 0, j; v && i < v->n && lo <= hi; i = j) {
        int64_t wn = v->files[i]->window;
        for (j = i; j < v->n && v->files[j]->window == wn; j++)
            ;
        /* wn is part_window's number: ts / STORE_WINDOW_NS, floored */
        if (wn < INT64_MIN / STORE_WINDOW_NS + 1 || wn > INT64_MAX / STORE_WINDOW_NS - 1)
            continue;
        int64_t ws = wn * STORE_WINDOW_NS, we = ws + (STORE_WINDOW_NS - 1);
        int64_t a = ws > lo ? ws : lo, b = we < hi ? we : hi;
        /* every host: whole windows, or a part when the sections' seeks
         * to each host's events cost less than the part's rows (a part
         * of a window is a few of the rows' blocks, in time order) */
        if (a > b ||
            (!host && (a != ws || b != we) && !part_pays(&v->files[i], j - i, a, b, nevents)) ||
            !sections_hold(&v->files[i], j - i, host) ||
            !window_serves(snap, bucket, &v->files[i], j - i, ws, we, fields, nfields))
            continue;
        for (size_t f = i; f < j; f++) {
            if (!sst_has_section(v->files[f]->table))
                continue;
            if (s->nw == cap)
                s->w = xrealloc(s->w, (cap = cap ? 2 * cap : 16) * sizeof *s->w);
            s->w[s->nw++] = (struct ser_window){v->files[f], a, b};
        }
        if (*n == wcap)
            *windows = xrealloc(*windows, (wcap = wcap ? 2 * wcap : 8) * sizeof **windows);
        (*windows)[(*n)++] = (struct store_ts_range){a, b};
    }
    *out = s;
    return ERR_OK;
}

/* Seeks the cursor to where the rows of the host (and of its ev-th event,
 * when there is an event set) in the current window's range begin. */
static void seek_rows(struct store_series *s)
{
    const struct ser_window *w = &s->w[s->at - 1];
    bool desc = s->snap->db->desc;
    /* a row of the host and event read before may now be another event's
     * turn (the event set's next), to be sought again */
    buf_reset(&s->same);
    if (s->all_hosts) {
        it_seek_first(s->it);
        return;
    }
    buf_reset(&s->seek);
    if (s->events)
        ser_key(&s->seek, s->hostname, &s->events[s->ev], desc ? w->hi : w->lo, desc, false);
    else
        ser_key(&s->seek, s->hostname, NULL, 0, desc, true);
    it_seek(s->it, slice_make(s->seek.data, s->seek.len));
}

/* Opens the section of the next window at its first row in range; false
 * when no window is left. */
static bool next_window(struct store_series *s)
{
    if (s->at >= s->nw) {
        it_destroy(s->it);
        s->it = NULL;
        return false;
    }
    s->it = sst_section_iter_again(s->it, s->w[s->at++].f->table);
    s->ev = 0;
    seek_rows(s);
    return true;
}

/* The index in the event set of the first event after event (bytewise,
 * the order of a host's entries): the set holds event if the one before
 * is event. */
static size_t events_after(const struct store_series *s, struct slice event)
{
    size_t lo = 0, hi = s->nevents;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (slice_cmp(s->events[mid], event) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Moves the cursor, at an entry of host whose event the set does not
 * hold, to where the host's next event of the set (the set's next-th)
 * begins in the window's range, or to the next host's first entry (host
 * 0x01 follows every key of host 0x00): a skip-scan, instead of passing
 * over every other event's rows. */
static void skip_to_wanted(struct store_series *s, const struct ser_window *w, struct slice host,
                           size_t next)
{
    bool desc = s->snap->db->desc;
    buf_reset(&s->seek);
    if (next < s->nevents) {
        ser_key(&s->seek, host, &s->events[next], desc ? w->hi : w->lo, desc, false);
    } else {
        buf_append(&s->seek, host.ptr, host.len);
        buf_putc(&s->seek, '\x01');
    }
    it_seek(s->it, slice_make(s->seek.data, s->seek.len));
}

/* A row in the window's range of the host and event of the last row
 * given (s->same): 1 and *row set; else 0 (look at it whole). */
static int same_run(struct store_series *s, const struct ser_window *w, struct slice uk,
                    struct store_series_row *row)
{
    size_t n = s->same.len;
    if (!n || uk.len != n + 8 || !mem_eq_short(uk.ptr, s->same.data, n))
        return 0;
    int64_t ts = key_ts_from_tskey(coding_get_u64be(uk.ptr + n), s->snap->db->desc);
    if (ts < w->lo || ts > w->hi)
        return 0;
    size_t h = s->same_host;
    *row = (struct store_series_row){ts, slice_make(s->same.data, h),
                                     slice_make(s->same.data + h + 1, n - h - 2), it_value(s->it)};
    return 1;
}

/* Notes the host and event of a row given (with an event set); uk is
 * host 0x00 event 0x00 tskey. */
static void note_same(struct store_series *s, struct slice uk, size_t host_len)
{
    buf_reset(&s->same);
    buf_append(&s->same, uk.ptr, uk.len - 8);
    s->same_host = host_len;
}

/* at_entry for every host: the whole section, rows outside the window's
 * range passed over (with an event set, sought past: to the range's start
 * or the next event), other events' rows skipped (2: the cursor moved,
 * look at it again). */
static int at_any_entry(struct store_series *s, const struct ser_window *w,
                        struct store_series_row *row)
{
    struct slice ik = it_key(s->it);
    if (!ikey_ok(ik))
        return ERR_CORRUPT;
    struct slice uk = ikey_user(ik);
    if (s->events && same_run(s, w, uk, row))
        return 1;
    const char *end = uk.ptr + uk.len, *z1 = memchr(uk.ptr, 0, uk.len);
    const char *z2 = z1 ? memchr(z1 + 1, 0, (size_t)(end - z1 - 1)) : NULL;
    if (!z2 || end - z2 != 9)
        return ERR_CORRUPT;
    struct slice host = slice_make(uk.ptr, (size_t)(z1 - uk.ptr));
    struct slice event = slice_make(z1 + 1, (size_t)(z2 - z1 - 1));
    size_t next = 0;
    if (s->events) {
        next = events_after(s, event);
        if (next == 0 || !slice_eq(s->events[next - 1], event)) {
            skip_to_wanted(s, w, host, next);
            return 2;
        }
    }
    bool desc = s->snap->db->desc;
    int64_t ts = key_ts_from_tskey(coding_get_u64be(z2 + 1), desc);
    if (ts < w->lo || ts > w->hi) {
        if (!s->events)
            return 0;
        /* before the range: to its start; past it: to the next event */
        bool past = desc ? ts < w->lo : ts > w->hi;
        skip_to_wanted(s, w, host, past ? next : next - 1);
        return 2;
    }
    *row = (struct store_series_row){ts, host, event, it_value(s->it)};
    if (s->events)
        note_same(s, uk, host.len);
    return 1;
}

/* The entry at the cursor: 1 (a row to give), 0 (not one: the next
 * entry), 2 (the cursor was moved: the entry it is at), -1 (past the rows
 * wanted: the next event or window), or ERR_CORRUPT. Reads the key in
 * place: host 0x00 event 0x00 tskey. */
static int at_entry(struct store_series *s, const struct ser_window *w,
                    struct store_series_row *row)
{
    if (s->all_hosts)
        return at_any_entry(s, w, row);
    struct slice ik = it_key(s->it), pfx = slice_make(s->host.data, s->host.len);
    if (!ikey_ok(ik))
        return ERR_CORRUPT;
    struct slice uk = ikey_user(ik);
    if (s->events && same_run(s, w, uk, row))
        return 1;
    if (!slice_starts_with(uk, pfx))
        return -1;
    const char *ev = uk.ptr + pfx.len, *end = uk.ptr + uk.len;
    const char *z = memchr(ev, 0, (size_t)(end - ev));
    if (!z || end - z != 9)
        return ERR_CORRUPT;
    struct slice event = slice_make(ev, (size_t)(z - ev));
    if (s->events && !slice_eq(event, s->events[s->ev]))
        return -1;
    int64_t ts = key_ts_from_tskey(coding_get_u64be(z + 1), s->snap->db->desc);
    if (ts < w->lo || ts > w->hi)
        /* an event's rows run in stored order from the seek on; without
         * an event set, the host's events follow one another */
        return s->events ? -1 : 0;
    *row = (struct store_series_row){ts, s->hostname, event, it_value(s->it)};
    if (s->events)
        note_same(s, uk, pfx.len - 1);
    return 1;
}

int store_series_next(struct store_series *s, struct store_series_row *row)
{
    if (!s->started) {
        s->started = true;
        if (!next_window(s))
            return 0;
    } else if (s->it && !s->unread) {
        it_next(s->it);
    }
    s->unread = false;
    while (s->it) {
        const struct ser_window *w = &s->w[s->at - 1];
        int rc = it_valid(s->it) ? at_entry(s, w, row) : -1;
        if (rc == 1)
            return 1;
        if (rc == 0 || rc == 2) {
            if (rc == 0)
                it_next(s->it);
            continue;
        }
        if (rc != -1)
            return rc;
        if ((rc = it_status(s->it)) != ERR_OK)
            return rc;
        if (s->events && !s->all_hosts && ++s->ev < s->nevents) {
            seek_rows(s);
            continue;
        }
        if (!next_window(s))
            return 0;
    }
    return 0;
}

/* Reads the run of event in table t (the section's entries keyed
 * host 0x00 event 0x00 ...) into *out: all of it, or (w not NULL) its
 * rows in w's range; all of it but more rows than a run kept may have:
 * *out NULL. */
static int load_run(struct store_series *s, struct sst_table *t, struct slice event,
                    const struct ser_window *w, struct ser_run **out)
{
    bool desc = s->snap->db->desc;
    buf_reset(&s->seek);
    ser_key(&s->seek, s->hostname, &event, 0, false, true);
    if (!s->load)
        s->load = ser_loader_new();
    s->it = sst_section_iter_again(s->it, t);
    int64_t range[2] = {w ? w->lo : 0, w ? w->hi : 0};
    if (w) {
        buf_reset(&s->run_from);
        ser_key(&s->run_from, s->hostname, &event, desc ? w->hi : w->lo, desc, false);
        it_seek(s->it, slice_make(s->run_from.data, s->run_from.len));
    } else {
        it_seek(s->it, slice_make(s->seek.data, s->seek.len));
    }
    return ser_load(s->load, s->it, slice_make(s->seek.data, s->seek.len), desc, w ? range : NULL,
                    out);
}

/* The run of prefix (host 0x00 event 0x00; its key hk, ser_kept_key)
 * kept in t's cache, *h holding it; else NULL, *h NULL, and *other whether
 * another host and event's run has its hash. */
static const struct ser_run *find_kept(struct sst_table *t, struct slice prefix, uint64_t hk,
                                       struct cache_handle **h, bool *other)
{
    void *v;
    *h = sst_section_kept_get(t, hk, &v);
    const struct ser_run *run = v;
    if (run && run->key_len == prefix.len && memcmp(run->key, prefix.ptr, prefix.len) == 0)
        return run;
    *other = *h != NULL;
    sst_section_kept_release(t, *h);
    *h = NULL;
    return NULL;
}

/* The run of event in w's table: kept (*h holds it; release it after), or
 * read now and kept, or read for this call alone (*own: when there is no
 * cache or another run has its key; the rows of w's range alone when the
 * run has more rows than a run kept may have). */
static int get_run(struct store_series *s, const struct ser_window *w, struct slice event,
                   const struct ser_run **run, struct cache_handle **h, struct ser_run **own)
{
    struct sst_table *t = w->f->table;
    *h = NULL;
    *own = NULL;
    buf_reset(&s->seek);
    ser_key(&s->seek, s->hostname, &event, 0, false, true);
    struct slice prefix = slice_make(s->seek.data, s->seek.len);
    uint64_t hk = ser_kept_key(prefix);
    bool other = false;
    const struct ser_run *kept = find_kept(t, prefix, hk, h, &other);
    if (kept && !kept->over) {
        *run = kept;
        return ERR_OK;
    }
    if (kept && !ser_run_over(kept)) { /* a stand-in of a lower limit: read again */
        sst_section_kept_release(t, *h);
        *h = NULL;
        kept = NULL;
    }
    struct ser_run *r = NULL;
    int rc = kept ? ERR_OK : load_run(s, t, event, NULL, &r);
    if (rc == ERR_OK && !r) { /* too many to keep: the range alone */
        if (!kept && !other) {
            r = ser_run_too_many(prefix);
            *h = sst_section_kept_put(t, hk, r, r->size, ser_run_free);
            if (!*h)
                ser_run_free(r);
        }
        sst_section_kept_release(t, *h);
        *h = NULL;
        rc = load_run(s, t, event, w, own);
        *run = *own;
        return rc;
    }
    if (rc)
        return rc;
    if (!other)
        *h = sst_section_kept_put(t, hk, r, r->size, ser_run_free);
    if (!*h)
        *own = r;
    *run = r;
    return ERR_OK;
}

/* The rows of run with ts in [lo, hi]: [*a, *b) (stored order: ts
 * descending in a database of order desc, else ascending). */
static void run_range(const struct ser_run *run, int64_t lo, int64_t hi, bool desc, size_t *a,
                      size_t *b)
{
    size_t l = 0, r = run->n;
    while (l < r) { /* the first row on the range's side of its start */
        size_t m = l + (r - l) / 2;
        if (desc ? run->ts[m] > hi : run->ts[m] < lo)
            l = m + 1;
        else
            r = m;
    }
    *a = l;
    r = run->n;
    while (l < r) { /* the first row past its end */
        size_t m = l + (r - l) / 2;
        if (desc ? run->ts[m] >= lo : run->ts[m] <= hi)
            l = m + 1;
        else
            r = m;
    }
    *b = l;
}

bool store_series_kept(struct store_series *s)
{
    if (s->all_hosts || !s->events || !s->nw)
        return false;
    struct sst_table *t = s->w[0].f->table;
    buf_reset(&s->seek);
    ser_key(&s->seek, s->hostname, &s->events[0], 0, false, true);
    struct cache_handle *h;
    bool other;
    struct slice prefix = slice_make(s->seek.data, s->seek.len);
    const struct ser_run *run = find_kept(t, prefix, ser_kept_key(prefix), &h, &other);
    bool kept = run && !run->over; /* a stand-in: its reads seek */
    sst_section_kept_release(t, h);
    return kept;
}

/* store_series_each for one host and a set of events, from the start:
 * each window's run of each event, kept or read whole, its rows in the
 * window's range given. */
static int each_kept_run(struct store_series *s, store_series_fn fn, void *arg)
{
    bool desc = s->snap->db->desc;
    s->started = s->kept = true;
    while (s->at < s->nw) {
        const struct ser_window *w = &s->w[s->at];
        if (s->ev == s->nevents) {
            s->at++;
            s->ev = 0;
            continue;
        }
        /* past this run before fn sees it: a call after fn stopped goes on
         * with the next one */
        struct slice event = s->events[s->ev++];
        const struct ser_run *run;
        struct cache_handle *h;
        struct ser_run *own;
        int rc = get_run(s, w, event, &run, &h, &own);
        if (rc)
            return rc;
        size_t a, b;
        run_range(run, w->lo, w->hi, desc, &a, &b);
        if (a < b) {
            struct store_series_rows rows = {s->hostname, event, b - a, run->ts + a,
                                             run->value + a};
            rc = fn(arg, &rows);
        }
        sst_section_kept_release(w->f->table, h);
        ser_run_free(own);
        if (rc)
            return rc;
    }
    it_destroy(s->it);
    s->it = NULL;
    return ERR_OK;
}

/* A run of store_series_each: the rows after a row given, of its host
 * and event (s->same), while they lie in the window's range, added to
 * the run's arrays (their values stay in the cursor's block until it
 * moves). */
struct series_run {
    struct store_series *s;
    const struct ser_window *w;
};

static void run_push(struct store_series *s, int64_t ts, struct slice value)
{
    if (s->run_n == s->run_cap) {
        s->run_cap = s->run_cap ? 2 * s->run_cap : 64;
        s->run_ts = xrealloc(s->run_ts, s->run_cap * sizeof *s->run_ts);
        s->run_value = xrealloc(s->run_value, s->run_cap * sizeof *s->run_value);
    }
    s->run_ts[s->run_n] = ts;
    s->run_value[s->run_n++] = value;
}

static bool run_row(void *arg, struct slice ik, struct slice value)
{
    struct series_run *r = arg;
    struct store_series *s = r->s;
    if (!ikey_ok(ik))
        return false; /* store_series_next reports it */
    int64_t ts = key_ts_from_tskey(coding_get_u64be(ik.ptr + s->same.len), s->snap->db->desc);
    if (ts < r->w->lo || ts > r->w->hi)
        return false;
    run_push(s, ts, value);
    return true;
}

int store_series_each(struct store_series *s, store_series_fn fn, void *arg)
{
    if (s->kept || (!s->started && !s->all_hosts && s->events))
        return each_kept_run(s, fn, arg);
    struct store_series_row row;
    int rc;
    while ((rc = store_series_next(s, &row)) == 1) {
        s->run_n = 0;
        run_push(s, row.ts, row.value);
        /* the host and event's next rows, in its block, without a move
         * through the iterators each: the one refused (past the range, a
         * bad key) is store_series_next's to look at. The row's host and
         * event stay: the run rewrites only the key's bytes after them. */
        if (s->same.len && s->it) {
            struct series_run r = {s, &s->w[s->at - 1]};
            s->unread = it_run(s->it, s->same.len, run_row, &r);
        }
        struct store_series_rows rows = {row.host, row.event, s->run_n, s->run_ts, s->run_value};
        if ((rc = fn(arg, &rows)) != ERR_OK)
            return rc;
    }
    return rc;
}

void store_series_close(struct store_series *s)
{
    if (!s)
        return;
    it_destroy(s->it);
    buf_destroy(&s->host);
    buf_destroy(&s->seek);
    buf_destroy(&s->same);
    buf_destroy(&s->run_from);
    ser_loader_free(s->load);
    free(s->run_ts);
    free(s->run_value);
    free(s->w);
    free(s);
}
