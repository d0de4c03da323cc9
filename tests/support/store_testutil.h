/* Helpers for the store tests: temporary directories, a fault-injecting
 * env wrapping another env (fail the Nth append or sync, report ENOSPC,
 * hold SSTable writes), and byte flipping in files. */
#ifndef LB_STORE_TESTUTIL_H
#define LB_STORE_TESTUTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/env.h"

/* Whether the tests run under ThreadSanitizer (make test TSAN=1 sets
 * LB_TSAN=1). A test whose code starts no thread has nothing for it to
 * check and runs ten times slower there: it returns at once with a note
 * (cmocka's skip() prints "not ok # SKIP", which prove counts as a
 * failure), or a test file prints "1..0 # SKIP"; the release and ASan
 * passes run it. A long test whose threads are the store's own, which the
 * other store tests run under it too, may run less. */
bool tu_tsan(void);
/* For a test file that starts no thread: under ThreadSanitizer, prints
 * TAP's "1..0 # SKIP" with the reason and returns true (main returns 0);
 * otherwise false. */
bool tu_tsan_skip_file(void);

/* A new empty directory under $TMPDIR (or /tmp); caller frees the path. */
char *tu_mkdtemp(const char *tag);
/* Removes a directory tree (rm -rf). */
void tu_rmtree(const char *dir);
/* Size of a file, or -1. */
int64_t tu_file_size(const char *path);
/* XORs the byte at off with mask. 0 or -1. */
int tu_flip_byte(const char *path, int64_t off, uint8_t mask);
/* The whole content of a file (caller frees; *len its length), or NULL. */
char *tu_read_file(const char *path, size_t *len);
/* Replaces a file's content with p[0..n). 0 or -1. */
int tu_write_file(const char *path, const char *p, size_t n);
/* Truncates a file. 0 or -1. */
int tu_truncate(const char *path, int64_t size);
/* Paths of files in dir whose names end with suffix (caller frees each
 * and the array); returns the count. */
size_t tu_list_suffix(const char *dir, const char *suffix, char ***out);

/* The fault env. Counters are atomic so tests may flip them while the
 * store's threads run. */
struct fault_env {
    struct env env; /* must be first: pass &fe->env to the store */
    struct env *base;
    atomic_bool nospc;          /* every append fails with ERR_NOSPC */
    atomic_long fail_append_at; /* > 0: the Nth append from now fails (ERR_IO) */
    atomic_long fail_sync_at;   /* > 0: the Nth sync from now fails (ERR_IO) */
    atomic_bool hold_sst;       /* appends to *.sst files wait while set */
    atomic_bool nospc_sst;      /* appends to *.sst files fail with ERR_NOSPC */
    atomic_long appends, syncs;
    /* Power loss (after fault_env_track): > 0, the Nth sync from now is the
     * moment of the loss: it and every later append, sync, rename, unlink
     * and directory sync fail with ERR_IO and change nothing. */
    atomic_long crash_at_sync;
    atomic_long fail_rename_at; /* > 0: the Nth rename from now fails, changing nothing */
    atomic_bool crashed;        /* the loss happened */
    struct fe_track *track;     /* what a power loss would undo; NULL until tracked */
};

void fault_env_init(struct fault_env *fe, struct env *base);
/* Starts recording what is durable: file lengths synced, files whose
 * directory was synced since they were created, renames followed by a sync
 * of their directory. */
void fault_env_track(struct fault_env *fe);
/* Makes the files what the disk would hold after the power loss (call once
 * the store is closed): unsynced appends cut off, files created since the
 * last sync of their directory removed, renames since then undone (the
 * target's old content back). Returns the files changed. */
int fault_env_power_loss(struct fault_env *fe);
/* Frees the tracking (NULL track ok). */
void fault_env_destroy(struct fault_env *fe);

#endif
