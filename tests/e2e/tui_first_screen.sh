#!/usr/bin/env bash
# tui_first_screen.sh — a readable first screen and the ':' line's completion
# (issue 17, items 6 and 7), driven through tmux:
# - resnet18: no boxes of constants (the Identity weight copies) until C
#   shows them, C again hides them; the view starts at the first computing
#   node (conv1) at the top of the canvas, and at googlenet's after :open;
# - bert_base_like: blocks named by their module's qualified name
#   (blocks.layers.0.self_attn), not by a repeated last component;
# - googlenet without module paths and with symbolic input dims
#   (tests/data/gen_unnamed.py): structural blocks ("1 Conv..MaxPool"),
#   Enter expands one; the title and the output pane say the model needs
#   --input, the output pane gives the option; with --input that is gone;
# - Tab on the ':' line completes a path (a positional FILE, a folder, the
#   value of --layout and of --layout=) and option names from the command's
#   option table; '?' names the C key.
# Usage: tui_first_screen.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_first_screen.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" first
n_sess=0
start() { # start MODEL [ARGS...]: a new workbench in a new tmux session (the
	# last one stays until then: killing it could end the server)
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

# --- resnet18: constants hidden, C toggles, the view starts at the input
start "$root/models/resnet18.onnx"
wait_for 'resnet18.onnx: 65 nodes'
wait_for '[0-9]+ boxes, dot'
hidden=$(boxes)
grep -q 'Identity' "$tmp/screen" && fail "a box of constants (Identity) on the first screen"
grep -q 'sel 16 /conv1/Conv' "$tmp/screen" || fail "the first selection is not the input's consumer"
sed -n 2,5p "$tmp/screen" | grep -q 'Conv conv1' || fail "conv1 is not at the top of the canvas"
keys C
wait_for 'constants shown \(C hides them\)'
wait_for '65 boxes'
[ "$hidden" -lt 65 ] || fail "constants were not hidden ($hidden boxes)"
keys C
wait_for 'constants hidden: [0-9]+ nodes in boxes of constants only'
wait_for "$hidden boxes"
# a model opened in its place starts at its own inputs too
cmd "open $root/models/googlenet.onnx"
wait_for 'googlenet.onnx: 179 nodes'
wait_for 'sel 40 /conv1/conv/Conv'
quit

# --- bert_base_like: qualified module names as block labels
start "$root/models/bert_base_like.onnx"
wait_for 'bert_base_like.onnx: 991 nodes'
wait_for 'blocks\.layers\.0\.self_attn'
grep -qE '║self_attn \[' "$tmp/screen" && fail "a block labelled by its last component only"
quit

# --- googlenet without module paths, symbolic input dims
start "$root/tests/data/googlenet_unnamed.onnx"
wait_for 'googlenet_unnamed.onnx: 179 nodes, [0-9.]+ M MACs \(needs --input\)'
wait_for 'this model needs --input: input dims without a value: input.1=N,3,H,W'
wait_for 'reopen with +:open .*googlenet_unnamed.onnx --input input.1=N,3,H,W'
wait_for '[0-9]+ boxes, dot'
n=$(boxes)
[ "$n" -lt 179 ] || fail "nothing collapsed ($n boxes)"
# level 1: about 12 blocks, one per inception module
cmd 'view depth 1'
wait_for '1 Conv\.\.MaxPool'
n=$(boxes)
[ "$n" -ge 6 ] && [ "$n" -le 24 ] || fail "structural collapse gave $n boxes (want 6..24)"
keys Enter
wait_for 'Conv p2o\.Conv\.0'
quit
start "$root/tests/data/googlenet_unnamed.onnx" --input input.1=1,3,224,224
wait_for 'googlenet_unnamed.onnx: 179 nodes, 1.50 G MACs'
wait_for '[0-9]+ boxes, dot'
grep -q 'needs --input' "$tmp/screen" && fail "the --input notice with --input given"

# --- Tab completion on the ':' line (cwd is $tmp)
mkdir -p "$tmp/sessions"
touch "$tmp/sessions/alpha-session.json" "$tmp/sessions/beta.json"
keys :
wait_for '^:'
keys -l 'load ses'
keys Tab
wait_for '^:load sessions/'
keys -l 'al'
keys Tab
wait_for '^:load sessions/alpha-session\.json'
keys C-u
keys -l 'partition -'
keys -l -- '-lay'
keys Tab
wait_for '^:partition --layout'
keys -l "$root/layouts/many"
keys Tab
wait_for 'manycore-16\.lua +manycore-64-mesh\.lua +manycore-64\.lua'
wait_for "^:partition --layout $root/layouts/manycore-"
keys C-u
keys -l 'partition -'
keys -l -- '-'
keys Tab
wait_for ' --layout --max-labels --method .*--place'
keys C-u
keys -l 'partition -'
keys -l -- "-layout=$root/layouts/manycore-16."
keys Tab
wait_for "^:partition --layout=$root/layouts/manycore-16\.lua"
keys C-u
keys -l 'export --colo'
keys Tab
wait_for '^:export --color-by'
keys Escape
# the help names the key
keys '?'
wait_for 'C +view set constants=%C +show / hide boxes of constants only'
keys q
quit
echo "ok: tui_first_screen"
