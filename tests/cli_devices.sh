#!/usr/bin/env bash
# cli_devices.sh OPENINFER SRC_ROOT - `openinfer devices --json [INDEX]` writes
# device JSON that `devices --check --strict` accepts (every available device,
# one by index, an array of all); the committed examples/devices/ files are
# valid; broken files are refused naming the JSON path; unknown keys warn,
# and fail under --strict.
set -euo pipefail
cli=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "cli_devices: $*"; exit 1; }

"$cli" devices --json >"$tmp/all.json"
python3 - "$tmp/all.json" "$tmp" <<'PY'
import json, sys
devices = json.load(open(sys.argv[1]))
assert isinstance(devices, list) and devices, devices
assert devices[0]["device"]["type"] == "cpu" and devices[0]["device"]["api"] == "c", devices[0]
assert devices[0]["limits"]["cores"] >= 1 and devices[0]["memory"]["global_bytes"] > 0
for i, d in enumerate(devices):
    json.dump(d, open(f"{sys.argv[2]}/dev{i}.json", "w"))
PY
for f in "$tmp"/dev*.json "$src"/examples/devices/*.json; do
    "$cli" devices --check "$f" --strict >/dev/null || fail "$f refused"
done
"$cli" devices --json 0 | grep -q '"api": "c"' || fail "devices --json 0 is not the CPU"
if "$cli" devices --json 99 2>"$tmp/err"; then fail "device 99 accepted"; fi
grep -q "no device 99" "$tmp/err" || fail "$(cat "$tmp/err")"
set +e
"$cli" devices --json x 2>/dev/null; [ $? -eq 2 ] || fail "devices --json x: exit code is not 2"
set -e

sed 's/"max_kernel_ops": 12/"max_kernel_ops": 0/' "$src/examples/devices/ada_mock.json" >"$tmp/bad.json"
if "$cli" devices --check "$tmp/bad.json" 2>"$tmp/err"; then fail "max_kernel_ops 0 accepted"; fi
grep -q 'bad.json: device JSON: \$.preferences.max_kernel_ops: expected an integer in \[1, 1024\], found 0' "$tmp/err" ||
    fail "$(cat "$tmp/err")"
sed 's/"fp16": true,/"fp16": true, "tensor_cores": 4,/' "$src/examples/devices/ada_mock.json" >"$tmp/extra.json"
"$cli" devices --check "$tmp/extra.json" 2>"$tmp/err" >/dev/null || fail "unknown key refused without --strict"
grep -q 'warning: \$.features.tensor_cores: unknown key (kept, not used)' "$tmp/err" || fail "$(cat "$tmp/err")"
if "$cli" devices --check "$tmp/extra.json" --strict 2>"$tmp/err"; then fail "unknown key accepted by --strict"; fi
grep -q 'refused in strict mode' "$tmp/err" || fail "$(cat "$tmp/err")"
echo "cli_devices: ok"
