/*
 * command_docs.c -- the "arguments" part of COMMAND DOCS.
 *
 * Redis describes each argument of a command as a small tree: a name, a
 * type, an optional token, flags, and for "oneof" and "block" arguments a
 * list of nested arguments. redis-cli builds its argument hints from it.
 * Rather than spell those trees as C struct initialisers, the command table
 * gives each command one line of text (args_doc) that reads close to the
 * command's usage, and this file turns it into the reply.
 *
 * The grammar, for SET:
 *
 *     key:key value:string [condition:oneof@2.6.12(nx:pure-token=NX xx:pure-token=XX)]
 *     [get:pure-token=GET@6.2.0] [expiration:oneof(seconds:integer=EX@2.6.12 ...)]
 *
 *     list      arguments separated by spaces
 *     arg       name:type, then any of the modifiers below, then maybe " ..."
 *     [arg]     the argument is optional                      flag "optional"
 *     arg ...   it may repeat                                 flag "multiple"
 *     arg +...  it repeats together with its token            also "multiple_token"
 *     =TOKEN    the literal word that introduces it           "token"
 *     (list)    the alternatives of a oneof, the parts of a block  "arguments"
 *     @7.0.0    the version that added it                     "since"
 *     !2.8.12   the version that deprecated it                "deprecated_since"
 *     'text'    how to show it, when not its name             "display_text"
 *
 * type is one of key, string, integer, double, pattern, unix-time,
 * pure-token, oneof, block. A name may contain ':' (Redis has "ip:port"):
 * it ends at the ':' that is followed by a type. A "key" argument reports
 * key_spec_index 0, as ringkv reports a single key spec per command.
 *
 * The reply needs every count before the elements, and a oneof's count
 * depends on what follows it in the text, so the string is parsed into a
 * flat array first (depth first: each argument, then its children) and
 * written from there. The parse points into the string, copying nothing.
 * Parsing costs microseconds and COMMAND DOCS is rare, so nothing is cached.
 */
#include "ringkv/command.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const arg_types[] = {
    "key", "string", "integer", "double", "pattern", "unix-time", "pure-token", "oneof", "block",
};

struct parser {
    const char *start, *p;
    struct doc_args *out;
    char *err;
    size_t errlen;
};

static bool parse_list(struct parser *ps, char close, size_t *count);

static bool fail(struct parser *ps, const char *why) {
    if (ps->err && ps->errlen)
        snprintf(ps->err, ps->errlen, "%s at offset %td of \"%s\"", why, ps->p - ps->start, ps->start);
    return false;
}

/* What may follow a type, so "key" does not match the start of "keys:...". */
static bool ends_word(char c) {
    return c == '\0' || strchr(" ()[]=@!'.+", c) != NULL;
}

/* The type named at s, or NULL. */
static const char *type_at(const char *s) {
    for (size_t i = 0; i < RK_ARRAY_LEN(arg_types); i++) {
        size_t len = strlen(arg_types[i]);
        if (strncmp(s, arg_types[i], len) == 0 && ends_word(s[len])) return arg_types[i];
    }
    return NULL;
}

static bool has_subargs(const char *type) {
    return strcmp(type, "oneof") == 0 || strcmp(type, "block") == 0;
}

/* Append an empty argument; returns its index (the array may move). */
static size_t push_arg(struct doc_args *a) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->arg = rk_realloc(a->arg, a->cap * sizeof *a->arg);
    }
    memset(&a->arg[a->n], 0, sizeof a->arg[a->n]);
    return a->n++;
}

/* "name:type": the name runs to the first ':' that a type follows. */
static bool parse_name_type(struct parser *ps, struct doc_arg *arg) {
    const char *q = ps->p;
    while (*q && !strchr(" ()[]", *q) && !(*q == ':' && type_at(q + 1))) q++;
    if (*q != ':' || q == ps->p) return fail(ps, "expected name:type");
    arg->name = (struct slice){ ps->p, (size_t)(q - ps->p) };
    arg->type = type_at(q + 1);
    ps->p = q + 1 + strlen(arg->type);
    return true;
}

/* A version: digits with dots between them, so "@6.2.0 ..." stops before "...". */
static bool parse_version(struct parser *ps, struct slice *out) {
    const char *s = ++ps->p, *q = s;
    while (*q >= '0' && *q <= '9') {
        while (*q >= '0' && *q <= '9') q++;
        if (q[0] == '.' && q[1] >= '0' && q[1] <= '9') q++;
    }
    if (q == s) return fail(ps, "expected a version");
    *out = (struct slice){ s, (size_t)(q - s) };
    ps->p = q;
    return true;
}

/* A token is any word: Redis has tokens such as "~" and "=". */
static bool parse_token(struct parser *ps, struct slice *out) {
    const char *s = ++ps->p, *q = s;
    while (*q && !strchr(" ()[]@!'", *q)) q++;
    if (q == s) return fail(ps, "expected a token");
    *out = (struct slice){ s, (size_t)(q - s) };
    ps->p = q;
    return true;
}

static bool parse_display(struct parser *ps, struct slice *out) {
    const char *s = ++ps->p, *q = strchr(s, '\'');
    if (!q) return fail(ps, "unterminated display text");
    *out = (struct slice){ s, (size_t)(q - s) };
    ps->p = q + 1;
    return true;
}

/* Children go into the array right after their parent; arg is an index
 * because parsing them may move the array. */
static bool parse_subargs(struct parser *ps, size_t arg) {
    size_t nsub;
    ps->p++;
    if (!parse_list(ps, ')', &nsub)) return false;
    ps->p++;
    ps->out->arg[arg].nsub = nsub;
    return true;
}

static bool parse_modifiers(struct parser *ps, size_t arg) {
    for (;;) {
        struct doc_arg *a = &ps->out->arg[arg];
        bool ok;
        switch (*ps->p) {
        case '=':  ok = parse_token(ps, &a->token); break;
        case '@':  ok = parse_version(ps, &a->since); break;
        case '!':  ok = parse_version(ps, &a->deprecated_since); break;
        case '\'': ok = parse_display(ps, &a->display); break;
        case '(':  ok = parse_subargs(ps, arg); break;
        default:   return true;
        }
        if (!ok) return false;
    }
}

/* " ..." or " +..." after an argument; spaces before it are optional. */
static void parse_multiple(struct parser *ps, struct doc_arg *a) {
    const char *q = ps->p;
    while (*q == ' ') q++;
    if (strncmp(q, "...", 3) == 0) {
        a->flags |= DOC_ARG_MULTIPLE;
        ps->p = q + 3;
    } else if (strncmp(q, "+...", 4) == 0) {
        a->flags |= DOC_ARG_MULTIPLE | DOC_ARG_MULTIPLE_TOKEN;
        ps->p = q + 4;
    }
}

/* What Redis's command JSON checker would refuse. */
static bool check_arg(struct parser *ps, const struct doc_arg *a) {
    if (has_subargs(a->type) && a->nsub == 0) return fail(ps, "oneof/block without (arguments)");
    if (!has_subargs(a->type) && a->nsub) return fail(ps, "(arguments) on a plain argument");
    if (strcmp(a->type, "pure-token") == 0 && !a->token.len) return fail(ps, "pure-token without =TOKEN");
    if ((a->flags & DOC_ARG_MULTIPLE_TOKEN) && !a->token.len) return fail(ps, "+... without =TOKEN");
    return true;
}

static bool parse_arg(struct parser *ps) {
    bool optional = *ps->p == '[';
    if (optional) ps->p++;
    size_t arg = push_arg(ps->out);
    if (!parse_name_type(ps, &ps->out->arg[arg]) || !parse_modifiers(ps, arg)) return false;
    struct doc_arg *a = &ps->out->arg[arg];
    parse_multiple(ps, a);
    if (optional) {
        if (*ps->p != ']') return fail(ps, "expected ]");
        ps->p++;
        a->flags |= DOC_ARG_OPTIONAL;
    }
    return check_arg(ps, a);
}

/* Arguments up to close (')' or the end of the string), which is left unread. */
static bool parse_list(struct parser *ps, char close, size_t *count) {
    *count = 0;
    for (;;) {
        while (*ps->p == ' ') ps->p++;
        if (*ps->p == close) return true;
        if (*ps->p == '\0') return fail(ps, "expected )");
        if (!parse_arg(ps)) return false;
        (*count)++;
        if (*ps->p != ' ' && *ps->p != close) return fail(ps, "expected a space between arguments");
    }
}

bool doc_args_parse(const char *args_doc, struct doc_args *out, char *err, size_t errlen) {
    *out = (struct doc_args){0};
    if (!args_doc) return true;
    struct parser ps = { args_doc, args_doc, out, err, errlen };
    if (parse_list(&ps, '\0', &out->ntop)) return true;
    doc_args_free(out);
    return false;
}

void doc_args_free(struct doc_args *args) {
    free(args->arg);
    *args = (struct doc_args){0};
}

/* ---- reply ---- */

static void reply_field(struct reply *r, const char *field, struct slice value) {
    reply_bulk_cstr(r, field);
    reply_bulk_slice(r, value);
}

/* A set of simple strings, in the order addReplyFlagsForArg() writes them. */
static void reply_flags(struct reply *r, unsigned flags) {
    static const struct { unsigned flag; const char *name; } names[] = {
        {DOC_ARG_OPTIONAL, "optional"}, {DOC_ARG_MULTIPLE, "multiple"}, {DOC_ARG_MULTIPLE_TOKEN, "multiple_token"},
    };
    size_t n = 0;
    for (size_t i = 0; i < RK_ARRAY_LEN(names); i++) n += (flags & names[i].flag) != 0;
    reply_set(r, n);
    for (size_t i = 0; i < RK_ARRAY_LEN(names); i++)
        if (flags & names[i].flag) reply_simple(r, names[i].name);
}

static size_t reply_list(struct reply *r, const struct doc_arg *args, size_t count);

/* One argument as a map, fields in addReplyCommandArgList()'s order (with
 * display_text where Redis 7.2 puts it); returns the array entries used. */
static size_t reply_arg(struct reply *r, const struct doc_arg *a) {
    bool key = strcmp(a->type, "key") == 0;
    size_t fields = 2 + (a->display.len > 0) + key + (a->token.len > 0) + (a->since.len > 0) +
                    (a->deprecated_since.len > 0) + (a->flags != 0) + (a->nsub > 0);
    reply_map(r, fields);
    reply_field(r, "name", a->name);
    reply_bulk_cstr(r, "type");
    reply_bulk_cstr(r, a->type);
    if (a->display.len) reply_field(r, "display_text", a->display);
    if (key) {
        reply_bulk_cstr(r, "key_spec_index");
        reply_int(r, 0);
    }
    if (a->token.len) reply_field(r, "token", a->token);
    if (a->since.len) reply_field(r, "since", a->since);
    if (a->deprecated_since.len) reply_field(r, "deprecated_since", a->deprecated_since);
    if (a->flags) {
        reply_bulk_cstr(r, "flags");
        reply_flags(r, a->flags);
    }
    if (!a->nsub) return 1;
    reply_bulk_cstr(r, "arguments");
    return 1 + reply_list(r, a + 1, a->nsub);
}

/* count siblings starting at args, each followed by its subtree. */
static size_t reply_list(struct reply *r, const struct doc_arg *args, size_t count) {
    size_t used = 0;
    reply_array(r, count);
    for (size_t i = 0; i < count; i++) used += reply_arg(r, args + used);
    return used;
}

void doc_args_reply(struct reply *r, const struct doc_args *args) {
    reply_list(r, args->arg, args->ntop);
}
