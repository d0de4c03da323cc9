/* Helpers for the store tests: temporary directories, a fault-injecting
 * env wrapping another env (fail the Nth append or sync, report ENOSPC,
 * hold SSTable writes), and byte flipping in files. */
#ifndef LB_STORE_TESTUTIL_H
#define LB_STORE_TESTUTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "store/env.h"

/* A new empty directory under $TMPDIR (or /tmp); caller frees the path. */
char *tu_mkdtemp(const char *tag);
/* Removes a directory tree (rm -rf). */
void tu_rmtree(const char *dir);
/* Size of a file, or -1. */
int64_t tu_file_size(const char *path);
/* XORs the byte at off with mask. 0 or -1. */
int tu_flip_byte(const char *path, int64_t off, uint8_t mask);
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
};

void fault_env_init(struct fault_env *fe, struct env *base);

#endif
