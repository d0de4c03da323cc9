/* GROUP BY aggregation state: a hash table of groups keyed by caller-chosen bytes, each holding
 * one state per aggregate (COUNT(*), COUNT, SUM, AVG, MIN, MAX, FIRST, LAST, PERCENTILE), listed
 * in memcmp order of the keys. Memory is bounded: at most max_groups groups, constant state per
 * aggregate except PERCENTILE (bounded, see below) and the copied strings of MIN/MAX/FIRST/LAST.
 * Results do not depend on the order rows are added in, except FIRST/LAST among rows of one ts
 * (stated below) and float sums (compensated, so within a few ulps whatever the order).
 *
 * Rules, per aggregate (a "number" is AGG_V_INT, AGG_V_UINT or AGG_V_FLOAT):
 *   NULL        A NULL input (AGG_V_NULL, v == NULL, or a kind the aggregate cannot use, e.g. a
 *               string for SUM) is ignored by every aggregate except COUNT(*). A group in which
 *               an aggregate saw no usable input gives AGG_V_NULL for it (COUNT gives 0).
 *   COUNT(*)    every agg_add call, whatever the value (v may be NULL). Result AGG_V_INT.
 *   COUNT(f)    every non-null value of any kind, NaN included. Result AGG_V_INT.
 *   SUM         numbers; NaN ignored. Integers (int and uint) are summed exactly (128 bits),
 *               so the order of the rows never matters: if every input was an integer the
 *               result is AGG_V_INT when the exact total fits int64, else AGG_V_UINT when it
 *               fits uint64, else AGG_V_FLOAT (the total rounded to double). Any float input
 *               makes the result AGG_V_FLOAT: the floats' compensated (Neumaier) sum plus the
 *               integers' exact sum. Infinities follow IEEE (+inf and -inf give NaN); a float
 *               sum that overflows is +-inf.
 *   AVG         numbers; NaN ignored. AGG_V_FLOAT: the same total as SUM divided by the count
 *               of usable inputs (integers only: exact quotient plus remainder / count).
 *   MIN, MAX    numbers compare by value across int/uint/float exactly (no rounding through
 *               double); the result keeps the kind of the input it came from. NaN is ignored,
 *               +-inf are values. Among equal numbers the result is an AGG_V_INT if one was
 *               seen, else an AGG_V_UINT, else a float (-0.0 for MIN, +0.0 for MAX). Strings
 *               compare bytewise (memcmp; a proper prefix is smaller); bools false < true.
 *               Kinds mixed in one group: numbers win over strings and strings over bools
 *               (MIN('a', 5) = MAX('a', 5) = 5; MIN(true, 'a') = 'a').
 *   FIRST, LAST the non-null value (any kind, NaN and +-inf too) with the smallest (FIRST) or
 *               largest (LAST) ts. Among equal ts the first added wins for FIRST and the last
 *               added for LAST, so a caller that feeds one ts's rows in a stable order gets a
 *               stable answer. Strings are copied.
 *   PERCENTILE  numbers (converted to double: an integer beyond 2^53 rounds); NaN ignored,
 *               +-inf kept (they rank first/last). spec.p in [0, 100]. Result AGG_V_FLOAT.
 *               Definition: nearest rank. With n values sorted ascending, the result is the
 *               value of rank r = ceil(p * n / 100) (1-based, at least 1; the product gets a
 *               1e-12 relative allowance so that p = 70, n = 10 is rank 7 despite p's binary
 *               rounding): p = 0 is the minimum, p = 100 the maximum, p = 50 of {1,2,3,4} is 2.
 *               Exact while a group has at most AGG_PCT_EXACT values (they are kept). Beyond
 *               that the values move into a DDSketch-like log histogram with relative accuracy
 *               AGG_PCT_ALPHA (1%): |result - exact| <= 1% of |exact| (plus ~1e-12 rounding),
 *               exact for 0, +-inf and ranks 1 and n (the exact min and max are kept), and
 *               clamped to [min, max].
 *               Bins are gamma^k, gamma = (1 + a) / (1 - a), kept apart for positive and
 *               negative values, with a count for zeros and for each infinity. Each sign keeps
 *               an array of 8-byte counts over the bins between its smallest and largest
 *               magnitude, grown by doubling so at most twice the bins spanned (magnitudes
 *               within a ratio of 1e8 span 921 bins), and never more than AGG_PCT_MAX_BINS
 *               (2048 bins span a ratio of 6e17). A wider spread collapses the smallest
 *               magnitudes of that sign into the lowest bin kept (their estimates become
 *               larger in magnitude); the larger magnitudes keep the stated error. The result
 *               does not depend on the order of the values. The error holds for normal
 *               doubles; subnormals (|x| < 2.2e-308) lose precision.
 *
 * Memory per group: one allocation of 8 bytes + the key (rounded up to 16) + fixed state per
 * aggregate (16 to 48 bytes each), strings held by MIN/MAX/FIRST/LAST (one value each, as long
 * as the longest input value it held), and per PERCENTILE at most AGG_PCT_EXACT doubles (2 KiB)
 * or, past that, a sketch of at most 2 x AGG_PCT_MAX_BINS 8-byte counts (32 KiB + 88 bytes).
 * Per table: the hash table (16 bytes a slot, load <= 1/2) and the sorted array (8 bytes a
 * group). agg_memory() counts all of it.
 *
 * Allocation failure aborts (xmalloc): the sizes are bounded by max_groups and by the caller's
 * limits on keys and values. Not thread-safe: one table is used by one thread at a time. */
#ifndef LB_AGG_H
#define LB_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"

#define AGG_PCT_EXACT 256     /* values a PERCENTILE keeps exactly, per group */
#define AGG_PCT_ALPHA 0.01    /* the sketch's relative accuracy */
#define AGG_PCT_MAX_BINS 2048 /* bins per sign of one sketch */

enum agg_fn {
    AGG_COUNT_STAR,
    AGG_COUNT,
    AGG_SUM,
    AGG_AVG,
    AGG_MIN,
    AGG_MAX,
    AGG_FIRST,
    AGG_LAST,
    AGG_PERCENTILE,
};

struct agg_spec {
    enum agg_fn fn;
    double p; /* AGG_PERCENTILE: 0..100; ignored otherwise */
};

/* One input value of a row for one aggregate, or one result. Only the member of kind is read
 * (i for INT, u for UINT, f for FLOAT, b for BOOL, s for STRING). */
enum agg_vkind { AGG_V_NULL, AGG_V_INT, AGG_V_UINT, AGG_V_FLOAT, AGG_V_STRING, AGG_V_BOOL };
struct agg_value {
    enum agg_vkind kind;
    int64_t i;
    uint64_t u;
    double f;
    bool b;
    struct slice s; /* input: borrowed for the call; result: see agg_result */
};

struct agg_table_opts {
    const struct agg_spec *aggs; /* naggs specs, copied */
    size_t naggs;                /* <= 4096; 0 is allowed: groups only (DISTINCT keys) */
    size_t max_groups;           /* >= 1: the groups the table may hold at once */
};

struct agg_table;
struct agg_group;

/* ERR_INVAL: max_groups 0, an unknown fn, or a PERCENTILE p outside [0, 100] (or NaN). */
int agg_table_new(const struct agg_table_opts *o, struct agg_table **out);
void agg_table_free(struct agg_table *t); /* NULL is a no-op */

/* The group of key (bytes chosen by the caller, copied; the empty key is a key), made with every
 * aggregate empty if it is new. ERR_TOOBIG when the key is new and the table already holds
 * max_groups groups: nothing is allocated and the table stays as it was (usable). The group
 * stays valid until it is dropped (agg_drop_before) or the table is freed. */
int agg_group(struct agg_table *t, struct slice key, struct agg_group **out);

/* Adds one row's value v (borrowed for the call; NULL means AGG_V_NULL) for aggregate i of group
 * g (of t), with the row's ts (used by FIRST/LAST only). ERR_OK, or ERR_INVAL if i >= naggs. */
int agg_add(struct agg_table *t, struct agg_group *g, size_t i, const struct agg_value *v,
            int64_t ts);

/* Adds n rows to aggregate i of group g, a COUNT(*) (rows counted
 * without reading them). ERR_OK, or ERR_INVAL if i >= naggs or aggregate i
 * is no COUNT(*). */
int agg_add_count(struct agg_table *t, struct agg_group *g, size_t i, uint64_t n);

/* The groups held. */
size_t agg_count(const struct agg_table *t);

/* Whether tables of these aggregates merge (agg_merge): COUNT(*), COUNT,
 * SUM, AVG, MIN and MAX (not FIRST or LAST, whose ties go by the order
 * rows came in, nor PERCENTILE). */
bool agg_mergeable(const struct agg_table *t);

/* Adds every group of from to into, made there if new: counts and sums
 * add up, a MIN or MAX keeps the winner of both. ERR_TOOBIG when into would pass max_groups (into
 * keeps what was merged so far). REQUIRES: agg_mergeable, both tables of the same opts. */
int agg_merge(struct agg_table *into, const struct agg_table *from);

/* Sets *groups to the groups in memcmp order of their keys (a proper prefix first) and returns
 * how many (agg_count). The array belongs to the table and stays valid until the next
 * agg_group that makes a group, agg_drop_before that drops one, or agg_table_free. Sorting
 * costs O(g log g) and is done again only after new groups. */
size_t agg_sorted(struct agg_table *t, struct agg_group *const **groups);

/* The key of g; valid as long as g. */
struct slice agg_group_key(const struct agg_group *g);

/* The result of aggregate i (< naggs) of g, as the rules above say. A string result (out->s)
 * points into the table and stays valid until the next agg_add to that aggregate of g, until g
 * is dropped or the table freed. May reorder internal state (an exact percentile selects its
 * value in place, O(n)), hence the non-const table. */
void agg_result(struct agg_table *t, struct agg_group *g, size_t i, struct agg_value *out);

/* Drops (frees) every group whose key is < key in memcmp order and returns how many. For
 * streaming GROUP BY time bucket: the caller feeds rows in bucket order with the bucket as the
 * key's first bytes (agg_key_i64), and when a row opens a new bucket it emits the groups before
 * the new bucket's key (agg_sorted: they come first) and drops them, so max_groups bounds the
 * groups in flight rather than all groups. Costs O(groups held): call it once per completed
 * bucket. Groups that remain keep their addresses and the sorted array stays valid (it loses
 * its dropped prefix). A descending feed encodes its buckets with agg_key_i64_desc, so that
 * completed buckets are again the smallest keys. */
size_t agg_drop_before(struct agg_table *t, struct slice key);

/* Bytes held by the table: groups, their keys and states, strings, percentile values and
 * sketches, the hash table and the sorted array (EXPLAIN ANALYZE). */
uint64_t agg_memory(const struct agg_table *t);

/* The start of ts's time bucket of width (ns, > 0; SQL allows 1s..1d) aligned to the epoch plus
 * offset: the largest offset + k * width <= ts, by floor division, so negative ts work (-1 is in
 * the bucket [-width, 0) with offset 0). A bucket that would start before INT64_MIN starts at
 * INT64_MIN. Never overflows for any ts. REQUIRES: width > 0, 0 <= offset < width. */
int64_t agg_time_bucket(int64_t ts, int64_t width, int64_t offset);

/* 8 key bytes for v whose memcmp order is v's numeric order (big endian, sign bit flipped), or
 * the reverse order for agg_key_i64_desc. */
void agg_key_i64(int64_t v, unsigned char out[8]);
void agg_key_i64_desc(int64_t v, unsigned char out[8]);
/* The inverse of agg_key_i64 (of agg_key_i64_desc when is_desc). */
int64_t agg_key_i64_get(const unsigned char in[8], bool is_desc);

#endif
