/* Elasticsearch bulk bodies: a small state machine over the lines (action,
 * then document), jansson for the action lines, jsonl_parse_es for the
 * documents, and the reply items rendered as each item's fate is known, so
 * that nothing of an item but its rendered JSON is kept. */
#include "ingest/esbulk.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

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

    /* the current item */
    enum esbulk_op op;
    struct buf index, id;
    const char *item_type; /* error type of an action-level refusal, or NULL */

    struct buf items; /* rendered items, comma-separated */
    uint64_t nitems;
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

/* A 20-character id, as Elasticsearch generates them, unique per item of
 * the request and very likely across requests. */
static void gen_id(struct esbulk_parser *p, struct buf *out)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint64_t a = mix64((uint64_t)p->arrival_ns ^ (uint64_t)(uintptr_t)p);
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

static bool op_parse(const char *k, enum esbulk_op *op)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(k, op_names[i]) == 0) {
            *op = (enum esbulk_op)i;
            return true;
        }
    return false;
}

/* Reads the action line into the current item; false (and fatal set) if
 * it is not one. */
static bool read_action(struct esbulk_parser *p, const char *line, size_t len)
{
    json_error_t jerr;
    json_t *root = json_loadb(line, len, 0, &jerr);
    if (!root) {
        fail(p, "invalid JSON: ", jerr.text);
        return false;
    }
    if (!json_is_object(root) || json_object_size(root) != 1) {
        fail(p, "expected one object naming an action (index, create, delete or update)", NULL);
        json_decref(root);
        return false;
    }
    const char *k = json_object_iter_key(json_object_iter(root));
    json_t *meta = json_object_get(root, k);
    bool ok = op_parse(k, &p->op) && json_is_object(meta);
    if (!ok)
        fail(p, "expected [create], [delete], [index] or [update] with an object, found ", k);
    if (ok) {
        json_t *ix = json_object_get(meta, "_index");
        json_t *id = json_object_get(meta, "_id");
        buf_reset(&p->index);
        buf_reset(&p->id);
        if (json_is_string(ix))
            buf_append(&p->index, json_string_value(ix), json_string_length(ix));
        else if (p->url_index)
            buf_puts(&p->index, p->url_index);
        if (json_is_string(id) && json_string_length(id))
            buf_append(&p->id, json_string_value(id), json_string_length(id));
        else
            gen_id(p, &p->id);
    }
    json_decref(root);
    return ok;
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
    switch (p->state) {
    case WANT_ACTION: return action_line(p, line, len, reason);
    case WANT_DOC:
        p->state = WANT_ACTION;
        return jsonl_parse_es(p->doc, line, len, p->index.len ? buf_cstr(&p->index) : NULL, &p->map,
                              ev, reason);
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
    p->doc = jsonl_new(lim, stamp, NULL, NULL);
    event_feed_init(&p->feed, lim->max_line_bytes, bulk_line, p);
    buf_init(&p->index);
    buf_init(&p->id);
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
    buf_destroy(&p->items);
    free(p);
}

struct event_feed *esbulk_event_feed(struct esbulk_parser *p)
{
    return &p->feed;
}

void esbulk_item_done(struct esbulk_parser *p, const char *reason)
{
    struct buf *o = &p->items;
    if (p->nitems)
        buf_putc(o, ',');
    buf_printf(o, "{\"%s\":{\"_index\":", op_names[p->op]);
    json_str(o, p->index.data, p->index.len);
    buf_puts(o, ",\"_id\":");
    json_str(o, p->id.data, p->id.len);
    if (reason) {
        buf_puts(o, ",\"status\":400,\"error\":{\"type\":\"");
        buf_puts(o, p->item_type ? p->item_type : "document_parsing_exception");
        buf_puts(o, "\",\"reason\":");
        json_str(o, reason, strlen(reason));
        buf_puts(o, "}}}");
        p->has_errors = true;
    } else {
        buf_printf(o,
                   ",\"_version\":1,\"result\":\"created\",\"_shards\":{\"total\":1,"
                   "\"successful\":1,\"failed\":0},\"_seq_no\":%llu,\"_primary_term\":1,"
                   "\"status\":201}}",
                   (unsigned long long)p->nitems);
    }
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
    buf_printf(out, "{\"took\":%lld,\"errors\":%s,\"items\":[", (long long)took_ms,
               p->has_errors ? "true" : "false");
    buf_append(out, p->items.data, p->items.len);
    buf_puts(out, "]}\n");
}

uint64_t esbulk_items(const struct esbulk_parser *p)
{
    return p->nitems;
}
