/* int_graphs.c - integer arithmetic for the synthesizer's parity test: i8
 * products that wrap, i32 and u16 sums and differences, negation, and
 * comparisons of the results (export_example builds it like an example). */
#include "../../openinfer.h"

OI_GRAPH(int_ops,
  OI_DYNAMIC( OI_VAR(s8, i8[6]) OI_VAR(b, i32[2, 3]) OI_VAR(c, u16[3]) )
  OI_VOLATILE(
    OI_VAR(p, i8[6]) OI_VAR(q, i32[2, 3], @init(7)) OI_VAR(r, u16[2, 3])
    OI_VAR(big, bool[2, 3]) OI_VAR(n, i32[2, 3])
  )
  OI_BLOCK(entry,
    OI_OP(mul, s8, s8) OI_TO(p)
    OI_OP(mul, p, p) OI_TO(p)
    OI_OP(mul, p, s8) OI_TO(p)
    OI_OP(sub, q, b) OI_TO(q)
    OI_OP(mul, q, q) OI_TO(q)
    OI_OP(neg, q) OI_TO(n)
    OI_OP(gt, q, b) OI_TO(big)
    OI_OP(add, c, c) OI_TO(c)
    OI_OP(sub, r, c) OI_TO(r)
    OI_RETURN()
  )
)

int main(void) { return 0; }
