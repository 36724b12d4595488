/* memory: the x86-64 copies among which memory.c's contiguous copies choose
 * (a vector loop, `rep movsb`, the streaming loop), and where glibc's memcpy
 * starts streaming (memory.c says why the two are recorded side by side). */
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

/* A contiguous copy, as a point's info names it. */
typedef struct {
    const char *name;   /* "word loop", "vector loop", "rep movsb", "streaming loop" */
    int nt;             /* non-temporal stores */
    mem_copy_fn *copy;
} mem_copy;

#define MEM_COPIES 3

/* The contiguous copies of this CPU: the given portable loop unless the CPU
 * has AVX2, `rep movsb` where it has ERMS, the streaming loop on x86-64.
 * Fills c and returns how many. */
int fl_mem_copies(mem_copy c[MEM_COPIES], mem_copy_fn *portable);

/* Bytes copied per op from which glibc's memcpy streams, read from ld.so or
 * estimated from sysconf, and where the figure came from; -1 and "none"
 * outside x86-64. */
int64_t fl_memcpy_nt_threshold(const char **from);

#endif
