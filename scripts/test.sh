#!/usr/bin/env bash
# test.sh - set up, build, then run every test, in stages:
#   1. the Python tools' tests (pytest)
#   2. the C tests through meson (build/)
#   3. the C tests again under AddressSanitizer + UndefinedBehaviorSanitizer
#      + LeakSanitizer, built with clang (build-sanitize/)
#   4. the concurrency tests (suite 'concurrency') under ThreadSanitizer,
#      built with clang (build-tsan/)
# Options: --quick (1 and 2), --sanitize (only 3), --tsan (only 4).
# A failed stage does not stop the later ones; the last lines printed say
# which stages ran, how long each took and how each ended, and the exit
# status is 0 only when every stage that ran passed.
# Meson's per-test limits are scaled for slow or busy machines: plain x2,
# sanitized x4 (OPENINFER_TIMEOUT_MULTIPLIER=N sets both).
set -uo pipefail
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
    --quick) mode=quick ;;
    --sanitize) mode=sanitize ;;
    --tsan) mode=tsan ;;
    "") ;;
    *) echo "usage: $0 [--quick|--sanitize|--tsan]" >&2; exit 2 ;;
esac

plain_multiplier=${OPENINFER_TIMEOUT_MULTIPLIER:-2}
sanitized_multiplier=${OPENINFER_TIMEOUT_MULTIPLIER:-4}

echo "test.sh: setting up ($(date -u +%H:%M:%S) UTC)"
./scripts/setup.sh || { echo "test.sh: set-up failed; no stage ran" >&2; exit 1; }

run_pytest() {
    python3 -m pytest -q tests/python
}

run_meson() {
    meson test -C build --print-errorlogs --timeout-multiplier "$plain_multiplier"
}

run_sanitized() {
    if [ ! -f build-sanitize/build.ninja ]; then
        local strict="-fno-sanitize-recover=all -fsanitize-ignorelist=$PWD/tests/ubsan_ignore.txt"
        CC=clang CXX=clang++ meson setup build-sanitize -Db_sanitize=address,undefined \
            -Db_lundef=false -Dc_args="$strict" -Dcpp_args="$strict" >/dev/null
    fi
    echo "test.sh: building build-sanitize/"
    ninja -C build-sanitize >/dev/null || ninja -C build-sanitize || return 1
    # Mesa's lavapipe keeps once-per-process allocations and is unloaded when the
    # Vulkan instance dies, so LeakSanitizer cannot name it: test_vulkan pins the
    # driver and suppresses it itself (tests/lsan.supp); every other test runs
    # with the Vulkan driver hidden (Vulkan reported unavailable, CPU used).
    # The emitted C folders the synth tests build are not instrumented: built
    # once here (OPENINFER_TEST_EMITTED_BUILD, check_examples.py), the plain
    # stage builds them with GCC, clang and as C++17.
    local -x OPENINFER_TEST_EMITTED_BUILD=once
    local asan=detect_leaks=1:abort_on_error=1
    local ubsan=print_stacktrace=1:halt_on_error=1
    # The Khronos validation layer, three quarters of test_vulkan's time on
    # lavapipe, checks the API calls the plain stage makes too: off here.
    local rc=0
    ASAN_OPTIONS=$asan UBSAN_OPTIONS=$ubsan LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
        OPENINFER_VULKAN_VALIDATION=0 \
        meson test -C build-sanitize --print-errorlogs --timeout-multiplier "$sanitized_multiplier" \
        --suite vulkan || rc=1
    ASAN_OPTIONS=$asan UBSAN_OPTIONS=$ubsan VK_DRIVER_FILES=/nonexistent.json VK_ICD_FILENAMES=/nonexistent.json \
        meson test -C build-sanitize --print-errorlogs --timeout-multiplier "$sanitized_multiplier" \
        --no-suite slow --no-suite vulkan || rc=1
    return $rc
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
    echo "test.sh: building the concurrency tests in build-tsan/"
    ninja -C build-tsan $targets >/dev/null || ninja -C build-tsan $targets || return 1
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        meson test -C build-tsan --no-rebuild --print-errorlogs --timeout-multiplier "$sanitized_multiplier" \
        --suite concurrency
}

# run_stage NAME FUNCTION: runs one stage, timed; a failure is recorded, not fatal.
summary=()
failed=0
run_stage() {
    local name=$1 start=$SECONDS result
    echo
    echo "test.sh: ===== stage: $name ($(date -u +%H:%M:%S) UTC)"
    if "$2"; then result=passed; else result=FAILED; failed=1; fi
    summary+=("$(printf '%-42s %-7s %5d s' "$name" "$result" $((SECONDS - start)))")
}

skip_stage() { summary+=("$(printf '%-42s %-7s (%s)' "$1" "not run" "$2")"); }

stages_for_mode() {
    local plain=$1 sanitize=$2 tsan=$3
    local pytest_name="1. pytest (Python tools)" meson_name="2. meson test (build/)"
    local asan_name="3. ASan+UBSan+LSan (build-sanitize/)" tsan_name="4. TSan concurrency (build-tsan/)"
    if [ "$plain" = 1 ]; then run_stage "$pytest_name" run_pytest; run_stage "$meson_name" run_meson
    else skip_stage "$pytest_name" "not asked for"; skip_stage "$meson_name" "not asked for"; fi
    if [ "$sanitize" = 1 ]; then run_stage "$asan_name" run_sanitized; else skip_stage "$asan_name" "not asked for"; fi
    if [ "$tsan" = 1 ]; then run_stage "$tsan_name" run_tsan; else skip_stage "$tsan_name" "not asked for"; fi
}

case $mode in
    quick) stages_for_mode 1 0 0 ;;
    sanitize) stages_for_mode 0 1 0 ;;
    tsan) stages_for_mode 0 0 1 ;;
    all) stages_for_mode 1 1 1 ;;
esac

echo
echo "test.sh: summary ($(date -u +%H:%M:%S) UTC, $SECONDS s in all)"
printf '  %s\n' "${summary[@]}"
exit $failed
