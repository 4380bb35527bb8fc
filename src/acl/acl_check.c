/*
 * The permission checks, Redis's ACLSelectorCheckCmd: a selector allows a
 * command when it has the command's bit (or, for a command without
 * subcommands, the first argument is one it allows), every key matches a
 * pattern with the access the key spec asks for (ACCESS reads; INSERT,
 * DELETE, UPDATE write), and every channel of PUBLISH and the SUBSCRIBEs
 * matches a channel pattern. A user's command is allowed when any of its
 * selectors allows it all.
 */
#include "acl_internal.h"
#include "ringkv/reply.h"
#include "ringkv/util.h"

#include <stdlib.h>
#include <strings.h>

/* each command's key-spec flags, its first key's and the others', so a
 * check needs no search of the key specs */
static uint16_t first_key_flags[COMMAND_IDS_MAX], other_key_flags[COMMAND_IDS_MAX];

void acl_check_init(void) {
    for (size_t i = 0; i < command_index_count(); i++) {
        const struct command_key_specs *ks = command_key_specs(command_by_index(i));
        if (!ks) continue;
        first_key_flags[i] = ks->spec[0].flags;
        other_key_flags[i] = ks->spec[ks->n == 2].flags;
    }
}

static unsigned key_flags(const struct command *cmd, int id, int argc, const struct slice *argv, int nth) {
    if (RK_UNLIKELY(id < 0)) return command_key_flags(cmd, argc, argv, nth);
    unsigned f = nth == 0 ? first_key_flags[id] : other_key_flags[id];
    if (RK_UNLIKELY(f & KS_VARIABLE_FLAGS)) return command_variable_key_flags(cmd, argc, argv, f);
    return f;
}

static bool command_allowed(const struct acl_selector *s, const struct command *cmd, int id, int argc,
                            const struct slice *argv) {
    if ((s->flags & SEL_ALLCOMMANDS) || (cmd->flags & CMD_NOAUTH)) return true;
    if (id >= 0 && ((s->cmds[id / 64] >> (id % 64)) & 1)) return true;
    if (argc < 2 || !s->nfirst_args) return false;
    struct slice first = argv[strchr(cmd->name, '|') ? 2 : 1];
    for (unsigned i = 0; i < s->nfirst_args; i++)
        if (s->first_args[i].cmd == id && strlen(s->first_args[i].arg) == first.len &&
            strncasecmp(s->first_args[i].arg, first.ptr, first.len) == 0)
            return true;
    return false;
}

static unsigned access_needed(unsigned ks_flags) {
    unsigned need = 0;
    if (ks_flags & KS_ACCESS) need |= KEY_READ;
    if (ks_flags & (KS_INSERT | KS_DELETE | KS_UPDATE)) need |= KEY_WRITE;
    return need;
}

static inline bool key_matches(const struct key_pattern *k, struct slice key) {
    if (RK_LIKELY(k->prefix >= 0)) {
        size_t n = (size_t)k->prefix;
        if (key.len < n) return false;
        for (size_t i = 0; i < n; i++)   /* prefixes are short: no call */
            if (key.ptr[i] != k->text[i]) return false;
        return true;
    }
    return string_match(k->text, k->len, key.ptr, key.len, false);
}

static bool key_allowed(const struct acl_selector *s, struct slice key, unsigned need) {
    if (s->flags & SEL_ALLKEYS) return true;
    for (unsigned i = 0; i < s->nkeys; i++)
        if ((s->keys[i].perm & need) == need && key_matches(&s->keys[i], key)) return true;
    return false;
}

static bool channel_in(const struct acl_selector *s, struct slice ch, bool is_pattern) {
    if (s->flags & SEL_ALLCHANNELS) return true;
    for (unsigned i = 0; i < s->nchannels; i++) {
        const char *pat = s->channels[i];
        size_t plen = strlen(pat);
        /* a PSUBSCRIBE pattern must be one of the patterns, literally */
        if (is_pattern ? (plen == ch.len && memcmp(pat, ch.ptr, plen) == 0)
                       : string_match(pat, plen, ch.ptr, ch.len, false))
            return true;
    }
    return false;
}

/* The channel arguments of a command: from argv[1], one (PUBLISH) or all;
 * *pattern for PSUBSCRIBE. 0: none that ACL checks (the UNSUBSCRIBEs). */
static int channel_args(const struct command *cmd, int argc, bool *pattern) {
    *pattern = false;
    if (!(cmd->flags & (CMD_PUBSUB | CMD_SUBSCRIBE))) return 0;
    const char *n = cmd->name;
    if (!strcmp(n, "publish") || !strcmp(n, "spublish")) return argc >= 2 ? 1 : 0;
    if (!strcmp(n, "subscribe") || !strcmp(n, "ssubscribe")) return argc - 1;
    if (!strcmp(n, "psubscribe")) { *pattern = true; return argc - 1; }
    return 0;
}

struct key_cache {
    int n;                 /* -1: not computed yet */
    int small[16];
    int *pos;
};

static void key_cache_fill(struct key_cache *kc, const struct command *cmd, int argc, const struct slice *argv) {
    kc->pos = argc <= 16 ? kc->small : rk_malloc((size_t)argc * sizeof *kc->pos);
    kc->n = command_key_positions(cmd, argc, argv, kc->pos, argc);
}

static enum acl_verdict selector_check(const struct acl_selector *s, const struct command *cmd, int id, int argc,
                                       const struct slice *argv, int *errpos, struct key_cache *kc) {
    if (!command_allowed(s, cmd, id, argc, argv)) return ACL_DENIED_CMD;
    if (!(s->flags & SEL_ALLKEYS) && (cmd->first_key || cmd->keys_fn)) {
        if (kc->n < 0) key_cache_fill(kc, cmd, argc, argv);
        for (int i = 0; i < kc->n; i++) {
            unsigned flags = key_flags(cmd, id, argc, argv, i);
            if (flags & KS_NOT_KEY) continue;   /* a shard channel (SPUBLISH): checked as a channel */
            if (!key_allowed(s, argv[kc->pos[i]], access_needed(flags))) {
                *errpos = kc->pos[i];
                return ACL_DENIED_KEY;
            }
        }
    }
    if (!(s->flags & SEL_ALLCHANNELS)) {
        bool pattern;
        int n = channel_args(cmd, argc, &pattern);
        for (int i = 1; i <= n; i++) {
            if (!channel_in(s, argv[i], pattern)) {
                *errpos = i;
                return ACL_DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

/* The usual case, answered without the general walk: one selector that
 * has the command, and a command of one key that is a key (GET, SET,
 * HSET ...). false: take the general path (which also finds denials). */
static inline bool one_key_allowed(const struct acl_perms *p, const struct command *cmd, int id, int argc,
                                   const struct slice *argv) {
    const struct acl_selector *s = &p->sel[0];
    int k = cmd->first_key;
    if (p->nsel != 1 || id < 0 || cmd->keys_fn || k == 0 || cmd->last_key != k || argc <= k) return false;
    if (!(s->flags & SEL_ALLCOMMANDS) && !((s->cmds[id / 64] >> (id % 64)) & 1)) return false;
    if (cmd->flags & (CMD_PUBSUB | CMD_SUBSCRIBE)) return false;
    unsigned flags = key_flags(cmd, id, argc, argv, 0);
    return !(flags & KS_NOT_KEY) && key_allowed(s, argv[k], access_needed(flags));
}

enum acl_verdict acl_check(const struct acl_user *u, const struct command *cmd, int argc, const struct slice *argv,
                           int *errpos) {
    const struct acl_perms *p = atomic_load_explicit(&((struct acl_user *)u)->perms, memory_order_acquire);
    *errpos = 0;
    if (!p) return ACL_DENIED_CMD;   /* deleted: its connection is being closed */
    int id = command_index(cmd);
    if (RK_LIKELY(one_key_allowed(p, cmd, id, argc, argv))) return ACL_OK;
    struct key_cache kc = { .n = -1 };
    /* the most relevant denial: the highest, then the last argument */
    enum acl_verdict worst = ACL_DENIED_CMD;
    int worst_pos = 0;
    for (unsigned i = 0; i < p->nsel; i++) {
        int pos = 0;
        enum acl_verdict v = selector_check(&p->sel[i], cmd, id, argc, argv, &pos, &kc);
        if (v == ACL_OK) {
            worst = ACL_OK;
            break;
        }
        if (v > worst || (v == worst && pos > worst_pos)) {
            worst = v;
            worst_pos = pos;
        }
    }
    if (kc.n >= 0 && kc.pos != kc.small) free(kc.pos);
    *errpos = worst_pos;
    return worst;
}

bool acl_channel_allowed(const struct acl_user *u, struct slice channel, bool is_pattern) {
    const struct acl_perms *p = atomic_load_explicit(&((struct acl_user *)u)->perms, memory_order_acquire);
    if (!p) return false;
    for (unsigned i = 0; i < p->nsel; i++)
        if (channel_in(&p->sel[i], channel, is_pattern)) return true;
    return false;
}

struct slice acl_denied_object(enum acl_verdict v, const struct command *cmd, const struct slice *argv, int pos) {
    return v == ACL_DENIED_CMD ? (struct slice){ cmd->name, strlen(cmd->name) } : argv[pos];
}

void acl_reply_denied(struct reply *r, enum acl_verdict v, const struct command *cmd) {
    switch (v) {
    case ACL_DENIED_CMD:
        reply_errorf(r, "NOPERM this user has no permissions to run the '%s' command", cmd->name);
        break;
    case ACL_DENIED_KEY:
        reply_error(r, "NOPERM this user has no permissions to access one of the keys used as arguments");
        break;
    case ACL_DENIED_CHANNEL:
        reply_error(r, "NOPERM this user has no permissions to access one of the channels used as arguments");
        break;
    default: reply_error(r, "ERR no permission"); break;
    }
}

const char *acl_denial_reason(enum acl_verdict v) {
    switch (v) {
    case ACL_DENIED_CMD: return "can't run this command or subcommand";
    case ACL_DENIED_KEY: return "can't access at least one of the keys mentioned in the command arguments";
    case ACL_DENIED_CHANNEL: return "can't publish to the channel mentioned in the command";
    default: return "lacking the permissions for the command";
    }
}

const char *acl_denial_reason_exec(enum acl_verdict v) {
    switch (v) {
    case ACL_DENIED_CMD: return "no permission to execute the command or subcommand";
    case ACL_DENIED_KEY: return "no permission to touch the specified keys";
    case ACL_DENIED_CHANNEL: return "no permission to access one of the channels used as arguments";
    default: return "no permission";
    }
}
