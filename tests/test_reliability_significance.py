"""Faults of the significance tests and of a job's accounting: tiny test sets that claimed significance, p-values below what
the data can support, bad input to the significance API, and CPU time spent in a job's child processes."""
import math, subprocess, sys
import numpy as np
import pandas as pd
import pytest

# ================================================================ tiny test sets

def _one_row_leaderboard():
    "A leaderboard over a one-row test set, as `stance_nb leaderboard` builds it: the best system is right, random is wrong."
    from stance_nb.experiment import RunResult
    from stance_nb.leaderboard.build import Leaderboard, build_leaderboard
    from stance_nb.leaderboard.render import leaderboard_markdown
    rows = [dict(row=r, key='mine', test='test', ratio=1.0, seed=1, table='4', column='mine', metric='f1_macro', value=v, job=r)
            for r, v in (('Majority baseline', 1.0), ('Random baseline', 0.0))]
    res = RunResult(pd.DataFrame(rows), {}, {}, {})
    table, tests, stats = build_leaderboard(res, {'mine': ['FAVOR']}, {'mine': {'majority': ['FAVOR'], 'random': ['AGAINST']}},
                                            {'Majority baseline': 'majority', 'Random baseline': 'random'})
    md = leaderboard_markdown(Leaderboard(table, tests, stats, res))
    random = tests.set_index('system').loc['random']
    assert random.tied_with_best is None and random.no_test == '1 test example, fewer than 30: no test', random
    assert '| random | 0.000 (no test) |' in md and 'untested here: mine (1 test example, fewer than 30: no test)' in md, md

def _one_row_bootstrap():
    "One example, A right and B wrong: both tests give p = 1 (the bootstrap gave 0.002, its floor 2/(n + 1))."
    from stance_nb.stats import approximate_randomization, paired_bootstrap
    b, r = paired_bootstrap(['A'], ['A'], ['B']), approximate_randomization(['A'], ['A'], ['B'])
    assert (b['p'], r['p']) == (1.0, 1.0) and (b['method'], r['method']) == ('exact', 'exact'), (b, r)

def _three_rows():
    "Three examples, A right on all and B wrong on all: the exact sign test's p = 0.25 from both tests (were 0.002 and 0.226)."
    from stance_nb.stats import approximate_randomization, paired_bootstrap
    gold, a, b = ['AGAINST', 'FAVOR', 'NONE'], ['AGAINST', 'FAVOR', 'NONE'], ['FAVOR', 'NONE', 'AGAINST']
    assert paired_bootstrap(gold, a, b)['p'] == approximate_randomization(gold, a, b)['p'] == 0.25

def _seeds_leaderboard(keys:dict, preds:dict):
    "A leaderboard of two seeded systems over `keys` (key -> gold labels) with `preds[key][system][seed]` and the page's Markdown."
    from stance_nb.experiment import RunResult
    from stance_nb.leaderboard.build import Leaderboard, build_leaderboard
    from stance_nb.leaderboard.render import leaderboard_markdown
    from stance_nb.metrics import f1_macro
    rows = {'A': 'a', 'B': 'b', 'C': 'c'}
    back = {v: k for k, v in rows.items()}
    scores = [dict(row=back[sy], key=k, test='test', ratio=1.0, seed=x, table='4', column=k, metric='f1_macro', value=f1_macro(keys[k], p),
                   job=f'{sy}{x}{k}') for k, by in preds.items() for sy, runs in by.items() for x, p in runs.items()]
    res = RunResult(pd.DataFrame(scores), {}, {}, {})
    used = {r: s for r, s in rows.items() if any(s in by for by in preds.values())}
    table, tests, stats = build_leaderboard(res, keys, preds, used, n_resamples=300)
    return table, tests, stats, leaderboard_markdown(Leaderboard(table, tests, stats, res))

def _untested_first_seed_winner():
    """On a one-row test set the system right on its first seed only is neither the dataset's best (the higher mean is) nor marked †
    (it was: the tests took the first seed's winner as the best, so it was 'tied with the best' on an untested dataset); the ranks and
    the Friedman test leave out datasets of fewer than 30 test examples, and say so."""
    rng = np.random.default_rng(0)
    big = list(rng.choice(['FAVOR', 'AGAINST'], 60))
    flip = lambda g, k: [('AGAINST' if y == 'FAVOR' else 'FAVOR') if i < k else y for i, y in enumerate(g)]
    keys = {'one': ['FAVOR'], 'big1': big, 'big2': big[::-1]}
    preds = {'one': {'a': {1: ['AGAINST'], 2: ['FAVOR']}, 'b': {1: ['FAVOR'], 2: ['AGAINST']}, 'c': {1: ['FAVOR'], 2: ['FAVOR']}},
             'big1': {'a': {1: flip(big, 5), 2: flip(big, 5)}, 'b': {1: flip(big, 20), 2: flip(big, 20)},
                      'c': {1: flip(big, 30), 2: flip(big, 30)}},
             'big2': {'a': {1: flip(big[::-1], 5), 2: flip(big[::-1], 5)}, 'b': {1: flip(big[::-1], 20), 2: flip(big[::-1], 20)},
                      'c': {1: flip(big[::-1], 30), 2: flip(big[::-1], 30)}}}
    table, tests, stats, md = _seeds_leaderboard(keys, preds)
    one = tests[tests.key == 'one'].set_index('system')
    assert one.best.c and one.tied_with_best.a is None and one.tied_with_best.b is None, one   # c: mean 1.0, the table's bold
    assert '†' not in [l for l in md.splitlines() if l.startswith('| b |')][0], md
    assert stats['ranked'] == ['big1', 'big2'] and stats['not_ranked'] == {'one': '1 test example, fewer than 30'}, stats
    assert stats.get('friedman', {}).get('N', 2) == 2 and 'left out of the ranks: one (1 test example, fewer than 30)' in md, md

def _seed_dependent_verdict():
    """Significantly below the best on one seed and not on the other: not marked below (p, the largest over the seeds, ≥ α), and the
    tests name each seed's p (the first seed's alone decided it)."""
    rng = np.random.default_rng(1)
    gold = list(rng.choice(['FAVOR', 'AGAINST'], 200))
    flip = lambda k: [('AGAINST' if y == 'FAVOR' else 'FAVOR') if i < k else y for i, y in enumerate(gold)]
    table, tests, stats, md = _seeds_leaderboard({'d': gold}, {'d': {'a': {1: flip(0), 2: flip(10)}, 'b': {1: flip(60), 2: flip(12)}}})
    b = tests.set_index('system').loc['b']
    seeds = dict(x.split(': ') for x in b.p_by_seed.split('; '))
    assert float(seeds['seed 1']) < 0.05 <= float(seeds['seed 2']) and b.p_vs_best == max(map(float, seeds.values())), b
    assert b.tied_with_best == True, b   # noqa: E712 (a numpy bool in the row)

TINY = {'one_row_leaderboard': _one_row_leaderboard, 'one_row_bootstrap': _one_row_bootstrap, 'three_rows': _three_rows,
        'untested_first_seed_winner': _untested_first_seed_winner, 'seed_dependent_verdict': _seed_dependent_verdict}

@pytest.mark.parametrize('case', list(TINY))
def test_tiny_test_set_claims_no_significance(case):
    "A test set too small to support a significant difference is never marked as one."
    TINY[case]()

# ================================================================ the significance API refuses bad input

def _api():
    from stance_nb import stats
    return stats

NAN = float('nan')
BAD_INPUT = {   # case -> (call on the stats module, what the ValueError must say)
    'nan_gold_label': (lambda s: s.paired_bootstrap(['A', NAN, 'B'], ['A', 'A', 'B'], ['B', 'A', 'B']), 'gold: a missing label (nan) at index 1'),
    'nan_prediction': (lambda s: s.best_and_ties(['A', 'B'], {'x': ['A', 'B'], 'y': ['A', NAN]}), "preds['y']: a missing label (nan) at index 1"),
    'none_prediction': (lambda s: s.approximate_randomization(['A', 'B'], ['A', 'B'], [None, 'B']), 'pred_b: a missing label (None) at index 0'),
    'alpha_1.5': (lambda s: s.best_and_ties(['A', 'B'], {'x': ['A', 'B'], 'y': ['A', 'A']}, alpha=1.5),
                  'alpha must be a significance level between 0 and 1 (exclusive), got 1.5'),
    'alpha_1.5_marks': (lambda s: s.significance_marks({'base': [.5, .6, .7], 'x': [.6, .7, .8]}, 'base', alpha=1.5),
                        'alpha must be a significance level between 0 and 1 (exclusive), got 1.5'),
    'inf_seed_score': (lambda s: s.seed_test([.7, math.inf, .5], [.6, .5, .4]), 'a_scores: an infinite score at position 1; expected finite scores'),
    'inf_ttest_score': (lambda s: s.paired_ttest([.7, .6, .5], [.6, -math.inf, .4]), 'b: an infinite score at position 1; expected finite scores'),
    'inf_rank_score': (lambda s: s.friedman(pd.DataFrame({'d1': [.1, .2, math.inf], 'd2': [.3, .2, .1]}, index=list('ABC'))),
                       'scores: infinite score(s): C on d1; expected finite scores'),
    'nan_critical_difference': (lambda s: s.nemenyi_groups(pd.Series({'A': 1.2, 'B': 1.8, 'C': 3.0}), NAN),
                                'cd must be a positive finite critical difference (see nemenyi_cd), got nan'),
}

@pytest.mark.parametrize('case', list(BAD_INPUT))
def test_significance_api_refuses_bad_input(case):
    "NaN labels, a significance level outside (0, 1), an infinite score, a NaN critical difference: one ValueError naming the argument."
    call, message = BAD_INPUT[case]
    with pytest.raises(ValueError) as e: call(_api())
    assert message in str(e.value), str(e.value)

# ================================================================ the floor of a p-value

def _systems(m:int, k:int, seed:int=0):
    "Gold labels, a system right on about 70 % of `m` examples, and one wrong on `k` more of them."
    rng = np.random.default_rng(seed)
    labels = np.array(['AGAINST', 'FAVOR', 'NONE'])
    gold = rng.choice(labels, m)
    a = np.where(rng.random(m) < .7, gold, rng.choice(labels, m))
    b, right = a.copy(), rng.permutation(np.flatnonzero(a == gold))[:k]
    b[right] = labels[(np.searchsorted(labels, gold[right]) + 1) % 3]
    return list(gold), list(a), list(b)

@pytest.mark.parametrize('test', ['paired_bootstrap', 'approximate_randomization'])
def test_p_value_floor_reported(test):
    """Every p-value comes with its floor, the smallest p its test could give on those data, and is never below it: the sampling
    floor (2/(n + 1) for the bootstrap, 1/(n + 1) for randomization) on many differing examples, 2^(1−k) on k ≤ 20."""
    fn = getattr(_api(), test)
    many = fn(*_systems(300, 120), n=199)
    assert many['p_floor'] == (2 if test == 'paired_bootstrap' else 1) / 200 and many['p'] >= many['p_floor'], many
    few = fn(*_systems(300, 4), n=199)
    assert (few['p_floor'], few['method']) == (0.125, 'exact') and few['p'] >= few['p_floor'], few
    t = _api().best_and_ties(*_systems(300, 4)[:1], {'a': _systems(300, 4)[1], 'b': _systems(300, 4)[2]}, n=199)
    assert t.set_index('system').p_floor['b'] == 0.125

# ================================================================ the two tests agree

def test_bootstrap_and_randomization_agree_in_direction():
    """On constructed cases, the paired bootstrap and approximate randomization say the same thing: the same sign of the
    difference, and both significant at 0.05 or neither (they disagreed on 1 and 3 examples: 0.002 against 1.0 and 0.226)."""
    s = _api()
    g3, a3, b3 = ['AGAINST', 'FAVOR', 'NONE'], ['AGAINST', 'FAVOR', 'NONE'], ['FAVOR', 'NONE', 'AGAINST']
    g, a, b = _systems(600, 150)
    cases = {'one example': (['A'], ['A'], ['B']), 'three examples': (g3, a3, b3), 'three, B better': (g3, b3, a3),
             'A far better': (g, a, b), 'B far better': (g, b, a), 'two differences': _systems(600, 2), 'the same': (g, a, a)}
    verdicts = {}
    for name, (gold, x, y) in cases.items():
        boot, rand = s.paired_bootstrap(gold, x, y, n=500), s.approximate_randomization(gold, x, y, n=500)
        verdicts[name] = (np.sign(boot['delta']), boot['p'] < 0.05, rand['p'] < 0.05)
        assert np.sign(boot['delta']) == np.sign(rand['delta']) and (boot['p'] < 0.05) == (rand['p'] < 0.05), (name, boot, rand)
    assert verdicts['A far better'] == (1, True, True) and verdicts['B far better'] == (-1, True, True)
    assert verdicts['three examples'] == (1, False, False) and verdicts['the same'] == (0, False, False)

# ================================================================ CPU time of a job's child processes

_BURN = 'import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass'

def _child_cpu(ctx):
    "A system that computes in a child process, as fastText's isolated training and parallel grid cells do."
    subprocess.run([sys.executable, '-c', _BURN], check=True)
    return {(k, t): [ctx.data[k].label.iloc[0]] * len(frame) for (k, t), frame in ctx.tests.items()}, {}

@pytest.mark.filterwarnings("ignore:collapsed predictions")
def test_job_cpu_time_counts_child_processes(tmp_path):
    "A job whose system spends 0.5 CPU seconds in a child process records them (it recorded ~0.01 s: a job that seemed to wait)."
    from stance_nb.experiment import DataSpec, Experiment, Row, SYSTEMS, register_system, run
    from stance_nb.experiment.tables import per_data
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    if 'child_cpu' not in SYSTEMS: register_system('child_cpu', seeded=False)(_child_cpu)
    write_benchmark_fixtures(tmp_path/'data', names=['ibmcs'])
    exp = Experiment('benchmark', 'schiller2021', {'ibmcs': DataSpec.of('ibmcs')}, [Row('Child', 'child_cpu', tables=('4',))],
                     tables={'4': per_data()})
    res = run(exp, data_dir=tmp_path/'data', out=tmp_path/'runs')
    (rec,) = res.records.values()
    assert rec.cpu_time >= 0.45, rec.cpu_time
    assert res.conditions['job_cpu_seconds']['cpu'] >= 0.4, res.conditions['job_cpu_seconds']
