/* Family "coll": MPI's collective operations on the first ACTIVE ranks of a
 * point's layout (role 'b', the rest idle), each op one call of the
 * collective, in one of three forms: blocking (MPI_Allreduce), non-blocking
 * with its wait inside the op (MPI_Iallreduce + MPI_Wait) or persistent
 * (MPI 4's MPI_Allreduce_init once at setup, MPI_Start + MPI_Wait per op).
 *
 * SIZE is bytes of the count argument the call takes, as OSU and IMB give
 * it (docs/collectives.md): the whole vector of allreduce, reduce, scan,
 * bcast, reduce_scatter and reduce_scatter_block (split into equal blocks of
 * SIZE / N, the remainder elements of reduce_scatter going to the first
 * ranks); one block of allgather(v), gather(v), scatter(v) and alltoall(v).
 * The v forms take equal counts, as IMB's and OSU's do. reduce_local is
 * MPI_Reduce_local on each active rank alone (the model's gamma, the cost of
 * one byte's reduction; blocking only: the MPI has no other form). bytes_per_op is the
 * data one op is about (nccl-tests' S, suite/benchmarks.py COLLECTIVES). */
#ifndef FL_COLL_H
#define FL_COLL_H

#include "app.h"

/* Persistent collectives are MPI 4's; Open MPI 5 offers them while it still
 * reports MPI 3.1. */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define COLL_PERSISTENT 1
#else
#define COLL_PERSISTENT 0
#endif

#define CONTROL_LEN 96
#define SELECTION_LEN 512

enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT };
enum { T_INT8, T_INT32, T_INT64, T_FLOAT, T_DOUBLE };
enum { R_SUM, R_MAX, R_MIN, R_BAND, R_BOR, R_BXOR };
/* The operations; their calls and result arithmetic are coll_ops.c's. */
enum {
    C_ALLREDUCE, C_BCAST, C_REDUCE, C_ALLGATHER, C_ALLGATHERV, C_REDUCE_SCATTER,
    C_REDUCE_SCATTER_BLOCK, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_ALLTOALL,
    C_ALLTOALLV, C_SCAN, C_BARRIER,
    C_REDUCE_LOCAL          /* MPI_Reduce_local: no communication, no algorithm control */
};

typedef struct {
    app_common a;            /* first member: the active ranks' communicator */
    int op, form, sync, in_place, root_shift;
    int dtype, reduce;       /* T_*, R_* */
    MPI_Datatype type;
    MPI_Op rop;
    int esize;
    int root, next;          /* the fixed root; the op's root when it rotates */
    int64_t count;           /* elements of SIZE */
    int64_t block;           /* reduce_scatter_block: elements each rank ends with */
    int64_t send_n, recv_n;  /* elements of each buffer */
    char *sbuf, *rbuf;
    int *counts, *displs;    /* the v forms and reduce_scatter: per rank, in elements */
    MPI_Request *preq;       /* persistent: one request per root (or one) */
    int npreq;
    char *info;              /* the point's info (fl_shape), for the first wrong element */
    char control[CONTROL_LEN];   /* the library's algorithm control for op and form ("" if none) */
    char algorithm[CONTROL_LEN]; /* its value in force, as the library names it */
    char selection[SELECTION_LEN]; /* the library's selection file in force ("" if none) */
    int selection_read;            /* the library is seen to have read it */
    int overlap;             /* non-blocking, with a compute loop between post and wait (coll_overlap.c) */
    int64_t steps;           /* the compute loop's steps: t_pure's worth on this rank */
    double t_pure, t_cpu;    /* the calibration's, slowest rank */
    double sink;             /* the compute loop's result, kept so that it runs */
} coll_state;

/* The call of s->op in `form` with `root`; FORM_PERSISTENT initialises
 * *req. MPI's return code. */
int coll_call(coll_state *s, int form, int root, MPI_Request *req);
/* The MPI name of an operation ("MPI_Allreduce"). */
const char *coll_name(int op);
/* Elements of the send and receive buffers (s->send_n, s->recv_n), from
 * s->count, s->a.n and s->in_place (setup has checked that n x count, the
 * largest, fits an MPI int count: a displacement of the v forms is one). */
void coll_sizes(coll_state *s);
/* Writes every rank's input, as coll_expect assumes it. */
void coll_fill(coll_state *s, int root);
/* Mismatched elements of this rank's result after one op with `root`; the
 * first one's index and value, and what was expected, in *at, *got, *want. */
int64_t coll_check(const coll_state *s, int root, int64_t *checked, int64_t *at, double *got,
                   double *want);

/* The algorithm control of s->op in s->form and the value in force, read
 * through MPI_T (coll_controls.c); both "" where the library has none. */
void coll_control_read(const coll_state *s, char *control, char *value, size_t len);
/* The library's collective-selection file in force ("" when none is set or
 * the library has none) and whether the library is seen to have read it:
 * MPI_T reports it (Open MPI) or this process maps it (MPICH). */
void coll_selection_read(char *path, size_t len, int *read);

/* Overlap (coll_overlap.c): the calibration of t_pure, the compute loop and
 * t_cpu, with the point's phases and info; one overlapped op (post, compute,
 * wait) with its phases kept. */
void coll_overlap_setup(coll_state *s, fl_shape *shape);
void coll_overlapped(coll_state *s, int root);

#endif
