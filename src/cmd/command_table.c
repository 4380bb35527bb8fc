/*
 * The command table: every command ringkv knows, with its arity, flags, key
 * positions, handler and the metadata COMMAND INFO/DOCS report.
 *
 * Container commands (CLIENT, CONFIG, COMMAND) list their subcommands as
 * commands of their own, named "parent|sub" as Redis names them; the
 * dispatcher resolves the subcommand first, so each has its own arity,
 * flags and routing. A subcommand without a handler uses its parent's.
 *
 * Lookup is a small open-addressing table over the lowercased name, built
 * once at start. The data-type modules define their own groups of commands
 * (cmd_<type>.c); `groups` below lists every group, this file's included.
 *
 * Each command, subcommands included, also gets a dense index (the order of
 * the table, each container followed by its subcommands), found from its
 * address through a second small table: per-command statistics are arrays
 * indexed by it (command_stats.c).
 */
#include "ringkv/command.h"
#include "ringkv/command_stats.h"
#include "ringkv/command_def.h"
#include "ringkv/notify.h"

#include <stdlib.h>
#include <strings.h>

static const struct command client_subs[] = {
    CMD("client|id", 2, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Returns the unique client ID of the connection.", "5.0.0", "connection", "O(1)", NULL),
    CMD("client|setname", 3, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Sets the connection name.", "2.6.9", "connection", "O(1)",
        "connection-name:string"),
    CMD("client|getname", 2, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Returns the name of the connection.", "2.6.9", "connection", "O(1)", NULL),
    CMD("client|info", 2, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Returns information about the connection.", "6.2.0", "connection", "O(1)", NULL),
    CMD("client|setinfo", 4, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Sets information specific to the client or connection.", "7.2.0", "connection", "O(1)",
        "attr:oneof(libname:string=LIB-NAME libver:string=LIB-VER)"),   /* 7.2's: 7.0 has no SETINFO */
    CMD("client|no-evict", 3, CMD_CONN | CMD_NOSCRIPT | A | L, 0, 0, 0, cmd_client, "@admin @slow @dangerous @connection", "Sets the client eviction mode of the connection.", "7.0.0", "connection", "O(1)",
        "enabled:oneof(on:pure-token=ON off:pure-token=OFF)"),
    CMD("client|no-touch", 3, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0", "connection", "O(1)",
        "enabled:oneof(on:pure-token=ON off:pure-token=OFF)"),   /* 7.2's */
    CMD("client|pause", -3, CMD_CONN | CMD_NOSCRIPT | A | L | CMD_SENTINEL, 0, 0, 0, cmd_client, "@admin @slow @dangerous @connection", "Suspends commands processing.", "2.9.50", "connection", "O(1)",
        "timeout:integer [mode:oneof@6.2.0(write:pure-token=WRITE all:pure-token=ALL)]"),
    CMD("client|unpause", 2, CMD_CONN | CMD_NOSCRIPT | A | L | CMD_SENTINEL, 0, 0, 0, cmd_client, "@admin @slow @dangerous @connection", "Resumes processing commands from paused clients.", "6.2.0", "connection", "O(N) Where N is the number of paused clients", NULL),
    CMD("client|reply", 3, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client, "@slow @connection", "Instructs the server whether to reply to commands.", "3.2.0", "connection", "O(1)",
        "on_off_skip:oneof(on:pure-token=ON off:pure-token=OFF skip:pure-token=SKIP)"),
    CMD("client|help", 2, CMD_CONN | L, 0, 0, 0, cmd_client, "@slow @connection", "Returns helpful text about the different subcommands.", "5.0.0", "connection", "O(1)", NULL),
    { "client|list", -2, CMD_CONN | CMD_NOSCRIPT | CMD_ALLSHARDS | A | L, 0, 0, 0, cmd_client, NULL, "@admin @slow @dangerous @connection",
      "Lists open connections.", "2.4.0", "connection", "O(N) where N is the number of client connections",
      "[normal_master_replica_pubsub:oneof=TYPE@5.0.0(normal:pure-token=NORMAL master:pure-token=MASTER "
      "replica:pure-token=REPLICA pubsub:pure-token=PUBSUB)] [id:block=ID@6.2.0(client-id:integer ...)]",
      NULL, cmd_client_gather },
    { "client|unblock", -3, CMD_CONN | CMD_NOSCRIPT | CMD_ALLSHARDS | A | L, 0, 0, 0, cmd_client, NULL, "@admin @slow @dangerous @connection",
      "Unblocks a client blocked by a blocking command from a different connection.", "5.0.0", "connection", "O(log N) where N is the number of client connections",
      "client-id:integer [timeout_error:oneof(timeout:pure-token=TIMEOUT error:pure-token=ERROR)]",
      NULL, cmd_client_unblock_gather },
    { "client|tracking", -3, CMD_CONN | CMD_NOSCRIPT | CMD_ALLSHARDS | L, 0, 0, 0, cmd_client_tracking, NULL, "@slow @connection",
      "Controls server-assisted client-side caching for the connection.", "6.0.0", "connection", "O(1). Some options may introduce additional complexity.",
      "status:oneof(on:pure-token=ON off:pure-token=OFF) [client-id:integer=REDIRECT] [prefix:string=PREFIX ...] "
      "[bcast:pure-token=BCAST] [optin:pure-token=OPTIN] [optout:pure-token=OPTOUT] [noloop:pure-token=NOLOOP]",
      NULL, cmd_client_tracking_gather },
    CMD("client|caching", 3, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client_caching, "@slow @connection", "Instructs the server whether to track the keys in the next request.", "6.0.0", "connection", "O(1)",
        "mode:oneof(yes:pure-token=YES no:pure-token=NO)"),
    CMD("client|getredir", 2, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client_getredir, "@slow @connection", "Returns the client ID to which the connection's tracking notifications are redirected.", "6.0.0", "connection", "O(1)", NULL),
    CMD("client|trackinginfo", 2, CMD_CONN | CMD_NOSCRIPT | L, 0, 0, 0, cmd_client_trackinginfo, "@slow @connection", "Returns information about server-assisted client-side caching for the connection.", "6.2.0", "connection", "O(1)", NULL),
    { "client|kill", -3, CMD_CONN | CMD_NOSCRIPT | CMD_ALLSHARDS | A | L, 0, 0, 0, cmd_client, NULL, "@admin @slow @dangerous @connection",
      "Terminates open connections.", "2.4.0", "connection", "O(N) where N is the number of client connections",
      /* the old form CLIENT KILL ip:port, or filters */
      "filter:oneof(ip:port:string!2.8.12 new-format:oneof([client-id:integer=ID@2.8.12] "
      "[normal_master_slave_pubsub:oneof=TYPE@2.8.12(normal:pure-token=NORMAL master:pure-token=MASTER@3.2.0 "
      "slave:pure-token=SLAVE replica:pure-token=REPLICA@5.0.0 pubsub:pure-token=PUBSUB)] [username:string=USER] "
      "[ip:port:string=ADDR] [ip:port:string=LADDR@6.2.0] [yes/no:string=SKIPME]) ...)",
      NULL, cmd_client_gather },
    { 0 }
};

static const struct command config_subs[] = {
    CMD("config|get", -3, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_config, "@admin @slow @dangerous", "Returns the effective values of configuration parameters.", "2.0.0", "server", "O(N) when N is the number of configuration parameters provided",
        "parameter:block(parameter:string) ..."),
    CMD("config|set", -4, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_config, "@admin @slow @dangerous", "Sets configuration parameters in-flight.", "2.0.0", "server", "O(N) when N is the number of configuration parameters provided",
        "parameter_value:block(parameter:string value:string) ..."),
    CMD("config|resetstat", 2, A | L | CMD_NOSCRIPT | CMD_ALLSHARDS, 0, 0, 0, cmd_config, "@admin @slow @dangerous", "Resets the server's statistics.", "2.0.0", "server", "O(1)", NULL),
    CMD("config|rewrite", 2, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_config, "@admin @slow @dangerous", "Persists the effective configuration to file.", "2.8.0", "server", "O(1)", NULL),
    CMD("config|help", 2, L, 0, 0, 0, cmd_config, "@slow", "Returns helpful text about the different subcommands.", "5.0.0", "server", "O(1)", NULL),
    { 0 }
};

static const struct command command_subs[] = {
    CMD("command|count", 2, L, 0, 0, 0, cmd_command, "@slow @connection", "Returns a count of commands.", "2.8.13", "server", "O(1)", NULL),
    CMD("command|info", -2, L, 0, 0, 0, cmd_command, "@slow @connection", "Returns information about one, multiple or all commands.", "2.8.13", "server", "O(N) where N is the number of commands to look up",
        "[command-name:string ...]"),
    CMD("command|docs", -2, L, 0, 0, 0, cmd_command, "@slow @connection", "Returns documentary information about one, multiple or all commands.", "7.0.0", "server", "O(N) where N is the number of commands to look up",
        "[command-name:string ...]"),
    CMD("command|list", -2, L, 0, 0, 0, cmd_command, "@slow @connection", "Returns a list of command names.", "7.0.0", "server", "O(N) where N is the total number of Redis commands",
        "[filterby:oneof=FILTERBY(module-name:string=MODULE category:string=ACLCAT pattern:pattern=PATTERN)]"),
    CMD("command|getkeys", -4, L, 0, 0, 0, cmd_command, "@slow @connection", "Extracts the key names from an arbitrary command.", "2.8.13", "server", "O(N) where N is the number of arguments to the command", NULL),
    CMD("command|getkeysandflags", -4, L, 0, 0, 0, cmd_command, "@slow @connection", "Extracts the key names and access flags for an arbitrary command.", "7.0.0", "server", "O(N) where N is the number of arguments to the command", NULL),
    CMD("command|help", 2, L, 0, 0, 0, cmd_command, "@slow @connection", "Returns helpful text about the different subcommands.", "5.0.0", "server", "O(1)", NULL),
    { 0 }
};

static const struct command object_subs[] = {
    CMD("object|encoding", 3, R, 2, 2, 1, cmd_object, "@keyspace @read @slow", "Returns the internal encoding of a Redis object.", "2.2.3", "generic", "O(1)",
        "key:key"),
    CMD("object|freq", 3, R, 2, 2, 1, cmd_object, "@keyspace @read @slow", "Returns the logarithmic access frequency counter of a Redis object.", "4.0.0", "generic", "O(1)",
        "key:key"),
    CMD("object|idletime", 3, R, 2, 2, 1, cmd_object, "@keyspace @read @slow", "Returns the time since the last access to a Redis object.", "2.2.3", "generic", "O(1)",
        "key:key"),
    CMD("object|refcount", 3, R, 2, 2, 1, cmd_object, "@keyspace @read @slow", "Returns the reference count of a value of a key.", "2.2.3", "generic", "O(1)",
        "key:key"),
    CMD("object|help", 2, L, 0, 0, 0, cmd_object, "@keyspace @slow", "Returns helpful text about the different subcommands.", "6.2.0", "generic", "O(1)", NULL),
    { 0 }
};

/* SLOWLOG and LATENCY: one log and one set of events for the process,
 * which any thread reads under their locks (slowlog.h, latency.h). */
static const struct command slowlog_subs[] = {
    CMD("slowlog|get", -2, A | L, 0, 0, 0, cmd_slowlog, "@admin @slow @dangerous", "Returns the slow log's entries.", "2.2.12", "server", "O(N) where N is the number of entries returned",
        "[count:integer]"),
    CMD("slowlog|help", 2, L, 0, 0, 0, cmd_slowlog, "@slow", "Show helpful text about the different subcommands", "6.2.0", "server", "O(1)", NULL),
    CMD("slowlog|len", 2, A | L, 0, 0, 0, cmd_slowlog, "@admin @slow @dangerous", "Returns the number of entries in the slow log.", "2.2.12", "server", "O(1)", NULL),
    CMD("slowlog|reset", 2, A | L, 0, 0, 0, cmd_slowlog, "@admin @slow @dangerous", "Clears all entries from the slow log.", "2.2.12", "server", "O(N) where N is the number of entries in the slowlog", NULL),
    { 0 }
};

static const struct command latency_subs[] = {
    CMD("latency|doctor", 2, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_latency, "@admin @slow @dangerous", "Returns a human-readable latency analysis report.", "2.8.13", "server", "O(1)", NULL),
    CMD("latency|graph", 3, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_latency, "@admin @slow @dangerous", "Returns a latency graph for an event.", "2.8.13", "server", "O(1)",
        "event:string"),
    CMD("latency|help", 2, L, 0, 0, 0, cmd_latency, "@slow", "Returns helpful text about the different subcommands.", "2.8.13", "server", "O(1)", NULL),
    CMD("latency|histogram", -2, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_latency_histogram, "@admin @slow @dangerous", "Returns the cumulative distribution of latencies of a subset or all commands.", "7.0.0", "server", "O(N) where N is the number of commands with latency information being retrieved.",
        "[command:string ...]"),
    CMD("latency|history", 3, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_latency, "@admin @slow @dangerous", "Returns timestamp-latency samples for an event.", "2.8.13", "server", "O(1)",
        "event:string"),
    CMD("latency|latest", 2, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_latency, "@admin @slow @dangerous", "Returns the latest latency samples for all events.", "2.8.13", "server", "O(1)", NULL),
    CMD("latency|reset", -2, A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_latency, "@admin @slow @dangerous", "Resets the latency data for one or more events.", "2.8.13", "server", "O(1)",
        "[event:string ...]"),
    { 0 }
};

/* ACL SETUSER, DELUSER and LOAD change users while they hold every shard:
 * cmd_acl_apply runs on each thread in turn, the first making the change
 * and each closing its connections the change shuts out (cmd_acl.c). */
#define ACL_CHANGE(name, arity, summary, args) \
    { name, arity, A | L | CMD_NOSCRIPT | CMD_SENTINEL | CMD_ALLSHARDS, 0, 0, 0, cmd_acl, NULL, "@admin @slow @dangerous", \
      summary, "6.0.0", "server", "O(N). Where N is the number of configured users.", args, NULL, cmd_acl_apply }
#define ACL_READ(name, arity, flags, cats, summary, cx, args) \
    CMD(name, arity, (flags) | L | CMD_NOSCRIPT | CMD_SENTINEL, 0, 0, 0, cmd_acl, cats, summary, "6.0.0", "server", cx, args)

static const struct command acl_subs[] = {
    ACL_READ("acl|cat", -2, 0, "@slow", "Lists the ACL categories, or the commands inside a category.", "O(1) since the categories and commands are a fixed set.",
        "[categoryname:string]"),
    ACL_CHANGE("acl|deluser", -3, "Deletes ACL users, and terminates their connections.", "username:string ..."),
    ACL_READ("acl|dryrun", -4, A | CMD_CONN, "@admin @slow @dangerous", "Simulates the execution of a command by a user, without executing the command.", "O(1).",
        "username:string command:string [arg:string ...]"),
    ACL_READ("acl|genpass", -2, 0, "@slow", "Generates a pseudorandom, secure password that can be used to identify ACL users.", "O(1)",
        "[bits:integer]"),
    ACL_READ("acl|getuser", 3, A, "@admin @slow @dangerous", "Lists the ACL rules of a user.", "O(N). Where N is the number of password, command and pattern rules that the user has.",
        "username:string"),
    CMD("acl|help", 2, L | CMD_SENTINEL, 0, 0, 0, cmd_acl, "@slow", "Returns helpful text about the different subcommands.", "6.0.0", "server", "O(1)", NULL),
    ACL_READ("acl|list", 2, A, "@admin @slow @dangerous", "Dumps the effective rules in ACL file format.", "O(N). Where N is the number of configured users.", NULL),
    ACL_CHANGE("acl|load", 2, "Reloads the rules from the configured ACL file.", NULL),
    ACL_READ("acl|log", -2, A, "@admin @slow @dangerous", "Lists recent security events generated due to ACL rules.", "O(N) with N being the number of entries shown.",
        "[operation:oneof(count:integer reset:pure-token=RESET)]"),
    ACL_READ("acl|save", 2, A, "@admin @slow @dangerous", "Saves the effective ACL rules in the configured ACL file.", "O(N). Where N is the number of configured users.", NULL),
    ACL_CHANGE("acl|setuser", -3, "Creates and modifies an ACL user and its rules.", "username:string [rule:string ...]"),
    ACL_READ("acl|users", 2, A, "@admin @slow @dangerous", "Lists all ACL users.", "O(N). Where N is the number of configured users.", NULL),
    ACL_READ("acl|whoami", 2, CMD_CONN, "@slow", "Returns the authenticated username of the current connection.", "O(1)", NULL),
    { 0 }
};

/* MEMORY STATS and DOCTOR add up every thread's clients, and PURGE has each
 * thread's allocator heap give memory back: cmd_memory_gather runs on every
 * thread first (per_shard). */
#define MEMORY_ALL(name, summary, cx) \
    { name, 2, CMD_ALLSHARDS, 0, 0, 0, cmd_memory, NULL, "@slow", summary, "4.0.0", "server", cx, NULL, NULL, \
      cmd_memory_gather }

static const struct command memory_subs[] = {
    MEMORY_ALL("memory|doctor", "Outputs a memory problems report.", "O(1)"),
    CMD("memory|help", 2, L, 0, 0, 0, cmd_memory, "@slow", "Returns helpful text about the different subcommands.", "4.0.0", "server", "O(1)", NULL),
    CMD("memory|malloc-stats", 2, 0, 0, 0, 0, cmd_memory, "@slow", "Returns the allocator statistics.", "4.0.0", "server", "Depends on how much memory is allocated, could be slow", NULL),
    MEMORY_ALL("memory|purge", "Asks the allocator to release memory.", "Depends on how much memory is allocated, could be slow"),
    MEMORY_ALL("memory|stats", "Returns details about memory usage.", "O(1)"),
    CMD("memory|usage", -3, R, 2, 2, 1, cmd_memory, "@read @slow", "Estimates the memory usage of a key.", "4.0.0", "server", "O(N) where N is the number of samples.",
        "key:key [count:integer=SAMPLES]"),
    { 0 }
};

/* Cluster mode is not built: every CLUSTER subcommand says so, as Redis
 * does with cluster-enabled no (the table gives them Redis's flags, so a
 * script is refused CLUSTER RESET as in Redis). */
#define CLUSTER_SUB(name, arity, flags, summary, since, cx, args) \
    CMD(name, arity, (flags) | CMD_STALE, 0, 0, 0, cmd_cluster, "@slow", summary, since, "cluster", cx, args)
static const struct command cluster_subs[] = {
    CLUSTER_SUB("cluster|countkeysinslot", 3, 0, "Return the number of local keys in the specified hash slot", "3.0.0", "O(1)", "slot:integer"),
    CLUSTER_SUB("cluster|getkeysinslot", 4, 0, "Return local key names in the specified hash slot", "3.0.0",
                "O(log(N)) where N is the number of requested keys", "slot:integer count:integer"),
    CLUSTER_SUB("cluster|help", 2, L, "Show helpful text about the different subcommands", "5.0.0", "O(1)", NULL),
    CLUSTER_SUB("cluster|info", 2, 0, "Provides info about Redis Cluster node state", "3.0.0", "O(1)", NULL),
    CLUSTER_SUB("cluster|keyslot", 3, 0, "Returns the hash slot of the specified key", "3.0.0",
                "O(N) where N is the number of bytes in the key", "key:string"),
    CLUSTER_SUB("cluster|myid", 2, 0, "Return the node id", "3.0.0", "O(1)", NULL),
    CLUSTER_SUB("cluster|nodes", 2, 0, "Get Cluster config for the node", "3.0.0", "O(N) where N is the total number of Cluster nodes", NULL),
    CLUSTER_SUB("cluster|reset", -2, CMD_ADMIN | CMD_NOSCRIPT, "Reset a Redis Cluster node", "3.0.0",
                "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.",
                "[hard-soft:oneof(hard:pure-token=HARD soft:pure-token=SOFT)]"),
    CLUSTER_SUB("cluster|shards", 2, 0, "Get array of cluster slots to node mappings", "7.0.0", "O(N) where N is the total number of cluster nodes", NULL),
    CLUSTER_SUB("cluster|slots", 2, 0, "Get array of Cluster slot to node mappings", "3.0.0", "O(N) where N is the total number of Cluster nodes", NULL),
    { 0 }
};

/* ringkv loads no modules: MODULE answers as Redis does with none loaded,
 * and LOAD, LOADEX and UNLOAD are gated by enable-module-command first. */
static const struct command module_subs[] = {
    CMD("module|help", 2, L, 0, 0, 0, cmd_module, "@slow", "Show helpful text about the different subcommands", "5.0.0", "server", "O(1)", NULL),
    CMD("module|list", 2, A | CMD_NOSCRIPT, 0, 0, 0, cmd_module, "@admin @slow @dangerous", "List all modules loaded by the server", "4.0.0", "server", "O(N) where N is the number of loaded modules.", NULL),
    CMD("module|load", -3, A | CMD_NOSCRIPT | CMD_PROTECTED, 0, 0, 0, cmd_module, "@admin @slow @dangerous", "Load a module", "4.0.0", "server", "O(1)",
        "path:string [arg:string ...]"),
    CMD("module|loadex", -3, A | CMD_NOSCRIPT | CMD_PROTECTED, 0, 0, 0, cmd_module, "@admin @slow @dangerous", "Load a module with extended parameters", "7.0.0", "server", "O(1)",
        "path:string [configs:block=CONFIG(name:string value:string) +...] [args:block=ARGS(arg:string) ...]"),
    CMD("module|unload", 3, A | CMD_NOSCRIPT | CMD_PROTECTED, 0, 0, 0, cmd_module, "@admin @slow @dangerous", "Unload a module", "4.0.0", "server", "O(1)",
        "name:string"),
    { 0 }
};

static const struct command commands[] = {
    /* connection */
    CMD("ping", -1, F | CMD_SENTINEL, 0, 0, 0, cmd_ping, "@fast @connection", "Returns the server's liveliness response.", "1.0.0", "connection", "O(1)",
        "[message:string]"),
    CMD("echo", 2, F | L, 0, 0, 0, cmd_echo, "@fast @connection", "Returns the given string.", "1.0.0", "connection", "O(1)",
        "message:string"),
    CMD("quit", -1, CMD_CONN | CMD_NOAUTH | F | L | CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, cmd_quit, "@fast @connection", "Closes the connection.", "1.0.0", "connection", "O(1)", NULL),
    CMD("select", 2, CMD_CONN | F | L, 0, 0, 0, cmd_select, "@fast @connection", "Changes the selected database.", "1.0.0", "connection", "O(1)",
        "index:integer"),
    CMD("hello", -1, CMD_CONN | CMD_NOAUTH | F | L | CMD_NOSCRIPT | CMD_SENTINEL | CMD_ALLOW_BUSY, 0, 0, 0, cmd_hello, "@fast @connection", "Handshakes with the Redis server.", "6.0.0", "connection", "O(1)",
        "[arguments:block(protover:integer [username_password:block=AUTH(username:string password:string)] "
        "[clientname:string=SETNAME])]"),
    CMD("auth", -2, CMD_CONN | CMD_NOAUTH | F | L | CMD_NOSCRIPT | CMD_SENTINEL | CMD_ALLOW_BUSY, 0, 0, 0, cmd_auth, "@fast @connection", "Authenticates the connection.", "1.0.0", "connection", "O(N) where N is the number of passwords defined for the user",
        "[username:string@6.0.0] password:string"),
    CMD("monitor", 1, CMD_CONN | A | L | CMD_NOSCRIPT, 0, 0, 0, cmd_monitor, "@admin @slow @dangerous", "Listens for all requests received by the server in real-time.", "1.0.0", "server", NULL, NULL),
    CMD("reset", 1, CMD_CONN | CMD_NOAUTH | F | L | CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, cmd_reset, "@fast @connection", "Resets the connection.", "6.2.0", "connection", "O(1)", NULL),
    CONTAINER("client", client_subs, "@slow", "A container for client connection commands.", "2.4.0", "connection"),
    /* server */
    { "command", -1, L, 0, 0, 0, cmd_command, NULL, "@slow @connection", "Returns detailed information about all commands.", "2.8.13", "server", "O(N) where N is the total number of Redis commands", NULL, command_subs, NULL },
    CONTAINER("config", config_subs, "@slow", "A container for server configuration commands.", "2.0.0", "server"),
    CMD("info", -1, L | CMD_SENTINEL | CMD_ALLSHARDS, 0, 0, 0, cmd_info, "@slow @dangerous", "Returns information and statistics about the server.", "1.0.0", "server", "O(1)",
        "[section:string ...]"),
    CMD("dbsize", 1, R | F | CMD_ALLSHARDS, 0, 0, 0, cmd_dbsize, "@keyspace @read @fast", "Returns the number of keys in the database.", "1.0.0", "server", "O(1)", NULL),
    CMD("flushdb", -1, W | CMD_ALLSHARDS, 0, 0, 0, cmd_flushdb, "@keyspace @write @slow @dangerous", "Removes all keys from the current database.", "1.0.0", "server", "O(N) where N is the number of keys in the selected database",
        "[async:oneof(async:pure-token=ASYNC@4.0.0 sync:pure-token=SYNC@6.2.0)]"),
    CMD("flushall", -1, W | CMD_ALLSHARDS, 0, 0, 0, cmd_flushall, "@keyspace @write @slow @dangerous", "Removes all keys from all databases.", "1.0.0", "server", "O(N) where N is the total number of keys in all databases",
        "[async:oneof(async:pure-token=ASYNC@4.0.0 sync:pure-token=SYNC@6.2.0)]"),
    CMD("time", 1, F | L, 0, 0, 0, cmd_time, "@fast", "Returns the server time.", "2.6.0", "server", "O(1)", NULL),
    CMD("save", 1, A | CMD_NOSCRIPT | CMD_NO_MULTI | CMD_ALLSHARDS, 0, 0, 0, cmd_save, "@admin @slow @dangerous", "Synchronously saves the database(s) to disk.", "1.0.0", "server", "O(N) where N is the total number of keys in all databases", NULL),
    CMD("bgsave", -1, A | CMD_NOSCRIPT | CMD_ALLSHARDS, 0, 0, 0, cmd_bgsave, "@admin @slow @dangerous", "Asynchronously saves the database(s) to disk.", "1.0.0", "server", "O(1)",
        "[schedule:pure-token=SCHEDULE@3.2.2]"),
    CMD("bgrewriteaof", 1, A | CMD_NOSCRIPT | CMD_ALLSHARDS, 0, 0, 0, cmd_bgrewriteaof, "@admin @slow @dangerous", "Asynchronously rewrites the append-only file to disk.", "1.0.0", "server", "O(1)", NULL),
    CMD("lastsave", 1, F | L, 0, 0, 0, cmd_lastsave, "@admin @fast @dangerous", "Returns the Unix timestamp of the last successful save to disk.", "1.0.0", "server", "O(1)", NULL),
    CMD("shutdown", -1, A | L | CMD_NOSCRIPT | CMD_SENTINEL | CMD_NO_MULTI | CMD_ALLOW_BUSY | CMD_ALLSHARDS, 0, 0, 0, cmd_shutdown, "@admin @slow @dangerous", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0", "server", "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
        "[nosave_save:oneof(nosave:pure-token=NOSAVE save:pure-token=SAVE)] [now:pure-token=NOW@7.0.0] "
        "[force:pure-token=FORCE@7.0.0] [abort:pure-token=ABORT@7.0.0]"),
    CONTAINER("cluster", cluster_subs, "@slow", "A container for cluster commands", "3.0.0", "cluster"),
    CMD("readonly", 1, F | L, 0, 0, 0, cmd_cluster, "@fast @connection", "Enables read-only queries for a connection to a Redis Cluster replica node.", "3.0.0", "cluster", "O(1)", NULL),
    CMD("readwrite", 1, F | L, 0, 0, 0, cmd_cluster, "@fast @connection", "Enables read-write queries for a connection to a Reids Cluster replica node.", "3.0.0", "cluster", "O(1)", NULL),
    CONTAINER("module", module_subs, "@slow", "A container for module commands", "4.0.0", "server"),
    CONTAINER("memory", memory_subs, "@slow", "A container for memory diagnostics commands.", "4.0.0", "server"),
    CONTAINER("slowlog", slowlog_subs, "@slow", "A container for slow log commands.", "2.2.12", "server"),
    CONTAINER("latency", latency_subs, "@slow", "A container for latency diagnostics commands.", "2.8.13", "server"),
    CONTAINER("acl", acl_subs, "@slow", "A container for Access List Control commands.", "6.0.0", "server"),
    CMD("debug", -2, A | L | CMD_NOSCRIPT | CMD_ALLSHARDS | CMD_PROTECTED, 0, 0, 0, cmd_debug, "@admin @slow @dangerous", "A container for debugging commands.", "1.0.0", "server", "Depends on subcommand.", NULL),
    /* keys */
    CMD("del", -2, W, 1, -1, 1, cmd_del, "@keyspace @write @slow", "Deletes one or more keys.", "1.0.0", "generic", "O(N) where N is the number of keys that will be removed.",
        "key:key ..."),
    CMD("unlink", -2, W | F, 1, -1, 1, cmd_unlink, "@keyspace @write @fast", "Asynchronously deletes one or more keys.", "4.0.0", "generic", "O(1) for each key removed regardless of its size.",
        "key:key ..."),
    CMD("exists", -2, R | F, 1, -1, 1, cmd_exists, "@keyspace @read @fast", "Determines whether one or more keys exist.", "1.0.0", "generic", "O(N) where N is the number of keys to check.",
        "key:key ..."),
    CMD("touch", -2, R | F, 1, -1, 1, cmd_touch, "@keyspace @read @fast", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", "3.2.1", "generic", "O(N) where N is the number of keys that will be touched.",
        "key:key ..."),
    CMD("type", 2, R | F, 1, 1, 1, cmd_type, "@keyspace @read @fast", "Determines the type of value stored at a key.", "1.0.0", "generic", "O(1)",
        "key:key"),
    CMD("keys", 2, R | CMD_ALLSHARDS, 0, 0, 0, cmd_keys, "@keyspace @read @slow @dangerous", "Returns all key names that match a pattern.", "1.0.0", "generic", "O(N) with N being the number of keys in the database",
        "pattern:pattern"),
    CMD("scan", -2, R | CMD_ALLSHARDS, 0, 0, 0, cmd_scan, "@keyspace @read @slow", "Iterates over the key names in the database.", "2.8.0", "generic", "O(1) for every call. O(N) for a complete iteration.",
        "cursor:integer [pattern:pattern=MATCH] [count:integer=COUNT] [type:string=TYPE@6.0.0]"),
    CMD("randomkey", 1, R | CMD_ALLSHARDS, 0, 0, 0, cmd_randomkey, "@keyspace @read @slow", "Returns a random key name from the database.", "1.0.0", "generic", "O(1)", NULL),
    CMD("rename", 3, W, 1, 2, 1, cmd_rename, "@keyspace @write @slow", "Renames a key and overwrites the destination.", "1.0.0", "generic", "O(1)",
        "key:key newkey:key"),
    CMD("renamenx", 3, W | F, 1, 2, 1, cmd_renamenx, "@keyspace @write @fast", "Renames a key only when the target key name doesn't exist.", "1.0.0", "generic", "O(1)",
        "key:key newkey:key"),
    CMD("copy", -3, W | D, 1, 2, 1, cmd_copy, "@keyspace @write @slow", "Copies the value of a key to a new key.", "6.2.0", "generic", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
        "source:key destination:key [destination-db:integer=DB] [replace:pure-token=REPLACE]"),
    CMD("dump", 2, R, 1, 1, 1, cmd_dump, "@keyspace @read @slow", "Returns a serialized representation of the value stored at a key.", "2.6.0", "generic", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
        "key:key"),
    CMD("restore", -4, W | D, 1, 1, 1, cmd_restore, "@keyspace @write @slow @dangerous", "Creates a key from the serialized representation of a value.", "2.6.0", "generic", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
        "key:key ttl:integer serialized-value:string [replace:pure-token=REPLACE] [absttl:pure-token=ABSTTL] [seconds:integer:token=IDLETIME] [frequency:integer:token=FREQ]"),
    CMD("move", 3, W | F, 1, 1, 1, cmd_move, "@keyspace @write @fast", "Moves a key to another database.", "1.0.0", "generic", "O(1)",
        "key:key db:integer"),
    CMD("swapdb", 3, W | F | CMD_ALLSHARDS, 0, 0, 0, cmd_swapdb, "@keyspace @write @fast @dangerous", "Swaps two Redis databases.", "4.0.0", "server", "O(N) where N is the count of clients watching or blocking on keys from both databases.",
        "index1:integer index2:integer"),
    CMD("expire", -3, W | F, 1, 1, 1, cmd_expire, "@keyspace @write @fast", "Sets the expiration time of a key in seconds.", "1.0.0", "generic", "O(1)",
        "key:key seconds:integer [condition:oneof@7.0.0(nx:pure-token=NX xx:pure-token=XX gt:pure-token=GT "
        "lt:pure-token=LT)]"),
    CMD("pexpire", -3, W | F, 1, 1, 1, cmd_pexpire, "@keyspace @write @fast", "Sets the expiration time of a key in milliseconds.", "2.6.0", "generic", "O(1)",
        "key:key milliseconds:integer [condition:oneof@7.0.0(nx:pure-token=NX xx:pure-token=XX gt:pure-token=GT "
        "lt:pure-token=LT)]"),
    CMD("expireat", -3, W | F, 1, 1, 1, cmd_expireat, "@keyspace @write @fast", "Sets the expiration time of a key to a Unix timestamp.", "1.2.0", "generic", "O(1)",
        "key:key unix-time-seconds:unix-time [condition:oneof@7.0.0(nx:pure-token=NX xx:pure-token=XX gt:pure-token=GT "
        "lt:pure-token=LT)]"),
    CMD("pexpireat", -3, W | F, 1, 1, 1, cmd_pexpireat, "@keyspace @write @fast", "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0", "generic", "O(1)",
        "key:key unix-time-milliseconds:unix-time [condition:oneof@7.0.0(nx:pure-token=NX xx:pure-token=XX "
        "gt:pure-token=GT lt:pure-token=LT)]"),
    CMD("ttl", 2, R | F, 1, 1, 1, cmd_ttl, "@keyspace @read @fast", "Returns the expiration time in seconds of a key.", "1.0.0", "generic", "O(1)",
        "key:key"),
    CMD("pttl", 2, R | F, 1, 1, 1, cmd_pttl, "@keyspace @read @fast", "Returns the expiration time in milliseconds of a key.", "2.6.0", "generic", "O(1)",
        "key:key"),
    CMD("expiretime", 2, R | F, 1, 1, 1, cmd_expiretime, "@keyspace @read @fast", "Returns the expiration time of a key as a Unix timestamp.", "7.0.0", "generic", "O(1)",
        "key:key"),
    CMD("pexpiretime", 2, R | F, 1, 1, 1, cmd_pexpiretime, "@keyspace @read @fast", "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0", "generic", "O(1)",
        "key:key"),
    CMD("persist", 2, W | F, 1, 1, 1, cmd_persist, "@keyspace @write @fast", "Removes the expiration time of a key.", "2.2.0", "generic", "O(1)",
        "key:key"),
    { "object", -2, 0, 0, 0, 0, cmd_object, NULL, "@slow", "A container for object introspection commands.", "2.2.3", "generic", "Depends on subcommand.", NULL, object_subs, NULL },
    /* strings */
    CMD("get", 2, R | F, 1, 1, 1, cmd_get, "@read @string @fast", "Returns the string value of a key.", "1.0.0", "string", "O(1)",
        "key:key"),
    CMD("set", -3, W | D, 1, 1, 1, cmd_set, "@write @string @slow", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "1.0.0", "string", "O(1)",
        "key:key value:string [condition:oneof@2.6.12(nx:pure-token=NX xx:pure-token=XX)] [get:pure-token=GET@6.2.0] "
        "[expiration:oneof(seconds:integer=EX@2.6.12 milliseconds:integer=PX@2.6.12 "
        "unix-time-seconds:unix-time=EXAT@6.2.0 unix-time-milliseconds:unix-time=PXAT@6.2.0 "
        "keepttl:pure-token=KEEPTTL@6.0.0)]"),
    CMD("setnx", 3, W | D | F, 1, 1, 1, cmd_setnx, "@write @string @fast", "Set the string value of a key only when the key doesn't exist.", "1.0.0", "string", "O(1)",
        "key:key value:string"),
    CMD("setex", 4, W | D, 1, 1, 1, cmd_setex, "@write @string @slow", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", "2.0.0", "string", "O(1)",
        "key:key seconds:integer value:string"),
    CMD("psetex", 4, W | D, 1, 1, 1, cmd_psetex, "@write @string @slow", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", "2.6.0", "string", "O(1)",
        "key:key milliseconds:integer value:string"),
    CMD("getset", 3, W | D | F, 1, 1, 1, cmd_getset, "@write @string @fast", "Returns the previous string value of a key after setting it to a new value.", "1.0.0", "string", "O(1)",
        "key:key value:string"),
    CMD("getdel", 2, W | F, 1, 1, 1, cmd_getdel, "@write @string @fast", "Returns the string value of a key after deleting the key.", "6.2.0", "string", "O(1)",
        "key:key"),
    CMD("getex", -2, W | F, 1, 1, 1, cmd_getex, "@write @string @fast", "Returns the string value of a key after setting its expiration time.", "6.2.0", "string", "O(1)",
        "key:key [expiration:oneof(seconds:integer=EX milliseconds:integer=PX unix-time-seconds:unix-time=EXAT "
        "unix-time-milliseconds:unix-time=PXAT persist:pure-token=PERSIST)]"),
    CMD("mget", -2, R | F, 1, -1, 1, cmd_mget, "@read @string @fast", "Atomically returns the string values of one or more keys.", "1.0.0", "string", "O(N) where N is the number of keys to retrieve.",
        "key:key ..."),
    CMD("mset", -3, W | D, 1, -1, 2, cmd_mset, "@write @string @slow", "Atomically creates or modifies the string values of one or more keys.", "1.0.1", "string", "O(N) where N is the number of keys to set.",
        "key_value:block(key:key value:string) ..."),
    CMD("msetnx", -3, W | D, 1, -1, 2, cmd_msetnx, "@write @string @slow", "Atomically modifies the string values of one or more keys only when all keys don't exist.", "1.0.1", "string", "O(N) where N is the number of keys to set.",
        "key_value:block(key:key value:string) ..."),
    CMD("append", 3, W | D | F, 1, 1, 1, cmd_append, "@write @string @fast", "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0", "string", "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
        "key:key value:string"),
    CMD("strlen", 2, R | F, 1, 1, 1, cmd_strlen, "@read @string @fast", "Returns the length of a string value.", "2.2.0", "string", "O(1)",
        "key:key"),
    CMD("getrange", 4, R, 1, 1, 1, cmd_getrange, "@read @string @slow", "Returns a substring of the string stored at a key.", "2.4.0", "string", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.",
        "key:key start:integer end:integer"),
    CMD("substr", 4, R, 1, 1, 1, cmd_getrange, "@read @string @slow", "Returns a substring from a string value.", "1.0.0", "string", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.",
        "key:key start:integer end:integer"),
    CMD("setrange", 4, W | D, 1, 1, 1, cmd_setrange, "@write @string @slow", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", "2.2.0", "string", "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
        "key:key offset:integer value:string"),
    CMD("incr", 2, W | D | F, 1, 1, 1, cmd_incr, "@write @string @fast", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "string", "O(1)",
        "key:key"),
    CMD("decr", 2, W | D | F, 1, 1, 1, cmd_decr, "@write @string @fast", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "string", "O(1)",
        "key:key"),
    CMD("incrby", 3, W | D | F, 1, 1, 1, cmd_incrby, "@write @string @fast", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "string", "O(1)",
        "key:key increment:integer"),
    CMD("decrby", 3, W | D | F, 1, 1, 1, cmd_decrby, "@write @string @fast", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", "1.0.0", "string", "O(1)",
        "key:key decrement:integer"),
    CMD("incrbyfloat", 3, W | D | F, 1, 1, 1, cmd_incrbyfloat, "@write @string @fast", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "2.6.0", "string", "O(1)",
        "key:key increment:double"),
    CMD_END
};

/* Every group of commands, each ended by an entry whose name is NULL. */
static const struct command *const groups[] = {
    commands, list_commands, hash_commands, set_commands, zset_commands, multi_commands, bits_commands,
    pubsub_commands, script_commands, stream_commands, stream_group_commands,
};

#define MAX_COMMANDS 400
static const struct command *all_commands[MAX_COMMANDS];
static size_t ncommands;

static void add_command(const struct command *cmd) {
    if (ncommands == MAX_COMMANDS) abort();   /* raise MAX_COMMANDS */
    all_commands[ncommands++] = cmd;
}

/* ---- indexes ---- */

#define INDEX_SLOTS 1024   /* power of two, at least twice COMMAND_IDS_MAX */
static struct { const struct command *cmd; int index; } index_table[INDEX_SLOTS];
static const struct command *by_index[COMMAND_IDS_MAX];
static size_t nindexes;

static uint32_t address_slot(const struct command *cmd) {
    return (uint32_t)(((uintptr_t)cmd * 0x9E3779B97F4A7C15ull) >> 54) & (INDEX_SLOTS - 1);
}

static void add_index(const struct command *cmd) {
    if (nindexes == COMMAND_IDS_MAX) abort();   /* raise COMMAND_IDS_MAX */
    uint32_t h = address_slot(cmd);
    while (index_table[h].cmd) h = (h + 1) & (INDEX_SLOTS - 1);
    index_table[h].cmd = cmd;
    index_table[h].index = (int)nindexes;
    by_index[nindexes++] = cmd;
}

int command_index(const struct command *cmd) {
    for (uint32_t h = address_slot(cmd); index_table[h].cmd; h = (h + 1) & (INDEX_SLOTS - 1))
        if (index_table[h].cmd == cmd) return index_table[h].index;
    return -1;
}

size_t command_index_count(void) { return nindexes; }
const struct command *command_by_index(size_t i) { return i < nindexes ? by_index[i] : NULL; }

/* ---- lookup ---- */

/* The name each command answers to: its own, the one a rename-command line
 * gave it, or none (renamed to ""), in table order; the lookup table and
 * the list COMMAND walks (live) are built from it. Renames happen while
 * the configuration loads, before any worker runs: nothing here changes
 * once commands are served, and lookups read plain memory. */
static const char *answers_to[MAX_COMMANDS];
static const struct command *live[MAX_COMMANDS];
static size_t nlive;

#define LOOKUP_SIZE 1024  /* power of two, well above the command count */
static struct { const char *name; const struct command *cmd; } lookup_table[LOOKUP_SIZE];
static size_t longest_name;

static inline char ascii_lower(char c) { return (unsigned char)(c - 'A') < 26 ? (char)(c + 32) : c; }

static uint32_t name_hash(const char *name, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)ascii_lower(name[i])) * 16777619u;
    return h;
}

static void build_lookup(void) {
    memset(lookup_table, 0, sizeof lookup_table);
    nlive = 0;
    longest_name = 0;
    for (size_t i = 0; i < ncommands; i++) {
        const char *name = answers_to[i];
        if (!name) continue;
        size_t len = strlen(name);
        uint32_t h = name_hash(name, len) & (LOOKUP_SIZE - 1);
        while (lookup_table[h].name) h = (h + 1) & (LOOKUP_SIZE - 1);
        lookup_table[h].name = name;
        lookup_table[h].cmd = all_commands[i];
        live[nlive++] = all_commands[i];
        if (len > longest_name) longest_name = len;
    }
}

void command_table_init(void) {
    static bool done;
    if (done) return;
    done = true;
    reply_error_hook = stats_error_reply;
    notify_init();
    for (size_t g = 0; g < RK_ARRAY_LEN(groups); g++)
        for (const struct command *cmd = groups[g]; cmd->name; cmd++) add_command(cmd);
    for (size_t i = 0; i < ncommands; i++) {
        const struct command *cmd = all_commands[i];
        answers_to[i] = cmd->name;
        add_index(cmd);
        for (const struct command *sub = cmd->subcommands; sub && sub->name; sub++) add_index(sub);
    }
    build_lookup();
}

/* Pipelines repeat a few names (a script and the commands it calls
 * alternate): remember the last ones as they were sent, by length. */
#define LOOKUP_CACHE 4
struct lookup_memo {
    char raw[16];
    size_t len;
    const struct command *cmd;
};
static _Thread_local struct lookup_memo last_lookup[LOOKUP_CACHE];

static const struct command *lookup_uncached(const char *name, size_t len);

const struct command *command_lookup(const char *name, size_t len) {
    struct lookup_memo *slot = &last_lookup[len % LOOKUP_CACHE];
    if (len == slot->len && memcmp(name, slot->raw, len) == 0) return slot->cmd;
    const struct command *cmd = lookup_uncached(name, len);
    if (cmd && len <= sizeof slot->raw) {
        memcpy(slot->raw, name, len);
        slot->len = len;
        slot->cmd = cmd;
    }
    return cmd;
}

/* The table's names are lowercase; name is compared without case. */
static const struct command *lookup_uncached(const char *name, size_t len) {
    if (len == 0 || len > longest_name) return NULL;
    uint32_t h = name_hash(name, len) & (LOOKUP_SIZE - 1);
    for (const char *n; (n = lookup_table[h].name); h = (h + 1) & (LOOKUP_SIZE - 1)) {
        size_t i = 0;
        while (i < len && n[i] && n[i] == ascii_lower(name[i])) i++;   /* a NUL in name: not past n's end */
        if (i == len && n[len] == '\0') return lookup_table[h].cmd;
    }
    return NULL;
}

const char *command_rename(const char *from, const char *to) {
    command_table_init();
    const struct command *cmd = lookup_uncached(from, strlen(from));
    size_t i = 0;
    while (cmd && all_commands[i] != cmd) i++;
    if (!cmd) return "No such command in rename-command";
    /* as Redis: the old name goes first, then the new one is added */
    if (answers_to[i] != cmd->name) free((char *)answers_to[i]);
    answers_to[i] = NULL;
    build_lookup();
    memset(last_lookup, 0, sizeof last_lookup);   /* this thread's: the only one that looked anything up */
    if (!*to) return NULL;
    if (lookup_uncached(to, strlen(to))) return "Target command name already exists";
    char *name = rk_malloc(strlen(to) + 1);
    size_t k = 0;
    for (; to[k]; k++) name[k] = ascii_lower(to[k]);
    name[k] = '\0';
    answers_to[i] = name;
    build_lookup();
    return NULL;
}

const struct command *command_original(const char *name) {
    command_table_init();
    for (size_t i = 0; i < ncommands; i++)
        if (strcasecmp(all_commands[i]->name, name) == 0) return all_commands[i];
    return NULL;
}

const struct command *command_resolve(int argc, const struct slice *argv) {
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    if (!cmd || !cmd->subcommands || argc == 1) return cmd;
    return command_lookup_sub(cmd, argv[1]);
}

const struct command *command_lookup_sub(const struct command *parent, struct slice name) {
    size_t plen = strlen(parent->name) + 1;   /* "client|" */
    for (const struct command *sub = parent->subcommands; sub && sub->name; sub++)
        if (strlen(sub->name) - plen == name.len && strncasecmp(sub->name + plen, name.ptr, name.len) == 0)
            return sub;
    return NULL;
}

size_t command_count(void) { return nlive; }
const struct command *command_at(size_t i) { return i < nlive ? live[i] : NULL; }

int command_key_positions(const struct command *cmd, int argc, const struct slice *argv, int *pos, int maxpos) {
    if (cmd->keys_fn) return cmd->keys_fn(argc, argv, pos, maxpos);
    if (cmd->first_key == 0 || argc <= cmd->first_key) return 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    if (last >= argc) last = argc - 1;
    int n = 0;
    for (int i = cmd->first_key; i <= last && n < maxpos; i += cmd->key_step) pos[n++] = i;
    return n;
}
