#!/usr/bin/env bash
# run_dropin.sh SRC_ROOT BUILD_ROOT - builds dist/openinfer.h, copies ONLY it
# and dropin.c into an empty temp folder, compiles there (C11 and C++17,
# no include path into the repo, warnings as errors) and runs the program.
set -euo pipefail
src=$1 build=$2
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
python3 "$src/scripts/amalgamate" --out "$dist/gen/openinfer.h" --build-dir "$build" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$dist" "$work"' EXIT
cp "$dist/gen/openinfer.h" "$src/tests/dist/dropin.c" "$work/"
cd "$work"
cc -std=c11 -Wall -Wextra -pedantic -Werror -O1 dropin.c -o dropin_c -lm -lpthread
./dropin_c
cp dropin.c dropin.cpp
# -O0: the C++ build of the whole library at -O2 with -Werror is compile_cpp17's; this checks the
# amalgamation compiles and runs as C++ (in half the time of -O1)
c++ -std=c++17 -Wall -Wextra -pedantic -Werror -O0 dropin.cpp -o dropin_cpp -lm -lpthread
./dropin_cpp
