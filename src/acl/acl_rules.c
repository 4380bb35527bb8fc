/*
 * ACL rules: building a user's permissions from Redis's rule words (on,
 * >pass, ~pattern, +@category, (selector) ...) and describing them back as
 * rules, the way ACL LIST and ACL GETUSER show them.
 *
 * Commands are bits, one per command index (command.h), subcommands
 * included. A rule on a container (+client) sets the container's bit and
 * every subcommand's. Categories come from each command's acl_categories
 * in the command table, plus those Redis implies from its flags.
 *
 * The description of a selector's commands is Redis's
 * ACLDescribeSelectorCommandRules: start from +@all (if the future-command
 * bit is set) or -@all, then repeatedly apply the category that fixes the
 * most differences, and finish with single commands.
 */
#include "acl_internal.h"
#include "ringkv/config.h"
#include "ringkv/sha256.h"
#include "ringkv/util.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <strings.h>

/* ---- categories ---- */

/* Redis's order, which ACL CAT lists and the description tries. */
static const char *const category_names[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
    "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
    "transaction", "scripting",
};
#define NCATEGORIES RK_ARRAY_LEN(category_names)
enum { CAT_READ = 1, CAT_WRITE = 2, CAT_PUBSUB = 12, CAT_ADMIN = 13, CAT_FAST = 14, CAT_SLOW = 15,
       CAT_BLOCKING = 16, CAT_DANGEROUS = 17, CAT_SCRIPTING = 20 };

static uint32_t command_categories[COMMAND_IDS_MAX];
static int ncommands;

unsigned acl_category_count(void) { return NCATEGORIES; }
const char *acl_category_name(unsigned i) { return category_names[i]; }

int acl_category_find(const char *name, size_t len) {
    for (size_t i = 0; i < NCATEGORIES; i++)
        if (strlen(category_names[i]) == len && strncasecmp(category_names[i], name, len) == 0) return (int)i;
    return -1;
}

bool acl_command_in_category(int cmd_index, unsigned category) {
    return cmd_index >= 0 && (command_categories[cmd_index] >> category) & 1;
}

/* The table's categories, and those Redis's setImplicitACLCategories adds. */
static uint32_t categories_of(const struct command *cmd) {
    uint32_t m = 0;
    for (const char *p = cmd->acl_categories; p && *p;) {
        while (*p == ' ') p++;
        const char *start = p;
        while (*p && *p != ' ') p++;
        if (*start == '@') {
            int c = acl_category_find(start + 1, (size_t)(p - start - 1));
            if (c >= 0) m |= 1u << c;
        }
    }
    if (cmd->flags & CMD_WRITE) m |= 1u << CAT_WRITE;
    if ((cmd->flags & CMD_READONLY) && !(m & (1u << CAT_SCRIPTING))) m |= 1u << CAT_READ;
    if (cmd->flags & CMD_ADMIN) m |= 1u << CAT_ADMIN | 1u << CAT_DANGEROUS;
    if (cmd->flags & CMD_PUBSUB) m |= 1u << CAT_PUBSUB;
    if (cmd->flags & CMD_FAST) m |= 1u << CAT_FAST;
    if (cmd->flags & CMD_BLOCKING) m |= 1u << CAT_BLOCKING;
    if (!(m & (1u << CAT_FAST))) m |= 1u << CAT_SLOW;
    return m;
}

void acl_categories_init(void) {
    ncommands = (int)command_index_count();
    if (ncommands > FUTURE_BIT) abort();   /* the bit maps would need to grow */
    for (int i = 0; i < ncommands; i++) command_categories[i] = categories_of(command_by_index((size_t)i));
    acl_check_init();
}

long pattern_prefix(const char *text, size_t len) {
    if (len == 0 || text[len - 1] != '*') return -1;
    for (size_t i = 0; i + 1 < len; i++)
        if (strchr("*?[]\\", text[i])) return -1;
    return (long)len - 1;
}

/* ---- errors ---- */

const char *rule_error_text(enum rule_error e) {
    switch (e) {
    case RULE_UNKNOWN: return "Unknown command or category name in ACL";
    case RULE_SYNTAX: return "Syntax error";
    case RULE_KEY_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
               "effect. Try 'resetkeys' to start with an empty list of patterns";
    case RULE_CHANNEL_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have "
               "any effect. Try 'resetchannels' to start with an empty list of channels";
    case RULE_NO_PASSWORD: return "The password you are trying to remove from the user does not exist";
    case RULE_BAD_HASH:
        return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    case RULE_DUPLICATE: return "Duplicate user found. A user can only be defined once in config files";
    case RULE_SUBCOMMAND_ARG: return "Allowing first-arg of a subcommand is not supported";
    default: return "Wrong format";
    }
}

/* ---- selectors ---- */

unsigned acl_pubsub_default_flags(void) {
    const char *v = __atomic_load_n(&rk_config.acl_pubsub_default, __ATOMIC_ACQUIRE);
    return v && strcmp(v, "allchannels") == 0 ? SEL_ALLCHANNELS : 0;
}

static void selector_init(struct acl_selector *s, unsigned flags) {
    memset(s, 0, sizeof *s);
    s->flags = flags | acl_pubsub_default_flags();
}

static void clear_keys(struct acl_selector *s) {
    for (unsigned i = 0; i < s->nkeys; i++) free(s->keys[i].text);
    free(s->keys);
    s->keys = NULL;
    s->nkeys = 0;
}

static void clear_channels(struct acl_selector *s) {
    for (unsigned i = 0; i < s->nchannels; i++) free(s->channels[i]);
    free(s->channels);
    s->channels = NULL;
    s->nchannels = 0;
}

/* first args of one command (cmd >= 0) or of all (cmd < 0) */
static void clear_first_args(struct acl_selector *s, int cmd) {
    unsigned kept = 0;
    for (unsigned i = 0; i < s->nfirst_args; i++) {
        if (cmd < 0 || s->first_args[i].cmd == cmd) free(s->first_args[i].arg);
        else s->first_args[kept++] = s->first_args[i];
    }
    s->nfirst_args = kept;
    if (!kept) {
        free(s->first_args);
        s->first_args = NULL;
    }
}

static void selector_clear(struct acl_selector *s) {
    clear_keys(s);
    clear_channels(s);
    clear_first_args(s, -1);
}

static void selector_copy(struct acl_selector *dst, const struct acl_selector *src) {
    *dst = *src;
    dst->keys = src->nkeys ? rk_malloc(src->nkeys * sizeof *dst->keys) : NULL;
    for (unsigned i = 0; i < src->nkeys; i++) {
        dst->keys[i] = src->keys[i];
        dst->keys[i].text = rk_strndup(src->keys[i].text, src->keys[i].len);
    }
    dst->channels = src->nchannels ? rk_malloc(src->nchannels * sizeof *dst->channels) : NULL;
    for (unsigned i = 0; i < src->nchannels; i++) dst->channels[i] = rk_strndup(src->channels[i], strlen(src->channels[i]));
    dst->first_args = src->nfirst_args ? rk_malloc(src->nfirst_args * sizeof *dst->first_args) : NULL;
    for (unsigned i = 0; i < src->nfirst_args; i++) {
        dst->first_args[i].cmd = src->first_args[i].cmd;
        dst->first_args[i].arg = rk_strndup(src->first_args[i].arg, strlen(src->first_args[i].arg));
    }
}

static bool get_bit(const struct acl_selector *s, int id) {
    return (s->cmds[id / 64] >> (id % 64)) & 1;
}

static void set_bit(struct acl_selector *s, int id, bool on) {
    if (on) {
        s->cmds[id / 64] |= 1ull << (id % 64);
    } else {
        s->cmds[id / 64] &= ~(1ull << (id % 64));
        s->flags &= ~SEL_ALLCOMMANDS;
    }
}

/* Allow or deny a command; a container takes its subcommands along. */
static void change_command(struct acl_selector *s, const struct command *cmd, bool allow) {
    int id = command_index(cmd);
    if (id < 0) return;
    set_bit(s, id, allow);
    clear_first_args(s, id);
    for (const struct command *sub = cmd->subcommands; sub && sub->name; sub++) {
        int sid = command_index(sub);
        if (sid >= 0) set_bit(s, sid, allow);
    }
}

static void change_category(struct acl_selector *s, unsigned cat, bool allow) {
    for (int i = 0; i < ncommands; i++)
        if (acl_command_in_category(i, cat)) change_command(s, command_by_index((size_t)i), allow);
}

/* "get", "client|kill": the command of that full name, in any case. */
static const struct command *lookup_full_name(const char *name, size_t len) {
    const char *bar = memchr(name, '|', len);
    if (!bar) return command_lookup(name, len);
    const struct command *parent = command_lookup(name, (size_t)(bar - name));
    if (!parent || !parent->subcommands) return NULL;
    struct slice sub = { bar + 1, len - (size_t)(bar + 1 - name) };
    if (memchr(sub.ptr, '|', sub.len)) return NULL;
    return command_lookup_sub(parent, sub);
}

bool acl_has_spaces(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == '\0') return true;
    return false;
}

static void add_first_arg(struct acl_selector *s, int cmd, const char *arg, size_t len) {
    for (unsigned i = 0; i < s->nfirst_args; i++)
        if (s->first_args[i].cmd == cmd && strlen(s->first_args[i].arg) == len &&
            strncasecmp(s->first_args[i].arg, arg, len) == 0)
            return;
    s->first_args = rk_realloc(s->first_args, (s->nfirst_args + 1) * sizeof *s->first_args);
    s->first_args[s->nfirst_args].cmd = cmd;
    s->first_args[s->nfirst_args].arg = rk_strndup(arg, len);
    s->nfirst_args++;
}

/* +cmd, +cmd|sub, +cmd|firstarg */
static enum rule_error allow_command(struct acl_selector *s, const char *name, size_t len) {
    const char *bar = memchr(name, '|', len);
    if (!bar) {
        const struct command *cmd = command_lookup(name, len);
        if (!cmd) return RULE_UNKNOWN;
        change_command(s, cmd, true);
        return RULE_OK;
    }
    /* Redis splits at the last bar */
    const char *last = bar;
    for (const char *p = bar; p < name + len; p++)
        if (*p == '|') last = p;
    const struct command *cmd = lookup_full_name(name, (size_t)(last - name));
    if (!cmd) return RULE_UNKNOWN;
    if (strchr(cmd->name, '|')) return RULE_SUBCOMMAND_ARG;
    size_t sublen = len - (size_t)(last + 1 - name);
    if (sublen == 0) return RULE_SYNTAX;
    if (cmd->subcommands) {
        const struct command *sub = lookup_full_name(name, len);
        if (!sub) return RULE_UNKNOWN;
        change_command(s, sub, true);
    } else {
        add_first_arg(s, command_index(cmd), last + 1, sublen);
    }
    return RULE_OK;
}

static enum rule_error add_key_pattern(struct acl_selector *s, const char *op, size_t len) {
    if (s->flags & SEL_ALLKEYS) return RULE_KEY_AFTER_ALL;
    unsigned perm = 0;
    size_t off = 1;
    if (op[0] == '%') {
        for (; off < len; off++) {
            char c = (char)toupper((unsigned char)op[off]);
            if (c == 'R' && !(perm & KEY_READ)) perm |= KEY_READ;
            else if (c == 'W' && !(perm & KEY_WRITE)) perm |= KEY_WRITE;
            else if (op[off] == '~') { off++; break; }
            else return RULE_SYNTAX;
        }
        if (!perm) return RULE_SYNTAX;
    } else {
        perm = KEY_ALL;
    }
    if (acl_has_spaces(op + off, len - off)) return RULE_SYNTAX;
    for (unsigned i = 0; i < s->nkeys; i++) {
        if (s->keys[i].len == len - off && memcmp(s->keys[i].text, op + off, len - off) == 0) {
            s->keys[i].perm |= perm;
            s->flags &= ~SEL_ALLKEYS;
            return RULE_OK;
        }
    }
    s->keys = rk_realloc(s->keys, (s->nkeys + 1) * sizeof *s->keys);
    s->keys[s->nkeys++] = (struct key_pattern){ perm, rk_strndup(op + off, len - off), len - off,
                                                pattern_prefix(op + off, len - off) };
    s->flags &= ~SEL_ALLKEYS;
    return RULE_OK;
}

static enum rule_error add_channel_pattern(struct acl_selector *s, const char *op, size_t len) {
    if (s->flags & SEL_ALLCHANNELS) return RULE_CHANNEL_AFTER_ALL;
    if (acl_has_spaces(op + 1, len - 1)) return RULE_SYNTAX;
    for (unsigned i = 0; i < s->nchannels; i++)
        if (strlen(s->channels[i]) == len - 1 && memcmp(s->channels[i], op + 1, len - 1) == 0) return RULE_OK;
    s->channels = rk_realloc(s->channels, (s->nchannels + 1) * sizeof *s->channels);
    s->channels[s->nchannels++] = rk_strndup(op + 1, len - 1);
    s->flags &= ~SEL_ALLCHANNELS;
    return RULE_OK;
}

static bool op_is(const char *op, size_t len, const char *word) {
    return strlen(word) == len && strncasecmp(op, word, len) == 0;
}

/* Redis's ACLSetSelector. */
static enum rule_error selector_apply(struct acl_selector *s, const char *op, size_t len) {
    if (op_is(op, len, "allkeys") || op_is(op, len, "~*")) {
        s->flags |= SEL_ALLKEYS;
        clear_keys(s);
    } else if (op_is(op, len, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        clear_keys(s);
    } else if (op_is(op, len, "allchannels") || op_is(op, len, "&*")) {
        s->flags |= SEL_ALLCHANNELS;
        clear_channels(s);
    } else if (op_is(op, len, "resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        clear_channels(s);
    } else if (op_is(op, len, "allcommands") || op_is(op, len, "+@all")) {
        memset(s->cmds, 0xff, sizeof s->cmds);
        s->flags |= SEL_ALLCOMMANDS;
        clear_first_args(s, -1);
    } else if (op_is(op, len, "nocommands") || op_is(op, len, "-@all")) {
        memset(s->cmds, 0, sizeof s->cmds);
        s->flags &= ~SEL_ALLCOMMANDS;
        clear_first_args(s, -1);
    } else if (len && (op[0] == '~' || op[0] == '%')) {
        return add_key_pattern(s, op, len);
    } else if (len && op[0] == '&') {
        return add_channel_pattern(s, op, len);
    } else if (len >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
        int cat = acl_category_find(op + 2, len - 2);
        if (cat < 0) return RULE_UNKNOWN;
        change_category(s, (unsigned)cat, op[0] == '+');
    } else if (len && op[0] == '+') {
        return allow_command(s, op + 1, len - 1);
    } else if (len && op[0] == '-') {
        const struct command *cmd = lookup_full_name(op + 1, len - 1);
        if (!cmd) return RULE_UNKNOWN;
        change_command(s, cmd, false);
    } else {
        return RULE_SYNTAX;
    }
    return RULE_OK;
}

/* ---- permissions ---- */

struct acl_perms *perms_new(void) {
    struct acl_perms *p = rk_calloc(1, sizeof *p);
    p->flags = USER_OFF;
    p->sel = rk_calloc(1, sizeof *p->sel);
    p->nsel = 1;
    selector_init(&p->sel[0], SEL_ROOT);
    return p;
}

struct acl_perms *perms_copy(const struct acl_perms *src) {
    struct acl_perms *p = rk_calloc(1, sizeof *p);
    p->flags = src->flags;
    p->npass = src->npass;
    if (src->npass) {
        p->pass = rk_malloc(src->npass * sizeof *p->pass);
        memcpy(p->pass, src->pass, src->npass * sizeof *p->pass);
    }
    p->nsel = src->nsel;
    p->sel = rk_calloc(src->nsel, sizeof *p->sel);
    for (unsigned i = 0; i < src->nsel; i++) selector_copy(&p->sel[i], &src->sel[i]);
    return p;
}

void perms_free(struct acl_perms *p) {
    if (!p) return;
    for (unsigned i = 0; i < p->nsel; i++) selector_clear(&p->sel[i]);
    free(p->sel);
    free(p->pass);
    free(p);
}

bool perms_open(const struct acl_perms *p) {
    unsigned all = SEL_ALLKEYS | SEL_ALLCHANNELS | SEL_ALLCOMMANDS;
    return (p->sel[0].flags & all) == all;
}

static bool valid_hash(const char *h, size_t len) {
    if (len != 64) return false;
    for (size_t i = 0; i < len; i++)
        if (!((h[i] >= 'a' && h[i] <= 'f') || (h[i] >= '0' && h[i] <= '9'))) return false;
    return true;
}

static int find_pass(const struct acl_perms *p, const char *hex) {
    for (unsigned i = 0; i < p->npass; i++)
        if (memcmp(p->pass[i], hex, 64) == 0) return (int)i;
    return -1;
}

static void clear_passwords(struct acl_perms *p) {
    free(p->pass);
    p->pass = NULL;
    p->npass = 0;
}

/* >pass #hash <pass !hash */
static enum rule_error change_password(struct acl_perms *p, const char *op, size_t len) {
    char hex[65];
    if (op[0] == '>' || op[0] == '<') {
        sha256_hex(op + 1, len - 1, hex);
    } else {
        if (!valid_hash(op + 1, len - 1)) return RULE_BAD_HASH;
        memcpy(hex, op + 1, 64);
        hex[64] = '\0';
    }
    int at = find_pass(p, hex);
    if (op[0] == '>' || op[0] == '#') {
        if (at < 0) {
            p->pass = rk_realloc(p->pass, (p->npass + 1) * sizeof *p->pass);
            memcpy(p->pass[p->npass++], hex, 65);
        }
        p->flags &= ~USER_NOPASS;
        return RULE_OK;
    }
    if (at < 0) return RULE_NO_PASSWORD;
    memmove(p->pass[at], p->pass[at + 1], (p->npass - (unsigned)at - 1) * sizeof *p->pass);
    p->npass--;
    return RULE_OK;
}

/* (rules): a new selector */
static enum rule_error add_selector(struct acl_perms *p, const char *op, size_t len) {
    char *inner = rk_strndup(op + 1, len - 2);
    char **words;
    int n = split_args(inner, &words);
    free(inner);
    if (n < 0) return RULE_SYNTAX;
    struct acl_selector s;
    selector_init(&s, 0);
    enum rule_error e = RULE_OK;
    for (int i = 0; i < n && e == RULE_OK; i++) e = selector_apply(&s, words[i], strlen(words[i]));
    free_words(words, n);
    if (e != RULE_OK) {
        selector_clear(&s);
        return e;
    }
    p->sel = rk_realloc(p->sel, (p->nsel + 1) * sizeof *p->sel);
    p->sel[p->nsel++] = s;
    return RULE_OK;
}

enum rule_error perms_apply(struct acl_perms *p, const char *op, size_t len) {
    if (len == 0) return RULE_OK;
    if (op_is(op, len, "on")) {
        p->flags = (p->flags | USER_ON) & ~USER_OFF;
    } else if (op_is(op, len, "off")) {
        p->flags = (p->flags | USER_OFF) & ~USER_ON;
    } else if (op_is(op, len, "skip-sanitize-payload")) {
        p->flags = (p->flags | USER_SKIP_SANITIZE) & ~USER_SANITIZE;
    } else if (op_is(op, len, "sanitize-payload")) {
        p->flags = (p->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
    } else if (op_is(op, len, "nopass")) {
        p->flags |= USER_NOPASS;
        clear_passwords(p);
    } else if (op_is(op, len, "resetpass")) {
        p->flags &= ~USER_NOPASS;
        clear_passwords(p);
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        return change_password(p, op, len);
    } else if (op[0] == '(' && op[len - 1] == ')' && len >= 2) {
        return add_selector(p, op, len);
    } else if (op_is(op, len, "clearselectors")) {
        for (unsigned i = 1; i < p->nsel; i++) selector_clear(&p->sel[i]);
        p->nsel = 1;
    } else if (op_is(op, len, "reset")) {
        static const char *const steps[] = { "resetpass", "resetkeys", "resetchannels", "off",
                                             "sanitize-payload", "clearselectors", "-@all" };
        for (size_t i = 0; i < RK_ARRAY_LEN(steps); i++) {
            perms_apply(p, steps[i], strlen(steps[i]));
            if (i == 2 && acl_pubsub_default_flags()) perms_apply(p, "allchannels", 11);
        }
    } else {
        return selector_apply(&p->sel[0], op, len);
    }
    return RULE_OK;
}

/* ---- describing ---- */

static void count_category(const struct acl_selector *s, unsigned cat, unsigned long *on, unsigned long *off) {
    *on = *off = 0;
    for (int i = 0; i < ncommands; i++) {
        if (!acl_command_in_category(i, cat)) continue;
        if (get_bit(s, i)) (*on)++;
        else (*off)++;
    }
}

void selector_describe_commands(const struct acl_selector *s, struct rbuf *out) {
    struct acl_selector fake = { 0 }, temp = { 0 };
    bool additive = !get_bit(s, FUTURE_BIT);
    size_t start = out->len;
    rbuf_printf(out, "%s", additive ? "-@all " : "+@all ");
    selector_apply(&fake, additive ? "-@all" : "+@all", 5);
    memcpy(temp.cmds, s->cmds, sizeof temp.cmds);
    bool applied[NCATEGORIES] = { false };
    for (;;) {
        int best = -1;
        unsigned long mindiff = ULONG_MAX, maxsame = 0;
        for (unsigned j = 0; j < NCATEGORIES; j++) {
            if (applied[j]) continue;
            unsigned long on, off;
            count_category(&temp, j, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = (int)j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        change_category(&fake, (unsigned)best, additive);
        change_category(&temp, (unsigned)best, !additive);
        rbuf_printf(out, "%c@%s ", additive ? '+' : '-', category_names[best]);
        applied[best] = true;
    }
    /* single commands, in table order (a container before its subcommands) */
    for (int i = 0; i < ncommands; i++) {
        bool user = get_bit(s, i);
        const struct command *cmd = command_by_index((size_t)i);
        if (user != get_bit(&fake, i)) {
            rbuf_printf(out, "%c%s ", user ? '+' : '-', cmd->name);
            change_command(&fake, cmd, user);
        }
        if (!user)
            for (unsigned j = 0; j < s->nfirst_args; j++)
                if (s->first_args[j].cmd == i) rbuf_printf(out, "+%s|%s ", cmd->name, s->first_args[j].arg);
    }
    selector_clear(&fake);
    if (out->len > start) out->len--;   /* the last space */
    out->buf[out->len] = '\0';
}

static void append_key_pattern(struct rbuf *out, const struct key_pattern *k) {
    rbuf_printf(out, "%s%s", k->perm == KEY_ALL ? "~" : k->perm == KEY_READ ? "%R~" : "%W~", k->text);
}

void selector_describe_keys(const struct acl_selector *s, struct rbuf *out) {
    if (s->flags & SEL_ALLKEYS) { rbuf_printf(out, "~*"); return; }
    for (unsigned i = 0; i < s->nkeys; i++) {
        if (i) rbuf_printf(out, " ");
        append_key_pattern(out, &s->keys[i]);
    }
}

void selector_describe_channels(const struct acl_selector *s, struct rbuf *out) {
    if (s->flags & SEL_ALLCHANNELS) { rbuf_printf(out, "&*"); return; }
    for (unsigned i = 0; i < s->nchannels; i++) rbuf_printf(out, "%s&%s", i ? " " : "", s->channels[i]);
}

/* Redis's ACLDescribeSelector */
static void describe_selector(const struct acl_selector *s, struct rbuf *out) {
    if (s->flags & SEL_ALLKEYS) {
        rbuf_printf(out, "~* ");
    } else {
        for (unsigned i = 0; i < s->nkeys; i++) {
            append_key_pattern(out, &s->keys[i]);
            rbuf_printf(out, " ");
        }
    }
    if (s->flags & SEL_ALLCHANNELS) {
        rbuf_printf(out, "&* ");
    } else {
        rbuf_printf(out, "resetchannels ");
        for (unsigned i = 0; i < s->nchannels; i++) rbuf_printf(out, "&%s ", s->channels[i]);
    }
    selector_describe_commands(s, out);
}

const struct acl_user_flag acl_user_flags[ACL_USER_FLAGS] = {
    { USER_ON, "on" }, { USER_OFF, "off" }, { USER_NOPASS, "nopass" },
    { USER_SKIP_SANITIZE, "skip-sanitize-payload" }, { USER_SANITIZE, "sanitize-payload" },
};

void perms_describe(const struct acl_perms *p, struct rbuf *out) {
    for (size_t i = 0; i < ACL_USER_FLAGS; i++)
        if (p->flags & acl_user_flags[i].flag) rbuf_printf(out, "%s ", acl_user_flags[i].name);
    for (unsigned i = 0; i < p->npass; i++) rbuf_printf(out, "#%s ", p->pass[i]);
    for (unsigned i = 0; i < p->nsel; i++) {
        if (i) rbuf_printf(out, " (");
        describe_selector(&p->sel[i], out);
        if (i) rbuf_printf(out, ")");
    }
}
