#!/usr/bin/env bash
# Runs every ```lua block of docs/lua-api.md as a script against resnet18 on
# the 16-core layout: the documented examples must keep working.
set -euo pipefail
bin=${1:?usage: lua_docs.sh PARTBENCH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /^```lua$/ { n++; f = sprintf("%s/example%02d.lua", dir, n); inblk = 1; next }
  /^```$/    { inblk = 0; next }
  inblk      { print > f }
' docs/lua-api.md
count=$(ls "$tmp"/example*.lua 2>/dev/null | wc -l)
[ "$count" -ge 5 ] || { echo "FAIL: expected at least 5 lua examples, found $count"; exit 1; }
pass=0 fail=0
for f in "$tmp"/example*.lua; do
  if out=$("$bin" run "$f" models/resnet18.onnx --layout layouts/manycore-16.lua 2>&1); then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $(basename "$f"):"; sed 's/^/  /' "$f"; echo "  output: $out"
  fi
done
echo "lua docs examples: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
