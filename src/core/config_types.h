/*
 * Inside the configuration: the shape of a parameter row and the value
 * types, shared by config_table.c (the table, CONFIG GET/SET), config_types.c
 * (parsing and printing each type, Redis's rules and error texts) and
 * config_load.c (config files and the command line).
 *
 * Setting a parameter is two steps, so that CONFIG SET with several pairs
 * is all or nothing: parse into a struct pvalue (which checks everything
 * and touches nothing), then store it.
 */
#ifndef RINGKV_CONFIG_TYPES_H
#define RINGKV_CONFIG_TYPES_H

#include "ringkv/config.h"
#include <sys/types.h>

/* What a parameter's value is. */
enum ptype { PT_BOOL, PT_NUM, PT_ENUM, PT_FLAGS, PT_STRING, PT_SPECIAL };

/* Parameter flags (Redis's, plus PF_INERT). */
#define PF_IMMUTABLE   (1u << 0)   /* set at start only */
#define PF_PROTECTED   (1u << 1)   /* CONFIG SET needs enable-protected-configs */
#define PF_HIDDEN      (1u << 2)   /* CONFIG GET by exact name only */
#define PF_MULTI_ARG   (1u << 3)   /* the value is several words */
#define PF_INERT       (1u << 4)   /* stored and reported; ringkv does not act on it yet */
#define PF_EMPTY_NULL  (1u << 5)   /* string: "" is stored as NULL */
/* string: CONFIG SET keeps a value's NUL bytes for the stored hook (a
 * binary requirepass); the stored C string, which CONFIG GET shows, ends
 * at the first */
#define PF_BINARY      (1u << 6)
#define PF_DENY_LOADING (1u << 7)  /* CONFIG SET refused (-LOADING) while the dataset loads */

/* How a number may be written (Redis's numeric config flags). */
#define NF_MEMORY      (1u << 0)   /* 1gb, 512mb, 10k ... */
#define NF_PERCENT     (1u << 1)   /* "50%", kept as -50 */
#define NF_OCTAL       (1u << 2)   /* read and printed in octal */
#define NF_UNSIGNED    (1u << 3)   /* an unsigned C type in Redis: bounds compared unsigned */

struct penum {
    const char *name;
    long long value;
};

/* A parsed value, not stored yet. Which fields mean what depends on the
 * type; specials use x[] and mask for their several numbers. */
struct pvalue {
    long long n;
    const char *e;          /* enum: the canonical name (static) */
    char *s;                /* malloc'd string, or NULL */
    size_t slen;            /* s's length: past a NUL byte for PF_BINARY */
    long long x[9];
    unsigned mask;
    int dirfd;              /* dir: the directory opened by parsing, + 1 (0 = none) */
};

struct param;
struct rewrite_state;

/* The parameters with a syntax of their own (save, bind, ...). */
struct special_ops {
    /* argv holds argc NUL-terminated words; *err a static text on failure */
    bool (*parse)(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err);
    void (*store)(const struct param *p, const struct pvalue *v);
    void (*format)(const struct param *p, struct rbuf *out);
    /* whether v would change nothing (no CONFIG SET apply step then) */
    bool (*same)(const struct param *p, const struct pvalue *v);
    /* CONFIG REWRITE: its lines, as Redis's rewrite function of the
     * parameter writes them (def: the default as CONFIG GET prints it) */
    void (*rewrite)(const struct param *p, const char *def, struct rewrite_state *st);
};

struct param {
    const char *name, *alias;
    uint8_t type;                  /* enum ptype */
    uint8_t num;                   /* NF_* for PT_NUM */
    uint16_t flags;                /* PF_* */
    void *field;                   /* the value's home; NULL: the row's own storage */
    long long min, max, def;       /* numbers, bools, flags */
    const char *def_str;           /* strings and enums */
    const struct penum *enums;     /* PT_ENUM, PT_FLAGS */
    const struct special_ops *special;
    /* after parsing: more checks, or a normalisation (hz) */
    bool (*check)(struct pvalue *v, const char **err);
    /* CONFIG SET, when the value changes: can ringkv take it now? (may
     * adjust the value, as Redis's apply functions do) */
    bool (*apply)(struct pvalue *v, const char **err);
    /* after every store (the default, a config line, CONFIG SET): for a
     * value that something outside the table mirrors (loglevel), which
     * has v, the value stored, at hand */
    void (*stored)(const struct param *p, const struct pvalue *v);
    /* storage of the parameters that have no field in struct rk_config */
    union { long long n; char *s; const char *e; } own;
};

/* ---- config_table.c: the table; config.c: the lock and retired strings */
struct param *param_lookup(const char *name, size_t len, bool *is_alias);
/* Serialises CONFIG GET/SET and loading; values themselves are read
 * without it. */
void config_lock(void);
void config_unlock(void);
/* A string value that replaces another: the old one is kept, never freed. */
void config_retire(char *old);
/* Log a line that an inert parameter was set. */
void config_note_inert(const struct param *p);

/* ---- config_types.c: values */
/* Parse argc words for p (checks and normalisation included). */
bool pvalue_parse(const struct param *p, char **argv, int argc, struct pvalue *v, const char **err);
void pvalue_free(struct pvalue *v);
/* Whether storing v would leave p as it is. */
bool pvalue_same(const struct param *p, const struct pvalue *v);
void param_store(const struct param *p, const struct pvalue *v);
/* p's current value as CONFIG GET prints it (NUL-terminated in out). */
void param_format(const struct param *p, struct rbuf *out);
/* p's value as a config-file line gives it after the name (CONFIG
 * REWRITE, Redis's rewrite functions): sizes in gb/mb/kb, percentages,
 * octal, strings quoted; false for a string that is not set. */
bool param_config_value(const struct param *p, struct rbuf *out);
/* The default into the row's storage (and special state). */
void param_set_default(struct param *p);
/* save from a config file: the first save line replaces the defaults, later
 * ones add to it (Redis 7.0). */
void save_store_from_file(const struct pvalue *v, bool first);
bool param_is_save(const struct param *p);

/* The special parameters and the checks the table refers to. */
extern const struct special_ops special_save, special_obuf, special_oom, special_notify,
    special_bind, special_replicaof, special_percentiles, special_dir;
bool check_dbfilename(struct pvalue *v, const char **err);
bool check_appendfilename(struct pvalue *v, const char **err);
bool check_appenddirname(struct pvalue *v, const char **err);
bool check_hostname(struct pvalue *v, const char **err);
bool check_proc_title(struct pvalue *v, const char **err);
bool check_activedefrag(struct pvalue *v, const char **err);
bool check_shutdown_flags(struct pvalue *v, const char **err);
bool check_hz(struct pvalue *v, const char **err);

/* Every row of the table, in order, and its default as CONFIG GET prints
 * it (config_table.c). */
size_t config_param_count(void);
struct param *config_param_at(size_t i);
const char *config_param_default(size_t i);

/* ---- config_lines.c: CONFIG REWRITE's state (Redis's
 * rewriteConfigState): the old file's lines, which options they set, and
 * which options the rewrite has seen. */
#define REWRITE_SIGNATURE "# Generated by CONFIG REWRITE"

struct rewrite_line {
    char *text;
    char *option;   /* the option this line of the old file sets and that no value replaced yet, or NULL */
};

struct rewrite_state {
    struct rewrite_line *lines;
    size_t n, cap;
    char **seen;    /* options the rewrite has seen */
    size_t nseen, capseen;
    bool needs_signature;
    bool force_all;
};

char *config_strdup(const char *s);   /* rk_malloc'd: aborts rather than fail */
void rewrite_append(struct rewrite_state *st, char *text, char *option);   /* text, option taken */
bool rewrite_seen(const struct rewrite_state *st, const char *option);
void rewrite_state_free(struct rewrite_state *st);
/* The umask noted at start (config_note_umask). */
mode_t config_umask(void);
/* The option's line: replaces the first of the option's lines in the file
 * not replaced yet, or, when there is none, is appended if force (or
 * when everything is written); line is malloc'd and taken. */
void rewrite_line(struct rewrite_state *st, const char *option, char *line, bool force);
/* The option was seen: its lines that were not replaced are blanked. */
void rewrite_mark(struct rewrite_state *st, const char *option);
/* Remember the process's umask (at start, with one thread): the rewritten
 * file gets mode 0644 less it, as Redis's. */
void config_note_umask(void);
/* A byte count as a config file may say it: 1gb, 64mb, 16kb or bytes
 * (Redis's rewriteConfigFormatMemory). */
void rewrite_format_memory(char *buf, size_t len, long long bytes);
/* A value for a config line (Redis's sdscatrepr): double-quoted, escaped. */
void append_repr(struct rbuf *out, const char *s);


#endif
