"""A new system family is one module and one entry point (the README's worked example, word for word): the registry finds it
on the first lookup of its name, lists it for `--help`, and the runner runs it like every other system."""
import sys
from pathlib import Path
import pytest
from stance_nb.experiment import SYSTEMS, Experiment, Row, DataSpec, run
from stance_nb.fixtures.benchmark import write_benchmark_fixtures
from stance_nb.leaderboard.spec import LEADERBOARD_SYSTEMS
from stance_nb.leaderboard.params import LeaderboardArgs

FAMILY = '''"A baseline family: every test row gets the alphabetically first label of the training data."
from stance_nb.experiment import Context, Row, register_system, split_of
from stance_nb.leaderboard.spec import LEADERBOARD_SYSTEMS, SystemMeta


class FirstLabel:
    "The model: remembers the alphabetically first training label."
    def fit(self, train):
        self.label = sorted(train.label.unique())[0]
        return self

    def predict(self, df) -> list:
        return [self.label] * len(df)


@register_system('first_label', seeded=False, constant=True, settings=())
def first_label(ctx:Context):
    "The alphabetically first training label, for every test row."
    preds = {}
    for key, df in ctx.data.items():
        model = FirstLabel().fit(split_of(df, 'train'))
        for (k, test), frame in ctx.tests.items():
            if k == key: preds[k, test] = model.predict(frame)
    return preds, {}


LEADERBOARD_SYSTEMS.register('first_label', SystemMeta(
    'first_label', 'baseline', 'the alphabetically first training label', 'none (a plugin)', 'First label',
    make_row=lambda args: Row('First label', 'first_label', tables=('4',))))
'''

@pytest.fixture
def installed_family(tmp_path, monkeypatch):
    "The module `first_label_family` and a distribution whose entry point (group `stance_nb.systems`) names it, on `sys.path`."
    (tmp_path/'first_label_family.py').write_text(FAMILY, encoding='utf-8')
    info = tmp_path/'first_label_family-0.1.dist-info'; info.mkdir()
    (info/'METADATA').write_text('Metadata-Version: 2.1\nName: first-label-family\nVersion: 0.1\n', encoding='utf-8')
    (info/'entry_points.txt').write_text('[stance_nb.systems]\nfirst_label = first_label_family\n', encoding='utf-8')
    monkeypatch.syspath_prepend(str(tmp_path))
    for reg in (SYSTEMS, LEADERBOARD_SYSTEMS):   # this process may have loaded the group before the family was installed
        monkeypatch.setattr(reg, '_loaded', False)
    yield tmp_path
    for reg in (SYSTEMS, LEADERBOARD_SYSTEMS): reg.pop('first_label', None)
    sys.modules.pop('first_label_family', None)

def test_the_example_is_short_and_in_the_readme():
    "The worked example stays under 40 lines, model and registration together, and the README shows it word for word."
    assert len(FAMILY.strip().splitlines()) < 40
    assert FAMILY in (Path(__file__).resolve().parents[1]/'README.md').read_text(encoding='utf-8')

def test_a_new_family_is_found_and_listed(installed_family):
    "Nothing imports the module: the first lookup of its name loads the entry-point group; the listing `--help` shows names it."
    assert 'first_label' not in dict.keys(SYSTEMS)
    assert SYSTEMS['first_label'].constant and not SYSTEMS['first_label'].seeded
    assert 'first_label: The alphabetically first training label, for every test row.' in SYSTEMS.listing().splitlines()
    assert {'majority', 'fasttext', 'first_label'} <= set(SYSTEMS.names())

def test_the_runner_runs_a_new_family(installed_family):
    "A row names the new system; the runner runs its job, keys it and scores it like any other."
    root = write_benchmark_fixtures(installed_family/'data', ['ibmcs'])
    exp = Experiment('demo', 'schiller2021', {'ibmcs': DataSpec.of('ibmcs')}, [Row('First label', 'first_label', tables=('4',))], tables={'4': None})
    res = run(exp, exp.rows, ['ibmcs'], seeds=[1, 2], data_dir=root, out=installed_family/'runs', settings=dict(smoke=True))
    assert len(res.records) == 1 and res.scores.metric.tolist() == ['f1_macro']   # deterministic: one job for both seeds
    shares = res.labels.iloc[0]
    assert (shares.n_labels, shares.top_label, shares.top_share) == (1, 'CON', 1.0)   # CON < PRO: the first label, for every row
    assert res.scores.value.iloc[0] < 0.5, res.scores   # one label for all rows: macro-F1 of one class of two
    again = run(exp, exp.rows, ['ibmcs'], seeds=[1], data_dir=root, out=installed_family/'runs', settings=dict(smoke=True))
    assert again.conditions['reused'] == 1

def test_the_leaderboard_takes_a_new_family(installed_family, capsys):
    "The family's meta record makes it a leaderboard system: a valid `--models` value, listed by `--help`, and its row planned."
    from stance_nb.cli import main
    assert 'first_label' in LeaderboardArgs().choices()['models']
    assert [m.name for m in LeaderboardArgs(models=['majority', 'first_label']).checked().systems()] == ['majority', 'first_label']
    with pytest.raises(SystemExit): main(['leaderboard', '--help'])
    assert 'first_label' in capsys.readouterr().out
    root = write_benchmark_fixtures(installed_family/'data', ['ibmcs'])
    code = main(['leaderboard', '--models', 'majority,first_label', '--datasets', 'ibmcs', '--data-dir', str(root), '--plan', '--json',
                 '--output-dir', str(installed_family/'out')])
    out = capsys.readouterr().out
    assert code == 0 and '"first_label": {"jobs": 1' in out, out[-2000:]   # its row planned, under its leaderboard name
