/*
 * Persistence commands: SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, SHUTDOWN's
 * save, DEBUG RELOAD, FLUSHALL's save, INFO persistence, the load at
 * startup (the RDB file, or the AOF's records replayed here) and the
 * cron's switch of appendonly. The files and snapshots themselves are
 * persist/'s (snapshot.h, rdb_file.h, rdb_load.h, aof.h); this layer adds
 * what they must not know of: FUNCTION libraries, the RSS for the header,
 * running commands, and the replies.
 *
 * SAVE, BGSAVE, SHUTDOWN, DEBUG and FLUSHALL run holding every shard
 * (CMD_ALLSHARDS), which is what makes a save one moment of the whole
 * keyspace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/log.h"
#include "ringkv/aof.h"
#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/rdb_file.h"
#include "ringkv/rdb_load.h"
#include "ringkv/script.h"
#include "ringkv/script_host.h"
#include "ringkv/server.h"
#include "ringkv/snapshot.h"
#include "ringkv/util.h"

static void put_function(void *arg, struct slice name, struct slice code) {
    (void)name;
    rdb_put_function(arg, code);
}

/* The magic, aux fields and FUNCTION libraries every save starts with. */
static void save_header(struct rbuf *b, long long now_ms) {
    rdb_put_header(b, now_ms, memory_rss_bytes());
    script_function_foreach(put_function, b);
}

static void put_function_load(void *arg, struct slice name, struct slice code) {
    (void)name;
    const struct slice argv[3] = { { "FUNCTION", 8 }, { "LOAD", 4 }, code };
    aof_put_command(arg, 3, argv);
}

/* What an AOF base of commands (aof-use-rdb-preamble no) starts with. */
static void aof_base_header(struct rbuf *b) {
    aof_put_timestamp(b);
    script_function_foreach(put_function_load, b);
}

/* SAVE's work, every shard the caller's; logged as Redis logs it. */
static bool save_shards(struct shard **shards, unsigned n, long long now_ms, struct rbuf *err) {
    struct rbuf header = { 0 };
    save_header(&header, now_ms);
    int rc = rdb_save_now(shards, n, &header, now_ms, err);
    rbuf_free(&header);
    if (rc != 0) rk_log(LL_WARNING, "Failed saving the DB: %.*s", (int)err->len, err->buf);
    else rk_log(LL_NOTICE, "DB saved on disk");
    return rc == 0;
}

static bool save_now(struct cmd_ctx *c, struct rbuf *err) {
    return save_shards(c->shards, c->nshards, c->now_ms, err);
}

/* SAVE */
void cmd_save(struct cmd_ctx *c) {
    if (atomic_load(&rk_persist.bgsave_in_progress)) {
        reply_error(&c->r, "ERR Background save already in progress");
        return;
    }
    struct rbuf err = { 0 };
    if (save_now(c, &err)) reply_ok(&c->r);
    else reply_error(&c->r, "ERR");
    rbuf_free(&err);
}

/* BGSAVE [SCHEDULE] */
void cmd_bgsave(struct cmd_ctx *c) {
    bool schedule = c->argc == 2 && slice_eq_nocase(c->argv[1], "schedule");
    if (c->argc > 1 && !schedule) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    if (aof_rewrite_in_progress()) {
        if (schedule) {
            atomic_store(&rk_persist.bgsave_scheduled, true);
            reply_simple(&c->r, "Background saving scheduled");
        } else {
            reply_error(&c->r, "ERR An AOF log rewriting in progress: can't BGSAVE right now. Use BGSAVE SCHEDULE in "
                               "order to schedule a BGSAVE whenever possible.");
        }
        return;
    }
    if (atomic_load(&rk_persist.bgsave_in_progress)) {
        reply_error(&c->r, "ERR Background save already in progress");
        return;
    }
    struct rbuf header = { 0 }, err = { 0 };
    save_header(&header, c->now_ms);
    if (snapshot_begin(c->shards, c->nshards, &header, c->now_ms, NULL, &err) == 0) {
        reply_simple(&c->r, "Background saving started");
    } else {
        snapshot_failed_to_start(c->now_ms);
        rk_log(LL_WARNING, "Can't save in background: %.*s", (int)err.len, err.buf);
        reply_errorf(&c->r, "ERR %.*s", (int)err.len, err.buf);
    }
    rbuf_free(&header);
    rbuf_free(&err);
}

/* BGREWRITEAOF: a new base from a snapshot of this moment, records from
 * now on into a new incremental file (aof.h). After a BGSAVE, as Redis
 * schedules it. */
void cmd_bgrewriteaof(struct cmd_ctx *c) {
    if (aof_rewrite_in_progress()) {
        reply_error(&c->r, "ERR Background append only file rewriting already in progress");
        return;
    }
    if (atomic_load(&rk_persist.bgsave_in_progress)) {
        aof_rewrite_schedule();
        reply_simple(&c->r, "Background append only file rewriting scheduled");
        return;
    }
    if (!aof_on()) {   /* Redis rewrites anyway; ringkv's files exist only while the AOF is on */
        reply_simple(&c->r, "Background append only file rewriting started");
        return;
    }
    struct rbuf header = { 0 }, err = { 0 };
    bool rdb = CONFIG_GET(aof_use_rdb_preamble);
    if (rdb) save_header(&header, c->now_ms);
    else aof_base_header(&header);
    if (aof_rewrite_begin(c->shards, c->nshards, &header, rdb, c->now_ms, &err) == 0) {
        reply_simple(&c->r, "Background append only file rewriting started");
    } else {
        rk_log(LL_WARNING, "Can't rewrite append only file in background: %.*s", (int)err.len, err.buf);
        reply_error(&c->r, "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
                           "information.");
    }
    rbuf_free(&header);
    rbuf_free(&err);
}

/* The cron's way to act on appendonly, every shard held: turned on, the
 * log opens and its base is written from this moment; turned off, it
 * closes. A rewrite due (auto-aof-rewrite-*, or scheduled) starts. */
static void cmd_aof_switch(struct cmd_ctx *c) {
    struct rbuf err = { 0 };
    bool want = CONFIG_GET(appendonly), rewrite = aof_rewrite_due();
    if (want && !aof_on()) {
        if (aof_open(&err) != 0) rk_log(LL_WARNING, "Can't open the append only file: %.*s", (int)err.len, err.buf);
        else rewrite = true;
    } else if (!want && aof_on()) {
        aof_close();
        rewrite = false;
    }
    rbuf_free(&err);
    if (rewrite && aof_on() && !aof_rewrite_in_progress() && !atomic_load(&rk_persist.bgsave_in_progress))
        cmd_bgrewriteaof(c);
}

const struct command aof_switch_command = {
    .name = "bgrewriteaof", .arity = 1, .flags = CMD_ALLSHARDS, .proc = cmd_aof_switch,
};

/* LASTSAVE */
void cmd_lastsave(struct cmd_ctx *c) { reply_int(&c->r, atomic_load(&rk_persist.lastsave)); }

int persist_save_at_exit(struct shard **shards, unsigned n) {
    rk_log(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
    struct rbuf err = { 0 };
    bool ok = save_shards(shards, n, (long long)mstime_now(), &err);
    rbuf_free(&err);
    return ok ? 0 : -1;
}

bool persist_shutdown_save(struct cmd_ctx *c) {
    if (atomic_load(&rk_persist.bgsave_in_progress)) snapshot_abort(c->shards, c->nshards);
    struct rbuf err = { 0 };
    bool ok = save_now(c, &err);
    rbuf_free(&err);
    return ok;
}

/* FLUSHALL, every key gone: a running BGSAVE stops and, with save points,
 * the empty dataset is saved at once, as Redis does. */
void persist_after_flushall(struct cmd_ctx *c) {
    snapshot_abort(c->shards, c->nshards);
    /* not while the AOF's FLUSHALL records replay */
    if (!*config_save_points() || (atomic_load(&rk_persist.gate) & PERSIST_GATE_LOADING)) return;
    struct rbuf err = { 0 };
    if (save_now(c, &err))   /* this command's own changes are part of the save */
        atomic_store(&rk_persist.dirty_at_save, persist_total_dirty(c->shards, c->nshards) + c->dirty);
    rbuf_free(&err);
}

/* ---- loading */

struct function_batch {
    struct rbuf codes;        /* the codes, back to back */
    struct rbuf lens;         /* size_t per code */
};

static bool collect_function(void *ud, struct slice code, struct rbuf *err) {
    (void)err;
    struct function_batch *fb = ud;
    rbuf_append(&fb->codes, code.ptr, code.len);
    rbuf_append(&fb->lens, &code.len, sizeof code.len);
    return true;
}

/* The libraries found, loaded on engine e with policy. */
static bool restore_functions(struct script_engine *e, struct function_batch *fb,
                              enum script_restore_policy policy, struct rbuf *err) {
    size_t n = fb->lens.len / sizeof(size_t), off = 0;
    if (!n) return true;
    struct slice *codes = rk_malloc(n * sizeof *codes);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        memcpy(&len, fb->lens.buf + i * sizeof len, sizeof len);
        codes[i] = (struct slice){ fb->codes.buf + off, len };
        off += len;
    }
    bool ok = script_function_restore(e, codes, n, policy, err);
    free(codes);
    return ok;
}

int persist_load(struct shard **shards, unsigned n, struct script_engine *e, bool merge, long long now_ms,
                 struct rbuf *err) {
    struct function_batch fb = { { 0 }, { 0 } };
    struct rdb_function_sink sink = { &fb, collect_function };
    size_t keys = 0;
    long long t0 = (long long)mstime_now();
    int rc = rdb_load_file(shards, n, rk_config.dbfilename, merge, &sink, now_ms, &keys, err);
    if (rc == 0 && !restore_functions(e, &fb, merge ? SCRIPT_RESTORE_REPLACE : SCRIPT_RESTORE_APPEND, err))
        rc = -1;
    if (rc == 0) {
        rk_log(LL_NOTICE, "Done loading RDB, keys loaded: %zu.", keys);
        rk_log(LL_NOTICE, "DB loaded from disk: %.3f seconds", (double)((long long)mstime_now() - t0) / 1000.0);
    }
    rbuf_free(&fb.codes);
    rbuf_free(&fb.lens);
    return rc;
}

/* Replaying the AOF's commands at startup, on the main thread, while
 * every worker only answers -LOADING: each runs on the shards directly, as
 * a transaction's coordinator would, with a worker of its own (scripts'
 * FUNCTION records need an engine). The clock stands at 0, so nothing
 * expires while loading, as in Redis: records carry absolute times, and
 * keys whose time has passed go once the server runs. */
struct replay {
    struct worker *w;
    struct shard **shards;
    unsigned n;
    int db;
    struct rbuf out;
    size_t commands;
};

static int replay_exec(void *ud, int argc, struct slice *argv, struct rbuf *err) {
    struct replay *r = ud;
    char msg[256];
    if (slice_eq_nocase(argv[0], "select")) {
        long long db;
        if (argc != 2 || !str_to_ll(argv[1].ptr, argv[1].len, &db) || db < 0 || db >= (long long)r->shards[0]->ndb) {
            rbuf_append(err, "Bad SELECT in the append only file", 34);
            return -1;
        }
        r->db = (int)db;
        return 0;
    }
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    if (!cmd && argv[0].len < 64) {
        /* the records ringkv writes itself (DEL of an expired key, SET ...
         * PXAT, MULTI) name commands by their own names, renamed or not */
        char name[64];
        memcpy(name, argv[0].ptr, argv[0].len);
        name[argv[0].len] = '\0';
        cmd = command_original(name);
    }
    if (cmd && cmd->subcommands && argc >= 2) cmd = command_lookup_sub(cmd, argv[1]);
    if (!cmd || !cmd->proc) {
        int k = snprintf(msg, sizeof msg, "Unknown command '%.*s' reading the append only file",
                         (int)(argv[0].len > 64 ? 64 : argv[0].len), argv[0].ptr);
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity) {
        int k = snprintf(msg, sizeof msg, "Wrong number of arguments for '%s' reading the append only file", cmd->name);
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    struct cmd_ctx ctx;
    ctx_init(&ctx, r->w, cmd, argc, argv, r->db, 2, &r->out);
    ctx.multi = true;
    ctx.shard = r->shards[0];
    ctx.shards = r->shards;
    ctx.nshards = r->n;
    ctx.now_ms = 0;
    ctx.timed_out = true;   /* a blocking command never waits */
    cmd->proc(&ctx);
    r->out.len = 0;
    r->commands++;
    return 0;
}

int persist_load_aof(struct shard **shards, unsigned n, struct script_engine *e, struct rbuf *err) {
    struct function_batch fb = { { 0 }, { 0 } };
    struct rdb_function_sink sink = { &fb, collect_function };
    struct replay r = { .w = rk_calloc(1, sizeof *r.w), .shards = shards, .n = n };
    struct aof_replay how = { &r, replay_exec, &sink };
    size_t keys = 0;
    long long t0 = (long long)mstime_now();
    int rc = aof_load(shards, n, &how, &keys, err);
    /* the base's libraries, then those the records loaded on r's engine */
    if (rc == 0 && !restore_functions(e, &fb, SCRIPT_RESTORE_APPEND, err)) rc = -1;
    if (rc == 0) {
        rk_log(LL_NOTICE, "Done loading the append only file, keys loaded: %zu, commands replayed: %zu.", keys,
               r.commands);
        rk_log(LL_NOTICE, "DB loaded from append only file: %.3f seconds",
               (double)((long long)mstime_now() - t0) / 1000.0);
    }
    script_thread_free(r.w);
    free(r.w);
    rbuf_free(&r.out);
    rbuf_free(&fb.codes);
    rbuf_free(&fb.lens);
    return rc;
}

/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] */
void persist_debug_reload(struct cmd_ctx *c) {
    bool merge = false, flush = true, save = true;
    for (int i = 2; i < c->argc; i++) {
        if (slice_eq_nocase(c->argv[i], "merge")) merge = true;
        else if (slice_eq_nocase(c->argv[i], "noflush")) flush = false;
        else if (slice_eq_nocase(c->argv[i], "nosave")) save = false;
        else {
            reply_error(&c->r, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    struct rbuf err = { 0 };
    if (save && !save_now(c, &err)) {
        reply_error(&c->r, "ERR");
        rbuf_free(&err);
        return;
    }
    if (flush) {
        snapshot_abort(c->shards, c->nshards);
        for (unsigned i = 0; i < c->nshards; i++)
            for (unsigned d = 0; d < c->shards[i]->ndb; d++) db_empty(&c->shards[i]->dbs[d]);
        script_function_flush();
    }
    int rc = persist_load(c->shards, c->nshards, script_thread_engine(c->worker), merge, c->now_ms, &err);
    if (rc != 0) {
        rk_log(LL_WARNING, "DEBUG RELOAD: %.*s", (int)err.len, err.buf);
        reply_error(&c->r, "ERR Error trying to load the RDB dump");
    } else {
        reply_ok(&c->r);
    }
    rbuf_free(&err);
}

/* ---- INFO persistence */

void persist_info(struct cmd_ctx *c, struct rbuf *out) {
    long long now_ms = c->now_ms;
    bool in_progress = atomic_load(&rk_persist.bgsave_in_progress);
    long long changes = persist_total_dirty(c->shards, c->nshards) - atomic_load(&rk_persist.dirty_at_save);
    unsigned gate = atomic_load(&rk_persist.gate);
    char buf[1024];
    int n = snprintf(buf, sizeof buf,
                     "# Persistence\r\nloading:%d\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\n"
                     "current_cow_size:0\r\ncurrent_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\n"
                     "current_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\n"
                     "rdb_changes_since_last_save:%lld\r\nrdb_bgsave_in_progress:%d\r\n"
                     "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\n"
                     "rdb_last_bgsave_time_sec:%lld\r\nrdb_current_bgsave_time_sec:%lld\r\n"
                     "rdb_saves:%lld\r\nrdb_last_cow_size:%lld\r\nrdb_last_load_keys_expired:0\r\n"
                     "rdb_last_load_keys_loaded:0\r\n",
                     (gate & PERSIST_GATE_LOADING) ? 1 : 0, changes, in_progress ? 1 : 0,
                     atomic_load(&rk_persist.lastsave), atomic_load(&rk_persist.last_bgsave_ok) ? "ok" : "err",
                     atomic_load(&rk_persist.last_bgsave_secs),
                     in_progress ? (now_ms - atomic_load(&rk_persist.bgsave_start_ms)) / 1000 : -1LL,
                     atomic_load(&rk_persist.saves), atomic_load(&rk_persist.last_cow_bytes));
    rbuf_append(out, buf, (size_t)n);
    aof_info(out, now_ms);
    static const char module[] = "module_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n";
    rbuf_append(out, module, sizeof module - 1);
    aof_info_sizes(out);
    rbuf_append(out, "\r\n", 2);
}
