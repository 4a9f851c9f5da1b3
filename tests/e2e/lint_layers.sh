#!/bin/bash
# The layer checker (tests/lint/check_layers.py) on small made-up trees: it
# must pass a clean tree and fail, naming the file, on an upward include, a
# relative include, curses in core/ and an include circle. Then the real tree.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
check="python3 $here/tests/lint/check_layers.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
tree() { # tree NAME: a clean tree with util, model and workspace files
	rm -rf "$tmp/$1"
	mkdir -p "$tmp/$1/core/util" "$tmp/$1/core/model" "$tmp/$1/tui"
	printf '#include "util/error.h"\n' >"$tmp/$1/core/model/graph.h"
	printf '#include "model/graph.h"\n' >"$tmp/$1/core/session.h"
	printf '' >"$tmp/$1/core/util/error.h"
	printf '#include "session.h"\n#include "app.h"\n#include <ncurses.h>\n' >"$tmp/$1/tui/app.c"
	printf '' >"$tmp/$1/tui/app.h"
}
expect() { # expect RC TEXT DIR
	out=$($check "$tmp/$3" 2>&1)
	rc=$?
	if [ "$rc" != "$1" ] || ! grep -q -- "$2" <<<"$out"; then
		echo "FAIL: $3: want rc $1 and '$2', got rc $rc: $out"
		fail=1
	fi
}
tree clean
expect 0 "" clean
tree up
printf '#include "session.h"\n' >"$tmp/up/core/util/error.h"
expect 1 "core/util/error.h:1: includes core/session.h, a header of layer workspace above its own (util)" up
tree rel
printf '#include "../util/error.h"\n' >"$tmp/rel/core/model/graph.c"
expect 1 'core/model/graph.c:1: include "../util/error.h": write the path from core/' rel
tree curses
printf '#include <curses.h>\n' >"$tmp/curses/core/session.c"
expect 1 "core/session.c: includes curses" curses
tree circle
printf '#include "util/b.h"\n' >"$tmp/circle/core/util/a.h"
printf '#include "util/a.h"\n' >"$tmp/circle/core/util/b.h"
expect 1 "include circle: core/util/a -> core/util/b" circle
out=$($check "$here" 2>&1) || { echo "FAIL: the tree itself: $out"; fail=1; }
exit $fail
