/*
 * Eviction: keeping used_memory (mem.h) under maxmemory, with Redis 7.0's
 * policies and its approximations.
 *
 * The limit is global, the keyspace is not: each worker evicts from its own
 * shard only, once per loop iteration (evict_iteration), while the sum of
 * every thread's allocations is over the limit. So no thread ever touches
 * another's keys to make room, and a shard that takes all the writes
 * evicts what it holds. Within a shard, keys are picked as Redis picks
 * them: a pool of the best candidates seen, refilled by sampling
 * maxmemory-samples keys per database (allkeys-* from every key, volatile-*
 * from keys with a TTL), best first by idle time (LRU), by a low access
 * frequency (LFU) or by the nearest expiry (TTL); the random policies take
 * any (volatile: any with a TTL). Across shards the ranked policies merge:
 * each shard publishes its best candidate's score and evicts only while no
 * other offers a better one, so the victims are the worst over the whole
 * keyspace; a shard whose peers have not published lately (and the random
 * policies) frees its share of the overage, in proportion to the keys each
 * could evict, and wakes sleeping peers. An iteration evicts for at most
 * the time maxmemory-eviction-tenacity allows, as Redis's
 * performEvictions, and goes on at the next.
 *
 * The iteration's verdict holds for the commands of that iteration: while
 * over the limit, commands flagged deny-oom are refused with -OOM when the
 * policy is noeviction or when no shard has anything left it may evict.
 *
 * Keys are ranked by their access stamps (stamp.h).
 */
#ifndef RINGKV_EVICT_H
#define RINGKV_EVICT_H

#include "ringkv/common.h"
#include "ringkv/stamp.h"

struct shard;

/* What the latency monitor learns of one evict_iteration (LATENCY's
 * "eviction-cycle" and "eviction-del" events, as Redis's performEvictions
 * reports them): asked for only while the monitor is on. */
struct evict_timing {
    bool evicted;              /* the shard was over and took its turn */
    uint64_t cycle_ticks;      /* that turn, clock.h ticks */
    uint64_t longest_del_ticks;/* its slowest single key deletion */
};

/* The worker's turn, once per loop iteration (may_evict: the shard is not
 * held by a transaction): evict from s while used_memory is over
 * maxmemory, while s holds the best candidate of all shards (or, peers
 * not known, up to s's share of the overage) and within the tenacity's
 * time, and publish what s could still evict and its best candidate.
 * all: every shard, whose published figures decide who evicts and say
 * whether anything is left to evict anywhere. *wake_peers: still over, the
 * other workers should take their turn now rather than at their next tick.
 * Returns whether deny-oom commands must be refused until the next
 * iteration. timing: NULL, or where the turn's durations go. */
bool evict_iteration(struct shard *s, struct shard *const *all, unsigned nshards, long long now_ms, bool may_evict,
                     bool *wake_peers, struct evict_timing *timing);
/* Whether s's keys must wait, asked before each key eviction: the io layer
 * answers (NULL: never), true while the clients, with the replies on
 * their way to them, are at maxmemory-clients. As in Redis, clients over
 * that limit go before any key; their threads evict them, and the
 * memory they hold is not the keys' to give. Asked again before each key,
 * since the clients may reach the limit while a shard is evicting. */
extern bool (*rk_evict_hold)(const struct shard *s);
/* The shard's eviction state is freed (before shard_destroy). */
void evict_shard_free(struct shard *s);

#endif
