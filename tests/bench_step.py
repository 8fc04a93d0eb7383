"""Benchmark (not a test): what one optimizer step costs besides the matrix work, for the experiment layer's real SDL and
MDL steps and for Hugging Face `Trainer`'s step on the same model, alternating in one process.

    python tests/bench_step.py --threads 2                    # tiny encoder from a config (hidden 32, 2 layers), CPU
    python tests/bench_step.py --device cuda --model DIR      # a model folder (config, weights, tokenizer) on a GPU

At a tiny encoder the matrix work is nearly nothing, so what is left is what a GPU launches and waits for:

- **ours_sdl**: `stance_nb.systems.mdl.train_mdl` on one pair dataset, as a BERT_SDL job of the benchmark trains it
  (`experiment/systems/encoders.py` -> `train_mdl` -> `stance_nb.train.fit`): the stand-in recipe (`MDL_PRESETS['small']`:
  SAN head, Adamax, lr 5e-4, clipping at 1.0, batch 16, length 100, `mixed_precision='auto'` autocast, the authors'
  random batches). The run is stopped from `fit`'s `on_step` hook once the measured steps are done (no evaluation).
- **ours_mdl**: the same over three datasets (two pair datasets with SAN heads, one single-input with a linear head),
  batches of all three interleaved: the BERT_MDL step.
- **hf_sdl**: `transformers.Trainer` on the same `MultiTaskModel` bound to the SDL dataset: the same Adamax (built by
  `stance_nb.train.build_optimizer`) and schedule, `max_grad_norm=1.0`, bf16 autocast where ours computes in bf16,
  `DataCollatorWithPadding`; steps found with a `TrainerCallback`.

Variants (`--variants`, each with every trainer): **default** runs the code as it is; **foreach** forces the
multi-tensor Adamax (`build_optimizer(..., foreach=True)`) and multi-tensor clipping
(`torch.nn.utils.clip_grad_norm_(..., foreach=True)`) for the run, reaching `fit` and the Trainer without editing
them. Ours takes both paths by default; HF's Trainer clips with torch's choice, which loops over the tensors one at a
time on a CPU (on a GPU the two variants coincide), so `hf_sdl/foreach` is HF at its best. **graphs** (ours only, GPU only)
trains with `cuda_graphs=True`: the step compiled and replayed as CUDA graphs; give `--warmup` enough steps for the
compile and the first graph of each batch shape. **noprefetch** (ours, SDL only; GPU only, a CPU never prefetches)
copies each batch to the GPU in the training loop's own thread instead of pinning it ahead on a background thread
(`stance_nb.train.prefetch`): whether that thread pays for itself where the host sets the pace. `graphs` and
`noprefetch` run with the `ours_sdl` trainer only.

**Before and after in one run:** `--baseline REV` also runs the package as it was at git revision `REV` (its
`stance_nb/` exported to a temporary folder and imported from there, in a subprocess per run), alternating with the
current code; its results are keyed `<trainer>/<variant>@REV`, and `compare` gives the ratios of the current code to it.

Per step, after `--warmup` steps: **wall** seconds (the mean over `--steps` steps between two synchronised ends, and
the median of the per-step intervals); **CPU** seconds of this process; then `--profile-steps` more steps under
`torch.profiler`: **operators** (`aten::` calls: all, leaves (no `aten::` inside), and kernels = leaves that are no
view, reshape or empty allocation: each becomes at least one kernel launch on a GPU; on CUDA also the kernels and
`cudaLaunchKernel` calls recorded), **host syncs** (`aten::_local_scalar_dense` = `.item()`/`bool()` of a tensor, and
`aten::nonzero`, whose output size the host must read), and, counted in Python over the same steps,
`Tensor.item/.tolist/.cpu/.numpy/__bool__` calls with the lines that made them (on a CPU `.cpu()` of a CPU tensor is
no sync; the lines say which would be one on a GPU); **python** seconds = the profiled wall time minus the time inside
`aten::` operators (self time), per step: the host work between operators. Each trainer runs `--repeats` times, the
order alternating; medians over the repeats. Results go to `outputs/bench/step-<device>.json`.
"""
from __future__ import annotations
import argparse, collections, contextlib, functools, os, statistics, sys, tempfile, threading, time, traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trainer import process_setup, loadavg  # noqa: E402

TRAINERS = ('ours_sdl', 'ours_mdl', 'hf_sdl')
VARIANTS = ('default', 'foreach', 'graphs', 'noprefetch')
OURS_SDL_ONLY = ('graphs', 'noprefetch')   # variants of our SDL step alone
GRAPHS = {'on': False}   # set by the `graphs` variant for `run_ours`
SYNC_OPS = ('aten::_local_scalar_dense', 'aten::nonzero')
HOST_READS = ('item', 'tolist', 'cpu', 'numpy', '__bool__')
NO_KERNEL = {'aten::' + n for n in (
    'view', '_unsafe_view', 'as_strided', 'reshape', '_reshape_alias', 't', 'transpose', 'permute', 'expand', 'expand_as', 'unsqueeze',
    'squeeze', 'slice', 'select', 'alias', 'detach', 'detach_', 'empty', 'empty_like', 'empty_strided', 'resize_', 'split', 'chunk',
    'unbind', 'narrow', 'lift_fresh', 'view_as', 'numpy_T', 'result_type', 'contiguous', 'set_', 'to', 'type_as', 'flatten',
    'split_with_sizes', 'is_nonzero', 'item', 'stride', 'size', 'dim', 'is_floating_point', 'is_complex', 'requires_grad_',
    'resolve_conj', 'resolve_neg', '_has_compatible_shallow_copy_type', 'zeros_like_', 'clone_')}
HOST_SIDE = ('torch/optim/',)   # `.item()` there reads the optimizer's step counters, which torch keeps on the CPU (unless capturable): no GPU sync


class Stop(Exception):
    "Raised from the step hook when the measured steps are done: the run ends there (no evaluation)."


class HostReads:
    """Count `Tensor.item/.tolist/.cpu/.numpy/__bool__` calls while active, with the first caller outside torch of each, and the thread
    where it is not the main one (on a GPU, autograd runs backward on a thread of its own, whose stack holds none of our frames)."""
    def __init__(self): self.counts, self.sites, self.on, self._saved = collections.Counter(), collections.Counter(), False, {}
    def _wrap(self, name, orig):
        def f(t, *a, **k):
            if self.on:
                self.counts[name] += 1
                inner = fr = sys._getframe(1)
                while fr is not None and ('/torch/' in fr.f_code.co_filename or fr.f_code.co_filename.endswith('bench_step.py')): fr = fr.f_back
                if inner.f_code.co_filename.startswith('<'):   # generated code (`<string>`): name the function and the file that runs it
                    fr = inner.f_back
                    while fr is not None and fr.f_code.co_filename.startswith('<'): fr = fr.f_back
                where = lambda f: ('/'.join(Path(f.f_code.co_filename).parts[-2:]) + f':{f.f_lineno}'
                                   + (f' ({f.f_code.co_name})' if f.f_code.co_filename.startswith('<') else ''))
                site = f"{name} {where(inner)}" + (f" via {where(fr)}" if fr is not None and fr is not inner else '')
                if (th := threading.current_thread()) is not threading.main_thread():   # e.g. autograd's device thread, running backward
                    site += f" [thread {'not started by Python' if isinstance(th, threading._DummyThread) else th.name}]"
                self.sites[site] += 1
                if any(h in inner.f_code.co_filename for h in HOST_SIDE): self.counts[f'{name} (host-side)'] += 1
            return orig(t, *a, **k)
        return f
    def __enter__(self):
        import torch
        for n in HOST_READS:
            self._saved[n] = torch.Tensor.__dict__.get(n)
            setattr(torch.Tensor, n, self._wrap(n, getattr(torch.Tensor, n)))
        return self
    def __exit__(self, *exc):
        import torch
        for n, v in self._saved.items():
            if v is None: delattr(torch.Tensor, n)
            else: setattr(torch.Tensor, n, v)


class StepMeter:
    "Called after every optimizer step: times the measured steps, then profiles the next ones, then stops the run."
    def __init__(self, warmup:int, steps:int, profile_steps:int, device:str):
        self.warmup, self.steps, self.pn, self.device, self.n = warmup, steps, profile_steps, device, 0
        self.stamps, self.cpu, self.reads, self.prof = [], [], HostReads(), None
    def sync(self):
        import torch
        if self.device == 'cuda': torch.cuda.synchronize()
    def __call__(self, *_):
        from torch.profiler import profile, ProfilerActivity
        self.n += 1
        if self.warmup <= self.n <= self.warmup + self.steps:
            if self.n == self.warmup or self.n == self.warmup + self.steps: self.sync()
            self.stamps.append(time.perf_counter()); self.cpu.append(time.process_time())
        if self.n == self.warmup + self.steps:
            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.device == 'cuda' else [])
            self.prof = profile(activities=acts); self.sync(); self.prof.start()
            self.reads.__enter__(); self.reads.on = True; self.t_prof = time.perf_counter()
        elif self.n == self.warmup + self.steps + self.pn:
            self.sync(); self.prof_wall = time.perf_counter() - self.t_prof
            self.reads.on = False; self.reads.__exit__(); self.prof.stop()
            raise Stop()

    def result(self) -> dict:
        import numpy as np
        if self.prof is None or not hasattr(self, 'prof_wall'): raise RuntimeError(f"the run ended after {self.n} steps, before the measurement")
        ev = [e for e in self.prof.events()]
        aten = [e for e in ev if e.name.startswith('aten::')]
        leaves = [e for e in aten if not any(c.name.startswith('aten::') for c in e.cpu_children)]
        leaf_ids = {id(e) for e in leaves}
        per = lambda x: x/self.pn
        op_s = sum(e.self_cpu_time_total for e in aten)/1e6
        names = collections.Counter(e.name for e in aten if e.name not in NO_KERNEL and not under_foreach(e)
                                    and (id(e) in leaf_ids or e.name.startswith('aten::_foreach_')))
        out = dict(wall_s=(self.stamps[-1] - self.stamps[0])/self.steps, wall_median_s=float(np.median(np.diff(self.stamps))),
                   cpu_s=(self.cpu[-1] - self.cpu[0])/self.steps,
                   ops_all=per(len(aten)), ops_leaf=per(len(leaves)), ops_kernel=per(sum(names.values())),
                   top_kernel_ops={k: per(v) for k, v in names.most_common(12)},
                   syncs={k: per(sum(1 for e in aten if e.name == k)) for k in SYNC_OPS},
                   host_reads={k: per(self.reads.counts[k]) for k in HOST_READS},
                   host_side_reads=per(sum(v for k, v in self.reads.counts.items() if k.endswith('(host-side)'))),
                   host_read_sites={k: per(v) for k, v in self.reads.sites.most_common(25)},
                   profiled_wall_s=per(self.prof_wall), op_self_s=per(op_s), python_s=per(max(0.0, self.prof_wall - op_s)))
        out['syncs']['total'] = sum(out['syncs'].values())
        out['syncs']['device'] = out['syncs']['total'] - out['host_side_reads']   # what would wait for a GPU
        if self.device == 'cuda':
            import torch
            out['cuda_kernels'] = per(sum(1 for e in ev if e.device_type == torch.autograd.DeviceType.CUDA))
            out['cuda_launch_calls'] = per(sum(1 for e in ev if e.name in ('cudaLaunchKernel', 'cuLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernelEx')))
            # the `graphs` variant's replays
            out['cuda_graph_launches'] = per(sum(1 for e in ev if e.name in ('cudaGraphLaunch', 'cuGraphLaunch')))
        return out


def under_foreach(e) -> bool:
    "The event runs inside a multi-tensor (`_foreach_`) operator: on a CPU its per-tensor fallback, on a GPU part of one launch."
    p = e.cpu_parent
    while p is not None:
        if p.name.startswith('aten::_foreach_'): return True
        p = p.cpu_parent
    return False


@contextlib.contextmanager
def variant(name:str):
    "The code path of a variant for the duration of one run (`default`: unchanged)."
    if name == 'default': yield; return
    if name == 'graphs':
        GRAPHS['on'] = True
        try: yield
        finally: GRAPHS['on'] = False
        return
    if name == 'noprefetch':
        import stance_nb.train.loop as loop
        keep = loop.prefetch   # looked up by the loop at call time: the batches come as they are made, in the loop's own thread
        loop.prefetch = lambda batches, *a, **k: iter(batches)
        try: yield
        finally: loop.prefetch = keep
        return
    if name != 'foreach': raise ValueError(f"unknown variant {name!r}; valid: {', '.join(VARIANTS)}")
    import torch
    import stance_nb.train.loop as loop
    from stance_nb.train import build_optimizer
    clip, build = torch.nn.utils.clip_grad_norm_, loop.build_optimizer
    torch.nn.utils.clip_grad_norm_ = functools.partial(clip, foreach=True)   # accelerate's clip_grad_norm_ looks it up at call time
    loop.build_optimizer = functools.partial(build_optimizer, foreach=True)
    try: yield
    finally: torch.nn.utils.clip_grad_norm_, loop.build_optimizer = clip, build


def make_tasks(a, tok_texts=False):
    "Three synthetic datasets (two pair ones, one single-input) or `--dataset` (real rows) as `Task`s; the first is the SDL one."
    import pandas as pd
    from stance_nb.systems.mdl import Task
    from stance_nb.test_utils import synthetic_stance
    if a.dataset:
        from stance_nb.data import load
        import stance_nb.data.benchmark  # noqa: F401
        df = load(a.dataset)
        df = df[df.split == 'train'].sample(frac=1.0, random_state=a.seed).head(a.n).reset_index(drop=True)
        frames = [df, df.assign(target=df.target.sample(frac=1.0, random_state=1).to_numpy()), df.assign(target='')]
    else:
        frames = []
        for i in range(3):
            d = synthetic_stance(a.n, seed=i, splits=('train',), labels=('AGAINST', 'FAVOR', 'NONE'))
            d['text'] = [' '.join(d.text.iloc[(j + k) % len(d)] for k in range(a.text_repeat)) for j in range(len(d))]
            frames.append(d)
        frames[2] = frames[2].assign(target='')
    tasks = []
    for i, f in enumerate(frames):
        f = pd.concat([f.assign(split='train'), f.head(8).assign(split='dev'), f.head(8).assign(split='test')], ignore_index=True)
        tasks.append(Task.from_frame(f'd{i}', f, pair=i < 2))
    return tasks


def run_ours(a, model_path, tasks, meter) -> None:
    "`train_mdl` as a BERT_SDL/MDL job calls it, stopped by `meter` after the measured steps."
    from dataclasses import replace
    from stance_nb.systems.mdl import MDL_PRESETS, train_mdl
    cfg = replace(MDL_PRESETS['small'].config, model=model_path, epochs=1, checkpoint=False, seed=a.seed, batch_size=a.batch_size,
                  cuda_graphs=GRAPHS['on'])
    try: train_mdl(tasks, model_path, cfg, local_files_only=True, on_step=meter)
    except Stop: return
    raise RuntimeError(f"the training data ran out after {meter.n} steps: raise --n")


def run_hf(a, model_path, task, meter, tmp) -> None:
    "`transformers.Trainer` on the same model and head (`MultiTaskModel` bound to `task`), the same Adamax and schedule."
    import torch
    from dataclasses import replace
    from transformers import AutoTokenizer, Trainer, TrainingArguments, TrainerCallback, DataCollatorWithPadding
    from stance_nb.core import set_seed
    from stance_nb.systems.mdl import MDL_PRESETS, MultiTaskModel, encode_task
    from stance_nb.train import EncodedDataset, build_optimizer, build_scheduler, resolve_precision
    import stance_nb.train.loop as loop
    cfg = replace(MDL_PRESETS['small'].config, model=model_path, epochs=1, checkpoint=False, seed=a.seed, batch_size=a.batch_size)
    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    enc = encode_task(task, tok, cfg.max_length)['train']
    ds = EncodedDataset({k: [r.tolist() for r in v] for k, v in enc.encodings.items()}, enc.labels)
    set_seed(a.seed)
    net = MultiTaskModel.from_encoder(model_path, [task], pair_head=cfg.pair_head, dropout=cfg.head_dropout, encoder_dropout=cfg.dropout,
                                      tokenizer=tok, local_files_only=True, steps=cfg.san_steps, step_drop=cfg.san_step_drop)
    class Bound(torch.nn.Module):
        def __init__(self, m): super().__init__(); self.m = m
        def forward(self, **batch): return self.m(dataset=task.name, **batch)
    model = Bound(net)
    total = -(-len(ds)//cfg.batch_size)
    opt = loop.build_optimizer(model, cfg, total_steps=total)   # through the module, so that a variant reaches it
    class Hook(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            try: meter()
            except Stop: control.should_training_stop = True
    prec = resolve_precision(cfg.mixed_precision)
    args = TrainingArguments(output_dir=tmp, per_device_train_batch_size=cfg.batch_size, num_train_epochs=1, max_grad_norm=cfg.max_grad_norm,
                             save_strategy='no', logging_strategy='no', report_to=[], disable_tqdm=True, seed=a.seed, dataloader_num_workers=0,
                             bf16=prec == 'bf16', fp16=prec == 'fp16', use_cpu=a.device == 'cpu', remove_unused_columns=False)
    Trainer(model=model, args=args, train_dataset=ds, data_collator=DataCollatorWithPadding(tok, pad_to_multiple_of=8 if a.device == 'cuda' else None),
            optimizers=(opt, build_scheduler(opt, total, cfg.warmup_ratio)), callbacks=[Hook()]).train()
    if not hasattr(meter, 'prof_wall'): raise RuntimeError(f"the training data ran out after {meter.n} steps: raise --n")


def model_folder(a, tmp) -> tuple[str, dict]:
    "`--model` (a folder with config, weights and tokenizer), or the tiny encoder built from a config (hidden 32, 2 layers)."
    if a.model: return a.model, dict(model=Path(a.model).name)
    from stance_nb.test_utils import tiny_bert, tiny_tokenizer, synthetic_stance
    d = synthetic_stance(200, labels=('AGAINST', 'FAVOR', 'NONE'))
    tiny_bert(Path(tmp)/'tiny', num_labels=3, seed=0, texts=list(d.text) + list(d.target))
    return str(Path(tmp)/'tiny'), dict(model='tiny BERT from a config: hidden 32, 2 layers, 2 heads, intermediate 64')


def measure(a, model_path, tmp) -> dict:
    "Every trainer × variant, `--repeats` times in alternating order, in this process: name -> the runs' measurements."
    tasks = make_tasks(a)
    runners = dict(ours_sdl=lambda m: run_ours(a, model_path, tasks[:1], m), ours_mdl=lambda m: run_ours(a, model_path, tasks, m),
                   hf_sdl=lambda m: run_hf(a, model_path, tasks[0], m, tmp))
    names = [(t, v) for t in a.trainers for v in a.variants if v not in OURS_SDL_ONLY or t == 'ours_sdl']
    runs = {f'{t}/{v}': [] for t, v in names}
    for i in range(a.repeats):
        for t, v in (names if i % 2 == 0 else names[::-1]):   # alternating order: load from other processes hits all alike
            meter = StepMeter(a.warmup, a.steps, a.profile_steps, a.device)
            with variant(v): runners[t](meter)
            r = meter.result(); runs[f'{t}/{v}'].append(r)
            print(f"repeat {i+1} {t:8s} {v:8s}{' @' + a.code_label if a.code_label else ''}: {r['wall_s']*1e3:7.2f} ms/step  "
                  f"python {r['python_s']*1e3:6.2f} ms  ops {r['ops_kernel']:6.0f}  syncs {r['syncs']['total']:5.2f} "
                  f"(on a GPU {r['syncs']['device']:5.2f})  host reads {sum(r['host_reads'].values()):5.1f}", flush=True)
    return runs


def measure_with_baseline(a, argv:list, tmp) -> dict:
    """`measure` for the current code and for the package at revision `a.baseline`, each repeat in two subprocesses (alternating which
    goes first); the baseline's runs keyed `<trainer>/<variant>@<rev>`."""
    import json, subprocess
    repo = Path(__file__).resolve().parents[1]
    rev = subprocess.run(['git', '-C', str(repo), 'rev-parse', '--short', a.baseline], capture_output=True, text=True, check=True).stdout.strip()
    base = Path(tmp)/f'code-{rev}'; base.mkdir()
    arch = subprocess.run(['git', '-C', str(repo), 'archive', rev, 'stance_nb'], capture_output=True, check=True).stdout
    subprocess.run(['tar', '-x', '-C', str(base)], input=arch, check=True)
    keep, skip = [], {'--baseline': 1, '--repeats': 1, '--out': 1}
    it = iter(argv)
    for x in it:
        name = x.split('=')[0]
        if name in skip:
            if '=' not in x: next(it, None)
            continue
        keep.append(x)
    runs = {}
    for i in range(a.repeats):
        for label, code in ([(rev, base), ('', None)] if i % 2 == 0 else [('', None), (rev, base)]):
            out = Path(tmp)/f'run-{i}-{label or "current"}.json'
            cmd = [sys.executable, __file__, *keep, '--repeats', '1', '--out', str(out)] + (['--code', str(code), '--code-label', label] if code else [])
            subprocess.run(cmd, check=True)
            for k, rs in json.loads(out.read_text())['runs'].items(): runs.setdefault(k + (f'@{label}' if label else ''), []).extend(rs)
    return runs


def summarize(runs:dict, device:str) -> dict:
    "Medians over the repeats of each trainer/variant."
    med = lambda rs, f: float(statistics.median(f(r) for r in rs))
    summary = {}
    for k, rs in runs.items():
        summary[k] = dict(wall_ms=med(rs, lambda r: r['wall_s'])*1e3, wall_median_ms=med(rs, lambda r: r['wall_median_s'])*1e3,
                          cpu_ms=med(rs, lambda r: r['cpu_s'])*1e3, python_ms=med(rs, lambda r: r['python_s'])*1e3,
                          op_self_ms=med(rs, lambda r: r['op_self_s'])*1e3, ops_all=med(rs, lambda r: r['ops_all']),
                          ops_leaf=med(rs, lambda r: r['ops_leaf']), ops_kernel=med(rs, lambda r: r['ops_kernel']),
                          syncs=med(rs, lambda r: r['syncs']['total']), device_syncs=med(rs, lambda r: r['syncs']['device']),
                          syncs_by_op={s: med(rs, lambda r: r['syncs'][s]) for s in SYNC_OPS},
                          host_reads={h: med(rs, lambda r: r['host_reads'][h]) for h in HOST_READS},
                          host_read_sites=rs[0]['host_read_sites'], top_kernel_ops=rs[0]['top_kernel_ops'],
                          **({'cuda_kernels': med(rs, lambda r: r['cuda_kernels']), 'cuda_launch_calls': med(rs, lambda r: r['cuda_launch_calls']),
                              'cuda_graph_launches': med(rs, lambda r: r.get('cuda_graph_launches', 0))}
                             if device == 'cuda' else {}))
    return summary


def bench(a, model_path, tmp, argv:list) -> dict:
    import numpy as np
    runs = measure_with_baseline(a, argv, tmp) if a.baseline else measure(a, model_path, tmp)
    summary = summarize(runs, a.device)
    lengths = [float(np.mean(ln)) for ln in [t.frame[t.frame.split == 'train'].text.str.split().str.len() for t in make_tasks(a)]]
    return dict(summary=summary, compare=compare(summary), runs=runs, mean_words=lengths)


def table(summary:dict) -> str:
    "The medians as a text table, one line per trainer and variant."
    head = (f"{'trainer/variant':18s} {'ms/step':>8s} {'python ms':>9s} {'op ms':>7s} {'kernel ops':>10s} {'leaf ops':>8s} {'all ops':>7s} "
            f"{'syncs':>6s} {'GPU syncs':>9s} {'reads':>6s}")
    lines = [head, '-'*len(head)]
    for k, s in summary.items():
        lines.append(f"{k:18s} {s['wall_ms']:8.2f} {s['python_ms']:9.2f} {s['op_self_ms']:7.2f} {s['ops_kernel']:10.0f} {s['ops_leaf']:8.0f} "
                     f"{s['ops_all']:7.0f} {s['syncs']:6.2f} {s['device_syncs']:9.2f} {sum(s['host_reads'].values()):6.1f}")
    return '\n'.join(lines)


def compare(summary:dict) -> dict:
    """Ours against HF per variant (same model and head; and against HF at its best, `hf_sdl/foreach`), each variant against `default`
    per trainer, and the current code against the baseline revision: ratios of the medians."""
    out = {}
    for k, s in summary.items():
        tv, _, rev = k.partition('@')
        t, v = tv.split('/')
        if rev:
            if tv in summary:
                b = summary[tv]
                out[f'{tv}_over_{rev}'] = dict(wall=b['wall_ms']/s['wall_ms'], ops_kernel=b['ops_kernel']/s['ops_kernel'],   # current / baseline
                                               speedup=s['wall_ms']/b['wall_ms'],   # baseline / current: above 1, faster now
                                               device_syncs=(b['device_syncs'], s['device_syncs']))
            continue
        if t == 'ours_sdl':
            for hv in dict.fromkeys((v, 'foreach')):
                if (h := summary.get(f'hf_sdl/{hv}')) is not None:
                    out[f'ours_sdl/{v}_over_hf_sdl/{hv}'] = dict(wall=s['wall_ms']/h['wall_ms'], ops_kernel=s['ops_kernel']/h['ops_kernel'],
                                                               device_syncs=(s['device_syncs'], h['device_syncs']))
        if v != 'default' and f'{t}/default' in summary:
            b = summary[f'{t}/default']
            out[f'{t}/{v}_over_default'] = dict(wall=s['wall_ms']/b['wall_ms'], ops_kernel=s['ops_kernel']/b['ops_kernel'])
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--model', default=None, help='a model folder (config, weights, tokenizer); default: a tiny BERT built from a config')
    p.add_argument('--dataset', default=None, help='a registered dataset (its first --n training rows); default: synthetic pairs')
    p.add_argument('--n', type=int, default=1200, help='training rows per dataset (enough for warm-up, measured and profiled steps)')
    p.add_argument('--text-repeat', type=int, default=3, help='synthetic data: texts of this many synthetic sentences (about 30 words)')
    p.add_argument('--batch-size', type=int, default=16)
    p.add_argument('--warmup', type=int, default=5, help='steps before the measurement')
    p.add_argument('--steps', type=int, default=30, help='timed steps')
    p.add_argument('--profile-steps', type=int, default=25, help='steps under torch.profiler after the timed ones (25: one of fit\'s finite checks)')
    p.add_argument('--repeats', type=int, default=3, help='runs of each trainer and variant (alternating)')
    p.add_argument('--trainers', type=lambda s: s.split(','), default=list(TRAINERS), help=f"comma-separated, of {','.join(TRAINERS)}")
    p.add_argument('--variants', type=lambda s: s.split(','), default=['default', 'foreach'],
                   help=f"comma-separated code paths, of {','.join(VARIANTS)} (default: default,foreach)")
    p.add_argument('--threads', type=int, default=1, help='torch CPU threads (OMP_NUM_THREADS is set to the same)')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--device', choices=('cpu', 'cuda'), default='cpu', help='cuda: needs a GPU; cpu hides any GPU')
    p.add_argument('--out', default=None, help='output JSON (default outputs/bench/step-<device>.json)')
    p.add_argument('--baseline', default=None, help='a git revision: also run the package as it was there, alternating (before and after in one run)')
    p.add_argument('--code', default=None, help=argparse.SUPPRESS)        # a folder holding another `stance_nb/` to import (set by --baseline)
    p.add_argument('--code-label', default='', help=argparse.SUPPRESS)
    argv = list(sys.argv[1:] if argv is None else argv)
    a = p.parse_args(argv)
    if a.code: sys.path.insert(0, str(Path(a.code).resolve()))   # before anything imports stance_nb
    if bad := sorted(set(a.trainers) - set(TRAINERS)): p.error(f"unknown trainer(s) {bad}; valid: {', '.join(TRAINERS)}")
    if bad := sorted(set(a.variants) - set(VARIANTS)): p.error(f"unknown variant(s) {bad}; valid: {', '.join(VARIANTS)}")
    if a.n < (a.warmup + a.steps + a.profile_steps + 2)*a.batch_size: p.error(f"--n {a.n} is too few rows for the steps asked for")
    process_setup(a, p)
    import torch
    from stance_nb.core import outputs_dir, write_json, hardware, library_versions, git_sha, portable
    from stance_nb.train import resolve_precision
    load0 = loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        model_path, about = model_folder(a, tmp)
        res = bench(a, model_path, tmp, argv)
    record = dict(what='per optimizer step: wall, CPU and Python time, operators dispatched, host syncs; the experiment layer\'s SDL and MDL '
                       'steps (train_mdl, stand-in recipe) and transformers.Trainer on the same model; alternating runs, medians',
                  command='python tests/bench_step.py ' + ' '.join(argv), device=a.device, baseline=a.baseline,
                  device_name=torch.cuda.get_device_name(0) if a.device == 'cuda' else None, cuda=torch.version.cuda,
                  precision=resolve_precision('auto'), **about, dataset=a.dataset or f'synthetic pairs ({a.text_repeat} sentences a text)',
                  batch_size=a.batch_size, warmup=a.warmup, steps=a.steps, profile_steps=a.profile_steps, repeats=a.repeats, threads=a.threads,
                  seed=a.seed, load_average_before=load0, load_average_after=loadavg(), torch=torch.__version__, **res,
                  hardware=hardware(), versions=library_versions(), git=git_sha())
    out = Path(a.out) if a.out else outputs_dir(None, 'bench')/f'step-{a.device}.json'
    write_json(out, portable(record))
    print(table(res['summary']))
    print(f"wrote {out}")
    return record


if __name__ == '__main__': main()
