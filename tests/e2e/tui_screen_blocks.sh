#!/usr/bin/env bash
# tui_screen_blocks.sh — the first screen's blocks (issue 17, item 7), driven
# through tmux:
# - models without module paths (tests/data/googlenet_unnamed.onnx,
#   tests/data/densenet121_noname.onnx, which has no node names at all) open
#   at the structural block level: a few boxes (6..40), not one per node,
#   and Enter on a block shows its sub-blocks (more boxes);
# - at zoom 1 block labels keep their index: swin_t's stages show as
#   {features.1} .. {features.7}, not as eight {features} boxes, and at depth
#   3 bert_base_like's layers as {..3.self_attn};
# - names with dotted module paths and no '/' (a generated GPT) open at one
#   box per decoder block, h0 .. h23.
# Usage: tui_screen_blocks.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_screen_blocks.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" blocks
n_sess=0
start() { # start MODEL [ARGS...]: a new workbench in a new tmux session
	local old=$sess args=""
	n_sess=$((n_sess + 1))
	sess=pb$n_sess
	for x in "$@"; do args="$args '$x'"; done
	tm -f /dev/null new-session -d -s "$sess" -x 150 -y 45 -c "$tmp" \
		"env LANG=C.UTF-8 '$bin' $args; echo PB_EXIT=\$?; sleep 600"
	[ $n_sess -gt 1 ] && tm kill-session -t "$old" 2>/dev/null
}
quit() {
	keys q
	wait_for 'PB_EXIT=0'
}
boxes() { grep -oE '[0-9]+ boxes' "$tmp/screen" | head -1 | cut -d' ' -f1; }

# --- no module paths: the first screen is the block level, Enter expands
for m in googlenet_unnamed densenet121_noname; do
	start "$root/tests/data/$m.onnx"
	wait_for "$m.onnx: [0-9]+ nodes"
	wait_for '[0-9]+ boxes, dot'
	n=$(boxes)
	[ "$n" -ge 6 ] && [ "$n" -le 40 ] || fail "$m opens at $n boxes (want 6..40)"
	grep -qE '║[0-9.]+ [A-Za-z]+' "$tmp/screen" || fail "$m: no structural block label"
	keys Enter
	wait_for "[0-9]+ boxes, (dot|simple)"
	for i in $(seq 50); do
		screen
		[ "$(boxes)" -gt "$n" ] && break
		sleep 0.1
	done
	[ "$(boxes)" -gt "$n" ] || fail "$m: Enter did not expand a block ($n boxes)"
	quit
done

# --- dotted module paths (partbench gen gpt: h0.attn.q.matmul): a box per
# decoder block at level 1, labelled h0 .. h23, h0.attn at level 2, not
# structural cuts
"$bin" gen gpt --layers 24 --seq 64 -o "$tmp/gpt24.onnx" >/dev/null || fail "gen gpt failed"
start "$tmp/gpt24.onnx"
wait_for 'gpt24.onnx: [0-9]+ nodes'
wait_for '[0-9]+ boxes, dot'
wait_for '║h0\.attn +║'
grep -q 'LayerNormalization\.\.' "$tmp/screen" && fail "gpt24: structural labels, not h0 .. h23"
cmd 'view depth 1'
wait_for '║h0 +║'
# the status bar's count follows the new view's layout a moment later
# (seen under ASan: h0 .. boxes drawn while it still said 147)
for _ in $(seq 50); do
	n=$(boxes)
	[ "$n" -ge 24 ] && [ "$n" -le 40 ] && break
	sleep 0.1
	screen
done
n=$(boxes)
[ "$n" -ge 24 ] && [ "$n" -le 40 ] || fail "gpt24 opens at $n boxes (want 24..40)"
quit

# --- zoom 1: the index stays visible
start "$root/models/swin_t.onnx"
wait_for 'swin_t.onnx: 6623 nodes'
wait_for '[0-9]+ boxes, dot' $((limit * 3))
cmd 'view zoom 1'
wait_for '\{features\.7\}'
for s in 0 1 2 3 4 5 6; do
	grep -q "{features\.$s}" "$tmp/screen" || fail "no {features.$s} at zoom 1"
done
grep -q '{features}' "$tmp/screen" && fail "a block label cut to {features}"
quit
start "$root/models/bert_base_like.onnx"
wait_for 'bert_base_like.onnx: 991 nodes'
cmd 'view zoom 1'
cmd 'view depth 3'
cmd 'find /blocks/layers.3/self_attn/'
wait_for '\{\.\.3\.self_attn\}'
quit
echo "ok: tui_screen_blocks"
