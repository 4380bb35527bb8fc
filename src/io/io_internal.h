/*
 * What the I/O files (worker.c, client.c) and the messaging layer share but
 * nothing else should see: io_uring user_data encoding and SQE helpers.
 *
 * user_data = [type:8][generation:24][client index:32]; the generation makes a
 * late completion for a closed and reused client slot recognisable.
 */
#ifndef RINGKV_IO_INTERNAL_H
#define RINGKV_IO_INTERNAL_H

#include "ringkv/server.h"

enum ud_type { UD_IGNORE = 0, UD_ACCEPT, UD_RECV, UD_SEND, UD_DOORBELL };

#define UD_MAKE(type, gen, idx) (((uint64_t)(type) << 56) | ((uint64_t)((gen) & 0xFFFFFF) << 32) | (uint32_t)(idx))
#define UD_TYPE(ud) ((unsigned)((ud) >> 56))
#define UD_GEN(ud)  ((uint32_t)(((ud) >> 32) & 0xFFFFFF))
#define UD_IDX(ud)  ((uint32_t)(ud))

struct io_uring_sqe *worker_sqe(struct worker *w);
void worker_recycle_buffer(struct worker *w, unsigned bid);
void worker_arm_recv(struct client *c);
void worker_cancel_recv(struct client *c);
void client_maybe_free(struct client *c);
void client_free_now(struct client *c);
void xshard_teardown(struct worker *w);

#endif
