/* One line per event on stderr: "2026-11-22T03:50:00.123Z INFO message".
 * The line is formatted into one buffer and written with one write(2), so
 * lines of concurrent threads never interleave. */
#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static atomic_int min_level = LOG_INFO;

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
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}
