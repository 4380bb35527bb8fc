/*
 * Inside the ACL module: a user's permissions as rules build them
 * (acl_rules.c), shared by the registry (acl_users.c) and the checks
 * (acl_check.c). A struct acl_perms is built by applying rules to a copy,
 * then published and never changed again.
 */
#ifndef RINGKV_ACL_INTERNAL_H
#define RINGKV_ACL_INTERNAL_H

#include "ringkv/acl.h"
#include "ringkv/command.h"

#include <stdint.h>

/* user flags, in the order ACL LIST shows them (Redis's ACLUserFlags) */
#define USER_ON            (1u << 0)
#define USER_OFF           (1u << 1)
#define USER_NOPASS        (1u << 2)
#define USER_SKIP_SANITIZE (1u << 3)
#define USER_SANITIZE      (1u << 4)
#define ACL_USER_FLAGS 5
struct acl_user_flag { unsigned flag; const char *name; };
extern const struct acl_user_flag acl_user_flags[ACL_USER_FLAGS];   /* in that order */

/* selector flags */
#define SEL_ROOT        (1u << 0)   /* the user's own rules, outside parentheses */
#define SEL_ALLKEYS     (1u << 1)
#define SEL_ALLCHANNELS (1u << 2)
#define SEL_ALLCOMMANDS (1u << 3)

/* a key pattern's access */
#define KEY_READ  (1u << 0)
#define KEY_WRITE (1u << 1)
#define KEY_ALL   (KEY_READ | KEY_WRITE)

/* One bit per command index (command.h); the last bit is set only by
 * +@all, so that the rules can say whether they started from +@all. */
#define CMD_WORDS (COMMAND_IDS_MAX / 64)
#define FUTURE_BIT (COMMAND_IDS_MAX - 1)

struct key_pattern {
    unsigned perm;          /* KEY_* */
    char *text;             /* NUL-terminated, no spaces or NULs (as Redis) */
    size_t len;
    long prefix;            /* "app:*": the length before a last '*' that is the only
                             * special character (a prefix match); -1: a glob */
};
/* The prefix length of a pattern that is a prefix and one '*', or -1. */
long pattern_prefix(const char *text, size_t len);

/* +cmd|arg of a command without subcommands (SELECT|0, DEBUG|digest). */
struct first_arg {
    int cmd;                /* command index */
    char *arg;
};

struct acl_selector {
    unsigned flags;                 /* SEL_* */
    uint64_t cmds[CMD_WORDS];
    struct key_pattern *keys;
    unsigned nkeys;
    char **channels;
    unsigned nchannels;
    struct first_arg *first_args;
    unsigned nfirst_args;
};

struct acl_perms {
    unsigned flags;                 /* USER_* */
    char (*pass)[65];               /* SHA-256 hex of each password */
    unsigned npass;
    struct acl_selector *sel;       /* sel[0] is the root selector */
    unsigned nsel;
};

/* Redis's errno-coded errors of ACLSetUser, as their messages. */
enum rule_error {
    RULE_OK = 0, RULE_SYNTAX, RULE_UNKNOWN, RULE_KEY_AFTER_ALL, RULE_CHANNEL_AFTER_ALL,
    RULE_NO_PASSWORD, RULE_BAD_HASH, RULE_SUBCOMMAND_ARG, RULE_DUPLICATE,
};
const char *rule_error_text(enum rule_error e);

/* the acl-pubsub-default flag a new selector starts with */
unsigned acl_pubsub_default_flags(void);

struct acl_perms *perms_new(void);                   /* off, no rules: a new user */
struct acl_perms *perms_copy(const struct acl_perms *p);
void perms_free(struct acl_perms *p);
/* Apply one rule (op of len bytes; may hold binary passwords). */
enum rule_error perms_apply(struct acl_perms *p, const char *op, size_t len);
bool perms_open(const struct acl_perms *p);
/* Whether p[0..n) has a space or a NUL: not allowed in user names and
 * patterns (Redis's ACLStringHasSpaces). */
bool acl_has_spaces(const char *p, size_t n);
/* The rules that rebuild p, as ACL LIST shows them. */
void perms_describe(const struct acl_perms *p, struct rbuf *out);
void selector_describe_commands(const struct acl_selector *s, struct rbuf *out);
void selector_describe_keys(const struct acl_selector *s, struct rbuf *out);
void selector_describe_channels(const struct acl_selector *s, struct rbuf *out);

/* categories */
void acl_categories_init(void);
unsigned acl_category_count(void);
const char *acl_category_name(unsigned i);
bool acl_command_in_category(int cmd_index, unsigned category);
/* The checks' tables of each command (acl_check.c), once the table is built. */
void acl_check_init(void);
int acl_category_find(const char *name, size_t len);   /* -1: unknown */

#endif
