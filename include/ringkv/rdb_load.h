/*
 * Loading an RDB file (rdb_file.h) into the keyspace: every key goes to
 * the shard that owns its slot. The caller guarantees nobody else touches
 * the shards meanwhile (startup, or every shard held).
 */
#ifndef RINGKV_RDB_LOAD_H
#define RINGKV_RDB_LOAD_H

#include "ringkv/common.h"

struct shard;

/* Where FUNCTION libraries found in the file go (the scripting layer's). */
struct rdb_function_sink {
    void *ud;
    bool (*add)(void *ud, struct slice code, struct rbuf *err);
};

/* Load path. merge: a key already present is replaced (DEBUG RELOAD
 * MERGE), else it is an error. functions NULL: libraries are skipped.
 * Returns 0 (with *keys loaded), 1 when there is no such file, -1 with
 * the reason in err. */
int rdb_load_file(struct shard **shards, unsigned n, const char *path, bool merge,
                  const struct rdb_function_sink *functions, long long now_ms, size_t *keys, struct rbuf *err);
/* The same from a file image in memory (what rdb_load_file runs on the
 * mapped file; the fuzz harness feeds it directly): 0 or -1. */
int rdb_load_image(struct shard **shards, unsigned n, const char *p, size_t len, bool merge,
                   const struct rdb_function_sink *functions, long long now_ms, size_t *keys, struct rbuf *err);

/* Called before each key or AOF command loaded at start: sleeps
 * key-load-delay, as Redis does for both, and every so often (or at each
 * call under a delay) looks for a shutdown signal (rk_persist.load_stop).
 * false with the reason in err once one is waiting: the load stops.
 * done: how many were loaded before this one. */
bool load_pace(size_t done, struct rbuf *err);

#endif
