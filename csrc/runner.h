/* The runner's state for one run and the calls between its files: runner.c
 * (the sweep and the rounds of samples), runner_calibrate.c (warm-up, batch
 * and stopping rule), runner_readings.c (an app's phases and a kernel's
 * counters beside the samples) and runner_emit.c (the point and end lines). */
#ifndef FL_RUNNER_H
#define FL_RUNNER_H

#include "fl.h"

enum { GO = 0, CONVERGED, TIME_CAP, MAX_SAMPLES };

typedef struct {
    fl_ctx ctx;
    fl_opts opts;         /* as given, with sample_time resolved */
    const fl_bench *b;
    void *bench_state;
    double *round;        /* one round of per-op times, every rank */
    double *samples;      /* all samples of a point, rank 0 */
    double *sorted;       /* scratch for the stopping rule, rank 0 */
    double *gathered;     /* pattern benchmarks, rank 0: one round of every rank */
    double *rank_samples; /* pattern benchmarks, rank 0: nranks x max_samples */
    char *hosts;          /* rank 0: every rank's processor name */
    int points;
    /* App kernels (k->phases): per phase, one round of per-op phase times on
     * every rank, and rank 0's samples of their mean over the timed ranks. */
    double *phase_round, *phase_samples;
    int nphases, timed_ranks;
    /* Kernel counters (k->counters): this rank's values before the first
     * sample and after each, (max_samples + 1) x ncounters; any_counters:
     * whether some rank's setup named counters this point. */
    double *counter_vals;
    int ncounters, any_counters;
    /* This point's CPU use over its rounds of samples (cpu.c): each round from
     * after its start barrier to after its last measure, summed. */
    fl_cpu_use cpu;
    MPI_Errhandler eh;    /* MPI errors as error lines (on_mpi_error) */
} fl_run_state;

/* runner_calibrate.c: warm-up, batch calibration and the stopping rule. */
void runner_decide(const fl_run_state *r, int n, double t0, double per_sample, int64_t ctl[2]);
int64_t runner_calibrate(const fl_run_state *r, void *state, const fl_shape *sh, double *t1);
int64_t runner_warm(const fl_run_state *r, void *state, int64_t count, double t0, double until);
int64_t runner_settle(const fl_run_state *r, void *state, int64_t batch, double t1,
                      double t0, double until);

/* runner_readings.c: an app's phases of an op and a kernel's counters. */
int runner_count_phases(const char *names);
void runner_phase_begin(const fl_run_state *r, void *state);
void runner_phase_end(fl_run_state *r, void *state, int i, int k, int64_t batch, int timed);
void runner_keep_phases(fl_run_state *r, int k, int n0);
void runner_emit_phases(fl_buf *j, const fl_run_state *r, const fl_shape *sh, int n);
int runner_count_names(const char *names);
void runner_read_counters(const fl_run_state *r, void *state, int at);
void runner_gather_counters(const fl_run_state *r, const fl_shape *sh, int n, fl_buf *j);

/* runner_emit.c: the begin, skip, point and end lines (docs/core-protocol.md). */
void runner_emit_where(const fl_run_state *r, const char *type, const fl_point *pt,
                       const char *reason);
int64_t *runner_gather_held(const fl_run_state *r, const fl_point *pt, const fl_shape *sh,
                            int64_t base);
void runner_emit_point(const fl_run_state *r, const fl_point *pt, fl_shape *sh,
                       const int64_t *per, const int64_t *held, int64_t warmup, int64_t batch,
                       int n, int stop, double elapsed, const int64_t *validation, const char *extra);
void runner_emit_end(const fl_run_state *r);

#endif
