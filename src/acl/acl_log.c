/*
 * The ACL log (ACL LOG): the latest denials, newest first, at most
 * acllog-max-len of them. A denial like one of the last ten (same reason,
 * context, object and user, within a minute) only bumps that entry's count
 * and moves it to the front, as Redis's addACLLogEntry does. One log for
 * the process, behind a mutex that only a denial or ACL LOG takes.
 */
#include "acl_internal.h"
#include "ringkv/config.h"
#include "ringkv/reply.h"

#include <pthread.h>
#include <stdlib.h>

#define GROUPING_MS 60000
#define GROUPING_SCAN 10

struct log_entry {
    long long count;
    enum acl_verdict reason;
    enum acl_context context;
    char *object, *username, *client_info;
    size_t object_len, username_len;
    long long ctime_ms;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_entry *entries;   /* newest first */
static size_t nentries, cap;

static void entry_free(struct log_entry *e) {
    free(e->object);
    free(e->username);
    free(e->client_info);
}

static bool similar(const struct log_entry *e, enum acl_verdict v, enum acl_context ctx, struct slice object,
                    struct slice user, long long now_ms) {
    long long delta = e->ctime_ms - now_ms;
    return e->reason == v && e->context == ctx && (delta < 0 ? -delta : delta) <= GROUPING_MS &&
           e->object_len == object.len && memcmp(e->object, object.ptr, object.len) == 0 &&
           e->username_len == user.len && memcmp(e->username, user.ptr, user.len) == 0;
}

static void move_to_front(size_t i) {
    struct log_entry e = entries[i];
    memmove(entries + 1, entries, i * sizeof *entries);
    entries[0] = e;
}

void acl_log_add(enum acl_verdict v, enum acl_context ctx, struct slice object, struct slice username,
                 const char *client_info, long long now_ms) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nentries && i < GROUPING_SCAN; i++) {
        struct log_entry *e = &entries[i];
        if (!similar(e, v, ctx, object, username, now_ms)) continue;
        free(e->client_info);
        e->client_info = rk_strndup(client_info, strlen(client_info));
        e->ctime_ms = now_ms;
        e->count++;
        move_to_front(i);
        pthread_mutex_unlock(&lock);
        return;
    }
    if (nentries == cap) {
        cap = cap ? cap * 2 : 16;
        entries = rk_realloc(entries, cap * sizeof *entries);
    }
    memmove(entries + 1, entries, nentries * sizeof *entries);
    entries[0] = (struct log_entry){
        .count = 1, .reason = v, .context = ctx, .object = rk_strndup(object.ptr, object.len), .object_len = object.len,
        .username = rk_strndup(username.ptr, username.len), .username_len = username.len,
        .client_info = rk_strndup(client_info, strlen(client_info)), .ctime_ms = now_ms,
    };
    nentries++;
    size_t max = (size_t)CONFIG_GET(acllog_max_len);
    while (nentries > max) entry_free(&entries[--nentries]);
    pthread_mutex_unlock(&lock);
}

void acl_log_reset(void) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nentries; i++) entry_free(&entries[i]);
    free(entries);
    entries = NULL;
    nentries = cap = 0;
    pthread_mutex_unlock(&lock);
}

static const char *reason_name(enum acl_verdict v) {
    switch (v) {
    case ACL_DENIED_CMD: return "command";
    case ACL_DENIED_KEY: return "key";
    case ACL_DENIED_CHANNEL: return "channel";
    case ACL_DENIED_AUTH: return "auth";
    default: return "unknown";
    }
}

static const char *context_name(enum acl_context c) {
    switch (c) {
    case ACL_CTX_TOPLEVEL: return "toplevel";
    case ACL_CTX_MULTI: return "multi";
    case ACL_CTX_LUA: return "lua";
    default: return "unknown";
    }
}

void acl_log_reply(struct reply *r, long count, long long now_ms) {
    pthread_mutex_lock(&lock);
    size_t n = count < 0 ? 0 : (size_t)count;
    if (n > nentries) n = nentries;
    reply_array(r, n);
    for (size_t i = 0; i < n; i++) {
        const struct log_entry *e = &entries[i];
        reply_map(r, 7);
        reply_bulk_cstr(r, "count");
        reply_int(r, e->count);
        reply_bulk_cstr(r, "reason");
        reply_bulk_cstr(r, reason_name(e->reason));
        reply_bulk_cstr(r, "context");
        reply_bulk_cstr(r, context_name(e->context));
        reply_bulk_cstr(r, "object");
        reply_bulk(r, e->object, e->object_len);
        reply_bulk_cstr(r, "username");
        reply_bulk(r, e->username, e->username_len);
        reply_bulk_cstr(r, "age-seconds");
        reply_double(r, (double)(now_ms - e->ctime_ms) / 1000);
        reply_bulk_cstr(r, "client-info");
        reply_bulk_cstr(r, e->client_info);
    }
    pthread_mutex_unlock(&lock);
}
