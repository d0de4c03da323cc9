/* The live tail hub (tail.h): the store's commit hook queues a copy of each
 * committed batch, one dispatcher thread filters its rows per client and
 * appends them to the clients' bounded buffers, and each client's reader
 * takes them out. Locks, outermost first: hub->mu (the client list; held
 * over the dispatch of one batch, so a client cannot go away meanwhile),
 * client->mu (its buffer). hub->qmu (the batch queue) is taken alone. */
#include "query/tail.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/err.h"
#include "query/cond.h"
#include "query/encode.h"
#include "query/query_int.h"
#include "query/sql.h"

/* The initial rows are held whole before the first is sent (they are read
 * newest first and sent oldest first): at most this many bytes of them. */
#define TAIL_INITIAL_MAX_BYTES (16u << 20)
/* Header of an entry of a client's buffer: seq:u64 | len:u32, then len
 * bytes of framed output. seq 0: a marker, never skipped. */
#define ENTRY_HEAD 12

struct tail_batch {
    struct tail_batch *next;
    struct store_db *db; /* compared only, never dereferenced */
    char *db_name;
    uint32_t lost_rows; /* a batch that did not fit: only its row count */
    size_t len;
    char payload[]; /* len bytes */
};

struct tail_client {
    struct tail_hub *hub;
    struct tail_client *prev, *next; /* hub->mu */
    struct store_db *db;             /* a reference */
    struct sql_where where;          /* the live filter (the dispatcher's only) */
    enum tail_format fmt;
    struct buf init; /* framed initial rows, oldest first; the reader's */
    size_t init_pos;
    int64_t last_out_ns; /* the reader's: monotonic time of the last output */
    struct buf part;     /* the reader's: an entry handed over in pieces */
    size_t part_pos;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct buf q; /* mu: entries from qpos on */
    size_t qpos;
    uint64_t skip_upto; /* mu: live rows of seq <= this were in the initial rows */
    uint64_t dropped;   /* mu: rows not buffered since the last marker */
    bool ended;         /* mu: the hub shut down */
    /* a parked reader (tail_park): woken through wake(wake_arg) */
    void (*wake)(void *arg); /* set once before the first read */
    void *wake_arg;
    bool parked;      /* mu */
    int64_t park_due; /* mu: monotonic time its keep-alive is due */
};

struct tail_hub {
    struct store *store;
    struct tail_hub_opts o;
    pthread_t thread;
    /* the queue of committed batches */
    pthread_mutex_t qmu;
    pthread_cond_t qcond;
    struct tail_batch *head, *tail; /* qmu */
    size_t qbytes;                  /* qmu */
    bool stop;                      /* qmu */
    /* clients */
    pthread_mutex_t mu;
    struct tail_client *clients; /* mu */
    atomic_size_t nclients;
    atomic_bool shut;
    /* metrics */
    atomic_ullong rows_sent, rows_dropped, batches_lost;
    /* dispatcher scratch */
    struct cond_row crow;
    struct buf row;
};

/* --- framing --- */

static void frame_row(struct buf *out, enum tail_format fmt, const char *row, size_t n)
{
    if (fmt == TAIL_SSE) {
        buf_puts(out, "data: ");
        buf_append(out, row, n);
        buf_puts(out, "\n\n");
    } else {
        buf_append(out, row, n);
        buf_puts(out, "\n");
    }
}

static void frame_dropped(struct buf *out, enum tail_format fmt, uint64_t n)
{
    if (fmt == TAIL_SSE)
        buf_printf(out, "event: dropped\ndata: {\"dropped\":%llu}\n\n", (unsigned long long)n);
    else
        buf_printf(out, "{\"dropped\":%llu}\n", (unsigned long long)n);
}

static void frame_heartbeat(struct buf *out, enum tail_format fmt)
{
    if (fmt == TAIL_SSE)
        buf_puts(out, ": keep-alive\n\n");
    else
        buf_printf(out, "{\"heartbeat\":%lld}\n", (long long)clock_real_ns());
}

/* --- the writer's side: the commit hook --- */

static void queue_push(struct tail_hub *h, struct tail_batch *b)
{
    if (h->tail)
        h->tail->next = b;
    else
        h->head = b;
    h->tail = b;
    pthread_cond_signal(&h->qcond);
}

static void on_commit(void *arg, struct store_db *db, struct slice payload)
{
    struct tail_hub *h = arg;
    if (atomic_load(&h->nclients) == 0)
        return; /* nobody follows: the write costs nothing more */
    const char *name = store_db_name(db);
    size_t nlen = strlen(name);
    pthread_mutex_lock(&h->qmu);
    bool fits = h->qbytes + payload.len <= h->o.queue_bytes;
    size_t len = fits ? payload.len : 0;
    struct tail_batch *b = malloc(sizeof *b + len + nlen + 1);
    if (b) {
        b->next = NULL;
        b->db = db;
        b->len = len;
        b->lost_rows = fits ? 0 : store_commit_count(payload);
        if (fits)
            memcpy(b->payload, payload.ptr, len);
        b->db_name = b->payload + len;
        memcpy(b->db_name, name, nlen + 1);
        h->qbytes += len;
        queue_push(h, b);
    }
    pthread_mutex_unlock(&h->qmu);
}

/* --- the dispatcher --- */

/* Appends one entry to c's buffer, or counts the row as dropped. The
 * reader compacts the buffer; here only its pending bytes count. */
static void client_push(struct tail_hub *h, struct tail_client *c, uint64_t seq, const char *row,
                        size_t n)
{
    pthread_mutex_lock(&c->mu);
    if (seq <= c->skip_upto || c->ended) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    size_t pending = c->q.len - c->qpos;
    size_t need = ENTRY_HEAD + n + 16 + (c->dropped ? ENTRY_HEAD + 64 : 0);
    if (pending + need > h->o.client_buffer_bytes) {
        c->dropped++;
        atomic_fetch_add(&h->rows_dropped, 1);
        pthread_mutex_unlock(&c->mu);
        return;
    }
    if (c->dropped) { /* the marker goes where the rows are missing */
        struct buf m = BUF_INIT;
        frame_dropped(&m, c->fmt, c->dropped);
        uint64_t zero = 0;
        uint32_t len = (uint32_t)m.len;
        buf_append(&c->q, &zero, 8);
        buf_append(&c->q, &len, 4);
        buf_append(&c->q, m.data, m.len);
        buf_destroy(&m);
        c->dropped = 0;
    }
    size_t at = c->q.len;
    buf_append(&c->q, &seq, 8);
    buf_append(&c->q, "\0\0\0\0", 4);
    frame_row(&c->q, c->fmt, row, n);
    uint32_t len = (uint32_t)(c->q.len - at - ENTRY_HEAD);
    memcpy(c->q.data + at + 8, &len, 4);
    pthread_mutex_unlock(&c->mu); /* woken once per batch (dispatch_batch) */
}

/* Wakes c's reader. REQUIRES: c->mu. */
static void client_wake(struct tail_client *c)
{
    pthread_cond_signal(&c->cond);
    if (c->parked) {
        c->parked = false;
        c->wake(c->wake_arg);
    }
}

/* Counts n lost rows for every client of db. */
static void clients_lost(struct tail_hub *h, const struct tail_batch *b)
{
    atomic_fetch_add(&h->batches_lost, 1);
    for (struct tail_client *c = h->clients; c; c = c->next) {
        if (c->db != b->db || strcmp(store_db_name(c->db), b->db_name) != 0)
            continue;
        pthread_mutex_lock(&c->mu);
        c->dropped += b->lost_rows;
        client_wake(c);
        pthread_mutex_unlock(&c->mu);
        atomic_fetch_add(&h->rows_dropped, b->lost_rows);
    }
}

/* A client that follows given hosts (else given events), once per name:
 * sorted by name, so that a row is checked only against the clients of
 * its host or event (and those that follow every row), not against every
 * client. */
struct host_ref {
    struct slice host; /* the host or the event */
    struct tail_client *c;
};

struct name_refs {
    struct host_ref *v;
    size_t n, cap;
};

struct dispatch {
    struct tail_hub *h;
    struct tail_client **any; /* clients of the database without a host or event set */
    size_t nany, anycap;
    struct name_refs hosts, events; /* the others, by host or else by event */
};

static int host_cmp(struct slice a, struct slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = memcmp(a.ptr, b.ptr, n);
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

static int ref_cmp(const void *a, const void *b)
{
    return host_cmp(((const struct host_ref *)a)->host, ((const struct host_ref *)b)->host);
}

/* The first ref of name (r->n if none). */
static size_t refs_find(const struct name_refs *r, struct slice name)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (host_cmp(r->v[mid].host, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool refs_has(const struct name_refs *r, size_t i, struct slice name)
{
    return i < r->n && host_cmp(r->v[i].host, name) == 0;
}

/* Sends the row to c if it matches; *state: 0 not yet checked, 1 sendable
 * (TTL checked, encoded in h->row), -1 not sendable. */
static void offer_row(struct tail_hub *h, struct tail_client *c, const struct store_row *row,
                      int *state)
{
    int rc = ERR_OK;
    if (*state < 0 || !cond_match(c->where.cond, &h->crow, &rc))
        return;
    if (*state == 0) {
        *state = -1;
        if (row->ts < store_db_cutoff(c->db, row->event))
            return; /* rows a read would hide are not sent either */
        buf_reset(&h->row);
        struct enc_proj all = {true, NULL, 0};
        if (enc_row(&h->row, row->ts, row->host, row->event, row->id, row->value, &all))
            return; /* a damaged record: reads fail on it too */
        *state = 1;
    }
    client_push(h, c, row->seq, h->row.data, h->row.len);
}

static int dispatch_row(void *arg, const struct store_row *row)
{
    struct dispatch *d = arg;
    struct tail_hub *h = d->h;
    if (row->is_delete)
        return 0;
    size_t i = refs_find(&d->hosts, row->host);
    size_t j = refs_find(&d->events, row->event);
    if (d->nany == 0 && !refs_has(&d->hosts, i, row->host) && !refs_has(&d->events, j, row->event))
        return 0; /* nobody follows this host or event */
    cond_row_set(&h->crow, row->ts, row->host, row->event, row->id, row->value);
    int state = 0;
    for (; refs_has(&d->hosts, i, row->host); i++)
        offer_row(h, d->hosts.v[i].c, row, &state);
    for (; refs_has(&d->events, j, row->event); j++)
        offer_row(h, d->events.v[j].c, row, &state);
    for (size_t k = 0; k < d->nany; k++)
        offer_row(h, d->any[k], row, &state);
    return 0;
}

static void refs_add(struct name_refs *r, const struct sql_strset *set, struct tail_client *c)
{
    for (size_t i = 0; i < set->n; i++) {
        if (r->n == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 16;
            r->v = xrealloc(r->v, r->cap * sizeof *r->v);
        }
        r->v[r->n++] = (struct host_ref){slice_make(set->v[i], set->len[i]), c};
    }
}

static void dispatch_add(struct dispatch *d, struct tail_client *c)
{
    if (c->where.host.is_set) {
        refs_add(&d->hosts, &c->where.host, c);
    } else if (c->where.event.is_set) {
        refs_add(&d->events, &c->where.event, c);
    } else {
        if (d->nany == d->anycap) {
            d->anycap = d->anycap ? d->anycap * 2 : 16;
            d->any = xrealloc(d->any, d->anycap * sizeof *d->any);
        }
        d->any[d->nany++] = c;
    }
}

/* Wakes the readers of the clients that may have got rows. */
static void wake_readers(struct tail_hub *h)
{
    for (struct tail_client *c = h->clients; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        if (c->q.len > c->qpos)
            client_wake(c);
        pthread_mutex_unlock(&c->mu);
    }
}

static void dispatch_batch(struct tail_hub *h, struct tail_batch *b)
{
    pthread_mutex_lock(&h->mu);
    if (b->lost_rows) {
        clients_lost(h, b);
        pthread_mutex_unlock(&h->mu);
        return;
    }
    struct dispatch d;
    memset(&d, 0, sizeof d);
    d.h = h;
    for (struct tail_client *c = h->clients; c; c = c->next)
        if (c->db == b->db && strcmp(store_db_name(c->db), b->db_name) == 0)
            dispatch_add(&d, c);
    if (d.hosts.n)
        qsort(d.hosts.v, d.hosts.n, sizeof *d.hosts.v, ref_cmp);
    if (d.events.n)
        qsort(d.events.v, d.events.n, sizeof *d.events.v, ref_cmp);
    if (d.nany || d.hosts.n || d.events.n) {
        store_commit_rows(slice_make(b->payload, b->len), dispatch_row, &d);
        wake_readers(h);
    }
    free(d.any);
    free(d.hosts.v);
    free(d.events.v);
    pthread_mutex_unlock(&h->mu);
}

/* Wakes the parked readers whose keep-alive is due. */
static void wake_due(struct tail_hub *h)
{
    int64_t now = clock_mono_ns();
    pthread_mutex_lock(&h->mu);
    for (struct tail_client *c = h->clients; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        if (c->parked && c->park_due <= now)
            client_wake(c);
        pthread_mutex_unlock(&c->mu);
    }
    pthread_mutex_unlock(&h->mu);
}

#define TICK_NS (100LL * 1000 * 1000)

static void *dispatcher(void *arg)
{
    struct tail_hub *h = arg;
    int64_t next_tick = clock_mono_ns() + TICK_NS;
    pthread_mutex_lock(&h->qmu);
    for (;;) {
        while (!h->head && !h->stop && clock_mono_ns() < next_tick) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += TICK_NS;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&h->qcond, &h->qmu, &ts);
        }
        if (clock_mono_ns() >= next_tick) { /* keep-alives of parked readers */
            next_tick = clock_mono_ns() + TICK_NS;
            pthread_mutex_unlock(&h->qmu);
            wake_due(h);
            pthread_mutex_lock(&h->qmu);
            continue;
        }
        if (!h->head)
            break; /* stopped and drained */
        struct tail_batch *b = h->head;
        h->head = b->next;
        if (!h->head)
            h->tail = NULL;
        pthread_mutex_unlock(&h->qmu);
        dispatch_batch(h, b);
        pthread_mutex_lock(&h->qmu);
        h->qbytes -= b->len;
        free(b);
    }
    pthread_mutex_unlock(&h->qmu);
    return NULL;
}

/* --- the hub --- */

int tail_hub_new(struct store *s, const struct tail_hub_opts *o, struct tail_hub **out)
{
    struct tail_hub *h = xcalloc(1, sizeof *h);
    h->store = s;
    h->o = *o;
    pthread_mutex_init(&h->qmu, NULL);
    pthread_cond_init(&h->qcond, NULL);
    pthread_mutex_init(&h->mu, NULL);
    cond_row_init(&h->crow);
    if (pthread_create(&h->thread, NULL, dispatcher, h) != 0) {
        cond_row_destroy(&h->crow);
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->qcond);
        pthread_mutex_destroy(&h->qmu);
        free(h);
        return ERR_NOMEM;
    }
    store_set_commit_hook(s, on_commit, h);
    *out = h;
    return ERR_OK;
}

void tail_hub_shutdown(struct tail_hub *h)
{
    if (!h)
        return;
    atomic_store(&h->shut, true);
    pthread_mutex_lock(&h->mu);
    for (struct tail_client *c = h->clients; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        c->ended = true;
        client_wake(c);
        pthread_mutex_unlock(&c->mu);
    }
    pthread_mutex_unlock(&h->mu);
}

void tail_hub_free(struct tail_hub *h)
{
    if (!h)
        return;
    store_set_commit_hook(h->store, NULL, NULL);
    pthread_mutex_lock(&h->qmu);
    h->stop = true;
    pthread_cond_signal(&h->qcond);
    pthread_mutex_unlock(&h->qmu);
    pthread_join(h->thread, NULL);
    cond_row_destroy(&h->crow);
    buf_destroy(&h->row);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->qcond);
    pthread_mutex_destroy(&h->qmu);
    free(h);
}

void tail_hub_metrics(struct tail_hub *h, struct buf *out)
{
    if (!h)
        return;
    buf_puts(out, "# HELP logbucket_tail_clients Live tail clients connected.\n"
                  "# TYPE logbucket_tail_clients gauge\n");
    buf_printf(out, "logbucket_tail_clients %zu\n", atomic_load(&h->nclients));
    buf_puts(out, "# HELP logbucket_tail_rows_sent_total Rows handed to tail clients.\n"
                  "# TYPE logbucket_tail_rows_sent_total counter\n");
    buf_printf(out, "logbucket_tail_rows_sent_total %llu\n", atomic_load(&h->rows_sent));
    buf_puts(out, "# HELP logbucket_tail_rows_dropped_total Rows a slow tail client missed "
                  "(full buffer or full queue).\n"
                  "# TYPE logbucket_tail_rows_dropped_total counter\n");
    buf_printf(out, "logbucket_tail_rows_dropped_total %llu\n", atomic_load(&h->rows_dropped));
    buf_puts(out, "# HELP logbucket_tail_batches_lost_total Committed batches not queued "
                  "for the tail (queue full).\n"
                  "# TYPE logbucket_tail_batches_lost_total counter\n");
    buf_printf(out, "logbucket_tail_batches_lost_total %llu\n", atomic_load(&h->batches_lost));
}

/* --- opening a client --- */

/* The parameters of the live filter: the initial read's range and limit
 * are not part of it. */
struct filter_args {
    const char *(*get)(void *, const char *);
    void *arg;
    char limit[24];
};

static const char *filter_get(void *arg, const char *name)
{
    struct filter_args *f = arg;
    if (strcmp(name, "start") == 0 || strcmp(name, "end") == 0 || strcmp(name, "order") == 0 ||
        strcmp(name, "limit") == 0)
        return NULL;
    return f->get(f->arg, name);
}

/* The initial read: since becomes start, newest first, limit rows; no ts
 * range needed (a FULL plan in the stored order stops after limit rows;
 * a rare filter without since reads on to the oldest row). */
static const char *initial_get(void *arg, const char *name)
{
    struct filter_args *f = arg;
    if (strcmp(name, "start") == 0)
        return f->get(f->arg, "since");
    if (strcmp(name, "end") == 0)
        return NULL;
    if (strcmp(name, "order") == 0)
        return "desc";
    if (strcmp(name, "limit") == 0)
        return f->limit;
    if (strcmp(name, "full_scan") == 0)
        return "true"; /* bounded by limit: the newest rows, read newest first */
    return f->get(f->arg, name);
}

/* How many initial rows: ERR_INVAL for a bad limit; 0: none. */
static int initial_rows(const struct tail_hub *h, const char *(*get)(void *, const char *),
                        void *arg, size_t *n, struct buf *err)
{
    const char *lim = get(arg, "limit");
    const char *since = get(arg, "since");
    *n = 0;
    if (lim && *lim) {
        char *end;
        long long v = strtoll(lim, &end, 10);
        if (*end || v < 0 || (size_t)v > h->o.initial_max_rows) {
            buf_printf(err, "bad limit '%s': the newest rows to start with, 0 to %zu", lim,
                       h->o.initial_max_rows);
            return ERR_INVAL;
        }
        *n = (size_t)v;
    } else if (since && *since) {
        *n = h->o.initial_max_rows;
    }
    int64_t t;
    if (since && *since && sql_parse_time(since, strlen(since), clock_real_ns(), &t) != ERR_OK) {
        buf_printf(err,
                   "bad since '%s': use integer ns, RFC 3339 (2024-01-01T00:00:00Z), now, or "
                   "relative like -1h",
                   since);
        return ERR_INVAL;
    }
    return ERR_OK;
}

/* Reads the whole initial output (NDJSON rows, newest first), keeping at
 * most TAIL_INITIAL_MAX_BYTES of the newest rows; then frames them into
 * c->init oldest first. */
static int initial_collect(struct tail_client *c, struct query_cursor *cur, struct buf *err)
{
    struct buf all = BUF_INIT;
    char tmp[64 * 1024];
    ssize_t n;
    while ((n = query_cursor_read(cur, tmp, sizeof tmp)) > 0) {
        if (all.len < TAIL_INITIAL_MAX_BYTES)
            buf_append(&all, tmp, (size_t)n);
    }
    if (n < 0) {
        buf_printf(err, "%s", query_cursor_error(cur));
        buf_destroy(&all);
        return (int)n;
    }
    /* only whole lines: a cut one is the oldest kept, dropped */
    size_t end = all.len;
    while (end && all.data[end - 1] != '\n')
        end--;
    while (end) {
        size_t start = end - 1;
        while (start && all.data[start - 1] != '\n')
            start--;
        frame_row(&c->init, c->fmt, all.data + start, end - 1 - start);
        end = start;
    }
    buf_destroy(&all);
    return ERR_OK;
}

static void client_link(struct tail_hub *h, struct tail_client *c)
{
    pthread_mutex_lock(&h->mu);
    c->next = h->clients;
    if (h->clients)
        h->clients->prev = c;
    h->clients = c;
    pthread_mutex_unlock(&h->mu);
}

static void client_free(struct tail_client *c)
{
    sql_where_destroy(&c->where);
    if (c->db)
        store_db_unref(c->db);
    buf_destroy(&c->init);
    buf_destroy(&c->part);
    buf_destroy(&c->q);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Claims a client slot: false when full or shutting down. */
static bool slot_take(struct tail_hub *h)
{
    size_t n = atomic_load(&h->nclients);
    do {
        if (n >= h->o.max_clients)
            return false;
    } while (!atomic_compare_exchange_weak(&h->nclients, &n, n + 1));
    return true;
}

static int client_filter(struct tail_client *c, struct filter_args *f, struct buf *err)
{
    struct sql_stmt st;
    memset(&st, 0, sizeof st);
    sql_where_init(&st.sel.where);
    int rc = query_params_select(filter_get, f, clock_real_ns(), &st, err);
    c->where = st.sel.where;
    return rc;
}

static int client_initial(struct tail_client *c, struct filter_args *f, size_t rows,
                          const struct query_opts *o, struct buf *err)
{
    snprintf(f->limit, sizeof f->limit, "%zu", rows);
    struct query_cursor *cur = NULL;
    int rc = query_params_open(c->hub->store, initial_get, f, o, &cur, err);
    if (rc)
        return rc;
    uint64_t seq = query_cursor_snap_seq(cur);
    rc = initial_collect(c, cur, err);
    query_cursor_free(cur);
    pthread_mutex_lock(&c->mu);
    c->skip_upto = seq;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int tail_open(struct tail_hub *h, const char *(*get)(void *arg, const char *name), void *arg,
              enum tail_format fmt, const struct query_opts *o, struct tail_client **out,
              struct buf *err)
{
    const char *db = get(arg, "db");
    if (!db || !*db) {
        buf_puts(err, "missing db= parameter");
        return ERR_INVAL;
    }
    size_t rows;
    int rc = initial_rows(h, get, arg, &rows, err);
    if (rc)
        return rc;
    struct tail_client *c = xcalloc(1, sizeof *c);
    c->hub = h;
    c->fmt = fmt;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cond, NULL);
    struct filter_args f = {get, arg, ""};
    rc = client_filter(c, &f, err);
    if (!rc && store_db_get(h->store, db, &c->db) != ERR_OK) {
        buf_printf(err, "database '%s' not found", db);
        rc = ERR_NOTFOUND;
    }
    if (!rc && atomic_load(&h->shut)) {
        buf_puts(err, "the server is shutting down");
        rc = ERR_BUSY;
    } else if (!rc && !slot_take(h)) {
        buf_printf(err, "too many tail clients: at most max_tail_clients = %zu; retry later",
                   h->o.max_clients);
        rc = ERR_BUSY;
    }
    if (rc) {
        client_free(c);
        return rc;
    }
    /* registered before the initial read's snapshot: no gap between them */
    client_link(h, c);
    if (rows)
        rc = client_initial(c, &f, rows, o, err);
    if (rc) {
        tail_close(c);
        return rc;
    }
    c->last_out_ns = clock_mono_ns();
    if (atomic_load(&h->shut))
        tail_hub_shutdown(h); /* ended with the others */
    *out = c;
    return ERR_OK;
}

void tail_close(struct tail_client *c)
{
    if (!c)
        return;
    struct tail_hub *h = c->hub;
    pthread_mutex_lock(&h->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        h->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&h->mu);
    atomic_fetch_sub(&h->nclients, 1);
    client_free(c);
}

/* --- reading --- */

static size_t copy_part(struct tail_client *c, char *buf, size_t max)
{
    size_t n = c->part.len - c->part_pos;
    if (n > max)
        n = max;
    memcpy(buf, c->part.data + c->part_pos, n);
    c->part_pos += n;
    if (c->part_pos == c->part.len) {
        buf_reset(&c->part);
        c->part_pos = 0;
    }
    return n;
}

/* Moves buffered entries (those not skipped) into c->part, at most about
 * max bytes. REQUIRES: c->mu, c->part empty. */
static void take_entries(struct tail_client *c, size_t max)
{
    struct tail_hub *h = c->hub;
    while (c->qpos < c->q.len && c->part.len < max) {
        uint64_t seq;
        uint32_t len;
        memcpy(&seq, c->q.data + c->qpos, 8);
        memcpy(&len, c->q.data + c->qpos + 8, 4);
        const char *p = c->q.data + c->qpos + ENTRY_HEAD;
        c->qpos += ENTRY_HEAD + len;
        if (seq != 0 && seq <= c->skip_upto)
            continue;
        buf_append(&c->part, p, len);
        if (seq != 0)
            atomic_fetch_add(&h->rows_sent, 1);
    }
    if (c->qpos == c->q.len) {
        buf_reset(&c->q);
        c->qpos = 0;
    } else if (c->qpos > c->q.len / 2) {
        memmove(c->q.data, c->q.data + c->qpos, c->q.len - c->qpos);
        c->q.len -= c->qpos;
        c->qpos = 0;
    }
    if (c->qpos == c->q.len && c->dropped) { /* the rows missing are the last ones */
        frame_dropped(&c->part, c->fmt, c->dropped);
        c->dropped = 0;
    }
}

static void deadline_of(int64_t wait_ns, struct timespec *ts)
{
    clock_gettime(CLOCK_REALTIME, ts);
    int64_t ns = ts->tv_nsec + wait_ns % 1000000000LL;
    ts->tv_sec += (time_t)(wait_ns / 1000000000LL + ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
}

ssize_t tail_read(struct tail_client *c, char *buf, size_t max, int64_t wait_ns)
{
    if (c->init_pos < c->init.len) {
        size_t n = c->init.len - c->init_pos;
        if (n > max)
            n = max;
        memcpy(buf, c->init.data + c->init_pos, n);
        c->init_pos += n;
        c->last_out_ns = clock_mono_ns();
        return (ssize_t)n;
    }
    if (c->part.len)
        return (ssize_t)copy_part(c, buf, max);
    int64_t now = clock_mono_ns();
    int64_t beat = c->last_out_ns + c->hub->o.keepalive_ns - now;
    if (wait_ns > beat)
        wait_ns = beat > 0 ? beat : 0;
    pthread_mutex_lock(&c->mu);
    if (c->qpos == c->q.len && !c->dropped && !c->ended && wait_ns > 0) {
        struct timespec ts;
        deadline_of(wait_ns, &ts);
        pthread_cond_timedwait(&c->cond, &c->mu, &ts);
    }
    bool ended = c->ended;
    if (!ended)
        take_entries(c, max);
    pthread_mutex_unlock(&c->mu);
    if (ended)
        return -1;
    now = clock_mono_ns();
    if (!c->part.len && now - c->last_out_ns >= c->hub->o.keepalive_ns)
        frame_heartbeat(&c->part, c->fmt);
    if (!c->part.len)
        return 0;
    c->last_out_ns = now;
    return (ssize_t)copy_part(c, buf, max);
}

void tail_set_wake(struct tail_client *c, void (*wake)(void *arg), void *arg)
{
    c->wake = wake;
    c->wake_arg = arg;
}

bool tail_park(struct tail_client *c, void (*suspend)(void *arg), void *arg)
{
    bool parked = false;
    pthread_mutex_lock(&c->mu);
    if (c->qpos == c->q.len && !c->dropped && !c->ended && c->wake) {
        c->parked = true;
        c->park_due = c->last_out_ns + c->hub->o.keepalive_ns;
        suspend(arg);
        parked = true;
    }
    pthread_mutex_unlock(&c->mu);
    return parked;
}
