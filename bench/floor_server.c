/*
 * bench/floor_server.c -- the least a Redis-protocol server can do per
 * request over the kernel's TCP, as a floor for ringkv's CPU per request.
 *
 * It answers every request with +OK and keeps no data: no parsing beyond
 * counting the requests in what arrived ('*' opens each RESP command that
 * redis-benchmark sends for GET and SET, and no key or value of theirs holds
 * one), no command table, no keyspace. Its I/O is ringkv's: one thread, an
 * io_uring with SINGLE_ISSUER|DEFER_TASKRUN, multishot accept, one multishot
 * receive per connection into a provided-buffer ring, one send per receive,
 * and a wait that gathers completions (up to 32 new ones or 1 ms, as
 * ringkv's batch wait does for thousands of pooled connections). What it
 * costs per request is what the kernel's TCP and io_uring cost, which no
 * server built on them can go under.
 *
 *   floor_server PORT
 *   floor_server --port PORT [--batch N] [--min-wait-us US] [other ringkv/redis options, ignored]
 *
 * --batch and --min-wait-us (32 and 1000) set the wait, to see how far
 * batching alone moves the floor.
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NBUFS 1024
#define BUF_SIZE 4096
static unsigned batch = 32, min_wait_us = 1000;
#define MAX_PIPELINE 256

enum { UD_ACCEPT = 1, UD_RECV = 2, UD_SEND = 3 };
#define UD(kind, fd) (((uint64_t)(kind) << 32) | (uint32_t)(fd))

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufs;
static char replies[MAX_PIPELINE * 5];

static struct io_uring_sqe *sqe_get(void) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    return sqe;
}

static void arm_recv(int fd) {
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    io_uring_sqe_set_data64(sqe, UD(UD_RECV, fd));
}

static void send_ok(int fd, unsigned n) {
    if (n > MAX_PIPELINE) n = MAX_PIPELINE;
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_send(sqe, fd, replies, (size_t)n * 5, MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, UD(UD_SEND, fd));
}

/* One io_uring_enter: submit, then gather up to `batch` new completions (the
 * sends submitted complete at once and do not count) for at most
 * min_wait_us, then return with what arrived. liburing 2.3 has no field for
 * the minimum wait, so the SQ is published and the syscall made here, as
 * ringkv's ring.c does. */
struct getevents_arg_min { uint64_t sigmask; uint32_t sigmask_sz, min_wait_usec; uint64_t ts; };
static void submit_and_wait(void) {
    struct io_uring_sq *sq = &ring.sq;
    if (sq->sqe_head != sq->sqe_tail) {
        sq->sqe_head = sq->sqe_tail;
        io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
    }
    unsigned to_submit = sq->sqe_tail - io_uring_smp_load_acquire(sq->khead);
    unsigned nr = batch + to_submit;
    if (nr > NBUFS / 2) nr = NBUFS / 2;
    struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 100 * 1000 * 1000 };
    struct getevents_arg_min arg = { 0, _NSIG / 8, min_wait_us, (uint64_t)(uintptr_t)&ts };
    syscall(__NR_io_uring_enter, ring.ring_fd, to_submit, nr, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
            &arg, sizeof arg);
}

int main(int argc, char **argv) {
    const char *port = argc == 2 ? argv[1] : NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port")) port = argv[i + 1];
        else if (!strcmp(argv[i], "--batch")) batch = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-wait-us")) min_wait_us = (unsigned)atoi(argv[i + 1]);
    }
    if (!port || !batch) { fprintf(stderr, "usage: floor_server PORT | --port PORT [--batch N] [--min-wait-us US]\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < MAX_PIPELINE; i++) memcpy(replies + i * 5, "+OK\r\n", 5);
    struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
                                          IORING_SETUP_CQSIZE, .cq_entries = 65536 };
    if (io_uring_queue_init_params(4096, &ring, &p) < 0) { perror("io_uring"); return 1; }
    br = mmap(NULL, NBUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)br, .ring_entries = NBUFS, .bgid = 0 };
    if (br == MAP_FAILED || io_uring_register_buf_ring(&ring, &reg, 0)) { fprintf(stderr, "buffer ring\n"); return 1; }
    io_uring_buf_ring_init(br);
    bufs = malloc((size_t)NBUFS * BUF_SIZE);
    for (int i = 0; i < NBUFS; i++)
        io_uring_buf_ring_add(br, bufs + (size_t)i * BUF_SIZE, BUF_SIZE, (unsigned short)i,
                              io_uring_buf_ring_mask(NBUFS), i);
    io_uring_buf_ring_advance(br, NBUFS);

    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 65535)) { perror("listen"); return 1; }
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, 0);
    io_uring_sqe_set_data64(sqe, UD(UD_ACCEPT, lfd));
    printf("ready\n");
    fflush(stdout);

    for (;;) {
        submit_and_wait();
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            seen++;
            int kind = (int)(cqe->user_data >> 32), fd = (int)(uint32_t)cqe->user_data;
            if (kind == UD_ACCEPT) {
                if (cqe->res >= 0) {
                    setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    arm_recv(cqe->res);
                }
            } else if (kind == UD_RECV) {
                if (cqe->res <= 0) {
                    if (cqe->res == -ENOBUFS) arm_recv(fd);
                    else close(fd);
                    continue;
                }
                unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT, n = 0;
                const char *b = bufs + (size_t)id * BUF_SIZE;
                for (int i = 0; i < cqe->res; i++) n += b[i] == '*';
                if (n) send_ok(fd, n);
                io_uring_buf_ring_add(br, (void *)b, BUF_SIZE, (unsigned short)id, io_uring_buf_ring_mask(NBUFS), 0);
                io_uring_buf_ring_advance(br, 1);
                if (!(cqe->flags & IORING_CQE_F_MORE)) arm_recv(fd);
            }
        }
        io_uring_cq_advance(&ring, seen);
    }
}
