/* Family "app": app.sort (written next). */
#include "app.h"

const fl_kernel fl_app_sort_kernels[] = {
    {.name = NULL},
};
