/*
 * fuzz_rdb_load: the RDB loaders on any bytes. Input: one byte of mode,
 * then the bytes.
 *
 *   mode bit 0 clear: an RDB file image, loaded into two fresh shards by
 *     rdb_load_image (rdb_load.h), the path rdb_load_file takes at startup
 *     and DEBUG RELOAD: rdb_file.c's opcodes, rdb_value.c's values, the
 *     tables and arenas the keys join. Bit 1: fix up the checksum (a file
 *     that ends in EOF and a CRC gets its CRC zeroed, "none"), so that
 *     mutations reach the keys. Bit 2: merge (a duplicate key replaces).
 *   mode bit 0 set: a DUMP payload's body (RESTORE's path after the CRC
 *     check): rdb_get_value, then the entry RESTORE would build. The whole
 *     input is also given to rdb_payload_verify.
 *
 * Either way, every value that loads is written back (rdb_put_value) and
 * read again: that must succeed and consume exactly what was written,
 * giving the same bytes once more (sets and hashes, whose order may follow
 * their hash tables, and sorted sets, whose zero scores may lose their
 * sign, the same length). Nothing may crash, leak or run long.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/arena.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/entry.h"
#include "ringkv/rdb_codec.h"
#include "ringkv/rdb_file.h"
#include "ringkv/rdb_load.h"
#include "ringkv/rdb_value.h"
#include "ringkv/slot.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

#define NOW 1700000000000LL
#define NSHARDS 2
#define NDB 4

static struct shard shards[NSHARDS];
static bool verbose;   /* FUZZ_VERBOSE set: say what each input did */
static struct shard *shard_ptrs[NSHARDS] = { &shards[0], &shards[1] };

/* Write e's value, read it back, write that again. */
static void round_trip(const struct kv_entry *e) {
    struct rbuf a = { 0 }, b = { 0 };
    rdb_put_value(&a, e, false);
    const char *p = a.buf;
    struct rdb_value v;
    CHECK(rdb_get_value(&p, a.buf + a.len, &v));
    CHECK(p == a.buf + a.len);
    CHECK(v.type == entry_type(e));
    struct kv_entry *e2 = rdb_value_entry(entry_key_slice(e), &v, NO_EXPIRE);
    rdb_put_value(&b, e2, false);
    CHECK(a.len == b.len);
    unsigned t = entry_type(e);
    /* A sorted set may differ in the sign of a zero score: a skiplist keeps
     * -0, a listpack stores it as 0 (Redis 7.0's rule), and the first load
     * and the reload of one value need not pick the same encoding. */
    if (t != OBJ_SET && t != OBJ_HASH && t != OBJ_ZSET) CHECK(memcmp(a.buf, b.buf, a.len) == 0);
    /* and compressed, as rdbcompression writes it */
    a.len = 0;
    rdb_put_value(&a, e2, true);
    p = a.buf;
    CHECK(rdb_get_value(&p, a.buf + a.len, &v));
    CHECK(p == a.buf + a.len);
    rdb_value_discard(&v);
    entry_free(e2);
    rbuf_free(&a);
    rbuf_free(&b);
}

static void visit(void *ud, struct kv_entry *e) {
    (*(size_t *)ud)++;
    round_trip(e);
}

static volatile unsigned char sink_sum;

static bool function_add(void *ud, struct slice code, struct rbuf *err) {
    (void)ud;
    /* touch every byte: ASan sees a slice that points past its data */
    for (size_t i = 0; i < code.len; i++) sink_sum = (unsigned char)(sink_sum + (unsigned char)code.ptr[i]);
    if (code.len && code.ptr[0] == 'x') {   /* a library that fails to load */
        err->len = 0;
        rbuf_append(err, "ERR refused", 11);
        return false;
    }
    return true;
}

static void load_file(const uint8_t *data, size_t size, uint8_t mode) {
    char *img = malloc(size ? size : 1);
    CHECK(img != NULL);
    memcpy(img, data, size);
    if ((mode & 2) && size >= 9 + RDB_TRAILER_LEN && (unsigned char)img[size - RDB_TRAILER_LEN] == RDB_OPCODE_EOF)
        memset(img + size - 8, 0, 8);

    for (unsigned i = 0; i < NSHARDS; i++) shard_init(&shards[i], i, NDB);
    struct rdb_function_sink sink = { NULL, function_add };
    struct rbuf err = { 0 };
    size_t keys = 0;
    int rc = rdb_load_image(shard_ptrs, NSHARDS, img, size, mode & 4, &sink, NOW, &keys, &err);
    CHECK(rc == 0 || rc == -1);
    if (verbose) fprintf(stderr, "file: rc %d, %zu keys%s%.*s\n", rc, keys, err.len ? ": " : "", (int)err.len, err.buf);
    if (rc == -1) CHECK(err.len > 0);

    size_t seen = 0;
    for (unsigned i = 0; i < NSHARDS; i++) {
        rk_arena = &shards[i].arena;
        for (unsigned d = 0; d < NDB; d++) {
            struct kv_table *t = &shards[i].dbs[d].table;
            size_t n = 0;
            uint64_t cursor = 0;
            do cursor = table_scan(t, cursor, 64, visit, &n); while (cursor);
            CHECK(n == table_size(t));
            seen += n;
        }
    }
    if (!(mode & 4)) CHECK(seen == keys);   /* merging, a key may come twice */
    else CHECK(seen <= keys);
    rk_arena = NULL;
    for (unsigned i = 0; i < NSHARDS; i++) shard_destroy(&shards[i]);
    rbuf_free(&err);
    free(img);
}

static void load_payload(const uint8_t *data, size_t size) {
    char *body = malloc(size ? size : 1);
    CHECK(body != NULL);
    memcpy(body, data, size);
    size_t body_len;
    (void)rdb_payload_verify(body, size, &body_len);

    shard_init(&shards[0], 0, 1);
    rk_arena = &shards[0].arena;
    const char *p = body;
    struct rdb_value v;
    bool ok = rdb_get_value(&p, body + size, &v);
    if (verbose) fprintf(stderr, "payload: %s, %zu of %zu bytes\n", ok ? "loaded" : "refused", (size_t)(p - body), size);
    if (ok) {
        CHECK(p > body && p <= body + size);
        struct kv_entry *e = rdb_value_entry((struct slice){ "key", 3 }, &v, NO_EXPIRE);
        round_trip(e);
        entry_free(e);
    }
    rk_arena = NULL;
    shard_destroy(&shards[0]);
    free(body);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    config_set_defaults();
    slots_assign(NSHARDS);
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t mode = data[0];
    if (mode & 1) load_payload(data + 1, size - 1);
    else load_file(data + 1, size - 1, mode);
    return 0;
}
