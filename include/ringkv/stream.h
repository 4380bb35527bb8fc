/*
 * The stream value object (OBJ_STREAM), laid out as Redis 7.0's t_stream.c
 * lays it out, in ringkv's listpack (listpack.h):
 *
 *   nodes     an idtree (idtree.h) from the ID of each node's first entry,
 *             its master ID, to a listpack of entries. A node is closed
 *             once it holds stream-node-max-entries entries (live and
 *             deleted) or stream-node-max-bytes bytes; the next XADD opens
 *             a new one.
 *   a node    starts with its master entry:
 *               count deleted num-fields field_1 ... field_N 0
 *             (count: live entries, deleted: entries flagged deleted, the
 *             fields of the node's first entry), then each entry as
 *               flags ms-diff seq-diff num-fields field_1 value_1 ...
 *             or, when its fields are the master's (flag SAMEFIELDS), just
 *               flags ms-diff seq-diff value_1 ... value_N
 *             with its ID as the difference from the master ID. XDEL only
 *             flags an entry deleted; a node whose entries are all deleted
 *             goes.
 *
 * Unlike Redis's, the node is a forward-only listpack and an entry has no
 * lp-count: a backward walk (XREVRANGE) scans a node forward and returns
 * what it found in reverse, which costs it a scan of the node, and saves
 * every entry its lp-count and a length trailer per element (a third of a
 * small entry).
 *
 * So field names are stored once per node while entries repeat them, IDs
 * cost a few bytes, and finding the node of an ID is O(log n).
 *
 * Consumer groups (XGROUP) are kept by name, sorted (XINFO lists them in
 * name order as Redis does), each with its pending entries list (PEL: an
 * idtree from ID to struct stream_nack) and its consumers, sorted by name,
 * each with its own idtree of the same nacks.
 *
 * The stream object is a plain pointer (never inline in its entry).
 * Commands change struct stream's fields only through these functions
 * (the RDB loader sets the counters of a stream it builds), except the
 * consumer groups' and consumers' plain fields (last_id, entries_read,
 * seen_time, ...), which are theirs to set.
 */
#ifndef RINGKV_STREAM_H
#define RINGKV_STREAM_H

#include "ringkv/common.h"
#include "ringkv/idtree.h"
#include "ringkv/listpack.h"

/* An entry's flags (Redis's STREAM_ITEM_FLAG_*). */
#define STREAM_FLAG_DELETED    1
#define STREAM_FLAG_SAMEFIELDS 2

/* Longest "<ms>-<seq>" text, with its NUL. */
#define STREAM_ID_STR_MAX 44
/* entries_read when it is not known (Redis's SCG_INVALID_ENTRIES_READ). */
#define STREAM_ENTRIES_READ_INVALID (-1LL)

struct stream_consumer;

/* A pending entry: delivered to a consumer, not yet acknowledged. */
struct stream_nack {
    long long delivery_time;           /* ms, last delivery */
    uint64_t delivery_count;
    struct stream_consumer *consumer;  /* who has it */
};

struct stream_consumer {
    struct slice name;                 /* owned */
    long long seen_time;               /* ms, last attempted interaction */
    struct idtree *pel;                /* ID -> struct stream_nack (shared with the group's PEL) */
};

struct stream_cg {
    struct slice name;                 /* owned */
    struct stream_id last_id;          /* last delivered */
    long long entries_read;            /* logical reads counter, or STREAM_ENTRIES_READ_INVALID */
    struct idtree *pel;                /* ID -> struct stream_nack (owns them) */
    struct stream_consumer **consumers;   /* sorted by name */
    size_t nconsumers;
};

struct stream {
    struct idtree *nodes;              /* master ID -> struct listpack * */
    uint64_t length;                   /* live entries */
    struct stream_id last_id;          /* the greatest ID ever added (or set by XSETID) */
    struct stream_id first_id;         /* the first live entry's ID, 0-0 when empty */
    struct stream_id max_deleted_id;   /* the greatest ID deleted (XDEL), 0-0 if none */
    uint64_t entries_added;            /* entries ever added */
    struct stream_cg **groups;         /* sorted by name */
    size_t ngroups;
};

/* Node limits, from stream-node-max-bytes and stream-node-max-entries
 * (0: no limit of that kind). */
struct stream_node_limits {
    size_t max_bytes;
    long long max_entries;
};

struct stream *stream_new(void);
void stream_free(struct stream *s);
struct stream *stream_dup(const struct stream *s);    /* groups, consumers and PELs too */
/* Bytes the stream allocates (MEMORY USAGE); nodes past `samples` are
 * estimated from the average of those seen, as Redis does. */
size_t stream_usage(const struct stream *s, size_t samples);
/* How the keyspace handles stream objects (entry.h). */
struct obj_ops;
extern const struct obj_ops stream_obj_ops;

/* ------------------------------------------------------------- IDs */

/* "<ms>-<seq>" into buf; returns its length. */
size_t stream_id_format(struct stream_id id, char buf[STREAM_ID_STR_MAX]);
/* Parse as Redis's streamGenericParseIDOrReply: "-" (0-0) and "+" (max)
 * unless strict, "<ms>" (seq = missing_seq), "<ms>-<seq>", and with
 * seq_given non-NULL also "<ms>-*" (*seq_given false). false when invalid. */
bool stream_id_parse(struct slice s, uint64_t missing_seq, bool strict, struct stream_id *id, bool *seq_given);
/* The ID after / before id; false on overflow / underflow (id unchanged). */
bool stream_id_incr(struct stream_id *id);
bool stream_id_decr(struct stream_id *id);

/* ------------------------------------------------------------- entries */

/* Append an entry with npairs field,value pairs (fv[2i], fv[2i+1]). id
 * must be greater than s->last_id (the caller checks). */
void stream_append(struct stream *s, struct stream_id id, const struct slice *fv, size_t npairs,
                   const struct stream_node_limits *lim);
/* Loading (RDB): add a node the caller built in the layout above, entries
 * whole and in order; false (nothing added) when a node with this master
 * ID is there. The loader then sets length, last_id, first_id,
 * max_deleted_id and entries_added, and stream_check tells whether the
 * whole agrees. */
bool stream_import_node(struct stream *s, struct stream_id master, struct listpack *lp);
/* Delete one entry (XDEL): false when it is not there. */
bool stream_delete(struct stream *s, struct stream_id id);
/* Whether an entry with this ID is there (not deleted). */
bool stream_has_entry(const struct stream *s, struct stream_id id);

enum stream_trim_by { STREAM_TRIM_NONE, STREAM_TRIM_MAXLEN, STREAM_TRIM_MINID };
struct stream_trim {
    enum stream_trim_by by;
    uint64_t maxlen;                   /* MAXLEN */
    struct stream_id minid;            /* MINID */
    bool approx;                       /* ~: only whole nodes */
    long long limit;                   /* LIMIT: at most this many entries (0: no limit) */
};
/* Trim as Redis's streamTrim; returns the entries removed. */
long long stream_trim(struct stream *s, const struct stream_trim *t);

/* Reading a range of entries, oldest first or (rev) newest first. The
 * stream must not change while an iterator is open. */
#define STREAM_ITER_BACK 64
struct stream_iter {
    const struct stream *s;
    struct stream_id start, end;
    bool rev;
    struct idtree_iter nodes;
    const struct listpack *lp;         /* the current node, NULL before the first */
    struct stream_id master;
    long long master_fields;
    size_t master_first_field;         /* position of the master's first field */
    size_t pos;                        /* the next entry (forward) / the node's first entry (rev) */
    size_t field_pos, value_pos;       /* the next field and value to read */
    long long fields_left;
    bool same_fields;
    /* rev: positions of entries still to return, a ring whose newest is at
     * back_top; back_limit is the first entry already returned (LP_NONE:
     * none yet) */
    size_t back[STREAM_ITER_BACK];
    unsigned back_n, back_top;
    size_t back_limit;
};
void stream_iter_start(struct stream_iter *it, const struct stream *s, struct stream_id start,
                       struct stream_id end, bool rev);
/* The next live entry in range: its ID and number of fields. */
bool stream_iter_next(struct stream_iter *it, struct stream_id *id, long long *nfields);
/* The current entry's next field and value (nfields times). */
void stream_iter_field(struct stream_iter *it, struct lp_value *field, struct lp_value *value);

/* ------------------------------------------------------------- groups */

struct stream_cg *stream_cg_find(const struct stream *s, struct slice name);
/* A new group; NULL when the name is taken. */
struct stream_cg *stream_cg_create(struct stream *s, struct slice name, struct stream_id last_id,
                                   long long entries_read);
/* false when there is no such group. */
bool stream_cg_destroy(struct stream *s, struct slice name);

struct stream_consumer *stream_consumer_find(const struct stream_cg *cg, struct slice name);
/* A new consumer seen at now_ms; NULL when the name is taken. */
struct stream_consumer *stream_consumer_create(struct stream_cg *cg, struct slice name, long long now_ms);
/* Delete a consumer and its pending entries (from the group's PEL too);
 * returns how many were pending. */
uint64_t stream_consumer_delete(struct stream_cg *cg, struct stream_consumer *c);

/* A new pending entry of consumer c, delivered at now_ms, count 1; put in
 * both PELs by the caller. */
struct stream_nack *stream_nack_new(struct stream_consumer *c, long long now_ms);

/* Redis's entries-read bookkeeping (7.0): after a group read up to id as
 * new entries ('>'), and the lag XINFO reports (false: unknown, null). */
void stream_cg_advance(const struct stream *s, struct stream_cg *cg, struct stream_id id);
bool stream_cg_lag(const struct stream *s, const struct stream_cg *cg, long long *lag);
/* The logical read counter of id, or STREAM_ENTRIES_READ_INVALID
 * (streamEstimateDistanceFromFirstEverEntry). */
long long stream_estimate_distance(const struct stream *s, struct stream_id id);
/* Whether [start, end] may hold a deleted entry (streamRangeHasTombstones). */
bool stream_range_has_tombstones(const struct stream *s, struct stream_id start, struct stream_id end);

/* Walk every node checking counts, order and the master entries (tests). */
bool stream_check(const struct stream *s);

#endif
