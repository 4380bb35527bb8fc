/*
 * lua_libs.c -- Debian's cjson (lua-cjson 2.1.0) and bit (LuaBitOp 1.0.2),
 * linked from their static archives, with guards for the bugs Redis fixed
 * in its own copies:
 *
 *  - cjson.encode (CVE-2022-24834): the 2.1.0 string buffer counts in int
 *    and reserves 6 bytes per input byte, so a string over ~358 MB (or an
 *    output over 1 GB, or a sparse array of a billion nulls) overflows it or
 *    makes it exit() the process. The guard walks the value first, adding
 *    up what the encoder may reserve, and refuses past 1 GB; it also stops
 *    at cjson's default nesting limit (1000), which bounds that walk.
 *  - cjson.decode: the same int buffers, sized from the input: inputs of
 *    1 GB or more are refused.
 *  - cjson.new() hands out new instances: they get the same guards.
 *  - bit.tohex (CVE-2024-31449): a count of -2^31 makes it read far past a
 *    stack buffer; as Redis's fix, that count becomes -(2^31-1).
 *
 * Argument checks happen in the guards, so error messages keep the
 * function's name ("bad argument #1 to 'encode' ...").
 */
#include "script_internal.h"

#include <lauxlib.h>
#include <math.h>

int luaopen_cjson(lua_State *L);   /* Debian's liblua5.1-cjson.a */
int luaopen_bit(lua_State *L);     /* Debian's liblua5.1-bitop.a */

#define JSON_MAX_BYTES ((size_t)1 << 30)
#define JSON_MAX_DEPTH 1000

struct json_scan {
    lua_State *L;
    size_t bound;
    /* the instance's encode_sparse_array settings, read before the walk */
    bool sparse_convert;
    lua_Number sparse_ratio, sparse_safe;
};

static void scan_add(struct json_scan *s, size_t n) {
    if (n > JSON_MAX_BYTES || s->bound > JSON_MAX_BYTES - n)
        luaL_error(s->L, "Cannot serialise: encoded JSON would exceed %d bytes", (int)JSON_MAX_BYTES);
    s->bound += n;
}

/* What encoding the value on top of the stack may reserve; pops it. */
static void json_scan(struct json_scan *s, int depth) {
    lua_State *L = s->L;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len = lua_objlen(L, -1);
        if (len > JSON_MAX_BYTES / 6) scan_add(s, JSON_MAX_BYTES + 1);
        scan_add(s, len * 6 + 2);
        break;
    }
    case LUA_TNUMBER:
        scan_add(s, 34);   /* a number, quoted when a key */
        break;
    case LUA_TTABLE: {
        if (depth + 1 > JSON_MAX_DEPTH || !lua_checkstack(L, 3))
            luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth + 1);
        scan_add(s, 2);
        bool array = true;
        lua_Number max = 0, items = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (lua_type(L, -2) == LUA_TNUMBER) {
                lua_Number k = lua_tonumber(L, -2);
                if (k >= 1 && k == floor(k)) {
                    if (k > max) max = k;
                    items++;
                } else {
                    array = false;
                }
            } else {
                array = false;
            }
            scan_add(s, 2);
            json_scan(s, depth + 1);   /* value */
            lua_pushvalue(L, -1);
            json_scan(s, depth + 1);   /* key */
        }
        /* an array is written up to its largest index, holes as null,
         * unless cjson finds it too sparse (then an object, or an error) */
        bool sparse = s->sparse_ratio > 0 && max > items * s->sparse_ratio && max > s->sparse_safe;
        if (array && max > 0 && !sparse) {
            if (max > (lua_Number)(JSON_MAX_BYTES / 5)) scan_add(s, JSON_MAX_BYTES + 1);
            scan_add(s, (size_t)max * 5);
        }
        break;
    }
    default:
        scan_add(s, 5);   /* true, false, null; other types are refused by cjson */
    }
    lua_pop(L, 1);
}

/* Call the original (upvalue 1) with the arguments; a string error gets the
 * position of the script's line, as when the script calls it directly
 * (luaL_error's level 1 is our guard, a C function: no position). */
static int call_original(lua_State *L, int nresults) {
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    if (lua_pcall(L, n, nresults, 0) != 0) {
        if (lua_type(L, -1) == LUA_TSTRING) {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    return lua_gettop(L);
}

static int json_encode_guard(lua_State *L) {
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    struct json_scan s = { L, 0, false, 2, 10 };
    /* encode_sparse_array() without arguments answers convert, ratio, safe */
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_call(L, 0, 3);
    s.sparse_convert = lua_toboolean(L, -3);
    s.sparse_ratio = lua_tonumber(L, -2);
    s.sparse_safe = lua_tonumber(L, -1);
    lua_settop(L, 1);
    lua_pushvalue(L, 1);
    json_scan(&s, 0);
    return call_original(L, 1);
}

static int json_decode_guard(lua_State *L) {
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    size_t len;
    luaL_checklstring(L, 1, &len);
    if (len >= JSON_MAX_BYTES - 64) return luaL_error(L, "Cannot decode: JSON text of %d bytes or more", (int)JSON_MAX_BYTES);
    return call_original(L, 1);
}

static void json_guard_table(lua_State *L);

static int json_new_guard(lua_State *L) {
    lua_settop(L, 0);
    call_original(L, 1);
    json_guard_table(L);
    return 1;
}

/* Wrap encode, decode and new of the cjson table on top of the stack. */
static void json_guard_table(lua_State *L) {
    static const struct {
        const char *name;
        lua_CFunction guard;
    } g[] = { { "encode", json_encode_guard }, { "decode", json_decode_guard }, { "new", json_new_guard } };
    for (size_t i = 0; i < RK_ARRAY_LEN(g); i++) {
        lua_getfield(L, -1, g[i].name);
        int n = 1;
        if (g[i].guard == json_encode_guard) {
            lua_getfield(L, -2, "encode_sparse_array");
            n = 2;
        }
        lua_pushcclosure(L, g[i].guard, n);
        lua_setfield(L, -2, g[i].name);
    }
}

int luaopen_rk_cjson(lua_State *L) {
    lua_pushcfunction(L, luaopen_cjson);
    lua_call(L, 0, 1);
    json_guard_table(L);
    return 1;
}

/* LuaBitOp reads a number's low 32 bits this way (barg). */
static int32_t bit_arg(lua_Number n) {
    union {
        lua_Number n;
        uint64_t b;
    } u;
    u.n = n + 6755399441055744.0;   /* 2^52 + 2^51 */
    return (int32_t)(uint32_t)u.b;
}

static int bit_tohex_guard(lua_State *L) {
    luaL_checknumber(L, 1);
    if (!lua_isnoneornil(L, 2) && bit_arg(luaL_checknumber(L, 2)) == INT32_MIN) {
        lua_pushnumber(L, -2147483647.0);
        lua_replace(L, 2);
    }
    return call_original(L, 1);
}

int luaopen_rk_bit(lua_State *L) {
    lua_pushcfunction(L, luaopen_bit);
    lua_pushliteral(L, "bit");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "tohex");
    lua_pushcclosure(L, bit_tohex_guard, 1);
    lua_setfield(L, -2, "tohex");
    return 1;
}

bool script_is_guard(lua_CFunction f) {
    return f == json_encode_guard || f == json_decode_guard || f == json_new_guard || f == bit_tohex_guard;
}

