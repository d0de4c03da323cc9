#include "base/thread_keep.h"

#include <stdalign.h>
#include <stdlib.h>

/* A kept object behind the header that says how to free it (a key's
 * destructor is given the value alone). */
struct kept {
    void (*destroy)(void *obj);
    alignas(max_align_t) unsigned char obj[];
};

static void kept_free(void *p)
{
    struct kept *h = p;
    if (h->destroy)
        h->destroy(h->obj);
    free(h);
}

static pthread_mutex_t make_mu = PTHREAD_MUTEX_INITIALIZER;

static void key_make(struct thread_keep *k)
{
    pthread_mutex_lock(&make_mu);
    if (!atomic_load_explicit(&k->ready, memory_order_relaxed)) {
        if (pthread_key_create(&k->key, kept_free) != 0)
            abort();
        atomic_store_explicit(&k->ready, true, memory_order_release);
    }
    pthread_mutex_unlock(&make_mu);
}

void *thread_keep_get(struct thread_keep *k)
{
    if (!atomic_load_explicit(&k->ready, memory_order_acquire))
        key_make(k);
    struct kept *h = pthread_getspecific(k->key);
    if (!h) {
        /* calloc, not buf.h's xcalloc: buf.c keeps its spare buffer here */
        if (!(h = calloc(1, sizeof *h + k->size)))
            abort();
        h->destroy = k->destroy;
        if (pthread_setspecific(k->key, h) != 0)
            abort();
    }
    return h->obj;
}
