#!/usr/bin/env bash
# test.sh - set up, build, then run every test:
#   1. the Python tools' tests (pytest)
#   2. the C tests through meson (build/)
#   3. the C tests again under AddressSanitizer + UndefinedBehaviorSanitizer
#      + LeakSanitizer, built with clang (build-sanitize/)
# Options: --quick (skip 3), --sanitize (only 3).
# The last line printed is the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
    --quick) mode=quick ;;
    --sanitize) mode=sanitize ;;
    "") ;;
    *) echo "usage: $0 [--quick|--sanitize]" >&2; exit 2 ;;
esac

./scripts/setup.sh

run_plain() {
    python3 -m pytest -q tests/python
    meson test -C build --print-errorlogs
}

run_sanitized() {
    if [ ! -f build-sanitize/build.ninja ]; then
        CC=clang CXX=clang++ meson setup build-sanitize -Db_sanitize=address,undefined \
            -Db_lundef=false -Dc_args=-fno-sanitize-recover=all -Dcpp_args=-fno-sanitize-recover=all \
            >/dev/null
    fi
    ninja -C build-sanitize >/dev/null || ninja -C build-sanitize
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 \
    LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        meson test -C build-sanitize --print-errorlogs --no-suite slow
}

case $mode in
    quick) run_plain ;;
    sanitize) run_sanitized ;;
    all) run_plain; run_sanitized ;;
esac
