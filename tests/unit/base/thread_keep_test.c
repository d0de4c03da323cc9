/* base/thread_keep.h: one zeroed object per thread, the same one each time
 * on a thread, freed with its contents when the thread ends. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/thread_keep.h"

struct obj {
    char *held; /* freed by destroy */
    long zero[8];
};

static atomic_int destroyed;

static void obj_destroy(void *p)
{
    struct obj *o = p;
    free(o->held);
    atomic_fetch_add(&destroyed, 1);
}

static struct thread_keep keep = THREAD_KEEP(sizeof(struct obj), obj_destroy);
static struct thread_keep bare = THREAD_KEEP(sizeof(long double), NULL);

static void *thread_main(void *arg)
{
    struct obj *o = thread_keep_get(&keep);
    for (size_t i = 0; i < 8; i++)
        if (o->zero[i] || o->held)
            return NULL;
    if (thread_keep_get(&keep) != o)
        return NULL;
    o->held = xmalloc(100);
    long double *x = thread_keep_get(&bare);
    if ((uintptr_t)x % _Alignof(long double))
        return NULL;
    *(struct obj **)arg = o;
    return arg;
}

static void test_one_per_thread(void **state)
{
    (void)state;
    struct obj *mine = thread_keep_get(&keep), *theirs[4] = {NULL};
    assert_ptr_equal(thread_keep_get(&keep), mine);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, &theirs[i]), 0);
    for (int i = 0; i < 4; i++) {
        void *ret;
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_ptr_equal(ret, &theirs[i]); /* zeroed, the same each time, aligned */
        assert_non_null(theirs[i]);
        assert_ptr_not_equal(theirs[i], mine);
    }
    /* each ended thread's object was destroyed (its held memory freed:
     * a leak check of this test would see it otherwise) */
    assert_int_equal(atomic_load(&destroyed), 4);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_per_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
