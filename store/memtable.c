/* The memtable's skiplist. Nodes live in the arena: a small header, the
 * next pointers of their height, then the internal key and the value. One
 * writer links a node bottom-up with release stores, so a reader that
 * sees a node through an acquire load sees all of it. */
#include "store/memtable.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "config/buf.h"
#include "store/arena.h"
#include "store/ikey.h"

#define SKL_MAX_HEIGHT 12

/* pfx holds the first 16 key bytes as two big-endian words (zero padded):
 * most comparisons end there without touching the key bytes. */
struct skl_node {
    uint64_t pfx[2];
    uint32_t klen; /* internal key length */
    uint32_t vlen;
    uint32_t height;
    _Atomic(struct skl_node *) next[];
};

struct skl_key {
    struct slice k;
    uint64_t pfx[2];
};

static void key_prefix(struct slice k, uint64_t pfx[2])
{
    uint64_t w[2] = {0, 0};
    memcpy(w, k.ptr, k.len < 16 ? k.len : 16);
    pfx[0] = __builtin_bswap64(w[0]); /* little-endian host: memcmp order */
    pfx[1] = __builtin_bswap64(w[1]);
}

static struct skl_key make_key(struct slice k)
{
    struct skl_key sk;
    sk.k = k;
    key_prefix(k, sk.pfx);
    return sk;
}

struct memtable {
    atomic_int refs;
    struct arena arena;
    struct skl_node *head;
    atomic_int height;
    atomic_size_t count;
    uint64_t gen;
    uint64_t rnd; /* writer only */
};

static inline char *node_data(const struct skl_node *n)
{
    return (char *)&n->next[n->height];
}

static inline struct slice node_key(const struct skl_node *n)
{
    return slice_make(node_data(n), n->klen);
}

static inline struct slice node_value(const struct skl_node *n)
{
    return slice_make(node_data(n) + n->klen, n->vlen);
}

static inline struct skl_node *nx(const struct skl_node *n, int level)
{
    return atomic_load_explicit(&((struct skl_node *)n)->next[level], memory_order_acquire);
}

/* memcmp order of n's key against k, by the prefixes first */
static inline int node_cmp(const struct skl_node *n, const struct skl_key *k)
{
    if (n->pfx[0] != k->pfx[0])
        return n->pfx[0] < k->pfx[0] ? -1 : 1;
    if (n->pfx[1] != k->pfx[1])
        return n->pfx[1] < k->pfx[1] ? -1 : 1;
    return slice_cmp(node_key(n), k->k);
}

static struct skl_node *node_alloc(struct memtable *mt, int height, size_t klen, size_t vlen)
{
    size_t size = sizeof(struct skl_node) + (size_t)height * sizeof(void *) + klen + vlen;
    struct skl_node *n = arena_alloc(&mt->arena, size);
    n->klen = (uint32_t)klen;
    n->vlen = (uint32_t)vlen;
    n->height = (uint32_t)height;
    for (int i = 0; i < height; i++)
        atomic_init(&n->next[i], NULL);
    return n;
}

struct memtable *mt_new(uint64_t gen, atomic_size_t *total, atomic_size_t *active,
                        struct arena_pool *pool)
{
    struct memtable *mt = xcalloc(1, sizeof *mt + sizeof(struct skl_node) +
                                         SKL_MAX_HEIGHT * sizeof(void *));
    atomic_init(&mt->refs, 1);
    arena_init(&mt->arena);
    mt->arena.acct[0] = total;
    mt->arena.acct[1] = active;
    mt->arena.pool = pool;
    mt->head = (struct skl_node *)(mt + 1);
    mt->head->height = SKL_MAX_HEIGHT;
    for (int i = 0; i < SKL_MAX_HEIGHT; i++)
        atomic_init(&mt->head->next[i], NULL);
    atomic_init(&mt->height, 1);
    atomic_init(&mt->count, 0);
    mt->gen = gen;
    mt->rnd = 0x9e3779b97f4a7c15ULL ^ gen;
    return mt;
}

void mt_detach_active(struct memtable *mt)
{
    if (mt->arena.acct[1])
        atomic_fetch_sub(mt->arena.acct[1], arena_bytes(&mt->arena));
    mt->arena.acct[1] = NULL;
}

void mt_ref(struct memtable *mt)
{
    atomic_fetch_add(&mt->refs, 1);
}

void mt_unref(struct memtable *mt)
{
    if (!mt || atomic_fetch_sub(&mt->refs, 1) != 1)
        return;
    arena_destroy(&mt->arena);
    free(mt);
}

size_t mt_bytes(const struct memtable *mt)
{
    return arena_bytes(&mt->arena);
}

size_t mt_count(const struct memtable *mt)
{
    return atomic_load_explicit(&((struct memtable *)mt)->count, memory_order_relaxed);
}

uint64_t mt_gen(const struct memtable *mt)
{
    return mt->gen;
}

static int random_height(struct memtable *mt)
{
    /* xorshift64; a level is added with probability 1/4 */
    uint64_t x = mt->rnd;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    mt->rnd = x;
    int h = 1;
    while (h < SKL_MAX_HEIGHT && (x & 3) == 0) {
        h++;
        x >>= 2;
    }
    return h;
}

/* Last node < key at each level into prev (if given); returns the node at
 * level 0 after it (first node >= key), or NULL. */
static struct skl_node *find_ge(struct memtable *mt, const struct skl_key *key,
                                struct skl_node **prev)
{
    struct skl_node *x = mt->head;
    int level = atomic_load_explicit(&mt->height, memory_order_relaxed) - 1;
    for (;;) {
        struct skl_node *next = nx(x, level);
        if (next && node_cmp(next, key) < 0) {
            x = next;
            continue;
        }
        if (prev)
            prev[level] = x;
        if (level == 0)
            return next;
        level--;
    }
}

static struct skl_node *find_lt(struct memtable *mt, const struct skl_key *key)
{
    struct skl_node *x = mt->head;
    int level = atomic_load_explicit(&mt->height, memory_order_relaxed) - 1;
    for (;;) {
        struct skl_node *next = nx(x, level);
        if (next && node_cmp(next, key) < 0) {
            x = next;
            continue;
        }
        if (level == 0)
            return x == mt->head ? NULL : x;
        level--;
    }
}

static struct skl_node *find_last(struct memtable *mt)
{
    struct skl_node *x = mt->head;
    int level = atomic_load_explicit(&mt->height, memory_order_relaxed) - 1;
    for (;;) {
        struct skl_node *next = nx(x, level);
        if (next) {
            x = next;
            continue;
        }
        if (level == 0)
            return x == mt->head ? NULL : x;
        level--;
    }
}

void mt_add(struct memtable *mt, struct slice ukey, uint64_t seq, int kind, struct slice value)
{
    int h = random_height(mt);
    struct skl_node *n = node_alloc(mt, h, ukey.len + IKEY_TRAILER, value.len);
    char *d = node_data(n);
    memcpy(d, ukey.ptr, ukey.len);
    ikey_put_trailer(d + ukey.len, seq, kind);
    if (value.len)
        memcpy(d + n->klen, value.ptr, value.len);
    key_prefix(node_key(n), n->pfx);

    struct skl_node *prev[SKL_MAX_HEIGHT];
    int cur = atomic_load_explicit(&mt->height, memory_order_relaxed);
    struct skl_key sk = {node_key(n), {n->pfx[0], n->pfx[1]}};
    find_ge(mt, &sk, prev);
    if (h > cur) {
        for (int i = cur; i < h; i++)
            prev[i] = mt->head;
        /* readers seeing the new height before the links find NULL at the
         * head and simply drop a level */
        atomic_store_explicit(&mt->height, h, memory_order_relaxed);
    }
    for (int i = 0; i < h; i++) {
        atomic_store_explicit(&n->next[i], nx(prev[i], i), memory_order_relaxed);
        atomic_store_explicit(&prev[i]->next[i], n, memory_order_release);
    }
    atomic_fetch_add_explicit(&mt->count, 1, memory_order_relaxed);
}

bool mt_get(struct memtable *mt, struct slice ukey, uint64_t max_seq, int *kind,
            struct slice *value)
{
    char stack[256];
    struct buf tmp = BUF_INIT;
    char *k = stack;
    if (ukey.len + IKEY_TRAILER > sizeof stack) {
        buf_reserve(&tmp, ukey.len + IKEY_TRAILER);
        k = tmp.data;
    }
    memcpy(k, ukey.ptr, ukey.len);
    ikey_put_trailer(k + ukey.len, max_seq, 0);
    struct skl_key sk = make_key(slice_make(k, ukey.len + IKEY_TRAILER));
    struct skl_node *n = find_ge(mt, &sk, NULL);
    buf_destroy(&tmp);
    if (!n)
        return false;
    struct slice ik = node_key(n);
    if (!slice_eq(ikey_user(ik), ukey))
        return false;
    *kind = ikey_kind(ik);
    *value = node_value(n);
    return true;
}

/* --- iterator --- */

struct mt_iter {
    struct iter base;
    struct memtable *mt;
    struct skl_node *node;
};

static bool mti_valid(const struct iter *it)
{
    return ((const struct mt_iter *)it)->node != NULL;
}

static void mti_seek_first(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    m->node = nx(m->mt->head, 0);
}

static void mti_seek_last(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    m->node = find_last(m->mt);
}

static void mti_seek(struct iter *it, struct slice target)
{
    struct mt_iter *m = (struct mt_iter *)it;
    struct skl_key sk = make_key(target);
    m->node = find_ge(m->mt, &sk, NULL);
}

static void mti_next(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    m->node = nx(m->node, 0);
    /* a scan (a flush) visits nodes in key order, not allocation order:
     * start loading the next one while the caller works on this one */
    if (m->node)
        __builtin_prefetch(nx(m->node, 0));
}

static void mti_prev(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    struct skl_key sk = {node_key(m->node), {m->node->pfx[0], m->node->pfx[1]}};
    m->node = find_lt(m->mt, &sk);
}

static struct slice mti_key(const struct iter *it)
{
    return node_key(((const struct mt_iter *)it)->node);
}

static struct slice mti_value(const struct iter *it)
{
    return node_value(((const struct mt_iter *)it)->node);
}

static int mti_status(const struct iter *it)
{
    (void)it;
    return 0;
}

static void mti_destroy(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    mt_unref(m->mt);
    free(m);
}

static const struct it_ops mt_iter_ops = {
    .valid = mti_valid,
    .seek_first = mti_seek_first,
    .seek_last = mti_seek_last,
    .seek = mti_seek,
    .next = mti_next,
    .prev = mti_prev,
    .key = mti_key,
    .value = mti_value,
    .status = mti_status,
    .destroy = mti_destroy,
};

struct iter *mt_iter(struct memtable *mt)
{
    struct mt_iter *m = xcalloc(1, sizeof *m);
    it_init(&m->base, &mt_iter_ops);
    mt_ref(mt);
    m->mt = mt;
    return &m->base;
}
