/* Every command handler, as X(name). Included by command.h with a definition of X. */
/* src/cmd/cmd_conn.c: connection */
X(cmd_ping) X(cmd_echo) X(cmd_quit) X(cmd_select) X(cmd_hello) X(cmd_auth) X(cmd_client) X(cmd_client_gather) X(cmd_client_unblock_gather) X(cmd_reset) X(cmd_monitor)

/* src/cmd/cmd_tracking.c: client-side caching */
X(cmd_client_tracking) X(cmd_client_tracking_gather) X(cmd_client_caching) X(cmd_client_getredir) X(cmd_client_trackinginfo)
/* src/cmd/cmd_command.c, cmd_memory.c, cmd_server.c: server */
X(cmd_command) X(cmd_memory) X(cmd_memory_gather) X(cmd_config) X(cmd_info) X(cmd_time)
X(cmd_shutdown) X(cmd_debug) X(cmd_cluster) X(cmd_module)
/* src/cmd/slowlog.c, latency.c, command_stats.c: the operator's tools */
X(cmd_slowlog) X(cmd_latency) X(cmd_latency_histogram)
/* src/cmd/cmd_acl.c: users */
X(cmd_acl) X(cmd_acl_apply)
/* src/cmd/cmd_persist.c: persistence */
X(cmd_save) X(cmd_bgsave) X(cmd_bgrewriteaof) X(cmd_lastsave)
/* src/cmd/cmd_keys.c: generic keyspace */
X(cmd_del) X(cmd_unlink) X(cmd_exists) X(cmd_touch) X(cmd_type) X(cmd_keys) X(cmd_scan) X(cmd_randomkey)
X(cmd_rename) X(cmd_renamenx) X(cmd_copy) X(cmd_move) X(cmd_swapdb)
X(cmd_expire) X(cmd_pexpire) X(cmd_expireat) X(cmd_pexpireat)
X(cmd_ttl) X(cmd_pttl) X(cmd_expiretime) X(cmd_pexpiretime) X(cmd_persist) X(cmd_object)
X(cmd_dbsize) X(cmd_flushdb) X(cmd_flushall)
/* src/cmd/cmd_dump.c: serialized values */
X(cmd_dump) X(cmd_restore)
/* src/cmd/cmd_strings.c: strings */
X(cmd_get) X(cmd_set) X(cmd_setnx) X(cmd_setex) X(cmd_psetex) X(cmd_getset) X(cmd_getdel) X(cmd_getex)
X(cmd_mget) X(cmd_mset) X(cmd_msetnx) X(cmd_append) X(cmd_strlen) X(cmd_getrange) X(cmd_setrange)
X(cmd_incr) X(cmd_decr) X(cmd_incrby) X(cmd_decrby) X(cmd_incrbyfloat)
/* src/cmd/cmd_multi.c: transactions */
X(cmd_multi) X(cmd_exec) X(cmd_discard) X(cmd_watch) X(cmd_unwatch)
/* src/cmd/cmd_pubsub.c: pub/sub */
X(cmd_publish) X(cmd_spublish) X(cmd_subscribe) X(cmd_pubsub)
/* src/cmd/cmd_script.c: scripting */
X(cmd_eval) X(cmd_eval_ro) X(cmd_evalsha) X(cmd_evalsha_ro) X(cmd_fcall) X(cmd_fcall_ro)
