/* The daemon's configuration: struct config, its option table (config.c),
 * the flat INI reader (inih), --set and the command line, cross-option
 * validation and --print-config. Order of precedence: defaults, then the
 * file, then flags, then cfg_validate(). After startup a struct config is
 * read-only and may be shared by any number of threads without locks. */
#ifndef LB_CONFIG_H
#define LB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

enum cfg_wal_sync { CFG_WAL_ALWAYS, CFG_WAL_INTERVAL, CFG_WAL_NONE };

/* A size set to "auto" (block_cache_bytes): the daemon chooses it, see
 * cfg_block_cache_bytes. */
#define CFG_SIZE_AUTO UINT64_MAX

/* Token rights. CFG_RIGHT_ADMIN implies read and write (cfg_token_allows). */
enum { CFG_RIGHT_READ = 1, CFG_RIGHT_WRITE = 2, CFG_RIGHT_ADMIN = 4 };

/* One `token = SECRET RIGHTS DATABASES` line. All pointers owned by the
 * struct config that holds the token. all_dbs is set for `*` (then ndbs = 0). */
struct cfg_token {
    char *secret;
    unsigned rights; /* CFG_RIGHT_* bits, never 0 */
    char **dbs;
    size_t ndbs;
    bool all_dbs;
};

/* Every string is owned (cfg_destroy frees it) and never NULL after
 * cfg_init. Durations are nanoseconds, sizes bytes. */
struct config {
    /* syslog listeners (http/syslog_listen.c); "" = off */
    char *syslog_tcp_listen;
    char *syslog_udp_listen;
    char *syslog_db;                   /* "syslog" */
    char *syslog_event;                /* "" = the app-name */
    char *syslog_default_event;        /* "syslog" */
    bool syslog_host_peer;             /* key syslog_host = hostname|peer; hostname */
    int64_t syslog_max_connections;    /* 256 */
    int64_t syslog_idle_timeout_ns;    /* 5m */
    uint64_t syslog_max_message_bytes; /* 64KiB */
    int64_t syslog_batch_rows;         /* 5000 */
    int64_t syslog_flush_interval_ns;  /* 10ms */

    char *listen;                        /* "127.0.0.1:8086" */
    char *data_dir;                      /* "./data" */
    int64_t http_threads;                /* 0: a thread per connection */
    int64_t max_connections;             /* 1024 */
    int64_t request_timeout_ns;          /* 30s  (key: request_timeout) */
    uint64_t max_body_bytes;             /* 64MiB */
    uint64_t max_line_bytes;             /* 1MiB */
    uint64_t max_key_bytes;              /* 1024 (host/event/tag/field key length) */
    int64_t max_tags_per_line;           /* 1024 */
    int64_t max_fields_per_line;         /* 1024 */
    enum cfg_wal_sync wal_sync;          /* always */
    int64_t wal_sync_interval_ns;        /* 100ms (key: wal_sync_interval) */
    uint64_t memtable_bytes;             /* 128MiB */
    uint64_t block_cache_bytes;          /* auto (CFG_SIZE_AUTO) */
    int64_t max_open_files;              /* 0: half the open-file limit, at most 8192 */
    int64_t background_threads;          /* 1 */
    int64_t default_buckets;             /* 16 (1..1024) */
    bool default_ts_desc;                /* key default_ts_order = desc|asc; desc */
    int64_t default_ttl_ns;              /* 0 = forever (key default_ttl) */
    uint64_t max_disk_bytes;             /* 0 = off (per database) */
    int64_t retention_check_interval_ns; /* 1m */
    int64_t settle_after_ns;             /* 1m; 0 = off */
    bool cold_zstd;                      /* key cold_compression = zstd|lz4hc; zstd */
    int64_t cold_compression_level;      /* 3 (zstd's level, 1..19) */
    bool host_section;                   /* true */
    int64_t reject_older_than_ns;        /* 0 = off */
    int64_t reject_newer_than_ns;        /* 0 = off */
    bool auto_create_databases;          /* true */
    int64_t max_get_rows;                /* 2000 */
    int64_t max_groups;                  /* 100000 */
    bool allow_full_scan;                /* false */
    char *host_tag;                      /* "host" */
    char *default_host;                  /* "" */
    int log_level;                       /* enum log_level of config/log.h; debug|info|warn|error */
    struct cfg_token *tokens;            /* owned array of ntokens */
    size_t ntokens;
    bool insecure;                      /* false */
    int64_t max_connections_per_client; /* 256; 0 = no limit */
    char *tls_cert;                     /* "": plain HTTP */
    char *tls_key;                      /* "" */
    int64_t max_tail_clients;           /* 256 */
    uint64_t tail_buffer_bytes;         /* 1MiB */
    int64_t tail_keepalive_ns;          /* 15s (key: tail_keepalive) */
    char *es_database;                  /* "logs": database of /_bulk */
    char *es_timestamp_field;           /* "@timestamp" */
    char *es_host_fields;               /* "host.name,host,hostname,HOST" */
    char *es_event_fields;              /* "event.dataset,service.name" */
    bool es_event_from_document;        /* false: the index is the event */
    char *es_message_field;             /* "message,MESSAGE" */

    char *loki_db;               /* "logs": database of Loki pushes without db= or X-Scope-OrgID */
    char *loki_host_labels;      /* "host,hostname,instance" */
    char *loki_event_labels;     /* "job,app,service_name" */
    char *loki_default_event;    /* "loki" */
    char *otlp_db;               /* "logs" */
    char *otlp_host_attributes;  /* "host.name" */
    char *otlp_event_attributes; /* "service.name" */
    char *otlp_default_event;    /* "otlp" */
};

/* What the command line asked for besides options. config_path borrows
 * from argv (NULL: no file; the daemon then runs on defaults and flags). */
struct cfg_cli {
    const char *config_path;
    bool check_only; /* --check-config: stop after validation */
    bool print;      /* --print-config */
    bool masked;     /* --print-config=masked: token secrets hidden */
    bool version;    /* --version */
    bool help;       /* -h / --help */
};

/* A listen address split into its parts (cfg_parse_listen). host is the
 * address without brackets ("::1", "0.0.0.0", "localhost"). */
struct cfg_addr {
    char host[256];
    uint16_t port;
    bool is_v6;
};

/* Sets every option to its default (no tokens). */
void cfg_init(struct config *c);
/* Frees everything cfg_init/cfg_set allocated. c may be cfg_init'ed again. */
void cfg_destroy(struct config *c);

/* Sets one option from text, as a file line or `--set key=value` does.
 * `token` appends a token; any other key replaces the current value.
 * origin names where the value came from in messages ("--set",
 * "logbucket.conf:7"). Returns ERR_OK, or ERR_INVAL with one line appended
 * to err: `ORIGIN: KEY = "VALUE": what is allowed`, or for an unknown key
 * `ORIGIN: unknown key "KEY" (did you mean wal_sync?)`. On error c is
 * unchanged. value may carry surrounding blanks and one pair of double
 * quotes; both are removed. */
int cfg_set(struct config *c, const char *key, const char *value, const char *origin,
            struct buf *err);

/* Reads a flat INI file (no sections, `#` or `;` comment lines, inline
 * comments start at a `#` or `;` that follows a blank, lines of at most 197
 * bytes: inih's limit; string values are at most 160 bytes, token values
 * 180). Every key but `token` may appear once per file. Returns ERR_OK;
 * ERR_INVAL with one line per problem (file:line: ...) appended to err; or
 * the ERR_* of errno (ERR_NOTFOUND, ERR_PERM, ERR_IO) with a message naming
 * the path and strerror when the file cannot be read. On error c may hold
 * some of the file's values: the caller should give up on it. */
int cfg_load_file(struct config *c, const char *path, struct buf *err);
/* The same for text in memory; name stands for the file in messages. */
int cfg_load_string(struct config *c, const char *text, const char *name, struct buf *err);

/* Rules spanning options and a re-check of every range (for structs
 * filled by hand): a listen address beyond loopback (not 127.0.0.0/8, ::1
 * or localhost) needs a token or `insecure = true`; tokens need a secret,
 * rights and databases, and secrets must differ. ERR_OK or ERR_INVAL with
 * one line per problem appended to err. */
int cfg_validate(const struct config *c, struct buf *err);

/* Appends the effective config as an INI file that cfg_load_file reads
 * back to the same config, one `# help` comment line before each key;
 * sizes and durations in their largest exact unit. Token secrets are NOT
 * printed by cfg_print: each token is written as a comment with its secret
 * masked (`# token = <secret hidden> read logs`), so printed configs can be
 * pasted into bug reports. CFG_PRINT_SECRETS prints real token lines, and
 * then the round trip covers tokens too. CFG_PRINT_DEFAULTS comments out
 * every key (the format of logbucket.conf.example). */
enum { CFG_PRINT_SECRETS = 1, CFG_PRINT_DEFAULTS = 2 };
void cfg_print(const struct config *c, struct buf *out);

/* The block cache's size: block_cache_bytes, or for auto an eighth of
 * memory (sysmem_limit_bytes), at least 64 MiB (also when memory is 0,
 * unknown). */
uint64_t cfg_block_cache_bytes(const struct config *c, uint64_t memory);
void cfg_print_flags(const struct config *c, struct buf *out, unsigned flags);

/* Sizes: a decimal number with an optional unit, case-insensitive, blanks
 * allowed before the unit: B; k, KiB (1024) and KB (1000); M, MiB, MB; G,
 * GiB, GB; T, TiB, TB; P, PiB, PB. A bare letter (k, M, G, T, P) is binary,
 * as in nginx: 64M = 64MiB. Values over INT64_MAX are refused.
 * ERR_OK or ERR_INVAL; *out written only on success. */
int cfg_parse_size(const char *s, uint64_t *out);
/* Largest exact unit: 67108864 -> "64MiB", 1000000 -> "1MB", 1500 ->
 * "1500", 0 -> "0". Output fits in 24 bytes. */
void cfg_format_size(uint64_t v, char *out, size_t n);

/* Durations: "0", or one or more NUMBER UNIT pairs ("1h30m") with units
 * ns, us (or µs), ms, s, m, h, d (24h), w (7d). Case-sensitive: "M" is not
 * a unit. Negative values and overflow are refused. ERR_OK or ERR_INVAL. */
int cfg_parse_duration(const char *s, int64_t *ns);
/* Largest unit that divides ns exactly: "30d", "12h", "2w", "1500ms", "0".
 * A negative value gets a leading '-'. Output fits in 24 bytes. */
void cfg_format_duration(int64_t ns, char *out, size_t n);

/* Splits "ADDR:PORT" or "[V6ADDR]:PORT"; ADDR is an IPv4 address, a host
 * name, or (bracketed) an IPv6 address; PORT 1..65535. ERR_OK or ERR_INVAL
 * with the reason appended to why (why may be NULL). */
int cfg_parse_listen(const char *s, struct cfg_addr *out, struct buf *why);
/* True for 127.0.0.0/8, ::1 (also ::ffff:127.x.y.z) and "localhost". */
bool cfg_addr_is_loopback(const struct cfg_addr *a);

/* Parses the command line (argv[0] is the program):
 *   -c FILE | --config FILE, --listen ADDR:PORT, --data-dir DIR,
 *   --set KEY=VALUE (repeatable), --check-config, --print-config,
 *   --version, -h | --help;  long options also take --opt=VALUE.
 * REQUIRES: c was cfg_init'ed. Applies the file (if any), then the flags
 * whatever their position, then cfg_validate(). For --help and --version it
 * stops after reading the flags (no file, no validation). A bad flag or a
 * positional argument gives ERR_INVAL with a message and the usage in err;
 * the file and validation give their own errors. cli is always filled. */
int cfg_from_args(struct config *c, int argc, char **argv, struct cfg_cli *cli, struct buf *err);
/* Appends the usage text of the command line. */
void cfg_usage(struct buf *out);

/* The token whose secret equals secret, or NULL. Compares against every
 * token in time independent of where the secrets differ. Borrowed from c. */
const struct cfg_token *cfg_find_token(const struct config *c, const char *secret);
/* True if t has right (CFG_RIGHT_*; admin implies read and write) on db.
 * db NULL asks about the right alone (e.g. SHOW DATABASES). t NULL: false. */
bool cfg_token_allows(const struct cfg_token *t, unsigned right, const char *db);

#endif
