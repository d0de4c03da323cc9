/* Elasticsearch bulk bodies: a small state machine over the lines (action,
 * then document), jansson for the action lines, jsonl_parse_es for the
 * documents, and the reply items rendered as each item's fate is known, so
 * that nothing of an item but its rendered JSON is kept. */
#include "ingest/esbulk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "ingest/jscan.h"

enum esbulk_state { WANT_ACTION, WANT_DOC, SKIP_DOC, FAILED };
enum esbulk_op { OP_INDEX, OP_CREATE, OP_DELETE, OP_UPDATE };
static const char *op_names[] = {"index", "create", "delete", "update"};

struct esbulk_parser {
    struct event_limits lim;
    struct jsonl_es_map map;
    char *url_index;
    int64_t arrival_ns;
    struct jsonl_parser *doc;
    struct event_feed feed;
    enum esbulk_state state;
    bool is_parsed; /* bulk_line saw the current line (not so for one too long) */

    /* the current item */
    enum esbulk_op op;
    struct buf index, id;
    struct buf scan;       /* jscan's scratch */
    const char *item_type; /* error type of an action-level refusal, or NULL */

    struct buf items; /* rendered items, comma-separated */
    uint64_t nitems;
    uint64_t nrendered; /* items the filter kept */
    unsigned filter;    /* ESBULK_* parts of the reply */
    bool has_errors;
    char fatal[240];
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A 20-character id, as Elasticsearch generates them: from the request's
 * arrival time and the item's number, so unique within a request and very
 * likely across requests. Ids name nothing here (events are identified by
 * their content): the clients only echo them. */
static void gen_id(struct esbulk_parser *p, struct buf *out)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint64_t a = mix64((uint64_t)p->arrival_ns);
    uint64_t b = mix64(a ^ p->nitems);
    for (int i = 0; i < 10; i++) {
        buf_putc(out, b64[(a >> (6 * i)) & 63]);
        buf_putc(out, b64[(b >> (6 * i)) & 63]);
    }
}

static void fail(struct esbulk_parser *p, const char *what, const char *detail)
{
    snprintf(p->fatal, sizeof p->fatal, "Malformed action/metadata line [%llu]: %s%s",
             (unsigned long long)p->feed.lines.line_no, what, detail ? detail : "");
    p->state = FAILED;
}

static bool op_parse(struct slice k, enum esbulk_op *op)
{
    static const size_t lens[] = {5, 6, 6, 6}; /* of op_names */
    for (int i = 0; i < 4; i++)
        if (k.len == lens[i] && memcmp(k.ptr, op_names[i], k.len) == 0) {
            *op = (enum esbulk_op)i;
            return true;
        }
    return false;
}

/* The members of the action's object: _index and _id; others skipped. */
static bool read_meta(struct esbulk_parser *p, struct jscan *s)
{
    buf_reset(&p->index);
    buf_reset(&p->id);
    bool has_index = false;
    s->p++; /* '{' */
    if (jscan_peek(s) == '}') {
        s->p++;
    } else {
        for (;;) {
            struct slice k, v;
            enum jscan_type t;
            if (!jscan_string(s, &k) || !jscan_expect(s, ':') || !jscan_type(s, &t))
                return false;
            bool is_index = slice_eq(k, slice_cstr("_index"));
            bool is_id = slice_eq(k, slice_cstr("_id"));
            if (t == JS_STRING && (is_index || is_id)) {
                if (!jscan_string(s, &v))
                    return false;
                buf_append(is_index ? &p->index : &p->id, v.ptr, v.len);
                has_index |= is_index;
            } else if (!jscan_skip(s, 2)) {
                return false;
            }
            char c = jscan_peek(s);
            if (c == '}') {
                s->p++;
                break;
            }
            if (c != ',' || s->p == s->end)
                return jscan_fail(s, "',' or '}' expected");
            s->p++;
        }
    }
    if (!has_index && p->url_index)
        buf_puts(&p->index, p->url_index);
    if (!p->id.len && (p->filter & ESBULK_ITEM_ID))
        gen_id(p, &p->id); /* only when the reply shows it */
    return true;
}

/* Reads the action line into the current item; false (and fatal set) if
 * it is not one. */
static bool read_action(struct esbulk_parser *p, const char *line, size_t len)
{
    struct jscan s;
    struct slice k;
    jscan_init(&s, line, len, &p->scan);
    if (jscan_peek(&s) != '{') {
        fail(p, "expected one object naming an action (index, create, delete or update)", NULL);
        return false;
    }
    s.p++;
    if (!jscan_string(&s, &k) || !jscan_expect(&s, ':')) {
        fail(p, "invalid JSON: ", s.err);
        return false;
    }
    if (!op_parse(k, &p->op) || jscan_peek(&s) != '{') {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(k.len < 60 ? k.len : 60), k.ptr);
        fail(p, "expected [create], [delete], [index] or [update] with an object, found ", name);
        return false;
    }
    if (!read_meta(p, &s) || (jscan_peek(&s) != '}' && jscan_peek(&s) != ',')) {
        fail(p, "invalid JSON: ", s.err ? s.err : "'}' expected");
        return false;
    }
    if (*s.p == ',') {
        fail(p, "expected one object naming an action (index, create, delete or update)", NULL);
        return false;
    }
    s.p++;
    if (!jscan_at_end(&s)) {
        fail(p, "invalid JSON: text after the action", NULL);
        return false;
    }
    return true;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

static enum event_kind action_line(struct esbulk_parser *p, const char *line, size_t len,
                                   const char **reason)
{
    if (blank(line, len) || !read_action(p, line, len))
        return EVENT_NONE;
    p->item_type = NULL;
    switch (p->op) {
    case OP_INDEX:
    case OP_CREATE: p->state = WANT_DOC; return EVENT_NONE;
    case OP_UPDATE: p->state = SKIP_DOC; break;
    case OP_DELETE: break;
    }
    p->item_type = "illegal_argument_exception";
    *reason = p->op == OP_DELETE
                  ? "delete is not supported: logbucket keeps every event (use DELETE FROM in SQL)"
                  : "update is not supported: logbucket keeps every event as it was sent";
    return EVENT_BAD;
}

static enum event_kind bulk_line(void *arg, const char *line, size_t len, struct event *ev,
                                 const char **reason)
{
    struct esbulk_parser *p = arg;
    p->is_parsed = true;
    switch (p->state) {
    case WANT_ACTION: return action_line(p, line, len, reason);
    case WANT_DOC:
        p->state = WANT_ACTION;
        return jsonl_parse_es(p->doc, line, len, p->index.len ? buf_cstr(&p->index) : NULL, ev,
                              reason);
    case SKIP_DOC: p->state = WANT_ACTION; return EVENT_NONE;
    case FAILED: return EVENT_NONE;
    }
    return EVENT_NONE;
}

struct esbulk_parser *esbulk_new(const struct event_limits *lim, const struct jsonl_es_map *map,
                                 const char *index, struct event_stamp *stamp, int64_t arrival_ns)
{
    struct esbulk_parser *p = xcalloc(1, sizeof *p);
    p->lim = *lim;
    p->map = *map;
    p->url_index = index && *index ? xstrdup(index) : NULL;
    p->arrival_ns = arrival_ns;
    p->filter = ESBULK_ALL;
    p->doc = jsonl_new(lim, stamp, NULL, NULL);
    jsonl_set_es_map(p->doc, &p->map);
    event_feed_init(&p->feed, lim->max_line_bytes, bulk_line, p);
    buf_init(&p->index);
    buf_init(&p->id);
    buf_init(&p->scan);
    buf_init(&p->items);
    return p;
}

void esbulk_free(struct esbulk_parser *p)
{
    if (!p)
        return;
    free(p->url_index);
    jsonl_free(p->doc);
    event_feed_destroy(&p->feed);
    buf_destroy(&p->index);
    buf_destroy(&p->id);
    buf_destroy(&p->scan);
    buf_destroy(&p->items);
    free(p);
}

struct event_feed *esbulk_event_feed(struct esbulk_parser *p)
{
    return &p->feed;
}

unsigned esbulk_filter_parse(const char *filter_path)
{
    static const struct {
        const char *path;
        unsigned bits;
    } paths[] = {
        {"took", ESBULK_TOOK},
        {"errors", ESBULK_ERRORS},
        {"items", ESBULK_ITEMS},
        {"items.*", ESBULK_ITEMS},
        {"items.*.*", ESBULK_ITEMS},
        {"items.*.status", ESBULK_ITEM_STATUS},
        {"items.*.error", ESBULK_ITEM_ERROR},
        {"items.*.error.*", ESBULK_ITEM_ERROR},
        {"items.*._id", ESBULK_ITEM_ID},
        {"items.*._index", ESBULK_ITEM_INDEX},
    };
    if (!filter_path || !*filter_path)
        return ESBULK_ALL;
    unsigned bits = ESBULK_FILTERED;
    const char *q = filter_path;
    while (*q) {
        const char *comma = strchr(q, ',');
        size_t n = comma ? (size_t)(comma - q) : strlen(q);
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
            if (strlen(paths[i].path) == n && strncmp(paths[i].path, q, n) == 0)
                bits |= paths[i].bits;
        if (!comma)
            break;
        q = comma + 1;
    }
    if (bits & ESBULK_ITEMS)
        bits |= ESBULK_ITEM_STATUS | ESBULK_ITEM_ERROR | ESBULK_ITEM_ID | ESBULK_ITEM_INDEX;
    return bits;
}

void esbulk_set_filter(struct esbulk_parser *p, unsigned bits)
{
    p->filter = bits;
}

/* Appends one member ("key":value) of an item, with the comma it needs. */
static void member(struct buf *o, bool *first, const char *key)
{
    if (!*first)
        buf_putc(o, ',');
    buf_putc(o, '"');
    buf_puts(o, key);
    buf_puts(o, "\":");
    *first = false;
}

/* A stored document's item when the filter keeps its status alone (as
 * Filebeat and Logstash ask: errors,items.*.error,items.*.status): the
 * same bytes for every document of an op, written whole. */
static bool render_stored_status(const struct esbulk_parser *p, struct buf *o)
{
    static const char *const items[] = {"{\"index\":{\"status\":201}}",
                                        "{\"create\":{\"status\":201}}"};
    if (p->op != OP_INDEX && p->op != OP_CREATE)
        return false;
    buf_puts(o, items[p->op]);
    return true;
}

/* The item as Elasticsearch writes it, less what the filter drops; false
 * (nothing written) when nothing of it is kept. */
static bool render_item(struct esbulk_parser *p, const char *reason, struct buf *o)
{
    unsigned f = p->filter;
    bool is_full = (f & ESBULK_ITEMS) != 0;
    if (!reason &&
        (f & (ESBULK_ITEMS | ESBULK_ITEM_INDEX | ESBULK_ITEM_ID | ESBULK_ITEM_STATUS)) ==
            ESBULK_ITEM_STATUS &&
        render_stored_status(p, o))
        return true;
    bool first = true;
    size_t start = o->len;
    buf_puts(o, "{\"");
    buf_puts(o, op_names[p->op]);
    buf_puts(o, "\":{");
    if (f & ESBULK_ITEM_INDEX) {
        member(o, &first, "_index");
        json_str(o, buf_cstr(&p->index), p->index.len); /* data may be NULL */
    }
    if (f & ESBULK_ITEM_ID) {
        member(o, &first, "_id");
        json_str(o, buf_cstr(&p->id), p->id.len);
    }
    if (!reason && is_full) {
        buf_printf(o,
                   "%s\"_version\":1,\"result\":\"created\",\"_shards\":{\"total\":1,"
                   "\"successful\":1,\"failed\":0},\"_seq_no\":%llu,\"_primary_term\":1",
                   first ? "" : ",", (unsigned long long)p->nitems);
        first = false;
    }
    if (f & ESBULK_ITEM_STATUS) {
        member(o, &first, "status");
        buf_puts(o, reason ? "400" : "201");
    }
    if (reason && (f & ESBULK_ITEM_ERROR)) {
        member(o, &first, "error");
        buf_puts(o, "{\"type\":\"");
        buf_puts(o, p->item_type ? p->item_type : "document_parsing_exception");
        buf_puts(o, "\",\"reason\":");
        json_str(o, reason, strlen(reason));
        buf_putc(o, '}');
    }
    if (first) {
        o->len = start;
        return false;
    }
    buf_puts(o, "}}");
    return true;
}

/* A line too long for max_line_bytes never reaches bulk_line: as a
 * document it fails its item; as an action it fails the request. */
static bool too_long_line(struct esbulk_parser *p, const char *reason)
{
    if (p->state == WANT_DOC) {
        p->state = WANT_ACTION;
        return false;
    }
    if (p->state == SKIP_DOC) {
        p->state = WANT_ACTION;
        return true;
    }
    if (p->state == WANT_ACTION)
        fail(p, "", reason);
    return true;
}

void esbulk_item_done(struct esbulk_parser *p, const char *reason)
{
    bool is_parsed = p->is_parsed;
    p->is_parsed = false;
    if (p->state == FAILED || (!is_parsed && too_long_line(p, reason)))
        return;
    struct buf *o = &p->items;
    size_t mark = o->len;
    if (p->nrendered)
        buf_putc(o, ',');
    if (render_item(p, reason, o))
        p->nrendered++;
    else
        o->len = mark;
    if (reason)
        p->has_errors = true;
    p->nitems++;
}

void esbulk_end(struct esbulk_parser *p, bool is_newline_end)
{
    if (p->state == FAILED)
        return;
    if (p->state == WANT_DOC || p->state == SKIP_DOC) {
        snprintf(p->fatal, sizeof p->fatal,
                 "the body ends after the action on line %llu: its document is missing",
                 (unsigned long long)p->feed.lines.line_no);
        p->state = FAILED;
    } else if (!is_newline_end) {
        snprintf(p->fatal, sizeof p->fatal,
                 "The bulk request must be terminated by a newline [\\n]");
        p->state = FAILED;
    }
}

const char *esbulk_fatal(const struct esbulk_parser *p)
{
    return p->state == FAILED ? p->fatal : NULL;
}

void esbulk_reply(const struct esbulk_parser *p, int64_t took_ms, struct buf *out)
{
    const char *sep = "{";
    if (p->filter & ESBULK_TOOK) {
        buf_printf(out, "%s\"took\":%lld", sep, (long long)took_ms);
        sep = ",";
    }
    if (p->filter & ESBULK_ERRORS) {
        buf_printf(out, "%s\"errors\":%s", sep, p->has_errors ? "true" : "false");
        sep = ",";
    }
    if (p->nrendered || (p->filter & ESBULK_ITEMS)) {
        buf_printf(out, "%s\"items\":[", sep);
        buf_append(out, p->items.data, p->items.len);
        buf_putc(out, ']');
        sep = ",";
    }
    buf_puts(out, *sep == '{' ? "{}\n" : "}\n");
}

uint64_t esbulk_items(const struct esbulk_parser *p)
{
    return p->nitems;
}
