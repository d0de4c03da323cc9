/* An object each thread keeps from one request to the next: memory a
 * request of megabytes (a push body, its decoder's lists) takes over from
 * the one before it on the same thread, instead of having fresh pages
 * faulted in and handed back each time.
 *
 *   static struct thread_keep keep = THREAD_KEEP(sizeof(struct lists), lists_destroy);
 *   struct lists *l = thread_keep_get(&keep);
 *
 * The object is zeroed when a thread first asks for it; when the thread
 * ends, destroy (may be NULL) frees what it holds and the object is freed. */
#ifndef LB_THREAD_KEEP_H
#define LB_THREAD_KEEP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct thread_keep {
    size_t size;
    void (*destroy)(void *obj);
    atomic_bool ready;
    pthread_key_t key;
};

#define THREAD_KEEP(sz, fn)                                                                        \
    {                                                                                              \
        (sz), (fn), false, 0                                                                       \
    }

void *thread_keep_get(struct thread_keep *k);

#endif
