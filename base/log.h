/* Leveled logging to stderr: one line per event, with an ISO-8601 UTC
 * timestamp and the level. Thread-safe (each line is one write). */
#ifndef LB_LOG_H
#define LB_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Messages below this level are dropped. Default LOG_INFO. */
void log_set_level(enum log_level level);
/* Parses "debug", "info", "warn" or "error"; returns -1 if unknown. */
int log_level_parse(const char *s);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
