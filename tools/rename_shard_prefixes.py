#!/usr/bin/env python3
"""rename_shard_prefixes.py — public functions of core/shard/ get a prefix
that names their file (issue 40 item 2): a function defined in
core/shard/dtp/dtp_search.c is called pb_dtp_search_*, one in
core/shard/search/search_label.c pb_search_label_*.

Run from anywhere inside the repository:
    tools/rename_shard_prefixes.py            rename (prints old -> new)
    tools/rename_shard_prefixes.py --dry-run  only print what it would rename

The new name is pb_ + the file's stem + the words of the old name that say
something the stem does not: the family word (shard, dtp, pipe) and every
word the stem already has (pipe = pipeline, mem = memory, opts = options)
are dropped, the rest kept in order. pb_pipe_split_layers in
pipeline_layers.c becomes pb_pipeline_layers_split; pb_shard_search_label
in search_label.c becomes pb_search_label.

Every tracked text file is rewritten (whole words only): core, tui, tests,
bench, docs, README, CMakeLists. Then clang-format -i runs on the C files it
changed. The script is deterministic (files and names in sorted order) and
idempotent: on a tree where every prefix names its file it changes nothing.
It refuses to run (exit 1, nothing written) when two functions would get
the same name, when a new name is already an identifier of the tree, or
when an old name is also a type or macro.
"""
import os
import re
import shutil
import subprocess
import sys

FAMILY = {'shard', 'dtp', 'pipe'}
ALIAS = {'pipe': 'pipeline', 'mem': 'memory', 'opts': 'options'}
TEXT_EXT = ('.c', '.h', '.md', '.sh', '.py', '.txt', '.lua', '.cmake')

# A definition at the start of a line, not static: "TYPE pb_name(ARGS)\n{".
DEF_RE = re.compile(r'^(?!static\b)[A-Za-z_][\w \t*]*?\b(pb_\w+)\(([^;{}]*?)\)[ \t]*\n\{',
                    re.M)


def repo_root():
    out = subprocess.run(['git', 'rev-parse', '--show-toplevel'], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def tracked(root):
    out = subprocess.run(['git', 'ls-files', '-z'], cwd=root, capture_output=True,
                         check=True)
    files = [f.decode() for f in out.stdout.split(b'\0') if f]
    return sorted(f for f in files
                  if f.endswith(TEXT_EXT) or os.path.basename(f) == 'CMakeLists.txt')


def public_functions(root, files):
    """(path, name) of every non-static function defined in core/shard/*.c"""
    found = []
    for f in files:
        if not (f.startswith('core/shard/') and f.endswith('.c')):
            continue
        with open(os.path.join(root, f), encoding='utf-8') as fp:
            text = fp.read()
        for m in DEF_RE.finditer(text):
            found.append((f, m.group(1)))
    return sorted(set(found))


def names_file(stem, name):
    return name == 'pb_' + stem or name.startswith('pb_' + stem + '_')


def new_name(stem, name):
    stem_words = stem.split('_')
    words = name[len('pb_'):].split('_')
    if words and words[0] in FAMILY:
        words = words[1:]
    rest = [w for w in words if ALIAS.get(w, w) not in stem_words and w not in stem_words]
    return '_'.join(['pb', stem] + rest)


def main():
    dry = '--dry-run' in sys.argv[1:]
    unknown = [a for a in sys.argv[1:] if a != '--dry-run']
    if unknown:
        print(f'usage: {sys.argv[0]} [--dry-run] (unknown: {" ".join(unknown)})',
              file=sys.stderr)
        return 1
    root = repo_root()
    me = os.path.relpath(os.path.realpath(__file__), root)
    files = [f for f in tracked(root) if f != me]  # its own examples stay
    texts = {}
    for f in files:
        try:
            with open(os.path.join(root, f), encoding='utf-8') as fp:
                texts[f] = fp.read()
        except (UnicodeDecodeError, FileNotFoundError):
            pass
    renames = {}
    for path, name in public_functions(root, files):
        stem = os.path.splitext(os.path.basename(path))[0]
        if not names_file(stem, name):
            renames[name] = (new_name(stem, name), path)
    if not renames:
        print('rename_shard_prefixes: every public function of core/shard/ has a prefix '
              'that names its file; nothing to rename')
        return 0

    problems = []
    by_new = {}
    for old, (new, path) in sorted(renames.items()):
        by_new.setdefault(new, []).append(f'{old} ({path})')
    for new, olds in sorted(by_new.items()):
        if len(olds) > 1:
            problems.append(f'{new}: the new name of {", ".join(olds)}')
    words = set()
    for text in texts.values():
        words.update(re.findall(r'\bpb_\w+', text))
    for old, (new, path) in sorted(renames.items()):
        if new in words and new not in renames:
            problems.append(f'{old} ({path}): the new name {new} is already in the tree')
    decl = re.compile(r'^\s*(?:typedef\b.*|struct\s+|#\s*define\s+)\b(pb_\w+)\b', re.M)
    for f, text in texts.items():
        for m in decl.finditer(text):
            if m.group(1) in renames:
                problems.append(f'{m.group(1)}: also a type or macro ({f})')
    if problems:
        for p in problems:
            print(f'rename_shard_prefixes: {p}', file=sys.stderr)
        print('rename_shard_prefixes: nothing renamed', file=sys.stderr)
        return 1

    for old, (new, path) in sorted(renames.items(), key=lambda r: (r[1][1], r[0])):
        print(f'{path}: {old} -> {new}')
    if dry:
        print(f'{len(renames)} functions would be renamed (--dry-run: nothing written)')
        return 0

    # one pass over each file: longest names first so no name eats another
    pattern = re.compile(r'\b(' + '|'.join(sorted(map(re.escape, renames), key=lambda s: (-len(s), s)))
                         + r')\b')
    changed = []
    for f in sorted(texts):
        text = texts[f]
        out = pattern.sub(lambda m: renames[m.group(1)][0], text)
        if out != text:
            with open(os.path.join(root, f), 'w', encoding='utf-8') as fp:
                fp.write(out)
            changed.append(f)
    c_files = [os.path.join(root, f) for f in changed if f.endswith(('.c', '.h'))]
    if c_files and shutil.which('clang-format'):
        subprocess.run(['clang-format', '-i'] + c_files, check=True)
    elif c_files:
        print('rename_shard_prefixes: clang-format not found: run it on the changed C files',
              file=sys.stderr)
    print(f'{len(renames)} functions renamed in {len(changed)} files')
    return 0


if __name__ == '__main__':
    sys.exit(main())
