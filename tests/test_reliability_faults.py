"""Faults that used to give a silent wrong result or a raw error: user files (csv/jsonl loaders), metrics on user labels,
fastText inputs and model files, trainer settings, damaged checkpoints, lock takeover races, SIGTERM during a fastText
grid, and CLI seeds. Each either works correctly or stops with one clear error."""
import json, multiprocessing, os, re, shutil, signal, subprocess, sys, textwrap, threading, time, warnings
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

# ================================================================ loaders: load('csv'|'jsonl', ...)

COLS = ('id', 'split', 'target', 'text', 'label')
GOOD = [('r1', 'train', 'wind', 'we support it', 'FAVOR'), ('r2', 'train', 'wind', 'we oppose it', 'AGAINST'),
        ('r3', 'test', 'sun', 'fine by me', 'FAVOR')]

def _rows(row=None, **change):
    "The good rows with fields of data row `row` (1-based) changed."
    out = [dict(zip(COLS, r)) for r in GOOD]
    if row is not None: out[row-1].update(change)
    return out

def _csv(rows): return ','.join(COLS) + '\n' + ''.join(','.join(str(r[c]) for c in COLS if c in r) + '\n' for r in rows)
def _jsonl(rows): return ''.join(json.dumps(r) + '\n' for r in rows)

def _without(row, field):
    rows = _rows(); del rows[row-1][field]; return rows

def _folder(d, fmt): (d/'data').mkdir(); return d/'data'
def _loop(d, fmt): (d/'loop').symlink_to(d/'loop'); return d/'loop'

# fault -> {format: (file content or a function (dir, fmt) -> path, load options, what the message must say)}
LOADER_FAULTS = {
    'unquoted_separator': {'csv': (_csv(_rows(1, text='I agree, totally')), {}, 'row 1: 6 fields where the header has 5')},
    'missing_field': {'csv': (_csv(_without(2, 'label')), {}, 'row 2: 4 fields where the header has 5'),
                      'jsonl': (_jsonl(_without(2, 'label')), {}, "row 2, field 'label': missing field")},
    'empty_label': {f: (w(_rows(2, label='')), {}, "row 2, field 'label': missing label") for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'nan_label': {f: (w(_rows(2, label='NaN')), {}, "row 2, field 'label': missing label 'NaN'") for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'na_label': {f: (w(_rows(2, label='N/A')), {}, "row 2, field 'label': missing label 'N/A'") for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'null_label': {'jsonl': (_jsonl(_rows(2, label=None)), {}, "row 2, field 'label': null label")},
    'header_only': {'csv': (_csv([]), {}, 'no data rows'), 'jsonl': ('', {}, 'no data rows')},
    'case_variants': {f: (w(_rows(3, label='favor')), {}, "row 3, field 'label': labels that differ only in case: [['FAVOR', 'favor']]")
                      for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'unmapped_label': {f: (w(_rows()), dict(label_map={'FAVOR': 'pro'}), "label 'AGAINST' is not in label_map")
                       for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'duplicate_id': {f: (w(_rows(2, id='r1')), {}, "row 2, field 'id': duplicate id 'r1' (rows 1 and 2)") for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'split_overlap': {f: (w(_rows(3, target='wind', text='we support it')), {}, 'row 3, field \'text\': the same target and text as train row 1')
                      for f, w in (('csv', _csv), ('jsonl', _jsonl))},
    'null_target': {'jsonl': (_jsonl(_rows(2, target=None)), {}, "row 2, field 'target': null target")},
    'null_id': {'jsonl': (_jsonl(_rows(2, id=None)), {}, "row 2, field 'id': null id")},
    'lone_surrogate': {'jsonl': (_jsonl(_rows(2, text='bad \ud800 text')), {}, "row 2, field 'text': invalid Unicode: lone surrogate")},
    'folder_as_file': {f: (_folder, {}, 'a folder, not a file') for f in ('csv', 'jsonl')},
    'symlink_loop': {f: (_loop, {}, 'cannot resolve the path') for f in ('csv', 'jsonl')},
}
LOADER_CASES = [(k, f) for k, v in LOADER_FAULTS.items() for f in v]

@pytest.mark.parametrize('fault,fmt', LOADER_CASES, ids=[f'{f}-{k}' for k, f in LOADER_CASES])
def test_loader_fault(fault, fmt, tmp_path):
    "One `StanceDataError` naming the file, the row/field where there is one, and what was expected."
    from stance_nb.core import StanceDataError
    from stance_nb.data import load
    content, options, want = LOADER_FAULTS[fault][fmt]
    if callable(content): path = content(tmp_path, fmt)
    else: path = tmp_path/f'data.{fmt}'; path.write_text(content, encoding='utf-8', errors='surrogatepass')
    with pytest.raises(StanceDataError) as ei: load(fmt, path=path, **options)
    msg = str(ei.value)
    assert want in msg, msg
    assert path.name in msg and ei.value.expected and f'(expected {ei.value.expected})' in msg, msg

@pytest.mark.parametrize('fmt', ['csv', 'jsonl'])
def test_labels_stripped_and_mapped(fmt, tmp_path):
    "Labels lose surrounding spaces; label_map renames them at load time."
    from stance_nb.data import load
    w = {'csv': _csv, 'jsonl': _jsonl}[fmt]
    (tmp_path/f'a.{fmt}').write_text(w(_rows(3, label='FAVOR ')), encoding='utf-8')
    df = load(fmt, path=tmp_path/f'a.{fmt}')
    assert df.label.tolist() == ['FAVOR', 'AGAINST', 'FAVOR'] and df.attrs['labels'] == ['AGAINST', 'FAVOR']
    (tmp_path/f'b.{fmt}').write_text(w([dict(r, label=str(i % 2)) for i, r in enumerate(_rows())]), encoding='utf-8')
    df = load(fmt, path=tmp_path/f'b.{fmt}', label_map={'0': 'AGAINST', '1': 'FAVOR'})
    assert df.label.tolist() == ['AGAINST', 'FAVOR', 'AGAINST'] and df.attrs['labels'] == ['AGAINST', 'FAVOR']

def test_jsonl_ids_as_written(tmp_path):
    "An integer id stays '7' (not '7.0' or NaN because another row has a string id)."
    from stance_nb.data import load
    (tmp_path/'a.jsonl').write_text(_jsonl([dict(r, id=7 + i) if i < 2 else r for i, r in enumerate(_rows())]), encoding='utf-8')
    assert load('jsonl', path=tmp_path/'a.jsonl').id.tolist() == ['7', '8', 'r3']

@pytest.mark.parametrize('fmt', ['csv', 'jsonl'])
def test_column_matched_up_to_case_warns(fmt, tmp_path):
    "`Target` for `target` is taken, with a warning naming the column taken (it used to load as single-segment)."
    from stance_nb.data import load
    rows = [{('Target' if k == 'target' else k): v for k, v in r.items()} for r in _rows()]
    text = (','.join(rows[0]) + '\n' + ''.join(','.join(r.values()) + '\n' for r in rows)) if fmt == 'csv' else _jsonl(rows)
    (tmp_path/f'a.{fmt}').write_text(text, encoding='utf-8')
    with pytest.warns(UserWarning, match="taking column 'Target'"): df = load(fmt, path=tmp_path/f'a.{fmt}')
    assert df.attrs['pair'] and df.target.tolist() == ['wind', 'wind', 'sun']

@pytest.mark.parametrize('fmt', ['csv', 'jsonl'])
def test_other_columns_keep_their_types(fmt, tmp_path):
    from stance_nb.data import load
    rows = [dict(r, score=i + 0.5, votes=i) for i, r in enumerate(_rows())]
    text = (','.join(rows[0]) + '\n' + ''.join(','.join(map(str, r.values())) + '\n' for r in rows)) if fmt == 'csv' else _jsonl(rows)
    (tmp_path/f'a.{fmt}').write_text(text, encoding='utf-8')
    df = load(fmt, path=tmp_path/f'a.{fmt}')
    assert (str(df.score.dtype), str(df.votes.dtype)) == ('float64', 'int64') and df.votes.tolist() == [0, 1, 2]

# ================================================================ metrics on user labels

def test_score_dataset_without_label_list():
    "score('csv', ...) averages over the labels of gold and predictions (it raised TypeError)."
    from stance_nb.metrics import score, f1_macro
    gold, pred = ['0', '1', '1', '2'], ['0', '1', '2', '2']
    assert score('csv', gold, pred) == pytest.approx(f1_macro(gold, pred)) == pytest.approx((1 + 2/3 + 2/3)/3)

def test_semeval2016_f1_refuses_other_labels():
    "Labels other than FAVOR/AGAINST/NONE are an error naming them (it returned 0.0)."
    from stance_nb.core import StanceDataError
    from stance_nb.metrics import semeval2016_f1
    with pytest.raises(StanceDataError, match=r"gold labels \['0', '1', '2'\] are not SemEval-2016 stances.*expected the labels FAVOR, AGAINST and NONE"):
        semeval2016_f1(['0', '1', '2'], ['0', '1', '1'])

@pytest.mark.parametrize('name', ['../../escape', '/tmp/escape', 'a/b', '..'])
def test_outputs_dir_stays_inside(name, tmp_path):
    "A run name that would leave the outputs folder is refused, naming the parameter; nothing is created."
    from stance_nb.core import outputs_dir, check_name
    with pytest.raises(ValueError, match='run_name=.* must be one folder or file name inside the outputs folder'): check_name('run_name', name)
    with pytest.raises(ValueError, match='outputs_dir part'): outputs_dir(tmp_path/'out', 'benchmark', name)
    assert not (tmp_path/'out').exists() and not (tmp_path.parent/'escape').exists()

# ================================================================ fastText

def _syn():
    from stance_nb.test_utils import synthetic_stance
    syn = synthetic_stance(60, seed=1)
    return syn[syn.split == 'train'], syn[syn.split == 'test']

def test_fasttext_label_word_in_text():
    "A text word `__label__NONE` (tokenize=False) no longer teaches a phantom class."
    from stance_nb.systems.baselines import FastTextClassifier
    trn, tst = _syn()
    ft = FastTextClassifier(lr=0.5, epoch=5, dim=10, tokenize=False).fit(trn.assign(text=trn.text + ' __label__NONE'))
    assert sorted(ft.model_.get_labels()) == ['__label__AGAINST', '__label__FAVOR']
    assert ft.predict_proba(tst).sum(axis=1).round(3).eq(1).all()

@pytest.mark.parametrize('field,value', [('lr', 0), ('lr', -0.1), ('lr', float('inf')), ('epoch', 0), ('epoch', -1), ('dim', 0)])
def test_fasttext_invalid_setting(field, value):
    "Settings that give constant predictions fail before training, naming the field."
    from stance_nb.systems.baselines import FastTextClassifier, fasttext_grid
    with pytest.raises(ValueError, match=rf'FastTextClassifier\.{field}={re.escape(repr(value))} is invalid'): FastTextClassifier(**{field: value})
    if field in ('lr', 'epoch'):
        trn, tst = _syn()
        kw = dict(lrs=(value,), epochs=(1,)) if field == 'lr' else dict(lrs=(0.1,), epochs=(value,))
        with pytest.raises(ValueError, match=rf'FastTextClassifier\.{field}='): fasttext_grid(trn, tst, dim=10, **kw)

def test_fasttext_truncated_model_file(tmp_path):
    "A truncated .bin is refused on load (it loaded and predicted wrongly)."
    from stance_nb.core import StanceDataError
    from stance_nb.systems.baselines import FastTextClassifier
    trn, tst = _syn()
    p = FastTextClassifier(lr=0.5, epoch=5, dim=10).fit(trn).save(tmp_path/'m.bin')
    assert FastTextClassifier.load(p).predict(tst)
    p.write_bytes(p.read_bytes()[:len(p.read_bytes())//2])
    with pytest.raises(StanceDataError, match=r'm\.bin: damaged model file.*expected the file written by save'): FastTextClassifier.load(p)

_GRID_CHILD = textwrap.dedent('''
    import sys
    from stance_nb.systems.baselines import fasttext_grid
    from stance_nb.test_utils import synthetic_stance
    syn = synthetic_stance(400, seed=1)
    fasttext_grid(syn[syn.split == 'train'], syn[syn.split == 'dev'], lrs=(0.1, 0.2), epochs=(3000,), dim=50, n_jobs=2)
''')

def test_sigterm_during_fasttext_grid_cleans_up(tmp_path):
    "SIGTERM while grid cells train in subprocesses: the process ends, and no temporary folder or model file remains."
    tmp = tmp_path/'tmp'; tmp.mkdir()
    env = {**os.environ, 'TMPDIR': str(tmp), 'STANCE_NB_QUIET': '1', 'OMP_NUM_THREADS': '1'}
    p = subprocess.Popen([sys.executable, '-c', _GRID_CHILD], env=env, cwd=str(tmp_path), stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not list(tmp.glob('*/train.txt')):            # the grid's folder exists and its cells are starting
        assert p.poll() is None, p.stderr.read()[-2000:]
        assert time.time() - t0 < 60
        time.sleep(0.05)
    time.sleep(1.0)                                      # cells are training now
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert p.returncode != 0
    assert list(tmp.iterdir()) == [], sorted(str(q) for q in tmp.rglob('*'))

# ================================================================ trainer settings

from conftest import train_config as _cfg   # the `tiny_model` fixture comes from conftest too

def _data(n=16):
    from stance_nb.test_utils import synthetic_stance
    return synthetic_stance(n, seed=0)

TRAIN_FAULTS = {
    'one_label': (lambda m: (_data().assign(label='FAVOR'), _cfg(m)), 'StanceDataError', "one label ['FAVOR']: a one-label head trains as a regression"),
    'max_length_beyond_positions': (lambda m: (_data(), _cfg(m, max_length=1000)), 'ValueError', 'TrainConfig.max_length=1000 exceeds the 128 positions'),
    'missing_model': (lambda m: (_data(), _cfg(m.parent/'no_such_model')), 'ValueError', 'no_such_model'),
}

@pytest.mark.parametrize('fault', list(TRAIN_FAULTS))
def test_train_fault(fault, tiny_model, tmp_path):
    "Refused before the run folder is created (a one-label head trained as regression; the others left an empty folder)."
    from stance_nb.train import train_classifier
    make, etype, want = TRAIN_FAULTS[fault]
    df, cfg = make(tiny_model)
    with pytest.raises(Exception) as ei: train_classifier(df, cfg, name='fault', out_dir=tmp_path/'out')
    assert type(ei.value).__name__ == etype and want in str(ei.value), repr(ei.value)
    assert not (tmp_path/'out'/'train').exists() or not list((tmp_path/'out'/'train').iterdir())

# ================================================================ damaged checkpoints

def _train(model, out, **kw):
    from stance_nb.train import train_classifier
    cfg = _cfg(model, keep_checkpoints=2, cleanup_checkpoints=False, **kw)
    return train_classifier(_data(), cfg, name='ckpt', out_dir=out, save_model=False)

@pytest.fixture(scope='module')
def finished_run(tiny_model, tmp_path_factory):
    "A finished run that kept its last two checkpoints (end of epoch 1 and 2)."
    out = tmp_path_factory.mktemp('ckpt')
    return _train(tiny_model, out), out

def _copy_run(finished_run, tmp_path) -> Path:
    ref, out = finished_run
    run = tmp_path/'train'/ref.out_dir.name
    shutil.copytree(ref.out_dir, run)
    for f in ('record.json', 'predictions.jsonl', 'history.json'): (run/f).unlink()
    return run/'checkpoints'

def _dirs(ckpt): return sorted(p for p in ckpt.glob('step-*') if p.is_dir())

def test_checkpoint_damaged_pointer(finished_run, tiny_model, tmp_path):
    "A truncated latest.json: the run resumes from the newest checkpoint folder, warning which file was damaged."
    ckpt = _copy_run(finished_run, tmp_path)
    (ckpt/'latest.json').write_text((ckpt/'latest.json').read_text()[:40])
    with pytest.warns(UserWarning, match=rf'{re.escape(str(ckpt/"latest.json"))} is damaged'): r = _train(tiny_model, tmp_path)
    assert r.predictions == finished_run[0].predictions and r.fit.resumed_from == finished_run[0].fit.steps

def test_checkpoint_damaged_weights_falls_back(finished_run, tiny_model, tmp_path):
    "A truncated model.safetensors in the newest checkpoint: the older one is used, and the run ends as an uninterrupted one."
    ckpt = _copy_run(finished_run, tmp_path)
    newest, older = _dirs(ckpt)[-1], _dirs(ckpt)[-2]
    f = newest/'model.safetensors'; f.write_bytes(f.read_bytes()[:100])
    with pytest.warns(UserWarning, match=rf'resuming from checkpoint {re.escape(str(older))}.*{re.escape(str(f))} is damaged'):
        r = _train(tiny_model, tmp_path)
    ref = finished_run[0]
    assert r.fit.resumed_from < ref.fit.steps and r.predictions == ref.predictions and r.test == ref.test
    assert [h['train_loss'] for h in r.history] == pytest.approx([h['train_loss'] for h in ref.history], abs=1e-6)

@pytest.mark.parametrize('damage', ['missing', 'unreadable'])
def test_checkpoint_without_rng_states(damage, finished_run, tiny_model, tmp_path):
    "No resume without the RNG states (it resumed with other losses and predictions, silently)."
    ckpt = _copy_run(finished_run, tmp_path)
    for d in _dirs(ckpt):
        f = d/'random_states_0.pkl'
        if damage == 'missing': f.unlink()
        else: f.write_bytes(b'not a pickle')
    with pytest.raises(RuntimeError, match=r'(?s)no intact checkpoint to resume from in .*random_states_0\.pkl (is missing|cannot be read).*Delete that folder'):
        _train(tiny_model, tmp_path)

def test_checkpoint_disk_full(tiny_model, tmp_path, monkeypatch):
    "A full disk while checkpointing: an error that says disk space and names the folder; no .tmp-step-* folder left."
    import accelerate
    def full(self, output_dir, **kw):
        Path(output_dir).mkdir(parents=True, exist_ok=True); (Path(output_dir)/'model.safetensors').write_bytes(b'x' * 10)
        raise RuntimeError('[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0')
    monkeypatch.setattr(accelerate.Accelerator, 'save_state', full)
    with pytest.raises(OSError, match=r'could not write checkpoint step-\d+-epoch-1 in .*checkpoints.*Check the disk space there') as ei:
        _train(tiny_model, tmp_path, epochs=1)
    run = next((tmp_path/'train').iterdir())
    assert str(run/'checkpoints') in str(ei.value)
    assert not [p for p in run.rglob('*') if p.name.startswith('.tmp-')] and not list(run.glob('.lock*'))

# ================================================================ lock takeover by several processes at once

def _claim(folder, barrier, results):
    from stance_nb.claims import RunLock
    barrier.wait()
    try: lock = RunLock(folder).acquire()
    except RuntimeError: results.put(0); return
    results.put(1); time.sleep(0.3); lock.release()

def test_run_lock_takeover_is_atomic(tmp_path):
    "Four processes restarting at once over a dead run's claim: exactly one holds it, in every trial."
    import socket
    ctx = multiprocessing.get_context('fork')
    dead = subprocess.Popen(['true']); dead.wait()
    holders = []
    for trial in range(30):
        folder = tmp_path/f'run{trial}'; folder.mkdir()
        (folder/'.lock.3').write_text(json.dumps(dict(pid=dead.pid, host=socket.gethostname())))   # left by a killed run
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_claim, args=(folder, barrier, results)) for _ in range(4)]
        for p in procs: p.start()
        for p in procs: p.join(30)
        holders.append(sum(results.get(timeout=5) for _ in procs))
    assert holders == [1]*len(holders), f'trials with several holders: {[h for h in holders if h != 1]}'

class _Interrupted(threading.Thread):
    "A heartbeat thread that a Ctrl-C interrupts as it starts and as it is joined."
    def start(self): raise KeyboardInterrupt
    def join(self, timeout=None): raise KeyboardInterrupt

@pytest.mark.parametrize('when', ['giving_up', 'taking'])
def test_interrupted_claim_leaves_no_lock(when, tmp_path, monkeypatch):
    """Ctrl-C while a job's claim is given up (its record written, the heartbeat stopping) or taken (written, before its heartbeat):
    the claim file goes with the interrupt (after Ctrl-C to `--workers 2`, a `.lock.1` stayed in a finished job's folder)."""
    from stance_nb import claims
    lock = claims.RunLock(tmp_path).acquire()
    if when == 'giving_up':
        beat, lock._beat = lock._beat, _Interrupted()
        with pytest.raises(KeyboardInterrupt): lock.release()
        beat.join(5)
    else:
        lock.release()
        monkeypatch.setattr(claims.threading, 'Thread', _Interrupted)
        with pytest.raises(KeyboardInterrupt): claims.RunLock(tmp_path).acquire()
    assert sorted(p.name for p in tmp_path.iterdir()) == []

# ================================================================ CLI

def test_cli_repeated_seeds(capsys):
    "`--seeds 1,1` would count one run twice in the mean ± std: refused by the parser."
    from stance_nb.cli import make_parser
    with pytest.raises(SystemExit) as ei: make_parser().parse_args(['train', '--dataset', 'ibmcs', '--preset', 'smoke', '--seeds', '1,1'])
    assert ei.value.code == 2 and "values must be distinct, got '1,1'" in capsys.readouterr().err

# ================================================================ the README's reliability table

def _collected() -> dict:
    "Collected cases of the fault suite per test function, from `pytest --collect-only`."
    import collections
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT/'tests').glob('test_reliability_*.py'))
    r = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider', *files],
                       capture_output=True, text=True, cwd=str(ROOT))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return collections.Counter(l.split('::')[1].split('[')[0] for l in r.stdout.splitlines() if '::' in l)

def _readme_table(text:str) -> tuple[list, re.Match]:
    "(rows as (test names, cases cell), the totals sentence) of the README's Reliability section."
    sec = text[text.index('## Reliability'):]
    sec = sec[:sec.index('\n## ', 1)]
    rows = [[c.strip() for c in l.strip().strip('|').split('|')] for l in sec.splitlines() if l.startswith('| ')][1:]
    return [(re.findall(r'`(test_\w+)`', r[1]), r[2]) for r in rows], re.search(r'\*\*(\d+) cases\*\* over \*\*(\d+) kinds of fault\*\*', sec)

def readme_counts(text:str, counts:dict) -> str:
    "The README text with its Cases column and totals recomputed from `counts` (`python tests/test_reliability_faults.py`)."
    rows, total = _readme_table(text)
    sec0 = text.index('## Reliability'); sec1 = text.index('\n## ', sec0 + 1)
    lines, i = text[sec0:sec1].splitlines(), 0
    for j, l in enumerate(lines):
        if l.startswith('| ') and not l.startswith('| What is tested'):
            cells = l.split(' | ')
            names = rows[i][0]; i += 1
            cells[2] = str(sum(counts[n] for n in names)) if names else '–'
            lines[j] = ' | '.join(cells)
    sec = '\n'.join(lines)
    n = sum(counts[x] for r, _ in rows for x in r)
    sec = re.sub(r'\*\*\d+ cases\*\* over \*\*\d+ kinds of fault\*\*', f'**{n} cases** over **{len(rows)} kinds of fault**', sec)
    return text[:sec0] + sec + text[sec1:]

def test_readme_counts_match_the_suite():
    "Every test of the suite is in one row of the README's table, whose Cases column and totals are what pytest collects."
    text = (ROOT/'README.md').read_text(encoding='utf-8')
    counts = _collected()
    rows, total = _readme_table(text)
    named = [n for r, _ in rows for n in r]
    assert sorted(set(counts) - set(named)) == [], 'tests missing from the README table'
    assert sorted(set(named) - set(counts)) == [] and len(named) == len(set(named)), 'unknown or repeated test names in the README table'
    assert total is not None, 'the totals sentence is missing'
    assert readme_counts(text, counts) == text, 'README counts are stale: run `python tests/test_reliability_faults.py`'

if __name__ == '__main__':
    readme = ROOT/'README.md'
    readme.write_text(readme_counts(readme.read_text(encoding='utf-8'), _collected()), encoding='utf-8')
