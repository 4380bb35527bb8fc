/*
 * ACL against the real binary, on one thread and on several: users and
 * their passwords, the rules on commands, keys (read and write) and
 * channels, selectors, NOPERM errors as Redis 7.0 words them, checks of
 * commands whose keys live on other threads' shards, inside MULTI and in
 * scripts, the ACL log, connections closed when their user is deleted or
 * loses a channel, requirepass as the default user's password, and the
 * reading subcommands (LIST, GETUSER, CAT, DRYRUN, GENPASS).
 *
 * Each test starts from the default user alone (acl_setup). Keys are
 * spread by name over every shard, so a restricted user's commands are
 * checked before they are forwarded too.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOPERM_KEYS "NOPERM this user has no permissions to access one of the keys used as arguments"
#define NOPERM_CHANNELS "NOPERM this user has no permissions to access one of the channels used as arguments"
#define WRONGPASS "WRONGPASS invalid username-password pair or user is disabled."

static int acl_setup(void **state)
{
    int rc = h_flushall(state);
    if (rc) return rc;
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "ACL USERS");
    for (size_t i = 0; i < r->elements; i++)
        if (strcmp(r->element[i]->str, "default") != 0) freeReplyObject(cmd(c, "ACL DELUSER %s", r->element[i]->str));
    freeReplyObject(r);
    OK(c, "CONFIG SET requirepass %s", "");
    OK(c, "ACL SETUSER default reset on nopass ~* &* +@all");
    OK(c, "ACL LOG RESET");
    return 0;
}

/* A new connection authenticated as user (pass). */
static redisContext *login(void **state, const char *user, const char *pass)
{
    redisContext *u = h_connect(&FIX(state)->srv);
    OK(u, "AUTH %s %s", user, pass);
    return u;
}

/* Whether the connection was closed by the server: a command fails. */
static bool closed(redisContext *c)
{
    redisReply *r = redisCommand(c, "PING");
    bool gone = r == NULL;
    if (r) freeReplyObject(r);
    return gone;
}

static void test_users_and_passwords(void **state)
{
    redisContext *c = FIX(state)->c;
    BULK(c, "default", "ACL WHOAMI");
    OK(c, "ACL SETUSER alice >p1 >p2");
    /* new users start disabled */
    ERR(c, WRONGPASS, "AUTH alice p1");
    OK(c, "ACL SETUSER alice on +acl|whoami");
    redisContext *a = login(state, "alice", "p1");
    BULK(a, "alice", "ACL WHOAMI");
    OK(a, "AUTH alice p2");
    OK(c, "ACL SETUSER alice <p1");
    ERR(a, WRONGPASS, "AUTH alice p1");
    ERR(c, "ERR Error in ACL SETUSER modifier '<p1': The password you are trying to remove from the user does not exist",
        "ACL SETUSER alice <p1");
    ERR(c, WRONGPASS, "AUTH nobody x");
    /* passwords are kept as SHA-256 only */
    redisReply *r = cmd(c, "ACL GETUSER alice");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_string_equal(r->element[2]->str, "passwords");
    assert_int_equal(r->element[3]->elements, 1);
    assert_string_equal(r->element[3]->element[0]->str, "3946ca64ff78d93ca61090a437cbb6b3d2ca0d488f5f9ccf3059608368b27693");   /* sha256("p2") */
    freeReplyObject(r);
    OK(c, "ACL SETUSER bob on +@all #5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8");   /* "password" */
    redisContext *b = login(state, "bob", "password");
    BULK(b, "bob", "ACL WHOAMI");
    ERR(c, "ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain "
           "only lowercase hexadecimal characters", "ACL SETUSER bob #abc");
    ERR(c, "ERR Usernames can't contain spaces or null characters", "ACL SETUSER %s", "a b");
    ERR(c, "ERR The 'default' user cannot be removed", "ACL DELUSER default");
    INT(c, 1, "ACL DELUSER bob nosuchuser");
    expect_bulks(cmd(c, "ACL USERS"), 2, "alice", "default");
    redisFree(a);
    redisFree(b);
}

static void test_list_and_getuser(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "ACL SETUSER u1 on nopass ~app:* %%R~ro:* resetchannels &news +@read +@write -flushall");
    expect_bulks(cmd(c, "ACL LIST"), 2, "user default on nopass sanitize-payload ~* &* +@all",
                 "user u1 on nopass ~app:* %R~ro:* resetchannels &news -@all +@read +@write -flushall");
    redisReply *r = cmd(c, "ACL GETUSER u1");
    assert_int_equal(r->elements, 12);
    assert_string_equal(r->element[4]->str, "commands");
    assert_string_equal(r->element[5]->str, "-@all +@read +@write -flushall");
    assert_string_equal(r->element[7]->str, "~app:* %R~ro:*");
    assert_string_equal(r->element[9]->str, "&news");
    freeReplyObject(r);
    OK(c, "ACL SETUSER u2 reset +@all -@string +get");
    r = cmd(c, "ACL GETUSER u2");
    assert_string_equal(r->element[5]->str, "+@all -@string +get");
    freeReplyObject(r);
    NIL(c, "ACL GETUSER nosuchuser");
    /* selectors */
    OK(c, "ACL SETUSER u3 on nopass (~sel:* +get) (%%W~w:* +set)");
    r = cmd(c, "ACL GETUSER u3");
    assert_string_equal(r->element[10]->str, "selectors");
    assert_int_equal(r->element[11]->elements, 2);
    freeReplyObject(r);
    ERR(c, "ERR Unmatched parenthesis in acl selector starting at '(~x'.", "ACL SETUSER u3 (~x +get");
    ERR(c, "ERR Error in ACL SETUSER modifier 'nosuchrule': Syntax error", "ACL SETUSER u3 nosuchrule");
    ERR(c, "ERR Error in ACL SETUSER modifier '+nosuchcmd': Unknown command or category name in ACL",
        "ACL SETUSER u3 +nosuchcmd");
    /* a failed SETUSER changes nothing */
    ERR(c, "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL",
        "ACL SETUSER u2 -get +nosuch");
    r = cmd(c, "ACL GETUSER u2");
    assert_string_equal(r->element[5]->str, "+@all -@string +get");
    freeReplyObject(r);
}

static void test_command_and_key_rules(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "ACL SETUSER app on >pw ~app:* %%R~ro:* %%W~wo:* +@read +@write -del");
    OK(c, "SET ro:1 v");
    redisContext *a = login(state, "app", "pw");
    /* every key name lands on some shard: checked before it is forwarded */
    for (int i = 0; i < 20; i++) {
        OK(a, "SET app:%d v%d", i, i);
        ERR(a, NOPERM_KEYS, "SET other:%d v", i);
    }
    BULK(a, "v7", "GET app:7");
    BULK(a, "v", "GET ro:1");
    ERR(a, NOPERM_KEYS, "SET ro:1 x");
    OK(a, "SET wo:1 x");
    ERR(a, NOPERM_KEYS, "GET wo:1");
    /* a key read and written (APPEND) needs both */
    ERR(a, NOPERM_KEYS, "APPEND ro:1 x");
    ERR(a, "NOPERM this user has no permissions to run the 'del' command", "DEL app:1");
    ERR(a, "NOPERM this user has no permissions to run the 'ping' command", "PING");
    ERR(a, "NOPERM this user has no permissions to run the 'client|list' command", "CLIENT LIST");
    /* keys of several shards at once */
    OK(a, "MSET app:a 1 app:b 2 app:c 3 app:d 4");
    ERR(a, NOPERM_KEYS, "MSET app:a 1 app:b 2 zzz 3");
    /* EXISTS reads no value: any pattern is enough, of any access */
    INT(a, 1, "EXISTS wo:1");
    /* rules take effect for a connection already logged in */
    OK(c, "ACL SETUSER app -get");
    ERR(a, "NOPERM this user has no permissions to run the 'get' command", "GET app:1");
    OK(c, "ACL SETUSER app +get allkeys");
    BULK(a, "x", "GET wo:1");
    /* a subcommand, and a first argument */
    OK(c, "ACL SETUSER app +config|get +select|0");
    redisReply *r = cmd(a, "CONFIG GET maxmemory");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    ERR(a, "NOPERM this user has no permissions to run the 'config|set' command", "CONFIG SET maxmemory 0");
    OK(a, "SELECT 0");
    ERR(a, "NOPERM this user has no permissions to run the 'select' command", "SELECT 1");
    /* selectors: any one that allows all of it */
    OK(c, "ACL SETUSER sel on >pw resetkeys -@all (~s1:* +get) (~s2:* +set)");
    redisContext *s = login(state, "sel", "pw");
    NIL(s, "GET s1:x");
    OK(s, "SET s2:x 1");
    ERR(s, NOPERM_KEYS, "SET s1:x 1");
    ERR(s, "NOPERM this user has no permissions to run the 'incr' command", "INCR s1:x");
    redisFree(a);
    redisFree(s);
}

static void test_channels(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "ACL SETUSER ps on >pw +@pubsub +client resetchannels &news:* &chat");
    redisContext *p = login(state, "ps", "pw");
    INT(p, 0, "PUBLISH news:1 hi");
    ERR(p, NOPERM_CHANNELS, "PUBLISH sport hi");
    ERR(p, NOPERM_CHANNELS, "SPUBLISH sport hi");
    INT(p, 0, "SPUBLISH chat hi");
    /* a PSUBSCRIBE pattern must be one of the patterns, literally */
    redisReply *r = cmd(p, "PSUBSCRIBE news:*");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    redisContext *q = login(state, "ps", "pw");
    ERR(q, NOPERM_CHANNELS, "PSUBSCRIBE news:1*");
    ERR(q, NOPERM_CHANNELS, "SUBSCRIBE sport");
    /* subscribers on every thread: revoking their channel closes them */
    redisContext *subs[6];
    for (int i = 0; i < 6; i++) {
        subs[i] = login(state, "ps", "pw");
        freeReplyObject(cmd(subs[i], "SUBSCRIBE chat"));
    }
    OK(c, "ACL SETUSER ps resetchannels &news:*");
    for (int i = 0; i < 6; i++) assert_true(closed(subs[i]));
    /* the pattern subscriber keeps its literal permission */
    r = cmd(c, "CLIENT LIST");
    assert_non_null(strstr(r->str, "psub=1"));
    freeReplyObject(r);
    for (int i = 0; i < 6; i++) redisFree(subs[i]);
    redisFree(p);
    redisFree(q);
}

static void test_deluser_closes_its_connections(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "ACL SETUSER gone on >pw +@all ~*");
    OK(c, "ACL SETUSER stays on >pw +@all ~*");
    redisContext *g[6], *k = login(state, "stays", "pw");
    for (int i = 0; i < 6; i++) g[i] = login(state, "gone", "pw");
    /* the one deleting itself gets its reply first */
    INT(g[0], 1, "ACL DELUSER gone");
    for (int i = 0; i < 6; i++) assert_true(closed(g[i]));
    STATUS(k, "PONG", "PING");
    redisReply *r = cmd(c, "CLIENT LIST");
    assert_null(strstr(r->str, "user=gone"));
    freeReplyObject(r);
    for (int i = 0; i < 6; i++) redisFree(g[i]);
    redisFree(k);
}

/* The value of field name in an ACL LOG entry. */
static const redisReply *entry_field(const redisReply *e, const char *name)
{
    for (size_t i = 0; i + 1 < e->elements; i += 2)
        if (strcmp(e->element[i]->str, name) == 0) return e->element[i + 1];
    fail_msg("no field %s", name);
    return NULL;
}

static void expect_entry(redisContext *c, const char *reason, const char *context, const char *object,
                         const char *user, long long count)
{
    redisReply *r = cmd(c, "ACL LOG 1");
    assert_int_equal(r->elements, 1);
    const redisReply *e = r->element[0];
    assert_string_equal(entry_field(e, "reason")->str, reason);
    assert_string_equal(entry_field(e, "context")->str, context);
    assert_string_equal(entry_field(e, "object")->str, object);
    assert_string_equal(entry_field(e, "username")->str, user);
    assert_int_equal(entry_field(e, "count")->integer, count);
    assert_non_null(strstr(entry_field(e, "client-info")->str, "user="));
    freeReplyObject(r);
}

static void test_log_multi_and_scripts(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "ACL SETUSER lg on >pw ~k:* resetchannels &ok +get +set +publish +multi +exec +eval");
    redisContext *u = login(state, "lg", "pw");
    for (int i = 0; i < 3; i++) ERR(u, "NOPERM this user has no permissions to run the 'incr' command", "INCR k:1");
    expect_entry(c, "command", "toplevel", "incr", "lg", 3);
    ERR(u, NOPERM_KEYS, "GET secret");
    expect_entry(c, "key", "toplevel", "secret", "lg", 1);
    ERR(u, NOPERM_CHANNELS, "PUBLISH nope x");
    expect_entry(c, "channel", "toplevel", "nope", "lg", 1);
    ERR(u, WRONGPASS, "AUTH lg wrong");
    expect_entry(c, "auth", "toplevel", "AUTH", "lg", 1);
    /* queued commands are checked as they are queued: EXEC aborts */
    OK(u, "MULTI");
    ERR(u, NOPERM_KEYS, "SET other 1");
    ERR(u, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    expect_entry(c, "key", "multi", "other", "lg", 1);
    /* ...and again at EXEC, in case the rules changed meanwhile */
    OK(c, "ACL SETUSER lg +incr");
    OK(u, "MULTI");
    STATUS(u, "QUEUED", "INCR k:1");
    STATUS(u, "QUEUED", "GET k:1");
    OK(c, "ACL SETUSER lg -incr");
    redisReply *x = cmd(u, "EXEC");
    assert_int_equal(x->elements, 2);
    assert_int_equal(x->element[0]->type, REDIS_REPLY_ERROR);
    assert_string_equal(x->element[0]->str, "NOPERM ACLs rules changed between the moment the transaction was "
                                            "accumulated and the EXEC call. This command is no longer allowed for the "
                                            "following reason: no permission to execute the command or subcommand");
    assert_int_equal(x->element[1]->type, REDIS_REPLY_NIL);
    freeReplyObject(x);
    expect_entry(c, "command", "multi", "incr", "lg", 1);
    /* a script's calls run as its caller */
    expect_error_prefix(cmd(u, "EVAL %s 0", "return redis.call('incr','k:1')"),
                        "ERR The user executing the script can't run this command or subcommand script:");
    expect_entry(c, "command", "lua", "incr", "lg", 1);
    OK(c, "CONFIG SET acllog-max-len 2");
    ERR(u, NOPERM_KEYS, "GET trimmed");   /* the log is cut as entries come */
    redisReply *r = cmd(c, "ACL LOG");
    assert_int_equal(r->elements, 2);
    freeReplyObject(r);
    OK(c, "ACL LOG RESET");
    expect_empty_array(cmd(c, "ACL LOG"));
    OK(c, "CONFIG SET acllog-max-len 128");
    redisFree(u);
}

static void test_requirepass_is_the_default_password(void **state)
{
    redisContext *c = FIX(state)->c;
    OK(c, "CONFIG SET requirepass secret");
    redisContext *n = h_connect(&FIX(state)->srv);
    ERR(n, "NOAUTH Authentication required.", "GET x");
    OK(n, "AUTH secret");
    BULK(n, "default", "ACL WHOAMI");
    redisReply *r = cmd(c, "ACL LIST");
    assert_non_null(strstr(r->element[0]->str, " #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b "));
    freeReplyObject(r);
    /* a binary password keeps its NUL byte (Redis's sds); what the bytes
     * before it say is wrong */
    OK(c, "CONFIG SET requirepass %b", "abc\0def", (size_t)7);
    ERR(n, "WRONGPASS invalid username-password pair or user is disabled.", "AUTH abc");
    OK(n, "AUTH %b", "abc\0def", (size_t)7);
    OK(c, "CONFIG SET requirepass %b", "\0", (size_t)1);
    ERR(n, "WRONGPASS invalid username-password pair or user is disabled.", "AUTH %s", "");
    OK(n, "AUTH %b", "\0", (size_t)1);
    OK(c, "CONFIG SET requirepass %s", "");
    ERR(n, "ERR AUTH <password> called without any password configured for the default user. Are you sure your "
           "configuration is correct?", "AUTH secret");
    /* the default user off: new connections are not authenticated */
    OK(c, "ACL SETUSER default off");
    redisContext *m = h_connect(&FIX(state)->srv);
    ERR(m, "NOAUTH Authentication required.", "PING");
    OK(c, "ACL SETUSER default on");
    STATUS(m, "PONG", "PING");
    redisFree(n);
    redisFree(m);
}

static void test_reading_subcommands(void **state)
{
    redisContext *c = FIX(state)->c;
    redisReply *r = cmd(c, "ACL CAT");
    assert_int_equal(r->elements, 21);
    assert_string_equal(r->element[0]->str, "keyspace");
    freeReplyObject(r);
    r = cmd(c, "ACL CAT transaction");
    bool multi = false;
    for (size_t i = 0; i < r->elements; i++) multi |= strcmp(r->element[i]->str, "multi") == 0;
    assert_true(multi);
    freeReplyObject(r);
    ERR(c, "ERR Unknown category 'nosuch'", "ACL CAT nosuch");
    r = cmd(c, "ACL GENPASS");
    assert_int_equal(r->len, 64);
    freeReplyObject(r);
    r = cmd(c, "ACL GENPASS 5");
    assert_int_equal(r->len, 2);
    freeReplyObject(r);
    ERR(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096",
        "ACL GENPASS 5000");
    OK(c, "ACL SETUSER dry on nopass ~a* +get");
    OK(c, "ACL DRYRUN dry GET abc");
    BULK(c, "This user has no permissions to access the 'xyz' key", "ACL DRYRUN dry GET xyz");
    BULK(c, "This user has no permissions to run the 'set' command", "ACL DRYRUN dry SET abc 1");
    ERR(c, "ERR User 'nosuch' not found", "ACL DRYRUN nosuch GET a");
    ERR(c, "ERR Command 'nosuchcmd' not found", "ACL DRYRUN dry nosuchcmd a");
    ERR(c, "ERR wrong number of arguments for 'get' command", "ACL DRYRUN dry GET");
    ERR(c, "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
           "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in "
           "order to store users in the Redis configuration.", "ACL SAVE");
    r = cmd(c, "CLIENT LIST");
    assert_non_null(strstr(r->str, "user=default"));
    freeReplyObject(r);
    ERR(c, "ERR No such user 'nosuch'", "CLIENT KILL USER nosuch");
    OK(c, "ACL SETUSER killme on >pw +@all");
    redisContext *k = login(state, "killme", "pw");
    INT(c, 1, "CLIENT KILL USER killme");
    assert_true(closed(k));
    redisFree(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_users_and_passwords, acl_setup),
        cmocka_unit_test_setup(test_list_and_getuser, acl_setup),
        cmocka_unit_test_setup(test_command_and_key_rules, acl_setup),
        cmocka_unit_test_setup(test_channels, acl_setup),
        cmocka_unit_test_setup(test_deluser_closes_its_connections, acl_setup),
        cmocka_unit_test_setup(test_log_multi_and_scripts, acl_setup),
        cmocka_unit_test_setup(test_requirepass_is_the_default_password, acl_setup),
        cmocka_unit_test_setup(test_reading_subcommands, acl_setup),
    };
    return cmocka_run_group_tests_name("acl", tests, h_group_setup, h_group_teardown) + h_failures();
}
