/*
 * The command clock (see clock.h): the TSC where the kernel trusts it,
 * CLOCK_MONOTONIC otherwise.
 */
#include "ringkv/clock.h"

#include <stdio.h>
#include <string.h>

bool rk_ticks_are_tsc;
static double ns_per_tick;   /* 0 until clock_ticks_init */

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The kernel picks "tsc" only when the counter is invariant and agrees
 * across CPUs; that is the guarantee this clock borrows. */
static bool kernel_uses_tsc(void) {
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return false;
    char name[32] = {0};
    bool tsc = fgets(name, sizeof name, f) && strncmp(name, "tsc", 3) == 0 && (name[3] == '\n' || !name[3]);
    fclose(f);
    return tsc;
}

void clock_ticks_init(void) {
    if (ns_per_tick > 0) return;
#if defined(__x86_64__) || defined(__i386__)
    if (kernel_uses_tsc()) {
        /* a few milliseconds against CLOCK_MONOTONIC: a ratio within a
         * fraction of a percent, which is all a duration in µs needs */
        uint64_t m0 = mono_ns(), t0 = __rdtsc();
        struct timespec pause = { 0, 5 * 1000 * 1000 };
        nanosleep(&pause, NULL);
        uint64_t m1 = mono_ns(), t1 = __rdtsc();
        if (t1 > t0 && m1 > m0) {
            ns_per_tick = (double)(m1 - m0) / (double)(t1 - t0);
            rk_ticks_are_tsc = true;
            return;
        }
    }
#endif
    ns_per_tick = 1.0;
}

uint64_t ticks_to_ns(uint64_t ticks) {
    if (__builtin_expect(ns_per_tick == 0, 0)) clock_ticks_init();
    return (uint64_t)((double)ticks * ns_per_tick);
}

uint64_t ns_to_ticks(uint64_t ns) {
    if (__builtin_expect(ns_per_tick == 0, 0)) clock_ticks_init();
    double t = (double)ns / ns_per_tick;
    return t >= 1.8e19 ? UINT64_MAX - 1 : (uint64_t)t;
}
