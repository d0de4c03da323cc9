/* Conditions: building, implied bounds, required words, evaluation (cond.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "query/cond.h"

#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "base/coding.h"
#include "base/err.h"
#include "model/words.h"
#include "query/encode.h"

#define REGEX_MATCH_LIMIT 1000000 /* backtracking steps of one match */

enum tv { TV_F, TV_T, TV_U }; /* three-valued logic */

/* --- building --- */

struct sql_expr *cond_leaf_new(enum sql_leaf_kind leaf, enum sql_col_kind col, const char *name,
                               size_t pos)
{
    struct sql_expr *e = xcalloc(1, sizeof(*e));
    e->kind = SQL_E_LEAF;
    e->leaf = leaf;
    e->col.kind = col;
    e->col.name = name ? xstrdup(name) : NULL;
    e->pos = pos;
    return e;
}

static void kids_push(struct sql_expr *e, struct sql_expr *k)
{
    e->kids = xrealloc(e->kids, (e->nkids + 1) * sizeof(*e->kids));
    e->kids[e->nkids++] = k;
}

/* a op b, flattening children of the same op so chains stay one level. */
static struct sql_expr *join(enum sql_expr_kind kind, struct sql_expr *a, struct sql_expr *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    struct sql_expr *e;
    if (a->kind == kind) {
        e = a;
    } else {
        e = xcalloc(1, sizeof(*e));
        e->kind = kind;
        e->pos = a->pos;
        kids_push(e, a);
    }
    if (b->kind == kind) {
        for (size_t i = 0; i < b->nkids; i++)
            kids_push(e, b->kids[i]);
        b->nkids = 0;
        cond_free(b);
    } else {
        kids_push(e, b);
    }
    return e;
}

struct sql_expr *cond_and(struct sql_expr *a, struct sql_expr *b)
{
    return join(SQL_E_AND, a, b);
}

struct sql_expr *cond_or(struct sql_expr *a, struct sql_expr *b)
{
    return join(SQL_E_OR, a, b);
}

struct sql_expr *cond_not(struct sql_expr *a)
{
    struct sql_expr *e = xcalloc(1, sizeof(*e));
    e->kind = SQL_E_NOT;
    e->pos = a->pos;
    kids_push(e, a);
    return e;
}

struct regex {
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mc;
};

/* A LIKE pattern split at its unescaped '%': parts[0] must match at the
 * start, parts[n-1] at the end, the others in order between. In a part,
 * 0x100 stands for '_' (any one byte). */
struct like {
    size_t nparts;
    uint16_t **parts;
    size_t *plen;
    bool *plain;  /* the part has no '_' (memmem can find it) */
    char **bytes; /* plain parts as bytes */
};

static void like_free(struct like *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nparts; i++) {
        free(l->parts[i]);
        free(l->bytes[i]);
    }
    free(l->parts);
    free(l->plen);
    free(l->plain);
    free(l->bytes);
    free(l);
}

static void regex_free(struct regex *r)
{
    if (!r)
        return;
    pcre2_match_data_free(r->md);
    pcre2_match_context_free(r->mc);
    pcre2_code_free(r->code);
    free(r);
}

void cond_free(struct sql_expr *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nkids; i++)
        cond_free(e->kids[i]);
    free(e->kids);
    free(e->col.name);
    free(e->v.s);
    for (size_t i = 0; i < e->nstrs; i++)
        free(e->strs[i]);
    free(e->strs);
    free(e->slens);
    free(e->ints);
    free(e->flts);
    for (size_t i = 0; i < e->nterms; i++)
        free(e->terms[i]);
    free(e->terms);
    free(e->tlens);
    if (e->leaf == SQL_L_REGEX)
        regex_free(e->re);
    else if (e->leaf == SQL_L_LIKE)
        like_free(e->re);
    free(e);
}

/* --- IN lists --- */

void cond_in_add(struct sql_expr *e, const struct sql_value *v)
{
    switch (v->type) {
    case SQL_V_STRING:
        e->strs = xrealloc(e->strs, (e->nstrs + 1) * sizeof(*e->strs));
        e->slens = xrealloc(e->slens, (e->nstrs + 1) * sizeof(*e->slens));
        e->strs[e->nstrs] = xmalloc(v->slen + 1);
        memcpy(e->strs[e->nstrs], v->s, v->slen + 1);
        e->slens[e->nstrs++] = v->slen;
        break;
    case SQL_V_INT:
        e->ints = xrealloc(e->ints, (e->nints + 1) * sizeof(*e->ints));
        e->ints[e->nints++] = v->i;
        break;
    case SQL_V_FLOAT:
        e->flts = xrealloc(e->flts, (e->nflts + 1) * sizeof(*e->flts));
        e->flts[e->nflts++] = v->f;
        break;
    default: break;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct sitem {
    char *s;
    size_t n;
};

static int cmp_sitem(const void *a, const void *b)
{
    const struct sitem *x = a, *y = b;
    return slice_cmp(slice_make(x->s, x->n), slice_make(y->s, y->n));
}

/* Sorts and dedups strings given as parallel arrays; returns the count. */
static size_t sort_strs(char **v, size_t *len, size_t n)
{
    struct sitem *it = xmalloc((n ? n : 1) * sizeof(*it));
    for (size_t i = 0; i < n; i++)
        it[i] = (struct sitem){v[i], len[i]};
    qsort(it, n, sizeof(*it), cmp_sitem);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && cmp_sitem(&it[u - 1], &it[i]) == 0) {
            free(it[i].s);
            continue;
        }
        it[u++] = it[i];
    }
    for (size_t i = 0; i < u; i++) {
        v[i] = it[i].s;
        len[i] = it[i].n;
    }
    free(it);
    return u;
}

static size_t sort_i64(int64_t *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || v[u - 1] != v[i])
            v[u++] = v[i];
    return u;
}

void cond_in_finish(struct sql_expr *e)
{
    e->nstrs = sort_strs(e->strs, e->slens, e->nstrs);
    e->nints = sort_i64(e->ints, e->nints);
    if (e->nflts > 1)
        qsort(e->flts, e->nflts, sizeof(*e->flts), cmp_dbl);
}

/* --- LIKE --- */

#define LIKE_ANY1 0x100

static struct like *like_compile(const char *p, size_t n)
{
    struct like *l = xcalloc(1, sizeof(*l));
    size_t cap = 0;
    uint16_t *cur = xmalloc((n + 1) * sizeof(*cur));
    size_t cn = 0;
    for (size_t i = 0;; i++) {
        if (i == n || p[i] == '%') {
            if (l->nparts == cap) {
                cap = cap ? 2 * cap : 4;
                l->parts = xrealloc(l->parts, cap * sizeof(*l->parts));
                l->plen = xrealloc(l->plen, cap * sizeof(*l->plen));
                l->plain = xrealloc(l->plain, cap * sizeof(*l->plain));
                l->bytes = xrealloc(l->bytes, cap * sizeof(*l->bytes));
            }
            bool plain = true;
            char *bytes = xmalloc(cn + 1);
            for (size_t k = 0; k < cn; k++) {
                plain = plain && cur[k] != LIKE_ANY1;
                bytes[k] = (char)cur[k];
            }
            l->parts[l->nparts] = cur;
            l->plen[l->nparts] = cn;
            l->plain[l->nparts] = plain;
            l->bytes[l->nparts++] = bytes;
            if (i == n)
                break;
            cur = xmalloc((n + 1) * sizeof(*cur));
            cn = 0;
            continue;
        }
        if (p[i] == '\\' && i + 1 < n)
            cur[cn++] = (unsigned char)p[++i];
        else if (p[i] == '_')
            cur[cn++] = LIKE_ANY1;
        else
            cur[cn++] = (unsigned char)p[i];
    }
    return l;
}

static inline unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static bool part_at(const uint16_t *part, size_t plen, const unsigned char *s, bool icase)
{
    for (size_t i = 0; i < plen; i++) {
        if (part[i] == LIKE_ANY1)
            continue;
        unsigned char a = (unsigned char)part[i], b = s[i];
        if (a != b && !(icase && fold(a) == fold(b)))
            return false;
    }
    return true;
}

/* The leftmost position >= from where part i fits entirely before limit. */
static bool part_find(const struct like *l, size_t i, const unsigned char *s, size_t from,
                      size_t limit, bool icase, size_t *at)
{
    size_t plen = l->plen[i];
    if (limit < from || limit - from < plen)
        return false;
    if (l->plain[i] && !icase) {
        const unsigned char *f =
            plen ? memmem(s + from, limit - from, l->bytes[i], plen) : s + from;
        if (!f)
            return false;
        *at = (size_t)(f - s);
        return true;
    }
    for (size_t p = from; p + plen <= limit; p++)
        if (part_at(l->parts[i], plen, s + p, icase)) {
            *at = p;
            return true;
        }
    return false;
}

static bool like_match(const struct like *l, struct slice text, bool icase)
{
    const unsigned char *s = (const unsigned char *)text.ptr;
    size_t n = text.len, k = l->nparts - 1;
    if (k == 0)
        return l->plen[0] == n && part_at(l->parts[0], n, s, icase);
    if (l->plen[0] + l->plen[k] > n)
        return false;
    if (!part_at(l->parts[0], l->plen[0], s, icase) ||
        !part_at(l->parts[k], l->plen[k], s + n - l->plen[k], icase))
        return false;
    size_t pos = l->plen[0], limit = n - l->plen[k];
    for (size_t i = 1; i < k; i++) {
        size_t at;
        if (!part_find(l, i, s, pos, limit, icase, &at))
            return false;
        pos = at + l->plen[i];
    }
    return true;
}

/* fn for each whole word of LIKE part i: bounded on both sides by a
 * literal non-word byte, or by the anchored start or end of the text. */
static void like_part_words(const struct like *l, size_t i, void (*fn)(void *, struct slice),
                            void *arg)
{
    const uint16_t *p = l->parts[i];
    size_t len = l->plen[i];
    bool at_start = i == 0, at_end = i == l->nparts - 1;
    size_t k = 0;
    while (k < len) {
        if (p[k] == LIKE_ANY1 || !words_is_word_byte((unsigned char)p[k])) {
            k++;
            continue;
        }
        size_t start = k;
        while (k < len && p[k] != LIKE_ANY1 && words_is_word_byte((unsigned char)p[k]))
            k++;
        bool left = start > 0 ? p[start - 1] != LIKE_ANY1 : at_start;
        bool right = k < len ? p[k] != LIKE_ANY1 : at_end;
        if (left && right)
            fn(arg, slice_make(l->bytes[i] + start, k - start));
    }
}

/* --- MATCH terms --- */

static void term_add(struct sql_expr *e, const char *s, size_t n)
{
    bool has_word = false;
    for (size_t i = 0; i < n && !has_word; i++)
        has_word = words_is_word_byte((unsigned char)s[i]);
    if (!has_word)
        return;
    e->terms = xrealloc(e->terms, (e->nterms + 1) * sizeof(*e->terms));
    e->tlens = xrealloc(e->tlens, (e->nterms + 1) * sizeof(*e->tlens));
    e->terms[e->nterms] = xstrndup(s, n);
    e->tlens[e->nterms++] = n;
}

static int match_prepare(struct sql_expr *e, size_t *bad_off, struct buf *err)
{
    const char *s = e->v.s;
    size_t n = e->v.slen, i = 0;
    while (i < n) {
        if (s[i] == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != '"')
                j++;
            if (j == n) {
                *bad_off = i;
                buf_puts(err, "unterminated \" in MATCH");
                return ERR_INVAL;
            }
            term_add(e, s + i + 1, j - i - 1);
            i = j + 1;
        } else if (s[i] == ' ' || s[i] == '\t') {
            i++;
        } else {
            size_t j = i;
            while (j < n && s[j] != ' ' && s[j] != '\t' && s[j] != '"')
                j++;
            /* a bare term's words must be consecutive too: "a-b" is a phrase */
            term_add(e, s + i, j - i);
            i = j;
        }
    }
    if (e->nterms == 0) {
        *bad_off = 0;
        buf_puts(err, "MATCH needs at least one word");
        return ERR_INVAL;
    }
    return ERR_OK;
}

/* --- regular expressions --- */

static int regex_prepare(struct sql_expr *e, size_t *bad_off, struct buf *err)
{
    int code;
    PCRE2_SIZE off;
    uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (e->icase ? PCRE2_CASELESS : 0);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)e->v.s, e->v.slen, flags, &code, &off, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof(msg));
        *bad_off = off;
        buf_printf(err, "bad regular expression: %s", (const char *)msg);
        return ERR_INVAL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* without JIT, the interpreter */
    struct regex *r = xcalloc(1, sizeof(*r));
    r->code = re;
    r->md = pcre2_match_data_create_from_pattern(re, NULL);
    r->mc = pcre2_match_context_create(NULL);
    if (!r->md || !r->mc)
        abort(); /* out of memory, as xmalloc does */
    pcre2_set_match_limit(r->mc, REGEX_MATCH_LIMIT);
    e->re = r;
    return ERR_OK;
}

int cond_prepare(struct sql_expr *e, size_t *bad_off, struct buf *err)
{
    *bad_off = 0;
    switch (e->leaf) {
    case SQL_L_LIKE: e->re = like_compile(e->v.s, e->v.slen); return ERR_OK;
    case SQL_L_REGEX: return regex_prepare(e, bad_off, err);
    case SQL_L_MATCH: return match_prepare(e, bad_off, err);
    default: return ERR_OK;
    }
}

/* --- what a condition implies --- */

struct imp {
    bool empty;
    bool has_lo, has_hi;
    int64_t lo, hi;
    bool has_pts;
    int64_t *pts;
    size_t npts;
    struct sql_strset host, event;
};

static void set_free(struct sql_strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    free(s->len);
    memset(s, 0, sizeof(*s));
}

static void imp_free(struct imp *m)
{
    free(m->pts);
    set_free(&m->host);
    set_free(&m->event);
}

static void set_from(struct sql_strset *s, char *const *v, const size_t *len, size_t n)
{
    s->is_set = true;
    s->v = xmalloc((n ? n : 1) * sizeof(*s->v));
    s->len = xmalloc((n ? n : 1) * sizeof(*s->len));
    for (size_t i = 0; i < n; i++) {
        s->v[i] = xstrndup(v[i], len[i]);
        s->len[i] = len[i];
    }
    s->n = n;
}

bool cond_sorted_has(char *const *v, const size_t *len, size_t n, struct slice s)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = slice_cmp(slice_make(v[mid], len[mid]), s);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static bool set_has(const struct sql_strset *s, const char *v, size_t n)
{
    return cond_sorted_has(s->v, s->len, s->n, slice_make(v, n));
}

/* a := a AND b (sets intersect; unset is everything). */
static void set_and(struct sql_strset *a, struct sql_strset *b)
{
    if (!b->is_set)
        return;
    if (!a->is_set) {
        *a = *b;
        memset(b, 0, sizeof(*b));
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (set_has(b, a->v[i], a->len[i])) {
            a->v[k] = a->v[i];
            a->len[k++] = a->len[i];
        } else {
            free(a->v[i]);
        }
    }
    a->n = k;
}

/* a := a OR b (union; unset on either side is everything). */
static void set_or(struct sql_strset *a, struct sql_strset *b)
{
    if (!a->is_set || !b->is_set) {
        set_free(a);
        return;
    }
    a->v = xrealloc(a->v, (a->n + b->n + 1) * sizeof(*a->v));
    a->len = xrealloc(a->len, (a->n + b->n + 1) * sizeof(*a->len));
    for (size_t i = 0; i < b->n; i++) {
        a->v[a->n] = b->v[i];
        a->len[a->n++] = b->len[i];
    }
    b->n = 0;
    a->n = sort_strs(a->v, a->len, a->n);
}

static void imp_leaf(const struct sql_expr *e, struct imp *m)
{
    if (e->col.kind == SQL_COL_TS && e->leaf == SQL_L_CMP) {
        int64_t t = e->v.i;
        switch (e->op) {
        case SQL_EQ:
            m->has_pts = true;
            m->pts = xmalloc(sizeof(*m->pts));
            m->pts[0] = t;
            m->npts = 1;
            break;
        case SQL_LT:
            if (t == INT64_MIN)
                m->empty = true;
            else
                m->has_hi = true, m->hi = t - 1;
            break;
        case SQL_LE: m->has_hi = true, m->hi = t; break;
        case SQL_GT:
            if (t == INT64_MAX)
                m->empty = true;
            else
                m->has_lo = true, m->lo = t + 1;
            break;
        case SQL_GE: m->has_lo = true, m->lo = t; break;
        default: break;
        }
    } else if (e->col.kind == SQL_COL_TS && e->leaf == SQL_L_IN) {
        m->has_pts = true;
        m->pts = xmalloc((e->nints ? e->nints : 1) * sizeof(*m->pts));
        memcpy(m->pts, e->ints, e->nints * sizeof(*m->pts));
        m->npts = e->nints;
    } else if (e->col.kind == SQL_COL_HOST || e->col.kind == SQL_COL_EVENT) {
        struct sql_strset *s = e->col.kind == SQL_COL_HOST ? &m->host : &m->event;
        if (e->leaf == SQL_L_CMP && e->op == SQL_EQ && e->v.type == SQL_V_STRING)
            set_from(s, (char *const *)&e->v.s, &e->v.slen, 1);
        else if (e->leaf == SQL_L_IN)
            set_from(s, e->strs, e->slens, e->nstrs);
    }
}

static void imp_of(const struct sql_expr *e, struct imp *m);

static void imp_and(const struct sql_expr *e, struct imp *m)
{
    for (size_t i = 0; i < e->nkids; i++) {
        struct imp k = {0};
        imp_of(e->kids[i], &k);
        m->empty = m->empty || k.empty;
        if (k.has_lo && (!m->has_lo || k.lo > m->lo))
            m->has_lo = true, m->lo = k.lo;
        if (k.has_hi && (!m->has_hi || k.hi < m->hi))
            m->has_hi = true, m->hi = k.hi;
        if (k.has_pts && !m->has_pts) {
            m->has_pts = true;
            m->pts = k.pts, m->npts = k.npts;
            k.pts = NULL;
        } else if (k.has_pts) {
            size_t u = 0;
            for (size_t j = 0; j < m->npts; j++)
                if (bsearch(&m->pts[j], k.pts, k.npts, sizeof(*k.pts), cmp_i64))
                    m->pts[u++] = m->pts[j];
            m->npts = u;
        }
        set_and(&m->host, &k.host);
        set_and(&m->event, &k.event);
        imp_free(&k);
    }
}

/* The lowest and highest ts a branch allows (points count as bounds). */
static bool imp_lo(const struct imp *m, int64_t *lo)
{
    if (m->has_pts && m->npts)
        *lo = m->has_lo && m->lo > m->pts[0] ? m->lo : m->pts[0];
    else if (m->has_lo)
        *lo = m->lo;
    return m->has_lo || (m->has_pts && m->npts);
}

static bool imp_hi(const struct imp *m, int64_t *hi)
{
    if (m->has_pts && m->npts)
        *hi = m->has_hi && m->hi < m->pts[m->npts - 1] ? m->hi : m->pts[m->npts - 1];
    else if (m->has_hi)
        *hi = m->hi;
    return m->has_hi || (m->has_pts && m->npts);
}

static void imp_or(const struct sql_expr *e, struct imp *m)
{
    bool first = true;
    for (size_t i = 0; i < e->nkids; i++) {
        struct imp k = {0};
        imp_of(e->kids[i], &k);
        if (k.empty) { /* a branch that matches nothing adds nothing */
            imp_free(&k);
            continue;
        }
        if (first) {
            *m = k;
            /* a branch's bounds and points together: keep them as bounds */
            int64_t lo, hi;
            m->has_lo = imp_lo(&k, &lo), m->lo = lo;
            m->has_hi = imp_hi(&k, &hi), m->hi = hi;
            first = false;
            continue;
        }
        int64_t lo = 0, hi = 0;
        bool hl = imp_lo(&k, &lo), hh = imp_hi(&k, &hi);
        m->has_lo = m->has_lo && hl;
        m->lo = m->lo < lo ? m->lo : lo;
        m->has_hi = m->has_hi && hh;
        m->hi = m->hi > hi ? m->hi : hi;
        if (m->has_pts && k.has_pts) {
            m->pts = xrealloc(m->pts, (m->npts + k.npts + 1) * sizeof(*m->pts));
            memcpy(m->pts + m->npts, k.pts, k.npts * sizeof(*k.pts));
            m->npts = sort_i64(m->pts, m->npts + k.npts);
        } else {
            free(m->pts);
            m->pts = NULL, m->npts = 0, m->has_pts = false;
        }
        set_or(&m->host, &k.host);
        set_or(&m->event, &k.event);
        imp_free(&k);
    }
    if (first)
        m->empty = true;
}

static void imp_of(const struct sql_expr *e, struct imp *m)
{
    memset(m, 0, sizeof(*m));
    switch (e->kind) {
    case SQL_E_LEAF: imp_leaf(e, m); break;
    case SQL_E_AND: imp_and(e, m); break;
    case SQL_E_OR: imp_or(e, m); break;
    case SQL_E_NOT: break; /* implies nothing we use */
    }
}

void cond_derive(struct sql_where *w)
{
    free(w->ts);
    set_free(&w->host);
    set_free(&w->event);
    w->ts = NULL;
    w->nts = 0;
    w->has_lo = w->has_hi = w->has_ts_set = false;
    if (!w->cond)
        return;
    struct imp m;
    imp_of(w->cond, &m);
    w->has_lo = m.has_lo, w->ts_lo = m.lo;
    w->has_hi = m.has_hi, w->ts_hi = m.hi;
    w->has_ts_set = m.has_pts, w->ts = m.pts, w->nts = m.npts;
    w->host = m.host;
    w->event = m.event;
    if (m.empty) { /* no row can match: an empty point set says so */
        free(w->ts);
        w->has_ts_set = true;
        w->ts = NULL;
        w->nts = 0;
    }
}

/* --- required words --- */

struct hash_list {
    struct word_hashes **out;
    size_t *n, *cap;
};

static void push_hashes(void *arg, struct slice w)
{
    struct hash_list *l = arg;
    if (*l->n == *l->cap)
        *l->out = xrealloc(*l->out, (*l->cap = *l->cap ? 2 * *l->cap : 8) * sizeof(**l->out));
    (*l->out)[(*l->n)++] = words_hashes(w);
}

struct word_fn {
    void (*fn)(void *arg, struct slice word);
    void *arg;
};

static bool term_word(void *arg, struct slice w)
{
    const struct word_fn *f = arg;
    f->fn(f->arg, w);
    return true;
}

/* fn for each literal run of LIKE part i (its bytes between '_'s). */
static void like_part_runs(const struct like *l, size_t i, void (*fn)(void *, struct slice),
                           void *arg)
{
    const uint16_t *p = l->parts[i];
    size_t len = l->plen[i], k = 0;
    while (k < len) {
        size_t start = k;
        while (k < len && p[k] != LIKE_ANY1)
            k++;
        if (k > start)
            fn(arg, slice_make(l->bytes[i] + start, k - start));
        k++;
    }
}

/* cond_required_each (runs false) or cond_required_text (runs true). */
static void required_walk(const struct sql_expr *e, bool runs,
                          void (*fn)(void *arg, struct slice word), void *arg)
{
    if (!e)
        return;
    if (e->kind == SQL_E_AND) {
        for (size_t i = 0; i < e->nkids; i++)
            required_walk(e->kids[i], runs, fn, arg);
        return;
    }
    if (e->kind != SQL_E_LEAF)
        return;
    if (e->leaf == SQL_L_MATCH) {
        struct word_fn f = {fn, arg};
        for (size_t i = 0; i < e->nterms; i++)
            words_each(slice_make(e->terms[i], e->tlens[i]), term_word, &f);
    } else if (e->leaf == SQL_L_LIKE && e->re) {
        const struct like *l = e->re;
        for (size_t i = 0; i < l->nparts; i++)
            (runs ? like_part_runs : like_part_words)(l, i, fn, arg);
    }
}

void cond_required_each(const struct sql_expr *e, void (*fn)(void *arg, struct slice word),
                        void *arg)
{
    required_walk(e, false, fn, arg);
}

void cond_required_text(const struct sql_expr *e, void (*fn)(void *arg, struct slice text),
                        void *arg)
{
    required_walk(e, true, fn, arg);
}

void cond_required_words(const struct sql_expr *e, struct word_hashes **out, size_t *n, size_t *cap)
{
    struct hash_list l = {out, n, cap};
    cond_required_each(e, push_hashes, &l);
}

bool cond_thread_safe(const struct sql_expr *e)
{
    if (!e)
        return true;
    if (e->kind == SQL_E_LEAF)
        return e->leaf != SQL_L_REGEX;
    for (size_t i = 0; i < e->nkids; i++)
        if (!cond_thread_safe(e->kids[i]))
            return false;
    return true;
}

bool cond_is_implied(const struct sql_expr *e)
{
    if (!e)
        return true;
    if (e->kind == SQL_E_AND) {
        for (size_t i = 0; i < e->nkids; i++)
            if (!cond_is_implied(e->kids[i]))
                return false;
        return true;
    }
    if (e->kind != SQL_E_LEAF)
        return false;
    if (e->col.kind == SQL_COL_TS)
        return (e->leaf == SQL_L_CMP && e->op != SQL_NE) || e->leaf == SQL_L_IN;
    if (e->col.kind != SQL_COL_HOST && e->col.kind != SQL_COL_EVENT)
        return false;
    if (e->leaf == SQL_L_CMP)
        return e->op == SQL_EQ && e->v.type == SQL_V_STRING;
    return e->leaf == SQL_L_IN && e->nints == 0 && e->nflts == 0;
}

bool cond_only_key_range(const struct sql_expr *e)
{
    if (!e)
        return true;
    if (e->kind == SQL_E_AND) {
        int hosts = 0, events = 0;
        for (size_t i = 0; i < e->nkids; i++) {
            const struct sql_expr *k = e->kids[i];
            if (k->kind != SQL_E_LEAF || !cond_only_key_range(k))
                return false;
            hosts += k->col.kind == SQL_COL_HOST;
            events += k->col.kind == SQL_COL_EVENT;
        }
        return hosts <= 1 && events <= 1;
    }
    if (e->kind != SQL_E_LEAF || e->leaf != SQL_L_CMP)
        return false;
    if (e->col.kind == SQL_COL_TS)
        return e->op != SQL_EQ && e->op != SQL_NE;
    return (e->col.kind == SQL_COL_HOST || e->col.kind == SQL_COL_EVENT) && e->op == SQL_EQ;
}

/* --- EXPLAIN --- */

static void explain_col(const struct sql_col *c, struct buf *out)
{
    switch (c->kind) {
    case SQL_COL_TS: buf_puts(out, "ts"); break;
    case SQL_COL_HOST: buf_puts(out, "host"); break;
    case SQL_COL_EVENT: buf_puts(out, "event"); break;
    case SQL_COL_TAG: buf_printf(out, "tags.%s", c->name); break;
    case SQL_COL_FIELD: buf_printf(out, "fields.%s", c->name); break;
    case SQL_COL_ANY: buf_puts(out, "*"); break;
    }
}

static void explain_value(const struct sql_value *v, struct buf *out)
{
    switch (v->type) {
    case SQL_V_STRING:
        buf_putc(out, '\'');
        buf_append(out, v->s, v->slen);
        buf_putc(out, '\'');
        break;
    case SQL_V_INT: buf_printf(out, "%lld", (long long)v->i); break;
    case SQL_V_FLOAT: enc_double(out, v->f); break;
    case SQL_V_BOOL: buf_puts(out, v->b ? "true" : "false"); break;
    }
}

static void explain_leaf(const struct sql_expr *e, struct buf *out)
{
    static const char *ops[] = {"=", "!=", "<", "<=", ">", ">="};
    explain_col(&e->col, out);
    switch (e->leaf) {
    case SQL_L_CMP:
        buf_printf(out, " %s ", ops[e->op]);
        explain_value(&e->v, out);
        break;
    case SQL_L_IN: buf_printf(out, " IN (%zu values)", e->nstrs + e->nints + e->nflts); break;
    case SQL_L_LIKE:
        buf_puts(out, e->icase ? " ILIKE " : " LIKE ");
        explain_value(&e->v, out);
        break;
    case SQL_L_REGEX:
        buf_puts(out, e->icase ? " ~* " : " ~ ");
        explain_value(&e->v, out);
        break;
    case SQL_L_MATCH:
        buf_puts(out, " MATCH ");
        explain_value(&e->v, out);
        break;
    case SQL_L_NULL: buf_puts(out, " IS NULL"); break;
    }
}

void cond_explain(const struct sql_expr *e, struct buf *out)
{
    if (!e) {
        buf_puts(out, "true");
        return;
    }
    switch (e->kind) {
    case SQL_E_LEAF: explain_leaf(e, out); return;
    case SQL_E_NOT:
        buf_puts(out, "NOT ");
        cond_explain(e->kids[0], out);
        return;
    default:
        buf_putc(out, '(');
        for (size_t i = 0; i < e->nkids; i++) {
            if (i)
                buf_puts(out, e->kind == SQL_E_AND ? " AND " : " OR ");
            cond_explain(e->kids[i], out);
        }
        buf_putc(out, ')');
    }
}

/* --- rows --- */

void cond_row_init(struct cond_row *r)
{
    memset(r, 0, sizeof(*r));
}

void cond_row_destroy(struct cond_row *r)
{
    free(r->tags);
    free(r->fields);
    memset(r, 0, sizeof(*r));
}

void cond_row_set(struct cond_row *r, int64_t ts, struct slice host, struct slice event,
                  struct slice id, struct slice value)
{
    r->ts = ts;
    r->host = host;
    r->event = event;
    r->id = id;
    r->value = value;
    r->decoded = false;
    r->ntags = r->nfields = 0;
}

static void push_tag(struct cond_row *r, struct rec_tag t)
{
    if (r->ntags == r->tcap)
        r->tags = xrealloc(r->tags, (r->tcap = r->tcap ? 2 * r->tcap : 16) * sizeof(t));
    r->tags[r->ntags++] = t;
}

static void push_field(struct cond_row *r, struct rec_field f)
{
    if (r->nfields == r->fcap)
        r->fields = xrealloc(r->fields, (r->fcap = r->fcap ? 2 * r->fcap : 16) * sizeof(f));
    r->fields[r->nfields++] = f;
}

/* A field's type and value at p (after its key) into *f, by record.h's
 * inline walk: the position after it, or NULL for anything the walk does
 * not take. */
static const char *read_value(const char *p, const char *end, struct rec_field *f)
{
    uint64_t x;
    int type;
    if (p == end)
        return NULL;
    type = (uint8_t)*p++;
    switch (type) {
    case REC_FLOAT: {
        if (end - p < 8)
            return NULL;
        uint64_t v = coding_get_u64le(p);
        memcpy(&f->v.f, &v, 8);
        p += 8;
        break;
    }
    case REC_INT:
        if (!(p = rec_walk_varint(p, end, &x)))
            return NULL;
        f->v.i = coding_unzigzag(x);
        break;
    case REC_UINT:
        if (!(p = rec_walk_varint(p, end, &f->v.u)))
            return NULL;
        break;
    case REC_BOOL:
        if (p == end || (uint8_t)*p > 1)
            return NULL;
        f->v.b = *p++ == 1;
        break;
    case REC_STRING:
        if (!(p = rec_walk_bytes(p, end, &f->v.s)))
            return NULL;
        break;
    default: return NULL;
    }
    f->type = (enum rec_type)type;
    return p;
}

/* One field at p (key, type, value) into *f, as read_value. */
static const char *read_field(const char *p, const char *end, struct rec_field *f)
{
    if (!(p = rec_walk_bytes(p, end, &f->key)))
        return NULL;
    return read_value(p, end, f);
}

/* The first field of a name, looked for in records' fields. */
struct field_pick {
    struct slice name;
    struct rec_field *out;
    bool found;
    bool stop; /* at the field found: the bytes after it are not read */
};

/* One record's fields, from p (after its tags) to its end, appended to r
 * with their values; false for anything the walk does not take. */
static bool walk_fields(struct cond_row *r, const char *p, const char *end)
{
    uint64_t n;
    if (!(p = rec_walk_varint(p, end, &n)))
        return false;
    for (; n; n--) {
        struct rec_field f;
        if (!(p = read_field(p, end, &f)))
            return false;
        push_field(r, f);
    }
    return p == end;
}

/* walk_fields with a pick, as the aggregates read one field of every row:
 * each key compared where it lies, the values of the other fields stepped
 * over (rec_walk_value), not decoded. */
static bool pick_fields(const char *p, const char *end, struct field_pick *pick)
{
    uint64_t n;
    if (!(p = rec_walk_varint(p, end, &n)))
        return false;
    const struct slice name = pick->name;
    for (; n; n--) {
        struct slice key, s;
        int type;
        if (!(p = rec_walk_bytes(p, end, &key)))
            return false;
        if (!pick->found && key.len == name.len && mem_eq_short(key.ptr, name.ptr, name.len)) {
            if (!(p = read_value(p, end, pick->out)))
                return false;
            pick->out->key = key;
            pick->found = true;
            if (pick->stop)
                return true;
        } else if (!(p = rec_walk_value(p, end, &type, &s))) {
            return false;
        }
    }
    return p == end;
}

/* A record's tags, and where its fields start in *fields; false as above. */
static bool walk_tags(struct cond_row *r, struct slice rec, const char **fields)
{
    const char *p = rec.ptr, *end = p + rec.len;
    uint64_t n;
    if (!(p = rec_walk_varint(p, end, &n)))
        return false;
    for (; n; n--) {
        struct rec_tag t;
        if (!(p = rec_walk_bytes(p, end, &t.key)) || !(p = rec_walk_bytes(p, end, &t.value)))
            return false;
        push_tag(r, t);
    }
    *fields = p;
    return true;
}

/* The row's tags (the id's, then the value's) and fields (likewise) in one
 * pass over each record's bytes; false if a record is damaged (the
 * reader of record.h then says how). */
static bool decode_fast(struct cond_row *r)
{
    struct slice parts[2] = {r->id, r->value};
    const char *fields[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        if (parts[i].len && !walk_tags(r, parts[i], &fields[i]))
            return false;
    for (int i = 0; i < 2; i++)
        if (parts[i].len && !walk_fields(r, fields[i], parts[i].ptr + parts[i].len))
            return false;
    return true;
}

int cond_row_decode(struct cond_row *r)
{
    if (r->decoded)
        return ERR_OK;
    r->ntags = r->nfields = 0;
    if (decode_fast(r)) {
        r->decoded = true;
        return ERR_OK;
    }
    struct rec_row_reader rr;
    int rc = rec_row_init(&rr, r->id, r->value), got;
    if (rc)
        return ERR_CORRUPT;
    r->ntags = r->nfields = 0;
    struct rec_tag t;
    while ((got = rec_row_next_tag(&rr, &t)) == 1) {
        if (r->ntags == r->tcap)
            r->tags = xrealloc(r->tags, (r->tcap = r->tcap ? 2 * r->tcap : 16) * sizeof(t));
        r->tags[r->ntags++] = t;
    }
    struct rec_field f;
    while (got >= 0 && (got = rec_row_next_field(&rr, &f)) == 1) {
        if (r->nfields == r->fcap)
            r->fields = xrealloc(r->fields, (r->fcap = r->fcap ? 2 * r->fcap : 16) * sizeof(f));
        r->fields[r->nfields++] = f;
    }
    if (got < 0)
        return ERR_CORRUPT;
    r->decoded = true;
    return ERR_OK;
}

/* Walks one record whole as decode_fast does, its tags passed over, the
 * first field of pick->name noted; false if the walk does not take it. */
static bool find_field(struct slice rec, struct field_pick *pick)
{
    const char *p = rec.ptr, *end = p + rec.len;
    uint64_t n;
    struct slice k, v;
    if (!(p = rec_walk_varint(p, end, &n)))
        return false;
    for (; n; n--)
        if (!(p = rec_walk_bytes(p, end, &k)) || !(p = rec_walk_bytes(p, end, &v)))
            return false;
    return pick_fields(p, end, pick);
}

int cond_record_field(struct slice rec, struct slice name, struct rec_field *out)
{
    struct field_pick pick = {name, out, false, true};
    if (!rec.len || find_field(rec, &pick)) /* empty: no field, as a row's value */
        return pick.found;
    /* what the inline walk does not take, the record reader may (as
     * cond_row_field_get falls back to the decode) */
    struct rec_reader rr;
    struct rec_field f;
    int rc = rec_reader_init(&rr, rec);
    if (rc)
        return rc;
    while ((rc = rec_next_field(&rr, &f)) == 1)
        if (slice_eq(f.key, name)) {
            *out = f;
            return 1;
        }
    return rc;
}

bool cond_row_field_get(struct cond_row *r, struct slice name, struct rec_field *out)
{
    struct field_pick pick = {name, out, false, false};
    if (!r->decoded && (!r->id.len || find_field(r->id, &pick)) &&
        (!r->value.len || find_field(r->value, &pick)))
        return pick.found;
    const struct rec_field *f = cond_row_field(r, name); /* decoded, or damaged */
    if (f)
        *out = *f;
    return f != NULL;
}

const struct rec_field *cond_row_field(struct cond_row *r, struct slice name)
{
    if (cond_row_decode(r))
        return NULL;
    for (size_t i = 0; i < r->nfields; i++)
        if (slice_eq(r->fields[i].key, name))
            return &r->fields[i];
    return NULL;
}

const struct rec_tag *cond_row_tag(struct cond_row *r, struct slice name)
{
    if (cond_row_decode(r))
        return NULL;
    for (size_t i = 0; i < r->ntags; i++)
        if (slice_eq(r->tags[i].key, name))
            return &r->tags[i];
    return NULL;
}

/* --- evaluation --- */

/* What a leaf reads: the column's value in one of these forms. */
struct operand {
    enum { OP_MISSING, OP_TS, OP_STR, OP_FIELD } kind;
    int64_t ts;
    struct slice s;
    const struct rec_field *f;
};

static int operand_of(const struct sql_expr *e, struct cond_row *r, struct operand *o)
{
    memset(o, 0, sizeof(*o));
    switch (e->col.kind) {
    case SQL_COL_TS: o->kind = OP_TS, o->ts = r->ts; return ERR_OK;
    case SQL_COL_HOST: o->kind = OP_STR, o->s = r->host; return ERR_OK;
    case SQL_COL_EVENT: o->kind = OP_STR, o->s = r->event; return ERR_OK;
    case SQL_COL_ANY: return ERR_OK;
    default: break;
    }
    if (cond_row_decode(r))
        return ERR_CORRUPT;
    struct slice name = slice_make(e->col.name, strlen(e->col.name));
    if (e->col.kind == SQL_COL_TAG) {
        const struct rec_tag *t = cond_row_tag(r, name);
        if (t)
            o->kind = OP_STR, o->s = t->value;
        return ERR_OK;
    }
    const struct rec_field *f = cond_row_field(r, name);
    if (f && f->type == REC_STRING)
        o->kind = OP_STR, o->s = f->v.s;
    else if (f)
        o->kind = OP_FIELD, o->f = f;
    return ERR_OK;
}

static enum tv tv_of(bool b)
{
    return b ? TV_T : TV_F;
}

static bool op_holds(enum sql_op op, int c)
{
    switch (op) {
    case SQL_EQ: return c == 0;
    case SQL_NE: return c != 0;
    case SQL_LT: return c < 0;
    case SQL_LE: return c <= 0;
    case SQL_GT: return c > 0;
    case SQL_GE: return c >= 0;
    }
    return false;
}

static bool is_num(const struct rec_field *f)
{
    return f->type == REC_FLOAT || f->type == REC_INT || f->type == REC_UINT;
}

/* -1/0/1 comparing a numeric field with a number; 2 if unordered (NaN). */
static int num_cmp(const struct rec_field *f, const struct sql_value *v)
{
    if (v->type == SQL_V_INT) {
        if (f->type == REC_INT)
            return (f->v.i > v->i) - (f->v.i < v->i);
        if (f->type == REC_UINT) {
            if (v->i < 0)
                return 1;
            return (f->v.u > (uint64_t)v->i) - (f->v.u < (uint64_t)v->i);
        }
    }
    double a = f->type == REC_FLOAT ? f->v.f : f->type == REC_INT ? (double)f->v.i : (double)f->v.u;
    double b = v->type == SQL_V_INT ? (double)v->i : v->f;
    if (isnan(a) || isnan(b))
        return 2;
    return (a > b) - (a < b);
}

static enum tv eval_cmp(const struct sql_expr *e, const struct operand *o)
{
    const struct sql_value *v = &e->v;
    switch (o->kind) {
    case OP_TS: return tv_of(op_holds(e->op, (o->ts > v->i) - (o->ts < v->i)));
    case OP_STR:
        if (v->type != SQL_V_STRING)
            return TV_U;
        return tv_of(op_holds(e->op, slice_cmp(o->s, slice_make(v->s, v->slen))));
    case OP_FIELD:
        if (is_num(o->f) && (v->type == SQL_V_INT || v->type == SQL_V_FLOAT)) {
            int c = num_cmp(o->f, v);
            return c == 2 ? TV_U : tv_of(op_holds(e->op, c));
        }
        if (o->f->type == REC_BOOL && v->type == SQL_V_BOOL)
            return tv_of(op_holds(e->op, (int)o->f->v.b - (int)v->b));
        return TV_U;
    default: return TV_U;
    }
}

static bool in_ints(const struct sql_expr *e, int64_t x)
{
    return e->nints && bsearch(&x, e->ints, e->nints, sizeof(*e->ints), cmp_i64) != NULL;
}

static bool in_flts(const struct sql_expr *e, double x)
{
    return e->nflts && bsearch(&x, e->flts, e->nflts, sizeof(*e->flts), cmp_dbl) != NULL;
}

static bool in_strs(const struct sql_expr *e, struct slice s)
{
    return cond_sorted_has(e->strs, e->slens, e->nstrs, s);
}

static enum tv eval_in(const struct sql_expr *e, const struct operand *o)
{
    switch (o->kind) {
    case OP_TS: return tv_of(in_ints(e, o->ts));
    case OP_STR: return e->nstrs ? tv_of(in_strs(e, o->s)) : TV_U;
    case OP_FIELD: {
        const struct rec_field *f = o->f;
        if (!is_num(f) || (e->nints == 0 && e->nflts == 0))
            return TV_U;
        if (f->type == REC_INT)
            return tv_of(in_ints(e, f->v.i) || in_flts(e, (double)f->v.i));
        if (f->type == REC_UINT)
            return tv_of((f->v.u <= INT64_MAX && in_ints(e, (int64_t)f->v.u)) ||
                         in_flts(e, (double)f->v.u));
        double d = f->v.f;
        if (isnan(d))
            return TV_U;
        bool integral = d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d;
        return tv_of(in_flts(e, d) || (integral && in_ints(e, (int64_t)d)));
    }
    default: return TV_U;
    }
}

static bool regex_find(const struct sql_expr *e, struct slice s, int *rc)
{
    const struct regex *r = e->re;
    int n = pcre2_match(r->code, (PCRE2_SPTR)(s.len ? s.ptr : ""), s.len, 0, 0, r->md, r->mc);
    if (n >= 0)
        return true;
    if (n == PCRE2_ERROR_MATCHLIMIT || n == PCRE2_ERROR_DEPTHLIMIT || n == PCRE2_ERROR_HEAPLIMIT ||
        n == PCRE2_ERROR_JIT_STACKLIMIT)
        *rc = ERR_TOOBIG;
    return false;
}

static bool terms_in(const struct sql_expr *e, size_t t, struct slice s)
{
    return words_find(s, slice_make(e->terms[t], e->tlens[t]));
}

/* MATCH without a column: each term in some string of the row. */
static enum tv eval_match_any(const struct sql_expr *e, struct cond_row *r, int *rc)
{
    if (cond_row_decode(r)) {
        *rc = ERR_CORRUPT;
        return TV_F;
    }
    for (size_t t = 0; t < e->nterms; t++) {
        bool found = terms_in(e, t, r->host) || terms_in(e, t, r->event);
        for (size_t i = 0; !found && i < r->ntags; i++)
            found = terms_in(e, t, r->tags[i].value);
        for (size_t i = 0; !found && i < r->nfields; i++)
            found = r->fields[i].type == REC_STRING && terms_in(e, t, r->fields[i].v.s);
        if (!found)
            return TV_F;
    }
    return TV_T;
}

static enum tv eval_leaf(const struct sql_expr *e, struct cond_row *r, int *rc)
{
    if (e->leaf == SQL_L_MATCH && e->col.kind == SQL_COL_ANY)
        return eval_match_any(e, r, rc);
    struct operand o;
    if ((*rc = operand_of(e, r, &o)) != ERR_OK)
        return TV_F;
    if (e->leaf == SQL_L_NULL)
        return tv_of(o.kind == OP_MISSING);
    if (o.kind == OP_MISSING)
        return TV_U;
    switch (e->leaf) {
    case SQL_L_CMP: return eval_cmp(e, &o);
    case SQL_L_IN: return eval_in(e, &o);
    default: break;
    }
    if (o.kind != OP_STR)
        return TV_U;
    switch (e->leaf) {
    case SQL_L_LIKE: return tv_of(like_match(e->re, o.s, e->icase));
    case SQL_L_REGEX: return tv_of(regex_find(e, o.s, rc));
    case SQL_L_MATCH:
        for (size_t t = 0; t < e->nterms; t++)
            if (!terms_in(e, t, o.s))
                return TV_F;
        return TV_T;
    default: return TV_U;
    }
}

static enum tv eval(const struct sql_expr *e, struct cond_row *r, int *rc)
{
    switch (e->kind) {
    case SQL_E_LEAF: return eval_leaf(e, r, rc);
    case SQL_E_NOT: {
        enum tv v = eval(e->kids[0], r, rc);
        return v == TV_U ? TV_U : v == TV_T ? TV_F : TV_T;
    }
    case SQL_E_AND: {
        enum tv acc = TV_T;
        for (size_t i = 0; i < e->nkids && !*rc; i++) {
            enum tv v = eval(e->kids[i], r, rc);
            if (v == TV_F)
                return TV_F;
            if (v == TV_U)
                acc = TV_U;
        }
        return acc;
    }
    case SQL_E_OR: {
        enum tv acc = TV_F;
        for (size_t i = 0; i < e->nkids && !*rc; i++) {
            enum tv v = eval(e->kids[i], r, rc);
            if (v == TV_T)
                return TV_T;
            if (v == TV_U)
                acc = TV_U;
        }
        return acc;
    }
    }
    return TV_F;
}

bool cond_match(const struct sql_expr *e, struct cond_row *r, int *rc)
{
    *rc = ERR_OK;
    if (!e)
        return true;
    enum tv v = eval(e, r, rc);
    return *rc == ERR_OK && v == TV_T;
}
