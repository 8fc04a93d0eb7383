"""What a user sees when something is wrong: every error of the `stance_nb` command is one line (`stance_nb …: error: …`)
with exit status 2 for a wrong name, option or value and 1 for data or a run that cannot go on, and no traceback unless
`--debug` asks for it; library faults that used to be raw (a full disk, a damaged run folder) name the file or folder;
a papermill run stopped during a fastText grid leaves no temporary folder."""
import json, os, re, signal, subprocess, sys, textwrap, time
from pathlib import Path
import pandas as pd
import pytest

from stance_nb.cli import main
from conftest import write_splits, run_cli

ROOT = Path(__file__).resolve().parents[1]
LABELS = ['AGAINST', 'FAVOR', 'NONE']

@pytest.fixture(scope='module')
def own(tmp_path_factory):
    "train.csv/test.csv (Sentence, Topic, Stance), the options that read them, and a `train` run folder of a tiny BERT."
    from stance_nb.test_utils import tiny_bert
    d = tmp_path_factory.mktemp('own')
    write_splits(d, 30, LABELS, rename=dict(text='Sentence', target='Topic', label='Stance'))
    opts = ['--dataset', 'csv', '--path', f"train={d/'train.csv'},test={d/'test.csv'}", '--columns', 'text=Sentence,target=Topic,label=Stance']
    tiny_bert(d/'tiny', num_labels=3, seed=0)
    code, out, err = _cli(['train', *opts, '--dev-fraction', '0.2', '--preset', 'smoke', '--model', str(d/'tiny'), '--epochs', '1',
                           '--seeds', '1', '--output-dir', str(d/'out'), '--json'])
    assert code == 0, err[-3000:]
    return d, opts, Path(json.loads(out)['records'][0]).parent

_cli = run_cli   # exit status, stdout and stderr of `stance_nb argv` run in this process

def _one_line(err:str) -> str:
    "The error line of stderr, which must be the only line that says error, with no traceback."
    assert 'Traceback' not in err, err[-3000:]
    lines = [l for l in err.splitlines() if 'error:' in l]
    assert len(lines) == 1 and lines[0].startswith('stance_nb') and not err.strip().startswith('usage:'), err[-3000:]
    return lines[0]

def _write(path:Path, text:str) -> Path: path.write_text(text, encoding='utf-8'); return path

CASES = {   # name -> (argv from (data folder, data options, run folder, tmp_path), exit status, what the line says)
    'predict_header_only_csv': (lambda d, o, r, t: ['predict', '--run', str(r), '--input', str(_write(t/'h.csv', 'Topic,Sentence\n')),
                                                    '--columns', 'text=Sentence,target=Topic', '--output', str(t/'p')], 1, r'h\.csv: no rows to label \(expected a header and at least one row\)'),
    'predict_batch_size_0': (lambda d, o, r, t: ['predict', '--run', str(r), '--input', str(d/'test.csv'), '--output', str(t/'p'),
                                                 '--batch-size', '0'], 2, r"--batch-size: expected a whole number >= 1, got '0'"),
    'predict_batch_size_negative': (lambda d, o, r, t: ['predict', '--run', str(r), '--input', str(d/'test.csv'), '--output', str(t/'p'),
                                                        '--batch-size', '-4'], 2, r"--batch-size: expected a whole number >= 1, got '-4'"),
    'predict_head_not_mdl': (lambda d, o, r, t: ['predict', '--run', str(r), '--input', str(d/'test.csv'), '--columns', 'text=Sentence,target=Topic',
                                                 '--output', str(t/'p'), '--head', 'arc'], 2, r'--head chooses one head of an MDL run.*is one transformer model'),
    'predict_empty_text': (lambda d, o, r, t: ['predict', '--run', str(r), '--input', str(_write(t/'e.csv', 'Topic,Sentence\nwind,\nsun,fine\n')),
                                               '--columns', 'text=Sentence,target=Topic', '--output', str(t/'p')], 1, r"e\.csv, row 1, field 'Sentence': empty text"),
    'evaluate_max_train_0': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(t/'x.jsonl'), '--max-train', '0'], 2,
                             r"--max-train: expected a whole number >= 1, got '0'"),
    'evaluate_max_train_negative': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(t/'x.jsonl'), '--max-train', '-5'], 2,
                                    r"--max-train: expected a whole number >= 1, got '-5'"),
    'evaluate_dev_fraction_above_1': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(t/'x.jsonl'), '--dev-fraction', '1.5'], 2,
                                      r"--dev-fraction: expected a fraction between 0 and 1 \(exclusive\), got '1\.5'"),
    'train_max_length_2': (lambda d, o, r, t: ['train', *o, '--dev-fraction', '0.2', '--preset', 'smoke', '--model', str(d/'tiny'),
                                               '--max-length', '2', '--output-dir', str(t/'out')], 2, r'TrainConfig\.max_length=2 is invalid \(expected an int >= 8'),
    'train_max_train_0': (lambda d, o, r, t: ['train', *o, '--dev-fraction', '0.2', '--preset', 'smoke', '--model', str(d/'tiny'),
                                              '--max-train', '0', '--output-dir', str(t/'out')], 2, r"--max-train: expected a whole number >= 1"),
    'attack_paraphrase_offline': (lambda d, o, r, t: ['attack', *o, '--attack', 'paraphrase', '--output', str(t/'a.csv')], 1,
                                  r"Helsinki-NLP/opus-mt-en-de.*--translation-models"),
    'reproduce_data_dir_missing': (lambda d, o, r, t: ['reproduce', 'benchmark', '--plan', '--data-dir', str(t/'no-such-folder')], 2,
                                   r"--data-dir .*no-such-folder: no such folder"),
    'download_data_dir_is_a_file': (lambda d, o, r, t: ['download', 'semeval2016t6', '--data-dir', str(_write(t/'afile', 'x'))], 2,
                                    r'--data-dir .*afile.* is a file'),
    'reproduce_missing_model': (lambda d, o, r, t: ['reproduce', 'benchmark', '-p', 'rows=BERT_SDL', '-p', f"model={t/'no_such_model'}",
                                                    '--output-dir', str(t/'out')], 2, r"parameter model='.*no_such_model'.*expected an existing path"),
    'reproduce_unknown_data_option': (lambda d, o, r, t: ['reproduce', 'benchmark', '-p', 'data=' + json.dumps(
        {'mine': {'dataset': 'csv', 'path': str(d/'train.csv'), 'devfraction': 0.2}}), '--output-dir', str(t/'out')], 2,
        r"data\['mine'\]: unknown option\(s\) \['devfraction'\]"),
    'reproduce_max_train_negative': (lambda d, o, r, t: ['reproduce', 'benchmark', '-p', 'data=' + json.dumps(
        {'mine': {'dataset': 'csv', 'path': str(d/'train.csv'), 'max_train': -3}}), '--output-dir', str(t/'out')], 2,
        r"data\['mine'\]: max_train=-3"),
    'reproduce_dev_fraction_0': (lambda d, o, r, t: ['reproduce', 'benchmark', '-p', 'data=' + json.dumps(
        {'mine': {'dataset': 'csv', 'path': str(d/'train.csv'), 'dev_fraction': 0}}), '--output-dir', str(t/'out')], 2,
        r"data\['mine'\]: dev_fraction=0"),
    'reproduce_unknown_executor': (lambda d, o, r, t: ['reproduce', 'benchmark', '--executor', 'slurm', '--output-dir', str(t/'out')], 2,
                                   r"--executor: invalid choice: 'slurm'"),
    'reproduce_slurm_option_without_submitit': (lambda d, o, r, t: ['reproduce', 'benchmark', '--partition', 'gpu', '--output-dir', str(t/'out')], 2,
                                                r"Slurm parameters \['slurm_partition'\] need executor 'submitit'"),
    'reproduce_wait_and_detach': (lambda d, o, r, t: ['reproduce', 'benchmark', '--workers', '2', '--wait', '--detach', '--output-dir', str(t/'out')], 2,
                                  r"--wait waits for workers submitted earlier; --detach submits and returns: choose one"),
    'reproduce_bad_throughput': (lambda d, o, r, t: ['reproduce', 'benchmark', '--plan', '--throughput', '{"bert": 5}', '--output-dir', str(t/'out')], 2,
                                 r'--throughput: expected \{"model": \{"train": examples/s'),
    'reproduce_submitit_without_slurm': (lambda d, o, r, t: ['reproduce', 'benchmark', '--executor', 'submitit', '-p', 'tables=4', '-p', 'rows=Majority baseline',
        '-p', 'data=' + json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')},
                                             'columns': {'text': 'Sentence', 'target': 'Topic', 'label': 'Stance'}, 'dev_fraction': 0.2}}),
        '--output-dir', str(t/'out')], 1, r"executor 'submitit' submits to Slurm, which this machine lacks .*use 'submitit-local' here"),
    'reproduce_outputs_under_a_file': (lambda d, o, r, t: ['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline', '-p', 'data=' +
        json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')},
                             'columns': {'text': 'Sentence', 'target': 'Topic', 'label': 'Stance'}, 'dev_fraction': 0.2}}),
        '--output-dir', str(_write(t/'afile', 'x')/'out')], 1, r'afile'),
    'evaluate_id_column_missing': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(_preds(d, t/'pred.csv')), '--id-column', 'ID'], 1,
                                   r"pred\.csv, field 'ID': missing column\(s\) \['ID'\]; found \['label'\]"),
    'evaluate_id_field_missing_jsonl': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(_preds(d, t/'pred.jsonl')), '--id-column', 'ID'], 1,
                                        r"pred\.jsonl, field 'ID': no field 'ID' \(--id-column\) on any line; its fields: \['label'\]"),
    'evaluate_list_label': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(_preds(d, t/'pred.jsonl', label=lambda l: [l]))], 1,
                            r"pred\.jsonl, row 1, field 'label': a JSON list as the label: \[\"\w+\"\] \(expected one label per line"),
    'evaluate_null_label': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(_preds(d, t/'pred.jsonl', label=lambda l: None))], 1,
                            r"pred\.jsonl, row 1, field 'label': a JSON null as the label"),
    'evaluate_unknown_label_at_its_line': (lambda d, o, r, t: ['evaluate', *o, '--predictions', str(_preds(d, t/'pred.jsonl', ids=True, bad=3))], 1,
                                           r"pred\.jsonl, row 4, field 'label': unknown label 'FAVR' \(expected one of"),
    'leaderboard_data_not_an_object': (lambda d, o, r, t: ['leaderboard', '--models', 'majority', '--data', '[1,2]', '--output-dir', str(t/'out')], 2,
                                       r"--data: expected a JSON object \(your own datasets.*\), got a list: \[1,2\]"),
    'reproduce_data_not_an_object': (lambda d, o, r, t: ['reproduce', 'benchmark', '-p', 'data=[1,2]', '--output-dir', str(t/'out')], 2,
                                     r'parameter data=\[1, 2\]: expected a JSON object'),
    'leaderboard_model_repeated': (lambda d, o, r, t: ['leaderboard', '--models', 'majority,sdl', '--model', f"{d/'tiny'},{d/'tiny'}", '--plan',
                                                       '--data', json.dumps({'mine': {'dataset': 'csv', 'path': str(d/'train.csv')}}),
                                                       '--output-dir', str(t/'out')], 2, r'parameter model=.*: values must be distinct'),
}

def _preds(d:Path, path:Path, label=lambda l: l, ids:bool=False, bad:int|None=None) -> Path:
    """Predictions of the gold test labels (`own`'s test.csv) at `path` (.csv or .jsonl): each label through `label`; with `ids`, the
    rows' ids in reverse test order after a blank line; the `bad`-th prediction (1-based, in the file) an unknown label."""
    gold = pd.read_csv(d/'test.csv').Stance.tolist()
    recs = [dict(id=f'test-{i + 1}', label=label(l)) for i, l in enumerate(gold)][::-1 if ids else 1]
    if bad: recs[bad - 1]['label'] = 'FAVR'
    if path.suffix == '.csv': return _write(path, 'label\n' + ''.join(f"{r['label']}\n" for r in recs))
    return _write(path, ('\n' if ids else '') + ''.join(json.dumps(r if ids else dict(label=r['label'])) + '\n' for r in recs))

@pytest.mark.parametrize('case', list(CASES))
def test_cli_error_is_one_line(case, own, tmp_path, monkeypatch):
    "Exit status 2 (usage) or 1 (data, run), and one line naming what was wrong; no traceback."
    d, opts, run = own
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs'))
    make, status, want = CASES[case]
    code, out, err = _cli(make(d, opts, run, tmp_path))
    line = _one_line(err)
    assert code == status and re.search(want, line), (code, err[-3000:])
    assert out == '' and not list(tmp_path.glob('p.*'))

def test_job_in_use(own, tmp_path, monkeypatch):
    "A job another process holds: the run says which folder and process it waits for, then runs the job that process left unfinished."
    d, opts, run = own
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs'))
    data = json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')},
                                'columns': {'text': 'Sentence', 'target': 'Topic', 'label': 'Stance'}, 'dev_fraction': 0.2}})
    argv = ['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline', '-p', 'seeds=1', '-p', f'data={data}',
            '--output-dir', str(tmp_path/'out')]
    code, out, err = _cli(argv)
    assert code == 0, err[-3000:]
    (job,) = (tmp_path/'out'/'benchmark'/'runs').iterdir()
    (job/'record.json').unlink()   # unfinished, and another process holds it
    holder = subprocess.Popen([sys.executable, '-c', 'import sys, time\nfrom stance_nb.claims import RunLock\n'
                               'with RunLock(sys.argv[1]): print("held", flush=True); time.sleep(4)', str(job)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        code, out, err = _cli(argv)
    finally: holder.kill(); holder.wait()
    assert code == 0 and 'Traceback' not in err, err[-3000:]
    waiting = [l for l in out.splitlines() if l.startswith('waiting for 1 job')]
    assert waiting and str(job) in waiting[0] and f'process {holder.pid}' in waiting[0], out[-3000:]
    assert (job/'record.json').exists()

@pytest.mark.skipif(os.geteuid() == 0, reason='root writes into read-only folders')
def test_read_only_outputs(own, tmp_path, monkeypatch):
    "Outputs in a folder that cannot be written: exit 1 and one line naming it."
    d, opts, run = own
    ro = tmp_path/'ro'; ro.mkdir(); ro.chmod(0o555)
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(ro))
    try: code, out, err = _cli(['baselines', *opts, '--dev-fraction', '0.2', '--seeds', '1', '--output-dir', str(ro)])
    finally: ro.chmod(0o755)
    assert code == 1 and str(ro) in _one_line(err)

def test_debug_shows_the_traceback(own, tmp_path):
    "`--debug` (or STANCE_NB_DEBUG=1) lets the exception through, with its traceback."
    d, opts, run = own
    argv = ['predict', '--run', str(run), '--input', str(_write(tmp_path/'h.csv', 'Topic,Sentence\n')), '--columns', 'text=Sentence,target=Topic',
            '--output', str(tmp_path/'p')]
    from stance_nb.core import StanceDataError
    with pytest.raises(StanceDataError, match='no rows to label'): main(argv + ['--debug'])
    p = subprocess.run([sys.executable, '-m', 'stance_nb.cli', *argv], capture_output=True, text=True, timeout=120,
                       env={**os.environ, 'STANCE_NB_DEBUG': '1'})
    assert p.returncode == 1 and 'Traceback (most recent call last)' in p.stderr

def test_evaluate_tsv_read_by_tab(own, tmp_path):
    "A `.tsv` predictions file is read tab-separated: matched by its id column (named or `id`), in any order, to the true score."
    d, opts, run = own
    gold = pd.read_csv(d/'test.csv').Stance.tolist()
    rows = [(f'test-{i + 1}', l) for i, l in enumerate(gold)][::-1]
    _write(tmp_path/'pred.tsv', 'ID\tlabel\n' + ''.join(f'{i}\t{l}\n' for i, l in rows))
    _write(tmp_path/'wrong.tsv', 'id\tlabel\n' + ''.join(f"{i}\t{'NONE' if l != 'NONE' else 'FAVOR'}\n" for i, l in rows))
    for name, more, f1 in (('pred.tsv', ['--id-column', 'ID'], 1.0), ('wrong.tsv', [], 0.0)):
        code, out, err = _cli(['evaluate', *opts, '--predictions', str(tmp_path/name), *more, '--json'])
        assert code == 0, err[-3000:]
        res = json.loads(out)
        assert res['matched_by'] == 'id' and res['n'] == len(gold) and res['scores']['f1_macro'] == f1, res

def test_own_data_robustness_tables_not_compared(own, tmp_path, monkeypatch):
    """`reproduce benchmark -p rows=BERT_SDL` on a dataset of your own: every table is written, the run ends with exit 0, and Tables 5
    and 7 (potency, resilience) show our values as `not in paper`, with no paper value and no Δ (the paper's are over its ten datasets)."""
    d, opts, run = own
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    data = json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')},
                                'columns': {'text': 'Sentence', 'target': 'Topic', 'label': 'Stance'}, 'dev_fraction': 0.2}})
    code, out, err = _cli(['reproduce', 'benchmark', '-p', 'rows=BERT_SDL', '-p', 'seeds=1', '-p', 'ratios=1.0', '-p', f'data={data}',
                           '-p', f"model={d/'tiny'}", '-p', 'epochs=1', '-p', 'batch_size=8', '-p', 'max_length=32',
                           '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0 and 'Traceback' not in err, err[-3000:]
    tables = json.loads(out)['tables']
    assert {'4', '5', '6', '7', '11'} <= set(tables), sorted(tables)
    for t in ('5', '7'):
        ours = [c for c in tables[t] if c['n']]
        assert ours and all(c['status'] == 'not in paper' and c['paper'] is None and c['delta'] is None for c in ours), (t, ours)
        assert all('data the paper lacks' in c['note'] for c in ours)

_INTERRUPTED = textwrap.dedent('''
    import json, sys
    from dataclasses import replace
    from stance_nb.cli import main, COMMANDS
    from stance_nb.experiment import executor_from, run_on
    from stance_nb.fixtures.workers import worker_experiment
    a = json.loads(sys.argv[1])
    work = lambda args: run_on(executor_from('submitit-local', 2), exp=worker_experiment(('ibmcs',)), seeds=[1, 2],
        data_dir=a['data'], out=a['out'], settings=dict(smoke=True, sleep_s=60, job_log=a['log']))
    COMMANDS.register('presets', replace(COMMANDS['presets'], handler=work), replace=True)
    sys.exit(main(['presets']))
''')

@pytest.mark.parametrize('sig,code,said,group', [(signal.SIGINT, 130, 'interrupted', True), (signal.SIGTERM, 143, 'terminated (SIGTERM)', True),
                                                  (signal.SIGINT, 130, 'interrupted', False)], ids=['ctrl_c', 'sigterm', 'sigint_main_only'])
def test_ctrl_c_with_workers_is_one_line(tmp_path, sig, code, said, group):
    """Ctrl-C (SIGINT to the terminal's process group) once two local workers are submitted: exit 130 and one line that says it was
    interrupted and how to resume; no traceback (submitit's controllers printed theirs), and no worker process is left. A SIGTERM to
    the group (`kill`, Slurm's `scancel` or time limit) the same, with exit 143 and its own word. A signal to the main process alone
    (`kill -INT PID`) stops the workers too: they are cancelled (they went on and finished their jobs)."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    data, log = write_benchmark_fixtures(tmp_path/'data', ['ibmcs']), tmp_path/'jobs.log'
    a = dict(data=str(data), out=str(tmp_path/'runs'), log=str(log))
    env = {**os.environ, 'STANCE_NB_QUIET': '1', 'OMP_NUM_THREADS': '1'}
    # its own process group with Ctrl-C's default action, as a terminal's foreground job: a shell without job control starts background
    # commands (a CI script run with `&`) with SIGINT ignored, and that would pass on to this run
    p = subprocess.Popen([sys.executable, '-c', _INTERRUPTED, json.dumps(a)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in p.stdout:
            if line.startswith('submitted 2 worker(s)'): break
        time.sleep(1.0)   # the controllers wait for their workers
        (os.killpg if group else os.kill)(p.pid, sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None: os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == code and 'Traceback' not in err and 'KeyboardInterrupt' not in err, err[-3000:]
    lines = [l for l in err.replace('\r', '\n').splitlines() if said in l]
    assert len(lines) == 1 and lines[0].startswith(f'stance_nb presets: {said}') and 'run the same command again to resume' in lines[0], err
    for _ in range(100):
        if not _group_alive(p.pid): break
        time.sleep(0.1)
    assert not _group_alive(p.pid), 'a worker process outlived the interrupted run'

def _group_alive(pgid:int) -> bool:
    try: os.killpg(pgid, 0); return True
    except ProcessLookupError: return False

# ================================================================ library faults that were raw

def test_disk_full_at_final_save(tiny_model, tmp_path, monkeypatch):
    "A full disk when the trained model is saved: the error names the folder and says disk space; no model, predictions or record is left without the others."
    import errno, transformers
    from stance_nb.train import train_classifier
    from stance_nb.test_utils import synthetic_stance
    from conftest import train_config
    def full(self, folder, *a, **kw):
        Path(folder).mkdir(parents=True, exist_ok=True); (Path(folder)/'config.json').write_text('{}')
        raise OSError(errno.ENOSPC, 'No space left on device')
    monkeypatch.setattr(transformers.PreTrainedModel, 'save_pretrained', full)
    with pytest.raises(OSError, match=r"could not write the run's results in .*none of them was kept\. Check the disk space there") as ei:
        train_classifier(synthetic_stance(24, seed=0), train_config(tiny_model, epochs=1), name='full', out_dir=tmp_path/'out')
    (run,) = (tmp_path/'out'/'train').iterdir()
    assert str(run) in str(ei.value)
    left = sorted(p.name for p in run.iterdir())
    assert not {'record.json', 'predictions.jsonl', 'model', 'config.json'} & set(left) and not [n for n in left if n.endswith('.tmp')], left

def test_fasttext_grid_temp_folder_full(tmp_path, monkeypatch):
    "A full temporary folder while the grid writes its files: the error names the folder and TMPDIR (a bare Errno 28 before)."
    import errno, pathlib
    from stance_nb.systems.baselines import fasttext_grid
    from stance_nb.test_utils import synthetic_stance
    syn = synthetic_stance(40, seed=1)
    real = pathlib.Path.write_text
    def full(self, *a, **kw):
        if self.name == 'train.txt': raise OSError(errno.ENOSPC, 'No space left on device')
        return real(self, *a, **kw)
    monkeypatch.setattr(pathlib.Path, 'write_text', full)
    monkeypatch.setenv('TMPDIR', str(tmp_path))
    import tempfile; monkeypatch.setattr(tempfile, 'tempdir', None)
    with pytest.raises(OSError, match=r'no space left in the temporary folder .*stance_nb-fasttext-grid-.*point TMPDIR at a folder with space'):
        fasttext_grid(syn[syn.split == 'train'], syn[syn.split == 'dev'], lrs=(0.1,), epochs=(1,), n_jobs=1)
    for _ in range(20):
        if not list(tmp_path.iterdir()): break
        time.sleep(0.25)
    assert list(tmp_path.iterdir()) == []

@pytest.mark.parametrize('damage', ['stray_json', 'truncated_record'])
def test_read_runs_names_the_file(damage, tmp_path):
    "A folder of runs with a JSON file that is not a record, or a truncated record: the error names that file."
    from stance_nb.core import StanceDataError
    from stance_nb.records import RunRecord, read_runs
    rec = RunRecord('demo/row', {'lr': 0.1}, 1); rec.finish(f1_macro=0.5)
    good = rec.save(tmp_path/'records'/'a.json')
    bad = tmp_path/'records'/'b.json'
    if damage == 'stray_json': bad.write_text(json.dumps({'some': 'settings'}))
    else: bad.write_text(Path(good).read_text()[:50])
    with pytest.raises(StanceDataError, match=re.escape(str(bad))) as ei: read_runs(tmp_path)
    assert ei.value.expected

_NOTEBOOK_GRID = '''
import os
os.environ['STANCE_NB_QUIET'] = '1'
from stance_nb.systems.baselines import fasttext_grid
from stance_nb.test_utils import synthetic_stance
syn = synthetic_stance(400, seed=1)
fasttext_grid(syn[syn.split == 'train'], syn[syn.split == 'dev'], lrs=(0.1, 0.2), epochs=(3000,), dim=50, n_jobs=2)
'''

def test_sigterm_to_papermill_during_grid_cleans_up(tmp_path):
    "papermill stopped while a notebook's fastText grid trains: its kernel exits at once, and still no temporary folder remains."
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_NOTEBOOK_GRID)])
    nb.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    nbformat.write(nb, tmp_path/'grid.ipynb')
    tmp = tmp_path/'tmp'; tmp.mkdir()
    env = {**os.environ, 'TMPDIR': str(tmp), 'OMP_NUM_THREADS': '1'}
    p = subprocess.Popen([sys.executable, '-m', 'papermill', str(tmp_path/'grid.ipynb'), str(tmp_path/'out.ipynb'), '-k', 'python3'],
                         env=env, cwd=str(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not list(tmp.glob('stance_nb-fasttext-grid-*/train.txt')):
        assert p.poll() is None, p.stderr.read()[-2000:]
        assert time.time() - t0 < 120, 'the grid never started'
        time.sleep(0.1)
    time.sleep(1.0)                                       # cells are training now
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    left = lambda: [q for q in tmp.iterdir() if q.name.startswith('stance_nb-')]
    t0 = time.time()
    while left() and time.time() - t0 < 20: time.sleep(0.25)
    assert left() == [], sorted(str(q) for q in tmp.rglob('*'))
    alive = lambda: subprocess.run(['pgrep', '-af', str(tmp)], capture_output=True, text=True).stdout.strip()
    t0 = time.time()
    while alive() and time.time() - t0 < 20: time.sleep(0.25)
    assert alive() == '', f'processes of the stopped run are still alive: {alive()}'

# ================================================================ datasets without a dev split, your own files in a transfer

@pytest.fixture(scope='module')
def no_dev(tmp_path_factory):
    "Emergent and WT-WT fixtures (their releases have no dev split) and a tiny three-label BERT."
    from stance_nb.fixtures.field import write_emergent, write_wtwt
    from stance_nb.test_utils import tiny_bert
    d = tmp_path_factory.mktemp('nodev')
    write_emergent(d/'data'/'emergent', train={'for': 12, 'against': 8, 'observing': 10}, test={'for': 12, 'against': 8, 'observing': 10})
    write_wtwt(d/'data'/'wtwt', per_merger=12)
    tiny_bert(d/'tiny', num_labels=3)
    return d

def test_transfer_over_datasets_without_a_dev_split(no_dev, tmp_path):
    """`transfer --models fasttext,sdl` over Emergent and WT-WT, whose releases have no dev split (fastText chooses its grid cell and sdl
    its epoch on dev): each dataset's stated split cuts a seeded 10 % of its training rows as dev, every cell has a score (both systems
    failed in every cell), and the notes say how the dev split was cut."""
    code, out, err = run_cli(['transfer', '--models', 'fasttext,sdl', '--model', str(no_dev/'tiny'), '--encoder-preset', 'smoke', '--epochs', '1',
                              '--datasets', 'emergent,wtwt', '--data-dir', str(no_dev/'data'), '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-3000:]
    res = json.loads(out)
    cells = pd.DataFrame(res['cells'])
    assert len(cells) == 8 and cells.f1.notna().all(), cells[['system', 'key', 'f1']]
    for d in ('emergent', 'wtwt'):
        assert any(n.startswith(f'{d}: its stated split,') and 'a stratified 10 % of the training rows (seed 0) is dev' in n for n in res['notes'])
    rec = json.loads(Path(res['records'][0]).read_text())
    assert any(s['options'].get('dev_fraction') == 0.1 for s in rec['metrics']['data_specs'].values())   # the job records how it read its rows

def test_mdl_on_a_dataset_without_a_dev_split(no_dev, tmp_path):
    "`mdl --datasets emergent` (no dev split: it stopped with \"has no ['dev'] rows\") trains with the stated dev split and says so."
    code, out, err = run_cli(['mdl', '--datasets', 'emergent', '--data-dir', str(no_dev/'data'), '--preset', 'smoke', '--model', str(no_dev/'tiny'),
                              '--epochs', '1', '--seeds', '1', '--no-save-model', '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-3000:]
    res = json.loads(out)
    assert res['runs'][0]['scores'][0]['n_dev'] == 3 and res['runs'][0]['scores'][0]['n_train'] == 27   # 10 % of 30 training rows
    assert "emergent: its stated split, Emergent (Ferreira & Vlachos 2016)" in err and res['notes']

def test_mdl_applies_data_options_to_named_datasets(no_dev, tmp_path):
    "`mdl --datasets emergent --max-train 12` trains on 12 rows (the option was accepted and ignored: all 27 trained), as `train` would."
    base = ['mdl', '--datasets', 'emergent', '--data-dir', str(no_dev/'data'), '--preset', 'smoke', '--model', str(no_dev/'tiny'),
            '--epochs', '1', '--seeds', '1', '--no-save-model', '--output-dir', str(tmp_path/'out'), '--json']
    code, out, err = run_cli([*base, '--max-train', '12'])
    assert code == 0, err[-3000:]
    score = json.loads(out)['runs'][0]['scores'][0]
    assert score['n_train'] == 12 and score['n_dev'] == 3, score
    code, out, err = run_cli([*base, '--max-train', '12', '--split-seed', '1', '--name', 'other-sample'])
    assert code == 0 and json.loads(out)['runs'][0]['scores'][0]['n_train'] == 12, err[-3000:]

def test_transfer_of_your_own_files_is_refused_for_what_they_lack(tmp_path):
    "`transfer --datasets csv,ibmcs`: exit 2 with one line that says your own files have no label map (it said `unknown ['csv']`)."
    code, out, err = run_cli(['transfer', '--datasets', 'csv,ibmcs', '--plan'])
    assert code == 2 and "['csv']: your own files have no label map (how their labels map onto AGAINST, FAVOR, NONE)" in _one_line(err), err
