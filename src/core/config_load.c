/*
 * Loading the configuration at start: a config file, then the command line,
 * as redis-server 7.0 does.
 *
 * The command line is turned into config-file text appended to the file's
 * ("--port 7000 --save" becomes the lines "port "7000"" and "save """), so
 * both go through one parser: each line is split with Redis's quoting
 * rules, its first word names a parameter (or include), and the rest is the
 * value. The first "save" line replaces the default snapshots and later ones
 * add to them, until an include has been read: after one, as in Redis 7.0,
 * every save line replaces what was there. A rename-command line renames
 * (or removes) a command in the command table there and then, before any
 * worker runs (command_rename, command.h). Errors stop the start with Redis's FATAL CONFIG FILE ERROR
 * block, naming the line, on stderr as Redis writes it; a file that cannot
 * be read is a line in the log (log.h), as in Redis. A logfile that cannot
 * be opened for appending is an error too.
 */
#include "config_types.h"
#include "ringkv/acl.h"
#include "ringkv/util.h"
#include "ringkv/log.h"
#include "ringkv/server.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#define MAX_INCLUDE_DEPTH 16

struct load_state {
    bool save_loaded;        /* a save line was seen: later ones add to it */
    bool included;           /* an include was read: save lines replace */
    int depth;               /* include nesting */
    char *err;               /* the fatal message, once there is one */
    bool err_is_block;       /* err is Redis's FATAL CONFIG FILE ERROR block (else a log line) */
};

__attribute__((format(printf, 2, 3)))
static int load_error(struct load_state *st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (!st->err && vasprintf(&st->err, fmt, ap) < 0) st->err = NULL;
    va_end(ap);
    return -1;
}

/* Redis's block, which it writes to stderr (not the log) before exit(1). */
static int line_error(struct load_state *st, int lineno, const char *line, const char *why) {
    if (!st->err) st->err_is_block = true;
    if (lineno <= 0)
        return load_error(st, "\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\n%s\n", RK_VERSION, why);
    return load_error(st, "\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\n"
                          "Reading the configuration file, at line %d\n>>> '%s'\n%s\n", RK_VERSION, lineno, line, why);
}

/* ------------------------------------------------------------ files */

static bool read_file(const char *path, struct rbuf *out) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) rbuf_append(out, buf, n);
    fclose(f);
    return true;
}

/* A path, or a glob pattern whose matches are read one after the other (no
 * match is no text, so an empty conf.d is fine). */
static int read_config_files(const char *path, struct rbuf *out, struct load_state *st) {
    if (!strpbrk(path, "*?[")) {
        if (read_file(path, out)) return 0;
        return load_error(st, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
    }
    glob_t g;
    if (glob(path, 0, NULL, &g) != 0) return 0;
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        if (!read_file(g.gl_pathv[i], out))
            rc = load_error(st, "Fatal error, can't open config file '%s': %s", g.gl_pathv[i], strerror(errno));
    globfree(&g);
    return rc;
}

static int load_lines(char *text, struct load_state *st);

static int include_files(const char *path, struct load_state *st) {
    if (st->depth >= MAX_INCLUDE_DEPTH)
        return load_error(st, "Fatal error: config files include each other more than %d deep ('%s')",
                          MAX_INCLUDE_DEPTH, path);
    struct rbuf text = { 0 };
    int rc = read_config_files(path, &text, st);
    if (rc == 0) {
        rbuf_append(&text, "", 1);
        st->depth++;
        rc = load_lines(text.buf, st);
        st->depth--;
        st->included = true;
    }
    rbuf_free(&text);
    return rc;
}

/* ------------------------------------------------------------ one line */

/* Directives of redis.conf that are not parameters. */
static const char *other_directive(char **argv, int argc, struct load_state *st) {
    static const char *const deprecated[] = { "list-max-ziplist-entries", "list-max-ziplist-value",
                                              "lua-replicate-commands" };
    for (size_t i = 0; i < RK_ARRAY_LEN(deprecated); i++)
        if (strcasecmp(argv[0], deprecated[i]) == 0 && argc == 2) return NULL;   /* ignored, as Redis */
    if (strcasecmp(argv[0], "include") == 0 && argc == 2)
        return include_files(argv[1], st) == 0 ? NULL : "";
    if (strcasecmp(argv[0], "rename-command") == 0 && argc == 3) return command_rename(argv[1], argv[2]);
    /* ACL users, created once the whole configuration is read (acl.h) */
    if (strcasecmp(argv[0], "user") == 0 && argc >= 2) return acl_config_user(argc, argv);
    /* a module or sentinel mode that is not there: starting without them
     * would be another server than the one asked for */
    static const char *const unsupported[] = { "loadmodule", "sentinel" };
    for (size_t i = 0; i < RK_ARRAY_LEN(unsupported); i++)
        if (strcasecmp(argv[0], unsupported[i]) == 0) return "This directive is not supported by ringkv yet";
    if (strchr(argv[0], '.')) return "Module configuration is not supported by ringkv (no modules)";
    return "Bad directive or wrong number of arguments";
}

static const char *set_from_words(struct param *p, char **argv, int argc, struct load_state *st) {
    if (!(p->flags & PF_MULTI_ARG) && argc != 2) return "wrong number of arguments";
    char **words = argv + 1;
    int n = argc - 1;
    char **split = NULL;
    /* --save "900 1 300 10": one word that holds several */
    if ((p->flags & PF_MULTI_ARG) && argc == 2 && argv[1][0]) {
        n = split_args(argv[1], &split);
        if (n < 0) n = 0;
        words = split;
    }
    struct pvalue v;
    const char *err = NULL;
    if (pvalue_parse(p, words, n, &v, &err)) {
        if (param_is_save(p) && !st->included) {
            save_store_from_file(&v, !st->save_loaded);
            st->save_loaded = true;
        } else {
            param_store(p, &v);
        }
        pvalue_free(&v);
    }
    free_words(split, split ? n : 0);
    return err;
}

static int load_line(char *line, int lineno, struct load_state *st) {
    char **argv;
    int argc = split_args(line, &argv);
    if (argc < 0) return line_error(st, lineno, line, "Unbalanced quotes in configuration line");
    const char *err = NULL;
    if (argc > 0) {
        for (char *c = argv[0]; *c; c++) *c = (char)tolower((unsigned char)*c);
        struct param *p = param_lookup(argv[0], strlen(argv[0]), NULL);
        err = p ? set_from_words(p, argv, argc, st) : other_directive(argv, argc, st);
    }
    free_words(argv, argc);
    if (!err) return 0;
    if (!*err) return -1;   /* an included file failed and said why */
    return line_error(st, lineno, line, err);
}

/* Trim, skip comments and blank lines, and load each line in turn. */
static int load_lines(char *text, struct load_state *st) {
    int lineno = 0;
    for (char *line = text; line; ) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        lineno++;
        while (*line && strchr(" \t\r\n", *line)) line++;
        size_t len = strlen(line);
        while (len && strchr(" \t\r\n", line[len - 1])) line[--len] = '\0';
        if (*line && *line != '#' && load_line(line, lineno, st) != 0) return -1;
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

int config_load_text(const char *text, char **err) {
    struct load_state st = { 0 };
    char *copy = strdup(text);
    config_lock();
    int rc = load_lines(copy, &st);
    config_unlock();
    free(copy);
    if (err) *err = st.err;
    else free(st.err);
    return rc;
}

/* ------------------------------------------------------------ the command line */

static void append_str(struct rbuf *out, const char *s) { rbuf_append(out, s, strlen(s)); }

/* The options after the config file as config-file lines. An option name
 * starts a line; the words after it are its value, even ones that start
 * with "--" ("--proc-title-template --x--"), except after "--save", which
 * may stand alone for "no snapshots". */
static void options_text(int argc, char **argv, int j, struct rbuf *out, bool *from_stdin) {
    bool have_value = true;   /* the last option has its value */
    size_t start = out->len;
    for (; j < argc; j++) {
        const char *a = argv[j];
        bool dashdash = a[0] == '-' && a[1] == '-';
        if (strcmp(a, "-") == 0 && (j == 1 || j == argc - 1)) {
            *from_stdin = true;
        } else if (have_value && dashdash) {
            if (out->len > start) append_str(out, "\n");
            append_str(out, a + 2);
            append_str(out, " ");
            char **words;
            int n = split_args(a, &words);
            free_words(words, n > 0 ? n : 0);
            have_value = n != 1;   /* "--port 7000" in one argument has its value */
            bool next_is_option = j + 1 < argc && argv[j + 1][0] == '-' && argv[j + 1][1] == '-';
            if (n == 1 && strcasecmp(a, "--save") == 0 && (next_is_option || j == argc - 1)) {
                append_str(out, "\"\"");
                have_value = true;
            } else if (n == 1 && strcasecmp(a, "--sentinel") == 0 && (next_is_option || j == argc - 1)) {
                have_value = true;
            }
        } else {
            append_repr(out, a);
            append_str(out, " ");
            have_value = true;
        }
    }
}

static void absolute_path(const char *path) {
    char cwd[PATH_MAX], *abs;
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) abs = strdup(path);
    else if (asprintf(&abs, "%s/%s", cwd, path) < 0) abs = NULL;
    rk_config.config_file = abs;
}

int config_load_args(int argc, char **argv) {
    struct load_state st = { 0 };
    struct rbuf text = { 0 }, options = { 0 };
    bool from_stdin = false;
    int j = 1, rc = 0;
    if (argc > 1 && argv[1][0] != '-') {
        absolute_path(argv[1]);
        rc = read_config_files(argv[1], &text, &st);
        j = 2;
    }
    options_text(argc, argv, j, &options, &from_stdin);
    if (rc == 0 && from_stdin) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) rbuf_append(&text, buf, n);
    }
    if (rc == 0) {
        append_str(&text, "\n");
        rbuf_append(&text, options.buf, options.len);
        rbuf_append(&text, "", 1);
        config_lock();
        rc = load_lines(text.buf, &st);
        config_unlock();
    }
    rbuf_free(&text);
    rbuf_free(&options);
    /* As Redis: a log file that cannot be opened is a configuration error. */
    const char *logfile = rk_config.logfile;
    if (rc == 0 && logfile && *logfile) {
        int fd = open(logfile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            char why[512];
            snprintf(why, sizeof why, "Can't open the log file: %s", strerror(errno));
            rc = line_error(&st, 0, "", why);
        } else {
            close(fd);
        }
    }
    if (rc != 0) {
        if (!st.err) rk_log(LL_WARNING, "Bad configuration");
        else if (st.err_is_block) fputs(st.err, stderr);
        else rk_log(LL_WARNING, "%s", st.err);
        free(st.err);
        return -1;
    }
    return 0;
}
