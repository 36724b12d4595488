/* The benchmark registry is data: each family exports a table, and this file
 * only lists the tables. Adding a family means one line below. */
#include "fl.h"

#include <string.h>

static const fl_bench *const families[] = {
    fl_memory_benches,
    fl_deposit_benches,
    fl_message_benches,
    fl_tcp_benches,
};
#define NFAMILIES (sizeof families / sizeof families[0])

const fl_bench *fl_find_bench(const char *name)
{
    for (size_t f = 0; f < NFAMILIES; f++)
        for (const fl_bench *b = families[f]; b->name; b++)
            if (strcmp(b->name, name) == 0)
                return b;
    return NULL;
}

void fl_list_benches(void)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return;
    for (size_t f = 0; f < NFAMILIES; f++)
        for (const fl_bench *b = families[f]; b->name; b++) {
            fl_buf o = {0};
            fl_buf_printf(&o, "{\"name\":");
            fl_buf_str(&o, b->name);
            fl_buf_printf(&o, ",\"summary\":");
            fl_buf_str(&o, b->summary ? b->summary : "");
            fl_buf_printf(&o, ",\"min_ranks\":%d,\"axes\":[\"size\"%s],\"params\":",
                          b->min_ranks,
                          (b->axes & FL_AXIS_STRIDE) ? ",\"stride\"" : "");
            fl_buf_str(&o, b->params ? b->params : "");
            fl_buf_printf(&o, "}");
            fl_emit(o.p);
            fl_buf_free(&o);
        }
}
