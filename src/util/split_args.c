/*
 * Splitting a line into words as Redis's sdssplitargs does: the config
 * file, the ACL file and ACL selectors share these rules.
 */
#include "ringkv/util.h"

#include <ctype.h>
#include <stdlib.h>

static int hex_digit(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One word of a line at *pp (Redis's sdssplitargs rules); false on
 * unbalanced quotes or a closing quote not followed by a space. */
static bool next_word(const char **pp, struct rbuf *w) {
    const char *p = *pp;
    enum { PLAIN, DOUBLE, SINGLE } mode = PLAIN;
    for (;;) {
        char c = *p;
        if (mode == DOUBLE) {
            if (!c) return false;
            if (c == '\\' && p[1] == 'x' && hex_digit(p[2]) >= 0 && hex_digit(p[3]) >= 0) {
                char b = (char)(hex_digit(p[2]) * 16 + hex_digit(p[3]));
                rbuf_append(w, &b, 1);
                p += 4;
                continue;
            }
            if (c == '\\' && p[1]) {
                static const char from[] = "nrtba", to[] = "\n\r\t\b\a";
                const char *k = strchr(from, p[1]);
                char b = k ? to[k - from] : p[1];
                rbuf_append(w, &b, 1);
                p += 2;
                continue;
            }
            if (c == '"') {
                if (p[1] && !isspace((unsigned char)p[1])) return false;
                p++;
                break;
            }
            rbuf_append(w, p++, 1);
        } else if (mode == SINGLE) {
            if (!c) return false;
            if (c == '\\' && p[1] == '\'') {
                rbuf_append(w, "'", 1);
                p += 2;
                continue;
            }
            if (c == '\'') {
                if (p[1] && !isspace((unsigned char)p[1])) return false;
                p++;
                break;
            }
            rbuf_append(w, p++, 1);
        } else {
            if (!c || c == ' ' || c == '\n' || c == '\r' || c == '\t') break;
            if (c == '"') mode = DOUBLE;
            else if (c == '\'') mode = SINGLE;
            else rbuf_append(w, p, 1);
            p++;
        }
    }
    *pp = p;
    return true;
}

int split_args(const char *line, char ***words) {
    char **v = NULL;
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        struct rbuf w = { 0 };
        if (!next_word(&p, &w)) {
            rbuf_free(&w);
            free_words(v, n);
            *words = NULL;
            return -1;
        }
        v = rk_realloc(v, (size_t)(n + 1) * sizeof *v);
        v[n] = rk_malloc(w.len + 1);
        if (w.len) memcpy(v[n], w.buf, w.len);
        v[n][w.len] = '\0';
        n++;
        rbuf_free(&w);
    }
    *words = v;
    return n;
}

void free_words(char **words, int n) {
    for (int i = 0; i < n; i++) free(words[i]);
    free(words);
}

