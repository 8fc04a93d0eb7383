"""A new system family is one module and one entry point (the README's worked example, word for word): the registry finds it
on the first lookup of its name, lists it for `--help`, and the runner runs it like every other system."""
import sys
from pathlib import Path
import pytest
from stance_nb.experiment import SYSTEMS, Experiment, Row, DataSpec, run
from stance_nb.fixtures.benchmark import write_benchmark_fixtures
from stance_nb.experiment import SYSTEM_META
from stance_nb.leaderboard.params import LeaderboardArgs

FAMILY = '''"A baseline family: every test row gets the first training label in alphabetical order (or the last)."
from dataclasses import dataclass
from stance_nb.experiment import Context, Row, SystemOptions, arg, register_system, split_of, declare_system, SystemMeta


class FirstLabel:
    "The model: remembers the first training label in alphabetical order (the last with `reverse`)."
    def fit(self, train, reverse:bool=False):
        self.label = sorted(train.label.unique(), reverse=reverse)[0]
        return self

    def predict(self, df) -> list:
        return [self.label] * len(df)


@dataclass
class FirstLabelOptions(SystemOptions):
    "Its knob, given as `--system-options '{\\"first_label\\": {\\"reverse\\": true}}'`."
    reverse:bool = arg(False)   # True: the last label in alphabetical order


@register_system('first_label', seeded=False, constant=True, settings=())
def first_label(ctx:Context):
    "The alphabetically first training label (or the last), for every test row."
    preds = {}
    for key, df in ctx.data.items():
        model = FirstLabel().fit(split_of(df, 'train'), ctx.option('reverse', False))
        for (k, test), frame in ctx.tests.items():
            if k == key: preds[k, test] = model.predict(frame)
    return preds, {}


declare_system(SystemMeta(
    'first_label', 'baseline', 'the alphabetically first training label', 'none (a plugin)', 'First label', options=FirstLabelOptions,
    make_row=lambda o: Row('First label', 'first_label', {'reverse': o.reverse}, tables=('4',))))
'''

@pytest.fixture
def installed_family(tmp_path, monkeypatch):
    "The module `first_label_family` and a distribution whose entry point (group `stance_nb.systems`) names it, on `sys.path`."
    (tmp_path/'first_label_family.py').write_text(FAMILY, encoding='utf-8')
    info = tmp_path/'first_label_family-0.1.dist-info'; info.mkdir()
    (info/'METADATA').write_text('Metadata-Version: 2.1\nName: first-label-family\nVersion: 0.1\n', encoding='utf-8')
    (info/'entry_points.txt').write_text('[stance_nb.systems]\nfirst_label = first_label_family\n', encoding='utf-8')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(SYSTEMS, '_loaded', False)   # this process may have loaded the group before the family was installed
    yield tmp_path
    SYSTEMS.pop('first_label', None)   # its run function and its record: one entry
    sys.modules.pop('first_label_family', None)

def test_the_example_is_short_and_in_the_readme():
    "The worked example stays under 40 lines, model and registration together, and the README shows it word for word."
    assert len(FAMILY.strip().splitlines()) < 40
    assert FAMILY in (Path(__file__).resolve().parents[1]/'README.md').read_text(encoding='utf-8')

def test_a_new_family_is_found_and_listed(installed_family):
    "Nothing imports the module: the first lookup of its name loads the entry-point group; the listing `--help` shows names it."
    assert 'first_label' not in dict.keys(SYSTEMS)
    assert SYSTEMS['first_label'].constant and not SYSTEMS['first_label'].seeded
    assert 'first_label: The alphabetically first training label (or the last), for every test row.' in SYSTEMS.listing().splitlines()
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

def test_a_new_family_brings_its_options(installed_family, capsys):
    "The family's options class is its knobs on the leaderboard: given under `system_options`, checked by it, handed to its row."
    from stance_nb.cli import main
    m = SYSTEM_META['first_label']
    assert SYSTEMS['first_label'].meta is m and SYSTEMS['first_label'].fn.__name__ == 'first_label'   # one entry, one name
    args = LeaderboardArgs(models=['first_label'], system_options={'first_label': {'reverse': True}}, smoke=True).checked()
    assert args.options_of(m).reverse is True and m.make_row(args.options_of(m)).options == {'reverse': True}
    for bad, said in [({'first_label': {'revers': True}}, "system_options['first_label']: expected an object of its knobs ['reverse']"),
                      ({'first_label': {'reverse': 'yes'}}, 'parameter reverse='),
                      ({'majority': {}}, "system_options['majority']: expected a chosen system with options of its own"),
                      ({'nli': {'model': 'x'}}, "system_options['nli']: expected a chosen system")]:
        with pytest.raises(ValueError, match=None) as e: LeaderboardArgs(models=['first_label'], system_options=bad, smoke=True).checked()
        assert said in str(e.value), str(e.value)
    with pytest.raises(ValueError, match="its knobs are this run's parameters"):
        LeaderboardArgs(models=['nli'], system_options={'nli': {'model': 'x'}}, smoke=True).checked()
    root = write_benchmark_fixtures(installed_family/'data', ['ibmcs'])
    exp = Experiment('demo', 'schiller2021', {'ibmcs': DataSpec.of('ibmcs')}, [Row('First label', 'first_label', {'reverse': True}, tables=('4',))],
                     tables={'4': None})
    res = run(exp, exp.rows, ['ibmcs'], seeds=[1], data_dir=root, out=installed_family/'runs', settings=dict(smoke=True))
    assert res.labels.iloc[0].top_label == 'PRO'   # the knob reached the system: the last label, for every row
    code = main(['leaderboard', '--models', 'first_label', '--system-options', '{"first_label": {"reverse": true}}', '--datasets', 'ibmcs',
                 '--data-dir', str(root), '--plan', '--json', '--output-dir', str(installed_family/'out')])
    out = capsys.readouterr().out
    assert code == 0 and '"first_label": {"jobs": 1' in out, out[-2000:]
