"""Inputs a new user's files bring: labels with invisible characters or full-width letters (they made a class of their own
and scored silently wrong), and local model folders without their tokenizer files (transformers builds a tokenizer of five
special tokens from such a folder and a model trains on unknown tokens to a number with no warning)."""
import json, shutil, warnings
from pathlib import Path
import pandas as pd
import pytest

from conftest import write_splits, train_config, run_cli

LABELS = ['AGAINST', 'FAVOR', 'NONE']

def _cli(argv) -> tuple[int, str, str]:
    "Exit status, stdout and stderr of `stance_nb argv` run in this process; warnings are printed to stderr, as Python does."
    return run_cli(argv, show_warnings=True)

def _error(err:str) -> str:
    "The one error line of stderr (no traceback)."
    assert 'Traceback' not in err, err[-3000:]
    lines = [l for l in err.splitlines() if 'error:' in l]
    assert len(lines) == 1 and lines[0].startswith('stance_nb'), err[-3000:]
    return lines[0]

# ================================================================ labels: one form for every loader and prediction reader

COLS = ('id', 'split', 'target', 'text', 'label')

def _rows(label_of_row:dict) -> list:
    "Eight rows (six train, two test) of two labels; `label_of_row` changes the label of rows (1-based)."
    rows = [dict(id=f'r{i}', split='train' if i <= 6 else 'test', target='wind', text=f'text number {i}',
                 label='FAVOR' if i % 2 else 'AGAINST') for i in range(1, 9)]
    for r, lab in label_of_row.items(): rows[r-1]['label'] = lab
    return rows

def _write(path:Path, rows:list) -> Path:
    if path.suffix == '.csv': pd.DataFrame(rows, columns=COLS).to_csv(path, index=False)
    else: path.write_text(''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in rows), encoding='utf-8')
    return path

INVISIBLE = {'zwsp': '\u200b', 'zwnj': '\u200c', 'zwj': '\u200d', 'word_joiner': '\u2060', 'bom': '\ufeff'}
SPELLINGS = {**{k: f'FAVOR{c}' for k, c in INVISIBLE.items()}, 'fullwidth': 'ＦＡＶＯＲ', 'inner_soft_hyphen': 'FA\u00adVOR'}
NORMALISED = [('csv', k) for k in SPELLINGS] + [('jsonl', 'zwsp'), ('jsonl', 'fullwidth')]

@pytest.mark.parametrize('fmt,spelling', NORMALISED, ids=[f'{f}-{k}' for f, k in NORMALISED])
def test_label_normalised_with_a_warning(fmt, spelling, tmp_path):
    """`FAVOR` written with an invisible character (each zero-width one, a byte-order mark, a soft hyphen) or in full-width
    letters is `FAVOR`, and one warning names the file, how many values changed and an example (it was a class of its own)."""
    from stance_nb.data import load
    odd = SPELLINGS[spelling]
    path = _write(tmp_path/f'data.{fmt}', _rows({1: odd, 3: odd, 7: odd}))
    with pytest.warns(UserWarning) as w: df = load(fmt, path=path)
    assert df.attrs['labels'] == ['AGAINST', 'FAVOR'] and df.label.tolist() == ['FAVOR', 'AGAINST'] * 4
    msg = [str(x.message) for x in w if 'Unicode normalisation' in str(x.message)]
    assert len(msg) == 1 and f"{path}: 3 label value(s) changed" in msg[0] and f"{odd!r} -> 'FAVOR'" in msg[0], msg

CASE_MIXES = {   # name -> (format, label of data row 3, load options, what the error says)
    'csv-lower_zwsp': ('csv', 'favor\u200b', {}, "labels that differ only in case: [['FAVOR', 'favor']] ('FAVOR' in 3 row(s), 'favor' in 1 row(s))"),
    'jsonl-title_zwj': ('jsonl', 'Fa\u200dvor', {}, "labels that differ only in case: [['FAVOR', 'Favor']] ('FAVOR' in 3 row(s), 'Favor' in 1 row(s))"),
    'csv-declared_lower': ('csv', 'favor', dict(labels=['AGAINST', 'FAVOR']), "'FAVOR' in 3 row(s) (declared), 'favor' in 1 row(s)"),
}

@pytest.mark.parametrize('case', list(CASE_MIXES))
def test_label_case_variant_refused(case, tmp_path):
    """A rare label equal to a frequent or declared one up to case and invisible characters: one `StanceDataError` naming file, row
    and field, both spellings and their counts (with an invisible character it loaded as a class; declared, it was 'unknown')."""
    from stance_nb.core import StanceDataError
    from stance_nb.data import load
    fmt, odd, options, want = CASE_MIXES[case]
    path = _write(tmp_path/f'data.{fmt}', _rows({3: odd}))
    with pytest.raises(StanceDataError) as ei, warnings.catch_warnings():
        warnings.simplefilter('ignore'); load(fmt, path=path, **options)
    assert f"{path}, row 3, field 'label': " in str(ei.value) and want in str(ei.value), str(ei.value)
    assert '(expected one spelling per label' in str(ei.value)

def _own(tmp_path, train:dict, test:dict) -> list:
    "A train.csv and a test.csv with the given label changes; the CLI options that read them."
    _write(tmp_path/'train.csv', _rows(train)[:6]); _write(tmp_path/'test.csv', _rows(test)[6:])
    return ['--dataset', 'csv', '--path', f"train={tmp_path/'train.csv'},test={tmp_path/'test.csv'}"]

@pytest.mark.parametrize('fmt', ['jsonl', 'csv'])
def test_evaluate_reads_predictions_normalised(fmt, tmp_path):
    "`stance_nb evaluate` reads `FAVOR\\u200b` and `ＡＧＡＩＮＳＴ` in a predictions file as FAVOR and AGAINST: right predictions score 1.0."
    opts = _own(tmp_path, {}, {})
    pred = _write(tmp_path/f'pred.{fmt}', [dict(id='r7', label='FAVOR\u200b'), dict(id='r8', label='ＡＧＡＩＮＳＴ')])
    code, out, err = _cli(['evaluate', *opts, '--predictions', str(pred), '--json'])
    assert code == 0, err[-3000:]
    assert json.loads(out)['scores'] == {'f1_macro': 1.0, 'accuracy': 1.0}
    assert f"{pred}: 2 label value(s) changed by Unicode normalisation" in err, err[-3000:]

def test_evaluate_gold_with_invisible_characters(tmp_path):
    """Two training labels and a test label written `FAVOR\\u200b`: evaluate scores right predictions 1.0 over two classes
    (a third class made them score 0.33 with exit 0)."""
    opts = _own(tmp_path, {1: 'FAVOR\u200b', 3: 'FAVOR\u200b'}, {7: 'FAVOR\u200b'})
    pred = _write(tmp_path/'pred.jsonl', [dict(label='FAVOR'), dict(label='AGAINST')])
    code, out, err = _cli(['evaluate', *opts, '--predictions', str(pred), '--json'])
    assert code == 0 and json.loads(out)['scores'] == {'f1_macro': 1.0, 'accuracy': 1.0}, (out, err[-3000:])
    assert 'train.csv: 2 label value(s) changed' in err and 'test.csv: 1 label value(s) changed' in err, err[-3000:]

def test_baselines_on_labels_with_invisible_characters(tmp_path, monkeypatch):
    """The majority baseline over a training file with `FAVOR\\u200b` labels: FAVOR is one class, the test score is the true one
    (0.33 with a class of its own) and the warning reaches the user through the experiment layer, which silences other loader warnings."""
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs'))
    opts = _own(tmp_path, {2: 'FAVOR\u200b', 4: 'FAVOR\u200b'}, {7: 'FAVOR\u200b', 8: 'FAVOR'})
    code, out, err = _cli(['baselines', *opts, '--systems', 'majority', '--seeds', '1', '--output-dir', str(tmp_path/'out'), '--json'])
    assert code == 0, err[-3000:]
    res = json.loads(out)
    assert res['data']['labels'] == ['AGAINST', 'FAVOR'] and res['test']['majority']['f1_macro']['mean'] == 1.0, res['test']
    assert 'train.csv: 2 label value(s) changed by Unicode normalisation' in err, err[-3000:]

# ================================================================ model folders: the tokenizer files and the vocabulary

TOKENIZER_FILES = ('tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt')

@pytest.fixture(scope='module')
def folders(tmp_path_factory):
    """A tiny BERT (3 labels) saved whole, and broken copies: without tokenizer files; with a tokenizer larger than its embeddings;
    with a five-token vocab.txt; and one with vocab.txt only (no tokenizer.json or tokenizer_config.json), which is whole."""
    from transformers import BertForSequenceClassification
    from stance_nb.test_utils import tiny_bert, tiny_bert_config
    d = tmp_path_factory.mktemp('models')
    _, tok = tiny_bert(d/'tiny', num_labels=3, seed=0)
    def copy(name, drop=TOKENIZER_FILES):
        shutil.copytree(d/'tiny', d/name)
        for f in drop: (d/name/f).unlink(missing_ok=True)
        return d/name
    copy('no_tokenizer')
    five = copy('five_tokens'); (five/'vocab.txt').write_text('[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n')
    only = copy('vocab_txt_only'); (only/'vocab.txt').write_text(''.join(w + '\n' for w, _ in sorted(tok.get_vocab().items(), key=lambda o: o[1])))
    BertForSequenceClassification(tiny_bert_config(len(tok) - 10, 3)).save_pretrained(d/'small_embeddings')
    tok.save_pretrained(d/'small_embeddings')
    write_splits(d, 12, LABELS)
    return d, len(tok)

def _data_opts(d:Path) -> list: return ['--dataset', 'csv', '--path', f"train={d/'train.csv'},test={d/'test.csv'}"]

def _data_param(d:Path) -> str: return json.dumps({'mine': {'dataset': 'csv', 'path': {'train': str(d/'train.csv'), 'test': str(d/'test.csv')},
                                                            'dev_fraction': 0.25}})

NO_TOKENIZER = {   # command -> (argv from (models folder, model folder, tmp_path), exit status); predict reads <run>/model
    'train': (lambda d, m, t: ['train', *_data_opts(d), '--dev-fraction', '0.25', '--preset', 'smoke', '--model', str(m), '--epochs', '1',
                               '--seeds', '1', '--output-dir', str(t/'out')], 2),
    'mdl': (lambda d, m, t: ['mdl', *_data_opts(d), '--dev-fraction', '0.25', '--preset', 'smoke', '--model', str(m), '--epochs', '1',
                             '--seeds', '1', '--output-dir', str(t/'out')], 2),
    'leaderboard_plan': (lambda d, m, t: ['leaderboard', '--models', 'majority,sdl', '--data', _data_param(d), '--data-dir', str(t/'none'),
                                          '--model', str(m), '--plan', '--output-dir', str(t/'out')], 2),
    'reproduce_plan': (lambda d, m, t: ['reproduce', 'benchmark', '-p', 'rows=BERT_SDL', '-p', f'model={m}', '-p', f'data={_data_param(d)}',
                                        '--plan', '--output-dir', str(t/'out')], 2),
    'predict': (lambda d, m, t: ['predict', '--run', str(_run_folder(m, t)), '--input', str(d/'test.csv'), '--format', 'jsonl',
                                 '--output', str(t/'p')], 1),
}

def _run_folder(model:Path, tmp:Path) -> Path:
    "A `train` run folder whose saved model lacks what `model` lacks."
    shutil.copytree(model, tmp/'run'/'model')
    return tmp/'run'

@pytest.mark.parametrize('command', list(NO_TOKENIZER))
def test_model_folder_without_tokenizer_stops_first(command, folders, tmp_path, monkeypatch):
    """A local model folder with config.json and weights but no tokenizer files: each command stops before any job or
    prediction with one line naming the folder and the missing files (train, mdl, leaderboard, reproduce and predict ran on
    a five-token tokenizer, every word unknown, and exited 0)."""
    d, _ = folders
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs'))
    make, status = NO_TOKENIZER[command]
    code, out, err = _cli(make(d, d/'no_tokenizer', tmp_path))
    line = _error(err)
    folder = tmp_path/'run'/'model' if command == 'predict' else d/'no_tokenizer'
    assert code == status and f"{str(folder)!r}: " in line and 'no tokenizer files; missing tokenizer.json or vocab.txt' in line, (code, err[-3000:])
    assert not (tmp_path/'out').exists() and not list(tmp_path.glob('p.*'))

def test_train_classifier_refuses_a_folder_without_tokenizer(folders, tmp_path):
    "The library's `train_classifier` stops before its run folder exists (it trained to test F1 0.33 with no warning)."
    from stance_nb.test_utils import synthetic_stance
    from stance_nb.train import train_classifier
    d, _ = folders
    with pytest.raises(ValueError, match=r"TrainConfig\.model '.*no_tokenizer': no tokenizer files"):
        train_classifier(synthetic_stance(12, seed=0, labels=tuple(LABELS)), train_config(d/'no_tokenizer', epochs=1), name='x', out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []

VOCAB = {   # folder -> what the error says (format with n = the tiny tokenizer's size)
    'small_embeddings': 'the tokenizer has {n} tokens and the model {m} embedding rows (config vocab_size)',
    'five_tokens': 'the tokenizer has only 5 tokens for {n} embedding rows',
}

@pytest.mark.parametrize('folder', list(VOCAB))
def test_tokenizer_that_does_not_fit_the_model(folder, folders, tmp_path, monkeypatch):
    """A tokenizer with more tokens than the model's embedding rows (it failed mid-training with a raw IndexError) or with five
    tokens (it trained on unknown tokens): `train` stops with exit 2 before reading data, naming the folder and both sizes."""
    d, n = folders
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs'))
    code, out, err = _cli(NO_TOKENIZER['train'][0](d, d/folder, tmp_path))
    line = _error(err)
    assert code == 2 and folder in line and VOCAB[folder].format(n=n, m=n - 10) in line, (code, err[-3000:])
    assert not (tmp_path/'out').exists()

def test_vocab_txt_without_tokenizer_config_is_whole(folders):
    "A WordPiece vocab.txt beside config.json, without tokenizer.json or tokenizer_config.json, is a usable tokenizer: accepted."
    from transformers import AutoTokenizer
    from stance_nb.train import check_encoder
    from stance_nb.hub import check_model_folder
    d, n = folders
    check_model_folder(d/'vocab_txt_only', '--model'); check_encoder(str(d/'vocab_txt_only'))
    tok = AutoTokenizer.from_pretrained(str(d/'vocab_txt_only'))
    assert len(tok) == n and '[UNK]' not in tok.tokenize('school uniforms')

# ================================================================ delimiters, encodings and rows a loader drops or repeats

SEPARATED = {   # file name, its text, --sep as typed (None: not given) -> exit status and what stderr says (None: exit 0)
    'tab_as_typed': ('te.txt', 'text\tlabel\nwe want it\tFAVOR\nno way\tAGAINST\n', '\\t', None),   # a shell passes the two characters \t
    'tab_by_name': ('te.txt', 'text\tlabel\nwe want it\tFAVOR\nno way\tAGAINST\n', 'tab', None),
    'comma_tsv': ('te.tsv', 'text,label\nwe want it,FAVOR\nno way,AGAINST\n', None,
                  "te.tsv: one column 'text,label': the file looks separated by ',', not '\\t' (a .tsv file is read tab-separated)"),
    'long_sep': ('te.txt', 'text::label\nwe want it::FAVOR\n', '::', "sep='::': expected one character"),
}

@pytest.mark.parametrize('case', list(SEPARATED))
def test_separator_as_typed_and_named(case, tmp_path, monkeypatch):
    """`--sep '\\t'` as a shell passes it (a backslash and a t) or `--sep tab` reads a tab-separated file (it raised a raw `TypeError`);
    a comma-separated file named `.tsv` is named as such, as `;` and `|` were; a separator of several characters is refused by name."""
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path/'cache'))
    name, text, sep, said = SEPARATED[case]
    (tmp_path/name).write_text(text, encoding='utf-8')
    code, out, err = _cli(['attack', '--dataset', 'csv', '--path', f'test={tmp_path/name}', *(['--sep', sep] if sep else []),
                           '--attack', 'spelling', '--output', str(tmp_path/'att.csv'), '--json'])
    if said is None:
        assert code == 0, err[-2000:]
        assert pd.read_csv(tmp_path/'att.csv').label.tolist() == ['FAVOR', 'AGAINST']
    else: assert code == 1 and said in _error(err) and not (tmp_path/'att.csv').exists(), err[-2000:]

def test_pstance_saved_as_utf8_warns(tmp_path):
    """A P-Stance file saved again as UTF-8 is read as the release's ISO-8859-1 (which decodes any byte) with a warning that names the
    file, an example of the mojibake and `encoding='utf-8'` (it loaded `CafÃ©` without a word); read as UTF-8 it is right."""
    from stance_nb.data import load
    from stance_nb.fixtures.field import write_pstance, PSTANCE_TWEETS
    write_pstance(tmp_path/'pstance')
    f = tmp_path/'pstance'/'raw_test_trump.csv'
    f.write_bytes(f.read_bytes().decode('latin-1').encode('utf-8'))
    with pytest.warns(UserWarning, match=r"raw_test_trump.csv: read as latin-1, but it decodes as UTF-8 .*'é', which latin-1 reads as 'Ã©'.*"
                                         r"encoding='utf-8'"):
        df = load('pstance_trump', tmp_path, splits=['test'])
    assert df.text.iloc[0].startswith('CafÃ©')   # what the warning is about
    assert load('pstance_trump', tmp_path, splits=['test'], encoding='utf-8').text.iloc[0] == PSTANCE_TWEETS['trump'][0] + ' test0'

def test_pstance_test_rows_all_none_name_drop_none(tmp_path):
    "A P-Stance test file whose rows are all NONE: the error names `drop_none` and how many rows it dropped (it said only \"no ['test'] rows\")."
    from stance_nb.fixtures.field import write_pstance
    write_pstance(tmp_path/'pstance')
    f = tmp_path/'pstance'/'raw_test_trump.csv'
    f.write_bytes(f.read_bytes().replace(b',FAVOR\n', b',NONE\n').replace(b',AGAINST\n', b',NONE\n'))
    code, out, err = _cli(['baselines', '--dataset', 'pstance_trump', '--data-dir', str(tmp_path), '--json'])
    assert code == 1 and "has no ['test'] rows (test: 2 NONE row(s) dropped (drop_none=True" in _error(err), err[-2000:]

def _covid_twice(r):
    f = r/'covid19'/'fauci_test.csv'; f.write_text(f.read_text() + f.read_text().splitlines()[1] + '\n')
def _wtwt_twice(r):
    f = r/'wtwt'/'wtwt_ids.json'; recs = json.loads(f.read_text()); f.write_text(json.dumps(recs + [dict(recs[0], stance='refute')]))
def _emergent_twice(r):
    from stance_nb.data.field import EMERGENT_FILES
    f = r/'emergent'/EMERGENT_FILES['test']; f.write_text(f.read_text() + f.read_text().splitlines()[1] + '\n')
def _mtsd_twice(r):
    from stance_nb.data.field import MTSD_FILE
    f = r/'mtsd'/MTSD_FILE; f.write_text(f.read_text() + f.read_text().splitlines()[1].replace('night 0', 'night zero') + '\n')

REPEATED = {   # dataset -> (writer, the repeat, the error: the file, the row, the field and both rows)
    'covid19': ('write_covid19', _covid_twice, "fauci_test.csv, row 4, field 'Tweet Id': duplicate tweet id", '(rows 1 and 4)'),
    'wtwt': ('write_wtwt', _wtwt_twice, "wtwt_ids.json, row 21, field 'tweet_id': duplicate merger and tweet id 'CVS_AET:", '(rows 1 and 21)'),
    'emergent': ('write_emergent', _emergent_twice, "clean-test.csv, row 5, field 'articleId': duplicate claimId_articleId id", '(rows 1 and 5)'),
    'mtsd': ('write_mtsd', _mtsd_twice, "all_data_tweet_text.csv, row 31, field 'ID': duplicate id '1'", '(rows 1 and 31)'),
}

@pytest.mark.parametrize('name', list(REPEATED))
def test_field_loader_refuses_a_repeated_id(name, tmp_path):
    """A row repeated within a split of COVID-19-Stance, WT-WT, Emergent or MTSD: one `StanceDataError` naming the file, the row, the field
    and both rows, as the paper loaders do (they loaded silently and `evaluate` then blamed the predictions file)."""
    from stance_nb.core import StanceDataError
    from stance_nb.data import load
    import stance_nb.fixtures.field as fx
    writer, repeat, where, rows = REPEATED[name]
    getattr(fx, writer)(tmp_path/name); repeat(tmp_path)
    with pytest.raises(StanceDataError) as e: load(name, tmp_path)
    assert where in str(e.value) and rows in str(e.value), str(e.value)

def test_a_tweet_labelled_for_two_targets_is_two_rows(tmp_path):
    """COVID-19-Stance's ids are tweet ids, and one tweet may be labelled for two targets (WT-WT: two mergers): two rows with two ids,
    `<target>:<tweet id>`, unique in the split; `evaluate` matches predictions to them by id."""
    from stance_nb.data import load
    from stance_nb.fixtures.field import write_covid19
    write_covid19(tmp_path/'covid19')
    f, g = tmp_path/'covid19'/'fauci_test.csv', tmp_path/'covid19'/'face_masks_test.csv'
    row = f.read_text().splitlines()[1]; tid = row.split(',')[0]
    g.write_text(g.read_text() + row.replace(',fauci,', ',face_masks,') + '\n')
    df = load('covid19', tmp_path)
    test = df[df.split == 'test']
    assert test.id.is_unique and sorted(test.id[test.tweet_id == tid]) == [f'face_masks:{tid}', f'fauci:{tid}']
