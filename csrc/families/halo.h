/* The neighbourhoods of a halo exchange, shared by message_halo.c (the
 * hand-written exchange) and coll_neighbor.c (MPI's neighbourhood
 * collectives): IMB-P2P's periodic grids of ranks (imb_p2p_stencil2d.c,
 * imb_p2p_stencil3d.c), with their neighbours in IMB's order, and the order
 * rule of repeated edges that both verify passes follow. The same
 * arithmetic is written in Python (suite/halo.py), which checks a run's
 * ranks against it before anything is launched. */
#ifndef FL_HALO_H
#define FL_HALO_H

#include "../fl.h"

#define HALO_MAX_DIMS 3

/* IMB-P2P's grid of n ranks in `dims` (2 or 3) dimensions, x first, into
 * len[]: 0, or -1 where IMB calls the benchmark invalid for n (a side
 * below 2, or no grid of exactly n). IMB's loops as written; the 3-D one
 * is bounded here where IMB's would step its z side below 1. */
static inline int halo_grid(int n, int dims, int len[HALO_MAX_DIMS])
{
    int x = 2, y = 2, z = dims == 3 ? 2 : 1;
    while (x * y * z < n)
        x++, y++, z += dims == 3;
    if (dims == 2 && x * y > n) {
        while (y > 1 && n % y)
            y--;
        x = n / y;
    }
    while (dims == 3 && x * y * z > n && z >= 1) {
        int lx = 2, ly = 2, m = 0;
        z--;
        while (z > 1 && n % z)
            z--;
        if (z != 0)
            m = n / z;
        while (lx * ly < m)
            lx++, ly++;
        if (lx * ly > m) {
            while (ly > 1 && m % ly)
                ly--;
            lx = m / ly;
        }
        if (ly >= z)
            x = lx, y = ly;
    }
    len[0] = x, len[1] = y, len[2] = z;
    return x < 2 || y < 2 || (dims == 3 && z < 2) || x * y * z != n ? -1 : 0;
}

/* The rank at grid coordinates c (periodic), x fastest as IMB numbers them. */
static inline int halo_rank_at(const int c[HALO_MAX_DIMS], int dims, const int len[HALO_MAX_DIMS])
{
    int r = 0;
    for (int d = dims - 1; d >= 0; d--)
        r = r * len[d] + (c[d] % len[d] + len[d]) % len[d];
    return r;
}

/* Rank `rank`'s 2 x dims neighbours in IMB's order: x-1, x+1, y-1, y+1, z-1, z+1. */
static inline void halo_neighbours(int rank, int dims, const int len[HALO_MAX_DIMS], int *peer)
{
    int c[HALO_MAX_DIMS] = {0};
    for (int d = 0, r = rank; d < dims; d++)
        c[d] = r % len[d], r /= len[d];
    for (int d = 0; d < dims; d++)
        for (int k = 0; k < 2; k++) {
            int at[HALO_MAX_DIMS] = {c[0], c[1], c[2]};
            at[d] += k ? 1 : -1;
            peer[2 * d + k] = halo_rank_at(at, dims, len);
        }
}

/* On a small grid one rank can be a neighbour twice (both x neighbours of a
 * 2-wide grid); messages between two ranks with one tag match in the order
 * they were posted (MPI 4.1 sec. 3.5, non-overtaking), so the k-th receive
 * from q takes q's k-th send to this rank. The ordinal of slot i among the
 * slots of list[] that name the same rank: */
static inline int halo_ordinal(const int *list, int i)
{
    int k = 0;
    for (int j = 0; j < i; j++)
        k += list[j] == list[i];
    return k;
}

/* The pattern seed of the block rank `from` sends to rank `to` as its k-th to it. */
static inline uint64_t halo_seed(int from, int to, int k)
{
    return ((uint64_t)(from + 1) << 32) ^ ((uint64_t)(to + 1) << 12) ^ (uint64_t)(k + 1) ^ 0x5a17u;
}

#endif
