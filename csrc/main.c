/* fabriclab-core: init -> parse -> look up -> run -> finalize.
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
    int rank, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    const char *why = NULL;
    rc = fl_opts_parse(argc, argv, &opts, &name, err, sizeof err);
    if (rc == FL_OPTS_RUN && (why = fl_find_bench(name, &bench))) {
        snprintf(err, sizeof err, "%s '%s' (see --list)", why, name);
        rc = FL_OPTS_BAD;
    }
    if (rc == FL_OPTS_RUN)
        rc = fl_opts_bind(&bench, &opts, err, sizeof err);

    if (rc == FL_OPTS_LIST)
        fl_list_benches();
    else if (rc == FL_OPTS_BAD && rank == 0)
        fl_emit_error(err);
    else if (rc == FL_OPTS_RUN)
        fl_run(&bench, &opts);

    fl_opts_free(&opts);
    MPI_Finalize();
    return rc == FL_OPTS_BAD ? 2 : 0;
}
