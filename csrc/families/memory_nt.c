/* memory: the x86-64 copies of memory_nt.h and glibc's threshold. */
#include "memory_nt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tunable exists on x86 only (sysdeps/x86/dl-tunables.list). */
#if defined(__linux__) && defined(__GLIBC__) && defined(__x86_64__)
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#define HAVE_LDSO 1
#else
#define HAVE_LDSO 0
#endif

#if HAVE_LDSO
/* The program interpreter (PT_INTERP) of this process: the ld.so that goes
 * with the libc whose memcpy is measured. */
static int find_interp(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            *(const char **)data = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return 1; /* the first object is the program itself */
}

/* The value after `key` and `sep` in one line of ld.so's listings
 * ("glibc.cpu.x86_non_temporal_threshold: 0xc000000 (min: ...)" in
 * --list-tunables, "x86.cpu_features.rep_movsb_stop_threshold=0x80000" in
 * --list-diagnostics), into *v if it is that key's line and a positive
 * number. */
static void figure(const char *line, const char *key, char sep, int64_t *v)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || line[n] != sep)
        return;
    char *end;
    long long x = strtoll(line + n + 1, &end, 0);
    if (end != line + n + 1 && x > 0)
        *v = x;
}

/* Runs `ld.so FLAG` and reads the figures of `keys` (`sep` after each) into
 * v: glibc keeps them in hidden variables, and ld.so's listings are their
 * one public reading. The child inherits the environment, so a
 * GLIBC_TUNABLES setting counts as it does here. posix_spawn, not fork: no
 * copy of an MPI process's address space. A figure stays as it was where it
 * cannot be read. */
static void ldso_read(const char *flag, char sep, const char *const keys[], int64_t *v[], int n)
{
    const char *ldso = NULL;
    int fd[2];
    dl_iterate_phdr(find_interp, &ldso);
    if (!ldso || pipe(fd) != 0)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)ldso, (char *)flag, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, ldso, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    if (!f) {
        close(fd[0]);
    } else {
        char line[256];
        while (fgets(line, sizeof line, f)) /* read to the end, so the child never blocks */
            for (int k = 0; k < n; k++)
                figure(line, keys[k], sep, v[k]);
        fclose(f);
    }
    if (rc == 0) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
}

/* glibc's thresholds as its memcpy uses them: `ld.so --list-diagnostics`
 * (glibc >= 2.34) prints all three after tunables and CPU quirks applied,
 * the stop threshold included, which is no tunable (on AMD glibc sets it to
 * the L2 size, elsewhere to the non-temporal threshold:
 * sysdeps/x86/dl-cacheinfo.h). --list-tunables (glibc 2.33) has the other two. */
static void ldso_thresholds(mem_libc *t)
{
    static const char *const diag[] = {"x86.cpu_features.non_temporal_threshold",
                                       "x86.cpu_features.rep_movsb_threshold",
                                       "x86.cpu_features.rep_movsb_stop_threshold"};
    static const char *const tun[] = {"glibc.cpu.x86_non_temporal_threshold",
                                      "glibc.cpu.x86_rep_movsb_threshold"};
    int64_t *v[] = {&t->nt_threshold, &t->rep_movsb_threshold, &t->rep_movsb_stop_threshold};
    ldso_read("--list-diagnostics", '=', diag, v, 3);
    t->from = "ld.so --list-diagnostics";
    if (t->nt_threshold <= 0) {
        ldso_read("--list-tunables", ':', tun, v, 2);
        t->from = "ld.so --list-tunables";
    }
}
#endif


#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/* glibc's default rule as of 2.26..2.37, from the cache size sysconf reports
 * (glibc computes both from CPUID): 3/4 of the last-level cache, the L2 when
 * there is no L3, 64 MiB when neither is known (glibc >= 2.38's fallback). */
static int64_t sysconf_nt_threshold(void)
{
    long c = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    c = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (c <= 0)
        c = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return c > 0 ? (int64_t)c / 4 * 3 : (int64_t)64 << 20;
}

void fl_memcpy_thresholds(mem_libc *t)
{
    t->nt_threshold = t->rep_movsb_threshold = t->rep_movsb_stop_threshold = -1;
#if HAVE_LDSO
    ldso_thresholds(t);
#endif
    if (t->nt_threshold <= 0)
        t->nt_threshold = sysconf_nt_threshold(), t->from = "sysconf";
}

#define PAGE 4096
#define LINE 64

/* One word with a non-temporal store (movnti). */
static inline void stream_word(char *d, const char *s)
{
    long long w;
    memcpy(&w, s, sizeof w);
    _mm_stream_si64((long long *)(void *)d, w);
}

/* Single words until the destination starts a cache line: the streaming
 * loops' lines are then whole. Returns the bytes done. */
static inline size_t stream_to_line(char *dst, const char *src, size_t bytes)
{
    size_t i = 0;
    for (; i < bytes && ((uintptr_t)(dst + i) & (LINE - 1)); i += 8)
        stream_word(dst + i, src + i);
    return i;
}

/* Normal stores, glibc's loop for copies beyond the reach of `rep movsb`
 * (L(loop_4x_vec_forward) in sysdeps/x86_64/multiarch/
 * memmove-vec-unaligned-erms.S): four 32-byte vectors per turn, unaligned
 * loads, stores aligned to the vector. */
MEM_LOOP __attribute__((target("avx2"))) static void
copy_avx2(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st)
{
    size_t i = 0;
    (void)st;
    for (; i < n && ((uintptr_t)(d + i) & 31); i++)
        d[i] = s[i];
    for (; i + 16 <= n; i += 16) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 4));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 8));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 12));
        _mm256_store_si256((__m256i *)(d + i), a);
        _mm256_store_si256((__m256i *)(d + i + 4), b);
        _mm256_store_si256((__m256i *)(d + i + 8), c);
        _mm256_store_si256((__m256i *)(d + i + 12), e);
    }
    for (; i < n; i++)
        d[i] = s[i];
}

/* The string copy glibc's memcpy uses between x86_rep_movsb_threshold and
 * its stop threshold on CPUs with ERMS (Intel SDM vol. 1, 7.3.9.3: fast
 * string operation). The ABI leaves the direction flag clear. */
static void copy_rep(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st)
{
    size_t c = n * 8;
    (void)st;
    __asm__ __volatile__("rep movsb" : "+D"(d), "+S"(s), "+c"(c) : : "memory");
}

/* 128 bytes from s to d with streaming stores: four 32-byte vectors. */
static inline __attribute__((always_inline, target("avx2"))) void stream_128(char *d, const char *s)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)s);
    __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
    __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
    __m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
    _mm256_stream_si256((__m256i *)d, a);
    _mm256_stream_si256((__m256i *)(d + 32), b);
    _mm256_stream_si256((__m256i *)(d + 64), c);
    _mm256_stream_si256((__m256i *)(d + 96), e);
}

/* Streaming stores, glibc's loop for large copies (L(large_memcpy_4x) in
 * memmove-vec-unaligned-erms.S, glibc >= 2.33): the destination aligned to
 * a line, then four pages at a time, 128 bytes of each per turn with the
 * next two lines of each prefetched, so that loads run in four pages at
 * once while the write-combining buffers fill whole lines; then what is
 * left, 128 bytes per turn, and single words. glibc interleaves two pages
 * below 16 times its threshold unless source and destination alias within
 * a page. Four were faster than either of glibc's loops at 256 MiB on a
 * 2-core AMD EPYC virtual machine (glibc 2.36; alternate ops, median of 61
 * pairs: 1.07 and 1.10 times glibc's two-page loop in two runs, 1.04 times
 * its four-page loop, which a lowered x86_non_temporal_threshold selects).
 * The sfence orders the write-combined lines before anything that
 * follows, as glibc's does. */
MEM_LOOP __attribute__((target("avx2"))) static void
stream_avx2(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st)
{
    char *dst = (char *)d;
    const char *src = (const char *)s;
    size_t bytes = n * 8, i = stream_to_line(dst, src, bytes);
    (void)st;
    for (; i + 4 * PAGE <= bytes; i += 4 * PAGE)
        for (size_t o = i; o < i + PAGE; o += 128) {
            for (size_t p = 0; p < 4 * PAGE; p += PAGE) {
                _mm_prefetch(src + o + p + 128, _MM_HINT_T0);
                _mm_prefetch(src + o + p + 192, _MM_HINT_T0);
            }
            __m256i v[16]; /* all loads first, then all stores, as glibc's */
            for (int p = 0; p < 4; p++)
                for (int k = 0; k < 4; k++)
                    v[4 * p + k] = _mm256_loadu_si256((const __m256i *)(src + o + p * PAGE + 32 * k));
            for (int p = 0; p < 4; p++)
                for (int k = 0; k < 4; k++)
                    _mm256_stream_si256((__m256i *)(dst + o + p * PAGE + 32 * k), v[4 * p + k]);
        }
    for (; i + 128 <= bytes; i += 128)
        stream_128(dst + i, src + i);
    for (; i < bytes; i += 8)
        stream_word(dst + i, src + i);
    _mm_sfence();
}

/* Streaming stores without AVX2: four 16-byte vectors per turn, straight
 * through. glibc's SSE2 copy interleaves pages as its AVX2 copy does; this
 * one does not follow it there (server CPUs have had AVX2 since 2013). */
MEM_LOOP static void stream_sse2(uint64_t *restrict d, const uint64_t *restrict s, size_t n,
                                 size_t st)
{
    char *dst = (char *)d;
    const char *src = (const char *)s;
    size_t bytes = n * 8, i = stream_to_line(dst, src, bytes);
    (void)st;
    for (; i + LINE <= bytes; i += LINE) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), e);
    }
    for (; i < bytes; i += 8)
        stream_word(dst + i, src + i);
    _mm_sfence();
}

/* ERMS, enhanced rep movsb: CPUID leaf 07H, EBX bit 9 (Intel SDM vol. 2A,
 * CPUID). Without it `rep movsb` is no fast copy, and glibc skips it too. */
static int has_erms(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 9));
}

int fl_mem_copies(mem_copy c[MEM_COPIES], mem_copy_fn *portable, const mem_libc *libc)
{
    int k = 0, avx2;
    __builtin_cpu_init();
    avx2 = __builtin_cpu_supports("avx2");
    c[k++] = avx2 ? (mem_copy){"vector loop", 0, copy_avx2, 0, SIZE_MAX, SIZE_MAX}
                  : (mem_copy){"word loop", 0, portable, 0, SIZE_MAX, SIZE_MAX};
    /* from glibc's x86_rep_movsb_threshold up to its non-temporal
     * threshold, beyond which glibc streams on every CPU; glibc's memcpy
     * itself stops at its stop threshold (the L2 size on AMD), and the
     * trial finds out whether it pays beyond */
    size_t nt = libc->nt_threshold > 0 ? (size_t)libc->nt_threshold : SIZE_MAX;
    if (has_erms())
        c[k++] = (mem_copy){"rep movsb", 0, copy_rep,
                            libc->rep_movsb_threshold > 0 ? (size_t)libc->rep_movsb_threshold : 0, nt,
                            libc->rep_movsb_stop_threshold > 0 ? (size_t)libc->rep_movsb_stop_threshold : nt};
    c[k++] = (mem_copy){"streaming loop", 1, avx2 ? stream_avx2 : stream_sse2, 0, SIZE_MAX, SIZE_MAX};
    return k;
}
#else
void fl_memcpy_thresholds(mem_libc *t)
{
    t->nt_threshold = t->rep_movsb_threshold = t->rep_movsb_stop_threshold = -1;
    t->from = "none";
}

int fl_mem_copies(mem_copy c[MEM_COPIES], mem_copy_fn *portable, const mem_libc *libc)
{
    (void)libc;
    c[0] = (mem_copy){"word loop", 0, portable, 0, SIZE_MAX, SIZE_MAX};
    return 1;
}
#endif
