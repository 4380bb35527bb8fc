/*
 * Client connections: their life, input buffering, parsing, acting on the
 * router's verdict, resuming and sends. The connection layer (this file,
 * the features below it and output.c: io_internal.h) is the only writer of
 * client state; the router (dispatch.c) only decides, and the messaging
 * layer reports back through client_replies_ready and client_tx_done.
 *
 * Input is parsed straight out of the receive buffer the kernel filled. Only
 * when a frame is cut by the end of a buffer, or the client is paused
 * (waiting on another shard, or its replies are not being read), are the
 * remaining bytes copied into c->in, and later data appended there until the
 * frame is whole.
 *
 * Replies go into c->out in request order (output.c). One send per client
 * is in flight at a time: c->out and c->sending swap when it completes.
 *
 * A client whose wait ends because of a message (its transaction finished,
 * its forwarded replies are back, the shard it waited for was released) is
 * not resumed there and then but scheduled, and resumed by the worker loop
 * (clients_resume_scheduled): so no client's parse loop ever runs inside
 * another's, or inside its own.
 *
 * A client is freed only when no io_uring operation refers to it any more
 * (pending_ops == 0), so a late completion never touches freed memory.
 */
#include "ringkv/acl.h"
#include "ringkv/log.h"
#include "ringkv/aof.h"
#include "ringkv/script_host.h"
#include "ringkv/clock.h"
#include "ringkv/command_stats.h"
#include "ringkv/server.h"
#include "ringkv/config.h"
#include "ringkv/dispatch.h"
#include "ringkv/multi.h"
#include "ringkv/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ringkv/ring.h"
#include "io_internal.h"
#include "controls.h"

#define INPUT_STOP_BYTES    (1u << 20)    /* ...and stop receiving once this much is queued */
#define KEEP_BUFFER_BYTES   (64u << 10)   /* larger idle buffers are released */
#define OUTPUT_KEEP_MIN     (1u << 10)    /* Redis's smallest reply buffer (PROTO_REPLY_MIN_BYTES) */
#define OUTPUT_KEEP_MAX     (16u << 10)   /* ...and its largest (PROTO_REPLY_CHUNK_BYTES) */
#define OUTPUT_PEAK_MS      5000          /* a send counts as "lately" this long (reply-buffer-peak-reset-time) */
#define HOLD_OUTPUT_BYTES   (64u << 10)   /* ready replies held back while others are in flight */
#define OUTPUT_IDLE_MS      1000          /* a client quiet this long keeps no output buffer (client_cron) */

struct client *client_new(struct worker *w, int fd) {
    if (w->nfree == 0) {
        uint32_t old = w->nclients_cap, cap = old ? old * 2 : 64;
        w->clients = rk_realloc(w->clients, cap * sizeof *w->clients);
        w->free_idx = rk_realloc(w->free_idx, cap * sizeof *w->free_idx);
        for (uint32_t i = old; i < cap; i++) w->clients[i] = NULL;
        for (uint32_t i = cap; i > old; i--) w->free_idx[w->nfree++] = i - 1;
        w->nclients_cap = cap;
    }
    static _Thread_local uint32_t gen_counter;
    /* Not rk_calloc_aligned: mimalloc serves an aligned request of a size
     * that is not a power of two from the next size class up (a fifth
     * more here), while its plain blocks of a multiple of 64 bytes already
     * start on a line. */
    _Static_assert(sizeof(struct client) % 64 == 0, "struct client is a whole number of cache lines");
    struct client *c = rk_calloc(1, sizeof *c);
    c->idx = w->free_idx[--w->nfree];
    c->gen = ++gen_counter & 0xFFFFFF;
    w->clients[c->idx] = c;
    c->w = w;
    c->fd = fd;
    c->resp = 2;
    c->out_keep = OUTPUT_KEEP_MIN;
    c->id = atomic_fetch_add(&srv.next_client_id, 1);
    c->user = acl_default_user();
    if (acl_default_nopass()) c->flags |= CF_AUTHED;
    c->ctime_ms = c->last_ms = w->now_ms;
    c->last_cmd = "NULL";
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_UNIX) c->flags |= CF_UNIX;
    w->stats.connections_total++;
    w->stats.connected++;
    return c;
}


static void unlink_shard_waiter(struct client *c) {
    struct worker *w = c->w;
    struct client **pp = &w->shard_waiters;
    while (*pp && *pp != c) pp = &(*pp)->next_wait;
    if (*pp) {
        *pp = c->next_wait;
        if (w->shard_waiters_tail == &c->next_wait) w->shard_waiters_tail = pp;
    }
    c->next_wait = NULL;
}

/* Client eviction chose c (output.c): logged as Redis logs it, with what
 * CLIENT LIST shows of it, as it goes. */
static void log_evicted(struct client *c) {
    struct rbuf line = { 0 };
    client_info_line(c, false, &line, c->w->now_ms);
    if (line.len && line.buf[line.len - 1] == '\n') line.len--;
    rk_log(LL_NOTICE, "Evicting client: %.*s", (int)line.len, line.buf);
    rbuf_free(&line);
}

/* Closing starts here: the socket is shut down so that outstanding
 * operations complete, and the memory goes when the last one has. */
void client_close(struct client *c) {
    if (c->flags & CF_CLOSING) return;
    if (RK_UNLIKELY(c->flags & CF_EVICTED)) log_evicted(c);
    c->flags |= CF_CLOSING;
    if (c->w->cev_limit) client_mem_update(c);
    if (RK_UNLIKELY(c->wait == WAIT_PAUSED || (c->flags & CF_MONITOR))) client_controls_gone(c);
    client_pubsub_reset(c);
    if (c->wait == WAIT_SHARD) unlink_shard_waiter(c);
    if (c->wait == WAIT_BLOCKED) client_unlink_blocked(c);
    c->wait = WAIT_NONE;
    shutdown(c->fd, SHUT_RDWR);
    if (c->flags & CF_RECV_ARMED) ring_cancel_recv(c);
    /* Freed from client_flush_sends(), never under a caller that still
     * holds the pointer (a command may close its own client). */
    client_mark_flush(c);
}

static void rare_free(struct client_rare *x) {
    if (!x) return;
    rbuf_free(&x->watched_keys);
    rbuf_free(&x->block_memo);
    free(x->name);
    free(x->lib_name);
    free(x->lib_ver);
    free(x);
}

void client_free_now(struct client *c) {
    struct worker *w = c->w;
    if (c->wait == WAIT_SHARD) unlink_shard_waiter(c);
    if (c->wait == WAIT_BLOCKED) client_unlink_blocked(c);
    if (RK_UNLIKELY(c->wait == WAIT_PAUSED || (c->flags & CF_MONITOR))) client_controls_gone(c);
    if (c->trk) client_tracking_free(c);
    client_pubsub_free(c);   /* connected at teardown: never closed */
    client_mem_forget(c);
    client_pushes_settled(c);
    ring_uninstall_file(c);   /* before its index can go to another client */
    close(c->fd);
    w->clients[c->idx] = NULL;
    w->free_idx[w->nfree++] = c->idx;
    rbuf_free(&c->in);
    rbuf_free(&c->out);
    rbuf_free(&c->sending);
    if (c->rq) {
        free(c->rq->items);
        rbuf_free(&c->rq->bytes);
        free(c->rq);
    }
    multi_queue_free(c->multi);
    rare_free(c->rare);
    free(c->addr);
    acl_user_release(c->user);
    w->stats.connected--;
    atomic_fetch_sub(&srv.connected, 1);
    free(c);
}

/* A client on the flush or resume list must not be freed under it; the
 * lists' walks free closing clients they meet. */
void client_maybe_free(struct client *c) {
    if ((c->flags & CF_CLOSING) && c->pending_ops == 0 &&
        !(c->flags & (CF_IN_FLUSH_LIST | CF_RESUME_SCHEDULED | CF_AOF_GATED)))
        client_free_now(c);
}



/* ---- input ---- */

static void protocol_error(struct client *c, const char *msg) {
    struct reply r = { &c->out, c->resp };
    reply_errorf(&r, "ERR %s", msg);
    c->flags |= CF_CLOSE_AFTER;
    client_mark_flush(c);
}

/* ---- acting on the router's verdict ---- */

/* Errors found before a command runs still take their turn in reply order. */
static void reply_route_error(struct client *c, const struct route *rt, int argc, struct slice *argv) {
    bool queued;
    struct rbuf *out = client_reply_target(c, &queued);
    size_t start = out->len;
    struct reply r = { out, c->resp };
    dispatch_reply_error(&r, rt, argc, argv);
    client_reply_written(c, out, start, queued, c->reply_off || c->reply_skip);
    c->reply_skip = 0;
}




/*
 * Blocking commands run with all their keys held and are never forwarded:
 * locally, or as a transaction that leaves the command in the client's
 * input until it is served. Each attempt has its own sequence number, so
 * waiter records of an earlier attempt are recognised as stale; the
 * command's ticket, taken here the first time, keeps its place in line
 * (blocking.c).
 */
static enum exec_result exec_blocking(struct client *c, const struct route *rt, int argc,
                                      struct slice *argv, bool drop) {
    if (c->inflight) {
        c->wait = WAIT_FORWARDS;
        return EXEC_WAIT;
    }
    c->block_seq++;
    client_take_ticket(c);
    if (rt->kind == ROUTE_LOCAL) {
        if (shard_busy(c->w)) {
            client_wait_on_shard(c);
            return EXEC_WAIT;
        }
        if (!client_run_local(c, rt->cmd, argc, argv, drop)) return EXEC_WAIT;
        client_unblocked(c);
        return EXEC_DONE;
    }
    client_start_tx(c, rt->cmd, rt->mask, argc, argv, drop, NULL);
    return EXEC_WAIT;
}

/* A command that cannot run yet runs again when the client resumes: a
 * pending CLIENT REPLY SKIP must then still apply to it. */
static void skip_when_rerun(struct client *c, bool drop) {
    if (drop && !c->reply_off) c->reply_skip = 1;
}


/* Act on a verdict. */
static enum exec_result run_routed(struct client *c, const struct route *rt, int argc, struct slice *argv,
                                   bool drop) {
    struct worker *w = c->w;
    const struct command *cmd = rt->cmd;
    if (RK_UNLIKELY((cmd->flags & (CMD_TXCTL | CMD_SUBSCRIBE)) || c->multi || (c->flags & CF_PUBSUB))) {
        if ((c->flags & CF_PUBSUB) && client_pubsub_refuses(c, cmd)) {
            if (c->multi) c->multi->aborted = true;
            client_pubsub_refusal(c, cmd);
            return EXEC_DONE;
        }
        /* RESET is not queued: it runs at once and ends the transaction, as in Redis */
        if ((cmd->flags & CMD_TXCTL) || (c->multi && cmd->proc != cmd_reset))
            return client_multi_command(c, rt, argc, argv, drop);
        if (cmd->flags & CMD_SUBSCRIBE) return client_pubsub_command(c, rt, argc, argv, drop);
    }
    if (RK_UNLIKELY(cmd->flags & CMD_BLOCKING)) return exec_blocking(c, rt, argc, argv, drop);

    switch (rt->kind) {
    case ROUTE_LOCAL:
        if (rt->keyspace && shard_busy(w)) {
            skip_when_rerun(c, drop);
            client_wait_on_shard(c);
            return EXEC_WAIT;
        }
        if (RK_UNLIKELY(!client_run_local(c, cmd, argc, argv, drop))) {   /* a script runs again */
            skip_when_rerun(c, drop);
            return EXEC_WAIT;
        }
        return EXEC_DONE;
    case ROUTE_FORWARD: {
        const struct fwd_origin o = { c->idx, c->gen, client_reserve_reply(c), (uint16_t)c->db, c->resp, drop,
                                      c->trk_reader != NULL, c->trk_epoch, (c->flags & CF_NO_TOUCH) != 0 };
        forward_command(w, rt->target, cmd, argc, argv, &o);
        /* bound the replies a client can have coming back at once */
        if (++c->inflight >= CLIENT_MAX_INFLIGHT) c->wait = WAIT_FORWARDS;
        return EXEC_DONE;
    }
    default:
        /* A transaction must not overtake this client's commands still out
         * on other shards: wait for their replies first. */
        if (c->inflight) {
            c->wait = WAIT_FORWARDS;
            skip_when_rerun(c, drop);
            return EXEC_WAIT;
        }
        client_start_tx(c, cmd, rt->mask, argc, argv, drop, NULL);
        return EXEC_DONE;
    }
}

#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* Over maxmemory with nothing left to evict (evict.h): commands that may
 * grow memory are refused, and so is an EXEC that queued one; inside MULTI
 * every command but EXEC, DISCARD, QUIT and RESET, since queueing itself
 * takes memory. As Redis's processCommand. */
static bool refused_for_memory(struct client *c, const struct command *cmd, int argc, const struct slice *argv) {
    uint32_t flags = (cmd->flags & CMD_SCRIPT) ? script_command_flags(c->w, cmd, argc, argv) : cmd->flags;
    bool denyoom = (flags & CMD_DENYOOM) || (cmd->proc == cmd_exec && c->multi && c->multi->denyoom) ||
                   (c->multi && cmd->proc != cmd_exec && cmd->proc != cmd_discard && cmd->proc != cmd_quit &&
                    cmd->proc != cmd_reset);
    if (!denyoom) return false;
    command_rejected(cmd);
    client_refuse(c, cmd, ERR_OOM);
    return true;
}

/* DEBUG and MODULE LOAD/LOADEX/UNLOAD (CMD_PROTECTED) run only as
 * enable-debug-command and enable-module-command allow ("local": from a
 * loopback address), as Redis's processCommand checks them right after the
 * arity: refused with its error, a rejected call. */
static bool refused_as_protected(struct client *c, const struct command *cmd) {
    bool debug = cmd->proc == cmd_debug;
    const char *setting = debug ? rk_config.enable_debug_command : rk_config.enable_module_command;
    if (config_allows_protected(setting, addr_is_loopback(client_addr(c)))) return false;
    char err[320];
    snprintf(err, sizeof err,
             "ERR %s command not allowed. If the %s option is set to \"local\", you can run it from a local "
             "connection, otherwise you need to set this option in the configuration file, and then restart "
             "the server.", debug ? "DEBUG" : "MODULE", debug ? "enable-debug-command" : "enable-module-command");
    command_rejected(cmd);
    client_refuse(c, cmd, err);
    return true;
}

/* Route one parsed command and act on the verdict. */
static enum exec_result execute(struct client *c, int argc, struct slice *argv, int argv1_shard) {
    struct worker *w = c->w;
    struct route rt;
    const struct route_env env = { w->id, srv.nworkers, script_route_mask, w->scripting };
    bool authed = RK_LIKELY(c->flags & CF_AUTHED) || acl_default_nopass();
    dispatch_route(&rt, argc, argv, authed, &env, argv1_shard);
    if (RK_UNLIKELY(route_is_error(&rt))) {
        if (c->multi) c->multi->aborted = true;   /* EXEC will answer EXECABORT */
        reply_route_error(c, &rt, argc, argv);
        return EXEC_DONE;
    }
    const struct command *cmd = rt.cmd;
    if (RK_UNLIKELY(cmd->flags & CMD_PROTECTED) && refused_as_protected(c, cmd)) return EXEC_DONE;
    if (RK_UNLIKELY(!acl_user_open(c->user)) && client_acl_refuses(c, cmd, argc, argv)) return EXEC_DONE;
    if (RK_UNLIKELY(w->mem_refuse) && refused_for_memory(c, cmd, argc, argv)) return EXEC_DONE;
    /* CLIENT PAUSE and MONITOR (controls.h): one relaxed load while off */
    if (RK_UNLIKELY(client_controls_on())) {
        enum ctl_verdict v = client_controls_check(c, &rt, argc, argv);
        if (v != CTL_RUN) return v == CTL_WAIT ? EXEC_WAIT : EXEC_DONE;
    }
    w->stats.commands++;
    c->last_cmd = cmd->name;
    c->last_ms = w->now_ms;
    /* CLIENT REPLY itself decides whether it answers */
    bool drop = (c->reply_off || c->reply_skip) && strcmp(cmd->name, "client|reply") != 0;
    c->reply_skip = 0;
    if (RK_LIKELY(!(c->flags & CF_TRACKING))) return run_routed(c, &rt, argc, argv, drop);
    struct block_record self;
    client_tracking_begin(c, &self);
    enum exec_result r = run_routed(c, &rt, argc, argv, drop);
    client_tracking_end(c, &rt, r);
    return r;
}

/* ---- resuming ---- */

/* Resume the scheduled clients. A woken waiter that ran may pass the key
 * on to the next waiter of this thread (w->ready): wake and run that one
 * too before the loop sleeps. */
void clients_resume_scheduled(struct worker *w) {
    do {
        for (struct client *c; (c = client_next_resume(w));) {
            client_resume(c);
            client_maybe_free(c);
        }
        if (w->ready.len) clients_wake_ready(w);
    } while (w->resume_list);
}

/* The client's cross-shard transaction ran: its reply, and for a blocking
 * command whether it was served (its bytes are consumed) or must wait. */
void client_tx_done(struct worker *w, const struct tx_request *req, const struct tx_outcome *out) {
    struct client *c = client_live(w, req->idx, req->gen);
    if (!c) return;
    if (!req->drop) rbuf_append(&c->out, out->reply.buf, out->reply.len);
    client_mark_flush(c);
    client_output_grew(c);
    if (RK_UNLIKELY(client_controls_on())) client_monitor_tx_done(c, req, out->blocked);
    if (req->exec) client_unwatch(c);
    if (req->blocking) {
        if (out->blocked) {
            client_block(c, req->cmd, out->block_timeout_ms, req->cmd_len);
            return;
        }
        client_consume_pending(c, req->cmd_len);
        client_unblocked(c);
    }
    client_schedule_resume(c);
}

/* Nobody holds the local shard any more: the clients that waited for it
 * run again, in arrival order, from the worker loop. */
void clients_shard_free(struct worker *w) {
    pubsub_shard_free(w);
    struct client *c = w->shard_waiters;
    w->shard_waiters = NULL;
    w->shard_waiters_tail = &w->shard_waiters;
    while (c) {
        struct client *next = c->next_wait;
        c->next_wait = NULL;
        client_schedule_resume(c);
        c = next;
    }
}

/*
 * Parsing in batches. Up to PARSE_BATCH commands are parsed from the buffer
 * before any runs, their keys' table groups and then entries are
 * prefetched, and then they run in order. With pipelined clients this
 * overlaps the cache misses of many lookups. Commands that turn out not to
 * run (the client must wait) are simply not consumed and get parsed again.
 */
#define PARSE_BATCH KEY_PREFETCH_MAX

struct parsed {
    uint32_t argc, argv_at;   /* argc 0: nothing to run (empty request) */
    size_t end;               /* offset just past the request */
};

/* The argument to prefetch as a key: the first, except for a script
 * (EVAL, EVALSHA, FCALL and their _RO forms) that declares keys, whose
 * first key follows numkeys. Not a lookup: names by their letters. */
static const struct slice *prefetch_key(const struct slice *argv, uint32_t argc) {
    if (argc < 4) return argc >= 2 ? &argv[1] : NULL;
    if (argv[2].len == 1 && argv[2].ptr[0] > '0' && argv[2].ptr[0] <= '9') {
        size_t n = argv[0].len;
        const char *name = argv[0].ptr;
        if ((n >= 4 && strncasecmp(name, "eval", 4) == 0) || (n >= 5 && strncasecmp(name, "fcall", 5) == 0))
            return &argv[3];
    }
    return &argv[1];
}

static inline size_t chain_end(size_t ret) {
    rk_call_chain = 0;
    return ret;
}

/* Parse and run commands from buf; returns the bytes consumed. Stops at an
 * incomplete frame, when the client must wait, or when it is closing. */
static size_t parse_loop(struct client *c, const char *buf, size_t len) {
    struct worker *w = c->w;
    struct resp_parser *p = &w->parser;
    struct parsed cmds[PARSE_BATCH];
    size_t off = 0;
    p->max_bulk_len = CONFIG_GET(proto_max_bulk_len);
    while (off < len) {
        if (c->flags & (CF_CLOSE_AFTER | CF_CLOSING | CF_CLOSE_ASAP)) return len;
        /* 1. parse a batch (one command at a time before AUTH, whose limits differ) */
        size_t n = 0, pos = off, max = (c->flags & CF_AUTHED) ? PARSE_BATCH : 1;
        enum resp_status st = RESP_OK;
        w->batch_argv.len = 0;
        while (n < max && pos < len) {
            /* An inline command may unescape its arguments into the
             * parser's scratch space, which the next parse reuses: it
             * always ends a batch. */
            bool inline_cmd = buf[pos] != '*';
            if (inline_cmd && n > 0) break;
            p->unauthenticated = !(c->flags & CF_AUTHED);
            size_t used = 0;
            st = resp_parse(p, buf + pos, len - pos, &used);
            if (st == RESP_INCOMPLETE || st == RESP_ERROR) break;
            cmds[n].argc = st == RESP_OK ? (uint32_t)p->argc : 0;
            cmds[n].argv_at = (uint32_t)(w->batch_argv.len / sizeof(struct slice));
            if (st == RESP_OK) rbuf_append(&w->batch_argv, p->argv, p->argc * sizeof(struct slice));
            pos += used;
            cmds[n++].end = pos;
            if (inline_cmd) break;
        }
        struct slice *argv = (struct slice *)w->batch_argv.buf;
        /* 2. prefetch the keys (the first argument, usually a key) that live
         * here. Keys of other shards stay out of the window: they would
         * only pull useless lines in, and the pipeline's distance ahead
         * counts local lookups. */
        struct key_prefetch kp;
        int shard1[PARSE_BATCH], window_pos[PARSE_BATCH];
        unsigned local[PARSE_BATCH], nlocal = 0;
        const int self = (int)w->id;
        for (size_t i = 0; i < n; i++) {
            const struct slice *key = cmds[i].argc >= 2 ? &argv[cmds[i].argv_at + 1] : NULL;
            shard1[i] = key && srv.nworkers > 1 ? (int)shard_of_key(key->ptr, key->len) : -1;
            /* branch-free: with keys spread over shards, "is it local" is a
             * coin toss that a branch would mispredict half the time */
            unsigned here = (shard1[i] < 0) | (shard1[i] == self);
            window_pos[i] = (int)nlocal | -(int)!here;
            local[nlocal] = (unsigned)i;
            nlocal += here;
        }
        key_prefetch_start(&kp, &w->shard.dbs[c->db].table);
        for (unsigned j = 0; j < nlocal; j++) {
            const struct parsed *cmd = &cmds[local[j]];
            key_prefetch_add(&kp, prefetch_key(&argv[cmd->argv_at], cmd->argc));
        }
        key_prefetch_begin(&kp);
        /* 3. run them, timed as one chain (command_stats.h) */
        rk_call_chain = clock_ticks();
        for (size_t i = 0; i < n; i++) {
            /* over an output limit: as Redis, run nothing more of it */
            if (c->flags & (CF_CLOSE_AFTER | CF_CLOSING | CF_CLOSE_ASAP)) return chain_end(len);
            if (window_pos[i] >= 0) key_prefetch_step(&kp, (size_t)window_pos[i]);
            c->cur_cmd_len = cmds[i].end - off;
            if (cmds[i].argc &&
                execute(c, (int)cmds[i].argc, argv + cmds[i].argv_at, shard1[i]) == EXEC_WAIT)
                return chain_end(off);
            if (RK_UNLIKELY(c->flags & CF_MON_FEED) && cmds[i].argc)
                client_monitor_feed(c, (int)cmds[i].argc, argv + cmds[i].argv_at);
            off = cmds[i].end;
            c->in_need = 0;
            if (c->wait != WAIT_NONE) return chain_end(off);
            if (RK_UNLIKELY(client_output_size(c) > OUTPUT_PAUSE_BYTES)) {
                c->wait = WAIT_OUTPUT;
                return chain_end(off);
            }
        }
        rk_call_chain = 0;
        if (st == RESP_INCOMPLETE) {
            c->in_need = p->need;
            return off;
        }
        if (st == RESP_ERROR) {
            if (!(c->flags & (CF_CLOSE_AFTER | CF_CLOSING))) protocol_error(c, p->error);
            return len;
        }
    }
    return off;
}

/* parse_loop, with c's buffers marked in use meanwhile (a script may
 * serve other clients in the middle: worker_serve_while_busy). */
static size_t parse_input(struct client *c, const char *buf, size_t len) {
    uint32_t was = c->flags & CF_PARSING;
    c->flags |= CF_PARSING;
    size_t n = parse_loop(c, buf, len);
    c->flags = (c->flags & ~CF_PARSING) | was;
    return n;
}

/* The waits that end without the client doing anything but read: its
 * output draining, or the server's own work (its forwarded commands coming
 * back, a transaction, a held shard, a script's rerun). A client that
 * pipelines faster than its commands go out to other shards spends most of
 * its time in WAIT_FORWARDS, so input held there must be bounded too, or it
 * piles up unboundedly before the output pause is ever reached. Blocked
 * and paused clients keep receiving, as in Redis, up to the query buffer
 * limit. */
static bool wait_stops_input(uint8_t wait) {
    return wait == WAIT_OUTPUT || wait == WAIT_FORWARDS || wait == WAIT_TX || wait == WAIT_SHARD ||
           wait == WAIT_RERUN;
}

static void maybe_stop_receiving(struct client *c) {
    if (wait_stops_input(c->wait) && c->in.len - c->in_off > INPUT_STOP_BYTES &&
        !(c->flags & CF_RECV_STOPPED)) {
        c->flags |= CF_RECV_STOPPED;
        c->flags &= ~CF_NEED_RECV;
        if (c->flags & CF_RECV_ARMED) ring_cancel_recv(c);
    }
}

void client_process_input(struct client *c) {
    if (c->wait != WAIT_NONE || (c->flags & CF_CLOSING)) return;
    size_t avail = c->in.len - c->in_off;
    if (avail == 0 || avail < c->in_need) return;
    size_t n = parse_input(c, c->in.buf + c->in_off, avail);
    c->in_off += n;
    if (c->in_off == c->in.len) {
        c->in.len = c->in_off = 0;
        if (c->in.cap > KEEP_BUFFER_BYTES) rbuf_free(&c->in);
    } else if (c->in_off > c->in.len / 2) {
        memmove(c->in.buf, c->in.buf + c->in_off, c->in.len - c->in_off);
        c->in.len -= c->in_off;
        c->in_off = 0;
    }
    if (RK_UNLIKELY(c->flags & CF_CLOSE_ASAP)) client_release_buffers(c);   /* evicted meanwhile: now they may go */
    if (RK_UNLIKELY(c->w->cev_limit)) client_mem_update(c);
}

/* client-query-buffer-limit, as Redis counts its query buffer: the input
 * not yet run, a frame being received included. Input held while the
 * client waits for its output to be read or for the server's own work
 * (wait_stops_input) is not counted: Redis would have run it, and the
 * receive stop bounds it. Input parsed
 * straight from a receive buffer never counts, as one buffer
 * (io-buffer-size) cannot exceed the limit's minimum. */
static bool over_query_buffer_limit(const struct client *c) {
    return !wait_stops_input(c->wait) && c->in.len - c->in_off > (size_t)CONFIG_GET(client_query_buffer_limit);
}

static void close_at_query_buffer_limit(struct client *c) {
    struct rbuf bytes = { 0 };
    size_t n = c->in.len - c->in_off;
    cat_repr(&bytes, c->in.buf + c->in_off, n < 64 ? n : 64);
    rbuf_append(&bytes, "", 1);
    rk_log(LL_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf initial bytes: %s)",
            (unsigned long long)c->id, client_addr(c), bytes.buf);
    rbuf_free(&bytes);
    c->w->stats.qbuf_limit_closed++;
    client_close(c);
}

void client_on_recv(struct client *c, const char *data, size_t len) {
    struct worker *w = c->w;
    w->stats.net_in += len;
    c->last_ms = w->now_ms;
    if (c->in.len == 0 && c->wait == WAIT_NONE) {
        size_t n = parse_input(c, data, len);
        if (n < len && !(c->flags & (CF_CLOSING | CF_CLOSE_AFTER)))
            rbuf_append(&c->in, data + n, len - n);
        if (RK_UNLIKELY(c->flags & CF_CLOSE_ASAP)) client_release_buffers(c);
        maybe_stop_receiving(c);
        /* a frame left incomplete, what the commands run kept */
        if (RK_UNLIKELY(w->cev_limit)) client_mem_update(c);
        return;
    }
    rbuf_append(&c->in, data, len);
    if (RK_UNLIKELY(over_query_buffer_limit(c))) {
        close_at_query_buffer_limit(c);
        return;
    }
    client_process_input(c);
    maybe_stop_receiving(c);
    if (RK_UNLIKELY(w->cev_limit)) client_mem_update(c);   /* the input kept, however far it was run */
}

bool client_key_hint(const struct client *c, const char *data, size_t len, struct key_hint *h) {
    /* only where client_on_recv parses the bytes as they came: otherwise
     * they continue a frame, or wait behind others */
    if (c->in.len != 0 || c->wait != WAIT_NONE || (c->flags & CF_CLOSING)) return false;
    struct slice key;
    if (!resp_peek_arg1(data, len, &key)) return false;
    if (srv.nworkers > 1 && shard_of_key(key.ptr, key.len) != c->w->id) return false;
    h->table = &c->w->shard.dbs[c->db].table;
    h->hash = table_hash(key.ptr, key.len);
    return true;
}

/* The reason a client waited is gone: run what it has buffered. */
void client_resume(struct client *c) {
    if (c->flags & CF_CLOSING) return;
    c->wait = WAIT_NONE;
    client_process_input(c);
    if (c->wait == WAIT_NONE && (c->flags & CF_RECV_STOPPED)) {
        c->flags &= ~CF_RECV_STOPPED;
        if (!(c->flags & CF_RECV_ARMED)) {
            c->flags |= CF_NEED_RECV;
            client_mark_flush(c);
        }
    }
}


/* ---- reply ordering ---- */






/* ---- output ---- */

/*
 * Sends never wait in the kernel (MSG_DONTWAIT): what the socket does not
 * take at once stays in c->sending, and a poll says when it can take more
 * (CF_SEND_POLL). So the unsent output of a client that does not read is
 * in a buffer of ours, which a client that must go gives back at once
 * (client_release_buffers: client eviction frees a victim as Redis does),
 * rather than in a send the kernel would hold until the socket drained.
 * CF_SEND_INFLIGHT covers the whole send, polls included.
 */
static void submit_send(struct client *c) {
    struct io_uring_sqe *sqe = ring_sqe(c->w);
    io_uring_prep_send(sqe, c->fd, c->sending.buf + c->sent, c->sending.len - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    ring_sqe_client_file(sqe, c);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_SEND, c->gen, c->idx));
    c->pending_ops++;
    mem_count_leaving((long long)c->sending.cap);
}

static void await_writable(struct client *c) {
    client_pushes_settled(c);   /* c is slow: what waits for it counts */
    struct io_uring_sqe *sqe = ring_sqe(c->w);
    io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
    ring_sqe_client_file(sqe, c);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_WRITABLE, c->gen, c->idx));
    c->flags |= CF_SEND_POLL;
    c->pending_ops++;
}

static void start_send(struct client *c) {
    if (c->out.len > c->out_peak) c->out_peak = c->out.len > UINT32_MAX ? UINT32_MAX : (uint32_t)c->out.len;
    struct rbuf tmp = c->sending;
    c->sending = c->out;
    c->out = tmp;
    c->out.len = 0;
    c->sent = 0;
    c->flags |= CF_SEND_INFLIGHT;
    client_pushes_settled(c);   /* counted with the send's buffer now */
    submit_send(c);
}

/* A send or a poll of c's ended (res: its result): false when c's send
 * stops there (an error, or c is going: its output is dropped). */
static bool send_goes_on(struct client *c, int res) {
    c->pending_ops--;
    if (res >= 0 && !(c->flags & (CF_CLOSING | CF_CLOSE_ASAP))) return true;
    c->flags &= ~CF_SEND_INFLIGHT;
    if (!(c->flags & (CF_CLOSING | CF_CLOSE_ASAP))) client_close(c);
    client_maybe_free(c);
    return false;
}

void client_on_writable(struct client *c, int res) {
    c->flags &= ~CF_SEND_POLL;
    if (send_goes_on(c, res)) submit_send(c);
}

/* All of c's output is sent: it keeps one buffer for its next replies if
 * that is no bigger than c's replies have lately needed (out_keep), as a
 * Redis client keeps its reply buffer, sized to its recent peak by
 * clientsCron. What Redis wrote beyond that buffer it frees as soon as it
 * is written, so the memory a burst of replies or pushes took is given
 * back before the next maxmemory check: kept, an eviction's pushes to
 * every tracking client would stay behind in their buffers, and count,
 * and make more evictions, and more pushes. */
static void keep_idle_output(struct client *c) {
    struct rbuf *keep = c->sending.cap > c->out.cap ? &c->sending : &c->out;
    rbuf_free(keep == &c->sending ? &c->out : &c->sending);
    if (keep->cap > c->out_keep) rbuf_free(keep);
    if (keep == &c->sending) {   /* replies are written to out */
        c->out = c->sending;
        c->sending = (struct rbuf){0};
    }
}

void client_on_send(struct client *c, int res) {
    mem_count_leaving(-(long long)c->sending.cap);
    if (res == -EAGAIN) res = 0;   /* the socket is full */
    if (!send_goes_on(c, res)) return;
    c->w->stats.net_out += (uint64_t)res;
    c->sent += (size_t)res;
    if (c->sent < c->sending.len) {   /* the rest once the socket takes more */
        await_writable(c);
        return;
    }
    c->flags &= ~CF_SEND_INFLIGHT;
    c->sending.len = 0;
    c->sent = 0;
    if (!c->out.len) keep_idle_output(c);
    else if (c->sending.cap > KEEP_BUFFER_BYTES) rbuf_free(&c->sending);
    if (c->w->cev_limit) client_mem_update(c);
    if (c->out.len || (c->flags & CF_CLOSE_AFTER)) client_mark_flush(c);
    if (c->wait == WAIT_OUTPUT && client_output_size(c) < OUTPUT_PAUSE_BYTES / 2) client_resume(c);
}

/* End of the loop iteration: one send per client with new output, receives
 * re-armed, clients that finished closing freed. */
/* appendfsync always: c's output waits until the AOF is durable up to
 * gate (0: nothing new to wait for, but what already waits still does). */
static bool gate_output(struct client *c, uint64_t gate) {
    if (!gate && !(c->flags & CF_AOF_GATED)) return false;
    struct client_rare *x = client_rare(c);
    if (gate > x->aof_gate) x->aof_gate = gate;
    if (!(c->flags & CF_AOF_GATED)) {
        c->flags |= CF_AOF_GATED;
        x->next_gated = c->w->aof_gated;
        c->w->aof_gated = c;
    }
    return true;
}

/* Gated clients whose gate the AOF has passed send; the rest wait on,
 * and the worker says for how far (its doorbell rings then). */
static void release_gated(struct worker *w) {
    uint64_t least = 0;
    for (struct client **at = &w->aof_gated; *at;) {
        struct client *c = *at;
        struct client_rare *x = c->rare;   /* gate_output made it */
        bool closing = c->flags & CF_CLOSING;
        if (!closing && !aof_gate_passed(x->aof_gate)) {
            if (!least || x->aof_gate < least) least = x->aof_gate;
            at = &x->next_gated;
            continue;
        }
        *at = x->next_gated;
        c->flags &= ~CF_AOF_GATED;
        x->aof_gate = 0;
        if (!closing && c->out.len && !(c->flags & CF_SEND_INFLIGHT)) start_send(c);
        client_maybe_free(c);
    }
    aof_set_waiting(w->id, least);
}

void client_flush_sends(struct worker *w) {
    struct client *c = w->flush_list;
    w->flush_list = NULL;
    uint64_t gate = RK_UNLIKELY(aof_on()) ? aof_reply_gate() : 0;
    while (c) {
        struct client *next = c->next_flush;
        if (RK_UNLIKELY(c == w->busy_caller)) {   /* its script is still writing its reply */
            c->next_flush = w->flush_list;
            w->flush_list = c;
            c = next;
            continue;
        }
        c->flags &= ~CF_IN_FLUSH_LIST;
        if (RK_UNLIKELY(c->flags & CF_CLOSE_ASAP)) client_close(c);
        if (c->flags & CF_CLOSING) client_release_buffers(c);   /* what a send in flight still holds waits for it */
        if (!(c->flags & CF_CLOSING)) {
            /* While replies are still out on other shards, hold what is
             * ready so one send carries the whole pipeline's answers
             * instead of a packet per piece. */
            bool hold = c->inflight && c->out.len < HOLD_OUTPUT_BYTES;
            if (c->out.len && !(c->flags & CF_SEND_INFLIGHT) && !hold && !gate_output(c, gate)) start_send(c);
            if ((c->flags & CF_NEED_RECV) && !(c->flags & (CF_RECV_ARMED | CF_RECV_STOPPED)))
                ring_arm_recv(c);
            if ((c->flags & CF_CLOSE_AFTER) && !(c->flags & CF_SEND_INFLIGHT) && c->out.len == 0 &&
                !client_replies_queued(c))
                client_close(c);
        }
        client_maybe_free(c);
        c = next;
    }
    if (RK_UNLIKELY(w->aof_gated != NULL)) release_gated(w);
}

/* CLIENT LIST's flags, in Redis's order; N when none applies. */
static const char *client_flag_letters(const struct client *c, char *buf) {
    char *p = buf;
    if (c->flags & CF_MONITOR) *p++ = 'O';
    if (c->flags & CF_PUBSUB) *p++ = 'P';
    if (c->multi) *p++ = 'x';
    if (c->wait == WAIT_BLOCKED || c->wait == WAIT_PAUSED) *p++ = 'b';
    uint32_t trk = c->trk ? c->trk->flags : 0;
    if (trk & TRK_ON) *p++ = 't';
    if (trk & TRK_BROKEN) *p++ = 'R';
    if (trk & TRK_BCAST) *p++ = 'B';
    if (client_watch_dirty(c)) *p++ = 'd';
    if (c->flags & CF_CLOSE_AFTER) *p++ = 'c';
    if ((c->flags & (CF_CLOSE_ASAP | CF_EVICTED)) == CF_CLOSE_ASAP) *p++ = 'A';   /* Redis frees an evicted one at once */
    if (c->flags & CF_UNIX) *p++ = 'U';
    if (c->flags & CF_NO_EVICT) *p++ = 'e';
    if (c->flags & CF_NO_TOUCH) *p++ = 'T';
    if (p == buf) *p++ = 'N';
    *p = '\0';
    return buf;
}

/* current: c is the client running this very command (CLIENT LIST/INFO).
 * Its request then counts in qbuf, as in Redis, where it is still in the
 * query buffer: parsed in place it is in no buffer of ours, and run as a
 * transaction it has already left c->in. */
void client_info_line(struct client *c, bool current, struct rbuf *out, long long now_ms) {
    char line[1024], flags[16];
    size_t qbuf = c->in.len - c->in_off;
    if (current) qbuf = c->wait == WAIT_TX ? qbuf + c->cur_cmd_len : (qbuf > c->cur_cmd_len ? qbuf : c->cur_cmd_len);
    unsigned long long subs[PS_KINDS];
    client_pubsub_counts(c, subs);
    int n = snprintf(line, sizeof line,
        "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%llu psub=%llu ssub=%llu "
        "multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu rbp=0 obl=0 oll=0 omem=%zu "
        "tot-mem=%zu events=r cmd=%s user=%s redir=%lld resp=%d lib-name=%s lib-ver=%s\n",
        (unsigned long long)c->id, client_addr(c), client_laddr(c), c->fd, client_name(c) ? client_name(c) : "",
        (now_ms - c->ctime_ms) / 1000, (now_ms - c->last_ms) / 1000, client_flag_letters(c, flags), c->db,
        subs[PS_CHANNEL], subs[PS_PATTERN], subs[PS_SHARD], qbuf, c->in.cap - c->in.len, c->in.cap, client_output_size(c),
        client_memory(c), c->last_cmd, c->user->name,
        c->trk && (c->trk->flags & TRK_ON) ? (long long)c->trk->redir_id : -1LL, c->resp,
        c->rare && c->rare->lib_name ? c->rare->lib_name : "", c->rare && c->rare->lib_ver ? c->rare->lib_ver : "");
    rbuf_append(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Once a second, as Redis's clientsCronResizeOutputBuffer: the idle
 * output buffer c may keep shrinks to its recent peak (not below Redis's
 * smallest) when that is under half of it, or doubles (up to its largest)
 * when its sends filled it; a kept buffer now too big goes at once. The
 * peak is forgotten every OUTPUT_PEAK_MS, so a client that went quiet
 * shrinks. Sizes are powers of two, as output buffers grow: a size
 * between two would free every buffer the client's sends need. A client
 * that sent nothing for OUTPUT_IDLE_MS keeps no buffer at all, as Redis
 * gives back an idle client's query buffer (clientsCronResizeQueryBuffer):
 * most of a server's connections are usually idle ones, and the buffer
 * would be a fair part of what each costs. Its next reply allocates one. */
static bool size_kept_output(struct client *c, bool forget_peak) {
    uint32_t keep = c->out_keep;
    if (keep / 2 >= OUTPUT_KEEP_MIN && c->out_peak < keep / 2)
        for (keep = OUTPUT_KEEP_MIN; keep <= c->out_peak;) keep *= 2;
    else if (keep < OUTPUT_KEEP_MAX && c->out_peak >= keep)
        keep = keep * 2 < OUTPUT_KEEP_MAX ? keep * 2 : OUTPUT_KEEP_MAX;
    c->out_keep = keep;
    if (forget_peak) c->out_peak = 0;
    bool idle = c->w->now_ms - c->last_ms >= OUTPUT_IDLE_MS;
    if (!(c->flags & CF_SEND_INFLIGHT) && c->out.len == 0 && c->out.cap && (c->out.cap > keep || idle)) {
        rbuf_free(&c->out);
        return true;
    }
    return false;
}

/* Buffers freed by one cron pass past which the thread's heap gives its
 * free pages back at once: an idle thread's allocator would otherwise keep
 * them until its next allocations, when many connections went quiet. */
#define OUTPUT_FREED_TRIM 1024

/* Every cron period: close clients idle longer than `timeout`, and publish
 * what this thread's clients cost (client eviction, while on, counts them
 * again too: what changed without passing one of its checks). Idle means
 * nothing received (any bytes, not a whole command: Redis's lastinteraction),
 * and as in Redis's clientsCronHandleTimeout subscribers and monitors never
 * time out: they wait for the server by design. */
void client_cron(struct worker *w) {
    long long timeout = CONFIG_GET(timeout);
    uint64_t bytes = 0;
    unsigned freed = 0;
    bool resize = w->now_ms - w->last_output_resize_ms >= 1000;
    bool forget_peak = resize && w->now_ms - w->last_peak_reset_ms >= OUTPUT_PEAK_MS;
    if (resize) w->last_output_resize_ms = w->now_ms;
    if (forget_peak) w->last_peak_reset_ms = w->now_ms;
    for (uint32_t i = 0; i < w->nclients_cap; i++) {
        struct client *c = w->clients[i];
        if (!c) continue;
        if (timeout > 0 && !(c->flags & (CF_CLOSING | CF_PUBSUB | CF_MONITOR)) &&
            c->wait == WAIT_NONE && c->inflight == 0 &&
            w->now_ms - c->last_ms > timeout * 1000) {
            client_close(c);
            continue;
        }
        if (resize) freed += size_kept_output(c, forget_peak);
        if (w->cev_limit) client_mem_update(c);
        bytes += client_memory(c);
    }
    __atomic_store_n(&w->stats.clients_mem, bytes, __ATOMIC_RELAXED);
    if (freed >= OUTPUT_FREED_TRIM && rk_mem_heap_counted) malloc_trim(0);
}
