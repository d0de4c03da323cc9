/* The syslog listeners (DESIGN.md section 4): TCP (newline or octet-counted
 * framing, chosen per connection) and UDP (one message per datagram), off
 * unless syslog_tcp_listen / syslog_udp_listen are set. Messages are parsed
 * by ingest/syslog.h and written to syslog_db in bounded batches: per TCP
 * connection, and one for the UDP socket, each written when it holds
 * syslog_batch_rows rows (or 4 MiB) or its oldest row has waited
 * syslog_flush_interval, through store_write (durable under wal_sync).
 *
 * Threads: one accepting TCP connections, one per TCP connection (at most
 * syslog_max_connections; more are closed at once and counted), one for
 * UDP. syslog_listen_stop wakes them all; each reads what has already
 * arrived, writes its last batch and ends. */
#ifndef LB_SYSLOG_LISTEN_H
#define LB_SYSLOG_LISTEN_H

#include "base/buf.h"
#include "config/config.h"

struct store;

/* Opens the configured listeners and starts their threads. cfg and store
 * are borrowed and must outlive syslog_listen_stop. ERR_OK (also when both
 * are off) or an ERR_* with the reason logged (address in use, bad
 * address); nothing is left running then. REQUIRES: srv_start succeeded
 * (arrival stamps and database defaults come from struct server). */
int syslog_listen_start(const struct config *cfg, struct store *store);
/* Stops accepting, lets every connection write what it has received, and
 * joins every thread. Safe when nothing was started. */
void syslog_listen_stop(void);
/* Appends the syslog section of /metrics. */
void syslog_listen_metrics(struct buf *out);

#endif
