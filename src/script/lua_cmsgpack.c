/*
 * lua_cmsgpack.c -- the cmsgpack library of Redis's scripts (MessagePack),
 * written for ringkv with the behaviour of the lua-cmsgpack 0.4.0 that
 * Redis 7.0 ships:
 *
 *   cmsgpack.pack(v1, ...)                  all values, one string
 *   cmsgpack.unpack(s)                      every value in s
 *   cmsgpack.unpack_one(s [, offset])       next offset (-1 at the end), value
 *   cmsgpack.unpack_limit(s, n [, offset])  next offset, up to n values
 *
 * Encoding: integral numbers in int64 range as the smallest integer form,
 * other numbers as float 32 when exact else float 64; strings as fixstr /
 * str8 / str16 / str32; a table whose keys are exactly 1..n as an array,
 * any other table as a map (lua_next order); tables nested 16 deep and
 * values of other types as nil. Decoding accepts those forms (bin and ext
 * types are "Bad data format"); a uint64 above INT64_MAX comes back
 * negative, as in Redis.
 *
 * Safety: the output buffer is a Lua userdata kept in a stack slot (grown
 * by replacing it), so an error anywhere leaks nothing; every read checks
 * the bytes left; decoding recursion takes Lua stack slots through
 * luaL_checkstack, which bounds it (~4000 levels) with an error instead of
 * a crash.
 */
#include "script_internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <lauxlib.h>

#define MP_MAX_NESTING 16

/* ---- output buffer -------------------------------------------------------- */

struct mpbuf {
    lua_State *L;
    int slot;               /* stack index holding the current userdata */
    unsigned char *p;
    size_t len, cap;
};

static void mp_reserve(struct mpbuf *b, size_t need) {
    if (b->cap - b->len >= need) return;
    if (need > SIZE_MAX / 4 - b->len) luaL_error(b->L, "MessagePack output too large");
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap - b->len < need) ncap *= 2;
    unsigned char *np = lua_newuserdata(b->L, ncap);
    if (b->len) memcpy(np, b->p, b->len);
    lua_replace(b->L, b->slot);
    b->p = np;
    b->cap = ncap;
}

static void mp_put(struct mpbuf *b, const void *s, size_t n) {
    mp_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void put_be(unsigned char *dst, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) {
        dst[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

static void mp_head(struct mpbuf *b, unsigned char tag, uint64_t v, int bytes) {
    unsigned char h[9];
    h[0] = tag;
    put_be(h + 1, v, bytes);
    mp_put(b, h, (size_t)bytes + 1);
}

/* ---- encoding ------------------------------------------------------------------ */

static void enc_bytes(struct mpbuf *b, const char *s, size_t len) {
    if (len < 32) {
        unsigned char h = (unsigned char)(0xa0 | len);
        mp_put(b, &h, 1);
    } else if (len <= 0xff) {
        mp_head(b, 0xd9, len, 1);
    } else if (len <= 0xffff) {
        mp_head(b, 0xda, len, 2);
    } else {
        mp_head(b, 0xdb, len & 0xffffffffu, 4);
    }
    mp_put(b, s, len);
}

static void enc_int(struct mpbuf *b, int64_t n) {
    if (n >= 0) {
        if (n <= 127) {
            unsigned char c = (unsigned char)n;
            mp_put(b, &c, 1);
        } else if (n <= 0xff) {
            mp_head(b, 0xcc, (uint64_t)n, 1);
        } else if (n <= 0xffff) {
            mp_head(b, 0xcd, (uint64_t)n, 2);
        } else if (n <= 0xffffffffLL) {
            mp_head(b, 0xce, (uint64_t)n, 4);
        } else {
            mp_head(b, 0xcf, (uint64_t)n, 8);
        }
    } else {
        if (n >= -32) {
            unsigned char c = (unsigned char)(int8_t)n;
            mp_put(b, &c, 1);
        } else if (n >= -128) {
            mp_head(b, 0xd0, (uint64_t)n & 0xff, 1);
        } else if (n >= -32768) {
            mp_head(b, 0xd1, (uint64_t)n & 0xffff, 2);
        } else if (n >= -2147483648LL) {
            mp_head(b, 0xd2, (uint64_t)n & 0xffffffffu, 4);
        } else {
            mp_head(b, 0xd3, (uint64_t)n, 8);
        }
    }
}

static void enc_double(struct mpbuf *b, double d) {
    bool as_float;
    if (isnan(d))
        as_float = false;            /* NaN != NaN: never equal to its float */
    else if (isinf(d))
        as_float = true;
    else
        as_float = fabs(d) <= FLT_MAX && (double)(float)d == d;
    if (as_float) {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        mp_head(b, 0xca, u, 4);
    } else {
        uint64_t u;
        memcpy(&u, &d, 8);
        mp_head(b, 0xcb, u, 8);
    }
}

static void enc_number(struct mpbuf *b, lua_Number n) {
    if (!isnan(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 && (lua_Number)(int64_t)n == n)
        enc_int(b, (int64_t)n);
    else
        enc_double(b, n);
}

static void enc_value(struct mpbuf *b, int level);

/* Keys exactly 1..n (positive integral numbers, no hole): an array. */
static bool table_is_array(lua_State *L) {
    int top = lua_gettop(L);
    long long count = 0, max = 0;
    luaL_checkstack(L, 2, "in function table_is_an_array");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) goto no;
        lua_Number n = lua_tonumber(L, -1);
        if (!(n > 0 && n <= INT_MAX && n == floor(n))) goto no;
        if ((long long)n > max) max = (long long)n;
        count++;
    }
    lua_settop(L, top);
    return max == count;
no:
    lua_settop(L, top);
    return false;
}

static void enc_table(struct mpbuf *b, int level) {
    lua_State *L = b->L;
    if (table_is_array(L)) {
        size_t len = lua_objlen(L, -1);
        if (len <= 15) {
            unsigned char c = (unsigned char)(0x90 | len);
            mp_put(b, &c, 1);
        } else if (len <= 0xffff) {
            mp_head(b, 0xdc, len, 2);
        } else {
            mp_head(b, 0xdd, len & 0xffffffffu, 4);
        }
        luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
        for (size_t j = 1; j <= len; j++) {
            lua_rawgeti(L, -1, (int)j);
            enc_value(b, level + 1);
        }
        return;
    }
    size_t len = 0;
    luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        len++;
    }
    if (len <= 15) {
        unsigned char c = (unsigned char)(0x80 | len);
        mp_put(b, &c, 1);
    } else if (len <= 0xffff) {
        mp_head(b, 0xde, len, 2);
    } else {
        mp_head(b, 0xdf, len & 0xffffffffu, 4);
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);     /* key value key */
        enc_value(b, level + 1);  /* key */
        enc_value(b, level + 1);  /* value */
    }
}

/* Encode the value on top of the stack and pop it. */
static void enc_value(struct mpbuf *b, int level) {
    lua_State *L = b->L;
    int t = lua_type(L, -1);
    if (t == LUA_TTABLE && level == MP_MAX_NESTING) t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        enc_bytes(b, s, len);
        break;
    }
    case LUA_TBOOLEAN: {
        unsigned char c = lua_toboolean(L, -1) ? 0xc3 : 0xc2;
        mp_put(b, &c, 1);
        break;
    }
    case LUA_TNUMBER:
        enc_number(b, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        enc_table(b, level);
        break;
    default: {
        unsigned char c = 0xc0;
        mp_put(b, &c, 1);
        break;
    }
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L) {
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs + 4)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    lua_pushnil(L);   /* the buffer's slot */
    struct mpbuf b = { L, nargs + 1, NULL, 0, 0 };
    for (int i = 1; i <= nargs; i++) {
        luaL_checkstack(L, 1, "in function mp_check");
        lua_pushvalue(L, i);
        enc_value(&b, 0);
        lua_pushlstring(L, (const char *)b.p, b.len);
        b.len = 0;
    }
    lua_concat(L, nargs);
    return 1;
}

/* ---- decoding ------------------------------------------------------------------- */

enum { CUR_OK, CUR_EOF, CUR_BADFMT };

struct mpcur {
    const unsigned char *p;
    size_t left;
    int err;
};

static uint64_t get_be(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | p[i];
    return v;
}

static void dec_value(lua_State *L, struct mpcur *c);

static void dec_array(lua_State *L, struct mpcur *c, size_t len) {
    size_t pre = len < c->left ? len : c->left;   /* each element takes a byte at least */
    lua_createtable(L, (int)(pre < 4096 ? pre : 4096), 0);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (size_t i = 1; i <= len; i++) {
        lua_pushnumber(L, (lua_Number)i);
        dec_value(L, c);
        if (c->err) return;
        lua_settable(L, -3);
    }
}

static void dec_map(lua_State *L, struct mpcur *c, size_t len) {
    lua_newtable(L);
    for (size_t i = 0; i < len; i++) {
        dec_value(L, c);   /* key */
        if (c->err) return;
        dec_value(L, c);   /* value */
        if (c->err) return;
        lua_settable(L, -3);
    }
}

#define NEED(n)                       \
    do {                              \
        if (c->left < (n)) {          \
            c->err = CUR_EOF;         \
            return;                   \
        }                             \
    } while (0)
#define EAT(n)              \
    do {                    \
        c->p += (n);        \
        c->left -= (n);     \
    } while (0)

static void dec_str(lua_State *L, struct mpcur *c, int lenbytes) {
    NEED((size_t)lenbytes + 1);
    size_t l = (size_t)get_be(c->p + 1, lenbytes);
    EAT((size_t)lenbytes + 1);
    NEED(l);
    lua_pushlstring(L, (const char *)c->p, l);
    EAT(l);
}

static void dec_value(lua_State *L, struct mpcur *c) {
    NEED(1);
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    unsigned char t = c->p[0];
    switch (t) {
    case 0xc0: lua_pushnil(L); EAT(1); return;
    case 0xc2: lua_pushboolean(L, 0); EAT(1); return;
    case 0xc3: lua_pushboolean(L, 1); EAT(1); return;
    case 0xcc: NEED(2); lua_pushnumber(L, c->p[1]); EAT(2); return;
    case 0xcd: NEED(3); lua_pushnumber(L, (lua_Number)get_be(c->p + 1, 2)); EAT(3); return;
    case 0xce: NEED(5); lua_pushnumber(L, (lua_Number)get_be(c->p + 1, 4)); EAT(5); return;
    case 0xcf: NEED(9); lua_pushnumber(L, (lua_Number)(int64_t)get_be(c->p + 1, 8)); EAT(9); return;
    case 0xd0: NEED(2); lua_pushnumber(L, (int8_t)c->p[1]); EAT(2); return;
    case 0xd1: NEED(3); lua_pushnumber(L, (int16_t)get_be(c->p + 1, 2)); EAT(3); return;
    case 0xd2: NEED(5); lua_pushnumber(L, (int32_t)get_be(c->p + 1, 4)); EAT(5); return;
    case 0xd3: NEED(9); lua_pushnumber(L, (lua_Number)(int64_t)get_be(c->p + 1, 8)); EAT(9); return;
    case 0xca: {
        NEED(5);
        uint32_t u = (uint32_t)get_be(c->p + 1, 4);
        float f;
        memcpy(&f, &u, 4);
        lua_pushnumber(L, f);
        EAT(5);
        return;
    }
    case 0xcb: {
        NEED(9);
        uint64_t u = get_be(c->p + 1, 8);
        double d;
        memcpy(&d, &u, 8);
        lua_pushnumber(L, d);
        EAT(9);
        return;
    }
    case 0xd9: dec_str(L, c, 1); return;
    case 0xda: dec_str(L, c, 2); return;
    case 0xdb: dec_str(L, c, 4); return;
    case 0xdc: { NEED(3); size_t l = (size_t)get_be(c->p + 1, 2); EAT(3); dec_array(L, c, l); return; }
    case 0xdd: { NEED(5); size_t l = (size_t)get_be(c->p + 1, 4); EAT(5); dec_array(L, c, l); return; }
    case 0xde: { NEED(3); size_t l = (size_t)get_be(c->p + 1, 2); EAT(3); dec_map(L, c, l); return; }
    case 0xdf: { NEED(5); size_t l = (size_t)get_be(c->p + 1, 4); EAT(5); dec_map(L, c, l); return; }
    default:
        break;
    }
    if ((t & 0x80) == 0) {                 /* positive fixint */
        lua_pushnumber(L, t);
        EAT(1);
    } else if ((t & 0xe0) == 0xe0) {       /* negative fixint */
        lua_pushnumber(L, (int8_t)t);
        EAT(1);
    } else if ((t & 0xe0) == 0xa0) {       /* fixstr */
        size_t l = t & 0x1f;
        NEED(1 + l);
        lua_pushlstring(L, (const char *)c->p + 1, l);
        EAT(1 + l);
    } else if ((t & 0xf0) == 0x90) {       /* fixarray */
        EAT(1);
        dec_array(L, c, t & 0xf);
    } else if ((t & 0xf0) == 0x80) {       /* fixmap */
        EAT(1);
        dec_map(L, c, t & 0xf);
    } else {
        c->err = CUR_BADFMT;
    }
}

static int unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    bool all = !limit && !offset;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset, (int)len);
    if (all) limit = INT_MAX;
    struct mpcur c = { (const unsigned char *)s + offset, len - (size_t)offset, CUR_OK };
    int cnt;
    for (cnt = 0; c.left > 0 && cnt < limit; cnt++) {
        dec_value(L, &c);
        if (c.err == CUR_EOF) return luaL_error(L, "Missing bytes in input.");
        if (c.err == CUR_BADFMT) return luaL_error(L, "Bad data format in input.");
    }
    if (!all) {
        luaL_checkstack(L, 1, "in function mp_unpack_full");
        lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
        lua_insert(L, 2);
        cnt++;
    }
    return cnt;
}

static int mp_unpack(lua_State *L) {
    return unpack_full(L, 0, 0);
}

static int mp_unpack_one(lua_State *L) {
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L) {
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

int luaopen_rk_cmsgpack(lua_State *L) {
    static const luaL_Reg fns[] = {
        { "pack", mp_pack },
        { "unpack", mp_unpack },
        { "unpack_one", mp_unpack_one },
        { "unpack_limit", mp_unpack_limit },
    };
    lua_newtable(L);
    for (size_t i = 0; i < RK_ARRAY_LEN(fns); i++) {
        lua_pushcfunction(L, fns[i].func);
        lua_setfield(L, -2, fns[i].name);
    }
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
