"""A full disk at every write of the package: the final model save, a checkpoint, a job's predictions and record, a run
folder's claim, a leaderboard's page and tables, a reproduction's tables, the `--keep-records` copy and `predict`'s
output. Each ends in one error that names the file or folder and says there is no space left (exit 1 in the CLI),
and leaves nothing half-written: no claim, no temporary file or folder, no part of a page or table.

The disk is a real one where the tests may mount a small tmpfs (root with CAP_SYS_ADMIN, as in CI): the kernel
reports ENOSPC and safetensors' writer its own `SafetensorError`. Elsewhere every write under the folder goes to
`/dev/full`, whose writes fail with the kernel's ENOSPC, and safetensors' writer raises the `SafetensorError` it
raises on a full tmpfs."""
import builtins, contextlib, errno, io, json, os, re, shutil, subprocess, tempfile
from functools import lru_cache
from pathlib import Path
import pytest

from stance_nb.cli import main
from conftest import write_splits, train_config

LABELS = ['AGAINST', 'FAVOR']
FULL = r'no space left on the device'

@lru_cache(maxsize=None)
def _can_mount() -> bool:
    "Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN); `STANCE_NB_TEST_NO_MOUNT=1` tries the /dev/full way where it may."
    if os.environ.get('STANCE_NB_TEST_NO_MOUNT') or os.geteuid() != 0 or not shutil.which('mount'): return False
    d = tempfile.mkdtemp()
    try:
        ok = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', d], capture_output=True).returncode == 0
        if ok: subprocess.run(['umount', d], check=True)
        return ok
    finally: os.rmdir(d)

class Disk:
    "A folder (`path`) on a small filesystem that `fill` makes full: a real tmpfs where one can be mounted, else writes that go to /dev/full."
    def __init__(self, root:Path, kb:int, monkeypatch):
        self.root, self.kb, self.mp, self.real = root, kb, monkeypatch, _can_mount()
        self.path = root/'disk'
    def __enter__(self):
        self.root.mkdir(parents=True, exist_ok=True)
        if self.real: subprocess.run(['mount', '-t', 'tmpfs', '-o', f'size={self.kb}k', 'tmpfs', str(self.root)], check=True)
        self.path.mkdir()
        return self
    def __exit__(self, *exc):
        self.mp.undo()
        if self.real: subprocess.run(['umount', '-l', str(self.root)], check=True)
    def fill(self, leave_kb:int=0, only:str|None=None):
        """From now on a write under `path` finds `leave_kb` KB free (a tmpfs), or, where none can be mounted, every write of a file under `path`
        (whose name holds `only`) fails with ENOSPC."""
        if self.real:
            free = os.statvfs(self.root).f_bavail*os.statvfs(self.root).f_frsize - leave_kb*1024
            if free > 0:
                with open(self.root/'.filler', 'wb') as f: f.write(b'\0'*free)
            return
        full, real_open, real_os_open = os.open('/dev/full', os.O_WRONLY), builtins.open, os.open
        def hit(p) -> bool:
            p = os.path.abspath(os.fspath(p)) if isinstance(p, (str, os.PathLike)) else ''
            return p.startswith(str(self.path) + os.sep) and (only is None or only in os.path.basename(p))
        def os_open(p, flags, *a, **kw):
            fd = real_os_open(p, flags, *a, **kw)
            if flags & (os.O_WRONLY | os.O_RDWR) and hit(p): os.dup2(full, fd)
            return fd
        def open_(p, mode='r', *a, **kw):
            f = real_open(p, mode, *a, **kw)
            if any(c in mode for c in 'wax+') and hit(p): os.dup2(full, f.fileno())
            return f
        for mod, name, fn in ((os, 'open', os_open), (builtins, 'open', open_), (io, 'open', open_)): self.mp.setattr(mod, name, fn)
        import safetensors.torch
        from safetensors import SafetensorError
        real_save = safetensors.torch.save_file
        def save_file(tensors, filename, *a, **kw):
            if hit(filename): raise SafetensorError('Error while serializing: I/O error: No space left on device (os error 28)')
            return real_save(tensors, filename, *a, **kw)
        import transformers.modeling_utils, accelerate.utils.other   # they hold safetensors' writer under another name
        self.mp.setattr(safetensors.torch, 'save_file', save_file)
        self.mp.setattr(transformers.modeling_utils, 'safe_save_file', save_file)
        self.mp.setattr(accelerate.utils.other, 'safe_save_file', save_file)

def _files(folder:Path) -> list[str]:
    "Every file and folder under `folder`, relative."
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob('*'))

def _cli(argv, capfd) -> tuple[int, str]:
    capfd.readouterr()
    code = main(argv)
    return code, capfd.readouterr().err

def _one_error(err:str) -> str:
    lines = [l for l in err.splitlines() if 'error:' in l]
    assert 'Traceback' not in err and len(lines) == 1 and lines[0].startswith('stance_nb'), err[-3000:]
    return lines[0]

# ================================================================ training runs

def test_disk_full_at_final_save_real_safetensors_error(tiny_model, tmp_path, monkeypatch):
    "The run folder's filesystem has room for the claim and the predictions, not the model: safetensors' own error, named; nothing kept."
    from stance_nb.train import train_classifier
    from stance_nb.test_utils import synthetic_stance
    with Disk(tmp_path/'mnt', 1024, monkeypatch) as disk:
        disk.fill(leave_kb=16, only='.safetensors')
        with pytest.raises(OSError, match=rf"could not write the run's results in {disk.path}/train/\S+: {FULL} "
                                                r"\(SafetensorError: .*(os error 28|No space left).*none of them was kept") as ei:
            train_classifier(synthetic_stance(24, seed=0), train_config(tiny_model, epochs=1, checkpoint=False), name='full', out_dir=disk.path)
        (run,) = (disk.path/'train').iterdir()
        assert str(run) in str(ei.value)
        assert _files(run) == [], _files(run)   # no claim, predictions, model, temporary folder or record

def test_disk_full_at_checkpoint(tiny_model, tmp_path, monkeypatch):
    "A checkpoint that finds no space (safetensors' writer reports it): the error names the checkpoint and its folder; no .tmp-step-* left."
    from stance_nb.train import train_classifier
    from stance_nb.test_utils import synthetic_stance
    with Disk(tmp_path/'mnt', 1024, monkeypatch) as disk:
        disk.fill(leave_kb=16, only='.safetensors')
        with pytest.raises(OSError, match=rf"could not write checkpoint step-\S+ in {disk.path}/train/\S+/checkpoints: {FULL}"):
            train_classifier(synthetic_stance(24, seed=0), train_config(tiny_model, epochs=1, checkpoint_every=1), name='ckpt', out_dir=disk.path)
        (run,) = (disk.path/'train').iterdir()
        assert _files(run) in ([], ['checkpoints']), _files(run)

# ================================================================ the job store, its tables and copies

@pytest.fixture(scope='module')
def mine(tmp_path_factory):
    "train.csv and test.csv (40 rows each, AGAINST/FAVOR) as `--data` / `-p data=`."
    d = tmp_path_factory.mktemp('mine')
    write_splits(d, 40, LABELS)
    return json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')}, 'dev_fraction': 0.2}})

def _reproduce(data:str, out:Path, monkeypatch, *extra) -> list:
    "`stance_nb reproduce benchmark`, Table 4's majority baseline on `mine` into the job store under `out`."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    return ['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline', '-p', 'seeds=1', '-p', 'ratios=1.0', '-p', 'n_jobs=1',
            '-p', f'data={data}', '--output-dir', str(out), *extra]

def _leaderboard(data:str, out:Path, monkeypatch, *extra) -> list:
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    return ['leaderboard', '--models', 'majority,random', '--data', data, '--seeds', '1', '--resamples', '200', '--output-dir', str(out), *extra]

def test_disk_full_at_job_record_write(mine, tmp_path, capfd, monkeypatch):
    "The job store has room for the job's claim and predictions, not its record: exit 1 naming the record; the job folder is empty."
    with Disk(tmp_path/'mnt', 1024, monkeypatch) as disk:
        disk.fill(leave_kb=8, only='record.json')
        code, err = _cli(_reproduce(mine, disk.path, monkeypatch), capfd)
        (job,) = (disk.path/'benchmark'/'runs').iterdir()
        assert code == 1 and re.search(rf"{FULL} to write {job}/record\.json", _one_error(err)), err[-2000:]   # the record, written last
        assert _files(job) == [] and not (disk.path/'benchmark'/'benchmark_table4.md').exists()

def test_disk_full_at_claim(tmp_path, monkeypatch):
    "No space for a run folder's claim file (a tmpfs leaves an empty file then): the error names the folder; no claim is left to wait on."
    from stance_nb.claims import RunLock
    with Disk(tmp_path/'mnt', 64, monkeypatch) as disk:
        disk.fill(leave_kb=0)
        with pytest.raises(OSError, match=rf'{FULL} to claim {disk.path}/run \('): RunLock(disk.path/'run').acquire()
        assert _files(disk.path/'run') == []

def test_claim_that_names_no_owner_is_taken_at_once(tmp_path):
    "An empty or cut-short claim file left by a crash (fresh, so not stale by age) does not make a rerun wait: it is taken over at once."
    import time
    from stance_nb.claims import RunLock, holder
    run = tmp_path/'run'; run.mkdir()
    (run/'.lock.1').touch(); (run/'.lock.2').write_text('{"pid": 4')
    assert holder(run) is None
    t0 = time.time()
    with RunLock(run) as lock: assert lock.path.name == '.lock.3'
    assert time.time() - t0 < 5 and _files(run) == []

def test_disk_full_at_predictions_write(mine, tiny_model, tmp_path, capfd, monkeypatch):
    "`predict` (a model folder) into a full folder: exit 1 naming the file; neither the JSONL nor the CSV is left."
    test_csv = json.loads(mine)['mine']['path']['test']
    with Disk(tmp_path/'mnt', 64, monkeypatch) as disk:
        disk.fill(leave_kb=4, only='p.csv')
        code, err = _cli(['predict', '--run', str(tiny_model), '--input', test_csv, '--output', str(disk.path/'p'),
                           '--label-column', 'predicted'], capfd)
        assert code == 1 and re.search(rf"{FULL} to write {disk.path}/p\.(csv|jsonl)", _one_error(err)), err[-2000:]
        assert _files(disk.path) == []

def test_disk_full_at_page_write(mine, tmp_path, capfd, monkeypatch):
    "The leaderboard's jobs are done and its page finds 8 KB free: exit 1 naming a file of the page; no file of the page is left."
    with Disk(tmp_path/'mnt', 2048, monkeypatch) as disk:
        assert main(_leaderboard(mine, disk.path, monkeypatch)) == 0
        page = sorted(p for p in (disk.path/'leaderboard').iterdir() if p.is_file())
        assert len(page) >= 5, page
        for p in page: p.unlink()
        disk.fill(leave_kb=8, only='_leaderboard.md')
        code, err = _cli(_leaderboard(mine, disk.path, monkeypatch), capfd)
        assert code == 1 and re.search(rf"{FULL} to write {disk.path}/leaderboard/leaderboard_leaderboard", _one_error(err)), err[-2000:]
        assert [p for p in (disk.path/'leaderboard').iterdir() if p.is_file()] == []

def test_disk_full_at_table_write(mine, tmp_path, capfd, monkeypatch):
    "A reproduction's jobs are done and its tables find 8 KB free: exit 1 naming a table file; no table, note or conditions file is left."
    with Disk(tmp_path/'mnt', 1024, monkeypatch) as disk:
        assert main(_reproduce(mine, disk.path, monkeypatch)) == 0
        tables = [p for p in (disk.path/'benchmark').iterdir() if p.is_file()]
        assert len(tables) >= 3, tables
        for p in tables: p.unlink()
        disk.fill(leave_kb=8, only='table4.md')
        code, err = _cli(_reproduce(mine, disk.path, monkeypatch), capfd)
        assert code == 1 and re.search(rf"{FULL} to write {disk.path}/benchmark/benchmark_", _one_error(err)), err[-2000:]
        assert [p.name for p in (disk.path/'benchmark').iterdir()] == ['runs']

def test_disk_full_at_keep_records_copy(mine, tmp_path, capfd, monkeypatch):
    "`--keep-records` into a full folder: exit 1 naming the job's folder there; no copy, whole or half, and no temporary folder."
    with Disk(tmp_path/'mnt', 64, monkeypatch) as disk:
        disk.fill(leave_kb=0)
        code, err = _cli(_reproduce(mine, tmp_path/'out', monkeypatch, '--keep-records', str(disk.path/'kept')), capfd)
        assert code == 1 and re.search(rf"{FULL} to copy the job records into {disk.path}/kept/Majority_baseline-mine-", _one_error(err)), err[-2000:]
        assert _files(disk.path) in ([], ['kept']), _files(disk.path)

def test_disk_full_at_fasttext_save(tmp_path, monkeypatch):
    "fastText's own writer stops short on a full disk without a word: the save names the file and keeps neither a cut binary nor its JSON."
    if not _can_mount(): pytest.skip("fastText's C++ writer opens its file itself: this case needs a real full filesystem (a tmpfs)")
    from stance_nb.systems.baselines import FastTextClassifier
    from stance_nb.test_utils import synthetic_stance
    df = synthetic_stance(40, seed=1)
    m = FastTextClassifier(epoch=1, dim=100).fit(df[df.split == 'train'])
    with Disk(tmp_path/'mnt', 64, monkeypatch) as disk:
        disk.fill(leave_kb=8)
        with pytest.raises(OSError, match=rf'{FULL} to write {disk.path}/m\.bin \('): m.save(disk.path/'m.bin')
        assert _files(disk.path) == []
