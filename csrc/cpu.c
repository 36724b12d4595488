/* The CPU a rank uses over a point's samples (docs/core-protocol.md,
 * "rank_cpu"): getrusage(RUSAGE_SELF), so every thread of the process counts,
 * an MPI library's progress threads and a kernel's own threads with the
 * main one, as netperf's and iperf3's CPU figures count the whole process.
 * The runner reads it around each round of samples (runner.c, sample) and
 * sums the rounds; Python derives utilisation and service demand from the
 * raw seconds (analysis/cpu.py). */
#include "fl.h"

#include <math.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

static double seconds(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

fl_cpu_use fl_cpu_now(void)
{
    struct rusage u;
    fl_cpu_use x = {0, 0, fl_now()};
    if (getrusage(RUSAGE_SELF, &u) == 0) {
        x.user_s = seconds(u.ru_utime);
        x.sys_s = seconds(u.ru_stime);
    }
    return x;
}

void fl_cpu_add_since(fl_cpu_use *sum, fl_cpu_use since)
{
    fl_cpu_use now = fl_cpu_now();
    sum->user_s += now.user_s - since.user_s;
    sum->sys_s += now.sys_s - since.sys_s;
    sum->wall_s += now.wall_s - since.wall_s;
}

/* Collective: every rank's sums to rank 0, which appends
 * ,"rank_cpu":[{"user_s":U,"sys_s":S,"wall_s":W},...]. */
void fl_cpu_gather(const fl_ctx *c, const fl_cpu_use *mine, fl_buf *j)
{
    /* user and system in whole microseconds, as getrusage counts them */
    double v[3] = {nearbyint(mine->user_s * 1e6) / 1e6, nearbyint(mine->sys_s * 1e6) / 1e6, mine->wall_s};
    double *all = NULL;
    if (c->rank == 0 && !(all = malloc(sizeof *all * 3 * (size_t)c->nranks)))
        fl_die("out of memory");
    MPI_Gather(v, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, c->comm);
    if (c->rank != 0)
        return;
    fl_buf_printf(j, ",\"rank_cpu\":[");
    for (int q = 0; q < c->nranks; q++) {
        fl_buf_printf(j, "%s{\"user_s\":", q ? "," : "");
        fl_buf_num(j, all[3 * q]);
        fl_buf_printf(j, ",\"sys_s\":");
        fl_buf_num(j, all[3 * q + 1]);
        fl_buf_printf(j, ",\"wall_s\":");
        fl_buf_num(j, all[3 * q + 2]);
        fl_buf_printf(j, "}");
    }
    fl_buf_printf(j, "]");
    free(all);
}

/* The smallest step of user + system seconds seen while spinning (at most
 * three steps, 30 ms in all; 0 if none came): about 1 us where the kernel
 * reads its scheduler's run time, a tick where it counts ticks. The split
 * between user and system is sampled at the kernel's tick either way. */
static double cpu_step(void)
{
    fl_cpu_use a = fl_cpu_now(), b;
    double best = 0, stop = a.wall_s + 0.03;
    for (int steps = 0; steps < 3;) {
        b = fl_cpu_now();
        if (b.wall_s > stop)
            break;
        double d = (b.user_s + b.sys_s) - (a.user_s + a.sys_s);
        if (d > 0) {
            best = best > 0 && best < d ? best : d;
            steps++;
            a = b;
        }
    }
    return best;
}

void fl_cpu_clock(fl_buf *j)
{
    long hz = sysconf(_SC_CLK_TCK);
    fl_buf_printf(j, ",\"cpu\":{\"name\":\"getrusage(RUSAGE_SELF)\",\"step_s\":");
    fl_buf_num(j, cpu_step());
    fl_buf_printf(j, ",\"tick_s\":");
    fl_buf_num(j, hz > 0 ? 1.0 / (double)hz : 0.01);
    fl_buf_printf(j, "}");
}
