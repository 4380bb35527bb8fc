/*
 * shebang.c -- the first line of scripts and libraries, and numkeys.
 *
 *   EVAL bodies:  "#!lua flags=no-writes,allow-oom" (Redis's
 *                 evalExtractShebangFlags): engine must be "lua", the only
 *                 option is flags=, each flag one of Redis's names.
 *   libraries:    "#!lua name=mylib" (functionExtractLibMetaData): the
 *                 engine, and name= given exactly once.
 *
 * The line is split as Redis's sdssplitargs does (blanks separate, "..."
 * with \n \r \t \b \a \xHH escapes, '...' with \'), and C-string rules
 * apply as in Redis (a NUL ends the line).
 */
#include "script_internal.h"

#include "ringkv/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <strings.h>

struct parts {
    char **v;
    int n, cap;
};

static void parts_free(struct parts *p) {
    for (int i = 0; i < p->n; i++) free(p->v[i]);
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

static void parts_push(struct parts *p, struct rbuf *cur) {
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->v = rk_realloc(p->v, (size_t)p->cap * sizeof(char *));
    }
    char *s = rk_malloc(cur->len + 1);
    if (cur->len) memcpy(s, cur->buf, cur->len);
    s[cur->len] = '\0';
    p->v[p->n++] = s;
}

static int hexdigit(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* sdssplitargs on a NUL-terminated line: false on unbalanced quotes. */
static bool splitargs(const char *p, struct parts *out) {
    struct rbuf cur = { 0 };
    memset(out, 0, sizeof(*out));
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        bool inq = false, insq = false, done = false;
        cur.len = 0;
        while (!done) {
            char ch;
            if (inq) {
                if (p[0] == '\\' && p[1] == 'x' && hexdigit((unsigned char)p[2]) >= 0 &&
                    hexdigit((unsigned char)p[3]) >= 0) {
                    ch = (char)(hexdigit((unsigned char)p[2]) * 16 + hexdigit((unsigned char)p[3]));
                    rbuf_append(&cur, &ch, 1);
                    p += 3;
                } else if (p[0] == '\\' && p[1]) {
                    p++;
                    switch (*p) {
                    case 'n': ch = '\n'; break;
                    case 'r': ch = '\r'; break;
                    case 't': ch = '\t'; break;
                    case 'b': ch = '\b'; break;
                    case 'a': ch = '\a'; break;
                    default: ch = *p; break;
                    }
                    rbuf_append(&cur, &ch, 1);
                } else if (*p == '"') {
                    if (p[1] && !isspace((unsigned char)p[1])) goto err;
                    done = true;
                } else if (!*p) {
                    goto err;
                } else {
                    rbuf_append(&cur, p, 1);
                }
            } else if (insq) {
                if (p[0] == '\\' && p[1] == '\'') {
                    p++;
                    rbuf_append(&cur, "'", 1);
                } else if (*p == '\'') {
                    if (p[1] && !isspace((unsigned char)p[1])) goto err;
                    done = true;
                } else if (!*p) {
                    goto err;
                } else {
                    rbuf_append(&cur, p, 1);
                }
            } else {
                switch (*p) {
                case ' ': case '\n': case '\r': case '\t': case '\0':
                    done = true;
                    break;
                case '"':
                    inq = true;
                    break;
                case '\'':
                    insq = true;
                    break;
                default:
                    rbuf_append(&cur, p, 1);
                    break;
                }
            }
            if (*p) p++;
        }
        parts_push(out, &cur);
    }
    rbuf_free(&cur);
    return true;
err:
    rbuf_free(&cur);
    parts_free(out);
    return false;
}

/* The first line as a C string, as strchr(body, '\n') sees it: NULL when no
 * newline comes before the end or a NUL. */
static char *first_line(const char *body, size_t len, size_t *line_len) {
    size_t i = 0;
    while (i < len && body[i] != '\n' && body[i] != '\0') i++;
    if (i == len || body[i] != '\n') return NULL;
    char *line = rk_malloc(i + 1);
    memcpy(line, body, i);
    line[i] = '\0';
    *line_len = i;
    return line;
}

static const struct {
    const char *name;
    int flag;
} shebang_flags[] = {
    { "no-writes", SCRIPT_FLAG_NO_WRITES },
    { "allow-oom", SCRIPT_FLAG_ALLOW_OOM },
    { "allow-stale", SCRIPT_FLAG_ALLOW_STALE },
    { "no-cluster", SCRIPT_FLAG_NO_CLUSTER },
    { "allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT },
};

int script_flag_by_name(const char *s, bool nocase) {
    for (size_t i = 0; i < RK_ARRAY_LEN(shebang_flags); i++)
        if (nocase ? strcasecmp(s, shebang_flags[i].name) == 0 : strcmp(s, shebang_flags[i].name) == 0)
            return shebang_flags[i].flag;
    return 0;
}

bool script_parse_shebang(const char *body, size_t len, int *flags, size_t *shebang_len, struct rbuf *err) {
    *flags = SCRIPT_FLAG_EVAL_COMPAT;
    *shebang_len = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return true;
    size_t line_len;
    char *line = first_line(body, len, &line_len);
    if (!line) {
        script_err_set(err, "ERR Invalid script shebang");
        return false;
    }
    struct parts parts;
    bool ok = false;
    if (!splitargs(line, &parts) || parts.n == 0) {
        script_err_set(err, "ERR Invalid engine in script shebang");
        goto out;
    }
    if (strcmp(parts.v[0], "#!lua") != 0) {
        script_err_setf(err, "ERR Unexpected engine in script shebang: %s", parts.v[0]);
        goto out;
    }
    int f = 0;
    for (int j = 1; j < parts.n; j++) {
        const char *part = parts.v[j];
        if (strncmp(part, "flags=", 6) != 0) {
            script_err_setf(err, "ERR Unknown lua shebang option: %s", part);
            goto out;
        }
        /* sdssplitlen on ",": nothing for an empty list, else every piece,
         * empty ones included */
        const char *s = part + 6;
        if (!*s) continue;
        for (;;) {
            const char *comma = strchr(s, ',');
            size_t n = comma ? (size_t)(comma - s) : strlen(s);
            char name[64];
            int flag = 0;
            if (n < sizeof(name)) {
                memcpy(name, s, n);
                name[n] = '\0';
                flag = script_flag_by_name(name, false);
            }
            if (!flag) {
                script_err_setf(err, "ERR Unexpected flag in script shebang: %.*s", (int)n, s);
                goto out;
            }
            f |= flag;
            if (!comma) break;
            s = comma + 1;
        }
    }
    *flags = f;
    *shebang_len = line_len;
    ok = true;
out:
    parts_free(&parts);
    free(line);
    return ok;
}

bool script_body_flags(struct slice body, int *flags, struct rbuf *err) {
    size_t shebang_len;
    return script_parse_shebang(body.ptr, body.len, flags, &shebang_len, err);
}

bool script_parse_library_meta(const char *code, size_t len, char **name, char **engine, size_t *body_off,
                               struct rbuf *err) {
    *name = *engine = NULL;
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        script_err_set(err, "ERR Missing library metadata");
        return false;
    }
    size_t line_len;
    char *line = first_line(code, len, &line_len);
    if (!line) {
        script_err_set(err, "ERR Invalid library metadata");
        return false;
    }
    struct parts parts;
    bool ok = false;
    if (!splitargs(line, &parts) || parts.n == 0) {
        script_err_set(err, "ERR Invalid library metadata");
        goto out;
    }
    const char *e = parts.v[0];
    *engine = strdup(strlen(e) >= 2 ? e + 2 : "");
    for (int i = 1; i < parts.n; i++) {
        const char *part = parts.v[i];
        if (strncasecmp(part, "name=", 5) == 0) {
            if (*name) {
                script_err_set(err, "ERR Invalid metadata value, name argument was given multiple times");
                goto out;
            }
            *name = strdup(part + 5);
            continue;
        }
        script_err_setf(err, "ERR Invalid metadata value given: %s", part);
        goto out;
    }
    if (!*name) {
        script_err_set(err, "ERR Library name was not given");
        goto out;
    }
    *body_off = line_len;
    ok = true;
out:
    if (!ok) {
        free(*name);
        free(*engine);
        *name = *engine = NULL;
    }
    parts_free(&parts);
    free(line);
    return ok;
}

bool script_parse_numkeys(struct slice s, int nargs, bool fcall, int *nkeys, const char **err) {
    long long n;
    if (!str_to_ll(s.ptr, s.len, &n)) {
        *err = fcall ? SCRIPT_ERR_NUMKEYS_FCALL : SCRIPT_ERR_NOT_INT;
        return false;
    }
    if (n > nargs) {
        *err = SCRIPT_ERR_NUMKEYS_GREATER;
        return false;
    }
    if (n < 0) {
        *err = SCRIPT_ERR_NUMKEYS_NEG;
        return false;
    }
    *nkeys = (int)n;
    return true;
}
