/* Unit tests of config/: value parsers and formatters, every option type,
 * the INI reader (errors name file, line, key and value), the command line
 * (flags override the file), validation, print -> load round trips, tokens
 * and the committed logbucket.conf.example. Table-driven; cmocka in TAP. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/log.h"
#include "config/config.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define KI 1024ULL
#define NS_S 1000000000LL

/* Fails with the text of err when rc is not ERR_OK. */
static void ok_or_print(int rc, struct buf *err)
{
    if (rc != ERR_OK)
        fail_msg("rc=%d (%s): %s", rc, err_name(rc), buf_cstr(err));
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("expected \"%s\" in:\n%s", needle, hay);
}

/* ---- sizes -------------------------------------------------------------- */

static void test_size_good(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        uint64_t want;
    } cases[] = {
        {"0", 0},
        {"1", 1},
        {"1024", 1024},
        {"100B", 100},
        {"100 b", 100},
        {"1k", KI},
        {"1K", KI},
        {"1KiB", KI},
        {"1kib", KI},
        {"1KB", 1000},
        {"1kb", 1000},
        {"64M", 64 * KI * KI},
        {"64MiB", 64 * KI * KI},
        {"64 MiB", 64 * KI * KI},
        {"64MB", 64000000},
        {"2G", 2 * KI * KI * KI},
        {"2GiB", 2 * KI * KI * KI},
        {"2GB", 2000000000},
        {"1T", KI * KI * KI * KI},
        {"1TiB", KI * KI * KI * KI},
        {"3TB", 3000000000000ULL},
        {"1PiB", KI * KI * KI * KI * KI},
        {"8191PiB", 8191 * KI * KI * KI * KI * KI},
        {"9223372036854775807", 9223372036854775807ULL},
    };
    for (size_t i = 0; i < N(cases); i++) {
        uint64_t v = 12345;
        if (cfg_parse_size(cases[i].in, &v) != ERR_OK)
            fail_msg("cfg_parse_size(\"%s\") failed", cases[i].in);
        if (v != cases[i].want)
            fail_msg("cfg_parse_size(\"%s\") = %llu, want %llu", cases[i].in, (unsigned long long)v,
                     (unsigned long long)cases[i].want);
    }
}

static void test_size_bad(void **state)
{
    (void)state;
    static const char *cases[] = {
        "",
        "k",
        "-1",
        "1.5MiB",
        "1 2",
        "1XB",
        "1KiBB",
        "1 k b",
        " 1",
        "1MiB ",
        "0x10",
        "1e6",
        "8192PiB",
        "9223372036854775808",
        "99999999999999999999",
        "1kK",
        "1 MiB x",
        "+1",
    };
    for (size_t i = 0; i < N(cases); i++) {
        uint64_t v = 777;
        if (cfg_parse_size(cases[i], &v) != ERR_INVAL)
            fail_msg("cfg_parse_size(\"%s\") accepted", cases[i]);
        assert_int_equal(v, 777); /* out-parameter untouched on failure */
    }
}

static void test_size_format(void **state)
{
    (void)state;
    static const struct {
        uint64_t in;
        const char *want;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {1000, "1KB"},
        {1024, "1KiB"},
        {1500, "1500"},
        {1536, "1536"}, /* 1.5KiB: no whole unit, plain bytes */
        {64 * KI * KI, "64MiB"},
        {128 * KI * KI, "128MiB"},
        {64000000, "64MB"},
        {2 * KI * KI * KI, "2GiB"},
        {KI * KI * KI * KI, "1TiB"},
        {1000000000000ULL, "1TB"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        char out[32];
        cfg_format_size(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
}

static void test_size_round_trip(void **state)
{
    (void)state;
    static const uint64_t vals[] = {0,
                                    1,
                                    999,
                                    1000,
                                    1024,
                                    4096,
                                    1000000,
                                    1048576,
                                    3 * KI * KI,
                                    5000000000ULL,
                                    7 * KI * KI * KI * KI,
                                    123456789,
                                    9223372036854775807ULL};
    for (size_t i = 0; i < N(vals); i++) {
        char out[32];
        uint64_t back;
        cfg_format_size(vals[i], out, sizeof out);
        assert_int_equal(cfg_parse_size(out, &back), ERR_OK);
        assert_true(back == vals[i]);
    }
}

/* ---- durations ---------------------------------------------------------- */

static void test_duration_good(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int64_t want;
    } cases[] = {
        {"0", 0},
        {"100ns", 100},
        {"1us", 1000},
        {"1\xc2\xb5s", 1000},
        {"500ms", 500000000},
        {"10s", 10 * NS_S},
        {"5m", 300 * NS_S},
        {"12h", 12 * 3600 * NS_S},
        {"30d", 30 * 86400 * NS_S},
        {"2w", 14 * 86400 * NS_S},
        {"1h30m", 5400 * NS_S},
        {"1m30s", 90 * NS_S},
        {"0s", 0},
        {"0ms", 0},
        {"9223372036854775807ns", INT64_MAX},
        {"106751d", 106751LL * 86400 * NS_S},
    };
    for (size_t i = 0; i < N(cases); i++) {
        int64_t v = -1;
        if (cfg_parse_duration(cases[i].in, &v) != ERR_OK)
            fail_msg("cfg_parse_duration(\"%s\") failed", cases[i].in);
        if (v != cases[i].want)
            fail_msg("cfg_parse_duration(\"%s\") = %lld, want %lld", cases[i].in, (long long)v,
                     (long long)cases[i].want);
    }
}

static void test_duration_bad(void **state)
{
    (void)state;
    static const char *cases[] = {
        "",
        "10",
        "s",
        "-1s",
        "1.5s",
        "10 s",
        " 10s",
        "10s ",
        "10S",
        "5M",
        "1y",
        "1ms2",
        "1sec",
        "1min",
        "00",
        "1hh",
        "+1s",
        "10x",
        "1d 1h",
        "9223372036854775808ns",
        "106752d",
        "15251w",
        "9223372036854775807ns1ns",
    };
    for (size_t i = 0; i < N(cases); i++) {
        int64_t v = 777;
        if (cfg_parse_duration(cases[i], &v) != ERR_INVAL)
            fail_msg("cfg_parse_duration(\"%s\") accepted", cases[i]);
        assert_int_equal(v, 777);
    }
}

static void test_duration_format(void **state)
{
    (void)state;
    static const struct {
        int64_t in;
        const char *want;
    } cases[] = {
        {0, "0"},
        {1, "1ns"},
        {1000, "1us"},
        {1500, "1500ns"},
        {100000000, "100ms"},
        {1500000000, "1500ms"},
        {30 * NS_S, "30s"},
        {60 * NS_S, "1m"},
        {90 * NS_S, "90s"},
        {12 * 3600 * NS_S, "12h"},
        {86400 * NS_S, "1d"},
        {30 * 86400 * NS_S, "30d"},
        {14 * 86400 * NS_S, "14d"},
        {-10 * NS_S, "-10s"},
        {INT64_MAX, "9223372036854775807ns"},
        {INT64_MIN, "-9223372036854775808ns"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        char out[32];
        cfg_format_duration(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
}

static void test_duration_round_trip(void **state)
{
    (void)state;
    static const int64_t vals[] = {0,           1,
                                   999,         1000,
                                   1000000,     NS_S,
                                   61 * NS_S,   3600 * NS_S,
                                   5400 * NS_S, 7 * 86400 * NS_S,
                                   123456789,   INT64_MAX - 1,
                                   INT64_MAX};
    for (size_t i = 0; i < N(vals); i++) {
        char out[32];
        int64_t back;
        cfg_format_duration(vals[i], out, sizeof out);
        assert_int_equal(cfg_parse_duration(out, &back), ERR_OK);
        assert_true(back == vals[i]);
    }
}

/* ---- listen addresses ---------------------------------------------------- */

static void test_listen(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *host;
        int port; /* -1: must fail */
        bool v6, loopback;
    } cases[] = {
        {"127.0.0.1:8086", "127.0.0.1", 8086, false, true},
        {"127.1.2.3:1", "127.1.2.3", 1, false, true},
        {"0.0.0.0:8086", "0.0.0.0", 8086, false, false},
        {"10.0.0.5:65535", "10.0.0.5", 65535, false, false},
        {"[::1]:8086", "::1", 8086, true, true},
        {"[::]:8086", "::", 8086, true, false},
        {"[fe80::1]:80", "fe80::1", 80, true, false},
        {"[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80, true, true},
        {"localhost:8086", "localhost", 8086, false, true},
        {"LOCALHOST:8086", "LOCALHOST", 8086, false, true},
        {"db-1.example.com:8086", "db-1.example.com", 8086, false, false},
        {"127.0.0.1:0", "127.0.0.1", 0, false, true},
        {"127.0.0.1:65536", NULL, -1, false, false},
        {"127.0.0.1:", NULL, -1, false, false},
        {"127.0.0.1", NULL, -1, false, false},
        {":8086", NULL, -1, false, false},
        {"::1:8086", NULL, -1, false, false},
        {"[::1]8086", NULL, -1, false, false},
        {"[::1:8086", NULL, -1, false, false},
        {"[127.0.0.1]:8086", NULL, -1, false, false},
        {"999.1.1.1:80", NULL, -1, false, false},
        {"1.2.3:80", NULL, -1, false, false},
        {"host name:80", NULL, -1, false, false},
        {"127.0.0.1:80x", NULL, -1, false, false},
        {"127.0.0.1:-80", NULL, -1, false, false},
        {"", NULL, -1, false, false},
    };
    for (size_t i = 0; i < N(cases); i++) {
        struct cfg_addr a;
        struct buf why = BUF_INIT;
        int rc = cfg_parse_listen(cases[i].in, &a, &why);
        if (cases[i].port < 0) {
            if (rc != ERR_INVAL)
                fail_msg("cfg_parse_listen(\"%s\") accepted", cases[i].in);
            assert_true(why.len > 0);
        } else {
            if (rc != ERR_OK)
                fail_msg("cfg_parse_listen(\"%s\"): %s", cases[i].in, buf_cstr(&why));
            assert_string_equal(a.host, cases[i].host);
            assert_int_equal(a.port, cases[i].port);
            assert_int_equal(a.is_v6, cases[i].v6);
            if (cfg_addr_is_loopback(&a) != cases[i].loopback)
                fail_msg("loopback(%s) wrong", cases[i].in);
        }
        buf_destroy(&why);
    }
}

/* ---- cfg_set over every type -------------------------------------------- */

struct set_case {
    const char *key, *value;
    bool ok;
    const char *msg; /* expected in the error text (ok = false) */
};

static const struct set_case set_cases[] = {
    /* string */
    {"data_dir", "/var/lib/logbucket", true, NULL},
    {"data_dir", "", false, "must not be empty"},
    {"data_dir", "\"/path with space\"", true, NULL},
    {"data_dir", "a ;b", false, "starts a comment"},
    {"host_tag", "source", true, NULL},
    {"host_tag", "a,b", false, "tag key"},
    {"default_host", "", true, NULL},
    {"default_host", "web-1", true, NULL},
    /* bool */
    {"insecure", "true", true, NULL},
    {"insecure", "FALSE", true, NULL},
    {"insecure", "yes", true, NULL},
    {"insecure", "no", true, NULL},
    {"insecure", "on", true, NULL},
    {"insecure", "off", true, NULL},
    {"insecure", "1", true, NULL},
    {"insecure", "0", true, NULL},
    {"insecure", "maybe", false, "expected true or false"},
    {"insecure", "", false, "expected true or false"},
    {"insecure", "2", false, "expected true or false"},
    /* int with range */
    {"http_threads", "0", true, NULL},
    {"http_threads", "1", true, NULL},
    {"http_threads", "1024", true, NULL},
    {"http_threads", "-1", false, "expected an integer from 0 to 1024"},
    {"http_threads", "1025", false, "from 0 to 1024"},
    {"http_threads", "-3", false, "from 0 to 1024"},
    {"http_threads", "two", false, "from 0 to 1024"},
    {"http_threads", "3x", false, "from 0 to 1024"},
    {"http_threads", "99999999999999999999", false, "from 0 to 1024"},
    {"max_connections", "0", false, "expected an integer from 1 to 1000000"},
    {"default_buckets", "1024", true, NULL},
    {"default_buckets", "1025", false, "from 1 to 1024"},
    {"max_tags_per_line", "1024", true, NULL},
    {"max_get_rows", "2000", true, NULL},
    /* size with range */
    {"max_body_bytes", "1GiB", true, NULL},
    {"max_body_bytes", "1k", true, NULL},
    {"max_body_bytes", "10", false, "expected a size from 1KiB to 64GiB"},
    {"max_body_bytes", "lots", false, "units B, k/KiB=1024, KB=1000"},
    {"block_cache_bytes", "0", true, NULL},
    {"block_cache_bytes", "auto", true, NULL},
    {"block_cache_bytes", "AUTO", true, NULL},
    {"block_cache_bytes", "autox", false,
     "units B, k/KiB=1024, KB=1000, M/MiB, MB, G/GiB, GB, "
     "T/TiB, TB), or auto"},
    {"memtable_bytes", "auto", false,
     "units B, k/KiB=1024, KB=1000, M/MiB, MB, G/GiB, GB, "
     "T/TiB, TB)\n"},
    {"memtable_bytes", "1KiB", false, "from 1MiB to 1TiB"},
    {"max_key_bytes", "1024", true, NULL},
    /* duration with range */
    {"request_timeout", "1500ms", true, NULL},
    {"request_timeout", "500ms", false, "from 1s to 1d"},
    {"request_timeout", "0", false, "from 1s to 1d"},
    {"request_timeout", "10", false, "expected a duration such as 500ms"},
    {"wal_sync_interval", "2m", false, "from 1ms to 1m"},
    {"default_ttl", "30d", true, NULL},
    {"default_ttl", "0", true, NULL},
    {"default_ttl", "-1d", false, "expected a duration"},
    {"retention_check_interval", "100ms", true, NULL},
    {"reject_older_than", "2w", true, NULL},
    {"reject_newer_than", "5m", true, NULL},
    /* enums */
    {"wal_sync", "always", true, NULL},
    {"wal_sync", "interval", true, NULL},
    {"wal_sync", "NONE", true, NULL},
    {"wal_sync", "sometimes", false, "expected one of always, interval, none"},
    {"default_ts_order", "asc", true, NULL},
    {"default_ts_order", "up", false, "expected one of desc, asc"},
    {"log_level", "debug", true, NULL},
    {"log_level", "trace", false, "expected one of debug, info, warn, error"},
    {"cold_compression", "lz4hc", true, NULL},
    {"cold_compression", "ZSTD", true, NULL},
    {"cold_compression", "brotli", false, "expected one of zstd, lz4hc"},
    {"cold_compression_level", "19", true, NULL},
    {"cold_compression_level", "0", false, "expected an integer from 1 to 19"},
    {"cold_compression_level", "20", false, "expected an integer from 1 to 19"},
    /* listen */
    {"listen", "[::1]:9999", true, NULL},
    {"listen", "0.0.0.0:65536", false, "port must be a number from 0 to 65535"},
    {"listen", "8086", false, "expected ADDR:PORT"},
    /* tokens */
    {"token", "s3cr3t write,read logs,metrics", true, NULL},
    {"token", "adm1n admin *", true, NULL},
    {"token", "  x   read   a  ", true, NULL},
    {"token", "s3cr3t", false, "expected SECRET RIGHTS DATABASES"},
    {"token", "s3cr3t read", false, "expected SECRET RIGHTS DATABASES"},
    {"token", "s3cr3t read logs extra", false, "expected SECRET RIGHTS DATABASES"},
    {"token", "", false, "expected SECRET RIGHTS DATABASES"},
    {"token", "s3cr3t rw logs", false, "RIGHTS must be a comma list of read, write, admin"},
    {"token", "s3cr3t read,,write logs", false, "RIGHTS must be"},
    {"token", "s3cr3t read, logs", false, "RIGHTS must be"},
    {"token", "s3cr3t read logs,,metrics", false, "DATABASES must be *"},
    {"token", "s3cr3t read *,logs", false, "DATABASES must be *"},
    {"token", "s3cr3t read ../etc", false, "DATABASES must be *"},
    {"token", "s3cr3t read logs/x", false, "DATABASES must be *"},
    {"token", "s3cr3t read logs,", false, "DATABASES must be *"},
    /* unknown keys */
    {"wal_synk", "always", false, "unknown key \"wal_synk\" (did you mean wal_sync?)"},
    {"WAL_SYNC", "always", false, "did you mean wal_sync?"},
    {"data-dir", "x", false, "did you mean data_dir?"},
    {"retention_check_intervall", "1m", false, "did you mean retention_check_interval?"},
    {"completely_unrelated", "1", false, "unknown key \"completely_unrelated\""},
};

static void test_set_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(set_cases); i++) {
        const struct set_case *t = &set_cases[i];
        struct config c, before;
        struct buf err = BUF_INIT, p1 = BUF_INIT, p2 = BUF_INIT;
        cfg_init(&c);
        cfg_init(&before);
        int rc = cfg_set(&c, t->key, t->value, "--set", &err);
        if (t->ok && rc != ERR_OK)
            fail_msg("case %zu: %s = \"%s\" refused: %s", i, t->key, t->value, buf_cstr(&err));
        if (!t->ok) {
            if (rc != ERR_INVAL)
                fail_msg("case %zu: %s = \"%s\" accepted", i, t->key, t->value);
            assert_contains(buf_cstr(&err), t->msg);
            assert_contains(buf_cstr(&err), "--set: ");
            /* A refused value leaves the config as it was. */
            cfg_print_flags(&c, &p1, CFG_PRINT_SECRETS);
            cfg_print_flags(&before, &p2, CFG_PRINT_SECRETS);
            assert_string_equal(buf_cstr(&p1), buf_cstr(&p2));
        }
        buf_destroy(&err);
        buf_destroy(&p1);
        buf_destroy(&p2);
        cfg_destroy(&c);
        cfg_destroy(&before);
    }
}

static void test_set_values_land(void **state)
{
    (void)state;
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    static const char *kv[][2] = {
        {"listen", "[::1]:9000"},
        {"data_dir", "/srv/lb"},
        {"http_threads", "8"},
        {"max_connections", "50"},
        {"request_timeout", "5s"},
        {"max_body_bytes", "8MiB"},
        {"max_line_bytes", "64KB"},
        {"max_key_bytes", "256"},
        {"max_tags_per_line", "32"},
        {"max_fields_per_line", "33"},
        {"wal_sync", "interval"},
        {"wal_sync_interval", "250ms"},
        {"memtable_bytes", "32M"},
        {"block_cache_bytes", "1G"},
        {"background_threads", "3"},
        {"default_buckets", "64"},
        {"default_ts_order", "asc"},
        {"default_ttl", "30d"},
        {"retention_check_interval", "10s"},
        {"reject_older_than", "1w"},
        {"reject_newer_than", "1h"},
        {"auto_create_databases", "no"},
        {"max_get_rows", "100"},
        {"allow_full_scan", "on"},
        {"host_tag", "hostname"},
        {"default_host", "unknown"},
        {"log_level", "warn"},
        {"insecure", "yes"},
    };
    for (size_t i = 0; i < N(kv); i++)
        ok_or_print(cfg_set(&c, kv[i][0], kv[i][1], "test", &err), &err);
    assert_string_equal(c.listen, "[::1]:9000");
    assert_string_equal(c.data_dir, "/srv/lb");
    assert_int_equal(c.http_threads, 8);
    assert_int_equal(c.max_connections, 50);
    assert_int_equal(c.request_timeout_ns, 5 * NS_S);
    assert_int_equal(c.max_body_bytes, 8 * KI * KI);
    assert_int_equal(c.max_line_bytes, 64000);
    assert_int_equal(c.max_key_bytes, 256);
    assert_int_equal(c.max_tags_per_line, 32);
    assert_int_equal(c.max_fields_per_line, 33);
    assert_int_equal(c.wal_sync, CFG_WAL_INTERVAL);
    assert_int_equal(c.wal_sync_interval_ns, 250000000);
    assert_int_equal(c.memtable_bytes, 32 * KI * KI);
    assert_int_equal(c.block_cache_bytes, KI * KI * KI);
    assert_int_equal(c.background_threads, 3);
    assert_int_equal(c.default_buckets, 64);
    assert_false(c.default_ts_desc);
    assert_int_equal(c.default_ttl_ns, 30 * 86400 * NS_S);
    assert_int_equal(c.retention_check_interval_ns, 10 * NS_S);
    assert_int_equal(c.reject_older_than_ns, 7 * 86400 * NS_S);
    assert_int_equal(c.reject_newer_than_ns, 3600 * NS_S);
    assert_false(c.auto_create_databases);
    assert_int_equal(c.max_get_rows, 100);
    assert_true(c.allow_full_scan);
    assert_string_equal(c.host_tag, "hostname");
    assert_string_equal(c.default_host, "unknown");
    assert_int_equal(c.log_level, LOG_WARN);
    assert_true(c.insecure);
    ok_or_print(cfg_validate(&c, &err), &err);
    buf_destroy(&err);
    cfg_destroy(&c);
}

static void test_defaults(void **state)
{
    (void)state;
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    assert_string_equal(c.listen, "127.0.0.1:8086");
    assert_string_equal(c.data_dir, "./data");
    assert_int_equal(c.http_threads, 0);
    assert_int_equal(c.max_connections, 1024);
    assert_int_equal(c.request_timeout_ns, 30 * NS_S);
    assert_int_equal(c.max_body_bytes, 64 * KI * KI);
    assert_int_equal(c.max_line_bytes, KI * KI);
    assert_int_equal(c.max_key_bytes, 1024);
    assert_int_equal(c.max_tags_per_line, 1024);
    assert_int_equal(c.max_fields_per_line, 1024);
    assert_int_equal(c.wal_sync, CFG_WAL_ALWAYS);
    assert_int_equal(c.wal_sync_interval_ns, 100000000);
    assert_int_equal(c.memtable_bytes, 128 * KI * KI);
    assert_true(c.block_cache_bytes == CFG_SIZE_AUTO);
    assert_int_equal(c.background_threads, 2);
    assert_int_equal(c.default_buckets, 16);
    assert_true(c.default_ts_desc);
    assert_int_equal(c.default_ttl_ns, 0);
    assert_int_equal(c.retention_check_interval_ns, 60 * NS_S);
    assert_int_equal(c.reject_older_than_ns, 0);
    assert_int_equal(c.reject_newer_than_ns, 0);
    assert_true(c.auto_create_databases);
    assert_int_equal(c.max_get_rows, 2000);
    assert_false(c.allow_full_scan);
    assert_string_equal(c.host_tag, "host");
    assert_string_equal(c.default_host, "");
    assert_int_equal(c.log_level, LOG_INFO);
    assert_int_equal(c.ntokens, 0);
    assert_null(c.tokens);
    assert_false(c.insecure);
    ok_or_print(cfg_validate(&c, &err), &err);
    buf_destroy(&err);
    cfg_destroy(&c);
    cfg_destroy(&c); /* a second destroy is harmless */
}

/* ---- files ---------------------------------------------------------------- */

/* auto is an eighth of memory, at least 64 MiB; a size set is itself */
static void test_block_cache_auto(void **state)
{
    (void)state;
    struct config c;
    cfg_init(&c);
    const uint64_t mib = KI * KI;
    assert_true(cfg_block_cache_bytes(&c, 24 * 1024 * mib) == 3 * 1024 * mib);
    assert_true(cfg_block_cache_bytes(&c, 256 * mib) == 64 * mib);
    assert_true(cfg_block_cache_bytes(&c, 0) == 64 * mib);
    struct buf err = BUF_INIT;
    assert_int_equal(cfg_set(&c, "block_cache_bytes", "16MiB", "test", &err), ERR_OK);
    assert_true(cfg_block_cache_bytes(&c, 24 * 1024 * mib) == 16 * mib);
    assert_int_equal(cfg_set(&c, "block_cache_bytes", "0", "test", &err), ERR_OK);
    assert_true(cfg_block_cache_bytes(&c, 24 * 1024 * mib) == 0);
    assert_int_equal(cfg_set(&c, "block_cache_bytes", "Auto", "test", &err), ERR_OK);
    assert_int_equal(cfg_validate(&c, &err), ERR_OK);
    struct buf out = BUF_INIT;
    cfg_print(&c, &out);
    assert_non_null(strstr(buf_cstr(&out), "\nblock_cache_bytes = auto\n"));
    buf_destroy(&out);
    buf_destroy(&err);
    cfg_destroy(&c);
}

static void test_file_good(void **state)
{
    (void)state;
    const char *text = "\xef\xbb\xbf# a comment\n"
                       "; another comment\n"
                       "\n"
                       "listen = 0.0.0.0:9000\n"
                       "   data_dir = /srv/data   # inline comment\n"
                       "wal_sync=interval ; inih inline comment\n"
                       "wal_sync_interval = 20ms\r\n"
                       "default_host = \"web #1\"   # quoted '#' stays\n"
                       "host_tag = h#x\n"
                       "token = s3cr3t write,read logs,metrics\n"
                       "token = adm1n admin *\n"
                       "\t\n";
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    ok_or_print(cfg_load_string(&c, text, "good.conf", &err), &err);
    assert_string_equal(c.listen, "0.0.0.0:9000");
    assert_string_equal(c.data_dir, "/srv/data");
    assert_int_equal(c.wal_sync, CFG_WAL_INTERVAL);
    assert_int_equal(c.wal_sync_interval_ns, 20000000);
    assert_string_equal(c.default_host, "web #1");
    assert_string_equal(c.host_tag, "h#x");
    assert_int_equal(c.ntokens, 2);
    assert_string_equal(c.tokens[0].secret, "s3cr3t");
    assert_int_equal(c.tokens[0].rights, CFG_RIGHT_READ | CFG_RIGHT_WRITE);
    assert_int_equal(c.tokens[0].ndbs, 2);
    assert_string_equal(c.tokens[0].dbs[0], "logs");
    assert_string_equal(c.tokens[0].dbs[1], "metrics");
    assert_false(c.tokens[0].all_dbs);
    assert_string_equal(c.tokens[1].secret, "adm1n");
    assert_int_equal(c.tokens[1].rights, CFG_RIGHT_ADMIN);
    assert_true(c.tokens[1].all_dbs);
    assert_int_equal(c.tokens[1].ndbs, 0);
    ok_or_print(cfg_validate(&c, &err), &err); /* non-loopback, but tokens */
    buf_destroy(&err);
    cfg_destroy(&c);
}

struct file_case {
    const char *text;
    const char *msgs[3]; /* each must appear in the error text */
};

static const struct file_case bad_files[] = {
    {"listen = 127.0.0.1:8086\n"
     "\n"
     "# x\n"
     "\n"
     "\n"
     "\n"
     "wal_sync = sometimes\n",
     {"bad.conf:7: wal_sync = \"sometimes\": expected one of always, interval, none"}},
    {"wal_synk = none\n", {"bad.conf:1: unknown key \"wal_synk\" (did you mean wal_sync?)"}},
    {"[server]\nlisten = 127.0.0.1:1\n", {"bad.conf:1: sections are not used"}},
    {"\n\njust words\n", {"bad.conf:3: expected key = value, got \"just words\""}},
    {"listen: 127.0.0.1:1\n", {"bad.conf:1: expected key = value"}},
    {"= 5\n", {"bad.conf:1: expected key = value: the key is missing"}},
    {"token s3cr3t read *\n", {"bad.conf:1: expected key = value, got \"token <hidden>\""}},
    {"http_threads = 2\nhttp_threads = 3\n",
     {"bad.conf:2: http_threads is set again (first on line 1); only token may repeat"}},
    {"token = s3cr3t rw logs\n",
     {"bad.conf:1: token = \"<secret hidden> rw logs\": RIGHTS must be"}},
    {"max_body_bytes = 10 parsecs\n", {"bad.conf:1: max_body_bytes = \"10 parsecs\""}},
    {"request_timeout = 10\n", {"bad.conf:1: request_timeout = \"10\": expected a duration"}},
    /* An indented line is a key of its own, not a continuation. */
    {"data_dir = /a\n  wal_sync = bogus\n", {"bad.conf:2: wal_sync = \"bogus\""}},
    /* Several errors are all reported. */
    {"a = 1\nb = 2\nwal_sync = x\n",
     {"bad.conf:1: unknown key \"a\"", "bad.conf:2: unknown key \"b\"", "bad.conf:3: wal_sync"}},
};

static void test_file_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < N(bad_files); i++) {
        struct config c;
        struct buf err = BUF_INIT;
        cfg_init(&c);
        int rc = cfg_load_string(&c, bad_files[i].text, "bad.conf", &err);
        if (rc != ERR_INVAL)
            fail_msg("bad file %zu accepted (rc=%d)", i, rc);
        for (size_t j = 0; j < 3 && bad_files[i].msgs[j]; j++)
            assert_contains(buf_cstr(&err), bad_files[i].msgs[j]);
        /* The secret of a token never shows in messages. */
        assert_null(strstr(buf_cstr(&err), "s3cr3t"));
        buf_destroy(&err);
        cfg_destroy(&c);
    }
}

static void test_file_long_line(void **state)
{
    (void)state;
    struct buf text = BUF_INIT, err = BUF_INIT;
    struct config c;
    buf_puts(&text, "# ok\ntoken = ");
    for (int i = 0; i < 300; i++)
        buf_putc(&text, 'x');
    buf_puts(&text, " read * \nwal_sync = none\n");
    cfg_init(&c);
    assert_int_equal(cfg_load_string(&c, buf_cstr(&text), "long.conf", &err), ERR_INVAL);
    assert_contains(buf_cstr(&err), "long.conf:2: line too long");
    /* The rest of the long line is not read as a line of its own. */
    assert_null(strstr(buf_cstr(&err), "long.conf:3"));
    assert_int_equal(c.wal_sync, CFG_WAL_NONE);
    assert_int_equal(c.ntokens, 0);
    buf_destroy(&text);
    buf_destroy(&err);
    cfg_destroy(&c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void test_file_missing(void **state)
{
    (void)state;
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    int rc = cfg_load_file(&c, "/nonexistent/logbucket.conf", &err);
    assert_int_equal(rc, ERR_NOTFOUND);
    assert_contains(buf_cstr(&err), "/nonexistent/logbucket.conf");
    assert_contains(buf_cstr(&err), "No such file or directory");
    buf_reset(&err);
    rc = cfg_load_file(&c, "/", &err);
    assert_int_not_equal(rc, ERR_OK);
    assert_contains(buf_cstr(&err), "Is a directory");
    buf_destroy(&err);
    cfg_destroy(&c);
}

static void test_file_on_disk(void **state)
{
    (void)state;
    char path[] = "/tmp/lbcfgXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "wal_sync = none\nhttp_threads = 7\n");
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    ok_or_print(cfg_load_file(&c, path, &err), &err);
    assert_int_equal(c.wal_sync, CFG_WAL_NONE);
    assert_int_equal(c.http_threads, 7);
    write_file(path, "\n\nwal_sync = sometimes\n");
    assert_int_equal(cfg_load_file(&c, path, &err), ERR_INVAL);
    char want[128];
    snprintf(want, sizeof want, "%s:3: wal_sync = \"sometimes\"", path);
    assert_contains(buf_cstr(&err), want);
    unlink(path);
    buf_destroy(&err);
    cfg_destroy(&c);
}

/* ---- command line ------------------------------------------------------- */

struct args_run {
    struct config c;
    struct cfg_cli cli;
    struct buf err;
    int rc;
};

static void run_args(struct args_run *r, const char *const *args, size_t n)
{
    char *argv[32];
    assert_true(n < 32);
    argv[0] = (char *)"logbucketd";
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    cfg_init(&r->c);
    buf_init(&r->err);
    r->rc = cfg_from_args(&r->c, (int)n + 1, argv, &r->cli, &r->err);
}

static void args_done(struct args_run *r)
{
    cfg_destroy(&r->c);
    buf_destroy(&r->err);
}

static void test_args_override_order(void **state)
{
    (void)state;
    char path[] = "/tmp/lbcfgXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "wal_sync = interval\nhttp_threads = 4\ndata_dir = /from/file\n"
                     "listen = 127.0.0.1:7000\ntoken = filetok read logs\n");
    /* Flags come before -c on purpose: they still win over the file. */
    const char *args[] = {"--set",      "wal_sync=none", "--data-dir=/from/flag", "--listen",
                          "[::1]:7001", "--set",         "token=flagtok write *", "-c",
                          path,         "--set",         "http_threads = 9",      "--check-config"};
    struct args_run r;
    run_args(&r, args, N(args));
    ok_or_print(r.rc, &r.err);
    assert_string_equal(r.cli.config_path, path);
    assert_true(r.cli.check_only);
    assert_false(r.cli.print);
    assert_int_equal(r.c.wal_sync, CFG_WAL_NONE);
    assert_int_equal(r.c.http_threads, 9);
    assert_string_equal(r.c.data_dir, "/from/flag");
    assert_string_equal(r.c.listen, "[::1]:7001");
    assert_int_equal(r.c.ntokens, 2); /* tokens add up */
    assert_string_equal(r.c.tokens[0].secret, "filetok");
    assert_string_equal(r.c.tokens[1].secret, "flagtok");
    args_done(&r);

    /* Without flags the file's values stand. */
    const char *args2[] = {"--config", path, "--print-config"};
    run_args(&r, args2, N(args2));
    ok_or_print(r.rc, &r.err);
    assert_true(r.cli.print);
    assert_int_equal(r.c.wal_sync, CFG_WAL_INTERVAL);
    assert_string_equal(r.c.data_dir, "/from/file");
    args_done(&r);
    unlink(path);
}

static void test_args_no_file(void **state)
{
    (void)state;
    struct args_run r;
    run_args(&r, NULL, 0);
    ok_or_print(r.rc, &r.err);
    assert_null(r.cli.config_path);
    assert_false(r.cli.check_only || r.cli.print || r.cli.version || r.cli.help);
    assert_string_equal(r.c.listen, "127.0.0.1:8086");
    args_done(&r);

    const char *args[] = {"--version"};
    run_args(&r, args, 1);
    ok_or_print(r.rc, &r.err);
    assert_true(r.cli.version);
    args_done(&r);

    /* --help stops before the (missing) file is read. */
    const char *args2[] = {"-c", "/nonexistent.conf", "-h"};
    run_args(&r, args2, N(args2));
    ok_or_print(r.rc, &r.err);
    assert_true(r.cli.help);
    args_done(&r);

    struct buf u = BUF_INIT;
    cfg_usage(&u);
    assert_contains(buf_cstr(&u), "--check-config");
    assert_contains(buf_cstr(&u), "--set KEY=VALUE");
    buf_destroy(&u);
}

static void test_args_bad(void **state)
{
    (void)state;
    static const struct {
        const char *args[4];
        const char *msg;
        bool usage;
    } cases[] = {
        {{"--bogus"}, "unknown option --bogus", true},
        {{"-x"}, "unknown option -x", true},
        {{"logbucket.conf"}, "unexpected argument \"logbucket.conf\"", true},
        {{"--listen"}, "option --listen needs a value", true},
        {{"-c"}, "option -c needs a value", true},
        {{"--set", "wal_sync"}, "expected KEY=VALUE", true},
        {{"--set", "=x"}, "expected KEY=VALUE", true},
        {{"-c", "a", "-c", "b"}, "only one config file", true},
        {{"--listenx=1"}, "unknown option --listenx=1", true},
        {{"--set", "wal_sync=sometimes"},
         "--set: wal_sync = \"sometimes\": expected one of always, interval, none",
         false},
        {{"--set", "wal_synk=none"},
         "--set: unknown key \"wal_synk\" (did you mean wal_sync?)",
         false},
        {{"--listen", "1.2.3.4:99999"}, "--listen: listen = \"1.2.3.4:99999\"", false},
        {{"--data-dir="}, "--data-dir: data_dir = \"\": must not be empty", false},
        {{"-c", "/nonexistent/x.conf"}, "cannot open config file /nonexistent/x.conf", false},
        {{"--listen", "0.0.0.0:8086"}, "add a line token = SECRET RIGHTS DATABASES", false},
    };
    for (size_t i = 0; i < N(cases); i++) {
        size_t n = 0;
        while (n < 4 && cases[i].args[n])
            n++;
        struct args_run r;
        run_args(&r, cases[i].args, n);
        if (r.rc == ERR_OK)
            fail_msg("case %zu (%s) accepted", i, cases[i].args[0]);
        assert_contains(buf_cstr(&r.err), cases[i].msg);
        if (cases[i].usage)
            assert_contains(buf_cstr(&r.err), "usage: logbucketd");
        args_done(&r);
    }
}

/* ---- validation ------------------------------------------------------------ */

static void test_validate_listen(void **state)
{
    (void)state;
    static const struct {
        const char *listen;
        const char *token; /* NULL: none */
        bool insecure;
        bool ok;
    } cases[] = {
        {"127.0.0.1:8086", NULL, false, true},     {"127.9.9.9:8086", NULL, false, true},
        {"localhost:8086", NULL, false, true},     {"[::1]:8086", NULL, false, true},
        {"0.0.0.0:8086", NULL, false, false},      {"[::]:8086", NULL, false, false},
        {"10.1.2.3:8086", NULL, false, false},     {"example.com:8086", NULL, false, false},
        {"0.0.0.0:8086", NULL, true, true},        {"0.0.0.0:8086", "tok read *", false, true},
        {"[::]:8086", "tok admin *", false, true},
    };
    for (size_t i = 0; i < N(cases); i++) {
        struct config c;
        struct buf err = BUF_INIT;
        cfg_init(&c);
        ok_or_print(cfg_set(&c, "listen", cases[i].listen, "t", &err), &err);
        if (cases[i].token)
            ok_or_print(cfg_set(&c, "token", cases[i].token, "t", &err), &err);
        c.insecure = cases[i].insecure;
        int rc = cfg_validate(&c, &err);
        if (cases[i].ok && rc != ERR_OK)
            fail_msg("case %zu refused: %s", i, buf_cstr(&err));
        if (!cases[i].ok) {
            assert_int_equal(rc, ERR_INVAL);
            assert_contains(buf_cstr(&err), "beyond loopback");
            assert_contains(buf_cstr(&err), "insecure = true");
            assert_contains(buf_cstr(&err), cases[i].listen);
        }
        buf_destroy(&err);
        cfg_destroy(&c);
    }
}

static void test_validate_by_hand(void **state)
{
    (void)state;
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    ok_or_print(cfg_set(&c, "token", "same read *", "t", &err), &err);
    ok_or_print(cfg_set(&c, "token", "same write logs", "t", &err), &err);
    assert_int_equal(cfg_validate(&c, &err), ERR_INVAL);
    assert_contains(buf_cstr(&err), "token 2: same secret as token 1");
    assert_null(strstr(buf_cstr(&err), "same read")); /* no secret in the text */
    buf_reset(&err);

    /* Fields changed by hand are re-checked. */
    c.tokens[1].secret[0] = '\0';
    c.tokens[0].rights = 0;
    c.http_threads = -1;
    c.max_body_bytes = UINT64_MAX;
    c.wal_sync = (enum cfg_wal_sync)7;
    assert_int_equal(cfg_validate(&c, &err), ERR_INVAL);
    assert_contains(buf_cstr(&err), "token 2: the secret is empty");
    assert_contains(buf_cstr(&err), "token 1: rights");
    assert_contains(buf_cstr(&err), "http_threads = \"-1\"");
    assert_contains(buf_cstr(&err), "max_body_bytes = \"18446744073709551615\"");
    assert_contains(buf_cstr(&err), "wal_sync holds 7");
    buf_destroy(&err);
    cfg_destroy(&c);
}

/* ---- print -> load ------------------------------------------------------- */

static void fill_unusual(struct config *c)
{
    struct buf err = BUF_INIT;
    static const char *kv[][2] = {
        {"listen", "[::]:9100"},
        {"data_dir", "/var/lib/log bucket"},
        {"http_threads", "3"},
        {"request_timeout", "1500ms"},
        {"max_body_bytes", "5000000"},
        {"max_line_bytes", "3000"},
        {"wal_sync", "none"},
        {"retention_check_interval", "1h30m"},
        {"memtable_bytes", "3GiB"},
        {"block_cache_bytes", "0"},
        {"default_ts_order", "asc"},
        {"default_ttl", "14d"},
        {"reject_newer_than", "90s"},
        {"auto_create_databases", "false"},
        {"allow_full_scan", "true"},
        {"default_host", "\" web #7 \""},
        {"host_tag", "src"},
        {"log_level", "error"},
        {"token", "s3cr3t write,read logs,metrics"},
        {"token", "adm1n admin *"},
    };
    for (size_t i = 0; i < N(kv); i++)
        ok_or_print(cfg_set(c, kv[i][0], kv[i][1], "t", &err), &err);
    buf_destroy(&err);
}

/* Prints c with flags, loads the text into a fresh config, prints that. */
static void round_trip(const struct config *c, unsigned flags, struct config *back,
                       struct buf *first, struct buf *second)
{
    struct buf err = BUF_INIT;
    cfg_print_flags(c, first, flags);
    cfg_init(back);
    ok_or_print(cfg_load_string(back, buf_cstr(first), "printed.conf", &err), &err);
    cfg_print_flags(back, second, flags);
    buf_destroy(&err);
}

static void test_print_round_trip(void **state)
{
    (void)state;
    struct config c, back;
    struct buf p1 = BUF_INIT, p2 = BUF_INIT, err = BUF_INIT;
    cfg_init(&c);
    fill_unusual(&c);

    /* With secrets: the whole config survives. */
    round_trip(&c, CFG_PRINT_SECRETS, &back, &p1, &p2);
    assert_string_equal(buf_cstr(&p1), buf_cstr(&p2));
    assert_string_equal(back.default_host, " web #7 ");
    assert_string_equal(back.data_dir, "/var/lib/log bucket");
    assert_int_equal(back.retention_check_interval_ns, 5400 * NS_S);
    assert_int_equal(back.max_body_bytes, 5000000);
    assert_int_equal(back.ntokens, 2);
    assert_string_equal(back.tokens[0].secret, "s3cr3t");
    assert_int_equal(back.tokens[0].rights, CFG_RIGHT_READ | CFG_RIGHT_WRITE);
    assert_true(back.tokens[1].all_dbs);
    assert_contains(buf_cstr(&p1), "retention_check_interval = 90m\n");
    assert_contains(buf_cstr(&p1), "memtable_bytes = 3GiB\n");
    assert_contains(buf_cstr(&p1), "max_body_bytes = 5MB\n");
    assert_contains(buf_cstr(&p1), "default_ttl = 14d\n");
    assert_contains(buf_cstr(&p1), "request_timeout = 1500ms\n");
    assert_contains(buf_cstr(&p1), "token = s3cr3t read,write logs,metrics\n");
    assert_contains(buf_cstr(&p1), "# Retention of a new database");
    ok_or_print(cfg_validate(&back, &err), &err);
    cfg_destroy(&back);
    buf_reset(&p1);
    buf_reset(&p2);

    /* Default print hides secrets; every other key still round-trips. */
    round_trip(&c, 0, &back, &p1, &p2);
    assert_null(strstr(buf_cstr(&p1), "s3cr3t"));
    assert_null(strstr(buf_cstr(&p1), "adm1n"));
    assert_contains(buf_cstr(&p1), "# token = <secret hidden> read,write logs,metrics\n");
    assert_int_equal(back.ntokens, 0);
    /* Equal apart from the token lines. */
    back.insecure = c.insecure;
    struct buf q1 = BUF_INIT, q2 = BUF_INIT;
    struct config no_tokens = c;
    no_tokens.ntokens = 0;
    cfg_print_flags(&no_tokens, &q1, 0);
    cfg_print_flags(&back, &q2, 0);
    assert_string_equal(buf_cstr(&q1), buf_cstr(&q2));
    buf_destroy(&q1);
    buf_destroy(&q2);
    cfg_destroy(&back);

    buf_destroy(&p1);
    buf_destroy(&p2);
    buf_destroy(&err);
    cfg_destroy(&c);
}

/* The longest values cfg_set accepts still fit inih's lines when printed. */
static void test_print_longest_values(void **state)
{
    (void)state;
    struct config c, back;
    struct buf p1 = BUF_INIT, p2 = BUF_INIT, err = BUF_INIT, v = BUF_INIT;
    cfg_init(&c);
    for (int i = 0; i < 160; i++)
        buf_putc(&v, i % 10 == 3 ? '#' : (i % 10 == 5 ? ' ' : 'a'));
    ok_or_print(cfg_set(&c, "default_host", buf_cstr(&v), "t", &err), &err);
    ok_or_print(cfg_set(&c, "data_dir", buf_cstr(&v), "t", &err), &err);
    buf_putc(&v, 'x');
    assert_int_equal(cfg_set(&c, "default_host", buf_cstr(&v), "t", &err), ERR_INVAL);
    assert_contains(buf_cstr(&err), "longer than 160 bytes");
    buf_reset(&v);
    buf_puts(&v, "s3cr3t read,write ");
    while (v.len < 180)
        buf_puts(&v, v.len + 2 <= 180 ? "d," : "d");
    if (v.data[v.len - 1] == ',')
        v.data[v.len - 1] = 'e';
    ok_or_print(cfg_set(&c, "token", buf_cstr(&v), "t", &err), &err);
    buf_puts(&v, ",f");
    assert_int_equal(cfg_set(&c, "token", buf_cstr(&v), "t", &err), ERR_INVAL);
    round_trip(&c, CFG_PRINT_SECRETS, &back, &p1, &p2);
    assert_string_equal(buf_cstr(&p1), buf_cstr(&p2));
    assert_string_equal(back.default_host, c.default_host);
    assert_int_equal(back.ntokens, 1);
    buf_destroy(&p1);
    buf_destroy(&p2);
    buf_destroy(&err);
    buf_destroy(&v);
    cfg_destroy(&back);
    cfg_destroy(&c);
}

static void test_print_defaults_round_trip(void **state)
{
    (void)state;
    struct config c, back;
    struct buf p1 = BUF_INIT, p2 = BUF_INIT;
    cfg_init(&c);
    round_trip(&c, 0, &back, &p1, &p2);
    assert_string_equal(buf_cstr(&p1), buf_cstr(&p2));
    assert_contains(buf_cstr(&p1), "default_host = \"\"\n");
    assert_contains(buf_cstr(&p1), "# (no tokens)\n");
    buf_destroy(&p1);
    buf_destroy(&p2);
    cfg_destroy(&back);
    cfg_destroy(&c);
}

/* ---- the example file ----------------------------------------------------- */

/* The example lives at the top of the source tree; tests run from there
 * (make test), but may be started from below it too. */
static const char *example_path(void)
{
    static const char *tries[] = {"logbucket.conf.example", "../logbucket.conf.example",
                                  "../../logbucket.conf.example"};
    for (size_t i = 0; i < N(tries); i++)
        if (access(tries[i], R_OK) == 0)
            return tries[i];
    return tries[0];
}

static void test_example_file(void **state)
{
    (void)state;
    struct config c, def;
    struct buf err = BUF_INIT, p1 = BUF_INIT, p2 = BUF_INIT, gen = BUF_INIT;
    cfg_init(&c);
    cfg_init(&def);
    const char *path = example_path();
    ok_or_print(cfg_load_file(&c, path, &err), &err);
    ok_or_print(cfg_validate(&c, &err), &err);
    /* Everything in it is commented out: it gives the defaults. */
    cfg_print_flags(&c, &p1, CFG_PRINT_SECRETS);
    cfg_print_flags(&def, &p2, CFG_PRINT_SECRETS);
    assert_string_equal(buf_cstr(&p1), buf_cstr(&p2));

    /* It is the table's own documentation: regenerate it when that changes
     * (LB_WRITE_EXAMPLE=1 build/tests/config.t from the top folder). */
    cfg_print_flags(&def, &gen, CFG_PRINT_DEFAULTS);
    if (getenv("LB_WRITE_EXAMPLE"))
        write_file(path, buf_cstr(&gen));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    struct buf file = BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&file, chunk, got);
    fclose(f);
    if (strcmp(buf_cstr(&file), buf_cstr(&gen)) != 0)
        fail_msg("%s is out of date with the option table; regenerate it with "
                 "LB_WRITE_EXAMPLE=1 build/tests/config.t",
                 path);
    /* Each commented key, uncommented, is accepted as it is. */
    struct buf live = BUF_INIT;
    const char *p = buf_cstr(&gen);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 2 && p[0] == '#' && p[1] == ' ' && memchr(p, '=', len) &&
            (p[2] >= 'a' && p[2] <= 'z')) {
            buf_append(&live, p + 2, len - 2);
            buf_putc(&live, '\n');
        }
        p += len + (nl ? 1 : 0);
    }
    struct config lc;
    cfg_init(&lc);
    ok_or_print(cfg_load_string(&lc, buf_cstr(&live), "example-uncommented", &err), &err);
    assert_int_equal(lc.ntokens, 2);
    cfg_destroy(&lc);
    buf_destroy(&live);
    buf_destroy(&file);
    buf_destroy(&gen);
    buf_destroy(&p1);
    buf_destroy(&p2);
    buf_destroy(&err);
    cfg_destroy(&c);
    cfg_destroy(&def);
}

/* ---- tokens ---------------------------------------------------------------- */

static void test_tokens(void **state)
{
    (void)state;
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    assert_null(cfg_find_token(&c, "anything"));
    ok_or_print(cfg_set(&c, "token", "reader read logs,metrics", "t", &err), &err);
    ok_or_print(cfg_set(&c, "token", "writer write logs", "t", &err), &err);
    ok_or_print(cfg_set(&c, "token", "boss admin *", "t", &err), &err);
    ok_or_print(cfg_set(&c, "token", "rw read,write *", "t", &err), &err);

    const struct cfg_token *rd = cfg_find_token(&c, "reader");
    const struct cfg_token *wr = cfg_find_token(&c, "writer");
    const struct cfg_token *boss = cfg_find_token(&c, "boss");
    const struct cfg_token *rw = cfg_find_token(&c, "rw");
    assert_ptr_equal(rd, &c.tokens[0]);
    assert_ptr_equal(wr, &c.tokens[1]);
    assert_ptr_equal(boss, &c.tokens[2]);
    assert_ptr_equal(rw, &c.tokens[3]);
    static const char *misses[] = {"", "reade", "readerr", "Reader", "r", "boss ", "xboss", "bos"};
    for (size_t i = 0; i < N(misses); i++)
        if (cfg_find_token(&c, misses[i]))
            fail_msg("\"%s\" matched a token", misses[i]);
    assert_null(cfg_find_token(&c, NULL));

    static const struct {
        int tok;
        unsigned right;
        const char *db;
        bool want;
    } cases[] = {
        {0, CFG_RIGHT_READ, "logs", true},
        {0, CFG_RIGHT_READ, "metrics", true},
        {0, CFG_RIGHT_READ, "other", false},
        {0, CFG_RIGHT_READ, "log", false},
        {0, CFG_RIGHT_WRITE, "logs", false},
        {0, CFG_RIGHT_ADMIN, "logs", false},
        {0, CFG_RIGHT_READ, NULL, true},
        {1, CFG_RIGHT_WRITE, "logs", true},
        {1, CFG_RIGHT_READ, "logs", false},
        {1, CFG_RIGHT_WRITE, "metrics", false},
        {2, CFG_RIGHT_ADMIN, "anything", true},
        {2, CFG_RIGHT_READ, "anything", true},
        {2, CFG_RIGHT_WRITE, "x", true},
        {2, CFG_RIGHT_READ | CFG_RIGHT_WRITE, "x", true},
        {3, CFG_RIGHT_READ | CFG_RIGHT_WRITE, "x", true},
        {3, CFG_RIGHT_ADMIN, "x", false},
        {3, CFG_RIGHT_ADMIN, NULL, false},
        {3, 0, "x", false},
    };
    for (size_t i = 0; i < N(cases); i++) {
        bool got = cfg_token_allows(&c.tokens[cases[i].tok], cases[i].right, cases[i].db);
        if (got != cases[i].want)
            fail_msg("case %zu: allows = %d", i, got);
    }
    assert_false(cfg_token_allows(NULL, CFG_RIGHT_READ, "logs"));
    buf_destroy(&err);
    cfg_destroy(&c);
}

/* Mutated config text never crashes, leaks or corrupts memory (run it
 * under SAN=1); whatever loads still validates or fails cleanly. */
static void test_mutations(void **state)
{
    (void)state;
    static const char base[] = "listen = [::1]:8086\n"
                               "data_dir = \"/srv/x #1\" # c\n"
                               "max_body_bytes = 64MiB\n"
                               "wal_sync = interval ; c\n"
                               "wal_sync_interval = 1h30m\n"
                               "default_ts_order = asc\n"
                               "token = s3cr3t read,write logs,metrics\n"
                               "insecure = yes\n";
    static const char alphabet[] = "=#;\"[]:, \t\n\r*0123456789kKMiBsmhdwx-_.\x01\xff";
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    char text[sizeof base + 64];
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(text, base, sizeof base);
        size_t len = sizeof base - 1;
        int edits = 1 + iter % 6;
        for (int e = 0; e < edits; e++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(seed >> 33) % len;
            char ch = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            switch ((seed >> 12) % 3) {
            case 0: text[pos] = ch; break;
            case 1:
                if (len + 1 < sizeof text) {
                    memmove(text + pos + 1, text + pos, len - pos + 1);
                    text[pos] = ch;
                    len++;
                }
                break;
            default:
                memmove(text + pos, text + pos + 1, len - pos);
                len--;
                break;
            }
        }
        struct config c;
        struct buf err = BUF_INIT, out = BUF_INIT;
        cfg_init(&c);
        int rc = cfg_load_string(&c, text, "m.conf", &err);
        if (rc == ERR_OK) {
            (void)cfg_validate(&c, &err);
            cfg_print_flags(&c, &out, CFG_PRINT_SECRETS);
            struct config back;
            cfg_init(&back);
            struct buf err2 = BUF_INIT, out2 = BUF_INIT;
            ok_or_print(cfg_load_string(&back, buf_cstr(&out), "m.printed", &err2), &err2);
            cfg_print_flags(&back, &out2, CFG_PRINT_SECRETS);
            if (strcmp(buf_cstr(&out), buf_cstr(&out2)) != 0)
                fail_msg("round trip differs for:\n%s", text);
            buf_destroy(&err2);
            buf_destroy(&out2);
            cfg_destroy(&back);
        } else {
            assert_int_equal(rc, ERR_INVAL);
            assert_true(err.len > 0);
        }
        buf_destroy(&err);
        buf_destroy(&out);
        cfg_destroy(&c);
    }
}

static void test_set_last_wins_and_no_suggestion(void **state)
{
    (void)state;
    struct config c;
    struct buf err = BUF_INIT;
    cfg_init(&c);
    const char *args[] = {"logbucketd", "--set", "wal_sync=none", "--set=wal_sync=interval"};
    struct cfg_cli cli;
    ok_or_print(cfg_from_args(&c, 4, (char **)args, &cli, &err), &err);
    assert_int_equal(c.wal_sync, CFG_WAL_INTERVAL);
    assert_int_equal(cfg_set(&c, "completely_unrelated", "1", "--set", &err), ERR_INVAL);
    assert_null(strstr(buf_cstr(&err), "did you mean"));
    /* Small output buffers truncate, never overflow. */
    char small[4];
    cfg_format_duration(123456789, small, sizeof small);
    assert_int_equal(strlen(small), 3);
    cfg_format_size(123456789, small, sizeof small);
    assert_int_equal(strlen(small), 3);
    buf_destroy(&err);
    cfg_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_good),
        cmocka_unit_test(test_block_cache_auto),
        cmocka_unit_test(test_size_bad),
        cmocka_unit_test(test_size_format),
        cmocka_unit_test(test_size_round_trip),
        cmocka_unit_test(test_duration_good),
        cmocka_unit_test(test_duration_bad),
        cmocka_unit_test(test_duration_format),
        cmocka_unit_test(test_duration_round_trip),
        cmocka_unit_test(test_listen),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_set_table),
        cmocka_unit_test(test_set_values_land),
        cmocka_unit_test(test_file_good),
        cmocka_unit_test(test_file_bad),
        cmocka_unit_test(test_file_long_line),
        cmocka_unit_test(test_file_missing),
        cmocka_unit_test(test_file_on_disk),
        cmocka_unit_test(test_args_override_order),
        cmocka_unit_test(test_args_no_file),
        cmocka_unit_test(test_args_bad),
        cmocka_unit_test(test_validate_listen),
        cmocka_unit_test(test_validate_by_hand),
        cmocka_unit_test(test_print_round_trip),
        cmocka_unit_test(test_print_longest_values),
        cmocka_unit_test(test_print_defaults_round_trip),
        cmocka_unit_test(test_example_file),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_set_last_wins_and_no_suggestion),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
