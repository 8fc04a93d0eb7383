"""Interruptions (SIGKILL and resume, atomic writes, one writer per run folder), determinism (fastText, the
transformer trainer, MDL, the attacks), safe loading (weights_only, trust_remote_code, safetensors, checksums, archive
extraction) and resources (a batch that does not fit in GPU memory)."""
import json, os, re, signal, subprocess, sys, textwrap, time, zipfile, tarfile, hashlib
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/'stance_nb'

from conftest import train_config as _cfg   # the `tiny_model` fixture comes from conftest too

def _data(n=24):
    from stance_nb.test_utils import synthetic_stance
    return synthetic_stance(n, seed=0)

# ================================================================ interruptions

_TRAIN_CHILD = textwrap.dedent('''
    import json, os, sys, time, torch
    torch.set_num_threads(1)
    from stance_nb.train import TrainConfig, train_classifier
    from stance_nb.test_utils import synthetic_stance
    a = json.loads(sys.argv[1])
    cfg = TrainConfig(**a['cfg'])
    def on_step(state):
        if a['stop_at'] and state.step == a['stop_at']:
            open(a['marker'], 'w').write(str(state.step))
            time.sleep(600)                      # wait here for the parent's SIGKILL
    r = train_classifier(synthetic_stance(a['n'], seed=0), cfg, name='killed', out_dir=a['out'], on_step=on_step)
    print(json.dumps(dict(test=r.test, dev=r.dev, predictions=r.predictions, resumed_from=r.fit.resumed_from,
                          history=r.history, out_dir=str(r.out_dir))))
''')

def _child(args:dict, **kw) -> subprocess.Popen:
    env = {**os.environ, 'STANCE_NB_QUIET': '1', 'TOKENIZERS_PARALLELISM': 'false', 'OMP_NUM_THREADS': '1'}
    return subprocess.Popen([sys.executable, '-c', _TRAIN_CHILD, json.dumps(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=str(ROOT), **kw)

def _result(p:subprocess.Popen, timeout=300) -> dict:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])

def test_sigkill_mid_epoch_resumes_to_the_same_result(tiny_model, tmp_path):
    "A run SIGKILLed mid-epoch resumes from its last checkpoint and ends with the metrics and predictions of an uninterrupted run."
    from dataclasses import asdict
    cfg = asdict(_cfg(tiny_model, checkpoint_every=2, cleanup_checkpoints=False))
    n, steps_per_epoch = 24, 3                   # 24 rows, batch 8: 3 steps per epoch, 6 in all
    base = dict(cfg=cfg, n=n, marker=str(tmp_path/'marker'))
    clean = _child(dict(base, out=str(tmp_path/'clean'), stop_at=0))          # the uninterrupted reference, in parallel
    killed = _child(dict(base, out=str(tmp_path/'killed'), stop_at=steps_per_epoch + 2))  # stops in epoch 2, after a step checkpoint
    t0 = time.time()
    while not (tmp_path/'marker').exists():
        assert killed.poll() is None, killed.communicate()[1][-3000:]
        assert time.time() - t0 < 300, 'the training child never reached the kill point'
        time.sleep(0.2)
    killed.send_signal(signal.SIGKILL); killed.wait()
    assert killed.returncode == -signal.SIGKILL
    run = next((tmp_path/'killed'/'train').iterdir())
    assert not (run/'predictions.jsonl').exists() and not (run/'record.json').exists()   # nothing final was written
    latest = json.loads((run/'checkpoints'/'latest.json').read_text())
    assert latest['step'] == steps_per_epoch + 1 and latest['epoch'] == 1 and latest['batch_in_epoch'] == 1   # mid-epoch checkpoint
    assert list(run.glob('.lock.*'))             # the killed process's claim is still there: it is dead
    import torch
    from stance_nb.train import TrainConfig, train_classifier
    threads = torch.get_num_threads(); torch.set_num_threads(1)   # as in the children
    try: r = train_classifier(_data(n), TrainConfig(**cfg), name='killed', out_dir=tmp_path/'killed')   # resume in this process
    finally: torch.set_num_threads(threads)
    resumed = dict(test=r.test, dev=r.dev, predictions=r.predictions, resumed_from=r.fit.resumed_from, history=r.history)
    ref = _result(clean)
    assert resumed['resumed_from'] == steps_per_epoch + 1 and ref['resumed_from'] is None
    assert resumed['predictions'] == ref['predictions']
    assert resumed['test'] == ref['test'] and resumed['dev'] == ref['dev']
    assert [h['train_loss'] for h in resumed['history']] == pytest.approx([h['train_loss'] for h in ref['history']], abs=1e-6)
    for d in (tmp_path/'killed', tmp_path/'clean'):
        run = next((d/'train').iterdir())
        assert (run/'predictions.jsonl').read_text() == ''.join(json.dumps({'label': l}) + '\n' for l in ref['predictions'])
        assert json.loads((run/'record.json').read_text())['metrics']['test_f1_macro'] == ref['test']['f1_macro']
        assert not list(run.glob('.lock*'))
        assert not [p for p in run.rglob('*') if p.name.endswith('.tmp') or p.name.startswith('.tmp-')], 'temporary files left'

_WRITER_CHILD = textwrap.dedent('''
    import sys, time
    from stance_nb.records import write_jsonl
    def rows():
        for i in range(100000):
            if i == 1000: open(sys.argv[2], 'w').write('writing')
            if i >= 1000: time.sleep(0.001)
            yield {'label': f'new-{i}'}
    write_jsonl(sys.argv[1], rows())
''')

def test_sigkill_mid_write_keeps_the_old_file(tmp_path):
    "A writer killed mid-write leaves the previous predictions intact; only a hidden temporary file can remain."
    from stance_nb.records import write_jsonl
    path = tmp_path/'predictions.jsonl'
    write_jsonl(path, [{'label': 'old'}] * 3); old = path.read_bytes()
    p = subprocess.Popen([sys.executable, '-c', _WRITER_CHILD, str(path), str(tmp_path/'marker')], stderr=subprocess.PIPE)
    t0 = time.time()
    while not (tmp_path/'marker').exists():
        assert p.poll() is None and time.time() - t0 < 120, p.stderr.read()
        time.sleep(0.05)
    p.kill(); p.wait()
    assert path.read_bytes() == old
    left = [q.name for q in tmp_path.iterdir() if q.name not in ('predictions.jsonl', 'marker')]
    assert all(n.startswith('.predictions.jsonl.') and n.endswith('.tmp') for n in left), left

@pytest.mark.parametrize('writer', ['write_jsonl', 'write_json', 'write_csv', 'write_text', 'RunRecord.save'])
def test_failed_write_keeps_the_old_file(writer, tmp_path, monkeypatch):
    "A write that fails half-way (an exception, a full disk at fsync) leaves the old file and no temporary file."
    import pandas as pd
    import stance_nb.core as core, stance_nb.records as records
    path = tmp_path/'out.file'
    path.write_text('old content\n'); old = path.read_bytes()
    def rows():
        yield {'label': 'a'}; raise RuntimeError('interrupted while writing')
    def full_disk(fd): raise OSError(28, 'No space left on device')
    if writer == 'write_jsonl': call = lambda: records.write_jsonl(path, rows())
    else:
        monkeypatch.setattr(core.os, 'fsync', full_disk)
        call = {'write_json': lambda: core.write_json(path, {'a': 1}),
                'write_csv': lambda: core.write_csv(path, pd.DataFrame({'a': [1, 2]})),
                'write_text': lambda: core.write_text(path, 'new'),
                'RunRecord.save': lambda: records.RunRecord('x', {}, 1, git=None, versions={}, hardware={}).save(path)}[writer]
    with pytest.raises((RuntimeError, OSError)): call()
    assert path.read_bytes() == old
    assert sorted(q.name for q in tmp_path.iterdir()) == ['out.file']

# files the package may write without the atomic writers: scratch files inside temporary folders, and a figure rendered in memory
_ALLOWED_WRITES = {('data/explore.py', 'buf = io.BytesIO(); fig.savefig(buf,'),
                   ('systems/baselines/model.py', 'json.dump([l[0] for l in labs], f)'), ('systems/baselines/model.py', "p = Path(d)/'train.txt'"),
                   ('systems/baselines/model.py', 'train_path.write_text('), ('systems/baselines/model.py', 'dev_path.write_text('),
                   ('data/core.py', "open(raw, 'wb')")}

def test_package_writes_go_through_atomic_writers():
    "No module writes a file directly (to_csv, json.dump, write_text, open(..., 'w')) outside the atomic writers."
    pat = re.compile(r"""\.to_csv\(|\.to_json\(|json\.dump\(|\.write_text\(|\.write_bytes\(|\.savefig\(|open\([^)]*['"][wax]b?\+?['"]""")
    bad = []
    for f in sorted(PKG.rglob('*.py')):
        rel = f.relative_to(PKG).as_posix()
        if rel.startswith('fixtures/') or rel in ('core.py', '_modidx.py'): continue   # fixtures write test data; core holds the writers
        for i, line in enumerate(f.read_text(encoding='utf-8').splitlines(), 1):
            if pat.search(line) and 'atomic_write' not in line and not any(rel == a and s in line for a, s in _ALLOWED_WRITES):
                bad.append(f'{rel}:{i}: {line.strip()}')
    assert not bad, 'direct writes:\n' + '\n'.join(bad)

def test_result_notebooks_write_atomically():
    "The result notebooks write their records, predictions, tables and figures through the atomic writers too."
    pat = re.compile(r"""\.to_csv\(|\.to_json\(|json\.dump\(|\.write_text\(|\.write_bytes\(|\.savefig\(|open\([^)]*['"][wax]b?\+?['"]""")
    bad = []
    for nb in sorted((ROOT/'nbs').glob('run_*.ipynb')):
        for c in json.loads(nb.read_text(encoding='utf-8'))['cells']:
            if c['cell_type'] != 'code': continue
            bad += [f'{nb.name}: {l.strip()}' for l in ''.join(c['source']).splitlines() if pat.search(l) and 'atomic_write' not in l]
    assert not bad, 'direct writes into outputs/:\n' + '\n'.join(bad)

_LOCK_CHILD = textwrap.dedent('''
    import sys, time
    from stance_nb.claims import RunLock
    with RunLock(sys.argv[1]):
        open(sys.argv[2], 'w').write('locked')
        time.sleep(600)
''')

def _hold_lock(folder:Path, marker:Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, '-c', _LOCK_CHILD, str(folder), str(marker)], stderr=subprocess.PIPE)
    t0 = time.time()
    while not marker.exists():
        assert p.poll() is None and time.time() - t0 < 60, p.stderr.read()
        time.sleep(0.05)
    return p

def test_two_runs_never_share_a_folder(tiny_model, tmp_path):
    "While one process trains in a run folder, a second identical run fails at once, saying which process holds it."
    from stance_nb.train import train_classifier
    df, cfg = _data(), _cfg(tiny_model, epochs=1, checkpoint=False)
    first = train_classifier(df, cfg, name='lock', out_dir=tmp_path, save_model=False)
    holder = _hold_lock(first.out_dir, tmp_path/'marker')
    try:
        with pytest.raises(RuntimeError, match=rf'is in use by process {holder.pid}.*choose another output folder'):
            train_classifier(df, cfg, name='lock', out_dir=tmp_path, save_model=False)
    finally: holder.kill(); holder.wait()
    # the holder is dead now: its stale lock is taken over
    again = train_classifier(df, cfg, name='lock', out_dir=tmp_path, save_model=False)
    assert again.out_dir == first.out_dir and again.predictions == first.predictions
    # runs that differ in anything (seed, settings, data) get their own folder
    other = train_classifier(df, _cfg(tiny_model, epochs=1, checkpoint=False, seed=2), name='lock', out_dir=tmp_path, save_model=False)
    assert other.out_dir != first.out_dir

def test_run_lock_between_processes(tmp_path):
    from stance_nb.claims import RunLock
    holder = _hold_lock(tmp_path/'run', tmp_path/'marker')
    try:
        with pytest.raises(RuntimeError, match=f'in use by process {holder.pid}'): RunLock(tmp_path/'run').acquire()
    finally: holder.kill(); holder.wait()
    with RunLock(tmp_path/'run') as lock: assert json.loads(lock.path.read_text())['pid'] == os.getpid()
    assert not list((tmp_path/'run').glob('.lock*'))

def test_mdl_run_is_locked(tiny_model, tmp_path):
    "train_mdl saves its weights as safetensors and refuses a run folder that another process holds."
    from stance_nb.systems.mdl import MDLConfig, train_mdl
    cfg = MDLConfig(epochs=1, max_length=32, batch_size=8, max_train_rows=16, max_eval_rows=8, mixed_precision='no', checkpoint=False)
    run = lambda **kw: train_mdl({'a': _data(16)}, tiny_model, cfg, seed=1, output_dir=tmp_path, local_files_only=True, **kw)
    folder = run(save_model=True).out_dir
    saved = [p.relative_to(folder/'model').as_posix() for p in (folder/'model').rglob('*') if p.is_file()]
    assert 'heads.safetensors' in saved and 'encoder/model.safetensors' in saved, saved   # MDL weights are safetensors too
    assert not [f for f in saved if f.endswith(('.bin', '.pt', '.pth', '.pkl'))], saved
    holder = _hold_lock(folder, tmp_path/'marker')
    try:
        with pytest.raises(RuntimeError, match=f'in use by process {holder.pid}'): run()
    finally: holder.kill(); holder.wait()

# ================================================================ determinism

def test_fasttext_deterministic():
    "Single-threaded fastText: the same seed gives identical predictions and probabilities."
    from stance_nb.test_utils import tiny_fasttext, synthetic_stance
    test = synthetic_stance(60, seed=5, splits=('test',))
    a, b = tiny_fasttext(seed=3), tiny_fasttext(seed=3)
    assert a.thread == 1
    assert a.predict(test) == b.predict(test)
    assert a.predict_proba(test).equals(b.predict_proba(test))

def test_trainer_deterministic(tiny_model, tmp_path):
    "Two runs of the trainer with the same seed give identical losses and predictions; another seed changes the losses."
    from stance_nb.train import train_classifier
    df = _data()
    runs = [train_classifier(df, _cfg(tiny_model, seed=s, checkpoint=False), name='det', out_dir=tmp_path/str(k), save_model=False)
            for k, s in enumerate((1, 1, 2))]
    assert runs[0].predictions == runs[1].predictions and runs[0].test == runs[1].test
    assert [h['train_loss'] for h in runs[0].history] == [h['train_loss'] for h in runs[1].history]
    assert [h['train_loss'] for h in runs[0].history] != [h['train_loss'] for h in runs[2].history]

def test_mdl_deterministic(tiny_model, tmp_path):
    "MDL (two datasets, seeded batch plan and samples): the same seed gives identical predictions and scores."
    from stance_nb.systems.mdl import MDLConfig, train_mdl
    from stance_nb.test_utils import synthetic_stance
    data = {'a': synthetic_stance(24, seed=1), 'b': synthetic_stance(16, seed=2, labels=('con', 'pro', 'neutral'))}
    cfg = MDLConfig(epochs=1, max_length=32, batch_size=8, max_train_rows=16, max_eval_rows=8, mixed_precision='no', checkpoint=False)
    r1, r2 = (train_mdl(data, tiny_model, cfg, seed=3, local_files_only=True) for _ in range(2))
    assert r1.predictions == r2.predictions
    assert r1.history.equals(r2.history)

def test_attacks_deterministic(tmp_path):
    "Spelling, negation and paraphrase (tiny translation model) give the same output for the same seed."
    from stance_nb.attacks import apply_attack
    from stance_nb.test_utils import tiny_translation_model
    from stance_nb.test_utils import synthetic_stance
    df = synthetic_stance(20, seed=4, splits=('test',))
    for name in ('spelling', 'negation'):
        a, b = apply_attack(df, name, seed=7), apply_attack(df, name, seed=7)
        assert a.equals(b) and a.label.equals(df.label)
    assert not apply_attack(df, 'spelling', seed=7).text.equals(apply_attack(df, 'spelling', seed=8).text)
    m = tiny_translation_model(tmp_path/'mt', seed=0)
    opts = dict(models=(str(m), str(m)), local_files_only=True, device='cpu')
    a, b = (apply_attack(df.head(6), 'paraphrase', seed=7, **opts) for _ in range(2))
    assert a.equals(b)

# ================================================================ safe loading

def _sources():
    return [(f.relative_to(PKG).as_posix(), f.read_text(encoding='utf-8')) for f in sorted(PKG.rglob('*.py')) if f.name != '_modidx.py']

def test_torch_load_weights_only():
    "Every torch.load( in the package passes weights_only=True."
    calls = [(rel, m.group(0)) for rel, src in _sources() for m in re.finditer(r'torch\.load\([^)]*\)', src)]
    bad = [c for c in calls if 'weights_only=True' not in c[1]]
    assert not bad, bad
    assert not [rel for rel, src in _sources() if re.search(r'\bpickle\.loads?\(', src)], 'pickle.load in the package'

def test_trust_remote_code_off_by_default():
    "trust_remote_code is never hard-wired on, and every parameter or field that carries it defaults to False."
    for rel, src in _sources():
        assert not re.search(r'trust_remote_code\s*=\s*True', src), rel
        for m in re.finditer(r'trust_remote_code\s*:\s*bool\s*=\s*(\w+)', src): assert m.group(1) == 'False', rel
    from stance_nb.train import TrainConfig
    assert TrainConfig().trust_remote_code is False

def test_trust_remote_code_can_be_turned_on(tiny_model, monkeypatch):
    "TrainConfig(trust_remote_code=True) reaches from_pretrained (and False is what is passed by default)."
    import transformers
    from stance_nb.train import classifier
    seen = []
    real = transformers.AutoConfig.from_pretrained
    def spy(*a, **kw): seen.append(kw.get('trust_remote_code')); return real(*a, **kw)
    monkeypatch.setattr(transformers.AutoConfig, 'from_pretrained', spy)
    for flag in (False, True): classifier._load_model(_cfg(tiny_model, trust_remote_code=flag), ['AGAINST', 'FAVOR'])
    assert seen == [False, True]

def test_weights_saved_as_safetensors(tiny_model, tmp_path):
    "The trainer saves the model (and checkpoints) as safetensors, never as a pickled pytorch_model.bin."
    from stance_nb.train import train_classifier
    r = train_classifier(_data(), _cfg(tiny_model, epochs=1, cleanup_checkpoints=False), name='st', out_dir=tmp_path)
    files = [p.name for p in (r.out_dir/'model').iterdir()]
    assert 'model.safetensors' in files and not [f for f in files if f.endswith('.bin') or f.endswith('.pt')], files
    ckpt = [p.name for p in (r.out_dir/'checkpoints').rglob('*') if p.is_file()]
    assert any(f.endswith('.safetensors') for f in ckpt) and 'pytorch_model.bin' not in ckpt, ckpt

def _register(monkeypatch, url, sha256, files=('a.txt',)):
    from stance_nb.data.core import DATASETS, DatasetInfo
    info = DatasetInfo(name='_rel', loader=lambda folder: None, labels=['x'], pair=False, metric='f1_macro', folder='rel',
                       files=files, url=url, sha256=sha256)
    monkeypatch.setitem(DATASETS, '_rel', info)

def _zip(path, members:dict):
    with zipfile.ZipFile(path, 'w') as z:
        for n, d in members.items(): z.writestr(n, d)
    return path

def test_download_checksum(tmp_path, monkeypatch):
    "A download with the wrong SHA-256 fails and leaves nothing behind; the right one installs the files."
    from stance_nb.core import StanceDataError
    from stance_nb.data.core import download
    src = _zip(tmp_path/'release.zip', {'rel/a.txt': 'hello'})
    good = hashlib.sha256(src.read_bytes()).hexdigest()
    data = tmp_path/'data'
    _register(monkeypatch, src.as_uri(), '0' * 64)
    with pytest.raises(StanceDataError, match=f'checksum mismatch.*expected SHA-256 {"0" * 64}'): download('_rel', data)
    assert not data.exists() or not any(data.rglob('*')), sorted(data.rglob('*'))
    _register(monkeypatch, src.as_uri(), good)
    folder = download('_rel', data)
    assert (folder/'a.txt').read_text() == 'hello'
    assert sorted(p.name for p in data.iterdir()) == ['rel']   # no temporary download folder left

def test_download_rejects_malicious_archive(tmp_path, monkeypatch):
    "A download whose checksum matches but whose archive escapes its folder is rejected, leaving nothing behind."
    from stance_nb.core import StanceDataError
    from stance_nb.data.core import download
    from stance_nb.fixtures.papers import write_malicious_archive
    src = write_malicious_archive(tmp_path/'evil.zip', 'traversal')
    _register(monkeypatch, src.as_uri(), hashlib.sha256(src.read_bytes()).hexdigest(), files=('ok.txt',))
    data = tmp_path/'data'
    with pytest.raises(StanceDataError, match='path traversal'): download('_rel', data)
    assert not any(p.name == 'evil.txt' for p in tmp_path.rglob('*')) and not any(data.rglob('*'))

@pytest.mark.parametrize('suffix,how', [('zip', 'traversal'), ('zip', 'absolute'), ('tar.gz', 'traversal'), ('tar.gz', 'absolute'),
                                        ('tar.gz', 'symlink')])
def test_safe_extract_rejects_escapes(suffix, how, tmp_path):
    from stance_nb.core import StanceDataError
    from stance_nb.data.core import safe_extract
    from stance_nb.fixtures.papers import write_malicious_archive
    arc = write_malicious_archive(tmp_path/f'evil.{suffix}', how)
    dest = tmp_path/'a'/'b'
    with pytest.raises(StanceDataError, match='unsafe archive member') as ei: safe_extract(arc, dest)
    assert ei.value.path == arc and ei.value.expected
    assert not dest.exists()                    # nothing extracted, not even the harmless member
    assert not (tmp_path/'a'/'evil.txt').exists() and not Path('/tmp/stance_nb_evil.txt').exists()

@pytest.mark.parametrize('suffix', ['zip', 'tar.gz'])
def test_safe_extract_truncated(suffix, tmp_path):
    from stance_nb.core import StanceDataError
    from stance_nb.data.core import safe_extract
    from stance_nb.fixtures.papers import write_archive
    (tmp_path/'src').mkdir()
    (tmp_path/'src'/'a.txt').write_text('some text to compress ' * 400)
    arc = write_archive(tmp_path/'src', tmp_path/f'a.{suffix}', truncate=200)
    with pytest.raises(StanceDataError, match='corrupt|truncated') as ei: safe_extract(arc, tmp_path/'out')
    assert ei.value.path == arc

# ================================================================ resources

def test_out_of_memory_names_batch_and_fix(tiny_model, tmp_path, monkeypatch):
    "A batch that does not fit in GPU memory stops with the batch size and sequence length that failed and how to lower them."
    import torch
    from stance_nb.test_utils import tiny_bert
    from stance_nb.train import train_classifier, TrainOOMError
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model)
    tok = AutoTokenizer.from_pretrained(tiny_model)
    def oom(**batch): raise torch.cuda.OutOfMemoryError('CUDA out of memory. Tried to allocate 20.00 GiB')
    monkeypatch.setattr(model, 'forward', oom)
    cfg = _cfg(tiny_model, batch_size=8, max_length=32, checkpoint=False)
    with pytest.raises(TrainOOMError) as ei:
        train_classifier(_data(), cfg, name='oom', out_dir=tmp_path, model=model, tokenizer=tok, save_model=False)
    msg = str(ei.value)
    seq = re.search(r'batch size 8 and sequence length (\d+)', msg)
    assert seq and 1 < int(seq.group(1)) <= 32, msg
    assert 'batch_size=8' in msg and 'max_length=32' in msg and 'Lower batch_size (e.g. 4)' in msg and 'grad_accum (e.g. 2)' in msg, msg
    assert isinstance(ei.value.__cause__, torch.cuda.OutOfMemoryError)
    assert not list(tmp_path.rglob('.lock*')), 'the run folder stays locked after the error'

@pytest.fixture
def graphs_on_cpu(monkeypatch):
    """Let a CPU run take the `cuda_graphs` path: the device check lifted, the step compiled by torch.compile as on a GPU (dynamo's
    capture: one full graph, symbolic shapes, the recompile limit the run raises) but run by dynamo's `eager` backend instead of
    inductor's kernels, whose C++ compiling on a CPU took minutes (167 s and 47 s for two of these tests) and is no part of the GPU
    path; torch's count of graphs run without CUDA graphs is 0 (a CPU has none to skip). The recompile limit is restored afterwards."""
    import torch
    import stance_nb.train.loop as loop
    monkeypatch.setattr(loop, 'check_cuda_graphs', lambda acc, cfg: None)
    monkeypatch.setattr(loop, 'cudagraph_skips', lambda: 0)
    compile_ = torch.compile
    monkeypatch.setattr(torch, 'compile', lambda model, mode=None, **kw: compile_(model, backend='eager', **kw))
    with torch._dynamo.config.patch(recompile_limit=torch._dynamo.config.recompile_limit): yield loop

def test_cuda_graphs_step_not_captured_stops(tiny_model, tmp_path, monkeypatch, graphs_on_cpu):
    """`cuda_graphs`: a step that torch runs without CUDA graphs (its count of such graphs grows, as on a GPU where a graph cannot be
    captured) stops the run at that step, with no result, rather than training on the eager path."""
    from stance_nb.train import train_classifier
    calls = []
    monkeypatch.setattr(graphs_on_cpu, 'cudagraph_skips', lambda: calls.append(1) or int(len(calls) > 1))   # 0 before the run, 1 after a step
    with pytest.raises(RuntimeError, match=r'cuda_graphs: 1 part\(s\) of the training step ran without CUDA graphs') as ei:
        train_classifier(_data(), _cfg(tiny_model, cuda_graphs=True, max_length=32, checkpoint=False, mixed_precision='no'), name='graphs',
                         out_dir=tmp_path, save_model=False)
    assert 'train without cuda_graphs' in str(ei.value).lower() and len(calls) == 2   # at the first step
    assert not list(tmp_path.rglob('record.json')) and not list(tmp_path.rglob('.lock*'))

def test_cuda_graphs_compiles_training_only(tiny_model, tmp_path, graphs_on_cpu):
    """`cuda_graphs` compiles the training step once per head with symbolic shapes (batches of several lengths, a smaller last batch:
    no compile more than the head's and transformers' first-call one) and never the prediction: dev and test are scored eagerly, the
    result is the model itself (no compiled wrapper) and its saved weights carry the model's own names."""
    from safetensors import safe_open
    from torch._dynamo.utils import counters
    from stance_nb.train import train_classifier
    before = counters['stats']['unique_graphs']
    r = train_classifier(_data(40), _cfg(tiny_model, cuda_graphs=True, checkpoint=True, select_best_epoch=True), name='graphs', out_dir=tmp_path)
    assert counters['stats']['unique_graphs'] - before <= 2   # the step, and once more after transformers sets config.problem_type
    assert type(r.fit.model).__name__ == 'BertForSequenceClassification' and len(r.predictions) == len(_data(40).query("split == 'test'"))
    with safe_open(str(next(tmp_path.rglob('model.safetensors'))), 'pt') as f: assert not [k for k in f.keys() if '_orig_mod' in k]

def test_cuda_graphs_recompile_limit_stops(tiny_model, tmp_path, monkeypatch, graphs_on_cpu):
    "`cuda_graphs`: a step that torch would compile again past its limit stops the run at that step, with no result (never runs eagerly)."
    import torch
    from stance_nb.train import train_classifier
    capture = graphs_on_cpu.capture_graphs
    def capture_with_limit_1(model):
        m = capture(model); torch._dynamo.config.recompile_limit = 1; return m
    monkeypatch.setattr(graphs_on_cpu, 'capture_graphs', capture_with_limit_1)
    with pytest.raises(RuntimeError, match=r'cuda_graphs: at optimizer step 2 torch would compile the training step again, past its limit '
                                           r'of 1 \(TORCH_LOGS=recompiles says why\); train without cuda_graphs'):
        train_classifier(_data(), _cfg(tiny_model, cuda_graphs=True, checkpoint=False), name='graphs', out_dir=tmp_path, save_model=False)
    assert not list(tmp_path.rglob('record.json')) and not list(tmp_path.rglob('.lock*'))

def test_cuda_graphs_refused_on_cpu(tiny_model, tmp_path):
    "`cuda_graphs` on a CPU stops before the model is touched, naming the field, the device and the way out."
    from stance_nb.train import train_classifier
    with pytest.raises(ValueError, match=r'cuda_graphs=True captures the training step as CUDA graphs, which needs a CUDA GPU; this run trains '
                                         r'on cpu\. Train without it \(--no-cuda-graphs\)'):
        train_classifier(_data(), _cfg(tiny_model, cuda_graphs=True, checkpoint=False), name='graphs', out_dir=tmp_path, save_model=False)
    assert not list(tmp_path.rglob('record.json'))

# ================================================================ divergence

def test_divergence_stops_with_step_epoch_lr(tiny_model, tmp_path):
    "A learning rate that makes the loss NaN stops the run with an error naming the step, epoch and learning rate, not a silent result."
    from stance_nb.train import train_classifier, TrainDivergedError
    with pytest.raises(TrainDivergedError) as ei:
        train_classifier(_data(), _cfg(tiny_model, lr=1e4, checkpoint=False), name='diverge', out_dir=tmp_path, save_model=False)
    msg = str(ei.value)
    assert re.search(r'the loss is (nan|inf|-inf) at optimizer step \d+ \(epoch \d, learning rate [0-9.e+]+', msg), msg
    assert 'Lower the learning rate (TrainConfig.lr=10000)' in msg and 'check the training data' in msg, msg
    assert not list(tmp_path.rglob('record.json')) and not list(tmp_path.rglob('.lock*'))

@pytest.mark.parametrize('lr', [float('inf'), float('nan')])
def test_non_finite_lr_rejected(lr):
    from stance_nb.train import TrainConfig
    with pytest.raises(ValueError, match=r'TrainConfig.lr=(inf|nan) is invalid \(expected a finite positive number\)'): TrainConfig(lr=lr).validate()
