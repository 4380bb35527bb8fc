/*
 * Shared by the listpack and quicklist tests: a reference model of a list of
 * byte strings (a plain array) and a small deterministic random source.
 */
#ifndef RINGKV_TEST_LIST_MODEL_H
#define RINGKV_TEST_LIST_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/common.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}

static struct slice S(const char *s) { return (struct slice){ s, strlen(s) }; }

/* ------------------------------------------------------------ the model */

struct str { char *p; size_t len; };
struct model { struct str *v; size_t n, cap; };

static struct str str_dup(struct slice s) {
    struct str r = { malloc(s.len ? s.len : 1), s.len };
    if (s.len) memcpy(r.p, s.ptr, s.len);
    return r;
}

static void m_insert(struct model *m, size_t i, struct slice s) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = realloc(m->v, m->cap * sizeof(*m->v));
    }
    memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof(*m->v));
    m->v[i] = str_dup(s);
    m->n++;
}

static void m_delete(struct model *m, size_t i, size_t k) {
    if (k == 0) return;
    for (size_t j = i; j < i + k; j++) free(m->v[j].p);
    memmove(m->v + i, m->v + i + k, (m->n - i - k) * sizeof(*m->v));
    m->n -= k;
}

static void m_free(struct model *m) {
    m_delete(m, 0, m->n);
    free(m->v);
}

static struct slice m_at(const struct model *m, size_t i) {
    return (struct slice){ m->v[i].p, m->v[i].len };

#endif
