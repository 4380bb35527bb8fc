/*
 * The scripting host: where a script (EVAL, EVALSHA, FCALL and their _RO
 * forms) runs and how each redis.call() it makes is run (script_host.c).
 * The engine (script.h) runs Lua and knows nothing of shards; the commands
 * (cmd_script.c) parse arguments and call script_host_run.
 *
 * Where: the router never forwards a script (CMD_SCRIPT). It runs on the
 * client's thread holding the shards of its declared keys and those this
 * thread has seen the script use before (its learned mask): alone when
 * that is only this thread's shard, else as one cross-shard transaction.
 * Nobody else runs against a held shard, so the script is atomic and
 * isolated.
 *
 * A key on a shard the run does not hold (a key it did not declare): the
 * run takes that shard at once if nobody holds or queues for it
 * (tx_take_now), and the shard joins the script's learned mask so that its
 * next runs hold it from the start. If the shard is not free, the run
 * stops: when it has written nothing it runs again from scratch holding
 * every shard it now knows (taken in order, as any transaction's); when it
 * has written, it fails at that command with an error, its earlier writes
 * staying, as a Redis script's do when it fails midway.
 *
 * Long scripts: past busy-reply-threshold a script is "busy". Its thread
 * serves its other clients from inside the script (BUSY to all but
 * SCRIPT/FUNCTION KILL, SHUTDOWN and the other allow-busy commands), other
 * threads answer BUSY to commands that touch its shards (all of them
 * when it declared no keys) or no shard at all, and SCRIPT KILL / FUNCTION KILL from any thread stop it unless it
 * has written.
 */
#ifndef RINGKV_SCRIPT_HOST_H
#define RINGKV_SCRIPT_HOST_H

#include "ringkv/command.h"
#include "ringkv/script.h"

struct worker;
struct script_thread;

/* This thread's engine (created on first use). */
struct script_engine *script_thread_engine(struct worker *w);
/* At exit. */
void script_thread_free(struct worker *w);
/* The shards this thread has seen the script of an EVAL/EVALSHA/FCALL use
 * beyond its declared keys (scripts: w->scripting): the router's
 * route_env.script_mask. */
uint64_t script_route_mask(const void *scripts, const struct command *cmd, int argc, const struct slice *argv);

/* What to run: an EVAL script (by its SHA1) or a function (by name). */
struct script_target {
    bool function;
    struct slice id;      /* 40 lowercase hex digits, or the function's name */
    int flags;            /* SCRIPT_FLAG_* of the script or function */
    bool ro_command;      /* EVAL_RO, EVALSHA_RO, FCALL_RO */
};

/* Run it for c (an EVAL/FCALL context) with argv[0..argc) after numkeys,
 * nkeys of them keys; the reply goes to c->r. May stop it for a rerun
 * (c->rerun_mask). */
void script_host_run(struct cmd_ctx *c, const struct script_target *t, const struct slice *argv, int argc,
                     int nkeys);

/* A script command's flags as Redis's evalGetCommandFlags makes them: a
 * script that declares flags (a shebang, or a function) is a write command
 * unless no-writes, and never may-replicate otherwise (CLIENT PAUSE WRITE). */
uint32_t script_command_flags(struct worker *w, const struct command *cmd, int argc, const struct slice *argv);

/* SCRIPT KILL (eval) / FUNCTION KILL: the reply. */
void script_host_kill(struct cmd_ctx *c, bool eval);

/* The BUSY error a command of another client touching the shards in mask
 * (0: no key) gets from a busy script, or NULL when it may run. */
const char *script_busy_refusal(uint64_t mask);

/* The Lua states' memory, over every thread (INFO memory). */
void script_host_memory(size_t *eval, size_t *functions);

/* FUNCTION STATS's running_script: nil, or the busy function's map. */
void script_busy_running(struct reply *r, long long now_ms);

#endif
