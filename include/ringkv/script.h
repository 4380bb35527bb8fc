/*
 * Lua scripting engine: Redis 7.0's EVAL and FUNCTION environments on Lua 5.1.
 *
 * One engine per thread (a script never moves between threads while it
 * runs). The engine knows nothing of shards, clients or sockets: it compiles
 * and runs Lua, converts values, and hands every redis.call()/redis.pcall()
 * to its host as an argument vector. The host (the command layer) runs the
 * command wherever its key lives and answers with the command's reply as
 * RESP bytes, which the engine converts to Lua values (RESP2 or RESP3, as
 * the script chose with redis.setresp). The script's result is written into
 * a struct reply in the caller's protocol.
 *
 * Scripts loaded on one thread are known on every thread: the engine keeps
 * a process-wide registry of bodies (sha -> body, libraries by name), taken
 * with a mutex only when a script is loaded or first seen by a thread; each
 * thread compiles a body the first time it runs it. SCRIPT FLUSH and
 * FUNCTION FLUSH/DELETE/LOAD/RESTORE bump a generation each thread checks
 * with one relaxed load before looking up its compiled cache (SCRIPT FLUSH
 * gives the thread a fresh Lua state, as Redis resets its VM).
 *
 * What the host does (the engine does none of it), with Redis's texts:
 *  - before a run: NUMKEYS parsing (script_parse_numkeys), the checks of
 *    scriptPrepareForRun on the script's flags (EVAL_RO/FCALL_RO of a
 *    script that may write: SCRIPT_ERR_RO_SCRIPT, OOM, stale replica, ...);
 *  - in call(): command lookup, arity, commands denied to scripts, writes
 *    from a read-only script (EVAL_RO, FCALL_RO, no-writes flag), ACL,
 *    OOM: each refusal is answered as an error reply (SCRIPT_ERR_*), counted
 *    in the error stats there; the engine turns any error reply into the
 *    script's error (redis.call) or an {err=...} table (redis.pcall) and
 *    never counts it again;
 *  - in tick(): the busy-reply-threshold, BUSY replies to other clients,
 *    SCRIPT KILL / FUNCTION KILL (answer SCRIPT_KILL), UNKILLABLE once the
 *    script wrote.
 */
#ifndef RINGKV_SCRIPT_H
#define RINGKV_SCRIPT_H

#include "ringkv/common.h"
#include "ringkv/reply.h"

/* What scripts see as redis.REDIS_VERSION / redis.REDIS_VERSION_NUM. */
#define SCRIPT_REDIS_VERSION     "7.0.15"
#define SCRIPT_REDIS_VERSION_NUM 0x0007000f

/* Shebang flags (#!lua flags=...) and function flags, Redis's names. */
enum {
    SCRIPT_FLAG_NO_WRITES = 1 << 0,        /* no-writes */
    SCRIPT_FLAG_ALLOW_OOM = 1 << 1,        /* allow-oom */
    SCRIPT_FLAG_ALLOW_STALE = 1 << 2,      /* allow-stale */
    SCRIPT_FLAG_NO_CLUSTER = 1 << 3,       /* no-cluster */
    SCRIPT_FLAG_ALLOW_CROSS_SLOT = 1 << 4, /* allow-cross-slot-keys */
    SCRIPT_FLAG_EVAL_COMPAT = 1 << 5,      /* EVAL body without shebang: pre-7.0 rules */
};

/* redis.set_repl() flags: recorded and handed to call(), no effect here. */
enum {
    SCRIPT_REPL_NONE = 0,
    SCRIPT_REPL_AOF = 1,
    SCRIPT_REPL_REPLICA = 2,
    SCRIPT_REPL_ALL = 3,
};

/* redis.log() levels (Redis's LL_*). */
enum {
    SCRIPT_LOG_DEBUG = 0,
    SCRIPT_LOG_VERBOSE = 1,
    SCRIPT_LOG_NOTICE = 2,
    SCRIPT_LOG_WARNING = 3,
};

/* What call() and tick() answer. */
enum {
    SCRIPT_GO_ON = 0,
    /* Stop with Redis's "Script killed by user with SCRIPT KILL..." error:
     * the run ends with that error reply, pcall() cannot catch it. */
    SCRIPT_KILL = 1,
    /* Stop without a reply (the host wants to undo and run the script
     * again, e.g. holding more shards): the run returns
     * SCRIPT_RESULT_ABORTED and writes nothing; pcall() cannot catch it. */
    SCRIPT_ABORT = 2,
};

/* One redis.call()/redis.pcall() from a script. */
struct script_call {
    int argc;
    const struct slice *argv;   /* valid during call() only */
    uint8_t resp;               /* reply protocol wanted: 2 or 3 (redis.setresp) */
    uint8_t repl;               /* SCRIPT_REPL_* in force (redis.set_repl) */
    bool pcall;                 /* redis.pcall (errors come back as a table) */
};

/* What the engine asks of whoever runs the script. ctx is passed back. */
struct script_host {
    void *ctx;
    /* Run the command and append exactly one reply, in protocol c->resp, to
     * out (empty on entry). A refusal is an error reply like any other
     * ("-ERR Unknown Redis command called from script\r\n", ...). The
     * script gets the reply converted as Redis does: an error reply
     * raises (redis.call) or comes back as {err="CODE msg"} (redis.pcall).
     * Answer SCRIPT_GO_ON, or SCRIPT_KILL / SCRIPT_ABORT to stop the
     * script (out is then ignored). */
    int (*call)(void *ctx, const struct script_call *c, struct rbuf *out);
    /* Called every SCRIPT_TICK_INSTRUCTIONS Lua instructions while the
     * script runs (NULL: never). Answer as call() does. */
    int (*tick)(void *ctx);
    /* redis.log(level, ...), the message glued as Redis does; the host
     * filters by its verbosity. NULL: dropped. */
    void (*log)(void *ctx, int level, const char *msg, size_t len);
    /* redis.acl_check_cmd(...): 1 allowed, 0 denied, -1 no such command.
     * NULL: always 1. */
    int (*acl_check)(void *ctx, int argc, const struct slice *argv);
};

#define SCRIPT_TICK_INSTRUCTIONS 100000

/* The outcome of a run. */
enum script_result {
    SCRIPT_RESULT_OK = 0,      /* the script's reply is in r */
    SCRIPT_RESULT_ERROR,       /* an error reply is in r (the script failed or returned one) */
    SCRIPT_RESULT_ABORTED,     /* the host answered SCRIPT_ABORT: nothing written */
    SCRIPT_RESULT_NOT_FOUND,   /* no such script / function: nothing written */
};

/* Errors the host writes, texts exactly as Redis 7.0's. */
#define SCRIPT_ERR_NOSCRIPT        "NOSCRIPT No matching script. Please use EVAL."
#define SCRIPT_ERR_NO_FUNCTION     "ERR Function not found"
#define SCRIPT_ERR_UNKNOWN_COMMAND "ERR Unknown Redis command called from script"
#define SCRIPT_ERR_ARITY           "ERR Wrong number of args calling Redis command from script"
#define SCRIPT_ERR_DENIED          "ERR This Redis command is not allowed from script"
#define SCRIPT_ERR_WRITE_FROM_RO   "ERR Write commands are not allowed from read-only scripts."
#define SCRIPT_ERR_RO_SCRIPT       "ERR Can not execute a script with write flag using *_ro command."
#define SCRIPT_ERR_NOTBUSY         "NOTBUSY No scripts in execution right now."
#define SCRIPT_ERR_UNKILLABLE      "UNKILLABLE Sorry the script already executed write commands " \
                                   "against the dataset. You can either wait the script termination " \
                                   "or kill the server in a hard way using the SHUTDOWN NOSAVE command."
#define SCRIPT_ERR_BUSY_EVAL       "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define SCRIPT_ERR_BUSY_FUNCTION   "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
#define SCRIPT_ERR_NUMKEYS_GREATER "ERR Number of keys can't be greater than number of args"
#define SCRIPT_ERR_NUMKEYS_NEG     "ERR Number of keys can't be negative"
#define SCRIPT_ERR_NUMKEYS_FCALL   "ERR Bad number of keys provided"
#define SCRIPT_ERR_NOT_INT         "ERR value is not an integer or out of range"

/* EVAL/FCALL's numkeys: nargs is the count of arguments after it. On
 * success returns true with *nkeys; else *err is one of the texts above
 * (FCALL says SCRIPT_ERR_NUMKEYS_FCALL for a non-number, EVAL
 * SCRIPT_ERR_NOT_INT). */
bool script_parse_numkeys(struct slice s, int nargs, bool fcall, int *nkeys, const char **err);

/* redis.log() outside a run (while FUNCTION LOAD runs a library's code):
 * the process-wide logger, NULL to drop; runs log through host->log. */
void script_set_log(void (*fn)(int level, const char *msg, size_t len));

/* lua-enable-deprecated-api (Redis's hidden, immutable config): setfenv,
 * getfenv and newproxy exist in Lua states created after this; off by
 * default, as in Redis since CVE-2025-46818. */
void script_set_deprecated_api(bool on);

/* ---- engines ------------------------------------------------------------ */

struct script_engine;

struct script_engine *script_engine_new(void);
void script_engine_free(struct script_engine *e);
/* Bytes used by the engine's EVAL state (INFO used_memory_lua /
 * used_memory_vm_eval) and functions state (used_memory_vm_functions), as
 * of its last run, load or compile: readable from any thread. */
size_t script_engine_memory(const struct script_engine *e);
size_t script_engine_functions_memory(const struct script_engine *e);

/* ---- EVAL scripts ---------------------------------------------------------- */

/* SHA1 of p as 40 lowercase hex digits and a NUL (redis.sha1hex, script ids). */
void script_sha1hex(const void *p, size_t len, char out[41]);
/* The same 20 bytes unprinted (also DEBUG DIGEST's hash). */
void script_sha1(const void *data, size_t len, unsigned char out[20]);

/* The flags a body's shebang declares (SCRIPT_FLAG_EVAL_COMPAT without one),
 * without compiling it: what the router needs before running an EVAL of a
 * body not loaded yet. false with Redis's error text in err ("ERR
 * Unexpected engine in script shebang: ...", ...), NUL-terminated. */
bool script_body_flags(struct slice body, int *flags, struct rbuf *err);

/* SCRIPT LOAD / EVAL's implicit load: compile body on this thread (first
 * time only), register it for every thread, write its SHA1 and flags.
 * false on a shebang or compile error, with Redis's error text in err
 * ("ERR Error compiling script (new function): user_script:1: ..."),
 * NUL-terminated (err->len excludes the NUL). */
bool script_load(struct script_engine *e, struct slice body, char sha[41], int *flags, struct rbuf *err);

/* Whether sha (40 hex digits, any case) is registered, and its flags (flags
 * may be NULL). With an engine, a script seen before on its thread is found
 * without the lock and one registered elsewhere is compiled here then, so a
 * following script_run on this thread finds it; with e NULL only the
 * registry is asked (under its lock): SCRIPT EXISTS, or a thread that will
 * not run the script itself. */
bool script_exists(struct script_engine *e, struct slice sha, int *flags);

/* SCRIPT FLUSH: forget every script on every thread. */
void script_flush_all(void);

/* EVAL/EVALSHA: run script sha with argv[0..nkeys) as KEYS and the rest as
 * ARGV (argv is what follows numkeys), write its result or error into r in
 * r->resp. NOT_FOUND (nothing written) when sha is not registered. */
int script_run(struct script_engine *e, struct slice sha, const struct slice *argv, int argc, int nkeys,
               const struct script_host *host, struct reply *r);

/* ---- functions (FUNCTION / FCALL) ---------------------------------------------- */

/* FUNCTION LOAD [REPLACE] code ("#!lua name=lib\n..."): run the library's
 * code on this engine to register its functions (500 ms load timeout), then
 * publish the library to every thread. true with the library's name in
 * name (NUL-terminated); false with Redis's error text in err. */
bool script_function_load(struct script_engine *e, struct slice code, bool replace,
                          struct rbuf *name, struct rbuf *err);

/* FUNCTION DELETE lib: false with "ERR Library not found" in err. */
bool script_function_delete(struct slice library, struct rbuf *err);

/* FUNCTION FLUSH. */
void script_function_flush(void);

/* Whether a function of that name (any case) exists, and its flags (NULL ok). */
bool script_function_exists(struct script_engine *e, struct slice name, int *flags);

/* FCALL/FCALL_RO: like script_run, for the function name (any case). */
int script_fcall(struct script_engine *e, struct slice name, const struct slice *argv, int argc, int nkeys,
                 const struct script_host *host, struct reply *r);

/* FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: the whole reply (an array
 * of maps, Redis's fields and order); pattern NULL for every library. */
void script_function_list(struct reply *r, const struct slice *pattern, bool withcode);

/* FUNCTION STATS' "engines" value: a map LUA -> {libraries_count, functions_count}. */
void script_function_stats_engines(struct reply *r);

/* FUNCTION DUMP: fn(arg, name, code) for every library (code is the full
 * FUNCTION LOAD text), under the registry lock: fn must not call back. */
void script_function_foreach(void (*fn)(void *arg, struct slice name, struct slice code), void *arg);

/* FUNCTION RESTORE's last step, the payload already decoded into library
 * codes: load them all (no timeout), then APPEND (fail on an existing
 * library), REPLACE (replace libraries of the same name) or FLUSH (drop
 * every library first); all or nothing. false with Redis's error in err
 * ("ERR Library lib already exists", "ERR Function f already exists", ...). */
enum script_restore_policy { SCRIPT_RESTORE_APPEND, SCRIPT_RESTORE_REPLACE, SCRIPT_RESTORE_FLUSH };
bool script_function_restore(struct script_engine *e, const struct slice *codes, size_t n,
                             enum script_restore_policy policy, struct rbuf *err);

/* ---- figures ------------------------------------------------------------------ */

struct script_stats {
    size_t scripts;          /* number_of_cached_scripts */
    size_t scripts_bytes;    /* bodies and their entries (used_memory_scripts_eval) */
    size_t libraries;        /* FUNCTION STATS libraries_count */
    size_t functions;        /* functions_count (number_of_functions) */
    size_t functions_bytes;  /* library codes and entries (used_memory_functions) */
};
void script_stats(struct script_stats *s);

#endif
