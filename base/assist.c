/* assist.h: a queue of offered parts under one lock; a helper waits for a
 * part, runs it unlocked, marks it done and wakes the waiters. An offer
 * is taken only while a helper is idle, so the queue holds at most as many
 * parts as there are idle helpers, and no part waits behind another; a
 * part no helper has begun is taken back out by its waiter. */
#include <pthread.h>
#include <unistd.h>

#include "base/assist.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* a part was queued */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* a part was done */
static struct assist *head, *tail;
static int idle; /* helpers waiting for a part, less the parts queued for them */

static void *helper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!head)
            pthread_cond_wait(&work, &mu);
        struct assist *a = head;
        head = a->next;
        if (!head)
            tail = NULL;
        a->begun = true;
        pthread_mutex_unlock(&mu);
        a->fn(a->arg);
        pthread_mutex_lock(&mu);
        a->done = true;
        idle++;
        pthread_cond_broadcast(&done);
    }
    return NULL;
}

/* The helpers: one fewer than the CPUs online, at most ASSIST_MAX, none
 * on one CPU. They inherit the starting thread's signal mask (the daemon's
 * threads block the signals its main thread waits for). */
static void start_helpers(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long n = cpus > 1 ? cpus - 1 : 0;
    if (n > ASSIST_MAX)
        n = ASSIST_MAX;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, helper_main, NULL) != 0)
            break;
        pthread_setname_np(t, "lb-assist");
        pthread_detach(t);
        pthread_mutex_lock(&mu);
        idle++;
        pthread_mutex_unlock(&mu);
    }
}

bool assist_offer(struct assist *a, void (*fn)(void *), void *arg)
{
    pthread_once(&once, start_helpers);
    *a = (struct assist){fn, arg, false, false, NULL};
    pthread_mutex_lock(&mu);
    bool taken = idle > 0;
    if (taken) {
        idle--;
        if (tail)
            tail->next = a;
        else
            head = a;
        tail = a;
        pthread_cond_signal(&work);
    }
    pthread_mutex_unlock(&mu);
    return taken;
}

/* Takes a, not begun, out of the queue (under the lock). */
static void unqueue(struct assist *a)
{
    struct assist **pp = &head, *prev = NULL;
    while (*pp != a) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = a->next;
    if (tail == a)
        tail = prev;
    idle++; /* the helper it was queued for is free again */
}

bool assist_wait(struct assist *a)
{
    pthread_mutex_lock(&mu);
    bool ran = a->begun;
    if (!ran)
        unqueue(a);
    while (ran && !a->done)
        pthread_cond_wait(&done, &mu);
    pthread_mutex_unlock(&mu);
    return ran;
}
