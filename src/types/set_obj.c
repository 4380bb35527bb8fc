/*
 * set_obj: the set value and its encodings (see set_obj.h).
 *
 * Each operation switches on the encoding. The compact encodings are walked
 * linearly or bisected (intset) and stay small because of the thresholds;
 * every threshold is read from the live configuration at the moment it
 * matters, as Redis does, so CONFIG SET affects the next change of a set.
 */
#include <stdlib.h>

#include "ringkv/set_obj.h"
#include "ringkv/config.h"
#include "ringkv/entry.h"
#include "ringkv/intset.h"
#include "ringkv/listpack.h"
#include "ringkv/util.h"

struct set_obj {
    uint8_t enc;
    union {
        struct intset *is;
        struct listpack *lp;
        struct hashmap *hm;
    } u;
};

/* Redis's intsetMaxEntries(): the configured value, capped at 2^30. */
static size_t intset_max(void) {
    long long v = CONFIG_GET(set_max_intset_entries);
    if (v < 0) v = 0;
    if (v > (1LL << 30)) v = 1LL << 30;
    return (size_t)v;
}
static size_t lp_max_entries(void) {
    long long v = CONFIG_GET(set_max_listpack_entries);
    return v < 0 ? 0 : (size_t)v;
}
static size_t lp_max_value(void) {
    long long v = CONFIG_GET(set_max_listpack_value);
    return v < 0 ? 0 : (size_t)v;
}

static struct set_obj *alloc_set(enum set_enc enc) {
    struct set_obj *s = rk_malloc(sizeof *s);
    s->enc = (uint8_t)enc;
    if (enc == SET_ENC_INTSET) s->u.is = intset_new();
    else if (enc == SET_ENC_LISTPACK) s->u.lp = lp_new();
    else s->u.hm = hashmap_new(false);
    return s;
}

struct set_obj *set_obj_new(struct slice first, size_t size_hint) {
    long long v;
    if (str_to_ll(first.ptr, first.len, &v) && size_hint <= intset_max())
        return alloc_set(SET_ENC_INTSET);
    if (size_hint <= lp_max_entries())
        return alloc_set(SET_ENC_LISTPACK);
    return alloc_set(SET_ENC_HT);
}

struct set_obj *set_obj_new_intset(void) { return alloc_set(SET_ENC_INTSET); }

static void free_enc(struct set_obj *s) {
    if (s->enc == SET_ENC_INTSET) intset_free(s->u.is);
    else if (s->enc == SET_ENC_LISTPACK) lp_free(s->u.lp);
    else hashmap_free(s->u.hm);
}

void set_obj_free(struct set_obj *s) {
    if (!s) return;
    free_enc(s);
    free(s);
}

enum set_enc set_obj_enc(const struct set_obj *s) { return (enum set_enc)s->enc; }

const char *set_obj_encoding(const struct set_obj *s) {
    static const char *const names[] = { "intset", "listpack", "hashtable" };
    return names[s->enc];
}

size_t set_obj_count(const struct set_obj *s) {
    if (s->enc == SET_ENC_INTSET) return intset_count(s->u.is);
    if (s->enc == SET_ENC_LISTPACK) return lp_count(s->u.lp);
    return hashmap_count(s->u.hm);
}

size_t set_obj_memory(const struct set_obj *s) {
    size_t n = sizeof *s;
    if (s->enc == SET_ENC_INTSET) return n + intset_memory(s->u.is);
    if (s->enc == SET_ENC_LISTPACK) return n + lp_memory(s->u.lp);
    return n + hashmap_memory(s->u.hm);
}

/* ------------------------------------------------------------ iteration */

void set_iter_init(struct set_iter *it, const struct set_obj *s) {
    it->s = s;
    it->pos = 0;
    if (s->enc == SET_ENC_LISTPACK) it->pos = lp_first(s->u.lp);
    else if (s->enc == SET_ENC_HT) it->hi = hashmap_iter_start(s->u.hm);
}

bool set_iter_next(struct set_iter *it, struct slice *out) {
    const struct set_obj *s = it->s;
    if (s->enc == SET_ENC_INTSET) {
        if (it->pos >= intset_count(s->u.is)) return false;
        int64_t v = intset_get(s->u.is, it->pos++);
        *out = (struct slice){ it->buf, (size_t)ll_to_str(it->buf, sizeof it->buf, v) };
        return true;
    }
    if (s->enc == SET_ENC_LISTPACK) {
        if (it->pos == LP_NONE) return false;
        struct lp_value v;
        lp_get(s->u.lp, it->pos, &v);
        *out = lp_value_str(&v, it->buf);
        it->pos = lp_next(s->u.lp, it->pos);
        return true;
    }
    const struct hm_elem *e = hashmap_iter_next(&it->hi);
    if (!e) return false;
    *out = hm_elem_key(e);
    return true;
}

/* ------------------------------------------------------------ conversion */

static void convert_to_ht(struct set_obj *s) {
    if (s->enc == SET_ENC_HT) return;
    struct hashmap *hm = hashmap_new(false);
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);)
        hashmap_set(hm, m, (struct slice){ NULL, 0 });
    free_enc(s);
    s->enc = SET_ENC_HT;
    s->u.hm = hm;
}

static void convert_intset_to_lp(struct set_obj *s) {
    struct listpack *lp = lp_new();
    char buf[SET_BUF_SIZE];
    for (size_t i = 0, n = intset_count(s->u.is); i < n; i++) {
        int64_t v = intset_get(s->u.is, i);
        lp_push(&lp, (struct slice){ buf, (size_t)ll_to_str(buf, sizeof buf, v) }, true);
    }
    intset_free(s->u.is);
    s->enc = SET_ENC_LISTPACK;
    s->u.lp = lp;
}

void set_obj_convert(struct set_obj *s, enum set_enc enc) {
    if (enc == SET_ENC_HT) convert_to_ht(s);
    else if (enc == SET_ENC_LISTPACK && s->enc == SET_ENC_INTSET) convert_intset_to_lp(s);
}

void set_obj_maybe_convert(struct set_obj *s, size_t size_hint) {
    if ((s->enc == SET_ENC_LISTPACK && size_hint > lp_max_entries()) ||
        (s->enc == SET_ENC_INTSET && size_hint > intset_max()))
        convert_to_ht(s);
}

void set_obj_swap(struct set_obj *a, struct set_obj *b) {
    struct set_obj t = *a;
    *a = *b;
    *b = t;
}

/* ------------------------------------------------------------ membership */

static size_t lp_find_member(const struct listpack *lp, struct slice m) {
    size_t p = lp_first(lp);
    return p == LP_NONE ? LP_NONE : lp_find(lp, p, m, 0);
}

static int digits10(int64_t v) {
    char buf[SET_BUF_SIZE];
    return ll_to_str(buf, sizeof buf, v);
}

bool set_obj_add(struct set_obj *s, struct slice m) {
    if (s->enc == SET_ENC_INTSET) {
        long long v;
        if (str_to_ll(m.ptr, m.len, &v)) {
            if (!intset_add(&s->u.is, v)) return false;
            if (intset_count(s->u.is) > intset_max()) convert_to_ht(s);
            return true;
        }
        /* A non-integer: a listpack if everything fits, else a hashtable
         * (Redis checks the widest integer's digits against the value limit). */
        size_t n = intset_count(s->u.is), maxlen = 0;
        if (n) {
            int a = digits10(intset_get(s->u.is, 0)), b = digits10(intset_get(s->u.is, n - 1));
            maxlen = (size_t)(a > b ? a : b);
        }
        if (n < lp_max_entries() && m.len <= lp_max_value() && maxlen <= lp_max_value() &&
            m.len < UINT32_MAX / 2) {
            convert_intset_to_lp(s);
            lp_push(&s->u.lp, m, true);
        } else {
            convert_to_ht(s);
            hashmap_set(s->u.hm, m, (struct slice){ NULL, 0 });
        }
        return true;
    }
    if (s->enc == SET_ENC_LISTPACK) {
        if (lp_find_member(s->u.lp, m) != LP_NONE) return false;
        if (lp_count(s->u.lp) < lp_max_entries() && m.len <= lp_max_value() &&
            lp_safe_to_add(s->u.lp, lp_encoded_size(m))) {
            lp_push(&s->u.lp, m, true);
        } else {
            convert_to_ht(s);
            hashmap_set(s->u.hm, m, (struct slice){ NULL, 0 });
        }
        return true;
    }
    return hashmap_set(s->u.hm, m, (struct slice){ NULL, 0 });
}

bool set_obj_remove(struct set_obj *s, struct slice m) {
    if (s->enc == SET_ENC_INTSET) {
        long long v;
        return str_to_ll(m.ptr, m.len, &v) && intset_remove(&s->u.is, v);
    }
    if (s->enc == SET_ENC_LISTPACK) {
        size_t p = lp_find_member(s->u.lp, m);
        if (p == LP_NONE) return false;
        lp_delete(&s->u.lp, p, 1);
        return true;
    }
    return hashmap_delete(s->u.hm, m);
}

bool set_obj_contains(const struct set_obj *s, struct slice m) {
    if (s->enc == SET_ENC_INTSET) {
        long long v;
        return str_to_ll(m.ptr, m.len, &v) && intset_contains(s->u.is, v);
    }
    if (s->enc == SET_ENC_LISTPACK) return lp_find_member(s->u.lp, m) != LP_NONE;
    return hashmap_find(s->u.hm, m) != NULL;
}

/* ------------------------------------------------------------ random */

struct slice set_obj_random(const struct set_obj *s, uint64_t r, char buf[SET_BUF_SIZE]) {
    if (s->enc == SET_ENC_INTSET) {
        int64_t v = intset_random(s->u.is, r);
        return (struct slice){ buf, (size_t)ll_to_str(buf, SET_BUF_SIZE, v) };
    }
    if (s->enc == SET_ENC_LISTPACK) {
        struct lp_value v;
        lp_get(s->u.lp, lp_seek(s->u.lp, (long long)(r % lp_count(s->u.lp))), &v);
        return lp_value_str(&v, buf);
    }
    return hm_elem_key(hashmap_random(s->u.hm, r));
}

struct slice set_obj_pop(struct set_obj *s, uint64_t r, struct rbuf *buf) {
    char tmp[SET_BUF_SIZE];
    struct slice m = set_obj_random(s, r, tmp);
    buf->len = 0;
    rbuf_append(buf, m.ptr, m.len);
    struct slice copy = { buf->buf, m.len };
    set_obj_remove(s, copy);
    return copy;
}

/* ------------------------------------------------------------ scan, dup */

struct scan_adapter {
    void (*fn)(void *ud, struct slice m);
    void *ud;
};

static void scan_visit(void *ud, const struct hm_elem *e) {
    struct scan_adapter *a = ud;
    a->fn(a->ud, hm_elem_key(e));
}

uint64_t set_obj_scan(const struct set_obj *s, uint64_t cursor, size_t count,
                      void (*fn)(void *ud, struct slice m), void *ud) {
    if (s->enc == SET_ENC_HT) {
        struct scan_adapter a = { fn, ud };
        return hashmap_scan(s->u.hm, cursor, count, scan_visit, &a);
    }
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);) fn(ud, m);
    return 0;
}

struct set_obj *set_obj_dup(const struct set_obj *s) {
    struct set_obj *d = rk_malloc(sizeof *d);
    d->enc = s->enc;
    if (s->enc == SET_ENC_INTSET) {
        size_t n = intset_memory(s->u.is);
        d->u.is = rk_malloc(n);
        memcpy(d->u.is, s->u.is, n);
    } else if (s->enc == SET_ENC_LISTPACK) {
        size_t n = lp_bytes(s->u.lp);
        d->u.lp = rk_malloc(n);
        memcpy(d->u.lp, s->u.lp, n);
    } else {
        d->u.hm = hashmap_new(false);
        struct hashmap_iter it = hashmap_iter_start(s->u.hm);
        for (const struct hm_elem *e; (e = hashmap_iter_next(&it));)
            hashmap_set(d->u.hm, hm_elem_key(e), (struct slice){ NULL, 0 });
    }
    return d;
}

/* ------------------------------------------------------------ registration */

static void ops_free(void *obj) { set_obj_free(obj); }
static void *ops_dup(const void *obj) { return set_obj_dup(obj); }
static const char *ops_encoding(const void *obj) { return set_obj_encoding(obj); }

static const struct obj_ops set_ops = { ops_free, ops_dup, ops_encoding };

__attribute__((constructor)) static void set_obj_register(void) {
    obj_ops_by_type[OBJ_SET] = &set_ops;
}
