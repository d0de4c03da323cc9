/* InfluxQL's functions over rows: values, the aggregate and selector
 * states (count, sum, mean, median, mode, min, max, first, last,
 * percentile, spread, stddev, distinct, integral) kept per group of
 * (series, time bucket), arithmetic between values and constants, series
 * points with fill and the transformations (derivative, difference,
 * moving_average, cumulative_sum, elapsed), as InfluxDB 1.x computes them.
 * Private to query/. */
#ifndef LB_IQL_FUNC_H
#define LB_IQL_FUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/slice.h"
#include "model/record.h"
#include "query/cond.h"
#include "query/iql_int.h"

#define IQL_MAX_POINTS 4000000 /* raw values (points times columns) or kept values */

enum iql_vkind { IQL_V_NULL, IQL_V_FLOAT, IQL_V_INT, IQL_V_STR, IQL_V_BOOL };

struct iql_val {
    enum iql_vkind kind;
    double f;
    int64_t i;
    bool b; /* a BOOL's value; a NULL's: a hole, where no point fed the
             * aggregate (what fill() fills, not an aggregate's null of
             * points, as stddev() of one) */
    struct slice s;
};

void iql_val_of_field(const struct rec_field *f, struct iql_val *out);
void iql_val_json(const struct iql_val *v, struct buf *out);

enum iql_fn {
    IQL_F_COUNT,
    IQL_F_SUM,
    IQL_F_MEAN,
    IQL_F_MEDIAN,
    IQL_F_MODE,
    IQL_F_MIN,
    IQL_F_MAX,
    IQL_F_FIRST,
    IQL_F_LAST,
    IQL_F_PERCENTILE,
    IQL_F_SPREAD,
    IQL_F_STDDEV,
    IQL_F_DISTINCT,
    IQL_F_INTEGRAL,
    IQL_F_TOP,
    IQL_F_BOTTOM,
    IQL_F_COUNT_DISTINCT, /* count(distinct(f)) */
};

struct iql_slot {
    enum iql_fn fn;
    const char *field;         /* borrowed from the call */
    double arg;                /* percentile: p; integral: unit in ns */
    const struct iql_ex *call; /* the call it stands for */
    int64_t lo, hi;            /* rows outside these times are not fed to it */
};

/* The slot of an aggregate call; ERR_INVAL with err for an unknown
 * function or bad arguments. */
int iql_slot_of(const struct iql_ex *call, struct iql_slot *out, struct buf *err);
/* Whether function name takes fields of type (REC_*): what fn(*) expands to. */
bool iql_fn_takes_type(const char *name, int type);
bool iql_fn_is_selector(enum iql_fn fn);
/* Whether the function named name gives a string or boolean field's
 * value (first, last, min, max, mode; false: none such). */
bool iql_fn_name_keeps_type(const char *name);
/* abs, sin, ..., pow, round: functions of a value, not of a group. */
bool iql_fn_is_math(const char *name);

enum iql_tr {
    IQL_TR_DERIVATIVE,
    IQL_TR_NN_DERIVATIVE,
    IQL_TR_DIFFERENCE,
    IQL_TR_NN_DIFFERENCE,
    IQL_TR_MOVING_AVERAGE,
    IQL_TR_CUMULATIVE_SUM,
    IQL_TR_ELAPSED,
};

/* Rows of one series: ts and ncol values each; strings are copied. */
struct iql_points {
    size_t ncol;
    int64_t *ts;
    struct iql_val *v;
    size_t n, cap;
};

void iql_points_init(struct iql_points *p, size_t ncol);
void iql_points_add(struct iql_points *p, int64_t ts, const struct iql_val *vals);
void iql_points_free(struct iql_points *p);
void iql_points_reverse(struct iql_points *p);
/* Drops the rows whose columns of mask (ncol flags) are all null. */
void iql_points_drop_empty(struct iql_points *p, const bool *mask);
/* A statement mixing transformations (columns tr) with plain aggregates
 * over GROUP BY time, as InfluxDB joins their iterators: outside lo..hi
 * (the plain ones' buckets) the plain columns are null; a row stays when a
 * value does, or (filled: keep_filled) when it is in lo..hi. */
void iql_points_keep_mixed(struct iql_points *p, const bool *tr, int64_t lo, int64_t hi,
                           bool keep_filled);
/* Column col := its transformation tr (arg: unit ns or window). */
void iql_transform(struct iql_points *p, size_t col, int tr, double arg);

struct iql_fill_spec {
    enum iql_fill mode;
    double value;
    bool desc; /* ORDER BY time DESC: fill(previous) takes the later bucket's value */
    const struct iql_val *row; /* fill(value): each column's value in a hole (its
                                  expression of value), or NULL: value */
};
/* fill(value)'s value as InfluxDB gives it: an integer if it is whole. */
struct iql_val iql_fill_value(double value);
/* Gives p (rows at bucket starts, ascending) a row for every bucket from
 * lo to hi (bucket starts) as mode says, and fills the holes (a NULL's b)
 * of every row; with fill(null) the columns of is_count (count()) get 0
 * in a new row, as InfluxDB does. */
void iql_points_fill(struct iql_points *p, int64_t lo, int64_t hi, int64_t interval,
                     const struct iql_fill_spec *f, const bool *is_count);
/* The columns of is_count (count()) that counted a point somewhere in p
 * into live; their holes in p become 0 under fill(null), as InfluxDB's
 * count of a series that has the field shows them (a column without any
 * stays null). */
void iql_points_count_holes(struct iql_points *p, const bool *is_count, enum iql_fill mode,
                            bool *live);

/* Values of expressions: raw rows (fields, tags, the host tag) and
 * aggregate results (slots[i] gives res[i]). */
void iql_eval_raw(const struct iql_ex *e, struct cond_row *row, const char *host_tag,
                  struct iql_val *out);
void iql_eval_agg(const struct iql_ex *e, const struct iql_slot *slots, const struct iql_val *res,
                  size_t nslots, struct iql_val *out);

/* A map of byte keys to indexes 0, 1, 2, ... in order of arrival. */
struct iql_keymap {
    size_t *slots; /* index + 1; 0 empty */
    size_t cap;
    struct buf keys;
    size_t *off, *len; /* of each key in keys */
    size_t n, lcap;    /* keys; room in off and len */
};
void iql_keymap_init(struct iql_keymap *m);
void iql_keymap_destroy(struct iql_keymap *m);
/* Sets *idx to key's index: true if it is new (then it is n). */
bool iql_keymap_get(struct iql_keymap *m, const char *key, size_t len, size_t n, size_t *idx);
/* Appends key as the next index (returned) without looking for it: for a
 * caller that knows it is new and finds its keys by other means (no
 * iql_keymap_get on such a map). */
size_t iql_keymap_push(struct iql_keymap *m, const char *key, size_t len);
const char *iql_keymap_key(const struct iql_keymap *m, size_t idx);
size_t iql_keymap_len(const struct iql_keymap *m, size_t idx);
/* The indexes 0..n-1 in bytewise order of their keys (caller frees). */
size_t *iql_keymap_sorted(const struct iql_keymap *m, size_t n);

/* Aggregate states per (series key, time bucket). */
struct iql_groups;
struct iql_group_opts {
    const struct iql_slot *slots;
    size_t nslots;
    bool has_time;
    int64_t interval, offset;
    size_t max_groups;
    const struct iql_tz *tz; /* buckets aligned to its local time; NULL: UTC */
    /* A lone selector (slots[0]) with other columns: their values at the
     * point it picks (iql_groups_aux), evaluated over the row */
    const struct iql_ex *const *aux;
    size_t naux;
    const char *host_tag;
    /* time buckets a series is expected to have (the statement's range over
     * the interval; 0: unknown), to size its map at once */
    size_t buckets_hint;
};

/* The bucket start of ts under o (has_time; offset normalized by
 * iql_groups_init). */
int64_t iql_groups_bucket_of(const struct iql_groups *g, int64_t ts);

struct iql_astate;
/* The groups of one series by bucket: a row finds its group without the
 * key's bytes and hash once its series is known. One map a series, each
 * small (a panel's 360 buckets: 8 KiB), not one for every group: a large
 * table is fresh pages to fault in at each request. */
struct iql_bmap_slot {
    int64_t bucket;
    size_t idx1; /* the group's index + 1; 0: an empty slot */
};
struct iql_bmap {
    struct iql_bmap_slot *s;
    size_t cap, n;
};

struct iql_groups {
    struct iql_group_opts o;
    struct iql_keymap km;  /* series key + 8-byte bucket */
    struct iql_keymap skm; /* series key: its number, sid */
    size_t *flen;          /* each slot's field name's length */
    /* the series of the rows before (sk) and its number; each series'
     * groups by bucket (smaps[sid]) */
    struct buf sk;
    bool has_sk;
    size_t sid;
    struct iql_bmap *smaps;
    size_t nsmaps;
    struct iql_astate **st; /* each group's slots, in slabs */
    size_t *gsid;           /* each group's series number */
    int64_t *gbucket;       /* each group's bucket */
    char **slabs, *slab_next;
    size_t nslabs, slab_left;
    struct iql_val **aux; /* naux values per group, strings owned */
    size_t n, cap;        /* groups; room in st (and aux) */
    size_t kept;          /* values kept for median, mode, percentile, distinct, integral */
    struct buf kb;        /* scratch: a group's key in km */
    int64_t min_bucket;
    /* the group of the row before (rows of one bucket and series mostly
     * come one after another): of series sk and bucket last_bucket */
    bool has_last;
    size_t last;
    int64_t last_bucket;
};

void iql_groups_init(struct iql_groups *g, const struct iql_group_opts *o);
void iql_groups_destroy(struct iql_groups *g);
int iql_groups_add(struct iql_groups *g, const char *skey, size_t sklen, struct cond_row *row,
                   struct buf *err);
/* iql_groups_add of n rows of one series, the i-th at ts[i] with the
 * fields of value[i] (a record whose id is empty: a host section's row),
 * for groups without aux columns (naux 0: nothing else of a row is read). */
int iql_groups_add_recs(struct iql_groups *g, const char *skey, size_t sklen, const int64_t *ts,
                        const struct slice *value, size_t n, struct buf *err);
/* Whether iql_groups_merge takes g's groups: no aux columns, every slot a
 * count, sum, mean, min, max, first or last (what a split reader's two
 * halves can add together exactly, as one reader would have fed them). */
bool iql_groups_mergeable(const struct iql_groups *g);
/* Whether every slot's function merges (iql_groups_mergeable's rule). */
bool iql_slots_mergeable(const struct iql_slot *slots, size_t n);
/* from's groups added into g's (the same options; iql_groups_mergeable):
 * the groups g lacks made, every slot's state combined. ERR_TOOBIG with
 * err when the groups would pass max_groups. */
int iql_groups_merge(struct iql_groups *g, const struct iql_groups *from, struct buf *err);
/* Group i's bucket start, and the result of slot k (its point's ts in
 * *ts for min, max, first, last). */
int64_t iql_groups_bucket(const struct iql_groups *g, size_t i);
/* The groups' indexes in the order of their keys in km (series key, then
 * bucket; series keys end each tag value with a 0 byte): the caller frees it. */
size_t *iql_groups_sorted(const struct iql_groups *g);
/* Whether any point fed slot k of group i (else its result is a hole). */
bool iql_groups_has_input(const struct iql_groups *g, size_t i, size_t k);
void iql_groups_result(struct iql_groups *g, size_t i, size_t k, struct iql_val *out, int64_t *ts);
/* integral(), slot k, with GROUP BY time, as InfluxDB's reducer computes
 * it over one series (the groups order[from..to), ascending buckets): a
 * window's area is closed on the line to the next point, and the next
 * window starts from there. out[i - from] gets group order[i]'s value. */
void iql_groups_integral(struct iql_groups *g, size_t k, const size_t *order, size_t from,
                         size_t to, struct iql_val *out);
/* top() / bottom(): the N largest / smallest values of slot k of group i
 * (ties: the earlier), in time order, with their points' times (caller
 * frees both arrays). */
size_t iql_groups_topn(struct iql_groups *g, size_t i, size_t k, struct iql_val **vals,
                       int64_t **ts);
/* The aux columns' values of group i (NULL without aux). */
const struct iql_val *iql_groups_aux(const struct iql_groups *g, size_t i);
/* distinct(): the distinct values of slot k of group i, sorted. */
size_t iql_groups_distinct(struct iql_groups *g, size_t i, size_t k, struct iql_val **out);

/* Catalog: the field keys of m with their REC_* types, sorted by name. */
struct store_snap;
int iql_field_keys(struct store_snap *snap, const char *m, int64_t lo, int64_t hi, char ***names,
                   int **types, size_t *n);

#endif
