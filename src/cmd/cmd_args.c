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
