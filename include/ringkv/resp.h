/*
 * RESP request parser.
 *
 * Requests are parsed in place: resp_parse() looks at the bytes received so
 * far and, when a whole command is there, fills argv with slices pointing into
 * those bytes. It never copies a bulk argument. Only inline commands whose
 * arguments contain quotes are unescaped, into the parser's scratch buffer.
 *
 * The parser keeps no state between calls other than configuration: a caller
 * that got RESP_INCOMPLETE keeps the unconsumed bytes (the I/O layer copies
 * them into a per-connection spill buffer) and calls again with more. To avoid
 * rescanning a large frame on every new packet, RESP_INCOMPLETE also reports
 * how many bytes the frame needs at least, when the headers tell.
 *
 * Limits and error texts follow Redis: a malformed request yields
 * RESP_ERROR with the exact text Redis sends after "-ERR " (for example
 * "Protocol error: invalid bulk length"); the connection is then closed.
 */
#ifndef RINGKV_RESP_H
#define RINGKV_RESP_H

#include "ringkv/common.h"

#define RESP_INLINE_MAX      (64 * 1024)          /* PROTO_INLINE_MAX_SIZE */
#define RESP_MBULK_MAX       2147483647           /* max multibulk count: INT_MAX since Redis 7.0 (6.x: 1024*1024) */
#define RESP_UNAUTH_MBULK_MAX 10                  /* before AUTH, like Redis */
#define RESP_UNAUTH_BULK_MAX  16384

enum resp_status {
    RESP_OK = 0,         /* a command was parsed; *consumed bytes used */
    RESP_INCOMPLETE,     /* need more bytes; nothing consumed */
    RESP_EMPTY,          /* consumed bytes held no command (blank inline line, "*0", "*-1") */
    RESP_ERROR,          /* protocol error; see p->error */
};

struct resp_parser {
    /* configuration, set by the caller */
    long long max_bulk_len;     /* proto-max-bulk-len */
    bool unauthenticated;       /* apply Redis's tighter limits before AUTH */
    /* output */
    struct slice *argv;         /* grows as needed, owned by the parser */
    size_t argc;
    size_t argv_cap;
    size_t need;                /* on RESP_INCOMPLETE: total frame bytes needed, 0 if unknown */
    const char *error;          /* on RESP_ERROR: message without "-ERR " */
    char errbuf[64];
    struct rbuf scratch;        /* unescaped inline arguments */
};

void resp_parser_init(struct resp_parser *p, long long max_bulk_len);
void resp_parser_free(struct resp_parser *p);
/* Between commands: give back argument space beyond keep_bytes, grown for
 * a command with many arguments (it counts in used_memory). */
void resp_parser_trim(struct resp_parser *p, size_t keep_bytes);

/* Parse one command from buf[0..len). On RESP_OK/RESP_EMPTY, *consumed is the
 * number of bytes that made up the request. argv is valid until the next call
 * and only as long as buf is. */
enum resp_status resp_parse(struct resp_parser *p, const char *buf, size_t len, size_t *consumed);

/* The first argument after the command's name of the multibulk request
 * that buf starts with, if that much of it is in buf: a guess at its key,
 * for prefetching before the request is parsed. Checks buf's bounds, not
 * the request (resp_parse does that when it runs). */
bool resp_peek_arg1(const char *buf, size_t len, struct slice *arg);

#endif
