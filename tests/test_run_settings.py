"""The settings every run kind shares are declared once (`RunSettings`) and placed by each run kind; the output folder is a
field that reaches the runner, and the command line passes it as that field, leaving the environment as it was."""
import inspect, json, os, re
from dataclasses import fields
from pathlib import Path
import pytest
from stance_nb.experiment import load_papers, RunSettings
from stance_nb.leaderboard.params import LeaderboardArgs
from stance_nb.transfer import TransferArgs
from stance_nb.papers.benchmark import BenchmarkArgs, RobustnessArgs

KINDS = sorted({*(e.args for e in load_papers().values() if e.args is not None), RobustnessArgs, LeaderboardArgs, TransferArgs}, key=lambda c: c.__name__)
SHARED = {f.name: f for f in fields(RunSettings)}

def test_every_run_kind_has_the_shared_fields_from_run_settings():
    "Each shared field: its type and constraints are RunSettings', and no run kind's source declares it again."
    assert len(KINDS) == 7 and set(SHARED) == {'smoke', 'seeds', 'data_dir', 'output_dir', 'run_name', 'executor', 'workers', 'slurm'}
    for C in KINDS:
        own, src = {f.name: f for f in fields(C)}, inspect.getsource(C)
        for name, f in SHARED.items():
            assert own[name].type == f.type and own[name].metadata == f.metadata, (C.__name__, name)
            assert C.annotations()[name] == RunSettings.annotations()[name]
            assert not re.search(rf'^\s+{name}\s*:', src, re.M), f'{C.__name__} declares {name} again'
        same = [n for n, f in SHARED.items() if C.__dataclass_fields__[n] is f]
        assert {'output_dir', 'executor', 'workers', 'slurm'} <= set(same), (C.__name__, same)   # no override: RunSettings' Field itself

def test_a_run_kinds_default_override():
    "A paper's five seeds and run name, the leaderboard's one seed: the run kind's default, the field's constraints RunSettings'."
    assert (BenchmarkArgs().seeds, BenchmarkArgs().run_name, LeaderboardArgs().seeds, LeaderboardArgs().run_name) == \
           ([1, 2, 3, 4, 5], 'benchmark', [1], 'leaderboard')
    assert BenchmarkArgs().seeds is not BenchmarkArgs().seeds   # each instance its own list
    assert BenchmarkArgs.docs()['seeds'] != RunSettings.docs()['seeds'] and TransferArgs.docs()['slurm'] == RunSettings.docs()['slurm']

def test_a_constraint_declared_as_metadata_says_what_it_said():
    "The error text of a keyword-declared constraint is the one the annotation words gave."
    with pytest.raises(ValueError, match=re.escape("parameter seeds=[1, 1]: values must be distinct; parameter workers=0: expected > 0")):
        BenchmarkArgs(seeds=[1, 1], workers=0).checked()
    with pytest.raises(ValueError, match=re.escape("parameter max_length=4: expected >= 8")): BenchmarkArgs(max_length=4).checked()
    with pytest.raises(ValueError, match=re.escape("parameter run_name='../x': expected a plain name")): TransferArgs(run_name='../x').checked()

@pytest.fixture
def fixtures(tmp_path, monkeypatch):
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    write_benchmark_fixtures(tmp_path/'data', names=['ibmcs'])
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'default'))   # the fallback: nothing may land here
    monkeypatch.setenv('STANCE_NB_QUIET', '1')
    return tmp_path

def test_output_dir_is_where_a_run_writes(fixtures):
    "A leaderboard of the majority baseline with `output_dir`: its table and job store there, nothing in `$STANCE_NB_OUTPUTS`."
    from stance_nb.leaderboard.run import leaderboard
    out = fixtures/'mine'
    lb = leaderboard(LeaderboardArgs(models=['majority'], datasets=['ibmcs'], data_dir=str(fixtures/'data'), output_dir=str(out),
                                     n_resamples=100).checked())
    assert Path(lb.files['csv']) == out/'leaderboard'/'leaderboard_leaderboard.csv' and Path(lb.files['csv']).exists()
    assert list((out/'benchmark'/'runs').rglob('record.json')) and not (fixtures/'default').exists()

def test_the_cli_passes_output_dir_as_the_field(fixtures, capsys):
    "`stance_nb leaderboard --output-dir DIR`: the files under DIR, the environment unchanged."
    from stance_nb.cli.main import main
    before = dict(os.environ)
    assert main(['leaderboard', '--models', 'majority', '--datasets', 'ibmcs', '--data-dir', str(fixtures/'data'), '--output-dir',
                 str(fixtures/'cli'), '--n-resamples', '100', '--json']) == 0
    res = json.loads(capsys.readouterr().out)
    assert Path(res['files']['csv']).parent == (fixtures/'cli'/'leaderboard').resolve() and not (fixtures/'default').exists()
    assert dict(os.environ) == before

def test_a_reproduction_plans_under_output_dir(tmp_path, monkeypatch):
    "`reproduce`'s run arguments from a paper's parameters: the tables and the job store under `output_dir`, not `$STANCE_NB_OUTPUTS`."
    from stance_nb.experiment import get_experiment, run_arguments
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'default'))
    kw, folder, stem = run_arguments(get_experiment('benchmark'), BenchmarkArgs(output_dir=str(tmp_path/'x'), tables=['4']), plan=True)
    assert (folder, kw['out'], stem) == ((tmp_path/'x'/'benchmark').resolve(), (tmp_path/'x'/'benchmark'/'runs').resolve(), 'benchmark')
    _, unset, _ = run_arguments(get_experiment('benchmark'), BenchmarkArgs(tables=['4']), plan=True)
    assert unset == (tmp_path/'default'/'benchmark').resolve()   # the fallback
