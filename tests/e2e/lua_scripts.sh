#!/usr/bin/env bash
# lua_scripts.sh — every example in scripts/ runs through `partbench run` and
# has the effect it claims, compared with the same command without the script:
#   memory_mask.lua    the RL agent's steps change at the same seed
#   attention_blocks   no group boundary inside an attention block (exact: some)
#   megatron_mlp.lua   the MILP's chosen MLP strategies change to n / k
#   no_fuse_pool.lua   fewer nodes fused, no pooling node in a fused kernel
#   greedy_initial.lua the RL agent starts from the script's allocation
# Usage: lua_scripts.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: lua_scripts.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_lua_scripts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { # run OUTFILE ARGS...: partbench ARGS, stdout to OUTFILE, must exit 0
	local out=$1
	shift
	if ! "$bin" "$@" >"$out" 2>"$tmp/err"; then
		fail "exit $?: $*"
		sed 's/^/    /' "$tmp/err" | head -5
	fi
}

# Every script has a header comment that says how to run it.
for f in scripts/*.lua; do
	head -1 "$f" | grep -q "^-- $(basename "$f") — " || fail "$f: no header comment"
	grep -q "^-- Run: *partbench run $f" "$f" || fail "$f: header does not say how to run it"
done
[ "$(ls scripts/*.lua | wc -l)" -ge 5 ] || fail "fewer than five example scripts"

# ---- memory-aware action mask: same seed, different steps.
run "$tmp/mask" run tests/e2e/lua/mask_actions.lua models/resnet18.onnx --layout layouts/manycore-tight.lua
read -r without with differ < <(sed -n 's/^steps without \([0-9]*\), with \([0-9]*\), differing \([0-9]*\)$/\1 \2 \3/p' "$tmp/mask")
[ -n "${differ:-}" ] || fail "mask_actions.lua printed no step counts: $(cat "$tmp/mask")"
[ "${without:-0}" -gt 0 ] && [ "${differ:-0}" -gt 0 ] ||
	fail "memory_mask.lua did not change the agent's steps: $(cat "$tmp/mask")"
run "$tmp/mm" run scripts/memory_mask.lua models/resnet18.onnx --layout layouts/manycore-tight.lua
grep -q "^memory_mask: rl max(t)" "$tmp/mm" || fail "memory_mask.lua output: $(cat "$tmp/mm")"

# ---- attention blocks stay in one group on bert_base_like.
run "$tmp/attn" run scripts/attention_blocks.lua models/bert_base_like.onnx --layout layouts/manycore-16.lua
exact=$(sed -n 's/^attention_blocks: exact cuts \([0-9]*\) attention blocks; rl with the rule cuts \([0-9]*\) .*/\1/p' "$tmp/attn")
rl=$(sed -n 's/^attention_blocks: exact cuts \([0-9]*\) attention blocks; rl with the rule cuts \([0-9]*\) .*/\2/p' "$tmp/attn")
[ "${exact:-0}" -gt 0 ] || fail "expected the exact plan (no rule) to cut attention blocks: $(cat "$tmp/attn")"
[ "${rl:-x}" = 0 ] || fail "the rule did not keep attention blocks whole: $(cat "$tmp/attn")"

# ---- Megatron-style MLP rule: the MILP's choices change.
strategies() { tr -d ' \n' <"$1" | grep -o '"name":"[^"]*/linear[12]/MatMul","op":"[^"]*","strategy":"[^"]*"' |
	sed 's/.*\/\(linear[12]\)\/MatMul.*"strategy":"\([^"]*\)"/\1=\2/' | sort | uniq -c | tr -s ' \n' ' '; }
run "$tmp/shard0" shard models/bert_base_like.onnx --layout layouts/cluster-1x8.lua --opt-level 1 --scheme 8 --json
run "$tmp/meg" run scripts/megatron_mlp.lua models/bert_base_like.onnx --layout layouts/cluster-1x8.lua
before=$(strategies "$tmp/shard0")
[ -n "$before" ] || fail "shard --json lists no MLP MatMuls"
grep -q "^megatron_mlp: MLP MatMul strategies k=12 n=12$" "$tmp/meg" ||
	fail "megatron_mlp.lua: expected 12 column (n) and 12 row (k) splits: $(cat "$tmp/meg")"
case "$before" in *linear1=n*linear2=k*) fail "the MILP already chose Megatron splits without the rule ($before): the test shows nothing" ;; esac

# ---- fusion exclusion: fewer nodes fused, and no pooling node inside a fused kernel.
run "$tmp/fuse0" fuse models/googlenet.onnx --json
base_fused=$(tr -d ' \n' <"$tmp/fuse0" | grep -o '"nodes_fused":[0-9]*' | head -1 | cut -d: -f2)
base_pools=$(tr -d ' \n' <"$tmp/fuse0" | grep -o '"ops":\[[^]]*\]' | grep -o '"MaxPool"\|"AveragePool"' | wc -l)
run "$tmp/nf" run scripts/no_fuse_pool.lua models/googlenet.onnx
read -r fused pools < <(sed -n 's/^no_fuse_pool: \([0-9]*\) nodes fused, \([0-9]*\) pooling nodes inside fused kernels$/\1 \2/p' "$tmp/nf")
[ "${base_pools:-0}" -gt 0 ] || fail "baseline fuse fuses no pooling node: the test shows nothing"
[ "${pools:-x}" = 0 ] || fail "no_fuse_pool.lua: pooling nodes still fused: $(cat "$tmp/nf")"
[ "${fused:-999999}" -lt "${base_fused:-0}" ] || fail "no_fuse_pool.lua: $fused nodes fused, not fewer than $base_fused"

# ---- greedy initial partition: the agent starts from it (1 episode keeps the start
# when nothing better is found; the printed allocation must be the script's).
run "$tmp/gi" run scripts/greedy_initial.lua models/resnet18.onnx --layout layouts/manycore-16.lua
alloc=$(sed -n "s/^greedy_initial: start \([0-9 ]*\)$/\1/p" "$tmp/gi")
[ -n "$alloc" ] || fail "greedy_initial.lua output: $(cat "$tmp/gi")"
run "$tmp/gi2" run tests/e2e/lua/initial_seen.lua models/resnet18.onnx --layout layouts/manycore-16.lua
grep -q "^first state = initial_partition: yes$" "$tmp/gi2" || fail "the agent did not start from the script's partition: $(cat "$tmp/gi2")"

echo "lua scripts: $fails failure(s)"
[ "$fails" -eq 0 ]
