/* Time zones of InfluxQL's tz('...'): UTC offsets from the system's TZif
 * files (iql_tz.c). A NULL zone is UTC. Private to query/. */
#ifndef LB_IQL_TZ_H
#define LB_IQL_TZ_H

#include <stdint.h>

#include "base/buf.h"

struct iql_tz;

/* Loads zone name ("Europe/Paris") from /usr/share/zoneinfo. ERR_INVAL
 * with InfluxDB's "unable to find time zone X" for a bad name or file. */
int iql_tz_load(const char *name, struct iql_tz **out, struct buf *err);
void iql_tz_free(struct iql_tz *z); /* NULL ok */
/* The zone's offset east of UTC, in seconds, at the instant ns. */
int32_t iql_tz_offset(const struct iql_tz *z, int64_t ns);
/* The start of ts's GROUP BY time bucket of width interval (> 0) and
 * offset (0 <= offset < interval), aligned to the zone's local time as
 * InfluxDB aligns it. */
int64_t iql_tz_bucket(const struct iql_tz *z, int64_t ts, int64_t interval, int64_t offset);

#endif
