/*
 * sandbox.c -- the Lua states of an engine: Redis 7.0's environment on
 * Debian's stock Lua 5.1.
 *
 * Redis patches Lua with read-only tables and locks every table reachable
 * from the globals. Stock Lua has no such flag, so here every shared table
 * is reached only through a proxy: an empty table whose metatable reads from
 * the real one (__index) and refuses writes (__newindex: "Attempt to modify
 * a readonly table"). The real tables hold proxies of their subtables, so
 * scripts never get hold of a real table:
 *
 *   globals a script sees   P_G (EVAL) / P_F (functions): proxies of G
 *   G (real globals)        string, table, math, coroutine, cjson, bit,
 *                           struct, cmsgpack, redis: proxies; the base
 *                           functions; metatable {__index = error}
 *                           ("Script attempted to access nonexistent
 *                           global variable 'x'"); KEYS/ARGV (EVAL)
 *
 * The functions that could reach past a proxy are replaced: setmetatable
 * and rawset refuse proxies, table.insert too; getmetatable shows a
 * read-only copy of what Redis would show; rawget, next, pairs, ipairs and
 * unpack read through proxies. The strings' metatable shows a proxy
 * (__metatable), so the string library cannot be changed through "".
 *
 * Removed as in Redis: print, dofile, loadfile, and the os, io, debug and
 * package libraries (never opened). loadstring/load refuse bytecode (the
 * text is parsed as source, as Redis's patched parser does, so a binary
 * chunk is a syntax error) and parse with the collector stopped (the parser
 * use-after-free of CVE-2025-49844). unpack checks its range without
 * overflow (CVE-2025-46817). pcall is Redis's: an error table comes back as
 * its "err" string.
 *
 * Functions (FUNCTION LOAD) have their own state: while a library loads,
 * its globals show only the load API (redis.register_function, redis.log,
 * the LOG_ levels, the version); at run time the full API. Each C function
 * finds its engine through the allocator's userdata (lua_getallocf).
 */
#include "engine.h"
#include "ringkv/log.h"

#include <lauxlib.h>
#include <lualib.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

static const char RO_ERROR[] = "Attempt to modify a readonly table";

static _Atomic bool deprecated_api;

void script_set_deprecated_api(bool on) {
    atomic_store(&deprecated_api, on);
}

bool sandbox_deprecated_api(void) {
    return atomic_load(&deprecated_api);
}

struct lstate *lstate_of(lua_State *L) {
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

static void *l_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    struct lstate *ls = ud;
    if (nsize == 0) {
        free(ptr);
        ls->mem -= osize;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p) return NULL;   /* Lua raises "not enough memory" */
    ls->mem = ls->mem - osize + nsize;
    return p;
}

/* ---- proxies ------------------------------------------------------------------- */

/* If the value at idx is a proxy, push its real table and return true. */
bool proxy_target(lua_State *L, struct lstate *ls, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return false;
    lua_pop(L, 1);
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_proxies);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 2);
        return false;
    }
    lua_remove(L, -2);
    return true;
}

static int l_ro_newindex(lua_State *L) {
    return luaL_error(L, RO_ERROR);
}

/* Raised from inside a C function, without a position, as Redis's patched
 * lua_rawset/lua_setmetatable do. */
static int ro_error_here(lua_State *L) {
    lua_pushstring(L, RO_ERROR);
    return lua_error(L);
}

/* Push a new proxy of the table at idx and register it. */
static void push_proxy(lua_State *L, struct lstate *ls, int idx) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    lua_newtable(L);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_ro_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_proxies);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, idx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Replace every table value of the table at idx by a proxy, depth first,
 * each real table getting one proxy (seen: real -> proxy, at seen_idx). */
static void proxify_fields(lua_State *L, struct lstate *ls, int idx, int seen_idx) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -1);
        lua_rawget(L, seen_idx);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            int t = lua_gettop(L);
            push_proxy(L, ls, t);          /* key value proxy */
            lua_pushvalue(L, t);
            lua_pushvalue(L, -2);
            lua_rawset(L, seen_idx);       /* seen[value] = proxy */
            proxify_fields(L, ls, t, seen_idx);
        }
        /* key value proxy */
        lua_pushvalue(L, -3);
        lua_insert(L, -2);                 /* key value key proxy */
        lua_rawset(L, idx);                /* idx[key] = proxy */
        lua_pop(L, 1);
    }
}

/* ---- replaced base functions ------------------------------------------------------ */

static int l_getmetatable(lua_State *L) {
    struct lstate *ls = lstate_of(L);
    luaL_checkany(L, 1);
    if (proxy_target(L, ls, 1)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_vismeta);
        lua_pushvalue(L, 1);
        lua_rawget(L, -2);
        return 1;   /* nil unless Redis shows a metatable there */
    }
    if (!lua_getmetatable(L, 1)) {
        lua_pushnil(L);
        return 1;
    }
    luaL_getmetafield(L, 1, "__metatable");
    return 1;
}

static int l_setmetatable(lua_State *L) {
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
    if (luaL_getmetafield(L, 1, "__metatable")) luaL_error(L, "cannot change a protected metatable");
    if (proxy_target(L, lstate_of(L), 1)) return ro_error_here(L);
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

static int l_rawset(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (proxy_target(L, lstate_of(L), 1)) return ro_error_here(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int l_rawget(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    if (proxy_target(L, lstate_of(L), 1)) lua_replace(L, 1);
    lua_rawget(L, 1);
    return 1;
}

/* next over a proxy: the real table's keys. */
static int l_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    if (proxy_target(L, lstate_of(L), 1)) lua_replace(L, 1);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

/* pairs: Lua's own next for plain tables (no cost in the loop), ours for proxies. */
static int l_pairs(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (proxy_target(L, lstate_of(L), 1)) {
        lua_pop(L, 1);
        lua_pushvalue(L, lua_upvalueindex(2));
    } else {
        lua_pushvalue(L, lua_upvalueindex(1));
    }
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int l_ipairs_proxy_aux(lua_State *L) {
    int i = luaL_checkint(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (proxy_target(L, lstate_of(L), 1)) lua_replace(L, 1);
    i++;
    lua_pushinteger(L, i);
    lua_rawgeti(L, 1, i);
    return lua_isnil(L, -1) ? 0 : 2;
}

static int l_ipairs(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (proxy_target(L, lstate_of(L), 1)) {
        lua_pop(L, 1);
        lua_pushcfunction(L, l_ipairs_proxy_aux);
    } else {
        lua_pushvalue(L, lua_upvalueindex(1));   /* Lua's own iterator */
    }
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

/* unpack with the range computed without int overflow. */
static int l_unpack(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (proxy_target(L, lstate_of(L), 1)) lua_replace(L, 1);
    int i = luaL_optint(L, 2, 1);
    int e = luaL_opt(L, luaL_checkint, 3, (int)lua_objlen(L, 1));
    if (i > e) return 0;
    long long n = (long long)e - i + 1;
    if (n >= INT_MAX || !lua_checkstack(L, (int)n)) return luaL_error(L, "too many results to unpack");
    for (long long k = i; k <= e; k++) lua_rawgeti(L, 1, (int)k);
    return (int)n;
}

static int l_table_insert(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (proxy_target(L, lstate_of(L), 1)) return ro_error_here(L);
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, 0);
    return 0;
}

/* Stop the script if the host asked to (after a pcall that may have caught it). */
static void check_stop(lua_State *L) {
    struct script_engine *e = lstate_of(L)->e;
    if (e->run && e->run->stop) engine_raise_stop(L, e->run);
}

/* Redis's pcall: an error table comes back as its "err" string. */
static int l_pcall(lua_State *L) {
    luaL_checkany(L, 1);
    int argc = lua_gettop(L);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    int status = lua_pcall(L, argc - 1, LUA_MULTRET, 0);
    check_stop(L);
    if (status) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1)) lua_replace(L, -2);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

static int l_xpcall(lua_State *L) {
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    lua_insert(L, 1);   /* the handler under the function */
    int status = lua_pcall(L, 0, LUA_MULTRET, 1);
    check_stop(L);
    lua_pushboolean(L, status == 0);
    lua_replace(L, 1);
    return lua_gettop(L);
}

/* Source text, never bytecode: a leading space makes the parser see text
 * (as Redis's parser always does), and it shifts nothing (no columns in
 * Lua 5.1's messages). The collector is stopped while parsing. */
struct text_reader {
    const char *p;
    size_t len;
    int state;
};

static const char *text_read(lua_State *L, void *ud, size_t *size) {
    (void)L;
    struct text_reader *r = ud;
    if (r->state == 0) {
        r->state = 1;
        *size = 1;
        return " ";
    }
    if (r->state == 1 && r->len) {
        r->state = 2;
        *size = r->len;
        return r->p;
    }
    *size = 0;
    return NULL;
}

/* Past 1 GB of source, Lua 5.1's lexer computes lengths in int (the
 * long-bracket out-of-bounds read, CVE-2025-46819): such chunks are refused. */
#define MAX_CHUNK ((size_t)1 << 30)

int sandbox_load_text(lua_State *L, const char *p, size_t len, const char *chunkname) {
    if (len >= MAX_CHUNK) {
        lua_pushliteral(L, "chunk too large");
        return LUA_ERRSYNTAX;
    }
    struct text_reader r = { p, len, 0 };
    lua_gc(L, LUA_GCSTOP, 0);
    int status = lua_load(L, text_read, &r, chunkname);
    if (!lstate_of(L)->gc_stopped) lua_gc(L, LUA_GCRESTART, 0);
    return status;
}

static int load_result(lua_State *L, int status) {
    if (status == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

static int l_loadstring(lua_State *L) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *chunkname = luaL_optstring(L, 2, s);
    return load_result(L, sandbox_load_text(L, s, len, chunkname));
}

/* load(f [, name]): the pieces f returns, gathered first, then parsed as text. */
static int l_load(lua_State *L) {
    const char *chunkname = luaL_optstring(L, 2, "=(load)");
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 2);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            luaL_pushresult(&b);
            lua_pushnil(L);
            lua_pushliteral(L, "reader function must return a string");
            return 2;
        }
        size_t n;
        lua_tolstring(L, -1, &n);
        if (n == 0) {
            lua_pop(L, 1);
            break;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    return load_result(L, sandbox_load_text(L, s, len, chunkname));
}

/* collectgarbage, noting a "stop" so that the run's end restarts the
 * collector (a stopped collector would outlive the script). */
static int l_collectgarbage(lua_State *L) {
    const char *opt = luaL_optstring(L, 1, "collect");
    struct lstate *ls = lstate_of(L);
    if (strcmp(opt, "stop") == 0) ls->gc_stopped = true;
    if (strcmp(opt, "restart") == 0) ls->gc_stopped = false;
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
}

/* G's __index: Redis's luaProtectedTableError. */
static int l_global_error(lua_State *L) {
    if (lua_gettop(L) != 2) luaL_error(L, "Wrong number of arguments to luaProtectedTableError");
    if (!lua_isstring(L, -1) && !lua_isnumber(L, -1))
        luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, -1));
}

/* Give the table on top of the stack the "nonexistent global" metatable. */
static void set_error_metatable(lua_State *L) {
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, l_global_error);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
}

/* The error handler of runs (Redis's __redis__err__handler): a non-table
 * error becomes {err="ERR " .. tostring(e)}; where it happened (the Lua
 * caller when a C function raised it) is added as source and line. */
static bool is_wrapper_level(lua_State *L, int level) {
    lua_Debug ar;
    if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "f", &ar)) return false;
    lua_CFunction f = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    return f && (f == l_table_insert || script_is_guard(f));
}

static int l_error_handler(lua_State *L) {
    lua_settop(L, 1);
    lua_Debug ar;
    bool have = false;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar)) {
        have = true;
        if (strcmp(ar.what, "C") == 0) {
            /* the caller of the C function; our wrappers around a library
             * function do not count as callers */
            int level = 2;
            while (is_wrapper_level(L, level)) level++;
            have = lua_getstack(L, level, &ar) && lua_getinfo(L, "nSl", &ar);
        }
    }
    if (!lua_istable(L, 1)) {
        lua_newtable(L);
        lua_pushliteral(L, "err");
        lua_pushliteral(L, "ERR ");
        lua_pushvalue(L, lua_upvalueindex(1));   /* tostring */
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        lua_concat(L, 2);
        lua_rawset(L, -3);
        lua_replace(L, 1);
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, 1, "source");
        lua_pushinteger(L, ar.currentline);
        lua_setfield(L, 1, "line");
    }
    return 1;
}

/* ---- building a state ---------------------------------------------------------------- */

static void open_lib(lua_State *L, lua_CFunction f, const char *name) {
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

static void set_global_table(lua_State *L, lua_CFunction opener, const char *name) {
    lua_pushcfunction(L, opener);
    lua_call(L, 0, 1);
    lua_setglobal(L, name);
}

/* Replace G[name] by a C closure with the old value as its first upvalue. */
static void wrap_global(lua_State *L, int tbl, const char *name, lua_CFunction f) {
    lua_getfield(L, tbl, name);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, tbl, name);
}

static void set_cfunction(lua_State *L, int tbl, const char *name, lua_CFunction f) {
    lua_pushcfunction(L, f);
    lua_setfield(L, tbl, name);
}

static void set_number(lua_State *L, int tbl, const char *name, lua_Number n) {
    lua_pushnumber(L, n);
    lua_setfield(L, tbl, name);
}

static void add_log_and_version(lua_State *L, int tbl) {
    set_cfunction(L, tbl, "log", api_log);
    set_number(L, tbl, "LOG_DEBUG", SCRIPT_LOG_DEBUG);
    set_number(L, tbl, "LOG_VERBOSE", SCRIPT_LOG_VERBOSE);
    set_number(L, tbl, "LOG_NOTICE", SCRIPT_LOG_NOTICE);
    set_number(L, tbl, "LOG_WARNING", SCRIPT_LOG_WARNING);
    set_number(L, tbl, "REDIS_VERSION_NUM", SCRIPT_REDIS_VERSION_NUM);
    lua_pushliteral(L, SCRIPT_REDIS_VERSION);
    lua_setfield(L, tbl, "REDIS_VERSION");
}

static int ref_new_table(lua_State *L) {
    lua_newtable(L);
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

static int build_protected(lua_State *L) {
    struct lstate *ls = lua_touserdata(L, 1);
    lua_settop(L, 0);
    int G = LUA_GLOBALSINDEX;

    /* Libraries, into the state's first globals: they become G. */
    open_lib(L, luaopen_base, "");
    open_lib(L, luaopen_table, LUA_TABLIBNAME);
    open_lib(L, luaopen_string, LUA_STRLIBNAME);
    open_lib(L, luaopen_math, LUA_MATHLIBNAME);
    set_global_table(L, luaopen_rk_cjson, "cjson");
    set_global_table(L, luaopen_rk_struct, "struct");
    set_global_table(L, luaopen_rk_cmsgpack, "cmsgpack");
    set_global_table(L, luaopen_rk_bit, "bit");
    static const char *const removed[] = { "print", "dofile", "loadfile" };
    for (size_t i = 0; i < RK_ARRAY_LEN(removed); i++) {
        lua_pushnil(L);
        lua_setfield(L, G, removed[i]);
    }
    /* setfenv, getfenv and newproxy only with lua-enable-deprecated-api, as
     * Redis since its fix for CVE-2025-46818 */
    if (!sandbox_deprecated_api()) {
        static const char *const deprecated[] = { "setfenv", "getfenv", "newproxy" };
        for (size_t i = 0; i < RK_ARRAY_LEN(deprecated); i++) {
            lua_pushnil(L);
            lua_setfield(L, G, deprecated[i]);
        }
    }

    ls->ref_proxies = ref_new_table(L);
    ls->ref_vismeta = ref_new_table(L);

    /* Lua's own iterators, kept for plain tables */
    lua_getfield(L, G, "ipairs");
    lua_newtable(L);
    lua_call(L, 1, 1);          /* ipairs({}) -> iterator, {}, 0 */
    int ipairs_aux = lua_gettop(L);
    lua_getfield(L, G, "next");
    int lua_next_fn = lua_gettop(L);

    set_cfunction(L, G, "getmetatable", l_getmetatable);
    set_cfunction(L, G, "setmetatable", l_setmetatable);
    set_cfunction(L, G, "rawset", l_rawset);
    set_cfunction(L, G, "rawget", l_rawget);
    set_cfunction(L, G, "next", l_next);
    lua_pushvalue(L, lua_next_fn);
    lua_pushcfunction(L, l_next);
    lua_pushcclosure(L, l_pairs, 2);
    lua_setfield(L, G, "pairs");
    lua_pushvalue(L, ipairs_aux);
    lua_pushcclosure(L, l_ipairs, 1);
    lua_setfield(L, G, "ipairs");
    set_cfunction(L, G, "unpack", l_unpack);
    set_cfunction(L, G, "pcall", l_pcall);
    set_cfunction(L, G, "xpcall", l_xpcall);
    set_cfunction(L, G, "loadstring", l_loadstring);
    set_cfunction(L, G, "load", l_load);
    lua_settop(L, 0);
    wrap_global(L, G, "collectgarbage", l_collectgarbage);
    lua_getfield(L, G, "table");
    wrap_global(L, 1, "insert", l_table_insert);
    lua_pop(L, 1);

    /* math.random and math.randomseed: Redis's own generator */
    lua_getfield(L, G, "math");
    set_cfunction(L, 1, "random", api_math_random);
    set_cfunction(L, 1, "randomseed", api_math_randomseed);
    lua_pop(L, 1);

    /* the error handler */
    lua_getfield(L, G, "tostring");
    lua_pushcclosure(L, l_error_handler, 1);
    if (!ls->functions) {
        lua_pushvalue(L, -1);
        lua_setfield(L, G, "__redis__err__handler");
    }
    ls->ref_errh = luaL_ref(L, LUA_REGISTRYINDEX);

    /* redis.* */
    lua_newtable(L);
    int R = lua_gettop(L);
    set_cfunction(L, R, "call", api_call);
    set_cfunction(L, R, "pcall", api_pcall);
    add_log_and_version(L, R);
    set_cfunction(L, R, "setresp", api_setresp);
    set_cfunction(L, R, "sha1hex", api_sha1hex);
    set_cfunction(L, R, "error_reply", api_error_reply);
    set_cfunction(L, R, "status_reply", api_status_reply);
    set_cfunction(L, R, "set_repl", api_set_repl);
    set_number(L, R, "REPL_NONE", SCRIPT_REPL_NONE);
    set_number(L, R, "REPL_AOF", SCRIPT_REPL_AOF);
    set_number(L, R, "REPL_SLAVE", SCRIPT_REPL_REPLICA);
    set_number(L, R, "REPL_REPLICA", SCRIPT_REPL_REPLICA);
    set_number(L, R, "REPL_ALL", SCRIPT_REPL_ALL);
    set_cfunction(L, R, "acl_check_cmd", api_acl_check_cmd);
    if (!ls->functions) {   /* eval.c adds these; the functions engine does not */
        set_cfunction(L, R, "breakpoint", api_breakpoint);
        set_cfunction(L, R, "debug", api_debug);
        set_cfunction(L, R, "replicate_commands", api_replicate_commands);
    }
    lua_setfield(L, G, "redis");
    lua_settop(L, 0);

    /* G: the real globals */
    lua_pushvalue(L, G);
    int greal = lua_gettop(L);
    lua_newtable(L);
    int seen = lua_gettop(L);
    /* P_G, the proxy of G: what G._G (G itself) becomes */
    push_proxy(L, ls, greal);
    int pg = lua_gettop(L);
    lua_pushvalue(L, greal);
    lua_pushvalue(L, pg);
    lua_rawset(L, seen);
    proxify_fields(L, ls, greal, seen);
    lua_pushvalue(L, greal);
    set_error_metatable(L);
    lua_pop(L, 1);
    /* getmetatable(_G) shows Redis's read-only error metatable */
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_vismeta);
    lua_pushvalue(L, pg);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, l_global_error);
    lua_setfield(L, -2, "__index");
    push_proxy(L, ls, -1);
    lua_remove(L, -2);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    /* "": its metatable shows {__index = proxy of string} */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_createtable(L, 0, 1);
    lua_getfield(L, greal, "string");
    lua_setfield(L, -2, "__index");
    push_proxy(L, ls, -1);
    lua_remove(L, -2);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    lua_pushvalue(L, greal);
    ls->ref_greal = luaL_ref(L, LUA_REGISTRYINDEX);

    if (!ls->functions) {
        lua_pushvalue(L, pg);
        ls->ref_env = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
        /* the load API: globals {redis = {register_function, log, ...}} */
        lua_newtable(L);
        int lr = lua_gettop(L);
        set_cfunction(L, lr, "register_function", api_register_function);
        add_log_and_version(L, lr);
        set_error_metatable(L);
        lua_newtable(L);
        int la = lua_gettop(L);
        push_proxy(L, ls, lr);
        lua_setfield(L, la, "redis");
        set_error_metatable(L);
        ls->ref_loadapi = luaL_ref(L, LUA_REGISTRYINDEX);
        lua_settop(L, pg);
        /* P_F: reads G at run time, the load API while loading */
        lua_newtable(L);
        int pf = lua_gettop(L);
        lua_createtable(L, 0, 2);
        lua_pushvalue(L, greal);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, l_ro_newindex);
        lua_setfield(L, -2, "__newindex");
        lua_pushvalue(L, -1);
        ls->ref_fmeta = luaL_ref(L, LUA_REGISTRYINDEX);
        lua_setmetatable(L, pf);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_proxies);
        lua_pushvalue(L, pf);
        lua_pushvalue(L, greal);
        lua_rawset(L, -3);
        lua_pop(L, 1);
        /* getmetatable of these globals shows {__index = _G}, read-only */
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_vismeta);
        lua_pushvalue(L, pf);
        lua_createtable(L, 0, 1);
        lua_pushvalue(L, pg);
        lua_setfield(L, -2, "__index");
        push_proxy(L, ls, -1);
        lua_remove(L, -2);
        lua_rawset(L, -3);
        lua_pop(L, 1);
        lua_pushvalue(L, pf);
        ls->ref_env = luaL_ref(L, LUA_REGISTRYINDEX);
        ls->ref_fncache = ref_new_table(L);
    }
    lua_pushcfunction(L, engine_dispatch);
    ls->ref_dispatch = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "KEYS");
    ls->ref_keys = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "ARGV");
    ls->ref_argv = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, 0);
    sandbox_enter(L, ls);
    return 0;
}

void sandbox_enter(lua_State *L, struct lstate *ls) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->ref_env);
    lua_replace(L, LUA_GLOBALSINDEX);
}

struct lstate *lstate_new(struct script_engine *e, bool functions) {
    struct lstate *ls = rk_calloc(1, sizeof(*ls));
    ls->e = e;
    ls->functions = functions;
    ls->ref_loadfns = LUA_NOREF;
    ls->L = lua_newstate(l_alloc, ls);
    if (!ls->L || lua_cpcall(ls->L, build_protected, ls) != 0) {
        rk_log_fatal("Out Of Memory creating a Lua state!");
        abort();
    }
    return ls;
}

static int full_gc(lua_State *L) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    return 0;
}

void lstate_free(struct lstate *ls) {
    if (!ls) return;
    /* collect before closing, as Redis's fix for CVE-2024-46981 (finalizers
     * run while everything they may use is still there) */
    lua_cpcall(ls->L, full_gc, NULL);
    lua_close(ls->L);
    free(ls);
}
