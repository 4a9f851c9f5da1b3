#!/bin/bash
# The layer checker (tests/lint/check_layers.py) on small made-up trees: it
# must pass a clean tree and fail, naming the file, on an upward include, a
# relative include, curses in core/, an include circle, and inside shard/ an
# include from a lower sub-folder to a higher one (shard/ < strategy/ <
# search/ < pipeline/ < dtp/) or a sub-folder with no place in that order.
# Then the real tree.
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
shard() { # shard NAME: a clean tree with a file in each shard/ sub-folder, each
	# including the one below it
	tree "$1"
	mkdir -p "$tmp/$1/core/shard/strategy" "$tmp/$1/core/shard/search" \
		"$tmp/$1/core/shard/pipeline" "$tmp/$1/core/shard/dtp"
	printf '#include "model/graph.h"\n' >"$tmp/$1/core/shard/cluster.h"
	printf '#include "shard/cluster.h"\n' >"$tmp/$1/core/shard/strategy/problem.h"
	printf '#include "shard/strategy/problem.h"\n' >"$tmp/$1/core/shard/search/rows.h"
	printf '#include "shard/search/rows.h"\n#include "shard/cluster.h"\n' \
		>"$tmp/$1/core/shard/pipeline/plan.h"
	printf '#include "shard/pipeline/plan.h"\n#include "shard/strategy/problem.h"\n' \
		>"$tmp/$1/core/shard/dtp/dtp.c"
}
shard shard_clean
expect 0 "" shard_clean
shard shard_up
printf '#include "shard/cluster.h"\n#include "shard/dtp/config.h"\n' >"$tmp/shard_up/core/shard/search/rows.c"
printf '' >"$tmp/shard_up/core/shard/dtp/config.h"
expect 1 "core/shard/search/rows.c:2: includes core/shard/dtp/config.h, a header of shard/dtp/ above its own (shard/search/" shard_up
shard shard_root
printf '#include "shard/pipeline/plan.h"\n' >"$tmp/shard_root/core/shard/spec.c"
expect 1 "core/shard/spec.c:1: includes core/shard/pipeline/plan.h, a header of shard/pipeline/ above its own (shard/;" shard_root
shard shard_stray
mkdir -p "$tmp/shard_stray/core/shard/misc"
printf '#include "shard/cluster.h"\n' >"$tmp/shard_stray/core/shard/misc/x.c"
expect 1 "core/shard/misc/x.c: sub-folder has no place in shard/'s order" shard_stray
out=$($check "$here" 2>&1) || { echo "FAIL: the tree itself: $out"; fail=1; }
exit $fail
