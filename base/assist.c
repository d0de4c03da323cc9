/* assist.h: a queue of offered parts under one lock; a helper waits for a
 * part, runs it unlocked, marks it done and wakes the waiters. An offer
 * is taken only while a helper is idle, so the queue holds at most as many
 * parts as there are idle helpers, and no part waits behind another; a
 * part no helper has begun is taken back out by its waiter. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "base/assist.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* a part was queued */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* a part was done */
static struct assist *head, *tail;
static int idle;                   /* helpers waiting for a part, less the parts queued for them */
static atomic_bool queued;         /* head != NULL, for a spinning helper */
static atomic_llong warm_until_ns; /* assist_warm's: spin for a part until then */

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Until a part is queued or the warm time is over (unlocked), yielding
 * the CPU often: a helper that shares its CPU with the statement it waits
 * for (the other CPUs busy) must not take that statement's time (pinned to
 * one CPU, a one-host panel took twice as long with a spin that did not
 * yield). */
static void spin(void)
{
    long long until = atomic_load_explicit(&warm_until_ns, memory_order_relaxed);
    for (unsigned i = 1; !atomic_load_explicit(&queued, memory_order_acquire); i++) {
        if (i % 16 == 0) {
            if (now_ns() >= until)
                break;
            sched_yield();
        }
        cpu_relax();
    }
}

static void *helper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!head) {
            if (now_ns() < atomic_load_explicit(&warm_until_ns, memory_order_relaxed)) {
                pthread_mutex_unlock(&mu);
                spin();
                pthread_mutex_lock(&mu);
                continue;
            }
            pthread_cond_wait(&work, &mu);
        }
        struct assist *a = head;
        head = a->next;
        if (!head) {
            tail = NULL;
            atomic_store_explicit(&queued, false, memory_order_relaxed);
        }
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
        atomic_store_explicit(&queued, true, memory_order_release);
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
    if (!head)
        atomic_store_explicit(&queued, false, memory_order_relaxed);
    idle++; /* the helper it was queued for is free again */
}

void assist_warm(void)
{
    pthread_once(&once, start_helpers);
    pthread_mutex_lock(&mu);
    if (idle > 0) {
        atomic_store_explicit(&warm_until_ns, now_ns() + ASSIST_WARM_US * 1000LL,
                              memory_order_relaxed);
        pthread_cond_signal(&work);
    }
    pthread_mutex_unlock(&mu);
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
