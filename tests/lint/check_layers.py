#!/usr/bin/env python3
"""check_layers.py — fails when a file includes a header of a layer above
its own, or when the include graph of core/ has a circle (docs/architecture.md).

Layers, lowest first (a folder of core/, or core/'s root = the workspace):
  util → model → shape → workspace → solvers (partition, shard, transform,
  tune, script) → render → cmds → tui
A file may include headers of its own layer or lower ones. Inside a solver
folder with sub-folders the sub-folders are ordered the same way (ORDER
below, lowest first; '' = the folder's own files, its shared types): a file
may include headers of its own sub-folder or lower ones. Quoted includes
must be written as paths from core/ (e.g. "model/graph.h"); headers outside
core/ (tui/, tests/) are included by name from their own folder.

Usage: check_layers.py [ROOT]   (exit 1 and one line per problem)
"""
import os, re, sys

LAYERS = {'util': 0, 'model': 1, 'shape': 2, '': 3, 'partition': 4, 'shard': 4,
          'transform': 4, 'tune': 4, 'script': 4, 'render': 5, 'export': 5, 'cmds': 6}
# Sub-folders of a folder of core/, lowest first ('' = files directly in it).
ORDER = {'shard': ['', 'strategy', 'search', 'pipeline', 'dtp']}
NAMES = ['util', 'model', 'shape', 'workspace', 'solvers', 'render', 'cmds', 'tui']
TUI = 7


def layer_of(rel):
    """rel: path from the repository root."""
    parts = rel.split('/')
    if parts[0] == 'tui':
        return TUI
    if parts[0] != 'core':
        return None
    folder = parts[1] if len(parts) > 2 else ''
    return LAYERS.get(folder)


def sub_of(rel):
    """(folder, index of its sub-folder in ORDER) for a file of a folder with
    an ORDER, (folder, None) for a sub-folder that has no place in it, else
    None."""
    parts = rel.split('/')
    if len(parts) < 3 or parts[0] != 'core' or parts[1] not in ORDER:
        return None
    sub = parts[2] if len(parts) > 3 else ''
    order = ORDER[parts[1]]
    return parts[1], (order.index(sub) if sub in order else None)


def sub_name(folder, i):
    sub = ORDER[folder][i]
    return folder + '/' + (sub + '/' if sub else '')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    problems, edges = [], {}
    inc = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
    for top in ('core', 'tui'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                mine = layer_of(rel)
                if mine is None:
                    problems.append(f'{rel}: folder has no layer (add it to {sys.argv[0]})')
                    continue
                with open(path, encoding='utf-8', errors='replace') as f:
                    text = f.read()
                mysub = sub_of(rel)
                if mysub and mysub[1] is None:
                    problems.append(f'{rel}: sub-folder has no place in {mysub[0]}/\'s order '
                                    f'(add it to ORDER in {sys.argv[0]})')
                    mysub = None
                if mine < TUI and re.search(r'^\s*#\s*include\s*<n?curses', text, re.M):
                    problems.append(f'{rel}: includes curses (only tui/ may)')
                for m in inc.finditer(text):
                    target = m.group(1)
                    line = text.count('\n', 0, m.start()) + 1
                    if target.startswith('.') or '/../' in target:
                        problems.append(f'{rel}:{line}: include "{target}": write the path from core/')
                        continue
                    cand = os.path.join(root, 'core', target)
                    if os.path.exists(cand):
                        trel = os.path.normpath(os.path.relpath(cand, root))
                    elif rel.startswith('tui/') and os.path.exists(os.path.join(root, 'tui', target)):
                        trel = 'tui/' + target
                    elif os.path.exists(os.path.join(os.path.dirname(path), target)):
                        problems.append(f'{rel}:{line}: include "{target}": write the path from core/')
                        continue
                    else:
                        continue  # generated (onnx.pb-c.h) or system-like
                    theirs = layer_of(trel)
                    if theirs is not None and theirs > mine:
                        problems.append(f'{rel}:{line}: includes {trel}, a header of layer '
                                        f'{NAMES[theirs]} above its own ({NAMES[mine]})')
                    theirsub = sub_of(trel)
                    if (mysub and theirsub and theirsub[0] == mysub[0] and
                            theirsub[1] is not None and theirsub[1] > mysub[1]):
                        order = ', '.join(sub_name(mysub[0], i)
                                          for i in range(len(ORDER[mysub[0]])))
                        problems.append(f'{rel}:{line}: includes {trel}, a header of '
                                        f'{sub_name(*theirsub)} above its own '
                                        f'({sub_name(*mysub)}; order: {order})')
                    src = rel[:-2] if rel.endswith(('.c', '.h')) else rel
                    dst = trel[:-2]
                    if src != dst and not rel.startswith('tui/'):
                        edges.setdefault(src, set()).add(dst)
    # circles between files of core/ (a .c and its .h count as one file)
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
    for v in sorted(edges):
        if v not in index:
            strong(v)
    for comp in sccs:
        problems.append('include circle: ' + ' -> '.join(comp))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
