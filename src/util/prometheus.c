/*
 * INFO text to Prometheus's text exposition format (prometheus.h).
 *
 * The text is read line by line; each numeric figure becomes a sample of
 * a metric family, kept with the family until the end, because the format
 * wants every sample of a family in one group while INFO spreads a
 * family over many lines (one cmdstat_ line per command gives a sample of
 * each of four families). Families are then written in the order they
 * were first seen. The text is INFO's own, so lines are short and few:
 * families are found by a linear search.
 */
#include "ringkv/prometheus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct family {
    char *name;
    const char *type;    /* "gauge" or "counter" */
    char *help;          /* escaped already */
    struct rbuf samples;
};

struct expo {
    struct family *f;
    size_t n, cap;
};

struct label { const char *name; const char *val; size_t len; };

/* ---- text helpers ---- */

static bool is_name_char(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == ':';
}

/* p[0..len) with every byte outside [a-zA-Z0-9_:] as '_'. */
static void append_sanitized(struct rbuf *b, const char *p, size_t len) {
    char *d = rbuf_reserve(b, len);
    for (size_t i = 0; i < len; i++) d[i] = is_name_char(p[i]) ? p[i] : '_';
    b->len += len;
}

/* A label value: backslash, double quote and line feed escaped. */
static void append_label_value(struct rbuf *b, const char *p, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '\\') rbuf_append(b, "\\\\", 2);
        else if (p[i] == '"') rbuf_append(b, "\\\"", 2);
        else if (p[i] == '\n') rbuf_append(b, "\\n", 2);
        else rbuf_append(b, &p[i], 1);
    }
}

/* A HELP text: backslash and line feed escaped. */
static void append_help_text(struct rbuf *b, const char *p, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '\\') rbuf_append(b, "\\\\", 2);
        else if (p[i] == '\n') rbuf_append(b, "\\n", 2);
        else rbuf_append(b, &p[i], 1);
    }
}

/* A number as Prometheus (Go's ParseFloat) and INFO both write it:
 * [+-]digits[.digits][e[+-]digits], or with digits after the point only. */
static bool is_number(const char *p, size_t len) {
    size_t i = 0, digits = 0;
    if (i < len && (p[i] == '-' || p[i] == '+')) i++;
    while (i < len && p[i] >= '0' && p[i] <= '9') { i++; digits++; }
    if (i < len && p[i] == '.') {
        i++;
        while (i < len && p[i] >= '0' && p[i] <= '9') { i++; digits++; }
    }
    if (!digits) return false;
    if (i < len && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < len && (p[i] == '-' || p[i] == '+')) i++;
        size_t exp = 0;
        while (i < len && p[i] >= '0' && p[i] <= '9') { i++; exp++; }
        if (!exp) return false;
    }
    return i == len;
}

static bool starts_with(const char *p, size_t len, const char *prefix) {
    size_t n = strlen(prefix);
    return len >= n && memcmp(p, prefix, n) == 0;
}

static bool all_digits(const char *p, size_t len) {
    if (!len) return false;
    for (size_t i = 0; i < len; i++)
        if (p[i] < '0' || p[i] > '9') return false;
    return true;
}

/* ---- families and samples ---- */

static struct family *family_get(struct expo *e, const char *name, const char *type, const char *help, size_t help_len) {
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->f[i].name, name) == 0) return &e->f[i];
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 64;
        e->f = rk_realloc(e->f, e->cap * sizeof *e->f);
    }
    struct family *f = &e->f[e->n++];
    f->name = rk_strndup(name, strlen(name));
    f->type = type;
    struct rbuf h = { 0 };
    append_help_text(&h, help, help_len);
    f->help = rk_strndup(h.buf ? h.buf : "", h.len);
    rbuf_free(&h);
    f->samples = (struct rbuf){ 0 };
    return f;
}

/* One sample of family `name` (sanitized from prefix + suffix) with up to
 * two labels and the value's text as given. */
static void sample(struct expo *e, const char *prefix, const char *suffix, size_t suffix_len, const char *type,
                   const char *help, size_t help_len, const struct label *labels, int nlabels,
                   const char *value, size_t value_len) {
    struct rbuf name = { 0 };
    rbuf_append(&name, prefix, strlen(prefix));
    append_sanitized(&name, suffix, suffix_len);
    rbuf_append(&name, "", 1);
    struct family *f = family_get(e, name.buf, type, help, help_len);
    struct rbuf *s = &f->samples;
    rbuf_append(s, name.buf, name.len - 1);
    rbuf_free(&name);
    for (int i = 0; i < nlabels; i++) {
        rbuf_append(s, i ? "," : "{", 1);
        rbuf_append(s, labels[i].name, strlen(labels[i].name));
        rbuf_append(s, "=\"", 2);
        append_label_value(s, labels[i].val, labels[i].len);
        rbuf_append(s, "\"", 1);
    }
    if (nlabels) rbuf_append(s, "}", 1);
    rbuf_append(s, " ", 1);
    rbuf_append(s, value, value_len);
    rbuf_append(s, "\n", 1);
}

/* ---- what each kind of line gives ---- */

/* The fields of INFO that count up (reset only by CONFIG RESETSTAT or a
 * restart); every other one is a gauge. */
static const char *const counters[] = {
    "rejected_connections", "expired_keys", "evicted_keys", "evicted_clients", "keyspace_hits",
    "keyspace_misses", "unexpected_error_replies", "client_query_buffer_limit_disconnections",
    "client_output_buffer_limit_disconnections", "used_cpu_sys", "used_cpu_user", "used_cpu_sys_children",
    "used_cpu_user_children", "rdb_saves", "aof_rewrites", "aof_delayed_fsync", "lazyfreed_objects",
    "expired_time_cap_reached_count", "sync_full", "sync_partial_ok", "sync_partial_err",
};

static const char *field_type(const char *p, size_t len) {
    if (starts_with(p, len, "total_")) return "counter";
    for (size_t i = 0; i < RK_ARRAY_LEN(counters); i++)
        if (strlen(counters[i]) == len && memcmp(counters[i], p, len) == 0)
            return "counter";
    return "gauge";
}

/* The per-thread figures of `# ringkv` that count up. */
static const char *thread_type(const char *key, size_t len) {
    static const char *const gauges[] = { "cpu", "connections", "syscalls_per_command", "iteration_max_us",
                                          "batch_wait_us" };
    for (size_t i = 0; i < RK_ARRAY_LEN(gauges); i++)
        if (strlen(gauges[i]) == len && memcmp(gauges[i], key, len) == 0) return "gauge";
    return "counter";
}

struct line {
    const char *section; size_t section_len;   /* of the last "# Section" header */
    const char *field; size_t field_len;
};

/* HELP text "INFO <Section> <field>[ <key>]". */
static size_t help_text(char *buf, size_t cap, const struct line *l, const char *key, size_t key_len) {
    int n = snprintf(buf, cap, "INFO %.*s %.*s%s%.*s", (int)l->section_len, l->section, (int)l->field_len, l->field,
                     key ? " " : "", key ? (int)key_len : 0, key ? key : "");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* cmdstat_<cmd>: key=value of one command. */
static void command_figure(struct expo *e, const struct line *l, const char *key, size_t kl, const char *v, size_t vl) {
    struct label cmd = { "cmd", l->field + 8, l->field_len - 8 };
    char help[256];
    size_t hl;
    if (kl == 5 && memcmp(key, "calls", 5) == 0) {
        hl = (size_t)snprintf(help, sizeof help, "Calls per command (INFO commandstats calls)");
        sample(e, "redis_commands_total", "", 0, "counter", help, hl, &cmd, 1, v, vl);
    } else if (kl == 4 && memcmp(key, "usec", 4) == 0) {
        char secs[64];
        size_t sl;
        if (all_digits(v, vl) && vl <= 18) {
            unsigned long long us = strtoull(v, NULL, 10);
            sl = (size_t)snprintf(secs, sizeof secs, "%llu.%06llu", us / 1000000, us % 1000000);
        } else {
            sl = (size_t)snprintf(secs, sizeof secs, "%.17g", strtod(v, NULL) / 1e6);
        }
        hl = (size_t)snprintf(help, sizeof help, "Time spent per command in seconds (INFO commandstats usec)");
        sample(e, "redis_commands_duration_seconds_total", "", 0, "counter", help, hl, &cmd, 1, secs, sl);
    } else if ((kl == 14 && memcmp(key, "rejected_calls", 14) == 0) || (kl == 12 && memcmp(key, "failed_calls", 12) == 0)) {
        char name[32];
        snprintf(name, sizeof name, "%.*s_total", (int)kl, key);
        hl = (size_t)snprintf(help, sizeof help, "INFO commandstats %.*s", (int)kl, key);
        sample(e, "redis_commands_", name, strlen(name), "counter", help, hl, &cmd, 1, v, vl);
    } else {
        hl = (size_t)snprintf(help, sizeof help, "INFO commandstats %.*s", (int)kl, key);
        sample(e, "redis_commands_", key, kl, "gauge", help, hl, &cmd, 1, v, vl);
    }
}

/* One key=value of a key=value,... line. */
static void list_figure(struct expo *e, const struct line *l, const char *key, size_t kl, const char *v, size_t vl) {
    char help[256];
    size_t hl = help_text(help, sizeof help, l, key, kl);
    const char *f = l->field;
    size_t fl = l->field_len;
    bool keyspace = l->section_len == 8 && memcmp(l->section, "Keyspace", 8) == 0;
    bool ringkv = l->section_len == 6 && memcmp(l->section, "ringkv", 6) == 0;
    if (keyspace && fl > 2 && starts_with(f, fl, "db") && all_digits(f + 2, fl - 2)) {
        struct label db = { "db", f, fl };
        sample(e, "redis_db_", key, kl, "gauge", help, hl, &db, 1, v, vl);
    } else if (fl > 8 && starts_with(f, fl, "cmdstat_")) {
        command_figure(e, l, key, kl, v, vl);
    } else if (fl > 10 && starts_with(f, fl, "errorstat_")) {
        struct label err = { "err", f + 10, fl - 10 };
        if (kl == 5 && memcmp(key, "count", 5) == 0) {
            hl = (size_t)snprintf(help, sizeof help, "Error replies per error code (INFO errorstats count)");
            sample(e, "redis_errors_total", "", 0, "counter", help, hl, &err, 1, v, vl);
        } else {
            sample(e, "redis_errors_", key, kl, "gauge", help, hl, &err, 1, v, vl);
        }
    } else if (fl > 25 && starts_with(f, fl, "latency_percentiles_usec_") && kl > 1 && key[0] == 'p' &&
               is_number(key + 1, kl - 1)) {
        char q[32];
        snprintf(q, sizeof q, "%.*s", (int)(kl - 1), key + 1);
        int ql = snprintf(q, sizeof q, "%g", strtod(q, NULL) / 100);
        struct label lb[2] = { { "cmd", f + 25, fl - 25 }, { "quantile", q, (size_t)ql } };
        hl = (size_t)snprintf(help, sizeof help, "Latency percentiles per command in microseconds (INFO latencystats)");
        sample(e, "redis_latency_percentiles_usec", "", 0, "gauge", help, hl, lb, 2, v, vl);
    } else if (ringkv && fl > 6 && starts_with(f, fl, "thread") && all_digits(f + 6, fl - 6)) {
        struct label th = { "thread", f + 6, fl - 6 };
        hl = (size_t)snprintf(help, sizeof help, "INFO ringkv per-thread %.*s", (int)kl, key);
        sample(e, "redis_thread_", key, kl, thread_type(key, kl), help, hl, &th, 1, v, vl);
    } else {
        struct rbuf name = { 0 };
        rbuf_append(&name, f, fl);
        rbuf_append(&name, "_", 1);
        rbuf_append(&name, key, kl);
        sample(e, "redis_", name.buf, name.len, "gauge", help, hl, NULL, 0, v, vl);
        rbuf_free(&name);
    }
}

/* A value that is a key=value,... list: every key an identifier. */
static bool is_list(const char *v, size_t vl) {
    if (!memchr(v, '=', vl)) return false;
    for (const char *p = v, *end = v + vl; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *item_end = comma ? comma : end;
        const char *eq = memchr(p, '=', (size_t)(item_end - p));
        if (!eq || eq == p) return false;
        for (const char *k = p; k < eq; k++)
            if (!is_name_char(*k) && *k != '.') return false;
        p = comma ? comma + 1 : end;
    }
    return true;
}

static void info_line(struct expo *e, struct line *l, const char *p, size_t len) {
    const char *colon = memchr(p, ':', len);
    if (!colon || colon == p) return;
    l->field = p;
    l->field_len = (size_t)(colon - p);
    const char *v = colon + 1;
    size_t vl = len - l->field_len - 1;
    if (is_number(v, vl)) {
        char help[256];
        size_t hl = help_text(help, sizeof help, l, NULL, 0);
        sample(e, "redis_", l->field, l->field_len, field_type(l->field, l->field_len), help, hl, NULL, 0, v, vl);
        return;
    }
    if (!is_list(v, vl)) return;   /* text: not a figure */
    for (const char *q = v, *end = v + vl; q < end;) {
        const char *comma = memchr(q, ',', (size_t)(end - q));
        const char *item_end = comma ? comma : end;
        const char *eq = memchr(q, '=', (size_t)(item_end - q));
        if (is_number(eq + 1, (size_t)(item_end - eq - 1)))
            list_figure(e, l, q, (size_t)(eq - q), eq + 1, (size_t)(item_end - eq - 1));
        q = comma ? comma + 1 : end;
    }
}

void prom_from_info(const char *info, size_t len, struct rbuf *out) {
    struct expo e = { 0 };
    struct line l = { "", 0, NULL, 0 };
    for (const char *p = info, *end = info + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t n = (size_t)(line_end - p);
        if (n && p[n - 1] == '\r') n--;
        if (n >= 2 && p[0] == '#' && p[1] == ' ') {
            l.section = p + 2;
            l.section_len = n - 2;
        } else if (n) {
            info_line(&e, &l, p, n);
        }
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < e.n; i++) {
        struct family *f = &e.f[i];
        rbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
        rbuf_append(out, f->samples.buf, f->samples.len);
        free(f->name);
        free(f->help);
        rbuf_free(&f->samples);
    }
    free(e.f);
}
