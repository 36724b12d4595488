#include "fabric.h"

const fl_kernel fl_fabric_via_kernels[] = {{.name = NULL}};
