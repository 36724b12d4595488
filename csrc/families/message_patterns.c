/* placeholder table */
#include "../fl.h"

const fl_kernel fl_message_pattern_kernels[] = {
    {.name = NULL},
};
