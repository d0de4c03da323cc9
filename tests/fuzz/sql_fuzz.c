/* libFuzzer target for the SQL parser and what runs on what it parses: any
 * bytes as a script, a WHERE list, a time and a duration. The parser must
 * accept or refuse with a message naming a position, never crash, read out
 * of bounds or leak. The input is copied to an exact-size heap buffer
 * without a NUL, so ASan sees any read past its end.
 *
 * Every statement that parses is then planned (and EXPLAINed), its
 * condition explained, its required words taken, and evaluated over a few
 * fixed rows (LIKE, regular expressions with their match limit, MATCH,
 * three-valued logic); an aggregate SELECT also runs those rows through
 * GROUP BY, FILL, HAVING and ORDER BY with a small max_groups. None of
 * these may crash or leak whatever the statement. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/record.h"
#include "model/words.h"
#include "query/cond.h"
#include "query/plan.h"
#include "query/query_int.h"
#include "query/sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000000000000LL

/* The rows: a log entry (its content in the id, value empty) and points
 * (tags in the id, fields in the value), with strings of words, numbers of
 * every kind, a bool, and a row without fields. */
struct frow {
    int64_t ts;
    const char *host, *event;
    struct buf id, value;
};

#define NROWS 4
static struct frow rows[NROWS];
static int rows_ready;

static struct rec_field fstr(const char *k, const char *v)
{
    struct rec_field f = {slice_cstr(k), REC_STRING, {0}};
    f.v.s = slice_cstr(v);
    return f;
}

static void rows_init(void)
{
    struct rec_tag t1[] = {{slice_cstr("region"), slice_cstr("eu")},
                           {slice_cstr("level"), slice_cstr("warn")}};
    struct rec_field f1[] = {fstr("msg", "ERROR: connection reset by peer 50% a_b\\c"),
                             {slice_cstr("c"), REC_INT, {.i = -7}}};
    struct rec_tag t2[] = {{slice_cstr("region"), slice_cstr("us")}};
    struct rec_field f2[] = {{slice_cstr("v"), REC_FLOAT, {.f = 2.5}},
                             {slice_cstr("u"), REC_UINT, {.u = 18446744073709551615ULL}},
                             {slice_cstr("ok"), REC_BOOL, {.b = true}},
                             fstr("s", "caf\xc3\xa9 Timeout")};
    struct rec_field f3[] = {{slice_cstr("v"), REC_FLOAT, {.f = -0.0}},
                             {slice_cstr("c"), REC_INT, {.i = 9}}};
    static const int64_t ts[NROWS] = {NOW - 5000000000LL, NOW - 3600000000000LL, NOW, -1};
    static const char *hosts[NROWS] = {"web-1", "db-1", "", "web-1"};
    static const char *events[NROWS] = {"app", "cpu.load", "e", "app"};
    for (size_t i = 0; i < NROWS; i++) {
        rows[i].ts = ts[i];
        rows[i].host = hosts[i];
        rows[i].event = events[i];
        buf_init(&rows[i].id);
        buf_init(&rows[i].value);
    }
    rec_encode(&rows[0].id, t1, 2, f1, 2);
    rec_encode(&rows[1].id, t2, 1, NULL, 0);
    rec_encode(&rows[1].value, NULL, 0, f2, 4);
    rec_encode(&rows[2].value, NULL, 0, f3, 2);
    rows_ready = 1;
}

static void cond_row_of(struct cond_row *r, const struct frow *f)
{
    cond_row_set(r, f->ts, slice_cstr(f->host), slice_cstr(f->event),
                 slice_make(f->id.data ? f->id.data : "", f->id.len),
                 slice_make(f->value.data ? f->value.data : "", f->value.len));
}

/* Groups the rows as an aggregate SELECT would, and reads the output. */
static void run_group(const struct sql_select *sel, const struct plan *p, struct cond_row *cr)
{
    struct grouper *g;
    struct buf err = BUF_INIT, out = BUF_INIT;
    if (group_new(sel, p, 8, true, &g, &err) == ERR_OK) {
        int rc = ERR_OK;
        for (size_t i = 0; i < NROWS && rc == ERR_OK; i++) {
            int mrc;
            cond_row_of(cr, &rows[i]);
            if (cond_match(sel->where.cond, cr, &mrc))
                rc = group_add(g, cr, &err);
            while (rc == ERR_OK && group_next(g, &out) == 1)
                ;
        }
        if (rc == ERR_OK && group_finish(g, &err) == ERR_OK)
            while (group_next(g, &out) == 1)
                ;
        group_free(g);
    }
    buf_destroy(&err);
    buf_destroy(&out);
}

/* The bytes a matching row must hold (cond_required_text), each checked in
 * the row as the executor checks it (words_contains_folded over its
 * strings' bytes): a row the condition matches must hold every one, or the
 * executor would pass over a match. */
struct need_check {
    const struct frow *row;
    bool missing;
};

static void check_need(void *arg, struct slice text)
{
    struct need_check *c = arg;
    char folded[256];
    if (text.len > sizeof folded)
        return;
    for (size_t i = 0; i < text.len; i++) {
        unsigned char ch = (unsigned char)text.ptr[i];
        folded[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    struct slice w = slice_make(folded, text.len);
    const struct frow *f = c->row;
    if (!words_contains_folded(slice_cstr(f->host), w) &&
        !words_contains_folded(slice_cstr(f->event), w) &&
        !words_contains_folded(slice_make(f->id.data ? f->id.data : "", f->id.len), w) &&
        !words_contains_folded(slice_make(f->value.data ? f->value.data : "", f->value.len), w))
        c->missing = true;
}

static void run_stmt(const struct sql_stmt *st)
{
    const struct sql_select *sel = &st->sel;
    if (st->kind != SQL_SELECT && st->kind != SQL_DELETE)
        return;
    struct buf out = BUF_INIT;
    cond_explain(sel->where.cond, &out);
    struct word_hashes *words = NULL;
    size_t nw = 0, cap = 0;
    cond_required_words(sel->where.cond, &words, &nw, &cap);
    free(words);
    (void)cond_only_key_range(sel->where.cond);
    struct cond_row cr;
    cond_row_init(&cr);
    for (size_t i = 0; i < NROWS; i++) {
        int rc;
        cond_row_of(&cr, &rows[i]);
        if (cond_match(sel->where.cond, &cr, &rc)) {
            struct need_check c = {&rows[i], false};
            cond_required_text(sel->where.cond, check_need, &c);
            if (c.missing)
                abort();
        }
    }
    struct db_opts dbo = {4, st->pos % 2 == 0, 3600000000000LL};
    struct plan_opts po = {50, true, true, NOW};
    struct plan p;
    struct buf err = BUF_INIT;
    if (plan_build(sel, &dbo, &po, &p, &err) == ERR_OK) {
        plan_explain(&p, sel, &out);
        if (st->kind == SQL_SELECT && sel->agg)
            run_group(sel, &p, &cr);
        plan_destroy(&p);
    }
    cond_row_destroy(&cr);
    buf_destroy(&err);
    buf_destroy(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!rows_ready)
        rows_init();
    char *text = malloc(size ? size : 1);
    if (size)
        memcpy(text, data, size);
    struct buf err = BUF_INIT;

    struct sql_script script;
    int rc = sql_parse(text, size, NOW, &script, &err);
    if (rc == ERR_OK) {
        for (size_t i = 0; i < script.n; i++)
            run_stmt(&script.stmts[i]);
        sql_script_destroy(&script);
    } else if (err.len == 0 || !strstr(buf_cstr(&err), "position")) {
        abort(); /* a refusal must say where */
    }

    buf_reset(&err);
    struct sql_where where;
    sql_where_init(&where);
    if (sql_parse_where(text, size, NOW, &where, &err) == ERR_OK)
        sql_where_destroy(&where);

    buf_reset(&err);
    sql_where_init(&where); /* search= of /api/v1/query */
    (void)sql_where_match(&where, text, size, &err);
    sql_where_destroy(&where);

    int64_t v;
    (void)sql_parse_time(text, size, NOW, &v);
    (void)sql_parse_duration(text, size, &v);

    buf_destroy(&err);
    free(text);
    return 0;
}
