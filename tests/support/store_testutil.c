/* Store test helpers: temp dirs, file damage, and the fault env, which
 * forwards every call to a base env and fails the ones it was told to. */
#include "tests/support/store_testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"

bool tu_tsan(void)
{
    const char *s = getenv("LB_TSAN");
    return s && strcmp(s, "1") == 0;
}

bool tu_tsan_skip_file(void)
{
    if (!tu_tsan())
        return false;
    printf("1..0 # SKIP no thread here: nothing for ThreadSanitizer to check\n");
    return true;
}

char *tu_mkdtemp(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    struct buf b = BUF_INIT;
    buf_printf(&b, "%s/lb-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    char *p = buf_steal(&b, NULL);
    if (!mkdtemp(p)) {
        free(p);
        return NULL;
    }
    return p;
}

void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        unlink(dir);
        return;
    }
    struct dirent *de;
    struct buf p = BUF_INIT;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        buf_reset(&p);
        buf_printf(&p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p.data, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rmtree(p.data);
        else
            unlink(p.data);
    }
    closedir(d);
    buf_destroy(&p);
    rmdir(dir);
}

int64_t tu_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

int tu_flip_byte(const char *path, int64_t off, uint8_t mask)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    unsigned char c;
    int rc = -1;
    if (pread(fd, &c, 1, off) == 1) {
        c ^= mask;
        if (pwrite(fd, &c, 1, off) == 1)
            rc = 0;
    }
    close(fd);
    return rc;
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct buf b = BUF_INIT;
    char piece[65536];
    size_t n;
    while ((n = fread(piece, 1, sizeof piece, f)) > 0)
        buf_append(&b, piece, n);
    fclose(f);
    return buf_steal(&b, len);
}

int tu_write_file(const char *path, const char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    bool ok = !n || fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int tu_truncate(const char *path, int64_t size)
{
    return truncate(path, size);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tu_list_suffix(const char *dir, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t n = 0;
    if (d) {
        struct dirent *de;
        size_t sl = strlen(suffix);
        while ((de = readdir(d)) != NULL) {
            size_t l = strlen(de->d_name);
            if (l < sl || strcmp(de->d_name + l - sl, suffix) != 0)
                continue;
            v = xrealloc(v, (n + 1) * sizeof *v);
            struct buf b = BUF_INIT;
            buf_printf(&b, "%s/%s", dir, de->d_name);
            v[n++] = buf_steal(&b, NULL);
        }
        closedir(d);
    }
    if (n)
        qsort(v, n, sizeof *v, str_cmp);
    *out = v;
    return n;
}

/* --- fault env --- */

/* What is durable of one file, while tracked. */
struct fe_path {
    char *path;
    uint64_t len, synced;
    bool created; /* its directory not synced since it was created */
};

/* A rename whose directory was not synced since. */
struct fe_rename {
    char *from, *to;
    char *old_to; /* the content to had before, or NULL if it had none */
    size_t old_len;
};

struct fe_track {
    pthread_mutex_t mu;
    struct fe_path *v;
    size_t n, cap;
    struct fe_rename *r;
    size_t nr, capr;
};

static struct fe_path *track_find(struct fe_track *t, const char *path)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].path, path) == 0)
            return &t->v[i];
    return NULL;
}

static struct fe_path *track_add(struct fe_track *t, const char *path)
{
    struct fe_path *e = track_find(t, path);
    if (e)
        return e;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    e = &t->v[t->n++];
    memset(e, 0, sizeof *e);
    e->path = xstrdup(path);
    return e;
}

static void track_drop(struct fe_track *t, const char *path)
{
    struct fe_path *e = track_find(t, path);
    if (!e)
        return;
    free(e->path);
    *e = t->v[--t->n];
}

static bool in_dir(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/');
}

struct fault_file {
    struct env_file base;
    struct env_file *inner;
    struct fault_env *fe;
    bool is_sst;
    char *path;
};

static struct fault_env *fe_of(struct env *e)
{
    return (struct fault_env *)e;
}

static int wrap(struct fault_env *fe, const char *path, struct env_file *inner,
                struct env_file **out)
{
    struct fault_file *f = xcalloc(1, sizeof *f);
    f->base.env = &fe->env;
    f->inner = inner;
    f->fe = fe;
    size_t l = strlen(path);
    f->is_sst = l > 4 && strcmp(path + l - 4, ".sst") == 0;
    f->path = xstrdup(path);
    *out = &f->base;
    return ERR_OK;
}

static bool lost(struct fault_env *fe)
{
    return fe->track && atomic_load(&fe->crashed);
}

static int fe_open_append(struct env *e, const char *path, bool trunc, struct env_file **out)
{
    struct fault_env *fe = fe_of(e);
    if (lost(fe))
        return ERR_IO;
    bool existed = env_exists(fe->base, path);
    struct env_file *in;
    int rc = env_open_append(fe->base, path, trunc, &in);
    if (rc)
        return rc;
    if (fe->track) {
        uint64_t size = 0;
        env_size(in, &size);
        pthread_mutex_lock(&fe->track->mu);
        struct fe_path *p = track_find(fe->track, path);
        if (!p) {
            p = track_add(fe->track, path);
            p->synced = existed && !trunc ? size : 0;
            p->created = !existed;
        }
        p->len = size;
        if (trunc)
            p->synced = 0;
        pthread_mutex_unlock(&fe->track->mu);
    }
    return wrap(fe, path, in, out);
}

static int fe_open_read(struct env *e, const char *path, struct env_file **out)
{
    struct env_file *in;
    int rc = env_open_read(fe_of(e)->base, path, &in);
    return rc ? rc : wrap(fe_of(e), path, in, out);
}

static bool hit(atomic_long *counter)
{
    long v = atomic_load(counter);
    while (v > 0) {
        if (atomic_compare_exchange_weak(counter, &v, v - 1))
            return v == 1;
    }
    return false;
}

static int fe_append(struct env_file *ef, const void *p, size_t n)
{
    struct fault_file *f = (struct fault_file *)ef;
    struct fault_env *fe = f->fe;
    while (f->is_sst && atomic_load(&fe->hold_sst)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&fe->appends, 1);
    if (atomic_load(&fe->nospc) || (f->is_sst && atomic_load(&fe->nospc_sst)))
        return ERR_NOSPC;
    if (hit(&fe->fail_append_at) || lost(fe))
        return ERR_IO;
    int rc = env_append(f->inner, p, n);
    if (rc == ERR_OK && fe->track) {
        pthread_mutex_lock(&fe->track->mu);
        track_add(fe->track, f->path)->len += n;
        pthread_mutex_unlock(&fe->track->mu);
    }
    return rc;
}

static int fe_pread(struct env_file *ef, uint64_t off, void *p, size_t n, size_t *got)
{
    return env_pread(((struct fault_file *)ef)->inner, off, p, n, got);
}

static int fe_sync(struct env_file *ef)
{
    struct fault_file *f = (struct fault_file *)ef;
    struct fault_env *fe = f->fe;
    atomic_fetch_add(&fe->syncs, 1);
    if (hit(&fe->fail_sync_at) || lost(fe))
        return ERR_IO;
    if (fe->track && hit(&fe->crash_at_sync)) {
        atomic_store(&fe->crashed, true);
        return ERR_IO;
    }
    /* Tracked, the env itself keeps what a sync makes durable (and a power
     * loss undoes the rest): the disk's own sync would only cost time. */
    int rc = fe->track ? ERR_OK : env_sync(f->inner);
    if (rc == ERR_OK && fe->track) {
        pthread_mutex_lock(&fe->track->mu);
        struct fe_path *p = track_add(fe->track, f->path);
        p->synced = p->len;
        pthread_mutex_unlock(&fe->track->mu);
    }
    return rc;
}

static int fe_truncate(struct env_file *ef, uint64_t size)
{
    struct fault_file *f = (struct fault_file *)ef;
    if (lost(f->fe))
        return ERR_IO;
    int rc = env_truncate(f->inner, size);
    if (rc == ERR_OK && f->fe->track) {
        pthread_mutex_lock(&f->fe->track->mu);
        struct fe_path *p = track_add(f->fe->track, f->path);
        p->len = size;
        if (p->synced > size)
            p->synced = size;
        pthread_mutex_unlock(&f->fe->track->mu);
    }
    return rc;
}

static int fe_size(struct env_file *ef, uint64_t *out)
{
    return env_size(((struct fault_file *)ef)->inner, out);
}

static int fe_at_path(struct env_file *ef, bool *out)
{
    return env_at_path(((struct fault_file *)ef)->inner, out);
}

static void fe_close(struct env_file *ef)
{
    struct fault_file *f = (struct fault_file *)ef;
    env_close(f->inner);
    free(f->path);
    free(f);
}

static int fe_rename(struct env *e, const char *a, const char *b)
{
    struct fault_env *fe = fe_of(e);
    if (hit(&fe->fail_rename_at) || lost(fe))
        return ERR_IO;
    if (!fe->track)
        return env_rename(fe->base, a, b);
    size_t old_len = 0;
    char *old = tu_read_file(b, &old_len);
    int rc = env_rename(fe->base, a, b);
    if (rc) {
        free(old);
        return rc;
    }
    struct fe_track *t = fe->track;
    pthread_mutex_lock(&t->mu);
    if (t->nr == t->capr) {
        t->capr = t->capr ? 2 * t->capr : 16;
        t->r = xrealloc(t->r, t->capr * sizeof *t->r);
    }
    t->r[t->nr++] = (struct fe_rename){xstrdup(a), xstrdup(b), old, old_len};
    struct fe_path *from = track_find(t, a);
    struct fe_path moved = from ? *from : (struct fe_path){0};
    if (from)
        from->path = NULL, *from = t->v[--t->n];
    track_drop(t, b);
    struct fe_path *to = track_add(t, b);
    to->len = moved.len;
    to->synced = moved.synced;
    to->created = moved.created;
    free(moved.path);
    pthread_mutex_unlock(&t->mu);
    return ERR_OK;
}
static int fe_unlink(struct env *e, const char *p)
{
    struct fault_env *fe = fe_of(e);
    if (lost(fe))
        return ERR_IO;
    int rc = env_unlink(fe->base, p);
    if (rc == ERR_OK && fe->track) {
        pthread_mutex_lock(&fe->track->mu);
        track_drop(fe->track, p);
        pthread_mutex_unlock(&fe->track->mu);
    }
    return rc;
}
static int fe_mkdir(struct env *e, const char *p)
{
    return env_mkdir(fe_of(e)->base, p);
}
static int fe_rmdir(struct env *e, const char *p)
{
    return env_rmdir(fe_of(e)->base, p);
}
static int fe_list(struct env *e, const char *d, char ***n, size_t *c)
{
    return env_list(fe_of(e)->base, d, n, c);
}
static int fe_sync_dir(struct env *e, const char *d)
{
    struct fault_env *fe = fe_of(e);
    if (lost(fe))
        return ERR_IO;
    if (!fe->track)
        return env_sync_dir(fe->base, d);
    int rc = ERR_OK;
    {
        struct fe_track *t = fe->track;
        pthread_mutex_lock(&t->mu);
        for (size_t i = 0; i < t->n; i++)
            if (in_dir(t->v[i].path, d))
                t->v[i].created = false;
        size_t k = 0;
        for (size_t i = 0; i < t->nr; i++) {
            if (in_dir(t->r[i].to, d)) {
                free(t->r[i].from);
                free(t->r[i].to);
                free(t->r[i].old_to);
            } else {
                t->r[k++] = t->r[i];
            }
        }
        t->nr = k;
        pthread_mutex_unlock(&t->mu);
    }
    return rc;
}
static bool fe_exists(struct env *e, const char *p)
{
    return env_exists(fe_of(e)->base, p);
}
static int fe_lock(struct env *e, const char *p, struct env_file **out)
{
    return fe_of(e)->base->ops->lock(fe_of(e)->base, p, out);
}
static void fe_unlock(struct env_file *f)
{
    f->env->ops->unlock(f);
}

static const struct env_ops fault_ops = {
    .open_append = fe_open_append,
    .open_read = fe_open_read,
    .append = fe_append,
    .pread = fe_pread,
    .sync = fe_sync,
    .truncate = fe_truncate,
    .size = fe_size,
    .at_path = fe_at_path,
    .close = fe_close,
    .rename = fe_rename,
    .unlink = fe_unlink,
    .mkdir = fe_mkdir,
    .rmdir = fe_rmdir,
    .list = fe_list,
    .sync_dir = fe_sync_dir,
    .exists = fe_exists,
    .lock = fe_lock,
    .unlock = fe_unlock,
};

void fault_env_init(struct fault_env *fe, struct env *base)
{
    memset(fe, 0, sizeof *fe);
    fe->env.ops = &fault_ops;
    fe->base = base;
}

void fault_env_track(struct fault_env *fe)
{
    fe->track = xcalloc(1, sizeof *fe->track);
    pthread_mutex_init(&fe->track->mu, NULL);
}

int fault_env_power_loss(struct fault_env *fe)
{
    struct fe_track *t = fe->track;
    int changed = 0;
    /* renames not made durable, newest first */
    for (size_t i = t->nr; i-- > 0;) {
        struct fe_rename *r = &t->r[i];
        struct fe_path *p = track_find(t, r->to);
        if (rename(r->to, r->from) == 0) {
            if (p) {
                free(p->path);
                p->path = xstrdup(r->from);
            }
            if (r->old_to)
                if (tu_write_file(r->to, r->old_to, r->old_len) != 0)
                    abort();
            changed++;
        }
        free(r->from);
        free(r->to);
        free(r->old_to);
    }
    t->nr = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct fe_path *p = &t->v[i];
        if (p->created) {
            if (unlink(p->path) == 0)
                changed++;
        } else if (p->synced < p->len) {
            if (truncate(p->path, (off_t)p->synced) == 0)
                changed++;
        }
    }
    return changed;
}

void fault_env_destroy(struct fault_env *fe)
{
    struct fe_track *t = fe->track;
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].path);
    for (size_t i = 0; i < t->nr; i++) {
        free(t->r[i].from);
        free(t->r[i].to);
        free(t->r[i].old_to);
    }
    free(t->v);
    free(t->r);
    pthread_mutex_destroy(&t->mu);
    free(t);
    fe->track = NULL;
}
