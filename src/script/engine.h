/*
 * Private to src/script/: an engine, its Lua states (sandbox.c) and the
 * redis.* API they expose (engine.c).
 */
#ifndef RINGKV_SCRIPT_ENGINE_H
#define RINGKV_SCRIPT_ENGINE_H

#include "script_internal.h"

#include <stdatomic.h>
#include <stdio.h>

/* One Lua state: EVAL's or the functions'. */
struct lstate {
    lua_State *L;
    struct script_engine *e;
    bool functions;
    size_t mem;          /* bytes allocated by this state */
    bool gc_stopped;     /* a script called collectgarbage("stop") */
    int ref_env;         /* the globals scripts see: P_G (EVAL) or P_F (functions) */
    int ref_greal;       /* G, the real globals */
    int ref_proxies;     /* proxy -> its real table */
    int ref_vismeta;     /* proxy -> what getmetatable() shows */
    int ref_errh;        /* the runs' error handler */
    int ref_fmeta;       /* functions: P_F's metatable (__index switched while loading) */
    int ref_loadapi;     /* functions: the globals of a loading library */
    int ref_fncache;     /* functions: lowercased name -> {f=, flags=, lib=, name=} */
    int ref_loadfns;     /* functions: while loading, the functions registered */
    int ref_dispatch;    /* engine_dispatch: protected calls without a closure each */
    int ref_keys, ref_argv;   /* the strings "KEYS" and "ARGV" */
};

/* The run in progress. */
struct run {
    const struct script_host *host;
    lua_State *L;        /* the state's main thread */
    int resp;            /* redis.setresp */
    int repl;            /* redis.set_repl */
    int stop;            /* SCRIPT_KILL / SCRIPT_ABORT once asked */
    bool eval;
};

/* A library being loaded. */
struct load {
    uint64_t start_us;
    uint64_t timeout_us;   /* 0: none */
    bool quiet;            /* loading a library again on another thread: no redis.log */
    struct reg_fn_def *fns;   /* what redis.register_function registered */
    int *refs;                /* their callbacks (registry refs) */
    int nfns, cap;
};

struct sha_slot {
    unsigned char sha[20];
    int ref;
    int flags;
    bool used;
};

struct script_engine {
    struct lstate *ev, *fn;            /* created on first use */
    uint64_t script_gen, fn_gen;       /* registry generations the caches follow */
    struct sha_slot *cache;            /* EVAL: sha -> compiled function (ref in ev) */
    size_t cache_cap, cache_n;
    struct run *run;
    struct load *load;
    uint64_t rand48;                   /* math.random's state */
    struct rbuf call_out;              /* host->call's reply */
    struct rbuf numbuf;                /* numbers of an argv, formatted */
    struct slice *argv;
    size_t argv_cap;
    bool in_call;
    unsigned gc_count;
    /* the states' sizes as of the end of the last run or load, for INFO
     * from any thread */
    _Atomic size_t ev_mem_pub, fn_mem_pub;
};

/* sandbox.c */
struct lstate *lstate_new(struct script_engine *e, bool functions);
void lstate_free(struct lstate *ls);
struct lstate *lstate_of(lua_State *L);
void sandbox_enter(lua_State *L, struct lstate *ls);   /* the thread's globals = the scripts' env */
int sandbox_load_text(lua_State *L, const char *p, size_t len, const char *chunkname);
bool proxy_target(lua_State *L, struct lstate *ls, int idx);
bool sandbox_deprecated_api(void);

/* engine.c: the redis.* API and Redis's math.random */
int api_call(lua_State *L);
int api_pcall(lua_State *L);
int api_log(lua_State *L);
int api_setresp(lua_State *L);
int api_sha1hex(lua_State *L);
int api_error_reply(lua_State *L);
int api_status_reply(lua_State *L);
int api_set_repl(lua_State *L);
int api_acl_check_cmd(lua_State *L);
int api_breakpoint(lua_State *L);
int api_debug(lua_State *L);
int api_replicate_commands(lua_State *L);
int api_register_function(lua_State *L);
int api_math_random(lua_State *L);
int api_math_randomseed(lua_State *L);
int engine_dispatch(lua_State *L);
/* Raise the kill error or the abort marker; the hook keeps raising so that
 * no pcall or coroutine can swallow it. */
int engine_raise_stop(lua_State *L, struct run *run);

#endif
