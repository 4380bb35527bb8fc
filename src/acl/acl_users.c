/*
 * The users: a registry by name, the default user, authentication, and the
 * changes ACL SETUSER, DELUSER and LOAD make, with the ACL file and the
 * config's `user` lines.
 *
 * The registry (sorted by name, as Redis's rax lists them) and the list of
 * retired permission snapshots are behind one mutex, which only AUTH, the
 * ACL commands and config take. Connections never take it: they hold
 * their user and read its published snapshot (acl.h).
 */
#include "acl_internal.h"
#include "ringkv/config.h"
#include "ringkv/log.h"
#include "ringkv/reply.h"
#include "ringkv/sha256.h"
#include "ringkv/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct acl_user **users;          /* sorted by name */
static size_t nusers;
static struct acl_user *default_user;
static struct acl_perms **retired;      /* replaced snapshots, freed by acl_reclaim */
static size_t nretired, nreclaimable;   /* retired[0..nreclaimable) were marked */

/* config `user` lines, applied by acl_load_startup */
static char ***pending_lines;
static int *pending_argc;
static size_t npending;

/* ---- identities ---- */

void acl_user_hold(struct acl_user *u) { atomic_fetch_add_explicit(&u->refs, 1, memory_order_relaxed); }

void acl_user_release(struct acl_user *u) {
    if (u && atomic_fetch_sub_explicit(&u->refs, 1, memory_order_acq_rel) == 1) free(u);
}

struct acl_user *acl_default_user(void) {
    acl_user_hold(default_user);
    return default_user;
}

static struct acl_user *user_new(const char *name, size_t len) {
    struct acl_user *u = rk_calloc(1, sizeof *u + len + 1);
    memcpy(u->name, name, len);
    u->namelen = len;
    atomic_init(&u->refs, 1);   /* the registry's */
    return u;
}

/* Publish p as u's permissions (NULL: deleted); the old snapshot is retired. */
static void publish(struct acl_user *u, struct acl_perms *p) {
    struct acl_perms *old = atomic_exchange_explicit(&u->perms, p, memory_order_acq_rel);
    atomic_store_explicit(&u->open, p && perms_open(p), memory_order_release);
    if (old) {
        retired = rk_realloc(retired, (nretired + 1) * sizeof *retired);
        retired[nretired++] = old;
    }
}

static int compare_names(const char *a, size_t alen, const char *b, size_t blen) {
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* index of name, or -(insertion point) - 1 */
static long find_user(const char *name, size_t len) {
    size_t lo = 0, hi = nusers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = compare_names(users[mid]->name, users[mid]->namelen, name, len);
        if (c == 0) return (long)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -(long)lo - 1;
}

static void insert_user(struct acl_user *u) {
    long at = find_user(u->name, u->namelen);
    size_t pos = (size_t)(-at - 1);
    users = rk_realloc(users, (nusers + 1) * sizeof *users);
    memmove(users + pos + 1, users + pos, (nusers - pos) * sizeof *users);
    users[pos] = u;
    nusers++;
}

static void remove_user_at(size_t i) {
    struct acl_user *u = users[i];
    memmove(users + i, users + i + 1, (nusers - i - 1) * sizeof *users);
    nusers--;
    publish(u, NULL);
    acl_user_release(u);
}

static struct acl_perms *perms_of(const struct acl_user *u) {
    return atomic_load_explicit(&((struct acl_user *)u)->perms, memory_order_acquire);
}

static struct acl_perms *default_perms(void) {
    struct acl_perms *p = perms_new();
    static const char *const rules[] = { "+@all", "~*", "&*", "on", "nopass" };
    for (size_t i = 0; i < RK_ARRAY_LEN(rules); i++) perms_apply(p, rules[i], strlen(rules[i]));
    return p;
}

/* requirepass: resetpass, then >pass or nopass (Redis's ACLUpdateDefaultUserPassword) */
static void apply_requirepass(struct acl_perms *p, const char *pass, size_t n) {
    perms_apply(p, "resetpass", 9);
    if (pass && n) {
        char *op = rk_malloc(n + 1);
        op[0] = '>';
        memcpy(op + 1, pass, n);
        perms_apply(p, op, n + 1);
        free(op);
    } else {
        perms_apply(p, "nopass", 6);
    }
}

void acl_init(void) {
    acl_categories_init();
    pthread_mutex_lock(&lock);
    default_user = user_new("default", 7);
    struct acl_perms *p = default_perms();
    apply_requirepass(p, rk_config.requirepass, rk_config.requirepass ? strlen(rk_config.requirepass) : 0);
    publish(default_user, p);
    insert_user(default_user);
    pthread_mutex_unlock(&lock);
}

void acl_set_requirepass(const char *pass, size_t len) {
    if (!default_user) return;   /* acl_init reads it */
    pthread_mutex_lock(&lock);
    struct acl_perms *p = perms_copy(perms_of(default_user));
    apply_requirepass(p, pass, len);
    publish(default_user, p);
    pthread_mutex_unlock(&lock);
}

bool acl_default_nopass(void) {
    const struct acl_perms *p = perms_of(default_user);
    return (p->flags & USER_NOPASS) && !(p->flags & USER_OFF);
}

bool acl_user_exists(struct slice name) {
    pthread_mutex_lock(&lock);
    bool found = find_user(name.ptr, name.len) >= 0;
    pthread_mutex_unlock(&lock);
    return found;
}

struct acl_user *acl_find_user(struct slice name) {
    pthread_mutex_lock(&lock);
    long at = find_user(name.ptr, name.len);
    struct acl_user *u = at >= 0 ? users[at] : NULL;
    if (u) acl_user_hold(u);
    pthread_mutex_unlock(&lock);
    return u;
}

bool acl_default_passwordless(void) {
    return perms_of(default_user)->flags & USER_NOPASS;
}

/* ---- authentication ---- */

/* Compare every byte whatever differs, as Redis's time_independent_strcmp. */
static bool same_hash(const char *a, const char *b) {
    unsigned diff = 0;
    for (int i = 0; i < 64; i++) diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

static bool password_matches(const struct acl_perms *p, struct slice pass) {
    if (p->flags & USER_NOPASS) return true;
    char hex[65];
    sha256_hex(pass.ptr, pass.len, hex);
    bool ok = false;
    for (unsigned i = 0; i < p->npass; i++) ok |= same_hash(hex, p->pass[i]);
    return ok;
}

struct acl_user *acl_authenticate(struct slice name, struct slice pass) {
    pthread_mutex_lock(&lock);
    struct acl_user *found = NULL;
    long at = find_user(name.ptr, name.len);
    if (at >= 0) {
        struct acl_user *u = users[at];
        const struct acl_perms *p = perms_of(u);
        if (!(p->flags & USER_OFF) && (p->flags & USER_ON) && password_matches(p, pass)) {
            acl_user_hold(u);
            found = u;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* ---- SETUSER ---- */


/* Redis's ACLMergeSelectorArguments: "(~a" "+get)" is one rule "(~a +get)".
 * Returns the rules (malloc'd copies), or NULL with *bad the index where an
 * unmatched parenthesis starts. */
static struct slice *merge_selectors(int argc, const struct slice *in, int *nout, int *bad) {
    struct slice *out = rk_calloc((size_t)argc + 1, sizeof *out);
    int n = 0, open_at = -1;
    struct rbuf sel = { 0 };
    for (int i = 0; i < argc; i++) {
        struct slice op = in[i];
        if (open_at < 0 && op.len && op.ptr[0] == '(' && op.ptr[op.len - 1] != ')') {
            open_at = i;
            sel.len = 0;
            rbuf_append(&sel, op.ptr, op.len);
            continue;
        }
        if (open_at >= 0) {
            rbuf_append(&sel, " ", 1);
            rbuf_append(&sel, op.ptr, op.len);
            if (op.len && op.ptr[op.len - 1] == ')') {
                out[n++] = (struct slice){ rk_strndup(sel.buf, sel.len), sel.len };
                open_at = -1;
            }
            continue;
        }
        out[n++] = (struct slice){ rk_strndup(op.ptr, op.len), op.len };
    }
    rbuf_free(&sel);
    if (open_at >= 0) {
        for (int i = 0; i < n; i++) free((char *)out[i].ptr);
        free(out);
        *bad = open_at;
        return NULL;
    }
    *nout = n;
    return out;
}

static void free_rules(struct slice *rules, int n) {
    for (int i = 0; i < n; i++) free((char *)rules[i].ptr);
    free(rules);
}

/* Rules onto a copy of base (NULL: a new user): the new snapshot, or NULL
 * with *err. */
static struct acl_perms *build_perms(const struct acl_perms *base, int argc, const struct slice *in, char **err) {
    int n = 0, bad = 0;
    struct slice *rules = merge_selectors(argc, in, &n, &bad);
    if (!rules) {
        *err = rk_asprintf("ERR Unmatched parenthesis in acl selector starting at '%.*s'.", (int)in[bad].len,
                            in[bad].ptr);
        return NULL;
    }
    struct acl_perms *p = base ? perms_copy(base) : perms_new();
    for (int i = 0; i < n; i++) {
        enum rule_error e = perms_apply(p, rules[i].ptr, rules[i].len);
        if (e != RULE_OK) {
            *err = rk_asprintf("ERR Error in ACL SETUSER modifier '%.*s': %s", (int)rules[i].len, rules[i].ptr,
                                rule_error_text(e));
            perms_free(p);
            p = NULL;
            break;
        }
    }
    free_rules(rules, n);
    return p;
}

char *acl_setuser(struct slice name, int argc, const struct slice *rules) {
    if (acl_has_spaces(name.ptr, name.len)) return rk_asprintf("ERR Usernames can't contain spaces or null characters");
    pthread_mutex_lock(&lock);
    long at = find_user(name.ptr, name.len);
    char *err = NULL;
    struct acl_perms *p = build_perms(at >= 0 ? perms_of(users[at]) : NULL, argc, rules, &err);
    if (p) {
        struct acl_user *u = at >= 0 ? users[at] : user_new(name.ptr, name.len);
        publish(u, p);
        if (at < 0) insert_user(u);
    }
    pthread_mutex_unlock(&lock);
    return err;
}

int acl_deluser(int argc, const struct slice *names) {
    int deleted = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < argc; i++) {
        long at = find_user(names[i].ptr, names[i].len);
        if (at < 0 || users[at] == default_user) continue;
        remove_user_at((size_t)at);
        deleted++;
    }
    pthread_mutex_unlock(&lock);
    return deleted;
}

/* ---- reading ---- */

static void selector_fields_reply(struct reply *r, const struct acl_selector *s) {
    struct rbuf b = { 0 };
    reply_bulk_cstr(r, "commands");
    selector_describe_commands(s, &b);
    reply_bulk(r, b.buf ? b.buf : "", b.len);
    b.len = 0;
    reply_bulk_cstr(r, "keys");
    selector_describe_keys(s, &b);
    reply_bulk(r, b.buf ? b.buf : "", b.len);
    b.len = 0;
    reply_bulk_cstr(r, "channels");
    selector_describe_channels(s, &b);
    reply_bulk(r, b.buf ? b.buf : "", b.len);
    rbuf_free(&b);
}

bool acl_getuser_reply(struct reply *r, struct slice name) {
    const struct acl_user_flag *flags = acl_user_flags;
    pthread_mutex_lock(&lock);
    long at = find_user(name.ptr, name.len);
    if (at < 0) {
        pthread_mutex_unlock(&lock);
        return false;
    }
    const struct acl_perms *p = perms_of(users[at]);
    reply_map(r, 6);
    reply_bulk_cstr(r, "flags");
    size_t nflags = 0;
    for (size_t i = 0; i < ACL_USER_FLAGS; i++) nflags += (p->flags & flags[i].flag) != 0;
    reply_set(r, nflags);
    for (size_t i = 0; i < ACL_USER_FLAGS; i++)
        if (p->flags & flags[i].flag) reply_bulk_cstr(r, flags[i].name);
    reply_bulk_cstr(r, "passwords");
    reply_array(r, p->npass);
    for (unsigned i = 0; i < p->npass; i++) reply_bulk(r, p->pass[i], 64);
    selector_fields_reply(r, &p->sel[0]);
    reply_bulk_cstr(r, "selectors");
    reply_array(r, p->nsel - 1);
    for (unsigned i = 1; i < p->nsel; i++) {
        reply_map(r, 3);
        selector_fields_reply(r, &p->sel[i]);
    }
    pthread_mutex_unlock(&lock);
    return true;
}

static void describe_user(const struct acl_user *u, struct rbuf *out) {
    rbuf_printf(out, "user %s ", u->name);
    perms_describe(perms_of(u), out);
}

void acl_list_reply(struct reply *r, bool names_only) {
    pthread_mutex_lock(&lock);
    reply_array(r, nusers);
    struct rbuf b = { 0 };
    for (size_t i = 0; i < nusers; i++) {
        if (names_only) {
            reply_bulk(r, users[i]->name, users[i]->namelen);
            continue;
        }
        b.len = 0;
        describe_user(users[i], &b);
        reply_bulk(r, b.buf, b.len);
    }
    rbuf_free(&b);
    pthread_mutex_unlock(&lock);
}

void acl_describe_all(struct rbuf *out) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nusers; i++) {
        describe_user(users[i], out);
        rbuf_append(out, "\n", 1);
    }
    pthread_mutex_unlock(&lock);
}

void acl_cat_reply(struct reply *r) {
    reply_array(r, acl_category_count());
    for (unsigned i = 0; i < acl_category_count(); i++) reply_bulk_cstr(r, acl_category_name(i));
}

bool acl_cat_commands_reply(struct reply *r, struct slice category) {
    int cat = acl_category_find(category.ptr, category.len);
    if (cat < 0) return false;
    size_t n = 0, total = command_index_count();
    for (size_t i = 0; i < total; i++) n += acl_command_in_category((int)i, (unsigned)cat);
    reply_array(r, n);
    for (size_t i = 0; i < total; i++)
        if (acl_command_in_category((int)i, (unsigned)cat)) reply_bulk_cstr(r, command_by_index(i)->name);
    return true;
}

/* ---- reclaiming snapshots ---- */

void acl_reclaim_mark(void) {
    pthread_mutex_lock(&lock);
    nreclaimable = nretired;
    pthread_mutex_unlock(&lock);
}

void acl_reclaim(void) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nreclaimable; i++) perms_free(retired[i]);
    if (nretired > nreclaimable) memmove(retired, retired + nreclaimable, (nretired - nreclaimable) * sizeof *retired);
    nretired -= nreclaimable;
    nreclaimable = 0;
    pthread_mutex_unlock(&lock);
}

/* ---- user lines (the ACL file, the config) ---- */

/* The rules of a line `user NAME rules...` as slices of its words. */
static struct slice *line_rules(int argc, char **argv) {
    struct slice *rules = rk_calloc((size_t)argc, sizeof *rules);
    for (int i = 2; i < argc; i++) rules[i - 2] = (struct slice){ argv[i], strlen(argv[i]) };
    return rules;
}

/* A line's rules as a new user's permissions, or NULL with *why
 * (malloc'd): the reason alone, without ACL SETUSER's framing. */
static struct acl_perms *perms_of_line(int argc, char **argv, char **why) {
    struct slice *rules = line_rules(argc, argv);
    char *err = NULL;
    struct acl_perms *p = build_perms(NULL, argc - 2, rules, &err);
    free(rules);
    if (!p) {
        /* "ERR Error in ACL SETUSER modifier 'x': why" */
        const char *reason = strstr(err, "': ");
        *why = strdup(reason ? reason + 3 : err + 4);
        free(err);
    }
    return p;
}

bool acl_has_file(void) {
    const char *f = rk_config.aclfile;
    return f && f[0];
}

struct loaded_user {
    char *name;
    struct acl_perms *perms;
};

static void free_loaded(struct loaded_user *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        perms_free(v[i].perms);
    }
    free(v);
}

/* Parse the file into new users; errors collect in *errors (Redis's
 * messages), and any error means nothing is loaded. */
static struct loaded_user *parse_acl_file(const char *path, size_t *nout, struct rbuf *errors, bool *opened) {
    FILE *f = fopen(path, "r");
    *opened = f != NULL;
    if (!f) {
        rbuf_printf(errors, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct loaded_user *v = NULL;
    size_t n = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    for (int linenum = 1; (len = getline(&line, &cap, f)) >= 0; linenum++) {
        while (len > 0 && strchr(" \t\r\n", line[len - 1])) line[--len] = '\0';
        char **argv;
        int argc = split_args(line, &argv);
        if (argc < 0) {
            rbuf_printf(errors, "%s:%d: unbalanced quotes in acl line. ", path, linenum);
            continue;
        }
        if (argc == 0) { free_words(argv, argc); continue; }
        if (strcmp(argv[0], "user") != 0 || argc < 2) {
            rbuf_printf(errors, "%s:%d should start with user keyword followed by the username. ", path, linenum);
        } else if (acl_has_spaces(argv[1], strlen(argv[1]))) {
            rbuf_printf(errors, "'%s:%d: username '%s' contains invalid characters. ", path, linenum, argv[1]);
        } else {
            bool dup = false;
            for (size_t i = 0; i < n; i++) dup |= strcmp(v[i].name, argv[1]) == 0;
            if (dup) {
                rbuf_printf(errors, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum);
            } else {
                char *why;
                struct acl_perms *p = perms_of_line(argc, argv, &why);
                if (!p) {
                    rbuf_printf(errors, "%s:%d: %s. ", path, linenum, why);
                    free(why);
                } else {
                    v = rk_realloc(v, (n + 1) * sizeof *v);
                    v[n].name = strdup(argv[1]);
                    v[n].perms = p;
                    n++;
                }
            }
        }
        free_words(argv, argc);
    }
    free(line);
    fclose(f);
    *nout = n;
    return v;
}

/* Replace every user by the loaded ones; the default user keeps its
 * identity (its connections stay), every other user is a new one. */
static void install_users(struct loaded_user *v, size_t n) {
    for (size_t i = nusers; i-- > 0;)
        if (users[i] != default_user) remove_user_at(i);
    bool had_default = false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].name, "default") == 0) {
            publish(default_user, v[i].perms);
            had_default = true;
        } else {
            struct acl_user *u = user_new(v[i].name, strlen(v[i].name));
            publish(u, v[i].perms);
            insert_user(u);
        }
        v[i].perms = NULL;
    }
    if (!had_default) publish(default_user, default_perms());
}

char *acl_load_file(void) {
    struct rbuf errors = { 0 };
    size_t n = 0;
    pthread_mutex_lock(&lock);
    bool opened;
    struct loaded_user *v = parse_acl_file(rk_config.aclfile, &n, &errors, &opened);
    if (errors.len == 0) install_users(v, n);
    pthread_mutex_unlock(&lock);
    free_loaded(v, n);
    if (errors.len == 0) return NULL;
    if (opened) rbuf_printf(&errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
    char *s = rk_asprintf("ERR %s", errors.buf);
    rbuf_free(&errors);
    return s;
}

bool acl_save_file(void) {
    struct rbuf text = { 0 };
    acl_describe_all(&text);
    const char *path = rk_config.aclfile;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
    bool ok = false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        rk_log(LL_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    } else if (write(fd, text.buf, text.len) != (ssize_t)text.len) {
        rk_log(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else if (fsync(fd) != 0 || rename(tmp, path) != 0) {
        rk_log(LL_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
    } else {
        ok = true;
    }
    if (fd >= 0) close(fd);
    if (!ok) unlink(tmp);
    rbuf_free(&text);
    return ok;
}

/* ---- startup ---- */

const char *acl_config_user(int argc, char **argv) {
    /* argv[0] is "user", argv[1] the name */
    for (size_t i = 0; i < npending; i++)
        if (strcmp(pending_lines[i][1], argv[1]) == 0) return rule_error_text(RULE_DUPLICATE);
    char *why;
    struct acl_perms *p = perms_of_line(argc, argv, &why);
    if (!p) {
        static _Thread_local char msg[512];
        snprintf(msg, sizeof msg, "%s", why);
        free(why);
        return msg;
    }
    perms_free(p);
    pending_lines = rk_realloc(pending_lines, (npending + 1) * sizeof *pending_lines);
    pending_argc = rk_realloc(pending_argc, (npending + 1) * sizeof *pending_argc);
    char **copy = rk_malloc((size_t)argc * sizeof *copy);
    for (int i = 0; i < argc; i++) copy[i] = strdup(argv[i]);
    pending_lines[npending] = copy;
    pending_argc[npending++] = argc;
    return NULL;
}

static void free_pending(void) {
    for (size_t i = 0; i < npending; i++) free_words(pending_lines[i], pending_argc[i]);
    free(pending_lines);
    free(pending_argc);
    pending_lines = NULL;
    pending_argc = NULL;
    npending = 0;
}

bool acl_load_startup(char **err) {
    *err = NULL;
    if (acl_has_file() && npending) {
        *err = strdup("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path "
                      "is invalid. This setup is very likely to lead to configuration errors and security holes, "
                      "please define either an ACL file or declare users directly in your redis.conf, but not both.");
        free_pending();
        return false;
    }
    for (size_t i = 0; i < npending && !*err; i++) {
        char **argv = pending_lines[i];
        int argc = pending_argc[i];
        struct slice *rules = line_rules(argc, argv);
        struct slice name = { argv[1], strlen(argv[1]) };
        if (strcmp(argv[1], "default") == 0) acl_setuser(name, 1, &SLICE_LIT("reset"));
        char *e = acl_setuser(name, argc - 2, rules);
        free(rules);
        if (e) {
            *err = e;
            break;
        }
    }
    free_pending();
    if (*err) return false;
    if (acl_has_file()) {
        *err = acl_load_file();
        if (*err) return false;
    }
    acl_reclaim_mark();   /* no thread runs yet */
    acl_reclaim();
    return true;
}

void acl_shutdown(void) {
    pthread_mutex_lock(&lock);
    while (nusers) remove_user_at(nusers - 1);
    free(users);
    users = NULL;
    default_user = NULL;
    pthread_mutex_unlock(&lock);
    acl_reclaim_mark();
    acl_reclaim();
    free(retired);
    retired = NULL;
    free_pending();
}
