/*
 * Receive-buffer exhaustion. The server is started with a tiny provided
 * buffer ring (16 buffers of 1 KB) and many clients pipeline large requests
 * at once, so the kernel runs out of buffers (-ENOBUFS ends a multishot
 * receive) again and again. Every request must still be answered, in order
 * and byte for byte, and the server must say it went through the recovery.
 * Then the buffers a quiet thread gives back (MADV_DONTNEED after a second
 * with little input) must come back as working buffers.
 */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLIENTS   16
#define REQUESTS  300
#define VALUE_LEN 700

struct job {
    const struct server *srv;
    int id;
    int failures;
};

static void value_for(char *v, int client, int i) {
    for (int j = 0; j < VALUE_LEN; j++) v[j] = (char)('a' + (client * 7 + i * 13 + j) % 26);
}

static void *client_main(void *arg) {
    struct job *job = arg;
    redisContext *c = redisConnect("127.0.0.1", job->srv->port);
    if (!c || c->err) { job->failures++; return NULL; }
    char v[VALUE_LEN];
    for (int i = 0; i < REQUESTS; i++) {
        value_for(v, job->id, i);
        redisAppendCommand(c, "SET buf:%d:%d %b", job->id, i, v, (size_t)VALUE_LEN);
        redisAppendCommand(c, "GET buf:%d:%d", job->id, i);
    }
    for (int i = 0; i < REQUESTS; i++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK || !r || r->type != REDIS_REPLY_STATUS ||
            strcmp(r->str, "OK") != 0)
            job->failures++;
        if (r) freeReplyObject(r);
        r = NULL;
        value_for(v, job->id, i);
        if (redisGetReply(c, (void **)&r) != REDIS_OK || !r || r->type != REDIS_REPLY_STRING ||
            r->len != VALUE_LEN || memcmp(r->str, v, VALUE_LEN) != 0)
            job->failures++;
        if (r) freeReplyObject(r);
        if (job->failures) break;
    }
    redisFree(c);
    return NULL;
}

/* Every client pipelines its requests at once; all replies must be exact. */
static void run_clients(const struct server *srv) {
    pthread_t threads[CLIENTS];
    struct job jobs[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        jobs[i] = (struct job){ srv, i, 0 };
        pthread_create(&threads[i], NULL, client_main, &jobs[i]);
    }
    int failures = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(threads[i], NULL);
        failures += jobs[i].failures;
    }
    assert_int_equal(failures, 0);
}

/* A per-thread counter of INFO ringkv, summed over the threads. */
static long long ringkv_counter(redisContext *c, const char *name) {
    redisReply *r = cmd(c, "INFO ringkv");
    long long sum = 0;
    size_t n = strlen(name);
    for (const char *p = r->str; (p = strstr(p, name)); p++)
        if (p[n] == '=') sum += atoll(p + n + 1);
    freeReplyObject(r);
    return sum;
}

static void test_exhausted_buffer_ring(void **state) {
    struct fixture *f = FIX(state);
    run_clients(&f->srv);
    INT(f->c, CLIENTS * REQUESTS, "DBSIZE");
    if (h_redis_mode()) return;
    /* the recovery path really ran */
    long long exhausted = ringkv_counter(f->c, "buffer_ring_exhausted");
    print_message("buffer ring exhausted %lld times\n", exhausted);
    assert_true(exhausted > 0);
}

static void test_idle_buffers_given_back(void **state) {
    struct fixture *f = FIX(state);
    run_clients(&f->srv);
    if (!h_redis_mode()) {
        /* a thread quiet for a second gives them back (bounded poll; the
         * INFO polls are far below what counts as busy) */
        long long trims = 0;
        for (int i = 0; i < 50 && (trims = ringkv_counter(f->c, "buffer_trims")) == 0; i++) usleep(100 * 1000);
        assert_true(trims > 0);
    }
    /* the dropped pages come back zeroed and work as buffers again */
    run_clients(&f->srv);
    INT(f->c, CLIENTS * REQUESTS, "DBSIZE");
}

static int setup_small_ring(void **state) {
    static const char *const ringkv_args[] = { "--io-buffers", "16", "--io-buffer-size", "1024", NULL };
    return h_group_setup_args(state, h_redis_mode() ? NULL : ringkv_args);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_exhausted_buffer_ring, h_flushall),
        cmocka_unit_test_setup(test_idle_buffers_given_back, h_flushall),
    };
    int rc = cmocka_run_group_tests_name("bufring", tests, setup_small_ring, h_group_teardown);
    return rc + h_failures();
}
