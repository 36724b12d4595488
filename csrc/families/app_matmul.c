/* Family "app": app.matmul (written next). */
#include "app.h"

const fl_kernel fl_app_matmul_kernels[] = {
    {.name = NULL},
};
