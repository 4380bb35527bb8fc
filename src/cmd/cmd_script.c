/*
 * Scripting commands: EVAL, EVALSHA and their _RO forms, SCRIPT, FCALL,
 * FCALL_RO and FUNCTION. They parse arguments, find the script or function
 * in the engine (script.h) and hand the run to the host (script_host.h),
 * which decides what the script holds and runs its redis.call()s.
 */
#include "ringkv/command_def.h"
#include "ringkv/rdb_codec.h"
#include "ringkv/script_host.h"
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- EVAL, EVALSHA, EVAL_RO, EVALSHA_RO ---- */

static void eval_generic(struct cmd_ctx *c, bool by_sha, bool ro) {
    int nkeys;
    const char *err;
    if (!script_parse_numkeys(c->argv[2], c->argc - 3, false, &nkeys, &err)) {
        reply_error(&c->r, err);
        return;
    }
    struct script_engine *e = script_thread_engine(c->worker);
    char sha[41];
    struct script_target t = { .id = { sha, 40 }, .ro_command = ro };
    if (by_sha) {
        struct slice arg = c->argv[1];
        if (arg.len != 40 || !script_exists(e, arg, &t.flags)) {
            reply_error(&c->r, SCRIPT_ERR_NOSCRIPT);
            return;
        }
        for (size_t i = 0; i < 40; i++) sha[i] = (char)tolower((unsigned char)arg.ptr[i]);
        sha[40] = '\0';
    } else {
        struct rbuf e_text = {0};
        bool ok = script_load(e, c->argv[1], sha, &t.flags, &e_text);
        if (!ok) reply_error(&c->r, e_text.buf);
        rbuf_free(&e_text);
        if (!ok) return;
    }
    if (ro && !(t.flags & (SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_EVAL_COMPAT))) {
        reply_error(&c->r, SCRIPT_ERR_RO_SCRIPT);
        return;
    }
    script_host_run(c, &t, c->argv + 3, c->argc - 3, nkeys);
}

void cmd_eval(struct cmd_ctx *c) { eval_generic(c, false, false); }
void cmd_eval_ro(struct cmd_ctx *c) { eval_generic(c, false, true); }
void cmd_evalsha(struct cmd_ctx *c) { eval_generic(c, true, false); }
void cmd_evalsha_ro(struct cmd_ctx *c) { eval_generic(c, true, true); }

/* ---- FCALL, FCALL_RO ---- */

static void fcall_generic(struct cmd_ctx *c, bool ro) {
    struct script_engine *e = script_thread_engine(c->worker);
    struct script_target t = { .function = true, .id = c->argv[1], .ro_command = ro };
    if (!script_function_exists(e, c->argv[1], &t.flags)) {
        reply_error(&c->r, SCRIPT_ERR_NO_FUNCTION);
        return;
    }
    int nkeys;
    const char *err;
    if (!script_parse_numkeys(c->argv[2], c->argc - 3, true, &nkeys, &err)) {
        reply_error(&c->r, err);
        return;
    }
    if (ro && !(t.flags & SCRIPT_FLAG_NO_WRITES)) {
        reply_error(&c->r, SCRIPT_ERR_RO_SCRIPT);
        return;
    }
    script_host_run(c, &t, c->argv + 3, c->argc - 3, nkeys);
}

void cmd_fcall(struct cmd_ctx *c) { fcall_generic(c, false); }
void cmd_fcall_ro(struct cmd_ctx *c) { fcall_generic(c, true); }

/* ---- SCRIPT ---- */

static bool flush_mode_ok(struct cmd_ctx *c) {
    return c->argc == 2 || (c->argc == 3 && (slice_eq_nocase(c->argv[2], "sync") || slice_eq_nocase(c->argv[2], "async")));
}

static void cmd_script_load(struct cmd_ctx *c) {
    char sha[41];
    int flags;
    struct rbuf e = {0};
    if (script_load(script_thread_engine(c->worker), c->argv[2], sha, &flags, &e)) reply_bulk(&c->r, sha, 40);
    else reply_error(&c->r, e.buf);
    rbuf_free(&e);
}

static void cmd_script_exists(struct cmd_ctx *c) {
    reply_array(&c->r, (size_t)(c->argc - 2));
    for (int i = 2; i < c->argc; i++) reply_int(&c->r, script_exists(NULL, c->argv[i], NULL));
}

static void cmd_script_flush(struct cmd_ctx *c) {
    if (!flush_mode_ok(c)) {
        reply_error(&c->r, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    script_flush_all();
    reply_ok(&c->r);
}

static void cmd_script_kill(struct cmd_ctx *c) { script_host_kill(c, true); }

/* The Lua debugger is not built: NO is what every client already has. */
static void cmd_script_debug(struct cmd_ctx *c) {
    if (slice_eq_nocase(c->argv[2], "no")) reply_ok(&c->r);
    else if (slice_eq_nocase(c->argv[2], "yes") || slice_eq_nocase(c->argv[2], "sync"))
        reply_error(&c->r, "ERR the Lua debugger (SCRIPT DEBUG YES|SYNC) is not supported by this server");
    else reply_error(&c->r, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
}

static void cmd_script_help(struct cmd_ctx *c) {
    static const char *lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(&c->r, lines, RK_ARRAY_LEN(lines));
}

/* ---- FUNCTION ---- */

/* Redis's addReplySubcommandSyntaxError. */
static void reply_subcommand_syntax_error(struct cmd_ctx *c) {
    reply_errorf(&c->r, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try FUNCTION HELP.",
                 (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].ptr);
}

static void cmd_function_load(struct cmd_ctx *c) {
    bool replace = false;
    int at = 2;
    for (; at < c->argc - 1; at++) {
        if (!slice_eq_nocase(c->argv[at], "replace")) {
            reply_errorf(&c->r, "ERR Unknown option given: %.*s", (int)c->argv[at].len, c->argv[at].ptr);
            return;
        }
        replace = true;
    }
    if (at >= c->argc) {
        reply_error(&c->r, "ERR Function code is missing");
        return;
    }
    struct rbuf name = {0}, err = {0};
    if (script_function_load(script_thread_engine(c->worker), c->argv[at], replace, &name, &err)) {
        reply_bulk(&c->r, name.buf, name.len);
        c->dirty++;
    } else {
        reply_error(&c->r, err.buf);
    }
    rbuf_free(&name);
    rbuf_free(&err);
}

static void cmd_function_delete(struct cmd_ctx *c) {
    struct rbuf err = {0};
    if (script_function_delete(c->argv[2], &err)) {
        reply_ok(&c->r);
        c->dirty++;
    } else {
        reply_error(&c->r, err.buf);
    }
    rbuf_free(&err);
}

static void cmd_function_flush(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (!flush_mode_ok(c)) {
        reply_error(&c->r, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    script_function_flush();
    c->dirty++;
    reply_ok(&c->r);
}

static void cmd_function_list(struct cmd_ctx *c) {
    bool withcode = false;
    const struct slice *pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (!withcode && slice_eq_nocase(c->argv[i], "withcode")) {
            withcode = true;
        } else if (!pattern && slice_eq_nocase(c->argv[i], "libraryname")) {
            if (i >= c->argc - 1) {
                reply_error(&c->r, "ERR library name argument was not given");
                return;
            }
            pattern = &c->argv[++i];
        } else {
            reply_errorf(&c->r, "ERR Unknown argument %.*s", (int)c->argv[i].len, c->argv[i].ptr);
            return;
        }
    }
    script_function_list(&c->r, pattern, withcode);
}

static void cmd_function_stats(struct cmd_ctx *c) {
    const char *busy = script_busy_refusal(0);
    if (busy && strcmp(busy, SCRIPT_ERR_BUSY_EVAL) == 0) {
        reply_error(&c->r, busy);
        return;
    }
    reply_map(&c->r, 2);
    reply_bulk_cstr(&c->r, "running_script");
    script_busy_running(&c->r, c->now_ms);
    reply_bulk_cstr(&c->r, "engines");
    script_function_stats_engines(&c->r);
}

static void cmd_function_kill(struct cmd_ctx *c) { script_host_kill(c, false); }

/* FUNCTION DUMP's payload: each library as Redis's RDB writes it (the
 * FUNCTION2 opcode and the code as an RDB string), then the RDB version
 * and CRC-64 trailer of a DUMP payload. */
#define RDB_OPCODE_FUNCTION2 245

static void dump_library(void *arg, struct slice name, struct slice code) {
    (void)name;
    struct rbuf *b = arg;
    char op = (char)RDB_OPCODE_FUNCTION2;
    rbuf_append(b, &op, 1);
    rdb_put_string(b, code.ptr, code.len, true);
}

static void cmd_function_dump(struct cmd_ctx *c) {
    struct rbuf b = {0};
    script_function_foreach(dump_library, &b);
    rdb_payload_finish(&b);
    reply_bulk(&c->r, b.buf, b.len);
    rbuf_free(&b);
}

static void cmd_function_restore(struct cmd_ctx *c) {
    if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    enum script_restore_policy policy = SCRIPT_RESTORE_APPEND;
    if (c->argc == 4) {
        if (slice_eq_nocase(c->argv[3], "append")) policy = SCRIPT_RESTORE_APPEND;
        else if (slice_eq_nocase(c->argv[3], "replace")) policy = SCRIPT_RESTORE_REPLACE;
        else if (slice_eq_nocase(c->argv[3], "flush")) policy = SCRIPT_RESTORE_FLUSH;
        else {
            reply_error(&c->r, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    size_t body;
    if (!rdb_payload_verify(c->argv[2].ptr, c->argv[2].len, &body)) {
        reply_error(&c->r, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    const char *p = c->argv[2].ptr, *end = p + body;
    struct rbuf *codes = NULL;
    size_t n = 0;
    const char *err = NULL;
    while (p < end) {
        if ((unsigned char)*p != RDB_OPCODE_FUNCTION2) {
            err = "ERR given type is not a function";
            break;
        }
        p++;
        codes = rk_realloc(codes, (n + 1) * sizeof *codes);
        codes[n] = (struct rbuf){0};
        if (!rdb_get_string(&p, end, &codes[n++])) {
            err = "ERR failed loading the given functions payload";
            break;
        }
    }
    if (err) {
        reply_error(&c->r, err);
    } else {
        struct slice *s = rk_malloc((n ? n : 1) * sizeof *s);
        for (size_t i = 0; i < n; i++) s[i] = (struct slice){ codes[i].buf, codes[i].len };
        struct rbuf e = {0};
        if (script_function_restore(script_thread_engine(c->worker), s, n, policy, &e)) {
            reply_ok(&c->r);
            c->dirty++;
        } else {
            reply_error(&c->r, e.buf);
        }
        rbuf_free(&e);
        free(s);
    }
    for (size_t i = 0; i < n; i++) rbuf_free(&codes[i]);
    free(codes);
}

static void cmd_function_help(struct cmd_ctx *c) {
    static const char *lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
    };
    reply_help(&c->r, lines, RK_ARRAY_LEN(lines));
}

#define SCR (CMD_SCRIPT | CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_STALE)
#define ACL_S "@slow @scripting"

static const struct command script_subcommands[] = {
    CMD("script|debug", 3, CMD_NOSCRIPT, 0, 0, 0, cmd_script_debug, ACL_S,
        "Set the debug mode for executed scripts.", "3.2.0", "scripting", "O(1)",
        "mode:oneof(yes:pure-token=YES sync:pure-token=SYNC no:pure-token=NO)"),
    CMD("script|exists", -3, CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, cmd_script_exists, ACL_S,
        "Determine whether server-side Lua scripts exist in the script cache.", "2.6.0", "scripting",
        "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
        "sha1:string ..."),
    CMD("script|flush", -2, CMD_NOSCRIPT, 0, 0, 0, cmd_script_flush, ACL_S,
        "Remove all server-side Lua scripts from the script cache.", "2.6.0", "scripting",
        "O(N) with N being the number of scripts in cache",
        "[flush-type:oneof@6.2.0(async:pure-token=ASYNC sync:pure-token=SYNC)]"),
    CMD("script|help", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_script_help, ACL_S,
        "Show helpful text about the different subcommands", "5.0.0", "scripting", "O(1)", NULL),
    CMD("script|kill", 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, cmd_script_kill, ACL_S,
        "Terminate the Lua script currently in execution.", "2.6.0", "scripting", "O(1)", NULL),
    CMD("script|load", 3, CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, cmd_script_load, ACL_S,
        "Load a server-side Lua script to the script cache.", "2.6.0", "scripting",
        "O(N) with N being the length in bytes of the script body.", "script:string"),
    CMD_END
};

static const struct command function_subcommands[] = {
    CMD("function|delete", 3, CMD_WRITE | CMD_NOSCRIPT, 0, 0, 0, cmd_function_delete, "@write @slow @scripting",
        "Delete a library and all its functions.", "7.0.0", "scripting", "O(1)", "library-name:string"),
    CMD("function|dump", 2, CMD_NOSCRIPT, 0, 0, 0, cmd_function_dump, ACL_S,
        "Dump all functions into a serialized binary payload", "7.0.0", "scripting",
        "O(N) where N is the number of functions", NULL),
    CMD("function|flush", -2, CMD_WRITE | CMD_NOSCRIPT, 0, 0, 0, cmd_function_flush, "@write @slow @scripting",
        "Deletes all libraries and functions.", "7.0.0", "scripting", "O(N) where N is the number of functions deleted",
        "[flush-type:oneof(async:pure-token=ASYNC sync:pure-token=SYNC)]"),
    CMD("function|help", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_function_help, ACL_S,
        "Show helpful text about the different subcommands", "7.0.0", "scripting", "O(1)", NULL),
    CMD("function|kill", 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, cmd_function_kill, ACL_S,
        "Kill the function currently in execution.", "7.0.0", "scripting", "O(1)", NULL),
    CMD("function|list", -2, CMD_NOSCRIPT, 0, 0, 0, cmd_function_list, ACL_S,
        "List information about all the functions", "7.0.0", "scripting", "O(N) where N is the number of functions",
        "[library-name-pattern:string:token=LIBRARYNAME] [withcode:pure-token=WITHCODE]"),
    CMD("function|load", -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, 0, 0, 0, cmd_function_load,
        "@write @slow @scripting", "Create a function with the given arguments (name, code, description)", "7.0.0",
        "scripting", "O(1) (considering compilation time is redundant)",
        "[replace:pure-token=REPLACE] function-code:string"),
    CMD("function|restore", -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, 0, 0, 0, cmd_function_restore,
        "@write @slow @scripting", "Restore all the functions on the given payload", "7.0.0", "scripting",
        "O(N) where N is the number of functions on the payload",
        "serialized-value:string [policy:oneof(flush:pure-token=FLUSH append:pure-token=APPEND replace:pure-token=REPLACE)]"),
    CMD("function|stats", 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, cmd_function_stats, ACL_S,
        "Return information about the function currently running (name, description, duration)", "7.0.0",
        "scripting", "O(1)", NULL),
    CMD_END
};

const struct command script_commands[] = {
    CMD_KEYS("eval", -3, SCR | CMD_MAY_REPLICATE, 0, 0, 0, cmd_eval, keys_numkeys_second, ACL_S,
             "Execute a Lua script server side", "2.6.0", "scripting", "Depends on the script that is executed.",
             "script:string numkeys:integer [key:key ...] [arg:string ...]"),
    CMD_KEYS("eval_ro", -3, SCR | CMD_READONLY, 0, 0, 0, cmd_eval_ro, keys_numkeys_second, ACL_S,
             "Execute a read-only Lua script server side", "7.0.0", "scripting",
             "Depends on the script that is executed.", "script:string numkeys:integer [key:key ...] [arg:string ...]"),
    CMD_KEYS("evalsha", -3, SCR | CMD_MAY_REPLICATE, 0, 0, 0, cmd_evalsha, keys_numkeys_second, ACL_S,
             "Execute a Lua script server side", "2.6.0", "scripting", "Depends on the script that is executed.",
             "sha1:string numkeys:integer [key:key ...] [arg:string ...]"),
    CMD_KEYS("evalsha_ro", -3, SCR | CMD_READONLY, 0, 0, 0, cmd_evalsha_ro, keys_numkeys_second, ACL_S,
             "Execute a read-only Lua script server side", "7.0.0", "scripting",
             "Depends on the script that is executed.", "sha1:string numkeys:integer [key:key ...] [arg:string ...]"),
    CMD_KEYS("fcall", -3, SCR | CMD_MAY_REPLICATE, 0, 0, 0, cmd_fcall, keys_numkeys_second, ACL_S,
             "Invoke a function", "7.0.0", "scripting", "Depends on the function that is executed.",
             "function:string numkeys:integer [key:key ...] [arg:string ...]"),
    CMD_KEYS("fcall_ro", -3, SCR | CMD_READONLY, 0, 0, 0, cmd_fcall_ro, keys_numkeys_second, ACL_S,
             "Invoke a read-only function", "7.0.0", "scripting", "Depends on the function that is executed.",
             "function:string numkeys:integer [key:key ...] [arg:string ...]"),
    CONTAINER("function", function_subcommands, ACL_S, "A container for function commands", "7.0.0", "scripting"),
    CONTAINER("script", script_subcommands, ACL_S, "A container for Lua scripts management commands", "2.6.0",
              "scripting"),
    CMD_END
};
