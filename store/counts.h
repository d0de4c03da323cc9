/* Row counts of a table by event and minute (FORMAT.md, "Catalog block",
 * counts): how many of its rows each event has in each minute of the
 * table's window, counting a row once, by the newest version of its key,
 * and not at all when that version is a delete. Built from every entry a
 * table is written with (the catalog builder hands them on, merges
 * included), written at the end of the catalog block, and read with it.
 * When a table is the only source of its window's rows in a snapshot,
 * these are the rows a query over the window would find; a COUNT(*) by
 * event and time bucket takes them instead of reading the rows
 * (store_snap_window_counts, store.h).
 *
 * A builder is used by the one thread that builds its table; a cnt_file is
 * immutable once parsed. */
#ifndef LB_STORE_COUNTS_H
#define LB_STORE_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"

#define CNT_MINUTE_NS (60LL * 1000000000LL)
#define CNT_MAX_EVENTS 4096 /* past this many events, a table keeps no counts */

struct cnt_builder;

struct cnt_builder *cnt_builder_new(void);
void cnt_builder_free(struct cnt_builder *b); /* NULL ok */
/* Whether ukey (the user key of the entry about to be added) differs from
 * the last entry's: only the first entry of a key, its newest version,
 * counts. Notes ukey and the entry's sequence. */
bool cnt_first(struct cnt_builder *b, struct slice ukey, uint64_t seq);
/* A row of event at ts, the first version of its key and a put. Rows of
 * two time windows (part.h) turn the counts off. */
void cnt_row(struct cnt_builder *b, struct slice event, int64_t ts);
/* Gives up: the table keeps no counts (a row the builder cannot read). */
void cnt_off(struct cnt_builder *b);
/* Appends the encoded counts (FORMAT.md) of a table whose window starts
 * at base and returns true, or false (out untouched) if the builder has
 * none to give: turned off, no entry, or rows of another window. */
bool cnt_encode(const struct cnt_builder *b, int64_t base, struct buf *out);

/* The counts of one table, as parsed. */
struct cnt_file;

/* Parses the counts at *p (up to end) for a table whose window starts at
 * base; advances *p. false if they are malformed. */
bool cnt_file_parse(const char **p, const char *end, int64_t base, struct cnt_file **out);
void cnt_file_free(struct cnt_file *c); /* NULL ok */
size_t cnt_file_bytes(const struct cnt_file *c);
/* The newest sequence among the table's entries. */
uint64_t cnt_file_max_seq(const struct cnt_file *c);
/* Calls fn for every (event, minute start, rows) the table has, events in
 * bytewise order, minutes ascending; stops at fn's first non-zero return,
 * which it returns. */
int cnt_file_each(const struct cnt_file *c,
                  int (*fn)(void *arg, struct slice event, int64_t minute, uint64_t rows),
                  void *arg);

#endif
