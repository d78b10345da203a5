/* openinfer.c - the command line tool (inspect, verify, graph, run, devices). */
#include "../openinfer.h"
#include <stdio.h>
int main(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "openinfer: not written yet\n"); return 2; }
