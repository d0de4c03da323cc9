/* A database's zstd dictionaries (zdict.h).
 *
 *   file DATA/<db>/dict/<id>.zd (id: 6+ decimal digits)
 *        = magic u32 "LBZD" | id u32 | len u32 | crc u32 | dict[len]
 *   crc: masked crc32c of the dictionary bytes.
 * Published entries are never changed or removed while the set lives, so
 * readers look them up without a lock (the count is published last). */
#include "store/table/zdict.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#include <zstd.h>

#include "base/buf.h"
#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"

#define ZD_MAGIC 0x445a424cu /* "LBZD" read as u32le */
#define ZD_HEADER 16
#define ZD_MAX 64 /* dictionaries a set holds */

struct zd_entry {
    uint32_t id;
    ZSTD_CDict *c;
    ZSTD_DDict *d;
};

struct zdict_set {
    atomic_int refs;
    struct env *env;
    char *dir;
    int level;
    atomic_ullong *corrupt;
    struct zd_entry v[ZD_MAX];
    atomic_uint n;   /* entries published */
    uint32_t max_id; /* the largest id in the folder, loaded or not */
    pthread_mutex_t mu;
    struct buf samples; /* mu: concatenated forms */
    size_t *sizes;      /* mu */
    size_t nsizes, cap;
};

static atomic_size_t min_samples = ZDICT_MIN_SAMPLE_BYTES;

void zdict_test_set_min_samples(size_t bytes)
{
    atomic_store(&min_samples, bytes ? bytes : ZDICT_MIN_SAMPLE_BYTES);
}

/* Makes the entry of dictionary bytes (both directions); false if zstd
 * cannot load them. */
static bool make_entry(struct zdict_set *s, uint32_t id, const char *dict, size_t len,
                       struct zd_entry *e)
{
    e->id = id;
    e->c = ZSTD_createCDict(dict, len, s->level);
    e->d = ZSTD_createDDict(dict, len);
    if (e->c && e->d)
        return true;
    ZSTD_freeCDict(e->c);
    ZSTD_freeDDict(e->d);
    return false;
}

static void publish(struct zdict_set *s, const struct zd_entry *e)
{
    unsigned n = atomic_load_explicit(&s->n, memory_order_relaxed);
    s->v[n] = *e;
    atomic_store_explicit(&s->n, n + 1, memory_order_release);
}

/* Loads one file; false (logged and counted) if it is damaged. */
static bool load_file(struct zdict_set *s, const char *name, uint32_t id)
{
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/%s", s->dir, name);
    char *data = NULL;
    size_t len = 0;
    bool ok = false;
    int rc = env_read_all(s->env, path.data, ZDICT_BYTES + ZD_HEADER, &data, &len);
    struct zd_entry e;
    if (rc == ERR_OK && len >= ZD_HEADER && coding_get_u32le(data) == ZD_MAGIC &&
        coding_get_u32le(data + 4) == id && coding_get_u32le(data + 8) == len - ZD_HEADER &&
        crc32c_unmask(coding_get_u32le(data + 12)) == crc32c(data + ZD_HEADER, len - ZD_HEADER))
        ok = make_entry(s, id, data + ZD_HEADER, len - ZD_HEADER, &e);
    if (ok) {
        publish(s, &e);
    } else {
        err_corrupt("%s: damaged zstd dictionary: the blocks that use it read as corrupt "
                    "until the file is restored (from a backup of the database)",
                    path.data);
        atomic_fetch_add(s->corrupt, 1);
    }
    free(data);
    buf_destroy(&path);
    return ok;
}

/* The id of a dictionary file name, 0 if it is not one. */
static uint32_t id_of(const char *name)
{
    char *end;
    unsigned long v = strtoul(name, &end, 10);
    if (end == name || strcmp(end, ".zd") != 0 || v == 0 || v > UINT32_MAX)
        return 0;
    return (uint32_t)v;
}

struct named_id {
    uint32_t id;
    const char *name;
};

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = ((const struct named_id *)a)->id, y = ((const struct named_id *)b)->id;
    return (x > y) - (x < y);
}

static void load_all(struct zdict_set *s)
{
    char **names = NULL;
    size_t count = 0;
    if (env_list(s->env, s->dir, &names, &count) != ERR_OK)
        return; /* no folder: no dictionary yet */
    struct named_id *ids = xmalloc((count + 1) * sizeof *ids);
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(names[i]);
        if (len > 4 && strcmp(names[i] + len - 4, ".tmp") == 0) {
            struct buf p = BUF_INIT; /* a write cut short: never published */
            buf_printf(&p, "%s/%s", s->dir, names[i]);
            env_unlink(s->env, p.data);
            buf_destroy(&p);
        } else if (id_of(names[i])) {
            ids[n++] = (struct named_id){id_of(names[i]), names[i]};
            if (id_of(names[i]) > s->max_id)
                s->max_id = id_of(names[i]);
        }
    }
    qsort(ids, n, sizeof *ids, cmp_id);
    for (size_t i = 0; i < n && i < ZD_MAX - 1; i++)
        load_file(s, ids[i].name, ids[i].id);
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    free(ids);
}

struct zdict_set *zdict_set_open(struct env *env, const char *dir, int level,
                                 atomic_ullong *corrupt_count)
{
    struct zdict_set *s = xcalloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    s->env = env;
    s->dir = xstrdup(dir);
    s->level = level > 0 ? level : 3;
    s->corrupt = corrupt_count;
    pthread_mutex_init(&s->mu, NULL);
    load_all(s);
    return s;
}

void zdict_set_ref(struct zdict_set *s)
{
    atomic_fetch_add(&s->refs, 1);
}

void zdict_set_unref(struct zdict_set *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    unsigned n = atomic_load(&s->n);
    for (unsigned i = 0; i < n; i++) {
        ZSTD_freeCDict(s->v[i].c);
        ZSTD_freeDDict(s->v[i].d);
    }
    pthread_mutex_destroy(&s->mu);
    buf_destroy(&s->samples);
    free(s->sizes);
    free(s->dir);
    free(s);
}

uint32_t zdict_set_current(struct zdict_set *s, const void **cdict)
{
    unsigned n = atomic_load_explicit(&s->n, memory_order_acquire);
    if (n == 0)
        return 0;
    *cdict = s->v[n - 1].c;
    return s->v[n - 1].id;
}

const void *zdict_set_ddict(struct zdict_set *s, uint32_t id)
{
    unsigned n = atomic_load_explicit(&s->n, memory_order_acquire);
    for (unsigned i = n; i-- > 0;)
        if (s->v[i].id == id)
            return s->v[i].d;
    return NULL;
}

void zdict_set_sample(struct zdict_set *s, struct slice form)
{
    if (atomic_load_explicit(&s->n, memory_order_relaxed) > 0 || form.len == 0)
        return;
    if (pthread_mutex_trylock(&s->mu) != 0)
        return; /* being trained (seconds): a writer does not wait for it */
    if (s->samples.len + form.len <= ZDICT_SAMPLE_BYTES) {
        if (s->nsizes == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 256;
            s->sizes = xrealloc(s->sizes, s->cap * sizeof *s->sizes);
        }
        s->sizes[s->nsizes++] = form.len;
        buf_append(&s->samples, form.ptr, form.len);
    }
    pthread_mutex_unlock(&s->mu);
}

static void drop_samples(struct zdict_set *s)
{
    buf_destroy(&s->samples);
    free(s->sizes);
    s->sizes = NULL;
    s->nsizes = s->cap = 0;
}

/* Writes dictionary id durably. */
static int save(struct zdict_set *s, uint32_t id, const char *dict, size_t len)
{
    int rc = env_mkdir(s->env, s->dir);
    if (rc)
        return rc;
    struct buf f = BUF_INIT;
    buf_reserve(&f, ZD_HEADER + len);
    coding_put_u32le(f.data, ZD_MAGIC);
    coding_put_u32le(f.data + 4, id);
    coding_put_u32le(f.data + 8, (uint32_t)len);
    coding_put_u32le(f.data + 12, crc32c_mask(crc32c(dict, len)));
    f.len = ZD_HEADER;
    buf_append(&f, dict, len);
    char name[32];
    snprintf(name, sizeof name, "%06u.zd", id);
    rc = env_write_atomic(s->env, s->dir, name, f.data, f.len, NULL);
    buf_destroy(&f);
    return rc;
}

int zdict_set_train(struct zdict_set *s)
{
    if (atomic_load_explicit(&s->n, memory_order_acquire) > 0)
        return ERR_OK;
    pthread_mutex_lock(&s->mu);
    int rc = ERR_OK;
    if (atomic_load(&s->n) > 0 || s->samples.len < atomic_load(&min_samples) || s->nsizes < 8) {
        pthread_mutex_unlock(&s->mu);
        return ERR_OK;
    }
    /* zstd learns well from about a hundred times the dictionary's size */
    size_t cap = s->samples.len / 100;
    cap = cap < 1024 ? 1024 : cap > ZDICT_BYTES ? ZDICT_BYTES : cap;
    char *dict = xmalloc(cap);
    size_t len = ZDICT_trainFromBuffer(dict, cap, s->samples.data, s->sizes, (unsigned)s->nsizes);
    struct zd_entry e;
    uint32_t id = s->max_id + 1; /* never the id of a damaged file */
    if (ZDICT_isError(len)) {
        /* samples too alike or too few to learn from: try again with new ones */
        log_info("%s: no zstd dictionary from %zu samples (%s)", s->dir, s->nsizes,
                 ZDICT_getErrorName(len));
        drop_samples(s);
    } else if ((rc = save(s, id, dict, len)) != ERR_OK) {
        log_warn("%s: zstd dictionary not written (%s); cold blocks go without", s->dir,
                 err_name(rc));
    } else if (make_entry(s, id, dict, len, &e)) {
        s->max_id = id;
        publish(s, &e);
        log_info("%s: zstd dictionary %u trained (%zu bytes from %zu blocks)", s->dir, id, len,
                 s->nsizes);
        drop_samples(s);
    }
    free(dict);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
