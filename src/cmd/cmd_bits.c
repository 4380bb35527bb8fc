/*
 * Bitmap commands: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO,
 * with Redis 7.0's replies, error texts and order of checks (its bitops.c).
 * The group's table also lists LCS, whose handler lives in cmd_lcs.c.
 *
 * A bitmap is an ordinary string: bit 0 is the most significant bit of the
 * first byte, and bits past the end read as 0. Reads look at the entry's
 * bytes directly (ringkv keeps integers as their digits, so an "int" string
 * needs nothing special). Writes first grow the string with zero bytes up
 * to the highest bit they touch, through entry_resize_string, which keeps
 * spare room so that SETBITs at rising offsets copy the string only a
 * logarithmic number of times; then they edit the bytes in place. Such a
 * string is marked ENTRY_RAW, as Redis leaves it raw-encoded.
 *
 * Offsets are bounded as Redis bounds them: the offset's byte must lie
 * below proto-max-bulk-len (2^32 - 1 bits by default). An entry cannot
 * describe more than 4 GB, so a larger setting still stops a write there,
 * with SETRANGE's error.
 *
 * BITOP's keys may live on several shards: the dispatcher then runs it as a
 * cross-shard transaction with c->multi set, and db.h routes each lookup to
 * its key's shard, so the handler is the single-shard code. The result is
 * computed into a new entry before the destination is replaced, so a
 * destination that is also a source is read intact.
 */
#include <limits.h>
#include <stdlib.h>

#include "ringkv/watch.h"
#include "ringkv/command_def.h"
#include "ringkv/config.h"
#include "ringkv/db.h"
#include "ringkv/notify.h"
#include "ringkv/util.h"

#define ERR_BIT_OFFSET      "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE       "ERR bit is not an integer or out of range"
#define ERR_STRING_TOO_LONG "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
#define ERR_BITPOS_BIT      "ERR The bit argument must be 1 or 0."
#define ERR_BITOP_NOT       "ERR BITOP NOT must be called with a single source key."
#define ERR_BITFIELD_TYPE   "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
#define ERR_OVERFLOW_TYPE   "ERR Invalid OVERFLOW type specified"
#define ERR_BITFIELD_RO     "ERR BITFIELD_RO only supports the GET subcommand"

void cmd_lcs(struct cmd_ctx *c);   /* cmd_lcs.c */

/* ---------------------------------------------------------------------------
 * Arguments and keys
 * ------------------------------------------------------------------------- */

static long long proto_max_bulk_len(void) {
    return __atomic_load_n(&rk_config_proto_max_bulk_len, __ATOMIC_RELAXED);
}

/*
 * Redis's getBitOffsetFromArgument(). With bits > 0 (BITFIELD), "#n" means
 * the n-th field of that width; Redis multiplies without an overflow check
 * and relies on the wrap-around, and so does this, so that both accept and
 * refuse the same offsets.
 */
static bool bit_offset_or_reply(struct cmd_ctx *c, struct slice s, unsigned bits, uint64_t *offset) {
    bool fields = bits > 0 && s.len > 0 && s.ptr[0] == '#';
    long long v;

    if (!str_to_ll(s.ptr + fields, s.len - fields, &v))
        goto bad;
    if (fields)
        v = (long long)((unsigned long long)v * bits);
    if (v < 0 || (v >> 3) >= proto_max_bulk_len())
        goto bad;
    *offset = (uint64_t)v;
    return true;
bad:
    reply_error(&c->r, ERR_BIT_OFFSET);
    return false;
}

/* BYTE or BIT, the unit of BITCOUNT's and BITPOS's range. */
static bool range_unit_or_reply(struct cmd_ctx *c, struct slice s, bool *in_bits) {
    if (slice_eq_nocase(s, "bit")) {
        *in_bits = true;
    } else if (slice_eq_nocase(s, "byte")) {
        *in_bits = false;
    } else {
        reply_error(&c->r, ERR_SYNTAX);
        return false;
    }
    return true;
}

/*
 * Redis's start/end of BITCOUNT and BITPOS over a string of len bytes:
 * negative values count from the end, then both are clamped to the string,
 * in bytes or (in_bits) bits. Gives the inclusive range as bit offsets;
 * false when it is empty.
 */
static bool bit_range(size_t len, bool in_bits, long long start, long long end,
                      uint64_t *from, uint64_t *to) {
    long long total = in_bits ? (long long)len * 8 : (long long)len;

    if (start < 0) start += total;
    if (end < 0) end += total;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= total) end = total - 1;
    if (start > end)
        return false;
    *from = in_bits ? (uint64_t)start : (uint64_t)start * 8;
    *to = in_bits ? (uint64_t)end : (uint64_t)end * 8 + 7;
    return true;
}

/*
 * Redis's lookupStringForBitCommand(): the string at key, created if absent,
 * padded with zero bytes so that bit maxbit exists, for editing in place.
 * NULL after WRONGTYPE, or when the string would outgrow an entry. *grew:
 * it was created or lengthened (a change whatever the bits written);
 * *created: created, which db_insert counted as the command's change.
 */
static struct kv_entry *string_for_bits(struct cmd_ctx *c, struct slice key, uint64_t maxbit, bool *grew,
                                        bool *created) {
    uint64_t need = (maxbit >> 3) + 1;
    bool wrong;
    struct kv_entry **slot = lookup_typed_or_reply(c, key, OBJ_STRING, LOOKUP_NONE, &wrong);

    *grew = *created = false;
    if (wrong)
        return NULL;
    if (need > UINT32_MAX) {   /* only with proto-max-bulk-len above 4 GB */
        reply_error(&c->r, ERR_STRING_TOO_LONG);
        return NULL;
    }
    if (!slot) {
        struct kv_entry *e = entry_new_string_len(key, need);
        memset(entry_val(e), 0, need);
        db_insert(c, e);
        *grew = *created = true;
        /* Found again: joining a table may move an entry to its shard's arena. */
        return db_lookup(c, key, LOOKUP_NONE);
    }
    size_t len = entry_val_len(*slot);
    if (len < need) {
        *slot = entry_resize_string(*slot, need);
        memset(entry_val(*slot) + len, 0, need - len);
        *grew = true;
    }
    (*slot)->meta |= ENTRY_RAW;   /* edited in place, as Redis leaves it raw */
    return *slot;
}

/* ---------------------------------------------------------------------------
 * Counting and searching bits
 * ------------------------------------------------------------------------- */

static unsigned popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

static uint64_t count_bytes(const unsigned char *p, size_t n) {
    uint64_t bits = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        bits += popcount64(w);
    }
    for (; i < n; i++)
        bits += popcount64(p[i]);
    return bits;
}

/* Set bits in the inclusive bit range [from, to] of p: the whole bytes,
 * less what lies before `from` in the first and after `to` in the last. */
static uint64_t count_bits(const unsigned char *p, uint64_t from, uint64_t to) {
    uint64_t first = from >> 3, last = to >> 3;
    uint64_t n = count_bytes(p + first, last - first + 1);
    n -= popcount64(p[first] >> (8 - (from & 7)));
    n -= popcount64(p[last] & (0xffu >> ((to & 7) + 1)));
    return n;
}

/* The bits of byte i that lie in [from, to]. */
static unsigned range_mask(uint64_t i, uint64_t from, uint64_t to) {
    unsigned m = 0xff;
    if (i == from >> 3) m &= 0xffu >> (from & 7);
    if (i == to >> 3) m &= (0xff00u >> ((to & 7) + 1)) & 0xff;
    return m;
}

/* Position of the first bit equal to `bit` in [from, to], or -1. Between
 * the first and the last byte, words without it are skipped eight bytes at
 * a time. */
static long long find_bit(const unsigned char *p, uint64_t from, uint64_t to, int bit) {
    uint64_t i = from >> 3, last = to >> 3;
    uint64_t skip = bit ? 0 : UINT64_MAX;

    for (;;) {
        unsigned hit = (bit ? p[i] : (unsigned char)~p[i]) & range_mask(i, from, to);
        if (hit)
            return (long long)(i * 8) + __builtin_clz(hit) - 24;
        if (i++ == last)
            return -1;
        for (uint64_t w; i + 8 <= last; i += 8) {   /* eight whole bytes, none of them the last */
            memcpy(&w, p + i, 8);
            if (w != skip)
                break;
        }
    }
}

/* ---------------------------------------------------------------------------
 * SETBIT / GETBIT
 * ------------------------------------------------------------------------- */

static void cmd_setbit(struct cmd_ctx *c) {
    uint64_t offset;
    long long on;

    if (!bit_offset_or_reply(c, c->argv[2], 0, &offset))
        return;
    if (!str_to_ll(c->argv[3].ptr, c->argv[3].len, &on) || (on & ~1LL)) {
        reply_error(&c->r, ERR_BIT_VALUE);
        return;
    }
    bool grew, created;
    struct kv_entry *e = string_for_bits(c, c->argv[1], offset, &grew, &created);
    if (!e)
        return;
    unsigned char *byte = (unsigned char *)entry_val(e) + (offset >> 3);
    unsigned shift = 7 - (unsigned)(offset & 7);
    int old = (*byte >> shift) & 1;
    *byte = (unsigned char)((*byte & ~(1u << shift)) | ((unsigned)on << shift));
    /* as Redis: a change only if the string grew or the bit flipped, and
     * one change (db_insert counted a new key's) */
    if (grew || old != on) {
        if (!created) db_changed(c, c->argv[1], false);
        notify(c, NOTIFY_STRING, "setbit", c->argv[1]);
    }
    reply_int(&c->r, old);
}

static void cmd_getbit(struct cmd_ctx *c) {
    uint64_t offset;
    bool wrong;

    if (!bit_offset_or_reply(c, c->argv[2], 0, &offset))
        return;
    struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[1], OBJ_STRING, LOOKUP_READ, &wrong);
    if (wrong)
        return;
    struct slice v = slot ? entry_val_slice(*slot) : (struct slice){ NULL, 0 };
    uint64_t byte = offset >> 3;
    int bit = byte < v.len ? ((unsigned char)v.ptr[byte] >> (7 - (offset & 7))) & 1 : 0;
    reply_int(&c->r, bit);
}

/* ---------------------------------------------------------------------------
 * BITCOUNT / BITPOS
 * ------------------------------------------------------------------------- */

/* BITCOUNT key [start end [BYTE|BIT]]. As in Redis the key is looked up
 * first, so a missing key answers 0 whatever the other arguments are. */
static void cmd_bitcount(struct cmd_ctx *c) {
    bool wrong, in_bits = false;
    long long start = 0, end = -1;
    uint64_t from, to;

    struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[1], OBJ_STRING, LOOKUP_READ, &wrong);
    if (wrong)
        return;
    if (!slot) {
        reply_int(&c->r, 0);
        return;
    }
    struct slice v = entry_val_slice(*slot);
    if (c->argc == 4 || c->argc == 5) {
        if (!arg_ll_or_reply(c, c->argv[2], &start) || !arg_ll_or_reply(c, c->argv[3], &end))
            return;
        if (start < 0 && end < 0 && start > end) {   /* Redis answers before reading the unit */
            reply_int(&c->r, 0);
            return;
        }
        if (c->argc == 5 && !range_unit_or_reply(c, c->argv[4], &in_bits))
            return;
    } else if (c->argc != 2) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    if (!bit_range(v.len, in_bits, start, end, &from, &to))
        reply_int(&c->r, 0);
    else
        reply_int(&c->r, (long long)count_bits((const unsigned char *)v.ptr, from, to));
}

/*
 * BITPOS key bit [start [end [BYTE|BIT]]]. A missing key is all zeros: 0
 * for a clear bit, -1 for a set one. Without an explicit end the string is
 * taken as padded with zeros on the right, so a search for a clear bit in
 * a string of ones answers the first bit past it; with an end it answers -1.
 */
static void cmd_bitpos(struct cmd_ctx *c) {
    long long bit, start = 0, end = -1;
    bool wrong, in_bits = false, end_given = false;
    uint64_t from, to;

    if (!arg_ll_or_reply(c, c->argv[2], &bit))
        return;
    if (bit != 0 && bit != 1) {
        reply_error(&c->r, ERR_BITPOS_BIT);
        return;
    }
    struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[1], OBJ_STRING, LOOKUP_READ, &wrong);
    if (wrong)
        return;
    if (!slot) {
        reply_int(&c->r, bit ? -1 : 0);
        return;
    }
    struct slice v = entry_val_slice(*slot);
    if (c->argc >= 4 && c->argc <= 6) {
        /* Redis reads start, then the unit, then end. */
        if (!arg_ll_or_reply(c, c->argv[3], &start))
            return;
        if (c->argc == 6 && !range_unit_or_reply(c, c->argv[5], &in_bits))
            return;
        if (c->argc >= 5) {
            if (!arg_ll_or_reply(c, c->argv[4], &end))
                return;
            end_given = true;
        }
    } else if (c->argc != 3) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    if (!bit_range(v.len, in_bits, start, end, &from, &to)) {
        reply_int(&c->r, -1);
        return;
    }
    long long pos = find_bit((const unsigned char *)v.ptr, from, to, (int)bit);
    if (pos < 0 && bit == 0 && !end_given)
        pos = (long long)to + 1;
    reply_int(&c->r, pos);
}

/* ---------------------------------------------------------------------------
 * BITOP
 * ------------------------------------------------------------------------- */

enum bitop { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

static bool bitop_parse(struct slice s, enum bitop *op) {
    static const char *const names[] = { "and", "or", "xor", "not" };
    for (size_t i = 0; i < RK_ARRAY_LEN(names); i++) {
        if (slice_eq_nocase(s, names[i])) {
            *op = (enum bitop)i;
            return true;
        }
    }
    return false;
}

static uint64_t bitop_word(enum bitop op, uint64_t a, uint64_t b) {
    return op == BITOP_AND ? a & b : op == BITOP_OR ? a | b : a ^ b;
}

/* out[0..len) op= src[0..len), eight bytes at a time. */
static void bitop_apply(enum bitop op, unsigned char *out, const unsigned char *src, size_t len) {
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t a, b;
        memcpy(&a, out + i, 8);
        memcpy(&b, src + i, 8);
        a = bitop_word(op, a, b);
        memcpy(out + i, &a, 8);
    }
    for (; i < len; i++)
        out[i] = (unsigned char)bitop_word(op, out[i], src[i]);
}

/* out = ~src over len bytes, in one pass. */
static void bitop_not(unsigned char *out, const unsigned char *src, size_t len) {
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, src + i, 8);
        w = ~w;
        memcpy(out + i, &w, 8);
    }
    for (; i < len; i++)
        out[i] = (unsigned char)~src[i];
}

/* The result, len bytes (the longest source): shorter sources count as
 * padded with zeros, which only AND notices. NOT has its one source. */
static void bitop_compute(enum bitop op, unsigned char *out, size_t len, const struct slice *src, int n) {
    if (op == BITOP_NOT) {
        bitop_not(out, (const unsigned char *)src[0].ptr, len);
        return;
    }
    memcpy(out, src[0].ptr, src[0].len);
    memset(out + src[0].len, 0, len - src[0].len);
    for (int j = 1; j < n; j++) {
        bitop_apply(op, out, (const unsigned char *)src[j].ptr, src[j].len);
        if (op == BITOP_AND)
            memset(out + src[j].len, 0, len - src[j].len);
    }
}

/* BITOP op destkey key [key ...]: the destination gets the result, or is
 * deleted when every source is empty; the reply is the result's length. */
static void cmd_bitop(struct cmd_ctx *c) {
    enum bitop op;
    struct slice dest = c->argv[2];
    int n = c->argc - 3;
    size_t maxlen = 0;

    if (!bitop_parse(c->argv[1], &op)) {
        reply_error(&c->r, ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && n != 1) {
        reply_error(&c->r, ERR_BITOP_NOT);
        return;
    }
    struct slice *src = rk_malloc(sizeof *src * (size_t)n);
    for (int j = 0; j < n; j++) {
        bool wrong;
        struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[3 + j], OBJ_STRING, LOOKUP_READ, &wrong);
        if (wrong) {
            free(src);
            return;
        }
        src[j] = slot ? entry_val_slice(*slot) : (struct slice){ "", 0 };
        if (src[j].len > maxlen)
            maxlen = src[j].len;
    }
    if (maxlen) {
        struct kv_entry *e = entry_new_string_len(dest, maxlen);
        bitop_compute(op, (unsigned char *)entry_val(e), maxlen, src, n);
        db_set(c, e);   /* overwrites any type and drops the TTL, as Redis's setKey */
        notify(c, NOTIFY_STRING, "set", dest);
    } else if (db_delete(c, dest)) {
        notify(c, NOTIFY_GENERIC, "del", dest);
    }
    free(src);
    reply_int(&c->r, (long long)maxlen);
}

/* ---------------------------------------------------------------------------
 * BITFIELD
 * ------------------------------------------------------------------------- */

enum bf_opcode { BF_GET, BF_SET, BF_INCRBY };
enum bf_overflow { BF_WRAP, BF_SAT, BF_FAIL };

struct bf_op {
    uint64_t offset;
    int64_t value;            /* SET's value, INCRBY's increment */
    enum bf_opcode opcode;
    enum bf_overflow overflow;
    unsigned bits;
    bool sign;
};

/* "i1".."i64" or "u1".."u63": u64 could not be replied as a RESP integer. */
static bool bf_type_or_reply(struct cmd_ctx *c, struct slice s, bool *sign, unsigned *bits) {
    long long n;
    if (s.len == 0 || (s.ptr[0] != 'i' && s.ptr[0] != 'u'))
        goto bad;
    *sign = s.ptr[0] == 'i';
    if (!str_to_ll(s.ptr + 1, s.len - 1, &n) || n < 1 || n > (*sign ? 64 : 63))
        goto bad;
    *bits = (unsigned)n;
    return true;
bad:
    reply_error(&c->r, ERR_BITFIELD_TYPE);
    return false;
}

static bool bf_overflow_or_reply(struct cmd_ctx *c, struct slice s, enum bf_overflow *ov) {
    if (slice_eq_nocase(s, "wrap")) *ov = BF_WRAP;
    else if (slice_eq_nocase(s, "sat")) *ov = BF_SAT;
    else if (slice_eq_nocase(s, "fail")) *ov = BF_FAIL;
    else {
        reply_error(&c->r, ERR_OVERFLOW_TYPE);
        return false;
    }
    return true;
}

/*
 * Redis's bitfieldGeneric() parse: every operation is checked before any
 * runs. Fills ops (room for (argc - 2) / 3 of them), *n, whether any op
 * writes, and the highest bit a write touches. False after the error.
 */
static bool bf_parse(struct cmd_ctx *c, struct bf_op *ops, int *n, bool *writes, uint64_t *maxbit) {
    enum bf_overflow ov = BF_WRAP;

    *n = 0;
    *writes = false;
    *maxbit = 0;
    for (int j = 2; j < c->argc; j++) {
        int more = c->argc - j - 1;
        struct slice sub = c->argv[j];
        struct bf_op op = { .overflow = ov };

        if (slice_eq_nocase(sub, "get") && more >= 2) {
            op.opcode = BF_GET;
        } else if (slice_eq_nocase(sub, "set") && more >= 3) {
            op.opcode = BF_SET;
        } else if (slice_eq_nocase(sub, "incrby") && more >= 3) {
            op.opcode = BF_INCRBY;
        } else if (slice_eq_nocase(sub, "overflow") && more >= 1) {
            if (!bf_overflow_or_reply(c, c->argv[++j], &ov))
                return false;
            continue;
        } else {
            reply_error(&c->r, ERR_SYNTAX);
            return false;
        }
        if (!bf_type_or_reply(c, c->argv[j + 1], &op.sign, &op.bits) ||
            !bit_offset_or_reply(c, c->argv[j + 2], op.bits, &op.offset))
            return false;
        if (op.opcode != BF_GET) {
            long long v;
            if (!arg_ll_or_reply(c, c->argv[j + 3], &v))
                return false;
            op.value = v;
            *writes = true;
            if (op.offset + op.bits - 1 > *maxbit)
                *maxbit = op.offset + op.bits - 1;
        }
        ops[(*n)++] = op;
        j += op.opcode == BF_GET ? 2 : 3;
    }
    return true;
}

/* The bits-wide field at bit offset, most significant bit first; bits past
 * len bytes read as 0. */
static uint64_t field_get(const unsigned char *p, size_t len, uint64_t offset, unsigned bits) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bits; i++, offset++) {
        uint64_t byte = offset >> 3;
        unsigned b = byte < len ? (p[byte] >> (7 - (offset & 7))) & 1 : 0;
        v = (v << 1) | b;
    }
    return v;
}

static void field_set(unsigned char *p, uint64_t offset, unsigned bits, uint64_t v) {
    for (unsigned i = 0; i < bits; i++, offset++) {
        unsigned b = (unsigned)(v >> (bits - 1 - i)) & 1;
        unsigned shift = 7 - (unsigned)(offset & 7);
        p[offset >> 3] = (unsigned char)((p[offset >> 3] & ~(1u << shift)) | (b << shift));
    }
}

static uint64_t low_mask(unsigned bits) {
    return bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
}

static int64_t sign_extend(uint64_t v, unsigned bits) {
    if (bits < 64 && ((v >> (bits - 1)) & 1))
        v |= ~0ULL << bits;
    return (int64_t)v;
}

/*
 * old + incr in a signed field of `bits` (SET passes its value as old and
 * incr 0). *over tells whether the exact sum does not fit; the result is
 * then WRAP's low bits or SAT's nearest limit (FAIL uses neither).
 */
static int64_t signed_add(int64_t old, int64_t incr, unsigned bits, enum bf_overflow ov, bool *over) {
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)((1ULL << (bits - 1)) - 1);
    int64_t min = -max - 1;
    int dir = 0;

    /* Each comparison is arranged so that nothing overflows int64. */
    if (old > max || (incr > 0 && old > max - incr))
        dir = 1;
    else if (old < min || (incr < 0 && old < min - incr))
        dir = -1;
    *over = dir != 0;
    if (dir && ov == BF_SAT)
        return dir > 0 ? max : min;
    return sign_extend(((uint64_t)old + (uint64_t)incr) & low_mask(bits), bits);
}

/* The same for an unsigned field (at most 63 bits). SET's value arrives as
 * the two's complement pattern, so a negative one saturates at the top. */
static uint64_t unsigned_add(uint64_t old, int64_t incr, unsigned bits, enum bf_overflow ov, bool *over) {
    uint64_t max = low_mask(bits);
    int dir = 0;

    if (old > max || (incr > 0 && (uint64_t)incr > max - old))
        dir = 1;
    else if (incr < 0 && 0 - (uint64_t)incr > old)
        dir = -1;
    *over = dir != 0;
    if (dir && ov == BF_SAT)
        return dir > 0 ? max : 0;
    return (old + (uint64_t)incr) & max;
}

/* One SET or INCRBY on the string's bytes: replies the old value (SET) or
 * the new one (INCRBY), or a null when it overflows under FAIL. Whether it
 * counts as a change, as Redis counts them: it wrote, and the string was
 * created or grown for the command (grew) or the field's bits changed. */
static bool bf_write(struct cmd_ctx *c, struct kv_entry *e, const struct bf_op *op, bool grew) {
    unsigned char *p = (unsigned char *)entry_val(e);
    uint64_t raw = field_get(p, entry_val_len(e), op->offset, op->bits);
    uint64_t result;
    long long reply;
    bool over;

    if (op->sign) {
        int64_t old = sign_extend(raw, op->bits);
        int64_t v = op->opcode == BF_INCRBY ? signed_add(old, op->value, op->bits, op->overflow, &over)
                                           : signed_add(op->value, 0, op->bits, op->overflow, &over);
        result = (uint64_t)v;
        reply = op->opcode == BF_INCRBY ? v : old;
    } else {
        uint64_t v = op->opcode == BF_INCRBY ? unsigned_add(raw, op->value, op->bits, op->overflow, &over)
                                            : unsigned_add((uint64_t)op->value, 0, op->bits, op->overflow, &over);
        result = v;
        reply = (long long)(op->opcode == BF_INCRBY ? v : raw);
    }
    if (over && op->overflow == BF_FAIL) {
        reply_null(&c->r);
        return false;
    }
    field_set(p, op->offset, op->bits, result);
    reply_int(&c->r, reply);
    uint64_t mask = op->bits >= 64 ? ~0ull : (1ull << op->bits) - 1;
    return grew || (result & mask) != (raw & mask);
}

static void bf_get(struct cmd_ctx *c, struct slice v, const struct bf_op *op) {
    uint64_t raw = field_get((const unsigned char *)v.ptr, v.len, op->offset, op->bits);
    reply_int(&c->r, op->sign ? sign_extend(raw, op->bits) : (long long)raw);
}

/* BITFIELD and BITFIELD_RO: only GETs (and OVERFLOW) read the key as it is;
 * any write first grows the string to the highest bit written. */
static void bitfield_generic(struct cmd_ctx *c, bool readonly_cmd) {
    struct bf_op *ops = rk_malloc(sizeof *ops * (size_t)((c->argc - 2) / 3 + 1));
    struct kv_entry *e = NULL;
    uint64_t maxbit;
    bool writes, wrong, grew = false, created = false, changed = false;
    int n;

    if (!bf_parse(c, ops, &n, &writes, &maxbit))
        goto done;
    if (!writes) {
        struct kv_entry **slot = lookup_typed_or_reply(c, c->argv[1], OBJ_STRING, LOOKUP_READ, &wrong);
        if (wrong)
            goto done;
        e = slot ? *slot : NULL;
    } else if (readonly_cmd) {
        reply_error(&c->r, ERR_BITFIELD_RO);
        goto done;
    } else if (!(e = string_for_bits(c, c->argv[1], maxbit, &grew, &created))) {
        goto done;
    }
    reply_array(&c->r, (size_t)n);
    for (int i = 0; i < n; i++) {
        if (ops[i].opcode == BF_GET)
            bf_get(c, e ? entry_val_slice(e) : (struct slice){ NULL, 0 }, &ops[i]);
        else
            changed |= bf_write(c, e, &ops[i], grew);
    }
    if (changed) {
        if (!created) db_changed(c, c->argv[1], false);
        notify(c, NOTIFY_STRING, "setbit", c->argv[1]);
    }
done:
    free(ops);
}

static void cmd_bitfield(struct cmd_ctx *c) {
    bitfield_generic(c, false);
}

static void cmd_bitfield_ro(struct cmd_ctx *c) {
    bitfield_generic(c, true);
}

/* ---------------------------------------------------------------------------
 * The group
 * ------------------------------------------------------------------------- */

const struct command bits_commands[] = {
    CMD("setbit", 4, W | D, 1, 1, 1, cmd_setbit, "@write @bitmap @slow", "Sets or clears the bit at offset in the string value stored at key", "2.2.0", "bitmap", "O(1)",
        "key:key offset:integer value:integer"),
    CMD("getbit", 3, R | F, 1, 1, 1, cmd_getbit, "@read @bitmap @fast", "Returns the bit value at offset in the string value stored at key", "2.2.0", "bitmap", "O(1)",
        "key:key offset:integer"),
    CMD("bitcount", -2, R, 1, 1, 1, cmd_bitcount, "@read @bitmap @slow", "Count set bits in a string", "2.6.0", "bitmap", "O(N)",
        "key:key [index:block(start:integer end:integer [index_unit:oneof@7.0.0(byte:pure-token=BYTE bit:pure-token=BIT)])]"),
    CMD("bitpos", -3, R, 1, 1, 1, cmd_bitpos, "@read @bitmap @slow", "Find first bit set or clear in a string", "2.8.7", "bitmap", "O(N)",
        "key:key bit:integer [index:block(start:integer [end_index:block(end:integer "
        "[index_unit:oneof@7.0.0(byte:pure-token=BYTE bit:pure-token=BIT)])])]"),
    CMD("bitop", -4, W | D, 2, -1, 1, cmd_bitop, "@write @bitmap @slow", "Perform bitwise operations between strings", "2.6.0", "bitmap", "O(N)",
        "operation:string destkey:key key:key ..."),
    CMD("bitfield", -2, W | D, 1, 1, 1, cmd_bitfield, "@write @bitmap @slow", "Perform arbitrary bitfield integer operations on strings", "3.2.0", "bitmap", "O(1) for each subcommand specified",
        "key:key [operation:oneof(encoding_offset:block=GET(encoding:string offset:integer) "
        "write:block([wrap_sat_fail:oneof=OVERFLOW(wrap:pure-token=WRAP sat:pure-token=SAT fail:pure-token=FAIL)] "
        "write_operation:oneof(encoding_offset_value:block=SET(encoding:string offset:integer value:integer) "
        "encoding_offset_increment:block=INCRBY(encoding:string offset:integer increment:integer)))) ...]"),
    CMD("bitfield_ro", -2, R | F, 1, 1, 1, cmd_bitfield_ro, "@read @bitmap @fast", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0", "bitmap", "O(1) for each subcommand specified",
        "key:key [encoding_offset:block=GET(encoding:string offset:integer) +...]"),
    CMD("lcs", -3, R, 1, 2, 1, cmd_lcs, "@read @string @slow", "Find longest common substring", "7.0.0", "string", "O(N*M) where N and M are the lengths of s1 and s2, respectively",
        "key1:key key2:key [len:pure-token=LEN] [idx:pure-token=IDX] [len:integer=MINMATCHLEN] [withmatchlen:pure-token=WITHMATCHLEN]"),
    CMD_END
};
