/* kernels.c - not written yet. */
#include "../openinfer_impl/internal.h"
