/*
 * The /metrics endpoint (metrics-port): a few lines of HTTP/1.0-1.1 on
 * thread 0's ring, a connection kind of its own beside the clients.
 *
 * A connection reads one request (at most METRICS_REQ_MAX bytes, within
 * METRICS_READ_MS of its accept), answers it and closes:
 *
 *   GET /metrics            200, INFO's figures as Prometheus text (prometheus.h)
 *   another method or path  404
 *   anything malformed      400
 *
 * The figures are INFO's own: a request runs `INFO everything` through the
 * path a client's INFO takes, a whole-keyspace transaction (tx_start, for
 * no connection: tx_request.done), so they are read holding every shard,
 * as INFO reads them, and the request counts as a command (of thread 0,
 * and in cmdstat_info) as an exporter's INFO would. The transaction
 * answers on this thread, maybe before tx_start returns.
 *
 * Nothing here is on the clients' path: these completions have their own
 * user_data types, and while metrics-port is 0 there is no listener and
 * the loop's only trace is a NULL test in the cron. A connection is not a
 * client (no CLIENT LIST, no connected_clients, no maxclients); there are
 * at most METRICS_MAX_CONNS at once (more get 503), each done or closed
 * within its deadlines, so a peer that sends nothing, or never reads the
 * answer, holds a slot only that long.
 */
#include "ringkv/log.h"
#include "ringkv/config.h"
#include "ringkv/listen.h"
#include "ringkv/prometheus.h"
#include "ringkv/ring.h"
#include "ringkv/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io_internal.h"

#define METRICS_MAX_CONNS 16
#define METRICS_REQ_MAX   8192     /* request line and headers */
#define METRICS_READ_MS   5000     /* from accept to the whole request */
#define METRICS_SEND_MS   10000    /* for the answer to leave */

enum mstate { M_READING, M_RUNNING, M_SENDING };

struct metrics_conn {
    int fd;
    uint32_t gen;
    uint8_t state;           /* enum mstate */
    uint8_t ops;             /* io_uring operations in flight */
    bool info_out;           /* INFO's transaction has not answered yet */
    bool deferred;           /* INFO waits for the loop (the request came while a script was busy) */
    bool closing;            /* freed once ops == 0 and !info_out */
    long long deadline_ms;
    size_t len;
    struct rbuf out;
    size_t sent;
    char req[METRICS_REQ_MAX];
};

struct metrics_http {
    struct listen_set listeners;   /* bind's addresses at start, on metrics-port */
    uint32_t next_gen;
    struct metrics_conn *conns[METRICS_MAX_CONNS];
};

/* ---- connections ---- */

static struct metrics_conn *conn_at(struct worker *w, uint32_t idx, uint32_t gen) {
    if (idx >= METRICS_MAX_CONNS) return NULL;
    struct metrics_conn *m = w->metrics->conns[idx];
    return m && m->gen == gen ? m : NULL;
}

static uint32_t conn_idx(struct worker *w, const struct metrics_conn *m) {
    uint32_t i = 0;
    while (w->metrics->conns[i] != m) i++;
    return i;
}

/* What the peer sent after its request is read away before the close, so
 * that closing does not reset the connection before it has our answer. */
static void close_fd(int fd) {
    char sink[512];
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < 8 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++) {}
    close(fd);
}

static void conn_maybe_free(struct worker *w, struct metrics_conn *m) {
    if (!m->closing || m->ops || m->info_out) return;
    w->metrics->conns[conn_idx(w, m)] = NULL;
    close_fd(m->fd);
    rbuf_free(&m->out);
    free(m);
}

/* Close now: the operation in flight is cancelled, its completion frees. */
static void conn_close(struct worker *w, struct metrics_conn *m) {
    if (m->closing) return;
    m->closing = true;
    if (m->ops) {
        uint32_t idx = conn_idx(w, m);
        struct io_uring_sqe *sqe = ring_sqe(w);
        io_uring_prep_cancel64(sqe, UD_MAKE(m->state == M_SENDING ? UD_METRICS_SEND : UD_METRICS_RECV, m->gen, idx), 0);
        io_uring_sqe_set_data64(sqe, UD_MAKE(UD_IGNORE, 0, 0));
        sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    }
    conn_maybe_free(w, m);
}

static void arm_recv(struct worker *w, struct metrics_conn *m) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    io_uring_prep_recv(sqe, m->fd, m->req + m->len, sizeof m->req - m->len, 0);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_METRICS_RECV, m->gen, conn_idx(w, m)));
    m->ops++;
}

static void arm_send(struct worker *w, struct metrics_conn *m) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    io_uring_prep_send(sqe, m->fd, m->out.buf + m->sent, m->out.len - m->sent, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_METRICS_SEND, m->gen, conn_idx(w, m)));
    m->ops++;
}

static void respond(struct worker *w, struct metrics_conn *m, const char *status, const char *type,
                    const char *body, size_t len) {
    rbuf_printf(&m->out, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                status, type, len);
    rbuf_append(&m->out, body, len);
    m->state = M_SENDING;
    m->deadline_ms = w->now_ms + METRICS_SEND_MS;
    arm_send(w, m);
}

static void respond_text(struct worker *w, struct metrics_conn *m, const char *status, const char *text) {
    respond(w, m, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* ---- INFO ---- */

static void info_done(struct worker *w, uint64_t ref, const struct tx_outcome *out);

static void start_info(struct worker *w, struct metrics_conn *m) {
    static const struct slice args[2] = { { "info", 4 }, { "everything", 10 } };
    struct slice argv[2] = { args[0], args[1] };
    struct tx_request req = {
        .idx = UINT32_MAX, .resp = 2, .cmd = command_original("info"),
        .mask = srv.nworkers >= 64 ? ~0ULL : (1ULL << srv.nworkers) - 1,
        .argc = 2, .argv = argv, .done = info_done, .done_arg = UD_MAKE(0, m->gen, conn_idx(w, m)),
    };
    m->deferred = false;
    m->info_out = true;
    w->stats.commands++;
    tx_start(w, &req);
}

/* INFO's reply, a RESP2 bulk string: its text as Prometheus text. */
static void info_done(struct worker *w, uint64_t ref, const struct tx_outcome *out) {
    struct metrics_conn *m = conn_at(w, UD_IDX(ref), UD_GEN(ref));
    if (!m) return;
    m->info_out = false;
    if (m->closing) {
        conn_maybe_free(w, m);
        return;
    }
    const char *p = out->reply.buf, *end = p + out->reply.len;
    const char *text = p ? memchr(p, '\n', out->reply.len) : NULL;
    if (!text || p[0] != '$' || end - text < 3) {
        respond_text(w, m, "500 Internal Server Error", "INFO failed\n");
        return;
    }
    struct rbuf body = { 0 };
    prom_from_info(text + 1, (size_t)(end - 2 - (text + 1)), &body);
    respond(w, m, "200 OK", "text/plain; version=0.0.4", body.buf ? body.buf : "", body.len);
    rbuf_free(&body);
}

/* ---- requests ---- */

static bool is_tchar(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("!#$%&'*+-.^_`|~", ch);
}

static bool is_text(const char *p, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f) return false;
    return true;
}

/* The line at p (up to '\n', a '\r' before it dropped). */
static size_t line_len(const char *p, const char *nl) {
    size_t n = (size_t)(nl - p);
    return n && p[n - 1] == '\r' ? n - 1 : n;
}

enum verdict { V_METRICS, V_NOT_FOUND, V_BAD };

/* "METHOD SP target SP HTTP/1.x": which answer it gets. */
static enum verdict request_line(const char *p, size_t n) {
    const char *sp1 = memchr(p, ' ', n);
    if (!sp1 || sp1 == p || !is_text(p, n)) return V_BAD;
    for (const char *q = p; q < sp1; q++)
        if (!is_tchar(*q)) return V_BAD;
    const char *target = sp1 + 1, *end = p + n;
    const char *sp2 = memchr(target, ' ', (size_t)(end - target));
    if (!sp2 || sp2 == target || target[0] != '/') return V_BAD;
    size_t vl = (size_t)(end - sp2 - 1);
    if (vl != 8 || (memcmp(sp2 + 1, "HTTP/1.0", 8) != 0 && memcmp(sp2 + 1, "HTTP/1.1", 8) != 0)) return V_BAD;
    size_t tl = (size_t)(sp2 - target);
    bool get = sp1 - p == 3 && memcmp(p, "GET", 3) == 0;
    bool metrics = (tl == 8 && memcmp(target, "/metrics", 8) == 0) ||
                   (tl > 8 && memcmp(target, "/metrics?", 9) == 0);
    return get && metrics ? V_METRICS : V_NOT_FOUND;
}

/* A header line "name: value". */
static bool header_line(const char *p, size_t n) {
    const char *colon = memchr(p, ':', n);
    if (!colon || colon == p || !is_text(p, n)) return false;
    for (const char *q = p; q < colon; q++)
        if (!is_tchar(*q)) return false;
    return true;
}

/* What arrived so far: answer once the request is whole (or plainly bad),
 * else read more. */
static void on_request_bytes(struct worker *w, struct metrics_conn *m) {
    const char *p = m->req, *end = m->req + m->len;
    const char *nl = memchr(p, '\n', m->len);
    if (!nl) {
        if (m->len == sizeof m->req) respond_text(w, m, "400 Bad Request", "Bad Request\n");
        else arm_recv(w, m);
        return;
    }
    enum verdict v = request_line(p, line_len(p, nl));
    for (p = nl + 1; v != V_BAD; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {   /* the headers go on */
            if (m->len == sizeof m->req) break;
            arm_recv(w, m);
            return;
        }
        size_t n = line_len(p, nl);
        if (n == 0) break;   /* the end of the headers */
        if (!header_line(p, n)) v = V_BAD;
    }
    if (v == V_BAD || !nl) {
        respond_text(w, m, "400 Bad Request", "Bad Request\n");
    } else if (v == V_NOT_FOUND) {
        respond_text(w, m, "404 Not Found", "Not Found\n");
    } else {
        m->state = M_RUNNING;
        if (w->serving_busy) m->deferred = true;   /* not inside a running script: from the cron */
        else start_info(w, m);
    }
}

/* ---- completions ---- */

static void arm_accept(struct worker *w, uint32_t slot) {
    struct io_uring_sqe *sqe = ring_sqe(w);
    io_uring_prep_multishot_accept(sqe, w->metrics->listeners.fd[slot], NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, UD_MAKE(UD_METRICS_ACCEPT, 0, slot));
}

static void on_accept(struct worker *w, uint32_t slot, int res, unsigned flags) {
    struct metrics_http *mh = w->metrics;
    if (!(flags & IORING_CQE_F_MORE) && slot < mh->listeners.n) arm_accept(w, slot);
    if (res < 0) {
        if (res != -ECANCELED) rk_log(LL_WARNING, "Metrics accept: %s", strerror(-res));
        return;
    }
    uint32_t i = 0;
    while (i < METRICS_MAX_CONNS && mh->conns[i]) i++;
    if (i == METRICS_MAX_CONNS) {
        static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        ssize_t n = send(res, busy, sizeof busy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)n;
        close_fd(res);
        return;
    }
    struct metrics_conn *m = rk_malloc(sizeof *m);
    memset(m, 0, offsetof(struct metrics_conn, req));
    m->fd = res;
    m->gen = ++mh->next_gen & 0xFFFFFF;
    m->state = M_READING;
    m->deadline_ms = w->now_ms + METRICS_READ_MS;
    mh->conns[i] = m;
    arm_recv(w, m);
}

static void on_recv(struct worker *w, struct metrics_conn *m, int res) {
    m->ops--;
    if (m->closing) {
        conn_maybe_free(w, m);
    } else if (res <= 0) {
        conn_close(w, m);   /* the peer went, or an error */
    } else {
        m->len += (size_t)res;
        on_request_bytes(w, m);
    }
}

static void on_send(struct worker *w, struct metrics_conn *m, int res) {
    m->ops--;
    if (m->closing) {   /* cancelled at its deadline */
        conn_maybe_free(w, m);
        return;
    }
    if (res > 0) {
        m->sent += (size_t)res;
        if (m->sent < m->out.len) {
            arm_send(w, m);
            return;
        }
    }
    conn_close(w, m);   /* sent, or it cannot be */
}

void metrics_on_cqe(struct worker *w, uint64_t ud, int res, unsigned flags) {
    if (UD_TYPE(ud) == UD_METRICS_ACCEPT) {
        on_accept(w, UD_IDX(ud), res, flags);
        return;
    }
    struct metrics_conn *m = conn_at(w, UD_IDX(ud), UD_GEN(ud));
    if (!m) return;   /* cannot happen: a connection lives until its operations complete */
    if (UD_TYPE(ud) == UD_METRICS_RECV) on_recv(w, m, res);
    else on_send(w, m, res);
}

void metrics_cron(struct worker *w) {
    for (uint32_t i = 0; i < METRICS_MAX_CONNS; i++) {
        struct metrics_conn *m = w->metrics->conns[i];
        if (!m || m->closing) continue;
        if (m->deferred) start_info(w, m);
        else if (m->state != M_RUNNING && w->now_ms >= m->deadline_ms) conn_close(w, m);
    }
}

/* Not shared (no SO_REUSEPORT): the clients' port cannot be taken. */
int metrics_open(struct worker *w) {
    struct listen_set ls;
    if (listen_open(&ls, rk_config.bind, rk_config.metrics_port, 0) != 0) {
        rk_log(LL_WARNING, "Failed listening on metrics port %lld (TCP), aborting.", rk_config.metrics_port);
        return -1;
    }
    w->metrics = rk_calloc(1, sizeof *w->metrics);
    w->metrics->listeners = ls;
    for (uint32_t i = 0; i < ls.n; i++) arm_accept(w, i);
    rk_log(LL_NOTICE, "Metrics for Prometheus on port %lld (GET /metrics)", rk_config.metrics_port);
    return 0;
}

void metrics_free(struct worker *w) {
    struct metrics_http *mh = w->metrics;
    if (!mh) return;
    for (uint32_t i = 0; i < METRICS_MAX_CONNS; i++) {
        struct metrics_conn *m = mh->conns[i];
        if (!m) continue;
        close(m->fd);
        rbuf_free(&m->out);
        free(m);
    }
    listen_close(&mh->listeners);   /* as the clients' listeners: stop listening now (worker_teardown) */
    free(mh);
    w->metrics = NULL;
}
