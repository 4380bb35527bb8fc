/*
 * The command table and the context a command runs in.
 *
 * One table (src/cmd/command_table.c) drives everything about a command:
 * arity, flags, key positions, the handler, and the metadata that COMMAND
 * INFO/DOCS report. The dispatcher reads the table to validate a request and
 * decide where it runs; handlers read their arguments from cmd_ctx, reach the
 * keyspace through db.h and write their reply through reply.h. A handler
 * never parses RESP and never touches a socket.
 */
#ifndef RINGKV_COMMAND_H
#define RINGKV_COMMAND_H

#include <stdatomic.h>

#include "ringkv/common.h"
#include "ringkv/reply.h"

struct cmd_ctx;
struct client;
struct worker;
struct shard;
struct block_record;
struct slowlog_entry;
enum acl_verdict;
enum acl_context;

typedef void (*command_proc)(struct cmd_ctx *c);

/* Command flags */
#define CMD_WRITE      (1u << 0)
#define CMD_READONLY   (1u << 1)
#define CMD_FAST       (1u << 2)
#define CMD_ADMIN      (1u << 3)
#define CMD_NOAUTH     (1u << 4)   /* allowed before AUTH (AUTH, HELLO, QUIT) */
#define CMD_CONN       (1u << 5)   /* needs the client: runs on the connection's thread, no keyspace */
#define CMD_ALLSHARDS  (1u << 6)   /* touches every shard (DBSIZE, KEYS, FLUSHALL, ...) */
#define CMD_DENYOOM    (1u << 7)
#define CMD_LOADING    (1u << 8)
#define CMD_STALE      (1u << 9)
#define CMD_NOSCRIPT   (1u << 10)
#define CMD_BLOCKING   (1u << 11)
#define CMD_MOVABLEKEYS (1u << 12) /* key positions depend on arguments: keys_fn decides */
#define CMD_SENTINEL   (1u << 13)   /* available in sentinel mode (not reported, as in Redis) */
#define CMD_NO_MULTI   (1u << 16)   /* not allowed inside MULTI */
#define CMD_ALLOW_BUSY (1u << 17)   /* allowed while a script is busy */
#define CMD_TXCTL      (1u << 14) /* MULTI EXEC DISCARD WATCH: the connection layer runs them, never queued */
#define CMD_PUBSUB     (1u << 20) /* Redis's "pubsub" flag */
#define CMD_SUBSCRIBE  (1u << 21) /* (P|S)(UN)SUBSCRIBE: the connection layer runs them */
#define CMD_IDENTITY   (1u << 15) /* runs where its keys are held with the client's identity (WATCH): never forwarded */
#define CMD_SCRIPT     (1u << 18) /* EVAL, FCALL, ...: never forwarded; holds its keys' shards and those it learned it needs (script_host.h) */
#define CMD_SKIP_MONITOR (1u << 22) /* Redis's skip_monitor (EVAL, FCALL: their commands are shown instead) */
#define CMD_NO_MANDATORY_KEYS (1u << 23) /* Redis's no_mandatory_keys */
#define CMD_MAY_REPLICATE (1u << 24) /* Redis's may_replicate (PUBLISH, PFCOUNT, EVAL): CLIENT PAUSE WRITE holds it; hidden from COMMAND INFO, as in Redis */
#define CMD_PROTECTED  (1u << 25) /* Redis's protected: DEBUG and MODULE LOAD/LOADEX/UNLOAD, allowed by enable-debug-command
                                     and enable-module-command (checked by the connection layer); hidden from COMMAND INFO */

/* Key-spec flags (Redis's CMD_KEY_*): how a command uses each key, as
 * COMMAND INFO and COMMAND GETKEYSANDFLAGS name them. */
#define KS_RO             (1u << 0)    /* reads the key's value */
#define KS_RW             (1u << 1)    /* reads and writes it */
#define KS_OW             (1u << 2)    /* overwrites it, whatever it held */
#define KS_RM             (1u << 3)    /* deletes it */
#define KS_ACCESS         (1u << 4)    /* returns (part of) the value */
#define KS_UPDATE         (1u << 5)    /* changes the value */
#define KS_INSERT         (1u << 6)    /* only adds to it */
#define KS_DELETE         (1u << 7)    /* only removes from it */
#define KS_NOT_KEY        (1u << 8)
#define KS_INCOMPLETE     (1u << 9)
#define KS_VARIABLE_FLAGS (1u << 10)   /* the arguments decide (SET ... GET) */

/* One key spec as Redis's command JSON gives it: the keys start at argv
 * index `begin` and run as a range (lastkey relative to begin, -1 = the
 * last argument; keystep; limit) or follow a key count (keynumidx relative
 * to begin, firstkey relative to it, keystep). */
struct key_spec {
    uint16_t flags;              /* KS_* */
    int8_t begin;
    bool keynum;
    int8_t a, b, c;              /* range: lastkey, keystep, limit; keynum: keynumidx, firstkey, keystep */
    const char *notes;           /* NULL: none */
    const char *keyword;         /* begin_search by keyword (XREAD's STREAMS), from argument `begin` on; NULL: by index */
};

/* A command's key specs (src/cmd/command_keyspecs.c): one, or two when
 * its first key is used differently from the others (LMOVE, ZUNIONSTORE). */
struct command_key_specs {
    const char *name;
    unsigned n;
    struct key_spec spec[2];
};

/* Fills positions of key arguments for CMD_MOVABLEKEYS commands; returns count. */
typedef int (*command_keys_fn)(int argc, const struct slice *argv, int *pos, int maxpos);

struct command {
    const char *name;            /* lowercase */
    int arity;                   /* Redis convention: -N means at least N */
    uint32_t flags;
    int first_key, last_key, key_step;   /* legacy key spec; last_key -1 = last argument */
    command_proc proc;
    command_keys_fn keys_fn;
    /* COMMAND INFO / DOCS metadata */
    const char *acl_categories;  /* space separated, e.g. "@write @string @slow" */
    const char *summary;
    const char *since;
    const char *group;
    const char *complexity;
    const char *args_doc;        /* argument list in a compact form, see command_docs.c */
    const struct command *subcommands;   /* NULL-terminated by name == NULL */
    /* Commands that need something from every thread (CLIENT LIST, INFO)
     * have this run on each shard's own thread first, writing into
     * c->parts[shard id]; proc then runs once with every part. */
    command_proc per_shard;
};

struct cmd_ctx {
    int argc;
    struct slice *argv;
    const struct command *cmd;
    struct reply r;
    int db;                      /* the client's selected database */
    bool multi;                  /* keys may span shards: route each by slot */
    struct shard *shard;         /* the executing shard */
    struct shard **shards;       /* every shard; touch others only when multi or CMD_ALLSHARDS */
    unsigned nshards;
    struct client *client;       /* the connection, NULL when run on its behalf by another thread */
    struct worker *worker;       /* the executing thread */
    long long now_ms;            /* cached clock of this loop iteration */
    long long dirty;             /* changes this call made to the keyspace (db_changed) */
    struct rbuf *parts;          /* per-shard results of command.per_shard, by shard id */
    uint64_t held;               /* the shards this run holds (0: only the executing one) */
    /* scripts (CMD_SCRIPT) */
    bool may_rerun;              /* in: stopping before it wrote runs it again (not inside EXEC) */
    uint64_t rerun_mask;         /* out: it stopped, having written nothing: run it again holding these */
    /* blocking commands (CMD_BLOCKING) */
    const struct block_record *waiter;   /* in: who waits if it blocks (NULL: nobody) */
    bool block;                  /* out: nothing to serve, the client waits on its keys */
    bool timed_out;              /* in: the wait is over, reply the timeout reply */
    bool rerun;                  /* in: woken after waiting: a key of another type is just not ready */
    long long block_timeout_ms;  /* out: the wait's timeout (0 = forever) */
    /* in/out: what a blocking command keeps from its first run to the
     * runs after it was woken (XREAD's "$" as the IDs it meant then); the
     * connection empties it once the command is done. NULL: none. */
    struct rbuf *block_memo;
    /* in: a non-consuming waiter (XREAD, XREADGROUP): every write to its
     * keys wakes it, not just the first in line (db.h) */
    bool block_every;
    bool in_script;              /* called by a script (redis.call) */
    bool no_touch;               /* CLIENT NO-TOUCH: reads leave the keys' access stamps */
    /* client-side caching (cmd_tracking.c) */
    const struct block_record *reader;   /* in: a read-only command records its keys for this client (NULL: none) */
    uint32_t origin_worker, origin_idx, origin_gen;   /* a forwarded command's client (worker UINT32_MAX: none) */
};

/* After a handler ran: a write command that changed something wakes the
 * clients blocked on its keys (a RENAME, MOVE, COPY or SWAPDB can put a
 * list in place as well as a push). WATCH was told of each key as it
 * changed (db_changed, watch.h). Costs one flag test and, for writes that
 * changed something, a relaxed load while nobody waits. */
void ctx_wrote_slow(struct cmd_ctx *c);
/* After a blocking command that did not block (command_call): its waiter
 * records go, and the next waiter of its keys gets its turn. */
void ctx_served(struct cmd_ctx *c);
extern _Atomic long rk_waiter_keys;
/* Client-side caching: a write command invalidates its keys while anyone
 * tracks (cmd_tracking.c); ctx_track_read records a tracked client's reads. */
void ctx_track_wrote(struct cmd_ctx *c);
void ctx_track_read(struct cmd_ctx *c);
/* Record every key of c's command for c->reader (a script that calls a
 * read-only command tracks its declared keys, as Redis does). */
void ctx_track_keys(struct cmd_ctx *c);
extern _Atomic long rk_tracking_active;
/* Adds c->dirty to the executing shard's count (rdb_changes_since_last_save). */
void ctx_count_dirty(struct cmd_ctx *c);
static inline void ctx_wrote(struct cmd_ctx *c) {
    if (c->dirty) ctx_count_dirty(c);
    if (RK_UNLIKELY(c->cmd->flags & CMD_WRITE) && !c->block &&
        RK_UNLIKELY(atomic_load_explicit(&rk_tracking_active, memory_order_relaxed) != 0))
        ctx_track_wrote(c);
    if (RK_UNLIKELY(c->cmd->flags & CMD_WRITE) && !c->block && c->dirty &&
        RK_UNLIKELY(atomic_load_explicit(&rk_waiter_keys, memory_order_relaxed) != 0))
        ctx_wrote_slow(c);
}

/* For a blocking command that found nothing to serve: register the client
 * on key (call for each key) and set c->block. */
void ctx_block_on(struct cmd_ctx *c, struct slice key);
/* The usual tail of a blocking command that found nothing: wait on
 * argv[first..end) for timeout_ms (0 = forever), or reply the timeout. */
void ctx_block_or_timeout(struct cmd_ctx *c, int first, int end, long long timeout_ms);
bool arg_timeout_or_reply(struct cmd_ctx *c, struct slice s, long long *ms);   /* seconds, as Redis */
/* Whether a blocking command (with a waiter identity) passes over key as
 * if it had nothing for it, and keeps waiting on it: run again after a
 * wake-up, when the key now holds another type, where its first run
 * replies WRONGTYPE (Redis only serves a waiter from a key of the right
 * type); and when the key is ready but clients whose commands were taken
 * up before this one wait on it (they are served first, as in Redis,
 * where they would have been served before this command ran). */
bool waiter_skips_key(struct cmd_ctx *c, struct slice key, unsigned type);
bool arg_cursor_or_reply(struct cmd_ctx *c, struct slice s, uint64_t *cursor);  /* ERR invalid cursor */

/* The options of SCAN, HSCAN, SSCAN and ZSCAN. */
struct scan_args {
    long long count;           /* COUNT, default 10 */
    struct slice pattern;      /* MATCH; ptr NULL when absent or "*" (everything) */
    struct slice type;         /* TYPE (SCAN only); ptr NULL when absent */
};
/* Parse [MATCH pattern] [COUNT count] [TYPE type] from argv[first] on; TYPE
 * only when allow_type. Replies Redis's syntax error on anything else. */
bool scan_args_or_reply(struct cmd_ctx *c, int first, bool allow_type, struct scan_args *a);
bool scan_matches(const struct scan_args *a, struct slice s);
/* The reply's frame: the next cursor, then an array of n elements follows. */
void reply_scan_head(struct cmd_ctx *c, uint64_t cursor, size_t n);
/* HSCAN and ZSCAN over a hashtable or skiplist gather as Redis's
 * scanGenericCommand does: `step` (one call of the structure's cursor scan,
 * appending element pointers to *found) runs over COUNT slots, at most 2^20,
 * until COUNT elements are in, the cursor is back to 0, or 10 calls have
 * passed on a sparse structure. Returns the next cursor. */
typedef uint64_t (*scan_step_fn)(const void *obj, uint64_t cursor, size_t slots, struct rbuf *found);
uint64_t scan_gather(const struct scan_args *a, const void *obj, scan_step_fn step, uint64_t cursor,
                     struct rbuf *found);
/* HRANDFIELD/ZRANDMEMBER key count [WITH<flag>]: argv[2] and argv[3]. */
bool arg_rand_count_or_reply(struct cmd_ctx *c, const char *with_flag, long long *count, bool *with);
/* Most samples a negative count may ask for: replies are built whole. */
#define RAND_MAX_REPEAT (1LL << 24)

void ctx_init(struct cmd_ctx *ctx, struct worker *w, const struct command *cmd,
              int argc, struct slice *argv, int db, uint8_t resp, struct rbuf *out);

/* Every command, subcommands included, has an index below COMMAND_IDS_MAX
 * (per-command statistics live in arrays of that size); -1 for a command
 * not in the table. Indexes run over the table in order, each container
 * followed by its subcommands. */
#define COMMAND_IDS_MAX 512
int command_index(const struct command *cmd);
size_t command_index_count(void);
const struct command *command_by_index(size_t i);

/* Run the command's handler, counting it for INFO commandstats (command_stats.c). */
void command_call(struct cmd_ctx *c);
/* Count a command refused before it ran (wrong arity, NOAUTH). */
void command_rejected(const struct command *cmd);
/* Count a call of a command that runs without command_call (MULTI, EXEC
 * and DISCARD, which the connection layer answers itself); failed: its
 * reply was an error. */
void command_count_call(const struct command *cmd, bool failed);
/* Count a failure of a call counted apart: a blocked command that CLIENT
 * UNBLOCK ends, which Redis 7.0 counts as failed however it ends. */
void command_count_failure(const struct command *cmd);

/* The key specs of cmd, NULL if it has no keys (command_keyspecs.c). */
const struct command_key_specs *command_key_specs(const struct command *cmd);
/* The flags of the key at argv[pos], the nth (from 0) of the command's keys. */
unsigned command_key_flags(const struct command *cmd, int argc, const struct slice *argv, int nth);
/* The flags of a key whose spec says KS_VARIABLE_FLAGS (spec flags in
 * `flags`), as this call's arguments make them (SET ... GET, BITFIELD). */
unsigned command_variable_key_flags(const struct command *cmd, int argc, const struct slice *argv, unsigned flags);
/* COMMAND INFO's "key specifications" array, and a set of KS_* flag names. */
void key_specs_reply(struct reply *r, const struct command *cmd);
void key_flags_reply(struct reply *r, unsigned flags);

/* The command a request's name runs (any case): the table's name, or the
 * one rename-command gave it. */
const struct command *command_lookup(const char *name, size_t len);
/* The command argv names: a container's subcommand when it has one
 * (NULL: unknown), as the dispatcher resolves it. */
const struct command *command_resolve(int argc, const struct slice *argv);
const struct command *command_lookup_sub(const struct command *parent, struct slice name);
/* rename-command from to (a config-file line): from, a top-level command
 * by the name it answers to, answers to `to` instead, or to nothing when
 * to is ""; COMMAND and its subcommands then list it under its own name
 * (as Redis, whose commands keep their fullname), or not at all. Only while
 * the configuration loads, before any worker runs. Returns NULL, or
 * Redis's error text. */
const char *command_rename(const char *from, const char *to);
/* A top-level command by its own name, whatever it was renamed to: for
 * the server's own use of a command (a save point's BGSAVE). */
const struct command *command_original(const char *name);
/* Iterate the commands clients can call, renamed ones included under their
 * own names (COMMAND, COMMAND COUNT, LIST, DOCS, LATENCY HISTOGRAM). */
size_t command_count(void);
const struct command *command_at(size_t i);
void command_table_init(void);

/* The command groups of the data-type modules (cmd_<type>.c), each ended
 * by an entry whose name is NULL. command_table.c lists them all. */
extern const struct command list_commands[];
extern const struct command hash_commands[];
extern const struct command set_commands[];
extern const struct command zset_commands[];
extern const struct command stream_commands[];
extern const struct command stream_group_commands[];
extern const struct command multi_commands[];
extern const struct command bits_commands[];
extern const struct command pubsub_commands[];
extern const struct command script_commands[];

/* Positions of a command's key arguments; returns the number of keys. */
int command_key_positions(const struct command *cmd, int argc, const struct slice *argv, int *pos, int maxpos);

/* COMMAND DOCS arguments, parsed from a command's args_doc (command_docs.c).
 * The parse is a flat array in depth-first order: each argument is followed
 * by its nsub children (and their children), so the reply is one walk. */
#define DOC_ARG_OPTIONAL       (1u << 0)
#define DOC_ARG_MULTIPLE       (1u << 1)
#define DOC_ARG_MULTIPLE_TOKEN (1u << 2)

struct doc_arg {
    struct slice name;
    const char *type;            /* "key", "string", ... "oneof", "block" */
    struct slice display, token, since, deprecated_since;   /* len 0: absent */
    unsigned flags;              /* DOC_ARG_* */
    size_t nsub;                 /* direct children (oneof, block) */
};

struct doc_args {
    struct doc_arg *arg;         /* slices point into the parsed string */
    size_t n, cap;
    size_t ntop;                 /* arguments at the top level */
};

/* Parse args_doc (NULL or "" is no arguments). On a malformed string returns
 * false with a message in err (may be NULL); out is then empty. */
bool doc_args_parse(const char *args_doc, struct doc_args *out, char *err, size_t errlen);
/* The "arguments" array of COMMAND DOCS, in Redis 7.0's shape. */
void doc_args_reply(struct reply *r, const struct doc_args *args);
void doc_args_free(struct doc_args *args);

/* keys_fn for the usual movable-key shapes (cmd_args.c): "cmd numkeys key..."
 * (SINTERCARD, LMPOP, ZMPOP, ZUNION, ...) and "cmd dest numkeys key..."
 * (ZUNIONSTORE, ...). A malformed numkeys yields no keys: the command then
 * runs locally and its handler replies the error. */
int keys_numkeys_first(int argc, const struct slice *argv, int *pos, int maxpos);
int keys_dest_numkeys(int argc, const struct slice *argv, int *pos, int maxpos);
int keys_numkeys_second(int argc, const struct slice *argv, int *pos, int maxpos);   /* "cmd timeout numkeys key..." */

/* Argument helpers for handlers (cmd_args.c): false after replying the error. */
bool arg_ll_or_reply(struct cmd_ctx *c, struct slice s, long long *v);   /* ERR value is not an integer... */
/* An integer >= min; msg (with its "ERR " prefix) for both a non-integer and a smaller value. */
bool arg_min_or_reply(struct cmd_ctx *c, struct slice s, long long min, long long *v, const char *msg);
/* The slot of key's entry if it holds an object of `type`, NULL if the key is
 * absent. A key of another type gets WRONGTYPE: *wrong is set, NULL returned. */
struct kv_entry **lookup_typed_or_reply(struct cmd_ctx *c, struct slice key, unsigned type,
                                        unsigned flags, bool *wrong);
/* A collection command's write, in two steps. obj_write: the slot and the
 * object (entry_obj_for_write) of key, both NULL when the key is absent;
 * false after WRONGTYPE. obj_commit, also when nothing changed: store obj,
 * which now has len elements, back into the entry (the caller must not use
 * it afterwards), or create the key for a new object, or delete the key
 * (or free a new object) when len is 0. `changed`: the command changed the
 * existing object (as Redis's signalModifiedKey calls: WATCH and c->dirty
 * see only real changes); creating or deleting the key always counts. */
bool obj_write(struct cmd_ctx *c, struct slice key, unsigned type, struct kv_entry ***slot, void **obj);
void obj_commit(struct cmd_ctx *c, struct slice key, unsigned type, struct kv_entry **slot, void *obj,
                size_t len, bool changed);

/* OBJECT ENCODING's and OBJECT REFCOUNT's answers for an entry (cmd_keys.c),
 * also in DEBUG OBJECT's line. */
const char *object_encoding(const struct kv_entry *e);
int object_refcount(const struct kv_entry *e);

/* Memory figures that INFO and MEMORY share (cmd_memory.c), from
 * used_memory (mem.h). */
size_t memory_rss_bytes(void);
const char *memory_allocator_name(void);   /* "mimalloc-2.0.9" or "libc" */
/* Remember used_memory now as MEMORY STATS's startup.allocated (called
 * once, when the server is up and before the dataset loads). */
void memory_note_startup(void);
/* INFO's memory section, every line but the blank one after it. */
void memory_info(struct cmd_ctx *c, struct rbuf *out);


/* Persistence (cmd_persist.c). Each runs holding every shard (or, at
 * start and exit, with no worker touching them). */
struct script_engine;
bool persist_shutdown_save(struct cmd_ctx *c);      /* SHUTDOWN's save: true if saved */
void persist_after_flushall(struct cmd_ctx *c);
void persist_debug_reload(struct cmd_ctx *c);
void persist_info(struct cmd_ctx *c, struct rbuf *out);
/* Load dbfilename into the shards (FUNCTION libraries on engine e):
 * 0, 1 when there is no file, -1 with the reason in err. */
int persist_load(struct shard **shards, unsigned n, struct script_engine *e, bool merge, long long now_ms,
                 struct rbuf *err);
/* Save now (SIGTERM, SIGINT with save points): 0 or -1. */
int persist_save_at_exit(struct shard **shards, unsigned n);
/* The AOF's files at startup (aof.h): 0, 1 when there are none, -1 with err. */
int persist_load_aof(struct shard **shards, unsigned n, struct script_engine *e, struct rbuf *err);
/* Run by worker 0's cron as a whole-keyspace transaction when appendonly
 * changed or a rewrite is due. */
extern const struct command aof_switch_command;

/* What the connection commands (CLIENT, RESET) ask of the connection
 * layer. It fills these in at start, so the command layer never calls up
 * into the I/O layer. */
enum client_mode { CLIENT_MODE_NO_EVICT, CLIENT_MODE_NO_TOUCH };
struct tracking_opts;
struct conn_ops {
    void (*close)(struct client *c);
    void (*info_line)(struct client *c, bool current, struct rbuf *out, long long now_ms);   /* current: c runs this command */
    bool (*unblock)(struct client *c, bool error);     /* CLIENT UNBLOCK; false if not blocked */
    void (*reset_transaction)(struct client *c);       /* RESET: discard MULTI, unwatch */
    /* CLIENT PAUSE/UNPAUSE, MONITOR, CLIENT NO-EVICT/NO-TOUCH (io/pause.c, io/monitor.c) */
    void (*pause)(struct worker *w, long long end_ms, bool all);
    void (*unpause)(struct worker *w);
    const char *(*monitor)(struct client *c);           /* NULL, or the error to reply */
    void (*set_mode)(struct client *c, int mode, bool on);   /* CLIENT_MODE_* */
    void (*reset_controls)(struct client *c);           /* RESET: MONITOR, NO-EVICT, NO-TOUCH, REPLY off */
    void (*reset_pubsub)(struct client *c);            /* RESET: leave every subscription */
    bool (*subs_allowed)(struct client *c);            /* its user may still have all its subscriptions (acl.h) */
    /* CLIENT TRACKING and CACHING (io/tracking.c) */
    void (*tracking_on)(struct client *c, const struct tracking_opts *o);
    void (*tracking_off)(struct client *c);
    void (*tracking_caching)(struct client *c);
    void (*tracking_reset)(struct client *c);          /* RESET: off, BCAST registrations dropped later */
    /* scripts (cmd/script_host.c): a shard taken while a script runs
     * (msg/tx.c's tx_take_now and friends), busy scripts (io), and the
     * MONITOR lines of scripts (io/monitor.c) */
    bool (*take_shard_now)(struct worker *w, unsigned shard);
    void (*release_taken)(struct worker *w, uint64_t mask);
    void (*service_takes)(struct worker *w);
    void (*busy)(bool on);
    void (*serve_while_busy)(struct worker *w, struct client *caller);
    void (*monitor_script)(struct worker *w, const struct client *caller, int db, int argc, const struct slice *argv);
    /* a slow command's entry gets its client's address and name on the
     * client's thread, and goes into the log (slowlog.h) */
    void (*slow_entry)(struct cmd_ctx *c, struct slowlog_entry *e);
    /* an ACL denial goes into the ACL log with the client's CLIENT LIST line,
     * as its user (username.ptr NULL) or the one named (a failed AUTH) */
    void (*acl_log)(struct client *c, enum acl_verdict v, enum acl_context ctx, struct slice object,
                    struct slice username);
};
extern struct conn_ops rk_conn_ops;

/* Handlers, grouped by module. */
#define X(fn) void fn(struct cmd_ctx *c);
#include "ringkv/command_procs.h"
#undef X

#endif
