/* The POSIX env: plain file descriptors, pread, fdatasync and flock. The
 * only store file that looks at errno; each failure is logged with its
 * path and mapped with err_from_errno. Also the env-generic helpers. */
#include "store/env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"

struct posix_file {
    struct env_file base;
    int fd; /* -1: a read file whose descriptor the cache closed */
    char *path;
    /* read files only: in the table cache */
    bool cached;
    int users;         /* preads in flight */
    uint64_t last_use; /* cache.tick at the last use */
    struct posix_file *prev, *next;
};

/* The table cache: files opened for reading (SSTables, mostly) keep a
 * descriptor only while there are at most `max` of them open; beyond, the
 * least recently used idle one is closed and opened again by path at its
 * next read. Renames update the paths of the files they move (a dropped
 * database's folder, a quarantined file), so a reopen finds them. */
static struct {
    pthread_mutex_t mu;
    struct posix_file *head;
    size_t open, max;
    uint64_t tick;
    uint64_t reopens;
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t cache_max_locked(void)
{
    if (!cache.max) {
        struct rlimit rl;
        size_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                         ? (size_t)rl.rlim_cur
                         : 65536;
        cache.max = lim / 2 > 8192 ? 8192 : lim / 2 < 64 ? 64 : lim / 2;
    }
    return cache.max;
}

void env_posix_set_max_open(size_t n)
{
    pthread_mutex_lock(&cache.mu);
    cache.max = n;
    pthread_mutex_unlock(&cache.mu);
}

uint64_t env_posix_reopens(void)
{
    pthread_mutex_lock(&cache.mu);
    uint64_t n = cache.reopens;
    pthread_mutex_unlock(&cache.mu);
    return n;
}

/* Closes idle descriptors until one more fits. REQUIRES: cache.mu. */
static void cache_make_room_locked(void)
{
    while (cache.open >= cache_max_locked()) {
        struct posix_file *lru = NULL;
        for (struct posix_file *f = cache.head; f; f = f->next)
            if (f->fd >= 0 && f->users == 0 && (!lru || f->last_use < lru->last_use))
                lru = f;
        if (!lru)
            return; /* every descriptor in use: go over for a moment */
        close(lru->fd);
        lru->fd = -1;
        cache.open--;
    }
}

/* A descriptor for f's read (opened again if the cache closed it), held
 * until cache_release. */
static int cache_acquire(struct posix_file *f, int *fd)
{
    if (!f->cached) {
        *fd = f->fd;
        return ERR_OK;
    }
    pthread_mutex_lock(&cache.mu);
    if (f->fd < 0) {
        cache_make_room_locked();
        f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
        if (f->fd < 0) {
            int e = errno;
            pthread_mutex_unlock(&cache.mu);
            log_error("open %s again (table cache): %s", f->path, strerror(e));
            return err_from_errno(e) == ERR_NOTFOUND ? ERR_IO : err_from_errno(e);
        }
        cache.open++;
        cache.reopens++;
    }
    f->users++;
    f->last_use = ++cache.tick;
    *fd = f->fd;
    pthread_mutex_unlock(&cache.mu);
    return ERR_OK;
}

static void cache_release(struct posix_file *f)
{
    if (!f->cached)
        return;
    pthread_mutex_lock(&cache.mu);
    f->users--;
    pthread_mutex_unlock(&cache.mu);
}

/* path now names what from named: from itself, or a file under folder from. */
static void cache_renamed(const char *from, const char *to)
{
    size_t n = strlen(from);
    pthread_mutex_lock(&cache.mu);
    for (struct posix_file *f = cache.head; f; f = f->next) {
        if (strncmp(f->path, from, n) != 0 || (f->path[n] != '\0' && f->path[n] != '/'))
            continue;
        struct buf p = BUF_INIT;
        buf_printf(&p, "%s%s", to, f->path + n);
        free(f->path);
        f->path = buf_steal(&p, NULL);
    }
    pthread_mutex_unlock(&cache.mu);
}

static int px_err(const char *what, const char *path)
{
    int e = errno;
    log_error("%s %s: %s", what, path, strerror(e));
    return err_from_errno(e);
}

static int px_open(struct env *e, const char *path, int flags, struct env_file **out)
{
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == ENOENT)
            return ERR_NOTFOUND;
        return px_err("open", path);
    }
    struct posix_file *f = xcalloc(1, sizeof *f);
    f->base.env = e;
    f->fd = fd;
    f->path = xstrdup(path);
    *out = &f->base;
    return ERR_OK;
}

static int px_open_append(struct env *e, const char *path, bool trunc, struct env_file **out)
{
    return px_open(e, path, O_WRONLY | O_CREAT | O_APPEND | (trunc ? O_TRUNC : 0), out);
}

static int px_open_read(struct env *e, const char *path, struct env_file **out)
{
    pthread_mutex_lock(&cache.mu);
    cache_make_room_locked();
    pthread_mutex_unlock(&cache.mu);
    int rc = px_open(e, path, O_RDONLY, out);
    if (rc)
        return rc;
    struct posix_file *f = (struct posix_file *)*out;
    f->cached = true;
    pthread_mutex_lock(&cache.mu);
    f->last_use = ++cache.tick;
    f->next = cache.head;
    if (cache.head)
        cache.head->prev = f;
    cache.head = f;
    cache.open++;
    pthread_mutex_unlock(&cache.mu);
    return ERR_OK;
}

static int px_append(struct env_file *ef, const void *p, size_t n)
{
    struct posix_file *f = (struct posix_file *)ef;
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(f->fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return px_err("write", f->path);
        }
        c += w;
        n -= (size_t)w;
    }
    return ERR_OK;
}

static int px_pread(struct env_file *ef, uint64_t off, void *p, size_t n, size_t *got)
{
    struct posix_file *f = (struct posix_file *)ef;
    int fd;
    int rc = cache_acquire(f, &fd);
    if (rc)
        return rc;
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)p + done, n - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = px_err("read", f->path);
            break;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    cache_release(f);
    *got = done;
    return rc;
}

static int px_sync(struct env_file *ef)
{
    struct posix_file *f = (struct posix_file *)ef;
    if (fdatasync(f->fd) < 0)
        return px_err("fdatasync", f->path);
    return ERR_OK;
}

static int px_truncate(struct env_file *ef, uint64_t size)
{
    struct posix_file *f = (struct posix_file *)ef;
    if (ftruncate(f->fd, (off_t)size) < 0)
        return px_err("ftruncate", f->path);
    return ERR_OK;
}

static int px_size(struct env_file *ef, uint64_t *out)
{
    struct posix_file *f = (struct posix_file *)ef;
    int fd;
    int rc = cache_acquire(f, &fd);
    if (rc)
        return rc;
    struct stat st;
    if (fstat(fd, &st) < 0)
        rc = px_err("fstat", f->path);
    else
        *out = (uint64_t)st.st_size;
    cache_release(f);
    return rc;
}

static void px_close(struct env_file *ef)
{
    struct posix_file *f = (struct posix_file *)ef;
    if (f->cached) {
        pthread_mutex_lock(&cache.mu);
        if (f->prev)
            f->prev->next = f->next;
        else
            cache.head = f->next;
        if (f->next)
            f->next->prev = f->prev;
        if (f->fd >= 0)
            cache.open--;
        pthread_mutex_unlock(&cache.mu);
    }
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    free(f);
}

static int px_rename(struct env *e, const char *from, const char *to)
{
    (void)e;
    if (rename(from, to) < 0)
        return px_err("rename", from);
    cache_renamed(from, to);
    return ERR_OK;
}

static int px_unlink(struct env *e, const char *path)
{
    (void)e;
    if (unlink(path) < 0) {
        if (errno == ENOENT)
            return ERR_NOTFOUND;
        if (errno == EISDIR)
            return ERR_INVAL; /* quiet: env_remove_tree probes with unlink */
        return px_err("unlink", path);
    }
    return ERR_OK;
}

static int px_mkdir(struct env *e, const char *path)
{
    (void)e;
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return px_err("mkdir", path);
    return ERR_OK;
}

static int px_rmdir(struct env *e, const char *path)
{
    (void)e;
    if (rmdir(path) < 0 && errno != ENOENT)
        return px_err("rmdir", path);
    return ERR_OK;
}

static int px_list(struct env *e, const char *dir, char ***names, size_t *count)
{
    (void)e;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return ERR_NOTFOUND;
        return px_err("opendir", dir);
    }
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            v = xrealloc(v, cap * sizeof *v);
        }
        v[n++] = xstrdup(de->d_name);
    }
    closedir(d);
    *names = v;
    *count = n;
    return ERR_OK;
}

static int px_sync_dir(struct env *e, const char *dir)
{
    (void)e;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return px_err("open dir", dir);
    int rc = ERR_OK;
    if (fsync(fd) < 0)
        rc = px_err("fsync dir", dir);
    close(fd);
    return rc;
}

static bool px_exists(struct env *e, const char *path)
{
    (void)e;
    return access(path, F_OK) == 0;
}

static int px_lock(struct env *e, const char *path, struct env_file **out)
{
    struct env_file *f;
    int rc = px_open(e, path, O_RDWR | O_CREAT, &f);
    if (rc)
        return rc;
    if (flock(((struct posix_file *)f)->fd, LOCK_EX | LOCK_NB) < 0) {
        log_error("lock %s: %s (is another logbucketd running?)", path, strerror(errno));
        px_close(f);
        return ERR_BUSY;
    }
    *out = f;
    return ERR_OK;
}

static void px_unlock(struct env_file *f)
{
    px_close(f);
}

static int px_at_path(struct env_file *ef, bool *out)
{
    struct posix_file *f = (struct posix_file *)ef;
    int fd;
    int rc = cache_acquire(f, &fd);
    if (rc)
        return rc;
    struct stat open_st, path_st;
    if (fstat(fd, &open_st) < 0) {
        rc = px_err("fstat", f->path);
    } else if (stat(f->path, &path_st) < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            *out = false;
        else
            rc = px_err("stat", f->path);
    } else {
        *out = open_st.st_dev == path_st.st_dev && open_st.st_ino == path_st.st_ino;
    }
    cache_release(f);
    return rc;
}

static const struct env_ops posix_ops = {
    .open_append = px_open_append,
    .open_read = px_open_read,
    .append = px_append,
    .pread = px_pread,
    .sync = px_sync,
    .truncate = px_truncate,
    .size = px_size,
    .at_path = px_at_path,
    .close = px_close,
    .rename = px_rename,
    .unlink = px_unlink,
    .mkdir = px_mkdir,
    .rmdir = px_rmdir,
    .list = px_list,
    .sync_dir = px_sync_dir,
    .exists = px_exists,
    .lock = px_lock,
    .unlock = px_unlock,
};

static struct env posix_env = {&posix_ops};

struct env *env_posix(void)
{
    return &posix_env;
}

void env_posix_raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            log_warn("cannot raise the open-file limit: %s", strerror(errno));
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        log_debug("open-file limit %llu", (unsigned long long)rl.rlim_cur);
}

/* --- helpers over any env --- */

void env_free_list(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

int env_read_all(struct env *e, const char *path, size_t max, char **data, size_t *len)
{
    struct env_file *f = NULL;
    char *p = NULL;
    uint64_t size;
    size_t got;
    int rc = env_open_read(e, path, &f);
    if (rc)
        return rc;
    rc = env_size(f, &size);
    if (rc)
        goto fail;
    if (size > max) {
        rc = ERR_TOOBIG;
        goto fail;
    }
    p = xmalloc((size_t)size + 1);
    rc = env_pread(f, 0, p, (size_t)size, &got);
    if (rc)
        goto fail;
    env_close(f);
    *data = p;
    *len = got;
    return ERR_OK;
fail:
    free(p);
    env_close(f);
    return rc;
}

int env_write_atomic(struct env *e, const char *dir, const char *name, const void *data, size_t len,
                     bool *replaced)
{
    struct buf tmp = BUF_INIT, dst = BUF_INIT;
    struct env_file *f = NULL;
    buf_printf(&tmp, "%s/%s.tmp", dir, name);
    buf_printf(&dst, "%s/%s", dir, name);
    int rc = env_open_append(e, tmp.data, true, &f);
    if (rc)
        goto out;
    rc = env_append(f, data, len);
    if (!rc)
        rc = env_sync(f);
    env_close(f);
    if (!rc)
        rc = env_rename(e, tmp.data, dst.data);
    if (replaced)
        *replaced = rc == ERR_OK;
    if (!rc)
        rc = env_sync_dir(e, dir);
    else
        env_unlink(e, tmp.data);
out:
    buf_destroy(&tmp);
    buf_destroy(&dst);
    return rc;
}

int env_remove_tree(struct env *e, const char *dir)
{
    char **names = NULL;
    size_t n = 0;
    int rc = env_list(e, dir, &names, &n);
    if (rc)
        return rc == ERR_NOTFOUND ? ERR_OK : rc;
    struct buf p = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        buf_reset(&p);
        buf_printf(&p, "%s/%s", dir, names[i]);
        if (env_unlink(e, p.data) != ERR_OK)
            env_remove_tree(e, p.data);
    }
    buf_destroy(&p);
    env_free_list(names, n);
    return env_rmdir(e, dir);
}
