#!/usr/bin/env python3
"""Device JSONs drive the Vulkan target's codegen (docs/synthesizer.md).

    check_vulkan_devices.py OPENINFER ENCODER_EXPORTER DEVICES_DIR [MATMUL_EXPORTER [I64_EXPORTER]]

bench_encoder's block (layer_norm and attention reduce over rows) is
synthesized for each device JSON below; the emitted kernels must carry
exactly the extensions and workgroup sizes the JSON allows:
  - subgroup reductions (GL_KHR_shader_subgroup_arithmetic) only where
    features.subgroup_ops is true, a shared-memory tree elsewhere;
  - row kernels of min(256, limits.max_workgroup_invocations,
    max_workgroup_size[0]) invocations (a power of 2; attention no more than
    its 128 keys), the matmul's tiles 16 x 16 threads (8 x 8 below 256;
    on a CPU device, lavapipe's JSON, 4 x 4 threads reading the buffers
    directly: MM_DIRECT);
  - f16 storage (GL_EXT_shader_16bit_storage, float16_t) only where
    preferences.default_precision is "fp16" and features.fp16 is true
    (ada_mock.json), f32 elsewhere (lavapipe's and the H100's say fp32; an
    ada_mock without features.fp16); "bf16" is refused, naming the field;
  - never a cooperative matrix nor f16 arithmetic in the encoder (its
    matmuls are 128 rows: too few blocks for the cooperative-matrix kernel).
MATMUL_EXPORTER's graph (matmul_graph.c at N = 1024: one 1024^3 matmul) is
synthesized for the H100's JSON with default_precision fp16: its matmul,
and only it, runs on cooperative matrices (GL_NV_cooperative_matrix,
oi_matmul_coopmat_tiles.glsl, 256 invocations, 16-bit arithmetic types), the
host asks for VK_KHR_ or VK_NV_cooperative_matrix, every kernel compiles with
glslc and the folder builds (the KHR module by oi_gen_spirv.py, -Werror); for the H100's JSON as it is (fp32), for
ada_mock.json (fp16, no cooperative_matrix), for lavapipe's and for an
H100 whose subgroups are 64 wide, no kernel mentions a cooperative matrix.
The JSON's preferences.coopmat_block/_subgroups set the tiles (2 x 8
subgroups: 512 invocations), and a shape past the shared memory is refused.
I64_EXPORTER's graph (test_graphs.c's vk_i64: i64 arithmetic and a reshape of
an i64) gets GL_EXT_shader_explicit_arithmetic_types_int64 in exactly its
arithmetic kernels, oi_kernel.glsl's OI_I64 and a host that turns on (and
asks for) shaderInt64, for lavapipe's and the H100's JSON (features.int64
true); it is refused, naming features.int64 and the statement, for
lavapipe's JSON with "int64": false, for ada_mock.json (which has no
int64) and for no JSON; the encoder's folders never mention 64-bit
integers.
Every kernel is compiled by glslc for the first two (no device needed;
without glslc that part is skipped), with no warning. `synth --report`'s "wrote DIR/: ..."
line must name exactly the files in the folder (for the C target too).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from synth_check import run


def variant(path, out, **changes):
    arch = json.load(open(path))
    for key, value in changes.items():
        section, field = key.split("__")
        arch[section][field] = value
    json.dump(arch, open(out, "w"), indent=2)
    return out


def kernels(folder):
    names = sorted(f for f in os.listdir(folder) if f.endswith(".comp"))
    return {f: open(os.path.join(folder, f)).read() for f in names}


def check_wrote(name, folder, report):
    """The report's "wrote DIR/: FILE ..." line names exactly what is in the folder."""
    lines = [l for l in report.splitlines() if l.startswith("wrote ")]
    assert len(lines) == 1, (name, report)
    listed = lines[0].split(": ", 1)[1].split()
    assert sorted(listed) == sorted(os.listdir(folder)), (name, listed, sorted(os.listdir(folder)))


def glslc(folder, kernel):
    """One kernel compiled by glslc, which must not warn (a name holding "__", say)."""
    out = run(["glslc", "--target-env=vulkan1.1", "-c", os.path.join(folder, kernel), "-o", os.devnull])
    assert "warning" not in out, (kernel, out)


def check(name, folder, subgroups, workgroup, compile_them, f16=False, subgroup_size=32, cpu=False):
    src = kernels(folder)
    assert src, name
    text = "\n".join(src.values())
    common = open(os.path.join(folder, "oi_kernel.glsl")).read()
    assert ("GL_KHR_shader_subgroup_arithmetic" in text) == subgroups, (name, "subgroup extension")
    assert ("subgroupAdd" in text) == subgroups, (name, "subgroupAdd")
    assert ("GL_EXT_shader_16bit_storage" in common) == f16, (name, "16-bit storage extension")
    assert ("float16_t(" in text) == f16, (name, "f16 stores")
    assert ("float16_t" in common + text) == f16, (name, "f16 storage")
    for banned in COOPMAT_WORDS:
        assert banned not in common + text, (name, banned)
    assert "OI_I64" not in common and "int64_t" not in text, (name, "no 64-bit integers")
    host = [f for f in os.listdir(folder) if f.endswith(".c") and f != "main.c"]
    assert all("shaderInt64" not in open(os.path.join(folder, f)).read() for f in host), (name, "no shaderInt64")
    side = 4 if cpu else 16 if workgroup >= 256 else 8
    sizes = {f: int(t.split("local_size_x = ")[1].split(")")[0]) for f, t in src.items()}
    for f, t in src.items():
        kind = t.splitlines()[1]
        want = side * side if ": matmul," in kind else workgroup
        if ": matmul," in kind:
            assert ("#define MM_DIRECT" in t) == cpu, (name, f, "MM_DIRECT")
        if ": attention," in kind and subgroups:  # tiled: a subgroup for each of 8 query rows
            assert "shared float oi_kv[" in t and "subgroupMax(" in t, (name, f, "tiled attention")
            want = min(workgroup, 8 * subgroup_size)
        elif ": attention," in kind:  # a row per workgroup: as wide as its 128 keys
            want = min(workgroup, 128)
        assert sizes[f] == want, (name, f, sizes[f], want)
    if compile_them and shutil.which("glslc"):
        for f in src:
            glslc(folder, f)
    print("%s: %d kernels, subgroups %s, workgroups of %d, storage %s%s" % (
        name, len(src), "on" if subgroups else "off", workgroup, "f16" if f16 else "f32",
        ", compiled" if compile_them else ""))


COOPMAT_WORDS = ("cooperative_matrix", "coopmat", "shader_explicit_arithmetic_types")


def check_coopmat(cli, exporter, devices, ada, work):
    """The matmul graph: cooperative matrices exactly where the JSON allows them."""
    mm = os.path.join(work, "mm")
    os.mkdir(mm)
    r = subprocess.run([exporter, mm, "0"], env=dict(os.environ, OI_MATMUL_N="1024"),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout
    model, graph = os.path.join(mm, "model.oinf"), os.path.join(mm, "graph.json")
    h100 = os.path.join(devices, "h100.json")
    h100_16 = variant(h100, os.path.join(work, "h100_fp16.json"), preferences__default_precision="fp16")
    cases = [  # name, JSON, cooperative matrices
        ("h100 fp16", h100_16, True),
        ("h100", h100, False),
        ("ada_mock", ada, False),
        ("lavapipe", os.path.join(devices, "lavapipe.json"), False),
        ("h100 fp16, 64-wide subgroups", variant(h100_16, os.path.join(work, "h100_sg64.json"),
                                                 limits__subgroup_size=64), False),
    ]
    for i, (name, target, coop) in enumerate(cases):
        out = os.path.join(work, "mm%d" % i)
        check_wrote(name, out, run([cli, "synth", model, graph, "--target", target, "--out", out, "--report"]))
        src = kernels(out)
        text = "\n".join(src.values())
        matmul = [t for t in src.values() if ": matmul," in t.splitlines()[1]]
        assert len(matmul) == 1, (name, "one matmul kernel")
        assert os.path.exists(os.path.join(out, "oi_matmul_coopmat_tiles.glsl")) == coop, (name, "coopmat tiles")
        assert os.path.exists(os.path.join(out, "oi_matmul_tiles.glsl")) == (not coop), (name, "tiles")
        if coop:
            others = [t for t in src.values() if t not in matmul]
            assert "#extension GL_NV_cooperative_matrix : require" in matmul[0], name
            assert "GL_EXT_shader_explicit_arithmetic_types_float16" in matmul[0], name
            assert "local_size_x = 256" in matmul[0], name  # 2 x 4 subgroups of 32 (the limits' first shape)
            assert '#include "oi_matmul_coopmat_tiles.glsl"' in matmul[0], name
            assert not any(w in t for t in others for w in COOPMAT_WORDS), (name, "only the matmul")
            host = open(os.path.join(out, "matmul_f16.c")).read()
            for ext in ("VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME", "VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME"):
                assert ext in host, (name, "the host enables", ext)
            assert os.path.exists(os.path.join(out, "oi_gen_spirv.py")), (name, "the KHR rewrite")
            volk = os.environ.get("VOLK_DIR", "/usr/include")
            if shutil.which("glslc") and os.path.exists(os.path.join(volk, "volk.c")):
                # the whole folder: NV and KHR modules (oi_gen_spirv.py), the host code with -Werror
                run(["make", "-C", out, "VOLK_DIR=" + volk, "CFLAGS=-O2 -std=c11 -Wall -Wextra -pedantic -Werror"])
                assert any(f.endswith("_khr.spv.h") for f in os.listdir(out)), (name, "a KHR module")
        else:
            assert not any(w in text for w in COOPMAT_WORDS), (name, "no cooperative matrix")
            host = open(os.path.join(out, "matmul_f16.c")).read()
            assert "COOPERATIVE_MATRIX" not in host, (name, "no cooperative-matrix extension")
        compiled = False
        if shutil.which("glslc"):
            for f in src:
                glslc(out, f)
            compiled = True
        print("matmul graph, %s: %s%s" % (name, "cooperative matrices" if coop else "tiled",
                                          ", compiled" if compiled else ""))
    # the tile shape from the JSON: honored where the limits hold it, refused (naming it) where not
    given = variant(h100_16, os.path.join(work, "h100_tiles.json"), preferences__coopmat_block=[128, 256, 32],
                    preferences__coopmat_subgroups=[2, 8, 1])
    out = os.path.join(work, "mm_tiles")
    run([cli, "synth", model, graph, "--target", given, "--out", out])
    matmul = [t for t in kernels(out).values() if ": matmul," in t.splitlines()[1]][0]
    for line in ("#define BN 256u", "#define WG_N 8u", "local_size_x = 512"):
        assert line in matmul, ("the JSON's tiles", line)
    too_big = variant(h100_16, os.path.join(work, "h100_big.json"), preferences__coopmat_block=[256, 256, 64],
                      preferences__coopmat_subgroups=[4, 4, 2])
    r = subprocess.run([cli, "synth", model, graph, "--target", too_big, "--out", os.path.join(work, "mm_big")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode != 0 and "coopmat_block" in r.stdout and "max_shared_memory_bytes" in r.stdout, r.stdout
    print("matmul graph: the JSON's tile shape honored; one past the shared memory refused (%s)" % r.stdout.strip())


INT64_EXTENSION = "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require"


def check_int64(cli, exporter, devices, ada, work):
    """vk_i64: 64-bit integers in the kernels exactly where the JSON says features.int64."""
    out = os.path.join(work, "i64")
    os.mkdir(out)
    run([exporter, out, "0"])
    model, graph = os.path.join(out, "model.oinf"), os.path.join(out, "graph.json")
    lavapipe = os.path.join(devices, "lavapipe.json")
    assert json.load(open(lavapipe))["features"]["int64"] is True
    for name, target in (("lavapipe", lavapipe), ("h100", os.path.join(devices, "h100.json"))):
        gen = os.path.join(work, "i64_" + name)
        run([cli, "synth", model, graph, "--target", target, "--out", gen])
        src = kernels(gen)
        copies = [f for f, t in src.items() if ": copy," in t.splitlines()[1]]
        assert len(copies) == 1, (name, "the reshape's copy")
        for f, t in src.items():  # the extension in every arithmetic kernel, none in the copy
            assert (INT64_EXTENSION in t) == (f not in copies), (name, f)
        assert "#define OI_I64(" in open(os.path.join(gen, "oi_kernel.glsl")).read(), name
        host = open(os.path.join(gen, "vk_i64.c")).read()
        assert "int64_on.features.shaderInt64 = VK_TRUE;" in host and "has no shaderInt64" in host, name
        assert "shaderInt64" in open(os.path.join(gen, "vk_i64.h")).read(), (name, "NAME.h lists shaderInt64")
        compiled = False
        if shutil.which("glslc"):
            for f in src:
                glslc(gen, f)
            compiled = True
        print("vk_i64, %s: the int64 extension in %d of %d kernels%s" % (
            name, len(src) - len(copies), len(src), ", compiled" if compiled else ""))
    refused = [("lavapipe with \"int64\": false", variant(lavapipe, os.path.join(work, "lavapipe_no64.json"),
                                                           features__int64=False)),
               ("ada_mock (no int64)", ada), ("no JSON (--target vulkan)", "vulkan")]
    for name, target in refused:
        r = subprocess.run([cli, "synth", model, graph, "--target", target, "--out", os.path.join(work, "i64_no")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode != 0 and "features.int64" in r.stdout and "test_graphs.c:" in r.stdout, (name, r.stdout)
        assert not os.path.exists(os.path.join(work, "i64_no")), (name, "nothing written")
        print("vk_i64, %s: refused (%s)" % (name, r.stdout.strip().splitlines()[0]))


def main():
    cli, exporter, devices = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="synth_vk_devices_")
    try:
        run([exporter, work, "1"])
        model, graph = os.path.join(work, "model.oinf"), os.path.join(work, "graph.json")
        ada = os.path.join(devices, "ada_mock.json")
        assert json.load(open(ada))["preferences"]["default_precision"] == "fp16"
        cases = [  # name, JSON, subgroups, workgroup, compile with glslc, f16 storage
            ("ada_mock", ada, True, 256, True, True),
            ("ada_mock without subgroups, 128 invocations",
             variant(ada, os.path.join(work, "ada_small.json"), features__subgroup_ops=False,
                     limits__max_workgroup_invocations=128, limits__max_workgroup_size=[128, 128, 64]),
             False, 128, True, True),
            ("ada_mock without features.fp16", variant(ada, os.path.join(work, "ada_no16.json"), features__fp16=False),
             True, 256, False, False),
            ("lavapipe", os.path.join(devices, "lavapipe.json"), True, 256, False, False),
            ("h100", os.path.join(devices, "h100.json"), True, 256, False, False),
            ("no JSON (--target vulkan)", "vulkan", False, 256, False, False),
        ]
        for i, (name, target, subgroups, workgroup, compile_them, f16) in enumerate(cases):
            out = os.path.join(work, "gen%d" % i)
            check_wrote(name, out, run([cli, "synth", model, graph, "--target", target, "--out", out, "--report"]))
            arch = json.load(open(target)) if target != "vulkan" else {"limits": {}, "device": {}}
            check(name, out, subgroups, workgroup, compile_them, f16, arch["limits"].get("subgroup_size", 0) or 32,
                  arch["device"].get("type") == "cpu")
        if len(sys.argv) > 4:
            check_coopmat(cli, sys.argv[4], devices, ada, work)
        if len(sys.argv) > 5:
            check_int64(cli, sys.argv[5], devices, ada, work)
        bf16 = variant(ada, os.path.join(work, "ada_bf16.json"), preferences__default_precision="bf16")
        r = subprocess.run([cli, "synth", model, graph, "--target", bf16, "--out", os.path.join(work, "bf16")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode != 0 and "default_precision" in r.stdout and "bf16" in r.stdout, r.stdout
        print("bf16: refused (%s)" % r.stdout.strip())
        out = os.path.join(work, "gen_cpu")
        check_wrote("cpu", out, run([cli, "synth", model, graph, "--target", "cpu", "--out", out, "--report"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
