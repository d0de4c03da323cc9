/* The table cache of the POSIX env (store/env.h): with more files open
 * for reading than it may keep descriptors for, the process holds at most
 * that many, every read still returns the file's bytes (a closed file is
 * opened again), and a file whose folder was renamed through the env is
 * found again under its new name. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "store/env.h"
#include "tests/support/store_testutil.h"

#define NFILES 60
#define CAP 8

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void check_content(struct env_file *f, int i)
{
    char want[64], got[64];
    snprintf(want, sizeof want, "file %d holds this line", i);
    size_t n = 0;
    assert_int_equal(env_pread(f, 0, got, strlen(want), &n), ERR_OK);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(got, want, n);
}

static void test_descriptors_capped(void **state)
{
    (void)state;
    struct env *e = env_posix();
    char *dir = tu_mkdtemp("fdcache");
    struct buf sub = BUF_INIT, path = BUF_INIT;
    buf_printf(&sub, "%s/a", dir);
    assert_int_equal(env_mkdir(e, sub.data), ERR_OK);
    for (int i = 0; i < NFILES; i++) {
        buf_reset(&path);
        buf_printf(&path, "%s/f%02d", sub.data, i);
        struct env_file *w;
        assert_int_equal(env_open_append(e, path.data, true, &w), ERR_OK);
        char line[64];
        snprintf(line, sizeof line, "file %d holds this line", i);
        assert_int_equal(env_append(w, line, strlen(line)), ERR_OK);
        env_close(w);
    }
    env_posix_set_max_open(CAP);
    int base = open_fds();
    uint64_t reopens = env_posix_reopens();
    struct env_file *f[NFILES];
    for (int i = 0; i < NFILES; i++) {
        buf_reset(&path);
        buf_printf(&path, "%s/f%02d", sub.data, i);
        assert_int_equal(env_open_read(e, path.data, &f[i]), ERR_OK);
    }
    assert_true(open_fds() <= base + CAP + 1);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NFILES; i++) {
            check_content(f[(i * 7 + round) % NFILES], (i * 7 + round) % NFILES);
            assert_true(open_fds() <= base + CAP + 1);
        }
    assert_true(env_posix_reopens() > reopens);
    uint64_t size = 0;
    assert_int_equal(env_size(f[3], &size), ERR_OK);
    assert_int_equal(size, strlen("file 3 holds this line"));
    /* the folder moves (as a dropped database's does): reads go on */
    struct buf moved = BUF_INIT;
    buf_printf(&moved, "%s/moved", dir);
    assert_int_equal(env_rename(e, sub.data, moved.data), ERR_OK);
    for (int i = 0; i < NFILES; i++)
        check_content(f[i], i);
    for (int i = 0; i < NFILES; i++)
        env_close(f[i]);
    assert_true(open_fds() <= base);
    env_posix_set_max_open(0); /* back to the default */
    buf_destroy(&moved);
    buf_destroy(&sub);
    buf_destroy(&path);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptors_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
