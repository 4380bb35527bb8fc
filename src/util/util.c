/*
 * util.c -- numbers as Redis reads and writes them, glob matching, clocks.
 *
 * Redis treats a string as an integer only when converting it back gives the
 * same bytes: no sign '+', no spaces, no leading zeros, no "-0". That rule is
 * what lets a string value double as a counter without changing what GET
 * returns, so str_to_ll() follows Redis's string2ll() to the letter.
 *
 * Floats go through the C library (strtold/strtod) exactly like Redis, with
 * the same extra checks layered on top: no leading space, the whole input
 * consumed, no NaN, no overflow to infinity.
 *
 * Formatting integers happens for nearly every reply, so ll_to_str() writes
 * two digits per step from a table instead of calling snprintf().
 */
#include "ringkv/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#define LONG_STR_SIZE 21                  /* as Redis: "-9223372036854775808" + 1 */
#define MAX_LONG_DOUBLE_CHARS (5 * 1024)  /* as Redis: bounds strtold input */

/* ------------------------------------------------------------------------ */
/* String to number                                                          */
/* ------------------------------------------------------------------------ */

bool str_to_ll(const char *s, size_t slen, long long *out) {
    const char *p = s, *end = s + slen;
    bool negative = false;
    unsigned long long v;

    if (slen == 0 || slen >= LONG_STR_SIZE) return false;
    if (slen == 1 && p[0] == '0') {
        if (out) *out = 0;
        return true;
    }
    if (*p == '-') {
        negative = true;
        if (++p == end) return false;
    }
    /* A leading zero is only allowed for "0" itself, handled above. */
    if (*p < '1' || *p > '9') return false;
    v = (unsigned long long)(*p++ - '0');
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) return false;
        v = v * 10 + d;
        p++;
    }
    if (p != end) return false;

    if (negative) {
        if (v > (unsigned long long)LLONG_MAX + 1) return false;
        if (out) *out = (long long)(0ULL - v);
    } else {
        if (v > (unsigned long long)LLONG_MAX) return false;
        if (out) *out = (long long)v;
    }
    return true;
}

/* Redis's string2ull(): the strict integer form first, and failing that the
 * looser strtoull() rules (leading blanks, a sign, leading zeros, the full
 * unsigned range). Stream IDs are parsed this way, so "01-1" is a valid ID.
 * strtoull() is reproduced here because the input is not NUL-terminated. */
bool str_to_ull(const char *s, size_t slen, unsigned long long *out) {
    long long ll;
    if (str_to_ll(s, slen, &ll)) {
        if (ll < 0) return false;
        *out = (unsigned long long)ll;
        return true;
    }

    const char *p = s, *end = s + slen;
    bool negative = false;
    unsigned long long v = 0;

    while (p < end && isspace((unsigned char)*p)) p++;
    if (p < end && (*p == '+' || *p == '-')) negative = (*p++ == '-');
    if (p == end || *p < '0' || *p > '9') return false;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) return false;   /* ERANGE */
        v = v * 10 + d;
        p++;
    }
    if (p != end) return false;
    *out = negative ? 0ULL - v : v;
    return true;
}

bool str_to_ld(const char *s, size_t slen, long double *out) {
    char buf[MAX_LONG_DOUBLE_CHARS];
    char *eptr;
    long double v;

    if (slen == 0 || slen >= sizeof(buf)) return false;
    memcpy(buf, s, slen);
    buf[slen] = '\0';

    errno = 0;
    v = strtold(buf, &eptr);
    /* ERANGE is fatal only for overflow or total underflow; a denormal
     * result is still a number the user can get back. */
    if (isspace((unsigned char)buf[0]) || (size_t)(eptr - buf) != slen ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v))
        return false;
    if (out) *out = v;
    return true;
}

/* Redis's string2d() has no length limit, so a long input takes the heap. */
bool str_to_d(const char *s, size_t slen, double *out) {
    char stackbuf[128];
    char *buf = stackbuf, *eptr;
    double v;
    bool ok;

    if (slen == 0 || isspace((unsigned char)s[0])) return false;
    if (slen >= sizeof(stackbuf)) buf = rk_malloc(slen + 1);
    memcpy(buf, s, slen);
    buf[slen] = '\0';

    errno = 0;
    v = strtod(buf, &eptr);
    ok = (size_t)(eptr - buf) == slen &&
         !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)) &&
         !isnan(v);
    if (buf != stackbuf) free(buf);
    if (ok && out) *out = v;
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Number to string                                                          */
/* ------------------------------------------------------------------------ */

static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static int digits10(unsigned long long v) {
    int n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000U;
        n += 4;
    }
}

/* Returns the length written (NUL-terminated), or 0 if dst is too small,
 * as Redis's ull2string(). */
int ull_to_str(char *dst, size_t dstlen, unsigned long long v) {
    int len = digits10(v);
    if ((size_t)len >= dstlen) {
        if (dstlen) dst[0] = '\0';
        return 0;
    }
    dst[len] = '\0';
    char *p = dst + len - 1;
    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        p[0] = digit_pairs[i + 1];
        p[-1] = digit_pairs[i];
        p -= 2;
    }
    if (v < 10) {
        *p = (char)('0' + v);
    } else {
        unsigned i = (unsigned)v * 2;
        p[0] = digit_pairs[i + 1];
        p[-1] = digit_pairs[i];
    }
    return len;
}

int ll_to_str(char *dst, size_t dstlen, long long v) {
    if (v >= 0) return ull_to_str(dst, dstlen, (unsigned long long)v);
    if (dstlen < 3) {
        if (dstlen) dst[0] = '\0';
        return 0;
    }
    /* 0 - v in unsigned arithmetic is well defined for LLONG_MIN too. */
    int len = ull_to_str(dst + 1, dstlen - 1, 0ULL - (unsigned long long)v);
    if (len == 0) {
        dst[0] = '\0';
        return 0;
    }
    dst[0] = '-';
    return len + 1;
}

/* Redis's ld2string(LD_STR_HUMAN): fixed notation so INCRBYFLOAT never
 * answers in exponent form, 17 digits after the point so that short decimal
 * inputs come back as typed once the trailing zeros are trimmed. */
int ld_to_str_human(char *dst, size_t dstlen, long double v) {
    size_t l;

    if (isinf(v)) {
        if (dstlen < 5) return 0;
        l = v > 0 ? 3 : 4;
        memcpy(dst, v > 0 ? "inf" : "-inf", l);
        dst[l] = '\0';
        return (int)l;
    }
    int n = snprintf(dst, dstlen, "%.17Lf", v);
    if (n < 0 || (size_t)n + 1 > dstlen) return 0;
    l = (size_t)n;
    if (memchr(dst, '.', l) != NULL) {
        while (dst[l - 1] == '0') l--;
        if (dst[l - 1] == '.') l--;
    }
    if (l == 2 && dst[0] == '-' && dst[1] == '0') {
        dst[0] = '0';
        l = 1;
    }
    dst[l] = '\0';
    return (int)l;
}

/* Redis 7.0's addReplyDouble() text: "%.17g", with infinities spelled out
 * explicitly. Integral values below 1e17 print the same as the integer, so
 * they skip snprintf(); that is the common case for scores. */
int d_to_str(char *dst, size_t dstlen, double v) {
    if (isinf(v)) {
        if (dstlen < 5) return 0;
        size_t l = v > 0 ? 3 : 4;
        memcpy(dst, v > 0 ? "inf" : "-inf", l);
        dst[l] = '\0';
        return (int)l;
    }
    if (v > -1e17 && v < 1e17 && v == (double)(long long)v && !(v == 0 && signbit(v)))
        return ll_to_str(dst, dstlen, (long long)v);
    int n = snprintf(dst, dstlen, "%.17g", v);
    if (n < 0 || (size_t)n + 1 > dstlen) return 0;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Glob matching                                                             */
/* ------------------------------------------------------------------------ */

/* Redis runs in the "C" ctype locale and x86 chars are signed; ranges such
 * as [a-\xff] compare signed values there, so we do the same to match. */
static inline int sc(char c) { return (signed char)c; }
static inline int lower(int c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

/* Returns true on match. *give_up is set once the rest of the pattern has
 * been tried at every later position of the string and failed: then no
 * earlier '*' can help by swallowing more, which bounds the work to
 * O(pattern * string) instead of exponential. Each '*' recurses once, so
 * patterns nesting more than MATCH_MAX_NESTING stars match nothing rather
 * than overflow the stack (as later Redis versions do). */
#define MATCH_MAX_NESTING 1000
static bool match_impl(const char *pat, size_t plen, const char *str, size_t slen,
                       bool nocase, bool *give_up, int nesting) {
    if (nesting > MATCH_MAX_NESTING) return false;
    while (plen && slen) {
        switch (pat[0]) {
        case '*':
            while (plen > 1 && pat[1] == '*') { pat++; plen--; }
            if (plen == 1) return true;
            while (slen) {
                if (match_impl(pat + 1, plen - 1, str, slen, nocase, give_up, nesting + 1)) return true;
                if (*give_up) return false;
                str++;
                slen--;
            }
            *give_up = true;
            return false;
        case '?':
            str++;
            slen--;
            break;
        case '[': {
            bool neg, match = false;
            pat++;
            plen--;
            neg = plen && pat[0] == '^';
            if (neg) { pat++; plen--; }
            for (;;) {
                if (plen == 0) {
                    /* Unterminated class: step back so the shared
                     * advance below lands exactly at the end. */
                    pat--;
                    plen++;
                    break;
                } else if (pat[0] == '\\' && plen >= 2) {
                    pat++;
                    plen--;
                    if (pat[0] == str[0]) match = true;
                } else if (pat[0] == ']') {
                    break;
                } else if (plen >= 3 && pat[1] == '-') {
                    int start = sc(pat[0]), end = sc(pat[2]), c = sc(str[0]);
                    if (start > end) { int t = start; start = end; end = t; }
                    if (nocase) { start = lower(start); end = lower(end); c = lower(c); }
                    pat += 2;
                    plen -= 2;
                    if (c >= start && c <= end) match = true;
                } else if (nocase ? lower(sc(pat[0])) == lower(sc(str[0])) : pat[0] == str[0]) {
                    match = true;
                }
                pat++;
                plen--;
            }
            if (neg) match = !match;
            if (!match) return false;
            str++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) { pat++; plen--; }
            /* fall through */
        default:
            if (nocase ? lower(sc(pat[0])) != lower(sc(str[0])) : pat[0] != str[0])
                return false;
            str++;
            slen--;
            break;
        }
        pat++;
        plen--;
        if (slen == 0) {
            while (plen && *pat == '*') { pat++; plen--; }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

bool addr_is_loopback(const char *a) {
    const char *colon = strrchr(a, ':');
    size_t iplen = colon ? (size_t)(colon - a) : strlen(a);
    return (iplen == 9 && memcmp(a, "127.0.0.1", 9) == 0) || (iplen == 3 && memcmp(a, "::1", 3) == 0);
}

/* One end of socket fd as "ip:port"; a unix socket's is its path (the
 * local end's, which is the listener's: the peer's has none) with port 0,
 * as Redis shows it. "?:0" when the socket no longer says. */
static void format_sock_end(int fd, bool local, char *dst, size_t len) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int rc = local ? getsockname(fd, (struct sockaddr *)&ss, &sl) : getpeername(fd, (struct sockaddr *)&ss, &sl);
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (rc == 0 && ss.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
        port = ntohs(s->sin_port);
    } else if (rc == 0 && ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof ip);
        port = ntohs(s->sin6_port);
    } else if (rc == 0 && ss.ss_family == AF_UNIX) {
        if (!local) {
            format_sock_end(fd, true, dst, len);
            return;
        }
        struct sockaddr_un *s = (struct sockaddr_un *)&ss;
        size_t n = sl > offsetof(struct sockaddr_un, sun_path) ? sl - offsetof(struct sockaddr_un, sun_path) : 0;
        snprintf(dst, len, "%.*s:0", (int)strnlen(s->sun_path, n), s->sun_path);
        return;
    }
    snprintf(dst, len, "%s:%d", ip, port);
}

char *sock_addr_pair(int fd) {
    char peer[160], local[160];
    format_sock_end(fd, false, peer, sizeof peer);
    format_sock_end(fd, true, local, sizeof local);
    size_t np = strlen(peer) + 1, nl = strlen(local) + 1;
    char *p = rk_malloc(np + nl);
    memcpy(p, peer, np);
    memcpy(p + np, local, nl);
    return p;
}

bool string_match(const char *pat, size_t plen, const char *str, size_t slen, bool nocase) {
    bool give_up = false;
    return match_impl(pat, plen, str, slen, nocase, &give_up, 0);
}

/* ------------------------------------------------------------------------ */
/* Clocks                                                                    */
/* ------------------------------------------------------------------------ */

uint64_t ustime_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t mstime_now(void) {
    return ustime_now() / 1000u;
}

uint64_t monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static _Thread_local uint64_t rng_state;

uint64_t rk_random(void) {
    uint64_t x = rng_state;
    if (RK_UNLIKELY(x == 0)) x = (ustime_now() ^ ((uint64_t)(uintptr_t)&rng_state << 16)) | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void rk_random_seed(uint64_t seed) {
    rng_state = seed;
}

void human_bytes(char *buf, size_t len, double n) {
    const char *units = "BKMGTP";
    int u = 0;
    while (n >= 1024 && u < 5) { n /= 1024; u++; }
    if (u == 0) snprintf(buf, len, "%.0fB", n);
    else snprintf(buf, len, "%.2f%c", n, units[u]);
}
