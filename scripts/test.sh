#!/usr/bin/env bash
# test.sh - set up, build, then run every test: the Python tools' tests,
# then the C tests through meson (its summary is the last thing printed).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
python3 -m pytest -q tests/python
meson test -C build --print-errorlogs
