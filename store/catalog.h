/* The schema catalog of row tables (FORMAT.md, "Catalog block"): the
 * distinct hosts, events, tag keys, tag values and fields of a table's
 * rows, each with the time slots of the rows that carry it, written by
 * flushes and compactions as a block before the footer and loaded when
 * the table is opened. store_catalog (store.h) answers discovery queries
 * from these, the memtables, and rows where the catalog cannot decide.
 *
 * A builder is used by the one thread that builds its table. A cat_file
 * is immutable once loaded and may be read from any thread; its owner (the
 * file_meta) frees it with the table. */
#ifndef LB_STORE_CATALOG_H
#define LB_STORE_CATALOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "store/table/sst.h"

#define CAT_SLOTS 64        /* time slots of a table's window */
#define CAT_PAIR_SLOTS 16   /* coarser slots of (event, host) pairs: 4 slots each */
#define CAT_MAX_VALUES 1000 /* tag values kept per (event, tag key) and table */
#define CAT_MIN_BYTES (64u << 10)
#define CAT_MAX_BYTES (8u << 20)

struct cat_builder;
struct cat_file;

/* A builder for one row table of a database with ts order desc. */
struct cat_builder *cat_builder_new(bool desc);
void cat_builder_free(struct cat_builder *b); /* NULL ok */
/* A builder whose catalog is the union of the n catalogs in (borrowed):
 * for a compaction output that holds every row of its inputs as they are
 * (nothing deleted, cut or split off). Rows given to its observer are not
 * looked at. NULL if the catalogs cannot be merged (other windows). */
struct cat_builder *cat_builder_merge(bool desc, struct cat_file *const *in, size_t n);
/* The observer to set in sst_build_opts; valid as long as b. */
struct sst_observer *cat_builder_observer(struct cat_builder *b);
/* After its table is finished: the catalog it wrote, as cat_file_load
 * would read it back (without reading the file); ERR_NOTFOUND if none. */
int cat_builder_result(const struct cat_builder *b, const struct sst_props *props, const char *what,
                       struct cat_file **out);

struct cat_file;

/* Reads and checks table t's catalog block. ERR_OK and *out set;
 * ERR_NOTFOUND when t has none (older files, a catalog over its cap);
 * ERR_CORRUPT (logged and counted in *corrupt, which may be NULL); what
 * names the file in the log. */
int cat_file_load(struct sst_table *t, const struct sst_props *props, const char *what,
                  atomic_ullong *corrupt, struct cat_file **out);
/* The same from the raw (decoded) block; props bound the rows' ts. */
int cat_file_parse(struct slice raw, const struct sst_props *props, const char *what,
                   struct cat_file **out);
void cat_file_free(struct cat_file *c); /* NULL ok */
/* Bytes of memory the loaded catalog holds. */
size_t cat_file_bytes(const struct cat_file *c);
/* Whether the table holds a put or merge version of a row of host (its
 * deletes name no host: see sst_props.deletes). */
bool cat_file_has_host(const struct cat_file *c, struct slice host);
/* How many hosts the table's rows have. */
size_t cat_file_nhosts(const struct cat_file *c);
/* The table's rows by event and minute (counts.h); NULL if its catalog
 * has none (written before them, or left out over the size cap). */
struct cnt_file;
const struct cnt_file *cat_file_counts(const struct cat_file *c);

#endif
