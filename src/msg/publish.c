/*
 * Published messages between threads. A publish reaches the subscribers of
 * the publishing thread at once; for every other thread with subscribers
 * the message is appended to this iteration's XM_PUBLISH for it, pushed
 * with the other messages at the end of the iteration (xshard_flush). The
 * rings are FIFO, so the messages of one publisher arrive at every thread
 * in publish order, and a thread without subscribers of a channel never
 * sees its messages.
 *
 * A record is [kind:u8][channel length:u32][message length:u32] followed by
 * the bytes. The receiver hands each to the connection layer and frees the
 * message.
 */
#include "ringkv/server.h"
#include "ringkv/util.h"

#include <stdlib.h>

#include "msg_internal.h"

#define REC_HDR 9

void publish_send(struct worker *w, unsigned thread, enum ps_kind k, struct slice channel, struct slice msg) {
    if (thread == w->id) {
        rk_msg_client.deliver(w, k, channel, msg);
        return;
    }
    struct xmsg *m = w->out_publish[thread];
    if (!m) {
        m = rk_calloc(1, sizeof *m);
        m->type = XM_PUBLISH;
        m->from = (uint8_t)w->id;
        w->out_publish[thread] = m;
    }
    uint32_t clen = (uint32_t)channel.len, mlen = (uint32_t)msg.len;
    char *p = rbuf_reserve(&m->req, REC_HDR + clen + mlen);
    p[0] = (char)k;
    memcpy(p + 1, &clen, 4);
    memcpy(p + 5, &mlen, 4);
    memcpy(p + REC_HDR, channel.ptr, clen);
    memcpy(p + REC_HDR + clen, msg.ptr, mlen);
    m->req.len += REC_HDR + clen + mlen;
    m->ncmds++;
}

void publish_receive(struct worker *w, struct xmsg *m) {
    for (size_t off = 0; off + REC_HDR <= m->req.len;) {
        const char *p = m->req.buf + off;
        uint32_t clen, mlen;
        memcpy(&clen, p + 1, 4);
        memcpy(&mlen, p + 5, 4);
        rk_msg_client.deliver(w, (enum ps_kind)p[0], (struct slice){ p + REC_HDR, clen },
                              (struct slice){ p + REC_HDR + clen, mlen });
        off += REC_HDR + clen + mlen;
    }
    rbuf_free(&m->req);
    free(m);
}

void publish_teardown(struct worker *w) {
    for (unsigned t = 0; t < srv.nworkers; t++) {
        if (!w->out_publish[t]) continue;
        rbuf_free(&w->out_publish[t]->req);
        free(w->out_publish[t]);
        w->out_publish[t] = NULL;
    }
}
