/*
 * Argument parsing shared by command handlers. Each helper either yields the
 * value or writes Redis's error for it and returns false, so a handler reads
 *     if (!arg_ll_or_reply(c, c->argv[2], &n)) return;
 */
#include "ringkv/command.h"
#include "ringkv/util.h"
#include "ringkv/db.h"

bool arg_ll_or_reply(struct cmd_ctx *c, struct slice s, long long *v) {
    if (str_to_ll(s.ptr, s.len, v)) return true;
    reply_error(&c->r, ERR_NOT_INT);
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
