"""A model card says what its run folder supports and nothing else: `stance_nb push` on a run of your own file named `--name ibmcs`
(labels PRO/CON, 80/20/30 rows in a folder `fx`), with its folder damaged one way at a time. A folder without weights or tokenizer,
a repository id that is none, a record whose scores its predictions do not give: refused with one line. What the card claims:
no registered dataset the run did not load, no folder's name for your data, no base model for a local folder."""
import json, shutil
from pathlib import Path
import pandas as pd
import pytest

from stance_nb.cli import main
from stance_nb.metrics import score
from stance_nb.test_utils import tiny_bert


def _cli(argv, capfd) -> tuple[int, str, str]:
    capfd.readouterr()
    try: rc = main(argv)
    except SystemExit as e: rc = e.code   # a usage error: argparse's exit 2
    out, err = capfd.readouterr()
    return rc, out, err


@pytest.fixture(scope='module')
def own_run(tmp_path_factory):
    "One `train` run (tiny BERT, one epoch) on your own CSV files in a folder `fx`, under the name of a registered dataset: `--name ibmcs`."
    import contextlib, io
    d = tmp_path_factory.mktemp('own')
    (d/'fx').mkdir()
    n = {'train': 80, 'dev': 20, 'test': 30}
    for s, k in n.items():
        pd.DataFrame(dict(topic=[f'topic {i % 3}' for i in range(k)], sentence=[f'{s} sentence number {i} says {("yes", "no")[i % 2]}' for i in range(k)],
                          stance=[('PRO', 'CON')[i % 2] for i in range(k)])).to_csv(d/'fx'/f'{s}.csv', index=False)
    tiny_bert(d/'tiny', num_labels=2)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(err):
        rc = main(['train', '--dataset', 'csv', '--path', ','.join(f"{s}={d/'fx'/f'{s}.csv'}" for s in n), '--columns',
                   'text=sentence,target=topic,label=stance', '--max-train', '60', '--name', 'ibmcs', '--preset', 'smoke', '--model', str(d/'tiny'), '--epochs', '1',
                   '--seeds', '1', '--output-dir', str(d/'out'), '--json'])
    assert rc == 0, err.getvalue()[-3000:]
    return Path(json.loads(out.getvalue())['records'][0]).parent


def _copy(run:Path, tmp_path:Path) -> Path:
    dst = tmp_path/'run'; shutil.copytree(run, dst)
    (dst/'model_card.md').unlink(missing_ok=True)
    return dst

DAMAGE = {   # how the run folder is damaged -> what the one line says
    'no_weights': (lambda r: (r/'model'/'model.safetensors').unlink(), 'the saved model is not whole: no weights (model.safetensors or pytorch_model.bin)'),
    'no_tokenizer': (lambda r: [f.unlink() for f in (r/'model').glob('*') if f.name.startswith(('tokenizer', 'vocab', 'special'))],
                     'the saved model is not whole: no tokenizer files (tokenizer.json or vocab.txt'),
    'edited_score': (lambda r: r.joinpath('record.json').write_text(json.dumps(_edited(json.loads((r/'record.json').read_text())))),
                     "field 'metrics.test_f1_macro': its test f1_macro of your own data (`train.csv`, `dev.csv`, `test.csv`) is 0.9900, but its 30 "
                     "predictions score"),
}

def _edited(rec:dict) -> dict:
    rec['metrics'].update({k: 0.99 for k in rec['metrics'] if k.startswith('test_')}); return rec

@pytest.mark.parametrize('damage', list(DAMAGE))
def test_push_refuses_a_folder_it_cannot_vouch_for(damage, own_run, tmp_path, capfd):
    """A model folder without its weights or without its tokenizer (as `predict` and `train` refuse it), a record whose test scores were
    edited to 0.99: `push --dry-run` exits 1 with one line naming the folder or the record's field; no card is written (it wrote one
    with test scores and loading instructions)."""
    run = _copy(own_run, tmp_path)
    DAMAGE[damage][0](run)
    rc, out, err = _cli(['push', str(run), 'me/tiny', '--dry-run'], capfd)
    assert rc == 1 and DAMAGE[damage][1] in err and len(err.strip().splitlines()) == 1, err
    assert not (run/'model_card.md').exists()

def test_push_refuses_a_repo_id_that_is_none(own_run, tmp_path, capfd):
    "`push --dry-run RUN 'not a repo id'` exits 2 before reading the run (it wrote a card headed with it)."
    rc, out, err = _cli(['push', str(_copy(own_run, tmp_path)), 'not a repo id', '--dry-run'], capfd)
    assert rc == 2 and "repo id 'not a repo id': expected 'user/name'" in err, err

def test_card_of_your_own_data_claims_nothing_registered(own_run, tmp_path, capfd):
    """The card of a run on your own file under `--name ibmcs`: no IBM citation, download line, limits or `datasets:` entry (the record
    says the run loaded `csv`), the data named by its files and never by its folder (`fx`), no `base_model` for a local model folder,
    scores checked against the predictions (an interval beside each); the output lists what it would upload and what it wrote."""
    run = _copy(own_run, tmp_path)
    rc, out, err = _cli(['push', str(run), 'me/tiny', '--dry-run'], capfd)
    assert rc == 0, err
    card = (run/'model_card.md').read_text(encoding='utf-8')
    for claim in ('datasets:', 'Bar-Haim', 'IBM', 'ibmcs', 'fx', 'base_model', str(own_run.parents[2])):
        assert claim not in card, (claim, card)
    assert '| your own data (`train.csv`, `dev.csv`, `test.csv`) | CON, PRO | 60 / 20 / 30 |' in card, card
    assert 'from a local model folder' in card and '| `model` | a local model folder |' in card
    assert '| `max_train_rows` | 60 |' in card   # trained on a sample of the training rows: the recipe says so
    rec = json.loads((run/'record.json').read_text())
    acc = rec['metrics']['test_accuracy']
    assert f"| your own data (`train.csv`, `dev.csv`, `test.csv`) | accuracy | {acc:.4f} | " in card and ' – ' in card.split('## Test scores')[1]
    lines = out.strip().splitlines()
    assert lines[0] == 'would upload to me/tiny:' and '  config.json' in lines and '  README.md' in lines, out
    assert f"wrote: {run/'model_card.md'}" in lines, out
    gold = pd.read_csv(own_run.parents[2]/'fx'/'test.csv').stance.tolist()
    pred = [json.loads(l)['label'] for l in (run/'predictions.jsonl').read_text().splitlines()]
    assert abs(score(None, gold, pred, metric='accuracy') - acc) < 1e-12   # the score the card prints is the predictions' own

def test_train_records_its_sample_of_the_training_rows(own_run):
    """`train --max-train 60` (of 80 training rows) records `max_train_rows` and the sample's seed (it recorded nothing of the sample), and the
    card lists it in the recipe: a model trained on less data says so."""
    rec = json.loads((own_run/'record.json').read_text())
    assert (rec['params']['max_train_rows'], rec['params']['split_seed'], rec['params']['n']['train']) == (60, 0, 60)
    assert rec['params']['dataset'] == 'csv' and rec['params']['data_spec']['options']['max_train'] == 60
