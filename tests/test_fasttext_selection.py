"The fastText grid picks its cell on the table's metric (macro-F1 by default), names the chosen cell, and shows its progress."
import json
import pytest
import stance_nb.systems.baselines.model as bl
from stance_nb.systems.baselines import FastTextClassifier, fasttext_grid
from stance_nb.metrics import accuracy, f1_macro
from stance_nb.test_utils import synthetic_stance

# a skewed dev split (90 AGAINST, 10 FAVOR) and two cells' predictions on it: the lr 0.1 cell predicts the majority class
# everywhere (accuracy 0.9, macro-F1 0.47); the lr 0.5 cell finds every FAVOR row at the cost of 20 AGAINST rows
# (accuracy 0.8, macro-F1 0.69). Accuracy picks the first cell, macro-F1 the second.
GOLD = ['AGAINST'] * 90 + ['FAVOR'] * 10
PREDS = {0.1: ['AGAINST'] * 100, 0.5: ['FAVOR'] * 20 + ['AGAINST'] * 70 + ['FAVOR'] * 10}
KW = dict(lrs=(0.1, 0.5), epochs=(1,), dim=10, tokenize=False)

def _data():
    syn = synthetic_stance(100, seed=1, splits=('train', 'dev'))
    return syn[syn.split == 'train'], syn[syn.split == 'dev'].assign(label=GOLD).reset_index(drop=True)

def test_constructed_case_disagrees():
    "The case is what it claims: accuracy and macro-F1 prefer different cells."
    assert accuracy(GOLD, PREDS[0.1]) > accuracy(GOLD, PREDS[0.5])
    assert f1_macro(GOLD, PREDS[0.5]) > f1_macro(GOLD, PREDS[0.1])

@pytest.fixture
def fixed_predictions(monkeypatch):
    "Every cell trains for real; its dev predictions are those of `PREDS` for its learning rate (in-process and subprocess cells)."
    monkeypatch.setattr(FastTextClassifier, 'predict', lambda self, df: list(PREDS[self.lr]))
    train_subprocess = bl._train_subprocess
    def fake(args, model_path, predict_path=None, procs=None):
        train_subprocess(args, model_path, predict_path, procs)
        return [bl._enc(l) for l in PREDS[args['lr']]]
    monkeypatch.setattr(bl, '_train_subprocess', fake)

@pytest.mark.parametrize('n_jobs', [1, 2])
def test_grid_selects_on_macro_f1_by_default(fixed_predictions, n_jobs):
    "Without `select`, the cell with the best dev macro-F1 wins, not the one with the best dev accuracy; `selection_` names it."
    trn, dev = _data()
    best, table = fasttext_grid(trn, dev, n_jobs=n_jobs, **KW)
    assert (best.lr, best.epoch) == (0.5, 1)
    assert table.loc[table.dev_accuracy.idxmax(), 'lr'] == 0.1          # accuracy would have chosen the other cell
    assert table.selected.tolist() == [False, True]
    assert best.selection_ == dict(lr=0.5, epoch=1, metric='f1_macro', dev_score=pytest.approx(f1_macro(GOLD, PREDS[0.5])))
    assert json.loads(json.dumps(best.selection_)) == best.selection_  # JSON-ready (the CLI's --json)
    assert best.model_ is not None

def test_grid_selects_on_the_metric_passed(fixed_predictions):
    "A caller that knows its table's metric passes it: a `METRICS` name (the X-stance presets' 'accuracy') or a function."
    trn, dev = _data()
    best, table = fasttext_grid(trn, dev, select='accuracy', n_jobs=1, **KW)
    assert best.selection_ == dict(lr=0.1, epoch=1, metric='accuracy', dev_score=pytest.approx(0.9))
    assert table.score.tolist() == table.dev_accuracy.tolist()
    def favor_recall(gold, pred, labels): return sum(g == p == 'FAVOR' for g, p in zip(gold, pred)) / gold.count('FAVOR')
    best, _ = fasttext_grid(trn, dev, select=favor_recall, n_jobs=1, **KW)
    assert best.selection_ == dict(lr=0.5, epoch=1, metric='favor_recall', dev_score=1.0)

def test_unknown_select_fails_before_training(monkeypatch):
    "A misspelt metric fails at once, naming the known ones."
    monkeypatch.setattr(FastTextClassifier, '_fit_file', lambda *a: pytest.fail('trained before checking `select`'))
    trn, dev = _data()
    with pytest.raises(ValueError, match=r"select='f1' is not a metric; use one of \[.*'f1_macro'"):
        fasttext_grid(trn, dev, select='f1', n_jobs=1, **KW)

def test_selection_saved_with_the_model(fixed_predictions, tmp_path):
    "`save` keeps the chosen cell in the side file and `load` restores it; a model not chosen by a grid has none."
    trn, dev = _data()
    best, _ = fasttext_grid(trn, dev, n_jobs=1, **KW)
    p = best.save(tmp_path/'ft.bin')
    assert json.loads((tmp_path/'ft.bin.json').read_text())['selection'] == best.selection_
    assert FastTextClassifier.load(p).selection_ == best.selection_
    plain = FastTextClassifier(lr=0.5, epoch=1, dim=10, tokenize=False).fit(trn)
    assert plain.selection_ is None and FastTextClassifier.load(plain.save(tmp_path/'plain.bin')).selection_ is None
    assert 'selection' not in json.loads((tmp_path/'plain.bin.json').read_text())

class _Bar:
    "Records what the grid tells its progress bar."
    def __init__(self, it=None, desc=None, total=None, **kw): self.desc, self.total, self.postfix, self.n = desc, total, [], 0
    def __enter__(self): return self
    def __exit__(self, *exc): return False
    def set_postfix(self, **kw): self.postfix.append(kw)
    def update(self, n=1): self.n += n

def test_grid_progress_bar(fixed_predictions, monkeypatch):
    "One bar over the grid's cells, through `stance_nb.core.progress`; its postfix names the cell being trained."
    bars = []
    monkeypatch.setattr(bl, 'progress', lambda *a, **kw: bars.append(_Bar(*a, **kw)) or bars[-1])
    trn, dev = _data()
    fasttext_grid(trn, dev, n_jobs=1, **KW)
    (bar,) = bars
    assert (bar.desc, bar.total, bar.n) == ('fastText grid', 2, 2)
    assert bar.postfix == [dict(lr=0.1, epoch=1), dict(lr=0.5, epoch=1)]
