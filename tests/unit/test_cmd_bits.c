/*
 * Bitmap command handlers (src/cmd/cmd_bits.c), called directly with a
 * hand-built cmd_ctx: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
 * BITFIELD_RO. Fixed cases compare replies byte for byte with what
 * redis-server 7.0.15 sends; seeded random cases compare BITCOUNT, BITPOS
 * and BITFIELD's overflow arithmetic with plain models of Redis's rules,
 * which read one bit at a time and compute in 128 bits.
 */
#include "cmd_fixture.h"

/* The handlers are the group's own (static): found through its table. */
static command_proc proc(const char *name) {
    for (const struct command *k = bits_commands; k->name; k++)
        if (strcmp(k->name, name) == 0)
            return k->proc;
    fail_msg("no command %s in bits_commands", name);
    return NULL;
}

#define B(want, name, ...) CHECK(want, proc(name), name, __VA_ARGS__)

/* Put binary bytes at key (the argument helpers only take C strings). */
static void set_bytes(const char *key, const void *p, size_t len) {
    struct slice k = { key, strlen(key) };
    db_delete(&c, k);
    db_insert(&c, entry_new_string(k, (struct slice){ p, len }, NO_EXPIRE));
}

static struct slice value_of(const char *key) {
    struct kv_entry *e = db_lookup(&c, (struct slice){ key, strlen(key) }, LOOKUP_NONE);
    assert_non_null(e);
    return entry_val_slice(e);
}

/* Deterministic pseudo-random numbers, so a failure repeats. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- SETBIT / GETBIT ---- */

static void test_setbit_getbit(void **state) {
    (void)state;
    B(":0\r\n", "setbit", "k", "1", "1");
    CHECK("$1\r\n@\r\n", cmd_get, "get", "k");
    B(":0\r\n", "setbit", "k", "7", "1");
    B(":1\r\n", "setbit", "k", "7", "0");
    B(":1\r\n", "setbit", "k", "1", "1");
    CHECK("$1\r\n@\r\n", cmd_get, "get", "k");
    B(":1\r\n", "getbit", "k", "1");
    B(":0\r\n", "getbit", "k", "0");
    B(":0\r\n", "getbit", "k", "8");            /* past the end */
    B(":0\r\n", "getbit", "k", "4294967295");
    B(":0\r\n", "getbit", "nokey", "0");
    /* a digit string: ASCII "1" is 00110001 */
    CHECK("+OK\r\n", cmd_set, "set", "n", "1");
    B(":1\r\n", "getbit", "n", "2");
    B(":0\r\n", "setbit", "n", "6", "1");
    CHECK("$1\r\n3\r\n", cmd_get, "get", "n");
    CHECK("$3\r\nraw\r\n", cmd_object, "object", "encoding", "n");   /* as Redis leaves it */
    B(":0\r\n", "setbit", "new", "3", "1");
    CHECK("$3\r\nraw\r\n", cmd_object, "object", "encoding", "new");
    /* growth keeps the TTL */
    CHECK(":1\r\n", cmd_expire, "expire", "k", "100");
    B(":0\r\n", "setbit", "k", "1000", "1");
    CHECK(":100\r\n", cmd_ttl, "ttl", "k");
    assert_int_equal(value_of("k").len, 126);
}

static void test_setbit_errors(void **state) {
    (void)state;
    B("-ERR bit offset is not an integer or out of range\r\n", "setbit", "k", "-1", "1");
    B("-ERR bit offset is not an integer or out of range\r\n", "setbit", "k", "4294967296", "1");
    B("-ERR bit offset is not an integer or out of range\r\n", "setbit", "k", "x", "1");
    B("-ERR bit offset is not an integer or out of range\r\n", "setbit", "k", "", "1");
    B("-ERR bit offset is not an integer or out of range\r\n", "setbit", "k", "#3", "1");
    B("-ERR bit is not an integer or out of range\r\n", "setbit", "k", "0", "2");
    B("-ERR bit is not an integer or out of range\r\n", "setbit", "k", "0", "-1");
    B("-ERR bit is not an integer or out of range\r\n", "setbit", "k", "0", "x");
    B("-ERR bit offset is not an integer or out of range\r\n", "getbit", "k", "-1");
    B("-ERR bit offset is not an integer or out of range\r\n", "getbit", "k", "4294967296");
    add_toy_list("list", 1);
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "setbit", "list", "0", "1");
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "getbit", "list", "0");
    /* the offset is checked before the key, as in Redis */
    B("-ERR bit offset is not an integer or out of range\r\n", "getbit", "list", "-1");
    CHECK(":0\r\n", cmd_exists, "exists", "k");
}

/* The offset's byte must be below proto-max-bulk-len; above 4 GB an entry
 * cannot hold the string, whatever the setting, and nothing is allocated. */
static void test_setbit_limits(void **state) {
    (void)state;
    rk_config_proto_max_bulk_len = 1024 * 1024;
    B("-ERR bit offset is not an integer or out of range\r\n", "setbit", "k", "8388608", "1");
    B(":0\r\n", "setbit", "k", "8388607", "1");
    assert_int_equal(value_of("k").len, 1024 * 1024);
    B(":1\r\n", "getbit", "k", "8388607");
    B(":0\r\n", "getbit", "k", "8388606");
    rk_config_proto_max_bulk_len = 8LL << 30;
    B("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "setbit", "big", "34359738360", "1");
    B("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "bitfield", "big", "set", "u8", "34359738360", "1");
    B(":0\r\n", "getbit", "big", "34359738360");
    CHECK(":0\r\n", cmd_exists, "exists", "big");
}

/* SETBITs at rising offsets: every byte between stays zero, earlier bits
 * stay set, the string is exactly as long as the highest bit needs. */
static void test_setbit_growth(void **state) {
    (void)state;
    uint64_t offsets[] = { 5, 70, 600, 601, 4100, 70000, 1000003 };
    for (size_t i = 0; i < RK_ARRAY_LEN(offsets); i++) {
        char off[32];
        snprintf(off, sizeof off, "%llu", (unsigned long long)offsets[i]);
        RUN(proc("setbit"), "setbit", "g", off, "1");
        assert_int_equal(reply_ll(), 0);
    }
    struct slice v = value_of("g");
    assert_int_equal(v.len, 1000003 / 8 + 1);
    uint64_t set = 0;
    for (size_t b = 0; b < v.len * 8; b++)
        if (((unsigned char)v.ptr[b / 8] >> (7 - b % 8)) & 1) {
            assert_int_equal(b, offsets[set]);
            set++;
        }
    assert_int_equal(set, RK_ARRAY_LEN(offsets));
    B(":7\r\n", "bitcount", "g");
    B(":70000\r\n", "bitpos", "g", "1", "4101");
    B(":1000003\r\n", "bitpos", "g", "1", "8751");
}

/* ---- BITCOUNT / BITPOS ---- */

static void test_bitcount(void **state) {
    (void)state;
    B(":0\r\n", "bitcount", "nokey");
    B(":0\r\n", "bitcount", "nokey", "a", "b", "c", "d");   /* the key is looked up first */
    CHECK("+OK\r\n", cmd_set, "set", "s", "foobar");
    B(":26\r\n", "bitcount", "s");
    B(":4\r\n", "bitcount", "s", "0", "0");
    B(":6\r\n", "bitcount", "s", "1", "1");
    B(":6\r\n", "bitcount", "s", "1", "1", "byte");
    B(":17\r\n", "bitcount", "s", "5", "30", "BIT");
    B(":26\r\n", "bitcount", "s", "0", "-1");
    B(":26\r\n", "bitcount", "s", "-100", "100");
    B(":0\r\n", "bitcount", "s", "-1", "-2");
    B(":0\r\n", "bitcount", "s", "-1", "-2", "bogus");       /* answered before the unit */
    B(":0\r\n", "bitcount", "s", "4", "2");
    B(":0\r\n", "bitcount", "s", "100", "200");
    B(":0\r\n", "bitcount", "s", "-1", "-1", "bit");
    B(":1\r\n", "bitcount", "s", "-2", "-2", "bit");
    B(":4\r\n", "bitcount", "s", "-8", "-1", "bit");
    B("-ERR syntax error\r\n", "bitcount", "s", "0");
    B("-ERR syntax error\r\n", "bitcount", "s", "0", "1", "bits");
    B("-ERR syntax error\r\n", "bitcount", "s", "0", "1", "bit", "x");
    B("-ERR value is not an integer or out of range\r\n", "bitcount", "s", "a", "1");
    B("-ERR value is not an integer or out of range\r\n", "bitcount", "s", "0", "b");
    CHECK("+OK\r\n", cmd_set, "set", "e", "");
    B(":0\r\n", "bitcount", "e");
    B(":0\r\n", "bitcount", "e", "0", "-1", "bit");
    add_toy_list("list", 1);
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "bitcount", "list", "0");
}

static void test_bitpos(void **state) {
    (void)state;
    B(":0\r\n", "bitpos", "nokey", "0");
    B(":-1\r\n", "bitpos", "nokey", "1");
    B(":0\r\n", "bitpos", "nokey", "0", "a", "b", "c", "d");    /* the key is looked up first */
    B("-ERR The bit argument must be 1 or 0.\r\n", "bitpos", "nokey", "2");
    B("-ERR value is not an integer or out of range\r\n", "bitpos", "nokey", "x");
    set_bytes("p", "\xff\xf0\x00", 3);
    B(":12\r\n", "bitpos", "p", "0");
    B(":0\r\n", "bitpos", "p", "1");
    B(":-1\r\n", "bitpos", "p", "1", "2");
    B(":12\r\n", "bitpos", "p", "0", "1");
    B(":16\r\n", "bitpos", "p", "0", "2", "-1");
    B(":-1\r\n", "bitpos", "p", "1", "2", "-1");
    B(":12\r\n", "bitpos", "p", "0", "0", "-1", "bit");
    B(":7\r\n", "bitpos", "p", "1", "7", "15", "bit");
    B(":-1\r\n", "bitpos", "p", "0", "0", "11", "bit");
    B(":-1\r\n", "bitpos", "p", "1", "12", "23", "BIT");
    B("-ERR syntax error\r\n", "bitpos", "p", "1", "0", "1", "bot");
    B("-ERR syntax error\r\n", "bitpos", "p", "1", "0", "1", "bit", "x");
    B("-ERR value is not an integer or out of range\r\n", "bitpos", "p", "1", "x", "1", "bot");
    B("-ERR syntax error\r\n", "bitpos", "p", "1", "0", "x", "bot");   /* start, the unit, then end */
    set_bytes("p", "\xff\xf0\x00", 3);
    B("-ERR value is not an integer or out of range\r\n", "bitpos", "p", "1", "x");
    B("-ERR value is not an integer or out of range\r\n", "bitpos", "p", "1", "0", "x", "bit");
    /* clear bits: the right of the string counts as zeros unless end is given */
    set_bytes("ones", "\xff\xff", 2);
    B(":16\r\n", "bitpos", "ones", "0");
    B(":16\r\n", "bitpos", "ones", "0", "1");
    B(":-1\r\n", "bitpos", "ones", "0", "0", "-1");
    B(":-1\r\n", "bitpos", "ones", "0", "10");                  /* empty range */
    CHECK("+OK\r\n", cmd_set, "set", "e", "");
    B(":-1\r\n", "bitpos", "e", "0");
    B(":-1\r\n", "bitpos", "e", "1");
    add_toy_list("list", 1);
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "bitpos", "list", "1");
    B("-ERR The bit argument must be 1 or 0.\r\n", "bitpos", "list", "3");
}

static int model_bit(const unsigned char *p, long long i) {
    return (p[i / 8] >> (7 - i % 8)) & 1;
}

/* Redis's index rules, as a range of bits [*s, *e]; false when empty. */
static bool model_range(long long len, bool in_bits, long long start, long long end, long long *s, long long *e) {
    long long total = in_bits ? len * 8 : len;
    if (start < 0) start += total;
    if (end < 0) end += total;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= total) end = total - 1;
    if (start > end) return false;
    *s = in_bits ? start : start * 8;
    *e = in_bits ? end : end * 8 + 7;
    return true;
}

static long long model_bitcount(const unsigned char *p, long long len, int nargs, long long start, long long end,
                                bool in_bits) {
    long long s = 0, e = len * 8 - 1, n = 0;
    if (nargs && start < 0 && end < 0 && start > end) return 0;
    if (nargs && !model_range(len, in_bits, start, end, &s, &e)) return 0;
    for (long long i = s; i <= e; i++) n += model_bit(p, i);
    return n;
}

/* nargs: 0 whole string, 1 start, 2 start end, 3 start end unit. */
static long long model_bitpos(const unsigned char *p, long long len, int bit, int nargs, long long start,
                              long long end, bool in_bits) {
    long long s, e;
    if (!model_range(len, in_bits, nargs >= 1 ? start : 0, nargs >= 2 ? end : -1, &s, &e)) return -1;
    for (long long i = s; i <= e; i++)
        if (model_bit(p, i) == bit) return i;
    return bit == 0 && nargs < 2 ? e + 1 : -1;
}

/* Random strings (runs of 0x00 and 0xff as well as random bytes, so the
 * word-skipping paths run) and random ranges, bytes and bits. */
static void test_bitcount_bitpos_model(void **state) {
    (void)state;
    unsigned char buf[80];
    for (int round = 0; round < 3000; round++) {
        long long len = (long long)(rnd() % sizeof buf);
        int kind = (int)(rnd() % 3);
        for (long long i = 0; i < len; i++)
            buf[i] = kind == 0 ? (unsigned char)rnd() : kind == 1 ? (rnd() % 50 ? 0x00 : (unsigned char)rnd())
                                                                : (rnd() % 50 ? 0xff : (unsigned char)rnd());
        set_bytes("r", buf, (size_t)len);
        long long span = len * 8 + 20;
        long long start = (long long)(rnd() % (uint64_t)(2 * span)) - span;
        long long end = (long long)(rnd() % (uint64_t)(2 * span)) - span;
        int nargs = (int)(rnd() % 4);
        bool in_bits = nargs == 3 && rnd() % 2;
        int bit = (int)(rnd() % 2);
        char s1[32], s2[32], b[2] = { (char)('0' + bit), 0 };
        snprintf(s1, sizeof s1, "%lld", start);
        snprintf(s2, sizeof s2, "%lld", end);
        const char *unit = in_bits ? "bit" : "byte";

        if (nargs == 0) RUN(proc("bitpos"), "bitpos", "r", b);
        else if (nargs == 1) RUN(proc("bitpos"), "bitpos", "r", b, s1);
        else if (nargs == 2) RUN(proc("bitpos"), "bitpos", "r", b, s1, s2);
        else RUN(proc("bitpos"), "bitpos", "r", b, s1, s2, unit);
        long long want = model_bitpos(buf, len, bit, nargs, start, end, in_bits);
        if (reply_ll() != want)
            fail_msg("round %d: bitpos len %lld bit %d args %d [%lld %lld %s]: %lld, want %lld", round, len, bit,
                     nargs, start, end, unit, reply_ll(), want);

        int cargs = nargs >= 2 ? nargs : 0;
        if (cargs == 0) RUN(proc("bitcount"), "bitcount", "r");
        else if (cargs == 2) RUN(proc("bitcount"), "bitcount", "r", s1, s2);
        else RUN(proc("bitcount"), "bitcount", "r", s1, s2, unit);
        want = model_bitcount(buf, len, cargs, start, end, in_bits);
        if (reply_ll() != want)
            fail_msg("round %d: bitcount len %lld [%lld %lld %s]: %lld, want %lld", round, len, start, end, unit,
                     reply_ll(), want);
    }
}

/* ---- BITOP ---- */

static void test_bitop(void **state) {
    (void)state;
    CHECK("+OK\r\n", cmd_set, "set", "a", "abc");
    CHECK("+OK\r\n", cmd_set, "set", "b", "12345");
    B(":5\r\n", "bitop", "and", "d", "a", "b");
    CHECK("$5\r\n!\"#\x00\x00\r\n", cmd_get, "get", "d");
    B(":5\r\n", "bitop", "OR", "d", "a", "b");
    CHECK("$5\r\nqrs45\r\n", cmd_get, "get", "d");
    B(":5\r\n", "bitop", "Xor", "d", "a", "b");
    CHECK("$5\r\nPPP45\r\n", cmd_get, "get", "d");
    B(":3\r\n", "bitop", "not", "d", "a");
    CHECK("$3\r\n\x9e\x9d\x9c\r\n", cmd_get, "get", "d");
    B(":3\r\n", "bitop", "and", "d", "a");                 /* one source: a copy */
    CHECK("$3\r\nabc\r\n", cmd_get, "get", "d");
    B(":5\r\n", "bitop", "and", "d", "a", "nokey", "b");    /* missing keys are zeros */
    CHECK("$5\r\n\x00\x00\x00\x00\x00\r\n", cmd_get, "get", "d");
    B(":5\r\n", "bitop", "or", "d", "nokey", "b");
    CHECK("$5\r\n12345\r\n", cmd_get, "get", "d");
    /* the destination is overwritten whatever it held, TTL gone */
    CHECK(":1\r\n", cmd_expire, "expire", "d", "100");
    B(":3\r\n", "bitop", "xor", "d", "a", "a");
    CHECK("$3\r\n\x00\x00\x00\r\n", cmd_get, "get", "d");
    CHECK(":-1\r\n", cmd_ttl, "ttl", "d");
    add_toy_list("list", 1);
    B(":3\r\n", "bitop", "or", "list", "a");
    CHECK("$3\r\nabc\r\n", cmd_get, "get", "list");
    /* a source that is the destination is read before it is replaced */
    B(":5\r\n", "bitop", "or", "a", "a", "b");
    CHECK("$5\r\nqrs45\r\n", cmd_get, "get", "a");
    /* nothing but empty sources: the destination goes */
    CHECK("+OK\r\n", cmd_set, "set", "e", "");
    B(":0\r\n", "bitop", "and", "d", "nokey", "e");
    CHECK(":0\r\n", cmd_exists, "exists", "d");
    /* errors */
    add_toy_list("l2", 1);
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "bitop", "and", "d", "a", "l2");
    B("-ERR BITOP NOT must be called with a single source key.\r\n", "bitop", "not", "d", "a", "b");
    B("-ERR syntax error\r\n", "bitop", "nand", "d", "a");
    B("-ERR syntax error\r\n", "bitop", "nand", "d", "l2");
    CHECK(":0\r\n", cmd_exists, "exists", "d");
    /* digits are bytes too */
    CHECK("+OK\r\n", cmd_set, "set", "i", "12");
    B(":5\r\n", "bitop", "xor", "d", "i", "a");
}

/* Long sources of different lengths, through the word loops and a result
 * entry too big to be built tight, against a byte-at-a-time model. */
static void test_bitop_long(void **state) {
    (void)state;
    enum { N = 3 };
    static unsigned char src[N][5000], want[5000];
    size_t len[N] = { 5000, 1777, 65 };
    const char *keys[N] = { "x", "y", "z" }, *ops[] = { "and", "or", "xor" };
    for (int k = 0; k < N; k++) {
        for (size_t i = 0; i < len[k]; i++) src[k][i] = (unsigned char)(rnd() | rnd());
        set_bytes(keys[k], src[k], len[k]);
    }
    for (int op = 0; op < 3; op++) {
        for (size_t i = 0; i < 5000; i++) {
            unsigned v = src[0][i];
            for (int k = 1; k < N; k++) {
                unsigned b = i < len[k] ? src[k][i] : 0;
                v = op == 0 ? v & b : op == 1 ? v | b : v ^ b;
            }
            want[i] = (unsigned char)v;
        }
        RUN(proc("bitop"), "bitop", ops[op], "dst", "x", "y", "z");
        assert_int_equal(reply_ll(), 5000);
        struct slice v = value_of("dst");
        assert_int_equal(v.len, 5000);
        assert_memory_equal(v.ptr, want, 5000);
    }
    RUN(proc("bitop"), "bitop", "not", "dst", "y");
    struct slice v = value_of("dst");
    assert_int_equal(v.len, 1777);
    for (size_t i = 0; i < 1777; i++) assert_int_equal((unsigned char)v.ptr[i], (unsigned char)~src[1][i]);
}

/* Keys of both shards, as the dispatcher runs a cross-shard BITOP:
 * c->multi set, each key routed to its own shard. */
static void pick_keys_by_shard(char k0[][16], char k1[][16], int n) {
    int n0 = 0, n1 = 0;
    for (int i = 0; n0 < n || n1 < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "key%d", i);
        if (shard_of_key(name, strlen(name)) == 0) {
            if (n0 < n) strcpy(k0[n0++], name);
        } else if (n1 < n) {
            strcpy(k1[n1++], name);
        }
    }
}

static void test_bitop_multi_shard(void **state) {
    (void)state;
    char k0[2][16], k1[2][16];
    pick_keys_by_shard(k0, k1, 2);
    c.multi = true;
    CHECK("+OK\r\n", cmd_set, "set", k0[0], "abc");
    CHECK("+OK\r\n", cmd_set, "set", k1[0], "12345");
    B(":5\r\n", "bitop", "or", k1[1], k0[0], k1[0]);
    CHECK("$5\r\nqrs45\r\n", cmd_get, "get", k1[1]);
    B(":5\r\n", "bitop", "and", k0[1], k1[1], k0[0]);
    CHECK("$5\r\nabc\x00\x00\r\n", cmd_get, "get", k0[1]);
    assert_int_equal(table_size(&fx_shards[0].dbs[0].table), 2);
    assert_int_equal(table_size(&fx_shards[1].dbs[0].table), 2);
    B(":0\r\n", "bitop", "and", k0[1], "nokey");
    assert_int_equal(table_size(&fx_shards[0].dbs[0].table), 1);
    c.multi = false;
}

/* ---- BITFIELD ---- */

static void test_bitfield(void **state) {
    (void)state;
    B("*0\r\n", "bitfield", "bf");
    B("*0\r\n", "bitfield_ro", "bf");
    B("*1\r\n:0\r\n", "bitfield", "bf", "get", "i64", "0");
    CHECK(":0\r\n", cmd_exists, "exists", "bf");                   /* GETs create nothing */
    B("*3\r\n:0\r\n:100\r\n:-56\r\n", "bitfield", "bf", "set", "i8", "0", "100", "get", "i8", "0", "incrby", "i8", "0", "100");
    B("*3\r\n:44\r\n$-1\r\n:88\r\n", "bitfield", "bf", "overflow", "sat", "incrby", "i8", "0", "100", "overflow", "fail",
      "incrby", "i8", "0", "100", "overflow", "wrap", "incrby", "u8", "0", "300");
    B("*1\r\n:88\r\n", "bitfield_ro", "bf", "get", "u8", "0");
    B("*2\r\n:0\r\n:255\r\n", "bitfield", "bf", "set", "u8", "#2", "-1", "get", "u8", "16");
    B("*2\r\n:5\r\n:15\r\n", "bitfield", "bf", "get", "u4", "#0", "get", "i5", "#3");
    CHECK("$3\r\nX\x00\xff\r\n", cmd_get, "get", "bf");
    /* 64-bit signed and 63-bit unsigned fields */
    B("*3\r\n:6341348650802741248\r\n:9223372036854775807\r\n:9223372036854775807\r\n", "bitfield", "bf", "set", "i64",
      "0", "-9223372036854775808", "incrby", "i64", "0", "-1", "get", "i64", "0");
    B("*2\r\n:9223372036854775807\r\n:4611686018427387903\r\n", "bitfield", "bf", "get", "u63", "1", "incrby",
      "u63", "1", "-4611686018427387904");
    B("*1\r\n$-1\r\n", "bitfield", "bf", "overflow", "fail", "incrby", "i64", "0", "9223372036854775807");
    /* SAT limits and FAIL on SET of an out-of-range value */
    B("*3\r\n:0\r\n:-1\r\n:7\r\n", "bitfield", "ov", "overflow", "sat", "set", "u8", "0", "-5", "set", "i4", "0", "100",
      "get", "i4", "0");
    B("*2\r\n$-1\r\n:7\r\n", "bitfield", "ov", "overflow", "FAIL", "set", "i4", "0", "8", "get", "i4", "0");
    B("*1\r\n:-8\r\n", "bitfield", "ov", "overflow", "sat", "incrby", "i4", "0", "-100");
    B("*1\r\n:0\r\n", "bitfield", "ov", "overflow", "sat", "incrby", "u2", "0", "-100");
    /* a write grows the string to its highest bit */
    B("*1\r\n:0\r\n", "bitfield", "g", "set", "u8", "100", "1");
    assert_int_equal(value_of("g").len, 14);
    CHECK("$3\r\nraw\r\n", cmd_object, "object", "encoding", "g");
    /* RESP3: FAIL's null */
    c.r.resp = 3;
    B("*1\r\n_\r\n", "bitfield", "ov", "overflow", "fail", "incrby", "u1", "0", "5");
    c.r.resp = 2;
}

static void test_bitfield_errors(void **state) {
    (void)state;
    const char *type_err = "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n";
    RUN(proc("bitfield"), "bitfield", "k", "get", "u64", "0");
    check_reply(type_err, strlen(type_err), __FILE__, __LINE__);
    RUN(proc("bitfield"), "bitfield", "k", "get", "i65", "0");
    check_reply(type_err, strlen(type_err), __FILE__, __LINE__);
    RUN(proc("bitfield"), "bitfield", "k", "get", "i0", "0");
    check_reply(type_err, strlen(type_err), __FILE__, __LINE__);
    RUN(proc("bitfield"), "bitfield", "k", "get", "x8", "0");
    check_reply(type_err, strlen(type_err), __FILE__, __LINE__);
    RUN(proc("bitfield"), "bitfield", "k", "get", "", "0");
    check_reply(type_err, strlen(type_err), __FILE__, __LINE__);
    B("-ERR Invalid OVERFLOW type specified\r\n", "bitfield", "k", "overflow", "bad");
    B("-ERR syntax error\r\n", "bitfield", "k", "bad");
    B("-ERR syntax error\r\n", "bitfield", "k", "get", "i8");
    B("-ERR syntax error\r\n", "bitfield", "k", "set", "i8", "0");
    B("-ERR syntax error\r\n", "bitfield", "k", "overflow");
    B("-ERR value is not an integer or out of range\r\n", "bitfield", "k", "set", "i8", "0", "a");
    B("-ERR value is not an integer or out of range\r\n", "bitfield", "k", "incrby", "i8", "0", "");
    B("-ERR bit offset is not an integer or out of range\r\n", "bitfield", "k", "get", "i8", "-1");
    B("-ERR bit offset is not an integer or out of range\r\n", "bitfield", "k", "get", "i8", "#-1");
    B("-ERR bit offset is not an integer or out of range\r\n", "bitfield", "k", "get", "i8", "##1");
    B("-ERR bit offset is not an integer or out of range\r\n", "bitfield", "k", "get", "i8", "4294967296");
    B("-ERR bit offset is not an integer or out of range\r\n", "bitfield", "k", "get", "i8", "#536870912");
    B("*1\r\n:0\r\n", "bitfield", "k", "get", "i8", "#536870911");
    /* every operation is parsed before any runs */
    B("-ERR syntax error\r\n", "bitfield", "k", "set", "i8", "0", "1", "bad");
    CHECK(":0\r\n", cmd_exists, "exists", "k");
    B("-ERR BITFIELD_RO only supports the GET subcommand\r\n", "bitfield_ro", "k", "get", "i8", "0", "set", "i8", "0", "1");
    B("-ERR BITFIELD_RO only supports the GET subcommand\r\n", "bitfield_ro", "k", "incrby", "i8", "0", "1");
    B("-ERR syntax error\r\n", "bitfield_ro", "k", "get", "i8");
    add_toy_list("list", 1);
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "bitfield", "list", "get", "i8", "0");
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "bitfield", "list", "set", "i8", "0", "1");
    B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "bitfield_ro", "list", "get", "i8", "0");
    B("-ERR BITFIELD_RO only supports the GET subcommand\r\n", "bitfield_ro", "list", "set", "i8", "0", "1");
}

/* Redis's overflow rules in 128-bit arithmetic: the stored value of an
 * n-bit field after old + incr, or false under FAIL when it overflows. */
static bool model_add(bool sign, unsigned bits, int ov, __int128 old, __int128 incr, __int128 *out) {
    __int128 span = (__int128)1 << bits;
    __int128 min = sign ? -(span / 2) : 0, max = sign ? span / 2 - 1 : span - 1;
    __int128 sum = old + incr;
    if (sum >= min && sum <= max) { *out = sum; return true; }
    if (ov == 2) return false;
    if (ov == 1) { *out = sum > max ? max : min; return true; }
    __int128 r = ((sum - min) % span + span) % span + min;   /* wrap into [min, max] */
    *out = r;
    return true;
}

static long long pick_value(void) {
    static const long long edges[] = { 0, 1, -1, 2, -2, 127, 128, -128, -129, 255, 256, 32767, -32768,
                                       INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 1LL << 62, -(1LL << 62) };
    return rnd() % 3 ? edges[rnd() % RK_ARRAY_LEN(edges)] : (long long)rnd() >> (rnd() % 64);
}

/* SET then INCRBY on random fields, types and overflow modes, replies and
 * the stored value checked against the model. */
static void test_bitfield_model(void **state) {
    (void)state;
    static const char *const ovs[] = { "wrap", "sat", "fail" };
    for (int round = 0; round < 20000; round++) {
        bool sign = rnd() % 2;
        unsigned bits = 1 + (unsigned)(rnd() % (sign ? 64 : 63));
        int ov = (int)(rnd() % 3);
        long long setv = pick_value(), incr = pick_value();
        char type[8], off[24], sv[24], iv[24];
        snprintf(type, sizeof type, "%c%u", sign ? 'i' : 'u', bits);
        snprintf(off, sizeof off, "%llu", (unsigned long long)(rnd() % 40));
        snprintf(sv, sizeof sv, "%lld", setv);
        snprintf(iv, sizeof iv, "%lld", incr);

        /* start from a known value: 0 stored by WRAP */
        RUN(proc("bitfield"), "bitfield", "m", "set", type, off, "0");
        /* SET: the value arrives unsigned as its two's complement pattern */
        __int128 stored = 0, after;
        __int128 in = sign ? (__int128)setv : (__int128)(unsigned long long)setv;
        bool ok = model_add(sign, bits, ov, in, 0, &after);
        char want[128];
        if (ok) snprintf(want, sizeof want, "*1\r\n:0\r\n");
        else snprintf(want, sizeof want, "*1\r\n$-1\r\n");
        RUN(proc("bitfield"), "bitfield", "m", "overflow", ovs[ov], "set", type, off, sv);
        if (out.len != strlen(want) || memcmp(out.buf, want, out.len) != 0)
            fail_msg("round %d: set %s %s %s (%s): got %.*s", round, type, off, sv, ovs[ov], (int)out.len, out.buf);
        if (ok) stored = after;

        ok = model_add(sign, bits, ov, stored, incr, &after);
        if (ok) snprintf(want, sizeof want, "*1\r\n:%lld\r\n", (long long)after);
        else snprintf(want, sizeof want, "*1\r\n$-1\r\n");
        RUN(proc("bitfield"), "bitfield", "m", "overflow", ovs[ov], "incrby", type, off, iv);
        if (out.len != strlen(want) || memcmp(out.buf, want, out.len) != 0)
            fail_msg("round %d: %s at %s = %lld, incrby %s (%s): got %.*s, want %s", round, type, off,
                     (long long)stored, iv, ovs[ov], (int)out.len, out.buf, want);
        if (ok) stored = after;
        snprintf(want, sizeof want, "*1\r\n:%lld\r\n", (long long)stored);
        RUN(proc("bitfield_ro"), "bitfield_ro", "m", "get", type, off);
        if (out.len != strlen(want) || memcmp(out.buf, want, out.len) != 0)
            fail_msg("round %d: get %s %s: got %.*s, want %s", round, type, off, (int)out.len, out.buf, want);
    }
}

/* COMMAND GETKEYSANDFLAGS: BITFIELD writes its key only with SET or
 * INCRBY, or when it cannot tell (Redis's bitfieldGetKeys). */
static void test_bitfield_key_flags(void **state) {
    (void)state;
    command_table_init();
    const struct command *bf = command_lookup("bitfield", 8);
    assert_non_null(bf);
    struct slice ro[] = { SLICE_LIT("bitfield"), SLICE_LIT("k"), SLICE_LIT("GET"), SLICE_LIT("u8"), SLICE_LIT("0"),
                          SLICE_LIT("overflow"), SLICE_LIT("sat") };
    assert_int_equal(command_key_flags(bf, 7, ro, 0), KS_RO | KS_ACCESS);
    assert_int_equal(command_key_flags(bf, 2, ro, 0), KS_RO | KS_ACCESS);
    struct slice rw[] = { SLICE_LIT("bitfield"), SLICE_LIT("k"), SLICE_LIT("get"), SLICE_LIT("u8"), SLICE_LIT("0"),
                          SLICE_LIT("incrby"), SLICE_LIT("u8"), SLICE_LIT("0"), SLICE_LIT("1") };
    assert_int_equal(command_key_flags(bf, 9, rw, 0), KS_RW | KS_ACCESS | KS_UPDATE);
    assert_int_equal(command_key_flags(bf, 4, rw, 0), KS_RW | KS_ACCESS | KS_UPDATE);   /* GET u8: cannot tell */
    const struct command *bitop = command_lookup("bitop", 5);
    struct slice op[] = { SLICE_LIT("bitop"), SLICE_LIT("and"), SLICE_LIT("d"), SLICE_LIT("a"), SLICE_LIT("b") };
    assert_int_equal(command_key_flags(bitop, 5, op, 0), KS_OW | KS_UPDATE);
    assert_int_equal(command_key_flags(bitop, 5, op, 2), KS_RO | KS_ACCESS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_setbit_getbit, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_setbit_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_setbit_limits, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_setbit_growth, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitcount, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitpos, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitcount_bitpos_model, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitop, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitop_long, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitop_multi_shard, fx_setup2, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitfield, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitfield_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitfield_model, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bitfield_key_flags, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
