/*
 * INFO's text in Prometheus's text exposition format (version 0.0.4): a
 * pure function of the text, so that the figures /metrics shows are the
 * ones INFO reports (io/metrics_http.c runs INFO and hands its text here).
 *
 * Every numeric `field:value` becomes a sample of `redis_<field>`; the
 * `key=value,...` lines become labelled samples:
 *
 *   db0:keys=3,expires=1,avg_ttl=0      redis_db_keys{db="db0"} 3, redis_db_expires, redis_db_avg_ttl
 *   cmdstat_get:calls=2,usec=15,...     redis_commands_total{cmd="get"} 2,
 *                                       redis_commands_duration_seconds_total{cmd="get"} 0.000015,
 *                                       redis_commands_rejected_calls_total, redis_commands_failed_calls_total,
 *                                       redis_commands_<other key>{cmd="get"}
 *   errorstat_ERR:count=1               redis_errors_total{err="ERR"} 1
 *   latency_percentiles_usec_get:p50=.. redis_latency_percentiles_usec{cmd="get",quantile="0.5"}
 *   thread0:commands=5,... (# ringkv)   redis_thread_commands{thread="0"} 5
 *   any other field:k=v,...             redis_<field>_<k>
 *
 * Values that are not numbers (versions, names, "ok", percentages with
 * their sign) are left out. Metric names keep only [a-zA-Z0-9_:] (any
 * other byte becomes '_'); label values and HELP texts are escaped as the
 * format says. Each metric's HELP and TYPE come once, its samples grouped
 * after them, metrics in the order INFO first mentions them.
 */
#ifndef RINGKV_PROMETHEUS_H
#define RINGKV_PROMETHEUS_H

#include "ringkv/common.h"

/* Append the exposition of INFO text info[0..len) to out. */
void prom_from_info(const char *info, size_t len, struct rbuf *out);

#endif
