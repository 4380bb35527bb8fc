/*
 * ACL: CAT, DELUSER, DRYRUN, GENPASS, GETUSER, HELP, LIST, LOAD, LOG,
 * SAVE, SETUSER, USERS, WHOAMI, with Redis 7.0's replies (acl.h has the
 * users themselves).
 *
 * SETUSER, DELUSER and LOAD hold every shard, and their per-thread hook
 * (cmd_acl_apply) runs on each thread in ascending order as its shard is
 * granted: the first (thread 0) makes the change and keeps the reply; each
 * then closes its connections the change shuts out: those of a user that
 * is gone, and subscribers to channels their user may no longer use, as
 * Redis does before it replies. Because every thread has run the hook
 * after the change, none still reads a snapshot the change replaced, and
 * the replaced snapshots are freed before the reply.
 */
#include "ringkv/acl.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

static const char ERR_NO_ACL_FILE[] =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
    "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to "
    "store users in the Redis configuration.";

static void reply_acl_syntax(struct cmd_ctx *c) {
    reply_errorf(&c->r, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.",
                 (int)(ARG(1).len > 128 ? 128 : ARG(1).len), ARG(1).ptr);
}

/* The change itself; its reply goes to c->r. */
static void acl_change(struct cmd_ctx *c) {
    if (ARG_IS(1, "setuser")) {
        char *err = acl_setuser(ARG(2), c->argc - 3, c->argv + 3);
        if (err) reply_error(&c->r, err);
        else reply_ok(&c->r);
        free(err);
    } else if (ARG_IS(1, "deluser")) {
        for (int i = 2; i < c->argc; i++) {
            if (slice_eq(ARG(i), SLICE_LIT("default"))) {
                reply_error(&c->r, "ERR The 'default' user cannot be removed");
                return;
            }
        }
        reply_int(&c->r, acl_deluser(c->argc - 2, c->argv + 2));
    } else if (ARG_IS(1, "load")) {
        if (c->argc != 2) { reply_acl_syntax(c); return; }
        if (!acl_has_file()) {
            reply_error(&c->r, ERR_NO_ACL_FILE);
            return;
        }
        char *err = acl_load_file();
        if (err) reply_error(&c->r, err);
        else reply_ok(&c->r);
        free(err);
    }
}

/* Close this thread's connections the change shut out. */
static void close_shut_out(struct cmd_ctx *c) {
    struct worker *w = c->worker;
    for (uint32_t i = 0; i < w->nclients_cap; i++) {
        struct client *cl = w->clients[i];
        if (!cl || (cl->flags & CF_CLOSING)) continue;
        bool out = acl_user_gone(cl->user) ||
                   ((cl->flags & CF_PUBSUB) && !acl_user_open(cl->user) && !rk_conn_ops.subs_allowed(cl));
        if (!out) continue;
        /* the caller itself gets its reply first */
        if (cl == c->client) cl->flags |= CF_CLOSE_AFTER;
        else rk_conn_ops.close(cl);
    }
}

void cmd_acl_apply(struct cmd_ctx *c) {
    if (c->worker->id == 0) {
        acl_change(c);
        acl_reclaim_mark();
    }
    close_shut_out(c);
}

static void genpass(struct cmd_ctx *c) {
    long long bits = 256;
    if (c->argc == 3 && !str_to_ll(ARG(2).ptr, ARG(2).len, &bits)) { reply_error(&c->r, ERR_NOT_INT); return; }
    if (bits <= 0 || bits > 4096) {
        reply_error(&c->r, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                           "number up to 4096");
        return;
    }
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[512];
    char pass[1024];
    size_t chars = (size_t)(bits + 3) / 4;
    if (getrandom(raw, (chars + 1) / 2, 0) != (ssize_t)((chars + 1) / 2)) {
        reply_error(&c->r, "ERR cannot read random bytes");
        return;
    }
    for (size_t i = 0; i < chars; i++) pass[i] = hex[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    reply_bulk(&c->r, pass, chars);
}

static void acl_log_cmd(struct cmd_ctx *c) {
    long long count = 10;
    if (c->argc == 3) {
        if (ARG_IS(2, "reset")) {
            acl_log_reset();
            reply_ok(&c->r);
            return;
        }
        if (!str_to_ll(ARG(2).ptr, ARG(2).len, &count)) { reply_error(&c->r, ERR_NOT_INT); return; }
    }
    acl_log_reply(&c->r, count < 0 ? 0 : (long)count, c->now_ms);
}

static void dryrun(struct cmd_ctx *c) {
    struct acl_user *u = acl_find_user(ARG(2));
    if (!u) {
        reply_errorf(&c->r, "ERR User '%.*s' not found", (int)ARG(2).len, ARG(2).ptr);
        return;
    }
    const struct slice *argv = c->argv + 3;
    int argc = c->argc - 3;
    const struct command *cmd = command_resolve(argc, argv);
    if (!cmd) {
        reply_errorf(&c->r, "ERR Command '%.*s' not found", (int)argv[0].len, argv[0].ptr);
    } else if (cmd->arity > 0 ? argc != cmd->arity : argc < -cmd->arity) {
        reply_errorf(&c->r, "ERR wrong number of arguments for '%s' command", cmd->name);
    } else {
        int pos;
        enum acl_verdict v = acl_check(u, cmd, argc, argv, &pos);
        struct rbuf text = { 0 };
        if (v == ACL_DENIED_CMD)
            rbuf_printf(&text, "This user has no permissions to run the '%s' command", cmd->name);
        else if (v != ACL_OK)
            rbuf_printf(&text, "This user has no permissions to access the '%.*s' %s", (int)argv[pos].len,
                        argv[pos].ptr, v == ACL_DENIED_KEY ? "key" : "channel");
        if (v == ACL_OK) reply_ok(&c->r);
        else reply_bulk(&c->r, text.buf, text.len);
        rbuf_free(&text);
    }
    acl_user_release(u);
}

static const char *acl_help[] = {
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Print this help.",
};

void cmd_acl(struct cmd_ctx *c) {
    if (ARG_IS(1, "setuser") || ARG_IS(1, "deluser") || ARG_IS(1, "load")) {
        if (c->parts) {
            /* thread 0 made the change (cmd_acl_apply) and every thread has
             * closed what it shut out: the reply, and the old snapshots go */
            rbuf_append(c->r.out, c->parts[0].buf, c->parts[0].len);
            acl_reclaim();
        } else {
            /* inside EXEC, which runs no per-thread hook: this thread only */
            acl_change(c);
            close_shut_out(c);
        }
    } else if (ARG_IS(1, "cat")) {
        if (c->argc == 2) acl_cat_reply(&c->r);
        else if (c->argc > 3) reply_acl_syntax(c);
        else if (!acl_cat_commands_reply(&c->r, ARG(2)))
            reply_errorf(&c->r, "ERR Unknown category '%.*s'", (int)(ARG(2).len > 128 ? 128 : ARG(2).len), ARG(2).ptr);
    } else if (ARG_IS(1, "genpass")) {
        if (c->argc > 3) reply_acl_syntax(c);
        else genpass(c);
    } else if (ARG_IS(1, "getuser")) {
        if (!acl_getuser_reply(&c->r, ARG(2))) reply_null(&c->r);
    } else if (ARG_IS(1, "list") || ARG_IS(1, "users")) {
        acl_list_reply(&c->r, ARG_IS(1, "users"));
    } else if (ARG_IS(1, "whoami")) {
        reply_bulk(&c->r, c->client->user->name, c->client->user->namelen);
    } else if (ARG_IS(1, "save")) {
        if (!acl_has_file())
            reply_error(&c->r, ERR_NO_ACL_FILE);
        else if (acl_save_file()) reply_ok(&c->r);
        else reply_error(&c->r, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                                "information");
    } else if (ARG_IS(1, "log")) {
        if (c->argc > 3) reply_acl_syntax(c);
        else acl_log_cmd(c);
    } else if (ARG_IS(1, "dryrun")) {
        dryrun(c);
    } else {
        reply_help(&c->r, acl_help, RK_ARRAY_LEN(acl_help));
    }
}
