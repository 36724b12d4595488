/* placeholder table */
#include "../fl.h"

const fl_kernel fl_deposit_pattern_kernels[] = {
    {.name = NULL},
};
