#!/usr/bin/env python3
"""Writes synth/embedded.h: the files the synthesizer copies verbatim into
every emitted folder, as arrays of C string lines (so no string literal
passes ISO C's 4095-character minimum):

    kernels/scalar.h          -> oi__sy_text_scalar_h  (emitted as oi_scalar.h)
    kernels/scalar_math.h     -> oi__sy_text_scalar_math_h (C target: oi_scalar_math.h,
        where an elementwise kernel calls exp, tanh, sigmoid, silu or gelu)
    openinfer_impl/npy.h      -> oi__sy_text_npy_h     (emitted as npy.h)
    synth/driver_template.c   -> oi__sy_text_driver_c  (the end of main.c)
    vulkan/shaders/math.glsl  -> oi__sy_text_math_glsl (Vulkan target: oi_math.glsl,
        with kernels/scalar_math.h pasted in at its #include: the f32
        exp, tanh and gelu the simulator runs)
    vulkan/shaders/matmul_tiles.glsl -> oi__sy_text_matmul_tiles_glsl (Vulkan:
        oi_matmul_tiles.glsl, the tile loops of the backend's matmul.comp)
    vulkan/shaders/matmul_coopmat_tiles.glsl -> oi__sy_text_matmul_coopmat_tiles_glsl
        (Vulkan: oi_matmul_coopmat_tiles.glsl, matmul_coopmat.comp's body)
    vulkan/shaders/gemm_slices.glsl -> oi__sy_text_gemm_slices_glsl (Vulkan:
        oi_gemm_slices.glsl, gemm_epilogue.comp's sum of a split product)
    vulkan/gen_spirv.py       -> oi__sy_text_gen_spirv_py (Vulkan, with cooperative
        matrices: oi_gen_spirv.py, whose coopmat-khr rewrite the Makefile runs)
    synth/vulkan_runtime_template.c -> oi__sy_text_vk_runtime (Vulkan: oi_vk_runtime.h)
    vulkan/shaders/common.glsl's region -> oi__sy_text_float_glsl (Vulkan: in
        oi_kernel.glsl: the NaN/inf tests math.glsl needs)
    vulkan/shaders/rope.comp's region -> oi__sy_text_rope_glsl (Vulkan: oi_rope.glsl,
        the float-float angle and its cos and sin)
    vulkan/shaders/matvec_quant.comp's region -> oi__sy_text_quant_glsl (Vulkan:
        oi_quant_blocks.glsl, the ggml blocks and activations="q8"'s block dot)
    synth/cpu_runtime_template.h -> oi__sy_text_runtime_h (emitted as
        oi_runtime.h: the thread pool of threaded folders, with
        openinfer_impl/usable_cpus.h pasted in at its #include)
    kernels/half.h            -> oi__sy_text_half_h   (emitted as oi_half.h
        where default_precision is fp16/bf16: the f32 <-> f16/bf16 rounding)
    kernels/gemm.c's regions  -> oi__sy_text_gemm_h    (emitted as oi_gemm.h
        between "synth-embed begin" and "synth-embed end": its ISA macros
        and micro-kernels, then kernels/scalar_math.h whole (the f32 exp
        and gelu, exact gelu's constants), then vexp.h's regions,
        elementwise.c's (relu, clamp, hard_sigmoid and hard_swish in the
        ISA's lanes, for the conv epilogues), conv.c's (global_avg_pool's
        f64 sums) and kernels/nn.c's (attention's direct f32 path and its
        decode loops), after a
        prelude of the headers they need)
    kernels/quant.c's regions -> oi__sy_text_quant_h   (emitted as oi_quant.h
        where a kernel runs matmul_q4 with activations="q8": the block
        formats, x's rounding into int8 blocks and the integer dot products
        of every ISA, after gemm.c's first region (its ISA macros), its
        512-bit folds (the region whose begin line names oi_quant.h) and a prelude; it includes
        oi_half.h, emitted beside it)

    scripts/embed_synth_sources.py           rewrite synth/embedded.h
    scripts/embed_synth_sources.py --check   exit 1 if it is stale (a test)
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = [
    ("oi__sy_text_scalar_h", "kernels/scalar.h"),
    ("oi__sy_text_npy_h", "openinfer_impl/npy.h"),
    ("oi__sy_text_driver_c", "synth/driver_template.c"),
    ("oi__sy_text_math_glsl", "vulkan/shaders/math.glsl"),
    ("oi__sy_text_matmul_tiles_glsl", "vulkan/shaders/matmul_tiles.glsl"),
    ("oi__sy_text_matmul_coopmat_tiles_glsl", "vulkan/shaders/matmul_coopmat_tiles.glsl"),
    ("oi__sy_text_gemm_slices_glsl", "vulkan/shaders/gemm_slices.glsl"),
    ("oi__sy_text_gen_spirv_py", "vulkan/gen_spirv.py"),
    ("oi__sy_text_vk_runtime", "synth/vulkan_runtime_template.c"),
    ("oi__sy_text_runtime_h", "synth/cpu_runtime_template.h"),
    ("oi__sy_text_half_h", "kernels/half.h"),
    ("oi__sy_text_scalar_math_h", "kernels/scalar_math.h"),
]
OUT = "synth/embedded.h"
GEMM_PRELUDE = (
    "/* oi_gemm.h - kernels/gemm.c's micro-kernels, copied by the synthesizer\n"
    " * (the regions marked synth-embed in that file). */\n"
    "#ifndef OI_GEMM_H\n#define OI_GEMM_H\n"
    "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n"
)


def region_list(path):
    """The regions of path between "synth-embed begin" and "synth-embed end",
    each a list of lines."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    out, inside = [], False
    for line in lines:
        if "synth-embed end" in line:
            inside = False
            out[-1].append("\n")
        elif "synth-embed begin" in line:
            inside = True
            out.append([])
        elif inside:
            out[-1].append(line)
    return out


def region_begins(path):
    """The "synth-embed begin" line of each region of path, in order."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return [line for line in f if "synth-embed begin" in line]


def regions(path):
    """The lines of every marked region of path, in order."""
    return [line for region in region_list(path) for line in region]


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def with_pasted(text, path):
    """text with its `#include "NAME"` line (NAME: path's file name) replaced
    by that file, so an emitted file that needs it stays one file."""
    line = '#include "%s"\n' % os.path.basename(path)
    if line not in text:
        sys.exit("embed_synth_sources.py: no %s" % line.strip())
    return text.replace(line, read(path))


def gemm_regions():
    """gemm.c's marked regions (its ISA macros, the micro-kernels: the
    second closes the #if it leaves open; then the B packing), then
    scalar_math.h (exact gelu, for the gemm's activation, and its
    constants, which vexp.h's loops take), vexp.h's regions,
    elementwise.c's and nn.c's (attention, on vexp.h's e^), after the
    prelude."""
    gemm = region_list("kernels/gemm.c")
    out = [GEMM_PRELUDE] + gemm[0] + gemm[1] + ["#endif /* OI__GEMM_X86 */\n\n"]
    out += [line for region in gemm[2:] for line in region]  # the 512-bit folds too (oi_quant.h repeats them, guarded)
    out += [read("kernels/scalar_math.h"), "\n"]
    out += regions("kernels/vexp.h")
    out += regions("kernels/elementwise.c")  # relu, clamp, hard_swish: the conv epilogues
    out += regions("kernels/conv.c")  # global_avg_pool's sums
    out += regions("kernels/nn.c")  # attention's direct f32 path (it calls vexp.h's e^)
    out.append("#endif /* OI_GEMM_H */\n")
    return "".join(out)


QUANT_PRELUDE = (
    "/* oi_quant.h - kernels/quant.c's block formats and integer dot products,\n"
    " * copied by the synthesizer (the regions marked synth-embed in that file,\n"
    " * after gemm.c's first region: its ISA macros). */\n"
    "#ifndef OI_QUANT_H\n#define OI_QUANT_H\n"
    "#include <float.h>\n#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n"
    "#include \"oi_half.h\"\n\n"
    "#define OI__MATH_INLINE static inline\n\n"
)


def quant_regions():
    """gemm.c's first region (OI__GEMM_X86, the target attributes), then
    quant.c's regions, after the prelude."""
    gemm = region_list("kernels/gemm.c")
    folds = [i for i, begin in enumerate(region_begins("kernels/gemm.c")) if "oi_quant.h" in begin]
    out = [QUANT_PRELUDE] + gemm[0] + gemm[folds[0]]
    out += regions("kernels/quant.c")
    out.append("#endif /* OI_QUANT_H */\n")
    return "".join(out)


def c_string(line):
    out = []
    for ch in line:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "?":
            out.append("\\?")  # no trigraphs
        elif ord(ch) < 32 or ord(ch) > 126:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render():
    parts = [
        "/* embedded.h - generated by scripts/embed_synth_sources.py; do not edit.\n"
        " * The files the synthesizer copies into every emitted folder, line by line. */\n"
        "#ifndef OPENINFER_SYNTH_EMBEDDED_H\n#define OPENINFER_SYNTH_EMBEDDED_H\n"
    ]
    for name, path in SOURCES + [("oi__sy_text_gemm_h", "kernels/gemm.c"), ("oi__sy_text_quant_h", "kernels/quant.c"),
                                 ("oi__sy_text_float_glsl", "vulkan/shaders/common.glsl"),
                                 ("oi__sy_text_rope_glsl", "vulkan/shaders/rope.comp"),
                                 ("oi__sy_text_quant_glsl", "vulkan/shaders/matvec_quant.comp")]:
        if name == "oi__sy_text_gemm_h":
            text = gemm_regions()
        elif name == "oi__sy_text_quant_h":
            text = quant_regions()
        elif name in ("oi__sy_text_float_glsl", "oi__sy_text_rope_glsl", "oi__sy_text_quant_glsl"):
            text = "".join(regions(path))
        elif name == "oi__sy_text_math_glsl":
            text = with_pasted(read(path), "kernels/scalar_math.h")
        elif name == "oi__sy_text_runtime_h":
            text = with_pasted(read(path), "openinfer_impl/usable_cpus.h")
        else:
            text = read(path)
        lines = text.splitlines(keepends=True)
        parts.append("\n/* %s */\nstatic const char *const %s[] = {\n" % (path, name))
        for line in lines:
            parts.append("    %s,\n" % c_string(line))
        parts.append("    NULL,\n};\n")
    parts.append("\n#endif /* OPENINFER_SYNTH_EMBEDDED_H */\n")
    return "".join(parts)


def main():
    text = render()
    out = os.path.join(ROOT, OUT)
    if "--check" in sys.argv[1:]:
        with open(out, encoding="utf-8") as f:
            if f.read() != text:
                sys.stderr.write("%s is stale: run scripts/embed_synth_sources.py\n" % OUT)
                return 1
        return 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
