"""Benchmark (not a test): prediction throughput of the package's prediction path against a `transformers` pipeline, on the
same model and the full SemEval-2016 Task 6 test set (1,249 (target, tweet) pairs), alternating in one process.

    python tests/bench_predict.py --threads 2 --repeats 3      # all-MiniLM-L6-v2 with a 3-way head, CPU
    python tests/bench_predict.py --device cuda                # the same on a GPU

The model: all-MiniLM-L6-v2 under a 3-way sequence-classification head (`AutoModelForSequenceClassification`, seeded with
`torch.manual_seed`). A random head scores all pairs nearly alike (nearly one label for everything, and near-ties that
any rounding flips), which makes label agreement meaningless, so the head is first fitted: logistic regression on the
frozen encoder's pooled output of `--head-rows` seeded training pairs (full-batch Adam, fp32, seeded; `--head-rows 0`
keeps the random head). The model is saved once to a temporary folder; both sides load it from there.

- **ours**: `stance_nb.predict.load_predictor(folder)` and its `predict(df)`, as the CLI's `predict` command runs it:
  `tokenize_pairs` on (target, text) as in training, `predict_logits` (batches of 64 sorted by length, under
  `mixed_precision='auto'`: bf16 autocast on GPUs and on CPUs with native bf16 instructions, fp32 elsewhere), then the
  label names. The tokenizer's in-memory cache is emptied before every run, so tokenization is timed every time.
  **ours_fp32** is the same with `mixed_precision='no'` (`--no-ours-fp32` skips it).
- **pipeline**: `transformers.pipeline('text-classification', model=folder, tokenizer=folder)` called on the list of
  `{'text': target, 'text_pair': text}` dicts: at its defaults (no `batch_size`: one pair per forward; fp32), with
  `batch_size=64` (`--pipeline-batch-size`), and with `batch_size=64` and `dtype=torch.bfloat16` (bf16 weights, the
  pipeline's own precision switch; `--no-pipeline-bf16` skips it).

Times are wall seconds (and this process's CPU seconds) around the one call that labels every row; loading the model is
left out on both sides (once per process). One warm-up round on 64 rows, then `--repeats` rounds that alternate the
settings; medians. `ratio_ours_over_pipeline` is ours' predictions/s over the FASTEST pipeline setting measured (named in
`ratio_against`); `ratio_ours_over_pipeline_default` is against the pipeline at its defaults;
`ratio_ours_over_faithful_pipeline` is against the fastest pipeline setting whose labels agree with the pipeline's own
fp32 defaults on >= 99.5 % of rows (named in `faithful_pipeline`). Label agreement compares predicted labels (argmax
against argmax) row by row: every setting against ours (the goal: >= 99.5 % between ours and the fp32 pipeline) and
against the fp32 pipeline at its defaults. FLOPs: forward only, counted as in `tests/bench_trainer.py` (`model_flops`:
no embedding tables, the head once per example, attention on each example's real length); MFU against the bf16 (and
the own-precision) peak measured with `torch.mm` at the start and at the end (the higher; see `tests/bench_trainer.py`).
`/proc/loadavg` is recorded before and after. Results go to `outputs/bench/predict-<device>.json`.
"""
from __future__ import annotations
import argparse, os, sys, time, json, tempfile, statistics
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trainer import process_setup, minilm_path, load_rows, loadavg, param_counts, model_flops, measured_peaks, best_peaks, mfu, FLOP_ACCOUNTING  # noqa: E402

LABELS = ['AGAINST', 'FAVOR', 'NONE']


def test_rows(dataset: str) -> pd.DataFrame:
    "Every test row of `dataset` (via the package's loader), in file order."
    import stance_nb.data.benchmark  # noqa: F401  (fills the registry)
    from stance_nb.data import load
    df = load(dataset)
    return df[df.split == 'test'].reset_index(drop=True)


def build_model(folder: Path, a) -> dict:
    "MiniLM + a seeded 3-way head, the head fitted on `--head-rows` training pairs (frozen encoder), saved to `folder`."
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from stance_nb.train import tokenize_pairs, EncodedDataset, PadCollator
    torch.manual_seed(a.seed)
    model = AutoModelForSequenceClassification.from_pretrained(minilm_path(), num_labels=3, id2label=dict(enumerate(LABELS)),
                                                               label2id={l: i for i, l in enumerate(LABELS)}, local_files_only=True).eval()
    tok = AutoTokenizer.from_pretrained(minilm_path(), local_files_only=True)
    info = dict(head='random (seeded)', head_rows=0)
    if a.head_rows:
        tr = load_rows(a.dataset, a.head_rows, a.seed)
        ds = EncodedDataset(tokenize_pairs(tok, tr.text.tolist(), tr.target.tolist(), 512, cache=False))
        collate, feats = PadCollator(tok), []
        with torch.no_grad():
            for i in range(0, len(ds), 64):
                feats.append(model.base_model(**collate([ds[j] for j in range(i, min(i+64, len(ds)))])).pooler_output)
        x, y = torch.cat(feats), torch.tensor([LABELS.index(l) for l in tr.label])
        head = model.classifier
        opt = torch.optim.Adam(head.parameters(), lr=1e-2)
        for _ in range(a.head_steps):
            opt.zero_grad(); loss = torch.nn.functional.cross_entropy(head(x), y); loss.backward(); opt.step()
        with torch.no_grad(): acc = float((head(x).argmax(-1) == y).float().mean())
        info = dict(head='logistic regression on the frozen pooled output', head_rows=len(tr), head_steps=a.head_steps,
                    head_train_loss=loss.item(), head_train_accuracy=acc)
    model.save_pretrained(folder); tok.save_pretrained(folder)
    return info


def run_ours(predict, df) -> dict:
    from stance_nb.train.batches import _TOKEN_CACHE
    _TOKEN_CACHE.clear()                       # tokenization is part of every run
    t0, c0 = time.perf_counter(), time.process_time()
    labels = list(predict(df))
    return dict(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0, labels=labels)


def run_pipeline(pipe, inputs, batch_size) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    out = pipe(inputs, batch_size=batch_size) if batch_size else pipe(inputs)
    labels = [o['label'] if isinstance(o, dict) else o[0]['label'] for o in out]
    return dict(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0, labels=labels)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--dataset', default='semeval2016t6')
    p.add_argument('--repeats', type=int, default=3, help='rounds (each runs every setting once, alternating)')
    p.add_argument('--threads', type=int, default=1, help='torch CPU threads (OMP_NUM_THREADS is set to the same)')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--batch-size', type=int, default=64, help="ours: load_predictor's batch size (its default: 64)")
    p.add_argument('--pipeline-batch-size', type=int, default=64, help='the batched pipeline settings (0: skip them)')
    p.add_argument('--no-pipeline-bf16', dest='pipeline_bf16', action='store_false', help='skip the pipeline with bf16 weights')
    p.add_argument('--no-ours-fp32', dest='ours_fp32', action='store_false', help="skip ours with mixed_precision='no'")
    p.add_argument('--head-rows', type=int, default=512, help='training pairs the head is fitted on (0: the seeded random head)')
    p.add_argument('--head-steps', type=int, default=300, help='full-batch Adam steps of the head fit')
    p.add_argument('--limit', type=int, default=None, help='only the first N test rows (a quick check; the figures use all)')
    p.add_argument('--device', choices=('cpu', 'cuda'), default='cpu', help='cuda: needs a GPU; cpu hides any GPU')
    p.add_argument('--out', default=None, help='output JSON (default outputs/bench/predict-<device>.json)')
    a = p.parse_args(argv)
    process_setup(a, p)
    import torch, transformers
    from transformers import pipeline, AutoModelForSequenceClassification, AutoTokenizer
    from stance_nb.core import outputs_dir, write_json, hardware, library_versions, git_sha, portable
    from stance_nb.predict import load_predictor
    from stance_nb.train import tokenize_pairs
    load0 = loadavg()
    peaks = measured_peaks(a.device)
    print(f"measured peak: bf16 {peaks['bf16']/1e9:.0f} GFLOP/s, fp32 {peaks['fp32']/1e9:.0f} GFLOP/s ({peaks['how']})", flush=True)
    df = test_rows(a.dataset)
    if a.limit: df = df.head(a.limit)
    inputs = [{'text': t, 'text_pair': x} for t, x in zip(df.target.astype(str), df.text.astype(str))]
    dev = 0 if a.device == 'cuda' else -1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)/'model'
        head = build_model(folder, a)
        print(f"model: {head}", flush=True)
        counts = param_counts(AutoModelForSequenceClassification.from_pretrained(folder))
        predict, info = load_predictor(folder, batch_size=a.batch_size)
        runners = {'ours': lambda rows: run_ours(predict, rows)}
        precision = {'ours': info['precision']}
        if a.ours_fp32:
            predict32, info32 = load_predictor(folder, batch_size=a.batch_size, mixed_precision='no')
            runners['ours_fp32'] = lambda rows: run_ours(predict32, rows); precision['ours_fp32'] = info32['precision']
        pipe = pipeline('text-classification', model=str(folder), tokenizer=str(folder), device=dev)
        runners['pipeline_default'] = lambda rows: run_pipeline(pipe, rows, None); precision['pipeline_default'] = 'no'
        batch = {'ours': a.batch_size, 'ours_fp32': a.batch_size, 'pipeline_default': 1}
        if a.pipeline_batch_size:
            k = f'pipeline_batch{a.pipeline_batch_size}'
            runners[k] = lambda rows: run_pipeline(pipe, rows, a.pipeline_batch_size); precision[k] = 'no'; batch[k] = a.pipeline_batch_size
            if a.pipeline_bf16:
                pipe16 = pipeline('text-classification', model=str(folder), tokenizer=str(folder), device=dev, dtype=torch.bfloat16)
                k = f'pipeline_batch{a.pipeline_batch_size}_bf16'
                runners[k] = lambda rows: run_pipeline(pipe16, rows, a.pipeline_batch_size); precision[k] = 'bf16'; batch[k] = a.pipeline_batch_size
        rows = {name: (df if name.startswith('ours') else inputs) for name in runners}
        for name, run in runners.items():   # warm-up: first calls allocate and pick kernels
            run(rows[name][:64] if name.startswith('pipeline') else rows[name].head(64))
        res = {k: [] for k in runners}
        for i in range(a.repeats):
            for name, run in runners.items():
                r = run(rows[name]); res[name].append(r)
                print(f"repeat {i+1} {name:24s}: {len(df)/r['seconds']:7.1f} predictions/s  {r['seconds']:6.2f} s  "
                      f"{len(df)/r['cpu_seconds']:7.1f} per CPU-s  ({precision[name]}; load {loadavg()[0]:.2f})", flush=True)
        tok = AutoTokenizer.from_pretrained(folder)   # the real lengths ours encodes (the pipeline's are the same: no row is truncated)
        lengths = tokenize_pairs(tok, df.text.astype(str).tolist(), df.target.astype(str).tolist(), info['max_length'], cache=False)['input_ids']
    flops = model_flops(counts, [len(x) for x in lengths], training=False)
    peaks_end = measured_peaks(a.device)
    pk = best_peaks(peaks, peaks_end)
    gold = df.label.tolist()
    labels = {k: v[0]['labels'] for k, v in res.items()}
    stable = {k: all(r['labels'] == v[0]['labels'] for r in v) for k, v in res.items()}
    summary = {}
    for name, rs in res.items():
        sec = statistics.median(r['seconds'] for r in rs)
        gf = flops['flops']/sec/1e9
        summary[name] = dict(predictions_per_s=len(df)/sec, seconds=sec, seconds_all=[r['seconds'] for r in rs],
                             predictions_per_cpu_s=len(df)/statistics.median(r['cpu_seconds'] for r in rs),
                             precision=precision[name], batch_size=batch[name], gflop_per_s=gf, **mfu(gf, precision[name], pk),
                             label_agreement_with_ours=float(np.mean(np.array(labels[name]) == np.array(labels['ours']))),
                             label_agreement_with_pipeline_default=float(np.mean(np.array(labels[name]) == np.array(labels['pipeline_default']))),
                             accuracy=float(np.mean(np.array(labels[name]) == np.array(gold))),
                             label_counts={l: labels[name].count(l) for l in LABELS}, same_labels_every_repeat=stable[name])
    pipes = {k: v for k, v in summary.items() if k.startswith('pipeline')}
    fastest = max(pipes, key=lambda k: pipes[k]['predictions_per_s'])
    faithful = max((k for k in pipes if pipes[k]['label_agreement_with_pipeline_default'] >= 0.995), key=lambda k: pipes[k]['predictions_per_s'])
    ours = summary['ours']['predictions_per_s']
    agree = summary['pipeline_default']['label_agreement_with_ours']
    record = dict(what='stance_nb.predict.load_predictor (tokenize_pairs + predict_logits, mixed_precision=auto) vs transformers '
                       'text-classification pipeline (defaults; batch_size; bf16 weights); same saved model, full test set, '
                       'alternating in one process; medians over repeats',
                  device=a.device, dataset=a.dataset, split='test', n=len(df), repeats=a.repeats, threads=a.threads, seed=a.seed,
                  torch=torch.__version__, transformers=transformers.__version__, model=minilm_path(), **head,
                  ratio_ours_over_pipeline=ours/pipes[fastest]['predictions_per_s'], ratio_against=fastest,
                  ratio_ours_over_pipeline_default=ours/summary['pipeline_default']['predictions_per_s'],
                  ratio_ours_over_faithful_pipeline=ours/pipes[faithful]['predictions_per_s'], faithful_pipeline=faithful,
                  ratios_ours_over={k: ours/v['predictions_per_s'] for k, v in summary.items() if k != 'ours'},
                  label_agreement_ours_vs_pipeline_default=summary['pipeline_default']['label_agreement_with_ours'],
                  goal=dict(ratio_at_least=2.0, label_agreement_at_least=0.995,
                            labels_met=bool(agree >= 0.995),
                            met_against_fastest=bool(ours/pipes[fastest]['predictions_per_s'] >= 2.0 and agree >= 0.995),
                            met_against_faithful=bool(ours/pipes[faithful]['predictions_per_s'] >= 2.0 and agree >= 0.995),
                            met_against_default=bool(ours/summary['pipeline_default']['predictions_per_s'] >= 2.0 and agree >= 0.995)),
                  load_average_before=load0, load_average_after=loadavg(), flop_accounting=FLOP_ACCOUNTING.replace('training = 3 x forward; ', ''),
                  **counts, flops=flops, peaks=peaks, peaks_at_end=peaks_end, peaks_for_mfu=pk, summary=summary,
                  hardware=hardware(), versions=library_versions(), git=git_sha())
    out = Path(a.out) if a.out else outputs_dir(None, 'bench')/f'predict-{a.device}.json'
    write_json(out, portable(record))   # committed: paths relative to the repository
    print(json.dumps({k: record[k] for k in ('n', 'threads', 'ratio_ours_over_pipeline', 'ratio_against', 'ratio_ours_over_pipeline_default',
                                             'ratio_ours_over_faithful_pipeline', 'faithful_pipeline',
                                             'label_agreement_ours_vs_pipeline_default', 'goal', 'load_average_before', 'load_average_after')}
                     | {'predictions_per_s': {k: round(v['predictions_per_s'], 1) for k, v in summary.items()},
                        'precision': precision, 'mfu': {k: round(v['mfu'], 3) for k, v in summary.items()},
                        'label_agreement_with_ours': {k: v['label_agreement_with_ours'] for k, v in summary.items()},
                        'label_agreement_with_pipeline_default': {k: v['label_agreement_with_pipeline_default'] for k, v in summary.items()},
                        'peaks_gflop_per_s': {k: round(pk[k]/1e9, 1) for k in ('bf16', 'fp32')},
                        'flops_per_token': flops['flops_per_token']}, indent=1))
    print(f"wrote {out}")
    return record


if __name__ == '__main__': main()
