/*
 * The list object: a quicklist and the encoding name Redis would report for
 * it (see list_obj.h), registered as obj_ops_by_type[OBJ_LIST].
 */
#include <stdlib.h>

#include "ringkv/list_obj.h"
#include "ringkv/config.h"
#include "ringkv/entry.h"

struct list_obj *list_new_fill(int fill) {
    struct list_obj *l = rk_malloc(sizeof *l);
    l->ql = ql_new(fill);
    l->compact = true;
    return l;
}

struct list_obj *list_new(void) {
    return list_new_fill((int)CONFIG_GET(list_max_listpack_size));
}

void list_free(struct list_obj *l) {
    if (!l) return;
    ql_free(l->ql);
    free(l);
}

struct list_obj *list_dup(const struct list_obj *l) {
    struct list_obj *n = list_new_fill(l->ql->fill);
    struct ql_iter it;
    struct lp_value v;
    char buf[LP_INTBUF_SIZE];
    if (ql_iter_init(&it, l->ql, 0, false))
        while (ql_iter_next(&it, &v)) {
            struct slice s = lp_value_str(&v, buf);
            if (!s.ptr) s.ptr = "";   /* an empty string may come back as NULL */
            ql_push(n->ql, s, true);
        }
    n->compact = l->compact;
    return n;
}

const char *list_encoding(const struct list_obj *l) {
    return l->compact ? "listpack" : "quicklist";
}

/* Redis 7's listTypeTryConversion: listpack -> quicklist past one node. */
void list_grew(struct list_obj *l) {
    if (l->compact && !ql_fits_listpack(l->ql, false))
        l->compact = false;
}

/* ... and back once it fits in half a node. */
void list_shrank(struct list_obj *l) {
    if (!l->compact && ql_fits_listpack(l->ql, true))
        l->compact = true;
}

static void ops_free(void *obj) { list_free(obj); }
static void *ops_dup(const void *obj) { return list_dup(obj); }
static const char *ops_encoding(const void *obj) { return list_encoding(obj); }

static const struct obj_ops list_ops = { ops_free, ops_dup, ops_encoding, NULL };

__attribute__((constructor)) static void list_register(void) {
    obj_ops_by_type[OBJ_LIST] = &list_ops;
}
