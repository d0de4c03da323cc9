/* tail_load: N live tail clients (GET /api/v1/tail) held open against a
 * running logbucketd on 127.0.0.1 for a bounded time, reading as fast as
 * the rows come; prints the rows and dropped markers they received. Used
 * beside ingest_bench to measure what following costs the writers:
 *
 *   tail_load --port 8086 --db bench --clients 100 --seconds 60 [--filter host|event|none]
 *
 * --filter host (default): client i follows host-%04u of ingest_bench's
 * hosts (i * 10 % 1000), the "tail -f of my host" use; event: client i
 * follows ev%02u (i % 20); none: every row of the database. Bounded: at
 * most 10,000 clients, at most an hour. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 10000
#define CARRY 32

struct client {
    int fd;
    char carry[CARRY]; /* the end of the last read: a token may straddle reads */
    size_t ncarry;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    return fd;
}

static unsigned long long rows, dropped, bytes;

/* Counts rows ({"ts":) and dropped markers in a piece of the stream. */
static void scan(struct client *c, const char *p, size_t n)
{
    char buf[CARRY + 65536];
    memcpy(buf, c->carry, c->ncarry);
    memcpy(buf + c->ncarry, p, n);
    size_t len = c->ncarry + n;
    buf[len] = '\0';
    const char *s = buf;
    size_t skip = c->ncarry; /* tokens wholly in the carry were counted */
    for (const char *q = s; (q = memmem(q, len - (size_t)(q - s), "{\"ts\":", 6)) != NULL; q++)
        if ((size_t)(q - s) + 6 > skip)
            rows++;
    for (const char *q = s; (q = memmem(q, len - (size_t)(q - s), "{\"dropped\":", 11)) != NULL;
         q++) {
        const char *end = strchr(q, '}');
        if (end && (size_t)(end - s) >= skip)
            dropped += strtoull(q + 11, NULL, 10);
    }
    size_t keep = len < CARRY - 1 ? len : CARRY - 1;
    memcpy(c->carry, buf + len - keep, keep);
    c->ncarry = keep;
}

int main(int argc, char **argv)
{
    int port = 8086, nclients = 100;
    double seconds = 60;
    const char *db = "bench", *filter = "host";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port"))
            port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--db"))
            db = argv[i + 1];
        else if (!strcmp(argv[i], "--clients"))
            nclients = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--filter"))
            filter = argv[i + 1];
        else {
            fprintf(stderr, "usage: tail_load [--port N] [--db NAME] [--clients N] "
                            "[--seconds S] [--filter host|event|none]\n");
            return 2;
        }
    }
    if (nclients < 1 || nclients > MAX_CLIENTS || seconds <= 0 || seconds > 3600) {
        fprintf(stderr, "tail_load: 1..%d clients, 0..3600 seconds\n", MAX_CLIENTS);
        return 2;
    }
    struct client *cl = calloc((size_t)nclients, sizeof *cl);
    struct pollfd *pf = calloc((size_t)nclients, sizeof *pf);
    for (int i = 0; i < nclients; i++) {
        char path[256];
        if (!strcmp(filter, "host"))
            snprintf(path, sizeof path, "/api/v1/tail?db=%s&host=host-%04u", db,
                     (unsigned)(i * 10 % 1000));
        else if (!strcmp(filter, "event"))
            snprintf(path, sizeof path, "/api/v1/tail?db=%s&event=ev%02u", db, (unsigned)(i % 20));
        else
            snprintf(path, sizeof path, "/api/v1/tail?db=%s", db);
        cl[i].fd = connect_get(port, path);
        if (cl[i].fd < 0) {
            fprintf(stderr, "tail_load: client %d: cannot connect: %s\n", i, strerror(errno));
            return 1;
        }
        pf[i] = (struct pollfd){.fd = cl[i].fd, .events = POLLIN};
    }
    double t0 = now_s(), end = t0 + seconds;
    int open = nclients;
    char buf[65536];
    while (open > 0 && now_s() < end) {
        int r = poll(pf, (nfds_t)nclients, 200);
        for (int i = 0; r > 0 && i < nclients; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(pf[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(pf[i].fd);
                pf[i].fd = -1;
                open--;
                continue;
            }
            bytes += (unsigned long long)n;
            scan(&cl[i], buf, (size_t)n);
        }
    }
    double t = now_s() - t0;
    printf("tail_load: %d clients (filter %s), %.1f s: %llu rows, %llu dropped, %.1f MB, "
           "%d streams still open\n",
           nclients, filter, t, rows, dropped, (double)bytes / 1e6, open);
    for (int i = 0; i < nclients; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
    free(pf);
    free(cl);
    return 0;
}
