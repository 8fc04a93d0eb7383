"""One schema per run kind: each result notebook's parameters cell equals its parameter class (names, types, defaults), the
command line's `reproduce -p` names and `leaderboard` options are the classes' fields, and the installed package (not the
checkout) runs `reproduce --plan`, `leaderboard --plan` and a baselines run without reading a notebook."""
import ast, json, os, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT/'nbs'
CLASSES = {'run_benchmark': 'stance_nb.papers.benchmark.BenchmarkArgs', 'run_robustness': 'stance_nb.papers.benchmark.RobustnessArgs',
           'run_xstance': 'stance_nb.papers.xstance.XstanceArgs', 'run_cheese': 'stance_nb.papers.cheese.CheeseArgs',
           'run_ezstance': 'stance_nb.papers.ezstance.EzstanceArgs', 'run_leaderboard': 'stance_nb.leaderboard.params.LeaderboardArgs',
           'run_transfer': 'stance_nb.transfer.TransferArgs'}

def _class(path:str):
    import importlib
    mod, _, name = path.rpartition('.')
    return getattr(importlib.import_module(mod), name)

def _cells(nb:str) -> list:
    return [''.join(c['source']) for c in json.loads((NBS/f'{nb}.ipynb').read_text(encoding='utf-8'))['cells'] if c['cell_type'] == 'code']

def notebook_parameters(nb:str) -> dict:
    "The parameters cell of `nb`: name -> (annotation, default), in order."
    out = {}
    for node in ast.parse(_cells(nb)[0]).body:
        assert isinstance(node, ast.AnnAssign) and node.value is not None, f'{nb}: line {node.lineno} is not `name: "type" = literal`'
        out[node.target.id] = (ast.literal_eval(node.annotation), ast.literal_eval(node.value))
    return out

def test_every_result_notebook_has_a_class():
    assert sorted(p.stem for p in NBS.glob('run_*.ipynb')) == sorted(CLASSES)

@pytest.mark.parametrize('nb', sorted(CLASSES))
def test_parameters_cell_equals_its_class(nb):
    "Same names in the same order, same annotations (type and constraints), same defaults; the next cell checks against that class."
    cls = _class(CLASSES[nb])
    cell = notebook_parameters(nb)
    want = {name: (anno, default) for (name, anno), default in zip(cls.annotations().items(), cls().as_dict().values())}
    assert list(cell) == list(want), f'{nb}: names differ: {list(cell)} vs {list(want)}'
    for name in want: assert cell[name] == want[name], f'{nb}.{name}: notebook {cell[name]}, {cls.__name__} {want[name]}'
    assert re.search(rf'\bparameters\(globals\(\), {cls.__name__}\)', _cells(nb)[1]), f'{nb}: its second code cell does not check against {cls.__name__}'

def test_the_check_finds_a_difference():
    "The comparison sees a default that differs (a test that cannot fail is a defect)."
    from stance_nb.papers.benchmark import BenchmarkArgs
    cell = notebook_parameters('run_benchmark')
    assert cell['seeds'] == ('list[int] nonneg distinct', BenchmarkArgs().seeds) and cell['seeds'] != ('list[int] nonneg distinct', [1, 2])

def _declaring_classes() -> list:
    "Every class that declares run parameters: the run kinds, the shared settings and knobs, each system family's options."
    from stance_nb.experiment.params import RunSettings, SharedKnobs
    from stance_nb.experiment.spec import SYSTEM_META
    kinds = [_class(c) for c in CLASSES.values()]
    families = {m.options for m in SYSTEM_META.entries() if m.options is not None}
    return [RunSettings, SharedKnobs, *kinds, *sorted(families, key=lambda c: c.__name__)]

def test_each_parameter_is_declared_once():
    """A run parameter's type, constraints and comment are written in one class: a run kind places the shared ones
    (`setting`, `knobs`) instead of declaring them again; a family knob that is another parameter under a shared name says why
    (`differs`). All classes together declare at most 100 fields (the seven run kinds have 158 between them)."""
    declared = [(c.__name__, c.field_names().get(k, k) if hasattr(c, 'field_names') else k) for c in _declaring_classes() for k in c.declared()]
    names = [n for _, n in declared]
    twice = {n: [c for c, m in declared if m == n] for n in names if names.count(n) > 1}
    excused = {n: cs for n, cs in twice.items() if all(n in getattr(_class_of(c), 'differs', {}) or c == 'SharedKnobs' for c in cs)}
    assert twice == excused, f"declared in several classes: { {n: cs for n, cs in twice.items() if n not in excused} }"
    assert len(declared) <= 100, len(declared)
    assert sum(len(_class(c).annotations()) for c in CLASSES.values()) == 158   # the run kinds' fields, unchanged

def _class_of(name:str):
    return next(c for c in _declaring_classes() if c.__name__ == name)

def test_a_redeclared_shared_knob_is_refused():
    "A run kind that declares a shared knob again (instead of placing it) is refused, naming where it is declared."
    from stance_nb.experiment.params import RunArgs, arg, run_kind
    with pytest.raises(TypeError, match=re.escape("['SharedKnobs.epochs'] are declared already")):
        run_kind(type('Mine', (RunArgs,), {'__annotations__': {'epochs': 'int'}, 'epochs': arg(3)}))

def test_leaderboard_options_are_its_fields():
    "`stance_nb leaderboard`'s options: one per field of `LeaderboardArgs` under its own name, plus the few that are not parameters."
    from stance_nb.cli.main import make_parser
    from stance_nb.leaderboard.params import LeaderboardArgs
    sub = make_parser(['leaderboard'])._subparsers._group_actions[0].choices['leaderboard']
    dests = {a.dest for a in sub._actions if a.dest != 'help'}
    assert dests - {'import_tables', 'keep_records', 'plan', 'throughput', 'threads', 'json'} == set(LeaderboardArgs.annotations())
    flags = {s for a in sub._actions for s in a.option_strings}
    assert {f"--{f.replace('_', '-')}" for f in LeaderboardArgs.annotations()} <= flags and {'--from', '--preset', '--resamples'} <= flags

@pytest.mark.parametrize('experiment', ['benchmark', 'xstance', 'cheese', 'ezstance'])
def test_reproduce_parameters_are_the_fields(experiment):
    "`reproduce <experiment> -p`: every field with its default is taken, any other name is refused with the fields as the valid ones."
    from stance_nb.experiment import run_args
    from stance_nb.cli.commands import reproduce_args
    from stance_nb.cli.options import UsageError
    cls = run_args(experiment)
    fields = list(cls.annotations())
    assert reproduce_args(experiment, [[f'{f}={json.dumps(v) if isinstance(v, (list, dict)) else v}'] for f, v in cls().as_dict().items()]) == cls().checked()
    with pytest.raises(UsageError, match=re.escape(f"valid parameters: {sorted(fields)}")): reproduce_args(experiment, [['not_a_field=1']])

def test_the_leaderboard_is_a_package():
    "The leaderboard's modules live in `stance_nb.leaderboard`; no flat leaderboard module is left beside it."
    pkg = ROOT/'stance_nb'/'leaderboard'
    assert pkg.is_dir() and {p.stem for p in pkg.glob('*.py')} == {'__init__', 'params', 'build', 'render', 'run', 'imported', 'probes'}
    assert not list((ROOT/'stance_nb').glob('leaderboard*.py'))

NOTEBOOK_READ = r"notebook_parameters|['\"]nbs['\"]"   # the notebooks' folder named in code, or the reader that parsed their parameters

def test_the_package_reads_no_notebook():
    "No module of the package opens a result notebook at run time."
    bad = [str(p.relative_to(ROOT)) for p in (ROOT/'stance_nb').rglob('*.py') if p.name != '_modidx.py'
           and re.search(NOTEBOOK_READ, p.read_text(encoding='utf-8'))]
    assert bad == []
    assert re.search(NOTEBOOK_READ, "path = root/'nbs'/f'run_{experiment}.ipynb'")   # what the reader that is gone did

# --- the installed package, from a folder outside the checkout --------------------------------------------------------------

DATA = Path(os.environ.get('STANCE_NB_DATA', ROOT.parent/'shared'/'data'))
needs_data = pytest.mark.skipif(not (DATA/'ibmcs').exists(), reason='needs the data mirror ($STANCE_NB_DATA with ibmcs)')

@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    "`pip install --no-deps --target DIR .` (not editable: the wheel's files and metadata, entry points included) from the checkout."
    target = tmp_path_factory.mktemp('site')
    r = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--no-build-isolation', '--target', str(target), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (target/'stance_nb'/'leaderboard'/'run.py').exists() and list(target.glob('stance_nb-*.dist-info'))
    return target

def _run(installed, cwd, *argv, timeout=900):
    env = {**os.environ, 'PYTHONPATH': str(installed), 'STANCE_NB_DATA': str(DATA), 'STANCE_NB_OUTPUTS': str(cwd/'outputs'),
           'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'STANCE_NB_QUIET': '1'}
    code = (f'import sys, stance_nb; assert stance_nb.__file__.startswith({str(installed)!r}), stance_nb.__file__; '
            'from stance_nb.cli.main import main; sys.exit(main(sys.argv[1:]))')
    r = subprocess.run([sys.executable, '-c', code, *argv, '--json'], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, (argv, r.stderr[-3000:])
    return json.loads(r.stdout)

@needs_data
@pytest.mark.slow
def test_installed_package_runs_outside_the_checkout(installed, tmp_path):
    "From a folder outside the checkout the installed package plans a reproduction and a leaderboard and runs the baselines."
    assert ROOT not in tmp_path.parents
    plan = _run(installed, tmp_path, 'reproduce', 'benchmark', '--plan', '-p', 'tables=4')
    assert plan['plan']['jobs'] > 0 and 'Majority baseline' in plan['rows']
    lb = _run(installed, tmp_path, 'leaderboard', '--models', 'majority,fasttext', '--datasets', 'ibmcs', '--plan')
    assert lb['plan']['jobs'] == 2 and set(lb['rows']) == {'majority', 'fasttext'}   # the leaderboard's names
    base = _run(installed, tmp_path, 'baselines', '--dataset', 'ibmcs', '--systems', 'majority,random', '--seeds', '1')
    assert set(base['test']) == {'majority', 'random'} and 0 < base['test']['majority']['f1_macro']['mean'] < 1
