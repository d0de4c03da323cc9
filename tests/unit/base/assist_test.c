/* base/assist.h: a part a helper takes runs once, and a part offered while
 * every helper is busy is refused; a part waited for runs exactly when
 * assist_wait says it ran (begun by a helper) and never after a wait that
 * took it back; offers from several threads at once; offers to a warmed
 * helper. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/assist.h"

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open, entered;
};

static void wait_gate(void *arg)
{
    struct gate *g = arg;
    pthread_mutex_lock(&g->mu);
    g->entered = true;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void count(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* Every helper held inside a part: the next offer is refused; once they
 * are let go, each held part is waited for and ran. */
static void test_busy_refuses(void **state)
{
    (void)state;
    struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};
    struct assist held[ASSIST_MAX + 1];
    size_t n = 0;
    for (; n <= ASSIST_MAX; n++) {
        g.entered = false;
        if (!assist_offer(&held[n], wait_gate, &g))
            break;
        pthread_mutex_lock(&g.mu); /* the helper has begun it: not taken back */
        while (!g.entered)
            pthread_cond_wait(&g.cv, &g.mu);
        pthread_mutex_unlock(&g.mu);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long want = cpus > 1 ? cpus - 1 : 0;
    assert_int_equal(n, want > ASSIST_MAX ? ASSIST_MAX : want);
    atomic_int runs = 0;
    struct assist more;
    assert_false(assist_offer(&more, count, &runs)); /* none free */
    pthread_mutex_lock(&g.mu);
    g.open = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    for (size_t i = 0; i < n; i++)
        assert_true(assist_wait(&held[i]));
    assert_int_equal(atomic_load(&runs), 0);
}

/* Offers waited for at once, many times: the part ran exactly when the
 * wait says so, once; a part taken back never runs later. */
static void *offer_many(void *arg)
{
    atomic_int *bad = arg;
    for (int i = 0; i < 2000; i++) {
        atomic_int runs = 0;
        struct assist a;
        if (!assist_offer(&a, count, &runs))
            continue;
        bool ran = assist_wait(&a);
        if (atomic_load(&runs) != (ran ? 1 : 0))
            atomic_fetch_add(bad, 1);
    }
    return NULL;
}

static void test_wait_or_take_back(void **state)
{
    (void)state;
    atomic_int bad = 0;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, offer_many, &bad), 0);
    offer_many(&bad);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&bad), 0);
    /* the helpers are all free again: an offer is taken where any exist */
    atomic_int runs = 0;
    struct assist a;
    if (assist_offer(&a, count, &runs)) {
        bool ran = assist_wait(&a);
        assert_int_equal(ran, atomic_load(&runs) == 1);
    }
}

/* A warmed helper takes the next offer while it spins, and goes back to
 * sleep after ASSIST_WARM_US without one: later offers are taken still. */
static void test_warm(void **state)
{
    (void)state;
    for (int i = 0; i < 200; i++) {
        atomic_int runs = 0;
        struct assist a;
        assist_warm();
        if (i % 2)
            usleep(50);
        if (assist_offer(&a, count, &runs)) {
            bool ran = assist_wait(&a);
            assert_int_equal(ran, atomic_load(&runs) == 1);
        }
    }
    assist_warm();
    usleep(3 * ASSIST_WARM_US); /* no offer: the spin ends */
    atomic_int runs = 0;
    struct assist a;
    if (assist_offer(&a, count, &runs)) {
        bool ran = assist_wait(&a);
        assert_int_equal(ran, atomic_load(&runs) == 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_refuses),
        cmocka_unit_test(test_wait_or_take_back),
        cmocka_unit_test(test_warm),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
