# tui_tmux.sh — sourced by the tmux-driven workbench tests (tui_plan_edits.sh,
# tui_plan_drag.sh, tui_branch_color.sh): a private tmux server and session,
# a temporary folder removed at exit, and the helpers to read the screen and
# type. Not a test itself (ctest runs tests/e2e/*.sh only).
# Usage: . "$(dirname "$0")/lib/tui_tmux.sh" NAME   (sets sock, sess, tmp, limit)
pb_tui_name=${1:?usage: . lib/tui_tmux.sh NAME}
sock=pb$pb_tui_name-$$
sess=pb
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d "/tmp/pb_$pb_tui_name.XXXXXX")
cleanup() {
	tm kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
limit=20
[ -n "${PB_SANITIZED:-}" ] && limit=90

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	tm capture-pane -p -t "$sess" 2>/dev/null
	exit 1
}
screen() { tm capture-pane -p -t "$sess" >"$tmp/screen" 2>/dev/null; }
# wait_for REGEX [SECONDS]: polls the screen until REGEX matches (no fixed sleeps).
wait_for() {
	local end=$((SECONDS + ${2:-$limit}))
	while [ $SECONDS -lt $end ]; do
		screen && grep -qE -- "$1" "$tmp/screen" && return 0
		sleep 0.1
	done
	fail "timed out waiting for /$1/"
}
keys() { tm send-keys -t "$sess" "$@"; }
# cmd LINE: types LINE on the workbench's ':' line
cmd() {
	keys :
	wait_for '^:'
	keys -l "$1"
	keys Enter
}
