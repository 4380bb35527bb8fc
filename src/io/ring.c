/*
 * The io_uring primitives of one worker: the ring itself, its provided
 * buffer ring, SQEs, the multishot accept and receives, the doorbell to
 * another worker, and the minimum-wait enter. The worker loop (worker.c)
 * decides when; this file knows how.
 *
 * The ring is set up with SINGLE_ISSUER|DEFER_TASKRUN where the kernel takes
 * it, so completion work stays on the owning thread. Receives are multishot
 * into a provided-buffer ring; a buffer goes back to the kernel as soon as
 * its bytes are parsed.
 */
#include "ringkv/ring.h"
#include "ringkv/server.h"
#include "ringkv/config.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BUF_GROUP 0
#define RK_FEAT_MIN_TIMEOUT (1U << 15)   /* IORING_FEAT_MIN_TIMEOUT, newer than liburing 2.3 */
#define RING_ENTRIES 4096
#define BATCH_WAIT_SHARE 16              /* a minimum wait is at most this fraction of a client's cycle */

/* The table of registered files: one slot per client index, as many as
 * the process may have descriptors (bounded: the kernel keeps the table
 * whole). Without it (an old kernel) every client uses its fd. */
#define FILE_TABLE_MAX 65536

static void register_file_table(struct worker *w) {
    struct rlimit rl;
    unsigned n = FILE_TABLE_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n) n = (unsigned)rl.rlim_cur;
    w->nfixed_files = io_uring_register_files_sparse(&w->ring, n) == 0 ? n : 0;
}

/* Slot c->idx of the table := *fd (read when the SQE is submitted). */
static void update_file_slot(struct client *c, int *fd) {
    struct io_uring_sqe *sqe = ring_sqe(c->w);
    io_uring_prep_files_update(sqe, fd, 1, (int)c->idx);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_IGNORE, 0, 0));
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

void ring_install_file(struct client *c) {
    if (c->idx >= c->w->nfixed_files) return;
    update_file_slot(c, &c->fd);
    c->flags |= CF_FIXED_FILE;
}

void ring_uninstall_file(struct client *c) {
    static int no_file = -1;
    if (!(c->flags & CF_FIXED_FILE) || !c->w->nfixed_files) return;
    update_file_slot(c, &no_file);
    c->flags &= ~CF_FIXED_FILE;
}

void ring_sqe_client_file(struct io_uring_sqe *sqe, const struct client *c) {
    if (c->flags & CF_FIXED_FILE) {
        sqe->fd = (int)c->idx;
        sqe->flags |= IOSQE_FIXED_FILE;
    }
}

/* SINGLE_ISSUER|DEFER_TASKRUN keeps completion work on this thread and out of
 * interrupts; older kernels refuse the flags, so fall back step by step. */
int ring_setup(struct worker *w) {
    static const unsigned flag_sets[] = {
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
        IORING_SETUP_COOP_TASKRUN,
        0,
    };
    int rc = -EINVAL;
    for (size_t i = 0; i < RK_ARRAY_LEN(flag_sets); i++) {
        struct io_uring_params p = {0};
        p.flags = flag_sets[i] | IORING_SETUP_CQSIZE;
        p.cq_entries = RING_ENTRIES * 4;
        rc = io_uring_queue_init_params(RING_ENTRIES, &w->ring, &p);
        if (rc == 0) {
            w->ring_fd = w->ring.ring_fd;
            w->defer_taskrun = i == 0;
            w->min_wait_ok = (p.features & RK_FEAT_MIN_TIMEOUT) && (p.features & IORING_FEAT_EXT_ARG);
            register_file_table(w);
            return 0;
        }
    }
    return rc;
}

int ring_buffers_setup(struct worker *w) {
    unsigned n = 1;
    while (n < (unsigned)rk_config.io_buffers) n <<= 1;
    w->nbufs = n;
    w->buf_size = (unsigned)rk_config.io_buffer_size;
    size_t ring_bytes = n * sizeof(struct io_uring_buf);
    void *mem = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (mem == MAP_FAILED) return -errno;
    w->br = mem;
    /* The buffers themselves: pages are only touched once the kernel fills
     * them, so unused capacity costs address space, not RSS. */
    w->bufs = mmap(NULL, (size_t)n * w->buf_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (w->bufs == MAP_FAILED) return -errno;
    struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)w->br, .ring_entries = n, .bgid = BUF_GROUP };
    int rc = io_uring_register_buf_ring(&w->ring, &reg, 0);
    if (rc) return rc;
    io_uring_buf_ring_init(w->br);
    for (unsigned i = 0; i < n; i++)
        io_uring_buf_ring_add(w->br, w->bufs + (size_t)i * w->buf_size, w->buf_size, i,
                              io_uring_buf_ring_mask(n), i);
    io_uring_buf_ring_advance(w->br, n);
    return 0;
}

void ring_recycle_buffer(struct worker *w, unsigned bid) {
    io_uring_buf_ring_add(w->br, w->bufs + (size_t)bid * w->buf_size, w->buf_size, bid,
                          io_uring_buf_ring_mask(w->nbufs), 0);
    io_uring_buf_ring_advance(w->br, 1);
}

/* An SQE, submitting first if the submission queue is full. */
struct io_uring_sqe *ring_sqe(struct worker *w) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
    if (RK_UNLIKELY(!sqe)) {
        io_uring_submit(&w->ring);
        w->stats.submits++;
        sqe = io_uring_get_sqe(&w->ring);
    }
    return sqe;
}

void ring_arm_accept(struct worker *w, int fd, unsigned gen, unsigned slot) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_ACCEPT, gen, slot));
}

void ring_arm_recv(struct client *c) {
    struct io_uring_sqe *sqe = ring_sqe(c->w);
    io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    ring_sqe_client_file(sqe, c);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUF_GROUP;
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_RECV, c->gen, c->idx));
    c->flags |= CF_RECV_ARMED;
    c->flags &= ~CF_NEED_RECV;
    c->pending_ops++;
}

void ring_cancel_recv(struct client *c) {
    struct io_uring_sqe *sqe = ring_sqe(c->w);
    io_uring_prep_cancel64(sqe, UD_MAKE(UD_RECV, c->gen, c->idx), 0);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_IGNORE, 0, 0));
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

/*
 * A quiet thread gives its receive buffers back. The pages of the buffer
 * ring cost RSS once the kernel has written to them, and since the ring
 * hands buffers out in turn, a burst of large reads (or, slowly, any
 * traffic) touches all of them (io-buffers x io-buffer-size: 8 MB per
 * thread by default). So once a second, if the thread received less than
 * an eighth of the ring's bytes in that second, they are dropped with
 * MADV_DONTNEED; the kernel's next write into one faults in a zeroed page,
 * which at that rate costs next to nothing. A thread that stays busy keeps
 * them. A client polling now and then does not keep them either.
 * This is safe only with DEFER_TASKRUN: the kernel then copies received
 * bytes into a provided buffer only inside this thread's io_uring_enter(),
 * and every buffer is back in the ring once its completion has been handled,
 * so between two enters no buffer holds live data. Except when the last
 * iteration ran out of its budget (worker.c) and left completions in the
 * ring: their buffers hold bytes not read yet, so no trim then.
 */
#define BUFFER_TRIM_PERIOD_MS 1000

void ring_trim_quiet_buffers(struct worker *w) {
    if (w->now_ms - w->recv_window_start_ms < BUFFER_TRIM_PERIOD_MS) return;
    size_t quiet = (size_t)w->nbufs * w->buf_size / 8;
    if (w->defer_taskrun && w->bufs_touched && !w->cqes_left && w->recv_window_bytes < quiet &&
        madvise(w->bufs, (size_t)w->nbufs * w->buf_size, MADV_DONTNEED) == 0) {
        w->stats.buffer_trims++;
        w->bufs_touched = false;
    }
    w->recv_window_start_ms = w->now_ms;
    w->recv_window_bytes = 0;
}


/* Wake a worker that may be asleep in io_uring_enter: a CQE in its ring
 * (which only wakes it), from an SQE in ours, so it leaves with our next
 * submit and costs no syscall of its own. */
void ring_doorbell(struct worker *w, struct worker *target) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    io_uring_prep_msg_ring(sqe, target->ring_fd, 0, UD_MAKE(UD_DOORBELL, 0, 0), 0);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_IGNORE, 0, 0));
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

void ring_doorbell_now(struct worker *w, struct worker *target) {
    ring_doorbell(w, target);
    io_uring_submit(&w->ring);
}

/* liburing 2.3 predates min_wait_usec (it is `pad` in its header), so this
 * calls io_uring_enter itself, after publishing the SQ tail as liburing does. */
struct getevents_arg_min {
    uint64_t sigmask;
    uint32_t sigmask_sz;
    uint32_t min_wait_usec;
    uint64_t ts;
};

static unsigned flush_sq(struct io_uring *ring) {
    struct io_uring_sq *sq = &ring->sq;
    unsigned tail = sq->sqe_tail;
    if (sq->sqe_head != tail) {
        sq->sqe_head = tail;
        io_uring_smp_store_release(sq->ktail, tail);
    }
    return tail - io_uring_smp_load_acquire(sq->khead);
}

unsigned ring_batch_wait_us(long long span_us, uint32_t clients, uint32_t recvs) {
    if (recvs == 0 || span_us <= 0) return 0;
    if (span_us > 60 * 1000000LL) span_us = 60 * 1000000LL;   /* a stalled window: keeps the product in range */
    long long cycle_us = span_us * clients / recvs;
    long long wait = cycle_us / BATCH_WAIT_SHARE;
    return (unsigned)(wait < BATCH_WAIT_MAX_US ? wait : BATCH_WAIT_MAX_US);
}

unsigned ring_batch_wait_nr(uint32_t clients) {
    unsigned nr = clients / 2;
    return nr < BATCH_WAIT_NR_MIN ? BATCH_WAIT_NR_MIN : nr > BATCH_WAIT_NR ? BATCH_WAIT_NR : nr;
}

void ring_enter_min_wait(struct worker *w, struct __kernel_timespec *ts, unsigned min_wait_us, unsigned wait_nr) {
    struct getevents_arg_min arg = { 0, _NSIG / 8, min_wait_us, (uint64_t)(uintptr_t)ts };
    unsigned to_submit = flush_sq(&w->ring);
    /* the sends among them complete at once, before the wait: they do not
     * count toward the completions it gathers */
    unsigned nr = wait_nr + to_submit;
    if (nr < BATCH_WAIT_NR) nr = BATCH_WAIT_NR;   /* with few clients, as many as ever: no more wake-ups */
    /* Every completion but a send may be a receive holding one of the
     * ring's buffers until we return: waiting for more than half of them
     * would run the ring dry (-ENOBUFS for the rest, each re-armed and
     * submitted with the next wait, which then waits for more still).
     * Even half is not a hard bound: the kernel runs up to nr items of
     * deferred task work after submitting and up to nr again before its
     * wait checks the ring (docs/ARCHITECTURE.md §2). */
    unsigned most = w->nbufs / 2 > BATCH_WAIT_NR ? w->nbufs / 2 : BATCH_WAIT_NR;
    if (nr > most) nr = most;
    syscall(__NR_io_uring_enter, w->ring_fd, to_submit, nr,
            IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
}

void ring_teardown(struct worker *w) {
    if (w->ring_fd > 0) io_uring_queue_exit(&w->ring);
    if (w->bufs && w->bufs != MAP_FAILED) munmap(w->bufs, (size_t)w->nbufs * w->buf_size);
    if (w->br) munmap(w->br, w->nbufs * sizeof(struct io_uring_buf));
}
