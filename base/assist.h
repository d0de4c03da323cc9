/* Helper threads for a part of one request's work. A reader that splits
 * its work in two offers one part to a helper (assist_offer) and does the
 * other itself, then waits for the helper's part (assist_wait). The
 * helpers (one fewer than the CPUs online, at most ASSIST_MAX) start at
 * the first offer and stay; each takes one part at a time. When every
 * helper is busy (other requests' parts), or the machine has one CPU, the
 * offer is refused and the caller does both parts: a split never waits for
 * a helper to come free, nor for one to begin (assist_wait). A helper's wake costs about 10 us on a
 * 2-core virtual machine, a thread of its own 20-90 us. Thread-safe. */
#ifndef LB_ASSIST_H
#define LB_ASSIST_H

#include <stdbool.h>

#define ASSIST_MAX 3
#define ASSIST_WARM_US 300

/* One part handed to a helper; the caller's, alive until assist_wait. */
struct assist {
    void (*fn)(void *arg);
    void *arg;
    bool begun, done;    /* private: set by the helper, under the lock */
    struct assist *next; /* private: the queue */
};

/* True when a helper is to run fn(arg) (assist_wait must follow); false
 * when none is free: nothing was started, fn is the caller's to run. */
bool assist_offer(struct assist *a, void (*fn)(void *), void *arg);
/* Wakes an idle helper to wait for an offer by spinning, for at most
 * ASSIST_WARM_US, instead of asleep: for a caller that will offer a part
 * after some work of its own (a query's plan and cursors), so that the
 * part begins without a wake's delay (about 27 us on average on this
 * 2-core virtual machine, its idle CPU halted). Costs the helper's CPU for
 * that long when no offer comes. */
void assist_warm(void);
/* Waits until the helper has run the part a if one has begun it, or takes
 * it back if none has yet (a helper descheduled on a busy machine is not
 * waited for): true when fn ran, false when it will not (REQUIRES:
 * offered). A part that shares its work with the caller's (each taking
 * the next piece no one has taken) so never leaves the caller waiting
 * longer than the helper's piece in hand. */
bool assist_wait(struct assist *a);

#endif
