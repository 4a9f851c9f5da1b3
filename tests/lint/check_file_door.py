#!/usr/bin/env python3
"""check_file_door.py — fails when a C file of core/ or tui/ opens a path
itself instead of going through the one door (core/util/file_door.h for reads
and streaming writes, core/util/atomic_file.h for whole-file writes).

What counts as opening a path: fopen, freopen, open, openat, creat, opendir,
json_load_file, luaL_loadfile, luaL_dofile, glp_read_*. Calls on descriptors
(fdopen, json_loadf on a stream the door opened) are fine.

Exceptions:
  core/util/file_door.c, core/util/atomic_file.c   the door itself;
  a call with the comment `door: REASON`             a justified exception,
                                                     the reason on the line
                                                     or in the comment just
                                                     above it.

Usage: check_file_door.py [ROOT]   (exit 1 and one line per problem)
"""
import os, re, sys

DOOR = {'core/util/file_door.c', 'core/util/atomic_file.c'}
CALL = re.compile(r'(?<![\w.>])(fopen|freopen|open|openat|creat|opendir|json_load_file|'
                  r'luaL_loadfile|luaL_dofile|glp_read_\w+)\s*\(')
REASON = re.compile(r'door:\s*\S')


def strip_comments_and_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r'/\*.*?\*/', '', line)
    return line.split('//')[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    problems = []
    for top in ('core', 'tui'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith('.c'):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if rel in DOOR:
                    continue
                with open(path, encoding='utf-8', errors='replace') as f:
                    lines = f.read().split('\n')
                in_comment = False
                for i, raw in enumerate(lines):
                    line = raw
                    if in_comment:
                        if '*/' not in line:
                            continue
                        line = line.split('*/', 1)[1]
                        in_comment = False
                    code = strip_comments_and_strings(line)
                    if '/*' in code:
                        code = code.split('/*', 1)[0]
                        in_comment = '*/' not in line.split('/*', 1)[1]
                    m = CALL.search(code)
                    if not m:
                        continue
                    # the comment block just above the call
                    above, k = [], i - 1
                    while k >= 0 and re.match(r'\s*(/\*|\*|//)', lines[k]):
                        above.append(lines[k])
                        k -= 1
                    if REASON.search(raw) or any(REASON.search(a) for a in above):
                        continue
                    problems.append(f'{rel}:{i + 1}: {m.group(1)}() opens a path outside '
                                    'the door: use util/file_door.h or util/atomic_file.h '
                                    '(or justify it with a "door: REASON" comment)')
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
