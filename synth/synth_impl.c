/* synth_impl.c - the synthesizer as one unit: included by synth_lib.c (the
 * library meson builds) and by openinfer_impl.c when OPENINFER_SYNTH is
 * defined (the drop-in header). */
#include "synth.c"
#include "unroll.c"
#include "schedule.c"
#include "lang.c"
#include "render.c"
#include "emit.c"
#include "vulkan_check.c"
#include "vulkan_plan.c"
#include "vulkan_kernels.c"
#include "emit_vulkan.c"
