/*
 * The configuration's values (struct rk_config, read everywhere) and what
 * every part of the configuration code shares: the lock that serialises
 * CONFIG GET/SET and loading, and the parking place of replaced strings.
 * The parameters themselves are in config_table.c, their types in
 * config_types.c, files and the command line in config_load.c.
 */
#include "ringkv/config.h"
#include "ringkv/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct rk_config rk_config;
long long rk_config_proto_max_bulk_len;
unsigned rk_config_listen_gen;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
void config_lock(void) { pthread_mutex_lock(&lock); }
void config_unlock(void) { pthread_mutex_unlock(&lock); }

bool config_allows_protected(const char *setting, bool local_client) {
    return setting && (strcmp(setting, "yes") == 0 || (strcmp(setting, "local") == 0 && local_client));
}

/* Strings replaced at run time are parked here instead of freed: a worker
 * may still be reading the old value. They are few and small. */
static char **retired;
static size_t nretired;

void config_retire(char *old) {
    if (!old) return;
    retired = rk_realloc(retired, (nretired + 1) * sizeof *retired);
    retired[nretired++] = old;
}
