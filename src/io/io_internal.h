/*
 * What the connection layer's files share but nothing else should see.
 * From the top: worker.c (the loop) -> client.c (lifecycle, input, acting
 * on the router's verdict, resuming, sends) -> the features (multi.c,
 * pubsub.c, tracking.c, pause.c, monitor.c, blocking.c) -> run.c (running
 * one command) -> output.c (reply order, the resume and flush lists).
 * Calls only go down; a lower file that needs a client to run again
 * schedules it (client_schedule_resume), one that needs it gone marks it
 * (client_close_asap).
 */
#ifndef RINGKV_IO_INTERNAL_H
#define RINGKV_IO_INTERNAL_H

#include "ringkv/server.h"

#include "ringkv/acl.h"
#include "ringkv/dispatch.h"
#include "ringkv/multi.h"
#include "ringkv/tracking.h"

#include "output.h"

/* Forwarded commands a client may have out before it waits for their
 * replies: bounds the replies that can pile up for a client that does not
 * read (client.c, multi.c). */
#define CLIENT_MAX_INFLIGHT 128
/* A client with this much output unsent is not run until a send brings
 * it under half (client.c, WAIT_OUTPUT); while paused so, it counts as
 * still holding this much for the output limits (output.c). */
#define OUTPUT_PAUSE_BYTES (4u << 20)

/* persist_io.c: snapshots' steps and file operations, save points */
bool persist_iteration(struct worker *w);   /* true: a snapshot has more to do now */
void persist_on_cqe(uint64_t ud, int res);
void persist_cron(struct worker *w);
void persist_thread_start(struct worker *w);   /* the thread's AOF writer */
void persist_thread_stop(struct worker *w);    /* its AOF writes finish */

/* metrics_http.c: the /metrics listener of metrics-port, on thread 0 */
int metrics_open(struct worker *w);    /* at start; -1: the start fails (logged) */
void metrics_on_cqe(struct worker *w, uint64_t ud, int res, unsigned flags);
void metrics_cron(struct worker *w);   /* deadlines, and requests that waited for a busy script */
void metrics_free(struct worker *w);

/* acl_gate.c */
bool client_acl_refuses(struct client *c, const struct command *cmd, int argc, struct slice *argv);
void client_acl_recheck_queue(struct client *c, struct multi_queue *q);
void client_acl_log(struct client *c, enum acl_verdict v, enum acl_context ctx, struct slice object,
                    struct slice username);

/* client.c */
void client_maybe_free(struct client *c);
void client_free_now(struct client *c);

/* output.c: output.h */

/* run.c, for client.c and multi.c */
enum exec_result { EXEC_DONE, EXEC_WAIT };
/* Run on this thread; false when a blocking command made the client wait. */
bool client_run_local(struct client *c, const struct command *cmd, int argc, struct slice *argv, bool drop);
/* Run as a cross-shard transaction over mask (exec: EXEC's queue, or NULL). */
void client_start_tx(struct client *c, const struct command *cmd, uint64_t mask, int argc,
                     struct slice *argv, bool drop, struct multi_queue *exec);

/* multi.c: MULTI EXEC DISCARD WATCH UNWATCH, and every command while in MULTI */
enum exec_result client_multi_command(struct client *c, const struct route *rt, int argc,
                                      struct slice *argv, bool drop);

/* pubsub.c: (P|S)(UN)SUBSCRIBE, subscribed clients, delivery */
enum exec_result client_pubsub_command(struct client *c, const struct route *rt, int argc,
                                       struct slice *argv, bool drop);
/* In RESP2 a subscribed client may run only a few commands: the refusal. */
bool client_pubsub_refuses(const struct client *c, const struct command *cmd);
void client_pubsub_refusal(struct client *c, const struct command *cmd);
/* Leave every subscription without confirming (RESET, disconnect). */
void client_pubsub_reset(struct client *c);
void client_pubsub_free(struct client *c);   /* teardown: the client's own records only */
void client_pubsub_counts(const struct client *c, unsigned long long counts[PS_KINDS]);
bool client_subs_allowed(struct client *c);
/* A published message for this thread's subscribers. */
void pubsub_deliver(struct worker *w, enum ps_kind k, struct slice channel, struct slice msg);
/* The local shard is free: apply directory changes made while it was held. */
void pubsub_shard_free(struct worker *w);
void pubsub_worker_free(struct worker *w);

/* tracking.c: client-side caching, the connection side (CLIENT TRACKING
 * state, which reads are tracked, the delivery of invalidations). Around
 * each command of a tracking client: begin (self holds the reader record
 * until end) and end. */
void client_tracking_begin(struct client *c, struct block_record *self);
void client_tracking_end(struct client *c, const struct route *rt, enum exec_result r);
void client_tracking_on(struct client *c, const struct tracking_opts *o);
void client_tracking_off(struct client *c);
void client_tracking_caching(struct client *c);
void client_tracking_reset(struct client *c);
void client_tracking_free(struct client *c);
void tracking_deliver(struct worker *w, const char *p, size_t len);
/* Once per loop iteration: invalidations, ours delivered and the others'
 * put in messages (nothing while nobody tracks). */
void tracking_iteration(struct worker *w);
/* Refuse cmd before it runs, with err: inside MULTI the transaction is
 * marked for EXECABORT; EXEC itself ends it with err as its reason, as
 * Redis's execCommandAbort (pause.c). */
void client_refuse(struct client *c, const struct command *cmd, const char *err);
/* slow_entry.c: a slow command's log entry gets its client's address and
 * name (conn_ops.slow_entry), here or on the client's thread (XM_SLOWLOG,
 * msg_client_ops.slow_entry) */
void client_slow_entry(struct cmd_ctx *ctx, struct slowlog_entry *e);
void client_slow_entry_in(struct worker *w, const struct block_record *r, struct slowlog_entry *e);

#endif
