"""Write the README's results section (between `<!-- results:begin -->` and `<!-- results:end -->`) from the committed
scorecard and tables, so that no status claim or headline number is typed by hand.

`python tools/readme_results.py` rewrites the section; `--check` exits 1 when the README's section is not what the
committed results give (a test runs it). Every mean set beside the paper's goes through the like-for-like guard
(`stance_nb.experiment.compare`): where the two sides differ, the sentence says how and shows no Δ.
"""
import json, re, sys
from pathlib import Path
import pandas as pd
from stance_nb.experiment.compare import Side, guarded_delta, not_comparable
from stance_nb.robustness import paper_table11, robustness_tables, PAPER_C
from stance_nb.data.benchmark import BENCHMARK
from stance_nb.reference import reference
from stance_nb.scorecard import scorecard, clauses, PAPER_NAMES, COLUMN_NAMES, VERDICTS

ROOT = Path(__file__).resolve().parents[1]
RESULTS, README = ROOT/'results', ROOT/'README.md'
BEGIN, END = '<!-- results:begin -->', '<!-- results:end -->'
RUN = RESULTS/'benchmark-minilm'
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

def _status(card:pd.DataFrame, paper:str, tables:list, rows) -> str:
    "The verdicts of one group of cells in words: per column, the counts and the main reason the rest did not run."
    d = card[(card.paper_id == paper) & card.table.isin(tables)]
    if rows is not None: d = d[d.row.isin(rows)]
    parts = []
    for side, p in (('ours', 'ours'), ('stand-in', 'standin')):
        v = d[f'{p}_verdict'].dropna() if f'{p}_verdict' in d else pd.Series(dtype=object)
        if not len(v): continue
        counts = ', '.join(f"{(v == k).sum()} {'differ' if k == 'differs' else k}" for k in VERDICTS if (v == k).any())
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

def _cell(table:str, row:str, column:str, metric:str='f1_macro') -> pd.Series:
    t = pd.read_csv(RUN/f'{STEM}_table{table}.csv', dtype={'row': str, 'column': str})
    d = t[(t.row == row) & (t.column == column) & (t.metric == metric)]
    assert len(d) == 1, (table, row, column, metric)
    return d.iloc[0]

def _beside(ours:pd.Series, fmt:str='{:.3f}') -> str:
    "Our committed cell beside the paper's: the paper's value and Δ where the table computed one, else why there is none."
    if pd.notna(ours.delta): return f"{fmt.format(ours.paper)} (Δ {ours.delta:+.3f})" if '%' not in fmt else f"{fmt.format(ours.paper)}"
    why = next((c for c in clauses(str(ours.note)) if c.startswith(('not comparable', 'no paper value'))), 'no paper value')
    return f"{fmt.format(ours.paper)}: {why}, no Δ" if pd.notna(ours.paper) else f"{why}, no Δ"

def _paper_mdl_robustness(datasets:list) -> tuple[dict, Side]:
    "The paper's MT-DNN_MDL over `datasets` and the two attacks we ran (its Table 11): relative drops and Resilience_rel overall."
    attacks = ['spelling', 'negation']
    p = paper_table11()
    p = p[(p.system == 'MT-DNN_MDL') & p.dataset.isin(datasets) & p.attack.isin(['test', *attacks])]
    t = robustness_tables(p, {a: PAPER_C[a] for a in attacks})
    drop = t['table6'].set_index('attack').relative_drop
    overall = t['table7'].set_index('measure').resilience_rel['overall']
    side = Side.of(datasets, 'MT-DNN_MDL', attacks, sorted(BENCHMARK))
    return dict(spelling=100 * drop['spelling'], negation=100 * drop['negation'], overall=100 * overall), side

def claims_table() -> str:
    "The stand-in's headline claims next to the paper's, each through the guard."
    cond = json.loads((RUN/f'{STEM}_conditions.json').read_text())
    seven = sorted(cond['data'])
    sdl, mdl = _cell('4', 'BERT_SDL', 'Avg.'), _cell('4', 'BERT_MDL', 'Avg.')
    rel = {(s, a): _cell('6', a, s, 'relative_drop') for s in ('BERT_SDL', 'BERT_MDL') for a in ('Spelling', 'Negation')}
    res = {s: _cell('7', 'Overall', s, 'resilience_rel') for s in ('BERT_SDL', 'BERT_MDL')}
    p_mdl, p_side = _paper_mdl_robustness(seven)
    o_side = Side.of(seven, 'BERT_MDL', ['spelling', 'negation'], seven)
    _, why = guarded_delta(res['BERT_MDL'].ours_mean, p_mdl['overall'], o_side, p_side)
    r10 = {s: _cell('8', s, '10%') for s in ('BERT_SDL', 'BERT_MDL')}
    r100 = {s: _cell('8', s, '100%') for s in ('BERT_SDL', 'BERT_MDL')}
    six = [k.strip() for k in re.search(r'every compared row has \(([^)]*)\)', r10['BERT_SDL'].note).group(1).split(',')]
    p8 = {s: float(reference('schiller2021', '8', row=s, column='10%', metric='f1_macro').value.iloc[0]) for s in ('BERT_SDL', 'MT-DNN_MDL')}
    o10, p10 = Side.of(six, 'BERT_SDL', ratio=0.1), Side.of(sorted(BENCHMARK), 'BERT_SDL', ratio=0.1)
    rows = [
        ('MDL beats SDL (Table 4, mean macro-F1 over the seven mirror datasets)',
         f"SDL {_beside(sdl)}; MDL {mdl.paper:.3f}, " + _beside(mdl).split(': ', 1)[-1],
         f"SDL {sdl.ours_mean:.3f}, MDL {mdl.ours_mean:.3f} ({mdl.ours_mean - sdl.ours_mean:+.3f})"),
        ('MDL is less robust than SDL (Table 6 relative drop of the mean macro-F1, spelling and negation; Table 7 Resilience_rel overall)',
         f"SDL {rel['BERT_SDL', 'Spelling'].paper:.1f} %, {rel['BERT_SDL', 'Negation'].paper:.1f} %, {res['BERT_SDL'].paper:.1f} "
         f"(Δ {rel['BERT_SDL', 'Spelling'].delta:+.1f}, {rel['BERT_SDL', 'Negation'].delta:+.1f}, {res['BERT_SDL'].delta:+.1f}); "
         f"MT-DNN_MDL over the same {len(seven)} datasets and two attacks {p_mdl['spelling']:.1f} %, {p_mdl['negation']:.1f} %, "
         f"{p_mdl['overall']:.1f}: {why} against our BERT_MDL, no Δ",
         f"SDL {rel['BERT_SDL', 'Spelling'].ours_mean:.1f} %, {rel['BERT_SDL', 'Negation'].ours_mean:.1f} %, {res['BERT_SDL'].ours_mean:.1f}; "
         f"MDL {rel['BERT_MDL', 'Spelling'].ours_mean:.1f} %, {rel['BERT_MDL', 'Negation'].ours_mean:.1f} %, {res['BERT_MDL'].ours_mean:.1f}"),
        ('MDL helps most with 10 % of the data (Table 8)',
         f"SDL {p8['BERT_SDL']:.3f}, MT-DNN_MDL {p8['MT-DNN_MDL']:.3f} over its ten datasets: " + not_comparable(o10, p10) + ', no Δ',
         f"{len(six)} datasets: SDL {r10['BERT_SDL'].ours_mean:.3f}, MDL {r10['BERT_MDL'].ours_mean:.3f} "
         f"({r10['BERT_MDL'].ours_mean - r10['BERT_SDL'].ours_mean:+.3f}); at 100 % {r100['BERT_SDL'].ours_mean:.3f} and {r100['BERT_MDL'].ours_mean:.3f}"),
    ]
    lines = ['| the paper\'s claim | paper, like for like or why not | stand-in (seed 1, bf16) |', '|---|---|---|']
    return '\n'.join(lines + [f'| {a} | {b} | {c} |' for a, b, c in rows])

def section() -> str:
    card = scorecard(RESULTS)
    return '\n\n'.join([
        BEGIN,
        'Generated by `python tools/readme_results.py` from the committed scorecard ([`results/scorecard/`](results/scorecard/scorecard.md), '
        '`stance_nb scorecard`) and tables; every cell of the papers\' tables has one verdict there: reproduced (|Δ| within twice the '
        'measured noise), differs, not comparable (why) or not run (why).',
        status_table(card),
        c_a_line(),
        'The stand-in run at full data ([`results/benchmark-minilm/`](results/benchmark-minilm/README.md), all-MiniLM-L6-v2 for '
        'BERT-large) against the paper\'s claims:',
        claims_table(),
        END])

def main(argv):
    text = README.read_text(encoding='utf-8')
    if BEGIN not in text or END not in text: raise SystemExit(f"{README}: no {BEGIN} ... {END} section")
    new = text[:text.index(BEGIN)] + section() + text[text.index(END) + len(END):]
    if '--check' in argv:
        if new != text: raise SystemExit(f"{README}: the results section differs from what the committed results give: run python tools/readme_results.py")
        return
    README.write_text(new, encoding='utf-8')

if __name__ == '__main__':
    main(sys.argv[1:])
