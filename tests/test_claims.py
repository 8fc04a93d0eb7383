"""Properties of the claims built on the numbers, drawn at random (hypothesis): any one facet that differs between the two sides
of a Δ changes its verdict; a prediction outside a test set's labels moves its score no further than giving that row any of its labels."""
from dataclasses import replace
from hypothesis import given, settings, strategies as st
from stance_nb.experiment.compare import Side, compare_sides, verdict, family, MEASURE, RUN, CONTENT, FACETS, LIKE
from stance_nb.metrics import f1_macro

NAMES = st.text('abcdefgh', min_size=1, max_size=4)
FIELD = {'datasets': 'datasets', 'split': 'split', 'label set': 'labels', 'metric': 'metric', 'systems': 'systems', 'training sets': 'train_sets',
         'attacks': 'attacks', 'ratio': 'ratio', 'encoder': 'encoder', 'recipe': 'recipe', 'seeds': 'seeds', 'precision': 'precision',
         'data content': 'content'}

@st.composite
def sides(draw):
    "A side of a comparison with every facet drawn."
    tup = lambda: tuple(sorted(set(draw(st.lists(NAMES, max_size=3)))))
    return Side(datasets=tup() or ('a',), systems=tup(), attacks=tup(), train_sets=tup(), ratio=draw(st.sampled_from([0.1, 0.3, 1.0])),
                metric=draw(st.sampled_from(['f1_macro', 'accuracy'])), split=draw(st.sampled_from(['test', 'dev'])), labels=tup(),
                encoder=draw(st.none() | NAMES), recipe=draw(st.none() | NAMES), seeds=draw(st.none() | st.integers(1, 10)),
                precision=draw(st.none() | st.sampled_from(['fp32', 'bf16'])))

def _other(facet:str, value):
    "A value of `facet` other than `value`."
    if facet == 'ratio': return 0.5 if value != 0.5 else 0.25
    if facet == 'seeds': return (value or 0) + 1
    if facet == 'data content': return (value or '') + ' one gold label changed'
    if isinstance(value, tuple): return value + ('zz',)
    return f'{value}-other'

def test_every_facet_is_checked():
    assert set(FACETS) == set(MEASURE) | set(RUN) | set(CONTENT) and set(FACETS) == set(FIELD)

@settings(max_examples=300, deadline=None)
@given(sides(), st.sampled_from(FACETS), st.floats(-0.2, 0.2), st.floats(0.0, 0.1) | st.just(float('nan')))
def test_one_differing_facet_changes_the_verdict(paper, facet, delta, tol):
    "Like for like a Δ is reproduced, differs or untested; with any one facet changed on our side the verdict is of another family."
    assert compare_sides(paper, paper).kind == LIKE
    same = family(verdict(delta, tol, compare_sides(paper, paper))[0])
    assert same in ('reproduced', 'differs', 'untested')
    ours = replace(paper, **{FIELD[facet]: _other(facet, paper.facets()[facet])})
    c = compare_sides(ours, paper)
    assert list(c.differ) == [facet]
    v, why = verdict(delta, tol, c)
    assert family(v) != same and family(v) == ('not comparable' if facet in MEASURE else 'stand-in' if facet in RUN else 'other data')
    assert facet in why

@settings(max_examples=300, deadline=None)
@given(st.data())
def test_one_foreign_prediction_moves_a_cell_no_more_than_one_row_can(data):
    """A prediction outside the test set's labels (NONE on a two-label test set) is a wrong answer for its row: the cell moves no
    further than giving that row one of the test set's own labels can move it, whatever the rest of the predictions."""
    k = data.draw(st.integers(2, 3))
    labels = ['AGAINST', 'FAVOR', 'NONE'][:k]
    n = data.draw(st.integers(k, 30))
    gold = data.draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n).filter(lambda g: set(g) == set(labels)))   # a test set has its labels
    pred = data.draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    i = data.draw(st.integers(0, n - 1))
    base = f1_macro(gold, pred, over=labels)
    moved = abs(f1_macro(gold, pred[:i] + ['OTHER'] + pred[i + 1:], over=labels) - base)
    most = max(abs(f1_macro(gold, pred[:i] + [w] + pred[i + 1:], over=labels) - base) for w in labels)
    assert moved <= most + 1e-12
