/* Compile test: the whole library, in implementation mode, as strict C11,
 * with a graph that uses every DSL construct (meson builds this with
 * -Wall -Wextra -Werror -pedantic; the sanitizer build does it with clang). */
#include <stdbool.h> /* first, as applications do: bool is then a macro in C */
#define OPENINFER_IMPLEMENTATION
#include "../../openinfer.h"
#include "../graphs_every_construct.h"
#include "typed_io.h"

/* Also run (meson test compile_c11): typed I/O through the macros. */
int main(void) {
    CHECK_MSG(every_construct() != NULL, "every_construct: %s", oi_last_error());
    return typed_io_check("compile_c11");
}
