"""check_handler_size.py — fails when a function in a command file
(core/cmds/*.c) or in the workbench (tui/*.c) is longer than 150 lines,
signature to closing brace: handlers parse, call a module and print its
report (docs/architecture.md), so an algorithm growing inside one shows up
here as a long function to move into its module.

A function is a line at column 0 that opens a parameter list, up to the
next line that is exactly "}". Usage: check_handler_size.py [ROOT] [LIMIT]
(exit 1 and one line per function over the limit).
"""
import os, re, sys

SIG = re.compile(r'^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\(')


def long_functions(path, limit):
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    out, i = [], 0
    while i < len(lines):
        m = SIG.match(lines[i])
        if m and not lines[i].rstrip().endswith(';') and m.group(1) not in ('if', 'for', 'while', 'switch', 'return'):
            j = i
            while j < len(lines) and lines[j] != '{' and not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j] == '{':
                k = j
                while k < len(lines) and lines[k] != '}':
                    k += 1
                n = k - i + 1
                if n > limit:
                    out.append((i + 1, m.group(1), n))
                i = k
        i += 1
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    problems = []
    for top in (os.path.join('core', 'cmds'), 'tui'):
        d = os.path.join(root, top)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith('.c'):
                path = os.path.join(d, name)
                for line, fn, n in long_functions(path, limit):
                    problems.append(f'{os.path.relpath(path, root)}:{line}: {fn} is {n} lines '
                                    f'(limit {limit}): move its algorithm into its module')
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
