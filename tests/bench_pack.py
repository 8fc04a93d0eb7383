"""Benchmark (not a test): one training step of the benchmark recipe on packed rows against padded batches, and the compiled
Adamax step against PyTorch's, each alternating in one process.

    python tests/bench_pack.py --threads 2                       # all-MiniLM-L6-v2, argmin's random batches, CPU
    python tests/bench_pack.py --device cuda --dataset fnc1      # the same on a GPU

**Step** (`-p pack=True` against the recipe): the dataset's training split through the package's own path, as an SDL job
runs it: `Task.from_registry`, `encode_task` (max_length 100), the first `--warmup + --steps` batches of
`batch_plan` (the authors' random batches of 16, seed `--seed`), `MultiTaskModel.from_encoder` (SAN head for pair
datasets) and `build_optimizer` with the recipe's Adamax, compiled in both (`compile_optimizer`), so that only the
layout differs. Two models with the same seeded initial weights take the same batches, one through `PadCollator`, the
other through `PackCollator`; the order of the two alternates from batch to batch. A step is forward + backward +
gradient clipping + optimizer step under the precision `mixed_precision='auto'` gives (`resolve_precision`: bf16 autocast on a
CPU with bf16 instructions and on GPUs that have it), timed with the wall clock (and a CUDA synchronize on a GPU). Reported: median step time over the
`--steps` measured batches of each layout, their ratio, and the tokens a batch carries (real, padded, packed).

**Optimizer** (`compile_optimizer=True` against the plain step): two copies of the model's parameters with the same
seeded random gradients; `build_optimizer` with `compile_optimizer=False` (PyTorch's Adamax, a loop over the tensors on
a CPU) and with `compile_optimizer=True` (one compiled loop; its first call builds it and is left out of the median).
Steps alternate; reported: median times after `--warmup` steps, their ratio, and the largest difference between the two
copies' parameters after all steps.

**Compiled encoder** (`--compile-encoder`, a third layout beside the two): the packed model again, its encoder compiled
with `torch.compile` (dynamic shapes, so that the varying number and length of packed rows build one graph), the lever the
field uses for long runs. Its dropout draws other random numbers (the compiler's generator), so its losses differ from
the eager model's like another seed's. Reported beside the others: its median step after the warm-up and its first step
(compilation included; `first_step_s` keeps every layout's first step, and the first layout to run also builds the
compiled Adamax step there).

`/proc/loadavg` is recorded before and after. Results go to `outputs/bench/pack-<device>.json`.
"""
from __future__ import annotations
import argparse, json, statistics, sys, time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trainer import process_setup, minilm_path, loadavg  # noqa: E402


def timed(fn, device) -> float:
    "Wall seconds of `fn()` (after the GPU's queued work is done, on a GPU)."
    import torch
    sync = torch.cuda.synchronize if device == 'cuda' else (lambda: None)
    sync(); t = time.perf_counter(); fn(); sync()
    return time.perf_counter() - t


def bench_step(a, model_path: str) -> dict:
    "Median step time, packed against padded, on the first batches of the recipe's epoch."
    import numpy as np, torch
    from transformers import AutoTokenizer
    from stance_nb.systems.mdl import Task, MDL_PRESETS, MultiTaskModel, encode_task, batch_plan, collate
    from stance_nb.train import PadCollator, build_optimizer, resolve_precision
    from stance_nb.train.packing import PackCollator
    import stance_nb.data.benchmark  # noqa: F401  (fills the registry)
    recipe = MDL_PRESETS['paper'].config
    task = Task.from_registry(a.dataset)
    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    enc = encode_task(task, tok, recipe.max_length)['train']
    plan = batch_plan({task.name: len(enc)}, recipe.batch_size, a.seed)[:a.warmup + a.steps]
    precision = resolve_precision('auto')   # the trainer's rule: bf16 (fp16 on GPUs without bf16), fp32 ('no') on CPUs without bf16
    cfg = replace(recipe, model=model_path, lr=5e-4, compile_optimizer=True)
    layouts = {'padded': PadCollator(tok), 'packed': PackCollator(tok, recipe.max_length)}
    names = [*layouts, *(['packed_compiled'] if a.compile_encoder else [])]
    runs = {}
    for name in names:
        torch.manual_seed(a.seed)
        net = MultiTaskModel.from_encoder(model_path, [task], pair_head=recipe.pair_head, tokenizer=tok, local_files_only=True).to(a.device).train()
        if name == 'packed_compiled': net.encoder.compile(dynamic=True)
        runs[name] = (net, build_optimizer(net, cfg, total_steps=10**6))
    def step(name, batch):
        net, opt = runs[name]
        batch = {k: (v.to(a.device) if torch.is_tensor(v) else v) for k, v in batch.items()}
        with torch.autocast(a.device, dtype=torch.float16 if precision == 'fp16' else torch.bfloat16, enabled=precision != 'no'):
            loss = net(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), recipe.max_grad_norm)
        opt.step(); opt.zero_grad(set_to_none=True)
    times, first, tokens = {n: [] for n in names}, {}, {'real': [], 'padded': [], 'packed': []}
    for i, (_, idx) in enumerate(plan):
        batches = {n: collate(enc, idx, c, task.name) for n, c in layouts.items()}
        if a.compile_encoder: batches['packed_compiled'] = batches['packed']   # the very same packed rows, collated once
        for n in (names if i % 2 == 0 else names[::-1]):
            t = timed(lambda: step(n, batches[n]), a.device)
            if i >= a.warmup: times[n].append(t)
            elif i == 0: first[n] = round(t, 2)
        if i >= a.warmup:
            tokens['real'].append(int(batches['padded']['attention_mask'].sum()))
            tokens['padded'].append(int(batches['padded']['input_ids'].numel()))
            tokens['packed'].append(int(batches['packed']['packed_input_ids'].numel()))
    med = {n: statistics.median(v) * 1e3 for n, v in times.items()}
    extra = dict(ratio_packed_compiled_over_packed=round(med['packed_compiled'] / med['packed'], 3)) if a.compile_encoder else {}
    return dict(dataset=a.dataset, batch_size=recipe.batch_size, max_length=recipe.max_length, precision=precision,
                warmup=a.warmup, steps=a.steps, step_ms={n: round(v, 1) for n, v in med.items()}, first_step_s=first,
                ratio_packed_over_padded=round(med['packed'] / med['padded'], 3), **extra,
                tokens_per_batch={k: round(float(np.mean(v)), 1) for k, v in tokens.items()},
                optimizer_compiled={n: bool(getattr(runs[n][1], 'compiled', False)) for n in runs})


def bench_optimizer(a, model_path: str) -> dict:
    "Median Adamax step, compiled against PyTorch's, over the model's parameters with seeded random gradients."
    import torch
    from transformers import AutoModel
    from stance_nb.systems.mdl import MDL_PRESETS
    from stance_nb.train import build_optimizer
    base = [p.detach().to(a.device) for p in AutoModel.from_pretrained(model_path, local_files_only=True).parameters()]
    g = torch.Generator().manual_seed(a.seed)
    grads = [[(torch.randn(p.shape, generator=g) * 1e-3).to(a.device) for p in base] for _ in range(3)]
    recipe = MDL_PRESETS['paper'].config
    runs = {}
    for name, flag in (('plain', False), ('compiled', True)):
        ps = [p.clone().requires_grad_() for p in base]
        cfg = replace(recipe, lr=5e-4, compile_optimizer=flag)
        runs[name] = (ps, build_optimizer(None, cfg, params=ps, total_steps=10**6))
    n = a.warmup + 3 * a.steps
    times = {k: [] for k in runs}
    for s in range(n):
        for k in (list(runs) if s % 2 == 0 else list(runs)[::-1]):
            ps, opt = runs[k]
            for p, gr in zip(ps, grads[s % 3]): p.grad = gr
            t = timed(opt.step, a.device)
            if s >= a.warmup: times[k].append(t)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    diff = max(float((x - y).detach().abs().max()) for x, y in zip(*(runs[k][0] for k in runs)))
    return dict(parameters=sum(p.numel() for p in base), warmup=a.warmup, steps=n - a.warmup,
                step_ms={k: round(v, 2) for k, v in med.items()}, ratio_compiled_over_plain=round(med['compiled'] / med['plain'], 3),
                max_abs_param_diff=diff, compiled=bool(getattr(runs['compiled'][1], 'compiled', False)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--model', default=None, help='model folder (default: all-MiniLM-L6-v2)')
    p.add_argument('--dataset', default='argmin', help="a registered dataset whose data is under $STANCE_NB_DATA")
    p.add_argument('--steps', type=int, default=10, help='measured steps of each layout (the optimizer bench takes 3x as many)')
    p.add_argument('--warmup', type=int, default=5)
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--device', choices=('cpu', 'cuda'), default='cpu')
    p.add_argument('--compile-encoder', action='store_true', help='a third layout: packed, with the encoder compiled (torch.compile, dynamic shapes)')
    p.add_argument('--out', default=None, help='output JSON (default outputs/bench/pack-<device>.json)')
    a = p.parse_args(argv)
    process_setup(a, p)
    model_path = a.model or minilm_path()
    record = dict(model=model_path if a.model else 'all-MiniLM-L6-v2', device=a.device, threads=a.threads, seed=a.seed,
                  loadavg_before=loadavg())
    record['step'] = bench_step(a, model_path)
    record['optimizer'] = bench_optimizer(a, model_path)
    record['loadavg_after'] = loadavg()
    out = Path(a.out or f'outputs/bench/pack-{a.device}.json'); out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + '\n')
    print(json.dumps(dict(step_ms=record['step']['step_ms'], ratio_packed_over_padded=record['step']['ratio_packed_over_padded'],
                          first_step_s=record['step']['first_step_s'], ratio_packed_compiled_over_packed=record['step'].get('ratio_packed_compiled_over_packed'),
                          optimizer_ms=record['optimizer']['step_ms'], ratio_compiled_over_plain=record['optimizer']['ratio_compiled_over_plain'],
                          loadavg=[record['loadavg_before'], record['loadavg_after']], out=str(out))))


if __name__ == '__main__':
    main()
