/*
 * LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest
 * common subsequence of two strings, with Redis 7.0's replies and errors
 * (lcsCommand in its t_string.c). Its entry is in cmd_bits.c's group.
 *
 * The classic dynamic programme: a table of (alen+1) x (blen+1) lengths,
 * LCS(i, j) being the answer for the first i bytes of a and the first j of
 * b. As in Redis the table may not take more than proto-max-bulk-len bytes,
 * so the work a request can ask for is bounded. Walking the table back from
 * its far corner yields the subsequence from its end, and for IDX the runs
 * of matching bytes, last run first, which is the order Redis reports them
 * in. The reply needs the number of runs before the runs, so they are
 * collected first.
 *
 * Missing keys are empty strings; a key of another type gets Redis's own
 * error rather than WRONGTYPE. The keys may live on two shards: the
 * dispatcher then runs the command as a transaction and db.h routes each
 * lookup.
 */
#include <stdlib.h>

#include "ringkv/command.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/util.h"

#define ERR_LCS_TYPE     "ERR The specified keys must contain string values"
#define ERR_LCS_BOTH     "ERR If you want both the length and indexes, please just use IDX."
#define ERR_LCS_TOO_LONG "ERR String too long for LCS"
#define ERR_LCS_LIMIT    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
#define ERR_LCS_NOMEM    "ERR Insufficient memory, failed allocating transient memory for LCS"

void cmd_lcs(struct cmd_ctx *c);   /* listed in cmd_bits.c's table */

struct lcs_opts {
    bool len, idx, withmatchlen;
    long long minmatchlen;
};

/* One run of matching bytes: a[a0..a1] equals b[b0..b1]. */
struct lcs_run {
    uint32_t a0, a1, b0, b1;
};

/* The table, row i holding LCS(i, 0..blen). */
struct lcs_table {
    uint32_t *cell;
    uint32_t cols;   /* blen + 1 */
};

static uint32_t at(const struct lcs_table *t, uint32_t i, uint32_t j) {
    return t->cell[(size_t)i * t->cols + j];
}

static bool parse_opts(struct cmd_ctx *c, struct lcs_opts *o) {
    *o = (struct lcs_opts){0};
    for (int j = 3; j < c->argc; j++) {
        struct slice opt = c->argv[j];
        if (slice_eq_nocase(opt, "idx")) {
            o->idx = true;
        } else if (slice_eq_nocase(opt, "len")) {
            o->len = true;
        } else if (slice_eq_nocase(opt, "withmatchlen")) {
            o->withmatchlen = true;
        } else if (slice_eq_nocase(opt, "minmatchlen") && j + 1 < c->argc) {
            if (!arg_ll_or_reply(c, c->argv[++j], &o->minmatchlen))
                return false;
            if (o->minmatchlen < 0)
                o->minmatchlen = 0;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return false;
        }
    }
    if (o->len && o->idx) {
        reply_error(&c->r, ERR_LCS_BOTH);
        return false;
    }
    return true;
}

/* The value of key for LCS: empty when absent; false after the type error. */
static bool lcs_value(struct cmd_ctx *c, struct slice key, struct slice *v) {
    struct kv_entry *e = db_lookup(c, key, LOOKUP_READ);
    if (e && entry_type(e) != OBJ_STRING)
        return false;
    *v = e ? entry_val_slice(e) : (struct slice){ "", 0 };
    return true;
}

/* Allocate the table as Redis does: refused above proto-max-bulk-len, and
 * a failed allocation is an error reply rather than an abort. */
static bool table_alloc(struct cmd_ctx *c, uint32_t alen, uint32_t blen, struct lcs_table *t) {
    unsigned long long cells = (unsigned long long)(alen + 1ULL) * (blen + 1ULL);
    unsigned long long bytes = cells * sizeof(uint32_t);

    t->cell = NULL;
    t->cols = blen + 1;
    if (bytes < SIZE_MAX && bytes / cells == sizeof(uint32_t)) {
        if (bytes > (unsigned long long)__atomic_load_n(&rk_config_proto_max_bulk_len, __ATOMIC_RELAXED)) {
            reply_error(&c->r, ERR_LCS_LIMIT);
            return false;
        }
        t->cell = malloc((size_t)bytes);
    }
    if (!t->cell) {
        reply_error(&c->r, ERR_LCS_NOMEM);
        return false;
    }
    return true;
}

static void table_fill(struct lcs_table *t, struct slice a, struct slice b) {
    for (uint32_t j = 0; j < t->cols; j++)
        t->cell[j] = 0;
    for (uint32_t i = 1; i <= a.len; i++) {
        uint32_t *row = t->cell + (size_t)i * t->cols, *up = row - t->cols;
        row[0] = 0;
        for (uint32_t j = 1; j < t->cols; j++) {
            if (a.ptr[i - 1] == b.ptr[j - 1])
                row[j] = up[j - 1] + 1;
            else
                row[j] = up[j] > row[j - 1] ? up[j] : row[j - 1];
        }
    }
}

/*
 * Walk back from (alen, blen): out gets the subsequence (LCS(alen, blen)
 * bytes), runs the runs of at least minmatchlen bytes (0: all). A run ends
 * where the walk leaves the diagonal or reaches the start of a string; the
 * order of the tests is Redis's, so the same runs come out.
 */
static void walk_back(const struct lcs_table *t, struct slice a, struct slice b, long long minmatchlen,
                      char *out, struct rbuf *runs) {
    uint32_t i = (uint32_t)a.len, j = (uint32_t)b.len, k = at(t, i, j);
    struct lcs_run run = {0};
    bool open = false;

    while (i > 0 && j > 0) {
        bool emit = false;
        if (a.ptr[i - 1] == b.ptr[j - 1]) {
            out[--k] = a.ptr[i - 1];
            if (!open) {
                run = (struct lcs_run){ i - 1, i - 1, j - 1, j - 1 };
                open = true;
            } else if (run.a0 == i && run.b0 == j) {
                run.a0--;
                run.b0--;
            } else {
                emit = true;
            }
            if (run.a0 == 0 || run.b0 == 0)
                emit = true;
            i--;
            j--;
        } else {
            if (at(t, i - 1, j) > at(t, i, j - 1))
                i--;
            else
                j--;
            emit = open;
        }
        if (emit) {
            uint32_t len = run.a1 - run.a0 + 1;
            if (minmatchlen == 0 || len >= minmatchlen)
                rbuf_append(runs, &run, sizeof run);
            open = false;
        }
    }
}

/* IDX's reply: {"matches": [[[a0, a1], [b0, b1](, len)], ...], "len": n}. */
static void reply_idx(struct cmd_ctx *c, const struct rbuf *runs, bool withmatchlen, uint32_t total) {
    size_t n = runs->len / sizeof(struct lcs_run);
    reply_map(&c->r, 2);
    reply_bulk_cstr(&c->r, "matches");
    reply_array(&c->r, n);
    for (size_t i = 0; i < n; i++) {
        struct lcs_run run;
        memcpy(&run, runs->buf + i * sizeof run, sizeof run);
        reply_array(&c->r, 2 + withmatchlen);
        reply_array(&c->r, 2);
        reply_int(&c->r, run.a0);
        reply_int(&c->r, run.a1);
        reply_array(&c->r, 2);
        reply_int(&c->r, run.b0);
        reply_int(&c->r, run.b1);
        if (withmatchlen)
            reply_int(&c->r, run.a1 - run.a0 + 1);
    }
    reply_bulk_cstr(&c->r, "len");
    reply_int(&c->r, total);
}

void cmd_lcs(struct cmd_ctx *c) {
    struct slice a, b;
    struct lcs_opts o;
    struct lcs_table t;

    bool a_ok = lcs_value(c, c->argv[1], &a), b_ok = lcs_value(c, c->argv[2], &b);   /* both, as Redis */
    if (!a_ok || !b_ok) {
        reply_error(&c->r, ERR_LCS_TYPE);
        return;
    }
    if (!parse_opts(c, &o))
        return;
    if (a.len >= UINT32_MAX - 1 || b.len >= UINT32_MAX - 1) {
        reply_error(&c->r, ERR_LCS_TOO_LONG);
        return;
    }
    if (!table_alloc(c, (uint32_t)a.len, (uint32_t)b.len, &t))
        return;
    table_fill(&t, a, b);
    uint32_t total = at(&t, (uint32_t)a.len, (uint32_t)b.len);

    if (o.len && !o.idx) {
        reply_int(&c->r, total);
    } else {
        char *out = rk_malloc(total);
        struct rbuf runs = {0};
        walk_back(&t, a, b, o.minmatchlen, out, &runs);
        if (o.idx)
            reply_idx(c, &runs, o.withmatchlen, total);
        else
            reply_bulk(&c->r, out, total);
        rbuf_free(&runs);
        free(out);
    }
    free(t.cell);
}
