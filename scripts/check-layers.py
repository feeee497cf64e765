#!/usr/bin/env python3
"""check-layers.py - the shape of harness/ as rules a test can hold.

1. Layers: a file may include headers of its own folder and of folders below it:
       kernels/abi < core < backend (backend/cuda, backend/emu, collective) < engine (kernels)
            < suite < results < session < tune, accept, model, selftest, estimate < cli
   kernels/abi/ is what the harness shares with kernel code (kb_emu_abi.h: the emulator's
   runtime table; kb_convert.h: the narrow formats' rounding): plain C, it includes nothing
   of the tree, and both sides include it. kernels/ (the family descriptors <family>.c, their
   headers, the registry families.{c,h}, the device headers) sits beside engine and may
   include core, backend, engine. An include that runs up a layer is an error. cli/ is a command line over the
   session: it includes no header of the layers the session assembles (backend, engine,
   suite, kernels); their types reach it through session/ headers (CLI_BELOW_SESSION).
2. No include circles between modules (a module is a .c/.h pair): module A including
   B while B (its .c or .h) includes A, directly or through others.
3. A function a header declares is defined in that module's own .c (or .cpp): a header
   that declares what other files define hides a circle between them.
4. Sizes: no harness file over MAX_FILE_LINES lines, no function over MAX_FUNC_LINES.
   A function is counted from its opening '{' in column 0 to its closing '}' in column 0
   (the project's style).

Usage: check-layers.py [ROOT]   (ROOT: the source tree, default: this script's parent)
       check-layers.py --self-test  (the rules on small scratch trees: each one caught)
Exit 0 when every rule holds; 1 with one line per violation otherwise.
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNC_LINES = 80

RANK = {
    'kernels/abi': -1,   # the harness-kernel ABI: below everything, includes nothing of the tree
    'core': 0,
    'backend': 1, 'backend/cuda': 1, 'backend/emu': 1,
    # collectives: the rank transport (rendezvous, emu shared memory and sockets) and the
    # NCCL glue sit at backend level: a family in kernels/ and the backends may use them
    'collective': 1,
    'engine': 2, 'kernels': 2,
    'suite': 3,
    'results': 4,
    'session': 5,
    'tune': 6, 'accept': 6, 'model': 6,
    'selftest': 6,
    'estimate': 6,
    'cli': 7,
}

# What cli/ may not include: the session is its one way into them.
CLI_BELOW_SESSION = ('backend', 'backend/cuda', 'backend/emu', 'engine', 'suite', 'kernels', 'kernels/abi')

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    out = []
    for top in ('harness', 'kernels'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(('.c', '.h', '.cpp')):
                    out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def folder_of(path):
    parts = path.split('/')
    if parts[0] == 'kernels':
        return '/'.join(parts[:-1])      # kernels, kernels/abi
    return '/'.join(parts[1:-1])


def module_of(path):
    return os.path.splitext(path)[0]


def resolve(root, src, inc):
    """The repository path an include names, or None for a header outside the tree."""
    for base in (os.path.dirname(src), 'harness', '', 'kernels'):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(os.path.join(root, p)):
            return p
    return None


def check_layers(root, files, errors):
    graph = {}
    for src in files:
        text = open(os.path.join(root, src), encoding='utf-8', errors='replace').read()
        mod = module_of(src)
        graph.setdefault(mod, set())
        for inc in INCLUDE.findall(text):
            dst = resolve(root, src, inc)
            if dst is None or not dst.startswith(('harness/', 'kernels/')) or dst.endswith('.cu'):
                continue
            a, b = folder_of(src), folder_of(dst)
            if a not in RANK or b not in RANK:
                errors.append(f'{src}: folder {a if a not in RANK else b} has no layer in check-layers.py')
                continue
            if RANK[b] > RANK[a]:
                errors.append(f'{src}: includes {dst}, a layer above ({a} < {b})')
            if a == 'cli' and b in CLI_BELOW_SESSION:
                errors.append(f'{src}: includes {dst}: cli/ reaches {b}/ only through the session (session/)')
            if module_of(dst) != mod:
                graph[mod].add(module_of(dst))
    return graph


def find_cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


PROTO = re.compile(r'^(?!static|typedef|#|extern\b)[A-Za-z_][\w \*]*?\b(kb_\w+)\s*\(', re.M)


def check_definitions(root, files, errors):
    defined = {}
    for src in files:
        if not src.endswith(('.c', '.cpp')):
            continue
        text = open(os.path.join(root, src), encoding='utf-8', errors='replace').read()
        for m in re.finditer(r'^(?!static)[A-Za-z_][^;{}()]*?\b(kb_\w+)\s*\([^;{]*\)\s*\n?\{', text, re.M):
            defined.setdefault(m.group(1), module_of(src))
    for src in files:
        if not src.endswith('.h'):
            continue
        text = open(os.path.join(root, src), encoding='utf-8', errors='replace').read()
        for m in PROTO.finditer(text):
            name = m.group(1)
            where = defined.get(name)
            if where and where != module_of(src):
                errors.append(f'{src}: declares {name}, defined in {where} (declare it in that module\'s header)')


def check_sizes(root, files, errors):
    for src in files:
        if not src.startswith('harness/'):
            continue
        lines = open(os.path.join(root, src), encoding='utf-8', errors='replace').read().split('\n')
        if len(lines) > MAX_FILE_LINES:
            errors.append(f'{src}: {len(lines)} lines (at most {MAX_FILE_LINES})')
        start = None
        for i, line in enumerate(lines):
            if line.startswith('{'):
                start = i
            elif line.startswith('}') and start is not None:
                n = i - start + 1
                if n > MAX_FUNC_LINES and not lines[start - 1].rstrip().endswith(('=', '[] =')):
                    errors.append(f'{src}:{start}: function of {n} lines (at most {MAX_FUNC_LINES})')
                start = None


def check(root):
    """Every rule on the tree at root: the list of violations."""
    files = sources(root)
    errors = []
    graph = check_layers(root, files, errors)
    for comp in find_cycles(graph):
        errors.append('include circle: ' + ' -> '.join(comp))
    check_definitions(root, files, errors)
    check_sizes(root, files, errors)
    return errors, len(files), len(graph)


def self_test():
    """Scratch trees that break one rule each (and one that breaks none): each caught."""
    import tempfile
    cases = [
        ('cli over the session', {'harness/cli/a.c': '#include "session/s.h"\n', 'harness/session/s.h': ''}, None),
        ('cli into engine', {'harness/cli/a.c': '#include "engine/e.h"\n', 'harness/engine/e.h': ''},
         'cli/ reaches engine/ only through the session'),
        ('cli into backend', {'harness/cli/a.c': '#include "backend/b.h"\n', 'harness/backend/b.h': ''},
         'cli/ reaches backend/ only through the session'),
        ('up a layer', {'harness/engine/e.c': '#include "session/s.h"\n', 'harness/session/s.h': ''},
         'a layer above (engine < session)'),
        ('circle', {'harness/engine/a.h': '#include "engine/b.h"\n', 'harness/engine/b.h': '#include "engine/a.h"\n'},
         'include circle'),
        ('the ABI from both sides', {'harness/backend/emu/e.c': '#include "kernels/abi/kb_x.h"\n',
                                     'kernels/kb_dev.h': '#include "abi/kb_x.h"\n', 'kernels/abi/kb_x.h': ''}, None),
        ('the ABI up into core', {'kernels/abi/kb_x.h': '#include "core/kb.h"\n', 'harness/core/kb.h': ''},
         'a layer above (kernels/abi < core)'),
        ('core into the registry', {'harness/core/a.c': '#include "kernels/families.h"\n', 'kernels/families.h': ''},
         'a layer above (core < kernels)'),
        ('cli into the ABI', {'harness/cli/a.c': '#include "kernels/abi/kb_x.h"\n', 'kernels/abi/kb_x.h': ''},
         'cli/ reaches kernels/abi/ only through the session'),
        ('a header declaring another module\'s function',
         {'kernels/a.h': 'int kb_b_thing(void);\n', 'kernels/b.c': 'int kb_b_thing(void)\n{\n    return 0;\n}\n'},
         'declares kb_b_thing, defined in kernels/b'),
    ]
    failed = 0
    for name, tree, want in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, text in tree.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), 'w') as f:
                    f.write(text)
            errors, _, _ = check(root)
        ok = not errors if want is None else any(want in e for e in errors)
        failed += not ok
        print(f'{"ok  " if ok else "FAIL"} {name}: {errors or "no problems"}')
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors, n_files, n_modules = check(root)
    for e in errors:
        print(e)
    print(f'check-layers: {n_files} files, {n_modules} modules, {len(errors)} problems')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
