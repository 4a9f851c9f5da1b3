#!/bin/bash
# The handler-size lint (tests/lint/check_handler_size.py) on made-up trees:
# a command function of 151 lines fails naming the file, line and function;
# one of 150 lines passes, as do long functions outside core/cmds and tui/.
# Then the real tree passes (every handler <= 150 lines).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
check="python3 $here/tests/lint/check_handler_size.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
fn() { # fn NAME LINES: a function of LINES lines, signature to closing brace
	printf 'static int %s(int a)\n{\n' "$1"
	for ((i = 0; i < $2 - 4; i++)); do printf '\ta += %d;\n' "$i"; done
	printf '\treturn a;\n}\n'
}
tree() { # tree NAME FOLDER LINES
	rm -rf "${tmp:?}/$1"
	mkdir -p "$tmp/$1/$2"
	fn cmd_long "$3" >"$tmp/$1/$2/x.c"
}
expect() { # expect RC TEXT DIR
	out=$($check "$tmp/$3" 2>&1)
	rc=$?
	if [ "$rc" != "$1" ] || ! grep -q -- "$2" <<<"$out"; then
		echo "FAIL: $3: want rc $1 and '$2', got rc $rc: $out"
		fail=1
	fi
}
tree long core/cmds 151
expect 1 "core/cmds/x.c:1: cmd_long is 151 lines" long
tree tuilong tui 151
expect 1 "tui/x.c:1: cmd_long is 151 lines" tuilong
tree fits core/cmds 150
expect 0 "" fits
tree solver core/partition 400
expect 0 "" solver
out=$($check "$here" 2>&1) || {
	echo "FAIL: the tree has handlers over 150 lines: $out"
	fail=1
}
[ $fail = 0 ] && echo "handler-size lint: ok"
exit $fail
