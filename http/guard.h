/* The connection guard: what libmicrohttpd's idle timeout does not bound.
 *
 * libmicrohttpd 0.9.75 times a connection out only after a silence, so a
 * client that sends its request headers a byte every few seconds holds its
 * connection (and, a thousand times over, every slot) forever. The guard
 * gives every connection a deadline for its headers: request_timeout from
 * the moment it opened, or from the end of its previous request (a
 * keep-alive connection waiting for the next one). A connection whose
 * headers are not complete by then has its socket shut down, which
 * libmicrohttpd sees as the client's close. Once the headers are in, the
 * server's own body deadline (server.c) and the handlers take over; a reply
 * being streamed (a long query, a live tail) is never cut.
 *
 * It also counts open connections, so that the server can keep a reserve
 * for /ping and /health when every other slot is taken.
 *
 * Threading: guard_opened and guard_closed are called by libmicrohttpd's
 * threads, the others by the request's thread; one watchdog thread of the
 * guard's own checks the deadlines four times a second. */
#ifndef LB_GUARD_H
#define LB_GUARD_H

#include <microhttpd.h>
#include <stdint.h>

/* Starts the watchdog with this header deadline. ERR_OK or ERR_NOMEM. */
int guard_start(int64_t header_timeout_ns);
/* Stops the watchdog; connections still open are no longer cut. */
void guard_stop(void);

/* libmicrohttpd's connection notifications (MHD_OPTION_NOTIFY_CONNECTION):
 * registers the new connection in *socket_context, and forgets it. */
void guard_opened(struct MHD_Connection *con, void **socket_context);
void guard_closed(void **socket_context);

/* The request of con has its headers (its deadline is lifted), and has
 * ended (the deadline of the next request's headers starts now). */
void guard_headers_done(struct MHD_Connection *con);
void guard_request_done(struct MHD_Connection *con);

/* Connections open now, and connections cut for slow headers so far. */
int guard_open(void);
uint64_t guard_cut_total(void);

#endif
