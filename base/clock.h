/* The clocks of the daemon, in nanoseconds: monotonic for durations and
 * deadlines, real (since the epoch) for timestamps and TTLs, and the
 * calling thread's CPU time (benchmarks). */
#ifndef LB_CLOCK_H
#define LB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline int64_t clock_real_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline int64_t clock_thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

#endif
