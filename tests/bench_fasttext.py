"""Benchmark (not a test): the full fastText X-stance grid (lr {0.1, 0.2, 1} x epochs {5, 50}, dim 300) on an
X-stance-sized training set, with the X-stance recipe (question + comment, Moses tokenization per language,
classes upsampled, chosen on validation accuracy).

X-stance's train.jsonl (45,640 DE+FR answers) is not in the data mirror, so the training set is 45,640 rows drawn
with replacement (seeded) from the mirror's DE/FR test.jsonl comments; the mirror's DE/FR valid.jsonl is the
validation set. Usage:

    STANCE_NB_DATA=/work/shared/data python tests/bench_fasttext.py [--preset xstance|xstance_code] [--n-jobs 2]
"""
import argparse, json, os, resource, time
from pathlib import Path
import pandas as pd
from stance_nb.core import data_dir
from stance_nb.systems.baselines import FASTTEXT_PRESETS, fasttext_grid

def _read(path):
    rows = [json.loads(l) for l in Path(path).read_text(encoding='utf-8').splitlines() if l.strip()]
    df = pd.DataFrame(rows)
    df = df[df.language.isin(['de', 'fr'])]
    return pd.DataFrame(dict(id=df.id.astype(str), target=df.question, text=df.comment, label=df.label, language=df.language))

def _cpu():
    "CPU seconds used by this process and its finished children (the grid's subprocesses)."
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ('ru_utime', 'ru_stime'))

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--preset', default='xstance', choices=['xstance', 'xstance_code'])
    ap.add_argument('--n-jobs', type=int, default=2, help='grid cells trained at once (one thread each)')
    ap.add_argument('--rows', type=int, default=45_640, help='training rows (X-stance train: 33,850 DE + 11,790 FR)')
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    folder = data_dir(name='xstance')
    if not (folder/'test.jsonl').exists(): raise SystemExit(f'no X-stance data under {folder}; set STANCE_NB_DATA')
    train = _read(folder/'test.jsonl').sample(n=a.rows, replace=True, random_state=a.seed).reset_index(drop=True)
    dev = _read(folder/'valid.jsonl')
    preset = FASTTEXT_PRESETS[a.preset]
    load0 = os.getloadavg()
    t0, c0 = time.time(), _cpu()
    best, grid = fasttext_grid(train, dev, n_jobs=a.n_jobs, seed=a.seed, **preset['grid'], **preset['model'])
    wall, cpu = time.time() - t0, _cpu() - c0
    print(grid.to_string(index=False))
    print(json.dumps(dict(preset=a.preset, train_rows=len(train), dev_rows=len(dev), n_jobs=a.n_jobs, seed=a.seed,
                          wall_seconds=round(wall, 1), cpu_seconds=round(cpu, 1), selected=dict(lr=best.lr, epoch=best.epoch),
                          loadavg_before=load0, loadavg_after=os.getloadavg(), cpus=os.cpu_count())))

if __name__ == '__main__': main()
