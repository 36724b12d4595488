/* Preloaded into the hpcc binary by bench/bench_hpcc.py (--buffers written):
 * every block of 1 MiB or more that malloc returns is written before HPCC
 * sees it.
 *
 * Why: HPCC's ping-pong and ring tests (bench_lat_bw_1.5.x.c) malloc their
 * send buffers and write only their first and last bytes, so the kernel
 * maps every other page of them to its one zero page, and each 2,000,000 B
 * send copies from a single cached 4 KiB page instead of 2 MB of memory.
 * fabriclab writes every page of its buffers (fl_alloc), as a program's
 * data is. Written, HPCC's 2,000,000 B ping-pong bandwidth fell from
 * 14.3-15.1 to 10.8-12.4 GB/s on the 2-vCPU VM (MPICH 5, 2 ranks). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

void *malloc(size_t n)
{
    static void *(*next)(size_t);
    if (!next)
        next = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    void *p = next(n);
    if (p && n >= ((size_t)1 << 20))
        memset(p, 0xa5, n);
    return p;
}
