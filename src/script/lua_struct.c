/*
 * lua_struct.c -- the struct library of Redis's scripts (binary packing),
 * written for ringkv with the behaviour of the struct library Redis 7.0
 * ships (Roberto Ierusalimschy's, with Redis's security fixes):
 *
 *   struct.pack(fmt, v1, ...)      -> string
 *   struct.unpack(fmt, s [, i])    -> v1, ..., next position
 *   struct.size(fmt)               -> bytes
 *
 * Format: '>' big endian, '<' little endian, '!n' max alignment n (a power
 * of 2, default 8), ' ' ignored; 'b'/'B' char, 'h'/'H' short, 'l'/'L' long,
 * 'T' size_t, 'in'/'In' integer of n bytes (default 4, at most 32), 'f'
 * float, 'd' double, 'x' a zero byte, 'cn' n chars (c0: the whole string
 * when packing, the length from the previous value when unpacking), 's' a
 * zero-terminated string. Lower case is signed.
 *
 * Every read is bounds-checked ("data string too short"), numbers that do
 * not fit convert the way x86 does in Redis (never undefined behaviour),
 * sizes and alignments are checked before use.
 */
#include "script_internal.h"

#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <lauxlib.h>

#define MAXINTSIZE 32
#define MAXALIGN 8   /* alignment of double on x86-64, as the original computes it */

enum { BIG = 0, LITTLE = 1 };
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NATIVE BIG
#else
#define NATIVE LITTLE
#endif

struct header {
    int endian;
    int align;
};

static int getnum(lua_State *L, const char **fmt, int df) {
    if (!isdigit((unsigned char)**fmt)) return df;
    int a = 0;
    do {
        int d = **fmt - '0';
        if (a > INT_MAX / 10 || a * 10 > INT_MAX - d) luaL_error(L, "integral size overflow");
        a = a * 10 + d;
        (*fmt)++;
    } while (isdigit((unsigned char)**fmt));
    return a;
}

static size_t optsize(lua_State *L, int opt, const char **fmt) {
    switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return sizeof(short);
    case 'L': case 'l': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)getnum(L, fmt, 1);
    case 'i': case 'I': {
        int sz = getnum(L, fmt, sizeof(int));
        if (sz > MAXINTSIZE) luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        return (size_t)sz;
    }
    default: return 0;
    }
}

static size_t gettoalign(size_t len, const struct header *h, int opt, size_t size) {
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)h->align) size = (size_t)h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

static void controloptions(lua_State *L, int opt, const char **fmt, struct header *h) {
    switch (opt) {
    case ' ': return;
    case '>': h->endian = BIG; return;
    case '<': h->endian = LITTLE; return;
    case '!': {
        int a = getnum(L, fmt, MAXALIGN);
        if (!(a > 0 && (a & (a - 1)) == 0)) luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

/* A Lua number as the 64-bit pattern a C cast gives on x86 (no UB here). */
static uint64_t number_bits(lua_Number n) {
    if (isnan(n)) return 0x8000000000000000ULL;
    if (n < 0) {
        if (n < -9223372036854775808.0) return 0x8000000000000000ULL;
        return (uint64_t)(int64_t)n;
    }
    if (n >= 18446744073709551616.0) return 0;
    if (n >= 9223372036854775808.0) return (uint64_t)(int64_t)(n - 9223372036854775808.0) ^ 0x8000000000000000ULL;
    return (uint64_t)n;
}

static void putinteger(lua_State *L, luaL_Buffer *b, int arg, int endian, size_t size) {
    uint64_t value = number_bits(luaL_checknumber(L, arg));
    char buf[MAXINTSIZE];
    if (endian == LITTLE) {
        for (size_t i = 0; i < size; i++) {
            buf[i] = (char)(value & 0xff);
            value >>= 8;
        }
    } else {
        for (size_t i = size; i-- > 0;) {
            buf[i] = (char)(value & 0xff);
            value >>= 8;
        }
    }
    luaL_addlstring(b, buf, size);
}

static void correctbytes(char *p, size_t size, int endian) {
    if (endian == NATIVE) return;
    for (size_t i = 0, j = size - 1; i < j; i++, j--) {
        char t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

static int b_pack(lua_State *L) {
    luaL_Buffer b;
    const char *fmt = luaL_checkstring(L, 1);
    struct header h = { NATIVE, 1 };
    int arg = 2;
    size_t totalsize = 0;
    lua_pushnil(L);   /* separates the arguments from the buffer's pieces */
    luaL_buffinit(L, &b);
    while (*fmt != '\0') {
        int opt = (unsigned char)*fmt++;
        size_t size = optsize(L, opt, &fmt);
        size_t toalign = gettoalign(totalsize, &h, opt, size);
        totalsize += toalign;
        while (toalign-- > 0) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H':
        case 'l': case 'L': case 'T': case 'i': case 'I':
            putinteger(L, &b, arg++, h.endian, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            lua_Number d = luaL_checknumber(L, arg++);
            float f = d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
            correctbytes((char *)&f, sizeof(f), h.endian);
            luaL_addlstring(&b, (char *)&f, sizeof(f));
            break;
        }
        case 'd': {
            double d = luaL_checknumber(L, arg++);
            correctbytes((char *)&d, sizeof(d), h.endian);
            luaL_addlstring(&b, (char *)&d, sizeof(d));
            break;
        }
        case 'c': case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0) size = l;
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            controloptions(L, opt, &fmt, &h);
        }
        totalsize += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number getinteger(const char *buf, int endian, bool issigned, size_t size) {
    uint64_t l = 0;
    if (endian == BIG) {
        for (size_t i = 0; i < size; i++) l = l << 8 | (unsigned char)buf[i];
    } else {
        for (size_t i = size; i-- > 0;) l = l << 8 | (unsigned char)buf[i];
    }
    if (!issigned) return (lua_Number)l;
    /* the shift the original does, with x86's modulo-64 count */
    unsigned sh = (unsigned)((int)size * 8 - 1) & 63;
    uint64_t mask = ~(uint64_t)0 << sh;
    if (l & mask) l |= mask;
    return (lua_Number)(int64_t)l;
}

static int b_unpack(lua_State *L) {
    struct header h = { NATIVE, 1 };
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    size_t pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    int n = 0;
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = optsize(L, opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H':
        case 'l': case 'L': case 'T': case 'i': case 'I':
            lua_pushnumber(L, getinteger(data + pos, h.endian, islower(opt), size));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            float f;
            memcpy(&f, data + pos, sizeof(f));
            correctbytes((char *)&f, sizeof(f), h.endian);
            lua_pushnumber(L, f);
            n++;
            break;
        }
        case 'd': {
            double d;
            memcpy(&d, data + pos, sizeof(d));
            correctbytes((char *)&d, sizeof(d), h.endian);
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
                lua_Number want = lua_tonumber(L, -1);
                size = (want >= 0 && want <= (lua_Number)ld) ? (size_t)want : SIZE_MAX;
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (e == NULL) luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)(pos + 1));
    return n + 1;
}

static int b_size(lua_State *L) {
    struct header h = { NATIVE, 1 };
    const char *fmt = luaL_checkstring(L, 1);
    size_t pos = 0;
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = optsize(L, opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt)) controloptions(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int luaopen_rk_struct(lua_State *L) {
    static const luaL_Reg fns[] = {
        { "pack", b_pack },
        { "unpack", b_unpack },
        { "size", b_size },
    };
    lua_newtable(L);
    for (size_t i = 0; i < RK_ARRAY_LEN(fns); i++) {
        lua_pushcfunction(L, fns[i].func);
        lua_setfield(L, -2, fns[i].name);
    }
    return 1;
}
