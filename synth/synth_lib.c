/* synth_lib.c - the synthesizer as meson builds it: its own object in the
 * static library, so a program that only simulates never links it. */
#include "../openinfer.h"
#include "synth_impl.c"
