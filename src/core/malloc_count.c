/*
 * The heap's part of used_memory (mem.h): the malloc family of the whole
 * process, defined here over mimalloc's own entry points so that each call
 * adds or takes the block's usable size in this thread's slot.
 *
 * Linked into the server binary only, with mimalloc and without the
 * sanitizers (CMakeLists.txt). A definition in the executable comes first
 * in symbol lookup, so libc's and the libraries' own calls land here too;
 * every name mimalloc exports for allocating or freeing is defined, or a
 * block could be allocated uncounted and freed counted.
 */
#include "ringkv/mem.h"

#include <errno.h>
#include <string.h>
#include <mimalloc.h>
#include <unistd.h>

static long decommit_delay_default;

/* mimalloc 2.0 decommits a span freed inside a segment decommit_delay
 * after the free, and only once the same thread frees or takes another
 * span of that segment; mi_collect does not force it. After a big free a
 * thread is often idle, and its free pages would stay resident. So while
 * a trim is pending (mem.c), spans are decommitted as they are freed. The
 * option is global: other threads decommit eagerly too for that while. */
static void decommit_eagerly(bool on) {
    mi_option_set(mi_option_decommit_delay, on ? 0 : decommit_delay_default);
}

__attribute__((constructor)) static void heap_counted(void) {
    rk_mem_heap_counted = true;
    decommit_delay_default = mi_option_get(mi_option_decommit_delay);
    rk_mem_decommit_eagerly = decommit_eagerly;
}

static inline void *counted(void *p) {
    if (p) mem_count((long long)mi_usable_size(p));
    return p;
}

void *malloc(size_t n) { return counted(mi_malloc(n)); }
void *calloc(size_t n, size_t size) { return counted(mi_calloc(n, size)); }

void free(void *p) {
    if (!p) return;
    mem_count(-(long long)mi_usable_size(p));
    mi_free(p);
}

void cfree(void *p) { free(p); }
void vfree(void *p) { free(p); }

void *realloc(void *p, size_t n) {
    size_t before = p ? mi_usable_size(p) : 0;
    void *q = mi_realloc(p, n);
    if (q) mem_count((long long)mi_usable_size(q) - (long long)before);
    return q;
}

void *reallocf(void *p, size_t n) {
    void *q = realloc(p, n);
    if (!q && n) free(p);
    return q;
}

void *reallocarray(void *p, size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, total);
}

int reallocarr(void *pp, size_t n, size_t size) {
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = reallocarray(p, n, size);
    if (!q && n && size) return errno;
    memcpy(pp, &q, sizeof q);
    return 0;
}

void *memalign(size_t align, size_t n) { return counted(mi_memalign(align, n)); }
void *aligned_alloc(size_t align, size_t n) { return counted(mi_aligned_alloc(align, n)); }
void *valloc(size_t n) { return counted(mi_valloc(n)); }
void *pvalloc(size_t n) { return counted(mi_pvalloc(n)); }

int posix_memalign(void **out, size_t align, size_t n) {
    int rc = mi_posix_memalign(out, align, n);
    if (rc == 0) counted(*out);
    return rc;
}

int __posix_memalign(void **out, size_t align, size_t n) { return posix_memalign(out, align, n); }
void *__libc_malloc(size_t n) { return malloc(n); }
void *__libc_calloc(size_t n, size_t size) { return calloc(n, size); }
void *__libc_realloc(void *p, size_t n) { return realloc(p, n); }
void __libc_free(void *p) { free(p); }
void __libc_cfree(void *p) { free(p); }
void *__libc_memalign(size_t align, size_t n) { return memalign(align, n); }
void *__libc_valloc(size_t n) { return valloc(n); }
void *__libc_pvalloc(size_t n) { return pvalloc(n); }
size_t malloc_usable_size(void *p) { return p ? mi_usable_size(p) : 0; }
/* This thread's free pages, and those other threads freed into its heap,
 * back to the system (the worker's cron, mem_trim_due). */
int malloc_trim(size_t pad) {
    (void)pad;
    mi_collect(true);
    return 1;
}
