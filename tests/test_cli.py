"The `stance_nb` command on a user's own CSV files (unusual column names, labels 0/1/2) and on X-stance's official format."
import json, os, subprocess, sys
from pathlib import Path

import pandas as pd
import pytest

from stance_nb.cli import main
from stance_nb.core import data_dir
from stance_nb.data import load
from stance_nb.metrics import evaluate_xstance
from stance_nb.records import read_predictions, write_predictions
from stance_nb.test_utils import synthetic_stance, tiny_bert

LABELS = {'0': 'AGAINST', '1': 'FAVOR', '2': 'NONE'}


@pytest.fixture(scope='module')
def own(tmp_path_factory):
    "Three CSV files (train, test, new) with columns Sentence/Topic/Stance and labels 0/1/2, and the options that read them."
    d = tmp_path_factory.mktemp('mydata')
    seen = set()
    for s, seed in (('train', 1), ('test', 2), ('new', 3)):
        df = synthetic_stance(60, seed=seed, splits=(s,), labels=tuple(LABELS))
        df = df[[(t, x) not in seen for t, x in zip(df.target, df.text)]]   # disjoint splits: the loader refuses leakage
        seen |= set(zip(df.target, df.text))
        df.rename(columns=dict(text='Sentence', target='Topic', label='Stance'))[['Topic', 'Sentence', 'Stance']].to_csv(d/f'{s}.csv', index=False)
    opts = ['--dataset', 'csv', '--path', f"train={d/'train.csv'},test={d/'test.csv'}", '--columns', 'text=Sentence,target=Topic,label=Stance',
            '--label-map', ','.join(f'{k}={v}' for k, v in LABELS.items())]
    return d, opts


def _run(argv, capfd) -> dict:
    "Run `main(argv + ['--json'])` in this process; stdout must be exactly one JSON object."
    assert main(argv + ['--json']) == 0
    out = capfd.readouterr().out
    assert out.count('\n') == 1, out[:500]
    return json.loads(out)


def test_baselines_json_subprocess(own, tmp_path):
    "The acceptance command as a real process: majority and fastText test scores, nothing else on stdout."
    d, opts = own
    p = subprocess.run([sys.executable, '-m', 'stance_nb.cli', 'baselines', *opts, '--dev-fraction', '0.2', '--seeds', '1', '--threads', '1',
                        '--output-dir', str(tmp_path/'out'), '--json'], capture_output=True, text=True, timeout=300,
                       env={**os.environ, 'TOKENIZERS_PARALLELISM': 'false'})
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    assert p.stdout.strip().count('\n') == 0
    assert res['data']['n'] == {'train': 48, 'dev': 12, 'test': 60} and res['data']['labels'] == sorted(LABELS.values())
    assert res['test']['majority']['f1_macro']['mean'] == pytest.approx(1/6)   # one of three balanced classes
    assert res['test']['fasttext']['f1_macro']['mean'] > 0.5
    for r in res['records']:   # committed-style records: no absolute path of this machine's outputs folder
        assert str((tmp_path/'out').resolve()) not in Path(r).read_text()


def test_train_then_predict(own, tmp_path, capfd):
    "`train` fine-tunes a local model folder on the CSV files; `predict` labels a new CSV with the run folder."
    d, opts = own
    tiny_bert(tmp_path/'tiny', num_labels=3)
    res = _run(['train', *opts, '--dev-fraction', '0.2', '--preset', 'smoke', '--model', str(tmp_path/'tiny'), '--epochs', '1', '--seeds', '1',
                '--output-dir', str(tmp_path/'out')], capfd)
    run = Path(res['records'][0]).parent
    assert res['data']['pair'] and set(res['runs'][0]) >= {'test_f1_macro', 'dev_f1_macro'}
    rec_text = (run/'record.json').read_text()
    assert str((tmp_path/'out').resolve()) not in rec_text and json.loads(rec_text)['files']['predictions'] == 'predictions.jsonl'
    pr = _run(['predict', '--run', str(run), '--input', str(d/'new.csv'), '--columns', 'text=Sentence,target=Topic',
               '--output', str(tmp_path/'pred'), '--label-column', 'predicted'], capfd)
    new = pd.read_csv(tmp_path/'pred.csv')
    assert pr['n'] == len(new) == 60 and new.predicted.tolist() == read_predictions(tmp_path/'pred.jsonl')
    assert set(new.predicted) <= set(LABELS.values()) and list(new.columns) == ['Topic', 'Sentence', 'Stance', 'predicted']


def test_evaluate_xstance_fixture(tmp_path, capfd):
    "`evaluate` on X-stance gives the official table of `evaluate_xstance` (fixture data: runs everywhere)."
    from stance_nb.fixtures.papers import write_xstance
    write_xstance(tmp_path/'data'/'xstance')
    test = load('xstance', tmp_path/'data').query("split == 'test'")
    write_predictions(tmp_path/'favor.jsonl', ['FAVOR']*len(test))
    res = _run(['evaluate', '--dataset', 'xstance', '--data-dir', str(tmp_path/'data'), '--predictions', str(tmp_path/'favor.jsonl')], capfd)
    pd.testing.assert_frame_equal(pd.DataFrame(res['official']), evaluate_xstance(test, tmp_path/'favor.jsonl'))


@pytest.mark.skipif(not (data_dir()/'xstance'/'test.jsonl').exists(), reason='the X-stance test set is not in the data folder')
def test_evaluate_xstance_official(tmp_path, capfd):
    "On the real test set, a constant FAVOR predictions file scores as the official evaluation scores it."
    n = sum(1 for line in (data_dir()/'xstance'/'test.jsonl').open(encoding='utf-8') if line.strip())
    write_predictions(tmp_path/'favor.jsonl', ['FAVOR']*n)
    res = _run(['evaluate', '--dataset', 'xstance', '--predictions', str(tmp_path/'favor.jsonl')], capfd)
    official = evaluate_xstance(data_dir()/'xstance'/'test.jsonl', tmp_path/'favor.jsonl')
    pd.testing.assert_frame_equal(pd.DataFrame(res['official']), official)
    assert res['n'] == n


def test_evaluate_csv_and_errors(own, tmp_path, capfd):
    "Gold labels score 1; a short predictions file and an unknown dataset file name fail with what was expected."
    d, opts = own
    gold = [LABELS[str(s)] for s in pd.read_csv(d/'test.csv').Stance]
    write_predictions(tmp_path/'gold.jsonl', gold)
    res = _run(['evaluate', *opts, '--predictions', str(tmp_path/'gold.jsonl')], capfd)
    assert res['scores'] == {'f1_macro': 1.0, 'accuracy': 1.0}
    write_predictions(tmp_path/'short.jsonl', gold[:-1])
    assert main(['evaluate', *opts, '--predictions', str(tmp_path/'short.jsonl')]) == 1
    assert '59 predictions for the 60 test rows' in capfd.readouterr().err
    with pytest.raises(SystemExit) as e: main(['baselines', '--dataset', str(d/'train.csv')])
    assert e.value.code == 2 and 'use --dataset csv --path' in capfd.readouterr().err
