"`stance_nb push`: a real `train` run folder on the P-Stance fixture, its card written and its files listed by --dry-run, and refused without scores."
import json
from pathlib import Path

from stance_nb.cli import main
from stance_nb.fixtures.field import write_pstance
from stance_nb.test_utils import tiny_bert


def _run(argv, capfd) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capfd.readouterr()
    return rc, out, err


def test_push_dry_run_of_a_trained_run(tmp_path, capfd):
    "train --save-model on pstance_trump, then push --dry-run: the card names the data, recipe, seed, scores with intervals; the files are listed."
    data = tmp_path/'data'
    write_pstance(data/'pstance', sizes={'trump': (24, 6, 20)})
    tiny_bert(tmp_path/'tiny', num_labels=2)
    rc, out, err = _run(['train', '--dataset', 'pstance_trump', '--data-dir', str(data), '--preset', 'smoke', '--model', str(tmp_path/'tiny'),
                         '--epochs', '1', '--seeds', '3', '--output-dir', str(tmp_path/'out'), '--json'], capfd)
    assert rc == 0, err
    run = Path(json.loads(out)['records'][0]).parent
    rc, out, err = _run(['push', str(run), 'me/tiny-pstance', '--data-dir', str(data), '--dry-run', '--json'], capfd)
    assert rc == 0, err
    res = json.loads(out)
    paths = [f['path'] for f in res['upload']]
    assert res['dry_run'] and 'config.json' in paths and 'README.md' in paths and 'stance_nb_record.json' in paths
    assert any(p.endswith('.safetensors') for p in paths) and all(f['bytes'] > 0 for f in res['upload'])
    assert res['files'] == [res['card']] and res['card'] == str(run/'model_card.md')
    card = Path(res['card']).read_text(encoding='utf-8')
    assert 'datasets: [pstance_trump]' in card and 'One run, seed 3.' in card and '| `pstance_trump` | semeval2016_f1 |' in card
    assert ' – ' in card.split('## Test scores')[1].split('##')[0]   # an interval beside each score
    assert 'Li et al. (2021)' in card and '## Intended use and limits' in card


def test_push_refuses_a_run_without_scores(tmp_path, capfd):
    "A run folder whose record has no test score is refused with one line naming the record."
    run = tmp_path/'run'
    (run/'model').mkdir(parents=True)
    for f, text in (('config.json', '{}'), ('model.safetensors', ''), ('tokenizer.json', '{}')): (run/'model'/f).write_text(text)
    (run/'record.json').write_text(json.dumps({'name': 'pstance_trump/smoke', 'params': {}, 'metrics': {'dev_accuracy': 0.5}}))
    rc, out, err = _run(['push', str(run), 'me/x', '--dry-run'], capfd)
    assert rc == 1 and 'record.json' in err and 'refusing to publish a model without its scores' in err
