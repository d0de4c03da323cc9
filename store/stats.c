/* store_db_stats: the size and content of a database, gathered from its
 * file lists, memtables and WAL directory without blocking writers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/ikey.h"
#include "store/store_int.h"

uint64_t db_wal_bytes(struct store_db *db)
{
    struct env *env = db->store->env;
    char **names;
    size_t n;
    uint64_t total = 0;
    if (env_list(env, db->wal_dir, &names, &n))
        return 0;
    struct buf p = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        struct env_file *f;
        uint64_t size;
        buf_reset(&p);
        buf_printf(&p, "%s/%s", db->wal_dir, names[i]);
        if (env_open_read(env, p.data, &f))
            continue;
        if (env_size(f, &size) == ERR_OK)
            total += size;
        env_close(f);
    }
    buf_destroy(&p);
    env_free_list(names, n);
    return total;
}

static void ts_range(struct store_db_stats *st, int64_t lo, int64_t hi)
{
    if (st->is_empty || lo < st->oldest_ts)
        st->oldest_ts = lo;
    if (st->is_empty || hi > st->newest_ts)
        st->newest_ts = hi;
    st->is_empty = false;
}

/* Adds a bucket memtable's entries; its first and last keys bound its ts. */
static void mem_stats(const struct part *p, struct memtable *mt, struct store_db_stats *st)
{
    size_t n = mt_count(mt), del = mt_deletes(mt);
    st->rows += n - del;
    st->tombstones += del;
    if (n == 0)
        return;
    struct iter *it = mt_iter(mt);
    it_seek_first(it);
    if (it_valid(it)) {
        int64_t a = part_key_ts(p, ikey_user(it_key(it)));
        it_seek_last(it);
        int64_t b = it_valid(it) ? part_key_ts(p, ikey_user(it_key(it))) : a;
        ts_range(st, a < b ? a : b, a < b ? b : a);
    }
    it_destroy(it);
}

static void part_stats(struct part *p, struct store_db_stats *st)
{
    pthread_mutex_lock(&p->mu);
    struct version *v = p->ver;
    version_ref(v);
    size_t nm = 1 + p->nimm;
    struct memtable **mts = xcalloc(nm, sizeof *mts);
    mts[0] = p->mem;
    for (size_t i = 0; i < p->nimm; i++)
        mts[1 + i] = p->imm[i];
    for (size_t i = 0; i < nm; i++)
        mt_ref(mts[i]);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < v->n; i++) {
        const struct sst_props *pr = &v->files[i]->props;
        st->sst_bytes += pr->size;
        if (p->is_index)
            continue;
        st->rows += pr->entries - pr->deletes;
        st->tombstones += pr->deletes;
        if (pr->entries)
            ts_range(st, pr->min_ts, pr->max_ts);
    }
    for (size_t i = 0; i < nm; i++) {
        if (!p->is_index)
            mem_stats(p, mts[i], st);
        mt_unref(mts[i]);
    }
    free(mts);
    version_unref(v);
}

int store_db_stats(struct store_db *db, struct store_db_stats *out)
{
    struct store_db_stats st = {.is_empty = true};
    for (uint32_t i = 0; i < db->nparts; i++)
        part_stats(&db->parts[i], &st);
    st.wal_bytes = db_wal_bytes(db);
    st.bytes = st.sst_bytes + st.wal_bytes;
    st.bytes_reclaimed =
        atomic_load(&db->m.ttl_bytes_reclaimed) + atomic_load(&db->m.guard_bytes_dropped);
    st.rows_expired = atomic_load(&db->m.ttl_rows_expired);
    st.rows_deleted = atomic_load(&db->m.rows_deleted);
    st.range_tombstones = store_db_range_tombstones(db);
    if (st.is_empty)
        st.oldest_ts = st.newest_ts = 0;
    *out = st;
    return ERR_OK;
}
