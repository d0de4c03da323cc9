/* The write-ahead log of one database: numbered segment files
 * (DATA/<db>/wal/<seg>.log), one framed record per batch (FORMAT.md):
 *
 *   record = len:u32le | crc(len):u32le | crc(payload):u32le | payload
 *
 * both crcs masked CRC32C. Group commit: writers append under the database
 * write lock, then wal_sync_to; one of the waiting threads (the leader)
 * fsyncs for everyone whose record was written before it started.
 * Positions are logical and grow across segments. All functions are
 * thread-safe; wal_append and wal_roll REQUIRE the database write lock. */
#ifndef LB_WAL_H
#define LB_WAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "store/env.h"

#define WAL_HEADER 12
#define WAL_MAX_RECORD (1u << 30)

struct wal;

/* Creates segment seg in dir (env and dir must outlive the wal). */
int wal_open(struct env *env, const char *dir, uint64_t seg, struct wal **out);
void wal_close(struct wal *w); /* NULL ok; does not sync */

/* Appends a record whose payload starts WAL_HEADER bytes into rec (the
 * room is filled here), with one write. On failure the segment is cut back
 * to its previous end so the log stays clean, and the error returned
 * (ERR_NOSPC on a full disk). *end is the position after the record. */
int wal_append(struct wal *w, char *rec, size_t len, uint64_t *end);
/* Declares every record up to pos applied (readers may see seq once it
 * is durable). */
void wal_mark_ready(struct wal *w, uint64_t pos, uint64_t seq);
/* Returns once pos is on disk; *seq is then a sequence that is durable. */
int wal_sync_to(struct wal *w, uint64_t pos, uint64_t *seq);
/* Syncs everything written so far (interval mode). */
int wal_sync_all(struct wal *w);
/* Whether the segment being written is still the file at its path
 * (env_at_path): false once the WAL's folder was removed under it. */
int wal_at_path(struct wal *w, bool *out);
/* Starts segment seg; the old one is synced first when sync_old. */
int wal_roll(struct wal *w, uint64_t seg, bool sync_old);
uint64_t wal_segment(struct wal *w);

struct wal_stats {
    uint64_t syncs, bytes, records;
};
void wal_stats(struct wal *w, struct wal_stats *out);

/* Reads segment path, calling fn for each record's payload. With tail_ok (the
 * newest segment, or segments that were never synced), a torn tail (an
 * incomplete last record) is truncated away and logged; without it (a
 * segment sealed by a synced roll: its every record reached the disk) the
 * same bytes are damage. Damage returns ERR_CORRUPT after logging the file
 * and offset, and nothing is cut. fn's error stops the replay and is
 * returned. */
int wal_replay(struct env *env, const char *path, bool tail_ok,
               int (*fn)(void *ctx, struct slice payload), void *ctx);

/* Frames payload (for tests and tools): appends header and payload to out. */
void wal_frame(struct slice payload, struct buf *out);

#endif
