"""Write the README's results blocks (`<!-- generated:NAME -->` ... `<!-- /generated:NAME -->`) from the committed records, so that
no verdict, claim or headline number in them is typed by hand.

`python tools/readme_results.py` rewrites every block; `--check` exits 1 naming the first block that is not what the committed
results give (a test runs it). The blocks read: the scorecard (built from the committed job records, `stance_nb.scorecard`), the
stand-in's tables built again from its records, the leaderboards and transfer matrices its commands wrote (each rebuilt from its
records by a test), and the analysis report's tables. Every claim beside the paper's goes through the one comparability check
(`stance_nb.experiment.compare.compare`): where the two sides differ it says how and draws no conclusion about the paper.
"""
import json, math, sys
from pathlib import Path
import pandas as pd
from stance_nb.experiment import get_experiment, stored_run, build_table, table_conditions
from stance_nb.experiment.compare import Side, compare_sides, run_facets, RUN, LIKE, NOT_COMPARABLE, family
from stance_nb.robustness import paper_table11, robustness_tables, PAPER_C
from stance_nb.data.benchmark import BENCHMARK
from stance_nb.records import job_records, read_record_json
from stance_nb.reference import reference
from stance_nb.scorecard import scorecard, PAPER_NAMES, COLUMN_NAMES, VERDICTS, PREFIX

ROOT = Path(__file__).resolve().parents[1]
RESULTS, README = ROOT/'results', ROOT/'README.md'
STANDIN = RESULTS/'benchmark-minilm'
STEM = 'benchmark-minilm'

GROUPS = [   # (paper, tables, rows (None: all), what, made by)
    ('schiller2021', ['4'], ['Majority baseline', 'Random baseline'], 'Table 4: majority, random (fastText is not in the paper)', 'run_benchmark'),
    ('schiller2021', ['4'], ['BERT_SDL', 'BERT_MDL', 'MT-DNN_SDL', 'MT-DNN_MDL'], 'Table 4: BERT_SDL, BERT_MDL, MT-DNN_SDL, MT-DNN_MDL', 'run_benchmark'),
    ('schiller2021', ['6', '11'], None, 'Tables 6 and 11: attacked test sets', 'run_benchmark'),
    ('schiller2021', ['5', '7'], None, 'Tables 5 and 7: potency, resilience', 'run_benchmark'),
    ('schiller2021', ['8', 'Fig2b'], None, 'Table 8 and Figure 2b: 10/30/70 % training data', 'run_benchmark'),
    ('vamvas2020', ['3', '4'], None, 'Tables 3, 4: majority (global, target-wise), fastText, M-BERT', 'run_xstance'),
    ('vamvas2020', ['5'], None, 'Table 5: M-BERT variants', 'run_xstance'),
    ('mascarell2021', ['7'], None, 'Table 7: bag of words, German BERT (5-fold CV)', 'run_cheese'),
    ('zhao2024', ['7', '8', '14', '15'], None, 'Tables 7, 8, 14, 15: every row', 'run_ezstance'),
    ('zhao2024', ['9', '10'], None, 'Table 9 (EZ-STANCE vs VAST), Table 10 (prompts)', 'run_ezstance'),
]

# ---- the results section: verdicts, c_a, the stand-in against the paper's claims ----------------------------------------

def _status(card:pd.DataFrame, paper:str, tables:list, rows) -> str:
    "The verdicts of one group of cells in words: per column, the counts per family and the main reason the rest did not run."
    d = card[(card.paper_id == paper) & card.table.isin(tables)]
    if rows is not None: d = d[d.row.isin(rows)]
    parts = []
    for side, p in PREFIX.items():
        v = d[f'{p}_verdict'].dropna() if f'{p}_verdict' in d else pd.Series(dtype=object)
        if not len(v): continue
        fam = v.map(family)
        counts = ', '.join(f"{(fam == k).sum()} {'differ' if k == 'differs' else k}" for k in VERDICTS if (fam == k).any())
        stand = v[fam == 'stand-in'].str.split(': ', n=1).str[1].value_counts()
        counts = counts.replace(' stand-in', ' stand-in (' + ', '.join(f'{n} {w}' for w, n in stand.sort_index().items()) + ')', 1) if len(stand) else counts
        why = d.loc[v.index][v == 'not run'][f'{p}_why'].value_counts()
        parts.append(f"{COLUMN_NAMES[side]}: {counts} of {len(v)} cells" + (f" (not run: {why.index[0]})" if len(why) else ''))
    return '; '.join(parts)

def status_table(card:pd.DataFrame) -> str:
    lines = ['| paper | table | made by | verdicts (`results/scorecard/`) |', '|---|---|---|---|']
    last = None
    for paper, tables, rows, what, nb in GROUPS:
        name = PAPER_NAMES[paper] if paper != last else ''
        last = paper
        lines.append(f"| {name} | {what} | [`{nb}`](nbs/{nb}.ipynb) | {_status(card, paper, tables, rows)} |")
    return '\n'.join(lines)

def c_a_line() -> str:
    "The measured spelling correctness ratio against the paper's, from its committed record."
    m = json.loads((RESULTS/'robustness_spelling_c_a'/'record.json').read_text())['metrics']
    return (f"Correctness ratio c_a of the spelling attack (§4, [`run_robustness`](nbs/run_robustness.ipynb)): {m['spelling_c_a']:.3f} measured on "
            f"{len(m['spelling_c_a_datasets'])} mirror test sets ({m['spelling_c_a_n']} samples) against the paper's {PAPER_C['spelling']:.3f} "
            "([`results/robustness_spelling_c_a/`](results/robustness_spelling_c_a/README.md)); the tables use the paper's unless told; "
            "the paraphrase c_a needs an annotation.")

def stand_in_tables() -> tuple[dict, dict]:
    "The stand-in's tables built again from its job records (as the scorecard checks them), and its conditions."
    exp = get_experiment('benchmark')
    res = stored_run(STANDIN, STEM)
    cond = table_conditions(exp, res)
    return {t: build_table(exp, res, t, cond)[0] for t in ('4', '6', '7', '8')}, cond

def _cell(tables:dict, table:str, row:str, column:str, metric:str='f1_macro') -> dict:
    t = tables[table]
    d = t[(t.row == row) & (t.column == column) & (t.metric == metric)]
    assert len(d) == 1, (table, row, column, metric)
    r = dict(d.iloc[0])
    r['sides'] = t.attrs['sides'][row, column, metric]
    return r

def _said(c:dict, fmt:str='{:.3f}') -> str:
    "The paper's number of a cell and what the comparability check says of ours beside it."
    o, p = c['sides']
    cmp = compare_sides(o, p)
    if cmp.kind == NOT_COMPARABLE: return f"{fmt.format(c['paper'])}: {cmp.why}, no Δ" if pd.notna(c['paper']) else f"{cmp.why}, no Δ"
    return f"{fmt.format(c['paper'])} (Δ {c['delta']:+.3f}; {cmp.kind})" if cmp.kind != LIKE else f"{fmt.format(c['paper'])} (Δ {c['delta']:+.3f})"

def _paper_mdl_robustness(datasets:list) -> dict:
    "The paper's MT-DNN_MDL over `datasets` and the two attacks we ran (its Table 11): relative drops and Resilience_rel overall."
    attacks = ['spelling', 'negation']
    p = paper_table11()
    p = p[(p.system == 'MT-DNN_MDL') & p.dataset.isin(datasets) & p.attack.isin(['test', *attacks])]
    t = robustness_tables(p, {a: PAPER_C[a] for a in attacks})
    drop = t['table6'].set_index('attack').relative_drop
    return dict(spelling=100 * drop['spelling'], negation=100 * drop['negation'],
                overall=100 * t['table7'].set_index('measure').resilience_rel['overall'])

def _mdl_side(cond:dict, datasets:list) -> tuple[Side, Side]:
    "Our BERT_MDL against the paper's MT-DNN_MDL over `datasets` and two attacks: both sides, for the comparability check."
    exp = get_experiment('benchmark')
    ours = Side.of(datasets, 'BERT_MDL', ['spelling', 'negation'], datasets, metric='resilience_rel',
                   **run_facets(exp.row('BERT_MDL'), cond), seeds=len(cond['seeds']))
    paper = Side.of(datasets, 'MT-DNN_MDL', ['spelling', 'negation'], sorted(BENCHMARK), metric='resilience_rel',
                    **{k: v for k, v in exp.paper_runs['MT-DNN_MDL'].items() if k in RUN})
    return ours, paper

def claims_table() -> str:
    "The stand-in's headline numbers beside the paper's claims, each through the comparability check; one seed said."
    tables, cond = stand_in_tables()
    seven = sorted(cond['data'])
    sdl, mdl = _cell(tables, '4', 'BERT_SDL', 'Avg.'), _cell(tables, '4', 'BERT_MDL', 'Avg.')
    rel = {(s, a): _cell(tables, '6', a, s, 'relative_drop') for s in ('BERT_SDL', 'BERT_MDL') for a in ('Spelling', 'Negation')}
    res = {s: _cell(tables, '7', 'Overall', s, 'resilience_rel') for s in ('BERT_SDL', 'BERT_MDL')}
    p_mdl = _paper_mdl_robustness(seven)
    why = compare_sides(*_mdl_side(cond, seven)).why
    r10 = {s: _cell(tables, '8', s, '10%') for s in ('BERT_SDL', 'BERT_MDL')}
    r100 = {s: _cell(tables, '8', s, '100%') for s in ('BERT_SDL', 'BERT_MDL')}
    six = list(r10['BERT_SDL']['sides'][0].datasets)
    p8 = {s: float(reference('schiller2021', '8', row=s, column='10%', metric='f1_macro').value.iloc[0]) for s in ('BERT_SDL', 'MT-DNN_MDL')}
    seeds = len(cond['seeds'])
    rows = [
        ('MDL beats SDL (Table 4, mean macro-F1 over the seven mirror datasets)',
         f"SDL {_said(sdl)}; MDL {_said(mdl)}",
         f"SDL {sdl['ours_mean']:.3f}, MDL {mdl['ours_mean']:.3f} ({mdl['ours_mean'] - sdl['ours_mean']:+.3f})"),
        ('MDL is less robust than SDL (Table 6 relative drop of the mean macro-F1, spelling and negation; Table 7 Resilience_rel overall)',
         f"SDL {rel['BERT_SDL', 'Spelling']['paper']:.1f} %, {rel['BERT_SDL', 'Negation']['paper']:.1f} %, {res['BERT_SDL']['paper']:.1f} "
         f"(Δ {rel['BERT_SDL', 'Spelling']['delta']:+.1f}, {rel['BERT_SDL', 'Negation']['delta']:+.1f}, {res['BERT_SDL']['delta']:+.1f}; stand-in); "
         f"MT-DNN_MDL over the same {len(seven)} datasets and two attacks {p_mdl['spelling']:.1f} %, {p_mdl['negation']:.1f} %, "
         f"{p_mdl['overall']:.1f}, against our BERT_MDL {why}, no Δ",
         f"SDL {rel['BERT_SDL', 'Spelling']['ours_mean']:.1f} %, {rel['BERT_SDL', 'Negation']['ours_mean']:.1f} %, {res['BERT_SDL']['ours_mean']:.1f}; "
         f"MDL {rel['BERT_MDL', 'Spelling']['ours_mean']:.1f} %, {rel['BERT_MDL', 'Negation']['ours_mean']:.1f} %, {res['BERT_MDL']['ours_mean']:.1f}"),
        ('MDL helps most with 10 % of the data (Table 8)',
         f"SDL {p8['BERT_SDL']:.3f}, MT-DNN_MDL {p8['MT-DNN_MDL']:.3f} over its ten datasets: " + compare_sides(*r10['BERT_SDL']['sides']).why + ', no Δ',
         f"{len(six)} datasets: SDL {r10['BERT_SDL']['ours_mean']:.3f}, MDL {r10['BERT_MDL']['ours_mean']:.3f} "
         f"({r10['BERT_MDL']['ours_mean'] - r10['BERT_SDL']['ours_mean']:+.3f}); at 100 % {r100['BERT_SDL']['ours_mean']:.3f} and "
         f"{r100['BERT_MDL']['ours_mean']:.3f}"),
    ]
    head = f"| the paper's claim | the paper's number, and the comparability check | stand-in ({seeds} seed{'s' * (seeds != 1)}) |"
    lines = [head, '|---|---|---|', *[f'| {a} | {b} | {c} |' for a, b, c in rows]]
    note = (f"The stand-in ran {seeds} training seed{'s' * (seeds != 1)}: its differences here are between trained models, not tested claims about "
            "SDL and MDL, and none bears on the paper's claims (each row says why: another encoder, recipe, seed count and precision; the paper's "
            "MDL trained on ten datasets).")
    return '\n'.join(lines) + '\n\n' + note

def results_block() -> str:
    card = scorecard(RESULTS)
    return '\n\n'.join([
        'Generated by `python tools/readme_results.py` from the committed scorecard ([`results/scorecard/`](results/scorecard/scorecard.md), '
        '`stance_nb scorecard`, built from the committed job records) and the stand-in\'s tables; every cell of the papers\' tables has one '
        'verdict there: reproduced or differs (like for like: |Δ| within twice the noise measured for its kind of cell, or beyond it), '
        'untested (like for like, no measured noise), stand-in (the same quantity from another encoder, recipe, seed count or precision: within '
        'noise, below or above the paper; never reproduced), other data, not comparable (why) or not run (why).',
        status_table(card), c_a_line(),
        'The stand-in run at full data ([`results/benchmark-minilm/`](results/benchmark-minilm/README.md), all-MiniLM-L6-v2 for '
        'BERT-large) beside the paper\'s claims:', claims_table()])

def stand_in_block() -> str:
    "What the stand-in run is, from its conditions, and where its seed noise is measured."
    cond = json.loads((STANDIN/f'{STEM}_conditions.json').read_text())
    st, hw = cond['settings'], cond['hardware']
    changes = ', '.join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in sorted((st.get('mdl_changes') or {}).items()))
    prec = sorted({p for v in (cond.get('train_precision') or {}).values() for p in v})
    seeds = sorted({read_record_json(p)['params']['seed'] for p in job_records(RESULTS/'perf-subset'/'runs')})
    return (f"[`results/benchmark-minilm/`](results/benchmark-minilm/README.md): the benchmark's jobs as **one run** over the {len(cond['data'])} "
            f"mirror datasets (full train/dev/test), all-MiniLM-L6-v2 standing in for BERT-large, the paper's recipe except {changes} and "
            f"{len(cond['seeds'])} seed{'s' * (len(cond['seeds']) != 1)}; every encoder job in {', '.join(prec)} on one machine "
            f"({hw['cpu']}, {hw['cpus']} cores), from one job store whose records and predicted labels are committed (`runs/`). One set of "
            "tables and one leaderboard with paired bootstrap tests per dataset and a Friedman test: "
            "[`benchmark-minilm_leaderboard.md`](results/benchmark-minilm/benchmark-minilm_leaderboard.md). The scorecard measures the "
            f"stand-in's seed noise per kind of cell from seeds {', '.join(map(str, seeds))} of the same recipe on the same machine and "
            "precision: [`results/perf-subset/`](results/perf-subset/README.md).")

# ---- the leaderboard, the analyses, the transfer --------------------------------------------------------------------------

def _md_section(path:Path, start:str, stop:str|None=None) -> str:
    "The lines of a generated Markdown file from the line starting with `start` up to (not including) the next starting with `stop`."
    lines = path.read_text(encoding='utf-8').splitlines()
    i = next(j for j, l in enumerate(lines) if l.startswith(start))
    k = next((j for j in range(i + 1, len(lines)) if stop is not None and lines[j].startswith(stop)), len(lines))
    return '\n'.join(lines[i:k]).strip()

def leaderboard_block() -> str:
    "The baselines' leaderboard from the committed records (results/leaderboard-baselines, which a test rebuilds): its table and findings."
    folder = RESULTS/'leaderboard-baselines'
    table = _md_section(folder/'leaderboard-baselines_leaderboard.md', '| system', '\n')
    st = json.loads((folder/'leaderboard-baselines_leaderboard_conditions.json').read_text())['leaderboard']
    lb = pd.read_csv(folder/'leaderboard-baselines_leaderboard.csv').set_index('system')
    f, cd = st['friedman'], st.get('critical_difference')
    rnd = lb.loc['random']
    gaps = [abs(rnd[k] - rnd[f'{k} published']) for k in st['common'] if pd.notna(rnd.get(f'{k} published'))]
    tied = [k for k in st['common'] if lb.loc['random'].get(f'{k} tied') is True or str(lb.loc['random'].get(f'{k} tied')) == 'True']
    text = (f"Friedman test over {f['N']} datasets and {f['k']} systems: χ² = {f['statistic']:.2f}, p = {f['p']:.3g}"
            + (f"; critical difference {cd:.2f} at α = {st['alpha']}" if cd is not None else '') + ". "
            + (f"The random baseline is not significantly below the best on {', '.join(tied)}. " if tied else '')
            + f"The random baseline lies within {max(gaps):.3f} of the paper's number on each of these datasets (mean {rnd['mean']:.3f} against "
            f"{rnd['mean published']:.3f}), over the seeds {', '.join(map(str, st['seeds']))}.")
    return table + '\n\n' + text

def analysis_block() -> str:
    "The analysis report's findings (results/analysis/README.md, written by tools/analysis_report.py from the stand-in's job store)."
    return _md_section(RESULTS/'analysis'/'README.md', '- ', '## ')

def _transfer_said(csv:Path) -> list:
    "One sentence per system of a committed transfer matrix: how many transfer cells are below, within or above in-domain, which stand out."
    c = pd.read_csv(csv)
    out = []
    for sy, g in c.groupby('system', sort=False):
        t = g[g.train != g.test]
        below, above = t[t.ci_high < 0], t[t.ci_low > 0]
        loo = t[t.train == 'rest']
        out.append(f"{sy}: of {len(t)} transfer cells ({len(loo)} of them leave-one-out), {len(below)} are below the in-domain model's and "
                   f"{len(above)} above, by an interval that excludes 0"
                   + (': above, ' + '; '.join(f"trained on {'all others' if r.train == 'rest' else r.train} and tested on {r.test}, "
                                            f"{r.f1:.3f} against {r.in_domain:.3f} ({r.delta:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}])"
                                            for r in above.itertuples()) if len(above) else '')
                   + f"; leave-one-out below in-domain on {int((loo.ci_high < 0).sum())} of {len(loo)}.")
    return out

def transfer_block() -> str:
    "The committed transfers' findings, from their matrices (each cell over its test set's labels)."
    runs = [(RESULTS/'transfer-minilm'/'transfer-minilm_transfer.csv', 'fastText and all-MiniLM-L6-v2 (sdl), each trained on a seeded sample '
             'of at most the cap in its conditions'),
            (RESULTS/'transfer-fasttext'/'transfer-fasttext_transfer.csv', 'fastText at full data')]
    parts = []
    for csv, what in runs:
        if not csv.exists(): continue
        cond = json.loads(csv.with_name(csv.stem + '_conditions.json').read_text())
        seeds = cond.get('seeds') or []
        parts.append(f"[`{csv.parent.relative_to(ROOT)}/`]({csv.parent.relative_to(ROOT)}/{csv.stem}.md), {what}, seed{'s' * (len(seeds) != 1)} "
                     f"{', '.join(map(str, seeds))}, {cond['jobs']} jobs, {cond['job_seconds'] / 60:.0f} min of job time in its records:\n\n"
                     + '\n'.join(f'- {s}' for s in _transfer_said(csv))
                     + ("\n- One training seed: each interval covers the test sample only, not the variance between training runs." if len(seeds) < 2
                        else ''))
    return '\n\n'.join(parts)

BLOCKS = {'results': results_block, 'stand-in': stand_in_block, 'leaderboard': leaderboard_block, 'analysis': analysis_block,
          'transfer': transfer_block}

def markers(name:str) -> tuple[str, str]:
    return f'<!-- generated:{name} -->', f'<!-- /generated:{name} -->'

def rewrite(text:str, name:str, body:str, path:Path=README) -> str:
    "`text` with its block `name` replaced by `body` (the markers kept); a block missing from the text is an error naming it."
    begin, end = markers(name)
    if begin not in text or end not in text: raise SystemExit(f"{path}: no {begin} ... {end} block")
    return text[:text.index(begin) + len(begin)] + '\n\n' + body.strip() + '\n\n' + text[text.index(end):]

def main(argv):
    text = README.read_text(encoding='utf-8')
    new = text
    for name, fn in BLOCKS.items():
        new = rewrite(new, name, fn())
        if '--check' in argv and new != text:
            raise SystemExit(f"{README}: the block {name!r} differs from what the committed results give: run python tools/readme_results.py")
    if '--check' not in argv: README.write_text(new, encoding='utf-8')

if __name__ == '__main__':
    main(sys.argv[1:])
