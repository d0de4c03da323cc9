/* Syslog over TCP and UDP: sockets, threads, batches and counters around
 * the parser and framer of ingest/syslog.h. A worker (one per TCP
 * connection, one for UDP) owns a parser and a batch; it polls its socket
 * and the stop eventfd with a timeout that is the flush deadline of its
 * oldest pending row (or the idle deadline), so a message waits at most
 * syslog_flush_interval before store_write. Nothing is acknowledged to a
 * syslog sender, so a message is safe once its batch is written (under
 * wal_sync = always: fsynced). */
#include "http/syslog_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/log.h"
#include "http/server.h"
#include "ingest/syslog.h"
#include "store/store.h"

#define READ_BYTES (64 * 1024)
#define UDP_BYTES 65536
#define UDP_RCVBUF (8 << 20)
#define BATCH_BYTES (4u << 20)
#define BUSY_RETRIES 100                 /* store back-pressure: retries 20 ms apart */
#define STOP_GRACE_NS (5 * 1000000000LL) /* a stop waits this long for a busy store */
#define DRAIN_BYTES (16u << 20)
#define CONN_STACK_BYTES (512 * 1024)

enum transport { T_TCP, T_UDP, T_COUNT };
static const char *transport_names[T_COUNT] = {"tcp", "udp"};

enum reject {
    R_UNPARSED,    /* stored whole as msg */
    R_OVERSIZE,    /* longer than syslog_max_message_bytes: dropped */
    R_TRUNCATED,   /* the connection ended inside an octet-counted frame */
    R_BAD_FRAME,   /* octet counting without a length: connection closed */
    R_BAD_MESSAGE, /* NUL byte or empty: dropped */
    R_WINDOW,      /* outside reject_older_than / reject_newer_than */
    R_STORE,       /* the store refused the batch (full disk, no database) */
    R_REFUSED,     /* connections over syslog_max_connections */
    R_COUNT
};
static const char *reject_names[R_COUNT] = {"unparsed",    "oversize",        "truncated",
                                            "bad_frame",   "bad_message",     "out_of_window",
                                            "store_error", "connection_limit"};

enum { K_5424, K_3164, K_UNPARSED, K_COUNT };
static const char *kind_names[K_COUNT] = {"rfc5424", "rfc3164", "unparsed"};

struct conn {
    struct conn *next;
    pthread_t thread;
    int fd;
    char peer[INET6_ADDRSTRLEN];
    atomic_bool is_done;
};

/* The listeners' state; counters are read by /metrics at any time. */
static struct {
    const struct config *cfg;
    struct store *store;
    int tcp_fd, udp_fd, stop_fd;
    bool has_tcp, has_udp;
    pthread_t tcp_thread, udp_thread;
    pthread_mutex_t lock; /* guards conns */
    struct conn *conns;
    atomic_int nconns;
    atomic_uint_fast64_t connections_total, idle_closes, store_failures;
    atomic_int_fast64_t stop_at_ns; /* when a stop was asked for, 0 before */
    atomic_uint_fast64_t messages[T_COUNT][K_COUNT];
    atomic_uint_fast64_t rows[T_COUNT], bytes[T_COUNT], batches[T_COUNT];
    atomic_uint_fast64_t rejects[T_COUNT][R_COUNT];
} sl = {.tcp_fd = -1, .udp_fd = -1, .stop_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* --- one worker: parser, batch, flush --------------------------------------- */

struct worker {
    enum transport t;
    struct syslog_parser *parser;
    struct syslog_batch *batch;
    int64_t flush_at; /* monotonic deadline of the oldest pending row; 0 = none */
    const char *peer;
    bool was_busy;           /* the last write ended in ERR_BUSY */
    int64_t now;             /* the clock when the bytes being read arrived */
    uint64_t kinds[K_COUNT]; /* messages parsed, not yet in sl.messages */
};

static void reject(const struct worker *w, enum reject r, uint64_t n)
{
    atomic_fetch_add(&sl.rejects[w->t][r], n);
}

static void worker_init(struct worker *w, enum transport t)
{
    const struct config *cfg = sl.cfg;
    struct event_limits lim;
    event_limits_default(&lim);
    lim.max_key_bytes = (size_t)cfg->max_key_bytes;
    lim.max_tags_per_line = (size_t)cfg->max_tags_per_line;
    struct syslog_map map = {cfg->syslog_event, cfg->syslog_default_event, cfg->syslog_host_peer};
    w->t = t;
    w->parser = syslog_new(&lim, &map);
    w->batch = syslog_batch_new();
    w->flush_at = 0;
    w->peer = "";
}

static void worker_destroy(struct worker *w)
{
    syslog_free(w->parser);
    syslog_batch_free(w->batch);
}

/* The target database, created with the defaults as a write creates one. */
static int open_db(struct store_db **out)
{
    const char *name = sl.cfg->syslog_db;
    int rc = store_db_get(sl.store, name, out);
    if (rc != ERR_NOTFOUND || !sl.cfg->auto_create_databases)
        return rc;
    struct db_opts o;
    srv_db_defaults(&o);
    rc = store_db_create(sl.store, name, &o);
    if (rc != ERR_OK && rc != ERR_EXISTS)
        return rc;
    return store_db_get(sl.store, name, out);
}

static int write_once(struct worker *w)
{
    struct store_db *db = NULL;
    int rc = open_db(&db);
    if (rc == ERR_OK) {
        rc = syslog_batch_write(w->batch, db);
        store_db_unref(db);
    }
    return rc;
}

/* Whether a stop has waited STOP_GRACE_NS: a store that cannot flush (a
 * broken or full disk) must not hold the daemon's stop for minutes. */
static bool stop_overdue(void)
{
    int64_t at = atomic_load(&sl.stop_at_ns);
    return at && clock_mono_ns() - at > STOP_GRACE_NS;
}

/* Writes the pending rows. Under back-pressure (ERR_BUSY) it waits and
 * retries, which also stops reading the socket: a TCP sender is slowed by
 * its window; after a stop, for STOP_GRACE_NS at most. Any other error
 * drops the batch, counted and logged. */
static void worker_flush(struct worker *w)
{
    size_t rows = syslog_batch_rows(w->batch);
    w->flush_at = 0;
    if (!rows)
        return;
    /* past the stop's grace, a store still busy is not waited for again */
    int rc = w->was_busy && stop_overdue() ? ERR_BUSY : write_once(w);
    for (int i = 0; rc == ERR_BUSY && i < BUSY_RETRIES && !stop_overdue(); i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        rc = write_once(w);
    }
    w->was_busy = rc == ERR_BUSY;
    if (rc == ERR_OK) {
        atomic_fetch_add(&sl.rows[w->t], rows);
        atomic_fetch_add(&sl.batches[w->t], 1);
        return;
    }
    /* the first failure, then every 1000th: a full disk must not flood the log */
    uint64_t nth = atomic_fetch_add(&sl.store_failures, 1);
    if (nth % 1000 == 0)
        log_warn("syslog %s: %zu messages for database %s not stored: %s (failure %llu)",
                 transport_names[w->t], rows, sl.cfg->syslog_db, err_name(rc),
                 (unsigned long long)nth + 1);
    reject(w, R_STORE, rows);
    syslog_batch_clear(w->batch);
}

static bool in_window(int64_t ts, int64_t now)
{
    const struct config *cfg = sl.cfg;
    if (cfg->reject_older_than_ns && ts < now - cfg->reject_older_than_ns)
        return false;
    if (cfg->reject_newer_than_ns && ts > now + cfg->reject_newer_than_ns)
        return false;
    return true;
}

/* A read's bytes arrived: the clock of their messages. */
static void worker_arrival(struct worker *w)
{
    w->now = event_stamp_now(&server.stamp);
}

/* The messages counted since the last call go to /metrics: once a read's
 * messages are done, not one atomic add each. */
static void worker_publish(struct worker *w)
{
    for (int k = 0; k < K_COUNT; k++)
        if (w->kinds[k]) {
            atomic_fetch_add(&sl.messages[w->t][k], w->kinds[k]);
            w->kinds[k] = 0;
        }
}

static void worker_message(struct worker *w, const char *msg, size_t len)
{
    int64_t now = w->now;
    struct event ev;
    const char *why = NULL;
    enum syslog_kind k = syslog_parse(w->parser, msg, len, now, w->peer, &ev, &why);
    if (k == SYSLOG_BAD) {
        reject(w, R_BAD_MESSAGE, 1);
        return;
    }
    w->kinds[k == SYSLOG_5424 ? K_5424 : k == SYSLOG_3164 ? K_3164 : K_UNPARSED]++;
    if (k == SYSLOG_UNPARSED)
        reject(w, R_UNPARSED, 1);
    /* arrival stamps are unique across the server, so that two equal
     * messages without a time stay two rows */
    if (!ev.has_ts)
        ev.ts = event_stamp_next(&server.stamp);
    if (!in_window(ev.ts, now)) {
        reject(w, R_WINDOW, 1);
        return;
    }
    syslog_batch_add(w->batch, &ev);
    if (!w->flush_at)
        w->flush_at = clock_mono_ns() + sl.cfg->syslog_flush_interval_ns;
    if (syslog_batch_rows(w->batch) >= (size_t)sl.cfg->syslog_batch_rows ||
        syslog_batch_bytes(w->batch) >= BATCH_BYTES)
        worker_flush(w);
}

/* poll timeout in ms until deadline (monotonic ns); -1 for none */
static int timeout_ms(int64_t deadline)
{
    if (!deadline)
        return -1;
    int64_t left = deadline - clock_mono_ns();
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

static int64_t earliest(int64_t a, int64_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return a < b ? a : b;
}

/* --- TCP ----------------------------------------------------------------- */

struct tcp_state {
    struct worker w;
    struct syslog_framer fr;
    char *rbuf;
    bool is_closing;
};

static void tcp_bytes(struct tcp_state *s, const char *data, size_t len)
{
    atomic_fetch_add(&sl.bytes[T_TCP], len);
    worker_arrival(&s->w);
    while (len && !s->is_closing) {
        enum syslog_frame_kind k;
        struct slice m;
        size_t n = syslog_frame_next(&s->fr, data, len, &k, &m);
        if (k == SYSLOG_FRAME_OK && m.len)
            worker_message(&s->w, m.ptr, m.len);
        else if (k == SYSLOG_FRAME_TOOBIG)
            reject(&s->w, R_OVERSIZE, 1);
        else if (k == SYSLOG_FRAME_BAD) {
            reject(&s->w, R_BAD_FRAME, 1);
            s->is_closing = true;
        }
        data += n;
        len -= n;
    }
    worker_publish(&s->w);
}

static void tcp_finish(struct tcp_state *s)
{
    struct slice m;
    enum syslog_frame_kind k = syslog_frame_finish(&s->fr, &m);
    worker_arrival(&s->w);
    if (k == SYSLOG_FRAME_OK && m.len)
        worker_message(&s->w, m.ptr, m.len);
    else if (k == SYSLOG_FRAME_CUT)
        reject(&s->w, R_TRUNCATED, 1);
    worker_publish(&s->w);
    worker_flush(&s->w);
}

/* At a stop: what has already arrived is read without waiting. */
static void tcp_drain(struct tcp_state *s, int fd)
{
    size_t total = 0;
    while (!s->is_closing && total < DRAIN_BYTES) {
        ssize_t n = recv(fd, s->rbuf, READ_BYTES, MSG_DONTWAIT);
        if (n <= 0)
            break;
        tcp_bytes(s, s->rbuf, (size_t)n);
        total += (size_t)n;
    }
}

/* Reads until EOF, an error, a broken frame, the idle timeout or a stop. */
static void tcp_loop(struct tcp_state *s, int fd)
{
    int64_t idle_ns = sl.cfg->syslog_idle_timeout_ns;
    int64_t idle_at = clock_mono_ns() + idle_ns;
    while (!s->is_closing) {
        struct pollfd pf[2] = {{fd, POLLIN, 0}, {sl.stop_fd, POLLIN, 0}};
        int rc = poll(pf, 2, timeout_ms(earliest(s->w.flush_at, idle_at)));
        if (rc < 0 && errno != EINTR)
            break;
        if (pf[1].revents) {
            tcp_drain(s, fd);
            break;
        }
        if (pf[0].revents) {
            ssize_t n = recv(fd, s->rbuf, READ_BYTES, 0);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                break;
            if (n > 0) {
                tcp_bytes(s, s->rbuf, (size_t)n);
                idle_at = clock_mono_ns() + idle_ns;
            }
        }
        int64_t now = clock_mono_ns();
        if (s->w.flush_at && now >= s->w.flush_at)
            worker_flush(&s->w);
        if (now >= idle_at) {
            atomic_fetch_add(&sl.idle_closes, 1);
            log_debug("syslog tcp: %s idle for %lld s: closed", s->w.peer,
                      (long long)(idle_ns / 1000000000LL));
            break;
        }
    }
}

static void *tcp_conn_main(void *arg)
{
    struct conn *c = arg;
    struct tcp_state s;
    memset(&s, 0, sizeof s);
    worker_init(&s.w, T_TCP);
    s.w.peer = c->peer;
    syslog_framer_init(&s.fr, (size_t)sl.cfg->syslog_max_message_bytes);
    s.rbuf = xmalloc(READ_BYTES);
    tcp_loop(&s, c->fd);
    tcp_finish(&s);
    free(s.rbuf);
    syslog_framer_destroy(&s.fr);
    worker_destroy(&s.w);
    close(c->fd);
    atomic_fetch_sub(&sl.nconns, 1);
    atomic_store(&c->is_done, true);
    return NULL;
}

static void peer_name(const struct sockaddr_storage *ss, char *out, size_t n)
{
    const void *a = ss->ss_family == AF_INET6
                        ? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
                        : (const void *)&((const struct sockaddr_in *)ss)->sin_addr;
    if (!inet_ntop(ss->ss_family, a, out, (socklen_t)n))
        snprintf(out, n, "unknown");
}

/* Joins the connections that have ended (all of them with is_all). */
static void reap(bool is_all)
{
    pthread_mutex_lock(&sl.lock);
    struct conn **pp = &sl.conns;
    while (*pp) {
        struct conn *c = *pp;
        if (is_all || atomic_load(&c->is_done)) {
            *pp = c->next;
            pthread_join(c->thread, NULL);
            free(c);
        } else {
            pp = &c->next;
        }
    }
    pthread_mutex_unlock(&sl.lock);
}

static void tcp_accept_one(void)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(sl.tcp_fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            /* out of descriptors: the pending connection stays queued; wait
             * instead of spinning on a listen socket that stays readable */
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        return;
    }
    if (atomic_load(&sl.nconns) >= sl.cfg->syslog_max_connections) {
        close(fd);
        atomic_fetch_add(&sl.rejects[T_TCP][R_REFUSED], 1);
        return;
    }
    struct conn *c = xcalloc(1, sizeof *c);
    c->fd = fd;
    peer_name(&ss, c->peer, sizeof c->peer);
    atomic_fetch_add(&sl.nconns, 1);
    /* a connection's thread needs little stack: 256 connections stay cheap */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, CONN_STACK_BYTES);
    int rc = pthread_create(&c->thread, &attr, tcp_conn_main, c);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        atomic_fetch_sub(&sl.nconns, 1);
        close(fd);
        free(c);
        atomic_fetch_add(&sl.rejects[T_TCP][R_REFUSED], 1);
        return;
    }
    pthread_setname_np(c->thread, "lb-syslog-conn");
    atomic_fetch_add(&sl.connections_total, 1);
    pthread_mutex_lock(&sl.lock);
    c->next = sl.conns;
    sl.conns = c;
    pthread_mutex_unlock(&sl.lock);
}

static void *tcp_accept_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd pf[2] = {{sl.tcp_fd, POLLIN, 0}, {sl.stop_fd, POLLIN, 0}};
        int rc = poll(pf, 2, 1000);
        if (pf[1].revents)
            break;
        if (rc > 0 && pf[0].revents)
            tcp_accept_one();
        reap(false);
    }
    reap(true);
    return NULL;
}

/* --- UDP ----------------------------------------------------------------- */

struct udp_state {
    struct worker w;
    char *rbuf;
    struct sockaddr_storage last; /* the peer named in peer */
    socklen_t last_len;
    char peer[INET6_ADDRSTRLEN];
};

/* Reads one datagram if there is one; false when there is none. */
static bool udp_one(struct udp_state *s, int flags)
{
    struct sockaddr_storage ss;
    struct iovec iov = {s->rbuf, UDP_BYTES};
    struct msghdr mh = {.msg_name = &ss,
                        .msg_namelen = sizeof ss,
                        .msg_iov = &iov,
                        .msg_iovlen = 1};
    ssize_t n = recvmsg(sl.udp_fd, &mh, flags);
    if (n < 0)
        return false;
    atomic_fetch_add(&sl.bytes[T_UDP], (uint64_t)n);
    if ((mh.msg_flags & MSG_TRUNC) || (uint64_t)n > sl.cfg->syslog_max_message_bytes) {
        reject(&s->w, R_OVERSIZE, 1);
        return true;
    }
    if (mh.msg_namelen != s->last_len || memcmp(&ss, &s->last, mh.msg_namelen) != 0) {
        memcpy(&s->last, &ss, mh.msg_namelen);
        s->last_len = mh.msg_namelen;
        peer_name(&ss, s->peer, sizeof s->peer);
    }
    struct slice m = syslog_unframe(s->rbuf, (size_t)n);
    worker_arrival(&s->w);
    if (m.len == 0)
        reject(&s->w, R_BAD_MESSAGE, 1);
    else
        worker_message(&s->w, m.ptr, m.len);
    worker_publish(&s->w);
    return true;
}

static void *udp_main(void *arg)
{
    (void)arg;
    struct udp_state s;
    memset(&s, 0, sizeof s);
    worker_init(&s.w, T_UDP);
    s.w.peer = s.peer;
    s.rbuf = xmalloc(UDP_BYTES);
    for (;;) {
        struct pollfd pf[2] = {{sl.udp_fd, POLLIN, 0}, {sl.stop_fd, POLLIN, 0}};
        int rc = poll(pf, 2, timeout_ms(s.w.flush_at));
        if (pf[1].revents) {
            /* what the kernel holds already is read (bounded) */
            for (size_t i = 0; i < 100000 && udp_one(&s, MSG_DONTWAIT); i++)
                ;
            break;
        }
        /* a burst is read whole before the next poll */
        for (int i = 0; rc > 0 && pf[0].revents && i < 1000 && udp_one(&s, MSG_DONTWAIT); i++)
            ;
        if (s.w.flush_at && clock_mono_ns() >= s.w.flush_at)
            worker_flush(&s.w);
    }
    worker_flush(&s.w);
    free(s.rbuf);
    worker_destroy(&s.w);
    return NULL;
}

/* --- start and stop -------------------------------------------------------- */

static int open_socket(const char *listen_at, int type, char *where, size_t wn)
{
    struct cfg_addr a;
    if (cfg_parse_listen(listen_at, &a, NULL) != ERR_OK)
        return -1;
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)a.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = type,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    if (getaddrinfo(a.host, port, &hints, &res) != 0 || !res)
        return -1;
    int fd = socket(res->ai_family, type | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd >= 0 && type == SOCK_DGRAM) {
        /* UDP has no flow control: a burst waits in the socket buffer.
         * Beyond net.core.rmem_max only root may ask (FORCE). */
        int bytes = UDP_RCVBUF;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    }
    if (fd >= 0 && (bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
                    (type == SOCK_STREAM && listen(fd, 128) != 0))) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
        char ip[INET6_ADDRSTRLEN];
        peer_name(&ss, ip, sizeof ip);
        unsigned p = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                    : ((struct sockaddr_in *)&ss)->sin_port);
        snprintf(where, wn, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, p);
    }
    return fd;
}

static int start_one(const char *listen_at, int type, int *fd, pthread_t *th, void *(*fn)(void *),
                     bool *started)
{
    const char *name = type == SOCK_STREAM ? "tcp" : "udp";
    char where[300] = "?";
    *fd = open_socket(listen_at, type, where, sizeof where);
    if (*fd < 0) {
        log_error("syslog: cannot listen on %s://%s (address in use, or not allowed?)", name,
                  listen_at);
        return ERR_IO;
    }
    if (pthread_create(th, NULL, fn, NULL) != 0) {
        close(*fd);
        *fd = -1;
        return ERR_NOMEM;
    }
    pthread_setname_np(*th, type == SOCK_STREAM ? "lb-syslog-tcp" : "lb-syslog-udp");
    *started = true;
    log_info("syslog: listening on %s://%s (database %s)", name, where, sl.cfg->syslog_db);
    return ERR_OK;
}

/* The configured event names must be row keys: refused at the start,
 * not message by message. */
static bool names_ok(const struct config *cfg)
{
    struct event_limits lim;
    event_limits_default(&lim);
    lim.max_key_bytes = (size_t)cfg->max_key_bytes;
    const char *names[] = {cfg->syslog_event, cfg->syslog_default_event};
    for (size_t i = 0; i < 2; i++) {
        if (!names[i] || (i == 0 && !*names[i]))
            continue;
        const char *why = event_check_names(&lim, slice_cstr(""), slice_cstr(names[i]));
        if (why) {
            log_error("syslog: %s = \"%s\": %s", i ? "syslog_default_event" : "syslog_event",
                      names[i], why);
            return false;
        }
    }
    return true;
}

int syslog_listen_start(const struct config *cfg, struct store *store)
{
    bool tcp = cfg->syslog_tcp_listen && *cfg->syslog_tcp_listen;
    bool udp = cfg->syslog_udp_listen && *cfg->syslog_udp_listen;
    if (!tcp && !udp)
        return ERR_OK;
    if (!names_ok(cfg))
        return ERR_INVAL;
    sl.cfg = cfg;
    sl.store = store;
    atomic_store(&sl.stop_at_ns, 0);
    sl.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (sl.stop_fd < 0)
        return ERR_IO;
    int rc = ERR_OK;
    if (tcp)
        rc = start_one(cfg->syslog_tcp_listen, SOCK_STREAM, &sl.tcp_fd, &sl.tcp_thread,
                       tcp_accept_main, &sl.has_tcp);
    if (rc == ERR_OK && udp)
        rc = start_one(cfg->syslog_udp_listen, SOCK_DGRAM, &sl.udp_fd, &sl.udp_thread, udp_main,
                       &sl.has_udp);
    if (rc != ERR_OK)
        syslog_listen_stop();
    return rc;
}

void syslog_listen_stop(void)
{
    if (sl.stop_fd < 0)
        return;
    uint64_t one = 1;
    atomic_store(&sl.stop_at_ns, clock_mono_ns());
    if (write(sl.stop_fd, &one, sizeof one) < 0)
        log_warn("syslog: cannot wake the listeners");
    if (sl.has_tcp)
        pthread_join(sl.tcp_thread, NULL);
    if (sl.has_udp)
        pthread_join(sl.udp_thread, NULL);
    if (sl.tcp_fd >= 0)
        close(sl.tcp_fd);
    if (sl.udp_fd >= 0)
        close(sl.udp_fd);
    close(sl.stop_fd);
    sl.tcp_fd = sl.udp_fd = sl.stop_fd = -1;
    sl.has_tcp = sl.has_udp = false;
}

/* --- /metrics ---------------------------------------------------------------- */

void syslog_listen_metrics(struct buf *out)
{
    buf_puts(out, "# HELP logbucket_syslog_messages_total Syslog messages received, by transport "
                  "and format (unparsed: stored whole as msg).\n"
                  "# TYPE logbucket_syslog_messages_total counter\n");
    for (int t = 0; t < T_COUNT; t++)
        for (int k = 0; k < K_COUNT; k++)
            buf_printf(out,
                       "logbucket_syslog_messages_total{transport=\"%s\",format=\"%s\"} %llu\n",
                       transport_names[t], kind_names[k],
                       (unsigned long long)atomic_load(&sl.messages[t][k]));
    buf_puts(out, "# HELP logbucket_syslog_rows_total Syslog messages written to the store.\n"
                  "# TYPE logbucket_syslog_rows_total counter\n");
    for (int t = 0; t < T_COUNT; t++)
        buf_printf(out, "logbucket_syslog_rows_total{transport=\"%s\"} %llu\n", transport_names[t],
                   (unsigned long long)atomic_load(&sl.rows[t]));
    buf_puts(out, "# HELP logbucket_syslog_bytes_total Bytes read from syslog sockets.\n"
                  "# TYPE logbucket_syslog_bytes_total counter\n");
    for (int t = 0; t < T_COUNT; t++)
        buf_printf(out, "logbucket_syslog_bytes_total{transport=\"%s\"} %llu\n", transport_names[t],
                   (unsigned long long)atomic_load(&sl.bytes[t]));
    buf_puts(out, "# HELP logbucket_syslog_batches_total Batches of syslog rows written.\n"
                  "# TYPE logbucket_syslog_batches_total counter\n");
    for (int t = 0; t < T_COUNT; t++)
        buf_printf(out, "logbucket_syslog_batches_total{transport=\"%s\"} %llu\n",
                   transport_names[t], (unsigned long long)atomic_load(&sl.batches[t]));
    buf_puts(out, "# HELP logbucket_syslog_rejects_total Syslog messages not stored as parsed, "
                  "and refused connections, by reason.\n"
                  "# TYPE logbucket_syslog_rejects_total counter\n");
    for (int t = 0; t < T_COUNT; t++)
        for (int r = 0; r < R_COUNT; r++)
            buf_printf(out, "logbucket_syslog_rejects_total{transport=\"%s\",reason=\"%s\"} %llu\n",
                       transport_names[t], reject_names[r],
                       (unsigned long long)atomic_load(&sl.rejects[t][r]));
    buf_printf(out,
               "# HELP logbucket_syslog_connections Open syslog TCP connections.\n"
               "# TYPE logbucket_syslog_connections gauge\n"
               "logbucket_syslog_connections %d\n"
               "# HELP logbucket_syslog_connections_total Syslog TCP connections accepted.\n"
               "# TYPE logbucket_syslog_connections_total counter\n"
               "logbucket_syslog_connections_total %llu\n"
               "# HELP logbucket_syslog_idle_closes_total Syslog TCP connections closed after "
               "syslog_idle_timeout without a byte.\n"
               "# TYPE logbucket_syslog_idle_closes_total counter\n"
               "logbucket_syslog_idle_closes_total %llu\n",
               atomic_load(&sl.nconns), (unsigned long long)atomic_load(&sl.connections_total),
               (unsigned long long)atomic_load(&sl.idle_closes));
}
