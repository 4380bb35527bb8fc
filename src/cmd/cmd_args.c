/*
 * Argument parsing shared by command handlers. Each helper either yields the
 * value or writes Redis's error for it and returns false, so a handler reads
 *     if (!arg_ll_or_reply(c, c->argv[2], &n)) return;
 */
#include "ringkv/watch.h"
#include "ringkv/command.h"
#include "ringkv/util.h"
#include "ringkv/db.h"
#include "ringkv/scan_cursor.h"
#include "ringkv/server.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>

bool arg_ll_or_reply(struct cmd_ctx *c, struct slice s, long long *v) {
    if (str_to_ll(s.ptr, s.len, v)) return true;
    reply_error(&c->r, ERR_NOT_INT);
    return false;
}

bool arg_min_or_reply(struct cmd_ctx *c, struct slice s, long long min, long long *v, const char *msg) {
    if (str_to_ll(s.ptr, s.len, v) && *v >= min) return true;
    reply_error(&c->r, msg);
    return false;
}

struct kv_entry **lookup_typed_or_reply(struct cmd_ctx *c, struct slice key, unsigned type,
                                        unsigned flags, bool *wrong) {
    *wrong = false;
    struct kv_entry **slot = db_lookup_slot(c, key, flags);
    if (slot && entry_type(*slot) != type) {
        reply_error(&c->r, ERR_WRONGTYPE);
        *wrong = true;
        return NULL;
    }
    return slot;
}

/* The place in line of a blocking command: its client's ticket, taken on
 * the client's thread, where the command runs (there, or as its
 * transaction's coordinator). */
static uint64_t waiter_ticket(const struct cmd_ctx *c) {
    return c->client ? client_block_ticket(c->client) : 0;
}

bool waiter_skips_key(struct cmd_ctx *c, struct slice key, unsigned type) {
    if (!c->waiter || (!c->rerun && atomic_load_explicit(&rk_waiter_keys, memory_order_relaxed) == 0))
        return false;
    struct kv_entry *e = db_lookup(c, key, LOOKUP_NONE);
    if (!e) return false;
    if (entry_type(e) != type) return c->rerun;
    return db_waiters_before(c, key, c->waiter, waiter_ticket(c));
}

bool obj_write(struct cmd_ctx *c, struct slice key, unsigned type, struct kv_entry ***slot, void **obj) {
    bool wrong;
    *slot = lookup_typed_or_reply(c, key, type, LOOKUP_NONE, &wrong);
    if (wrong) return false;
    *obj = *slot ? entry_obj_for_write(**slot) : NULL;
    return true;
}

void obj_commit(struct cmd_ctx *c, struct slice key, unsigned type, struct kv_entry **slot, void *obj,
                size_t len, bool changed) {
    if (slot) {
        *slot = entry_store_obj(*slot, obj);   /* first: the entry must not keep a stale pointer */
        if (!len) db_delete(c, key);
        else if (changed) db_changed(c, key, false);
    } else if (len) {
        db_insert(c, entry_new_obj(key, type, obj, NO_EXPIRE));
    } else {
        obj_ops_by_type[type]->free(obj);
    }
}

/* Keys counted by the numkeys argument at argv[at], following it. */
static int numkeys_at(int argc, const struct slice *argv, int at, int *pos, int n, int maxpos) {
    long long numkeys;
    if (at >= argc || !str_to_ll(argv[at].ptr, argv[at].len, &numkeys) || numkeys <= 0 ||
        numkeys > argc - at - 1)
        return 0;
    for (int i = 0; i < numkeys && n < maxpos; i++) pos[n++] = at + 1 + i;
    return n;
}

int keys_numkeys_first(int argc, const struct slice *argv, int *pos, int maxpos) {
    return numkeys_at(argc, argv, 1, pos, 0, maxpos);
}

int keys_dest_numkeys(int argc, const struct slice *argv, int *pos, int maxpos) {
    if (argc < 2 || maxpos < 1) return 0;
    pos[0] = 1;
    int n = numkeys_at(argc, argv, 2, pos, 1, maxpos);
    return n > 1 ? n : 0;
}

int keys_numkeys_second(int argc, const struct slice *argv, int *pos, int maxpos) {
    return numkeys_at(argc, argv, 2, pos, 0, maxpos);
}

/* Redis's getTimeoutFromObjectOrReply, in seconds (decimals allowed). */
bool arg_timeout_or_reply(struct cmd_ctx *c, struct slice s, long long *ms) {
    long double t;
    if (!str_to_ld(s.ptr, s.len, &t)) {
        reply_error(&c->r, "ERR timeout is not a float or out of range");
        return false;
    }
    t *= 1000.0L;
    if (t < 0) {
        reply_error(&c->r, "ERR timeout is negative");
        return false;
    }
    if (t > (long double)(LLONG_MAX / 4)) {
        reply_error(&c->r, "ERR timeout is out of range");
        return false;
    }
    *ms = (long long)ceill(t);
    return true;
}

/* Without a waiter identity (a command run for nobody) the command still
 * reports that it would block, and nothing is registered. */
void ctx_block_on(struct cmd_ctx *c, struct slice key) {
    if (c->waiter) db_block_on(c, key, c->waiter, waiter_ticket(c));
    c->block = true;
}

/* Nothing to serve: wait on argv[first..end), or, when the wait is over,
 * reply the null array Redis answers every timed-out list or zset wait with. */
void ctx_block_or_timeout(struct cmd_ctx *c, int first, int end, long long timeout_ms) {
    if (c->timed_out) {
        reply_null_array(&c->r);
        return;
    }
    for (int j = first; j < end; j++) ctx_block_on(c, c->argv[j]);
    c->block_timeout_ms = timeout_ms;
}

/* A SCAN-family cursor, parsed as Redis does: strtoul() on the argument
 * as a C string, so "" is 0, so is "\0x" (the NUL ends it), zeros may pad
 * it to any length and "-1" wraps around; only a leading blank, bytes left
 * over before the end or the NUL, and overflow are invalid. */
bool arg_cursor_or_reply(struct cmd_ctx *c, struct slice s, uint64_t *cursor) {
    char small[64], *end;
    char *buf = s.len < sizeof small ? small : rk_malloc(s.len + 1);
    if (s.len) memcpy(buf, s.ptr, s.len);
    buf[s.len] = '\0';
    errno = 0;
    *cursor = strtoull(buf, &end, 10);
    bool ok = !isspace((unsigned char)buf[0]) && *end == '\0' && errno != ERANGE;
    if (buf != small) free(buf);
    if (!ok) reply_error(&c->r, "ERR invalid cursor");
    return ok;
}

bool scan_args_or_reply(struct cmd_ctx *c, int first, bool allow_type, struct scan_args *a) {
    *a = (struct scan_args){ .count = 10 };
    for (int i = first; i < c->argc; i += 2) {
        bool has_value = i + 1 < c->argc;
        if (has_value && slice_eq_nocase(c->argv[i], "count")) {
            if (!arg_ll_or_reply(c, c->argv[i + 1], &a->count))
                return false;
            if (a->count < 1) {
                reply_error(&c->r, ERR_SYNTAX);
                return false;
            }
        } else if (has_value && slice_eq_nocase(c->argv[i], "match")) {
            struct slice p = c->argv[i + 1];
            /* "*" matches everything: skip the matcher, as Redis does. */
            a->pattern = p.len == 1 && p.ptr[0] == '*' ? (struct slice){ NULL, 0 } : p;
        } else if (has_value && allow_type && slice_eq_nocase(c->argv[i], "type")) {
            a->type = c->argv[i + 1];
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

bool scan_matches(const struct scan_args *a, struct slice s) {
    return !a->pattern.ptr || string_match(a->pattern.ptr, a->pattern.len, s.ptr, s.len, false);
}

void reply_scan_head(struct cmd_ctx *c, uint64_t cursor, size_t n) {
    char buf[24];
    reply_array(&c->r, 2);
    reply_bulk(&c->r, buf, (size_t)ull_to_str(buf, sizeof buf, cursor));
    reply_array(&c->r, n);
}

/* The cursors in and out are the client's; step works on positions in
 * hash space (scan_cursor.h). */
uint64_t scan_gather(const struct scan_args *a, const void *obj, scan_step_fn step, uint64_t cursor,
                     struct rbuf *found) {
    size_t slots = a->count > 1 << 20 ? (size_t)1 << 20 : (size_t)a->count;
    uint64_t pos = scan_pos_of(cursor);
    int calls = 10;
    do {
        pos = step(obj, pos, slots, found);
    } while (pos && --calls > 0 && found->len / sizeof(void *) < (unsigned long long)a->count);
    return scan_cursor_of(pos);
}

bool arg_rand_count_or_reply(struct cmd_ctx *c, const char *with_flag, long long *count, bool *with) {
    if (!arg_ll_or_reply(c, c->argv[2], count)) return false;
    if (*count < -LLONG_MAX) {
        reply_errorf(&c->r, "ERR value is out of range, value must between %lld and %lld", -LLONG_MAX, LLONG_MAX);
        return false;
    }
    *with = false;
    if (c->argc > 4 || (c->argc == 4 && !slice_eq_nocase(c->argv[3], with_flag))) {
        reply_error(&c->r, ERR_SYNTAX);
        return false;
    }
    if (c->argc == 4) {
        *with = true;
        if (*count < -LLONG_MAX / 2 || *count > LLONG_MAX / 2) {
            reply_error(&c->r, "ERR value is out of range");
            return false;
        }
    }
    return true;
}
