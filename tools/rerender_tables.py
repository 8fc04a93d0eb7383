"""Re-render a committed benchmark run's tables under the current table rules, from the run's own committed cells.

For runs whose job records were not kept: `python tools/rerender_tables.py results/benchmark-minilm-earlier benchmark-minilm-all7 ...`.
For a run whose job records are committed in the folder's `runs/` (one run per folder), `--records` builds the tables
from them as the scorecard does (`stance_nb.experiment.stored_run`): `python tools/rerender_tables.py --records
results/benchmark benchmark`.
Tables 4 and 11 hold every per-dataset score of the run (one seed each); from them Tables 4, 6, 11, 5 and 7 are built
again with the experiment's own builders. Tables 8 and Fig. 2b hold averages only (the low-resource per-dataset scores
are not in any table), so their cells keep our values, name the datasets each averaged, and are compared with the
paper again. Nothing is trained; the conditions and predicted-label shares of the run are kept.
"""
import json, re, sys
from dataclasses import replace
from pathlib import Path
import pandas as pd
from stance_nb.experiment import get_experiment, RunResult, render, plot_comparison, stored_run

EXP = get_experiment('benchmark')
SUFFIX = {'SDL': 'BERT_SDL', 'MDL': 'MT-DNN_MDL'}   # the benchmark's Table 11 row suffixes (its `attacked` builder)

def _value(r) -> float:
    "A committed cell's value in the unit the builders take (fractions)."
    return r.ours_mean / 100 if r.unit == 'percent' else r.ours_mean

def _check_one_seed(t:pd.DataFrame, path:Path):
    many = t[t.n > 1]
    if len(many): raise SystemExit(f"{path}: cells over {many.n.max()} seeds ({many.row.iloc[0]}, {many.column.iloc[0]}): their per-seed values are not in the table")

def scores_from_tables(folder:Path, stem:str, seed:int) -> pd.DataFrame:
    "The run's clean and attacked per-dataset scores, read back from its committed Tables 4 and 11."
    lines = []
    t4 = pd.read_csv(folder/f'{stem}_table4.csv'); _check_one_seed(t4, folder/f'{stem}_table4.csv')
    for r in t4[(t4.n == 1) & t4.column.isin(list(EXP.data))].itertuples():
        lines.append(dict(row=r.row, key=r.column, test='test', metric=r.metric, value=_value(r)))
    if (folder/f'{stem}_table11.csv').exists():
        t11 = pd.read_csv(folder/f'{stem}_table11.csv'); _check_one_seed(t11, folder/f'{stem}_table11.csv')
        for r in t11[(t11.n == 1) & t11.column.isin(list(EXP.data))].itertuples():
            attack, _, who = r.row.partition('_')
            lines.append(dict(row=SUFFIX.get(who, who), key=r.column, test=attack.lower(), metric=r.metric, value=_value(r)))
    s = pd.DataFrame(lines).drop_duplicates(['row', 'key', 'test', 'metric'])
    s = s.assign(system=[EXP.row(r).system for r in s.row], ratio=1.0, seed=seed, table='', column=s.key, job=f'committed {stem} tables')
    return s[['row', 'system', 'key', 'test', 'ratio', 'seed', 'table', 'column', 'metric', 'value', 'job']].astype({'seed': 'Int64'})

def _keys(note, ratio, cond) -> str:
    "The datasets a committed average was over: named in its note, else the data loaded at its ratio."
    m = re.search(r'ours averages \d+ dataset\(s\) \(([^)]*)\)', str(note)) or re.search(r'(?:^|; )over ([a-z0-9, ]+?)(?:;|$)', str(note))
    if m: return '+'.join(sorted(k.strip() for k in m.group(1).split(',')))
    return '+'.join(sorted(k for k, d in cond['data'].items() if f'{k}@{ratio:g}' in d['fingerprints']))

def averages_from_table(path:Path, cond:dict, paper_unit:bool) -> pd.DataFrame:
    "A committed table of averages (Tables 8, Fig. 2b) as our cells again, each naming the datasets it averaged."
    t = pd.read_csv(path); _check_one_seed(t, path)
    t = t[t.n == 1]
    keys = [_keys(n, int(c.rstrip('%'))/100, cond) for n, c in zip(t.note, t.column)]
    sets = {k for k in keys}
    out = t.assign(value=t.ours_mean if paper_unit else [_value(r) for r in t.itertuples()], seed=1, keys=keys,
                   note=[f"ours averages {k.replace('+', ', ')}" + ('' if len(sets) == 1 else
                         '; other cells of this table average other datasets (the committed averages cannot be recomputed over one set)')
                         for k in keys])[['row', 'column', 'metric', 'value', 'seed', 'keys', 'note']]
    return out.assign(unit_of_ours='paper') if paper_unit else out

def rerender(folder:Path, stem:str, records:bool=False):
    cond = json.loads((folder/f'{stem}_conditions.json').read_text())
    labels = pd.read_csv(folder/f'{stem}_labels.csv').astype({'seed': 'Int64'}) if (folder/f'{stem}_labels.csv').exists() else None
    tables = [t for t in EXP.tables if (folder/f'{stem}_table{t}.csv').exists()]
    fixed = {} if records else {t: averages_from_table(folder/f'{stem}_table{t}.csv', cond, t == 'Fig2b') for t in ('8', 'Fig2b') if t in tables}
    exp = replace(EXP, tables={**EXP.tables, **{t: (lambda s, e, st, o=o: o) for t, o in fixed.items()}})
    if records: result = stored_run(folder, stem)   # the records, the run's conditions and labels: as the scorecard builds them
    else:
        scores = scores_from_tables(folder, stem, (cond.get('seeds') or [1])[0]) if (folder/f'{stem}_table4.csv').exists() else None
        if scores is None: scores = pd.DataFrame(columns=['row', 'system', 'key', 'test', 'ratio', 'seed', 'table', 'column', 'metric', 'value', 'job'])
        result = RunResult(scores, {}, cond.get('skipped') or {}, cond, labels=labels)
    done = render(exp, result, tables, out=folder, run_name=stem)
    for t in ('8', 'Fig2b'):   # the figures of the tables that have one
        if t in done and (folder/f'{stem}_table{t}.png').exists(): plot_comparison(done[t], path=folder/f'{stem}_table{t}.png')
    print(f"{stem}: re-rendered tables {', '.join(done)}")

if __name__ == '__main__':
    args = sys.argv[1:]
    records = '--records' in args
    args = [a for a in args if a != '--records']
    folder = Path(args[0])
    for stem in args[1:]: rerender(folder, stem, records)
