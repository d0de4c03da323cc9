/* Flushes and time-windowed compaction of a partition (compact.c). */
#ifndef LB_STORE_COMPACT_H
#define LB_STORE_COMPACT_H

#include <stdbool.h>
#include <stdint.h>

struct part;
struct store_db;

/* flush and compaction (compact.c), run by one job per partition. They
 * return their status and never touch the database's sticky error: *fatal
 * (left alone otherwise) says that a manifest was replaced but its write
 * failed, so the partition's state on disk is uncertain and the caller must
 * stop the database's writes (db_fail). */
int compact_flush(struct part *p, bool *fatal);
int compact_run(struct part *p, bool force, bool *fatal);
void compact_delete_old_wal(struct store_db *db);
/* Whether a compaction of p would find work (a full or cold window). */
bool compact_wanted(struct part *p);
/* Deletes the files of p whose rows are all older than floor (disk guard);
 * adds their bytes to *bytes. REQUIRES: p's job slot (busy). */
int compact_drop_before(struct part *p, int64_t floor, uint64_t *bytes, bool *fatal);

#endif
