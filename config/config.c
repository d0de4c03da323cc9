/* The option table and the generic per-type code around it, after Redis's
 * src/config.c: one row per option (name, type, field, default text,
 * range, flags, help). cfg_init, cfg_set, cfg_validate and cfg_print all
 * walk the table, so a new option is one new row. Defaults are parsed by
 * the same code as user input, so a bad default fails the first test. */
#include "config/config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "base/log.h"
#include "config/config_int.h"

enum opt_type {
    OPT_STRING,
    OPT_BOOL,
    OPT_INT,
    OPT_SIZE,
    OPT_DURATION,
    OPT_ENUM,
    OPT_LISTEN,
    OPT_TOKEN
};

/* Row flags. */
enum {
    CFG_SECRET = 1,   /* value holds a secret: masked in messages and cfg_print */
    CFG_REPEAT = 2,   /* may appear many times; each line adds one item */
    CFG_NONEMPTY = 4, /* a string that must not be empty */
    CFG_TAGKEY = 8,   /* a string usable as a line-protocol tag key */
    CFG_AUTO = 16,    /* a size that may be "auto" (CFG_SIZE_AUTO): the daemon sizes it */
};

struct enum_name {
    const char *name;
    int value;
};

struct option {
    const char *name;
    enum opt_type type;
    size_t offset; /* of the field in struct config */
    size_t size;   /* of the field, for enums stored in bool or int */
    const char *def;
    int64_t min, max; /* OPT_INT, OPT_SIZE, OPT_DURATION; OPT_STRING: max length */
    unsigned flags;
    const struct enum_name *names; /* OPT_ENUM: NULL-terminated */
    const char *help;
};

static const struct enum_name wal_sync_names[] = {{"always", CFG_WAL_ALWAYS},
                                                  {"interval", CFG_WAL_INTERVAL},
                                                  {"none", CFG_WAL_NONE},
                                                  {NULL, 0}};
static const struct enum_name ts_order_names[] = {{"desc", 1}, {"asc", 0}, {NULL, 0}};
static const struct enum_name cold_compression_names[] = {{"zstd", 1}, {"lz4hc", 0}, {NULL, 0}};
static const struct enum_name syslog_host_names[] = {{"hostname", 0}, {"peer", 1}, {NULL, 0}};
static const struct enum_name log_level_names[] = {{"debug", LOG_DEBUG},
                                                   {"info", LOG_INFO},
                                                   {"warn", LOG_WARN},
                                                   {"error", LOG_ERROR},
                                                   {NULL, 0}};

/* inih reads lines of at most 197 bytes; with these limits every printed
 * line ("default_host = \"...\"", "token = ...") fits, so print -> load
 * round-trips whatever cfg_set accepted. */
#define MAX_STRING 160
#define MAX_TOKEN 180

#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define MS 1000000LL
#define SEC (1000LL * MS)
#define DAY (86400LL * SEC)
#define KIB 1024LL
#define MIB (1024LL * KIB)
#define GIB (1024LL * MIB)
#define TIB (1024LL * GIB)

static const struct option options[] = {
    {"listen", OPT_LISTEN, FIELD(listen), "127.0.0.1:8086", 0, 0, 0, NULL,
     "Address and port of the HTTP server: IPV4:PORT, HOST:PORT or [IPV6]:PORT. Beyond "
     "loopback a token (or insecure = true) is required."},
    {"data_dir", OPT_STRING, FIELD(data_dir), "./data", 0, MAX_STRING, CFG_NONEMPTY, NULL,
     "Folder of the databases, WAL and SSTables. Created if missing."},
    {"http_threads", OPT_INT, FIELD(http_threads), "0", 0, 1024, 0, NULL,
     "Threads serving HTTP requests. 0 gives each connection a thread of its own, so a "
     "request waiting for its WAL fsync or a long query holds up no other connection; N "
     "shares a pool of N threads among all connections."},
    {"max_connections", OPT_INT, FIELD(max_connections), "1024", 1, 1000000, 0, NULL,
     "Open HTTP connections at most; more are refused. A reserve of 16 more is kept for /ping "
     "and /health."},
    {"max_connections_per_client", OPT_INT, FIELD(max_connections_per_client), "256", 0, 1000000, 0,
     NULL,
     "Open HTTP connections at most from one client address (0: no limit of its own), so that "
     "one client cannot take every slot."},
    {"tls_cert", OPT_STRING, FIELD(tls_cert), "", 0, MAX_STRING, 0, NULL,
     "PEM file of the server certificate (and its chain): with tls_key set, the HTTP server "
     "speaks only HTTPS. Empty: plain HTTP."},
    {"tls_key", OPT_STRING, FIELD(tls_key), "", 0, MAX_STRING, 0, NULL,
     "PEM file of the private key of tls_cert (unencrypted)."},
    {"request_timeout", OPT_DURATION, FIELD(request_timeout_ns), "30s", SEC, DAY, 0, NULL,
     "A request that takes longer, from its headers to the end of its body, is cut off (a body "
     "still arriving then: the connection is closed); also how long an idle connection is kept."},
    {"max_body_bytes", OPT_SIZE, FIELD(max_body_bytes), "64MiB", KIB, 64 * GIB, 0, NULL,
     "Largest request body, compressed and inflated (413 beyond). Sizes take B, k/KiB "
     "(1024), KB (1000), M/MiB, MB, G/GiB, GB, T/TiB, TB."},
    {"max_line_bytes", OPT_SIZE, FIELD(max_line_bytes), "1MiB", 64, GIB, 0, NULL,
     "Longest line of a write body."},
    {"max_key_bytes", OPT_SIZE, FIELD(max_key_bytes), "1024", 1, 65536, 0, NULL,
     "Longest host, event, tag key or field key."},
    {"max_tags_per_line", OPT_INT, FIELD(max_tags_per_line), "1024", 1, 65536, 0, NULL,
     "Most tags in one line."},
    {"max_fields_per_line", OPT_INT, FIELD(max_fields_per_line), "1024", 1, 65536, 0, NULL,
     "Most fields in one line."},
    {"wal_sync", OPT_ENUM, FIELD(wal_sync), "always", 0, 0, 0, wal_sync_names,
     "When the WAL is fsynced: always (a write is acknowledged once on disk), interval "
     "(every wal_sync_interval) or none."},
    {"wal_sync_interval", OPT_DURATION, FIELD(wal_sync_interval_ns), "100ms", MS, 60 * SEC, 0, NULL,
     "Time between WAL fsyncs when wal_sync = interval. Durations take ns, us, ms, s, m, "
     "h, d, w."},
    {"memtable_bytes", OPT_SIZE, FIELD(memtable_bytes), "128MiB", MIB, TIB, 0, NULL,
     "Memory budget of all memtables; writers wait (503) when flushing falls behind. A "
     "database's memtables are flushed at half of it, one table per bucket: a smaller "
     "budget means smaller tables and more file churn."},
    {"block_cache_bytes", OPT_SIZE, FIELD(block_cache_bytes), "auto", 0, TIB, CFG_AUTO, NULL,
     "Size of the SSTable block cache: decoded blocks, charged at their size (0 turns it off). "
     "auto: an eighth of the memory the daemon may use (the machine's RAM, or its control "
     "group's limit when lower), at least 64MiB; the log says what it chose."},
    {"max_open_files", OPT_INT, FIELD(max_open_files), "0", 0, 10000000, 0, NULL,
     "SSTables and other files kept open for reading at once (the table cache); beyond, the "
     "least recently used idle one is closed and opened again when read. 0 is half the "
     "open-file limit, at most 8192."},
    {"background_threads", OPT_INT, FIELD(background_threads), "2", 1, 256, 0, NULL,
     "Threads for flushes and compactions; with two or more, one is kept for flushes."},
    {"default_buckets", OPT_INT, FIELD(default_buckets), "16", 1, 1024, 0, NULL,
     "Buckets (partitions) of a new database; fixed once it is created."},
    {"default_ts_order", OPT_ENUM, FIELD(default_ts_desc), "desc", 0, 0, 0, ts_order_names,
     "Stored timestamp order of a new database: desc (newest first) or asc."},
    {"default_ttl", OPT_DURATION, FIELD(default_ttl_ns), "0", 0, INT64_MAX, 0, NULL,
     "Retention of a new database; 0 keeps data forever."},
    {"max_disk_bytes", OPT_SIZE, FIELD(max_disk_bytes), "0", 0, 1024 * TIB, 0, NULL,
     "Disk budget of each database (SSTables and WAL); over it the oldest hour windows are "
     "dropped first, at each retention check. 0 turns it off. A database's own budget (set "
     "with CREATE or ALTER DATABASE) wins."},
    {"retention_check_interval", OPT_DURATION, FIELD(retention_check_interval_ns), "1m", MS, DAY, 0,
     NULL, "How often expired data is looked for and dropped."},
    {"settle_after", OPT_DURATION, FIELD(settle_after_ns), "1m", 0, DAY, 0, NULL,
     "A database without writes for this long settles: its memtables are flushed and its newest "
     "hour windows merged to their final, smallest form at once instead of when later windows "
     "begin. 0 turns it off."},
    {"cold_compression", OPT_ENUM, FIELD(cold_zstd), "zstd", 0, 0, 0, cold_compression_names,
     "Codec of a cold window's final form (two or more hour windows behind the newest): zstd "
     "(about a sixth smaller than lz4hc on log rows at level 3, a fifth at 6; three times slower "
     "to decode) or lz4hc. Windows still being written are fast LZ4; the two newest, once "
     "final (settled), lz4hc."},
    {"cold_compression_level", OPT_INT, FIELD(cold_compression_level), "3", 1, 19, 0, NULL,
     "zstd's level when cold_compression is zstd: higher is smaller and slower to write (3: "
     "faster to write than lz4hc; 6: a little slower; 19: ten times slower), as fast to read."},
    {"host_section", OPT_BOOL, FIELD(host_section), "true", 0, 0, 0, NULL,
     "A window in its final form also keeps its rows ordered by host, with their numeric fields "
     "only, so that an aggregate of one host (a dashboard panel) reads them side by side "
     "instead of one row at a time (store/FORMAT.md, \"Host section\"). Costs disk: a few "
     "bytes an event."},
    {"reject_older_than", OPT_DURATION, FIELD(reject_older_than_ns), "0", 0, INT64_MAX, 0, NULL,
     "Refuse points older than now minus this; 0 accepts any time."},
    {"reject_newer_than", OPT_DURATION, FIELD(reject_newer_than_ns), "0", 0, INT64_MAX, 0, NULL,
     "Refuse points newer than now plus this; 0 accepts any time."},
    {"auto_create_databases", OPT_BOOL, FIELD(auto_create_databases), "true", 0, 0, 0, NULL,
     "A write to an unknown database creates it with the defaults above (else 404). Booleans "
     "take true/false, yes/no, on/off, 1/0."},
    {"max_get_rows", OPT_INT, FIELD(max_get_rows), "2000", 1, 10000000, 0, NULL,
     "Most keys one GET plan may read; larger queries are refused before any work."},
    {"max_groups", OPT_INT, FIELD(max_groups), "100000", 1, 100000000, 0, NULL,
     "Most groups one aggregate query may hold (GROUP BY keys times time buckets); the URL "
     "argument max_groups lowers it for one request. More fails the query with a clear error."},
    {"allow_full_scan", OPT_BOOL, FIELD(allow_full_scan), "false", 0, 0, 0, NULL,
     "Run full scans without the /*+ full_scan */ hint or full_scan=true."},
    {"host_tag", OPT_STRING, FIELD(host_tag), "host", 0, MAX_STRING, CFG_NONEMPTY | CFG_TAGKEY,
     NULL, "Line-protocol tag that names the host of a point."},
    {"default_host", OPT_STRING, FIELD(default_host), "", 0, MAX_STRING, 0, NULL,
     "Host of a point that has no host tag."},
    {"log_level", OPT_ENUM, FIELD(log_level), "info", 0, 0, 0, log_level_names,
     "Least severe log messages written: debug, info, warn or error."},
    {"token", OPT_TOKEN, 0, 0, NULL, 0, 0, CFG_SECRET | CFG_REPEAT, NULL,
     "Access token, one line each: token = SECRET RIGHTS DATABASES, RIGHTS a comma list of "
     "read, write, admin (admin implies both), DATABASES a comma list of names or *."},
    {"insecure", OPT_BOOL, FIELD(insecure), "false", 0, 0, 0, NULL,
     "Allow listening beyond loopback without any token."},
    {"max_tail_clients", OPT_INT, FIELD(max_tail_clients), "256", 0, 100000, 0, NULL,
     "Live tail streams (GET /api/v1/tail) open at once; more get 503. Each holds a "
     "connection (and with http_threads 0 a thread) and up to tail_buffer_bytes."},
    {"tail_buffer_bytes", OPT_SIZE, FIELD(tail_buffer_bytes), "1MiB", 4 * KIB, GIB, 0, NULL,
     "Output a live tail client may have pending; rows beyond are dropped for it and a "
     "dropped marker says how many."},
    {"tail_keepalive", OPT_DURATION, FIELD(tail_keepalive_ns), "15s", 100 * MS, DAY, 0, NULL,
     "A live tail stream idle this long gets a keep-alive (SSE comment, NDJSON heartbeat "
     "object), so that proxies keep it open; at most half of request_timeout."},
    {"syslog_tcp_listen", OPT_STRING, FIELD(syslog_tcp_listen), "", 0, MAX_STRING, 0, NULL,
     "Address and port of the syslog TCP listener (newline or octet-counted framing), e.g. "
     "127.0.0.1:6514; empty turns it off. Beyond loopback a token (or insecure = true) is "
     "required, as for listen."},
    {"syslog_udp_listen", OPT_STRING, FIELD(syslog_udp_listen), "", 0, MAX_STRING, 0, NULL,
     "Address and port of the syslog UDP listener (one message per datagram); empty turns it "
     "off. Same rule beyond loopback."},
    {"syslog_db", OPT_STRING, FIELD(syslog_db), "syslog", 0, 64, CFG_NONEMPTY, NULL,
     "Database of syslog messages, created on the first write like any database."},
    {"syslog_event", OPT_STRING, FIELD(syslog_event), "", 0, MAX_STRING, 0, NULL,
     "Event name of every syslog message (the app-name is then kept as tag appname); empty "
     "takes each message's app-name (RFC 3164: its tag)."},
    {"syslog_default_event", OPT_STRING, FIELD(syslog_default_event), "syslog", 0, MAX_STRING,
     CFG_NONEMPTY, NULL, "Event name of a syslog message without app-name or tag."},
    {"syslog_host", OPT_ENUM, FIELD(syslog_host_peer), "hostname", 0, 0, 0, syslog_host_names,
     "Host of a syslog message: hostname (its HOSTNAME; the sender's address without one) or "
     "peer (always the sender's address)."},
    {"syslog_max_connections", OPT_INT, FIELD(syslog_max_connections), "256", 1, 100000, 0, NULL,
     "Open syslog TCP connections at most; more are closed at once and counted."},
    {"syslog_idle_timeout", OPT_DURATION, FIELD(syslog_idle_timeout_ns), "5m", SEC, 7 * DAY, 0,
     NULL, "A syslog TCP connection that sends nothing for this long is closed."},
    {"syslog_max_message_bytes", OPT_SIZE, FIELD(syslog_max_message_bytes), "64KiB", 480, 16 * MIB,
     0, NULL,
     "Longest syslog message; a longer one is dropped and counted (RFC 5424 asks for at least "
     "480 bytes; a UDP datagram holds at most 65507)."},
    {"syslog_batch_rows", OPT_INT, FIELD(syslog_batch_rows), "5000", 1, 100000, 0, NULL,
     "Syslog messages a connection gathers before writing them as one batch."},
    {"syslog_flush_interval", OPT_DURATION, FIELD(syslog_flush_interval_ns), "10ms", MS, 10 * SEC,
     0, NULL,
     "Longest time a received syslog message waits in its connection's batch before it is "
     "written (what a crash may lose besides)."},
    {"es_database", OPT_STRING, FIELD(es_database), "logs", 0, MAX_STRING, CFG_NONEMPTY, NULL,
     "Database that Elasticsearch bulk requests (/_bulk) write to; the URL argument db names "
     "another."},
    {"es_timestamp_field", OPT_STRING, FIELD(es_timestamp_field), "@timestamp", 0, MAX_STRING, 0,
     NULL,
     "Field of an Elasticsearch document holding its time (RFC 3339 or epoch milliseconds); "
     "without it the document takes its arrival time."},
    {"es_host_fields", OPT_STRING, FIELD(es_host_fields), "host.name,host,hostname,HOST", 0,
     MAX_STRING, 0, NULL,
     "Comma list of Elasticsearch document fields (nested keys joined by dots) naming the host: "
     "the first string one wins (HOST: syslog-ng's elasticsearch-http() default template)."},
    {"es_event_fields", OPT_STRING, FIELD(es_event_fields), "event.dataset,service.name", 0,
     MAX_STRING, 0, NULL,
     "Comma list of Elasticsearch document fields naming the event when the request names no "
     "index (or always, with es_event_from_document)."},
    {"es_event_from_document", OPT_BOOL, FIELD(es_event_from_document), "false", 0, 0, 0, NULL,
     "Let es_event_fields win over the index as the event of an Elasticsearch document."},
    {"es_message_field", OPT_STRING, FIELD(es_message_field), "message,MESSAGE", 0, MAX_STRING, 0,
     NULL,
     "Comma list of Elasticsearch document fields: the first string one is stored as the field "
     "msg (MESSAGE: syslog-ng's elasticsearch-http() default template)."},
    {"loki_db", OPT_STRING, FIELD(loki_db), "logs", 0, MAX_STRING, CFG_NONEMPTY, NULL,
     "Database of Loki pushes (/loki/api/v1/push) that name none: the URL argument db or the "
     "X-Scope-OrgID header win."},
    {"loki_host_labels", OPT_STRING, FIELD(loki_host_labels), "host,hostname,instance", 0,
     MAX_STRING, 0, NULL,
     "Comma list of Loki labels that name the host, first present wins; the others are tags."},
    {"loki_event_labels", OPT_STRING, FIELD(loki_event_labels), "job,app,service_name", 0,
     MAX_STRING, 0, NULL, "Comma list of Loki labels that name the event, first present wins."},
    {"loki_default_event", OPT_STRING, FIELD(loki_default_event), "loki", 0, MAX_STRING,
     CFG_NONEMPTY, NULL, "Event of a Loki stream without any of loki_event_labels."},
    {"otlp_db", OPT_STRING, FIELD(otlp_db), "logs", 0, MAX_STRING, CFG_NONEMPTY, NULL,
     "Database of OpenTelemetry logs (/v1/logs) that name none: the URL argument db or the "
     "X-Scope-OrgID header win."},
    {"otlp_host_attributes", OPT_STRING, FIELD(otlp_host_attributes), "host.name", 0, MAX_STRING, 0,
     NULL, "Comma list of OpenTelemetry resource attributes that name the host."},
    {"otlp_event_attributes", OPT_STRING, FIELD(otlp_event_attributes), "service.name", 0,
     MAX_STRING, 0, NULL, "Comma list of OpenTelemetry resource attributes that name the event."},
    {"otlp_default_event", OPT_STRING, FIELD(otlp_default_event), "otlp", 0, MAX_STRING,
     CFG_NONEMPTY, NULL, "Event of an OpenTelemetry log record whose resource names none."},
};

#define NOPTIONS (sizeof options / sizeof options[0])

int cfg_int_option_index(const char *key)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strcmp(options[i].name, key) == 0)
            return (int)i;
    return -1;
}

size_t cfg_int_noptions(void)
{
    return NOPTIONS;
}

bool cfg_int_option_repeats(int index)
{
    return (options[index].flags & CFG_REPEAT) != 0;
}

/* ---- storage by offset ------------------------------------------------ */

static void *field(struct config *c, const struct option *o)
{
    return (char *)c + o->offset;
}

static const void *cfield(const struct config *c, const struct option *o)
{
    return (const char *)c + o->offset;
}

static void store_enum(struct config *c, const struct option *o, int v)
{
    if (o->size == sizeof(bool)) {
        bool b = v != 0;
        memcpy(field(c, o), &b, sizeof b);
    } else {
        assert(o->size == sizeof(int));
        memcpy(field(c, o), &v, sizeof v);
    }
}

static int load_enum(const struct config *c, const struct option *o)
{
    if (o->size == sizeof(bool)) {
        bool b;
        memcpy(&b, cfield(c, o), sizeof b);
        return b;
    }
    int v;
    memcpy(&v, cfield(c, o), sizeof v);
    return v;
}

static int64_t load_i64(const struct config *c, const struct option *o)
{
    int64_t v;
    assert(o->size == sizeof v);
    memcpy(&v, cfield(c, o), sizeof v);
    return v;
}

/* ---- messages --------------------------------------------------------- */

/* Value as shown in messages: a token's secret is masked. */
static void show_value(struct buf *out, const struct option *o, const char *value)
{
    if (!(o->flags & CFG_SECRET)) {
        buf_puts(out, value);
        return;
    }
    size_t skip = strcspn(value, " \t");
    buf_puts(out, "<secret hidden>");
    buf_puts(out, value + skip);
}

static int set_fail(struct buf *err, const char *origin, const struct option *o, const char *value,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int set_fail(struct buf *err, const char *origin, const struct option *o, const char *value,
                    const char *fmt, ...)
{
    if (err) {
        buf_printf(err, "%s: %s = \"", origin, o->name);
        show_value(err, o, value);
        buf_puts(err, "\": ");
        va_list ap;
        va_start(ap, fmt);
        buf_vprintf(err, fmt, ap);
        va_end(ap);
        buf_putc(err, '\n');
    }
    return ERR_INVAL;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const char *closest_key(const char *key)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < NOPTIONS; i++) {
        size_t d = edit_distance(key, options[i].name);
        if (d < best_d) {
            best_d = d;
            best = options[i].name;
        }
    }
    size_t limit = strlen(key) >= 12 ? 3 : 2;
    return best_d <= limit ? best : NULL;
}

static int unknown_key(struct buf *err, const char *origin, const char *key)
{
    if (!err)
        return ERR_INVAL;
    buf_printf(err, "%s: unknown key \"%s\"", origin, key);
    const char *near = closest_key(key);
    if (near)
        buf_printf(err, " (did you mean %s?)", near);
    buf_putc(err, '\n');
    return ERR_INVAL;
}

/* ---- per-type parsing -------------------------------------------------- */

static int parse_bool(const char *s, bool *out)
{
    static const char *yes[] = {"true", "yes", "on", "1"};
    static const char *no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return ERR_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return ERR_OK;
        }
    }
    return ERR_INVAL;
}

static int parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || isspace((unsigned char)s[0]))
        return ERR_INVAL;
    *out = v;
    return ERR_OK;
}

static void append_enum_names(struct buf *b, const struct enum_name *names)
{
    for (const struct enum_name *n = names; n->name; n++)
        buf_printf(b, "%s%s", n == names ? "" : ", ", n->name);
}

static void range_text(const struct option *o, char *lo, char *hi, size_t n)
{
    if (o->type == OPT_SIZE) {
        cfg_format_size((uint64_t)o->min, lo, n);
        cfg_format_size((uint64_t)o->max, hi, n);
    } else if (o->type == OPT_DURATION) {
        cfg_format_duration(o->min, lo, n);
        cfg_format_duration(o->max, hi, n);
    } else {
        snprintf(lo, n, "%lld", (long long)o->min);
        snprintf(hi, n, "%lld", (long long)o->max);
    }
}

static int range_fail(const struct option *o, const char *what, const char *origin,
                      const char *value, struct buf *err)
{
    char lo[32], hi[32];
    range_text(o, lo, hi, sizeof lo);
    if (o->max == INT64_MAX)
        return set_fail(err, origin, o, value, "expected %s of at least %s", what, lo);
    return set_fail(err, origin, o, value, "expected %s from %s to %s", what, lo, hi);
}

static int check_range(const struct option *o, int64_t v, const char *what, const char *origin,
                       const char *value, struct buf *err)
{
    if (v >= o->min && v <= o->max)
        return ERR_OK;
    return range_fail(o, what, origin, value, err);
}

static int check_string(const struct option *o, const char *s, const char *origin, struct buf *err)
{
    size_t len = strlen(s);
    if ((o->flags & CFG_NONEMPTY) && len == 0)
        return set_fail(err, origin, o, s, "must not be empty");
    if ((int64_t)len > o->max)
        return set_fail(err, origin, o, s, "longer than %lld bytes", (long long)o->max);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f)
            return set_fail(err, origin, o, s, "control characters are not allowed");
        /* inih would cut the value at " ;" when the file is read back. */
        if (ch == ';' && i > 0 && isspace((unsigned char)s[i - 1]))
            return set_fail(err, origin, o, s, "a ';' after a blank starts a comment");
        if ((o->flags & CFG_TAGKEY) && (ch == ' ' || ch == ',' || ch == '=' || ch == '"'))
            return set_fail(err, origin, o, s, "a tag key cannot contain blanks, ',', '=' or '\"'");
    }
    return ERR_OK;
}

static void token_free_fields(struct cfg_token *t)
{
    free(t->secret);
    for (size_t i = 0; i < t->ndbs; i++)
        free(t->dbs[i]);
    free(t->dbs);
    memset(t, 0, sizeof *t);
}

static bool valid_db_name(const char *s, size_t len)
{
    if (len == 0 || len > 255 || s[0] == '.')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
            return false;
    return true;
}

static int parse_rights(const char *s, size_t len, unsigned *out)
{
    unsigned rights = 0;
    const char *p = s, *end = s + len;
    while (p <= end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t n = (size_t)((comma ? comma : end) - p);
        if (n == 5 && strncmp(p, "write", 5) == 0)
            rights |= CFG_RIGHT_WRITE;
        else if (n == 4 && strncmp(p, "read", 4) == 0)
            rights |= CFG_RIGHT_READ;
        else if (n == 5 && strncmp(p, "admin", 5) == 0)
            rights |= CFG_RIGHT_ADMIN;
        else
            return ERR_INVAL;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = rights;
    return ERR_OK;
}

/* Splits value into exactly three blank-separated words. */
static bool split3(const char *v, const char *w[3], size_t n[3])
{
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        p += strspn(p, " \t");
        n[i] = strcspn(p, " \t");
        if (n[i] == 0)
            return false;
        w[i] = p;
        p += n[i];
    }
    p += strspn(p, " \t");
    return *p == '\0';
}

static int parse_token(const struct option *o, const char *v, const char *origin, struct buf *err,
                       struct cfg_token *out)
{
    struct cfg_token t;
    memset(&t, 0, sizeof t);
    const char *w[3];
    size_t n[3];
    if (strlen(v) > MAX_TOKEN)
        return set_fail(err, origin, o, v, "longer than %d bytes", MAX_TOKEN);
    if (!split3(v, w, n))
        return set_fail(err, origin, o, v,
                        "expected SECRET RIGHTS DATABASES, e.g. token = s3cr3t read,write "
                        "logs,metrics or token = adm1n admin *");
    for (size_t i = 0; i < n[0]; i++)
        if ((unsigned char)w[0][i] < 0x21 || (unsigned char)w[0][i] > 0x7e)
            return set_fail(err, origin, o, v, "the secret must be printable ASCII");
    if (parse_rights(w[1], n[1], &t.rights) != ERR_OK)
        return set_fail(err, origin, o, v,
                        "RIGHTS must be a comma list of read, write, admin (no blanks)");
    if (n[2] == 1 && w[2][0] == '*') {
        t.all_dbs = true;
    } else {
        const char *p = w[2], *end = w[2] + n[2];
        t.dbs = xcalloc(n[2] / 2 + 1, sizeof *t.dbs);
        while (p <= end) {
            const char *comma = memchr(p, ',', (size_t)(end - p));
            size_t len = (size_t)((comma ? comma : end) - p);
            if (!valid_db_name(p, len)) {
                token_free_fields(&t);
                return set_fail(err, origin, o, v,
                                "DATABASES must be * or a comma list of names made of "
                                "letters, digits, '_', '-' and '.' (not first)");
            }
            t.dbs[t.ndbs++] = xstrndup(p, len);
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    t.secret = xstrndup(w[0], n[0]);
    *out = t;
    return ERR_OK;
}

static int set_parsed(struct config *c, const struct option *o, const char *v, const char *origin,
                      struct buf *err)
{
    switch (o->type) {
    case OPT_STRING: {
        int rc = check_string(o, v, origin, err);
        if (rc != ERR_OK)
            return rc;
        char **p = field(c, o);
        free(*p);
        *p = xstrdup(v);
        return ERR_OK;
    }
    case OPT_LISTEN: {
        struct cfg_addr a;
        struct buf why = BUF_INIT;
        if (strlen(v) > MAX_STRING)
            return set_fail(err, origin, o, v, "longer than %d bytes", MAX_STRING);
        int rc = cfg_parse_listen(v, &a, &why);
        if (rc != ERR_OK) {
            set_fail(err, origin, o, v, "%s", buf_cstr(&why));
            buf_destroy(&why);
            return rc;
        }
        char **p = field(c, o);
        free(*p);
        *p = xstrdup(v);
        return ERR_OK;
    }
    case OPT_BOOL: {
        bool b;
        if (parse_bool(v, &b) != ERR_OK)
            return set_fail(err, origin, o, v, "expected true or false (also yes/no, on/off, 1/0)");
        memcpy(field(c, o), &b, sizeof b);
        return ERR_OK;
    }
    case OPT_INT: {
        int64_t i;
        if (parse_int(v, &i) != ERR_OK)
            return range_fail(o, "an integer", origin, v, err);
        int rc = check_range(o, i, "an integer", origin, v, err);
        if (rc == ERR_OK)
            memcpy(field(c, o), &i, sizeof i);
        return rc;
    }
    case OPT_SIZE: {
        uint64_t s;
        if ((o->flags & CFG_AUTO) && strcasecmp(v, "auto") == 0) {
            s = CFG_SIZE_AUTO;
            memcpy(field(c, o), &s, sizeof s);
            return ERR_OK;
        }
        if (cfg_parse_size(v, &s) != ERR_OK)
            return set_fail(err, origin, o, v,
                            "expected a size such as 512KiB, 64MiB or 1GB (units B, k/KiB=1024, "
                            "KB=1000, M/MiB, MB, G/GiB, GB, T/TiB, TB)%s",
                            (o->flags & CFG_AUTO) ? ", or auto" : "");
        int rc = check_range(o, (int64_t)s, "a size", origin, v, err);
        if (rc == ERR_OK)
            memcpy(field(c, o), &s, sizeof s);
        return rc;
    }
    case OPT_DURATION: {
        int64_t d;
        if (cfg_parse_duration(v, &d) != ERR_OK)
            return set_fail(err, origin, o, v,
                            "expected a duration such as 500ms, 10s, 5m, 12h, 30d, 2w or 0 "
                            "(units ns, us, ms, s, m, h, d, w)");
        int rc = check_range(o, d, "a duration", origin, v, err);
        if (rc == ERR_OK)
            memcpy(field(c, o), &d, sizeof d);
        return rc;
    }
    case OPT_ENUM:
        for (const struct enum_name *n = o->names; n->name; n++) {
            if (strcasecmp(v, n->name) == 0) {
                store_enum(c, o, n->value);
                return ERR_OK;
            }
        }
        if (err) {
            struct buf names = BUF_INIT;
            append_enum_names(&names, o->names);
            set_fail(err, origin, o, v, "expected one of %s", buf_cstr(&names));
            buf_destroy(&names);
        }
        return ERR_INVAL;
    case OPT_TOKEN: {
        struct cfg_token t;
        int rc = parse_token(o, v, origin, err, &t);
        if (rc != ERR_OK)
            return rc;
        c->tokens = xrealloc(c->tokens, (c->ntokens + 1) * sizeof *c->tokens);
        c->tokens[c->ntokens++] = t;
        return ERR_OK;
    }
    }
    return ERR_INVAL;
}

/* Blanks around the value and one pair of double quotes are not part of it. */
static char *normalize_value(const char *value)
{
    while (isspace((unsigned char)*value))
        value++;
    size_t len = strlen(value);
    while (len > 0 && isspace((unsigned char)value[len - 1]))
        len--;
    if (len >= 2 && value[0] == '"' && value[len - 1] == '"')
        return xstrndup(value + 1, len - 2);
    return xstrndup(value, len);
}

int cfg_set(struct config *c, const char *key, const char *value, const char *origin,
            struct buf *err)
{
    int i = cfg_int_option_index(key);
    if (i < 0)
        return unknown_key(err, origin, key);
    char *v = normalize_value(value);
    int rc = set_parsed(c, &options[i], v, origin, err);
    free(v);
    return rc;
}

/* ---- init / destroy ---------------------------------------------------- */

void cfg_init(struct config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (!options[i].def)
            continue;
        struct buf err = BUF_INIT;
        int rc = set_parsed(c, &options[i], options[i].def, "default", &err);
        if (rc != ERR_OK) {
            fprintf(stderr, "logbucket: bad built-in default: %s", buf_cstr(&err));
            abort();
        }
        buf_destroy(&err);
    }
}

void cfg_destroy(struct config *c)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (options[i].type == OPT_STRING || options[i].type == OPT_LISTEN) {
            char **p = field(c, &options[i]);
            free(*p);
            *p = NULL;
        }
    }
    for (size_t i = 0; i < c->ntokens; i++)
        token_free_fields(&c->tokens[i]);
    free(c->tokens);
    c->tokens = NULL;
    c->ntokens = 0;
}

/* ---- validation -------------------------------------------------------- */

static int validate_listen(const struct config *c, struct buf *err)
{
    struct cfg_addr a;
    struct buf why = BUF_INIT;
    int rc = ERR_OK;
    if (cfg_parse_listen(c->listen, &a, &why) != ERR_OK) {
        buf_printf(err, "listen = \"%s\": %s\n", c->listen, buf_cstr(&why));
        rc = ERR_INVAL;
    } else if (!cfg_addr_is_loopback(&a) && c->ntokens == 0 && !c->insecure) {
        buf_printf(err,
                   "listen = \"%s\" is reachable beyond loopback and no token is configured: "
                   "add a line token = SECRET RIGHTS DATABASES, or set insecure = true to "
                   "serve without authentication\n",
                   c->listen);
        rc = ERR_INVAL;
    }
    buf_destroy(&why);
    return rc;
}

static int validate_tokens(const struct config *c, struct buf *err)
{
    int rc = ERR_OK;
    for (size_t i = 0; i < c->ntokens; i++) {
        const struct cfg_token *t = &c->tokens[i];
        if (!t->secret || t->secret[0] == '\0') {
            buf_printf(err, "token %zu: the secret is empty\n", i + 1);
            rc = ERR_INVAL;
            continue;
        }
        if ((t->rights & (CFG_RIGHT_READ | CFG_RIGHT_WRITE | CFG_RIGHT_ADMIN)) == 0 ||
            (t->rights & ~7u) != 0) {
            buf_printf(err, "token %zu: rights must be some of read, write, admin\n", i + 1);
            rc = ERR_INVAL;
        }
        if (!t->all_dbs && t->ndbs == 0) {
            buf_printf(err, "token %zu: names no database (use * for all)\n", i + 1);
            rc = ERR_INVAL;
        }
        for (size_t j = 0; j < i; j++) {
            if (c->tokens[j].secret && strcmp(c->tokens[j].secret, t->secret) == 0) {
                buf_printf(err,
                           "token %zu: same secret as token %zu; each secret may "
                           "appear once\n",
                           i + 1, j + 1);
                rc = ERR_INVAL;
            }
        }
    }
    return rc;
}

/* The syslog listen addresses, when set, follow the rules of listen. */
static int validate_syslog_addr(const struct config *c, const char *key, const char *v,
                                struct buf *err)
{
    struct cfg_addr a;
    struct buf why = BUF_INIT;
    int rc = ERR_OK;
    if (!v || !*v) {
        rc = ERR_OK;
    } else if (cfg_parse_listen(v, &a, &why) != ERR_OK) {
        buf_printf(err, "%s = \"%s\": %s\n", key, v, buf_cstr(&why));
        rc = ERR_INVAL;
    } else if (!cfg_addr_is_loopback(&a) && c->ntokens == 0 && !c->insecure) {
        buf_printf(err,
                   "%s = \"%s\" is reachable beyond loopback and no token is configured "
                   "(syslog itself carries none): add a token line, or set insecure = true\n",
                   key, v);
        rc = ERR_INVAL;
    }
    buf_destroy(&why);
    return rc;
}

/* The store's rule for database names (store/store.h STORE_DB_NAME_RULE). */
static bool db_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
            return false;
    return true;
}

static int validate_syslog(const struct config *c, struct buf *err)
{
    int rc = validate_syslog_addr(c, "syslog_tcp_listen", c->syslog_tcp_listen, err);
    if (validate_syslog_addr(c, "syslog_udp_listen", c->syslog_udp_listen, err) != ERR_OK)
        rc = ERR_INVAL;
    if (c->syslog_db && !db_name_ok(c->syslog_db)) {
        buf_printf(err,
                   "syslog_db = \"%s\": a database name is 1 to 64 of A-Z a-z 0-9 _ - ., not "
                   "starting with .\n",
                   c->syslog_db);
        rc = ERR_INVAL;
    }
    return rc;
}

/* Re-checks each value's own rules, for structs changed by hand. */
static int validate_values(const struct config *c, struct buf *err)
{
    int rc = ERR_OK;
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        const char *origin = "config";
        int r = ERR_OK;
        if (o->type == OPT_SIZE && (o->flags & CFG_AUTO) &&
            (uint64_t)load_i64(c, o) == CFG_SIZE_AUTO) {
            r = ERR_OK;
        } else if (o->type == OPT_INT || o->type == OPT_SIZE || o->type == OPT_DURATION) {
            int64_t v = load_i64(c, o);
            char text[32];
            if (o->type == OPT_SIZE)
                snprintf(text, sizeof text, "%llu", (unsigned long long)(uint64_t)v);
            else
                snprintf(text, sizeof text, "%lld", (long long)v);
            if (o->type == OPT_SIZE && v < 0) /* a uint64_t beyond INT64_MAX */
                v = INT64_MAX;
            r = check_range(o, v, o->type == OPT_INT ? "an integer" : "a value", origin, text, err);
        } else if (o->type == OPT_ENUM) {
            int v = load_enum(c, o);
            const struct enum_name *n = o->names;
            while (n->name && n->value != v)
                n++;
            if (!n->name) {
                buf_printf(err, "%s: %s holds %d, which is none of its values\n", origin, o->name,
                           v);
                r = ERR_INVAL;
            }
        } else if (o->type == OPT_STRING) {
            const char *const *p = cfield(c, o);
            if (!*p) {
                buf_printf(err, "%s: %s is not set\n", origin, o->name);
                r = ERR_INVAL;
            } else {
                r = check_string(o, *p, origin, err);
            }
        }
        if (r != ERR_OK)
            rc = r;
    }
    return rc;
}

int cfg_validate(const struct config *c, struct buf *err)
{
    int rc = validate_values(c, err);
    if (validate_syslog(c, err) != ERR_OK)
        rc = ERR_INVAL;
    if (c->listen == NULL) {
        buf_puts(err, "listen is not set\n");
        rc = ERR_INVAL;
    } else if (validate_listen(c, err) != ERR_OK) {
        rc = ERR_INVAL;
    }
    if (validate_tokens(c, err) != ERR_OK)
        rc = ERR_INVAL;
    if ((c->tls_cert && c->tls_cert[0]) != (c->tls_key && c->tls_key[0])) {
        buf_puts(err, "tls_cert and tls_key go together: set both (HTTPS) or neither (HTTP)\n");
        rc = ERR_INVAL;
    }
    return rc;
}

/* ---- printing ---------------------------------------------------------- */

/* Appends text as "# " comment lines of at most about 78 columns. */
static void put_comment(struct buf *out, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t len = strlen(p);
        size_t cut = len;
        if (len > 76) {
            cut = 76;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = strcspn(p, " ");
        }
        buf_puts(out, "# ");
        buf_append(out, p, cut);
        buf_putc(out, '\n');
        p += cut;
        while (*p == ' ')
            p++;
    }
}

static bool needs_quotes(const char *s)
{
    size_t len = strlen(s);
    return len == 0 || isspace((unsigned char)s[0]) || isspace((unsigned char)s[len - 1]) ||
           s[0] == '"' || strchr(s, '#') != NULL || s[0] == ';';
}

static void format_value(const struct config *c, const struct option *o, struct buf *out)
{
    char tmp[32];
    switch (o->type) {
    case OPT_STRING:
    case OPT_LISTEN: {
        const char *const *p = cfield(c, o);
        const char *s = *p ? *p : "";
        buf_printf(out, needs_quotes(s) ? "\"%s\"" : "%s", s);
        return;
    }
    case OPT_BOOL: {
        bool b;
        memcpy(&b, cfield(c, o), sizeof b);
        buf_puts(out, b ? "true" : "false");
        return;
    }
    case OPT_INT: buf_printf(out, "%lld", (long long)load_i64(c, o)); return;
    case OPT_SIZE:
        if ((o->flags & CFG_AUTO) && (uint64_t)load_i64(c, o) == CFG_SIZE_AUTO) {
            buf_puts(out, "auto");
            return;
        }
        cfg_format_size((uint64_t)load_i64(c, o), tmp, sizeof tmp);
        buf_puts(out, tmp);
        return;
    case OPT_DURATION:
        cfg_format_duration(load_i64(c, o), tmp, sizeof tmp);
        buf_puts(out, tmp);
        return;
    case OPT_ENUM: {
        int v = load_enum(c, o);
        for (const struct enum_name *n = o->names; n->name; n++) {
            if (n->value == v) {
                buf_puts(out, n->name);
                return;
            }
        }
        buf_printf(out, "%d", v);
        return;
    }
    case OPT_TOKEN: return;
    }
}

static void print_token(const struct cfg_token *t, struct buf *out, bool secrets)
{
    static const char *right_names[] = {"read", "write", "admin"};
    if (secrets)
        buf_printf(out, "token = %s ", t->secret ? t->secret : "");
    else
        buf_puts(out, "# token = <secret hidden> ");
    bool first = true;
    for (unsigned i = 0; i < 3; i++) {
        if (t->rights & (1u << i)) {
            buf_printf(out, "%s%s", first ? "" : ",", right_names[i]);
            first = false;
        }
    }
    if (t->all_dbs) {
        buf_puts(out, " *\n");
        return;
    }
    for (size_t i = 0; i < t->ndbs; i++)
        buf_printf(out, "%c%s", i == 0 ? ' ' : ',', t->dbs[i]);
    buf_putc(out, '\n');
}

static void print_tokens(const struct config *c, struct buf *out, unsigned flags)
{
    if (flags & CFG_PRINT_DEFAULTS) {
        buf_puts(out, "# token = s3cr3t read,write logs,metrics\n");
        buf_puts(out, "# token = adm1n admin *\n");
        return;
    }
    if (c->ntokens == 0)
        buf_puts(out, "# (no tokens)\n");
    else if (!(flags & CFG_PRINT_SECRETS))
        buf_puts(out, "# (secrets are hidden; --print-config does not show them)\n");
    for (size_t i = 0; i < c->ntokens; i++)
        print_token(&c->tokens[i], out, (flags & CFG_PRINT_SECRETS) != 0);
}

static const char example_header[] =
    "# logbucket.conf: configuration of logbucketd (logbucketd -c logbucket.conf).\n"
    "#\n"
    "# A flat INI file: one `key = value` per line, no [sections]. Lines starting\n"
    "# with # or ; are comments, and so is the rest of a line after a blank and #\n"
    "# (or ;). Only token may appear more than once. Every key below is shown\n"
    "# commented out with its default value. Flags override this file:\n"
    "#   logbucketd -c logbucket.conf --listen 0.0.0.0:8086 --set wal_sync=interval\n"
    "# Check a file with: logbucketd -c logbucket.conf --check-config\n"
    "# (This file is generated from the option table in config/config.c.)\n"
    "\n";

static const char print_header[] =
    "# logbucket effective configuration (logbucketd --print-config).\n"
    "# It can be read back with logbucketd -c FILE.\n"
    "\n";

void cfg_print_flags(const struct config *c, struct buf *out, unsigned flags)
{
    buf_puts(out, (flags & CFG_PRINT_DEFAULTS) ? example_header : print_header);
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        if (i > 0)
            buf_putc(out, '\n');
        put_comment(out, o->help);
        if (o->type == OPT_TOKEN) {
            print_tokens(c, out, flags);
            continue;
        }
        if (flags & CFG_PRINT_DEFAULTS)
            buf_puts(out, "# ");
        buf_printf(out, "%s = ", o->name);
        format_value(c, o, out);
        buf_putc(out, '\n');
    }
}

void cfg_print(const struct config *c, struct buf *out)
{
    cfg_print_flags(c, out, 0);
}

/* ---- tokens ------------------------------------------------------------ */

/* Compares over the length of the presented secret, never stopping early. */
static bool ct_equal(const char *stored, const char *given)
{
    size_t ls = strlen(stored), lg = strlen(given);
    unsigned char diff = (unsigned char)(ls != lg);
    for (size_t i = 0; i < lg; i++) {
        size_t j = i < ls ? i : 0;
        unsigned char s = ls ? (unsigned char)stored[j] : 0;
        diff |= (unsigned char)(s ^ (unsigned char)given[i]);
    }
    return diff == 0;
}

const struct cfg_token *cfg_find_token(const struct config *c, const char *secret)
{
    const struct cfg_token *found = NULL;
    if (!secret)
        return NULL;
    for (size_t i = 0; i < c->ntokens; i++) {
        const struct cfg_token *t = &c->tokens[i];
        bool eq = t->secret && ct_equal(t->secret, secret);
        if (eq && !found)
            found = t;
    }
    return found;
}

bool cfg_token_allows(const struct cfg_token *t, unsigned right, const char *db)
{
    if (!t || right == 0)
        return false;
    unsigned have = t->rights;
    if (have & CFG_RIGHT_ADMIN)
        have |= CFG_RIGHT_READ | CFG_RIGHT_WRITE;
    if ((have & right) != right)
        return false;
    if (!db || t->all_dbs)
        return true;
    for (size_t i = 0; i < t->ndbs; i++)
        if (strcmp(t->dbs[i], db) == 0)
            return true;
    return false;
}

uint64_t cfg_block_cache_bytes(const struct config *c, uint64_t memory)
{
    if (c->block_cache_bytes != CFG_SIZE_AUTO)
        return c->block_cache_bytes;
    uint64_t share = memory / 8;
    return share > 64 * MIB ? share : 64 * MIB;
}
