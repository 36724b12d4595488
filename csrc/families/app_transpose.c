/* Family "app": app.transpose (written next). */
#include "app.h"

const fl_kernel fl_app_transpose_kernels[] = {
    {.name = NULL},
};
