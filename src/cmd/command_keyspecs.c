/*
 * command_keyspecs.c -- how each command uses its keys: Redis 7's key
 * specs, for COMMAND INFO and COMMAND GETKEYSANDFLAGS.
 *
 * The dispatcher finds a command's keys from the command table's legacy
 * positions (first, last, step) or its keys_fn; this table adds what those
 * cannot say: whether a key is read, written, overwritten or deleted (the
 * KS_* flags of command.h), and the key specs in the shape COMMAND INFO
 * reports them. Its rows are transcribed from Redis 7.0's command JSON
 * files (src/commands/<name>.json), one row per command that has keys, sorted
 * by name for a binary search. Commands whose first key is used apart from
 * the others (LMOVE's source and destination, ZUNIONSTORE's destination and
 * sources) have two specs: the first key belongs to the first spec, every
 * other key to the second. test_command_keyspecs checks the table against
 * the command table's key positions.
 */
#include "ringkv/command.h"
#include "ringkv/util.h"

#include <stdlib.h>

#define RANGE(lastkey, keystep, limit) false, lastkey, keystep, limit, NULL, NULL
#define KEYNUM(keynumidx, firstkey, keystep) true, keynumidx, firstkey, keystep, NULL, NULL
#define RANGE_NOTES(lastkey, keystep, limit, notes) false, lastkey, keystep, limit, notes, NULL
/* begin_search by keyword: the spec's begin is where the search starts */
#define RANGE_AFTER(keyword, lastkey, keystep, limit) false, lastkey, keystep, limit, NULL, keyword

static const struct command_key_specs specs[] = {
    { "append", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "bitcount", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "bitfield", 1, { { KS_RW | KS_ACCESS | KS_UPDATE | KS_VARIABLE_FLAGS, 1, RANGE_NOTES(0, 1, 0, "This command allows both access and modification of the key") } } },
    { "bitfield_ro", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "bitop", 2, { { KS_OW | KS_UPDATE, 2, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 3, RANGE(-1, 1, 0) } } },
    { "bitpos", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "blmove", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "blmpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 2, KEYNUM(0, 1, 1) } } },
    { "blpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(-2, 1, 0) } } },
    { "brpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(-2, 1, 0) } } },
    { "brpoplpush", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "bzmpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 2, KEYNUM(0, 1, 1) } } },
    { "bzpopmax", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(-2, 1, 0) } } },
    { "bzpopmin", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(-2, 1, 0) } } },
    { "copy", 2, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) }, { KS_OW | KS_UPDATE, 2, RANGE(0, 1, 0) } } },
    { "decr", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "decrby", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "del", 1, { { KS_RM | KS_DELETE, 1, RANGE(-1, 1, 0) } } },
    { "dump", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "eval", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 2, true, 0, 1, 1, "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", NULL } } },
    { "eval_ro", 1, { { KS_RO | KS_ACCESS, 2, true, 0, 1, 1, "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", NULL } } },
    { "evalsha", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 2, KEYNUM(0, 1, 1) } } },
    { "evalsha_ro", 1, { { KS_RO | KS_ACCESS, 2, KEYNUM(0, 1, 1) } } },
    { "exists", 1, { { KS_RO, 1, RANGE(-1, 1, 0) } } },
    { "expire", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "expireat", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "expiretime", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "fcall", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 2, true, 0, 1, 1, "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", NULL } } },
    { "fcall_ro", 1, { { KS_RO | KS_ACCESS, 2, true, 0, 1, 1, "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", NULL } } },
    { "get", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "getbit", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "getdel", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "getex", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE_NOTES(0, 1, 0, "RW and UPDATE because it changes the TTL") } } },
    { "getrange", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "getset", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "hdel", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "hexists", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "hget", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "hgetall", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "hincrby", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "hincrbyfloat", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "hkeys", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "hlen", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "hmget", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "hmset", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "hrandfield", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "hscan", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "hset", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "hsetnx", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "hstrlen", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "hvals", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "incr", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "incrby", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "incrbyfloat", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "lcs", 1, { { KS_RO | KS_ACCESS, 1, RANGE(1, 1, 0) } } },
    { "lindex", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "linsert", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "llen", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "lmove", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "lmpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, KEYNUM(0, 1, 1) } } },
    { "lpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "lpos", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "lpush", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "lpushx", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "lrange", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "lrem", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "lset", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "ltrim", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "memory|usage", 1, { { KS_RO, 2, RANGE(0, 1, 0) } } },
    { "mget", 1, { { KS_RO | KS_ACCESS, 1, RANGE(-1, 1, 0) } } },
    { "move", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "mset", 1, { { KS_OW | KS_UPDATE, 1, RANGE(-1, 2, 0) } } },
    { "msetnx", 1, { { KS_OW | KS_INSERT, 1, RANGE(-1, 2, 0) } } },
    { "object|encoding", 1, { { KS_RO, 2, RANGE(0, 1, 0) } } },
    { "object|freq", 1, { { KS_RO, 2, RANGE(0, 1, 0) } } },
    { "object|idletime", 1, { { KS_RO, 2, RANGE(0, 1, 0) } } },
    { "object|refcount", 1, { { KS_RO, 2, RANGE(0, 1, 0) } } },
    { "persist", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "pexpire", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "pexpireat", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "pexpiretime", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "psetex", 1, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "pttl", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "rename", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_OW | KS_UPDATE, 2, RANGE(0, 1, 0) } } },
    { "renamenx", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_OW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "restore", 1, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "rpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "rpoplpush", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "rpush", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "rpushx", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "sadd", 1, { { KS_RW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "scard", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "sdiff", 1, { { KS_RO | KS_ACCESS, 1, RANGE(-1, 1, 0) } } },
    { "sdiffstore", 2, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, RANGE(-1, 1, 0) } } },
    { "set", 1, { { KS_RW | KS_ACCESS | KS_UPDATE | KS_VARIABLE_FLAGS, 1, RANGE_NOTES(0, 1, 0, "RW and ACCESS due to the optional `GET` argument") } } },
    { "setbit", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "setex", 1, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "setnx", 1, { { KS_OW | KS_INSERT, 1, RANGE(0, 1, 0) } } },
    { "setrange", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "sinter", 1, { { KS_RO | KS_ACCESS, 1, RANGE(-1, 1, 0) } } },
    { "sintercard", 1, { { KS_RO | KS_ACCESS, 1, KEYNUM(0, 1, 1) } } },
    { "sinterstore", 2, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, RANGE(-1, 1, 0) } } },
    { "sismember", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "smembers", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "smismember", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "smove", 2, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) }, { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "spop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "spublish", 1, { { KS_NOT_KEY, 1, RANGE(0, 1, 0) } } },
    { "srandmember", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "srem", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "sscan", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "ssubscribe", 1, { { KS_NOT_KEY, 1, RANGE(-1, 1, 0) } } },
    { "strlen", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "substr", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "sunion", 1, { { KS_RO | KS_ACCESS, 1, RANGE(-1, 1, 0) } } },
    { "sunionstore", 2, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, RANGE(-1, 1, 0) } } },
    { "sunsubscribe", 1, { { KS_NOT_KEY, 1, RANGE(-1, 1, 0) } } },
    { "touch", 1, { { KS_RO, 1, RANGE(-1, 1, 0) } } },
    { "ttl", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "type", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "unlink", 1, { { KS_RM | KS_DELETE, 1, RANGE(-1, 1, 0) } } },
    { "watch", 1, { { KS_RO, 1, RANGE(-1, 1, 0) } } },
    { "xack", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "xadd", 1, { { KS_RW | KS_UPDATE, 1, RANGE_NOTES(0, 1, 0, "UPDATE instead of INSERT because of the optional trimming feature") } } },
    { "xautoclaim", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "xclaim", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "xdel", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "xgroup|create", 1, { { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "xgroup|createconsumer", 1, { { KS_RW | KS_INSERT, 2, RANGE(0, 1, 0) } } },
    { "xgroup|delconsumer", 1, { { KS_RW | KS_DELETE, 2, RANGE(0, 1, 0) } } },
    { "xgroup|destroy", 1, { { KS_RW | KS_DELETE, 2, RANGE(0, 1, 0) } } },
    { "xgroup|setid", 1, { { KS_RW | KS_UPDATE, 2, RANGE(0, 1, 0) } } },
    { "xinfo|consumers", 1, { { KS_RO | KS_ACCESS, 2, RANGE(0, 1, 0) } } },
    { "xinfo|groups", 1, { { KS_RO | KS_ACCESS, 2, RANGE(0, 1, 0) } } },
    { "xinfo|stream", 1, { { KS_RO | KS_ACCESS, 2, RANGE(0, 1, 0) } } },
    { "xlen", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "xpending", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "xrange", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "xread", 1, { { KS_RO | KS_ACCESS, 1, RANGE_AFTER("STREAMS", -1, 1, 2) } } },
    { "xreadgroup", 1, { { KS_RO | KS_ACCESS, 4, RANGE_AFTER("STREAMS", -1, 1, 2) } } },
    { "xrevrange", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "xsetid", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "xtrim", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zadd", 1, { { KS_RW | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "zcard", 1, { { KS_RO, 1, RANGE(0, 1, 0) } } },
    { "zcount", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zdiff", 1, { { KS_RO | KS_ACCESS, 1, KEYNUM(0, 1, 1) } } },
    { "zdiffstore", 2, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, KEYNUM(0, 1, 1) } } },
    { "zincrby", 1, { { KS_RW | KS_ACCESS | KS_UPDATE, 1, RANGE(0, 1, 0) } } },
    { "zinter", 1, { { KS_RO | KS_ACCESS, 1, KEYNUM(0, 1, 1) } } },
    { "zintercard", 1, { { KS_RO | KS_ACCESS, 1, KEYNUM(0, 1, 1) } } },
    { "zinterstore", 2, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, KEYNUM(0, 1, 1) } } },
    { "zlexcount", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zmpop", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, KEYNUM(0, 1, 1) } } },
    { "zmscore", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zpopmax", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zpopmin", 1, { { KS_RW | KS_ACCESS | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zrandmember", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrange", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrangebylex", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrangebyscore", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrangestore", 2, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, RANGE(0, 1, 0) } } },
    { "zrank", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrem", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zremrangebylex", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zremrangebyrank", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zremrangebyscore", 1, { { KS_RW | KS_DELETE, 1, RANGE(0, 1, 0) } } },
    { "zrevrange", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrevrangebylex", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrevrangebyscore", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zrevrank", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zscan", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zscore", 1, { { KS_RO | KS_ACCESS, 1, RANGE(0, 1, 0) } } },
    { "zunion", 1, { { KS_RO | KS_ACCESS, 1, KEYNUM(0, 1, 1) } } },
    { "zunionstore", 2, { { KS_OW | KS_UPDATE, 1, RANGE(0, 1, 0) }, { KS_RO | KS_ACCESS, 2, KEYNUM(0, 1, 1) } } },
};

static int by_name(const void *key, const void *row) {
    return strcmp(key, ((const struct command_key_specs *)row)->name);
}

const struct command_key_specs *command_key_specs(const struct command *cmd) {
    return bsearch(cmd->name, specs, RK_ARRAY_LEN(specs), sizeof specs[0], by_name);
}

/* SET's key is read as well only with GET (Redis's setGetKeys). */
static unsigned set_key_flags(int argc, const struct slice *argv) {
    for (int i = 3; i < argc; i++)
        if (slice_eq_nocase(argv[i], "get")) return KS_RW | KS_ACCESS | KS_UPDATE;
    return KS_OW | KS_UPDATE;
}

/* BITFIELD's key is written only by SET or INCRBY, and anything it cannot
 * parse counts as a write too (Redis's bitfieldGetKeys). */
static unsigned bitfield_key_flags(int argc, const struct slice *argv) {
    for (int i = 2; i < argc; i++) {
        int more = argc - i - 1;
        if (slice_eq_nocase(argv[i], "get") && more >= 2) i += 2;
        else if (slice_eq_nocase(argv[i], "overflow") && more >= 1) i += 1;
        else return KS_RW | KS_ACCESS | KS_UPDATE;
    }
    return KS_RO | KS_ACCESS;
}

unsigned command_variable_key_flags(const struct command *cmd, int argc, const struct slice *argv, unsigned flags) {
    if (cmd->proc == cmd_set) return set_key_flags(argc, argv);
    if (strcmp(cmd->name, "bitfield") == 0) return bitfield_key_flags(argc, argv);
    return flags;
}

unsigned command_key_flags(const struct command *cmd, int argc, const struct slice *argv, int nth) {
    const struct command_key_specs *ks = command_key_specs(cmd);
    if (!ks) return 0;
    const struct key_spec *spec = &ks->spec[ks->n == 2 && nth > 0];
    if (spec->flags & KS_VARIABLE_FLAGS) return command_variable_key_flags(cmd, argc, argv, spec->flags);
    return spec->flags;
}

/* ---- replies ---- */

static const struct { unsigned flag; const char *name; } flag_names[] = {
    {KS_RO, "RO"}, {KS_RW, "RW"}, {KS_OW, "OW"}, {KS_RM, "RM"}, {KS_ACCESS, "access"},
    {KS_UPDATE, "update"}, {KS_INSERT, "insert"}, {KS_DELETE, "delete"}, {KS_NOT_KEY, "not_key"},
    {KS_INCOMPLETE, "incomplete"}, {KS_VARIABLE_FLAGS, "variable_flags"},
};

void key_flags_reply(struct reply *r, unsigned flags) {
    size_t n = 0;
    for (size_t i = 0; i < RK_ARRAY_LEN(flag_names); i++) n += (flags & flag_names[i].flag) != 0;
    reply_set(r, n);
    for (size_t i = 0; i < RK_ARRAY_LEN(flag_names); i++)
        if (flags & flag_names[i].flag) reply_simple(r, flag_names[i].name);
}

static void reply_int_field(struct reply *r, const char *name, long long v) {
    reply_bulk_cstr(r, name);
    reply_int(r, v);
}

/* One spec as a map, in addReplyCommandKeySpecs()'s order. */
static void spec_reply(struct reply *r, const struct key_spec *s) {
    reply_map(r, 3 + (s->notes != NULL));
    if (s->notes) {
        reply_bulk_cstr(r, "notes");
        reply_bulk_cstr(r, s->notes);
    }
    reply_bulk_cstr(r, "flags");
    key_flags_reply(r, s->flags);
    reply_bulk_cstr(r, "begin_search");
    reply_map(r, 2);
    reply_bulk_cstr(r, "type");
    reply_bulk_cstr(r, s->keyword ? "keyword" : "index");
    reply_bulk_cstr(r, "spec");
    if (s->keyword) {
        reply_map(r, 2);
        reply_bulk_cstr(r, "keyword");
        reply_bulk_cstr(r, s->keyword);
        reply_int_field(r, "startfrom", s->begin);
    } else {
        reply_map(r, 1);
        reply_int_field(r, "index", s->begin);
    }
    reply_bulk_cstr(r, "find_keys");
    reply_map(r, 2);
    reply_bulk_cstr(r, "type");
    reply_bulk_cstr(r, s->keynum ? "keynum" : "range");
    reply_bulk_cstr(r, "spec");
    reply_map(r, 3);
    reply_int_field(r, s->keynum ? "keynumidx" : "lastkey", s->a);
    reply_int_field(r, s->keynum ? "firstkey" : "keystep", s->b);
    reply_int_field(r, s->keynum ? "keystep" : "limit", s->c);
}

void key_specs_reply(struct reply *r, const struct command *cmd) {
    const struct command_key_specs *ks = command_key_specs(cmd);
    reply_set(r, ks ? ks->n : 0);
    for (unsigned i = 0; ks && i < ks->n; i++) spec_reply(r, &ks->spec[i]);
}
