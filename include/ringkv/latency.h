/*
 * The latency monitor (LATENCY): for each kind of event ("command",
 * "fast-command", "expire-cycle", ...), the latest 160 seconds in which one
 * took at least latency-monitor-threshold milliseconds, with the longest of
 * that second, and the longest ever, as Redis 7.0 keeps them. Off while the
 * threshold is 0.
 *
 * One set of events for the process, behind a mutex taken only for an
 * event over the threshold: rare by construction. LATENCY HISTOGRAM is
 * command_stats.c's (cmd_latency_histogram): it reads the per-command
 * histograms there.
 */
#ifndef RINGKV_LATENCY_H
#define RINGKV_LATENCY_H

#include "ringkv/config.h"

#include <stdbool.h>
#include <stdint.h>

/* The monitor is on: a caller that must time its work first asks this. */
static inline bool latency_monitor_on(void) { return CONFIG_GET(latency_monitor_threshold) > 0; }

/* An event of `ms` milliseconds: recorded when the monitor is on and ms
 * reaches its threshold. */
void latency_add_sample_if_needed(const char *event, uint64_t ms);

#endif
