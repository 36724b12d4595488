/* memory: the x86-64 copies among which memory.c's contiguous copies choose
 * (a vector loop, `rep movsb`, the streaming loop), and where glibc's memcpy
 * starts streaming and using `rep movsb`. */
#ifndef FL_MEMORY_NT_H
#define FL_MEMORY_NT_H

#include <stddef.h>
#include <stdint.h>

/* The word loops must stay loops: GCC and clang would otherwise turn a
 * contiguous copy into a memcpy call. */
#define MEM_LOOP
#if defined(__has_attribute)
#if __has_attribute(no_builtin) /* clang */
#undef MEM_LOOP
#define MEM_LOOP __attribute__((noinline, no_builtin("memcpy")))
#elif __has_attribute(optimize) /* GCC */
#undef MEM_LOOP
#define MEM_LOOP __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
#endif
#endif

/* One op's copy into d from s: n words, the strided side (if any) visiting
 * every st-th word; the contiguous copies ignore st. */
typedef void mem_copy_fn(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st);

/* A contiguous copy, as a point's info names it, the bytes per op it may
 * copy (from `from` up to below `below`), and below which glibc's memcpy
 * would run it in that range. */
typedef struct {
    const char *name;   /* "word loop", "vector loop", "rep movsb", "streaming loop" */
    int nt;             /* non-temporal stores */
    mem_copy_fn *copy;
    size_t from, below, libc_below;
} mem_copy;

#define MEM_COPIES 3

/* Where glibc's memcpy starts streaming and, on CPUs with ERMS, starts and
 * stops using `rep movsb` (bytes copied per op), read from ld.so or (the
 * first) estimated from sysconf, and where the figures came from; -1 where
 * unknown and "none" outside x86-64. */
typedef struct {
    int64_t nt_threshold, rep_movsb_threshold, rep_movsb_stop_threshold;
    const char *from;
} mem_libc;

void fl_memcpy_thresholds(mem_libc *t);

/* The contiguous copies of this CPU: the given portable loop unless the CPU
 * has AVX2, `rep movsb` where it has ERMS (in glibc's range for it), the
 * streaming loop on x86-64. Fills c and returns how many. */
int fl_mem_copies(mem_copy c[MEM_COPIES], mem_copy_fn *portable, const mem_libc *libc);

#endif
