/*
 * fuzz_command: random commands against a fresh keyspace, through the
 * command table and the router as the server runs them (dispatch_route,
 * then command_call locally, forwarded to the owning shard, or as a
 * cross-shard transaction with ctx.multi set), without sockets or threads.
 *
 * Input: one byte of setup (bit 0: one shard instead of two), then
 * commands. A command is a header byte and its arguments:
 *
 *   header  bits 0-3: argument count - 1; bit 4: RESP3; bit 5: the clock
 *           moves 1.5 s first (keys expire; the loop's lazy freeing and
 *           active expiry run); bit 6: database 1 instead of 0; bit 7: the
 *           client is on shard 1 (with two shards)
 *   arg     a length byte L < 0xE0 and L bytes; or L >= 0xE0, a key from
 *           a small set (so commands meet each other's keys); as the first
 *           argument, L >= 0xE0 and one more byte pick a command from the
 *           table (a container's subcommand then adds its name)
 *
 * Every argument is copied into a heap block of its own size, so a
 * handler that reads past one is caught by ASan. Commands that need a
 * connection, a thread, a disk, a script engine or global settings are
 * skipped (see allowed()), and so are valid requests for millions of
 * samples (too_costly()): not bugs, but hangs to the fuzzer. Checked
 * after each command: exactly one reply, well formed for the protocol
 * (resp_reader.h). At the end, and every 32
 * commands, the keyspace: each table's size matches its entries; its
 * expires count matches the entries with a TTL; every key lives on the
 * shard owning its slot, in that shard's arena; no key holds an empty
 * collection; DBSIZE is the tables' size; a whole SCAN returns each live
 * key (not expired) exactly once overall; every value survives DUMP's
 * encoding (written, read back, written again to the same length). Then
 * the shards are destroyed: nothing may leak (LeakSanitizer).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/arena.h"
#include "ringkv/clock.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/dispatch.h"
#include "ringkv/entry.h"
#include "ringkv/hash_obj.h"
#include "ringkv/lazyfree.h"
#include "ringkv/list_obj.h"
#include "ringkv/rdb_value.h"
#include "ringkv/set_obj.h"
#include "ringkv/slot.h"
#include "ringkv/stamp.h"
#include "ringkv/util.h"
#include "ringkv/zset_obj.h"
#include "resp_reader.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

#define NOW 1700000000000LL
#define NDB 16
#define MAX_ARGS 17
#define MAX_COMMANDS 512

static struct shard shards[2];
static struct shard *shard_ptrs[2] = { &shards[0], &shards[1] };
static unsigned nshards;
static long long now_ms;
static struct rbuf out;
static bool verbose;   /* FUZZ_VERBOSE set: print each command and its reply */

/* ---- which commands run here ---- */

static const struct command *allowed_cmds[COMMAND_IDS_MAX];
static size_t nallowed;

/* Not here: what needs a connection (CONN, transactions, subscriptions),
 * blocks, runs scripts, gathers from every thread (per_shard), is an admin
 * command (DEBUG, SAVE, SHUTDOWN, CONFIG SET, ...), or reads or changes
 * process-wide state that would make runs differ (INFO, CONFIG, the slow
 * log, pub/sub, FUNCTION/SCRIPT). */
static bool allowed(const struct command *cmd) {
    if (cmd->flags & (CMD_CONN | CMD_ADMIN | CMD_BLOCKING | CMD_SCRIPT | CMD_TXCTL | CMD_SUBSCRIBE |
                      CMD_PUBSUB | CMD_IDENTITY))
        return false;
    if (cmd->per_shard) return false;
    static const char *const denied[] = { "info", "config", "slowlog", "latency", "function", "script",
                                          "publish", "spublish", "pubsub", "debug", "shutdown", "save",
                                          "bgsave", "bgrewriteaof", "monitor", "time", "lastsave", NULL };
    size_t plen = strcspn(cmd->name, "|");
    for (const char *const *d = denied; *d; d++)
        if (strlen(*d) == plen && strncmp(cmd->name, *d, plen) == 0) return false;
    return true;
}

/* Valid but costly beyond what a run may take: a negative count of
 * SRANDMEMBER, HRANDFIELD or ZRANDMEMBER asks for that many samples (up
 * to 2^24, as in Redis: seconds under ASan, hundreds of MB of reply), which
 * the fuzzer would report as a timeout or out-of-memory. */
static bool too_costly(const struct command *cmd, int argc, const struct slice *argv) {
    if (argc < 3 || (strcmp(cmd->name, "srandmember") != 0 && strcmp(cmd->name, "hrandfield") != 0 &&
                     strcmp(cmd->name, "zrandmember") != 0))
        return false;
    long long n;
    return str_to_ll(argv[2].ptr, argv[2].len, &n) && n < -100000;
}

/* ---- input ---- */

struct in {
    const uint8_t *p;
    size_t n;
};

static bool u8(struct in *in, uint8_t *v) {
    if (!in->n) return false;
    *v = *in->p++;
    in->n--;
    return true;
}

static const char *const keys[32] = {
    "a", "b", "c", "d", "e", "f", "g", "h", "{a}1", "{a}2", "{a}3", "{b}1", "{b}2", "k1", "k2", "k3",
    "key", "list", "set", "zset", "hash", "str", "stream", "dst", "src", "x", "y", "z", "", "0", "1", "{a}",
};

/* The arguments of one command, each in its own heap block. */
struct args {
    int argc;
    struct slice argv[MAX_ARGS + 1];
};

static void args_free(struct args *a) {
    for (int i = 0; i < a->argc; i++) free((void *)a->argv[i].ptr);
    a->argc = 0;
}

static void args_push(struct args *a, const char *p, size_t len) {
    char *copy = malloc(len ? len : 1);
    CHECK(copy != NULL);
    if (len) memcpy(copy, p, len);
    a->argv[a->argc++] = (struct slice){ copy, len };
}

static bool read_args(struct in *in, int want, struct args *a) {
    a->argc = 0;
    for (int i = 0; i < want; i++) {
        uint8_t l;
        if (!u8(in, &l)) return false;
        if (l >= 0xE0 && i == 0) {
            uint8_t pick;
            if (!u8(in, &pick) || nallowed == 0) return false;
            const struct command *cmd = allowed_cmds[pick % nallowed];
            const char *bar = strchr(cmd->name, '|');
            if (bar) {
                args_push(a, cmd->name, (size_t)(bar - cmd->name));
                args_push(a, bar + 1, strlen(bar + 1));
                i++;
            } else {
                args_push(a, cmd->name, strlen(cmd->name));
            }
            continue;
        }
        if (l >= 0xE0) {
            const char *k = keys[l - 0xE0];
            args_push(a, k, strlen(k));
            continue;
        }
        if (l > in->n) return false;
        args_push(a, (const char *)in->p, l);
        in->p += l;
        in->n -= l;
    }
    return true;
}

/* ---- running a command ---- */

/* Route and run argv as the server would from a client on shard self;
 * the reply is in out. Returns false when the command is not run here. */
static bool run(struct args *a, unsigned self, int db, uint8_t resp) {
    struct route_env env = { .self = self, .nshards = nshards };
    struct route rt;
    out.len = 0;
    struct reply r = { &out, resp };
    dispatch_route(&rt, a->argc, a->argv, true, &env, -1);
    if (route_is_error(&rt)) {
        dispatch_reply_error(&r, &rt, a->argc, a->argv);
        return true;
    }
    if (!allowed(rt.cmd) || too_costly(rt.cmd, a->argc, a->argv)) return false;

    struct cmd_ctx c;
    memset(&c, 0, sizeof c);
    c.argc = a->argc;
    c.argv = a->argv;
    c.cmd = rt.cmd;
    c.r = r;
    c.db = db;
    c.shards = shard_ptrs;
    c.nshards = nshards;
    c.now_ms = now_ms;
    c.origin_worker = UINT32_MAX;
    unsigned at = self;
    if (rt.kind == ROUTE_FORWARD) at = rt.target;   /* run by the owner's thread */
    c.shard = &shards[at];
    if (rt.kind == ROUTE_TX) {
        c.multi = true;
        c.held = rt.mask | (1ull << self);
    }
    rk_arena = &shards[at].arena;
    command_call(&c);
    rk_arena = &shards[self].arena;
    CHECK(!c.block && !c.rerun_mask);
    return true;
}

static void check_reply(uint8_t resp) {
    CHECK(out.len > 0);
    if (!rr_one_value(out.buf, out.len, resp, NULL)) {
        fprintf(stderr, "malformed reply (%zu bytes): %.*s\n", out.len, (int)(out.len > 512 ? 512 : out.len), out.buf);
        abort();
    }
}

/* Run a command the harness itself needs; its reply's tokens in toks. */
static void run_own(struct rr_toks *toks, unsigned self, int db, int argc, ...) {
    struct args a = { 0 };
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) {
        const char *s = va_arg(ap, const char *);
        size_t len = va_arg(ap, size_t);
        args_push(&a, s, len);
    }
    va_end(ap);
    CHECK(run(&a, self, db, 2));
    toks->n = 0;
    CHECK(rr_one_value(out.buf, out.len, 2, toks));
    args_free(&a);
}

/* ---- the keyspace's invariants ---- */

static size_t obj_len(const struct kv_entry *e) {
    void *obj = entry_obj(e);
    switch (entry_type(e)) {
    case OBJ_LIST: return list_len(obj);
    case OBJ_SET: return set_obj_count(obj);
    case OBJ_ZSET: return zset_len(obj);
    case OBJ_HASH: return hash_len(obj);
    default: return 1;   /* strings may be empty, streams too */
    }
}

struct walk {
    unsigned shard;
    size_t entries, expires, live;
};

static void visit(void *ud, struct kv_entry *e) {
    struct walk *w = ud;
    w->entries++;
    if (entry_has_expire(e)) w->expires++;
    if (!key_is_expired(e, now_ms)) w->live++;
    struct slice key = entry_key_slice(e);
    CHECK(shard_of_key(key.ptr, key.len) == w->shard);   /* on the shard owning its slot */
    if (e->meta & ENTRY_ARENA) CHECK(arena_of(e) == &shards[w->shard].arena);
    CHECK(obj_len(e) > 0);                                /* no empty collections */
    /* Long strings (SETRANGE, SETBIT, APPEND make them up to 1MB) are
     * only copied: fuzz_rdb_load has the string codec, and copying
     * hundreds of them at every check would make runs time out. */
    if (entry_type(e) == OBJ_STRING && entry_val_len(e) > 4096) return;
    /* DUMP's encoding: written, read back, written again */
    struct rbuf a = { 0 }, b = { 0 };
    rdb_put_value(&a, e, false);
    const char *p = a.buf;
    struct rdb_value v;
    CHECK(rdb_get_value(&p, a.buf + a.len, &v));
    CHECK(p == a.buf + a.len && v.type == entry_type(e));
    struct kv_entry *e2 = rdb_value_entry(key, &v, NO_EXPIRE);
    rdb_put_value(&b, e2, false);
    CHECK(a.len == b.len);
    entry_free(e2);
    rbuf_free(&a);
    rbuf_free(&b);
}

static int cmp_slices(const void *x, const void *y) {
    const struct slice *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->ptr, b->ptr, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static void check_keyspace(unsigned self) {
    size_t live[NDB] = { 0 }, total[NDB] = { 0 };
    for (unsigned s = 0; s < nshards; s++) {
        rk_arena = &shards[s].arena;   /* e2 above, made on s's thread */
        for (unsigned d = 0; d < NDB; d++) {
            struct kv_db *db = &shards[s].dbs[d];
            struct walk w = { s, 0, 0, 0 };
            uint64_t cursor = 0;
            do cursor = table_scan(&db->table, cursor, 64, visit, &w); while (cursor);
            CHECK(w.entries == table_size(&db->table));
            CHECK(w.expires == db->expires);
            live[d] += w.live;
            total[d] += w.entries;
        }
    }
    rk_arena = &shards[self].arena;

    struct rr_toks toks = { 0 };
    for (int d = 0; d < 2; d++) {
        run_own(&toks, self, d, 1, "dbsize", (size_t)6);
        CHECK(toks.n == 1 && toks.t[0].type == ':' && toks.t[0].n == (long long)total[d]);

        /* SCAN to the end: every live key once (keys may be seen twice
         * while tables grow, not here: nothing writes meanwhile) */
        struct slice *seen = NULL;
        size_t nseen = 0, capseen = 0;
        char cursor[32] = "0";
        int rounds = 0;
        do {
            run_own(&toks, self, d, 4, "scan", (size_t)4, cursor, strlen(cursor), "count", (size_t)5, "7", (size_t)1);
            CHECK(toks.n >= 3 && toks.t[0].type == '*' && toks.t[0].n == 2 && toks.t[1].type == '$');
            CHECK(toks.t[1].len < sizeof cursor);
            memcpy(cursor, toks.t[1].p, toks.t[1].len);
            cursor[toks.t[1].len] = '\0';
            CHECK(toks.t[2].type == '*' && (size_t)toks.t[2].n == toks.n - 3);
            for (size_t i = 3; i < toks.n; i++) {
                if (nseen == capseen) {
                    capseen = capseen ? capseen * 2 : 16;
                    seen = realloc(seen, capseen * sizeof *seen);
                    CHECK(seen != NULL);
                }
                char *k = malloc(toks.t[i].len ? toks.t[i].len : 1);
                CHECK(k != NULL);
                memcpy(k, toks.t[i].p, toks.t[i].len);
                seen[nseen++] = (struct slice){ k, toks.t[i].len };
            }
            CHECK(++rounds < 100000);
        } while (strcmp(cursor, "0") != 0);
        if (nseen > 1) qsort(seen, nseen, sizeof *seen, cmp_slices);
        for (size_t i = 1; i < nseen; i++) CHECK(cmp_slices(&seen[i - 1], &seen[i]) != 0);
        CHECK(nseen == live[d]);
        for (size_t i = 0; i < nseen; i++) free((void *)seen[i].ptr);
        free(seen);
    }
    free(toks.t);
}

static void show(const struct args *a, unsigned self, uint8_t h) {
    fprintf(stderr, "[shard %u db %d resp %d%s]", self, h & 0x40 ? 1 : 0, h & 0x10 ? 3 : 2, h & 0x20 ? " +1.5s" : "");
    for (int i = 0; i < a->argc; i++) {
        fputc(' ', stderr);
        for (size_t j = 0; j < a->argv[i].len && j < 80; j++) {
            unsigned char ch = (unsigned char)a->argv[i].ptr[j];
            if (ch > 32 && ch < 127) fputc(ch, stderr);
            else fprintf(stderr, "\\x%02x", ch);
        }
        if (a->argv[i].len == 0) fputs("\"\"", stderr);
    }
    fputc('\n', stderr);
}

/* ---- the loop's housekeeping ---- */

static void tick(void) {
    now_ms += 1500;
    stamp_clock(now_ms);
    for (unsigned s = 0; s < nshards; s++) {
        rk_arena = &shards[s].arena;
        lazyfree_step(&shards[s]);
        shard_active_expire(&shards[s], now_ms, 200);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    config_set_defaults();
    char *err = NULL;
    /* no save points: FLUSHALL would save; no AOF */
    if (config_load_text("save \"\"\nappendonly no\n", &err) != 0) {
        fprintf(stderr, "config: %s\n", err ? err : "?");
        abort();
    }
    /* strings (SETRANGE, SETBIT, APPEND) and LCS's table stay small */
    rk_config_proto_max_bulk_len = 1024 * 1024;
    clock_ticks_init();
    command_table_init();
    for (size_t i = 0; i < command_count(); i++) {
        const struct command *cmd = command_at(i);
        if (cmd->subcommands) {
            for (const struct command *s = cmd->subcommands; s->name; s++)
                if (allowed(s) && nallowed < COMMAND_IDS_MAX) allowed_cmds[nallowed++] = s;
        } else if (allowed(cmd) && nallowed < COMMAND_IDS_MAX) {
            allowed_cmds[nallowed++] = cmd;
        }
    }
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (getenv("FUZZ_LIST_COMMANDS"))
        for (size_t i = 0; i < nallowed; i++) printf("%s\n", allowed_cmds[i]->name);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    struct in in = { data + 1, size - 1 };
    nshards = data[0] & 1 ? 1 : 2;
    slots_assign(nshards);
    for (unsigned s = 0; s < nshards; s++) shard_init(&shards[s], s, NDB);
    now_ms = NOW;
    stamp_clock(now_ms);
    rk_random_seed(0x9e3779b97f4a7c15ULL);
    rk_arena = &shards[0].arena;

    struct args a = { 0 };
    unsigned self = 0;
    for (int n = 0; n < MAX_COMMANDS; n++) {
        uint8_t h;
        if (!u8(&in, &h)) break;
        if (h & 0x20) tick();
        self = (h & 0x80) && nshards == 2 ? 1 : 0;
        rk_arena = &shards[self].arena;
        bool whole = read_args(&in, 1 + (h & 15), &a);
        if (whole && verbose) show(&a, self, h);
        if (whole && run(&a, self, h & 0x40 ? 1 : 0, h & 0x10 ? 3 : 2)) {
            if (verbose) fprintf(stderr, "  -> %.*s\n", (int)(out.len > 300 ? 300 : out.len), out.buf);
            check_reply(h & 0x10 ? 3 : 2);
        } else if (whole && verbose) {
            fprintf(stderr, "  (not run here)\n");
        }
        args_free(&a);
        if (!whole) break;
        if (n % 32 == 31) check_keyspace(self);
    }
    check_keyspace(self);

    rk_arena = NULL;
    for (unsigned s = 0; s < nshards; s++) shard_destroy(&shards[s]);
    if (out.cap > (1u << 20)) rbuf_free(&out);
    return 0;
}
