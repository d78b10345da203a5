#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SEED_CORPUS SECONDS - runs a libFuzzer target for a
# bounded time on a scratch copy of the seed corpus; a crash fails the test
# and its input is kept under crashes/ for a regression corpus entry.
set -uo pipefail
fuzzer=$1 seeds=$2 seconds=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p crashes
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix=crashes/"$(basename "$fuzzer")"- -print_final_stats=1 "$scratch" "$seeds" \
    >"$scratch.log" 2>&1
status=$?
grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==|SUMMARY)" "$scratch.log"
[ $status -eq 0 ] || tail -n 40 "$scratch.log"
rm -f "$scratch.log"
exit $status
