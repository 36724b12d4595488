/* Preloaded into IMB-MPI1 by bench/bench_rate.py (--imb-buffers aligned, the
 * default): IMB's buffers, which it takes from MPI_Alloc_mem
 * (IMB_mem_manager.c, IMB_v_alloc), start on a page, as fabriclab's and
 * OSU's do.
 *
 * Why: MPICH serves MPI_Alloc_mem from malloc, 16 bytes past a cache line
 * (2896 and 3984 mod 4096 in one run), and IMB's Uniband and Biband then
 * read 3-7% below the same binary with page-aligned buffers at 8-64 KiB on
 * the 2-vCPU VM (MPICH 5.0.2, 2 ranks), the whole of their gap to fabriclab
 * there (docs/message-rate.md). IMB's loop and timing are untouched. The
 * memory is plain memory, which is all IMB-MPI1's two-sided tests ask of
 * MPI_Alloc_mem. No mpi.h: MPI_Aint is a long and the info handle goes
 * unused, under MPICH's and Open MPI's x86-64 ABIs alike. */
#include <stdlib.h>

int MPI_Alloc_mem(long size, void *info, void *baseptr)
{
    void *p = NULL;
    (void)info;
    if (posix_memalign(&p, 4096, size > 0 ? (size_t)size : 8) != 0)
        return 1; /* not MPI_SUCCESS: IMB reports the failed allocation */
    *(void **)baseptr = p;
    return 0;
}

int MPI_Free_mem(void *base)
{
    free(base);
    return 0;
}
