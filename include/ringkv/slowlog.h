/*
 * The slow log (SLOWLOG): commands that ran for at least
 * slowlog-log-slower-than microseconds, newest first, at most
 * slowlog-max-len of them, from every thread in one log, as Redis 7.0
 * keeps it: id, start time, duration, the arguments (at most 32, each cut
 * at 128 bytes, secrets redacted), the client's address and name.
 *
 * One log for the process, behind a mutex. An entry is made only for a
 * command that was slow (or for every command while the threshold is 0,
 * which an operator sets to look, not to serve), so no command that is
 * not logged ever takes the lock. The thread that ran the command makes
 * the entry; the connection layer completes it with the client's address
 * and name (conn_ops.slow_entry) on the client's own thread, which for a
 * forwarded command is another one, and pushes it there: it is in the log
 * before the client has its reply.
 */
#ifndef RINGKV_SLOWLOG_H
#define RINGKV_SLOWLOG_H

#include "ringkv/common.h"

struct cmd_ctx;
struct slowlog_entry;

/* c's command just ran for duration_us: log it if it is that slow. Not
 * for EXEC (its commands are logged one by one) nor for a script's calls. */
void slowlog_consider(struct cmd_ctx *c, uint64_t duration_us);

/* The connection layer's part: the client's address and name (copied),
 * then the entry goes into the log, which owns it. */
void slowlog_entry_set_client(struct slowlog_entry *e, const char *addr, const char *name);
void slowlog_push(struct slowlog_entry *e);
/* An entry that will not be pushed (its message freed at exit). */
void slowlog_entry_free(struct slowlog_entry *e);

/* SLOWLOG LEN, and everything dropped (SLOWLOG RESET; shutdown). */
size_t slowlog_len(void);
void slowlog_reset(void);

#endif
