/* The GROUP BY aggregation table of agg.h. Groups live in an open-addressing hash table (linear
 * probing, load <= 1/2, each slot caching its group's hash); a group is one allocation:
 * [header][key bytes][pad to 16][one state per aggregate at the table's offsets]. Dropping
 * groups rebuilds the slot array (no tombstones), shrinking it when few groups remain.
 * Invariants: t->count groups, t->count * 2 <= t->cap, t->cap a power of two >= MIN_CAP;
 * t->mem is the bytes of every allocation the table holds beyond its fixed part. */
#include "query/agg.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/hash.h"

#define MIN_CAP 16
#define MAX_AGGS 4096
#define STATE_ALIGN 16

struct agg_group {
    size_t klen; /* the key's bytes follow the header */
};

/* COUNT(*), COUNT */
struct st_count {
    uint64_t n;
};

/* SUM, AVG: integers exactly, finite floats compensated (fs + fc), infinities as flags. */
struct st_sum {
    __int128 isum;
    double fs, fc;
    uint64_t n; /* usable inputs */
    bool has_float, has_pinf, has_ninf;
};

union num {
    int64_t i;
    uint64_t u;
    double f;
    bool b;
};

/* MIN, MAX, FIRST, LAST: one value (kind AGG_V_NULL until the first); s is the owned copy of a
 * string value, kept (scap bytes) when a value of another kind replaces it. */
struct st_val {
    int64_t ts;
    union num v;
    char *s;
    size_t slen, scap;
    enum agg_vkind kind;
};

/* One sign's bins of a sketch: a dense window of counts for keys [lo, lo + cap), with the
 * non-empty keys within [kmin, kmax]; cap <= AGG_PCT_MAX_BINS. c == NULL: no value yet. */
struct bins {
    uint64_t *c;
    int32_t lo, kmin, kmax;
    uint32_t cap;
};

struct sketch {
    uint64_t zero, pinf, ninf;
    double min, max; /* exact extremes of every value added */
    struct bins pos, neg;
};

/* PERCENTILE: the values themselves (v, n <= AGG_PCT_EXACT) until sk takes over. */
struct st_pct {
    uint64_t n;
    double *v;
    size_t vcap;
    struct sketch *sk;
};

/* agg.h states these sizes */
_Static_assert(sizeof(struct st_count) <= 16 && sizeof(struct st_sum) <= 48 &&
                   sizeof(struct st_val) <= 48 && sizeof(struct st_pct) <= 48 &&
                   sizeof(struct sketch) <= 88 && sizeof(struct agg_group) == 8,
               "state sizes of agg.h");

struct agg_slot {
    uint64_t hash;
    struct agg_group *g; /* NULL: empty */
};

struct agg_table {
    struct agg_spec *aggs;
    size_t *off; /* state i at off[i] past the key, rounded up to STATE_ALIGN */
    size_t naggs, max_groups, states_size;
    uint64_t seed;
    double log_gamma, inv_log_gamma, rep_scale; /* the sketch's mapping */
    struct agg_slot *slots;
    size_t cap, count;
    struct agg_group **sorted; /* count groups in key order when is_sorted */
    size_t sorted_cap;
    bool is_sorted;
    /* the groups in the order they were made while each key has been above
     * (made_order 1) or below (-1) the one before (rows of a time range come
     * in ts order, and their time buckets with them): then agg_sorted needs
     * no sort. made_order 0: one group or none yet; 2: no such order. */
    struct agg_group **made;
    size_t made_cap;
    int made_order;
    uint64_t mem;
};

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static const char *group_key_ptr(const struct agg_group *g)
{
    return (const char *)(g + 1);
}

static void *state(const struct agg_table *t, struct agg_group *g, size_t i)
{
    size_t base = round_up(sizeof *g + g->klen, STATE_ALIGN);
    return (char *)g + base + t->off[i];
}

static size_t state_size(enum agg_fn fn)
{
    switch (fn) {
    case AGG_COUNT_STAR:
    case AGG_COUNT: return sizeof(struct st_count);
    case AGG_SUM:
    case AGG_AVG: return sizeof(struct st_sum);
    case AGG_MIN:
    case AGG_MAX:
    case AGG_FIRST:
    case AGG_LAST: return sizeof(struct st_val);
    case AGG_PERCENTILE: return sizeof(struct st_pct);
    }
    return 0;
}

static uint64_t hash_key(uint64_t seed, struct slice k)
{
    return hash_mem(seed, k.ptr, k.len);
}

static bool key_eq(const struct agg_group *g, struct slice k)
{
    return g->klen == k.len && (k.len == 0 || memcmp(group_key_ptr(g), k.ptr, k.len) == 0);
}

/* The slot holding key, or the empty slot where it would go. */
static struct agg_slot *find_slot(const struct agg_table *t, uint64_t hash, struct slice key)
{
    size_t mask = t->cap - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        struct agg_slot *s = &t->slots[i];
        if (!s->g || (s->hash == hash && key_eq(s->g, key)))
            return s;
    }
}

/* Moves the groups into a fresh slot array of ncap slots. */
static void rehash(struct agg_table *t, size_t ncap)
{
    struct agg_slot *ns = xcalloc_written(ncap, sizeof *ns);
    size_t mask = ncap - 1;
    for (size_t j = 0; j < t->cap; j++) {
        if (!t->slots[j].g)
            continue;
        size_t i = t->slots[j].hash & mask;
        while (ns[i].g)
            i = (i + 1) & mask;
        ns[i] = t->slots[j];
    }
    free(t->slots);
    t->mem -= (uint64_t)t->cap * sizeof *ns;
    t->mem += (uint64_t)ncap * sizeof *ns;
    t->slots = ns;
    t->cap = ncap;
}

/* ---- the table ---- */

int agg_table_new(const struct agg_table_opts *o, struct agg_table **out)
{
    if (o->max_groups == 0 || o->naggs > MAX_AGGS || (o->naggs && !o->aggs))
        return ERR_INVAL;
    for (size_t i = 0; i < o->naggs; i++) {
        const struct agg_spec *s = &o->aggs[i];
        if ((unsigned)s->fn > AGG_PERCENTILE)
            return ERR_INVAL;
        if (s->fn == AGG_PERCENTILE && !(s->p >= 0 && s->p <= 100))
            return ERR_INVAL;
    }
    struct agg_table *t = xcalloc(1, sizeof *t);
    t->naggs = o->naggs;
    t->max_groups = o->max_groups;
    t->aggs = xmalloc(o->naggs * sizeof *t->aggs);
    t->off = xmalloc(o->naggs * sizeof *t->off);
    if (o->naggs)
        memcpy(t->aggs, o->aggs, o->naggs * sizeof *t->aggs);
    for (size_t i = 0; i < o->naggs; i++) {
        t->off[i] = t->states_size;
        t->states_size += round_up(state_size(o->aggs[i].fn), STATE_ALIGN);
    }
    double gamma = (1 + AGG_PCT_ALPHA) / (1 - AGG_PCT_ALPHA);
    t->log_gamma = log(gamma);
    t->inv_log_gamma = 1 / t->log_gamma;
    t->rep_scale = 2 / (1 + gamma);
    t->seed = hash_fmix64((uint64_t)(uintptr_t)t ^ (uint64_t)clock_mono_ns());
    t->cap = MIN_CAP;
    t->slots = xcalloc_written(t->cap, sizeof *t->slots);
    t->mem = (uint64_t)t->cap * sizeof *t->slots;
    *out = t;
    return ERR_OK;
}

static void sketch_free(struct agg_table *t, struct sketch *sk)
{
    if (!sk)
        return;
    t->mem -= ((uint64_t)sk->pos.cap + sk->neg.cap) * sizeof(uint64_t) + sizeof *sk;
    free(sk->pos.c);
    free(sk->neg.c);
    free(sk);
}

static void group_free(struct agg_table *t, struct agg_group *g)
{
    for (size_t i = 0; i < t->naggs; i++) {
        void *st = state(t, g, i);
        switch (t->aggs[i].fn) {
        case AGG_MIN:
        case AGG_MAX:
        case AGG_FIRST:
        case AGG_LAST: {
            struct st_val *sv = st;
            t->mem -= sv->scap;
            free(sv->s);
            break;
        }
        case AGG_PERCENTILE: {
            struct st_pct *sp = st;
            t->mem -= sp->vcap * sizeof(double);
            free(sp->v);
            sketch_free(t, sp->sk);
            break;
        }
        default: break;
        }
    }
    t->mem -= round_up(sizeof *g + g->klen, STATE_ALIGN) + t->states_size;
    free(g);
}

void agg_table_free(struct agg_table *t)
{
    if (!t)
        return;
    for (size_t j = 0; j < t->cap; j++)
        if (t->slots[j].g)
            group_free(t, t->slots[j].g);
    free(t->slots);
    free(t->sorted);
    free(t->made);
    free(t->off);
    free(t->aggs);
    free(t);
}

static void stop_made(struct agg_table *t)
{
    t->mem -= (uint64_t)t->made_cap * sizeof *t->made;
    free(t->made);
    t->made = NULL;
    t->made_cap = 0;
    t->made_order = 2;
}

/* Keeps g, the group just made, in t->made while the groups come in key
 * order (the table's count already counts g). */
static void note_made(struct agg_table *t, struct agg_group *g)
{
    if (t->made_order == 2)
        return;
    size_t n = t->count - 1;
    if (n) {
        int c = slice_cmp(agg_group_key(g), agg_group_key(t->made[n - 1])) > 0 ? 1 : -1;
        if (t->made_order != 0 && t->made_order != c) {
            stop_made(t);
            return;
        }
        t->made_order = c;
    }
    if (n == t->made_cap) {
        size_t ncap = t->made_cap ? 2 * t->made_cap : 64;
        t->made = xrealloc(t->made, ncap * sizeof *t->made);
        t->mem += (uint64_t)(ncap - t->made_cap) * sizeof *t->made;
        t->made_cap = ncap;
    }
    t->made[n] = g;
}

int agg_group(struct agg_table *t, struct slice key, struct agg_group **out)
{
    uint64_t hash = hash_key(t->seed, key);
    struct agg_slot *s = find_slot(t, hash, key);
    if (s->g) {
        *out = s->g;
        return ERR_OK;
    }
    if (t->count >= t->max_groups)
        return ERR_TOOBIG;
    if ((t->count + 1) * 2 > t->cap) {
        rehash(t, t->cap * 2);
        s = find_slot(t, hash, key);
    }
    size_t base = round_up(sizeof(struct agg_group) + key.len, STATE_ALIGN);
    struct agg_group *g = xmalloc(base + t->states_size);
    g->klen = key.len;
    if (key.len)
        memcpy((char *)(g + 1), key.ptr, key.len);
    /* every state starts all zero: counts 0, kind AGG_V_NULL, no buffers */
    memset((char *)g + base, 0, t->states_size);
    t->mem += base + t->states_size;
    s->hash = hash;
    s->g = g;
    t->count++;
    t->is_sorted = false;
    note_made(t, g);
    *out = g;
    return ERR_OK;
}

size_t agg_count(const struct agg_table *t)
{
    return t->count;
}

struct slice agg_group_key(const struct agg_group *g)
{
    return slice_make(group_key_ptr(g), g->klen);
}

static int group_cmp(const void *a, const void *b)
{
    const struct agg_group *ga = *(struct agg_group *const *)a;
    const struct agg_group *gb = *(struct agg_group *const *)b;
    return slice_cmp(agg_group_key(ga), agg_group_key(gb));
}

size_t agg_sorted(struct agg_table *t, struct agg_group *const **groups)
{
    if (!t->is_sorted) {
        if (t->sorted_cap < t->count) {
            size_t ncap = t->count > 2 * t->sorted_cap ? t->count : 2 * t->sorted_cap;
            if (ncap > t->max_groups)
                ncap = t->max_groups;
            free(t->sorted);
            t->mem -= (uint64_t)t->sorted_cap * sizeof *t->sorted;
            t->sorted = xmalloc(ncap * sizeof *t->sorted);
            t->mem += (uint64_t)ncap * sizeof *t->sorted;
            t->sorted_cap = ncap;
        }
        size_t n = 0;
        if (t->made_order == 2) {
            for (size_t j = 0; j < t->cap; j++)
                if (t->slots[j].g)
                    t->sorted[n++] = t->slots[j].g;
            assert(n == t->count);
            if (n > 1)
                qsort(t->sorted, n, sizeof *t->sorted, group_cmp);
        } else { /* made in key order, or in reverse */
            for (n = 0; n < t->count; n++)
                t->sorted[n] = t->made[t->made_order > 0 ? n : t->count - 1 - n];
        }
        t->is_sorted = true;
    }
    *groups = t->sorted;
    return t->count;
}

size_t agg_drop_before(struct agg_table *t, struct slice key)
{
    if (t->made_order != 2)
        stop_made(t); /* it would keep groups that are freed here */
    /* the sorted array loses its prefix of dropped groups (before they are freed) */
    if (t->is_sorted) {
        size_t lo = 0, hi = t->count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (slice_cmp(agg_group_key(t->sorted[mid]), key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo)
            memmove(t->sorted, t->sorted + lo, (t->count - lo) * sizeof *t->sorted);
    }
    size_t dropped = 0;
    for (size_t j = 0; j < t->cap; j++) {
        struct agg_group *g = t->slots[j].g;
        if (g && slice_cmp(agg_group_key(g), key) < 0) {
            group_free(t, g);
            t->slots[j].g = NULL;
            dropped++;
        }
    }
    if (!dropped)
        return 0;
    t->count -= dropped;
    /* emptied slots would break probe chains: rebuild, smaller if few groups remain */
    size_t ncap = t->cap;
    while (ncap > MIN_CAP && t->count * 8 < ncap)
        ncap /= 2;
    rehash(t, ncap);
    return dropped;
}

uint64_t agg_memory(const struct agg_table *t)
{
    return sizeof *t + t->naggs * (sizeof *t->aggs + sizeof *t->off) + t->mem;
}

/* ---- COUNT, SUM, AVG ---- */

static void neumaier_add(double *s, double *c, double x)
{
    double sum = *s + x;
    if (fabs(*s) >= fabs(x))
        *c += (*s - sum) + x;
    else
        *c += (x - sum) + *s;
    *s = sum;
}

static void sum_add(struct st_sum *st, const struct agg_value *v)
{
    switch (v->kind) {
    case AGG_V_INT: st->isum += v->i; break;
    case AGG_V_UINT: st->isum += v->u; break;
    case AGG_V_FLOAT:
        if (isnan(v->f))
            return;
        st->has_float = true;
        if (isinf(v->f)) {
            if (v->f > 0)
                st->has_pinf = true;
            else
                st->has_ninf = true;
        } else {
            neumaier_add(&st->fs, &st->fc, v->f);
        }
        break;
    default: return;
    }
    st->n++;
}

/* The total of a sum with a float in it, as a double. */
static double sum_total(const struct st_sum *st)
{
    if (st->has_pinf && st->has_ninf)
        return NAN;
    if (st->has_pinf)
        return INFINITY;
    if (st->has_ninf)
        return -INFINITY;
    double s = st->fs, c = st->fc;
    if (!isfinite(s))
        return s; /* the float sum overflowed */
    /* the integers in two parts, so that more than 53 bits of them count */
    double hi = (double)st->isum;
    neumaier_add(&s, &c, hi);
    if (fabs(hi) < 1e38)
        neumaier_add(&s, &c, (double)(st->isum - (__int128)hi));
    if (!isfinite(s))
        return s;
    return s + c;
}

static void sum_result(const struct st_sum *st, bool is_avg, struct agg_value *out)
{
    if (st->n == 0)
        return;
    out->kind = AGG_V_FLOAT;
    if (is_avg) {
        if (st->has_float) {
            out->f = sum_total(st) / (double)st->n;
        } else {
            __int128 n = (__int128)st->n, q = st->isum / n, r = st->isum % n;
            out->f = (double)q + (double)r / (double)st->n;
        }
    } else if (st->has_float) {
        out->f = sum_total(st);
    } else if (st->isum >= INT64_MIN && st->isum <= INT64_MAX) {
        out->kind = AGG_V_INT;
        out->i = (int64_t)st->isum;
    } else if (st->isum > 0 && st->isum <= (__int128)UINT64_MAX) {
        out->kind = AGG_V_UINT;
        out->u = (uint64_t)st->isum;
    } else {
        out->f = (double)st->isum;
    }
}

/* ---- MIN, MAX, FIRST, LAST ---- */

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_int_uint(int64_t i, uint64_t u)
{
    return i < 0 ? -1 : cmp_u64((uint64_t)i, u);
}

/* f (not NaN) against an integer, exactly: integer parts first, then the fraction. */
static int cmp_float_int(double f, int64_t i)
{
    if (f < -9223372036854775808.0)
        return -1;
    if (f >= 9223372036854775808.0)
        return 1;
    double tf = trunc(f);
    int c = cmp_i64((int64_t)tf, i);
    return c ? c : (f > tf) - (f < tf);
}

static int cmp_float_uint(double f, uint64_t u)
{
    if (f < 0)
        return -1;
    if (f >= 18446744073709551616.0)
        return 1;
    double tf = trunc(f);
    int c = cmp_u64((uint64_t)tf, u);
    return c ? c : (f > tf) - (f < tf);
}

/* Two numbers (no NaN) by value. */
static int cmp_num(enum agg_vkind ka, union num a, enum agg_vkind kb, union num b)
{
    if (ka == kb) {
        switch (ka) {
        case AGG_V_INT: return cmp_i64(a.i, b.i);
        case AGG_V_UINT: return cmp_u64(a.u, b.u);
        default: return (a.f > b.f) - (a.f < b.f);
        }
    }
    if (ka == AGG_V_FLOAT)
        return kb == AGG_V_INT ? cmp_float_int(a.f, b.i) : cmp_float_uint(a.f, b.u);
    if (kb == AGG_V_FLOAT)
        return -(ka == AGG_V_INT ? cmp_float_int(b.f, a.i) : cmp_float_uint(b.f, a.u));
    return ka == AGG_V_INT ? cmp_int_uint(a.i, b.u) : -cmp_int_uint(b.i, a.u);
}

/* MIN/MAX precedence of kinds: numbers over strings over bools. */
static int kind_class(enum agg_vkind k)
{
    switch (k) {
    case AGG_V_INT:
    case AGG_V_UINT:
    case AGG_V_FLOAT: return 2;
    case AGG_V_STRING: return 1;
    case AGG_V_BOOL: return 0;
    default: return -1;
    }
}

static union num value_num(const struct agg_value *v)
{
    union num n;
    switch (v->kind) {
    case AGG_V_INT: n.i = v->i; break;
    case AGG_V_UINT: n.u = v->u; break;
    case AGG_V_FLOAT: n.f = v->f; break;
    default: n.b = v->b; break;
    }
    return n;
}

static void val_set(struct agg_table *t, struct st_val *st, const struct agg_value *v, int64_t ts)
{
    st->kind = v->kind;
    st->ts = ts;
    st->v = value_num(v);
    if (v->kind != AGG_V_STRING)
        return;
    if (v->s.len > st->scap) {
        size_t ncap = round_up(v->s.len, 16);
        free(st->s);
        st->s = xmalloc(ncap);
        t->mem += ncap - st->scap;
        st->scap = ncap;
    }
    if (v->s.len)
        memcpy(st->s, v->s.ptr, v->s.len);
    st->slen = v->s.len;
}

/* Whether v replaces the current value of a MIN (is_max false) or MAX. */
static bool minmax_wins(const struct st_val *st, const struct agg_value *v, bool is_max)
{
    int cv = kind_class(v->kind), cs = kind_class(st->kind);
    if (cv != cs)
        return cv > cs;
    int c;
    switch (cv) {
    case 0: c = (v->b > st->v.b) - (v->b < st->v.b); break;
    case 1: c = slice_cmp(v->s, slice_make(st->s, st->slen)); break;
    default:
        c = cmp_num(v->kind, value_num(v), st->kind, st->v);
        if (c == 0 && v->kind != st->kind)
            return v->kind < st->kind; /* INT, then UINT, then FLOAT */
        if (c == 0 && v->kind == AGG_V_FLOAT && !signbit(v->f) != !signbit(st->v.f))
            return is_max ? !signbit(v->f) : signbit(v->f) != 0; /* +0.0 vs -0.0 */
        break;
    }
    return is_max ? c > 0 : c < 0;
}

static void val_add(struct agg_table *t, enum agg_fn fn, struct st_val *st,
                    const struct agg_value *v, int64_t ts)
{
    if (v->kind == AGG_V_NULL)
        return;
    bool take = st->kind == AGG_V_NULL;
    switch (fn) {
    case AGG_FIRST: take = take || ts < st->ts; break;
    case AGG_LAST: take = take || ts >= st->ts; break;
    default:
        if (v->kind == AGG_V_FLOAT && isnan(v->f))
            return;
        take = take || minmax_wins(st, v, fn == AGG_MAX);
        break;
    }
    if (take)
        val_set(t, st, v, ts);
}

static void val_result(const struct st_val *st, struct agg_value *out)
{
    out->kind = st->kind;
    switch (st->kind) {
    case AGG_V_INT: out->i = st->v.i; break;
    case AGG_V_UINT: out->u = st->v.u; break;
    case AGG_V_FLOAT: out->f = st->v.f; break;
    case AGG_V_BOOL: out->b = st->v.b; break;
    case AGG_V_STRING: out->s = slice_make(st->s ? st->s : "", st->slen); break;
    default: break;
    }
}

/* ---- merging the tables of two threads ---- */

bool agg_mergeable(const struct agg_table *t)
{
    for (size_t i = 0; i < t->naggs; i++) {
        switch (t->aggs[i].fn) {
        case AGG_COUNT_STAR:
        case AGG_COUNT:
        case AGG_SUM:
        case AGG_AVG:
        case AGG_MIN:
        case AGG_MAX: break;
        default: return false; /* FIRST, LAST: a tie goes to the row seen first or last */
        }
    }
    return true;
}

/* Adds the sum b into a: the integers exactly, the floats with b's
 * compensation (the total within an ulp or two of one sum of every value). */
static void sum_merge(struct st_sum *a, const struct st_sum *b)
{
    a->isum += b->isum;
    neumaier_add(&a->fs, &a->fc, b->fs);
    a->fc += b->fc;
    a->n += b->n;
    a->has_float |= b->has_float;
    a->has_pinf |= b->has_pinf;
    a->has_ninf |= b->has_ninf;
}

int agg_merge(struct agg_table *into, const struct agg_table *from)
{
    for (size_t j = 0; j < from->cap; j++) {
        struct agg_group *g = from->slots[j].g, *dst;
        if (!g)
            continue;
        int rc = agg_group(into, slice_make(group_key_ptr(g), g->klen), &dst);
        if (rc)
            return rc;
        for (size_t i = 0; i < from->naggs; i++) {
            enum agg_fn fn = from->aggs[i].fn;
            void *a = state(into, dst, i), *b = state(from, g, i);
            if (fn == AGG_SUM || fn == AGG_AVG) {
                sum_merge(a, b);
            } else if (fn == AGG_MIN || fn == AGG_MAX) {
                /* the other's value as a row's: MIN and MAX order every value
                 * (minmax_wins), so the winner does not depend on which came first */
                struct agg_value v = {.kind = AGG_V_NULL};
                val_result(b, &v);
                val_add(into, fn, a, &v, ((const struct st_val *)b)->ts);
            } else {
                ((struct st_count *)a)->n += ((const struct st_count *)b)->n;
            }
        }
    }
    return ERR_OK;
}

/* ---- PERCENTILE: exact values, then the sketch ---- */

static int32_t sketch_key(const struct agg_table *t, double x)
{
    /* x > 0 finite: log(x) is within [-745, 710], so the key fits easily */
    return (int32_t)ceil(log(x) * t->inv_log_gamma);
}

/* The value standing for bin k (keys (gamma^(k-1), gamma^k]): within alpha of all of them. */
static double sketch_rep(const struct agg_table *t, int32_t k)
{
    return exp((double)k * t->log_gamma) * t->rep_scale;
}

/* Moves b's counts into a window [nlo, nlo + ncap) that covers b->kmax; keys below nlo
 * collapse into the bin nlo. */
static void bins_rebase(struct agg_table *t, struct bins *b, int32_t nlo, uint32_t ncap)
{
    uint64_t *nc = xcalloc(ncap, sizeof *nc);
    for (uint32_t j = 0; j < b->cap; j++) {
        if (!b->c[j])
            continue;
        int32_t k = b->lo + (int32_t)j;
        if (k < nlo)
            k = nlo;
        assert(k - nlo < (int32_t)ncap);
        nc[k - nlo] += b->c[j];
    }
    free(b->c);
    t->mem += ((uint64_t)ncap - b->cap) * sizeof *nc;
    b->c = nc;
    b->lo = nlo;
    b->cap = ncap;
    if (b->kmin < nlo)
        b->kmin = nlo;
}

static void bins_add(struct agg_table *t, struct bins *b, int32_t k)
{
    const int32_t max = AGG_PCT_MAX_BINS;
    if (!b->c) {
        b->cap = 16;
        b->c = xcalloc(b->cap, sizeof *b->c);
        t->mem += b->cap * sizeof *b->c;
        b->lo = k - 8;
        b->kmin = b->kmax = k;
    } else if (k < b->lo || k >= b->lo + (int32_t)b->cap) {
        int32_t nmin = k < b->kmin ? k : b->kmin, nmax = k > b->kmax ? k : b->kmax;
        int64_t span = (int64_t)nmax - nmin + 1;
        if (span <= max) {
            /* move the window, growing it (doubling) only if the keys no longer fit; the
             * room left over is split between both sides */
            int64_t ncap = b->cap;
            if (span > ncap)
                ncap = span > 2 * ncap ? span : 2 * ncap;
            if (ncap > max)
                ncap = max;
            bins_rebase(t, b, (int32_t)(nmin - (ncap - span) / 2), (uint32_t)ncap);
        } else if (k < b->kmin) {
            /* too wide: k is among the smallest magnitudes, it joins the lowest bin kept */
            if (b->lo != b->kmax - max + 1 || b->cap != (uint32_t)max)
                bins_rebase(t, b, b->kmax - max + 1, (uint32_t)max);
            k = b->lo;
        } else {
            /* too wide: the smallest magnitudes collapse to make room for k */
            bins_rebase(t, b, k - max + 1, (uint32_t)max);
        }
    }
    b->c[k - b->lo]++;
    if (k < b->kmin)
        b->kmin = k;
    if (k > b->kmax)
        b->kmax = k;
}

static void sketch_add(struct agg_table *t, struct sketch *sk, double x)
{
    if (x < sk->min)
        sk->min = x;
    if (x > sk->max)
        sk->max = x;
    if (x == 0)
        sk->zero++;
    else if (isinf(x))
        ++*(x > 0 ? &sk->pinf : &sk->ninf);
    else if (x > 0)
        bins_add(t, &sk->pos, sketch_key(t, x));
    else
        bins_add(t, &sk->neg, sketch_key(t, -x));
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* The value of rank r (1-based) of n: -inf, negatives from the largest magnitude, zeros,
 * positives from the smallest, +inf. */
static double sketch_rank(const struct agg_table *t, const struct sketch *sk, uint64_t r)
{
    uint64_t cum = sk->ninf;
    if (r <= cum)
        return -INFINITY;
    for (uint32_t j = sk->neg.cap; j-- > 0;) {
        cum += sk->neg.c[j];
        if (r <= cum)
            return clamp(-sketch_rep(t, sk->neg.lo + (int32_t)j), sk->min, sk->max);
    }
    cum += sk->zero;
    if (r <= cum)
        return 0.0;
    for (uint32_t j = 0; j < sk->pos.cap; j++) {
        cum += sk->pos.c[j];
        if (r <= cum)
            return clamp(sketch_rep(t, sk->pos.lo + (int32_t)j), sk->min, sk->max);
    }
    return INFINITY;
}

static void pct_add(struct agg_table *t, struct st_pct *st, const struct agg_value *v)
{
    double x;
    switch (v->kind) {
    case AGG_V_INT: x = (double)v->i; break;
    case AGG_V_UINT: x = (double)v->u; break;
    case AGG_V_FLOAT:
        if (isnan(v->f))
            return;
        x = v->f;
        break;
    default: return;
    }
    if (!st->sk && st->n < AGG_PCT_EXACT) {
        if (st->n == st->vcap) {
            size_t ncap = st->vcap ? 2 * st->vcap : 8;
            st->v = xrealloc(st->v, ncap * sizeof *st->v);
            t->mem += (ncap - st->vcap) * sizeof *st->v;
            st->vcap = ncap;
        }
        st->v[st->n++] = x;
        return;
    }
    if (!st->sk) {
        /* the first value past AGG_PCT_EXACT: the kept ones move into a sketch */
        struct sketch *sk = xcalloc(1, sizeof *sk);
        t->mem += sizeof *sk;
        sk->min = INFINITY;
        sk->max = -INFINITY;
        for (uint64_t j = 0; j < st->n; j++)
            sketch_add(t, sk, st->v[j]);
        free(st->v);
        t->mem -= st->vcap * sizeof *st->v;
        st->v = NULL;
        st->vcap = 0;
        st->sk = sk;
    }
    sketch_add(t, st->sk, x);
    st->n++;
}

/* The total order of the exact values: by value, -0.0 before +0.0 (no NaN is kept). */
static bool dbl_lt(double x, double y)
{
    return x < y || (x == y && signbit(x) && !signbit(y));
}

static void dbl_swap(double *a, size_t i, size_t j)
{
    double x = a[i];
    a[i] = a[j];
    a[j] = x;
}

/* The k-th smallest (0-based) of a[0..n), n > k, reordering a: quickselect with a median of
 * three and a three-way partition, so runs of equal values cost O(n). */
static double dbl_select(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        double p = dbl_lt(x, y) ? (dbl_lt(y, z)   ? y
                                   : dbl_lt(x, z) ? z
                                                  : x)
                                : (dbl_lt(x, z)   ? x
                                   : dbl_lt(y, z) ? z
                                                  : y);
        /* [lo, lt) < p, [lt, i) == p, [gt, hi] > p */
        size_t lt = lo, i = lo, gt = hi + 1;
        while (i < gt) {
            if (dbl_lt(a[i], p))
                dbl_swap(a, lt++, i++);
            else if (dbl_lt(p, a[i]))
                dbl_swap(a, i, --gt);
            else
                i++;
        }
        if (k < lt)
            hi = lt - 1;
        else if (k >= gt)
            lo = gt;
        else
            return p;
    }
    return a[lo];
}

/* The nearest rank of percentile p among n values (1..n). */
static uint64_t pct_rank(double p, uint64_t n)
{
    double x = p * (double)n / 100;
    x -= x * 1e-12; /* p = 70 with n = 10 is rank 7 whatever p's binary rounding */
    double r = ceil(x);
    if (r < 1)
        return 1;
    if (r >= (double)n)
        return n;
    return (uint64_t)r;
}

static void pct_result(const struct agg_table *t, struct st_pct *st, double p,
                       struct agg_value *out)
{
    if (st->n == 0)
        return;
    uint64_t r = pct_rank(p, st->n);
    out->kind = AGG_V_FLOAT;
    if (st->sk) {
        /* the extremes are known exactly; the ranks between come from the bins */
        out->f = r == 1 ? st->sk->min : r == st->n ? st->sk->max : sketch_rank(t, st->sk, r);
    } else {
        out->f = dbl_select(st->v, st->n, r - 1);
    }
}

/* ---- adding and reading ---- */

int agg_add(struct agg_table *t, struct agg_group *g, size_t i, const struct agg_value *v,
            int64_t ts)
{
    static const struct agg_value null_value = {.kind = AGG_V_NULL};
    if (i >= t->naggs)
        return ERR_INVAL;
    if (!v || (unsigned)v->kind > AGG_V_BOOL)
        v = &null_value;
    void *st = state(t, g, i);
    enum agg_fn fn = t->aggs[i].fn;
    switch (fn) {
    case AGG_COUNT_STAR: ((struct st_count *)st)->n++; break;
    case AGG_COUNT:
        if (v->kind != AGG_V_NULL)
            ((struct st_count *)st)->n++;
        break;
    case AGG_SUM:
    case AGG_AVG: sum_add(st, v); break;
    case AGG_MIN:
    case AGG_MAX:
    case AGG_FIRST:
    case AGG_LAST: val_add(t, fn, st, v, ts); break;
    case AGG_PERCENTILE: pct_add(t, st, v); break;
    }
    return ERR_OK;
}

int agg_add_count(struct agg_table *t, struct agg_group *g, size_t i, uint64_t n)
{
    if (i >= t->naggs || t->aggs[i].fn != AGG_COUNT_STAR)
        return ERR_INVAL;
    ((struct st_count *)state(t, g, i))->n += n;
    return ERR_OK;
}

void agg_result(struct agg_table *t, struct agg_group *g, size_t i, struct agg_value *out)
{
    assert(i < t->naggs);
    memset(out, 0, sizeof *out);
    out->kind = AGG_V_NULL;
    void *st = state(t, g, i);
    switch (t->aggs[i].fn) {
    case AGG_COUNT_STAR:
    case AGG_COUNT:
        out->kind = AGG_V_INT;
        out->i = (int64_t)((struct st_count *)st)->n;
        break;
    case AGG_SUM: sum_result(st, false, out); break;
    case AGG_AVG: sum_result(st, true, out); break;
    case AGG_MIN:
    case AGG_MAX:
    case AGG_FIRST:
    case AGG_LAST: val_result(st, out); break;
    case AGG_PERCENTILE: pct_result(t, st, t->aggs[i].p, out); break;
    }
}

/* ---- time buckets and key bytes ---- */

int64_t agg_time_bucket(int64_t ts, int64_t width, int64_t offset)
{
    assert(width > 0 && offset >= 0 && offset < width);
    int64_t a = ts % width; /* C truncates: a in (-width, width) */
    if (a < 0)
        a += width;
    int64_t r = a - offset; /* (ts - offset) mod width, without computing ts - offset */
    if (r < 0)
        r += width;
    if (ts < INT64_MIN + r)
        return INT64_MIN;
    return ts - r;
}

void agg_key_i64(int64_t v, unsigned char out[8])
{
    uint64_t u = (uint64_t)v ^ (1ULL << 63);
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(u >> (56 - 8 * i));
}

void agg_key_i64_desc(int64_t v, unsigned char out[8])
{
    uint64_t u = ~((uint64_t)v ^ (1ULL << 63));
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(u >> (56 - 8 * i));
}

int64_t agg_key_i64_get(const unsigned char in[8], bool is_desc)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | in[i];
    if (is_desc)
        u = ~u;
    return (int64_t)(u ^ (1ULL << 63));
}
