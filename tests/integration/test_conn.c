/*
 * Connection and server commands: PING ECHO QUIT SELECT HELLO AUTH CLIENT
 * COMMAND CONFIG INFO DBSIZE FLUSHDB FLUSHALL TIME DEBUG, unknown command and
 * arity errors, RESP3 shapes.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static bool has_line_prefix(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; ) {
        if (strncmp(p, prefix, n) == 0) return true;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return false;
}

/* ------------------------------------------------------------------ */

static void test_ping(void **state)
{
    redisContext *c = FIX(state)->c;
    STATUS(c, "PONG", "PING");
    BULK(c, "hello world", "PING %s", "hello world");
    ERR(c, "ERR wrong number of arguments for 'ping' command", "PING a b");
    ERR(c, "ERR wrong number of arguments for 'ping' command", "PING a b c");
    /* case-insensitive command names */
    STATUS(c, "PONG", "pInG");

    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_sends(r, "PING\r\n");                  /* inline, like telnet */
    raw_expect(r, "+PONG\r\n");
    raw_sends(r, "ping hi\n");                 /* inline with bare \n */
    raw_expect(r, "$2\r\nhi\r\n");
    raw_sends(r, "\r\n\r\n\r\nPING\r\n");      /* empty inline lines are ignored */
    raw_expect(r, "+PONG\r\n");
    raw_sends(r, "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nPING\r\n$0\r\n\r\n");
    raw_expect(r, "+PONG\r\n$0\r\n\r\n");
    raw_close(r);
}

static void test_echo(void **state)
{
    redisContext *c = FIX(state)->c;
    BULK(c, "hi", "ECHO hi");
    BULK(c, "", "ECHO %s", "");
    const char bin[] = "a\0b\r\nc\xff";
    expect_bulk_len(cmd(c, "ECHO %b", bin, sizeof bin - 1), bin, sizeof bin - 1);
    ERR(c, "ERR wrong number of arguments for 'echo' command", "ECHO");
    ERR(c, "ERR wrong number of arguments for 'echo' command", "ECHO a b");
    /* a big argument */
    size_t n = 300000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++) big[i] = (char)('a' + i % 26);
    expect_bulk_len(cmd(c, "ECHO %b", big, n), big, n);
    free(big);
}

static void test_quit(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "QUIT");
    raw_expect_close(r, "+OK\r\n");
    raw_close(r);

    /* commands pipelined after QUIT are not executed */
    r = raw_connect(&FIX(state)->srv);
    raw_sends(r, "*3\r\n$3\r\nSET\r\n$4\r\nquit\r\n$1\r\n1\r\n*1\r\n$4\r\nQUIT\r\n"
                 "*3\r\n$3\r\nSET\r\n$4\r\nquit\r\n$1\r\n2\r\n");
    raw_expect_close(r, "+OK\r\n+OK\r\n");
    raw_close(r);
    BULK(FIX(state)->c, "1", "GET quit");
}

static void test_select(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "SET k db0");
    OK(c, "SELECT 15");
    NIL(c, "GET k");
    OK(c, "SET k db15");
    INT(c, 1, "DBSIZE");
    OK(c, "SELECT 0");
    BULK(c, "db0", "GET k");
    ERR(c, "ERR DB index is out of range", "SELECT 16");
    ERR(c, "ERR DB index is out of range", "SELECT -1");
    ERR(c, "ERR value is not an integer or out of range", "SELECT x");
    ERR(c, "ERR value is not an integer or out of range", "SELECT 99999999999999999999");
    ERR(c, "ERR wrong number of arguments for 'select' command", "SELECT");
    OK(c, "SELECT 15");
    BULK(c, "db15", "GET k");
    /* the selected db is per connection */
    redisContext *c2 = h_connect(&FIX(state)->srv);
    BULK(c2, "db0", "GET k");
    redisFree(c2);
}

static void check_hello_fields(struct rv *m, int proto, long long id)
{
    struct rv *v;
    v = rv_map_get(m, "server");
    assert_non_null(v);
    assert_int_equal(v->type, '$');
    assert_true(v->len > 0);
    v = rv_map_get(m, "version");
    assert_non_null(v);
    assert_int_equal(v->type, '$');
    assert_true(v->len >= 5 && strspn(v->str, "0123456789.") == v->len);
    v = rv_map_get(m, "proto");
    assert_non_null(v);
    assert_int_equal(v->type, ':');
    assert_int_equal(v->integer, proto);
    v = rv_map_get(m, "id");
    assert_non_null(v);
    assert_int_equal(v->type, ':');
    if (id >= 0) assert_int_equal(v->integer, id);
    v = rv_map_get(m, "mode");
    assert_non_null(v);
    assert_string_equal(v->str, "standalone");
    v = rv_map_get(m, "role");
    assert_non_null(v);
    assert_string_equal(v->str, "master");
    v = rv_map_get(m, "modules");
    assert_non_null(v);
    assert_int_equal(v->type, '*');
    assert_int_equal(v->n, 0);
}

static long long raw_int(struct raw *r, const char *command)
{
    raw_cmd(r, command);
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, ':');
    long long x = v->integer;
    rv_free(v);
    return x;
}

static void test_hello(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    long long id = raw_int(r, "CLIENT ID");

    /* HELLO without arguments: RESP2, a flat array of 7 pairs */
    raw_cmd(r, "HELLO");
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, '*');
    assert_int_equal(v->n, 14);
    assert_string_equal(v->elem[0]->str, "server");
    assert_string_equal(v->elem[2]->str, "version");
    assert_string_equal(v->elem[4]->str, "proto");
    assert_string_equal(v->elem[6]->str, "id");
    assert_string_equal(v->elem[8]->str, "mode");
    assert_string_equal(v->elem[10]->str, "role");
    assert_string_equal(v->elem[12]->str, "modules");
    check_hello_fields(v, 2, id);
    rv_free(v);

    raw_cmd(r, "HELLO 2");
    v = raw_reply(r);
    assert_int_equal(v->type, '*');
    check_hello_fields(v, 2, id);
    rv_free(v);

    /* errors leave the protocol unchanged */
    RAW(r, "-NOPROTO unsupported protocol version\r\n", "HELLO 4");
    RAW(r, "-NOPROTO unsupported protocol version\r\n", "HELLO 1");
    RAW(r, "-ERR Protocol version is not an integer or out of range\r\n", "HELLO x");
    RAW(r, "$-1\r\n", "GET nosuchkey");

    /* HELLO 3: a map, and RESP3 from now on */
    raw_cmd(r, "HELLO 3");
    v = raw_reply(r);
    assert_int_equal(v->type, '%');
    assert_int_equal(v->n, 14);
    assert_string_equal(v->elem[0]->str, "server");
    assert_string_equal(v->elem[12]->str, "modules");
    check_hello_fields(v, 3, id);
    rv_free(v);
    RAW(r, "_\r\n", "GET nosuchkey");
    RAW(r, "+PONG\r\n", "PING");
    RAW(r, "_\r\n", "CLIENT GETNAME");

    /* HELLO 3 SETNAME, then back to 2 */
    raw_cmd(r, "HELLO 3 SETNAME conn-a");
    v = raw_reply(r);
    assert_int_equal(v->type, '%');
    rv_free(v);
    RAW(r, "$6\r\nconn-a\r\n", "CLIENT GETNAME");
    raw_cmd(r, "HELLO 3 SETNAME %s", "bad name");
    v = raw_reply(r);
    assert_int_equal(v->type, '-');
    assert_string_equal(v->str, "ERR Client names cannot contain spaces, newlines or special characters.");
    rv_free(v);
    RAW(r, "-ERR Syntax error in HELLO option 'foo'\r\n", "HELLO 3 foo");
    RAW(r, "-ERR Syntax error in HELLO option 'SETNAME'\r\n", "HELLO 3 SETNAME");
    RAW(r, "-ERR Syntax error in HELLO option 'AUTH'\r\n", "HELLO 3 AUTH default");
    raw_cmd(r, "HELLO 2");
    v = raw_reply(r);
    assert_int_equal(v->type, '*');
    check_hello_fields(v, 2, id);
    rv_free(v);
    RAW(r, "$-1\r\n", "GET nosuchkey");

    /* AUTH inside HELLO when no password is set: default user with any
     * password is accepted (nopass) */
    raw_cmd(r, "HELLO 3 AUTH default whatever");
    v = raw_reply(r);
    assert_int_equal(v->type, '%');
    rv_free(v);
    raw_cmd(r, "HELLO 2 AUTH nosuchuser whatever");
    v = raw_reply(r);
    assert_int_equal(v->type, '-');
    assert_string_equal(v->str, "WRONGPASS invalid username-password pair or user is disabled.");
    rv_free(v);
    raw_close(r);
}

static void test_resp3_shapes(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "HELLO 3");
    rv_free(raw_reply(r));

    RAW(r, "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n", "CONFIG GET maxclients");
    RAW(r, "%0\r\n", "CONFIG GET nosuchparameter");
    RAW(r, "*1\r\n_\r\n", "COMMAND INFO nosuchcommand");
    RAW(r, "+OK\r\n", "SET a 1");
    RAW(r, ":1\r\n", "DBSIZE");

    /* CLIENT INFO and INFO are verbatim strings in RESP3 */
    raw_cmd(r, "CLIENT INFO");
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, '=');
    assert_true(strncmp(v->str, "txt:id=", 7) == 0);
    assert_true(v->str[v->len - 1] == '\n');
    rv_free(v);
    raw_cmd(r, "INFO server");
    v = raw_reply(r);
    assert_int_equal(v->type, '=');
    assert_true(strncmp(v->str, "txt:# Server\r\n", 14) == 0);
    rv_free(v);

    /* COMMAND DOCS: a map of maps */
    raw_cmd(r, "COMMAND DOCS get");
    v = raw_reply(r);
    assert_int_equal(v->type, '%');
    assert_int_equal(v->n, 2);
    assert_string_equal(v->elem[0]->str, "get");
    struct rv *d = v->elem[1];
    assert_int_equal(d->type, '%');
    assert_non_null(rv_map_get(d, "summary"));
    assert_string_equal(rv_map_get(d, "since")->str, "1.0.0");
    assert_string_equal(rv_map_get(d, "group")->str, "string");
    assert_string_equal(rv_map_get(d, "complexity")->str, "O(1)");
    struct rv *args = rv_map_get(d, "arguments");
    assert_non_null(args);
    assert_int_equal(args->type, '*');
    assert_int_equal(args->n, 1);
    assert_int_equal(args->elem[0]->type, '%');
    assert_string_equal(rv_map_get(args->elem[0], "name")->str, "key");
    assert_string_equal(rv_map_get(args->elem[0], "type")->str, "key");
    rv_free(v);

    /* COMMAND INFO flags are a set in RESP3 */
    raw_cmd(r, "COMMAND INFO get");
    v = raw_reply(r);
    assert_int_equal(v->type, '*');
    assert_int_equal(v->n, 1);
    struct rv *e = v->elem[0];
    assert_int_equal(e->type, '*');
    assert_true(e->n >= 7);
    assert_string_equal(e->elem[0]->str, "get");
    assert_int_equal(e->elem[1]->integer, 2);
    assert_int_equal(e->elem[2]->type, '~');
    assert_int_equal(e->elem[6]->type, '~');
    rv_free(v);

    raw_cmd(r, "TIME");
    v = raw_reply(r);
    assert_int_equal(v->type, '*');
    assert_int_equal(v->n, 2);
    assert_int_equal(v->elem[0]->type, '$');
    rv_free(v);
    raw_close(r);
}

static void test_auth_without_password(void **state)
{
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR AUTH <password> called without any password configured for the default user. "
           "Are you sure your configuration is correct?", "AUTH foo");
    /* two-argument AUTH checks the ACL user: default is nopass */
    OK(c, "AUTH default anything");
    ERR(c, "WRONGPASS invalid username-password pair or user is disabled.", "AUTH someone foo");
    ERR(c, "ERR wrong number of arguments for 'auth' command", "AUTH");
    ERR(c, "ERR syntax error", "AUTH a b c");
}

static void test_config_requirepass_runtime(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG SET requirepass s3cret");
    expect_bulks(cmd(c, "CONFIG GET requirepass"), 2, "requirepass", "s3cret");
    /* the existing connection stays authenticated */
    STATUS(c, "PONG", "PING");
    redisContext *c2 = h_connect(&FIX(state)->srv);
    ERR(c2, "NOAUTH Authentication required.", "PING");
    ERR(c2, "NOAUTH Authentication required.", "GET a");
    ERR(c2, "WRONGPASS invalid username-password pair or user is disabled.", "AUTH wrong");
    OK(c2, "AUTH s3cret");
    STATUS(c2, "PONG", "PING");
    redisFree(c2);
    OK(c, "CONFIG SET requirepass %s", "");
    c2 = h_connect(&FIX(state)->srv);
    STATUS(c2, "PONG", "PING");
    redisFree(c2);
}

static long long client_id(redisContext *c)
{
    redisReply *r = cmd(c, "CLIENT ID");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long id = r->integer;
    freeReplyObject(r);
    return id;
}

/* Value of field name= in a CLIENT INFO line (malloc'd) */
static char *client_field(const char *line, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=", name);
    const char *p = strstr(line, key);
    if (!p && strncmp(line, key + 1, strlen(key) - 1) == 0)
        p = line - 1;
    if (!p) return NULL;
    p += strlen(key);
    size_t n = strcspn(p, " \r\n");
    char *o = malloc(n + 1);
    memcpy(o, p, n);
    o[n] = 0;
    return o;
}

static void test_client_basics(void **state)
{
    redisContext *c = FIX(state)->c;
    long long id = client_id(c);
    assert_true(id > 0);
    redisContext *c2 = h_connect(&FIX(state)->srv);
    long long id2 = client_id(c2);
    assert_true(id2 > id);
    assert_int_equal(client_id(c), id);

    NIL(c, "CLIENT GETNAME");
    OK(c, "CLIENT SETNAME alpha");
    BULK(c, "alpha", "CLIENT GETNAME");
    ERR(c, "ERR Client names cannot contain spaces, newlines or special characters.",
        "CLIENT SETNAME %s", "a b");
    ERR(c, "ERR Client names cannot contain spaces, newlines or special characters.",
        "CLIENT SETNAME %s", "a\nb");
    BULK(c, "alpha", "CLIENT GETNAME");
    OK(c, "CLIENT SETNAME %s", "");
    NIL(c, "CLIENT GETNAME");
    OK(c, "CLIENT SETNAME alpha");
    OK(c, "SELECT 3");

    redisReply *r = cmd(c, "CLIENT INFO");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char idstr[32];
    snprintf(idstr, sizeof idstr, "%lld", id);
    char *f = client_field(r->str, "id");
    assert_non_null(f); assert_string_equal(f, idstr); free(f);
    f = client_field(r->str, "addr");
    assert_non_null(f); assert_true(strncmp(f, "127.0.0.1:", 10) == 0); free(f);
    f = client_field(r->str, "laddr");
    char laddr[64];
    snprintf(laddr, sizeof laddr, "127.0.0.1:%d", FIX(state)->srv.port);
    assert_non_null(f); assert_string_equal(f, laddr); free(f);
    f = client_field(r->str, "name");
    assert_non_null(f); assert_string_equal(f, "alpha"); free(f);
    f = client_field(r->str, "db");
    assert_non_null(f); assert_string_equal(f, "3"); free(f);
    f = client_field(r->str, "cmd");
    assert_non_null(f); assert_string_equal(f, "client|info"); free(f);
    f = client_field(r->str, "resp");
    assert_non_null(f); assert_string_equal(f, "2"); free(f);
    for (const char *k = "fd\0age\0idle\0flags\0multi\0qbuf\0obl\0oll\0omem\0tot-mem\0events\0user\0";
         *k; k += strlen(k) + 1) {
        f = client_field(r->str, k);
        if (!f) h_fail("CLIENT INFO has no %s= field: %s", k, r->str);
        free(f);
    }
    /* exactly one line */
    assert_ptr_equal(strchr(r->str, '\n'), r->str + r->len - 1);
    freeReplyObject(r);

    /* CLIENT LIST: one line per connection, ours among them */
    OK(c2, "CLIENT SETNAME beta");
    r = cmd(c, "CLIENT LIST");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    int found = 0, lines = 0;
    for (char *line = r->str; line && *line; ) {
        char *nl = strchr(line, '\n');
        lines++;
        char *fid = client_field(line, "id"), *fname = client_field(line, "name");
        if (fid && atoll(fid) == id) { found++; assert_string_equal(fname, "alpha"); }
        if (fid && atoll(fid) == id2) { found++; assert_string_equal(fname, "beta"); }
        free(fid);
        free(fname);
        line = nl ? nl + 1 : NULL;
    }
    assert_int_equal(found, 2);
    assert_true(lines >= 2);
    freeReplyObject(r);

    /* CLIENT LIST ID */
    r = cmd(c, "CLIENT LIST ID %lld", id2);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    f = client_field(r->str, "id");
    snprintf(idstr, sizeof idstr, "%lld", id2);
    assert_non_null(f); assert_string_equal(f, idstr); free(f);
    assert_ptr_equal(strchr(r->str, '\n'), r->str + r->len - 1);
    freeReplyObject(r);
    BULK(c, "", "CLIENT LIST ID 999999999");

    ERR(c, "ERR unknown subcommand 'foo'. Try CLIENT HELP.", "CLIENT foo");
    ERR(c, "ERR wrong number of arguments for 'client' command", "CLIENT");
    ERR(c, "ERR wrong number of arguments for 'client|setname' command", "CLIENT SETNAME");
    ERR(c, "ERR wrong number of arguments for 'client|getname' command", "CLIENT GETNAME x");
    OK(c, "CLIENT NO-EVICT on");
    OK(c, "CLIENT NO-EVICT off");
    ERR(c, "ERR syntax error", "CLIENT NO-EVICT maybe");
    redisFree(c2);
}

/* tot-mem of the client connected from local port `port` (-1: not listed) */
static long long tot_mem_of_port(redisContext *c, int port)
{
    char key[64];
    snprintf(key, sizeof key, "addr=127.0.0.1:%d ", port);
    redisReply *r = cmd(c, "CLIENT LIST");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    long long mem = -1;
    const char *line = strstr(r->str, key);
    if (line) {
        const char *t = strstr(line, " tot-mem=");
        assert_non_null(t);
        mem = atoll(t + 9);
    }
    freeReplyObject(r);
    return mem;
}

static int local_port(int fd)
{
    struct sockaddr_in a;
    socklen_t n = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    return ntohs(a.sin_port);
}

/* A client that received a reply and then went quiet gives its output
 * buffer back (client_cron): its tot-mem comes down to that of a
 * connection that never sent anything. Bounded by polls, not by time. */
static void test_idle_output_buffer(void **state)
{
    redisContext *c = FIX(state)->c;
    struct raw *quiet = raw_connect(&FIX(state)->srv);
    struct raw *pinged = raw_connect(&FIX(state)->srv);
    raw_cmd(pinged, "PING");
    raw_expect(pinged, "+PONG\r\n");
    int quiet_port = local_port(quiet->fd), pinged_port = local_port(pinged->fd);
    long long bare = -1, mem = -1;
    for (int i = 0; i < 50 && bare < 0; i++) {   /* the accept may still be on its way */
        bare = tot_mem_of_port(c, quiet_port);
        if (bare < 0) usleep(20 * 1000);
    }
    assert_true(bare > 0);
    for (int i = 0; i < 200; i++) {
        mem = tot_mem_of_port(c, pinged_port);
        assert_true(mem >= bare);
        if (mem == bare) break;
        usleep(50 * 1000);
    }
    if (mem != bare) h_fail("a quiet client's tot-mem stays at %lld, a fresh one's is %lld", mem, bare);
    /* and it answers as before: its next reply takes a buffer again */
    raw_cmd(pinged, "ECHO %s", "again");
    raw_expect(pinged, "$5\r\nagain\r\n");
    raw_close(quiet);
    raw_close(pinged);
}

static void test_client_kill(void **state)
{
    struct server *s = &FIX(state)->srv;
    redisContext *c = FIX(state)->c;
    long long self = client_id(c);

    /* by ID */
    struct raw *a = raw_connect(s);
    long long ida = raw_int(a, "CLIENT ID");
    INT(c, 1, "CLIENT KILL ID %lld", ida);
    assert_true(raw_read_to_close(a, 5000));
    raw_close(a);
    INT(c, 0, "CLIENT KILL ID %lld", ida);
    INT(c, 0, "CLIENT KILL ID 999999999");
    ERR(c, "ERR client-id should be greater than 0", "CLIENT KILL ID x");
    ERR(c, "ERR client-id should be greater than 0", "CLIENT KILL ID 0");

    /* by ADDR (new style) and by old-style addr */
    for (int style = 0; style < 2; style++) {
        struct raw *b = raw_connect(s);
        long long idb = raw_int(b, "CLIENT ID");
        redisReply *r = cmd(c, "CLIENT LIST ID %lld", idb);
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        char *addr = client_field(r->str, "addr");
        assert_non_null(addr);
        freeReplyObject(r);
        if (style == 0)
            INT(c, 1, "CLIENT KILL ADDR %s", addr);
        else
            OK(c, "CLIENT KILL %s", addr);
        assert_true(raw_read_to_close(b, 5000));
        raw_close(b);
        if (style == 0)
            INT(c, 0, "CLIENT KILL ADDR %s", addr);
        else
            ERR(c, "ERR No such client", "CLIENT KILL %s", addr);
        free(addr);
    }
    ERR(c, "ERR No such client", "CLIENT KILL 1.2.3.4:5");
    ERR(c, "ERR syntax error", "CLIENT KILL foo bar");
    ERR(c, "ERR wrong number of arguments for 'client|kill' command", "CLIENT KILL");

    /* SKIPME: by default a client does not kill itself */
    INT(c, 0, "CLIENT KILL ID %lld", self);
    STATUS(c, "PONG", "PING");
    struct raw *d = raw_connect(s);
    long long idd = raw_int(d, "CLIENT ID");
    raw_cmd(d, "CLIENT KILL ID %lld SKIPME no", idd);
    raw_expect_close(d, ":1\r\n");
    raw_close(d);
    INT(c, 0, "CLIENT KILL ID %lld", idd);
}

static void test_client_reply(void **state)
{
    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_cmd(r, "CLIENT REPLY OFF");
    raw_cmd(r, "SET r 1");
    raw_cmd(r, "GET r");
    raw_cmd(r, "CLIENT REPLY ON");
    raw_expect(r, "+OK\r\n");
    RAW(r, "$1\r\n1\r\n", "GET r");
    raw_cmd(r, "CLIENT REPLY SKIP");
    raw_cmd(r, "INCR r");
    raw_cmd(r, "INCR r");
    raw_expect(r, ":3\r\n");
    RAW(r, "-ERR syntax error\r\n", "CLIENT REPLY foo");
    raw_close(r);
}

static void test_client_setinfo(void **state)
{
    SKIP_ON_REDIS();   /* CLIENT SETINFO arrived in Redis 7.2 */
    redisContext *c = FIX(state)->c;
    OK(c, "CLIENT SETINFO LIB-NAME mylib");
    OK(c, "CLIENT SETINFO lib-ver 1.2.3");
    redisReply *r = cmd(c, "CLIENT INFO");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char *f = client_field(r->str, "lib-name");
    assert_non_null(f); assert_string_equal(f, "mylib"); free(f);
    f = client_field(r->str, "lib-ver");
    assert_non_null(f); assert_string_equal(f, "1.2.3"); free(f);
    freeReplyObject(r);
    ERR(c, "ERR LIB-NAME cannot contain spaces, newlines or special characters.",
        "CLIENT SETINFO LIB-NAME %s", "my lib");
    ERR(c, "ERR Unrecognized option 'foo'", "CLIENT SETINFO foo bar");
    ERR(c, "ERR wrong number of arguments for 'client|setinfo' command", "CLIENT SETINFO lib-name");
    OK(c, "CLIENT SETINFO lib-name %s", "");
    r = cmd(c, "CLIENT INFO");
    f = client_field(r->str, "lib-name");
    assert_non_null(f); assert_string_equal(f, ""); free(f);
    freeReplyObject(r);
}

static void test_command(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "COMMAND COUNT");
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long count = r->integer;
    freeReplyObject(r);
    assert_true(count >= 40);
    r = cmd(c, "COMMAND");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal((long long)r->elements, count);
    /* every entry: name, arity, flags, first, last, step, acl categories, ... */
    bool seen_get = false, seen_set = false;
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        assert_int_equal(e->type, REDIS_REPLY_ARRAY);
        assert_true(e->elements >= 7);
        assert_int_equal(e->element[0]->type, REDIS_REPLY_STRING);
        assert_int_equal(e->element[1]->type, REDIS_REPLY_INTEGER);
        assert_int_equal(e->element[2]->type, REDIS_REPLY_ARRAY);
        if (strcmp(e->element[0]->str, "get") == 0) seen_get = true;
        if (strcmp(e->element[0]->str, "set") == 0) seen_set = true;
    }
    assert_true(seen_get && seen_set);
    freeReplyObject(r);

    r = cmd(c, "COMMAND INFO get set nosuchcommand");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 3);
    redisReply *g = r->element[0];
    assert_int_equal(g->type, REDIS_REPLY_ARRAY);
    assert_true(g->elements >= 10);
    assert_string_equal(g->element[0]->str, "get");
    assert_int_equal(g->element[1]->integer, 2);
    redisReply *fl = g->element[2];
    assert_int_equal(fl->elements, 2);
    assert_int_equal(fl->element[0]->type, REDIS_REPLY_STATUS);
    assert_string_equal(fl->element[0]->str, "readonly");
    assert_string_equal(fl->element[1]->str, "fast");
    assert_int_equal(g->element[3]->integer, 1);
    assert_int_equal(g->element[4]->integer, 1);
    assert_int_equal(g->element[5]->integer, 1);
    redisReply *acl = g->element[6];
    assert_int_equal(acl->elements, 3);
    assert_int_equal(acl->element[0]->type, REDIS_REPLY_STATUS);
    assert_string_equal(acl->element[0]->str, "@read");
    assert_string_equal(acl->element[1]->str, "@string");
    assert_string_equal(acl->element[2]->str, "@fast");
    redisReply *s = r->element[1];
    assert_string_equal(s->element[0]->str, "set");
    assert_int_equal(s->element[1]->integer, -3);
    bool write = false, denyoom = false;
    for (size_t i = 0; i < s->element[2]->elements; i++) {
        write |= strcmp(s->element[2]->element[i]->str, "write") == 0;
        denyoom |= strcmp(s->element[2]->element[i]->str, "denyoom") == 0;
    }
    assert_true(write && denyoom);
    assert_int_equal(r->element[2]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);

    /* MSET keys: first 1, last -1, step 2 */
    r = cmd(c, "COMMAND INFO mset");
    assert_int_equal(r->element[0]->element[3]->integer, 1);
    assert_int_equal(r->element[0]->element[4]->integer, -1);
    assert_int_equal(r->element[0]->element[5]->integer, 2);
    freeReplyObject(r);

    /* COMMAND DOCS (RESP2: flat name/doc pairs) */
    r = cmd(c, "COMMAND DOCS get");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, "get");
    redisReply *d = r->element[1];
    assert_int_equal(d->type, REDIS_REPLY_ARRAY);
    const char *want[][2] = { { "since", "1.0.0" }, { "group", "string" }, { "complexity", "O(1)" } };
    for (size_t k = 0; k < 3; k++) {
        bool ok = false;
        for (size_t i = 0; i + 1 < d->elements; i += 2)
            if (strcmp(d->element[i]->str, want[k][0]) == 0) {
                assert_string_equal(d->element[i + 1]->str, want[k][1]);
                ok = true;
            }
        assert_true(ok);
    }
    bool has_summary = false;
    for (size_t i = 0; i + 1 < d->elements; i += 2)
        if (strcmp(d->element[i]->str, "summary") == 0)
            has_summary = d->element[i + 1]->len > 0;
    assert_true(has_summary);
    freeReplyObject(r);
    expect_empty_array(cmd(c, "COMMAND DOCS nosuchcommand"));
    /* all docs: nested deeper than hiredis 0.14 parses, so read it raw */
    struct raw *rr = raw_connect(&FIX(state)->srv);
    raw_cmd(rr, "COMMAND DOCS");
    struct rv *v = raw_reply(rr);
    assert_int_equal(v->type, '*');
    assert_int_equal((long long)v->n, 2 * count);
    rv_free(v);
    raw_close(rr);
    ERR(c, "ERR unknown subcommand 'foo'. Try COMMAND HELP.", "COMMAND foo");
}

static void config_get_expect(redisContext *c, const char *name, const char *value)
{
    expect_bulks(cmd(c, "CONFIG GET %s", name), 2, name, value);
}

static void test_config(void **state)
{
    redisContext *c = FIX(state)->c;
    char port[16];
    snprintf(port, sizeof port, "%d", FIX(state)->srv.port);
    config_get_expect(c, "port", port);
    config_get_expect(c, "bind", "127.0.0.1");
    config_get_expect(c, "databases", "16");
    config_get_expect(c, "maxclients", "10000");
    config_get_expect(c, "timeout", "0");
    config_get_expect(c, "requirepass", "");
    config_get_expect(c, "proto-max-bulk-len", "536870912");
    config_get_expect(c, "appendonly", "no");
    /* the compact-encoding thresholds of redis-server 7.0 */
    config_get_expect(c, "hash-max-listpack-entries", "512");
    config_get_expect(c, "hash-max-listpack-value", "64");
    config_get_expect(c, "zset-max-listpack-entries", "128");
    config_get_expect(c, "zset-max-listpack-value", "64");
    config_get_expect(c, "set-max-intset-entries", "512");
    config_get_expect(c, "list-max-listpack-size", "-2");
    config_get_expect(c, "MAXCLIENTS", "10000");   /* case-insensitive; Redis 7.0 echoes an exact name as sent */
    redisReply *r = cmd(c, "CONFIG GET save");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    freeReplyObject(r);
    expect_empty_array(cmd(c, "CONFIG GET nosuchparameter"));

    /* several names: pairs in any order */
    r = cmd(c, "CONFIG GET maxclients timeout");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 4);
    int seen = 0;
    for (size_t i = 0; i < 4; i += 2) {
        if (strcmp(r->element[i]->str, "maxclients") == 0) {
            assert_string_equal(r->element[i + 1]->str, "10000");
            seen |= 1;
        } else if (strcmp(r->element[i]->str, "timeout") == 0) {
            assert_string_equal(r->element[i + 1]->str, "0");
            seen |= 2;
        }
    }
    assert_int_equal(seen, 3);
    freeReplyObject(r);

    /* glob pattern */
    r = cmd(c, "CONFIG GET max*");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_true(r->elements >= 2 && r->elements % 2 == 0);
    bool mc = false;
    for (size_t i = 0; i < r->elements; i += 2) {
        assert_true(strncmp(r->element[i]->str, "max", 3) == 0);
        mc |= strcmp(r->element[i]->str, "maxclients") == 0;
    }
    assert_true(mc);
    freeReplyObject(r);

    OK(c, "CONFIG SET maxclients 500");
    config_get_expect(c, "maxclients", "500");
    OK(c, "CONFIG SET timeout 300");
    config_get_expect(c, "timeout", "300");
    OK(c, "CONFIG SET maxclients 600 timeout 5");
    config_get_expect(c, "maxclients", "600");
    config_get_expect(c, "timeout", "5");
    OK(c, "CONFIG SET proto-max-bulk-len 2mb");
    config_get_expect(c, "proto-max-bulk-len", "2097152");
    OK(c, "CONFIG SET proto-max-bulk-len 536870912");
    OK(c, "CONFIG SET maxclients 10000 timeout 0");
    config_get_expect(c, "timeout", "0");

    ERR(c, "ERR Unknown option or number of arguments for CONFIG SET - 'nosuchparameter'",
        "CONFIG SET nosuchparameter 1");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer",
        "CONFIG SET maxclients abc");
    ERR(c, "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive",
        "CONFIG SET timeout -1");
    ERR(c, "ERR wrong number of arguments for 'config|set' command", "CONFIG SET maxclients");
    ERR(c, "ERR wrong number of arguments for 'config|get' command", "CONFIG GET");
    ERR(c, "ERR unknown subcommand 'foo'. Try CONFIG HELP.", "CONFIG foo");
    config_get_expect(c, "maxclients", "10000");

    /* RESETSTAT */
    for (int i = 0; i < 20; i++) STATUS(c, "PONG", "PING");
    assert_true(info_ll(c, "stats", "total_commands_processed") > 20);
    OK(c, "CONFIG RESETSTAT");
    long long n = info_ll(c, "stats", "total_commands_processed");
    assert_true(n >= 0 && n <= 3);
}

static void test_info(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "INFO");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    const char *sections[] = { "# Server\r\n", "# Clients\r\n", "# Memory\r\n", "# Persistence\r\n",
                               "# Stats\r\n", "# Replication\r\n", "# CPU\r\n", "# Keyspace\r\n" };
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (!strstr(r->str, sections[i])) h_fail("INFO lacks %s", sections[i]);
    const char *fields[] = { "redis_version", "tcp_port", "uptime_in_seconds", "connected_clients",
                             "used_memory", "used_memory_human", "maxmemory", "total_connections_received",
                             "total_commands_processed", "instantaneous_ops_per_sec", "role",
                             "used_cpu_sys", "used_cpu_user", "rdb_changes_since_last_save",
                             "keyspace_hits", "keyspace_misses", "expired_keys", "process_id" };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char *v = info_field(r->str, fields[i]);
        if (!v) h_fail("INFO lacks field %s", fields[i]);
        free(v);
    }
    char *v = info_field(r->str, "tcp_port");
    assert_int_equal(atoi(v), FIX(state)->srv.port);
    free(v);
    v = info_field(r->str, "role");
    assert_string_equal(v, "master");
    free(v);
    v = info_field(r->str, "process_id");
    assert_int_equal(atoi(v), FIX(state)->srv.pid);
    free(v);
    freeReplyObject(r);

    assert_true(info_ll(c, "clients", "connected_clients") >= 1);
    assert_true(info_ll(c, "memory", "used_memory") > 0);

    /* one section only */
    r = cmd(c, "INFO server");
    assert_non_null(strstr(r->str, "# Server\r\n"));
    assert_null(strstr(r->str, "# Clients"));
    freeReplyObject(r);
    r = cmd(c, "INFO SERVER clients");
    assert_non_null(strstr(r->str, "# Server\r\n"));
    assert_non_null(strstr(r->str, "# Clients\r\n"));
    assert_null(strstr(r->str, "# Memory"));
    freeReplyObject(r);
    r = cmd(c, "INFO nosuchsection");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_int_equal(r->len, 0);
    freeReplyObject(r);
    r = cmd(c, "INFO all");
    assert_non_null(strstr(r->str, "# Keyspace\r\n"));
    freeReplyObject(r);

    /* keyspace */
    r = cmd(c, "INFO keyspace");
    assert_string_equal(r->str, "# Keyspace\r\n");
    freeReplyObject(r);
    OK(c, "SET a 1");
    OK(c, "SET b 2 EX 1000");
    OK(c, "SET c 3");
    OK(c, "SELECT 5");
    OK(c, "SET x 1");
    OK(c, "SELECT 0");
    r = cmd(c, "INFO keyspace");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_true(strncmp(r->str, "# Keyspace\r\n", 12) == 0);
    if (!has_line_prefix(r->str, "db0:keys=3,expires=1,avg_ttl="))
        h_fail("INFO keyspace: %s", r->str);
    if (!has_line_prefix(r->str, "db5:keys=1,expires=0,avg_ttl=0\r\n"))
        h_fail("INFO keyspace: %s", r->str);
    v = info_field(r->str, "db0");
    assert_non_null(v);
    const char *avg = strstr(v, "avg_ttl=") + 8;
    assert_true(strlen(avg) > 0 && strspn(avg, "0123456789") == strlen(avg));
    assert_true(atoll(avg) <= 1000000);
    free(v);
    assert_null(strstr(r->str, "db1:"));
    freeReplyObject(r);

    /* keyspace hits and misses */
    OK(c, "CONFIG RESETSTAT");
    BULK(c, "1", "GET a");
    NIL(c, "GET nosuch");
    assert_int_equal(info_ll(c, "stats", "keyspace_hits"), 1);
    assert_int_equal(info_ll(c, "stats", "keyspace_misses"), 1);
}

static void test_info_ringkv_section(void **state)
{
    SKIP_ON_REDIS();   /* ringkv's own section */
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "INFO ringkv");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    if (strncmp(r->str, "# ringkv\r\n", 10) != 0 || r->len < 20)
        h_fail("INFO ringkv: %s", r->str);
    freeReplyObject(r);
    r = cmd(c, "INFO everything");
    assert_non_null(strstr(r->str, "# ringkv\r\n"));
    freeReplyObject(r);
    /* threads is a config of ringkv's own */
    char n[16];
    snprintf(n, sizeof n, "%d", h_threads());
    config_get_expect(c, "threads", n);
}

/* A figure of INFO ringkv's thread lines: the largest (most) or the sum
 * over the threads; -1 when no line has it. */
static long long thread_figure(redisContext *c, const char *name, bool most)
{
    char key[64];
    snprintf(key, sizeof key, "%s=", name);
    redisReply *r = cmd(c, "INFO ringkv");
    long long out = -1;
    for (const char *p = r->str; (p = strstr(p, key)) != NULL; p++) {
        long long v = atoll(p + strlen(key));
        out = out < 0 ? v : most ? (v > out ? v : out) : out + v;
    }
    freeReplyObject(r);
    return out;
}

/* A long iteration is counted on the wall clock and, while the latency
 * monitor is on and it comes soon after another long one, on the thread's
 * own CPU clock, which tells the server's work from time the machine gave
 * to others. DEBUG SLEEP holds the loop without using the CPU, as a host
 * stealing it would: its iterations are long on the wall only. A busy
 * script is long on both. Each command follows a sleep of the same
 * connection, a round trip (an iteration or two) after it, so it is
 * measured. */
static void test_iteration_cpu_clock(void **state)
{
    SKIP_ON_REDIS();   /* ringkv's own figures */
    redisContext *c = FIX(state)->c;
    OK(c, "DEBUG SLEEP 0.01");   /* long, with the monitor off: no iteration after it is watched */
    long long measured0 = thread_figure(c, "iterations_cpu_measured", false);
    OK(c, "DEBUG SLEEP 0.01");
    OK(c, "DEBUG SLEEP 0.01");
    assert_int_equal(thread_figure(c, "iterations_cpu_measured", false), measured0);

    OK(c, "CONFIG SET latency-monitor-threshold 1000");
    OK(c, "DEBUG SLEEP 0.01");
    long long wall0 = thread_figure(c, "iterations_over_8ms", false);
    measured0 = thread_figure(c, "iterations_cpu_measured", false);
    long long cpu0 = thread_figure(c, "iterations_cpu_over_2ms", false);
    for (int i = 0; i < 4; i++) OK(c, "DEBUG SLEEP 0.01");
    long long wall = thread_figure(c, "iterations_over_8ms", false) - wall0;
    long long measured = thread_figure(c, "iterations_cpu_measured", false) - measured0;
    if (wall < 4) h_fail("4 sleeps of 10 ms made %lld iterations over 8 ms", wall);
    if (measured < 3) h_fail("of 4 sleeps back to back, %lld were measured on the CPU clock", measured);
    assert_int_equal(thread_figure(c, "iterations_cpu_over_2ms", false), cpu0);

    /* tens of millions of steps: far over 2 ms of CPU on any machine */
    INT(c, 20000000, "EVAL %s 0", "local i = 0 while i < 20000000 do i = i + 1 end return i");
    OK(c, "DEBUG SLEEP 0.01");
    INT(c, 20000000, "EVAL %s 0", "local i = 0 while i < 20000000 do i = i + 1 end return i");
    assert_true(thread_figure(c, "iterations_cpu_over_2ms", false) - cpu0 >= 1);
    assert_true(thread_figure(c, "iteration_max_cpu_us", true) > 2000);
    OK(c, "CONFIG SET latency-monitor-threshold 0");
    OK(c, "CONFIG RESETSTAT");   /* zeroes them with the other counters */
    assert_int_equal(thread_figure(c, "iterations_cpu_measured", false), 0);
    assert_int_equal(thread_figure(c, "iteration_max_cpu_us", true), 0);
    assert_int_equal(thread_figure(c, "iterations_cpu_over_250us", false), 0);
}

/* The minimum wait that gathers requests (ring_batch_wait_us) follows how
 * often each client talks: one client going round alone keeps it small;
 * many connections going round in turn, each waiting for the others, make
 * it grow with their number. Bounded by rounds, not time: the windows are
 * the server's cron ticks, so the loops go on until a window has seen the
 * traffic (or give up after many rounds). */
static void test_batch_wait_follows_connections(void **state)
{
    SKIP_ON_REDIS();   /* ringkv's own figure */
    enum { CONNS = 200 };
    h_raise_nofile(CONNS + 64);
    redisContext *c = FIX(state)->c;
    long long alone = -1;
    for (int i = 0; i < 20000 && alone < 0; i++) {
        redisReply *r = cmd(c, "PING");   /* one client, back to back */
        freeReplyObject(r);
        if (i >= 2000 && i % 500 == 0) {
            long long v = thread_figure(c, "batch_wait_us", true);
            if (v >= 0 && v < 100) alone = v;
        }
    }
    if (alone < 0) h_fail("a lone client's batch wait never fell under 100 us");

    struct raw *conns[CONNS];
    for (int i = 0; i < CONNS; i++) conns[i] = raw_connect(&FIX(state)->srv);
    long long many = -1;
    for (int round = 0; round < 2000 && many < 0; round++) {
        for (int i = 0; i < CONNS; i++) raw_cmd(conns[i], "PING");
        for (int i = 0; i < CONNS; i++) raw_expect(conns[i], "+PONG\r\n");
        if (round >= 20 && round % 10 == 0) {
            long long v = thread_figure(c, "batch_wait_us", true);
            if (v > 4 * alone + 8) many = v;
        }
    }
    if (many < 0) h_fail("%d connections in turn never raised the batch wait above a lone client's %lld us",
                         CONNS, alone);
    assert_true(many <= 1000);   /* BATCH_WAIT_MAX_US */
    for (int i = 0; i < CONNS; i++) raw_close(conns[i]);
}

/* Thousands of connections sending at once: a wait that gathers
 * completions must not take more receives than the ring has buffers. It
 * once waited for as many completions as it had just submitted (sends and
 * receive re-arms) on top of its batch; with thousands of clients that ran
 * the ring dry, every -ENOBUFS re-armed a receive for the next wait to wait
 * for, and the server spun on them. budget: io-iteration-budget-us for the
 * rounds (NULL: as configured). */
static void keep_buffers(void **state, const char *budget)
{
    SKIP_ON_REDIS();   /* ringkv's own figure */
    enum { CONNS = 2000, ROUNDS = 30 };
    if (h_raise_nofile(CONNS + 64) < CONNS + 64) skip();
    redisContext *c = FIX(state)->c;
    if (budget) OK(c, "CONFIG SET io-iteration-budget-us %s", budget);
    struct raw **conns = calloc(CONNS, sizeof *conns);
    for (int i = 0; i < CONNS; i++) conns[i] = raw_connect(&FIX(state)->srv);
    long long before = thread_figure(c, "buffer_ring_exhausted", false);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < CONNS; i++) raw_cmd(conns[i], "PING");
        for (int i = 0; i < CONNS; i++) raw_expect(conns[i], "+PONG\r\n");
    }
    long long ran_dry = thread_figure(c, "buffer_ring_exhausted", false) - before;
    for (int i = 0; i < CONNS; i++) raw_close(conns[i]);
    free(conns);
    if (budget) OK(c, "CONFIG SET io-iteration-budget-us 500");
    if (ran_dry != 0) h_fail("%lld receives found no buffer (%d connections, one PING each at a time)", ran_dry, CONNS);
}

static void test_many_connections_keep_buffers(void **state) { keep_buffers(state, NULL); }

/* The same with one completion per iteration: the completions left in the
 * ring hold their buffers, and an iteration that took more receives before
 * handling them ran the ring dry (so did a worker preempted for longer than
 * its budget). */
static void test_many_connections_keep_buffers_sliced(void **state) { keep_buffers(state, "0"); }

static void test_dbsize_flush(void **state)
{
    redisContext *c = FIX(state)->c;
    INT(c, 0, "DBSIZE");
    for (int i = 0; i < 100; i++) OK(c, "SET key:%d v", i);
    INT(c, 100, "DBSIZE");
    OK(c, "SELECT 1");
    OK(c, "SET other 1");
    INT(c, 1, "DBSIZE");
    OK(c, "FLUSHDB");
    INT(c, 0, "DBSIZE");
    OK(c, "SET other 1");
    OK(c, "SELECT 0");
    INT(c, 100, "DBSIZE");
    OK(c, "FLUSHDB SYNC");
    INT(c, 0, "DBSIZE");
    OK(c, "SET a 1");
    OK(c, "FLUSHDB ASYNC");
    INT(c, 0, "DBSIZE");
    OK(c, "SELECT 1");
    INT(c, 1, "DBSIZE");
    OK(c, "FLUSHALL");
    INT(c, 0, "DBSIZE");
    OK(c, "SET a 1");
    OK(c, "FLUSHALL ASYNC");
    INT(c, 0, "DBSIZE");
    OK(c, "FLUSHALL SYNC");
    ERR(c, "ERR syntax error", "FLUSHALL x");
    ERR(c, "ERR syntax error", "FLUSHDB x");
    ERR(c, "ERR wrong number of arguments for 'dbsize' command", "DBSIZE x");
}

static void test_time(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "TIME");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_int_equal(r->element[0]->type, REDIS_REPLY_STRING);
    assert_int_equal(r->element[1]->type, REDIS_REPLY_STRING);
    long long sec = atoll(r->element[0]->str), usec = atoll(r->element[1]->str);
    assert_true(llabs(sec - (long long)time(NULL)) <= 2);
    assert_true(usec >= 0 && usec < 1000000);
    freeReplyObject(r);
    ERR(c, "ERR wrong number of arguments for 'time' command", "TIME x");
}

static void test_debug(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "DEBUG SLEEP 0");
    OK(c, "DEBUG SLEEP 0.2");
    OK(c, "DEBUG POPULATE 1000");
    INT(c, 1000, "DBSIZE");
    BULK(c, "value:0", "GET key:0");
    BULK(c, "value:999", "GET key:999");
    NIL(c, "GET key:1000");
    /* prefix and size: value padded with zero bytes, existing keys kept */
    OK(c, "SET p:1 keep");
    OK(c, "DEBUG POPULATE 3 p 10");
    expect_bulk_len(cmd(c, "GET p:0"), "value:0\0\0\0", 10);
    BULK(c, "keep", "GET p:1");
    INT(c, 1003, "DBSIZE");
}

static void test_unknown_and_arity(void **state)
{
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR unknown command 'foo', with args beginning with: 'a' 'b' ", "foo a b");
    /* the name is quoted as sent */
    ERR(c, "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ", "FOO a b");
    ERR(c, "ERR unknown command 'foo', with args beginning with: ", "foo");
    ERR(c, "ERR unknown command 'nosuch', with args beginning with: 'x' ", "nosuch x");
    ERR(c, "ERR wrong number of arguments for 'get' command", "GET");
    ERR(c, "ERR wrong number of arguments for 'get' command", "GET a b");
    ERR(c, "ERR wrong number of arguments for 'set' command", "SET a");
    ERR(c, "ERR wrong number of arguments for 'del' command", "DEL");
    ERR(c, "ERR wrong number of arguments for 'mget' command", "MGET");
    ERR(c, "ERR wrong number of arguments for 'dbsize' command", "DBSIZE 1");
    /* the connection is still fine */
    OK(c, "SET a 1");
    BULK(c, "1", "GET a");

    struct raw *r = raw_connect(&FIX(state)->srv);
    raw_sends(r, "foo a b\r\n");
    raw_expect(r, "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
    raw_close(r);
}

/* ------------------------------------------------------------------ */
/* --requirepass                                                        */

static int setup_auth(void **state)
{
    static const char *const args[] = { "--requirepass", "p4ss", NULL };
    return h_group_setup_args(state, args);
}

static void test_requirepass(void **state)
{
    struct server *s = &FIX(state)->srv;
    struct raw *r = raw_connect(s);
    RAW(r, "-NOAUTH Authentication required.\r\n", "PING");
    RAW(r, "-NOAUTH Authentication required.\r\n", "SET a 1");
    RAW(r, "-NOAUTH Authentication required.\r\n", "CLIENT ID");
    /* Redis looks the command up before checking authentication */
    RAW(r, "-ERR unknown command 'nosuchcommand', with args beginning with: \r\n", "nosuchcommand");
    RAW(r, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
           "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
           "select the RESP protocol version at the same time\r\n", "HELLO 3");
    RAW(r, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH wrong");
    RAW(r, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH default wrong");
    RAW(r, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "HELLO 3 AUTH default wrong");
    RAW(r, "-NOAUTH Authentication required.\r\n", "GET a");
    RAW(r, "+OK\r\n", "AUTH p4ss");
    RAW(r, "+PONG\r\n", "PING");
    RAW(r, "+OK\r\n", "SET a 1");
    /* a wrong AUTH afterwards does not log the client out in Redis 7 */
    RAW(r, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH wrong");
    RAW(r, "$1\r\n1\r\n", "GET a");
    raw_close(r);

    /* AUTH user pass, and HELLO with AUTH */
    r = raw_connect(s);
    RAW(r, "+OK\r\n", "AUTH default p4ss");
    RAW(r, "$1\r\n1\r\n", "GET a");
    raw_close(r);
    r = raw_connect(s);
    raw_cmd(r, "HELLO 3 AUTH default p4ss SETNAME authed");
    struct rv *v = raw_reply(r);
    assert_int_equal(v->type, '%');
    assert_int_equal(rv_map_get(v, "proto")->integer, 3);
    rv_free(v);
    RAW(r, "$6\r\nauthed\r\n", "CLIENT GETNAME");
    RAW(r, "_\r\n", "GET nosuch");
    raw_close(r);

    /* QUIT is allowed before AUTH */
    r = raw_connect(s);
    raw_cmd(r, "QUIT");
    raw_expect_close(r, "+OK\r\n");
    raw_close(r);
    /* inline commands too */
    r = raw_connect(s);
    raw_sends(r, "GET a\r\n");
    raw_expect(r, "-NOAUTH Authentication required.\r\n");
    raw_sends(r, "AUTH p4ss\r\n");
    raw_expect(r, "+OK\r\n");
    raw_close(r);
}

/* ------------------------------------------------------------------ */
/* --databases, --timeout                                               */

static int setup_options(void **state)
{
    static const char *const args[] = { "--databases", "4", "--timeout", "1", NULL };
    return h_group_setup_args(state, args);
}

static void test_databases_option(void **state)
{
    redisContext *c = FIX(state)->c;
    expect_bulks(cmd(c, "CONFIG GET databases"), 2, "databases", "4");
    OK(c, "SELECT 3");
    ERR(c, "ERR DB index is out of range", "SELECT 4");
    ERR(c, "ERR DB index is out of range", "MOVE a 4");
    ERR(c, "ERR DB index is out of range", "SWAPDB 0 4");
}

static void test_idle_timeout(void **state)
{
    expect_bulks(cmd(FIX(state)->c, "CONFIG GET timeout"), 2, "timeout", "1");
    struct raw *idle = raw_connect(&FIX(state)->srv);
    RAW(idle, "+PONG\r\n", "PING");
    /* closed without a word once idle past the timeout */
    bool closed = raw_read_to_close(idle, 6000);
    assert_true(closed);
    assert_int_equal(idle->len - idle->pos, 0);
    raw_close(idle);
    /* a busy client is not closed */
    struct raw *busy = raw_connect(&FIX(state)->srv);
    for (int i = 0; i < 8; i++) {
        RAW(busy, "+PONG\r\n", "PING");
        h_sleep_ms(300);
    }
    raw_close(busy);
    /* back to no timeout (the fixture's connection has timed out meanwhile) */
    redisContext *c = h_connect(&FIX(state)->srv);
    OK(c, "CONFIG SET timeout 0");
    redisFree(c);
    idle = raw_connect(&FIX(state)->srv);
    RAW(idle, "+PONG\r\n", "PING");
    assert_false(raw_read_to_close(idle, 2500));
    RAW(idle, "+PONG\r\n", "PING");
    raw_close(idle);
}

/* ------------------------------------------------------------------ */
/* SHUTDOWN                                                             */

static void test_shutdown(void **state)
{
    struct server *s = &FIX(state)->srv;
    struct raw *r = raw_connect(s);
    RAW(r, "-ERR syntax error\r\n", "SHUTDOWN foo");
    raw_cmd(r, "SHUTDOWN NOSAVE");
    /* success: no reply, the connection just closes */
    assert_true(raw_read_to_close(r, 10000));
    assert_int_equal(r->len - r->pos, 0);
    raw_close(r);
    long long deadline = h_now_ms() + 10000;
    int st = 0;
    pid_t got = 0;
    while (h_now_ms() < deadline && (got = waitpid(s->pid, &st, WNOHANG)) == 0)
        h_sleep_ms(10);
    assert_int_equal(got, s->pid);
    s->pid = 0;   /* reaped here: nothing left for the teardown */
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        h_fail("server exit after SHUTDOWN: status 0x%x (log: %s)", st, s->log);
    const char *keep = getenv("RINGKV_TEST_KEEP_LOG");
    if (!(keep && *keep && strcmp(keep, "0") != 0))
        unlink(s->log);
}

int main(void)
{
    const struct CMUnitTest main_tests[] = {
        cmocka_unit_test_setup(test_ping, h_flushall),
        cmocka_unit_test_setup(test_echo, h_flushall),
        cmocka_unit_test_setup(test_quit, h_flushall),
        cmocka_unit_test_setup(test_select, h_flushall),
        cmocka_unit_test_setup(test_hello, h_flushall),
        cmocka_unit_test_setup(test_resp3_shapes, h_flushall),
        cmocka_unit_test_setup(test_auth_without_password, h_flushall),
        cmocka_unit_test_setup(test_config_requirepass_runtime, h_flushall),
        cmocka_unit_test_setup(test_client_basics, h_flushall),
        cmocka_unit_test_setup(test_idle_output_buffer, h_flushall),
        cmocka_unit_test_setup(test_batch_wait_follows_connections, h_flushall),
        cmocka_unit_test_setup(test_iteration_cpu_clock, h_flushall),
        cmocka_unit_test_setup(test_many_connections_keep_buffers, h_flushall),
        cmocka_unit_test_setup(test_many_connections_keep_buffers_sliced, h_flushall),
        cmocka_unit_test_setup(test_client_kill, h_flushall),
        cmocka_unit_test_setup(test_client_reply, h_flushall),
        cmocka_unit_test_setup(test_client_setinfo, h_flushall),
        cmocka_unit_test_setup(test_command, h_flushall),
        cmocka_unit_test_setup(test_config, h_flushall),
        cmocka_unit_test_setup(test_info, h_flushall),
        cmocka_unit_test_setup(test_info_ringkv_section, h_flushall),
        cmocka_unit_test_setup(test_dbsize_flush, h_flushall),
        cmocka_unit_test_setup(test_time, h_flushall),
        cmocka_unit_test_setup(test_debug, h_flushall),
        cmocka_unit_test_setup(test_unknown_and_arity, h_flushall),
    };
    const struct CMUnitTest auth_tests[] = {
        cmocka_unit_test_setup(test_requirepass, h_noop_setup),
    };
    const struct CMUnitTest option_tests[] = {
        cmocka_unit_test_setup(test_databases_option, h_flushall),
        cmocka_unit_test_setup(test_idle_timeout, h_flushall),
    };
    const struct CMUnitTest shutdown_tests[] = {
        cmocka_unit_test_setup(test_shutdown, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("conn", main_tests, h_group_setup, h_group_teardown);
    rc += cmocka_run_group_tests_name("conn_requirepass", auth_tests, setup_auth, h_group_teardown);
    rc += cmocka_run_group_tests_name("conn_options", option_tests, setup_options, h_group_teardown);
    rc += cmocka_run_group_tests_name("conn_shutdown", shutdown_tests, h_group_setup, h_group_teardown);
    return rc + h_failures();
}
