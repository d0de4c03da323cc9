/* Conditions (struct sql_expr of sql.h): building, what they imply for the
 * planner, the words a block must hold for them, and their evaluation over
 * one row, in SQL's three-valued logic.
 *
 * Matching rules:
 *   - numbers compare by value across float, int and uint; strings
 *     bytewise; booleans false < true; other mixes are unknown;
 *   - LIKE: % any run of bytes, _ one byte, \ makes the next byte literal;
 *     ILIKE folds ASCII case;
 *   - REGEX: PCRE2 (JIT when the platform has it), unanchored, UTF-8 with
 *     invalid bytes tolerated; ~* is caseless; a match that runs past the
 *     match limit fails the query (ERR_TOOBIG) rather than spin;
 *   - MATCH: every term must be found: a word as a whole word, a "phrase"
 *     as consecutive words, case-insensitively (model/words.h). Without a
 *     column (MATCH('...')) a term may be found in any string of the row:
 *     host, event, a tag value or a string field.
 *   - IS NULL: the row has no such tag or field (ts, host and event are
 *     never null). */
#ifndef LB_COND_H
#define LB_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/record.h"
#include "model/words.h"
#include "query/sql.h"

/* --- building (the parser and query_params_open) --- */

struct sql_expr *cond_leaf_new(enum sql_leaf_kind leaf, enum sql_col_kind col, const char *name,
                               size_t pos);
/* a AND b (either may be NULL: the other is returned). Takes both. */
struct sql_expr *cond_and(struct sql_expr *a, struct sql_expr *b);
struct sql_expr *cond_or(struct sql_expr *a, struct sql_expr *b);
struct sql_expr *cond_not(struct sql_expr *a);
void cond_free(struct sql_expr *e); /* NULL ok */

/* IN lists: adds one value (string, int, float); cond_in_finish sorts and
 * removes duplicates. */
void cond_in_add(struct sql_expr *e, const struct sql_value *v);
void cond_in_finish(struct sql_expr *e);

/* Prepares a LIKE, REGEX or MATCH leaf from its pattern (e->v): compiles
 * the regular expression, splits the MATCH terms. On a bad pattern returns
 * ERR_INVAL with a message naming the byte offset in the pattern
 * (*bad_off, 0-based) and what is wrong. */
int cond_prepare(struct sql_expr *e, size_t *bad_off, struct buf *err);

/* True if s is among the n strings v (lengths len), sorted bytewise. */
bool cond_sorted_has(char *const *v, const size_t *len, size_t n, struct slice s);

/* Fills w's implied bounds and sets (sql.h) from w->cond. */
void cond_derive(struct sql_where *w);

/* The words every matching row must hold: those of MATCH terms, and of
 * LIKE patterns' literal whole words, reached from the top through AND
 * only; each is in a string of the row (host, event, a tag value or a
 * string field) as it is stored, up to ASCII case. fn is called with each
 * (as written in the condition, not folded). */
void cond_required_each(const struct sql_expr *e, void (*fn)(void *arg, struct slice word),
                        void *arg);

/* The bytes every matching row must hold, up to ASCII case, in one of its
 * strings as stored: cond_required_each's words, but a LIKE pattern's
 * literal runs (between its wildcards) whole. fn is called with each. */
void cond_required_text(const struct sql_expr *e, void (*fn)(void *arg, struct slice text),
                        void *arg);

/* cond_required_each's words as their hashes (words_hashes), appended to
 * *out (n, cap: a growable array). */
void cond_required_words(const struct sql_expr *e, struct word_hashes **out, size_t *n,
                         size_t *cap);

/* True if the condition says no more than what cond_derive implies (ts
 * bounds and points, host and event sets, joined by AND): a row inside
 * those satisfies it without being evaluated. */
bool cond_is_implied(const struct sql_expr *e);

/* True if threads may evaluate the condition at once: it holds no regular
 * expression (their match data and context belong to the expression). */
bool cond_thread_safe(const struct sql_expr *e);

/* True if the condition holds only ts bounds, host = and event = (one
 * each), joined by AND: what a range tombstone can store. */
bool cond_only_key_range(const struct sql_expr *e);

/* Appends a readable form of e (for EXPLAIN). */
void cond_explain(const struct sql_expr *e, struct buf *out);

/* --- evaluation --- */

/* One row as the evaluator sees it: the key's parts, and its tags and
 * fields decoded once (on first need) from the records id and value. For
 * HAVING, the output values are given as fields instead (cond_row_set). */
struct cond_row {
    int64_t ts;
    struct slice host, event, id, value;
    bool decoded;
    struct rec_tag *tags;
    size_t ntags, tcap;
    struct rec_field *fields;
    size_t nfields, fcap;
};

void cond_row_init(struct cond_row *r); /* empty; reuse it across rows */
void cond_row_destroy(struct cond_row *r);
void cond_row_set(struct cond_row *r, int64_t ts, struct slice host, struct slice event,
                  struct slice id, struct slice value);
/* Decodes the tags and fields if not yet done: ERR_OK or ERR_CORRUPT. */
int cond_row_decode(struct cond_row *r);
/* Looks a field or a tag up by name (NULL if the row has none). */
const struct rec_field *cond_row_field(struct cond_row *r, struct slice name);
const struct rec_tag *cond_row_tag(struct cond_row *r, struct slice name);
/* cond_row_field's answer copied into *out (false: none), without decoding
 * the whole row when it is not yet: for a reader of one or two fields. */
bool cond_row_field_get(struct cond_row *r, struct slice name, struct rec_field *out);
/* The first field of name among one record's fields (a row's value
 * record: model/record.h), as cond_row_field_get finds it in a row whose id
 * is empty: 1 and *out set, 0 when it has none, ERR_CORRUPT for bytes the
 * record reader refuses up to it. The bytes after the field are not read
 * (a host section's record, read once for each row of an aggregate: its
 * block's checksum covers them), where cond_row_field_get reads the whole
 * record and finds no field in a damaged one. */
int cond_record_field(struct slice rec, struct slice name, struct rec_field *out);

/* True if e holds for the row (NULL e: always). A damaged record sets *rc
 * (ERR_CORRUPT), a regular expression past its match limit ERR_TOOBIG;
 * both return false. */
bool cond_match(const struct sql_expr *e, struct cond_row *r, int *rc);

#endif
