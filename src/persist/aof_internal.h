/*
 * What aof.c and aof_load.c share: the manifest as read from disk.
 */
#ifndef RINGKV_AOF_INTERNAL_H
#define RINGKV_AOF_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include "ringkv/common.h"

#define AOF_MAX_INCR 16

struct aof_manifest {
    unsigned base_seq;            /* 0: no base */
    bool base_rdb;
    char base_name[256];
    unsigned nincr;
    unsigned incr_seq[AOF_MAX_INCR];
    char incr_name[AOF_MAX_INCR][256];
};

/* appenddirname/appendfilename.manifest: 0, 1 when there is none, -1 with err. */
int aof_manifest_read(struct aof_manifest *m, struct rbuf *err);

#endif
