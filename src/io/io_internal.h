/*
 * What the connection layer's files (worker.c, client.c, blocking.c) share
 * but nothing else should see.
 */
#ifndef RINGKV_IO_INTERNAL_H
#define RINGKV_IO_INTERNAL_H

#include "ringkv/server.h"

void client_maybe_free(struct client *c);
void client_free_now(struct client *c);

#endif
