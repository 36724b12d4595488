#include "fabric.h"

const fl_kernel fl_fabric_pattern_kernels[] = {{.name = NULL}};
