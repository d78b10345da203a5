"""`pip install ./python` gives a working package and commands, with no sys.path tricks."""
import os
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pip_install_python_folder(tmp_path):
    target = tmp_path / "site"
    source = tmp_path / "python"  # a copy: pip builds in the tree it is given
    shutil.copytree(os.path.join(REPO, "python"), source, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", str(target), str(source)], check=True, cwd=tmp_path)
    model = tmp_path / "m.oinf"
    script = (
        "import openinfer_oinf, verify_oinf\n"
        "print(openinfer_oinf.__file__)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    assert out.startswith(str(target)), out  # the installed copy, not the repository's
    # the installed command verifies a file written by the repository's example writer
    subprocess.run([sys.executable, os.path.join(REPO, "examples/python/minimal_oinf.py"), str(model)],
                   check=True, cwd=tmp_path, capture_output=True)
    verify = subprocess.run([str(target / "bin" / "openinfer-verify-oinf"), str(model)], env=env,
                            cwd=tmp_path, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    assert "B := 1024" in verify.stdout
