/*
 * engine.c -- a thread's scripting engine: the redis.* API, runs, EVAL's
 * compiled cache and the functions' cache, and the public API of script.h.
 *
 * An engine has two Lua states (sandbox.c), created on first use: EVAL's,
 * where each body is compiled once (chunk "@user_script", its shebang line
 * skipped but its newline kept so line numbers match) and kept by SHA1 in a
 * small open-addressing table of registry refs; and the functions', where
 * a library's code runs once per thread to register its callbacks, kept in
 * a Lua table by lowercased function name. Both follow the process-wide
 * registry (registry.c) through its generations: a SCRIPT FLUSH seen here
 * closes the EVAL state (Redis resets its VM), a change of the libraries
 * drops the callbacks of libraries that are gone.
 *
 * A run: the error handler and the function on the stack, KEYS and ARGV
 * (globals for EVAL, the two arguments of a function), a count hook every
 * SCRIPT_TICK_INSTRUCTIONS instructions that calls host->tick, one
 * lua_pcall, then the result or error converted into the caller's reply.
 * All of it happens inside a protected call, so no Lua error (not even out
 * of memory) can escape to Lua's panic. redis.call hands the argv to
 * host->call and converts the RESP reply it gets back (convert.c).
 *
 * Stopping (SCRIPT_KILL or SCRIPT_ABORT from the host): the error is raised
 * and the hook is set to fire on every instruction and line of the thread
 * and of the running coroutine, and pcall/xpcall re-raise, so the script
 * cannot catch it and go on.
 */
#include "engine.h"

#include "ringkv/util.h"

#include <ctype.h>
#include <lauxlib.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

#define LOAD_TIMEOUT_US 500000   /* FUNCTION LOAD: 500 ms, as Redis */
#define GC_PERIOD 50

static char abort_marker;
static void (*_Atomic global_log)(int level, const char *msg, size_t len);

void script_set_log(void (*fn)(int level, const char *msg, size_t len)) {
    atomic_store(&global_log, fn);
}

/* ---- protected calls ------------------------------------------------------------------ */

/* lua_cpcall without its closure allocation: one C function, kept in the
 * registry, runs fn with ud as its first argument. */
struct pcall_job {
    lua_CFunction fn;
    void *ud;
};

int engine_dispatch(lua_State *L) {
    struct pcall_job *j = lua_touserdata(L, 1);
    lua_pushlightuserdata(L, j->ud);
    lua_replace(L, 1);
    return j->fn(L);
}

static int lstate_pcall(struct lstate *ls, lua_CFunction fn, void *ud) {
    struct pcall_job j = { fn, ud };
    lua_rawgeti(ls->L, LUA_REGISTRYINDEX, ls->ref_dispatch);
    lua_pushlightuserdata(ls->L, &j);
    return lua_pcall(ls->L, 1, 0, 0);
}

static void publish_memory(struct script_engine *e) {
    atomic_store_explicit(&e->ev_mem_pub, e->ev ? e->ev->mem : 0, memory_order_relaxed);
    atomic_store_explicit(&e->fn_mem_pub, e->fn ? e->fn->mem : 0, memory_order_relaxed);
}

/* ---- hooks and stopping ------------------------------------------------------------ */

static void run_hook(lua_State *L, lua_Debug *ar);

int engine_raise_stop(lua_State *L, struct run *run) {
    lua_sethook(L, run_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
    if (run->L != L) lua_sethook(run->L, run_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
    if (run->stop == SCRIPT_KILL)
        script_push_error(L, "Script killed by user with SCRIPT KILL...");
    else
        lua_pushlightuserdata(L, &abort_marker);
    return lua_error(L);
}

static void run_hook(lua_State *L, lua_Debug *ar) {
    struct script_engine *e = lstate_of(L)->e;
    if (e->load) {
        if (e->load->timeout_us && monotonic_us() - e->load->start_us > e->load->timeout_us) {
            lua_sethook(L, run_hook, LUA_MASKLINE, 0);
            script_push_error(L, "FUNCTION LOAD timeout");
            lua_error(L);
        }
        return;
    }
    struct run *run = e->run;
    if (!run) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    if (run->stop) {
        engine_raise_stop(L, run);
        return;
    }
    if (lua_gethookmask(L) != LUA_MASKCOUNT || lua_gethookcount(L) != SCRIPT_TICK_INSTRUCTIONS) {
        /* a coroutine that kept the stopping hook of an earlier run */
        if (run->host->tick)
            lua_sethook(L, run_hook, LUA_MASKCOUNT, SCRIPT_TICK_INSTRUCTIONS);
        else
            lua_sethook(L, NULL, 0, 0);
        return;
    }
    if (ar->event == LUA_HOOKCOUNT && run->host->tick) {
        int v = run->host->tick(run->host->ctx);
        if (v != SCRIPT_GO_ON) {
            run->stop = v;
            engine_raise_stop(L, run);
        }
    }
}

/* ---- redis.* ---------------------------------------------------------------------------- */

static int raise_error(lua_State *L, const char *msg) {
    script_push_error(L, msg);
    return lua_error(L);
}

/* The arguments 1..top as the argv of a command, numbers as Redis formats
 * them ("%.17g"); false with the error table alone on the stack. */
static bool args_to_argv(lua_State *L, struct script_engine *e, int *argc) {
    int n = lua_gettop(L);
    if (n == 0) {
        script_push_error(L, "Please specify at least one argument for this redis lib call");
        return false;
    }
    if ((size_t)n > e->argv_cap) {
        e->argv_cap = (size_t)n;
        e->argv = rk_realloc(e->argv, e->argv_cap * sizeof(*e->argv));
    }
    e->numbuf.len = 0;
    rbuf_reserve(&e->numbuf, (size_t)n * 32);   /* no reallocation below: pointers stay */
    for (int j = 1; j <= n; j++) {
        if (lua_type(L, j) == LUA_TNUMBER) {
            char *dst = e->numbuf.buf + e->numbuf.len;
            int len = snprintf(dst, 32, "%.17g", (double)lua_tonumber(L, j));
            e->argv[j - 1] = (struct slice){ dst, (size_t)len };
            e->numbuf.len += (size_t)len;
        } else {
            size_t len;
            const char *s = lua_tolstring(L, j, &len);
            if (!s) {
                lua_settop(L, 0);
                script_push_error(L, "Lua redis lib command arguments must be strings or integers");
                return false;
            }
            e->argv[j - 1] = (struct slice){ s, len };
        }
    }
    *argc = n;
    return true;
}

static int redis_call(lua_State *L, bool raise) {
    struct script_engine *e = lstate_of(L)->e;
    struct run *run = e->run;
    if (!run) return raise_error(L, "redis.call/pcall can only be called inside a script invocation");
    int argc;
    if (!args_to_argv(L, e, &argc)) return raise ? lua_error(L) : 1;
    if (e->in_call) {
        lua_settop(L, 0);
        script_push_error(L, "luaRedisGenericCommand() recursive call detected. "
                             "Are you doing funny stuff with Lua debug hooks?");
        return 1;
    }
    struct script_call c = { argc, e->argv, (uint8_t)run->resp, (uint8_t)run->repl, !raise };
    e->call_out.len = 0;
    e->in_call = true;
    int v = run->host->call(run->host->ctx, &c, &e->call_out);
    e->in_call = false;
    if (v != SCRIPT_GO_ON) {
        run->stop = v;
        return engine_raise_stop(L, run);
    }
    lua_settop(L, 0);
    const char *reply = e->call_out.buf;
    size_t len = e->call_out.len;
    if (!script_resp_to_lua(L, reply, len)) {
        script_push_error(L, "The command's reply could not be read");
        return raise ? lua_error(L) : 1;
    }
    if (raise && len && (reply[0] == '-' || reply[0] == '!')) return lua_error(L);
    return 1;
}

int api_call(lua_State *L) {
    return redis_call(L, true);
}

int api_pcall(lua_State *L) {
    return redis_call(L, false);
}

int api_log(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 2) return raise_error(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_error(L, "First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, 1);
    if (level < SCRIPT_LOG_DEBUG || level > SCRIPT_LOG_WARNING) return raise_error(L, "Invalid debug level.");
    struct script_engine *e = lstate_of(L)->e;
    if (e->load && e->load->quiet) return 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int j = 1; j < argc; j++) {
        size_t len;
        const char *s = lua_tolstring(L, 1 + j, &len);
        if (!s) continue;
        if (j != 1) luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, len);
    }
    luaL_pushresult(&b);
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    if (e->run && e->run->host->log) {
        e->run->host->log(e->run->host->ctx, level, msg, len);
    } else {
        void (*fn)(int, const char *, size_t) = atomic_load(&global_log);
        if (fn) fn(level, msg, len);
    }
    return 0;
}

int api_setresp(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    if (!e->run) return raise_error(L, "redis.setresp can only be called inside a script invocation");
    if (lua_gettop(L) != 1) return raise_error(L, "redis.setresp() requires one argument.");
    int resp = (int)lua_tonumber(L, 1);
    if (resp != 2 && resp != 3) return raise_error(L, "RESP version must be 2 or 3.");
    e->run->resp = resp;
    return 0;
}

int api_set_repl(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    if (!e->run) return raise_error(L, "redis.set_repl can only be called inside a script invocation");
    if (lua_gettop(L) != 1) return raise_error(L, "redis.set_repl() requires two arguments.");
    int flags = (int)lua_tonumber(L, -1);
    if ((flags & ~SCRIPT_REPL_ALL) != 0)
        return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    e->run->repl = flags;
    return 0;
}

int api_sha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_error(L, "wrong number of arguments");
    size_t len = 0;
    const char *s = lua_tolstring(L, 1, &len);
    char hex[41];
    script_sha1hex(s ? s : "", s ? len : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

int api_error_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        script_push_error(L, "wrong number or type of arguments");
        return 1;
    }
    const char *err = lua_tostring(L, -1);
    if (err[0] != '-') {
        lua_pushliteral(L, "-");
        lua_pushvalue(L, 1);
        lua_concat(L, 2);
        err = lua_tostring(L, -1);
    }
    script_push_error(L, err);
    return 1;
}

int api_status_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        script_push_error(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushliteral(L, "ok");
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    return 1;
}

int api_acl_check_cmd(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    if (!e->run) return raise_error(L, "redis.acl_check_cmd can only be called inside a script invocation");
    int argc;
    if (!args_to_argv(L, e, &argc)) return lua_error(L);
    const struct script_host *h = e->run->host;
    int ok = h->acl_check ? h->acl_check(h->ctx, argc, e->argv) : 1;
    if (ok < 0) return raise_error(L, "Invalid command passed to redis.acl_check_cmd()");
    lua_pushboolean(L, ok > 0);
    return 1;
}

int api_breakpoint(lua_State *L) {
    lua_pushboolean(L, 0);   /* no debugger session */
    return 1;
}

int api_debug(lua_State *L) {
    (void)L;
    return 0;
}

int api_replicate_commands(lua_State *L) {
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- math.random: Redis's rand48, one sequence per engine ------------------------ */

#define RAND48_MASK ((1ULL << 48) - 1)

static int32_t rand48_next(struct script_engine *e) {
    e->rand48 = (e->rand48 * 0x5DEECE66DULL + 0xB) & RAND48_MASK;
    return (int32_t)(e->rand48 >> 17);
}

int api_math_random(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    if (!e->run) return luaL_error(L, "math.random can only be called inside a script invocation");
    lua_Number r = (lua_Number)(rand48_next(e) % 2147483647) / (lua_Number)2147483647;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1);
        int u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * ((lua_Number)u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

int api_math_randomseed(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    if (!e->run) return luaL_error(L, "math.randomseed can only be called inside a script invocation");
    int seed = luaL_checkint(L, 1);
    e->rand48 = ((uint64_t)(uint32_t)seed << 16) | 0x330E;
    return 0;
}

/* ---- redis.register_function (libraries loading) ---------------------------------- */

static void load_free(lua_State *L, struct load *ld) {
    for (int i = 0; i < ld->nfns; i++) {
        if (L) luaL_unref(L, LUA_REGISTRYINDEX, ld->refs[i]);
        free(ld->fns[i].name);
        free(ld->fns[i].desc);
    }
    free(ld->fns);
    free(ld->refs);
    ld->fns = NULL;
    ld->refs = NULL;
    ld->nfns = ld->cap = 0;
}

static const char NAME_ERR[] =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

static char *dup_lua_string(lua_State *L, int idx) {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    char *d = rk_malloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

int api_register_function(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    struct load *ld = e->load;
    if (!ld) return raise_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2) return raise_error(L, "wrong number of arguments to redis.register_function");
    int name_idx = 0, desc_idx = 0, cb_idx = 0, flags = 0;
    if (argc == 1) {
        if (!lua_istable(L, 1))
            return raise_error(L, "calling redis.register_function with a single argument is only applicable to Lua "
                                  "table (representing named arguments).");
        /* the named arguments, copied to slots 2.. so the walk is not disturbed */
        lua_settop(L, 4);   /* 2 name, 3 description, 4 callback */
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            if (!lua_isstring(L, -2))
                return raise_error(L, "named argument key given to redis.register_function is not a string");
            lua_pushvalue(L, -2);
            const char *key = lua_tostring(L, -1);
            if (strcasecmp(key, "function_name") == 0) {
                if (!lua_isstring(L, -2))
                    return raise_error(L, "function_name argument given to redis.register_function must be a string");
                lua_pushvalue(L, -2);
                lua_replace(L, 2);
                name_idx = 2;
            } else if (strcasecmp(key, "description") == 0) {
                if (!lua_isstring(L, -2))
                    return raise_error(L, "description argument given to redis.register_function must be a string");
                lua_pushvalue(L, -2);
                lua_replace(L, 3);
                desc_idx = 3;
            } else if (strcasecmp(key, "callback") == 0) {
                if (!lua_isfunction(L, -2))
                    return raise_error(L, "callback argument given to redis.register_function must be a function");
                lua_pushvalue(L, -2);
                lua_replace(L, 4);
                cb_idx = 4;
            } else if (strcasecmp(key, "flags") == 0) {
                if (!lua_istable(L, -2))
                    return raise_error(L, "flags argument to redis.register_function must be a table representing "
                                          "function flags");
                int f = 0;
                for (int j = 1;; j++) {
                    lua_rawgeti(L, -2, j);
                    if (lua_isnil(L, -1)) {
                        lua_pop(L, 1);
                        break;
                    }
                    int bit = lua_isstring(L, -1) ? script_flag_by_name(lua_tostring(L, -1), true) : 0;
                    if (!bit) return raise_error(L, "unknown flag given");
                    f |= bit;
                    lua_pop(L, 1);
                }
                flags = f;
            } else {
                return raise_error(L, "unknown argument given to redis.register_function");
            }
            lua_pop(L, 2);   /* key copy, value */
        }
        if (!name_idx) return raise_error(L, "redis.register_function must get a function name argument");
        if (!cb_idx) return raise_error(L, "redis.register_function must get a callback argument");
    } else {
        if (!lua_isstring(L, 1)) return raise_error(L, "first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2)) return raise_error(L, "second argument to redis.register_function must be a function");
        name_idx = 1;
        cb_idx = 2;
    }
    size_t nlen;
    const char *name = lua_tolstring(L, name_idx, &nlen);
    if (!script_name_ok(name, nlen)) return raise_error(L, NAME_ERR);
    for (int i = 0; i < ld->nfns; i++)
        if (strcmp(ld->fns[i].name, name) == 0) return raise_error(L, "Function already exists in the library");
    if (ld->nfns == ld->cap) {
        ld->cap = ld->cap ? ld->cap * 2 : 8;
        ld->fns = rk_realloc(ld->fns, (size_t)ld->cap * sizeof(*ld->fns));
        ld->refs = rk_realloc(ld->refs, (size_t)ld->cap * sizeof(*ld->refs));
    }
    lua_pushvalue(L, cb_idx);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    struct reg_fn_def *f = &ld->fns[ld->nfns];
    f->name = dup_lua_string(L, name_idx);
    f->desc = desc_idx ? dup_lua_string(L, desc_idx) : NULL;
    f->flags = flags;
    ld->refs[ld->nfns++] = ref;
    return 0;
}

/* ---- EVAL's state and cache ---------------------------------------------------------- */

static void cache_clear(struct script_engine *e) {
    free(e->cache);
    e->cache = NULL;
    e->cache_cap = e->cache_n = 0;
}

static struct sha_slot *cache_slot(struct script_engine *e, const unsigned char sha[20]) {
    if (!e->cache_cap) return NULL;
    uint64_t h;
    memcpy(&h, sha, sizeof(h));
    size_t mask = e->cache_cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        struct sha_slot *s = &e->cache[i];
        if (!s->used || memcmp(s->sha, sha, 20) == 0) return s;
    }
}

static struct sha_slot *cache_find(struct script_engine *e, const unsigned char sha[20]) {
    struct sha_slot *s = cache_slot(e, sha);
    return s && s->used ? s : NULL;
}

static void cache_put(struct script_engine *e, const unsigned char sha[20], int ref, int flags) {
    if ((e->cache_n + 1) * 2 > e->cache_cap) {
        struct sha_slot *old = e->cache;
        size_t ocap = e->cache_cap;
        e->cache_cap = ocap ? ocap * 2 : 64;
        e->cache = rk_calloc(e->cache_cap, sizeof(*e->cache));
        for (size_t i = 0; i < ocap; i++)
            if (old[i].used) *cache_slot(e, old[i].sha) = old[i];
        free(old);
    }
    struct sha_slot *s = cache_slot(e, sha);
    if (!s->used) e->cache_n++;
    memcpy(s->sha, sha, 20);
    s->ref = ref;
    s->flags = flags;
    s->used = true;
}

static struct lstate *eval_state(struct script_engine *e) {
    uint64_t g = reg_script_gen();
    /* never under a running script (a host calling back into the engine) */
    if (e->ev && g != e->script_gen && !e->run && !e->load) {
        lstate_free(e->ev);
        e->ev = NULL;
        cache_clear(e);
    }
    if (!e->ev) {
        e->ev = lstate_new(e, false);
        e->script_gen = g;
        publish_memory(e);
    }
    return e->ev;
}

struct compile_args {
    struct lstate *ls;
    const char *p;
    size_t len;
    struct rbuf *err;
    int ref;
    bool ok;
};

static int compile_protected(lua_State *L) {
    struct compile_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    sandbox_enter(L, a->ls);
    if (sandbox_load_text(L, a->p, a->len, "@user_script")) {
        script_err_setf(a->err, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        return 0;
    }
    a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    a->ok = true;
    return 0;
}

/* Compile body (its shebang line skipped, not its newline) into the cache. */
static bool compile_into_cache(struct script_engine *e, const unsigned char sha[20], const char *body, size_t len,
                               size_t shebang_len, int flags, struct rbuf *err) {
    struct lstate *ls = eval_state(e);
    struct compile_args a = { ls, body + shebang_len, len - shebang_len, err, LUA_NOREF, false };
    if (lstate_pcall(ls, compile_protected, &a) != 0) {
        script_err_setf(err, "ERR Error compiling script (new function): %s",
                        lua_isstring(ls->L, -1) ? lua_tostring(ls->L, -1) : "out of memory");
        lua_settop(ls->L, 0);
        return false;
    }
    lua_settop(ls->L, 0);
    publish_memory(e);
    if (!a.ok) return false;
    cache_put(e, sha, a.ref, flags);
    return true;
}

/* The compiled script sha on this thread, compiled now if registered
 * elsewhere. */
static struct sha_slot *find_script(struct script_engine *e, const unsigned char sha[20]) {
    eval_state(e);
    struct sha_slot *s = cache_find(e, sha);
    if (s) return s;
    char *body;
    size_t len, shebang_len;
    int flags;
    if (!reg_script_get(sha, &flags, &body, &len, &shebang_len)) return NULL;
    struct rbuf err = { 0 };
    bool ok = compile_into_cache(e, sha, body, len, shebang_len, flags, &err);
    free(body);
    rbuf_free(&err);
    return ok ? cache_find(e, sha) : NULL;
}

/* ---- runs ---------------------------------------------------------------------------------- */

struct run_args {
    struct script_engine *e;
    struct lstate *ls;
    struct run *run;
    int fref;                  /* EVAL: the compiled function */
    const unsigned char *sha;  /* EVAL: its name in errors (as hex) */
    struct slice fname;        /* FCALL: the name asked for */
    const struct slice *argv;
    int argc, nkeys;
    struct reply *r;
    int result;
};

static void push_array(lua_State *L, const struct slice *v, int n) {
    lua_createtable(L, n, 0);
    for (int j = 0; j < n; j++) {
        lua_pushlstring(L, v[j].ptr, v[j].len);
        lua_rawseti(L, -2, j + 1);
    }
}

/* Push fncache[lower(name)] (nil if absent). */
static void push_fn_entry(lua_State *L, struct lstate *ls, struct slice name) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_fncache);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < name.len; i++) luaL_addchar(&b, (char)tolower((unsigned char)name.ptr[i]));
    luaL_pushresult(&b);
    lua_rawget(L, -2);
    lua_remove(L, -2);
}

/* The uncaught error at the top of the stack, as Redis words it. */
static void write_error(lua_State *L, const char *funcname, struct reply *r) {
    if (!lua_istable(L, -1)) {
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        lua_pushfstring(L, "ERR Error running script %s, %s", funcname, msg);
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        /* Redis prints at most 100 bytes of msg */
        size_t prefix = strlen("ERR Error running script , ") + strlen(funcname);
        if (len > prefix + 100) len = prefix + 100;
        script_reply_error(r, s, len, true);
        return;
    }
    int t = lua_gettop(L);
    lua_getfield(L, t, "err");
    const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
    lua_getfield(L, t, "source");
    const char *source = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
    lua_getfield(L, t, "line");
    const char *line = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
    lua_getfield(L, t, "ignore_error_stats_update");
    bool ignore = lua_isboolean(L, -1) && lua_toboolean(L, -1);
    if (line && source)
        lua_pushfstring(L, "%s script: %s, on %s:%s.", msg, funcname, source, line);
    else
        lua_pushstring(L, msg);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    script_reply_error(r, s, len, !ignore);
    lua_settop(L, t);
}

static int run_protected(lua_State *L) {
    struct run_args *a = lua_touserdata(L, 1);
    struct lstate *ls = a->ls;
    struct run *run = a->run;
    lua_settop(L, 0);
    sandbox_enter(L, ls);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_errh);   /* 1 */
    const char *funcname;
    char hex[41];
    if (run->eval) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->fref);     /* 2 */
        funcname = hex;
        hex[0] = '\0';
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_greal);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_keys);
        push_array(L, a->argv, a->nkeys);
        lua_rawset(L, -3);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_argv);
        push_array(L, a->argv + a->nkeys, a->argc - a->nkeys);
        lua_rawset(L, -3);
        lua_pop(L, 1);
    } else {
        push_fn_entry(L, ls, a->fname);                 /* 2 */
        if (!lua_istable(L, 2)) {
            a->result = SCRIPT_RESULT_NOT_FOUND;
            return 0;
        }
        lua_getfield(L, 2, "name");                     /* 3 */
        funcname = lua_tostring(L, 3);
        lua_getfield(L, 2, "f");                        /* 4 */
        push_array(L, a->argv, a->nkeys);
        push_array(L, a->argv + a->nkeys, a->argc - a->nkeys);
    }
    if (run->host->tick) lua_sethook(L, run_hook, LUA_MASKCOUNT, SCRIPT_TICK_INSTRUCTIONS);
    int status = lua_pcall(L, run->eval ? 0 : 2, 1, 1);
    lua_sethook(L, NULL, 0, 0);
    if (++a->e->gc_count >= GC_PERIOD) {
        lua_gc(L, LUA_GCSTEP, GC_PERIOD);
        a->e->gc_count = 0;
    }
    struct reply *r = a->r;
    size_t start = r->out->len;
    if (run->stop == SCRIPT_ABORT) {
        a->result = SCRIPT_RESULT_ABORTED;
        return 0;
    }
    if (status != 0) {
        if (run->eval) script_sha_to_hex(a->sha, hex);
        write_error(L, funcname, r);
    } else if (run->stop == SCRIPT_KILL) {
        static const char killed[] = "ERR Script killed by user with SCRIPT KILL...";
        script_reply_error(r, killed, sizeof(killed) - 1, true);
    } else {
        script_lua_to_reply(L, r, run->resp);
    }
    a->result = r->out->len > start && r->out->buf[start] == '-' ? SCRIPT_RESULT_ERROR : SCRIPT_RESULT_OK;
    return 0;
}

static int nested_run(struct reply *r) {
    static const char msg[] = "ERR This Redis command is not allowed from script";
    script_reply_error(r, msg, sizeof(msg) - 1, true);
    return SCRIPT_RESULT_ERROR;
}

static int do_run(struct run_args *a) {
    struct script_engine *e = a->e;
    lua_State *L = a->ls->L;
    size_t start = a->r->out->len;
    e->run = a->run;
    int status = lstate_pcall(a->ls, run_protected, a);
    e->run = NULL;
    if (status != 0) {   /* out of memory outside the script itself */
        a->r->out->len = start;
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        char buf[256];
        int n = snprintf(buf, sizeof(buf), "ERR Error running script, %.100s", msg);
        script_reply_error(a->r, buf, (size_t)n, true);
        a->result = SCRIPT_RESULT_ERROR;
    }
    lua_settop(L, 0);
    lua_sethook(L, NULL, 0, 0);
    if (a->ls->gc_stopped) {   /* collectgarbage("stop") lasts for one run */
        lua_gc(L, LUA_GCRESTART, 0);
        a->ls->gc_stopped = false;
    }
    if (a->result == SCRIPT_RESULT_ABORTED) a->r->out->len = start;
    publish_memory(e);
    return a->result;
}

/* ---- functions: loading and the callbacks cache ---------------------------------------- */

static void fn_resync(struct script_engine *e);

static struct lstate *fn_state(struct script_engine *e) {
    if (!e->fn) {
        e->fn_gen = reg_fn_gen();
        e->fn = lstate_new(e, true);
    } else if (reg_fn_gen() != e->fn_gen && !e->run && !e->load) {
        fn_resync(e);
    }
    return e->fn;
}

struct resync_args {
    struct lstate *ls;
    const uint64_t *ids;
    size_t n;
};

static int resync_protected(lua_State *L) {
    struct resync_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ls->ref_fncache);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_getfield(L, -1, "lib");
        uint64_t id = (uint64_t)lua_tonumber(L, -1);
        lua_pop(L, 2);
        bool live = false;
        for (size_t i = 0; i < a->n && !live; i++) live = a->ids[i] == id;
        if (!live) {
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, 1);   /* clearing a field while walking is allowed */
        }
    }
    return 0;
}

static void fn_resync(struct script_engine *e) {
    uint64_t *ids, gen;
    size_t n;
    reg_fn_live(&ids, &n, &gen);
    struct resync_args a = { e->fn, ids, n };
    if (lstate_pcall(e->fn, resync_protected, &a) != 0) {
        /* out of memory: start over with an empty cache */
        lstate_free(e->fn);
        e->fn = lstate_new(e, true);
    }
    lua_settop(e->fn->L, 0);
    free(ids);
    e->fn_gen = gen;
}

struct load_args {
    struct lstate *ls;
    const char *p;
    size_t len;
    struct rbuf *err;
    bool ok;
};

static int load_protected(lua_State *L) {
    struct load_args *a = lua_touserdata(L, 1);
    struct lstate *ls = a->ls;
    lua_settop(L, 0);
    sandbox_enter(L, ls);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_fmeta);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_loadapi);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    if (sandbox_load_text(L, a->p, a->len, "@user_function")) {
        script_err_setf(a->err, "ERR Error compiling function: %s", lua_tostring(L, -1));
        return 0;
    }
    lua_sethook(L, run_hook, LUA_MASKCOUNT, SCRIPT_TICK_INSTRUCTIONS);
    int status = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    if (status) {
        const char *msg;
        if (lua_isstring(L, -1)) {
            lua_pushfstring(L, "ERR %s", lua_tostring(L, -1));
            msg = lua_tostring(L, -1);
        } else {
            lua_getfield(L, -1, "err");
            msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "(null)";
        }
        script_err_setf(a->err, "ERR Error registering functions: %s", msg);
        return 0;
    }
    a->ok = true;
    return 0;
}

/* Run a library's code in load mode; the functions it registered are in ld. */
static bool lib_load(struct script_engine *e, const char *p, size_t len, uint64_t timeout_us, bool quiet,
                     struct load *ld, struct rbuf *err) {
    struct lstate *ls = fn_state(e);
    lua_State *L = ls->L;
    memset(ld, 0, sizeof(*ld));
    ld->start_us = monotonic_us();
    ld->timeout_us = timeout_us;
    ld->quiet = quiet;
    struct load_args a = { ls, p, len, err, false };
    e->load = ld;
    int status = lstate_pcall(ls, load_protected, &a);
    e->load = NULL;
    if (status != 0) script_err_set(err, "ERR Error registering functions: not enough memory");
    /* back to the run-time globals, whatever happened */
    lua_settop(L, 0);
    lua_sethook(L, NULL, 0, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_fmeta);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_greal);
    lua_setfield(L, -2, "__index");
    lua_settop(L, 0);
    publish_memory(e);
    if (status != 0 || !a.ok) {
        load_free(L, ld);
        return false;
    }
    return true;
}

struct commit_args {
    struct lstate *ls;
    struct load *ld;
    uint64_t id;
};

static int commit_protected(lua_State *L) {
    struct commit_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ls->ref_fncache);
    for (int i = 0; i < a->ld->nfns; i++) {
        const char *name = a->ld->fns[i].name;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (const char *c = name; *c; c++) luaL_addchar(&b, (char)tolower((unsigned char)*c));
        luaL_pushresult(&b);
        lua_createtable(L, 0, 4);
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->ld->refs[i]);
        lua_setfield(L, -2, "f");
        lua_pushnumber(L, a->ld->fns[i].flags);
        lua_setfield(L, -2, "flags");
        lua_pushnumber(L, (lua_Number)a->id);
        lua_setfield(L, -2, "lib");
        lua_pushstring(L, name);
        lua_setfield(L, -2, "name");
        lua_rawset(L, 1);
    }
    return 0;
}

/* The loaded functions into this engine's cache, as library id. */
static void lib_commit(struct script_engine *e, struct load *ld, uint64_t id) {
    struct commit_args a = { e->fn, ld, id };
    lstate_pcall(e->fn, commit_protected, &a);
    lua_settop(e->fn->L, 0);
}

struct lookup_args {
    struct lstate *ls;
    struct slice name;
    bool found;
    int flags;
};

static int lookup_protected(lua_State *L) {
    struct lookup_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    push_fn_entry(L, a->ls, a->name);
    if (lua_istable(L, -1)) {
        a->found = true;
        lua_getfield(L, -1, "flags");
        a->flags = (int)lua_tonumber(L, -1);
    }
    return 0;
}

static bool fn_cached(struct script_engine *e, struct slice name, int *flags) {
    struct lookup_args a = { e->fn, name, false, 0 };
    lstate_pcall(e->fn, lookup_protected, &a);
    lua_settop(e->fn->L, 0);
    if (a.found && flags) *flags = a.flags;
    return a.found;
}

static struct reg_fn_def *copy_fns(const struct load *ld) {
    struct reg_fn_def *f = rk_calloc((size_t)ld->nfns, sizeof(*f));
    for (int i = 0; i < ld->nfns; i++) {
        f[i].name = strdup(ld->fns[i].name);
        f[i].desc = ld->fns[i].desc ? strdup(ld->fns[i].desc) : NULL;
        f[i].flags = ld->fns[i].flags;
    }
    return f;
}

/* ---- public API ---------------------------------------------------------------------- */

struct script_engine *script_engine_new(void) {
    struct script_engine *e = rk_calloc(1, sizeof(*e));
    e->rand48 = 0x1234ABCD330EULL;   /* Redis's seed at start */
    return e;
}

void script_engine_free(struct script_engine *e) {
    if (!e) return;
    lstate_free(e->ev);
    lstate_free(e->fn);
    cache_clear(e);
    rbuf_free(&e->call_out);
    rbuf_free(&e->numbuf);
    free(e->argv);
    free(e);
}

size_t script_engine_memory(const struct script_engine *e) {
    return atomic_load_explicit(&e->ev_mem_pub, memory_order_relaxed);
}

size_t script_engine_functions_memory(const struct script_engine *e) {
    return atomic_load_explicit(&e->fn_mem_pub, memory_order_relaxed);
}

bool script_load(struct script_engine *e, struct slice body, char sha_hex[41], int *flags, struct rbuf *err) {
    unsigned char sha[20];
    script_sha1(body.ptr, body.len, sha);
    script_sha_to_hex(sha, sha_hex);
    eval_state(e);
    struct sha_slot *s = cache_find(e, sha);
    if (s) {
        if (flags) *flags = s->flags;
        return true;
    }
    int f;
    size_t shebang_len;
    bool known = reg_script_get(sha, NULL, NULL, NULL, NULL);
    if (!script_parse_shebang(body.ptr, body.len, &f, &shebang_len, err)) return false;
    if (!compile_into_cache(e, sha, body.ptr, body.len, shebang_len, f, err)) return false;
    if (!known) reg_script_put(sha, body.ptr, body.len, f, shebang_len);
    if (flags) *flags = f;
    return true;
}

bool script_exists(struct script_engine *e, struct slice sha_hex, int *flags) {
    unsigned char sha[20];
    if (!script_sha_from_hex(sha_hex, sha)) return false;
    if (!e) return reg_script_get(sha, flags, NULL, NULL, NULL);
    struct sha_slot *s = find_script(e, sha);
    if (s && flags) *flags = s->flags;
    return s != NULL;
}

void script_flush_all(void) {
    reg_script_flush();
}

int script_run(struct script_engine *e, struct slice sha_hex, const struct slice *argv, int argc, int nkeys,
               const struct script_host *host, struct reply *r) {
    unsigned char sha[20];
    if (!script_sha_from_hex(sha_hex, sha)) return SCRIPT_RESULT_NOT_FOUND;
    if (e->run || e->load) return nested_run(r);
    struct sha_slot *s = find_script(e, sha);
    if (!s) return SCRIPT_RESULT_NOT_FOUND;
    struct run run = { host, e->ev->L, 2, SCRIPT_REPL_ALL, 0, true };
    struct run_args a = { e, e->ev, &run, s->ref, sha, { NULL, 0 }, argv, argc, nkeys, r, SCRIPT_RESULT_OK };
    return do_run(&a);
}

bool script_function_load(struct script_engine *e, struct slice code, bool replace, struct rbuf *name_out,
                          struct rbuf *err) {
    char *name, *engine;
    size_t body_off;
    if (!script_parse_library_meta(code.ptr, code.len, &name, &engine, &body_off, err)) return false;
    bool ok = false;
    struct load ld = { 0 };
    if (!script_name_ok(name, strlen(name))) {
        script_err_setf(err, "ERR %s", NAME_ERR);
        goto out;
    }
    if (strcasecmp(engine, "lua") != 0) {
        script_err_setf(err, "ERR Engine '%s' not found", engine);
        goto out;
    }
    if (!replace && reg_lib_exists(name)) {
        script_err_setf(err, "ERR Library '%s' already exists", name);
        goto out;
    }
    if (!lib_load(e, code.ptr + body_off, code.len - body_off, LOAD_TIMEOUT_US, false, &ld, err)) goto out;
    if (ld.nfns == 0) {
        script_err_set(err, "ERR No functions registered");
        goto out;
    }
    struct reg_lib_def d = { 0 };
    d.name = strdup(name);
    d.code = rk_malloc(code.len + 1);
    memcpy(d.code, code.ptr, code.len);
    d.code[code.len] = '\0';
    d.code_len = code.len;
    d.body_off = body_off;
    d.fns = copy_fns(&ld);
    d.nfns = ld.nfns;
    uint64_t id = reg_lib_publish(&d, replace, err);
    reg_lib_def_free(&d);   /* emptied by a successful publish */
    if (!id) goto out;
    lib_commit(e, &ld, id);
    if (name_out) script_err_set(name_out, name);
    ok = true;
out:
    if (e->fn) load_free(e->fn->L, &ld);
    free(name);
    free(engine);
    return ok;
}

bool script_function_delete(struct slice library, struct rbuf *err) {
    if (reg_lib_delete(library.ptr, library.len)) return true;
    script_err_set(err, "ERR Library not found");
    return false;
}

void script_function_flush(void) {
    reg_fn_flush();
}

bool script_function_exists(struct script_engine *e, struct slice name, int *flags) {
    fn_state(e);
    if (fn_cached(e, name, flags)) return true;
    return reg_fn_find(name.ptr, name.len, NULL, flags, NULL, NULL, NULL);
}

int script_fcall(struct script_engine *e, struct slice name, const struct slice *argv, int argc, int nkeys,
                 const struct script_host *host, struct reply *r) {
    if (e->run || e->load) return nested_run(r);
    fn_state(e);
    struct run run = { host, e->fn->L, 2, SCRIPT_REPL_ALL, 0, false };
    struct run_args a = { e, e->fn, &run, LUA_NOREF, NULL, name, argv, argc, nkeys, r, SCRIPT_RESULT_OK };
    int res = do_run(&a);
    if (res != SCRIPT_RESULT_NOT_FOUND) return res;
    {
        /* first call on this thread: run the library's code here */
        uint64_t id;
        char *code;
        size_t code_len, body_off;
        if (!reg_fn_find(name.ptr, name.len, &id, NULL, &code, &code_len, &body_off)) return SCRIPT_RESULT_NOT_FOUND;
        struct load ld;
        struct rbuf err = { 0 };
        /* no timeout: this code finished within one when it was loaded,
         * and a busy thread must not fail it */
        bool ok = lib_load(e, code + body_off, code_len - body_off, 0, true, &ld, &err);
        free(code);
        if (!ok) {
            script_reply_error(r, err.buf, err.len, true);
            rbuf_free(&err);
            return SCRIPT_RESULT_ERROR;
        }
        rbuf_free(&err);
        lib_commit(e, &ld, id);
        load_free(e->fn->L, &ld);
    }
    run = (struct run){ host, e->fn->L, 2, SCRIPT_REPL_ALL, 0, false };
    a.result = SCRIPT_RESULT_OK;
    return do_run(&a);
}

void script_function_list(struct reply *r, const struct slice *pattern, bool withcode) {
    reg_function_list(r, pattern, withcode);
}

void script_function_stats_engines(struct reply *r) {
    reg_function_stats_engines(r);
}

void script_function_foreach(void (*fn)(void *arg, struct slice name, struct slice code), void *arg) {
    reg_function_foreach(fn, arg);
}

bool script_function_restore(struct script_engine *e, const struct slice *codes, size_t n,
                             enum script_restore_policy policy, struct rbuf *err) {
    struct reg_lib_def *defs = rk_calloc(n ? n : 1, sizeof(*defs));
    bool ok = false;
    size_t done = 0;
    for (; done < n; done++) {
        struct slice code = codes[done];
        char *name, *engine;
        size_t body_off;
        if (!script_parse_library_meta(code.ptr, code.len, &name, &engine, &body_off, err)) goto out;
        bool good = false;
        struct load ld = { 0 };
        if (!script_name_ok(name, strlen(name))) {
            script_err_setf(err, "ERR %s", NAME_ERR);
        } else if (strcasecmp(engine, "lua") != 0) {
            script_err_setf(err, "ERR Engine '%s' not found", engine);
        } else {
            bool dup = false;
            for (size_t k = 0; k < done && !dup; k++) dup = strcmp(defs[k].name, name) == 0;
            if (dup)
                script_err_setf(err, "ERR Library '%s' already exists", name);
            else
                good = lib_load(e, code.ptr + body_off, code.len - body_off, 0, false, &ld, err);
        }
        if (good && ld.nfns == 0) {
            script_err_set(err, "ERR No functions registered");
            good = false;
        }
        /* functions of the libraries restored together may not collide */
        for (int i = 0; good && i < ld.nfns; i++) {
            for (size_t k = 0; k < done && good; k++) {
                for (int j = 0; j < defs[k].nfns && good; j++) {
                    if (strcasecmp(defs[k].fns[j].name, ld.fns[i].name) == 0) {
                        script_err_setf(err, "ERR Function %s already exists", ld.fns[i].name);
                        good = false;
                    }
                }
            }
        }
        if (good) {
            defs[done].name = name;
            name = NULL;
            defs[done].code = rk_malloc(code.len + 1);
            memcpy(defs[done].code, code.ptr, code.len);
            defs[done].code[code.len] = '\0';
            defs[done].code_len = code.len;
            defs[done].body_off = body_off;
            defs[done].fns = copy_fns(&ld);
            defs[done].nfns = ld.nfns;
        }
        if (e->fn) load_free(e->fn->L, &ld);
        free(name);
        free(engine);
        if (!good) goto out;
    }
    ok = reg_lib_restore(defs, n, policy, err);
out:
    for (size_t k = 0; k < n; k++) reg_lib_def_free(&defs[k]);
    free(defs);
    return ok;
}

void script_stats(struct script_stats *s) {
    reg_stats(s);
}
