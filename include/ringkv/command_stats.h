/*
 * Per-command and per-error statistics: INFO commandstats, errorstats and
 * latencystats, and the total_error_replies of INFO stats.
 *
 * Every handler runs through command_call() (declared in command.h, so the
 * call sites need nothing else), which counts the call, whether its reply
 * was an error, and, for a sample of the calls, how long it took. Commands
 * refused before they run (arity, NOAUTH) count through command_rejected().
 * Every error reply, whoever writes it, passes through reply.c, which hands
 * it to stats_error_reply() to be counted under its first word.
 *
 * Each thread owns its counters (plain fields, no atomics on the hot path),
 * found through a thread-local pointer; the blocks of all threads are listed
 * in a registry that INFO sums over and CONFIG RESETSTAT zeroes, without
 * synchronisation, like the other per-thread counters: the figures are
 * approximate while other threads run.
 */
#ifndef RINGKV_COMMAND_STATS_H
#define RINGKV_COMMAND_STATS_H

#include "ringkv/common.h"

/* An error reply of len bytes (its text without the leading '-'). */
void stats_error_reply(const char *s, size_t len);

/* The lines of INFO's sections, appended to out (headers not included). */
void stats_info_commandstats(struct rbuf *out);
void stats_info_errorstats(struct rbuf *out);
void stats_info_latencystats(struct rbuf *out);
/* Error replies since the start or the last reset, over every thread. */
uint64_t stats_total_error_replies(void);

/* A loop that runs commands one after the other (a client's pipeline)
 * sets this to clock_ticks() before its first and back to 0 after its
 * last: each timed call then takes its start from the end of the one
 * before, one clock read instead of two. What runs between two commands
 * (parsing the next) counts in the second's duration. Anything else
 * leaves it 0. */
extern _Thread_local uint64_t rk_call_chain;

/* CONFIG RESETSTAT: zero every thread's counters. */
void command_stats_reset(void);

/* The latency histogram (exposed for its unit test): durations in ns go
 * into log-linear buckets, 8 per power of two, so a percentile is reported
 * as its bucket's highest value, within 12.5% of the truth. */
#define LAT_HIST_BUCKETS 312   /* up to 2^40 ns; longer durations land in the last */
unsigned lat_bucket(uint64_t ns);
uint64_t lat_bucket_high(unsigned bucket);
/* The value at percentile p (0..100) of counts[LAT_HIST_BUCKETS] holding
 * total samples (> 0), as HdrHistogram's hdr_value_at_percentile answers. */
uint64_t lat_value_at_percentile(const uint64_t *counts, uint64_t total, double p);

#endif
