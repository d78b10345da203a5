"""openinfer_impl/npy.h against numpy: arrays numpy saves are read by a small C program
(tests/npy/npy_tool.c, built here in an empty folder beside a copy of npy.h and nothing
else: the header must need only the C library), and the files that program writes are
loaded by numpy. Expected values come from numpy, never from the C code."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

from conftest import REPO

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
OUR_NAMES = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
             "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
             "float16": "f16", "float32": "f32", "float64": "f64"}
SHAPES = [(), (0,), (5,), (2, 3), (2, 0, 3), (2, 3, 4), (1, 1, 1, 7)]


@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    """npy_tool compiled with -Werror as C11, next to npy.h alone (no path into the repo)."""
    folder = tmp_path_factory.mktemp("npy_tool")
    shutil.copy(os.path.join(REPO, "openinfer_impl", "npy.h"), folder)
    shutil.copy(os.path.join(REPO, "tests", "npy", "npy_tool.c"), folder)
    exe = folder / "npy_tool"
    subprocess.run([CC, "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "npy_tool.c",
                    "-o", str(exe)], cwd=folder, check=True, capture_output=True, text=True)
    return str(exe)


def run(tool, *args):
    return subprocess.run([tool, *map(str, args)], capture_output=True, text=True, timeout=60)


def sample(dtype: str, shape, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        a = rng.standard_normal(shape).astype(dtype) * 100
        flat = a.reshape(-1)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype)
        flat[: min(flat.size, 4)] = specials[: min(flat.size, 4)]
        return a
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def dump(tool, path):
    proc = run(tool, "dump", path)
    assert proc.returncode == 0, proc.stderr
    head, data = proc.stdout.split("\n")[:2]
    fields = head.split()
    return fields[0], tuple(int(d) for d in fields[2:]), bytes.fromhex(data)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_files_read_in_c_order_host_bytes(tool, tmp_path, dtype):
    for shape in SHAPES:
        for order in ("C", "F"):
            for byteorder in ("<", ">"):
                a = sample(dtype, shape, seed=len(shape))
                a = np.asarray(a, dtype=np.dtype(dtype).newbyteorder(byteorder), order=order)
                path = tmp_path / "in.npy"
                np.save(path, a)
                name, got_shape, data = dump(tool, path)
                assert name == OUR_NAMES[dtype]
                assert got_shape == shape
                want = np.ascontiguousarray(a.astype(np.dtype(dtype).newbyteorder("<"))).tobytes()
                assert data == want, (shape, order, byteorder)


@pytest.mark.parametrize("dtype", DTYPES)
def test_written_files_are_np_save_bytes(tool, tmp_path, dtype):
    """copy = read + write: a little-endian C-order file comes back byte for byte, and any
    other layout comes back as np.save writes its C-order little-endian copy."""
    for shape in SHAPES:
        for order, byteorder in (("C", "<"), ("F", ">"), ("F", "<")):
            a = np.asarray(sample(dtype, shape, seed=7), dtype=np.dtype(dtype).newbyteorder(byteorder), order=order)
            src, out, ref = tmp_path / "src.npy", tmp_path / "out.npy", tmp_path / "ref.npy"
            np.save(src, a)
            proc = run(tool, "copy", src, out)
            assert proc.returncode == 0, proc.stderr
            np.save(ref, a.astype(np.dtype(dtype).newbyteorder("<"), order="C"))
            assert out.read_bytes() == ref.read_bytes(), (shape, order, byteorder)


def expected_make(dtype: str, shape) -> np.ndarray:
    """npy_tool make's formula, computed here independently."""
    i = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64)
    if dtype == "bool":
        v = i % 3 == 0
    elif dtype == "float16":
        v = (np.uint16(0x3C00) + i.astype(np.uint16)).view(np.float16)
    elif dtype.startswith("float"):
        v = (i.astype(np.float64) / 4.0 - 1.0).astype(dtype)
    else:
        v = (i * np.uint64(37) + np.uint64(5)).astype(dtype)  # wraps like a C cast
    return v.reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_c_written_files_load_in_numpy(tool, tmp_path, dtype):
    for shape in SHAPES + [(3, 1000)]:
        out = tmp_path / "made.npy"
        proc = run(tool, "make", OUR_NAMES[dtype], out, *shape)
        assert proc.returncode == 0, proc.stderr
        got = np.load(out)
        want = expected_make(dtype, shape)
        assert got.dtype == np.dtype(dtype).newbyteorder("<") and got.shape == shape
        np.testing.assert_array_equal(got, want)
        ref = tmp_path / "ref.npy"
        np.save(ref, want)
        assert out.read_bytes() == ref.read_bytes()  # the same bytes as np.save


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_format_versions(tool, tmp_path, version):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    path = tmp_path / "v.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    assert path.read_bytes()[6:8] == bytes(version)
    assert dump(tool, path) == ("i32", (2, 3), a.tobytes())


def header_file(header: str, data: bytes = b"", version: int = 1) -> bytes:
    """A .npy file with this header text, padded like numpy pads it."""
    text = header.encode("latin1")
    prefix = 10 if version == 1 else 12
    pad = 64 - (prefix + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    size = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text + data


def test_python2_header_and_liberal_spacing(tool, tmp_path):
    path = tmp_path / "p2.npy"
    path.write_bytes(header_file("{'descr':'<u2','fortran_order':False,'shape':(2L, 1L)}",
                                 struct.pack("<2H", 7, 9)))
    assert dump(tool, path) == ("u16", (2, 1), struct.pack("<2H", 7, 9))
    path.write_bytes(header_file('{ "shape" : ( 3 , ) , "fortran_order" : True , "descr" : "|u1" , }', b"abc"))
    assert dump(tool, path) == ("u8", (3,), b"abc")


REFUSED = [
    (np.array([1 + 2j]), "complex"),
    (np.array([1.5], dtype=np.longdouble), "long double"),
    (np.array(["ab"]), "unicode"),
    (np.array([b"ab"]), "byte-string"),
    (np.array([1], dtype="datetime64[s]"), "datetime"),
    (np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]), "structured"),
    (np.zeros(2, dtype="V3"), "void"),
    (np.array([None, 1], dtype=object), "object"),
]


@pytest.mark.parametrize("array,why", REFUSED, ids=[w for _, w in REFUSED])
def test_refused_dtypes_say_why(tool, tmp_path, array, why):
    path = tmp_path / "bad.npy"
    np.save(path, array, allow_pickle=True)
    proc = run(tool, "dump", path)
    assert proc.returncode == 1
    assert str(path) in proc.stderr and why in proc.stderr, proc.stderr


DAMAGED = [
    ("truncated data", lambda b: b[:-1], "truncated"),
    ("trailing bytes", lambda b: b + b"\0", "trailing bytes"),
    ("no magic", lambda b: b"\x93NUMPX" + b[6:], "not a .npy file"),
    ("version 4.0", lambda b: b[:6] + b"\x04\x00" + b[8:], "version 4.0"),
    ("header cut", lambda b: b[:40], "truncated"),
    ("empty file", lambda b: b"", "not a .npy file"),
]


@pytest.mark.parametrize("name,damage,why", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_damaged_files_say_why(tool, tmp_path, name, damage, why):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(4, dtype=np.float32))
    bad = tmp_path / "bad.npy"
    bad.write_bytes(damage(good.read_bytes()))
    proc = run(tool, "dump", bad)
    assert proc.returncode == 1 and why in proc.stderr, proc.stderr


BAD_HEADERS = [
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unknown key 'extra'"),
    ("{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"),
    ("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "appears twice"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "not a tuple"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "not a tuple"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "negative"),
    ("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "True or False"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "after the dict"),
    ("['descr', '<f4']", "not a dict"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 65 + ")}", "more than 64 dimensions"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "63 bits"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}", "64 bits"),
]


@pytest.mark.parametrize("header,why", BAD_HEADERS, ids=[w for _, w in BAD_HEADERS])
def test_bad_headers_say_why(tool, tmp_path, header, why):
    path = tmp_path / "bad.npy"
    path.write_bytes(header_file(header, b"\0" * 8))
    proc = run(tool, "dump", path)
    assert proc.returncode == 1 and why in proc.stderr, proc.stderr


def test_missing_file_and_unwritable_output(tool, tmp_path):
    proc = run(tool, "dump", tmp_path / "absent.npy")
    assert proc.returncode == 1 and "cannot open" in proc.stderr
    proc = run(tool, "make", "f32", tmp_path / "no" / "such" / "dir.npy", 2)
    assert proc.returncode == 1 and "cannot create" in proc.stderr


@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler")
def test_header_compiles_as_strict_cpp17(tmp_path):
    """Emitted folders compile as C++17 too: npy.h must, warning-free."""
    shutil.copy(os.path.join(REPO, "openinfer_impl", "npy.h"), tmp_path)
    shutil.copy(os.path.join(REPO, "tests", "npy", "npy_tool.c"), tmp_path / "npy_tool.cpp")
    proc = subprocess.run(["c++", "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "npy_tool.cpp",
                           "-o", "npy_tool_cpp"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    np.save(tmp_path / "a.npy", a)
    assert dump(str(tmp_path / "npy_tool_cpp"), tmp_path / "a.npy") == ("i16", (2, 3), a.tobytes())
