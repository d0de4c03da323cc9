/* sst_stat: what the SSTables of a data folder are made of, per block type
 * (store/FORMAT.md): blocks, entries, stored bytes and decoded bytes of the
 * data blocks of each codec type, and the bytes of everything else (word
 * filters, bloom, index, catalog, footers), with the time it takes to
 * decode each type (MB/s of decoded bytes, one thread).
 *   build/bench/sst_stat FILE.sst... | DIR   (a directory: every *.sst under it) */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/coding.h"
#include "base/log.h"
#include "store/table/block.h"
#include "store/table/codec.h"
#include "store/table/sst.h"

#define NTYPES 4

struct totals {
    uint64_t blocks[NTYPES], entries[NTYPES], stored[NTYPES], raw[NTYPES], ns[NTYPES];
    uint64_t files, file_bytes, data_bytes, bad;
};

static int read_all(const char *path, struct buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        buf_append(out, tmp, n);
    fclose(f);
    return 0;
}

static void one_block(struct totals *t, struct slice stored, struct buf *raw)
{
    int type = (unsigned char)stored.ptr[stored.len - CODEC_TRAILER];
    uint64_t t0 = clock_mono_ns();
    if (type >= NTYPES || codec_decode(stored, "sst_stat", 0, raw)) {
        t->bad++;
        return;
    }
    t->ns[type] += clock_mono_ns() - t0;
    struct blk b;
    if (blk_parse(slice_make(raw->data, raw->len), &b) == 0) {
        struct iter *it = blk_iter(&b);
        for (it_seek_first(it); it_valid(it); it_next(it))
            t->entries[type]++;
        it_destroy(it);
    }
    t->blocks[type]++;
    t->stored[type] += stored.len;
    t->raw[type] += raw->len;
    t->data_bytes += stored.len;
}

static void one_file(struct totals *t, const char *path)
{
    struct buf f = BUF_INIT, index = BUF_INIT, raw = BUF_INIT;
    if (read_all(path, &f) || f.len < SST_FOOTER) {
        t->bad++;
        buf_destroy(&f);
        return;
    }
    const char *foot = f.data + f.len - SST_FOOTER;
    uint64_t ioff = coding_get_u64le(foot), isize = coding_get_u64le(foot + 8);
    t->files++;
    t->file_bytes += f.len;
    struct blk ib;
    if (ioff + isize + CODEC_TRAILER > f.len ||
        codec_decode(slice_make(f.data + ioff, isize + CODEC_TRAILER), path, ioff, &index) ||
        blk_parse(slice_make(index.data, index.len), &ib)) {
        t->bad++;
        goto done;
    }
    struct iter *it = blk_iter(&ib);
    for (it_seek_first(it); it_valid(it); it_next(it)) {
        struct slice v = it_value(it);
        uint64_t off, size;
        const char *p = coding_varint_dec(v.ptr, v.ptr + v.len, &off);
        if (p)
            p = coding_varint_dec(p, v.ptr + v.len, &size);
        if (!p || off + size + CODEC_TRAILER > f.len) {
            t->bad++;
            break;
        }
        one_block(t, slice_make(f.data + off, size + CODEC_TRAILER), &raw);
    }
    it_destroy(it);
done:
    buf_destroy(&f);
    buf_destroy(&index);
    buf_destroy(&raw);
}

static void walk(struct totals *t, const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return;
    if (!S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        if (n > 4 && strcmp(path + n - 4, ".sst") == 0)
            one_file(t, path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        struct buf sub = BUF_INIT;
        buf_printf(&sub, "%s/%s", path, e->d_name);
        walk(t, buf_cstr(&sub));
        buf_destroy(&sub);
    }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    static const char *names[NTYPES] = {"raw rows", "LZ4 rows", "LZ4 columnar", "zstd columnar"};
    struct totals t;
    memset(&t, 0, sizeof t);
    log_set_level(LOG_ERROR + 1);
    if (argc < 2) {
        fprintf(stderr, "usage: sst_stat FILE.sst... | DIR\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        walk(&t, argv[i]);
    printf("%" PRIu64 " files, %" PRIu64 " bytes; data blocks %" PRIu64
           " bytes, other (filters, bloom, index, catalog, footers) %" PRIu64 " bytes\n",
           t.files, t.file_bytes, t.data_bytes, t.file_bytes - t.data_bytes);
    printf("%-14s %8s %10s %12s %12s %7s %9s %10s\n", "type", "blocks", "entries", "stored",
           "decoded", "ratio", "B/entry", "decode MB/s");
    for (int i = 0; i < NTYPES; i++) {
        if (!t.blocks[i])
            continue;
        printf("%-14s %8" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %7.2f %9.2f %10.0f\n",
               names[i], t.blocks[i], t.entries[i], t.stored[i], t.raw[i],
               (double)t.raw[i] / (double)t.stored[i],
               (double)t.stored[i] / (double)(t.entries[i] ? t.entries[i] : 1),
               (double)t.raw[i] / 1e6 / ((double)t.ns[i] / 1e9 + 1e-9));
    }
    if (t.bad)
        printf("%" PRIu64 " damaged files or blocks\n", t.bad);
    return t.bad ? 1 : 0;
}
