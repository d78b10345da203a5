#!/usr/bin/env bash
# test.sh - set up, build, then run every test:
#   1. the Python tools' tests (pytest)
#   2. the C tests through meson (build/)
#   3. the C tests again under AddressSanitizer + UndefinedBehaviorSanitizer
#      + LeakSanitizer, built with clang (build-sanitize/)
#   4. the concurrency tests (suite 'concurrency') under ThreadSanitizer,
#      built with clang (build-tsan/)
# Options: --quick (skip 3 and 4), --sanitize (only 3), --tsan (only 4).
# The last line printed is the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
    --quick) mode=quick ;;
    --sanitize) mode=sanitize ;;
    --tsan) mode=tsan ;;
    "") ;;
    *) echo "usage: $0 [--quick|--sanitize|--tsan]" >&2; exit 2 ;;
esac

./scripts/setup.sh

run_plain() {
    python3 -m pytest -q tests/python
    meson test -C build --print-errorlogs
}

run_sanitized() {
    if [ ! -f build-sanitize/build.ninja ]; then
        local strict="-fno-sanitize-recover=all -fsanitize-ignorelist=$PWD/tests/ubsan_ignore.txt"
        CC=clang CXX=clang++ meson setup build-sanitize -Db_sanitize=address,undefined \
            -Db_lundef=false -Dc_args="$strict" -Dcpp_args="$strict" >/dev/null
    fi
    ninja -C build-sanitize >/dev/null || ninja -C build-sanitize
    # Mesa's lavapipe keeps once-per-process allocations and is unloaded when the
    # Vulkan instance dies, so LeakSanitizer cannot name it: test_vulkan pins the
    # driver and suppresses it itself (tests/lsan.supp); every other test runs
    # with the Vulkan driver hidden (Vulkan reported unavailable, CPU used).
    local asan=detect_leaks=1:abort_on_error=1
    local ubsan=print_stacktrace=1:halt_on_error=1
    ASAN_OPTIONS=$asan UBSAN_OPTIONS=$ubsan LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
        meson test -C build-sanitize --print-errorlogs test_vulkan
    ASAN_OPTIONS=$asan UBSAN_OPTIONS=$ubsan VK_DRIVER_FILES=/nonexistent.json VK_ICD_FILENAMES=/nonexistent.json \
        meson test -C build-sanitize --print-errorlogs --no-suite slow
}

# Only the concurrency tests are built here (--no-rebuild: meson would build
# every target first); the Vulkan backend is left out (CPU threads only).
run_tsan() {
    if [ ! -f build-tsan/build.ninja ]; then
        CC=clang CXX=clang++ meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dvulkan=disabled \
            >/dev/null
    fi
    ninja -C build-tsan build.ninja >/dev/null # reconfigures if a meson.build changed
    local targets
    targets=$(meson introspect build-tsan --tests | python3 -c '
import json, sys, os
for t in json.load(sys.stdin):
    if "concurrency" in t["suite"] or any(s.endswith(":concurrency") for s in t["suite"]):
        print(os.path.relpath(t["cmd"][0], os.path.abspath("build-tsan")))')
    ninja -C build-tsan $targets >/dev/null || ninja -C build-tsan $targets
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        meson test -C build-tsan --no-rebuild --print-errorlogs --suite concurrency
}

case $mode in
    quick) run_plain ;;
    sanitize) run_sanitized ;;
    tsan) run_tsan ;;
    all) run_plain; run_sanitized; run_tsan ;;
esac
