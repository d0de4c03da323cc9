/* The memtable's skiplists. Nodes live in the arena: a small header, the
 * next pointers of their height, then the internal key and the value. One
 * writer links a node bottom-up with release stores, so a reader that
 * sees a node through an acquire load sees all of it.
 * A grouped memtable (the host index) is two levels: a skiplist of groups
 * (hosts: "host\0") whose values point at one small skiplist per group, and
 * a writer-only open-addressing table from group to list, so an insert
 * searches a short list instead of the whole index. Groups, their keys and
 * their list heads live in a second, small arena: every insert touches its
 * group, and dense groups stay in cache while entries stream past.
 * The writer keeps a splice (a finger) into the entry list of an ungrouped
 * memtable: where its last insert went at each level. Rows arrive close to
 * time order, so the next key usually lands right beside the last one and
 * the insert starts from there instead of from the top of the list. */
#include "store/memtable.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "store/arena.h"
#include "store/ikey.h"
#include "store/table/bloom.h"

#define SKL_MAX_HEIGHT 12

/* Key bytes cached in a node, as PFX_WORDS big-endian words. 24 bytes
 * cover bucket, ts and a short host and event ("host-0421\0ev07"): rows that
 * share a ts (millisecond log stamps: a thousand or more events at one ts)
 * are still ordered by the prefix alone, without reading the key bytes (a
 * second cache line of a node met once in a random search). */
#define PFX_WORDS 3
#define PFX_BYTES (8 * PFX_WORDS)

/* pfx holds PFX_BYTES key bytes (zero padded), taken after the bytes every
 * key of the node's list shares (its skl's off): most comparisons end there
 * without touching the key bytes. */
struct skl_node {
    uint64_t pfx[PFX_WORDS];
    uint32_t klen; /* internal key length (group key length for groups) */
    uint32_t vlen;
    uint32_t height;
    _Atomic(struct skl_node *) next[];
};

struct skl {
    struct skl_node *head;
    atomic_int height;
    uint32_t off; /* leading bytes all keys share (a group's key), not compared */
};

struct splice;

/* A group of a grouped memtable: the value of its node in the group list. */
struct grp {
    struct skl list;
    struct skl_node *node; /* in the group list; its key is the group key */
    struct splice *splice; /* writer only; NULL until an insert misses the head */
    uint32_t klen;
    char key[]; /* the group key, next to the group for lookups */
};

/* A slot of the writer's group table: the hash beside the group, so a
 * probe reads one cache line. g == NULL: empty. */
struct gslot {
    uint64_t hash;
    struct grp *g;
};

/* A key to search a list with: pfx taken at off, the list's off. */
struct skl_key {
    struct slice k;
    uint64_t pfx[PFX_WORDS];
    uint32_t off;
};

/* The writer's finger into a list: at each level below height, the
 * adjacent nodes prev < key <= next of the last insert (next NULL: the end
 * of the level). Levels nest: at[i+1].prev <= at[i].prev and
 * at[i].next <= at[i+1].next, so a level that brackets a key brackets it at
 * every level above. height 0: not set yet. Most inserts read only the
 * height and level 0: they share the first cache line. */
struct splice {
    int height;
    bool last_is_next; /* the last insert's node is at[0].next, not .prev */
    /* copies of the level-0 neighbours' prefixes: most bracket checks
     * end on them without reading either node */
    uint64_t prev_pfx[PFX_WORDS], next_pfx[PFX_WORDS];
    struct {
        struct skl_node *prev, *next;
    } at[SKL_MAX_HEIGHT];
};

struct memtable {
    atomic_int refs;
    struct arena arena;
    struct arena garena; /* groups and their list heads (grouped only) */
    struct skl main;     /* entries, or the groups when grouped */
    bool grouped;
    struct splice splice; /* writer only; into main when not grouped */
    struct gslot *slots;  /* writer only; a power of two, at most half full */
    size_t nslots, ngroups;
    atomic_size_t count;
    atomic_size_t deletes; /* entries that are not puts (tombstones) */
    uint64_t gen;
    uint64_t rnd; /* writer only */
};

/* The PFX_BYTES bytes of k after its first off (k.len >= off). */
static void key_prefix(struct slice k, uint32_t off, uint64_t pfx[PFX_WORDS])
{
    uint64_t w[PFX_WORDS] = {0};
    size_t n = k.len - off;
    memcpy(w, k.ptr + off, n < PFX_BYTES ? n : PFX_BYTES);
    for (int i = 0; i < PFX_WORDS; i++)
        pfx[i] = __builtin_bswap64(w[i]); /* little-endian host: memcmp order */
}

/* The order of two prefixes (0: equal). */
static inline int pfx_cmp(const uint64_t a[PFX_WORDS], const uint64_t b[PFX_WORDS])
{
    for (int i = 0; i < PFX_WORDS; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* A search key for l. REQUIRES: k starts with the bytes l's keys share. */
static struct skl_key make_key(const struct skl *l, struct slice k)
{
    struct skl_key sk;
    sk.k = k;
    sk.off = l->off;
    key_prefix(k, l->off, sk.pfx);
    return sk;
}

static inline char *node_data(const struct skl_node *n)
{
    return (char *)&n->next[n->height];
}

static inline struct slice node_key(const struct skl_node *n)
{
    return slice_make(node_data(n), n->klen);
}

/* The search key of n, a node of l. */
static struct skl_key node_skey(const struct skl *l, const struct skl_node *n)
{
    struct skl_key sk;
    sk.k = node_key(n);
    memcpy(sk.pfx, n->pfx, sizeof sk.pfx);
    sk.off = l->off;
    return sk;
}

static inline struct slice node_value(const struct skl_node *n)
{
    return slice_make(node_data(n) + n->klen, n->vlen);
}

static inline struct grp *node_grp(const struct skl_node *n)
{
    struct grp *g;
    memcpy(&g, node_data(n) + n->klen, sizeof g);
    return g;
}

static inline struct skl_node *nx(const struct skl_node *n, int level)
{
    return atomic_load_explicit(&((struct skl_node *)n)->next[level], memory_order_acquire);
}

/* memcmp order of n's key against k (both keys of k's list), by the
 * prefixes first */
static inline int node_cmp(const struct skl_node *n, const struct skl_key *k)
{
    int c = pfx_cmp(n->pfx, k->pfx);
    if (c)
        return c;
    size_t from = k->off;
    if (n->klen >= from + PFX_BYTES && k->k.len >= from + PFX_BYTES)
        from += PFX_BYTES; /* equal prefixes: the rest decides */
    return slice_cmp(slice_make(node_data(n) + from, n->klen - from),
                     slice_make(k->k.ptr + from, k->k.len - from));
}

static struct skl_node *node_alloc_in(struct arena *a, int height, size_t klen, size_t vlen)
{
    size_t size = sizeof(struct skl_node) + (size_t)height * sizeof(void *) + klen + vlen;
    struct skl_node *n = arena_alloc(a, size);
    n->klen = (uint32_t)klen;
    n->vlen = (uint32_t)vlen;
    n->height = (uint32_t)height;
    for (int i = 0; i < height; i++)
        atomic_init(&n->next[i], NULL);
    return n;
}

static struct skl_node *node_alloc(struct memtable *mt, int height, size_t klen, size_t vlen)
{
    return node_alloc_in(&mt->arena, height, klen, vlen);
}

static void skl_init(struct arena *a, struct skl *l, uint32_t off)
{
    l->head = node_alloc_in(a, SKL_MAX_HEIGHT, 0, 0);
    memset(l->head->pfx, 0, sizeof l->head->pfx);
    atomic_init(&l->height, 1);
    l->off = off;
}

/* The main list's head is allocated apart from the arena: an empty
 * memtable charges nothing to the budget (a database of 1,024 buckets has
 * 1,025 of them, and their first arena blocks used to fill the budget). */
static void skl_init_main(struct skl *l)
{
    l->head = xcalloc(1, sizeof(struct skl_node) + SKL_MAX_HEIGHT * sizeof(void *));
    l->head->height = SKL_MAX_HEIGHT;
    for (int i = 0; i < SKL_MAX_HEIGHT; i++)
        atomic_init(&l->head->next[i], NULL);
    atomic_init(&l->height, 1);
    l->off = 0;
}

struct memtable *mt_new(uint64_t gen, atomic_size_t *total, atomic_size_t *active,
                        struct arena_pool *pool, bool grouped)
{
    struct memtable *mt = xcalloc(1, sizeof *mt);
    atomic_init(&mt->refs, 1);
    arena_init(&mt->arena);
    mt->arena.acct[0] = total;
    mt->arena.acct[1] = active;
    mt->arena.pool = pool;
    arena_init(&mt->garena);
    mt->garena.acct[0] = total;
    mt->garena.acct[1] = active;
    skl_init_main(&mt->main);
    mt->grouped = grouped;
    atomic_init(&mt->count, 0);
    atomic_init(&mt->deletes, 0);
    mt->gen = gen;
    mt->rnd = 0x9e3779b97f4a7c15ULL ^ gen;
    return mt;
}

void mt_detach_active(struct memtable *mt)
{
    if (mt->arena.acct[1])
        atomic_fetch_sub(mt->arena.acct[1], arena_bytes(&mt->arena) + arena_bytes(&mt->garena));
    mt->arena.acct[1] = NULL;
    mt->garena.acct[1] = NULL;
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
    arena_destroy(&mt->garena);
    free(mt->main.head);
    free(mt->slots);
    free(mt);
}

size_t mt_bytes(const struct memtable *mt)
{
    return arena_bytes(&mt->arena) + arena_bytes(&mt->garena);
}

size_t mt_count(const struct memtable *mt)
{
    return atomic_load_explicit(&((struct memtable *)mt)->count, memory_order_relaxed);
}

size_t mt_deletes(const struct memtable *mt)
{
    return atomic_load_explicit(&((struct memtable *)mt)->deletes, memory_order_relaxed);
}

uint64_t mt_gen(const struct memtable *mt)
{
    return mt->gen;
}

/* The single writer's counter update: a plain load and store that readers
 * may read at any time, without the locked add that would drain the store
 * buffer of the node just written. */
static inline void writer_add(atomic_size_t *c, size_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
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
static struct skl_node *find_ge(struct skl *l, const struct skl_key *key, struct skl_node **prev)
{
    struct skl_node *x = l->head;
    int level = atomic_load_explicit(&l->height, memory_order_relaxed) - 1;
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

static struct skl_node *find_lt(struct skl *l, const struct skl_key *key)
{
    struct skl_node *x = l->head;
    int level = atomic_load_explicit(&l->height, memory_order_relaxed) - 1;
    for (;;) {
        struct skl_node *next = nx(x, level);
        if (next && node_cmp(next, key) < 0) {
            x = next;
            continue;
        }
        if (level == 0)
            return x == l->head ? NULL : x;
        level--;
    }
}

static struct skl_node *find_last(struct skl *l)
{
    struct skl_node *x = l->head;
    int level = atomic_load_explicit(&l->height, memory_order_relaxed) - 1;
    for (;;) {
        struct skl_node *next = nx(x, level);
        if (next) {
            x = next;
            continue;
        }
        if (level == 0)
            return x == l->head ? NULL : x;
        level--;
    }
}

static struct skl_node *first(struct skl *l)
{
    return nx(l->head, 0);
}

/* Links n between prev[i] and its successor at each level i below its
 * height, raising the list height if n is taller. */
static void link_node(struct skl *l, struct skl_node *n, struct skl_node **prev)
{
    int h = (int)n->height;
    int cur = atomic_load_explicit(&l->height, memory_order_relaxed);
    if (h > cur) {
        for (int i = cur; i < h; i++)
            prev[i] = l->head;
        /* readers seeing the new height before the links find NULL at the
         * head and simply drop a level */
        atomic_store_explicit(&l->height, h, memory_order_relaxed);
    }
    for (int i = 0; i < h; i++) {
        atomic_store_explicit(&n->next[i], nx(prev[i], i), memory_order_relaxed);
        atomic_store_explicit(&prev[i]->next[i], n, memory_order_release);
    }
}

/* Links n (key and pfx set) into l at the head if its key goes before the
 * first entry; returns false (nothing done) otherwise. REQUIRES: the
 * single writer. */
static bool skl_insert_head(struct skl *l, struct skl_node *n)
{
    struct skl_key sk = node_skey(l, n);
    struct skl_node *f = first(l);
    if (f && node_cmp(f, &sk) < 0)
        return false;
    struct skl_node *prev[SKL_MAX_HEIGHT];
    for (int i = 0; i < SKL_MAX_HEIGHT; i++)
        prev[i] = l->head;
    link_node(l, n, prev);
    return true;
}

/* Links n (key and pfx set) into l. REQUIRES: the single writer. */
static void skl_insert(struct skl *l, struct skl_node *n)
{
    if (skl_insert_head(l, n))
        return;
    struct skl_node *prev[SKL_MAX_HEIGHT];
    struct skl_key sk = node_skey(l, n);
    find_ge(l, &sk, prev);
    link_node(l, n, prev);
}

static bool brackets(const struct skl *l, const struct splice *s, int level,
                     const struct skl_key *key)
{
    const struct skl_node *p = s->at[level].prev, *q = s->at[level].next;
    return (p == l->head || node_cmp(p, key) < 0) && (!q || node_cmp(q, key) >= 0);
}

/* node_cmp(n, k) for n whose prefix is pfx (a copy): the node is read
 * only when the prefixes are equal. */
static inline int cached_cmp(const uint64_t pfx[PFX_WORDS], const struct skl_node *n,
                             const struct skl_key *k)
{
    int c = pfx_cmp(pfx, k->pfx);
    return c ? c : node_cmp(n, k);
}

/* Whether level 0 of s brackets key, from the cached prefixes; sets
 * *last_cmp to the order of the last insert's node against key. */
static bool brackets0(const struct skl *l, const struct splice *s, const struct skl_key *key,
                      int *last_cmp)
{
    const struct skl_node *p = s->at[0].prev, *q = s->at[0].next;
    int cp = p == l->head ? -1 : cached_cmp(s->prev_pfx, p, key);
    if (cp >= 0)
        return false;
    int cq = q ? cached_cmp(s->next_pfx, q, key) : 1;
    if (cq < 0)
        return false;
    *last_cmp = s->last_is_next ? cq : cp;
    return true;
}

/* Links n into l starting from the splice s, and moves s to n. The lowest
 * level whose splice brackets n's key is found bottom-up; the search goes
 * down from there (from the top of the list if none does). REQUIRES: the
 * single writer, and s used for no other list. */
static void skl_insert_splice(struct skl *l, struct splice *s, struct skl_node *n)
{
    struct skl_key sk = node_skey(l, n);
    int lh = atomic_load_explicit(&l->height, memory_order_relaxed);
    int top = 0, last_cmp = -1;
    if (s->height != lh) {
        top = lh; /* not set: search from the head */
    } else if (!brackets0(l, s, &sk, &last_cmp)) {
        struct skl_node *last = s->last_is_next ? s->at[0].next : s->at[0].prev;
        last_cmp = last && last != l->head ? node_cmp(last, &sk) : -1;
        top = 1;
        while (top < lh && !brackets(l, s, top, &sk))
            top++;
    }
    struct skl_node *x = top < lh ? s->at[top].prev : l->head;
    for (int i = top - 1; i >= 0; i--) {
        struct skl_node *next;
        while ((next = nx(x, i)) && node_cmp(next, &sk) < 0)
            x = next;
        s->at[i].prev = x;
        s->at[i].next = next;
    }
    bool descending = last_cmp > 0;
    int h = (int)n->height;
    /* below lh the splice is exact (at[i].next follows at[i].prev): n's
     * links are set before it is published at each level */
    for (int i = 0; i < h && i < lh; i++) {
        atomic_store_explicit(&n->next[i], s->at[i].next, memory_order_relaxed);
        atomic_store_explicit(&s->at[i].prev->next[i], n, memory_order_release);
    }
    for (int i = lh; i < h; i++) { /* new levels: n after the head, nothing after n */
        atomic_store_explicit(&l->head->next[i], n, memory_order_release);
        s->at[i].prev = l->head;
        s->at[i].next = NULL;
    }
    if (h > lh) {
        /* readers still using the old height skip the new levels */
        atomic_store_explicit(&l->height, h, memory_order_relaxed);
        lh = h;
    }
    s->height = lh;
    if (top > 0) { /* level 0 was searched: both neighbours are new */
        if (s->at[0].prev != l->head)
            memcpy(s->prev_pfx, s->at[0].prev->pfx, sizeof s->prev_pfx);
        if (s->at[0].next)
            memcpy(s->next_pfx, s->at[0].next->pfx, sizeof s->next_pfx);
    }
    /* the next key most likely goes the same way: keep the side of n it
     * will land on */
    for (int i = 0; i < h; i++) {
        if (descending)
            s->at[i].next = n;
        else
            s->at[i].prev = n;
    }
    memcpy(descending ? s->next_pfx : s->prev_pfx, n->pfx, sizeof n->pfx);
    s->last_is_next = descending;
}

/* Length of the group key ("host\0") at the start of k; k.len if k holds
 * no NUL. */
static size_t group_len(struct slice k)
{
    const char *z = memchr(k.ptr, 0, k.len);
    return z ? (size_t)(z + 1 - k.ptr) : k.len;
}

static void grow_table(struct memtable *mt)
{
    size_t n = mt->nslots ? mt->nslots * 2 : 1024;
    struct gslot *t = xcalloc_written(n, sizeof *t);
    for (size_t i = 0; i < mt->nslots; i++) {
        if (!mt->slots[i].g)
            continue;
        size_t j = mt->slots[i].hash & (n - 1);
        while (t[j].g)
            j = (j + 1) & (n - 1);
        t[j] = mt->slots[i];
    }
    free(mt->slots);
    mt->slots = t;
    mt->nslots = n;
}

/* The group of key gk, created (unpublished: *fresh) if new. Writer only. */
static struct grp *group_for(struct memtable *mt, struct slice gk, bool *fresh)
{
    if (2 * (mt->ngroups + 1) > mt->nslots)
        grow_table(mt);
    uint64_t h = bloom_hash(gk);
    size_t i = h & (mt->nslots - 1);
    for (; mt->slots[i].g; i = (i + 1) & (mt->nslots - 1)) {
        struct grp *g = mt->slots[i].g;
        if (mt->slots[i].hash == h && g->klen == gk.len && memcmp(g->key, gk.ptr, gk.len) == 0) {
            *fresh = false;
            return g;
        }
    }
    struct grp *g = arena_alloc(&mt->garena, sizeof *g + gk.len);
    skl_init(&mt->garena, &g->list, (uint32_t)gk.len);
    g->splice = NULL;
    g->klen = (uint32_t)gk.len;
    memcpy(g->key, gk.ptr, gk.len);
    g->node = node_alloc(mt, random_height(mt), gk.len, sizeof g);
    memcpy(node_data(g->node), gk.ptr, gk.len);
    memcpy(node_data(g->node) + gk.len, &g, sizeof g);
    key_prefix(gk, mt->main.off, g->node->pfx);
    mt->slots[i].hash = h;
    mt->slots[i].g = g;
    mt->ngroups++;
    *fresh = true;
    return g;
}

/* Links n into g's list. A host's keys mostly arrive newest first (DESC
 * databases), so they go in at the head without a search (one comparison
 * with the first entry). Batches sent concurrently arrive out of order,
 * though: an older batch's keys land together after the newer one's, each
 * beside the last. An insert that misses the head goes through the group's
 * splice (a finger, as the entry list of an ungrouped memtable has), made
 * on the first miss; a head insert leaves it unset, since it no longer
 * brackets, and the next miss searches from the head. */
static void group_insert(struct memtable *mt, struct grp *g, struct skl_node *n)
{
    if (skl_insert_head(&g->list, n)) {
        if (g->splice) /* no longer exact: the next miss searches from the head */
            g->splice->height = 0;
        return;
    }
    if (!g->splice) {
        g->splice = arena_alloc(&mt->garena, sizeof *g->splice);
        memset(g->splice, 0, sizeof *g->splice); /* height 0: not set */
    }
    skl_insert_splice(&g->list, g->splice, n);
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
    if (!mt->grouped) {
        key_prefix(node_key(n), mt->main.off, n->pfx);
        skl_insert_splice(&mt->main, &mt->splice, n);
    } else {
        bool fresh;
        struct grp *g = group_for(mt, slice_make(ukey.ptr, group_len(ukey)), &fresh);
        key_prefix(node_key(n), g->list.off, n->pfx);
        group_insert(mt, g, n);
        if (fresh) /* published with its first entry, never empty */
            skl_insert(&mt->main, g->node);
    }
    writer_add(&mt->count, 1);
    if (kind == IKEY_DEL)
        writer_add(&mt->deletes, 1);
}

/* --- positions: (group, node); group NULL when not grouped --- */

struct mt_pos {
    struct skl_node *g; /* group node (grouped memtables) */
    struct skl_node *n; /* entry; NULL = not valid */
};

static struct skl *list_of(struct memtable *mt, struct skl_node *g)
{
    return g ? &node_grp(g)->list : &mt->main;
}

static void pos_first_from(struct mt_pos *p, struct skl_node *g)
{
    p->g = g;
    p->n = g ? first(&node_grp(g)->list) : NULL;
}

static void pos_last_from(struct mt_pos *p, struct skl_node *g)
{
    p->g = g;
    p->n = g ? find_last(&node_grp(g)->list) : NULL;
}

static void pos_seek_first(struct memtable *mt, struct mt_pos *p)
{
    if (!mt->grouped) {
        p->g = NULL;
        p->n = first(&mt->main);
        return;
    }
    pos_first_from(p, first(&mt->main));
}

static void pos_seek_last(struct memtable *mt, struct mt_pos *p)
{
    if (!mt->grouped) {
        p->g = NULL;
        p->n = find_last(&mt->main);
        return;
    }
    pos_last_from(p, find_last(&mt->main));
}

static void pos_seek(struct memtable *mt, struct mt_pos *p, struct slice target)
{
    struct skl_key sk = make_key(&mt->main, target);
    if (!mt->grouped) {
        p->g = NULL;
        p->n = find_ge(&mt->main, &sk, NULL);
        return;
    }
    /* the greatest group key <= target; its entries can be >= target only
     * if its key is a prefix of target (group keys are prefix-free) */
    struct skl_node *g = find_ge(&mt->main, &sk, NULL);
    if (!g || !slice_eq(node_key(g), target))
        g = find_lt(&mt->main, &sk);
    if (g && slice_starts_with(target, node_key(g))) {
        struct skl *l = &node_grp(g)->list;
        struct skl_key in = make_key(l, target);
        p->g = g;
        p->n = find_ge(l, &in, NULL);
        if (p->n)
            return;
    }
    pos_first_from(p, g ? nx(g, 0) : first(&mt->main));
}

static void pos_next(struct memtable *mt, struct mt_pos *p)
{
    p->n = nx(p->n, 0);
    if (!p->n && mt->grouped)
        pos_first_from(p, nx(p->g, 0));
    if (p->n)
        __builtin_prefetch(nx(p->n, 0)); /* scans visit nodes out of allocation order */
}

static void pos_prev(struct memtable *mt, struct mt_pos *p)
{
    struct skl *l = list_of(mt, p->g);
    struct skl_key sk = node_skey(l, p->n);
    p->n = find_lt(l, &sk);
    if (!p->n && mt->grouped) {
        struct skl_key gk = node_skey(&mt->main, p->g);
        pos_last_from(p, find_lt(&mt->main, &gk));
    }
}

bool mt_get(struct memtable *mt, struct slice ukey, uint64_t max_seq, int *kind,
            struct slice *value)
{
    uint64_t seq;
    return mt_get_seq(mt, ukey, max_seq, kind, value, &seq);
}

bool mt_get_seq(struct memtable *mt, struct slice ukey, uint64_t max_seq, int *kind,
                struct slice *value, uint64_t *seq)
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
    struct mt_pos p;
    pos_seek(mt, &p, slice_make(k, ukey.len + IKEY_TRAILER));
    buf_destroy(&tmp);
    if (!p.n)
        return false;
    struct slice ik = node_key(p.n);
    if (!slice_eq(ikey_user(ik), ukey))
        return false;
    *kind = ikey_kind(ik);
    *value = node_value(p.n);
    *seq = ikey_seq(ik);
    return true;
}

/* --- iterator --- */

/* A forward pass over a grouped memtable fetches ahead in lanes, one group
 * per lane: a round moves every lane one node down its list. The entries of
 * one group are spread over the arena (they arrived between those of every
 * other host), so each node is a cache miss; the lanes' loads do not depend
 * on each other and their misses overlap. */
#define PASS_LANES 8
#define PASS_AHEAD 128 /* nodes fetched ahead per lane */

struct pass_lane {
    struct skl_node *g;    /* group; NULL: no more groups */
    struct skl_node *next; /* next node of g's list to fetch; NULL: all fetched */
    struct skl_node *q[PASS_AHEAD];
    size_t head, len;
};

struct pass {
    struct pass_lane lane[PASS_LANES];
    size_t cur;              /* the lane being read; the others follow in turn */
    struct skl_node *next_g; /* the group after the lanes' */
};

struct mt_iter {
    struct iter base;
    struct memtable *mt;
    struct mt_pos pos;
    struct pass *pass; /* NULL: a plain iterator */
};

static void lane_open(struct pass *ps, struct pass_lane *l)
{
    l->g = ps->next_g;
    l->next = l->g ? first(&node_grp(l->g)->list) : NULL;
    l->head = l->len = 0;
    if (ps->next_g)
        ps->next_g = nx(ps->next_g, 0);
}

static void pass_start(struct memtable *mt, struct pass *ps)
{
    ps->next_g = first(&mt->main);
    ps->cur = 0;
    for (size_t i = 0; i < PASS_LANES; i++)
        lane_open(ps, &ps->lane[i]);
}

/* Fetches ahead until the lane being read is full or at its end. */
static void pass_fill(struct pass *ps)
{
    struct pass_lane *c = &ps->lane[ps->cur];
    while (c->next && c->len < PASS_AHEAD)
        for (size_t i = 0; i < PASS_LANES; i++) {
            struct pass_lane *l = &ps->lane[i];
            if (!l->next || l->len == PASS_AHEAD)
                continue;
            l->q[(l->head + l->len++) % PASS_AHEAD] = l->next;
            __builtin_prefetch(node_data(l->next));
            l->next = nx(l->next, 0);
        }
}

/* The next entry of the pass into p (p->n NULL at the end). */
static void pass_next(struct pass *ps, struct mt_pos *p)
{
    for (;;) {
        struct pass_lane *c = &ps->lane[ps->cur];
        if (!c->len && c->next)
            pass_fill(ps);
        if (c->len) {
            p->g = c->g;
            p->n = c->q[c->head];
            c->head = (c->head + 1) % PASS_AHEAD;
            c->len--;
            return;
        }
        if (!c->g) { /* groups go to lanes in order: none is left */
            p->n = NULL;
            return;
        }
        lane_open(ps, c); /* the lane takes the next group, last in turn */
        ps->cur = (ps->cur + 1) % PASS_LANES;
    }
}

/* Leaves pass mode: the position stays where it is. */
static void pass_stop(struct mt_iter *m)
{
    free(m->pass);
    m->pass = NULL;
}

/* The position after a move: the node stood on, or none. */
static void publish(struct mt_iter *m)
{
    if (m->pos.n)
        it_set_pos(&m->base, node_key(m->pos.n), node_value(m->pos.n));
    else
        it_set_end(&m->base);
}

static void mti_seek_first(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    if (m->pass) {
        pass_start(m->mt, m->pass);
        pass_next(m->pass, &m->pos);
    } else {
        pos_seek_first(m->mt, &m->pos);
    }
    publish(m);
}

static void mti_seek_last(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    pass_stop(m);
    pos_seek_last(m->mt, &m->pos);
    publish(m);
}

static void mti_seek(struct iter *it, struct slice target)
{
    struct mt_iter *m = (struct mt_iter *)it;
    pass_stop(m);
    pos_seek(m->mt, &m->pos, target);
    publish(m);
}

static void mti_next(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    if (m->pass)
        pass_next(m->pass, &m->pos);
    else
        pos_next(m->mt, &m->pos);
    publish(m);
}

static void mti_prev(struct iter *it)
{
    struct mt_iter *m = (struct mt_iter *)it;
    pass_stop(m);
    pos_prev(m->mt, &m->pos);
    publish(m);
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
    free(m->pass);
    free(m);
}

static const struct it_ops mt_iter_ops = {
    .seek_first = mti_seek_first,
    .seek_last = mti_seek_last,
    .seek = mti_seek,
    .next = mti_next,
    .prev = mti_prev,
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

struct iter *mt_iter_pass(struct memtable *mt)
{
    struct iter *it = mt_iter(mt);
    if (mt->grouped)
        ((struct mt_iter *)it)->pass = xmalloc(sizeof(struct pass));
    return it;
}
