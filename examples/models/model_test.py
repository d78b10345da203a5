"""model_test.py: what the four model tests share (each test_*.py imports it).

- `missing(*modules)`: a module to import is not installed (the test then exits SKIPPED);
- `import_model(model, importer, *args)`: makes MODEL with its importer when it is missing or
  older than the importer, under a temporary name first (the cpu and vulkan tests of one model
  may import at once);
- `run_example(cmd)` and `failure_code(run)`: runs the example, shows its output, and says
  what a failed run means: SKIPPED when the Vulkan backend found no device, else a failure.
"""
import importlib.util
import os
import subprocess
import sys

SKIPPED = 77  # meson's "skipped"


def missing(*modules: str) -> bool:
    return any(importlib.util.find_spec(m) is None for m in modules)


def on_vulkan() -> bool:
    return os.environ.get("OPENINFER_BACKEND", "").startswith("vulkan")


def import_model(model: str, importer: str, *args: str, quiet: bool = False) -> str:
    if not os.path.exists(model) or os.path.getmtime(model) < os.path.getmtime(importer):
        partial = f"{model}.{os.getpid()}"
        subprocess.run([sys.executable, importer, partial, *args], check=True,
                       stderr=subprocess.DEVNULL if quiet else None)
        os.replace(partial, model)
    return model


def run_example(cmd: list) -> subprocess.CompletedProcess:
    run = subprocess.run(cmd, capture_output=True, text=True)
    print(run.stdout, end="")
    return run


def failure_code(run: subprocess.CompletedProcess) -> int:
    print(run.stderr, end="")
    if on_vulkan() and "unavailable" in run.stderr:
        print("skipped: no Vulkan device")
        return SKIPPED
    return 1
