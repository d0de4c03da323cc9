/* A minimal HTTP/1.1 keep-alive client for the benchmark programs
 * (lpload, qclient): one blocking connection to 127.0.0.1:PORT, one request
 * at a time, responses read whole (Content-Length, chunked or until close).
 * Header-only (static inline) so that each benchmark stays one .c file.
 * Only loopback: the address is fixed to 127.0.0.1. */
#ifndef BENCH_HTTP_H
#define BENCH_HTTP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BH_MAX_HEADER (64 * 1024)

struct bh_buf {
    char *d;
    size_t len, cap;
};

struct bh_conn {
    int fd;
    int port;
    int timeout_s;
    char *rb; /* receive buffer: rb[rpos..rlen) is unread */
    size_t rpos, rlen, rcap;
};

struct bh_resp {
    int status;
    size_t body_bytes;   /* decoded body size (chunk framing excluded) */
    struct bh_buf *keep; /* if set, the body is appended here */
};

static inline double bh_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline void *bh_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return q;
}

static inline void bh_buf_add(struct bh_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->len + n + 1)
            c *= 2;
        b->d = bh_xrealloc(b->d, c);
        b->cap = c;
    }
    memcpy(b->d + b->len, p, n);
    b->len += n;
    b->d[b->len] = '\0';
}

static inline void bh_buf_puts(struct bh_buf *b, const char *s)
{
    bh_buf_add(b, s, strlen(s));
}

static inline void bh_init(struct bh_conn *c, int port, int timeout_s)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->port = port;
    c->timeout_s = timeout_s > 0 ? timeout_s : 60;
}

static inline void bh_close(struct bh_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->rpos = c->rlen = 0;
}

static inline void bh_free(struct bh_conn *c)
{
    bh_close(c);
    free(c->rb);
    c->rb = NULL;
    c->rcap = 0;
}

static inline int bh_connect(struct bh_conn *c)
{
    bh_close(c);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {.tv_sec = c->timeout_s, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)c->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    return 0;
}

static inline int bh_writev_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

/* Reads more bytes into the receive buffer: 1 read, 0 EOF, -1 error. */
static inline int bh_fill(struct bh_conn *c)
{
    if (c->rpos == c->rlen) {
        c->rpos = c->rlen = 0;
    } else if (c->rpos > 0 && c->rpos >= c->rcap / 2) {
        memmove(c->rb, c->rb + c->rpos, c->rlen - c->rpos);
        c->rlen -= c->rpos;
        c->rpos = 0;
    }
    if (c->rcap - c->rlen < 16384) {
        size_t n = c->rcap ? c->rcap * 2 : 65536;
        c->rb = bh_xrealloc(c->rb, n);
        c->rcap = n;
    }
    for (;;) {
        ssize_t n = recv(c->fd, c->rb + c->rlen, c->rcap - c->rlen, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        c->rlen += (size_t)n;
        return 1;
    }
}

/* Consumes n body bytes (they are in the buffer). */
static inline void bh_take(struct bh_conn *c, size_t n, struct bh_resp *r)
{
    if (r->keep)
        bh_buf_add(r->keep, c->rb + c->rpos, n);
    r->body_bytes += n;
    c->rpos += n;
}

/* Index of "\r\n" in the unread bytes at or after rpos, or -1. */
static inline long bh_find_crlf(const struct bh_conn *c)
{
    for (size_t i = c->rpos; i + 1 < c->rlen; i++)
        if (c->rb[i] == '\r' && c->rb[i + 1] == '\n')
            return (long)(i - c->rpos);
    return -1;
}

static inline int bh_read_chunked(struct bh_conn *c, struct bh_resp *r)
{
    for (;;) {
        long e;
        while ((e = bh_find_crlf(c)) < 0) {
            if (c->rlen - c->rpos > 4096 || bh_fill(c) <= 0)
                return -1;
        }
        char line[64];
        size_t ll = (size_t)e < sizeof(line) - 1 ? (size_t)e : sizeof(line) - 1;
        memcpy(line, c->rb + c->rpos, ll);
        line[ll] = '\0';
        c->rpos += (size_t)e + 2;
        char *end;
        unsigned long long size = strtoull(line, &end, 16);
        if (end == line)
            return -1;
        if (size == 0) {
            /* trailers up to an empty line */
            for (int guard = 0; guard < 1000; guard++) {
                while ((e = bh_find_crlf(c)) < 0)
                    if (bh_fill(c) <= 0)
                        return -1;
                c->rpos += (size_t)e + 2;
                if (e == 0)
                    return 0;
            }
            return -1;
        }
        size_t left = (size_t)size;
        while (left > 0) {
            if (c->rpos == c->rlen && bh_fill(c) <= 0)
                return -1;
            size_t have = c->rlen - c->rpos;
            size_t n = have < left ? have : left;
            bh_take(c, n, r);
            left -= n;
        }
        while (c->rlen - c->rpos < 2)
            if (bh_fill(c) <= 0)
                return -1;
        if (c->rb[c->rpos] != '\r' || c->rb[c->rpos + 1] != '\n')
            return -1;
        c->rpos += 2;
    }
}

/* Case-insensitive header lookup in a header block; copies the value. */
static inline bool bh_header(const char *h, size_t hlen, const char *name, char *val, size_t vcap)
{
    size_t nl = strlen(name);
    const char *p = h, *end = h + hlen;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
                ve--;
            size_t n = (size_t)(ve - v) < vcap - 1 ? (size_t)(ve - v) : vcap - 1;
            memcpy(val, v, n);
            val[n] = '\0';
            return true;
        }
        p = eol + 1;
    }
    return false;
}

/* Reads one response. Returns 0 and fills r, or -1 (connection unusable). */
static inline int bh_read_response(struct bh_conn *c, struct bh_resp *r, bool head_only)
{
    size_t hend = 0;
    for (;;) {
        const char *s = c->rb ? c->rb + c->rpos : NULL;
        size_t n = c->rlen - c->rpos;
        const char *m = NULL;
        if (s && n >= 4)
            m = memmem(s, n, "\r\n\r\n", 4);
        if (m) {
            hend = (size_t)(m - s) + 4;
            break;
        }
        if (n > BH_MAX_HEADER || bh_fill(c) <= 0)
            return -1;
    }
    const char *h = c->rb + c->rpos;
    if (hend < 12 || strncmp(h, "HTTP/1.", 7) != 0)
        return -1;
    bool http10 = h[7] == '0';
    r->status = atoi(h + 9);
    char v[128];
    bool close_after = http10;
    if (bh_header(h, hend, "Connection", v, sizeof(v))) {
        if (strcasecmp(v, "close") == 0)
            close_after = true;
        else if (strcasecmp(v, "keep-alive") == 0)
            close_after = false;
    }
    bool chunked =
        bh_header(h, hend, "Transfer-Encoding", v, sizeof(v)) && strcasestr(v, "chunked") != NULL;
    long long clen = -1;
    if (bh_header(h, hend, "Content-Length", v, sizeof(v)))
        clen = atoll(v);
    c->rpos += hend;
    r->body_bytes = 0;
    if (r->status == 100) /* interim: read the real one */
        return bh_read_response(c, r, head_only);
    if (head_only || r->status == 204 || r->status == 304 ||
        (r->status >= 100 && r->status < 200)) {
        /* no body */
    } else if (chunked) {
        if (bh_read_chunked(c, r) != 0)
            return -1;
    } else if (clen >= 0) {
        size_t left = (size_t)clen;
        while (left > 0) {
            if (c->rpos == c->rlen && bh_fill(c) <= 0)
                return -1;
            size_t have = c->rlen - c->rpos;
            size_t n = have < left ? have : left;
            bh_take(c, n, r);
            left -= n;
        }
    } else {
        for (;;) {
            if (c->rpos < c->rlen)
                bh_take(c, c->rlen - c->rpos, r);
            int f = bh_fill(c);
            if (f < 0)
                return -1;
            if (f == 0)
                break;
        }
        close_after = true;
    }
    if (close_after)
        bh_close(c);
    return 0;
}

/* Sends one request (head must end with the blank line) and reads the
 * answer; reconnects once if a kept-alive connection was closed by the
 * server before the request. Returns 0 or -1. */
static inline int bh_roundtrip(struct bh_conn *c, const char *head, size_t hlen, const void *body,
                               size_t blen, struct bh_resp *r)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        bool fresh = false;
        if (c->fd < 0) {
            if (bh_connect(c) != 0)
                return -1;
            fresh = true;
        }
        struct iovec iov[2] = {{(void *)head, hlen}, {(void *)body, blen}};
        size_t keep_len = r->keep ? r->keep->len : 0;
        if (bh_writev_all(c->fd, iov, blen ? 2 : 1) == 0 && bh_read_response(c, r, false) == 0)
            return 0;
        bh_close(c);
        if (r->keep)
            r->keep->len = keep_len;
        if (fresh)
            return -1;
    }
    return -1;
}

#endif
