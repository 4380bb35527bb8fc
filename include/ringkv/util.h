/*
 * Number <-> string conversions with Redis's exact rules: a string is an
 * integer only if it round-trips (no spaces, no '+', no leading zeros).
 */
#ifndef RINGKV_UTIL_H
#define RINGKV_UTIL_H

#include "ringkv/common.h"

bool str_to_ll(const char *s, size_t len, long long *out);
/* As Redis's string2ull (stream IDs): the strict form, else strtoull's looser rules. */
bool str_to_ull(const char *s, size_t len, unsigned long long *out);
/* Strict float parse as Redis's string2ld/strtold path: no spaces, no NaN. */
bool str_to_ld(const char *s, size_t len, long double *out);
bool str_to_d(const char *s, size_t len, double *out);
int ll_to_str(char *dst, size_t dstlen, long long v);       /* returns length */
int ull_to_str(char *dst, size_t dstlen, unsigned long long v);
/* INCRBYFLOAT formatting (%.17Lf, trailing zeros trimmed, as Redis's ld2string LD_STR_HUMAN). */
int ld_to_str_human(char *dst, size_t dstlen, long double v);
/* Double formatting for RESP replies ("%.17g"; inf/-inf as Redis prints them). */
int d_to_str(char *dst, size_t dstlen, double v);

/* Glob-style matching with Redis's rules (*, ?, [..], \), optionally nocase. */
bool string_match(const char *pat, size_t plen, const char *str, size_t slen, bool nocase);

/* Fast thread-local pseudo-random numbers (xorshift64*, seeded from the
 * clock): for SPOP, RANDOMKEY and friends, not for anything secret. */
uint64_t rk_random(void);
/* Restart this thread's sequence from seed (0: from the clock again at the
 * next call), so a run can be repeated (the fuzz harnesses). */
void rk_random_seed(uint64_t seed);

uint64_t mstime_now(void);   /* wall clock milliseconds */
uint64_t ustime_now(void);   /* wall clock microseconds */
uint64_t monotonic_us(void);
/* Whether a client address "ip:port" (as CLIENT LIST shows it) is local
 * in Redis's sense (islocalClient): the peer is 127.0.0.1 or ::1. */
bool addr_is_loopback(const char *ip_port);
/* Both ends of socket fd as "ip:port" (a unix socket's: its path, port
 * 0), the peer's first, each NUL-terminated, in one allocation. */
char *sock_addr_pair(int fd);
/* n bytes as Redis writes them for people: "1.50M", "512B". */
void human_bytes(char *buf, size_t len, double n);

/* Split as Redis's sdssplitargs: quotes, \xHH and the usual escapes.
 * Returns the number of words (malloc'd, see free_words), -1 on unbalanced
 * quotes. */
int split_args(const char *line, char ***words);
void free_words(char **words, int n);

#endif
