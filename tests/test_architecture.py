"The package's structure, read from its own source: no import circles, modules a reader can hold in mind, layers that point down."
import ast
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/'stance_nb'
MAX_LINES = 600

def _modules() -> dict:
    "Dotted module name -> file, for every module of the package (the generated `_modidx.py` aside)."
    out = {}
    for p in sorted(PKG.rglob('*.py')):
        if p.name == '_modidx.py': continue
        parts = p.relative_to(ROOT).with_suffix('').parts
        out['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = p
    return out

def _imports(name:str, path:Path, modules:dict) -> set:
    "The package's modules that `name` imports anywhere in its file: at module level or inside a function."
    pkg = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import): targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                up = pkg.split('.')[:len(pkg.split('.')) - node.level + 1]
                base = '.'.join(up + ([base] if base else []))
            targets = [f'{base}.{a.name}' if f'{base}.{a.name}' in modules else base for a in node.names]
        else: continue
        for t in targets:
            while t and t not in modules: t = t.rpartition('.')[0]   # `import stance_nb.data.core as x` names the module
            if t and t != name: found.add(t)
    return found

def import_graph() -> dict:
    "Module -> the package modules it imports."
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}

def circles(graph:dict) -> list:
    "The strongly connected components of more than one module (Tarjan), each a list of modules."
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index: visit(v)
    return out

def test_the_checker_finds_a_circle():
    "The circle finder on a graph that has one (a, b) and a chain that has none."
    assert circles({'a': {'b'}, 'b': {'a', 'c'}, 'c': set()}) == [['a', 'b']]
    assert circles({'a': {'b'}, 'b': {'c'}, 'c': set()}) == []

def test_no_import_circles():
    "Every import of the package, at module level or inside a function, points down: no module reaches itself again."
    assert circles(import_graph()) == []

def test_the_graph_is_read():
    "The reader sees every module and its imports, relative ones and those inside functions included."
    graph = import_graph()
    assert len(graph) > 40
    assert graph['stance_nb.experiment.runner'] >= {'stance_nb.experiment.spec', 'stance_nb.experiment.store', 'stance_nb.records'}
    assert 'stance_nb.data' in graph['stance_nb.attacks']   # `import stance_nb.data` inside a function

def test_modules_stay_small():
    "No module over 600 lines (the generated `_modidx.py` aside)."
    big = {str(p.relative_to(ROOT)): n for p in _modules().values() if (n := len(p.read_text(encoding='utf-8').splitlines())) > MAX_LINES}
    assert big == {}

@pytest.mark.parametrize('lower, upper', [('stance_nb.experiment', 'stance_nb.papers'), ('stance_nb.experiment', 'stance_nb.cli'),
                                          ('stance_nb.train', 'stance_nb.ablations'), ('stance_nb.train', 'stance_nb.experiment'),
                                          ('stance_nb.records', 'stance_nb.data'), ('stance_nb.core', 'stance_nb.records')])
def test_layers_point_down(lower, upper):
    "A lower layer never imports a higher one: the experiment layer finds the papers through the registry, not by import."
    graph = import_graph()
    up = {(m, t) for m, ts in graph.items() if m == lower or m.startswith(lower + '.') for t in ts if t == upper or t.startswith(upper + '.')}
    assert up == set()

def test_product_modules_never_import_test_utilities():
    "Fixtures and tiny models stay in `test_utils` and `fixtures`: the package itself never imports them."
    graph = import_graph()
    test_side = {m for m in graph if m in ('stance_nb.test_utils',) or m.startswith('stance_nb.fixtures')}
    bad = {(m, t) for m, ts in graph.items() if m not in test_side for t in ts if t in test_side}
    assert bad == set()
