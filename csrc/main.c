/* fabriclab-core: parse -> look up -> init (at the thread level the
 * benchmark needs) -> run -> finalize.
 * Protocol and exit codes: docs/core-protocol.md (0 ok, 2 bad input,
 * 3 a failure that aborted the job). */
#include "fl.h"

#include <stdio.h>
#include <string.h>

/* --probe LEVEL: what the level's library offers, without MPI (fl.h). */
static int probe(const char *level)
{
    if (strcmp(level, "coll") == 0)
        return fl_coll_probe();
#ifdef FL_HAVE_FABRIC
    if (strcmp(level, "fabric") == 0)
        return fl_fabric_probe();
#endif
#ifdef FL_HAVE_UCX
    if (strcmp(level, "ucx") == 0)
        return fl_ucx_probe();
#endif
    fl_buf o = {0};
    fl_buf_printf(&o, "{\"type\":\"error\",\"message\":");
    fl_buf_str(&o, "this core was built without that level (measure/libraries.py says why)");
    fl_buf_printf(&o, ",\"level\":");
    fl_buf_str(&o, level);
    fl_buf_printf(&o, "}");
    fl_emit(o.p);
    fl_buf_free(&o);
    return 2;
}

/* The level granted is below the one the benchmark needs: one error line
 * ("refused": Python ends the run as bad input, exit 2), exit 2. */
static void refuse_level(int required, int provided)
{
    fl_buf o = {0};
    char why[FL_INFO_LEN];
    snprintf(why, sizeof why, "runs several threads per rank and needs MPI_THREAD_%s; this MPI granted "
             "MPI_THREAD_%s", fl_thread_level_name(required), fl_thread_level_name(provided));
    fl_buf_printf(&o, "{\"type\":\"error\",\"message\":");
    fl_buf_str(&o, why);
    fl_buf_printf(&o, ",\"refused\":true,\"thread_level\":{\"required\":\"%s\",\"provided\":\"%s\"}}",
                  fl_thread_level_name(required), fl_thread_level_name(provided));
    fl_emit(o.p);
    fl_buf_free(&o);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--probe") == 0)
        return probe(argv[2]);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) { /* no MPI: a singleton's init leaves files in /dev/shm */
        fl_list_benches();
        return 0;
    }

    fl_opts opts;
    const char *name = NULL;
    fl_bench bench;
    char err[FL_INFO_LEN] = "";
    int rank, rc, provided = MPI_THREAD_SINGLE;

    /* parsed before MPI is up (it needs none), so that MPI starts at the
     * thread level the benchmark needs: MPI_THREAD_MULTIPLE only for those
     * whose facts say `threads`, MPI_Init's level for every other, whose
     * figures MPICH's locks under MPI_THREAD_MULTIPLE would change */
    const char *why = NULL;
    rc = fl_opts_parse(argc, argv, &opts, &name, err, sizeof err);
    if (rc == FL_OPTS_RUN && (why = fl_find_bench(name, &bench))) {
        snprintf(err, sizeof err, "%s '%s' (see --list)", why, name);
        rc = FL_OPTS_BAD;
    }
    const int required = rc == FL_OPTS_RUN ? fl_thread_level(bench.facts) : MPI_THREAD_SINGLE;

    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    if (rc == FL_OPTS_RUN)
        rc = fl_opts_bind(&bench, &opts, err, sizeof err);
    const int refused = rc == FL_OPTS_RUN && provided < required;

    if (refused && rank == 0)
        refuse_level(required, provided);
    else if (rc == FL_OPTS_LIST)
        fl_list_benches();
    else if (rc == FL_OPTS_BAD && rank == 0)
        fl_emit_error(err);
    else if (rc == FL_OPTS_RUN && !refused)
        fl_run(&bench, &opts);

    fl_opts_free(&opts);
    MPI_Finalize();
    return rc == FL_OPTS_BAD || refused ? 2 : 0;
}
