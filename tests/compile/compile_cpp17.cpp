/* Compile test: the whole library, in implementation mode, as strict C++17,
 * with a graph that uses every DSL construct (meson builds this with
 * -Wall -Wextra -Werror -pedantic; the sanitizer build does it with clang). */
#define OPENINFER_IMPLEMENTATION
#include "../../openinfer.h"
#include "../graphs_every_construct.h"

int main(void) { return every_construct() ? 0 : 1; }
