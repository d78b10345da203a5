#!/usr/bin/env bash
# precision_table.sh [BUILD] - regenerates the measured error table of docs/precision.md from
# the test's own output (`tests/test_precision --table`), between its two marker lines.
# BUILD: the meson build folder (default build); the test is built there first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ninja -C "$BUILD" tests/test_precision > /dev/null
table=$("$BUILD/tests/test_precision" --table | grep '^|')
python3 - docs/precision.md "$table" <<'PY'
import re, sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = "<!-- precision-table begin -->", "<!-- precision-table end -->"
new = re.sub(re.escape(begin) + ".*?" + re.escape(end), begin + "\n" + table + "\n" + end, text, flags=re.S)
if new == text and table not in text:
    sys.exit("precision_table.sh: the markers are missing in " + path)
open(path, "w").write(new)
print("precision_table.sh: updated " + path)
PY
