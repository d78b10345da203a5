"""dataclass_to_oinf.py --input module:ClassOrInstance [--json] --output."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import KV_CACHE_DECODE, PYTHON_DIR

MODULE = '''
from dataclasses import dataclass, field
import numpy as np
from dataclass_to_oinf import SizeVar

@dataclass
class KvCache:
    D: SizeVar = SizeVar(16)
    zero: np.ndarray = field(default_factory=lambda: np.zeros(16, dtype=np.float32))

instance = KvCache()
'''


def run(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, os.path.join(PYTHON_DIR, "dataclass_to_oinf.py"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def test_cli_class_instance_and_json(tmp_path):
    (tmp_path / "kvmodel.py").write_text(MODULE)
    for target in ("kvmodel:KvCache", "kvmodel:instance"):
        proc = run(tmp_path, "--input", target, "--output", "out.oinf")
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / "out.oinf").read_bytes() == KV_CACHE_DECODE
    # JSON replaces fields: D = 4 and a 4-element tensor (a JSON list becomes an ndarray)
    (tmp_path / "data.json").write_text(json.dumps({"D": 4, "zero": [0.0, 0.0, 0.0, 0.0]}))
    proc = run(tmp_path, "--input", "kvmodel:KvCache", "--json", "data.json", "--output", "small.oinf")
    assert proc.returncode == 0, proc.stderr
    blob = (tmp_path / "small.oinf").read_bytes()
    assert blob[80:88] == (4).to_bytes(8, "little")


def test_cli_reports_errors_without_traceback(tmp_path):
    (tmp_path / "kvmodel.py").write_text(MODULE)
    for args in (["--input", "kvmodel", "--output", "x.oinf"],
                 ["--input", "kvmodel:Missing", "--output", "x.oinf"],
                 ["--input", "nosuchmodule:X", "--output", "x.oinf"]):
        proc = run(tmp_path, *args)
        assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
