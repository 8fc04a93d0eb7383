"""Bad input: every registered loader × every kind of damaged input gives one clear `StanceDataError` naming
the file, the row or field and what was expected; no loader drops or reorders rows silently."""
import csv, io, json, shutil, zipfile
from pathlib import Path
import pytest
from stance_nb.core import StanceDataError
from stance_nb.data import load, DATASETS
from stance_nb.fixtures.papers import write_xstance, write_cheese, write_ezstance, write_vast, MALFORMED_ROW
from stance_nb.fixtures.field import write_pstance, write_covid19, write_wtwt, write_emergent, write_mtsd, write_rumoureval2017, rumour_id
from stance_nb.fixtures.poldeb_rumor import write_poldeb, write_rumor, POLDEB_POSTS
from stance_nb.data.field import HYDRATED, EMERGENT_FILES, MTSD_FILE, RUMOUREVAL2017_KEYS
from stance_nb.fixtures.benchmark import (BENCHMARK_WRITERS, BENCHMARK_BREAKS, BENCHMARK_FIXTURE_SIZES, break_fixture,
                                          _zip_edit, _truncate)

FAULTS = ('missing_file', 'missing_column', 'unknown_label', 'empty_text', 'null_text', 'broken_json', 'wrong_encoding',
          'truncated_archive')
OPTIONS = {'cheese': dict(fold_order='file')}   # the official fold order needs more pairs than the fixture has
_BREAKS = {(d, k): want for d, k, _, want in BENCHMARK_BREAKS}

# ---------------------------------------------------------------- small byte-level editors

def _sub(path:Path, old:str, new:str, encoding='utf-8', count=1, out_encoding=None):
    "Replace `old` by `new` in a text file (must occur), writing it back in `out_encoding` (default: `encoding`)."
    t = path.read_text(encoding=encoding)
    assert old in t, f'{old!r} not in {path}'
    path.write_bytes(t.replace(old, new, count).encode(out_encoding or encoding))

def _latin1(path:Path, old:str, new:str):
    "Put a Latin-1 encoded non-ASCII character into a UTF-8 file: the wrong-encoding fault."
    _sub(path, old, new, out_encoding='latin-1')

def _zip_member(zpath:Path, member:str, fn):
    with zipfile.ZipFile(zpath) as z: data = z.read(member)
    _zip_edit(zpath, member, fn(data))

# ---------------------------------------------------------------- writers of intact fixtures

def _write_custom(root:Path, name:str):
    rows = [dict(id=f'r{i}', split=['train', 'dev', 'test'][i % 3], target=f'target {i % 2}', text=f'text number {i}',
                 label=['con', 'pro'][i % 2]) for i in range(9)]
    root.mkdir(parents=True, exist_ok=True)
    if name == 'csv':
        buf = io.StringIO(); w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator='\n'); w.writeheader(); w.writerows(rows)
        (root/'data.csv').write_text(buf.getvalue(), encoding='utf-8')
    else: (root/'data.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows), encoding='utf-8')

def write_fixture(root:Path, name:str, malformed=None) -> Path:
    "Write the intact (or, for the papers' writers, the `malformed`) fixture of dataset `name` under `root`."
    if name == 'xstance': write_xstance(root/'xstance', malformed=malformed)
    elif name == 'cheese': write_cheese(root/'cheese', malformed=malformed)
    elif name == 'ezstance': write_ezstance(root/'ezstance', domains=('CE',), malformed=malformed)
    elif name == 'vast': write_vast(root/'vast', malformed=malformed)
    elif name in BENCHMARK_WRITERS: BENCHMARK_WRITERS[name](root)
    elif name in FIELD_WRITERS: FIELD_WRITERS[name](root)
    else: _write_custom(root, name)
    return root

def load_fixture(root:Path, name:str):
    if name == 'csv': return load('csv', path=root/'data.csv', labels=['con', 'pro'])
    if name == 'jsonl': return load('jsonl', path=root/'data.jsonl', labels=['con', 'pro'])
    return load(name, root, **OPTIONS.get(name, {}))

# ---------------------------------------------------------------- the faults, per dataset
# Each entry: (damage(root), file name the error must name) or a string: why the fault does not apply.

def _papers(kind, file):
    def damage(root, name): write_fixture(root, name, malformed=kind)
    return damage, file

def _null_text_jsonl(path, field):
    lines = path.read_text(encoding='utf-8').splitlines()
    r = json.loads(lines[MALFORMED_ROW-1]); r[field] = None; lines[MALFORMED_ROW-1] = json.dumps(r)
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')

def _edit_jsonl_row(path, fn, row=MALFORMED_ROW):
    lines = path.read_text(encoding='utf-8').splitlines()
    r = json.loads(lines[row-1]); fn(r); lines[row-1] = json.dumps(r, ensure_ascii=False)
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')

def _drop_last_column(path):
    path.write_text(''.join(l.rsplit(',', 1)[0] + '\n' for l in path.read_text(encoding='utf-8').splitlines()), encoding='utf-8')

def _break(kind):
    return lambda root, name: (write_fixture(root, name), break_fixture(root, name, kind))

def _then(fn):
    return lambda root, name: (write_fixture(root, name), fn(root))

NOT_JSON = 'a delimited-text format: no JSON to break'
NO_ARCHIVE = 'read from unpacked files: no archive (archive extraction is tested in test_reliability_runs.py)'
CSV_NULL = 'a delimited-text format: a null text is an empty field, the empty_text case'
LATIN1 = 'the official files are Latin-1, which decodes every byte sequence: no wrong encoding is detectable'
POSTS_NULL = CSV_NULL.replace('a delimited-text format', 'plain-text posts')
POSTS_JSON = 'plain-text posts: no JSON to break'
SE19 = 'semeval2019t7/rumoureval-2019-training-data.zip'
SE19_TR = 'rumoureval-2019-training-data/'

CASES = {
    'xstance': dict(
        missing_file=(_then(lambda r: (r/'xstance/valid.jsonl').unlink()), 'valid.jsonl'),
        missing_column=_papers('missing_field', 'valid.jsonl'), unknown_label=_papers('unknown_label', 'valid.jsonl'),
        empty_text=_papers('empty_text', 'valid.jsonl'), broken_json=_papers('broken_json', 'valid.jsonl'),
        null_text=(_then(lambda r: _null_text_jsonl(r/'xstance/valid.jsonl', 'comment')), 'valid.jsonl'),
        wrong_encoding=_papers('wrong_encoding', 'valid.jsonl'), truncated_archive=NO_ARCHIVE),
    'cheese': dict(
        missing_file=(_then(lambda r: (r/'cheese/cheese.json').unlink()), 'cheese.json'),
        missing_column=_papers('missing_field', 'cheese.json'), unknown_label=_papers('unknown_label', 'cheese.json'),
        empty_text=_papers('empty_text', 'cheese.json'), broken_json=_papers('broken_json', 'cheese.json'),
        null_text=(_then(lambda r: _edit_jsonl_row(r/'cheese/cheese.json', lambda a: a.update(title=None, snippet=None, paragraphs=[]))), 'cheese.json'),
        wrong_encoding=_papers('wrong_encoding', 'cheese.json'), truncated_archive=NO_ARCHIVE),
    'ezstance': dict(
        missing_file=(_then(lambda r: (r/'ezstance/subtaskA/mixed/raw_test_all_onecol.csv').unlink()), 'raw_test_all_onecol.csv'),
        missing_column=_papers('missing_field', 'raw_train_all_onecol.csv'), unknown_label=_papers('unknown_label', 'raw_train_all_onecol.csv'),
        empty_text=_papers('empty_text', 'raw_train_all_onecol.csv'), wrong_encoding=_papers('wrong_encoding', 'raw_train_all_onecol.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'vast': dict(
        missing_file=(_then(lambda r: (r/'vast/vast_dev.csv').unlink()), 'vast_dev.csv'),
        missing_column=_papers('missing_field', 'vast_train.csv'), unknown_label=_papers('unknown_label', 'vast_train.csv'),
        empty_text=_papers('empty_text', 'vast_train.csv'), wrong_encoding=_papers('wrong_encoding', 'vast_train.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'fnc1': dict(
        missing_file=(_then(lambda r: (r/'fnc1/train_bodies.csv').unlink()), 'train_bodies.csv'),
        missing_column=(_break('missing_column'), 'train_stances.csv'), unknown_label=(_break('unknown_label'), 'train_stances.csv'),
        empty_text=(_then(lambda r: _sub(r/'fnc1/train_stances.csv', 'headline 1,0,agree', ',0,agree')), 'train_stances.csv'),
        wrong_encoding=(_then(lambda r: _latin1(r/'fnc1/train_bodies.csv', 'body zero', 'body z\xe9ro')), 'train_bodies.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'arc': dict(
        missing_file=(_then(lambda r: (r/'arc/arc_bodies.csv').unlink()), 'arc_bodies.csv'),
        missing_column=(_then(lambda r: _sub(r/'arc/arc_stances_train.csv', 'Headline,Body ID,Stance', 'Headline,Body ID,Label')), 'arc_stances_train.csv'),
        unknown_label=(_then(lambda r: _sub(r/'arc/arc_stances_train.csv', 'headline 1,0,agree', 'headline 1,0,agreed')), 'arc_stances_train.csv'),
        empty_text=(_then(lambda r: _sub(r/'arc/arc_stances_train.csv', 'headline 1,0,agree', ',0,agree')), 'arc_stances_train.csv'),
        wrong_encoding=(_then(lambda r: _latin1(r/'arc/arc_bodies.csv', 'body zero', 'body z\xe9ro')), 'arc_bodies.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'ibmcs': dict(
        missing_file=(_then(lambda r: (r/'ibmcs/claim_stance_dataset_v1.csv').unlink()), 'claim_stance_dataset_v1.csv'),
        missing_column=(_then(lambda r: _sub(r/'ibmcs/claim_stance_dataset_v1.csv', '"claims.stance"', '"claims.stanze"')), 'claim_stance_dataset_v1.csv'),
        unknown_label=(_break('unknown_label'), 'claim_stance_dataset_v1.csv'),
        empty_text=(_then(lambda r: _sub(r/'ibmcs/claim_stance_dataset_v1.csv', '"claim 5","claim 5"', '"",""')), 'claim_stance_dataset_v1.csv'),
        wrong_encoding=(_break('wrong_encoding'), 'claim_stance_dataset_v1.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'semeval2016t6': dict(
        missing_file=(_then(lambda r: (r/'semeval2016t6/trialdata-all-annotations.txt').unlink()), 'trialdata-all-annotations.txt'),
        missing_column=(_break('missing_column'), 'trialdata-all-annotations.txt'),
        unknown_label=(_break('unknown_label'), 'testdata-taskA-all-annotations.txt'),
        empty_text=(_then(lambda r: _sub(r/'semeval2016t6/testdata-taskA-all-annotations.txt', 'pray #SemST', '', encoding='latin-1')), 'testdata-taskA-all-annotations.txt'),
        wrong_encoding=LATIN1, null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'semeval2019t7': dict(
        missing_file=(_then(lambda r: (r/'semeval2019t7/final-eval-key.json').unlink()), 'final-eval-key.json'),
        missing_column=(_then(lambda r: _sub(r/'semeval2019t7/final-eval-key.json', '"subtaskaenglish"', '"subtaskXenglish"')), 'final-eval-key.json'),
        unknown_label=(_break('unknown_label'), 'final-eval-key.json'),
        empty_text='empty texts are data here: RumourEval keeps deleted Reddit replies as empty texts (keep_stubs, see NOTES.md)',
        null_text=(_then(lambda r: _zip_member(r/SE19, SE19_TR + 'twitter-english/charliehebdo/100/replies/101.json',
                                               lambda b: b.replace(b'"text": "caf', b'"text": null, "x": "caf'))), 'rumoureval-2019-training-data.zip'),
        broken_json=(_break('broken_json'), 'rumoureval-2019-training-data.zip'),
        wrong_encoding=(_then(lambda r: _zip_member(r/SE19, SE19_TR + 'reddit-training-data/abc/replies/r1.json',
                                                    lambda b: b.replace(b'debunked', 'd\xe9bunked'.encode('latin-1')))), 'rumoureval-2019-training-data.zip'),
        truncated_archive=(_break('truncated_zip'), 'rumoureval-2019-training-data.zip')),
    'snopes': dict(
        missing_file=(_then(lambda r: (r/'snopes/snopes_corpus_2.csv').unlink()), 'snopes_corpus_2.csv'),
        missing_column=(_break('missing_column'), 'snopes_corpus_2.csv'), unknown_label=(_break('unknown_label'), 'snopes_corpus_2.csv'),
        empty_text=(_then(lambda r: _sub(r/'snopes/snopes_corpus_2.csv', '0_{First evidence}', '0_{}')), 'snopes_corpus_2.csv'),
        wrong_encoding=(_then(lambda r: _latin1(r/'snopes/snopes_corpus_2.csv', 'Claim Five', 'Claim F\xefve')), 'snopes_corpus_2.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'perspectrum': dict(
        missing_file=(_then(lambda r: (r/'perspectrum/perspective_pool_v1.0.json').unlink()), 'perspective_pool_v1.0.json'),
        missing_column=(_break('missing_field'), 'perspectrum_with_answers_v1.0.json'),
        unknown_label=(_then(lambda r: _sub(r/'perspectrum/perspectrum_with_answers_v1.0.json', '"stance_label_3": "UNDERMINE"', '"stance_label_3": "NEUTRAL"')), 'perspectrum_with_answers_v1.0.json'),
        empty_text=(_then(lambda r: _sub(r/'perspectrum/perspective_pool_v1.0.json', '"perspective 10"', '""')), 'perspective_pool_v1.0.json'),
        null_text=(_then(lambda r: _sub(r/'perspectrum/perspective_pool_v1.0.json', '"perspective 10"', 'null')), 'perspective_pool_v1.0.json'),
        broken_json=(_break('broken_json'), 'perspectrum_with_answers_v1.0.json'),
        wrong_encoding=(_then(lambda r: _latin1(r/'perspectrum/perspective_pool_v1.0.json', 'perspective 11', 'perspective \xe911')), 'perspective_pool_v1.0.json'),
        truncated_archive=NO_ARCHIVE),
    'iac1': dict(
        missing_file=(_then(lambda r: (r/'iac1/author_stance.csv').unlink()), 'author_stance.csv'),
        missing_column=(_then(lambda r: _drop_last_column(r/'iac1/author_stance.csv')), 'author_stance.csv'),
        unknown_label=(_then(lambda r: _sub(r/'iac1/author_stance.csv', 'alice,3,1,0', 'alice,many,1,0')), 'author_stance.csv'),
        empty_text=(_then(lambda r: _sub(r/'iac1/discussions/2.json', '"warming is a hoax"', '""')), '2.json'),
        null_text=(_then(lambda r: _sub(r/'iac1/discussions/2.json', '"warming is a hoax"', 'null')), '2.json'),
        broken_json=(_break('broken_json'), '2.json'),
        wrong_encoding=(_then(lambda r: _latin1(r/'iac1/discussions/2.json', 'warming is a hoax', 'warming is a canard \xe9')), '2.json'),
        truncated_archive=NO_ARCHIVE),
    'scd': dict(
        missing_file=(_then(lambda r: (r/'scd/stance.zip').unlink()), 'stance.zip'),
        missing_column=(_then(lambda r: _zip_member(r/'scd/stance.zip', 'stance/obama/O1.meta', lambda b: b'ID=O1\nPID=-1\n')), 'stance.zip'),
        unknown_label=(_break('unknown_label'), 'stance.zip'),
        empty_text=(_then(lambda r: _zip_member(r/'scd/stance.zip', 'stance/obama/O2.data', lambda b: b'')), 'stance.zip'),
        wrong_encoding=LATIN1, null_text=POSTS_NULL, broken_json=POSTS_JSON, truncated_archive=(_break('truncated_zip'), 'stance.zip')),
    'argmin': dict(
        missing_file=(_break('missing_file'), 'cloning.tsv'), missing_column=(_break('missing_column'), 'abortion.tsv'),
        unknown_label=(_break('unknown_label'), 'cloning.tsv'),
        empty_text=(_then(lambda r: _sub(r/'argmin/data/complete/cloning.tsv', 'cloning is harmful .', '')), 'cloning.tsv'),
        wrong_encoding=(_then(lambda r: _latin1(r/'argmin/data/complete/cloning.tsv', 'cloning is harmful', 'cloning is h\xe4rmful')), 'cloning.tsv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'csv': dict(
        missing_file=(_then(lambda r: (r/'data.csv').unlink()), 'data.csv'),
        missing_column=(_then(lambda r: _sub(r/'data.csv', 'target,text,label', 'target,text,labl')), 'data.csv'),
        unknown_label=(_then(lambda r: _sub(r/'data.csv', ',con\n', ',neutral\n')), 'data.csv'),
        empty_text=(_then(lambda r: _sub(r/'data.csv', 'text number 3', '')), 'data.csv'),
        wrong_encoding=(_then(lambda r: _latin1(r/'data.csv', 'text number 3', 'text n\xfamero 3')), 'data.csv'),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive='the user gives an unpacked file'),
    'jsonl': dict(
        missing_file=(_then(lambda r: (r/'data.jsonl').unlink()), 'data.jsonl'),
        missing_column=(_then(lambda r: _sub(r/'data.jsonl', '"label": "pro"', '"labl": "pro"')), 'data.jsonl'),
        unknown_label=(_then(lambda r: _sub(r/'data.jsonl', '"label": "con"', '"label": "neutral"')), 'data.jsonl'),
        empty_text=(_then(lambda r: _sub(r/'data.jsonl', '"text number 3"', '""')), 'data.jsonl'),
        null_text=(_then(lambda r: _sub(r/'data.jsonl', '"text number 3"', 'null')), 'data.jsonl'),
        broken_json=(_then(lambda r: _sub(r/'data.jsonl', '"text number 3", ', '"text number 3" ')), 'data.jsonl'),
        wrong_encoding=(_then(lambda r: _latin1(r/'data.jsonl', 'text number 3', 'text n\xfamero 3')), 'data.jsonl'),
        truncated_archive='the user gives an unpacked file'),
}
# ---------------------------------------------------------------- the field's datasets (stance_nb.data.field)

FIELD_WRITERS = {**{f'pstance_{k}': (lambda r: write_pstance(r/'pstance')) for k in ('trump', 'biden', 'sanders')},
                 'covid19': lambda r: write_covid19(r/'covid19'), 'wtwt': lambda r: write_wtwt(r/'wtwt'),
                 'emergent': lambda r: write_emergent(r/'emergent'), 'mtsd': lambda r: write_mtsd(r/'mtsd'),
                 'rumoureval2017': lambda r: write_rumoureval2017(r/'rumoureval2017'),
                 'poldeb': lambda r: write_poldeb(r/'poldeb'), 'rumor': lambda r: write_rumor(r/'rumor')}
RE17_REPLY = f"semeval2017-task8-dataset/rumoureval-data/charliehebdo/{rumour_id('train', 1)}/replies/{rumour_id('train', 2)}.json"

def _json_edit(path, fn):
    d = json.loads(path.read_text(encoding='utf-8')); fn(d); path.write_text(json.dumps(d), encoding='utf-8')

def _cut_line(path, row=2):
    lines = path.read_text(encoding='utf-8').splitlines(); lines[row-1] = lines[row-1][:len(lines[row-1]) // 2]
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')

def _pstance_cases(key, stem):
    f = lambda s: f'raw_{s}_{stem}.csv'
    return dict(missing_file=(_then(lambda r: (r/'pstance'/f('val')).unlink()), f('val')),
                missing_column=(_then(lambda r: _sub(r/'pstance'/f('train'), 'Tweet,Target,Stance', 'Tweet,Target,Stanze', encoding='latin-1')), f('train')),
                unknown_label=(_then(lambda r: write_pstance(r/'pstance', damage=f('test'))), f('test')),
                empty_text=(_then(lambda r: write_pstance(r/'pstance', damage=f('val'), kind='empty_text')), f('val')),
                null_text=CSV_NULL, broken_json=NOT_JSON, wrong_encoding="read as ISO-8859-1, as the authors' code does: every byte decodes",
                truncated_archive=NO_ARCHIVE)

def _hydrated_cases(name):
    h = lambda r: r/name/HYDRATED
    return dict(null_text=(_then(lambda r: _edit_jsonl_row(h(r), lambda t: t.update(full_text=None))), HYDRATED),
                wrong_encoding=(_then(lambda r: _latin1(h(r), '"full_text": "', '"full_text": "\xe9')), HYDRATED),
                empty_text=(_then(lambda r: FIELD_DAMAGE[name](r, damage=HYDRATED, kind='empty_text')), HYDRATED))

FIELD_DAMAGE = {'covid19': lambda r, **kw: write_covid19(r/'covid19', **kw), 'wtwt': lambda r, **kw: write_wtwt(r/'wtwt', **kw)}
RE17 = lambda r: r/'rumoureval2017'

CASES.update({f'pstance_{k}': _pstance_cases(k, s) for k, s in (('trump', 'trump'), ('biden', 'biden'), ('sanders', 'bernie'))})
CASES.update({
    'covid19': dict(_hydrated_cases('covid19'),
        missing_file=(_then(lambda r: (r/'covid19/fauci_test.csv').unlink()), 'fauci_test.csv'),
        missing_column=(_then(lambda r: _sub(r/'covid19/face_masks_train.csv', 'Tweet Id,Target,Stance', 'Tweet Id,Target,Stanze')), 'face_masks_train.csv'),
        unknown_label=(_then(lambda r: write_covid19(r/'covid19', damage='fauci_val.csv')), 'fauci_val.csv'),
        broken_json=(_then(lambda r: _cut_line(r/'covid19'/HYDRATED)), HYDRATED), truncated_archive=NO_ARCHIVE),
    'wtwt': dict(_hydrated_cases('wtwt'),
        missing_file=(_then(lambda r: (r/'wtwt/wtwt_ids.json').unlink()), 'wtwt_ids.json'),
        missing_column=(_then(lambda r: _json_edit(r/'wtwt/wtwt_ids.json', lambda d: d[1].pop('stance'))), 'wtwt_ids.json'),
        unknown_label=(_then(lambda r: write_wtwt(r/'wtwt', damage='wtwt_ids.json')), 'wtwt_ids.json'),
        broken_json=(_then(lambda r: _truncate(r/'wtwt/wtwt_ids.json')), 'wtwt_ids.json'), truncated_archive=NO_ARCHIVE),
    'emergent': dict(
        missing_file=(_then(lambda r: (r/'emergent'/EMERGENT_FILES['test']).unlink()), EMERGENT_FILES['test']),
        missing_column=(_then(lambda r: _sub(r/'emergent'/EMERGENT_FILES['train'], 'articleHeadlineStance', 'articleStance')), EMERGENT_FILES['train']),
        unknown_label=(_then(lambda r: write_emergent(r/'emergent', damage=EMERGENT_FILES['train'])), EMERGENT_FILES['train']),
        empty_text=(_then(lambda r: write_emergent(r/'emergent', damage=EMERGENT_FILES['test'], kind='empty_text')), EMERGENT_FILES['test']),
        wrong_encoding=(_then(lambda r: _latin1(r/'emergent'/EMERGENT_FILES['train'], 'Report:', 'R\xe9port:')), EMERGENT_FILES['train']),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'mtsd': dict(
        missing_file=(_then(lambda r: (r/'mtsd'/MTSD_FILE).unlink()), MTSD_FILE),
        missing_column=(_then(lambda r: _sub(r/'mtsd'/MTSD_FILE, 'Stance 2', 'Stanse 2')), MTSD_FILE),
        unknown_label=(_then(lambda r: write_mtsd(r/'mtsd', damage=MTSD_FILE)), MTSD_FILE),
        empty_text=(_then(lambda r: write_mtsd(r/'mtsd', damage=MTSD_FILE, kind='empty_text')), MTSD_FILE),
        wrong_encoding=(_then(lambda r: _latin1(r/'mtsd'/MTSD_FILE, 'Debate night', 'D\xe9bate night')), MTSD_FILE),
        null_text=CSV_NULL, broken_json=NOT_JSON, truncated_archive=NO_ARCHIVE),
    'rumoureval2017': dict(
        missing_file=(_then(lambda r: (RE17(r)/'subtaska.json').unlink()), 'subtaska.json'),
        missing_column=(_then(lambda r: _json_edit(RE17(r)/RE17_REPLY, lambda t: t.pop('text'))), RE17_REPLY),
        unknown_label=(_then(lambda r: write_rumoureval2017(RE17(r), damage=RUMOUREVAL2017_KEYS['dev'])), 'rumoureval-subtaskA-dev.json'),
        empty_text=(_then(lambda r: write_rumoureval2017(RE17(r), damage='tweet', kind='empty_text')), RE17_REPLY),
        null_text=(_then(lambda r: _json_edit(RE17(r)/RE17_REPLY, lambda t: t.update(text=None))), RE17_REPLY),
        broken_json=(_then(lambda r: _truncate(RE17(r)/RE17_REPLY)), RE17_REPLY),
        wrong_encoding=(_then(lambda r: _latin1(RE17(r)/RE17_REPLY, 'Is it true', 'Is it tr\xfce')), RE17_REPLY),
        truncated_archive='read from the unpacked release folders: no archive'),
})
# ---------------------------------------------------------------- poldeb and rumor (stance_nb.data.poldeb_rumor)

POLDEB_POST = 'poldeb/guns/post2'                  # its text: POLDEB_POSTS['guns'][2] and a second line
RUMOR_LINE2 = 'RT @news: Sarah Palin getting divorced? Caf\xe9 talk 1 http://bit.ly/x1'   # palin.txt line 2, label 12
_rumor_sub = lambda r, old, new: _sub(r/'rumor/palin.txt', old, new, encoding='latin-1')

CASES.update({
    'poldeb': dict(
        missing_file=(_then(lambda r: shutil.rmtree(r/'poldeb/healthcare')), 'poldeb/healthcare'),
        missing_column=(_then(lambda r: write_poldeb(r/'poldeb', damage='guns/post2', kind='no_stance')), POLDEB_POST),
        unknown_label=(_then(lambda r: write_poldeb(r/'poldeb', damage='guns/post2', kind='unknown_label')), POLDEB_POST),
        empty_text=(_then(lambda r: _sub(r/POLDEB_POST, POLDEB_POSTS['guns'][2] + '\nSecond line of the post.', ' ')), POLDEB_POST),
        null_text=POSTS_NULL, broken_json=POSTS_JSON,
        wrong_encoding='read as UTF-8, else ISO-8859-1, which decodes every byte sequence: no wrong encoding is detectable',
        truncated_archive=NO_ARCHIVE),
    'rumor': dict(
        missing_file=(_then(lambda r: (r/'rumor/michelle.txt').unlink()), 'michelle.txt'),
        missing_column=(_then(lambda r: _rumor_sub(r, RUMOR_LINE2 + '\t12\n', RUMOR_LINE2 + '\n')), 'palin.txt'),
        unknown_label=(_then(lambda r: write_rumor(r/'rumor', damage='palin.txt', kind='unknown_label')), 'palin.txt'),
        empty_text=(_then(lambda r: _rumor_sub(r, '\t' + RUMOR_LINE2 + '\t', '\t \t')), 'palin.txt'),
        null_text=CSV_NULL, broken_json=NOT_JSON, wrong_encoding=LATIN1, truncated_archive=NO_ARCHIVE),
})

ROW_FAULTS = ('missing_column', 'unknown_label', 'empty_text', 'null_text', 'broken_json')  # these must point at a row or field

def test_every_loader_has_cases():
    "Every registered dataset is covered by the fault table, with every fault either built or skipped with a reason."
    assert set(CASES) == set(DATASETS), f'datasets without fault cases: {sorted(set(DATASETS) - set(CASES))}'
    for name, c in CASES.items(): assert set(c) == set(FAULTS), (name, sorted(set(FAULTS) - set(c)))

@pytest.mark.parametrize('name', sorted(DATASETS))
def test_fixture_loads_cleanly(name, tmp_path):
    "The intact fixture loads (so each fault below is what breaks it)."
    df = load_fixture(write_fixture(tmp_path, name), name)
    assert len(df) > 0 and df.text.notna().all()

@pytest.mark.parametrize('fault', FAULTS)
@pytest.mark.parametrize('name', sorted(DATASETS))
def test_bad_input(name, fault, tmp_path):
    case = CASES[name][fault]
    if isinstance(case, str): pytest.skip(case)
    damage, fname = case
    damage(tmp_path, name)
    with pytest.raises(StanceDataError) as ei: load_fixture(tmp_path, name)
    e, msg = ei.value, str(ei.value)
    assert fname in msg, f'{name}/{fault}: the error does not name {fname}: {msg}'
    assert e.expected and f'(expected {e.expected})' in msg, f'{name}/{fault}: the error does not say what was expected: {msg}'
    if fault in ROW_FAULTS:
        assert e.row is not None or e.field is not None, f'{name}/{fault}: the error names neither row nor field: {msg}'

@pytest.mark.parametrize('name,kind,options,want', BENCHMARK_BREAKS, ids=[f'{d}-{k}' for d, k, _, _ in BENCHMARK_BREAKS])
def test_benchmark_breaks(name, kind, options, want, tmp_path):
    "Every broken benchmark variant of the fixtures gives the documented message."
    write_fixture(tmp_path, name); break_fixture(tmp_path, name, kind)
    with pytest.raises(StanceDataError) as ei: load(name, tmp_path, **options)
    assert want in str(ei.value)
    assert ei.value.expected

# ---------------------------------------------------------------- no silent drops or reordering

def _jsonl(path): return [json.loads(l) for l in Path(path).read_text(encoding='utf-8').splitlines() if l.strip()]

def _csv(path, **kw): return list(csv.DictReader(io.StringIO(Path(path).read_text(encoding='utf-8')), **kw))

def test_rows_xstance(tmp_path):
    df = load_fixture(write_fixture(tmp_path, 'xstance'), 'xstance')
    for split, f in [('train', 'train'), ('dev', 'valid'), ('test', 'test')]:
        recs = _jsonl(tmp_path/'xstance'/f'{f}.jsonl')
        part = df[df.split == split]
        assert part.id.tolist() == [str(r['id']) for r in recs] and part.text.tolist() == [r['comment'] for r in recs]

def test_rows_cheese(tmp_path):
    df = load_fixture(write_fixture(tmp_path, 'cheese'), 'cheese')
    arts = _jsonl(tmp_path/'cheese'/'cheese.json')
    want = [f"{a['article_id']}_{s['question_id']}" for a in arts for s in a['article_stance'] if s['stance'] != 'Unklar']
    assert df.id.tolist() == want
    n_unclear = sum(s['stance'] == 'Unklar' for a in arts for s in a['article_stance'])
    assert n_unclear > 0 and len(load('cheese', tmp_path, fold_order='file', include_unclear=True)) == len(want) + n_unclear

def test_rows_ezstance(tmp_path):
    df = load_fixture(write_fixture(tmp_path, 'ezstance'), 'ezstance')
    for split, f in [('train', 'train'), ('dev', 'val'), ('test', 'test')]:
        rows = _csv(tmp_path/'ezstance'/'subtaskA'/'mixed'/f'raw_{f}_all_onecol.csv')
        part = df[df.split == split]
        assert list(zip(part.text, part.target, part.label)) == [(r['Text'], r['Target 1'], r['Stance 1']) for r in rows]

def test_rows_vast(tmp_path):
    df = load_fixture(write_fixture(tmp_path, 'vast'), 'vast')
    codes = {'0': 'AGAINST', '1': 'FAVOR', '2': 'NONE'}
    for split in ('train', 'dev', 'test'):
        rows = _csv(tmp_path/'vast'/f'vast_{split}.csv')
        part = df[df.split == split]
        assert list(zip(part.id, part.text, part.target, part.label)) == [(r['new_id'], r['post'], r['topic_str'], codes[r['label']]) for r in rows]

@pytest.mark.parametrize('name', sorted(BENCHMARK_WRITERS))
def test_rows_benchmark(name, tmp_path):
    "Split sizes equal what the fixture's split files list; ids are unique per split."
    df = load_fixture(write_fixture(tmp_path, name), name)
    assert tuple(int((df.split == s).sum()) for s in ('train', 'dev', 'test')) == BENCHMARK_FIXTURE_SIZES[name]
    assert not df.duplicated(['split', 'id']).any()

@pytest.mark.parametrize('name', ['fnc1', 'arc'])
def test_rows_benchmark_order(name, tmp_path):
    "Test rows come in the test file's order, and train rows in the order of the benchmark's index list."
    write_fixture(tmp_path, name)
    test_file = {'fnc1': 'competition_test_stances.csv', 'arc': 'arc_stances_test.csv'}[name]
    df = load_fixture(tmp_path, name)
    rows = _csv(tmp_path/name/test_file)
    assert df[df.split == 'test'].target.tolist() == [r['Headline'] for r in rows]
    train_rows = _csv(tmp_path/name/{'fnc1': 'train_stances.csv', 'arc': 'arc_stances_train.csv'}[name])
    idx = json.loads((tmp_path/'benchmark_splits'/f'{name}_train.csv').read_text())
    assert df[df.split == 'train'].target.tolist() == [train_rows[i]['Headline'] for i in idx]

@pytest.mark.parametrize('name', ['csv', 'jsonl'])
def test_rows_custom(name, tmp_path):
    df = load_fixture(write_fixture(tmp_path, name), name)
    assert df.id.tolist() == [f'r{i}' for i in range(9)]
