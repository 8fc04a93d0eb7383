"""Runs spread over workers that share one job store: worker processes on this machine (submitit's local executor), three
workers started at once with one killed mid-job, a job that fails, and the Slurm path through a fake `sbatch`/`sacct`/`srun`
on `PATH` that records what is submitted and runs the array's tasks here (this machine has no Slurm)."""
import collections, json, os, pickle, re, signal, subprocess, sys, textwrap, time
from pathlib import Path
import pandas as pd
import pytest

from stance_nb.cli import main
from stance_nb.fixtures.benchmark import write_benchmark_fixtures

ROOT = Path(__file__).resolve().parents[1]
KEYS = ('ibmcs', 'semeval2019t7')

@pytest.fixture(scope='module')
def data(tmp_path_factory):
    return write_benchmark_fixtures(tmp_path_factory.mktemp('data'), list(KEYS))

def _cli(argv, capfd, code=0) -> tuple[dict|None, str]:
    "`stance_nb argv --json` in this process: its JSON result (None when it failed) and its stderr."
    capfd.readouterr()
    got = main(argv + ['--json'])
    out = capfd.readouterr()
    assert got == code, out.err[-3000:]
    return (json.loads(out.out) if got == 0 else None), out.err

def _reproduce(data, out, *more) -> list:
    return ['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline,Random baseline,fastText', '-p', f'data_dir={data}',
            '-p', f"datasets={','.join(KEYS)}", '-p', 'seeds=1,2', '-p', 'n_jobs=1', '--output-dir', str(out), *more]

def _ran(submitit_folder:Path) -> list:
    "The job folders each worker reports it ran, over every worker ever submitted into `submitit_folder`."
    import submitit
    subs = [json.loads(l) for l in (submitit_folder/'submissions.jsonl').read_text().splitlines()]
    return [f for s in subs for i in s['job_ids'] for f in submitit.LocalJob(submitit_folder, i).result()['ran']]

# ================================================================ worker processes on this machine

def test_submitit_local_equals_serial(data, tmp_path, capfd, monkeypatch):
    "`--executor submitit-local --workers 2` writes the serial run's Table 4, and each job ran exactly once."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    serial, _ = _cli(_reproduce(data, tmp_path/'serial'), capfd)
    par, err = _cli(_reproduce(data, tmp_path/'par', '--executor', 'submitit-local', '--workers', '2'), capfd)
    a, b = (pd.read_csv(p/'benchmark'/'benchmark_table4.csv') for p in (tmp_path/'serial', tmp_path/'par'))
    pd.testing.assert_frame_equal(a, b)
    runs = tmp_path/'par'/'benchmark'/'runs'
    jobs = sorted(p.parent.name for p in runs.glob('*/record.json'))
    assert len(jobs) == len(serial['records']) == 2 + 2 * 2 * 2   # majority per dataset; random and fastText per dataset and seed
    ran = _ran(runs/'.submitit')
    assert sorted(ran) == jobs, collections.Counter(ran).most_common(3)   # every job ran once, in one of the workers
    assert not list(runs.glob('*/.lock*')), 'claims left behind'
    assert par['conditions']['reused'] == 0 and par['conditions']['executor']['kind'] == 'submitit-local'
    again, _ = _cli(_reproduce(data, tmp_path/'par', '--workers', '2'), capfd)   # everything finished: reused, nothing submitted
    assert again['conditions']['reused'] == len(jobs) and len((runs/'.submitit'/'submissions.jsonl').read_text().splitlines()) == 1

def test_threads_reach_each_local_worker(data, tmp_path, capfd, monkeypatch):
    "`--threads N` with submitit-local: each worker and each job it runs use N threads, not the machine's CPUs shared out among the workers."
    import torch
    from stance_nb.core import available_cpus
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    for k in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'): monkeypatch.setenv(k, os.environ.get(k, ''))   # `--threads` sets them here too
    old, n = torch.get_num_threads(), max(1, available_cpus()) + 1   # more than a default could give one worker
    try: _cli(_reproduce(data, tmp_path/'o', '-p', 'rows=Majority baseline', '-p', 'seeds=1', '--executor', 'submitit-local',
                         '--workers', '1', '--threads', str(n)), capfd)
    finally: torch.set_num_threads(old)
    runs = tmp_path/'o'/'benchmark'/'runs'
    assert [w['threads'] for w in _worker_results(runs/'.submitit')] == [n]
    recs = [json.loads(p.read_text()) for p in runs.glob('*/record.json')]
    assert len(recs) == len(KEYS) and {r['hardware']['torch_threads'] for r in recs} == {n}
    _cli(_reproduce(data, tmp_path/'d', '-p', 'rows=Majority baseline', '-p', 'seeds=1', '--executor', 'submitit-local', '--workers', '1'), capfd)
    assert [w['threads'] for w in _worker_results(tmp_path/'d'/'benchmark'/'runs'/'.submitit')] == [max(1, available_cpus())]   # the default

def test_detach_then_wait(data, tmp_path, capfd, monkeypatch):
    "`--detach` submits the workers and returns; `--wait` attaches to them and writes the tables; `--wait` with nothing to wait for says so."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    sub, _ = _cli(_reproduce(data, tmp_path/'o', '--workers', '2', '--detach'), capfd)
    assert sub['submitted'] and sub['executor'] == 'submitit-local'
    assert not (tmp_path/'o'/'benchmark'/'benchmark_table4.csv').exists()
    res, err = _cli(_reproduce(data, tmp_path/'o', '--workers', '2', '--wait'), capfd)
    assert (tmp_path/'o'/'benchmark'/'benchmark_table4.csv').exists() and len(res['records']) == 10
    _, err = _cli(_reproduce(data, tmp_path/'fresh', '--workers', '2', '--wait'), capfd, code=1)
    assert 'no worker of an earlier submission is queued or running' in err

# ================================================================ three workers at once, one killed mid-job, one job failing

_WORKER = textwrap.dedent('''
    import json, sys
    from stance_nb.fixtures.workers import worker_experiment
    from stance_nb.experiment.executor import work, WorkSpec
    a = json.loads(sys.argv[1])
    spec = WorkSpec(dict(exp=worker_experiment(), seeds=a['seeds'], data_dir=a['data'], out=a['out'],
                         settings=dict(smoke=True, sleep_s=a['sleep'], job_log=a['log'])), since=a['since'], wait=True)
    print(json.dumps(work(spec)))
''')

def test_three_workers_one_killed(data, tmp_path):
    "12 jobs, 3 workers at once: every job runs once, the killed worker's job is taken over, the failing job is a failed cell, and the run ends with JobsFailed."
    from stance_nb.experiment import prepare, execute, render, JobsFailed
    from stance_nb.fixtures.workers import worker_experiment
    since, log = time.time(), tmp_path/'jobs.log'
    a = dict(seeds=[1, 2, 3, 4, 5], data=str(data), out=str(tmp_path/'runs'), sleep=1.0, log=str(log), since=since)
    env = {**os.environ, 'STANCE_NB_QUIET': '1', 'OMP_NUM_THREADS': '1', 'STANCE_NB_HEARTBEAT_S': '1'}
    ws = [subprocess.Popen([sys.executable, '-c', _WORKER, json.dumps(a)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
          for _ in range(3)]
    victim, t0 = ws[0], time.time()
    while not (log.exists() and any(json.loads(l)['pid'] == victim.pid and json.loads(l)['event'] == 'start' for l in log.read_text().splitlines())):
        assert victim.poll() is None, victim.communicate()[1][-3000:]
        assert time.time() - t0 < 120, 'the first worker never started a job'
        time.sleep(0.05)
    victim.send_signal(signal.SIGKILL); victim.wait()
    for w in ws[1:]:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err[-3000:]
    events = [json.loads(l) for l in log.read_text().splitlines()]
    ends = collections.Counter(e['job'] for e in events if e['event'] == 'end')
    starts = collections.Counter(e['job'] for e in events if e['event'] == 'start')
    killed = [e['job'] for e in events if e['pid'] == victim.pid and e['event'] == 'start' and e['job'] not in
              {x['job'] for x in events if x['pid'] == victim.pid and x['event'] == 'end'}]
    assert len(killed) == 1 and starts[killed[0]] == 2 and ends[killed[0]] == 1   # started by the victim, finished by another worker
    assert len(ends) == 10 and set(ends.values()) == {1}                           # every Sleepy job finished exactly once
    assert all(n == 1 for j, n in starts.items() if j != killed[0])
    runs = tmp_path/'runs'
    assert len(list(runs.glob('*/record.json'))) == 10 and len(list(runs.glob('*/error.json'))) == 2
    assert not list(runs.glob('*/.lock*'))
    prep = prepare(worker_experiment(), seeds=a['seeds'], data_dir=data, out=runs, settings=dict(smoke=True, sleep_s=a['sleep'], job_log=a['log']))
    with pytest.raises(JobsFailed, match=r'2 job\(s\) failed: Broken on ibmcs: RuntimeError: this system always fails'):
        execute(prep, finished_only=True, since=since)
    res = execute(prep, finished_only=True, since=since, allow_failed=True)
    t4 = render(prep.exp, res, out=tmp_path)['4']
    assert set(t4[t4.row == 'Broken'].status) == {'failed'} and (t4[t4.row == 'Sleepy'].n == 5).all()

def _unloadable_model(bad:Path) -> Path:
    "A model folder with its tokenizer files (a WordPiece vocab.txt) whose model cannot be built (hidden size 0)."
    bad.mkdir(); (bad/'config.json').write_text('{"model_type": "bert", "hidden_size": 0}')
    (bad/'vocab.txt').write_text('\n'.join(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] + [f'w{i}' for i in range(200)]) + '\n')
    return bad

def test_failed_job_through_the_cli(data, tmp_path, capfd, monkeypatch):
    "A BERT job whose model folder does not load: its cell says failed with the reason, the other rows' numbers are there, and the command exits 1."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    bad = _unloadable_model(tmp_path/'model')
    _, err = _cli(['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline,BERT_SDL', '-p', f'data_dir={data}',
                   '-p', 'datasets=ibmcs', '-p', 'seeds=1', '-p', 'ratios=1.0', '-p', f'model={bad}', '--output-dir', str(tmp_path/'o')], capfd, code=1)
    line = [l for l in err.splitlines() if l.startswith('stance_nb')]
    assert len(line) == 1 and 'job(s) failed: BERT_SDL on ibmcs, seed 1' in line[0], err[-2000:]
    t4 = pd.read_csv(tmp_path/'o'/'benchmark'/'benchmark_table4.csv', keep_default_na=False)
    bert = t4[(t4.row == 'BERT_SDL') & (t4.column == 'ibmcs') & (t4.metric == 'f1_macro')]
    assert bert.status.tolist() == ['failed'] and bert.note.str.startswith('failed: BERT_SDL on ibmcs, seed 1:').all()
    assert (t4[t4.row == 'Majority baseline'].n > 0).all()

# ================================================================ Slurm through a fake sbatch, sacct and srun

_FAKE = {
'sbatch': '''
import json, os, re, subprocess, sys
fake = os.environ['FAKE_SLURM']
script = open(sys.argv[-1]).read()
n = len([f for f in os.listdir(fake) if f.startswith('submitted_')])
jid = 4242 + n
open(os.path.join(fake, f'submitted_{n}.sh'), 'w').write(script)
m = re.search(r'#SBATCH --array=0-(\\d+)%(\\d+)', script)
tasks = list(range(int(m.group(1)) + 1)) if m else [0]
json.dump(dict(tasks=tasks), open(os.path.join(fake, f'job_{jid}.json'), 'w'))
if os.environ.get('FAKE_SLURM_RUN'):
    for i in tasks:
        env = dict(os.environ, SLURM_JOB_ID=str(jid * 100 + i), SLURM_ARRAY_JOB_ID=str(jid), SLURM_ARRAY_TASK_ID=str(i), SLURM_NTASKS='1',
                   SLURM_JOB_NUM_NODES='1', SLURM_NODEID='0', SLURM_PROCID='0', SLURM_LOCALID='0', SLURM_JOB_NODELIST='fakenode')
        done = os.path.join(fake, f'{jid}_{i}.done')
        subprocess.Popen(['bash', '-c', f'bash "$0"; echo $? > "{done}"', sys.argv[-1]], env=env, start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f'Submitted batch job {jid}')
''',
'sacct': '''
import json, os, sys
fake = os.environ['FAKE_SLURM']
ids = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == '-j']
print('JobID|State|NodeList')
for jid in ids:
    for i in json.load(open(os.path.join(fake, f'job_{jid}.json')))['tasks']:
        done = os.path.join(fake, f'{jid}_{i}.done')
        state = ('COMPLETED' if open(done).read().strip() == '0' else 'FAILED') if os.path.exists(done) else 'RUNNING'
        print(f'{jid}_{i}|{state}|fakenode')
''',
'srun': '''
import os, sys
args, out, err = sys.argv[1:], None, None
while args and args[0].startswith('--'):
    a = args.pop(0)
    if a == '--output': out = args.pop(0)
    elif a == '--error': err = args.pop(0)
sub = lambda p: p.replace('%A', os.environ['SLURM_ARRAY_JOB_ID']).replace('%a', os.environ['SLURM_ARRAY_TASK_ID']).replace('%j', os.environ['SLURM_JOB_ID']).replace('%t', '0')
if out: os.dup2(os.open(sub(out), os.O_WRONLY | os.O_CREAT | os.O_APPEND), 1)
if err: os.dup2(os.open(sub(err), os.O_WRONLY | os.O_CREAT | os.O_APPEND), 2)
os.execvp(args[0], args)
''',
'scancel': 'pass\n',
}

@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    "A folder of fake Slurm commands first on PATH; what `sbatch` receives is kept in `FAKE_SLURM`."
    bin_, rec = tmp_path/'bin', tmp_path/'slurm'
    bin_.mkdir(); rec.mkdir()
    for name, code in _FAKE.items():
        p = bin_/name; p.write_text(f'#!{sys.executable}\n' + code); p.chmod(0o755)
    monkeypatch.setenv('PATH', f"{bin_}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv('FAKE_SLURM', str(rec))
    return rec

def test_slurm_submission(data, tmp_path, capfd, monkeypatch, fake_slurm):
    "The sbatch script submitit writes: one array of the requested workers, at most `--array-parallelism` at once, the GPUs, partition and time asked for, and each task runs our worker."
    from stance_nb.experiment.executor import work
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    res, _ = _cli(_reproduce(data, tmp_path/'o', '--executor', 'submitit', '--workers', '3', '--array-parallelism', '2', '--gpus-per-job', '1',
                             '--partition', 'gpu', '--time-min', '600', '--detach'), capfd)
    assert res['submitted'] and res['executor'] == 'submitit'
    (script,) = [p.read_text() for p in fake_slurm.glob('submitted_*.sh')]
    flags = dict(re.findall(r'#SBATCH --([\w-]+)=(\S+)', script))
    assert (flags['array'], flags['gpus-per-node'], flags['partition'], flags['time']) == ('0-2%2', '1', 'gpu', '600')
    folder = tmp_path/'o'/'benchmark'/'runs'/'.submitit'
    assert re.search(rf"srun --unbuffered --output {re.escape(str(folder))}/%A_%a_%t_log.out .*-m submitit.core._submit {re.escape(str(folder))}", script)
    tasks = sorted(folder.glob('4242_*_submitted.pkl'))
    assert len(tasks) == 3
    with open(tasks[0], 'rb') as f: d = pickle.load(f)
    assert d.function is work and [r.name for r in d.args[0].run['rows']] == ['Majority baseline', 'Random baseline', 'fastText']
    assert d.args[0].run['out'] == tmp_path/'o'/'benchmark'/'runs'

def test_slurm_run_end_to_end(data, tmp_path, capfd, monkeypatch, fake_slurm):
    "The array's tasks run (the fake Slurm starts them here): the tables equal the serial run's, each job ran once, and the records name their Slurm task."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path)); monkeypatch.setenv('FAKE_SLURM_RUN', '1')
    _cli(_reproduce(data, tmp_path/'serial'), capfd)
    res, _ = _cli(_reproduce(data, tmp_path/'o', '--executor', 'submitit', '--workers', '2', '--gpus-per-job', '1'), capfd)
    pd.testing.assert_frame_equal(*(pd.read_csv(p/'benchmark'/'benchmark_table4.csv') for p in (tmp_path/'serial', tmp_path/'o')))
    recs = [json.loads(p.read_text()) for p in (tmp_path/'o'/'benchmark'/'runs').glob('*/record.json')]
    assert len(recs) == 10 and {r['hardware']['worker'].rsplit('_', 1)[0] for r in recs} == {'slurm 4242'}
    assert res['conditions']['job_workers'] and all('slurm 4242_' in w for w in res['conditions']['job_workers'])

# ================================================================ the plan

def test_plan_on_this_cpu_times_the_encoder_jobs(data, tmp_path, capfd, monkeypatch):
    """Without a GPU, `--plan` with the local executor prices each encoder job as the run will announce it, timed on this CPU
    (not at a GPU's rate, which put hours of CPU work at seconds); with `--executor submitit` it keeps the declared GPU rate."""
    import torch
    from stance_nb.test_utils import tiny_bert
    if torch.cuda.is_available(): pytest.skip('a GPU is here: the plan prices at its rate')
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    tiny_bert(tmp_path/'tiny', num_labels=3, seed=0)
    argv = ['reproduce', 'benchmark', '-p', f'data_dir={data}', '-p', 'datasets=ibmcs', '-p', 'rows=BERT_SDL', '-p', 'seeds=1', '-p', 'ratios=1.0',
            '-p', f"model={tmp_path/'tiny'}", '--output-dir', str(tmp_path/'o'), '--plan']
    res, err = _cli(argv, capfd)
    assert res['plan']['jobs'] == 1 and res['plan']['unknown'] == 0 and 'timed on this CPU (no GPU)' in err, err
    res, err = _cli(argv + ['--executor', 'submitit'], capfd)
    assert 'timed on this CPU' not in err and f"at {125.0:g} TFLOP/s" in err, err

def test_plan_runs_nothing(data, tmp_path, capfd, monkeypatch):
    "`--plan` over all rows and tables, five seeds: the job count, device-hours and the wall time on 1, 4 and 16 workers; no job folder is made."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    res, err = _cli(['reproduce', 'benchmark', '-p', f'data_dir={data}', '-p', f"datasets={','.join(KEYS)}", '--output-dir', str(tmp_path/'o'),
                     '--plan', '--throughput', '{"bert-large-uncased": {"train": 100, "predict": 1000}}'], capfd)
    p = res['plan']
    assert p['jobs'] > 0 and set(p['wall_hours']) == {'1', '4', '16'} and p['wall_hours']['1'] >= p['wall_hours']['4'] >= p['wall_hours']['16']
    assert res['rows']['BERT_SDL']['jobs'] >= 2 * 5   # 2 datasets x 5 seeds at full data, and the low-resource subsets there are
    assert re.search(r'\d+ job\(s\) to run; [\d.]+ device-hours estimated', err) and 'on 16 workers' in err
    assert 'declared throughput of bert-large-uncased' in err and 'MT-DNN_SDL: not run' in err
    assert not (tmp_path/'o').exists()   # no folder made: a plan writes nothing

# ================================================================ several jobs per GPU (fake device lists)

def _worker_results(submitit_folder:Path) -> list[dict]:
    "What every worker submitted into `submitit_folder` returned."
    import submitit
    subs = [json.loads(l) for l in (submitit_folder/'submissions.jsonl').read_text().splitlines()]
    return [submitit.LocalJob(submitit_folder, i).result() for s in subs for i in s['job_ids']]

def test_jobs_per_gpu_places_k_workers_on_each_gpu(data, tmp_path, monkeypatch):
    "Two fake GPUs, two jobs per GPU: four workers, two seeing each GPU; every job runs once; the plan's wall time is that of four workers."
    import stance_nb.experiment.executor as X
    from stance_nb.experiment import prepare, plan_cost
    from stance_nb.fixtures.workers import worker_experiment
    monkeypatch.setattr(X, '_gpus', lambda: [0, 1])
    run = dict(exp=worker_experiment(), seeds=[1, 2, 3], data_dir=data, out=tmp_path/'runs', settings=dict(smoke=True, sleep_s=0.3))
    res = X.run_on(X.executor_from('submitit-local', jobs_per_gpu=2), **run)
    workers = _worker_results(tmp_path/'runs'/'.submitit')
    assert collections.Counter(w['gpus'] for w in workers) == {'0': 2, '1': 2}
    ran = [f for w in workers for f in w['ran']]
    assert sorted(ran) == sorted(p.parent.name for p in (tmp_path/'runs').glob('*/record.json')) and len(ran) == 2 * 3
    assert res.conditions['executor']['jobs_per_gpu'] == 2 and len(res.failed) == 2   # `Broken` fails on both datasets, once each
    df, one = plan_cost(prepare(**{**run, 'out': tmp_path/'fresh'}), throughput={}, jobs_per_gpu=1)
    _, four = plan_cost(prepare(**{**run, 'out': tmp_path/'fresh'}), throughput={}, jobs_per_gpu=4)
    assert four['wall_hours'][1] == one['wall_hours'][4] and four['wall_hours'][4] == one['wall_hours'][16]

def test_oom_on_a_shared_gpu_requeues_the_job(data, tmp_path, monkeypatch, capfd):
    "A job out of GPU memory beside another worker leaves nothing behind, goes back to the queue, and runs alone; the output says why."
    import stance_nb.experiment.executor as X
    from stance_nb.fixtures.workers import worker_experiment
    monkeypatch.setattr(X, '_gpus', lambda: [0])
    res = X.run_on(X.executor_from('submitit-local', jobs_per_gpu=2), exp=worker_experiment(greedy=True), seeds=[1], data_dir=data,
                   out=tmp_path/'runs', settings=dict(smoke=True, sleep_s=0.3))
    out = capfd.readouterr().out
    assert re.search(r"\d job\(s\) requeued after running out of GPU memory with 2 jobs per GPU \(Greedy on \w+, seed 1: OutOfMemoryError: "
                     r"CUDA out of memory\. Tried to allocate 2\.00 GiB \(a test double\)\): submitting new workers, 1 job per GPU", out), out[-2000:]
    runs = tmp_path/'runs'
    assert not res.failed and not list(runs.glob('*/error.json'))
    greedy = [p for p in runs.glob('Greedy-*/record.json')]
    assert len(greedy) == 2 and len(list(runs.glob('*/record.json'))) == 4    # every job finished once: none lost, none failed
    assert {json.loads(p.read_text())['hardware']['devices'] for p in greedy} == {'0'}
    assert res.conditions['executor']['jobs_per_gpu'] == 1   # the requeued jobs ran one per GPU

def test_jobs_per_gpu_on_the_command_line(data, tmp_path, capfd, monkeypatch):
    """`--jobs-per-gpu 4` divides the plan's wall time accordingly and says so, or, timed here without a GPU, says the jobs share this
    CPU's cores (alone it means submitit-local); executor 'local' refuses it."""
    import torch
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    plan = _reproduce(data, tmp_path/'o', '--plan')
    one, _ = _cli(plan, capfd)
    four, err = _cli(plan + ['--jobs-per-gpu', '4'], capfd)
    assert four['executor'] == 'submitit-local' and four['plan']['jobs_per_gpu'] == 4
    gpu = torch.cuda.is_available()   # the division itself: nbs/10n_experiment.executor.ipynb (this store has no timings yet)
    assert ('4 jobs at once on each GPU' if gpu else "no GPU here: the 4 jobs at once share this CPU's cores") in err, err
    assert one['plan']['wall_hours']['1'] is None and 'wall time: unknown' in err   # none of the jobs has an estimate: said, not 0.0 h
    with pytest.raises(SystemExit) as e: main(_reproduce(data, tmp_path/'o', '--executor', 'local', '--jobs-per-gpu', '2') + ['--json'])
    assert e.value.code == 2 and "needs executor 'submitit-local' or 'submitit'" in capfd.readouterr().err

def test_plan_counts_the_examples_every_sdl_job_trains(tmp_path, capfd, monkeypatch):
    """`--plan` for the BERT_SDL jobs of the stand-in recipe (2 epochs) over ibmcs, semeval2016t6, perspectrum and arc: each
    job trains 2 × its training rows, 45,584 in all; priced for Slurm with no GPU here, the rate is named an assumption."""
    from stance_nb.test_utils import tiny_bert
    root = Path(os.environ.get('STANCE_NB_DATA') or ROOT.parent/'shared'/'data')
    if not all((root/k).exists() for k in ('ibmcs', 'semeval2016t6', 'perspectrum', 'arc')): pytest.skip(f'the benchmark data is not in {root}')
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    tiny_bert(tmp_path/'tiny', num_labels=3, seed=0)
    res, err = _cli(['reproduce', 'benchmark', '-p', f'data_dir={root}', '-p', 'datasets=ibmcs,semeval2016t6,perspectrum,arc', '-p', 'rows=BERT_SDL',
                     '-p', 'seeds=1', '-p', 'ratios=1.0', '-p', 'epochs=2', '-p', 'lr=5e-4', '-p', f"model={tmp_path/'tiny'}",
                     '--output-dir', str(tmp_path/'o'), '--plan', '--executor', 'submitit'], capfd)
    assert res['plan']['jobs'] == 4 and res['plan']['train_examples'] == 45_584 == 2 * 22_792
    assert re.search(r'BERT_SDL: 4 job\(s\), [\d.]+ h, 45,584 examples trained', err), err
    import torch
    if not torch.cuda.is_available(): assert 'at 125 TFLOP/s (an assumed rate, not a measurement: no GPU here' in err, err

def test_plan_here_cannot_price_a_model_that_does_not_load(data, tmp_path, capfd, monkeypatch):
    "On this machine without a GPU, a model that does not load is not priced at a GPU's rate: the plan says it cannot price it."
    import torch
    if torch.cuda.is_available(): pytest.skip('a GPU is here')
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    bad = _unloadable_model(tmp_path/'model')
    res, err = _cli(['reproduce', 'benchmark', '-p', f'data_dir={data}', '-p', 'datasets=ibmcs', '-p', 'rows=BERT_SDL', '-p', 'seeds=1',
                     '-p', 'ratios=1.0', '-p', f'model={bad}', '--output-dir', str(tmp_path/'o'), '--plan'], capfd)
    assert res['plan']['unknown'] == 1 and f'cannot price: {bad} is not loadable here' in err and 'TFLOP/s' not in err, err

def test_slurm_runs_k_worker_tasks_in_each_gpu_job(data, tmp_path, capfd, monkeypatch, fake_slurm):
    "`--jobs-per-gpu 2` on Slurm: an array of half as many jobs, each with two worker tasks on its GPU."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path))
    res, _ = _cli(_reproduce(data, tmp_path/'o', '--executor', 'submitit', '--workers', '4', '--jobs-per-gpu', '2', '--gpus-per-job', '1',
                             '--detach'), capfd)
    (script,) = [p.read_text() for p in fake_slurm.glob('submitted_*.sh')]
    flags = dict(re.findall(r'#SBATCH --([\w-]+)=(\S+)', script))
    assert (flags['array'].split('%')[0], flags['ntasks-per-node'], flags['gpus-per-node']) == ('0-1', '2', '1'), flags
    folder = tmp_path/'o'/'benchmark'/'runs'/'.submitit'
    with open(sorted(folder.glob('4242_*_submitted.pkl'))[0], 'rb') as f: d = pickle.load(f)
    assert d.args[0].jobs_per_gpu == 2   # each task knows its GPU is shared: a job out of memory is requeued, not failed
