#!/usr/bin/env python3
"""Write the seed corpora of the fuzz harnesses (tests/fuzz/corpus/<target>/)
and the command dictionary (tests/fuzz/command.dict).

    python3 tests/fuzz/make_seeds.py          # rewrites every seed

Each seed is a small input in its harness's format (see the comment at the
top of each tests/fuzz/fuzz_*.c); file names say what the seed holds.
Python's standard library only.
"""
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

# --------------------------------------------------------------- helpers


def crc64(data, crc=0):
    """Redis's CRC-64 (Jones polynomial, reflected), as crc64.h computes it."""
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 reflected
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n < 2**32:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def rdb_str(s):
    if isinstance(s, str):
        s = s.encode()
    return rdb_len(len(s)) + s


def rdb_int_str(v):
    """A string in integer encoding (C0/C1/C2)."""
    if -128 <= v < 128:
        return b"\xc0" + struct.pack("<b", v)
    if -32768 <= v < 32768:
        return b"\xc1" + struct.pack("<h", v)
    return b"\xc2" + struct.pack("<i", v)


def payload(body):
    """A DUMP payload: body, RDB version 10, CRC-64."""
    b = body + b"\x0a\x00"
    return b + struct.pack("<Q", crc64(b))


def intset(values, width=2):
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    values = sorted(values)
    return struct.pack("<II", width, len(values)) + b"".join(struct.pack(fmt, v) for v in values)


def lp_entry(x):
    """One listpack entry: small ints and short strings, as Redis writes them."""
    if isinstance(x, int) and 0 <= x <= 127:
        enc = bytes([x])
    elif isinstance(x, int) and -4096 <= x < 4096:
        v = x & 0x1FFF
        enc = bytes([0xC0 | (v >> 8), v & 0xFF])
    elif isinstance(x, int):
        enc = b"\xf4" + struct.pack("<q", x)
    else:
        s = x.encode() if isinstance(x, str) else x
        if len(s) < 64:
            enc = bytes([0x80 | len(s)]) + s
        else:
            enc = bytes([0xE0 | (len(s) >> 8), len(s) & 0xFF]) + s
    n = len(enc)
    assert n < 128
    return enc + bytes([n])


def listpack(items):
    body = b"".join(lp_entry(x) for x in items)
    total = 6 + len(body) + 1
    return struct.pack("<IH", total, len(items) if len(items) < 65535 else 65535) + body + b"\xff"


def zl_entry(x, prev):
    if isinstance(x, int):
        enc = b"\xfe" + struct.pack("<b", x) if -128 <= x < 128 else b"\xc0" + struct.pack("<h", x)
    else:
        s = x.encode() if isinstance(x, str) else x
        enc = bytes([len(s)]) + s
    return bytes([prev]) + enc


def ziplist(items):
    entries = b""
    prev = 0
    for x in items:
        e = zl_entry(x, prev)
        entries += e
        prev = len(e)
    total = 10 + len(entries) + 1
    tail = 10 + len(entries) - prev if items else 10
    return struct.pack("<IIH", total, tail, len(items)) + entries + b"\xff"


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# Real payloads from redis-server 7.0.15's DUMP (tests/unit/test_rdb_value.c).
REDIS_DUMPS = {
    "list_quicklist2": "1201021a1a00000006008161028162020101dffe02c12c02f270110104ff0a00baf190b8480fd292",
    "set_intset": "0b0e0200000003000000fdff010002000a00d1b78ed9bc07c27f",
    "set_plain": "0202016201610a0075d99d835ef85f65",
    "hash_listpack": "10121200000004008166028176028167020c01ff0a00de133993f783817e",
    "zset_listpack": "1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7",
    "stream": "13011000000000000000010000000000000001404141000000190002010101020181660281670200010201000100018276"
              "310301010501030101010001827632030201050100010201000101018168028178020601ff020301010102010301016701"
              "0181ffffffffffffffff01000000000000000100000000000000019351c70ba2010000010101639351c70ba20100000100"
              "0000000000000100000000000000010a00455103eff7720010",
    "string_int": "00c139300a009d94ea2793fc08b9",
}


def hexbytes(h):
    return bytes.fromhex(h)


# ------------------------------------------------------------ resp_parse


def seeds_resp_parse():
    def frame(*args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        return out

    def put(name, data, settings=0, seed=7):
        write("fuzz_resp_parse", name, bytes([settings, seed]) + data)

    put("multibulk_get", frame("GET", "key"))
    put("pipeline", frame("SET", "k", "v") + frame("GET", "k") + frame("PING"), seed=99)
    put("binary_arg", frame("SET", b"k\x00\r\n", b"\xff\xfe\r\n\x00"))
    put("empty_frames", b"*0\r\n*-1\r\n\r\n\n  \t \r\n" + frame("PING"))
    put("inline", b"SET key value\r\nGET key\n")
    put("inline_quotes", b'SET "a\\x41\\n b" \'it\\\'s\' "\\t\\r"\r\n')
    put("inline_unbalanced", b'SET "abc\r\n')
    put("inline_nul", b"PING\x00\r\n")
    put("bad_count", b"*abc\r\n")
    put("bad_dollar", b"*1\r\n+PING\r\n")
    put("bad_bulk_len", b"*1\r\n$-5\r\n")
    put("big_bulk", b"*1\r\n$999999999999\r\n")
    put("big_count", b"*2147483647\r\n$1\r\na\r\n")
    put("leading_zero", b"*01\r\n$04\r\nPING\r\n")
    put("unauth_count", b"*11\r\n" + b"$1\r\na\r\n" * 11, settings=1)
    put("unauth_bulk", b"*1\r\n$16385\r\n" + b"x" * 64, settings=1)
    put("small_max_bulk", frame("SET", "k", "0123456789abcdefghij"), settings=2)
    put("zero_max_bulk", frame("", ""), settings=4)
    put("partial", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhel")
    put("cr_only", b"*1\r$4\rPING\r")


# ------------------------------------------------------------- reply


def seeds_reply():
    def s(b):
        b = b.encode() if isinstance(b, str) else b
        return bytes([len(b)]) + b

    def prog(resp, *ops):
        return bytes([resp]) + b"".join(ops)

    ops = [
        b"\x00" + s("simple"),
        b"\x01" + s("len\x00simple"),
        b"\x02",
        b"\x03" + s("-ERR with\r\nnewline"),
        b"\x04" + s("\r\nERR formatted\r\n") + b"\x80",
        b"\x05" + struct.pack(">q", -9223372036854775808),
        b"\x06" + s("bulk\r\n"),
        b"\x06\x00",
        b"\x07\x01",
        b"\x07\x00" + s("cstr"),
        b"\x08" + struct.pack(">q", -1),
        b"\x09",
        b"\x0a",
        b"\x0b\x02\x02\x09",
        b"\x0c\x01\x02",
        b"\x0d\x01\x02\x09",
        b"\x0e\x00",
        b"\x0f" + struct.pack(">d", 3.14159),
        b"\x10\x05",
        b"\x10\xff",
        b"\x11\x01",
        b"\x12" + s("txt") + s("verbatim text"),
        b"\x13" + s("raw") + b"\x01",
        b"\x14\x02" + s("help line 1") + s("help line 2"),
        b"\x15" + s("get"),
        b"\x16\x00\x02\x09\x17",
        b"\x16\x01\x02\x09\x09\x17",
    ]
    for resp in (0, 1):
        write("fuzz_reply", "all_ops_resp%d" % (resp + 2), prog(resp, *ops))
        write("fuzz_reply", "nested_resp%d" % (resp + 2),
              prog(resp, b"\x0b\x03", b"\x0d\x01", b"\x16\x01", b"\x0b\x02\x09\x02", b"\x09\x17", b"\x09", b"\x05" + b"\x00" * 8))
        write("fuzz_reply", "doubles_resp%d" % (resp + 2),
              prog(resp, *[b"\x10" + bytes([k]) for k in range(13)], b"\x10\xc9", b"\x10\xca",
                   b"\x0f" + struct.pack(">d", float("nan")), b"\x0f" + struct.pack(">d", -0.0)))
    write("fuzz_reply", "long_error", prog(0, b"\x04" + b"\xff\x02\x00" + b"E" * 512 + b"\xff"))


# ------------------------------------------------------------- command

KEYS = ["a", "b", "c", "d", "e", "f", "g", "h", "{a}1", "{a}2", "{a}3", "{b}1", "{b}2", "k1", "k2", "k3",
        "key", "list", "set", "zset", "hash", "str", "stream", "dst", "src", "x", "y", "z", "", "0", "1", "{a}"]

TICK, RESP3, DB1, SHARD1 = 0x20, 0x10, 0x40, 0x80


class Prog:
    """A command harness input: setup byte, then commands."""

    def __init__(self, one_shard=False):
        self.data = bytearray([1 if one_shard else 0])

    def cmd(self, *args, flags=0):
        """Arguments: str/bytes literals; K(name) for a key token."""
        assert 1 <= len(args) <= 16
        self.data.append((len(args) - 1) | flags)
        for a in args:
            if isinstance(a, K):
                self.data.append(0xE0 + KEYS.index(a.name))
                continue
            a = a.encode() if isinstance(a, str) else a
            assert len(a) < 0xE0
            self.data.append(len(a))
            self.data += a
        return self


class K:
    def __init__(self, name):
        self.name = name


def seeds_command():
    def put(name, p):
        write("fuzz_command", name, bytes(p.data))

    p = Prog()
    (p.cmd("SET", K("str"), "hello").cmd("GET", K("str")).cmd("APPEND", K("str"), " world")
      .cmd("SETRANGE", K("str"), "20", "x").cmd("GETRANGE", K("str"), "-5", "-1").cmd("STRLEN", K("str"))
      .cmd("INCR", K("k1")).cmd("INCRBY", K("k1"), "9223372036854775806").cmd("DECRBY", K("k1"), "-9")
      .cmd("INCRBYFLOAT", K("k2"), "1.5e10").cmd("SET", K("k3"), "v", "EX", "1", "GET")
      .cmd("GETEX", K("k3"), "PERSIST").cmd("GETDEL", K("k2")).cmd("MSET", K("a"), "1", K("b"), "2")
      .cmd("MGET", K("a"), K("b"), K("c")).cmd("MSETNX", K("a"), "x", K("d"), "y").cmd("SETNX", K("e"), "")
      .cmd("GETSET", K("e"), "z").cmd("LCS", K("a"), K("str"), "IDX", "WITHMATCHLEN", "MINMATCHLEN", "1"))
    put("strings", p)

    p = Prog()
    (p.cmd("RPUSH", K("list"), "a", "b", "c", "1", "2", "").cmd("LPUSH", K("list"), "z")
      .cmd("LRANGE", K("list"), "0", "-1").cmd("LINSERT", K("list"), "BEFORE", "b", "ins")
      .cmd("LPOS", K("list"), "b", "RANK", "-1", "COUNT", "0").cmd("LSET", K("list"), "-1", "last")
      .cmd("LREM", K("list"), "0", "a").cmd("LTRIM", K("list"), "1", "-2").cmd("LMOVE", K("list"), K("dst"), "LEFT", "RIGHT")
      .cmd("RPOPLPUSH", K("dst"), K("list")).cmd("LMPOP", "2", K("list"), K("dst"), "LEFT", "COUNT", "3")
      .cmd("LPOP", K("list"), "100").cmd("LLEN", K("list")).cmd("LINDEX", K("dst"), "0"))
    put("lists", p)

    p = Prog()
    (p.cmd("HSET", K("hash"), "f", "v", "g", "1", "", "").cmd("HGETALL", K("hash")).cmd("HINCRBY", K("hash"), "g", "-5")
      .cmd("HINCRBYFLOAT", K("hash"), "h", "0.1").cmd("HDEL", K("hash"), "f", "nope").cmd("HRANDFIELD", K("hash"), "-5", "WITHVALUES")
      .cmd("HSCAN", K("hash"), "0", "MATCH", "*", "COUNT", "1").cmd("HSTRLEN", K("hash"), "g").cmd("HMGET", K("hash"), "g", "x")
      .cmd("HKEYS", K("hash")).cmd("HVALS", K("hash")).cmd("HSETNX", K("hash"), "g", "2").cmd("HLEN", K("hash")))
    put("hashes", p)

    p = Prog()
    (p.cmd("SADD", K("set"), "", "a", "1").cmd("SPOP", K("set")).cmd("SPOP", K("set"), "2")
      .cmd("SADD", K("set"), "").cmd("SPOP", K("set"))
      .cmd("SADD", K("{a}1"), "1", "2", "3").cmd("SADD", K("{a}2"), "2", "x").cmd("SINTER", K("{a}1"), K("{a}2"))
      .cmd("SUNIONSTORE", K("{a}3"), K("{a}1"), K("{a}2")).cmd("SDIFFSTORE", K("dst"), K("{a}1"), K("set"))
      .cmd("SINTERCARD", "2", K("{a}1"), K("{a}2"), "LIMIT", "1").cmd("SMOVE", K("{a}1"), K("set"), "")
      .cmd("SMOVE", K("{a}1"), K("set"), "1").cmd("SRANDMEMBER", K("{a}3"), "-4").cmd("SMISMEMBER", K("{a}3"), "x", "y")
      .cmd("SSCAN", K("{a}3"), "0").cmd("SREM", K("{a}3"), "1", "2", "3", "x").cmd("SCARD", K("{a}3")))
    put("sets", p)

    p = Prog()
    (p.cmd("ZADD", K("zset"), "1", "a", "2.5", "b", "-inf", "c", "+inf", "").cmd("ZADD", K("zset"), "GT", "CH", "INCR", "5", "a")
      .cmd("ZRANGE", K("zset"), "(1", "+inf", "BYSCORE", "REV", "LIMIT", "0", "2").cmd("ZRANGEBYLEX", K("zset"), "-", "+")
      .cmd("ZPOPMIN", K("zset"), "2").cmd("ZRANK", K("zset"), "b").cmd("ZINCRBY", K("zset"), "nan", "b")
      .cmd("ZUNIONSTORE", K("{a}1"), "2", K("{a}2"), K("{a}3"), "WEIGHTS", "1", "2", "AGGREGATE", "MAX")
      .cmd("ZADD", K("{b}1"), "1", "x", "2", "y").cmd("ZRANGESTORE", K("{b}2"), K("{b}1"), "0", "-1")
      .cmd("ZINTER", "2", K("{b}1"), K("{b}2"), "WITHSCORES").cmd("ZRANDMEMBER", K("{b}1"), "-3", "WITHSCORES")
      .cmd("ZREMRANGEBYSCORE", K("{b}1"), "-inf", "(2").cmd("ZMPOP", "1", K("{b}2"), "MAX", "COUNT", "10")
      .cmd("ZSCAN", K("zset"), "0").cmd("ZMSCORE", K("zset"), "a", "zz"))
    put("zsets", p)

    p = Prog()
    (p.cmd("XADD", K("stream"), "*", "f", "v").cmd("XADD", K("stream"), "MAXLEN", "~", "10", "5-1", "a", "1", "b", "2")
      .cmd("XGROUP", "CREATE", K("stream"), "g", "0", "MKSTREAM").cmd("XGROUP", "CREATECONSUMER", K("stream"), "g", "c")
      .cmd("XRANGE", K("stream"), "-", "+", "COUNT", "5").cmd("XAUTOCLAIM", K("stream"), "g", "c", "0", "0-0", "COUNT", "2")
      .cmd("XCLAIM", K("stream"), "g", "c", "0", "5-1", "FORCE", "JUSTID").cmd("XPENDING", K("stream"), "g", "-", "+", "10")
      .cmd("XINFO", "STREAM", K("stream"), "FULL").cmd("XACK", K("stream"), "g", "5-1").cmd("XDEL", K("stream"), "5-1")
      .cmd("XTRIM", K("stream"), "MINID", "0").cmd("XSETID", K("stream"), "99-0").cmd("XLEN", K("stream"))
      .cmd("XINFO", "GROUPS", K("stream")).cmd("XGROUP", "DESTROY", K("stream"), "g"))
    put("streams", p)

    p = Prog()
    (p.cmd("SETBIT", K("x"), "7", "1").cmd("SETBIT", K("y"), "100", "1").cmd("BITOP", "OR", K("z"), K("x"), K("y"))
      .cmd("BITCOUNT", K("z"), "0", "-1", "BIT").cmd("BITPOS", K("z"), "1", "2", "-1", "BYTE")
      .cmd("BITFIELD", K("x"), "SET", "i8", "0", "-100", "INCRBY", "u4", "#1", "20", "OVERFLOW", "FAIL", "GET", "u2", "3")
      .cmd("BITFIELD_RO", K("x"), "GET", "i64", "0").cmd("GETBIT", K("y"), "100"))
    put("bits", p)

    p = Prog()
    (p.cmd("SET", K("a"), "1", "PX", "100").cmd("EXPIRE", K("b"), "10").cmd("SET", K("b"), "2")
      .cmd("EXPIRE", K("b"), "1", "NX").cmd("PEXPIREAT", K("c"), "1").cmd("TTL", K("b"))
      .cmd("PTTL", K("a"), flags=TICK).cmd("EXISTS", K("a"), K("b")).cmd("EXPIRETIME", K("b"))
      .cmd("SET", K("d"), "x", "EXAT", "1700000001").cmd("PERSIST", K("d")).cmd("KEYS", "*", flags=TICK)
      .cmd("SCAN", "0", "MATCH", "?", "COUNT", "100", "TYPE", "string").cmd("RANDOMKEY").cmd("DBSIZE")
      .cmd("EXPIRE", K("d"), "9223372036854775807").cmd("PEXPIRE", K("d"), "-1"))
    put("expire", p)

    p = Prog()
    (p.cmd("SET", K("a"), "1").cmd("RPUSH", K("b"), "x").cmd("RENAME", K("a"), K("c")).cmd("RENAMENX", K("b"), K("c"))
      .cmd("COPY", K("c"), K("d"), "DB", "1", "REPLACE").cmd("MOVE", K("b"), "1").cmd("SWAPDB", "0", "1")
      .cmd("TYPE", K("b")).cmd("OBJECT", "ENCODING", K("b")).cmd("OBJECT", "FREQ", K("b"))
      .cmd("DEL", K("b"), K("c"), K("d"), flags=DB1).cmd("UNLINK", K("a")).cmd("TOUCH", K("a"), K("b"))
      .cmd("MEMORY", "USAGE", K("c"), "SAMPLES", "0").cmd("DUMP", K("c")).cmd("FLUSHDB", flags=DB1))
    put("keys", p)

    p = Prog()
    for i in range(8):
        p.cmd("SADD", K("set"), *[str(i * 100 + j) for j in range(14)])
        p.cmd("HSET", K("hash"), *[("f%d" % (i * 7 + j)) for j in range(14)])
        p.cmd("RPUSH", K("list"), *[("v%d" % j) * 10 for j in range(14)])
    (p.cmd("FLUSHALL", "ASYNC").cmd("SET", K("a"), "b").cmd("FLUSHDB", "ASYNC").cmd("SADD", K("set"), "1"))
    put("flush_async_pending", p)

    p = Prog()
    for name, h in REDIS_DUMPS.items():
        p.cmd("RESTORE", K("k1"), "0", hexbytes(h), "REPLACE")
        p.cmd("DUMP", K("k1"))
        p.cmd("TYPE", K("k1"))
    p.cmd("RESTORE", K("k2"), "1000", payload(b"\x00" + rdb_str("restored")), "ABSTTL", "IDLETIME", "10")
    p.cmd("RESTORE", K("k3"), "0", payload(b"\x02\x02" + rdb_str("") + rdb_str("a")))
    put("restore", p)

    p = Prog()
    (p.cmd("PING").cmd("ECHO", "x", flags=RESP3).cmd("COMMAND", "COUNT").cmd("COMMAND", "GETKEYS", "SET", "k", "v")
      .cmd("COMMAND", "INFO", "get", "zadd", flags=RESP3).cmd("CLUSTER", "KEYSLOT", "{a}1").cmd("OBJECT", "HELP")
      .cmd("NOSUCH", "x").cmd("GET").cmd("XINFO", "NOPE").cmd("HGETALL", K("hash"), flags=RESP3)
      .cmd("ZRANGE", K("zset"), "0", "-1", "WITHSCORES", flags=RESP3))
    put("server_resp3", p)

    p = Prog()
    (p.cmd("MSET", K("{a}1"), "1", K("{b}1"), "2", K("a"), "3", flags=SHARD1).cmd("MGET", K("{a}1"), K("{b}1"), K("a"))
      .cmd("RENAME", K("{a}1"), K("{b}2")).cmd("SMOVE", K("{a}2"), K("{b}1"), "x").cmd("SADD", K("{a}2"), "m", flags=SHARD1)
      .cmd("SINTERSTORE", K("dst"), K("{a}2"), K("set")).cmd("COPY", K("{a}2"), K("{b}2"), "REPLACE", flags=SHARD1)
      .cmd("DEL", K("{a}1"), K("{a}2"), K("{b}1"), K("{b}2")).cmd("DBSIZE", flags=SHARD1))
    put("cross_shard", p)

    p = Prog(one_shard=True)
    (p.cmd("SADD", K("set"), "1", "2", "3").cmd("SADD", K("set"), "x" * 70).cmd("SPOP", K("set"), "3")
      .cmd("ZADD", K("zset"), *sum([[str(i), "m%d" % i] for i in range(7)], [])).cmd("ZPOPMAX", K("zset"), "7"))
    put("one_shard_convert", p)

    dict_path = os.path.join(HERE, "command.dict")
    names = ("PING ECHO COMMAND DBSIZE FLUSHDB FLUSHALL CLUSTER MEMORY DEL UNLINK EXISTS TOUCH TYPE KEYS SCAN "
             "RANDOMKEY RENAME RENAMENX COPY DUMP RESTORE MOVE SWAPDB EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL "
             "EXPIRETIME PEXPIRETIME PERSIST OBJECT GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX "
             "APPEND STRLEN GETRANGE SUBSTR SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT LPUSH RPUSH LPUSHX RPUSHX "
             "LPOP RPOP LLEN LRANGE LINDEX LSET LREM LTRIM LINSERT LPOS LMOVE RPOPLPUSH LMPOP HSET HGET HDEL HLEN "
             "HEXISTS HGETALL HMGET HMSET HSETNX HSTRLEN HKEYS HVALS HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN SADD SREM "
             "SCARD SISMEMBER SMISMEMBER SMEMBERS SPOP SRANDMEMBER SMOVE SINTER SUNION SDIFF SINTERCARD SINTERSTORE "
             "SUNIONSTORE SDIFFSTORE SSCAN ZADD ZCARD ZSCORE ZMSCORE ZINCRBY ZREM ZRANK ZREVRANK ZCOUNT ZRANGE "
             "ZRANGEBYSCORE ZREVRANGEBYSCORE ZREVRANGE ZRANGEBYLEX ZREVRANGEBYLEX ZLEXCOUNT ZPOPMIN ZPOPMAX "
             "ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZRANDMEMBER ZSCAN ZRANGESTORE ZUNIONSTORE ZINTERSTORE "
             "ZDIFFSTORE ZUNION ZINTER ZDIFF ZINTERCARD ZMPOP SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD "
             "BITFIELD_RO LCS XADD XTRIM XLEN XRANGE XREVRANGE XDEL XSETID XACK XAUTOCLAIM XCLAIM XGROUP XINFO "
             "XPENDING").split()
    options = ("NX XX GT LT CH INCR EX PX EXAT PXAT KEEPTTL GET PERSIST WITHSCORES WITHVALUES LIMIT BYSCORE BYLEX "
               "REV COUNT MATCH TYPE LEFT RIGHT BEFORE AFTER RANK MAXLEN WEIGHTS AGGREGATE SUM MIN MAX IDX LEN "
               "WITHMATCHLEN MINMATCHLEN BIT BYTE OVERFLOW WRAP SAT FAIL ASYNC SYNC REPLACE ABSTTL IDLETIME FREQ "
               "DB MINID MKSTREAM CREATE CREATECONSUMER DELCONSUMER DESTROY SETID STREAM GROUPS CONSUMERS FULL "
               "FORCE JUSTID RETRYCOUNT TIME IDLE ENTRIESREAD ENCODING HELP GETKEYS INFO DOCS USAGE SAMPLES "
               "KEYSLOT AND OR XOR NOT * + - ~ $ > inf -inf +inf nan 0 -1 1 2 9223372036854775807 "
               "-9223372036854775808 4294967296 1.5 1e308 i8 u8 i64 u63 #0 0-0 0-1 (1 [a").split()
    with open(dict_path, "w") as f:
        f.write("# libFuzzer dictionary of fuzz_command: the commands it runs and their options\n")
        f.write("# (written by tests/fuzz/make_seeds.py)\n")
        for w in names + options:
            f.write('"%s"\n' % w.replace("\\", "\\\\").replace('"', '\\"'))
            # the length-prefixed form the harness reads
            f.write('"\\x%02x%s"\n' % (len(w), w.replace("\\", "\\\\").replace('"', '\\"')))


# ------------------------------------------------------------ rdb_load
    # a command name with NULs where a table name ends: the lookup once
    # read past "decr" (found by fuzz_command; clang's ASan shows it)
    p = Prog()
    p.cmd(b"DECR\x00\x0f", K("set")).cmd(b"GET\x00", K("k1"))
    put("regression_nul_in_name", p)


def seeds_rdb_load():
    def header(version=10):
        h = b"REDIS%04d" % version
        for k, v in (("redis-ver", "7.0.15"), ("redis-bits", "64"), ("ctime", "1700000000"), ("used-mem", "1000000"),
                     ("aof-base", "0")):
            h += b"\xfa" + rdb_str(k) + rdb_str(v)
        return h

    def rdb_file(body, version=10, checksum=True):
        b = header(version) + body + b"\xff"
        return b + struct.pack("<Q", crc64(b) if checksum else 0)

    def key(t, name, value, expire_ms=None):
        out = b""
        if expire_ms is not None:
            out += b"\xfc" + struct.pack("<Q", expire_ms)
        return out + bytes([t]) + rdb_str(name) + value

    values = {
        "string": (0, rdb_str("hello")),
        "string_int": (0, rdb_int_str(-12345)),
        "string_empty": (0, rdb_str("")),
        "list_plain": (1, rdb_len(3) + rdb_str("a") + rdb_str("") + rdb_int_str(7)),
        "set_plain": (2, rdb_len(3) + rdb_str("x") + rdb_str("") + rdb_str("1")),
        "zset_text": (3, rdb_len(2) + rdb_str("m") + b"\x031.5" + rdb_str("n") + b"\xfe"),
        "hash_plain": (4, rdb_len(2) + rdb_str("f") + rdb_str("v") + rdb_str("") + rdb_str("")),
        "zset_binary": (5, rdb_len(2) + rdb_str("a") + struct.pack("<d", 1.0) + rdb_str("b") + struct.pack("<d", -2.5)),
        "hash_zipmap": (9, rdb_str(bytes([2, 1, ord("f"), 1, 0, ord("v"), 1, ord("g"), 1, 0, ord("w"), 0xff]))),
        "list_ziplist": (10, rdb_str(ziplist(["a", 5, "bcd", -300]))),
        "set_intset": (11, rdb_str(intset([1, -2, 300]))),
        "set_intset64": (11, rdb_str(intset([1, 2**40], 8))),
        "zset_ziplist": (12, rdb_str(ziplist(["a", 1, "b", "2.5"]))),
        "hash_ziplist": (13, rdb_str(ziplist(["f", "v", "n", 12]))),
        "list_quicklist": (14, rdb_len(2) + rdb_str(ziplist(["a", "b"])) + rdb_str(ziplist([1, 2, 3]))),
        "hash_listpack": (16, rdb_str(listpack(["f", "v", "g", 12]))),
        "zset_listpack": (17, rdb_str(listpack(["a", 1, "b", "2.5"]))),
        "list_quicklist2": (18, rdb_len(2) + rdb_len(2) + rdb_str(listpack(["a", "b", 3])) + rdb_len(1) + rdb_str(b"plain node")),
    }
    for name, (t, v) in values.items():
        write("fuzz_rdb_load", "file_" + name, b"\x00" + rdb_file(b"\xfe\x00\xfb\x01\x00" + key(t, "k", v)))
        write("fuzz_rdb_load", "dump_" + name, b"\x01" + bytes([t]) + v)
    for name, h in REDIS_DUMPS.items():
        body = hexbytes(h)[:-10]
        write("fuzz_rdb_load", "redis_dump_" + name, b"\x01" + body)
        write("fuzz_rdb_load", "redis_file_" + name,
              b"\x00" + rdb_file(b"\xfe\x00" + bytes([body[0]]) + rdb_str("k") + body[1:]))

    every = b"".join(key(t, "k" + name, v) for name, (t, v) in values.items())
    write("fuzz_rdb_load", "file_every_type", b"\x00" + rdb_file(b"\xfe\x00\xfb" + rdb_len(len(values)) + b"\x00" + every))
    write("fuzz_rdb_load", "file_every_type_crc_fixup", b"\x02" + rdb_file(every, checksum=True))
    write("fuzz_rdb_load", "file_no_checksum", b"\x00" + rdb_file(b"\xfe\x01" + key(0, "a", rdb_str("1")), checksum=False))
    write("fuzz_rdb_load", "file_dbs_expire", b"\x00" + rdb_file(
        b"\xfe\x00" + key(0, "live", rdb_str("1"), 1800000000000) + key(0, "gone", rdb_str("1"), 1000) +
        b"\xfe\x03\xfb\x02\x01" + b"\xfd" + struct.pack("<i", 1900000000) + key(0, "s", rdb_str("2")) +
        b"\xf8\x05\xf9\x07" + key(2, "set", rdb_len(1) + rdb_str("m"))))
    write("fuzz_rdb_load", "file_duplicate_merge", b"\x04" + rdb_file(b"\xfe\x00" + key(0, "a", rdb_str("1")) * 2))
    write("fuzz_rdb_load", "file_function", b"\x00" + rdb_file(b"\xf5" + rdb_str("#!lua name=lib\nreturn 1") +
                                                               key(0, "a", rdb_str("1"))))
    write("fuzz_rdb_load", "file_function_refused", b"\x00" + rdb_file(b"\xf5" + rdb_str("xrefused")))
    write("fuzz_rdb_load", "file_huge_resizedb", b"\x00" + rdb_file(b"\xfe\x00\xfb\x81" + struct.pack(">Q", 2**62) +
                                                                    b"\x00" + key(0, "a", rdb_str("1"))))
    write("fuzz_rdb_load", "file_version5", b"\x00" + rdb_file(key(0, "a", rdb_str("1")), version=5))
    write("fuzz_rdb_load", "file_version1", b"\x00" + header(1)[:9] + key(0, "a", rdb_str("1")) + b"\xff")
    # LZF: a literal run of "hello", then a back reference of 5 bytes at distance 5
    lzf = b"\xc3" + rdb_len(8) + rdb_len(10) + b"\x04hello" + bytes([(5 - 2) << 5, 4])
    write("fuzz_rdb_load", "dump_lzf_string", b"\x01\x00" + lzf)
    write("fuzz_rdb_load", "dump_crc_ok", b"\x01" + payload(b"\x00" + rdb_str("payload")))


def main():
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    seeds_resp_parse()
    seeds_reply()
    seeds_command()
    seeds_rdb_load()
    n = sum(len(files) for _, _, files in os.walk(CORPUS))
    print("make_seeds.py: %d seeds in %s" % (n, os.path.relpath(CORPUS)))


if __name__ == "__main__":
    sys.exit(main())
