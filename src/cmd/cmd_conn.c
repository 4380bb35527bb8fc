/*
 * Connection commands: PING ECHO QUIT SELECT HELLO AUTH RESET MONITOR CLIENT.
 *
 * These act on the connection itself (CMD_CONN), so they always run on the
 * client's own thread with ctx->client set, except PING and ECHO, which need
 * nothing but the arguments. CLIENT LIST and CLIENT KILL need every thread's
 * clients: cmd_client_gather runs on each thread (as per_shard) and
 * cmd_client combines what they found.
 */
#include "ringkv/acl.h"
#include "ringkv/server.h"
#include "ringkv/config.h"
#include "ringkv/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

struct conn_ops rk_conn_ops;

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

void cmd_ping(struct cmd_ctx *c) {
    if (c->argc > 2) { reply_wrong_arity(&c->r, "ping"); return; }
    if (c->client && (c->client->flags & CF_PUBSUB) && c->r.resp == 2) {
        /* a subscribed RESP2 connection only reads arrays */
        reply_array(&c->r, 2);
        reply_bulk(&c->r, "pong", 4);
        reply_bulk(&c->r, c->argc == 2 ? ARG(1).ptr : "", c->argc == 2 ? ARG(1).len : 0);
        return;
    }
    if (c->argc == 2) reply_bulk_slice(&c->r, ARG(1));
    else reply_simple(&c->r, "PONG");
}

void cmd_echo(struct cmd_ctx *c) { reply_bulk_slice(&c->r, ARG(1)); }

void cmd_quit(struct cmd_ctx *c) {
    reply_ok(&c->r);
    c->client->flags |= CF_CLOSE_AFTER;
}

void cmd_select(struct cmd_ctx *c) {
    long long db;
    if (!str_to_ll(ARG(1).ptr, ARG(1).len, &db)) { reply_error(&c->r, ERR_NOT_INT); return; }
    if (db < 0 || db >= (long long)c->shard->ndb) { reply_error(&c->r, ERR_DB_INDEX); return; }
    c->client->db = (int)db;
    reply_ok(&c->r);
}

#define ERR_WRONGPASS "WRONGPASS invalid username-password pair or user is disabled."

/* AUTH and HELLO AUTH: the connection becomes the user's; a failure goes
 * to the ACL log, named after the command as it was sent. */
static bool authenticate(struct cmd_ctx *c, struct slice user, struct slice pass) {
    struct client *cl = c->client;
    struct acl_user *u = acl_authenticate(user, pass);
    if (!u) {
        rk_conn_ops.acl_log(cl, ACL_DENIED_AUTH, cl->multi ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, ARG(0), user);
        return false;
    }
    acl_user_release(cl->user);
    cl->user = u;
    cl->flags |= CF_AUTHED;
    return true;
}

void cmd_auth(struct cmd_ctx *c) {
    if (c->argc > 3) { reply_error(&c->r, ERR_SYNTAX); return; }
    struct slice user = SLICE_LIT("default"), pass = ARG(c->argc - 1);
    if (c->argc == 2 && acl_default_passwordless()) {
        reply_error(&c->r, "ERR AUTH <password> called without any password configured for the default user. "
                           "Are you sure your configuration is correct?");
        return;
    }
    if (c->argc == 3) user = ARG(1);
    if (!authenticate(c, user, pass)) { reply_error(&c->r, ERR_WRONGPASS); return; }
    reply_ok(&c->r);
}

static bool valid_name(struct slice s) {
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] < '!' || s.ptr[i] > '~') return false;
    return true;
}

static void set_name(char **dst, struct slice s) {
    free(*dst);
    *dst = NULL;
    if (s.len == 0) return;
    *dst = rk_malloc(s.len + 1);
    memcpy(*dst, s.ptr, s.len);
    (*dst)[s.len] = '\0';
}

void cmd_hello(struct cmd_ctx *c) {
    struct client *cl = c->client;
    long long ver = cl->resp;
    int i = 1;
    if (c->argc >= 2) {
        if (!str_to_ll(ARG(1).ptr, ARG(1).len, &ver)) {
            reply_error(&c->r, "ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) { reply_error(&c->r, "NOPROTO unsupported protocol version"); return; }
        i = 2;
    }
    struct slice name = {0};
    bool setname = false;
    for (; i < c->argc; i++) {
        int left = c->argc - i - 1;
        if (ARG_IS(i, "auth") && left >= 2) {
            if (!authenticate(c, ARG(i + 1), ARG(i + 2))) { reply_error(&c->r, ERR_WRONGPASS); return; }
            i += 2;
        } else if (ARG_IS(i, "setname") && left >= 1) {
            name = ARG(++i);
            setname = true;
            if (!valid_name(name)) {
                reply_error(&c->r, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
        } else {
            reply_errorf(&c->r, "ERR Syntax error in HELLO option '%.*s'", (int)ARG(i).len, ARG(i).ptr);
            return;
        }
    }
    if (!(cl->flags & CF_AUTHED) && !acl_default_nopass()) {
        reply_error(&c->r, "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                           "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                           "select the RESP protocol version at the same time");
        return;
    }
    if (setname) set_name(&client_rare(cl)->name, name);
    cl->resp = (uint8_t)ver;
    c->r.resp = cl->resp;
    reply_map(&c->r, 7);
    reply_bulk_cstr(&c->r, "server"); reply_bulk_cstr(&c->r, "redis");
    reply_bulk_cstr(&c->r, "version"); reply_bulk_cstr(&c->r, RK_VERSION);
    reply_bulk_cstr(&c->r, "proto"); reply_int(&c->r, ver);
    reply_bulk_cstr(&c->r, "id"); reply_int(&c->r, (long long)cl->id);
    reply_bulk_cstr(&c->r, "mode"); reply_bulk_cstr(&c->r, "standalone");
    reply_bulk_cstr(&c->r, "role"); reply_bulk_cstr(&c->r, "master");
    reply_bulk_cstr(&c->r, "modules"); reply_array(&c->r, 0);
}

/* MONITOR: from now on, a line for every command any client runs. A
 * second MONITOR answers nothing, as Redis. */
void cmd_monitor(struct cmd_ctx *c) {
    const char *err = rk_conn_ops.monitor(c->client);
    if (!err) reply_ok(&c->r);
    else if (err[0]) reply_error(&c->r, err);
}

void cmd_reset(struct cmd_ctx *c) {
    struct client *cl = c->client;
    cl->db = 0;
    cl->resp = 2;
    if (cl->rare) set_name(&cl->rare->name, (struct slice){0});
    /* back to the default user, authenticated only if it needs no password */
    acl_user_release(cl->user);
    cl->user = acl_default_user();
    if (!acl_default_nopass()) cl->flags &= ~CF_AUTHED;
    rk_conn_ops.reset_transaction(cl);
    rk_conn_ops.reset_pubsub(cl);
    rk_conn_ops.reset_controls(cl);
    rk_conn_ops.tracking_reset(cl);
    reply_simple(&c->r, "RESET");
}

/* ---- CLIENT ---- */

/* Filters of CLIENT LIST / CLIENT KILL, parsed the same way on every thread. */
struct client_filter {
    bool old_style;            /* CLIENT KILL addr:port */
    struct slice addr, laddr;
    uint64_t *ids;
    size_t nids;
    bool skipme;
    long long maxage;
    int type;                  /* -1 any, 0 normal, 1 other (none of ours) */
    const char *error;
    struct slice user;         /* USER: its name (the unknown user, with error ERR_NO_SUCH_USER) */
};
static const char ERR_NO_SUCH_USER[] = "ERR No such user";

static void filter_parse(struct cmd_ctx *c, bool kill, struct client_filter *f) {
    memset(f, 0, sizeof *f);
    f->skipme = kill;
    f->type = -1;
    int i = 2;
    if (kill && c->argc == 3) {
        f->old_style = true;
        f->addr = ARG(2);
        f->skipme = false;
        return;
    }
    for (; i < c->argc; i++) {
        bool has = i + 1 < c->argc;
        if (ARG_IS(i, "id") && has) {
            /* CLIENT LIST ID takes several ids; CLIENT KILL ID one */
            int last = kill ? i + 1 : c->argc - 1;
            for (int j = i + 1; j <= last; j++) {
                long long id;
                if (!str_to_ll(ARG(j).ptr, ARG(j).len, &id) || id <= 0) {
                    f->error = kill ? "ERR client-id should be greater than 0" : "ERR Invalid client ID";
                    return;
                }
                f->ids = rk_realloc(f->ids, (f->nids + 1) * sizeof *f->ids);
                f->ids[f->nids++] = (uint64_t)id;
            }
            i = last;
        } else if (ARG_IS(i, "type") && has) {
            struct slice t = ARG(++i);
            if (slice_eq_nocase(t, "normal")) f->type = 0;
            else if (slice_eq_nocase(t, "master") || slice_eq_nocase(t, "replica") ||
                     slice_eq_nocase(t, "slave") || slice_eq_nocase(t, "pubsub")) f->type = 1;
            else { f->error = "ERR Unknown client type"; return; }
        } else if (kill && ARG_IS(i, "addr") && has) {
            f->addr = ARG(++i);
        } else if (kill && ARG_IS(i, "laddr") && has) {
            f->laddr = ARG(++i);
        } else if (kill && ARG_IS(i, "user") && has) {
            f->user = ARG(++i);
            if (!acl_user_exists(f->user)) { f->error = ERR_NO_SUCH_USER; return; }
        } else if (kill && ARG_IS(i, "skipme") && has) {
            i++;
            if (ARG_IS(i, "yes")) f->skipme = true;
            else if (ARG_IS(i, "no")) f->skipme = false;
            else { f->error = ERR_SYNTAX; return; }
        } else if (kill && ARG_IS(i, "maxage") && has) {
            if (!str_to_ll(ARG(i + 1).ptr, ARG(i + 1).len, &f->maxage)) { f->error = ERR_NOT_INT; return; }
            i++;
        } else {
            f->error = ERR_SYNTAX;
            return;
        }
    }
}

static bool str_is(const char *s, struct slice want) { return strlen(s) == want.len && memcmp(s, want.ptr, want.len) == 0; }

static bool filter_match(const struct client_filter *f, struct client *cl, struct client *self, long long now_ms) {
    if (cl->flags & (CF_CLOSING | CF_EVICTED)) return false;   /* gone, or going this iteration */
    if (f->type == 1) return false;
    if (f->skipme && cl == self) return false;
    if (f->addr.ptr && !str_is(client_addr(cl), f->addr)) return false;
    if (f->laddr.ptr && !str_is(client_laddr(cl), f->laddr)) return false;
    if (f->maxage && (now_ms - cl->ctime_ms) / 1000 < f->maxage) return false;
    if (f->user.ptr && !slice_eq(f->user, (struct slice){ cl->user->name, cl->user->namelen })) return false;
    if (f->nids) {
        bool found = false;
        for (size_t i = 0; i < f->nids && !found; i++) found = f->ids[i] == cl->id;
        if (!found) return false;
    }
    return true;
}

/* Runs on every thread: list or kill the matching clients it owns. */
void cmd_client_gather(struct cmd_ctx *c) {
    bool kill = ARG_IS(1, "kill");
    struct client_filter f;
    filter_parse(c, kill, &f);
    if (f.error) { free(f.ids); return; }
    struct worker *w = c->worker;
    long long killed = 0;
    for (uint32_t i = 0; i < w->nclients_cap; i++) {
        struct client *cl = w->clients[i];
        if (!cl || !filter_match(&f, cl, c->client, w->now_ms)) continue;
        if (kill) {
            killed++;
            /* The caller itself gets its reply before the connection closes. */
            if (cl == c->client) cl->flags |= CF_CLOSE_AFTER;
            else rk_conn_ops.close(cl);
        } else {
            rk_conn_ops.info_line(cl, cl == c->client, c->r.out, w->now_ms);
        }
    }
    if (kill) rbuf_append(c->r.out, &killed, sizeof killed);
    free(f.ids);
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: false (with *error set) on bad arguments. */
static bool unblock_args(struct cmd_ctx *c, long long *id, bool *error, const char **err) {
    *err = NULL;
    *error = false;
    if (!str_to_ll(ARG(2).ptr, ARG(2).len, id)) { *err = ERR_NOT_INT; return false; }
    if (c->argc == 4) {
        if (ARG_IS(3, "error")) *error = true;
        else if (!ARG_IS(3, "timeout")) { *err = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"; return false; }
    } else if (c->argc > 4) {
        *err = ERR_SYNTAX;
        return false;
    }
    return true;
}

/* Runs on every thread: unblock the client with that id if it is ours. */
void cmd_client_unblock_gather(struct cmd_ctx *c) {
    long long id, n = 0;
    bool error;
    const char *err;
    if (unblock_args(c, &id, &error, &err)) {
        struct worker *w = c->worker;
        for (uint32_t i = 0; i < w->nclients_cap; i++) {
            struct client *cl = w->clients[i];
            if (cl && cl->id == (uint64_t)id && rk_conn_ops.unblock(cl, error)) n++;
        }
    }
    rbuf_append(c->r.out, &n, sizeof n);
}

static void client_unblock_reply(struct cmd_ctx *c) {
    long long id, total = 0;
    bool error;
    const char *err;
    if (!unblock_args(c, &id, &error, &err)) { reply_error(&c->r, err); return; }
    for (unsigned i = 0; i < c->nshards; i++) {
        long long n = 0;
        if (c->parts && c->parts[i].len == sizeof n) memcpy(&n, c->parts[i].buf, sizeof n);
        total += n;
    }
    reply_int(&c->r, total);
}

static void client_list_or_kill(struct cmd_ctx *c, bool kill) {
    struct client_filter f;
    filter_parse(c, kill, &f);
    free(f.ids);
    if (f.error == ERR_NO_SUCH_USER) {
        reply_errorf(&c->r, "ERR No such user '%.*s'", (int)f.user.len, f.user.ptr);
        return;
    }
    if (f.error) { reply_error(&c->r, f.error); return; }
    if (!kill) {
        struct rbuf all = {0};
        for (unsigned i = 0; i < c->nshards; i++)
            if (c->parts[i].len) rbuf_append(&all, c->parts[i].buf, c->parts[i].len);
        reply_verbatim(&c->r, all.buf ? all.buf : "", all.len, "txt");
        rbuf_free(&all);
        return;
    }
    long long total = 0;
    for (unsigned i = 0; i < c->nshards; i++) {
        long long n = 0;
        if (c->parts[i].len == sizeof n) memcpy(&n, c->parts[i].buf, sizeof n);
        total += n;
    }
    if (f.old_style) {
        if (total == 0) reply_error(&c->r, "ERR No such client");
        else reply_ok(&c->r);
    } else {
        reply_int(&c->r, total);
    }
}

/* CLIENT PAUSE timeout [WRITE|ALL]: every thread holds the commands the
 * pause covers until the timeout (milliseconds) or CLIENT UNPAUSE. */
static void client_pause(struct cmd_ctx *c) {
    bool all = true;
    if (c->argc == 4) {
        if (ARG_IS(3, "write")) all = false;
        else if (!ARG_IS(3, "all")) { reply_error(&c->r, "ERR CLIENT PAUSE mode must be WRITE or ALL"); return; }
    } else if (c->argc > 4) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    long long ms;
    if (!str_to_ll(ARG(2).ptr, ARG(2).len, &ms)) {
        reply_error(&c->r, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) { reply_error(&c->r, "ERR timeout is negative"); return; }
    /* 0 ends at once, as Redis's end time 0 */
    long long now = (long long)mstime_now();
    long long end = ms == 0 ? 0 : (ms > LLONG_MAX - now ? LLONG_MAX : now + ms);
    rk_conn_ops.pause(c->worker, end, all);
    reply_ok(&c->r);
}

static const char *client_help[] = {
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are: ID, ADDR, LADDR, USER, SKIPME, MAXAGE, TYPE.",
    "LIST [options ...]",
    "    Return information about client connections. Options: TYPE, ID.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP",
    "    Print this help.",
};

void cmd_client(struct cmd_ctx *c) {
    struct client *cl = c->client;
    if (ARG_IS(1, "id")) {
        reply_int(&c->r, (long long)cl->id);
    } else if (ARG_IS(1, "setname")) {
        if (!valid_name(ARG(2))) {
            reply_error(&c->r, "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        set_name(&client_rare(cl)->name, ARG(2));
        reply_ok(&c->r);
    } else if (ARG_IS(1, "getname")) {
        if (client_name(cl)) reply_bulk_cstr(&c->r, client_name(cl));
        else reply_null(&c->r);
    } else if (ARG_IS(1, "info")) {
        struct rbuf line = {0};
        rk_conn_ops.info_line(cl, true, &line, c->now_ms);
        reply_verbatim(&c->r, line.buf, line.len, "txt");
        rbuf_free(&line);
    } else if (ARG_IS(1, "setinfo")) {
        bool is_name = ARG_IS(2, "lib-name");
        if (!is_name && !ARG_IS(2, "lib-ver")) {
            reply_errorf(&c->r, "ERR Unrecognized option '%.*s'", (int)ARG(2).len, ARG(2).ptr);
            return;
        }
        if (!valid_name(ARG(3))) {
            reply_errorf(&c->r, "ERR %.*s cannot contain spaces, newlines or special characters.",
                         (int)ARG(2).len, ARG(2).ptr);
            return;
        }
        struct client_rare *x = client_rare(cl);
        set_name(is_name ? &x->lib_name : &x->lib_ver, ARG(3));
        reply_ok(&c->r);
    } else if (ARG_IS(1, "reply")) {
        /* OFF and SKIP answer nothing, not even to themselves */
        if (ARG_IS(2, "on")) { cl->reply_off = false; cl->reply_skip = 0; reply_ok(&c->r); }
        else if (ARG_IS(2, "off")) cl->reply_off = true;
        else if (ARG_IS(2, "skip")) { if (!cl->reply_off) cl->reply_skip = 1; }
        else reply_error(&c->r, ERR_SYNTAX);
    } else if (ARG_IS(1, "no-evict") || ARG_IS(1, "no-touch")) {
        int mode = ARG_IS(1, "no-evict") ? CLIENT_MODE_NO_EVICT : CLIENT_MODE_NO_TOUCH;
        if (ARG_IS(2, "on") || ARG_IS(2, "off")) {
            rk_conn_ops.set_mode(cl, mode, ARG_IS(2, "on"));
            reply_ok(&c->r);
        } else {
            reply_error(&c->r, ERR_SYNTAX);
        }
    } else if (ARG_IS(1, "pause")) {
        client_pause(c);
    } else if (ARG_IS(1, "unpause")) {
        rk_conn_ops.unpause(c->worker);
        reply_ok(&c->r);
    } else if (ARG_IS(1, "unblock")) {
        client_unblock_reply(c);
    } else if (ARG_IS(1, "list") || ARG_IS(1, "kill")) {
        client_list_or_kill(c, ARG_IS(1, "kill"));
    } else {
        reply_help(&c->r, client_help, RK_ARRAY_LEN(client_help));
    }
}
