/* One partition: its directory, manifest, versions and file metadata.
 * The manifest lists the live SSTables and is replaced whole and
 * atomically (temp file, fsync, rename, fsync dir) after every flush or
 * compaction; files it does not name are leftovers and deleted at open. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "store/catalog.h"
#include "store/store_int.h"

#define MF_MAGIC 0x464d424cu /* "LBMF" */
#define MF_VERSION 2         /* 1 is read too: its entries have no flags */
#define MF_HEADER 36
#define MF_FILE_V1 56
#define MF_FILE 64
#define MF_FLAG_FAST 1u /* compressed for speed: to be recompressed when cold */
#define MF_FLAG_HOT 2u  /* LZ4HC of a newest window: to be rewritten with zstd when aged */
#define MF_MAX_FILES 1000000

/* --- files and versions --- */

void file_meta_unref(struct file_meta *f)
{
    if (!f || atomic_fetch_sub(&f->refs, 1) != 1)
        return;
    sst_unref(f->table);
    cat_file_free(f->cat);
    if (atomic_load(&f->obsolete))
        env_unlink(f->env, f->path);
    free(f->path);
    free(f);
}

static int file_order(const void *a, const void *b)
{
    const struct file_meta *x = *(struct file_meta *const *)a, *y = *(struct file_meta *const *)b;
    if (x->window != y->window)
        return x->window < y->window ? -1 : 1;
    return x->number > y->number ? -1 : x->number < y->number;
}

struct version *version_new(struct file_meta **files, size_t n)
{
    struct version *v = xcalloc(1, sizeof *v);
    atomic_init(&v->refs, 1);
    v->n = n;
    v->files = xcalloc(n ? n : 1, sizeof *v->files);
    for (size_t i = 0; i < n; i++) {
        atomic_fetch_add(&files[i]->refs, 1);
        v->files[i] = files[i];
    }
    qsort(v->files, n, sizeof *v->files, file_order);
    return v;
}

void version_ref(struct version *v)
{
    atomic_fetch_add(&v->refs, 1);
}

void version_unref(struct version *v)
{
    if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    for (size_t i = 0; i < v->n; i++)
        file_meta_unref(v->files[i]);
    free(v->files);
    free(v);
}

int64_t part_window(int64_t ts)
{
    int64_t w = ts / STORE_WINDOW_NS;
    if (ts % STORE_WINDOW_NS < 0)
        w--;
    return w;
}

int64_t part_key_ts(const struct part *p, struct slice ukey)
{
    return p->is_index ? key_index_ts(ukey, p->db->desc) : key_row_ts(ukey, p->db->desc);
}

struct slice part_key_host(const struct part *p, struct slice ukey)
{
    return p->is_index ? key_index_host(ukey) : key_row_host(ukey);
}

struct slice part_key_event(const struct part *p, struct slice ukey)
{
    return p->is_index ? key_index_event(ukey) : key_row_event(ukey);
}

void part_file_path(const struct part *p, uint64_t number, struct buf *out)
{
    buf_printf(out, "%s/%06" PRIu64 ".sst", p->dir, number);
}

uint64_t part_new_file_number(struct part *p)
{
    return p->next_file++;
}

int part_open_file(struct part *p, uint64_t number, const struct sst_props *props,
                   const struct cat_builder *cat, struct file_meta **out)
{
    struct store *s = p->db->store;
    struct buf path = BUF_INIT;
    part_file_path(p, number, &path);
    struct sst_table *t;
    int rc = sst_open(s->env, path.data, s->cache, &p->db->m.corrupt, &t);
    if (rc) {
        if (rc != ERR_CORRUPT) /* corruption has said where */
            err_note("cannot open %s: %s", path.data,
                     rc == ERR_NOTFOUND ? "missing (listed in its MANIFEST)" : err_name(rc));
        buf_destroy(&path);
        return rc;
    }
    sst_set_dicts(t, p->db->dicts);
    struct file_meta *f = xcalloc(1, sizeof *f);
    atomic_init(&f->refs, 1);
    f->number = number;
    f->props = props ? *props : *sst_get_props(t);
    f->props.size = sst_get_props(t)->size;
    f->window = part_window(f->props.min_ts);
    f->table = t;
    f->path = buf_steal(&path, NULL);
    f->env = s->env;
    atomic_init(&f->obsolete, false);
    f->cut_at = INT64_MIN;
    if (p->is_index)
        f->cat_rc = ERR_NOTFOUND;
    else if (cat) /* just written: parsed from the builder, not read back */
        f->cat_rc = cat_builder_result(cat, &f->props, f->path, &f->cat);
    else
        f->cat_rc = cat_file_load(t, &f->props, f->path, &p->db->m.corrupt, &f->cat);
    if (f->cat_rc && f->cat_rc != ERR_NOTFOUND)
        log_warn("%s: catalog not loaded (%s): discovery queries over it fail", f->path,
                 err_name(f->cat_rc));
    *out = f;
    return ERR_OK;
}

/* --- manifest --- */

static void encode_manifest(const struct version *v, uint64_t next_file, uint64_t flushed_gen,
                            uint64_t last_seq, struct buf *out)
{
    buf_reserve(out, MF_HEADER + v->n * MF_FILE + 4);
    char *p = out->data;
    coding_put_u32le(p, MF_MAGIC);
    coding_put_u32le(p + 4, MF_VERSION);
    coding_put_u64le(p + 8, next_file);
    coding_put_u64le(p + 16, flushed_gen);
    coding_put_u64le(p + 24, last_seq);
    coding_put_u32le(p + 32, (uint32_t)v->n);
    p += MF_HEADER;
    for (size_t i = 0; i < v->n; i++, p += MF_FILE) {
        const struct file_meta *f = v->files[i];
        coding_put_u64le(p, f->number);
        coding_put_u64le(p + 8, (uint64_t)f->window);
        coding_put_u64le(p + 16, f->props.size);
        coding_put_u64le(p + 24, f->props.entries);
        coding_put_u64le(p + 32, f->props.deletes);
        coding_put_u64le(p + 40, (uint64_t)f->props.min_ts);
        coding_put_u64le(p + 48, (uint64_t)f->props.max_ts);
        coding_put_u64le(p + 56, (f->fast ? MF_FLAG_FAST : 0) | (f->hot ? MF_FLAG_HOT : 0));
    }
    coding_put_u32le(p, crc32c_mask(crc32c(out->data, (size_t)(p - out->data))));
    out->len = (size_t)(p - out->data) + 4;
}

int part_write_manifest(struct part *p, struct version *v, uint64_t flushed_gen, uint64_t last_seq,
                        bool *replaced)
{
    struct buf b = BUF_INIT;
    encode_manifest(v, p->next_file, flushed_gen, last_seq, &b);
    int rc = env_write_atomic(p->db->store->env, p->dir, "MANIFEST", b.data, b.len, replaced);
    buf_destroy(&b);
    if (!rc) {
        p->flushed_gen = flushed_gen;
        p->last_seq = last_seq;
    }
    return rc;
}

struct mf_file {
    uint64_t number;
    struct sst_props props;
    uint64_t flags;
};

static int decode_manifest(struct part *p, const char *path, const char *d, size_t len,
                           struct mf_file **files, size_t *n)
{
    if (len < MF_HEADER + 4 || coding_get_u32le(d) != MF_MAGIC)
        return err_corrupt("manifest %s: bad magic or size", path);
    if (crc32c_unmask(coding_get_u32le(d + len - 4)) != crc32c(d, len - 4))
        return err_corrupt("manifest %s: checksum mismatch", path);
    uint32_t version = coding_get_u32le(d + 4);
    if (version != 1 && version != MF_VERSION)
        return err_corrupt("manifest %s: unknown version", path);
    size_t esize = version == 1 ? MF_FILE_V1 : MF_FILE;
    uint32_t nf = coding_get_u32le(d + 32);
    if (nf > MF_MAX_FILES || (size_t)nf * esize != len - MF_HEADER - 4)
        return err_corrupt("manifest %s: %u files in %zu bytes", path, nf, len);
    p->next_file = coding_get_u64le(d + 8);
    p->flushed_gen = coding_get_u64le(d + 16);
    p->last_seq = coding_get_u64le(d + 24);
    struct mf_file *v = xcalloc(nf ? nf : 1, sizeof *v);
    for (uint32_t i = 0; i < nf; i++) {
        const char *f = d + MF_HEADER + (size_t)i * esize;
        v[i].number = coding_get_u64le(f);
        v[i].props.size = coding_get_u64le(f + 16);
        v[i].props.entries = coding_get_u64le(f + 24);
        v[i].props.deletes = coding_get_u64le(f + 32);
        v[i].props.min_ts = (int64_t)coding_get_u64le(f + 40);
        v[i].props.max_ts = (int64_t)coding_get_u64le(f + 48);
        v[i].flags = version == 1 ? 0 : coding_get_u64le(f + 56);
        if (v[i].number >= p->next_file) {
            uint64_t bad = v[i].number;
            free(v);
            return err_corrupt("manifest %s: file number %" PRIu64 " >= next", path, bad);
        }
    }
    *files = v;
    *n = nf;
    return ERR_OK;
}

static bool listed(const struct mf_file *files, size_t n, uint64_t number)
{
    for (size_t i = 0; i < n; i++)
        if (files[i].number == number)
            return true;
    return false;
}

/* Deletes *.sst files the manifest does not name, and temp files. */
static void remove_leftovers(struct part *p, const struct mf_file *files, size_t n)
{
    struct env *env = p->db->store->env;
    char **names;
    size_t count;
    if (env_list(env, p->dir, &names, &count))
        return;
    struct buf path = BUF_INIT;
    for (size_t i = 0; i < count; i++) {
        unsigned long long num;
        char tail[8];
        bool sst = sscanf(names[i], "%llu.%7s", &num, tail) == 2 && strcmp(tail, "sst") == 0;
        bool tmp = strstr(names[i], ".tmp") != NULL;
        if ((sst && !listed(files, n, num)) || tmp) {
            buf_reset(&path);
            buf_printf(&path, "%s/%s", p->dir, names[i]);
            log_info("removing leftover file %s", path.data);
            env_unlink(env, path.data);
        }
    }
    buf_destroy(&path);
    env_free_list(names, count);
}

/* With no MANIFEST, the SSTables of the partition (if any) can only be a
 * lost manifest's files (a new partition writes an empty manifest at once,
 * so a flush never leaves files without one): fail the open, naming one of
 * them, and delete nothing. */
static int check_unlisted(struct part *p)
{
    char **names;
    size_t count, nsst = 0;
    int rc = env_list(p->db->store->env, p->dir, &names, &count);
    if (rc)
        return rc;
    const char *one = NULL;
    for (size_t i = 0; i < count; i++) {
        unsigned long long num;
        char tail[8];
        if (sscanf(names[i], "%llu.%7s", &num, tail) == 2 && strcmp(tail, "sst") == 0) {
            nsst++;
            one = one ? one : names[i];
        }
    }
    if (nsst)
        rc = err_corrupt("%s/MANIFEST is missing beside %zu SSTable(s) (%s%s): the partition is "
                         "not opened and nothing was deleted; restore the MANIFEST, or move the "
                         "files away to open it empty",
                         p->dir, nsst, one, nsst > 1 ? ", ..." : "");
    env_free_list(names, count);
    return rc;
}

static int load_files(struct part *p, const struct mf_file *files, size_t n)
{
    struct file_meta **metas = xcalloc(n ? n : 1, sizeof *metas);
    int rc = ERR_OK;
    size_t i;
    for (i = 0; i < n && !rc; i++) {
        rc = part_open_file(p, files[i].number, &files[i].props, NULL, &metas[i]);
        if (!rc) {
            metas[i]->fast = (files[i].flags & MF_FLAG_FAST) != 0;
            metas[i]->hot = (files[i].flags & MF_FLAG_HOT) != 0;
        }
    }
    if (!rc)
        p->ver = version_new(metas, n);
    for (size_t j = 0; j < (rc ? i - 1 : n); j++)
        file_meta_unref(metas[j]);
    free(metas);
    return rc;
}

int part_open(struct store_db *db, uint32_t id, struct part *p)
{
    struct env *env = db->store->env;
    struct buf b = BUF_INIT;
    char *data = NULL;
    size_t len = 0, n = 0;
    struct mf_file *files = NULL;
    p->db = db;
    p->id = id;
    p->is_index = id == db->buckets;
    if (p->is_index)
        buf_printf(&b, "%s/hidx", db->dir);
    else
        buf_printf(&b, "%s/p%02u", db->dir, id);
    p->dir = buf_steal(&b, NULL);
    pthread_mutex_init(&p->mu, NULL);
    p->next_file = 1;
    int rc = env_mkdir(env, p->dir);
    if (rc)
        return rc;
    buf_printf(&b, "%s/MANIFEST", p->dir);
    rc = env_read_all(env, b.data, (size_t)MF_HEADER + (size_t)MF_MAX_FILES * MF_FILE + 4, &data,
                      &len);
    bool fresh = rc == ERR_NOTFOUND;
    if (fresh)
        rc = check_unlisted(p);
    else if (!rc)
        rc = decode_manifest(p, b.data, data, len, &files, &n);
    if (!rc) {
        remove_leftovers(p, files, n);
        rc = load_files(p, files, n);
    }
    if (!rc && fresh) {
        /* from now on a missing MANIFEST means a lost one */
        bool replaced;
        rc = part_write_manifest(p, p->ver, 0, 0, &replaced);
    }
    atomic_init(&p->done_gen, p->flushed_gen);
    free(files);
    free(data);
    buf_destroy(&b);
    return rc;
}

void part_close(struct part *p)
{
    mt_unref(p->mem);
    for (size_t i = 0; i < p->nimm; i++)
        mt_unref(p->imm[i]);
    free(p->imm);
    version_unref(p->ver);
    pthread_mutex_destroy(&p->mu);
    free(p->dir);
}

void part_install(struct part *p, struct version *v)
{
    pthread_mutex_lock(&p->mu);
    struct version *old = p->ver;
    p->ver = v;
    pthread_mutex_unlock(&p->mu);
    version_unref(old);
}
