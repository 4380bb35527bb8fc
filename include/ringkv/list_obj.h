/*
 * The list object (OBJ_LIST): a quicklist (quicklist.h) plus the name of the
 * encoding OBJECT ENCODING reports.
 *
 * ringkv always stores a quicklist. Redis keeps a small list as one bare
 * listpack and converts it to a quicklist once it outgrows one node
 * (list-max-listpack-size), going back only when it has shrunk to half the
 * limits (t_list.c listTypeTryConversion). The object keeps that answer in
 * a flag, updated by list_grew() after a command added to the list and by
 * list_shrank() after it removed from it: the quicklist itself is the same
 * either way.
 *
 * A new list takes its node fill from list-max-listpack-size at creation, as
 * Redis does when it creates a quicklist.
 */
#ifndef RINGKV_LIST_OBJ_H
#define RINGKV_LIST_OBJ_H

#include "ringkv/common.h"
#include "ringkv/quicklist.h"

struct list_obj {
    struct quicklist *ql;
    bool compact;              /* OBJECT ENCODING says "listpack" */
};

/* An empty list with the configured fill (list-max-listpack-size). */
struct list_obj *list_new(void);
/* An empty list with the given fill. */
struct list_obj *list_new_fill(int fill);
void list_free(struct list_obj *l);
struct list_obj *list_dup(const struct list_obj *l);
/* "listpack" or "quicklist". */
const char *list_encoding(const struct list_obj *l);

static inline size_t list_len(const struct list_obj *l) { return ql_count(l->ql); }

/* Encoding bookkeeping, once per command that changed the list. */
void list_grew(struct list_obj *l);
void list_shrank(struct list_obj *l);

/* The element's text (integers printed into buf). */
static inline struct slice list_value_str(const struct lp_value *v, char buf[LP_INTBUF_SIZE]) {
    return lp_value_str(v, buf);
}

#endif
