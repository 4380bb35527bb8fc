/*
 * fuzz_resp_parse: the request parser (src/proto/resp_parse.c) on any bytes.
 *
 * Input: one byte of settings, one byte seeding the split points, then the
 * bytes a client sends. Settings bit 0: unauthenticated limits; bits 1-2:
 * proto-max-bulk-len (512MB, 16, 0, 1MB).
 *
 * The bytes are parsed twice: all at once, and as a connection receives
 * them, in chunks of random size, the unconsumed rest kept and parsed again
 * when more arrives (after waiting for p->need bytes, as the I/O layer
 * does). Each parse call sees a heap block of exactly the bytes it is given,
 * so ASan catches any read past them. Checked:
 *   - every argv slice lies inside the given bytes, or inside the parser's
 *     scratch buffer (unescaped inline words);
 *   - consumed is within the given bytes and not 0 on OK/EMPTY;
 *   - both ways give the same commands, the same final status, and the
 *     same error text: the parser keeps no state between calls;
 *   - p->need on INCOMPLETE is a lower bound of the frame that completes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkv/resp.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

/* What one way of parsing saw: the commands, each argv flattened as
 * length-prefixed bytes, then how it ended. */
struct outcome {
    char *cmds;
    size_t len, cap;
    size_t ncmds;
    enum resp_status last;   /* ERROR, or INCOMPLETE at the end of input */
    char error[96];
};

static void out_put(struct outcome *o, const void *p, size_t n) {
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 64;
        o->cmds = realloc(o->cmds, o->cap);
        CHECK(o->cmds != NULL);
    }
    memcpy(o->cmds + o->len, p, n);
    o->len += n;
}

static void record(struct outcome *o, const struct resp_parser *p, enum resp_status st) {
    unsigned char tag = (unsigned char)st;
    out_put(o, &tag, 1);
    if (st != RESP_OK) return;
    uint64_t argc = p->argc;
    out_put(o, &argc, sizeof argc);
    for (size_t i = 0; i < p->argc; i++) {
        uint64_t l = p->argv[i].len;
        out_put(o, &l, sizeof l);
        out_put(o, p->argv[i].ptr, p->argv[i].len);
    }
    o->ncmds++;
}

static void check_result(const struct resp_parser *p, enum resp_status st, const char *buf, size_t len,
                         size_t consumed) {
    if (st == RESP_OK || st == RESP_EMPTY) {
        CHECK(consumed > 0 && consumed <= len);
    } else {
        CHECK(consumed == 0);
    }
    if (st == RESP_OK) {
        CHECK(p->argc > 0);
        for (size_t i = 0; i < p->argc; i++) {
            const char *a = p->argv[i].ptr;
            size_t l = p->argv[i].len;
            bool in_buf = a >= buf && l <= len && a <= buf + len - l && a + l <= buf + consumed;
            bool in_scratch = p->scratch.buf && a >= p->scratch.buf && l <= p->scratch.cap &&
                              a <= p->scratch.buf + p->scratch.cap - l;
            CHECK(in_buf || in_scratch);
        }
    }
    if (st == RESP_ERROR) CHECK(p->error != NULL && strlen(p->error) < 90);
}

/* The block the last parse saw: argv points into it until the next parse. */
static char *last_copy;

static enum resp_status parse_exact(struct resp_parser *p, const char *data, size_t len, size_t *consumed) {
    free(last_copy);
    last_copy = malloc(len ? len : 1);
    CHECK(last_copy != NULL);
    memcpy(last_copy, data, len);
    enum resp_status st = resp_parse(p, last_copy, len, consumed);
    check_result(p, st, last_copy, len, *consumed);
    return st;
}

/* All at once: parse until an error or the input runs out. ends[0..*nframes]
 * get the offsets where frames begin and end. */
static void parse_whole(struct resp_parser *p, const char *data, size_t len, struct outcome *o,
                        size_t *ends, size_t max_ends, size_t *nframes) {
    size_t pos = 0;
    ends[0] = 0;
    *nframes = 0;
    for (;;) {
        size_t consumed;
        enum resp_status st = parse_exact(p, data + pos, len - pos, &consumed);
        if (st == RESP_OK || st == RESP_EMPTY) {
            record(o, p, st);
            pos += consumed;
            if (*nframes + 1 < max_ends) ends[++*nframes] = pos;
            continue;
        }
        o->last = st;
        if (st == RESP_ERROR) snprintf(o->error, sizeof o->error, "%s", p->error);
        return;
    }
}

static uint64_t rng;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t chunk_size(void) {
    uint64_t r = next_rand();
    switch (r & 3) {
    case 0: return 1;
    case 1: return 1 + (r >> 8) % 8;
    case 2: return 1 + (r >> 8) % 64;
    default: return 1 + (r >> 8) % 4096;
    }
}

/* As a connection receives it: pending bytes grow a chunk at a time. */
static void parse_chunks(struct resp_parser *p, const char *data, size_t len, struct outcome *o) {
    size_t start = 0, have = 0, need = 0;
    for (;;) {
        bool at_end = have == len;
        if (!at_end) {
            size_t c = chunk_size();
            have = c > len - have ? len : have + c;
            if (need > have - start && have < len) continue;   /* the I/O layer waits for need */
        }
        for (;;) {
            size_t consumed;
            enum resp_status st = parse_exact(p, data + start, have - start, &consumed);
            if (st == RESP_OK || st == RESP_EMPTY) {
                record(o, p, st);
                start += consumed;
                need = 0;
                continue;
            }
            if (st == RESP_ERROR) {
                o->last = st;
                snprintf(o->error, sizeof o->error, "%s", p->error);
                return;
            }
            CHECK(p->need == 0 || p->need > have - start);   /* need is more than we have */
            need = p->need;
            break;
        }
        if (at_end) {
            o->last = RESP_INCOMPLETE;
            return;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    static const long long bulk_max[4] = { 512LL * 1024 * 1024, 16, 0, 1024 * 1024 };
    uint8_t settings = data[0];
    rng = ((uint64_t)data[1] << 32) | 0x9e3779b9u;
    const char *bytes = (const char *)data + 2;
    size_t len = size - 2;

    struct resp_parser p;
    resp_parser_init(&p, bulk_max[(settings >> 1) & 3]);
    p.unauthenticated = settings & 1;

    struct outcome whole = { 0 }, chunks = { 0 };
    size_t ends[256], nframes;
    parse_whole(&p, bytes, len, &whole, ends, 256, &nframes);
    parse_chunks(&p, bytes, len, &chunks);

    /* Past 64KB the "too big" rules see how much is buffered, so only
     * smaller inputs must parse the same whatever the chunks. */
    if (len <= RESP_INLINE_MAX) {
        CHECK(whole.ncmds == chunks.ncmds);
        CHECK(whole.len == chunks.len && (whole.len == 0 || memcmp(whole.cmds, chunks.cmds, whole.len) == 0));
        CHECK(whole.last == chunks.last);
        CHECK(strcmp(whole.error, chunks.error) == 0);
    }

    /* need: a strict prefix of each complete frame is incomplete, and
     * reports at most the frame's size */
    for (size_t i = 1; i <= nframes; i++) {
        size_t start = ends[i - 1], end = ends[i];
        for (size_t k = start; k < end; k += 1 + (end - k) / 4) {
            size_t consumed;
            enum resp_status st = parse_exact(&p, bytes + start, k - start, &consumed);
            CHECK(st == RESP_INCOMPLETE);
            CHECK(p.need == 0 || p.need <= end - start);
        }
    }

    free(last_copy);
    last_copy = NULL;
    free(whole.cmds);
    free(chunks.cmds);
    resp_parser_trim(&p, 0);
    resp_parser_free(&p);
    return 0;
}
