/*
 * convert.c -- values between Lua and RESP, Redis 7.0's tables exactly.
 *
 * A command's reply (RESP2 or RESP3, as the script chose) -> Lua:
 *
 *   integer            number              bulk string     string
 *   null bulk / array  false               array / push    table 1..n
 *   status             {ok=s}              error           {err="CODE msg"} (+ ignore_error_stats_update)
 *   RESP3 null         nil                 boolean         boolean
 *   map                {map={k=v}}         set             {set={m=true}}
 *   double             {double=n}          big number      {big_number=s}
 *   verbatim           {verbatim_string={format=f, string=s}}
 *   attribute          skipped, the reply after it converted
 *
 * The script's result -> the caller's protocol (r->resp): string -> bulk,
 * number -> integer (truncated), true -> :1 / #t (RESP3 script), false ->
 * null / #f (RESP3 script), table: {err=} error, {ok=} status, {double=},
 * {big_number=}, {verbatim_string=}, {map=}, {set=}, else an array up to
 * the first nil; nesting past the Lua stack limit gives the element
 * "-ERR reached lua stack limit", as Redis does. Tables are read raw:
 * no metamethod runs.
 */
#include "script_internal.h"

#include "ringkv/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <lauxlib.h>

/* ---- errors --------------------------------------------------------------------- */

void script_push_error(lua_State *L, const char *s) {
    const char *code = "ERR", *msg = s;
    size_t codelen = 3;
    if (s[0] == '-') {
        const char *sp = strchr(s, ' ');
        if (!sp) {
            msg = s + 1;
        } else {
            code = s + 1;
            codelen = (size_t)(sp - code);
            msg = sp + 1;
        }
    }
    size_t mlen = strlen(msg);
    while (mlen && (*msg == '\r' || *msg == '\n')) {
        msg++;
        mlen--;
    }
    while (mlen && (msg[mlen - 1] == '\r' || msg[mlen - 1] == '\n')) mlen--;
    lua_newtable(L);
    lua_pushliteral(L, "err");
    lua_pushlstring(L, code, codelen);
    lua_pushliteral(L, " ");
    lua_pushlstring(L, msg, mlen);
    lua_concat(L, 3);
    lua_rawset(L, -3);
}

void script_reply_error(struct reply *r, const char *text, size_t len, bool counted) {
    const char *nul = memchr(text, '\0', len);
    if (nul) len = (size_t)(nul - text);
    while (len && (text[len - 1] == '\r' || text[len - 1] == '\n')) len--;
    char *dst = rbuf_reserve(r->out, len + 3);
    dst[0] = '-';
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        dst[1 + i] = (c == '\r' || c == '\n') ? ' ' : c;
    }
    dst[len + 1] = '\r';
    dst[len + 2] = '\n';
    r->out->len += len + 3;
    if (counted && reply_error_hook) reply_error_hook(dst + 1, len);
}

/* ---- RESP -> Lua ------------------------------------------------------------------ */

#define MAX_REPLY_DEPTH 1000

struct rp {
    const char *p, *end;
    lua_State *L;
};

/* The header line after the type byte; r->p moves past its CRLF. */
static bool rp_line(struct rp *r, const char **s, size_t *n) {
    const char *start = r->p + 1;
    for (const char *q = start; q + 1 < r->end; q++) {
        if (q[0] == '\r' && q[1] == '\n') {
            *s = start;
            *n = (size_t)(q - start);
            r->p = q + 2;
            return true;
        }
    }
    return false;
}

static bool rp_len(struct rp *r, long long *v) {
    const char *s;
    size_t n;
    return rp_line(r, &s, &n) && str_to_ll(s, n, v);
}

/* n bytes of payload and a CRLF. */
static bool rp_blob(struct rp *r, long long n, const char **s) {
    if (n < 0 || (size_t)(r->end - r->p) < (size_t)n + 2) return false;
    if (r->p[n] != '\r' || r->p[n + 1] != '\n') return false;
    *s = r->p;
    r->p += n + 2;
    return true;
}

static void push_error_line(lua_State *L, const char *s, size_t n) {
    char stackbuf[256];
    char *buf = n + 2 <= sizeof(stackbuf) ? stackbuf : rk_malloc(n + 2);
    buf[0] = '-';
    memcpy(buf + 1, s, n);
    buf[n + 1] = '\0';
    /* errors run nothing that could raise but memory, and a Lua memory error
     * here would leak buf: copy into Lua first when it is big */
    if (buf != stackbuf) {
        lua_pushlstring(L, buf, n + 1);
        free(buf);
        script_push_error(L, lua_tostring(L, -1));
        lua_remove(L, -2);
    } else {
        script_push_error(L, buf);
    }
    lua_pushliteral(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
}

static bool rp_value(struct rp *r, bool push, int depth);

static bool rp_aggregate(struct rp *r, bool push, int depth, long long n, int kind) {
    lua_State *L = r->L;
    /* kind: 0 array, 1 map, 2 set */
    if (push) {
        if (kind == 0) {
            lua_createtable(L, n < 1024 ? (int)n : 1024, 0);
        } else {
            lua_newtable(L);
            lua_pushstring(L, kind == 1 ? "map" : "set");
            lua_newtable(L);
        }
    }
    for (long long j = 0; j < n; j++) {
        if (kind == 0) {
            if (push) lua_pushnumber(L, (lua_Number)(j + 1));
            if (!rp_value(r, push, depth + 1)) return false;
            if (push) lua_settable(L, -3);
        } else if (kind == 1) {
            if (!rp_value(r, push, depth + 1) || !rp_value(r, push, depth + 1)) return false;
            if (push) lua_settable(L, -3);
        } else {
            if (!rp_value(r, push, depth + 1)) return false;
            if (push) {
                lua_pushboolean(L, 1);
                lua_settable(L, -3);
            }
        }
    }
    if (push && kind != 0) lua_settable(L, -3);
    return true;
}

static bool rp_value(struct rp *r, bool push, int depth) {
    lua_State *L = r->L;
    if (r->p >= r->end || depth > MAX_REPLY_DEPTH) return false;
    if (push && !lua_checkstack(L, 5)) return false;
    const char *s;
    size_t n;
    long long v;
    switch (*r->p) {
    case '+':
        if (!rp_line(r, &s, &n)) return false;
        if (push) {
            lua_newtable(L);
            lua_pushliteral(L, "ok");
            lua_pushlstring(L, s, n);
            lua_rawset(L, -3);
        }
        return true;
    case '-':
        if (!rp_line(r, &s, &n)) return false;
        if (push) push_error_line(L, s, n);
        return true;
    case '!':   /* RESP3 blob error: an error like any other */
        if (!rp_len(r, &v) || !rp_blob(r, v, &s)) return false;
        if (push) push_error_line(L, s, (size_t)v);
        return true;
    case ':':
        if (!rp_len(r, &v)) return false;
        if (push) lua_pushnumber(L, (lua_Number)v);
        return true;
    case '$':
        if (!rp_len(r, &v)) return false;
        if (v == -1) {
            if (push) lua_pushboolean(L, 0);
            return true;
        }
        if (!rp_blob(r, v, &s)) return false;
        if (push) lua_pushlstring(L, s, (size_t)v);
        return true;
    case '*':
    case '>':
        if (!rp_len(r, &v)) return false;
        if (v == -1) {
            if (push) lua_pushboolean(L, 0);
            return true;
        }
        if (v < 0) return false;
        return rp_aggregate(r, push, depth, v, 0);
    case '%':
        if (!rp_len(r, &v) || v < 0) return false;
        return rp_aggregate(r, push, depth, v, 1);
    case '~':
        if (!rp_len(r, &v) || v < 0) return false;
        return rp_aggregate(r, push, depth, v, 2);
    case '_':
        if (!rp_line(r, &s, &n) || n != 0) return false;
        if (push) lua_pushnil(L);
        return true;
    case '#':
        if (!rp_line(r, &s, &n) || n != 1 || (s[0] != 't' && s[0] != 'f')) return false;
        if (push) lua_pushboolean(L, s[0] == 't');
        return true;
    case ',': {
        if (!rp_line(r, &s, &n) || n > 300) return false;
        char buf[312];
        memcpy(buf, s, n);
        buf[n] = '\0';
        double d = strtod(buf, NULL);
        if (push) {
            lua_newtable(L);
            lua_pushliteral(L, "double");
            lua_pushnumber(L, d);
            lua_rawset(L, -3);
        }
        return true;
    }
    case '(':
        if (!rp_line(r, &s, &n)) return false;
        if (push) {
            lua_newtable(L);
            lua_pushliteral(L, "big_number");
            lua_pushlstring(L, s, n);
            lua_rawset(L, -3);
        }
        return true;
    case '=':
        if (!rp_len(r, &v) || v < 4 || !rp_blob(r, v, &s) || s[3] != ':') return false;
        if (push) {
            lua_newtable(L);
            lua_pushliteral(L, "verbatim_string");
            lua_newtable(L);
            lua_pushliteral(L, "string");
            lua_pushlstring(L, s + 4, (size_t)v - 4);
            lua_rawset(L, -3);
            lua_pushliteral(L, "format");
            lua_pushlstring(L, s, 3);
            lua_rawset(L, -3);
            lua_rawset(L, -3);
        }
        return true;
    case '|':   /* attribute: not shown to scripts */
        if (!rp_len(r, &v) || v < 0) return false;
        for (long long j = 0; j < v; j++)
            if (!rp_value(r, false, depth + 1) || !rp_value(r, false, depth + 1)) return false;
        return rp_value(r, push, depth);
    default:
        return false;
    }
}

bool script_resp_to_lua(lua_State *L, const char *p, size_t len) {
    int top = lua_gettop(L);
    struct rp r = { p, p + len, L };
    if (!rp_value(&r, true, 0)) {
        lua_settop(L, top);
        return false;
    }
    return true;
}

/* ---- Lua -> reply ----------------------------------------------------------------- */

/* (long long)d as x86 gives it, without undefined behaviour. */
static long long number_to_ll(lua_Number d) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return LLONG_MIN;
    return (long long)d;
}

/* t[key] raw (t at absolute index ti), pushed; returns its type. */
static int raw_field(lua_State *L, int ti, const char *key) {
    lua_pushstring(L, key);
    lua_rawget(L, ti);
    return lua_type(L, -1);
}

/* A copy of s with CR and LF made spaces (Redis's sdsmapchars). */
static void write_mapped(struct rbuf *b, const char *s, size_t len) {
    char *dst = rbuf_reserve(b, len);
    for (size_t i = 0; i < len; i++) dst[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    b->len += len;
}

/* The table on top of the stack (left there for the caller to pop). */
static void to_reply(lua_State *L, struct reply *r, int sresp, int depth);

static void table_to_reply(lua_State *L, struct reply *r, int sresp, int depth) {
    int ti = lua_gettop(L);
    /* {err="..."}: a C string, as Redis's sdsnew reads it */
    if (raw_field(L, ti, "err") == LUA_TSTRING) {
        const char *msg = lua_tostring(L, -1);
        bool ignore = raw_field(L, ti, "ignore_error_stats_update") == LUA_TBOOLEAN && lua_toboolean(L, -1);
        script_reply_error(r, msg, strlen(msg), !ignore);
        lua_settop(L, ti);
        return;
    }
    lua_settop(L, ti);
    /* {ok="..."} */
    if (raw_field(L, ti, "ok") == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);
        size_t len = strlen(s);
        char *dst = rbuf_reserve(r->out, len + 3);
        dst[0] = '+';
        for (size_t i = 0; i < len; i++) dst[1 + i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
        dst[len + 1] = '\r';
        dst[len + 2] = '\n';
        r->out->len += len + 3;
        lua_settop(L, ti);
        return;
    }
    lua_settop(L, ti);
    if (raw_field(L, ti, "double") == LUA_TNUMBER) {
        reply_double(r, lua_tonumber(L, -1));
        lua_settop(L, ti);
        return;
    }
    lua_settop(L, ti);
    if (raw_field(L, ti, "big_number") == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (r->resp >= 3) {
            rbuf_append(r->out, "(", 1);
        } else {
            char hdr[32];
            int h = snprintf(hdr, sizeof(hdr), "$%zu\r\n", len);
            rbuf_append(r->out, hdr, (size_t)h);
        }
        write_mapped(r->out, s, len);
        rbuf_append(r->out, "\r\n", 2);
        lua_settop(L, ti);
        return;
    }
    lua_settop(L, ti);
    if (raw_field(L, ti, "verbatim_string") == LUA_TTABLE) {
        int vi = lua_gettop(L);
        if (raw_field(L, vi, "format") == LUA_TSTRING) {
            const char *format = lua_tostring(L, -1);
            if (raw_field(L, vi, "string") == LUA_TSTRING) {
                size_t len;
                const char *s = lua_tolstring(L, -1, &len);
                reply_verbatim(r, s, len, format);
                lua_settop(L, ti);
                return;
            }
        }
    }
    lua_settop(L, ti);
    bool map = raw_field(L, ti, "map") == LUA_TTABLE;
    if (!map) {
        lua_settop(L, ti);
        if (raw_field(L, ti, "set") != LUA_TTABLE) {
            lua_settop(L, ti);
            goto array;
        }
    }
    /* stack: t m */
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    if (map)
        reply_map(r, n);
    else
        reply_set(r, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (map) {
            lua_pushvalue(L, -2);                /* m key value key */
            to_reply(L, r, sresp, depth + 1);    /* key */
            to_reply(L, r, sresp, depth + 1);    /* value */
        } else {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            to_reply(L, r, sresp, depth + 1);
        }
    }
    lua_settop(L, ti);
    return;
array:;
    /* an array, up to the first nil */
    size_t len = 0;
    for (;;) {
        lua_rawgeti(L, ti, (int)(len + 1));
        bool end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end || len + 1 >= (size_t)INT_MAX) break;
        len++;
    }
    reply_array(r, len);
    for (size_t j = 1; j <= len; j++) {
        lua_rawgeti(L, ti, (int)j);
        to_reply(L, r, sresp, depth + 1);
    }
}

/* Redis stops where the Lua stack is full (about 8000 levels); the C stack
 * is bounded here too, whatever the Lua stack allows. */
#define MAX_RESULT_DEPTH 4000

static void to_reply(lua_State *L, struct reply *r, int sresp, int depth) {
    if (depth >= MAX_RESULT_DEPTH || !lua_checkstack(L, 4)) {
        script_reply_error(r, "ERR reached lua stack limit", 27, true);
        lua_pop(L, 1);
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        reply_bulk(r, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        if (sresp == 2) {
            if (lua_toboolean(L, -1))
                reply_int(r, 1);
            else
                reply_null(r);
        } else {
            reply_bool(r, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        reply_int(r, number_to_ll(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE:
        table_to_reply(L, r, sresp, depth);
        break;
    default:
        reply_null(r);
    }
    lua_pop(L, 1);
}

void script_lua_to_reply(lua_State *L, struct reply *r, int sresp) {
    to_reply(L, r, sresp, 0);
}
