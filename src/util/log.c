/*
 * The server log (log.h): Redis's line format, its four levels, one
 * write(2) per line.
 *
 * The level and the descriptor are atomics read on every call; the line
 * is built in a buffer on the caller's stack and written whole, so threads
 * share the log without a lock. Nothing allocates: vsnprintf of the plain
 * conversions the server uses does not, and the time zone is loaded once
 * (pthread_once) before the first line, so localtime_r() only reads it
 * afterwards. rk_log_fatal() does not format at all, and before the zone
 * is loaded it stamps the line in UTC rather than load it.
 */
#include "ringkv/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int log_level = LL_NOTICE;   /* Redis's default loglevel */
static _Atomic int log_fd = STDOUT_FILENO;
static atomic_bool tz_loaded;
static pthread_once_t tz_once = PTHREAD_ONCE_INIT;

static void load_tz(void) {
    tzset();
    atomic_store(&tz_loaded, true);
}

bool rk_log_enabled(int level) { return level >= atomic_load_explicit(&log_level, memory_order_relaxed); }

void rk_log_set_level(int level) {
    if (level < LL_DEBUG) level = LL_DEBUG;
    if (level > LL_WARNING) level = LL_WARNING;
    atomic_store_explicit(&log_level, level, memory_order_relaxed);
}

int rk_log_level(void) { return atomic_load_explicit(&log_level, memory_order_relaxed); }

int rk_log_open(const char *path) {
    pthread_once(&tz_once, load_tz);
    int fd = STDOUT_FILENO;
    if (path && *path) {
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return -1;
    }
    int old = atomic_exchange(&log_fd, fd);
    if (old != STDOUT_FILENO && old != fd) close(old);
    return 0;
}

/* The whole buffer, through short writes and interruptions. */
static void write_all(const char *p, size_t len) {
    int fd = atomic_load_explicit(&log_fd, memory_order_relaxed);
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;   /* nowhere to report it */
        p += n;
        len -= (size_t)n;
    }
}

/* Digits of v at p (no NUL); returns their count. */
static size_t put_uint(char *p, unsigned long long v, int min_digits) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v || (int)n < min_digits);
    for (size_t i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

size_t rk_log_format(char *buf, size_t cap, int level, pid_t pid, const struct timeval *tv, const char *msg,
                     size_t msglen) {
    static const char marks[] = ".-*#";
    char head[96];
    size_t h = put_uint(head, (unsigned long long)pid, 1);
    head[h++] = ':';
    head[h++] = 'M';
    head[h++] = ' ';
    struct tm tm;
    time_t secs = tv->tv_sec;
    if (atomic_load(&tz_loaded)) localtime_r(&secs, &tm);
    else gmtime_r(&secs, &tm);
    h += strftime(head + h, sizeof head - h - 16, "%d %b %Y %H:%M:%S.", &tm);
    h += put_uint(head + h, (unsigned long long)(tv->tv_usec / 1000), 3);
    head[h++] = ' ';
    head[h++] = marks[level < LL_DEBUG ? LL_DEBUG : level > LL_WARNING ? LL_WARNING : level];
    head[h++] = ' ';
    if (cap == 0) return 0;
    if (msglen > RK_LOG_MAX_LEN) msglen = RK_LOG_MAX_LEN;
    size_t n = h < cap - 1 ? h : cap - 1;
    memcpy(buf, head, n);
    size_t m = msglen < cap - 1 - n ? msglen : cap - 1 - n;
    memcpy(buf + n, msg, m);
    n += m;
    buf[n++] = '\n';
    return n;
}

static void log_line(int level, const char *msg, size_t len) {
    char line[RK_LOG_MAX_LEN + 128];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    size_t n = rk_log_format(line, sizeof line, level, getpid(), &tv, msg, len);
    write_all(line, n);
}

void rk_vlog(int level, const char *fmt, va_list ap) {
    if (!rk_log_enabled(level)) return;
    pthread_once(&tz_once, load_tz);
    char msg[RK_LOG_MAX_LEN + 1];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0) return;
    log_line(level, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

void rk_log(int level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk_vlog(level, fmt, ap);
    va_end(ap);
}

void rk_log_raw(int level, const char *text, size_t len) {
    if (!rk_log_enabled(level)) return;
    write_all(text, len);
}

void rk_log_fatal(const char *msg) { log_line(LL_WARNING, msg, strlen(msg)); }
