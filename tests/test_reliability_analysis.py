"""Faults of the analyses of finished runs: predictions of other rows, a missing target column, lengths that differ. Each stops
with one error that names the run, the column or the job; none yields a number."""
import json, os, re
from pathlib import Path
import pandas as pd
import pytest
from stance_nb.analysis import (attack_drop, by_target, run_diff, drop_difference, same_rows, find_job, job_predictions, load_test_rows,
                                targets_of)
from stance_nb.core import StanceDataError
from stance_nb.records import RunRecord, write_predictions

G = ['pro', 'con', 'pro', 'con']

def _job(root, name, fp, labels, attacked:dict|None=None):
    "A finished job folder as the job store writes it: record with the test sets' fingerprints, their predictions files."
    f = root/name; f.mkdir()
    rec = RunRecord('benchmark/x', dict(row=name, ratio=1.0, seed=1, data={'k:test': fp, **{f'k:{t}': v for t, v in (attacked or {}).items()}}))
    for t in ['test', *(attacked or {})]: rec.files[f'predictions/k/{t}'] = write_predictions(f/f'predictions_k_{t}.jsonl', labels).name
    rec.save(f/'record.json')
    return f

def _other_rows(tmp_path):
    a, b = _job(tmp_path, 'A', 'aaaa', G), _job(tmp_path, 'B', 'bbbb', G)
    with pytest.raises(StanceDataError, match="the jobs predicted different rows of 'k' as 'test'.*expected one test set"): same_rows([a, b], 'k')

def _other_attacked_rows(tmp_path):
    "The same clean test rows, spelling-attacked with other seeds: their drops are not compared."
    a, b = _job(tmp_path, 'A', 'aaaa', G, {'spelling': 's0'}), _job(tmp_path, 'B', 'aaaa', G, {'spelling': 's1'})
    assert same_rows([a, b], 'k') == 'aaaa'
    with pytest.raises(StanceDataError, match="different rows of 'k' as 'spelling'.*the same data and attack seed"): same_rows([a, b], 'k', 'spelling')

def _absent_test_set(tmp_path):
    a = _job(tmp_path, 'A', 'aaaa', G)
    with pytest.raises(StanceDataError, match="no predictions of 'k' on test set 'negation'.*expected one of \\['k/test'\\]"):
        job_predictions(a, 'k', 'negation')

def _absent_job(tmp_path):
    _job(tmp_path, 'A', 'aaaa', G)
    with pytest.raises(StanceDataError, match="no finished job of row 'B' on 'k' at ratio 1.*expected a row among \\['A'\\]"):
        find_job(tmp_path, 'B', 'k')

DIFF_ROWS = {'other_rows': _other_rows, 'other_attacked_rows': _other_attacked_rows, 'absent_test_set': _absent_test_set, 'absent_job': _absent_job}

@pytest.mark.parametrize('case', list(DIFF_ROWS))
def test_analysis_refuses_runs_of_other_rows(case, tmp_path):
    "Two jobs that predicted different test rows (clean or attacked), a test set a job did not predict, a row without a job: a `StanceDataError` naming it."
    DIFF_ROWS[case](tmp_path)

BAD_INPUT = {
    'diff_lengths': (lambda: run_diff(G, G[:3], G, names=('sdl', 'mdl')), 'sdl: 3 predictions for 4 gold labels'),
    'attacked_lengths': (lambda: attack_drop(G, G, G + ['pro']), 'attacked: 5 predictions for 4 gold labels'),
    'difference_lengths': (lambda: drop_difference(G, (G, G), (G, G[:2])), 'b attacked: 2 predictions for 4 gold labels'),
    'targets_absent': (lambda: by_target(G, G, G, []), 'targets: 0 predictions for 4 gold labels'),
    'target_missing_at_row': (lambda: by_target(G, G, G, ['x', None, 'y', 'y']), 'targets: a missing target at row 1'),
    'rows_of_other_length': (lambda: run_diff(G, G, G, rows=pd.DataFrame({'id': [1, 2]})), 'rows: 2 predictions for 4 gold labels'),
    'empty_gold': (lambda: attack_drop([], [], []), 'no test rows'),
}

@pytest.mark.parametrize('case', list(BAD_INPUT))
def test_analysis_refuses_mismatched_input(case):
    "Lengths that differ, an absent or incomplete target column, no rows: one `ValueError` naming the run or column, no number."
    f, msg = BAD_INPUT[case]
    with pytest.raises(ValueError, match=msg.replace('[', '\\[')): f()

def _own_csv(tmp_path, texts=('e f', 'g h')):
    "Your own CSV data set with a test split of two rows, and its `DataSpec`."
    from stance_nb.experiment.spec import DataSpec
    pd.DataFrame(dict(text=['a b', 'c d', *texts], label=['pro', 'con', 'pro', 'con'], split=['train', 'train', 'test', 'test'])).to_csv(
        tmp_path/'mine.csv', index=False)
    return DataSpec.of('mine', 'csv', path=str(tmp_path/'mine.csv'))

def _changed_data(tmp_path):
    from stance_nb.data.core import fingerprint
    fp = fingerprint(load_test_rows(_own_csv(tmp_path)))
    spec = _own_csv(tmp_path, texts=('e f', 'a changed text'))   # the file was edited after the run
    with pytest.raises(StanceDataError, match=f"the data of 'mine' \\(csv\\): the test split of 'mine' has fingerprint .*expected fingerprint {fp}"):
        load_test_rows(spec, expected=fp)

def _no_target_column(tmp_path):
    rows = load_test_rows(_own_csv(tmp_path))
    with pytest.raises(StanceDataError, match="field 'topic': no target column 'topic'.*among \\['id', 'split', 'target', 'text', 'label'\\]"):
        targets_of(rows, 'topic')

def _empty_target_column(tmp_path):
    rows = load_test_rows(_own_csv(tmp_path))   # a CSV without targets: the tidy column is there, empty
    with pytest.raises(StanceDataError, match="field 'target': no values in the target column 'target'"): targets_of(rows)

DATA = {'changed_data': _changed_data, 'no_target_column': _no_target_column, 'empty_target_column': _empty_target_column}

@pytest.mark.parametrize('case', list(DATA))
def test_analysis_refuses_changed_data_and_absent_targets(case, tmp_path):
    "Test data edited since the run, a target column absent or empty: a `StanceDataError` naming the data or the column, no table."
    DATA[case](tmp_path)

def _cli(argv, capsys) -> tuple[int, str]:
    "`stance_nb <argv>` in this process: its exit status and the one line it printed on stderr."
    from stance_nb.cli.main import main
    try: rc = main(argv)
    except SystemExit as e: rc = e.code
    return rc, capsys.readouterr().err.strip().splitlines()[-1]

CLI = {
    'three_systems': (['--systems', 'A,B,C'], 2, 'stance_nb analyze: error: --systems: one or two values, got 3 (A,B,C)'),
    'robustness_without_attack': (['--tests', 'test'], 2, 'robustness: --tests names the attacked test sets'),
    'bad_seed': (['--seeds', 'one'], 2, "--seeds 'one': expected one or two whole numbers"),
    'no_resamples': (['--n', '0'], 2, '--n 0: expected at least 100 bootstrap resamples'),
    'few_resamples': (['--n', '10'], 2, '--n 10: expected at least 100 bootstrap resamples (as transfer --n-resamples)'),
    'no_job_store': (['--from', 'no/such/store'], 1, 'stance_nb: error: no/such/store: no job store here'),
    'absent_row': (['--systems', 'BERT_SDL'], 1, "stance_nb: error: file {store}: no finished job of row 'BERT_SDL' on 'k' at ratio 1"),
}

@pytest.mark.parametrize('case', list(CLI))
def test_analyze_command_exit_codes(case, tmp_path, capsys):
    "`stance_nb analyze`: a wrong count or form of an option exits 2 before any data is read; an absent store or job exits 1; one line each."
    _job(tmp_path, 'A', 'aaaa', G)
    extra, code, line = CLI[case]
    opts = {'--from': str(tmp_path), '--dataset': 'k', '--systems': 'A', '--output-dir': str(tmp_path/'out'), **dict(zip(extra[::2], extra[1::2]))}
    rc, err = _cli(['analyze', 'robustness', *(x for kv in opts.items() for x in kv)], capsys)
    assert rc == code and line.format(store=tmp_path) in err, (rc, err)
    assert not (tmp_path/'out').exists()   # nothing written

# ================================================================ your own data, a transfer's store, seeds, intervals

def _baselines_store(tmp_path) -> tuple:
    "Majority and random on your own CSV files (folder `fx`) through `stance_nb baselines`: its job store and data key."
    from conftest import write_splits, run_cli
    (tmp_path/'fx').mkdir(); write_splits(tmp_path/'fx', 40, ['AGAINST', 'FAVOR'])
    code, out, err = run_cli(['baselines', '--dataset', 'csv', '--path', f"train={tmp_path/'fx'/'train.csv'},test={tmp_path/'fx'/'test.csv'}",
                              '--systems', 'majority,random', '--seeds', '1', '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-2000:]
    return Path(json.loads(out)['records'][0]).parents[1], 'fx'

def _transfer_store(tmp_path, old:bool=False) -> tuple:
    "Majority and random in a transfer over two fixture datasets: its job store and a transfer data key (`old`: records without data specs)."
    from conftest import run_cli
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    data = write_benchmark_fixtures(tmp_path/'data', ['ibmcs', 'perspectrum'])
    code, out, err = run_cli(['transfer', '--models', 'majority,random', '--datasets', 'ibmcs,perspectrum', '--data-dir', str(data),
                              '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-2000:]
    os.environ['STANCE_NB_DATA'] = str(data)
    store = tmp_path/'out'/'transfer'/'runs'
    if old:   # a store written before records kept their data spec (the committed transfer-minilm)
        for p in store.glob('*/record.json'):
            r = json.loads(p.read_text()); r['metrics'].pop('data_specs'); p.write_text(json.dumps(r))
    return store, 'ibmcs-to-perspectrum'

STORES = {'own_data': _baselines_store, 'transfer': _transfer_store, 'transfer_earlier': lambda t: _transfer_store(t, old=True)}

@pytest.mark.parametrize('case', list(STORES))
def test_analyze_your_own_data_and_a_transfer_store(case, tmp_path, capsys, monkeypatch):
    """`analyze diff` on the job store of a run on your own files (data key `fx`) or of a transfer (`ibmcs-to-perspectrum`, also from
    records of an earlier version that keep no data spec): the test rows are rebuilt from the spec the jobs recorded (or the transfer's
    test dataset) and checked against their fingerprint; it stopped with `UnknownName`."""
    monkeypatch.setenv('STANCE_NB_DATA', os.environ.get('STANCE_NB_DATA', ''))   # restored after the case
    store, key = STORES[case](tmp_path)
    from stance_nb.cli.main import main
    capsys.readouterr()
    rows = 'majority,random' if case == 'own_data' else 'Majority baseline,Random baseline'
    rc = main(['analyze', 'diff', '--from', str(store), '--dataset', key, '--systems', rows, '--output-dir', str(tmp_path/'an')])
    assert rc == 0, capsys.readouterr().err[-2000:]
    md = (tmp_path/'an'/f'diff_{key}.md').read_text()
    assert md.startswith(f'# diff on {key}: {rows.split(",")[0]}') and re.search(r'- test rows: [1-9]\d*\n', md), md[:800]

def test_analyze_a_seed_of_a_seedless_row(tmp_path, capsys):
    "`analyze --seeds 1` on a seedless row (majority): one line that says its jobs have no seed (it named the row as absent, listing it)."
    store, key = _baselines_store(tmp_path)
    rc, err = _cli(['analyze', 'diff', '--from', str(store), '--dataset', key, '--systems', 'majority', '--seeds', '1,2',
                    '--output-dir', str(tmp_path/'an')], capsys)
    assert rc == 1 and "row 'majority' has no job on 'fx' with training seed 1: its jobs there have seeds [None] (a seedless system)" in err, err
    assert 'leave out --seeds' in err

def test_analysis_intervals_as_a_reader_and_a_program_read_them(tmp_path):
    """A robustness table's intervals: `0.106–0.165` on the page, two numeric columns `drop_ci_low`, `drop_ci_high` in the CSV (as the
    per-target table's `ci_low`, `ci_high`); they were written as "(0.106, 0.165)" in both."""
    from stance_nb.analysis import attack_drop, write_analysis
    gold = ['pro', 'con'] * 50
    att = ['pro'] * 100
    r = attack_drop(gold, gold, att, n=200, seed=0)
    drops = pd.DataFrame([dict(system='A', attack='negation', **{k: v for k, v in r.items() if k not in ('n', 'seed')})])
    res = dict(about=dict(kind='robustness', key='k', runs=['A'], rows=100), tables={'drops': drops})
    write_analysis(res, tmp_path)
    csv = pd.read_csv(tmp_path/'robustness_k_drops.csv')
    assert {'drop_ci_low', 'drop_ci_high', 'rel_ci_low', 'rel_ci_high', 'resilience_ci_low', 'resilience_ci_high'} <= set(csv.columns)
    assert 'drop_ci' not in csv.columns and csv.drop_ci_low.dtype.kind == 'f' and csv.drop_ci_low[0] == r['drop_ci'][0]
    md = (tmp_path/'robustness_k.md').read_text()
    assert f"| {r['drop_ci'][0]:.3f}–{r['drop_ci'][1]:.3f} |" in md and '(0.' not in md.split('## drops')[1], md
