/*
 * A cheap clock for timing commands.
 *
 * The slow log and the latency monitor need the duration of every command,
 * and two clock_gettime() calls around each would cost a pipelined GET a
 * noticeable share of its time. Where the kernel itself keeps time with
 * the CPU's invariant TSC (its clocksource is "tsc"), reading the counter
 * directly is several times cheaper and as trustworthy; ticks become
 * nanoseconds with a ratio measured once at start. Elsewhere (another
 * clocksource, another architecture) a tick is a CLOCK_MONOTONIC
 * nanosecond.
 */
#ifndef RINGKV_CLOCK_H
#define RINGKV_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* Set by clock_ticks_init: the TSC is used. */
extern bool rk_ticks_are_tsc;

/* Decide the source and measure the ratio; call once before the threads
 * start (later calls are no-ops). ticks_to_ns calls it too, for tests. */
void clock_ticks_init(void);

static inline uint64_t clock_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(rk_ticks_are_tsc, 1)) return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An interval of ticks in nanoseconds, and back. */
uint64_t ticks_to_ns(uint64_t ticks);
uint64_t ns_to_ticks(uint64_t ns);

#endif
