/*
 * Pub/sub commands: PUBLISH, SPUBLISH, PUBSUB, and the table entries of
 * SUBSCRIBE and its kin.
 *
 * Subscriptions belong to connections, so the connection layer
 * (io/pubsub.c) runs (P|S)SUBSCRIBE and (P|S)UNSUBSCRIBE itself
 * (CMD_SUBSCRIBE) and tells the directories of the threads concerned
 * (pubsub_dir.h) through the hidden pubsub-dir command. Their handlers
 * here only answer if run where the connection layer cannot (queued in
 * MULTI). PUBLISH runs on the publisher's thread against its replica of the
 * channel and pattern directory; SPUBLISH is routed, like a key, to the
 * shard of the channel's slot, which holds that channel's directory.
 */
#include "ringkv/command.h"
#include "ringkv/command_def.h"
#include "ringkv/db.h"
#include "ringkv/pubsub.h"
#include "ringkv/slot.h"
#include "ringkv/util.h"

#include <stdlib.h>

void (*pubsub_send_hook)(struct worker *w, unsigned thread, enum ps_kind k, struct slice channel,
                         struct slice msg);

/* Channels and patterns: every shard holds the same directory, so the
 * executing thread's own; shard channels: the channel's shard's. */
static struct ps_dir *dir_for(struct cmd_ctx *c, enum ps_kind k, struct slice channel) {
    if (k == PS_SHARD && c->multi) return c->shards[shard_of_key(channel.ptr, channel.len)]->psdir;
    return c->shard->psdir;
}

uint64_t pubsub_publish_dir(struct worker *w, const struct ps_dir *dir, enum ps_kind k, struct slice channel,
                            struct slice msg) {
    uint64_t threads;
    uint64_t n = ps_dir_receivers(dir, k, channel, &threads);
    if (pubsub_send_hook)
        for (; threads; threads &= threads - 1)
            pubsub_send_hook(w, (unsigned)__builtin_ctzll(threads), k, channel, msg);
    return n;
}

uint64_t pubsub_publish(struct cmd_ctx *c, enum ps_kind k, struct slice channel, struct slice msg) {
    return pubsub_publish_dir(c->worker, dir_for(c, k, channel), k, channel, msg);
}

void cmd_publish(struct cmd_ctx *c) {
    reply_int(&c->r, (long long)pubsub_publish(c, PS_CHANNEL, c->argv[1], c->argv[2]));
}

void cmd_spublish(struct cmd_ctx *c) {
    reply_int(&c->r, (long long)pubsub_publish(c, PS_SHARD, c->argv[1], c->argv[2]));
}

void cmd_subscribe(struct cmd_ctx *c) {
    reply_errorf(&c->r, "ERR %s inside MULTI is not supported", c->cmd->name);
}

/* pubsub-dir <kind> <thread> <delta> <name>: this shard's directory */
static void cmd_pubsub_dir(struct cmd_ctx *c) {
    long long kind, thread, delta;
    if (!str_to_ll(c->argv[1].ptr, c->argv[1].len, &kind) || !str_to_ll(c->argv[2].ptr, c->argv[2].len, &thread) ||
        !str_to_ll(c->argv[3].ptr, c->argv[3].len, &delta) || kind < 0 || kind >= PS_KINDS || thread < 0 || thread >= 64)
        return;
    if (!c->shard->psdir) c->shard->psdir = ps_dir_new();
    ps_dir_update(c->shard->psdir, (enum ps_kind)kind, (unsigned)thread, c->argv[4], (int)delta);
}

const struct command pubsub_dir_command = {
    .name = "pubsub-dir", .arity = 5, .proc = cmd_pubsub_dir,
};

/* ---- PUBSUB ---- */

struct name_list { struct rbuf names; size_t n; struct slice pat; bool any; };

static void collect_name(void *arg, struct slice name) {
    struct name_list *l = arg;
    if (l->any && !string_match(l->pat.ptr, l->pat.len, name.ptr, name.len, false)) return;
    uint32_t len = (uint32_t)name.len;
    rbuf_append(&l->names, (const char *)&len, 4);
    rbuf_append(&l->names, name.ptr, name.len);
    l->n++;
}

static void reply_names(struct cmd_ctx *c, struct name_list *l) {
    reply_array(&c->r, l->n);
    for (size_t off = 0; off < l->names.len;) {
        uint32_t len;
        memcpy(&len, l->names.buf + off, 4);
        reply_bulk(&c->r, l->names.buf + off + 4, len);
        off += 4 + len;
    }
    rbuf_free(&l->names);
}

static void pubsub_channels(struct cmd_ctx *c, enum ps_kind k) {
    struct name_list l = { .any = c->argc == 3 };
    if (l.any) l.pat = c->argv[2];
    if (k == PS_SHARD) {
        /* each shard holds the channels of its slots */
        for (unsigned s = 0; s < c->nshards; s++) ps_dir_each(c->shards[s]->psdir, k, collect_name, &l);
    } else {
        ps_dir_each(dir_for(c, k, (struct slice){ 0 }), k, collect_name, &l);
    }
    reply_names(c, &l);
}

static void pubsub_numsub(struct cmd_ctx *c, enum ps_kind k) {
    reply_array(&c->r, (size_t)(c->argc - 2) * 2);
    for (int i = 2; i < c->argc; i++) {
        struct ps_dir *d = k == PS_SHARD ? c->shards[shard_of_key(c->argv[i].ptr, c->argv[i].len)]->psdir
                                         : dir_for(c, k, c->argv[i]);
        reply_bulk_slice(&c->r, c->argv[i]);
        reply_int(&c->r, (long long)ps_dir_subscribers(d, k, c->argv[i]));
    }
}

static const char *pubsub_help[] = {
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
};

void cmd_pubsub(struct cmd_ctx *c) {
    const char *sub = c->cmd->name + sizeof "pubsub|" - 1;
    if (strcmp(sub, "channels") == 0) pubsub_channels(c, PS_CHANNEL);
    else if (strcmp(sub, "shardchannels") == 0) pubsub_channels(c, PS_SHARD);
    else if (strcmp(sub, "numsub") == 0) pubsub_numsub(c, PS_CHANNEL);
    else if (strcmp(sub, "shardnumsub") == 0) pubsub_numsub(c, PS_SHARD);
    else if (strcmp(sub, "numpat") == 0)
        reply_int(&c->r, (long long)ps_dir_count(dir_for(c, PS_PATTERN, (struct slice){ 0 }), PS_PATTERN));
    else reply_help(&c->r, pubsub_help, sizeof pubsub_help / sizeof *pubsub_help);
}

#define PS (CMD_PUBSUB | L)
#define SUB (CMD_SUBSCRIBE | CMD_NOSCRIPT | PS)

static const struct command pubsub_subs[] = {
    CMD("pubsub|channels", -2, PS, 0, 0, 0, cmd_pubsub, "@pubsub @slow", "List active channels", "2.8.0", "pubsub",
        "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
        "[pattern:pattern]"),
    CMD("pubsub|help", 2, L, 0, 0, 0, cmd_pubsub, "@slow", "Show helpful text about the different subcommands", "6.2.0", "pubsub", "O(1)", NULL),
    CMD("pubsub|numpat", 2, PS, 0, 0, 0, cmd_pubsub, "@pubsub @slow", "Get the count of unique patterns pattern subscriptions", "2.8.0", "pubsub", "O(1)", NULL),
    CMD("pubsub|numsub", -2, PS, 0, 0, 0, cmd_pubsub, "@pubsub @slow", "Get the count of subscribers for channels", "2.8.0", "pubsub",
        "O(N) for the NUMSUB subcommand, where N is the number of requested channels", "[channel:string ...]"),
    CMD("pubsub|shardchannels", -2, PS | CMD_ALLSHARDS, 0, 0, 0, cmd_pubsub, "@pubsub @slow", "List active shard channels", "7.0.0", "pubsub",
        "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).",
        "[pattern:pattern]"),
    CMD("pubsub|shardnumsub", -2, PS | CMD_ALLSHARDS, 0, 0, 0, cmd_pubsub, "@pubsub @slow", "Get the count of subscribers for shard channels", "7.0.0", "pubsub",
        "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels", "[shardchannel:string ...]"),
    { 0 }
};

const struct command pubsub_commands[] = {
    CMD("publish", 3, PS | F | CMD_MAY_REPLICATE, 0, 0, 0, cmd_publish, "@pubsub @fast", "Post a message to a channel", "2.0.0", "pubsub",
        "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
        "channel:string message:string"),
    CMD("spublish", 3, PS | F | CMD_MAY_REPLICATE, 1, 1, 1, cmd_spublish, "@pubsub @fast", "Post a message to a shard channel", "7.0.0", "pubsub",
        "O(N) where N is the number of clients subscribed to the receiving shard channel.", "shardchannel:string message:string"),
    CMD("subscribe", -2, SUB, 0, 0, 0, cmd_subscribe, "@pubsub @slow", "Listen for messages published to the given channels", "2.0.0", "pubsub",
        "O(N) where N is the number of channels to subscribe to.", "channel:string ..."),
    CMD("unsubscribe", -1, SUB, 0, 0, 0, cmd_subscribe, "@pubsub @slow", "Stop listening for messages posted to the given channels", "2.0.0", "pubsub",
        "O(N) where N is the number of clients already subscribed to a channel.", "[channel:string ...]"),
    CMD("psubscribe", -2, SUB, 0, 0, 0, cmd_subscribe, "@pubsub @slow", "Listen for messages published to channels matching the given patterns", "2.0.0", "pubsub",
        "O(N) where N is the number of patterns the client is already subscribed to.", "pattern:pattern ..."),
    CMD("punsubscribe", -1, SUB, 0, 0, 0, cmd_subscribe, "@pubsub @slow", "Stop listening for messages posted to channels matching the given patterns", "2.0.0", "pubsub",
        "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
        "[pattern:pattern ...]"),
    CMD("ssubscribe", -2, SUB, 1, -1, 1, cmd_subscribe, "@pubsub @slow", "Listen for messages published to the given shard channels", "7.0.0", "pubsub",
        "O(N) where N is the number of shard channels to subscribe to.", "shardchannel:string ..."),
    CMD("sunsubscribe", -1, SUB, 1, -1, 1, cmd_subscribe, "@pubsub @slow", "Stop listening for messages posted to the given shard channels", "7.0.0", "pubsub",
        "O(N) where N is the number of clients already subscribed to a shard channel.", "[shardchannel:string ...]"),
    CONTAINER("pubsub", pubsub_subs, "@slow", "A container for Pub/Sub commands", "2.8.0", "pubsub"),
    CMD_END
};
