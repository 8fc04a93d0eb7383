"""Write the committed analysis report (`results/analysis/`) from the stand-in's job store, without training.

    STANCE_NB_DATA=/path/to/data python tools/analysis_report.py [--runs results/benchmark-minilm/runs] [--out results/analysis] [--n 1000]

Gold labels and targets come from the data mirror; each job's recorded fingerprint of the clean test split is checked first.
Only ids, labels and numbers are written: no text of any dataset."""
import argparse, json
from pathlib import Path
import pandas as pd
from stance_nb.analysis import (attack_drop, drop_difference, pooled_drop_difference, potency_interval, by_target, run_diff,
                                find_job, job_predictions, load_test_rows, same_rows, targets_of, seed_spread)
from stance_nb.experiment.spec import DataSpec
from stance_nb.records import job_records, job_record, read_record_json
from stance_nb.robustness import PAPER_C, PAPER_TABLE7
from stance_nb.experiment import get_experiment
from stance_nb.experiment.compare import Side, compare_sides, run_facets, RUN, LIKE

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {'SDL': 'BERT_SDL', 'MDL': 'BERT_MDL'}
ALL_ROWS = list(SYSTEMS.values())   # the rows the stand-in attacked (the baselines predicted the clean test set only)
ATTACKS = ['spelling', 'negation']
KEYS = ['arc', 'argmin', 'fnc1', 'ibmcs', 'perspectrum', 'semeval2016t6', 'semeval2019t7']   # the seven datasets in the mirror and the run
SAMPLE = 30   # flipped examples listed (ids only)
RUN_DIR = ROOT/'results'/'benchmark-minilm'

def read_key(runs:Path, key:str) -> dict:
    "Gold labels and rows of `key`'s test split, and every row's predictions on the clean and attacked sets."
    folders = {r: find_job(runs, r, key) for r in ALL_ROWS}
    fp = same_rows(list(folders.values()), key)
    rows = load_test_rows(DataSpec.of(key), None, fp)   # the benchmark's data specs (no options); the fingerprint checks it
    preds = {(r, t): job_predictions(f, key, t)[0] for r, f in folders.items() for t in ['test', *ATTACKS]}
    return dict(rows=rows, gold=list(rows.label), preds=preds)

def ci(x) -> str: return f'[{x[0]:.3f}, {x[1]:.3f}]'

def robustness_rows(data:dict, n:int, seed:int) -> tuple[list, list, list]:
    "Per dataset and attack: each system's drop, the MDL-minus-SDL relative-drop difference, and potency over SDL and MDL."
    drops, diffs, pots = [], [], []
    for k, d in data.items():
        g, p = d['gold'], d['preds']
        for a in ATTACKS:
            for s, r in SYSTEMS.items():
                x = attack_drop(g, p[r, 'test'], p[r, a], c=PAPER_C[a], n=n, seed=seed)
                drops.append(dict(dataset=k, attack=a, system=s, **{kk: v for kk, v in x.items() if kk not in ('n', 'seed')}))
            x = drop_difference(g, (p['BERT_MDL', 'test'], p['BERT_MDL', a]), (p['BERT_SDL', 'test'], p['BERT_SDL', a]), n=n, seed=seed)
            diffs.append(dict(dataset=k, attack=a, **{kk: v for kk, v in x.items() if kk not in ('n', 'seed')}))
            x = potency_interval(g, {r: p[r, a] for r in ALL_ROWS}, c=PAPER_C[a], n=n, seed=seed)
            pots.append(dict(dataset=k, attack=a, **{kk: v for kk, v in x.items() if kk not in ('n', 'seed')}))
    return drops, diffs, pots

def pooled_rows(data:dict, n:int, seed:int) -> list:
    "MDL's relative drop minus SDL's on the scores averaged over the seven datasets (Table 6's convention), per attack."
    out = []
    for a in ATTACKS:
        sets = {k: (d['gold'], (d['preds']['BERT_MDL', 'test'], d['preds']['BERT_MDL', a]),
                    (d['preds']['BERT_SDL', 'test'], d['preds']['BERT_SDL', a])) for k, d in data.items()}
        x = pooled_drop_difference(sets, n=n, seed=seed)
        out.append(dict(dataset='mean of 7', attack=a, rel_drop_a=x['rel_drop_a'], rel_drop_b=x['rel_drop_b'], diff=x['diff'], ci=x['ci'], p=x['p']))
    return out

SUBSET = ROOT/'results'/'perf-subset'/'runs'   # the stand-in's recipe repeated over training seeds on three datasets
SUBSET_RECIPE = {'epochs': 2, 'lr': 0.0005}        # its jobs of the stand-in's recipe (the folder also holds a packed variant of seed 1)

def seed_jobs(runs:Path=SUBSET) -> dict:
    "(row, seed) -> job folder of the stand-in's recipe in the repeated-seed store; every row with every seed or none."
    jobs = {}
    for f in job_records(runs):
        p = read_record_json(f)['params']
        if (p.get('settings') or {}).get('mdl_changes') == SUBSET_RECIPE and p['row'] in ALL_ROWS: jobs.setdefault((p['row'], p['seed']), []).append(f.parent)
    return jobs

def seed_rows(n:int, seed:int, runs:Path=SUBSET) -> tuple[list, list]:
    """MDL's relative drop minus SDL's on the scores averaged over the store's datasets, once per training seed, and per attack its spread over
    the seeds (`seed_spread`): the difference of the two systems with training variance, where the store has two seeds or more of both
    (tested with three or more)."""
    jobs = seed_jobs(runs)
    seeds = sorted({s for (r, s) in jobs if all((x, s) in jobs for x in ALL_ROWS)})
    if len(seeds) < 2: return [], []
    per = []
    for sd in seeds:
        mdl = jobs['BERT_MDL', sd][0]
        keys = sorted({k.split(':')[0] for k in job_record(mdl).params['data'] if k.endswith(':test')})
        sets = {}
        for k in keys:
            sdl = next(f for f in jobs['BERT_SDL', sd] if f'{k}:test' in job_record(f).params['data'])
            rows = load_test_rows(DataSpec.of(k), None, same_rows([mdl, sdl], k))
            pr = {(r, t): job_predictions(f, k, t)[0] for r, f in (('MDL', mdl), ('SDL', sdl)) for t in ['test', *ATTACKS]}
            sets[k] = {a: (list(rows.label), (pr['MDL', 'test'], pr['MDL', a]), (pr['SDL', 'test'], pr['SDL', a])) for a in ATTACKS}
        for a in ATTACKS:
            x = pooled_drop_difference({k: v[a] for k, v in sets.items()}, n=n, seed=seed)
            per.append(dict(seed=sd, attack=a, datasets='+'.join(keys), rel_drop_mdl=x['rel_drop_a'], rel_drop_sdl=x['rel_drop_b'], diff=x['diff'],
                            ci=x['ci']))
    spread = [dict(attack=a, datasets=per[0]['datasets'], **seed_spread({r['seed']: r['diff'] for r in per if r['attack'] == a})) for a in ATTACKS]
    return per, spread

def seed_findings(spread:list) -> list:
    "One sentence per attack: MDL − SDL over training seeds, with the t-interval of its mean (with three seeds or more; else untested)."
    out = []
    for x in spread:
        lo, hi = x['ci']
        head = (f"- **{x['attack']}, over training seeds** {', '.join(map(str, x['seeds']))} (the stand-in's recipe, MDL over "
                f"{x['datasets'].replace('+', ', ')}, `results/perf-subset/runs`): MDL − SDL relative drop {x['mean']:+.1%} (per seed "
                f"{', '.join(f'{v:+.1%}' for v in x['values'])})")
        if x['n'] < 3:   # a t-interval over two seeds has one degree of freedom: no test worth the name
            tested = (f"; untested: {x['n']} seeds of both systems, three or more are needed to test a difference over training seeds")
        else:
            shows = ('MDL loses a larger share over these seeds' if lo > 0 else 'SDL loses a larger share over these seeds' if hi < 0
                     else 'no difference shown: the interval holds 0')
            tested = f", t-interval of the mean over the {x['n']} seeds [{lo:+.1%}, {hi:+.1%}], p = {x['p']:.3g}: {shows}"
        out.append(f"{head}{tested}. {paper_claim(x['attack'])}.")
    return out

def target_tables(d:dict, n:int, seed:int) -> pd.DataFrame:
    "SemEval-2016 per target, SDL against MDL, on the clean and the negated test set (Holm over the five targets)."
    p, t = d['preds'], targets_of(d['rows'])
    return pd.concat([by_target(d['gold'], p['BERT_SDL', s], p['BERT_MDL', s], t, n=n, seed=seed).assign(test=s) for s in ('test', 'negation')],
                     ignore_index=True)

def body_tables(data:dict, n:int, seed:int) -> pd.DataFrame:
    "ARC and FNC-1 per article body, SDL against MDL, on the clean and the negated test set (Holm over each set's bodies)."
    out = []
    for k in ('arc', 'fnc1'):
        d = data[k]
        for s in ('test', 'negation'):
            t = by_target(d['gold'], d['preds']['BERT_SDL', s], d['preds']['BERT_MDL', s], targets_of(d['rows'], 'body_id'), n=n, seed=seed)
            out.append(t.assign(dataset=k, test=s))
    return pd.concat(out, ignore_index=True).rename(columns={'target': 'body_id'})

def body_section(b:pd.DataFrame) -> str:
    "One line per dataset and test set: bodies, how many differ at p < 0.05 before and after Holm's correction, which way."
    rows = [dict(dataset=k, test=s, bodies=len(g), **{'p < 0.05 (uncorrected)': int((g.p < 0.05).sum()), 'significant after Holm': int(g.significant.sum()),
                 'SDL ahead': int((g.significant & (g.delta > 0)).sum()), 'MDL ahead': int((g.significant & (g.delta < 0)).sum())})
            for (k, s), g in b.groupby(['dataset', 'test'], sort=False)]
    return md_table(pd.DataFrame(rows))

def fnc1_diff(d:dict) -> dict:
    "SDL against MDL on negated FNC-1, example by example (ids, body ids and labels only)."
    rows = d['rows'][['id', 'body_id']]
    return run_diff(d['gold'], d['preds']['BERT_SDL', 'negation'], d['preds']['BERT_MDL', 'negation'], names=('SDL', 'MDL'), rows=rows)

def md_table(df:pd.DataFrame) -> str:
    "A small table as Markdown (numbers to three decimals)."
    fmt = lambda v: f'{v:.3f}' if isinstance(v, float) else str(v)
    return '\n'.join(['| ' + ' | '.join(map(str, df.columns)) + ' |', '|' + '---|' * len(df.columns)]
                     + ['| ' + ' | '.join(fmt(v) for v in r) + ' |' for r in df.itertuples(index=False)])

def drop_section(drops:pd.DataFrame) -> str:
    t = drops.assign(**{'clean F1': drops.clean, 'attacked F1': drops.attacked, 'drop [95% CI]': [f'{a:.3f} {ci(b)}' for a, b in zip(drops['drop'], drops.drop_ci)],
                        'relative drop [95% CI]': [f'{a:.1%} [{b[0]:.1%}, {b[1]:.1%}]' for a, b in zip(drops.rel_drop, drops.rel_ci)],
                        'p (no drop)': drops.p, 'Resilience_rel [95% CI]': [f'{a:.3f} {ci(b)}' for a, b in zip(drops.resilience_rel, drops.resilience_ci)]})
    return md_table(t[['dataset', 'attack', 'system', 'clean F1', 'attacked F1', 'drop [95% CI]', 'relative drop [95% CI]', 'p (no drop)',
                       'Resilience_rel [95% CI]']])

def diff_section(diffs:pd.DataFrame) -> str:
    t = diffs.assign(**{'MDL relative drop': [f'{v:.1%}' for v in diffs.rel_drop_a], 'SDL relative drop': [f'{v:.1%}' for v in diffs.rel_drop_b],
                        'MDL − SDL [95% CI]': [f'{a:+.1%} [{b[0]:+.1%}, {b[1]:+.1%}]' for a, b in zip(diffs['diff'], diffs.ci)],
                        'holds 0': [b[0] <= 0 <= b[1] for b in diffs.ci]})
    return md_table(t[['dataset', 'attack', 'MDL relative drop', 'SDL relative drop', 'MDL − SDL [95% CI]', 'p', 'holds 0']])

def potency_section(pots:pd.DataFrame) -> str:
    t = pots.assign(**{'raw potency [95% CI]': [f'{a:.3f} {ci(b)}' for a, b in zip(pots.raw_potency, pots.raw_ci)],
                       'potency [95% CI]': [f'{a:.3f} {ci(b)}' for a, b in zip(pots.potency, pots.potency_ci)]})
    return md_table(t[['dataset', 'attack', 'raw potency [95% CI]', 'potency [95% CI]']])

def target_section(t:pd.DataFrame) -> str:
    t = t.assign(**{'SDL − MDL [95% CI]': [f'{a:+.3f} [{b:+.3f}, {c:+.3f}]' for a, b, c in zip(t.delta, t.ci_low, t.ci_high)]})
    return md_table(t[['test', 'target', 'rows', 'f1_a', 'f1_b', 'SDL − MDL [95% CI]', 'p', 'method', 'p_holm', 'significant']]
                    .rename(columns={'f1_a': 'SDL F1', 'f1_b': 'MDL F1'}))

def paper_claim(attack:str) -> str:
    """What these runs can say of the paper's claim that MDL is less robust (its Table 7: MT-DNN_MDL against BERT_SDL under `attack`):
    only a like-for-like comparison (`experiment.compare.compare`) could bear on it, and the comparison says why this one cannot."""
    cond = json.loads((RUN_DIR/'benchmark-minilm_conditions.json').read_text())
    exp = get_experiment('benchmark')
    facets = {r: dict(run_facets(exp.row(r), cond), seeds=len(cond['seeds'])) for r in SYSTEMS.values()}
    paper = {r: {k: v for k, v in exp.paper_runs[r].items()} for r in ('BERT_SDL', 'MT-DNN_MDL')}
    joined = lambda d, k: '+'.join(sorted({str(v[k]) for v in d.values()}))
    ours = Side.of(KEYS, list(SYSTEMS.values()), attack, KEYS, metric='resilience_rel', **{k: joined(facets, k) for k in RUN})
    theirs = Side.of(KEYS, list(paper), attack, sorted(exp.data), metric='resilience_rel', **{k: joined(paper, k) for k in RUN})
    c = compare_sides(ours, theirs)
    p = PAPER_TABLE7
    return (f"The paper's claim that MDL is less robust under {attack} (its Table 7 Resilience_rel: BERT_SDL {p['BERT_SDL'][attack]}, "
            f"MT-DNN_MDL {p['MT-DNN_MDL'][attack]}): no conclusion from these runs: {c.why}" if c.kind != LIKE else '')

def verdict(x:dict, attack:str) -> str:
    "Our finding on the two trained models (one seed each: test-set uncertainty only), then what it says of the paper's claim."
    lo, hi = x['ci']
    ours = ('MDL loses a larger share' if lo > 0 else 'SDL loses a larger share' if hi < 0 else 'the interval holds 0')
    return (f"- **{attack}**, scores averaged over the seven datasets: MDL loses {x['rel_drop_a']:.1%} of its macro-F1, SDL {x['rel_drop_b']:.1%}; "
            f"MDL − SDL = {x['diff']:+.1%} [{lo:+.1%}, {hi:+.1%}], p = {x['p']:.3g}: {ours} on these two trained models. One training seed: "
            f"the interval covers the test sample only, not training variance. {paper_claim(attack)}.")

def findings(drops, diffs, pooled, targets, diff) -> list[str]:
    "The report's findings as sentences, each from the tables below."
    out = [verdict(x, x['attack']) for x in pooled]
    for a in ATTACKS:
        for s in SYSTEMS:
            d = drops[(drops.attack == a) & (drops.system == s)]
            out.append(f"- {s} under {a}: the drop's interval lies above 0 on {int(sum(c[0] > 0 for c in d.drop_ci))} of {len(d)} datasets, "
                       f"below 0 (a gain) on {int(sum(c[1] < 0 for c in d.drop_ci))}.")
        d = diffs[diffs.attack == a]
        out.append(f"- Per dataset under {a}, MDL's relative drop exceeds SDL's (interval above 0) on {int(sum(c[0] > 0 for c in d.ci))} of {len(d)}: "
                   f"{', '.join(d.dataset[[c[0] > 0 for c in d.ci]]) or 'none'}; SDL's exceeds MDL's on "
                   f"{', '.join(d.dataset[[c[1] < 0 for c in d.ci]]) or 'none'}.")
    for s in ('test', 'negation'):
        t = targets[targets.test == s]
        sig = [f"{r.target} ({r.delta:+.3f}, Holm p = {r.p_holm:.3g})" for r in t.itertuples() if r.significant]
        out.append(f"- SemEval-2016 {'clean' if s == 'test' else 'negated'} test, SDL − MDL per target: significant after Holm's correction on "
                   f"{len(sig)} of {len(t)} targets{': ' + '; '.join(sig) if sig else ''}.")
    c = diff['counts']
    m, top = int(diff['confusion']['SDL'].to_numpy().sum()), diff['flipped'].groupby(['gold', 'SDL', 'MDL']).size().sort_values().index[-1]
    n_top = int(diff['flipped'].groupby(['gold', 'SDL', 'MDL']).size().max())
    out.append(f"- Negated FNC-1, SDL against MDL: they agree on {diff['agreement']:.1%} of {m} rows (Cohen's κ {diff['kappa']:.3f}); of the "
               f"{len(diff['flipped'])} flipped examples SDL is right on {c['SDL']}, MDL on {c['MDL']}, neither on {c['neither']}. The most common "
               f"flip ({n_top} rows): gold '{top[0]}', SDL '{top[1]}', MDL '{top[2]}'.")
    return out

def main(runs:Path, out:Path, n:int, seed:int):
    data = {k: read_key(runs, k) for k in KEYS}
    drops, diffs, pots = (pd.DataFrame(x) for x in robustness_rows(data, n, seed))
    pooled = pooled_rows(data, n, seed)
    targets = target_tables(data['semeval2016t6'], n, seed)
    diff = fnc1_diff(data['fnc1'])
    bodies = body_tables(data, n, seed)
    bodies[bodies.significant].to_csv(out/'body_significant.csv', index=False)
    out.mkdir(parents=True, exist_ok=True)
    drops.to_csv(out/'robustness_drops.csv', index=False); pots.to_csv(out/'potency.csv', index=False)
    pd.concat([diffs, pd.DataFrame(pooled)], ignore_index=True).to_csv(out/'mdl_minus_sdl_relative_drop.csv', index=False)
    targets.to_csv(out/'semeval2016t6_targets.csv', index=False)
    diff['confusion'].to_csv(out/'fnc1_negation_confusion.csv')
    diff['flipped'].head(SAMPLE).to_csv(out/'fnc1_negation_flipped_sample.csv', index=False)
    per, spread = seed_rows(n, seed)
    if per: pd.DataFrame(per).to_csv(out/'mdl_minus_sdl_over_seeds.csv', index=False)
    write_report(out, runs, n, seed, drops, diffs, pooled, pots, targets, diff, bodies, spread)

def write_report(out, runs, n, seed, drops, diffs, pooled, pots, targets, diff, bodies, spread=()):
    conf = diff['confusion'].copy(); conf.columns = [f'{a}: {b}' for a, b in conf.columns]
    text = [f"# Analyses of the stand-in benchmark run", '',
            f"Written by `tools/analysis_report.py` from the committed job store `{runs.relative_to(ROOT) if runs.is_absolute() else runs}` (no training). "
            f"That run has one seed per system (seed count = 1): its intervals are 95% percentile bootstraps over test rows ({n} resamples, seed "
            f"{seed}), so they cover the test sample, not training variance, and compare two trained models, not two systems. Where the "
            "repeated-seed store `results/perf-subset/runs` holds two training seeds or more of both systems (on fewer datasets), the "
            "findings first give the difference over those seeds (with three seeds or more, the t-interval of its mean). Clean and attacked predictions are scored "
            "on the same resampled rows; "
            f"c_a: spelling {PAPER_C['spelling']}, negation {PAPER_C['negation']} (the paper's Table 5). Drops are clean minus attacked macro-F1; "
            "relative drop = drop / clean score.", '', '## Findings', '', *seed_findings(spread), *findings(drops, diffs, pooled, targets, diff), '',
            '## MDL − SDL relative drop (is MDL less robust?)', '', diff_section(pd.concat([diffs, pd.DataFrame(pooled)], ignore_index=True)), '',
            '## Clean against attacked, per dataset and system', '', drop_section(drops), '',
            '## Potency over the attacked rows (SDL, MDL)', '', potency_section(pots), '',
            "## SemEval-2016 per target: SDL against MDL (paired bootstrap, Holm's correction over the five targets)", '', target_section(targets), '',
            "## ARC and FNC-1 per article body: SDL against MDL (paired tests, exact where they differ on 20 rows or fewer; Holm over the bodies)", '',
            body_section(bodies), '', '`body_significant.csv` lists the bodies significant after Holm (body id, rows, both F1, the difference, p).', '',
            '## Negated FNC-1: SDL against MDL, example by example', '',
            f"Agreement {diff['agreement']:.3f}, Cohen's κ {diff['kappa']:.3f}, macro-F1 SDL {diff['f1']['SDL']:.3f}, MDL {diff['f1']['MDL']:.3f}; "
            f"{len(diff['flipped'])} flipped examples (SDL right {diff['counts']['SDL']}, MDL right {diff['counts']['MDL']}, "
            f"neither {diff['counts']['neither']}). Confusion matrices side by side (rows: gold):", '', md_table(conf.reset_index()), '',
            f"`fnc1_negation_flipped_sample.csv` lists the first {SAMPLE} flipped examples by test id and body id with the gold label and both "
            "predictions (no text: `stance_nb.analysis.run_diff` with the test rows gives the full table with headlines and bodies locally).", '']
    (out/'README.md').write_text('\n'.join(text), encoding='utf-8')

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--runs', type=Path, default=ROOT/'results/benchmark-minilm/runs')
    ap.add_argument('--out', type=Path, default=ROOT/'results/analysis')
    ap.add_argument('--n', type=int, default=1000); ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    main(a.runs, a.out, a.n, a.seed)
