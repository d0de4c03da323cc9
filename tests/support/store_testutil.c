/* Store test helpers: temp dirs, file damage, and the fault env, which
 * forwards every call to a base env and fails the ones it was told to. */
#include "tests/support/store_testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"

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

struct fault_file {
    struct env_file base;
    struct env_file *inner;
    struct fault_env *fe;
    bool is_sst;
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
    *out = &f->base;
    return ERR_OK;
}

static int fe_open_append(struct env *e, const char *path, bool trunc, struct env_file **out)
{
    struct env_file *in;
    int rc = env_open_append(fe_of(e)->base, path, trunc, &in);
    return rc ? rc : wrap(fe_of(e), path, in, out);
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
    if (hit(&fe->fail_append_at))
        return ERR_IO;
    return env_append(f->inner, p, n);
}

static int fe_pread(struct env_file *ef, uint64_t off, void *p, size_t n, size_t *got)
{
    return env_pread(((struct fault_file *)ef)->inner, off, p, n, got);
}

static int fe_sync(struct env_file *ef)
{
    struct fault_file *f = (struct fault_file *)ef;
    atomic_fetch_add(&f->fe->syncs, 1);
    if (hit(&f->fe->fail_sync_at))
        return ERR_IO;
    return env_sync(f->inner);
}

static int fe_truncate(struct env_file *ef, uint64_t size)
{
    return env_truncate(((struct fault_file *)ef)->inner, size);
}

static int fe_size(struct env_file *ef, uint64_t *out)
{
    return env_size(((struct fault_file *)ef)->inner, out);
}

static void fe_close(struct env_file *ef)
{
    struct fault_file *f = (struct fault_file *)ef;
    env_close(f->inner);
    free(f);
}

static int fe_rename(struct env *e, const char *a, const char *b)
{
    return env_rename(fe_of(e)->base, a, b);
}
static int fe_unlink(struct env *e, const char *p)
{
    return env_unlink(fe_of(e)->base, p);
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
    return env_sync_dir(fe_of(e)->base, d);
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
