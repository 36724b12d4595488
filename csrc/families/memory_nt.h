/* memory: where the copies of memory.c switch to non-temporal stores.
 * glibc's memcpy streams from its own threshold, which only the dynamic
 * loader will tell; the word loops from a quarter of the last-level cache
 * the kernel lists (memory.c says why). */
#ifndef FL_MEMORY_NT_H
#define FL_MEMORY_NT_H

#include <stdint.h>

/* Bytes copied per op from which each copy streams; -1 where it never does. */
typedef struct {
    int64_t nt_threshold;      /* the word loops' (stores=auto) */
    int64_t libc_nt_threshold; /* glibc memcpy's */
    const char *from, *libc_from; /* where each figure came from */
} mem_thresholds;

/* Both thresholds of the process calling it: glibc's, read from ld.so or
 * estimated from sysconf, and the word loops', a quarter of the sysfs
 * last-level cache or glibc's where sysfs lists none. */
void fl_mem_thresholds(mem_thresholds *t);

#endif
