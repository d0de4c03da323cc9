/* A hand-sized InfluxQL reader for the two statements write clients send.
 * Identifiers are bare ([A-Za-z_][A-Za-z0-9_]*) or double-quoted with \"
 * and \\ escapes, as InfluxQL has them; keywords are case-insensitive. */
#include "query/influxql.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "config/config.h"
#include "query/encode.h"
#include "store/store.h"

struct lex {
    const char *p, *end;
    struct buf *err;
};

static void skip_space(struct lex *x)
{
    while (x->p < x->end && isspace((unsigned char)*x->p))
        x->p++;
}

static bool at_end(struct lex *x)
{
    skip_space(x);
    return x->p == x->end || *x->p == ';';
}

/* Length of the bare word (letters, digits, '_') at x->p, after spaces;
 * x->p is left at its start. */
static size_t word_len(struct lex *x)
{
    skip_space(x);
    const char *q = x->p;
    while (q < x->end && (isalnum((unsigned char)*q) || *q == '_'))
        q++;
    return (size_t)(q - x->p);
}

static bool accept_kw(struct lex *x, const char *kw)
{
    size_t n = word_len(x);
    if (n != strlen(kw) || strncasecmp(x->p, kw, n) != 0)
        return false;
    x->p += n;
    return true;
}

static int fail(struct lex *x, const char *what)
{
    skip_space(x);
    size_t left = (size_t)(x->end - x->p);
    buf_printf(x->err, "error parsing query: %s at \"%.*s\"", what, left > 32 ? 32 : (int)left,
               x->p);
    if (left == 0)
        buf_puts(x->err, " (end of query)");
    return ERR_INVAL;
}

/* An identifier into out (IQL_MAX_NAME + 1 bytes). */
static int ident(struct lex *x, char *out)
{
    skip_space(x);
    size_t n = 0;
    if (x->p < x->end && *x->p == '"') {
        const char *q = x->p + 1;
        for (; q < x->end && *q != '"'; q++) {
            if (*q == '\\' && q + 1 < x->end && (q[1] == '"' || q[1] == '\\'))
                q++;
            if (n == IQL_MAX_NAME)
                return fail(x, "identifier too long");
            out[n++] = *q;
        }
        if (q == x->end)
            return fail(x, "unterminated quoted identifier");
        x->p = q + 1;
    } else {
        size_t len = word_len(x);
        if (len == 0 || isdigit((unsigned char)*x->p))
            return fail(x, "expected an identifier");
        if (len > IQL_MAX_NAME)
            return fail(x, "identifier too long");
        memcpy(out, x->p, len);
        n = len;
        x->p += len;
    }
    if (n == 0)
        return fail(x, "empty identifier");
    out[n] = '\0';
    return ERR_OK;
}

/* A duration literal ("30d", "1h30m") or INF (ttl 0). */
static int duration(struct lex *x, int64_t *ns)
{
    if (accept_kw(x, "INF")) {
        *ns = 0;
        return ERR_OK;
    }
    char tmp[32];
    size_t n = word_len(x);
    if (n == 0 || n >= sizeof tmp)
        return fail(x, "expected a duration");
    memcpy(tmp, x->p, n);
    tmp[n] = '\0';
    if (cfg_parse_duration(tmp, ns) != ERR_OK)
        return fail(x, "bad duration (units ns, us, ms, s, m, h, d, w)");
    x->p += n;
    return ERR_OK;
}

/* WITH [DURATION d] [REPLICATION n] [SHARD DURATION d] [NAME ident]: only
 * the duration matters here (it becomes the database's TTL). */
static int with_clause(struct lex *x, struct iql_stmt *st)
{
    bool any = false;
    for (;;) {
        int64_t ns;
        char name[IQL_MAX_NAME + 1];
        if (accept_kw(x, "DURATION")) {
            if (duration(x, &ns))
                return ERR_INVAL;
            st->has_ttl = true;
            st->ttl_ns = ns;
        } else if (accept_kw(x, "REPLICATION")) {
            size_t n = word_len(x), digits = 0;
            while (digits < n && isdigit((unsigned char)x->p[digits]))
                digits++;
            if (n == 0 || digits < n)
                return fail(x, "expected a replication factor");
            x->p += n;
        } else if (accept_kw(x, "SHARD")) {
            if (!accept_kw(x, "DURATION"))
                return fail(x, "expected DURATION after SHARD");
            if (duration(x, &ns))
                return ERR_INVAL;
        } else if (accept_kw(x, "NAME")) {
            if (ident(x, name))
                return ERR_INVAL;
        } else {
            return any ? ERR_OK : fail(x, "expected DURATION, REPLICATION, SHARD or NAME");
        }
        any = true;
    }
}

static int statement(struct lex *x, struct iql_stmt *st)
{
    memset(st, 0, sizeof *st);
    if (accept_kw(x, "CREATE")) {
        if (!accept_kw(x, "DATABASE"))
            return fail(x, "only CREATE DATABASE is supported");
        st->kind = IQL_CREATE_DB;
        if (ident(x, st->db))
            return ERR_INVAL;
        if (accept_kw(x, "WITH") && with_clause(x, st))
            return ERR_INVAL;
    } else if (accept_kw(x, "SHOW")) {
        if (!accept_kw(x, "DATABASES"))
            return fail(x, "only SHOW DATABASES is supported");
        st->kind = IQL_SHOW_DBS;
    } else {
        return fail(x, "only CREATE DATABASE and SHOW DATABASES are understood here; "
                       "query data with /api/v1/query or /api/v1/sql");
    }
    if (!at_end(x))
        return fail(x, "unexpected text after the statement");
    return ERR_OK;
}

int iql_parse(const char *q, size_t len, struct iql_script *out, struct buf *err)
{
    struct lex x = {q, q + len, err};
    out->n = 0;
    for (;;) {
        if (at_end(&x)) {
            if (x.p == x.end)
                break;
            x.p++; /* ';' */
            continue;
        }
        if (out->n == IQL_MAX_STMTS)
            return fail(&x, "too many statements");
        if (statement(&x, &out->stmts[out->n]))
            return ERR_INVAL;
        out->n++;
    }
    if (out->n == 0) {
        buf_puts(err, "missing query: send q=CREATE DATABASE \"name\" or q=SHOW DATABASES");
        return ERR_INVAL;
    }
    return ERR_OK;
}

/* --- execution --- */

static void exec_create(struct store *s, const struct iql_stmt *st, const struct query_opts *o,
                        struct buf *out)
{
    struct db_opts d = o->db_defaults;
    if (st->has_ttl)
        d.ttl_ns = st->ttl_ns;
    int rc = store_db_create(s, st->db, &d);
    if (rc == ERR_OK || rc == ERR_EXISTS)
        return;
    buf_puts(out, ",\"error\":\"");
    if (rc == ERR_INVAL)
        buf_puts(out, "bad database name (" STORE_DB_NAME_RULE ")");
    else
        buf_printf(out, "cannot create database: %s", err_name(rc));
    buf_putc(out, '"');
}

static void exec_show(struct store *s, const struct query_opts *o, struct buf *out)
{
    char **names;
    size_t n;
    if (store_db_list(s, &names, &n) != ERR_OK) {
        buf_puts(out, ",\"error\":\"cannot list databases\"");
        return;
    }
    buf_puts(out, ",\"series\":[{\"name\":\"databases\",\"columns\":[\"name\"]");
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (query_db_visible(o, names[i])) {
            /* InfluxDB leaves "values" out when there are none */
            buf_puts(out, shown++ ? ",[" : ",\"values\":[[");
            enc_json_str(out, names[i], strlen(names[i]));
            buf_putc(out, ']');
        }
        free(names[i]);
    }
    if (shown)
        buf_putc(out, ']');
    free(names);
    buf_puts(out, "}]");
}

void iql_exec(struct store *s, const struct iql_script *sc, const struct query_opts *o,
              struct buf *out)
{
    buf_puts(out, "{\"results\":[");
    for (size_t i = 0; i < sc->n; i++) {
        buf_printf(out, "%s{\"statement_id\":%zu", i ? "," : "", i);
        if (sc->stmts[i].kind == IQL_CREATE_DB)
            exec_create(s, &sc->stmts[i], o, out);
        else
            exec_show(s, o, out);
        buf_putc(out, '}');
    }
    buf_puts(out, "]}\n");
}
