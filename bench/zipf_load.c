/*
 * bench/zipf_load.c -- a skewed (Zipf) read/write load for caches under a
 * memory limit (issue 14). One thread, epoll, raw RESP, like set_load.c:
 * each of CONNS connections sends a round of commands in one write, waits
 * for all their replies, and sends the next round.
 *
 * Keys are `key:<12 digits>` below KEYSPACE, drawn from a Zipf law of
 * exponent S over ranks 1..KEYSPACE. Rank r is key perm(r - 1), perm a
 * fixed pseudo-random permutation of [0, KEYSPACE), so the hot keys are not
 * key:000000000000, key:000000000001, ... but scattered over the key space
 * (and so over hash slots, shards and hash-table buckets). The permutation
 * does not depend on the seed (-S): every run, on every server, has the
 * same hot keys; the seed only picks the sequence of draws, so a warm-up and
 * the measured run after it must be given different seeds or the second
 * would replay the first.
 *
 * Modes:
 *   cache  cache-aside. One op = GET key; when the reply is nil, SET key
 *          value. A round is the SETs of the previous round's misses
 *          followed by PIPELINE GETs: the SET can only be sent once the
 *          GET's reply is back, as a real cache-aside client would. So
 *          every round trip carries PIPELINE ops however many miss.
 *   mix    one op = one command: GET with probability GET_RATIO, else SET;
 *          PIPELINE ops per round.
 *
 * Every reply is checked, so a run cannot count errors: GET must answer nil
 * or a bulk string of VALUE_SIZE bytes, SET +OK; anything else (an -OOM
 * error, say) stops the run with exit code 1 and the reply on stderr.
 *
 *   zipf_load [-h HOST] [-p PORT] [-c CONNS 50] [-P PIPELINE 16]
 *             [-n OPS 1000000] [-T SECONDS] [-r KEYSPACE 1000000]
 *             [-s EXPONENT 0.99] [-d VALUE_SIZE 100] [-m cache|mix]
 *             [-g GET_RATIO 0.9] [-S SEED 1] [-x SERVER_PID]
 *
 * -n 0 with -T runs for SECONDS only; with both, whichever comes first.
 * Prints one line of key=value figures:
 *   ops gets hits hit_rate sets elapsed_s ops_per_s server_ticks
 * hit_rate is hits/gets in percent; server_ticks is the server's
 * utime+stime (/proc/SERVER_PID/stat, the sum over all its threads, in
 * clock ticks) from the first send to the last reply, -1 without -x.
 * Connecting and closing lie outside that window.
 *
 * Zipf draws: rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * ACM TOMACS 6(3), 1996), as in Apache Commons' RejectionInversionZipf
 * sampler: O(1) memory and a few log/exp per draw, so a 30M-key space needs
 * no 120 MB CDF table and no set-up time.
 */
/* clock_gettime, getaddrinfo under plain -std=c17 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY_DIGITS 12
#define KEY_LEN (4 + KEY_DIGITS)

enum mode { MODE_CACHE, MODE_MIX };
enum kind { CMD_GET, CMD_SET };

struct conn {
    int fd;
    long n_cmds;        /* commands of this round */
    long next;          /* index of the next reply expected */
    uint32_t *keys;     /* key of each command of the round, in order */
    unsigned char *kind;
    long n_miss;        /* cache mode: keys whose GET missed this round */
    uint32_t *miss;
    char *out;          /* the round's commands, encoded */
    int done;
    /* reply parser: a header line, then (bulk) a body to skip */
    int in_body;
    size_t line_len;
    char line[64];
    long body_left;     /* bytes of the bulk string and its CRLF still to come */
};

static const char *host = "127.0.0.1";
static const char *port = "6379";
static long conns_n = 50, pipeline = 16, ops_limit = 1000000, value_size = 100;
static double seconds_limit = 0, exponent = 0.99, get_ratio = 0.9;
static uint64_t keyspace = 1000000;
static unsigned long long seed = 1;
static const char *server_pid;
static enum mode mode = MODE_CACHE;

static char *get_tmpl, *set_tmpl; /* one GET, one SET; key digits rewritten per use */
static size_t get_len, set_len, get_key_at, set_key_at;

static long issued;      /* ops started (cache: GETs sent; mix: commands sent) */
static long gets, hits, sets;
static int stop_issuing; /* time limit reached */
static double t_start;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long server_ticks(void)
{
    if (!server_pid)
        return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", server_pid);
    FILE *f = fopen(path, "r");
    if (!f)
        die("server stat");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    long utime = 0, stime = 0;
    /* fields after the name: state is 3rd; utime 14th, stime 15th */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) != 2)
        die("server stat fields");
    return utime + stime;
}

/* ---- random numbers, Zipf draws, the rank -> key permutation ---- */

static unsigned long long rng_state;

static uint64_t next_rand(void)
{
    /* xorshift64*: fast, and its low bits are fine after the multiply */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static double next_unit(void) /* uniform in [0, 1) */
{
    return (double)(next_rand() >> 11) * 0x1.0p-53;
}

/* log1p(x)/x and expm1(x)/x, with their series near 0 where the quotient
 * would lose its digits */
static double helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

/* h(x) = x^-s; H is an antiderivative of h, written so that s = 1 needs no
 * special case; Hinv its inverse */
static double zh(double x) { return exp(-exponent * log(x)); }

static double zH(double x)
{
    double lx = log(x);
    return helper2((1 - exponent) * lx) * lx;
}

static double zHinv(double x)
{
    double t = x * (1 - exponent);
    if (t < -1)
        t = -1; /* rounding only: keeps log1p in its domain */
    return exp(helper1(t) * x);
}

static double z_hx1, z_hn, z_s;

static void zipf_init(void)
{
    z_hx1 = zH(1.5) - 1;
    z_hn = zH((double)keyspace + 0.5);
    z_s = 2 - zHinv(zH(2.5) - zh(2));
}

static uint64_t zipf_rank(void) /* 1..keyspace, P(k) proportional to k^-s */
{
    for (;;) {
        double u = z_hn + next_unit() * (z_hx1 - z_hn);
        double x = zHinv(u);
        double kd = floor(x + 0.5);
        uint64_t k = kd < 1 ? 1 : kd > (double)keyspace ? keyspace : (uint64_t)kd;
        if ((double)k - x <= z_s || u >= zH((double)k + 0.5) - zh((double)k))
            return k;
    }
}

/* A permutation of [0, keyspace) in O(1) memory: a 4-round Feistel network
 * over the smallest even number of bits covering keyspace (a bijection of
 * that power of two), walked again while the image falls outside the key
 * space (which stays a bijection of [0, keyspace); the domain is less than
 * 4 * keyspace, so few walks are needed). */
static unsigned perm_half;
static uint64_t perm_mask;

static void perm_init(void)
{
    unsigned bits = 2;
    while (bits < 64 && (1ull << bits) < keyspace)
        bits += 2;
    perm_half = bits / 2;
    perm_mask = (1ull << perm_half) - 1;
}

static uint64_t perm_round(uint64_t r, unsigned i)
{
    static const uint64_t round_key[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull,
                                          0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
    uint64_t z = (r ^ round_key[i]) * 0x9E3779B97F4A7C15ull;
    z ^= z >> 29;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 32;
    return z & perm_mask;
}

static uint32_t perm(uint64_t x)
{
    do {
        uint64_t l = x >> perm_half, r = x & perm_mask;
        for (unsigned i = 0; i < 4; i++) {
            uint64_t nl = r;
            r = l ^ perm_round(r, i);
            l = nl;
        }
        x = (l << perm_half) | r;
    } while (x >= keyspace);
    return (uint32_t)x;
}

static uint32_t draw_key(void) { return perm(zipf_rank() - 1); }

/* ---- commands ---- */

static void put_key(char *at, uint32_t k)
{
    for (int d = KEY_DIGITS - 1; d >= 0; d--, k /= 10)
        at[d] = (char)('0' + k % 10);
}

static void build_templates(void)
{
    get_tmpl = malloc(64);
    get_len = (size_t)sprintf(get_tmpl, "*2\r\n$3\r\nGET\r\n$%d\r\nkey:", KEY_LEN);
    get_key_at = get_len;
    get_len += (size_t)sprintf(get_tmpl + get_len, "%0*d\r\n", KEY_DIGITS, 0);

    set_tmpl = malloc(96 + (size_t)value_size);
    set_len = (size_t)sprintf(set_tmpl, "*3\r\n$3\r\nSET\r\n$%d\r\nkey:", KEY_LEN);
    set_key_at = set_len;
    set_len += (size_t)sprintf(set_tmpl + set_len, "%0*d\r\n$%ld\r\n", KEY_DIGITS, 0, value_size);
    memset(set_tmpl + set_len, 'x', (size_t)value_size);
    set_len += (size_t)value_size;
    memcpy(set_tmpl + set_len, "\r\n", 2);
    set_len += 2;
}

static int may_issue(void)
{
    return !stop_issuing && (ops_limit == 0 || issued < ops_limit);
}

/* Encodes and sends the connection's next round; marks it done when there
 * is nothing left to send. */
static void send_round(struct conn *c)
{
    size_t len = 0;
    long n = 0;
    if (mode == MODE_CACHE) {
        for (long i = 0; i < c->n_miss; i++, n++) {
            memcpy(c->out + len, set_tmpl, set_len);
            put_key(c->out + len + set_key_at, c->miss[i]);
            len += set_len;
            c->keys[n] = c->miss[i];
            c->kind[n] = CMD_SET;
        }
        c->n_miss = 0;
    }
    for (long i = 0; i < pipeline && may_issue(); i++, n++, issued++) {
        uint32_t k = draw_key();
        int is_get = mode == MODE_CACHE || next_unit() < get_ratio;
        const char *t = is_get ? get_tmpl : set_tmpl;
        size_t tl = is_get ? get_len : set_len;
        memcpy(c->out + len, t, tl);
        put_key(c->out + len + (is_get ? get_key_at : set_key_at), k);
        len += tl;
        c->keys[n] = k;
        c->kind[n] = is_get ? CMD_GET : CMD_SET;
    }
    c->n_cmds = n;
    c->next = 0;
    if (n == 0) {
        c->done = 1;
        return;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(c->fd, c->out + off, len - off, 0);
        if (w < 0 && errno != EINTR)
            die("send");
        if (w > 0)
            off += (size_t)w;
    }
}

static void bad_reply(struct conn *c, const char *why)
{
    fprintf(stderr, "zipf_load: %s to %s key:%0*u: %.*s\n", why, c->kind[c->next] == CMD_GET ? "GET" : "SET",
            KEY_DIGITS, c->keys[c->next], (int)c->line_len, c->line);
    exit(1);
}

/* the reply to command c->next is complete */
static void reply_done(struct conn *c, int hit)
{
    if (c->kind[c->next] == CMD_GET) {
        gets++;
        if (hit)
            hits++;
        else if (mode == MODE_CACHE)
            c->miss[c->n_miss++] = c->keys[c->next];
    } else {
        sets++;
    }
    c->next++;
}

/* one header line (CRLF stripped) of the reply to command c->next */
static void header(struct conn *c)
{
    int is_get = c->kind[c->next] == CMD_GET;
    if (c->line_len == 0)
        bad_reply(c, "empty reply line");
    if (c->line[0] == '-')
        bad_reply(c, "error reply");
    if (!is_get) {
        if (c->line_len != 3 || memcmp(c->line, "+OK", 3) != 0)
            bad_reply(c, "unexpected reply");
        reply_done(c, 0);
        return;
    }
    if (c->line[0] != '$')
        bad_reply(c, "unexpected reply");
    if (c->line_len == 3 && memcmp(c->line, "$-1", 3) == 0) {
        reply_done(c, 0);
        return;
    }
    c->line[c->line_len] = 0;
    char *end;
    long blen = strtol(c->line + 1, &end, 10);
    if (*end || blen != value_size)
        bad_reply(c, "value of the wrong size");
    c->in_body = 1;
    c->body_left = blen + 2;
}

static void read_replies(struct conn *c)
{
    char buf[65536];
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) {
        fprintf(stderr, "zipf_load: server closed a connection\n");
        exit(1);
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        die("recv");
    }
    for (ssize_t i = 0; i < n;) {
        if (c->next >= c->n_cmds) {
            fprintf(stderr, "zipf_load: more replies than commands\n");
            exit(1);
        }
        if (c->in_body) {
            long take = (long)(n - i) < c->body_left ? (long)(n - i) : c->body_left;
            i += take;
            c->body_left -= take;
            if (c->body_left == 0) {
                c->in_body = 0;
                reply_done(c, 1);
            }
            continue;
        }
        char *nl = memchr(buf + i, '\n', (size_t)(n - i));
        size_t take = nl ? (size_t)(nl - (buf + i)) + 1 : (size_t)(n - i);
        if (c->line_len + take >= sizeof c->line)
            bad_reply(c, "reply line too long");
        memcpy(c->line + c->line_len, buf + i, take);
        c->line_len += take;
        i += (ssize_t)take;
        if (nl) {
            if (c->line_len < 2 || c->line[c->line_len - 2] != '\r')
                bad_reply(c, "reply line without CRLF");
            c->line_len -= 2;
            header(c);
            c->line_len = 0;
        }
    }
}

static int dial(void)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "zipf_load: %s:%s: %s\n", host, port, gai_strerror(rc));
        exit(1);
    }
    int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol), one = 1;
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0)
        die("connect");
    freeaddrinfo(res);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void usage(void)
{
    fprintf(stderr, "usage: zipf_load [-h HOST] [-p PORT] [-c CONNS] [-P PIPELINE] [-n OPS] [-T SECONDS]\n"
                    "                 [-r KEYSPACE] [-s EXPONENT] [-d VALUE_SIZE] [-m cache|mix]\n"
                    "                 [-g GET_RATIO] [-S SEED] [-x SERVER_PID]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "h:p:c:P:n:T:r:s:d:m:g:S:x:")) != -1) {
        switch (opt) {
        case 'h': host = optarg; break;
        case 'p': port = optarg; break;
        case 'c': conns_n = atol(optarg); break;
        case 'P': pipeline = atol(optarg); break;
        case 'n': ops_limit = atol(optarg); break;
        case 'T': seconds_limit = atof(optarg); break;
        case 'r': keyspace = strtoull(optarg, NULL, 10); break;
        case 's': exponent = atof(optarg); break;
        case 'd': value_size = atol(optarg); break;
        case 'm':
            if (strcmp(optarg, "cache") == 0)
                mode = MODE_CACHE;
            else if (strcmp(optarg, "mix") == 0)
                mode = MODE_MIX;
            else
                usage();
            break;
        case 'g': get_ratio = atof(optarg); break;
        case 'S': seed = strtoull(optarg, NULL, 10); break;
        case 'x': server_pid = optarg; break;
        default: usage();
        }
    }
    /* the permutation's Feistel domain is 32 bits wide at most */
    if (optind != argc || conns_n < 1 || pipeline < 1 || ops_limit < 0 || value_size < 0 || keyspace < 1 ||
        keyspace > 4294967295ull || exponent <= 0 || get_ratio < 0 || get_ratio > 1 || seconds_limit < 0 ||
        (ops_limit == 0 && seconds_limit == 0))
        usage();
    /* xorshift must not start at 0; mixing spreads small seeds apart */
    rng_state = (seed + 1) * 0x9E3779B97F4A7C15ull;
    if (!rng_state)
        rng_state = 1;
    zipf_init();
    perm_init();
    build_templates();

    int ep = epoll_create1(0);
    if (ep < 0)
        die("epoll_create1");
    struct conn *conns = calloc((size_t)conns_n, sizeof *conns);
    /* a cache round holds up to PIPELINE SETs (the misses) and PIPELINE GETs */
    size_t max_cmds = 2 * (size_t)pipeline;
    for (long i = 0; i < conns_n; i++) {
        struct conn *c = &conns[i];
        c->fd = dial();
        c->keys = malloc(max_cmds * sizeof *c->keys);
        c->kind = malloc(max_cmds);
        c->miss = malloc((size_t)pipeline * sizeof *c->miss);
        c->out = malloc(max_cmds * set_len);
        if (!c->keys || !c->kind || !c->miss || !c->out)
            die("malloc");
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
            die("epoll_ctl");
    }

    long t0 = server_ticks();
    t_start = now();
    long active = 0;
    for (long i = 0; i < conns_n; i++) {
        send_round(&conns[i]);
        active += !conns[i].done;
    }
    struct epoll_event evs[256];
    while (active > 0) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (c->done)
                continue;
            read_replies(c);
            if (c->next < c->n_cmds || c->in_body || c->line_len)
                continue;
            if (seconds_limit > 0 && !stop_issuing && now() - t_start >= seconds_limit)
                stop_issuing = 1;
            send_round(c);
            active -= c->done;
        }
    }
    double secs = now() - t_start;
    long t1 = server_ticks();
    long ops = mode == MODE_CACHE ? gets : gets + sets;
    printf("ops=%ld gets=%ld hits=%ld hit_rate=%.2f sets=%ld elapsed_s=%.3f ops_per_s=%.0f server_ticks=%ld\n", ops,
           gets, hits, gets ? 100.0 * (double)hits / (double)gets : 0.0, sets, secs, secs > 0 ? (double)ops / secs : 0.0,
           server_pid ? t1 - t0 : -1);
    return 0;
}
