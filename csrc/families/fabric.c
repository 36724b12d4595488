/* Family "fabric": placeholder tables while the kernels are written. */
#include "../fl.h"

#include <stdio.h>

const fl_kernel fl_fabric_kernels[] = {{.name = NULL}};
const fl_kernel fl_fabric_pattern_kernels[] = {{.name = NULL}};
const fl_kernel fl_fabric_via_kernels[] = {{.name = NULL}};

int fl_fabric_probe(void)
{
    printf("{\"type\":\"error\",\"message\":\"no probe yet\"}\n");
    return 3;
}
