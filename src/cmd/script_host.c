/*
 * The scripting host (script_host.h): runs a script with this thread's
 * engine, holding the shards it needs, and runs each redis.call() it makes
 * as the command would run alone in the script's context.
 *
 * A redis.call() is routed like any command (dispatch_route) for its
 * lookup, arity and shards, then checked as Redis's scriptCall checks it
 * (noscript, writes from a read-only script), and run with command_call:
 * with the script's database (SELECT in a script changes only the
 * script's), without the caller's connection, blocking commands not
 * blocking. Commands that need the connection or every thread's part
 * (CLIENT, INFO, ...) are refused as noscript ones are.
 *
 * Learned masks are per thread: each thread learns from the runs it makes.
 * Busy scripts are published process-wide, one slot per thread, so that any
 * thread can refuse commands with BUSY and SCRIPT KILL can reach them.
 */
#include "ringkv/acl.h"
#include "ringkv/log.h"
#include "ringkv/script_host.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/entry.h"
#include "ringkv/dispatch.h"
#include "ringkv/hashmap.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- per-thread state ---- */

struct script_thread {
    struct script_engine *engine;
    struct hashmap *learned;     /* script id -> uint64_t shard mask */
};

static struct script_thread *thread_state(struct worker *w) {
    if (!w->scripting) {
        struct script_thread *st = rk_calloc(1, sizeof *st);
        st->engine = script_engine_new();
        st->learned = hashmap_new(true);
        __atomic_store_n(&w->scripting, st, __ATOMIC_RELEASE);   /* INFO reads it from other threads */
    }
    return w->scripting;
}

struct script_engine *script_thread_engine(struct worker *w) { return thread_state(w)->engine; }

void script_thread_free(struct worker *w) {
    if (!w->scripting) return;
    script_engine_free(w->scripting->engine);
    hashmap_free(w->scripting->learned);
    free(w->scripting);
    w->scripting = NULL;
}

void script_host_memory(size_t *eval, size_t *functions) {
    *eval = *functions = 0;
    for (unsigned t = 0; t < srv.nworkers; t++) {
        const struct script_thread *st = __atomic_load_n(&srv.workers[t].scripting, __ATOMIC_ACQUIRE);
        if (!st) continue;
        *eval += script_engine_memory(st->engine);
        *functions += script_engine_functions_memory(st->engine);
    }
}

/* The learned map's key: the SHA1 for EVAL scripts; "f:" and the
 * lowercased name for functions (never 40 hex digits long). */
#define ID_MAX 160
static size_t learned_key(bool function, struct slice id, char *key) {
    if (!function) {
        memcpy(key, id.ptr, 40);
        return 40;
    }
    size_t n = id.len < ID_MAX - 2 ? id.len : ID_MAX - 2;
    key[0] = 'f';
    key[1] = ':';
    for (size_t i = 0; i < n; i++) key[2 + i] = (char)tolower((unsigned char)id.ptr[i]);
    return n + 2;
}

static uint64_t learned_mask(const struct script_thread *st, const char *key, size_t len) {
    struct slice v;
    if (!st || !hashmap_count(st->learned) || !hashmap_get(st->learned, (struct slice){ key, len }, &v)) return 0;
    uint64_t m;
    memcpy(&m, v.ptr, sizeof m);
    return m;
}

static void learn(struct script_thread *st, const char *key, size_t len, uint64_t mask) {
    uint64_t m = learned_mask(st, key, len) | mask;
    hashmap_set(st->learned, (struct slice){ key, len }, (struct slice){ (const char *)&m, sizeof m });
}

uint64_t script_route_mask(const void *scripts, const struct command *cmd, int argc, const struct slice *argv) {
    const struct script_thread *st = scripts;
    if (!st || !hashmap_count(st->learned) || argc < 2) return 0;
    char key[ID_MAX];
    size_t len;
    if (cmd->proc == cmd_fcall || cmd->proc == cmd_fcall_ro) {
        len = learned_key(true, argv[1], key);
    } else if (cmd->proc == cmd_eval || cmd->proc == cmd_eval_ro) {
        script_sha1hex(argv[1].ptr, argv[1].len, key);
        len = 40;
    } else {
        if (argv[1].len != 40) return 0;
        for (size_t i = 0; i < 40; i++) key[i] = (char)tolower((unsigned char)argv[1].ptr[i]);
        len = 40;
    }
    return learned_mask(st, key, len);
}

uint32_t script_command_flags(struct worker *w, const struct command *cmd, int argc, const struct slice *argv) {
    uint32_t flags = cmd->flags;
    if (argc < 2) return flags;
    int sflags;
    struct script_engine *e = script_thread_engine(w);
    if (cmd->proc == cmd_fcall || cmd->proc == cmd_fcall_ro) {
        if (!script_function_exists(e, argv[1], &sflags)) return flags;
    } else if (cmd->proc == cmd_eval || cmd->proc == cmd_eval_ro) {
        struct rbuf err = {0};
        bool ok = script_body_flags(argv[1], &sflags, &err);
        rbuf_free(&err);
        if (!ok) return flags;
    } else if (argv[1].len != 40 || !script_exists(e, argv[1], &sflags)) {
        return flags;
    }
    if (sflags & SCRIPT_FLAG_EVAL_COMPAT) return flags;
    flags &= ~(CMD_STALE | CMD_DENYOOM | CMD_WRITE | CMD_MAY_REPLICATE);
    if (!(sflags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES))) flags |= CMD_DENYOOM;
    if (!(sflags & SCRIPT_FLAG_NO_WRITES)) flags |= CMD_WRITE;
    if (sflags & SCRIPT_FLAG_ALLOW_STALE) flags |= CMD_STALE;
    return flags;
}

/* ---- busy scripts, process-wide ---- */

struct busy_slot {
    _Atomic bool busy;           /* past busy-reply-threshold */
    _Atomic bool kill;           /* SCRIPT KILL / FUNCTION KILL asked */
    _Atomic bool wrote;          /* called a write command: unkillable */
    _Atomic uint64_t reach;      /* the shards whose clients get BUSY */
    bool eval;                   /* EVAL (else a function); set before busy */
    long long start_ms;
    char name[ID_MAX];           /* the function's name */
    struct rbuf command;         /* the caller's command, as RESP (FUNCTION STATS) */
};
static struct busy_slot busy_slots[RK_MAX_THREADS];
static _Atomic unsigned busy_count;

const char *script_busy_refusal(uint64_t mask) {
    if (!atomic_load_explicit(&busy_count, memory_order_acquire)) return NULL;
    for (unsigned t = 0; t < srv.nworkers; t++) {
        struct busy_slot *b = &busy_slots[t];
        if (!atomic_load_explicit(&b->busy, memory_order_acquire)) continue;
        if (mask && !(mask & atomic_load_explicit(&b->reach, memory_order_relaxed))) continue;
        return b->eval ? SCRIPT_ERR_BUSY_EVAL : SCRIPT_ERR_BUSY_FUNCTION;
    }
    return NULL;
}

void script_host_kill(struct cmd_ctx *c, bool eval) {
    for (unsigned t = 0; t < srv.nworkers; t++) {
        struct busy_slot *b = &busy_slots[t];
        if (!atomic_load_explicit(&b->busy, memory_order_acquire)) continue;
        if (atomic_load_explicit(&b->wrote, memory_order_relaxed)) {
            reply_error(&c->r, SCRIPT_ERR_UNKILLABLE);
        } else if (eval != b->eval) {
            reply_error(&c->r, b->eval ? SCRIPT_ERR_BUSY_EVAL : SCRIPT_ERR_BUSY_FUNCTION);
        } else {
            atomic_store_explicit(&b->kill, true, memory_order_relaxed);
            reply_ok(&c->r);
        }
        return;
    }
    reply_error(&c->r, SCRIPT_ERR_NOTBUSY);
}

void script_busy_running(struct reply *r, long long now_ms) {
    for (unsigned t = 0; t < srv.nworkers; t++) {
        struct busy_slot *b = &busy_slots[t];
        if (!atomic_load_explicit(&b->busy, memory_order_acquire) || b->eval) continue;
        reply_map(r, 3);
        reply_bulk_cstr(r, "name");
        reply_bulk_cstr(r, b->name);
        reply_bulk_cstr(r, "command");
        rbuf_append(r->out, b->command.buf, b->command.len);
        reply_bulk_cstr(r, "duration_ms");
        reply_int(r, now_ms - b->start_ms);
        return;
    }
    reply_null(r);
}

/* ---- one run ---- */

struct script_run {
    struct cmd_ctx *c;           /* the EVAL's or FCALL's context */
    struct script_thread *st;
    const struct script_target *target;
    const char *key;             /* learned map key */
    size_t key_len;
    uint64_t held;               /* the shards this run holds */
    uint64_t taken;              /* ...of which taken while it ran (tx_take_now) */
    int db;                      /* the script's database */
    bool read_only;
    bool effects;                /* did what the journal cannot undo (publish, FLUSHALL, ...): cannot run again */
    bool can_undo;               /* may stop and run again: journal its writes */
    struct undo_rec *undo;       /* the keys it wrote, as they were before (journal) */
    size_t nundo, undo_cap;
    bool wrote;                  /* ran a write command: unkillable */
    bool oom;                    /* over maxmemory when it began (evict.h): deny-oom calls fail until it wrote */
    bool busy;                   /* published as busy */
    bool tracked;                /* its declared keys are tracked for the caller */
    bool keyless;                /* declared no keys: may reach any shard */
    long long start_ms;
    struct client *caller;       /* the connection (NULL when none) */
};

/* Who a busy run refuses: the clients of the shards it holds; everyone
 * when it declared no keys, since such a script may reach any key (and
 * Redis refuses everyone). */
static uint64_t busy_reach(const struct script_run *run) {
    return run->keyless ? ~0ull : run->held;
}

#define ERR_NOREPLICAS "NOREPLICAS Not enough good replicas to write."
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* Redis's checkGoodReplicasStatus, for a server without replicas. */
static bool replicas_ok(void) {
    return CONFIG_GET(min_replicas_to_write) == 0 || CONFIG_GET(min_replicas_max_lag) == 0;
}

#define ERR_UNDECLARED_SHARD                                                                          \
    "ERR the script used a key it did not declare, on a shard another client held, after a command "  \
    "that cannot be undone (or inside MULTI), so it could not run again: declare the key, or retry " \
    "(its next run holds that shard)"

static void reply_to_script(struct rbuf *out, uint8_t resp, const char *err) {
    struct reply r = { out, resp };
    reply_error(&r, err);
}

/* SELECT inside a script: the script's database, not the client's. */
static void script_select(struct script_run *run, const struct slice *argv, struct reply *r) {
    long long db;
    if (!str_to_ll(argv[1].ptr, argv[1].len, &db)) { reply_error(r, ERR_NOT_INT); return; }
    if (db < 0 || db >= (long long)run->c->shard->ndb) { reply_error(r, ERR_DB_INDEX); return; }
    run->db = (int)db;
    reply_ok(r);
}

static uint64_t all_shards_mask(void) {
    return srv.nworkers >= 64 ? ~0ull : (1ull << srv.nworkers) - 1;
}

/* Take the shards in missing. false: one was not free (the run must stop). */
static bool take_shards(struct script_run *run, uint64_t missing) {
    struct worker *w = run->c->worker;
    learn(run->st, run->key, run->key_len, missing);
    while (missing) {
        unsigned s = (unsigned)__builtin_ctzll(missing);
        missing &= missing - 1;
        if (!rk_conn_ops.take_shard_now(w, s)) return false;
        run->held |= 1ull << s;
        run->taken |= 1ull << s;
        if (run->busy) atomic_store_explicit(&busy_slots[w->id].reach, busy_reach(run), memory_order_relaxed);
    }
    return true;
}

/* ---- the undo journal ----
 *
 * A run that may still stop for a shard it cannot take (and run again from
 * scratch) keeps, before each write, a copy of every key the write names
 * as it was (or that it was absent), the first time the run writes it.
 * Stopping puts them back, newest first; a run that finishes drops them.
 * What a key copy cannot undo makes the run final instead: PUBLISH,
 * writes to keys the command does not name (FLUSHALL, SWAPDB, MOVE, COPY
 * to another database), and values too big to copy on every run. A run
 * that holds every shard cannot need another, so it keeps no journal. */

#define UNDO_MAX 256
#define UNDO_MAX_BYTES (16 * 1024)   /* a bigger value makes the run final instead */

/* Roughly what copying e costs: its block and, for a collection kept
 * apart from it, its object (sampled). */
static size_t entry_weight(const struct kv_entry *e) {
    size_t n = entry_alloc_size(e);
    unsigned type = entry_type(e);
    if (type != OBJ_STRING && !(e->meta & ENTRY_INLINE) && obj_ops_by_type[type]->usage)
        n += obj_ops_by_type[type]->usage(entry_obj(e), 5);
    return n;
}

struct undo_rec {
    int db;
    struct kv_entry *was;        /* NULL: absent */
    size_t klen;
    char *key;
};

static bool undo_has(const struct script_run *run, int db, struct slice key) {
    for (size_t i = 0; i < run->nundo; i++)
        if (run->undo[i].db == db && slice_eq((struct slice){ run->undo[i].key, run->undo[i].klen }, key)) return true;
    return false;
}

/* The write in sub is undoable: its named keys are journaled. */
static bool journal_write(struct script_run *run, struct cmd_ctx *sub) {
    const struct command *cmd = sub->cmd;
    if ((cmd->flags & CMD_ALLSHARDS) || cmd->proc == cmd_move || cmd->proc == cmd_swapdb) return false;
    if (cmd->proc == cmd_copy)
        for (int i = 3; i < sub->argc; i++)
            if (slice_eq_nocase(sub->argv[i], "db")) return false;
    int small[16];
    int *pos = sub->argc <= 16 ? small : rk_malloc((size_t)sub->argc * sizeof *pos);
    int n = command_key_positions(cmd, sub->argc, sub->argv, pos, sub->argc);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        struct slice key = sub->argv[pos[i]];
        if (undo_has(run, sub->db, key)) continue;
        if (run->nundo == UNDO_MAX) { ok = false; break; }
        if (run->nundo == run->undo_cap) {
            run->undo_cap = run->undo_cap ? run->undo_cap * 2 : 8;
            run->undo = rk_realloc(run->undo, run->undo_cap * sizeof *run->undo);
        }
        struct kv_entry *e = db_lookup(sub, key, LOOKUP_NOEXPIRE);   /* points rk_arena at key's shard */
        if (e && entry_weight(e) > UNDO_MAX_BYTES) { ok = false; break; }
        struct undo_rec *u = &run->undo[run->nundo++];
        u->db = sub->db;
        u->was = e ? entry_with_key(e, key, false) : NULL;
        u->klen = key.len;
        u->key = rk_malloc(key.len ? key.len : 1);
        memcpy(u->key, key.ptr, key.len);
    }
    if (pos != small) free(pos);
    rk_arena = &run->c->worker->shard.arena;
    return ok;
}

/* Put every journaled key back as it was, newest first (restore), or just
 * forget them. */
static void journal_end(struct script_run *run, bool restore) {
    struct cmd_ctx k = *run->c;
    k.multi = true;
    k.client = NULL;
    for (size_t i = run->nundo; i-- > 0;) {
        struct undo_rec *u = &run->undo[i];
        if (restore) {
            struct slice key = { u->key, u->klen };
            k.db = u->db;
            db_delete(&k, key);
            if (u->was) {
                db_lookup(&k, key, LOOKUP_NOEXPIRE);
                db_insert(&k, u->was);
                u->was = NULL;
            }
        }
        entry_free(u->was);
        free(u->key);
    }
    rk_arena = &run->c->worker->shard.arena;
    free(run->undo);
    run->undo = NULL;
    run->nundo = run->undo_cap = 0;
}

/* The caller's user may not run this (Redis's scriptVerifyACL): logged in
 * the Lua context, answered to the script. */
static bool script_acl_refuses(struct script_run *run, const struct command *cmd, const struct script_call *sc,
                               struct rbuf *out) {
    int pos;
    enum acl_verdict v = acl_check(run->caller->user, cmd, sc->argc, sc->argv, &pos);
    if (v == ACL_OK) return false;
    rk_conn_ops.acl_log(run->caller, v, ACL_CTX_LUA, acl_denied_object(v, cmd, sc->argv, pos), (struct slice){ 0 });
    command_rejected(cmd);
    struct rbuf text = { 0 };
    rbuf_printf(&text, "ERR The user executing the script %s", acl_denial_reason(v));
    reply_to_script(out, sc->resp, text.buf);
    rbuf_free(&text);
    return true;
}

/* redis.acl_check_cmd: the command as the dispatcher would resolve it,
 * checked for the caller's user. */
static int host_acl_check(void *ctx, int argc, const struct slice *argv) {
    struct script_run *run = ctx;
    const struct command *cmd = command_resolve(argc, argv);
    if (!cmd) return -1;
    if (!run->caller || acl_user_open(run->caller->user)) return 1;
    int pos;
    return acl_check(run->caller->user, cmd, argc, argv, &pos) == ACL_OK;
}

static int host_call(void *ctx, const struct script_call *sc, struct rbuf *out) {
    struct script_run *run = ctx;
    struct cmd_ctx *c = run->c;
    struct route rt;
    const struct route_env env = { c->worker->id, srv.nworkers, NULL, NULL };
    dispatch_route(&rt, sc->argc, sc->argv, true, &env, -1);
    if (rt.kind == ROUTE_UNKNOWN || rt.kind == ROUTE_UNKNOWN_SUB) {
        reply_to_script(out, sc->resp, SCRIPT_ERR_UNKNOWN_COMMAND);
        return SCRIPT_GO_ON;
    }
    const struct command *cmd = rt.cmd;
    if (rt.kind == ROUTE_ARITY) {
        command_rejected(cmd);
        reply_to_script(out, sc->resp, SCRIPT_ERR_ARITY);
        return SCRIPT_GO_ON;
    }
    /* what needs the connection (CLIENT, ...) or every thread's part
     * (INFO, ...) cannot run inside a script here */
    bool select = cmd->proc == cmd_select;
    if ((cmd->flags & (CMD_NOSCRIPT | CMD_SUBSCRIBE | CMD_TXCTL)) || ((cmd->flags & CMD_CONN) && !select) ||
        cmd->per_shard) {
        command_rejected(cmd);
        reply_to_script(out, sc->resp, SCRIPT_ERR_DENIED);
        return SCRIPT_GO_ON;
    }
    if (run->caller && RK_UNLIKELY(!acl_user_open(run->caller->user)) && script_acl_refuses(run, cmd, sc, out))
        return SCRIPT_GO_ON;
    if (run->read_only && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE))) {
        command_rejected(cmd);
        reply_to_script(out, sc->resp, SCRIPT_ERR_WRITE_FROM_RO);
        return SCRIPT_GO_ON;
    }
    struct reply r = { out, sc->resp };
    if (select) {
        size_t start = out->len;
        script_select(run, sc->argv, &r);
        command_count_call(cmd, out->len > start && out->buf[start] == '-');
        return SCRIPT_GO_ON;
    }
    uint64_t missing = rt.mask & ~run->held;
    if (RK_UNLIKELY(missing) && !take_shards(run, missing)) {
        if (!run->effects && run->can_undo) {
            journal_end(run, true);
            c->rerun_mask = run->held | learned_mask(run->st, run->key, run->key_len);
            return SCRIPT_ABORT;
        }
        reply_to_script(out, sc->resp, ERR_UNDECLARED_SHARD);
        return SCRIPT_GO_ON;
    }
    if ((cmd->flags & CMD_DENYOOM) && run->oom && !run->wrote && !(run->target->flags & SCRIPT_FLAG_ALLOW_OOM)) {
        command_rejected(cmd);
        reply_to_script(out, sc->resp, ERR_OOM);
        return SCRIPT_GO_ON;
    }
    if ((cmd->flags & CMD_WRITE) && !run->wrote && !replicas_ok()) {
        command_rejected(cmd);
        reply_to_script(out, sc->resp, ERR_NOREPLICAS);
        return SCRIPT_GO_ON;
    }
    if ((cmd->flags & CMD_MAY_REPLICATE) && !(cmd->flags & CMD_WRITE)) run->effects = true;
    if ((cmd->flags & CMD_WRITE) && !run->wrote) {
        run->wrote = true;
        if (run->busy) atomic_store_explicit(&busy_slots[c->worker->id].wrote, true, memory_order_relaxed);
    }
    struct slice argv[sc->argc];
    memcpy(argv, sc->argv, sizeof argv);
    struct cmd_ctx sub = *c;
    sub.cmd = cmd;
    sub.argc = sc->argc;
    sub.argv = argv;
    sub.r = r;
    sub.db = run->db;
    sub.multi = c->multi || run->held != (1ull << c->shard->id);
    sub.held = run->held;
    sub.client = NULL;             /* not the caller's connection */
    if (c->client) {               /* ...but its writes are the caller's (tracking's NOLOOP) */
        sub.origin_worker = c->worker->id;
        sub.origin_idx = c->client->idx;
        sub.origin_gen = c->client->gen;
    }
    sub.reader = NULL;
    if (RK_UNLIKELY(c->reader != NULL) && (cmd->flags & CMD_READONLY) && !run->tracked) {
        run->tracked = true;       /* as Redis: a read tracks the script's declared keys */
        ctx_track_keys(c);
    }
    sub.waiter = NULL;
    sub.block = false;
    sub.timed_out = true;          /* blocking commands do not block in a script */
    sub.in_script = true;
    sub.block_memo = NULL;
    sub.may_rerun = false;
    sub.rerun_mask = 0;
    rk_conn_ops.monitor_script(c->worker, NULL, run->db, sc->argc, sc->argv);
    if ((cmd->flags & CMD_WRITE) && run->can_undo && !run->effects && run->held != all_shards_mask() &&
        !journal_write(run, &sub))
        run->effects = true;
    command_call(&sub);
    rk_arena = &c->worker->shard.arena;   /* db.c pointed it at the shards the command touched */
    c->dirty += sub.dirty;
    return SCRIPT_GO_ON;
}

/* ---- busy ---- */

static void publish_busy(struct script_run *run) {
    struct worker *w = run->c->worker;
    struct busy_slot *b = &busy_slots[w->id];
    const struct script_target *t = run->target;
    b->eval = !t->function;
    b->start_ms = run->start_ms;
    size_t n = t->id.len < sizeof b->name - 1 ? t->id.len : sizeof b->name - 1;
    memcpy(b->name, t->id.ptr, n);
    b->name[n] = '\0';
    b->command.len = 0;
    struct reply r = { &b->command, 2 };
    reply_array(&r, (size_t)run->c->argc);
    for (int i = 0; i < run->c->argc; i++) reply_bulk(&r, run->c->argv[i].ptr, run->c->argv[i].len);
    atomic_store_explicit(&b->kill, false, memory_order_relaxed);
    atomic_store_explicit(&b->wrote, run->wrote, memory_order_relaxed);
    atomic_store_explicit(&b->reach, busy_reach(run), memory_order_relaxed);
    atomic_store_explicit(&b->busy, true, memory_order_release);
    atomic_fetch_add_explicit(&busy_count, 1, memory_order_release);
    rk_conn_ops.busy(true);
    run->busy = true;
    rk_log(LL_WARNING,
           "Slow script detected: still in execution after %lld milliseconds. You can try killing the script "
           "using the %s command. Script name is: %s.",
           (long long)mstime_now() - run->start_ms, b->eval ? "SCRIPT KILL" : "FUNCTION KILL",
           b->eval ? "" : b->name);
}

static void unpublish_busy(struct script_run *run) {
    struct busy_slot *b = &busy_slots[run->c->worker->id];
    atomic_store_explicit(&b->busy, false, memory_order_release);
    atomic_fetch_sub_explicit(&busy_count, 1, memory_order_release);
    rk_conn_ops.busy(false);
    rbuf_free(&b->command);
}

/* Every so many Lua instructions: past busy-reply-threshold, serve this
 * thread's other clients (BUSY) and answer other threads, and stop on
 * SCRIPT KILL or SHUTDOWN. */
static int host_tick(void *ctx) {
    struct script_run *run = ctx;
    struct worker *w = run->c->worker;
    rk_conn_ops.service_takes(w);   /* a script of another thread may spin on our answer */
    if (!run->busy) {
        long long threshold = CONFIG_GET(busy_reply_threshold);
        if ((long long)mstime_now() - run->start_ms < threshold) return SCRIPT_GO_ON;
        publish_busy(run);
    }
    rk_conn_ops.serve_while_busy(w, run->caller);
    if (atomic_load_explicit(&srv.shutdown, memory_order_relaxed)) return SCRIPT_KILL;
    return atomic_load_explicit(&busy_slots[w->id].kill, memory_order_relaxed) ? SCRIPT_KILL : SCRIPT_GO_ON;
}

static void host_log(void *ctx, int level, const char *msg, size_t len) {
    (void)ctx;
    rk_log(level, "%.*s", (int)len, msg);   /* SCRIPT_LOG_* are log.h's levels */
}

void script_host_run(struct cmd_ctx *c, const struct script_target *t, const struct slice *argv, int argc,
                     int nkeys) {
    struct worker *w = c->worker;
    if (!(t->flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_NO_WRITES)) && !replicas_ok()) {
        reply_error(&c->r, ERR_NOREPLICAS);
        return;
    }
    struct script_thread *st = thread_state(w);
    char key[ID_MAX];
    struct script_run run = {
        .c = c, .st = st, .target = t, .key = key, .db = c->db,
        .held = srv.nworkers == 1 ? ~0ull : c->held ? c->held : 1ull << c->shard->id,
        .read_only = t->ro_command || (!(t->flags & SCRIPT_FLAG_EVAL_COMPAT) && (t->flags & SCRIPT_FLAG_NO_WRITES)),
        .start_ms = c->now_ms,   /* the loop's clock: no clock read per script */
        .oom = w && w->mem_refuse,
        .caller = c->client,
        .can_undo = c->may_rerun && srv.nworkers > 1,
        .keyless = nkeys == 0,
    };
    run.key_len = learned_key(t->function, t->id, key);
    if (c->client && c->may_rerun) rk_conn_ops.monitor_script(w, c->client, c->db, c->argc, c->argv);
    const struct script_host host = { .ctx = &run, .call = host_call, .tick = host_tick, .log = host_log,
                                      .acl_check = host_acl_check };
    int res = t->function ? script_fcall(st->engine, t->id, argv, argc, nkeys, &host, &c->r)
                          : script_run(st->engine, t->id, argv, argc, nkeys, &host, &c->r);
    if (run.nundo) journal_end(&run, false);
    if (run.busy) unpublish_busy(&run);
    if (run.taken) rk_conn_ops.release_taken(w, run.taken);
    if (res == SCRIPT_RESULT_NOT_FOUND)
        reply_error(&c->r, t->function ? SCRIPT_ERR_NO_FUNCTION : SCRIPT_ERR_NOSCRIPT);
}
