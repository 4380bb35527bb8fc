/*
 * Server commands: CONFIG, INFO, TIME, LASTSAVE, SHUTDOWN, MODULE (COMMAND
 * is in cmd_command.c, MEMORY in cmd_memory.c, DEBUG in cmd_debug.c).
 *
 * INFO runs with every shard held (CMD_ALLSHARDS), so it may read
 * every shard's tables. Per-thread counters are read with relaxed loads: they
 * are only statistics.
 */
#include "ringkv/clock.h"
#include "ringkv/aof.h"
#include "ringkv/log.h"
#include "ringkv/script_host.h"
#include "ringkv/server.h"
#include "ringkv/snapshot.h"
#include "ringkv/tracking.h"
#include "ringkv/command_stats.h"
#include "ringkv/lazyfree.h"
#include "ringkv/mem.h"
#include "ringkv/config.h"
#include "ringkv/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

/* ---- CONFIG ---- */

/* CONFIG GET gathers the matches first (the reply is a map of known size);
 * a parameter matched by several arguments is reported once, under the
 * first spelling found, as in Redis (names compared without case). */
struct config_collect { struct rbuf names, values; size_t n; };

static void config_collect(void *ud, struct slice name, const char *value) {
    struct config_collect *cc = ud;
    for (size_t off = 0; off < cc->names.len; off += strlen(cc->names.buf + off) + 1)
        if (strlen(cc->names.buf + off) == name.len && strncasecmp(cc->names.buf + off, name.ptr, name.len) == 0)
            return;
    rbuf_append(&cc->names, name.ptr, name.len);
    rbuf_append(&cc->names, "", 1);
    rbuf_append(&cc->values, value, strlen(value) + 1);
    cc->n++;
}

static void config_get_cmd(struct cmd_ctx *c) {
    struct config_collect cc = { {0}, {0}, 0 };
    for (int i = 2; i < c->argc; i++) config_get(ARG(i), config_collect, &cc);
    reply_map(&c->r, cc.n);
    const char *name = cc.names.buf, *value = cc.values.buf;
    for (size_t i = 0; i < cc.n; i++) {
        reply_bulk_cstr(&c->r, name);
        reply_bulk_cstr(&c->r, value);
        name += strlen(name) + 1;
        value += strlen(value) + 1;
    }
    rbuf_free(&cc.names);
    rbuf_free(&cc.values);
}

/* enable-protected-configs local: Redis's test of a local client */
static bool client_is_local(const struct cmd_ctx *c) {
    return c->client && addr_is_loopback(client_addr(c->client));
}

static void config_set_cmd(struct cmd_ctx *c) {
    bool loading = atomic_load_explicit(&rk_persist.gate, memory_order_acquire) & PERSIST_GATE_LOADING;
    char *err = config_set(c->argv + 2, c->argc - 2,
                           (client_is_local(c) ? CONFIG_SET_LOCAL : 0) | (loading ? CONFIG_SET_LOADING : 0));
    if (err) reply_errorf(&c->r, "%s", err);
    else reply_ok(&c->r);
    free(err);
}

/* CONFIG RESETSTAT: what Redis's resetServerStats, resetCommandTableStats
 * and resetErrorTableStats zero. Gauges stay (clients, blocked clients,
 * their memory), and so do what Redis keeps: the changes since the last
 * save (each shard's dirty count), the memory peak, the slow log and the
 * latency events. Runs holding every shard. */
static void reset_stats(void) {
    for (unsigned i = 0; i < srv.nworkers; i++) {
        struct worker *w = &srv.workers[i];
        struct worker_stats gauges = w->stats;
        memset(&w->stats, 0, sizeof w->stats);
        memset(&w->iteration_cpu, 0, sizeof w->iteration_cpu);
        w->stats.connected = gauges.connected;
        w->stats.blocked_clients = gauges.blocked_clients;
        w->stats.blocked_timeout = gauges.blocked_timeout;
        w->stats.clients_mem = gauges.clients_mem;
        long long dirty = w->shard.stats.dirty;
        memset(&w->shard.stats, 0, sizeof w->shard.stats);
        w->shard.stats.dirty = dirty;
    }
    command_stats_reset();      /* commandstats, latencystats and LATENCY HISTOGRAM, errorstats, total_error_replies */
    lazyfree_reset_stats();     /* lazyfreed_objects */
    atomic_store(&rk_persist.saves, 0);   /* rdb_saves */
    aof_reset_stats();          /* aof_rewrites, aof_rewrites_consecutive_failures, aof_delayed_fsync */
}

/* CONFIG REWRITE (config_rewrite.c), with Redis's replies and log lines. */
static void config_rewrite_cmd(struct cmd_ctx *c) {
    if (!rk_config.config_file) {
        reply_error(&c->r, "ERR The server is running without a config file");
    } else if (config_rewrite(false) != 0) {
        int err = errno;
        rk_log(LL_WARNING, "CONFIG REWRITE failed: %s", strerror(err));
        reply_errorf(&c->r, "ERR Rewriting config file: %s", strerror(err));
    } else {
        rk_log(LL_WARNING, "CONFIG REWRITE executed with success.");
        reply_ok(&c->r);
    }
}

static const char *config_help[] = {
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Print this help.",
};

void cmd_config(struct cmd_ctx *c) {
    if (ARG_IS(1, "get")) config_get_cmd(c);
    else if (ARG_IS(1, "set")) config_set_cmd(c);
    else if (ARG_IS(1, "resetstat")) { reset_stats(); reply_ok(&c->r); }
    else if (ARG_IS(1, "rewrite")) config_rewrite_cmd(c);
    else reply_help(&c->r, config_help, RK_ARRAY_LEN(config_help));
}

/* ---- INFO ---- */

#define SUM_STAT(field) ({ uint64_t s_ = 0; \
    for (unsigned i_ = 0; i_ < srv.nworkers; i_++) s_ += __atomic_load_n(&srv.workers[i_].stats.field, __ATOMIC_RELAXED); s_; })
#define SUM_SHARD_STAT(field) ({ uint64_t s_ = 0; \
    for (unsigned i_ = 0; i_ < srv.nworkers; i_++) s_ += srv.workers[i_].shard.stats.field; s_; })

/* Redis's genInfoSectionDict: no argument or "default" asks for the
 * default sections, "all" and "everything" for every section (ringkv has no
 * module sections, which only "everything" adds), any other argument for
 * the section of that name, in any case. */
static bool section_wanted(struct cmd_ctx *c, const char *name, bool in_default) {
    if (c->argc == 1) return in_default;
    for (int i = 1; i < c->argc; i++) {
        if (ARG_IS(i, name)) return true;
        if (ARG_IS(i, "all") || ARG_IS(i, "everything")) return true;
        if (ARG_IS(i, "default") && in_default) return true;
    }
    return false;
}

/* A section whose lines command_stats.c writes. */
static void info_stats_section(struct cmd_ctx *c, struct rbuf *out, const char *name, const char *header,
                               bool in_default, void (*lines)(struct rbuf *)) {
    if (!section_wanted(c, name, in_default)) return;
    rbuf_append(out, header, strlen(header));
    lines(out);
    rbuf_append(out, "\r\n", 2);
}

/* ",NAME_250us=N,NAME_1ms=N,...": counts of iterations over each step. */
static void info_slow_steps(struct rbuf *out, const char *name, const uint64_t *over) {
    for (int k = 0; k < ITERATION_SLOW_STEPS; k++) {
        unsigned us = iteration_slow_us[k];
        if (us % 1000) rbuf_printf(out, ",%s_%uus=%llu", name, us, (unsigned long long)over[k]);
        else rbuf_printf(out, ",%s_%ums=%llu", name, us / 1000, (unsigned long long)over[k]);
    }
}

#define P(...) do { int n_ = snprintf(line, sizeof line, __VA_ARGS__); rbuf_append(&out, line, (size_t)n_ < sizeof line ? (size_t)n_ : sizeof line - 1); } while (0)

void cmd_info(struct cmd_ctx *c) {
    struct rbuf out = {0};
    char line[512];
    long long now = c->now_ms;
    uint64_t uptime = (uint64_t)(now - srv.start_ms) / 1000;
    if (section_wanted(c, "server", true)) {
        struct utsname u;
        uname(&u);
        P("# Server\r\nredis_version:%s\r\nringkv_version:%s\r\nredis_mode:standalone\r\nos:%s %s %s\r\n"
          "arch_bits:64\r\nmultiplexing_api:io_uring\r\nprocess_id:%d\r\nrun_id:%016llx%016llx%08x\r\n"
          "tcp_port:%lld\r\nserver_time_usec:%llu\r\nuptime_in_seconds:%llu\r\nuptime_in_days:%llu\r\n"
          "hz:%lld\r\nexecutable:ringkv\r\nconfig_file:%s\r\nio_threads_active:0\r\n\r\n",
          RK_VERSION, RINGKV_VERSION, u.sysname, u.release, u.machine, (int)getpid(),
          (unsigned long long)srv.start_ms, (unsigned long long)srv.start_us, (unsigned)getpid(),
          rk_config.port, (unsigned long long)ustime_now(), (unsigned long long)uptime,
          (unsigned long long)uptime / 86400, CONFIG_GET(hz), rk_config.config_file ? rk_config.config_file : "");
    }
    if (section_wanted(c, "clients", true)) {
        P("# Clients\r\nconnected_clients:%ld\r\ncluster_connections:0\r\nmaxclients:%lld\r\n"
          "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:%llu\r\n"
          "tracking_clients:%ld\r\nclients_in_timeout_table:%llu\r\n\r\n",
          atomic_load(&srv.connected), CONFIG_GET(maxclients),
          (unsigned long long)SUM_STAT(blocked_clients), atomic_load(&rk_tracking_clients),
          (unsigned long long)SUM_STAT(blocked_timeout));
    }
    if (section_wanted(c, "memory", true)) {
        memory_info(c, &out);
        rbuf_append(&out, "\r\n", 2);
    }
    if (section_wanted(c, "persistence", true)) persist_info(c, &out);
    if (section_wanted(c, "stats", true)) {
        P("# Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\ninstantaneous_ops_per_sec:0\r\n"
          "total_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\nrejected_connections:%llu\r\n"
          "expired_keys:%llu\r\nevicted_keys:%llu\r\nevicted_clients:%llu\r\n",
          (unsigned long long)SUM_STAT(connections_total), (unsigned long long)SUM_STAT(commands),
          (unsigned long long)SUM_STAT(net_in), (unsigned long long)SUM_STAT(net_out),
          (unsigned long long)SUM_STAT(rejected), (unsigned long long)SUM_SHARD_STAT(expired_keys),
          (unsigned long long)SUM_SHARD_STAT(evicted_keys), (unsigned long long)SUM_STAT(evicted_clients));
        P("keyspace_hits:%llu\r\nkeyspace_misses:%llu\r\npubsub_channels:0\r\npubsub_patterns:0\r\n"
          "tracking_total_keys:%ld\r\ntracking_total_items:%ld\r\ntracking_total_prefixes:%zu\r\n"
          "unexpected_error_replies:0\r\ntotal_error_replies:%llu\r\n"
          "client_query_buffer_limit_disconnections:%llu\r\nclient_output_buffer_limit_disconnections:%llu\r\n\r\n",
          (unsigned long long)SUM_SHARD_STAT(keyspace_hits),
          (unsigned long long)SUM_SHARD_STAT(keyspace_misses), atomic_load(&rk_tracking_keys),
          atomic_load(&rk_tracking_items), trk_prefix_count(c->shards[0]),   /* every shard has them all */
          (unsigned long long)stats_total_error_replies(), (unsigned long long)SUM_STAT(qbuf_limit_closed),
          (unsigned long long)SUM_STAT(obuf_limit_closed));
    }
    if (section_wanted(c, "replication", true)) {
        P("# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n\r\n");
    }
    if (section_wanted(c, "cpu", true)) {
        struct rusage self, children;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &children);
        P("# CPU\r\nused_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\nused_cpu_sys_children:%ld.%06ld\r\n"
          "used_cpu_user_children:%ld.%06ld\r\n\r\n",
          (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec, (long)self.ru_utime.tv_sec, (long)self.ru_utime.tv_usec,
          (long)children.ru_stime.tv_sec, (long)children.ru_stime.tv_usec,
          (long)children.ru_utime.tv_sec, (long)children.ru_utime.tv_usec);
    }
    if (section_wanted(c, "modules", true) || section_wanted(c, "module_list", false)) P("# Modules\r\n\r\n");
    info_stats_section(c, &out, "commandstats", "# Commandstats\r\n", false, stats_info_commandstats);
    info_stats_section(c, &out, "errorstats", "# Errorstats\r\n", true, stats_info_errorstats);
    info_stats_section(c, &out, "latencystats", "# Latencystats\r\n", false, stats_info_latencystats);
    if (section_wanted(c, "cluster", true)) P("# Cluster\r\ncluster_enabled:0\r\n\r\n");
    if (section_wanted(c, "keyspace", true)) {
        P("# Keyspace\r\n");
        for (unsigned d = 0; d < c->shards[0]->ndb; d++) {
            size_t keys = 0, expires = 0;
            for (unsigned s = 0; s < c->nshards; s++) {
                keys += table_size(&c->shards[s]->dbs[d].table);
                expires += c->shards[s]->dbs[d].expires;
            }
            if (keys) P("db%u:keys=%zu,expires=%zu,avg_ttl=0\r\n", d, keys, expires);
        }
        P("\r\n");
    }
    if (section_wanted(c, "ringkv", true)) {
        P("# ringkv\r\nthreads:%u\r\n", srv.nworkers);
        for (unsigned i = 0; i < srv.nworkers; i++) {
            struct worker_stats *s = &srv.workers[i].stats;
            uint64_t cmds = __atomic_load_n(&s->commands, __ATOMIC_RELAXED) + __atomic_load_n(&s->forwarded_in, __ATOMIC_RELAXED);
            uint64_t sys = __atomic_load_n(&s->submits, __ATOMIC_RELAXED);
            P("thread%u:cpu=%d,connections=%llu,commands=%llu,forwarded_out=%llu,forwarded_in=%llu,"
              "batches_out=%llu,batches_in=%llu,transactions=%llu,doorbells=%llu,submits=%llu,completions=%llu,"
              "syscalls_per_command=%.4f,buffer_ring_exhausted=%llu,buffer_trims=%llu,iterations=%llu,"
              "iteration_max_us=%llu,batch_wait_us=%u",
              i, srv.workers[i].cpu, (unsigned long long)s->connected, (unsigned long long)s->commands,
              (unsigned long long)s->forwarded_out, (unsigned long long)s->forwarded_in,
              (unsigned long long)s->batches_out, (unsigned long long)s->batches_in,
              (unsigned long long)s->tx_started, (unsigned long long)s->doorbells, (unsigned long long)sys,
              (unsigned long long)s->completions, cmds ? (double)sys / (double)cmds : 0.0,
              (unsigned long long)s->enobufs, (unsigned long long)s->buffer_trims,
              (unsigned long long)s->iterations, (unsigned long long)(ticks_to_ns(s->iteration_max_ticks) / 1000),
              __atomic_load_n(&srv.workers[i].batch_wait_us, __ATOMIC_RELAXED));
            info_slow_steps(&out, "iterations_over", s->iterations_over);
            const struct iteration_cpu_stats *cs = &srv.workers[i].iteration_cpu;
            P(",iterations_cpu_measured=%llu,iteration_max_cpu_us=%llu",
              (unsigned long long)cs->measured, (unsigned long long)(cs->max_ns / 1000));
            info_slow_steps(&out, "iterations_cpu_over", cs->over);
            P("\r\n");
        }
        P("\r\n");
    }
    /* Redis ends the text without the blank line of the last section */
    if (out.len >= 2) out.len -= 2;
    reply_verbatim(&c->r, out.buf ? out.buf : "", out.len, "txt");
    rbuf_free(&out);
}

/* ---- TIME, LASTSAVE, SHUTDOWN ---- */

void cmd_time(struct cmd_ctx *c) {
    uint64_t us = ustime_now();
    reply_array(&c->r, 2);
    reply_bulk_ll(&c->r, (long long)(us / 1000000));
    reply_bulk_ll(&c->r, (long long)(us % 1000000));
}

void cmd_cluster(struct cmd_ctx *c) { reply_error(&c->r, "ERR This instance has cluster support disabled"); }

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]: it holds every shard, so its save
 * is of one moment. Saving (with save points, or SAVE) that fails keeps
 * the server up unless FORCE, as Redis's prepareForShutdown. */
void cmd_shutdown(struct cmd_ctx *c) {
    bool nosave = false, save = false, force = false;
    for (int i = 1; i < c->argc; i++) {
        if (ARG_IS(i, "nosave")) nosave = true;
        else if (ARG_IS(i, "save")) save = true;
        else if (ARG_IS(i, "force")) force = true;
        else if (ARG_IS(i, "now")) continue;
        else if (ARG_IS(i, "abort") && c->argc == 2) { reply_error(&c->r, "ERR No shutdown in progress."); return; }
        else { reply_error(&c->r, ERR_SYNTAX); return; }
    }
    if (nosave && save) { reply_error(&c->r, ERR_SYNTAX); return; }
    rk_log(LL_WARNING, "User requested shutdown...");
    if (save || (!nosave && *config_save_points())) {
        rk_log(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
        if (!persist_shutdown_save(c)) {
            if (!force) {
                rk_log(LL_WARNING, "Error trying to save the DB, can't exit.");
                reply_error(&c->r, "ERR Errors trying to SHUTDOWN. Check logs.");
                return;
            }
            rk_log(LL_WARNING, "Error trying to save the DB. Exit anyway.");
        }
    }
    atomic_store(&rk_persist.shutdown_saved, true);   /* saved as asked, or not to be */
    atomic_store(&srv.shutdown, true);
    /* no reply: the connection closes as the server exits, as with Redis */
}

/* ---- MODULE ---- */

/* ringkv has no module support: MODULE answers as a Redis with no module
 * loaded whose every load fails (LOAD/LOADEX/UNLOAD first pass the
 * enable-module-command gate, CMD_PROTECTED). */
void cmd_module(struct cmd_ctx *c) {
    if (ARG_IS(1, "help")) {
        static const char *help[] = {
            "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
            "HELP",
            "    Print this help.",
        };
        reply_help(&c->r, help, RK_ARRAY_LEN(help));
    } else if (ARG_IS(1, "list")) {
        reply_array(&c->r, 0);
    } else if (ARG_IS(1, "load") || ARG_IS(1, "loadex")) {
        rk_log(LL_WARNING, "Module %.*s failed to load: ringkv does not load modules", (int)ARG(2).len, ARG(2).ptr);
        reply_error(&c->r, "ERR Error loading the extension. Please check the server logs.");
    } else {   /* unload */
        reply_error(&c->r, "ERR Error unloading module: no such module with that name");
    }
}
