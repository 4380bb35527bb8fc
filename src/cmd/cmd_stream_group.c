/*
 * Consumer group commands: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM and
 * XINFO (see cmd_stream.h for what they share with the other stream
 * commands).
 */
#include "cmd_stream.h"

#include "ringkv/command_def.h"

const struct command stream_group_commands[] = {
    CMD_END
};
