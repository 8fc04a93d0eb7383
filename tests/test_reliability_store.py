"""The job store reuses a finished job only when everything that determines its result is in its key (declared labels,
a local model's content, the precision) and its files still give the stored scores; library entry points refuse rows
the loaders refuse; one scorer convention everywhere; checkpoints carry the hash of their weights. Each job-store case
runs `stance_nb reproduce benchmark` on a tiny CSV dataset of your own (seconds)."""
import json, re, shutil, warnings
from pathlib import Path
import pandas as pd
import pytest

from stance_nb.cli import main
from stance_nb.records import read_job_predictions, write_job_predictions
from conftest import write_splits

LABELS2, LABELS3 = ['AGAINST', 'FAVOR'], ['AGAINST', 'FAVOR', 'NONE']

@pytest.fixture(scope='module')
def mine(tmp_path_factory):
    "train.csv and test.csv (40 rows each, AGAINST/FAVOR) and a tiny BERT folder."
    from stance_nb.test_utils import tiny_bert
    d = tmp_path_factory.mktemp('mine')
    write_splits(d, 40, LABELS2)
    tiny_bert(d/'tiny', num_labels=2, seed=0)
    return d

def _data(d:Path, labels=None) -> str:
    spec = {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')}, 'dev_fraction': 0.2}
    if labels: spec['labels'] = labels
    return json.dumps({'mine': spec})

def _reproduce(d:Path, out:Path, capfd, monkeypatch, rows='Majority baseline,fastText', labels=None, extra=(), **params) -> dict:
    "`stance_nb reproduce benchmark` (Table 4, seed 1, full training data) on `mine` into the job store under `out`."
    argv = ['reproduce', 'benchmark', '-p', 'tables=4', '-p', f'rows={rows}', '-p', 'seeds=1', '-p', 'ratios=1.0', '-p', 'n_jobs=1',
            '-p', f'data={_data(d, labels)}']
    for k, v in params.items(): argv += ['-p', f'{k}={v}']
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))   # the command sets it for its run; restored after the test
    capfd.readouterr()
    code = main(argv + [*extra, '--output-dir', str(out), '--json'])
    cap = capfd.readouterr()
    assert code == 0, cap.err[-3000:]
    res = json.loads(cap.out)
    cells = {c['row']: c['ours_mean'] for c in res['tables']['4'] if c['column'] == 'mine' and c['metric'] == 'f1_macro'}
    return dict(reused=res['conditions']['reused'], jobs=res['conditions']['jobs'], scores=cells,
                folders=sorted(Path(r).parent.name for r in res['records']), err=cap.err)

def _job(out:Path, row:str) -> Path:
    (f,) = [p for p in (out/'benchmark'/'runs').iterdir() if p.name.startswith(row.replace(' ', '_') + '-mine-r1-')]
    return f

# ================================================================ what a job's key holds

def test_declared_labels_are_in_the_key(mine, tmp_path, capfd, monkeypatch):
    "Declaring another label set re-runs the jobs (they were reused with the old scores) and gives a fresh run's numbers."
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, labels=LABELS2)
    again = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, labels=LABELS3)
    fresh = _reproduce(mine, tmp_path/'b', capfd, monkeypatch, labels=LABELS3)
    assert first['reused'] == 0 and again['reused'] == 0 and again['jobs'] == 2
    assert set(again['folders']).isdisjoint(first['folders'])
    assert again['scores'] == fresh['scores']
    assert _reproduce(mine, tmp_path/'a', capfd, monkeypatch, labels=LABELS3)['reused'] == 2   # the same declaration is reused

def test_model_folder_keyed_by_content(mine, tmp_path, capfd, monkeypatch):
    "Another model saved into the same folder re-runs the encoder's job (it was reused by path) with a fresh run's numbers."
    from stance_nb.test_utils import tiny_bert
    model = tmp_path/'model'; shutil.copytree(mine/'tiny', model)
    opts = dict(rows='BERT_SDL', model=str(model), epochs=2, batch_size=8, max_length=32, lr=3e-3)
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **opts)
    assert _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **opts)['reused'] == 1   # unchanged: reused
    tiny_bert(model, num_labels=2, seed=7)                                           # another model, same folder
    again = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **opts)
    fresh = _reproduce(mine, tmp_path/'b', capfd, monkeypatch, **opts)
    assert again['reused'] == 0 and again['folders'] != first['folders']
    assert again['scores'] == fresh['scores']
    rec = json.loads((tmp_path/'a'/'benchmark'/'runs'/again['folders'][0]/'record.json').read_text())
    assert re.fullmatch(r'sha256:[0-9a-f]{16}', rec['params']['settings']['models']['BERT'])   # its content, never its path

def test_precision_is_in_the_key(mine, tmp_path, capfd, monkeypatch):
    "A job trained in one precision is not reused where `mixed_precision='auto'` resolves to another (bf16 on one CPU, fp32 on the next)."
    import stance_nb.train as train
    opts = dict(rows='BERT_SDL', model=str(mine/'tiny'), epochs=1, batch_size=8, max_length=32)
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **opts)
    here = json.loads((tmp_path/'a'/'benchmark'/'runs'/first['folders'][0]/'record.json').read_text())['params']['precision']
    assert here in ('no', 'bf16')
    other = 'bf16' if here == 'no' else 'no'
    monkeypatch.setattr(train, 'resolve_precision', lambda p, cpu=None: other)   # as on a machine where 'auto' resolves otherwise
    again = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **opts)
    assert again['reused'] == 0 and again['folders'] != first['folders']
    assert json.loads((tmp_path/'a'/'benchmark'/'runs'/again['folders'][0]/'record.json').read_text())['params']['precision'] == other

def test_device_is_in_the_key_where_precision_is_auto(mine, tmp_path, capfd, monkeypatch):
    """An encoder whose recipe resolves its precision by device ('auto') is keyed by the device type too: a job written on a GPU
    machine is not taken for this CPU's (the reason names the device with both values), and each record says where it ran."""
    import stance_nb.experiment.runner as runner
    opts = dict(rows='BERT_SDL', model=str(mine/'tiny'), epochs=1, batch_size=8, max_length=32)
    here = runner.job_device
    monkeypatch.setattr(runner, 'job_device', lambda job, settings: 'cuda')   # as on a machine with a GPU
    gpu = _reproduce(mine, tmp_path/'gpu', capfd, monkeypatch, **opts)
    rec = json.loads((tmp_path/'gpu'/'benchmark'/'runs'/gpu['folders'][0]/'record.json').read_text())
    assert rec['params']['device'] == rec['hardware']['device'] == 'cuda'
    monkeypatch.setattr(runner, 'job_device', here)
    cpu = _reproduce(mine, tmp_path/'cpu', capfd, monkeypatch, extra=['--from', str(tmp_path/'gpu'/'benchmark'/'runs')], **opts)
    assert cpu['reused'] == 0 and cpu['folders'] != gpu['folders']
    assert re.search(r'not taken \(runs here\): BERT_SDL on mine, seed 1: .*BERT_SDL-mine-r1-s1-\w+ differs in device \("cpu" here, "cuda" there\)', cpu['err'])
    rec = json.loads((tmp_path/'cpu'/'benchmark'/'runs'/cpu['folders'][0]/'record.json').read_text())
    assert rec['params']['device'] == rec['hardware']['device'] == 'cpu'

def test_baselines_keyed_by_their_own_settings(mine, tmp_path, capfd, monkeypatch):
    """A baseline's job is keyed by the settings it reads: another encoder or other encoder epochs for the same run re-run
    only the encoder's jobs (a leaderboard of a new encoder reuses the baselines), while a fastText setting re-runs fastText."""
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch)
    other = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, model=str(mine/'tiny'), epochs=1)
    assert other['reused'] == 2 and other['scores'] == first['scores'] and other['folders'] == first['folders']
    assert _reproduce(mine, tmp_path/'a', capfd, monkeypatch, fasttext_preset='xstance')['reused'] == 1   # majority only

def test_encoders_keyed_by_their_own_settings(mine, tmp_path, capfd, monkeypatch):
    """An sdl job is keyed by its model, recipe and attack options only: another MT-DNN tokenizer (read only by the MT-DNN rows'
    checkpoint files), fastText preset or correctness ratio reuses it (a leaderboard takes in a reproduction's encoder jobs),
    while other epochs train it again."""
    kw = dict(rows='BERT_SDL', model=str(mine/'tiny'), epochs=1)
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **kw)
    same = _reproduce(mine, tmp_path/'a', capfd, monkeypatch, **kw, mtdnn_tokenizer=str(mine/'tiny'), fasttext_preset='xstance',
                      correctness='{"spelling": 0.5}')
    assert same['reused'] == same['jobs'] == 1 and same['folders'] == first['folders'] and same['scores'] == first['scores']
    assert _reproduce(mine, tmp_path/'a', capfd, monkeypatch, rows='BERT_SDL', model=str(mine/'tiny'), epochs=2)['reused'] == 0

def test_older_job_store_named(mine, tmp_path, capfd, monkeypatch):
    "Jobs keyed by an earlier version of the job store are not reused; one line names the folder to delete."
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch)
    rec = tmp_path/'a'/'benchmark'/'runs'/first['folders'][0]/'record.json'
    r = json.loads(rec.read_text()); del r['params']['key_version']; rec.write_text(json.dumps(r))   # as version 1 wrote it
    again = _reproduce(mine, tmp_path/'a', capfd, monkeypatch)
    assert again['reused'] == 1
    assert re.search(r'1 job\(s\) keyed by an earlier version of the job store are not reused.*delete those folders \(' +
                     re.escape(first['folders'][0]), again['err'])

# ================================================================ reuse verifies the stored files

def _edit_score(folder:Path, value:float):
    rec = json.loads((folder/'record.json').read_text())
    for s in rec['metrics']['scores']:
        if s['metric'] == 'f1_macro' and s['test'] == 'test': s['value'] = value
    (folder/'record.json').write_text(json.dumps(rec))

def _overwrite(folder:Path, label='FAVOR'):
    f = folder/'predictions.jsonl.gz'; write_job_predictions(f, {kt: [label] * len(v) for kt, v in read_job_predictions(f).items()})

def _cut(folder:Path, keep=10):
    f = folder/'predictions.jsonl.gz'; write_job_predictions(f, {kt: v[:keep] for kt, v in read_job_predictions(f).items()})

def _cut_gzip(folder:Path):
    f = folder/'predictions.jsonl.gz'; f.write_bytes(f.read_bytes()[:-8])

TAMPER = {   # how a finished job's files were changed -> (change, what the warning says)
    'score_edited': (lambda f: _edit_score(f, 0.995), r"record\.json: its f1_macro on mine/test is 0\.995, its predictions score [0-9.]+: the job runs again"),
    'predictions_overwritten': (_overwrite, r"predictions\.jsonl\.gz changed after the job finished \(40 lines, the record says 40; other content\)"),
    'predictions_cut': (_cut, r"predictions\.jsonl\.gz changed after the job finished \(10 lines, the record says 40\)"),
    'gzip_cut': (_cut_gzip, r"predictions\.jsonl\.gz: damaged or cut gzip: .*; the job runs again"),
}

@pytest.mark.parametrize('tamper', list(TAMPER))
def test_reuse_verifies_the_job_files(tamper, mine, tmp_path, capfd, monkeypatch):
    "A finished job whose record or predictions changed is not reused: a warning says why, the job runs again, the table shows its true score."
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch)
    change, warning = TAMPER[tamper]
    change(_job(tmp_path/'a', 'fastText'))
    with pytest.warns(UserWarning, match=warning):
        again = _reproduce(mine, tmp_path/'a', capfd, monkeypatch)
    assert again['reused'] == 1 and again['scores'] == first['scores']   # the majority job reused, fastText run again
    assert _reproduce(mine, tmp_path/'a', capfd, monkeypatch)['reused'] == 2

def test_finished_jobs_taken_from_another_store(mine, tmp_path, capfd, monkeypatch):
    """`--from STORE` (the records committed with a run, or a shared store): its finished jobs with the same parameters and intact
    files are copied in whole and reused, to the same numbers; one whose predictions changed is not taken (it runs again); one
    for the same row and data with other parameters is named with the fields that differ; a store that does not exist is named
    before any job."""
    first = _reproduce(mine, tmp_path/'a', capfd, monkeypatch)
    committed = tmp_path/'committed'; shutil.copytree(tmp_path/'a'/'benchmark'/'runs', committed)
    (committed/_job(tmp_path/'a', 'fastText').name/'.lock.1').write_text('{}')   # a claim left in the source is not copied
    taken = _reproduce(mine, tmp_path/'b', capfd, monkeypatch, extra=['--from', str(committed)])
    assert taken['reused'] == taken['jobs'] == 2 and taken['scores'] == first['scores'] and taken['folders'] == first['folders']
    assert '2 finished job(s) taken into' in taken['err'] and not list((tmp_path/'b'/'benchmark'/'runs').glob('*/.lock.*'))
    assert not list((tmp_path/'b'/'benchmark'/'runs').glob('.*'))   # no temporary copy left behind
    again = _reproduce(mine, tmp_path/'b', capfd, monkeypatch, extra=['--from', str(committed)])   # the same command again: nothing to take
    assert again['reused'] == 2 and (f"0 finished job(s) taken into {tmp_path/'b'/'benchmark'/'runs'} from {committed}; "
                                     "2 of the run's 2 job(s) were there already") in again['err']
    _overwrite(committed/_job(tmp_path/'a', 'fastText').name)
    with pytest.warns(UserWarning, match='changed after the job finished'):
        fresh = _reproduce(mine, tmp_path/'c', capfd, monkeypatch, extra=['--from', str(committed)])
    assert fresh['reused'] == 1 and fresh['scores'] == first['scores']   # majority taken, fastText run again to its true score
    other = _reproduce(mine, tmp_path/'e', capfd, monkeypatch, extra=['--from', str(tmp_path/'a'/'benchmark'/'runs')], fasttext_preset='xstance')
    assert other['reused'] == 1 and re.search(r"not taken \(runs here\): fastText on mine, seed 1: .*fastText-mine-r1-s1-\w+ differs in "
                                              r"options\.preset \(\"xstance\" here, \"benchmark\" there\); settings\.preset \(\"xstance\" here, \"benchmark\" there\)",
                                              other['err'])   # the preset the job runs (its row's) and the run's setting
    capfd.readouterr()
    with pytest.raises(SystemExit) as e:   # a usage error (exit 2), before any job
        main(['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline', '-p', f'data={_data(mine)}',
              '--from', str(tmp_path/'nowhere'), '--output-dir', str(tmp_path/'d')])
    assert e.value.code == 2
    assert f"--from: no job store at {tmp_path/'nowhere'}" in capfd.readouterr().err and not (tmp_path/'d'/'benchmark'/'runs').exists()

def test_one_scorer_convention(mine, tmp_path, capfd):
    "Perfect predictions score 1.0 whichever way they are scored, with a declared label absent from gold and predictions."
    from stance_nb.data import load
    from stance_nb.experiment import DataSpec, get_experiment, score_predictions
    from stance_nb.metrics import score
    df = load('csv', path={'train': mine/'train.csv', 'test': mine/'test.csv'}, labels=LABELS3)
    test = df[df.split == 'test']; test.attrs.update(df.attrs)
    assert test.attrs['labels'] == LABELS3 and set(test.label) == set(LABELS2)
    gold = test.label.tolist()
    exp = get_experiment('benchmark')
    via_store = {s['metric']: s['value'] for s in score_predictions(exp, 'mine', DataSpec.of('mine', 'csv'), test, gold)}
    (tmp_path/'gold.jsonl').write_text(''.join(json.dumps({'label': l}) + '\n' for l in gold))   # the official format
    assert main(['evaluate', '--dataset', 'csv', '--path', f"train={mine/'train.csv'},test={mine/'test.csv'}",
                 '--predictions', str(tmp_path/'gold.jsonl'), '--json']) == 0
    via_cli = json.loads(capfd.readouterr().out)['scores']
    assert via_store['f1_macro'] == via_cli['f1_macro'] == score(None, gold, gold, metric='f1_macro', labels=LABELS3) == 1.0
    from stance_nb.metrics import MACRO_F1_RULE   # the convention, as the tables' conditions state it
    assert 'labels present in the gold labels or the predictions' in MACRO_F1_RULE

# ================================================================ library entry points refuse what the loaders refuse

def test_duplicate_csv_header(tmp_path):
    "Two `text` columns: refused, naming the file and the repeated name (the second was dropped silently)."
    from stance_nb.core import StanceDataError
    from stance_nb.data import load
    p = tmp_path/'dup.csv'; p.write_text('id,target,text,text,label\n1,wind,we support it,more words,FAVOR\n')
    with pytest.raises(StanceDataError, match=r"dup\.csv, field 'text': column 'text' appears twice in the header \(columns 3 and 4\)") as ei: load('csv', path=p)
    assert ei.value.expected

def _frame(change=None):
    from stance_nb.test_utils import synthetic_stance
    df = synthetic_stance(24, seed=0).reset_index(drop=True)
    for (col, row), v in (change or {}).items(): df.loc[row, col] = v
    return df

BAD_ROWS = {   # entry point -> the data it is given -> what the error says
    'train_classifier_none_text': ('train_classifier', {('text', 3): None}, r"row 3, field 'text': null text"),
    'train_classifier_none_label': ('train_classifier', {('label', 5): None}, r"row 5, field 'label': null label"),
    'train_classifier_surrogate': ('train_classifier', {('text', 2): 'bad \ud800 text'}, r"row 2, field 'text': text is not valid Unicode"),
    'fasttext_fit_nan_text': ('fasttext_fit', {('text', 4): float('nan')}, r"row 4, field 'text': null text"),
    'fasttext_fit_surrogate': ('fasttext_fit', {('text', 1): 'bad \udc80'}, r"row 1, field 'text': text is not valid Unicode"),
    'fasttext_grid_surrogate': ('fasttext_grid', {('text', 6): '\ud800'}, r"row 6, field 'text': text is not valid Unicode"),
}

@pytest.mark.parametrize('case', list(BAD_ROWS))
def test_entry_point_refuses_bad_rows(case, tiny_model, tmp_path):
    "A DataFrame passed straight to a training function: one `StanceDataError` naming the row and field (it trained on '' or 'nan')."
    from stance_nb.core import StanceDataError
    from stance_nb.systems.baselines import FastTextClassifier, fasttext_grid
    from stance_nb.train import train_classifier
    from conftest import train_config
    entry, change, want = BAD_ROWS[case]
    df = _frame(change)
    train = df[df.split == 'train'] if entry != 'train_classifier' else df
    call = dict(train_classifier=lambda: train_classifier(df, train_config(tiny_model), name='bad', out_dir=tmp_path/'out'),
                fasttext_fit=lambda: FastTextClassifier(epoch=1, thread=1).fit(df),
                fasttext_grid=lambda: fasttext_grid(df[df.split != 'test'].assign(split='train'), df.assign(split='dev'), lrs=(0.1,), epochs=(1,), n_jobs=1, thread=1))[entry]
    with pytest.raises(StanceDataError, match=want) as ei: call()
    assert ei.value.expected
    assert not (tmp_path/'out').exists() or not any((tmp_path/'out').rglob('record.json'))

@pytest.mark.parametrize('case', ['grid_empty_dev', 'random_empty_train'])
def test_empty_split_refused(case):
    "An empty dev split for the fastText grid, an empty train set for the random baseline: an error naming the split (numpy's/sklearn's before)."
    from stance_nb.systems.baselines import RandomBaseline, fasttext_grid
    df = _frame()
    with pytest.raises(ValueError, match=r'fasttext_grid: no dev rows|RandomBaseline\.fit: no training rows'):
        if case == 'grid_empty_dev': fasttext_grid(df.assign(split='train'), df.iloc[:0], lrs=(0.1,), epochs=(1,), n_jobs=1, thread=1)
        else: RandomBaseline().fit(df.iloc[:0])

def test_trainconfig_type_named():
    "`warmup_ratio='0.1'`: a ValueError naming the field and the type expected (a TypeError from a comparison before)."
    from stance_nb.train import TrainConfig
    with pytest.raises(ValueError, match=r"TrainConfig\.warmup_ratio='0\.1' is invalid \(expected a number"):
        TrainConfig(model='x', warmup_ratio='0.1').validate()

# ================================================================ checkpoints carry their weights' hashes

def test_checkpoint_altered_weights_fall_back(tiny_model, tmp_path):
    "Weights changed on disk after the checkpoint was written (same size, valid file): the older checkpoint is used, with a warning."
    import safetensors.torch as st
    from stance_nb.train import train_classifier
    from conftest import train_config
    from stance_nb.test_utils import synthetic_stance
    cfg = train_config(tiny_model, keep_checkpoints=2, cleanup_checkpoints=False)
    ref = train_classifier(synthetic_stance(24, seed=0), cfg, name='ckpt', out_dir=tmp_path/'ref', save_model=False)
    run = tmp_path/'alt'/'train'/ref.out_dir.name
    shutil.copytree(ref.out_dir, run)
    for f in ('record.json', 'predictions.jsonl', 'history.json'): (run/f).unlink()
    newest, older = sorted(p for p in (run/'checkpoints').glob('step-*') if p.is_dir())[-2:][::-1]
    w = st.load_file(newest/'model.safetensors')
    k = next(k for k in w if k.endswith('classifier.bias'))
    w[k] = w[k] + 5.0; st.save_file(w, newest/'model.safetensors', metadata={'format': 'pt'})
    with pytest.warns(UserWarning, match=rf"resuming from checkpoint {re.escape(str(older))}.*model\.safetensors was altered after the checkpoint was written"):
        r = train_classifier(synthetic_stance(24, seed=0), cfg, name='ckpt', out_dir=tmp_path/'alt', save_model=False)
    assert r.fit.resumed_from < ref.fit.steps and r.predictions == ref.predictions and r.test == ref.test

# ================================================================ cache entries edited after they were written

def _attack_edited(tmp_path, monkeypatch) -> tuple:
    "The spelling attack's cache entry of two texts, its strings reversed (valid JSON, the same count)."
    from stance_nb.attacks import apply_attack
    df = pd.DataFrame(dict(split='test', id=['1', '2'], target='', text=['we support the wind farms', 'nuclear power is dangerous'], label='FAVOR'))
    first = apply_attack(df, 'spelling', seed=0, columns=('text',)).text.tolist()
    f, = (tmp_path/'cache'/'stance_nb'/'attacks').glob('spelling-*.json')
    d = json.loads(f.read_text()); d['out'] = [s[::-1] for s in d['out']]; f.write_text(json.dumps(d))
    return f, lambda: apply_attack(df, 'spelling', seed=0, columns=('text',)).text.tolist(), first, 'attack cache'

def _tokens_edited(tmp_path, monkeypatch) -> tuple:
    "A tokenized entry rewritten as a valid file with every word id [UNK] (the same count of tokens)."
    import numpy as np
    from stance_nb.test_utils import tiny_bert
    from stance_nb.train import batches, token_cache_dir, tokenize_pairs
    tok = tiny_bert(None)[1]
    args = (['we support the wind farms', 'bad'], ['wind farms', 'coal'], 16)
    enc = tokenize_pairs(tok, *args, cache_dir=token_cache_dir())
    f, = token_cache_dir().glob('*.npz')
    z = dict(np.load(f)); ids = z['input_ids_flat']
    z['input_ids_flat'] = np.where(np.isin(ids, tok.all_special_ids), ids, tok.unk_token_id).astype(ids.dtype)
    with open(f, 'wb') as fh: np.savez(fh, **z)
    def again():
        batches._TOKEN_CACHE.clear()   # another process: the disk entry is what it reads
        return [r.tolist() for r in tokenize_pairs(tok, *args, cache_dir=token_cache_dir())['input_ids']]
    return f, again, [r.tolist() for r in enc['input_ids']], 'tokenized data cache'

EDITED = {'attack_reversed': _attack_edited, 'tokens_unk': _tokens_edited}

@pytest.mark.parametrize('case', list(EDITED))
def test_edited_cache_entry_is_detected(case, tmp_path, monkeypatch):
    """An attack-cache entry whose strings were reversed, a tokenized-cache entry rewritten with every word id `[UNK]` (both valid files
    of the same size): each entry keeps a hash of its content, so the edit is named in a warning and the entry computed again and
    replaced (the reversed strings were returned as the attack; the [UNK] ids took a run's test macro-F1 from 0.52 to 0.17, exit 0)."""
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path/'cache'))
    f, again, first, what = EDITED[case](tmp_path, monkeypatch)
    with pytest.warns(UserWarning, match=rf"{what} {re.escape(str(f))} is damaged .*not the ones it was written with"): got = again()
    assert got == first
    with warnings.catch_warnings():
        warnings.simplefilter('error')   # replaced by the entry as computed: read back without a word
        assert again() == first
