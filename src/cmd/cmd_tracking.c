/*
 * Client-side caching, the command side: CLIENT TRACKING, CACHING,
 * GETREDIR and TRACKINGINFO, and the two places commands meet the
 * tracking tables (kv/tracking.c):
 *
 *   - ctx_track_read: after a read-only command ran for a client whose
 *     reads are tracked (ctx.reader, set by whoever built the context: the
 *     connection's thread, a forwarded batch, a transaction), each key it
 *     read is recorded in the key's own shard;
 *   - ctx_track_wrote (from ctx_wrote): a write invalidates its keys,
 *     FLUSHDB/FLUSHALL every key (a null to every tracking client).
 *
 * CLIENT TRACKING runs as a cross-shard transaction over every shard
 * (CMD_ALLSHARDS): cmd_client_tracking_gather, on each thread, looks for
 * the REDIRECT client among that thread's clients; cmd_client_tracking
 * then has every shard held, so it registers or drops BCAST prefixes in
 * every shard's replica at once: no write anywhere can come between the
 * OK and the registration. The client's own state changes through the
 * connection layer (rk_conn_ops).
 */
#include "ringkv/server.h"
#include "ringkv/tracking.h"
#include "ringkv/util.h"

#include <stdlib.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

static struct shard *key_shard(struct cmd_ctx *c, struct slice key) {
    if (!c->multi) return c->shard;
    return c->shards[shard_of_key(key.ptr, key.len)];
}

void ctx_track_read(struct cmd_ctx *c) {
    /* a script's reads are its commands' (the scripting host) */
    if (!(c->cmd->flags & CMD_READONLY) || (c->cmd->flags & CMD_SCRIPT) || c->block) return;
    ctx_track_keys(c);
}

void ctx_track_keys(struct cmd_ctx *c) {
    int small[16];
    int *pos = c->argc <= 16 ? small : rk_malloc((size_t)c->argc * sizeof *pos);
    int n = command_key_positions(c->cmd, c->argc, c->argv, pos, c->argc);
    for (int i = 0; i < n; i++) trk_record(key_shard(c, c->argv[pos[i]]), c->argv[pos[i]], c->reader);
    if (pos != small) free(pos);
}

static struct trk_writer writer_of(const struct cmd_ctx *c) {
    if (c->client) return (struct trk_writer){ c->client->w->id, c->client->idx, c->client->gen };
    if (c->origin_worker != TRK_NOBODY) return (struct trk_writer){ c->origin_worker, c->origin_idx, c->origin_gen };
    return trk_nobody;
}

void ctx_track_wrote(struct cmd_ctx *c) {
    const struct command *cmd = c->cmd;
    struct trk_writer w = writer_of(c);
    if (cmd->proc == cmd_flushall || cmd->proc == cmd_flushdb) {
        /* as Redis: tracking does not tell databases apart, so either
         * flush forgets every tracked key and every tracking client is
         * told that all its keys are gone. Both run with every shard held. */
        for (unsigned i = 0; i < c->nshards; i++) trk_forget_all(c->shards[i]);
        for (unsigned t = 0; t < c->nshards; t++) {
            struct trk_entry e = { TRK_MSG_FLUSH, 0, 0, 0, w, 0, TRK_NULL_LEN };
            trk_emit(t, &e, (struct slice){0}, (struct slice){0});
        }
        return;
    }
    if (cmd->proc == cmd_swapdb) return;   /* Redis 7.0 tells tracking clients nothing either */
    int small[16];
    int *pos = c->argc <= 16 ? small : rk_malloc((size_t)c->argc * sizeof *pos);
    int n = command_key_positions(cmd, c->argc, c->argv, pos, c->argc);
    for (int i = 0; i < n; i++) trk_invalidate(key_shard(c, c->argv[pos[i]]), c->argv[pos[i]], &w, true);
    if (pos != small) free(pos);
}

/* ---- CLIENT TRACKING ---- */

/* The REDIRECT argument, if any. */
static bool redirect_arg(struct cmd_ctx *c, long long *id) {
    bool found = false;
    for (int j = 3; j + 1 < c->argc; j++) {
        if (ARG_IS(j, "redirect")) {
            found = str_to_ll(ARG(j + 1).ptr, ARG(j + 1).len, id);
            j++;
        } else if (ARG_IS(j, "prefix")) {
            j++;
        }
    }
    return found;
}

static bool find_local_client(struct worker *w, uint64_t id, struct block_record *out) {
    for (uint32_t i = 0; i < w->nclients_cap; i++) {
        struct client *cl = w->clients[i];
        if (cl && !(cl->flags & CF_CLOSING) && cl->id == id) {
            *out = (struct block_record){ w->id, cl->idx, cl->gen, 1 };
            return true;
        }
    }
    return false;
}

/* Runs on every thread: is the REDIRECT client one of ours? */
void cmd_client_tracking_gather(struct cmd_ctx *c) {
    long long id;
    struct block_record r;
    if (redirect_arg(c, &id) && id > 0 && find_local_client(c->worker, (uint64_t)id, &r))
        rbuf_append(c->r.out, &r, sizeof r);
}

/* Where client id lives: from the per-thread parts, or (inside EXEC, which
 * gathers nothing) among this thread's clients. */
static bool find_client(struct cmd_ctx *c, uint64_t id, struct block_record *out) {
    if (!c->parts) return find_local_client(c->worker, id, out);
    for (unsigned i = 0; i < c->nshards; i++)
        if (c->parts[i].len == sizeof *out) {
            memcpy(out, c->parts[i].buf, sizeof *out);
            return true;
        }
    return false;
}

static bool prefixes_overlap(struct slice a, struct slice b) {
    size_t n = a.len < b.len ? a.len : b.len;
    return memcmp(a.ptr, b.ptr, n) == 0;
}

/* Redis's checkPrefixCollisionsOrReply: no new prefix may overlap one the
 * client has, or another new one. */
static bool prefixes_ok_or_reply(struct cmd_ctx *c, const struct client_tracking *t, const struct slice *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (size_t off = 0; t && off < t->prefixes.len;) {
            uint32_t len;
            memcpy(&len, t->prefixes.buf + off, sizeof len);
            struct slice old = { t->prefixes.buf + off + sizeof len, len };
            off += sizeof len + len;
            if (prefixes_overlap(old, p[i])) {
                reply_errorf(&c->r, "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. "
                             "Prefixes for a single client must not overlap.",
                             (int)p[i].len, p[i].ptr, (int)old.len, old.ptr);
                return false;
            }
        }
        for (size_t j = i + 1; j < n; j++) {
            if (prefixes_overlap(p[i], p[j])) {
                reply_errorf(&c->r, "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. "
                             "Prefixes for a single client must not overlap.",
                             (int)p[i].len, p[i].ptr, (int)p[j].len, p[j].ptr);
                return false;
            }
        }
    }
    return true;
}

static void tracking(struct cmd_ctx *c, struct client *cl) {
    const struct client_tracking *t = cl->trk;
    uint32_t cur = t ? t->flags : 0;
    long long redir = 0;
    struct block_record where = {0};
    uint32_t opts = 0;
    struct slice *prefix = NULL;
    size_t nprefix = 0;
    for (int j = 3; j < c->argc; j++) {
        bool more = j + 1 < c->argc;
        if (ARG_IS(j, "redirect") && more) {
            j++;
            if (redir != 0) {
                reply_error(&c->r, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (!str_to_ll(ARG(j).ptr, ARG(j).len, &redir)) {
                reply_error(&c->r, ERR_NOT_INT);
                goto out;
            }
            if (redir <= 0 || !find_client(c, (uint64_t)redir, &where)) {
                reply_error(&c->r, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (ARG_IS(j, "bcast")) {
            opts |= TRK_BCAST;
        } else if (ARG_IS(j, "optin")) {
            opts |= TRK_OPTIN;
        } else if (ARG_IS(j, "optout")) {
            opts |= TRK_OPTOUT;
        } else if (ARG_IS(j, "noloop")) {
            opts |= TRK_NOLOOP;
        } else if (ARG_IS(j, "prefix") && more) {
            prefix = rk_realloc(prefix, (nprefix + 1) * sizeof *prefix);
            prefix[nprefix++] = ARG(++j);
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            goto out;
        }
    }
    if (ARG_IS(2, "on")) {
        if (!(opts & TRK_BCAST) && nprefix) {
            reply_error(&c->r, "ERR PREFIX option requires BCAST mode to be enabled");
            goto out;
        }
        if ((cur & TRK_ON) && !!(cur & TRK_BCAST) != !!(opts & TRK_BCAST)) {
            reply_error(&c->r, "ERR You can't switch BCAST mode on/off before disabling tracking for this "
                               "client, and then re-enabling it with a different mode.");
            goto out;
        }
        if ((opts & TRK_BCAST) && (opts & (TRK_OPTIN | TRK_OPTOUT))) {
            reply_error(&c->r, "ERR OPTIN and OPTOUT are not compatible with BCAST");
            goto out;
        }
        if ((opts & TRK_OPTIN) && (opts & TRK_OPTOUT)) {
            reply_error(&c->r, "ERR You can't specify both OPTIN mode and OPTOUT mode");
            goto out;
        }
        if (((opts & TRK_OPTIN) && (cur & TRK_OPTOUT)) || ((opts & TRK_OPTOUT) && (cur & TRK_OPTIN))) {
            reply_error(&c->r, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
                               "client, and then re-enabling it with a different mode.");
            goto out;
        }
        if ((opts & TRK_BCAST) && !prefixes_ok_or_reply(c, (cur & TRK_ON) ? t : NULL, prefix, nprefix)) goto out;
        struct slice empty = { "", 0 };
        struct tracking_opts o = { opts, (uint64_t)redir, where, nprefix ? prefix : &empty,
                                   (opts & TRK_BCAST) ? (nprefix ? nprefix : 1) : 0 };
        rk_conn_ops.tracking_on(cl, &o);
        const struct block_record self = { cl->w->id, cl->idx, cl->gen, cl->trk_epoch };
        for (size_t i = 0; i < o.nprefixes; i++)
            for (unsigned s = 0; s < c->nshards; s++) trk_bcast_register(c->shards[s], o.prefixes[i], &self);
    } else if (ARG_IS(2, "off")) {
        if (cur & TRK_BCAST) {
            const struct block_record self = { cl->w->id, cl->idx, cl->gen, cl->trk_epoch };
            for (unsigned s = 0; s < c->nshards; s++) trk_bcast_unregister(c->shards[s], &self);
        }
        rk_conn_ops.tracking_off(cl);
    } else {
        reply_error(&c->r, ERR_SYNTAX);
        goto out;
    }
    reply_ok(&c->r);
out:
    free(prefix);
}

void cmd_client_tracking(struct cmd_ctx *c) {
    if (!c->client) return;   /* the client went away while the shards were taken */
    tracking(c, c->client);
}

void cmd_client_caching(struct cmd_ctx *c) {
    struct client *cl = c->client;
    uint32_t f = cl->trk ? cl->trk->flags : 0;
    if (!(f & TRK_ON)) {
        reply_error(&c->r, "ERR CLIENT CACHING can be called only when the client is in tracking mode with "
                           "OPTIN or OPTOUT mode enabled");
        return;
    }
    if (ARG_IS(2, "yes")) {
        if (!(f & TRK_OPTIN)) {
            reply_error(&c->r, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (ARG_IS(2, "no")) {
        if (!(f & TRK_OPTOUT)) {
            reply_error(&c->r, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    rk_conn_ops.tracking_caching(cl);
    reply_ok(&c->r);
}

void cmd_client_getredir(struct cmd_ctx *c) {
    const struct client_tracking *t = c->client->trk;
    reply_int(&c->r, t && (t->flags & TRK_ON) ? (long long)t->redir_id : -1);
}

void cmd_client_trackinginfo(struct cmd_ctx *c) {
    const struct client_tracking *t = c->client->trk;
    uint32_t f = t ? t->flags : 0;
    reply_map(&c->r, 3);
    reply_bulk_cstr(&c->r, "flags");
    const char *names[8];
    size_t n = 0;
    names[n++] = (f & TRK_ON) ? "on" : "off";
    if (f & TRK_BCAST) names[n++] = "bcast";
    if (f & TRK_OPTIN) {
        names[n++] = "optin";
        if (f & TRK_CACHING) names[n++] = "caching-yes";
    }
    if (f & TRK_OPTOUT) {
        names[n++] = "optout";
        if (f & TRK_CACHING) names[n++] = "caching-no";
    }
    if (f & TRK_NOLOOP) names[n++] = "noloop";
    if (f & TRK_BROKEN) names[n++] = "broken_redirect";
    reply_set(&c->r, n);
    for (size_t i = 0; i < n; i++) reply_bulk_cstr(&c->r, names[i]);
    reply_bulk_cstr(&c->r, "redirect");
    reply_int(&c->r, (f & TRK_ON) ? (long long)t->redir_id : -1);
    reply_bulk_cstr(&c->r, "prefixes");
    reply_array(&c->r, (f & TRK_ON) ? t->nprefixes : 0);
    for (size_t off = 0; (f & TRK_ON) && off < t->prefixes.len;) {
        uint32_t len;
        memcpy(&len, t->prefixes.buf + off, sizeof len);
        reply_bulk(&c->r, t->prefixes.buf + off + sizeof len, len);
        off += sizeof len + len;
    }
}
