/*
 * Shorthands for writing command table entries: src/cmd/command_table.c and
 * the command groups of the data-type modules (cmd_<type>.c, see there).
 * Include only from files that define table entries.
 */
#ifndef RINGKV_COMMAND_DEF_H
#define RINGKV_COMMAND_DEF_H

#include "ringkv/command.h"

#define W CMD_WRITE
#define R CMD_READONLY
#define F CMD_FAST
#define D CMD_DENYOOM
#define A CMD_ADMIN
#define L (CMD_LOADING | CMD_STALE)

/* name, arity, flags, first, last, step, proc, acl, summary, since, group,
 * complexity, args. args lists the arguments for COMMAND DOCS in the grammar
 * of command_docs.c (NULL: none), transcribed from what redis-server 7.0
 * answers to COMMAND DOCS, so redis-cli shows the same hints. A container
 * takes no arguments of its own, as in Redis. */
#define CMD(name, arity, flags, fk, lk, st, proc, acl, summary, since, group, cx, args) \
    { name, arity, flags, fk, lk, st, proc, NULL, acl, summary, since, group, cx, args, NULL, NULL }
#define CONTAINER(name, subs, acl, summary, since, group) \
    { name, -2, 0, 0, 0, 0, NULL, NULL, acl, summary, since, group, "Depends on subcommand.", NULL, subs, NULL }

/* The same for commands whose key positions depend on their arguments
 * (CMD_MOVABLEKEYS), found by keys_fn; the legacy spec is what COMMAND INFO
 * reports, as in Redis (often 0, 0, 0). */
#define CMD_KEYS(name, arity, flags, fk, lk, st, proc, keys_fn, acl, summary, since, group, cx, args) \
    { name, arity, (flags) | CMD_MOVABLEKEYS, fk, lk, st, proc, keys_fn, acl, summary, since, group, cx, args, NULL, NULL }

/* End of a command group. */
#define CMD_END { 0 }

#endif
