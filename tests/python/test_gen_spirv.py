"""vulkan/gen_spirv.py coopmat-khr: a GL_NV_cooperative_matrix module rewritten as
SPV_KHR_cooperative_matrix. The expected numbers are the SPIR-V registry's (typed in here),
and the output is read back by this file's own parser."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "vulkan"))
import gen_spirv  # noqa: E402

GLSLC = shutil.which("glslc")
pytestmark = pytest.mark.skipif(GLSLC is None, reason="glslc is not installed")

# The registry's numbers (SPIR-V 1.6 unified + SPV_KHR_cooperative_matrix).
OP_TYPE_COOPMAT_KHR, OP_LOAD_KHR, OP_STORE_KHR, OP_MULADD_KHR = 4456, 4457, 4458, 4459
NV_OPCODES = {5358, 5359, 5360, 5361, 5362}
OP_CONSTANT, OP_CAPABILITY, OP_EXTENSION, OP_LOAD = 43, 17, 10, 61
CAP_COOPMAT_KHR, CAP_COOPMAT_NV = 6022, 5357
USE_A, USE_B, USE_ACC = 0, 1, 2
ROW_MAJOR, COLUMN_MAJOR = 0, 1

SHADER = """#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(constant_id = 20) const uint USE_A = 16u;
layout(constant_id = 21) const uint USE_B = 16u;
layout(binding = 0) buffer Out { uint d[]; };
shared uint sh[1024];
void main() {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, %(A_COLS)s> a;
    fcoopmatNV<16, gl_ScopeSubgroup, %(B_ROWS)s, 16> b;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    coopMatLoadNV(a, sh, 0, 8, false);
    coopMatLoadNV(b, sh, 256, 12, true);
    c = coopMatMulAddNV(a, b, c);
    coopMatStoreNV(fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(c), d, 0, 8, false);
}
"""


def compile_nv(tmp_path, tagged: bool) -> str:
    src = tmp_path / "shader.comp"
    src.write_text(SHADER % ({"A_COLS": "USE_A", "B_ROWS": "USE_B"} if tagged else {"A_COLS": "16", "B_ROWS": "16"}))
    spv = tmp_path / "shader.spv"
    subprocess.run([GLSLC, "--target-env=vulkan1.1", "-O", str(src), "-o", str(spv)], check=True)
    return str(spv)


def parse(path: str) -> list:
    data = open(path, "rb").read()
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    assert words[0] == 0x07230203
    out, at = [], 5
    while at < len(words):
        count = words[at] >> 16
        out.append((words[at] & 0xFFFF, words[at + 1:at + count]))
        at += count
    return out


def rewrite(tmp_path, tagged=True):
    out = str(tmp_path / "khr.spv")
    result = subprocess.run([sys.executable, os.path.join(REPO, "vulkan", "gen_spirv.py"), "coopmat-khr",
                             compile_nv(tmp_path, tagged), out], capture_output=True, text=True)
    return result, out


def test_rewrite_names_each_matrix_use(tmp_path):
    result, out = rewrite(tmp_path)
    assert result.returncode == 0, result.stderr
    insts = parse(out)
    assert not [op for op, _ in insts if op in NV_OPCODES]
    assert (OP_CAPABILITY, [CAP_COOPMAT_KHR]) in insts
    assert (OP_CAPABILITY, [CAP_COOPMAT_NV]) not in insts
    extensions = [b"".join(w.to_bytes(4, "little") for w in ops).rstrip(b"\0") for op, ops in insts if op == OP_EXTENSION]
    assert b"SPV_KHR_cooperative_matrix" in extensions and b"SPV_NV_cooperative_matrix" not in extensions

    constants = {ops[1]: ops[2] for op, ops in insts if op == OP_CONSTANT}
    types = {ops[0]: ops[1:] for op, ops in insts if op == OP_TYPE_COOPMAT_KHR}
    use_of = {t: constants[v[4]] for t, v in types.items()}
    assert all(constants[v[2]] == 16 and constants[v[3]] == 16 for v in types.values())  # the tags are gone
    assert sorted(use_of.values()) == [USE_A, USE_B, USE_ACC, USE_ACC]  # f16 A, f16 B, f32 and f16 accumulators

    loads = [ops for op, ops in insts if op == OP_LOAD_KHR]
    assert [(use_of[l[0]], constants[l[3]], constants[l[4]]) for l in loads] == \
        [(USE_A, ROW_MAJOR, 8), (USE_B, COLUMN_MAJOR, 12)]  # [type, result, pointer, layout, stride, ...]
    stores = [ops for op, ops in insts if op == OP_STORE_KHR]
    assert [(constants[s[2]], constants[s[3]]) for s in stores] == [(ROW_MAJOR, 8)]  # [pointer, object, layout, stride]

    value_type = {ops[1]: ops[0] for op, ops in insts if op in (OP_LOAD, OP_LOAD_KHR, 44)}
    (mul,) = [ops for op, ops in insts if op == OP_MULADD_KHR]
    assert [use_of.get(value_type.get(v)) for v in mul[2:5]] == [USE_A, USE_B, USE_ACC]


def test_untagged_module_is_refused(tmp_path):
    result, out = rewrite(tmp_path, tagged=False)
    assert result.returncode != 0
    assert "USE_A" in result.stderr and not os.path.exists(out)


def test_module_without_matrices_is_refused(tmp_path):
    src = tmp_path / "plain.comp"
    src.write_text("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n")
    spv = tmp_path / "plain.spv"
    subprocess.run([GLSLC, str(src), "-o", str(spv)], check=True)
    data = spv.read_bytes()
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    with pytest.raises(SystemExit):
        gen_spirv.coopmat_khr(words)
