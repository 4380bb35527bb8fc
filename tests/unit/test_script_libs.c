/*
 * The libraries scripts see: cjson (Debian's, with ringkv's guards), bit
 * (Debian's, guarded), cmsgpack and struct (written for ringkv): Redis's
 * own test vectors from scripting.tcl, round trips of every type and size
 * class, error texts, and hostile input (random bytes, huge declared
 * lengths, deep nesting, bad formats) that must end in an error, never a
 * crash.
 */
#include "test_script_fixture.h"

static struct script_engine *E;

static int setup(void **state) {
    (void)state;
    E = script_engine_new();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    script_engine_free(E);
    E = NULL;
    return 0;
}

/* The script must run to its end without error (asserts inside). */
static void ok(const char *body) {
    const char *got = eval2(E, body);
    if (strcmp(got, "$-1\r\n") != 0) fail_msg("script failed: %s\n--- %s", got, body);
}

/* ---- cjson ------------------------------------------------------------------------------- */

static void test_cjson(void **state) {
    (void)state;
    assert_string_equal(eval2(E, "return table.concat(cjson.decode('[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]'), ' ')"),
                        "$26\r\n0 -5000 -1 0.0003 1023.2 0\r\n");
    assert_string_equal(eval2(E, "local d = cjson.decode('{\"keya\": \"a\", \"keyb\": \"b\"}') return {d.keya, d.keyb}"),
                        "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    /* scripting.tcl's JSON smoke test */
    ok("local some_map = {s1='Some string', n1=100, a1={'Some','String','Array'}, nil1=nil, b1=true, b2=false}\n"
       "local encoded = cjson.encode(some_map)\n"
       "local decoded = cjson.decode(encoded)\n"
       "assert(table.concat(some_map) == table.concat(decoded))\n"
       "cjson.encode_keep_buffer(false)\n"
       "encoded = cjson.encode(some_map)\n"
       "decoded = cjson.decode(encoded)\n"
       "assert(table.concat(some_map) == table.concat(decoded))\n"
       "local table1 = {one='one', [1]='one'}\n"
       "encoded = cjson.encode(table1)\n"
       "decoded = cjson.decode(encoded)\n"
       "assert(decoded['one'] == table1['one'])\n"
       "assert(decoded['1'] == table1[1])\n"
       "local array1 = {[1]='one', [2]='two'}\n"
       "encoded = cjson.encode(array1)\n"
       "decoded = cjson.decode(encoded)\n"
       "assert(table.concat(array1) == table.concat(decoded))\n"
       "local invalid_map = {}\n"
       "invalid_map[false] = 'false'\n"
       "local ok, encoded = pcall(cjson.encode, invalid_map)\n"
       "assert(ok == false)\n"
       "cjson.encode_max_depth(1)\n"
       "ok, encoded = pcall(cjson.encode, some_map)\n"
       "assert(ok == false)\n"
       "cjson.decode_max_depth(1)\n"
       "ok, decoded = pcall(cjson.decode, '{\"obj\": {\"array\": [1,2,3,4]}}')\n"
       "assert(ok == false)\n"
       "ok, encoded = pcall(cjson.encode, {num1=0/0})\n"
       "assert(ok == false)\n"
       "cjson.encode_invalid_numbers(true)\n"
       "ok, encoded = pcall(cjson.encode, {num1=0/0})\n"
       "assert(ok == true)\n"
       "cjson.decode_max_depth(1000)\n"
       "cjson.encode_max_depth(1000)\n"
       "cjson.encode_invalid_numbers(false)\n"
       "cjson.encode_keep_buffer(true)");
    assert_string_equal(eval2(E, "return cjson.encode({1, 2, 'x', {a=true}})"), "$20\r\n[1,2,\"x\",{\"a\":true}]\r\n");
    assert_string_equal(eval2(E, "return cjson.decode('[null]')[1] == cjson.null"), ":1\r\n");
    assert_string_equal(eval2(E, "return cjson.encode('a\"b\\\\c\\n/')"), "$13\r\n\"a\\\"b\\\\c\\n\\/\"\r\n");
    assert_prefix(eval2(E, "return cjson.decode('{')"),
                  "-ERR user_script:1: Expected object key string but found T_END at character 2 script: ");
    assert_contains(eval2(E, "\n\nreturn cjson.decode('{')"), ", on @user_script:3.");
    assert_prefix(eval2(E, "return cjson.encode()"), "-ERR user_script:1: bad argument #1 to 'encode' (expected 1 argument)");
    assert_prefix(eval2(E, "return cjson.decode()"), "-ERR user_script:1: bad argument #1 to 'decode' (expected 1 argument)");
    assert_prefix(eval2(E, "return cjson.encode(function() end)"),
                  "-ERR user_script:1: Cannot serialise function: type not supported");
    assert_prefix(eval2(E, "return cjson.encode({1/0})"), "-ERR user_script:1: Cannot serialise number: must not be NaN or Inf");
    /* new instances are guarded too */
    assert_string_equal(eval2(E, "local j = cjson.new() return j.encode({7})"), "$3\r\n[7]\r\n");
    assert_prefix(eval2(E, "local j = cjson.new() local a = {} a[1] = a return j.encode(a)"),
                  "-ERR user_script:1: Cannot serialise, excessive nesting (1001)");
}

static void test_cjson_guards(void **state) {
    (void)state;
    /* a cycle: refused at cjson's default depth */
    assert_prefix(eval2(E, "local a = {} a[1] = a return cjson.encode(a)"),
                  "-ERR user_script:1: Cannot serialise, excessive nesting (1001)");
    assert_prefix(eval2(E, "local a = {} a.x = a return cjson.encode(a)"),
                  "-ERR user_script:1: Cannot serialise, excessive nesting (1001)");
    /* a DAG of 2^40 paths: refused on size, quickly */
    assert_prefix(eval2(E, "local a = {'x'} for i = 1, 40 do a = {a, a} end return cjson.encode(a)"),
                  "-ERR user_script:1: Cannot serialise: encoded JSON would exceed");
    /* the same 10 MB string 20 times: 1.2 GB reserved by the encoder, refused */
    assert_prefix(eval2(E, "local s = string.rep('x', 10*1024*1024) local t = {} for i=1,20 do t[i] = s end "
                           "return #cjson.encode(t)"),
                  "-ERR user_script:1: Cannot serialise: encoded JSON would exceed");
    /* below the limit it works */
    assert_string_equal(eval2(E, "local s = string.rep('x', 1024*1024) local t = {} for i=1,20 do t[i] = s end "
                                 "return #cjson.encode(t)"),
                        ":20971581\r\n");
    /* a sparse array written as a billion nulls: refused */
    assert_prefix(eval2(E, "cjson.encode_sparse_array(false, 0) local ok, e = pcall(cjson.encode, {[1]=1, [1e9]=1}) "
                           "cjson.encode_sparse_array(false, 2, 10) error(e)"),
                  "-ERR user_script:1: Cannot serialise: encoded JSON would exceed");
    assert_prefix(eval2(E, "return cjson.encode({[1]=1, [1e9]=1})"),
                  "-ERR user_script:1: Cannot serialise table: excessively sparse array");
}

/* ---- bit ---------------------------------------------------------------------------------- */

static void test_bit(void **state) {
    (void)state;
    ok("assert(0x7fffffff == 2147483647, 'broken hex literals');\n"
       "assert(0xffffffff == -1 or 0xffffffff == 2^32-1, 'broken hex literals');\n"
       "assert(tostring(-1) == '-1', 'broken tostring()');\n"
       "assert(tostring(0xffffffff) == '-1' or tostring(0xffffffff) == '4294967295', 'broken tostring()')");
    ok("assert(bit.tobit(1) == 1); assert(bit.band(1) == 1); assert(bit.bxor(1,2) == 3);"
       "assert(bit.bor(1,2,4,8,16,32,64,128) == 255)");
    assert_string_equal(eval2(E, "return {bit.tohex(255), bit.tohex(255, -4), bit.tohex(-1, 2), bit.lshift(1, 4), "
                                 "bit.rshift(256, 4), bit.arshift(-256, 4), bit.bnot(0), bit.rol(1, 33), bit.bswap(1)}"),
                        "*9\r\n$8\r\n000000ff\r\n$4\r\n00FF\r\n$2\r\nff\r\n:16\r\n:16\r\n:-16\r\n:-1\r\n:2\r\n:16777216\r\n");
    /* CVE-2024-31449: a count of -2^31 read past a buffer */
    assert_string_equal(eval2(E, "return bit.tohex(65535, -2147483648)"), "$8\r\n0000FFFF\r\n");
    assert_string_equal(eval2(E, "return bit.tohex(65535, 2147483648)"), "$8\r\n0000FFFF\r\n");
    assert_prefix(eval2(E, "return bit.tohex()"), "-ERR user_script:1: bad argument #1 to 'tohex' (number expected, got no value)");
    /* redis version api from functions.tcl */
    assert_string_equal(eval2(E, "local version = redis.REDIS_VERSION_NUM return string.format('%s.%s.%s', "
                                 "bit.band(bit.rshift(version, 16), 0x000000ff), bit.band(bit.rshift(version, 8), 0x000000ff), "
                                 "bit.band(version, 0x000000ff)) == redis.REDIS_VERSION"),
                        ":1\r\n");
}

/* ---- cmsgpack ------------------------------------------------------------------------------ */

static const char HEX_FN[] =
    "local function hex(s) local h = '' for i = 1, #s do h = h .. string.format('%02x', string.byte(s, i)) end return h end\n";

static const char *hexeval(const char *expr) {
    static char body[4096];
    snprintf(body, sizeof(body), "%sreturn hex(%s)", HEX_FN, expr);
    return eval2(E, body);
}

static void test_cmsgpack_vectors(void **state) {
    (void)state;
    /* scripting.tcl */
    assert_string_equal(hexeval("cmsgpack.pack(0.1)"), "$18\r\ncb3fb999999999999a\r\n");
    assert_string_equal(hexeval("cmsgpack.pack(-1099511627776)"), "$18\r\nd3ffffff0000000000\r\n");
    /* every size class */
    struct {
        const char *expr, *hex;
    } v[] = {
        { "cmsgpack.pack(0)", "00" },
        { "cmsgpack.pack(127)", "7f" },
        { "cmsgpack.pack(128)", "cc80" },
        { "cmsgpack.pack(255)", "ccff" },
        { "cmsgpack.pack(256)", "cd0100" },
        { "cmsgpack.pack(65535)", "cdffff" },
        { "cmsgpack.pack(65536)", "ce00010000" },
        { "cmsgpack.pack(4294967295)", "ceffffffff" },
        { "cmsgpack.pack(4294967296)", "cf0000000100000000" },
        { "cmsgpack.pack(-1)", "ff" },
        { "cmsgpack.pack(-32)", "e0" },
        { "cmsgpack.pack(-33)", "d0df" },
        { "cmsgpack.pack(-128)", "d080" },
        { "cmsgpack.pack(-129)", "d1ff7f" },
        { "cmsgpack.pack(-32768)", "d18000" },
        { "cmsgpack.pack(-32769)", "d2ffff7fff" },
        { "cmsgpack.pack(-2147483648)", "d280000000" },
        { "cmsgpack.pack(-2147483649)", "d3ffffffff7fffffff" },
        { "cmsgpack.pack(0.5)", "ca3f000000" },
        { "cmsgpack.pack(1/0)", "ca7f800000" },
        { "cmsgpack.pack(2^63)", "ca5f000000" },
        { "cmsgpack.pack(2^63 + 2^39)", "cb43e0000010000000" },
        { "cmsgpack.pack(-2^63)", "d38000000000000000" },
        { "cmsgpack.pack(nil)", "c0" },
        { "cmsgpack.pack(true, false)", "c3c2" },
        { "cmsgpack.pack('')", "a0" },
        { "cmsgpack.pack('abc')", "a3616263" },
        { "cmsgpack.pack({})", "90" },
        { "cmsgpack.pack({1,2})", "920102" },
        { "cmsgpack.pack({a=1})", "81a16101" },
        { "cmsgpack.pack({[1]=1,[3]=3})", "820101" "0303" },
        { "cmsgpack.pack(function() end)", "c0" },
        { "cmsgpack.pack(string.rep('x', 31)):sub(1, 1)", "bf" },
        { "cmsgpack.pack(string.rep('x', 32)):sub(1, 2)", "d920" },
        { "cmsgpack.pack(string.rep('x', 256)):sub(1, 3)", "da0100" },
        { "cmsgpack.pack(string.rep('x', 65536)):sub(1, 5)", "db00010000" },
        { "cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}):sub(1, 3)", "dc0010" },
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        char want[128];
        snprintf(want, sizeof(want), "$%zu\r\n%s\r\n", strlen(v[i].hex), v[i].hex);
        const char *got = hexeval(v[i].expr);
        if (strcmp(got, want) != 0) fail_msg("%s: got %s want %s", v[i].expr, got, want);
    }
    /* circular references: a deep copy down to 16 levels (scripting.tcl) */
    const char *circ =
        "local a = {x=nil,y=5}\n"
        "local b = {x=a}\n"
        "a['x'] = b\n"
        "local encoded = cmsgpack.pack(a)\n"
        "local re = cmsgpack.unpack(encoded)\n"
        "assert(re)\n"
        "assert(re.x)\n"
        "assert(re.x.x.y == re.y)\n"
        "assert(re.x.x.x.x.y == re.y)\n"
        "assert(re.x.x.x.x.x.x.y == re.y)\n"
        "assert(re.x.x.x.x.x.x.x.x.x.x.y == re.y)\n"
        "assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y)\n"
        "assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x)\n"
        "assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil)\n"
        "return {hex(encoded), re.x.x.x.x.x.x.x.x.y == re.y, re.y == 5}";
    char body[4096];
    snprintf(body, sizeof(body), "%s%s", HEX_FN, circ);
    assert_string_equal(eval2(E, body),
                        "*3\r\n$146\r\n82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905"
                        "a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0\r\n:1\r\n:1\r\n");
}

static void test_cmsgpack_roundtrip(void **state) {
    (void)state;
    /* scripting.tcl's smoke test */
    ok("local str_lt_32 = string.rep('x', 30)\n"
       "local str_lt_255 = string.rep('x', 250)\n"
       "local str_lt_65535 = string.rep('x', 65530)\n"
       "local str_long = string.rep('x', 100000)\n"
       "local array_lt_15 = {1, 2, 3, 4, 5}\n"
       "local array_lt_65535 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}\n"
       "local array_big = {}\n"
       "for i=1, 100000 do array_big[i] = i end\n"
       "local map_lt_15 = {a=1, b=2}\n"
       "local map_big = {}\n"
       "for i=1, 100000 do map_big[tostring(i)] = i end\n"
       "local some_map = {s1=str_lt_32, s2=str_lt_255, s3=str_lt_65535, s4=str_long, d1=0.1, i1=1, i2=250, "
       "i3=65530, i4=100000, i5=2^40, i6=-1, i7=-120, i8=-32000, i9=-100000, i10=-3147483648, a1=array_lt_15, "
       "a2=array_lt_65535, a3=array_big, m1=map_lt_15, m2=map_big, b1=false, b2=true, n=nil}\n"
       "local encoded = cmsgpack.pack(some_map)\n"
       "local decoded = cmsgpack.unpack(encoded)\n"
       "assert(table.concat(some_map) == table.concat(decoded))\n"
       "local offset, decoded_one = cmsgpack.unpack_one(encoded, 0)\n"
       "assert(table.concat(some_map) == table.concat(decoded_one))\n"
       "assert(offset == -1)\n"
       "local encoded_multiple = cmsgpack.pack(str_lt_32, str_lt_255, str_lt_65535, str_long)\n"
       "local offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, 0)\n"
       "assert(obj == str_lt_32)\n"
       "offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)\n"
       "assert(obj == str_lt_255)\n"
       "offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)\n"
       "assert(obj == str_lt_65535)\n"
       "offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)\n"
       "assert(obj == str_long)\n"
       "assert(offset == -1)\n"
       /* values survive, deep tables too */
       "local t = {a={b={c={1,2,{d='e'}}}}, n=-12345678901, f=1.5, s='\\0\\1\\2'}\n"
       "local u = cmsgpack.unpack(cmsgpack.pack(t))\n"
       "assert(u.a.b.c[3].d == 'e' and u.n == -12345678901 and u.f == 1.5 and u.s == '\\0\\1\\2')\n"
       "assert(select('#', cmsgpack.unpack(cmsgpack.pack(1, 2, 3))) == 3)\n"
       "local o, a, b = cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)\n"
       "assert(o == 2 and a == 1 and b == 2)\n"
       "assert(select('#', cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 0)) == 3)");
    /* decoding what pack never writes */
    assert_string_equal(eval2(E, "return cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')"), ":-1\r\n");
    assert_string_equal(eval2(E, "return cmsgpack.unpack('\\222\\0\\1\\161\\107\\7').k"), ":7\r\n");
    assert_string_equal(eval2(E, "return cmsgpack.unpack('\\221\\0\\0\\0\\1\\42')[1]"), ":42\r\n");
}

static void test_cmsgpack_errors(void **state) {
    (void)state;
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\205')"), "-ERR user_script:1: Missing bytes in input.");
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\193')"), "-ERR user_script:1: Bad data format in input.");
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\196\\1x')"), "-ERR user_script:1: Bad data format in input.");
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\221\\255\\255\\255\\255')"), "-ERR user_script:1: Missing bytes in input.");
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\219\\255\\255\\255\\255abc')"), "-ERR user_script:1: Missing bytes in input.");
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\223\\255\\255\\255\\255')"), "-ERR user_script:1: Missing bytes in input.");
    assert_prefix(eval2(E, "return cmsgpack.unpack('\\129\\192\\1')"), "-ERR table index is nil");
    assert_prefix(eval2(E, "return cmsgpack.unpack_one('\\1', 5)"),
                  "-ERR user_script:1: Start offset 5 greater than input length 1.");
    assert_prefix(eval2(E, "return cmsgpack.unpack_limit('\\1', -1)"),
                  "-ERR user_script:1: Invalid request to unpack with offset of 0 and limit of 1.");
    assert_prefix(eval2(E, "return cmsgpack.pack()"), "-ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)");
    /* nesting too deep to decode: an error, not a crash */
    assert_prefix(eval2(E, "return cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1')"),
                  "-ERR user_script:1: stack overflow");
    /* too many values at once */
    assert_prefix(eval2(E, "return cmsgpack.unpack(string.rep('\\1', 100000))"), "-ERR user_script:1: stack overflow");
    assert_string_equal(eval2(E, "local o, v = cmsgpack.unpack_one(string.rep('\\1', 100000)) return o"), ":1\r\n");
    /* random bytes: errors or values, never a crash */
    ok("math.randomseed(7)\n"
       "for i = 1, 20000 do\n"
       "  local n = math.random(1, 24) local b = {}\n"
       "  for j = 1, n do b[j] = string.char(math.random(0, 255)) end\n"
       "  pcall(cmsgpack.unpack, table.concat(b))\n"
       "  pcall(cmsgpack.unpack_limit, table.concat(b), math.random(0, 3), math.random(0, n))\n"
       "end");
    /* mutations of valid encodings */
    ok("math.randomseed(11)\n"
       "local base = cmsgpack.pack({a={1,2,3}, b='hello', c={x=1.5, y=-7}, d=true})\n"
       "for i = 1, 20000 do\n"
       "  local pos = math.random(1, #base)\n"
       "  local s = base:sub(1, pos - 1) .. string.char(math.random(0, 255)) .. base:sub(pos + 1)\n"
       "  pcall(cmsgpack.unpack, s:sub(1, math.random(0, #s)))\n"
       "end");
}

/* ---- struct ---------------------------------------------------------------------------------- */

static void test_struct(void **state) {
    (void)state;
    ok("assert(struct.pack('>I2', 258) == '\\1\\2')\n"
       "assert(struct.pack('<I2', 258) == '\\2\\1')\n"
       "assert(struct.pack('>i4', -2) == '\\255\\255\\255\\254')\n"
       "assert(struct.pack('b', -1) == '\\255')\n"
       "assert(struct.pack('B', 255) == '\\255')\n"
       "assert(struct.pack('>h', 1) == '\\0\\1')\n"
       "assert(#struct.pack('l', 1) == 8 and #struct.pack('L', 1) == 8 and #struct.pack('T', 1) == 8)\n"
       "assert(struct.pack('>i3', 65536 + 2) == '\\1\\0\\2')\n"
       "assert(struct.pack('c3', 'abcdef') == 'abc')\n"
       "assert(struct.pack('c0', 'abcdef') == 'abcdef')\n"
       "assert(struct.pack('s', 'ab') == 'ab\\0')\n"
       "assert(struct.pack('xbx', 1) == '\\0\\1\\0')\n"
       "assert(struct.pack('>!4 b i4', 1, 2) == '\\1\\0\\0\\0\\0\\0\\0\\2')\n"
       "assert(struct.pack('>i16', -1) == string.rep('\\0', 8) .. string.rep('\\255', 8))\n"
       "local a, b, c, n = struct.unpack('>I2 <i2 b', '\\1\\2\\255\\255\\128')\n"
       "assert(a == 258 and b == -1 and c == -128 and n == 6)\n"
       "assert(struct.unpack('>i16', struct.pack('>i16', -1)) == -1)\n"
       "local f, d = struct.unpack('<f<d', struct.pack('<f<d', 1.5, -2.25))\n"
       "assert(f == 1.5 and d == -2.25)\n"
       "local f2 = struct.unpack('>f', struct.pack('>f', 0.5)) assert(f2 == 0.5)\n"
       "local s, nxt = struct.unpack('s', 'hello\\0rest') assert(s == 'hello' and nxt == 7)\n"
       "local s2, nx = struct.unpack('B c0', '\\3abcd') assert(s2 == 'abc' and nx == 5)\n"
       "assert(select('#', struct.unpack('B c0', '\\3abcd')) == 2)\n"
       "local x = struct.unpack('c2', 'abcd', 3) assert(x == 'cd')\n"
       "assert(struct.size('i4i8') == 12 and struct.size('!8 b d') == 16 and struct.size('>c5') == 5)\n"
       "assert(struct.size('z') == 0)\n"
       "assert(struct.unpack('>I8', struct.pack('>I8', 2^53)) == 2^53)\n"
       "assert(struct.unpack('<i0', '') == 0)");
    struct {
        const char *expr, *err;
    } bad[] = {
        { "struct.pack('z', 1)", "bad argument #1 to 'pack' (invalid format option 'z')" },
        { "struct.pack('i40', 1)", "integral size 40 is larger than limit of 32" },
        { "struct.pack('i99999999999', 1)", "integral size overflow" },
        { "struct.pack('!3 i4', 1)", "alignment 3 is not a power of 2" },
        { "struct.pack('i4')", "bad argument #2 to 'pack' (number expected, got nil)" },
        { "struct.pack('i4i4', 1)", "bad argument #3 to 'pack' (number expected, got nil)" },
        { "struct.pack('c5', 'ab')", "bad argument #3 to 'pack' (string too short)" },
        { "struct.unpack('i4', 'abc')", "bad argument #2 to 'unpack' (data string too short)" },
        { "struct.unpack('c999999999', 'abc')", "bad argument #2 to 'unpack' (data string too short)" },
        { "struct.unpack('s', 'abc')", "unfinished string in data" },
        { "struct.unpack('c0', 'abc')", "format 'c0' needs a previous size" },
        { "struct.unpack('b c0', '\\255abc')", "bad argument #2 to 'unpack' (data string too short)" },
        { "struct.unpack('i4', 'abcd', 0)", "bad argument #3 to 'unpack' (offset must be 1 or greater)" },
        { "struct.unpack('i4', 'abcd', -5)", "bad argument #2 to 'unpack' (data string too short)" },
        { "struct.size('s')", "bad argument #1 to 'size' (option 's' has no fixed size)" },
        { "struct.size('c0')", "bad argument #1 to 'size' (option 'c0' has no fixed size)" },
        { "struct.size('%')", "bad argument #1 to 'size' (invalid format option '%')" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char body[256], want[256];
        snprintf(body, sizeof(body), "return %s", bad[i].expr);
        snprintf(want, sizeof(want), "-ERR user_script:1: %s", bad[i].err);
        const char *got = eval2(E, body);
        if (strncmp(got, want, strlen(want)) != 0) fail_msg("%s: got %s want %s", bad[i].expr, got, want);
    }
    /* random formats and data: errors or values, never a crash */
    ok("math.randomseed(3)\n"
       "local opts = {'b','B','h','H','l','L','T','i','I','i3','I7','i16','i32','f','d','x','c','c0','c2','s','<','>','!',"
       "'!2','!16',' ','9','z'}\n"
       "for i = 1, 20000 do\n"
       "  local f = {} for j = 1, math.random(1, 6) do f[j] = opts[math.random(1, #opts)] end\n"
       "  local fmt = table.concat(f)\n"
       "  local d = {} for j = 1, math.random(0, 40) do d[j] = string.char(math.random(0, 255)) end\n"
       "  local data = table.concat(d)\n"
       "  pcall(struct.unpack, fmt, data, math.random(-2, 5))\n"
       "  pcall(struct.pack, fmt, math.random(-1000, 1000), 'abc', 2^70, -2^70, 0/0)\n"
       "  pcall(struct.size, fmt)\n"
       "end");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cjson, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cjson_guards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmsgpack_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmsgpack_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmsgpack_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_struct, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
