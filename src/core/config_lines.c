/*
 * The lines of a config file as CONFIG REWRITE rewrites it (Redis's
 * rewriteConfigState and its helpers), and how values are written in
 * them. Both the rewrite (config_rewrite.c) and the special parameters'
 * writers (config_types.c) use these, so they sit below both.
 */
#include "config_types.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *config_strdup(const char *s) { return rk_strndup(s, strlen(s)); }

void rewrite_append(struct rewrite_state *st, char *text, char *option) {
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        st->lines = rk_realloc(st->lines, st->cap * sizeof *st->lines);
    }
    st->lines[st->n++] = (struct rewrite_line){ text, option };
}

bool rewrite_seen(const struct rewrite_state *st, const char *option) {
    for (size_t i = 0; i < st->nseen; i++)
        if (strcmp(st->seen[i], option) == 0) return true;
    return false;
}

void rewrite_mark(struct rewrite_state *st, const char *option) {
    if (rewrite_seen(st, option)) return;
    if (st->nseen == st->capseen) {
        st->capseen = st->capseen ? st->capseen * 2 : 64;
        st->seen = rk_realloc(st->seen, st->capseen * sizeof *st->seen);
    }
    st->seen[st->nseen++] = config_strdup(option);
}

void rewrite_line(struct rewrite_state *st, const char *option, char *line, bool force) {
    rewrite_mark(st, option);
    for (size_t i = 0; i < st->n; i++) {
        struct rewrite_line *l = &st->lines[i];
        if (!l->option || strcmp(l->option, option) != 0) continue;
        free(l->text);
        free(l->option);
        l->text = line;
        l->option = NULL;
        return;
    }
    if (!force && !st->force_all) {
        free(line);
        return;
    }
    if (st->needs_signature) {
        rewrite_append(st, config_strdup(REWRITE_SIGNATURE), NULL);
        st->needs_signature = false;
    }
    rewrite_append(st, line, NULL);
}

void rewrite_format_memory(char *buf, size_t len, long long bytes) {
    const long long gb = 1024LL * 1024 * 1024, mb = 1024 * 1024, kb = 1024;
    if (bytes && bytes % gb == 0) snprintf(buf, len, "%lldgb", bytes / gb);
    else if (bytes && bytes % mb == 0) snprintf(buf, len, "%lldmb", bytes / mb);
    else if (bytes && bytes % kb == 0) snprintf(buf, len, "%lldkb", bytes / kb);
    else snprintf(buf, len, "%lld", bytes);
}

void rewrite_state_free(struct rewrite_state *st) {
    for (size_t i = 0; i < st->n; i++) {
        free(st->lines[i].text);
        free(st->lines[i].option);
    }
    for (size_t i = 0; i < st->nseen; i++) free(st->seen[i]);
    free(st->lines);
    free(st->seen);
}

static mode_t process_umask = 022;

mode_t config_umask(void) { return process_umask; }

void config_note_umask(void) {
    process_umask = umask(0);
    umask(process_umask);
}

/* An argument as a double-quoted word (Redis's sdscatrepr). */
void append_repr(struct rbuf *out, const char *s) {
    rbuf_append(out, "\"", 1);
    for (; *s; s++) {
        char esc[8];
        unsigned char c = (unsigned char)*s;
        const char *k = strchr("\\\"\n\r\t\a\b", c);
        if (c && k) snprintf(esc, sizeof esc, "\\%c", "\\\"nrtab"[k - "\\\"\n\r\t\a\b"]);
        else if (isprint(c)) snprintf(esc, sizeof esc, "%c", c);
        else snprintf(esc, sizeof esc, "\\x%02x", c);
        rbuf_append(out, esc, strlen(esc));
    }
    rbuf_append(out, "\"", 1);
}

