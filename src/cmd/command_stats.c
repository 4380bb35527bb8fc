/*
 * command_stats.c -- what INFO commandstats, errorstats and latencystats
 * report, counted per thread (see command_stats.h).
 *
 * Counting. command_call() wraps every handler call. A call counts once it
 * completes: a blocking command that found nothing to serve runs again when
 * woken, and only that run is the call, as Redis counts one BLPOP however
 * long it waited. A call whose reply starts with '-' is a failed call;
 * command_rejected() counts the ones refused before they ran.
 *
 * Timing. The histograms and usec come from a sample of the calls: the
 * first call of each command on a thread and every SAMPLE_EVERY-th after
 * it. usec is the mean of the timed calls times the number of calls, and
 * the latency percentiles come from the timed calls; both are estimates,
 * with the precision of a sample of that size. While the slow log or the
 * latency monitor is on (their thresholds), every call is timed as well,
 * with the cheap clock of clock.h, and one at least as long as the lower
 * threshold goes to them (slowlog_consider, latency_add_sample). A
 * pipeline is timed as one chain (rk_call_chain): one clock read per
 * command.
 *
 * Errors are counted under the first word of their text (ERR, WRONGTYPE,
 * ...), as Redis does, in a small table per thread.
 *
 * Each thread's block is allocated on first use and never freed; the
 * registry lists them for INFO and CONFIG RESETSTAT, which read and zero
 * other threads' plain counters unsynchronised (approximate figures, as
 * for the other per-thread counters). Histograms and error names are
 * published with release stores, so a reader never sees one half made.
 */
#include "ringkv/aof.h"
#include "ringkv/command_stats.h"
#include "ringkv/command.h"
#include "ringkv/clock.h"
#include "ringkv/config.h"
#include "ringkv/latency.h"
#include "ringkv/slowlog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* 1 in SAMPLE_EVERY calls of a command is timed (a power of two). */
#define SAMPLE_EVERY 64

#define ERR_NAME_MAX 32     /* Redis looks for the error code's end in its first 32 bytes */
#define ERR_KINDS_MAX 128   /* distinct error codes per thread; later ones count in the total only */
#define REGISTRY_MAX 256    /* threads that may ever count (workers, and tests' own threads) */

struct lat_hist { uint64_t count[LAT_HIST_BUCKETS]; };

struct cmd_stat {
    uint64_t calls, failed, rejected;
    uint64_t timed, timed_ns;       /* the sample: calls timed and their total time */
    struct lat_hist *hist;          /* durations of the sample; made at its first entry */
};

struct err_stat {
    char name[ERR_NAME_MAX];
    uint64_t count;
};

struct thread_stats {
    struct cmd_stat cmd[COMMAND_IDS_MAX];
    uint64_t errors_total;
    uint32_t nerr;                  /* err[0..nerr) are named (release store) */
    struct err_stat err[ERR_KINDS_MAX];
};

static struct thread_stats *registry[REGISTRY_MAX];
static unsigned nregistered;
static _Thread_local struct thread_stats *mine;

/* This thread's block, made and registered on first use. */
static struct thread_stats *thread_stats(void) {
    if (RK_LIKELY(mine)) return mine;
    mine = rk_calloc(1, sizeof *mine);
    unsigned i = __atomic_fetch_add(&nregistered, 1, __ATOMIC_RELAXED);
    /* past the registry's end a thread still counts, unseen by INFO */
    if (i < REGISTRY_MAX) __atomic_store_n(&registry[i], mine, __ATOMIC_RELEASE);
    return mine;
}

static unsigned registered(void) {
    unsigned n = __atomic_load_n(&nregistered, __ATOMIC_RELAXED);
    return n < REGISTRY_MAX ? n : REGISTRY_MAX;
}

/* The i-th registered block; NULL while its thread is still publishing it. */
static struct thread_stats *registry_at(unsigned i) {
    return __atomic_load_n(&registry[i], __ATOMIC_ACQUIRE);
}

/* ---- the latency histogram ---- */

/* Values below 16 have a bucket each; above, 8 buckets per power of two. */
#define SUB_BITS 3

unsigned lat_bucket(uint64_t ns) {
    if (ns < (2u << SUB_BITS)) return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    unsigned b = ((e - SUB_BITS) << SUB_BITS) + (unsigned)(ns >> (e - SUB_BITS));
    return b < LAT_HIST_BUCKETS ? b : LAT_HIST_BUCKETS - 1;
}

static uint64_t bucket_low(unsigned b) {
    if (b < (2u << SUB_BITS)) return b;
    unsigned e = (b >> SUB_BITS) + SUB_BITS - 1;
    uint64_t m = (b & ((1u << SUB_BITS) - 1)) + (1u << SUB_BITS);
    return m << (e - SUB_BITS);
}

uint64_t lat_bucket_high(unsigned b) {
    if (b < (2u << SUB_BITS)) return b;
    return bucket_low(b + 1) - 1;
}

uint64_t lat_value_at_percentile(const uint64_t *counts, uint64_t total, double p) {
    double want = (p < 100.0 ? p : 100.0) / 100.0 * (double)total + 0.5;
    uint64_t target = want < 1.0 ? 1 : (uint64_t)want;
    uint64_t seen = 0;
    for (unsigned b = 0; b < LAT_HIST_BUCKETS; b++) {
        seen += counts[b];
        if (seen >= target) return p == 0.0 ? bucket_low(b) : lat_bucket_high(b);
    }
    return 0;
}

static void record_sample(struct cmd_stat *s, uint64_t ns) {
    s->timed++;
    s->timed_ns += ns;
    struct lat_hist *h = s->hist;
    if (RK_UNLIKELY(!h)) {
        h = rk_calloc(1, sizeof *h);
        __atomic_store_n(&s->hist, h, __ATOMIC_RELEASE);
    }
    h->count[lat_bucket(ns)]++;
}

/* ---- counting ---- */

_Thread_local uint64_t rk_call_chain;

/* The lower of the slow log's and the latency monitor's thresholds in
 * ticks, UINT64_MAX while both are off; recomputed when either setting
 * changes, per thread. */
static _Thread_local struct { long long slow_us, latency_ms; uint64_t ticks; } watch_cache = { -2, -1, 0 };

static uint64_t watch_ticks_slow(long long slow_us, long long latency_ms) {
    watch_cache.slow_us = slow_us;
    watch_cache.latency_ms = latency_ms;
    uint64_t us = UINT64_MAX;
    if (slow_us >= 0) us = (uint64_t)slow_us;
    if (latency_ms > 0 && (uint64_t)latency_ms * 1000 < us) us = (uint64_t)latency_ms * 1000;
    if (us == UINT64_MAX) return watch_cache.ticks = UINT64_MAX;
    return watch_cache.ticks = us > UINT64_MAX / 1000 ? UINT64_MAX - 1 : ns_to_ticks(us * 1000);
}

static inline uint64_t watch_ticks(void) {
    long long slow_us = CONFIG_GET(slowlog_log_slower_than), latency_ms = CONFIG_GET(latency_monitor_threshold);
    if (RK_LIKELY(slow_us == watch_cache.slow_us && latency_ms == watch_cache.latency_ms)) return watch_cache.ticks;
    return watch_ticks_slow(slow_us, latency_ms);
}

/* A call at least as long as the lower threshold: each of the two that it
 * reaches gets it. */
static void watch_slow_call(struct cmd_ctx *c, uint64_t ticks) {
    uint64_t us = ticks_to_ns(ticks) / 1000;
    slowlog_consider(c, us);
    if (!c->in_script)
        latency_add_sample_if_needed(c->cmd->flags & CMD_FAST ? "fast-command" : "command", us / 1000);
}

/* Pipelines repeat one command: remember the last one's counters. */
static _Thread_local struct { const struct command *cmd; struct cmd_stat *stat; } last;

/* This thread's counters of cmd, NULL for a command not in the table (a
 * test's own). */
static struct cmd_stat *stat_of(const struct command *cmd) {
    if (RK_LIKELY(cmd == last.cmd)) return last.stat;
    int id = command_index(cmd);
    if (id < 0) return NULL;
    last.cmd = cmd;
    last.stat = &thread_stats()->cmd[id];
    return last.stat;
}

/* The handler, and for a script its commands' AOF records as one block. */
static inline void run_proc(struct cmd_ctx *c) {
    if (RK_LIKELY(!(c->cmd->flags & CMD_SCRIPT))) {
        c->cmd->proc(c);
        return;
    }
    aof_block_begin();
    c->cmd->proc(c);
    aof_block_end();
}

/* After the handler: the write's AOF record. */
static inline void feed_aof(struct cmd_ctx *c, size_t start) {
    if (RK_UNLIKELY(aof_on()) && !c->block) aof_feed(c, c->r.out->buf + start, c->r.out->len - start);
}

void command_call(struct cmd_ctx *c) {
    c->dirty = 0;
    struct cmd_stat *s = stat_of(c->cmd);
    struct rbuf *out = c->r.out;
    size_t start = out->len;
    if (RK_UNLIKELY(!s)) {
        run_proc(c);
        if (RK_UNLIKELY(c->reader != NULL)) ctx_track_read(c);
        ctx_wrote(c);
        feed_aof(c, start);
        return;
    }
    uint64_t ticks = 0;
    if (RK_LIKELY(s->calls & (SAMPLE_EVERY - 1)) && RK_LIKELY(watch_ticks() == UINT64_MAX)) {
        rk_call_chain = 0;
        run_proc(c);
    } else {
        uint64_t t0 = rk_call_chain ? rk_call_chain : clock_ticks();
        run_proc(c);
        uint64_t t1 = clock_ticks();
        if (rk_call_chain) rk_call_chain = t1;
        ticks = t1 - t0;
        if (!(s->calls & (SAMPLE_EVERY - 1))) record_sample(s, ticks_to_ns(ticks));
    }
    if (RK_UNLIKELY(c->block)) return;   /* it runs again when woken: that run is the call */
    /* the thresholds as they are now, as Redis reads them after the call:
     * the CONFIG SET that lowers one is itself logged */
    if (RK_UNLIKELY(ticks >= watch_ticks())) watch_slow_call(c, ticks);
    if (RK_UNLIKELY(c->cmd->flags & CMD_BLOCKING) && c->waiter &&
        atomic_load_explicit(&rk_waiter_keys, memory_order_relaxed) != 0)
        ctx_served(c);   /* before ctx_wrote: its pop wakes the next waiter, not itself */
    s->calls++;
    if (RK_UNLIKELY(out->len > start && out->buf[start] == '-')) s->failed++;
    if (RK_UNLIKELY(c->reader != NULL)) ctx_track_read(c);   /* client-side caching */
    ctx_wrote(c);
    feed_aof(c, start);
}

void command_count_call(const struct command *cmd, bool failed) {
    struct cmd_stat *s = stat_of(cmd);
    if (!s) return;
    s->calls++;
    s->failed += failed;
}

void command_count_failure(const struct command *cmd) {
    struct cmd_stat *s = stat_of(cmd);
    if (s) s->failed++;
}

void command_rejected(const struct command *cmd) {
    int id = cmd ? command_index(cmd) : -1;
    if (id >= 0) thread_stats()->cmd[id].rejected++;
}

/* The error's code: its first word, if it ends within ERR_NAME_MAX bytes. */
static size_t error_code_len(const char *s, size_t len) {
    const char *space = memchr(s, ' ', len < ERR_NAME_MAX ? len : ERR_NAME_MAX - 1);
    return space ? (size_t)(space - s) : 0;
}

void stats_error_reply(const char *s, size_t len) {
    struct thread_stats *t = thread_stats();
    t->errors_total++;
    size_t n = error_code_len(s, len);
    if (n == 0) {   /* no code: Redis files it under ERR */
        s = "ERR";
        n = 3;
    }
    for (uint32_t i = 0; i < t->nerr; i++)
        if (strncmp(t->err[i].name, s, n) == 0 && t->err[i].name[n] == '\0') {
            t->err[i].count++;
            return;
        }
    if (t->nerr == ERR_KINDS_MAX) return;
    struct err_stat *e = &t->err[t->nerr];
    memcpy(e->name, s, n);
    e->name[n] = '\0';
    e->count = 1;
    __atomic_store_n(&t->nerr, t->nerr + 1, __ATOMIC_RELEASE);
}

void command_stats_reset(void) {
    for (unsigned i = 0; i < registered(); i++) {
        struct thread_stats *t = registry_at(i);
        if (!t) continue;
        for (size_t id = 0; id < COMMAND_IDS_MAX; id++) {
            struct cmd_stat *s = &t->cmd[id];
            struct lat_hist *h = __atomic_load_n(&s->hist, __ATOMIC_ACQUIRE);
            s->calls = s->failed = s->rejected = s->timed = s->timed_ns = 0;
            if (h) memset(h, 0, sizeof *h);
        }
        t->errors_total = 0;
        uint32_t nerr = __atomic_load_n(&t->nerr, __ATOMIC_ACQUIRE);
        for (uint32_t e = 0; e < nerr; e++) t->err[e].count = 0;
    }
}

/* ---- INFO ---- */

static void appendf(struct rbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf(struct rbuf *out, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) rbuf_append(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* INFO keeps its "name:value" lines parseable: Redis's getSafeInfoString. */
static void safe_name(char *dst, size_t cap, const char *src) {
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) dst[i] = strchr("#:\r\n", src[i]) ? '_' : src[i];
    dst[i] = '\0';
}

/* One command's counters summed over every thread. */
static struct cmd_stat sum_command(int id) {
    struct cmd_stat sum = {0};
    for (unsigned i = 0; i < registered(); i++) {
        const struct thread_stats *t = registry_at(i);
        if (!t) continue;
        const struct cmd_stat *s = &t->cmd[id];
        sum.calls += s->calls;
        sum.failed += s->failed;
        sum.rejected += s->rejected;
        sum.timed += s->timed;
        sum.timed_ns += s->timed_ns;
    }
    return sum;
}

void stats_info_commandstats(struct rbuf *out) {
    char name[64];
    for (size_t id = 0; id < command_index_count(); id++) {
        struct cmd_stat s = sum_command((int)id);
        if (!s.calls && !s.failed && !s.rejected) continue;
        /* the sample's mean, times every call */
        double usec = s.timed ? (double)s.timed_ns / (double)s.timed * (double)s.calls / 1000.0 : 0.0;
        safe_name(name, sizeof name, command_by_index(id)->name);
        appendf(out, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
                name, (unsigned long long)s.calls, (unsigned long long)usec,
                s.calls ? usec / (double)s.calls : 0.0, (unsigned long long)s.rejected,
                (unsigned long long)s.failed);
    }
}

uint64_t stats_total_error_replies(void) {
    uint64_t n = 0;
    for (unsigned i = 0; i < registered(); i++) {
        const struct thread_stats *t = registry_at(i);
        if (t) n += t->errors_total;
    }
    return n;
}

/* Error codes of every thread, merged by name, in order of first sight. */
struct err_sum { char name[ERR_NAME_MAX]; uint64_t count; };

static size_t merge_errors(struct err_sum *sum, size_t cap) {
    size_t n = 0;
    for (unsigned i = 0; i < registered(); i++) {
        const struct thread_stats *t = registry_at(i);
        if (!t) continue;
        uint32_t nerr = __atomic_load_n(&t->nerr, __ATOMIC_ACQUIRE);
        for (uint32_t e = 0; e < nerr; e++) {
            size_t k = 0;
            while (k < n && strcmp(sum[k].name, t->err[e].name) != 0) k++;
            if (k == n) {
                if (n == cap) continue;
                memcpy(sum[n].name, t->err[e].name, ERR_NAME_MAX);
                sum[n++].count = 0;
            }
            sum[k].count += t->err[e].count;
        }
    }
    return n;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct err_sum *)a)->name, ((const struct err_sum *)b)->name);
}

/* Sorted by name, as Redis's radix tree of errors lists them; codes whose
 * count went back to 0 (CONFIG RESETSTAT) are gone, as in Redis. */
void stats_info_errorstats(struct rbuf *out) {
    struct err_sum *sum = rk_malloc(ERR_KINDS_MAX * sizeof *sum);
    size_t n = merge_errors(sum, ERR_KINDS_MAX);
    qsort(sum, n, sizeof *sum, by_name);
    char name[ERR_NAME_MAX];
    for (size_t k = 0; k < n; k++) {
        if (!sum[k].count) continue;
        safe_name(name, sizeof name, sum[k].name);
        appendf(out, "errorstat_%s:count=%llu\r\n", name, (unsigned long long)sum[k].count);
    }
    free(sum);
}

/* A configuration parameter's value into buf, or dflt if there is none. */
static const char *config_string(const char *name, const char *dflt, char *buf, size_t cap) {
    return config_get_value(name, buf, cap) ? buf : dflt;
}

#define MAX_PERCENTILES 32

/* latency-tracking-info-percentiles: numbers in 0..100, space separated. */
static size_t parse_percentiles(const char *s, double *p) {
    size_t n = 0;
    while (*s && n < MAX_PERCENTILES) {
        char *end;
        double v = strtod(s, &end);
        if (end == s) break;
        if (v >= 0.0 && v <= 100.0) p[n++] = v;
        s = end;
    }
    return n;
}

/* A percentile's name as Redis prints it: "%f" without trailing zeros. */
static void percentile_name(char *buf, size_t cap, double p) {
    int len = snprintf(buf, cap, "%f", p);
    if (len <= 0 || (size_t)len >= cap) return;
    while (len > 0 && buf[len - 1] == '0') len--;
    if (len > 0 && buf[len - 1] == '.') len--;
    buf[len] = '\0';
}

/* Whether thread t has timed calls of command id, merged into counts. */
static bool merge_hist(const struct thread_stats *t, int id, uint64_t *counts) {
    const struct lat_hist *h = __atomic_load_n(&t->cmd[id].hist, __ATOMIC_ACQUIRE);
    if (!h) return false;
    for (unsigned b = 0; b < LAT_HIST_BUCKETS; b++) counts[b] += h->count[b];
    return true;
}

static void latency_line(struct rbuf *out, const char *cmd, const uint64_t *counts, uint64_t total,
                         const double *p, size_t np) {
    char name[64], pname[48];
    safe_name(name, sizeof name, cmd);
    appendf(out, "latency_percentiles_usec_%s:", name);
    for (size_t i = 0; i < np; i++) {
        percentile_name(pname, sizeof pname, p[i]);
        double us = (double)lat_value_at_percentile(counts, total, p[i]) / 1000.0;
        appendf(out, "p%s=%.3f%s", pname, us, i + 1 < np ? "," : "");
    }
    appendf(out, "\r\n");
}

/* The command's calls over every thread, and its merged histogram. */
static uint64_t command_totals(int id, uint64_t *counts) {
    uint64_t calls = 0;
    memset(counts, 0, LAT_HIST_BUCKETS * sizeof *counts);
    for (unsigned i = 0; i < registered(); i++) {
        const struct thread_stats *t = registry_at(i);
        if (!t) continue;
        calls += t->cmd[id].calls;
        merge_hist(t, id, counts);
    }
    return calls;
}

/* Timings are sampled whatever latency-tracking says (it costs little);
 * the setting decides whether INFO shows them. */
void stats_info_latencystats(struct rbuf *out) {
    char buf[256];
    if (strcmp(config_string("latency-tracking", "yes", buf, sizeof buf), "no") == 0) return;
    double p[MAX_PERCENTILES];
    size_t np = parse_percentiles(config_string("latency-tracking-info-percentiles", "50 99 99.9", buf, sizeof buf), p);
    uint64_t *counts = rk_malloc(LAT_HIST_BUCKETS * sizeof *counts);
    for (size_t id = 0; id < command_index_count(); id++) {
        command_totals((int)id, counts);
        uint64_t total = 0;
        for (unsigned b = 0; b < LAT_HIST_BUCKETS; b++) total += counts[b];
        if (total) latency_line(out, command_by_index(id)->name, counts, total, p, np);
    }
    free(counts);
}

/* ---- LATENCY HISTOGRAM ---- */

/* One command's entry: calls, then the cumulative counts at 1, 2, 4, ...
 * microseconds where they grow, as Redis's log iterator over its
 * HdrHistogram. The histogram holds a sample of the calls (see the top of
 * this file), so its counts are scaled up to the calls. */
static void histogram_entry(struct reply *r, const struct command *cmd, uint64_t calls, const uint64_t *counts) {
    uint64_t timed = 0;
    for (unsigned b = 0; b < LAT_HIST_BUCKETS; b++) timed += counts[b];
    reply_bulk_cstr(r, cmd->name);
    reply_map(r, 2);
    reply_bulk_cstr(r, "calls");
    reply_int(r, (long long)calls);
    reply_bulk_cstr(r, "histogram_usec");
    size_t at = r->out->len;
    size_t pairs = 0;
    uint64_t seen = 0, last = 0;
    unsigned b = 0;
    for (uint64_t bound_us = 1; timed && last < calls && bound_us <= (1ull << 40); bound_us <<= 1) {
        while (b < LAT_HIST_BUCKETS && lat_bucket_high(b) <= bound_us * 1000) seen += counts[b++];
        uint64_t cumulative = seen == timed ? calls : (uint64_t)((double)seen * (double)calls / (double)timed);
        if (cumulative > last) {
            reply_int(r, (long long)bound_us);
            reply_int(r, (long long)cumulative);
            pairs++;
            last = cumulative;
        }
    }
    reply_map_at(r, at, pairs);
}

static size_t histogram_of(struct reply *r, const struct command *cmd, uint64_t *counts) {
    size_t n = 0;
    int id = command_index(cmd);
    uint64_t calls = id >= 0 ? command_totals(id, counts) : 0;
    if (calls) {
        histogram_entry(r, cmd, calls, counts);
        n++;
    }
    for (const struct command *sub = cmd->subcommands; sub && sub->name; sub++) n += histogram_of(r, sub, counts);
    return n;
}

static const struct command *lookup_full_name(struct slice name) {
    const char *bar = memchr(name.ptr, '|', name.len);
    if (!bar) return command_lookup(name.ptr, name.len);
    const struct command *parent = command_lookup(name.ptr, (size_t)(bar - name.ptr));
    if (!parent) return NULL;
    return command_lookup_sub(parent, (struct slice){ bar + 1, name.len - (size_t)(bar + 1 - name.ptr) });
}

/* LATENCY HISTOGRAM [command ...]: for each command named (every command
 * without names; a container stands for its subcommands; unknown names
 * are skipped) that has calls, its calls and the cumulative distribution
 * of its durations over powers of two microseconds. */
void cmd_latency_histogram(struct cmd_ctx *c) {
    struct reply *r = &c->r;
    const struct slice *names = c->argv + 2;
    size_t n = (size_t)c->argc - 2;
    uint64_t *counts = rk_malloc(LAT_HIST_BUCKETS * sizeof *counts);
    size_t at = r->out->len;
    size_t entries = 0;
    if (n == 0) {
        for (size_t i = 0; i < command_count(); i++) entries += histogram_of(r, command_at(i), counts);
    } else {
        for (size_t i = 0; i < n; i++) {
            const struct command *cmd = lookup_full_name(names[i]);
            if (cmd) entries += histogram_of(r, cmd, counts);
        }
    }
    reply_map_at(r, at, entries);
    free(counts);
}
