/*
 * Users and their permissions (ACL), with Redis 7.0's rules, replies and
 * errors (src/acl/).
 *
 * A user is an identity (struct acl_user: its name and a reference count,
 * held by every connection authenticated as it) and its permissions, an
 * immutable snapshot (struct acl_perms) that the identity points to. A
 * change (ACL SETUSER, DELUSER, LOAD, CONFIG SET requirepass) builds a new
 * snapshot and publishes it with one atomic store; the old one is retired
 * and freed once every thread has passed a point where it holds none
 * (acl_reclaim). So the checks on the data path take no lock: a
 * connection loads its user's snapshot and reads it. A user that can run
 * anything on any key and channel (the default user, unless configured
 * otherwise) is flagged `open`, and costs a command one load and a branch.
 *
 * The mutations are serialised by their callers: the ACL commands that
 * change users run while they hold every shard (cmd_acl.c), config loading
 * runs before the threads start.
 */
#ifndef RINGKV_ACL_H
#define RINGKV_ACL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "ringkv/common.h"

struct command;
struct reply;
struct rbuf;
struct acl_perms;

struct acl_user {
    atomic_bool open;                     /* every command, key and channel allowed */
    _Atomic(struct acl_perms *) perms;    /* NULL: the user was deleted */
    atomic_long refs;                     /* the registry's and each connection's */
    size_t namelen;
    char name[];
};

/* Redis's ACL_DENIED_* order: the most relevant denial is the highest. */
enum acl_verdict { ACL_OK = 0, ACL_DENIED_CMD, ACL_DENIED_KEY, ACL_DENIED_AUTH, ACL_DENIED_CHANNEL };
enum acl_context { ACL_CTX_TOPLEVEL, ACL_CTX_MULTI, ACL_CTX_LUA };

/* ---- lifetime ---- */

/* The default user (+@all ~* &* on nopass, then requirepass). Before the
 * threads start, after the command table is built. */
void acl_init(void);
/* A `user` line of the config file, kept until acl_load_startup; NULL or
 * the error. */
const char *acl_config_user(int argc, char **argv);
/* Users from the config's user lines, or from aclfile (not both, as Redis):
 * false with *err (malloc'd) on failure. */
bool acl_load_startup(char **err);
void acl_shutdown(void);

/* ---- identities ---- */

struct acl_user *acl_default_user(void);            /* with a reference */
void acl_user_hold(struct acl_user *u);
void acl_user_release(struct acl_user *u);
bool acl_user_exists(struct slice name);
struct acl_user *acl_find_user(struct slice name);   /* with a reference, or NULL */
static inline bool acl_user_open(const struct acl_user *u) {
    return atomic_load_explicit(&u->open, memory_order_relaxed);
}
static inline bool acl_user_gone(const struct acl_user *u) {
    return atomic_load_explicit(&u->perms, memory_order_acquire) == NULL;
}

/* Whether the default user lets a connection run commands without AUTH
 * (it is on and nopass): Redis's authRequired, for every command of a
 * connection that has not authenticated. */
bool acl_default_nopass(void);
/* The default user has the nopass flag (on or off): protected mode's and
 * AUTH <password>'s test, as Redis's. */
bool acl_default_passwordless(void);
/* requirepass: the default user's only password (len bytes, NUL bytes
 * included), or nopass (NULL or len 0). */
void acl_set_requirepass(const char *pass, size_t len);

/* AUTH user pass: the user with a reference, or NULL (unknown, disabled,
 * wrong password: Redis's one WRONGPASS for all three). */
struct acl_user *acl_authenticate(struct slice user, struct slice pass);

/* ---- checks ---- */

/* Whether u may run cmd (a subcommand when the command is a container)
 * with these arguments: its command bits, then its keys (read or write, as
 * the key specs say), then its channels; with selectors, any one selector
 * that allows all of it is enough. *errpos: the argument that was denied
 * (key or channel). */
enum acl_verdict acl_check(const struct acl_user *u, const struct command *cmd, int argc,
                           const struct slice *argv, int *errpos);
/* One channel (a pattern of PSUBSCRIBE when is_pattern, matched literally). */
bool acl_channel_allowed(const struct acl_user *u, struct slice channel, bool is_pattern);

/* The error of a denied command at the top level (processCommand's). */
void acl_reply_denied(struct reply *r, enum acl_verdict v, const struct command *cmd);
/* Its reason, in the words of scripts and EXEC ("can't run this command or
 * subcommand"; EXEC's: "no permission to execute the command or subcommand"). */
const char *acl_denial_reason(enum acl_verdict v);
const char *acl_denial_reason_exec(enum acl_verdict v);

/* ---- the ACL log ---- */

/* What a denial names: the command's full name, or the denied argument. */
struct slice acl_denied_object(enum acl_verdict v, const struct command *cmd, const struct slice *argv, int pos);

/* Record a denial: object is the command's full name, the key, the channel
 * or (AUTH) the command as sent; client_info the client's CLIENT LIST line. */
void acl_log_add(enum acl_verdict v, enum acl_context ctx, struct slice object, struct slice username,
                 const char *client_info, long long now_ms);
void acl_log_reply(struct reply *r, long count, long long now_ms);
void acl_log_reset(void);

/* ---- the ACL command's work (cmd_acl.c) ---- */

/* ACL SETUSER name rules...: NULL, or the error (malloc'd). */
char *acl_setuser(struct slice name, int argc, const struct slice *rules);
/* ACL DELUSER: how many existed. */
int acl_deluser(int argc, const struct slice *names);
bool acl_getuser_reply(struct reply *r, struct slice name);   /* false: no such user */
void acl_list_reply(struct reply *r, bool names_only);
void acl_cat_reply(struct reply *r);
bool acl_cat_commands_reply(struct reply *r, struct slice category);   /* false: unknown */
bool acl_has_file(void);
char *acl_load_file(void);           /* ACL LOAD: NULL or the error (malloc'd) */
bool acl_save_file(void);            /* ACL SAVE */
/* Append `user NAME rules` lines of every user (CONFIG REWRITE, ACL SAVE). */
void acl_describe_all(struct rbuf *out);
/* Snapshots replaced up to now may be freed once every thread has since
 * been at a point where it holds none (between two commands); acl_reclaim
 * frees those marked. So a change marks after it publishes, and reclaims
 * once every thread has run something after the mark (see cmd_acl.c). */
void acl_reclaim_mark(void);
void acl_reclaim(void);

#endif
