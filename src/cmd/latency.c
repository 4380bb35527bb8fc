/*
 * The latency monitor and the LATENCY command (see latency.h).
 */
#include "ringkv/latency.h"
#include "ringkv/command.h"
#include "ringkv/reply.h"
#include "ringkv/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

#define HISTORY_LEN 160   /* Redis's LATENCY_TS_LEN */
#define EVENTS_MAX 32     /* kinds of events: ringkv reports a handful */
#define EVENT_NAME_MAX 32
#define GRAPH_COLS 80
#define GRAPH_ROWS 4

struct sample { long long time; uint32_t ms; };

struct event {
    char name[EVENT_NAME_MAX];
    struct sample history[HISTORY_LEN];   /* a ring; time 0: unused */
    unsigned next;                        /* where the next second goes */
    uint32_t max_ms;                      /* the longest ever */
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct event *events[EVENTS_MAX];
static int nevents;

/* ---- recording ---- */

/* Event names match without regard to case, as Redis's dict of them. */
static bool named(const struct event *e, const char *name, size_t len) {
    return strlen(e->name) == len && strncasecmp(e->name, name, len) == 0;
}

static struct event *event_named(const char *name, size_t len) {
    for (int i = 0; i < nevents; i++)
        if (named(events[i], name, len)) return events[i];
    return NULL;
}

static unsigned last_index(const struct event *e) { return (e->next + HISTORY_LEN - 1) % HISTORY_LEN; }

/* Samples of one second are one: the longest of them. */
static void add_sample(const char *name, uint32_t ms) {
    long long now = (long long)time(NULL);
    pthread_mutex_lock(&events_lock);
    struct event *e = event_named(name, strlen(name));
    if (!e && nevents < EVENTS_MAX) {
        e = rk_calloc(1, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", name);
        events[nevents++] = e;
    }
    if (e) {
        if (ms > e->max_ms) e->max_ms = ms;
        struct sample *prev = &e->history[last_index(e)];
        if (prev->time == now) {
            if (ms > prev->ms) prev->ms = ms;
        } else {
            e->history[e->next] = (struct sample){ now, ms };
            e->next = (e->next + 1) % HISTORY_LEN;
        }
    }
    pthread_mutex_unlock(&events_lock);
}

void latency_add_sample_if_needed(const char *event, uint64_t ms) {
    long long threshold = CONFIG_GET(latency_monitor_threshold);
    if (threshold > 0 && ms >= (uint64_t)threshold) add_sample(event, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
}

/* Forget the events named (every one for NULL); callers hold events_lock. */
static int reset_events(const char *name, size_t len) {
    int n = 0;
    for (int i = 0; i < nevents;) {
        if (name && !named(events[i], name, len)) {
            i++;
            continue;
        }
        free(events[i]);
        events[i] = events[--nevents];
        n++;
    }
    return n;
}

/* ---- LATENCY ---- */

static void reply_latest(struct reply *r) {
    reply_array(r, (size_t)nevents);
    for (int i = 0; i < nevents; i++) {
        const struct sample *s = &events[i]->history[last_index(events[i])];
        reply_array(r, 4);
        reply_bulk_cstr(r, events[i]->name);
        reply_int(r, s->time);
        reply_int(r, s->ms);
        reply_int(r, events[i]->max_ms);
    }
}

static void reply_history(struct reply *r, const struct event *e) {
    size_t n = 0;
    for (unsigned j = 0; j < HISTORY_LEN; j++) n += e->history[j].time != 0;
    reply_array(r, n);
    for (unsigned j = 0; j < HISTORY_LEN; j++) {
        const struct sample *s = &e->history[(e->next + j) % HISTORY_LEN];
        if (!s->time) continue;
        reply_array(r, 2);
        reply_int(r, s->time);
        reply_int(r, s->ms);
    }
}

/* How long ago, as a short label: 5s, 3m, 2h, 1d. */
static void age_label(char *buf, size_t cap, long long secs) {
    if (secs < 60) snprintf(buf, cap, "%llds", secs);
    else if (secs < 3600) snprintf(buf, cap, "%lldm", secs / 60);
    else if (secs < 86400) snprintf(buf, cap, "%lldh", secs / 3600);
    else snprintf(buf, cap, "%lldd", secs / 86400);
}

/* The samples as columns of '#' scaled between the lowest and the highest,
 * oldest on the left, each with its age underneath. */
static void graph(struct rbuf *b, const struct event *e) {
    const struct sample *cols[HISTORY_LEN];
    size_t n = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (unsigned j = 0; j < HISTORY_LEN; j++) {
        const struct sample *s = &e->history[(e->next + j) % HISTORY_LEN];
        if (!s->time) continue;
        cols[n++] = s;
        if (s->ms < lo) lo = s->ms;
        if (s->ms > hi) hi = s->ms;
    }
    if (n > GRAPH_COLS) {   /* the newest that fit */
        memmove(cols, cols + (n - GRAPH_COLS), GRAPH_COLS * sizeof cols[0]);
        n = GRAPH_COLS;
    }
    rbuf_printf(b, "%s - high %u ms, low %u ms (all time high %u ms)\n", e->name, hi, n ? lo : 0, e->max_ms);
    for (int i = 0; i < GRAPH_COLS; i++) rbuf_append(b, "-", 1);
    rbuf_append(b, "\n", 1);
    for (int row = GRAPH_ROWS; row >= 1; row--) {
        for (size_t i = 0; i < n; i++) {
            uint32_t span = hi - lo;
            int height = span ? 1 + (int)((uint64_t)(cols[i]->ms - lo) * (GRAPH_ROWS - 1) / span) : GRAPH_ROWS;
            rbuf_append(b, height >= row ? "#" : " ", 1);
        }
        rbuf_append(b, "\n", 1);
    }
    long long now = (long long)time(NULL);
    char label[32];
    for (size_t k = 0;; k++) {   /* the labels, written downwards, one character per row */
        bool any = false;
        struct rbuf row = {0};
        for (size_t i = 0; i < n; i++) {
            age_label(label, sizeof label, now - cols[i]->time);
            char ch = k < strlen(label) ? label[k] : ' ';
            any |= ch != ' ';
            rbuf_append(&row, &ch, 1);
        }
        if (any) {
            rbuf_append(b, row.buf, row.len);
            rbuf_append(b, "\n", 1);
        }
        rbuf_free(&row);
        if (!any) break;
    }
}

/* A report for people: each event's figures and what usually causes it. */
static void doctor(struct rbuf *b) {
    long long threshold = CONFIG_GET(latency_monitor_threshold);
    if (nevents == 0) {
        if (threshold == 0)
            rbuf_printf(b, "The latency monitor is off: set latency-monitor-threshold to a number of milliseconds "
                      "(CONFIG SET latency-monitor-threshold 100) to record events that take longer.\n");
        else
            rbuf_printf(b, "No latency event of %lld milliseconds or more has been recorded. ringkv is doing fine.\n",
                   threshold);
        return;
    }
    rbuf_printf(b, "ringkv latency report: events of %lld ms or more.\n\n", threshold);
    for (int i = 0; i < nevents; i++) {
        const struct event *e = events[i];
        uint64_t sum = 0;
        size_t n = 0;
        for (unsigned j = 0; j < HISTORY_LEN; j++)
            if (e->history[j].time) sum += e->history[j].ms, n++;
        rbuf_printf(b, "%d. %s: %zu latency spikes (average %llums), latest %lld seconds ago, worst %ums.\n", i + 1,
               e->name, n, n ? (unsigned long long)(sum / n) : 0ULL,
               (long long)time(NULL) - e->history[last_index(e)].time, e->max_ms);
    }
    rbuf_printf(b, "\nAdvice:\n");
    for (int i = 0; i < nevents; i++) {
        const char *name = events[i]->name;
        if (!strcmp(name, "command") || !strcmp(name, "fast-command"))
            rbuf_printf(b, "- %s: look at SLOWLOG GET for the commands; O(N) commands over big values "
                      "(KEYS, SMEMBERS, LRANGE 0 -1, DEL of a big key: prefer UNLINK) are the usual cause.\n", name);
        else if (!strcmp(name, "expire-cycle"))
            rbuf_printf(b, "- expire-cycle: many keys expiring at once, or big values expiring: "
                      "lazyfree-lazy-expire yes frees them off the shard's thread.\n");
        else if (!strcmp(name, "eviction-cycle") || !strcmp(name, "eviction-del"))
            rbuf_printf(b, "- %s: keys evicted under maxmemory; big values take long to free "
                      "(lazyfree-lazy-eviction yes), and a lower maxmemory-eviction-tenacity shortens a cycle.\n", name);
        else
            rbuf_printf(b, "- %s: see LATENCY HISTORY %s for when it happens.\n", name, name);
    }
}

void cmd_latency(struct cmd_ctx *c) {
    if (ARG_IS(1, "help")) {
        static const char *help[] = {
            "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
            "HELP",
            "    Prints this help.",
        };
        reply_help(&c->r, help, RK_ARRAY_LEN(help));
        return;
    }
    pthread_mutex_lock(&events_lock);
    if (ARG_IS(1, "latest")) {
        reply_latest(&c->r);
    } else if (ARG_IS(1, "history")) {
        const struct event *e = event_named(ARG(2).ptr, ARG(2).len);
        if (e) reply_history(&c->r, e);
        else reply_array(&c->r, 0);
    } else if (ARG_IS(1, "graph")) {
        const struct event *e = event_named(ARG(2).ptr, ARG(2).len);
        if (!e) {
            reply_errorf(&c->r, "ERR No samples available for event '%.*s'", (int)ARG(2).len, ARG(2).ptr);
        } else {
            struct rbuf b = {0};
            graph(&b, e);
            reply_verbatim(&c->r, b.buf, b.len, "txt");
            rbuf_free(&b);
        }
    } else if (ARG_IS(1, "doctor")) {
        struct rbuf b = {0};
        doctor(&b);
        reply_verbatim(&c->r, b.buf, b.len, "txt");
        rbuf_free(&b);
    } else if (ARG_IS(1, "reset")) {
        int n = 0;
        if (c->argc == 2) n = reset_events(NULL, 0);
        for (int j = 2; j < c->argc; j++) n += reset_events(ARG(j).ptr, ARG(j).len);
        reply_int(&c->r, n);
    } else {
        reply_errorf(&c->r, "ERR unknown subcommand '%.*s'. Try LATENCY HELP.", (int)ARG(1).len, ARG(1).ptr);
    }
    pthread_mutex_unlock(&events_lock);
}
