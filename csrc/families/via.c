/* placeholder table */
#include "../fl.h"

const fl_kernel fl_via_kernels[] = {
    {.name = NULL},
};
