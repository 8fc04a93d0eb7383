"""`stance_nb.stats`: "A beats B" as a tested claim. Paired bootstrap and approximate randomization of
macro-F1 on the test examples, a t-test over seeds, and ranks, Friedman and Nemenyi across datasets (Demšar 2006)."""
import math, time
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from stance_nb.metrics import f1_macro
from stance_nb.stats import (paired_bootstrap, approximate_randomization, best_and_ties, seed_test, mean_ranks,
                                               friedman, nemenyi_cd, nemenyi_groups, cd_diagram, resampled_f1_macro)

LABELS = np.array(['AGAINST', 'FAVOR', 'NONE'])
TESTS = [paired_bootstrap, approximate_randomization]

def systems(m:int=1000, seed:int=0, worse=(2, 200)):
    "Gold labels and a system `a` (right on ~70%), and one system per `k` of `worse`: `a` made wrong on k examples where it is right."
    rng = np.random.default_rng(seed)
    gold = rng.choice(LABELS, m, p=[.4, .35, .25])
    a = np.where(rng.random(m) < .7, gold, rng.choice(LABELS, m))
    right = rng.permutation(np.flatnonzero(a == gold))
    out = {'a': list(a)}
    for k in worse:
        p = a.copy(); i = right[:k]
        p[i] = LABELS[(np.searchsorted(LABELS, gold[i]) + 1) % 3]   # the next label: wrong
        assert (p != a).sum() == k and (p[i] != gold[i]).all()
        out[k] = list(p)
    return list(gold), out

@pytest.fixture(scope='module')
def data(): return systems()

@pytest.mark.parametrize('test', TESTS)
def test_two_differences_in_a_thousand_are_not_significant(data, test):
    "Systems that differ on 2 of 1,000 examples: a real but tiny difference, well within the luck of the draw."
    gold, p = data
    r = test(gold, p['a'], p[2])
    assert r['delta'] > 0 and r['p'] > 0.05

@pytest.mark.parametrize('test', TESTS)
def test_two_hundred_differences_are_significant(data, test):
    "200 of 1,000 examples where the better system is right and the other wrong: p < 0.01, either way round."
    gold, p = data
    r, back = test(gold, p['a'], p[200]), test(gold, p[200], p['a'])
    assert r['p'] < 0.01 and back['p'] == r['p']
    assert r['delta'] == pytest.approx(f1_macro(gold, p['a']) - f1_macro(gold, p[200]), abs=1e-15) and back['delta'] == -r['delta']

def test_bootstrap_interval(data):
    "The 95% interval holds the observed difference; it excludes 0 for 200 differences and not for 2."
    gold, p = data
    big, small = paired_bootstrap(gold, p['a'], p[200]), paired_bootstrap(gold, p['a'], p[2])
    assert 0 < big['ci'][0] < big['delta'] < big['ci'][1]
    assert small['ci'][0] <= 0 <= small['ci'][1]
    assert set(big) == {'delta', 'p', 'p_floor', 'method', 'ci', 'n', 'seed'} and (big['n'], big['seed']) == (1000, 0)
    assert (big['method'], small['method']) == ('bootstrap', 'exact')   # 2 differing examples: the exact test's p

@pytest.mark.parametrize('test', TESTS)
def test_seeded_results_repeat(data, test):
    "The same seed gives the same result on a re-run; another seed gives other draws."
    gold, p = data
    assert test(gold, p['a'], p[200], n=300, seed=4) == test(gold, p['a'], p[200], n=300, seed=4)
    if test is paired_bootstrap:
        assert test(gold, p['a'], p[200], n=300, seed=4)['ci'] != test(gold, p['a'], p[200], n=300, seed=5)['ci']

@pytest.mark.parametrize('test', TESTS)
def test_identical_systems(data, test):
    "A system against itself: difference 0, p = 1."
    gold, p = data
    r = test(gold, p['a'], p['a'], n=50)
    assert (r['delta'], r['p']) == (0.0, 1.0)

def test_vectorized_macro_f1_equals_the_package_scorer():
    """Macro-F1 of each resample from confusion counts equals `stance_nb.metrics.f1_macro` on the resampled rows, to 1e-12,
    labels absent from a resample (or from gold, or from the predictions) included."""
    rng = np.random.default_rng(11)
    checked = absent = 0
    for _ in range(120):
        m, L = int(rng.integers(1, 50)), int(rng.integers(1, 7))
        w = rng.dirichlet(np.full(L, 0.4))
        gold, pred = rng.choice(L, m, p=w).astype(str), rng.choice(L, m, p=w[::-1]).astype(str)
        idx = rng.integers(0, m, size=(5, int(rng.integers(1, 2 * m + 1))))
        got = resampled_f1_macro(list(gold), list(pred), idx)
        want = [f1_macro(list(gold[i]), list(pred[i])) for i in idx]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        checked += len(idx)
        absent += sum(len(set(gold[i]) | set(pred[i])) < len(set(gold) | set(pred)) for i in idx)
    assert checked == 600 and absent > 100   # many resamples miss a label that the full data has

def test_the_tests_are_what_they_say():
    """Both tests recomputed the slow way, row by row with `f1_macro`, from the same random draws (the rows of a resample
    are `rng.integers(0, m, (n, m))`; a shuffle swaps the disagreements where `rng.random((n, d)) < 0.5`); 25 disagreements,
    above the 20 where the exact test takes over."""
    gold, p = systems(m=60, seed=5, worse=(25,))
    g, a, b = np.array(gold), np.array(p['a']), np.array(p[25])
    n, delta = 40, f1_macro(gold, p['a']) - f1_macro(gold, p[25])
    idx = np.random.default_rng(9).integers(0, 60, size=(n, 60))
    d = np.array([f1_macro(list(g[i]), list(a[i])) - f1_macro(list(g[i]), list(b[i])) for i in idx])
    r = paired_bootstrap(gold, p['a'], p[25], n=n, seed=9)
    assert r['delta'] == delta and r['ci'] == pytest.approx(tuple(np.percentile(d, [2.5, 97.5])), abs=1e-12)
    assert r['p'] == min(1.0, 2 * (np.sum(d <= 1e-12) + 1) / (n + 1))
    diff = np.flatnonzero(a != b)
    swaps = np.random.default_rng(9).random((n, len(diff))) < 0.5
    shuffled = []
    for s in swaps:
        a2, b2 = a.copy(), b.copy()
        a2[diff[s]], b2[diff[s]] = b[diff[s]], a[diff[s]]
        shuffled.append(f1_macro(gold, list(a2)) - f1_macro(gold, list(b2)))
    r = approximate_randomization(gold, p['a'], p[25], n=n, seed=9)
    assert r['p'] == (np.sum(np.abs(shuffled) >= abs(delta) - 1e-12) + 1) / (n + 1)

def test_best_and_ties_marks_the_right_systems(data):
    "The best is the highest macro-F1 (the first listed on a tie); 2 differences are a tie, 200 are not, a copy ties."
    gold, p = data
    for test in ('bootstrap', 'randomization'):
        t = best_and_ties(gold, {'much worse': p[200], 'a': p['a'], 'slightly worse': p[2], 'copy of a': p['a']}, n=500, test=test)
        assert list(t.columns) == ['system', 'score', 'p_vs_best', 'p_floor', 'method', 'tied_with_best', 'best', 'no_test']
        assert list(t.system[t.best]) == ['a'] and math.isnan(t.p_vs_best[t.best].iloc[0])
        assert dict(zip(t.system, t.tied_with_best)) == {'much worse': False, 'a': True, 'slightly worse': True, 'copy of a': True}
        assert t.set_index('system').score.to_dict() == pytest.approx({s: f1_macro(gold, p[k]) for s, k in
                                                                      [('much worse', 200), ('a', 'a'), ('slightly worse', 2), ('copy of a', 'a')]})
        assert t.set_index('system').p_vs_best['copy of a'] == 1.0
    with pytest.raises(ValueError, match="unknown test 'sign'; valid tests: bootstrap, randomization"):
        best_and_ties(gold, {'a': p['a']}, test='sign')

def test_seed_test():
    "A paired t-test over matching seeds from 3 seeds on (scipy's `ttest_rel`); fewer seeds: no p, and why."
    a, b = [.71, .69, .73, .70], [.66, .67, .68, .64]
    r = seed_test(a, b)
    assert r['p'] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12) and r['n'] == 4 and r['reason'] is None
    assert r['mean_diff'] == pytest.approx(np.mean(np.subtract(a, b)))
    two = seed_test([.7, .8], [.6, .7])
    assert two['p'] is None and 'at least 3' in two['reason']
    by_seed = seed_test({2: .69, 1: .71, 3: .73}, {1: .66, 3: .68, 2: .67})   # paired by seed, not by position
    assert by_seed['p'] == pytest.approx(stats.ttest_rel([.71, .69, .73], [.66, .67, .68]).pvalue)
    with pytest.raises(ValueError, match='3 scores against 2'): seed_test([.1, .2, .3], [.1, .2])

# 4 systems x 5 datasets, ranks worked out by hand (d3 has a tie: A and B share ranks 1 and 2 -> 1.5 each)
TABLE = pd.DataFrame({'d1': [.90, .80, .70, .60], 'd2': [.85, .86, .70, .50], 'd3': [.70, .70, .60, .65],
                      'd4': [.60, .50, .55, .40], 'd5': [.90, .80, .85, .95]}, index=['A', 'B', 'C', 'D'])
# ranks    d1 d2 d3  d4 d5 -> mean
# A         1  2 1.5  1  2 -> 1.5
# B         2  1 1.5  3  4 -> 2.3
# C         3  3  4   2  3 -> 3.0
# D         4  4  3   4  1 -> 3.2

def test_friedman_on_a_constructed_table():
    "Mean ranks as worked out by hand; the statistic is Demšar's formula divided by the tie correction (one tie of 2)."
    assert mean_ranks(TABLE).to_dict() == pytest.approx({'A': 1.5, 'B': 2.3, 'C': 3.0, 'D': 3.2})
    fr = friedman(TABLE)
    assert fr['ranks'].to_dict() == pytest.approx({'A': 1.5, 'B': 2.3, 'C': 3.0, 'D': 3.2}) and (fr['k'], fr['N']) == (4, 5)
    chi2 = 12 * 5 / (4 * 5) * (1.5**2 + 2.3**2 + 3.0**2 + 3.2**2 - 4 * 5**2 / 4)   # = 5.34 (Demšar 2006, eq. for chi2_F)
    assert chi2 == pytest.approx(5.34)
    assert fr['statistic'] == pytest.approx(chi2 / (1 - 6 / (5 * 4 * 15)), rel=1e-12)   # ties: 1 - sum(t^3 - t)/(N k (k^2 - 1))
    assert fr['p'] == pytest.approx(stats.chi2.sf(fr['statistic'], 3), rel=1e-12)
    f = 4 * fr['statistic'] / (5 * 3 - fr['statistic'])   # Iman-Davenport
    assert fr['iman_davenport'] == pytest.approx(f) and fr['iman_davenport_p'] == pytest.approx(stats.f.sf(f, 3, 12))

def test_friedman_says_what_is_missing():
    "Fewer than 3 systems or 2 datasets: a ValueError naming what is missing; a missing score is named too."
    with pytest.raises(ValueError, match=r'at least 3 systems \(rows\), got 2'): friedman(TABLE.iloc[:2])
    with pytest.raises(ValueError, match=r'at least 2 datasets \(columns\), got 1'): friedman(TABLE[['d1']])
    with pytest.raises(ValueError, match='missing scores: B on d2'): friedman(TABLE.mask((TABLE.index == 'B')[:, None] & (TABLE.columns == 'd2')))

def test_nemenyi_critical_difference():
    "CD = q_alpha sqrt(k(k+1)/(6N)) with Demšar's Table 5(a); the paper's example (k=4, N=14) gives 1.25 and 1.12."
    assert nemenyi_cd(4, 5) == pytest.approx(2.569 * math.sqrt(4 * 5 / (6 * 5)), abs=1e-3)
    assert nemenyi_cd(4, 14) == pytest.approx(1.25, abs=5e-3) and nemenyi_cd(4, 14, alpha=0.10) == pytest.approx(1.12, abs=5e-3)
    q = np.array([nemenyi_cd(k, 6) / math.sqrt(k * (k + 1) / 36) for k in range(2, 11)])
    assert q == pytest.approx(stats.studentized_range.ppf(0.95, np.arange(2, 11), np.inf) / math.sqrt(2), abs=1e-3)
    with pytest.raises(ValueError, match='2 to 10 systems'): nemenyi_cd(11, 5)
    groups = nemenyi_groups(pd.Series({'C4.5': 3.143, 'C4.5+m': 2.0, 'C4.5+cf': 2.893, 'C4.5+m+cf': 1.964}), nemenyi_cd(4, 14, 0.10))
    assert groups == [['C4.5+m+cf', 'C4.5+m', 'C4.5+cf'], ['C4.5+cf', 'C4.5']]   # Demšar (2006), Figure 1(a)

def test_cd_diagram_draws_and_saves_a_png(tmp_path):
    "5 systems over 4 datasets: a Figure with every system's name, written as a PNG."
    rng = np.random.default_rng(2)
    scores = pd.DataFrame(rng.random((5, 4)) + np.arange(5)[:, None] * 0.2, index=[f'system {i}' for i in range(5)],
                          columns=['argmin', 'ibmcs', 'perspectrum', 'semeval2016t6'])
    ranks = mean_ranks(scores)
    fig = cd_diagram(ranks, nemenyi_cd(5, 4), path=tmp_path/'cd.png', title='five systems')
    assert (tmp_path/'cd.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    texts = ' '.join(t.get_text() for t in fig.axes[0].texts)
    assert all(f'{s} ({r:.2f})' in texts for s, r in ranks.items()) and 'CD = ' in texts

def test_speed_on_a_large_test_set():
    "1,000 resamples of 25,000 examples with 3 labels in well under 5 s on a busy 2-core machine."
    rng = np.random.default_rng(3)
    gold = list(rng.choice(LABELS, 25_000))
    a, b = (list(np.where(rng.random(25_000) < acc, gold, rng.choice(LABELS, 25_000))) for acc in (.72, .70))
    for test in TESTS:
        t = time.perf_counter()
        r = test(gold, a, b, n=1000)
        took = time.perf_counter() - t
        print(f'{test.__name__}: {took:.2f} s, p = {r["p"]:.4f}')
        assert took < 5, f'{test.__name__} took {took:.1f} s'
