/*
 * registry.c -- the process-wide registry of scripts and function libraries.
 *
 * Every thread's engine compiles what it runs in its own Lua states; what
 * is shared is only the source: EVAL bodies by SHA1 and FUNCTION libraries
 * by name, behind one mutex. A thread takes it when a script or library is
 * loaded, when it first meets one, and for the commands that read or change
 * the set (SCRIPT EXISTS/FLUSH, FUNCTION LIST/DELETE/FLUSH/RESTORE/STATS);
 * never on the run of a script it has compiled.
 *
 * Two generation counters tell the threads that their compiled caches may
 * be stale: script_gen moves on SCRIPT FLUSH (bodies never change for a
 * sha, so a flush is the only invalidation), fn_gen on any change of the
 * libraries. Each engine compares them (one relaxed load) at every entry.
 * Nothing here calls Lua, so no Lua error can unwind through the lock.
 */
#include "script_internal.h"

#include "ringkv/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

struct reg_script {
    unsigned char sha[20];
    int flags;
    size_t shebang_len;
    size_t len;
    char body[];   /* len bytes and a NUL */
};

struct reg_lib {
    uint64_t id;
    struct reg_lib_def d;
};

static struct {
    pthread_mutex_t mu;
    _Atomic uint64_t script_gen;
    _Atomic uint64_t fn_gen;
    /* scripts: open addressing on the sha's first bytes, power-of-two slots */
    struct reg_script **slots;
    size_t cap, n, bytes;
    /* libraries, in the order they were linked */
    struct reg_lib **libs;
    size_t nlibs, libs_cap;
    uint64_t next_id;
} reg = { .mu = PTHREAD_MUTEX_INITIALIZER, .next_id = 1 };

/* Error texts are one line: CR and LF become spaces (and go at the end),
 * as Redis's error replies have them. */
static void one_line(struct rbuf *err) {
    while (err->len && (err->buf[err->len - 1] == '\r' || err->buf[err->len - 1] == '\n')) err->len--;
    for (size_t i = 0; i < err->len; i++)
        if (err->buf[i] == '\r' || err->buf[i] == '\n') err->buf[i] = ' ';
    err->buf[err->len] = '\0';
}

void script_err_set(struct rbuf *err, const char *s) {
    if (!err) return;
    err->len = 0;
    rbuf_append(err, s, strlen(s) + 1);
    err->len--;
    one_line(err);
}

void script_err_setf(struct rbuf *err, const char *fmt, ...) {
    if (!err) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof(buf)) {
        script_err_set(err, buf);
        return;
    }
    err->len = 0;
    char *dst = rbuf_reserve(err, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(dst, (size_t)n + 1, fmt, ap);
    va_end(ap);
    err->len = (size_t)n;
    one_line(err);
}

bool script_name_ok(const char *s, size_t len) {
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

/* ---- scripts ---------------------------------------------------------------- */

uint64_t reg_script_gen(void) {
    return atomic_load_explicit(&reg.script_gen, memory_order_relaxed);
}

static inline size_t sha_slot(const unsigned char sha[20], size_t mask) {
    uint64_t h;
    memcpy(&h, sha, sizeof(h));
    return (size_t)h & mask;
}

static struct reg_script **find_slot(const unsigned char sha[20]) {
    if (!reg.cap) return NULL;
    size_t mask = reg.cap - 1;
    for (size_t i = sha_slot(sha, mask);; i = (i + 1) & mask) {
        struct reg_script *s = reg.slots[i];
        if (!s || memcmp(s->sha, sha, 20) == 0) return &reg.slots[i];
    }
}

bool reg_script_get(const unsigned char sha[20], int *flags, char **body, size_t *len, size_t *shebang_len) {
    bool found = false;
    pthread_mutex_lock(&reg.mu);
    struct reg_script **slot = find_slot(sha);
    if (slot && *slot) {
        struct reg_script *s = *slot;
        found = true;
        if (flags) *flags = s->flags;
        if (body) {
            *body = rk_malloc(s->len + 1);
            memcpy(*body, s->body, s->len + 1);
            *len = s->len;
            *shebang_len = s->shebang_len;
        }
    }
    pthread_mutex_unlock(&reg.mu);
    return found;
}

static void grow_scripts(void) {
    size_t ncap = reg.cap ? reg.cap * 2 : 64;
    struct reg_script **old = reg.slots;
    size_t ocap = reg.cap;
    reg.slots = rk_calloc(ncap, sizeof(*reg.slots));
    reg.cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i]) *find_slot(old[i]->sha) = old[i];
    free(old);
}

void reg_script_put(const unsigned char sha[20], const char *body, size_t len, int flags, size_t shebang_len) {
    struct reg_script *s = rk_malloc(sizeof(*s) + len + 1);
    memcpy(s->sha, sha, 20);
    s->flags = flags;
    s->shebang_len = shebang_len;
    s->len = len;
    if (len) memcpy(s->body, body, len);
    s->body[len] = '\0';
    pthread_mutex_lock(&reg.mu);
    if ((reg.n + 1) * 2 > reg.cap) grow_scripts();
    struct reg_script **slot = find_slot(sha);
    if (*slot) {
        free(s);   /* loaded meanwhile by another thread: same body */
    } else {
        *slot = s;
        reg.n++;
        reg.bytes += sizeof(*s) + len + 1;
    }
    pthread_mutex_unlock(&reg.mu);
}

void reg_script_flush(void) {
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.cap; i++) free(reg.slots[i]);
    free(reg.slots);
    reg.slots = NULL;
    reg.cap = reg.n = reg.bytes = 0;
    atomic_fetch_add_explicit(&reg.script_gen, 1, memory_order_release);
    pthread_mutex_unlock(&reg.mu);
}

/* ---- libraries ----------------------------------------------------------------- */

uint64_t reg_fn_gen(void) {
    return atomic_load_explicit(&reg.fn_gen, memory_order_relaxed);
}

void reg_lib_def_free(struct reg_lib_def *d) {
    for (int i = 0; i < d->nfns; i++) {
        free(d->fns[i].name);
        free(d->fns[i].desc);
    }
    free(d->fns);
    free(d->name);
    free(d->code);
    memset(d, 0, sizeof(*d));
}

static void bump_fn_gen(void) {
    atomic_fetch_add_explicit(&reg.fn_gen, 1, memory_order_release);
}

/* Caller holds the lock. */
static ssize_t lib_index(const char *name) {
    for (size_t i = 0; i < reg.nlibs; i++)
        if (strcmp(reg.libs[i]->d.name, name) == 0) return (ssize_t)i;
    return -1;
}

/* A linked function of that name (any case), skipping library skip. */
static const struct reg_fn_def *fn_lookup(const char *name, size_t len, const struct reg_lib *skip,
                                          const struct reg_lib **lib) {
    for (size_t i = 0; i < reg.nlibs; i++) {
        const struct reg_lib *l = reg.libs[i];
        if (l == skip) continue;
        for (int j = 0; j < l->d.nfns; j++) {
            const char *fn = l->d.fns[j].name;
            if (strlen(fn) == len && strncasecmp(fn, name, len) == 0) {
                if (lib) *lib = l;
                return &l->d.fns[j];
            }
        }
    }
    return NULL;
}

static void link_lib(struct reg_lib *l) {
    if (reg.nlibs == reg.libs_cap) {
        reg.libs_cap = reg.libs_cap ? reg.libs_cap * 2 : 8;
        reg.libs = rk_realloc(reg.libs, reg.libs_cap * sizeof(*reg.libs));
    }
    reg.libs[reg.nlibs++] = l;
}

static void unlink_at(size_t i) {
    memmove(&reg.libs[i], &reg.libs[i + 1], (reg.nlibs - i - 1) * sizeof(*reg.libs));
    reg.nlibs--;
}

static void free_lib(struct reg_lib *l) {
    if (!l) return;
    reg_lib_def_free(&l->d);
    free(l);
}

bool reg_lib_exists(const char *name) {
    pthread_mutex_lock(&reg.mu);
    bool found = lib_index(name) >= 0;
    pthread_mutex_unlock(&reg.mu);
    return found;
}

uint64_t reg_lib_publish(struct reg_lib_def *d, bool replace, struct rbuf *err) {
    uint64_t id = 0;
    pthread_mutex_lock(&reg.mu);
    ssize_t old = lib_index(d->name);
    if (old >= 0 && !replace) {
        script_err_setf(err, "ERR Library '%s' already exists", d->name);
        goto out;
    }
    const struct reg_lib *skip = old >= 0 ? reg.libs[old] : NULL;
    for (int j = 0; j < d->nfns; j++) {
        if (fn_lookup(d->fns[j].name, strlen(d->fns[j].name), skip, NULL)) {
            script_err_setf(err, "ERR Function %s already exists", d->fns[j].name);
            goto out;
        }
    }
    struct reg_lib *l = rk_calloc(1, sizeof(*l));
    l->id = id = reg.next_id++;
    l->d = *d;
    memset(d, 0, sizeof(*d));
    if (old >= 0) {
        free_lib(reg.libs[old]);
        unlink_at((size_t)old);
    }
    link_lib(l);
    bump_fn_gen();
out:
    pthread_mutex_unlock(&reg.mu);
    return id;
}

bool reg_lib_delete(const char *name, size_t len) {
    bool found = false;
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.nlibs; i++) {
        const char *n = reg.libs[i]->d.name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            free_lib(reg.libs[i]);
            unlink_at(i);
            bump_fn_gen();
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&reg.mu);
    return found;
}

static void drop_all_libs(void) {
    for (size_t i = 0; i < reg.nlibs; i++) free_lib(reg.libs[i]);
    reg.nlibs = 0;
}

void reg_fn_flush(void) {
    pthread_mutex_lock(&reg.mu);
    drop_all_libs();
    bump_fn_gen();
    pthread_mutex_unlock(&reg.mu);
}

bool reg_fn_find(const char *name, size_t len, uint64_t *lib_id, int *flags, char **code, size_t *code_len,
                 size_t *body_off) {
    bool found = false;
    pthread_mutex_lock(&reg.mu);
    const struct reg_lib *l = NULL;
    const struct reg_fn_def *f = fn_lookup(name, len, NULL, &l);
    if (f) {
        found = true;
        if (lib_id) *lib_id = l->id;
        if (flags) *flags = f->flags;
        if (code) {
            *code = rk_malloc(l->d.code_len + 1);
            memcpy(*code, l->d.code, l->d.code_len + 1);
            *code_len = l->d.code_len;
            *body_off = l->d.body_off;
        }
    }
    pthread_mutex_unlock(&reg.mu);
    return found;
}

void reg_fn_live(uint64_t **ids, size_t *n, uint64_t *gen) {
    pthread_mutex_lock(&reg.mu);
    *n = reg.nlibs;
    *ids = rk_malloc((reg.nlibs ? reg.nlibs : 1) * sizeof(uint64_t));
    for (size_t i = 0; i < reg.nlibs; i++) (*ids)[i] = reg.libs[i]->id;
    *gen = atomic_load_explicit(&reg.fn_gen, memory_order_relaxed);
    pthread_mutex_unlock(&reg.mu);
}

/* Redis's libraryJoin (APPEND/REPLACE) or functionsLibCtxSwapWithCurrent
 * (FLUSH). The defs were checked among themselves by the caller. */
bool reg_lib_restore(struct reg_lib_def *defs, size_t n, enum script_restore_policy policy, struct rbuf *err) {
    bool ok = false;
    pthread_mutex_lock(&reg.mu);
    if (policy == SCRIPT_RESTORE_FLUSH) {
        drop_all_libs();
    } else {
        /* libraries to replace, or the error; then function collisions with
         * what stays */
        bool *gone = rk_calloc(reg.nlibs ? reg.nlibs : 1, sizeof(bool));
        for (size_t k = 0; k < n; k++) {
            ssize_t old = lib_index(defs[k].name);
            if (old < 0) continue;
            if (policy != SCRIPT_RESTORE_REPLACE) {
                script_err_setf(err, "ERR Library %s already exists", defs[k].name);
                free(gone);
                goto out;
            }
            gone[old] = true;
        }
        for (size_t k = 0; k < n; k++) {
            for (int j = 0; j < defs[k].nfns; j++) {
                const char *fname = defs[k].fns[j].name;
                size_t flen = strlen(fname);
                for (size_t i = 0; i < reg.nlibs; i++) {
                    if (gone[i]) continue;
                    const struct reg_lib *l = reg.libs[i];
                    for (int m = 0; m < l->d.nfns; m++) {
                        if (strlen(l->d.fns[m].name) == flen && strncasecmp(l->d.fns[m].name, fname, flen) == 0) {
                            script_err_setf(err, "ERR Function %s already exists", fname);
                            free(gone);
                            goto out;
                        }
                    }
                }
            }
        }
        size_t w = 0;
        for (size_t i = 0; i < reg.nlibs; i++) {
            if (gone[i])
                free_lib(reg.libs[i]);
            else
                reg.libs[w++] = reg.libs[i];
        }
        reg.nlibs = w;
        free(gone);
    }
    for (size_t k = 0; k < n; k++) {
        struct reg_lib *l = rk_calloc(1, sizeof(*l));
        l->id = reg.next_id++;
        l->d = defs[k];
        memset(&defs[k], 0, sizeof(defs[k]));
        link_lib(l);
    }
    bump_fn_gen();
    ok = true;
out:
    pthread_mutex_unlock(&reg.mu);
    return ok;
}

/* ---- FUNCTION LIST / STATS / DUMP and figures ---------------------------- */

static const struct {
    int flag;
    const char *name;
} flag_names[] = {
    { SCRIPT_FLAG_NO_WRITES, "no-writes" },
    { SCRIPT_FLAG_ALLOW_OOM, "allow-oom" },
    { SCRIPT_FLAG_ALLOW_STALE, "allow-stale" },
    { SCRIPT_FLAG_NO_CLUSTER, "no-cluster" },
    { SCRIPT_FLAG_ALLOW_CROSS_SLOT, "allow-cross-slot-keys" },
};

void reg_function_list(struct reply *r, const struct slice *pattern, bool withcode) {
    pthread_mutex_lock(&reg.mu);
    size_t count = 0;
    for (size_t i = 0; i < reg.nlibs; i++) {
        const char *name = reg.libs[i]->d.name;
        if (!pattern || string_match(pattern->ptr, pattern->len, name, strlen(name), 1)) count++;
    }
    reply_array(r, count);
    for (size_t i = 0; i < reg.nlibs; i++) {
        const struct reg_lib_def *d = &reg.libs[i]->d;
        if (pattern && !string_match(pattern->ptr, pattern->len, d->name, strlen(d->name), 1)) continue;
        reply_map(r, withcode ? 4 : 3);
        reply_bulk_cstr(r, "library_name");
        reply_bulk_cstr(r, d->name);
        reply_bulk_cstr(r, "engine");
        reply_bulk_cstr(r, "LUA");
        reply_bulk_cstr(r, "functions");
        reply_array(r, (size_t)d->nfns);
        for (int j = 0; j < d->nfns; j++) {
            const struct reg_fn_def *f = &d->fns[j];
            reply_map(r, 3);
            reply_bulk_cstr(r, "name");
            reply_bulk_cstr(r, f->name);
            reply_bulk_cstr(r, "description");
            if (f->desc)
                reply_bulk_cstr(r, f->desc);
            else
                reply_null(r);
            reply_bulk_cstr(r, "flags");
            size_t nflags = 0;
            for (size_t k = 0; k < RK_ARRAY_LEN(flag_names); k++)
                if (f->flags & flag_names[k].flag) nflags++;
            reply_set(r, nflags);
            for (size_t k = 0; k < RK_ARRAY_LEN(flag_names); k++)
                if (f->flags & flag_names[k].flag) reply_simple(r, flag_names[k].name);
        }
        if (withcode) {
            reply_bulk_cstr(r, "library_code");
            reply_bulk(r, d->code, d->code_len);
        }
    }
    pthread_mutex_unlock(&reg.mu);
}

void reg_function_stats_engines(struct reply *r) {
    struct script_stats s;
    reg_stats(&s);
    reply_map(r, 1);
    reply_bulk_cstr(r, "LUA");
    reply_map(r, 2);
    reply_bulk_cstr(r, "libraries_count");
    reply_int(r, (long long)s.libraries);
    reply_bulk_cstr(r, "functions_count");
    reply_int(r, (long long)s.functions);
}

void reg_function_foreach(void (*fn)(void *arg, struct slice name, struct slice code), void *arg) {
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.nlibs; i++) {
        const struct reg_lib_def *d = &reg.libs[i]->d;
        fn(arg, (struct slice){ d->name, strlen(d->name) }, (struct slice){ d->code, d->code_len });
    }
    pthread_mutex_unlock(&reg.mu);
}

void reg_stats(struct script_stats *s) {
    memset(s, 0, sizeof(*s));
    pthread_mutex_lock(&reg.mu);
    s->scripts = reg.n;
    s->scripts_bytes = reg.bytes + reg.cap * sizeof(*reg.slots);
    s->libraries = reg.nlibs;
    for (size_t i = 0; i < reg.nlibs; i++) {
        const struct reg_lib_def *d = &reg.libs[i]->d;
        s->functions += (size_t)d->nfns;
        s->functions_bytes += sizeof(struct reg_lib) + strlen(d->name) + 1 + d->code_len + 1;
        for (int j = 0; j < d->nfns; j++)
            s->functions_bytes += sizeof(struct reg_fn_def) + strlen(d->fns[j].name) + 1 +
                                  (d->fns[j].desc ? strlen(d->fns[j].desc) + 1 : 0);
    }
    s->functions_bytes += reg.libs_cap * sizeof(*reg.libs);
    pthread_mutex_unlock(&reg.mu);
}
