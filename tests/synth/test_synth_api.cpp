/* test_synth_api.cpp - test_synth_api.c compiled as C++17. */
#include "test_synth_api.c"
