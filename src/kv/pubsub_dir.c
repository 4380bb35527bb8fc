/*
 * The pub/sub directory (see pubsub_dir.h). One map per kind, name -> the
 * threads with subscribers and their counts, as (thread:u32, count:u32)
 * pairs: usually one or two, so a publish reads a few bytes. Changes are
 * rare next to publishes, so they rewrite the value whole.
 */
#include "ringkv/pubsub_dir.h"
#include "ringkv/hashmap.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>

struct ps_pair { uint32_t thread, count; };

struct ps_dir {
    struct hashmap *names[PS_KINDS];
};

struct ps_dir *ps_dir_new(void) {
    struct ps_dir *d = rk_calloc(1, sizeof *d);
    for (int k = 0; k < PS_KINDS; k++) d->names[k] = hashmap_new(true);
    return d;
}

void ps_dir_free(struct ps_dir *d) {
    if (!d) return;
    for (int k = 0; k < PS_KINDS; k++) hashmap_free(d->names[k]);
    free(d);
}

static size_t npairs(struct slice v) { return v.len / sizeof(struct ps_pair); }

static struct ps_pair pair_at(struct slice v, size_t i) {
    struct ps_pair p;
    memcpy(&p, v.ptr + i * sizeof p, sizeof p);
    return p;
}

void ps_dir_update(struct ps_dir *d, enum ps_kind k, unsigned thread, struct slice name, int delta) {
    struct slice old = { NULL, 0 };
    hashmap_get(d->names[k], name, &old);
    size_t n = npairs(old);
    struct ps_pair small[8], *pairs = n + 1 <= 8 ? small : rk_malloc((n + 1) * sizeof *pairs);
    size_t m = 0;
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        struct ps_pair p = pair_at(old, i);
        if (p.thread == thread) {
            found = true;
            long long c = (long long)p.count + delta;
            if (c <= 0) continue;
            p.count = (uint32_t)c;
        }
        pairs[m++] = p;
    }
    if (!found && delta > 0) pairs[m++] = (struct ps_pair){ thread, (uint32_t)delta };
    if (m == 0)
        hashmap_delete(d->names[k], name);
    else
        hashmap_set(d->names[k], name, (struct slice){ (const char *)pairs, m * sizeof *pairs });
    if (pairs != small) free(pairs);
}

static uint64_t add_pairs(struct slice v, uint64_t *threads) {
    uint64_t total = 0;
    for (size_t i = 0; i < npairs(v); i++) {
        struct ps_pair p = pair_at(v, i);
        total += p.count;
        *threads |= 1ull << p.thread;
    }
    return total;
}

uint64_t ps_dir_subscribers(const struct ps_dir *d, enum ps_kind k, struct slice name) {
    struct slice v;
    uint64_t threads = 0;
    return d && hashmap_get(d->names[k], name, &v) ? add_pairs(v, &threads) : 0;
}

uint64_t ps_dir_receivers(const struct ps_dir *d, enum ps_kind k, struct slice channel, uint64_t *threads) {
    *threads = 0;
    if (!d) return 0;
    struct slice v;
    uint64_t total = hashmap_get(d->names[k], channel, &v) ? add_pairs(v, threads) : 0;
    if (k != PS_CHANNEL || hashmap_count(d->names[PS_PATTERN]) == 0) return total;
    struct hashmap_iter it = hashmap_iter_start(d->names[PS_PATTERN]);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) {
        struct slice pat = hm_elem_key(e);
        if (string_match(pat.ptr, pat.len, channel.ptr, channel.len, false))
            total += add_pairs(hm_elem_val(e), threads);
    }
    return total;
}

size_t ps_dir_count(const struct ps_dir *d, enum ps_kind k) {
    return d ? hashmap_count(d->names[k]) : 0;
}

void ps_dir_each(const struct ps_dir *d, enum ps_kind k, void (*fn)(void *arg, struct slice name), void *arg) {
    if (!d) return;
    struct hashmap_iter it = hashmap_iter_start(d->names[k]);
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));) fn(arg, hm_elem_key(e));
}
