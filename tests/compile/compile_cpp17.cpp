/* Compile test: the whole library, in implementation mode, as strict C++17. */
#define OPENINFER_IMPLEMENTATION
#include "../../openinfer.h"

OI_GRAPH(compile_check,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(y, f32[B], @init(5.0)) )
  OI_BLOCK(entry,
    OI_OP(mul, y, x) OI_TO(y)
    OI_RETURN()
  )
)

int main(void) { return compile_check() ? 0 : 1; }
