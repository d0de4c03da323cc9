/* The durable settings of a database (settings.c): META, per-event TTL
 * rules, TOMBSTONES. */
#ifndef LB_STORE_SETTINGS_H
#define LB_STORE_SETTINGS_H

#include <stdint.h>

#include "base/slice.h"

#include "store/tomb.h"
#include "store/ttl.h"

struct store_db;

/* Persists META (options and event TTLs). REQUIRES: write_mu. */
int db_write_meta(struct store_db *db);
/* At open: reads META into db (ERR_CORRUPT naming the file if damaged). */
int db_read_meta(struct store_db *db);
/* The current tombstone set, with a reference. */
struct tomb_set *db_tombs(struct store_db *db);
/* At open: reads DATA/<db>/TOMBSTONES (none is an empty set). */
int db_read_tombs(struct store_db *db);
/* store_db_delete_range without making room first (db.c makes it):
 * ERR_BUSY with STORE_MAX_TOMBSTONES outstanding. */
int db_add_range_tomb(struct store_db *db, struct slice host, const struct slice *event, int64_t lo,
                      int64_t hi);
/* Drops tombstones no file or memtable can need any more. */
void db_purge_tombs(struct store_db *db);

/* The event cut-offs of db at now. */
void db_event_cuts(struct store_db *db, int64_t now, struct event_cuts *out);

#endif
