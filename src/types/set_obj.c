/*
 * set_obj: the set value and its encodings (see set_obj.h).
 *
 * Each operation switches on the encoding. The compact encodings are walked
 * linearly or bisected (intset) and stay small because of the thresholds;
 * every threshold is read from the live configuration at the moment it
 * matters, as Redis does, so CONFIG SET affects the next change of a set.
 *
 * The object pointer is the structure's own pointer, with its low bit set
 * for a hashmap (from malloc: at least 8-byte aligned). A compact body (an
 * intset, or a forward-only listpack, which may live inside the key's
 * entry at any even address: entry.h) says itself which it is: bit 31 of
 * its second header word is the listpack's `forward` bit, and holds an
 * intset's width (2, 4 or 8) there, so it is set only in a listpack.
 */
#include <stdlib.h>

#include "ringkv/set_obj.h"
#include "ringkv/config.h"
#include "ringkv/intset.h"
#include "ringkv/listpack.h"
#include "ringkv/obj_types.h"
#include "ringkv/util.h"

#define HT_TAG ((uintptr_t)1)

static inline enum set_enc enc_of(const struct set_obj *s) {
    if ((uintptr_t)s & HT_TAG) return SET_ENC_HT;
    uint32_t word;
    memcpy(&word, (const char *)s + 4, sizeof word);
    return word >> 31 ? SET_ENC_LISTPACK : SET_ENC_INTSET;
}
static inline void *untag(const struct set_obj *s) { return (void *)((uintptr_t)s & ~HT_TAG); }
static inline struct intset *as_is(const struct set_obj *s) { return untag(s); }
static inline struct listpack *as_lp(const struct set_obj *s) { return untag(s); }
static inline struct hashmap *as_hm(const struct set_obj *s) { return untag(s); }

static inline struct set_obj *tag(void *p, enum set_enc enc) {
    return (struct set_obj *)((uintptr_t)p | (enc == SET_ENC_HT ? HT_TAG : 0));
}
static inline struct set_obj *from_is(struct intset *is) { return tag(is, SET_ENC_INTSET); }
static inline struct set_obj *from_lp(struct listpack *lp) { return tag(lp, SET_ENC_LISTPACK); }
static inline struct set_obj *from_hm(struct hashmap *hm) { return tag(hm, SET_ENC_HT); }

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
    if (enc == SET_ENC_INTSET) return from_is(intset_new());
    if (enc == SET_ENC_LISTPACK) return from_lp(lp_new_forward());
    return from_hm(hashmap_new(false));
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

void set_obj_free(struct set_obj *s) {
    if (!s) return;
    switch (enc_of(s)) {
    case SET_ENC_INTSET: intset_free(as_is(s)); break;
    case SET_ENC_LISTPACK: lp_free(as_lp(s)); break;
    default: hashmap_free(as_hm(s)); break;
    }
}

enum set_enc set_obj_enc(const struct set_obj *s) { return enc_of(s); }

const char *set_obj_encoding(const struct set_obj *s) {
    static const char *const names[] = { "intset", "listpack", "hashtable" };
    return names[enc_of(s)];
}

size_t set_obj_count(const struct set_obj *s) {
    if (enc_of(s) == SET_ENC_INTSET) return intset_count(as_is(s));
    if (enc_of(s) == SET_ENC_LISTPACK) return lp_count(as_lp(s));
    return hashmap_count(as_hm(s));
}

size_t set_obj_memory(const struct set_obj *s) {
    if (enc_of(s) == SET_ENC_INTSET) return intset_memory(as_is(s));
    if (enc_of(s) == SET_ENC_LISTPACK) return lp_memory(as_lp(s));
    return hashmap_memory(as_hm(s));
}

/* ------------------------------------------------------------ iteration */

void set_iter_init(struct set_iter *it, const struct set_obj *s) {
    it->s = s;
    it->pos = 0;
    if (enc_of(s) == SET_ENC_LISTPACK) it->pos = lp_first(as_lp(s));
    else if (enc_of(s) == SET_ENC_HT) it->hi = hashmap_iter_start(as_hm(s));
}

bool set_iter_next(struct set_iter *it, struct slice *out) {
    const struct set_obj *s = it->s;
    if (enc_of(s) == SET_ENC_INTSET) {
        const struct intset *is = as_is(s);
        if (it->pos >= intset_count(is)) return false;
        int64_t v = intset_get(is, it->pos++);
        *out = (struct slice){ it->buf, (size_t)ll_to_str(it->buf, sizeof it->buf, v) };
        return true;
    }
    if (enc_of(s) == SET_ENC_LISTPACK) {
        const struct listpack *lp = as_lp(s);
        if (it->pos == LP_NONE) return false;
        struct lp_value v;
        lp_get(lp, it->pos, &v);
        *out = lp_value_str(&v, it->buf);
        it->pos = lp_next(lp, it->pos);
        return true;
    }
    const struct hm_elem *e = hashmap_iter_next(&it->hi);
    if (!e) return false;
    *out = hm_elem_key(e);
    return true;
}

/* ------------------------------------------------------------ conversion */

static void convert_to_ht(struct set_obj **sp) {
    struct set_obj *s = *sp;
    if (enc_of(s) == SET_ENC_HT) return;
    struct hashmap *hm = hashmap_new(false);
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);)
        hashmap_set(hm, m, (struct slice){ NULL, 0 });
    set_obj_free(s);
    *sp = from_hm(hm);
}

static void convert_intset_to_lp(struct set_obj **sp) {
    struct intset *is = as_is(*sp);
    struct listpack *lp = lp_new_forward();
    char buf[SET_BUF_SIZE];
    for (size_t i = 0, n = intset_count(is); i < n; i++) {
        int64_t v = intset_get(is, i);
        lp_push(&lp, (struct slice){ buf, (size_t)ll_to_str(buf, sizeof buf, v) }, true);
    }
    intset_free(is);
    *sp = from_lp(lp);
}

void set_obj_convert(struct set_obj **sp, enum set_enc enc) {
    if (enc == SET_ENC_HT) convert_to_ht(sp);
    else if (enc == SET_ENC_LISTPACK && enc_of(*sp) == SET_ENC_INTSET) convert_intset_to_lp(sp);
}

void set_obj_maybe_convert(struct set_obj **sp, size_t size_hint) {
    enum set_enc enc = enc_of(*sp);
    if ((enc == SET_ENC_LISTPACK && size_hint > lp_max_entries()) ||
        (enc == SET_ENC_INTSET && size_hint > intset_max()))
        convert_to_ht(sp);
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

static bool add_to_ht(struct set_obj **sp, struct slice m) {
    convert_to_ht(sp);
    return hashmap_set(as_hm(*sp), m, (struct slice){ NULL, 0 });
}

bool set_obj_add(struct set_obj **sp, struct slice m) {
    struct set_obj *s = *sp;
    if (enc_of(s) == SET_ENC_INTSET) {
        struct intset *is = as_is(s);
        long long v;
        if (str_to_ll(m.ptr, m.len, &v)) {
            bool added = intset_add(&is, v);
            *sp = from_is(is);
            if (added && intset_count(is) > intset_max()) convert_to_ht(sp);
            return added;
        }
        /* A non-integer: a listpack if everything fits, else a hashtable
         * (Redis checks the widest integer's digits against the value limit). */
        size_t n = intset_count(is), maxlen = 0;
        if (n) {
            int a = digits10(intset_get(is, 0)), b = digits10(intset_get(is, n - 1));
            maxlen = (size_t)(a > b ? a : b);
        }
        if (n < lp_max_entries() && m.len <= lp_max_value() && maxlen <= lp_max_value() &&
            m.len < UINT32_MAX / 2) {
            convert_intset_to_lp(sp);
            struct listpack *lp = as_lp(*sp);
            lp_push(&lp, m, true);
            *sp = from_lp(lp);
        } else {
            add_to_ht(sp, m);
        }
        return true;
    }
    if (enc_of(s) == SET_ENC_LISTPACK) {
        struct listpack *lp = as_lp(s);
        if (lp_find_member(lp, m) != LP_NONE) return false;
        if (lp_count(lp) < lp_max_entries() && m.len <= lp_max_value() &&
            lp_safe_to_add(lp, lp_encoded_size(m))) {
            lp_push(&lp, m, true);
            *sp = from_lp(lp);
        } else {
            add_to_ht(sp, m);
        }
        return true;
    }
    return hashmap_set(as_hm(s), m, (struct slice){ NULL, 0 });
}

bool set_obj_remove(struct set_obj **sp, struct slice m) {
    struct set_obj *s = *sp;
    if (enc_of(s) == SET_ENC_INTSET) {
        struct intset *is = as_is(s);
        long long v;
        if (!str_to_ll(m.ptr, m.len, &v) || !intset_remove(&is, v)) return false;
        *sp = from_is(is);
        return true;
    }
    if (enc_of(s) == SET_ENC_LISTPACK) {
        struct listpack *lp = as_lp(s);
        size_t p = lp_find_member(lp, m);
        if (p == LP_NONE) return false;
        lp_delete(&lp, p, 1);
        *sp = from_lp(lp);
        return true;
    }
    return hashmap_delete(as_hm(s), m);
}

bool set_obj_contains(const struct set_obj *s, struct slice m) {
    if (enc_of(s) == SET_ENC_INTSET) {
        long long v;
        return str_to_ll(m.ptr, m.len, &v) && intset_contains(as_is(s), v);
    }
    if (enc_of(s) == SET_ENC_LISTPACK) return lp_find_member(as_lp(s), m) != LP_NONE;
    return hashmap_find(as_hm(s), m) != NULL;
}

/* ------------------------------------------------------------ random */

struct slice set_obj_random(const struct set_obj *s, uint64_t r, char buf[SET_BUF_SIZE]) {
    if (enc_of(s) == SET_ENC_INTSET) {
        int64_t v = intset_random(as_is(s), r);
        return (struct slice){ buf, (size_t)ll_to_str(buf, SET_BUF_SIZE, v) };
    }
    if (enc_of(s) == SET_ENC_LISTPACK) {
        const struct listpack *lp = as_lp(s);
        struct lp_value v;
        lp_get(lp, lp_seek(lp, (long long)(r % lp_count(lp))), &v);
        return lp_value_str(&v, buf);
    }
    return hm_elem_key(hashmap_random(as_hm(s), r));
}

struct slice set_obj_pop(struct set_obj **sp, uint64_t r, struct rbuf *buf) {
    char tmp[SET_BUF_SIZE];
    struct slice m = set_obj_random(*sp, r, tmp);
    buf->len = 0;
    rbuf_append(buf, m.ptr, m.len);
    /* the empty member leaves a fresh buf without memory: its copy is "",
     * not NULL, for the lookups (memcmp) and adds (memcpy) it goes to */
    struct slice copy = { m.len ? buf->buf : "", m.len };
    set_obj_remove(sp, copy);
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
    if (enc_of(s) == SET_ENC_HT) {
        struct scan_adapter a = { fn, ud };
        return hashmap_scan(as_hm(s), cursor, count, scan_visit, &a);
    }
    struct set_iter it;
    set_iter_init(&it, s);
    for (struct slice m; set_iter_next(&it, &m);) fn(ud, m);
    return 0;
}

struct set_obj *set_obj_dup(const struct set_obj *s) {
    if (enc_of(s) == SET_ENC_INTSET) {
        size_t n = intset_memory(as_is(s));
        struct intset *is = rk_malloc(n);
        memcpy(is, as_is(s), n);
        return from_is(is);
    }
    if (enc_of(s) == SET_ENC_LISTPACK) {
        size_t n = lp_bytes(as_lp(s));
        struct listpack *lp = rk_malloc(n);
        memcpy(lp, as_lp(s), n);
        return from_lp(lp);
    }
    struct hashmap *hm = hashmap_new(false);
    struct hashmap_iter it = hashmap_iter_start(as_hm(s));
    for (const struct hm_elem *e; (e = hashmap_iter_next(&it));)
        hashmap_set(hm, hm_elem_key(e), (struct slice){ NULL, 0 });
    return from_hm(hm);
}

/* ------------------------------------------------------------ memory */

size_t set_obj_usage(const struct set_obj *s, size_t samples) {
    if (enc_of(s) == SET_ENC_HT) return hashmap_usage(as_hm(s), samples);
    return obj_alloc_size(untag(s));
}

/* ------------------------------------------------------------ ops */

static void ops_free(void *obj) { set_obj_free(obj); }
static void *ops_dup(const void *obj) { return set_obj_dup(obj); }
static const char *ops_encoding(const void *obj) { return set_obj_encoding(obj); }
static size_t ops_inline_size(const void *obj) { return enc_of(obj) == SET_ENC_HT ? 0 : set_obj_memory(obj); }
static size_t ops_usage(const void *obj, size_t samples) { return set_obj_usage(obj, samples); }

const struct obj_ops set_obj_ops = { ops_free, ops_dup, ops_encoding, ops_inline_size, ops_usage };
