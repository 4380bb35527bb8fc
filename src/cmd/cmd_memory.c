/*
 * MEMORY USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE and HELP, with Redis
 * 7.0's replies (object.c's memoryCommand), and the memory figures INFO
 * shares with them.
 *
 * Every figure starts from used_memory, the bytes counted in allocations
 * (mem.h), as Redis's zmalloc counts them; the RSS is only compared with
 * it (the fragmentation ratios).
 *
 * USAGE is keyed: the dispatcher runs it on the shard that owns the key.
 * A key costs its entry (an arena block, or a malloc'd one for big
 * entries) plus, for a collection kept apart from its entry, what the
 * object allocates (its type's obj_ops.usage, which samples big
 * collections as Redis does). A small collection inline in its entry costs
 * the entry alone. The table slot pointing at the entry is left out, as
 * Redis leaves out its bucket array.
 *
 * STATS and DOCTOR run holding every shard (CMD_ALLSHARDS), to read the
 * tables; the clients' bytes are what each thread published at its last
 * cron (INFO's mem_clients_normal is the same figure). PURGE has each
 * thread's allocator heap give its free pages back (cmd_memory_gather on
 * every thread).
 */
#include "ringkv/server.h"
#include "ringkv/arena.h"
#include "ringkv/config.h"
#include "ringkv/mem.h"
#include "ringkv/lazyfree.h"
#include "ringkv/script.h"
#include "ringkv/script_host.h"
#include "ringkv/util.h"

#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARG(i) (c->argv[i])
#define ARG_IS(i, s) slice_eq_nocase(c->argv[i], s)

/* The server binary links mimalloc (CMakeLists.txt) and this code is also
 * linked into tests that do not, so its functions are weak references:
 * NULL when the library is absent. */
extern int mi_version(void) __attribute__((weak));
extern void mi_collect(bool force) __attribute__((weak));
extern void mi_stats_print_out(void (*out)(const char *msg, void *arg), void *arg) __attribute__((weak));

/* ---- process figures ---- */

static size_t startup_used;

size_t memory_rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
        fclose(f);
    }
    return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

void memory_note_startup(void) { startup_used = mem_used(); }

/* As Redis's "jemalloc-5.3.0". */
const char *memory_allocator_name(void) {
    static _Thread_local char name[32];
    if (!mi_version) return "libc";
    int v = mi_version();   /* e.g. 209 for 2.0.9 */
    snprintf(name, sizeof name, "mimalloc-%d.%d.%d", v / 100, v / 10 % 10, v % 10);
    return name;
}

/* ---- MEMORY USAGE ---- */

/* The bytes behind an entry: arena blocks come in ARENA_STEP steps of at
 * least ARENA_MIN_BLOCK (arena.h), the others from malloc. */
static size_t entry_cost(const struct kv_entry *e) {
    if (!(e->meta & ENTRY_ARENA)) return malloc_usable_size((void *)e);
    size_t size = (entry_alloc_size(e) + ARENA_STEP - 1) & ~(size_t)(ARENA_STEP - 1);
    return size < ARENA_MIN_BLOCK ? ARENA_MIN_BLOCK : size;
}

static size_t key_usage(const struct kv_entry *e, size_t samples) {
    size_t bytes = entry_cost(e);
    unsigned type = entry_type(e);
    if (type == OBJ_STRING || (e->meta & ENTRY_INLINE)) return bytes;
    const struct obj_ops *ops = obj_ops_by_type[type];
    return bytes + (ops && ops->usage ? ops->usage(entry_obj(e), samples) : 0);
}

/* MEMORY USAGE key [SAMPLES count]: options first, then the key, as Redis. */
static void memory_usage(struct cmd_ctx *c) {
    long long samples = 5;
    for (int i = 3; i < c->argc; i += 2) {   /* SAMPLES and its count */
        if (!ARG_IS(i, "samples") || i + 1 == c->argc) {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
        if (!arg_ll_or_reply(c, ARG(i + 1), &samples)) return;
        if (samples < 0) {
            reply_error(&c->r, ERR_SYNTAX);
            return;
        }
    }
    const struct kv_entry *e = db_lookup(c, ARG(2), LOOKUP_NOEXPIRE);
    if (!e) {
        reply_null(&c->r);
        return;
    }
    reply_int(&c->r, (long long)key_usage(e, samples == 0 ? SIZE_MAX : (size_t)samples));
}

/* ---- PURGE on every thread (per_shard) ---- */

/* PURGE: this thread's mimalloc heap gives its free pages back. STATS and
 * DOCTOR gather nothing: they only need every shard held. */
void cmd_memory_gather(struct cmd_ctx *c) {
    if (ARG_IS(1, "purge") && mi_collect) mi_collect(true);
}

static uint64_t clients_bytes(void) {
    uint64_t sum = 0;
    for (unsigned i = 0; i < srv.nworkers; i++)
        sum += __atomic_load_n(&srv.workers[i].stats.clients_mem, __ATOMIC_RELAXED);
    return sum;
}

/* ---- STATS, DOCTOR and INFO: Redis's getMemoryOverheadData ---- */

struct db_overhead { unsigned db; size_t keys, main; };

struct mem_overhead {
    size_t peak, total, startup, clients, tables, scripts, overhead, keys, bytes_per_key, dataset, rss;
    long long frag_bytes;           /* RSS beyond used_memory */
    double dataset_perc, peak_perc, frag;
    size_t ndbs;
    struct db_overhead *dbs;        /* databases with keys (NULL: not asked for) */
};

/* The tables' arrays, every shard held (or, for INFO, read as they are). */
static void overhead_dbs(struct cmd_ctx *c, struct mem_overhead *mh, bool per_db) {
    unsigned ndb = c->shards[0]->ndb;
    if (per_db) mh->dbs = rk_calloc(ndb ? ndb : 1, sizeof *mh->dbs);
    for (unsigned d = 0; d < ndb; d++) {
        struct db_overhead o = { d, 0, 0 };
        for (unsigned s = 0; s < c->nshards; s++) {
            o.keys += table_size(&c->shards[s]->dbs[d].table);
            o.main += table_memory(&c->shards[s]->dbs[d].table);
        }
        if (!o.keys) continue;
        if (per_db) mh->dbs[mh->ndbs++] = o;
        mh->keys += o.keys;
        mh->tables += o.main;
    }
}

static size_t scripts_bytes(void) {
    struct script_stats st;
    script_stats(&st);
    return st.scripts_bytes + st.functions_bytes;
}

static void overhead_compute(struct cmd_ctx *c, struct mem_overhead *mh, bool per_db) {
    *mh = (struct mem_overhead){0};
    mh->total = mem_used();
    mh->peak = mem_used_peak_update();
    mh->rss = memory_rss_bytes();
    mh->startup = startup_used;
    mh->clients = clients_bytes();
    mh->scripts = scripts_bytes();
    overhead_dbs(c, mh, per_db);
    /* no replication backlog; the AOF's buffers are its writers' own */
    mh->overhead = mh->startup + mh->clients + mh->tables + mh->scripts;
    size_t net = mh->total > mh->startup ? mh->total - mh->startup : 0;
    mh->bytes_per_key = mh->keys ? net / mh->keys : 0;
    mh->dataset = mh->total > mh->overhead ? mh->total - mh->overhead : 0;
    mh->dataset_perc = (double)mh->dataset * 100.0 / (double)(net ? net : 1);
    mh->peak_perc = (double)mh->total * 100.0 / (double)(mh->peak ? mh->peak : 1);
    mh->frag = (double)mh->rss / (double)(mh->total ? mh->total : 1);
    mh->frag_bytes = (long long)mh->rss - (long long)mh->total;
}

static void field_int(struct reply *r, const char *name, long long v) {
    reply_bulk_cstr(r, name);
    reply_int(r, v);
}

static void field_double(struct reply *r, const char *name, double v) {
    reply_bulk_cstr(r, name);
    reply_double(r, v);
}

/* 27 fields and one per database with keys, in Redis 7.0's order. The
 * allocator's own figures are used_memory (allocated) and the RSS (active,
 * resident): mimalloc keeps no count of its own that could split them. */
static void memory_stats(struct cmd_ctx *c) {
    struct mem_overhead mh;
    overhead_compute(c, &mh, true);
    struct reply *r = &c->r;
    reply_map(r, 27 + mh.ndbs);
    field_int(r, "peak.allocated", (long long)mh.peak);
    field_int(r, "total.allocated", (long long)mh.total);
    field_int(r, "startup.allocated", (long long)mh.startup);
    field_int(r, "replication.backlog", 0);
    field_int(r, "clients.slaves", 0);
    field_int(r, "clients.normal", (long long)mh.clients);
    field_int(r, "cluster.links", 0);
    field_int(r, "aof.buffer", 0);
    field_int(r, "lua.caches", (long long)mh.scripts);
    field_int(r, "functions.caches", 0);
    for (size_t i = 0; i < mh.ndbs; i++) {
        char name[32];
        snprintf(name, sizeof name, "db.%u", mh.dbs[i].db);
        reply_bulk_cstr(r, name);
        reply_map(r, 3);
        field_int(r, "overhead.hashtable.main", (long long)mh.dbs[i].main);
        field_int(r, "overhead.hashtable.expires", 0);   /* TTLs live in the entries */
        field_int(r, "overhead.hashtable.slot-to-keys", 0);
    }
    field_int(r, "overhead.total", (long long)mh.overhead);
    field_int(r, "keys.count", (long long)mh.keys);
    field_int(r, "keys.bytes-per-key", (long long)mh.bytes_per_key);
    field_int(r, "dataset.bytes", (long long)mh.dataset);
    field_double(r, "dataset.percentage", mh.dataset_perc);
    field_double(r, "peak.percentage", mh.peak_perc);
    field_int(r, "allocator.allocated", (long long)mh.total);
    field_int(r, "allocator.active", (long long)mh.rss);
    field_int(r, "allocator.resident", (long long)mh.rss);
    field_double(r, "allocator-fragmentation.ratio", mh.frag);
    field_int(r, "allocator-fragmentation.bytes", mh.frag_bytes);
    field_double(r, "allocator-rss.ratio", 1.0);
    field_int(r, "allocator-rss.bytes", 0);
    field_double(r, "rss-overhead.ratio", 1.0);
    field_int(r, "rss-overhead.bytes", 0);
    field_double(r, "fragmentation", mh.frag);
    field_int(r, "fragmentation.bytes", mh.frag_bytes);
    free(mh.dbs);
}

static size_t total_system_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
}

/* INFO memory's scripting lines, as Redis 7.0 writes them. */
static void info_scripting_memory(struct rbuf *out) {
    struct script_stats st;
    script_stats(&st);
    size_t vm_eval, vm_functions;
    script_host_memory(&vm_eval, &vm_functions);
    char h_lua[32], h_vm[32], h_scripts[32];
    human_bytes(h_lua, sizeof h_lua, (double)vm_eval);
    human_bytes(h_vm, sizeof h_vm, (double)(vm_eval + vm_functions));
    human_bytes(h_scripts, sizeof h_scripts, (double)(st.scripts_bytes + st.functions_bytes));
    rbuf_printf(out,
               "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_lua_human:%s\r\n"
               "used_memory_scripts_eval:%zu\r\nnumber_of_cached_scripts:%zu\r\nnumber_of_functions:%zu\r\n"
               "number_of_libraries:%zu\r\nused_memory_vm_functions:%zu\r\nused_memory_vm_total:%zu\r\n"
               "used_memory_vm_total_human:%s\r\nused_memory_functions:%zu\r\nused_memory_scripts:%zu\r\n"
               "used_memory_scripts_human:%s\r\n",
               vm_eval, vm_eval, h_lua, st.scripts_bytes, st.scripts, st.functions, st.libraries, vm_functions,
               vm_eval + vm_functions, h_vm, st.functions_bytes, st.scripts_bytes + st.functions_bytes, h_scripts);
}

void memory_info(struct cmd_ctx *c, struct rbuf *out) {
    struct mem_overhead mh;
    overhead_compute(c, &mh, false);
    char h_used[32], h_rss[32], h_peak[32], h_sys[32], h_max[32];
    size_t sys = total_system_memory();
    long long maxmemory = CONFIG_GET(maxmemory);
    human_bytes(h_used, sizeof h_used, (double)mh.total);
    human_bytes(h_rss, sizeof h_rss, (double)mh.rss);
    human_bytes(h_peak, sizeof h_peak, (double)mh.peak);
    human_bytes(h_sys, sizeof h_sys, (double)sys);
    human_bytes(h_max, sizeof h_max, (double)maxmemory);
    rbuf_printf(out,
               "# Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\n"
               "used_memory_rss_human:%s\r\nused_memory_peak:%zu\r\nused_memory_peak_human:%s\r\n"
               "used_memory_peak_perc:%.2f%%\r\nused_memory_overhead:%zu\r\nused_memory_startup:%zu\r\n"
               "used_memory_dataset:%zu\r\nused_memory_dataset_perc:%.2f%%\r\nallocator_allocated:%zu\r\n"
               "allocator_active:%zu\r\nallocator_resident:%zu\r\ntotal_system_memory:%zu\r\n"
               "total_system_memory_human:%s\r\n",
               mh.total, h_used, mh.rss, h_rss, mh.peak, h_peak, mh.peak_perc, mh.overhead, mh.startup, mh.dataset,
               mh.dataset_perc, mh.total, mh.rss, mh.rss, sys, h_sys);
    info_scripting_memory(out);
    rbuf_printf(out,
               "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\nallocator_frag_ratio:%.2f\r\n"
               "allocator_frag_bytes:%lld\r\nallocator_rss_ratio:1.00\r\nallocator_rss_bytes:0\r\n"
               "rss_overhead_ratio:1.00\r\nrss_overhead_bytes:0\r\nmem_fragmentation_ratio:%.2f\r\n"
               "mem_fragmentation_bytes:%lld\r\nmem_not_counted_for_evict:%zu\r\nmem_replication_backlog:0\r\n"
               "mem_total_replication_buffers:0\r\nmem_clients_slaves:0\r\nmem_clients_normal:%zu\r\n"
               "mem_cluster_links:0\r\nmem_aof_buffer:0\r\nmem_allocator:%s\r\nactive_defrag_running:0\r\n"
               "lazyfree_pending_objects:%zu\r\nlazyfreed_objects:%zu\r\n",
               maxmemory, h_max, rk_config.maxmemory_policy, mh.frag, mh.frag_bytes, mh.frag, mh.frag_bytes,
               mem_not_counted_for_evict(), mh.clients,
               memory_allocator_name(), lazyfree_pending(), lazyfree_freed());
}

/* Redis's getMemoryDoctorReport, with the checks ringkv's figures can
 * make: an empty instance, a past peak, big client buffers. (The
 * fragmentation and RSS overhead checks cannot fire: see the top.) */
static void memory_doctor(struct cmd_ctx *c) {
    struct mem_overhead mh;
    overhead_compute(c, &mh, false);
    long clients = atomic_load(&srv.connected);
    bool empty = mh.total < 5u * 1024 * 1024;
    bool big_peak = !empty && (double)mh.peak / (double)mh.total > 1.5;
    bool big_client_buf = !empty && clients > 0 && mh.clients / (size_t)clients > 200u * 1024;
    struct rbuf s = {0};
#define ADD(text) rbuf_append(&s, text, strlen(text))
    if (empty) {
        ADD("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
            "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam "
            "and I will be back to our programming as soon as I finished rebooting.\n");
    } else if (!big_peak && !big_client_buf) {
        ADD("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
            "base.\n");
    } else {
        ADD("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
        if (big_peak)
            ADD(" * Peak memory: In the past this instance used more than 150% the memory that is currently "
                "using. The allocator is normally not able to release memory after a peak, so you can expect to "
                "see a big fragmentation ratio, however this is actually harmless and is only due to the memory "
                "peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the "
                "memory will be used as soon as you fill the Redis instance with more data. If the memory peak "
                "was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, "
                "otherwise the only other option is to shutdown and restart the instance.\n\n");
        if (big_client_buf)
            ADD(" * Big client buffers: The clients output buffers in this instance are greater than 200K per "
                "client (on average). This may result from different causes, like Pub/Sub clients subscribed to "
                "channels bot not receiving data fast enough, so that data piles on the Redis instance output "
                "buffer, or clients sending commands with large replies or very large sequences of commands in "
                "the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it "
                "causes problems in your instance, or to understand better why certain clients are using a big "
                "amount of memory.\n\n");
        ADD("I'm here to keep you safe, Sam. I want to help you.\n");
    }
#undef ADD
    reply_verbatim(&c->r, s.buf, s.len, "txt");
    rbuf_free(&s);
}

/* ---- MALLOC-STATS, PURGE, HELP ---- */

static void stats_out(const char *msg, void *arg) {
    rbuf_append(arg, msg, strlen(msg));
}

static void memory_malloc_stats(struct cmd_ctx *c) {
    if (!mi_stats_print_out) {
        reply_bulk_cstr(&c->r, "Stats not supported for the current allocator");
        return;
    }
    struct rbuf s = {0};
    mi_stats_print_out(stats_out, &s);
    reply_verbatim(&c->r, s.buf ? s.buf : "", s.len, "txt");
    rbuf_free(&s);
}

static const char *memory_help[] = {
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Print this help.",
};

/* The dispatcher has resolved the subcommand and checked its arity. */
void cmd_memory(struct cmd_ctx *c) {
    if (ARG_IS(1, "usage")) memory_usage(c);
    else if (ARG_IS(1, "stats")) memory_stats(c);
    else if (ARG_IS(1, "doctor")) memory_doctor(c);
    else if (ARG_IS(1, "malloc-stats")) memory_malloc_stats(c);
    else if (ARG_IS(1, "purge")) reply_ok(&c->r);   /* cmd_memory_gather did the work */
    else reply_help(&c->r, memory_help, RK_ARRAY_LEN(memory_help));
}
