#!/usr/bin/env bash
# cli_graph.sh OPENINFER SRC_ROOT - `openinfer graph` prints a saved graph
# back byte for byte, draws it as DOT, and rejects broken JSON with a place.
set -euo pipefail
cli=$1 src=$2
graph=$src/tests/fuzz/corpus/graph_json/every_construct.json
"$cli" graph "$graph" | cmp - "$graph"
dot=$("$cli" graph "$graph" --dot)
grep -q '^digraph "every_construct" {' <<<"$dot"
grep -q 'subgraph cluster_' <<<"$dot"
"$cli" devices | grep -q '^0: cpu'
bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
printf '{"format": "openinfer-graph",\n  "version": }' >"$bad"
if "$cli" graph "$bad" 2>"$bad.err"; then echo "broken JSON accepted"; exit 1; fi
grep -q "line 2, column" "$bad.err" || { cat "$bad.err"; exit 1; }
rm -f "$bad.err"
# an unknown attribute is kept (stdout) and warned about (stderr); strict mode refuses it
sed '0,/"dims": \["B", "D"\], "src"/s//"dims": ["B", "D"], "extra_attrs": ["@layout(\\"nhwc\\")"], "src"/' "$graph" >"$bad"
kept=$("$cli" graph "$bad" 2>"$bad.err")
grep -q '"extra_attrs": \["@layout(\\"nhwc\\")"\]' <<<"$kept"
grep -q 'graphs_every_construct.h:7: warning: OI_VAR(x, f32\[B, D\]): unknown attribute @layout("nhwc") is kept' "$bad.err" ||
    { cat "$bad.err"; exit 1; }
if OPENINFER_STRICT=1 "$cli" graph "$bad" 2>"$bad.err"; then echo "strict mode accepted @layout"; exit 1; fi
grep -q 'error: OI_VAR(x, f32\[B, D\]): unknown attribute @layout("nhwc") (.*strict mode)' "$bad.err" || { cat "$bad.err"; exit 1; }
rm -f "$bad.err"
echo "cli_graph: ok"
