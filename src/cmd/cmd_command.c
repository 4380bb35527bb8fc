/*
 * COMMAND and its subcommands: COUNT, LIST, INFO, DOCS, GETKEYS,
 * GETKEYSANDFLAGS, HELP, answered from the command table as Redis 7.0's
 * server.c answers them from its own.
 *
 * Containers count once in COUNT and appear with their subcommands nested
 * in INFO and DOCS; LIST names subcommands too ("config|get"), as Redis
 * does. GETKEYS finds keys exactly as the dispatcher does
 * (command_key_positions), so it tells where a command would be routed;
 * GETKEYSANDFLAGS adds each key's flags from the key specs
 * (command_keyspecs.c).
 */
#include "ringkv/command.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <strings.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

/* In addReplyFlagsForCommand()'s order; Redis hides "sentinel". */
static const struct { uint32_t flag; const char *name; } flag_names[] = {
    {CMD_WRITE, "write"}, {CMD_READONLY, "readonly"}, {CMD_DENYOOM, "denyoom"}, {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"}, {CMD_NOSCRIPT, "noscript"}, {CMD_BLOCKING, "blocking"}, {CMD_LOADING, "loading"}, {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"}, {CMD_FAST, "fast"}, {CMD_NOAUTH, "no_auth"}, {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"}, {CMD_NO_MULTI, "no_multi"}, {CMD_MOVABLEKEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
};

static size_t count_words(const char *s) {
    size_t n = 0;
    for (bool in = false; *s; s++) {
        if (*s != ' ' && !in) n++;
        in = *s != ' ';
    }
    return n;
}

static void reply_words(struct reply *r, const char *s) {
    reply_set(r, count_words(s));
    while (*s) {
        while (*s == ' ') s++;
        size_t len = strcspn(s, " ");
        if (len) reply_simple_len(r, s, len);
        s += len;
    }
}

static size_t sub_count(const struct command *cmd) {
    size_t n = 0;
    for (const struct command *s = cmd->subcommands; s && s->name; s++) n++;
    return n;
}

static void reply_command_info(struct reply *r, const struct command *cmd) {
    reply_array(r, 10);
    reply_bulk_cstr(r, cmd->name);
    reply_int(r, cmd->arity);
    size_t nflags = 0;
    for (size_t i = 0; i < RK_ARRAY_LEN(flag_names); i++) nflags += (cmd->flags & flag_names[i].flag) != 0;
    reply_set(r, nflags);
    for (size_t i = 0; i < RK_ARRAY_LEN(flag_names); i++)
        if (cmd->flags & flag_names[i].flag) reply_simple(r, flag_names[i].name);
    reply_int(r, cmd->first_key);
    reply_int(r, cmd->last_key);
    reply_int(r, cmd->key_step);
    reply_words(r, cmd->acl_categories ? cmd->acl_categories : "");
    reply_set(r, 0);     /* tips */
    key_specs_reply(r, cmd);
    reply_set(r, sub_count(cmd));
    for (const struct command *s = cmd->subcommands; s && s->name; s++) reply_command_info(r, s);
}

/* Redis leaves "arguments" out for a command that takes none, and so do we.
 * A table string that does not parse (test_command_docs catches that) shows
 * as no arguments rather than failing the whole reply. */
static void reply_command_docs(struct reply *r, const struct command *cmd) {
    size_t nsubs = sub_count(cmd);
    struct doc_args args;
    doc_args_parse(cmd->args_doc, &args, NULL, 0);   /* left empty if it fails */
    reply_map(r, 4 + (args.ntop > 0) + (nsubs > 0));
    reply_bulk_cstr(r, "summary"); reply_bulk_cstr(r, cmd->summary ? cmd->summary : "");
    reply_bulk_cstr(r, "since"); reply_bulk_cstr(r, cmd->since ? cmd->since : "1.0.0");
    reply_bulk_cstr(r, "group"); reply_bulk_cstr(r, cmd->group ? cmd->group : "server");
    reply_bulk_cstr(r, "complexity"); reply_bulk_cstr(r, cmd->complexity ? cmd->complexity : "O(1)");
    if (args.ntop) {
        reply_bulk_cstr(r, "arguments");
        doc_args_reply(r, &args);
    }
    doc_args_free(&args);
    if (nsubs) {
        reply_bulk_cstr(r, "subcommands");
        reply_map(r, nsubs);
        for (const struct command *s = cmd->subcommands; s->name; s++) {
            reply_bulk_cstr(r, s->name);
            reply_command_docs(r, s);
        }
    }
}

/* "get" or "config|get", as COMMAND INFO and DOCS name commands. */
static const struct command *find_command_by_name(struct slice name) {
    const char *bar = memchr(name.ptr, '|', name.len);
    if (!bar) return command_lookup(name.ptr, name.len);
    const struct command *parent = command_lookup(name.ptr, (size_t)(bar - name.ptr));
    if (!parent || !parent->subcommands) return NULL;
    return command_lookup_sub(parent, (struct slice){ bar + 1, name.len - (size_t)(bar - name.ptr) - 1 });
}

/* The command a full request argv[0..argc) runs, as Redis's lookupCommand:
 * a container's subcommand when there is an argument for it. */
static void command_info(struct cmd_ctx *c) {
    if (c->argc == 2) {
        size_t n = command_count();
        reply_array(&c->r, n);
        for (size_t i = 0; i < n; i++) reply_command_info(&c->r, command_at(i));
        return;
    }
    reply_array(&c->r, (size_t)c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const struct command *cmd = find_command_by_name(ARG(i));
        if (cmd) reply_command_info(&c->r, cmd);
        else reply_null_array(&c->r);
    }
}

static void command_docs(struct cmd_ctx *c) {
    size_t n = command_count();
    size_t found = 0;
    for (int i = 2; i < c->argc; i++) found += find_command_by_name(ARG(i)) != NULL;
    reply_map(&c->r, c->argc == 2 ? n : found);
    for (size_t i = 0; c->argc == 2 && i < n; i++) {
        reply_bulk_cstr(&c->r, command_at(i)->name);
        reply_command_docs(&c->r, command_at(i));
    }
    for (int i = 2; i < c->argc; i++) {
        const struct command *cmd = find_command_by_name(ARG(i));
        if (!cmd) continue;
        reply_bulk_cstr(&c->r, cmd->name);
        reply_command_docs(&c->r, cmd);
    }
}

/* ---- COMMAND LIST ---- */

/* The ACL categories Redis 7.0 knows (ACLCommandCategories). */
static const char *const acl_categories[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
    "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
    "transaction", "scripting",
};

enum list_filter { FILTER_NONE, FILTER_MODULE, FILTER_ACLCAT, FILTER_PATTERN };

static bool valid_category(struct slice cat) {
    for (size_t i = 0; i < RK_ARRAY_LEN(acl_categories); i++)
        if (slice_eq_nocase(cat, acl_categories[i])) return true;
    return false;
}

/* Whether the space-separated "@cat ..." list holds @cat (any case). */
static bool has_category(const char *list, struct slice cat) {
    for (const char *s = list ? list : ""; *s;) {
        while (*s == ' ') s++;
        size_t len = strcspn(s, " ");
        if (len == cat.len + 1 && s[0] == '@' && strncasecmp(s + 1, cat.ptr, cat.len) == 0) return true;
        s += len;
    }
    return false;
}

static bool list_match(const struct command *cmd, enum list_filter f, struct slice arg) {
    switch (f) {
    case FILTER_NONE: return true;
    case FILTER_MODULE: return false;   /* ringkv loads no modules */
    case FILTER_ACLCAT: return has_category(cmd->acl_categories, arg);
    case FILTER_PATTERN: return string_match(arg.ptr, arg.len, cmd->name, strlen(cmd->name), true);
    }
    return false;
}

/* 1 if cmd passes the filter, its name replied when r is not NULL. */
static size_t list_one(struct reply *r, const struct command *cmd, enum list_filter f, struct slice arg) {
    if (!list_match(cmd, f, arg)) return 0;
    if (r) reply_bulk_cstr(r, cmd->name);
    return 1;
}

/* Every command and subcommand that passes the filter. Run once without r
 * to count them: the reply's length comes before its elements. */
static size_t list_walk(struct reply *r, enum list_filter f, struct slice arg) {
    size_t n = 0;
    for (size_t i = 0; i < command_count(); i++) {
        const struct command *cmd = command_at(i);
        n += list_one(r, cmd, f, arg);
        for (const struct command *s = cmd->subcommands; s && s->name; s++) n += list_one(r, s, f, arg);
    }
    return n;
}

static void command_list(struct cmd_ctx *c) {
    enum list_filter f = FILTER_NONE;
    struct slice arg = {0};
    if (c->argc != 2) {
        if (c->argc != 5 || !ARG_IS(2, "filterby")) { reply_error(&c->r, ERR_SYNTAX); return; }
        if (ARG_IS(3, "module")) f = FILTER_MODULE;
        else if (ARG_IS(3, "aclcat")) f = FILTER_ACLCAT;
        else if (ARG_IS(3, "pattern")) f = FILTER_PATTERN;
        else { reply_error(&c->r, ERR_SYNTAX); return; }
        arg = ARG(4);
    }
    if (f == FILTER_ACLCAT && !valid_category(arg)) {
        reply_array(&c->r, 0);
        return;
    }
    reply_array(&c->r, list_walk(NULL, f, arg));
    list_walk(&c->r, f, arg);
}

/* ---- COMMAND GETKEYS / GETKEYSANDFLAGS ---- */

static bool has_keys(const struct command *cmd) {
    if (cmd->flags & CMD_PUBSUB) return false;   /* shard channels are not keys */
    return cmd->first_key != 0 || cmd->keys_fn != NULL || command_key_specs(cmd) != NULL;
}

/* Errors in Redis's order: the command, whether it takes keys, its arity,
 * then whether the arguments name any. */
static void command_getkeys(struct cmd_ctx *c, bool with_flags) {
    const struct slice *argv = c->argv + 2;
    int argc = c->argc - 2;
    const struct command *cmd = command_resolve(argc, argv);
    if (!cmd) { reply_error(&c->r, "ERR Invalid command specified"); return; }
    if (!has_keys(cmd)) { reply_error(&c->r, "ERR The command has no key arguments"); return; }
    if (cmd->arity > 0 ? argc != cmd->arity : argc < -cmd->arity) {
        reply_error(&c->r, "ERR Invalid number of arguments specified for command");
        return;
    }
    int *pos = rk_malloc((size_t)argc * sizeof *pos);
    int n = command_key_positions(cmd, argc, argv, pos, argc);
    if (n == 0 && !(cmd->flags & CMD_NO_MANDATORY_KEYS)) {   /* EVAL ... 0 names none, and may */
        reply_error(&c->r, "ERR Invalid arguments specified for command");
    } else {
        reply_array(&c->r, (size_t)n);
        for (int i = 0; i < n; i++) {
            if (with_flags) reply_array(&c->r, 2);
            reply_bulk_slice(&c->r, argv[pos[i]]);
            if (with_flags) key_flags_reply(&c->r, command_key_flags(cmd, argc, argv, i));
        }
    }
    free(pos);
}

static const char *command_help[] = {
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Print this help.",
};

void cmd_command(struct cmd_ctx *c) {
    if (c->argc == 1) {
        size_t n = command_count();
        reply_array(&c->r, n);
        for (size_t i = 0; i < n; i++) reply_command_info(&c->r, command_at(i));
    } else if (ARG_IS(1, "count")) {
        reply_int(&c->r, (long long)command_count());
    } else if (ARG_IS(1, "info")) {
        command_info(c);
    } else if (ARG_IS(1, "docs")) {
        command_docs(c);
    } else if (ARG_IS(1, "list")) {
        command_list(c);
    } else if (ARG_IS(1, "getkeys")) {
        command_getkeys(c, false);
    } else if (ARG_IS(1, "getkeysandflags")) {
        command_getkeys(c, true);
    } else {
        reply_help(&c->r, command_help, RK_ARRAY_LEN(command_help));
    }
}
