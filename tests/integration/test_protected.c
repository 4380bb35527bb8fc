/*
 * Protected mode and the protected commands.
 *
 * protected-mode: while it is on and the default user has no password,
 * a client that does not come from 127.0.0.1 or ::1 gets Redis's -DENIED
 * text and is closed (a rejected connection); a password, or
 * protected-mode no, lets it in. The server listens on 127.0.0.1 only, as
 * every test server does: the "non-loopback" client connects to it from a
 * local non-loopback address of this machine (its socket bound there
 * first), which the server sees as its peer. Without such an address those
 * tests are skipped.
 *
 * enable-debug-command / enable-module-command: DEBUG and MODULE
 * LOAD/LOADEX/UNLOAD refused with Redis's error under "no" (a rejected
 * call; inside MULTI the transaction is aborted), allowed under "local"
 * from loopback only, and under "yes". MODULE as a server without modules.
 *
 * The expected replies are Redis 7.0's (RINGKV_TEST_REDIS=1 runs them
 * against redis-server). No test looks at a duration.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DENIED \
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for " \
    "the default user. In this mode connections are only accepted from the loopback interface. If you want to " \
    "connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable " \
    "protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by " \
    "connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly " \
    "accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively " \
    "you can just disable the protected mode by editing the Redis configuration file, and setting the protected " \
    "mode option to 'no', and then restarting the server. 3) If you started the server manually just for " \
    "testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the " \
    "default user. NOTE: You only need to do one of the above things in order for the server to start accepting " \
    "connections from the outside.\r\n"

#define DEBUG_REFUSED \
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it " \
    "from a local connection, otherwise you need to set this option in the configuration file, and then " \
    "restart the server."
#define MODULE_REFUSED \
    "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it " \
    "from a local connection, otherwise you need to set this option in the configuration file, and then " \
    "restart the server."

/* ---- a client from a non-loopback address of this machine ---- */

/* The first IPv4 address of an interface that is up and not loopback, or
 * NULL when there is none. */
static const char *local_nonloopback(void) {
    static char addr[INET_ADDRSTRLEN];
    static int known = -1;
    if (known >= 0) return known ? addr : NULL;
    known = 0;
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0) return NULL;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if ((ntohl(a.s_addr) >> 24) == 127) continue;
        inet_ntop(AF_INET, &a, addr, sizeof addr);
        known = 1;
        break;
    }
    freeifaddrs(ifs);
    return known ? addr : NULL;
}

/* A connection to the server (on 127.0.0.1) from the non-loopback
 * address; skips the test when there is none or the kernel refuses. */
static int connect_outside(const struct server *s) {
    const char *src = local_nonloopback();
    if (!src) {
        print_message("[  SKIP    ] no non-loopback address on this machine\n");
        skip();
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in from = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
    inet_pton(AF_INET, src, &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons((uint16_t)s->port);
    if (bind(fd, (struct sockaddr *)&from, sizeof from) != 0 || connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
        print_message("[  SKIP    ] cannot connect from %s to 127.0.0.1: %s\n", src, strerror(errno));
        close(fd);
        skip();
    }
    return fd;
}

/* Everything the server sends until it closes the connection, or until
 * want_lines lines have come (0: until it closes); bounded in time. */
static char *read_reply(int fd, int want_lines, bool *closed) {
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    *closed = false;
    for (long long end = h_now_ms() + 5000; h_now_ms() < end;) {
        int lines = 0;
        for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
        if (want_lines && lines >= want_lines) break;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 100) <= 0) continue;
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n <= 0) {
            *closed = true;
            break;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

static void send_text(int fd, const char *text) {
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* An outside client is refused: the DENIED text, then the close. */
static void expect_denied(const struct server *s) {
    int fd = connect_outside(s);
    bool closed;
    char *got = read_reply(fd, 0, &closed);
    if (strcmp(got, DENIED) != 0) h_fail("expected the DENIED text, got '%s'", got);
    assert_true(closed);
    free(got);
    close(fd);
}

/* An outside client is served: text sent, the first reply line is want. */
static void expect_served(const struct server *s, const char *text, const char *want) {
    int fd = connect_outside(s);
    send_text(fd, text);
    bool closed;
    char *got = read_reply(fd, 1, &closed);
    if (strcmp(got, want) != 0) h_fail("sent '%s': expected '%s', got '%s'", text, want, got);
    free(got);
    close(fd);
}

/* ---- protected mode ---- */

static void test_protected_mode(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    redisReply *r = cmd(c, "CONFIG GET protected-mode");
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[1]->str, "yes");
    freeReplyObject(r);
    if (!local_nonloopback()) skip();

    /* refused, counted as a rejected connection and not as a connection */
    long long rejected = info_ll(c, "stats", "rejected_connections");
    long long total = info_ll(c, "stats", "total_connections_received");
    expect_denied(&f->srv);
    assert_int_equal(info_ll(c, "stats", "rejected_connections"), rejected + 1);
    assert_int_equal(info_ll(c, "stats", "total_connections_received"), total);
    /* the loopback connection goes on */
    STATUS(c, "PONG", "PING");

    /* a password for the default user lets it in (to authenticate) */
    OK(c, "CONFIG SET requirepass secret");
    expect_served(&f->srv, "PING\r\n", "-NOAUTH Authentication required.\r\n");
    expect_served(&f->srv, "AUTH secret\r\n", "+OK\r\n");
    OK(c, "AUTH secret");
    OK(c, "CONFIG SET requirepass %s", "");
    expect_denied(&f->srv);

    /* protected-mode no lets anyone in, yes again refuses */
    OK(c, "CONFIG SET protected-mode no");
    expect_served(&f->srv, "PING\r\n", "+PONG\r\n");
    OK(c, "CONFIG SET protected-mode yes");
    expect_denied(&f->srv);
}

/* ---- DEBUG and MODULE ---- */

static int setup_debug_no(void **state) {
    static const char *const args[] = { "--enable-debug-command", "no", NULL };
    return h_group_setup_args(state, args);
}

/* Refused under "no", loopback or not: Redis's error, a rejected call, and
 * inside MULTI the transaction is aborted. MODULE under its default "no". */
static void test_debug_no(void **state) {
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG RESETSTAT");
    ERR(c, DEBUG_REFUSED, "DEBUG HELP");
    ERR(c, DEBUG_REFUSED, "DEBUG SLEEP 0");
    redisReply *r = cmd(c, "INFO commandstats");
    assert_non_null(strstr(r->str, "cmdstat_debug:calls=0,usec=0,usec_per_call=0.00,rejected_calls=2,failed_calls=0"));
    freeReplyObject(r);
    /* arity first, as Redis */
    ERR(c, "ERR wrong number of arguments for 'debug' command", "DEBUG");

    OK(c, "MULTI");
    ERR(c, DEBUG_REFUSED, "DEBUG HELP");
    ERR(c, "EXECABORT Transaction discarded because of previous errors.", "EXEC");

    ERR(c, MODULE_REFUSED, "MODULE LOAD /nonexistent/module.so");
    ERR(c, MODULE_REFUSED, "MODULE LOADEX /nonexistent/module.so");
    ERR(c, MODULE_REFUSED, "MODULE UNLOAD mymodule");
    /* LIST and HELP are not protected */
    expect_empty_array(cmd(c, "MODULE LIST"));
    r = cmd(c, "MODULE HELP");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_string_equal(r->element[0]->str, "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    freeReplyObject(r);
    ERR(c, "ERR unknown subcommand 'foo'. Try MODULE HELP.", "MODULE foo");
}

static int setup_local(void **state) {
    /* the outside client must get past protected mode to be refused DEBUG */
    static const char *const args[] = { "--enable-debug-command", "local", "--enable-module-command", "local",
                                        "--protected-mode", "no", NULL };
    return h_group_setup_args(state, args);
}

/* "local": loopback clients may, others may not. */
static void test_debug_local(void **state) {
    struct fixture *f = FIX(state);
    redisContext *c = f->c;
    redisReply *r = cmd(c, "DEBUG HELP");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    ERR(c, "ERR Error loading the extension. Please check the server logs.", "MODULE LOAD /nonexistent/module.so");
    if (!local_nonloopback()) skip();
    expect_served(&f->srv, "DEBUG HELP\r\n", "-" DEBUG_REFUSED "\r\n");
    expect_served(&f->srv, "MODULE UNLOAD x\r\n", "-" MODULE_REFUSED "\r\n");
    expect_served(&f->srv, "MODULE LIST\r\n", "*0\r\n");
}

static int setup_yes(void **state) {
    static const char *const args[] = { "--enable-module-command", "yes", NULL };
    return h_group_setup_args(state, args);
}

/* "yes": MODULE answers as a server without modules. */
static void test_module_yes(void **state) {
    redisContext *c = FIX(state)->c;
    ERR(c, "ERR Error loading the extension. Please check the server logs.", "MODULE LOAD /nonexistent/module.so");
    ERR(c, "ERR Error loading the extension. Please check the server logs.",
        "MODULE LOADEX /nonexistent/module.so CONFIG a b ARGS c");
    ERR(c, "ERR Error unloading module: no such module with that name", "MODULE UNLOAD mymodule");
    ERR(c, "ERR wrong number of arguments for 'module|load' command", "MODULE LOAD");
    expect_empty_array(cmd(c, "MODULE LIST"));
}

int main(void) {
    const struct CMUnitTest protected_mode[] = {
        cmocka_unit_test_setup(test_protected_mode, h_noop_setup),
    };
    const struct CMUnitTest debug_no[] = {
        cmocka_unit_test_setup(test_debug_no, h_noop_setup),
    };
    const struct CMUnitTest debug_local[] = {
        cmocka_unit_test_setup(test_debug_local, h_noop_setup),
    };
    const struct CMUnitTest module_yes[] = {
        cmocka_unit_test_setup(test_module_yes, h_noop_setup),
    };
    int rc = cmocka_run_group_tests_name("protected mode", protected_mode, h_group_setup, h_group_teardown);
    rc += cmocka_run_group_tests_name("enable-debug-command no", debug_no, setup_debug_no, h_group_teardown);
    rc += cmocka_run_group_tests_name("enable-*-command local", debug_local, setup_local, h_group_teardown);
    rc += cmocka_run_group_tests_name("enable-module-command yes", module_yes, setup_yes, h_group_teardown);
    return rc + h_failures();
}
