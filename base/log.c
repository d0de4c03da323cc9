/* One line per event on stderr: "2026-11-22T03:50:00.123Z INFO message".
 * The line is formatted into one buffer and written with one write(2), so
 * lines of concurrent threads never interleave.
 *
 * Repeats are limited: a message (known by its format string, that is its
 * place in the code) is written at most LOG_BURST times a second; the
 * rest of that second is counted and said in one line when it is next
 * written. A failing disk or a client hammering a bad request cannot fill
 * the log at thousands of lines a second. */
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static atomic_int min_level = LOG_INFO;

#define LOG_BURST 10
#define LOG_SLOTS 256 /* a power of two */
#define LOG_PROBES 8

/* Per format string: its own slot, found by probing from a hash of its
 * address; when the LOG_PROBES slots from there all hold other formats, it
 * shares the first one's budget (a collision never lifts a limit). */
struct log_slot {
    const char *fmt; /* NULL: free */
    time_t second;
    unsigned written;      /* this second */
    unsigned long dropped; /* since the last line written */
};

static struct log_slot slots[LOG_SLOTS];
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;

static struct log_slot *slot_of(const char *fmt)
{
    size_t h = (size_t)(((uint64_t)(uintptr_t)fmt * 0x9e3779b97f4a7c15ULL) >> 56);
    for (size_t i = 0; i < LOG_PROBES; i++) {
        struct log_slot *sl = &slots[(h + i) & (LOG_SLOTS - 1)];
        if (sl->fmt == fmt || !sl->fmt) {
            sl->fmt = fmt;
            return sl;
        }
    }
    return &slots[h & (LOG_SLOTS - 1)];
}

/* Whether a line of fmt may be written in this second; *dropped is set to
 * the lines held back before it. */
static bool log_admit(const char *fmt, time_t second, unsigned long *dropped)
{
    bool ok;
    pthread_mutex_lock(&slots_mu);
    struct log_slot *sl = slot_of(fmt);
    if (sl->second != second) {
        sl->second = second;
        sl->written = 0;
    }
    ok = sl->written < LOG_BURST;
    if (ok) {
        sl->written++;
        *dropped = sl->dropped;
        sl->dropped = 0;
    } else {
        sl->dropped++;
    }
    pthread_mutex_unlock(&slots_mu);
    return ok;
}

static const char *level_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

void log_set_level(enum log_level level)
{
    atomic_store(&min_level, (int)level);
}

int log_level_parse(const char *s)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if ((int)level < atomic_load(&min_level))
        return;
    char line[2048];
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long dropped = 0;
    if (!log_admit(fmt, now.tv_sec, &dropped))
        return;
    gmtime_r(&now.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s ", now.tv_nsec / 1000000L,
                          level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += (size_t)m;
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    if (dropped) {
        int k =
            snprintf(line + n, sizeof line - n - 1,
                     " (and %lu more like it not logged: over %d a second)", dropped, LOG_BURST);
        if (k > 0)
            n += (size_t)k;
        if (n > sizeof line - 2)
            n = sizeof line - 2;
    }
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}
