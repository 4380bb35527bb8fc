/*
 * Lazy freeing; see include/ringkv/lazyfree.h for the idea.
 *
 * The background thread takes objects from a mutex-guarded list: only big
 * values pass through it, so the lock is never on the path of ordinary
 * commands. It starts with the first object handed to it.
 */
#include "ringkv/lazyfree.h"
#include "ringkv/db.h"
#include "ringkv/util.h"
#include "ringkv/mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define DRAIN_GROUPS   64        /* table groups freed between looks at the clock */
#define STEP_BUDGET_US 1000      /* a worker's lazy freeing per loop iteration */

struct dead_obj {
    struct dead_obj *next;
    unsigned type;
    void *obj;
};

/* A detached table and how far its freeing has gone. */
struct dead_table {
    struct dead_table *next;
    struct kv_table table;
    size_t cursor;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static struct dead_obj *queue;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static _Atomic size_t pending, freed;

static void *freer_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!queue) pthread_cond_wait(&work, &lock);
        struct dead_obj *batch = queue;
        queue = NULL;
        pthread_mutex_unlock(&lock);
        while (batch) {
            struct dead_obj *next = batch->next;
            obj_ops_by_type[batch->type]->free(batch->obj);
            free(batch);
            batch = next;
            atomic_fetch_sub_explicit(&pending, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
        }
        pthread_mutex_lock(&lock);
    }
    return NULL;
}

static void start_freer(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, freer_main, NULL) == 0) {
        pthread_setname_np(t, "lazyfree");
        pthread_detach(t);
    }
}

/* About how many allocations freeing obj takes: its bytes over a typical
 * allocation's, from the type's own (sampled) memory estimate. */
static size_t free_effort(unsigned type, const void *obj) {
    const struct obj_ops *ops = obj_ops_by_type[type];
    return ops && ops->usage ? ops->usage(obj, 8) / 64 : 0;
}

static void hand_off(unsigned type, void *obj) {
    pthread_once(&started, start_freer);
    struct dead_obj *d = rk_malloc(sizeof *d);
    d->type = type;
    d->obj = obj;
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    d->next = queue;
    queue = d;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
}

/* e's object, when freeing it is work enough to go elsewhere (NULL: not). */
static void *big_obj(const struct kv_entry *e) {
    unsigned type = entry_type(e);
    void *obj = type == OBJ_STRING || (e->meta & ENTRY_INLINE) ? NULL : entry_obj(e);
    return obj && free_effort(type, obj) > LAZYFREE_THRESHOLD ? obj : NULL;
}

void lazyfree_entry(struct kv_entry *e) {
    void *obj = big_obj(e);
    if (!obj) {
        entry_free(e);
        return;
    }
    unsigned type = entry_type(e);
    entry_release(e);
    hand_off(type, obj);
}

void lazyfree_entry_now(struct kv_entry *e) {
    if (RK_UNLIKELY(big_obj(e) != NULL)) mem_trim_soon();
    entry_free(e);
}

void lazyfree_table(struct shard *s, struct kv_table *t) {
    struct dead_table *d = rk_calloc(1, sizeof *d);
    d->table = *t;
    d->next = s->dead_tables;
    s->dead_tables = d;
    table_init(t);
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
}

bool lazyfree_step(struct shard *s) {
    uint64_t deadline = monotonic_us() + STEP_BUDGET_US;
    while (s->dead_tables) {
        struct dead_table *d = s->dead_tables;
        if (!table_drain(&d->table, &d->cursor, DRAIN_GROUPS, lazyfree_entry)) {
            if (monotonic_us() >= deadline) return true;
            continue;
        }
        s->dead_tables = d->next;
        free(d);
        atomic_fetch_sub_explicit(&pending, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
    }
    return false;
}

size_t lazyfree_pending(void) { return atomic_load_explicit(&pending, memory_order_relaxed); }
size_t lazyfree_freed(void) { return atomic_load_explicit(&freed, memory_order_relaxed); }
void lazyfree_reset_stats(void) { atomic_store_explicit(&freed, 0, memory_order_relaxed); }
