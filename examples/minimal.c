/* minimal.c - not written yet. */
#include "../openinfer.h"
int main(void) { return 0; }
