/*
 * Configuration values: how each type of parameter is parsed, checked,
 * stored and printed, with Redis 7.0's rules and error texts (config.c of
 * Redis is the reference for behaviour).
 *
 *   bool     yes / no, any case
 *   number   integers with bounds; memory sizes (1gb = 1024^3, 1g = 10^9),
 *            percentages ("50%", kept negative), octal; unsigned bounds for
 *            what Redis keeps in unsigned types
 *   enum     one name of a list (stored as the list's first name of that
 *            value, which is what CONFIG GET prints)
 *   flags    several names of a list or'ed together (shutdown-on-sig*)
 *   string   with an optional check; "" may mean "not set" (NULL)
 *   special  save, client-output-buffer-limit, oom-score-adj-values,
 *            notify-keyspace-events, bind, replicaof,
 *            latency-tracking-info-percentiles, dir
 *
 * Parsing never stores anything: a struct pvalue carries the result until
 * param_store(), so that CONFIG SET can check every pair before it applies
 * any. Inert specials keep their state in this file; it is only touched
 * under config_lock().
 */
#include "config_types.h"
#include "ringkv/util.h"
#include "ringkv/log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>


static void out_str(struct rbuf *out, const char *s) { rbuf_printf(out, "%s", s); }


/* A message built at run time (the enum list); one per thread is enough,
 * since the text is copied into the reply before the next parse. */
static _Thread_local char errbuf[256];

/* ------------------------------------------------------------ numbers */

bool parse_memory(const char *s, unsigned long long *out) {
    static const struct { const char *unit; unsigned long long mul; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000 * 1000}, {"mb", 1024 * 1024},
        {"g", 1000ULL * 1000 * 1000}, {"gb", 1024ULL * 1024 * 1024},
    };
    if (*s == '-') return false;
    const char *u = s;
    while (*u >= '0' && *u <= '9') u++;
    unsigned long long mul = 0;
    for (size_t i = 0; i < RK_ARRAY_LEN(units); i++)
        if (strcasecmp(u, units[i].unit) == 0) mul = units[i].mul;
    if (!mul || u - s >= 128) return false;
    /* As Redis (strtoull on the digits): no digits reads as 0, and too
     * many saturate; the product wraps as unsigned arithmetic does. */
    unsigned long long v = 0;
    for (const char *p = s; p < u; p++) {
        unsigned d = (unsigned)(*p - '0');
        v = v > (ULLONG_MAX - d) / 10 ? ULLONG_MAX : v * 10 + d;
    }
    *out = v * mul;
    return true;
}

static bool parse_number(const struct param *p, const char *s, long long *out, const char **err) {
    unsigned long long u;
    if ((p->num & NF_MEMORY) && parse_memory(s, &u)) {
        *out = (long long)u;
        return true;
    }
    size_t len = strlen(s);
    if ((p->num & NF_PERCENT) && len > 1 && s[len - 1] == '%' && str_to_ll(s, len - 1, out) && *out >= 0) {
        *out = -*out;
        return true;
    }
    if (p->num & NF_OCTAL) {
        char *end;
        errno = 0;
        *out = strtoll(s, &end, 8);
        if (errno == 0 && *end == '\0') return true;
    }
    if (!(p->num & (NF_MEMORY | NF_PERCENT | NF_OCTAL)) && str_to_ll(s, len, out)) return true;
    if ((p->num & NF_MEMORY) && (p->num & NF_PERCENT)) *err = "argument must be a memory or percent value";
    else if (p->num & NF_MEMORY) *err = "argument must be a memory value";
    else if (p->num & NF_OCTAL) *err = "argument couldn't be parsed as an octal number";
    else *err = "argument couldn't be parsed into an integer";
    return false;
}

static bool check_bounds(const struct param *p, long long v, const char **err) {
    if (p->num & NF_UNSIGNED) {
        unsigned long long u = (unsigned long long)v;
        unsigned long long lo = (unsigned long long)p->min, hi = (unsigned long long)p->max;
        if (u >= lo && u <= hi) return true;
        snprintf(errbuf, sizeof errbuf,
                 (p->num & NF_OCTAL) ? "argument must be between %llo and %llo inclusive"
                                     : "argument must be between %llu and %llu inclusive", lo, hi);
    } else if ((p->num & NF_PERCENT) && v < 0) {
        if (v >= p->min) return true;
        snprintf(errbuf, sizeof errbuf, "percentage argument must be less or equal to %lld", -p->min);
    } else {
        if (v >= p->min && v <= p->max) return true;
        snprintf(errbuf, sizeof errbuf, "argument must be between %lld and %lld inclusive", p->min, p->max);
    }
    *err = errbuf;
    return false;
}

static void format_number(const struct param *p, long long v, struct rbuf *out) {
    if ((p->num & NF_PERCENT) && v < 0) rbuf_printf(out, "%lld%%", -v);
    else if (p->num & NF_MEMORY) rbuf_printf(out, "%llu", (unsigned long long)v);
    else if (p->num & NF_OCTAL) rbuf_printf(out, "%llo", (unsigned long long)v);
    else rbuf_printf(out, "%lld", v);
}

/* ------------------------------------------------------------ enums */

static const struct penum *enum_by_name(const struct penum *e, const char *name) {
    for (; e->name; e++)
        if (strcasecmp(e->name, name) == 0) return e;
    return NULL;
}

/* The first name of that value: what CONFIG GET prints. */
static const char *enum_canonical(const struct penum *e, long long value) {
    for (; e->name; e++)
        if (e->value == value) return e->name;
    return "unknown";
}

static const char *enum_error(const struct penum *e) {
    size_t n = (size_t)snprintf(errbuf, sizeof errbuf, "argument(s) must be one of the following: ");
    for (; e->name && n < sizeof errbuf; e++)
        n += (size_t)snprintf(errbuf + n, sizeof errbuf - n, "%s%s", e->name, e[1].name ? ", " : "");
    return errbuf;
}

static void format_flags(const struct penum *e, long long v, struct rbuf *out) {
    for (const struct penum *i = e; i->name; i++)
        if (i->value == v) { out_str(out, i->name); return; }
    long long left = v;
    size_t start = out->len;
    for (const struct penum *i = e; i->name; i++) {
        if (!i->value || (left & i->value) != i->value) continue;
        rbuf_printf(out, "%s%s", out->len > start ? " " : "", i->name);
        left &= ~i->value;
    }
    if (out->len == start || left) {
        out->len = start;
        out_str(out, "unknown");
    }
}

/* ------------------------------------------------------------ save */

/* The stored text is already in CONFIG GET's form ("3600 1 300 100"). */
static char *save_text;

static bool save_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc == 1 && argv[0][0] == '\0') {   /* save "": no snapshots */
        argc = 0;
        v->n = 1;
    }
    if (argc & 1) {
        *err = "Invalid save parameters";
        return false;
    }
    struct rbuf out = { 0 };
    out_str(&out, "");
    for (int j = 0; j < argc; j++) {
        char *end;
        long long n = strtoll(argv[j], &end, 10);
        if (*end != '\0' || ((j & 1) == 0 && n < 1) || ((j & 1) == 1 && n < 0)) {
            rbuf_free(&out);
            *err = "Invalid save parameters";
            return false;
        }
        /* changes are an int in Redis: what does not fit wraps */
        if (j & 1) rbuf_printf(&out, " %d", (int)n);
        else rbuf_printf(&out, "%s%lld", j ? " " : "", n);
    }
    v->s = out.buf;
    return true;
}

/* Swapped whole, the old text retired: the save-point cron reads it from
 * another thread (config_save_points). */
static void save_swap(char *text) {
    config_retire(__atomic_exchange_n(&save_text, text, __ATOMIC_ACQ_REL));
}

static void save_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    save_swap(config_strdup(v->s ? v->s : ""));
}

const char *config_save_points(void) {
    const char *s = __atomic_load_n(&save_text, __ATOMIC_ACQUIRE);
    return s ? s : "";
}

void save_store_from_file(const struct pvalue *v, bool first) {
    if (v->n || first || !save_text || !*save_text) {   /* save "", or the first save line */
        save_store(NULL, v);
        return;
    }
    if (!v->s || !*v->s) return;
    size_t a = strlen(save_text), b = strlen(v->s);
    char *s = rk_malloc(a + b + 2);
    memcpy(s, save_text, a);
    s[a] = ' ';
    memcpy(s + a + 1, v->s, b + 1);
    save_swap(s);
}

static void save_format(const struct param *p, struct rbuf *out) {
    (void)p;
    out_str(out, save_text ? save_text : "");
}

static bool never_same(const struct param *p, const struct pvalue *v) {
    (void)p; (void)v;
    return false;   /* as Redis: a special parameter counts as changed */
}

/* One line per save point, or save "" (so the defaults do not come back),
 * always written. */
static void save_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    const char *text = save_text ? save_text : "";
    if (!*text) rewrite_line(st, p->name, rk_asprintf("save \"\""), true);
    for (const char *t = text; *t;) {
        long long secs, changes;
        int used = 0;
        if (sscanf(t, "%lld %lld%n", &secs, &changes, &used) != 2) break;
        rewrite_line(st, p->name, rk_asprintf("save %lld %lld", secs, changes), true);
        t += used;
        while (*t == ' ') t++;
    }
    rewrite_mark(st, p->name);
}

const struct special_ops special_save = { save_parse, save_store, save_format, never_same, save_rewrite };

bool param_is_save(const struct param *p) { return p->special == &special_save; }

/* ------------------------------------------------------------ client-output-buffer-limit */

static const char *const obuf_names[OBUF_CLASSES] = { "normal", "slave", "pubsub" };
/* hard bytes, soft bytes, soft seconds per class: rk_config.client_obuf_limit */

static int obuf_class_named(const char *name) {
    if (strcasecmp(name, "normal") == 0) return OBUF_NORMAL;
    if (strcasecmp(name, "slave") == 0 || strcasecmp(name, "replica") == 0) return OBUF_REPLICA;
    if (strcasecmp(name, "pubsub") == 0) return OBUF_PUBSUB;
    return -1;   /* "master" included: it has no limits */
}

static bool obuf_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc % 4) {
        *err = "Wrong number of arguments in buffer limit configuration.";
        return false;
    }
    for (int j = 0; j < argc; j += 4) {
        int cls = obuf_class_named(argv[j]);
        if (cls < 0) {
            *err = "Invalid client class specified in buffer limit configuration.";
            return false;
        }
        unsigned long long hard, soft;
        char *end;
        long long secs = strtoll(argv[j + 3], &end, 10);
        if (!parse_memory(argv[j + 1], &hard) || !parse_memory(argv[j + 2], &soft) ||
            (int)secs < 0 || *end != '\0') {
            *err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            return false;
        }
        v->x[cls * 3] = (long long)hard;
        v->x[cls * 3 + 1] = (long long)soft;
        v->x[cls * 3 + 2] = (int)secs;
        v->mask |= 1u << cls;
    }
    return true;
}

static void obuf_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    for (int c = 0; c < OBUF_CLASSES; c++)
        if (v->mask & (1u << c))
            for (int k = 0; k < 3; k++)
                __atomic_store_n(&rk_config.client_obuf_limit[c][k], v->x[c * 3 + k], __ATOMIC_RELAXED);
}

static void obuf_format(const struct param *p, struct rbuf *out) {
    (void)p;
    for (int c = 0; c < OBUF_CLASSES; c++)
        rbuf_printf(out, "%s%s %llu %llu %ld", c ? " " : "", obuf_names[c],
                   (unsigned long long)rk_config.client_obuf_limit[c][0],
                   (unsigned long long)rk_config.client_obuf_limit[c][1], (long)rk_config.client_obuf_limit[c][2]);
}

/* One line per class, written when the class is not at Redis's default. */
static void obuf_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    static const long long defaults[OBUF_CLASSES][3] = {
        { 0, 0, 0 }, { 256LL << 20, 64LL << 20, 60 }, { 32LL << 20, 8LL << 20, 60 },
    };
    static const char *const names[OBUF_CLASSES] = { "normal", "replica", "pubsub" };
    for (int c = 0; c < OBUF_CLASSES; c++) {
        const long long *v = rk_config.client_obuf_limit[c];
        char hard[64], soft[64];
        rewrite_format_memory(hard, sizeof hard, v[0]);
        rewrite_format_memory(soft, sizeof soft, v[1]);
        bool force = v[0] != defaults[c][0] || v[1] != defaults[c][1] || v[2] != defaults[c][2];
        rewrite_line(st, p->name, rk_asprintf("%s %s %s %s %ld", p->name, names[c], hard, soft, (long)v[2]), force);
    }
}

const struct special_ops special_obuf = { obuf_parse, obuf_store, obuf_format, never_same, obuf_rewrite };

/* ------------------------------------------------------------ oom-score-adj-values */

static int oom_values[3];

static bool oom_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc != 3) {
        *err = "wrong number of arguments";
        return false;
    }
    for (int i = 0; i < 3; i++) {
        char *end;
        long long n = strtoll(argv[i], &end, 10);
        if (*end != '\0' || n < -2000 || n > 2000) {
            *err = "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
            return false;
        }
        v->x[i] = n;
    }
    return true;
}

static void oom_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    for (int i = 0; i < 3; i++) oom_values[i] = (int)v->x[i];
}

static void oom_format(const struct param *p, struct rbuf *out) {
    (void)p;
    rbuf_printf(out, "%d %d %d", oom_values[0], oom_values[1], oom_values[2]);
}

static bool oom_same(const struct param *p, const struct pvalue *v) {
    (void)p;
    return v->x[0] == oom_values[0] && v->x[1] == oom_values[1] && v->x[2] == oom_values[2];
}

static void oom_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    bool force = oom_values[0] != 0 || oom_values[1] != 200 || oom_values[2] != 800;
    rewrite_line(st, p->name, rk_asprintf("%s %d %d %d", p->name, oom_values[0], oom_values[1], oom_values[2]), force);
}

const struct special_ops special_oom = { oom_parse, oom_store, oom_format, oom_same, oom_rewrite };

/* ------------------------------------------------------------ notify-keyspace-events */

/* Redis's classes: K E g $ l s h z x e t m d n, and A for g$lshzxetd. */
enum {
    NK_KEYSPACE = 1 << 0, NK_KEYEVENT = 1 << 1, NK_GENERIC = 1 << 2, NK_STRING = 1 << 3,
    NK_LIST = 1 << 4, NK_SET = 1 << 5, NK_HASH = 1 << 6, NK_ZSET = 1 << 7, NK_EXPIRED = 1 << 8,
    NK_EVICTED = 1 << 9, NK_STREAM = 1 << 10, NK_KEY_MISS = 1 << 11, NK_MODULE = 1 << 13,
    NK_NEW = 1 << 14,
    NK_ALL = NK_GENERIC | NK_STRING | NK_LIST | NK_SET | NK_HASH | NK_ZSET | NK_EXPIRED |
             NK_EVICTED | NK_STREAM | NK_MODULE,
};
static const struct { char c; int flag; } nk_chars[] = {
    {'g', NK_GENERIC}, {'$', NK_STRING}, {'l', NK_LIST}, {'s', NK_SET}, {'h', NK_HASH},
    {'z', NK_ZSET}, {'x', NK_EXPIRED}, {'e', NK_EVICTED}, {'t', NK_STREAM}, {'d', NK_MODULE},
    {'n', NK_NEW}, {'K', NK_KEYSPACE}, {'E', NK_KEYEVENT}, {'m', NK_KEY_MISS}, {'A', NK_ALL},
};
/* stored in rk_config.notify_keyspace_events (notify.h has the same bits) */

static bool notify_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc != 1) {
        *err = "wrong number of arguments";
        return false;
    }
    for (const char *s = argv[0]; *s; s++) {
        size_t i = 0;
        while (i < RK_ARRAY_LEN(nk_chars) && nk_chars[i].c != *s) i++;
        if (i == RK_ARRAY_LEN(nk_chars)) {
            *err = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
            return false;
        }
        v->n |= nk_chars[i].flag;
    }
    return true;
}

static void notify_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    __atomic_store_n(&rk_config.notify_keyspace_events, v->n, __ATOMIC_RELAXED);
}

/* Redis's order: A (which then hides n), or the types one by one; then K E m. */
static void notify_format(const struct param *p, struct rbuf *out) {
    (void)p;
    static const char types[] = "g$lshzxetdn", others[] = "KEm";
    int f = (int)rk_config.notify_keyspace_events;
    out_str(out, "");
    if ((f & NK_ALL) == NK_ALL) out_str(out, "A");
    for (size_t i = 0; i < RK_ARRAY_LEN(nk_chars); i++) {
        char c = nk_chars[i].c;
        bool shown = strchr(others, c) || (strchr(types, c) && (f & NK_ALL) != NK_ALL);
        if (c && shown && (f & nk_chars[i].flag)) rbuf_printf(out, "%c", c);
    }
}

static void notify_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    struct rbuf line = { 0 }, flags = { 0 };
    notify_format(p, &flags);
    rbuf_printf(&line, "%s ", p->name);
    append_repr(&line, flags.buf);
    rbuf_append(&line, "", 1);
    rbuf_free(&flags);
    rewrite_line(st, p->name, line.buf, rk_config.notify_keyspace_events != 0);
}

const struct special_ops special_notify = { notify_parse, notify_store, notify_format, never_same, notify_rewrite };

/* ------------------------------------------------------------ bind */

#define BIND_MAX 16

static bool bind_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc > BIND_MAX) {
        *err = "Too many bind addresses specified.";
        return false;
    }
    if (argc == 1 && argv[0][0] == '\0') argc = 0;   /* bind "": no address */
    struct rbuf out = { 0 };
    out_str(&out, "");
    for (int j = 0; j < argc; j++) rbuf_printf(&out, "%s%s", j ? " " : "", argv[j]);
    v->s = out.buf;
    return true;
}

static void bind_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    char *old = __atomic_exchange_n(&rk_config.bind, config_strdup(v->s), __ATOMIC_ACQ_REL);
    config_retire(old);
}

static void bind_format(const struct param *p, struct rbuf *out) {
    (void)p;
    const char *b = __atomic_load_n(&rk_config.bind, __ATOMIC_ACQUIRE);
    out_str(out, b ? b : "");
}

/* Left out at the default (its lines go), else the addresses as they
 * are, or bind "" for none. */
static void bind_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    const char *b = __atomic_load_n(&rk_config.bind, __ATOMIC_ACQUIRE);
    if (!b) b = "";
    if (strcmp(b, def) == 0) {
        rewrite_mark(st, p->name);
        return;
    }
    rewrite_line(st, p->name, *b ? rk_asprintf("%s %s", p->name, b) : rk_asprintf("%s \"\"", p->name), true);
}

const struct special_ops special_bind = { bind_parse, bind_store, bind_format, never_same, bind_rewrite };

/* ------------------------------------------------------------ replicaof */

static char *master_host;
static int master_port;

static bool replicaof_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc != 2) {
        *err = "wrong number of arguments";
        return false;
    }
    if (strcasecmp(argv[0], "no") == 0 && strcasecmp(argv[1], "one") == 0) return true;
    char *end;
    long port = strtol(argv[1], &end, 10);
    if (port < 0 || port > 65535 || *end != '\0') {
        *err = "Invalid master port";
        return false;
    }
    v->s = config_strdup(argv[0]);
    v->n = port;
    return true;
}

static void replicaof_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    free(master_host);
    master_host = v->s ? config_strdup(v->s) : NULL;
    master_port = (int)v->n;
}

static void replicaof_format(const struct param *p, struct rbuf *out) {
    (void)p;
    if (master_host) rbuf_printf(out, "%s %d", master_host, master_port);
    else out_str(out, "");
}

/* A master's lines go (ringkv is never a replica yet). */
static void replicaof_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    if (!master_host) {
        rewrite_mark(st, p->name);
        return;
    }
    rewrite_line(st, p->name, rk_asprintf("%s %s %d", p->name, master_host, master_port), true);
}

const struct special_ops special_replicaof = { replicaof_parse, replicaof_store, replicaof_format, never_same,
                                               replicaof_rewrite };

/* ------------------------------------------------------------ latency-tracking-info-percentiles */

static char *percentiles_text;

/* "%f" without its trailing zeros (Redis's trimDoubleString) */
static void format_percentile(struct rbuf *out, double d) {
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%f", d);
    if (strchr(buf, '.')) {
        while (n > 0 && buf[n - 1] == '0') n--;
        if (n > 0 && buf[n - 1] == '.') n--;
    }
    buf[n] = '\0';
    out_str(out, buf);
}

static bool percentiles_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc == 1 && argv[0][0] == '\0') argc = 0;
    struct rbuf out = { 0 };
    out_str(&out, "");
    for (int j = 0; j < argc; j++) {
        double d;
        if (!str_to_d(argv[j], strlen(argv[j]), &d)) *err = "Invalid latency-tracking-info-percentiles parameters";
        else if (d > 100.0 || d < 0.0) *err = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        else {
            if (j) out_str(&out, " ");
            format_percentile(&out, d);
            continue;
        }
        rbuf_free(&out);
        return false;
    }
    v->s = out.buf;
    return true;
}

static void percentiles_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    free(percentiles_text);
    percentiles_text = config_strdup(v->s);
}

static void percentiles_format(const struct param *p, struct rbuf *out) {
    (void)p;
    out_str(out, percentiles_text ? percentiles_text : "");
}

/* Always written, "" for none (so the defaults do not come back). */
static void percentiles_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    const char *t = percentiles_text ? percentiles_text : "";
    rewrite_line(st, p->name, *t ? rk_asprintf("%s %s", p->name, t) : rk_asprintf("%s \"\"", p->name), true);
}

const struct special_ops special_percentiles = { percentiles_parse, percentiles_store, percentiles_format, never_same,
                                                 percentiles_rewrite };

/* ------------------------------------------------------------ dir */

/* The working directory is the value, as in Redis. Parsing opens the
 * directory (dirfd), so that storing cannot fail for a missing one. */
static bool dir_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    (void)p;
    if (argc != 1) {
        *err = "wrong number of arguments";
        return false;
    }
    int fd = open(argv[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || access(argv[0], X_OK) != 0) {
        *err = strerror(errno);
        if (fd >= 0) close(fd);
        return false;
    }
    v->dirfd = fd + 1;
    return true;
}

static void dir_store(const struct param *p, const struct pvalue *v) {
    (void)p;
    if (v->dirfd && fchdir(v->dirfd - 1) != 0)
        rk_log(LL_WARNING, "Could not change directory: %s", strerror(errno));
}

static void dir_format(const struct param *p, struct rbuf *out) {
    (void)p;
    char buf[PATH_MAX];
    out_str(out, getcwd(buf, sizeof buf) ? buf : "");
}

/* Always written, as an absolute path. */
static void dir_rewrite(const struct param *p, const char *def, struct rewrite_state *st) {
    (void)def;
    char buf[PATH_MAX];
    if (!getcwd(buf, sizeof buf)) {
        rewrite_mark(st, p->name);
        return;
    }
    struct rbuf line = { 0 };
    rbuf_printf(&line, "%s ", p->name);
    append_repr(&line, buf);
    rbuf_append(&line, "", 1);
    rewrite_line(st, p->name, line.buf, true);
}

const struct special_ops special_dir = { dir_parse, dir_store, dir_format, never_same, dir_rewrite };

/* ------------------------------------------------------------ any type */

static bool parse_plain(const struct param *p, const char *s, struct pvalue *v, const char **err) {
    switch (p->type) {
    case PT_BOOL:
        if (strcasecmp(s, "yes") == 0) v->n = 1;
        else if (strcasecmp(s, "no") == 0) v->n = 0;
        else {
            *err = "argument must be 'yes' or 'no'";
            return false;
        }
        return true;
    case PT_NUM:
        return parse_number(p, s, &v->n, err) && check_bounds(p, v->n, err);
    case PT_ENUM: {
        const struct penum *e = enum_by_name(p->enums, s);
        if (!e) {
            *err = enum_error(p->enums);
            return false;
        }
        v->n = e->value;
        v->e = enum_canonical(p->enums, e->value);
        return true;
    }
    default:   /* PT_STRING */
        v->s = config_strdup(s);
        v->slen = strlen(s);
        return true;
    }
}

static bool parse_flags(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    if (argc == 0) {
        *err = enum_error(p->enums);
        return false;
    }
    for (int i = 0; i < argc; i++) {
        const struct penum *e = enum_by_name(p->enums, argv[i]);
        if (!e) {
            *err = enum_error(p->enums);
            return false;
        }
        v->n |= e->value;
    }
    return true;
}

bool pvalue_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err) {
    memset(v, 0, sizeof *v);
    bool ok;
    if (p->type == PT_SPECIAL) ok = p->special->parse(p, argv, argc, v, err);
    else if (p->type == PT_FLAGS) ok = parse_flags(p, argv, argc, v, err);
    else if (argc != 1) {
        *err = "wrong number of arguments";
        ok = false;
    } else ok = parse_plain(p, argv[0], v, err);
    if (ok && p->check) ok = p->check(v, err);
    if (ok && p->type == PT_STRING && (p->flags & PF_EMPTY_NULL) && v->s && !*v->s) {
        free(v->s);
        v->s = NULL;
    }
    if (!ok) pvalue_free(v);
    return ok;
}

void pvalue_free(struct pvalue *v) {
    free(v->s);
    v->s = NULL;
    if (v->dirfd) close(v->dirfd - 1);
    v->dirfd = 0;
}

static void *value_home(const struct param *p) { return p->field ? p->field : (void *)&p->own; }

bool pvalue_same(const struct param *p, const struct pvalue *v) {
    void *home = value_home(p);
    switch (p->type) {
    case PT_BOOL:
    case PT_NUM:
    case PT_FLAGS:
        return __atomic_load_n((long long *)home, __ATOMIC_RELAXED) == v->n;
    case PT_ENUM:
        return __atomic_load_n((const char **)home, __ATOMIC_RELAXED) == v->e;
    case PT_STRING: {
        const char *cur = __atomic_load_n((char **)home, __ATOMIC_ACQUIRE);
        if (v->s && v->slen != strlen(v->s)) return false;   /* binary: not what the C string shows */
        return cur == v->s || (cur && v->s && strcmp(cur, v->s) == 0);
    }
    default:
        return p->special->same(p, v);
    }
}

static void store_value(const struct param *p, const struct pvalue *v);

void param_store(const struct param *p, const struct pvalue *v) {
    store_value(p, v);
    if (p->stored) p->stored(p, v);
}

static void store_value(const struct param *p, const struct pvalue *v) {
    void *home = value_home(p);
    switch (p->type) {
    case PT_BOOL:
    case PT_NUM:
    case PT_FLAGS:
        __atomic_store_n((long long *)home, v->n, __ATOMIC_RELAXED);
        if (p->field == &rk_config.proto_max_bulk_len)
            __atomic_store_n(&rk_config_proto_max_bulk_len, v->n, __ATOMIC_RELAXED);
        return;
    case PT_ENUM:
        __atomic_store_n((const char **)home, v->e, __ATOMIC_RELEASE);
        return;
    case PT_STRING: {
        char *copy = v->s ? config_strdup(v->s) : NULL;
        config_retire(__atomic_exchange_n((char **)home, copy, __ATOMIC_ACQ_REL));
        return;
    }
    default:
        p->special->store(p, v);
        return;
    }
}

void param_format(const struct param *p, struct rbuf *out) {
    void *home = value_home(p);
    out->len = 0;
    out_str(out, "");
    switch (p->type) {
    case PT_BOOL:
        out_str(out, __atomic_load_n((long long *)home, __ATOMIC_RELAXED) ? "yes" : "no");
        return;
    case PT_NUM:
        format_number(p, __atomic_load_n((long long *)home, __ATOMIC_RELAXED), out);
        return;
    case PT_FLAGS:
        format_flags(p->enums, __atomic_load_n((long long *)home, __ATOMIC_RELAXED), out);
        return;
    case PT_ENUM: {
        const char *e = __atomic_load_n((const char **)home, __ATOMIC_ACQUIRE);
        out_str(out, e ? e : "");
        return;
    }
    case PT_STRING: {
        const char *s = __atomic_load_n((char **)home, __ATOMIC_ACQUIRE);
        out_str(out, s ? s : "");
        return;
    }
    default:
        p->special->format(p, out);
        return;
    }
}

bool param_config_value(const struct param *p, struct rbuf *out) {
    void *home = value_home(p);
    out->len = 0;
    out_str(out, "");
    if (p->type == PT_NUM) {
        long long v = __atomic_load_n((long long *)home, __ATOMIC_RELAXED);
        char buf[64];
        if ((p->num & NF_PERCENT) && v < 0) rbuf_printf(out, "%lld%%", -v);
        else if (p->num & NF_MEMORY) rewrite_format_memory(buf, sizeof buf, v), out_str(out, buf);
        else if (p->num & NF_OCTAL) rbuf_printf(out, "%llo", (unsigned long long)v);
        else rbuf_printf(out, "%lld", v);
        return true;
    }
    if (p->type == PT_STRING) {
        const char *s = __atomic_load_n((char **)home, __ATOMIC_ACQUIRE);
        if (!s) return false;
        append_repr(out, s);
        rbuf_append(out, "", 1);
        out->len--;
        return true;
    }
    param_format(p, out);   /* bool, enum, flags: as CONFIG GET prints them */
    return true;
}

void param_set_default(struct param *p) {
    struct pvalue v = { 0 };
    switch (p->type) {
    case PT_BOOL:
    case PT_NUM:
    case PT_FLAGS:
        v.n = p->def;
        break;
    case PT_ENUM:
        v.e = enum_canonical(p->enums, enum_by_name(p->enums, p->def_str)->value);
        break;
    case PT_STRING:
        v.s = p->def_str ? config_strdup(p->def_str) : NULL;
        v.slen = v.s ? strlen(v.s) : 0;
        break;
    default: {
        if (!p->def_str) return;   /* dir: the directory we were started in */
        char **words;
        int n = split_args(p->def_str, &words);
        const char *err;
        if (!p->special->parse(p, words, n, &v, &err)) abort();   /* a bad default in the table */
        free_words(words, n);
        break;
    }
    }
    param_store(p, &v);
    pvalue_free(&v);
}

/* ------------------------------------------------------------ checks */

static bool path_is_basename(const char *s) { return !strchr(s, '/') && !strchr(s, '\\'); }

bool check_dbfilename(struct pvalue *v, const char **err) {
    if (path_is_basename(v->s)) return true;
    *err = "dbfilename can't be a path, just a filename";
    return false;
}

bool check_appendfilename(struct pvalue *v, const char **err) {
    if (!*v->s) *err = "appendfilename can't be empty";
    else if (!path_is_basename(v->s)) *err = "appendfilename can't be a path, just a filename";
    else return true;
    return false;
}

bool check_appenddirname(struct pvalue *v, const char **err) {
    if (!*v->s) *err = "appenddirname can't be empty";
    else if (!path_is_basename(v->s)) *err = "appenddirname can't be a path, just a dirname";
    else return true;
    return false;
}

bool check_hostname(struct pvalue *v, const char **err) {
    if (strlen(v->s) >= 256) {
        *err = "Hostnames must be less than 256 characters";
        return false;
    }
    for (const char *c = v->s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.') {
            *err = "Hostnames may only contain alphanumeric characters, hyphens or dots";
            return false;
        }
    return true;
}

/* A proc-title-template must use known {variables} only ({{ is a brace)
 * and expand to something besides spaces with an empty title. */
bool check_proc_title(struct pvalue *v, const char **err) {
    static const struct { const char *name; bool empty; } vars[] = {
        {"title", true}, {"listen-addr", false}, {"server-mode", true}, {"config-file", false},
        {"port", false}, {"tls-port", false}, {"unixsocket", true},
    };
    bool visible = false;
    for (const char *p = v->s; *p;) {
        if (*p != '{') {
            visible |= *p++ != ' ';
            continue;
        }
        if (p[1] == '{') {
            visible = true;
            p += 2;
            continue;
        }
        const char *end = strchr(p + 1, '}');
        size_t i = 0;
        if (p[1] && end)
            while (i < RK_ARRAY_LEN(vars) && !(strlen(vars[i].name) == (size_t)(end - p - 1) &&
                                                strncmp(vars[i].name, p + 1, (size_t)(end - p - 1)) == 0))
                i++;
        if (!p[1] || !end || i == RK_ARRAY_LEN(vars)) {
            *err = "template format is invalid or contains unknown variables";
            return false;
        }
        visible |= !vars[i].empty;
        p = end + 1;
    }
    if (visible) return true;
    *err = "template format is invalid or contains unknown variables";
    return false;
}

/* ringkv has no active defragmentation: Redis's answer when built
 * without it. */
bool check_activedefrag(struct pvalue *v, const char **err) {
    if (!v->n) return true;
    *err = "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
           "modified Jemalloc like the one shipped by default with the Redis source distribution";
    return false;
}

bool check_shutdown_flags(struct pvalue *v, const char **err) {
    if ((v->n & 1) && (v->n & 2)) {   /* save and nosave */
        *err = "shutdown options SAVE and NOSAVE can't be used simultaneously";
        return false;
    }
    return true;
}

/* Redis takes any hz and clamps it to 1..500. */
bool check_hz(struct pvalue *v, const char **err) {
    (void)err;
    if (v->n < 1) v->n = 1;
    if (v->n > 500) v->n = 500;
    return true;
}
