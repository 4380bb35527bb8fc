/*
 * DEBUG: the subcommands Redis's own tests and tools use, with Redis
 * 7.0's replies (debug.c). DEBUG runs with every shard held
 * (CMD_ALLSHARDS), so it reads any shard's tables directly; a key is found
 * in the shard its slot maps to.
 *
 * Like Redis, DEBUG OBJECT and DEBUG DIGEST-VALUE see a key that has
 * expired but was not deleted yet (they look in the table, not through the
 * lazy expiry of a lookup), and DEBUG DIGEST covers every key in the
 * tables: with active expiry off (SET-ACTIVE-EXPIRE 0) expired keys stay
 * counted until something reads them, as DBSIZE shows.
 *
 * The dataset digest is Redis's computeDatasetDigest, byte for byte: per
 * key a SHA1 chain over the key, its type and its value, where lists and
 * streams chain their elements in order and unordered collections (sets,
 * hashes, sorted sets) XOR in the SHA1 of each element's digest; the keys'
 * digests are XORed in the same way, so neither the order keys were
 * written in nor the thread that holds them changes the result. An empty
 * dataset digests to 40 zeros.
 */
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/hash_obj.h"
#include "ringkv/list_obj.h"
#include "ringkv/log.h"
#include "ringkv/rdb_value.h"
#include "ringkv/script.h"
#include "ringkv/set_obj.h"
#include "ringkv/stamp.h"
#include "ringkv/stream.h"
#include "ringkv/util.h"
#include "ringkv/zset_obj.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

#define DIGEST_LEN 20

/* ---- lookups that see expired keys ---- */

/* The entry of key in the client's database, expired or not, untouched. */
static struct kv_entry *raw_entry(struct cmd_ctx *c, struct slice key) {
    struct shard *s = c->shards[shard_of_key(key.ptr, key.len)];
    struct kv_entry **slot = table_find(&s->dbs[c->db].table, key.ptr, key.len, table_hash(key.ptr, key.len));
    return slot ? *slot : NULL;
}

/* As Redis's objectCommandLookup: a live key (expired ones are absent),
 * not counted as an access. */
static struct kv_entry *live_entry_or_reply(struct cmd_ctx *c, struct slice key) {
    struct kv_entry *e = db_lookup(c, key, LOOKUP_NOEXPIRE | LOOKUP_NOTOUCH);
    if (!e) reply_error(&c->r, ERR_NO_SUCH_KEY);
    return e;
}

/* ---- digests (Redis's xorDigest / mixDigest) ---- */

/* digest ^= SHA1(data): the order of such steps does not matter. */
static void xor_digest(unsigned char *digest, const void *p, size_t len) {
    unsigned char h[DIGEST_LEN];
    script_sha1(p, len, h);
    for (int i = 0; i < DIGEST_LEN; i++) digest[i] ^= h[i];
}

/* digest = SHA1(digest ^ SHA1(data)): each step depends on those before. */
static void mix_digest(unsigned char *digest, const void *p, size_t len) {
    xor_digest(digest, p, len);
    script_sha1(digest, DIGEST_LEN, digest);
}

static void mix_slice(unsigned char *digest, struct slice s) { mix_digest(digest, s.ptr, s.len); }

/* A member and its score ("%.17g"), XORed in as one element. */
static void xor_scored(unsigned char *digest, struct slice member, double score) {
    unsigned char ele[DIGEST_LEN] = { 0 };
    char buf[64];
    mix_slice(ele, member);
    mix_digest(ele, buf, (size_t)snprintf(buf, sizeof buf, "%.17g", score));
    xor_digest(digest, ele, DIGEST_LEN);
}

static void digest_list(unsigned char *digest, const struct list_obj *l) {
    struct list_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    if (!list_iter_init(&it, l, 0, false)) return;
    while (list_iter_next(&it, &v)) mix_slice(digest, list_value_str(&v, buf));
}

static void digest_set(unsigned char *digest, const struct set_obj *s) {
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);) xor_digest(digest, m.ptr, m.len);
}

static void digest_zset(unsigned char *digest, const struct zset_obj *z) {
    struct zset_it it;
    for (zset_it_rank(&it, z, 0); it.valid; zset_it_next(&it))
        xor_scored(digest, zset_it_member(&it), zset_it_score_of(&it));
}

static void digest_hash(unsigned char *digest, const struct hash_obj *h) {
    struct hash_iter it;
    struct slice f, v;
    hash_iter_init(&it, h);
    while (hash_iter_next(&it, &f, &v)) {
        unsigned char ele[DIGEST_LEN] = { 0 };
        mix_slice(ele, f);
        mix_slice(ele, v);
        xor_digest(digest, ele, DIGEST_LEN);
    }
}

/* Entries only, as Redis: "ms.seq", then each field and value. */
static void digest_stream(unsigned char *digest, const struct stream *s) {
    struct stream_iter it;
    struct stream_id id;
    long long nfields;
    stream_iter_start(&it, s, (struct stream_id){ 0, 0 }, (struct stream_id){ UINT64_MAX, UINT64_MAX }, false);
    while (stream_iter_next(&it, &id, &nfields)) {
        char buf[64];
        mix_digest(digest, buf, (size_t)snprintf(buf, sizeof buf, "%llu.%llu",
                                                 (unsigned long long)id.ms, (unsigned long long)id.seq));
        while (nfields--) {
            struct lp_value f, v;
            char fb[LP_INTBUF_SIZE], vb[LP_INTBUF_SIZE];
            stream_iter_field(&it, &f, &v);
            mix_slice(digest, lp_value_str(&f, fb));
            mix_slice(digest, lp_value_str(&v, vb));
        }
    }
}

/* Redis's xorObjectDigest: the type (Redis's numbers: a stream is 6), the
 * value, and whether the key has a TTL (not its time). */
static void digest_value(unsigned char *digest, const struct kv_entry *e) {
    unsigned t = entry_type(e);
    uint32_t aux = htonl(t == OBJ_STREAM ? 6 : t);
    mix_digest(digest, &aux, sizeof aux);
    switch (t) {
    case OBJ_STRING: mix_slice(digest, entry_val_slice(e)); break;
    case OBJ_LIST:   digest_list(digest, entry_obj(e)); break;
    case OBJ_SET:    digest_set(digest, entry_obj(e)); break;
    case OBJ_ZSET:   digest_zset(digest, entry_obj(e)); break;
    case OBJ_HASH:   digest_hash(digest, entry_obj(e)); break;
    case OBJ_STREAM: digest_stream(digest, entry_obj(e)); break;
    default: break;
    }
    if (entry_has_expire(e)) xor_digest(digest, "!!expire!!", 10);
}

static void digest_key_visit(void *ud, struct kv_entry *e) {
    unsigned char *final = ud, digest[DIGEST_LEN] = { 0 };
    mix_slice(digest, entry_key_slice(e));
    digest_value(digest, e);
    xor_digest(final, digest, DIGEST_LEN);
}

static void dataset_digest(struct cmd_ctx *c, unsigned char *final) {
    memset(final, 0, DIGEST_LEN);
    for (unsigned d = 0; d < c->shards[0]->ndb; d++) {
        if (db_size_all(c, (int)d) == 0) continue;
        uint32_t aux = htonl(d);   /* the same keys in another database differ */
        mix_digest(final, &aux, sizeof aux);
        for (unsigned i = 0; i < c->nshards; i++) {
            uint64_t cursor = 0;
            do cursor = table_scan(&c->shards[i]->dbs[d].table, cursor, 4096, digest_key_visit, final);
            while (cursor);
        }
    }
}

static void reply_digest(struct cmd_ctx *c, const unsigned char *digest) {
    char hex[2 * DIGEST_LEN + 1];
    for (int i = 0; i < DIGEST_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    reply_simple(&c->r, hex);
}

static void debug_digest(struct cmd_ctx *c) {
    unsigned char digest[DIGEST_LEN];
    dataset_digest(c, digest);
    reply_digest(c, digest);
}

static void debug_digest_value(struct cmd_ctx *c) {
    reply_array(&c->r, (size_t)(c->argc - 2));
    for (int i = 2; i < c->argc; i++) {
        unsigned char digest[DIGEST_LEN] = { 0 };
        struct kv_entry *e = raw_entry(c, ARG(i));
        if (e) digest_value(digest, e);
        reply_digest(c, digest);
    }
}

/* ---- OBJECT, LISTPACK, QUICKLIST ---- */

/* Redis's atoi on the argument: anything not starting with a non-zero
 * number is 0. */
static long long arg_atoi(struct slice s) {
    char buf[32];
    size_t n = s.len < sizeof buf - 1 ? s.len : sizeof buf - 1;
    memcpy(buf, s.ptr, n);
    buf[n] = '\0';
    return atoll(buf);
}

/* What the value takes in an RDB file (Redis's rdbSavedObjectLen: the
 * object without its type byte). ringkv writes collections in the plain
 * forms (rdb_value.h), so a compact one counts as Redis's older encoding
 * of it would. */
static size_t serialized_length(const struct kv_entry *e) {
    struct rbuf b = { 0 };
    rdb_put_value(&b, e, CONFIG_GET(rdbcompression));
    size_t n = b.len ? b.len - 1 : 0;
    rbuf_free(&b);
    return n;
}

static void debug_object(struct cmd_ctx *c) {
    struct kv_entry *e = raw_entry(c, ARG(2));
    if (!e) { reply_error(&c->r, ERR_NO_SUCH_KEY); return; }
    const char *enc = object_encoding(e);
    char extra[160] = "";
    const struct quicklist *ql = entry_type(e) == OBJ_LIST ? list_quicklist(entry_obj(e)) : NULL;
    if (ql)
        snprintf(extra, sizeof extra,
                 " ql_nodes:%lu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%lu",
                 (unsigned long)ql->nodes, ql->nodes ? (double)ql->count / ql->nodes : 0.0, (int)ql->fill,
                 ql->compress != 0, (unsigned long)ql_raw_bytes(ql));
    char line[512];
    snprintf(line, sizeof line, "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%lld%s",
             (void *)e, object_refcount(e), enc, serialized_length(e), (unsigned)entry_stamp(e),
             stamp_idle_ms(e, c->now_ms) / 1000, extra);
    reply_simple(&c->r, line);
}

/* Redis prints the structure on the server's standard output. */
static void print_listpack(const struct listpack *lp) {
    printf("{total_bytes %zu} {num_entries %zu}\n", lp_bytes(lp), lp_count(lp));
    size_t i = 0;
    for (size_t pos = lp_first(lp); pos != LP_NONE; pos = lp_next(lp, pos), i++) {
        struct lp_value v;
        char buf[LP_INTBUF_SIZE];
        lp_get(lp, pos, &v);
        struct slice s = lp_value_str(&v, buf);
        printf("{ index %zu, value: %.*s }\n", i, (int)(s.len > 40 ? 40 : s.len), s.ptr);
    }
    printf("{end}\n\n");
    fflush(stdout);
}

/* The listpack of a compact list, hash or sorted set; NULL for a set,
 * whose compact forms Redis 7.0 does not keep in a listpack. */
static const struct listpack *entry_listpack(const struct kv_entry *e) {
    switch (entry_type(e)) {
    case OBJ_LIST: return list_listpack(entry_obj(e));
    case OBJ_HASH: return hash_is_listpack(entry_obj(e)) ? hash_lp(entry_obj(e)) : NULL;
    case OBJ_ZSET: return zset_is_listpack(entry_obj(e)) ? zset_lp(entry_obj(e)) : NULL;
    default: return NULL;
    }
}

static void debug_listpack(struct cmd_ctx *c) {
    struct kv_entry *e = live_entry_or_reply(c, ARG(2));
    if (!e) return;
    if (strcmp(object_encoding(e), "listpack") != 0) {
        reply_error(&c->r, "ERR Not a listpack encoded object.");
        return;
    }
    const struct listpack *lp = entry_listpack(e);
    if (lp) {
        print_listpack(lp);
    } else {   /* a set: its members */
        struct set_iter it;
        set_iter_init(&it, entry_obj(e));
        for (struct slice m; set_iter_next(&it, &m);) printf("{ value: %.*s }\n", (int)(m.len > 40 ? 40 : m.len), m.ptr);
        printf("{end}\n\n");
        fflush(stdout);
    }
    reply_simple(&c->r, "Listpack structure printed on stdout");
}

static void debug_quicklist(struct cmd_ctx *c) {
    struct kv_entry *e = live_entry_or_reply(c, ARG(2));
    if (!e) return;
    bool full = c->argc == 4 && arg_atoi(ARG(3)) != 0;
    const struct quicklist *ql = entry_type(e) == OBJ_LIST ? list_quicklist(entry_obj(e)) : NULL;
    if (!ql) {
        reply_error(&c->r, "ERR Not a quicklist encoded object.");
        return;
    }
    printf("{count : %zu}\n{len : %u}\n{fill : %d}\n{compress : %u}\n{bookmark_count : 0}\n",
           ql->count, (unsigned)ql->nodes, (int)ql->fill, (unsigned)ql->compress);
    if (full) {
        int i = 0;
        for (const struct ql_node *n = ql->head; n; n = n->next, i++) {
            printf("{node %d}\n{compressed : %d}\n", i, ql_node_compressed(n));
            if (n->lp) print_listpack(n->lp);
        }
    }
    fflush(stdout);
    reply_simple(&c->r, "Quicklist structure printed on stdout");
}

/* ---- the settings Redis keeps for tests ---- */

/* Redis's quicklist stores an element bigger than this as a plain node of
 * its own. ringkv's quicklist has no plain nodes (every element lives in a
 * listpack), so the value is kept and validated only. */
static unsigned long long packed_threshold = 1ULL << 30;

static void debug_packed_threshold(struct cmd_ctx *c) {
    char buf[64];
    unsigned long long sz;
    bool ok = ARG(2).len < sizeof buf;
    if (ok) {
        memcpy(buf, ARG(2).ptr, ARG(2).len);
        buf[ARG(2).len] = '\0';
        ok = parse_memory(buf, &sz) && sz <= (1ULL << 32) - (1ULL << 20);
    }
    if (!ok) {
        reply_error(&c->r, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    packed_threshold = sz ? sz : 1ULL << 30;
    reply_ok(&c->r);
}

/* ---- PROTOCOL: one reply of each RESP type, for client tests ---- */

static void debug_protocol(struct cmd_ctx *c) {
    struct slice t = ARG(2);
    struct reply *r = &c->r;
    if (slice_eq_nocase(t, "string")) reply_bulk_cstr(r, "Hello World");
    else if (slice_eq_nocase(t, "integer")) reply_int(r, 12345);
    else if (slice_eq_nocase(t, "double")) reply_double(r, 3.141);
    else if (slice_eq_nocase(t, "bignum")) {
        static const char big[] = "1234567999999999999999999999999999999";
        if (r->resp >= 3) reply_raw(r, "(" "1234567999999999999999999999999999999\r\n", sizeof big + 2);
        else reply_bulk(r, big, sizeof big - 1);
    } else if (slice_eq_nocase(t, "null")) reply_null(r);
    else if (slice_eq_nocase(t, "array") || slice_eq_nocase(t, "set")) {
        if (slice_eq_nocase(t, "set")) reply_set(r, 3);
        else reply_array(r, 3);
        for (int j = 0; j < 3; j++) reply_int(r, j);
    } else if (slice_eq_nocase(t, "map")) {
        reply_map(r, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(r, j);
            reply_bool(r, j == 1);
        }
    } else if (slice_eq_nocase(t, "attrib")) {
        if (r->resp >= 3) {
            reply_raw(r, "|1\r\n", 4);
            reply_bulk_cstr(r, "key-popularity");
            reply_array(r, 2);
            reply_bulk_cstr(r, "key:123");
            reply_int(r, 90);
        }
        /* an attribute is not a reply: a real one follows */
        reply_bulk_cstr(r, "Some real reply following the attribute");
    } else if (slice_eq_nocase(t, "push")) {
        if (r->resp < 3) { reply_error(r, "ERR RESP2 is not supported by this command"); return; }
        reply_push(r, 2);
        reply_bulk_cstr(r, "server-cpu-usage");
        reply_int(r, 42);
        reply_bulk_cstr(r, "Some real reply following the push reply");
    } else if (slice_eq_nocase(t, "true")) reply_bool(r, true);
    else if (slice_eq_nocase(t, "false")) reply_bool(r, false);
    else if (slice_eq_nocase(t, "verbatim")) reply_verbatim(r, "This is a verbatim\nstring", 25, "txt");
    else reply_error(r, "ERR Wrong protocol type name. Please use one of the following: "
                        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
}

/* ---- the rest ---- */

static void debug_populate(struct cmd_ctx *c) {
    long long count, size = -1;
    if (!str_to_ll(ARG(2).ptr, ARG(2).len, &count) || count < 0) {
        reply_error(&c->r, ERR_POSITIVE);
        return;
    }
    struct slice prefix = c->argc > 3 ? ARG(3) : SLICE_LIT("key");
    if (c->argc > 4 && (!str_to_ll(ARG(4).ptr, ARG(4).len, &size) || size < 0)) {
        reply_error(&c->r, ERR_POSITIVE);
        return;
    }
    c->multi = true;
    char kbuf[512], vbuf[64];
    char *padded = size >= 0 ? rk_malloc((size_t)size + 1) : NULL;
    for (long long i = 0; i < count; i++) {
        int kl = snprintf(kbuf, sizeof kbuf, "%.*s:%lld", (int)(prefix.len > 400 ? 400 : prefix.len), prefix.ptr, i);
        struct slice key = { kbuf, (size_t)kl };
        if (db_lookup(c, key, LOOKUP_NOEXPIRE)) continue;
        int vl = snprintf(vbuf, sizeof vbuf, "value:%lld", i);
        struct slice val = { vbuf, (size_t)vl };
        if (size >= 0) {
            memset(padded, 0, (size_t)size);
            memcpy(padded, vbuf, (size_t)vl < (size_t)size ? (size_t)vl : (size_t)size);
            val = (struct slice){ padded, (size_t)size };
        }
        db_insert(c, entry_new_string(key, val, NO_EXPIRE));
    }
    free(padded);
    reply_ok(&c->r);
}

static void debug_sleep(struct cmd_ctx *c) {
    double secs;
    if (!str_to_d(ARG(2).ptr, ARG(2).len, &secs)) { reply_error(&c->r, ERR_NOT_FLOAT); return; }
    struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
    nanosleep(&ts, NULL);
    reply_ok(&c->r);
}

static void debug_config_rewrite_force_all(struct cmd_ctx *c) {
    if (!rk_config.config_file) reply_error(&c->r, "ERR The server is running without a config file");
    else if (config_rewrite(true) != 0) reply_errorf(&c->r, "ERR CONFIG-REWRITE-FORCE-ALL failed: %s", strerror(errno));
    else reply_ok(&c->r);
}

/* A fuzz of the glob matcher with random patterns and strings: what counts
 * is that it returns. */
static void debug_stringmatch_test(struct cmd_ctx *c) {
    static const char chars[] = "*?[]\\^-abc";
    char pat[32], str[32];
    for (int i = 0; i < 100000; i++) {
        size_t pl = rk_random() % sizeof pat, sl = rk_random() % sizeof str;
        for (size_t j = 0; j < pl; j++) pat[j] = rk_random() % 4 ? chars[rk_random() % (sizeof chars - 1)] : (char)rk_random();
        for (size_t j = 0; j < sl; j++) str[j] = (char)rk_random();
        (void)string_match(pat, pl, str, sl, false);
    }
    reply_simple(&c->r, "Apparently Redis did not crash: test passed");
}

/* DEBUG ERROR <string>: the string as an error line, newlines made spaces;
 * written raw, as Redis's addReplySds, so errorstats do not count it. */
static void debug_error(struct cmd_ctx *c) {
    struct rbuf b = { 0 };
    rbuf_append(&b, "-", 1);
    rbuf_append(&b, ARG(2).ptr, ARG(2).len);
    for (size_t i = 1; i < b.len; i++)
        if (b.buf[i] == '\r' || b.buf[i] == '\n') b.buf[i] = ' ';
    rbuf_append(&b, "\r\n", 2);
    reply_raw(&c->r, b.buf, b.len);
    rbuf_free(&b);
}

static const char *debug_help[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]",
    "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "HELP",
    "    Print this help.",
};

void cmd_debug(struct cmd_ctx *c) {
    int n = c->argc;
    if (ARG_IS(1, "help") && n == 2) {
        reply_help(&c->r, debug_help, RK_ARRAY_LEN(debug_help));
    } else if (ARG_IS(1, "sleep") && n == 3) {
        debug_sleep(c);
    } else if (ARG_IS(1, "populate") && n >= 3 && n <= 5) {
        debug_populate(c);
    } else if (ARG_IS(1, "reload")) {
        persist_debug_reload(c);
    } else if (ARG_IS(1, "config-rewrite-force-all") && n == 2) {
        debug_config_rewrite_force_all(c);
    } else if (ARG_IS(1, "object") && n == 3) {
        debug_object(c);
    } else if (ARG_IS(1, "listpack") && n == 3) {
        debug_listpack(c);
    } else if (ARG_IS(1, "quicklist") && (n == 3 || n == 4)) {
        debug_quicklist(c);
    } else if (ARG_IS(1, "digest") && n == 2) {
        debug_digest(c);
    } else if (ARG_IS(1, "digest-value")) {
        debug_digest_value(c);
    } else if (ARG_IS(1, "protocol") && n == 3) {
        debug_protocol(c);
    } else if (ARG_IS(1, "set-active-expire") && n == 3) {
        atomic_store(&db_active_expire, arg_atoi(ARG(2)) != 0);
        reply_ok(&c->r);
    } else if (ARG_IS(1, "quicklist-packed-threshold") && n == 3) {
        debug_packed_threshold(c);
    } else if (ARG_IS(1, "change-repl-id") && n == 2) {
        /* no replication: there are no IDs to change */
        rk_log(LL_WARNING, "Changing replication IDs after receiving DEBUG change-repl-id");
        reply_ok(&c->r);
    } else if (ARG_IS(1, "stringmatch-test") && n == 2) {
        debug_stringmatch_test(c);
    } else if (ARG_IS(1, "log") && n == 3) {
        rk_log(LL_WARNING, "DEBUG LOG: %.*s", (int)ARG(2).len, ARG(2).ptr);
        reply_ok(&c->r);
    } else if (ARG_IS(1, "error") && n == 3) {
        debug_error(c);
    } else {
        reply_errorf(&c->r, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                     (int)(ARG(1).len > 128 ? 128 : ARG(1).len), ARG(1).ptr);
    }
}
