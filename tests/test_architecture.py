"The package's structure, read from its own source: no import circles, modules a reader can hold in mind, layers that point down."
import ast
from pathlib import Path
import pytest, sys

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/'stance_nb'
MAX_LINES = 600
sys.path.insert(0, str(ROOT/'tools'))
from cell_stats import summary as cell_summary   # the script that prints the export cells' sizes

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
                                          ('stance_nb.records', 'stance_nb.data'), ('stance_nb.core', 'stance_nb.records'),
                                          ('stance_nb.lineup', 'stance_nb.leaderboard'), ('stance_nb.systems', 'stance_nb.lineup')])
def test_layers_point_down(lower, upper):
    "A lower layer never imports a higher one: the experiment layer finds the papers through the registry, not by import."
    graph = import_graph()
    up = {(m, t) for m, ts in graph.items() if m == lower or m.startswith(lower + '.') for t in ts if t == upper or t.startswith(upper + '.')}
    assert up == set()

@pytest.mark.parametrize('kind, other', [('stance_nb.transfer', 'stance_nb.leaderboard'), ('stance_nb.leaderboard', 'stance_nb.transfer')])
def test_run_kinds_are_siblings(kind, other):
    "The leaderboard and the transfer import nothing of each other: what both build on (the systems' records and options) is `stance_nb.lineup`."
    graph = import_graph()
    assert {(m, t) for m, ts in graph.items() if m == kind or m.startswith(kind + '.') for t in ts if t == other or t.startswith(other + '.')} == set()
    assert 'stance_nb.lineup' in {t for m, ts in graph.items() if m == kind or m.startswith(kind + '.') for t in ts}

def test_product_modules_never_import_test_utilities():
    "Fixtures and tiny models stay in `test_utils` and `fixtures`: the package itself never imports them."
    graph = import_graph()
    test_side = {m for m in graph if m in ('stance_nb.test_utils',) or m.startswith('stance_nb.fixtures')}
    bad = {(m, t) for m, ts in graph.items() if m not in test_side for t in ts if t in test_side}
    assert bad == set()

def test_systems_and_stats_sit_where_they_belong():
    "The run layer never imports a system family (they register through entry points); the statistical tests import no run layer."
    graph = import_graph()
    up = {(m, t) for m, ts in graph.items() if m.startswith('stance_nb.experiment') or m.startswith('stance_nb.train') or m == 'stance_nb.stats'
          for t in ts if t.startswith('stance_nb.systems')}
    assert up == set()
    assert not {t for t in graph['stance_nb.stats'] if t.startswith('stance_nb.experiment')}

def test_the_systems_are_a_package_found_through_entry_points():
    "Each family's model and registration live under `stance_nb/systems/`; the entry points `stance_nb.systems` name every family."
    import configparser, importlib.metadata
    cfg = configparser.ConfigParser(delimiters=['=']); cfg.read(ROOT/'settings.ini', encoding='utf-8')
    declared = dict(e.split('=') for e in cfg['DEFAULT']['system_modules'].split())
    assert set(declared) == {'baselines', 'encoders', 'mdl', 'nli', 'zeroshot', 'llm', 'probes'}
    assert all(v.startswith('stance_nb.systems.') and v in _modules() for v in declared.values()), declared
    assert (PKG/'systems'/'__init__.py').exists() and not (PKG/'experiment'/'systems').exists()
    installed = {e.name: e.value for e in importlib.metadata.entry_points(group='stance_nb.systems')}
    assert installed == declared, 'reinstall the package (pip install -e .) after changing system_modules'

def _private_imports() -> set:
    "(module file, name) for every `from <package module> import _name` of a private name of another module."
    found = set()
    for name, p in _modules().items():
        for node in ast.walk(ast.parse(p.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or '').startswith('stance_nb')):
                found |= {(str(p.relative_to(ROOT)), a.name) for a in node.names if a.name.startswith('_') and not a.name.startswith('__')}
    return found

def test_no_private_name_is_imported_across_modules():
    "A `_name` stays in its module: a name another module needs is public."
    assert _private_imports() == set()

def test_no_two_modules_define_the_same_public_name():
    "Every public name (`__all__`) is defined by one module: no homonyms to confuse a reader or a star import."
    where = {}
    for name, p in _modules().items():
        if p.name == '__init__.py': continue
        for node in ast.parse(p.read_text(encoding='utf-8')).body:
            if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == '__all__' for t in node.targets):
                for e in node.value.elts: where.setdefault(e.value, []).append(name)
    assert {k: v for k, v in where.items() if len(v) > 1} == {}

def test_functions_stay_short():
    "No function over 60 lines."
    long = {f'{p.relative_to(ROOT)}:{n.name}' for p in _modules().values() for n in ast.walk(ast.parse(p.read_text(encoding='utf-8')))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60}
    assert long == set()

def test_lines_fit_the_page():
    "No line of the package over 150 characters."
    long = [f'{p.relative_to(ROOT)}:{i}' for p in _modules().values()
            for i, l in enumerate(p.read_text(encoding='utf-8').splitlines(), start=1) if len(l) > 150]
    assert long == []

@pytest.mark.parametrize('wing', ['leaderboard', 'systems'])
def test_wings_are_packages(wing):
    "The leaderboard and the systems are packages of several modules, not flat modules beside the rest."
    assert (PKG/wing/'__init__.py').exists() and not (PKG/f'{wing}.py').exists()
    assert len([p for p in (PKG/wing).rglob('*.py') if p.name != '__init__.py']) >= 4

def test_export_cells_are_small():
    "Export cells of the library notebooks: at most 20 lines and 1.3 definitions each on average (`python tools/cell_stats.py`)."
    s = cell_summary(ROOT)
    assert s['mean_lines'] <= 20 and s['mean_definitions'] <= 1.3, {k: s[k] for k in ('cells', 'mean_lines', 'mean_definitions')}
