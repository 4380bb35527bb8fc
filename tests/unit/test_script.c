/*
 * The scripting engine (src/script/) against a fake host: values both ways
 * in RESP2 and RESP3 (Redis's conversion tables), redis.call's argv, the
 * 7.0 error texts, the sandbox (globals, removed functions, read-only
 * tables), math.random, shebang flags, SHA1 vectors, the registry shared
 * by engines on two threads and its flush, killing and aborting from
 * tick() and call(), nesting limits. Library round trips are in
 * test_script_libs.c, FUNCTION/FCALL in test_script_functions.c.
 */
#include "test_script_fixture.h"

#include <ctype.h>
#include <pthread.h>
#include <strings.h>

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

/* ---- SHA1 -------------------------------------------------------------------------- */

static void test_sha1_vectors(void **state) {
    (void)state;
    char hex[41];
    script_sha1hex("", 0, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    script_sha1hex("abc", 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    script_sha1hex("Pizza & Mandolino", 17, hex);
    assert_string_equal(hex, "74822d82031af7493c20eefa13bd07ec4fada82f");
    const char *fox = "The quick brown fox jumps over the lazy dog";
    script_sha1hex(fox, strlen(fox), hex);
    assert_string_equal(hex, "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";   /* 56 bytes */
    script_sha1hex(two, strlen(two), hex);
    assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    script_sha1hex(a, 1000000, hex);
    assert_string_equal(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(a);
    /* the script ids the Redis test suite uses */
    const char *get = "return redis.call('get',KEYS[1])";
    script_sha1hex(get, strlen(get), hex);
    assert_string_equal(hex, "fd758d1589d044dd850a6f05d52f2eefd27f033f");
}

static void test_sha1hex_api(void **state) {
    (void)state;
    assert_string_equal(eval2(E, "return redis.sha1hex('')"), "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n");
    assert_string_equal(eval2(E, "return redis.sha1hex('Pizza & Mandolino')"),
                        "$40\r\n74822d82031af7493c20eefa13bd07ec4fada82f\r\n");
    assert_prefix(eval2(E, "redis.sha1hex()"), "-ERR wrong number of arguments script: ");
}

/* ---- Lua -> reply ------------------------------------------------------------------------ */

static void test_lua_to_resp2(void **state) {
    (void)state;
    assert_string_equal(eval2(E, "return 'hello'"), "$5\r\nhello\r\n");
    assert_string_equal(eval2(E, "return 100.5"), ":100\r\n");
    assert_string_equal(eval2(E, "return -100.9"), ":-100\r\n");
    assert_string_equal(eval2(E, "return 0/0"), ":-9223372036854775808\r\n");   /* as x86 truncates */
    assert_string_equal(eval2(E, "return true"), ":1\r\n");
    assert_string_equal(eval2(E, "return false"), "$-1\r\n");
    assert_string_equal(eval2(E, "return nil"), "$-1\r\n");
    assert_string_equal(eval2(E, "return {ok='fine'}"), "+fine\r\n");
    assert_string_equal(eval2(E, "return {ok='a\\r\\nb'}"), "+a  b\r\n");
    assert_string_equal(eval2(E, "return {err='ERR this is an error'}"), "-ERR this is an error\r\n");
    assert_string_equal(eval2(E, "return {err='My Error'}"), "-My Error\r\n");
    assert_string_equal(eval2(E, "return {1,2,3,'ciao',{1,2}}"),
                        "*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n");
    assert_string_equal(eval2(E, "return {1,2,nil,4}"), "*2\r\n:1\r\n:2\r\n");
    assert_string_equal(eval2(E, "return {}"), "*0\r\n");
    assert_string_equal(eval2(E, "return _G"), "*0\r\n");
    assert_string_equal(eval2(E, "return redis"), "*0\r\n");
    assert_string_equal(eval2(E, "return function() end"), "$-1\r\n");
    /* a metatable is never consulted */
    assert_string_equal(eval2(E, "local a = {}; setmetatable(a,{__index=function() foo() end}) return a"), "*0\r\n");
    assert_string_equal(eval2(E, "return 'hello' --trailing comment"), "$5\r\nhello\r\n");
    /* RESP3 types returned to a RESP2 caller */
    assert_string_equal(eval2(E, "return {double=3.141}"), "$5\r\n3.141\r\n");
    assert_string_equal(eval2(E, "return {big_number='123\\r\\n123'}"), "$8\r\n123  123\r\n");
    assert_string_equal(eval2(E, "return {map={a=1}}"), "*2\r\n$1\r\na\r\n:1\r\n");
    assert_string_equal(eval2(E, "return {set={a=true}}"), "*1\r\n$1\r\na\r\n");
    assert_string_equal(eval2(E, "return {verbatim_string={format='txt', string='hi'}}"), "$2\r\nhi\r\n");
    assert_string_equal(eval2(E, "redis.setresp(3) return true"), ":1\r\n");
    assert_string_equal(eval2(E, "redis.setresp(3) return false"), ":0\r\n");
}

static void test_lua_to_resp3(void **state) {
    (void)state;
    assert_string_equal(eval3(E, "return false"), "_\r\n");   /* null in the caller's protocol */
    assert_string_equal(eval3(E, "return true"), ":1\r\n");
    assert_string_equal(eval3(E, "redis.setresp(3) return true"), "#t\r\n");
    assert_string_equal(eval3(E, "redis.setresp(3) return false"), "#f\r\n");
    assert_string_equal(eval3(E, "return nil"), "_\r\n");
    assert_string_equal(eval3(E, "return {double=3.141}"), ",3.141\r\n");
    assert_string_equal(eval3(E, "return {double=1/0}"), ",inf\r\n");
    assert_string_equal(eval3(E, "return {big_number='1234567999999999999999999999999999999'}"),
                        "(1234567999999999999999999999999999999\r\n");
    assert_string_equal(eval3(E, "return {big_number='123\\r\\n123'}"), "(123  123\r\n");
    assert_string_equal(eval3(E, "return {map={a=1}}"), "%1\r\n$1\r\na\r\n:1\r\n");
    assert_string_equal(eval3(E, "return {set={a=true}}"), "~1\r\n$1\r\na\r\n");
    assert_string_equal(eval3(E, "return {verbatim_string={format='txt', string='hi'}}"), "=6\r\ntxt:hi\r\n");
    assert_string_equal(eval3(E, "return {verbatim_string={format='x', string='hi'}}"), "=6\r\nx  :hi\r\n");
    /* nested: map of arrays */
    assert_string_equal(eval3(E, "return {map={k={1,{ok='x'}}}}"), "%1\r\n$1\r\nk\r\n*2\r\n:1\r\n+x\r\n");
    /* err wins over the other fields, then ok, then double ... */
    assert_string_equal(eval3(E, "return {err='E x', ok='y'}"), "-E x\r\n");
    assert_string_equal(eval3(E, "return {ok='y', double=1}"), "+y\r\n");
    assert_string_equal(eval3(E, "return {double='1', 5}"), "*1\r\n:5\r\n");   /* a string is no double */
}

/* ---- reply -> Lua ----------------------------------------------------------------------------- */

static void test_resp2_to_lua(void **state) {
    (void)state;
    assert_string_equal(eval2(E, "local v = redis.call('incr','x') return {type(v), v}"),
                        "*2\r\n$6\r\nnumber\r\n:1\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('get','x') return {type(v), v}"),
                        "*2\r\n$6\r\nstring\r\n$5\r\nvalue\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('get','missing') return {type(v), v == false}"),
                        "*2\r\n$7\r\nboolean\r\n:1\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','*-1\\r\\n') return {type(v), v == false}"),
                        "*2\r\n$7\r\nboolean\r\n:1\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('ping') return {type(v), v['ok']}"),
                        "*2\r\n$5\r\ntable\r\n$4\r\nPONG\r\n");
    assert_string_equal(eval2(E, "local v = redis.pcall('wrongtype') return {type(v), v['err']}"),
                        "*2\r\n$5\r\ntable\r\n$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','*3\\r\\n$1\\r\\na\\r\\n*1\\r\\n:7\\r\\n$-1\\r\\n') "
                                 "return {#v, v[1], v[2][1], v[3] == false}"),
                        "*4\r\n:3\r\n$1\r\na\r\n:7\r\n:1\r\n");
    /* an error without a space gets ERR; CR/LF at its ends are trimmed */
    assert_string_equal(eval2(E, "return redis.pcall('raw','-NOSPACE\\r\\n')['err']"), "$11\r\nERR NOSPACE\r\n");
    /* the error table says the error was counted already */
    assert_string_equal(eval2(E, "return tostring(redis.pcall('nosuch').ignore_error_stats_update)"),
                        "$4\r\ntrue\r\n");
    /* a reply passed back as it came */
    assert_string_equal(eval2(E, "return redis.pcall('wrongtype')"),
                        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    /* a malformed reply is an error, not a crash */
    assert_prefix(eval2(E, "return redis.pcall('raw','$5\\r\\nab')['err']"), "$41\r\nERR The command's reply could not be read");
    assert_prefix(eval2(E, "return redis.call('raw','*2\\r\\n:1\\r\\n')"), "-ERR The command's reply could not be read");
}

static void test_resp3_to_lua(void **state) {
    (void)state;
    /* map, set, double, big number, verbatim, booleans, null, attribute */
    assert_string_equal(eval2(E, "local v = redis.call('raw','%1\\r\\n$1\\r\\nk\\r\\n:5\\r\\n') return v.map.k"), ":5\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','~2\\r\\n$1\\r\\na\\r\\n$1\\r\\nb\\r\\n') "
                                 "return {tostring(v.set.a), tostring(v.set.b)}"),
                        "*2\r\n$4\r\ntrue\r\n$4\r\ntrue\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw',',3.141\\r\\n') return tostring(v.double)"), "$5\r\n3.141\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw',',inf\\r\\n') return tostring(v.double)"), "$3\r\ninf\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','(12345678901234567890\\r\\n') return v.big_number"),
                        "$20\r\n12345678901234567890\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','=9\\r\\ntxt:hello\\r\\n') "
                                 "return {v.verbatim_string.format, v.verbatim_string.string}"),
                        "*2\r\n$3\r\ntxt\r\n$5\r\nhello\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','#t\\r\\n') return {type(v), tostring(v)}"),
                        "*2\r\n$7\r\nboolean\r\n$4\r\ntrue\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','#f\\r\\n') return tostring(v)"), "$5\r\nfalse\r\n");
    assert_string_equal(eval2(E, "local v = redis.call('raw','_\\r\\n') return type(v)"), "$3\r\nnil\r\n");
    assert_string_equal(eval2(E, "return redis.call('raw','|1\\r\\n+a\\r\\n:1\\r\\n$4\\r\\nreal\\r\\n')"), "$4\r\nreal\r\n");
    /* nil inside an array leaves a hole */
    assert_string_equal(eval2(E, "local v = redis.call('raw','*3\\r\\n:1\\r\\n_\\r\\n:3\\r\\n') return {v[1], v[3]}"),
                        "*2\r\n:1\r\n:3\r\n");
    /* the protocol asked for follows redis.setresp; a RESP3 map back to both callers */
    struct fake f = { 0 };
    const char *body = "redis.setresp(3); return redis.call('hgetall', 'h')";
    assert_string_equal(eval_full(E, &f, body, 3, 0, 0, NULL, NULL), "%1\r\n$5\r\nfield\r\n$5\r\nvalue\r\n");
    assert_int_equal(f.last_resp, 3);
    assert_string_equal(eval_full(E, &f, body, 2, 0, 0, NULL, NULL), "*2\r\n$5\r\nfield\r\n$5\r\nvalue\r\n");
    body = "redis.setresp(2); return redis.call('hgetall', 'h')";
    assert_string_equal(eval_full(E, &f, body, 3, 0, 0, NULL, NULL), "*2\r\n$5\r\nfield\r\n$5\r\nvalue\r\n");
    assert_int_equal(f.last_resp, 2);
    /* the script's protocol starts at 2 on every run */
    eval_full(E, &f, "return redis.call('ping')", 3, 0, 0, NULL, NULL);
    assert_int_equal(f.last_resp, 2);
    assert_prefix(eval2(E, "redis.setresp(4)"), "-ERR RESP version must be 2 or 3. script: ");
    assert_prefix(eval2(E, "redis.setresp()"), "-ERR redis.setresp() requires one argument. script: ");
}

/* The matrix of Redis's "test RESPx/y ... protocol parsing" tests. */
static void test_protocol_matrix(void **state) {
    (void)state;
    struct {
        const char *reply3, *reply2;   /* what DEBUG PROTOCOL answers in RESP3 / RESP2 */
        const char *want[2][2];        /* [script resp 2/3][client 2/3] */
    } cases[] = {
        { ",3.141\r\n", "$5\r\n3.141\r\n", { { "$5\r\n3.141\r\n", "$5\r\n3.141\r\n" }, { "$5\r\n3.141\r\n", ",3.141\r\n" } } },
        { "#t\r\n", ":1\r\n", { { ":1\r\n", ":1\r\n" }, { ":1\r\n", "#t\r\n" } } },
        { "#f\r\n", ":0\r\n", { { ":0\r\n", ":0\r\n" }, { ":0\r\n", "#f\r\n" } } },
        { "_\r\n", "$-1\r\n", { { "$-1\r\n", "_\r\n" }, { "$-1\r\n", "_\r\n" } } },
        { "(1234567999999999999999999999999999999\r\n", "$37\r\n1234567999999999999999999999999999999\r\n",
          { { "$37\r\n1234567999999999999999999999999999999\r\n", "$37\r\n1234567999999999999999999999999999999\r\n" },
            { "$37\r\n1234567999999999999999999999999999999\r\n", "(1234567999999999999999999999999999999\r\n" } } },
        { "=29\r\ntxt:This is a verbatim\nstring\r\n", "$25\r\nThis is a verbatim\nstring\r\n",
          { { "$25\r\nThis is a verbatim\nstring\r\n", "$25\r\nThis is a verbatim\nstring\r\n" },
            { "$25\r\nThis is a verbatim\nstring\r\n", "=29\r\ntxt:This is a verbatim\nstring\r\n" } } },
        { "~1\r\n:1\r\n", "*1\r\n:1\r\n", { { "*1\r\n:1\r\n", "*1\r\n:1\r\n" }, { "*1\r\n:1\r\n", "~1\r\n:1\r\n" } } },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int sresp = 2; sresp <= 3; sresp++) {
            for (int cresp = 2; cresp <= 3; cresp++) {
                char body[256];
                const char *reply = sresp == 3 ? cases[i].reply3 : cases[i].reply2;
                char quoted[128];
                size_t q = 0;
                for (const char *c = reply; *c; c++) {
                    if (*c == '\r') { quoted[q++] = '\\'; quoted[q++] = 'r'; }
                    else if (*c == '\n') { quoted[q++] = '\\'; quoted[q++] = 'n'; }
                    else quoted[q++] = *c;
                }
                quoted[q] = '\0';
                snprintf(body, sizeof(body), "redis.setresp(%d); return redis.call('raw', '%s')", sresp, quoted);
                struct fake f = { 0 };
                const char *got = eval_full(E, &f, body, cresp, 0, 0, NULL, NULL);
                if (strcmp(got, cases[i].want[sresp - 2][cresp - 2]) != 0)
                    fail_msg("case %zu script RESP%d client RESP%d: got %s", i, sresp, cresp, got);
            }
        }
    }
}

/* ---- redis.call arguments ----------------------------------------------------------------- */

static void test_call_argv(void **state) {
    (void)state;
    struct fake f = { 0 };
    eval_full(E, &f, "redis.call('record', 1, 0.1, 9007199254740991, -0.5, 1e20, 'x y', '')", 2, 0, 0, NULL, NULL);
    assert_string_equal(f.last_argv, "record 1 0.10000000000000001 9007199254740991 -0.5 1e+20 x y ");
    assert_false(f.last_pcall);
    eval_full(E, &f, "redis.pcall('record', 12039611435714932082)", 2, 0, 0, NULL, NULL);
    assert_string_equal(f.last_argv, "record 1.2039611435714933e+19");
    assert_true(f.last_pcall);
    /* strings stay strings, with their bytes */
    eval_full(E, &f, "redis.call('record', '12039611435714932082', 'a\\0b')", 2, 0, 0, NULL, NULL);
    assert_int_equal(memcmp(f.last_argv, "record 12039611435714932082 a\0b", 32), 0);
    /* many arguments */
    const char *many = "local x = {} for i=1,7999 do x[i] = i end return redis.call('record', unpack(x))";
    assert_string_equal(eval_full(E, &f, many, 2, 0, 0, NULL, NULL), "+OK\r\n");
    assert_int_equal(strncmp(f.last_argv, "record 1 2 3 4 5", 16), 0);
    /* errors */
    assert_prefix(eval2(E, "return redis.call()"),
                  "-ERR Please specify at least one argument for this redis lib call script: ");
    assert_string_equal(eval2(E, "return redis.pcall()"),
                        "-ERR Please specify at least one argument for this redis lib call\r\n");
    assert_prefix(eval2(E, "local x={} return redis.call('ping', x)"),
                  "-ERR Lua redis lib command arguments must be strings or integers script: ");
    assert_prefix(eval2(E, "return redis.call('ping', nil, 'x')"),
                  "-ERR Lua redis lib command arguments must be strings or integers script: ");
    assert_string_equal(eval2(E, "return redis.call('ping', 'asdf')"), "+PONG\r\n");
    /* KEYS and ARGV */
    const char *kv[] = { "a{t}", "b{t}", "c{t}", "d{t}" };
    assert_string_equal(eval_full(E, &f, "return {KEYS[1],KEYS[2],ARGV[1],ARGV[2],#KEYS,#ARGV}", 2, 2, 2, kv, NULL),
                        "*6\r\n$4\r\na{t}\r\n$4\r\nb{t}\r\n$4\r\nc{t}\r\n$4\r\nd{t}\r\n:2\r\n:2\r\n");
    assert_string_equal(eval_full(E, &f, "return {#KEYS,#ARGV}", 2, 0, 0, NULL, NULL), "*2\r\n:0\r\n:0\r\n");
}

/* ---- errors -------------------------------------------------------------------------------------- */

static void test_error_texts(void **state) {
    (void)state;
    char sha[41], want[512];
    const char *body = "return a";
    script_sha1hex(body, strlen(body), sha);
    snprintf(want, sizeof(want),
             "-ERR user_script:1: Script attempted to access nonexistent global variable 'a' script: %s, on "
             "@user_script:1.\r\n", sha);
    assert_string_equal(eval2(E, body), want);

    body = "\n\na=10";
    script_sha1hex(body, strlen(body), sha);
    snprintf(want, sizeof(want), "-ERR user_script:3: Attempt to modify a readonly table script: %s, on @user_script:3.\r\n",
             sha);
    assert_string_equal(eval2(E, body), want);

    body = "redis.call('nosuch')";
    script_sha1hex(body, strlen(body), sha);
    snprintf(want, sizeof(want), "-ERR Unknown Redis command called from script script: %s, on @user_script:1.\r\n", sha);
    assert_string_equal(eval2(E, body), want);

    body = "redis.call('wrongtype')";
    script_sha1hex(body, strlen(body), sha);
    snprintf(want, sizeof(want),
             "-WRONGTYPE Operation against a key holding the wrong kind of value script: %s, on @user_script:1.\r\n", sha);
    assert_string_equal(eval2(E, body), want);

    body = "error('my message')";
    script_sha1hex(body, strlen(body), sha);
    snprintf(want, sizeof(want), "-ERR user_script:1: my message script: %s, on @user_script:1.\r\n", sha);
    assert_string_equal(eval2(E, body), want);

    body = "error({err='CUSTOM raised'})";
    script_sha1hex(body, strlen(body), sha);
    snprintf(want, sizeof(want), "-CUSTOM raised script: %s, on @user_script:1.\r\n", sha);
    assert_string_equal(eval2(E, body), want);

    /* compile errors */
    assert_string_equal(eval2(E, "bad script"),
                        "-ERR Error compiling script (new function): user_script:1: '=' expected near 'script'\r\n");
    assert_string_equal(eval2(E, "\x1bLua"),
                        "-ERR Error compiling script (new function): user_script:1: unexpected symbol near 'char(27)'\r\n");
    /* error_reply and status_reply */
    assert_string_equal(eval2(E, "return redis.error_reply('MY_ERR_CODE custom msg')"), "-MY_ERR_CODE custom msg\r\n");
    assert_string_equal(eval2(E, "return redis.error_reply('-MY_ERR_CODE custom msg')"), "-MY_ERR_CODE custom msg\r\n");
    assert_string_equal(eval2(E, "return redis.error_reply('no code')"), "-no code\r\n");   /* "-no code": code "no" */
    assert_string_equal(eval2(E, "return redis.error_reply('')"), "-ERR \r\n");
    assert_string_equal(eval2(E, "return redis.status_reply('MY_OK_CODE custom msg')"), "+MY_OK_CODE custom msg\r\n");
    assert_string_equal(eval2(E, "return redis.error_reply(1)"), "-ERR wrong number or type of arguments\r\n");
    assert_string_equal(eval2(E, "return redis.status_reply()"), "-ERR wrong number or type of arguments\r\n");
    /* pcall turns an error table into its message */
    assert_string_equal(eval2(E, "local ok, e = pcall(function() redis.call('wrongtype') end) return {tostring(ok), e}"),
                        "*2\r\n$5\r\nfalse\r\n$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assert_string_equal(
        eval2(E, "local status, res = pcall(function() return 1 end); return 'status: ' .. tostring(status) .. ' result: ' .. res"),
        "$22\r\nstatus: true result: 1\r\n");
    const char *got = eval2(E, "local status, res = pcall(function() return foo end); "
                               "return 'status: ' .. tostring(status) .. ' result: ' .. res");
    assert_contains(got, "status: false result:");
    assert_contains(got, "Script attempted to access nonexistent global variable 'foo'");
    assert_prefix(eval2(E, "pcall()"), "-ERR user_script:1: bad argument #1 to 'pcall' (value expected) script: ");
    /* a string error with no table: Redis's "Error running script" form is for non-table objects only
     * from outside the handler; tables without err */
    assert_prefix(eval2(E, "error({})"), "-ERR unknown error script: ");
}

/* Error replies the script passes on are counted once: by the host. */
static int errors_counted;
static void count_errors(const char *s, size_t len) {
    (void)s;
    (void)len;
    errors_counted++;
}

static void test_error_stats(void **state) {
    (void)state;
    reply_error_hook = count_errors;
    errors_counted = 0;
    eval2(E, "return redis.call('wrongtype')");   /* raised from redis.call: host counted it */
    assert_int_equal(errors_counted, 0);
    eval2(E, "return redis.pcall('wrongtype')");  /* returned as is */
    assert_int_equal(errors_counted, 0);
    eval2(E, "return redis.error_reply('X y')");  /* the script's own error */
    assert_int_equal(errors_counted, 1);
    eval2(E, "return a");
    assert_int_equal(errors_counted, 2);
    reply_error_hook = NULL;
}

/* ---- sandbox --------------------------------------------------------------------------------- */

static void test_globals(void **state) {
    (void)state;
    /* the globals Redis 7.0 has, and only those */
    const char *body =
        "local names = {} for k in pairs(_G) do names[#names+1] = k end table.sort(names) "
        "return table.concat(names, ' ')";
    assert_string_equal(eval2(E, body),
                        "$271\r\nARGV KEYS _G _VERSION __redis__err__handler assert bit cjson cmsgpack collectgarbage "
                        "coroutine error gcinfo getmetatable ipairs load loadstring math next pairs "
                        "pcall rawequal rawget rawset redis select setmetatable string struct table tonumber "
                        "tostring type unpack xpcall\r\n");
    const char *gone[] = { "print", "dofile", "loadfile", "os", "io", "debug", "require", "module", "package",
                           "setfenv", "getfenv", "newproxy" };
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
        char b[128], want[160];
        snprintf(b, sizeof(b), "return %s", gone[i]);
        snprintf(want, sizeof(want), "-ERR user_script:1: Script attempted to access nonexistent global variable '%s'",
                 gone[i]);
        assert_prefix(eval2(E, b), want);
    }
    assert_prefix(eval2(E, "print('some data')"),
                  "-ERR user_script:1: Script attempted to access nonexistent global variable 'print'");
    /* redis.* */
    body = "local names = {} for k in pairs(redis) do names[#names+1] = k end table.sort(names) "
           "return table.concat(names, ' ')";
    assert_string_equal(eval2(E, body),
                        "$243\r\nLOG_DEBUG LOG_NOTICE LOG_VERBOSE LOG_WARNING REDIS_VERSION REDIS_VERSION_NUM REPL_ALL "
                        "REPL_AOF REPL_NONE REPL_REPLICA REPL_SLAVE acl_check_cmd breakpoint call debug error_reply "
                        "log pcall replicate_commands set_repl setresp sha1hex status_reply\r\n");
    assert_string_equal(eval2(E, "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM, redis.REPL_ALL, redis.LOG_WARNING}"),
                        "*4\r\n$6\r\n7.0.15\r\n:458767\r\n:3\r\n:3\r\n");
    assert_string_equal(eval2(E, "return redis.replicate_commands()"), ":1\r\n");
    assert_string_equal(eval2(E, "return redis.breakpoint()"), "$-1\r\n");
    assert_string_equal(eval2(E, "return redis.debug('x')"), "$-1\r\n");
    assert_string_equal(eval2(E, "return redis.nosuchthing"), "$-1\r\n");   /* no error metatable on redis */
}

static void test_readonly_tables(void **state) {
    (void)state;
    const char *tricks[] = {
        "a=10",
        "setmetatable(_G, {})",
        "local g = getmetatable(_G); g.__index = {}",
        "redis = function() return 1 end",
        "_G = {}",
        "redis.call = function() return 1 end",
        "cjson.encode = function() return 1 end",
        "cmsgpack.pack = function() return 1 end",
        "bit.lshift = function() return 1 end",
        "string.x = 1",
        "math.random = function() return 4 end",
        "rawset(_G, 'x', 1)",
        "rawset(redis, 'call', 1)",
        "setmetatable(redis, {})",
        "table.insert(redis, 1)",
        "getmetatable('').__index.upper = 1",
        "getmetatable('').__index = {}",
        "coroutine.wrap = nil",
        "_G._G.redis = 1",
        "local mt = getmetatable(_G); mt.__newindex = nil; x = 1",
    };
    for (size_t i = 0; i < sizeof(tricks) / sizeof(tricks[0]); i++) {
        const char *got = eval2(E, tricks[i]);
        if (!strstr(got, "Attempt to modify a readonly table")) fail_msg("%s: %s", tricks[i], got);
    }
    /* rawset and setmetatable raise from C: no position, like Redis */
    assert_prefix(eval2(E, "setmetatable(_G, {})"), "-ERR Attempt to modify a readonly table script: ");
    /* nothing changed */
    assert_string_equal(eval2(E, "return {type(redis.call), type(cjson.encode), type(string.upper), ('x'):upper()}"),
                        "*4\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n$1\r\nX\r\n");
    assert_string_equal(eval2(E, "return #redis"), ":0\r\n");
    /* reading through proxies works as on the real tables */
    assert_string_equal(eval2(E, "return type(rawget(redis, 'call'))"), "$8\r\nfunction\r\n");
    assert_string_equal(eval2(E, "return type(next(string))"), "$6\r\nstring\r\n");
    assert_string_equal(eval2(E, "local n = 0 for k, v in pairs(cjson) do n = n + 1 end return n > 5"), ":1\r\n");
    assert_string_equal(eval2(E, "return getmetatable(redis)"), "$-1\r\n");
    assert_string_equal(eval2(E, "return type(getmetatable(_G).__index)"), "$8\r\nfunction\r\n");
    assert_string_equal(eval2(E, "return getmetatable('').__index == string"), ":1\r\n");
    /* user tables are theirs */
    assert_string_equal(eval2(E, "local t = setmetatable({}, {__index=function(t,k) return k..'!' end}) "
                                 "rawset(t, 'a', 1) table.insert(t, 'z') return {t.b, t.a, t[1], rawget(t, 'a')}"),
                        "*4\r\n$2\r\nb!\r\n:1\r\n$1\r\nz\r\n:1\r\n");
    assert_string_equal(eval2(E, "local t = {} KEYS[1] = 'x' return KEYS[1]"), "$1\r\nx\r\n");
    /* ipairs/unpack/next on plain tables */
    assert_string_equal(eval2(E, "local s = 0 for i, v in ipairs({1,2,3}) do s = s + v end return s"), ":6\r\n");
    assert_string_equal(eval2(E, "return {unpack({1,2,3})}"), "*3\r\n:1\r\n:2\r\n:3\r\n");
    assert_string_equal(eval2(E, "return next({}) == nil"), ":1\r\n");
    assert_prefix(eval2(E, "return unpack({}, -2147483648, 2147483647)"),
                  "-ERR user_script:1: too many results to unpack script: ");
    /* unpack's range (Redis's CVE-2025-46817 tests) */
    assert_prefix(eval2(E, "return {unpack({1,2,3}, -2, 2147483647)}"), "-ERR user_script:1: too many results to unpack");
    assert_prefix(eval2(E, "return {unpack({1,2,3}, 0, 2147483647)}"), "-ERR user_script:1: too many results to unpack");
    assert_prefix(eval2(E, "return {unpack({1,2,3}, -2147483648, -2)}"), "-ERR user_script:1: too many results to unpack");
    assert_string_equal(eval2(E, "return {unpack({1,2,3}, -1, -2)}"), "*0\r\n");
    assert_string_equal(eval2(E, "return {unpack({1,2,3}, 1, -1)}"), "*0\r\n");
    const char *unpack_to_list =
        "local function unpack_to_list(t, i, j) local n, v = select('#', unpack(t, i, j)), {unpack(t, i, j)} "
        "for i = 1, n do v[i] = v[i] or '_NIL_' end v.n = n return v end ";
    char body[512];
    snprintf(body, sizeof(body), "%sreturn unpack_to_list({1,2,3}, -1, 5)", unpack_to_list);
    assert_string_equal(eval2(E, body),
                        "*7\r\n$5\r\n_NIL_\r\n$5\r\n_NIL_\r\n:1\r\n:2\r\n:3\r\n$5\r\n_NIL_\r\n$5\r\n_NIL_\r\n");
    snprintf(body, sizeof(body), "%sreturn unpack_to_list({1,2,3}, -2147483648, -2147483646)", unpack_to_list);
    assert_string_equal(eval2(E, body), "*3\r\n$5\r\n_NIL_\r\n$5\r\n_NIL_\r\n$5\r\n_NIL_\r\n");
    assert_string_equal(eval2(E, "return {unpack({1,2,3}, 2147483647, 2147483647)}"), "*0\r\n");
    /* the metatables of basic types: none, or read-only (CVE-2025-46818's test) */
    const char *basic[] = {
        "getmetatable(nil).__index = function() return 1 end",
        "getmetatable('').__index = function() return 1 end",
        "getmetatable(123.222).__index = function() return 1 end",
        "getmetatable(true).__index = function() return 1 end",
        "getmetatable(function() return 1 end).__index = function() return 1 end",
        "getmetatable(coroutine.create(function() return 1 end)).__index = function() return 1 end",
    };
    for (size_t i = 0; i < sizeof(basic) / sizeof(basic[0]); i++) {
        const char *got = eval2(E, basic[i]);
        if (!strstr(got, "attempt to index a nil value script") && !strstr(got, "Attempt to modify a readonly table"))
            fail_msg("%s: %s", basic[i], got);
    }
}

/* lua-enable-deprecated-api: setfenv, getfenv, newproxy (and the globals still safe) */
static void test_deprecated_api(void **state) {
    (void)state;
    script_set_deprecated_api(true);
    struct script_engine *e = script_engine_new();
    assert_string_equal(eval2(e, "local f = function() return 1 end setfenv(f, {}) return 0"), ":0\r\n");
    assert_string_equal(eval2(e, "local f = function() return 1 end getfenv(f) return 0"), ":0\r\n");
    assert_string_equal(eval2(e, "getmetatable(newproxy(true)).__gc = function() return 1 end return 0"), ":0\r\n");
    assert_contains(eval2(e, "rawset(getfenv(1), 'x', 1)"), "Attempt to modify a readonly table");
    assert_contains(eval2(e, "rawset(getfenv(0), 'x', 1)"), "Attempt to modify a readonly table");
    assert_contains(eval2(e, "getfenv(redis.call).x = 1"), "Attempt to modify a readonly table");
    /* setfenv(0) does not leak into the next run */
    eval2(e, "setfenv(0, {})");
    assert_string_equal(eval2(e, "return type(redis)"), "$5\r\ntable\r\n");
    assert_contains(eval2(e, "setfenv(redis.call, {})"), "'setfenv' cannot change environment of given object");
    script_engine_free(e);
    script_set_deprecated_api(false);
    e = script_engine_new();
    assert_prefix(eval2(e, "local f = function() return 1 end setfenv(f, {}) return 0"),
                  "-ERR user_script:1: Script attempted to access nonexistent global variable 'setfenv'");
    assert_prefix(eval2(e, "return getfenv(1)"),
                  "-ERR user_script:1: Script attempted to access nonexistent global variable 'getfenv'");
    assert_prefix(eval2(e, "return newproxy(true)"),
                  "-ERR user_script:1: Script attempted to access nonexistent global variable 'newproxy'");
    script_engine_free(e);
}

static void test_bytecode_refused(void **state) {
    (void)state;
    assert_prefix(eval2(E, "return loadstring(string.dump(function() return 1 end))()"),
                  "-ERR user_script:1: attempt to call a nil value script: ");
    assert_string_equal(eval2(E, "return loadstring('return 1 + 1')()"), ":2\r\n");
    assert_string_equal(eval2(E, "local f, e = loadstring('x x') return e"),
                        "$39\r\n[string \"x x\"]:1: '=' expected near 'x'\r\n");
    assert_string_equal(eval2(E, "local i = 0 local f = load(function() i = i + 1 "
                                 "if i == 1 then return 'return ' elseif i == 2 then return '7' end end) return f()"),
                        ":7\r\n");
    assert_string_equal(eval2(E, "local d = string.dump(function() return 1 end) local i = 0 "
                                 "local f = load(function() i = i + 1 if i == 1 then return d end end) return f == nil"),
                        ":1\r\n");
}

static void test_log_and_repl(void **state) {
    (void)state;
    struct fake f = { 0 };
    eval_full(E, &f, "redis.log(redis.LOG_WARNING, 'hello', 42, 'world')", 2, 0, 0, NULL, NULL);
    assert_int_equal(f.log_level, SCRIPT_LOG_WARNING);
    assert_string_equal(f.log_msg, "hello 42 world");
    assert_prefix(eval2(E, "redis.log(1)"), "-ERR redis.log() requires two arguments or more. script: ");
    assert_prefix(eval2(E, "redis.log('x', 'y')"), "-ERR First argument must be a number (log level). script: ");
    assert_prefix(eval2(E, "redis.log(9, 'y')"), "-ERR Invalid debug level. script: ");
    eval_full(E, &f, "redis.set_repl(redis.REPL_AOF) redis.call('set','a','1')", 2, 0, 0, NULL, NULL);
    assert_int_equal(f.last_repl, SCRIPT_REPL_AOF);
    eval_full(E, &f, "redis.call('set','a','1')", 2, 0, 0, NULL, NULL);
    assert_int_equal(f.last_repl, SCRIPT_REPL_ALL);
    assert_prefix(eval2(E, "redis.set_repl(12345)"),
                  "-ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE. script: ");
    assert_string_equal(eval2(E, "redis.set_repl(redis.REPL_ALL)"), "$-1\r\n");
    /* acl_check_cmd goes to the host */
    f.acl_answer = 1;
    assert_string_equal(eval_full(E, &f, "return redis.acl_check_cmd('set','xx',1)", 2, 0, 0, NULL, NULL), ":1\r\n");
    f.acl_answer = 0;
    assert_string_equal(eval_full(E, &f, "return redis.acl_check_cmd('set','yy',1)", 2, 0, 0, NULL, NULL), "$-1\r\n");
    assert_prefix(eval_full(E, &f, "return redis.acl_check_cmd('nosuch')", 2, 0, 0, NULL, NULL),
                  "-ERR Invalid command passed to redis.acl_check_cmd() script: ");
}

/* ---- math.random ----------------------------------------------------------------------------- */

static void test_math_random(void **state) {
    (void)state;
    /* Redis's generator is rand48 with the default seed: libc's lrand48 is the same sequence */
    struct script_engine *e = script_engine_new();
    unsigned short xsubi[3] = { 0x330E, 0xABCD, 0x1234 };
    char want[64], got[64];
    for (int i = 0; i < 3; i++) {
        long v = nrand48(xsubi);
        snprintf(want, sizeof(want), "%.14g", (double)(v % 2147483647) / 2147483647.0);
        const char *r = eval2(e, "return tostring(math.random())");
        snprintf(got, sizeof(got), "%s", strchr(r, '\n') + 1);
        got[strlen(got) - 2] = '\0';
        assert_string_equal(got, want);
    }
    /* seeded: the same value twice, another for another seed */
    char r1[64], r2[64];
    snprintf(r1, sizeof(r1), "%s", eval2(e, "math.randomseed(10); return tostring(math.random())"));
    snprintf(r2, sizeof(r2), "%s", eval2(e, "math.randomseed(10); return tostring(math.random())"));
    assert_string_equal(r1, r2);
    assert_string_not_equal(r1, eval2(e, "math.randomseed(20); return tostring(math.random())"));
    xsubi[0] = 0x330E;
    xsubi[1] = 10;
    xsubi[2] = 0;
    long v = nrand48(xsubi);
    snprintf(want, sizeof(want), "%.14g", (double)(v % 2147483647) / 2147483647.0);
    assert_contains(r1, want);
    assert_string_equal(eval2(e, "math.randomseed(1) for i=1,100 do local x = math.random(3) "
                                 "if x < 1 or x > 3 then return 0 end end return 1"), ":1\r\n");
    assert_string_equal(eval2(e, "for i=1,100 do local x = math.random(-2, 2) "
                                 "if x < -2 or x > 2 then return 0 end end return 1"), ":1\r\n");
    assert_prefix(eval2(e, "math.random(0)"), "-ERR user_script:1: bad argument #1 to 'random' (interval is empty)");
    assert_prefix(eval2(e, "math.random(1,2,3)"), "-ERR user_script:1: wrong number of arguments");
    script_engine_free(e);
}

/* ---- shebang ----------------------------------------------------------------------------------- */

static void test_shebang(void **state) {
    (void)state;
    struct rbuf err = { 0 };
    int flags;
    assert_true(script_body_flags(SLICE_LIT("return 1"), &flags, &err));
    assert_int_equal(flags, SCRIPT_FLAG_EVAL_COMPAT);
    assert_true(script_body_flags(SLICE_LIT("#!lua\nreturn 1"), &flags, &err));
    assert_int_equal(flags, 0);
    assert_true(script_body_flags(SLICE_LIT("#!lua flags=\nreturn 1"), &flags, &err));
    assert_int_equal(flags, 0);
    assert_true(script_body_flags(
        SLICE_LIT("#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1"), &flags, &err));
    assert_int_equal(flags, SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_ALLOW_STALE |
                                SCRIPT_FLAG_NO_CLUSTER | SCRIPT_FLAG_ALLOW_CROSS_SLOT);
    assert_true(script_body_flags(SLICE_LIT("#!lua   flags=\"no-writes\"  \nreturn 1"), &flags, &err));
    assert_int_equal(flags, SCRIPT_FLAG_NO_WRITES);
    assert_false(script_body_flags(SLICE_LIT("#!not-lua\nreturn 1"), &flags, &err));
    assert_string_equal(err.buf, "ERR Unexpected engine in script shebang: #!not-lua");
    assert_false(script_body_flags(SLICE_LIT("#!lua badger=data\nreturn 1"), &flags, &err));
    assert_string_equal(err.buf, "ERR Unknown lua shebang option: badger=data");
    assert_false(script_body_flags(SLICE_LIT("#!lua flags=allow-oom,what?\nreturn 1"), &flags, &err));
    assert_string_equal(err.buf, "ERR Unexpected flag in script shebang: what?");
    assert_false(script_body_flags(SLICE_LIT("#!lua flags=no-writes,\nreturn 1"), &flags, &err));
    assert_string_equal(err.buf, "ERR Unexpected flag in script shebang: ");
    assert_false(script_body_flags(SLICE_LIT("#!lua flags=NO-WRITES\nreturn 1"), &flags, &err));
    assert_false(script_body_flags(SLICE_LIT("#!lua return 1"), &flags, &err));
    assert_string_equal(err.buf, "ERR Invalid script shebang");
    assert_false(script_body_flags(SLICE_LIT("#!lua \"unbalanced\nreturn 1"), &flags, &err));
    assert_string_equal(err.buf, "ERR Invalid engine in script shebang");
    /* run with a shebang: the line numbers stay those of the body */
    char sha[41];
    assert_true(script_load(E, SLICE_LIT("#!lua flags=no-writes\nreturn redis.call('get','x')"), sha, &flags, &err));
    assert_int_equal(flags, SCRIPT_FLAG_NO_WRITES);
    assert_prefix(eval2(E, "#!lua\n\nreturn a"), "-ERR user_script:3: Script attempted to access nonexistent global");
    assert_string_equal(eval2(E, "#!lua\nreturn 1"), ":1\r\n");
    assert_string_equal(eval2(E, "#!not-lua\nreturn 1"), "-ERR Unexpected engine in script shebang: #!not-lua\r\n");
    /* numkeys */
    int nkeys;
    const char *e;
    assert_true(script_parse_numkeys(SLICE_LIT("2"), 3, false, &nkeys, &e));
    assert_int_equal(nkeys, 2);
    assert_false(script_parse_numkeys(SLICE_LIT("4"), 3, false, &nkeys, &e));
    assert_string_equal(e, "ERR Number of keys can't be greater than number of args");
    assert_false(script_parse_numkeys(SLICE_LIT("-12"), 3, false, &nkeys, &e));
    assert_string_equal(e, "ERR Number of keys can't be negative");
    assert_false(script_parse_numkeys(SLICE_LIT("x"), 3, false, &nkeys, &e));
    assert_string_equal(e, "ERR value is not an integer or out of range");
    assert_false(script_parse_numkeys(SLICE_LIT("x"), 3, true, &nkeys, &e));
    assert_string_equal(e, "ERR Bad number of keys provided");
    rbuf_free(&err);
}

/* ---- the registry across threads --------------------------------------------------------------- */

struct thread_job {
    const char *sha;
    char reply[256];
    bool exists;
};

static void *other_thread(void *arg) {
    struct thread_job *j = arg;
    struct script_engine *e = script_engine_new();
    j->exists = script_exists(e, (struct slice){ j->sha, 40 }, NULL);
    struct fake f = { 0 };
    struct script_host h = fake_host(&f);
    struct rbuf out = { 0 };
    struct reply r = { &out, 2 };
    const struct slice args[] = { SLICE_LIT("k") };
    int res = script_run(e, (struct slice){ j->sha, 40 }, args, 1, 1, &h, &r);
    if (res == SCRIPT_RESULT_NOT_FOUND)
        snprintf(j->reply, sizeof(j->reply), "NOT_FOUND");
    else
        snprintf(j->reply, sizeof(j->reply), "%.*s", (int)out.len, out.buf);
    rbuf_free(&out);
    script_engine_free(e);
    return NULL;
}

static void test_registry_threads(void **state) {
    (void)state;
    script_flush_all();
    char sha[41];
    int flags;
    struct rbuf err = { 0 };
    assert_true(script_load(E, SLICE_LIT("return {KEYS[1], redis.call('get', KEYS[1])}"), sha, &flags, &err));
    assert_int_equal(flags, SCRIPT_FLAG_EVAL_COMPAT);
    struct thread_job j = { .sha = sha };
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &j);
    pthread_join(t, NULL);
    assert_true(j.exists);
    assert_string_equal(j.reply, "*2\r\n$1\r\nk\r\n$5\r\nvalue\r\n");
    /* uppercase sha */
    char upper[41];
    for (int i = 0; i < 41; i++) upper[i] = (char)toupper((unsigned char)sha[i]);
    assert_true(script_exists(NULL, (struct slice){ upper, 40 }, NULL));
    assert_true(script_exists(E, (struct slice){ upper, 40 }, NULL));
    assert_false(script_exists(NULL, SLICE_LIT("ffd632c7d33e571e9f24556ebed26c3479a87130"), NULL));
    assert_false(script_exists(E, SLICE_LIT("NotValidShaSUM"), NULL));
    /* flush: gone everywhere, this thread's state reset */
    struct script_stats st;
    script_stats(&st);
    assert_int_equal(st.scripts, 1);
    size_t mem_before = script_engine_memory(E);
    script_flush_all();
    script_stats(&st);
    assert_int_equal(st.scripts, 0);
    assert_false(script_exists(E, (struct slice){ sha, 40 }, NULL));
    struct fake f = { 0 };
    struct script_host h = fake_host(&f);
    struct rbuf out = { 0 };
    struct reply r = { &out, 2 };
    assert_int_equal(script_run(E, (struct slice){ sha, 40 }, NULL, 0, 0, &h, &r), SCRIPT_RESULT_NOT_FOUND);
    assert_int_equal(out.len, 0);
    assert_true(script_engine_memory(E) <= mem_before);
    pthread_create(&t, NULL, other_thread, &j);
    pthread_join(t, NULL);
    assert_false(j.exists);
    assert_string_equal(j.reply, "NOT_FOUND");
    /* loaded on another thread's engine, found here */
    assert_true(script_load(E, SLICE_LIT("return 'again'"), sha, &flags, &err));
    script_flush_all();
    struct script_engine *e2 = script_engine_new();
    assert_true(script_load(e2, SLICE_LIT("return 'again'"), sha, &flags, &err));
    assert_true(script_exists(E, (struct slice){ sha, 40 }, NULL));
    out.len = 0;
    assert_int_equal(script_run(E, (struct slice){ sha, 40 }, NULL, 0, 0, &h, &r), SCRIPT_RESULT_OK);
    assert_int_equal(out.len, 11);
    assert_memory_equal(out.buf, "$5\r\nagain\r\n", 11);
    script_engine_free(e2);
    rbuf_free(&out);
    rbuf_free(&err);
}

/* Many threads loading and running the same and different scripts at once. */
static void *load_storm(void *arg) {
    int id = (int)(intptr_t)arg;
    struct script_engine *e = script_engine_new();
    struct fake f = { 0 };
    char body[64];
    for (int i = 0; i < 200; i++) {
        snprintf(body, sizeof(body), "return %d", i % 20 + (i % 2 ? id * 1000 : 0));
        const char *got = eval_full(e, &f, body, 2, 0, 0, NULL, NULL);
        char want[32];
        snprintf(want, sizeof(want), ":%d\r\n", i % 20 + (i % 2 ? id * 1000 : 0));
        if (strcmp(got, want) != 0 && strcmp(got, "") != 0) {
            script_engine_free(e);
            fixture_free();
            return (void *)1;
        }
        if (i == 100 && id == 0) script_flush_all();
    }
    script_engine_free(e);
    fixture_free();
    return NULL;
}

static void test_registry_concurrent(void **state) {
    (void)state;
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, load_storm, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) {
        void *res;
        pthread_join(t[i], &res);
        assert_null(res);
    }
}

/* ---- stopping --------------------------------------------------------------------------------------- */

static void test_kill_from_tick(void **state) {
    (void)state;
    struct fake f = { .kill_at_tick = 3, .kill_verdict = SCRIPT_KILL };
    int res;
    const char *got = eval_full(E, &f, "while true do end", 2, 0, 0, NULL, &res);
    assert_prefix(got, "-ERR Script killed by user with SCRIPT KILL... script: ");
    assert_int_equal(res, SCRIPT_RESULT_ERROR);
    assert_int_equal(f.ticks, 3);
    /* pcall cannot catch it */
    f = (struct fake){ .kill_at_tick = 2, .kill_verdict = SCRIPT_KILL };
    got = eval_full(E, &f, "local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end", 2, 0, 0,
                    NULL, &res);
    assert_prefix(got, "-ERR Script killed by user with SCRIPT KILL...");
    f = (struct fake){ .kill_at_tick = 2, .kill_verdict = SCRIPT_KILL };
    got = eval_full(E, &f, "while 1 do xpcall(function() while 1 do end end, function(e) return e end) end", 2, 0, 0,
                    NULL, &res);
    assert_prefix(got, "-ERR Script killed by user with SCRIPT KILL...");
    /* nor a coroutine */
    f = (struct fake){ .kill_at_tick = 2, .kill_verdict = SCRIPT_KILL };
    got = eval_full(E, &f,
                    "while 1 do local co = coroutine.create(function() while 1 do end end) coroutine.resume(co) end", 2, 0,
                    0, NULL, &res);
    assert_prefix(got, "-ERR Script killed by user with SCRIPT KILL...");
    /* killed from call(), caught by pcall on the same line */
    f = (struct fake){ .kill_at_call = 1, .kill_verdict = SCRIPT_KILL };
    got = eval_full(E, &f, "return pcall(redis.call, 'ping')", 2, 0, 0, NULL, &res);
    assert_prefix(got, "-ERR Script killed by user with SCRIPT KILL...");
    /* the engine runs the next script normally */
    assert_string_equal(eval2(E, "local x = 0 for i=1,300000 do x = x + 1 end return x"), ":300000\r\n");
    f = (struct fake){ 0 };
    assert_string_equal(eval_full(E, &f, "local x = 0 for i=1,300000 do x = x + 1 end return x", 2, 0, 0, NULL, &res),
                        ":300000\r\n");
    assert_int_equal(f.ticks, 6);   /* every 100000 instructions: 2 per iteration */
}

static void test_abort(void **state) {
    (void)state;
    struct fake f = { .kill_at_call = 2, .kill_verdict = SCRIPT_ABORT };
    int res;
    const char *got = eval_full(E, &f, "redis.call('set','a','1') redis.call('set','b','2') return 'done'", 2, 0, 0,
                                NULL, &res);
    assert_int_equal(res, SCRIPT_RESULT_ABORTED);
    assert_string_equal(got, "");
    assert_int_equal(f.calls, 2);
    /* through pcall, redis.pcall, coroutines */
    f = (struct fake){ .kill_at_call = 1, .kill_verdict = SCRIPT_ABORT };
    got = eval_full(E, &f, "local ok = pcall(redis.pcall, 'get', 'x') return 'swallowed'", 2, 0, 0, NULL, &res);
    assert_int_equal(res, SCRIPT_RESULT_ABORTED);
    assert_string_equal(got, "");
    f = (struct fake){ .kill_at_call = 1, .kill_verdict = SCRIPT_ABORT };
    got = eval_full(E, &f, "local co = coroutine.wrap(function() redis.call('get','x') end) pcall(co) return 1", 2, 0, 0,
                    NULL, &res);
    assert_int_equal(res, SCRIPT_RESULT_ABORTED);
    /* and from tick() */
    f = (struct fake){ .kill_at_tick = 1, .kill_verdict = SCRIPT_ABORT };
    got = eval_full(E, &f, "while true do pcall(function() end) end", 2, 0, 0, NULL, &res);
    assert_int_equal(res, SCRIPT_RESULT_ABORTED);
    /* then the same script runs to its end */
    f = (struct fake){ 0 };
    got = eval_full(E, &f, "redis.call('set','a','1') redis.call('set','b','2') return 'done'", 2, 0, 0, NULL, &res);
    assert_int_equal(res, SCRIPT_RESULT_OK);
    assert_string_equal(got, "$4\r\ndone\r\n");
}

/* ---- nesting --------------------------------------------------------------------------------------- */

static void test_recursive_result(void **state) {
    (void)state;
    const char *got = eval2(E, "local a = {}; local b = {a}; a[1] = b; return a");
    size_t depth = 0;
    const char *p = got;
    while (strncmp(p, "*1\r\n", 4) == 0) {
        p += 4;
        depth++;
    }
    assert_string_equal(p, "-ERR reached lua stack limit\r\n");
    assert_true(depth > 100);
    /* deep but finite nesting converts whole */
    got = eval2(E, "local t = 1 for i=1,50 do t = {t} end return t");
    assert_int_equal(strlen(got), 50 * 4 + 4);
    /* a deep reply from a command */
    struct rbuf body = { 0 };
    const char *pre = "return redis.call('raw', string.rep('*1\\r\\n', 200) .. ':7\\r\\n')";
    rbuf_append(&body, pre, strlen(pre) + 1);
    got = eval2(E, body.buf);
    assert_int_equal(strlen(got), 200 * 4 + 4);
    /* too deep to convert (past the parser's limit): an error, no crash */
    got = eval2(E, "return redis.pcall('raw', string.rep('*1\\r\\n', 5000) .. ':7\\r\\n')");
    assert_prefix(got, "-ERR The command's reply could not be read");
    rbuf_free(&body);
}

struct nest {
    struct script_engine *e;
    char sha[41];
    struct rbuf inner;
    int inner_res;
};

static int nest_call(void *ctx, const struct script_call *c, struct rbuf *out) {
    (void)c;
    struct nest *n = ctx;
    struct reply r = { &n->inner, 2 };
    struct script_host h = { n, nest_call, NULL, NULL, NULL };
    n->inner.len = 0;
    n->inner_res = script_run(n->e, (struct slice){ n->sha, 40 }, NULL, 0, 0, &h, &r);
    rbuf_append(out, n->inner.buf, n->inner.len);
    return SCRIPT_GO_ON;
}

/* A host that would run a script from call() is refused, not re-entered. */
static void test_nested_run_refused(void **state) {
    (void)state;
    struct nest n = { .e = E };
    int flags;
    struct rbuf err = { 0 };
    assert_true(script_load(E, SLICE_LIT("return redis.pcall('x')"), n.sha, &flags, &err));
    struct rbuf out = { 0 };
    struct reply r = { &out, 2 };
    struct script_host h = { &n, nest_call, NULL, NULL, NULL };
    assert_int_equal(script_run(E, (struct slice){ n.sha, 40 }, NULL, 0, 0, &h, &r), SCRIPT_RESULT_ERROR);
    assert_int_equal(n.inner_res, SCRIPT_RESULT_ERROR);
    rbuf_append(&out, "", 1);
    assert_string_equal(out.buf, "-ERR This Redis command is not allowed from script\r\n");
    rbuf_free(&out);
    rbuf_free(&n.inner);
    rbuf_free(&err);
}

/* scripting.tcl's "EVAL does not leak in the Lua stack": used_memory_lua < 100 KB */
static void test_memory(void **state) {
    (void)state;
    script_flush_all();
    struct fake f = { 0 };
    const char *kv[] = { "x" };
    for (int i = 0; i < 10000; i++) eval_full(E, &f, "return redis.call('incr',KEYS[1])", 2, 1, 0, kv, NULL);
    assert_int_equal(f.calls, 10000);
    size_t mem = script_engine_memory(E);
    print_message("EVAL state after 10000 runs: %zu bytes\n", mem);
    assert_true(mem > 0 && mem < 100 * 1024);
    script_flush_all();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_vectors),
        cmocka_unit_test_setup_teardown(test_sha1hex_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lua_to_resp2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lua_to_resp3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp2_to_lua, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_to_lua, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protocol_matrix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_argv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_texts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_globals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytecode_refused, setup, teardown),
        cmocka_unit_test(test_deprecated_api),
        cmocka_unit_test_setup_teardown(test_log_and_repl, setup, teardown),
        cmocka_unit_test(test_math_random),
        cmocka_unit_test_setup_teardown(test_shebang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_threads, setup, teardown),
        cmocka_unit_test(test_registry_concurrent),
        cmocka_unit_test_setup_teardown(test_kill_from_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recursive_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_run_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
