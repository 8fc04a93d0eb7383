"""The analyses of finished runs (`stance_nb.analysis`): each statistic against a value worked out by hand on a constructed case,
and one pass over the committed stand-in records (skipped where the data mirror is absent)."""
import json, os
from pathlib import Path
import numpy as np
import pytest
from stance_nb.analysis import (attack_drop, drop_difference, pooled_drop_difference, potency_interval, holm, by_target, run_kappa,
                                run_diff, find_job, job_predictions, load_test_rows, same_rows)
from stance_nb.metrics import f1_macro
from stance_nb.records import job_record

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT/'results/benchmark-minilm/runs'
GOLD = ['pro'] * 100 + ['con'] * 100
ATT = ['con'] * 25 + ['pro'] * 75 + ['pro'] * 25 + ['con'] * 75   # right on 150 of 200 rows: macro-F1 0.75

def test_drop_interval_holds_the_true_drop():
    "Clean predictions perfect, attacked right on 3/4 of each label: drop 0.25, inside its interval, which excludes 0."
    r = attack_drop(GOLD, GOLD, ATT, c=1.0, n=400, seed=1)
    assert (r['clean'], r['attacked']) == (1.0, 0.75) and abs(r['drop'] - 0.25) < 1e-12
    assert 0 < r['drop_ci'][0] < 0.25 < r['drop_ci'][1] and r['p'] == 2 / 401
    assert abs(r['resilience_rel'] - 0.75) < 1e-12 and r['resilience_ci'][0] < 0.75 < r['resilience_ci'][1]

def test_difference_of_relative_drops_holds_the_truth():
    "A drops by a quarter, B not at all: A − B = 0.25 inside the interval; pooled over two datasets (one without a drop) 0.125."
    r = drop_difference(GOLD, (GOLD, ATT), (GOLD, GOLD), n=400)
    assert abs(r['diff'] - 0.25) < 1e-12 and 0 < r['ci'][0] < 0.25 < r['ci'][1]
    p = pooled_drop_difference({'x': (GOLD, (GOLD, ATT), (GOLD, GOLD)), 'y': (GOLD, (GOLD, GOLD), (GOLD, GOLD))}, n=400)
    assert abs(p['diff'] - 0.125) < 1e-12 and p['ci'][0] < 0.125 < p['ci'][1]
    q = potency_interval(GOLD, {'A': ATT, 'B': GOLD}, c=0.5, n=400)
    assert abs(q['potency'] - 0.0625) < 1e-12 and q['potency_ci'][0] < 0.0625 < q['potency_ci'][1]

def test_holm_by_hand():
    "Holm's adjusted p-values, worked by hand: sorted 0.01, 0.03, 0.04 times 3, 2, 1, then made non-decreasing."
    assert np.allclose(holm([0.04, 0.01, 0.03]), [0.06, 0.03, 0.06])

def test_per_target_gain_sits_where_it_was_put():
    "A beats B on target x only (B says 'pro' on every x row): only x is significant after Holm; y's difference is exactly 0."
    g = ['pro', 'con'] * 40
    b = ['pro'] * 60 + g[60:]
    t = by_target(g, g, b, ['x'] * 60 + ['y'] * 20, n=300)
    assert list(t.significant) == [True, False] and t.delta[1] == 0.0
    assert abs(t.delta[0] - (1 - f1_macro(g[:60], b[:60]))) < 1e-12

def test_kappa_and_flips():
    "κ of identical runs is 1, of runs that swap every label −1; each flipped example appears once, with its id."
    assert run_kappa(['a', 'b', 'c'], ['a', 'b', 'c']) == 1.0 and abs(run_kappa(['a', 'b'], ['b', 'a']) + 1) < 1e-12
    import pandas as pd
    d = run_diff(['a', 'b', 'a'], ['a', 'a', 'b'], ['b', 'a', 'a'], rows=pd.DataFrame({'id': ['r0', 'r1', 'r2']}))
    assert list(d['flipped'].id) == ['r0', 'r2'] and d['flipped'].row.is_unique and d['counts'] == {'a': 1, 'b': 1, 'neither': 0}

@pytest.mark.skipif(not (os.environ.get('STANCE_NB_DATA') and (Path(os.environ['STANCE_NB_DATA'])/'semeval2016t6').is_dir()),
                    reason='needs the data mirror (STANCE_NB_DATA) for the gold labels')
def test_committed_records_semeval2016():
    "From the committed job store: SDL's clean macro-F1 equals its record's, and the per-target table covers the five targets."
    from stance_nb.experiment.spec import DataSpec
    sdl, mdl = find_job(RUNS, 'BERT_SDL', 'semeval2016t6'), find_job(RUNS, 'BERT_MDL', 'semeval2016t6')
    rows = load_test_rows(DataSpec.of('semeval2016t6'), None, same_rows([sdl, mdl], 'semeval2016t6'))
    a, b = job_predictions(sdl, 'semeval2016t6')[0], job_predictions(mdl, 'semeval2016t6')[0]
    rec = [s for s in job_record(sdl).metrics['scores']
           if s['test'] == 'test' and s['metric'] == 'f1_macro']
    assert abs(f1_macro(list(rows.label), a) - rec[0]['value']) < 1e-12
    t = by_target(list(rows.label), a, b, list(rows.target), n=200)
    assert len(t) == 5 and t.rows.sum() == len(rows) == 1249

@pytest.mark.skipif(not (os.environ.get('STANCE_NB_DATA') and (Path(os.environ['STANCE_NB_DATA'])/'ibmcs').is_dir()),
                    reason='needs the data mirror (STANCE_NB_DATA) for the gold labels')
def test_analyze_command_on_committed_records(tmp_path, capsys):
    "`stance_nb analyze diff` of SDL's clean against its negated predictions on ibmcs: the summary and both CSVs, each flip once."
    import pandas as pd
    from stance_nb.cli.main import main
    assert main(['analyze', 'diff', '--from', str(RUNS), '--dataset', 'ibmcs', '--systems', 'BERT_SDL', '--tests', 'test,negation',
                 '--output-dir', str(tmp_path)]) == 0
    flips = pd.read_csv(tmp_path/'diff_ibmcs_flipped.csv')
    job = find_job(RUNS, 'BERT_SDL', 'ibmcs')
    a, b = job_predictions(job, 'ibmcs', 'test')[0], job_predictions(job, 'ibmcs', 'negation')[0]
    assert list(flips.row) == [i for i in range(len(a)) if a[i] != b[i]] and flips.row.is_unique
    assert '# diff on ibmcs: test against negation' in capsys.readouterr().out

def test_several_training_seeds_are_named_never_picked(tmp_path):
    "Two jobs of one row with seeds 1 and 2 and no seed asked: an error listing both seeds; each job's record gives its own seed."
    from stance_nb.core import StanceDataError
    from stance_nb.analysis import job_conditions
    from stance_nb.records import RunRecord, write_predictions
    for s in (1, 2):
        f = tmp_path/f'A-s{s}'; f.mkdir()
        rec = RunRecord('benchmark/x', dict(row='A', system='sdl', ratio=1.0, seed=s, data={'k:test': 'fp'}))
        rec.files['predictions/k/test'] = write_predictions(f/'predictions_k_test.jsonl', ['pro']).name
        rec.save(f/'record.json')
    with pytest.raises(StanceDataError, match=r"2 jobs of row 'A' on 'k' at ratio 1, training seeds \[1, 2\]"): find_job(tmp_path, 'A', 'k')
    assert job_conditions(find_job(tmp_path, 'A', 'k', seed=2), 'k')['seed'] == 2

def test_drop_p_at_its_floor_is_marked():
    "Every p of an analysis comes with its floor: no resample of a perfect clean run loses nothing, so p equals 2/(n + 1), its floor."
    r = attack_drop(GOLD, GOLD, ATT, n=400)
    assert r['p'] == r['p_floor'] == 2 / 401
    assert drop_difference(GOLD, (GOLD, ATT), (GOLD, GOLD), n=400)['p_floor'] == 2 / 401
    assert list(by_target(GOLD, GOLD, ATT, ['x'] * 200, n=300).p_floor) == [2 / 301]

@pytest.mark.skipif(not (os.environ.get('STANCE_NB_DATA') and (Path(os.environ['STANCE_NB_DATA'])/'ibmcs').is_dir()),
                    reason='needs the data mirror (STANCE_NB_DATA) for the gold labels')
@pytest.mark.parametrize('kind', ['robustness', 'targets', 'diff'])
def test_analyze_states_its_conditions(kind, tmp_path):
    """`stance_nb analyze` on the committed seed-1 jobs without --seeds: the tables and the Markdown give seed 1, the metric under
    every table's heading, the data's split and fingerprint, the jobs and the resamples; a p at its floor shows its floor beside it."""
    import pandas as pd
    from stance_nb.cli.main import main
    systems = 'BERT_SDL' if kind == 'diff' else 'BERT_MDL,BERT_SDL'
    tests = {'robustness': 'negation', 'targets': 'test', 'diff': 'test,negation'}[kind]
    assert main(['analyze', kind, '--from', str(RUNS), '--dataset', 'ibmcs', '--systems', systems, '--tests', tests, '--n', '200',
                 '--output-dir', str(tmp_path)]) == 0
    md = (tmp_path/f'{kind}_ibmcs.md').read_text()
    seeds = '- training seeds: BERT_SDL 1:' if kind == 'diff' else '- training seeds: BERT_MDL 1, BERT_SDL 1:'
    for said in [seeds, 'one training seed per run', '- metric: macro-F1', '- data: split test, fingerprint 96419d51c3c0fa7c',
                 '- bootstrap resamples: 200', 'training seed 1, training ratio 1, job BERT_SDL-ibmcs-r1-s1-9338078525f7']:
        assert said in md, said
    tables = [l for l in md.splitlines() if l.startswith('## ')]
    assert tables and all(md.split(h + '\n\n', 1)[1].split('\n')[0][:1].isupper() for h in tables)   # a caption under each heading
    assert 'macro-f1' in md.split('## ', 1)[1].split('\n\n')[1].lower() or kind == 'diff'   # the first table's caption names the metric
    cond = json.loads((tmp_path/f'{kind}_ibmcs_conditions.json').read_text())
    assert {j['seed'] for j in cond['jobs']} == {1} and cond['data']['fingerprint'] == '96419d51c3c0fa7c'
    if kind == 'robustness':
        drops = pd.read_csv(tmp_path/'robustness_ibmcs_drops.csv')
        assert list(drops.seed) == [1, 1] and (drops.p_floor == 2 / 201).all()
        assert drops.set_index('system').p['BERT_MDL'] == 2 / 201 and '| 0.00995 | 0.00995 |' in md   # MDL's negation drop: p at its floor
        assert list(pd.read_csv(tmp_path/'robustness_ibmcs_difference.csv')[['seed_a', 'seed_b']].iloc[0]) == [1, 1]
    if kind == 'targets': assert 'p_floor' in pd.read_csv(tmp_path/'targets_ibmcs_targets.csv').columns
