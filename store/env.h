/* The file-system layer. Every byte the store reads or writes goes through a
 * struct env so that tests can inject faults (tests/support/fault_env.c).
 * errno never leaves the implementation: functions return ERR_OK or an
 * ERR_* code and log strerror with the path.
 *
 * Threading: an env and its files may be used from any thread; a single
 * env_file must not be appended to by two threads at once. */
#ifndef LB_ENV_H
#define LB_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct env;

/* Base of every open file; implementations embed it first. */
struct env_file {
    struct env *env;
};

struct env_ops {
    /* Opens path for appending, creating it; truncate empties it first. */
    int (*open_append)(struct env *, const char *path, bool truncate, struct env_file **out);
    int (*open_read)(struct env *, const char *path, struct env_file **out);
    int (*append)(struct env_file *, const void *p, size_t n);
    /* Reads up to n bytes at off; *got < n only at end of file. */
    int (*pread)(struct env_file *, uint64_t off, void *p, size_t n, size_t *got);
    int (*sync)(struct env_file *);
    int (*truncate)(struct env_file *, uint64_t size);
    int (*size)(struct env_file *, uint64_t *out);
    /* Whether f is still the file at the path it was opened by: false once
     * it, or a folder above it, was removed or another file took its name
     * (writes to it then reach no file anyone will read). */
    int (*at_path)(struct env_file *, bool *out);
    void (*close)(struct env_file *);
    int (*rename)(struct env *, const char *from, const char *to);
    int (*unlink)(struct env *, const char *path);
    int (*mkdir)(struct env *, const char *path); /* ERR_OK if it exists */
    int (*rmdir)(struct env *, const char *path);
    /* Names in dir except "." and ".."; caller frees each and the array. */
    int (*list)(struct env *, const char *dir, char ***names, size_t *count);
    int (*sync_dir)(struct env *, const char *dir);
    bool (*exists)(struct env *, const char *path);
    /* Exclusive advisory lock on path (created); released by unlock. */
    int (*lock)(struct env *, const char *path, struct env_file **out);
    void (*unlock)(struct env_file *);
};

struct env {
    const struct env_ops *ops;
};

/* The process-wide POSIX env (never freed). */
struct env *env_posix(void);
/* Raises the soft open-file limit to the hard one (every SSTable keeps a
 * descriptor open); logs the limit it ends with. */
void env_posix_raise_fd_limit(void);
/* The table cache of the POSIX env: at most n files opened for reading
 * keep a descriptor (the least recently used idle one is closed, and
 * opened again at its next read); default half the open-file limit, at
 * most 8,192. And how many reopens it made. */
void env_posix_set_max_open(size_t n);
uint64_t env_posix_reopens(void);

static inline int env_open_append(struct env *e, const char *path, bool trunc,
                                  struct env_file **out)
{
    return e->ops->open_append(e, path, trunc, out);
}
static inline int env_open_read(struct env *e, const char *path, struct env_file **out)
{
    return e->ops->open_read(e, path, out);
}
static inline int env_append(struct env_file *f, const void *p, size_t n)
{
    return f->env->ops->append(f, p, n);
}
static inline int env_pread(struct env_file *f, uint64_t off, void *p, size_t n, size_t *got)
{
    return f->env->ops->pread(f, off, p, n, got);
}
static inline int env_sync(struct env_file *f)
{
    return f->env->ops->sync(f);
}
static inline int env_truncate(struct env_file *f, uint64_t size)
{
    return f->env->ops->truncate(f, size);
}
static inline int env_size(struct env_file *f, uint64_t *out)
{
    return f->env->ops->size(f, out);
}
static inline int env_at_path(struct env_file *f, bool *out)
{
    return f->env->ops->at_path(f, out);
}
static inline void env_close(struct env_file *f)
{
    if (f)
        f->env->ops->close(f);
}
static inline int env_rename(struct env *e, const char *from, const char *to)
{
    return e->ops->rename(e, from, to);
}
static inline int env_unlink(struct env *e, const char *path)
{
    return e->ops->unlink(e, path);
}
static inline int env_mkdir(struct env *e, const char *path)
{
    return e->ops->mkdir(e, path);
}
static inline int env_rmdir(struct env *e, const char *path)
{
    return e->ops->rmdir(e, path);
}
static inline int env_list(struct env *e, const char *dir, char ***names, size_t *count)
{
    return e->ops->list(e, dir, names, count);
}
static inline int env_sync_dir(struct env *e, const char *dir)
{
    return e->ops->sync_dir(e, dir);
}
static inline bool env_exists(struct env *e, const char *path)
{
    return e->ops->exists(e, path);
}

/* Frees a list returned by env_list. */
void env_free_list(char **names, size_t count);
/* Reads a whole file (at most max bytes, else ERR_TOOBIG) into a new
 * buffer the caller frees. */
int env_read_all(struct env *e, const char *path, size_t max, char **data, size_t *len);
/* Writes data to dir/name durably: name.tmp, fsync, rename, fsync dir.
 * On failure *replaced (if not NULL) tells whether the rename happened, i.e.
 * whether the new contents may already be the file's. */
int env_write_atomic(struct env *e, const char *dir, const char *name, const void *data, size_t len,
                     bool *replaced);
/* Removes a directory and the files in it (one level of subdirectories). */
int env_remove_tree(struct env *e, const char *dir);

#endif
