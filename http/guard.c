/* The connection guard (guard.h): a list of open connections with their
 * header deadlines, and a watchdog thread that shuts down the sockets of
 * those past it.
 *
 * Each connection keeps a dup() of its socket: shutdown() acts on the
 * socket, not the descriptor, and the duplicate stays ours until the
 * connection is forgotten, so the watchdog can never hit a descriptor
 * number that libmicrohttpd has closed and the kernel given to another
 * connection. */
#include "http/guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"

#define GUARD_TICK_NS (250 * 1000 * 1000LL)
/* At most one log line per this time about cut connections. */
#define GUARD_LOG_EVERY_NS (10 * 1000 * 1000 * 1000LL)

struct conn {
    int fd;              /* our duplicate of the socket, or -1 */
    int64_t deadline_ns; /* monotonic; 0 = none (headers in) */
    bool cut;
    struct conn *prev, *next;
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t thread;
    bool running;
    bool stop;
    int64_t timeout_ns;
    struct conn *head;
    atomic_int open;
    atomic_uint_fast64_t cut_total;
    uint64_t cut_unlogged;
    int64_t logged_ns;
} guard = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static struct conn *conn_of(struct MHD_Connection *con)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static void set_deadline(struct MHD_Connection *con, bool headers_in)
{
    struct conn *c = conn_of(con);
    if (!c)
        return;
    pthread_mutex_lock(&guard.mu);
    c->deadline_ns = headers_in ? 0 : clock_mono_ns() + guard.timeout_ns;
    pthread_mutex_unlock(&guard.mu);
}

void guard_opened(struct MHD_Connection *con, void **socket_context)
{
    struct conn *c = calloc(1, sizeof *c);
    atomic_fetch_add(&guard.open, 1);
    *socket_context = c;
    if (!c)
        return; /* counted, not guarded */
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
    c->fd = info ? dup(info->connect_fd) : -1;
    pthread_mutex_lock(&guard.mu);
    c->deadline_ns = clock_mono_ns() + guard.timeout_ns;
    c->next = guard.head;
    if (guard.head)
        guard.head->prev = c;
    guard.head = c;
    pthread_mutex_unlock(&guard.mu);
}

void guard_closed(void **socket_context)
{
    struct conn *c = *socket_context;
    *socket_context = NULL;
    atomic_fetch_sub(&guard.open, 1);
    if (!c)
        return;
    pthread_mutex_lock(&guard.mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        guard.head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&guard.mu);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

void guard_headers_done(struct MHD_Connection *con)
{
    set_deadline(con, true);
}

void guard_request_done(struct MHD_Connection *con)
{
    set_deadline(con, false);
}

int guard_open(void)
{
    return atomic_load(&guard.open);
}

uint64_t guard_cut_total(void)
{
    return atomic_load(&guard.cut_total);
}

/* Shuts down the sockets past their deadline; called with the lock held. */
static void cut_late(int64_t now)
{
    for (struct conn *c = guard.head; c; c = c->next) {
        if (c->cut || c->deadline_ns == 0 || now < c->deadline_ns || c->fd < 0)
            continue;
        shutdown(c->fd, SHUT_RDWR);
        c->cut = true;
        atomic_fetch_add(&guard.cut_total, 1);
        guard.cut_unlogged++;
    }
    if (guard.cut_unlogged && now - guard.logged_ns >= GUARD_LOG_EVERY_NS) {
        log_warn("closed %llu connections that did not send their request headers within "
                 "request_timeout (slow or stalled clients)",
                 (unsigned long long)guard.cut_unlogged);
        guard.cut_unlogged = 0;
        guard.logged_ns = now;
    }
}

static void *watchdog(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&guard.mu);
    while (!guard.stop) {
        cut_late(clock_mono_ns());
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += GUARD_TICK_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&guard.wake, &guard.mu, &until);
    }
    pthread_mutex_unlock(&guard.mu);
    return NULL;
}

int guard_start(int64_t header_timeout_ns)
{
    guard.timeout_ns = header_timeout_ns;
    guard.stop = false;
    guard.logged_ns = clock_mono_ns() - GUARD_LOG_EVERY_NS;
    if (pthread_create(&guard.thread, NULL, watchdog, NULL) != 0)
        return ERR_NOMEM;
    guard.running = true;
    return ERR_OK;
}

void guard_stop(void)
{
    if (!guard.running)
        return;
    pthread_mutex_lock(&guard.mu);
    guard.stop = true;
    pthread_cond_signal(&guard.wake);
    pthread_mutex_unlock(&guard.mu);
    pthread_join(guard.thread, NULL);
    guard.running = false;
}
