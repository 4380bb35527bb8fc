/*
 * Private to src/script/: the process-wide registry (registry.c), SHA1
 * (sha1.c), the libraries written here (lua_cmsgpack.c, lua_struct.c) and
 * the guards around Debian's cjson and bit (lua_libs.c).
 */
#ifndef RINGKV_SCRIPT_INTERNAL_H
#define RINGKV_SCRIPT_INTERNAL_H

#include "ringkv/script.h"

#include <lua.h>

/* ---- SHA1 ---------------------------------------------------------------- */

void script_sha_to_hex(const unsigned char sha[20], char out[41]);
bool script_sha_from_hex(struct slice hex, unsigned char out[20]);   /* 40 hex digits, any case */

/* ---- the registry (registry.c): shared by every thread, one mutex ---------- */

/* EVAL scripts, content-addressed. */
uint64_t reg_script_gen(void);   /* bumped by every flush; relaxed load */
/* Found: flags, and (when body is not NULL) a malloc'd copy of the body
 * with its length and shebang length. */
bool reg_script_get(const unsigned char sha[20], int *flags, char **body, size_t *len, size_t *shebang_len);
void reg_script_put(const unsigned char sha[20], const char *body, size_t len, int flags, size_t shebang_len);
void reg_script_flush(void);

/* Libraries of functions. */
struct reg_fn_def {
    char *name;   /* as registered */
    char *desc;   /* NULL: none */
    int flags;
};
struct reg_lib_def {
    char *name;
    char *code;          /* the whole FUNCTION LOAD text, NUL-terminated */
    size_t code_len;
    size_t body_off;     /* where the Lua code starts (the shebang's '\n') */
    struct reg_fn_def *fns;
    int nfns;
};
void reg_lib_def_free(struct reg_lib_def *d);   /* the members, not d */

uint64_t reg_fn_gen(void);       /* bumped by every change of the libraries */
bool reg_lib_exists(const char *name);
/* Link a loaded library (the registry takes d's members on success, d is
 * then zeroed): "Library 'x' already exists" unless replace, "Function f
 * already exists" if another library has one of its functions. Returns the
 * library's new id (0 on error, with Redis's text in err). */
uint64_t reg_lib_publish(struct reg_lib_def *d, bool replace, struct rbuf *err);
bool reg_lib_delete(const char *name, size_t len);
void reg_fn_flush(void);
/* The library holding function name (any case): its id and a malloc'd
 * copy of its code. */
bool reg_fn_find(const char *name, size_t len, uint64_t *lib_id, int *flags, char **code, size_t *code_len,
                 size_t *body_off);
/* Whether a library id is still linked; with the generation read under the
 * same lock (ids[] sorted ascending, malloc'd). */
void reg_fn_live(uint64_t **ids, size_t *n, uint64_t *gen);
/* FUNCTION RESTORE: link defs[0..n) all or nothing under policy. */
bool reg_lib_restore(struct reg_lib_def *defs, size_t n, enum script_restore_policy policy, struct rbuf *err);

void reg_function_list(struct reply *r, const struct slice *pattern, bool withcode);
void reg_function_stats_engines(struct reply *r);
void reg_function_foreach(void (*fn)(void *arg, struct slice name, struct slice code), void *arg);
void reg_stats(struct script_stats *s);

/* Redis's name check for libraries and functions: [A-Za-z0-9_]+ */
bool script_name_ok(const char *s, size_t len);

/* Error text helpers: set err to a NUL-terminated string. */
void script_err_set(struct rbuf *err, const char *s);
void script_err_setf(struct rbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- first lines (shebang.c) -------------------------------------------------- */

/* An EVAL body's shebang: flags (SCRIPT_FLAG_EVAL_COMPAT without one) and
 * the length of the line before its '\n'; false with Redis's error. */
bool script_parse_shebang(const char *body, size_t len, int *flags, size_t *shebang_len, struct rbuf *err);
/* A library's "#!engine name=lib": malloc'd name and engine, and where the
 * code after the line starts (its '\n'); false with Redis's error. */
bool script_parse_library_meta(const char *code, size_t len, char **name, char **engine, size_t *body_off,
                               struct rbuf *err);
/* A flag's bit from its Redis name (0: unknown). */
int script_flag_by_name(const char *s, bool nocase);

/* ---- values between Lua and RESP (convert.c) ---------------------------------- */

/* Push the Lua value of the one RESP2/RESP3 reply in p[0..len), as Redis's
 * redisProtocolToLuaType does; false (nothing pushed) if it is malformed. */
bool script_resp_to_lua(lua_State *L, const char *p, size_t len);
/* Push Redis's error table {err="CODE msg"} for s (luaPushErrorBuff: "-CODE
 * msg" or a bare message that gets "ERR"), s as a C string. */
void script_push_error(lua_State *L, const char *s);
/* Convert the Lua value on top of the stack to a reply, as Redis's
 * luaReplyToRedisReply does, and pop it; script_resp is the script's
 * protocol (redis.setresp). Runs no Lua code (raw access only). */
void script_lua_to_reply(lua_State *L, struct reply *r, int script_resp);
/* Write an error reply: text as a C string, CR/LF inside made spaces and at
 * the end dropped; counted in the error stats unless counted is false. */
void script_reply_error(struct reply *r, const char *text, size_t len, bool counted);

/* ---- libraries for the Lua states ------------------------------------------ */

int luaopen_rk_cmsgpack(lua_State *L);   /* leaves the cmsgpack table on the stack */
int luaopen_rk_struct(lua_State *L);     /* leaves the struct table on the stack */
/* cjson and bit from Debian, each leaving its table on the stack, with the
 * guards this file puts around the calls Redis had to fix (see lua_libs.c). */
int luaopen_rk_cjson(lua_State *L);
int luaopen_rk_bit(lua_State *L);
/* Whether f is one of those guards (C functions calling the original). */
bool script_is_guard(lua_CFunction f);

#endif
