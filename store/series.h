/* The host section of a row table (FORMAT.md, "Host section"): the
 * table's rows again, ordered by host, event and time, each with a record
 * of its numeric fields only. A query that needs of each row no more than
 * its ts, host, event and numeric fields (an aggregate of one host over
 * hours) reads a window's rows of one host from here, side by side,
 * instead of one row at a time from blocks of every host
 * (store_series_open, store.h).
 *
 * Built from every entry the table is written with, like the counts: a
 * row once, by the newest version of its key (merges folded into it as a
 * reader folds them, none for a delete). Each entry's internal key is
 * host 0x00 event 0x00 tskey (ser_key), its sequence telling apart the
 * rows of one (host, event, ts) (0, 1, ...), kind put; its value is the
 * record (model/record.h) of the row's FLOAT, INT, UINT and BOOL fields,
 * in the row's order, no tags.
 * The names block lists the fields that hold a string in some row (a read
 * that needs one of them reads the rows instead) and the newest sequence
 * among the table's entries.
 *
 * A builder is used by the one thread that builds its table. */
#ifndef LB_STORE_SERIES_H
#define LB_STORE_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/slice.h"
#include "store/iter.h"
#include "store/table/sst.h"

/* An entry's user key: host 0x00 event 0x00 tskey (model/key.h's, for a
 * database of order desc); with event NULL and ts ignored, the prefix of
 * every key of host (host 0x00); with ts ignored (no_ts), of host and
 * event. */
void ser_key(struct buf *out, struct slice host, const struct slice *event, int64_t ts, bool desc,
             bool no_ts);

/* Past this many string field names, a table keeps no section. */
#define SER_MAX_STRING_NAMES 256

struct ser_builder;

/* A builder for a row table of a database with ts order desc. */
struct ser_builder *ser_builder_new(bool desc);
void ser_builder_free(struct ser_builder *b); /* NULL ok */
/* The section to set in sst_build_opts; valid as long as b. */
struct sst_section *ser_builder_section(struct ser_builder *b);

/* The newest sequence of a table's entries, from its names block; false
 * if the block is malformed. */
bool ser_names_max_seq(struct slice names, uint64_t *max_seq);
/* Whether field is one of the names block's string fields (true too if
 * the block is malformed: the rows must then be read). */
bool ser_names_has(struct slice names, struct slice field);

/* --- kept runs (series_kept.c) ---
 *
 * All the rows of one host and event in one table's section, decoded
 * once and kept in the block cache beside the table's blocks (a
 * dashboard reads the same hosts' rows request after request: a run taken
 * from here is one lookup, where reading it from the blocks is a seek
 * through a table, a block and its restart points, each a few misses).
 * The table's rows lie in one window; a read of part of it takes the rows
 * of its range. */
struct ser_run {
    size_t n;
    int64_t *ts;         /* in stored order */
    struct slice *value; /* into bytes */
    char *bytes;
    size_t size, key_len; /* of the one allocation that holds it all; of key */
    size_t over;          /* 0, or a stand-in of no rows: the run has more than this many */
    char key[];           /* host 0x00 event 0x00, then ts, value and bytes */
};

/* A run of no rows that stands for prefix's run of too many rows to keep
 * (kept in its place, so that reads take their range at once rather than
 * reading the run's first rows again each time). */
struct ser_run *ser_run_too_many(struct slice prefix);
/* Whether r stands for a run of too many rows to keep (under the limit of
 * now: a stand-in made under a lower one is not). */
bool ser_run_over(const struct ser_run *r);
/* Frees a run (the deleter of a kept one). */
void ser_run_free(void *run);
/* The key of the run of prefix (host 0x00 event 0x00) in the cache. */
uint64_t ser_kept_key(struct slice prefix);

/* Scratch of ser_load, kept from one load to the next. */
struct ser_loader;
struct ser_loader *ser_loader_new(void);
void ser_loader_free(struct ser_loader *l); /* NULL ok */
/* A new run (*out) of the entries of prefix from it's position on: every
 * one (it at the first), or with range (lo, hi) only while their stamps
 * lie in it (it at the first entry of the range). desc: the database's
 * order. Unranged and of more rows than a run kept may have: *out NULL.
 * it is left at the first entry past them. ERR_CORRUPT for a damaged
 * entry, or it's error. */
int ser_load(struct ser_loader *l, struct iter *it, struct slice prefix, bool desc,
             const int64_t *range, struct ser_run **out);

/* Keeps the runs of the table's section (every host and event's rows, as
 * store_series_each reads and keeps them; those of 16 rows or more) in the
 * block cache while it holds less than three quarters of its budget: a window just written in
 * its final form is the likeliest a dashboard reads next. desc: the
 * database's order. Stops at the first damaged entry (reads report it). */
void ser_keep_runs(struct sst_table *t, bool desc);
/* Test hook: the most rows of one host and event in one table that a read
 * keeps in the block cache (store_series_each; 65,536 otherwise), 0 to
 * set it back. */
void ser_test_kept_max_rows(size_t rows);

#endif
