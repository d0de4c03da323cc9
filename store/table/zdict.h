/* zstd dictionaries of a database's cold data blocks (codec type 4,
 * store/FORMAT.md "Dictionaries").
 *
 * A 32 KiB block compressed alone gives zstd little to learn from: the
 * message templates, event and host names it holds come again in every
 * block. A dictionary trained once on a database's own columnar blocks
 * gives each block that history: on the log rows of benchmarks/compare the
 * cold data blocks shrink by a seventh.
 *
 * The set of a database lives in DATA/<db>/dict/, one file per dictionary,
 * never removed while the database exists (a block names its dictionary by
 * id). While the set has none, the writers of cold blocks hand it samples
 * (their columnar forms, up to a few MiB); zdict_set_train then trains one
 * from them, writes it durably, and only then offers it to writers, so no
 * block names a dictionary that is not on disk. Thread-safe; refcounted. */
#ifndef LB_ZDICT_H
#define LB_ZDICT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "store/env.h"

struct zdict_set;

/* Opens the set of dir (DATA/<db>/dict; it need not exist): every good
 * dictionary file in it. A damaged file is logged and counted in
 * corrupt_count (borrowed: must outlive the set) and left out: the blocks
 * that name it read as corrupt. level is the zstd level of writers. */
struct zdict_set *zdict_set_open(struct env *env, const char *dir, int level,
                                 atomic_ullong *corrupt_count);
void zdict_set_ref(struct zdict_set *s);
void zdict_set_unref(struct zdict_set *s); /* NULL ok */

/* The id of the dictionary new blocks use (the newest), 0 if none, and
 * its compression dictionary (opaque ZSTD_CDict). */
uint32_t zdict_set_current(struct zdict_set *s, const void **cdict);
/* The decompression dictionary (opaque ZSTD_DDict) of id, NULL if none. */
const void *zdict_set_ddict(struct zdict_set *s, uint32_t id);

/* Offers a columnar form as a training sample (kept while the set has no
 * dictionary, up to ZDICT_SAMPLE_BYTES). */
void zdict_set_sample(struct zdict_set *s, struct slice form);
#define ZDICT_SAMPLE_BYTES (4u << 20)
#define ZDICT_BYTES (64u << 10)

/* Trains the set's first dictionary from its samples when it has none and
 * enough samples (ZDICT_MIN_SAMPLE_BYTES; zdict_test_set_min_samples), and
 * writes it durably before offering it. ERR_OK when there was nothing to
 * do or it is done; an I/O error from writing it (the samples are kept). */
int zdict_set_train(struct zdict_set *s);
#define ZDICT_MIN_SAMPLE_BYTES (2u << 20)
/* Tests: the sample bytes training needs (0: ZDICT_MIN_SAMPLE_BYTES). */
void zdict_test_set_min_samples(size_t bytes);

#endif
