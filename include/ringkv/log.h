/*
 * The server log, in Redis's words and format.
 *
 * Every message the server writes about itself (start, listening, loading,
 * saving, clients closed at their limits, shutdown, fatal errors) goes
 * through rk_log(), so tools that read Redis's logs read ringkv's: Redis's
 * test framework waits for " PID: <pid>" and counts "Ready to accept" lines,
 * people grep "ready to exit, bye bye". A line is Redis's serverLogRaw()
 * format:
 *
 *     PID:ROLE DD Mon YYYY HH:MM:SS.mmm C message
 *     12345:M 24 Nov 2025 09:42:01.123 * Ready to accept connections
 *
 * ROLE is always 'M' (ringkv has no replicas and forks no children); C is
 * '.', '-', '*' or '#' for debug, verbose, notice and warning. A message is
 * cut at RK_LOG_MAX_LEN bytes, as Redis cuts at LOG_MAX_LEN.
 *
 * Levels follow config `loglevel`: a message below it is dropped before it
 * is formatted. The destination is config `logfile`: "" is standard output,
 * anything else a file opened once, for appending, at start (it is
 * immutable). Each line leaves in one write(2) of a buffer on the caller's
 * stack: worker threads log without a lock and their lines never
 * interleave (O_APPEND on a file, and a line is shorter than PIPE_BUF on a
 * pipe). syslog-* are accepted and stay inert.
 *
 * Nothing here allocates memory, so the out-of-memory and fatal paths log
 * like every other (rk_log_fatal() does not even format: for a message
 * built by the caller).
 */
#ifndef RINGKV_LOG_H
#define RINGKV_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>

/* Redis's levels, in its order (and loglevel's enum values). */
enum { LL_DEBUG = 0, LL_VERBOSE = 1, LL_NOTICE = 2, LL_WARNING = 3 };

#define RK_LOG_MAX_LEN 1024   /* message bytes kept per line */

/* One formatted message at level. */
void rk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rk_vlog(int level, const char *fmt, va_list ap);
/* Text written as it is, with no prefix (Redis's LL_RAW: the startup
 * banner, a block of several lines), in one write. */
void rk_log_raw(int level, const char *text, size_t len);
/* A message already built, with the line prefix, without formatting or
 * allocating: for running out of memory and for fatal errors. */
void rk_log_fatal(const char *msg);

/* Whether a message at level would be written (to skip costly arguments). */
bool rk_log_enabled(int level);
void rk_log_set_level(int level);
int rk_log_level(void);

/* Where lines go: "" or NULL is standard output, else the file, opened for
 * appending (created 0644). Returns 0, or -1 with errno (the destination is
 * then unchanged). A file opened earlier is closed. */
int rk_log_open(const char *path);

/* The line for msg as rk_log() writes it (newline included, no NUL
 * counted), into buf of cap bytes: for the unit tests, and the one place
 * that knows the format. Returns the length. */
size_t rk_log_format(char *buf, size_t cap, int level, pid_t pid, const struct timeval *tv, const char *msg,
                     size_t msglen);

#endif
