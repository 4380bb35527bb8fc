/*
 * The stream object (see stream.h for the layout). Entries are appended to
 * the last node until it reaches a limit; deletions flag entries, and a
 * node is freed once none of its entries is live. Reading walks a node's
 * entries with the listpack's own cursor. Nodes are forward-only listpacks
 * and entries carry no lp-count (stream.h): a backward walk scans the node
 * forward once per STREAM_ITER_BACK entries, remembering where they start.
 */
#include "ringkv/stream.h"
#include "ringkv/entry.h"
#include "ringkv/obj_types.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <string.h>


/* A node's master entry: count, deleted, num-fields, then the fields. */
#define MASTER_COUNT   0
#define MASTER_DELETED 1

/* ---------------------------------------------------------------- IDs */

size_t stream_id_format(struct stream_id id, char buf[STREAM_ID_STR_MAX]) {
    size_t n = (size_t)ull_to_str(buf, 21, id.ms);
    buf[n++] = '-';
    n += (size_t)ull_to_str(buf + n, 21, id.seq);
    buf[n] = '\0';
    return n;
}

static bool parse_u64(const char *p, size_t len, uint64_t *out) {
    unsigned long long v;
    if (len == 0 || !str_to_ull(p, len, &v)) return false;
    *out = v;
    return true;
}

bool stream_id_parse(struct slice s, uint64_t missing_seq, bool strict, struct stream_id *id, bool *seq_given) {
    if (seq_given) *seq_given = true;
    if (s.len > 127) return false;
    if (!strict && s.len == 1 && (s.ptr[0] == '-' || s.ptr[0] == '+')) {
        *id = s.ptr[0] == '-' ? STREAM_ID_MIN : STREAM_ID_MAX;
        return true;
    }
    const char *dash = memchr(s.ptr, '-', s.len);
    if (!dash) {
        if (!parse_u64(s.ptr, s.len, &id->ms)) return false;
        id->seq = missing_seq;
        return true;
    }
    size_t mslen = (size_t)(dash - s.ptr), seqlen = s.len - mslen - 1;
    if (!parse_u64(s.ptr, mslen, &id->ms)) return false;
    if (seq_given && seqlen == 1 && dash[1] == '*') {
        id->seq = 0;
        *seq_given = false;
        return true;
    }
    return parse_u64(dash + 1, seqlen, &id->seq);
}

bool stream_id_incr(struct stream_id *id) {
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return false;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return true;
}

bool stream_id_decr(struct stream_id *id) {
    if (id->seq == 0) {
        if (id->ms == 0) return false;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return true;
}

/* ---------------------------------------------------------------- listpack helpers */

static long long lp_int(const struct listpack *lp, size_t pos) {
    struct lp_value v;
    lp_get(lp, pos, &v);
    if (v.is_int) return v.ival;
    long long n = 0;
    str_to_ll(v.str.ptr, v.str.len, &n);
    return n;
}

static struct lp_value int_value(long long v) { return (struct lp_value){ .is_int = true, .ival = v }; }
static struct lp_value str_value(struct slice s) { return (struct lp_value){ .str = s }; }

static size_t lp_skip(const struct listpack *lp, size_t pos, long long n) {
    return pos == LP_NONE || n <= 0 ? pos : lp_next_n(lp, pos, (size_t)n);
}

/* The position of a node's first entry (after the master's terminator),
 * LP_NONE when it has none; the number of master fields into *nf. */
static size_t node_first_entry(const struct listpack *lp, long long *nf, size_t *first_field) {
    size_t p = lp_skip(lp, lp_first(lp), 2);   /* num-fields */
    *nf = lp_int(lp, p);
    p = lp_next(lp, p);
    if (first_field) *first_field = p;
    return lp_next(lp, lp_skip(lp, p, *nf));   /* past the fields and the 0 */
}

/* One entry's head, read at p: flags, ID, and q, the element after the
 * seq-diff (num-fields, or the first value under SAMEFIELDS). */
struct entry_head {
    long long flags;
    struct stream_id id;
    size_t q;
};

static void read_head(const struct listpack *lp, struct stream_id master, size_t p, struct entry_head *h) {
    h->flags = lp_int(lp, p);
    size_t ms = lp_next(lp, p), seq = lp_next(lp, ms);
    h->id = (struct stream_id){ master.ms + (uint64_t)lp_int(lp, ms), master.seq + (uint64_t)lp_int(lp, seq) };
    h->q = lp_next(lp, seq);
}

/* The position after the entry whose head is h (LP_NONE after the last),
 * in a node of master_fields master fields. */
static size_t entry_end(const struct listpack *lp, const struct entry_head *h, long long master_fields) {
    if (h->flags & STREAM_FLAG_SAMEFIELDS) return lp_skip(lp, h->q, master_fields);
    return lp_skip(lp, h->q, 1 + 2 * lp_int(lp, h->q));
}

/* The position after the entry at p, without reading its ID. */
static size_t entry_skip(const struct listpack *lp, size_t p, long long master_fields) {
    if (lp_int(lp, p) & STREAM_FLAG_SAMEFIELDS) return lp_skip(lp, p, 3 + master_fields);
    size_t q = lp_skip(lp, p, 3);
    return lp_skip(lp, q, 1 + 2 * lp_int(lp, q));
}

/* The last entry's ID in a node, by a walk over its entries. */
static struct stream_id node_last_id(const struct listpack *lp, struct stream_id master) {
    long long nf;
    struct entry_head h = { .id = master };
    for (size_t p = node_first_entry(lp, &nf, NULL); p != LP_NONE; p = entry_end(lp, &h, nf))
        read_head(lp, master, p, &h);
    return h.id;
}

/* ---------------------------------------------------------------- lifetime */

struct stream *stream_new(void) {
    struct stream *s = rk_calloc(1, sizeof *s);
    s->nodes = idtree_new();
    return s;
}

static void free_lp(void *lp) { lp_free(lp); }

static void consumer_free(struct stream_consumer *c) {
    idtree_free(c->pel, NULL);
    free((void *)c->name.ptr);
    free(c);
}

static void cg_free(struct stream_cg *cg) {
    for (size_t i = 0; i < cg->nconsumers; i++) consumer_free(cg->consumers[i]);
    free(cg->consumers);
    idtree_free(cg->pel, free);
    free((void *)cg->name.ptr);
    free(cg);
}

void stream_free(struct stream *s) {
    if (!s) return;
    idtree_free(s->nodes, free_lp);
    for (size_t i = 0; i < s->ngroups; i++) cg_free(s->groups[i]);
    free(s->groups);
    free(s);
}

static struct slice dup_slice(struct slice s) {
    char *p = rk_malloc(s.len ? s.len : 1);
    if (s.len) memcpy(p, s.ptr, s.len);   /* an empty name may have no bytes at all */
    return (struct slice){ p, s.len };
}

static struct listpack *lp_copy(const struct listpack *lp) {
    struct listpack *c = rk_malloc(lp_bytes(lp));
    memcpy(c, lp, lp_bytes(lp));
    return c;
}

static struct stream_cg *cg_dup(const struct stream_cg *src) {
    struct stream_cg *cg = rk_calloc(1, sizeof *cg);
    cg->name = dup_slice(src->name);
    cg->last_id = src->last_id;
    cg->entries_read = src->entries_read;
    cg->pel = idtree_new();
    cg->nconsumers = src->nconsumers;
    cg->consumers = rk_calloc(src->nconsumers ? src->nconsumers : 1, sizeof *cg->consumers);
    for (size_t i = 0; i < src->nconsumers; i++) {
        const struct stream_consumer *sc = src->consumers[i];
        struct stream_consumer *c = rk_calloc(1, sizeof *c);
        c->name = dup_slice(sc->name);
        c->seen_time = sc->seen_time;
        c->pel = idtree_new();
        cg->consumers[i] = c;
        struct idtree_iter it;
        idtree_seek(&it, sc->pel, STREAM_ID_MIN);
        struct stream_id id;
        void *v;
        while (idtree_next(&it, &id, &v)) {
            const struct stream_nack *sn = v;
            struct stream_nack *n = rk_malloc(sizeof *n);
            *n = *sn;
            n->consumer = c;
            idtree_insert(c->pel, id, n);
            idtree_insert(cg->pel, id, n);
        }
    }
    return cg;
}

struct stream *stream_dup(const struct stream *src) {
    struct stream *s = stream_new();
    struct idtree_iter it;
    idtree_seek(&it, src->nodes, STREAM_ID_MIN);
    struct stream_id id;
    void *lp;
    while (idtree_next(&it, &id, &lp)) idtree_insert(s->nodes, id, lp_copy(lp));
    s->length = src->length;
    s->last_id = src->last_id;
    s->first_id = src->first_id;
    s->max_deleted_id = src->max_deleted_id;
    s->entries_added = src->entries_added;
    s->ngroups = src->ngroups;
    s->groups = rk_calloc(src->ngroups ? src->ngroups : 1, sizeof *s->groups);
    for (size_t i = 0; i < src->ngroups; i++) s->groups[i] = cg_dup(src->groups[i]);
    return s;
}

size_t stream_usage(const struct stream *s, size_t samples) {
    size_t total = obj_alloc_size(s) + idtree_memory(s->nodes), n = 0, lpbytes = 0;
    struct idtree_iter it;
    idtree_seek(&it, s->nodes, STREAM_ID_MIN);
    struct stream_id id;
    void *lp;
    while (n < samples && idtree_next(&it, &id, &lp)) {
        lpbytes += obj_alloc_size(lp);
        n++;
    }
    size_t nodes = idtree_count(s->nodes);
    if (n) total += n == nodes ? lpbytes : (size_t)((double)lpbytes / (double)n * (double)nodes);
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct stream_cg *cg = s->groups[i];
        total += sizeof *cg + cg->name.len + idtree_memory(cg->pel) +
                 idtree_count(cg->pel) * sizeof(struct stream_nack);
        for (size_t j = 0; j < cg->nconsumers; j++)
            total += sizeof **cg->consumers + cg->consumers[j]->name.len + idtree_memory(cg->consumers[j]->pel);
    }
    return total;
}

/* ---------------------------------------------------------------- appending */

/* Whether an entry with these fields can go into node lp, by its limits. */
static bool node_has_room(const struct listpack *lp, size_t add, const struct stream_node_limits *lim) {
    size_t max_bytes = lim->max_bytes ? lim->max_bytes : (size_t)INT32_MAX / 2;
    if (lp_bytes(lp) + add >= max_bytes) return false;
    if (!lim->max_entries) return true;
    size_t p = lp_first(lp);
    long long entries = lp_int(lp, p) + lp_int(lp, lp_next(lp, p));
    return entries < lim->max_entries;
}

/* Whether the entry's fields are the node's master fields. */
static bool same_as_master(const struct listpack *lp, const struct slice *fv, size_t npairs) {
    long long nf;
    size_t f;
    node_first_entry(lp, &nf, &f);
    if ((size_t)nf != npairs) return false;
    for (size_t i = 0; i < npairs; i++, f = lp_next(lp, f))
        if (!lp_eq(lp, f, fv[2 * i])) return false;
    return true;
}

/* Append the elements of one entry: flags, the ID's difference from the
 * master, [num-fields and fields], the values. */
static void push_entry(struct listpack **lp, struct stream_id master, struct stream_id id, const struct slice *fv,
                       size_t npairs, bool same) {
    struct lp_value el[16];
    size_t k = 0;
    el[k++] = int_value(same ? STREAM_FLAG_SAMEFIELDS : 0);
    el[k++] = int_value((long long)(id.ms - master.ms));
    el[k++] = int_value((long long)(id.seq - master.seq));
    if (!same) el[k++] = int_value((long long)npairs);
    for (size_t i = 0; i < npairs; i++) {
        if (k + 2 > 16) {
            lp_append_values(lp, el, k);
            k = 0;
        }
        if (!same) el[k++] = str_value(fv[2 * i]);
        el[k++] = str_value(fv[2 * i + 1]);
    }
    lp_append_values(lp, el, k);
}

void stream_append(struct stream *s, struct stream_id id, const struct slice *fv, size_t npairs,
                   const struct stream_node_limits *lim) {
    size_t add = 0;
    for (size_t i = 0; i < 2 * npairs; i++) add += fv[i].len;
    struct stream_id master;
    void *v = NULL;
    struct listpack *lp = NULL;
    if (idtree_last(s->nodes, &master, &v) && node_has_room(v, add, lim)) lp = v;
    bool same = true;
    if (!lp) {
        master = id;
        lp = lp_new_forward();
        struct lp_value head[3] = { int_value(0), int_value(0), int_value((long long)npairs) };
        lp_append_values(&lp, head, 3);
        for (size_t i = 0; i < npairs; i++) lp_append_many(&lp, &fv[2 * i], 1);
        lp_append_values(&lp, head, 1);   /* the master's terminating 0 */
        idtree_insert(s->nodes, master, lp);
    } else {
        same = same_as_master(lp, fv, npairs);
    }
    struct listpack *before = lp;
    size_t p = lp_first(lp);
    lp_replace_int(&lp, p, lp_int(lp, p) + 1);
    push_entry(&lp, master, id, fv, npairs, same);
    if (lp != before) idtree_replace(s->nodes, master, lp);
    s->length++;
    s->entries_added++;
    s->last_id = id;
    if (s->length == 1) s->first_id = id;
}

bool stream_import_node(struct stream *s, struct stream_id master, struct listpack *lp) {
    return idtree_insert(s->nodes, master, lp);
}

/* ---------------------------------------------------------------- iterating */

void stream_iter_start(struct stream_iter *it, const struct stream *s, struct stream_id start,
                       struct stream_id end, bool rev) {
    /* no memset: back[] is large and written before it is read */
    it->s = s;
    it->start = start;
    it->end = end;
    it->rev = rev;
    /* the node that may hold the first ID wanted starts at or before it */
    struct stream_id from = rev ? end : start;
    idtree_seek(&it->nodes, s->nodes, from);
    struct stream_id id;
    void *v;
    if (!rev && idtree_prev(&it->nodes, &id, &v)) idtree_seek(&it->nodes, s->nodes, id);
    else if (!rev) idtree_seek(&it->nodes, s->nodes, STREAM_ID_MIN);
    it->lp = NULL;
}

/* Move to the next node in the walk's direction; false at the end. */
static bool iter_next_node(struct stream_iter *it) {
    void *v;
    bool ok = it->rev ? idtree_prev(&it->nodes, &it->master, &v) : idtree_next(&it->nodes, &it->master, &v);
    if (!ok) {
        it->lp = NULL;
        return false;
    }
    it->lp = v;
    it->pos = node_first_entry(it->lp, &it->master_fields, &it->master_first_field);
    it->back_n = 0;
    it->back_limit = LP_NONE;   /* nothing of this node returned yet */
    return true;
}

/* Backward: make sure back[] holds entries not yet returned, by scanning
 * the node from its first entry (it->pos) up to back_limit and keeping
 * the last STREAM_ITER_BACK entry positions. false when the node is done. */
static bool back_fill(struct stream_iter *it) {
    if (it->back_n) return true;
    if (it->back_limit == it->pos) return false;   /* the first entry was returned */
    const struct listpack *lp = it->lp;
    size_t n = 0;
    for (size_t p = it->pos; p != it->back_limit; p = entry_skip(lp, p, it->master_fields)) {
        it->back[n % STREAM_ITER_BACK] = p;
        n++;
    }
    it->back_n = n < STREAM_ITER_BACK ? (unsigned)n : STREAM_ITER_BACK;
    it->back_top = (unsigned)((n - 1) % STREAM_ITER_BACK);
    it->back_limit = it->back[(n - it->back_n) % STREAM_ITER_BACK];
    return true;
}

/* Read the entry whose flags are at p: its ID and flags; set up the field
 * cursors. Returns the position after it. */
static size_t read_entry(struct stream_iter *it, size_t p, struct stream_id *id, long long *flags, long long *nfields) {
    const struct listpack *lp = it->lp;
    struct entry_head h;
    read_head(lp, it->master, p, &h);
    *id = h.id;
    *flags = h.flags;
    it->same_fields = h.flags & STREAM_FLAG_SAMEFIELDS;
    if (it->same_fields) {
        *nfields = it->master_fields;
        it->field_pos = it->master_first_field;
        it->value_pos = h.q;
    } else {
        *nfields = lp_int(lp, h.q);
        it->field_pos = lp_next(lp, h.q);
    }
    it->fields_left = *nfields;
    return entry_end(lp, &h, it->master_fields);
}

bool stream_iter_next(struct stream_iter *it, struct stream_id *id, long long *nfields) {
    for (;;) {
        if (!it->lp || (it->rev ? !back_fill(it) : it->pos == LP_NONE)) {
            if (!iter_next_node(it)) return false;
            /* forward, a node whose master ID (its smallest) is past the
             * range ends the walk; backward, its first entry does */
            if (!it->rev && stream_id_cmp(it->master, it->end) > 0) return it->lp = NULL, false;
            continue;
        }
        long long flags;
        if (!it->rev) {
            it->pos = read_entry(it, it->pos, id, &flags, nfields);
        } else {
            read_entry(it, it->back[it->back_top], id, &flags, nfields);
            it->back_top = (it->back_top + STREAM_ITER_BACK - 1) % STREAM_ITER_BACK;
            it->back_n--;
        }
        if (!it->rev) {
            if (stream_id_cmp(*id, it->end) > 0) return it->lp = NULL, false;
            if (stream_id_cmp(*id, it->start) < 0) continue;
        } else {
            if (stream_id_cmp(*id, it->start) < 0) return it->lp = NULL, false;
            if (stream_id_cmp(*id, it->end) > 0) continue;
        }
        if (flags & STREAM_FLAG_DELETED) continue;
        return true;
    }
}

void stream_iter_field(struct stream_iter *it, struct lp_value *field, struct lp_value *value) {
    const struct listpack *lp = it->lp;
    lp_get(lp, it->field_pos, field);
    if (it->same_fields) {
        lp_get(lp, it->value_pos, value);
        it->value_pos = lp_next(lp, it->value_pos);
        it->field_pos = lp_next(lp, it->field_pos);
    } else {
        size_t v = lp_next(lp, it->field_pos);
        lp_get(lp, v, value);
        it->field_pos = lp_next(lp, v);
    }
    it->fields_left--;
}

/* ---------------------------------------------------------------- deleting */

/* The node holding id (its master ID <= id), or NULL. */
static struct listpack *node_of(const struct stream *s, struct stream_id id, struct stream_id *master) {
    struct idtree_iter it;
    idtree_seek(&it, s->nodes, id);
    void *v;
    return idtree_prev(&it, master, &v) ? v : NULL;
}

/* The position of the live entry id in node lp (master ID master), or
 * LP_NONE. */
static size_t find_entry(const struct listpack *lp, struct stream_id master, struct stream_id id) {
    long long nf;
    struct entry_head h;
    for (size_t p = node_first_entry(lp, &nf, NULL); p != LP_NONE; p = entry_end(lp, &h, nf)) {
        read_head(lp, master, p, &h);
        int cmp = stream_id_cmp(h.id, id);
        if (cmp > 0) return LP_NONE;
        if (cmp == 0) return (h.flags & STREAM_FLAG_DELETED) ? LP_NONE : p;
    }
    return LP_NONE;
}

bool stream_has_entry(const struct stream *s, struct stream_id id) {
    struct stream_id master;
    const struct listpack *lp = node_of(s, id, &master);
    return lp && find_entry(lp, master, id) != LP_NONE;
}

/* The first live entry's ID, after the head of the stream changed. */
static void refresh_first_id(struct stream *s) {
    if (s->length == 0) {
        s->first_id = STREAM_ID_MIN;
        return;
    }
    struct stream_iter it;
    stream_iter_start(&it, s, STREAM_ID_MIN, STREAM_ID_MAX, false);
    long long nf;
    if (!stream_iter_next(&it, &s->first_id, &nf)) s->first_id = STREAM_ID_MIN;
}

bool stream_delete(struct stream *s, struct stream_id id) {
    struct stream_id master;
    struct listpack *lp = node_of(s, id, &master);
    if (!lp) return false;
    size_t p = find_entry(lp, master, id);
    if (p == LP_NONE) return false;
    struct listpack *before = lp;
    lp_replace_int(&lp, p, lp_int(lp, p) | STREAM_FLAG_DELETED);
    size_t c = lp_first(lp);
    long long live = lp_int(lp, c) - 1;
    lp_replace_int(&lp, c, live);
    c = lp_next(lp, lp_first(lp));
    lp_replace_int(&lp, c, lp_int(lp, c) + 1);
    if (live == 0) {
        idtree_remove(s->nodes, master, NULL);
        lp_free(lp);
    } else if (lp != before) {
        idtree_replace(s->nodes, master, lp);
    }
    s->length--;
    if (stream_id_cmp(id, s->max_deleted_id) > 0) s->max_deleted_id = id;
    if (s->length == 0) s->first_id = STREAM_ID_MIN;
    else if (stream_id_cmp(id, s->first_id) == 0) refresh_first_id(s);
    return true;
}

long long stream_trim(struct stream *s, const struct stream_trim *t) {
    if (t->by == STREAM_TRIM_NONE) return 0;
    long long deleted = 0;
    struct stream_id master;
    void *v;
    while (idtree_first(s->nodes, &master, &v)) {
        if (t->by == STREAM_TRIM_MAXLEN && s->length <= t->maxlen) break;
        struct listpack *lp = v;
        long long entries = lp_int(lp, lp_first(lp));
        if (t->limit && deleted + entries > t->limit) break;
        bool whole = t->by == STREAM_TRIM_MAXLEN ? s->length - (uint64_t)entries >= t->maxlen
                                                 : stream_id_cmp(node_last_id(lp, master), t->minid) < 0;
        if (whole) {
            idtree_remove(s->nodes, master, NULL);
            lp_free(lp);
            s->length -= (uint64_t)entries;
            deleted += entries;
            continue;
        }
        if (t->approx) break;
        /* flag entries deleted from the front of this node */
        long long nf, from_node = 0;
        size_t p = node_first_entry(lp, &nf, NULL);
        struct listpack *before = lp;
        while (p != LP_NONE) {
            struct entry_head h;
            read_head(lp, master, p, &h);
            bool stop = t->by == STREAM_TRIM_MAXLEN ? s->length <= t->maxlen : stream_id_cmp(h.id, t->minid) >= 0;
            if (stop) break;
            size_t next = entry_end(lp, &h, nf);
            if (!(h.flags & STREAM_FLAG_DELETED)) {
                /* flags stay one-byte integers: the rewrite moves nothing */
                lp_replace_int(&lp, p, h.flags | STREAM_FLAG_DELETED);
                from_node++;
                s->length--;
            }
            p = next;
        }
        size_t c = lp_first(lp);
        lp_replace_int(&lp, c, entries - from_node);
        c = lp_next(lp, lp_first(lp));
        lp_replace_int(&lp, c, lp_int(lp, c) + from_node);
        if (lp != before) idtree_replace(s->nodes, master, lp);
        deleted += from_node;
        break;
    }
    if (deleted) refresh_first_id(s);
    return deleted;
}

/* ---------------------------------------------------------------- groups */

/* Binary search by name in a sorted array of pointers to structs whose
 * first member is a struct slice name. */
static size_t name_pos(void *const *arr, size_t n, struct slice name, bool *found) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct slice *m = arr[mid];
        size_t min = m->len < name.len ? m->len : name.len;
        int c = memcmp(m->ptr, name.ptr, min);
        if (c == 0) c = m->len < name.len ? -1 : m->len > name.len;
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = false;
    return lo;
}

static void insert_at(void ***arr, size_t *n, size_t pos, void *x) {
    *arr = rk_realloc(*arr, (*n + 1) * sizeof **arr);
    memmove(*arr + pos + 1, *arr + pos, (*n - pos) * sizeof **arr);
    (*arr)[pos] = x;
    (*n)++;
}

static void remove_at(void **arr, size_t *n, size_t pos) {
    memmove(arr + pos, arr + pos + 1, (*n - pos - 1) * sizeof *arr);
    (*n)--;
}

struct stream_cg *stream_cg_find(const struct stream *s, struct slice name) {
    bool found;
    size_t i = name_pos((void *const *)s->groups, s->ngroups, name, &found);
    return found ? s->groups[i] : NULL;
}

struct stream_cg *stream_cg_create(struct stream *s, struct slice name, struct stream_id last_id,
                                   long long entries_read) {
    bool found;
    size_t i = name_pos((void *const *)s->groups, s->ngroups, name, &found);
    if (found) return NULL;
    struct stream_cg *cg = rk_calloc(1, sizeof *cg);
    cg->name = dup_slice(name);
    cg->last_id = last_id;
    cg->entries_read = entries_read;
    cg->pel = idtree_new();
    insert_at((void ***)&s->groups, &s->ngroups, i, cg);
    return cg;
}

bool stream_cg_destroy(struct stream *s, struct slice name) {
    bool found;
    size_t i = name_pos((void *const *)s->groups, s->ngroups, name, &found);
    if (!found) return false;
    cg_free(s->groups[i]);
    remove_at((void **)s->groups, &s->ngroups, i);
    return true;
}

struct stream_consumer *stream_consumer_find(const struct stream_cg *cg, struct slice name) {
    bool found;
    size_t i = name_pos((void *const *)cg->consumers, cg->nconsumers, name, &found);
    return found ? cg->consumers[i] : NULL;
}

struct stream_consumer *stream_consumer_create(struct stream_cg *cg, struct slice name, long long now_ms) {
    bool found;
    size_t i = name_pos((void *const *)cg->consumers, cg->nconsumers, name, &found);
    if (found) return NULL;
    struct stream_consumer *c = rk_calloc(1, sizeof *c);
    c->name = dup_slice(name);
    c->seen_time = now_ms;
    c->pel = idtree_new();
    insert_at((void ***)&cg->consumers, &cg->nconsumers, i, c);
    return c;
}

uint64_t stream_consumer_delete(struct stream_cg *cg, struct stream_consumer *c) {
    uint64_t pending = idtree_count(c->pel);
    struct stream_id id;
    void *v;
    while (idtree_first(c->pel, &id, &v)) {
        idtree_remove(c->pel, id, NULL);
        idtree_remove(cg->pel, id, NULL);
        free(v);
    }
    bool found;
    size_t i = name_pos((void *const *)cg->consumers, cg->nconsumers, c->name, &found);
    if (found) remove_at((void **)cg->consumers, &cg->nconsumers, i);
    consumer_free(c);
    return pending;
}

struct stream_nack *stream_nack_new(struct stream_consumer *c, long long now_ms) {
    struct stream_nack *n = rk_malloc(sizeof *n);
    n->delivery_time = now_ms;
    n->delivery_count = 1;
    n->consumer = c;
    return n;
}

/* ---------------------------------------------------------------- entries-read and lag */

bool stream_range_has_tombstones(const struct stream *s, struct stream_id start, struct stream_id end) {
    if (!s->length || stream_id_cmp(s->max_deleted_id, STREAM_ID_MIN) == 0) return false;
    if (stream_id_cmp(s->first_id, s->max_deleted_id) > 0) return false;
    return stream_id_cmp(start, s->max_deleted_id) <= 0 && stream_id_cmp(s->max_deleted_id, end) <= 0;
}

long long stream_estimate_distance(const struct stream *s, struct stream_id id) {
    if (!s->entries_added) return 0;
    if (!s->length && stream_id_cmp(id, s->last_id) < 1) return (long long)s->entries_added;
    int cmp_last = stream_id_cmp(id, s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return STREAM_ENTRIES_READ_INVALID;
    int cmp_first = stream_id_cmp(id, s->first_id);
    if (stream_id_cmp(s->max_deleted_id, STREAM_ID_MIN) == 0 || stream_id_cmp(s->max_deleted_id, s->first_id) < 0) {
        if (cmp_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return STREAM_ENTRIES_READ_INVALID;
}

void stream_cg_advance(const struct stream *s, struct stream_cg *cg, struct stream_id id) {
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, id, STREAM_ID_MAX))
        cg->entries_read++;
    else if (s->entries_added)
        cg->entries_read = stream_estimate_distance(s, id);
    cg->last_id = id;
}

bool stream_cg_lag(const struct stream *s, const struct stream_cg *cg, long long *lag) {
    if (!s->entries_added) {
        *lag = 0;
        return true;
    }
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, cg->last_id, STREAM_ID_MAX)) {
        *lag = (long long)s->entries_added - cg->entries_read;
        return true;
    }
    long long read = stream_estimate_distance(s, cg->last_id);
    if (read == STREAM_ENTRIES_READ_INVALID) return false;
    *lag = (long long)s->entries_added - read;
    return true;
}

/* ---------------------------------------------------------------- checking */

bool stream_check(const struct stream *s) {
    uint64_t live = 0;
    struct idtree_iter it;
    idtree_seek(&it, s->nodes, STREAM_ID_MIN);
    struct stream_id master, prev = STREAM_ID_MIN, first = STREAM_ID_MIN;
    bool any = false;
    void *v;
    while (idtree_next(&it, &master, &v)) {
        const struct listpack *lp = v;
        if (!lp_check(lp)) return false;
        if (any && stream_id_cmp(master, prev) <= 0) return false;   /* a node starts past the one before */
        long long count = lp_int(lp, lp_first(lp)), dels = lp_int(lp, lp_next(lp, lp_first(lp)));
        if (count <= 0) return false;   /* empty nodes go */
        long long nf, seen_live = 0, seen_del = 0;
        size_t p = node_first_entry(lp, &nf, NULL);
        while (p != LP_NONE) {
            struct entry_head h;
            read_head(lp, master, p, &h);
            if (any && stream_id_cmp(h.id, prev) <= 0) return false;
            if (stream_id_cmp(h.id, master) < 0) return false;
            if (h.q == LP_NONE || h.flags & ~(long long)(STREAM_FLAG_DELETED | STREAM_FLAG_SAMEFIELDS)) return false;
            any = true;
            prev = h.id;
            if (h.flags & STREAM_FLAG_DELETED) {
                seen_del++;
            } else {
                if (!seen_live && live == 0) first = h.id;
                seen_live++;
            }
            p = entry_end(lp, &h, nf);
        }
        if (seen_live != count || seen_del != dels) return false;
        live += (uint64_t)count;
    }
    if (live != s->length) return false;
    if (s->length && stream_id_cmp(first, s->first_id) != 0) return false;
    if (any && stream_id_cmp(prev, s->last_id) > 0) return false;
    for (size_t i = 0; i + 1 < s->ngroups; i++)
        if (stream_cg_find(s, s->groups[i]->name) != s->groups[i]) return false;
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct stream_cg *cg = s->groups[i];
        size_t owned = 0;
        for (size_t j = 0; j < cg->nconsumers; j++) owned += idtree_count(cg->consumers[j]->pel);
        if (owned != idtree_count(cg->pel)) return false;
    }
    return true;
}

/* ---------------------------------------------------------------- keyspace hooks */

static void ops_free(void *o) { stream_free(o); }
static void *ops_dup(const void *o) { return stream_dup(o); }
static const char *ops_encoding(const void *o) {
    (void)o;
    return "stream";
}
static size_t ops_usage(const void *o, size_t samples) { return stream_usage(o, samples); }

const struct obj_ops stream_obj_ops = {
    .free = ops_free, .dup = ops_dup, .encoding = ops_encoding, .usage = ops_usage,
};
