/*
 * Lazy freeing: big values freed off the command path, as Redis's
 * lazyfree (UNLINK, FLUSHALL/FLUSHDB ASYNC, and DEL, evictions, expiries
 * and flushes under the lazyfree-lazy-* settings).
 *
 * Two parts, because an entry and its object live in different places:
 *
 *   - Objects: a collection kept apart from its entry was malloc'd, and any
 *     thread may free it. One whose freeing is work (its free effort, about
 *     its allocations, above LAZYFREE_THRESHOLD, as Redis judges it) goes to
 *     one background thread; its entry, a small block of the shard's arena,
 *     is freed at once.
 *   - Whole databases (FLUSH... ASYNC): the tables are detached in O(1) and
 *     each shard's own worker frees their entries a bounded slice at a time
 *     from its loop (lazyfree_step): an arena is only ever touched by the
 *     thread that may touch its shard. Their big objects go to the thread.
 *
 * Nothing here asks the allocator to trim (mem_trim_soon): what the
 * background thread frees goes back to the owner's heap (mimalloc's
 * cross-thread frees), and a trim would have the owner take all of it back
 * at once, a stall as long as the synchronous free it replaces. Left alone,
 * the owner takes the blocks back a page at a time as it allocates.
 *
 * lazyfree_pending_objects and lazyfreed_objects (INFO memory) count both,
 * as Redis counts what it hands to its lazyfree thread.
 */
#ifndef RINGKV_LAZYFREE_H
#define RINGKV_LAZYFREE_H

#include "ringkv/common.h"
#include "ringkv/entry.h"
#include "ringkv/table.h"

struct shard;

#define LAZYFREE_THRESHOLD 64   /* Redis's: below this effort, freeing now is cheaper */

/* Free e, its object in the background when big. */
void lazyfree_entry(struct kv_entry *e);
/* Free e now; when it was big, the allocator is asked to give pages back
 * (mem_trim_soon). */
void lazyfree_entry_now(struct kv_entry *e);
/* Hand a detached table of shard s to s's worker, which frees it in steps. */
void lazyfree_table(struct shard *s, struct kv_table *t);
/* The owner's loop: free some of s's detached tables. Returns whether any remain. */
bool lazyfree_step(struct shard *s);

size_t lazyfree_pending(void);
size_t lazyfree_freed(void);
void lazyfree_reset_stats(void);

#endif
