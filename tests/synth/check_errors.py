#!/usr/bin/env python3
"""The synthesizer's bad inputs and promises, each able to fail:

    check_errors.py OPENINFER EXPORT_MINIMAL EXPORT_RESIDUAL_MLP EXPORT_CACHE_WINDOW [EXPORT_KV_CACHE
                    [EXPORT_GATHER_ATTN [EXPORT_KV_GQA [EXPORT_GPU_BRANCH [EXPORT_RESETS
                    [EXPORT_AUTO_ROWS]]]]]]

- an op the C target cannot run: `openinfer synth` exits 1 naming the DSL
  statement's file:line and the op;
- a table indexed at run time without @fixed (cache_window's A(i)): refused,
  naming the statement's file:line and asking for @fixed;
- an @auto_dim variable (its leading dim grows at run time): with no bound
  on its index, refused, naming the statement that reads it and asking for
  @fixed; with @fixed, the C target takes it and the Vulkan target refuses
  it; growing two dims, refused by the C target too; auto_rows past its
  @fixed bound: the emitted step fails with the simulator's message;
- NAME_read_VAR of a table (kv_cache's K): the count and shape alone, a
  buffer too small refused with a message, the shape `openinfer run` gives;
- an output folder that cannot be created: exit 1 naming the folder;
- a different model file at open time: the driver exits 1 saying so;
- --embed-model for a Vulkan target: refused; `-` for the model of a
  folder without one built in: the driver exits 1 saying there is no path;
- a gather index out of range (10 and -11 for an axis of 10): the emitted
  step fails with the simulator's message, naming the statement, as
  `openinfer run` does; the Vulkan target refuses the graph (its f64, bool
  and u8 gathers), naming a statement;
- kv_gqa's keys read from a table slice and transposed into attention: the
  Vulkan target synthesizes it (the transposes fold into the attention); on a
  Vulkan device, its folder's 17th step (the tables hold 16) fails with the
  simulator's message;
- gpu_branch with a block that writes its branch's condition: the Vulkan
  target (both blocks recorded, each kernel reading the condition) refuses
  it, naming the statement; the C target takes it; so with a cache_reset of
  one table entry (resets);
- gpu_branch with a loop bound `B-1` (an expression) at the end of a block of
  a branch nested in another: both targets refuse it, naming the loop, and
  (under LeakSanitizer, in scripts/test.sh's sanitizer stage) free the
  blocks they built before it;
- the device JSON's preferences.max_kernel_ops bounds fusion; a bad value
  is an error naming its JSON path; a plan bigger than memory.global_bytes
  and a Vulkan device are refused;
- NAME_step allocates nothing (NAME.c built with malloc/calloc/realloc
  counted, three steps);
- -DNAME_DEBUG_DUMP=dir writes each kernel's outputs, equal to the values
  the driver fetches.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

from synth_check import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def must_contain(text, *parts):
    for p in parts:
        if p not in text:
            raise SystemExit("FAILED: %r not in:\n%s" % (p, text))


ALLOC_COUNT = r"""
#include <stdlib.h>
long alloc_count;
int alloc_counting;
void *t_malloc(size_t n) { alloc_count += alloc_counting; return malloc(n); }
void *t_calloc(size_t a, size_t b) { alloc_count += alloc_counting; return calloc(a, b); }
void *t_realloc(void *p, size_t n) { alloc_count += alloc_counting; return realloc(p, n); }
"""

STEP_MAIN = r"""
#include "%(name)s.h"
#include <stdio.h>
extern long alloc_count;
extern int alloc_counting;
int main(int argc, char **argv) {
    %(name)s_ctx *ctx = %(name)s_open(argc > 1 ? argv[1] : NULL);
    if (!ctx) { fprintf(stderr, "%%s\n", %(name)s_last_error()); return 1; }
    alloc_counting = 1;
    for (int s = 0; s < 3; s++)
        if (%(name)s_step(ctx) != 0) { fprintf(stderr, "%%s\n", %(name)s_last_error()); return 1; }
    alloc_counting = 0;
    %(name)s_close(ctx);
    printf("allocations in 3 steps: %%ld\n", alloc_count);
    return alloc_count != 0;
}
"""


READ_MAIN = r"""
#include "kv_decode.h"
#include <stdio.h>
int main(int argc, char **argv) {
    kv_decode_ctx *ctx = kv_decode_open(argv[1]);
    float values[4096];
    size_t count = 0;
    int64_t shape[4] = {0};
    if (!ctx || kv_decode_step(ctx) != 0 || kv_decode_step(ctx) != 0 || kv_decode_step(ctx) != 0) {
        fprintf(stderr, "%s\n", kv_decode_last_error());
        return 1;
    }
    if (kv_decode_read_K(ctx, NULL, 0, &count, shape) != 0 || count == 0 || count > 4096)
        return 1;
    if (kv_decode_read_K(ctx, values, count - 1, &count, shape) == 0)
        return 1; /* one value short: must fail */
    printf("short: %s\n", kv_decode_last_error());
    if (kv_decode_read_K(ctx, values, count, &count, shape) != 0)
        return 1;
    printf("K: %lld %lld %lld %lld, count %zu\n", (long long)shape[0], (long long)shape[1], (long long)shape[2],
           (long long)shape[3], count);
    kv_decode_close(ctx);
    return argc < 2;
}
"""


def check_table_reader(cli, k, work):
    """NAME_read_VAR of kv_cache's table K(l, t): the count and shape asked for
    alone, a buffer one value short refused with a message, then the table as
    `openinfer run --fetch K` gives it (its shape here; its values in
    check_examples.py's synth_kv_cache)."""
    gen = os.path.join(work, "kv_read")
    model, graph = os.path.join(k, "model.oinf"), os.path.join(k, "graph.json")
    run([cli, "synth", model, graph, "--target", "cpu", "--out", gen])
    run(["make", "-C", gen, "CFLAGS=-O1 -std=c11 -Wall -Wextra -pedantic -Werror"])
    open(os.path.join(gen, "read_main.c"), "w").write(READ_MAIN)
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "read_main.c", "libkv_decode.a", "-lm",
         "-o", "read_main"], cwd=gen)
    out = run([os.path.join(gen, "read_main"), model])
    run([cli, "run", model, graph, "--steps", "3", "--fetch", "K", "--out", os.path.join(work, "kv_run")])
    want = np.load(os.path.join(work, "kv_run", "K.npy")).shape
    count = int(np.prod(want))
    must_contain(out, "short: kv_decode_read_K: %d values fit, K holds %d" % (count - 1, count),
                 "K: %s, count %d" % (" ".join(str(d) for d in want), count))


AUTO_READ_LINE = 901  # a line number cache_window.c does not have


def auto_dim_graph(w, work, indices="r", fixed=None):
    """cache_window's graph JSON with a persistent M(INDICES): f32[2, ...]
    @auto_dim(INDICES) (@fixed(FIXED) where given, e.g. {"r": 4}) and
    OI_CACHE_READ(M[n, ...], m) after its first statement."""
    g = json.load(open(os.path.join(w, "graph.json")))
    where = g["vars"][0]["src"]["file"]
    names = indices.split(",")
    var = {"name": "M", "kind": "persistent", "dtype": "f32", "dims": ["2"] * len(names), "table_indices": names,
           "auto_dim": names, "src": {"file": where, "line": 900, "text": "OI_VAR(M(%s), ...)" % indices}}
    if fixed:  # and cache_window's own table A(i) bounded, so that only M decides
        var["fixed"] = [{"index": k, "max": v} for k, v in fixed.items()]
        for other in g["vars"]:
            if other.get("table") and not other.get("fixed"):
                other["fixed"] = [{"index": i, "max": 64} for i in other["table_indices"]]
    g["vars"].append(var)
    nodes = g["blocks"][0]["nodes"]
    nodes.insert(0, {"kind": "assign", "name": "m", "dtype": "f32", "dims": ["?"] * len(names),
                     "uuid": "00000000-0000-4000-8000-000000000001",
                     "src": {"file": where, "line": 899, "text": "OI_ASSIGN(m, f32[?])"}})
    nodes.insert(len([n for n in nodes if n["kind"] == "assign"]),
                 {"kind": "cache_read", "cache": {"base": "M", "bracketed": True,
                                                  "indices": [{"kind": "index", "value": "n"}] * len(names)},
                  "var": {"name": "m"}, "uuid": "00000000-0000-4000-8000-000000000002",
                  "src": {"file": where, "line": AUTO_READ_LINE, "text": "OI_CACHE_READ(M[n], m)"}})
    index = 0
    for block in g["blocks"]:
        for n in block["nodes"]:
            n["index"] = index
            index += 1
    g["next_index"] = index
    path = os.path.join(work, "auto_dim_%s_%d.json" % (indices.replace(",", ""), len(fixed or {})))
    json.dump(g, open(path, "w"))
    return path


def check_auto_dim(cli, w, work, vk):
    """@auto_dim variables: refused without a bound or growing two dims, taken
    by the C target with @fixed, refused by the Vulkan target."""
    model = os.path.join(w, "model.oinf")
    read = "cache_window.c:%d: error: OI_CACHE_READ(M[n], m)" % AUTO_READ_LINE
    out = run([cli, "synth", model, auto_dim_graph(w, work), "--target", "cpu", "--out", os.path.join(work, "ax")],
              expect=1)
    must_contain(out, read, "index r of M (@auto_dim) is only known at run time and has no bound", "@fixed(r=N)")
    bounded = auto_dim_graph(w, work, fixed={"r": 4})
    run([cli, "synth", model, bounded, "--target", "cpu", "--out", os.path.join(work, "ay")])
    must_contain(open(os.path.join(work, "ay", "window.c")).read(), "M_grown[1]", "auto_dim M exceeds fixed max 4")
    out = run([cli, "synth", model, bounded, "--target", vk, "--out", os.path.join(work, "az")], expect=1)
    must_contain(out, read, "the Vulkan target cannot synthesize this yet: M is declared with @auto_dim")
    out = run([cli, "synth", model, auto_dim_graph(w, work, "r,c", {"r": 4, "c": 4}), "--target", "cpu",
               "--out", os.path.join(work, "aw")], expect=1)
    must_contain(out, read, "M grows 2 dims with @auto_dim")


def check_auto_bound(cli, exporter, work):
    """auto_rows' M grows by n rows at step n, up to its @fixed 8: the ninth
    step fails in the emitted code with the simulator's message. With its
    table of @auto_dim matrices reset whole, the values are the simulator's."""
    g = os.path.join(work, "auto_rows")
    os.mkdir(g)
    run([exporter, g, "1"])
    model, graph = os.path.join(g, "model.oinf"), os.path.join(g, "graph.json")
    run([cli, "synth", model, graph, "--target", "cpu", "--out", os.path.join(g, "gen")])
    run(["make", "-C", os.path.join(g, "gen"), "CFLAGS=-O1 -std=c11 -Wall -Wextra -pedantic -Werror"])
    feed = ["--input", "x=" + os.path.join(g, "in", "x.npy"), "--steps", "9"]
    want = "auto_dim M exceeds fixed max 8 for r (asked for 9)"
    must_contain(run([os.path.join(g, "gen", "auto_rows"), model] + feed, expect=1), "test_graphs.c:", want)
    must_contain(run([cli, "run", model, graph] + feed, expect=1), want)
    run([os.path.join(g, "gen", "auto_rows"), model, "--steps", "8"] + feed[:2])
    # the reset of one entry of the table C made a reset of all of it: the same values as the simulator's
    whole = json.load(open(graph))
    for node in whole["blocks"][0]["nodes"]:
        if node["kind"] == "cache_reset" and node["cache"]["base"] == "C":
            node["cache"] = {"base": "C", "bracketed": False, "indices": []}
    whole_graph = os.path.join(g, "whole_reset.json")
    json.dump(whole, open(whole_graph, "w"))
    run([cli, "synth", model, whole_graph, "--target", "cpu", "--out", os.path.join(g, "whole")])
    run(["make", "-C", os.path.join(g, "whole"), "CFLAGS=-O1 -std=c11 -Wall -Wextra -pedantic -Werror"])
    fetch = feed[:2] + ["--steps", "4"] + sum([["--fetch", v] for v in ("M", "first", "second", "U")], [])
    run([os.path.join(g, "whole", "auto_rows"), model, "--out", os.path.join(g, "e")] + fetch)
    run([cli, "run", model, whole_graph, "--out", os.path.join(g, "r")] + fetch)
    for v in ("M", "first", "second", "U"):
        a, b = np.load(os.path.join(g, "e", v + ".npy")), np.load(os.path.join(g, "r", v + ".npy"))
        if a.shape != b.shape or not np.array_equal(a, b):
            raise SystemExit("FAILED: auto_rows with C reset whole: %s differs: %s against %s"
                             % (v, a.ravel()[:6], b.ravel()[:6]))


def check_gather_range(cli, exporter, work):
    """An index out of range fails the step, in the emitted code as in the simulator."""
    g = os.path.join(work, "gather")
    os.mkdir(g)
    run([exporter, g, "1"])
    model, graph = os.path.join(g, "model.oinf"), os.path.join(g, "graph.json")
    node = [n for n in json.load(open(graph))["blocks"][0]["nodes"] if n.get("op") == "gather"][0]
    out = run([cli, "synth", model, graph, "--target", "cpu", "--out", os.path.join(g, "gen")])
    run(["make", "-C", os.path.join(g, "gen"), "CFLAGS=-O1 -std=c11 -Wall -Wextra -pedantic -Werror"])
    inputs = []
    for f in sorted(os.listdir(os.path.join(g, "in"))):
        if f != "idx.npy":
            inputs += ["--input", "%s=%s" % (f[:-4], os.path.join(g, "in", f))]
    for bad in (10, -11):
        idx = np.array([[1, 0, 2], [1, bad, 4]], np.int32)
        np.save(os.path.join(g, "bad_idx.npy"), idx)
        want = "gather: index %d (element 4 of the indices) is out of range for axis 0 of size 10" % bad
        feed = inputs + ["--input", "idx=" + os.path.join(g, "bad_idx.npy")]
        out = run([os.path.join(g, "gen", "gather_attn"), model] + feed, expect=1)
        must_contain(out, "test_graphs.c:%d: " % node["src"]["line"], want)
        must_contain(run([cli, "run", model, graph] + feed, expect=1), want)
    vk = os.path.join(ROOT, "examples", "devices", "ada_mock.json")
    out = run([cli, "synth", model, graph, "--target", vk, "--out", os.path.join(g, "vk")], expect=1)
    must_contain(out, "test_graphs.c:", "the Vulkan target cannot synthesize this yet")


def check_vulkan_table_bound(cli, k):
    """kv_gqa's tables hold 16 positions: on a Vulkan device (skipped without one, glslc or
    volk), the emitted folder's 17th step fails as the simulator's does, with its message (a
    kernel finds the index; the host reports it after the step)."""
    import check_vulkan as cv
    if cv.volk_dir() is None or shutil.which("glslc") is None or cv.vulkan_device_index(cli) is None:
        print("kv_gqa past its table's bound on Vulkan: skipped (no device, glslc or volk)")
        return
    gen = os.path.join(k, "vk17")
    run([cli, "synth", os.path.join(k, "model.oinf"), os.path.join(k, "graph.json"), "--target", "vulkan", "--out", gen])
    run(["make", "-C", gen, "VOLK_DIR=" + cv.volk_dir(), "CFLAGS=-O1 -std=c11 -Wall -Wextra -pedantic -Werror"])
    feed = []
    for f in sorted(os.listdir(os.path.join(k, "in"))):
        feed += ["--input", "%s=%s" % (f[:-4], os.path.join(k, "in", f))]
    want = "cache table K index t = 16 exceeds fixed size 16"
    out = run([os.path.join(gen, "kv_gqa"), os.path.join(k, "model.oinf"), "--steps", "17"] + feed, expect=1)
    must_contain(out, "test_graphs.c:", want)
    must_contain(run([cli, "run", os.path.join(k, "model.oinf"), os.path.join(k, "graph.json"), "--steps", "17"] + feed,
                     expect=1), want)


def check_vulkan_branch_refusal(cli, exporter, work, vk):
    """gpu_branch's graph with is_finite's statement again inside a block of the branch on its
    result: the kernels of the other block would read the condition after it changed, so the
    Vulkan target refuses the copy, naming it and the reason."""
    k = os.path.join(work, "gpu_branch")
    os.mkdir(k)
    run([exporter, k, "1"])
    path = os.path.join(k, "graph.json")
    g = json.load(open(path))
    blocks = {b["name"]: b for b in g["blocks"]}
    test = [n for n in blocks["entry"]["nodes"] if n.get("op") == "is_finite"][0]
    blocks["up"]["nodes"].insert(0, dict(test, index=g["next_index"], uuid="00000000-0000-4000-8000-000000000002"))
    g["next_index"] += 1
    json.dump(g, open(path, "w"))
    out = run([cli, "synth", os.path.join(k, "model.oinf"), path, "--target", vk, "--out", os.path.join(k, "gen")],
              expect=1)
    must_contain(out, "test_graphs.c:%d: error: OI_OP(is_finite, h) OI_TO(ok)" % test["src"]["line"],
                 "a statement in a block of a branch on a variable that writes the condition")
    # the C target reads the condition once: the same graph synthesizes there
    run([cli, "synth", os.path.join(k, "model.oinf"), path, "--target", "cpu", "--out", os.path.join(k, "cpu")])


def check_refusal_in_nested_branch(cli, exporter, work, vk):
    """gpu_branch's graph with a loop over 0..B-1 appended to block `up` (in a branch within a
    branch): the bound is refused, naming the loop, after the blocks before it were built."""
    k = os.path.join(work, "nested_refusal")
    os.mkdir(k)
    run([exporter, k, "1"])
    path = os.path.join(k, "graph.json")
    g = json.load(open(path))
    up = {b["name"]: b for b in g["blocks"]}["up"]["nodes"]
    body = dict(up[0], index=g["next_index"] + 1, uuid="00000000-0000-4000-8000-000000000004")
    src = {"file": "nested.c", "line": 7, "text": "OI_LOOP(again, j, 0..B-1, ...)"}
    loop = {"index": g["next_index"], "uuid": "00000000-0000-4000-8000-000000000003", "kind": "loop",
            "name": "again", "var": "j", "start": 0, "end": "B-1", "src": src, "body": [body]}
    g["next_index"] += 2
    up.insert(len(up) - 1, loop)  # before the block's return
    json.dump(g, open(path, "w"))
    for target in ("cpu", vk):
        out = run([cli, "synth", os.path.join(k, "model.oinf"), path, "--target", target, "--out",
                   os.path.join(k, "gen_" + os.path.basename(target))], expect=1)
        must_contain(out, "nested.c:7: error: OI_LOOP(again, j, 0..B-1, ...)", "a loop bound that is an expression")


def check_vulkan_reset_refusal(cli, exporter, work, vk):
    """resets' graph with `OI_CACHE_RESET(T[1])` (one entry) for its whole-table reset: the
    Vulkan target (a reset is a fill of the whole region) refuses it, naming the statement;
    the C target takes it."""
    k = os.path.join(work, "resets")
    os.mkdir(k)
    run([exporter, k, "1"])
    path = os.path.join(k, "graph.json")
    g = json.load(open(path))
    node = [n for n in g["blocks"][0]["nodes"] if n["kind"] == "cache_reset" and n["cache"]["base"] == "T"][0]
    node["cache"] = {"base": "T", "bracketed": True, "indices": [{"kind": "index", "value": 1}]}
    json.dump(g, open(path, "w"))
    out = run([cli, "synth", os.path.join(k, "model.oinf"), path, "--target", vk, "--out", os.path.join(k, "gen")],
              expect=1)
    must_contain(out, "test_graphs.c:%d: error:" % node["src"]["line"], "a reset of one entry of a table")
    run([cli, "synth", os.path.join(k, "model.oinf"), path, "--target", "cpu", "--out", os.path.join(k, "cpu")])


def main():
    cli, exp_minimal, exp_mlp, exp_window = sys.argv[1:5]
    exp_kv = sys.argv[5] if len(sys.argv) > 5 else None
    exp_gather = sys.argv[6] if len(sys.argv) > 6 else None
    exp_kv_gqa = sys.argv[7] if len(sys.argv) > 7 else None
    exp_gpu_branch = sys.argv[8] if len(sys.argv) > 8 else None
    exp_resets = sys.argv[9] if len(sys.argv) > 9 else None
    exp_auto_rows = sys.argv[10] if len(sys.argv) > 10 else None
    work = tempfile.mkdtemp(prefix="synth_errors_")
    try:
        a, b = os.path.join(work, "a"), os.path.join(work, "b")
        os.mkdir(a)
        os.mkdir(b)
        run([exp_minimal, a, "1"])
        run([exp_mlp, b, "1"])
        model, graph = os.path.join(a, "model.oinf"), os.path.join(a, "graph.json")

        # an op the C target cannot run
        g = json.load(open(graph))
        node = [n for n in g["blocks"][0]["nodes"] if n.get("op") == "mul"][0]
        node["op"], node["inputs"] = "rsqrt", node["inputs"][:1]
        bad_graph = os.path.join(work, "bad.json")
        json.dump(g, open(bad_graph, "w"))
        out = run([cli, "synth", model, bad_graph, "--target", "cpu", "--out", os.path.join(work, "x")], expect=1)
        must_contain(out, "minimal.c:%d" % node["src"]["line"], "op rsqrt", "cannot synthesize")

        # a transpose writing its input (each element would read one already overwritten): refused,
        # each target naming itself
        g = json.load(open(graph))
        node = [n for n in g["blocks"][0]["nodes"] if n.get("op") == "mul"][0]
        node["op"], node["inputs"] = "transpose", [{"name": node["output"]}]
        json.dump(g, open(bad_graph, "w"))
        for target, name in (("cpu", "C"), ("vulkan", "Vulkan")):
            out = run([cli, "synth", model, bad_graph, "--target", target, "--out", os.path.join(work, "t")], expect=1)
            must_contain(out, "minimal.c:%d" % node["src"]["line"],
                         "the %s target cannot synthesize this yet: " % name)

        # a table that would have to grow: refused, asking for @fixed
        w = os.path.join(work, "w")
        os.mkdir(w)
        run([exp_window, w, "1"])
        out = run([cli, "synth", os.path.join(w, "model.oinf"), os.path.join(w, "graph.json"), "--target", "cpu",
                   "--out", os.path.join(work, "wx")], expect=1)
        write = [n for n in json.load(open(os.path.join(w, "graph.json")))["blocks"][0]["nodes"]
                 if n["kind"] == "cache_write"][0]
        must_contain(out, "cache_window.c:%d: error: OI_CACHE_WRITE(x, A[n])" % write["src"]["line"], "@fixed(i=N)")

        # @auto_dim variables: cache_window's graph with M(r): f32[2] @auto_dim(r) read as M[n]
        check_auto_dim(cli, w, work, os.path.join(ROOT, "examples", "devices", "ada_mock.json"))

        # an output folder that cannot be created (below a plain file)
        blocker = os.path.join(work, "file")
        open(blocker, "w").close()
        out = run([cli, "synth", model, graph, "--target", "cpu", "--out", os.path.join(blocker, "sub")], expect=1)
        must_contain(out, "cannot create the folder", blocker)

        # the emitted code refuses another model file
        gen = os.path.join(work, "gen")
        run([cli, "synth", model, graph, "--target", "cpu", "--out", gen])
        run(["make", "-C", gen, "CFLAGS=-O2 -std=c11 -Wall -Wextra -pedantic -Werror"])
        out = run([os.path.join(gen, "minimal"), os.path.join(b, "model.oinf")], expect=1)
        must_contain(out, "not the model this code was synthesized for")
        run([os.path.join(gen, "minimal"), model])

        # fusion bounded by the device JSON; a bad value names its path
        arch = os.path.join(work, "arch.json")
        cpu = json.load(open(os.path.join(ROOT, "examples", "devices", "amd_epyc_cpu.json")))
        cpu["preferences"]["max_kernel_ops"] = 1
        json.dump(cpu, open(arch, "w"))
        one = os.path.join(work, "one")
        run([cli, "synth", model, graph, "--target", arch, "--out", one])
        kernels = json.load(open(os.path.join(one, "plan.json")))["kernels"]
        assert len(kernels) == 2 and all(len(k["statements"]) == 1 for k in kernels), kernels
        fused = json.load(open(os.path.join(gen, "plan.json")))["kernels"]
        assert len(fused) == 1 and len(fused[0]["statements"]) == 2, fused
        cpu["preferences"]["max_kernel_ops"] = "many"
        json.dump(cpu, open(arch, "w"))
        out = run([cli, "synth", model, graph, "--target", arch, "--out", one], expect=1)
        must_contain(out, "$.preferences.max_kernel_ops")
        # a device too small for the plan (the model file alone is bigger)
        cpu["preferences"]["max_kernel_ops"] = 8
        cpu["memory"]["global_bytes"] = 64
        json.dump(cpu, open(arch, "w"))
        out = run([cli, "synth", model, graph, "--target", arch, "--out", one], expect=1)
        must_contain(out, "does not fit the device", "$.memory.global_bytes is 64")
        # a Vulkan device: GLSL kernels and C host code
        vk = os.path.join(ROOT, "examples", "devices", "ada_mock.json")
        run([cli, "synth", model, graph, "--target", vk, "--out", os.path.join(work, "vk")])
        # the model built in is for the C target; without it, the driver's `-` has no model
        out = run([cli, "synth", model, graph, "--target", vk, "--out", os.path.join(work, "vk_embed"),
                   "--embed-model"], expect=1)
        must_contain(out, "embedding the model is for the C target")
        out = run([os.path.join(gen, "minimal"), "-"], expect=1)
        must_contain(out, "no model path")
        for f in ("minimal_k0.comp", "oi_kernel.glsl", "oi_vk_runtime.h", "minimal.c", "Makefile"):
            assert os.path.exists(os.path.join(work, "vk", f)), f
        # what the Vulkan target refuses names the statement (kv_cache's keys read from an unbounded table)
        if exp_kv:
            k = os.path.join(work, "kv")
            os.mkdir(k)
            run([exp_kv, k, "1"])
            out = run([cli, "synth", os.path.join(k, "model.oinf"), os.path.join(k, "graph.json"), "--target", vk,
                       "--out", os.path.join(k, "gen")], expect=1)
            must_contain(out, "kv_cache.c:", "the Vulkan target cannot synthesize this yet: keys has a shape known at "
                         "run time only")
            check_table_reader(cli, k, work)

        if exp_gather:
            check_gather_range(cli, exp_gather, work)

        # a decoder's attention over a table slice: both targets fold the transposes of the
        # keys into it (the Vulkan target's parity: synth_vulkan_kv_gqa)
        if exp_kv_gqa:
            k = os.path.join(work, "kv_gqa")
            os.mkdir(k)
            run([exp_kv_gqa, k, "1"])
            run([cli, "synth", os.path.join(k, "model.oinf"), os.path.join(k, "graph.json"), "--target", vk,
                 "--out", os.path.join(k, "gen")])
            check_vulkan_table_bound(cli, k)
        if exp_gpu_branch:
            check_vulkan_branch_refusal(cli, exp_gpu_branch, work, vk)
            check_refusal_in_nested_branch(cli, exp_gpu_branch, work, vk)
        if exp_resets:
            check_vulkan_reset_refusal(cli, exp_resets, work, vk)
        if exp_auto_rows:
            check_auto_bound(cli, exp_auto_rows, work)

        # no allocation inside NAME_step
        open(os.path.join(gen, "alloc_count.c"), "w").write(ALLOC_COUNT)
        open(os.path.join(gen, "step_main.c"), "w").write(STEP_MAIN % {"name": "minimal"})
        cc = ["cc", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror"]
        run(cc + ["-Dmalloc=t_malloc", "-Dcalloc=t_calloc", "-Drealloc=t_realloc", "-c", "minimal.c",
                  "-o", "counted.o"], cwd=gen)
        run(cc + ["step_main.c", "alloc_count.c", "counted.o", "-lm", "-o", "step_main"], cwd=gen)
        must_contain(run([os.path.join(gen, "step_main"), model]), "allocations in 3 steps: 0")

        # the debug dump: every kernel's outputs, after each kernel
        dump = os.path.join(work, "dump")
        os.mkdir(dump)
        dbg = os.path.join(work, "dbg")
        shutil.copytree(gen, dbg)
        run(["make", "-C", dbg, "clean"])
        run(["make", "-C", dbg, "CFLAGS=-O2 -std=c11 -Wall -Wextra -pedantic -Werror -Dminimal_DEBUG_DUMP=" + dump])
        res = os.path.join(work, "res")
        run([os.path.join(dbg, "minimal"), model, "--input", "x=" + os.path.join(a, "in", "x.npy"),
             "--fetch", "y", "--out", res])
        dumped = np.load(os.path.join(dump, "step0_k0_y.npy"))
        assert np.array_equal(dumped, np.load(os.path.join(res, "y.npy")).ravel()), "dump differs"
        print("synth errors: all checks passed")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
