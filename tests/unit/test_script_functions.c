/*
 * FUNCTION and FCALL in the engine: library metadata and registration
 * (positional and named, flags, every error of functions.tcl), the load-time
 * environment (only the load API, globals read-only, 500 ms timeout), the
 * run-time environment, FUNCTION LIST/STATS replies, DELETE/FLUSH, DUMP's
 * walk and RESTORE's policies, and libraries loaded on one thread called
 * on another (and deleted or replaced there).
 */
#include "test_script_fixture.h"

#include <pthread.h>

static struct script_engine *E;

static int setup(void **state) {
    (void)state;
    script_function_flush();
    E = script_engine_new();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    script_engine_free(E);
    E = NULL;
    script_function_flush();
    return 0;
}

static struct rbuf ERR;

/* FUNCTION LOAD: the library name, or "-" + the error. */
static __thread struct rbuf fl_name, fc_out;

static const char *fload(struct script_engine *e, const char *code, bool replace) {
#define name fl_name
    name.len = 0;
    if (!script_function_load(e, (struct slice){ code, strlen(code) }, replace, &name, &ERR)) {
        name.len = 0;
        rbuf_append(&name, "-", 1);
        rbuf_append(&name, ERR.buf, ERR.len + 1);
        return name.buf;
    }
    return name.buf;
#undef name
}

static const char *fcall_full(struct script_engine *e, struct fake *f, const char *fname, int resp, int nkeys,
                              int nargs, const char **argv, int *result) {
#define out fc_out
    out.len = 0;
    struct slice args[16];
    for (int i = 0; i < nkeys + nargs && i < 16; i++) args[i] = (struct slice){ argv[i], strlen(argv[i]) };
    struct script_host h = fake_host(f);
    struct reply r = { &out, (uint8_t)resp };
    int res = script_fcall(e, (struct slice){ fname, strlen(fname) }, args, nkeys + nargs, nkeys, &h, &r);
    if (result) *result = res;
    if (res == SCRIPT_RESULT_NOT_FOUND) {
        out.len = 0;
        rbuf_append(&out, "NOT_FOUND", 9);
    }
    rbuf_append(&out, "\0", 1);
    out.len--;
    return out.buf;
#undef out
}

static void thread_buffers_free(void) {
    rbuf_free(&fl_name);
    rbuf_free(&fc_out);
}

static const char *fcall(struct script_engine *e, const char *fname) {
    struct fake f = { 0 };
    return fcall_full(e, &f, fname, 2, 0, 0, NULL, NULL);
}

/* A library "name" with function fname whose body is body. */
static const char *lib_code(const char *lib, const char *fname, const char *body) {
    static __thread char buf[2048];
    snprintf(buf, sizeof(buf), "#!lua name=%s\nredis.register_function('%s', function(KEYS, ARGV)\n %s \nend)", lib,
             fname, body);
    return buf;
}

static const char *list_reply(const struct slice *pattern, bool withcode, int resp) {
    static struct rbuf out;
    out.len = 0;
    struct reply r = { &out, (uint8_t)resp };
    script_function_list(&r, pattern, withcode);
    rbuf_append(&out, "\0", 1);
    out.len--;
    return out.buf;
}

static void test_basic(void **state) {
    (void)state;
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello'"), false), "test");
    assert_string_equal(fcall(E, "test"), "$5\r\nhello\r\n");
    assert_string_equal(fcall(E, "TEST"), "$5\r\nhello\r\n");
    assert_string_equal(fcall(E, "nosuch"), "NOT_FOUND");
    int flags = -1;
    assert_true(script_function_exists(E, SLICE_LIT("Test"), &flags));
    assert_int_equal(flags, 0);
    assert_false(script_function_exists(E, SLICE_LIT("nosuch"), NULL));
    /* keys and args are the function's two arguments */
    assert_string_equal(fload(E, lib_code("test", "test", "return {KEYS[1], ARGV[1], #KEYS, #ARGV, redis.call('get', KEYS[1])}"),
                              true),
                        "test");
    struct fake f = { 0 };
    const char *kv[] = { "x", "foo" };
    assert_string_equal(fcall_full(E, &f, "test", 2, 1, 1, kv, NULL),
                        "*5\r\n$1\r\nx\r\n$3\r\nfoo\r\n:1\r\n:1\r\n$5\r\nvalue\r\n");
    assert_string_equal(f.last_argv, "get x");
    /* no KEYS/ARGV globals in functions */
    assert_string_equal(fload(E, "#!lua name=test\nredis.register_function('test', function()\n return KEYS\nend)", true),
                        "test");
    assert_string_equal(fcall(E, "test"),
                        "-ERR user_function:3: Script attempted to access nonexistent global variable 'KEYS' script: test, on "
                        "@user_function:3.\r\n");
    /* shared code and state kept in upvalues, as in Redis */
    assert_string_equal(fload(E,
                              "#!lua name=lib1\n"
                              "local n = 0\n"
                              "local function ping() return redis.call('ping') end\n"
                              "redis.register_function('f1', function(keys, args) n = n + 1 return n end)\n"
                              "redis.register_function('f2', function(keys, args) return ping() end)",
                              false),
                        "lib1");
    assert_string_equal(fcall(E, "f1"), ":1\r\n");
    assert_string_equal(fcall(E, "f1"), ":2\r\n");
    assert_string_equal(fcall(E, "f2"), "+PONG\r\n");
    struct script_stats st;
    script_stats(&st);
    assert_int_equal(st.libraries, 2);
    assert_int_equal(st.functions, 3);
}

static void test_load_errors(void **state) {
    (void)state;
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello'"), false), "test");
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello1'"), false), "-ERR Library 'test' already exists");
    assert_string_equal(fload(E, lib_code("bad\\0foramat", "test", "return 'x'"), false),
                        "-ERR Library names can only contain letters, numbers, or underscores(_) and must be at least "
                        "one character long");
    assert_string_equal(fload(E, "#!bad_engine name=test\nredis.register_function('t', function() end)", false),
                        "-ERR Engine 'bad_engine' not found");
    assert_string_equal(fload(E, "#! name=test\nredis.register_function('foo', function() return 1 end)", true),
                        "-ERR Engine '' not found");
    assert_string_equal(fload(E, lib_code("test", "test", "bad script"), true),
                        "-ERR Error compiling function: user_function:3: '=' expected near 'script'");
    assert_string_equal(fcall(E, "test"), "$5\r\nhello\r\n");   /* the old library stays */
    assert_string_equal(fload(E, "redis.register_function('foo', function() return 1 end)", true),
                        "-ERR Missing library metadata");
    assert_string_equal(fload(E, "#!lua name=test", true), "-ERR Invalid library metadata");
    assert_string_equal(fload(E, "#!lua name=test foo=bar\nredis.register_function('foo', function() return 1 end)", true),
                        "-ERR Invalid metadata value given: foo=bar");
    assert_string_equal(fload(E, "#!lua\nredis.register_function('foo', function() return 1 end)", true),
                        "-ERR Library name was not given");
    assert_string_equal(fload(E, "#!lua name=foo name=bar\nredis.register_function('foo', function() return 1 end)", true),
                        "-ERR Invalid metadata value, name argument was given multiple times");
    assert_string_equal(fload(E, "#!lua name=\"foo\"\nredis.register_function('foo', function() return 1 end)", true),
                        "foo");
    assert_string_equal(fload(E, "#!LUA NAME=up\nredis.register_function('upf', function() return 1 end)", false), "up");
    assert_string_equal(fload(E, "#!lua name=lib\nreturn 1", false), "-ERR No functions registered");
    /* the load-time environment */
    assert_string_equal(fload(E, "#!lua name=lib2\nreturn math.random()", true),
                        "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent "
                        "global variable 'math'");
    assert_string_equal(fload(E, "#!lua name=lib2\nreturn redis.call('ping')", true),
                        "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent "
                        "global variable 'call'");
    assert_contains(fload(E, "#!lua name=lib2\nreturn redis.setresp(3)", true), "nonexistent global variable 'setresp'");
    assert_contains(fload(E, "#!lua name=lib2\nreturn redis.set_repl(redis.REPL_NONE)", true),
                    "nonexistent global variable 'set_repl'");
    assert_string_equal(fload(E, "#!lua name=lib\na = 1", true),
                        "-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table");
    assert_contains(fload(E, "#!lua name=test1\nmt = getmetatable(_G)", true),
                    "Script attempted to access nonexistent global variable 'getmetatable'");
    assert_contains(fload(E, "#!lua name=lib\nredis.log(redis.LOG_NOTICE, 'x') redis.register_function('lf', function() "
                             "return redis.REDIS_VERSION end)", true),
                    "lib");
    assert_string_equal(fcall(E, "lf"), "$6\r\n7.0.15\r\n");
    /* load timeout */
    assert_string_equal(fload(E, "#!lua name=lib\nlocal a = 1\nwhile 1 do a = a + 1 end", true),
                        "-ERR Error registering functions: ERR FUNCTION LOAD timeout");
}

static void test_register_errors(void **state) {
    (void)state;
    struct {
        const char *code, *err;
    } cases[] = {
        { "redis.register_function()", "wrong number of arguments to redis.register_function" },
        { "redis.register_function('f1')",
          "calling redis.register_function with a single argument is only applicable to Lua table (representing named "
          "arguments)." },
        { "redis.register_function('f1', function() return 1 end, {}, 'description', 'extra arg')",
          "wrong number of arguments to redis.register_function" },
        { "redis.register_function(nil, function() return 1 end)", "first argument to redis.register_function must be a string" },
        { "redis.register_function('f2', 'not a function')", "second argument to redis.register_function must be a function" },
        { "redis.register_function('test\\0test', function() return 1 end)",
          "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long" },
        { "redis.register_function('', function() return 1 end)",
          "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long" },
        { "redis.register_function('f1', function() return 1 end) redis.register_function('f1', function() return 1 end)",
          "Function already exists in the library" },
        { "redis.register_function{function_name=function() return 1 end, callback=function() return 'hello' end}",
          "function_name argument given to redis.register_function must be a string" },
        { "redis.register_function{function_name='f1', callback='bad'}",
          "callback argument given to redis.register_function must be a function" },
        { "redis.register_function{function_name='f1', callback=function() end, description=function() return 1 end}",
          "description argument given to redis.register_function must be a string" },
        { "redis.register_function{function_name='f1', callback=function() end, some_unknown='unknown'}",
          "unknown argument given to redis.register_function" },
        { "redis.register_function{callback=function() return 'hello' end, description='desc'}",
          "redis.register_function must get a function name argument" },
        { "redis.register_function{function_name='f1', description='desc'}",
          "redis.register_function must get a callback argument" },
        { "redis.register_function{function_name='f1', callback=function() return 1 end, flags='bad flags type'}",
          "flags argument to redis.register_function must be a table representing function flags" },
        { "redis.register_function{function_name='f1', callback=function() return 1 end, flags={function() return 1 end}}",
          "unknown flag given" },
        { "redis.register_function{function_name='f1', callback=function() return 1 end, flags={'unknown'}}",
          "unknown flag given" },
        { "redis.register_function{[1]='f1'}", "unknown argument given to redis.register_function" },
        { "redis.register_function{[true]='f1'}", "named argument key given to redis.register_function is not a string" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char code[512], want[512];
        snprintf(code, sizeof(code), "#!lua name=lib2\n%s", cases[i].code);
        snprintf(want, sizeof(want), "-ERR Error registering functions: ERR %s", cases[i].err);
        const char *got = fload(E, code, true);
        if (strcmp(got, want) != 0) fail_msg("%s:\n got %s\nwant %s", cases[i].code, got, want);
    }
    /* a failed load keeps the library that was there */
    assert_string_equal(fload(E,
                              "#!lua name=lib1\nlocal function add1(a) return a + 1 end\n"
                              "redis.register_function('f1', function(keys, args) return add1(1) end)\n"
                              "redis.register_function('f2', function(keys, args) return add1(2) end)",
                              false),
                        "lib1");
    assert_contains(fload(E,
                          "#!lua name=lib1\nlocal function add1(a) return a + 2 end\n"
                          "redis.register_function('f1', function(keys, args) return add1(1) end)\n"
                          "redis.register_function('f2', 'not a function')",
                          true),
                    "second argument to redis.register_function must be a function");
    assert_string_equal(fcall(E, "f1"), ":2\r\n");
    assert_string_equal(fcall(E, "f2"), ":3\r\n");
    /* another library may not take a function name (any case) */
    assert_string_equal(fload(E, "#!lua name=lib2\nredis.register_function('F1', function(keys, args) return 1 end)", true),
                        "-ERR Function F1 already exists");
    assert_string_equal(fcall(E, "f1"), ":2\r\n");
    /* register_function outside a load */
    assert_string_equal(fload(E, "#!lua name=lib\nredis.register_function('f3', function(keys, args) "
                                 "redis.register_function('f4', function() return 2 end) return 1 end)", true),
                        "lib");
    assert_prefix(fcall(E, "f3"), "-ERR user_function:2: attempt to call field 'register_function' (a nil value)");
}

/* functions.tcl's "LIBRARIES - malicious access test" */
static void test_malicious_access(void **state) {
    (void)state;
    assert_string_equal(fload(E,
                              "#!lua name=lib1\n"
                              "local lib = redis\n"
                              "lib.register_function('f1', function ()\n"
                              "    lib.redis = redis\n"
                              "    lib.math = math\n"
                              "    return {ok='OK'}\n"
                              "end)\n"
                              "lib.register_function('f2', function ()\n"
                              "    lib.register_function('f1', function ()\n"
                              "        lib.redis = redis\n"
                              "        lib.math = math\n"
                              "        return {ok='OK'}\n"
                              "    end)\n"
                              "end)",
                              false),
                        "lib1");
    assert_contains(fcall(E, "f1"), "Attempt to modify a readonly table");
    assert_contains(fload(E, "#!lua name=lib2\nredis.math.random()", false),
                    "Script attempted to access nonexistent global variable 'math'");
    assert_contains(fload(E, "#!lua name=lib2\nredis.redis.call('ping')", false),
                    "Script attempted to access nonexistent global variable 'redis'");
    assert_contains(fcall(E, "f2"), "can only be called on FUNCTION LOAD command");
    /* run-time globals are read-only too */
    assert_string_equal(fload(E,
                              "#!lua name=test1\nredis.register_function('g1', function()\n"
                              "    mt = getmetatable(_G)\n"
                              "    original_globals = mt.__index\n"
                              "    original_globals['redis'] = function() return 1 end\n"
                              "end)\n"
                              "redis.register_function('g2', function()\n"
                              "    local mt = getmetatable(_G)\n"
                              "    local original_globals = mt.__index\n"
                              "    original_globals['redis'] = function() return 1 end\n"
                              "end)\n"
                              "redis.register_function('g3', function()\n"
                              "    local mt = getmetatable(_G)\n"
                              "    mt.__index = 1\n"
                              "end)\n"
                              "redis.register_function('g4', function() rawset(_G, 'x', 1) end)\n"
                              "redis.register_function('g5', function() return {type(redis.call), type(cjson.encode), "
                              "redis.breakpoint == nil, string.format('%d', 7)} end)",
                              false),
                        "test1");
    assert_contains(fcall(E, "g1"), "Attempt to modify a readonly table");
    /* _G's metatable is G's error metatable, whose __index is a function (as in Redis) */
    assert_contains(fcall(E, "g2"), "attempt to index local 'original_globals' (a function value)");
    assert_contains(fcall(E, "g3"), "Attempt to modify a readonly table");
    assert_contains(fcall(E, "g4"), "Attempt to modify a readonly table");
    assert_string_equal(fcall(E, "g5"), "*4\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n:1\r\n$1\r\n7\r\n");
}

static void test_list_and_stats(void **state) {
    (void)state;
    assert_string_equal(list_reply(NULL, false, 2), "*0\r\n");
    assert_string_equal(fload(E,
                              "#!lua name=lib\nredis.register_function{function_name='f1', callback=function() return "
                              "'hello' end, description='some desc', flags={'no-writes', 'ALLOW-STALE'}}",
                              false),
                        "lib");
    int flags;
    assert_true(script_function_exists(E, SLICE_LIT("f1"), &flags));
    assert_int_equal(flags, SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_ALLOW_STALE);
    assert_string_equal(list_reply(NULL, false, 2),
                        "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$3\r\nlib\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n"
                        "*1\r\n*6\r\n$4\r\nname\r\n$2\r\nf1\r\n$11\r\ndescription\r\n$9\r\nsome desc\r\n$5\r\nflags\r\n"
                        "*2\r\n+no-writes\r\n+allow-stale\r\n");
    assert_string_equal(list_reply(NULL, false, 3),
                        "*1\r\n%3\r\n$12\r\nlibrary_name\r\n$3\r\nlib\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n"
                        "*1\r\n%3\r\n$4\r\nname\r\n$2\r\nf1\r\n$11\r\ndescription\r\n$9\r\nsome desc\r\n$5\r\nflags\r\n"
                        "~2\r\n+no-writes\r\n+allow-stale\r\n");
    const char *code = "#!lua name=library1\nredis.register_function('f6', function(keys, args) return 7 end)";
    assert_string_equal(fload(E, code, false), "library1");
    const struct slice pat = SLICE_LIT("library*");
    char want[512];
    snprintf(want, sizeof(want),
             "*1\r\n*8\r\n$12\r\nlibrary_name\r\n$8\r\nlibrary1\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n"
             "*1\r\n*6\r\n$4\r\nname\r\n$2\r\nf6\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n"
             "$12\r\nlibrary_code\r\n$%zu\r\n%s\r\n",
             strlen(code), code);
    assert_string_equal(list_reply(&pat, true, 2), want);
    const struct slice none = SLICE_LIT("x*");
    assert_string_equal(list_reply(&none, false, 2), "*0\r\n");
    struct rbuf out = { 0 };
    struct reply r = { &out, 2 };
    script_function_stats_engines(&r);
    rbuf_append(&out, "", 1);
    assert_string_equal(out.buf, "*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:2\r\n$15\r\nfunctions_count\r\n:2\r\n");
    out.len = 0;
    r.resp = 3;
    script_function_stats_engines(&r);
    rbuf_append(&out, "", 1);
    assert_string_equal(out.buf, "%1\r\n$3\r\nLUA\r\n%2\r\n$15\r\nlibraries_count\r\n:2\r\n$15\r\nfunctions_count\r\n:2\r\n");
    rbuf_free(&out);
    /* delete, flush */
    struct rbuf err = { 0 };
    assert_false(script_function_delete(SLICE_LIT("nosuch"), &err));
    assert_string_equal(err.buf, "ERR Library not found");
    assert_true(script_function_delete(SLICE_LIT("lib"), &err));
    assert_string_equal(fcall(E, "f1"), "NOT_FOUND");
    assert_string_equal(fcall(E, "f6"), ":7\r\n");
    script_function_flush();
    assert_string_equal(fcall(E, "f6"), "NOT_FOUND");
    assert_string_equal(list_reply(NULL, false, 2), "*0\r\n");
    struct script_stats st;
    script_stats(&st);
    assert_int_equal(st.libraries, 0);
    assert_int_equal(st.functions, 0);
    rbuf_free(&err);
}

static void test_run_errors_and_kill(void **state) {
    (void)state;
    assert_string_equal(fload(E, "#!lua name=t\nredis.register_function('f1', function()\n"
                                 "  return redis.call('nosuch')\nend)\n"
                                 "redis.register_function('f2', function() while true do end end)\n"
                                 "redis.register_function('f3', function() return redis.pcall('wrongtype') end)\n"
                                 "redis.register_function('f4', function() return redis.breakpoint() end)",
                              false),
                        "t");
    assert_string_equal(fcall(E, "f1"), "-ERR Unknown Redis command called from script script: f1, on @user_function:3.\r\n");
    struct fake f = { .kill_at_tick = 2, .kill_verdict = SCRIPT_KILL };
    int res;
    assert_string_equal(fcall_full(E, &f, "F2", 2, 0, 0, NULL, &res),
                        "-ERR Script killed by user with SCRIPT KILL... script: f2, on @user_function:5.\r\n");
    assert_int_equal(res, SCRIPT_RESULT_ERROR);
    f = (struct fake){ .kill_at_tick = 1, .kill_verdict = SCRIPT_ABORT };
    fcall_full(E, &f, "f2", 2, 0, 0, NULL, &res);
    assert_int_equal(res, SCRIPT_RESULT_ABORTED);
    assert_string_equal(fcall(E, "f3"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assert_prefix(fcall(E, "f4"), "-ERR user_function:7: attempt to call field 'breakpoint' (a nil value)");
}

/* ---- DUMP / RESTORE ----------------------------------------------------------------------- */

struct dump {
    struct rbuf codes[8];
    struct slice s[8];
    size_t n;
};

static void dump_one(void *arg, struct slice name, struct slice code) {
    (void)name;
    struct dump *d = arg;
    rbuf_append(&d->codes[d->n], code.ptr, code.len);
    d->n++;
}

static void dump_all(struct dump *d) {
    memset(d, 0, sizeof(*d));
    script_function_foreach(dump_one, d);
    for (size_t i = 0; i < d->n; i++) d->s[i] = (struct slice){ d->codes[i].buf, d->codes[i].len };
}

static void dump_free(struct dump *d) {
    for (size_t i = 0; i < 8; i++) rbuf_free(&d->codes[i]);
}

static void test_restore(void **state) {
    (void)state;
    struct rbuf err = { 0 };
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello'"), false), "test");
    struct dump d;
    dump_all(&d);
    assert_int_equal(d.n, 1);
    script_function_delete(SLICE_LIT("test"), &err);
    assert_true(script_function_restore(E, d.s, d.n, SCRIPT_RESTORE_APPEND, &err));
    assert_string_equal(fcall(E, "test"), "$5\r\nhello\r\n");
    /* APPEND onto an existing library */
    assert_false(script_function_restore(E, d.s, d.n, SCRIPT_RESTORE_APPEND, &err));
    assert_string_equal(err.buf, "ERR Library test already exists");
    /* REPLACE */
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello1'"), true), "test");
    assert_string_equal(fcall(E, "test"), "$6\r\nhello1\r\n");
    assert_true(script_function_restore(E, d.s, d.n, SCRIPT_RESTORE_REPLACE, &err));
    assert_string_equal(fcall(E, "test"), "$5\r\nhello\r\n");
    /* FLUSH drops the others */
    assert_string_equal(fload(E, lib_code("other", "other", "return 1"), false), "other");
    assert_true(script_function_restore(E, d.s, d.n, SCRIPT_RESTORE_FLUSH, &err));
    assert_string_equal(fcall(E, "other"), "NOT_FOUND");
    assert_string_equal(fcall(E, "test"), "$5\r\nhello\r\n");
    dump_free(&d);

    /* functions.tcl: "test function restore with function name collision" */
    script_function_flush();
    assert_string_equal(fload(E,
                              "#!lua name=lib1\nlocal function add1(a) return a + 1 end\n"
                              "redis.register_function('f1', function(keys, args) return add1(1) end)\n"
                              "redis.register_function('f2', function(keys, args) return add1(2) end)\n"
                              "redis.register_function('f3', function(keys, args) return add1(3) end)",
                              false),
                        "lib1");
    dump_all(&d);
    script_function_flush();
    assert_string_equal(fload(E, "#!lua name=lib1\nredis.register_function('f6', function(keys, args) return 7 end)", false),
                        "lib1");
    assert_string_equal(fload(E,
                              "#!lua name=lib2\nlocal function add1(a) return a + 1 end\n"
                              "redis.register_function('f4', function(keys, args) return add1(4) end)\n"
                              "redis.register_function('f5', function(keys, args) return add1(5) end)\n"
                              "redis.register_function('f3', function(keys, args) return add1(3) end)",
                              false),
                        "lib2");
    assert_false(script_function_restore(E, d.s, d.n, SCRIPT_RESTORE_APPEND, &err));
    assert_string_equal(err.buf, "ERR Library lib1 already exists");
    assert_false(script_function_restore(E, d.s, d.n, SCRIPT_RESTORE_REPLACE, &err));
    assert_string_equal(err.buf, "ERR Function f3 already exists");
    assert_string_equal(fcall(E, "f3"), ":4\r\n");
    assert_string_equal(fcall(E, "f4"), ":5\r\n");
    assert_string_equal(fcall(E, "f5"), ":6\r\n");
    assert_string_equal(fcall(E, "f6"), ":7\r\n");
    dump_free(&d);
    /* a payload that does not load, or collides with itself */
    struct slice bad[2] = { SLICE_LIT("#!lua name=x\nbad code"), SLICE_LIT("#!lua name=y\nredis.register_function('g', function() end)") };
    assert_false(script_function_restore(E, bad, 1, SCRIPT_RESTORE_FLUSH, &err));
    assert_string_equal(err.buf, "ERR Error compiling function: user_function:2: '=' expected near 'code'");
    assert_string_equal(fcall(E, "f6"), ":7\r\n");
    struct slice twice[2] = { bad[1], bad[1] };
    assert_false(script_function_restore(E, twice, 2, SCRIPT_RESTORE_FLUSH, &err));
    assert_string_equal(err.buf, "ERR Library 'y' already exists");
    struct slice clash[2] = { bad[1], SLICE_LIT("#!lua name=z\nredis.register_function('G', function() end)") };
    assert_false(script_function_restore(E, clash, 2, SCRIPT_RESTORE_FLUSH, &err));
    assert_string_equal(err.buf, "ERR Function G already exists");
    rbuf_free(&err);
}

/* ---- two threads ------------------------------------------------------------------------------ */

struct job {
    const char *fname;
    char reply[256];
};

static void *call_on_thread(void *arg) {
    struct job *j = arg;
    struct script_engine *e = script_engine_new();
    snprintf(j->reply, sizeof(j->reply), "%s", fcall(e, j->fname));
    script_engine_free(e);
    thread_buffers_free();
    return NULL;
}

static const char *call_elsewhere(const char *fname) {
    static struct job j;
    j.fname = fname;
    pthread_t t;
    pthread_create(&t, NULL, call_on_thread, &j);
    pthread_join(t, NULL);
    return j.reply;
}

/* One engine that lives on another thread, driven through a queue of one. */
struct worker {
    pthread_t t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *fname;
    char reply[256];
    bool busy, quit;
};

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct script_engine *e = script_engine_new();
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->busy && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit) break;
        snprintf(w->reply, sizeof(w->reply), "%s", fcall(e, w->fname));
        w->busy = false;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    script_engine_free(e);
    thread_buffers_free();
    return NULL;
}

static const char *worker_call(struct worker *w, const char *fname) {
    pthread_mutex_lock(&w->mu);
    w->fname = fname;
    w->busy = true;
    pthread_cond_broadcast(&w->cv);
    while (w->busy) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return w->reply;
}

static void test_threads(void **state) {
    (void)state;
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello'"), false), "test");
    assert_string_equal(call_elsewhere("TEST"), "$5\r\nhello\r\n");
    struct worker w = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
    pthread_create(&w.t, NULL, worker_main, &w);
    assert_string_equal(worker_call(&w, "test"), "$5\r\nhello\r\n");
    /* replaced here, seen there */
    assert_string_equal(fload(E, lib_code("test", "test", "return 'hello1'"), true), "test");
    assert_string_equal(worker_call(&w, "test"), "$6\r\nhello1\r\n");
    /* a function moves to another library */
    struct rbuf err = { 0 };
    assert_true(script_function_delete(SLICE_LIT("test"), &err));
    assert_string_equal(worker_call(&w, "test"), "NOT_FOUND");
    assert_string_equal(fload(E, lib_code("other", "test", "return 'moved'"), false), "other");
    assert_string_equal(worker_call(&w, "test"), "$5\r\nmoved\r\n");
    script_function_flush();
    assert_string_equal(worker_call(&w, "test"), "NOT_FOUND");
    assert_string_equal(fcall(E, "test"), "NOT_FOUND");
    pthread_mutex_lock(&w.mu);
    w.quit = true;
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(w.t, NULL);
    rbuf_free(&err);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malicious_access, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_and_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_errors_and_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rbuf_free(&ERR);
    thread_buffers_free();
    return rc;
}
