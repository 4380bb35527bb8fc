/*
 * Loading an RDB file into the shards (rdb_load.h): at startup, before any
 * worker touches its keyspace, and for DEBUG RELOAD, while every shard is
 * held. Each key is built in the arena of the shard that owns its slot and
 * joins that shard's table directly: a load raises no keyspace events and
 * touches no watchers, as Redis's does not.
 */
#include "ringkv/rdb_load.h"

#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringkv/arena.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/rdb_file.h"
#include "ringkv/snapshot.h"

struct load_sink {
    struct shard **shards;
    unsigned n;
    bool merge;
    size_t keys;
    const struct rdb_function_sink *functions;
};

/* key-load-delay, as Redis's debugDelay: a negative delay sleeps 1 us
 * for about one key in -delay, since even the shortest sleep is a
 * system call. */
static void key_load_delay(void) {
    long long us = CONFIG_GET(key_load_delay);
    if (RK_LIKELY(us == 0)) return;
    if (us < 0) us = rand() % -us == 0;
    if (us) usleep((useconds_t)us);
}

#define LOAD_STOP_EVERY 1024   /* keys or commands between two looks for a shutdown signal */

bool load_pace(size_t done, struct rbuf *err) {
    if (RK_UNLIKELY(rk_persist.load_stop != NULL) &&
        (done % LOAD_STOP_EVERY == 0 || CONFIG_GET(key_load_delay) != 0) && rk_persist.load_stop()) {
        static const char msg[] = "loading stopped by a shutdown signal";
        err->len = 0;
        rbuf_append(err, msg, sizeof msg - 1);
        return false;
    }
    key_load_delay();
    return true;
}

static bool load_key(void *ud, unsigned dbi, struct slice key, struct rdb_value *v, long long expire_at_ms,
                     struct rbuf *err) {
    struct load_sink *ls = ud;
    if (!load_pace(ls->keys, err)) return false;
    struct shard *s = ls->shards[shard_of_key(key.ptr, key.len)];
    struct entry_arena *saved = rk_arena;
    rk_arena = &s->arena;
    struct kv_entry *e = rdb_value_entry(key, v, expire_at_ms);
    rk_arena = saved;
    if (db_load_entry(s, dbi, e, ls->merge)) {
        ls->keys++;
        return true;
    }
    char msg[160];
    int n = snprintf(msg, sizeof msg, "RDB has duplicated key '%.*s' in DB %u", key.len > 64 ? 64 : (int)key.len,
                     key.ptr, dbi);
    err->len = 0;
    rbuf_append(err, msg, (size_t)n);
    return false;
}

/* Each shard's table for its share of the keys (slots spread them evenly). */
static void load_resize(void *ud, unsigned dbi, uint64_t keys) {
    struct load_sink *ls = ud;
    if (dbi >= ls->shards[0]->ndb) return;
    for (unsigned i = 0; i < ls->n; i++) table_reserve(&ls->shards[i]->dbs[dbi].table, keys / ls->n + keys / ls->n / 16);
}

static bool load_function(void *ud, struct slice code, struct rbuf *err) {
    struct load_sink *ls = ud;
    return ls->functions->add(ls->functions->ud, code, err);
}

int rdb_load_file(struct shard **shards, unsigned n, const char *path, bool merge,
                  const struct rdb_function_sink *functions, long long now_ms, size_t *keys, struct rbuf *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        char msg[PATH_MAX + 64];
        int len = snprintf(msg, sizeof msg, "Fatal error loading the DB: %s. Exiting.", strerror(errno));
        err->len = 0;
        rbuf_append(err, msg, (size_t)len);
        return -1;
    }
    struct stat st;
    void *map = NULL;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) map = NULL;
        else madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL | MADV_WILLNEED);
    }
    close(fd);
    int rc = rdb_load_image(shards, n, map ? map : "", map ? (size_t)st.st_size : 0, merge, functions, now_ms,
                            keys, err);
    if (map) munmap(map, (size_t)st.st_size);
    return rc;
}

int rdb_load_image(struct shard **shards, unsigned n, const char *p, size_t len, bool merge,
                   const struct rdb_function_sink *functions, long long now_ms, size_t *keys, struct rbuf *err) {
    struct load_sink ls = { shards, n, merge, 0, functions };
    struct rdb_load_ops ops = { &ls, load_key, functions ? load_function : NULL, load_resize };
    bool ok = rdb_load(p, len, shards[0]->ndb, now_ms, &ops, err);
    *keys = ls.keys;
    return ok ? 0 : -1;
}
