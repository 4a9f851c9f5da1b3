#!/bin/bash
# The one-door lint (tests/lint/check_file_door.py) on small made-up trees: it
# fails, naming the file and line, on fopen/open/opendir/json_load_file of a
# path outside core/util/file_door.c and core/util/atomic_file.c; passes the
# door itself, calls on descriptors (fdopen) and a call justified by a
# "door: REASON" comment. Then the real tree.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
check="python3 $here/tests/lint/check_file_door.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
tree() { # tree NAME BODY: core/x.c holding BODY, plus the door files
	rm -rf "${tmp:?}/$1"
	mkdir -p "$tmp/$1/core/util" "$tmp/$1/tui"
	printf 'int f(void) { return open(p, 0); }\n' >"$tmp/$1/core/util/file_door.c"
	printf 'FILE *g(void) { return fopen(p, "w"); }\n' >"$tmp/$1/core/util/atomic_file.c"
	printf '%s\n' "$2" >"$tmp/$1/core/x.c"
}
expect() { # expect RC TEXT DIR
	out=$($check "$tmp/$3" 2>&1)
	rc=$?
	if [ "$rc" != "$1" ] || ! grep -q -- "$2" <<<"$out"; then
		echo "FAIL: $3: want rc $1 and '$2', got rc $rc: $out"
		fail=1
	fi
}
tree clean 'FILE *h(int fd) { return fdopen(fd, "rb"); } /* fopen( in a comment */'
expect 0 "" clean
tree fopen 'FILE *h(void) { return fopen(path, "w"); }'
expect 1 "core/x.c:1: fopen()" fopen
tree open 'int h(void) {
	return open(path, O_RDONLY);
}'
expect 1 "core/x.c:2: open()" open
tree json 'json_t *h(void) { return json_load_file(path, 0, &je); }'
expect 1 "json_load_file()" json
tree dir 'DIR *h(void) { return opendir(path); }'
expect 1 "opendir()" dir
tree why '/* door: a fixed system path */
int h(void) { return open("/dev/null", 1); }'
expect 0 "" why
tree string 'const char *h(void) { return "fopen(x)"; }'
expect 0 "" string
tree tui 'int h(void) { return 0; }'
printf 'FILE *t(void) { return fopen(p, "a"); }\n' >"$tmp/tui/tui/app.c" 2>/dev/null ||
	{ mkdir -p "$tmp/tui/tui" && printf 'FILE *t(void) { return fopen(p, "a"); }\n' >"$tmp/tui/tui/app.c"; }
expect 1 "tui/app.c:1: fopen()" tui
# the real tree
out=$($check "$here" 2>&1) || {
	echo "FAIL: the tree opens paths outside the door: $out"
	fail=1
}
[ "$fail" = 0 ] && echo "lint_file_door: ok"
exit "$fail"
