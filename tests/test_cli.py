"The `stance_nb` command on a user's own CSV files (unusual column names, labels 0/1/2) and on X-stance's official format."
import json, os, re, subprocess, sys
from pathlib import Path

import pandas as pd
from stance_nb.train.loop import forward_precision
import pytest

from stance_nb.cli import main
from stance_nb.core import data_dir
from stance_nb.data import load
from stance_nb.metrics import evaluate_xstance
from stance_nb.records import read_predictions, write_predictions
from stance_nb.test_utils import tiny_bert
from conftest import write_splits

LABELS = {'0': 'AGAINST', '1': 'FAVOR', '2': 'NONE'}


@pytest.fixture(scope='module')
def own(tmp_path_factory):
    "Three CSV files (train, test, new) with columns Sentence/Topic/Stance and labels 0/1/2, and the options that read them."
    d = tmp_path_factory.mktemp('mydata')
    write_splits(d, 60, LABELS, ('train', 'test', 'new'), rename=dict(text='Sentence', target='Topic', label='Stance'))
    opts = ['--dataset', 'csv', '--path', f"train={d/'train.csv'},test={d/'test.csv'}", '--columns', 'text=Sentence,target=Topic,label=Stance',
            '--label-map', ','.join(f'{k}={v}' for k, v in LABELS.items())]
    return d, opts


def _run(argv, capfd) -> dict:
    "Run `main(argv + ['--json'])` in this process; stdout must be exactly one JSON object."
    assert main(argv + ['--json']) == 0
    out = capfd.readouterr().out
    assert out.count('\n') == 1, out[:500]
    return json.loads(out)


def test_baselines_json_subprocess(own, tmp_path):
    "The acceptance command as a real process: majority and fastText test scores, nothing else on stdout."
    d, opts = own
    p = subprocess.run([sys.executable, '-m', 'stance_nb.cli', 'baselines', *opts, '--dev-fraction', '0.2', '--seeds', '1', '--threads', '1',
                        '--output-dir', str(tmp_path/'out'), '--json'], capture_output=True, text=True, timeout=300,
                       env={**os.environ, 'TOKENIZERS_PARALLELISM': 'false'})
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout)
    assert p.stdout.strip().count('\n') == 0
    assert res['data']['n'] == {'train': 48, 'dev': 12, 'test': 60} and res['data']['labels'] == sorted(LABELS.values())
    assert res['test']['majority']['f1_macro']['mean'] == pytest.approx(1/6)   # one of three balanced classes
    assert res['test']['fasttext']['f1_macro']['mean'] > 0.5
    assert res['fasttext_cell']['seed 1']['metric'] == 'f1_macro'   # chosen on the metric the scores report, and named
    assert {'lr', 'epoch', 'dev_score'} <= set(res['fasttext_cell']['seed 1'])
    for r in res['records']:   # committed-style records: no absolute path of this machine's outputs folder
        assert str((tmp_path/'out').resolve()) not in Path(r).read_text()


def modes(folder:Path) -> dict:
    "Every file and folder under `folder` whose mode is not what a new one gets under umask 022 (0o644, folders 0o755): path -> mode."
    return {str(p.relative_to(folder)): oct(p.stat().st_mode & 0o777) for p in [folder, *folder.rglob('*')]
            if p.stat().st_mode & 0o777 != (0o755 if p.is_dir() else 0o644)}

@pytest.fixture
def umask_022():
    "The umask of a lab that shares its results folder, restored afterwards."
    old = os.umask(0o022)
    yield
    os.umask(old)

def test_train_then_predict(own, tmp_path, capfd, umask_022):
    """`train` fine-tunes a local model folder on the CSV files; `predict` labels a new CSV with the run folder. What they write (record,
    predictions, model weights and their folder) follows the umask: readable by others under 022, as papermill's notebooks are."""
    d, opts = own
    tiny_bert(tmp_path/'tiny', num_labels=3)
    res = _run(['train', *opts, '--dev-fraction', '0.2', '--preset', 'smoke', '--model', str(tmp_path/'tiny'), '--epochs', '1', '--seeds', '1',
                '--output-dir', str(tmp_path/'out')], capfd)
    assert list((tmp_path/'out').rglob('model.safetensors')) and modes(tmp_path/'out') == {}
    run = Path(res['records'][0]).parent
    assert res['data']['pair'] and set(res['runs'][0]) >= {'test_f1_macro', 'dev_f1_macro'}
    rec_text = (run/'record.json').read_text()
    assert str((tmp_path/'out').resolve()) not in rec_text and json.loads(rec_text)['files']['predictions'] == 'predictions.jsonl'
    pr = _run(['predict', '--run', str(run), '--input', str(d/'new.csv'), '--columns', 'text=Sentence,target=Topic',
               '--output', str(tmp_path/'pred'), '--label-column', 'predicted'], capfd)
    new = pd.read_csv(tmp_path/'pred.csv')
    assert pr['n'] == len(new) == 60 and new.predicted.tolist() == read_predictions(tmp_path/'pred.jsonl')
    assert set(new.predicted) <= set(LABELS.values()) and list(new.columns) == ['Topic', 'Sentence', 'Stance', 'predicted']
    fp32 = _run(['predict', '--run', str(run), '--input', str(d/'new.csv'), '--columns', 'text=Sentence,target=Topic',
                 '--output', str(tmp_path/'pred32'), '--format', 'jsonl', '--mixed-precision', 'no'], capfd)
    assert fp32['model']['precision'] == 'no' and pr['model']['precision'] == forward_precision('auto', 'cpu')   # the training's rule by default
    assert sum(a == b for a, b in zip(read_predictions(tmp_path/'pred32.jsonl'), new.predicted)) >= 0.9 * len(new)
    pd.read_csv(d/'new.csv').head(3).assign(Topic=['t', ' ', 't']).to_csv(tmp_path/'blank.csv', index=False)   # a pair model reads targets too
    assert main(['predict', '--run', str(run), '--input', str(tmp_path/'blank.csv'), '--columns', 'text=Sentence,target=Topic',
                 '--output', str(tmp_path/'blank')]) == 1
    assert "blank.csv, row 2, field 'Topic': empty target in 1 row(s)" in capfd.readouterr().err and not (tmp_path/'blank.jsonl').exists()


def test_evaluate_xstance_fixture(tmp_path, capfd):
    "`evaluate` on X-stance gives the official table of `evaluate_xstance` (fixture data: runs everywhere)."
    from stance_nb.fixtures.papers import write_xstance
    write_xstance(tmp_path/'data'/'xstance')
    test = load('xstance', tmp_path/'data').query("split == 'test'")
    write_predictions(tmp_path/'favor.jsonl', ['FAVOR']*len(test))
    res = _run(['evaluate', '--dataset', 'xstance', '--data-dir', str(tmp_path/'data'), '--predictions', str(tmp_path/'favor.jsonl')], capfd)
    pd.testing.assert_frame_equal(pd.DataFrame(res['official']), evaluate_xstance(test, tmp_path/'favor.jsonl'))


@pytest.mark.skipif(not (data_dir()/'xstance'/'test.jsonl').exists(), reason='the X-stance test set is not in the data folder')
def test_evaluate_xstance_official(tmp_path, capfd):
    "On the real test set, a constant FAVOR predictions file scores as the official evaluation scores it."
    n = sum(1 for line in (data_dir()/'xstance'/'test.jsonl').open(encoding='utf-8') if line.strip())
    write_predictions(tmp_path/'favor.jsonl', ['FAVOR']*n)
    res = _run(['evaluate', '--dataset', 'xstance', '--predictions', str(tmp_path/'favor.jsonl')], capfd)
    official = evaluate_xstance(data_dir()/'xstance'/'test.jsonl', tmp_path/'favor.jsonl')
    pd.testing.assert_frame_equal(pd.DataFrame(res['official']), official)
    assert res['n'] == n


def test_evaluate_csv_and_errors(own, tmp_path, capfd):
    "Gold labels score 1; a short predictions file and an unknown dataset file name fail with what was expected."
    d, opts = own
    gold = [LABELS[str(s)] for s in pd.read_csv(d/'test.csv').Stance]
    write_predictions(tmp_path/'gold.jsonl', gold)
    res = _run(['evaluate', *opts, '--predictions', str(tmp_path/'gold.jsonl')], capfd)
    assert res['scores'] == {'f1_macro': 1.0, 'accuracy': 1.0}
    write_predictions(tmp_path/'short.jsonl', gold[:-1])
    assert main(['evaluate', *opts, '--predictions', str(tmp_path/'short.jsonl')]) == 1
    assert '59 predictions for the 60 test rows' in capfd.readouterr().err
    with pytest.raises(SystemExit) as e: main(['baselines', '--dataset', str(d/'train.csv')])
    assert e.value.code == 2 and 'use --dataset csv --path' in capfd.readouterr().err


def test_evaluate_asks_which_label_column(own, tmp_path, capfd):
    """A predict CSV that kept the input's gold labels beside its predictions: no default column is guessed (the gold one would score
    1.0); `ID`/`Label` are read as `id`/`label` and said so; the test file itself given as predictions scores 1.0 with a warning."""
    d, opts = own
    test = load('csv', path={'test': d/'test.csv'}, columns=dict(text='Sentence', target='Topic', label='Stance'), label_map=LABELS)
    wrong = {'AGAINST': 'FAVOR', 'FAVOR': 'NONE', 'NONE': 'AGAINST'}
    both = pd.DataFrame(dict(id=test.id, text=test.text, label=test.label, pred=test.label.map(wrong)))
    both.to_csv(tmp_path/'both.csv', index=False)
    assert main(['evaluate', *opts, '--predictions', str(tmp_path/'both.csv')]) == 1
    err = capfd.readouterr().err
    assert "columns ['label', 'pred'] all hold labels only" in err and '--label-column' in err, err
    assert _run(['evaluate', *opts, '--predictions', str(tmp_path/'both.csv'), '--label-column', 'pred'], capfd)['scores']['accuracy'] == 0
    both[['id', 'pred']].rename(columns={'id': 'ID', 'pred': 'Label'}).iloc[::-1].to_csv(tmp_path/'caps.csv', index=False)
    assert main(['evaluate', *opts, '--predictions', str(tmp_path/'caps.csv'), '--json']) == 0
    out = capfd.readouterr()
    assert json.loads(out.out)['matched_by'] == 'id' and json.loads(out.out)['scores']['accuracy'] == 0, out.out   # by id, though reversed
    assert "reading column 'ID' as 'id'" in out.err and "reading column 'Label' as 'label'" in out.err
    pd.DataFrame(dict(ID=test.id, Label=['AGAINST'] * (len(test) - 1) + ['MAYBE'])).to_csv(tmp_path/'odd.csv', index=False)
    assert main(['evaluate', *opts, '--predictions', str(tmp_path/'odd.csv')]) == 1
    err = capfd.readouterr().err
    assert f"row {len(test)}" in err and "field 'Label'" in err and "unknown label 'MAYBE'" in err, err   # the file's own column named
    both[['id', 'text', 'label']].to_csv(tmp_path/'itself.csv', index=False)
    res = _run(['evaluate', *opts, '--predictions', str(tmp_path/'itself.csv')], capfd)
    assert res['scores']['accuracy'] == 1 and 'may be the test data itself' in res['warning']


def test_seeds_and_repeated_paths_refused_by_the_parser(own, tmp_path, capfd):
    "Seeds outside numpy's and torch's range, a split named twice in --path and odd trainer numbers stop at the parser (exit 2), named."
    d, opts = own
    for argv, want in [(['baselines', *opts, '--seeds', '99999999999999999999'], 'seeds must be from 0 to 2**32 - 1'),
                       (['baselines', *opts, '--split-seed', '99999999999999999999', '--dev-fraction', '0.2'], 'a seed: a whole number from 0'),
                       (['baselines', '--dataset', 'csv', '--path', f"train={d/'train.csv'},test={d/'test.csv'},test={d/'train.csv'}"],
                        "'test' given twice"),
                       (['train', *opts, '--seed', '-1'], 'TrainConfig.seed=-1 is invalid'),
                       (['train', *opts, '--betas', '0.9'], 'TrainConfig.betas=(0.9,) is invalid'),
                       (['train', *opts, '--eval-batch-size', '0'], 'TrainConfig.eval_batch_size=0 is invalid'),
                       (['baselines', *opts, '--dev-fraction', '1'], 'a fraction between 0 and 1 (exclusive)'),
                       (['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline', '--from', str(tmp_path)], 'no job records in it'),
                       (['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline', '--keep-records', str(d/'train.csv')],
                        'a file, not a folder to keep the job records in')]:
        with pytest.raises(SystemExit) as e: main(argv)
        err = capfd.readouterr().err
        assert e.value.code == 2 and want in err and 'Traceback' not in err, (argv, err[-500:])


def test_evaluate_matches_by_id(own, tmp_path, capfd):
    "Predictions in another order score the same when they carry ids; a missing, extra or repeated id stops with the id named."
    import random
    d, opts = own
    test = load('csv', path={'test': d/'test.csv'}, columns=dict(text='Sentence', target='Topic', label='Stance'), label_map=LABELS)
    flip = {'AGAINST': 'FAVOR', 'FAVOR': 'NONE', 'NONE': 'AGAINST'}
    rows = [dict(id=i, label=flip[l] if n % 3 == 0 else l) for n, (i, l) in enumerate(zip(test.id, test.label))]   # two thirds right
    def write(name, recs):
        (tmp_path/name).write_text(''.join(json.dumps(r) + '\n' for r in recs)); return str(tmp_path/name)
    ordered = _run(['evaluate', *opts, '--predictions', write('ordered.jsonl', rows)], capfd)
    shuffled = rows[:]; random.Random(0).shuffle(shuffled)
    by_id = _run(['evaluate', *opts, '--predictions', write('shuffled.jsonl', shuffled)], capfd)
    assert by_id['scores'] == ordered['scores'] and by_id['matched_by'] == 'id' and ordered['scores']['accuracy'] < 1
    pd.DataFrame(shuffled).rename(columns={'label': 'pred'}).to_csv(tmp_path/'shuffled.csv', index=False)
    assert _run(['evaluate', *opts, '--predictions', str(tmp_path/'shuffled.csv'), '--label-column', 'pred'], capfd)['scores'] == ordered['scores']
    assert main(['evaluate', *opts, '--predictions', write('noid.jsonl', [dict(label=r['label']) for r in shuffled]), '--json']) == 0
    out = capfd.readouterr()
    assert json.loads(out.out)['matched_by'] == 'position' and 'matched to the test rows by position' in out.err
    for name, recs, want in [('missing.jsonl', shuffled[1:], f"no prediction for 1 test id\\(s\\): \\['{shuffled[0]['id']}'\\]"),
                             ('extra.jsonl', shuffled + [dict(id='nope', label='FAVOR')], "1 id\\(s\\) the test split does not have: \\['nope'\\]"),
                             ('twice.jsonl', shuffled + shuffled[:1], f"row {len(shuffled) + 1}, field 'id': id '{shuffled[0]['id']}' predicted twice")]:
        assert main(['evaluate', *opts, '--predictions', write(name, recs)]) == 1
        err = capfd.readouterr().err
        assert re.search(want, err) and name in err, err


def test_predict_format_both():
    "`--format both` is what the help offers."
    from stance_nb.cli.main import make_parser
    args = make_parser(['predict']).parse_args(['predict', '--run', 'r', '--input', 'i.csv', '--output', 'o', '--format', 'both'])
    assert args.format == ['jsonl', 'csv']


def test_help_imports_no_training_code():
    "`stance_nb --help` builds no command's options: no torch, transformers or sklearn import (it took seconds)."
    code = ('import sys, contextlib, io\nfrom stance_nb.cli import main\n'
            'with contextlib.redirect_stdout(io.StringIO()):\n    try: main(["--help"])\n    except SystemExit: pass\n'
            'print(sorted(m for m in ("torch", "transformers", "sklearn", "pandas") if m in sys.modules))')
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == '[]', (p.stdout, p.stderr[-2000:])


def test_help_index_is_current():
    "The help index holds exactly what the parser prints for every command, and the fingerprint of this source: rebuilt after each change."
    from stance_nb.cli.main import help_texts
    from stance_nb.helpindex import HELP_INDEX, HELP_WIDTH, source_fingerprint
    idx = json.loads(HELP_INDEX.read_text(encoding='utf-8'))
    fix = 'stale: run `python tools/help_index.py` after changing a module'
    assert idx['fingerprint'] == source_fingerprint() and idx['width'] == HELP_WIDTH, fix
    assert idx['commands'] == help_texts(HELP_WIDTH), fix
    from stance_nb.cli.early import argument_index
    assert idx['arguments'] == json.loads(json.dumps(argument_index())), fix


def test_every_command_is_declared_once_and_whole():
    "Each command of the one registry has its name, a help line, an options function and its handler, `<name>_command` of the commands module."
    from stance_nb.cli import commands
    from stance_nb.cli.main import COMMANDS, Command
    from stance_nb.registry import Registry
    assert isinstance(COMMANDS, Registry) and len(COMMANDS) >= 16
    for name, c in COMMANDS.items():
        assert isinstance(c, Command) and c.name == name and isinstance(c.help, str) and c.help.strip(), name
        assert callable(c.options) and c.handler is getattr(commands, f"{name.replace('-', '_')}_command"), name
    assert [n for n, c in COMMANDS.items() if c.accelerate] == ['train', 'mdl']


def test_help_lists_exactly_the_registered_commands(capsys):
    "`stance_nb --help` (from the help index, as the console script prints it, and from the parser) names the registry's commands, each with its line."
    from stance_nb.cli.main import COMMANDS, make_parser
    from stance_nb.helpindex import console_main
    assert console_main(['--help']) == 0
    for text in (capsys.readouterr().out, make_parser([]).format_help()):
        assert re.search(r'\{([^}]*)\}', text).group(1).split(',') == list(COMMANDS)
        flat = ''.join(text.split())   # argparse wraps lines, at a hyphen too
        assert all(''.join(c.help.split()) in flat for c in COMMANDS.values()), text


@pytest.mark.parametrize('flag', ['--output-dir', '--out'])
def test_scorecard_output_dir_and_its_older_spelling(flag, tmp_path, capsys, monkeypatch):
    "`scorecard --output-dir DIR` writes into DIR, as every command's output folder; `--out DIR`, its older spelling, reaches the same place."
    import stance_nb.scorecard
    seen = []
    monkeypatch.setattr(stance_nb.scorecard, 'write_scorecard', lambda root, out: seen.append((root, out)) or dict(files=[], counts=[]))
    assert main(['scorecard', flag, str(tmp_path/'sc'), '--json']) == 0
    assert seen == [('results', str(tmp_path/'sc'))] and json.loads(capsys.readouterr().out)['command'] == 'scorecard'


BAD_LINES = [['leaderboard', '--models', 'majority', '--datasets', 'pstance_trmp', '--plan'], ['leaderboard', '--models', 'majoriy,fasttext'],
             ['leaderboard', '--models', 'majority', '--alpha', '0.3', '--seeds', '1,1'], ['leaderboard', '--models', 'majority', '--epochs', 'two'],
             ['leaderboard', '--models', 'sdl', '--model', './no/such/model'], ['leaderboard', '--models', 'majority', '--data', '[1]'],
             ['leaderboard', '--models', 'majority', '--smoke'], ['transfer', '--models', 'fasttext', '--datasets', 'ibmcs,nope'],
             ['train', '--dataset', 'semeval', '--epochs', '1'], ['train', '--dataset', 'ibmcs', '--preset', 'fast'],
             ['train', '--dataset', 'ibmcs', '--epochs', 'two'], ['train', '--datset', 'ibmcs'], ['mdl', '--datasets', 'arc,nope'],
             ['mdl', '--datasets', 'arc', '--preset', 'nope'], ['baselines', '--dataset', 'ibmcs', '--systems', 'majority,svm'],
             ['baselines', '--dataset', 'my.csv'], ['evaluate', '--dataset', 'nope', '--predictions', 'p.jsonl'],
             ['attack', '--dataset', 'ibmcs', '--attack', 'typo', '--output', 'x.csv'], ['download', 'nope'], ['reproduce', 'benchmak'],
             ['reproduce', 'benchmark', '-p', 'seed=1'], ['reproduce', 'benchmark', '-p', 'seeds=1,1'], ['reproduce', 'benchmark', '-p', 'seeds'],
             ['trian', '--dataset', 'ibmcs'], ['predict', '--run', 'r'], ['baselines', '--dataset', 'ibmcs', '--dev-fraction', '1.5']]


@pytest.fixture(scope='module')
def arguments():
    "What the early checks read, built from this source as `tools/help_index.py` builds it (through JSON, as the index holds it)."
    from stance_nb.cli.early import argument_index
    return json.loads(json.dumps(argument_index()))

@pytest.mark.parametrize('argv', BAD_LINES, ids=lambda a: ' '.join(a)[:60])
def test_early_errors_are_the_commands_own(argv, arguments):
    "Each error the index can see is said from it (`stance_nb.cli.early`) in the very words and exit status of the command itself."
    from conftest import run_cli
    from stance_nb.cli.early import early_error
    early = early_error(argv, arguments)
    code, out, err = run_cli(argv)
    assert code == 2 and early == err.strip(), (early, err)


def test_early_errors_before_heavy_imports():
    """`stance_nb leaderboard --models majority --datasets pstance_trmp --plan` as the console script runs it: exit status 2 and the
    command's own line, in under 2 s (median of three), with no torch, transformers, scikit-learn or pandas imported."""
    import statistics, time
    from stance_nb.helpindex import HELP_INDEX, source_fingerprint
    assert json.loads(HELP_INDEX.read_text(encoding='utf-8'))['fingerprint'] == source_fingerprint(), 'stale: run `python tools/help_index.py`'
    code = ('import sys, contextlib, io\nfrom stance_nb.helpindex import console_main as main\nerr = io.StringIO()\n'
            'with contextlib.redirect_stderr(err): rc = main(sys.argv[1:])\n'
            'print(rc, sorted(m for m in ("torch", "transformers", "sklearn", "pandas") if m in sys.modules))\nprint(err.getvalue(), end="")')
    times = []
    for _ in range(3):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, '-c', code, *BAD_LINES[0]], capture_output=True, text=True, timeout=60)
        times.append(time.perf_counter() - t)
    first, _, text = p.stdout.partition('\n')
    assert first == '2 []' and text.startswith("stance_nb leaderboard: error: invalid parameters: parameter datasets: unknown ['pstance_trmp']"), p
    assert statistics.median(times) < 2, times   # 0.85 s at load 11 on 2 cores; it took 21.5 s when torch loaded first


def test_every_help_under_a_second():
    """`stance_nb [COMMAND] --help`, as the console script runs it: under 1 s for every command (median of three), the text the
    parser builds, and no torch, transformers, scikit-learn or pandas imported (building the options takes seconds)."""
    import statistics, time
    from stance_nb.helpindex import HELP_INDEX, source_fingerprint
    idx = json.loads(HELP_INDEX.read_text(encoding='utf-8'))
    assert idx['fingerprint'] == source_fingerprint(), 'stale: run `python tools/help_index.py`; a stale index sends --help to the full parser'
    texts = idx['commands']
    code = ('import sys, contextlib, io\nfrom stance_nb.helpindex import console_main as main\nout = io.StringIO()\n'
            'with contextlib.redirect_stdout(out): rc = main(sys.argv[1:])\n'
            'print(rc, sorted(m for m in ("torch", "transformers", "sklearn", "pandas") if m in sys.modules))\nprint(out.getvalue(), end="")')
    slow = {}
    for command in texts:
        argv = [command, '--help'] if command else ['--help']
        times = []
        for _ in range(3):
            t = time.perf_counter()
            p = subprocess.run([sys.executable, '-c', code, *argv], capture_output=True, text=True, timeout=60)
            times.append(time.perf_counter() - t)
        first, _, text = p.stdout.partition('\n')
        assert p.returncode == 0 and first == '0 []' and text == texts[command], (command, first, p.stderr[-1000:])
        if statistics.median(times) >= 1: slow[command] = round(statistics.median(times), 2)
    assert not slow, f'--help took 1 s or more: {slow}'


def test_epoch_line_and_quiet_loading(tmp_path, recwarn):
    "One line per epoch (loss, dev scores, throughput); loading a model says only what matters: encoder weights it lacks."
    import warnings
    from transformers import AutoModel, AutoModelForSequenceClassification
    from safetensors.torch import load_file, save_file
    from stance_nb.train import epoch_line, from_pretrained_quietly
    line = epoch_line('mine/small', 3, dict(epoch=1, step=10, train_loss=0.9, dev_f1_macro=0.61), 160, 4.0, 5.2)
    assert line == 'mine/small epoch 1/3: train loss 0.9000 | dev_f1_macro 0.6100 | 40.0 training examples/s | 5 s'
    tiny_bert(tmp_path/'tiny')
    with warnings.catch_warnings():
        warnings.simplefilter('error')   # a new head is expected: no warning
        from_pretrained_quietly(AutoModelForSequenceClassification, str(tmp_path/'tiny'), num_labels=3, ignore_mismatched_sizes=True)
    w = load_file(tmp_path/'tiny'/'model.safetensors')
    save_file({k: v for k, v in w.items() if 'pooler' not in k}, tmp_path/'tiny'/'model.safetensors', metadata={'format': 'pt'})
    with pytest.warns(UserWarning, match=r"2 pooler weight\(s\) not in the checkpoint start from random values: .*pooler\.dense"):
        from_pretrained_quietly(AutoModel, str(tmp_path/'tiny'))   # sentence-embedding and NLI checkpoints have no pooler
    save_file({k: v for k, v in w.items() if 'layer.0.output.dense' not in k}, tmp_path/'tiny'/'model.safetensors', metadata={'format': 'pt'})
    with pytest.raises(ValueError, match=r"2 of the encoder's weights are not in the checkpoint .*layer\.0\.output\.dense.* config\.json"):
        from_pretrained_quietly(AutoModel, str(tmp_path/'tiny'))
    save_file(w, tmp_path/'tiny'/'model.safetensors', metadata={'format': 'pt'})
    conf = json.loads((tmp_path/'tiny'/'config.json').read_text())
    (tmp_path/'tiny'/'config.json').write_text(json.dumps(dict(conf, max_position_embeddings=conf['max_position_embeddings']//2)))
    with pytest.raises(ValueError, match=r"1 of the encoder's weights .*position_embeddings"):   # another shape: would be resized at random
        from_pretrained_quietly(AutoModelForSequenceClassification, str(tmp_path/'tiny'), num_labels=3, ignore_mismatched_sizes=True)


def test_keep_records_then_from(own, tmp_path, capfd):
    "`reproduce --keep-records DIR` keeps the run's job records and predictions; another machine's run `--from DIR` takes every job in."
    d, _ = own
    data = json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')}, 'label_map': LABELS,
                                'columns': {'text': 'Sentence', 'target': 'Topic', 'label': 'Stance'}, 'dev_fraction': 0.2}})
    argv = ['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=Majority baseline,Random baseline', '-p', 'seeds=1', '-p', f'data={data}']
    first = _run(argv + ['--output-dir', str(tmp_path/'a'), '--keep-records', str(tmp_path/'kept')], capfd)
    assert len(first['kept']) == len(first['records']) == 2
    for f in first['kept']:
        names = sorted(p.name for p in Path(f).iterdir())
        assert names == ['predictions.jsonl.gz', 'record.json.gz'], names   # the record gzip'd; what the system reported is in it
    second = _run(argv + ['--output-dir', str(tmp_path/'b'), '--from', str(tmp_path/'kept')], capfd)
    assert second['conditions']['reused'] == second['conditions']['jobs'] == 2 and second['kept'] == []
    assert second['tables']['4'] == first['tables']['4']

def test_leaderboard_prints_its_table_without_json(tmp_path, capsys, umask_022):
    """Without --json the leaderboard prints what a person reads: its Markdown table and the files it wrote, not the JSON result. Its
    page, tables, figures, conditions and job records follow the umask (0o644 under 022)."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    root = write_benchmark_fixtures(tmp_path/'data', ['ibmcs'])
    code = main(['leaderboard', '--models', 'majority,random', '--datasets', 'ibmcs', '--data-dir', str(root), '--output-dir', str(tmp_path/'out')])
    out = capsys.readouterr().out
    assert code == 0 and '| system | ibmcs |' in out and '|---|' in out and 'files written:' in out, out[-2000:]
    assert not out.lstrip().startswith('{') and '"command"' not in out
    assert list((tmp_path/'out').rglob('*.html')) and list((tmp_path/'out').rglob('record.json')) and modes(tmp_path/'out') == {}


def _repeating(d:Path) -> list:
    "A train file that holds each of its 40 rows twice (the second time with a doubled space and a trailing line break), a test file."
    rows = [dict(Topic='t', Sentence=f'row {i} of {LABELS[str(i % 3)].lower()}', Stance=str(i % 3)) for i in range(40)]
    twice = rows + [dict(r, Sentence=r['Sentence'].replace(' ', '  ', 1) + '\n') for r in rows]
    pd.DataFrame(twice).to_csv(d/'train.csv', index=False)
    pd.DataFrame([dict(Topic='t', Sentence=f'new {i}', Stance=str(i % 3)) for i in range(30)]).to_csv(d/'test.csv', index=False)
    return ['--dataset', 'csv', '--path', f"train={d/'train.csv'},test={d/'test.csv'}", '--columns', 'text=Sentence,target=Topic,label=Stance',
            '--label-map', ','.join(f'{k}={v}' for k, v in LABELS.items())]


def test_dev_fraction_keeps_repeated_rows_on_one_side(tmp_path, capfd):
    """`--dev-fraction` on a train file that repeats its rows: no dev row is a train row (up to whitespace), as between given files
    (most dev rows were train rows before); the fraction counts distinct pairs: 3 of each label's 13 or 14, both copies of each."""
    from stance_nb.experiment import prepare_data
    opts = _repeating(tmp_path)
    df = prepare_data(load('csv', path={'train': tmp_path/'train.csv', 'test': tmp_path/'test.csv'},
                           columns=dict(text='Sentence', target='Topic', label='Stance')), dev_fraction=0.2)
    dev, train = df[df.split == 'dev'], df[df.split == 'train']
    texts = lambda part: {' '.join(t.split()) for t in part.text}
    assert texts(dev).isdisjoint(texts(train)) and len(dev) == 18 and len(train) == 62
    res = _run(['baselines', *opts, '--dev-fraction', '0.2', '--systems', 'majority', '--output-dir', str(tmp_path/'out')], capfd)
    assert res['data']['n'] == {'train': 62, 'dev': 18, 'test': 30}


def test_a_test_row_seen_in_train_up_to_whitespace_is_refused(tmp_path, capfd):
    "A test text that differs from a train text only by a doubled space, a trailing space or another line break is a train row."
    opts = _repeating(tmp_path)
    pd.concat([pd.read_csv(tmp_path/'test.csv'), pd.DataFrame([dict(Topic='t ', Sentence='row  5 of\tnone \r\n', Stance='2')])]
              ).to_csv(tmp_path/'test.csv', index=False)
    assert main(['baselines', *opts, '--systems', 'majority', '--output-dir', str(tmp_path/'out')]) == 1
    err = capfd.readouterr().err
    assert "row 31, field 'Sentence': the same target and text (up to whitespace) as train row 6" in err and 'a test row seen in train' in err


def test_every_command_says_when_a_score_rests_on_few_test_rows(own, tmp_path, capfd):
    """A one-row test set: baselines, train, mdl and evaluate score it (0 or 1) and each says once, on stderr and in its result, that
    the score rests on fewer than 30 test rows (the leaderboard's minimum); none refuses it."""
    d, opts = own
    pd.read_csv(d/'test.csv').head(1).to_csv(tmp_path/'one.csv', index=False)
    one = ['--dataset', 'csv', '--path', f"train={d/'train.csv'},test={tmp_path/'one.csv'}", *opts[4:]]
    tiny_bert(tmp_path/'tiny', num_labels=3)
    write_predictions(tmp_path/'one.jsonl', ['FAVOR'])
    train = ['--dev-fraction', '0.2', '--preset', 'smoke', '--model', str(tmp_path/'tiny'), '--epochs', '1', '--seeds', '1']
    for argv in (['baselines', *one, '--systems', 'majority,random'], ['train', *one, *train], ['mdl', *one, *train],
                 ['evaluate', *one, '--predictions', str(tmp_path/'one.jsonl')]):
        assert main(argv + (['--output-dir', str(tmp_path/argv[0])] if argv[0] != 'evaluate' else []) + ['--json']) == 0
        out, err = capfd.readouterr()
        [(key, says)] = json.loads(out)['few_test_rows'].items()
        assert says == f'{key}: the test score rests on 1 test row, fewer than 30: each row moves it by a large step (one row scores 0 or 1)'
        assert err.count(f'warning: {key}: the test score rests on 1 test row') == 1, (argv[0], err[-2000:])


def test_own_files_in_another_encoding(own, tmp_path, capfd):
    """Your files in latin-1 (texts with é, ü, ß): without `--encoding` the command stops naming the file, the byte and the option (never
    the registered datasets' data folder); with `--encoding latin-1` they score as their UTF-8 copies do; a JSONL test file with a
    byte-order mark reads as UTF-8; an unknown encoding, or one given for a registered dataset, is refused by the parser."""
    d, opts = own
    for s in ('train', 'test'):
        t = pd.read_csv(d/f'{s}.csv', dtype=str)
        t = t.assign(Sentence=t.Sentence + ' – Müller sagt: schön, groß')
        t.to_csv(tmp_path/f'{s}-utf8.csv', index=False); t.to_csv(tmp_path/f'{s}-latin1.csv', index=False, encoding='cp1252')
        t.rename(columns=dict(Sentence='text', Topic='target', Stance='label')).to_json(tmp_path/f'{s}.jsonl', orient='records', lines=True,
                                                                                     force_ascii=False)
    (tmp_path/'test-bom.jsonl').write_text((tmp_path/'test.jsonl').read_text(encoding='utf-8'), encoding='utf-8-sig')
    files = lambda kind: ['--path', f"train={tmp_path/f'train-{kind}.csv'},test={tmp_path/f'test-{kind}.csv'}"]
    base = ['baselines', '--dataset', 'csv', *opts[4:], '--systems', 'majority,random', '--seeds', '1']
    assert main(base + files('latin1') + ['--output-dir', str(tmp_path/'o1')]) == 1
    err = capfd.readouterr().err
    assert f"{tmp_path/'train-latin1.csv'}: cannot decode as utf-8" in err, err[-1500:]
    assert 'or its encoding named: encoding=... in `load`, --encoding on the command line' in err, err[-1500:]
    assert 'Point data_dir' not in err
    utf8 = _run(base + files('utf8') + ['--output-dir', str(tmp_path/'o2')], capfd)
    latin = _run(base + files('latin1') + ['--encoding', 'cp1252', '--output-dir', str(tmp_path/'o3')], capfd)
    fps = lambda r: [d['fingerprints'] for d in r['conditions']['data'].values()]   # the same texts, decoded: the same data fingerprints
    assert latin['test'] == utf8['test'] and latin['data']['n'] == utf8['data']['n'] and fps(latin) == fps(utf8)
    bom = _run(['baselines', '--dataset', 'jsonl', '--path', f"train={tmp_path/'train.jsonl'},test={tmp_path/'test-bom.jsonl'}",
                '--label-map', opts[-1], '--systems', 'majority,random', '--seeds', '1', '--output-dir', str(tmp_path/'o4')], capfd)
    assert bom['test'] == utf8['test'] and [f[k] for f in fps(bom) for k in f if k.endswith(':test')] == \
        [f[k] for f in fps(utf8) for k in f if k.endswith(':test')]
    for argv, says in ((base + files('utf8') + ['--encoding', 'utf-99'], "argument --encoding: unknown text encoding 'utf-99'"),
                       (['baselines', '--dataset', 'ibmcs', '--encoding', 'latin-1'], '--path/--columns/--encoding/--sep are for your own files')):
        with pytest.raises(SystemExit) as e: main(argv)
        assert e.value.code == 2 and says in capfd.readouterr().err


def test_evaluate_reads_what_it_is_told_and_scores_like_sklearn(tmp_path, capfd):
    """`evaluate` scores the JSONL field `--label-column` names (it scored the gold `label` field before: 1.0); integer labels in the
    predictions are the strings the data's are; with a test file only, a predicted label the gold rows lack is a wrong answer, said on
    stderr (it was refused as unknown); data without test rows is refused up front. Every score equals scikit-learn's."""
    from sklearn.metrics import accuracy_score, f1_score
    pd.DataFrame(dict(id=[1, 2, 3, 4, 5, 6], text=[f'train text {i}' for i in range(6)], label=['FAVOR', 'AGAINST', 'NONE'] * 2)).to_csv(tmp_path/'train.csv', index=False)
    gold = ['FAVOR', 'AGAINST', 'NONE', 'AGAINST']
    pd.DataFrame(dict(id=[11, 12, 13, 14], text=['so good', 'so bad', 'a chair', 'very bad'], label=gold)).to_csv(tmp_path/'test.csv', index=False)
    pred = ['AGAINST', 'AGAINST', 'FAVOR', 'NONE']
    (tmp_path/'pred.jsonl').write_text(''.join(json.dumps(dict(id=str(i), label=g, pred=p)) + '\n' for i, g, p in zip([11, 12, 13, 14], gold, pred)))
    data = ['--dataset', 'csv', '--path', f"train={tmp_path/'train.csv'},test={tmp_path/'test.csv'}"]
    res = _run(['evaluate', *data, '--predictions', str(tmp_path/'pred.jsonl'), '--label-column', 'pred'], capfd)
    macro = lambda g, p: f1_score(g, p, average='macro', labels=sorted(set(g) | set(p)), zero_division=0)
    assert res['scores'] == {'f1_macro': pytest.approx(macro(gold, pred)), 'accuracy': pytest.approx(accuracy_score(gold, pred))}
    assert res['scores']['f1_macro'] < 0.2   # the gold field scored 1.0
    # integer labels: 1 in the predictions is '1' of the data
    pd.DataFrame(dict(id=[1, 2, 3, 4], text=[f't{i}' for i in range(4)], label=[0, 1, 0, 1])).to_json(tmp_path/'tr.jsonl', orient='records', lines=True)
    pd.DataFrame(dict(id=[11, 12], text=['u1', 'u2'], label=[1, 0])).to_json(tmp_path/'te.jsonl', orient='records', lines=True)
    (tmp_path/'p.jsonl').write_text('{"id": 11, "label": 1}\n{"id": 12, "label": 1}\n')
    res = _run(['evaluate', '--dataset', 'jsonl', '--path', f"train={tmp_path/'tr.jsonl'},test={tmp_path/'te.jsonl'}", '--predictions', str(tmp_path/'p.jsonl')], capfd)
    assert res['scores']['accuracy'] == 0.5 and res['scores']['f1_macro'] == pytest.approx(macro(['1', '0'], ['1', '1']))
    # a test file alone: a prediction of a label its rows lack scores as a wrong answer, and is said
    (tmp_path/'pn.jsonl').write_text(''.join(json.dumps(dict(id=str(i), label=p)) + '\n' for i, p in zip([11, 12, 13, 14], ['FAVOR', 'AGAINST', 'NONE', 'FAVOR'])))
    g3 = ['FAVOR', 'AGAINST', 'AGAINST']
    pd.DataFrame(dict(id=[11, 12, 13], text=['a', 'b', 'c'], label=g3)).to_csv(tmp_path/'only.csv', index=False)
    (tmp_path/'p3.jsonl').write_text('{"id": "11", "label": "FAVOR"}\n{"id": "12", "label": "NONE"}\n{"id": "13", "label": "AGAINST"}\n')
    assert main(['evaluate', '--dataset', 'csv', '--path', f"test={tmp_path/'only.csv'}", '--predictions', str(tmp_path/'p3.jsonl'), '--json']) == 0
    out, err = capfd.readouterr()
    assert json.loads(out)['scores']['f1_macro'] == pytest.approx(macro(g3, ['FAVOR', 'NONE', 'AGAINST']))
    assert "predicted label(s) ['NONE'] are in no test row" in err
    # no test rows: one error first, not an id mismatch or a raw scikit-learn error
    assert main(['evaluate', '--dataset', 'csv', '--path', str(tmp_path/'only.csv'), '--predictions', str(tmp_path/'p3.jsonl')]) == 1
    assert "no test rows to score" in capfd.readouterr().err


def test_rows_in_none_of_the_tables_are_named(capfd, tmp_path):
    "`reproduce` with rows that fill none of the chosen tables: exit 2 naming each table's rows, before any data is read (it said no data could be read)."
    with pytest.raises(SystemExit) as e:
        main(['reproduce', 'benchmark', '-p', 'tables=7', '-p', 'rows=Majority baseline,fastText', '--output-dir', str(tmp_path/'o'), '--plan'])
    assert e.value.code == 2
    assert "rows ['Majority baseline', 'fastText'] are in none of the tables ['7']; table 7: ['BERT_SDL', 'BERT_MDL', 'MT-DNN_MDL']" in capfd.readouterr().err
