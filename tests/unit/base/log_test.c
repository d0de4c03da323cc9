/* base/log.h: lines on stderr, and repeats of one message limited to a
 * burst a second, the held-back count said when it is next written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"

/* Runs fn with stderr sent to a temporary file; returns what was written. */
static char *capture(void (*fn)(void))
{
    char path[] = "/tmp/lb-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    int saved = dup(STDERR_FILENO);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    fn();
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);
    assert_int_equal(pread(fd, text, (size_t)n, 0), n);
    close(fd);
    return text;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* Waits for the start of a second, so that a burst stays inside one. */
static void second_start(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct timespec rest = {0, 1000000000L - now.tv_nsec + 1000000L};
    nanosleep(&rest, NULL);
}

static void hammer(void)
{
    second_start();
    for (int i = 0; i < 1000; i++)
        log_error("disk says no to file %d", i);
    log_warn("another message");
    second_start();
    log_error("disk says no to file %d", 1000);
}

static void test_repeats_limited(void **state)
{
    (void)state;
    char *text = capture(hammer);
    /* ten in the first second, then one that tells what was held back */
    assert_int_equal(count(text, "ERROR disk says no to file"), 11);
    assert_int_equal(count(text, "file 9\n"), 1);
    assert_int_equal(count(text, "file 10\n"), 0);
    assert_int_equal(count(text, "file 1000 (and 990 more like it not logged"), 1);
    assert_int_equal(count(text, "WARN another message\n"), 1);
    free(text);
}

/* Formats at addresses 32 bytes apart: with the slot picked by the
 * address alone, formats 256 slots' worth apart shared one and took turns
 * resetting its count, and none of them was limited. */
enum { NFMT = 300 };
static char fmts[NFMT][32];

static void many_formats(void)
{
    for (int f = 0; f < NFMT; f++)
        snprintf(fmts[f], sizeof fmts[f], "format %03d says %%d", f);
    second_start();
    /* formats made at run time, each of them "... %d" */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    for (int r = 0; r < 30; r++)
        for (int f = 0; f < NFMT; f++)
            log_msg(LOG_ERROR, fmts[f], r);
#pragma GCC diagnostic pop
}

static void test_many_formats_limited(void **state)
{
    (void)state;
    char *text = capture(many_formats);
    size_t total = 0;
    for (int f = 0; f < NFMT; f++) {
        char what[32];
        snprintf(what, sizeof what, "format %03d says", f);
        size_t n = count(text, what);
        assert_true(n >= 1 && n <= 10);
        total += n;
    }
    assert_true(total <= 10 * NFMT);
    free(text);
}

static void levels(void)
{
    log_set_level(LOG_WARN);
    log_info("quiet %d", 1);
    log_warn("loud %d", 2);
    log_set_level(LOG_INFO);
    log_info("quiet no more %d", 3);
}

static void test_levels(void **state)
{
    (void)state;
    char *text = capture(levels);
    assert_int_equal(count(text, "quiet 1"), 0);
    assert_int_equal(count(text, "WARN loud 2\n"), 1);
    assert_int_equal(count(text, "INFO quiet no more 3\n"), 1);
    assert_int_equal(log_level_parse("Warn"), LOG_WARN);
    assert_int_equal(log_level_parse("loud"), -1);
    free(text);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeats_limited),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_many_formats_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
