/* Timestamps as users write them (DESIGN.md: one time parser, one rule for
 * JSON lines' "ts" and SQL's ts conditions). */
#ifndef LB_TIME_H
#define LB_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 3339 into ns since the epoch: YYYY-MM-DD, optionally followed by
 * ('T'|'t'|' ')HH:MM:SS[.fraction](Z|z|+HH:MM|-HH:MM). A fraction of more
 * than 9 digits is cut to ns; second 60 (a leap second) is accepted; dates
 * are checked (Feb 29 of leap years only). ERR_OK, or ERR_INVAL for any
 * other text or a time outside the int64 ns range (1677-09-21 to
 * 2262-04-11). */
int time_parse_rfc3339(const char *s, size_t n, int64_t *out);

/* The seconds of the last "YYYY-MM-DDTHH:MM:SS" that time_parse_rfc3339_memo
 * read: a stream of stamps (syslog) repeats it for every message of a
 * second. A zeroed memo is empty. */
struct time_memo {
    char head[19];
    bool set;
    int64_t secs;
};

/* time_parse_rfc3339, with the same results, that reads the date and time
 * of day again only when they differ from the memo's (then kept there). */
int time_parse_rfc3339_memo(struct time_memo *m, const char *s, size_t n, int64_t *out);

#endif
