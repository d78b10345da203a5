/* fuzz_lib.c - the library (with the synthesizer) compiled once with
 * libFuzzer's coverage instrumentation, for every fuzz target to link:
 * each target compiling the header's implementation itself took some two
 * minutes of a sanitized build apiece. */
#define OPENINFER_IMPLEMENTATION
#define OPENINFER_SYNTH
#include "../../openinfer.h"
