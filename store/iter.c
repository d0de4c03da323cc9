/* The iterator base: cleanup callbacks, and the empty and error iterators
 * that constructors return instead of NULL. */
#include "store/iter.h"

#include <stdlib.h>

#include "base/buf.h"
#include "base/err.h"

struct it_cleanup {
    void (*fn)(void *, void *);
    void *arg1;
    void *arg2;
    struct it_cleanup *next;
};

void it_init(struct iter *it, const struct it_ops *ops)
{
    it->ops = ops;
    it->cleanups = NULL;
    it_set_end(it);
}

void it_on_destroy(struct iter *it, void (*fn)(void *, void *), void *arg1, void *arg2)
{
    struct it_cleanup *c = xmalloc(sizeof *c);
    c->fn = fn;
    c->arg1 = arg1;
    c->arg2 = arg2;
    c->next = it->cleanups; /* newest first: runs in reverse registration order */
    it->cleanups = c;
}

void it_destroy(struct iter *it)
{
    if (!it)
        return;
    struct it_cleanup *c = it->cleanups;
    it->cleanups = NULL;
    while (c) {
        struct it_cleanup *next = c->next;
        c->fn(c->arg1, c->arg2);
        free(c);
        c = next;
    }
    it->ops->destroy(it);
}

struct err_iter {
    struct iter base;
    int status;
};

static void ei_noop(struct iter *it)
{
    (void)it;
}
static void ei_seek(struct iter *it, struct slice t)
{
    (void)it;
    (void)t;
}
static int ei_status(const struct iter *it)
{
    return ((const struct err_iter *)it)->status;
}
static void ei_destroy(struct iter *it)
{
    free(it);
}

static const struct it_ops err_ops = {
    .seek_first = ei_noop,
    .seek_last = ei_noop,
    .seek = ei_seek,
    .next = ei_noop,
    .prev = ei_noop,
    .status = ei_status,
    .destroy = ei_destroy,
};

struct iter *it_new_error(int code)
{
    struct err_iter *it = xmalloc(sizeof *it);
    it_init(&it->base, &err_ops);
    it->status = code;
    return &it->base;
}

struct iter *it_new_empty(void)
{
    return it_new_error(ERR_OK);
}
