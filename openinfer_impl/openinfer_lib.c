/* openinfer_lib.c - the library as built by meson: the header in
 * implementation mode, exactly as a drop-in user compiles it. */
#define OPENINFER_IMPLEMENTATION
#include "../openinfer.h"
