/* libFuzzer target for every reader of the store's files: META,
 * TOMBSTONES, each partition's MANIFEST, the SSTables (footer, index,
 * blooms, data, word filter and catalog blocks) and the WAL segments.
 *
 * Once, a template store is written: a database with rows of line-protocol
 * points and log entries flushed to SSTables (buckets and host index) and
 * merged to their final forms (zstd blocks for a window three hours back,
 * LZ4HC for the newest), a
 * range delete (TOMBSTONES), and more rows only in the WAL; its files are
 * copied while it is open, as a crash would leave them. Each input then
 * damages one of those files and opens a copy of the store:
 *   byte 0   which file (modulo their number)
 *   byte 1   how: 0 replace the whole file with the rest of the input,
 *            1 overwrite the rest at the offset of bytes 2..5 (u32le,
 *              modulo the size), 2 truncate at that offset
 * The open must succeed (a damaged database is offline, the store opens),
 * and everything of a database that did open is read: every row of every
 * bucket with its records decoded, the host index, the host sections,
 * point reads and the catalog. Nothing may crash, hang, leak or trip a
 * sanitizer. */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "model/key.h"
#include "model/record.h"
#include "store/iter.h"
#include "store/store.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T0 (1700000000LL * 1000000000LL)
#define BUCKETS 2
#define MAX_FILES 256

struct tfile {
    char *rel; /* path under the store's directory */
    char *bytes;
    size_t len;
};

static struct tfile files[MAX_FILES];
static size_t nfiles;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rmtree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *template_root;

static int grab(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || nfiles == MAX_FILES || strstr(path, "/LOCK"))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    struct tfile *t = &files[nfiles++];
    t->rel = strdup(path + strlen(template_root) + 1);
    t->len = (size_t)st->st_size;
    t->bytes = malloc(t->len + 1);
    t->len = fread(t->bytes, 1, t->len, f);
    fclose(f);
    return 0;
}

static void put_rows_at(struct store_db *db, int64_t base, int from, int to)
{
    struct batch *b = batch_new();
    struct buf id = BUF_INIT, val = BUF_INIT;
    char host[16], msg[64];
    for (int i = from; i < to; i++) {
        snprintf(host, sizeof host, "h%d", i % 5);
        snprintf(msg, sizeof msg, "request %d failed with timeout", i);
        struct rec_tag tag = {slice_cstr("cpu"), slice_cstr(i % 2 ? "cpu0" : "cpu1")};
        struct rec_field fields[3] = {
            {slice_cstr("usage"), REC_FLOAT, {.f = i * 0.5}},
            {slice_cstr("n"), REC_INT, {.i = -i}},
            {slice_cstr("msg"), REC_STRING, {.s = slice_cstr(msg)}},
        };
        buf_reset(&id);
        buf_reset(&val);
        if (i % 3) { /* a point: series id, merged value */
            rec_encode(&id, &tag, 1, NULL, 0);
            rec_encode(&val, NULL, 0, fields, 2);
            batch_put_id(b, base + i * 1000000000LL, slice_cstr(host), slice_cstr("cpu"),
                         slice_make(id.data, id.len), slice_make(val.data, val.len), true);
        } else { /* a log entry: its content is its id */
            rec_encode(&id, &tag, 1, fields + 2, 1);
            batch_put_id(b, base + i * 1000000000LL, slice_cstr(host), slice_cstr("log"),
                         slice_make(id.data, id.len), slice_make("", 0), false);
        }
    }
    FUZZ_CHECK(store_write(db, b) == ERR_OK);
    batch_free(b);
    buf_destroy(&id);
    buf_destroy(&val);
}

static void put_rows(struct store_db *db, int from, int to)
{
    put_rows_at(db, T0, from, to);
}

/* Writes the template store and keeps a copy of its files. */
static void make_template(void)
{
    static char dir[] = "/tmp/lb-fuzz-store-XXXXXX";
    FUZZ_CHECK(mkdtemp(dir) != NULL);
    template_root = dir;
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_ALWAYS;
    struct store *s;
    FUZZ_CHECK(store_open(&o, &s) == ERR_OK);
    struct db_opts d = {.buckets = BUCKETS, .ts_desc = true, .ttl_ns = 0};
    FUZZ_CHECK(store_db_create(s, "f", &d) == ERR_OK);
    struct store_db *db;
    FUZZ_CHECK(store_db_get(s, "f", &db) == ERR_OK);
    /* a window three hours back, merged to its cold form (zstd blocks), and
     * the newest one merged to its hot form (LZ4HC) */
    put_rows_at(db, T0 - 3 * 3600 * 1000000000LL, 0, 300);
    put_rows(db, 0, 300);
    FUZZ_CHECK(store_db_flush(db) == ERR_OK);
    FUZZ_CHECK(store_db_compact(db) == ERR_OK);
    struct slice ev = slice_cstr("log");
    FUZZ_CHECK(store_db_delete_range(db, slice_cstr("h1"), &ev, T0, T0 + 50 * 1000000000LL) ==
               ERR_OK);
    put_rows(db, 300, 340);        /* in the WAL only */
    nftw(dir, grab, 16, FTW_PHYS); /* as a crash leaves them */
    store_db_unref(db);
    store_close(s);
    rmtree(dir);
}

static void write_file(const char *root, const char *rel, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *q = path + strlen(root) + 1; (q = strchr(q, '/')) != NULL; q++) {
        *q = '\0';
        mkdir(path, 0755);
        *q = '/';
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
    close(fd);
}

static void read_rows(struct store_snap *snap, struct buf *scratch)
{
    for (uint32_t b = 0; b < BUCKETS; b++) {
        struct iter *it = store_iter_bucket_range(snap, b, INT64_MIN, INT64_MAX, NULL);
        size_t n = 0;
        for (it_seek_first(it); it_valid(it) && n < 100000; it_next(it), n++) {
            struct key_row kr;
            if (key_decode_row(it_key(it), true, &kr) != ERR_OK)
                continue;
            struct rec_row_reader rr;
            if (rec_row_init(&rr, kr.id, it_value(it)) != ERR_OK)
                continue;
            struct rec_tag t;
            struct rec_field f;
            while (rec_row_next_tag(&rr, &t) == 1)
                buf_append(scratch, t.key.ptr, t.key.len);
            while (rec_row_next_field(&rr, &f) == 1)
                buf_append(scratch, f.key.ptr, f.key.len);
            buf_reset(scratch);
        }
        it_destroy(it);
    }
    struct iter *it = store_iter_host_range(snap, slice_cstr("h2"), INT64_MIN, INT64_MAX);
    size_t n = 0;
    for (it_seek_first(it); it_valid(it) && n < 100000; it_next(it), n++)
        (void)it_key(it);
    it_destroy(it);
}

/* The host sections (of host h2 with an event set, and of every host):
 * every row decoded as a record. */
static void read_sections(struct store_snap *snap)
{
    struct slice h2 = slice_cstr("h2"), cpu = slice_cstr("cpu"), v = slice_cstr("v");
    for (uint32_t b = 0; b < BUCKETS; b++)
        for (int every = 0; every < 2; every++) {
            struct store_series *s;
            struct store_ts_range *win;
            size_t nwin;
            if (store_series_open(snap, b, every ? NULL : &h2, INT64_MIN, INT64_MAX,
                                  every ? NULL : &cpu, every ? 0 : 1, &v, 1, &s, &win,
                                  &nwin) != ERR_OK)
                continue;
            struct store_series_row r;
            size_t n = 0;
            while (n++ < 100000 && store_series_next(s, &r) == 1) {
                struct rec_reader rd;
                struct rec_field f;
                if (rec_reader_init(&rd, r.value) == ERR_OK)
                    while (rec_next_field(&rd, &f) == 1)
                        ;
            }
            store_series_close(s);
            free(win);
        }
}

static int count_name(void *arg, struct slice name, int type)
{
    (void)name;
    (void)type;
    (*(size_t *)arg)++;
    return 0;
}

static void read_db(struct store_db *db)
{
    struct buf v = BUF_INIT;
    for (int i = 0; i < 340; i += 37)
        store_get(db, T0 + i * 1000000000LL, slice_cstr("h0"), slice_cstr("cpu"), &v);
    struct store_snap *snap = store_snapshot(db);
    read_rows(snap, &v);
    read_sections(snap);
    size_t names = 0;
    for (int k = STORE_CAT_HOSTS; k <= STORE_CAT_FIELDS; k++) {
        struct store_cat_query q = {(enum store_cat_kind)k, INT64_MIN, INT64_MAX, NULL, NULL,
                                    slice_cstr("cpu"),      0};
        store_catalog(snap, &q, count_name, &names);
    }
    store_snap_release(snap);
    buf_destroy(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!nfiles) {
        log_set_level((enum log_level)(LOG_ERROR + 1)); /* quiet: damage is expected */
        make_template();
        FUZZ_CHECK(nfiles > 0);
    }
    if (size < 2)
        return 0;
    size_t which = data[0] % nfiles;
    int mode = data[1] % 3;
    uint32_t off = 0;
    const uint8_t *rest = data + 2;
    size_t nrest = size - 2;
    if (mode != 0) {
        if (nrest < 4)
            return 0;
        off = (uint32_t)rest[0] | (uint32_t)rest[1] << 8 | (uint32_t)rest[2] << 16 |
              (uint32_t)rest[3] << 24;
        rest += 4;
        nrest -= 4;
    }
    char dir[] = "/tmp/lb-fuzz-open-XXXXXX";
    FUZZ_CHECK(mkdtemp(dir) != NULL);
    for (size_t i = 0; i < nfiles; i++) {
        const struct tfile *t = &files[i];
        if (i != which) {
            write_file(dir, t->rel, t->bytes, t->len);
            continue;
        }
        if (mode == 0) {
            write_file(dir, t->rel, rest, nrest);
            continue;
        }
        size_t at = t->len ? off % (t->len + 1) : 0;
        if (mode == 2) {
            write_file(dir, t->rel, t->bytes, at);
            continue;
        }
        char *copy = malloc(t->len + nrest + 1);
        memcpy(copy, t->bytes, t->len);
        memcpy(copy + at, rest, nrest);
        size_t len = at + nrest > t->len ? at + nrest : t->len;
        write_file(dir, t->rel, copy, len);
        free(copy);
    }
    struct store_opts o;
    store_opts_default(&o);
    o.dir = dir;
    o.wal_sync = STORE_SYNC_NONE;
    struct store *s;
    int rc = store_open(&o, &s);
    FUZZ_CHECK(rc == ERR_OK); /* a damaged database is offline, not a failed start */
    struct store_db *db;
    if (store_db_get(s, "f", &db) == ERR_OK) {
        read_db(db);
        store_db_unref(db);
    }
    store_close(s);
    rmtree(dir);
    return 0;
}
