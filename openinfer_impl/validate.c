/* validate.c - not written yet. */
#include "internal.h"
