/*
 * Loading the append-only files a manifest names (aof.h): the base (an
 * RDB image, or commands) and each incremental file, in order.
 *
 * A file is mapped and parsed in place: each command's arguments point
 * into the mapping and go to the caller's exec (the command layer runs
 * them). Commands between MULTI and EXEC are held until EXEC, so a block
 * cut short by a crash is dropped whole. The last file may end in a cut
 * command, a cut block, or a hole of zeros (writes of several threads
 * land out of order; a crash can leave one unwritten behind another):
 * with aof-load-truncated the file is cut back to its last whole command,
 * as Redis does, and loading goes on. Anything else that is not a
 * command is a format error that stops the start.
 */
#include "ringkv/log.h"
#include "ringkv/aof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringkv/config.h"
#include "ringkv/rdb_load.h"
#include "ringkv/util.h"

#include "aof_internal.h"

#define MAX_ARGS_PREALLOC 64

struct parser {
    const char *p, *end;
    struct slice *argv;
    size_t cap;
};

enum parse_result { PARSED, AT_END, CUT, BAD };

static bool read_number(struct parser *ps, char type, long long *out) {
    const char *p = ps->p;
    if (p >= ps->end || *p != type) return false;
    const char *nl = memchr(p, '\n', (size_t)(ps->end - p));
    if (!nl || nl - p < 3 || nl[-1] != '\r') return false;
    long long v = 0;
    for (const char *q = p + 1; q < nl - 1; q++) {
        if (*q < '0' || *q > '9' || v > (1LL << 40)) return false;
        v = v * 10 + (*q - '0');
    }
    *out = v;
    ps->p = nl + 1;
    return true;
}

/* One command; PARSED with *argc set, AT_END, CUT (the data ends inside
 * it, or a zero byte: a hole), or BAD. Annotations (#...) are skipped. */
static enum parse_result parse_command(struct parser *ps, int *argc) {
    while (ps->p < ps->end && *ps->p == '#') {
        const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
        if (!nl) return CUT;
        ps->p = nl + 1;
    }
    if (ps->p >= ps->end) return AT_END;
    if (*ps->p == '\0') return CUT;
    if (*ps->p != '*') return BAD;
    long long n;
    const char *start = ps->p;
    if (!read_number(ps, '*', &n)) return memchr(start, '\n', (size_t)(ps->end - start)) ? BAD : CUT;
    if (n < 1 || n > (1 << 24)) return BAD;
    if ((size_t)n > ps->cap) {
        ps->cap = (size_t)n;
        ps->argv = rk_realloc(ps->argv, ps->cap * sizeof *ps->argv);
    }
    for (long long i = 0; i < n; i++) {
        long long len;
        if (ps->p >= ps->end || *ps->p == '\0') return CUT;
        const char *at = ps->p;
        if (!read_number(ps, '$', &len)) return memchr(at, '\n', (size_t)(ps->end - at)) ? BAD : CUT;
        if ((long long)(ps->end - ps->p) < len + 2) return CUT;
        if (ps->p[len] != '\r' || ps->p[len + 1] != '\n') return BAD;
        ps->argv[i] = (struct slice){ ps->p, (size_t)len };
        ps->p += len + 2;
    }
    *argc = (int)n;
    return PARSED;
}

struct held { size_t off; int argc; };   /* a command inside MULTI: where it starts */

static int load_commands(const char *path, const char *data, size_t len, bool last, const struct aof_replay *r,
                         struct rbuf *err) {
    struct parser ps = { data, data + len, rk_malloc(MAX_ARGS_PREALLOC * sizeof(struct slice)), MAX_ARGS_PREALLOC };
    struct held *block = NULL;
    size_t nblock = 0, cap = 0, valid_up_to = 0, valid_before_multi = 0;
    bool in_multi = false;
    enum parse_result res;
    int argc, rc = 0;
    size_t done = 0;
    while ((res = parse_command(&ps, &argc)) == PARSED) {
        if (!load_pace(done++, err)) { rc = -1; break; }
        size_t at = (size_t)(ps.p - data);
        if (argc == 1 && slice_eq_nocase(ps.argv[0], "multi")) {
            if (in_multi) { res = BAD; break; }
            in_multi = true;
            valid_before_multi = valid_up_to;
            nblock = 0;
            valid_up_to = at;
            continue;
        }
        if (in_multi && !(argc == 1 && slice_eq_nocase(ps.argv[0], "exec"))) {
            if (nblock == cap) {
                cap = cap ? cap * 2 : 16;
                block = rk_realloc(block, cap * sizeof *block);
            }
            /* the command's start: parse it again at EXEC */
            size_t start = valid_up_to;
            block[nblock++] = (struct held){ start, argc };
            valid_up_to = at;
            continue;
        }
        if (in_multi) {   /* EXEC: run the block */
            in_multi = false;
            for (size_t i = 0; i < nblock && rc == 0; i++) {
                struct parser again = { data + block[i].off, data + len, ps.argv, ps.cap };
                int n;
                parse_command(&again, &n);
                ps.argv = again.argv;
                ps.cap = again.cap;
                if (r->exec(r->ud, n, ps.argv, err) != 0) rc = -1;
            }
            nblock = 0;
        } else if (r->exec(r->ud, argc, ps.argv, err) != 0) {
            rc = -1;
        }
        if (rc) break;
        valid_up_to = at;
    }
    free(ps.argv);
    free(block);
    if (rc) return -1;
    if (res == AT_END && !in_multi) return 0;
    char msg[512];
    if (res == BAD) {
        int k = snprintf(msg, sizeof msg,
                         "Bad file format reading the append only file %s: make a backup of your AOF file, then use "
                         "./redis-check-aof --fix <filename.manifest>", path);
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    size_t keep = in_multi ? valid_before_multi : valid_up_to;
    if (in_multi) rk_log(LL_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", path);
    if (!last || !CONFIG_GET(aof_load_truncated)) {
        int k = snprintf(msg, sizeof msg,
                         "Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your "
                         "AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set "
                         "the 'aof-load-truncated' configuration option to yes and restart the server.", path);
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    rk_log(LL_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", path);
    rk_log(LL_WARNING, "!!! Truncating the AOF %s at offset %zu !!!", path, keep);
    if (truncate(path, (off_t)keep) != 0) {
        int k = snprintf(msg, sizeof msg, "Error truncating the AOF file %s: %s", path, strerror(errno));
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    rk_log(LL_WARNING, "AOF %s loaded anyway because aof-load-truncated is enabled", path);
    return 0;
}

/* One file of commands (an AOF base or an incremental file). */
static int load_file(const char *path, bool last, const struct aof_replay *r, struct rbuf *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char msg[512];
    if (fd < 0) {
        int k = snprintf(msg, sizeof msg, "Can't open the append log file %s: %s", path, strerror(errno));
        rbuf_append(err, msg, (size_t)k);
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int k = snprintf(msg, sizeof msg, "Can't map the append log file %s: %s", path, strerror(errno));
            rbuf_append(err, msg, (size_t)k);
            rc = -1;
        } else {
            rc = load_commands(path, map, (size_t)st.st_size, last, r, err);
            munmap(map, (size_t)st.st_size);
        }
    }
    close(fd);
    return rc;
}

int aof_load(struct shard **shards, unsigned n, const struct aof_replay *r, size_t *keys, struct rbuf *err) {
    struct aof_manifest m;
    int rc = aof_manifest_read(&m, err);
    if (rc != 0) return rc;
    if (!m.base_seq && !m.nincr) return 1;
    char path[PATH_MAX + 512];
    *keys = 0;
    if (m.base_seq) {
        snprintf(path, sizeof path, "%s/%s", rk_config.appenddirname, m.base_name);
        if (m.base_rdb) {
            rk_log(LL_NOTICE, "Reading RDB base file on AOF loading...");
            /* expired keys stay, as in Redis's AOF preamble: later records may name them */
            rc = rdb_load_file(shards, n, path, false, r->functions, 0, keys, err);
            if (rc == 1) {
                err->len = 0;
                rbuf_append(err, "The AOF base file named by the manifest does not exist", 55);
                rc = -1;
            }
        } else {
            rc = load_file(path, m.nincr == 0, r, err);
        }
        if (rc != 0) return -1;
    }
    for (unsigned i = 0; i < m.nincr; i++) {
        snprintf(path, sizeof path, "%s/%s", rk_config.appenddirname, m.incr_name[i]);
        if (access(path, F_OK) != 0 && i + 1 == m.nincr) continue;   /* created at the first write */
        if (load_file(path, i + 1 == m.nincr, r, err) != 0) return -1;
    }
    return 0;
}
