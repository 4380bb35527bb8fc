/*
 * LZF: the small, fast LZ77 compression Redis uses for quicklist nodes
 * (list-compress-depth) and RDB strings. ringkv's own implementation of the
 * format (src/util/lzf.c), so compressed data is LZF byte for byte and any
 * LZF decoder reads it.
 *
 * The format is a sequence of items, each led by a control byte:
 *   000LLLLL                     a literal run: the next L+1 bytes (1..32)
 *   LLLooooo [EEEEEEEE] oooooooo a back reference: copy L+2 bytes (3..8)
 *                                from offset o+1 (1..8192) behind the
 *                                output's end; L = 7 means the length is
 *                                E+9 (9..264), E in the extra byte.
 * A back reference may overlap what it produces (a run of one byte).
 */
#ifndef RINGKV_LZF_H
#define RINGKV_LZF_H

#include <stddef.h>

/* Compress in_len bytes into out, which has room for out_len. Returns the
 * compressed length, or 0 when it does not fit in out_len (incompressible
 * data grows by one byte in 32). */
size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len);

/* Decompress into out (room for out_len). Returns the decompressed length,
 * or 0 when the input is malformed (a reference before the start,
 * truncated) or the output would exceed out_len. */
size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len);

#endif
